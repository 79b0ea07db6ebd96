/*
 * inject.h - internals shared by the two halves of libllmsim_inject.so:
 * inject.c (CUPTI activity records, the exit-time writer) and
 * inject_nvtx.c (the NVTX injection that records ranges).
 */
#ifndef LLMSIM_INJECT_H
#define LLMSIM_INJECT_H

#include <stdint.h>
#include "calib/trace/trace.h"

#define INJECT_EXPORT __attribute__((visibility("default")))

/* 1 once CUPTI activity recording is on (external correlation ids may be
 * pushed from then on). */
extern volatile int inject_activity_on;

/* Print "llmsim_inject: ..." on stderr (never from a CUPTI callback). */
void inject_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether LLMSIM_TRACE_NVTX=1 asked for NVTX ranges. */
int inject_nvtx_wanted(void);

/* Whether the NVTX injection was initialized by the program's NVTX. */
int inject_nvtx_attached(void);

/* Append every recorded range to t (ranges still open get end = at_ns). */
int inject_nvtx_collect(struct llmsim_trace *t, uint64_t at_ns);

#endif
