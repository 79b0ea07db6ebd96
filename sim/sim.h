/*
 * sim.h - the GPU model: one kernel (an op with shapes, data type and
 * implementation) on one GPU, predicted from first principles.
 *
 * Every op kind has one cost description (FLOPs, HBM bytes read/written,
 * L2 and shared-memory traffic, launch shape) and one timing model over
 * the SMs (occupancy, waves, tail), the memory hierarchy, and the launch
 * and latency floors. Training, inference, calibration and the reports all
 * price kernels only through this header.
 *
 * llmsim_predict validates the op against the GPU and fills a
 * llmsim_pred; it allocates nothing and is safe to call from many threads.
 */
#ifndef LLMSIM_SIM_H
#define LLMSIM_SIM_H

#include <stddef.h>
#include <stdint.h>
#include "base/dtype.h"
#include "base/err.h"
#include "hw/gpu.h"

enum llmsim_op_kind {
	LLMSIM_OP_GEMM,        /* C[batch][m][n] = A[m][k] * B[k][n] */
	LLMSIM_OP_ELEMENTWISE, /* memory-bound ops over tokens x hidden */
	LLMSIM_OP_ATTENTION,   /* prefill / training attention */
	LLMSIM_OP_DECODE,      /* few query tokens against a KV cache */
	LLMSIM_OP_COLLECTIVE,  /* communication between GPUs */
	LLMSIM_OP_STREAM,      /* a memory microbenchmark (calibration) */
	LLMSIM_OP_COUNT
};

enum llmsim_ew_kind {
	LLMSIM_EW_ADD, LLMSIM_EW_MUL, LLMSIM_EW_SILU_MUL, LLMSIM_EW_GELU,
	LLMSIM_EW_RMSNORM, LLMSIM_EW_LAYERNORM, LLMSIM_EW_SOFTMAX, LLMSIM_EW_ROPE,
	LLMSIM_EW_EMBEDDING,     /* gather tokens rows of a [vocab, hidden] table */
	LLMSIM_EW_CROSS_ENTROPY, /* softmax + loss over logits [tokens, hidden=vocab] */
	LLMSIM_EW_COPY,          /* plain copy (hidden elements per token) */
	LLMSIM_EW_ADAMW,         /* optimizer update over `hidden` params (tokens=1) */
	LLMSIM_EW_SILU,          /* x * sigmoid(x) alone (an unfused SwiGLU's first half) */
	LLMSIM_EW_RELU,          /* max(x, 0) (OPT's MLP) */
	LLMSIM_EW_GATHER,        /* index_select: `tokens` rows of `hidden` picked by int64 ids */
	LLMSIM_EW_SCATTER_ADD,   /* index_add_: `tokens` rows of `hidden` added into rows
				  * picked by ids, with atomics (an MoE combine) */
	LLMSIM_EW_TOPK,          /* the k largest of each of `tokens` rows of `hidden` (values
				  * and int64 indices): a router's expert choice */
	LLMSIM_EW_SORT,          /* a stable sort of `tokens` int64 keys with their indices
				  * (hidden 1): the permute of MoE routing */
	LLMSIM_EW_REDUCE,        /* a mean (or sum) over each row: [tokens, hidden] -> [tokens] */
	LLMSIM_EW_QUANTIZE,      /* a cast to a low-precision GEMM format (out_dtype, with
				  * its block scales), writing k copies: 1 rowwise, 2 also
				  * the columnwise (transposed, or scaled along the other
				  * dimension) one (Transformer Engine's cast-transpose) */
	LLMSIM_EW_COUNT
};

enum llmsim_pass { LLMSIM_PASS_FWD, LLMSIM_PASS_BWD, LLMSIM_PASS_FWDBWD };

enum llmsim_attn_impl {
	LLMSIM_ATTN_NAIVE,  /* QK^T, softmax, PV as separate kernels, N^2 in HBM */
	LLMSIM_ATTN_FLASH1,
	LLMSIM_ATTN_FLASH2,
	LLMSIM_ATTN_FLASH3,
	LLMSIM_ATTN_SDPA_MATH,      /* PyTorch's math SDPA backend, its default: Q, K, V upcast
				     * to FP32 (SIMT matmuls), the causal mask materialized,
				     * _safe_softmax's passes, casts back (forward only) */
	LLMSIM_ATTN_SDPA_MATH_BF16, /* the same with allow_fp16_bf16_reduction_math_sdp(True):
				     * no upcast, BF16 tensor-core matmuls */
	LLMSIM_ATTN_HF_EAGER,       /* HF transformers' eager_attention_forward: repeat_kv,
				     * BF16 matmuls, scale, + mask, an FP32 softmax, a cast,
				     * the output transposed contiguous (forward only) */
	LLMSIM_ATTN_IMPL_COUNT
};

enum llmsim_decode_impl {
	LLMSIM_DEC_NAIVE,         /* materialized scores per step */
	LLMSIM_DEC_FLASH2,        /* one block per (batch, kv head): no KV split */
	LLMSIM_DEC_FLASHDECODING, /* KV split across blocks + a reduction */
	LLMSIM_DEC_PAGED,         /* PagedAttention: block table, paged KV */
	LLMSIM_DEC_IMPL_COUNT
};

enum llmsim_coll_kind {
	LLMSIM_COLL_ALLREDUCE, LLMSIM_COLL_ALLGATHER, LLMSIM_COLL_REDUCESCATTER,
	LLMSIM_COLL_ALLTOALL, LLMSIM_COLL_SENDRECV, LLMSIM_COLL_COUNT
};

enum llmsim_coll_algo { LLMSIM_ALGO_AUTO, LLMSIM_ALGO_RING, LLMSIM_ALGO_TREE };

/* The microbenchmarks calibration measures one parameter with (sim/stream.c). */
enum llmsim_stream_kind {
	LLMSIM_STREAM_LAUNCH, /* an empty kernel */
	LLMSIM_STREAM_HBM,    /* a copy at the HBM bandwidth plateau */
	LLMSIM_STREAM_L2,     /* a copy re-run over arrays that stay in L2 */
	LLMSIM_STREAM_SMEM,   /* shared-memory reads over every SM */
	LLMSIM_STREAM_COUNT
};

enum llmsim_bound {
	LLMSIM_BOUND_TENSOR,   /* tensor-core math */
	LLMSIM_BOUND_VECTOR,   /* CUDA-core math */
	LLMSIM_BOUND_HBM,      /* DRAM bandwidth */
	LLMSIM_BOUND_L2,
	LLMSIM_BOUND_SMEM,
	LLMSIM_BOUND_LATENCY,  /* too few bytes in flight to cover memory latency */
	LLMSIM_BOUND_LAUNCH,   /* launch / fixed overhead dominates */
	LLMSIM_BOUND_LINK,     /* interconnect bandwidth (collectives) */
	LLMSIM_BOUND_COUNT
};

struct llmsim_op {
	enum llmsim_op_kind kind;
	enum llmsim_dtype dtype;      /* math / activation type */
	union {
		struct {
			int64_t m, n, k;
			int64_t batch;        /* >= 1: batched GEMM */
			enum llmsim_dtype b_dtype; /* weights (B); == dtype unless weight-only quant */
			int64_t groups;       /* > 1: a grouped GEMM (MoE experts): m rows in
					       * all, routed uniformly over `groups` weight
					       * matrices [n, k]; 0 or 1: one matrix */
		} gemm;
		struct {
			enum llmsim_ew_kind kind;
			int64_t tokens, hidden;
			enum llmsim_pass pass;
			int strided;          /* operands are strided views: a framework's
					       * non-vectorized path (scalar loads, index
					       * math per element), not 16-byte vectors */
			int serial;           /* a grid-stride loop that loads, computes and
					       * stores one 16-byte vector per operand per
					       * thread and step (llmsim's kernels/ew.cu),
					       * not a framework's unrolled kernel (PyTorch
					       * loads 4 vectors, then computes): a quarter
					       * of the bytes in flight, and the math sits
					       * between each load and its store */
			int bcast;            /* add, mul: the second operand is broadcast
					       * (a [hidden] weight or a [tokens, 1] scale):
					       * its bytes are negligible */
			enum llmsim_dtype out_dtype; /* copy: the type written (a cast);
					       * 0 (fp64 is never a cast target here):
					       * the same as dtype */
			int64_t k;            /* topk: elements kept per row */
			int in_l2;            /* its operands are in L2 already (just
					       * written by the kernel before, or a
					       * working set well within the L2): loads
					       * hit L2 and stores stay there */
		} ew;
		struct {
			enum llmsim_attn_impl impl;
			int64_t batch, heads, kv_heads, seq, kv_seq, head_dim;
			int64_t v_head_dim;   /* 0: same as head_dim */
			int causal;
			enum llmsim_pass pass;
		} attn;
		struct {
			enum llmsim_decode_impl impl;
			int64_t batch, heads, kv_heads, kv_len, head_dim;
			int64_t q_len;        /* query tokens per sequence (1; k+1 to verify) */
			int64_t block_size;   /* PAGED: tokens per KV block */
			int64_t kv_lora_rank, rope_dim; /* MLA when kv_lora_rank > 0 */
			int mla_absorbed;     /* MLA: up-projections absorbed into q/o */
			enum llmsim_dtype kv_dtype;
		} dec;
		struct {
			enum llmsim_coll_kind kind;
			double bytes;         /* per-rank buffer (all-reduce input size) */
			int gpus;             /* ranks in the group */
			int nodes;            /* NVLink domains the group spans (1: one; a domain
					       * is a node unless the GPU's nvlink_domain_gpus
					       * joins several) */
			enum llmsim_coll_algo algo;
		} coll;
		struct {
			enum llmsim_stream_kind kind;
			double bytes;         /* read + written (launch: 0) */
		} stream;
	} u;
	double load_duty;             /* 0: a lone kernel (the burst clock,
				       * burst_clock_hz); in (0, 1]: the op runs
				       * inside a load that has kept the GPU busy
				       * this fraction of the power controller's
				       * window (a training step: 1): its clock
				       * follows the power limit (sim/predict.c) */
	enum llmsim_operand_data operand_data; /* what the operands hold (hw/gpu.h;
				       * 0: trained weights and activations): sets the
				       * switching activity of tensor work, and so the
				       * clock under the power limit and in a burst */
	double load_rho;              /* > 0: the tensor intensity (rho, in 16-bit
				       * work) of the whole load the op runs in,
				       * known to the caller: one clock for every op
				       * of the window; 0: the op's own rho */
};

struct llmsim_pred {
	/* the cost description */
	double flops;                 /* useful FLOPs */
	double hbm_read_bytes, hbm_write_bytes, hbm_bytes;
	double l2_bytes;              /* traffic served by L2 */
	double smem_bytes;            /* shared-memory traffic */
	double workspace_bytes;       /* device memory the op needs beyond in/out */
	double intensity_flops_per_byte; /* flops / hbm_bytes */
	double link_bytes;            /* COLLECTIVE: bytes each rank sends */

	/* launch shape (of the main kernel) */
	int kernels;                  /* launches this op takes */
	int64_t blocks;
	int threads_per_block;
	int regs_per_thread;
	double smem_bytes_per_block;
	int blocks_per_sm;            /* resident, by the occupancy calculator */
	double occupancy;             /* resident warps / max warps */
	double waves;                 /* blocks / (SMs * blocks_per_sm), fractional */
	double tail_efficiency;       /* useful fraction of the last-wave-rounded work */
	int tile_m, tile_n, tile_k, split_k; /* GEMM; attention: tile_m=Br, tile_n=Bc */

	/* time */
	double compute_s, memory_s, latency_s, overhead_s;
	double time_s;
	enum llmsim_bound bound;
	double time_err_pct;          /* expected error: p80 of |error| of the op's class
				       * on held-out kernels (hw/gpu.h), NaN if none */
	double time_bias_pct;         /* the class's median signed error where it is
				       * biased (llmsim_err_class_biased), else NaN */
	int time_err_n;               /* held-out kernels behind them (0: none) */
	double sm_clock_hz;           /* the SM clock the op was priced at: its burst
				       * clock for its data, or the clock its load
				       * holds under the power limit */
	const char *op_class;         /* "gemm", "elementwise", ... (static) */

	/* added by the sim helper: each kernel's time in launch order (the
	 * first LLMSIM_PRED_MAX_KERNELS; they sum to time_s when kernels is
	 * no more), so calibration and traces can match kernel records one by
	 * one; kernel_bound[i] is what bounds kernel i */
#define LLMSIM_PRED_MAX_KERNELS 12
	double kernel_time_s[LLMSIM_PRED_MAX_KERNELS];
	enum llmsim_bound kernel_bound[LLMSIM_PRED_MAX_KERNELS];
};

/* Predict one op. Returns 0, or LLMSIM_EINVAL (bad shape, overflow, heads
 * not divisible by kv heads) / LLMSIM_EUNSUPPORTED (dtype the GPU lacks)
 * with a one-line message. */
int llmsim_predict(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		   struct llmsim_pred *out, struct llmsim_err *err);

/* Name tables (static strings), and parsers returning -1 if unknown. */
const char *llmsim_op_kind_name(enum llmsim_op_kind k);
const char *llmsim_ew_kind_name(enum llmsim_ew_kind k);
const char *llmsim_attn_impl_name(enum llmsim_attn_impl k);
const char *llmsim_decode_impl_name(enum llmsim_decode_impl k);
const char *llmsim_coll_kind_name(enum llmsim_coll_kind k);
const char *llmsim_bound_name(enum llmsim_bound b);
const char *llmsim_pass_name(enum llmsim_pass p);
const char *llmsim_stream_kind_name(enum llmsim_stream_kind k);
int llmsim_ew_kind_parse(const char *s);
int llmsim_attn_impl_parse(const char *s);
int llmsim_decode_impl_parse(const char *s);
int llmsim_coll_kind_parse(const char *s);
int llmsim_pass_parse(const char *s);
int llmsim_stream_kind_parse(const char *s);

/* Op specs: one line of text naming an op, shared by calibration records,
 * traces, tests and the CLI:
 *   gemm m=4096 n=4096 k=4096 [batch=1] [dtype=bf16] [b_dtype=...]
 *   ew kind=rmsnorm tokens=8192 hidden=8192 [pass=fwd] [dtype=bf16] [strided=0]
 *      [serial=0] [in_l2=0]
 *   attention impl=flash2 batch=1 heads=32 [kv_heads=32] seq=4096 [kv_seq=seq]
 *             head_dim=128 [v_head_dim=head_dim] [causal=1] [pass=fwd] [dtype=bf16]
 *   decode impl=paged batch=8 heads=32 kv_heads=8 kv_len=4096 head_dim=128
 *          [q_len=1] [block_size=16] [kv_lora_rank=0 rope_dim=0 mla_absorbed=1]
 *          [dtype=bf16] [kv_dtype=dtype]
 *   collective kind=allreduce bytes=1e9 gpus=8 [nodes=1] [algo=auto] [dtype=bf16]
 *   stream kind=l2 bytes=8388608 [dtype=fp32]
 * Keys are the struct field names; enum values use the *_name() strings.
 * llmsim_op_parse fills defaults, rejects unknown keys and bad values with a
 * one-line message; it does not check the op against a GPU (predict does). */
int llmsim_op_parse(const char *spec, struct llmsim_op *op, struct llmsim_err *err);
/* Write the canonical spec of op into buf (all keys); returns chars needed. */
int llmsim_op_format(const struct llmsim_op *op, char *buf, size_t size);
/* The same without the keys whose value the parser would fill anyway (a
 * spec for people: "gemm m=8192 n=6144 k=4096"); it parses back to the
 * same canonical spec. Returns chars written (cut to size). */
int llmsim_op_format_short(const struct llmsim_op *op, char *buf, size_t size);

/* How much of the GPU's 16-bit tensor peak (at its burst clock) the
 * op keeps busy, by its lone prediction: its FLOP rate over that peak,
 * 8-bit FLOPs weighted by their energy (narrow_tensor_energy_relative);
 * 0 for data types without tensor cores. What a load's power depends on
 * (sim/predict.c); callers average it over a load for op.load_rho. */
double llmsim_op_rho(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		     const struct llmsim_pred *lone);

/* op.load_duty of a load that keeps the GPU busy duty of the time for
 * run_s: duty (at most 1), scaled by how much of the power controller's
 * window (gpu->power_window_s) the run has filled by its middle. */
double llmsim_power_load(const struct llmsim_gpu *gpu, double duty, double run_s);
/* The same for a whole load: flops of math type dt (per GPU) in busy_s. */
double llmsim_tensor_rho(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, double flops,
			 double busy_s);

/* The board power one GPU draws, in watts, under a load of tensor
 * intensity rho (op.load_rho) busy duty of the time, by the power law of
 * sim/predict.c: dynamic power ~ rho duty f^3, the limit (tdp_w) met at
 * power_capped_clock_hz when rho = duty = 1. A load the law caps draws
 * tdp_w; one below the cap runs at its burst clock and draws
 * tdp_w x rho duty (burst / capped clock)^3. The law has only the tensor
 * cores' switching power, so a light load's figure is a lower bound. A
 * GPU file that models no power limit gets tdp_w x duty (an upper bound);
 * 0 when the file states no TDP. */
double llmsim_power_w(const struct llmsim_gpu *gpu, double rho, double duty);

/* The class an op's calibration and expected error belong to: "gemm",
 * "elementwise", "attention", "decode", "collective", and for a stream
 * its kind ("launch", "hbm", "l2", "smem"). */
const char *llmsim_op_class(const struct llmsim_op *op);

#endif
