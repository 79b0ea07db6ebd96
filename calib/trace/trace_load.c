/*
 * trace_load.c - open a trace in whichever form it comes: the SQLite trace
 * tables, the text form, or the text form compressed with gzip (read
 * through zlib, base/gzfile.h, so that a committed calib/data/trace_*.txt.gz
 * reads like a database). A pipe is read once, as text.
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/gzfile.h"

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

/* The text form, plain or gzip, from path. */
static int load_stream(const char *path, int64_t run_id, struct llmsim_trace *t,
		       struct llmsim_err *err)
{
	/* a cut-off stream explains any parse error: its error wins */
	struct llmsim_err zerr = {0};
	FILE *in = llmsim_gz_open(path, NULL, &zerr);
	if (!in) {
		if (err)
			*err = zerr;
		return zerr.code;
	}
	int rc = load_text(in, path, run_id, t, err);
	if (llmsim_gz_close(in, path, &zerr)) {
		llmsim_trace_release(t);
		llmsim_trace_init(t);
		if (err)
			*err = zerr;
		rc = zerr.code;
	}
	return rc;
}

int llmsim_trace_load(const char *path, int64_t run_id, struct llmsim_trace *t,
		      struct llmsim_err *err)
{
	struct stat st;
	if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return load_stream(path, run_id, t, err); /* a pipe is read once: text */
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
	int gz = n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
	if (gz || (n >= 12 && !memcmp(head, "llmsim-trace", 12)) || (n >= 1 && head[0] == '#')) {
		fclose(f);
		return load_stream(path, run_id, t, err);
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
