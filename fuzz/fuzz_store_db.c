/*
 * fuzz_store_db.c - libFuzzer target for opening, reading and writing a
 * calibration store file (llmsim_store_open and what `calib show`,
 * `export`, `validate`, `fit` and `import` do with it), where the input
 * builds the file:
 *
 *  - An input that starts with SQLite's magic ("SQLite format 3") is the
 *    file image itself.
 *  - Any other input is SQL run against a valid store (a run of a device,
 *    four cases, a kernel, two counters, a step and its kernel, imported
 *    by llmsim_store_import): the schema changed as well as the rows
 *    (tables replaced by views, triggers, tables dropped or renamed,
 *    columns of other types, PRAGMA writable_schema edits), run on a copy
 *    in memory (sqlite3_deserialize) that is then written as the file.
 *    The SQL cannot reach outside it (no ATTACH) and is stopped after a
 *    few hundred thousand steps of SQLite's machine. SQL that leaves the
 *    template as it was ends the run (the template is known good).
 *
 * The promises checked, besides no crash, leak or hang (run with
 * -timeout=1):
 *  - a refused open leaves a message;
 *  - a read-only open and every read of it write nothing: the file's bytes
 *    are unchanged and no -wal, -shm or -journal is left beside it;
 *  - an export that succeeds imports into a fresh store;
 *  - a write (an import) that is let in leaves a file that opens again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fuzz_input.h"
#include "calib/fit.h"
#include "calib/store.h"

static const char dump_text[] =
	"llmsim-calib\tschema_version\t3\n"
	"columns\tdevices\tid\tname\thw_name\tuuid\tsms\tdevice_count\thbm_bytes\tl2_bytes\t"
	"sm_clock_max_hz\tmem_clock_hz\tdriver\tcuda_runtime\tcupti\tcublas\tnccl\n"
	"devices\t1\tNVIDIA H200\th200\tGPU-5c0ffee0\t132\t1\t150754820096\t62914560\t1980000000\t"
	"3201000000\t580.159.04\t13.0\t130001\t13.0.0\t2.27.3\n"
	"columns\truns\tid\tdevice_id\tstarted_at\thost\ttool\tquick\tnotes\tstatus\toperand_data\n"
	"runs\t1\t1\t2026-11-29T10:00:00Z\tfuzz\tfuzz_store_db\t1\tfixture\tcomplete\tnormal\n"
	"columns\tcases\tid\trun_id\top_spec\top_class\timpl\tsplit\tflops_declared\tbytes_declared\t"
	"reps\ttime_median_s\ttime_min_s\ttime_p10_s\ttime_p90_s\tsm_clock_hz\tcheck_rel_err\tload_s\n"
	"cases\t1\t1\tgemm m=4096 n=4096 k=4096\tgemm\tcublas\tfit\t137438953472\t100663296\t50\t"
	"0.00019\t0.000185\t0.000187\t0.000195\t1755000000\t0.0001\t0\n"
	"cases\t2\t1\tgemm m=2048 n=2048 k=2048\tgemm\tcublas\tholdout\t17179869184\t25165824\t100\t"
	"3e-05\t2.9e-05\t2.95e-05\t3.1e-05\t1755000000\t0.0001\t0\n"
	"cases\t3\t1\tew kind=add tokens=65536 hidden=8192\telementwise\tllmsim_ew\tfit\t536870912\t"
	"3221225472\t50\t0.00078\t0.00077\t0.000775\t0.00079\t1755000000\t0\t0\n"
	"cases\t4\t1\tlaunch empty\tlaunch\tllmsim_empty\tfit\t0\t0\t1000\t2.2e-06\t2e-06\t2.1e-06\t"
	"2.4e-06\t\\N\t-1\t0\n"
	"columns\tkernels\tid\tcase_id\tseq\tname\tgrid_x\tgrid_y\tgrid_z\tblock_x\tblock_y\tblock_z\t"
	"regs_per_thread\tstatic_smem_bytes\tdynamic_smem_bytes\tduration_median_s\tlaunches_per_rep\n"
	"kernels\t1\t1\t0\tnvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNN\t16\t32\t1\t384\t1\t1\t168\t"
	"0\t213056\t0.00019\t1\n"
	"columns\tcounters\tcase_id\tname\tvalue\n"
	"counters\t3\tdram__bytes_read.sum\t2147483648\n"
	"counters\t3\tdram__bytes_write.sum\t1073741824\n"
	"columns\tsteps\tid\trun_id\tprogram\tmodel_spec\tphase\tbatch\ttokens\tcontext\trecompute\t"
	"graph\ttime_median_s\ttime_p10_s\ttime_p90_s\tkernel_time_s\tsm_clock_hz\tpower_w\t"
	"mem_peak_allocated_bytes\tmem_peak_reserved_bytes\tmem_device_total_bytes\treps\tnotes\n"
	"steps\t1\t1\tlean_graph\tllama-3.2-1b\tdecode\t1\t1\t512\tnone\t1\t0.001\t0.00095\t0.0011\t"
	"0.0009\t1755000000\t500\t1000000000\t2000000000\t150754820096\t10\tfixture\n"
	"columns\tstep_kernels\tstep_id\tseq\top\tname\tcalls\ttime_s\n"
	"step_kernels\t1\t0\tgemm\tnvjet_sm90_tst\t16\t0.0005\n";

static char path[256];
static char *image; /* the template file's bytes */
static size_t nimage;

/* The whole of p, malloc'd (NULL and 0 for no file). */
static char *read_file(const char *p, size_t *size)
{
	*size = 0;
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, k;
	char *b = malloc(cap);
	while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap && !(b = realloc(b, cap *= 2)))
			abort();
	}
	fclose(f);
	if (!b)
		abort();
	*size = n;
	return b;
}

static void remove_all(void)
{
	fuzz_remove_db(path);
}

/* Whether any -journal, -wal or -shm is beside the file. */
static int litter(void)
{
	struct stat st;
	for (int i = 0; i < 3; i++) {
		char p[300];
		snprintf(p, sizeof p, "%s%s", path, fuzz_sqlite_tails[i]);
		if (!stat(p, &st))
			return 1;
	}
	return 0;
}

static void import_text(struct llmsim_store *s, const char *text, size_t len)
{
	struct llmsim_err err = {0};
	FILE *f = fmemopen((void *)text, len, "r");
	if (!f || llmsim_store_import(s, f, "fuzz.tsv", &err))
		abort();
	fclose(f);
}

static void read_all(struct llmsim_store *s);

/* The template: the dump imported into a file, as llmsim writes stores. */
static void make_template(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(path, sizeof path, "%s/llmsim-fuzz-store-db-%d.db", dir, (int)getpid());
	atexit(remove_all);
	remove_all();
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	if (llmsim_store_open(path, LLMSIM_STORE_CREATE, &s, &err))
		abort();
	import_text(s, dump_text, sizeof dump_text - 1);
	llmsim_store_close(s);
	if (litter() || !(image = read_file(path, &nimage)) || !nimage)
		abort(); /* a store at rest has nothing beside it */
	if (llmsim_store_open(path, LLMSIM_STORE_READ, &s, &err))
		abort();
	read_all(s); /* keeps the template's export */
	llmsim_store_close(s);
}

static int stop_after(void *ctx)
{
	return ++*(int *)ctx > 300; /* x 1000 steps */
}

/* Run sql against a copy of the template held in memory (errors are the
 * input's business) and write the result to the file; 0, or 1 when the
 * SQL left the template as it was (no file is written: the template is
 * known good, and most inputs are SQL that does not parse). */
static int run_sql(const char *sql)
{
	static sqlite3 *db;
	if (!db && sqlite3_open(":memory:", &db) != SQLITE_OK)
		abort();
	unsigned char *copy = sqlite3_malloc64(nimage);
	if (!copy)
		abort();
	memcpy(copy, image, nimage);
	if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)nimage, (sqlite3_int64)nimage,
				SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) !=
	    SQLITE_OK)
		abort();
	int steps = 0;
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0); /* no other file, no VACUUM INTO */
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_progress_handler(db, 1000, stop_after, &steps);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* a transaction left open */
	sqlite3_int64 n = 0;
	unsigned char *bytes = sqlite3_serialize(db, "main", &n, 0);
	if (!bytes)
		return 1; /* the SQL made the database something else */
	int same = (size_t)n == nimage && !memcmp(bytes, image, nimage);
	if (!same)
		fuzz_write_file(path, bytes, (size_t)n);
	sqlite3_free(bytes);
	return same;
}

static int count_row(const void *row, void *ctx)
{
	(void)row;
	++*(long *)ctx;
	return 0;
}

static int on_run(const struct llmsim_store_run_row *r, void *ctx)
{
	return count_row(r, ctx);
}

static int on_case(const struct llmsim_store_case_row *r, void *ctx)
{
	return count_row(r, ctx);
}

static int on_step(const struct llmsim_store_step_row *r, void *ctx)
{
	return count_row(r, ctx);
}

/* What the read-only verbs do: list runs, cases and steps, load the fit
 * set, export. The export, when it succeeds, must import into a fresh
 * store. */
static void read_all(struct llmsim_store *s)
{
	static char *tpl_export; /* the template's export: known to import */
	static size_t ntpl_export;
	struct llmsim_err err = {0};
	long n = 0;
	llmsim_store_runs(s, on_run, &n, &err);
	llmsim_store_cases(s, NULL, on_case, &n, &err);
	llmsim_store_steps(s, NULL, on_step, &n, &err);
	struct llmsim_calib_set set;
	memset(&set, 0, sizeof set);
	if (!llmsim_calib_set_load(s, "h200", &set, &err))
		llmsim_calib_set_release(&set);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	int rc = llmsim_store_export(s, f, &err);
	fclose(f);
	if (!tpl_export) {
		tpl_export = buf; /* the first store read is the template's */
		ntpl_export = len;
		return;
	}
	if (!rc && !(len == ntpl_export && !memcmp(buf, tpl_export, len))) {
		struct llmsim_store *fresh;
		if (llmsim_store_open(":memory:", LLMSIM_STORE_CREATE, &fresh, &err))
			abort();
		f = fmemopen(buf, len, "r");
		if (!f)
			abort();
		/* what was exported reads back, or is refused by import's own
		 * rules in one located line: a crafted store can hold what no
		 * writer of llmsim's would (a fit case of a run whose operands were
		 * not normal), which export copies as it is and import refuses */
		struct llmsim_err ierr = {0};
		if (llmsim_store_import(fresh, f, "export.tsv", &ierr) &&
		    (!ierr.msg[0] || !strstr(ierr.msg, "export.tsv:")))
			abort();
		fclose(f);
		llmsim_store_close(fresh);
	} else if (rc && !err.msg[0]) {
		abort();
	}
	free(buf);
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
		char *sql = malloc(size + 1);
		if (!sql)
			abort();
		memcpy(sql, data, size);
		sql[size] = 0;
		int same = run_sql(sql);
		free(sql);
		if (same)
			return 0;
	}
	/* the SQL may have left the file in WAL mode: read-only readers must
	 * cope; what is beside the file now is the input's, not llmsim's */
	int had_litter = litter();
	size_t n0, n1;
	char *before = read_file(path, &n0);

	struct llmsim_store *s;
	struct llmsim_err err = {0};
	int rc = llmsim_store_open(path, LLMSIM_STORE_READ, &s, &err);
	if (rc && !err.msg[0])
		abort();
	if (!rc) {
		read_all(s);
		llmsim_store_close(s);
	}
	char *after = read_file(path, &n1);
	if (n0 != n1 || (n0 && memcmp(before, after, n0)) || (!had_litter && litter()))
		abort(); /* a reader wrote */
	free(before);
	free(after);
	if (rc)
		return 0;

	/* a writer: let in, it imports a run, and the file opens again */
	memset(&err, 0, sizeof err);
	if (llmsim_store_open(path, LLMSIM_STORE_WRITE, &s, &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	FILE *f = fmemopen((void *)dump_text, sizeof dump_text - 1, "r");
	if (!f)
		abort();
	rc = llmsim_store_import(s, f, "again.tsv", &err);
	fclose(f);
	if (rc && !err.msg[0])
		abort();
	llmsim_store_close(s);
	memset(&err, 0, sizeof err);
	if (llmsim_store_open(path, LLMSIM_STORE_READ, &s, &err))
		abort(); /* a write left the store unreadable */
	llmsim_store_close(s);
	return 0;
}
