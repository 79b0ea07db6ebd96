/*
 * plan.c - the search over training configurations (plan.h).
 *
 * Loops are nested so that what is expensive is computed once per
 * distinct value of what it depends on: op shapes (tp, cp, ep, micro-batch,
 * attention impl, LoRA) are priced once per combination (and each op once
 * per search, through the context's cache); DP/ZeRO costs once per (tp,
 * cp, pp, ep, zero); the innermost loops (recomputation, schedule and
 * chunks, offload) are arithmetic and the closed-form memory. Subtrees
 * that are invalid are skipped whole, and counted under their exact
 * reason, as many configurations as they hold. Every configuration that
 * fits is kept, packed (plan_int.h), for the ranking (plan_rank.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/bounds.h"
#include "base/enum.h"
#include "plan_int.h"
#include "train_int.h"

static const int mb_choices[] = {1, 2, 4, 8, 16};
#define NMB ((int)(sizeof mb_choices / sizeof mb_choices[0]))
static const enum llmsim_attn_impl attn_choices[] = {LLMSIM_ATTN_NAIVE, LLMSIM_ATTN_FLASH2,
						     LLMSIM_ATTN_FLASH3};
#define NATTN 3
#define NZERO 4
#define MAX_CHUNKS_DEFAULT 8

static const char *const why_names[LLMSIM_PLAN_WHY_COUNT] = {
	[LLMSIM_PLAN_HEADS] = "attention heads not divisible by tp",
	[LLMSIM_PLAN_KV_HEADS] = "kv heads and tp: neither divides the other",
	[LLMSIM_PLAN_SEQ] = "seq not divisible by 2 x cp (load-balanced ring)",
	[LLMSIM_PLAN_STAGES] = "more pipeline stages x chunks than layers (or, llama3, than fill a chunk each)",
	[LLMSIM_PLAN_LAYERS] = "layers not divisible by pp x chunks (--even-pp)",
	[LLMSIM_PLAN_EXPERTS] = "experts not divisible by ep",
	[LLMSIM_PLAN_BATCH] = "global batch not divisible by micro-batch x dp",
	[LLMSIM_PLAN_INTERLEAVE_PP] = "interleaved schedule with one pipeline stage",
	[LLMSIM_PLAN_INTERLEAVE_MB] = "interleaved: micro-batches not divisible by pp",
	[LLMSIM_PLAN_ZERO3_PP] = "ZeRO-3 with pipeline parallelism",
	[LLMSIM_PLAN_KERNEL] = "a kernel the GPU lacks (FlashAttention-3 before Hopper)",
	[LLMSIM_PLAN_OFFLOAD_ZERO] = "offload with ZeRO-0 (DeepSpeed offloads ZeRO partitions)",
	[LLMSIM_PLAN_OFFLOAD_PARAMS] = "params offload without ZeRO-3",
	[LLMSIM_PLAN_STACK] = "the stack cannot launch it (a feature it lacks, or a pair it refuses)",
	[LLMSIM_PLAN_OOM] = "priced: out of HBM",
	[LLMSIM_PLAN_HOST_OOM] = "priced: offloaded states exceed host memory",
};

static const char *const why_keys[LLMSIM_PLAN_WHY_COUNT] = {
	[LLMSIM_PLAN_HEADS] = "heads",
	[LLMSIM_PLAN_KV_HEADS] = "kv_heads",
	[LLMSIM_PLAN_SEQ] = "seq_cp",
	[LLMSIM_PLAN_STAGES] = "stages",
	[LLMSIM_PLAN_LAYERS] = "layers",
	[LLMSIM_PLAN_EXPERTS] = "experts",
	[LLMSIM_PLAN_BATCH] = "batch",
	[LLMSIM_PLAN_INTERLEAVE_PP] = "interleave_pp1",
	[LLMSIM_PLAN_INTERLEAVE_MB] = "interleave_microbatches",
	[LLMSIM_PLAN_ZERO3_PP] = "zero3_pp",
	[LLMSIM_PLAN_KERNEL] = "kernel",
	[LLMSIM_PLAN_OFFLOAD_ZERO] = "offload_zero0",
	[LLMSIM_PLAN_OFFLOAD_PARAMS] = "offload_params_zero",
	[LLMSIM_PLAN_STACK] = "stack",
	[LLMSIM_PLAN_OOM] = "oom",
	[LLMSIM_PLAN_HOST_OOM] = "host_oom",
};

const char *llmsim_plan_why_name(enum llmsim_plan_why w)
{
	return llmsim_enum_label(why_names, LLMSIM_PLAN_WHY_COUNT, (int)w);
}

const char *llmsim_plan_why_key(enum llmsim_plan_why w)
{
	return llmsim_enum_label(why_keys, LLMSIM_PLAN_WHY_COUNT, (int)w);
}

int llmsim_plan_why_priced(enum llmsim_plan_why w)
{
	return w == LLMSIM_PLAN_OOM || w == LLMSIM_PLAN_HOST_OOM;
}

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

/* Search state shared by the loops. */
struct search {
	struct llmsim_train_ctx *ctx;
	const struct llmsim_plan_req *req;
	struct llmsim_plan_out *out;
	struct plan_entries es;
	struct shape_cache sh;
	struct plan_survivors sv;
	double best_short;
	int noff;                    /* offload modes searched */
	struct plan_recompute rec[PLAN_MAX_RECOMPUTE]; /* recomputation tried (plan_stack.c) */
	int nrec;
	int nsched;                  /* chunks per stage tried: 1 (1F1B) .. nsched */
	int dpu, lora;               /* lora: this pass is LoRA */
	int even_pp;
	int rc;                      /* LLMSIM_ENOMEM once the entries cannot grow */
};

#define PER_Z(s) ((int64_t)(s)->nrec * (s)->nsched * (s)->noff)
#define PER_MB(s) (NATTN * NZERO * PER_Z(s))
#define PER_FACT(s) (NMB * PER_MB(s))

static void reject(struct search *s, enum llmsim_plan_why why, int64_t n)
{
	s->out->why[why] += n;
	if (!llmsim_plan_why_priced(why))
		s->out->pruned += n;
}

static void keep(struct search *s, const struct llmsim_train_cfg *c, const struct train_step *st)
{
	struct plan_entries *es = &s->es;
	if (es->n == es->cap) {
		int64_t cap = es->cap ? 2 * es->cap : 4096;
		struct plan_entry *v = realloc(es->v, (size_t)cap * sizeof *v);
		if (!v) {
			s->rc = LLMSIM_ENOMEM;
			return;
		}
		es->v = v;
		es->cap = cap;
	}
	es->v[es->n++] = (struct plan_entry){
		.tokens_per_s = st->tokens_per_s,
		.rank_tps = plan_rank_tps(st->tokens_per_s, c->offload, st->mem_tight,
					  s->out->error_frac),
		.tp = c->tp, .pp = c->pp, .cp = c->cp, .ep = c->ep,
		.zero = (uint8_t)c->zero, .micro_batch = (uint8_t)c->micro_batch,
		.recompute = (uint8_t)c->recompute, .modules = (uint8_t)c->recompute_modules,
		.chunks = (uint8_t)c->chunks,
		.attn = (uint8_t)c->attn, .offload = (uint8_t)c->offload, .lora = (uint8_t)s->lora,
		.cp_comm = (uint8_t)c->cp_comm,
		.tight = (uint8_t)st->mem_tight,
		.act_offload = c->offload_activations > 0
				       ? (uint8_t)lround(100 * c->offload_activations)
				       : 0};
}

/* A configuration that does not fit: the closest so far (smallest
 * shortfall per GPU: HBM short, plus this rank's part of the host's) is
 * kept whole, priced again in full only when it is one. */
static void near_miss(struct search *s, const struct llmsim_train_cfg *c,
		      const struct shape_cost *sc, const struct dp_cost *dc,
		      const struct train_step *st)
{
	int ranks = c->gpus < s->ctx->gpu.gpus_per_node ? c->gpus : s->ctx->gpu.gpus_per_node;
	double sh = fmax(0, st->mem.total_bytes - st->mem.hbm_bytes) +
		    fmax(0, st->mem.host_per_node_bytes - st->mem.host_bytes) / ranks;
	if (!s->out->have_closest || sh < s->best_short) {
		train_combine(s->ctx, c, sc, dc, &s->out->closest);
		s->out->closest.load_rho = sc->load_rho;
		s->out->have_closest = 1;
		s->best_short = sh;
	}
}

/* The innermost loop: offload none first, then optimizer, then params
 * (each only where it is valid: ZeRO >= 1, ZeRO-3 for params). Offload
 * only trades GPU memory for PCIe and CPU time, so all three are priced
 * alike; the ranking decides whether offload wins by more than the error.
 * Pricing here is the step time and memory alone (train_step_lean): the
 * rest of a result is worked out for the rows shown (plan_rank.c). */
static void search_offload(struct search *s, struct llmsim_train_cfg *c,
			   const struct shape_cost *sc, const struct dp_cost *dc)
{
	for (int o = 0; o < s->noff; o++) {
		c->offload = o;
		c->dpu = o != LLMSIM_OFFLOAD_NONE && s->dpu;
		if (o != LLMSIM_OFFLOAD_NONE && c->zero < 1) {
			reject(s, LLMSIM_PLAN_OFFLOAD_ZERO, 1);
			continue;
		}
		if (o == LLMSIM_OFFLOAD_PARAMS && c->zero != 3) {
			reject(s, LLMSIM_PLAN_OFFLOAD_PARAMS, 1);
			continue;
		}
		if (!plan_stack_ok(s->req, &s->ctx->model, c)) {
			reject(s, LLMSIM_PLAN_STACK, 1);
			continue;
		}
		struct train_step st;
		train_step_lean(s->ctx, c, sc, dc, &st);
		s->out->priced++;
		if (!st.fits) {
			reject(s, st.gpu_fits ? LLMSIM_PLAN_HOST_OOM : LLMSIM_PLAN_OOM, 1);
			near_miss(s, c, sc, dc, &st);
			continue;
		}
		s->out->feasible++;
		s->out->tight += st.mem_tight;
		if (o != LLMSIM_OFFLOAD_NONE)
			s->out->feasible_offload++;
		keep(s, c, &st);
	}
	c->offload = LLMSIM_OFFLOAD_NONE;
	c->dpu = 0;
}

/* Recomputation x schedule and chunks per stage, pure arithmetic. */
static void search_rec_sched(struct search *s, struct llmsim_train_cfg *c,
			     const struct shape_cost *sc, const struct dp_cost *dc, int64_t nmb)
{
	const struct llmsim_model *m = &s->ctx->model;
	for (int rc = 0; rc < s->nrec; rc++) {
		c->recompute = s->rec[rc].kind;
		c->recompute_modules = s->rec[rc].modules;
		c->offload_activations = s->rec[rc].act_offload;
		for (int v = 1; v <= s->nsched; v++) {
			c->chunks = v;
			c->schedule = v > 1 ? LLMSIM_SCHED_INTERLEAVED : LLMSIM_SCHED_1F1B;
			if (v > 1 && c->pp < 2) {
				reject(s, LLMSIM_PLAN_INTERLEAVE_PP, s->noff);
				continue;
			}
			if ((int64_t)c->pp * v > llmsim_train_pp_slots(m, c) ||
			    llmsim_train_pp_empty_chunks(m, c)) {
				reject(s, LLMSIM_PLAN_STAGES, s->noff);
				continue;
			}
			if (s->even_pp && llmsim_train_pp_slots(m, c) % (c->pp * v)) {
				reject(s, LLMSIM_PLAN_LAYERS, s->noff);
				continue;
			}
			if (v > 1 && nmb % c->pp) {
				reject(s, LLMSIM_PLAN_INTERLEAVE_MB, s->noff);
				continue;
			}
			search_offload(s, c, sc, dc);
		}
	}
	c->recompute = LLMSIM_RECOMP_NONE;
	c->recompute_modules = 0;
	c->offload_activations = 0;
	c->chunks = 1;
	c->schedule = LLMSIM_SCHED_1F1B;
}

/* One factorization (tp, cp, pp, dp, ep): micro-batch x attention x ZeRO. */
static void search_fact(struct search *s, struct llmsim_train_cfg *c)
{
	struct dp_cost dcs[NZERO];
	int have_dc[NZERO] = {0};
	s->sv.layouts += PER_FACT(s);
	if (!s->sv.min_dp || c->dp < s->sv.min_dp)
		s->sv.min_dp = c->dp;
	for (int b = 0; b < NMB; b++) {
		c->micro_batch = mb_choices[b];
		if (c->global_batch % ((int64_t)c->micro_batch * c->dp)) {
			reject(s, LLMSIM_PLAN_BATCH, PER_MB(s));
			continue;
		}
		s->sv.batch += PER_MB(s);
		int64_t nmb = c->global_batch / ((int64_t)c->micro_batch * c->dp);
		for (int a = 0; a < NATTN; a++) {
			c->attn = attn_choices[a];
			c->schedule = LLMSIM_SCHED_1F1B;
			c->chunks = 1;
			struct shape_cost sc;
			if (shape_get(s->ctx, &s->sh, c, &sc)) { /* e.g. flash3 on Ampere */
				reject(s, LLMSIM_PLAN_KERNEL, PER_MB(s) / NATTN);
				continue;
			}
			for (int z = 0; z < NZERO; z++) {
				c->zero = z;
				if (z == 3 && c->pp > 1) {
					reject(s, LLMSIM_PLAN_ZERO3_PP, PER_Z(s));
					continue;
				}
				if (!have_dc[z]) {
					if (train_dp_cost(s->ctx, c, &dcs[z], NULL)) {
						reject(s, LLMSIM_PLAN_KERNEL, PER_Z(s));
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

/* The divisors of n, or only `pin` when pinned (the caller checked it
 * divides n). */
static int degrees(int n, int pin, int *out)
{
	if (pin > 0) {
		out[0] = pin;
		return n % pin ? 0 : 1;
	}
	return llmsim_divisors(n, out, MAX_DIV);
}

/* Why a layout (tp, cp, pp, ep) is invalid for the model, or COUNT. */
static enum llmsim_plan_why layout_why(const struct llmsim_model *m,
				       const struct llmsim_train_cfg *c, int even_pp)
{
	if (m->heads % c->tp)
		return LLMSIM_PLAN_HEADS;
	if (!m->has_mla && m->kv_heads % c->tp && c->tp % m->kv_heads)
		return LLMSIM_PLAN_KV_HEADS;
	if (c->cp > 1 && c->seq % (2 * c->cp))
		return LLMSIM_PLAN_SEQ;
	if (c->pp > m->layers)
		return LLMSIM_PLAN_STAGES;
	if (even_pp && m->layers % c->pp)
		return LLMSIM_PLAN_LAYERS;
	if (c->ep > 1 && (m->moe.experts % c->ep || ((int64_t)c->dp * c->cp) % c->ep))
		return LLMSIM_PLAN_EXPERTS;
	return LLMSIM_PLAN_WHY_COUNT;
}

/* One pass over every layout (full training, or LoRA). */
static void search_layouts(struct search *s, const struct llmsim_plan_req *req,
			   struct llmsim_train_cfg *c, int *div)
{
	const struct llmsim_model *m = &s->ctx->model;
	int *dt = div, *dc = div + MAX_DIV, *dpp = div + 2 * MAX_DIV, *dep = div + 3 * MAX_DIV;
	int N = req->gpus, moe = m->has_moe && m->moe.experts > 1;
	int ntp = degrees(N, req->tp, dt);
	for (int i = 0; i < ntp && !s->rc; i++) {
		c->tp = dt[i];
		/* the stack overlaps TP where there is TP */
		c->tp_overlap = c->tp > 1 && c->sequence_parallel ? req->tp_overlap
								  : LLMSIM_TP_OVERLAP_NONE;
		int ncp = degrees(N / c->tp, req->cp, dc);
		for (int j = 0; j < ncp && !s->rc; j++) {
			c->cp = dc[j];
			/* the stack's CP communication where there is CP (a2a:
			 * where the heads split over it, else the ring) */
			c->cp_comm = c->cp > 1 ? req->cp_comm : LLMSIM_CP_P2P;
			if (c->cp_comm == LLMSIM_CP_A2A && (m->heads / c->tp) % c->cp)
				c->cp_comm = LLMSIM_CP_P2P;
			s->sh.n = 0; /* new (tp, cp): new layer shapes */
			int npp = degrees(N / (c->tp * c->cp), req->pp, dpp);
			for (int k = 0; k < npp && !s->rc; k++) {
				c->pp = dpp[k];
				c->dp = N / (c->tp * c->cp * c->pp);
				int nep = 1;
				dep[0] = req->ep > 0 ? req->ep : 1;
				if (moe && req->ep <= 0)
					nep = llmsim_divisors(c->dp * c->cp, dep, MAX_DIV);
				for (int e = 0; e < nep && !s->rc; e++) {
					if (req->progress)
						req->progress(req->progress_ctx, s->out->priced,
							      s->out->pruned);
					c->ep = dep[e];
					enum llmsim_plan_why why = layout_why(m, c, s->even_pp);
					if (why != LLMSIM_PLAN_WHY_COUNT)
						reject(s, why, PER_FACT(s));
					else if (!plan_stack_layout_ok(req, c))
						reject(s, LLMSIM_PLAN_STACK, PER_FACT(s));
					else
						search_fact(s, c);
				}
			}
		}
	}
}

/* Requests that cannot be searched: one line each. */
static int check_req(const struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
		     struct llmsim_err *err)
{
	const struct llmsim_model *m = &ctx->model;
	if (req->gpus < 1 || req->seq < 1 || req->global_batch < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "gpus and seq must be >= 1");
	/* before any product of them is formed (base/bounds.h says why) */
	if (req->gpus > LLMSIM_MAX_GPUS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d GPUs, not %d", LLMSIM_MAX_GPUS,
				      req->gpus);
	if (req->seq > LLMSIM_MAX_TOKENS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d tokens per sequence, not %lld",
				      LLMSIM_MAX_TOKENS, (long long)req->seq);
	if ((unsigned)req->precision >= LLMSIM_PREC_COUNT ||
	    req->dtype != llmsim_precision_desc(req->precision)->gemm)
		return llmsim_err_set(err, LLMSIM_EINVAL, "precision %s runs its GEMMs in %s, not %s",
				      llmsim_precision_name(req->precision),
				      llmsim_dtype_name(llmsim_precision_desc(req->precision)->gemm),
				      llmsim_dtype_name(req->dtype) ? llmsim_dtype_name(req->dtype)
								    : "?");
	int prc = llmsim_precision_check(&ctx->gpu, req->precision, err);
	if (prc)
		return prc;
	if (req->global_batch > LLMSIM_MAX_BATCH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d sequences per step, not %lld",
				      LLMSIM_MAX_BATCH, (long long)req->global_batch);
	if (req->lora_rank < 0 || req->lora_rank > LLMSIM_MAX_WIDTH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "LoRA rank must be 0 to %d, not %d",
				      LLMSIM_MAX_WIDTH, req->lora_rank);
	if (req->max_chunks < 0 || req->max_chunks > 64)
		return llmsim_err_set(err, LLMSIM_EINVAL, "chunks per stage: 1 to 64, not %d",
				      req->max_chunks);
	if (m->has_moe && req->moe_imbalance > llmsim_train_max_imbalance(m))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "MoE imbalance %g: at most %g, experts/top_k (the busiest "
				      "expert can get every token, no more)",
				      req->moe_imbalance, llmsim_train_max_imbalance(m));
	if (req->lora_rank > 0 && req->recipe == LLMSIM_RECIPE_LLAMA3)
		return llmsim_err_set(err, LLMSIM_EINVAL, "the llama3 recipe is pre-training: "
				      "no LoRA");
	if (req->ep > 1 && !(m->has_moe && m->moe.experts > 1))
		return llmsim_err_set(err, LLMSIM_EINVAL, "--ep %d needs an MoE model; %s is dense",
				      req->ep, m->name);
	const int pins[] = {req->tp, req->cp, req->pp};
	const char *const names[] = {"--tp", "--cp", "--pp"};
	int64_t prod = 1;
	for (int i = 0; i < 3; i++) {
		if (pins[i] < 0 || pins[i] > LLMSIM_MAX_GPUS || req->ep < 0 ||
		    req->ep > LLMSIM_MAX_GPUS)
			return llmsim_err_set(err, LLMSIM_EINVAL, "parallel degrees must be 1 to %d",
					      LLMSIM_MAX_GPUS);
		if (pins[i] > 0 && req->gpus % pins[i])
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s %d does not divide --gpus %d",
					      names[i], pins[i], req->gpus);
		prod *= pins[i] > 0 ? pins[i] : 1;
	}
	if (prod > 1 && req->gpus % prod)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "tp x cp x pp = %lld (as pinned) does not divide --gpus %d",
				      (long long)prod, req->gpus);
	return 0;
}

int llmsim_plan_run(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
		    struct llmsim_plan_out *out, struct llmsim_err *err)
{
	double t0 = now_s();
	memset(out, 0, sizeof *out);
	int rc = check_req(ctx, req, err);
	if (!rc)
		rc = plan_stack_check_req(req, err);
	if (rc)
		return rc;
	const struct llmsim_gpu *gpu = &ctx->gpu;
	out->global_batch = req->global_batch;
	if (!out->global_batch) {
		out->global_batch = llmsim_plan_batch_rule(req->gpus, req->seq,
							   &out->batch_budget_tokens);
		out->batch_from_rule = 1;
	}
	llmsim_expected_error(gpu, LLMSIM_PRED_TRAIN_STEP, &out->error);
	out->error_frac = req->error_frac > 0 ? req->error_frac : out->error.abs_frac;

	/* offload is searched where it can exist: a host to offload to and a
	 * recipe that keeps 16-bit weights on the GPU */
	int noff = plan_stack_offloads(req, out->offload_note, sizeof out->offload_note);
	if (noff == 1)
		; /* the stack offloads nothing: its note */
	else if (req->no_offload)
		noff = 1, snprintf(out->offload_note, sizeof out->offload_note, "--no-offload");
	else if (!gpu->has_host)
		noff = 1, snprintf(out->offload_note, sizeof out->offload_note,
				   "%s describes no host", gpu->name);
	else if (req->recipe == LLMSIM_RECIPE_AMP)
		noff = 1, snprintf(out->offload_note, sizeof out->offload_note,
				   "the amp recipe keeps fp32 weights on the GPU");
	else if (req->recipe == LLMSIM_RECIPE_LLAMA3)
		noff = 1, snprintf(out->offload_note, sizeof out->offload_note,
				   "the llama3 recipe keeps every state in HBM");
	out->offload_searched = noff > 1;

	struct search s = {.ctx = ctx, .req = req, .out = out, .noff = noff, .dpu = req->dpu,
			   .nsched = req->max_chunks > 0 ? req->max_chunks : MAX_CHUNKS_DEFAULT,
			   .even_pp = req->even_pp};
	s.nrec = plan_recompute_choices(req, &ctx->model, gpu, s.rec);
	int *div = malloc(4 * MAX_DIV * sizeof *div);
	if (!div)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");

	struct plan_base base = {.lora_rank = req->lora_rank, .dpu = req->dpu};
	struct llmsim_train_cfg *c = &base.cfg;
	llmsim_train_cfg_init(c);
	c->gpus = req->gpus;
	c->seq = req->seq;
	c->global_batch = out->global_batch;
	llmsim_train_cfg_precision(c, req->precision);
	c->recipe = req->recipe;
	c->moe_imbalance = req->moe_imbalance >= 1 ? req->moe_imbalance : 1;
	c->uneven_pp = !req->even_pp;
	plan_stack_base(req, c);
	/* the request's communication (the CLI passes the stack's unless told) */
	c->tp_overlap = req->tp_overlap;
	c->moe_dispatch = ctx->model.has_moe ? req->moe_dispatch : LLMSIM_MOE_ALLTOALL;
	c->moe_overlap = ctx->model.has_moe ? req->moe_overlap : 0;

	/* full training, then (with a rank) LoRA */
	struct llmsim_train_cfg work = *c;
	for (int pass = 0; pass < (req->lora_rank > 0 ? 2 : 1) && !s.rc; pass++) {
		s.lora = pass;
		work.lora_rank = pass ? req->lora_rank : 0;
		search_layouts(&s, req, &work, div);
	}
	free(div);
	free(s.sh.s);
	if (s.rc) {
		free(s.es.v);
		return llmsim_err_set(err, s.rc, "out of memory for %lld configurations",
				      (long long)s.es.n);
	}
	rc = plan_rank(ctx, req, &base, &s.es, out, err);
	free(s.es.v);
	if (rc) {
		llmsim_plan_out_release(out);
		return rc;
	}
	if (!out->nrows)
		plan_hint(ctx, req, &s.sv, out);
	out->elapsed_s = now_s() - t0;
	return 0;
}

void llmsim_plan_out_release(struct llmsim_plan_out *out)
{
	if (!out)
		return;
	free(out->rows);
	out->rows = NULL;
	out->nrows = 0;
}
