/*
 * trace_common.h - what the verbs of `llmsim trace` (cli/cmd_trace_*.c)
 * share: loading a trace, the headline of its run, error and percentage
 * formatting, and the llmsim GPU of a traced device.
 */
#ifndef LLMSIM_CLI_TRACE_COMMON_H
#define LLMSIM_CLI_TRACE_COMMON_H

#include <stdio.h>

#include "base/err.h"
#include "base/fmt.h"
#include "base/json.h"
#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"
#include "args.h"

/* Print "cmd: message" to stderr; returns 1 (the failure exit status). */
int trace_fail(const char *cmd, const struct llmsim_err *err);

/* Load run `run` (0: the last) of the trace at path into t (initialized
 * here); on failure print the error and return 1. */
int trace_load_trace(const char *cmd, const char *path, int64_t run, struct llmsim_trace *t);

/* 100 |pred - meas| / meas, NaN when meas is 0; printed as "12.3%" or "-". */
double trace_pct_err(double pred, double meas);
char *trace_fmt_pct(char *buf, double pct);

/* The run's headline (device, date, counts, command, dropped records). */
void trace_print_run(FILE *f, const char *path, const struct llmsim_trace *t);
/* The same as JSON fields ("db" and a "run" object) of an open object. */
void trace_json_run(struct llmsim_json *j, const char *path, const struct llmsim_trace *t);

/* The llmsim GPU a CUPTI device name maps to, or NULL. */
const char *trace_gpu_of_device(const char *dev);

/* The verbs (cmd_trace_*.c); argv[0] is the verb. */
int trace_show(int argc, char **argv);
int trace_compare(int argc, char **argv);
int trace_replay(int argc, char **argv);
int trace_capture(int argc, char **argv);
int trace_import(int argc, char **argv);
int trace_export(int argc, char **argv);
int trace_to_calib(int argc, char **argv);

#endif
