/*
 * bench_plan.c - speed of the training-configuration search (one core).
 *
 * Prints, for a few (model, GPU count) searches: configurations
 * enumerated per second (every point of the space, invalid subtrees
 * counted as skipped), configurations fully evaluated per second (memory
 * and step time computed: the feasible plus the out-of-memory ones), and
 * the wall time of `llmsim plan --model 405b --gpus 16384` (cold: op cache
 * empty; warm: second run on the same context). The space includes the
 * three offload modes (none, optimizer, params), 3x the configurations
 * of a search without offload.
 *
 *   LLMSIM_DATA_DIR=. build/bench/llmsim-bench-plan
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"

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
	struct llmsim_plan_req q = {.gpus = gpus, .seq = 4096, .global_batch = 1024,
				    .dtype = LLMSIM_DT_BF16, .recipe = LLMSIM_RECIPE_MEGATRON,
				    .moe_imbalance = 1, .top = 5};
	double cold = 0, warm = 1e300;
	int64_t evaluated = 0, full = 0;
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
		evaluated = o.evaluated;
		full = o.feasible + o.rejected[LLMSIM_REJ_OOM];
		llmsim_plan_out_release(&o);
	}
	if (reps < 2)
		warm = cold;
	printf("%-8s %6d GPUs  %9lld configs (%8lld fully evaluated)  cold %8.2f ms  warm %8.2f ms"
	       "  %7.2f M configs/s  %6.2f M evaluated/s\n",
	       model, gpus, (long long)evaluated, (long long)full, cold * 1e3, warm * 1e3,
	       evaluated / warm / 1e6, full / warm / 1e6);
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
