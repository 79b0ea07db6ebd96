/*
 * trace.h - a captured CUDA program: its kernels, copies/memsets and NVTX
 * ranges, as recorded by the injection library (calib/inject/), and the
 * two places such a trace lives: the trace tables of an llmsim SQLite file
 * and a compact text form (the fallback the injection library writes when
 * it was built without SQLite; `llmsim trace import` loads it).
 *
 * Timestamps are CUPTI's, in nanoseconds (one clock for kernels, copies
 * and ranges). Kernel and copy records name the innermost NVTX push/pop
 * range open on the launching thread when they were launched (range_id,
 * local to the run; 0 = none), so attribution is by launch, not by the
 * GPU's later execution window.
 *
 * This header and trace_db.c / trace_text.c / trace_check.c depend on
 * base/ only (err, lines, bounds), so that the injection library can
 * compile them in.
 */
#ifndef LLMSIM_TRACE_H
#define LLMSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "base/err.h"

#define LLMSIM_TRACE_SCHEMA_VERSION 1

/* One run: one traced process. Strings may be "". */
struct llmsim_trace_run {
	int64_t id;               /* trace_runs.id (0 before it is stored) */
	char started_at[32];      /* ISO 8601 UTC */
	char host[64];
	char command[512];        /* /proc/self/cmdline, spaces between args */
	char device_name[128];    /* "NVIDIA H200" (device of the first record) */
	int device_sms;
	int device_count;         /* distinct devices that ran kernels */
	int cupti_version;        /* cuptiGetVersion() */
	int nvtx;                 /* NVTX ranges were captured */
	int64_t dropped_records;  /* records CUPTI dropped (buffers full) */
	char tool[64];            /* "llmsim_inject 0.1.0" */
};

/* One kernel (CUPTI CONCURRENT_KERNEL record). name is owned by the trace. */
struct llmsim_trace_kernel {
	const char *name;         /* mangled, as CUPTI reports it */
	int grid[3], block[3], cluster[3];
	int regs_per_thread;
	int static_smem_bytes, dynamic_smem_bytes;
	uint64_t start_ns, end_ns;
	uint32_t stream, device, correlation_id;
	int64_t range_id;         /* innermost push/pop range at launch, 0 none */
};

enum llmsim_trace_copy_kind { LLMSIM_TRACE_MEMCPY, LLMSIM_TRACE_MEMSET };

/* One copy or memset (CUPTI MEMCPY / MEMSET records). */
struct llmsim_trace_copy {
	enum llmsim_trace_copy_kind kind;
	char dir[8];              /* memcpy: "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "?"; memset: "" */
	uint64_t bytes;
	uint64_t start_ns, end_ns;
	uint32_t stream, device, correlation_id;
	int64_t range_id;
};

/* One NVTX range: push/pop (nested per thread) or start/end (parent 0). */
struct llmsim_trace_range {
	int64_t id;               /* local to the run, from 1 */
	int64_t parent_id;        /* enclosing push/pop range, 0 none */
	const char *name;         /* owned by the trace */
	uint64_t start_ns, end_ns;/* CPU time of push and pop (CUPTI clock) */
	uint32_t thread;          /* OS thread id */
	int depth;                /* 0 outermost */
};

/* A whole run in memory. */
struct llmsim_trace {
	struct llmsim_trace_run run;
	struct llmsim_trace_kernel *kernels;
	size_t nkernels;
	struct llmsim_trace_copy *copies;
	size_t ncopies;
	struct llmsim_trace_range *ranges; /* sorted by id */
	size_t nranges;
	/* private: interned strings and the record capacities */
	char **strs;
	size_t nstrs, capstrs;
	uint32_t *hslots;         /* open addressing: index + 1 into strs */
	size_t nslots;
	size_t capkernels, capcopies, capranges;
};

/* Empty trace; llmsim_trace_release frees everything it owns. */
void llmsim_trace_init(struct llmsim_trace *t);
void llmsim_trace_release(struct llmsim_trace *t);
/* Append records (strings are copied). 0 or LLMSIM_ENOMEM. */
int llmsim_trace_add_kernel(struct llmsim_trace *t, const struct llmsim_trace_kernel *k);
int llmsim_trace_add_copy(struct llmsim_trace *t, const struct llmsim_trace_copy *c);
int llmsim_trace_add_range(struct llmsim_trace *t, const struct llmsim_trace_range *r);
/* The range with this id, or NULL (binary search: ranges sorted by id). */
const struct llmsim_trace_range *llmsim_trace_range(const struct llmsim_trace *t, int64_t id);
/* Sort ranges by id and kernels/copies by start time. */
void llmsim_trace_sort(struct llmsim_trace *t);

/* ---- Checks ------------------------------------------------------------
 * What every reader checks of every run, whichever form it comes in
 * (trace_check.c), so that nothing downstream meets an impossible record. */

/* Why one record cannot come from a real run (a short phrase), or NULL:
 * grids and blocks of at least one, at most 1024 threads a block, times
 * that do not run backwards and fit 2^63 ns, a known copy kind and
 * direction, a range whose parent opened before it. */
const char *llmsim_trace_run_bad(const struct llmsim_trace_run *r);
const char *llmsim_trace_kernel_bad(const struct llmsim_trace_kernel *k);
const char *llmsim_trace_copy_bad(const struct llmsim_trace_copy *c);
const char *llmsim_trace_range_bad(const struct llmsim_trace_range *r);

/* The whole of a sorted run (llmsim_trace_sort): every record as above,
 * range ids unique, every parent and every kernel's or copy's range a
 * range of the run, at most LLMSIM_MAX_TRACE_RECORDS records. Since each
 * parent opened before its child, following parents always ends: the
 * range tree is acyclic. Errors read "name: run N: kernel K: why". */
int llmsim_trace_check(const struct llmsim_trace *t, const char *name, struct llmsim_err *err);

/* ---- The SQLite tables ------------------------------------------------
 * trace_meta(key, value) with the row ('trace_schema_version', '1');
 * trace_runs, trace_kernels, trace_memcpys (copies and memsets, column
 * kind 'memcpy'/'memset'), trace_ranges; all CREATE TABLE IF NOT EXISTS,
 * so they live beside the calibration store's tables in one file. */

/* Write a trace as a new run in one transaction (the file is created if
 * needed; nothing is written on failure). *run_id gets the new id. */
int llmsim_trace_db_write(const char *path, const struct llmsim_trace *t,
			  int64_t *run_id, struct llmsim_err *err);

/* Load run run_id (0: the last run) of a database. Errors (no file, not
 * SQLite, truncated/corrupt, no trace tables, newer schema, no runs) come
 * back as one line naming the file. t must be initialized. */
int llmsim_trace_db_read(const char *path, int64_t run_id, struct llmsim_trace *t,
			 struct llmsim_err *err);

/* Runs stored in a database: calls fn for each, oldest first. */
int llmsim_trace_db_runs(const char *path,
			 int (*fn)(const struct llmsim_trace_run *run, int64_t nkernels,
				   void *ctx),
			 void *ctx, struct llmsim_err *err);

/* ---- The text form ------------------------------------------------------
 * Tab-separated lines; strings escape \ TAB LF CR as \\ \t \n \r:
 *   llmsim-trace<TAB>1                           (starts a run)
 *   run<TAB>started_at<TAB>host<TAB>command<TAB>device_name<TAB>sms<TAB>
 *       device_count<TAB>cupti_version<TAB>nvtx<TAB>dropped<TAB>tool
 *   kernel<TAB>name<TAB>gx<TAB>gy<TAB>gz<TAB>bx<TAB>by<TAB>bz<TAB>cx<TAB>cy<TAB>cz<TAB>
 *       regs<TAB>static_smem<TAB>dynamic_smem<TAB>start_ns<TAB>end_ns<TAB>
 *       stream<TAB>device<TAB>correlation<TAB>range_id
 *   memcpy|memset<TAB>dir<TAB>bytes<TAB>start_ns<TAB>end_ns<TAB>stream<TAB>
 *       device<TAB>correlation<TAB>range_id
 *   range<TAB>id<TAB>parent_id<TAB>name<TAB>start_ns<TAB>end_ns<TAB>thread<TAB>depth
 *   end<TAB>kernels<TAB>copies<TAB>ranges         (closes the run: counts checked)
 * '#' lines and blank lines are ignored. A file may hold several runs (one
 * per traced process); a run without its "end" line is truncated. */

/* Write t as one run. 0 or LLMSIM_EIO. */
int llmsim_trace_text_write(FILE *f, const struct llmsim_trace *t, struct llmsim_err *err);

/* Read every run of a text file: fn gets each complete run, checked
 * (llmsim_trace_check) and numbered 1.. in file order in run.id (the trace
 * is released after fn returns; a nonzero return stops and is returned).
 * Lines are at most LLMSIM_MAX_LINE bytes and the file at most
 * LLMSIM_MAX_TRACE_TEXT_BYTES. Errors read "name:line: message". */
int llmsim_trace_text_read(FILE *f, const char *name,
			   int (*fn)(struct llmsim_trace *t, void *ctx), void *ctx,
			   struct llmsim_err *err);

/* ---- Either form ----------------------------------------------------- */

/* Load run run_id (0: the last) from path, whichever form it is in: an
 * SQLite file with trace tables, a text trace, or a gzip-compressed text
 * trace (read through zlib: base/gzfile.h). Text runs are numbered 1.. in file
 * order. t must be initialized. */
int llmsim_trace_load(const char *path, int64_t run_id, struct llmsim_trace *t,
		      struct llmsim_err *err);

#endif
