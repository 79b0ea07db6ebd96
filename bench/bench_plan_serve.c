/*
 * bench_plan_serve.c - speed of the serving plan's capacity search (the
 * issue's target: 70B on H200s at 200 requests/s, TTFT p99 <= 2 s, TPOT
 * p99 <= 50 ms, without --gpus, within 5 s on a 2-core machine), and of
 * a fixed 8-GPU search for comparison. Prints, per case: replica layouts,
 * those a bound dropped, engine runs simulated, the answer, and the wall
 * and CPU time of the search (one thread).
 *
 *   LLMSIM_DATA_DIR=. build/bench/llmsim-bench-plan_serve
 */
#include <stdio.h>
#include <time.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/infer/plan_serve.h"

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int one(const char *model, const char *gpu, int gpus, double rate, double ttft,
	       double tpot)
{
	struct llmsim_err err = {0};
	static struct llmsim_model m;
	static struct llmsim_gpu g;
	if (llmsim_model_load(model, &m, &err) || llmsim_gpu_load(gpu, &g, &err)) {
		fprintf(stderr, "bench_plan_serve: %s\n", err.msg);
		return 1;
	}
	struct llmsim_plan_serve_cfg pc = {
		.model = &m, .gpu = &g, .gpus = gpus, .prompt = 1024, .output = 256,
		.load = LLMSIM_LOAD_RATE, .rate_per_s = rate, .ttft_slo_s = ttft, .tpot_slo_s = tpot,
	};
	struct llmsim_plan_serve_out o;
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	if (llmsim_plan_serve(&pc, &o, &err)) {
		fprintf(stderr, "bench_plan_serve: %s\n", err.msg);
		return 1;
	}
	double wall = now_s(CLOCK_MONOTONIC) - w0, cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	char lay[64] = "-";
	if (o.nrows)
		llmsim_plan_serve_layout(&o.rows[0], lay, sizeof lay);
	printf("%-6s %-5s gpus %-5s rate %5.0f: %3lld layouts (%lld bound) %5lld runs; "
	       "#1 %3d GPUs %-24s %s; %.2f s wall, %.2f s CPU\n",
	       model, gpu, gpus ? "fixed" : "fewest", rate, (long long)o.units,
	       (long long)o.units_pruned, (long long)o.simulated, o.nrows ? o.rows[0].gpus : 0, lay,
	       o.feasible ? "meets" : "misses", wall, cpu);
	llmsim_plan_serve_release(&o);
	return 0;
}

int main(void)
{
	int rc = one("70b", "h200", 0, 200, 2, 0.05); /* the target */
	rc |= one("70b", "h200", 8, 200, 2, 0.05);
	rc |= one("8b", "h100", 0, 500, 1, 0.03);
	rc |= one("70b", "h100", 0, 50, 2, 0.05);
	return rc;
}
