/*
 * fuzz_trace.c - libFuzzer target for the text form of traces
 * (llmsim_trace_text_read, what `llmsim trace import` and llmsim_trace_load
 * read). Every run the reader hands out must be consistent (records end
 * after they start, ranges sorted by id, names present), must write
 * (llmsim_trace_text_write) to text that reads back as the same records,
 * and must compare (llmsim_trace_compare, as `llmsim trace compare` does:
 * H200, Llama-3.1-8B shapes, replayed on the H100) to sums that are
 * numbers. A failed read must leave a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"
#include "models/model.h"
#include "fuzz_input.h"

static struct llmsim_gpu h200, h100;
static struct llmsim_model llama;

/* An order-independent digest of a trace's records. */
struct digest {
	size_t nk, nc, nr;
	uint64_t sum;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; s && *s; s++)
		h = mix(h, (unsigned char)*s);
	return h;
}

static void digest(const struct llmsim_trace *t, struct digest *d)
{
	d->nk = t->nkernels, d->nc = t->ncopies, d->nr = t->nranges;
	d->sum = str_hash(t->run.host) + str_hash(t->run.command) + str_hash(t->run.tool) +
		 (uint64_t)t->run.dropped_records;
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		d->sum += mix(mix(mix(str_hash(k->name), k->start_ns), k->end_ns),
			      (uint64_t)k->range_id + k->correlation_id);
	}
	for (size_t i = 0; i < t->ncopies; i++) {
		const struct llmsim_trace_copy *c = &t->copies[i];
		d->sum += mix(mix(mix(str_hash(c->dir), c->bytes), c->start_ns), c->kind);
	}
	for (size_t i = 0; i < t->nranges; i++) {
		const struct llmsim_trace_range *r = &t->ranges[i];
		d->sum += mix(mix(str_hash(r->name), (uint64_t)r->id), r->end_ns);
	}
}

static int reread(struct llmsim_trace *t, void *ctx)
{
	struct digest *want = ctx, got;
	digest(t, &got);
	if (memcmp(&got, want, sizeof got))
		abort();
	return 0;
}

static int one_run(struct llmsim_trace *t, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < t->nkernels; i++)
		if (!t->kernels[i].name || t->kernels[i].end_ns < t->kernels[i].start_ns)
			abort();
	for (size_t i = 0; i < t->ncopies; i++)
		if (t->copies[i].end_ns < t->copies[i].start_ns)
			abort();
	for (size_t i = 0; i < t->nranges; i++)
		if (!t->ranges[i].name || (i && t->ranges[i].id < t->ranges[i - 1].id))
			abort();

	/* written and read back: the same records */
	struct digest d;
	struct llmsim_err err = {0};
	char *buf = NULL;
	size_t len = 0;
	digest(t, &d);
	FILE *f = open_memstream(&buf, &len);
	if (!f || llmsim_trace_text_write(f, t, &err))
		abort();
	fclose(f);
	f = fmemopen(buf, len, "r");
	if (!f || llmsim_trace_text_read(f, "written", reread, &d, &err))
		abort();
	fclose(f);
	free(buf);

	/* compared with the model and replayed */
	struct llmsim_trace_cmp cmp;
	if (llmsim_trace_compare(t, &h200, &llama, &h100, 0, &cmp, &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	const struct llmsim_trace_class_sum *s = &cmp.total;
	if (s->kernels < 0 || isnan(s->measured_s) || isnan(s->predicted_s) ||
	    isnan(s->target_s) || isnan(s->replay_s) || s->measured_s < 0)
		abort();
	for (size_t i = 0; i < cmp.nrows; i++)
		if (isnan(cmp.rows[i].measured_s) || isnan(cmp.rows[i].predicted_s))
			abort();
	llmsim_trace_cmp_release(&cmp);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int loaded;
	struct llmsim_err err = {0};

	if (!loaded) {
		if (llmsim_gpu_load("h200", &h200, &err) || llmsim_gpu_load("h100", &h100, &err) ||
		    llmsim_model_load("llama-3.1-8b", &llama, &err))
			abort(); /* the shipped descriptions must load */
		loaded = 1;
	}
	FILE *f = fuzz_input_file(data, size);
	if (llmsim_trace_text_read(f, "fuzz.trace", one_run, NULL, &err) && !err.msg[0])
		abort();
	fclose(f);
	return 0;
}
