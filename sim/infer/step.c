/*
 * step.c - the ops of one engine step on one replica, priced by the GPU
 * model, and how their kernel times add up into the step's wall time.
 *
 * A step processes `n` new tokens: every decoding sequence's q_len tokens
 * plus every prefill chunk's prompt tokens. The linear layers, norms and
 * collectives run once over all n tokens; attention runs per prefill chunk
 * shape and once over the decoding sequences. Layers of one kind (dense or
 * MoE) are identical, so each op is priced once and counted per layer.
 */
#include "infer.h"

#include <math.h>
#include <string.h>

enum section { SEC_PRE, SEC_DENSE, SEC_MOE, SEC_POST, SEC_P2P, SEC_COUNT };

#define MAX_ENTRIES 96

struct acc {
	const struct llmsim_infer_cfg *cfg;
	struct llmsim_step_cost *cost;
	struct llmsim_err *err;
	enum llmsim_dtype math, wdt;
	int64_t mult[SEC_COUNT];
	unsigned parts, cur;   /* parts priced; part of the ops being added */
	int rc;
	int n;
	struct {
		double time_s;
		int kernels;
		enum section sec;
	} e[MAX_ENTRIES];
};

static void price(struct acc *a, enum section sec, const struct llmsim_op *op,
		  enum llmsim_byte_cat cat)
{
	struct llmsim_pred p;
	if (a->rc || !a->mult[sec] || !(a->parts & a->cur))
		return;
	struct llmsim_op loaded = *op;
	loaded.load_duty = a->cfg->load_duty;
	loaded.load_rho = a->cfg->load_rho;
	int rc = llmsim_predict(a->cfg->gpu, &loaded, &p, a->err);
	if (rc) {
		a->rc = rc;
		return;
	}
	double k = (double)a->mult[sec];
	struct llmsim_step_cost *c = a->cost;
	int kernels = p.kernels > 0 ? p.kernels : 1;
	c->gpu_s += k * p.time_s;
	if (op->kind == LLMSIM_OP_COLLECTIVE)
		c->comm_s += k * p.time_s;
	c->flops += k * p.flops;
	c->hbm_bytes += k * p.hbm_bytes;
	c->bytes[cat] += k * p.hbm_bytes;
	if ((unsigned)p.bound < LLMSIM_BOUND_COUNT)
		c->time_by_bound_s[p.bound] += k * p.time_s;
	c->workspace_bytes = fmax(c->workspace_bytes, p.workspace_bytes);
	c->kernels += (int64_t)k * kernels;
	LLMSIM_ASSERT(a->n < MAX_ENTRIES);
	a->e[a->n].time_s = p.time_s;
	a->e[a->n].kernels = kernels;
	a->e[a->n].sec = sec;
	a->n++;
}

static void gemm(struct acc *a, enum section sec, int64_t m, int64_t n, int64_t k,
		 int64_t batch, int quantized)
{
	if (m <= 0 || n <= 0 || k <= 0)
		return;
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM};
	op.dtype = quantized ? a->math : a->cfg->act_dtype;
	op.u.gemm.m = m;
	op.u.gemm.n = n;
	op.u.gemm.k = k;
	op.u.gemm.batch = batch > 0 ? batch : 1;
	op.u.gemm.b_dtype = quantized ? a->wdt : a->cfg->act_dtype;
	price(a, sec, &op, LLMSIM_BYTES_WEIGHTS);
}

static void ew(struct acc *a, enum section sec, enum llmsim_ew_kind kind, int64_t tokens,
	       int64_t hidden, enum llmsim_byte_cat cat)
{
	if (tokens <= 0 || hidden <= 0)
		return;
	struct llmsim_op op = {.kind = LLMSIM_OP_ELEMENTWISE, .dtype = a->cfg->act_dtype};
	op.u.ew.kind = kind;
	op.u.ew.tokens = tokens;
	op.u.ew.hidden = hidden;
	op.u.ew.pass = LLMSIM_PASS_FWD;
	price(a, sec, &op, cat);
}

static void coll(struct acc *a, enum section sec, enum llmsim_coll_kind kind, double bytes,
		 int gpus)
{
	if (gpus <= 1 || bytes <= 0)
		return;
	const struct llmsim_gpu *g = a->cfg->gpu;
	int per_node = llmsim_gpu_nvlink_domain(g) > 0 ? llmsim_gpu_nvlink_domain(g) : 8;
	struct llmsim_op op = {.kind = LLMSIM_OP_COLLECTIVE, .dtype = a->cfg->act_dtype};
	op.u.coll.kind = kind;
	op.u.coll.bytes = bytes;
	op.u.coll.gpus = gpus;
	op.u.coll.nodes = (gpus + per_node - 1) / per_node;
	op.u.coll.algo = LLMSIM_ALGO_AUTO;
	price(a, sec, &op, LLMSIM_BYTES_ACT);
}

static enum llmsim_attn_impl prefill_impl(enum llmsim_attn_choice c)
{
	switch (c) {
	case LLMSIM_AC_NAIVE: return LLMSIM_ATTN_NAIVE;
	case LLMSIM_AC_FLASH3: return LLMSIM_ATTN_FLASH3;
	default: return LLMSIM_ATTN_FLASH2;
	}
}

static enum llmsim_decode_impl decode_impl(enum llmsim_attn_choice c)
{
	switch (c) {
	case LLMSIM_AC_NAIVE: return LLMSIM_DEC_NAIVE;
	case LLMSIM_AC_FLASH2: return LLMSIM_DEC_FLASH2;
	case LLMSIM_AC_FLASH3: return LLMSIM_DEC_FLASHDECODING;
	default: return LLMSIM_DEC_PAGED;
	}
}

/* Attention kernels proper: prefill chunks and the decode batch. */
static void attention(struct acc *a, enum section sec, const struct llmsim_step *s,
		      int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t v_head_dim)
{
	const struct llmsim_infer_cfg *cfg = a->cfg;
	const struct llmsim_model *m = cfg->model;
	unsigned save = a->cur;
	a->cur = LLMSIM_PART_ATTN;
	for (int i = 0; i < s->nprefill; i++) {
		const struct llmsim_prefill_chunk *c = &s->prefill[i];
		if (c->tokens <= 0 || c->count <= 0)
			continue;
		struct llmsim_op op = {.kind = LLMSIM_OP_ATTENTION, .dtype = cfg->act_dtype};
		op.u.attn.impl = prefill_impl(cfg->attn);
		op.u.attn.batch = c->count;
		op.u.attn.heads = heads;
		op.u.attn.kv_heads = kv_heads;
		op.u.attn.seq = c->tokens;
		op.u.attn.kv_seq = c->context + c->tokens;
		op.u.attn.head_dim = head_dim;
		op.u.attn.v_head_dim = v_head_dim;
		op.u.attn.causal = 1;
		op.u.attn.pass = LLMSIM_PASS_FWD;
		price(a, sec, &op, LLMSIM_BYTES_KV);
	}
	if (s->decode_seqs <= 0) {
		a->cur = save;
		return;
	}
	struct llmsim_op op = {.kind = LLMSIM_OP_DECODE, .dtype = cfg->act_dtype};
	op.u.dec.impl = decode_impl(cfg->attn);
	op.u.dec.batch = s->decode_seqs;
	op.u.dec.heads = heads;
	op.u.dec.kv_heads = kv_heads;
	op.u.dec.kv_len = (int64_t)llround(fmax(1.0, s->decode_kv_len));
	op.u.dec.head_dim = head_dim;
	op.u.dec.q_len = s->q_len > 0 ? s->q_len : 1;
	op.u.dec.block_size = op.u.dec.impl == LLMSIM_DEC_PAGED ? cfg->block_size : 0;
	op.u.dec.kv_dtype = cfg->kv_dtype;
	if (m->has_mla) {
		/* the decode op's MLA form: head_dim is the no-rope part */
		op.u.dec.kv_heads = 1;
		op.u.dec.head_dim = m->mla.qk_nope_head_dim;
		op.u.dec.kv_lora_rank = m->mla.kv_lora_rank;
		op.u.dec.rope_dim = m->mla.qk_rope_head_dim;
		op.u.dec.mla_absorbed = 1;
	}
	price(a, sec, &op, LLMSIM_BYTES_KV);
	a->cur = save;
}

static int64_t prefill_kv_tokens(const struct llmsim_step *s)
{
	int64_t t = 0;
	for (int i = 0; i < s->nprefill; i++)
		t += s->prefill[i].count * (s->prefill[i].context + s->prefill[i].tokens);
	return t;
}

static void attn_block_gqa(struct acc *a, enum section sec, const struct llmsim_step *s, int64_t n)
{
	const struct llmsim_model *m = a->cfg->model;
	int tp = a->cfg->tp;
	int64_t hl = m->heads / tp, d = m->head_dim;
	int64_t kl = m->kv_heads >= tp ? m->kv_heads / tp : 1;
	ew(a, sec, LLMSIM_EW_RMSNORM, n, m->hidden, LLMSIM_BYTES_ACT);
	gemm(a, sec, n, (hl + 2 * kl) * d, m->hidden, 1, 1);
	if (m->position == LLMSIM_POS_ROPE)
		ew(a, sec, LLMSIM_EW_ROPE, n, (hl + kl) * d, LLMSIM_BYTES_ACT);
	/* writing this step's K and V into the cache (vLLM reshape_and_cache) */
	ew(a, sec, LLMSIM_EW_COPY, n, 2 * kl * d, LLMSIM_BYTES_KV);
	attention(a, sec, s, hl, kl, d, 0);
	gemm(a, sec, n, m->hidden, hl * d, 1, 1);
	coll(a, sec, LLMSIM_COLL_ALLREDUCE, (double)n * m->hidden * llmsim_dtype_bytes(a->cfg->act_dtype), tp);
	ew(a, sec, LLMSIM_EW_ADD, n, m->hidden, LLMSIM_BYTES_ACT);
}

/* MLA (DeepSeek-V2/V3): fused q_a/kv_a down-projection, q up-projection;
 * prefill up-projects the cached latent (kv_b) and runs ordinary attention
 * with head_dim nope+rope; decode absorbs W_UK into q and W_UV into the
 * output (batched per-head GEMMs) and attends over the latent directly. */
static void attn_block_mla(struct acc *a, enum section sec, const struct llmsim_step *s, int64_t n)
{
	const struct llmsim_model *m = a->cfg->model;
	const struct llmsim_mla *x = &m->mla;
	int tp = a->cfg->tp;
	int64_t hl = m->heads / tp, dn = x->qk_nope_head_dim, dr = x->qk_rope_head_dim;
	int64_t dv = x->v_head_dim, r = x->kv_lora_rank, qr = x->q_lora_rank;
	ew(a, sec, LLMSIM_EW_RMSNORM, n, m->hidden, LLMSIM_BYTES_ACT);
	if (qr > 0) {
		gemm(a, sec, n, qr + r + dr, m->hidden, 1, 1);
		ew(a, sec, LLMSIM_EW_RMSNORM, n, qr, LLMSIM_BYTES_ACT);
		gemm(a, sec, n, hl * (dn + dr), qr, 1, 1);
	} else {
		gemm(a, sec, n, hl * (dn + dr) + r + dr, m->hidden, 1, 1);
	}
	ew(a, sec, LLMSIM_EW_RMSNORM, n, r, LLMSIM_BYTES_ACT);
	ew(a, sec, LLMSIM_EW_ROPE, n, (hl + 1) * dr, LLMSIM_BYTES_ACT);
	ew(a, sec, LLMSIM_EW_COPY, n, r + dr, LLMSIM_BYTES_KV);
	a->cur = LLMSIM_PART_ATTN;
	int64_t ctx = prefill_kv_tokens(s);
	if (ctx > 0)
		gemm(a, sec, ctx, hl * (dn + dv), r, 1, 1);
	int64_t nd = s->decode_seqs * (s->q_len > 0 ? s->q_len : 1);
	if (nd > 0)
		gemm(a, sec, nd, r, dn, hl, 0);
	attention(a, sec, s, hl, hl, dn + dr, dv);
	if (nd > 0)
		gemm(a, sec, nd, dv, r, hl, 0);
	a->cur = LLMSIM_PART_BODY;
	gemm(a, sec, n, m->hidden, hl * dv, 1, 1);
	coll(a, sec, LLMSIM_COLL_ALLREDUCE, (double)n * m->hidden * llmsim_dtype_bytes(a->cfg->act_dtype), tp);
	ew(a, sec, LLMSIM_EW_ADD, n, m->hidden, LLMSIM_BYTES_ACT);
}

static void ffn(struct acc *a, enum section sec, int64_t tokens, int64_t width, int64_t batch)
{
	const struct llmsim_model *m = a->cfg->model;
	int gated = m->mlp == LLMSIM_MLP_GATED;
	gemm(a, sec, tokens, (gated ? 2 : 1) * width, m->hidden, batch, 1);
	enum llmsim_ew_kind act = gated ? LLMSIM_EW_SILU_MUL : LLMSIM_EW_GELU;
	ew(a, sec, act, tokens * batch, width, LLMSIM_BYTES_ACT);
	gemm(a, sec, tokens, m->hidden, width, batch, 1);
}

/* Expected number of distinct experts (of `local` on this rank, out of
 * `experts`) that n tokens touch when each picks top_k distinct experts
 * uniformly: a given expert is missed by one token with probability
 * 1 - top_k/experts. */
double llmsim_infer_experts_touched(int64_t n, int top_k, int experts, int local)
{
	if (n <= 0 || experts <= 0)
		return 0;
	double miss = 1.0 - (double)top_k / experts;
	return local * (1.0 - pow(miss, (double)n));
}

static void mlp_block(struct acc *a, enum section sec, int64_t n)
{
	const struct llmsim_infer_cfg *cfg = a->cfg;
	const struct llmsim_model *m = cfg->model;
	int tp = cfg->tp;
	double ab = llmsim_dtype_bytes(cfg->act_dtype);
	ew(a, sec, LLMSIM_EW_RMSNORM, n, m->hidden, LLMSIM_BYTES_ACT);
	if (sec != SEC_MOE) {
		ffn(a, sec, n, m->intermediate / tp, 1);
	} else {
		const struct llmsim_moe *x = &m->moe;
		int ep = cfg->ep;
		gemm(a, sec, n, x->experts, m->hidden, 1, 0);
		ew(a, sec, LLMSIM_EW_SOFTMAX, n, x->experts, LLMSIM_BYTES_ACT);
		double slots = (double)n * x->top_k / ep;
		coll(a, sec, LLMSIM_COLL_ALLTOALL, slots * m->hidden * ab, ep);
		double touched = llmsim_infer_experts_touched(n, x->top_k, x->experts,
							      x->experts / ep);
		int64_t batch = (int64_t)llround(fmax(1.0, touched));
		int64_t per = (int64_t)ceil(slots / batch);
		ffn(a, sec, per, (int64_t)x->expert_intermediate * ep / tp, batch);
		coll(a, sec, LLMSIM_COLL_ALLTOALL, slots * m->hidden * ab, ep);
		if (x->shared_experts > 0)
			ffn(a, sec, n, (int64_t)x->shared_experts * x->expert_intermediate / tp, 1);
	}
	coll(a, sec, LLMSIM_COLL_ALLREDUCE, (double)n * m->hidden * ab, tp);
	ew(a, sec, LLMSIM_EW_ADD, n, m->hidden, LLMSIM_BYTES_ACT);
}

static int moe_layer_count(const struct llmsim_model *m, int layers)
{
	if (!m->has_moe)
		return 0;
	int freq = m->moe.layer_freq > 0 ? m->moe.layer_freq : 1, c = 0;
	for (int i = m->moe.dense_layers; i < layers; i++)
		if ((i - m->moe.dense_layers) % freq == 0)
			c++;
	return c;
}

/* Wall time of the kernel sequence. Graph: kernels back to back with a
 * small gap. Eager: the same gap, and the host issues kernels one by one
 * (eager_host_s each); the GPU starts a kernel when both it and its launch
 * are ready, so a run of small kernels is paced by the host, while a long
 * kernel lets the host run ahead. */
static double wall_time(const struct acc *a)
{
	const struct llmsim_infer_params *pp = &a->cfg->params;
	if (a->cfg->runtime == LLMSIM_RT_GRAPH)
		return a->cost->gpu_s + (double)a->cost->kernels * pp->graph_gap_s;
	double cpu = 0, gpu = 0;
	for (int s = 0; s < SEC_COUNT; s++)
		for (int64_t r = 0; r < a->mult[s]; r++)
			for (int i = 0; i < a->n; i++) {
				if (a->e[i].sec != (enum section)s)
					continue;
				double per = a->e[i].time_s / a->e[i].kernels;
				for (int k = 0; k < a->e[i].kernels; k++) {
					cpu += pp->eager_host_s;
					gpu = fmax(gpu + pp->graph_gap_s, cpu) + per;
				}
			}
	return gpu;
}

int llmsim_infer_step(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
		      struct llmsim_step_cost *cost, struct llmsim_err *err)
{
	const struct llmsim_model *m = cfg->model;
	memset(cost, 0, sizeof *cost);
	int64_t q = s->q_len > 0 ? s->q_len : 1;
	int64_t n = s->decode_seqs * q;
	for (int i = 0; i < s->nprefill; i++)
		n += s->prefill[i].tokens * s->prefill[i].count;
	cost->tokens = n;
	if (n <= 0)
		return 0;

	struct acc *a = &(struct acc){0};
	a->cfg = cfg;
	a->cost = cost;
	a->err = err;
	a->parts = s->parts ? s->parts : LLMSIM_PART_ALL;
	a->cur = LLMSIM_PART_BODY;
	llmsim_infer_gemm_dtypes(cfg, &a->math, &a->wdt);
	int layers = s->layers > 0 ? s->layers : m->layers;
	int moe = moe_layer_count(m, layers);
	a->mult[SEC_DENSE] = layers - moe;
	a->mult[SEC_MOE] = moe;
	a->mult[SEC_PRE] = a->mult[SEC_POST] = s->layers > 0 ? 0 : 1;
	a->mult[SEC_P2P] = s->layers > 0 ? 0 : cfg->pp - 1;

	double ab = llmsim_dtype_bytes(cfg->act_dtype);
	ew(a, SEC_PRE, LLMSIM_EW_EMBEDDING, n, m->hidden, LLMSIM_BYTES_ACT);
	coll(a, SEC_PRE, LLMSIM_COLL_ALLREDUCE, (double)n * m->hidden * ab, cfg->tp);
	for (int sec = SEC_DENSE; sec <= SEC_MOE; sec++) {
		if (m->has_mla)
			attn_block_mla(a, sec, s, n);
		else
			attn_block_gqa(a, sec, s, n);
		mlp_block(a, sec, n);
	}
	ew(a, SEC_POST, LLMSIM_EW_RMSNORM, n, m->hidden, LLMSIM_BYTES_ACT);
	/* one activation send/recv between consecutive pipeline stages */
	coll(a, SEC_P2P, LLMSIM_COLL_SENDRECV, (double)n * m->hidden * ab, 2);
	a->cur = LLMSIM_PART_HEAD;
	int64_t rows = s->logits > 0 ? s->logits : 0;
	gemm(a, SEC_POST, rows, m->vocab / cfg->tp, m->hidden, 1, 0);
	coll(a, SEC_POST, LLMSIM_COLL_ALLGATHER, (double)rows * (m->vocab / cfg->tp) * 4.0, cfg->tp);
	ew(a, SEC_POST, LLMSIM_EW_SOFTMAX, rows, m->vocab, LLMSIM_BYTES_ACT);
	if (a->rc)
		return a->rc;
	cost->time_s = wall_time(a);
	return 0;
}

enum llmsim_bound llmsim_step_bound(const struct llmsim_step_cost *c, double *share)
{
	int best = 0;
	double tot = 0;
	for (int b = 0; b < LLMSIM_BOUND_COUNT; b++) {
		tot += c->time_by_bound_s[b];
		if (c->time_by_bound_s[b] > c->time_by_bound_s[best])
			best = b;
	}
	if (share)
		*share = tot > 0 ? c->time_by_bound_s[best] / tot : 0;
	return (enum llmsim_bound)best;
}
