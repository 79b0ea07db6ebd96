/*
 * sim_internal.h - what the op cost descriptions share inside sim/: one
 * kernel's description (work, traffic, launch shape), the timing model that
 * prices it on a GPU (occupancy, waves, roofline, Little's law, fixed
 * overhead), and the accumulation of several kernels into one prediction.
 *
 * Every op kind (gemm.c, elementwise.c, attention.c, decode.c,
 * collective.c, stream.c) turns its op into one or more struct kern; kernel.c prices
 * them. Nothing here allocates.
 */
#ifndef LLMSIM_SIM_INTERNAL_H
#define LLMSIM_SIM_INTERNAL_H

#include "sim.h"

/* One kernel launch, as the implementation runs it. */
struct kern {
	/* math: matrix work at mm_rate (tensor or CUDA cores), plus FP32
	 * CUDA-core ops and special-function (exp) ops */
	double mm_flops;          /* executed (padded) matrix FLOPs */
	double mm_rate_flops_per_s; /* whole-GPU peak of the unit doing them */
	double mm_eff;            /* fraction of that peak sustained */
	int mm_tensor;            /* 1: tensor cores, 0: CUDA cores */
	double vec_flops;         /* FP32 CUDA-core ops */
	double sfu_ops;           /* exp and friends */
	int overlap_math;         /* 1: matrix and vector work overlap (FA3) */
	double serial_frac;       /* overlap_math: share of the work that runs
				   * unoverlapped (FA3's causally masked tiles) */
	int sfu_overlap;          /* 1: the exps run in the special-function
				   * pipe while other warps of the SM issue
				   * the matrix and FP32 work (FA2: two or more
				   * warps per scheduler), so they add only
				   * where they exceed that work */
	int serial_math;          /* 1: a streaming kernel: each thread loads,
				   * computes, stores in turn, so its CUDA-core
				   * work adds to its memory time */

	/* traffic */
	double hbm_read_bytes, hbm_write_bytes;
	double l2_bytes;          /* loads served by L2 (hits) */
	double l2_store_bytes;    /* stores absorbed by L2 (partials, atomics) */
	double smem_bytes;        /* shared-memory reads + writes */
	double hbm_eff;           /* fraction of HBM peak its stream reaches
				   * (0: the GPU's hbm_fraction) */

	/* launch shape */
	int64_t blocks;
	int threads;
	int regs;
	double smem_per_block_bytes;
	double inflight_bytes_per_block; /* outstanding loads of one block */
	int bps;                  /* resident blocks per SM if known (0: compute) */
	double lat_rounds;        /* >0: each block waits this many DRAM round
				   * trips (a pipeline of fixed depth) instead
				   * of the aggregate Little's-law window */
	double fill_s;            /* pipeline fill/drain not overlapped */
	double atomic_ops;        /* read-modify-write atomics the L2 performs:
				   * no faster than its atomic rate */
	double block_edge_bytes;  /* loaded before a block's loop and stored
				   * after it (flash: Q and O; K, V and dK, dV):
				   * with few blocks per SM and no persistence
				   * these edges of each round are exposed */
};

/* A priced kernel. */
struct ktime {
	int blocks_per_sm;
	double occupancy, waves, tail;
	double mm_s, vec_s, compute_s, memory_s, latency_s, l2_s, smem_s, overhead_s;
	double time_s;
	enum llmsim_bound bound;
};

/* Occupancy calculator: resident blocks per SM under the thread, warp,
 * block, register (allocation unit per warp) and shared-memory
 * (granularity, per-block reservation) limits. 0 if one block cannot fit. */
int sim_blocks_per_sm(const struct llmsim_gpu *gpu, int threads, int regs,
		      double smem_bytes);

/* Price one kernel. */
void sim_kern_time(const struct llmsim_gpu *gpu, const struct kern *k, struct ktime *t);

/* HBM bytes of an operand of `unique` bytes requested `traffic` bytes in
 * all, when `working_set` bytes compete for L2 between re-reads. */
double sim_l2_filter(const struct llmsim_gpu *gpu, double unique, double traffic,
		     double working_set);

/* Usable L2 capacity for re-reads. */
double sim_l2_reuse_bytes(const struct llmsim_gpu *gpu);
/* The share of a working set of bytes that the L2 keeps between kernels:
 * all of it up to sim_l2_reuse_bytes, else that part. */
double sim_l2_resident_share(const struct llmsim_gpu *gpu, double bytes);

/* A prediction being built from several kernels: the time each bound
 * accounts for, so the op's bound is the one that costs the most. */
struct sim_acc {
	struct llmsim_pred *p;
	double bound_s[LLMSIM_BOUND_COUNT];
	int have_main;
};
void sim_acc_init(struct sim_acc *a, struct llmsim_pred *p);
/* Price k and add it; the first kernel added with main=1 (or the first
 * of all) gives the launch shape. */
void sim_acc_kern(struct sim_acc *a, const struct llmsim_gpu *gpu, const struct kern *k,
		  int main);
/* Sets bound, intensity and totals. */
void sim_acc_finish(struct sim_acc *a);

/* Bytes per thread outstanding for streaming kernels (Little's law). */
double sim_stream_inflight(const struct llmsim_gpu *gpu, int threads);

/* A streaming (memory-bound) kernel over `elems` elements: grid of
 * 256-thread blocks, each thread 16-byte vectors with 4 in flight. */
void sim_stream_kern(const struct llmsim_gpu *gpu, struct kern *k, double elems,
		     double elem_bytes, double read_bytes, double write_bytes,
		     double vec_flops);

/* A split reduction: out_elems outputs, each the sum of `splits` fp32
 * partials (part_bytes in all, from L2 when l2 is set, else HBM), written
 * as out_bytes. Each thread owns one 16-byte vector of outputs and keeps
 * its partials' loads in flight together. */
void sim_reduce_kern(const struct llmsim_gpu *gpu, struct kern *k, double out_elems,
		     double splits, double part_bytes, int l2, double out_bytes);

/* Peak rate for matrix math in dt: tensor if present, else CUDA cores. Sets
 * *tensor. 0 when the GPU has neither. */
double sim_mm_rate(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, int *tensor);
/* FP32 CUDA-core peak (what element-wise math and softmax run at). */
double sim_vec_rate(const struct llmsim_gpu *gpu);
/* Special-function unit rate (exp per second over the chip). */
double sim_sfu_rate(const struct llmsim_gpu *gpu);
/* 1 on Hopper class (sm_90: wgmma, TMA, warp specialization). */
int sim_is_hopper(const struct llmsim_gpu *gpu);
/* 1 on Hopper or later (warp-specialized GEMM shape). */
int sim_is_sm90_plus(const struct llmsim_gpu *gpu);

/* Checked products: 0 on success, LLMSIM_EINVAL with message on overflow. */
int sim_mul_chk(struct llmsim_err *err, const char *what, int n, const int64_t *f,
		int64_t *out);

static inline int64_t sim_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ceil/floor/min/max inline: the x86-64 baseline has no rounding
 * instruction, and libm calls dominate the hot path (|x| < 2^62 here) */
static inline double sim_ceil(double x)
{
	double t = (double)(int64_t)x;
	return t < x ? t + 1 : t;
}
static inline double sim_floor(double x)
{
	double t = (double)(int64_t)x;
	return t > x ? t - 1 : t;
}
static inline double sim_min(double a, double b) { return a < b ? a : b; }
static inline double sim_max(double a, double b) { return a > b ? a : b; }

/* The op kinds. Each validates its op and fills p (zeroed by the caller). */
int sim_gemm(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
	     struct llmsim_pred *p, struct llmsim_err *err);
int sim_elementwise(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		    struct llmsim_pred *p, struct llmsim_err *err);
int sim_attention(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		  struct llmsim_pred *p, struct llmsim_err *err);
int sim_decode(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
	       struct llmsim_pred *p, struct llmsim_err *err);
int sim_collective(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		   struct llmsim_pred *p, struct llmsim_err *err);
int sim_stream(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
	       struct llmsim_pred *p, struct llmsim_err *err);

/* GEMM building block for other ops (naive attention, MLA up-projection):
 * price one (batched) GEMM choosing tiles and split-K as the library would,
 * add its kernels to a (flops included) and return 0. The operands are
 * validated by the caller. `useful_flops` replaces 2mnk*batch in p->flops
 * when >= 0 (masked work). 0 or LLMSIM_EINVAL if no tile fits. */
int sim_gemm_add(const struct llmsim_gpu *gpu, int64_t m, int64_t n, int64_t k,
		 int64_t batch, enum llmsim_dtype dt, enum llmsim_dtype b_dt,
		 double useful_flops, struct sim_acc *a, int main);

/* Element-wise building block: add the kernels (and FLOPs) of one ew op
 * (tokens x hidden) to a. */
void sim_ew_add(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, enum llmsim_pass pass,
		int64_t tokens, int64_t hidden, enum llmsim_dtype dt, struct sim_acc *a,
		int main);
/* One forward element-wise kernel of a framework program's glue, as
 * PyTorch launches it: dt in, out written (a cast is a copy to another
 * type; softmax may write fp32), the second operand broadcast where bcast
 * (a mask); its FP32 work is not added to a's FLOPs. */
void sim_ew_add_as(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, int64_t tokens,
		   int64_t hidden, enum llmsim_dtype dt, enum llmsim_dtype out, int bcast,
		   struct sim_acc *a);
/* A framework's copy of a permuted (strided) view of elems elements into a
 * contiguous tensor: the element-wise non-vectorized path, as an ew copy
 * with strided=1 prices it. */
void sim_ew_strided_copy(const struct llmsim_gpu *gpu, int64_t elems, enum llmsim_dtype dt,
			 struct sim_acc *a);

/* dtype checks shared by the op kinds. */
int sim_check_dtype(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, const char *what,
		    struct llmsim_err *err);

#endif
