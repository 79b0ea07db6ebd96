/*
 * html.h - small helpers for writing a self-contained HTML page: text
 * escaping, and pictures embedded as base64 data: URIs so the page needs
 * no other file and no network.
 */
#ifndef LLMSIM_REPORT_HTML_H
#define LLMSIM_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>
#include "base/err.h"

/* Write s with &, <, >, " and ' escaped. */
void llmsim_html_text(FILE *f, const char *s);

/* printf, then escape the result (at most 4 KB). */
void llmsim_html_textf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Base64 (RFC 4648, with padding) of buf[0..len) to f. */
void llmsim_base64_write(FILE *f, const unsigned char *buf, size_t len);

/* Decode base64 text s[0..len) into out (at least len / 4 * 3 bytes);
 * returns the decoded length, or -1 on a malformed input. For the tests
 * and for anyone reading a report back. */
long llmsim_base64_decode(const char *s, size_t len, unsigned char *out);

/* Write <img src="data:image/png;base64,..." alt=... width=... height=...>
 * for the PNG file at path, after checking it is one. Returns 0 or the
 * png/io error. */
int llmsim_html_img_png(FILE *f, const char *path, const char *alt, struct llmsim_err *err);

#endif
