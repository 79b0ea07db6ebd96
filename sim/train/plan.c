/*
 * plan.c - the search over training configurations.
 *
 * Loops are nested so that what is expensive is computed once per
 * distinct value of what it depends on: op shapes (tp, cp, ep, micro-batch,
 * attention impl) are priced once per combination (and each op once per
 * search, through the context's cache); DP/ZeRO costs once per (tp, cp,
 * pp, ep, zero); the innermost loops (zero stage, recomputation, schedule)
 * (and offload) are arithmetic and the closed-form memory. Subtrees that are invalid
 * are skipped whole, and counted under their reason, as many
 * configurations as they hold.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bounds.h"
#include "train_int.h"

static const int mb_choices[] = {1, 2, 4, 8, 16};
#define NMB ((int)(sizeof mb_choices / sizeof mb_choices[0]))
static const enum llmsim_attn_impl attn_choices[] = {LLMSIM_ATTN_NAIVE, LLMSIM_ATTN_FLASH2,
						     LLMSIM_ATTN_FLASH3};
#define NATTN 3
#define NZERO 4
/* schedules: 1F1B, interleaved with v = 2 and v = 4 */
static const int chunk_choices[] = {1, 2, 4};
#define NSCHED 3
/* offload none, optimizer, params (none only with req->no_offload) */
#define PER_Z(s) (LLMSIM_RECOMP_COUNT * NSCHED * (s)->noff)
#define PER_MB(s) (NATTN * NZERO * PER_Z(s))
#define PER_FACT(s) (NMB * PER_MB(s))

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Layer costs of the current (tp, cp), by (ep, micro-batch, attention):
 * they do not depend on pp or dp (only the p2p part does). */
struct shape_slot {
	int ep, mb, attn, rc;
	struct shape_cost sc;
};

struct shape_cache {
	struct shape_slot *s;
	int n, cap;
};

static int shape_get(struct llmsim_train_ctx *ctx, struct shape_cache *sh,
		     const struct llmsim_train_cfg *c, struct shape_cost *out)
{
	struct shape_slot *hit = NULL;
	for (int i = 0; i < sh->n; i++)
		if (sh->s[i].ep == c->ep && sh->s[i].mb == c->micro_batch &&
		    sh->s[i].attn == (int)c->attn) {
			hit = &sh->s[i];
			break;
		}
	if (!hit) {
		if (sh->n == sh->cap) {
			int cap = sh->cap ? 2 * sh->cap : 64;
			struct shape_slot *s = realloc(sh->s, cap * sizeof *s);
			if (!s)
				return LLMSIM_ENOMEM;
			sh->s = s;
			sh->cap = cap;
		}
		hit = &sh->s[sh->n++];
		hit->ep = c->ep, hit->mb = c->micro_batch, hit->attn = c->attn;
		hit->rc = train_shape_cost(ctx, c, &hit->sc, NULL);
	}
	if (hit->rc)
		return hit->rc;
	*out = hit->sc;
	return train_p2p_cost(ctx, c, out, NULL);
}

struct topk {
	struct llmsim_train_result *r;
	int n, cap;
};

static void topk_add(struct topk *t, const struct llmsim_train_result *r)
{
	if (t->cap <= 0)
		return;
	if (t->n == t->cap && r->tokens_per_s <= t->r[t->n - 1].tokens_per_s)
		return;
	int i = t->n < t->cap ? t->n++ : t->n - 1;
	while (i > 0 && t->r[i - 1].tokens_per_s < r->tokens_per_s) {
		t->r[i] = t->r[i - 1];
		i--;
	}
	t->r[i] = *r;
}

/* Search state shared by the loops. */
struct search {
	struct llmsim_train_ctx *ctx;
	struct llmsim_plan_out *out;
	struct topk top;
	struct shape_cache sh;
	double best_short;
	int noff;                    /* offload modes searched */
	int dpu;
};

static void reject(struct search *s, enum llmsim_train_reject why, int64_t n)
{
	s->out->rejected[why] += n;
}

/* The innermost loop: offload none first, then optimizer, then params
 * (each only where it is valid: a host to offload to, 16-bit weights,
 * ZeRO >= 1, ZeRO-3 for params). Offload only trades GPU memory for
 * PCIe and CPU time, so all three are kept and ranked alike. */
static void search_offload(struct search *s, struct llmsim_train_cfg *c,
			   const struct shape_cost *sc, const struct dp_cost *dc)
{
	for (int o = 0; o < s->noff; o++) {
		c->offload = o;
		c->dpu = o != LLMSIM_OFFLOAD_NONE && s->dpu;
		if (o != LLMSIM_OFFLOAD_NONE &&
		    (!dc->has_host || c->recipe == LLMSIM_RECIPE_AMP || c->zero < 1 ||
		     (o == LLMSIM_OFFLOAD_PARAMS && c->zero != 3))) {
			reject(s, LLMSIM_REJ_OPTION, 1);
			continue;
		}
		struct llmsim_train_result r;
		train_combine(s->ctx, c, sc, dc, &r);
		r.load_rho = sc->load_rho;
		if (!r.fits) {
			reject(s, r.gpu_fits ? LLMSIM_REJ_HOST_OOM : LLMSIM_REJ_OOM, 1);
			/* per GPU: HBM short, plus this rank's part of the host's */
			int ranks = c->gpus < s->ctx->gpu.gpus_per_node ? c->gpus
									: s->ctx->gpu.gpus_per_node;
			double sh = fmax(0, r.mem.total_bytes - r.mem.hbm_bytes) +
				    fmax(0, r.mem.host_per_node_bytes - r.mem.host_bytes) / ranks;
			if (!s->out->have_closest || sh < s->best_short) {
				s->out->closest = r;
				s->out->have_closest = 1;
				s->best_short = sh;
			}
			continue;
		}
		s->out->feasible++;
		if (o != LLMSIM_OFFLOAD_NONE)
			s->out->feasible_offload++;
		topk_add(&s->top, &r);
	}
	c->offload = LLMSIM_OFFLOAD_NONE;
	c->dpu = 0;
}

/* Recomputation x schedule, pure arithmetic. */
static void search_rec_sched(struct search *s, struct llmsim_train_cfg *c,
			     const struct shape_cost *sc, const struct dp_cost *dc, int64_t nmb)
{
	const struct llmsim_model *m = &s->ctx->model;
	for (int rc = 0; rc < LLMSIM_RECOMP_COUNT; rc++) {
		c->recompute = rc;
		for (int k = 0; k < NSCHED; k++) {
			int v = chunk_choices[k];
			c->chunks = v;
			c->schedule = v > 1 ? LLMSIM_SCHED_INTERLEAVED : LLMSIM_SCHED_1F1B;
			if (v > 1 && (c->pp < 2 || nmb % c->pp)) {
				reject(s, LLMSIM_REJ_SCHEDULE, s->noff);
				continue;
			}
			if (v > 1 && !c->uneven_pp && m->layers % (c->pp * v)) {
				reject(s, LLMSIM_REJ_LAYERS, s->noff);
				continue;
			}
			search_offload(s, c, sc, dc);
		}
	}
}

/* One factorization (tp, cp, pp, dp, ep): micro-batch x attention x ZeRO. */
static void search_fact(struct search *s, struct llmsim_train_cfg *c)
{
	struct dp_cost dcs[NZERO];
	int have_dc[NZERO] = {0};
	for (int b = 0; b < NMB; b++) {
		c->micro_batch = mb_choices[b];
		if (c->global_batch % ((int64_t)c->micro_batch * c->dp)) {
			reject(s, LLMSIM_REJ_BATCH, PER_MB(s));
			continue;
		}
		int64_t nmb = c->global_batch / ((int64_t)c->micro_batch * c->dp);
		for (int a = 0; a < NATTN; a++) {
			c->attn = attn_choices[a];
			c->schedule = LLMSIM_SCHED_1F1B;
			c->chunks = 1;
			struct shape_cost sc;
			if (shape_get(s->ctx, &s->sh, c, &sc)) { /* e.g. flash3 on Ampere */
				reject(s, LLMSIM_REJ_OPTION, PER_MB(s) / NATTN);
				continue;
			}
			for (int z = 0; z < NZERO; z++) {
				c->zero = z;
				if (z == 3 && c->pp > 1) {
					reject(s, LLMSIM_REJ_OPTION, PER_Z(s));
					continue;
				}
				if (!have_dc[z]) {
					if (train_dp_cost(s->ctx, c, &dcs[z], NULL)) {
						reject(s, LLMSIM_REJ_OPTION, PER_Z(s));
						continue;
					}
					have_dc[z] = 1;
				}
				search_rec_sched(s, c, &sc, &dcs[z], nmb);
			}
		}
	}
}

#define MAX_DIV 256 /* a count up to LLMSIM_MAX_GPUS has at most 240 divisors */

int llmsim_plan_run(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
		    struct llmsim_plan_out *out, struct llmsim_err *err)
{
	const struct llmsim_model *m = &ctx->model;
	double t0 = now_s();
	memset(out, 0, sizeof *out);
	if (req->gpus < 1 || req->seq < 1 || req->global_batch < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "gpus, seq and global batch must be >= 1");
	/* before any product of them is formed (base/bounds.h says why) */
	if (req->gpus > LLMSIM_MAX_GPUS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d GPUs, not %d", LLMSIM_MAX_GPUS,
				      req->gpus);
	if (req->seq > LLMSIM_MAX_TOKENS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d tokens per sequence, not %lld",
				      LLMSIM_MAX_TOKENS, (long long)req->seq);
	if (req->global_batch > LLMSIM_MAX_BATCH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d sequences per step, not %lld",
				      LLMSIM_MAX_BATCH, (long long)req->global_batch);
	if (req->lora_rank < 0 || req->lora_rank > LLMSIM_MAX_WIDTH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "LoRA rank must be 0 to %d, not %d",
				      LLMSIM_MAX_WIDTH, req->lora_rank);
	if (m->has_moe && req->moe_imbalance > llmsim_train_max_imbalance(m))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "MoE imbalance %g: at most %g, experts/top_k (the busiest "
				      "expert can get every token, no more)",
				      req->moe_imbalance, llmsim_train_max_imbalance(m));
	struct search s = {.ctx = ctx, .out = out, .top = {.cap = req->top > 0 ? req->top : 1},
			   .noff = req->no_offload ? 1 : LLMSIM_OFFLOAD_COUNT, .dpu = req->dpu};
	s.top.r = calloc(s.top.cap, sizeof *s.top.r);
	int *div = malloc(4 * MAX_DIV * sizeof *div);
	if (!s.top.r || !div) {
		free(s.top.r);
		free(div);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	int *dt = div, *dc = div + MAX_DIV, *dpp = div + 2 * MAX_DIV, *dep = div + 3 * MAX_DIV;

	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.gpus = req->gpus;
	c.seq = req->seq;
	c.global_batch = req->global_batch;
	c.dtype = req->dtype;
	c.recipe = req->recipe;
	c.lora_rank = req->lora_rank;
	c.moe_imbalance = req->moe_imbalance >= 1 ? req->moe_imbalance : 1;
	c.uneven_pp = req->uneven_pp;

	int N = req->gpus, moe = m->has_moe && m->moe.experts > 1;
	int ntp = llmsim_divisors(N, dt, MAX_DIV);
	for (int i = 0; i < ntp; i++) {
		c.tp = dt[i];
		int kv_ok = m->has_mla || m->kv_heads % c.tp == 0 || c.tp % m->kv_heads == 0;
		int bad_tp = m->heads % c.tp || !kv_ok;
		int ncp = llmsim_divisors(N / c.tp, dc, MAX_DIV);
		for (int j = 0; j < ncp; j++) {
			c.cp = dc[j];
			s.sh.n = 0; /* new (tp, cp): new layer shapes */
			int bad_cp = c.cp > 1 && c.seq % (2 * c.cp);
			int npp = llmsim_divisors(N / (c.tp * c.cp), dpp, MAX_DIV);
			for (int k = 0; k < npp; k++) {
				c.pp = dpp[k];
				c.dp = N / (c.tp * c.cp * c.pp);
				int nep = moe ? llmsim_divisors(c.dp * c.cp, dep, MAX_DIV) : 1;
				if (!moe)
					dep[0] = 1;
				for (int e = 0; e < nep; e++) {
					c.ep = dep[e];
					enum llmsim_train_reject why = LLMSIM_REJ_NONE;
					if (bad_tp)
						why = LLMSIM_REJ_HEADS;
					else if (bad_cp)
						why = LLMSIM_REJ_SEQ;
					else if (!c.uneven_pp && m->layers % c.pp)
						why = LLMSIM_REJ_LAYERS;
					else if (c.ep > 1 && m->moe.experts % c.ep)
						why = LLMSIM_REJ_EXPERTS;
					out->evaluated += PER_FACT(&s);
					if (why)
						reject(&s, why, PER_FACT(&s));
					else
						search_fact(&s, &c);
				}
			}
		}
	}
	free(div);
	free(s.sh.s);
	out->results = s.top.r;
	out->nresults = s.top.n;
	out->elapsed_s = now_s() - t0;
	return 0;
}

void llmsim_plan_out_release(struct llmsim_plan_out *out)
{
	if (!out)
		return;
	free(out->results);
	out->results = NULL;
	out->nresults = 0;
}
