/*
 * kcommon.h - what the kernel files share (CUDA C++, not for C callers):
 * the counter-hash input generator (identical on host and device, so the
 * CPU reference recomputes any input element without copying it back),
 * poison and unwritten-output checks, error helpers, and the table of
 * benchmark families behind kernels.h.
 *
 * Operand data (kernels.h's llmsim_kdata) picks each operand's generator:
 *   normal (the default): bell-shaped values with full mantissas, as
 *     trained weights and activations have: activations N(0, 1), weights
 *     N(0, 0.02), FP8 tensors scaled to their range (amax -> 448, a per-
 *     tensor scale as a quantized model carries). Tensor-core power, and so
 *     the clock under the power limit, depends on how many bits toggle, so
 *     these are what calibration measures.
 *     The normal is Irwin-Hall of 8 uniforms (16-bit integers from two
 *     hashes; its tails end at 4.9 sd): integer arithmetic and one float
 *     multiply, so host and device make bit-identical values.
 *   grid: the few-bit grids of the first calibrations (retired from the fit;
 *     kept to measure the operand-data effect), exact in the storage type:
 *       KG_F24: 24-bit uniform in [-1, 1)          (fp32)
 *       KG_B7:  (i - 127) / 128, i in [0, 255)      (bf16 and fp16)
 *       KG_E3:  (i - 7) / 8, i in [0, 15)           (fp8 e4m3)
 *   zeros: every operand 0.
 * The CPU references read kval(), the generated value rounded to the
 * operand's storage type exactly as the device fill rounds it.
 */
#ifndef LLMSIM_KCOMMON_H
#define LLMSIM_KCOMMON_H

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include "kernels.h"

enum kgrid {
	KG_F24, KG_B7, KG_E3,   /* grid data (see above) */
	KG_N1,                  /* N(0, 1): activations */
	KG_NW,                  /* N(0, 0.02): weights */
	KG_N8,                  /* normal scaled to the e4m3 range: amax 448 */
	KG_ZERO
};
/* operand roles, for kgrid_for */
enum krole { KR_ACT, KR_WEIGHT };

/* Irwin-Hall(8) in units: 2 * (sum of 8 uniform 16-bit integers) - 8 * 65535,
 * in [-524280, 524280], standard deviation 65536 * sqrt(8/3) = 107020.21. */
#define KIH8_AMAX 524280.0f
#define KIH8_SD 107020.2149f
/* dequantization scale of an FP8 operand of standard deviation sd filled by
 * KG_N8 (value = x * 448 / (4.9 sd)): multiply the product by both */
#define KN8_DEQUANT(sd) ((sd) * KIH8_AMAX / (KIH8_SD * 448.0f))
enum ktype { KT_F32, KT_BF16, KT_F16, KT_FP8 };

__host__ __device__ static inline uint64_t khash(uint64_t seed, uint64_t i)
{
	uint64_t z = seed ^ (i * 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

__host__ __device__ static inline float kgen(uint64_t seed, uint64_t i, int grid)
{
	uint64_t h = khash(seed, i);
	switch (grid) {
	case KG_N1:
	case KG_NW:
	case KG_N8: {
		uint64_t a = khash(seed, 2 * i), b = khash(seed, 2 * i + 1);
		int sum = 0;
		for (int j = 0; j < 4; j++)
			sum += (int)((a >> (16 * j)) & 0xFFFFu) + (int)((b >> (16 * j)) & 0xFFFFu);
		float u = (float)(2 * sum - 8 * 65535);
		/* one correctly rounded multiply by a constant folded at compile
		 * time: the same float on host and device */
		return grid == KG_N1   ? u * (1.0f / KIH8_SD)
		       : grid == KG_NW ? u * (0.02f / KIH8_SD)
				       : u * (448.0f / KIH8_AMAX);
	}
	case KG_ZERO:
		return 0.0f;
	case KG_F24:
		return (float)(uint32_t)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
	case KG_B7:
		return ((float)(int)((h >> 32) % 255u) - 127.0f) * (1.0f / 128.0f);
	default:
		return ((float)(int)((h >> 32) % 15u) - 7.0f) * (1.0f / 8.0f);
	}
}

/* The generator of an operand of storage type t in role r under operand
 * data `data` (enum llmsim_kdata). */
static inline int kgrid_for(int data, int r, int t)
{
	if (data == LLMSIM_KDATA_ZEROS)
		return KG_ZERO;
	if (data == LLMSIM_KDATA_GRID)
		return t == KT_F32 ? KG_F24 : t == KT_FP8 ? KG_E3 : KG_B7;
	if (t == KT_FP8)
		return KG_N8;
	return r == KR_WEIGHT ? KG_NW : KG_N1;
}

/* The value element i holds on the device: kgen rounded to storage type t
 * as the fill kernel rounds it (host and device). */
__host__ __device__ static inline float kval(uint64_t seed, uint64_t i, int grid, int t)
{
	float v = kgen(seed, i, grid);
	switch (t) {
	case KT_F32: return v;
	case KT_BF16: return __bfloat162float(__float2bfloat16_rn(v));
	case KT_F16: return __half2float(__float2half_rn(v));
	default: return (float)__nv_fp8_e4m3(v);
	}
}

/* Host: storage bytes of a ktype. */
static inline size_t ktype_bytes(int t)
{
	return t == KT_F32 ? 4 : t == KT_FP8 ? 1 : 2;
}

/* Write a one-line message; returns -1. */
static inline int kerr(char *err, size_t n, const char *fmt, ...)
{
	if (err && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

#define KCK(call)                                                                    \
	do {                                                                         \
		cudaError_t e_ = (call);                                             \
		if (e_ != cudaSuccess)                                               \
			return kerr(err, errsz, "%s:%d: %s: %s", __FILE__, __LINE__, \
				    #call, cudaGetErrorString(e_));                  \
	} while (0)
/* After a launch: the launch error only (no synchronization). */
#define KLAUNCH() KCK(cudaGetLastError())

/* Fill n elements of type t at p with kgen(seed, i, grid). */
int kfill(void *p, int64_t n, int t, uint64_t seed, int grid, char *err, size_t errsz);
/* Count the elements of type t at p that are NaN or infinite (synchronizes). */
int kcount_nonfinite(const void *p, int64_t n, int t, uint64_t *count, char *err, size_t errsz);
/* cudaMalloc that zero-initialises *p first and reports the size on failure. */
int kalloc(void **p, size_t bytes, char *err, size_t errsz);
/* Poison: all-ones bytes (NaN in f32, bf16 and f16). */
int kpoison(void *p, size_t bytes, char *err, size_t errsz);
/* Element of a device array at index i, as float (synchronous copy). */
int kread(const void *p, int64_t i, int t, float *out, char *err, size_t errsz);
/* Copy n elements starting at index i to host floats. */
int kread_n(const void *p, int64_t i, int64_t n, int t, float *out, char *err, size_t errsz);

/* Sampled relative error: accumulate, then sqrt(num / den). */
struct kacc {
	double num, den;
	int64_t n;
};
static inline void kacc_add(struct kacc *a, double out, double ref)
{
	double d = out - ref;
	a->num += d * d;
	a->den += ref * ref;
	a->n++;
	if (isnan(out))
		a->num = NAN;
}
static inline double kacc_rel(const struct kacc *a)
{
	if (isnan(a->num))
		return NAN;
	if (a->den == 0)
		return a->num == 0 ? 0 : INFINITY;
	return sqrt(a->num / a->den);
}

/* Host random numbers for sample positions. */
static inline uint64_t krand(uint64_t *state)
{
	*state += 1;
	return khash(0x5EEDull, *state);
}

/* Finish a check: no unwritten outputs, error within tolerance. */
int kcheck_finish(struct llmsim_kbench *b, const struct kacc *a, uint64_t nonfinite,
		  char *err, size_t errsz);

struct kfam_ops {
	int (*setup)(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz);
	int (*check)(struct llmsim_kbench *b, char *err, size_t errsz);
	int (*run)(struct llmsim_kbench *b, char *err, size_t errsz);
	void (*release)(struct llmsim_kbench *b);
};

extern const struct kfam_ops kfam_stream, kfam_smem, kfam_empty, kfam_gemm, kfam_ew,
	kfam_attn, kfam_decode;

/* cuBLAS handles shared by gemm.cu and attn.cu (created on first use). */
struct cublasContext;
struct cublasLtContext;
int kcublas(struct cublasContext **h, char *err, size_t errsz);
int kcublaslt(struct cublasLtContext **h, char *err, size_t errsz);

#define KDIV_UP(a, b) (((a) + (b) - 1) / (b))

#endif
