/*
 * steps_train.c - the training rows of the steps class (steps.h): program
 * torch_train (calib/torch/steps_train.py: one GPU, fp32 parameters under
 * bf16 autocast, SDPA, fused AdamW, recompute none or full) predicted
 * through `llmsim train --engine torch`'s path: llmsim_train_cfg_torch,
 * then llmsim_train_simulate on the measured model with its layers. Time
 * is the step's wall time; memory its peak allocated bytes
 * (torch.cuda.max_memory_allocated), the reserved segments beside.
 *
 * The profile's whole-step classes of training (steps_errors:, beside the
 * inference ones): torch/train (the step's time) and torch/train_memory
 * (its peak allocated memory), each over every torch_train step whatever
 * its recompute, which is what `llmsim train --engine torch` prints as its
 * expected error.
 */
#include "steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/stats.h"
#include "sim/train/train.h"

int llmsim_steps_predict_train(const struct llmsim_gpu *gpu, const struct llmsim_model *m,
			       struct llmsim_steps_row *row, struct llmsim_err *err)
{
	const struct llmsim_step_rec *st = &row->st;
	if (strcmp(st->phase, "train"))
		return llmsim_err_set(err, LLMSIM_EINVAL, "phase '%s' is not a training step",
				      st->phase);
	int full = !strcmp(st->recompute, "full");
	if (!full && strcmp(st->recompute, "none"))
		return llmsim_err_set(err, LLMSIM_EINVAL, "recompute '%s' (expected none or full)",
				      st->recompute);
	if (st->batch < 1 || st->batch > LLMSIM_MAX_BATCH || st->tokens < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "batch %lld x %lld tokens",
				      (long long)st->batch, (long long)st->tokens);
	/* what `llmsim train --engine torch --layers L --micro-batch B --seq S
	 * --recompute R` runs */
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.micro_batch = (int)st->batch;
	c.seq = st->tokens;
	c.recompute = full ? LLMSIM_RECOMP_FULL : LLMSIM_RECOMP_NONE;
	llmsim_train_cfg_torch(&c, gpu);
	c.operand_data = row->operand_data;
	struct llmsim_train_ctx *ctx = NULL;
	struct llmsim_train_result *r = malloc(sizeof *r);
	if (!r)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	int rc = llmsim_train_check(m, &c, err) != LLMSIM_REJ_NONE ? LLMSIM_EINVAL : 0;
	if (!rc)
		rc = llmsim_train_ctx_new(m, gpu, &ctx, err);
	if (!rc)
		rc = llmsim_train_simulate(ctx, &c, r, err);
	llmsim_train_ctx_free(ctx);
	if (!rc) {
		row->wall_predicted_s = row->predicted_s = r->time.step_s;
		row->kernel_predicted_s = r->torch.gpu_s;
		row->sm_clock_predicted_hz = r->sm_clock_hz;
		row->load_duty = c.load == LLMSIM_LOAD_LONE ? 0 : 1;
		row->load_rho = r->load_rho;
		row->mem_predicted_bytes = r->torch.peak_allocated_bytes;
		row->mem_reserved_predicted_bytes = r->torch.reserved_bytes;
	}
	free(r);
	return rc;
}

void llmsim_steps_write_train_profile(FILE *f, const struct llmsim_steps_report *r)
{
	double *a = malloc(2 * sizeof *a * (size_t)(r->n ? r->n : 1)), *s = a ? a + r->n : NULL;
	if (!a)
		return;
	for (int q = 0; q < 2; q++) {
		int n = 0;
		for (int i = 0; i < r->n; i++) {
			const struct llmsim_steps_row *w = &r->rows[i];
			double e = q ? w->mem_err_pct : w->err_pct;
			if (strcmp(w->st.program, "torch_train") || !w->ok || !isfinite(e))
				continue;
			a[n] = fabs(e);
			s[n++] = e;
		}
		if (!n)
			continue;
		double p80 = llmsim_quantile_cover(a, (size_t)n, 0.8);
		double med = llmsim_quantile(a, (size_t)n, 0.5), bias = llmsim_quantile(s, (size_t)n, 0.5);
		/* p80 rounded up: the printed bar still covers 80% */
		fprintf(f, "  torch/%s: {p80: %.2f, median: %.2f, bias: %+.2f, n: %d, program: "
			"torch_train}\n", q ? "train_memory" : "train", ceil(p80 * 100 - 1e-9) / 100,
			med, bias, n);
	}
	free(a);
}
