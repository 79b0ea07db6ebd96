/*
 * test_plan_llama3.c - Llama 3 405B's published layouts through the
 * planner (issue 15, item 3): with the layout pinned and everything else
 * searched, each must fit in the H100's 80 GB and land within 10% of the
 * MFU Meta reports. Its own program, so that CTest names it when it fails:
 * the activation accounting it depends on (interleaved 1F1B in flight
 * rank by rank, the embedding and the head in a layer's slot each, early
 * freeing) is sim/train/pp_layout.c's and memory_rank.c's, the stack's
 * other mechanisms (FSDP's gradient reduce-scatter, all-gather CP) the
 * llama3 recipe's (sim/train/train.h).
 */
#include <math.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/plan.h"
#include "support.h"

/* Llama 3 405B as Meta trained it (Dubey et al. 2024, Table 4), on H100
 * 80GB, 126 layers over 16 stages (uneven: the search's default), bf16,
 * 16M-token batches: 2048 sequences of 8192 (16 Mi / 8192) or 128 of
 * 131,072 (16 Mi / 131072); the layout pinned, Meta's stack (the llama3
 * recipe) requested, the rest (ZeRO, micro-batch, recomputation, chunks per
 * stage, attention) left to the search. Each must
 * fit in the card's HBM (81,559 MiB: the file's hbm_bytes). The 8K rows must
 * land within 10% of the published MFU: 43% (tp 8, pp 16, dp 64, 8192
 * GPUs), 41% (dp 128, 16,384 GPUs). At 131K context (cp 16, dp 8, 16,384
 * GPUs: 38%) attention is ~40% of the step's FLOPs and the paper does not
 * say which attention kernel ran: the search takes FlashAttention-3 (made
 * public the same month as the paper, after the pre-training);
 * FlashAttention-2 is the one of its time. There the published figure must
 * lie between the layout's prediction with FlashAttention-2 and with
 * FlashAttention-3 (today: 35.0% and 46.1%, the pipeline's sends beside
 * the next chunk's compute as Meta's asynchronous point-to-point
 * communication runs them): the kernel brackets the run, and the test
 * fails if it stops doing so; FlashAttention-2, the kernel of its time and
 * the one `validate`'s l24 suite prices, within the suite's 10%. */
/* The published MFU between the layout's FlashAttention-2 and -3
 * predictions, FlashAttention-2's within 10% of it. */
static void attention_brackets(const struct llmsim_model *m, const struct llmsim_gpu *g,
			       const struct llmsim_train_cfg *best, double published)
{
	static const enum llmsim_attn_impl impl[2] = {LLMSIM_ATTN_FLASH2, LLMSIM_ATTN_FLASH3};
	double mfu[2];
	struct llmsim_err err = {0};
	for (int k = 0; k < 2; k++) {
		struct llmsim_train_ctx *ctx;
		struct llmsim_train_result r;
		struct llmsim_train_cfg c = *best;
		c.attn = impl[k];
		cr_assert_eq(llmsim_train_ctx_new(m, g, &ctx, &err), 0, "%s", err.msg);
		cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
		llmsim_train_ctx_free(ctx);
		cr_expect(r.fits, "131K, FlashAttention-%d: does not fit", k + 2);
		mfu[k] = r.mfu;
		cr_expect(k == 1 || fabs(mfu[k] / published - 1) <= 0.10,
			  "131K, FlashAttention-%d: MFU %.1f%%, published %.0f%% (%+.1f%%)", k + 2,
			  100 * mfu[k], 100 * published, 100 * (mfu[k] / published - 1));
	}
	cr_log_info("131K: FlashAttention-2 %.1f%%, published %.0f%%, FlashAttention-3 %.1f%%",
		    100 * mfu[0], 100 * published, 100 * mfu[1]);
	cr_expect(mfu[0] <= published && published <= mfu[1],
		  "131K: published %.0f%% outside FlashAttention-2's %.1f%% .. -3's %.1f%%",
		  100 * published, 100 * mfu[0], 100 * mfu[1]);
}

Test(plan_llama3, layouts_fit_and_their_mfu)
{
	static const struct {
		int gpus, cp;
		int64_t seq, batch;
		double mfu;
	} runs[] = {
		{8192, 1, 8192, 2048, 0.43},
		{16384, 1, 8192, 2048, 0.41},
		{16384, 16, 131072, 128, 0.38},
	};
	struct llmsim_gpu g;
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h100", &g, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_model_load("405b", &m, &err), 0, "%s", err.msg);
	const struct llmsim_gpu *h100 = &g;
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		struct llmsim_plan_req q = {.gpus = runs[i].gpus, .seq = runs[i].seq,
					    .global_batch = runs[i].batch, .tp = 8, .pp = 16,
					    .cp = runs[i].cp, .recipe = LLMSIM_RECIPE_LLAMA3};
		struct llmsim_plan_out o;
		struct llmsim_train_ctx *ctx;
		q.dtype = LLMSIM_DT_BF16, q.moe_imbalance = 1;
		cr_assert_eq(llmsim_train_ctx_new(&m, h100, &ctx, &err), 0, "%s", err.msg);
		cr_assert_eq(llmsim_plan_run(ctx, &q, &o, &err), 0, "%s", err.msg);
		llmsim_train_ctx_free(ctx);
		cr_expect_gt(o.nrows, 0, "%d GPUs: no configuration of Meta's layout fits",
			     runs[i].gpus);
		if (o.nrows) {
			const struct llmsim_train_result *r = &o.rows[0].r;
			cr_expect(r->fits);
			cr_expect_leq(r->mem.total_bytes, h100->hbm_bytes);
			if (runs[i].cp == 1)
				cr_expect(fabs(r->mfu / runs[i].mfu - 1) <= 0.10,
					  "%d GPUs, cp %d: MFU %.1f%%, published %.0f%% (%+.1f%%)",
					  runs[i].gpus, runs[i].cp, 100 * r->mfu, 100 * runs[i].mfu,
					  100 * (r->mfu / runs[i].mfu - 1));
			else
				attention_brackets(&m, h100, &r->cfg, runs[i].mfu);
		}
		llmsim_plan_out_release(&o);
	}
}

