/*
 * trace_load.c - open a trace in whichever form it comes: the SQLite trace
 * tables, the text form, or the text form compressed with gzip (so that a
 * committed calib/data/trace_*.txt.gz reads like a database).
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pick {
	int64_t want, seen;
	struct llmsim_trace *dst;
};

/* Keep run `want` (or the last one when want is 0). */
static int pick_run(struct llmsim_trace *t, void *ctx)
{
	struct pick *p = ctx;
	p->seen++;
	if (p->want && p->seen != p->want)
		return 0;
	llmsim_trace_release(p->dst);
	*p->dst = *t;              /* take ownership ... */
	p->dst->run.id = p->seen;
	llmsim_trace_init(t);      /* ... so the reader's release frees nothing */
	return 0;
}

static int load_text(FILE *f, const char *path, int64_t run_id, struct llmsim_trace *t,
		     struct llmsim_err *err)
{
	struct pick p = {run_id, 0, t};
	int rc = llmsim_trace_text_read(f, path, pick_run, &p, err);
	if (!rc && run_id > p.seen)
		rc = llmsim_err_set(err, LLMSIM_ENOENT, "%s: no trace run %lld (it holds %lld)",
				    path, (long long)run_id, (long long)p.seen);
	return rc;
}

static int quote(char *dst, size_t size, const char *s)
{
	size_t o = 0;
	if (o + 1 >= size)
		return -1;
	dst[o++] = '\'';
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t n = piece ? 4 : 1;
		if (o + n + 2 >= size)
			return -1;
		if (piece)
			memcpy(dst + o, piece, n);
		else
			dst[o] = *s;
		o += n;
	}
	dst[o++] = '\'';
	dst[o] = 0;
	return 0;
}

int llmsim_trace_load(const char *path, int64_t run_id, struct llmsim_trace *t,
		      struct llmsim_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return llmsim_err_set(err, errno == ENOENT ? LLMSIM_ENOENT : LLMSIM_EIO, "%s: %s",
				      path, strerror(errno));
	unsigned char head[16] = {0};
	size_t n = fread(head, 1, sizeof head, f);
	if (n >= 16 && !memcmp(head, "SQLite format 3", 16)) {
		fclose(f);
		return llmsim_trace_db_read(path, run_id, t, err);
	}
	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
		fclose(f);
		char q[4200], cmd[4300];
		if (quote(q, sizeof q, path))
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s: path too long", path);
		snprintf(cmd, sizeof cmd, "gzip -dc %s 2>/dev/null", q);
		FILE *p = popen(cmd, "r");
		if (!p)
			return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot run gzip", path);
		int rc = load_text(p, path, run_id, t, err);
		char sink[4096]; /* drain, so gzip's status speaks of the data alone */
		while (fread(sink, 1, sizeof sink, p) > 0)
			;
		int st = pclose(p);
		if (st != 0) { /* a cut-off stream explains any parse error */
			llmsim_trace_release(t);
			llmsim_trace_init(t);
			rc = llmsim_err_set(err, LLMSIM_EPARSE,
					    "%s: gzip data is corrupt or truncated", path);
		}
		return rc;
	}
	if ((n >= 12 && !memcmp(head, "llmsim-trace", 12)) || (n >= 1 && head[0] == '#')) {
		rewind(f);
		int rc = load_text(f, path, run_id, t, err);
		fclose(f);
		return rc;
	}
	fclose(f);
	if (n == 0)
		return llmsim_err_set(err, LLMSIM_EPARSE, "%s: empty file (not a trace)", path);
	if (n >= 6 && !memcmp(head, "SQLite", 6))
		return llmsim_err_set(err, LLMSIM_EDB, "%s: database is corrupt or truncated", path);
	return llmsim_err_set(err, LLMSIM_EPARSE,
			      "%s: not a trace (neither an SQLite file nor an llmsim text trace)",
			      path);
}
