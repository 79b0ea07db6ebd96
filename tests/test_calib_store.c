/*
 * test_calib_store.c - the calibration store: write/read, export/import
 * round trip, refusal of bad dumps, migration from schema version 1, and
 * a writer killed before commit leaving the database as it was.
 *
 * The v1 fixture is SQL (tests/data/calib/store_v1.sql): the product can
 * only write the current schema, so the test builds the old file with
 * SQLite itself.
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calib/store.h"
#include "support.h"

static char dir[64];

static void mkdir_tmp(void)
{
	snprintf(dir, sizeof dir, "/tmp/llmsim-store-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

static const char *tmp(const char *name)
{
	static char buf[4][128];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

TestSuite(calib_store, .init = mkdir_tmp, .fini = rm_tmp);

static struct llmsim_device_info h200(void)
{
	struct llmsim_device_info d = {
	    .name = "NVIDIA H200",
	    .hw_name = "h200",
	    .uuid = "GPU-1234",
	    .sms = 132,
	    .device_count = 1,
	    .hbm_bytes = 150754820096.0,
	    .l2_bytes = 62914560.0,
	    .sm_clock_max_hz = 1.98e9,
	    .mem_clock_hz = 3.201e9,
	    .driver = "580.159.04",
	    .cuda_runtime = "13.0",
	    .cupti = "130001",
	    .cublas = "13.0.0",
	    .nccl = "2.27.3",
	};
	return d;
}

static struct llmsim_run_info run_info(const char *started)
{
	struct llmsim_run_info r = {.host = "calib-host", .tool = "test 1.0", .quick = 1,
				    .operand_data = "normal"};
	snprintf(r.started_at, sizeof r.started_at, "%s", started);
	snprintf(r.notes, sizeof r.notes, "notes with\ta tab, a\nnewline and a \\ backslash");
	return r;
}

static struct llmsim_case mkcase(const char *spec, const char *cls, const char *split, double t)
{
	struct llmsim_case c = {.reps = 20,
				.time_median_s = t,
				.time_min_s = t * 0.97,
				.time_p10_s = t * 0.98,
				.time_p90_s = t * 1.03,
				.sm_clock_hz = 1.755e9,
				.check_rel_err = 3.0517578125e-05,
				.flops_declared = 1.0 / 3.0,
				.bytes_declared = 1e9};
	snprintf(c.op_spec, sizeof c.op_spec, "%s", spec);
	snprintf(c.op_class, sizeof c.op_class, "%s", cls);
	snprintf(c.impl, sizeof c.impl, "test");
	snprintf(c.split, sizeof c.split, "%s", split);
	return c;
}

static struct llmsim_case written[3]; /* what write_run wrote */

/* One committed run: three cases, the first with two kernels and two
 * counters. */
static void write_run(const char *path, const char *started)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	int64_t run, cid[3];
	cr_assert_eq(llmsim_store_open(path, LLMSIM_STORE_CREATE, &s, &err), 0, "%s", err.msg);
	struct llmsim_device_info d = h200();
	struct llmsim_run_info r = run_info(started);
	cr_assert_eq(llmsim_store_run_begin(s, &d, &r, &run, &err), 0, "%s", err.msg);
	written[0] = mkcase("gemm m=4096 n=4096 k=4096", "gemm", "fit", 1.9e-4);
	written[1] =
	    mkcase("ew kind=rmsnorm tokens=8192 hidden=8192", "elementwise", "holdout", 5.5e-5);
	written[2] = mkcase("launch empty", "launch", "fit", 2.1e-6);
	written[2].check_rel_err = -1;
	written[2].time_p90_s = NAN; /* unknown: stored as NULL, read back as NaN */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(llmsim_store_add_case(s, run, &written[i], &cid[i], &err), 0, "%s",
			     err.msg);
	struct llmsim_kernel_rec k1 = {.name = "nvjet_sm90_tst_256x128_64x4",
				       .grid = {16, 32, 1},
				       .block = {384, 1, 1},
				       .regs_per_thread = 168,
				       .dynamic_smem_bytes = 213056,
				       .duration_median_s = 1.8e-4,
				       .launches_per_rep = 1};
	struct llmsim_kernel_rec k2 = {.name = "splitKreduce_kernel",
				       .grid = {256, 1, 1},
				       .block = {256, 1, 1},
				       .regs_per_thread = 32,
				       .static_smem_bytes = 1024,
				       .duration_median_s = 1e-5,
				       .launches_per_rep = 2};
	cr_assert_eq(llmsim_store_add_kernel(s, cid[0], &k1, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_add_kernel(s, cid[0], &k2, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_add_counter(s, cid[0], "dram__bytes_read.sum", 1.1e8, &err), 0);
	cr_assert_eq(llmsim_store_add_counter(s, cid[0], "dram__bytes_write.sum", 3.4e7, &err), 0);
	cr_assert_eq(llmsim_store_run_commit(s, run, &err), 0, "%s", err.msg);
	llmsim_store_close(s);
}

struct collect {
	struct llmsim_store_case_row rows[16];
	int n;
};

static int collect_case(const struct llmsim_store_case_row *row, void *ctx)
{
	struct collect *c = ctx;
	if (c->n < 16)
		c->rows[c->n] = *row;
	c->n++;
	return 0;
}

static int count_runs(const struct llmsim_store_run_row *row, void *ctx)
{
	(void)row;
	++*(int *)ctx;
	return 0;
}

static int nruns(const char *path)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	int n = 0;
	cr_assert_eq(llmsim_store_open(path, LLMSIM_STORE_READ, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_runs(s, count_runs, &n, &err), 0, "%s", err.msg);
	llmsim_store_close(s);
	return n;
}

static void expect_same_double(double a, double b, const char *what)
{
	if (isnan(b))
		cr_expect(isnan(a), "%s: %g, expected NaN", what, a);
	else
		cr_expect_eq(a, b, "%s: %.17g, expected %.17g (exact)", what, a, b);
}

static void expect_case_equal(const struct llmsim_case *a, const struct llmsim_case *b)
{
	cr_expect_str_eq(a->op_spec, b->op_spec);
	cr_expect_str_eq(a->op_class, b->op_class);
	cr_expect_str_eq(a->impl, b->impl);
	cr_expect_str_eq(a->split, b->split);
	cr_expect_eq(a->reps, b->reps);
	expect_same_double(a->flops_declared, b->flops_declared, "flops_declared");
	expect_same_double(a->bytes_declared, b->bytes_declared, "bytes_declared");
	expect_same_double(a->time_median_s, b->time_median_s, "time_median_s");
	expect_same_double(a->time_min_s, b->time_min_s, "time_min_s");
	expect_same_double(a->time_p10_s, b->time_p10_s, "time_p10_s");
	expect_same_double(a->time_p90_s, b->time_p90_s, "time_p90_s");
	expect_same_double(a->sm_clock_hz, b->sm_clock_hz, "sm_clock_hz");
	expect_same_double(a->check_rel_err, b->check_rel_err, "check_rel_err");
}

struct kcollect {
	struct llmsim_kernel_rec k[4];
	int n;
};

static int collect_kernel(const struct llmsim_kernel_rec *k, void *ctx)
{
	struct kcollect *c = ctx;
	if (c->n < 4)
		c->k[c->n] = *k;
	c->n++;
	return 0;
}

/* Read db back and compare with what write_run wrote. */
static void expect_db_holds_run(const char *path)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	struct collect c = {.n = 0};
	cr_assert_eq(llmsim_store_open(path, LLMSIM_STORE_READ, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_cases(s, NULL, collect_case, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 3);
	struct llmsim_device_info d = h200();
	struct llmsim_run_info r = run_info("2026-11-29T12:00:00Z");
	for (int i = 0; i < 3; i++) {
		expect_case_equal(&c.rows[i].c, &written[i]);
		cr_expect_str_eq(c.rows[i].dev.name, d.name);
		cr_expect_str_eq(c.rows[i].dev.hw_name, d.hw_name);
		cr_expect_str_eq(c.rows[i].dev.nccl, d.nccl);
		cr_expect_eq(c.rows[i].dev.sms, 132);
		cr_expect_eq(c.rows[i].dev.device_count, 1);
		cr_expect_eq(c.rows[i].dev.hbm_bytes, d.hbm_bytes);
		cr_expect_str_eq(c.rows[i].run.notes, r.notes);
		cr_expect_str_eq(c.rows[i].run.started_at, r.started_at);
		cr_expect_eq(c.rows[i].run.quick, 1);
	}
	struct kcollect kc = {.n = 0};
	cr_assert_eq(llmsim_store_kernels(s, c.rows[0].case_id, collect_kernel, &kc, &err), 0);
	cr_assert_eq(kc.n, 2);
	cr_expect_str_eq(kc.k[0].name, "nvjet_sm90_tst_256x128_64x4");
	cr_expect_eq(kc.k[0].grid[1], 32);
	cr_expect_eq(kc.k[0].dynamic_smem_bytes, 213056);
	cr_expect_str_eq(kc.k[1].name, "splitKreduce_kernel");
	cr_expect_eq(kc.k[1].launches_per_rep, 2);
	cr_expect_eq(kc.k[1].static_smem_bytes, 1024);
	double v = 0;
	cr_expect_eq(llmsim_store_counter(s, c.rows[0].case_id, "dram__bytes_write.sum", &v, &err),
		     0);
	cr_expect_eq(v, 3.4e7);
	cr_expect_eq(llmsim_store_counter(s, c.rows[1].case_id, "dram__bytes_write.sum", &v, &err),
		     LLMSIM_ENOENT);
	llmsim_store_close(s);
}

static void export_to(const char *db, const char *txt)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_store_open(db, LLMSIM_STORE_READ, &s, &err), 0, "%s", err.msg);
	FILE *f = fopen(txt, "w");
	cr_assert_not_null(f);
	cr_assert_eq(llmsim_store_export(s, f, &err), 0, "%s", err.msg);
	fclose(f);
	llmsim_store_close(s);
}

/* The operand data a schema 1-2 dump is imported as (NULL: none said). */
static const char *import_legacy;

static int import_from(const char *db, const char *txt, struct llmsim_err *err)
{
	struct llmsim_store *s;
	cr_assert_eq(llmsim_store_open(db, LLMSIM_STORE_CREATE, &s, err), 0, "%s", err->msg);
	FILE *f = fopen(txt, "r");
	cr_assert_not_null(f);
	struct llmsim_store_import_opts o = {.legacy_operand_data = import_legacy};
	int rc = llmsim_store_import_opts(s, f, "dump.tsv", &o, err);
	fclose(f);
	llmsim_store_close(s);
	return rc;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f);
	static char buf[2][65536];
	static int i;
	i ^= 1;
	size_t n = fread(buf[i], 1, sizeof buf[i] - 1, f);
	buf[i][n] = 0;
	fclose(f);
	return buf[i];
}

Test(calib_store, write_read_back)
{
	write_run(tmp("a.db"), "2026-11-29T12:00:00Z");
	expect_db_holds_run(tmp("a.db"));
}

Test(calib_store, export_import_round_trip)
{
	struct llmsim_err err = {0};
	write_run(tmp("a.db"), "2026-11-29T12:00:00Z");
	export_to(tmp("a.db"), tmp("a.tsv"));
	cr_assert_eq(import_from(tmp("b.db"), tmp("a.tsv"), &err), 0, "%s", err.msg);
	expect_db_holds_run(tmp("b.db"));
	/* A fresh database numbers rows as the original did: same text. */
	export_to(tmp("b.db"), tmp("b.tsv"));
	cr_expect_str_eq(slurp(tmp("a.tsv")), slurp(tmp("b.tsv")));
	/* The escaped notes keep each row on one line: 1 header + 7 columns
	 * lines + 1 device + 1 run + 3 cases + 2 kernels + 2 counters. */
	int lines = 0;
	for (const char *p = slurp(tmp("a.tsv")); *p; p++)
		lines += *p == '\n';
	cr_expect_eq(lines, 17);
}

Test(calib_store, import_into_existing_shares_device_refuses_duplicate_run)
{
	struct llmsim_err err = {0};
	write_run(tmp("a.db"), "2026-11-29T12:00:00Z");
	export_to(tmp("a.db"), tmp("a.tsv"));
	write_run(tmp("c.db"), "2026-11-30T08:00:00Z"); /* another run, same GPU */
	cr_assert_eq(import_from(tmp("c.db"), tmp("a.tsv"), &err), 0, "%s", err.msg);
	cr_expect_eq(nruns(tmp("c.db")), 2);
	export_to(tmp("c.db"), tmp("c.tsv"));
	const char *dump = slurp(tmp("c.tsv"));
	const char *first = strstr(dump, "\ndevices\t");
	const char *second = first ? strstr(first + 1, "\ndevices\t") : NULL;
	cr_expect_not_null(first);
	cr_expect_null(second, "the identical device should be stored once");
	/* The same dump again: refused, nothing added. */
	cr_expect_eq(import_from(tmp("c.db"), tmp("a.tsv"), &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "already in the database") != NULL, "%s", err.msg);
	cr_expect_eq(nruns(tmp("c.db")), 2);
}

/* Write `text` as a dump and import it into a new db: the error. */
static int import_text(const char *text, struct llmsim_err *err)
{
	FILE *f = fopen(tmp("bad.tsv"), "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	unlink(tmp("bad.db"));
	return import_from(tmp("bad.db"), tmp("bad.tsv"), err);
}

Test(calib_store, import_refuses_bad_files_with_line)
{
	struct llmsim_err err = {0};
	write_run(tmp("a.db"), "2026-11-29T12:00:00Z");
	export_to(tmp("a.db"), tmp("a.tsv"));
	char good[65536];
	snprintf(good, sizeof good, "%s", slurp(tmp("a.tsv")));

	cr_expect_eq(import_text("", &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "empty file") != NULL, "%s", err.msg);
	cr_expect_eq(import_text("hello\tworld\n", &err), LLMSIM_EPARSE);
	cr_expect(!strncmp(err.msg, "dump.tsv:1: ", 12), "%s", err.msg);
	cr_expect_eq(import_text("llmsim-calib\tschema_version\t4\n", &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "schema version 4") != NULL, "%s", err.msg);

	/* Corrupt the first case's median time (line 8: header, devices
	 * columns + row, runs columns + row, cases columns, then cases). */
	char bad[65536];
	snprintf(bad, sizeof bad, "%s", good);
	char *l = bad;
	for (int i = 1; i < 8; i++)
		l = strchr(l, '\n') + 1;
	cr_assert(!strncmp(l, "cases\t", 6), "%.40s", l);
	char *f = l;
	for (int i = 0; i < 10; i++) /* field 10 of the row: time_median_s */
		f = strchr(f, '\t') + 1;
	f[0] = 'x';
	cr_expect_eq(import_text(bad, &err), LLMSIM_EPARSE);
	cr_expect(!strncmp(err.msg, "dump.tsv:8: ", 12), "%s", err.msg);
	cr_expect(strstr(err.msg, "time_median_s") != NULL, "%s", err.msg);
	cr_expect_eq(nruns(tmp("bad.db")), 0, "a refused dump must leave nothing behind");

	/* A case pointing at a run the file does not hold. */
	snprintf(bad, sizeof bad, "%s", good);
	l = bad;
	for (int i = 1; i < 8; i++)
		l = strchr(l, '\n') + 1;
	f = strchr(l, '\t') + 1;
	f = strchr(f, '\t') + 1; /* run_id */
	f[0] = '9';
	cr_expect_eq(import_text(bad, &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "dump.tsv:8: run_id refers to runs id 9") != NULL, "%s", err.msg);

	/* Too few fields; an unknown column; a bad escape. */
	cr_expect_eq(
	    import_text("llmsim-calib\tschema_version\t3\ncolumns\tdevices\tid\tname\n", &err),
	    LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "dump.tsv:2: table 'devices' lacks column 'hw_name'") != NULL,
		  "%s", err.msg);
	cr_expect_eq(
	    import_text("llmsim-calib\tschema_version\t3\ncolumns\tdevices\tbogus\n", &err),
	    LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "unknown column 'bogus'") != NULL, "%s", err.msg);
	snprintf(bad, sizeof bad, "%s", good);
	char *notes = strstr(bad, "notes with");
	cr_assert_not_null(notes);
	notes[0] = '\\';
	notes[1] = 'q';
	cr_expect_eq(import_text(bad, &err), LLMSIM_EPARSE);
	cr_expect(!strncmp(err.msg, "dump.tsv:5: ", 12) && strstr(err.msg, "bad escape"), "%s",
		  err.msg);
}

Test(calib_store, v1_dump_loads_with_defaults)
{
	/* A v1 dump: no device_count, no check_rel_err columns. */
	const char *v1 =
	    "llmsim-calib\tschema_version\t1\n"
	    "columns\tdevices\tid\tname\thw_name\tuuid\tsms\thbm_bytes\tl2_bytes\t"
	    "sm_clock_max_hz\tmem_clock_hz\tdriver\tcuda_runtime\tcupti\tcublas\tnccl\n"
	    "devices\t7\tNVIDIA H200\th200\tGPU-9\t132\t1.5e11\t\\N\t1.98e9\t\\N\t580\t13.0\t"
	    "130001\t\t\n"
	    "columns\truns\tid\tdevice_id\tstarted_at\thost\ttool\tquick\tnotes\tstatus\n"
	    "runs\t3\t7\t2026-01-01T00:00:00Z\th\tt\t0\t\tcomplete\n"
	    "columns\tcases\tid\trun_id\top_spec\top_class\timpl\tsplit\tflops_declared\t"
	    "bytes_declared\treps\ttime_median_s\ttime_min_s\ttime_p10_s\ttime_p90_s\t"
	    "sm_clock_hz\n"
	    "cases\t11\t3\tgemm m=1 n=1 k=1\tgemm\tcublas\tfit\t2\t6\t5\t1e-5\t\\N\t\\N\t\\N\t0\n";
	struct llmsim_err err = {0};
	/* it says nothing of its operands: refused unless the caller does */
	cr_expect_eq(import_text(v1, &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "dump.tsv:1: a schema-1 dump") != NULL, "%s", err.msg);
	import_legacy = "any";
	cr_assert_eq(import_text(v1, &err), 0, "%s", err.msg);
	import_legacy = NULL;
	struct llmsim_store *s;
	struct collect c = {.n = 0};
	cr_assert_eq(llmsim_store_open(tmp("bad.db"), LLMSIM_STORE_READ, &s, &err), 0);
	cr_assert_eq(llmsim_store_cases(s, NULL, collect_case, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 1);
	cr_expect_eq(c.rows[0].c.check_rel_err, -1);
	cr_expect_eq(c.rows[0].dev.device_count, 1);
	cr_expect(isnan(c.rows[0].dev.l2_bytes));
	cr_expect_eq(c.rows[0].c.time_median_s, 1e-5);
	cr_expect_str_eq(c.rows[0].run.operand_data, "any");
	llmsim_store_close(s);
	/* said to hold grid data, its fit case is refused: grids are retired */
	import_legacy = "grid";
	cr_expect_eq(import_text(v1, &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "dump.tsv:7: case 'gemm m=1 n=1 k=1' is a fit case of run 3")
		  != NULL, "%s", err.msg);
	import_legacy = NULL;
}

static int load_sql(const char *db, const char *sql_path)
{
	FILE *f = fopen(sql_path, "r");
	cr_assert_not_null(f, "%s", sql_path);
	static char sql[65536];
	size_t n = fread(sql, 1, sizeof sql - 1, f);
	sql[n] = 0;
	fclose(f);
	sqlite3 *h;
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
	cr_assert_eq(rc, SQLITE_OK, "%s", msg ? msg : "");
	sqlite3_close(h);
	return rc;
}

/* The bytes of a file, malloc'd (free them); *n gets the size. */
static char *file_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	char *buf = malloc(1 << 20);
	cr_assert_not_null(buf);
	*n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* A v1 file read as it stands: the v2 columns' defaults come back, and
 * neither the file nor its version changes (nothing is migrated on read,
 * so a read-only v1 file can be read); writing is refused. */
Test(calib_store, reads_v1_without_migrating)
{
	char fx[512];
	load_sql(tmp("v1.db"), test_data(fx, sizeof fx, "calib/store_v1.sql"));
	size_t n0, n1;
	char *before = file_bytes(tmp("v1.db"), &n0);
	cr_assert_eq(chmod(tmp("v1.db"), 0444), 0);
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_store_open(tmp("v1.db"), LLMSIM_STORE_READ, &s, &err), 0, "%s",
		     err.msg);
	cr_expect_eq(llmsim_store_schema_version(s), 1);
	struct collect c = {.n = 0};
	cr_assert_eq(llmsim_store_cases(s, NULL, collect_case, &c, &err), 0, "%s", err.msg);
	cr_assert_eq(c.n, 2);
	/* The fixture's values, and the v2 columns' defaults. */
	cr_expect_str_eq(c.rows[0].c.op_spec, "gemm m=4096 n=4096 k=4096");
	cr_expect_eq(c.rows[0].c.time_median_s, 1.9e-4);
	cr_expect_eq(c.rows[0].c.check_rel_err, -1);
	cr_expect_eq(c.rows[0].dev.device_count, 1);
	cr_expect_str_eq(c.rows[1].c.split, "holdout");
	double v;
	cr_expect_eq(llmsim_store_counter(s, c.rows[1].case_id, "dram__bytes_read.sum", &v, &err),
		     0);
	cr_expect_eq(v, 1073741824.0);
	/* the export of a v1 file is a v2 dump (with the defaults) */
	char *dump = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&dump, &len);
	cr_assert_eq(llmsim_store_export(s, f, &err), 0, "%s", err.msg);
	fclose(f);
	cr_expect(strstr(dump, "\tdevice_count\t") != NULL, "%s", dump);
	free(dump);
	struct llmsim_device_info d = h200();
	struct llmsim_run_info r = run_info("2026-11-29T13:00:00Z");
	int64_t run;
	cr_expect_eq(llmsim_store_run_begin(s, &d, &r, &run, &err), LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "read-only") != NULL, "%s", err.msg);
	llmsim_store_close(s);
	char *after = file_bytes(tmp("v1.db"), &n1);
	cr_expect(n0 == n1 && !memcmp(before, after, n0), "reading changed the file");
	free(before);
	free(after);
	chmod(tmp("v1.db"), 0644);
}

/* Opening to write migrates (once), and so does `calib upgrade`. */
Test(calib_store, migrates_v1_on_write_and_upgrade)
{
	char fx[512];
	load_sql(tmp("v1.db"), test_data(fx, sizeof fx, "calib/store_v1.sql"));
	load_sql(tmp("v1b.db"), test_data(fx, sizeof fx, "calib/store_v1.sql"));
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_store_open(tmp("v1.db"), LLMSIM_STORE_WRITE, &s, &err), 0, "%s",
		     err.msg);
	cr_expect_eq(llmsim_store_schema_version(s), 3);
	/* The migrated file takes v2 writes. */
	struct llmsim_device_info d = h200();
	d.device_count = 8;
	struct llmsim_run_info r = run_info("2026-11-29T13:00:00Z");
	int64_t run, cid;
	struct llmsim_case k =
	    mkcase("collective kind=allreduce bytes=1e9 gpus=8", "collective", "fit", 1e-3);
	cr_assert_eq(llmsim_store_run_begin(s, &d, &r, &run, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_add_case(s, run, &k, &cid, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_run_commit(s, run, &err), 0, "%s", err.msg);
	llmsim_store_close(s);
	/* Opening again reads v3 (the migration is not repeated). */
	cr_assert_eq(llmsim_store_open(tmp("v1.db"), LLMSIM_STORE_READ, &s, &err), 0, "%s",
		     err.msg);
	cr_expect_eq(llmsim_store_schema_version(s), 3);
	struct collect c = {.n = 0};
	struct llmsim_store_filter f = {.op_class = "collective"};
	cr_assert_eq(llmsim_store_cases(s, &f, collect_case, &c, &err), 0);
	cr_assert_eq(c.n, 1);
	cr_expect_eq(c.rows[0].dev.device_count, 8);
	cr_expect_eq(c.rows[0].c.check_rel_err, 3.0517578125e-05);
	llmsim_store_close(s);
	/* llmsim_store_upgrade: v1 -> v3, then nothing to do */
	int from = 0;
	cr_assert_eq(llmsim_store_upgrade(tmp("v1b.db"), &from, &err), 0, "%s", err.msg);
	cr_expect_eq(from, 1);
	cr_assert_eq(llmsim_store_upgrade(tmp("v1b.db"), &from, &err), 0, "%s", err.msg);
	cr_expect_eq(from, 3);
}

Test(calib_store, filters)
{
	write_run(tmp("a.db"), "2026-11-29T12:00:00Z");
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_store_open(tmp("a.db"), LLMSIM_STORE_READ, &s, &err), 0);
	struct {
		struct llmsim_store_filter f;
		int n;
	} cases[] = {
	    {{NULL, NULL, NULL, 0}, 3},	       {{"h200", NULL, NULL, 0}, 3},
	    {{"b200", NULL, NULL, 0}, 0},      {{NULL, "gemm", NULL, 0}, 1},
	    {{NULL, NULL, "fit", 0}, 2},       {{NULL, NULL, "holdout", 0}, 1},
	    {{"h200", "launch", "fit", 0}, 1}, {{"", "", "", 0}, 3},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct collect c = {.n = 0};
		cr_assert_eq(llmsim_store_cases(s, &cases[i].f, collect_case, &c, &err), 0);
		cr_expect_eq(c.n, cases[i].n, "filter %zu: %d cases, expected %d", i, c.n,
			     cases[i].n);
	}
	llmsim_store_close(s);
}

/* The child begins a run, adds cases, and dies before committing. */
static void die_mid_run(const char *path, int how)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct llmsim_store *s;
		struct llmsim_err err;
		int64_t run, cid;
		if (llmsim_store_open(path, LLMSIM_STORE_CREATE, &s, &err))
			_exit(3);
		struct llmsim_device_info d = h200();
		d.sms = 114; /* a device only the dead run mentions */
		struct llmsim_run_info r = run_info("2026-11-29T14:00:00Z");
		if (llmsim_store_run_begin(s, &d, &r, &run, &err))
			_exit(4);
		for (int i = 0; i < 200; i++) {
			struct llmsim_case c = mkcase("gemm m=1 n=1 k=1", "gemm", "fit", 1e-5);
			if (llmsim_store_add_case(s, run, &c, &cid, &err) ||
			    llmsim_store_add_counter(s, cid, "x", i, &err))
				_exit(5);
		}
		if (how == 0)
			raise(SIGKILL);
		_exit(0);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (how == 0)
		cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %d", st);
	else
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

Test(calib_store, killed_writer_leaves_db_as_it_was)
{
	write_run(tmp("a.db"), "2026-11-29T12:00:00Z");
	export_to(tmp("a.db"), tmp("before.tsv"));
	die_mid_run(tmp("a.db"), 0); /* SIGKILL */
	die_mid_run(tmp("a.db"), 1); /* _exit without commit */
	cr_expect_eq(nruns(tmp("a.db")), 1);
	expect_db_holds_run(tmp("a.db"));
	export_to(tmp("a.db"), tmp("after.tsv"));
	cr_expect_str_eq(slurp(tmp("after.tsv")), slurp(tmp("before.tsv")));
	/* And the database is not left locked: a new run commits. */
	write_run(tmp("a.db"), "2026-11-29T15:00:00Z");
	cr_expect_eq(nruns(tmp("a.db")), 2);
}

Test(calib_store, killed_writer_on_new_file)
{
	die_mid_run(tmp("new.db"), 0);
	cr_expect_eq(nruns(tmp("new.db")), 0);
}

Test(calib_store, open_errors)
{
	struct llmsim_store *s = NULL;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_store_open(tmp("none.db"), LLMSIM_STORE_READ, &s, &err), LLMSIM_ENOENT);
	cr_expect(strstr(err.msg, "none.db: no such database") != NULL, "%s", err.msg);
	cr_expect_null(s);
	cr_expect_neq(access(tmp("none.db"), F_OK), 0, "reading must not create the file");

	FILE *f = fopen(tmp("junk.db"), "w");
	for (int i = 0; i < 200; i++)
		fputs("this is not an SQLite database, just text. ", f);
	fclose(f);
	cr_expect_eq(llmsim_store_open(tmp("junk.db"), LLMSIM_STORE_READ, &s, &err), LLMSIM_EDB);
	cr_expect(strstr(err.msg, "junk.db: not a calibration database") != NULL, "%s", err.msg);

	f = fopen(tmp("empty.db"), "w");
	fclose(f);
	cr_expect_eq(llmsim_store_open(tmp("empty.db"), LLMSIM_STORE_READ, &s, &err), LLMSIM_EDB);
	cr_expect(strstr(err.msg, "not a calibration database") != NULL, "%s", err.msg);

	/* A store from a newer llmsim. */
	sqlite3 *h;
	cr_assert_eq(sqlite3_open(tmp("v9.db"), &h), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h,
				  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
				  "INSERT INTO meta VALUES ('schema_version', '9');",
				  NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(h);
	cr_expect_eq(llmsim_store_open(tmp("v9.db"), LLMSIM_STORE_READ, &s, &err), LLMSIM_EDB);
	cr_expect(strstr(err.msg, "schema version 9 is newer") != NULL, "%s", err.msg);
	llmsim_store_close(NULL);
}

Test(calib_store, writer_contract_errors)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	int64_t run, run2, cid;
	cr_assert_eq(llmsim_store_open(tmp("w.db"), LLMSIM_STORE_CREATE, &s, &err), 0);
	struct llmsim_device_info d = h200();
	struct llmsim_run_info r = run_info("2026-11-29T12:00:00Z");
	struct llmsim_case c = mkcase("gemm m=1 n=1 k=1", "gemm", "train", 1e-5);
	cr_expect_eq(llmsim_store_add_case(s, 1, &c, &cid, &err), LLMSIM_EINVAL);
	cr_assert_eq(llmsim_store_run_begin(s, &d, &r, &run, &err), 0);
	cr_expect_eq(llmsim_store_run_begin(s, &d, &r, &run2, &err), LLMSIM_EINVAL);
	cr_expect_eq(llmsim_store_add_case(s, run, &c, &cid, &err), LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "split must be") != NULL, "%s", err.msg);
	snprintf(c.split, sizeof c.split, "fit");
	c.time_median_s = NAN;
	cr_expect_eq(llmsim_store_add_case(s, run, &c, &cid, &err), LLMSIM_EINVAL);
	c.time_median_s = 1e-5;
	cr_assert_eq(llmsim_store_add_case(s, run, &c, &cid, &err), 0);
	cr_expect_eq(llmsim_store_add_counter(s, cid + 100, "x", 1, &err), LLMSIM_EINVAL);
	llmsim_store_run_abort(s);
	cr_expect_eq(llmsim_store_add_counter(s, cid, "x", 1, &err), LLMSIM_EINVAL);
	llmsim_store_close(s);
	cr_expect_eq(nruns(tmp("w.db")), 0);
}
