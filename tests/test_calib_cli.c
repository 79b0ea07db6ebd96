/*
 * test_calib_cli.c - `llmsim calib ...` end to end on the built binary:
 * one-line errors with the right exit status, export/import of the
 * hand-written dump tests/data/calib/small_h200.tsv (its times are
 * invented, not measurements), show, validate and fit.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw/gpu.h"
#include "support.h"

static char dir[64];
static char out[65536], err[8192];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/llmsim-calibcli-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(calib_cli, .init = setup, .fini = teardown);

/* Run `llmsim calib ARGS` (printf-style); returns the exit status. */
static int calib(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int calib(const char *fmt, ...)
{
	char args[4096] = "calib ";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args + 6, sizeof args - 6, fmt, ap);
	va_end(ap);
	return run_llmsim(args, out, sizeof out, err, sizeof err);
}

/* stderr is exactly one line starting with prefix. */
static void expect_one_line(const char *prefix)
{
	cr_expect_eq(count_lines(err), 1, "stderr: %s", err);
	cr_expect(!strncmp(err, prefix, strlen(prefix)), "stderr '%s' does not start '%s'", err,
		  prefix);
}

static const char *fixture(void)
{
	static char buf[512];
	return test_data(buf, sizeof buf, "calib/small_h200.tsv");
}

Test(calib_cli, usage_errors)
{
	/* fit, validate, show and export read the shipped calibration
	 * without --db (shipped_calibration_without_db); import writes one */
	cr_expect_eq(calib("import --in x"), 2);
	expect_one_line("llmsim calib ");
	cr_expect(strstr(err, "--db FILE is required") != NULL, "import: %s", err);
	cr_expect_eq(calib("frobnicate"), 2);
	expect_one_line("llmsim calib: unknown verb 'frobnicate'");
	cr_expect_eq(calib("validate --db x.db --bogus"), 2);
	expect_one_line("llmsim calib validate: unknown option '--bogus'");
	cr_expect_eq(calib("fit --db x.db"), 2);
	expect_one_line("llmsim calib fit: --out PROFILE.yaml is required");
}

Test(calib_cli, missing_and_corrupt_database)
{
	cr_expect_eq(calib("validate --db %s/none.db", dir), 1);
	char want[256];
	snprintf(want, sizeof want, "llmsim calib validate: %s/none.db: no such database\n", dir);
	cr_expect_str_eq(err, want);
	cr_expect_eq(out[0], 0, "nothing on stdout");
	char path[128];
	snprintf(path, sizeof path, "%s/none.db", dir);
	cr_expect_neq(access(path, F_OK), 0, "validate must not create the database");

	snprintf(path, sizeof path, "%s/junk.db", dir);
	FILE *f = fopen(path, "w");
	for (int i = 0; i < 100; i++)
		fputs("definitely not SQLite ", f);
	fclose(f);
	const char *verbs[] = {"validate", "show", "export", "fit --out x.yaml"};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		cr_expect_eq(calib("%s --db %s", verbs[i], path), 1, "%s", verbs[i]);
		expect_one_line("llmsim calib ");
		cr_expect(strstr(err, "junk.db: not a calibration database") != NULL, "%s: %s",
			  verbs[i], err);
	}
}

Test(calib_cli, import_export_round_trip_and_show)
{
	cr_assert_eq(calib("import --db %s/a.db --in %s", dir, fixture()), 0, "%s", err);
	cr_expect_eq(err[0], 0);
	/* Exported again, the dump is the fixture byte for byte. */
	cr_assert_eq(calib("export --db %s/a.db --out %s/a.tsv", dir, dir), 0, "%s", err);
	cr_assert_eq(calib("export --db %s/a.db", dir), 0);
	FILE *f = fopen(fixture(), "r");
	static char want[65536];
	size_t n = fread(want, 1, sizeof want - 1, f);
	want[n] = 0;
	fclose(f);
	cr_expect_str_eq(out, want);

	cr_assert_eq(calib("show --db %s/a.db --json", dir), 0, "%s", err);
	cr_expect(strstr(out, "\"hw_name\": \"h200\"") != NULL, "%s", out);
	cr_expect(strstr(out, "\"driver\": \"580.159.04\"") != NULL, "%s", out);
	cr_expect(strstr(out, "\"cases\": 6") != NULL, "%s", out);
	/* gemm: cases 1, 2 fit and 3 held out in the fixture */
	cr_expect(strstr(out, "\"class\": \"gemm\",\n      \"fit\": 2,\n      \"holdout\": 1") !=
		      NULL,
		  "%s", out);
	cr_assert_eq(calib("show --db %s/a.db", dir), 0, "%s", err);
	cr_expect(strstr(out, "NVIDIA H200 (h200) x1") != NULL, "%s", out);

	/* Importing the same run again is refused, and changes nothing. */
	cr_expect_eq(calib("import --db %s/a.db --in %s", dir, fixture()), 1);
	expect_one_line("llmsim calib import: ");
	cr_expect(strstr(err, "small_h200.tsv:5: ") && strstr(err, "already in the database"), "%s",
		  err);
}

Test(calib_cli, import_refuses_bad_file)
{
	char bad[128];
	snprintf(bad, sizeof bad, "%s/bad.tsv", dir);
	FILE *f = fopen(bad, "w");
	fputs("llmsim-calib\tschema_version\t3\n"
	      "columns\tdevices\tid\tname\n",
	      f);
	fclose(f);
	cr_expect_eq(calib("import --db %s/new.db --in %s", dir, bad), 1);
	char want[512];
	snprintf(want, sizeof want,
		 "llmsim calib import: %s:2: table 'devices' lacks column 'hw_name'\n", bad);
	cr_expect_str_eq(err, want);
	/* a dump of an older schema does not say what its operands held */
	f = fopen(bad, "w");
	fputs("llmsim-calib\tschema_version\t2\n", f);
	fclose(f);
	cr_expect_eq(calib("import --db %s/new.db --in %s", dir, bad), 1);
	snprintf(want, sizeof want,
		 "llmsim calib import: %s:1: a schema-2 dump: its runs do not say what their "
		 "operands held (schema 3 records it; the grid-filled cases of earlier calibrations "
		 "are retired from fits): re-measure, or import with --legacy-operand-data DATA\n",
		 bad);
	cr_expect_str_eq(err, want);
	char path[128];
	snprintf(path, sizeof path, "%s/new.db", dir);
	cr_expect_neq(access(path, F_OK), 0, "a failed import leaves no new database");
	cr_expect_eq(calib("import --db %s/new.db --in %s/absent.tsv", dir, dir), 1);
	expect_one_line("llmsim calib import: ");
}

Test(calib_cli, validate_and_fit)
{
	cr_assert_eq(calib("import --db %s/a.db --in %s", dir, fixture()), 0, "%s", err);
	cr_assert_eq(calib("validate --db %s/a.db --all --json", dir), 0, "%s", err);
	cr_expect(strstr(out, "\"split\": \"all\"") != NULL, "%s", out);
	cr_expect(strstr(out, "\"name\": \"gemm\",\n      \"n\": 3") != NULL, "%s", out);
	cr_expect(strstr(out, "\"median_abs_pct_err\"") != NULL, "%s", out);
	cr_expect(strstr(out, "\"worst\"") != NULL, "%s", out);
	cr_expect(strstr(out, "\"hbm_bytes_check\": {\n    \"n\": 1") != NULL, "%s", out);
	cr_assert_eq(calib("validate --db %s/a.db", dir), 0, "%s", err);
	cr_expect(strstr(out, "targets per class: median |err| <= 5%, p90 |err| <= 15%, |median bias| <= 3%") != NULL,
		  "%s", out);

	/* fit writes a profile the hardware loader applies */
	cr_assert_eq(calib("fit --db %s/a.db --out %s/h200.yaml", dir, dir), 0, "%s", err);
	cr_expect(strstr(out, "gemm_tensor_fraction") != NULL, "%s", out);
	char prof[128];
	snprintf(prof, sizeof prof, "%s/h200.yaml", dir);
	struct llmsim_gpu g;
	struct llmsim_err e = {0};
	char hw[512];
	snprintf(hw, sizeof hw, "%s/hw/h200-sxm-141gb.yaml", LLMSIM_SOURCE_DIR);
	cr_assert_eq(llmsim_gpu_load_file(hw, &g, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_apply_profile(&g, prof, &e), 0, "%s", e.msg);
	cr_expect_not_null(llmsim_gpu_err_class(&g, "gemm"));
	/* validate with that profile names it */
	cr_assert_eq(calib("validate --db %s/a.db --profile %s --json", dir, prof), 0, "%s", err);
	cr_expect(strstr(out, prof) != NULL, "%s", out);

	/* no cases for another GPU: one line, no profile written */
	cr_expect_eq(calib("fit --db %s/a.db --gpu b200 --out %s/b200.yaml", dir, dir), 1);
	expect_one_line("llmsim calib fit: ");
	cr_expect(strstr(err, "no calibration cases for GPU 'b200'") != NULL, "%s", err);
	snprintf(prof, sizeof prof, "%s/b200.yaml", dir);
	cr_expect_neq(access(prof, F_OK), 0);
	/* an unwritable output: one line, nothing left behind */
	cr_expect_eq(calib("fit --db %s/a.db --out %s/no/such/dir/h200.yaml", dir, dir), 1);
	expect_one_line("llmsim calib fit: ");
}

/* The fixture's cases again as another GPU's (its device line renamed):
 * a store of two GPU kinds. fit without --gpu names both and writes
 * nothing; validate without --gpu reports each in turn; with --gpu one. */
Test(calib_cli, two_gpu_kinds)
{
	cr_assert_eq(calib("import --db %s/two.db --in %s", dir, fixture()), 0, "%s", err);
	char path[128], line[8192];
	snprintf(path, sizeof path, "%s/h100.tsv", dir);
	FILE *in = fopen(fixture(), "r"), *o = fopen(path, "w");
	cr_assert(in && o);
	while (fgets(line, sizeof line, in)) {
		char *host = strstr(line, "\tcalib-host\t");
		static const char dev[] = "devices\t1\tNVIDIA H200\th200\t";
		if (!strncmp(line, dev, sizeof dev - 1))
			fprintf(o, "devices\t1\tNVIDIA H100 80GB HBM3\th100\t%s", line + sizeof dev - 1);
		else if (!strncmp(line, "runs\t", 5) && host) /* another run: another host */
			fprintf(o, "%.*s\tcalib-host-2\t%s", (int)(host - line), line, host + 12);
		else
			fputs(line, o);
	}
	fclose(in);
	fclose(o);
	cr_assert_eq(calib("import --db %s/two.db --in %s", dir, path), 0, "%s", err);
	cr_expect_eq(calib("fit --db %s/two.db --out %s/p.yaml", dir, dir), 1);
	expect_one_line("llmsim calib fit: ");
	cr_expect(strstr(err, "2 GPU kinds, 'h200' and 'h100': name one with --gpu"), "%s", err);
	snprintf(path, sizeof path, "%s/p.yaml", dir);
	cr_expect_neq(access(path, F_OK), 0);
	cr_assert_eq(calib("validate --db %s/two.db --all", dir), 0, "%s", err);
	cr_expect(strstr(out, "h200: all cases of") && strstr(out, "h100: all cases of"), "%s", out);
	cr_assert_eq(calib("validate --db %s/two.db --all --json", dir), 0, "%s", err);
	cr_expect(strstr(out, "\"gpus\": [") && strstr(out, "\"gpu\": \"h100\""), "%s", out);
	cr_assert_eq(calib("validate --db %s/two.db --all --gpu h100", dir), 0, "%s", err);
	cr_expect(!strstr(out, "h200: all cases of") && strstr(out, "h100: all cases of") &&
		  strstr(out, "calibration basis, h200"), "%s", out);
	/* the transfer table: the H100 predicted from the H200's calibration */
	cr_assert_eq(calib("validate --db %s/two.db --gpu h100 --uncalibrated --transfer-out "
			   "%s/t.yaml", dir, dir), 0, "%s", err);
	snprintf(path, sizeof path, "%s/t.yaml", dir);
	FILE *t = fopen(path, "r");
	cr_assert_not_null(t);
	size_t n = fread(line, 1, sizeof line - 1, t);
	fclose(t);
	line[n] = 0;
	cr_expect(strstr(line, "basis: h200\nmeasured_on: h100\nrelation: new_memory\n") &&
		  strstr(line, "expected_error_pct:"), "%s", line);
	cr_expect_eq(calib("validate --db %s/two.db --gpu h100 --transfer-out %s/t.yaml", dir, dir),
		     2);
	expect_one_line("llmsim calib validate: --transfer-out FILE goes with --uncalibrated");

	/* a data folder holding that table: the GPUs priced from the H200
	 * print its errors, the H100 (the same die) as measured, the B200
	 * widened in quadrature by its file's 6.2% */
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/data' && cp -r '%s/hw' '%s/data/' && mkdir -p "
		 "'%s/data/hw/transfer' && cp '%s/t.yaml' '%s/data/hw/transfer/h200.yaml'", dir,
		 LLMSIM_SOURCE_DIR, dir, dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	char data[128], *old = getenv("LLMSIM_DATA_DIR");
	char saved[512];
	snprintf(saved, sizeof saved, "%s", old ? old : "");
	snprintf(data, sizeof data, "%s/data", dir);
	setenv("LLMSIM_DATA_DIR", data, 1);
	double bar[2];
	const char *gpus[] = {"h100", "b200"};
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof cmd, "op gemm --m 4096 --n 4096 --k 4096 --gpu %s --json", gpus[i]);
		cr_assert_eq(run_llmsim(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
		const char *v = strstr(out, "\"time_err_pct\": ");
		cr_assert_not_null(v, "%s", out);
		bar[i] = atof(v + 16);
	}
	snprintf(cmd, sizeof cmd, "op gemm --m 4096 --n 4096 --k 4096 --gpu b200");
	cr_assert_eq(run_llmsim(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
	if (old)
		setenv("LLMSIM_DATA_DIR", saved, 1);
	else
		unsetenv("LLMSIM_DATA_DIR");
	cr_expect(strstr(out, "uncalibrated: p80 of 1 held-out gemm kernels of the h100"), "%s", out);
	expect_close(bar[1], sqrt(bar[0] * bar[0] + 6.2 * 6.2), 1e-9);
}

Test(calib_cli, run_without_runner)
{
	char runner[512];
	snprintf(runner, sizeof runner, "%s/calib/runner/llmsim-calib-runner", LLMSIM_BUILD_DIR);
	if (!access(runner, X_OK))
		cr_skip_test("the GPU runner is built here (%s): not running it from a test",
			     runner);
	/* PATH emptied so that an installed runner is not found either */
	char args[256];
	snprintf(args, sizeof args, "calib run --db %s/r.db", dir);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s/cli/llmsim %s 2>&1 >/dev/null", LLMSIM_BUILD_DIR, args);
	char full[1200];
	snprintf(full, sizeof full, "PATH=/nonexistent %s", cmd);
	FILE *p = popen(full, "r");
	cr_assert_not_null(p);
	size_t n = fread(err, 1, sizeof err - 1, p);
	err[n] = 0;
	int st = pclose(p);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
	cr_expect_str_eq(err, "llmsim calib run: the GPU runner was not built (no CUDA toolkit at"
			      " build time)\n");
}

/* Case rows of the shipped dumps, counted from the text itself: every
 * "cases<TAB>" record line of each file that starts with the dump header,
 * in calib/data and one folder below. */
static int shipped_case_rows(void)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "find %s/calib/data -maxdepth 2 -name '*.tsv' -not -path '*/retired/*' |"
		 " xargs awk -F '\\t' 'FNR == 1 { dump = $1 == \"llmsim-calib\" }"
		 " dump && $1 == \"cases\" { n++ } END { print n }'",
		 LLMSIM_SOURCE_DIR);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	int n = 0;
	cr_assert_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

/* Without --db, show, validate and export read the calibration llmsim
 * ships (every dump of calib/data), for the GPU asked for. */
Test(calib_cli, shipped_calibration_without_db)
{
	int rows = shipped_case_rows();
	cr_assert_gt(rows, 100, "the shipped H200 dumps hold hundreds of cases");
	cr_assert_eq(calib("show --json"), 0, "%s", err);
	cr_expect(json_parses(out), "%s", out);
	/* the fit + holdout + probe counts of every (gpu, class) add up to
	 * the rows */
	int sum = 0;
	for (const char *p = out; (p = strstr(p, "\"fit\": ")); p++) {
		int fit = atoi(p + 7), hold = 0, probe = 0;
		const char *h = strstr(p, "\"holdout\": ");
		const char *q = strstr(p, "\"probe\": ");
		cr_assert(h && q);
		hold = atoi(h + 11);
		probe = atoi(q + 9);
		sum += fit + hold + probe;
	}
	cr_expect_eq(sum, rows, "cases shown %d, case rows in the dumps %d", sum, rows);
	cr_expect(strstr(out, "\"db\": null"), "%s", out);
	cr_expect(strstr(out, "calib/data/multi_gpu/nccl_h200x2.tsv"), "the 2-GPU NCCL dump is shipped too");

	cr_assert_eq(calib("validate --gpu h200"), 0, "%s", err);
	cr_expect(strstr(out, "h200: held-out cases of the shipped calibration"), "%s", out);
	cr_expect(strstr(out, "collective"), "collectives are part of the shipped calibration");

	cr_expect_eq(calib("validate --gpu a100"), 1);
	expect_one_line("llmsim calib validate: no calibration of GPU 'a100' is shipped");

	/* export without --db: the shipped cases as one dump */
	cr_assert_eq(calib("export --out %s/all.tsv", dir), 0, "%s", err);
	char path[256], cmd[512];
	snprintf(path, sizeof path, "%s/all.tsv", dir);
	snprintf(cmd, sizeof cmd, "awk -F '\\t' '$1 == \"cases\" { n++ } END { print n }' %s", path);
	FILE *p = popen(cmd, "r");
	int n = 0;
	cr_assert_eq(fscanf(p, "%d", &n), 1);
	pclose(p);
	cr_expect_eq(n, rows);
}
