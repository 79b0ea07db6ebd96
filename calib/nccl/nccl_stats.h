/*
 * nccl_stats.h - sizes, bytes moved and statistics for the NCCL benchmark.
 * No CUDA here: the unit tests use it on machines without a GPU.
 */
#ifndef LLMSIM_NCCL_STATS_H
#define LLMSIM_NCCL_STATS_H

#include <stddef.h>

enum nccl_op { NB_ALLREDUCE, NB_ALLGATHER, NB_REDUCESCATTER, NB_ALLTOALL, NB_SENDRECV, NB_OP_COUNT };

/* "allreduce" ... (the llmsim collective kind names) */
const char *nccl_op_name(enum nccl_op op);
int nccl_op_parse(const char *s);

/* Bus-bandwidth factor of nccl-tests: busbw = algbw * factor, with algbw =
 * size / time and size the per-rank buffer as nccl-tests counts it
 * (all-reduce: the buffer; all-gather: the gathered output; reduce-scatter:
 * the input; all-to-all: the send buffer; send/recv: the message). */
double nccl_busbw_factor(enum nccl_op op, int nranks);

/* Median, p10 and p90 of n values (base/stats.h; sorted in place). */
void nccl_stats(double *v, size_t n, double *median, double *p10, double *p90);

#endif
