/*
 * fuzz_op.c - libFuzzer target for op specs (llmsim_op_parse) and the GPU
 * model behind them (llmsim_predict). The input is one spec line. A spec
 * that parses must format (llmsim_op_format) to a spec that parses and
 * formats to the same text; predicting it on the H200 (hw/h200-sxm-141gb.yaml
 * with its calibration profile, as `llmsim op` does) and on the MI300X must
 * either fail with a message or give finite, non-negative costs and times,
 * and a positive total time whenever it launches a kernel.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "sim/sim.h"
#include "fuzz_input.h"

static int bad_num(double v)
{
	return !isfinite(v) || v < 0;
}

static void check(const struct llmsim_gpu *g, const struct llmsim_op *op)
{
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	if (llmsim_predict(g, op, &p, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (bad_num(p.flops) || bad_num(p.hbm_read_bytes) || bad_num(p.hbm_write_bytes) ||
	    bad_num(p.hbm_bytes) || bad_num(p.l2_bytes) || bad_num(p.smem_bytes) ||
	    bad_num(p.workspace_bytes) || bad_num(p.link_bytes) || isnan(p.intensity_flops_per_byte) ||
	    p.intensity_flops_per_byte < 0)
		abort();
	/* no kernel (a collective in a group of one) takes no time; any
	 * kernel takes some */
	if (bad_num(p.compute_s) || bad_num(p.memory_s) || bad_num(p.latency_s) ||
	    bad_num(p.overhead_s) || bad_num(p.time_s) || (p.kernels > 0) != (p.time_s > 0))
		abort();
	if (p.kernels < 0 || p.blocks < 0 || (unsigned)p.bound >= LLMSIM_BOUND_COUNT ||
	    !p.op_class || bad_num(p.waves) || isnan(p.occupancy) || isnan(p.tail_efficiency))
		abort();
	for (int i = 0; i < p.kernels && i < LLMSIM_PRED_MAX_KERNELS; i++)
		if (bad_num(p.kernel_time_s[i]) ||
		    (unsigned)p.kernel_bound[i] >= LLMSIM_BOUND_COUNT)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct llmsim_gpu h200, mi300x;
	static int loaded;
	struct llmsim_err err = {0};
	struct llmsim_op op, again;
	char f1[1024], f2[1024];

	if (!loaded) {
		if (llmsim_gpu_load("h200", &h200, &err) || llmsim_gpu_load("mi300x", &mi300x, &err))
			abort(); /* the shipped GPUs must load */
		loaded = 1;
	}
	char *spec = fuzz_input_str(data, size);
	int rc = llmsim_op_parse(spec, &op, &err);
	free(spec);
	if (rc) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	/* the canonical form reads back as the same op */
	int n = llmsim_op_format(&op, f1, sizeof f1);
	if (n < 0 || (size_t)n >= sizeof f1 || llmsim_op_parse(f1, &again, &err))
		abort();
	n = llmsim_op_format(&again, f2, sizeof f2);
	if (n < 0 || (size_t)n >= sizeof f2 || strcmp(f1, f2))
		abort();
	check(&h200, &op);
	check(&mi300x, &op);
	return 0;
}
