/*
 * plan_serve.c - the serving plan search (see plan_serve.h). Each
 * configuration is one llmsim_infer_run of the request shape; batches are
 * powers of two up to the largest that fits, plus that largest.
 */
#include "plan_serve.h"

#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"

static int cmp_rows(const void *a, const void *b)
{
	const struct llmsim_plan_serve_row *x = a, *y = b;
	if (x->feasible != y->feasible)
		return y->feasible - x->feasible;
	if (x->tokens_per_s != y->tokens_per_s)
		return x->tokens_per_s < y->tokens_per_s ? 1 : -1;
	return x->ttft_s < y->ttft_s ? -1 : x->ttft_s > y->ttft_s;
}

struct rows {
	struct llmsim_plan_serve_row *v;
	int64_t n, cap;
};

static int push(struct rows *r, const struct llmsim_plan_serve_row *row)
{
	if (r->n == r->cap) {
		int64_t cap = r->cap ? 2 * r->cap : 256;
		void *p = realloc(r->v, (size_t)cap * sizeof *r->v);
		if (!p)
			return LLMSIM_ENOMEM;
		r->v = p;
		r->cap = cap;
	}
	r->v[r->n++] = *row;
	return 0;
}

/* One layout and data-type pair: every batch size. */
static int sweep(const struct llmsim_plan_serve_cfg *pc, struct llmsim_infer_cfg *cfg,
		 int replicas, struct rows *out, int64_t *evaluated, int64_t *feasible,
		 struct llmsim_err *err)
{
	struct llmsim_infer_req req = {.batch = 1, .prompt = pc->prompt, .output = pc->output};
	struct llmsim_infer_result res;
	struct llmsim_err e2;
	int64_t cap = pc->max_batch > 0 ? pc->max_batch : 1024;
	int64_t b = 1, maxb = -1;
	for (;;) {
		req.batch = b;
		(*evaluated)++;
		int rc = llmsim_infer_run(cfg, &req, &res, &e2);
		if (rc == LLMSIM_ENOFIT)
			return 0; /* weights or this batch do not fit */
		if (rc == LLMSIM_EUNSUPPORTED)
			return 0;
		if (rc) {
			*err = e2;
			return rc;
		}
		maxb = res.max_batch < cap ? res.max_batch : cap;
		struct llmsim_plan_serve_row row = {
			.replicas = replicas, .tp = cfg->tp, .pp = cfg->pp, .ep = cfg->ep,
			.weight_dtype = cfg->weight_dtype, .kv_dtype = cfg->kv_dtype,
			.batch = b, .max_batch = res.max_batch, .ttft_s = res.ttft_s,
			.tpot_s = res.tpot_s, .e2e_s = res.e2e_s,
			.tokens_per_s = res.tokens_per_s * replicas,
			.weight_bytes_per_gpu = res.mem.weight_bytes,
		};
		row.tokens_per_s_per_gpu = row.tokens_per_s / pc->gpus;
		row.feasible = (pc->ttft_slo_s <= 0 || res.ttft_s <= pc->ttft_slo_s) &&
			       (pc->tpot_slo_s <= 0 || res.tpot_s <= pc->tpot_slo_s);
		*feasible += row.feasible;
		if ((rc = push(out, &row)))
			return llmsim_err_set(err, rc, "out of memory");
		if (b >= maxb)
			return 0;
		b = b * 2 > maxb ? maxb : b * 2;
	}
}

int llmsim_plan_serve(const struct llmsim_plan_serve_cfg *pc,
		      struct llmsim_plan_serve_row **rows, int64_t *nrows,
		      int64_t *evaluated, int64_t *feasible, struct llmsim_err *err)
{
	*rows = NULL;
	*nrows = *evaluated = *feasible = 0;
	if (pc->gpus < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "need at least one GPU");
	/* before any product of them is formed (base/bounds.h says why) */
	if (pc->gpus > LLMSIM_MAX_GPUS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d GPUs, not %d", LLMSIM_MAX_GPUS,
				      pc->gpus);
	if (pc->prompt > LLMSIM_MAX_TOKENS || pc->output > LLMSIM_MAX_TOKENS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d prompt or output tokens",
				      LLMSIM_MAX_TOKENS);
	if (pc->max_batch > LLMSIM_MAX_BATCH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d sequences in a batch, not %lld",
				      LLMSIM_MAX_BATCH, (long long)pc->max_batch);
	static const enum llmsim_dtype wts[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8, LLMSIM_DT_INT4,
						LLMSIM_DT_FP4};
	static const enum llmsim_dtype kvs[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8};
	const struct llmsim_model *m = pc->model;
	struct rows out = {0};
	int rc = 0;
	/* tp divides the GPUs, pp divides the GPUs per tp group, ep divides tp */
	int dtp[256], dpp[256], dep[256];
	int ntp = llmsim_divisors(pc->gpus, dtp, 256);
	for (int a = 0; a < ntp && !rc; a++) {
		int tp = dtp[a];
		int npp = llmsim_divisors(pc->gpus / tp, dpp, 256);
		for (int b = 0; b < npp && !rc; b++) {
			int pp = dpp[b];
			if (pp > m->layers)
				break; /* ascending: the rest are larger */
			int nep = llmsim_divisors(tp, dep, 256);
			for (int e = 0; e < nep && !rc; e++) {
				int ep = dep[e];
				if (ep > 1 && (!m->has_moe || m->moe.experts % ep))
					continue;
				for (size_t w = 0; w < sizeof wts / sizeof wts[0] && !rc; w++) {
					if (pc->weight_dtypes ? !(pc->weight_dtypes & 1u << wts[w])
							      : wts[w] == LLMSIM_DT_FP4 &&
									!pc->gpu->tensor_flops_per_s[LLMSIM_DT_FP4])
						continue;
					for (size_t k = 0; k < sizeof kvs / sizeof kvs[0] && !rc; k++) {
						if (pc->kv_dtypes && !(pc->kv_dtypes & 1u << kvs[k]))
							continue;
						struct llmsim_infer_cfg cfg;
						llmsim_infer_cfg_init(&cfg, m, pc->gpu);
						cfg.weight_dtype = wts[w];
						cfg.kv_dtype = kvs[k];
						int replicas;
						if (llmsim_infer_layout(&cfg, pc->gpus, tp, pp, ep, &replicas, NULL))
							continue; /* heads or widths not divisible */
						rc = sweep(pc, &cfg, replicas, &out, evaluated, feasible, err);
					}
				}
			}
		}
	}
	if (rc) {
		free(out.v);
		return rc;
	}
	if (out.n)
		qsort(out.v, (size_t)out.n, sizeof *out.v, cmp_rows);
	*rows = out.v;
	*nrows = out.n;
	return 0;
}
