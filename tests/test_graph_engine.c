/*
 * test_graph_engine.c - how each engine runs a model's ops (sim/graph.h:
 * struct llmsim_lowering's engine, sim/graph_engine.c), against the
 * kernel lists of the measured programs, with every count and shape
 * derived here by hand from the model's dimensions.
 */
#include <string.h>

#include "support.h"
#include "sim/graph.h"
#include "sim/infer/infer.h"

static struct llmsim_graph G;

static int count_named(enum llmsim_gsec sec, const char *name)
{
	int k = 0;
	for (int i = 0; i < G.n; i++)
		k += G.node[i].sec == sec && !strcmp(G.node[i].name, name);
	return k;
}

/* The k-th node named `name` of section sec. */
static const struct llmsim_gnode *nth(enum llmsim_gsec sec, const char *name, int k)
{
	for (int i = 0; i < G.n; i++)
		if (G.node[i].sec == sec && !strcmp(G.node[i].name, name) && !k--)
			return &G.node[i];
	return NULL;
}

static void build(const char *model, enum llmsim_engine e, const struct llmsim_prefill_chunk *ch,
		  int64_t decode_seqs, double kv_len, int64_t logits, struct llmsim_model *m)
{
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load(model, m, &err), 0, "%s", err.msg);
	struct llmsim_graph_cfg c;
	llmsim_graph_cfg_init(&c);
	c.lower.engine = e;
	c.prefill = ch;
	c.nprefill = ch ? 1 : 0;
	c.decode_seqs = decode_seqs;
	c.decode_kv_len = kv_len;
	c.logits = logits;
	cr_assert_eq(llmsim_graph_build(m, &c, &G, &err), 0, "%s", err.msg);
}

/* HF's LlamaRMSNorm over [T, 4096]: to(fp32), pow, mean, + eps, rsqrt,
 * x * rsqrt (the [T, 1] broadcast: non-vectorized), to(bf16), weight * x:
 * eight kernels; q, k, v and gate, up as separate projections; its
 * RoPE five kernels for q and five for k; the final norm over every
 * token, the LM head on the last. */
Test(graph_engine, hf_llama_layer)
{
	struct llmsim_model m;
	static struct llmsim_prefill_chunk ch = {.tokens = 512, .context = 0, .count = 2};
	build("llama-3.1-8b", LLMSIM_ENGINE_HF, &ch, 0, 0, 2, &m);
	const enum llmsim_gsec L = LLMSIM_SEC_DENSE;
	cr_expect_eq(count_named(L, "attn_norm"), 8);
	const struct llmsim_gnode *c = nth(L, "attn_norm", 0);
	cr_expect_eq(c->op.u.ew.kind, LLMSIM_EW_COPY);
	cr_expect_eq(c->op.dtype, LLMSIM_DT_BF16);
	cr_expect_eq(c->op.u.ew.out_dtype, LLMSIM_DT_FP32);
	cr_expect_eq(c->op.u.ew.tokens, 1024);
	cr_expect_eq(nth(L, "attn_norm", 2)->op.u.ew.kind, LLMSIM_EW_REDUCE);
	const struct llmsim_gnode *scale = nth(L, "attn_norm", 5);
	cr_expect_eq(scale->op.u.ew.kind, LLMSIM_EW_MUL);
	cr_expect_eq(scale->op.dtype, LLMSIM_DT_FP32);
	cr_expect(scale->op.u.ew.bcast && scale->op.u.ew.strided);
	cr_expect_eq(nth(L, "attn_norm", 3)->op.u.ew.hidden, 1); /* + eps on [T, 1] */
	cr_expect_eq(nth(L, "attn_norm", 6)->op.u.ew.out_dtype, LLMSIM_DT_BF16);
	cr_expect_eq(count_named(L, "q_proj"), 1);
	cr_expect_eq(count_named(L, "qkv_proj"), 0);
	cr_expect_eq(nth(L, "k_proj", 0)->op.u.gemm.n, 8 * 128);
	cr_expect_eq(count_named(L, "gate_proj"), 1);
	/* contiguous SiLU and product on the separate gate and up outputs */
	cr_expect_eq(nth(L, "silu_mul", 0)->op.u.ew.strided, 0);
	/* RoPE: q (32 heads x 128 = 4096) then k (8 x 128 = 1024), five each */
	cr_expect_eq(count_named(L, "rope"), 10);
	cr_expect_eq(nth(L, "rope", 0)->op.u.ew.hidden, 4096);
	cr_expect_eq(nth(L, "rope", 1)->op.u.ew.hidden, 2048); /* -x2: a half */
	cr_expect_eq(nth(L, "rope", 5)->op.u.ew.hidden, 1024);
	/* an empty DynamicCache takes the prompt's K and V: 1024 rows each */
	cr_expect_eq(count_named(L, "kv_write"), 2);
	cr_expect_eq(nth(L, "kv_write", 0)->op.u.ew.tokens, 1024);
	/* final norm over all 1024 tokens (eight kernels), head on 2 rows */
	cr_expect_eq(count_named(LLMSIM_SEC_POST, "final_norm"), 8);
	cr_expect_eq(nth(LLMSIM_SEC_POST, "final_norm", 0)->op.u.ew.tokens, 1024);
	cr_expect_eq(nth(LLMSIM_SEC_POST, "lm_head", 0)->op.u.gemm.m, 2);
	cr_expect_eq(count_named(LLMSIM_SEC_POST, "sampler"), 0);
	/* the rotary tables once a forward: a [64 x 512] fp32 product per
	 * sequence, then seven fp32 element-wise kernels over 1024 x 128 */
	cr_expect_eq(count_named(LLMSIM_SEC_PRE, "rotary_emb"), 8);
	const struct llmsim_gnode *r = nth(LLMSIM_SEC_PRE, "rotary_emb", 0);
	cr_expect_eq(r->op.dtype, LLMSIM_DT_FP32);
	cr_expect_eq(r->op.u.gemm.m, 64);
	cr_expect_eq(r->op.u.gemm.n, 512);
	cr_expect_eq(r->op.u.gemm.batch, 2);
}

/* HF decode: DynamicCache.update concatenates the step's K and V onto the
 * whole cache, so each copies batch x kv_len rows: 8 x 2049. */
Test(graph_engine, hf_decode_rewrites_the_cache)
{
	struct llmsim_model m;
	build("llama-3.1-8b", LLMSIM_ENGINE_HF, NULL, 8, 2049, 8, &m);
	const struct llmsim_gnode *w = nth(LLMSIM_SEC_DENSE, "kv_write", 1);
	cr_assert_not_null(w);
	cr_expect_eq(w->op.u.ew.tokens, 8 * 2049);
	cr_expect_eq(w->op.u.ew.hidden, 8 * 128);
}

/* The lean engine's decode of one sequence: the halves of a one-row
 * gate-up output are contiguous, so SiLU and the product run vectorized;
 * at 8 rows they are strided views. */
Test(graph_engine, torch_one_row_is_contiguous)
{
	struct llmsim_model m;
	build("llama-3.1-8b", LLMSIM_ENGINE_TORCH, NULL, 1, 513, 1, &m);
	cr_expect_eq(nth(LLMSIM_SEC_DENSE, "silu_mul", 0)->op.u.ew.strided, 0);
	cr_expect_eq(nth(LLMSIM_SEC_DENSE, "silu_mul", 1)->op.u.ew.strided, 0);
	build("llama-3.1-8b", LLMSIM_ENGINE_TORCH, NULL, 8, 513, 8, &m);
	cr_expect_eq(nth(LLMSIM_SEC_DENSE, "silu_mul", 0)->op.u.ew.strided, 1);
}

/* Qwen3's per-head norms in the lean engine: each a strided copy of the
 * head view (T x heads x 128), then one norm row per head: 512 tokens x 32
 * query heads = 16384 rows, x 4 key heads = 2048 rows, of 128. */
Test(graph_engine, torch_qk_norm)
{
	struct llmsim_model m;
	static struct llmsim_prefill_chunk ch = {.tokens = 512, .context = 0, .count = 1};
	build("qwen3-30b-a3b", LLMSIM_ENGINE_TORCH, &ch, 0, 0, 1, &m);
	const enum llmsim_gsec L = LLMSIM_SEC_MOE;
	cr_expect_eq(count_named(L, "q_norm"), 2);
	const struct llmsim_gnode *cp = nth(L, "q_norm", 0), *qn = nth(L, "q_norm", 1);
	cr_expect_eq(cp->op.u.ew.kind, LLMSIM_EW_COPY);
	cr_expect_eq(cp->op.u.ew.strided, 1);
	cr_expect_eq(cp->op.u.ew.hidden, 32 * 128);
	cr_expect_eq(qn->op.u.ew.kind, LLMSIM_EW_RMSNORM);
	cr_expect_eq(qn->op.u.ew.tokens, 512 * 32);
	cr_expect_eq(qn->op.u.ew.hidden, 128);
	cr_expect_eq(nth(L, "k_norm", 1)->op.u.ew.tokens, 512 * 4);
}

/* MoE routing as steps_lean.py runs it, Mixtral decode of one token: the
 * top 2 of 8 gate logits, a softmax over the 2 in fp32, a sort of the 1 x
 * 2 slots' expert ids, the 2 rows permuted, the experts as grouped GEMMs
 * of 2 rows over 8 experts (gate-up 2 x 14336 wide, down back to 4096),
 * the rows scaled by their weights (a broadcast) and added into the token
 * (index_add_ of 2 rows of 4096). */
Test(graph_engine, torch_moe_routing)
{
	struct llmsim_model m;
	build("mixtral-8x7b", LLMSIM_ENGINE_TORCH, NULL, 1, 513, 1, &m);
	const enum llmsim_gsec L = LLMSIM_SEC_MOE;
	const struct llmsim_gnode *t = nth(L, "router_topk", 0);
	cr_assert_not_null(t);
	cr_expect_eq(t->op.u.ew.kind, LLMSIM_EW_TOPK);
	cr_expect_eq(t->op.u.ew.hidden, 8);
	cr_expect_eq(t->op.u.ew.k, 2);
	cr_expect_eq(nth(L, "router_softmax", 1)->op.dtype, LLMSIM_DT_FP32);
	cr_expect_eq(nth(L, "router_softmax", 1)->op.u.ew.hidden, 2);
	const struct llmsim_gnode *s = nth(L, "moe_permute", 0);
	cr_expect_eq(s->op.u.ew.kind, LLMSIM_EW_SORT);
	cr_expect_eq(s->op.u.ew.tokens, 2);
	cr_expect_eq(nth(L, "moe_permute", 2)->op.u.ew.kind, LLMSIM_EW_GATHER);
	const struct llmsim_gnode *gu = nth(L, "experts.gate_up_proj", 0);
	cr_assert_not_null(gu);
	cr_expect_eq(gu->op.u.gemm.m, 2);
	cr_expect_eq(gu->op.u.gemm.n, 2 * 14336);
	cr_expect_eq(gu->op.u.gemm.k, 4096);
	cr_expect_eq(gu->op.u.gemm.groups, 8);
	cr_expect_eq(nth(L, "experts.down_proj", 0)->op.u.gemm.groups, 8);
	/* SiLU and the product on the halves of a 2-row output: strided */
	cr_expect_eq(nth(L, "experts.silu_mul", 0)->op.u.ew.strided, 1);
	const struct llmsim_gnode *w = nth(L, "moe_combine", 2);
	cr_expect_eq(w->op.u.ew.kind, LLMSIM_EW_MUL);
	cr_expect(w->op.u.ew.bcast);
	const struct llmsim_gnode *ia = nth(L, "moe_combine", 4);
	cr_expect_eq(ia->op.u.ew.kind, LLMSIM_EW_SCATTER_ADD);
	cr_expect_eq(ia->op.u.ew.tokens, 2);
	cr_expect_eq(ia->op.u.ew.hidden, 4096);
	/* no softmax over all 8 logits (the fused engine's router) */
	cr_expect_eq(count_named(L, "router_softmax"), 2);
}

/* The busy load of infer: each phase priced inside the load of its own
 * steps back to back, its duty its kernels' share of its wall time at the
 * burst clock (a CUDA graph: kernels / (kernels + gaps)); lone: none. */
Test(graph_engine, infer_prices_each_phase_in_its_own_load)
{
	struct llmsim_model m;
	struct llmsim_gpu g;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load("llama-3.1-8b", &m, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &g, &e), 0, "%s", e.msg);
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, &m, &g);
	llmsim_infer_cfg_engine(&cfg, LLMSIM_ENGINE_TORCH);
	struct llmsim_infer_req req = {.batch = 4, .prompt = 2048, .output = 2};
	struct llmsim_infer_result busy, lone;
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &busy, &e), 0, "%s", e.msg);
	cfg.load = LLMSIM_LOAD_LONE;
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &lone, &e), 0, "%s", e.msg);
	cr_expect_eq(lone.prefill.cost.load_duty, 0);
	for (int p = 0; p < 2; p++) {
		const struct llmsim_step_cost *b = p ? &busy.decode.cost : &busy.prefill.cost;
		const struct llmsim_step_cost *l = p ? &lone.decode.cost : &lone.prefill.cost;
		expect_close(b->load_duty, l->gpu_s / l->time_s, 1e-12);
		/* a graph: the gaps between kernels are the only idle time */
		expect_close(l->time_s, l->gpu_s + l->kernels * g.param[LLMSIM_PARAM_STEP_KERNEL_GAP_S],
			     1e-9);
	}
	/* the prefill (8192 tokens of GEMMs) runs slower than its burst under
	 * the power limit; the decode step does not */
	cr_expect_gt(busy.ttft_s, lone.ttft_s);
	cr_expect_lt(busy.prefill.cost.sm_clock_hz, lone.prefill.cost.sm_clock_hz);
}
