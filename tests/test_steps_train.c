/*
 * test_steps_train.c - the training rows of the steps validation class
 * against issue 17's targets, on the shipped measurements
 * (calib/data/h200-2026-12-01/steps_train.tsv): every torch_train step's
 * time within 10%, its peak allocated memory within 10%; the expected error
 * `llmsim train` prints (the profile's train_step_errors: block) the very
 * figures the validation gives and covering at least 80% of the steps;
 * and the profile block's bad input.
 */
#include <math.h>
#include <string.h>

#include "calib/shipped.h"
#include "calib/validate/steps_train.h"
#include "hw/gpu.h"
#include "hw/gpu_load.h"
#include "support.h"

static struct llmsim_steps_train v;
static struct llmsim_gpu gpu;

static void validate(void)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_open_shipped(&s, NULL, 0, NULL, 0, &err), 0, "%s", err.msg);
	int rc = llmsim_steps_train_validate(s, &gpu, &v, &err);
	llmsim_store_close(s);
	cr_assert_eq(rc, 0, "%s", err.msg);
}

/* 18 steps: 8 of Llama-3.1-8B (4 layers), 6 of Llama-3.2-1B (16), 4 of
 * Llama-2-13B (2), recompute none and full (steps_train.py's RUNS). */
Test(steps_train, all_steps_predicted, .init = validate)
{
	cr_expect_eq(v.n, 18);
	cr_expect_eq(v.ngroups, 6);
}

Test(steps_train, time_within_target, .init = validate)
{
	for (int i = 0; i < v.n; i++) {
		const struct llmsim_steps_train_row *r = &v.row[i];
		cr_expect(fabs(r->err_pct[LLMSIM_STEPS_TIME]) <= LLMSIM_STEPS_TRAIN_TIME_TARGET_PCT,
			  "%s (%d layers) batch %lld x %lld, recompute %s: %.2f ms measured, %.2f ms "
			  "predicted (%+.1f%%)", r->model, r->layers, (long long)r->batch,
			  (long long)r->seq, llmsim_recompute_name(r->recompute),
			  r->measured[LLMSIM_STEPS_TIME] * 1e3, r->predicted[LLMSIM_STEPS_TIME] * 1e3,
			  r->err_pct[LLMSIM_STEPS_TIME]);
	}
}

Test(steps_train, peak_memory_within_target, .init = validate)
{
	for (int i = 0; i < v.n; i++) {
		const struct llmsim_steps_train_row *r = &v.row[i];
		cr_expect(fabs(r->err_pct[LLMSIM_STEPS_PEAK]) <= LLMSIM_STEPS_TRAIN_MEM_TARGET_PCT,
			  "%s (%d layers) batch %lld x %lld, recompute %s: %.3f GB measured, %.3f GB "
			  "predicted (%+.2f%%)", r->model, r->layers, (long long)r->batch,
			  (long long)r->seq, llmsim_recompute_name(r->recompute),
			  r->measured[LLMSIM_STEPS_PEAK] / 1e9, r->predicted[LLMSIM_STEPS_PEAK] / 1e9,
			  r->err_pct[LLMSIM_STEPS_PEAK]);
		/* the allocator's segments hold its blocks */
		cr_expect_geq(r->predicted[LLMSIM_STEPS_RESERVED], r->predicted[LLMSIM_STEPS_PEAK]);
	}
}

/* The profile states what the validation measures (refit with `llmsim
 * calib fit` when a change moves it), and its p80 covers 80% of the steps. */
Test(steps_train, profile_errors_are_the_validation, .init = validate)
{
	struct llmsim_step_err e[LLMSIM_GPU_MAX_STEP_ERRS];
	int n = llmsim_steps_train_errors(&v, e, LLMSIM_GPU_MAX_STEP_ERRS);
	cr_assert_eq(n, 2);
	for (int i = 0; i < n; i++) {
		const struct llmsim_step_err *p = llmsim_gpu_train_step_err(&gpu, e[i].name);
		cr_assert(p, "%s: not in h200's profile", e[i].name);
		cr_expect(fabs(p->p80_abs_pct - e[i].p80_abs_pct) <= 0.006, "%s p80: profile %.2f, "
			  "validation %.3f", e[i].name, p->p80_abs_pct, e[i].p80_abs_pct);
		cr_expect(fabs(p->median_pct - e[i].median_pct) <= 0.006, "%s median: profile "
			  "%.2f, validation %.3f", e[i].name, p->median_pct, e[i].median_pct);
		cr_expect_eq(p->n, e[i].n);
		enum llmsim_steps_metric m = i ? LLMSIM_STEPS_PEAK : LLMSIM_STEPS_TIME;
		int covered = 0;
		for (int k = 0; k < v.n; k++)
			covered += fabs(v.row[k].err_pct[m]) <= e[i].p80_abs_pct + 1e-9;
		cr_expect_geq(covered, 0.8 * v.n, "%s covers %d of %d", e[i].name, covered, v.n);
	}
}

Test(steps_train, profile_block_errors)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(LLMSIM_SOURCE_DIR "/hw/h200-sxm-141gb.yaml", &g, &err), 0,
		     "%s", err.msg);
	static const char bad[] = "gpu: h200\n"
				  "train_step_errors:\n"
				  "  torch_train.time: {p80: 9.4, n: 18}\n";
	cr_expect_neq(llmsim_gpu_apply_profile_buf(&g, bad, sizeof bad - 1, "p.yaml", &err), 0);
	cr_expect(strstr(err.msg, "p.yaml:3:") && strstr(err.msg, "median"), "%s", err.msg);
	static const char neg[] = "gpu: h200\n"
				  "train_step_errors:\n"
				  "  torch_train.time: {p80: -1, median: 0, n: 18}\n";
	memset(&err, 0, sizeof err);
	cr_expect_neq(llmsim_gpu_apply_profile_buf(&g, neg, sizeof neg - 1, "p.yaml", &err), 0);
	cr_expect(strstr(err.msg, "p80"), "%s", err.msg);
	static const char ok[] = "gpu: h200\n"
				 "train_step_errors:\n"
				 "  torch_train.time: {p80: 9.4, median: -8.2, n: 18}\n";
	memset(&err, 0, sizeof err);
	cr_assert_eq(llmsim_gpu_apply_profile_buf(&g, ok, sizeof ok - 1, "p.yaml", &err), 0, "%s",
		     err.msg);
	const struct llmsim_step_err *e = llmsim_gpu_train_step_err(&g, "torch_train.time");
	cr_assert(e);
	expect_close(e->p80_abs_pct, 9.4, 1e-12);
	expect_close(e->median_pct, -8.2, 1e-12);
	cr_expect_eq(e->n, 18);
}
