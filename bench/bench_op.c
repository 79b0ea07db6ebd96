/*
 * bench_op.c - nanoseconds per llmsim_predict for each op kind (median of
 * 31 runs of a batch of predictions), on the h200 hardware file or the
 * GPU named by argv[1]. One prediction is meant to take well under a
 * microsecond: the plan search calls it millions of times.
 *
 *   llmsim-bench-op [gpu]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hw/gpu.h"
#include "sim/sim.h"

static const char *const specs[] = {
	"gemm m=8192 n=8192 k=8192",
	"gemm m=1 n=8192 k=8192",
	"gemm m=64 n=1024 k=16384",
	"gemm m=4096 n=4096 k=4096 dtype=fp8",
	"gemm m=16 n=4096 k=4096 b_dtype=int4",
	"ew kind=rmsnorm tokens=8192 hidden=8192",
	"ew kind=adamw tokens=1 hidden=8000000000",
	"attention impl=flash2 batch=4 heads=32 kv_heads=8 seq=8192 head_dim=128 causal=1",
	"attention impl=naive batch=1 heads=32 seq=2048 head_dim=128 pass=fwdbwd",
	"attention impl=flash3 batch=1 heads=64 kv_heads=8 seq=8192 head_dim=128 pass=fwdbwd",
	"decode impl=paged batch=64 heads=32 kv_heads=8 kv_len=4096 head_dim=128",
	"decode impl=flashdecoding batch=1 heads=128 kv_len=32768 head_dim=128 kv_lora_rank=512 rope_dim=64",
	"collective kind=allreduce bytes=1e9 gpus=16 nodes=2",
};

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct llmsim_gpu gpu;
	struct llmsim_err err = {0};
	if (llmsim_gpu_load(argc > 1 ? argv[1] : "h200", &gpu, &err)) {
		fprintf(stderr, "llmsim-bench-op: %s\n", err.msg);
		return 1;
	}
	enum { RUNS = 31, BATCH = 2000 };
	double sink = 0;
	printf("%-100s %10s\n", "op", "ns/pred");
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		struct llmsim_op op;
		struct llmsim_pred p;
		if (llmsim_op_parse(specs[i], &op, &err) || llmsim_predict(&gpu, &op, &p, &err)) {
			fprintf(stderr, "llmsim-bench-op: %s: %s\n", specs[i], err.msg);
			return 1;
		}
		double ns[RUNS];
		for (int r = 0; r < RUNS; r++) {
			double t0 = now_ns();
			for (int j = 0; j < BATCH; j++) {
				llmsim_predict(&gpu, &op, &p, NULL);
				sink += p.time_s;
			}
			ns[r] = (now_ns() - t0) / BATCH;
		}
		qsort(ns, RUNS, sizeof ns[0], cmp);
		printf("%-100s %10.0f\n", specs[i], ns[RUNS / 2]);
	}
	return sink < 0;
}
