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
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		if (!(gpu->param[i] > 0) || !isfinite(gpu->param[i]))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "gpu '%s': model parameter %d must be positive",
					      gpu->name, i);
	return 0;
}

double llmsim_tensor_rho(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, double flops,
			 double busy_s)
{
	/* in 16-bit tensor work: the FLOP rate over the BF16 peak, an 8-bit
	 * or narrower FLOP weighted by its energy against a 16-bit one (H200:
	 * an FP8 GEMM at 74% of its own peak settles 18% slower, below a BF16
	 * GEMM at 95%: 8-bit FLOPs cost 0.66 of 16-bit ones); TF32 counts at
	 * its own peak (it runs the 16-bit datapath at half rate) */
	if ((unsigned)dt >= LLMSIM_DT_COUNT)
		return 0;
	double peak = gpu->tensor_flops_per_s[LLMSIM_DT_BF16], w = 1;
	if (llmsim_dtype_narrow(dt) && dt != LLMSIM_DT_INT4)
		w = gpu->param[LLMSIM_PARAM_NARROW_TENSOR_ENERGY_RELATIVE];
	if (dt == LLMSIM_DT_TF32 || !(peak > 0))
		peak = gpu->tensor_flops_per_s[dt];
	if (gpu->tensor_clock_hz > 0 && gpu->burst_clock_hz < gpu->tensor_clock_hz)
		peak *= gpu->burst_clock_hz / gpu->tensor_clock_hz;
	if (!(peak > 0) || !(busy_s > 0) || !(flops > 0))
		return 0;
	return w * flops / (busy_s * peak);
}

double llmsim_power_load(const struct llmsim_gpu *gpu, double duty, double run_s)
{
	if (!(duty > 0))
		return 0;
	if (duty > 1)
		duty = 1;
	double w = gpu->power_window_s;
	if (w > 0 && 0.5 * run_s < w)
		duty *= 0.5 * run_s / w;
	return duty;
}

double llmsim_op_rho(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		     const struct llmsim_pred *lone)
{
	if ((unsigned)op->dtype >= LLMSIM_DT_COUNT || !(gpu->tensor_flops_per_s[op->dtype] > 0))
		return 0;
	return llmsim_tensor_rho(gpu, op->dtype, lone->flops, lone->time_s);
}

/* The switching activity of an op's tensor work, relative to trained data
 * (gpu.operand_activity; 1 for data the file does not know). */
static double op_activity(const struct llmsim_gpu *gpu, const struct llmsim_op *op)
{
	if ((unsigned)op->operand_data >= LLMSIM_OPD_COUNT)
		return 1;
	double a = gpu->operand_activity[op->operand_data];
	return a > 0 ? a : 1;
}

/* A lone kernel's burst clock on data of this activity: the hardware
 * file's clock holds for trained data; data that toggles fewer bits draws
 * less current and runs a little faster, as activity^(-exponent) (an FP8 or
 * BF16 GEMM on zeros 6-10% faster from its first milliseconds), never
 * beyond the boost clock. */
static double burst_clock(const struct llmsim_gpu *gpu, double activity)
{
	double f_hz = gpu->burst_clock_hz;
	if (gpu->burst_activity_exponent > 0 && activity != 1)
		f_hz *= pow(activity, -gpu->burst_activity_exponent);
	return f_hz < gpu->boost_clock_hz ? f_hz : gpu->boost_clock_hz;
}

/* The SM clock an op runs at inside a sustained load, or 0 when the power
 * limit leaves it at its burst clock. Dynamic power is C V^2 f and, on the
 * DVFS curve, V grows about in proportion to f, so a load's power is ~ rho
 * * duty * f^3, with rho the share of the tensor pipes' peak the op keeps
 * busy (in 16-bit work, see below; an op's CUDA-core FLOPs are orders below
 * that peak, so element-wise and decode work stays at its burst clock) and
 * duty the share of the controller's window the GPU is busy with it, times
 * the switching activity of its operand data (1 for trained data). The
 * hardware file's power_capped_clock_hz is the clock at which rho = duty =
 * 1 meets the limit; any other load meets it at
 *   f = power_capped_clock_hz * (rho * duty)^(-1/3)
 * and is not slowed when that is above its burst clock. The controller
 * averages power over its window (from idle, a GEMM slows over 25-50 ms),
 * so where the caller knows the whole load (a training step's layers, an
 * infer or serve run, a trace phase) op.load_rho carries its time-averaged
 * rho and every op of it runs at that one clock; a kernel looped alone (a
 * calibration case) is its own load. (Through a Llama-70B layer nvidia-smi
 * reads 1.515 GHz; one clock from the layer's rho, 0.86, gives 1.48 GHz.) Measured
 * (calib/data/power/): a bf16 GEMM at 95% of peak settles 17% slower than
 * its burst after ~50 ms; at 78% duty 7% slower (this law: 7.4%); at 60%
 * duty not at all (the law: above the burst clock); FlashAttention's
 * forward (rho ~0.4) 3.6% (the law: none); HBM streams never; out of
 * sample within 4% (power_check.log). */
static double loaded_clock(const struct llmsim_gpu *gpu, double rho, double duty,
			   double activity)
{
	/* rho may pass 1: an FP8 GEMM near its own (2x) peak draws more than
	 * a BF16 one at its peak (H200: 1.2-1.3 GHz against 1.4-1.5 under the
	 * same limit) */
	double x = rho * (duty < 1 ? duty : 1) * activity;
	if (!(x > 0))
		return 0;
	double f_hz = llmsim_gpu_power_cap_hz(gpu) / cbrt(x);
	return f_hz < burst_clock(gpu, activity) ? f_hz : 0;
}

double llmsim_power_w(const struct llmsim_gpu *gpu, double rho, double duty)
{
	if (!(gpu->tdp_w > 0) || !(duty > 0))
		return 0;
	duty = duty < 1 ? duty : 1;
	double cap_hz = llmsim_gpu_power_cap_hz(gpu);
	if (!(cap_hz > 0))
		return gpu->tdp_w * duty;
	double x = (rho < 1 ? rho : 1) * duty;
	if (!(x > 0))
		return 0;
	double f_hz = cap_hz / cbrt(x);
	double burst_hz = gpu->burst_clock_hz > 0 ? gpu->burst_clock_hz : gpu->boost_clock_hz;
	if (f_hz >= burst_hz) /* below the cap: the burst clock's power */
		return gpu->tdp_w * x * pow(burst_hz / cap_hz, 3);
	return gpu->tdp_w;
}

/* The expected error of the op's class (hw/gpu.h: p80 on held-out
 * kernels, its bias where it leans one way). */
static void price_err(const struct llmsim_gpu *gpu, struct llmsim_pred *p)
{
	const struct llmsim_err_class *ec = llmsim_gpu_err_class(gpu, p->op_class);
	p->time_err_pct = ec ? ec->p80_abs_pct : NAN;
	p->time_bias_pct = ec && llmsim_err_class_biased(ec) ? ec->bias_pct : NAN;
	p->time_err_n = ec ? ec->n : 0;
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
	/* Inside a sustained load the board's power limit sets the clock
	 * (see loaded_clock), and a lone kernel runs at its burst clock for
	 * its data: one copy of the GPU with that clock, so every cost
	 * description sees it alike. */
	struct llmsim_gpu capped;
	double activity = op_activity(gpu, op);
	if (activity != 1 && !(op->load_duty > 0)) {
		capped = *gpu;
		capped.burst_clock_hz = burst_clock(gpu, activity);
		struct llmsim_op lone = *op;
		lone.operand_data = LLMSIM_OPD_TRAINED;
		rc = llmsim_predict(&capped, &lone, out, err);
		if (!rc)
			price_err(gpu, out);
		return rc;
	}
	if (op->load_duty > 0 && llmsim_gpu_power_cap_hz(gpu) > 0 &&
	    llmsim_gpu_power_cap_hz(gpu) < gpu->burst_clock_hz) {
		/* the load's rho when the caller knows it, else the op's own,
		 * from its price at the burst clock */
		struct llmsim_op lone = *op;
		lone.load_duty = lone.load_rho = 0;
		lone.operand_data = LLMSIM_OPD_TRAINED; /* rho is the work's, not the data's */
		double rho = op->load_rho;
		int priced = !(rho > 0);
		if (priced) {
			if ((rc = llmsim_predict(gpu, &lone, &p, err)))
				return rc;
			rho = llmsim_op_rho(gpu, op, &p);
		}
		double f_hz = loaded_clock(gpu, rho, op->load_duty, activity);
		if (!(f_hz > 0)) { /* not slowed: the burst clock's price for its data */
			if (priced && activity == 1) {
				*out = p;
				return 0;
			}
			lone.operand_data = op->operand_data;
			return llmsim_predict(gpu, &lone, out, err);
		}
		capped = *gpu;
		capped.burst_clock_hz = f_hz;
		gpu = &capped;
	}
	memset(&p, 0, sizeof p);
	switch (op->kind) {
	case LLMSIM_OP_GEMM: rc = sim_gemm(gpu, op, &p, err); break;
	case LLMSIM_OP_ELEMENTWISE: rc = sim_elementwise(gpu, op, &p, err); break;
	case LLMSIM_OP_ATTENTION: rc = sim_attention(gpu, op, &p, err); break;
	case LLMSIM_OP_DECODE: rc = sim_decode(gpu, op, &p, err); break;
	case LLMSIM_OP_COLLECTIVE: rc = sim_collective(gpu, op, &p, err); break;
	case LLMSIM_OP_STREAM: rc = sim_stream(gpu, op, &p, err); break;
	default:
		return llmsim_err_set(err, LLMSIM_EINVAL, "unknown op kind %d", (int)op->kind);
	}
	if (rc)
		return rc;
	p.op_class = llmsim_op_class(op);
	price_err(gpu, &p);
	p.sm_clock_hz = gpu->burst_clock_hz;
	*out = p;
	return 0;
}
