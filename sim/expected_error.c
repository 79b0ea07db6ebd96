/*
 * expected_error.c - the expected error of a whole prediction, from the
 * GPU profile's validated classes or the stated default (see
 * expected_error.h).
 */
#include "expected_error.h"

#include <stdio.h>
#include <string.h>

static const char *const class_names[LLMSIM_PRED_KIND_COUNT][2] = {
	[LLMSIM_PRED_TRAIN_STEP] = {"train_step", NULL},
	[LLMSIM_PRED_SERVE_STEP] = {"serve_step", "decode_step"},
};

void llmsim_expected_error(const struct llmsim_gpu *gpu, enum llmsim_pred_kind k,
			   struct llmsim_expected_error *out)
{
	memset(out, 0, sizeof *out);
	out->abs_frac = LLMSIM_STEP_ERROR_DEFAULT;
	snprintf(out->source, sizeof out->source,
		 "default %.0f%%: no whole-step validation in the GPU's profile",
		 100 * LLMSIM_STEP_ERROR_DEFAULT);
	if (!gpu || (unsigned)k >= LLMSIM_PRED_KIND_COUNT)
		return;
	for (int i = 0; i < 2 && class_names[k][i]; i++) {
		const struct llmsim_err_class *c = llmsim_gpu_err_class(gpu, class_names[k][i]);
		double bar = c ? (c->p80_abs_pct > 0 ? c->p80_abs_pct : c->p90_abs_pct) : 0;
		if (!(bar > 0))
			continue;
		out->abs_frac = bar / 100;
		out->bias_frac = llmsim_err_class_biased(c) ? c->bias_pct / 100 : 0;
		out->n = c->n;
		out->calibrated = 1;
		/* the profile's path from hw/ on (it lives in <data>/hw/profiles/) */
		const char *path = gpu->profile_path[0] ? gpu->profile_path : gpu->name;
		const char *hw = strstr(path, "hw/profiles/");
		snprintf(out->source, sizeof out->source, "%.100s: %.31s (n = %d)", hw ? hw : path,
			 c->name, c->n);
		return;
	}
}
