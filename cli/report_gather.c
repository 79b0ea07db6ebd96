/*
 * report_gather.c - everything `llmsim report` shows, computed by the
 * simulators and the calibration scoring for reports/ to draw: one
 * layer's ops as the walkers price them (layer_ops.h), the GPU's measured
 * cases as `calib validate` scores them, the training configuration and
 * plan, or the serving request, curve and plan.
 */
#include "report_gather.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer_ops.h"
#include "sim/train/plan.h"

static int gather_train(struct llmsim_report_data *d, struct llmsim_err *err)
{
	const struct llmsim_report_cfg *cfg = d->cfg;
	struct llmsim_train_ctx *ctx = NULL;
	struct llmsim_plan_out out;
	struct llmsim_err e = {0};
	int rc = llmsim_train_ctx_new(d->model, d->gpu, &ctx, err);
	if (rc)
		return rc;
	if (cfg->train_given) {
		/* A configuration the user named must be valid. */
		rc = llmsim_train_simulate(ctx, &cfg->train, &d->chosen, err);
		if (rc)
			goto done;
		d->chosen_given = 1;
	}
	struct llmsim_plan_req req = {
		.gpus = cfg->plan_gpus,
		.seq = cfg->train.seq,
		.global_batch = cfg->train.global_batch,
		.dtype = cfg->train.dtype,
		.recipe = cfg->train.recipe,
		.lora_rank = cfg->train.lora_rank,
		.moe_imbalance = cfg->train.moe_imbalance,
		.top = cfg->top < LLMSIM_REPORT_TOP_MAX ? cfg->top : LLMSIM_REPORT_TOP_MAX,
	};
	memset(&out, 0, sizeof out);
	rc = llmsim_plan_run(ctx, &req, &out, &e);
	if (rc) {
		snprintf(d->train_note, sizeof d->train_note, "plan failed: %.900s", e.msg);
		rc = 0;
	} else {
		for (int i = 0; i < out.nrows && d->ntop < LLMSIM_REPORT_TOP_MAX; i++)
			d->top[d->ntop++] = out.rows[i].r;
		d->plan_evaluated = out.priced;
		d->plan_pruned = out.pruned;
		d->plan_feasible = out.feasible;
		d->plan_elapsed_s = out.elapsed_s;
		d->plan_error_frac = out.error_frac;
		if (!out.nrows)
			snprintf(d->train_note, sizeof d->train_note,
				 "no configuration of %d GPUs fits (%lld priced): %.700s", req.gpus,
				 (long long)out.priced, out.hint);
		llmsim_plan_out_release(&out);
	}
	if (!d->chosen_given && d->ntop)
		d->chosen = d->top[0];
	d->have_train = d->chosen_given || d->ntop > 0;
done:
	llmsim_train_ctx_free(ctx);
	return rc;
}

/* The plan's front, by tokens/s per user (lowest first), at most
 * LLMSIM_REPORT_CURVE_MAX points spread evenly over it. */
static void front(struct llmsim_report_data *d, const struct llmsim_plan_serve_out *so)
{
	int64_t *idx = malloc((size_t)(so->nrows ? so->nrows : 1) * sizeof *idx);
	if (!idx)
		return;
	int64_t n = llmsim_plan_serve_front(so, idx);
	int k = n < LLMSIM_REPORT_CURVE_MAX ? (int)n : LLMSIM_REPORT_CURVE_MAX;
	for (int i = 0; i < k; i++)
		d->sfront[d->nsfront++] = so->rows[idx[k > 1 ? (int64_t)i * (n - 1) / (k - 1) : 0]];
	free(idx);
}

static int gather_serve(struct llmsim_report_data *d, struct llmsim_err *err)
{
	const struct llmsim_report_cfg *cfg = d->cfg;
	struct llmsim_infer_cfg *ic = &d->icfg;
	struct llmsim_err e = {0};
	llmsim_infer_cfg_init(ic, d->model, d->gpu);
	ic->tp = cfg->tp;
	ic->pp = cfg->pp;
	ic->ep = cfg->ep;
	ic->act_dtype = llmsim_graph_act_dtype(cfg->layer.dtype);
	ic->weight_dtype = cfg->weight_dtype;
	ic->kv_dtype = cfg->kv_dtype;
	ic->attn = cfg->attn;
	int rc = llmsim_infer_cfg_check(ic, err);
	if (rc)
		return rc;

	struct llmsim_infer_req req = {cfg->layer.batch, cfg->prompt, cfg->output};
	rc = llmsim_infer_run(ic, &req, &d->req, &e);
	if (rc == LLMSIM_ENOFIT)
		snprintf(d->serve_note, sizeof d->serve_note, "%s", e.msg);
	else if (rc)
		return llmsim_err_set(err, rc, "%s", e.msg);
	d->have_serve = rc == 0;

	/* Batch sizes 1, 2, 4, ... while the batch's cache fits. */
	for (int64_t b = 1; d->have_serve && d->ncurve < LLMSIM_REPORT_CURVE_MAX; b *= 2) {
		struct llmsim_infer_req r = {b, cfg->prompt, cfg->output};
		struct llmsim_report_serve_pt *p = &d->curve[d->ncurve];
		rc = llmsim_infer_run(ic, &r, &p->r, &e);
		if (rc == LLMSIM_ENOFIT)
			break;
		if (rc)
			return llmsim_err_set(err, rc, "%s", e.msg);
		p->batch = b;
		d->ncurve++;
	}

	/* The serving plan over the GPUs given (offline, no targets): its best
	 * configurations and its Pareto front. */
	struct llmsim_plan_serve_cfg pc = {
		.model = d->model, .gpu = d->gpu, .gpus = cfg->plan_gpus,
		.prompt = cfg->prompt, .output = cfg->output,
	};
	struct llmsim_plan_serve_out so;
	if (llmsim_plan_serve(&pc, &so, &e) == 0) {
		int top = cfg->top < LLMSIM_REPORT_TOP_MAX ? cfg->top : LLMSIM_REPORT_TOP_MAX;
		for (int64_t i = 0; i < so.nrows && d->nsplan < top; i++)
			d->splan[d->nsplan++] = so.rows[i];
		d->splan_evaluated = so.simulated;
		d->splan_feasible = so.feasible;
		front(d, &so);
		if (!so.nrows)
			snprintf(d->splan_note, sizeof d->splan_note, "%.900s", so.reason);
		llmsim_plan_serve_release(&so);
	} else {
		snprintf(d->splan_note, sizeof d->splan_note, "serving plan failed: %.900s",
			 e.msg);
	}
	return 0;
}

int cli_report_gather(struct llmsim_report_data *d, struct llmsim_err *err)
{
	llmsim_model_params(d->model, &d->params);
	int rc = llmsim_measured_load(d->gpu, d->cfg->db_path, &d->meas, err);
	if (rc)
		return rc;
	/* The workload first: the roofline shows one GPU of the layout it
	 * settles on (the plan's best when training without a layout). */
	d->layer = d->cfg->layer;
	if (d->cfg->layer.workload == LLMSIM_WORKLOAD_TRAIN) {
		rc = gather_train(d, err);
		d->layer.tp = d->have_train ? d->chosen.cfg.tp : d->cfg->train.tp;
	} else {
		rc = gather_serve(d, err);
		d->layer.tp = d->cfg->tp;
	}
	if (!rc)
		rc = cli_layer_ops(d->model, d->gpu, &d->layer, d->ops, &d->nops, err);
	return rc;
}

void cli_report_data_release(struct llmsim_report_data *d)
{
	llmsim_measured_release(&d->meas);
}
