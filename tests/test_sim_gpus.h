/*
 * test_sim_gpus.h - GPUs built by hand for the simulator tests, from
 * published figures (shared/reference/hardware.md: NVIDIA datasheets,
 * H100 whitepaper Table 3, CUDA Programming Guide compute capability
 * tables), so the tests do not depend on the shipped YAML files. The
 * model parameters are the defaults of hw/gpu_params.h.
 */
#ifndef LLMSIM_TEST_SIM_GPUS_H
#define LLMSIM_TEST_SIM_GPUS_H

#include <string.h>

#include "hw/gpu.h"

static inline void test_gpu_defaults(struct llmsim_gpu *g)
{
	static const double def[LLMSIM_PARAM_COUNT] = {
#define LLMSIM_PARAM(e, key, d, doc) [LLMSIM_PARAM_##e] = d,
#include "hw/gpu_params.h"
#undef LLMSIM_PARAM
	};
	memcpy(g->param, def, sizeof def);
	g->warp_size = 32;
	g->registers_per_sm = 65536;
	g->registers_per_block_max = 65536;
	g->registers_per_thread_max = 255;
	g->register_alloc_unit = 256;
	g->smem_reserved_bytes_per_block = 1024;
	g->smem_alloc_unit_bytes = 128;
	g->threads_per_sm_max = 2048;
	g->threads_per_block_max = 1024;
	g->warps_per_sm_max = 64;
	g->blocks_per_sm_max = 32;
	g->gpus_per_node = 8;
}

/* H100 SXM5 80GB: 132 SMs, 228 KB smem/SM (227 KB per block), 50 MB L2,
 * 3.35 TB/s HBM3, dense bf16 989.4 TFLOP/s, NVLink 450 GB/s each way. */
static inline void test_gpu_h100(struct llmsim_gpu *g)
{
	memset(g, 0, sizeof *g);
	test_gpu_defaults(g);
	strcpy(g->name, "h100");
	strcpy(g->arch, "hopper");
	g->sms = 132;
	g->boost_clock_hz = 1.98e9;
	g->smem_bytes_per_sm = 228 * 1024;
	g->smem_bytes_per_block_max = 227 * 1024;
	g->hbm_bytes = 80e9;
	g->hbm_bytes_per_s = 3.35e12;
	g->hbm_latency_s = 5e-7;
	g->l2_bytes = 50e6;
	g->l2_bytes_per_s = 5120 * 1.98e9; /* A100's 5120 B/clk (A100 whitepaper), at Hopper's clock */
	g->smem_bytes_per_s_per_sm = 128 * 1.98e9; /* 32 banks x 4 B per clock */
	g->tensor_flops_per_s[LLMSIM_DT_FP64] = 67e12;
	g->tensor_flops_per_s[LLMSIM_DT_TF32] = 494.7e12;
	g->tensor_flops_per_s[LLMSIM_DT_BF16] = 989.4e12;
	g->tensor_flops_per_s[LLMSIM_DT_FP16] = 989.4e12;
	g->tensor_flops_per_s[LLMSIM_DT_FP8] = 1978.9e12;
	g->tensor_flops_per_s[LLMSIM_DT_INT8] = 1978.9e12;
	g->vector_flops_per_s[LLMSIM_DT_FP64] = 34e12;
	g->vector_flops_per_s[LLMSIM_DT_FP32] = 67e12;
	g->intra_node_bytes_per_s = 450e9;
	g->intra_node_latency_s = 3e-6;
	g->inter_node_bytes_per_s = 50e9;
	g->inter_node_latency_s = 5e-6;
}

/* H200 SXM 141GB: an H100 with 4.8 TB/s HBM3e (and 60 MiB L2 as read on
 * the calibration machine). */
static inline void test_gpu_h200(struct llmsim_gpu *g)
{
	test_gpu_h100(g);
	strcpy(g->name, "h200");
	g->hbm_bytes = 141e9;
	g->hbm_bytes_per_s = 4.8e12;
	g->l2_bytes = 62914560;
}

/* A100 SXM4 80GB: 108 SMs, 164 KB smem/SM (163 KB per block), 40 MB L2,
 * 2039 GB/s, dense bf16 312 TFLOP/s, no FP8. */
static inline void test_gpu_a100(struct llmsim_gpu *g)
{
	memset(g, 0, sizeof *g);
	test_gpu_defaults(g);
	strcpy(g->name, "a100");
	strcpy(g->arch, "ampere");
	g->sms = 108;
	g->boost_clock_hz = 1.41e9;
	g->smem_bytes_per_sm = 164 * 1024;
	g->smem_bytes_per_block_max = 163 * 1024;
	g->hbm_bytes = 80e9;
	g->hbm_bytes_per_s = 2.039e12;
	g->hbm_latency_s = 6e-7;
	g->l2_bytes = 40e6;
	g->l2_bytes_per_s = 5120 * 1.41e9;
	g->smem_bytes_per_s_per_sm = 128 * 1.41e9;
	g->tensor_flops_per_s[LLMSIM_DT_FP64] = 19.5e12;
	g->tensor_flops_per_s[LLMSIM_DT_TF32] = 156e12;
	g->tensor_flops_per_s[LLMSIM_DT_BF16] = 312e12;
	g->tensor_flops_per_s[LLMSIM_DT_FP16] = 312e12;
	g->tensor_flops_per_s[LLMSIM_DT_INT8] = 624e12;
	g->vector_flops_per_s[LLMSIM_DT_FP64] = 9.7e12;
	g->vector_flops_per_s[LLMSIM_DT_FP32] = 19.5e12;
	g->intra_node_bytes_per_s = 300e9;
	g->intra_node_latency_s = 3e-6;
	g->inter_node_bytes_per_s = 25e9;
	g->inter_node_latency_s = 5e-6;
}

#endif
