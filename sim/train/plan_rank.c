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
	if (c->tp == 1 || !c->sequence_parallel) /* as the search set it */
		c->tp_overlap = LLMSIM_TP_OVERLAP_NONE;
	c->cp_comm = e->cp_comm;
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

double plan_rank_tps(double tokens_per_s, enum llmsim_offload offload, int mem_tight, double e)
{
	double t = tokens_per_s;
	if (offload != LLMSIM_OFFLOAD_NONE)
		t /= 1 + e;
	if (mem_tight)
		t /= 1 + e;
	return t;
}

/* The one order of the ranking (plan_int.h): every "first" below is the
 * least by it. */
int plan_entry_cmp(const struct plan_entry *a, const struct plan_entry *b)
{
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

/* a before b (b may be NULL: nothing yet); the common case, ranked apart,
 * decided here (plan_entry_cmp's first key, the same answer) */
static inline int first_of(const struct plan_entry *a, const struct plan_entry *b)
{
	if (!b)
		return 1;
	if (a->rank_tps != b->rank_tps)
		return a->rank_tps > b->rank_tps;
	return plan_entry_cmp(a, b) < 0;
}

/* a faster than b (b may be NULL), ties in the ranking's order: the
 * fastest is the first of the highest tokens/s */
static inline int faster(const struct plan_entry *a, const struct plan_entry *b)
{
	if (!b)
		return 1;
	if (a->tokens_per_s != b->tokens_per_s)
		return a->tokens_per_s > b->tokens_per_s;
	return plan_entry_cmp(a, b) < 0;
}

/* The lesser of low and e's rank (e NULL: nothing yet, -inf). */
static inline double below(double low, const struct plan_entry *e)
{
	double r = e ? e->rank_tps : -INFINITY;
	return r < low ? r : low;
}

/* One layout: the parallel degrees, ZeRO stage, offload and LoRA; what
 * varies inside it (micro-batch, recomputation, schedule, attention) folds. */
static int same_layout(const struct plan_entry *a, const struct plan_entry *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->ep == b->ep &&
	       a->zero == b->zero && a->offload == b->offload && a->lora == b->lora;
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

/* x into the rows' heads (row[0..*n), in the ranking's order, one per
 * layout, at most top): x heads its layout's row when it is first of it,
 * a new layout's when it is before the last head (which then drops out
 * when the rows are full). A head that drops out is no layout's first:
 * top heads of other layouts come before it, and every later head
 * before the last one. */
static void offer_row(const struct plan_entry **row, int *n, int top, const struct plan_entry *x)
{
	int k = 0;
	while (k < *n && !same_layout(row[k], x))
		k++;
	if (k < *n) {
		if (!first_of(x, row[k]))
			return;
	} else if (*n < top) {
		k = (*n)++;
	} else {
		k = top - 1; /* x is before it (the caller's test): it drops out */
	}
	for (; k > 0 && first_of(x, row[k - 1]); k--)
		row[k] = row[k - 1];
	row[k] = x;
}

/* The kinds whose best may be an entry other than their first: those an
 * entry in HBM alone can be of, apart from HBM (whose first is one). */
#define PLAN_KINDS_HBM_PICK                                                             \
	(1u << LLMSIM_PLAN_KIND_TP_NODE | 1u << LLMSIM_PLAN_KIND_FULL |                 \
	 1u << LLMSIM_PLAN_KIND_LORA)

int plan_select(const struct plan_entries *es, double e, int top, unsigned searched,
		int gpus_per_node, struct plan_selection *sel)
{
	enum { NK = LLMSIM_PLAN_KIND_COUNT };
	sel->nrows = 0;
	for (int k = 0; k < NK; k++)
		sel->have_kind[k] = 0;
	if (!es->n || top < 1)
		return 0;
	const struct plan_entry *fastest = NULL, *first[NK] = {0}, *cand[NK] = {0};
	const struct plan_entry **row = malloc((size_t)top * sizeof *row);
	if (!row)
		return LLMSIM_ENOMEM;
	int n = 0;
	/* one pass: the fastest, the rows' heads, each kind's first and (the
	 * kinds of PLAN_KINDS_HBM_PICK) its first in HBM alone; an entry
	 * ranked below `low` (the least of those it could displace, once
	 * each is there) is first of none of them */
	unsigned pick = searched & PLAN_KINDS_HBM_PICK;
	double low = -INFINITY;
	for (int64_t i = 0; i < es->n; i++) {
		const struct plan_entry *x = &es->v[i];
		if (faster(x, fastest))
			fastest = x;
		if (x->rank_tps < low)
			continue;
		if (n < top || first_of(x, row[top - 1]))
			offer_row(row, &n, top, x);
		unsigned of = kinds_of(gpus_per_node, x) & searched;
		unsigned hbm = x->offload == LLMSIM_OFFLOAD_NONE ? of & PLAN_KINDS_HBM_PICK : 0;
		for (; of; of &= of - 1) {
			int k = __builtin_ctz(of);
			if (first_of(x, first[k]))
				first[k] = x;
		}
		for (; hbm; hbm &= hbm - 1) {
			int k = __builtin_ctz(hbm);
			if (first_of(x, cand[k]))
				cand[k] = x;
		}
		low = n == top ? row[top - 1]->rank_tps : -INFINITY;
		for (int k = 0; k < NK; k++) {
			if (searched >> k & 1)
				low = below(low, first[k]);
			if (pick >> k & 1)
				low = below(low, cand[k]);
		}
	}
	/* the kinds whose walk would reach their first in HBM alone only past
	 * their first: it stops at an entry of the kind out of the error of
	 * the first (tokens/s (1 + e) below it), that one or one before it */
	unsigned walk = 0;
	for (int k = 0; k < NK; k++)
		if (cand[k] && cand[k] != first[k])
			walk |= 1u << k;
	/* another pass: what folds into each row (its layout's later entries
	 * within the error of its head), and whether a kind's walk stops */
	double floor_tps = INFINITY;
	for (int r = 0; r < n; r++) {
		struct plan_group *g = &sel->rows[r];
		g->shown = *row[r];
		g->n = 1;
		g->best_tps = g->worst_tps = row[r]->tokens_per_s;
		floor_tps = fmin(floor_tps, row[r]->tokens_per_s);
	}
	unsigned stopped = 0;
	for (int64_t i = 0; i < es->n; i++) {
		const struct plan_entry *x = &es->v[i];
		double up = x->tokens_per_s * (1 + e);
		if (up >= floor_tps)
			for (int r = 0; r < n; r++)
				if (x != row[r] && same_layout(x, row[r]) &&
				    up >= row[r]->tokens_per_s) {
					struct plan_group *g = &sel->rows[r];
					g->n++;
					g->best_tps = fmax(g->best_tps, x->tokens_per_s);
					g->worst_tps = fmin(g->worst_tps, x->tokens_per_s);
				}
		if (!(walk & ~stopped))
			continue;
		for (unsigned w = walk & ~stopped & kinds_of(gpus_per_node, x); w; w &= w - 1) {
			int k = __builtin_ctz(w);
			if (up < first[k]->tokens_per_s && (x == cand[k] || first_of(x, cand[k])))
				stopped |= 1u << k;
		}
	}
	sel->nrows = n;
	sel->fastest = *fastest;
	for (int k = 0; k < NK; k++) {
		sel->have_kind[k] = first[k] != NULL;
		if (first[k])
			sel->kind[k] = cand[k] && !(stopped >> k & 1) ? *cand[k] : *first[k];
	}
	free(row);
	return 0;
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
	if (plan_select(es, e, top, kinds_searched(req, out), ctx->gpu.gpus_per_node, &sel)) {
		free(sel.rows);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
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
