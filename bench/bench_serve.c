/*
 * bench_serve.c - how fast the serving simulation runs: requests simulated
 * per second for Llama 3.1 8B on one H200 and 70B on four, Poisson arrivals
 * with lognormal prompts and uniform outputs. The first run of each
 * configuration fills the step-price cache; the rest reuse nothing (each
 * run starts a fresh cache), so the figure includes the GPU-model calls.
 * Times are the thread's CPU time (per core, steady on a machine other
 * programs share), the mean of the runs, with the wall time beside.
 *
 *   llmsim-bench-serve [requests [runs]]   (default 5000 requests, 5 runs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/infer/serve.h"

static double now_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bench(const char *model, int tp, int64_t requests, double rate, int runs)
{
	static struct llmsim_model m;
	static struct llmsim_gpu g;
	struct llmsim_err e = {0};
	if (llmsim_model_load(model, &m, &e) || llmsim_gpu_load("h200", &g, &e)) {
		fprintf(stderr, "bench_serve: %s\n", e.msg);
		return 1;
	}
	struct llmsim_serve_cfg cfg;
	llmsim_serve_cfg_init(&cfg, &m, &g);
	cfg.infer.tp = tp;
	cfg.requests = requests;
	cfg.rate_per_s = rate;
	cfg.chunked_prefill = 1;
	llmsim_dist_parse("lognormal:6.5:0.8", &cfg.prompt, NULL);
	llmsim_dist_parse("uniform:16:512", &cfg.output, NULL);
	struct llmsim_serve_result r;
	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
	for (int i = 0; i < runs; i++) {
		cfg.seed = (uint64_t)i + 1;
		if (llmsim_serve_run(&cfg, &r, &e)) {
			fprintf(stderr, "bench_serve: %s\n", e.msg);
			return 1;
		}
	}
	double dt = (now_s(CLOCK_THREAD_CPUTIME_ID) - t0) / runs;
	double wall = (now_s(CLOCK_MONOTONIC) - w0) / runs;
	printf("%-14s tp %d  %6lld requests  %7lld steps  %5lld step parts priced  %9.2f ms (wall %9.2f)  %10.0f requests/s  %10.0f steps/s\n",
	       model, tp, (long long)requests, (long long)r.steps, (long long)r.priced, dt * 1e3,
	       wall * 1e3, (double)requests / dt, (double)r.steps / dt);
	return 0;
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 5000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	if (n < 1 || runs < 1) {
		fprintf(stderr, "usage: llmsim-bench-serve [requests [runs]]\n");
		return 2;
	}
	return bench("8b", 1, n, 20, runs) || bench("70b", 4, n, 10, runs);
}
