/*
 * test_train_stack_mem.c - memory as the stacks hold it (issue 21, item 3):
 * recomputation by module (Megatron's names), full recomputation by uniform
 * or block method, activation offload to the host, Megatron-FSDP and FSDP2
 * with their buffers, the distributed optimizer over DP x CP, the
 * allowances of a stack, and "within the memory model's error of the
 * limit". Expected values are derived by hand in the comments from the
 * Korthikanti et al. 2022 terms of sim/train/memory.c.
 */
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/stack.h"
#include "sim/train/train.h"
#include "support.h"

static struct llmsim_model model(const char *name)
{
	struct llmsim_model m;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load(name, &m, &e), 0, "%s", e.msg);
	return m;
}

static struct llmsim_gpu gpu(const char *name)
{
	struct llmsim_gpu g;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_gpu_load(name, &g, &e), 0, "%s", e.msg);
	return g;
}

static struct llmsim_train_result sim(const struct llmsim_model *m, const struct llmsim_gpu *g,
				      const struct llmsim_train_cfg *c)
{
	struct llmsim_train_ctx *ctx;
	struct llmsim_train_result r;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_train_ctx_new(m, g, &ctx, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_train_simulate(ctx, c, &r, &e), 0, "%s", e.msg);
	llmsim_train_ctx_free(ctx);
	return r;
}

/* Llama 3.1 8B, tp 2 with SP, micro-batch 1, seq 4096, flash: a layer saves
 * (bytes, T = 4096 tokens, h 4096, I 14336, t 2):
 *   the MLP's own tensors: gate/up outputs and the SiLU-mul output, 3 x 2 x
 *   T x I / t; its input (the norm output) 2 T h / t;
 *   the norms' outputs: 2 T h / t each (attention, MLP). */
Test(stack_mem, recompute_modules_dense)
{
	struct llmsim_model m = model("8b");
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.gpus = 2, c.tp = 2;
	double T = 4096, h = m.hidden, I = m.intermediate, t = 2;
	double none = llmsim_train_act_layer_bytes(&m, &c, 0, 0);
	c.recompute = LLMSIM_RECOMP_MODULES;
	c.recompute_modules = 1u << LLMSIM_RM_MLP;
	expect_close(none - llmsim_train_act_layer_bytes(&m, &c, 0, 0), 3 * 2 * T * I / t, 1e-12);
	c.recompute_modules = 1u << LLMSIM_RM_LAYERNORM;
	expect_close(none - llmsim_train_act_layer_bytes(&m, &c, 0, 0), 2 * (2 * T * h / t), 1e-12);
	/* core_attn is selective recomputation (Korthikanti et al.'s) */
	c.recompute_modules = 1u << LLMSIM_RM_CORE_ATTN;
	double core = llmsim_train_act_layer_bytes(&m, &c, 0, 0);
	c.recompute = LLMSIM_RECOMP_SELECTIVE, c.recompute_modules = 0;
	expect_close(core, llmsim_train_act_layer_bytes(&m, &c, 0, 0), 1e-12);
	cr_expect(core < none);
}

/* Mixtral 8x7B (top 2, expert width 14336), ep 1, tp 1: moe_act drops the
 * activation's output of every routed token, 2 x T x top_k x I; moe keeps
 * only the layer's input. The recomputed modules run their forward again:
 * the step's hardware FLOPs exceed the model's. */
Test(stack_mem, recompute_modules_moe)
{
	struct llmsim_model m = model("mixtral-8x7b");
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	double T = 4096, I = m.moe.expert_intermediate;
	double none = llmsim_train_act_layer_bytes(&m, &c, 1, 0);
	c.recompute = LLMSIM_RECOMP_MODULES;
	c.recompute_modules = 1u << LLMSIM_RM_MOE_ACT;
	expect_close(none - llmsim_train_act_layer_bytes(&m, &c, 1, 0), 2 * T * m.moe.top_k * I,
		     1e-12);
	c.recompute_modules = 1u << LLMSIM_RM_MOE;
	double moe = llmsim_train_act_layer_bytes(&m, &c, 1, 0);
	cr_expect(moe < none - 2 * T * m.moe.top_k * I);

	struct llmsim_gpu g = gpu("h200");
	c.gpus = 8, c.tp = 8, c.global_batch = 8;
	c.recompute_modules = 1u << LLMSIM_RM_MOE_ACT;
	struct llmsim_train_result r = sim(&m, &g, &c);
	cr_expect(r.hw_flops > r.model_flops && r.hw_flops < 1.05 * r.model_flops,
		  "moe_act re-runs the experts' activation only: hw %g, model %g", r.hw_flops,
		  r.model_flops);
	/* both moe and moe_act: Megatron-Core refuses it */
	c.recompute_modules |= 1u << LLMSIM_RM_MOE;
	struct llmsim_err e = {0};
	cr_expect_neq(llmsim_train_check(&m, &c, &e), LLMSIM_REJ_NONE);
	cr_expect(strstr(e.msg, "moe already recomputes moe_act"), "%s", e.msg);
}

/* Full recomputation over 32 layers on one stage: uniform with 4 layers a
 * group keeps a group's input per 4 layers (a quarter of one layer's input
 * each) and re-materializes 4 whole layers at a time; block 8 keeps 8
 * layers' inputs and 24 layers whole and recomputes a quarter of the
 * forward. */
Test(stack_mem, recompute_method)
{
	struct llmsim_model m = model("8b");
	struct llmsim_gpu g = gpu("h200");
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.global_batch = 8;
	struct llmsim_train_result none = sim(&m, &g, &c);
	c.recompute = LLMSIM_RECOMP_FULL;
	struct llmsim_train_result one = sim(&m, &g, &c);
	c.recompute_layers = 4;
	struct llmsim_train_result uni = sim(&m, &g, &c);
	double input = 2.0 * 4096 * m.hidden;
	double whole = none.mem.act_per_layer_bytes;
	double logits = 4.0 * 4096 * m.vocab;
	expect_close(one.mem.activations_bytes, 32 * input + whole + logits, 1e-9);
	expect_close(uni.mem.activations_bytes, 32 * input / 4 + 4 * whole + logits, 1e-9);
	expect_close(uni.hw_flops, one.hw_flops, 1e-12);
	c.recompute_method = LLMSIM_RECOMP_BLOCK, c.recompute_layers = 8;
	struct llmsim_train_result blk = sim(&m, &g, &c);
	expect_close(blk.mem.activations_bytes, 8 * input + 24 * whole + whole + logits, 1e-9);
	/* a quarter of the layers' forward again */
	cr_expect(blk.hw_flops > none.hw_flops && blk.hw_flops < one.hw_flops);
	expect_close((blk.hw_flops - none.hw_flops) / (one.hw_flops - none.hw_flops), 0.25, 1e-9);
}

/* Activation offload: of 32 layers of activations in flight (pp 1), all
 * but the layer computing and the one in transfer, times the fraction, go
 * to host memory; the host holds them; the step waits for the link only
 * where a layer's transfer exceeds its compute. */
Test(stack_mem, activation_offload)
{
	struct llmsim_model m = model("8b");
	struct llmsim_gpu g = gpu("h200");
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.global_batch = 8;
	struct llmsim_train_result base = sim(&m, &g, &c);
	c.offload_activations = 0.5;
	struct llmsim_train_result off = sim(&m, &g, &c);
	double moved = 0.5 * (32 - 2) * base.mem.act_per_layer_bytes;
	expect_close(off.mem.act_offloaded_bytes, moved, 1e-12);
	expect_close(base.mem.activations_bytes - off.mem.activations_bytes, moved, 1e-12);
	cr_expect(off.mem.host_per_gpu_bytes >= moved);
	cr_expect(off.time.step_s >= base.time.step_s);
	expect_close(off.time.step_s - base.time.step_s, off.time.act_offload_s, 1e-9);
}

/* Megatron-FSDP (optim_grads_params) keeps the megatron recipe's 18 B per
 * parameter sharded over dp x cp; FSDP2 16 B (fp32 parameters, grads, m,
 * v); the distributed optimizer shards its 12 B over dp x cp too. */
Test(stack_mem, fsdp_and_distributed_optimizer)
{
	struct llmsim_model m = model("8b");
	struct llmsim_gpu g = gpu("h200");
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.dp = 4, c.cp = 2, c.global_batch = 8, c.zero = 1;
	struct llmsim_train_result z1 = sim(&m, &g, &c);
	double P = z1.mem.params_per_gpu;
	expect_close(z1.mem.optimizer_bytes, 12 * P / 8, 1e-12);
	expect_close(z1.mem.weights_bytes, 2 * P, 1e-12);
	c.zero = 3, c.fsdp = LLMSIM_FSDP_MEGATRON;
	struct llmsim_train_result mf = sim(&m, &g, &c);
	expect_close(mf.mem.weights_bytes + mf.mem.grads_bytes + mf.mem.optimizer_bytes,
		     18 * P / 8, 1e-12);
	c.fsdp = LLMSIM_FSDP_FSDP2;
	struct llmsim_train_result f2 = sim(&m, &g, &c);
	expect_close(f2.mem.weights_bytes + f2.mem.grads_bytes + f2.mem.optimizer_bytes,
		     16 * P / 8, 1e-12);
	/* FSDP2's buffers: a layer gathered twice in bf16 and its gradients in
	 * bf16 and fp32 (10 B per layer parameter), Megatron-FSDP's 8 */
	cr_expect(f2.mem.other_bytes > mf.mem.other_bytes);
	/* ZeRO-2 under FSDP2 keeps the bf16 parameters from forward to backward */
	c.zero = 2;
	struct llmsim_train_result f2z2 = sim(&m, &g, &c);
	expect_close(f2z2.mem.weights_bytes, 4 * P / 8 + 2 * P, 1e-12);
}

/* A stack's allowances: NCCL buffers per communicator in use (tp 2 and
 * dp 4: two), its context, and the memory model's error: a total within
 * the error above the HBM is not rejected but tight; beyond it, it does
 * not fit. */
Test(stack_mem, allowances_and_error)
{
	struct llmsim_model m = model("8b");
	struct llmsim_gpu g = gpu("h200");
	struct llmsim_stack_def s;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_stack_load("mcore-te", &s, &e), 0, "%s", e.msg);
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	llmsim_stack_apply(&s, &c);
	c.gpus = 8, c.tp = 2, c.dp = 4, c.global_batch = 8;
	expect_close(llmsim_train_nccl_bytes(&c), 2 * s.allow.nccl_bytes_per_group, 1e-12);
	struct llmsim_train_result r = sim(&m, &g, &c);
	cr_expect(r.fits && !r.mem_tight);
	expect_close(r.mem_error_bytes, s.allow.error_frac * r.mem.total_bytes, 1e-12);
	/* the HBM moved to just under the total: within the error, tight */
	struct llmsim_gpu g2 = g;
	g2.hbm_bytes = r.mem.total_bytes * (1 - s.allow.error_frac / 2);
	struct llmsim_train_result t = sim(&m, &g2, &c);
	cr_expect(t.gpu_fits && t.mem_tight, "over by half the error: tight, not rejected");
	g2.hbm_bytes = r.mem.total_bytes * (1 - 2 * s.allow.error_frac);
	t = sim(&m, &g2, &c);
	cr_expect(!t.gpu_fits, "over by twice the error: does not fit");
	/* without a stack (error 0) the old verdict: over is over */
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.tp = 2, c.dp = 4, c.global_batch = 8;
	r = sim(&m, &g, &c);
	g2.hbm_bytes = r.mem.total_bytes * 0.999;
	t = sim(&m, &g2, &c);
	cr_expect(!t.gpu_fits && !t.mem_tight);
}
