/*
 * predict.c - llmsim_predict: checks the GPU description it needs, hands
 * the op to its kind's cost description, and attaches the calibrated
 * expected error.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

static int check_gpu(const struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	if (gpu->sms <= 0 || gpu->warps_per_sm_max <= 0 || gpu->threads_per_sm_max <= 0 ||
	    gpu->blocks_per_sm_max <= 0 || gpu->registers_per_sm <= 0 ||
	    gpu->threads_per_block_max <= 0 || gpu->smem_bytes_per_sm <= 0 ||
	    gpu->smem_bytes_per_block_max <= 0 || gpu->hbm_bytes_per_s <= 0 ||
	    gpu->boost_clock_hz <= 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "gpu '%s' lacks SM limits, clock or HBM bandwidth", gpu->name);
	for (int i = 0; i < LLMSIM_EFF_COUNT; i++)
		if (!(gpu->eff[i] > 0) || !isfinite(gpu->eff[i]))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "gpu '%s': model parameter %d must be positive",
					      gpu->name, i);
	return 0;
}

int llmsim_predict(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		   struct llmsim_pred *out, struct llmsim_err *err)
{
	struct llmsim_pred p;
	int rc;
	if (!gpu || !op || !out)
		return llmsim_err_set(err, LLMSIM_EINVAL, "predict: NULL argument");
	if ((rc = check_gpu(gpu, err)))
		return rc;
	/* Inside a long, continuous load the board sits at its power cap: the
	 * clock every tensor rate and tensor-kernel CUDA-core rate scales with
	 * is the power-capped one (H200: 1.53 GHz at 690 W against 1.67 GHz
	 * for a lone kernel, calib/data/power/). One copy of the GPU with that
	 * clock, so every cost description sees it alike. */
	struct llmsim_gpu capped;
	if (op->power_capped && gpu->power_capped_clock_hz > 0 &&
	    gpu->power_capped_clock_hz < gpu->sustained_clock_hz) {
		capped = *gpu;
		capped.sustained_clock_hz = gpu->power_capped_clock_hz;
		gpu = &capped;
	}
	memset(&p, 0, sizeof p);
	switch (op->kind) {
	case LLMSIM_OP_GEMM: rc = sim_gemm(gpu, op, &p, err); break;
	case LLMSIM_OP_ELEMENTWISE: rc = sim_elementwise(gpu, op, &p, err); break;
	case LLMSIM_OP_ATTENTION: rc = sim_attention(gpu, op, &p, err); break;
	case LLMSIM_OP_DECODE: rc = sim_decode(gpu, op, &p, err); break;
	case LLMSIM_OP_COLLECTIVE: rc = sim_collective(gpu, op, &p, err); break;
	default:
		return llmsim_err_set(err, LLMSIM_EINVAL, "unknown op kind %d", (int)op->kind);
	}
	if (rc)
		return rc;
	p.op_class = llmsim_op_class(op);
	const struct llmsim_err_class *ec = llmsim_gpu_err_class(gpu, p.op_class);
	p.time_err_pct = ec ? ec->median_abs_pct : NAN;
	*out = p;
	return 0;
}
