/*
 * wrap.c - human output within the table width (wrap.h).
 */
#include "wrap.h"

#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"

struct wrap {
	FILE *real;
	char *line;
	size_t len, cap;
};

/* Display columns of the first n bytes of s (UTF-8 code points). */
static size_t cols(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xC0) != 0x80;
	return w;
}

/* Where a continuation starts: under the value of "label:  value" or of
 * "  key      value" (a run of two blanks within the first 40 columns),
 * else four columns in from the line's own indentation. */
static size_t hang(const char *s, size_t n)
{
	size_t lead = strspn(s, " ");
	for (size_t i = lead; i + 1 < n && i < 40; i++) {
		if (s[i] == ' ' && s[i + 1] == ' ') {
			size_t j = i;
			while (j < n && s[j] == ' ')
				j++;
			return j < 40 ? j : lead + 4;
		}
		if (s[i] == ':' && s[i + 1] == ' ' && i + 2 < 40 && !memchr(s + lead, ' ', i - lead))
			return i + 2 + (s[i + 2] == ' ');
	}
	return lead + 4;
}

static void emit(struct wrap *w, const char *s, size_t n)
{
	int width = llmsim_table_width();
	size_t ind = 0;
	for (int first = 1;; first = 0) {
		size_t room = (size_t)width - (first ? 0 : ind);
		if (!width || cols(s, n) <= room) {
			if (!first)
				fprintf(w->real, "%*s", (int)ind, "");
			fwrite(s, 1, n, w->real);
			fputc('\n', w->real);
			return;
		}
		/* the last blank that leaves the piece within room columns */
		size_t cut = 0, c = 0;
		for (size_t i = 0; i < n && c <= room; i++) {
			if (s[i] == ' ' && i > 0 && s[i - 1] != ' ' && (first ? i > strspn(s, " ") : 1))
				cut = i;
			c += ((unsigned char)s[i] & 0xC0) != 0x80;
		}
		if (first)
			ind = hang(s, n);
		if (!cut || (first && cut <= ind) || ind + 20 > (size_t)width) {
			/* no blank to break at: the line as it is */
			if (!first)
				fprintf(w->real, "%*s", (int)ind, "");
			fwrite(s, 1, n, w->real);
			fputc('\n', w->real);
			return;
		}
		if (!first)
			fprintf(w->real, "%*s", (int)ind, "");
		fwrite(s, 1, cut, w->real);
		fputc('\n', w->real);
		while (cut < n && s[cut] == ' ')
			cut++;
		s += cut;
		n -= cut;
	}
}

static ssize_t wrap_write(void *cookie, const char *buf, size_t size)
{
	struct wrap *w = cookie;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] == '\n') {
			emit(w, w->line ? w->line : "", w->len);
			w->len = 0;
			continue;
		}
		if (w->len + 1 >= w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 256;
			char *p = realloc(w->line, cap);
			if (!p)
				return -1;
			w->line = p;
			w->cap = cap;
		}
		w->line[w->len++] = buf[i];
	}
	return (ssize_t)size;
}

static int wrap_close(void *cookie)
{
	struct wrap *w = cookie;
	if (w->len) /* a last line without its newline stays without one */
		fwrite(w->line, 1, w->len, w->real);
	int rc = fflush(w->real);
	free(w->line);
	free(w);
	return rc;
}

FILE *cli_wrap_open(FILE *real)
{
	struct wrap *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->real = real;
	cookie_io_functions_t io = {.write = wrap_write, .close = wrap_close};
	FILE *f = fopencookie(w, "w", io);
	if (!f)
		free(w);
	return f;
}

int cli_wrap_wanted(int argc, char **argv)
{
	int out = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--emit") ||
		    !strncmp(argv[i], "--emit=", 7))
			return 0;
		out |= !strcmp(argv[i], "--out") || !strncmp(argv[i], "--out=", 6);
	}
	const char *c = argv[0], *v = argc > 1 ? argv[1] : "";
	if (!strcmp(c, "completion") || (!strcmp(c, "model") && !strcmp(v, "import")))
		return 0;
	if (!strcmp(c, "calib") && (!strcmp(v, "run") || (!strcmp(v, "export") && !out)))
		return 0;
	if (!strcmp(c, "trace") && (!strcmp(v, "capture") || (!strcmp(v, "export") && !out)))
		return 0;
	return 1;
}
