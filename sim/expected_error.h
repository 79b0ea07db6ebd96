/*
 * expected_error.h - the expected error of a whole prediction (a training
 * step, a serving step) on a GPU: what `plan` prints beside every row and
 * the width within which it calls two configurations equivalent.
 *
 * The figure comes from the validation of its class, carried by the GPU's
 * calibration profile (hw/profiles/NAME.yaml, loaded by hw/: `llmsim calib
 * fit` writes the classes it validated). Whole-step classes are looked up
 * by name ("train_step"; "serve_step", or else "decode_step"); a profile
 * that validated no whole step of the kind gets the conservative default
 * below, and says so in `source`. This accessor is the one place that
 * reads them: when the profile grows whole-step blocks, only it changes.
 *
 * The default, LLMSIM_STEP_ERROR_DEFAULT (10%): the project's target for
 * whole steps against real programs ("every prefill, decode and training
 * step within 10%", issue 17), which the per-kernel classes (2-9% median)
 * cannot promise for a whole step; no sign is claimed for it.
 */
#ifndef LLMSIM_EXPECTED_ERROR_H
#define LLMSIM_EXPECTED_ERROR_H

#include "hw/gpu.h"

#define LLMSIM_STEP_ERROR_DEFAULT 0.10

enum llmsim_pred_kind {
	LLMSIM_PRED_TRAIN_STEP,  /* one training step (llmsim train, plan) */
	LLMSIM_PRED_SERVE_STEP,  /* a serving engine's steps (plan --workload serve: the
				  * default engine's decode class) */
	LLMSIM_PRED_KIND_COUNT
};

struct llmsim_expected_error {
	double abs_frac;        /* expected |predicted - measured| / measured: the class's
				 * p80 of |error| (its p90 where it gives no p80) */
	double bias_frac;       /* its median signed error where it leans one way
				 * (llmsim_err_class_biased; > 0: predictions slow), else 0 */
	int n;                  /* held-out cases behind it (0: the default) */
	int calibrated;         /* 1: from the profile; 0: the default */
	char source[160];       /* "hw/profiles/h200.yaml: train_step (n = 12)" or the default */
};

/* The expected error of a prediction of kind k on gpu. Never fails. A
 * serving step is the fused engine's decode step (steps_errors:
 * fused/decode) when the profile validated one, else a class named
 * serve_step or decode_step, else the default. */
void llmsim_expected_error(const struct llmsim_gpu *gpu, enum llmsim_pred_kind k,
			   struct llmsim_expected_error *out);

/* The expected error of a whole step of an engine's phase ("torch",
 * "prefill"): the profile's steps_errors: class (the p80 of |error| of
 * the measured steps of that engine and phase, calib/validate/steps.h,
 * with its bias where it leans one way), else the default. Never fails;
 * `cls` (may be NULL) gets the class or NULL. */
void llmsim_expected_step_error(const struct llmsim_gpu *gpu, const char *engine,
				const char *phase, struct llmsim_expected_error *out,
				const struct llmsim_step_err_class **cls);

#endif
