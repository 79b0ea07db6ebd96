/*
 * plan_rank.c - what the planner makes of the configurations that fit
 * (plan.h): the batch rule, the distinct rows (groups within the expected
 * error), the best of each kind, the hint when nothing fits, and the cost
 * of a token budget.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "plan_int.h"
#include "train_int.h"

static const char *const kind_names[LLMSIM_PLAN_KIND_COUNT] = {
	[LLMSIM_PLAN_KIND_HBM] = "best in HBM alone",
	[LLMSIM_PLAN_KIND_OFFLOAD] = "best with offload",
	[LLMSIM_PLAN_KIND_TP_NODE] = "best with TP inside a node",
	[LLMSIM_PLAN_KIND_FULL] = "best full training",
	[LLMSIM_PLAN_KIND_LORA] = "best with LoRA",
};
static const char *const kind_keys[LLMSIM_PLAN_KIND_COUNT] = {
	[LLMSIM_PLAN_KIND_HBM] = "hbm_only",
	[LLMSIM_PLAN_KIND_OFFLOAD] = "offload",
	[LLMSIM_PLAN_KIND_TP_NODE] = "tp_in_node",
	[LLMSIM_PLAN_KIND_FULL] = "full_training",
	[LLMSIM_PLAN_KIND_LORA] = "lora",
};

const char *llmsim_plan_kind_name(enum llmsim_plan_kind k)
{
	return (unsigned)k < LLMSIM_PLAN_KIND_COUNT ? kind_names[k] : "?";
}

const char *llmsim_plan_kind_key(enum llmsim_plan_kind k)
{
	return (unsigned)k < LLMSIM_PLAN_KIND_COUNT ? kind_keys[k] : "?";
}

int64_t llmsim_plan_batch_rule(int gpus, int64_t seq, double *tokens)
{
	double budget = fmax(4.0 * 1024 * 1024, 1024.0 * (gpus > 0 ? gpus : 1));
	if (tokens)
		*tokens = budget;
	int64_t q = gpus > 0 ? gpus : 1;
	while (q % 2 == 0)
		q /= 2;
	double x = budget / ((double)(seq > 0 ? seq : 1) * (double)q);
	int k = x > 1 ? (int)lround(log2(x)) : 0;
	while (k > 0 && (q << k) > LLMSIM_MAX_BATCH)
		k--;
	return q << k;
}

void plan_entry_cfg(const struct plan_entry *e, const struct plan_base *b,
		    struct llmsim_train_cfg *c)
{
	*c = b->cfg;
	c->tp = e->tp, c->pp = e->pp, c->cp = e->cp, c->ep = e->ep;
	c->dp = c->gpus / (c->tp * c->cp * c->pp);
	c->zero = e->zero;
	c->micro_batch = e->micro_batch;
	c->recompute = e->recompute;
	c->recompute_modules = e->modules;
	c->offload_activations = e->act_offload / 100.0;
	c->chunks = e->chunks;
	c->schedule = e->chunks > 1 ? LLMSIM_SCHED_INTERLEAVED : LLMSIM_SCHED_1F1B;
	c->attn = e->attn;
	c->offload = e->offload;
	c->dpu = e->offload != LLMSIM_OFFLOAD_NONE && b->dpu;
	c->lora_rank = e->lora ? b->lora_rank : 0;
}

double plan_rank_tps(const struct llmsim_train_result *r, double e)
{
	double t = r->tokens_per_s;
	if (r->cfg.offload != LLMSIM_OFFLOAD_NONE)
		t /= 1 + e;
	if (r->mem_tight)
		t /= 1 + e;
	return t;
}

/* The ranking's order (plan.h): plan_rank_tps, then tokens/s, then memory
 * to spare before within the error of the limit; ties in an order that
 * does not depend on the search's: HBM alone before offload, then the
 * smaller degrees and options. */
static int cmp_entry(const void *pa, const void *pb)
{
	const struct plan_entry *a = pa, *b = pb;
	if (a->rank_tps != b->rank_tps)
		return a->rank_tps > b->rank_tps ? -1 : 1;
	if (a->tokens_per_s != b->tokens_per_s)
		return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
	if (a->tight != b->tight)
		return a->tight < b->tight ? -1 : 1;
	const int ka[] = {a->offload, a->lora, a->zero, a->tp, a->pp, a->cp, a->ep,
			  a->micro_batch, a->recompute, a->modules, a->act_offload, a->chunks, a->attn};
	const int kb[] = {b->offload, b->lora, b->zero, b->tp, b->pp, b->cp, b->ep,
			  b->micro_batch, b->recompute, b->modules, b->act_offload, b->chunks, b->attn};
	for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* One layout: the parallel degrees, ZeRO stage, offload and LoRA; what
 * varies inside it (micro-batch, recomputation, schedule, attention) folds. */
static int same_layout(const struct plan_entry *a, const struct plan_entry *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->ep == b->ep &&
	       a->zero == b->zero && a->offload == b->offload && a->lora == b->lora;
}

/* The rows: in the ranking's order, the first configuration of each
 * layout not shown yet, until `top`; every later configuration of a shown
 * layout within the error e of its row folds into it. first[k]: the entry
 * of row k. Returns the rows found. */
static int fold_rows(const struct plan_entries *es, double e, int top, int64_t *first,
		     struct llmsim_plan_row *rows)
{
	int n = 0;
	for (int64_t i = 0; i < es->n; i++) {
		const struct plan_entry *x = &es->v[i];
		int k = 0;
		while (k < n && !same_layout(&es->v[first[k]], x))
			k++;
		if (k < n) {
			if (x->tokens_per_s * (1 + e) >= es->v[first[k]].tokens_per_s) {
				rows[k].equivalent++;
				rows[k].group_best_tokens_per_s =
					fmax(rows[k].group_best_tokens_per_s, x->tokens_per_s);
				rows[k].group_worst_tokens_per_s =
					fmin(rows[k].group_worst_tokens_per_s, x->tokens_per_s);
			}
			continue;
		}
		if (n == top)
			continue;
		first[n] = i;
		rows[n].equivalent = 0;
		rows[n].group_best_tokens_per_s = rows[n].group_worst_tokens_per_s = x->tokens_per_s;
		n++;
	}
	return n;
}

static int expand(struct llmsim_train_ctx *ctx, const struct plan_base *b,
		  const struct plan_entry *e, struct llmsim_train_result *r, struct llmsim_err *err)
{
	struct llmsim_train_cfg c;
	plan_entry_cfg(e, b, &c);
	return llmsim_train_simulate(ctx, &c, r, err);
}

static int of_kind(const struct llmsim_train_ctx *ctx, const struct plan_entry *e,
		   enum llmsim_plan_kind k)
{
	switch (k) {
	case LLMSIM_PLAN_KIND_HBM: return e->offload == LLMSIM_OFFLOAD_NONE;
	case LLMSIM_PLAN_KIND_OFFLOAD: return e->offload != LLMSIM_OFFLOAD_NONE;
	case LLMSIM_PLAN_KIND_TP_NODE: return e->tp <= ctx->gpu.gpus_per_node;
	case LLMSIM_PLAN_KIND_FULL: return !e->lora;
	case LLMSIM_PLAN_KIND_LORA: return e->lora;
	default: return 0;
	}
}

/* The best of each kind, and whether it differs from what it is held
 * against by more than the error. */
static int best_kinds(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
		      const struct plan_base *b, const struct plan_entries *es,
		      struct llmsim_plan_out *out, struct llmsim_err *err)
{
	double e = out->error_frac, first = out->rows[0].r.tokens_per_s;
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++) {
		struct llmsim_plan_best *kb = &out->kind[k];
		kb->searched = k == LLMSIM_PLAN_KIND_OFFLOAD	? out->offload_searched
			       : k >= LLMSIM_PLAN_KIND_FULL	? req->lora_rank > 0
								: 1;
		if (!kb->searched)
			continue;
		/* the fastest of the kind, or (as the rows do) the fastest of it in
		 * HBM alone within the error of that */
		int64_t first_i = -1, pick = -1;
		for (int64_t i = 0; i < es->n && pick < 0; i++) {
			if (!of_kind(ctx, &es->v[i], k))
				continue;
			if (first_i < 0)
				first_i = i;
			if (es->v[i].tokens_per_s * (1 + e) < es->v[first_i].tokens_per_s)
				break;
			if (es->v[i].offload == LLMSIM_OFFLOAD_NONE || k == LLMSIM_PLAN_KIND_OFFLOAD)
				pick = i;
		}
		if (pick < 0)
			pick = first_i;
		if (pick >= 0) {
			int rc = expand(ctx, b, &es->v[pick], &kb->r, err);
			if (rc)
				return rc;
			kb->found = 1;
		}
		if (kb->found) {
			kb->vs_first = kb->r.tokens_per_s / first - 1;
			kb->beyond_error = first > kb->r.tokens_per_s * (1 + e);
		}
	}
	/* offload wins only by more than the error over the best in HBM alone */
	struct llmsim_plan_best *off = &out->kind[LLMSIM_PLAN_KIND_OFFLOAD];
	const struct llmsim_plan_best *hbm = &out->kind[LLMSIM_PLAN_KIND_HBM];
	if (off->found)
		off->beyond_error = !hbm->found || off->r.tokens_per_s > hbm->r.tokens_per_s * (1 + e);
	return 0;
}

int plan_rank(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	      const struct plan_base *b, struct plan_entries *es, struct llmsim_plan_out *out,
	      struct llmsim_err *err)
{
	if (!es->n)
		return 0;
	qsort(es->v, (size_t)es->n, sizeof *es->v, cmp_entry);
	int top = req->top > 0 ? req->top : 5;
	out->rows = calloc((size_t)top, sizeof *out->rows);
	if (!out->rows)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	int64_t fastest = 0;
	for (int64_t i = 1; i < es->n; i++)
		if (es->v[i].tokens_per_s > es->v[fastest].tokens_per_s)
			fastest = i;
	int rc = expand(ctx, b, &es->v[fastest], &out->fastest, err);
	int64_t *first = malloc((size_t)top * sizeof *first);
	if (!first)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	out->nrows = fold_rows(es, out->error_frac, top, first, out->rows);
	for (int k = 0; k < out->nrows && !rc; k++)
		rc = expand(ctx, b, &es->v[first[k]], &out->rows[k].r, err);
	free(first);
	if (!rc)
		rc = best_kinds(ctx, req, b, es, out, err);
	return rc;
}

/* The structural reason that pruned the most, among those given. */
static enum llmsim_plan_why largest(const struct llmsim_plan_out *out,
				    const enum llmsim_plan_why *w, int n)
{
	enum llmsim_plan_why best = w[0];
	for (int i = 1; i < n; i++)
		if (out->why[w[i]] > out->why[best])
			best = w[i];
	return best;
}

void plan_hint(const struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	       const struct plan_survivors *sv, struct llmsim_plan_out *out)
{
	const struct llmsim_model *m = &ctx->model;
	char *h = out->hint;
	size_t n = sizeof out->hint;
	if (out->have_closest) {
		const struct llmsim_train_result *r = &out->closest;
		double gb = (r->mem.total_bytes - r->mem.hbm_bytes) / 1e9;
		double hb = (r->mem.host_per_node_bytes - r->mem.host_bytes) / 1e9;
		int k = r->gpu_fits ? snprintf(h, n, "memory: every valid configuration runs out of "
						    "memory; the closest needs %.1f GB more host "
						    "memory per node", hb)
				    : snprintf(h, n, "memory: every valid configuration runs out of "
						    "memory; the closest needs %.1f GB more per GPU",
					       gb);
		if (k > 0 && (size_t)k < n)
			snprintf(h + k, n - k, " (full training keeps %s per parameter of model "
			       "state): more GPUs%s%s",
			       req->recipe == LLMSIM_RECIPE_MEGATRON ||
					       req->recipe == LLMSIM_RECIPE_LLAMA3
				       ? "18 B"
				       : "16 B",
			       req->lora_rank ? "" : ", --lora-rank 16",
			       req->no_offload ? ", or drop --no-offload" : "");
		return;
	}
	if (!sv->layouts) {
		static const enum llmsim_plan_why s[] = {
			LLMSIM_PLAN_HEADS, LLMSIM_PLAN_KV_HEADS, LLMSIM_PLAN_SEQ,
			LLMSIM_PLAN_STAGES, LLMSIM_PLAN_LAYERS, LLMSIM_PLAN_EXPERTS,
			LLMSIM_PLAN_STACK};
		enum llmsim_plan_why w = largest(out, s, (int)(sizeof s / sizeof s[0]));
		switch (w) {
		case LLMSIM_PLAN_HEADS:
			snprintf(h, n, "layout: %d attention heads are divisible by no tp of %d "
				 "GPUs tried", m->heads, req->gpus);
			break;
		case LLMSIM_PLAN_KV_HEADS:
			snprintf(h, n, "layout: %d kv heads and tp: neither divides the other for "
				 "any tp of %d GPUs tried", m->kv_heads, req->gpus);
			break;
		case LLMSIM_PLAN_SEQ:
			snprintf(h, n, "layout: seq %lld is not divisible by 2 x cp for any cp "
				 "tried", (long long)req->seq);
			break;
		case LLMSIM_PLAN_STAGES:
			snprintf(h, n, "layout: %d layers are fewer than the pipeline stages "
				 "tried", m->layers);
			break;
		case LLMSIM_PLAN_LAYERS:
			snprintf(h, n, "layout: %d layers are divisible by no pp x chunks tried "
				 "(drop --even-pp to allow uneven stages)", m->layers);
			break;
		case LLMSIM_PLAN_STACK:
			snprintf(h, n, "stack: the %s stack launches none of the layouts of %d GPUs "
				 "tried (a parallelism it lacks; see its hw/stacks file)",
				 req->stack ? req->stack->name : "?", req->gpus);
			break;
		default:
			snprintf(h, n, "layout: %d experts are divisible by no ep tried, or ep "
				 "divides no dp x cp", m->moe.experts);
			break;
		}
		return;
	}
	if (!sv->batch) {
		int64_t q = sv->min_dp > 0 ? sv->min_dp : 1;
		int64_t up = (out->global_batch + q - 1) / q * q;
		snprintf(h, n, "batch: global batch %lld is not divisible by micro-batch (1-16) x "
			 "dp for any layout: dp is %d or more here; use a multiple of %lld "
			 "(e.g. --global-batch %lld)",
			 (long long)out->global_batch, sv->min_dp, (long long)q, (long long)up);
		return;
	}
	static const enum llmsim_plan_why o[] = {
		LLMSIM_PLAN_INTERLEAVE_PP, LLMSIM_PLAN_INTERLEAVE_MB, LLMSIM_PLAN_ZERO3_PP,
		LLMSIM_PLAN_KERNEL, LLMSIM_PLAN_OFFLOAD_ZERO, LLMSIM_PLAN_OFFLOAD_PARAMS,
		LLMSIM_PLAN_STAGES, LLMSIM_PLAN_LAYERS, LLMSIM_PLAN_STACK};
	enum llmsim_plan_why w = largest(out, o, (int)(sizeof o / sizeof o[0]));
	snprintf(h, n, "rules: every configuration left breaks a rule, most often: %s (%lld)",
		 llmsim_plan_why_name(w), (long long)out->why[w]);
}

void llmsim_plan_budget(const struct llmsim_gpu *gpu, const struct llmsim_train_result *r,
			double tokens, struct llmsim_plan_budget *b)
{
	memset(b, 0, sizeof *b);
	b->tokens = tokens;
	if (!(r->tokens_per_s > 0) || !(tokens > 0))
		return;
	b->time_s = tokens / r->tokens_per_s;
	b->gpu_hours = b->time_s * r->cfg.gpus / 3600;
	/* the step's tensor load: the one the ops were priced in, or (no
	 * power limit in the model) its FLOP rate */
	double rho = r->load_rho;
	if (!(rho > 0) && r->time.step_s > 0)
		rho = llmsim_tensor_rho(gpu, r->cfg.dtype, r->hw_flops / r->cfg.gpus,
					r->time.step_s);
	b->power_w_per_gpu = llmsim_power_w(gpu, rho, 1);
	b->energy_j = b->power_w_per_gpu * r->cfg.gpus * b->time_s;
}
