/*
 * fuzz_trace_db.c - libFuzzer target for the SQLite trace reader
 * (llmsim_trace_db_read and llmsim_trace_db_runs, what `llmsim trace show`
 * and the other trace verbs read): the input builds the database file
 * that is read.
 *
 *  - An input that starts with SQLite's magic ("SQLite format 3") is the
 *    file image itself.
 *  - Any other input is SQL run against a valid trace file (one run of
 *    three kernels, a copy, a memset and three nested ranges, written by
 *    llmsim_trace_db_write): rows inserted, updated or deleted, tables
 *    dropped, the schema rewritten. The SQL cannot reach outside that file
 *    (no ATTACH: no other file is opened or written) and is stopped after
 *    a few hundred thousand steps of SQLite's machine.
 *
 * A read that fails must leave a message and an empty trace; a run read
 * must pass llmsim_trace_check as it comes, summarize (trace show's range
 * tree), and write to text that reads back with as many records.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fuzz_input.h"
#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"

static const char template_text[] =
	"llmsim-trace\t1\n"
	"run\t2026-11-29T12:00:00Z\tfuzz\tpython3 step.py\tNVIDIA H200\t132\t1\t130001\t1\t0\t"
	"fuzz_trace_db\n"
	"kernel\t_ZN5flash25flash_fwd_kernelEv\t132\t1\t1\t384\t1\t1\t1\t1\t1\t128\t0\t65536\t"
	"1000000\t1004000\t7\t0\t1\t3\n"
	"kernel\tampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn\t66\t2\t1\t256\t1\t1\t1\t1\t1\t"
	"168\t0\t98304\t1005000\t1015000\t7\t0\t2\t2\n"
	"kernel\t_ZN2at6native28vectorized_layer_norm_kernelEv\t132\t1\t1\t384\t1\t1\t1\t1\t1\t"
	"128\t0\t0\t1016000\t1026000\t7\t0\t3\t0\n"
	"memcpy\tHtoD\t1048576\t1539000\t1542000\t7\t0\t51\t1\n"
	"memset\t\t4096\t1543000\t1544000\t7\t0\t52\t0\n"
	"range\t1\t0\tmodel llama-3.1-8b\t900000\t1600000\t4242\t0\n"
	"range\t2\t1\tprefill b=1 s=512\t1000000\t1500000\t4242\t1\n"
	"range\t3\t2\tattention\t1000000\t1004500\t4242\t2\n"
	"end\t3\t2\t3\n";

static char path[256];
static char *image; /* the template file's bytes */
static size_t nimage;

static void remove_all(void)
{
	fuzz_remove_db(path);
}

static int store(struct llmsim_trace *t, void *ctx)
{
	int64_t id;
	struct llmsim_err err = {0};
	(void)ctx;
	return llmsim_trace_db_write(path, t, &id, &err) ? (abort(), 1) : 0;
}

/* The template: written as llmsim writes traces, then in rollback-journal
 * mode (WAL needs files beside it that a file image cannot carry). */
static void make_template(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(path, sizeof path, "%s/llmsim-fuzz-trace-db-%d.db", dir, (int)getpid());
	atexit(remove_all);
	remove_all();
	struct llmsim_err err = {0};
	FILE *f = fmemopen((void *)template_text, sizeof template_text - 1, "r");
	if (!f || llmsim_trace_text_read(f, "template", store, NULL, &err))
		abort();
	fclose(f);
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	sqlite3_close(db);
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (nimage = (size_t)ftell(f)) == 0)
		abort();
	rewind(f);
	if (!(image = malloc(nimage)) || fread(image, 1, nimage, f) != nimage)
		abort();
	fclose(f);
}

static int stop_after(void *ctx)
{
	return ++*(int *)ctx > 300; /* x 1000 steps */
}

/* Run sql against the file (errors are the input's business). */
static void run_sql(const char *sql)
{
	sqlite3 *db;
	int steps = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		abort();
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0); /* no other file, no VACUUM INTO */
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_progress_handler(db, 1000, stop_after, &steps);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
}

static int count_runs(const struct llmsim_trace_run *run, int64_t nkernels, void *ctx)
{
	if (nkernels < 0 || run->id <= 0 || llmsim_trace_run_bad(run))
		abort();
	++*(int *)ctx;
	return 0;
}

static int same_counts(struct llmsim_trace *t, void *ctx)
{
	const struct llmsim_trace *want = ctx;
	if (t->nkernels != want->nkernels || t->ncopies != want->ncopies ||
	    t->nranges != want->nranges)
		abort();
	return 0;
}

static void check_run(const struct llmsim_trace *t)
{
	struct llmsim_err err = {0};
	if (llmsim_trace_check(t, "read", &err))
		abort(); /* the reader handed out a run its own check refuses */
	struct llmsim_trace_summary sum;
	if (llmsim_trace_summarize(t, &sum, &err) || !(sum.total_s >= 0))
		abort();
	llmsim_trace_summary_release(&sum);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || llmsim_trace_text_write(f, t, &err))
		abort();
	fclose(f);
	f = fmemopen(buf, len, "r");
	if (!f || llmsim_trace_text_read(f, "written", same_counts, (void *)t, &err))
		abort();
	fclose(f);
	free(buf);
}

static void read_back(int64_t run_id)
{
	struct llmsim_trace t;
	struct llmsim_err err = {0};
	llmsim_trace_init(&t);
	if (llmsim_trace_db_read(path, run_id, &t, &err)) {
		if (!err.msg[0] || t.nkernels || t.ncopies || t.nranges)
			abort();
	} else {
		check_run(&t);
	}
	llmsim_trace_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char magic[] = "SQLite format 3";
	if (!image)
		make_template();
	if (size > (1 << 20))
		return 0;
	remove_all();
	if (size >= sizeof magic && !memcmp(data, magic, sizeof magic)) {
		fuzz_write_file(path, data, size);
	} else {
		fuzz_write_file(path, image, nimage);
		char *sql = malloc(size + 1);
		if (!sql)
			abort();
		memcpy(sql, data, size);
		sql[size] = 0;
		run_sql(sql);
		free(sql);
	}
	int runs = 0;
	struct llmsim_err err = {0};
	if (llmsim_trace_db_runs(path, count_runs, &runs, &err) && !err.msg[0])
		abort();
	read_back(0);
	read_back(2);
	return 0;
}
