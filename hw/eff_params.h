/*
 * eff_params.h - the named model parameters (efficiencies and overheads)
 * that a hardware file's `efficiency:` section sets and that calibration
 * refits. X-macro: LLMSIM_EFF(ENUM, "yaml_key", default, "what it is").
 *
 * The default applies only when a hardware file leaves a key out; every
 * shipped file states each value with its source. No efficiency constant
 * lives in sim/ code: it is read from here.
 */
LLMSIM_EFF(GEMM_TENSOR, "gemm_tensor_fraction", 0.80,
	   "fraction of the dense tensor peak (scaled to the sustained clock) a GEMM's mainloop sustains")
LLMSIM_EFF(GEMM_VECTOR, "vector_fraction", 0.80,
	   "fraction of CUDA-core peak (FP32/FP64 without tensor cores) sustained")
LLMSIM_EFF(HBM, "hbm_fraction", 0.90,
	   "fraction of HBM peak a large streaming kernel sustains (read+write)")
LLMSIM_EFF(L2, "l2_fraction", 0.80, "fraction of L2 peak bandwidth sustained")
LLMSIM_EFF(SMEM, "smem_fraction", 0.85, "fraction of shared-memory peak bandwidth sustained")
LLMSIM_EFF(ATTN_TENSOR, "attention_tensor_fraction", 0.60,
	   "fraction of the tensor peak (at the sustained clock) a FlashAttention-2 forward's MMAs sustain")
LLMSIM_EFF(ATTN3_TENSOR, "attention3_tensor_fraction", 0.75,
	   "fraction of the tensor peak (at the sustained clock) a FlashAttention-3 forward's MMAs sustain")
LLMSIM_EFF(KERNEL_OVERHEAD, "kernel_overhead_s", 3e-6,
	   "fixed time per kernel on the GPU beyond its work: prologue, epilogue, ramp")
LLMSIM_EFF(COLL_BW, "collective_bw_fraction", 0.80,
	   "fraction of link bandwidth a large collective reaches (bus bandwidth)")
LLMSIM_EFF(COLL_LATENCY, "collective_step_latency_s", 8e-6,
	   "latency per algorithm step of a collective, beyond the link latency")
LLMSIM_EFF(L2_REUSE, "l2_reuse_fraction", 0.50,
	   "fraction of L2 capacity that keeps re-read operands (GEMM panels, K/V) resident")
LLMSIM_EFF(SFU_OPS, "sfu_ops_per_clock_per_sm", 16,
	   "special-function (exp) results per clock per SM: softmax's exp rate (hardware)")
LLMSIM_EFF(ATTN_BWD, "attention_bwd_relative", 0.70,
	   "tensor efficiency of a FlashAttention-2 backward relative to its forward")
LLMSIM_EFF(ATTN3_BWD, "attention3_bwd_relative", 0.85,
	   "tensor efficiency of a FlashAttention-3 (warp-specialized) backward relative to its forward")
LLMSIM_EFF(INFLIGHT, "bytes_in_flight_per_thread", 64,
	   "outstanding load bytes per thread of a streaming kernel (4 x 16-byte loads): Little's law")
LLMSIM_EFF(COLL_LL_BW, "collective_ll_bw_fraction", 0.35,
	   "fraction of link bandwidth of NCCL's low-latency (LL) protocol: 8-byte stores carrying 4 bytes of data and a flag")
LLMSIM_EFF(COLL_LL_LATENCY, "collective_ll_step_latency_s", 1.5e-6,
	   "latency per algorithm step of the LL protocol, beyond the link latency")
LLMSIM_EFF(COLL_FIXED, "collective_fixed_s", 5e-6,
	   "fixed time of one collective kernel whatever its size: launch, proxy and peer handshake")
LLMSIM_EFF(COLL_CHANNELS, "collective_max_channels", 16,
	   "channels (blocks, one ring each) NCCL runs a large collective on within a node: each carries 1/max of the protocol's bandwidth, and smaller collectives get fewer (one per 4 KiB (LL) or 32 KiB (Simple) of each rank's share)")
LLMSIM_EFF(DECODE_HBM, "decode_hbm_fraction", 0.80,
	   "fraction of HBM bandwidth a decode-attention kernel streams its KV cache at (tiny query tiles, per-tile softmax and split bookkeeping keep it below a plain stream)")
LLMSIM_EFF(STRIDED_INDEX_OPS, "strided_index_ops_per_element", 24,
	   "int32 instructions per element of a non-vectorized strided element-wise kernel: PyTorch's OffsetCalculator does, per dimension, an IntDivider (multiply-high, shift, multiply-subtract) and, per operand, a multiply-add: 3 x (4 + 3) for 3-d views of 3 operands, plus bounds and loop")
LLMSIM_EFF(GEMM_HBM, "gemm_hbm_fraction", 0.90,
	   "fraction of HBM peak a GEMM's operand stream sustains: bulk (TMA) reads with few writes, so no read-to-write bus turnarounds, which the copies hbm_fraction is fitted on pay")
LLMSIM_EFF(SM_INFLIGHT, "sm_inflight_bytes", 20480,
	   "load bytes one SM keeps in flight to HBM at most, however deep its kernel's pipeline (its outstanding-miss tracking): by Little's law an SM draws at most this over the DRAM latency, so a GEMM on fewer SMs than the GPU has streams its weights below the HBM rate")
