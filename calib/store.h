/*
 * store.h - the calibration store: measurements of real kernel runs in
 * SQLite, with devices, software versions, clocks, runs, cases (one op
 * invocation, maybe several kernels), kernels and hardware counters.
 *
 * The only module that includes sqlite3.h. Each run is written inside one
 * transaction (llmsim_store_run_begin .. llmsim_store_run_commit), so a
 * writer killed half-way leaves the database exactly as it was (its
 * journal is rolled back by the next open). At rest a store is in SQLite's
 * rollback-journal mode, so it can be read from a read-only folder or
 * disk, and a reader writes nothing beside it. The schema carries a
 * version in table `meta`. Opening an older database to write migrates it
 * forward inside a transaction; opening it to read changes nothing (the
 * read API reads either version). Every open checks the whole file (PRAGMA
 * integrity_check, foreign_key_check, and that its tables are tables and
 * it holds no trigger: calib/sqlite_open.h): a damaged or crafted store is
 * refused in one line, and nothing is written into it.
 */
#ifndef LLMSIM_STORE_H
#define LLMSIM_STORE_H

#include <stdint.h>
#include <stdio.h>
#include "base/err.h"

#define LLMSIM_STORE_SCHEMA_VERSION 3

struct llmsim_store; /* opaque */

/* READ: an existing store, read-only (never written, never migrated).
 * WRITE: an existing store, read-write, migrated to the current schema.
 * CREATE: as WRITE, created when absent (":memory:" for one in memory). */
enum { LLMSIM_STORE_READ = 0, LLMSIM_STORE_CREATE = 1, LLMSIM_STORE_WRITE = 2 };

/* The GPU and software a run was made on. Strings may be "" if unknown. */
struct llmsim_device_info {
	char name[128];           /* "NVIDIA H200" */
	char hw_name[64];         /* llmsim hardware name it maps to: "h200" */
	char uuid[64];
	int sms;
	int device_count;         /* GPUs used by the run (1 unless multi-GPU) */
	double hbm_bytes;
	double l2_bytes;
	double sm_clock_max_hz;
	double mem_clock_hz;
	char driver[32];          /* "580.159.04" */
	char cuda_runtime[32];    /* "13.0" */
	char cupti[32];           /* "130001" */
	char cublas[32];
	char nccl[32];
};

struct llmsim_run_info {
	char started_at[32];      /* ISO 8601 UTC */
	char host[64];
	char tool[64];            /* "llmsim-calib-runner 0.1.0 (git abc)" */
	int quick;                /* --quick */
	char notes[256];
	char operand_data[16];    /* what the run's operands held (schema 3):
				   * "normal" (trained-like: N(0,1) activations,
				   * N(0,0.02) weights, range-scaled FP8), "grid",
				   * "coarse", "zeros", "randn", "mixed" (several,
				   * case by case), "any" (no tensor math: data-
				   * independent, e.g. NCCL), "unknown" (a schema-2
				   * store read as it stands). Only "normal" and
				   * "any" runs may hold fit cases. */
};

/* Whether a run's operand data may enter a fit: "normal" or "any". */
int llmsim_store_fit_data(const char *operand_data);
/* Whether a name is one of the operand-data values above. */
int llmsim_store_operand_data_known(const char *operand_data);

/* One case: one op invocation (e.g. a GEMM through cuBLAS, which may launch
 * a main kernel plus a split-K reduction), timed over many repeats. */
struct llmsim_case {
	char op_spec[256];        /* llmsim op spec (sim/sim.h), e.g. "gemm m=.. n=.. k=.." */
	char op_class[32];        /* "gemm", "elementwise", "attention", "decode", "collective", "launch", "hbm", "smem" */
	char impl[64];            /* what ran: "cublas", "cublaslt", "llmsim_flash2", "stream_copy", "nccl", ... */
	char split[16];           /* "fit", "holdout" or "probe" (an experiment on
				   * other operand data: never fitted) */
	double flops_declared;    /* what the kernel declares it does */
	double bytes_declared;    /* minimal HBM bytes it must move */
	int reps;                 /* timed repetitions */
	double time_median_s;     /* median over reps of the case's total GPU time */
	double time_min_s;
	double time_p10_s, time_p90_s;
	double sm_clock_hz;       /* measured (counter) or 0 */
	double check_rel_err;     /* ||out-ref||/||ref|| of the correctness check, -1 if none */
	double load_s;            /* seconds the GPU was kept busy with this case's
				   * work just before its timed repetitions (0:
				   * none): a case timed inside a sustained load
				   * runs at the clock the power limit holds */
};

/* One kernel launched by a case (from the CUPTI activity record). */
struct llmsim_kernel_rec {
	char name[256];           /* demangled if possible, else mangled */
	int grid[3], block[3];
	int regs_per_thread;
	int static_smem_bytes, dynamic_smem_bytes;
	double duration_median_s; /* median over reps */
	int launches_per_rep;     /* how often it runs per case invocation */
};

int llmsim_store_open(const char *path, int flags, struct llmsim_store **out,
		      struct llmsim_err *err);
void llmsim_store_close(struct llmsim_store *s); /* NULL is a no-op */

/* Begin a run (opens the transaction, inserts device and run rows). */
int llmsim_store_run_begin(struct llmsim_store *s, const struct llmsim_device_info *dev,
			   const struct llmsim_run_info *run, int64_t *run_id,
			   struct llmsim_err *err);
int llmsim_store_add_case(struct llmsim_store *s, int64_t run_id,
			  const struct llmsim_case *c, int64_t *case_id,
			  struct llmsim_err *err);
int llmsim_store_add_kernel(struct llmsim_store *s, int64_t case_id,
			    const struct llmsim_kernel_rec *k, struct llmsim_err *err);
/* A hardware counter of a case: "dram__bytes_read.sum", ... */
int llmsim_store_add_counter(struct llmsim_store *s, int64_t case_id, const char *name,
			     double value, struct llmsim_err *err);
/* Commit (or roll back) the run's transaction. */
int llmsim_store_run_commit(struct llmsim_store *s, int64_t run_id, struct llmsim_err *err);
void llmsim_store_run_abort(struct llmsim_store *s);

/* ---- Reading ---------------------------------------------------------
 * Readers see only committed runs (status "complete"). The callbacks get
 * rows valid only during the call; a nonzero return from a callback stops
 * the iteration and is returned as it stands. */

/* A case with its run and device, as the read API hands it out. */
struct llmsim_store_case_row {
	int64_t case_id, run_id, device_id;
	struct llmsim_case c;
	struct llmsim_run_info run;
	struct llmsim_device_info dev;
};

/* Filter for llmsim_store_cases; NULL or "" fields match everything. */
struct llmsim_store_filter {
	const char *hw_name;      /* devices.hw_name, e.g. "h200" */
	const char *op_class;     /* cases.op_class */
	const char *split;        /* "fit", "holdout" or "probe" */
	int fit_data;             /* 1: only runs whose operand data may enter a
				   * fit (llmsim_store_fit_data) */
};

/* Calls fn for every matching case, ordered by run then case id. */
int llmsim_store_cases(struct llmsim_store *s, const struct llmsim_store_filter *f,
		       int (*fn)(const struct llmsim_store_case_row *row, void *ctx),
		       void *ctx, struct llmsim_err *err);

/* One counter of a case: 0 and *value, or LLMSIM_ENOENT when absent. */
int llmsim_store_counter(struct llmsim_store *s, int64_t case_id, const char *name,
			 double *value, struct llmsim_err *err);

/* Calls fn for each kernel of a case, in the order they were added. */
int llmsim_store_kernels(struct llmsim_store *s, int64_t case_id,
			 int (*fn)(const struct llmsim_kernel_rec *k, void *ctx),
			 void *ctx, struct llmsim_err *err);

/* A committed run with its device and the number of cases it holds. */
struct llmsim_store_run_row {
	int64_t run_id, device_id;
	struct llmsim_run_info run;
	struct llmsim_device_info dev;
	char status[16];          /* "complete" */
	int64_t ncases;
};

/* ---- Whole-program steps (schema 3) ------------------------------------
 * A program's step measured end to end on the GPU (a prefill, a decode
 * step, a training step), for the `steps` validation class: what infer and
 * train predict against what the program took, and for training its peak
 * memory. Written by the PyTorch scripts of calib/torch/. */
struct llmsim_step_rec {
	char program[32];         /* "lean_graph", "hf_sdpa", "hf_sdpa_eager", "torch_train" */
	char model_spec[128];     /* "model=llama-3.1-8b layers=32" */
	char phase[16];           /* "prefill", "decode", "train" */
	int64_t batch;            /* sequences (train: micro-batch) */
	int64_t tokens;           /* new tokens per sequence (prefill: the prompt;
				   * decode: 1; train: the sequence) */
	int64_t context;          /* decode: tokens already cached */
	char recompute[16];       /* train: "none", "full"; else "" */
	int graph;                /* 1: the step is one CUDA graph */
	double time_median_s, time_p10_s, time_p90_s; /* NaN where not taken */
	double kernel_time_s;     /* device kernel time per step (profiler), NaN if none */
	double sm_clock_hz, power_w; /* NVML during the timed steps, NaN if none */
	double mem_peak_allocated_bytes; /* train: torch.cuda.max_memory_allocated */
	double mem_peak_reserved_bytes;  /* train: the caching allocator's peak */
	double mem_device_total_bytes;
	int reps;                 /* timed steps (0: unknown) */
	char notes[256];
};

struct llmsim_store_step_row {
	int64_t step_id, run_id, device_id;
	struct llmsim_step_rec st;
	struct llmsim_run_info run;
	struct llmsim_device_info dev;
};

/* Filter for llmsim_store_steps; NULL or "" fields match everything. */
struct llmsim_store_step_filter {
	const char *hw_name;
	const char *program;
	const char *phase;
};

/* Write a step inside an open run. */
int llmsim_store_add_step(struct llmsim_store *s, int64_t run_id, const struct llmsim_step_rec *st,
			  int64_t *step_id, struct llmsim_err *err);

/* Calls fn for every matching step of a committed run, by run then id. */
int llmsim_store_steps(struct llmsim_store *s, const struct llmsim_store_step_filter *f,
		       int (*fn)(const struct llmsim_store_step_row *row, void *ctx), void *ctx,
		       struct llmsim_err *err);

/* Calls fn for every committed run, oldest first. */
int llmsim_store_runs(struct llmsim_store *s,
		      int (*fn)(const struct llmsim_store_run_row *row, void *ctx),
		      void *ctx, struct llmsim_err *err);

/* The schema version of the open database: the file's own when opened
 * read-only, else LLMSIM_STORE_SCHEMA_VERSION (after any migration). */
int llmsim_store_schema_version(const struct llmsim_store *s);

/* Migrate the store at path to the current schema in one transaction
 * (`llmsim calib upgrade`); *from gets the version it had (equal to
 * LLMSIM_STORE_SCHEMA_VERSION when there was nothing to do). */
int llmsim_store_upgrade(const char *path, int *from, struct llmsim_err *err);

/* ---- Text form ---------------------------------------------------------
 * A stable, diff-friendly dump: a header line
 *   llmsim-calib<TAB>schema_version<TAB>3
 * then, per table in order (devices, runs, cases, kernels, counters, steps,
 * step_kernels), a line
 *   columns<TAB>TABLE<TAB>col1<TAB>col2...
 * and one line per row, "TABLE<TAB>v1<TAB>v2...", ordered by id. Strings
 * escape backslash, tab, newline and CR as \\ \t \n \r; SQL NULL is \N;
 * reals are written with the fewest digits that read back exactly. Lines
 * starting with '#' and blank lines are ignored on import. */

/* Write every committed run of the store to f. */
int llmsim_store_export(struct llmsim_store *s, FILE *f, struct llmsim_err *err);

/* Load a text dump into the store in one transaction (nothing is written
 * if any line is bad: the error reads "name:line: message"). Ids are
 * renumbered; devices are shared with identical existing ones; a run
 * already present (same device, start time, host, tool and notes) is refused.
 * Every run must say its operand data, and a "fit" case must belong to a
 * run of normal (or data-independent) operands: the few-bit grid data of
 * earlier calibrations is retired from fits. A dump of schema 1 or 2 says
 * nothing of its operands and is refused, naming the file, unless the
 * caller states what they held (legacy_operand_data): then its runs carry
 * that, and its fit cases must still pass the rule above. Lines are at
 * most LLMSIM_MAX_LINE bytes and the input at most
 * LLMSIM_MAX_CALIB_TEXT_BYTES (base/bounds.h). `name` is used in
 * messages. */
struct llmsim_store_import_opts {
	const char *legacy_operand_data; /* schema 1-2 dumps: what their runs held */
};
int llmsim_store_import(struct llmsim_store *s, FILE *f, const char *name,
			struct llmsim_err *err);
int llmsim_store_import_opts(struct llmsim_store *s, FILE *f, const char *name,
			     const struct llmsim_store_import_opts *opts, struct llmsim_err *err);

#endif
