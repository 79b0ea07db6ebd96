/*
 * bench_plan.c - speed of the training-configuration search (one core).
 *
 * Prints, for a few (model, GPU count) searches with the default search
 * (the batch rule, uneven stages, 1-8 chunks per stage, the three offload
 * modes): the configurations of the space, those priced (memory and step
 * time computed: the feasible and the out-of-memory ones) and those pruned
 * before pricing (invalid subtrees, counted whole), the priced and the
 * pruned per second, and the wall time (cold: op cache empty; warm: best
 * of the later runs on the same context), the ranking included.
 *
 *   LLMSIM_DATA_DIR=. build/bench/llmsim-bench-plan
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/plan.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int one(const char *model, int gpus, int reps)
{
	struct llmsim_err err = {0};
	struct llmsim_model m;
	struct llmsim_gpu g;
	if (llmsim_model_load(model, &m, &err) || llmsim_gpu_load("h200", &g, &err)) {
		fprintf(stderr, "bench_plan: %s\n", err.msg);
		return 1;
	}
	struct llmsim_train_ctx *ctx;
	if (llmsim_train_ctx_new(&m, &g, &ctx, &err)) {
		fprintf(stderr, "bench_plan: %s\n", err.msg);
		return 1;
	}
	struct llmsim_plan_req q = {.gpus = gpus, .seq = 4096, .dtype = LLMSIM_DT_BF16,
				    .recipe = LLMSIM_RECIPE_MEGATRON, .moe_imbalance = 1, .top = 5};
	double cold = 0, warm = 1e300;
	int64_t priced = 0, pruned = 0, batch = 0;
	for (int r = 0; r < reps; r++) {
		struct llmsim_plan_out o;
		double t0 = now_s();
		if (llmsim_plan_run(ctx, &q, &o, &err)) {
			fprintf(stderr, "bench_plan: %s\n", err.msg);
			llmsim_train_ctx_free(ctx);
			return 1;
		}
		double t = now_s() - t0;
		if (r == 0)
			cold = t;
		else if (t < warm)
			warm = t;
		priced = o.priced;
		pruned = o.pruned;
		batch = o.global_batch;
		llmsim_plan_out_release(&o);
	}
	if (reps < 2)
		warm = cold;
	printf("%-6s %6d GPUs  batch %5lld  %9lld configs: %8lld priced, %9lld pruned  cold %8.2f ms"
	       "  warm %8.2f ms  %6.2f M priced/s  %7.2f M pruned/s\n",
	       model, gpus, (long long)batch, (long long)(priced + pruned), (long long)priced,
	       (long long)pruned, cold * 1e3, warm * 1e3, priced / warm / 1e6, pruned / warm / 1e6);
	llmsim_train_ctx_free(ctx);
	return 0;
}

int main(void)
{
	int rc = 0;
	rc |= one("70b", 8, 5);
	rc |= one("70b", 512, 5);
	rc |= one("8b", 1024, 5);
	rc |= one("405b", 16384, 3);
	return rc;
}
