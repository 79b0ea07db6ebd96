/*
 * graph_torch_train.c - a plain PyTorch training step as its kernels run
 * (the torch engine with work TRAIN): nn.Module layers over
 * parameters of type P (c->weights: fp32, the master weights) under
 * torch.autocast to A (c->math: bf16), loss.backward() as autograd runs it,
 * as calib/torch/steps_train.py writes the step. Each section is its
 * forward in launch order, then its backward in the order autograd's engine
 * runs it; the optimizer step is the walker's (sim/train/).
 *
 * What the program launches (read off the measured kernel lists,
 * calib/data/h200-2026-12-01/steps_train.tsv, step_kernels, and PyTorch's
 * sources):
 *  - the residual stream stays in P: the embedding gathers P rows and
 *    `x + proj(...)` adds an A tensor into P (TensorIterator's casting
 *    path: unrolled_elementwise_kernel with LoadWithCast, non-vectorized:
 *    `strided`); norms (nn.RMSNorm, nn.LayerNorm) run on P;
 *  - F.linear under autocast casts its input to A (bfloat16_copy_kernel,
 *    once per linear: q, k and v cast the same norm output three times),
 *    and its weight (once per forward: autocast's cache holds the copy of
 *    a leaf parameter until the forward leaves autocast), then one GEMM;
 *  - RoPE as the script writes it: the cos and sin rows cast to A, x1*cos
 *    and x2*sin on the strided halves of the head (the broadcast table:
 *    the non-vectorized kernel), their difference, x2*cos, x1*sin, their
 *    sum, the concatenation;
 *  - SDPA over transposed [b, h, s, d] views (no copies: cuDNN's fused
 *    attention on Hopper, c->attn), its output in the query's layout;
 *  - SwiGLU as F.silu(gate(h)) * up(h): separate GEMMs, SiLU, the product;
 *  - the LM head, logits.float() (a cast A -> P: the non-vectorized copy:
 *    only P -> bf16 has a vectorized cast kernel), log_softmax and
 *    nll_loss (F.cross_entropy on P logits).
 * Backward, per linear: the data gradient, the weight gradient in A, cast
 * to P (ToCopyBackward of the weight's cast: the non-vectorized copy) and
 * taken as the parameter's .grad (AccumulateGrad steals it); the gradient
 * of a cast input cast back to P. Gradients of a tensor used twice add up
 * in place (InputBuffer::accumulate: a kernel, no new tensor). The
 * residual add's gradient is cast to the projection's type A. RoPE's
 * backward: -g1 (neg), four broadcast multiplies, the two sums of each
 * half's gradients, and each half's SliceBackward (zeros of the whole head,
 * the half copied in: a strided copy), then their sum. Norms: the input
 * gradient (layer_norm_grad_input) and the weight's (GammaBetaBackward, a
 * column reduction over dy and x). nll_loss's backward fills a zero P
 * gradient of the logits; log_softmax's; the cast back to A. The
 * embedding's backward fills a zero P table and adds the rows in
 * (embedding_dense_backward: up to 3072 indices one kernel, more a sort
 * of the indices first, then a host sync on the segment count).
 *
 * Fills (at::zeros) write their bytes and read none: llmsim's element-wise
 * kinds have no write-only kernel, so a fill is priced as the copy of half
 * its elements (the same HBM traffic). Dropout: none (the program trains
 * without it).
 */
#include <string.h>

#include "graph_bld.h"

/* the builder's view of the step */
struct tt {
	struct bld *b;
	enum llmsim_dtype P, A; /* parameters (and the residual stream); autocast */
	double eP, eA;
	int autocast;           /* P != A: casts */
	int64_t T, s, H;
};

/* ---- tensors ---- */

/* A tensor the last node added allocates (-1 without a tensor list). */
static int tnew(struct tt *x, double bytes, enum llmsim_gt_kind kind)
{
	struct llmsim_graph_mem *mm = x->b->mem;
	if (!mm || x->b->g->n < 1)
		return -1;
	LLMSIM_ASSERT(mm->n < LLMSIM_GRAPH_MAX_TENSORS);
	struct llmsim_gtensor *t = &mm->t[mm->n];
	t->bytes = bytes;
	t->born = x->b->g->n - 1;
	t->dies = -1;
	t->kind = kind;
	return mm->n++;
}

/* Tensor t is freed after the last node added. */
static void tdie(struct tt *x, int t)
{
	if (x->b->mem && t >= 0)
		x->b->mem->t[t].dies = x->b->g->n - 1;
}

static int last(const struct tt *x)
{
	return x->b->g->n - 1;
}

/* ---- nodes ---- */

/* An element-wise node: kind over tokens x hidden in dt (written as out),
 * its op's pass, strided (the non-vectorized kernel), bcast. */
static struct llmsim_gnode *ew(struct tt *x, const char *base, const char *suffix,
			       enum llmsim_gphase ph, enum llmsim_ew_kind kind, int64_t tokens,
			       int64_t hidden, enum llmsim_dtype dt, enum llmsim_dtype out,
			       enum llmsim_pass pass, int strided, int bcast)
{
	char nm[48];
	gb_cat3(nm, sizeof nm, base, suffix, NULL);
	struct llmsim_gnode *n =
		gb_ew1(x->b, nm, ph, kind, tokens, hidden, LLMSIM_BYTES_ACT, strided, 0);
	if (!n)
		return NULL;
	n->op.dtype = dt;
	n->op.u.ew.out_dtype = out != dt ? out : 0;
	n->op.u.ew.pass = pass;
	n->op.u.ew.bcast = bcast;
	return n;
}

/* A cast (a copy into another type); contiguous P -> bf16 is PyTorch's
 * vectorized bfloat16_copy_kernel, every other cast its non-vectorized
 * casting copy. */
static int cast(struct tt *x, const char *base, const char *suffix, enum llmsim_gphase ph,
		int64_t tokens, int64_t hidden, enum llmsim_dtype from, enum llmsim_dtype to,
		enum llmsim_gt_kind kind)
{
	int vec = from == LLMSIM_DT_FP32 && to == LLMSIM_DT_BF16;
	if (!ew(x, base, suffix, ph, LLMSIM_EW_COPY, tokens, hidden, from, to, LLMSIM_PASS_FWD,
		!vec, 0))
		return -1;
	return tnew(x, (double)tokens * hidden * llmsim_dtype_bytes(to), kind);
}

/* at::zeros of tokens x hidden in dt (see the file comment). */
static int fill(struct tt *x, const char *base, const char *suffix, enum llmsim_gphase ph,
		int64_t tokens, int64_t hidden, enum llmsim_dtype dt, enum llmsim_gt_kind kind)
{
	int64_t half = hidden > 1 ? hidden / 2 : 1;
	int64_t rows = hidden > 1 ? tokens : (tokens + 1) / 2;
	if (!ew(x, base, suffix, ph, LLMSIM_EW_COPY, rows, half, dt, dt, LLMSIM_PASS_FWD, 0, 0))
		return -1;
	return tnew(x, (double)tokens * hidden * llmsim_dtype_bytes(dt), kind);
}

static struct llmsim_gnode *gemm(struct tt *x, const char *base, const char *suffix,
				 enum llmsim_gphase ph, int64_t m, int64_t n, int64_t k,
				 unsigned role)
{
	char nm[48];
	gb_cat3(nm, sizeof nm, base, suffix, NULL);
	struct llmsim_gnode *g = gb_gemm(x->b, nm, ph, m, n, k, 1, 1, role);
	if (g)
		g->op.dtype = g->op.u.gemm.b_dtype = x->A;
	return g;
}

/* ---- linear layers ---- */

struct lin {
	const char *name;
	int64_t out, in;
	int bias;
	int x;        /* the A input it saves: its own cast (cast_in) or the caller's */
	int cast_in;  /* x is this linear's cast of a P input */
	int w, wb;    /* autocast's copies of the weight and the bias */
	int y;        /* its output */
};

/* F.linear forward: the input's cast (unless it is A already: `given`),
 * after which tensor src_dies (its last use) is freed, the weight's (and
 * bias's) cast, the GEMM. */
static void lin_fwd(struct tt *x, struct lin *l, int given, int src_dies)
{
	l->cast_in = x->autocast && given < 0;
	l->x = given;
	if (l->cast_in) {
		l->x = cast(x, l->name, ".cast_in", LLMSIM_PH_FWD, x->T, l->in, x->P, x->A,
			    LLMSIM_GT_ACT);
		tdie(x, src_dies);
	}
	l->w = l->wb = -1;
	if (x->autocast) {
		l->w = cast(x, l->name, ".cast_w", LLMSIM_PH_FWD, l->out, l->in, x->P, x->A,
			    LLMSIM_GT_WCAST);
		if (l->bias)
			l->wb = cast(x, l->name, ".cast_b", LLMSIM_PH_FWD, 1, l->out, x->P, x->A,
				     LLMSIM_GT_WCAST);
	}
	gemm(x, l->name, "", LLMSIM_PH_FWD, x->T, l->out, l->in, LLMSIM_GN_LINEAR);
	l->y = tnew(x, (double)x->T * l->out * x->eA, LLMSIM_GT_ACT);
}

/* Its backward, given the gradient gy of its output: the gradient of its
 * input (in P after its own cast's backward, else in A). */
static int lin_bwd(struct tt *x, struct lin *l, int gy)
{
	gemm(x, l->name, ".dgrad", LLMSIM_PH_BWD, x->T, l->in, l->out, LLMSIM_GN_LINEAR);
	int dx = tnew(x, (double)x->T * l->in * x->eA, LLMSIM_GT_ACT);
	gemm(x, l->name, ".wgrad", LLMSIM_PH_BWD, l->in, l->out, x->T, LLMSIM_GN_WGRAD);
	int dw = tnew(x, (double)l->in * l->out * x->eA,
		      x->autocast ? LLMSIM_GT_ACT : LLMSIM_GT_GRAD);
	if (l->bias) {
		/* the bias's gradient: dY summed over the tokens */
		ew(x, l->name, ".bias_grad", LLMSIM_PH_BWD, LLMSIM_EW_REDUCE, l->out, x->T, x->A,
		   x->A, LLMSIM_PASS_FWD, 0, 0);
		if (x->autocast)
			cast(x, l->name, ".bias_grad.cast", LLMSIM_PH_BWD, 1, l->out, x->A, x->P,
			     LLMSIM_GT_GRAD);
	}
	/* MmBackward releases what it saved, and the gradient it was given */
	tdie(x, l->x);
	tdie(x, l->w);
	tdie(x, l->wb);
	tdie(x, gy);
	if (x->autocast) {
		cast(x, l->name, ".wgrad.cast", LLMSIM_PH_BWD, l->out, l->in, x->A, x->P,
		     LLMSIM_GT_GRAD);
		tdie(x, dw);
	}
	if (!l->cast_in)
		return dx;
	int d32 = cast(x, l->name, ".cast_in.bwd", LLMSIM_PH_BWD, x->T, l->in, x->A, x->P,
		       LLMSIM_GT_ACT);
	tdie(x, dx);
	return d32;
}

/* g += d in place (InputBuffer::accumulate), tokens x hidden of dt: d is
 * freed. */
static void grad_add(struct tt *x, const char *base, int64_t tokens, int64_t hidden,
		     enum llmsim_dtype dt, int d)
{
	ew(x, base, ".grad_add", LLMSIM_PH_BWD, LLMSIM_EW_ADD, tokens, hidden, dt, dt,
	   LLMSIM_PASS_FWD, 0, 0);
	tdie(x, d);
}

/* ---- norms (nn.RMSNorm, nn.LayerNorm on the P stream) ---- */

struct norm {
	const char *name;
	int stats;    /* rstd (and mean), saved */
};

/* forward: its output in P (its input, the stream, it saves) */
static int norm_fwd(struct tt *x, struct norm *n)
{
	struct bld *b = x->b;
	ew(x, n->name, "", LLMSIM_PH_FWD, b->norm, x->T, x->H, x->P, x->P, LLMSIM_PASS_FWD, 0, 0);
	int y = tnew(x, (double)x->T * x->H * x->eP, LLMSIM_GT_ACT);
	n->stats = tnew(x, (b->norm == LLMSIM_EW_LAYERNORM ? 2.0 : 1.0) * x->T * 4, LLMSIM_GT_ACT);
	return y;
}

/* backward from gy: the input's gradient (layer_norm_grad_input), and the
 * weight's (and bias's): GammaBetaBackward, a column reduction of dy and x
 * over the tokens. `stream`: the input's gradient is the residual
 * stream's (the section's io), not a tensor of its own; else returned. */
static int norm_bwd(struct tt *x, struct norm *n, int gy, int stream)
{
	struct bld *b = x->b;
	double np = b->norm == LLMSIM_EW_LAYERNORM ? 2.0 : 1.0;
	ew(x, n->name, ".bwd", LLMSIM_PH_BWD, b->norm, x->T, x->H, x->P, x->P, LLMSIM_PASS_BWD, 0,
	   0);
	int dx = stream ? -1 : tnew(x, (double)x->T * x->H * x->eP, LLMSIM_GT_ACT);
	if (stream && b->mem)
		b->mem->io[b->sec].grad_in_born = last(x);
	ew(x, n->name, ".bwd.weight", LLMSIM_PH_BWD, LLMSIM_EW_REDUCE, x->H, 2 * x->T, x->P, x->P,
	   LLMSIM_PASS_FWD, 0, 0);
	tnew(x, np * x->H * x->eP, LLMSIM_GT_GRAD);
	tdie(x, n->stats);
	tdie(x, gy);
	return dx;
}

/* ---- RoPE (see the file comment), over w = heads * d of the T tokens ---- */

struct rope {
	const char *name;
	int64_t w;
	int cos, sin; /* the A tables its multiplies save */
};

static struct llmsim_gnode *rmul(struct tt *x, struct rope *r, const char *suffix,
				 enum llmsim_gphase ph)
{
	/* a strided half of a head times a broadcast table row */
	return ew(x, r->name, suffix, ph, LLMSIM_EW_MUL, x->T, r->w / 2, x->A, x->A,
		  LLMSIM_PASS_FWD, 1, 1);
}

/* forward over the projection's output `in` (freed at its last use):
 * returns the roped tensor */
static int rope_fwd(struct tt *x, struct rope *r, int in)
{
	int64_t d = x->b->m->head_dim, h = r->w / 2;
	double half = (double)x->T * h * x->eA;
	enum llmsim_gphase F = LLMSIM_PH_FWD;
	r->cos = cast(x, r->name, ".cos", F, x->s, d / 2, LLMSIM_DT_FP32, x->A, LLMSIM_GT_ACT);
	r->sin = cast(x, r->name, ".sin", F, x->s, d / 2, LLMSIM_DT_FP32, x->A, LLMSIM_GT_ACT);
	rmul(x, r, ".mul", F); /* x1 * cos */
	int a = tnew(x, half, LLMSIM_GT_ACT);
	rmul(x, r, ".mul", F); /* x2 * sin */
	int c = tnew(x, half, LLMSIM_GT_ACT);
	ew(x, r->name, ".sub", F, LLMSIM_EW_ADD, x->T, h, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
	int lo = tnew(x, half, LLMSIM_GT_ACT);
	tdie(x, a);
	tdie(x, c);
	rmul(x, r, ".mul", F); /* x2 * cos */
	int e = tnew(x, half, LLMSIM_GT_ACT);
	rmul(x, r, ".mul", F); /* x1 * sin: the last read of the projection */
	int f = tnew(x, half, LLMSIM_GT_ACT);
	tdie(x, in);
	ew(x, r->name, ".add", F, LLMSIM_EW_ADD, x->T, h, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
	int hi = tnew(x, half, LLMSIM_GT_ACT);
	tdie(x, e);
	tdie(x, f);
	ew(x, r->name, ".cat", F, LLMSIM_EW_COPY, x->T, r->w, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
	int out = tnew(x, (double)x->T * r->w * x->eA, LLMSIM_GT_ACT);
	tdie(x, lo);
	tdie(x, hi);
	return out;
}

/* backward from g, the roped tensor's gradient: returns the projection
 * output's */
static int rope_bwd(struct tt *x, struct rope *r, int g)
{
	int64_t h = r->w / 2;
	double half = (double)x->T * h * x->eA;
	enum llmsim_gphase B = LLMSIM_PH_BWD;
	/* by autograd's order: x1*sin's and x2*cos's backward (g2 times the
	 * table), -g1 (SubBackward), x2*sin's and x1*cos's */
	rmul(x, r, ".bwd.mul", B);
	int a1 = tnew(x, half, LLMSIM_GT_ACT);
	rmul(x, r, ".bwd.mul", B);
	int b1 = tnew(x, half, LLMSIM_GT_ACT);
	ew(x, r->name, ".bwd.neg", B, LLMSIM_EW_COPY, x->T, h, x->A, x->A, LLMSIM_PASS_FWD, 1, 0);
	int n = tnew(x, half, LLMSIM_GT_ACT);
	rmul(x, r, ".bwd.mul", B);
	int b2 = tnew(x, half, LLMSIM_GT_ACT);
	tdie(x, n);
	rmul(x, r, ".bwd.mul", B);
	int a2 = tnew(x, half, LLMSIM_GT_ACT);
	tdie(x, g);
	tdie(x, r->cos);
	tdie(x, r->sin);
	/* each half's two gradients, summed in place */
	grad_add(x, r->name, x->T, h, x->A, a2);
	grad_add(x, r->name, x->T, h, x->A, b2);
	/* SliceBackward of x2, then of x1: zeros of the head, the half in */
	int z2 = fill(x, r->name, ".bwd.zeros", B, x->T, r->w, x->A, LLMSIM_GT_ACT);
	ew(x, r->name, ".bwd.slice", B, LLMSIM_EW_COPY, x->T, h, x->A, x->A, LLMSIM_PASS_FWD, 1, 0);
	tdie(x, b1);
	int z1 = fill(x, r->name, ".bwd.zeros", B, x->T, r->w, x->A, LLMSIM_GT_ACT);
	ew(x, r->name, ".bwd.slice", B, LLMSIM_EW_COPY, x->T, h, x->A, x->A, LLMSIM_PASS_FWD, 1, 0);
	tdie(x, a1);
	grad_add(x, r->name, x->T, r->w, x->A, z1);
	return z2;
}

/* ---- attention (SDPA) ---- */

static struct llmsim_gnode *sdpa(struct tt *x, enum llmsim_gphase ph)
{
	const struct llmsim_model *m = x->b->m;
	const struct llmsim_graph_cfg *c = x->b->c;
	struct llmsim_gnode *n = gb_node(x->b, ph == LLMSIM_PH_FWD ? "attention" : "attention.bwd",
					 ph, LLMSIM_OP_ATTENTION, LLMSIM_BYTES_KV, LLMSIM_GN_ATTN);
	if (!n)
		return NULL;
	n->op.dtype = x->A;
	n->op.u.attn.impl = c->attn;
	n->op.u.attn.batch = c->micro_batch;
	n->op.u.attn.heads = m->heads;
	n->op.u.attn.kv_heads = m->kv_heads;
	n->op.u.attn.seq = n->op.u.attn.kv_seq = c->seq;
	n->op.u.attn.head_dim = m->head_dim;
	n->op.u.attn.causal = 1;
	n->op.u.attn.pass = ph == LLMSIM_PH_FWD ? LLMSIM_PASS_FWD : LLMSIM_PASS_BWD;
	return n;
}

/* ---- the sections ---- */

static void layer(struct tt *x)
{
	struct bld *b = x->b;
	const struct llmsim_model *m = b->m;
	struct llmsim_gsec_io *io = b->mem ? &b->mem->io[LLMSIM_SEC_DENSE] : NULL;
	int64_t T = x->T, H = x->H, d = m->head_dim, I = m->intermediate;
	int64_t qw = (int64_t)m->heads * d, kw = (int64_t)m->kv_heads * d;
	int bias = m->linear_bias || m->qkv_bias, gated = m->mlp == LLMSIM_MLP_GATED;
	int rope = m->position == LLMSIM_POS_ROPE;
	enum llmsim_ew_kind act = m->activation == LLMSIM_ACT_SILU   ? LLMSIM_EW_SILU
				  : m->activation == LLMSIM_ACT_RELU ? LLMSIM_EW_RELU
								     : LLMSIM_EW_GELU;
	enum llmsim_gphase F = LLMSIM_PH_FWD, B = LLMSIM_PH_BWD;
	b->sec = LLMSIM_SEC_DENSE;
	b->part = LLMSIM_PART_BODY;

	/* ---- forward ---- */
	struct norm n1 = {.name = "attn_norm", .stats = -1}, n2 = {.name = "mlp_norm", .stats = -1};
	int h = norm_fwd(x, &n1);
	int hq = x->autocast ? -1 : h; /* no autocast: the linears take h itself */
	struct lin q = {.name = "q_proj", .out = qw, .in = H, .bias = bias};
	struct lin k = {.name = "k_proj", .out = kw, .in = H, .bias = bias};
	struct lin v = {.name = "v_proj", .out = kw, .in = H, .bias = bias};
	struct rope rq = {.name = "rope_q", .w = qw}, rk = {.name = "rope_k", .w = kw};
	lin_fwd(x, &q, hq, -1);
	int qr = rope ? rope_fwd(x, &rq, q.y) : q.y;
	lin_fwd(x, &k, hq, -1);
	int kr = rope ? rope_fwd(x, &rk, k.y) : k.y;
	lin_fwd(x, &v, hq, x->autocast ? h : -1);
	sdpa(x, F);
	int att = tnew(x, (double)T * qw * x->eA, LLMSIM_GT_ACT);
	int lse = tnew(x, (double)T * m->heads * 4, LLMSIM_GT_ACT);
	struct lin o = {.name = "o_proj", .out = H, .in = qw, .bias = m->linear_bias};
	lin_fwd(x, &o, att, -1);
	/* x + o(...): an A tensor into the P stream */
	ew(x, "attn_residual", "", F, LLMSIM_EW_ADD, T, H, x->P, x->P, LLMSIM_PASS_FWD,
	   x->autocast, 0);
	int x2 = tnew(x, (double)T * H * x->eP, LLMSIM_GT_ACT);
	tdie(x, o.y);
	int h2 = norm_fwd(x, &n2);
	int h2q = x->autocast ? -1 : h2;
	int lb = m->linear_bias;
	struct lin gate = {.name = "gate_proj", .out = I, .in = H, .bias = lb};
	struct lin up = {.name = "up_proj", .out = I, .in = H, .bias = lb};
	struct lin down = {.name = "down_proj", .out = H, .in = I, .bias = lb};
	int sl = -1, prod;
	if (gated) {
		lin_fwd(x, &gate, h2q, -1);
		ew(x, "act", "", F, act, T, I, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
		sl = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
		lin_fwd(x, &up, h2q, x->autocast ? h2 : -1);
		ew(x, "mlp_mul", "", F, LLMSIM_EW_MUL, T, I, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
		prod = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
	} else {
		lin_fwd(x, &up, h2q, x->autocast ? h2 : -1);
		ew(x, "act", "", F, act, T, I, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
		prod = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
	}
	lin_fwd(x, &down, prod, -1);
	/* checkpoint's recompute stops at down_proj's GEMM: its autograd node
	 * saves its inputs (the last tensors the layer keeps) before it runs */
	if (io)
		io->stop = last(x);
	ew(x, "mlp_residual", "", F, LLMSIM_EW_ADD, T, H, x->P, x->P, LLMSIM_PASS_FWD, x->autocast,
	   0);
	if (io)
		io->out_born = last(x);
	tdie(x, down.y);

	/* ---- backward ---- */
	/* the stream's gradient to down_proj's output: cast to A */
	int gd = x->autocast ? cast(x, "mlp_residual", ".bwd", B, T, H, x->P, x->A, LLMSIM_GT_ACT)
			     : -1;
	int gm = lin_bwd(x, &down, gd);
	int gh2;
	if (gated) {
		/* MulBackward: dy * up, dy * silu */
		ew(x, "mlp_mul", ".bwd", B, LLMSIM_EW_MUL, T, I, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
		int gsl = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
		ew(x, "mlp_mul", ".bwd", B, LLMSIM_EW_MUL, T, I, x->A, x->A, LLMSIM_PASS_FWD, 0, 0);
		int gu = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
		tdie(x, sl);
		tdie(x, up.y);
		tdie(x, gm);
		gh2 = lin_bwd(x, &up, gu);
		ew(x, "act", ".bwd", B, act, T, I, x->A, x->A, LLMSIM_PASS_BWD, 0, 0);
		int gg = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
		tdie(x, gate.y);
		tdie(x, gsl);
		int gh2b = lin_bwd(x, &gate, gg);
		grad_add(x, "mlp_norm", T, H, x->P, gh2b);
	} else {
		ew(x, "act", ".bwd", B, act, T, I, x->A, x->A, LLMSIM_PASS_BWD, 0, 0);
		int ga = tnew(x, (double)T * I * x->eA, LLMSIM_GT_ACT);
		tdie(x, up.y);
		tdie(x, gm);
		gh2 = lin_bwd(x, &up, ga);
	}
	int gx2 = norm_bwd(x, &n2, gh2, 0);
	tdie(x, x2);
	grad_add(x, "attn_residual", T, H, x->P, gx2);
	int go = x->autocast ? cast(x, "attn_residual", ".bwd", B, T, H, x->P, x->A, LLMSIM_GT_ACT)
			     : -1;
	int gatt = lin_bwd(x, &o, go);
	/* cuDNN zeroes its fp32 dQ accumulator (a memset: a fill's traffic) */
	ew(x, "attention", ".bwd.zero_dq", B, LLMSIM_EW_COPY, T, qw / 2, LLMSIM_DT_FP32,
	   LLMSIM_DT_FP32, LLMSIM_PASS_FWD, 0, 0);
	sdpa(x, B);
	int dq = tnew(x, (double)T * qw * x->eA, LLMSIM_GT_ACT);
	int dk = tnew(x, (double)T * kw * x->eA, LLMSIM_GT_ACT);
	int dv = tnew(x, (double)T * kw * x->eA, LLMSIM_GT_ACT);
	/* cuDNN's workspace: the fp32 dQ accumulator, and with GQA dK and dV
	 * per query head before fmha_reduce_head sums each group */
	tnew(x, (double)T * qw * 4 + (kw < qw ? 2.0 * T * qw * x->eA : 0), LLMSIM_GT_WORK);
	tdie(x, qr);
	tdie(x, kr);
	tdie(x, v.y);
	tdie(x, att);
	tdie(x, lse);
	tdie(x, gatt);
	int gh = lin_bwd(x, &v, dv);
	int gk = rope ? rope_bwd(x, &rk, dk) : dk;
	int ghk = lin_bwd(x, &k, gk);
	grad_add(x, "attn_norm", T, H, x->P, ghk);
	int gq = rope ? rope_bwd(x, &rq, dq) : dq;
	int ghq = lin_bwd(x, &q, gq);
	grad_add(x, "attn_norm", T, H, x->P, ghq);
	int gx = norm_bwd(x, &n1, gh, 0);
	if (io)
		io->in_dies = last(x);
	grad_add(x, "layer_input", T, H, x->P, gx);
}

static void pre(struct tt *x)
{
	struct bld *b = x->b;
	const struct llmsim_model *m = b->m;
	struct llmsim_gsec_io *io = b->mem ? &b->mem->io[LLMSIM_SEC_PRE] : NULL;
	int64_t T = x->T, H = x->H;
	int learned = m->position == LLMSIM_POS_LEARNED && m->position_rows > 0;
	b->sec = LLMSIM_SEC_PRE;
	b->part = LLMSIM_PART_BODY;
	ew(x, "embedding", "", LLMSIM_PH_FWD, LLMSIM_EW_EMBEDDING, T, H, x->P, x->P,
	   LLMSIM_PASS_FWD, 0, 0);
	if (learned) {
		int tok = tnew(x, (double)T * H * x->eP, LLMSIM_GT_ACT);
		ew(x, "position_embedding", "", LLMSIM_PH_FWD, LLMSIM_EW_EMBEDDING, T, H, x->P, x->P,
		   LLMSIM_PASS_FWD, 0, 0);
		int pos = tnew(x, (double)T * H * x->eP, LLMSIM_GT_ACT);
		ew(x, "embedding_sum", "", LLMSIM_PH_FWD, LLMSIM_EW_ADD, T, H, x->P, x->P,
		   LLMSIM_PASS_FWD, 0, 0);
		tdie(x, tok);
		tdie(x, pos);
	}
	if (io)
		io->out_born = last(x);
	/* embedding_dense_backward: a zero P table, the rows added in; past
	 * 3072 indices the indices sorted first and the segment count read
	 * back by the host (Embedding.cu) */
	for (int t = learned ? 1 : 0; t >= 0; t--) {
		const char *name = t ? "position_embedding" : "embedding";
		int64_t rows = t ? m->position_rows : m->vocab;
		int tied = !t && m->tied_embeddings;
		int z = fill(x, name, ".bwd.zeros", LLMSIM_PH_BWD, rows, H, x->P,
			     tied ? LLMSIM_GT_ACT : LLMSIM_GT_GRAD);
		if (T > 3072) {
			ew(x, name, ".bwd.sort", LLMSIM_PH_BWD, LLMSIM_EW_SORT, T, 1, LLMSIM_DT_INT64,
			   LLMSIM_DT_INT64, LLMSIM_PASS_FWD, 0, 0);
			if (io)
				io->host_sync = last(x);
		}
		ew(x, name, ".bwd", LLMSIM_PH_BWD, LLMSIM_EW_EMBEDDING, T, H, x->P, x->P,
		   LLMSIM_PASS_BWD, 0, 0);
		if (io && !t)
			io->grad_out_dies = last(x);
		if (tied) /* into the LM head's gradient, its .grad already */
			grad_add(x, name, rows, H, x->P, z);
	}
}

static void post(struct tt *x)
{
	struct bld *b = x->b;
	const struct llmsim_model *m = b->m;
	struct llmsim_gsec_io *io = b->mem ? &b->mem->io[LLMSIM_SEC_POST] : NULL;
	int64_t T = x->T, V = m->vocab;
	enum llmsim_gphase F = LLMSIM_PH_FWD, B = LLMSIM_PH_BWD;
	b->sec = LLMSIM_SEC_POST;
	b->part = LLMSIM_PART_BODY;
	struct norm nf = {.name = "final_norm", .stats = -1};
	int h = norm_fwd(x, &nf);
	b->part = LLMSIM_PART_HEAD;
	struct lin head = {.name = "lm_head", .out = V, .in = x->H};
	lin_fwd(x, &head, x->autocast ? -1 : h, x->autocast ? h : -1);
	/* F.cross_entropy(logits.float()): log_softmax over P logits, nll_loss */
	int lf = x->autocast ? cast(x, "logits", ".float", F, T, V, x->A, x->P, LLMSIM_GT_ACT) : -1;
	ew(x, "log_softmax", "", F, LLMSIM_EW_SOFTMAX, T, V, x->P, x->P, LLMSIM_PASS_FWD, 0, 0);
	int ls = tnew(x, (double)T * V * x->eP, LLMSIM_GT_ACT);
	ew(x, "nll_loss", "", F, LLMSIM_EW_GATHER, T, 1, x->P, x->P, LLMSIM_PASS_FWD, 0, 0);
	/* the forward returns: its logits go */
	tdie(x, head.y);
	tdie(x, lf);

	int gz = fill(x, "nll_loss", ".bwd.zeros", B, T, V, x->P, LLMSIM_GT_ACT);
	ew(x, "nll_loss", ".bwd", B, LLMSIM_EW_GATHER, T, 1, x->P, x->P, LLMSIM_PASS_FWD, 0, 0);
	ew(x, "log_softmax", ".bwd", B, LLMSIM_EW_SOFTMAX, T, V, x->P, x->P, LLMSIM_PASS_BWD, 0, 0);
	int gl = tnew(x, (double)T * V * x->eP, LLMSIM_GT_ACT);
	tdie(x, gz);
	tdie(x, ls);
	int gb = gl;
	if (x->autocast) {
		gb = cast(x, "logits", ".float.bwd", B, T, V, x->P, x->A, LLMSIM_GT_ACT);
		tdie(x, gl);
	}
	int gh = lin_bwd(x, &head, gb);
	b->part = LLMSIM_PART_BODY;
	norm_bwd(x, &nf, gh, 1);
	if (io)
		io->in_dies = last(x);
}

int gb_torch_train(struct bld *b, struct llmsim_err *err)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	if (m->has_moe || m->has_mla)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the torch training program runs dense models with multi-head "
				      "or grouped-query attention: %s has %s",
				      m->name, m->has_moe ? "experts" : "MLA");
	if (c->tp > 1 || c->cp > 1 || c->ep > 1)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the torch training program runs on one GPU (tp, cp, ep 1)");
	if (c->lora_rank > 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the torch training program trains every weight (no LoRA)");
	if (m->kv_heads < 1 || m->heads % m->kv_heads || m->head_dim < 2 || m->head_dim % 2)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: heads %d, KV heads %d, head_dim %d do not make heads of "
				      "even width in whole groups", m->name, m->heads, m->kv_heads,
				      m->head_dim);
	if (llmsim_dtype_bytes(c->math) > 2 || c->math == LLMSIM_DT_FP8)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the torch training program autocasts to a 16-bit type "
				      "(bf16 or fp16), not %s", llmsim_dtype_name(c->math));
	struct tt x = {.b = b, .P = c->weights, .A = c->math, .T = b->T, .s = c->seq,
		       .H = m->hidden};
	x.eP = llmsim_dtype_bytes(x.P);
	x.eA = llmsim_dtype_bytes(x.A);
	x.autocast = x.P != x.A;
	if (b->mem)
		b->mem->stream_bytes = (double)x.T * x.H * x.eP;
	pre(&x);
	layer(&x);
	post(&x);
	return 0;
}
