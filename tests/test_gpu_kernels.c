/*
 * test_gpu_kernels.c - the calibration runner (calib/runner) and its kernels.
 *
 * Without a GPU (CI): the runner must say exactly one line, "no CUDA GPU
 * found (cudaGetDeviceCount: ...)", exit 1 and write no database; the GPU
 * test then skips. With a GPU: a --quick run must store cases of every
 * class. The case list itself (--list) needs no GPU: its counts, its
 * holdout split and its op specs (parsed by the simulator) are checked
 * everywhere. Without the CUDA toolkit the runner is not built and all
 * tests skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "calib/store.h"
#include "sim/sim.h"
#include "support.h"

#define RUNNER LLMSIM_BUILD_DIR "/calib/runner/llmsim-calib-runner"

/* Run the runner with args; stdout into out, stderr into err_out. */
static int run_runner(const char *args, char *out, size_t size, char *err_out, size_t err_size)
{
	char o[] = "/tmp/llmsim-runner-outXXXXXX", e[] = "/tmp/llmsim-runner-errXXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e);
	cr_assert(fo >= 0 && fe >= 0);
	close(fo);
	close(fe);
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s %s >%s 2>%s </dev/null", RUNNER, args, o, e);
	int st = system(cmd);
	const char *paths[2] = {o, e};
	char *bufs[2] = {out, err_out};
	size_t sizes[2] = {size, err_size};
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(paths[i], "rb");
		size_t n = 0;
		if (f && bufs[i]) {
			n = fread(bufs[i], 1, sizes[i] - 1, f);
			bufs[i][n] = 0;
		}
		if (f)
			fclose(f);
		unlink(paths[i]);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void need_runner(void)
{
	if (access(RUNNER, X_OK) != 0)
		cr_skip_test("the runner is not built (no CUDA toolkit)");
}

static const char prefix[] = "llmsim-calib-runner: no CUDA GPU found (cudaGetDeviceCount: ";

Test(gpu_kernels, quick_run_on_gpu, .timeout = 600)
{
	need_runner();
	char db[] = "/tmp/llmsim-runner-dbXXXXXX";
	int fd = mkstemp(db);
	cr_assert(fd >= 0);
	close(fd);
	unlink(db); /* the runner creates it */
	static char out[1 << 16], err[1 << 20];
	char args[256];
	snprintf(args, sizeof args, "--quick --db %s", db);
	int rc = run_runner(args, out, sizeof out, err, sizeof err);
	if (rc == 1 && !strncmp(err, prefix, sizeof prefix - 1)) {
		/* the no-GPU path: one line, ending in ")\n", and no database */
		cr_assert_eq(count_lines(err), 1, "stderr: %s", err);
		cr_assert(strstr(err, ")\n") == err + strlen(err) - 2, "stderr: %s", err);
		cr_assert_eq(out[0], 0, "nothing on stdout");
		cr_assert(access(db, F_OK) != 0, "no database written without a GPU");
		cr_skip_test("no CUDA GPU: %s", err);
	}
	/* a GPU: exit 0 (all classes ran), every class stored some cases */
	cr_assert_eq(rc, 0, "runner exit %d; stderr tail: %s", rc,
		     strlen(err) > 2000 ? err + strlen(err) - 2000 : err);
	struct llmsim_store *st = NULL;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_open(db, LLMSIM_STORE_READ, &st, &e), 0, "%s", e.msg);
	static const char *const classes[] = {"launch", "hbm", "smem", "elementwise",
					      "gemm", "attention", "decode"};
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
		int n = 0;
		struct llmsim_store_filter f = {.op_class = classes[i]};
		int count(const struct llmsim_store_case_row *row, void *ctx);
		cr_assert_eq(llmsim_store_cases(st, &f, count, &n, &e), 0, "%s", e.msg);
		cr_expect_gt(n, 0, "class %s: no cases stored", classes[i]);
	}
	llmsim_store_close(st);
	unlink(db);
}

/* case row callback: count rows and check what every case must have */
int count(const struct llmsim_store_case_row *row, void *ctx)
{
	(*(int *)ctx)++;
	cr_expect_gt(row->c.time_median_s, 0, "%s: median time", row->c.op_spec);
	cr_expect_geq(row->c.time_p90_s, row->c.time_p10_s, "%s: p10 <= p90", row->c.op_spec);
	cr_expect_geq(row->c.reps, 5, "%s: repetitions", row->c.op_spec);
	return 0;
}

struct listed {
	char cls[32], split[16], spec[256];
};

static int parse_list(const char *args, struct listed *l, int max)
{
	static char out[1 << 17], err[4096];
	int rc = run_runner(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "--list exit %d: %s", rc, err);
	int n = 0;
	for (char *line = strtok(out, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		int pos = 0;
		cr_assert_eq(sscanf(line, "%31s %15s %n", l[n].cls, l[n].split, &pos), 2,
			     "line: %s", line);
		snprintf(l[n].spec, sizeof l[n].spec, "%s", line + pos);
		n++;
	}
	return n;
}

static int count_class(const struct listed *l, int n, const char *cls, const char *split)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += !strcmp(l[i].cls, cls) && (!split || !strcmp(l[i].split, split));
	return c;
}

Test(gpu_kernels, case_list)
{
	need_runner();
	static struct listed l[1024];
	int n = parse_list("--list", l, 1024);
	/* Counts by hand from calib/runner/cases.c:
	 * gemm: 10 Llama projections x 6 M + 4 squares x 5 dtypes
	 *       + 2 projections x 2 M x 2 dtypes = 60 + 20 + 8 = 88
	 * elementwise: 6 kinds x (5 token counts + 1 square) + 6 silu_mul + 5 softmax = 47
	 * hbm: 6 sizes x 3 kernels = 18; attention: 8 + 7 flash2 + 6 naive = 21
	 * decode: 6 flash2 + 6 split-KV + 10 paged = 22; launch 3; smem 3 */
	static const struct {
		const char *cls;
		int n;
	} want[] = {{"gemm", 88}, {"elementwise", 47}, {"hbm", 18}, {"attention", 21},
		    {"decode", 22}, {"launch", 3}, {"smem", 3}};
	int total = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int c = count_class(l, n, want[i].cls, NULL);
		cr_expect_eq(c, want[i].n, "class %s: %d cases, want %d", want[i].cls, c, want[i].n);
		/* every runner case is a fit case: held-out cases come from other
		 * programs (calib/torch/heldout_ops.py, the whole-model steps) */
		int h = count_class(l, n, want[i].cls, "holdout");
		cr_expect_eq(h, 0, "class %s: %d holdout of %d", want[i].cls, h, c);
		total += c;
	}
	cr_expect_eq(total, n, "no case outside the known classes");
	/* the simulator parses every op spec of the classes it prices */
	for (int i = 0; i < n; i++) {
		if (!strcmp(l[i].cls, "launch") || !strcmp(l[i].cls, "smem"))
			continue;
		struct llmsim_op op;
		struct llmsim_err e = {0};
		cr_expect_eq(llmsim_op_parse(l[i].spec, &op, &e), 0, "'%s': %s", l[i].spec, e.msg);
	}
}

Test(gpu_kernels, quick_list_is_a_subset)
{
	need_runner();
	static struct listed all[1024], quick[1024];
	int n = parse_list("--list", all, 1024);
	int q = parse_list("--list --quick", quick, 1024);
	cr_expect(q > 0 && q < n, "quick %d of %d", q, n);
	for (int i = 0; i < q; i++) {
		int found = 0;
		for (int j = 0; j < n && !found; j++)
			found = !strcmp(quick[i].spec, all[j].spec) && !strcmp(quick[i].split, all[j].split);
		cr_expect(found, "quick case '%s' is in the full list with the same split", quick[i].spec);
	}
	/* each class has at least one quick case */
	static const char *const classes[] = {"launch", "hbm", "smem", "elementwise",
					      "gemm", "attention", "decode"};
	for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++)
		cr_expect_gt(count_class(quick, q, classes[c], NULL), 0, "quick has %s", classes[c]);
}

/* CUPTI's host side validates the counter metrics for a chip with no GPU:
 * cupti.md (checked on an H200) lists our eight metrics as one pass on
 * GH100, the chip of the H100 and H200. */
Test(gpu_kernels, counter_metrics_fit_one_pass)
{
	need_runner();
	char out[256], err[1024];
	int rc = run_runner("--counter-passes GH100", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect_str_eq(out, "1\n", "passes on GH100: %s", out);
	rc = run_runner("--counter-passes NOSUCHCHIP", out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1, "an unknown chip is an error: %s", err);
	cr_expect_eq(count_lines(err), 1, "one line: %s", err);
}

Test(gpu_kernels, usage_errors)
{
	need_runner();
	char out[256], err[1024];
	cr_expect_eq(run_runner("--quick", out, sizeof out, err, sizeof err), 2, "no --db: %s", err);
	cr_expect(strstr(err, "--db") != NULL, "says what is missing: %s", err);
	cr_expect_eq(run_runner("--list --only nosuch", out, sizeof out, err, sizeof err), 2,
		     "unknown class: %s", err);
	cr_expect_eq(run_runner("--db /tmp/x.db --budget-s abc", out, sizeof out, err, sizeof err),
		     2, "bad number: %s", err);
}
