/*
 * trace_text.c - the compact text form of a trace (format in trace.h):
 * what the injection library writes when it has no SQLite, and what
 * `llmsim trace import` loads. Every run ends with an "end" line carrying
 * its record counts, so a file cut short is detected, not half-loaded.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/lines.h"

static void put_str(FILE *f, const char *s)
{
	fputc('\t', f);
	for (; s && *s; s++) {
		switch (*s) {
		case '\\': fputs("\\\\", f); break;
		case '\t': fputs("\\t", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		default: fputc(*s, f);
		}
	}
}

int llmsim_trace_text_write(FILE *f, const struct llmsim_trace *t, struct llmsim_err *err)
{
	const struct llmsim_trace_run *r = &t->run;
	fprintf(f, "llmsim-trace\t%d\nrun", LLMSIM_TRACE_SCHEMA_VERSION);
	put_str(f, r->started_at);
	put_str(f, r->host);
	put_str(f, r->command);
	put_str(f, r->device_name);
	fprintf(f, "\t%d\t%d\t%d\t%d\t%" PRId64, r->device_sms, r->device_count,
		r->cupti_version, r->nvtx, r->dropped_records);
	put_str(f, r->tool);
	fputc('\n', f);
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		fputs("kernel", f);
		put_str(f, k->name);
		fprintf(f, "\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%" PRIu64 "\t%" PRIu64
			   "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRId64 "\n",
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			k->cluster[0], k->cluster[1], k->cluster[2], k->regs_per_thread,
			k->static_smem_bytes, k->dynamic_smem_bytes, k->start_ns, k->end_ns,
			k->stream, k->device, k->correlation_id, k->range_id);
	}
	for (size_t i = 0; i < t->ncopies; i++) {
		const struct llmsim_trace_copy *m = &t->copies[i];
		fputs(m->kind == LLMSIM_TRACE_MEMSET ? "memset" : "memcpy", f);
		put_str(f, m->dir);
		fprintf(f, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu32
			   "\t%" PRIu32 "\t%" PRId64 "\n",
			m->bytes, m->start_ns, m->end_ns, m->stream, m->device, m->correlation_id,
			m->range_id);
	}
	for (size_t i = 0; i < t->nranges; i++) {
		const struct llmsim_trace_range *g = &t->ranges[i];
		fprintf(f, "range\t%" PRId64 "\t%" PRId64, g->id, g->parent_id);
		put_str(f, g->name);
		fprintf(f, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu32 "\t%d\n", g->start_ns, g->end_ns,
			g->thread, g->depth);
	}
	fprintf(f, "end\t%zu\t%zu\t%zu\n", t->nkernels, t->ncopies, t->nranges);
	if (fflush(f) || ferror(f))
		return llmsim_err_set(err, LLMSIM_EIO, "writing the trace: %s", strerror(errno));
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

#define MAX_FIELDS 24

/* Split line in place at tabs, unescaping each field. Returns the count. */
static int split(char *line, char **fields)
{
	int n = 0;
	char *p = line;
	for (;;) {
		if (n == MAX_FIELDS)
			return -1;
		fields[n++] = p;
		char *w = p;
		while (*p && *p != '\t') {
			if (*p == '\\' && p[1]) {
				p++;
				*w++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p;
				p++;
			} else {
				*w++ = *p++;
			}
		}
		int more = *p == '\t';
		*w = 0;
		if (!more)
			return n;
		p++;
	}
}

/* Parse an integer field within [lo, hi]; 0 or -1. */
static int num(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int unum(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (*s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

struct reader {
	const char *name;
	int line;
	struct llmsim_err *err;
};

static int bad(struct reader *rd, const char *what)
{
	return llmsim_err_setloc(rd->err, LLMSIM_EPARSE, rd->name, rd->line, 0, "%s", what);
}

#define INT_FIELD(i, dst, lo, hi)                                    \
	do {                                                         \
		long long v_;                                        \
		if (num(f[i], lo, hi, &v_))                          \
			return bad(rd, "bad number in field " #i);   \
		dst = v_;                                            \
	} while (0)
#define U64_FIELD(i, dst)                                            \
	do {                                                         \
		uint64_t v_;                                         \
		if (unum(f[i], &v_))                                 \
			return bad(rd, "bad number in field " #i);   \
		dst = v_;                                            \
	} while (0)

static int parse_run(struct reader *rd, char **f, int n, struct llmsim_trace_run *r)
{
	if (n != 11)
		return bad(rd, "run line needs 11 fields");
	snprintf(r->started_at, sizeof r->started_at, "%s", f[1]);
	snprintf(r->host, sizeof r->host, "%s", f[2]);
	snprintf(r->command, sizeof r->command, "%s", f[3]);
	snprintf(r->device_name, sizeof r->device_name, "%s", f[4]);
	INT_FIELD(5, r->device_sms, 0, 1 << 20);
	INT_FIELD(6, r->device_count, 0, 1 << 20);
	INT_FIELD(7, r->cupti_version, 0, INT32_MAX);
	INT_FIELD(8, r->nvtx, 0, 1);
	INT_FIELD(9, r->dropped_records, 0, INT64_MAX);
	snprintf(r->tool, sizeof r->tool, "%s", f[10]);
	const char *why = llmsim_trace_run_bad(r);
	return why ? bad(rd, why) : 0;
}

static int parse_kernel(struct reader *rd, char **f, int n, struct llmsim_trace_kernel *k)
{
	if (n != 20)
		return bad(rd, "kernel line needs 20 fields");
	k->name = f[1];
	for (int d = 0; d < 3; d++) {
		INT_FIELD(2 + d, k->grid[d], 0, INT32_MAX);
		INT_FIELD(5 + d, k->block[d], 0, INT32_MAX);
		INT_FIELD(8 + d, k->cluster[d], 0, INT32_MAX);
	}
	INT_FIELD(11, k->regs_per_thread, 0, 65536);
	INT_FIELD(12, k->static_smem_bytes, 0, INT32_MAX);
	INT_FIELD(13, k->dynamic_smem_bytes, 0, INT32_MAX);
	U64_FIELD(14, k->start_ns);
	U64_FIELD(15, k->end_ns);
	INT_FIELD(16, k->stream, 0, UINT32_MAX);
	INT_FIELD(17, k->device, 0, UINT32_MAX);
	INT_FIELD(18, k->correlation_id, 0, UINT32_MAX);
	INT_FIELD(19, k->range_id, 0, INT64_MAX);
	const char *why = llmsim_trace_kernel_bad(k);
	return why ? bad(rd, why) : 0;
}

static int parse_copy(struct reader *rd, char **f, int n, struct llmsim_trace_copy *m)
{
	if (n != 9)
		return bad(rd, "memcpy/memset line needs 9 fields");
	m->kind = !strcmp(f[0], "memset") ? LLMSIM_TRACE_MEMSET : LLMSIM_TRACE_MEMCPY;
	snprintf(m->dir, sizeof m->dir, "%s", f[1]);
	U64_FIELD(2, m->bytes);
	U64_FIELD(3, m->start_ns);
	U64_FIELD(4, m->end_ns);
	INT_FIELD(5, m->stream, 0, UINT32_MAX);
	INT_FIELD(6, m->device, 0, UINT32_MAX);
	INT_FIELD(7, m->correlation_id, 0, UINT32_MAX);
	INT_FIELD(8, m->range_id, 0, INT64_MAX);
	const char *why = llmsim_trace_copy_bad(m);
	return why ? bad(rd, why) : 0;
}

static int parse_range(struct reader *rd, char **f, int n, struct llmsim_trace_range *g)
{
	if (n != 8)
		return bad(rd, "range line needs 8 fields");
	INT_FIELD(1, g->id, 1, INT64_MAX);
	INT_FIELD(2, g->parent_id, 0, INT64_MAX);
	g->name = f[3];
	U64_FIELD(4, g->start_ns);
	U64_FIELD(5, g->end_ns);
	INT_FIELD(6, g->thread, 0, UINT32_MAX);
	INT_FIELD(7, g->depth, 0, 1 << 20);
	const char *why = llmsim_trace_range_bad(g);
	return why ? bad(rd, why) : 0;
}

static int parse_end(struct reader *rd, char **f, int n, const struct llmsim_trace *t)
{
	long long nk, nc, nr;
	if (n != 4 || num(f[1], 0, INT64_MAX, &nk) || num(f[2], 0, INT64_MAX, &nc) ||
	    num(f[3], 0, INT64_MAX, &nr))
		return bad(rd, "bad end line");
	if ((size_t)nk != t->nkernels || (size_t)nc != t->ncopies || (size_t)nr != t->nranges)
		return bad(rd, "record counts do not match the end line (truncated or edited?)");
	return 0;
}

int llmsim_trace_text_read(FILE *fp, const char *name,
			   int (*fn)(struct llmsim_trace *t, void *ctx), void *ctx,
			   struct llmsim_err *err)
{
	struct reader rd = {name, 0, err};
	struct llmsim_trace t;
	struct llmsim_lines lr;
	int in_run = 0, have_run_line = 0, runs = 0, rc = 0;
	char *line;
	size_t len;
	llmsim_trace_init(&t);
	llmsim_lines_init(&lr, fp, name, LLMSIM_MAX_LINE, LLMSIM_MAX_TRACE_TEXT_BYTES,
			  "a text trace");
	while ((rc = llmsim_lines_next(&lr, &line, &len, err)) > 0) {
		rc = 0;
		rd.line = lr.line;
		if (!len || line[0] == '#')
			continue;
		if (len != strlen(line)) {
			rc = bad(&rd, "NUL byte in line (not a text trace)");
			break;
		}
		if (t.nkernels + t.ncopies + t.nranges >= LLMSIM_MAX_TRACE_RECORDS) {
			rc = llmsim_err_setloc(err, LLMSIM_EINVAL, name, rd.line, 0,
					       "more than %d records in one run (the limit)",
					       LLMSIM_MAX_TRACE_RECORDS);
			break;
		}
		char *f[MAX_FIELDS];
		int n = split(line, f);
		if (n < 0) {
			rc = bad(&rd, "too many fields");
			break;
		}
		if (!strcmp(f[0], "llmsim-trace")) {
			long long v;
			if (in_run) {
				rc = bad(&rd, "new run before the previous one's end line (truncated?)");
				break;
			}
			if (n != 2 || num(f[1], 1, INT32_MAX, &v)) {
				rc = bad(&rd, "bad header line");
				break;
			}
			if (v > LLMSIM_TRACE_SCHEMA_VERSION) {
				rc = bad(&rd, "trace format version is newer than this llmsim");
				break;
			}
			in_run = 1;
			have_run_line = 0;
			continue;
		}
		if (!in_run) {
			rc = bad(&rd, runs ? "record after a run's end line"
					   : "not an llmsim text trace (no 'llmsim-trace' header)");
			break;
		}
		if (!strcmp(f[0], "run")) {
			rc = have_run_line ? bad(&rd, "second run line") : parse_run(&rd, f, n, &t.run);
			have_run_line = 1;
		} else if (!strcmp(f[0], "kernel")) {
			struct llmsim_trace_kernel k = {0};
			rc = parse_kernel(&rd, f, n, &k);
			if (!rc && llmsim_trace_add_kernel(&t, &k))
				rc = llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", name);
		} else if (!strcmp(f[0], "memcpy") || !strcmp(f[0], "memset")) {
			struct llmsim_trace_copy m = {0};
			rc = parse_copy(&rd, f, n, &m);
			if (!rc && llmsim_trace_add_copy(&t, &m))
				rc = llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", name);
		} else if (!strcmp(f[0], "range")) {
			struct llmsim_trace_range g = {0};
			rc = parse_range(&rd, f, n, &g);
			if (!rc && llmsim_trace_add_range(&t, &g))
				rc = llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", name);
		} else if (!strcmp(f[0], "end")) {
			rc = have_run_line ? parse_end(&rd, f, n, &t) : bad(&rd, "run without a run line");
			if (!rc) {
				llmsim_trace_sort(&t);
				t.run.id = runs + 1;
				rc = llmsim_trace_check(&t, name, err);
			}
			if (!rc) {
				rc = fn ? fn(&t, ctx) : 0;
				llmsim_trace_release(&t);
				llmsim_trace_init(&t);
				in_run = 0;
				runs++;
			}
		} else {
			rc = bad(&rd, "unknown record type");
		}
		if (rc)
			break;
	}
	if (!rc && in_run) {
		rd.line++;
		rc = bad(&rd, "file ends inside a run (truncated: no end line)");
	}
	if (!rc && !runs)
		rc = llmsim_err_set(err, LLMSIM_EPARSE, "%s: holds no trace runs", name);
	llmsim_lines_release(&lr);
	llmsim_trace_release(&t);
	return rc;
}
