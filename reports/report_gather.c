/* report_gather.c - predictions and results the report shows. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_train_name(const struct llmsim_train_cfg *c, char *buf, size_t size)
{
	static const char *const rc[] = {"", " sel", " full"};
	char ep[16] = "", cp[16] = "", chunks[16] = "";
	if (c->ep > 1)
		snprintf(ep, sizeof ep, " ep%d", c->ep);
	if (c->cp > 1)
		snprintf(cp, sizeof cp, " cp%d", c->cp);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		snprintf(chunks, sizeof chunks, " v%d", c->chunks);
	snprintf(buf, size, "tp%d pp%d dp%d%s%s z%d mb%d%s%s", c->tp, c->pp, c->dp, cp, ep,
		 c->zero, c->micro_batch, chunks,
		 (unsigned)c->recompute < 3 ? rc[c->recompute] : "");
}

void report_serve_name(const struct llmsim_plan_serve_row *r, char *buf, size_t size)
{
	char pp[16] = "", ep[16] = "";
	if (r->pp > 1)
		snprintf(pp, sizeof pp, " pp%d", r->pp);
	if (r->ep > 1)
		snprintf(ep, sizeof ep, " ep%d", r->ep);
	snprintf(buf, size, "%dx tp%d%s%s %s/%s b%lld", r->replicas, r->tp, pp, ep,
		 llmsim_dtype_name(r->weight_dtype), llmsim_dtype_name(r->kv_dtype),
		 (long long)r->batch);
}

static int gather_roofline(struct report_data *d, struct llmsim_err *err)
{
	const struct llmsim_report_cfg *cfg = d->cfg;
	int rc = llmsim_roofline_init(d->gpu, &d->roof, err);
	if (rc)
		return rc;
	rc = llmsim_layer_ops(d->model, &d->layer, d->ops, &d->nops, err);
	if (rc)
		return rc;
	for (int i = 0; i < d->nops; i++) {
		struct llmsim_err e = {0};
		rc = llmsim_roofline_place(d->gpu, &d->roof, &d->ops[i].op, &d->pts[i], &e);
		if (rc)
			return llmsim_err_set(err, rc, "%s op '%s': %s",
					      llmsim_phase_name(cfg->layer.workload, d->ops[i].phase),
					      d->ops[i].name, e.msg);
	}
	return 0;
}

static int gather_train(struct report_data *d, struct llmsim_err *err)
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
		.top = cfg->top < REPORT_TOP_MAX ? cfg->top : REPORT_TOP_MAX,
	};
	memset(&out, 0, sizeof out);
	rc = llmsim_plan_run(ctx, &req, &out, &e);
	if (rc) {
		snprintf(d->train_note, sizeof d->train_note, "plan failed: %.900s", e.msg);
		rc = 0;
	} else {
		for (int i = 0; i < out.nresults && d->ntop < REPORT_TOP_MAX; i++)
			d->top[d->ntop++] = out.results[i];
		d->plan_evaluated = out.evaluated;
		d->plan_feasible = out.feasible;
		d->plan_elapsed_s = out.elapsed_s;
		if (!out.nresults)
			snprintf(d->train_note, sizeof d->train_note,
				 "no configuration of %d GPUs fits (%lld evaluated)", req.gpus,
				 (long long)out.evaluated);
		llmsim_plan_out_release(&out);
	}
	if (!d->chosen_given && d->ntop)
		d->chosen = d->top[0];
	d->have_train = d->chosen_given || d->ntop > 0;
done:
	llmsim_train_ctx_free(ctx);
	return rc;
}

static int gather_serve(struct report_data *d, struct llmsim_err *err)
{
	const struct llmsim_report_cfg *cfg = d->cfg;
	struct llmsim_infer_cfg *ic = &d->icfg;
	struct llmsim_err e = {0};
	llmsim_infer_cfg_init(ic, d->model, d->gpu);
	ic->tp = cfg->tp;
	ic->pp = cfg->pp;
	ic->ep = cfg->ep;
	ic->act_dtype = llmsim_layer_act_dtype(cfg->layer.dtype);
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
	for (int64_t b = 1; d->have_serve && d->ncurve < REPORT_CURVE_MAX; b *= 2) {
		struct llmsim_infer_req r = {b, cfg->prompt, cfg->output};
		struct report_serve_pt *p = &d->curve[d->ncurve];
		rc = llmsim_infer_run(ic, &r, &p->r, &e);
		if (rc == LLMSIM_ENOFIT)
			break;
		if (rc)
			return llmsim_err_set(err, rc, "%s", e.msg);
		p->batch = b;
		d->ncurve++;
	}

	/* The serving plan over the GPUs given: its best configurations. */
	struct llmsim_plan_serve_cfg pc = {
		.model = d->model, .gpu = d->gpu, .gpus = cfg->plan_gpus,
		.prompt = cfg->prompt, .output = cfg->output,
	};
	struct llmsim_plan_serve_row *rows = NULL;
	int64_t nrows = 0;
	if (llmsim_plan_serve(&pc, &rows, &nrows, &d->splan_evaluated, &d->splan_feasible,
			      &e) == 0) {
		int top = cfg->top < REPORT_TOP_MAX ? cfg->top : REPORT_TOP_MAX;
		for (int64_t i = 0; i < nrows && d->nsplan < top; i++)
			d->splan[d->nsplan++] = rows[i];
	} else {
		snprintf(d->splan_note, sizeof d->splan_note, "serving plan failed: %.900s",
			 e.msg);
	}
	if (!d->nsplan && !d->splan_note[0])
		snprintf(d->splan_note, sizeof d->splan_note,
			 "no configuration of %d GPUs fits (%lld evaluated)", cfg->plan_gpus,
			 (long long)d->splan_evaluated);
	free(rows);
	return 0;
}

int report_gather(struct report_data *d, struct llmsim_err *err)
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
	if (rc)
		return rc;
	return gather_roofline(d, err);
}

void report_data_release(struct report_data *d)
{
	llmsim_measured_release(&d->meas);
}
