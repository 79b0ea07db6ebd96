/*
 * test_trace_cli.c - `llmsim trace ...` on the built binary: one-line
 * errors for corrupt, truncated and foreign files (exit 1), usage errors
 * (exit 2), capture refusing cleanly without a GPU or library, import of
 * the text form, and the JSON of show/compare/replay on the fixture.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib/trace/trace.h"
#include "support.h"

static char dir[64];
static char out[1 << 20], err[8192];
static char fixture[512];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/llmsim-tracecli-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	test_data(fixture, sizeof fixture, "trace/llama_tiny.trace");
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(trace_cli, .init = setup, .fini = teardown);

static int trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int trace(const char *fmt, ...)
{
	char args[4096] = "trace ";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args + 6, sizeof args - 6, fmt, ap);
	va_end(ap);
	return run_llmsim(args, out, sizeof out, err, sizeof err);
}

/* A database with one trace run, written through the library. */
static void make_db(const char *path)
{
	struct llmsim_trace t;
	struct llmsim_err e = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(fixture, 0, &t, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_trace_db_write(path, &t, NULL, &e), 0, "%s", e.msg);
	llmsim_trace_release(&t);
}

Test(trace_cli, truncated_database_is_one_line)
{
	char db[128];
	snprintf(db, sizeof db, "%s/t.db", dir);
	make_db(db);
	struct stat st;
	cr_assert_eq(stat(db, &st), 0);
	cr_assert_eq(truncate(db, st.st_size / 2), 0);
	cr_expect_eq(trace("show --db %s", db), 1);
	cr_expect_eq(count_lines(err), 1, "stderr: %s", err);
	cr_expect(strstr(err, "llmsim trace show: ") == err, "stderr: %s", err);
	cr_expect(strstr(err, "corrupt") || strstr(err, "malformed") || strstr(err, "truncated"),
		  "stderr: %s", err);
	cr_expect_eq(out[0], 0);
}

Test(trace_cli, corrupt_database_is_one_line)
{
	char db[128];
	snprintf(db, sizeof db, "%s/c.db", dir);
	make_db(db);
	/* overwrite the second page (a table's b-tree page) with garbage */
	FILE *f = fopen(db, "r+b");
	cr_assert_not_null(f);
	fseek(f, 4096, SEEK_SET);
	for (int i = 0; i < 4096; i++)
		fputc(0xA5, f);
	fclose(f);
	cr_expect_eq(trace("compare --db %s --model 8b", db), 1);
	cr_expect_eq(count_lines(err), 1, "stderr: %s", err);
	cr_expect(strstr(err, "llmsim trace compare: ") == err, "stderr: %s", err);
}

Test(trace_cli, foreign_and_missing_files)
{
	char p[128];
	snprintf(p, sizeof p, "%s/x.txt", dir);
	FILE *f = fopen(p, "w");
	fputs("hello\n", f);
	fclose(f);
	cr_expect_eq(trace("show --db %s", p), 1);
	cr_expect_eq(count_lines(err), 1);
	cr_expect(strstr(err, "not a trace"), "stderr: %s", err);
	cr_expect_eq(trace("show --db %s/none.db", dir), 1);
	cr_expect(strcasestr(err, "no such file"), "stderr: %s", err);
}

Test(trace_cli, truncated_text_trace)
{
	/* the fixture without its last ("end") line */
	char p[128], cmd[1024];
	snprintf(p, sizeof p, "%s/cut.trace", dir);
	snprintf(cmd, sizeof cmd, "head -n -1 '%s' > '%s'", fixture, p);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(trace("show --db %s", p), 1);
	cr_expect_eq(count_lines(err), 1);
	cr_expect(strstr(err, "truncated"), "stderr: %s", err);
	/* compressed: whole, it reads; cut short, gzip says so */
	snprintf(p, sizeof p, "%s/t.trace.gz", dir);
	snprintf(cmd, sizeof cmd, "gzip -c '%s' > '%s'", fixture, p);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(trace("show --db %s", p), 0, "stderr: %s", err);
	snprintf(cmd, sizeof cmd, "gzip -c '%s' | head -c 400 > '%s'", fixture, p);
	cr_assert_eq(system(cmd), 0);
	cr_expect_eq(trace("show --db %s", p), 1);
	cr_expect_eq(count_lines(err), 1);
	cr_expect(strstr(err, "truncated"), "stderr: %s", err);
}

/* The project's own committed trace is gzip text: import reads it through
 * zlib (it once read the compressed bytes as text: "NUL byte in line"),
 * and the database then holds the same run as the .gz does. */
Test(trace_cli, import_of_the_shipped_gzip_trace)
{
	char db[128], gz[1024];
	snprintf(db, sizeof db, "%s/llama.db", dir);
	snprintf(gz, sizeof gz, "%s/calib/data/trace_llama.txt.gz", LLMSIM_SOURCE_DIR);
	cr_assert_eq(trace("import --db %s --in %s", db, gz), 0, "stderr: %s", err);
	cr_expect(strstr(err, "1 run added"), "stderr: %s", err);
	struct llmsim_trace a, b;
	struct llmsim_err e = {0};
	llmsim_trace_init(&a);
	llmsim_trace_init(&b);
	cr_assert_eq(llmsim_trace_load(gz, 0, &a, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_trace_load(db, 0, &b, &e), 0, "%s", e.msg);
	cr_expect_eq(a.nkernels, b.nkernels);
	cr_expect_gt(a.nkernels, 0);
	llmsim_trace_release(&a);
	llmsim_trace_release(&b);
}

Test(trace_cli, usage_errors)
{
	cr_expect_eq(trace("compare --model 8b"), 2);
	cr_expect_eq(trace("replay --db %s", fixture), 2);
	cr_expect_eq(trace("show --db %s --bogus", fixture), 2);
	cr_expect_eq(trace("frobnicate"), 2);
	cr_expect_eq(trace("compare --db %s --model no-such-model", fixture), 1);
	cr_expect_eq(count_lines(err), 1);
}

/* Without a GPU (CI, this machine) or without the library, capture says
 * which, exits 1, and writes nothing. */
Test(trace_cli, capture_without_gpu_or_library)
{
	if (!access("/proc/driver/nvidia/version", F_OK))
		cr_skip_test("this machine has an NVIDIA driver");
	char db[128];
	snprintf(db, sizeof db, "%s/cap.db", dir);
	cr_expect_eq(trace("capture --db %s -- true", db), 1);
	cr_expect_eq(count_lines(err), 1);
	cr_expect(strstr(err, "no NVIDIA GPU") || strstr(err, "was not built"), "stderr: %s", err);
	cr_expect_neq(access(db, F_OK), 0);
	cr_expect_eq(trace("capture --db %s", db), 2); /* no command */
}

Test(trace_cli, import_then_show_json)
{
	char db[128];
	snprintf(db, sizeof db, "%s/i.db", dir);
	cr_expect_eq(trace("import --db %s --in %s", db, fixture), 0, "stderr: %s", err);
	cr_expect_eq(trace("show --db %s --json", db), 0, "stderr: %s", err);
	cr_expect(strstr(out, "\"classes\""));
	cr_expect(strstr(out, "\"gemm\""));
	cr_expect(strstr(out, "\"kernels\": 50") || strstr(out, "\"kernels\":50"), "%s", out);
	/* a second import adds a second run */
	cr_expect_eq(trace("import --db %s --in %s", db, fixture), 0);
	cr_expect_eq(trace("show --db %s --run 2", db), 0);
	cr_expect_eq(trace("show --db %s --run 3", db), 1);
}

Test(trace_cli, compare_and_replay_json)
{
	cr_assert_eq(trace("compare --db %s --model 8b --json", fixture), 0, "stderr: %s", err);
	cr_expect(strstr(out, "\"kernels\": ["), "%s", out);
	cr_expect(strstr(out, "\"classes\": {"));
	cr_expect(strstr(out, "\"total\": {"));
	cr_expect(strstr(out, "\"measured_s\""));
	cr_expect(strstr(out, "\"abs_pct_err\""));
	cr_expect(strstr(out, "gemm m=512 n=6144 k=4096"));
	cr_assert_eq(trace("replay --db %s --model 8b --gpu b200 --json", fixture), 0, "stderr: %s",
		     err);
	cr_expect(strstr(out, "\"replay_s\""));
	cr_expect(strstr(out, "\"target\": \"b200\""), "%s", out);
	cr_assert_eq(trace("compare --db %s", fixture), 0);
	cr_expect(strstr(out, "no --model"));
}

/* A trace compared with another GPU's model than the traced one says so,
 * naming both, and what of it transfers; a replay says what it keeps. */
Test(trace_cli, other_gpu_is_named)
{
	cr_assert_eq(trace("compare --db %s --model 8b", fixture), 0, "stderr: %s", err);
	cr_expect(!strstr(out, "devices differ"), "%s", out);
	cr_assert_eq(trace("compare --db %s --model 8b --gpu h100", fixture), 0, "stderr: %s", err);
	cr_expect(strstr(out, "devices differ: the trace ran on NVIDIA H200, the GPU model is h100 "
			      "(NVIDIA H100 SXM5 80GB)"), "%s", out);
	cr_assert_eq(trace("compare --db %s --model 8b --gpu h100 --json", fixture), 0, "%s", err);
	cr_expect(strstr(out, "\"gpu_is_traced_device\": false") && strstr(out, "\"devices_note\""),
		  "%s", out);
	cr_assert_eq(trace("replay --db %s --model 8b --gpu b200", fixture), 0, "stderr: %s", err);
	cr_expect(strstr(out, "replayed from NVIDIA H200 to b200"), "%s", out);
}

/* A program may name the model its ranges refer to: an NVTX range
 * "model NAME" stands in for --model. */
Test(trace_cli, model_declared_in_a_range)
{
	char p[128], cmd[1024];
	snprintf(p, sizeof p, "%s/declared.trace", dir);
	snprintf(cmd, sizeof cmd,
		 "sed -e 's/^end\t50\t2\t34$/range\t100\t0\tmodel llama-3.1-8b\t1\t2\t1\t0\\n"
		 "end\t50\t2\t35/' '%s' > '%s'", fixture, p);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(trace("compare --db %s --json", p), 0, "stderr: %s", err);
	cr_expect(strstr(out, "\"model\": \"llama-3.1-8b\""), "%s", out);
	cr_expect(strstr(out, "gemm m=512 n=6144 k=4096"));
}

Test(trace_cli, export_round_trip)
{
	char a[128], db[128];
	snprintf(a, sizeof a, "%s/a.trace", dir);
	snprintf(db, sizeof db, "%s/e.db", dir);
	cr_assert_eq(trace("import --db %s --in %s", db, fixture), 0);
	cr_assert_eq(trace("export --db %s --out %s", db, a), 0, "stderr: %s", err);
	cr_assert_eq(trace("show --db %s --json", a), 0, "stderr: %s", err);
	cr_expect(strstr(out, "\"kernels\": 50") || strstr(out, "\"kernels\":50"));
}
