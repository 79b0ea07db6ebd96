/*
 * fuzz_ranges.c - libFuzzer target for the NVTX range tree of `llmsim
 * trace show`: the checks every reader makes of a run's ranges
 * (llmsim_trace_check) and the summary that sums kernel time under each
 * range name (llmsim_trace_summarize). The input is a compact run, not a
 * file, so that the fuzzer spends its time on trees rather than syntax:
 *
 *   byte 0: ranges (mod 48); byte 1: kernels (mod 48); then per range 7
 *   bytes: id, parent id, name (one of six), start (2 bytes), duration (1),
 *   thread; then per kernel 6 bytes: range id, name (one of four), start
 *   (2 bytes), duration (2).
 *
 * A run the check refuses must say why; one it accepts must summarize,
 * and each range name's time must be what a plain walk finds: every
 * kernel counted once under each distinct name among the ranges enclosing
 * it (its range and that range's ancestors), the sums of the kernels and
 * classes the total.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"

#define MAX_RECORDS 48

static const char *const range_names[] = {"step", "forward", "backward", "layer", "model x", ""};
static const char *const kernel_names[] = {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
					   "_ZN5flash25flash_fwd_kernelEv", "elementwise", ""};

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15;
}

/* Each range name's kernel time by a walk up from every kernel. */
static void reference(const struct llmsim_trace *t, const char **names, double *s, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < t->nranges; i++) {
		size_t j = 0;
		while (j < *n && strcmp(names[j], t->ranges[i].name))
			j++;
		if (j == *n)
			names[(*n)++] = t->ranges[i].name, s[j] = 0;
	}
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		double d = (double)(k->end_ns - k->start_ns) * 1e-9;
		const char *seen[MAX_RECORDS];
		size_t nseen = 0, steps = 0;
		for (const struct llmsim_trace_range *r = llmsim_trace_range(t, k->range_id); r;
		     r = r->parent_id ? llmsim_trace_range(t, r->parent_id) : NULL) {
			if (++steps > t->nranges)
				abort(); /* a cycle the check let through */
			size_t a = 0;
			while (a < nseen && strcmp(seen[a], r->name))
				a++;
			if (a < nseen)
				continue;
			seen[nseen++] = r->name;
			for (size_t j = 0; j < *n; j++)
				if (!strcmp(names[j], r->name))
					s[j] += d;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t nr = data[0] % MAX_RECORDS, nk = data[1] % MAX_RECORDS;
	if (size < 2 + 7 * nr + 6 * nk)
		return 0;
	const uint8_t *p = data + 2;
	struct llmsim_trace t;
	struct llmsim_err err = {0};
	llmsim_trace_init(&t);
	for (size_t i = 0; i < nr; i++, p += 7) {
		uint64_t start = (uint64_t)p[3] << 8 | p[4];
		struct llmsim_trace_range r = {
			.id = p[0], .parent_id = p[1], .name = range_names[p[2] % 6],
			.start_ns = start, .end_ns = p[5] ? start + p[5] : 0, .thread = p[6] % 2,
		};
		if (llmsim_trace_add_range(&t, &r))
			abort();
	}
	for (size_t i = 0; i < nk; i++, p += 6) {
		uint64_t start = (uint64_t)p[2] << 8 | p[3];
		struct llmsim_trace_kernel k = {
			.name = kernel_names[p[1] % 4], .grid = {1, 1, 1}, .block = {128, 1, 1},
			.cluster = {1, 1, 1}, .start_ns = start,
			.end_ns = start + ((uint64_t)p[4] << 8 | p[5]), .range_id = p[0],
		};
		if (llmsim_trace_add_kernel(&t, &k))
			abort();
	}
	llmsim_trace_sort(&t);
	if (llmsim_trace_check(&t, "fuzz", &err)) {
		if (!err.msg[0])
			abort();
		llmsim_trace_release(&t);
		return 0;
	}

	struct llmsim_trace_summary sum;
	if (llmsim_trace_summarize(&t, &sum, &err))
		abort();
	const char *names[MAX_RECORDS];
	double want[MAX_RECORDS];
	size_t nn;
	reference(&t, names, want, &nn);
	if (sum.nranges != nn)
		abort();
	for (size_t i = 0; i < sum.nranges; i++) {
		size_t j = 0;
		while (j < nn && strcmp(names[j], sum.ranges[i].name))
			j++;
		if (j == nn || !close_to(sum.ranges[i].s, want[j]))
			abort();
		if (i && sum.ranges[i].s > sum.ranges[i - 1].s)
			abort(); /* heaviest first */
	}
	double total = 0, by_class = 0;
	int64_t count = 0;
	for (size_t i = 0; i < sum.nkernels; i++)
		total += sum.kernels[i].s, count += sum.kernels[i].count;
	for (int c = 0; c < LLMSIM_TC_COUNT; c++)
		by_class += sum.cls_s[c];
	if (count != (int64_t)t.nkernels || !close_to(total, sum.total_s) ||
	    !close_to(by_class, sum.total_s))
		abort();
	llmsim_trace_summary_release(&sum);
	llmsim_trace_release(&t);
	return 0;
}
