/*
 * test_train_llama3.c - the llama3 recipe's mechanisms (sim/train/
 * pp_layout.c, memory_rank.c): Megatron's schedules' chunk forwards in
 * flight rank by rank, the pipeline split with the embedding and the head
 * in a layer's slot each, FSDP's gradient memory, all-gather CP; and the
 * expert states under EP and ZeRO (issue 14, MoE training). Every expected
 * value is derived by hand in the comment beside it.
 */
#include <math.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "support.h"

/* Megatron's interleaved schedule, pp 16, v 8, 32 micro-batches (256 chunk
 * forwards per rank): rank r's warm-up is (16-r-1)*2 + 7*16 forwards, then
 * one more forward before the first backward; so the peak is warm-up + 1:
 * rank 1 28 + 112 + 1 = 141, rank 0 143. 1F1B (v 1), pp 4: rank r holds
 * pp - r: 4 on rank 0, 1 on the last. An even split's rank 0 is the closed
 * form p v + p - 1 chunks (Narayanan et al. 2021): pp 4, v 2: 11. */
Test(train_llama3, chunk_forwards_in_flight)
{
	expect_close(llmsim_train_pp_peak_inflight(16, 8, 32, 1, NULL), 141, 1e-12);
	expect_close(llmsim_train_pp_peak_inflight(16, 8, 32, 0, NULL), 143, 1e-12);
	expect_close(llmsim_train_pp_peak_inflight(4, 1, 8, 0, NULL), 4, 1e-12);
	expect_close(llmsim_train_pp_peak_inflight(4, 1, 8, 3, NULL), 1, 1e-12);
	expect_close(llmsim_train_pp_peak_inflight(4, 2, 8, 0, NULL), 11, 1e-12);
	/* fewer micro-batches than the warm-up: every forward is in flight
	 * (16 micro-batches x 8 chunks = 128 < 141) */
	expect_close(llmsim_train_pp_peak_inflight(16, 8, 16, 1, NULL), 128, 1e-12);
	/* fewer micro-batches than stages in 1F1B: m */
	expect_close(llmsim_train_pp_peak_inflight(4, 1, 2, 0, NULL), 2, 1e-12);
}

/* Weighted by the layers of each chunk. Rank 0 of Llama 3 405B's split
 * (chunk 0 the embedding alone, chunks 1-7 one layer each): the first 128
 * warm-up forwards are chunks 0..7 of micro-batches 0-15, the next 14 chunk
 * 0 of micro-batches 16-29; at that point 16 x 7 = 112 layers are held,
 * and every later forward of a layer chunk comes after a backward of one:
 * the peak stays 112. The last rank (chunks 0-6 a layer, chunk 7 the
 * head): warm-up 7 x 16 = 112 forwards, all of layers; then micro-batches
 * 0-15's head forwards, each followed by its own backward (no layers);
 * then micro-batch 16's chunk 0, a layer, before the first backward of a
 * layer chunk: 113. */
Test(train_llama3, layers_in_flight_per_rank)
{
	const double first[8] = {0, 1, 1, 1, 1, 1, 1, 1};
	const double last[8] = {1, 1, 1, 1, 1, 1, 1, 0};
	expect_close(llmsim_train_pp_peak_inflight(16, 8, 32, 0, first), 112, 1e-12);
	expect_close(llmsim_train_pp_peak_inflight(16, 8, 32, 15, last), 113, 1e-12);
}

/* A model on H100 in a new context. */
static struct llmsim_train_ctx *ctx_on_h100(const char *model, struct llmsim_model *m)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx = NULL;
	cr_assert_eq(llmsim_model_load(model, m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h100", &g, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_ctx_new(m, &g, &ctx, &err), 0, "%s", err.msg);
	return ctx;
}

static void llama3_cfg(struct llmsim_train_cfg *c, int gpus, int chunks)
{
	llmsim_train_cfg_init(c);
	c->gpus = gpus, c->tp = 8, c->pp = 16, c->cp = 1, c->dp = gpus / 128;
	c->zero = 2;
	c->recipe = LLMSIM_RECIPE_LLAMA3;
	c->schedule = LLMSIM_SCHED_INTERLEAVED;
	c->chunks = chunks;
	c->uneven_pp = 1;
	c->global_batch = 2048;
	c->seq = 8192;
	c->attn = LLMSIM_ATTN_FLASH2;
}

/* 126 layers + the embedding + the head = 128 slots. v 8: one slot a
 * chunk, virtual stage j*16 + r on rank r: rank 0 chunk 0 the embedding,
 * rank 15 chunk 7 (stage 127) the head; rank 0 and 15 hold 7 layers, the
 * rest 8. v 4: two slots a chunk: rank 0 chunk 0 the embedding and layer
 * 1, rank 15 chunk 3 (slots 126, 127) layer 126 and the head. */
Test(train_llama3, ends_take_a_layer_slot)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load("405b", &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.layers, 126);
	struct llmsim_train_cfg c;
	llama3_cfg(&c, 8192, 8);
	int e, h;
	cr_expect_eq(llmsim_train_pp_chunk_layers(&m, &c, 0, 0, &e, &h), 0);
	cr_expect(e && !h);
	cr_expect_eq(llmsim_train_pp_chunk_layers(&m, &c, 0, 1, &e, &h), 1);
	cr_expect(!e && !h);
	cr_expect_eq(llmsim_train_pp_chunk_layers(&m, &c, 15, 7, &e, &h), 0);
	cr_expect(!e && h);
	expect_close(llmsim_train_stage_layers(&m, &c), 8, 1e-12);
	llama3_cfg(&c, 8192, 4);
	cr_expect_eq(llmsim_train_pp_chunk_layers(&m, &c, 0, 0, &e, &h), 1);
	cr_expect(e && !h);
	cr_expect_eq(llmsim_train_pp_chunk_layers(&m, &c, 15, 3, &e, &h), 1);
	cr_expect(!e && h);
	cr_expect_eq(llmsim_train_pp_chunk_layers(&m, &c, 7, 2, &e, &h), 2);
	cr_expect(!e && !h);
}

/* Llama 3 405B, tp 8, pp 16, dp 64, v 8, ZeRO-2 (FSDP), 8192-token
 * sequences, micro-batch 1, 32 micro-batches; the fullest rank is 1.
 * One layer on one GPU: q and o 16384^2 each, k and v 16384 x 1024 each,
 * 570,425,344 / 8 = 71,303,168; the SwiGLU MLP 3 x 16384 x 53248 / 8 =
 * 327,155,712; two RMSNorms 32,768 (unsharded): 398,491,648; rank 1's 8
 * layers 3,187,933,184. FP32 gradients sharded over 64: 4 x that / 64 =
 * 199,245,824, plus one chunk's (a layer's) unsharded FP32 gradients in
 * their reduce-scatter, 4 x 398,491,648 = 1,593,966,592: 1,793,212,416.
 * bf16 weights held: 6,375,866,368; fp32 master, m, v: 12/64: 597,737,472.
 * A layer's activations per token at tp 8 with SP (bytes): RMSNorm input
 * and QKV input 2 x 4096, q + k 2 x (16 + 1) x 128 = 4352, v 256, attention
 * output 4096, flash's fp32 log-sum-exp 64, MLP norm input and fc1 input 2
 * x 4096, SwiGLU's two inputs and fc2's input 3 x 2 x 53248 / 8 = 39936:
 * 65,088 x 8192 tokens = 533,200,896, x 141 in flight = 75,181,326,336.
 * Buffers: 1 GB + p2p 4 x 2 x 8192 x 16384 / 8 = 134,217,728. No
 * fragmentation allowance. Total 85,082,360,320 < 85.52e9 (80 GiB). */
Test(train_llama3, fsdp_rank1_memory)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx = ctx_on_h100("405b", &m);
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	llama3_cfg(&c, 8192, 8);
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	const struct llmsim_train_mem *mm = &r.mem;
	cr_expect_eq(mm->pp_rank, 1);
	expect_close(mm->act_in_flight_layers, 141, 1e-12);
	expect_close(mm->act_per_layer_bytes, 533200896.0, 1e-9);
	expect_close(mm->activations_bytes, 75181326336.0, 1e-9);
	expect_close(mm->grad_transient_bytes, 1593966592.0, 1e-4);
	expect_close(mm->grads_bytes, 1793212416.0, 1e-4);
	expect_close(mm->weights_bytes, 6375866368.0, 1e-4);
	expect_close(mm->optimizer_bytes, 597737472.0, 1e-4);
	expect_close(mm->fragmentation_bytes, 0, 1e-12);
	expect_close(mm->total_bytes, 85082360320.0, 1e-4);
	cr_expect(r.gpu_fits);
	/* 16,384 GPUs: dp 128, 16 micro-batches: every chunk forward of the
	 * step in flight on rank 1 before its first backward, 16 x 8 = 128 */
	llama3_cfg(&c, 16384, 8);
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	expect_close(r.mem.act_in_flight_layers, 128, 1e-12);
	llmsim_train_ctx_free(ctx);
}

/* All-gather CP (Dubey et al. 2024 Sec. 3.3.2), cp 16 at 131,072 tokens:
 * K and V of the whole sequence, one KV head per TP rank of 128 dims, bf16:
 * 131072 x 2 x 128 x 2 = 67,108,864 bytes gathered forward, gathered again
 * backward and reduce-scattered; no ring. */
Test(train_llama3, cp_allgathers_kv)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx = ctx_on_h100("405b", &m);
	struct llmsim_train_cfg c;
	llama3_cfg(&c, 16384, 8);
	c.cp = 16, c.dp = 8, c.seq = 131072, c.global_batch = 128;
	static struct llmsim_graph gr;
	static struct llmsim_pred pred[LLMSIM_GRAPH_MAX];
	cr_assert_eq(llmsim_train_step_ops(ctx, &c, 0, &gr, pred, &err), 0, "%s", err.msg);
	int ag = 0, rs = 0, ring = 0;
	for (int i = 0; i < gr.n; i++) {
		const struct llmsim_gnode *n = &gr.node[i];
		if (n->sec != LLMSIM_SEC_DENSE)
			continue;
		if (!strcmp(n->name, "cp_ring"))
			ring++;
		if (!strcmp(n->name, "cp_allgather") || !strcmp(n->name, "cp_reducescatter")) {
			*(n->name[3] == 'a' ? &ag : &rs) += 1;
			expect_close(n->op.u.coll.bytes, 67108864.0, 1e-12);
			cr_expect_eq(n->op.u.coll.gpus, 16);
			cr_expect_eq(n->hides, -1);
		}
	}
	cr_expect_eq(ag, 2);
	cr_expect_eq(rs, 1);
	cr_expect_eq(ring, 0);
	llmsim_train_ctx_free(ctx);
}

/* Expert weights under EP and ZeRO (issue 14 item 4), Mixtral 8x7B, tp 1,
 * pp 1, ZeRO-1, megatron recipe. Per layer: attention q, o 4096^2 each, k,
 * v 4096 x 1024 each: 41,943,040; the router 4096 x 8 = 32,768; two norms
 * 8192; experts 8 x 3 x 4096 x 14336 = 1,409,286,144. Dense (replicated
 * over dp, sharded by ZeRO over dp): 32 layers' attention, routers and
 * norms 1,343,488,000 + the final norm 4096 + embedding and LM head 2 x
 * 32000 x 4096 = 262,144,000: 1,605,636,096. Experts: 32 x
 * 1,409,286,144 / ep 8 = 5,637,144,576 on a GPU, replicated over dp/ep and
 * sharded by ZeRO only over those. dp 8, ep 8: one replica of each expert
 * shard, its optimizer state whole: 12 x (1,605,636,096 / 8 +
 * 5,637,144,576) = 70,054,189,056; dp 16: over 2, 12 x (1,605,636,096 / 16
 * + 5,637,144,576 / 2) = 12 x 2,918,924,544 = 35,027,094,528. Weights
 * 2 x 7,242,780,672 either way. */
Test(train_llama3, expert_states_under_ep_and_zero)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx = ctx_on_h100("mixtral-8x7b", &m);
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.dp = 8, c.ep = 8, c.zero = 1, c.seq = 4096, c.global_batch = 64;
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	expect_close(r.mem.weights_bytes, 2 * 7242780672.0, 1e-6);
	expect_close(r.mem.optimizer_bytes, 70054189056.0, 1e-6);
	c.gpus = 16, c.dp = 16;
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	expect_close(r.mem.weights_bytes, 2 * 7242780672.0, 1e-6);
	expect_close(r.mem.optimizer_bytes, 35027094528.0, 1e-6);
	llmsim_train_ctx_free(ctx);
}

/* DualPipe's bubble (DeepSeek-V3 Table 2), (pp/2 - 1)(F&B + B - 3W): pp 16,
 * F&B 10, B 6, W 2: 7 x (10 + 6 - 6) = 70; two stages: none. */
Test(train_llama3, dualpipe_bubble)
{
	expect_close(llmsim_train_dualpipe_bubble_s(16, 10, 6, 2), 70, 1e-12);
	expect_close(llmsim_train_dualpipe_bubble_s(2, 10, 6, 2), 0, 1e-12);
}

/* DualPipe's memory (DeepSeek-V3 Table 2: the parameters twice, pp + 1
 * micro-batches of activations). Mixtral 8x7B, pp 4, dp 2, ep 2, 8
 * micro-batches: a stage is 8 layers; a DualPipe rank holds two stages,
 * rank 0 the first and the last with the embedding and the LM head: dense
 * 16 x (41,943,040 + 32,768 + 8,192) + 2 x 32000 x 4096 = 933,888,000
 * (and 16/32 of the final norm's 4096), experts 16 x 1,409,286,144 / 2 =
 * 11,274,289,152: bf16 weights 2 x 12,208,177,152 = 24,416,354,304.
 * Activations: 8 layers x (4 + 1) micro-batches = 40 layers in flight. */
Test(train_llama3, dualpipe_memory)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx = ctx_on_h100("mixtral-8x7b", &m);
	struct llmsim_train_cfg c;
	struct llmsim_train_result r;
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.pp = 4, c.dp = 2, c.ep = 2, c.seq = 4096, c.global_batch = 16;
	c.schedule = LLMSIM_SCHED_DUALPIPE;
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	expect_close(r.mem.weights_bytes, 24416354304.0, 1e-6);
	expect_close(r.mem.act_in_flight_layers, 40, 1e-12);
	/* an odd number of micro-batches is refused */
	c.global_batch = 14;
	cr_expect_eq(llmsim_train_check(&m, &c, NULL), LLMSIM_REJ_SCHEDULE);
	llmsim_train_ctx_free(ctx);
}

/* Node-limited routing (DeepSeek-V3 Sec. 2.1.2, 3.2.2): DeepSeek-V3, tp 1,
 * ep 64 over 8 H800 nodes, 4096 tokens a rank, bf16 activations. A token
 * goes to at most 4 nodes, and its 8 experts (drawn from the 4 nodes' 128)
 * fall on 4 x (1 - prod_{i<8} (96 - i)/(128 - i)) = 3.6290109 of them on
 * average (llmsim_graph_nodes_touched): the inter-node leg is an all-to-all
 * among the 8 nodes' peers of 4096 x 3.6290109 x 7168 x 2 = 213,096,450.5
 * bytes (the bound 4 would give 234,881,024); the NVLink leg
 * forwards the 8 slots a token among a node's 8 GPUs: 4096 x 8 x 7168 x 2
 * = 469,762,048. Mixtral (no limit) keeps one all-to-all over the group. */
Test(train_llama3, node_limited_dispatch)
{
	struct llmsim_model m;
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_model_load("deepseek-v3", &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.moe.max_nodes, 4);
	cr_assert_eq(llmsim_gpu_load("h800", &g, &err), 0, "%s", err.msg);
	cr_assert_eq(g.gpus_per_node, 8);
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &ctx, &err), 0, "%s", err.msg);
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.gpus = 64, c.dp = 64, c.ep = 64, c.seq = 4096, c.global_batch = 64;
	static struct llmsim_graph gr;
	static struct llmsim_pred pred[LLMSIM_GRAPH_MAX];
	cr_assert_eq(llmsim_train_step_ops(ctx, &c, 0, &gr, pred, &err), 0, "%s", err.msg);
	int ib = 0, nvl = 0;
	for (int i = 0; i < gr.n; i++) {
		const struct llmsim_gnode *n = &gr.node[i];
		if (n->sec != LLMSIM_SEC_MOE || n->phase != LLMSIM_PH_FWD)
			continue;
		if (!strcmp(n->name, "ep_dispatch")) {
			ib++;
			expect_close(n->op.u.coll.bytes, 213096450.5, 1e-8);
			cr_expect_eq(n->op.u.coll.gpus, 8);
			cr_expect_eq(n->op.u.coll.nodes, 8);
		} else if (!strcmp(n->name, "ep_dispatch.nvlink")) {
			nvl++;
			expect_close(n->op.u.coll.bytes, 469762048.0, 1e-12);
			cr_expect_eq(n->op.u.coll.gpus, 8);
			cr_expect_eq(n->op.u.coll.nodes, 1);
		}
	}
	cr_expect_eq(ib, 1);
	cr_expect_eq(nvl, 1);
	llmsim_train_ctx_free(ctx);
}

/* FSDP's reduce-scatter beside the pipeline (the llama3 recipe) against
 * the same ZeRO-2 reduction held to each micro-batch's own backward (the
 * megatron recipe): the same bytes, less of them exposed, and never none
 * (the last layer's after the last backward). */
Test(train_llama3, fsdp_reduce_scatter_overlaps_the_pipeline)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx = ctx_on_h100("405b", &m);
	struct llmsim_train_cfg c;
	struct llmsim_train_result fsdp, zero2;
	llama3_cfg(&c, 8192, 8);
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &fsdp, &err), 0, "%s", err.msg);
	c.recipe = LLMSIM_RECIPE_MEGATRON;
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &zero2, &err), 0, "%s", err.msg);
	cr_expect_gt(fsdp.time.dp_exposed_s, 0);
	cr_expect_lt(fsdp.time.dp_exposed_s, zero2.time.dp_exposed_s);
	llmsim_train_ctx_free(ctx);
}
