/*
 * inject.c - libllmsim_inject.so: trace an unmodified CUDA program.
 *
 * Loaded by the CUDA driver through CUDA_INJECTION64_PATH, which calls
 * InitializeInjection() at CUDA initialization. We enable CUPTI activity
 * records for kernels (CONCURRENT_KERNEL, which does not serialize them),
 * copies and memsets; with LLMSIM_TRACE_NVTX=1 also the API records and
 * external correlations that tie kernels to NVTX ranges (inject_nvtx.c).
 *
 * The buffer callbacks only hand full buffers to a worker thread, which
 * copies the records into memory (no CUDA calls, no I/O), and take zeroed
 * buffers from a pool: the program is slowed by CUPTI's own record keeping
 * and little else. At exit a handler forces CUPTI to flush and writes everything in
 * one SQLite transaction to $LLMSIM_TRACE_DB (through calib/trace's
 * trace_db.c, compiled in) and/or the text form to $LLMSIM_TRACE_TXT.
 * Built without SQLite (LLMSIM_INJECT_NO_SQLITE), a DB path gets the text
 * form at PATH.txt instead, for `llmsim trace import`.
 *
 * Messages go to stderr prefixed "llmsim_inject:"; set LLMSIM_TRACE_QUIET=1
 * to keep only errors.
 */
#include <cupti.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

#define BUF_BYTES (8u << 20)
#define MAX_DEVICES 64

volatile int inject_activity_on;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct llmsim_trace tr;           /* kernels and copies so far */
static int inited;
static pid_t init_pid;          /* a forked child must not write the parent's records */
static int nvtx_on;
static int64_t dropped;
static uint64_t api_records, other_records;

/* correlation id -> external (range) id, from EXTERNAL_CORRELATION records */
struct ext_pair {
	uint32_t corr;
	int64_t ext;
};
static struct ext_pair *ext;
static size_t next, capext;

static struct {
	uint32_t id;
	int sms;
	char name[128];
} devices[MAX_DEVICES];
static int ndevices;

void inject_log(const char *fmt, ...)
{
	va_list ap;
	fputs("llmsim_inject: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int quiet(void)
{
	const char *q = getenv("LLMSIM_TRACE_QUIET");
	return q && !strcmp(q, "1");
}

static const char *memcpy_dir(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
	}
	return "?";
}


static void add_ext(uint32_t corr, uint64_t id)
{
	if (next == capext) {
		size_t c = capext ? 2 * capext : 4096;
		struct ext_pair *n = realloc(ext, c * sizeof *n);
		if (!n)
			return;
		ext = n;
		capext = c;
	}
	ext[next].corr = corr;
	ext[next++].ext = (int64_t)id;
}

/* One record, under the lock. */
static void take(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *a = (const CUpti_ActivityKernel10 *)rec;
		struct llmsim_trace_kernel k = {
			.name = a->name ? a->name : "?",
			.grid = {a->gridX, a->gridY, a->gridZ},
			.block = {a->blockX, a->blockY, a->blockZ},
			.cluster = {(int)a->clusterX, (int)a->clusterY, (int)a->clusterZ},
			.regs_per_thread = a->registersPerThread,
			.static_smem_bytes = a->staticSharedMemory,
			.dynamic_smem_bytes = a->dynamicSharedMemory,
			.start_ns = a->start,
			.end_ns = a->end,
			.stream = a->streamId,
			.device = a->deviceId,
			.correlation_id = a->correlationId,
		};
		llmsim_trace_add_kernel(&tr, &k);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *a = (const CUpti_ActivityMemcpy6 *)rec;
		struct llmsim_trace_copy c = {
			.kind = LLMSIM_TRACE_MEMCPY,
			.bytes = a->bytes,
			.start_ns = a->start,
			.end_ns = a->end,
			.stream = a->streamId,
			.device = a->deviceId,
			.correlation_id = a->correlationId,
		};
		snprintf(c.dir, sizeof c.dir, "%s", memcpy_dir(a->copyKind));
		llmsim_trace_add_copy(&tr, &c);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *a = (const CUpti_ActivityMemset4 *)rec;
		struct llmsim_trace_copy c = {
			.kind = LLMSIM_TRACE_MEMSET,
			.bytes = a->bytes,
			.start_ns = a->start,
			.end_ns = a->end,
			.stream = a->streamId,
			.device = a->deviceId,
			.correlation_id = a->correlationId,
		};
		llmsim_trace_add_copy(&tr, &c);
		break;
	}
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *a =
			(const CUpti_ActivityExternalCorrelation *)rec;
		if (a->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
			add_ext(a->correlationId, a->externalId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE: {
		const CUpti_ActivityDevice5 *a = (const CUpti_ActivityDevice5 *)rec;
		if (ndevices < MAX_DEVICES) {
			devices[ndevices].id = a->id;
			devices[ndevices].sms = (int)a->numMultiprocessors;
			snprintf(devices[ndevices].name, sizeof devices[0].name, "%s",
				 a->name ? a->name : "");
			ndevices++;
		}
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		api_records++; /* only there so that external correlations are made */
		break;
	default:
		other_records++;
	}
}

/* ---- buffers ------------------------------------------------------------
 * CUPTI asks for buffers on the program's own threads, and zeroes a buffer
 * there unless told it comes zeroed; a fresh 8 MB allocation also costs
 * page faults there. So buffers come from a pool of zeroed, already-touched
 * buffers (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER = 1), and full
 * ones go to a worker thread of ours that copies the records out, zeroes
 * the buffer and returns it to the pool: the program's threads only pass
 * pointers. */

#define POOL_MAX 8

struct full_buf {
	uint8_t *buf;
	size_t valid;
};

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static struct full_buf *queue;
static size_t qlen, qcap;
static uint8_t *pool[POOL_MAX];
static int npool;
static pthread_t worker;
static int worker_on, closing;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *p = NULL;
	pthread_mutex_lock(&qlock);
	if (npool)
		p = pool[--npool];
	pthread_mutex_unlock(&qlock);
	if (!p)
		p = calloc(1, BUF_BYTES); /* zeroed, 16-byte aligned */
	*buffer = p;
	*size = p ? BUF_BYTES : 0;
	*max_records = 0;
}

/* Copy the records of a full buffer out (takes the records lock). */
static void parse(uint8_t *buffer, size_t valid)
{
	CUpti_Activity *rec = NULL;
	pthread_mutex_lock(&lock);
	while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		take(rec);
	pthread_mutex_unlock(&lock);
}

/* Zero a parsed buffer and keep it for the next request. */
static void recycle(uint8_t *buffer, size_t valid)
{
	memset(buffer, 0, valid < BUF_BYTES ? valid : BUF_BYTES);
	pthread_mutex_lock(&qlock);
	if (npool < POOL_MAX) {
		pool[npool++] = buffer;
		buffer = NULL;
	}
	pthread_mutex_unlock(&qlock);
	free(buffer);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	(void)size;
	size_t d = 0;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS && d) {
		pthread_mutex_lock(&lock);
		dropped += (int64_t)d;
		pthread_mutex_unlock(&lock);
	}
	if (!buffer)
		return;
	pthread_mutex_lock(&qlock);
	int queued = 0;
	if (worker_on && !closing) {
		if (qlen == qcap) {
			size_t c = qcap ? 2 * qcap : 16;
			struct full_buf *n = realloc(queue, c * sizeof *n);
			if (n) {
				queue = n;
				qcap = c;
			}
		}
		if (qlen < qcap) {
			queue[qlen].buf = buffer;
			queue[qlen++].valid = valid;
			queued = 1;
			pthread_cond_signal(&qcond);
		}
	}
	pthread_mutex_unlock(&qlock);
	if (!queued) { /* no worker (or no memory): do it here */
		parse(buffer, valid);
		recycle(buffer, valid);
	}
}

static void *work(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&qlock);
		while (!qlen && !closing)
			pthread_cond_wait(&qcond, &qlock);
		if (!qlen) { /* closing and drained */
			pthread_mutex_unlock(&qlock);
			return NULL;
		}
		struct full_buf f = queue[0];
		memmove(queue, queue + 1, --qlen * sizeof *queue);
		pthread_mutex_unlock(&qlock);
		parse(f.buf, f.valid);
		recycle(f.buf, f.valid);
	}
}

/* Let the worker finish the queued buffers, and stop it. */
static void stop_worker(void)
{
	pthread_mutex_lock(&qlock);
	int on = worker_on;
	closing = 1;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	if (on)
		pthread_join(worker, NULL);
	pthread_mutex_lock(&qlock);
	worker_on = 0;
	pthread_mutex_unlock(&qlock);
}

static int cmp_ext(const void *a, const void *b)
{
	const struct ext_pair *x = a, *y = b;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int64_t range_of(uint32_t corr)
{
	size_t lo = 0, hi = next;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ext[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < next && ext[lo].corr == corr ? ext[lo].ext : 0;
}

static void fill_run(struct llmsim_trace_run *r)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(r->started_at, sizeof r->started_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
	gethostname(r->host, sizeof r->host - 1);
	FILE *f = fopen("/proc/self/cmdline", "rb");
	if (f) {
		size_t n = fread(r->command, 1, sizeof r->command - 1, f);
		fclose(f);
		for (size_t i = 0; i + 1 < n; i++)
			if (!r->command[i])
				r->command[i] = ' ';
		r->command[n] = 0;
	}
	uint32_t v = 0;
	cuptiGetVersion(&v);
	r->cupti_version = (int)v;
	snprintf(r->tool, sizeof r->tool, "llmsim_inject %s", LLMSIM_VERSION);
}

static struct llmsim_trace_run run_info;

static int write_text(const char *path, const struct llmsim_trace *t)
{
	/* Append: several traced processes may share one file; the lock keeps
	 * their runs whole. */
	FILE *f = fopen(path, "a");
	if (!f) {
		inject_log("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	flock(fileno(f), LOCK_EX);
	struct llmsim_err err = {0};
	int rc = llmsim_trace_text_write(f, t, &err);
	flock(fileno(f), LOCK_UN);
	if (fclose(f) && !rc) {
		inject_log("writing %s: %s", path, strerror(errno));
		return -1;
	}
	if (rc)
		inject_log("%s: %s", path, err.msg);
	return rc ? -1 : 0;
}

static void at_exit(void)
{
	if (!inject_activity_on || getpid() != init_pid)
		return;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	inject_activity_on = 0;
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
	if (nvtx_on) {
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
	}
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	stop_worker();

	uint64_t now = 0;
	cuptiGetTimestamp(&now);
	pthread_mutex_lock(&lock);
	tr.run = run_info;
	tr.run.dropped_records = dropped;
	tr.run.nvtx = nvtx_on && inject_nvtx_attached();
	if (next)
		qsort(ext, next, sizeof *ext, cmp_ext);
	uint32_t seen[MAX_DEVICES];
	int nseen = 0;
	for (size_t i = 0; i < tr.nkernels; i++) {
		struct llmsim_trace_kernel *k = &tr.kernels[i];
		k->range_id = range_of(k->correlation_id);
		int j = 0;
		while (j < nseen && seen[j] != k->device)
			j++;
		if (j == nseen && nseen < MAX_DEVICES)
			seen[nseen++] = k->device;
	}
	for (size_t i = 0; i < tr.ncopies; i++)
		tr.copies[i].range_id = range_of(tr.copies[i].correlation_id);
	tr.run.device_count = nseen;
	for (int i = 0; i < ndevices; i++) {
		if (nseen == 0 || devices[i].id == seen[0]) {
			snprintf(tr.run.device_name, sizeof tr.run.device_name, "%s",
				 devices[i].name);
			tr.run.device_sms = devices[i].sms;
			break;
		}
	}
	if (nvtx_on && inject_nvtx_collect(&tr, now))
		inject_log("out of memory collecting NVTX ranges");
	llmsim_trace_sort(&tr);

	const char *db = getenv("LLMSIM_TRACE_DB");
	const char *txt = getenv("LLMSIM_TRACE_TXT");
	int ok = 1;
	if (db && *db) {
#ifdef LLMSIM_INJECT_NO_SQLITE
		char alt[4096];
		snprintf(alt, sizeof alt, "%s.txt", db);
		inject_log("built without SQLite: writing the text form to %s "
			   "(load it with 'llmsim trace import --db %s --in %s')", alt, db, alt);
		ok = !write_text(alt, &tr);
#else
		struct llmsim_err err = {0};
		int64_t id = 0;
		if (llmsim_trace_db_write(db, &tr, &id, &err)) {
			inject_log("%s", err.msg);
			ok = 0;
		} else if (!quiet()) {
			inject_log("wrote run %lld to %s", (long long)id, db);
		}
#endif
	}
	if (txt && *txt)
		ok = !write_text(txt, &tr) && ok;
	if (!quiet() || !ok)
		inject_log("%zu kernels, %zu copies/memsets, %zu NVTX ranges, %lld dropped records%s",
			   tr.nkernels, tr.ncopies, tr.nranges, (long long)dropped,
			   nvtx_on && !inject_nvtx_attached()
				   ? " (NVTX asked for, but the program made no NVTX call"
				     " or NVTX_INJECTION64_PATH was unset)" : "");
	if (dropped)
		inject_log("warning: CUPTI dropped %lld records: the trace is incomplete",
			   (long long)dropped);
	llmsim_trace_release(&tr);
	free(queue);
	queue = NULL;
	qlen = qcap = 0;
	free(ext);
	ext = NULL;
	next = capext = 0;
	pthread_mutex_unlock(&lock);
}

static int enable(CUpti_ActivityKind k, const char *name)
{
	CUptiResult r = cuptiActivityEnable(k);
	if (r != CUPTI_SUCCESS) {
		const char *s = "?";
		cuptiGetResultString(r, &s);
		inject_log("cannot enable %s records: %s", name, s);
		return -1;
	}
	return 0;
}

INJECT_EXPORT int InitializeInjection(void)
{
	if (__atomic_exchange_n(&inited, 1, __ATOMIC_SEQ_CST))
		return 1; /* already initialized */
	const char *db = getenv("LLMSIM_TRACE_DB"), *txt = getenv("LLMSIM_TRACE_TXT");
	if (!(db && *db) && !(txt && *txt)) {
		inject_log("neither LLMSIM_TRACE_DB nor LLMSIM_TRACE_TXT is set: not tracing");
		return 1;
	}
	llmsim_trace_init(&tr);
	init_pid = getpid();
	fill_run(&run_info);
	/* Our buffers come zeroed (see buffer_requested): CUPTI need not zero
	 * them on the program's threads. */
	uint8_t zeroed = 1;
	size_t zsize = sizeof zeroed;
	cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zsize, &zeroed);
	if (!pthread_create(&worker, NULL, work, NULL))
		worker_on = 1;
	CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		const char *s = "?";
		cuptiGetResultString(r, &s);
		inject_log("cannot register CUPTI buffers (%s): not tracing "
			   "(another CUPTI client, such as torch.profiler, in this process?)", s);
		return 1;
	}
	enable(CUPTI_ACTIVITY_KIND_DEVICE, "device");
	if (enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"))
		return 1;
	enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy");
	enable(CUPTI_ACTIVITY_KIND_MEMSET, "memset");
	nvtx_on = inject_nvtx_wanted();
	if (nvtx_on) {
		/* External correlation records accompany API records: enable
		 * those too (their records are counted and dropped). */
		if (enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external correlation") ||
		    enable(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API") ||
		    enable(CUPTI_ACTIVITY_KIND_DRIVER, "driver API"))
			nvtx_on = 0;
	}
	inject_activity_on = 1;
	atexit(at_exit);
	if (!quiet())
		inject_log("tracing kernels, copies%s into %s%s%s", nvtx_on ? " and NVTX ranges" : "",
			   db && *db ? db : "", db && *db && txt && *txt ? " and " : "",
			   txt && *txt ? txt : "");
	return 1;
}
