/*
 * stream.c - the cost descriptions of the memory microbenchmarks that
 * calibration runs to measure one parameter each (LLMSIM_OP_STREAM):
 *
 *   launch  an empty kernel: the fixed time of one kernel on the GPU,
 *           kernel_overhead_s;
 *   hbm     a copy of `bytes` (read + written) at the bandwidth plateau:
 *           overhead + bytes / (hbm_bytes_per_s x hbm_fraction);
 *   l2      a STREAM kernel re-run over arrays of `bytes` that stay in L2
 *           between runs: its first DRAM round trip shows (the kernel is
 *           that short), only l2_reuse_fraction of the L2 keeps the arrays
 *           (the rest comes from HBM; H200: a 2 x 16 MiB copy re-run in
 *           its 60 MiB L2 is 13% slower than the L2 rate), the part kept
 *           streams at l2_bytes_per_s x l2_fraction;
 *   smem    shared-memory reads of `bytes` over every SM:
 *           overhead + bytes / (SMs x smem per SM x smem_fraction).
 *
 * These are the parameters' own definitions, not a kernel model: an op of
 * the model that streams memory (an element-wise copy) is priced by
 * sim/elementwise.c through the kernel model, which these cases calibrate.
 */
#include <math.h>
#include <string.h>

#include "base/enum.h"
#include "sim_internal.h"

static const char *const stream_names[] = {
	[LLMSIM_STREAM_LAUNCH] = "launch",
	[LLMSIM_STREAM_HBM] = "hbm",
	[LLMSIM_STREAM_L2] = "l2",
	[LLMSIM_STREAM_SMEM] = "smem",
};
_Static_assert(sizeof stream_names / sizeof stream_names[0] == LLMSIM_STREAM_COUNT, "streams");

const char *llmsim_stream_kind_name(enum llmsim_stream_kind k)
{
	return llmsim_enum_name(stream_names, LLMSIM_STREAM_COUNT, (int)k);
}

int llmsim_stream_kind_parse(const char *s)
{
	return llmsim_enum_parse(stream_names, LLMSIM_STREAM_COUNT, s);
}

int sim_stream(const struct llmsim_gpu *gpu, const struct llmsim_op *op, struct llmsim_pred *p,
	       struct llmsim_err *err)
{
	enum llmsim_stream_kind kind = op->u.stream.kind;
	double bytes = op->u.stream.bytes, overhead = gpu->param[LLMSIM_PARAM_KERNEL_OVERHEAD_S];
	double bw = 0, frac = 1, from_hbm = 0, from_l2 = 0;
	if ((unsigned)kind >= LLMSIM_STREAM_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "stream: unknown kind (%d)", (int)kind);
	if (!(bytes >= 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "stream: bytes must not be negative");
	p->kernels = 1;
	p->blocks = gpu->sms;
	p->kernel_bound[0] = p->bound = LLMSIM_BOUND_LAUNCH;
	switch (kind) {
	case LLMSIM_STREAM_LAUNCH:
		p->overhead_s = p->time_s = overhead;
		p->kernel_time_s[0] = p->time_s;
		p->intensity_flops_per_byte = INFINITY;
		return 0;
	case LLMSIM_STREAM_HBM:
		bw = gpu->hbm_bytes_per_s;
		frac = gpu->param[LLMSIM_PARAM_HBM_FRACTION];
		from_hbm = bytes;
		break;
	case LLMSIM_STREAM_L2: {
		bw = gpu->l2_bytes_per_s;
		frac = gpu->param[LLMSIM_PARAM_L2_FRACTION];
		overhead += gpu->hbm_latency_s;
		double hit = sim_l2_resident_share(gpu, bytes);
		from_l2 = hit * bytes;
		from_hbm = (1 - hit) * bytes;
		if (from_hbm > 0 && gpu->hbm_bytes_per_s > 0 && bw > 0)
			overhead += from_hbm /
				    (gpu->hbm_bytes_per_s * gpu->param[LLMSIM_PARAM_HBM_FRACTION]);
		else
			from_l2 = bytes, from_hbm = 0;
		break;
	}
	case LLMSIM_STREAM_SMEM:
		bw = gpu->sms * gpu->smem_bytes_per_s_per_sm;
		frac = gpu->param[LLMSIM_PARAM_SMEM_FRACTION];
		p->smem_bytes = bytes;
		break;
	default:
		break;
	}
	if (!(bw > 0))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "stream %s: gpu '%s' states no bandwidth for it",
				      stream_names[kind], gpu->name);
	double streamed = kind == LLMSIM_STREAM_L2 ? from_l2 : bytes;
	p->memory_s = streamed / (bw * frac);
	p->overhead_s = overhead;
	p->time_s = overhead + p->memory_s;
	p->kernel_time_s[0] = p->time_s;
	p->hbm_read_bytes = from_hbm / 2;
	p->hbm_write_bytes = from_hbm / 2;
	p->hbm_bytes = from_hbm;
	p->l2_bytes = from_l2;
	p->intensity_flops_per_byte = 0;
	p->kernel_bound[0] = p->bound = kind == LLMSIM_STREAM_HBM ? LLMSIM_BOUND_HBM
				     : kind == LLMSIM_STREAM_L2  ? LLMSIM_BOUND_L2
								 : LLMSIM_BOUND_SMEM;
	return 0;
}
