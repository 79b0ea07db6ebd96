/*
 * test_graph.c - the op graph of a model step (sim/graph.h): its shapes
 * for known models and layouts, and for every shipped model, in training
 * and in serving form, that it does what the model file says: its FLOPs
 * per token are models/params.c's count (causal attention: a prefill of S
 * tokens sees on average (S + 1) / 2 keys), its weights are the model's
 * matmul parameters, its norms, activation and MoE layers are the file's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support.h"
#include "models/model_load.h"
#include "sim/graph.h"
#include "sim/infer/infer.h"
#include "sim/train/train.h"

static const struct llmsim_gnode *find(const struct llmsim_graph *g, enum llmsim_gsec sec,
				       enum llmsim_gphase ph, const char *name)
{
	for (int i = 0; i < g->n; i++)
		if (g->node[i].sec == sec && g->node[i].phase == ph &&
		    !strcmp(g->node[i].name, name))
			return &g->node[i];
	return NULL;
}

static int count_named(const struct llmsim_graph *g, enum llmsim_gsec sec, const char *name)
{
	int k = 0;
	for (int i = 0; i < g->n; i++)
		k += g->node[i].sec == sec && !strcmp(g->node[i].name, name);
	return k;
}

#define EXPECT_GEMM(o, M, N, K, B)                                                  \
	do {                                                                        \
		cr_assert((o) != NULL);                                             \
		cr_expect_eq((o)->op.kind, LLMSIM_OP_GEMM);                         \
		cr_expect_eq((o)->op.u.gemm.m, (M), "m = %lld", (long long)(o)->op.u.gemm.m); \
		cr_expect_eq((o)->op.u.gemm.n, (N), "n = %lld", (long long)(o)->op.u.gemm.n); \
		cr_expect_eq((o)->op.u.gemm.k, (K), "k = %lld", (long long)(o)->op.u.gemm.k); \
		cr_expect_eq((o)->op.u.gemm.batch, (B));                            \
	} while (0)

/* An inference step: count sequences of `tokens` prefill tokens, or (tokens
 * 0) count sequences decoding against kv keys. */
static void infer_graph(const struct llmsim_model *m, int tp, int64_t tokens, int64_t count,
			double kv, struct llmsim_graph *g)
{
	static struct llmsim_prefill_chunk ch;
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.tp = tp;
	ch = (struct llmsim_prefill_chunk){.tokens = tokens, .context = 0, .count = count};
	if (tokens > 0) {
		c.prefill = &ch;
		c.nprefill = 1;
	} else {
		c.decode_seqs = count;
		c.decode_kv_len = kv;
	}
	c.logits = count;
	cr_assert_eq(llmsim_graph_build(m, &c, g, NULL), 0);
}

static void train_graph(const struct llmsim_model *m, int tp, int64_t mb, int64_t seq,
			struct llmsim_graph *g)
{
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.work = LLMSIM_WORK_TRAIN;
	c.tp = tp;
	c.sp = tp > 1;
	c.micro_batch = mb;
	c.seq = seq;
	cr_assert_eq(llmsim_graph_build(m, &c, g, NULL), 0);
}

static struct llmsim_graph G;

/* Llama 3.1 8B (Meta's config.json): hidden 4096, 32 heads, 8 KV heads,
 * head dim 128, FFN 14336, SwiGLU, RMSNorm, RoPE. */
Test(graph, llama_8b_serving)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("8b", &m, NULL), 0);
	/* prefill: T = 2 x 1024 tokens; QKV width (32 + 2 x 8) x 128 = 6144 */
	infer_graph(&m, 1, 1024, 2, 0, &G);
	const enum llmsim_gsec L = LLMSIM_SEC_DENSE;
	EXPECT_GEMM(find(&G, L, 0, "qkv_proj"), 2048, 6144, 4096, 1);
	EXPECT_GEMM(find(&G, L, 0, "o_proj"), 2048, 4096, 4096, 1);
	EXPECT_GEMM(find(&G, L, 0, "gate_up_proj"), 2048, 2 * 14336, 4096, 1);
	EXPECT_GEMM(find(&G, L, 0, "down_proj"), 2048, 4096, 14336, 1);
	/* K and V of 8 heads x 128 per token into the cache */
	const struct llmsim_gnode *w = find(&G, L, 0, "kv_write");
	cr_assert(w);
	cr_expect_eq(w->op.u.ew.tokens, 2048);
	cr_expect_eq(w->op.u.ew.hidden, 2 * 8 * 128);
	cr_expect_eq(w->cat, LLMSIM_BYTES_KV);
	const struct llmsim_gnode *a = find(&G, L, 0, "attention");
	cr_assert(a);
	cr_expect_eq(a->op.kind, LLMSIM_OP_ATTENTION);
	cr_expect_eq(a->op.u.attn.batch, 2);
	cr_expect_eq(a->op.u.attn.heads, 32);
	cr_expect_eq(a->op.u.attn.kv_heads, 8);
	cr_expect_eq(a->op.u.attn.seq, 1024);
	cr_expect_eq(a->op.u.attn.causal, 1);
	cr_expect_eq(a->part, LLMSIM_PART_ATTN);
	/* a TP-free layer: no collective (the graph's one pipeline send is
	 * for walkers with pp > 1) */
	for (int i = 0; i < G.n; i++)
		cr_expect(G.node[i].sec == LLMSIM_SEC_P2P || !(G.node[i].role & LLMSIM_GN_COMM),
			  "%s", G.node[i].name);
	/* the LM head on the two sequences' last positions */
	EXPECT_GEMM(find(&G, LLMSIM_SEC_POST, 0, "lm_head"), 2, 128256, 4096, 1);

	/* decode: one token per sequence against a 1024-token cache */
	infer_graph(&m, 1, 0, 2, 1024, &G);
	EXPECT_GEMM(find(&G, L, 0, "qkv_proj"), 2, 6144, 4096, 1);
	a = find(&G, L, 0, "attention");
	cr_assert(a);
	cr_expect_eq(a->op.kind, LLMSIM_OP_DECODE);
	cr_expect_eq(a->op.u.dec.kv_len, 1024);
	cr_expect_eq(a->op.u.dec.batch, 2);
	cr_expect_eq(a->op.u.dec.q_len, 1);
	cr_expect_eq(a->chunk, LLMSIM_CHUNK_DECODE);
	const struct llmsim_gnode *e = find(&G, L, 0, "silu_mul");
	cr_assert(e);
	cr_expect_eq(e->op.u.ew.kind, LLMSIM_EW_SILU_MUL);
	cr_expect_eq(e->op.u.ew.tokens, 2);
	cr_expect_eq(e->op.u.ew.hidden, 14336);
}

/* A linear layer Y = X W over T tokens trains as three GEMMs: forward
 * (T, out, in), dX = dY W^T (T, in, out), dW = X^T dY (in, out, T). */
Test(graph, llama_8b_training_gradients)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("8b", &m, NULL), 0);
	train_graph(&m, 1, 1, 2048, &G);
	const enum llmsim_gsec L = LLMSIM_SEC_DENSE;
	EXPECT_GEMM(find(&G, L, LLMSIM_PH_FWD, "qkv_proj"), 2048, 6144, 4096, 1);
	EXPECT_GEMM(find(&G, L, LLMSIM_PH_BWD, "qkv_proj.dgrad"), 2048, 4096, 6144, 1);
	EXPECT_GEMM(find(&G, L, LLMSIM_PH_BWD, "qkv_proj.wgrad"), 4096, 6144, 2048, 1);
	EXPECT_GEMM(find(&G, L, LLMSIM_PH_BWD, "down_proj.wgrad"), 14336, 4096, 2048, 1);
	cr_expect(find(&G, L, LLMSIM_PH_BWD, "qkv_proj.wgrad")->role & LLMSIM_GN_WGRAD);
	const struct llmsim_gnode *a = find(&G, L, LLMSIM_PH_BWD, "attention");
	cr_assert(a);
	cr_expect_eq(a->op.kind, LLMSIM_OP_ATTENTION);
	cr_expect_eq(a->op.u.attn.pass, LLMSIM_PASS_BWD);
	cr_expect(a->role & LLMSIM_GN_ATTN);
	cr_expect_null(find(&G, L, LLMSIM_PH_FWD, "qkv_proj.dgrad"));
	/* training writes no KV cache and samples nothing */
	cr_expect_null(find(&G, L, LLMSIM_PH_FWD, "kv_write"));
	cr_expect_null(find(&G, LLMSIM_SEC_POST, LLMSIM_PH_FWD, "sampler"));
	cr_expect(find(&G, LLMSIM_SEC_POST, LLMSIM_PH_FWD, "cross_entropy") != NULL);
	/* LoRA (rank 16): the frozen base loses its weight gradient, Q K V
	 * and O get adapters A (in -> 16) and B (16 -> out) */
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.work = LLMSIM_WORK_TRAIN;
	c.seq = 2048;
	c.lora_rank = 16;
	cr_assert_eq(llmsim_graph_build(&m, &c, &G, NULL), 0);
	cr_expect_null(find(&G, L, LLMSIM_PH_BWD, "qkv_proj.wgrad"));
	EXPECT_GEMM(find(&G, L, LLMSIM_PH_FWD, "qkv_proj.lora_a"), 2048, 16, 4096, 1);
	EXPECT_GEMM(find(&G, L, LLMSIM_PH_BWD, "o_proj.lora_b.wgrad"), 16, 4096, 2048, 1);
	cr_expect_null(find(&G, L, LLMSIM_PH_BWD, "down_proj.wgrad"), "the MLP stays frozen");
}

/* Mixtral 8x7B (Mistral's config.json): 8 experts, top-2, expert FFN 14336. */
Test(graph, mixtral_experts_as_one_grouped_gemm)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("mixtral-8x7b", &m, NULL), 0);
	infer_graph(&m, 1, 4096, 1, 0, &G);
	const enum llmsim_gsec L = LLMSIM_SEC_MOE;
	/* 4096 tokens x top-2 spread over 8 experts: 1024 tokens each */
	EXPECT_GEMM(find(&G, L, 0, "experts.gate_up_proj"), 1024, 2 * 14336, 4096, 8);
	EXPECT_GEMM(find(&G, L, 0, "router"), 4096, 8, 4096, 1);
	const struct llmsim_gnode *s = find(&G, L, 0, "router_softmax");
	cr_assert(s);
	cr_expect_eq(s->op.u.ew.kind, LLMSIM_EW_SOFTMAX);
	cr_expect_eq(s->op.u.ew.hidden, 8);
	cr_expect_null(find(&G, LLMSIM_SEC_DENSE, 0, "attention"), "no dense layer");
	/* decode, 1 token: it touches its 2 experts, one row each */
	infer_graph(&m, 1, 0, 1, 4096, &G);
	EXPECT_GEMM(find(&G, L, 0, "experts.down_proj"), 1, 4096, 14336, 2);
	/* training with the busiest expert at 1.5x the mean: 7 experts at
	 * 4096 x 2 / 8 = 1024 tokens, one at 1536 */
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.work = LLMSIM_WORK_TRAIN;
	c.seq = 4096;
	c.moe_imbalance = 1.5;
	cr_assert_eq(llmsim_graph_build(&m, &c, &G, NULL), 0);
	const struct llmsim_gnode *x = find(&G, L, 0, "experts.gate_up_proj");
	EXPECT_GEMM(x, 1024, 2 * 14336, 4096, 7);
	EXPECT_GEMM(find(&G, L, 0, "experts.busiest.gate_up_proj"), 1536, 2 * 14336, 4096, 1);
	/* model FLOPs count the balanced 8 x 1024 tokens: 8192 / (7 x 1024 + 1536) */
	expect_close(x->flops_scale, 8192.0 / (7 * 1024 + 1536), 1e-12);
}

/* Llama 3.1 70B (Meta's config.json): hidden 8192, 64 heads, 8 KV heads,
 * head dim 128, FFN 28672. */
Test(graph, tensor_parallel_shards_and_points)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("70b", &m, NULL), 0);
	infer_graph(&m, 8, 1024, 1, 0, &G);
	const enum llmsim_gsec L = LLMSIM_SEC_DENSE;
	/* 64/8 = 8 query heads and 8/8 = 1 KV head per GPU: (8 + 2) x 128 */
	EXPECT_GEMM(find(&G, L, 0, "qkv_proj"), 1024, 1280, 8192, 1);
	EXPECT_GEMM(find(&G, L, 0, "o_proj"), 1024, 8192, 1024, 1);
	EXPECT_GEMM(find(&G, L, 0, "gate_up_proj"), 1024, 2 * 28672 / 8, 8192, 1);
	/* serving replicates norms over TP and all-reduces after O and down:
	 * 1024 tokens x 8192 x 2 bytes each */
	cr_expect_eq(find(&G, L, 0, "attn_norm")->op.u.ew.tokens, 1024);
	cr_expect_eq(count_named(&G, L, "tp_allreduce"), 2);
	const struct llmsim_gnode *ar = find(&G, L, 0, "tp_allreduce");
	cr_expect_eq(ar->op.u.coll.bytes, 1024.0 * 8192 * 2);
	cr_expect_eq(ar->op.u.coll.gpus, 8);
	cr_expect_eq(ar->tp, LLMSIM_TP_ROW);

	/* tp 16 > 8 KV heads: each GPU keeps one (replicated); 4 query heads */
	infer_graph(&m, 16, 1024, 1, 0, &G);
	EXPECT_GEMM(find(&G, L, 0, "qkv_proj"), 1024, (4 + 2) * 128, 8192, 1);

	/* Training with sequence parallelism: norms see 1024 / 2 tokens; a
	 * column point all-gathers forward and reduce-scatters backward, that
	 * backward collective hidden by the next weight gradient (QKV's) */
	train_graph(&m, 2, 1, 1024, &G);
	cr_expect_eq(find(&G, L, 0, "attn_norm")->op.u.ew.tokens, 512);
	cr_expect_eq(find(&G, L, LLMSIM_PH_BWD, "residual")->op.u.ew.tokens, 512);
	const struct llmsim_gnode *rs = find(&G, L, LLMSIM_PH_BWD, "tp_reducescatter");
	cr_assert(rs);
	cr_expect_eq(rs->tp, LLMSIM_TP_COL);
	cr_assert(rs->hides >= 0);
	cr_expect_str_eq(G.node[rs->hides].name, "qkv_proj.wgrad");
	cr_expect_eq(find(&G, L, LLMSIM_PH_FWD, "tp_allgather")->op.u.coll.bytes,
		     1024.0 * 8192 * 2);

	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.tp = 3; /* 64 heads do not split 3 ways */
	cr_expect_eq(llmsim_graph_build(&m, &c, &G, NULL), LLMSIM_EINVAL);
}

/* The lean PyTorch engine (calib/torch/steps_lean.py): RoPE as seven
 * kernels for q and seven for k (four of them strided multiplies by the
 * broadcast cos/sin table), SiLU and the multiply apart on strided
 * halves, K and V copied one by one; llama_steps.py's q and k roped as
 * one tensor: seven. */
Test(graph, torch_lowering_of_a_llama_layer)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("8b", &m, NULL), 0);
	static struct llmsim_prefill_chunk ch = {.tokens = 512, .context = 0, .count = 1};
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.lower.engine = LLMSIM_ENGINE_TORCH;
	c.prefill = &ch;
	c.nprefill = 1;
	c.logits = 1;
	cr_assert_eq(llmsim_graph_build(&m, &c, &G, NULL), 0);
	const enum llmsim_gsec L = LLMSIM_SEC_DENSE;
	cr_expect_eq(count_named(&G, L, "rope"), 14);
	/* q: 32 heads x 128 over 512 tokens: each multiply over a half */
	const struct llmsim_gnode *r = find(&G, L, 0, "rope");
	cr_expect_eq(r->op.u.ew.kind, LLMSIM_EW_MUL);
	cr_expect_eq(r->op.u.ew.hidden, 32 * 128 / 2);
	cr_expect_eq(r->op.u.ew.strided, 1);
	cr_expect_eq(r->op.u.ew.bcast, 1);
	cr_expect_eq(count_named(&G, L, "silu_mul"), 2);
	cr_expect_eq(count_named(&G, L, "kv_write"), 2);
	const struct llmsim_gnode *w = find(&G, L, 0, "kv_write");
	cr_expect_eq(w->op.u.ew.hidden, 8 * 128);
	cr_expect_eq(w->op.u.ew.strided, 1);
	/* the final norm on the last position only, no sampler */
	cr_expect_eq(find(&G, LLMSIM_SEC_POST, 0, "final_norm")->op.u.ew.tokens, 1);
	cr_expect_eq(count_named(&G, LLMSIM_SEC_POST, "sampler"), 0);
	c.lower.rope_joint = 1;
	cr_assert_eq(llmsim_graph_build(&m, &c, &G, NULL), 0);
	cr_expect_eq(count_named(&G, L, "rope"), 7);
}

Test(graph, rejects_bad_layouts)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("mixtral-8x7b", &m, NULL), 0);
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.ep = 3; /* 8 experts */
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_graph_build(&m, &c, &G, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "experts"), "%s", e.msg);
	llmsim_graph_cfg_init(&c);
	c.work = LLMSIM_WORK_TRAIN;
	c.micro_batch = 0;
	cr_expect_eq(llmsim_graph_build(&m, &c, &G, NULL), LLMSIM_EINVAL);
}

/* ---- every shipped model ---------------------------------------------- */

struct models {
	char path[32][512];
	int n;
};

static void collect(const char *path, void *ctx)
{
	struct models *ms = ctx;
	if (ms->n < 32)
		snprintf(ms->path[ms->n++], sizeof ms->path[0], "%s", path);
}

static int dense_and_moe(const struct llmsim_model *m, int *moe)
{
	/* the model file's MoE section: every layer from first_k_dense_replace
	 * on is MoE when moe_layer_freq is 1 (every shipped MoE model) */
	*moe = 0;
	if (m->has_moe) {
		cr_assert_eq(m->moe.layer_freq, 1, "%s: a layer_freq this test does not count",
			     m->name);
		*moe = m->layers - m->moe.dense_layers;
	}
	return m->layers - *moe;
}

/* Model FLOPs (priced FLOPs x flops_scale) of the matmuls and attention of
 * one phase, each section as often as the model runs it. */
static double model_flops(const struct llmsim_gpu *gpu, const struct llmsim_model *m,
			  const struct llmsim_graph *g, enum llmsim_gphase ph, int gemm_only)
{
	int moe, dense = dense_and_moe(m, &moe);
	double mult[LLMSIM_SEC_COUNT] = {[LLMSIM_SEC_PRE] = 1, [LLMSIM_SEC_DENSE] = dense,
					 [LLMSIM_SEC_MOE] = moe, [LLMSIM_SEC_POST] = 1};
	double f = 0;
	for (int i = 0; i < g->n; i++) {
		const struct llmsim_gnode *n = &g->node[i];
		int kind = n->op.kind;
		if (n->phase != ph ||
		    !(kind == LLMSIM_OP_GEMM || (!gemm_only && (kind == LLMSIM_OP_ATTENTION ||
								  kind == LLMSIM_OP_DECODE))))
			continue;
		struct llmsim_pred p = predict_ok(gpu, n->op);
		f += mult[n->sec] * n->count * p.flops * n->flops_scale;
	}
	return f;
}

Test(graph, every_model_as_its_file_says)
{
	static struct models ms;
	struct llmsim_gpu gpu;
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, NULL), 0);
	cr_assert_eq(llmsim_model_list(collect, &ms, NULL), 0);
	cr_assert_geq(ms.n, 10);
	/* a prefill of S = 1023 tokens: each attends to (S + 1) / 2 = 512 keys
	 * on average (causal); the LM head on every position, as params.c
	 * counts it */
	const int64_t S = 1023, ctx = 512;
	for (int k = 0; k < ms.n; k++) {
		static struct llmsim_model m;
		cr_assert_eq(llmsim_model_load_file(ms.path[k], &m, NULL), 0, "%s", ms.path[k]);
		int moe, dense = dense_and_moe(&m, &moe);
		double want = llmsim_model_flops_per_token(&m, ctx);

		/* serving form */
		static struct llmsim_prefill_chunk ch = {.tokens = 1023, .context = 0, .count = 1};
		struct llmsim_graph_cfg c;
		llmsim_graph_cfg_init(&c);
		c.prefill = &ch;
		c.nprefill = 1;
		c.logits = S;
		cr_assert_eq(llmsim_graph_build(&m, &c, &G, NULL), 0, "%s", m.name);
		expect_close(model_flops(&gpu, &m, &G, LLMSIM_PH_FWD, 0) / S, want, 1e-9);

		/* training form: the forward is the same count, and the
		 * backward's GEMMs twice the forward's (data and weight
		 * gradients of every trained weight) */
		train_graph(&m, 1, 1, S, &G);
		expect_close(model_flops(&gpu, &m, &G, LLMSIM_PH_FWD, 0) / S, want, 1e-9);
		expect_close(model_flops(&gpu, &m, &G, LLMSIM_PH_BWD, 1),
			     2 * model_flops(&gpu, &m, &G, LLMSIM_PH_FWD, 1), 1e-9);

		/* weights: a decode step of one sequence reads every weight of
		 * its path once (the experts its token touches, top_k of them):
		 * the B operands of its GEMMs are the active matmul parameters,
		 * 2 bytes each in bf16 */
		infer_graph(&m, 1, 0, 1, 100, &G);
		double wbytes = 0;
		double mult[LLMSIM_SEC_COUNT] = {1, dense, moe, 1, 0};
		for (int i = 0; i < G.n; i++) {
			const struct llmsim_op *o = &G.node[i].op;
			if (o->kind == LLMSIM_OP_GEMM)
				wbytes += mult[G.node[i].sec] * (double)o->u.gemm.k * o->u.gemm.n *
					  o->u.gemm.batch * llmsim_dtype_bytes(o->u.gemm.b_dtype);
		}
		expect_close(wbytes, 2 * llmsim_model_matmul_params_active(&m), 1e-12);

		/* norms, activation and MoE layers of the file */
		enum llmsim_ew_kind norm = m.norm == LLMSIM_NORM_RMS ? LLMSIM_EW_RMSNORM
								     : LLMSIM_EW_LAYERNORM;
		enum llmsim_ew_kind act = m.mlp == LLMSIM_MLP_GATED ? LLMSIM_EW_SILU_MUL
					 : m.activation == LLMSIM_ACT_GELU ? LLMSIM_EW_GELU
					 : m.activation == LLMSIM_ACT_RELU ? LLMSIM_EW_RELU
									   : LLMSIM_EW_SILU;
		int norms = 0, acts = 0;
		for (int i = 0; i < G.n; i++) {
			const struct llmsim_op *o = &G.node[i].op;
			if (o->kind != LLMSIM_OP_ELEMENTWISE)
				continue;
			if (o->u.ew.kind == LLMSIM_EW_RMSNORM || o->u.ew.kind == LLMSIM_EW_LAYERNORM) {
				cr_expect_eq(o->u.ew.kind, norm, "%s: %s", m.name, G.node[i].name);
				norms++;
			}
			acts += o->u.ew.kind == act;
		}
		/* two per layer kind and the final one, MLA's latent norms,
		 * the per-head q and k norms */
		int kinds = (dense > 0) + (moe > 0);
		cr_expect_eq(norms, 2 * kinds + 1 + (m.has_mla ? (m.mla.q_lora_rank ? 2 : 1) * kinds : 0) +
					    (m.qk_norm ? 2 * kinds : 0),
			     "%s: %d norms", m.name, norms);
		cr_expect_geq(acts, kinds, "%s: its activation", m.name);
		cr_expect_eq(find(&G, LLMSIM_SEC_MOE, 0, "router") != NULL, moe > 0, "%s", m.name);
		cr_expect_eq(find(&G, LLMSIM_SEC_DENSE, 0, "attn_norm") != NULL, dense > 0, "%s",
			     m.name);

		/* the walker counts the layers alike */
		struct llmsim_infer_cfg ic;
		llmsim_infer_cfg_init(&ic, &m, &gpu);
		struct llmsim_step s = {.decode_seqs = 1, .q_len = 1, .decode_kv_len = 100,
					.logits = 1};
		static struct llmsim_pred pred[LLMSIM_GRAPH_MAX];
		double wm[LLMSIM_SEC_COUNT];
		struct llmsim_step_cost cost;
		cr_assert_eq(llmsim_infer_step_ops(&ic, &s, &G, pred, wm, &cost, NULL), 0);
		cr_expect_eq(wm[LLMSIM_SEC_DENSE], dense, "%s", m.name);
		cr_expect_eq(wm[LLMSIM_SEC_MOE], moe, "%s", m.name);
	}
}

/* The MoE layers of the two shipped MoE models, from their model cards:
 * DeepSeek-V3's 61 layers, the first 3 dense (58 MoE); Mixtral's 32, all. */
Test(graph, moe_layers_from_the_model_cards)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("deepseek-v3", &m, NULL), 0);
	cr_expect_eq(llmsim_model_moe_layers(&m, 0, m.layers), 58);
	cr_expect(!llmsim_model_is_moe_layer(&m, 2) && llmsim_model_is_moe_layer(&m, 3));
	cr_assert_eq(llmsim_model_load("mixtral-8x7b", &m, NULL), 0);
	cr_expect_eq(llmsim_model_moe_layers(&m, 0, m.layers), 32);
	/* a layer_freq of 2 (Hugging Face's moe_layer_freq): layers 2, 4, ...
	 * from dense_layers = 1 on, counted by their index, not from the first
	 * MoE layer (DeepSeek's rule: l >= first_k_dense and l % freq == 0) */
	m.moe.dense_layers = 1;
	m.moe.layer_freq = 2;
	m.layers = 8;
	cr_expect_eq(llmsim_model_moe_layers(&m, 0, 8), 3); /* 2, 4, 6 */
	cr_expect(!llmsim_model_is_moe_layer(&m, 1));
}

/* Training's forward and serving's prefill of the same tokens are one
 * builder's ops: the layer's shared ops print the same specs. */
Test(graph, train_forward_is_serving_prefill)
{
	static const char *const shared[] = {"attn_norm", "qkv_proj", "rope", "attention",
					     "o_proj", "residual", "mlp_norm", "gate_up_proj",
					     "silu_mul", "down_proj"};
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load("8b", &m, NULL), 0);
	static struct llmsim_graph T;
	train_graph(&m, 1, 2, 1024, &T);
	infer_graph(&m, 1, 1024, 2, 0, &G);
	for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
		const struct llmsim_gnode *a = find(&T, LLMSIM_SEC_DENSE, 0, shared[i]);
		const struct llmsim_gnode *b = find(&G, LLMSIM_SEC_DENSE, 0, shared[i]);
		cr_assert(a && b, "%s", shared[i]);
		char sa[512], sb[512];
		llmsim_op_format(&a->op, sa, sizeof sa);
		llmsim_op_format(&b->op, sb, sizeof sb);
		cr_expect_str_eq(sa, sb, "%s", shared[i]);
	}
}
