/* layer_ops.c - the op list of one transformer layer (shapes only). */
#include "layer_ops.h"

#include <stdio.h>
#include <string.h>

const char *llmsim_phase_name(enum llmsim_workload w, int phase)
{
	if (w == LLMSIM_WORKLOAD_TRAIN)
		return phase ? "backward" : "forward";
	return phase ? "decode" : "prefill";
}

enum llmsim_dtype llmsim_layer_act_dtype(enum llmsim_dtype dt)
{
	switch (dt) {
	case LLMSIM_DT_FP8:
	case LLMSIM_DT_INT8:
	case LLMSIM_DT_FP4:
	case LLMSIM_DT_INT4:
		return LLMSIM_DT_BF16;
	default:
		return dt;
	}
}

static int wide(enum llmsim_dtype dt)
{
	return dt == LLMSIM_DT_FP32 || dt == LLMSIM_DT_TF32 || dt == LLMSIM_DT_FP64;
}

void llmsim_layer_cfg_init(struct llmsim_layer_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->workload = LLMSIM_WORKLOAD_SERVE;
	c->dtype = LLMSIM_DT_BF16;
	c->kv_dtype = LLMSIM_DT_BF16;
	c->batch = 1;
	c->seq = 4096;
	c->attn_impl = LLMSIM_ATTN_FLASH2;
	c->decode_impl = LLMSIM_DEC_PAGED;
	c->tp = 1;
}

struct builder {
	const struct llmsim_layer_cfg *c;
	struct llmsim_layer_op *ops;
	int n;
	int phase;
	int train;                    /* training: GEMMs also get their gradients */
	int64_t tp;
};

/* One GPU's share of a width split tp ways (rounded up). */
static int64_t shard(const struct builder *b, int64_t width)
{
	return (width + b->tp - 1) / b->tp;
}

/* Tokens of the norms and residuals on one GPU: all of them (replicated
 * over TP) when serving; a 1/tp slice with training's sequence parallelism. */
static int64_t ew_tokens(const struct builder *b, int64_t tokens)
{
	return b->train ? shard(b, tokens) : tokens;
}

static struct llmsim_op *add(struct builder *b, const char *name, enum llmsim_op_kind kind)
{
	LLMSIM_ASSERT(b->n < LLMSIM_LAYER_OPS_MAX);
	struct llmsim_layer_op *o = &b->ops[b->n++];
	memset(o, 0, sizeof *o);
	snprintf(o->name, sizeof o->name, "%s", name);
	o->phase = b->phase;
	o->op.kind = kind;
	o->op.dtype = llmsim_layer_act_dtype(b->c->dtype);
	return &o->op;
}

static void gemm1(struct builder *b, const char *name, int64_t m, int64_t n, int64_t k,
		  int64_t batch)
{
	struct llmsim_op *op = add(b, name, LLMSIM_OP_GEMM);
	/* INT4 is weight-only (W4A16): BF16 math on int4 weights. */
	op->dtype = b->c->dtype == LLMSIM_DT_INT4 ? LLMSIM_DT_BF16 : b->c->dtype;
	op->u.gemm.m = m;
	op->u.gemm.n = n;
	op->u.gemm.k = k;
	op->u.gemm.batch = batch;
	op->u.gemm.b_dtype = b->c->dtype;
}

/* A linear layer Y[T][out] = X[T][in] W[in][out]; in the backward phase
 * its data gradient dX = dY W^T (m=T, n=in, k=out) and weight gradient
 * dW = X^T dY (m=in, n=out, k=T). */
static void linear(struct builder *b, const char *name, int64_t tokens, int64_t in,
		   int64_t out, int64_t batch)
{
	char nm[32];
	if (!(b->train && b->phase)) {
		gemm1(b, name, tokens, out, in, batch);
		return;
	}
	snprintf(nm, sizeof nm, "%s.dgrad", name);
	gemm1(b, nm, tokens, in, out, batch);
	snprintf(nm, sizeof nm, "%s.wgrad", name);
	gemm1(b, nm, in, out, tokens, batch);
}

static void ew(struct builder *b, const char *name, enum llmsim_ew_kind kind, int64_t tokens,
	       int64_t hidden)
{
	struct llmsim_op *op = add(b, name, LLMSIM_OP_ELEMENTWISE);
	op->u.ew.kind = kind;
	op->u.ew.tokens = tokens;
	op->u.ew.hidden = hidden;
	op->u.ew.pass = b->phase && b->train ? LLMSIM_PASS_BWD : LLMSIM_PASS_FWD;
}

static int decoding(const struct builder *b)
{
	return b->phase == 1 && !b->train;
}

static void attention_block(struct builder *b, const struct llmsim_model *m, int64_t tokens)
{
	const struct llmsim_layer_cfg *c = b->c;
	enum llmsim_ew_kind norm = m->norm == LLMSIM_NORM_RMS ? LLMSIM_EW_RMSNORM
							      : LLMSIM_EW_LAYERNORM;
	int64_t H = m->hidden, heads = m->heads / b->tp, hd = m->head_dim;
	int64_t kvh = m->kv_heads >= b->tp ? m->kv_heads / b->tp : 1;
	int64_t qk_dim = hd, v_dim = hd;

	ew(b, "attn_norm", norm, ew_tokens(b, tokens), H);
	if (m->has_mla) {
		const struct llmsim_mla *a = &m->mla;
		qk_dim = a->qk_nope_head_dim + a->qk_rope_head_dim;
		v_dim = a->v_head_dim;
		if (a->q_lora_rank > 0) {
			linear(b, "q_a", tokens, H, a->q_lora_rank, 1);
			ew(b, "q_norm", norm, tokens, a->q_lora_rank);
			linear(b, "q_b", tokens, a->q_lora_rank, heads * qk_dim, 1);
		} else {
			linear(b, "q", tokens, H, heads * qk_dim, 1);
		}
		linear(b, "kv_a", tokens, H, a->kv_lora_rank + a->qk_rope_head_dim, 1);
		ew(b, "kv_norm", norm, tokens, a->kv_lora_rank);
		/* Decode with absorbed up-projections reads the latent cache
		 * directly; otherwise K and V are expanded per token. */
		if (!decoding(b))
			linear(b, "kv_b", tokens, a->kv_lora_rank,
			       heads * (a->qk_nope_head_dim + a->v_head_dim), 1);
		if (m->position == LLMSIM_POS_ROPE)
			ew(b, "rope", LLMSIM_EW_ROPE, tokens,
			   (heads + 1) * (int64_t)a->qk_rope_head_dim);
		kvh = heads;
	} else {
		linear(b, "qkv", tokens, H, (heads + 2 * kvh) * hd, 1);
		if (m->position == LLMSIM_POS_ROPE)
			ew(b, "rope", LLMSIM_EW_ROPE, tokens, (heads + kvh) * hd);
	}

	if (decoding(b)) {
		struct llmsim_op *op = add(b, "attention", LLMSIM_OP_DECODE);
		op->u.dec.impl = wide(op->dtype) ? LLMSIM_DEC_NAIVE : c->decode_impl;
		op->u.dec.batch = c->batch;
		op->u.dec.heads = heads;
		op->u.dec.kv_heads = kvh;
		op->u.dec.kv_len = c->seq;
		op->u.dec.head_dim = qk_dim;
		op->u.dec.q_len = 1;
		op->u.dec.block_size = 16;
		op->u.dec.kv_dtype = c->kv_dtype;
		if (m->has_mla) {
			op->u.dec.kv_lora_rank = m->mla.kv_lora_rank;
			op->u.dec.rope_dim = m->mla.qk_rope_head_dim;
			op->u.dec.mla_absorbed = 1;
		}
	} else {
		struct llmsim_op *op = add(b, "attention", LLMSIM_OP_ATTENTION);
		op->u.attn.impl = wide(op->dtype) ? LLMSIM_ATTN_NAIVE : c->attn_impl;
		op->u.attn.batch = c->batch;
		op->u.attn.heads = heads;
		op->u.attn.kv_heads = kvh;
		op->u.attn.seq = c->seq;
		op->u.attn.kv_seq = c->seq;
		op->u.attn.head_dim = qk_dim;
		op->u.attn.v_head_dim = v_dim;
		op->u.attn.causal = 1;
		op->u.attn.pass = b->train && b->phase ? LLMSIM_PASS_BWD : LLMSIM_PASS_FWD;
	}
	linear(b, "o_proj", tokens, heads * v_dim, H, 1);
	ew(b, "residual", LLMSIM_EW_ADD, ew_tokens(b, tokens), H);
}

/* Up (and gate), activation, down for `width` and `tokens` tokens, over
 * `batch` experts when batch > 1. */
static void ffn(struct builder *b, const struct llmsim_model *m, const char *prefix,
		int64_t tokens, int64_t width, int64_t batch)
{
	char nm[32];
	int gated = m->mlp == LLMSIM_MLP_GATED;
	snprintf(nm, sizeof nm, "%s%s", prefix, gated ? "up_gate" : "up");
	linear(b, nm, tokens, m->hidden, (gated ? 2 : 1) * width, batch);
	snprintf(nm, sizeof nm, "%sact", prefix);
	enum llmsim_ew_kind act = gated ? LLMSIM_EW_SILU_MUL
				 : m->activation == LLMSIM_ACT_SILU ? LLMSIM_EW_SILU
				 : m->activation == LLMSIM_ACT_RELU ? LLMSIM_EW_RELU
								    : LLMSIM_EW_GELU;
	ew(b, nm, act, tokens * batch, width);
	snprintf(nm, sizeof nm, "%sdown", prefix);
	linear(b, nm, tokens, width, m->hidden, batch);
}

static void mlp_block(struct builder *b, const struct llmsim_model *m, int64_t tokens)
{
	ew(b, "mlp_norm", m->norm == LLMSIM_NORM_RMS ? LLMSIM_EW_RMSNORM : LLMSIM_EW_LAYERNORM,
	   ew_tokens(b, tokens), m->hidden);
	if (m->has_moe && m->moe.experts > 0) {
		const struct llmsim_moe *e = &m->moe;
		/* Routed tokens spread evenly: each expert sees T*top_k/E. */
		int64_t per_expert = (tokens * e->top_k + e->experts - 1) / e->experts;
		linear(b, "router", tokens, m->hidden, e->experts, 1);
		ffn(b, m, "exp.", per_expert, shard(b, e->expert_intermediate), e->experts);
		if (e->shared_experts > 0)
			ffn(b, m, "shared.", tokens,
			    shard(b, (int64_t)e->shared_experts * e->expert_intermediate), 1);
	} else {
		ffn(b, m, "", tokens, shard(b, m->intermediate), 1);
	}
	ew(b, "residual2", LLMSIM_EW_ADD, ew_tokens(b, tokens), m->hidden);
}

int llmsim_layer_ops(const struct llmsim_model *m, const struct llmsim_layer_cfg *c,
		     struct llmsim_layer_op ops[LLMSIM_LAYER_OPS_MAX], int *n,
		     struct llmsim_err *err)
{
	*n = 0;
	if (c->batch < 1 || c->seq < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "batch and seq must be at least 1");
	if (c->batch > (int64_t)1 << 30 || c->seq > (int64_t)1 << 30 ||
	    c->batch * c->seq > (int64_t)1 << 40)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "batch %lld x seq %lld is too large for one layer",
				      (long long)c->batch, (long long)c->seq);
	if (m->layers < 1 || m->hidden < 1 || m->heads < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "model '%s' has no layers", m->name);
	if (c->tp < 1 || m->heads % c->tp)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%d heads are not divisible by tp %d",
				      m->heads, c->tp);

	struct builder b = {.c = c, .ops = ops, .train = c->workload == LLMSIM_WORKLOAD_TRAIN,
			    .tp = c->tp};
	for (b.phase = 0; b.phase < 2; b.phase++) {
		int64_t tokens = decoding(&b) ? c->batch : c->batch * c->seq;
		attention_block(&b, m, tokens);
		mlp_block(&b, m, tokens);
	}
	*n = b.n;
	return 0;
}
