/*
 * bench_plan.c - speed of the training-configuration search (one core).
 *
 * Prints, for a few (model, GPU, GPU count, recipe) searches with the
 * default search (the batch rule, uneven stages, 1-8 chunks per stage, the
 * three offload modes; Llama 3 405B's tp 8 x pp 16 pinned in the last
 * two): the configurations of the space, those priced (memory and step
 * time computed: the feasible and the out-of-memory ones) and those pruned
 * before pricing (invalid subtrees, counted whole), the priced and the
 * pruned per second, and the time (cold: op cache empty; warm: best of
 * the later runs on the same context), the ranking included. Times are
 * the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so the rates are per
 * core and hold on a machine other programs share; the warm run's wall
 * time is printed beside it.
 *
 *   LLMSIM_DATA_DIR=. build/bench/llmsim-bench-plan
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/plan.h"

static double now_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int one(const char *model, const char *gpu, int gpus, enum llmsim_recipe recipe, int tp,
	       int pp, int reps)
{
	struct llmsim_err err = {0};
	struct llmsim_model m;
	struct llmsim_gpu g;
	if (llmsim_model_load(model, &m, &err) || llmsim_gpu_load(gpu, &g, &err)) {
		fprintf(stderr, "bench_plan: %s\n", err.msg);
		return 1;
	}
	struct llmsim_train_ctx *ctx;
	if (llmsim_train_ctx_new(&m, &g, &ctx, &err)) {
		fprintf(stderr, "bench_plan: %s\n", err.msg);
		return 1;
	}
	struct llmsim_plan_req q = {.gpus = gpus, .seq = 4096, .dtype = LLMSIM_DT_BF16,
				    .recipe = recipe, .moe_imbalance = 1, .top = 5, .tp = tp, .pp = pp};
	double cold = 0, warm = 1e300, warm_wall = 0;
	int64_t priced = 0, pruned = 0, batch = 0;
	for (int r = 0; r < reps; r++) {
		struct llmsim_plan_out o;
		double t0 = now_s(CLOCK_THREAD_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
		if (llmsim_plan_run(ctx, &q, &o, &err)) {
			fprintf(stderr, "bench_plan: %s\n", err.msg);
			llmsim_train_ctx_free(ctx);
			return 1;
		}
		double t = now_s(CLOCK_THREAD_CPUTIME_ID) - t0, w = now_s(CLOCK_MONOTONIC) - w0;
		if (r == 0) {
			cold = t;
		} else if (t < warm) {
			warm = t;
			warm_wall = w;
		}
		priced = o.priced;
		pruned = o.pruned;
		batch = o.global_batch;
		llmsim_plan_out_release(&o);
	}
	if (reps < 2)
		warm = warm_wall = cold;
	printf("%-6s %-14s %-8s %6d GPUs  batch %5lld  %9lld configs: %8lld priced, %9lld pruned  cold %8.2f ms"
	       "  warm %8.2f ms (wall %8.2f)  %6.2f M priced/s  %7.2f M pruned/s\n",
	       model, gpu, llmsim_recipe_name(recipe), gpus,
	       (long long)batch, (long long)(priced + pruned), (long long)priced,
	       (long long)pruned, cold * 1e3, warm * 1e3, warm_wall * 1e3, priced / warm / 1e6, pruned / warm / 1e6);
	llmsim_train_ctx_free(ctx);
	return 0;
}

int main(void)
{
	int rc = 0;
	const enum llmsim_recipe M = LLMSIM_RECIPE_MEGATRON, L = LLMSIM_RECIPE_LLAMA3;
	rc |= one("70b", "h200", 8, M, 0, 0, 5);
	rc |= one("70b", "h200", 512, M, 0, 0, 5);
	rc |= one("8b", "h200", 1024, M, 0, 0, 5);
	rc |= one("405b", "h200", 16384, M, 0, 0, 3);
	/* Llama 3 405B's layout pinned (Dubey et al. 2024 Table 4: tp 8, pp 16
	 * on 8,192 H100s), under each recipe: the llama3 recipe's rank-by-rank
	 * memory and schedule walk against Megatron's closed forms */
	rc |= one("405b", "h100-sxm5-80gb", 8192, M, 8, 16, 5);
	rc |= one("405b", "h100-sxm5-80gb", 8192, L, 8, 16, 5);
	return rc;
}
