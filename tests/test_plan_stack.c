/*
 * test_plan_stack.c - plans a team can launch (issue 21, items 1 and 7):
 * the planner searches only what the chosen stack launches, each row names
 * its stack and is emitted by the stack's launcher, the rows are the best
 * layouts in order (not a ladder in steps of the error), each with its
 * memory headroom and error; the 70B-on-8-GPUs target.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/plan.h"
#include "sim/train/plan_int.h"
#include "sim/train/stack.h"
#include "support.h"

static char out[1 << 22], err[1 << 14];

struct fixture {
	struct llmsim_model m;
	struct llmsim_gpu g;
	struct llmsim_stack_def s;
};

static void setup_fx(struct fixture *f, const char *model, const char *gpu, const char *stack)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load(model, &f->m, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load(gpu, &f->g, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_stack_load(stack, &f->s, &e), 0, "%s", e.msg);
}

static void plan(const struct fixture *f, struct llmsim_plan_req *q, struct llmsim_plan_out *o)
{
	struct llmsim_train_ctx *ctx;
	struct llmsim_err e = {0};
	q->stack = &f->s;
	q->recipe = f->s.recipe;
	q->dtype = LLMSIM_DT_BF16;
	q->moe_imbalance = 1;
	cr_assert_eq(llmsim_train_ctx_new(&f->m, &f->g, &ctx, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_plan_run(ctx, q, o, &e), 0, "%s", e.msg);
	llmsim_train_ctx_free(ctx);
}

/* The target: `plan --model 70b --gpus 8` (mcore-te, the default):
 * #1 is a layout Megatron-Core launches, keeps at least the stack's stated
 * headroom (the memory model's error of its total), and every row is one
 * the stack launches and names it. No model state of 70B fits 8 x 141 GB
 * at 18 B a parameter (1.26 TB): #1 offloads the optimizer, as Megatron's
 * --optimizer-cpu-offload does, with its distributed optimizer. */
Test(plan_stack, target_70b_8gpus)
{
	struct fixture f;
	setup_fx(&f, "70b", "h200", "mcore-te");
	struct llmsim_plan_req q = {.gpus = 8, .seq = 4096, .top = 5};
	struct llmsim_plan_out o;
	plan(&f, &q, &o);
	cr_assert_gt(o.nrows, 0);
	char why[512];
	for (int i = 0; i < o.nrows; i++) {
		const struct llmsim_train_result *r = &o.rows[i].r;
		cr_expect_eq(llmsim_stack_launches(&f.s, &f.m, &r->cfg, why, sizeof why, NULL), 0,
			     "row %d: %s", i + 1, why);
		cr_expect_str_eq(r->cfg.stack_name, "mcore-te");
	}
	const struct llmsim_train_result *r1 = &o.rows[0].r;
	cr_expect(!r1->mem_tight);
	cr_expect_geq(r1->mem.hbm_bytes - r1->mem.total_bytes,
		      f.s.allow.error_frac * r1->mem.total_bytes, "#1 keeps the stated headroom");
	/* no ZeRO-3 and no offload of DeepSpeed's kind under Megatron-Core */
	cr_expect(!(r1->cfg.zero >= 2 && r1->cfg.offload != LLMSIM_OFFLOAD_NONE));
	llmsim_plan_out_release(&o);

	int rc = run_llmsim("plan --model 70b --gpus 8 --emit stack", out, sizeof out, err,
			    sizeof err);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "launch #1 with Megatron-LM") != NULL, "%s", err);
	cr_expect(strstr(out, "pretrain_gpt.py") != NULL);
}

/* The rows are distinct layouts, best first: no two rows share a layout,
 * and, where neither offloads nor is tight, a row is never faster than the
 * one above it; some neighbours lie within the error of each other (the
 * old grouping put each row at least the error below the last). */
Test(plan_stack, rows_are_the_best_layouts_in_order)
{
	struct fixture f;
	setup_fx(&f, "8b", "h200", "mcore-te");
	struct llmsim_plan_req q = {.gpus = 8, .seq = 4096, .top = 8};
	struct llmsim_plan_out o;
	plan(&f, &q, &o);
	cr_assert_eq(o.nrows, 8);
	int close = 0;
	for (int i = 0; i < o.nrows; i++) {
		const struct llmsim_train_cfg *a = &o.rows[i].r.cfg;
		for (int j = 0; j < i; j++) {
			const struct llmsim_train_cfg *b = &o.rows[j].r.cfg;
			cr_expect(!(a->tp == b->tp && a->pp == b->pp && a->cp == b->cp &&
				    a->ep == b->ep && a->zero == b->zero && a->offload == b->offload),
				  "rows %d and %d are one layout", j + 1, i + 1);
		}
		if (i == 0)
			continue;
		const struct llmsim_train_result *p = &o.rows[i - 1].r, *r = &o.rows[i].r;
		if (!p->mem_tight && !r->mem_tight && !p->cfg.offload && !r->cfg.offload)
			cr_expect_leq(r->tokens_per_s, p->tokens_per_s * (1 + 1e-12), "row %d", i + 1);
		close += r->tokens_per_s * (1 + o.error_frac) >= p->tokens_per_s;
	}
	cr_expect_gt(close, 0, "every row at least the error below the last: a ladder");
	llmsim_plan_out_release(&o);
}

/* A layout the chosen stack cannot launch is never searched: DeepSpeed
 * never gets cp or interleaving, TorchTitan never the distributed
 * optimizer (ZeRO-1), megatron-2021 never a sequence-parallel row. */
Test(plan_stack, searches_only_what_the_stack_launches)
{
	static const char *const stacks[] = {"deepspeed", "torchtitan", "megatron-2021", "llama3"};
	for (size_t k = 0; k < sizeof stacks / sizeof stacks[0]; k++) {
		struct fixture f;
		setup_fx(&f, "8b", "h200", stacks[k]);
		struct llmsim_plan_req q = {.gpus = 16, .seq = 4096, .top = 10};
		struct llmsim_plan_out o;
		plan(&f, &q, &o);
		cr_expect_gt(o.nrows, 0, "%s", stacks[k]);
		cr_expect_gt(o.why[LLMSIM_PLAN_STACK], 0, "%s prunes what it cannot launch",
			     stacks[k]);
		for (int i = 0; i < o.nrows; i++) {
			char why[512];
			cr_expect_eq(llmsim_stack_launches(&f.s, &f.m, &o.rows[i].r.cfg, why,
							   sizeof why, NULL), 0, "%s row %d: %s",
				     stacks[k], i + 1, why);
			cr_expect_str_eq(o.rows[i].r.cfg.stack_name, stacks[k]);
		}
		llmsim_plan_out_release(&o);
	}
}

/* `--emit stack` of every row the planner prints, across the README's
 * GPUs, models and scales, under each stack's own launcher: none refused.
 * A case where nothing fits (405B on 8 GPUs) has no rows and is skipped. */
Test(plan_stack, every_row_emits)
{
	static const char *const gpus[] = {"h200", "h100", "b200", "a100"};
	static const char *const models[] = {"8b", "70b", "405b", "mixtral-8x7b"};
	static const int scales[] = {8, 64, 1024};
	static const char *const stacks[] = {"mcore-te", "torchtitan", "deepspeed"};
	int planned = 0;
	for (size_t s = 0; s < sizeof stacks / sizeof stacks[0]; s++)
		for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++)
			for (size_t m = 0; m < sizeof models / sizeof models[0]; m++)
				for (size_t n = 0; n < sizeof scales / sizeof scales[0]; n++) {
					/* the default stack everywhere, the others on h200 */
					if (s > 0 && g > 0)
						continue;
					char args[256];
					snprintf(args, sizeof args,
						 "plan --model %s --gpu %s --gpus %d --stack %s --top 5 "
						 "--json --emit stack",
						 models[m], gpus[g], scales[n], stacks[s]);
					int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
					if (rc == 1 && strstr(err, "no configuration fits"))
						continue;
					cr_expect_eq(rc, 0, "%s: %s", args, err);
					cr_expect(strstr(out, "\"cannot_express\"") == NULL, "%s: %s",
						  args, strstr(out, "\"cannot_express\""));
					cr_expect(strstr(out, "\"launch\": null") == NULL, "%s", args);
					cr_expect(strstr(out, "\"launch\": \"") != NULL, "%s", args);
					planned++;
				}
	cr_expect_gt(planned, 40, "most cases fit: %d planned", planned);
}

/* Each row carries its headroom with the memory model's error and its
 * expected step-time error (JSON), and the text names the stack. */
Test(plan_stack, rows_carry_headroom_and_errors)
{
	int rc = run_llmsim("plan --model 8b --gpus 8 --json", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(json_parses(out));
	cr_expect(strstr(out, "\"memory_error_bytes\": ") && strstr(out, "\"headroom_bytes\": ") &&
		  strstr(out, "\"expected_error_frac\": ") &&
		  strstr(out, "\"within_memory_error\": "));
	rc = run_llmsim("plan --model 8b --gpus 8", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "stack:  mcore-te") && strstr(out, "+/-"), "%s", out);
}

/* Llama 3 405B's three published layouts (Dubey et al. 2024, Table 4; see
 * test_plan_llama3.c) planned under the llama3 stack with the layout
 * pinned and the rest searched: #1 lands within 10% of the published MFU
 * at 8K (43%, 41%); at 131K, where the attention kernel Meta ran is not
 * said (test_plan_llama3.c brackets it between FlashAttention-2 and -3),
 * within 20% (38%). A row within the memory model's error of the 80 GB
 * is not rejected: at 8192 GPUs Meta's own layout is one (0.4 GB spare). */
Test(plan_stack, llama3_rows_under_the_llama3_stack)
{
	static const struct {
		int gpus, cp;
		int64_t seq, batch;
		double mfu, tol;
	} runs[] = {
		{8192, 1, 8192, 2048, 0.43, 0.10},
		{16384, 1, 8192, 2048, 0.41, 0.10},
		{16384, 16, 131072, 128, 0.38, 0.20},
	};
	struct fixture f;
	setup_fx(&f, "405b", "h100", "llama3");
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		struct llmsim_plan_req q = {.gpus = runs[i].gpus, .seq = runs[i].seq,
					    .global_batch = runs[i].batch, .tp = 8, .pp = 16,
					    .cp = runs[i].cp, .top = 3};
		struct llmsim_plan_out o;
		plan(&f, &q, &o);
		cr_assert_gt(o.nrows, 0, "%d GPUs: nothing of Meta's layout fits", runs[i].gpus);
		const struct llmsim_train_result *r = &o.rows[0].r;
		cr_expect(r->fits);
		cr_expect(fabs(r->mfu / runs[i].mfu - 1) <= runs[i].tol,
			  "%d GPUs, cp %d: MFU %.1f%%, published %.0f%% (%+.1f%%)", runs[i].gpus,
			  runs[i].cp, 100 * r->mfu, 100 * runs[i].mfu,
			  100 * (r->mfu / runs[i].mfu - 1));
		cr_log_info("llama3 stack, %d GPUs cp %d: MFU %.1f%% (published %.0f%%), zero %d, "
			    "%s, headroom %.2f GB%s", runs[i].gpus, runs[i].cp, 100 * r->mfu,
			    100 * runs[i].mfu, r->cfg.zero, llmsim_recompute_name(r->cfg.recompute),
			    (r->mem.hbm_bytes - r->mem.total_bytes) / 1e9,
			    r->mem_tight ? " (tight)" : "");
		llmsim_plan_out_release(&o);
	}
}

/* The ways of holding activations searched: none, selective, full; with an
 * MoE model under a stack that recomputes by module, moe_act too (with
 * MLA's up-projections where the model has MLA); not under a stack without
 * modules, nor for a dense model; activation offload where the stack has
 * it and the GPU file a host. */
Test(plan_stack, recompute_choices)
{
	struct fixture f;
	struct plan_recompute rec[PLAN_MAX_RECOMPUTE];
	struct llmsim_plan_req q = {0};
	setup_fx(&f, "mixtral-8x7b", "h200", "mcore-te");
	struct llmsim_gpu nohost = f.g; /* activation offload needs a host */
	nohost.has_host = 0;
	q.stack = &f.s;
	cr_assert_eq(plan_recompute_choices(&q, &f.m, &f.g, rec), 5);
	cr_expect_eq(rec[4].kind, LLMSIM_RECOMP_NONE);
	cr_expect_eq(rec[4].act_offload, 1.0);
	q.stack = &f.s;
	cr_assert_eq(plan_recompute_choices(&q, &f.m, &nohost, rec), 4);
	cr_expect_eq(rec[3].kind, LLMSIM_RECOMP_MODULES);
	cr_expect_eq(rec[3].modules, 1u << LLMSIM_RM_MOE_ACT);
	struct fixture d;
	setup_fx(&d, "deepseek-v3", "h800", "mcore-te");
	q.stack = &d.s;
	cr_assert_eq(plan_recompute_choices(&q, &d.m, &nohost, rec), 4);
	cr_expect_eq(rec[3].modules, 1u << LLMSIM_RM_MOE_ACT | 1u << LLMSIM_RM_MLA_UP_PROJ);
	struct fixture c;
	setup_fx(&c, "mixtral-8x7b", "h200", "core");
	q.stack = &c.s;
	cr_expect_eq(plan_recompute_choices(&q, &c.m, &nohost, rec), 3);
	setup_fx(&c, "8b", "h200", "mcore-te");
	q.stack = &c.s;
	cr_expect_eq(plan_recompute_choices(&q, &c.m, &nohost, rec), 3);
	/* the search counts them: Mixtral at tp 8 under mcore-te (5 ways, with
	 * activation offload to the H200's host) holds 5/3 the configurations
	 * it holds under core (both offload model states, the rest alike) */
	struct fixture k;
	setup_fx(&k, "mixtral-8x7b", "h200", "core");
	struct llmsim_plan_req p = {.gpus = 8, .seq = 4096, .tp = 8, .top = 3};
	struct llmsim_plan_out o, o3;
	plan(&f, &p, &o);
	struct llmsim_plan_req p3 = {.gpus = 8, .seq = 4096, .tp = 8, .top = 3};
	plan(&k, &p3, &o3);
	cr_expect_eq(3 * (o.priced + o.pruned), 5 * (o3.priced + o3.pruned));
	llmsim_plan_out_release(&o);
	llmsim_plan_out_release(&o3);
}
