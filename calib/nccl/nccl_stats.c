/* nccl_stats.c - op names, bus-bandwidth factors and order statistics. */
#include "nccl_stats.h"

#include <string.h>

#include "base/stats.h"

static const char *const names[NB_OP_COUNT] = {
	[NB_ALLREDUCE] = "allreduce", [NB_ALLGATHER] = "allgather",
	[NB_REDUCESCATTER] = "reducescatter", [NB_ALLTOALL] = "alltoall",
	[NB_SENDRECV] = "sendrecv",
};

const char *nccl_op_name(enum nccl_op op)
{
	return (unsigned)op < NB_OP_COUNT ? names[op] : "?";
}

int nccl_op_parse(const char *s)
{
	for (int i = 0; i < NB_OP_COUNT; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

double nccl_busbw_factor(enum nccl_op op, int n)
{
	switch (op) {
	case NB_ALLREDUCE: return 2.0 * (n - 1) / n;
	case NB_ALLGATHER:
	case NB_REDUCESCATTER:
	case NB_ALLTOALL: return (double)(n - 1) / n;
	case NB_SENDRECV:
	case NB_OP_COUNT: break;
	}
	return 1.0;
}

void nccl_stats(double *v, size_t n, double *median, double *p10, double *p90)
{
	if (!n) {
		*median = *p10 = *p90 = 0;
		return;
	}
	llmsim_sort_doubles(v, n);
	*median = llmsim_quantile_sorted(v, n, 0.5);
	*p10 = llmsim_quantile_sorted(v, n, 0.1);
	*p90 = llmsim_quantile_sorted(v, n, 0.9);
}
