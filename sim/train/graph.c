/*
 * graph.c - the op graph of one transformer layer (dense or MoE), of the
 * embedding + LM head + loss, and of the communication TP, SP, CP and EP
 * add, for one micro-batch on one GPU, every op priced by llmsim_predict.
 *
 * Shapes (T = micro_batch * seq / cp tokens on this GPU, t = tp):
 *   QKV   gemm m=T n=(heads + 2 kv_heads) head_dim / t k=h   (column split)
 *   O     gemm m=T n=h k=heads head_dim / t                  (row split)
 *   MLP   gemm m=T n=2f/t (gated) or f/t k=h; down m=T n=h k=f/t
 *   attention over the whole sequence, batch = micro_batch, heads / t,
 *   causal; under CP each rank does 1/cp of it (load-balanced ring).
 * Backward of a GEMM C = A B is two GEMMs: dA (m, k, n) and dB (k, n, m);
 * LoRA skips dB of the frozen base. GPT-style models (biases, LayerNorm)
 * train with dropout: unfused attention adds a dropout kernel on the
 * probabilities. With SP (tp > 1) norms and residuals
 * run on T/t tokens and each TP all-reduce is an all-gather + a
 * reduce-scatter. TP and EP collectives are exposed (no TP-comm overlap);
 * CP's KV passing overlaps the attention compute of the same layer.
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

struct bld {
	struct llmsim_train_ctx *ctx;
	const struct llmsim_train_cfg *c;
	struct llmsim_err *err;
	int rc;
	double flscale;       /* model FLOPs per priced FLOP (MoE imbalance) */
	double wgrad_s;       /* first weight-gradient GEMM after a column point */
	int wgrad_seen;
	struct layer_cost *lc;
};

static double price(struct bld *b, const struct llmsim_op *op, double *flops,
		    double *link_bytes)
{
	struct price p = {0, 0, 0};
	if (flops)
		*flops = 0;
	if (link_bytes)
		*link_bytes = 0;
	if (b->rc)
		return 0;
	b->rc = train_price(b->ctx, op, &p, b->err);
	if (b->rc)
		return 0;
	if (flops)
		*flops = p.flops;
	if (link_bytes)
		*link_bytes = p.link_bytes;
	return p.time_s;
}

static void fwd_bwd_gemm(struct bld *b, int64_t m, int64_t n, int64_t k, int64_t batch,
			 int weight_grad)
{
	if (m < 1 || n < 1 || k < 1 || batch < 1)
		return;
	struct llmsim_op op;
	double fl;
	memset(&op, 0, sizeof op);
	op.kind = LLMSIM_OP_GEMM;
	op.dtype = b->c->dtype;
	op.u.gemm.b_dtype = b->c->dtype;
	op.u.gemm.batch = batch;
	op.u.gemm.m = m, op.u.gemm.n = n, op.u.gemm.k = k;
	b->lc->fwd_s += price(b, &op, &fl, NULL);
	b->lc->fwd_flops += fl * b->flscale;
	op.u.gemm.m = m, op.u.gemm.n = k, op.u.gemm.k = n; /* dA = dC B^T */
	b->lc->bwd_s += price(b, &op, &fl, NULL);
	b->lc->bwd_flops += fl * b->flscale;
	if (weight_grad) {
		op.u.gemm.m = k, op.u.gemm.n = n, op.u.gemm.k = m; /* dB = A^T dC */
		double w = price(b, &op, &fl, NULL);
		b->lc->bwd_s += w;
		if (!b->wgrad_seen)
			b->wgrad_s = w;
		b->wgrad_seen = 1;
		b->lc->bwd_flops += fl * b->flscale;
	}
}

/* A linear layer of the base model, plus its LoRA adapter when asked. */
static void linear(struct bld *b, int64_t T, int64_t out, int64_t in, int lora)
{
	int lr = b->c->lora_rank;
	fwd_bwd_gemm(b, T, out, in, 1, lr == 0);
	if (lr > 0 && lora) {
		fwd_bwd_gemm(b, T, lr, in, 1, 1);
		fwd_bwd_gemm(b, T, out, lr, 1, 1);
	}
}

static void ew(struct bld *b, enum llmsim_ew_kind kind, int64_t tokens, int64_t hidden)
{
	if (tokens < 1 || hidden < 1)
		return;
	struct llmsim_op op;
	double fl;
	memset(&op, 0, sizeof op);
	op.kind = LLMSIM_OP_ELEMENTWISE;
	op.dtype = LLMSIM_DT_BF16;
	op.u.ew.kind = kind;
	op.u.ew.tokens = tokens;
	op.u.ew.hidden = hidden;
	op.u.ew.pass = LLMSIM_PASS_FWD;
	b->lc->fwd_s += price(b, &op, &fl, NULL);
	b->lc->fwd_flops += fl * b->flscale;
	op.u.ew.pass = LLMSIM_PASS_BWD;
	b->lc->bwd_s += price(b, &op, &fl, NULL);
	b->lc->bwd_flops += fl * b->flscale;
}

/* A collective; returns its time and adds its link bytes to *bytes. */
static double coll(struct bld *b, enum llmsim_coll_kind kind, double bytes, int gpus,
		   int nodes, double *sent)
{
	if (gpus <= 1 || bytes <= 0)
		return 0;
	struct llmsim_op op;
	double lb;
	train_coll_op(&op, kind, bytes, gpus, nodes);
	double t = price(b, &op, NULL, &lb);
	if (sent)
		*sent += lb;
	return t;
}

/* One TP communication point of T*h activations, in Megatron's f/g
 * operators. `col` = 1: the input of a column-parallel linear (QKV, fc1):
 * identity forward (all-gather with SP), all-reduce of the input gradient
 * backward (reduce-scatter with SP). `col` = 0: the output of a
 * row-parallel linear (out proj, fc2): all-reduce forward (reduce-scatter
 * with SP), identity backward (all-gather with SP). The forward cost is
 * added (exposed); the backward cost is returned: at a column point
 * Megatron overlaps it with the linear's weight-gradient GEMM (see
 * col_end), at a row point it is exposed. */
static double tp_point(struct bld *b, double bytes, int col)
{
	const struct llmsim_train_cfg *c = b->c;
	if (c->tp <= 1)
		return 0;
	int nodes = train_group_nodes(llmsim_gpu_nvlink_domain(&b->ctx->gpu), c->tp, 1);
	double f = 0, r = 0;
	if (!c->sequence_parallel) {
		if (col)
			r = coll(b, LLMSIM_COLL_ALLREDUCE, bytes, c->tp, nodes, &b->lc->tp_bytes);
		else
			f = coll(b, LLMSIM_COLL_ALLREDUCE, bytes, c->tp, nodes, &b->lc->tp_bytes);
	} else if (col) {
		f = coll(b, LLMSIM_COLL_ALLGATHER, bytes, c->tp, nodes, &b->lc->tp_bytes);
		r = coll(b, LLMSIM_COLL_REDUCESCATTER, bytes, c->tp, nodes, &b->lc->tp_bytes);
	} else {
		f = coll(b, LLMSIM_COLL_REDUCESCATTER, bytes, c->tp, nodes, &b->lc->tp_bytes);
		r = coll(b, LLMSIM_COLL_ALLGATHER, bytes, c->tp, nodes, &b->lc->tp_bytes);
	}
	b->lc->tp_fwd_s += f;
	b->wgrad_s = 0;
	b->wgrad_seen = 0;
	if (!col)
		b->lc->tp_bwd_s += r;
	return col ? r : 0;
}

/* After the column-parallel linear that follows a column point: the
 * input-gradient collective overlaps its weight-gradient GEMM (the first
 * priced after the point). */
static void col_end(struct bld *b, double bwd_comm)
{
	b->lc->tp_bwd_s += fmax(0, bwd_comm - b->wgrad_s);
}

/* Attention core (QK^T, softmax, PV) over the whole sequence; 1/cp here. */
static void attention(struct bld *b)
{
	const struct llmsim_model *m = &b->ctx->model;
	const struct llmsim_train_cfg *c = b->c;
	struct llmsim_op op;
	double fl, t;
	memset(&op, 0, sizeof op);
	op.kind = LLMSIM_OP_ATTENTION;
	op.dtype = LLMSIM_DT_BF16;
	op.u.attn.impl = c->attn;
	op.u.attn.batch = c->micro_batch;
	op.u.attn.heads = m->heads / c->tp;
	op.u.attn.seq = c->seq;
	op.u.attn.kv_seq = c->seq;
	op.u.attn.causal = 1;
	if (m->has_mla) {
		op.u.attn.kv_heads = op.u.attn.heads;
		op.u.attn.head_dim = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
		op.u.attn.v_head_dim = m->mla.v_head_dim;
	} else {
		op.u.attn.kv_heads = m->kv_heads >= c->tp ? m->kv_heads / c->tp : 1;
		op.u.attn.head_dim = m->head_dim;
	}
	op.u.attn.pass = LLMSIM_PASS_FWD;
	t = price(b, &op, &fl, NULL) / c->cp;
	b->lc->fwd_s += t;
	b->lc->attn_core_fwd_s += t;
	b->lc->fwd_flops += fl / c->cp;
	b->lc->attn_core_fwd_flops += fl / c->cp;
	double attn_fwd = t;
	op.u.attn.pass = LLMSIM_PASS_BWD;
	t = price(b, &op, &fl, NULL) / c->cp;
	b->lc->bwd_s += t;
	b->lc->bwd_flops += fl / c->cp;
	double attn_bwd = t;

	/* Unfused attention with dropout (GPT-style training): a separate
	 * dropout kernel over the a/t x s x s probabilities, forward and
	 * backward (Megatron's fused scale-mask-softmax leaves it out);
	 * selective recomputation re-runs it with the core. */
	if (c->attn == LLMSIM_ATTN_NAIVE && b->ctx->geom.dropout) {
		double f0 = b->lc->fwd_s, fl0 = b->lc->fwd_flops;
		ew(b, LLMSIM_EW_MUL, (int64_t)c->micro_batch * op.u.attn.heads * c->seq / c->cp,
		   c->seq);
		b->lc->attn_core_fwd_s += b->lc->fwd_s - f0;
		b->lc->attn_core_fwd_flops += b->lc->fwd_flops - fl0;
	}

	if (c->cp > 1) { /* ring: cp-1 KV blocks each way, overlapped with attention */
		double kv_dim = m->has_mla ? (double)op.u.attn.heads *
					     (op.u.attn.head_dim + op.u.attn.v_head_dim)
					   : 2.0 * op.u.attn.kv_heads * m->head_dim;
		double blk = (double)c->micro_batch * (c->seq / c->cp) * kv_dim * 2;
		int stride = c->tp;
		int nodes = train_group_nodes(llmsim_gpu_nvlink_domain(&b->ctx->gpu), 2, stride) > 1 ? 2 : 1;
		double step_f = coll(b, LLMSIM_COLL_SENDRECV, blk, 2, nodes, NULL);
		double step_b = coll(b, LLMSIM_COLL_SENDRECV, 2 * blk, 2, nodes, NULL);
		double cf = (c->cp - 1) * step_f, cb = (c->cp - 1) * step_b;
		b->lc->cp_bytes += (c->cp - 1) * 3 * blk;
		b->lc->cp_fwd_exposed_s += fmax(0, cf - attn_fwd);
		b->lc->cp_bwd_exposed_s += fmax(0, cb - attn_bwd);
	}
}

/* The dense MLP (or shared experts) of width f on T tokens. */
static void mlp(struct bld *b, int64_t T, int64_t f)
{
	const struct llmsim_model *m = &b->ctx->model;
	int64_t h = m->hidden, t = b->c->tp;
	if (f < 1)
		return;
	if (m->mlp == LLMSIM_MLP_GATED) {
		linear(b, T, 2 * f / t, h, 0);
		ew(b, LLMSIM_EW_SILU_MUL, T, f / t);
	} else {
		linear(b, T, f / t, h, 0);
		ew(b, m->activation == LLMSIM_ACT_SILU ? LLMSIM_EW_SILU_MUL : LLMSIM_EW_GELU, T,
		   f / t);
	}
	linear(b, T, h, f / t, 0);
}

/* Routed experts on the busiest EP rank: E/ep experts, one of them at
 * imbalance times the mean load. */
static void experts(struct bld *b, int64_t T)
{
	const struct llmsim_model *m = &b->ctx->model;
	const struct llmsim_train_cfg *c = b->c;
	int64_t h = m->hidden, t = c->tp, fe = m->moe.expert_intermediate;
	int64_t eloc = m->moe.experts / c->ep;
	double mean = (double)T * m->moe.top_k * c->ep / m->moe.experts;
	int64_t te = (int64_t)ceil(mean);
	int64_t tb = (int64_t)ceil(mean * c->moe_imbalance);
	if (te < 1)
		te = 1;
	if (tb < 1)
		tb = 1;
	int gated = m->mlp == LLMSIM_MLP_GATED;
	int64_t up = gated ? 2 * fe / t : fe / t;
	double saved = b->flscale;
	b->flscale = (double)eloc * mean / ((eloc - 1) * (double)te + (double)tb);
	int lr = c->lora_rank == 0;
	if (eloc > 1) {
		fwd_bwd_gemm(b, te, up, h, eloc - 1, lr);
		fwd_bwd_gemm(b, te, h, fe / t, eloc - 1, lr);
	}
	fwd_bwd_gemm(b, tb, up, h, 1, lr);
	fwd_bwd_gemm(b, tb, h, fe / t, 1, lr);
	ew(b, gated ? LLMSIM_EW_SILU_MUL : LLMSIM_EW_GELU, (eloc - 1) * te + tb, fe / t);
	b->flscale = saved;
}

static void layer(struct bld *b, int moe)
{
	const struct llmsim_model *m = &b->ctx->model;
	const struct llmsim_train_cfg *c = b->c;
	int64_t t = c->tp, h = m->hidden;
	int64_t T = (int64_t)c->micro_batch * c->seq / c->cp;
	int64_t Tsp = c->sequence_parallel && t > 1 ? T / t : T;
	double act_bytes = (double)T * h * 2;
	enum llmsim_ew_kind norm = m->norm == LLMSIM_NORM_RMS ? LLMSIM_EW_RMSNORM
							  : LLMSIM_EW_LAYERNORM;
	/* attention block */
	ew(b, norm, Tsp, h);
	double pend = tp_point(b, act_bytes, 1);
	if (m->has_mla) {
		int64_t a = m->heads / t;
		int64_t dq = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
		if (m->mla.q_lora_rank > 0) {
			linear(b, T, m->mla.q_lora_rank, h, 1);
			linear(b, T, a * dq, m->mla.q_lora_rank, 0);
		} else {
			linear(b, T, a * dq, h, 1);
		}
		linear(b, T, m->mla.kv_lora_rank + m->mla.qk_rope_head_dim, h, 1);
		linear(b, T, a * (m->mla.qk_nope_head_dim + m->mla.v_head_dim),
		       m->mla.kv_lora_rank, 0);
		col_end(b, pend);
		if (m->position == LLMSIM_POS_ROPE)
			ew(b, LLMSIM_EW_ROPE, T, (a + 1) * m->mla.qk_rope_head_dim);
		attention(b);
		linear(b, T, h, a * m->mla.v_head_dim, 1);
	} else {
		int64_t a = m->heads / t;
		int64_t kv = m->kv_heads >= t ? m->kv_heads / t : 1;
		linear(b, T, (a + 2 * kv) * m->head_dim, h, 1);
		col_end(b, pend);
		if (m->position == LLMSIM_POS_ROPE)
			ew(b, LLMSIM_EW_ROPE, T, (a + kv) * m->head_dim);
		attention(b);
		linear(b, T, h, a * m->head_dim, 1);
	}
	tp_point(b, act_bytes, 0);
	ew(b, LLMSIM_EW_ADD, Tsp, h);

	/* MLP block */
	ew(b, norm, Tsp, h);
	pend = tp_point(b, act_bytes, 1);
	if (moe) {
		fwd_bwd_gemm(b, T, m->moe.experts, h, 1, c->lora_rank == 0); /* router */
		if (c->ep > 1) {
			int nodes = train_group_nodes(llmsim_gpu_nvlink_domain(&b->ctx->gpu), c->ep, c->tp);
			double a2a = (double)T * m->moe.top_k * h * 2 /
				     (c->sequence_parallel && t > 1 ? t : 1);
			/* dispatch + combine forward; their transposes backward */
			double x = coll(b, LLMSIM_COLL_ALLTOALL, a2a, c->ep, nodes, &b->lc->ep_bytes);
			b->lc->ep_fwd_s += 2 * x;
			b->lc->ep_bwd_s += 2 * x;
			b->lc->ep_bytes *= 4;
		}
		experts(b, T);
		if (m->moe.shared_experts > 0)
			mlp(b, T, (int64_t)m->moe.shared_experts * m->moe.expert_intermediate);
	} else {
		mlp(b, T, m->intermediate);
	}
	col_end(b, pend);
	tp_point(b, act_bytes, 0);
	ew(b, LLMSIM_EW_ADD, Tsp, h);
}

static void head(struct bld *b, struct layer_cost *emb, struct layer_cost *hd)
{
	const struct llmsim_model *m = &b->ctx->model;
	const struct llmsim_train_cfg *c = b->c;
	int64_t t = c->tp, h = m->hidden;
	int64_t T = (int64_t)c->micro_batch * c->seq / c->cp;
	int64_t Tsp = c->sequence_parallel && t > 1 ? T / t : T;
	double act_bytes = (double)T * h * 2;
	enum llmsim_ew_kind norm = m->norm == LLMSIM_NORM_RMS ? LLMSIM_EW_RMSNORM
							  : LLMSIM_EW_LAYERNORM;
	b->lc = emb; /* the first pipeline stage */
	ew(b, LLMSIM_EW_EMBEDDING, T, h);
	tp_point(b, act_bytes, 0); /* vocab-parallel embedding: AR (or RS) */
	b->lc = hd; /* the last */
	ew(b, norm, Tsp, h);
	double pend = tp_point(b, act_bytes, 1);
	fwd_bwd_gemm(b, T, m->vocab / t, h, 1, c->lora_rank == 0);
	col_end(b, pend);
	ew(b, LLMSIM_EW_CROSS_ENTROPY, T, m->vocab / t);
	if (t > 1) { /* vocab-parallel loss: max, sum-exp, target logit (fp32) */
		int nodes = train_group_nodes(llmsim_gpu_nvlink_domain(&b->ctx->gpu), c->tp, 1);
		b->lc->tp_fwd_s += coll(b, LLMSIM_COLL_ALLREDUCE, 3.0 * T * 4, c->tp, nodes,
					&b->lc->tp_bytes);
	}
}

static int shape_cost_at(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 struct shape_cost *sc, struct llmsim_err *err)
{
	struct bld b = {.ctx = ctx, .c = c, .err = err, .flscale = 1};
	memset(sc, 0, sizeof *sc);
	if (ctx->geom.dense_layers) {
		b.lc = &sc->dense;
		layer(&b, 0);
	}
	if (ctx->geom.moe_layers) {
		b.lc = &sc->moe;
		layer(&b, 1);
	}
	head(&b, &sc->emb, &sc->head);
	int64_t T = (int64_t)c->micro_batch * c->seq / c->cp;
	sc->tp_msg_bytes = (double)T * ctx->model.hidden * 2;
	return b.rc ? b.rc : train_p2p_cost(ctx, c, sc, err);
}

int train_p2p_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		   struct shape_cost *sc, struct llmsim_err *err)
{
	sc->p2p_s = sc->p2p_bytes = 0;
	if (c->pp <= 1)
		return 0;
	struct layer_cost scratch;
	memset(&scratch, 0, sizeof scratch);
	struct bld b = {.ctx = ctx, .c = c, .err = err, .flscale = 1, .lc = &scratch};
	int64_t T = (int64_t)c->micro_batch * c->seq / c->cp;
	int spd = c->sequence_parallel && c->tp > 1 ? c->tp : 1;
	int stride = c->tp * c->cp * c->dp;
	int nodes = stride >= llmsim_gpu_nvlink_domain(&ctx->gpu) ? 2 : 1;
	sc->p2p_bytes = (double)T * ctx->model.hidden * 2 / spd;
	sc->p2p_s = coll(&b, LLMSIM_COLL_SENDRECV, sc->p2p_bytes, 2, nodes, NULL);
	return b.rc;
}

/* The tensor intensity of the layers' load (op.load_rho): their FLOP rate
 * per GPU over the 16-bit tensor peak at the sustained clock, 8-bit FLOPs
 * weighted by their energy, rounded up to 1/64 so that op prices stay
 * cached across configurations; 0 without a power-capped clock. */
static double layers_rho(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 const struct shape_cost *sc)
{
	if (!(llmsim_gpu_power_cap_hz(&ctx->gpu) > 0))
		return 0;
	double flops = sc->dense.fwd_flops + sc->dense.bwd_flops + sc->moe.fwd_flops +
		       sc->moe.bwd_flops;
	double busy_s = sc->dense.fwd_s + sc->dense.bwd_s + sc->moe.fwd_s + sc->moe.bwd_s;
	double rho = ceil(llmsim_tensor_rho(&ctx->gpu, c->dtype, flops, busy_s) * 64) / 64;
	return rho < 1 ? rho : 1;
}

/* A training step keeps the GPU busy for seconds: its ops run at the one
 * clock the power limit allows its load (sim/predict.c). The layers are
 * priced at the burst clock, their load measured, and priced again in it. */
int train_shape_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     struct shape_cost *sc, struct llmsim_err *err)
{
	ctx->load_rho = 0;
	int rc = shape_cost_at(ctx, c, sc, err);
	double rho = rc ? 0 : layers_rho(ctx, c, sc);
	if (rho > 0) {
		ctx->load_rho = rho;
		rc = shape_cost_at(ctx, c, sc, err);
		ctx->load_rho = 0;
		sc->load_rho = rho;
	}
	return rc;
}
