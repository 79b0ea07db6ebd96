/*
 * runner.h - the calibration runner's internal parts: the case list, CUPTI
 * activity tracing (kernel records attributed to cases), the CUPTI range
 * profiler (hardware counters), and the device description.
 */
#ifndef LLMSIM_RUNNER_H
#define LLMSIM_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include "calib/store.h"
#include "kernels/kernels.h"

/* ---- cases.c ---- */

struct rcase {
	char op_spec[256];
	const char *op_class;     /* "gemm", "elementwise", "attention", "decode", "hbm", "smem", "launch" */
	const char *split;        /* "fit" or "holdout" */
	struct llmsim_kspec spec;
	int quick;                /* part of --quick */
};

/* The classes in run order (static strings) and their count. */
extern const char *const runner_classes[];
extern const int runner_nclasses;

/* --operand-data names, by enum llmsim_kdata ("normal", "grid", "zeros"). */
extern const char *const runner_operand_data_name[];

/* Build the case list (static storage). Returns the count. */
int runner_cases(const struct rcase **out);

/* ---- activity.c ---- */

struct kernel_record {
	uint64_t start_ns, end_ns;
	uint32_t correlation;
	uint64_t external;        /* 0: not attributed */
	int grid[3], block[3];
	int regs, static_smem, dynamic_smem;
	char *name;               /* owned */
};

/* Register buffers and enable CONCURRENT_KERNEL + EXTERNAL_CORRELATION. */
int activity_init(char *err, size_t errsz);
/* Flush CUPTI and move all records received so far into the caller's
 * array (malloc'd, caller frees with activity_free), attributing external
 * ids. Returns the count or -1. */
int activity_take(struct kernel_record **out, size_t *n, char *err, size_t errsz);
void activity_free(struct kernel_record *r, size_t n);
/* Push / pop an external correlation id around a case invocation. */
int activity_push(uint64_t id);
int activity_pop(void);
/* Pause (1) or resume (0) kernel records, around the counter pass. */
int activity_pause(int paused);
/* Dropped records so far. */
uint64_t activity_dropped(void);
void activity_shutdown(void);

/* ---- counters.c ---- */

#define COUNTER_METRICS 8
extern const char *const counter_metric_names[COUNTER_METRICS];

struct counter_values {
	double v[COUNTER_METRICS];   /* summed (.sum) or duration-weighted (avg, pct) */
	int ranges;                  /* kernels profiled */
};

/* Set up the range profiler; on failure say why in err and return -1
 * (the run continues with timings only). */
int counters_init(char *err, size_t errsz);
/* Profile one invocation of run(arg). */
int counters_measure(int (*run)(void *arg, char *err, size_t errsz), void *arg,
		     struct counter_values *out, char *err, size_t errsz);
void counters_shutdown(void);
/* Host-side check only: validate the metric names for a chip and count the
 * passes (works without a GPU). */
int counters_passes(const char *chip, size_t *passes, char *err, size_t errsz);

/* ---- clock.c ---- */

/* Start the NVML clock sampler for the GPU of this UUID; -1 when NVML is
 * missing (then clock_end() returns 0). */
int clock_init(const char *uuid);
/* Average SM clock (Hz) over the span between begin and end; 0: unknown. */
void clock_begin(void);
double clock_end(void);
void clock_shutdown(void);

/* ---- devinfo.c ---- */

/* Fill the device and software description (device 0 current). */
void devinfo_fill(struct llmsim_device_info *d);

#endif
