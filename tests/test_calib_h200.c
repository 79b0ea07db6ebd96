/*
 * test_calib_h200.c - the committed real H200 measurements
 * (calib/data/h200*.tsv, `llmsim calib export` text) meet the issue's
 * accuracy targets: fitted on their "fit" cases from the hardware file's
 * values, the model predicts the held-out cases of every op class with a
 * median absolute error of at most 5% and a 90th percentile of at most
 * 15%. Skips, saying so, while no such file is committed.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/fit.h"
#include "calib/store.h"
#include "calib/validate.h"
#include "support.h"

/* The targets as the issue states them (not the code's constants). */
#define ISSUE_MEDIAN_PCT 5.0
#define ISSUE_P90_PCT	 15.0

Test(calib_h200, held_out_errors_as_the_profile_states)
{
	glob_t g;
	char pattern[1024];
	snprintf(pattern, sizeof pattern, "%s/calib/data/h200*.tsv", LLMSIM_SOURCE_DIR);
	if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0)
		cr_skip_test("no committed H200 measurements (%s): nothing to check yet", pattern);
	/* and the NCCL collectives measured on two of them */
	snprintf(pattern, sizeof pattern, "%s/calib/data/multi_gpu/nccl_h200x*.tsv",
		 LLMSIM_SOURCE_DIR);
	glob(pattern, GLOB_APPEND, NULL, &g);

	char db[] = "/tmp/llmsim-h200-XXXXXX";
	int fd = mkstemp(db);
	cr_assert(fd >= 0);
	close(fd);
	unlink(db);
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_store_open(db, LLMSIM_STORE_CREATE, &s, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		cr_assert_not_null(f, "%s", g.gl_pathv[i]);
		cr_assert_eq(llmsim_store_import(s, f, g.gl_pathv[i], &err), 0, "%s", err.msg);
		fclose(f);
	}
	globfree(&g);

	struct llmsim_gpu gpu;
	char hw[1024];
	snprintf(hw, sizeof hw, "%s/hw/h200-sxm-141gb.yaml", LLMSIM_SOURCE_DIR);
	cr_assert_eq(llmsim_gpu_load_file(hw, &gpu, &err), 0, "%s", err.msg);
	struct llmsim_calib_set set;
	cr_assert_eq(llmsim_calib_set_load(s, "h200", &set, &err), 0, "%s", err.msg);
	llmsim_store_close(s);
	unlink(db);

	struct llmsim_fit_result r;
	cr_assert_eq(llmsim_calib_fit(&gpu, &set, NULL, &r, &err), 0, "%s", err.msg);
	for (int e = 0; e < LLMSIM_PARAM_COUNT; e++)
		if (r.fitted[e])
			cr_log_info("%-28s %.4g -> %.4g (%d cases)", llmsim_param_info[e].key,
				    r.start[e], r.param[e], r.ncases[e]);
	struct llmsim_validation v = {0};
	cr_assert_eq(llmsim_calib_validate(&gpu, &set, "holdout", &v, &err), 0, "%s", err.msg);
	cr_assert_gt(v.nclasses, 0, "no held-out case was modelled");

	/* The shipped profile states, per class, the held-out error a user
	 * should expect (README, `time_err_pct`). Refitting from the hardware
	 * file on the committed measurements must reproduce those figures: a
	 * profile that promises better than the data shows fails, and so does
	 * a change to the model or the fit that makes any class worse. */
	struct llmsim_gpu shipped;
	cr_assert_eq(llmsim_gpu_load("h200", &shipped, &err), 0, "%s", err.msg);
	cr_assert(shipped.nerr_classes > 0, "hw/profiles/h200.yaml states no expected errors");
	int met = 0, scored = 0;
	for (int c = 0; c < v.nclasses; c++) {
		const struct llmsim_err_stats *st = &v.classes[c];
		cr_log_info("%-14s n=%3d median %.2f%% p90 %.2f%% bias %+.2f%%", st->name, st->n,
			    st->median_abs_pct, st->p90_abs_pct, st->median_signed_pct);
		const struct llmsim_err_class *e = llmsim_gpu_err_class(&shipped, st->name);
		cr_assert_not_null(e, "%s: not in the shipped profile", st->name);
		cr_expect_eq(e->n, st->n, "%s: %d held-out cases, the profile says %d", st->name,
			     st->n, e->n);
		cr_expect(st->median_abs_pct <= e->median_abs_pct + 0.5,
			  "%s: held-out median |error| %.2f%%, the profile promises %.2f%%", st->name,
			  st->median_abs_pct, e->median_abs_pct);
		cr_expect(st->p90_abs_pct <= e->p90_abs_pct + 0.5,
			  "%s: held-out p90 |error| %.2f%%, the profile promises %.2f%%", st->name,
			  st->p90_abs_pct, e->p90_abs_pct);
		/* our own correct-first reference kernels (dataset.c) have no target */
		size_t ln = strlen(st->name);
		if (ln > 4 && !strcmp(st->name + ln - 4, "_ref"))
			continue;
		scored++;
		/* the issue's targets, per class, on held-out cases */
		cr_expect(st->median_abs_pct <= ISSUE_MEDIAN_PCT,
			  "%s: held-out median |error| %.2f%% (target %.0f%%)", st->name,
			  st->median_abs_pct, ISSUE_MEDIAN_PCT);
		cr_expect(st->p90_abs_pct <= ISSUE_P90_PCT,
			  "%s: held-out p90 |error| %.2f%% (target %.0f%%)", st->name, st->p90_abs_pct,
			  ISSUE_P90_PCT);
		met += st->median_abs_pct <= ISSUE_MEDIAN_PCT && st->p90_abs_pct <= ISSUE_P90_PCT;
	}
	cr_log_info("%d of %d classes meet the issue's targets", met, scored);
	/* predicted HBM bytes against the DRAM counters of the memory-bound
	 * kernels: the issue's 10% */
	cr_expect_gt(v.hbm_n, 10);
	cr_expect(v.hbm_median_abs_pct <= 10.0, "HBM bytes: median |error| %.2f%% over %d cases",
		  v.hbm_median_abs_pct, v.hbm_n);
	llmsim_calib_set_release(&set);
}
