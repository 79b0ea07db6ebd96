/*
 * test_train_torch.c - the torch engine (train --engine torch): the memory
 * timeline of a one-layer toy model counted by hand tensor by tensor, the
 * caching allocator's rules on hand-made request sequences, fused AdamW's
 * launches, checkpoint's early stop, the host's pace, and the engine's
 * configuration errors. Every expected number is derived in the comment
 * beside it from sim/graph_torch_train.c's description of the program
 * (what autograd saves) and PyTorch's sources, not from a run of the code.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "sim/train/train_int.h"
#include "support.h"

#define MIB (1024.0 * 1024.0)

static struct llmsim_gpu gpu;

static void load_gpu(void)
{
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, &err), 0, "%s", err.msg);
}

/* One Llama-style layer: h 1024, 8 heads of 128 (MHA), SwiGLU 2048, vocab
 * 32768, untied, RMSNorm, RoPE. Batch 1 x 1024 tokens: T = 1024. */
static void toy(struct llmsim_model *m)
{
	memset(m, 0, sizeof *m);
	strcpy(m->name, "toy");
	m->layers = 1;
	m->hidden = 1024;
	m->heads = 8;
	m->kv_heads = 8;
	m->head_dim = 128;
	m->vocab = 32768;
	m->intermediate = 2048;
	m->max_seq = 4096;
	m->attention = LLMSIM_ATTN_MHA;
	m->mlp = LLMSIM_MLP_GATED;
	m->activation = LLMSIM_ACT_SILU;
	m->norm = LLMSIM_NORM_RMS;
	m->position = LLMSIM_POS_ROPE;
}

static void simulate(const struct llmsim_model *m, enum llmsim_recompute rc, int64_t seq,
		     struct llmsim_train_result *r)
{
	struct llmsim_train_cfg c;
	struct llmsim_train_ctx *ctx;
	struct llmsim_err err = {0};
	llmsim_train_cfg_init(&c);
	c.seq = seq;
	c.recompute = rc;
	llmsim_train_cfg_torch(&c, &gpu);
	cr_assert_eq(llmsim_train_ctx_new(m, &gpu, &ctx, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_simulate(ctx, &c, r, &err), 0, "%s", err.msg);
	llmsim_train_ctx_free(ctx);
}

/*
 * The toy's peak, at log_softmax's backward (its gradient allocated while
 * nll_loss's zero gradient and log_softmax's saved output still live):
 * parameters: embedding and LM head 32768 x 1024 x 4 B = 134,217,728 each,
 *   q, k, v, o 4 x 1024^2 x 4 = 16,777,216, gate, up, down 3 x 2048 x 1024 x
 *   4 = 25,165,824, three norms 3 x 4096: 310,390,784; the RoPE cos and sin
 *   buffers 2 x 1024 x 64 x 4 = 524,288; ids and labels 2 x 1024 x 8 =
 *   16,384: 310,931,456.
 * optimizer: exp_avg and exp_avg_sq 2 x 310,390,784, 12 step counters of 4
 *   B: 620,781,616.
 * workspace: two cuBLAS workspaces of 32 MiB: 67,108,864. Gradients: none
 *   (zero_grad(set_to_none) ended the step before; the first comes at the
 *   LM head's weight gradient, after this point).
 * activations: the residual stream into the layer and into the head, 2 x
 *   1024 x 1024 x 4 = 8,388,608; the layer's saved tensors: attn_norm's
 *   rstd 4096; q, k, v's bf16 inputs 3 x 2,097,152; the bf16 copies of q, k,
 *   v, o 4 x 2,097,152 and of gate, up, down 3 x 4,194,304; the cos and sin
 *   rows of both RoPEs 4 x 131,072; the roped q, k and v 3 x 2,097,152;
 *   SDPA's output 2,097,152 and logsumexp 1024 x 8 x 4 = 32,768; the fp32
 *   stream after attention 4,194,304; mlp_norm's rstd 4096; gate and up's
 *   bf16 inputs 2 x 2,097,152; gate's, SiLU's, up's outputs and their
 *   product 4 x 4,194,304: 61,382,656; the head's: final_norm's rstd 4096,
 *   its bf16 input 2,097,152, its weight copy 67,108,864, log_softmax's
 *   output 1024 x 32768 x 4 = 134,217,728, nll_loss's zero gradient and
 *   log_softmax's gradient 2 x 134,217,728: 471,863,296. In all
 *   541,634,560.
 * Allocated blocks: every size a multiple of 512 B but the 12 counters,
 * 512 B blocks each: 12 x 508 = 6,096 more than the tensors.
 */
Test(train_torch, toy_peak_by_hand, .init = load_gpu)
{
	struct llmsim_model m;
	struct llmsim_train_result r;
	toy(&m);
	simulate(&m, LLMSIM_RECOMP_NONE, 1024, &r);
	const double *p = r.torch.at_peak_bytes;
	expect_close(p[LLMSIM_TORCH_MEM_PARAMS], 310931456.0, 0);
	expect_close(p[LLMSIM_TORCH_MEM_OPTIMIZER], 620781616.0, 0);
	expect_close(p[LLMSIM_TORCH_MEM_GRADS], 0.0, 0);
	expect_close(p[LLMSIM_TORCH_MEM_WORKSPACE], 67108864.0, 0);
	expect_close(p[LLMSIM_TORCH_MEM_ACTIVATIONS], 541634560.0, 0);
	cr_expect_str_eq(r.torch.peak_at, "log_softmax.bwd");
	cr_expect_eq(r.torch.peak_layer, -1);
	expect_close(r.torch.peak_allocated_bytes, 1540456496.0 + 6096.0, 0);
	/* the reserved segments hold at least the peak */
	cr_expect_geq(r.torch.reserved_bytes, r.torch.peak_allocated_bytes);
}

/* With torch.utils.checkpoint the layer keeps only its input during the
 * forward (its weight copies go when the forward leaves autocast), so at
 * the same point the layer's 61,382,656 saved bytes are not there:
 * 541,634,560 - 61,382,656 = 480,251,904 of activations. */
Test(train_torch, toy_checkpoint_peak, .init = load_gpu)
{
	struct llmsim_model m;
	struct llmsim_train_result r;
	toy(&m);
	simulate(&m, LLMSIM_RECOMP_FULL, 1024, &r);
	expect_close(r.torch.at_peak_bytes[LLMSIM_TORCH_MEM_ACTIVATIONS], 480251904.0, 0);
	cr_expect_str_eq(r.torch.peak_at, "log_softmax.bwd");
}

/*
 * Checkpoint's early stop: the recompute re-runs a layer's forward up to
 * down_proj's GEMM (its autograd node saves its inputs before the kernel
 * runs). The forward before it: attn_norm 1; q, k, v each a cast of the
 * input, of the weight and the GEMM, 9; each RoPE two table casts, four
 * multiplies, the difference, the sum, the concatenation, 18; SDPA 1;
 * o_proj's weight cast and GEMM 2; the residual add 1; mlp_norm 1; gate
 * and up 6; SiLU and the product 2; down_proj's weight cast 1: 42 kernels
 * a layer, 84 for two layers.
 */
Test(train_torch, early_stop_kernels, .init = load_gpu)
{
	struct llmsim_model m;
	struct llmsim_train_result none, full;
	toy(&m);
	m.layers = 2;
	simulate(&m, LLMSIM_RECOMP_NONE, 1024, &none);
	simulate(&m, LLMSIM_RECOMP_FULL, 1024, &full);
	expect_close(full.torch.kernels - none.torch.kernels, 84.0, 0);
}

/*
 * fused AdamW: launches of at most 320 chunks of 65536 elements (36
 * tensors). The toy's chunks in parameter order: embedding 512, attn_norm
 * 1, q k v o 16 each, mlp_norm 1, gate up down 32 each, final norm 1, head
 * 512: the 320th chunk falls in the embedding (launch 1), the 640th in
 * up_proj (2: 192 + 1 + 64 + 1 + 32 + 30), the 960th in the head (3: 2 + 32
 * + 1 + 285), the head's last 227 chunks make launch 4; then one launch of
 * the 12 step counters' += 1: 5.
 */
Test(train_torch, adam_launches, .init = load_gpu)
{
	struct llmsim_model m;
	struct llmsim_train_result r;
	toy(&m);
	simulate(&m, LLMSIM_RECOMP_NONE, 1024, &r);
	expect_close(r.torch.optimizer_launches, 5.0, 0);
}

/* A step of 16 tokens: every kernel takes microseconds, the host's 30.6 us
 * a launch (TRAIN_EAGER_HOST_S) sets the pace: the step takes at least its
 * launches' host time and at most that plus every kernel's time. */
Test(train_torch, host_pace, .init = load_gpu)
{
	struct llmsim_model m;
	struct llmsim_train_result r;
	toy(&m);
	simulate(&m, LLMSIM_RECOMP_NONE, 16, &r);
	cr_expect_geq(r.time.step_s, r.torch.kernels * 30.6e-6 * (1 - 1e-9));
	cr_expect_leq(r.time.step_s, r.torch.kernels * 30.6e-6 + r.torch.gpu_s);
	cr_expect_gt(r.torch.idle_s, 0.5 * r.time.step_s, "the GPU waits on the host");
}

/* PyTorch's SDPA: cuDNN's attention on Hopper (flash3), FA2 on Ampere. */
Test(train_torch, sdpa_by_arch, .init = load_gpu)
{
	struct llmsim_gpu a100;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("a100", &a100, &err), 0, "%s", err.msg);
	cr_expect_eq(llmsim_train_sdpa(&gpu), LLMSIM_ATTN_FLASH3);
	cr_expect_eq(llmsim_train_sdpa(&a100), LLMSIM_ATTN_FLASH2);
}

/*
 * The caching allocator, by CUDACachingAllocator.cpp's rules:
 *  1. 100 B: rounded to 512, small pool, a new 2 MiB segment;
 *  2. 1 MiB + 1: 1 MiB + 512 from the large pool; under 10 MiB: a 20 MiB
 *     segment, split (the rest, 19 MiB - 512, is over 1 MiB);
 *  3. 12 MiB + 1: 12 MiB + 512 from that free rest (a free block that
 *     holds it comes before a new segment), split again (7 MiB - 1024
 *     left); freed, it merges back: 19 MiB - 512 free;
 *  4. 13.5 MiB: from it, split (5.5 MiB - 512 left);
 *  5. 18 MiB: no free block holds it: a new segment of 18 MiB (over 10
 *     MiB: the request rounded up to 2 MiB), nothing left;
 *  6. 13.5 MiB freed (19 MiB - 512 free again), 18.5 MiB takes it whole,
 *     unsplit (0.5 MiB - 512 left, not over 1 MiB): 19 MiB - 512
 *     allocated.
 */
Test(train_torch, caching_allocator_rules)
{
	struct train_alloc a = {0};
	int b1 = train_alloc_malloc(&a, 100);
	expect_close(a.allocated, 512, 0);
	expect_close(a.reserved, 2 * MIB, 0);
	int b2 = train_alloc_malloc(&a, MIB + 1);
	expect_close(a.allocated, 1024 + MIB, 0);
	expect_close(a.reserved, 22 * MIB, 0);
	int b3 = train_alloc_malloc(&a, 12 * MIB + 1);
	expect_close(a.allocated, 1536 + 13 * MIB, 0);
	expect_close(a.reserved, 22 * MIB, 0);
	train_alloc_free(&a, b3);
	expect_close(a.allocated, 1024 + MIB, 0);
	int b4 = train_alloc_malloc(&a, 13.5 * MIB);
	expect_close(a.allocated, 1024 + 14.5 * MIB, 0);
	expect_close(a.reserved, 22 * MIB, 0);
	int b5 = train_alloc_malloc(&a, 18 * MIB);
	expect_close(a.allocated, 1024 + 32.5 * MIB, 0);
	expect_close(a.reserved, 40 * MIB, 0);
	train_alloc_free(&a, b4);
	int b6 = train_alloc_malloc(&a, 18.5 * MIB);
	expect_close(a.allocated, 1024 + 19 * MIB + 19 * MIB - 512, 0);
	expect_close(a.reserved, 40 * MIB, 0);
	expect_close(a.peak, a.allocated, 0);
	train_alloc_free(&a, b1);
	train_alloc_free(&a, b2);
	train_alloc_free(&a, b5);
	train_alloc_free(&a, b6);
	expect_close(a.allocated, 0, 0);
	expect_close(a.reserved, 40 * MIB, 0); /* segments are kept */
	cr_expect_eq(a.oom, 0);
	train_alloc_release(&a);
}

/* The torch program's limits, one line each. */
Test(train_torch, config_errors, .init = load_gpu)
{
	struct llmsim_model m;
	struct llmsim_train_cfg c;
	struct llmsim_err err = {0};
	toy(&m);
	llmsim_train_cfg_init(&c);
	llmsim_train_cfg_torch(&c, &gpu);
	c.tp = c.gpus = 2;
	cr_expect_eq(llmsim_train_check(&m, &c, &err), LLMSIM_REJ_OPTION);
	cr_expect(strstr(err.msg, "--engine torch runs on one GPU"), "%s", err.msg);
	llmsim_train_cfg_init(&c);
	llmsim_train_cfg_torch(&c, &gpu);
	c.recompute = LLMSIM_RECOMP_SELECTIVE;
	memset(&err, 0, sizeof err);
	cr_expect_eq(llmsim_train_check(&m, &c, &err), LLMSIM_REJ_OPTION);
	cr_expect(strstr(err.msg, "none or full"), "%s", err.msg);
	llmsim_train_cfg_init(&c);
	llmsim_train_cfg_torch(&c, &gpu);
	c.recipe = LLMSIM_RECIPE_MEGATRON;
	memset(&err, 0, sizeof err);
	cr_expect_eq(llmsim_train_check(&m, &c, &err), LLMSIM_REJ_OPTION);
	cr_expect(strstr(err.msg, "amp recipe"), "%s", err.msg);
}

/* The command line: the engine's result, its errors and the load/data
 * options spelled as `op` spells them. */
Test(train_torch, cli)
{
	char out[65536], err[4096];
	int rc = run_llmsim("train --model llama-3.2-1b --layers 2 --engine torch --seq 512 --json",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(json_parses(out));
	cr_expect(strstr(out, "\"peak_allocated_bytes\""), "%s", out);
	cr_expect(strstr(out, "\"engine\": \"torch\""), "%s", out);
	rc = run_llmsim("train --model llama-3.2-1b --layers 2 --engine torch --seq 512", out,
			sizeof out, err, sizeof err);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "peak allocated"), "%s", out);
	cr_expect(strstr(out, "reserved"), "%s", out);
	cr_expect(strstr(out, "load         busy"), "%s", out);
	rc = run_llmsim("train --model llama-3.2-1b --engine torch --tp 2 --gpus 2", out,
			sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	rc = run_llmsim("train --model mixtral-8x7b --engine torch", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "dense models"), "%s", err);
	rc = run_llmsim("train --model llama-3.2-1b --layers 99", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "--layers 99: llama-3.2-1b has 16 layers"), "%s", err);
	rc = run_llmsim("train --model llama-3.2-1b --operand-data ones", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "trained, random, grid, coarse or zeros"), "%s", err);
	rc = run_llmsim("train --model llama-3.2-1b --load busy:2", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 2);
	cr_expect_eq(count_lines(err), 1, "%s", err);
}
