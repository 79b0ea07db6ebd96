/*
 * cmd_trace_io.c - `llmsim trace import` and `export`: a trace's text form
 * into a database, and a run back out as text.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bounds.h"
#include "base/gzfile.h"
#include "base/paths.h"
#include "base/staging.h"
#include "common.h"
#include "trace_common.h"

struct import_ctx {
	const char *db;
	int runs;
	struct llmsim_err *err;
};

static int import_one(struct llmsim_trace *t, void *ctx)
{
	struct import_ctx *ic = ctx;
	int64_t id;
	int rc = llmsim_trace_db_write(ic->db, t, &id, ic->err);
	if (!rc)
		ic->runs++;
	return rc;
}

/* When in is not a regular file (a pipe, /dev/stdin): a descriptor of an
 * unlinked temporary file holding all of it (at most the size of a text
 * trace); -1 for a regular file, -2 after printing an error. */
static int spool_pipe(const char *cmd, const char *in)
{
	struct stat st;
	if (stat(in, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return -1;
	const char *tmpdir = getenv("TMPDIR");
	char tmp[PATH_MAX];
	int fd = -1, src = open(in, O_RDONLY | O_CLOEXEC);
	if (src >= 0 && !llmsim_stage_name_in(tmp, sizeof tmp, tmpdir && *tmpdir ? tmpdir : "/tmp",
					      "llmsim-spool") &&
	    (fd = mkostemp(tmp, O_CLOEXEC)) >= 0)
		unlink(tmp);
	uint64_t total = 0;
	char buf[1 << 16];
	ssize_t n = 0;
	while (fd >= 0 && (n = read(src, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (total += (uint64_t)n) > LLMSIM_MAX_TRACE_TEXT_BYTES ||
		    write(fd, buf, (size_t)n) != n)
			break;
	}
	int e = errno;
	if (src >= 0)
		close(src);
	if (fd >= 0 && n == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	if (total > LLMSIM_MAX_TRACE_TEXT_BYTES)
		fprintf(stderr, "%s: %s: larger than %llu GiB, the limit for a text trace\n", cmd, in,
			(unsigned long long)(LLMSIM_MAX_TRACE_TEXT_BYTES >> 30));
	else
		fprintf(stderr, "%s: %s: %s\n", cmd, in, strerror(e));
	return -2;
}

static int discard_run(struct llmsim_trace *t, void *ctx)
{
	(void)t;
	(void)ctx;
	return 0;
}

/* Read all of the text trace at src (named `name` in messages). */
static int check_text(const char *src, const char *name, struct llmsim_err *err)
{
	struct llmsim_err zerr = {0};
	FILE *f = llmsim_gz_open(src, NULL, err);
	if (!f)
		return err->code;
	int rc = llmsim_trace_text_read(f, name, discard_run, NULL, err);
	if (llmsim_gz_close(f, name, &zerr)) {
		*err = zerr;
		rc = zerr.code;
	}
	return rc;
}

int trace_import(int argc, char **argv)
{
	const char *cmd = "llmsim trace import", *db = NULL, *in = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "SQLite file to add the runs to", 0, NULL, NULL},
		{"in", LLMSIM_ARG_STRING, &in, "FILE", "text trace (the injection library's fallback)",
		 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE --in FILE [--json]",
				   "Load every run of a text trace into an SQLite trace database.",
				   argc - 1, argv + 1, opts, 3, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db || !in)
		return llmsim_args_error(cmd, "--db FILE and --in FILE are required");
	char inp[PATH_MAX], spool[64];
	in = llmsim_data_input(in, inp, sizeof inp);
	/* The input is read twice (checked whole first, so a bad line leaves
	 * the database alone); a pipe, which can be read once, is copied into
	 * an unlinked temporary file that a kill cannot leave behind. */
	const char *src = in;
	int sfd = spool_pipe(cmd, in);
	if (sfd == -2)
		return 1;
	if (sfd >= 0) {
		snprintf(spool, sizeof spool, "/proc/self/fd/%d", sfd);
		src = spool;
	}
	struct llmsim_trace t;
	struct llmsim_err err = {0}, zerr = {0};
	llmsim_trace_init(&t);
	if (sfd < 0 && trace_load_trace(cmd, in, 0, &t))
		return 1;
	if (sfd >= 0 && (rc = check_text(src, in, &err))) {
		close(sfd);
		return trace_fail(cmd, &err);
	}
	llmsim_trace_release(&t);
	FILE *f = llmsim_gz_open(src, NULL, &err);
	if (sfd >= 0)
		close(sfd); /* the stream holds its own descriptor */
	if (!f)
		return trace_fail(cmd, &err);
	struct import_ctx ic = {db, 0, &err};
	rc = llmsim_trace_text_read(f, in, import_one, &ic, &err);
	if (llmsim_gz_close(f, in, &zerr))
		return trace_fail(cmd, &zerr);
	if (rc)
		return trace_fail(cmd, &err);
	fprintf(stderr, "%s: %d run%s added to %s\n", cmd, ic.runs, ic.runs == 1 ? "" : "s", db);
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "db", db);
		llmsim_json_str(&j, "in", in);
		llmsim_json_int(&j, "runs_added", ic.runs);
		cli_json_end(&j);
	}
	return 0;
}

int trace_export(int argc, char **argv)
{
	const char *cmd = "llmsim trace export", *db = NULL, *out = NULL;
	int64_t run = 0;
	int json = 0;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "trace (SQLite or text form)", 0, NULL, NULL},
		{"run", LLMSIM_ARG_I64, &run, "ID", "run to write (default: the last)", 0, NULL, NULL},
		{"out", LLMSIM_ARG_STRING, &out, "FILE", "output file (default: stdout)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout of what was written (needs --out)",
		 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE [--run ID] [--out FILE] [--json]",
				   "Write one trace run in the text form.", argc - 1, argv + 1, opts, 4,
				   NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (json && !out)
		return llmsim_args_error(cmd, "--json needs --out FILE (stdout holds the JSON)");
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	struct stat st;
	if (out && !stat(out, &st) && !S_ISREG(st.st_mode)) {
		/* rename() would replace the device or pipe itself */
		fprintf(stderr, "%s: %s: not a regular file (omit --out for stdout)\n", cmd, out);
		return 1;
	}
	struct llmsim_trace t;
	if (trace_load_trace(cmd, db, run, &t))
		return 1;
	/* Write to a temporary file and rename: no partial output on failure. */
	char tmp[PATH_MAX + 64];
	FILE *f = stdout;
	if (out) {
		llmsim_stage_sweep(out); /* what a killed export left */
		int fd = llmsim_stage_name(tmp, sizeof tmp, out) ? -1 : mkstemp(tmp);
		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", cmd, out, strerror(errno));
			llmsim_trace_release(&t);
			return 1;
		}
	}
	struct llmsim_err err = {0};
	rc = llmsim_trace_text_write(f, &t, &err);
	int64_t run_id = t.run.id;
	llmsim_trace_release(&t);
	if (out) {
		if (fclose(f) && !rc)
			rc = llmsim_err_set(&err, LLMSIM_EIO, "%s: %s", out, strerror(errno));
		if (!rc && rename(tmp, out))
			rc = llmsim_err_set(&err, LLMSIM_EIO, "%s: %s", out, strerror(errno));
		if (rc)
			unlink(tmp);
	}
	if (rc)
		return trace_fail(cmd, &err);
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "db", db);
		llmsim_json_int(&j, "run", run_id);
		llmsim_json_str(&j, "out", out);
		cli_json_end(&j);
	}
	return 0;
}
