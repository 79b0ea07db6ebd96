/*
 * test_steps_train.c - the training rows of the steps validation class
 * against issue 17's targets, on the shipped measurements
 * (calib/data/h200-2026-12-01/steps_train.tsv): every torch_train step's
 * time within 10% (but the named known misses, as tests/test_steps.c
 * has them), its peak allocated memory within 10%; the expected error
 * `llmsim train` prints (the profile's torch/train and torch/train_memory classes) the very
 * figures the validation gives and covering at least 80% of the steps;
 * and the profile block's bad input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "calib/shipped.h"
#include "calib/validate/steps.h"
#include "hw/gpu.h"
#include "hw/gpu_load.h"
#include "sim/expected_error.h"
#include "support.h"

static struct llmsim_steps_report r;
static struct llmsim_gpu gpu;

static void validate(void)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_store_open_shipped(&s, NULL, 0, NULL, 0, &err), 0, "%s", err.msg);
	int rc = llmsim_steps_validate(s, &gpu, "torch_train", &r, &err);
	llmsim_store_close(s);
	cr_assert_eq(rc, 0, "%s", err.msg);
}

static void release(void)
{
	llmsim_steps_report_free(&r);
}

/* 18 steps: 8 of Llama-3.1-8B (4 layers), 6 of Llama-3.2-1B (16), 4 of
 * Llama-2-13B (2), recompute none and full (steps_train.py's RUNS); two
 * classes a recompute (time, memory). */
Test(steps_train, all_steps_predicted, .init = validate, .fini = release)
{
	cr_expect_eq(r.n, 18);
	for (int i = 0; i < r.n; i++)
		cr_expect(r.rows[i].ok, "step %lld: %s", (long long)r.rows[i].step_id,
			  r.rows[i].error);
	cr_expect_not_null(llmsim_steps_class_find(&r, "torch_train", "train", "time"));
	cr_expect_not_null(llmsim_steps_class_find(&r, "torch_train", "train", "memory"));
}

/* The step's time within 10%, as tests/test_steps.c holds the inference
 * steps to it: a miss fails, naming itself, unless it is a known miss
 * below with its cause; a known miss must still miss (else take it off),
 * and the error bar `train` prints must tell a user (its p80 reaches the
 * miss, or the class leans the miss's way). */
static const struct {
	const char *model;
	long long batch, seq;
	const char *recompute, *why;
} known_misses[] = {
	/* Llama-3.2-1B at batch 1 x 2048: host-bound (its 52.7 ms of kernels
	 * within a 67.9 ms step, 2022 launches: 33.6 us a launch of the
	 * autograd training loop, against the 30.6 us of HF's eager decode
	 * llmsim takes; with checkpoint 36.1 us, its Python saved-tensor hooks
	 * besides) */
	{"llama-3.2-1b", 1, 2048, "none", "host time per launch of a training loop"},
	{"llama-3.2-1b", 1, 2048, "full", "host time per launch, checkpoint's hooks"},
};

static int known_miss(const struct llmsim_steps_row *w)
{
	for (size_t i = 0; i < sizeof known_misses / sizeof known_misses[0]; i++)
		if (!strcmp(known_misses[i].model, w->model) &&
		    known_misses[i].batch == (long long)w->st.batch &&
		    known_misses[i].seq == (long long)w->st.tokens &&
		    !strcmp(known_misses[i].recompute, w->st.recompute))
			return (int)i + 1;
	return 0;
}

Test(steps_train, time_within_target, .init = validate, .fini = release)
{
	struct llmsim_expected_error x;
	llmsim_expected_step_error(&gpu, "torch", "train", &x, NULL);
	int missed = 0;
	for (int i = 0; i < r.n; i++) {
		const struct llmsim_steps_row *w = &r.rows[i];
		int k = known_miss(w);
		if (!k) {
			cr_expect(fabs(w->err_pct) <= LLMSIM_STEPS_TARGET_PCT,
				  "%s batch %lld x %lld, recompute %s: %.2f ms measured, %.2f ms "
				  "predicted (%+.1f%%)", w->st.model_spec, (long long)w->st.batch,
				  (long long)w->st.tokens, w->st.recompute, w->measured_s * 1e3,
				  w->predicted_s * 1e3, w->err_pct);
			continue;
		}
		missed++;
		cr_expect_gt(fabs(w->err_pct), LLMSIM_STEPS_TARGET_PCT,
			     "%s batch %lld recompute %s: %+.1f%% now meets the target: take it off "
			     "known_misses", w->model, (long long)w->st.batch, w->st.recompute,
			     w->err_pct);
		cr_expect(100 * x.abs_frac >= fabs(w->err_pct) || x.bias_frac * w->err_pct > 0,
			  "%s batch %lld recompute %s: %+.1f%% (%s) is beyond the error bar "
			  "+/-%.1f%% and the class does not lean that way", w->model,
			  (long long)w->st.batch, w->st.recompute, w->err_pct,
			  known_misses[k - 1].why, 100 * x.abs_frac);
	}
	cr_log_info("%d training steps, %d known misses", r.n, missed);
}

Test(steps_train, peak_memory_within_target, .init = validate, .fini = release)
{
	for (int i = 0; i < r.n; i++) {
		const struct llmsim_steps_row *w = &r.rows[i];
		cr_expect(fabs(w->mem_err_pct) <= LLMSIM_STEPS_TARGET_PCT,
			  "%s batch %lld x %lld, recompute %s: %.3f GB measured, %.3f GB predicted "
			  "(%+.2f%%)", w->st.model_spec, (long long)w->st.batch,
			  (long long)w->st.tokens, w->st.recompute, w->mem_measured_bytes / 1e9,
			  w->mem_predicted_bytes / 1e9, w->mem_err_pct);
		/* the allocator's segments hold its blocks */
		cr_expect_geq(w->mem_reserved_predicted_bytes, w->mem_predicted_bytes);
	}
}

/* The expected error `llmsim train --engine torch` prints (the profile's
 * torch/train and torch/train_memory) is the validation's (refit with
 * `llmsim calib fit` when a change moves it) and covers 80% of the steps. */
Test(steps_train, profile_errors_are_the_validation, .init = validate, .fini = release)
{
	static const char *const phase[2] = {"train", "train_memory"};
	double a[64];
	for (int q = 0; q < 2; q++) {
		int n = 0;
		for (int i = 0; i < r.n && n < 64; i++)
			a[n++] = fabs(q ? r.rows[i].mem_err_pct : r.rows[i].err_pct);
		double p80 = llmsim_quantile_cover(a, (size_t)n, 0.8);
		struct llmsim_expected_error x;
		const struct llmsim_step_err_class *e;
		llmsim_expected_step_error(&gpu, "torch", phase[q], &x, &e);
		cr_assert(e && x.calibrated, "torch/%s: not in h200's profile", phase[q]);
		cr_expect(fabs(e->p80_abs_pct - p80) <= 0.011, "torch/%s p80: profile %.2f, "
			  "validation %.3f", phase[q], e->p80_abs_pct, p80);
		cr_expect_eq(e->n, n);
		int covered = 0;
		for (int i = 0; i < n; i++)
			covered += a[i] <= 100 * x.abs_frac + 1e-9;
		cr_expect_geq(covered, 0.8 * n, "torch/%s covers %d of %d", phase[q], covered, n);
	}
}

/* What `llmsim train` reads of a profile: the whole-step class torch/train
 * of steps_errors:, its bias where it leans (at least 1% and half its
 * median |error|). */
Test(steps_train, profile_class_read)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(LLMSIM_SOURCE_DIR "/hw/h200-sxm-141gb.yaml", &g, &err), 0,
		     "%s", err.msg);
	static const char ok[] = "gpu: h200\n"
				 "steps_errors:\n"
				 "  torch/train: {p80: 9.6, median: 8.2, bias: -8.2, n: 18, "
				 "program: torch_train}\n";
	cr_assert_eq(llmsim_gpu_apply_profile_buf(&g, ok, sizeof ok - 1, "p.yaml", &err), 0, "%s",
		     err.msg);
	struct llmsim_expected_error x;
	const struct llmsim_step_err_class *e;
	llmsim_expected_step_error(&g, "torch", "train", &x, &e);
	cr_assert(e && x.calibrated);
	expect_close(x.abs_frac, 0.096, 1e-12);
	expect_close(x.bias_frac, -0.082, 1e-12);
	cr_expect_eq(e->n, 18);
	cr_expect_str_eq(e->program, "torch_train");
	llmsim_expected_step_error(&g, "torch", "train_memory", &x, &e);
	cr_expect(!x.calibrated && !e, "no torch/train_memory class: the stated default");
}
