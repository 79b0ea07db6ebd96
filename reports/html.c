/* html.c - escaping and base64 picture embedding for the HTML report. */
#include "html.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "png.h"

void llmsim_html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

void llmsim_html_textf(FILE *f, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	llmsim_html_text(f, buf);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void llmsim_base64_write(FILE *f, const unsigned char *p, size_t len)
{
	size_t i = 0;
	for (; i + 3 <= len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
		fputc(b64[v >> 18], f);
		fputc(b64[v >> 12 & 63], f);
		fputc(b64[v >> 6 & 63], f);
		fputc(b64[v & 63], f);
	}
	if (len - i == 1) {
		unsigned v = (unsigned)p[i] << 16;
		fputc(b64[v >> 18], f);
		fputc(b64[v >> 12 & 63], f);
		fputs("==", f);
	} else if (len - i == 2) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
		fputc(b64[v >> 18], f);
		fputc(b64[v >> 12 & 63], f);
		fputc(b64[v >> 6 & 63], f);
		fputc('=', f);
	}
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

long llmsim_base64_decode(const char *s, size_t len, unsigned char *out)
{
	long n = 0;
	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		for (int j = 0; j < 4; j++) {
			if (s[i + j] == '=' && i + 4 == len && j >= 2) {
				v[j] = 0;
				pad++;
			} else if (pad || (v[j] = b64_val(s[i + j])) < 0) {
				return -1;
			}
		}
		unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
			     (unsigned)v[3];
		out[n++] = (unsigned char)(w >> 16);
		if (pad < 2)
			out[n++] = (unsigned char)(w >> 8);
		if (pad < 1)
			out[n++] = (unsigned char)w;
	}
	return n;
}

int llmsim_html_img_png(FILE *f, const char *path, const char *alt, struct llmsim_err *err)
{
	FILE *in = fopen(path, "rb");
	if (!in)
		return llmsim_err_set(err, LLMSIM_EIO, "cannot open '%s': %s", path, strerror(errno));
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = malloc(cap);
	while (buf) {
		len += fread(buf + len, 1, cap - len, in);
		if (len < cap)
			break;
		unsigned char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int rerr = ferror(in);
	fclose(in);
	if (!buf)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory reading '%s'", path);
	if (rerr) {
		free(buf);
		return llmsim_err_set(err, LLMSIM_EIO, "cannot read '%s'", path);
	}
	int w, h;
	int rc = llmsim_png_info_buf(buf, len, path, &w, &h, err);
	if (rc == 0) {
		/* Displayed at its natural size, but never wider than the page. */
		fputs("<img class=\"plot\" alt=\"", f);
		llmsim_html_text(f, alt);
		fprintf(f, "\" width=\"%d\" height=\"%d\" src=\"data:image/png;base64,", w, h);
		llmsim_base64_write(f, buf, len);
		fputs("\">", f);
	}
	free(buf);
	return rc;
}
