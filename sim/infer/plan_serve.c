/*
 * plan_serve.c - the serving plan search (see plan_serve.h). Every
 * configuration is a run of the serving engine (serve.c) on one replica
 * with its share of the load; replicas are identical, so the deployment's
 * figures are one replica's times the replicas. The disaggregated pools
 * are in plan_serve_disagg.c.
 */
#include "plan_serve.h"
#include "plan_serve_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bounds.h"

static const char *const why_names[LLMSIM_SERVE_WHY_COUNT] = {
	[LLMSIM_SERVE_LAYOUT] = "heads, widths or experts not divisible by the layout",
	[LLMSIM_SERVE_DTYPE] = "a data type the GPU does not run",
	[LLMSIM_SERVE_WEIGHTS] = "the weights do not fit",
	[LLMSIM_SERVE_KV] = "one request's KV cache does not fit",
	[LLMSIM_SERVE_TTFT] = "simulated: misses the TTFT target",
	[LLMSIM_SERVE_TPOT] = "simulated: misses the TPOT target",
	[LLMSIM_SERVE_LOAD] = "simulated: its replicas cannot keep up with the load",
	[LLMSIM_SERVE_BOUND] = "bound: one request alone misses a target",
};
static const char *const why_keys[LLMSIM_SERVE_WHY_COUNT] = {
	[LLMSIM_SERVE_LAYOUT] = "layout", [LLMSIM_SERVE_DTYPE] = "dtype",
	[LLMSIM_SERVE_WEIGHTS] = "weights", [LLMSIM_SERVE_KV] = "kv",
	[LLMSIM_SERVE_TTFT] = "ttft", [LLMSIM_SERVE_TPOT] = "tpot",
	[LLMSIM_SERVE_LOAD] = "load", [LLMSIM_SERVE_BOUND] = "bound",
};

const char *llmsim_serve_why_name(enum llmsim_serve_why w)
{
	return (unsigned)w < LLMSIM_SERVE_WHY_COUNT ? why_names[w] : "?";
}

const char *llmsim_serve_why_key(enum llmsim_serve_why w)
{
	return (unsigned)w < LLMSIM_SERVE_WHY_COUNT ? why_keys[w] : "?";
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double plan_serve_quantile(const struct llmsim_pcts *p, double q)
{
	return q <= 0.5 ? p->p50 : q <= 0.9 ? p->p90 : p->p99;
}

int plan_serve_push(struct plan_serve_search *s, const struct llmsim_plan_serve_row *row)
{
	struct llmsim_plan_serve_out *o = s->out;
	if (o->nrows == s->cap) {
		int64_t cap = s->cap ? 2 * s->cap : 128;
		void *p = realloc(o->rows, (size_t)cap * sizeof *o->rows);
		if (!p)
			return LLMSIM_ENOMEM;
		o->rows = p;
		s->cap = cap;
	}
	o->rows[o->nrows++] = *row;
	return 0;
}

/* Whether a row meets the targets (only when one is given), and by how
 * much it misses; its rates per GPU and per user, and its cost. */
void plan_serve_judge(const struct plan_serve_search *s, struct llmsim_plan_serve_row *r)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	double q = s->out->quantile;
	r->ttft_q_s = plan_serve_quantile(&r->ttft_s, q);
	r->tpot_q_s = plan_serve_quantile(&r->tpot_s, q);
	int ttft_ok = !(pc->ttft_slo_s > 0) || r->ttft_q_s <= pc->ttft_slo_s;
	int tpot_ok = !(pc->tpot_slo_s > 0) || r->tpot_q_s <= pc->tpot_slo_s;
	/* a capacity search also asks that the replicas keep up with the load */
	r->feasible = s->out->targets && ttft_ok && tpot_ok && (!s->out->capacity || r->keeps_up);
	r->miss = 0;
	if (pc->ttft_slo_s > 0)
		r->miss = fmax(r->miss, r->ttft_q_s / pc->ttft_slo_s);
	if (pc->tpot_slo_s > 0)
		r->miss = fmax(r->miss, r->tpot_q_s / pc->tpot_slo_s);
	if (!r->gpus)
		r->gpus = pc->gpus;
	r->tokens_per_s_per_user = r->tpot_s.mean > 0 ? 1 / r->tpot_s.mean : 0;
	r->tokens_per_s_per_gpu = r->tokens_per_s / r->gpus;
	r->usd_per_mtok = pc->usd_per_gpu_hour > 0 && r->tokens_per_s > 0
				  ? r->gpus * pc->usd_per_gpu_hour / 3600 / r->tokens_per_s * 1e6
				  : 0;
	if (r->feasible)
		s->out->feasible++;
	else if (s->out->targets)
		s->out->why[ttft_ok && tpot_ok ? LLMSIM_SERVE_LOAD
			    : ttft_ok	      ? LLMSIM_SERVE_TPOT
					      : LLMSIM_SERVE_TTFT]++;
	if (pc->progress)
		pc->progress(pc->progress_ctx, s->out->simulated, s->out->pruned);
}

void plan_serve_engine(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
		       int replicas, int64_t max_seqs, struct llmsim_serve_cfg *sc)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	llmsim_serve_cfg_init(sc, pc->model, pc->gpu);
	sc->infer = *ic;
	sc->prompt.kind = sc->output.kind = LLMSIM_DIST_FIXED;
	sc->prompt.a = (double)pc->prompt;
	sc->output.a = (double)pc->output;
	if (pc->engine.server != LLMSIM_SERVER_GENERIC) {
		llmsim_serve_server(sc, pc->engine.server);
	} else {
		sc->chunked_prefill = 1; /* vLLM V1's default */
	}
	sc->eng = pc->engine;
	sc->max_batch = max_seqs;
	int64_t req = pc->requests > 0 ? pc->requests : 300;
	if (pc->load == LLMSIM_LOAD_RATE) {
		sc->rate_per_s = pc->rate_per_s / replicas;
	} else if (pc->load == LLMSIM_LOAD_CONCURRENCY) {
		sc->concurrency = plan_serve_users(pc->concurrency, replicas);
		req = req > 8 * sc->concurrency ? req : 8 * sc->concurrency;
	} else {
		req = req > 4 * max_seqs ? req : 4 * max_seqs;
	}
	sc->requests = req < LLMSIM_MAX_REQUESTS ? req : LLMSIM_MAX_REQUESTS;
}

int64_t plan_serve_users(int64_t users, int replicas)
{
	int64_t u = (users + replicas / 2) / replicas;
	return u > 0 ? u : 1;
}

/* The running-sequence caps tried: powers of two up to the largest, and
 * under a closed loop no more than a replica's users (a sweep stops at the
 * first cap its run never reached: a larger one runs the same). */
int plan_serve_caps(const struct plan_serve_search *s, int replicas, int64_t *caps)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	int64_t top = pc->max_batch > 0 ? pc->max_batch : 256;
	if (pc->load == LLMSIM_LOAD_CONCURRENCY) {
		int64_t u = plan_serve_users(pc->concurrency, replicas);
		top = top < u ? top : u;
	}
	int n = 0;
	for (int64_t b = 1; b < top && n < PLAN_SERVE_MAX_CAPS - 1; b *= 2)
		caps[n++] = b;
	caps[n++] = top;
	return n;
}

/* Memory of a layout and its types: 0, or the reason it cannot serve. */
int plan_serve_fits(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
		    enum llmsim_serve_why *why)
{
	struct llmsim_infer_mem mem;
	int rc = llmsim_infer_memory(ic, &mem, NULL);
	if (rc) {
		*why = rc == LLMSIM_ENOFIT ? LLMSIM_SERVE_WEIGHTS : LLMSIM_SERVE_LAYOUT;
		return -1;
	}
	if (mem.kv_capacity_tokens < llmsim_infer_kv_tokens(ic, s->pc->prompt + s->pc->output)) {
		*why = LLMSIM_SERVE_KV;
		return -1;
	}
	return 0;
}

/* Every cap of one aggregated layout. */
static int sweep_agg(struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
		     int replicas, struct llmsim_err *err)
{
	int64_t caps[PLAN_SERVE_MAX_CAPS];
	int ncap = plan_serve_caps(s, replicas, caps);
	for (int i = 0; i < ncap; i++) {
		struct llmsim_serve_cfg sc;
		struct llmsim_serve_result res;
		plan_serve_engine(s, ic, replicas, caps[i], &sc);
		struct llmsim_err e2 = {0};
		int rc = llmsim_serve_run(&sc, &res, &e2);
		s->out->simulated++;
		if (rc == LLMSIM_ENOFIT) {
			s->out->why[LLMSIM_SERVE_KV]++;
			continue;
		}
		if (rc) {
			*err = e2;
			return rc;
		}
		if (i == 0)
			s->out->requests_per_replica = sc.requests;
		struct llmsim_plan_serve_row row = {
			.replicas = replicas, .tp = ic->tp, .pp = ic->pp, .ep = ic->ep,
			.weight_dtype = ic->weight_dtype, .kv_dtype = ic->kv_dtype,
			.max_batch = caps[i], .ttft_s = res.ttft_s, .tpot_s = res.tpot_s,
			.e2e_s = res.e2e_s, .tokens_per_s = res.tokens_per_s * replicas,
			.requests_per_s = res.requests_per_s * replicas, .mean_batch = res.mean_batch,
			.preemptions = res.preemptions, .weight_bytes_per_gpu = res.mem.weight_bytes,
			.kv_capacity_tokens = res.kv_capacity_tokens,
		};
		plan_serve_judge(s, &row);
		if ((rc = plan_serve_push(s, &row)))
			return llmsim_err_set(err, rc, "out of memory");
		if (res.max_concurrent < caps[i])
			break; /* the cap never bound: a larger one runs the same */
	}
	return 0;
}

int plan_serve_dtype_ok(const struct plan_serve_search *s, enum llmsim_dtype w)
{
	const struct llmsim_gpu *g = s->pc->gpu;
	if (w == LLMSIM_DT_FP4)
		return g->tensor_flops_per_s[LLMSIM_DT_FP4] > 0;
	return 1;
}

/* The aggregated layouts: replicas x tp x pp (x ep dividing tp). */
static int search_agg(struct plan_serve_search *s, struct llmsim_err *err)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	const struct llmsim_model *m = pc->model;
	int dtp[256], dpp[256], dep[256], rc = 0;
	int ntp = llmsim_divisors(pc->gpus, dtp, 256);
	for (int a = 0; a < ntp && !rc; a++) {
		int tp = dtp[a];
		if (pc->tp > 0 && tp != pc->tp)
			continue;
		int npp = llmsim_divisors(pc->gpus / tp, dpp, 256);
		for (int b = 0; b < npp && !rc; b++) {
			int pp = dpp[b];
			if (pc->pp > 0 && pp != pc->pp)
				continue;
			if (pp > m->layers)
				break; /* ascending: the rest are larger */
			int nep = llmsim_divisors(tp, dep, 256);
			for (int e = 0; e < nep && !rc; e++) {
				int ep = dep[e];
				if (ep > 1 && (!m->has_moe || m->moe.experts % ep))
					continue; /* not a layout of this model */
				for (int w = 0; w < s->nw && !rc; w++)
					for (int k = 0; k < s->nkv && !rc; k++) {
						struct llmsim_infer_cfg ic;
						llmsim_infer_cfg_init(&ic, m, pc->gpu);
						ic.weight_dtype = s->w[w];
						ic.kv_dtype = s->kv[k];
						int replicas;
						enum llmsim_serve_why why;
						if (!plan_serve_dtype_ok(s, s->w[w])) {
							s->out->why[LLMSIM_SERVE_DTYPE]++;
							s->out->pruned++;
							continue;
						}
						if (llmsim_infer_layout(&ic, pc->gpus, tp, pp, ep, &replicas,
									NULL)) {
							s->out->why[LLMSIM_SERVE_LAYOUT]++;
							s->out->pruned++;
							continue;
						}
						if (plan_serve_fits(s, &ic, &why)) {
							s->out->why[why]++;
							s->out->pruned++;
							continue;
						}
						rc = sweep_agg(s, &ic, replicas, err);
					}
			}
		}
	}
	return rc;
}

int llmsim_plan_serve_cmp(const struct llmsim_plan_serve_row *x,
			  const struct llmsim_plan_serve_row *y, int by_user)
{
	if (x->feasible != y->feasible)
		return y->feasible - x->feasible;
	if (!x->feasible && x->miss != y->miss) /* the closest first */
		return x->miss < y->miss ? -1 : 1;
	if (x->gpus != y->gpus) /* a capacity search: the fewest GPUs first */
		return x->gpus - y->gpus;
	if (by_user && x->keeps_up != y->keeps_up)
		return y->keeps_up - x->keeps_up;
	double kx[2] = {x->tokens_per_s_per_gpu, x->tokens_per_s_per_user};
	double ky[2] = {y->tokens_per_s_per_gpu, y->tokens_per_s_per_user};
	int first = by_user ? 1 : 0;
	for (int i = 0; i < 2; i++) {
		int k = (first + i) % 2;
		if (kx[k] != ky[k])
			return kx[k] > ky[k] ? -1 : 1;
	}
	/* a tie: the tighter latency at the target quantile */
	if (x->ttft_q_s != y->ttft_q_s)
		return x->ttft_q_s < y->ttft_q_s ? -1 : 1;
	if (x->tpot_q_s != y->tpot_q_s)
		return x->tpot_q_s < y->tpot_q_s ? -1 : 1;
	if (x->disagg != y->disagg)
		return x->disagg - y->disagg;
	if (x->tp != y->tp)
		return x->tp - y->tp;
	return (x->max_batch > y->max_batch) - (x->max_batch < y->max_batch);
}

static int cmp_by_gpu(const void *a, const void *b)
{
	return llmsim_plan_serve_cmp(a, b, 0);
}

static int cmp_by_user(const void *a, const void *b)
{
	return llmsim_plan_serve_cmp(a, b, 1);
}

/* The front of tokens/s per GPU against tokens/s per user among the rows
 * of the same GPU count: rows no other row matches on both and beats on
 * one (O(n^2): a plan has hundreds). */
static void mark_pareto(struct llmsim_plan_serve_out *o)
{
	/* a capacity search: the front of the deployments that meet the
	 * targets, at each count (when any does) */
	int only_met = o->capacity && o->feasible > 0;
	for (int64_t i = 0; i < o->nrows; i++) {
		struct llmsim_plan_serve_row *a = &o->rows[i];
		a->pareto = !only_met || a->feasible;
		for (int64_t j = 0; j < o->nrows && a->pareto; j++) {
			const struct llmsim_plan_serve_row *b = &o->rows[j];
			if (only_met && !b->feasible)
				continue;
			/* b dominates a, or ranks before a at the same point */
			if (j != i && b->gpus == a->gpus &&
			    b->tokens_per_s_per_gpu >= a->tokens_per_s_per_gpu &&
			    b->tokens_per_s_per_user >= a->tokens_per_s_per_user &&
			    (b->tokens_per_s_per_gpu > a->tokens_per_s_per_gpu ||
			     b->tokens_per_s_per_user > a->tokens_per_s_per_user || j < i))
				a->pareto = 0;
		}
	}
}

static void explain(const struct plan_serve_search *s, struct llmsim_plan_serve_out *o)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	int qp = (int)lround(100 * o->quantile);
	if (o->impossible)
		return; /* the capacity search said which target and why */
	if (!o->nrows && o->capacity) {
		snprintf(o->reason, sizeof o->reason,
			 "no replica layout of %s on %s meets the targets at the load within %d GPUs",
			 pc->model->name, pc->gpu->name, LLMSIM_MAX_GPUS);
		return;
	}
	if (!o->nrows) {
		enum llmsim_serve_why w = LLMSIM_SERVE_LAYOUT;
		for (int i = 0; i < LLMSIM_SERVE_WHY_COUNT; i++)
			if (o->why[i] > o->why[w])
				w = i;
		snprintf(o->reason, sizeof o->reason,
			 "no layout of %d GPUs can serve %s: %s (%lld of %lld configurations)%s",
			 pc->gpus, pc->model->name, llmsim_serve_why_name(w), (long long)o->why[w],
			 (long long)o->pruned,
			 w == LLMSIM_SERVE_WEIGHTS && !pc->weight_dtypes
				 ? "; more GPUs, or allow quantized weights (--weight-dtype bf16,fp8)"
				 : "");
		return;
	}
	if (o->feasible || !o->targets)
		return;
	const struct llmsim_plan_serve_row *r = &o->rows[0]; /* the closest */
	int ttft = pc->ttft_slo_s > 0 && r->ttft_q_s > pc->ttft_slo_s;
	snprintf(o->reason, sizeof o->reason,
		 "no configuration meets the targets; the closest misses %s p%d by %.0f%%: "
		 "%.4g s against %.4g s",
		 ttft ? "TTFT" : "TPOT", qp,
		 100 * ((ttft ? r->ttft_q_s / pc->ttft_slo_s : r->tpot_q_s / pc->tpot_slo_s) - 1),
		 ttft ? r->ttft_q_s : r->tpot_q_s, ttft ? pc->ttft_slo_s : pc->tpot_slo_s);
}

static int check(const struct llmsim_plan_serve_cfg *pc, struct llmsim_err *err)
{
	if (pc->gpus < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "need at least one GPU");
	if (!pc->gpus && pc->load == LLMSIM_LOAD_OFFLINE)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the fewest GPUs needs a load: a rate or a concurrency");
	if (!pc->gpus && !(pc->ttft_slo_s > 0) && !(pc->tpot_slo_s > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the fewest GPUs needs a target: TTFT, TPOT or both");
	if (pc->usd_per_gpu_hour < 0 || !isfinite(pc->usd_per_gpu_hour))
		return llmsim_err_set(err, LLMSIM_EINVAL, "a GPU-hour price must be a positive number");
	if (!(pc->ttft_slo_s >= 0) || !(pc->tpot_slo_s >= 0) || isinf(pc->ttft_slo_s) ||
	    isinf(pc->tpot_slo_s))
		return llmsim_err_set(err, LLMSIM_EINVAL, "a target must be a positive number of seconds");
	/* before any product of them is formed (base/bounds.h says why) */
	if (pc->gpus > LLMSIM_MAX_GPUS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d GPUs, not %d", LLMSIM_MAX_GPUS,
				      pc->gpus);
	if (pc->prompt < 1 || pc->output < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "prompt and output must be >= 1 token");
	if (pc->prompt > LLMSIM_MAX_TOKENS || pc->output > LLMSIM_MAX_TOKENS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d prompt or output tokens",
				      LLMSIM_MAX_TOKENS);
	if (pc->model->max_seq > 0 && pc->prompt + pc->output > pc->model->max_seq)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "prompt + output = %lld tokens exceeds the %d-token context of %s",
				      (long long)(pc->prompt + pc->output), pc->model->max_seq,
				      pc->model->name);
	if (pc->max_batch > LLMSIM_MAX_BATCH || pc->max_batch < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d sequences in a batch, not %lld",
				      LLMSIM_MAX_BATCH, (long long)pc->max_batch);
	if (pc->load == LLMSIM_LOAD_RATE && !(pc->rate_per_s > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "an arrival rate must be positive");
	if (pc->load == LLMSIM_LOAD_CONCURRENCY &&
	    (pc->concurrency < 1 || pc->concurrency > LLMSIM_MAX_REQUESTS / 8))
		return llmsim_err_set(err, LLMSIM_EINVAL, "concurrency must be 1 to %d users",
				      LLMSIM_MAX_REQUESTS / 8);
	if (pc->requests < 0 || pc->requests > LLMSIM_MAX_REQUESTS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d requests", LLMSIM_MAX_REQUESTS);
	if (pc->slo_quantile != 0 && pc->slo_quantile != 0.5 && pc->slo_quantile != 0.9 &&
	    pc->slo_quantile != 0.99)
		return llmsim_err_set(err, LLMSIM_EINVAL, "the target quantile is p50, p90 or p99");
	return 0;
}

int llmsim_plan_serve(const struct llmsim_plan_serve_cfg *pc, struct llmsim_plan_serve_out *out,
		      struct llmsim_err *err)
{
	double t0 = now_s();
	memset(out, 0, sizeof *out);
	out->best_agg = out->best_disagg = -1;
	int rc = check(pc, err);
	if (rc)
		return rc;
	static const enum llmsim_dtype wts[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8, LLMSIM_DT_INT4,
						LLMSIM_DT_FP4};
	static const enum llmsim_dtype kvs[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8};
	struct plan_serve_search s = {.pc = pc, .out = out};
	for (size_t i = 0; i < sizeof wts / sizeof wts[0]; i++)
		if (pc->weight_dtypes ? pc->weight_dtypes & 1u << wts[i] : wts[i] == LLMSIM_DT_BF16)
			s.w[s.nw++] = wts[i];
	for (size_t i = 0; i < sizeof kvs / sizeof kvs[0]; i++)
		if (pc->kv_dtypes ? pc->kv_dtypes & 1u << kvs[i] : kvs[i] == LLMSIM_DT_BF16)
			s.kv[s.nkv++] = kvs[i];
	if (!s.nw || !s.nkv)
		return llmsim_err_set(err, LLMSIM_EINVAL, "weight types are bf16, fp8, int4, fp4; "
				      "KV types bf16, fp8");
	out->quantile = pc->slo_quantile > 0 ? pc->slo_quantile : 0.99;
	out->targets = pc->ttft_slo_s > 0 || pc->tpot_slo_s > 0;
	out->capacity = !pc->gpus;
	llmsim_expected_error(pc->gpu, LLMSIM_PRED_SERVE_STEP, &out->error);

	if (out->capacity) {
		rc = plan_serve_capacity(&s, err);
	} else {
		rc = search_agg(&s, err);
		if (!rc && !pc->no_disagg && pc->tp <= 0 && pc->pp <= 0)
			rc = plan_serve_disagg(&s, err);
	}
	if (rc) {
		llmsim_plan_serve_release(out);
		return rc;
	}
	double best = 0;
	for (int64_t i = 0; i < out->nrows; i++)
		best = fmax(best, out->rows[i].tokens_per_s);
	if (!out->capacity) /* a capacity search judged each replica's load itself */
		for (int64_t i = 0; i < out->nrows; i++)
			out->rows[i].keeps_up =
				out->rows[i].tokens_per_s * (1 + out->error.abs_frac) >= best;
	if (out->nrows)
		qsort(out->rows, (size_t)out->nrows, sizeof *out->rows,
		      pc->load == LLMSIM_LOAD_RATE ? cmp_by_user : cmp_by_gpu);
	mark_pareto(out); /* after the ranking: of equal points, the first ranked */
	for (int64_t i = 0; i < out->nrows; i++) {
		if (!out->rows[i].disagg && out->best_agg < 0)
			out->best_agg = i;
		if (out->rows[i].disagg && out->best_disagg < 0)
			out->best_disagg = i;
	}
	explain(&s, out);
	out->elapsed_s = now_s() - t0;
	return 0;
}

void llmsim_plan_serve_release(struct llmsim_plan_serve_out *out)
{
	if (!out)
		return;
	free(out->rows);
	out->rows = NULL;
	out->nrows = 0;
}

void llmsim_plan_serve_layout(const struct llmsim_plan_serve_row *r, char *buf, size_t size)
{
	char pp[16] = "", ep[16] = "";
	if (r->pp > 1)
		snprintf(pp, sizeof pp, " pp%d", r->pp);
	if (r->ep > 1)
		snprintf(ep, sizeof ep, " ep%d", r->ep);
	if (r->disagg)
		snprintf(buf, size, "P %d x tp%d + D %d x tp%d", r->p_replicas, r->p_tp, r->replicas,
			 r->tp);
	else
		snprintf(buf, size, "%d x tp%d%s%s", r->replicas, r->tp, pp, ep);
}

static int front_before(const struct llmsim_plan_serve_row *a, const struct llmsim_plan_serve_row *b)
{
	if (a->gpus != b->gpus)
		return a->gpus < b->gpus;
	return a->tokens_per_s_per_user < b->tokens_per_s_per_user;
}

int64_t llmsim_plan_serve_front(const struct llmsim_plan_serve_out *out, int64_t *idx)
{
	int64_t n = 0;
	for (int64_t i = 0; i < out->nrows; i++)
		if (out->rows[i].pareto)
			idx[n++] = i;
	for (int64_t i = 1; i < n; i++) /* insertion: the front is short */
		for (int64_t j = i; j > 0 && front_before(&out->rows[idx[j]], &out->rows[idx[j - 1]]);
		     j--) {
			int64_t t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return n;
}
