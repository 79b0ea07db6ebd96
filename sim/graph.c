/*
 * graph.c - the op graph of one model step (see graph.h).
 *
 * Shapes, with T the tokens of the step on this rank (training:
 * micro_batch * seq / cp; inference: every new token), t = tp, h hidden,
 * a = heads / t, kv = KV heads / t (1 each when there are fewer than t:
 * they are replicated), d head_dim, f the MLP width:
 *   QKV   gemm m=T n=(a + 2 kv) d k=h          (column-parallel)
 *   O     gemm m=T n=h k=a d                   (row-parallel)
 *   MLP   gemm m=T n=2f/t (gated) or f/t k=h; down m=T n=h k=f/t
 * A linear layer Y = X W trains as three GEMMs: forward (T, out, in), the
 * data gradient dX = dY W^T (T, in, out) and the weight gradient dW = X^T dY
 * (in, out, T); LoRA drops the frozen base's weight gradient and adds the
 * adapters' A (in -> r) and B (r -> out). Norms and residuals run on the
 * T/t tokens of a rank under sequence parallelism. Training attention is
 * over whole sequences, 1/cp of it on each CP rank (the load-balanced
 * ring); inference runs one attention kernel per prefill chunk shape and
 * one decode kernel over the decoding sequences.
 *
 * MLA (DeepSeek-V2/V3): the query down-projection q_a (h -> q_lora) with
 * its norm and up-projection q_b, the KV down-projection kv_a (h ->
 * kv_lora + rope) with its norm; training and prefill up-project the
 * latent for every key (kv_b), decode absorbs W_UK into the query and W_UV
 * into the output (batched per-head GEMMs) and attends over the latent.
 *
 * MoE: the router and its softmax, the all-to-all dispatch and combine
 * around the routed experts of this rank (a grouped GEMM over the experts
 * the tokens touch, each with its mean share of the slots; with an
 * imbalance above 1 the busiest expert apart at that many times the mean),
 * then the shared experts.
 */
#include "graph_bld.h"

#include <math.h>
#include <string.h>

#include "base/enum.h"

void llmsim_graph_cfg_init(struct llmsim_graph_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->work = LLMSIM_WORK_INFER;
	c->tp = c->cp = c->ep = 1;
	c->tp_nodes = c->ep_nodes = c->cp_nodes = c->pp_nodes = 1;
	c->math = c->weights = c->act = c->kv = LLMSIM_DT_BF16;
	c->attn = LLMSIM_ATTN_FLASH2;
	c->decode = LLMSIM_DEC_PAGED;
	c->block_size = 16;
	c->micro_batch = 1;
	c->seq = 4096;
	c->moe_imbalance = 1;
	c->q_len = 1;
}

enum llmsim_dtype llmsim_graph_act_dtype(enum llmsim_dtype dt)
{
	return llmsim_dtype_narrow(dt) ? LLMSIM_DT_BF16 : dt;
}

void llmsim_graph_coll_op(struct llmsim_op *op, enum llmsim_coll_kind kind, double bytes,
			  int gpus, int nodes, enum llmsim_dtype dt)
{
	memset(op, 0, sizeof *op);
	op->kind = LLMSIM_OP_COLLECTIVE;
	op->dtype = dt;
	op->u.coll.kind = kind;
	op->u.coll.bytes = bytes;
	op->u.coll.gpus = gpus;
	op->u.coll.nodes = nodes > 0 ? nodes : 1;
	op->u.coll.algo = LLMSIM_ALGO_AUTO;
}

int llmsim_group_nodes(int gpus_per_node, int size, int stride)
{
	if (size <= 1)
		return 1;
	if (gpus_per_node < 1)
		gpus_per_node = 1;
	int64_t span = (int64_t)size * stride;
	if (span <= gpus_per_node)
		return 1;
	if (stride >= gpus_per_node)
		return size;
	return (int)(span / gpus_per_node);
}

int llmsim_graph_dropout(const struct llmsim_model *m)
{
	return m->linear_bias || m->norm == LLMSIM_NORM_LAYER;
}

double llmsim_graph_nodes_touched(int top_k, int experts, int nodes, int max_nodes)
{
	if (nodes <= 1 || top_k <= 0 || experts < nodes)
		return nodes >= 1 ? 1 : 0;
	int M = max_nodes > 0 && max_nodes < nodes ? max_nodes : nodes;
	double e = (double)experts / nodes; /* experts a node holds */
	/* a chosen node none of the k experts (drawn without replacement
	 * from the M e of the chosen nodes) falls on */
	double miss = 1;
	for (int i = 0; i < top_k && miss > 0; i++)
		miss *= fmax(0.0, ((M - 1) * e - i) / (M * e - i));
	return M * (1 - miss);
}

double llmsim_graph_experts_touched(int64_t n, int top_k, int experts, int local)
{
	if (n <= 0 || experts <= 0)
		return 0;
	/* a given expert is missed by one token with probability 1 - k/E */
	double miss = 1.0 - (double)top_k / experts;
	return local * (1.0 - pow(miss, (double)n));
}

int64_t llmsim_graph_tokens(const struct llmsim_graph_cfg *c)
{
	if (c->work == LLMSIM_WORK_TRAIN)
		return c->cp > 0 ? c->micro_batch * c->seq / c->cp : 0;
	int64_t n = c->decode_seqs * (c->q_len > 0 ? c->q_len : 1);
	for (int i = 0; i < c->nprefill; i++)
		n += c->prefill[i].tokens * c->prefill[i].count;
	return n;
}

const char *const llmsim_cp_comm_names[] = {
	[LLMSIM_CP_P2P] = "p2p", [LLMSIM_CP_A2A] = "a2a", [LLMSIM_CP_A2A_P2P] = "a2a+p2p",
	[LLMSIM_CP_COMM_COUNT] = NULL,
};

const char *llmsim_cp_comm_name(enum llmsim_cp_comm c)
{
	return (unsigned)c < LLMSIM_CP_COMM_COUNT ? llmsim_cp_comm_names[c] : "?";
}

const char *const llmsim_moe_dispatch_names[] = {
	[LLMSIM_MOE_ALLTOALL] = "alltoall", [LLMSIM_MOE_ALLGATHER] = "allgather",
	[LLMSIM_MOE_DEEPEP] = "deepep", [LLMSIM_MOE_DISPATCH_COUNT] = NULL,
};

const char *llmsim_moe_dispatch_name(enum llmsim_moe_dispatch d)
{
	return (unsigned)d < LLMSIM_MOE_DISPATCH_COUNT ? llmsim_moe_dispatch_names[d] : "?";
}

static const char *const sec_names[LLMSIM_SEC_COUNT] = {
	[LLMSIM_SEC_PRE] = "pre", [LLMSIM_SEC_DENSE] = "dense", [LLMSIM_SEC_MOE] = "moe",
	[LLMSIM_SEC_POST] = "post", [LLMSIM_SEC_P2P] = "p2p",
};
static const char *const cat_names[LLMSIM_BYTES_CAT_COUNT] = {
	[LLMSIM_BYTES_WEIGHTS] = "weights", [LLMSIM_BYTES_KV] = "kv",
	[LLMSIM_BYTES_ACT] = "activations",
};

const char *llmsim_gsec_name(enum llmsim_gsec s)
{
	return llmsim_enum_label(sec_names, LLMSIM_SEC_COUNT, (int)s);
}

const char *llmsim_byte_cat_name(enum llmsim_byte_cat c)
{
	return llmsim_enum_label(cat_names, LLMSIM_BYTES_CAT_COUNT, (int)c);
}

int llmsim_graph_price(const struct llmsim_gpu *gpu, const struct llmsim_gnode *n,
		       double load_duty, double load_rho, struct llmsim_pred *p,
		       struct llmsim_err *err)
{
	struct llmsim_op op = n->op;
	op.load_duty = load_duty;
	op.load_rho = load_rho;
	return llmsim_predict(gpu, &op, p, err);
}

/* ---- the builder (graph_bld.h) ---- */

/* dst = a b c, cut to size (names are built on the planners' hot path:
 * no printf) */
void gb_cat3(char *dst, size_t size, const char *a, const char *b, const char *c)
{
	size_t n = 0;
	for (const char *s[3] = {a, b, c}, **p = s; p < s + 3; p++)
		for (const char *q = *p; q && *q && n + 1 < size; q++)
			dst[n++] = *q;
	dst[n] = 0;
}

/* A node of the current section and part, or NULL when the config leaves
 * them out. */
struct llmsim_gnode *gb_node(struct bld *b, const char *name, enum llmsim_gphase ph,
				enum llmsim_op_kind kind, enum llmsim_byte_cat cat, unsigned role)
{
	const struct llmsim_graph_cfg *c = b->c;
	if ((c->sections && !(c->sections & (1u << b->sec))) || (c->parts && !(c->parts & b->part)))
		return NULL;
	struct llmsim_graph *g = b->g;
	LLMSIM_ASSERT(g->n < LLMSIM_GRAPH_MAX);
	struct llmsim_gnode *n = &g->node[g->n++];
	/* every field set: the op zeroed whole (it is a price-cache key,
	 * compared and hashed as bytes), the rest assigned */
	gb_cat3(n->name, sizeof n->name, b->prefix, name, NULL);
	n->sec = b->sec;
	n->phase = ph;
	n->chunk = LLMSIM_CHUNK_ALL;
	n->cat = cat;
	n->part = b->part;
	n->role = role;
	n->tp = LLMSIM_TP_NONE;
	n->hides = -1;
	n->ub = -1;
	n->count = 1;
	n->flops_scale = b->flops_scale;
	memset(&n->op, 0, sizeof n->op);
	n->op.kind = kind;
	n->op.dtype = c->act;
	n->op.operand_data = c->operand_data;
	return n;
}

static int gb_idx(const struct bld *b, const struct llmsim_gnode *n)
{
	return (int)(n - b->g->node);
}

/* One GEMM node (m, n, k, batch); quantized: in the linear layers' math and
 * weight types, else the activation type. */
struct llmsim_gnode *gb_gemm(struct bld *b, const char *name, enum llmsim_gphase ph,
				 int64_t m, int64_t n, int64_t k, int64_t batch, int quantized,
				 unsigned role)
{
	if (m < 1 || n < 1 || k < 1 || batch < 1)
		return NULL;
	struct llmsim_gnode *x = gb_node(b, name, ph, LLMSIM_OP_GEMM, LLMSIM_BYTES_WEIGHTS, role);
	if (!x)
		return NULL;
	x->op.dtype = quantized ? b->c->math : b->c->act;
	x->op.u.gemm.b_dtype = quantized ? b->c->weights : b->c->act;
	x->op.u.gemm.m = m, x->op.u.gemm.n = n, x->op.u.gemm.k = k;
	x->op.u.gemm.batch = batch;
	if (ph == LLMSIM_PH_FWD && (role & LLMSIM_GN_LINEAR) && b->ub_pending >= 0) {
		b->g->node[b->ub_pending].ub = gb_idx(b, x);
		b->ub_pending = -1;
	}
	if (ph == LLMSIM_PH_BWD && (role & LLMSIM_GN_LINEAR) && b->regather >= 0) {
		b->g->node[b->regather].hides = gb_idx(b, x);
		b->regather = -1;
	}
	if ((role & LLMSIM_GN_WGRAD) && b->npending) {
		/* the column point's backward collectives overlap the first
		 * weight gradient after it (Megatron's async TP all-reduce) */
		for (int i = 0; i < b->npending; i++)
			b->g->node[b->pending[i]].hides = gb_idx(b, x);
		b->npending = 0;
	}
	return x;
}

/* One quantize of a precision recipe (rows x cols of bf16 into the
 * quantized copies the GEMMs read), with its amax pass first where the
 * recipe's scale needs the tensor's amax; role: more flags. */
static void gb_quant(struct bld *b, const char *name, const char *what, enum llmsim_gphase ph,
		     int64_t rows, int64_t cols, unsigned role)
{
	const struct llmsim_precision_desc *d = llmsim_precision_desc(b->c->precision);
	char nm[48];
	struct llmsim_gnode *x;
	if (d->amax_pass) {
		gb_cat3(nm, sizeof nm, name, what, ".amax");
		gb_ew1(b, nm, ph, LLMSIM_EW_REDUCE, rows, cols, LLMSIM_BYTES_ACT, 0,
		       LLMSIM_GN_QUANT | role);
	}
	gb_cat3(nm, sizeof nm, name, what, NULL);
	if ((x = gb_ew1(b, nm, ph, LLMSIM_EW_QUANTIZE, rows, cols, LLMSIM_BYTES_ACT, 0,
			LLMSIM_GN_QUANT | role))) {
		x->op.u.ew.out_dtype = d->gemm;
		x->op.u.ew.k = b->c->quant_copies > 1 ? 2 : 1;
	}
}

/* A GEMM of a linear layer and, in training, its data gradient and (when
 * trained) its weight gradient. Under a quantized precision recipe
 * (training, trained weights) the three GEMMs take quantized operands
 * (sim/precision.h): the input is quantized before the forward (inside
 * the norm that produced it where the recipe fuses it; on the tokens
 * before the all-gather under sequence parallelism), the weight once a
 * step (LLMSIM_GN_PER_STEP), the output gradient before the data
 * gradient; each quantize writes the copies the GEMMs read (quant_copies).
 * NVFP4's Hadamard transform of the weight-gradient inputs runs inside
 * their quantize (its 16-point transform is not priced apart). */
static void gb_gemm_fb(struct bld *b, const char *name, int64_t T, int64_t out, int64_t in,
		    int64_t batch, int quantized, int trained, unsigned role)
{
	char nm[48];
	const struct llmsim_precision_desc *d = llmsim_precision_desc(b->c->precision);
	int q = b->train && quantized && trained && d->quantized && !(role & LLMSIM_GN_LORA);
	if (q) {
		int64_t rows = (b->sp_input ? b->Tsp : T) * batch;
		struct llmsim_gnode *x;
		gb_cat3(nm, sizeof nm, name, ".transpose", NULL);
		if (!(b->normed && d->norm_fused))
			gb_quant(b, name, ".quantize", LLMSIM_PH_FWD, rows, in, 0);
		else if (b->c->quant_copies > 1 && !d->block_scaled &&
			 (x = gb_ew1(b, nm, LLMSIM_PH_FWD, LLMSIM_EW_COPY, rows, in,
				     LLMSIM_BYTES_ACT, 0, LLMSIM_GN_QUANT)))
			/* the norm wrote the FP8 input rowwise; a TN-only GPU's
			 * weight gradient reads it transposed (TE's fp8 transpose) */
			x->op.dtype = d->gemm;
		gb_quant(b, name, ".wquantize", LLMSIM_PH_FWD, out * batch, in, LLMSIM_GN_PER_STEP);
	}
	if (quantized)
		b->normed = b->sp_input = 0;
	gb_gemm(b, name, LLMSIM_PH_FWD, T, out, in, batch, quantized, role);
	if (!b->train)
		return;
	if (q)
		gb_quant(b, name, ".gquantize", LLMSIM_PH_BWD, T * batch, out, 0);
	gb_cat3(nm, sizeof nm, name, ".dgrad", NULL);
	gb_gemm(b, nm, LLMSIM_PH_BWD, T, in, out, batch, quantized, role);
	if (trained) {
		gb_cat3(nm, sizeof nm, name, ".wgrad", NULL);
		gb_gemm(b, nm, LLMSIM_PH_BWD, in, out, T, batch, quantized,
		     (role & ~LLMSIM_GN_LINEAR) | LLMSIM_GN_WGRAD);
	}
}

/* A linear layer of the model (out x in on T tokens), with its LoRA
 * adapter when `lora` and the config trains adapters. */
static void gb_linear(struct bld *b, const char *name, int64_t T, int64_t out, int64_t in,
		   int lora)
{
	int lr = b->train ? b->c->lora_rank : 0;
	char nm[48];
	gb_gemm_fb(b, name, T, out, in, 1, 1, lr == 0, LLMSIM_GN_LINEAR);
	if (lr > 0 && lora) {
		gb_cat3(nm, sizeof nm, name, ".lora_a", NULL);
		gb_gemm_fb(b, nm, T, lr, in, 1, 1, 1, LLMSIM_GN_LINEAR | LLMSIM_GN_LORA);
		gb_cat3(nm, sizeof nm, name, ".lora_b", NULL);
		gb_gemm_fb(b, nm, T, out, lr, 1, 1, 1, LLMSIM_GN_LINEAR | LLMSIM_GN_LORA);
	}
}

struct llmsim_gnode *gb_ew1(struct bld *b, const char *name, enum llmsim_gphase ph,
				enum llmsim_ew_kind kind, int64_t tokens, int64_t hidden,
				enum llmsim_byte_cat cat, int strided, unsigned role)
{
	if (tokens < 1 || hidden < 1)
		return NULL;
	struct llmsim_gnode *x = gb_node(b, name, ph, LLMSIM_OP_ELEMENTWISE, cat, role);
	if (!x)
		return NULL;
	x->op.u.ew.kind = kind;
	x->op.u.ew.tokens = tokens;
	x->op.u.ew.hidden = hidden;
	x->op.u.ew.pass = ph == LLMSIM_PH_BWD ? LLMSIM_PASS_BWD : LLMSIM_PASS_FWD;
	x->op.u.ew.strided = strided;
	return x;
}

/* An element-wise op, and its backward in training. */
void gb_ew(struct bld *b, const char *name, enum llmsim_ew_kind kind, int64_t tokens,
	       int64_t hidden, enum llmsim_byte_cat cat, int strided, unsigned role)
{
	gb_ew1(b, name, LLMSIM_PH_FWD, kind, tokens, hidden, cat, strided, role);
	if (b->train)
		gb_ew1(b, name, LLMSIM_PH_BWD, kind, tokens, hidden, cat, strided, role);
}

static struct llmsim_gnode *gb_coll(struct bld *b, const char *name, enum llmsim_gphase ph,
				 enum llmsim_coll_kind kind, double bytes, int gpus, int nodes,
				 unsigned role)
{
	if (gpus <= 1 || !(bytes > 0))
		return NULL;
	struct llmsim_gnode *x = gb_node(b, name, ph, LLMSIM_OP_COLLECTIVE, LLMSIM_BYTES_ACT, role);
	if (x)
		llmsim_graph_coll_op(&x->op, kind, bytes, gpus, nodes, b->c->act);
	return x;
}

/* A TP point over `bytes` of activations (see graph.h). A column point's
 * backward collective is hidden by the next weight gradient. */
static void tp_point(struct bld *b, double bytes, enum llmsim_tp_point pt)
{
	const struct llmsim_graph_cfg *c = b->c;
	b->npending = 0;
	if (c->tp <= 1)
		return;
	static const char *const names[LLMSIM_COLL_COUNT] = {
		[LLMSIM_COLL_ALLREDUCE] = "tp_allreduce", [LLMSIM_COLL_ALLGATHER] = "tp_allgather",
		[LLMSIM_COLL_REDUCESCATTER] = "tp_reducescatter",
	};
	int sp = b->train && c->sp;
	enum llmsim_coll_kind fwd = LLMSIM_COLL_COUNT, bwd = LLMSIM_COLL_COUNT;
	if (pt == LLMSIM_TP_COL) {
		fwd = sp ? LLMSIM_COLL_ALLGATHER : LLMSIM_COLL_COUNT;
		bwd = sp ? LLMSIM_COLL_REDUCESCATTER : LLMSIM_COLL_ALLREDUCE;
	} else {
		fwd = sp ? LLMSIM_COLL_REDUCESCATTER : LLMSIM_COLL_ALLREDUCE;
		bwd = sp ? LLMSIM_COLL_ALLGATHER : LLMSIM_COLL_COUNT;
	}
	/* a quantized recipe all-gathers a column point's sequence-parallel
	 * input quantized (Transformer Engine quantizes before the gather) */
	const struct llmsim_precision_desc *d = llmsim_precision_desc(c->precision);
	double ag = sp && b->train && d->quantized && c->lora_rank == 0
			    ? bytes * llmsim_dtype_bytes(d->gemm) / llmsim_dtype_bytes(c->act)
			    : bytes;
	/* the forward GEMM a row point's collective follows, and the data
	 * gradient its backward one precedes: userbuffers run them inside */
	int row_f = -1, row_b = -1;
	for (int i = b->g->n - 1; pt == LLMSIM_TP_ROW && i >= 0 && (row_f < 0 || row_b < 0); i--) {
		const struct llmsim_gnode *n = &b->g->node[i];
		if (n->sec != b->sec || n->op.kind != LLMSIM_OP_GEMM || !(n->role & LLMSIM_GN_LINEAR))
			continue;
		if (n->phase == LLMSIM_PH_FWD && row_f < 0)
			row_f = i;
		else if (n->phase == LLMSIM_PH_BWD && row_b < 0)
			row_b = i;
	}
	struct llmsim_gnode *x;
	b->ub_pending = -1;
	if (fwd != LLMSIM_COLL_COUNT &&
	    (x = gb_coll(b, names[fwd], LLMSIM_PH_FWD, fwd, fwd == LLMSIM_COLL_ALLGATHER ? ag : bytes,
			 c->tp, c->tp_nodes, LLMSIM_GN_TP))) {
		x->tp = pt;
		if (pt == LLMSIM_TP_COL)
			b->ub_pending = gb_idx(b, x);
		else
			x->ub = row_f;
	}
	if (b->train && bwd != LLMSIM_COLL_COUNT &&
	    (x = gb_coll(b, names[bwd], LLMSIM_PH_BWD, bwd, bytes, c->tp, c->tp_nodes, LLMSIM_GN_TP))) {
		x->tp = pt;
		if (pt == LLMSIM_TP_COL)
			b->pending[b->npending++] = gb_idx(b, x);
		else
			x->ub = row_b;
	}
	b->sp_input = sp && pt == LLMSIM_TP_COL;
	b->regather = -1;
	if (b->train && sp && pt == LLMSIM_TP_COL && c->sp_regather &&
	    (x = gb_coll(b, "tp_regather", LLMSIM_PH_BWD, LLMSIM_COLL_ALLGATHER, ag, c->tp,
			 c->tp_nodes, LLMSIM_GN_TP))) {
		x->tp = pt;
		b->regather = gb_idx(b, x);
	}
}

static int wide(enum llmsim_dtype dt)
{
	return dt == LLMSIM_DT_FP32 || dt == LLMSIM_DT_TF32 || dt == LLMSIM_DT_FP64;
}

/* All-gather CP (Llama 3, Dubey et al. 2024 Sec. 3.3.2: "we first
 * all-gather the key (K) and value (V) tensors, and then compute attention
 * output for the local query (Q) tensor chunk"; its latency "is exposed in
 * the critical path"): forward, K and V of the whole sequence gathered;
 * backward, gathered again (not kept: the memory a saved copy would take
 * in every chunk in flight) and their gradients reduce-scattered. */
static void cp_allgather(struct bld *b, int64_t a, int64_t kvh, int64_t qk, int64_t v)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	double kv_dim = m->has_mla ? (double)a * (qk + v) : 2.0 * kvh * qk;
	double all = (double)c->micro_batch * c->seq * kv_dim * llmsim_dtype_bytes(c->act);
	gb_coll(b, "cp_allgather", LLMSIM_PH_FWD, LLMSIM_COLL_ALLGATHER, all, c->cp, c->cp_nodes,
		LLMSIM_GN_CP);
	gb_coll(b, "cp_allgather", LLMSIM_PH_BWD, LLMSIM_COLL_ALLGATHER, all, c->cp, c->cp_nodes,
		LLMSIM_GN_CP);
	gb_coll(b, "cp_reducescatter", LLMSIM_PH_BWD, LLMSIM_COLL_REDUCESCATTER, all, c->cp,
		c->cp_nodes, LLMSIM_GN_CP);
}

/* All-to-all CP over n ranks (Jacobs et al. 2023, "DeepSpeed Ulysses",
 * Sec. 3; Megatron-Core's a2a CP): before the attention each rank sends
 * its tokens' Q, K and V of the heads the others take, (n-1)/n of them,
 * and gets its heads' Q, K and V of their tokens; after it, the output
 * back the same way. Backward the output's gradient forward and the Q, K
 * and V gradients back. Exposed: the attention needs all of it. The
 * attention itself is the same 1/cp of the whole (its FLOPs over all
 * heads' pairs of tokens, split either way). */
static void cp_a2a(struct bld *b, int64_t a, int64_t kvh, int64_t qk, int64_t v, int n)
{
	const struct llmsim_graph_cfg *c = b->c;
	double T = (double)c->micro_batch * c->seq / c->cp, ab = llmsim_dtype_bytes(c->act);
	double qkv = T * ((double)a * qk + (double)kvh * (qk + (v > 0 ? v : qk))) * ab;
	double out = T * (double)a * (v > 0 ? v : qk) * ab;
	int nodes = c->cp_a2a_nodes > 0 ? c->cp_a2a_nodes : 1;
	gb_coll(b, "cp_a2a_qkv", LLMSIM_PH_FWD, LLMSIM_COLL_ALLTOALL, qkv, n, nodes, LLMSIM_GN_CP);
	gb_coll(b, "cp_a2a_out", LLMSIM_PH_FWD, LLMSIM_COLL_ALLTOALL, out, n, nodes, LLMSIM_GN_CP);
	gb_coll(b, "cp_a2a_out", LLMSIM_PH_BWD, LLMSIM_COLL_ALLTOALL, out, n, nodes, LLMSIM_GN_CP);
	gb_coll(b, "cp_a2a_qkv", LLMSIM_PH_BWD, LLMSIM_COLL_ALLTOALL, qkv, n, nodes, LLMSIM_GN_CP);
}

/* The attention core: training's over whole sequences (fwd and bwd, 1/cp
 * of it here, the CP ring beside it), or inference's per prefill chunk
 * and over the decoding sequences. qk/v: head dims; kvh: KV heads here. */
static void attention(struct bld *b, int64_t a, int64_t kvh, int64_t qk, int64_t v)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	/* FlashAttention has no kernels for wide types: they run unfused */
	enum llmsim_attn_impl impl = wide(c->act) ? LLMSIM_ATTN_NAIVE : c->attn;
	unsigned save = b->part;
	b->part = LLMSIM_PART_ATTN;
	if (b->train) {
		struct llmsim_gnode *f = NULL, *k = NULL;
		for (int p = 0; p < 2; p++) {
			struct llmsim_gnode *x = gb_node(b, "attention", p ? LLMSIM_PH_BWD : LLMSIM_PH_FWD,
						     LLMSIM_OP_ATTENTION, LLMSIM_BYTES_KV,
						     LLMSIM_GN_ATTN);
			if (!x)
				continue;
			x->op.u.attn.impl = impl;
			x->op.u.attn.batch = c->micro_batch;
			x->op.u.attn.heads = a;
			x->op.u.attn.kv_heads = kvh;
			x->op.u.attn.seq = x->op.u.attn.kv_seq = c->seq;
			x->op.u.attn.head_dim = qk;
			x->op.u.attn.v_head_dim = v;
			x->op.u.attn.causal = 1;
			x->op.u.attn.pass = p ? LLMSIM_PASS_BWD : LLMSIM_PASS_FWD;
			x->count = 1.0 / c->cp;
			*(p ? &k : &f) = x;
		}
		/* unfused attention with dropout: a dropout kernel over the a x
		 * s x s probabilities (Megatron's fused scale-mask-softmax
		 * leaves it out); selective recomputation re-runs it */
		if (impl == LLMSIM_ATTN_NAIVE && llmsim_graph_dropout(m))
			gb_ew(b, "attn_dropout", LLMSIM_EW_MUL, c->micro_batch * a * c->seq / c->cp,
			   c->seq, LLMSIM_BYTES_ACT, 0, LLMSIM_GN_ATTN);
		int a2a = c->cp_comm == LLMSIM_CP_A2A ? c->cp
			  : c->cp_comm == LLMSIM_CP_A2A_P2P && c->cp_a2a > 1 ? c->cp_a2a
									 : 1;
		if (a2a > c->cp || c->cp % a2a)
			a2a = 1;
		if (c->cp > 1 && c->cp_allgather)
			cp_allgather(b, a, kvh, qk, v);
		else if (c->cp > 1) {
			if (a2a > 1)
				cp_a2a(b, a, kvh, qk, v, a2a);
			/* ring: cp/a2a - 1 KV blocks each way, beside the
			 * attention: K and V forward, with their gradients
			 * backward (a block: the tokens of cp/a2a ranks' share
			 * of a2a ranks' heads, as many bytes as one rank's) */
			double kv_dim = m->has_mla ? (double)a * (qk + v) : 2.0 * kvh * qk;
			double blk = (double)c->micro_batch * (c->seq / c->cp) * kv_dim *
				     llmsim_dtype_bytes(c->act);
			int steps = c->cp / a2a - 1;
			struct llmsim_gnode *x;
			if (steps > 0 &&
			    (x = gb_coll(b, "cp_ring", LLMSIM_PH_FWD, LLMSIM_COLL_SENDRECV, blk, 2,
					 c->cp_nodes, LLMSIM_GN_CP))) {
				x->count = steps;
				x->hides = f ? gb_idx(b, f) : -1;
			}
			if (steps > 0 &&
			    (x = gb_coll(b, "cp_ring", LLMSIM_PH_BWD, LLMSIM_COLL_SENDRECV, 2 * blk, 2,
					 c->cp_nodes, LLMSIM_GN_CP))) {
				x->count = steps;
				x->hides = k ? gb_idx(b, k) : -1;
			}
		}
		b->part = save;
		return;
	}
	for (int i = 0; i < c->nprefill; i++) {
		const struct llmsim_prefill_chunk *ch = &c->prefill[i];
		if (ch->tokens <= 0 || ch->count <= 0)
			continue;
		struct llmsim_gnode *x = gb_node(b, "attention", LLMSIM_PH_FWD, LLMSIM_OP_ATTENTION,
					     LLMSIM_BYTES_KV, LLMSIM_GN_ATTN);
		if (!x)
			continue;
		x->chunk = i;
		x->op.u.attn.impl = impl;
		x->op.u.attn.batch = ch->count;
		x->op.u.attn.heads = a;
		x->op.u.attn.kv_heads = kvh;
		x->op.u.attn.seq = ch->tokens;
		x->op.u.attn.kv_seq = ch->context + ch->tokens;
		x->op.u.attn.head_dim = qk;
		x->op.u.attn.v_head_dim = v;
		x->op.u.attn.causal = 1;
		x->op.u.attn.pass = LLMSIM_PASS_FWD;
	}
	struct llmsim_gnode *x = c->decode_seqs > 0 ? gb_node(b, "attention", LLMSIM_PH_FWD,
							  LLMSIM_OP_DECODE, LLMSIM_BYTES_KV,
							  LLMSIM_GN_ATTN)
						    : NULL;
	if (x) {
		enum llmsim_decode_impl di = wide(c->act) ? LLMSIM_DEC_NAIVE : c->decode;
		x->chunk = LLMSIM_CHUNK_DECODE;
		x->op.u.dec.impl = di;
		x->op.u.dec.batch = c->decode_seqs;
		x->op.u.dec.heads = a;
		x->op.u.dec.kv_heads = kvh;
		x->op.u.dec.kv_len = (int64_t)llround(fmax(1.0, c->decode_kv_len));
		x->op.u.dec.head_dim = qk;
		x->op.u.dec.q_len = c->q_len > 0 ? c->q_len : 1;
		x->op.u.dec.block_size = di == LLMSIM_DEC_PAGED ? c->block_size : 0;
		x->op.u.dec.kv_dtype = c->kv;
		x->op.u.dec.mla_absorbed = 1; /* the spec's default; MLA only */
		if (m->has_mla) {
			/* the decode op's MLA form: one latent "head", head_dim
			 * the no-rope part of the absorbed query */
			x->op.u.dec.kv_heads = 1;
			x->op.u.dec.head_dim = m->mla.qk_nope_head_dim;
			x->op.u.dec.kv_lora_rank = m->mla.kv_lora_rank;
			x->op.u.dec.rope_dim = m->mla.qk_rope_head_dim;
		}
	}
	b->part = save;
}

/* Keys of the step's prefill chunks (their context and new tokens). */
static int64_t prefill_keys(const struct llmsim_graph_cfg *c)
{
	int64_t t = 0;
	for (int i = 0; i < c->nprefill; i++)
		t += c->prefill[i].count * (c->prefill[i].context + c->prefill[i].tokens);
	return t;
}

/* Q, K, V in one GEMM, or three (hf; split_qkv) */
static int split_qkv(const struct bld *b)
{
	return b->c->lower.split_qkv || b->engine == LLMSIM_ENGINE_HF;
}

static void attn_gqa(struct bld *b)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	int64_t t = c->tp, h = m->hidden, d = m->head_dim, T = b->T;
	int64_t a = m->heads / t, kv = m->kv_heads >= t ? m->kv_heads / t : 1;
	if (split_qkv(b)) {
		gb_linear(b, "q_proj", T, a * d, h, 1);
		gb_linear(b, "k_proj", T, kv * d, h, 1);
		gb_linear(b, "v_proj", T, kv * d, h, 1);
	} else {
		gb_linear(b, "qkv_proj", T, (a + 2 * kv) * d, h, 1);
	}
	b->npending = 0;
	gb_qk_norm(b, a * d, kv * d);
	gb_rope(b, a * d, kv * d);
	gb_kv_write(b, kv * d, 1);
	if (c->lower.gqa_expand && kv < a && !b->train) {
		gb_ew(b, "kv_expand", LLMSIM_EW_COPY, T, a * d, LLMSIM_BYTES_ACT, 0, 0);
		gb_ew(b, "kv_expand", LLMSIM_EW_COPY, T, a * d, LLMSIM_BYTES_ACT, 0, 0);
	}
	attention(b, a, kv, d, 0);
	gb_linear(b, "o_proj", T, h, a * d, 1);
}

static void attn_mla(struct bld *b)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	const struct llmsim_mla *x = &m->mla;
	int64_t t = c->tp, h = m->hidden, T = b->T, a = m->heads / t;
	int64_t dn = x->qk_nope_head_dim, dr = x->qk_rope_head_dim, dq = dn + dr;
	int64_t dv = x->v_head_dim, r = x->kv_lora_rank, qr = x->q_lora_rank;
	if (b->train) {
		/* Megatron: q and kv down-projections as two linears */
		if (qr > 0) {
			gb_linear(b, "q_a_proj", T, qr, h, 1);
			gb_ew(b, "q_norm", b->norm, T, qr, LLMSIM_BYTES_ACT, 0, 0);
			b->normed = 1;
			gb_linear(b, "q_b_proj", T, a * dq, qr, 0);
		} else {
			gb_linear(b, "q_proj", T, a * dq, h, 1);
		}
		gb_linear(b, "kv_a_proj", T, r + dr, h, 1);
		gb_ew(b, "kv_norm", b->norm, T, r, LLMSIM_BYTES_ACT, 0, 0);
		b->normed = 1;
		gb_linear(b, "kv_b_proj", T, a * (dn + dv), r, 0);
		b->npending = 0;
		gb_rope(b, a * dr, dr);
		attention(b, a, a, dq, dv);
		gb_linear(b, "o_proj", T, h, a * dv, 1);
		return;
	}
	/* serving: the two down-projections in one GEMM (vLLM's
	 * fused_qkv_a_proj), unless plain PyTorch runs them */
	int fuse = !gb_pytorch(b);
	if (qr > 0) {
		if (fuse) {
			gb_linear(b, "qkv_a_proj", T, qr + r + dr, h, 0);
		} else {
			gb_linear(b, "q_a_proj", T, qr, h, 0);
			gb_linear(b, "kv_a_proj", T, r + dr, h, 0);
		}
		gb_norm(b, "q_norm", T, qr);
		gb_linear(b, "q_b_proj", T, a * dq, qr, 0);
	} else if (fuse) {
		gb_linear(b, "qkv_a_proj", T, a * dq + r + dr, h, 0);
	} else {
		gb_linear(b, "q_proj", T, a * dq, h, 0);
		gb_linear(b, "kv_a_proj", T, r + dr, h, 0);
	}
	gb_norm(b, "kv_norm", T, r);
	gb_rope(b, a * dr, dr);
	gb_kv_write(b, r + dr, 0);
	/* per context: prefill up-projects every key's latent; decode
	 * absorbs the up-projections into the query and the output */
	unsigned save = b->part;
	b->part = LLMSIM_PART_ATTN;
	int64_t keys = prefill_keys(c), nd = c->decode_seqs * (c->q_len > 0 ? c->q_len : 1);
	if (keys > 0)
		gb_linear(b, "kv_b_proj", keys, a * (dn + dv), r, 0);
	if (nd > 0)
		gb_gemm(b, "q_absorb", LLMSIM_PH_FWD, nd, r, dn, a, 0, 0);
	attention(b, a, a, dq, dv);
	b->part = LLMSIM_PART_ATTN;
	if (nd > 0)
		gb_gemm(b, "o_absorb", LLMSIM_PH_FWD, nd, dv, r, a, 0, 0);
	b->part = save;
	gb_linear(b, "o_proj", T, h, a * dv, 0);
}

/* An MLP of width w (already this rank's) on T tokens, over `batch`
 * experts when batch > 1 (a grouped GEMM over `groups` experts when
 * groups > 1: T rows routed over them); `trained`: weight gradients. */
static void ffn_grouped(struct bld *b, int64_t T, int64_t w, int64_t batch, int64_t groups,
			unsigned role)
{
	const struct llmsim_model *m = b->m;
	int64_t h = m->hidden;
	int trained = b->train && b->c->lora_rank == 0;
	int gated = m->mlp == LLMSIM_MLP_GATED;
	int split = gated && (b->c->lower.split_gate_up || b->engine == LLMSIM_ENGINE_HF);
	struct llmsim_gnode *first = b->g->n < LLMSIM_GRAPH_MAX ? &b->g->node[b->g->n] : NULL;
	if (split) {
		gb_gemm_fb(b, "gate_proj", T, w, h, batch, 1, trained, role);
		gb_gemm_fb(b, "up_proj", T, w, h, batch, 1, trained, role);
	} else {
		gb_gemm_fb(b, gated ? "gate_up_proj" : "up_proj", T, (gated ? 2 : 1) * w, h, batch,
			   1, trained, role);
	}
	gb_activation(b, T, w, batch, !split, role);
	gb_gemm_fb(b, "down_proj", T, h, w, batch, 1, trained, role);
	if (groups > 1 && first)
		for (struct llmsim_gnode *x = first; x < b->g->node + b->g->n; x++)
			if (x->op.kind == LLMSIM_OP_GEMM)
				x->op.u.gemm.groups = groups;
}

static void ffn(struct bld *b, int64_t T, int64_t w, int64_t batch, unsigned role)
{
	ffn_grouped(b, T, w, batch, 1, role);
}

/* One routed expert's FFN width on a rank. */
static int64_t expert_width(const struct llmsim_graph_cfg *c, const struct llmsim_moe *x)
{
	return c->ep_in_tp ? (int64_t)x->expert_intermediate * c->ep / c->tp
			   : x->expert_intermediate / c->tp;
}

/* The routed experts of this rank (see the file comment). */
static void experts(struct bld *b)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	const struct llmsim_moe *x = &m->moe;
	int64_t T = b->T;
	int ep = c->ep, local = x->experts / ep;
	/* tokens the EP group routes, and the slots of this rank's experts */
	double group = c->ep_in_tp ? (double)T : (double)T * ep;
	double slots = group * x->top_k / ep;
	int64_t w = expert_width(c, x);
	int64_t touched = (int64_t)llround(
		fmax(1.0, llmsim_graph_experts_touched((int64_t)group, x->top_k, x->experts, local)));
	double mean = slots / touched;
	int64_t per = (int64_t)ceil(mean);
	int64_t busiest = (int64_t)ceil(mean * (c->moe_imbalance > 1 ? c->moe_imbalance : 1));
	if (per < 1)
		per = 1;
	if (busiest < per)
		busiest = per;
	double save = b->flops_scale;
	gb_cat3(b->prefix, sizeof b->prefix, "experts.", NULL, NULL);
	if (busiest == per || touched == 1) {
		b->flops_scale = mean / per;
		if (touched == 1)
			per = busiest, b->flops_scale = mean / busiest;
		ffn(b, per, w, touched, LLMSIM_GN_EXPERT | LLMSIM_GN_LINEAR);
	} else {
		/* the busiest expert apart, at imbalance x the mean */
		b->flops_scale = touched * mean / ((double)(touched - 1) * per + busiest);
		ffn(b, per, w, touched - 1, LLMSIM_GN_EXPERT | LLMSIM_GN_LINEAR);
		gb_cat3(b->prefix, sizeof b->prefix, "experts.busiest.", NULL, NULL);
		ffn(b, busiest, w, 1, LLMSIM_GN_EXPERT | LLMSIM_GN_LINEAR);
	}
	b->prefix[0] = 0;
	b->flops_scale = save;
}

/* A PyTorch op of MoE routing (forward, inference) in type dt, cast to out. */
static struct llmsim_gnode *route(struct bld *b, const char *name, enum llmsim_ew_kind kind,
				  int64_t tokens, int64_t hidden, enum llmsim_dtype dt,
				  enum llmsim_dtype out, int strided, int bcast)
{
	struct llmsim_gnode *x = gb_ew1(b, name, LLMSIM_PH_FWD, kind, tokens, hidden,
					LLMSIM_BYTES_ACT, strided, 0);
	if (x) {
		x->op.dtype = dt;
		x->op.u.ew.out_dtype = out != dt ? out : 0;
		x->op.u.ew.bcast = bcast;
	}
	return x;
}

/* The routed experts as PyTorch runs them (calib/torch/steps_lean.py's
 * moe(), the kernels of steps_lean_b.tsv and steps_lean_moe.tsv): the top-k
 * of the gate logits, a softmax over the k (fp32), a stable argsort of the
 * T*k expert ids, the slots' token numbers (order // k), the permuted
 * rows (index_select), the experts' counts (zeros, ones_like, scatter_add_)
 * and their offsets (cumsum: a scan of two kernels), the experts as two
 * grouped GEMMs (torch._grouped_mm) around SiLU and the product on the
 * strided halves, the routing weights gathered into slot order and cast,
 * the rows scaled by them (a broadcast), and the combine: zeros_like, then
 * index_add_ of the slots into their tokens' rows. A token-keyed bias the
 * script adds to the gate logits (to stand in for a trained router's
 * balance) is not part of a model: left out. */
static void moe_torch(struct bld *b, int64_t slots, int64_t w, int64_t local)
{
	const struct llmsim_moe *x = &b->m->moe;
	enum llmsim_dtype a = b->c->act, f = LLMSIM_DT_FP32, id = LLMSIM_DT_INT64;
	int64_t T = b->T, h = b->m->hidden, tk = T * x->top_k;
	struct llmsim_gnode *n = route(b, "router_topk", LLMSIM_EW_TOPK, T, x->experts, a, a, 0, 0);
	if (n)
		n->op.u.ew.k = x->top_k;
	route(b, "router_softmax", LLMSIM_EW_COPY, T, x->top_k, a, f, 0, 0);
	route(b, "router_softmax", LLMSIM_EW_SOFTMAX, T, x->top_k, f, f, 0, 0);
	route(b, "moe_permute", LLMSIM_EW_SORT, tk, 1, id, id, 0, 0);
	route(b, "moe_permute", LLMSIM_EW_COPY, tk, 1, id, id, 0, 0);
	route(b, "moe_permute", LLMSIM_EW_GATHER, slots, h, a, a, 0, 0);
	/* int32 counts: 4-byte elements */
	route(b, "moe_counts", LLMSIM_EW_COPY, 1, x->experts, f, f, 0, 0);
	route(b, "moe_counts", LLMSIM_EW_COPY, tk, 1, f, f, 0, 0);
	route(b, "moe_counts", LLMSIM_EW_SCATTER_ADD, tk, 1, f, f, 0, 0);
	route(b, "moe_counts", LLMSIM_EW_COPY, 1, x->experts, f, f, 0, 0);
	route(b, "moe_counts", LLMSIM_EW_COPY, 1, x->experts, f, f, 0, 0);
	gb_cat3(b->prefix, sizeof b->prefix, "experts.", NULL, NULL);
	ffn_grouped(b, slots, w, 1, local, LLMSIM_GN_EXPERT | LLMSIM_GN_LINEAR);
	b->prefix[0] = 0;
	route(b, "moe_combine", LLMSIM_EW_GATHER, tk, 1, f, f, 0, 0);
	route(b, "moe_combine", LLMSIM_EW_COPY, tk, 1, f, a, 0, 0);
	route(b, "moe_combine", LLMSIM_EW_MUL, slots, h, a, a, 1, 1);
	route(b, "moe_combine", LLMSIM_EW_COPY, T, h, a, a, 0, 0);
	route(b, "moe_combine", LLMSIM_EW_SCATTER_ADD, slots, h, a, a, 0, 0);
}

/* One exchange of the routed slots of `tokens` tokens (dispatch or
 * combine, ab bytes an element): an all-to-all in which each rank sends
 * top_k slots a token over the EP group; or (allgather dispatcher) an
 * all-gather of the group's tokens, a reduce-scatter to combine (fwd:
 * whether it runs the way the forward does). With node-limited routing
 * in training (DeepSeek-V3 Technical Report Sec. 2.1.2 and 3.2.2: a
 * token's experts on at most M nodes; it "is first transmitted via IB to
 * the GPUs with the same in-node index on their target nodes" and then
 * "forwarded via NVLink to specific GPUs that host their target experts"),
 * or DeepEP (which sends so always), and an EP group of whole nodes: a
 * token goes once to each distinct node its experts are on (their
 * expected number, llmsim_graph_nodes_touched: 3.6 of M = 4 for
 * DeepSeek-V3's top 8 of 256 over 8 nodes, not the bound 4) among the
 * nodes' peers of this in-node index (the share on remote nodes crosses),
 * then the top_k slots among the GPUs of a node. */
static void ep_exchange(struct bld *b, const char *name, enum llmsim_gphase ph, double tokens,
			double ab, int fwd)
{
	const struct llmsim_graph_cfg *c = b->c;
	const struct llmsim_moe *x = &b->m->moe;
	double h = b->m->hidden, slots = tokens * x->top_k * h * ab;
	int n = c->ep_nodes;
	int dispatcher = b->train && !c->ep_in_tp ? (int)c->moe_dispatch : LLMSIM_MOE_ALLTOALL;
	if (dispatcher == LLMSIM_MOE_ALLGATHER) {
		/* the whole group's tokens, gathered (the buffer every rank ends
		 * with: tokens x ep rows) */
		enum llmsim_coll_kind k = fwd ? LLMSIM_COLL_ALLGATHER : LLMSIM_COLL_REDUCESCATTER;
		gb_coll(b, name, ph, k, tokens * c->ep * h * ab, c->ep, n, LLMSIM_GN_EP);
		return;
	}
	int limited = x->max_nodes > 0 || dispatcher == LLMSIM_MOE_DEEPEP;
	if (b->train && !c->ep_in_tp && limited && n > 1 && c->ep % n == 0) {
		double copies = llmsim_graph_nodes_touched(x->top_k, x->experts, n, x->max_nodes);
		char nm[48];
		gb_coll(b, name, ph, LLMSIM_COLL_ALLTOALL, tokens * copies * h * ab, n, n,
			LLMSIM_GN_EP);
		gb_cat3(nm, sizeof nm, name, ".nvlink", NULL);
		gb_coll(b, nm, ph, LLMSIM_COLL_ALLTOALL, slots, c->ep / n, 1, LLMSIM_GN_EP);
		return;
	}
	gb_coll(b, name, ph, LLMSIM_COLL_ALLTOALL, slots, c->ep, n, LLMSIM_GN_EP);
}

static void moe(struct bld *b)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	const struct llmsim_moe *x = &m->moe;
	int64_t T = b->T, h = m->hidden;
	int trained = b->train && c->lora_rank == 0;
	double ab = llmsim_dtype_bytes(c->act);
	/* DeepEP dispatches FP8 (an fp32 scale per 128 elements) and combines
	 * in BF16 */
	double dab = b->train && c->moe_dispatch == LLMSIM_MOE_DEEPEP ? 1 + 4.0 / 128 : ab;
	b->normed = b->sp_input = 0;
	b->ub_pending = -1;
	gb_gemm_fb(b, "router", T, x->experts, h, 1, 0, trained, 0);
	int pytorch = gb_pytorch(b) && !b->train;
	if (!pytorch)
		gb_ew(b, "router_softmax", LLMSIM_EW_SOFTMAX, T, x->experts, LLMSIM_BYTES_ACT, 0,
		      0);
	/* each rank dispatches its tokens' slots: in training its own tokens
	 * (1/tp of them under SP), in serving 1/ep of the tokens all hold */
	double tokens = c->ep_in_tp ? (double)T / c->ep
				    : (double)T / (c->sp && c->tp > 1 ? c->tp : 1);
	double disp = tokens * x->top_k;
	/* training's fused dispatcher: the slots of this rank's tokens into
	 * expert order before the exchange, and back (weighted by their
	 * routing probabilities) after it (Megatron-Core's permute and
	 * unpermute, TE's fused moe_permute kernels) */
	int64_t nd = (int64_t)llround(disp);
	if (b->train && !pytorch)
		gb_ew(b, "moe_permute", LLMSIM_EW_GATHER, nd, h, LLMSIM_BYTES_ACT, 0, 0);
	ep_exchange(b, "ep_dispatch", LLMSIM_PH_FWD, tokens, dab, 1);
	if (pytorch)
		moe_torch(b, nd, expert_width(c, x), x->experts / c->ep);
	else
		experts(b);
	ep_exchange(b, "ep_combine", LLMSIM_PH_FWD, tokens, ab, 0);
	if (b->train && !pytorch)
		gb_ew(b, "moe_unpermute", LLMSIM_EW_GATHER, nd, h, LLMSIM_BYTES_ACT, 0, 0);
	if (b->train) {
		/* the combine's gradient goes the way the dispatch went, the
		 * dispatch's the way the combine did (both BF16 gradients) */
		ep_exchange(b, "ep_combine", LLMSIM_PH_BWD, tokens, ab, 1);
		ep_exchange(b, "ep_dispatch", LLMSIM_PH_BWD, tokens, ab, 0);
	}
	if (x->shared_experts > 0) {
		gb_cat3(b->prefix, sizeof b->prefix, "shared.", NULL, NULL);
		ffn(b, T, (int64_t)x->shared_experts * x->expert_intermediate / c->tp, 1,
		    LLMSIM_GN_LINEAR);
		b->prefix[0] = 0;
	}
}

static void layer(struct bld *b, enum llmsim_gsec sec)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	double act_bytes = (double)b->T * m->hidden * llmsim_dtype_bytes(c->act);
	b->sec = sec;
	b->part = LLMSIM_PART_BODY;
	gb_norm(b, "attn_norm", b->Tsp, m->hidden);
	b->normed = 1;
	tp_point(b, act_bytes, LLMSIM_TP_COL);
	if (m->has_mla)
		attn_mla(b);
	else
		attn_gqa(b);
	tp_point(b, act_bytes, LLMSIM_TP_ROW);
	gb_ew(b, "residual", LLMSIM_EW_ADD, b->Tsp, m->hidden, LLMSIM_BYTES_ACT, 0, 0);

	gb_norm(b, "mlp_norm", b->Tsp, m->hidden);
	b->normed = 1;
	tp_point(b, act_bytes, LLMSIM_TP_COL);
	if (sec == LLMSIM_SEC_MOE)
		moe(b);
	else
		ffn(b, b->T, m->intermediate / c->tp, 1, LLMSIM_GN_LINEAR);
	tp_point(b, act_bytes, LLMSIM_TP_ROW);
	gb_ew(b, "residual", LLMSIM_EW_ADD, b->Tsp, m->hidden, LLMSIM_BYTES_ACT, 0, 0);
}

/* HF's LlamaRotaryEmbedding, once a forward: the angles (inv_freq @
 * positions: a tiny fp32 matmul), cat((freqs, freqs)), cos and sin, each
 * times attention_scaling, cast to the activation type. */
static void rotary_tables(struct bld *b)
{
	const struct llmsim_graph_cfg *c = b->c;
	int64_t d = b->m->head_dim, T = b->T, seqs = c->decode_seqs;
	enum llmsim_dtype f = LLMSIM_DT_FP32;
	for (int i = 0; i < c->nprefill; i++)
		seqs += c->prefill[i].count;
	struct llmsim_gnode *x =
		gb_gemm(b, "rotary_emb", LLMSIM_PH_FWD, d / 2, T / (seqs > 0 ? seqs : 1), 1,
			seqs > 0 ? seqs : 1, 0, 0);
	if (x)
		x->op.dtype = x->op.u.gemm.b_dtype = f;
	for (int i = 0; i < 7; i++) {
		x = gb_ew1(b, "rotary_emb", LLMSIM_PH_FWD, LLMSIM_EW_COPY, T, d, LLMSIM_BYTES_ACT,
			   0, 0);
		if (x) {
			x->op.dtype = f;
			x->op.u.ew.out_dtype = i >= 5 ? c->act : 0;
		}
	}
}

static void pre(struct bld *b)
{
	const struct llmsim_model *m = b->m;
	b->sec = LLMSIM_SEC_PRE;
	b->part = LLMSIM_PART_BODY;
	gb_ew(b, "embedding", LLMSIM_EW_EMBEDDING, b->T, m->hidden, LLMSIM_BYTES_ACT, 0, 0);
	/* the vocab-parallel embedding sums its ranks' rows: a row point */
	tp_point(b, (double)b->T * m->hidden * llmsim_dtype_bytes(b->c->act), LLMSIM_TP_ROW);
	if (b->engine == LLMSIM_ENGINE_HF && !b->train && m->position == LLMSIM_POS_ROPE &&
	    m->head_dim > 1)
		rotary_tables(b);
}

static void post(struct bld *b)
{
	const struct llmsim_model *m = b->m;
	const struct llmsim_graph_cfg *c = b->c;
	int64_t t = c->tp, h = m->hidden, V = m->vocab;
	double ab = llmsim_dtype_bytes(c->act);
	b->sec = LLMSIM_SEC_POST;
	b->part = LLMSIM_PART_BODY;
	if (b->train) {
		gb_ew(b, "final_norm", b->norm, b->Tsp, h, LLMSIM_BYTES_ACT, 0, 0);
		b->part = LLMSIM_PART_HEAD;
		tp_point(b, (double)b->T * h * ab, LLMSIM_TP_COL);
		gb_gemm_fb(b, "lm_head", b->T, V / t, h, 1, 0, c->lora_rank == 0, LLMSIM_GN_LINEAR);
		b->npending = 0;
		gb_ew(b, "cross_entropy", LLMSIM_EW_CROSS_ENTROPY, b->T, V / t, LLMSIM_BYTES_ACT, 0, 0);
		/* vocab-parallel loss: max, sum of exps, target logit (fp32) */
		struct llmsim_gnode *x = gb_coll(b, "loss_allreduce", LLMSIM_PH_FWD,
					      LLMSIM_COLL_ALLREDUCE, 3.0 * b->T * 4, c->tp,
					      c->tp_nodes, LLMSIM_GN_TP);
		if (x)
			x->tp = LLMSIM_TP_ROW;
		return;
	}
	int64_t rows = c->logits > 0 ? c->logits : 0;
	if (b->engine == LLMSIM_ENGINE_TORCH) {
		/* F.rms_norm(x[:, -1:, :]): the last positions of several
		 * sequences of several tokens are a strided view, made
		 * contiguous first */
		if (rows > 1 && b->T > rows)
			gb_ew(b, "final_norm", LLMSIM_EW_COPY, rows, h, LLMSIM_BYTES_ACT, 1, 0);
		gb_norm(b, "final_norm", rows, h);
	} else {
		gb_norm(b, "final_norm", b->T, h);
	}
	b->part = LLMSIM_PART_HEAD;
	gb_gemm(b, "lm_head", LLMSIM_PH_FWD, rows, V / t, h, 1, 0, LLMSIM_GN_LINEAR);
	/* the sampler needs each row's whole vocabulary: gather the fp32 logits */
	gb_coll(b, "logits_allgather", LLMSIM_PH_FWD, LLMSIM_COLL_ALLGATHER,
	     (double)rows * (V / t) * 4.0, c->tp, c->tp_nodes, LLMSIM_GN_TP);
	/* an engine samples the next tokens; a plain forward returns logits */
	if (!gb_pytorch(b))
		gb_ew(b, "sampler", LLMSIM_EW_SOFTMAX, rows, V, LLMSIM_BYTES_ACT, 0, 0);
}

static void p2p(struct bld *b)
{
	const struct llmsim_graph_cfg *c = b->c;
	b->sec = LLMSIM_SEC_P2P;
	b->part = LLMSIM_PART_BODY;
	/* one activation from stage to stage (1/tp of it under SP); with the
	 * scatter/gather each TP rank sends its 1/tp slice and the receiving
	 * stage all-gathers the whole activation over its TP group */
	double full = (double)b->T * b->m->hidden * llmsim_dtype_bytes(c->act);
	int sharded = b->train && c->sp && c->tp > 1;
	int scatter = b->train && c->pp_scatter && c->tp > 1 && !sharded;
	gb_coll(b, "pp_send", LLMSIM_PH_FWD, LLMSIM_COLL_SENDRECV,
		full / (sharded || scatter ? c->tp : 1), 2, c->pp_nodes, LLMSIM_GN_PP);
	if (scatter)
		gb_coll(b, "pp_gather", LLMSIM_PH_FWD, LLMSIM_COLL_ALLGATHER, full, c->tp,
			c->tp_nodes, LLMSIM_GN_PP);
}

static int check(const struct llmsim_model *m, const struct llmsim_graph_cfg *c,
		 struct llmsim_err *err)
{
	if (m->layers < 1 || m->hidden < 1 || m->heads < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "model '%s' has no layers", m->name);
	if (c->tp < 1 || c->cp < 1 || c->ep < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "tp, cp and ep must be at least 1");
	if ((unsigned)c->lower.engine >= LLMSIM_ENGINE_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "unknown engine %d (%s)",
				      (int)c->lower.engine, llmsim_engine_choices());
	if (m->heads % c->tp)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%d heads are not divisible by tp %d",
				      m->heads, c->tp);
	if (m->has_moe && m->moe.experts % c->ep)
		return llmsim_err_set(err, LLMSIM_EINVAL, "ep %d does not divide the %d experts",
				      c->ep, m->moe.experts);
	if (c->work == LLMSIM_WORK_TRAIN && (c->micro_batch < 1 || c->seq < 1))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "a micro-batch needs at least one sequence of one token");
	int64_t T = llmsim_graph_tokens(c);
	if (T > (int64_t)1 << 40)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%lld tokens are too many for one step",
				      (long long)T);
	return 0;
}

static int build(const struct llmsim_model *m, const struct llmsim_graph_cfg *c,
		 struct llmsim_graph *g, struct llmsim_graph_mem *mem, struct llmsim_err *err)
{
	g->n = 0;
	int rc = check(m, c, err);
	if (rc)
		return rc;
	struct bld b = {.m = m, .c = c, .g = g, .train = c->work == LLMSIM_WORK_TRAIN,
			.flops_scale = 1, .mem = mem, .regather = -1, .ub_pending = -1};
	b.T = llmsim_graph_tokens(c);
	b.Tsp = b.train && c->sp && c->tp > 1 ? b.T / c->tp : b.T;
	b.norm = m->norm == LLMSIM_NORM_RMS ? LLMSIM_EW_RMSNORM : LLMSIM_EW_LAYERNORM;
	b.engine = c->lower.engine;
	if (b.T <= 0)
		return 0;
	if (b.train && b.engine == LLMSIM_ENGINE_TORCH)
		return gb_torch_train(&b, err);
	pre(&b);
	if (llmsim_model_moe_layers(m, 0, m->layers) < m->layers)
		layer(&b, LLMSIM_SEC_DENSE);
	if (m->has_moe && llmsim_model_moe_layers(m, 0, m->layers) > 0)
		layer(&b, LLMSIM_SEC_MOE);
	post(&b);
	p2p(&b);
	return 0;
}

int llmsim_graph_build(const struct llmsim_model *m, const struct llmsim_graph_cfg *c,
		       struct llmsim_graph *g, struct llmsim_err *err)
{
	return build(m, c, g, NULL, err);
}

int llmsim_graph_build_mem(const struct llmsim_model *m, const struct llmsim_graph_cfg *c,
			   struct llmsim_graph *g, struct llmsim_graph_mem *mem,
			   struct llmsim_err *err)
{
	memset(mem, 0, sizeof *mem);
	for (int s = 0; s < LLMSIM_SEC_COUNT; s++)
		mem->io[s] = (struct llmsim_gsec_io){.in_dies = -1, .out_born = -1, .grad_in_born = -1,
						.grad_out_dies = -1, .stop = -1, .host_sync = -1};
	if (c->work != LLMSIM_WORK_TRAIN || c->lower.engine != LLMSIM_ENGINE_TORCH)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "only the torch training graph describes its tensors");
	if (c->sections || c->parts)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "a graph's tensors need all of its sections");
	return build(m, c, g, mem, err);
}
