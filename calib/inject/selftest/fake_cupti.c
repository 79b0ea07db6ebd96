/*
 * fake_cupti.c - a stand-in libcupti.so.13 for testing libllmsim_inject.so
 * without a GPU: the activity calls succeed, and fake_launch/fake_memcpy
 * queue the records CUPTI would deliver (with the external correlation
 * record of the innermost pushed id) until the next cuptiActivityFlushAll
 * hands them to the registered buffer callbacks. Implements only what the
 * injection library calls.
 */
#include <cupti.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc comp;
static _Alignas(8) unsigned char pend[1 << 16];
static size_t npend;
static uint64_t extstack[64];
static int next;
static uint32_t corr = 100;

static size_t rsize(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return (sizeof(CUpti_ActivityKernel10) + 7) & ~7u;
	case CUPTI_ACTIVITY_KIND_MEMCPY: return (sizeof(CUpti_ActivityMemcpy6) + 7) & ~7u;
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return (sizeof(CUpti_ActivityExternalCorrelation) + 7) & ~7u;
	case CUPTI_ACTIVITY_KIND_DEVICE: return (sizeof(CUpti_ActivityDevice5) + 7) & ~7u;
	default: return 8;
	}
}

static void *room(CUpti_ActivityKind k)
{
	if (npend + rsize(k) > sizeof pend)
		abort();
	void *p = pend + npend;
	memset(p, 0, rsize(k));
	npend += rsize(k);
	return p;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
						  CUpti_BuffersCallbackCompleteFunc c)
{
	req = r;
	comp = c;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if (k == CUPTI_ACTIVITY_KIND_DEVICE) {
		CUpti_ActivityDevice5 *d = room(k);
		d->kind = k;
		d->name = "NVIDIA H200";
		d->numMultiprocessors = 132;
	}
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size,
					     void *value)
{
	(void)attr;
	(void)size;
	(void)value;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	(void)k;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	(void)r;
	*s = "fake";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	*v = 130001;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *d)
{
	(void)c;
	(void)s;
	*d = 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k,
							  uint64_t id)
{
	(void)k;
	if (next == 64)
		return CUPTI_ERROR_INVALID_PARAMETER;
	extstack[next++] = id;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k,
							 uint64_t *id)
{
	(void)k;
	if (!next)
		return CUPTI_ERROR_QUEUE_EMPTY;
	next--;
	if (id)
		*id = extstack[next];
	return CUPTI_SUCCESS;
}

static void ext(uint32_t c)
{
	if (!next)
		return;
	CUpti_ActivityExternalCorrelation *e = room(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	e->externalId = extstack[next - 1];
	e->correlationId = c;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag);

EXPORT void fake_launch(const char *name, int grid_x, int block_x, uint64_t start, uint64_t dur)
{
	/* hand over a buffer now and then, as CUPTI does while a program runs */
	if (npend > sizeof pend / 2)
		cuptiActivityFlushAll(0);
	uint32_t c = corr++;
	ext(c);
	CUpti_ActivityKernel10 *k = room(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->name = name; /* a string literal of the caller: lives long enough */
	k->gridX = grid_x;
	k->gridY = k->gridZ = 1;
	k->blockX = block_x;
	k->blockY = k->blockZ = 1;
	k->registersPerThread = 168;
	k->dynamicSharedMemory = 200000;
	k->start = start;
	k->end = start + dur;
	k->streamId = 7;
	k->correlationId = c;
	k->clusterX = 2;
	k->clusterY = k->clusterZ = 1;
}

EXPORT void fake_memcpy(uint64_t bytes, uint64_t start, uint64_t dur)
{
	uint32_t c = corr++;
	ext(c);
	CUpti_ActivityMemcpy6 *m = room(CUPTI_ACTIVITY_KIND_MEMCPY);
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->bytes = bytes;
	m->start = start;
	m->end = start + dur;
	m->streamId = 7;
	m->correlationId = c;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	if (!npend || !req || !comp)
		return CUPTI_SUCCESS;
	uint8_t *buf = NULL;
	size_t size = 0, maxr = 0;
	req(&buf, &size, &maxr);
	if (!buf || size < npend)
		return CUPTI_ERROR_UNKNOWN;
	memcpy(buf, pend, npend);
	size_t valid = npend;
	npend = 0;
	comp(NULL, 0, buf, size, valid);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + rsize((*rec)->kind) : buf;
	if (p >= buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}
