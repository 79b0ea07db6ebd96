/*
 * trace_check.c - what a trace must satisfy before anything analyses it,
 * checked the same way whichever form it was read from (trace_text.c,
 * trace_db.c): a trace is data from outside, and a crafted one must not
 * hang `trace show` (a range that is its own ancestor), wrap a duration
 * around (a kernel ending before it starts) or put negative grids into a
 * calibration store.
 *
 * The limits of one record are those of CUDA itself (CUDA C++ Programming
 * Guide, "Features and Technical Specifications": at most 1024 threads per
 * block, grid y and z below 65,536 blocks, 255 registers per thread) and of
 * the SQLite integer the timestamps are stored in (below 2^63 ns, the year
 * 2262 of the CUPTI clock, whose values are nanoseconds since 1970).
 * Depends on base/err.h only: the injection library compiles it in.
 */
#include "trace.h"

#include <string.h>

#include "base/bounds.h"

#define MAX_BLOCK_THREADS 1024
#define MAX_GRID_YZ 65535
#define MAX_REGS 255
#define MAX_NS ((uint64_t)INT64_MAX)

const char *llmsim_trace_run_bad(const struct llmsim_trace_run *r)
{
	if (r->device_sms < 0 || r->device_sms > (1 << 20) || r->device_count < 0 ||
	    r->device_count > (1 << 20))
		return "SM or device count out of range";
	if (r->cupti_version < 0)
		return "negative CUPTI version";
	if (r->nvtx != 0 && r->nvtx != 1)
		return "nvtx must be 0 or 1";
	if (r->dropped_records < 0)
		return "negative dropped-record count";
	return NULL;
}

const char *llmsim_trace_kernel_bad(const struct llmsim_trace_kernel *k)
{
	if (!k->name)
		return "kernel without a name";
	for (int d = 0; d < 3; d++) {
		if (k->grid[d] < 1 || k->block[d] < 1)
			return "grid or block dimension below 1 (every launch has at least one "
			       "block of one thread)";
		if (k->cluster[d] < 0)
			return "negative cluster dimension";
	}
	if (k->grid[1] > MAX_GRID_YZ || k->grid[2] > MAX_GRID_YZ)
		return "grid y or z above 65535 (CUDA's limit)";
	if ((int64_t)k->block[0] * k->block[1] * k->block[2] > MAX_BLOCK_THREADS)
		return "block of more than 1024 threads (CUDA's limit)";
	if (k->regs_per_thread < 0 || k->regs_per_thread > MAX_REGS)
		return "registers per thread outside 0..255";
	if (k->static_smem_bytes < 0 || k->dynamic_smem_bytes < 0)
		return "negative shared memory";
	if (k->end_ns < k->start_ns)
		return "kernel ends before it starts";
	if (k->end_ns > MAX_NS)
		return "timestamp past 2^63 ns";
	if (k->range_id < 0)
		return "negative range id";
	return NULL;
}

static int known_dir(const char *d)
{
	static const char *const dirs[] = {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA",
					   "AtoH", "AtoA", "AtoD", "DtoA", "?"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (!strcmp(d, dirs[i]))
			return 1;
	return 0;
}

const char *llmsim_trace_copy_bad(const struct llmsim_trace_copy *c)
{
	if (c->kind != LLMSIM_TRACE_MEMCPY && c->kind != LLMSIM_TRACE_MEMSET)
		return "unknown copy kind";
	if (c->kind == LLMSIM_TRACE_MEMCPY ? !known_dir(c->dir) : c->dir[0] != 0)
		return "unknown copy direction (memcpy: HtoD, DtoH, DtoD, HtoH, PtoP, ...; "
		       "memset: none)";
	if (c->end_ns < c->start_ns)
		return "copy ends before it starts";
	if (c->end_ns > MAX_NS || c->bytes > MAX_NS)
		return "timestamp or size past 2^63";
	if (c->range_id < 0)
		return "negative range id";
	return NULL;
}

const char *llmsim_trace_range_bad(const struct llmsim_trace_range *r)
{
	if (!r->name)
		return "range without a name";
	if (r->id < 1)
		return "range id below 1";
	if (r->parent_id < 0)
		return "negative parent id";
	if (r->parent_id == r->id)
		return "range is its own parent";
	if (r->parent_id > r->id)
		return "parent is not an earlier range (ranges are numbered as they open, "
		       "a parent before its children: a later one could close a cycle)";
	if (r->depth < 0 || r->depth > (1 << 20))
		return "depth out of range";
	if (r->end_ns && r->end_ns < r->start_ns) /* 0: never closed */
		return "range ends before it starts";
	if (r->end_ns > MAX_NS || r->start_ns > MAX_NS)
		return "timestamp past 2^63 ns";
	return NULL;
}

int llmsim_trace_check(const struct llmsim_trace *t, const char *name, struct llmsim_err *err)
{
	long long run = (long long)t->run.id;
	if (t->nkernels + t->ncopies + t->nranges > LLMSIM_MAX_TRACE_RECORDS)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: run %lld: more than %d records (the limit of one run)",
				      name, run, LLMSIM_MAX_TRACE_RECORDS);
	const char *why = llmsim_trace_run_bad(&t->run);
	if (why)
		return llmsim_err_set(err, LLMSIM_EPARSE, "%s: run %lld: %s", name, run, why);
	for (size_t i = 0; i < t->nranges; i++) {
		const struct llmsim_trace_range *r = &t->ranges[i];
		if ((why = llmsim_trace_range_bad(r)))
			return llmsim_err_set(err, LLMSIM_EPARSE, "%s: run %lld: range %lld: %s", name,
					      run, (long long)r->id, why);
		if (i && r->id <= t->ranges[i - 1].id) /* sorted by id: equal means twice */
			return llmsim_err_set(err, LLMSIM_EPARSE, "%s: run %lld: range %lld twice",
					      name, run, (long long)r->id);
		/* parents precede their children, so following parents ends: the
		 * tree has no cycle and is at most nranges deep */
		if (r->parent_id && !llmsim_trace_range(t, r->parent_id))
			return llmsim_err_set(err, LLMSIM_EPARSE,
					      "%s: run %lld: range %lld: parent %lld is not in the run",
					      name, run, (long long)r->id, (long long)r->parent_id);
	}
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		if ((why = llmsim_trace_kernel_bad(k)))
			return llmsim_err_set(err, LLMSIM_EPARSE, "%s: run %lld: kernel %zu: %s", name,
					      run, i + 1, why);
		if (k->range_id && !llmsim_trace_range(t, k->range_id))
			return llmsim_err_set(err, LLMSIM_EPARSE,
					      "%s: run %lld: kernel %zu: range %lld is not in the run",
					      name, run, i + 1, (long long)k->range_id);
	}
	for (size_t i = 0; i < t->ncopies; i++) {
		const struct llmsim_trace_copy *c = &t->copies[i];
		if ((why = llmsim_trace_copy_bad(c)))
			return llmsim_err_set(err, LLMSIM_EPARSE, "%s: run %lld: copy %zu: %s", name,
					      run, i + 1, why);
		if (c->range_id && !llmsim_trace_range(t, c->range_id))
			return llmsim_err_set(err, LLMSIM_EPARSE,
					      "%s: run %lld: copy %zu: range %lld is not in the run",
					      name, run, i + 1, (long long)c->range_id);
	}
	return 0;
}
