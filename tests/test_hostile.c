/*
 * test_hostile.c - llmsim against careless and hostile input (issue 18):
 * traces whose NVTX range tree has a cycle, crafted trace databases,
 * numbers at the edge of their types, huge YAML mappings, endless lines,
 * a corrupted calibration store, a read-only store of an older schema, and
 * writers killed half-way. Each case must end with one clear line and a
 * non-zero exit (2 for usage, 1 for bad input), and leave files as they
 * were. No test asserts a time: the .timeout of the slow-path tests is far
 * above their run time and only catches a hang (their time is measured in
 * bench/bench_trace.c and bench/bench_yaml.c).
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/yaml.h"
#include "calib/trace/trace.h"
#include "support.h"

static char dir[64];
static char out[1 << 16], err[8192];

static void setup(void)
{
	test_tmpdir_make(dir, sizeof dir, "hostile");
}

static void teardown(void)
{
	test_tmpdir_remove(dir);
}

TestSuite(hostile, .init = setup, .fini = teardown, .timeout = 120);

static const char *in_dir(const char *name)
{
	return test_path_in(dir, name);
}

/* Run llmsim; expect exit status want and exactly one line on stderr
 * holding `has`. */
static void expect_one_line(const char *args, int want, const char *has)
{
	test_expect_one_line(args, want, has, out, sizeof out, err, sizeof err);
}

/* ---- the range tree ---------------------------------------------------- */

/* The 147-byte kind of trace the issue hung `trace show` with: one range
 * that is its own parent, one kernel inside it. */
static const char self_parent[] =
	"llmsim-trace\t1\n"
	"run\t\th\tc\tNVIDIA H200\t132\t1\t1\t1\t0\tt\n"
	"kernel\tk\t1\t1\t1\t32\t1\t1\t0\t0\t0\t8\t0\t0\t100\t200\t7\t0\t1\t1\n"
	"range\t1\t1\tr\t50\t300\t1\t0\n"
	"end\t1\t0\t1\n";

Test(hostile, range_that_is_its_own_parent)
{
	test_write_text(in_dir("self.trace"), self_parent);
	char args[512];
	snprintf(args, sizeof args, "trace show --db %s", in_dir("self.trace"));
	expect_one_line(args, 1, "range is its own parent");
	cr_expect(strstr(err, "self.trace:4: ") != NULL, "the line is named: %s", err);
}

Test(hostile, two_ranges_in_a_cycle)
{
	/* 1 -> 2 -> 1: range 1 names a later parent */
	test_write_text(in_dir("cycle.trace"),
		   "llmsim-trace\t1\n"
		   "run\t\th\tc\tNVIDIA H200\t132\t1\t1\t1\t0\tt\n"
		   "kernel\tk\t1\t1\t1\t32\t1\t1\t0\t0\t0\t8\t0\t0\t100\t200\t7\t0\t1\t2\n"
		   "range\t1\t2\ta\t50\t300\t1\t1\n"
		   "range\t2\t1\tb\t60\t290\t1\t1\n"
		   "end\t1\t0\t2\n");
	char args[512];
	snprintf(args, sizeof args, "trace compare --db %s --model 8b", in_dir("cycle.trace"));
	expect_one_line(args, 1, "parent is not an earlier range");
}

Test(hostile, range_naming_a_missing_parent)
{
	test_write_text(in_dir("orphan.trace"),
		   "llmsim-trace\t1\n"
		   "run\t\th\tc\tNVIDIA H200\t132\t1\t1\t1\t0\tt\n"
		   "range\t5\t3\ta\t50\t300\t1\t1\n"
		   "end\t0\t0\t1\n");
	char args[512];
	snprintf(args, sizeof args, "trace show --db %s", in_dir("orphan.trace"));
	expect_one_line(args, 1, "range 5: parent 3 is not in the run");
}

/* ---- crafted trace databases ------------------------------------------- */

/* A database holding the fixture's run, then sql applied to it. */
static void crafted_db(const char *path, const char *sql)
{
	char fx[512];
	struct llmsim_trace t;
	struct llmsim_err e = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(test_data(fx, sizeof fx, "trace/llama_tiny.trace"), 0, &t,
				       &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_trace_db_write(path, &t, NULL, &e), 0, "%s", e.msg);
	llmsim_trace_release(&t);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	sqlite3_close(db);
}

Test(hostile, database_with_a_range_cycle)
{
	crafted_db(in_dir("c1.db"), "UPDATE trace_ranges SET parent_id = range_id WHERE range_id = 3");
	crafted_db(in_dir("c2.db"), "UPDATE trace_ranges SET parent_id = 4 WHERE range_id = 3;"
				    "UPDATE trace_ranges SET parent_id = 3 WHERE range_id = 4");
	char args[512];
	snprintf(args, sizeof args, "trace show --db %s", in_dir("c1.db"));
	expect_one_line(args, 1, "trace_ranges row 3: range is its own parent");
	snprintf(args, sizeof args, "trace show --db %s", in_dir("c2.db"));
	expect_one_line(args, 1, "parent is not an earlier range");
}

Test(hostile, database_with_impossible_kernels)
{
	/* the 584-year kernel (end before start, wrapping around),
	 * negative grids and blocks, a text where a number belongs, an
	 * unknown copy kind */
	static const struct {
		const char *sql, *msg;
	} cases[] = {
		{"UPDATE trace_kernels SET end_ns = start_ns - 1 WHERE id = 5",
		 "trace_kernels row 5: kernel ends before it starts"},
		{"UPDATE trace_kernels SET grid_x = -4 WHERE id = 2", "grid or block dimension below 1"},
		{"UPDATE trace_kernels SET block_y = 0 WHERE id = 2", "grid or block dimension below 1"},
		{"UPDATE trace_kernels SET block_x = 2048 WHERE id = 2", "more than 1024 threads"},
		{"UPDATE trace_kernels SET grid_x = 'many' WHERE id = 3",
		 "trace_kernels row 3: column grid_x is not an integer"},
		{"UPDATE trace_kernels SET grid_x = 1e300 WHERE id = 3", "column grid_x is not an integer"},
		{"UPDATE trace_kernels SET grid_x = 8589934592 WHERE id = 3",
		 "column grid_x is out of range"},
		{"UPDATE trace_kernels SET range_id = 999 WHERE id = 3", "range 999 is not in the run"},
		{"UPDATE trace_memcpys SET kind = 'teleport'", "kind is neither memcpy nor memset"},
		{"UPDATE trace_memcpys SET dir = 'up' WHERE kind = 'memcpy'",
		 "unknown copy direction"},
		{"UPDATE trace_runs SET nvtx = 7", "trace_runs row 1: column nvtx is out of range"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char name[32], args[512];
		snprintf(name, sizeof name, "k%zu.db", i);
		crafted_db(in_dir(name), cases[i].sql);
		snprintf(args, sizeof args, "trace show --db %s", in_dir(name));
		expect_one_line(args, 1, cases[i].msg);
		/* and nothing reaches a calibration store */
		snprintf(args, sizeof args, "trace to-calib --db %s --calib-db %s", in_dir(name),
			 in_dir("cal.db"));
		expect_one_line(args, 1, cases[i].msg);
		cr_expect_neq(access(in_dir("cal.db"), F_OK), 0, "no store created");
	}
}

Test(hostile, trace_model_is_a_name_not_a_path)
{
	/* a range "model ../x.yaml" must not make llmsim open that path */
	test_write_text(in_dir("evil.yaml"), "not: a model\n");
	char sql[512], args[512];
	snprintf(sql, sizeof sql, "UPDATE trace_ranges SET name = 'model %s' WHERE range_id = 2",
		 in_dir("evil.yaml"));
	crafted_db(in_dir("m.db"), sql);
	snprintf(args, sizeof args, "trace compare --db %s", in_dir("m.db"));
	expect_one_line(args, 1, "which is not a model name: give --model");
	/* a plain name that looks like a file in the current folder: only the
	 * shipped models are looked up */
	crafted_db(in_dir("m2.db"), "UPDATE trace_ranges SET name = 'model evil.yaml'"
				    " WHERE range_id = 2");
	snprintf(args, sizeof args, "trace compare --db %s", in_dir("m2.db"));
	expect_one_line(args, 1, "not a model name");
	/* a shipped model's name is used */
	crafted_db(in_dir("m3.db"), "UPDATE trace_ranges SET name = 'model 8b' WHERE range_id = 2");
	snprintf(args, sizeof args, "trace compare --db %s", in_dir("m3.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "model for shapes: llama-3.1-8b") != NULL, "%s", out);
}

/* ---- writers killed half-way -------------------------------------------- */

/* In a child: open path, start a write transaction, insert rows, and die
 * (SIGKILL) before committing. journal: the journal mode to use first. */
static void die_mid_write(const char *path, const char *journal)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		sqlite3 *db;
		char sql[128];
		if (sqlite3_open(path, &db) != SQLITE_OK)
			_exit(3);
		snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; PRAGMA cache_size=4", journal);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		for (int i = 0; i < 20000; i++)
			sqlite3_exec(db,
				     "INSERT INTO trace_kernels(run_id,name,grid_x,grid_y,grid_z,"
				     "block_x,block_y,block_z,cluster_x,cluster_y,cluster_z,"
				     "regs_per_thread,static_smem_bytes,dynamic_smem_bytes,start_ns,"
				     "end_ns,stream,device,correlation_id,range_id) VALUES(1,'half',"
				     "1,1,1,1,1,1,0,0,0,0,0,0,5,1,0,0,0,0)",
				     NULL, NULL, NULL);
		raise(SIGKILL);
		_exit(4);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %d", st);
}

Test(hostile, killed_writer_blocks_no_reader)
{
	char args[512];
	/* WAL (an older llmsim's files, another program's): the reader ignores
	 * the uncommitted frames */
	crafted_db(in_dir("w.db"), "SELECT 1");
	die_mid_write(in_dir("w.db"), "WAL");
	snprintf(args, sizeof args, "trace show --db %s --json", in_dir("w.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "\"kernels\": 50,") != NULL, "only the committed run: %s", out);
	/* a file in the older rollback mode, left with a hot journal: rolled
	 * back once, then read (this failed with "attempt to write a readonly
	 * database" before) */
	crafted_db(in_dir("r.db"), "PRAGMA journal_mode=DELETE");
	die_mid_write(in_dir("r.db"), "DELETE");
	cr_assert_eq(access(in_dir("r.db-journal"), F_OK), 0, "the hot journal is there");
	snprintf(args, sizeof args, "trace show --db %s --json", in_dir("r.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "\"kernels\": 50,") != NULL, "%s", out);
}

/* ---- numbers at the edge ----------------------------------------------- */

Test(hostile, planner_for_2_to_the_31_gpus)
{
	expect_one_line("plan --model 70b --gpus 2147483647", 2, "--gpus: at most 1048576 GPUs");
	expect_one_line("plan --workload serve --model 70b --gpus 2147483647", 2,
			"--gpus: at most 1048576 GPUs");
	expect_one_line("plan --model 70b --gpus 4294967296", 2, "at most 1048576 GPUs");
	expect_one_line("train --model 8b --tp 2147483647", 2, "--tp: at most 1048576 GPUs");
	expect_one_line("spec --model 70b --draft 8b --gamma 2147483647 --alpha 0.8", 2,
			"--gamma: at most 32 draft tokens");
	expect_one_line("train --model mixtral-8x7b --moe-imbalance 1e300", 2,
			"--moe-imbalance: at most 65536");
	expect_one_line("serve --model 8b --requests 10000001", 2, "at most 10000000 requests");
	expect_one_line("infer --model 8b --prompt 16777217", 2, "--prompt: at most 16777216 tokens");
	expect_one_line("op gemm --m 2199023255553 --n 1 --k 1", 2, "--m: at most");
}

Test(hostile, moe_imbalance_beyond_every_token)
{
	/* Mixtral routes each token to 2 of 8 experts: the busiest expert can
	 * take every token, 8/2 = 4 times the mean, no more */
	int rc = run_llmsim("train --model mixtral-8x7b --gpus 8 --tp 8 --moe-imbalance 4.5", out,
			    sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1, "%s", err);
	cr_expect(strstr(err, "at most 4, experts/top_k") != NULL, "%s", err);
	rc = run_llmsim("train --model mixtral-8x7b --gpus 8 --tp 8 --moe-imbalance 4", out, sizeof out,
			err, sizeof err);
	cr_expect(rc == 0 || !strstr(err, "experts/top_k"), "%s", err);
}

/* ---- huge YAML ----------------------------------------------------------- */

static char *keys_yaml(long n, size_t *len, const char *last)
{
	size_t cap = (size_t)n * 24 + 64;
	char *buf = malloc(cap);
	cr_assert_not_null(buf);
	*len = 0;
	for (long i = 0; i < n; i++)
		*len += (size_t)snprintf(buf + *len, cap - *len, "key_%ld: %ld\n", i, i);
	if (last)
		*len += (size_t)snprintf(buf + *len, cap - *len, "%s", last);
	return buf;
}

Test(hostile, yaml_of_200k_keys)
{
	size_t len;
	char *buf = keys_yaml(200000, &len, NULL);
	struct llmsim_ynode *root = NULL;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_yaml_load_buf(buf, len, "big.yaml", &root, &e), 0, "%s", e.msg);
	cr_expect_eq(root->n, 200000);
	llmsim_ynode_free(root);
	free(buf);
	/* a duplicate after 200k keys is still found, on its line */
	buf = keys_yaml(200000, &len, "key_17: again\n");
	cr_expect_eq(llmsim_yaml_load_buf(buf, len, "dup.yaml", &root, &e), LLMSIM_EPARSE);
	cr_expect(strstr(e.msg, "dup.yaml:200001:1: duplicate key 'key_17'") != NULL, "%s", e.msg);
	/* as a file (3.6 MB): refused for its size, in one line */
	FILE *f = fopen(in_dir("big.yaml"), "w");
	cr_assert_not_null(f);
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);
	char args[512];
	snprintf(args, sizeof args, "hw show %s", in_dir("big.yaml"));
	expect_one_line(args, 1, "larger than 1024 KiB, the limit for a YAML file");
	/* under the limit (60k keys): parsed, then refused for its first key */
	buf = keys_yaml(60000, &len, NULL);
	f = fopen(in_dir("keys.yaml"), "w");
	cr_assert_not_null(f);
	fwrite(buf, 1, len, f);
	fclose(f);
	free(buf);
	snprintf(args, sizeof args, "model show %s", in_dir("keys.yaml"));
	expect_one_line(args, 1, "missing key 'name'");
}

/* ---- endless lines ------------------------------------------------------- */

/* A file of one line of n bytes of 'x' after a header line. */
static void long_line(const char *path, const char *head, size_t n)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(head, f);
	for (size_t i = 0; i < n; i++)
		fputc('x', f);
	fputc('\n', f);
	fclose(f);
}

Test(hostile, calib_import_of_an_endless_line)
{
	char args[512];
	snprintf(args, sizeof args, "calib import --db %s --in /dev/zero", in_dir("z.db"));
	expect_one_line(args, 1, "/dev/zero:1: line longer than 1 MiB (not a calibration dump?)");
	cr_expect_neq(access(in_dir("z.db"), F_OK), 0, "no database left behind");
	long_line(in_dir("long.tsv"), "llmsim-calib\tschema_version\t3\n", 3u << 20);
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("z.db"),
		 in_dir("long.tsv"));
	expect_one_line(args, 1, "long.tsv:2: line longer than 1 MiB");
}

Test(hostile, other_readers_stop_at_the_line_limit)
{
	char args[512];
	long_line(in_dir("long.trace"), "llmsim-trace\t1\n", 2u << 20);
	snprintf(args, sizeof args, "trace show --db %s", in_dir("long.trace"));
	expect_one_line(args, 1, "long.trace:2: line longer than 1 MiB (not a text trace?)");
	long_line(in_dir("lengths.txt"), "100 20\n", 2u << 20);
	snprintf(args, sizeof args, "serve --model 8b --lengths %s", in_dir("lengths.txt"));
	expect_one_line(args, 1, "lengths.txt:2: line longer than 1 MiB");
}

/* ---- the calibration store --------------------------------------------- */

static char *file_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	rewind(f);
	char *b = malloc((size_t)size + 1);
	cr_assert_not_null(b);
	*n = fread(b, 1, (size_t)size, f);
	fclose(f);
	return b;
}

Test(hostile, corrupted_store_is_reported)
{
	char args[1024], fx[512];
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("c.db"),
		 test_data(fx, sizeof fx, "../../fuzz/corpus/store/h200_kernels_head.tsv"));
	cr_assert_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	/* overwrite pages 3 to 5 of the file (4 KiB pages) with junk */
	FILE *f = fopen(in_dir("c.db"), "r+b");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, 2 * 4096, SEEK_SET), 0);
	for (int i = 0; i < 3 * 4096; i++)
		fputc(0x55, f);
	fclose(f);
	size_t n0, n1;
	char *before = file_bytes(in_dir("c.db"), &n0);
	snprintf(args, sizeof args, "calib show --db %s", in_dir("c.db"));
	expect_one_line(args, 1, "c.db: database is corrupt");
	snprintf(args, sizeof args, "calib fit --db %s --out %s", in_dir("c.db"), in_dir("p.yaml"));
	expect_one_line(args, 1, "database is corrupt");
	/* nothing is written into it */
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("c.db"),
		 test_data(fx, sizeof fx, "calib/small_h200.tsv"));
	expect_one_line(args, 1, "database is corrupt");
	char *after = file_bytes(in_dir("c.db"), &n1);
	cr_expect(n0 == n1 && !memcmp(before, after, n0), "the corrupted file was written to");
	free(before);
	free(after);
}

Test(hostile, read_only_v1_store_is_shown)
{
	char fx[512], args[512];
	FILE *f = fopen(test_data(fx, sizeof fx, "calib/store_v1.sql"), "r");
	cr_assert_not_null(f);
	static char sql[65536];
	sql[fread(sql, 1, sizeof sql - 1, f)] = 0;
	fclose(f);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(in_dir("v1.db"), &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	cr_assert_eq(chmod(in_dir("v1.db"), 0444), 0);
	size_t n0, n1;
	char *before = file_bytes(in_dir("v1.db"), &n0);
	snprintf(args, sizeof args, "calib show --db %s", in_dir("v1.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "(schema version 1, read as it stands") != NULL, "%s", out);
	snprintf(args, sizeof args, "calib show --db %s --json", in_dir("v1.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "\"schema_version\": 1") != NULL, "%s", out);
	char *after = file_bytes(in_dir("v1.db"), &n1);
	cr_expect(n0 == n1 && !memcmp(before, after, n0), "showing changed the file");
	cr_expect_neq(access(in_dir("v1.db-journal"), F_OK), 0);
	free(before);
	free(after);
	/* migrating is explicit */
	cr_assert_eq(chmod(in_dir("v1.db"), 0644), 0);
	snprintf(args, sizeof args, "calib upgrade --db %s", in_dir("v1.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "schema version 1 -> 3") != NULL, "%s", out);
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "already at schema version 3") != NULL, "%s", out);
}
