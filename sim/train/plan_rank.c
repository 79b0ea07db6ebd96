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
#include "base/enum.h"
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
	return llmsim_enum_label(kind_names, LLMSIM_PLAN_KIND_COUNT, (int)k);
}

const char *llmsim_plan_kind_key(enum llmsim_plan_kind k)
{
	return llmsim_enum_label(kind_keys, LLMSIM_PLAN_KIND_COUNT, (int)k);
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
	c->chunks = e->chunks;
	c->schedule = e->chunks > 1 ? LLMSIM_SCHED_INTERLEAVED : LLMSIM_SCHED_1F1B;
	c->attn = e->attn;
	c->offload = e->offload;
	c->dpu = e->offload != LLMSIM_OFFLOAD_NONE && b->dpu;
	c->lora_rank = e->lora ? b->lora_rank : 0;
}

/* The one order of the ranking (plan_int.h): every "first" below is the
 * least by it. */
int plan_entry_cmp(const struct plan_entry *a, const struct plan_entry *b)
{
	if (a->tokens_per_s != b->tokens_per_s)
		return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
	const int ka[] = {a->offload, a->lora, a->zero, a->tp, a->pp, a->cp, a->ep,
			  a->micro_batch, a->recompute, a->chunks, a->attn};
	const int kb[] = {b->offload, b->lora, b->zero, b->tp, b->pp, b->cp, b->ep,
			  b->micro_batch, b->recompute, b->chunks, b->attn};
	for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

/* a before b (b may be NULL: nothing yet); the common case, tokens/s
 * apart, decided here (plan_entry_cmp's first key, the same answer) */
static inline int first_of(const struct plan_entry *a, const struct plan_entry *b)
{
	if (!b)
		return 1;
	if (a->tokens_per_s != b->tokens_per_s)
		return a->tokens_per_s > b->tokens_per_s;
	return plan_entry_cmp(a, b) < 0;
}

static int expand(struct llmsim_train_ctx *ctx, const struct plan_base *b,
		  const struct plan_entry *e, struct llmsim_train_result *r, struct llmsim_err *err)
{
	struct llmsim_train_cfg c;
	plan_entry_cfg(e, b, &c);
	return llmsim_train_simulate(ctx, &c, r, err);
}

/* The kinds an entry is of, a bit each (1u << enum llmsim_plan_kind). */
static unsigned kinds_of(int gpus_per_node, const struct plan_entry *e)
{
	return 1u << (e->offload == LLMSIM_OFFLOAD_NONE ? LLMSIM_PLAN_KIND_HBM
							: LLMSIM_PLAN_KIND_OFFLOAD) |
	       (e->tp <= gpus_per_node ? 1u << LLMSIM_PLAN_KIND_TP_NODE : 0) |
	       1u << (e->lora ? LLMSIM_PLAN_KIND_LORA : LLMSIM_PLAN_KIND_FULL);
}

/* The kinds this search has (out->kind[].searched), a bit each. */
static unsigned kinds_searched(const struct llmsim_plan_req *req, struct llmsim_plan_out *out)
{
	unsigned searched = 0;
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++) {
		out->kind[k].searched = k == LLMSIM_PLAN_KIND_OFFLOAD ? out->offload_searched
					: k >= LLMSIM_PLAN_KIND_FULL  ? req->lora_rank > 0
								      : 1;
		searched |= out->kind[k].searched ? 1u << k : 0;
	}
	return searched;
}

/* The best of each kind: the first of the kind (first[k]), or (as the
 * rows do) the first of it in HBM alone within the error of that (the
 * offload kind: its first). all->v[0..ncand): every entry of tokens/s
 * t_min or more; those below are looked at when a kind's error band
 * reaches them. */
static void pick_kinds(const struct plan_entries *all, int64_t ncand, double t_min, double e,
		       int gpus_per_node, struct plan_selection *sel)
{
	const struct plan_entry *pick[LLMSIM_PLAN_KIND_COUNT] = {0};
	int64_t n = ncand;
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++)
		if (sel->have_kind[k] && !(t_min * (1 + e) < sel->kind[k].tokens_per_s))
			n = all->n; /* its band may reach below t_min */
	for (int64_t i = 0; i < n; i++) {
		const struct plan_entry *x = &all->v[i];
		unsigned of = kinds_of(gpus_per_node, x);
		for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++)
			if (sel->have_kind[k] && (of >> k & 1) &&
			    !(x->tokens_per_s * (1 + e) < sel->kind[k].tokens_per_s) &&
			    (x->offload == LLMSIM_OFFLOAD_NONE || k == LLMSIM_PLAN_KIND_OFFLOAD) &&
			    first_of(x, pick[k]))
				pick[k] = x;
	}
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++)
		if (pick[k])
			sel->kind[k] = *pick[k];
}

/* One row's group, found in one pass over the entries: those of tokens/s
 * in [head / (1 + e), below) where head is the first of those below
 * `below` (found by the previous pass, as this one finds the next row's
 * head: the first below this group's floor). Returns that next head. */
static const struct plan_entry *group_scan(const struct plan_entries *es,
					   const struct plan_entry *head, double below, double e,
					   struct plan_group *g)
{
	double floor_tps = head->tokens_per_s / (1 + e);
	const struct plan_entry *rep = NULL, *next = NULL;
	g->n = 0;
	g->best_tps = g->worst_tps = head->tokens_per_s;
	for (int64_t i = 0; i < es->n; i++) {
		const struct plan_entry *x = &es->v[i];
		if (!(x->tokens_per_s < below))
			continue;
		if (x->tokens_per_s >= floor_tps) {
			g->n++;
			if (x->tokens_per_s < g->worst_tps)
				g->worst_tps = x->tokens_per_s;
			if (x->offload == LLMSIM_OFFLOAD_NONE && first_of(x, rep))
				rep = x;
		} else if (first_of(x, next)) {
			next = x;
		}
	}
	g->shown = rep ? *rep : *head;
	return next;
}

/* The groups of the rows (at most top), from the fastest: *n of them.
 * Returns 1 when they are those of every entry: es holds them all, or
 * every group's floor is at least t_min (es holding every entry of
 * tokens/s t_min or more) and the rows ran to top. */
static int find_groups(const struct plan_entries *es, const struct plan_entry *head, double e,
		       int top, double t_min, int complete, struct plan_group *g, int *n)
{
	double below = INFINITY;
	*n = 0;
	while (head && *n < top) {
		head = group_scan(es, head, below, e, &g[*n]);
		below = g[(*n)++].best_tps / (1 + e);
		if (!complete && below < t_min)
			return 0;
	}
	return complete || *n == top;
}

/* Move the entries of tokens/s t_min or more to the front: how many. */
static int64_t partition(struct plan_entries *es, double t_min)
{
	int64_t k = 0;
	for (int64_t i = 0; i < es->n; i++)
		if (es->v[i].tokens_per_s >= t_min) {
			struct plan_entry x = es->v[k];
			es->v[k++] = es->v[i];
			es->v[i] = x;
		}
	return k;
}

void plan_select(struct plan_entries *es, double e, int top, unsigned searched,
		 int gpus_per_node, struct plan_selection *sel)
{
	sel->nrows = 0;
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++)
		sel->have_kind[k] = 0;
	if (!es->n)
		return;
	const struct plan_entry *head = NULL, *first[LLMSIM_PLAN_KIND_COUNT] = {0};
	for (int64_t i = 0; i < es->n; i++) {
		const struct plan_entry *x = &es->v[i];
		unsigned of = kinds_of(gpus_per_node, x) & searched;
		if (first_of(x, head))
			head = x;
		for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++)
			if ((of >> k & 1) && first_of(x, first[k]))
				first[k] = x;
	}
	/* copies: the entries move */
	sel->fastest = *head;
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++)
		if ((sel->have_kind[k] = first[k] != NULL))
			sel->kind[k] = *first[k];
	double t_min = sel->fastest.tokens_per_s * pow(1 + e, -(top + 1));
	int64_t ncand = partition(es, t_min);
	struct plan_entries cand = {.v = es->v, .n = ncand};
	/* groups: from the fastest left, everything within (1 + e) of its
	 * step time; shown by the fastest of them in HBM alone */
	if (!find_groups(&cand, &sel->fastest, e, top, t_min, ncand == es->n, sel->rows,
			 &sel->nrows)) {
		ncand = es->n;
		find_groups(es, &sel->fastest, e, top, t_min, 1, sel->rows, &sel->nrows);
	}
	pick_kinds(es, ncand, t_min, e, gpus_per_node, sel);
}

int plan_rank(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	      const struct plan_base *b, struct plan_entries *es, struct llmsim_plan_out *out,
	      struct llmsim_err *err)
{
	if (!es->n)
		return 0;
	int top = req->top > 0 ? req->top : 5;
	struct plan_selection sel = {.rows = calloc((size_t)top, sizeof *sel.rows)};
	out->rows = calloc((size_t)top, sizeof *out->rows);
	if (!out->rows || !sel.rows) {
		free(sel.rows);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	double e = out->error_frac;
	plan_select(es, e, top, kinds_searched(req, out), ctx->gpu.gpus_per_node, &sel);
	int rc = expand(ctx, b, &sel.fastest, &out->fastest, err);
	for (int i = 0; i < sel.nrows && !rc; i++) {
		struct llmsim_plan_row *row = &out->rows[out->nrows++];
		rc = expand(ctx, b, &sel.rows[i].shown, &row->r, err);
		row->equivalent = sel.rows[i].n - 1;
		row->group_best_tokens_per_s = sel.rows[i].best_tps;
		row->group_worst_tokens_per_s = sel.rows[i].worst_tps;
	}
	free(sel.rows);
	/* the best of each kind, and whether it differs from what it is held
	 * against by more than the error */
	double first_tps = out->nrows ? out->rows[0].r.tokens_per_s : 0;
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT && !rc; k++) {
		struct llmsim_plan_best *kb = &out->kind[k];
		if (!sel.have_kind[k])
			continue;
		rc = expand(ctx, b, &sel.kind[k], &kb->r, err);
		kb->found = !rc;
		kb->vs_first = kb->r.tokens_per_s / first_tps - 1;
		kb->beyond_error = first_tps > kb->r.tokens_per_s * (1 + e);
	}
	/* offload wins only by more than the error over the best in HBM alone */
	struct llmsim_plan_best *off = &out->kind[LLMSIM_PLAN_KIND_OFFLOAD];
	const struct llmsim_plan_best *hbm = &out->kind[LLMSIM_PLAN_KIND_HBM];
	if (!rc && off->found)
		off->beyond_error = !hbm->found || off->r.tokens_per_s > hbm->r.tokens_per_s * (1 + e);
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
			LLMSIM_PLAN_STAGES, LLMSIM_PLAN_LAYERS, LLMSIM_PLAN_EXPERTS};
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
		LLMSIM_PLAN_STAGES, LLMSIM_PLAN_LAYERS};
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
