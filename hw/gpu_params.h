/*
 * gpu_params.h - the named model parameters (efficiencies and overheads)
 * that a hardware file's `efficiency:` section sets and that calibration
 * refits. X-macro: LLMSIM_PARAM(NAME, "key", default, "what it is"); the
 * code reads a GPU's value as gpu->param[LLMSIM_PARAM_NAME], NAME being
 * the key in capitals, and every key ends in its unit (_s, _bytes,
 * _fraction, _relative, _per_...): tests/test_hw.c holds them to it.
 *
 * The default applies only when a hardware file leaves a key out; every
 * shipped file states each value with its source. No efficiency constant
 * lives in sim/ code: it is read from here.
 */
LLMSIM_PARAM(GEMM_TENSOR_FRACTION, "gemm_tensor_fraction", 0.80,
	     "fraction of the dense tensor peak (scaled to the burst clock) a GEMM's mainloop sustains")
LLMSIM_PARAM(VECTOR_FRACTION, "vector_fraction", 0.80,
	     "fraction of CUDA-core peak (FP32/FP64 without tensor cores) sustained")
LLMSIM_PARAM(HBM_FRACTION, "hbm_fraction", 0.90,
	     "fraction of HBM peak a large streaming kernel sustains (read+write)")
LLMSIM_PARAM(L2_FRACTION, "l2_fraction", 0.80, "fraction of L2 peak bandwidth sustained")
LLMSIM_PARAM(SMEM_FRACTION, "smem_fraction", 0.85,
	     "fraction of shared-memory peak bandwidth sustained")
LLMSIM_PARAM(ATTENTION_TENSOR_FRACTION, "attention_tensor_fraction", 0.60,
	     "fraction of the tensor peak (at the burst clock) a FlashAttention-2 forward's MMAs sustain (its FP32 softmax work adds to them; its exps overlap them)")
LLMSIM_PARAM(ATTENTION3_TENSOR_FRACTION, "attention3_tensor_fraction", 0.75,
	     "fraction of the tensor peak (at the burst clock) a FlashAttention-3 forward's MMAs sustain")
LLMSIM_PARAM(KERNEL_OVERHEAD_S, "kernel_overhead_s", 3e-6,
	     "fixed time per kernel on the GPU beyond its work: prologue, epilogue, ramp")
LLMSIM_PARAM(COLLECTIVE_BW_FRACTION, "collective_bw_fraction", 0.80,
	     "fraction of link bandwidth a large collective reaches (bus bandwidth)")
LLMSIM_PARAM(COLLECTIVE_STEP_LATENCY_S, "collective_step_latency_s", 8e-6,
	     "latency per algorithm step of a ring or tree collective with NCCL's Simple protocol, beyond the link latency")
LLMSIM_PARAM(L2_REUSE_FRACTION, "l2_reuse_fraction", 0.50,
	     "fraction of L2 capacity that keeps re-read operands (GEMM panels, K/V) resident")
LLMSIM_PARAM(SFU_OPS_PER_CLOCK_PER_SM, "sfu_ops_per_clock_per_sm", 16,
	     "special-function (exp) results per clock per SM: softmax's exp rate (hardware)")
LLMSIM_PARAM(ATTENTION_BWD_RELATIVE, "attention_bwd_relative", 0.70,
	     "tensor efficiency of a FlashAttention-2 backward relative to its forward")
LLMSIM_PARAM(ATTENTION3_BWD_RELATIVE, "attention3_bwd_relative", 0.85,
	     "tensor efficiency of a FlashAttention-3 (warp-specialized) backward relative to its forward (the backward's softmax runs in series with its GEMMs, the forward's overlaps them)")
LLMSIM_PARAM(BYTES_IN_FLIGHT_PER_THREAD, "bytes_in_flight_per_thread", 64,
	     "outstanding load bytes per thread of a streaming kernel (4 x 16-byte loads): Little's law")
LLMSIM_PARAM(COLLECTIVE_LL_BW_FRACTION, "collective_ll_bw_fraction", 0.35,
	     "fraction of link bandwidth of NCCL's low-latency (LL) protocol: 8-byte stores carrying 4 bytes of data and a flag")
LLMSIM_PARAM(COLLECTIVE_LL_STEP_LATENCY_S, "collective_ll_step_latency_s", 1.5e-6,
	     "latency per algorithm step of the LL protocol, beyond the link latency")
LLMSIM_PARAM(COLLECTIVE_FIXED_S, "collective_fixed_s", 5e-6,
	     "fixed time of one collective kernel whatever its size: launch, proxy and peer handshake")
LLMSIM_PARAM(COLLECTIVE_MAX_CHANNELS, "collective_max_channels", 16,
	     "channels (blocks, one ring each) NCCL runs a large collective on within a node: an LL channel carries 1/max of LL's rate, a Simple one at most its block's Little's-law rate; smaller collectives get fewer (one per 4 KiB (LL) or 32 KiB (Simple) of each rank's share, one per 512 KiB chunk point-to-point)")
LLMSIM_PARAM(COLLECTIVE_LL128_STEP_LATENCY_S, "collective_ll128_step_latency_s", 3e-6,
	     "latency per algorithm step of NCCL's LL128 protocol (128-byte lines, 120 bytes of data and a flag), beyond the link latency")
LLMSIM_PARAM(COLLECTIVE_LOCAL_BW_FRACTION, "collective_local_bw_fraction", 0.40,
	     "fraction of HBM bandwidth at which a ring collective's channels copy the last received block out of NCCL's staging buffer into the output (read and write: 2 bytes of HBM traffic per byte), serialized with their sends")
LLMSIM_PARAM(COLLECTIVE_STRAGGLE_FRACTION, "collective_straggle_fraction", 0.30,
	     "relative spread (standard deviation) of one 512 KiB pipeline step's time between the channels of a Simple/LL128 collective: the slowest of n channels ends sqrt(2 ln n) deviations late, growing as the square root of its steps")
LLMSIM_PARAM(COLLECTIVE_NCCL_LINK_FRACTION, "collective_nccl_link_fraction", 0.82,
	     "NCCL's own figure of the intra-node link bandwidth (topology graph: per-link bandwidth x links), as a fraction of the link: only its protocol choice uses it")
LLMSIM_PARAM(COLLECTIVE_LL_MAX_BYTES_PER_S, "collective_ll_max_bytes_per_s", 141e9,
	     "NCCL's cap on the LL protocol's bus bandwidth within a node (tuning.cc llMaxBws, per GPU generation): only its protocol choice uses it")
LLMSIM_PARAM(DECODE_HBM_FRACTION, "decode_hbm_fraction", 0.80,
	     "fraction of HBM bandwidth a decode-attention kernel streams its KV cache at (tiny query tiles, per-tile softmax and split bookkeeping keep it below a plain stream)")
LLMSIM_PARAM(STRIDED_INDEX_OPS_PER_ELEMENT, "strided_index_ops_per_element", 24,
	     "int32 instructions per element of a non-vectorized strided element-wise kernel: PyTorch's OffsetCalculator does, per dimension, an IntDivider (multiply-high, shift, multiply-subtract) and, per operand, a multiply-add: 3 x (4 + 3) for 3-d views of 3 operands, plus bounds and loop")
LLMSIM_PARAM(L2_HIT_ROUND_TRIP_S, "l2_hit_round_trip_s", 2.5e-7,
	     "time of one load that hits L2 in a loop whose next load waits on it (load-to-use through L1 and the crossbar, plus the loop's own work): a reduction over splits' partials")
LLMSIM_PARAM(GEMM_HBM_FRACTION, "gemm_hbm_fraction", 0.90,
	     "fraction of HBM peak a GEMM's operand stream sustains: bulk (TMA) reads with few writes, so no read-to-write bus turnarounds, which the copies hbm_fraction is fitted on pay")
LLMSIM_PARAM(SM_INFLIGHT_BYTES, "sm_inflight_bytes", 20480,
	     "load bytes one SM keeps in flight to HBM at most, however deep its kernel's pipeline (its outstanding-miss tracking): by Little's law an SM draws at most this over the DRAM latency, so a GEMM on fewer SMs than the GPU has streams its weights below the HBM rate")
LLMSIM_PARAM(GRAPH_KERNEL_GAP_S, "graph_kernel_gap_s", 2.5e-6,
	     "time from one kernel's end to the start of the next kernel of the same call that depends on it (the front end's dependent launch after the first one's drain): a call of several kernels timed as a whole (CUDA events, CUDA graphs) pays it between them; kernel durations (CUPTI) do not")
LLMSIM_PARAM(STEP_KERNEL_GAP_S, "step_kernel_gap_s", 3.1e-7,
	     "time from one kernel's end to the start of the next inside a program's step (a CUDA graph of hundreds of kernels, or eager launches the host keeps ahead of): the dependent launch alone; a call of one op timed on its own (graph_kernel_gap_s, fitted on such calls) adds that replay's own overhead")
LLMSIM_PARAM(NARROW_TENSOR_ENERGY_RELATIVE, "narrow_tensor_energy_relative", 0.66,
	     "energy of an 8-bit (FP8, INT8) or narrower tensor-core FLOP against a 16-bit one: how much of the power limit an FP8 GEMM's rate uses (sim/predict.c)")
LLMSIM_PARAM(L2_ATOMIC_OPS_PER_S, "l2_atomic_ops_per_s", 1.2e11,
	     "16-bit atomic adds per second the L2 completes for a scatter-add (index_add_ of an MoE combine), whose rows collide")
LLMSIM_PARAM(GROUPED_GEMM_TENSOR_FRACTION, "grouped_gemm_tensor_fraction", 0.80,
	     "fraction of the tensor peak a grouped GEMM's mainloop sustains (CUTLASS's sm90 grouped kernel behind torch._grouped_mm), as gemm_tensor_fraction for cuBLAS")
LLMSIM_PARAM(GROUPED_GEMM_HBM_FRACTION, "grouped_gemm_hbm_fraction", 0.60,
	     "fraction of HBM bandwidth a grouped GEMM streams its experts' weights at: a few rows per expert leave its TMA pipeline latency-bound")
LLMSIM_PARAM(GROUPED_GEMM_FIXED_S, "grouped_gemm_fixed_s", 1e-5,
	     "fixed time of a grouped GEMM beyond a batched one's: its device-side setup of every group's problem shape, pointers and TMA descriptors before the first tile")
LLMSIM_PARAM(POWER_CAPPED_CLOCK_HZ, "power_capped_clock_hz", 1e12,
	     "the SM clock at which a load keeping the tensor pipes fully busy (on trained-like data, at duty 1) meets the board's power limit: any other load runs at this x (rho x duty x activity)^(-1/3) when that is below its burst clock (sim/predict.c); 1e12, the default: no power limit modelled")
LLMSIM_PARAM(HBM_QUEUE_EXPONENT, "hbm_queue_exponent", 2,
	     "how sharply a kernel's two memory limits meet: its HBM time and its window-of-loads (latency) time combine as (memory^q + latency^q)^(1/q), the knee of a closed queueing loop; 2 (in quadrature, the usual smooth maximum) by default; large q: the larger of the two")
