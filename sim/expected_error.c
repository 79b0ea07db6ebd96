/*
 * expected_error.c - the expected error of a whole prediction, from the
 * GPU profile's validated classes or the stated default (see
 * expected_error.h).
 */
#include "expected_error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/graph.h"

static const char *const class_names[LLMSIM_PRED_KIND_COUNT][2] = {
	[LLMSIM_PRED_TRAIN_STEP] = {"train_step", NULL},
	[LLMSIM_PRED_SERVE_STEP] = {"serve_step", "decode_step"},
};

/* The transfer table's path from hw/ on */
static const char *transfer_name(const struct llmsim_gpu *gpu)
{
	const char *hw = strstr(gpu->transfer_path, "hw/transfer/");
	return hw ? hw : gpu->transfer_path;
}

/* The default, widened in quadrature by what the GPU file says its
 * uncalibrated kernel values add (the file's uncalibrated_step_error_fraction);
 * for an uncalibrated GPU priced from a measured basis, no less than the
 * widest whole-step class the transfer experiment measured (already
 * widened so): a step of a program it did not measure misses at least as
 * far as those it did. */
static void deflt(const struct llmsim_gpu *gpu, struct llmsim_expected_error *out)
{
	memset(out, 0, sizeof *out);
	double u = gpu ? gpu->uncalibrated_step_error_fraction : 0;
	if (!(u > 0)) {
		out->abs_frac = LLMSIM_STEP_ERROR_DEFAULT;
		snprintf(out->source, sizeof out->source,
			 "default %.0f%%: no whole-step validation in the GPU's profile",
			 100 * LLMSIM_STEP_ERROR_DEFAULT);
	} else {
		out->abs_frac = sqrt(LLMSIM_STEP_ERROR_DEFAULT * LLMSIM_STEP_ERROR_DEFAULT + u * u);
		snprintf(out->source, sizeof out->source,
			 "default %.0f%% (no whole-step validation) with the GPU file's uncalibrated "
			 "kernels' %.1f%%, in quadrature", 100 * LLMSIM_STEP_ERROR_DEFAULT, 100 * u);
	}
	const struct llmsim_step_err_class *w = NULL;
	for (int i = 0; gpu && gpu->transfer_path[0] && i < gpu->nstep_errors; i++)
		if (!w || gpu->step_errors[i].p80_abs_pct > w->p80_abs_pct)
			w = &gpu->step_errors[i];
	if (w && w->p80_abs_pct / 100 > out->abs_frac) {
		out->abs_frac = w->p80_abs_pct / 100;
		snprintf(out->source, sizeof out->source,
			 "%.60s: no class of this program; the widest measured, %.31s (n = %d)",
			 transfer_name(gpu), w->name, w->n);
	}
}

/* The profile's path from hw/ on (it lives in <data>/hw/profiles/). */
static const char *profile_name(const struct llmsim_gpu *gpu)
{
	const char *path = gpu->profile_path[0]    ? gpu->profile_path
			   : gpu->transfer_path[0] ? gpu->transfer_path
						   : gpu->name;
	const char *hw = strstr(path, "hw/profiles/");
	if (!hw)
		hw = strstr(path, "hw/transfer/");
	return hw ? hw : path;
}

void llmsim_expected_step_error(const struct llmsim_gpu *gpu, const char *engine,
				const char *phase, struct llmsim_expected_error *out,
				const struct llmsim_step_err_class **cls)
{
	deflt(gpu, out);
	const struct llmsim_step_err_class *c =
		gpu && engine && phase ? llmsim_gpu_step_err(gpu, engine, phase) : NULL;
	if (cls)
		*cls = c;
	if (!c || !(c->p80_abs_pct > 0))
		return;
	out->abs_frac = c->p80_abs_pct / 100;
	/* the per-kernel classes' rule of a lean (llmsim_err_class_biased) */
	int biased = fabs(c->bias_pct) >= 1.0 && fabs(c->bias_pct) >= 0.5 * c->median_abs_pct;
	out->bias_frac = biased ? c->bias_pct / 100 : 0;
	out->n = c->n;
	out->calibrated = 1;
	snprintf(out->source, sizeof out->source, "%.100s: steps_errors %.31s (n = %d)",
		 profile_name(gpu), c->name, c->n);
}

void llmsim_expected_error(const struct llmsim_gpu *gpu, enum llmsim_pred_kind k,
			   struct llmsim_expected_error *out)
{
	deflt(gpu, out);
	if (!gpu || (unsigned)k >= LLMSIM_PRED_KIND_COUNT)
		return;
	if (k == LLMSIM_PRED_SERVE_STEP) {
		/* the serving plan's engine: the one default */
		llmsim_expected_step_error(gpu, llmsim_engine_name(LLMSIM_ENGINE_DEFAULT), "decode",
					   out, NULL);
		if (out->calibrated)
			return;
	}
	for (int i = 0; i < 2 && class_names[k][i]; i++) {
		const struct llmsim_err_class *c = llmsim_gpu_err_class(gpu, class_names[k][i]);
		double bar = c ? (c->p80_abs_pct > 0 ? c->p80_abs_pct : c->p90_abs_pct) : 0;
		if (!(bar > 0))
			continue;
		out->abs_frac = bar / 100;
		out->bias_frac = llmsim_err_class_biased(c) ? c->bias_pct / 100 : 0;
		out->n = c->n;
		out->calibrated = 1;
		snprintf(out->source, sizeof out->source, "%.100s: %.31s (n = %d)",
			 profile_name(gpu), c->name, c->n);
		return;
	}
}
