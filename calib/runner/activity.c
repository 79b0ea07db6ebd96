/*
 * activity.c - kernel timing through the CUPTI Activity API.
 *
 * CONCURRENT_KERNEL records (start/end in ns, launch shape, registers,
 * shared memory, name) and EXTERNAL_CORRELATION records (our id per case
 * invocation, pushed around each launch) arrive on a CUPTI thread in
 * buffers; the completion callback only copies them into arrays under a
 * mutex (no CUDA calls there). activity_take flushes and hands the records
 * to the main thread, joined to their external ids.
 */
#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "runner.h"

#define BUF_BYTES (8u << 20)

struct ext_map {
	uint32_t correlation;
	uint64_t external;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct kernel_record *recs;
static size_t nrecs, caprecs;
static struct ext_map *exts;
static size_t nexts, capexts;
static uint64_t dropped;
static int enabled;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 4096;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUF_BYTES);
	*size = *buffer ? BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	(void)size;
	CUpti_Activity *rec = NULL;
	pthread_mutex_lock(&mu);
	while (valid && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
			if (grow((void **)&recs, &caprecs, nrecs + 1, sizeof *recs)) {
				dropped++;
				continue;
			}
			struct kernel_record *r = &recs[nrecs++];
			memset(r, 0, sizeof *r);
			r->start_ns = k->start;
			r->end_ns = k->end;
			r->correlation = k->correlationId;
			r->grid[0] = k->gridX, r->grid[1] = k->gridY, r->grid[2] = k->gridZ;
			r->block[0] = k->blockX, r->block[1] = k->blockY, r->block[2] = k->blockZ;
			r->regs = k->registersPerThread;
			r->static_smem = (int)k->staticSharedMemory;
			r->dynamic_smem = (int)k->dynamicSharedMemory;
			r->name = strdup(k->name ? k->name : "?");
		} else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
			const CUpti_ActivityExternalCorrelation *e =
				(const CUpti_ActivityExternalCorrelation *)rec;
			if (grow((void **)&exts, &capexts, nexts + 1, sizeof *exts) == 0) {
				exts[nexts].correlation = e->correlationId;
				exts[nexts].external = e->externalId;
				nexts++;
			}
		}
	}
	size_t d = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS)
		dropped += d;
	pthread_mutex_unlock(&mu);
	free(buffer);
}

static int cupti_fail(CUptiResult r, const char *what, char *err, size_t errsz)
{
	const char *s = "?";
	cuptiGetResultString(r, &s);
	snprintf(err, errsz, "%s: %s", what, s);
	return -1;
}

int activity_init(char *err, size_t errsz)
{
	CUptiResult r = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	if (r != CUPTI_SUCCESS)
		return cupti_fail(r, "cuptiActivityRegisterCallbacks", err, errsz);
	r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r != CUPTI_SUCCESS)
		return cupti_fail(r, "cuptiActivityEnable(CONCURRENT_KERNEL)", err, errsz);
	r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	if (r != CUPTI_SUCCESS) {
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		return cupti_fail(r, "cuptiActivityEnable(EXTERNAL_CORRELATION)", err, errsz);
	}
	enabled = 1;
	return 0;
}

static int cmp_ext(const void *a, const void *b)
{
	const struct ext_map *x = a, *y = b;
	return x->correlation < y->correlation ? -1 : x->correlation > y->correlation;
}

int activity_take(struct kernel_record **out, size_t *n, char *err, size_t errsz)
{
	*out = NULL;
	*n = 0;
	if (!enabled)
		return 0;
	CUptiResult r = cuptiActivityFlushAll(0);
	if (r != CUPTI_SUCCESS)
		return cupti_fail(r, "cuptiActivityFlushAll", err, errsz);
	pthread_mutex_lock(&mu);
	qsort(exts, nexts, sizeof *exts, cmp_ext);
	for (size_t i = 0; i < nrecs; i++) {
		struct ext_map key = {.correlation = recs[i].correlation};
		const struct ext_map *m = nexts ? bsearch(&key, exts, nexts, sizeof *exts, cmp_ext)
						: NULL;
		recs[i].external = m ? m->external : 0;
	}
	*out = recs;
	*n = nrecs;
	recs = NULL;
	nrecs = caprecs = 0;
	nexts = 0;
	pthread_mutex_unlock(&mu);
	return (int)*n;
}

void activity_free(struct kernel_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].name);
	free(r);
}

int activity_push(uint64_t id)
{
	if (!enabled)
		return 0;
	return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) ==
			       CUPTI_SUCCESS
		       ? 0
		       : -1;
}

int activity_pop(void)
{
	uint64_t last = 0;
	if (!enabled)
		return 0;
	return cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
						     &last) == CUPTI_SUCCESS
		       ? 0
		       : -1;
}

int activity_pause(int paused)
{
	if (!enabled)
		return 0;
	CUptiResult r = paused ? cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			       : cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	return r == CUPTI_SUCCESS ? 0 : -1;
}

uint64_t activity_dropped(void)
{
	pthread_mutex_lock(&mu);
	uint64_t d = dropped;
	pthread_mutex_unlock(&mu);
	return d;
}

void activity_shutdown(void)
{
	if (!enabled)
		return;
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	enabled = 0;
	struct kernel_record *r;
	size_t n;
	pthread_mutex_lock(&mu);
	r = recs, n = nrecs;
	recs = NULL, nrecs = caprecs = 0;
	free(exts);
	exts = NULL, nexts = capexts = 0;
	pthread_mutex_unlock(&mu);
	activity_free(r, n);
}
