/*
 * test_train.c - the training model: ZeRO bytes per parameter, pipeline
 * bubble, activation memory against Korthikanti et al. 2022, communication
 * volumes per step, invariants, and configuration errors. Every expected
 * value is derived by hand from the paper formula named beside it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "sim/train/train_int.h"
#include "support.h"

/* A GPT-3 175B-like layer where Korthikanti's formulas apply exactly: MHA,
 * LayerNorm, GeLU MLP of 4h, dropout. s = 2048, h = 12288, a = 96. */
static void gpt_model(struct llmsim_model *m)
{
	memset(m, 0, sizeof *m);
	strcpy(m->name, "gpt-test");
	m->layers = 96;
	m->hidden = 12288;
	m->heads = 96;
	m->kv_heads = 96;
	m->head_dim = 128;
	m->vocab = 51200;
	m->intermediate = 4 * 12288;
	m->max_seq = 2048;
	m->attention = LLMSIM_ATTN_MHA;
	m->mlp = LLMSIM_MLP_PLAIN;
	m->activation = LLMSIM_ACT_GELU;
	m->norm = LLMSIM_NORM_LAYER;
	m->position = LLMSIM_POS_LEARNED;
	m->tied_embeddings = 1;
	m->linear_bias = 1;
}

static void cfg(struct llmsim_train_cfg *c, int tp, int sp, enum llmsim_recompute r,
		enum llmsim_attn_impl a)
{
	llmsim_train_cfg_init(c);
	c->seq = 2048;
	c->micro_batch = 1;
	c->tp = tp;
	c->gpus = tp;
	c->sequence_parallel = sp;
	c->recompute = r;
	c->attn = a;
}

/* ZeRO paper (Rajbhandari et al. 2020) Section 3: 2 + 2 + K with K = 12
 * (recipe zero): 16, 4 + 12/N, 2 + 14/N, 16/N. */
Test(train, zero_paper_bytes_per_param)
{
	double w, g, o;
	const int n = 64;
	llmsim_train_state_bytes(LLMSIM_RECIPE_ZERO, 0, n, &w, &g, &o);
	expect_close(w + g + o, 16.0, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_ZERO, 1, n, &w, &g, &o);
	expect_close(w + g + o, 4.0 + 12.0 / n, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_ZERO, 2, n, &w, &g, &o);
	expect_close(w + g + o, 2.0 + 14.0 / n, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_ZERO, 3, n, &w, &g, &o);
	expect_close(w + g + o, 16.0 / n, 1e-12);
}

/* AMP: fp32 weights 4 + fp32 grads 4 + Adam m, v 8 = 16; stage 1 shards
 * the 8 of m, v; stage 2 also the 4 of grads; stage 3 everything. */
Test(train, amp_bytes_per_param)
{
	double w, g, o;
	const int n = 8;
	llmsim_train_state_bytes(LLMSIM_RECIPE_AMP, 0, n, &w, &g, &o);
	expect_close(w + g + o, 16.0, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_AMP, 1, n, &w, &g, &o);
	expect_close(w + g + o, 8.0 + 8.0 / n, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_AMP, 2, n, &w, &g, &o);
	expect_close(w + g + o, 4.0 + 12.0 / n, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_AMP, 3, n, &w, &g, &o);
	expect_close(w + g + o, 16.0 / n, 1e-12);
}

/* Megatron: bf16 2 + fp32 grads 4 + master/m/v 12 = 18; the distributed
 * optimizer (ZeRO-1) gives 6 + 12/d (Megatron-LM docs). */
Test(train, megatron_bytes_per_param)
{
	double w, g, o;
	llmsim_train_state_bytes(LLMSIM_RECIPE_MEGATRON, 0, 32, &w, &g, &o);
	expect_close(w + g + o, 18.0, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_MEGATRON, 1, 32, &w, &g, &o);
	expect_close(w + g + o, 6.0 + 12.0 / 32, 1e-12);
	llmsim_train_state_bytes(LLMSIM_RECIPE_MEGATRON, 3, 32, &w, &g, &o);
	expect_close(w + g + o, 18.0 / 32, 1e-12);
}

/* Narayanan et al. 2021: bubble (p-1)/m; interleaved (p-1)/(v m). */
Test(train, bubble_fraction)
{
	expect_close(llmsim_train_bubble_fraction(8, 1, 64, LLMSIM_SCHED_1F1B), 7.0 / 64, 1e-12);
	expect_close(llmsim_train_bubble_fraction(8, 3, 64, LLMSIM_SCHED_INTERLEAVED),
		     7.0 / 192, 1e-12);
	expect_close(llmsim_train_bubble_fraction(1, 1, 64, LLMSIM_SCHED_1F1B), 0, 1e-12);
}

/* Korthikanti et al. 2022, Table 2 (bytes per layer, s b h units). */
Test(train, activations_korthikanti_table2)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	gpt_model(&m);
	double s = 2048, b = 1, h = 12288, a = 96, t = 8;
	double sbh = s * b * h;

	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_NAIVE); /* no parallelism */
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1), sbh * (34 + 5 * a * s / h), 1e-12);

	cfg(&c, 8, 0, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_NAIVE); /* tensor parallel */
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1),
		     sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1e-12);

	cfg(&c, 8, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_NAIVE); /* TP + SP */
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1),
		     sbh * (34 / t + 5 * a * s / (h * t)), 1e-12);

	cfg(&c, 8, 1, LLMSIM_RECOMP_SELECTIVE, LLMSIM_ATTN_NAIVE); /* TP + SP + selective */
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1), sbh * 34 / t, 1e-12);

	cfg(&c, 8, 0, LLMSIM_RECOMP_SELECTIVE, LLMSIM_ATTN_NAIVE); /* TP + selective */
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1), sbh * (10 + 24 / t), 1e-12);

	cfg(&c, 1, 1, LLMSIM_RECOMP_FULL, LLMSIM_ATTN_NAIVE); /* full: the layer input */
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1), 2 * sbh, 1e-12);

	/* FlashAttention drops 5as/h and keeps the fp32 log-sum-exp per row
	 * and head: 4 bytes * (a/t) * s * b. */
	cfg(&c, 8, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 1),
		     sbh * 34 / t + 4 * (a / t) * s * b, 1e-12);

	/* No dropout (Llama-style training): the masks (1 sbh each in the
	 * attention and MLP blocks) go, and the softmax output is reused
	 * (2as^2b instead of 5as^2b). */
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_NAIVE);
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 0), sbh * (32 + 2 * a * s / h), 1e-12);
}

/* GQA and gated MLP: Q is a*d, K and V are kv*d each; the MLP saves the
 * gate and up outputs and the down input: 3 * 2 bytes * s*b*f. */
Test(train, activations_gqa_gated)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	gpt_model(&m);
	m.hidden = 8192, m.heads = 64, m.kv_heads = 8, m.head_dim = 128;
	m.intermediate = 28672, m.mlp = LLMSIM_MLP_GATED;
	cfg(&c, 1, 1, LLMSIM_RECOMP_SELECTIVE, LLMSIM_ATTN_FLASH2);
	double s = 2048, h = 8192, f = 28672, q = 64 * 128, kv = 8 * 128;
	/* attention: norm in 2h + qkv in 2h + q,k 2(q+kv) + v 2kv + out in 2q;
	 * MLP: norm in 2h + fc1 in 2h + 6f (no dropout) */
	double per_token = 2 * h + 2 * h + 2 * (q + kv) + 2 * kv + 2 * q + 2 * h + 2 * h + 6 * f;
	expect_close(llmsim_train_act_layer_bytes(&m, &c, 0, 0), s * per_token, 1e-12);
}

static struct llmsim_gpu *h200(void)
{
	static struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &g, &err), 0, "%s", err.msg);
	return &g;
}

static void simulate(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
		     struct llmsim_train_result *r)
{
	struct llmsim_train_ctx *ctx;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_train_ctx_new(m, h200(), &ctx, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_simulate(ctx, c, r, &err), 0, "%s", err.msg);
	llmsim_train_ctx_free(ctx);
}

/* TP without SP (Megatron f/g): 2 all-reduces of s*b*h (2 bytes) forward
 * and 2 backward per layer; the head adds one forward (vocab-parallel
 * embedding) and one backward (LM-head input) all-reduce of the same size
 * and a small fp32 one for the loss (3 * s*b*4 bytes). A ring all-reduce
 * sends 2(t-1)/t of the buffer per rank (one node of 8). */
Test(train, tp_comm_volume)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	gpt_model(&m);
	cfg(&c, 8, 0, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.global_batch = 1;
	simulate(&m, &c, &r);
	double t = 8, S = 2048.0 * 12288 * 2, ring = 2 * (t - 1) / t;
	double expect = (4.0 * m.layers + 2) * ring * S + ring * 3 * 2048 * 4;
	expect_close(r.comm.tp_bytes, expect, 1e-3);
	expect_close(r.comm.tp_msg_bytes, S, 1e-12);
}

/* DP (ZeRO-0): one all-reduce of the gradients, Psi params x 4 bytes
 * (fp32 main grads), ring: 2 Psi (N-1)/N elements per rank. Psi from the
 * models module's parameter count. */
Test(train, dp_comm_volume)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	struct llmsim_params p;
	gpt_model(&m);
	m.layers = 8; /* keep it small: 8 layers of GPT-3 width */
	llmsim_model_params(&m, &p);
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.dp = 8, c.gpus = 8, c.global_batch = 8;
	simulate(&m, &c, &r);
	double n = 8;
	expect_close(r.comm.dp_bytes, 2 * p.total * 4 * (n - 1) / n, 1e-9);
}

/* ZeRO-3 moves 3 Psi per step (ZeRO paper Section 7.2: all-gather forward,
 * all-gather backward, reduce-scatter of gradients, 16-bit each); each
 * collective sends (N-1)/N of its buffer. Psi here: the transformer
 * layers (attention + MLP + norms); embeddings are not gathered per
 * layer. One micro-batch. */
Test(train, zero3_comm_volume)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	struct llmsim_params p;
	gpt_model(&m);
	m.layers = 8;
	llmsim_model_params(&m, &p);
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.dp = 8, c.gpus = 8, c.global_batch = 8, c.zero = 3;
	c.recipe = LLMSIM_RECIPE_ZERO;
	simulate(&m, &c, &r);
	double n = 8, psi = p.attention + p.mlp_dense + p.norms;
	expect_close(r.comm.zero3_bytes, 3 * psi * 2 * (n - 1) / n, 1e-9);
}

/* More GPUs never raise per-GPU weight memory (TP, PP, ZeRO-3 over DP). */
Test(train, more_gpus_less_weight_memory)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	gpt_model(&m);
	double prev = 1e300;
	for (int tp = 1; tp <= 8; tp *= 2) {
		cfg(&c, tp, 1, LLMSIM_RECOMP_FULL, LLMSIM_ATTN_FLASH2);
		c.global_batch = 1;
		simulate(&m, &c, &r);
		cr_expect(r.mem.weights_bytes <= prev, "tp %d raised weights", tp);
		prev = r.mem.weights_bytes;
	}
	for (int pp = 2; pp <= 8; pp *= 2) {
		cfg(&c, 8, 1, LLMSIM_RECOMP_FULL, LLMSIM_ATTN_FLASH2);
		c.pp = pp, c.gpus = 8 * pp, c.global_batch = 8;
		simulate(&m, &c, &r);
		cr_expect(r.mem.weights_bytes <= prev, "pp %d raised weights", pp);
		prev = r.mem.weights_bytes;
	}
	prev = 1e300;
	for (int dp = 1; dp <= 64; dp *= 2) {
		cfg(&c, 1, 1, LLMSIM_RECOMP_FULL, LLMSIM_ATTN_FLASH2);
		c.dp = dp, c.gpus = dp, c.zero = 3, c.global_batch = 64;
		simulate(&m, &c, &r);
		cr_expect(r.mem.weights_bytes <= prev, "zero-3 dp %d raised weights", dp);
		prev = r.mem.weights_bytes;
	}
}


/* Pipeline bubble in the step breakdown equals (p-1)/(v m) of the
 * per-micro-batch time when nothing else differs. */
Test(train, step_bubble_matches_formula)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	gpt_model(&m);
	cfg(&c, 8, 1, LLMSIM_RECOMP_SELECTIVE, LLMSIM_ATTN_FLASH2);
	c.pp = 8, c.gpus = 64, c.global_batch = 64, c.schedule = LLMSIM_SCHED_INTERLEAVED,
	c.chunks = 3;
	simulate(&m, &c, &r);
	double per_mb = r.time.fwd_mb_s + r.time.bwd_mb_s;
	expect_close(r.time.bubble_s, 7.0 / 3.0 * per_mb, 1e-12);
	expect_close(r.time.bubble_s / (r.microbatches * per_mb),
		     llmsim_train_bubble_fraction(8, 3, 64, LLMSIM_SCHED_INTERLEAVED), 1e-12);
}

Test(train, bad_configurations)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_err err = {0};
	gpt_model(&m);
	cfg(&c, 8, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.gpus = 16;
	cr_expect_eq(llmsim_train_check(&m, &c, &err), LLMSIM_REJ_GPUS);
	cfg(&c, 5, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2); /* 96 heads */
	cr_expect_eq(llmsim_train_check(&m, &c, &err), LLMSIM_REJ_HEADS);
	cr_expect(strstr(err.msg, "heads") != NULL, "%s", err.msg);
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.pp = 5, c.gpus = 5, c.global_batch = 10; /* 96 layers */
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_LAYERS);
	c.uneven_pp = 1;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_NONE);
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.dp = 4, c.gpus = 4, c.global_batch = 6;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_BATCH);
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.cp = 3, c.gpus = 3;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_SEQ);
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.ep = 2, c.dp = 2, c.gpus = 2;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_EXPERTS);
	/* several violations: all of them reported */
	cfg(&c, 5, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.pp = 5, c.gpus = 7;
	memset(&err, 0, sizeof err);
	llmsim_train_check(&m, &c, &err);
	cr_expect(strstr(err.msg, "gpus") && strstr(err.msg, "heads") && strstr(err.msg, "layers"),
		  "%s", err.msg);
	/* a single GPU is valid */
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_NONE);
}

/* Expert parallelism: per MoE layer and micro-batch, a dispatch and a
 * combine all-to-all forward and their transposes backward (4), each of
 * the T * top_k routed token copies (h values, 2 bytes) on this rank; an
 * all-to-all over p ranks sends (p-1)/p of its buffer. Mixtral 8x7B: 32
 * MoE layers, top-2, h = 4096; ep = 8 in one node, tp = 1, T = 4096. */
Test(train, ep_comm_volume)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load("mixtral-8x7b", &m, &err), 0, "%s", err.msg);
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.dp = 8, c.ep = 8, c.zero = 1, c.seq = 4096, c.global_batch = 16;
	simulate(&m, &c, &r);
	double T = 4096, per_layer = 4 * (7.0 / 8) * T * 2 * 4096 * 2;
	expect_close(r.comm.ep_bytes, r.microbatches * 32 * per_layer, 1e-9);
	cr_expect_eq(r.microbatches, 2);
	cr_expect(r.time.ep_exposed_s > 0);
	/* the busiest expert at 1.5x the mean load: slower, same model FLOPs */
	struct llmsim_train_result r2;
	c.moe_imbalance = 1.5;
	simulate(&m, &c, &r2);
	cr_expect(r2.time.compute_s > r.time.compute_s);
	expect_close(r2.model_flops, r.model_flops, 1e-3);
}

/* Context parallelism splits the sequence: activations per layer fall by
 * cp (flash attention, no TP), and the ring passes (cp-1) KV blocks
 * forward and (cp-1) KV + dKV blocks backward. */
Test(train, cp_activations_and_ring)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r1, r4;
	gpt_model(&m);
	m.layers = 8;
	cfg(&c, 1, 1, LLMSIM_RECOMP_NONE, LLMSIM_ATTN_FLASH2);
	c.global_batch = 1;
	simulate(&m, &c, &r1);
	c.cp = 4, c.gpus = 4;
	simulate(&m, &c, &r4);
	expect_close(r4.mem.act_per_layer_bytes, r1.mem.act_per_layer_bytes / 4, 1e-12);
	double blk = 1.0 * (2048 / 4) * (2 * 96 * 128) * 2; /* b * s/cp * 2 kv * bytes */
	expect_close(r4.comm.cp_bytes, 8 * 3 * 3 * blk, 1e-12);
}

/* ---- offload: ZeRO-Offload (Ren et al. 2021) / ZeRO-Infinity ---- */

/* Bytes per parameter by hand. Optimizer offload keeps 16-bit weights (2)
 * and 16-bit gradients (2) on the GPU whatever the recipe (DeepSpeed
 * reduces 16-bit gradients), and fp32 master 4 + m 4 + v 4 + fp32 grad 4
 * = 16 on the host, 1/n of it per rank. ZeRO-2 shards the GPU gradients,
 * ZeRO-3 the weights; params offload moves the weights to the host (+2). */
Test(train, offload_bytes_per_param)
{
	double w, g, o, h;
	llmsim_train_offload_bytes(LLMSIM_RECIPE_MEGATRON, 1, LLMSIM_OFFLOAD_OPTIMIZER, 1, &w, &g,
				   &o, &h);
	expect_close(w, 2, 1e-12);
	expect_close(g, 2, 1e-12);
	cr_expect_eq(o, 0);
	expect_close(h, 16, 1e-12);
	llmsim_train_offload_bytes(LLMSIM_RECIPE_MEGATRON, 2, LLMSIM_OFFLOAD_OPTIMIZER, 8, &w, &g,
				   &o, &h);
	expect_close(w, 2, 1e-12);
	expect_close(g, 2.0 / 8, 1e-12);
	expect_close(h, 16.0 / 8, 1e-12);
	llmsim_train_offload_bytes(LLMSIM_RECIPE_ZERO, 3, LLMSIM_OFFLOAD_OPTIMIZER, 8, &w, &g, &o,
				   &h);
	expect_close(w, 2.0 / 8, 1e-12);
	expect_close(g, 2.0 / 8, 1e-12);
	expect_close(h, 16.0 / 8, 1e-12);
	llmsim_train_offload_bytes(LLMSIM_RECIPE_MEGATRON, 3, LLMSIM_OFFLOAD_PARAMS, 8, &w, &g, &o,
				   &h);
	cr_expect(w == 0 && g == 0 && o == 0);
	expect_close(h, 18.0 / 8, 1e-12);
	/* none: the recipe's own bytes (megatron 2 + 4 + 12), nothing on the host */
	llmsim_train_offload_bytes(LLMSIM_RECIPE_MEGATRON, 0, LLMSIM_OFFLOAD_NONE, 1, &w, &g, &o,
				   &h);
	cr_expect(w == 2 && g == 4 && o == 12 && h == 0);
}

static void sim8b(const char *model, struct llmsim_train_cfg *c, struct llmsim_train_result *r,
		  double *params, struct llmsim_gpu *gpu)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx;
	struct llmsim_params p;
	cr_assert_eq(llmsim_model_load(model, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h200", gpu, &err), 0, "%s", err.msg);
	llmsim_model_params(&m, &p);
	*params = p.total;
	cr_assert_eq(llmsim_train_ctx_new(&m, gpu, &ctx, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_simulate(ctx, c, r, &err), 0, "%s", err.msg);
	llmsim_train_ctx_free(ctx);
}

/* 8B on 8 GPUs, tp 1 pp 1 dp 8, global batch 64, micro-batch 1: m = 8
 * micro-batches; every rank updates P/8 parameters. */
Test(train, offload_pcie_bytes_and_cpu_adam)
{
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	struct llmsim_gpu g;
	double P;
	llmsim_train_cfg_init(&c);
	c.gpus = c.dp = 8, c.global_batch = 64, c.seq = 2048, c.recompute = LLMSIM_RECOMP_FULL;
	c.zero = 2, c.offload = LLMSIM_OFFLOAD_OPTIMIZER;
	sim8b("8b", &c, &r, &P, &g);
	/* ZeRO-2: each micro-batch's 16-bit gradient shard goes down (the host
	 * accumulates in fp32): 8 x 2 B x P/8 = 2P; the updated 16-bit shard
	 * comes up once: 2 B x P/8 */
	expect_close(r.comm.pcie_down_bytes, 2 * P, 1e-9);
	expect_close(r.comm.pcie_up_bytes, 2 * P / 8, 1e-9);
	/* GPU: 16-bit weights 2P, gradients 2P/8, no optimizer state */
	expect_close(r.mem.weights_bytes, 2 * P, 1e-9);
	expect_close(r.mem.grads_bytes, 2 * P / 8, 1e-9);
	cr_expect_eq(r.mem.optimizer_bytes, 0);
	/* host: 8 ranks x (16 B x P/8 + 4 GB) */
	expect_close(r.mem.host_per_node_bytes, 16 * P + 8 * 4e9, 1e-9);
	/* CPU Adam over the node's P parameters: 112 cores x 2.9e7 params/s
	 * (below the DRAM bound 614.4 GB/s / 30 B = 2.05e10 params/s) */
	expect_close(r.time.cpu_adam_s, P / (112 * 2.9e7), 1e-9);
	/* PCIe at 80% of 64 GB/s (one GPU per link; DRAM 614.4/8 = 76.8 GB/s
	 * per rank is not the bound): up 2P/8 bytes */
	expect_close(r.time.pcie_up_s, 2 * P / 8 / (0.8 * 64e9), 1e-9);
	/* without DPU the CPU step and the upload are exposed in full */
	cr_expect_geq(r.time.offload_s, r.time.cpu_adam_s + r.time.pcie_up_s - 1e-12);
	cr_expect_eq(r.time.optimizer_s, 0);
	cr_expect(r.fits && r.host_fits && r.gpu_fits);

	/* ZeRO-Infinity: per micro-batch, the layer shards come up in forward
	 * and again in backward: 8 x 2 x 2 B x P/8 = 4P; gradients as above */
	c.zero = 3, c.offload = LLMSIM_OFFLOAD_PARAMS;
	sim8b("8b", &c, &r, &P, &g);
	expect_close(r.comm.pcie_up_bytes, 4 * P, 1e-9);
	expect_close(r.comm.pcie_down_bytes, 2 * P, 1e-9);
	cr_expect(r.mem.weights_bytes == 0 && r.mem.grads_bytes == 0 && r.mem.optimizer_bytes == 0);
	expect_close(r.mem.host_per_node_bytes, 18 * P + 8 * 4e9, 1e-9);

	/* DPU hides the CPU step behind the next step's compute */
	c.dpu = 1;
	struct llmsim_train_result d;
	sim8b("8b", &c, &d, &P, &g);
	/* DPU: the CPU step overlaps the next step's GPU time (the step less
	 * its offload part); only the excess stays exposed */
	double gpu_s = r.time.step_s - r.time.offload_s;
	expect_close(d.time.offload_s,
		     r.time.offload_s - r.time.cpu_adam_s + fmax(0, r.time.cpu_adam_s - gpu_s), 1e-9);
	cr_expect_lt(d.time.offload_s, r.time.offload_s);
}

/* 405B, ZeRO-Infinity on one node: 18 B x 405 B params = 7.3 TB > 2 TB of
 * host memory, while the GPUs hold only working buffers: host OOM. */
Test(train, offload_host_out_of_memory)
{
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	struct llmsim_gpu g;
	double P;
	llmsim_train_cfg_init(&c);
	c.gpus = c.dp = 8, c.global_batch = 64, c.recompute = LLMSIM_RECOMP_FULL;
	c.zero = 3, c.offload = LLMSIM_OFFLOAD_PARAMS;
	sim8b("405b", &c, &r, &P, &g);
	cr_expect(r.gpu_fits);
	cr_expect_not(r.host_fits);
	cr_expect_not(r.fits);
	expect_close(r.mem.host_per_node_bytes, 18 * P + 8 * 4e9, 1e-9);
	expect_close(r.mem.host_bytes, 2e12, 1e-12);
}

Test(train, offload_needs_zero_and_16bit_weights)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	llmsim_train_cfg_init(&c);
	c.gpus = c.dp = 8;
	c.offload = LLMSIM_OFFLOAD_OPTIMIZER; /* zero 0 */
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_OPTION);
	c.zero = 2, c.offload = LLMSIM_OFFLOAD_PARAMS;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_OPTION);
	c.zero = 3, c.recipe = LLMSIM_RECIPE_AMP;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_OPTION);
	c.recipe = LLMSIM_RECIPE_MEGATRON;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_NONE);
	c.offload = LLMSIM_OFFLOAD_NONE, c.dpu = 1;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_OPTION);
}

/* pp > 1: the first stage runs the embedding, the last the final norm,
 * LM head and loss; one micro-batch through the slowest stage is its
 * layers plus the slower end (not both ends, as one stage would). */
Test(train, pipeline_ends_are_separate_stages)
{
	struct llmsim_model m;
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx;
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	struct shape_cost sc;
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &g, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &ctx, &err), 0, "%s", err.msg);
	llmsim_train_cfg_init(&c);
	c.gpus = c.pp = 2, c.global_batch = 8, c.seq = 2048;
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(train_shape_cost(ctx, &c, &sc, &err), 0, "%s", err.msg);
	const struct layer_cost *E = &sc.emb, *H = &sc.head;
	cr_expect_gt(E->fwd_s, 0);
	cr_expect_gt(H->fwd_s, 0);
	const struct layer_cost *slow = E->fwd_s + E->bwd_s > H->fwd_s + H->bwd_s ? E : H;
	/* 32 layers / 2 stages, tp 1 (no TP collectives), one p2p send */
	expect_close(r.time.fwd_mb_s, 16 * sc.dense.fwd_s + slow->fwd_s + sc.p2p_s, 1e-9);
	llmsim_train_ctx_free(ctx);
}

/* GB200 NVL72: a TP group of 8 spans two trays of 4 but one NVLink domain,
 * so its all-reduces run at the NVLink rate; the same GPU with its domain
 * cut to the tray sends them over the network, and only its TP
 * communication grows (the bytes do not change). */
Test(train, tp_across_trays_of_an_nvlink_domain)
{
	struct llmsim_gpu rack, trays;
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("gb200", &rack, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_model_load("llama-3.1-70b", &m, &err), 0, "%s", err.msg);
	trays = rack;
	trays.nvlink_domain_gpus = trays.gpus_per_node;
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.seq = 4096;
	c.micro_batch = 1;
	c.global_batch = 8;
	c.tp = 8;
	c.gpus = 8;
	c.sequence_parallel = 1;
	struct llmsim_train_result r[2];
	const struct llmsim_gpu *g[2] = {&rack, &trays};
	for (int i = 0; i < 2; i++) {
		struct llmsim_train_ctx *ctx;
		cr_assert_eq(llmsim_train_ctx_new(&m, g[i], &ctx, &err), 0, "%s", err.msg);
		cr_assert_eq(llmsim_train_simulate(ctx, &c, &r[i], &err), 0, "%s", err.msg);
		llmsim_train_ctx_free(ctx);
	}
	expect_close(r[0].comm.tp_bytes, r[1].comm.tp_bytes, 1e-12);
	/* Per all-reduce of S bytes: in the rack one ring of 8 sends 2 x 7/8 S
	 * at 0.8 x 900 GB/s, 2.4e-12 S s; cut to trays, the part between the
	 * two trays alone sends S/4 over the 50 GB/s network, 5e-12 S s at
	 * its full rate: more than twice the whole ring in the rack */
	cr_expect_gt(r[1].time.tp_exposed_s, 2 * r[0].time.tp_exposed_s, "rack %g s, trays %g s",
		     r[0].time.tp_exposed_s, r[1].time.tp_exposed_s);
}
