/*
 * inject_nvtx.c - NVTX ranges of an unmodified program, through the NVTX
 * injection interface: with NVTX_INJECTION64_PATH naming this library, the
 * program's first NVTX call loads it and calls InitializeInjectionNvtx2,
 * which points the core NVTX entry points (push/pop, start/end, plain and
 * domain) at the functions below.
 *
 * We implement the NVTX entry points ourselves rather than go through the
 * CUPTI NVTX callback domain (which crashed in CUPTI 13.0.0). Each push
 * also pushes the range id as a CUPTI external correlation id, so every
 * CUDA API call made inside the range - and through its correlation id the
 * kernel it launched - is tagged with the innermost range: kernels belong
 * to the range they were launched in, not the one open when they ran.
 *
 * Off unless LLMSIM_TRACE_NVTX=1, so an NVTX problem cannot spoil a run.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "inject.h"

#define CHUNK 4096
#define MAX_CHUNKS 4096 /* 16 M ranges */
#define MAX_DEPTH 128

struct range_rec {
	int64_t parent;
	char *name;
	uint64_t start_ns, end_ns;
	uint32_t thread;
	int depth;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct range_rec *chunks[MAX_CHUNKS];
static int64_t nranges;
static int attached;

static __thread int64_t stack[MAX_DEPTH];
static __thread unsigned char ext_pushed[MAX_DEPTH];
static __thread int depth;

int inject_nvtx_wanted(void)
{
	const char *e = getenv("LLMSIM_TRACE_NVTX");
	return e && !strcmp(e, "1");
}

int inject_nvtx_attached(void)
{
	return attached;
}

static uint64_t now_ns(void)
{
	uint64_t t = 0;
	cuptiGetTimestamp(&t);
	return t;
}

/* Record a new range; returns its id (from 1), 0 when full. */
static int64_t range_new(const char *name, int64_t parent, int d)
{
	uint64_t t = now_ns();
	char *copy = strdup(name ? name : "");
	pthread_mutex_lock(&lock);
	int64_t id = 0;
	int64_t c = nranges / CHUNK;
	if (c < MAX_CHUNKS && (chunks[c] || (chunks[c] = calloc(CHUNK, sizeof(struct range_rec))))) {
		struct range_rec *r = &chunks[c][nranges % CHUNK];
		r->parent = parent;
		r->name = copy;
		r->start_ns = t;
		r->end_ns = 0;
		r->thread = (uint32_t)syscall(SYS_gettid);
		r->depth = d;
		id = ++nranges;
		copy = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(copy);
	return id;
}

static void range_end(int64_t id)
{
	uint64_t t = now_ns();
	pthread_mutex_lock(&lock);
	if (id >= 1 && id <= nranges) {
		struct range_rec *r = &chunks[(id - 1) / CHUNK][(id - 1) % CHUNK];
		if (!r->end_ns)
			r->end_ns = t;
	}
	pthread_mutex_unlock(&lock);
}

static const char *attr_name(const nvtxEventAttributes_t *a)
{
	if (!a)
		return "";
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii)
		return a->message.ascii;
	if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE)
		return "(unicode name)";
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
		return "(registered string)";
	return "";
}

static int push(const char *name)
{
	int d = depth;
	int64_t parent = d > 0 && d <= MAX_DEPTH ? stack[d - 1] : 0;
	int64_t id = range_new(name, parent, d);
	if (d < MAX_DEPTH) {
		stack[d] = id;
		ext_pushed[d] = 0;
		if (id && inject_activity_on &&
		    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
							   (uint64_t)id) == CUPTI_SUCCESS)
			ext_pushed[d] = 1;
	}
	depth = d + 1;
	return d;
}

static int pop(void)
{
	if (depth <= 0)
		return -1;
	int d = --depth;
	if (d < MAX_DEPTH) {
		if (ext_pushed[d])
			cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
							      NULL);
		range_end(stack[d]);
	}
	return d;
}

static int NVTX_API my_push_a(const char *message) { return push(message); }
static int NVTX_API my_push_ex(const nvtxEventAttributes_t *a) { return push(attr_name(a)); }
static int NVTX_API my_pop(void) { return pop(); }
static nvtxRangeId_t NVTX_API my_start_a(const char *message)
{
	return (nvtxRangeId_t)range_new(message, 0, 0);
}
static nvtxRangeId_t NVTX_API my_start_ex(const nvtxEventAttributes_t *a)
{
	return (nvtxRangeId_t)range_new(attr_name(a), 0, 0);
}
static void NVTX_API my_end(nvtxRangeId_t id) { range_end((int64_t)id); }
static int NVTX_API my_dom_push_ex(nvtxDomainHandle_t dom, const nvtxEventAttributes_t *a)
{
	(void)dom;
	return push(attr_name(a));
}
static int NVTX_API my_dom_pop(nvtxDomainHandle_t dom)
{
	(void)dom;
	return pop();
}
static nvtxRangeId_t NVTX_API my_dom_start_ex(nvtxDomainHandle_t dom,
					      const nvtxEventAttributes_t *a)
{
	(void)dom;
	return (nvtxRangeId_t)range_new(attr_name(a), 0, 0);
}
static void NVTX_API my_dom_end(nvtxDomainHandle_t dom, nvtxRangeId_t id)
{
	(void)dom;
	range_end((int64_t)id);
}

static void set_entry(NvtxFunctionTable table, unsigned int n, unsigned int id,
		      NvtxFunctionPointer fn)
{
	if (table && id <= n && table[id])
		*table[id] = fn;
}

INJECT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
	if (!inject_nvtx_wanted() || !get_table)
		return 0; /* NVTX stays a no-op */
	const NvtxExportTableCallbacks *cb =
		(const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
		return 0;
	NvtxFunctionTable core = NULL, core2 = NULL;
	unsigned int ncore = 0, ncore2 = 0;
	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &ncore) || !core)
		return 0;
	/* n is the highest valid callback id of the table (NVTX's own
	 * implementation reports entries - 1). */
	set_entry(core, ncore, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)my_push_a);
	set_entry(core, ncore, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)my_push_ex);
	set_entry(core, ncore, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)my_pop);
	set_entry(core, ncore, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)my_start_a);
	set_entry(core, ncore, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)my_start_ex);
	set_entry(core, ncore, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)my_end);
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &ncore2) && core2) {
		set_entry(core2, ncore2, NVTX_CBID_CORE2_DomainRangePushEx,
			  (NvtxFunctionPointer)my_dom_push_ex);
		set_entry(core2, ncore2, NVTX_CBID_CORE2_DomainRangePop,
			  (NvtxFunctionPointer)my_dom_pop);
		set_entry(core2, ncore2, NVTX_CBID_CORE2_DomainRangeStartEx,
			  (NvtxFunctionPointer)my_dom_start_ex);
		set_entry(core2, ncore2, NVTX_CBID_CORE2_DomainRangeEnd,
			  (NvtxFunctionPointer)my_dom_end);
	}
	attached = 1;
	return 1;
}

int inject_nvtx_collect(struct llmsim_trace *t, uint64_t at_ns)
{
	pthread_mutex_lock(&lock);
	int rc = 0;
	for (int64_t i = 0; i < nranges && !rc; i++) {
		const struct range_rec *r = &chunks[i / CHUNK][i % CHUNK];
		struct llmsim_trace_range g = {
			.id = i + 1,
			.parent_id = r->parent,
			.name = r->name,
			.start_ns = r->start_ns,
			.end_ns = r->end_ns ? r->end_ns : at_ns,
			.thread = r->thread,
			.depth = r->depth,
		};
		rc = llmsim_trace_add_range(t, &g);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}
