/* lines.c - the bounded line reader of lines.h. */
#include "lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void llmsim_lines_init(struct llmsim_lines *r, FILE *f, const char *name, size_t max_line,
		       uint64_t max_bytes, const char *what)
{
	memset(r, 0, sizeof *r);
	r->f = f;
	r->name = name ? name : "input";
	r->what = what ? what : "this input";
	r->max_line = max_line;
	r->max_bytes = max_bytes;
}

void llmsim_lines_release(struct llmsim_lines *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
}

static int human(char *buf, size_t size, uint64_t n)
{
	if (n >= (1ull << 30) && n % (1ull << 30) == 0)
		return snprintf(buf, size, "%llu GiB", (unsigned long long)(n >> 30));
	if (n >= (1ull << 20) && n % (1ull << 20) == 0)
		return snprintf(buf, size, "%llu MiB", (unsigned long long)(n >> 20));
	return snprintf(buf, size, "%llu bytes", (unsigned long long)n);
}

int llmsim_lines_next(struct llmsim_lines *r, char **line, size_t *len, struct llmsim_err *err)
{
	size_t n = 0;
	int c = EOF, any = 0;
	char lim[32];
	flockfile(r->f);
	for (;;) {
		c = getc_unlocked(r->f);
		if (c == EOF)
			break;
		any = 1;
		if (++r->nbytes > r->max_bytes) {
			funlockfile(r->f);
			human(lim, sizeof lim, r->max_bytes);
			return llmsim_err_set(err, LLMSIM_EPARSE, "%s: larger than %s, the limit for %s",
					      r->name, lim, r->what);
		}
		if (c == '\n')
			break;
		if (n >= r->max_line) {
			funlockfile(r->f);
			human(lim, sizeof lim, r->max_line);
			return llmsim_err_setloc(err, LLMSIM_EPARSE, r->name, r->line + 1, 0,
						 "line longer than %s (not %s?)", lim, r->what);
		}
		if (n + 1 >= r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 256;
			if (cap > r->max_line + 1)
				cap = r->max_line + 1;
			char *b = realloc(r->buf, cap);
			if (!b) {
				funlockfile(r->f);
				return llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", r->name);
			}
			r->buf = b;
			r->cap = cap;
		}
		r->buf[n++] = (char)c;
	}
	int bad = c == EOF && ferror(r->f);
	int e = errno;
	funlockfile(r->f);
	if (bad)
		return llmsim_err_set(err, LLMSIM_EIO, "%s: read error: %s", r->name, strerror(e));
	if (!any)
		return 0;
	if (!r->buf) {
		r->buf = malloc(1);
		if (!r->buf)
			return llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", r->name);
		r->cap = 1;
	}
	while (n > 0 && (r->buf[n - 1] == '\r' || r->buf[n - 1] == '\n'))
		n--;
	r->buf[n] = 0;
	if (r->line >= LLMSIM_LINES_MAX_COUNT)
		return llmsim_err_set(err, LLMSIM_EPARSE, "%s: more than %d lines, the limit for %s",
				      r->name, LLMSIM_LINES_MAX_COUNT, r->what);
	r->line++;
	*line = r->buf;
	*len = n;
	return 1;
}
