/*
 * bench_trace.c - time of the trace paths whose cost grows with the number
 * of distinct names: `trace compare` (one row per distinct kernel), the
 * `trace show` summary (kernel and NVTX range names) and the text reader.
 *
 * A synthetic run of N distinct kernel names, each launched twice, inside
 * one "prefill b=1 s=512" step range holding N/8 nested "layer" ranges;
 * compared on the H200 with Llama 3.1 8B shapes. Doubling N must double
 * the time (linear); a quadratic path quadruples it.
 *
 *   llmsim-bench-trace [N...]         (default 10000 20000 40000 80000)
 *   llmsim-bench-trace --write FILE N (write that trace as text and exit)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int make(struct llmsim_trace *t, long n)
{
	llmsim_trace_init(t);
	snprintf(t->run.device_name, sizeof t->run.device_name, "NVIDIA H200");
	t->run.device_sms = 132;
	t->run.nvtx = 1;
	long nlayers = n / 8 > 0 ? n / 8 : 1;
	struct llmsim_trace_range step = {.id = 1, .name = "prefill b=1 s=512", .start_ns = 1000,
					  .end_ns = 1000 + (uint64_t)n * 4000 + 1000};
	if (llmsim_trace_add_range(t, &step))
		return -1;
	for (long i = 0; i < nlayers; i++) {
		struct llmsim_trace_range r = {.id = 2 + i, .parent_id = 1, .name = "layer",
					       .start_ns = 1000 + (uint64_t)i, .end_ns = step.end_ns,
					       .depth = 1};
		if (llmsim_trace_add_range(t, &r))
			return -1;
	}
	char name[64];
	for (long rep = 0; rep < 2; rep++)
		for (long i = 0; i < n; i++) {
			snprintf(name, sizeof name, "vectorized_elementwise_kernel_%ld", i);
			uint64_t s = 2000 + (uint64_t)(rep * n + i) * 2000;
			struct llmsim_trace_kernel k = {
				.name = name, .grid = {1024, 1, 1}, .block = {256, 1, 1},
				.start_ns = s, .end_ns = s + 1500, .correlation_id = (uint32_t)i,
				.range_id = 2 + i % nlayers,
			};
			if (llmsim_trace_add_kernel(t, &k))
				return -1;
		}
	llmsim_trace_sort(t);
	return 0;
}

static int count_run(struct llmsim_trace *t, void *ctx)
{
	*(size_t *)ctx += t->nkernels;
	return 0;
}

int main(int argc, char **argv)
{
	struct llmsim_err err = {0};
	if (argc == 4 && !strcmp(argv[1], "--write")) {
		struct llmsim_trace t;
		FILE *f = fopen(argv[2], "w");
		if (!f || make(&t, atol(argv[3])) || llmsim_trace_text_write(f, &t, &err)) {
			fprintf(stderr, "bench_trace: cannot write %s\n", argv[2]);
			return 1;
		}
		fclose(f);
		llmsim_trace_release(&t);
		return 0;
	}
	static struct llmsim_gpu g;
	static struct llmsim_model m;
	if (llmsim_gpu_load("h200", &g, &err) || llmsim_model_load("8b", &m, &err)) {
		fprintf(stderr, "bench_trace: %s\n", err.msg);
		return 1;
	}
	static const long def[] = {10000, 20000, 40000, 80000};
	int nn = argc > 1 ? argc - 1 : 4;
	for (int a = 0; a < nn; a++) {
		long n = argc > 1 ? atol(argv[a + 1]) : def[a];
		struct llmsim_trace t;
		if (n < 1 || make(&t, n)) {
			fprintf(stderr, "bench_trace: bad N or out of memory\n");
			return 1;
		}
		/* the text form, written and read back */
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		if (!f || llmsim_trace_text_write(f, &t, &err))
			return 1;
		fclose(f);
		double t0 = now_s();
		f = fmemopen(buf, len, "r");
		size_t nread = 0;
		if (!f || llmsim_trace_text_read(f, "bench", count_run, &nread, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.msg);
			return 1;
		}
		fclose(f);
		double t_read = now_s() - t0;
		free(buf);
		t0 = now_s();
		struct llmsim_trace_summary s;
		if (llmsim_trace_summarize(&t, &s, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.msg);
			return 1;
		}
		double t_show = now_s() - t0;
		llmsim_trace_summary_release(&s);
		t0 = now_s();
		struct llmsim_trace_cmp c;
		if (llmsim_trace_compare(&t, &g, &m, NULL, 0, &c, &err)) {
			fprintf(stderr, "bench_trace: %s\n", err.msg);
			return 1;
		}
		double t_cmp = now_s() - t0;
		printf("%6ld distinct kernels (%7zu launches, %6zu ranges): compare %9.1f ms (%zu rows)"
		       "  show summary %9.1f ms  text read %8.1f ms\n",
		       n, t.nkernels, t.nranges, t_cmp * 1e3, c.nrows, t_show * 1e3, t_read * 1e3);
		fflush(stdout);
		llmsim_trace_cmp_release(&c);
		llmsim_trace_release(&t);
	}
	return 0;
}
