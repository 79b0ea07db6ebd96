/*
 * fuzz_hw.c - libFuzzer target for the hardware loader: the input is read
 * as a hardware file (llmsim_gpu_load_buf, the code path of
 * llmsim_gpu_load_file), then as a calibration profile applied to a fixed
 * valid GPU. A load that succeeds must give a GPU that passes the loader's
 * own promises (positive sizes, fractions in (0, 1]); a failure must leave
 * a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "hw/gpu_load.h"

static const char base[] =
	"name: fz\nfull_name: F\nvendor: nvidia\narch: x\n"
	"compute: {sms: 2, warp_size: 32, boost_clock_hz: 1e9, base_clock_hz: 1e9}\n"
	"sm_limits: {registers_per_sm: 65536, registers_per_block_max: 65536,"
	" registers_per_thread_max: 255, register_alloc_unit: 256, smem_bytes_per_sm: 1000,"
	" smem_bytes_per_block_max: 1000, smem_reserved_bytes_per_block: 0,"
	" smem_alloc_unit_bytes: 128, threads_per_sm_max: 2048, threads_per_block_max: 1024,"
	" warps_per_sm_max: 64, blocks_per_sm_max: 32}\n"
	"memory: {hbm_bytes: 1e9, hbm_bytes_per_s: 1e12, hbm_latency_s: 1e-6, l2_bytes: 1e6,"
	" l2_bytes_per_s: 1e12, smem_bytes_per_s_per_sm: 1e11}\n"
	"peak_flops_per_s: {vector: {fp32: 1e12}}\n"
	"interconnect: {gpus_per_node: 1, intra_node_bytes_per_s: 1e9, intra_node_latency_s: 1e-6,"
	" inter_node_bytes_per_s: 1e9, inter_node_latency_s: 1e-6, pcie_bytes_per_s: 1e9}\n"
	"tdp_w: 1\n";

static void check(const struct llmsim_gpu *g)
{
	if (g->sms <= 0 || g->warp_size <= 0 || !(g->hbm_bytes > 0) || !(g->hbm_bytes_per_s > 0) ||
	    !(g->l2_bytes > 0) || g->base_clock_hz > g->boost_clock_hz ||
	    !(g->vector_flops_per_s[LLMSIM_DT_FP32] > 0) || !g->name[0])
		abort();
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		if (!isfinite(g->param[i]) || g->param[i] < 0)
			abort();
	for (int d = 0; d < LLMSIM_DT_COUNT; d++)
		if (llmsim_gpu_peak_flops(g, (enum llmsim_dtype)d) < 0)
			abort();
	for (int i = 0; i < g->nerr_classes; i++)
		if (!g->err_classes[i].name[0] || g->err_classes[i].n <= 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct llmsim_gpu g, fixed;
	static int have_fixed;
	struct llmsim_err err = {0};

	if (!have_fixed) {
		if (llmsim_gpu_load_buf(base, sizeof base - 1, "base", &fixed, &err))
			abort(); /* the fixed GPU must load */
		have_fixed = 1;
	}
	if (llmsim_gpu_load_buf((const char *)data, size, "fuzz.yaml", &g, &err) == 0)
		check(&g);
	else if (!err.msg[0])
		abort();

	g = fixed;
	err.msg[0] = 0;
	if (llmsim_gpu_apply_profile_buf(&g, (const char *)data, size, "profile.yaml", &err) == 0)
		check(&g);
	else if (!err.msg[0] || memcmp(&g, &fixed, sizeof g))
		abort(); /* a failed profile must leave the GPU untouched */
	return 0;
}
