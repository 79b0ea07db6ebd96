/*
 * test_plan.c - the training planner (sim/train/plan.h): the size of its
 * space and its honest counts, the batch rule, distinct rows grouped within
 * the expected error, offload ranking first only beyond the error, a 7-GPU
 * plan, the hint that names the true cause and the cost of a token budget
 * (Llama 3's published layouts: test_plan_llama3.c). Expected numbers are
 * derived by hand in the comments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/plan.h"
#include "support.h"

static struct llmsim_gpu *gpu(const char *name)
{
	static struct llmsim_gpu g[2];
	static int slot;
	struct llmsim_gpu *p = &g[slot++ % 2];
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load(name, p, &err), 0, "%s", err.msg);
	return p;
}

static void plan(const char *model, const struct llmsim_gpu *g, struct llmsim_plan_req *q,
		 struct llmsim_plan_out *o)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_model_load(model, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_ctx_new(&m, g, &ctx, &err), 0, "%s", err.msg);
	if (!q->dtype)
		q->dtype = LLMSIM_DT_BF16;
	if (!q->moe_imbalance)
		q->moe_imbalance = 1;
	cr_assert_eq(llmsim_plan_run(ctx, q, o, &err), 0, "%s", err.msg);
	llmsim_train_ctx_free(ctx);
}

/* The space of a dense model on 8 GPUs: the ordered factorizations of
 * 8 = 2^3 into (tp, cp, pp, dp) are C(3 + 3, 3) = 20; each holds 5
 * micro-batches x 3 attention kernels x 4 ZeRO stages x 3 recomputations x
 * 8 schedules (1F1B, interleaved with 2-8 chunks) x 3 offload modes =
 * 4320: 86,400 configurations, each priced or pruned, and each priced one
 * fits or is out of (host) memory. */
Test(plan, counts_cover_the_space)
{
	struct llmsim_plan_req q = {.gpus = 8, .seq = 4096, .recipe = LLMSIM_RECIPE_MEGATRON};
	struct llmsim_plan_out o;
	plan("70b", gpu("h200"), &q, &o);
	cr_expect_eq(o.priced + o.pruned, 86400);
	int64_t pruned = 0;
	for (int i = 0; i < LLMSIM_PLAN_WHY_COUNT; i++)
		if (!llmsim_plan_why_priced(i))
			pruned += o.why[i];
	cr_expect_eq(pruned, o.pruned);
	cr_expect_eq(o.priced, o.feasible + o.why[LLMSIM_PLAN_OOM] + o.why[LLMSIM_PLAN_HOST_OOM]);
	/* ZeRO-3 with pp > 1 and the interleaved schedule with pp 1 are two
	 * causes, counted apart (they once shared one label) */
	cr_expect_gt(o.why[LLMSIM_PLAN_ZERO3_PP], 0);
	cr_expect_gt(o.why[LLMSIM_PLAN_INTERLEAVE_PP], 0);
	llmsim_plan_out_release(&o);
}

/* The batch rule, max(4 Mi, 1024 x GPUs) tokens as q x 2^k sequences, q
 * the odd part of the GPU count, 2^k nearest in ratio:
 *   8 GPUs, 4096-token sequences: 4 Mi / 4096 = 1024 = 2^10;
 *   16,384 GPUs: 1024 x 16384 = 16 Mi tokens (Llama 3's 16M): 4096 of 4096,
 *     2048 of 8192, 128 of 131,072 tokens (Llama 3 Table 4);
 *   7 GPUs: 1024 / 7 = 146.3, log2 7.19 -> 2^7: 7 x 128 = 896;
 *   24 GPUs: q = 3, 1024 / 3 = 341.3, log2 8.41 -> 2^8: 768. */
Test(plan, batch_rule)
{
	double tok;
	cr_expect_eq(llmsim_plan_batch_rule(8, 4096, &tok), 1024);
	expect_close(tok, 4194304.0, 0);
	cr_expect_eq(llmsim_plan_batch_rule(16384, 4096, &tok), 4096);
	expect_close(tok, 16777216.0, 0);
	cr_expect_eq(llmsim_plan_batch_rule(16384, 8192, NULL), 2048);
	cr_expect_eq(llmsim_plan_batch_rule(16384, 131072, NULL), 128);
	cr_expect_eq(llmsim_plan_batch_rule(7, 4096, NULL), 896);
	cr_expect_eq(llmsim_plan_batch_rule(24, 4096, NULL), 768);
}

/* 8B on 7 GPUs: the rule's 896 sequences (above) divide by dp 7 (128 per
 * replica, every micro-batch of 1-16), so layouts of dp 7 plan; a batch of
 * 1024 pinned to tp = pp = cp = 1 (dp 7) divides by none, and the hint
 * names the batch, not memory. */
Test(plan, seven_gpus_once_the_batch_rule_allows)
{
	struct llmsim_plan_req q = {.gpus = 7, .seq = 4096, .recipe = LLMSIM_RECIPE_MEGATRON};
	struct llmsim_plan_out o;
	plan("8b", gpu("h200"), &q, &o);
	cr_expect_eq(o.global_batch, 896);
	cr_expect(o.batch_from_rule);
	cr_assert_gt(o.nrows, 0);
	int dp7 = 0;
	for (int i = 0; i < o.nrows; i++)
		dp7 |= o.rows[i].r.cfg.dp == 7;
	cr_expect(dp7, "a layout of dp 7 among the rows");
	llmsim_plan_out_release(&o);

	struct llmsim_plan_req b = {.gpus = 7, .seq = 4096, .global_batch = 1024, .tp = 1,
				    .pp = 1, .cp = 1, .recipe = LLMSIM_RECIPE_MEGATRON};
	plan("8b", gpu("h200"), &b, &o);
	cr_expect_eq(o.nrows, 0);
	cr_expect_eq(o.priced, 0);
	cr_expect(strstr(o.hint, "batch: global batch 1024 is not divisible") == o.hint, "%s",
		  o.hint);
	cr_expect(strstr(o.hint, "multiple of 7") != NULL, "%s", o.hint);
	cr_expect(strstr(o.hint, "memory") == NULL, "%s", o.hint);
	llmsim_plan_out_release(&o);
}

/* 405B on 8 H200s: 406 B x 18 B > 8 x 141 GB, and even ZeRO-3 with its
 * 16-bit weights in host memory cannot hold the activations: every valid
 * configuration is priced and runs out of memory, the hint says memory. */
Test(plan, hint_memory_when_memory)
{
	struct llmsim_plan_req q = {.gpus = 8, .seq = 4096, .recipe = LLMSIM_RECIPE_MEGATRON};
	struct llmsim_plan_out o;
	plan("405b", gpu("h200"), &q, &o);
	cr_expect_eq(o.nrows, 0);
	cr_expect(o.have_closest);
	cr_expect(strstr(o.hint, "memory:") == o.hint, "%s", o.hint);
	llmsim_plan_out_release(&o);
}

/* Rows (plan_rank.c): the best configuration of each layout (degrees,
 * ZeRO, offload, LoRA) in the ranking's order, and the configurations of
 * that layout within (1 + e) of it folded into it; no two rows share a
 * layout; a row is its layout's fastest; ranked in HBM alone (no stack:
 * nothing tight), the rows come by tokens/s; all folded configurations
 * are feasible ones. With e = 0.10 set by hand. */
Test(plan, rows_are_layouts_with_equivalents_within_the_error)
{
	struct llmsim_plan_req q = {.gpus = 16, .seq = 4096, .recipe = LLMSIM_RECIPE_MEGATRON,
				    .error_frac = 0.10, .top = 1000, .no_offload = 1};
	struct llmsim_plan_out o;
	plan("70b", gpu("h200"), &q, &o);
	cr_assert_gt(o.nrows, 1);
	cr_expect_lt(o.nrows, 1000);
	int64_t members = 0;
	for (int i = 0; i < o.nrows; i++) {
		const struct llmsim_plan_row *r = &o.rows[i];
		const struct llmsim_train_cfg *a = &r->r.cfg;
		members += 1 + r->equivalent;
		cr_expect_geq(r->group_worst_tokens_per_s * 1.10, r->group_best_tokens_per_s);
		cr_expect_eq(r->r.tokens_per_s, r->group_best_tokens_per_s);
		for (int j = 0; j < i; j++) {
			const struct llmsim_train_cfg *b = &o.rows[j].r.cfg;
			cr_expect(!(a->tp == b->tp && a->pp == b->pp && a->cp == b->cp &&
				    a->zero == b->zero), "rows %d and %d: one layout", j + 1, i + 1);
		}
		if (i)
			cr_expect_leq(r->r.tokens_per_s, o.rows[i - 1].r.tokens_per_s);
	}
	cr_expect_leq(members, o.feasible);
	llmsim_plan_out_release(&o);
}

/* No offload row ranks first while a configuration in HBM alone is within
 * the error (e = 10%, by hand) of the fastest. On 16 H200s 70B fits in HBM
 * alone; whichever configuration predicts fastest, #1 keeps every state in
 * HBM and is within 10% of it; offload "wins" only beyond the error. */
Test(plan, offload_first_only_beyond_the_error)
{
	const int counts[] = {16, 32, 64};
	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		struct llmsim_plan_req q = {.gpus = counts[k], .seq = 4096,
					    .recipe = LLMSIM_RECIPE_MEGATRON, .error_frac = 0.10};
		struct llmsim_plan_out o;
		plan("70b", gpu("h200"), &q, &o);
		cr_assert_gt(o.nrows, 0);
		const struct llmsim_plan_best *hbm = &o.kind[LLMSIM_PLAN_KIND_HBM];
		const struct llmsim_plan_best *off = &o.kind[LLMSIM_PLAN_KIND_OFFLOAD];
		cr_assert(hbm->found, "%d GPUs: 70B fits in HBM alone", counts[k]);
		if (hbm->r.tokens_per_s * 1.10 >= o.fastest.tokens_per_s)
			cr_expect_eq(o.rows[0].r.cfg.offload, LLMSIM_OFFLOAD_NONE, "%d GPUs",
				     counts[k]);
		if (off->found)
			cr_expect_eq(off->beyond_error,
				     off->r.tokens_per_s > hbm->r.tokens_per_s * 1.10);
		llmsim_plan_out_release(&o);
	}
}

/* The same check where the rule must act: with the error set to 50% (by
 * hand), a plan whose fastest prediction offloads still shows #1 in HBM
 * alone when one is within 50% of it. 70B on 8 H200s fits only with
 * offload; on 16 both kinds fit, and the fastest of all may offload. */
Test(plan, hbm_representative_of_a_wide_group)
{
	struct llmsim_plan_req q = {.gpus = 16, .seq = 4096, .recipe = LLMSIM_RECIPE_MEGATRON,
				    .error_frac = 0.50};
	struct llmsim_plan_out o;
	plan("70b", gpu("h200"), &q, &o);
	cr_assert_gt(o.nrows, 0);
	const struct llmsim_plan_best *hbm = &o.kind[LLMSIM_PLAN_KIND_HBM];
	cr_assert(hbm->found);
	cr_assert_geq(hbm->r.tokens_per_s * 1.50, o.fastest.tokens_per_s);
	cr_expect_eq(o.rows[0].r.cfg.offload, LLMSIM_OFFLOAD_NONE);
	expect_close(o.rows[0].r.tokens_per_s, hbm->r.tokens_per_s, 1e-12);
	llmsim_plan_out_release(&o);
}

/* The rows are the training model's own results: #1 priced again by
 * llmsim_train_simulate gives the same step. */
Test(plan, rows_are_what_train_prices)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	struct llmsim_plan_req q = {.gpus = 8, .seq = 2048, .global_batch = 64,
				    .recipe = LLMSIM_RECIPE_MEGATRON};
	struct llmsim_plan_out o;
	plan("8b", gpu("h200"), &q, &o);
	cr_assert_gt(o.nrows, 0);
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_train_ctx_new(&m, gpu("h200"), &ctx, &err), 0, "%s", err.msg);
	struct llmsim_train_result r;
	cr_assert_eq(llmsim_train_simulate(ctx, &o.rows[0].r.cfg, &r, &err), 0, "%s", err.msg);
	expect_close(r.time.step_s, o.rows[0].r.time.step_s, 1e-12);
	llmsim_train_ctx_free(ctx);
	/* a configuration that fits is no faster than the plan's fastest */
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.tp = 2, c.dp = 4, c.zero = 1, c.micro_batch = 2;
	c.global_batch = 64, c.seq = 2048, c.recompute = LLMSIM_RECOMP_SELECTIVE;
	cr_assert_eq(llmsim_train_ctx_new(&m, gpu("h200"), &ctx, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
	cr_assert(r.fits);
	cr_expect_geq(o.fastest.tokens_per_s, r.tokens_per_s * (1 - 1e-12));
	llmsim_train_ctx_free(ctx);
	llmsim_plan_out_release(&o);
}

/* The cost of a token budget: time = tokens / (tokens/s), GPU-hours =
 * time x GPUs / 3600, energy = power x GPUs x time, the power from the law
 * of sim/predict.c: a load the cap slows draws the TDP (H200: 700 W); one
 * it does not, tdp x rho x (burst / capped clock)^3. */
Test(plan, token_budget_and_power)
{
	const struct llmsim_gpu *g = gpu("h200");
	expect_close(llmsim_power_w(g, 1.0, 1.0), g->tdp_w, 1e-12);
	cr_expect_eq(g->tdp_w, 700);
	double cap = g->param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ], burst = g->burst_clock_hz;
	double rho = 0.5 * pow(cap / burst, 3); /* at burst, half the limit's power */
	expect_close(llmsim_power_w(g, rho, 1.0), 0.5 * g->tdp_w, 1e-9);
	struct llmsim_train_result r;
	memset(&r, 0, sizeof r);
	r.cfg.gpus = 64;
	r.tokens_per_s = 1e6;
	r.load_rho = 1;
	r.time.step_s = 1;
	struct llmsim_plan_budget b;
	llmsim_plan_budget(g, &r, 1e12, &b);
	expect_close(b.time_s, 1e6, 1e-12);               /* 1e12 / 1e6 */
	expect_close(b.gpu_hours, 1e6 * 64 / 3600, 1e-12);
	expect_close(b.energy_j, 700.0 * 64 * 1e6, 1e-12); /* 44.8 GJ = 12.4 MWh */
}

/* The report's time chart stacks compute, exposed communication, bubble,
 * optimizer and offload: with offload the GPU optimizer is 0 and the parts
 * add to the step, as they must to match the table (70B on 8 H200s trains
 * only with offload). */
Test(plan, step_is_the_sum_of_its_parts_with_offload)
{
	struct llmsim_plan_req q = {.gpus = 8, .seq = 4096, .recipe = LLMSIM_RECIPE_MEGATRON};
	struct llmsim_plan_out o;
	plan("70b", gpu("h200"), &q, &o);
	cr_assert_gt(o.nrows, 0);
	for (int i = 0; i < o.nrows; i++) {
		const struct llmsim_train_time *t = &o.rows[i].r.time;
		cr_expect_neq(o.rows[i].r.cfg.offload, LLMSIM_OFFLOAD_NONE);
		cr_expect_gt(t->offload_s, 0);
		expect_close(t->compute_s + t->comm_exposed_s + t->bubble_s + t->optimizer_s +
				     t->offload_s, t->step_s, 1e-12);
	}
	llmsim_plan_out_release(&o);
}

/* Pins that cannot hold are one line each. */
Test(plan, bad_pins)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_ctx_new(&m, gpu("h200"), &ctx, &err), 0, "%s", err.msg);
	struct llmsim_plan_req q = {.gpus = 8, .seq = 4096, .tp = 3, .dtype = LLMSIM_DT_BF16,
				    .moe_imbalance = 1};
	struct llmsim_plan_out o;
	cr_expect_eq(llmsim_plan_run(ctx, &q, &o, &err), LLMSIM_EINVAL);
	cr_expect_str_eq(err.msg, "--tp 3 does not divide --gpus 8");
	q.tp = 4, q.pp = 4;
	cr_expect_eq(llmsim_plan_run(ctx, &q, &o, &err), LLMSIM_EINVAL);
	cr_expect_str_eq(err.msg, "tp x cp x pp = 16 (as pinned) does not divide --gpus 8");
	q.tp = q.pp = 0, q.ep = 2;
	cr_expect_eq(llmsim_plan_run(ctx, &q, &o, &err), LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "needs an MoE model") != NULL, "%s", err.msg);
	llmsim_train_ctx_free(ctx);
}
