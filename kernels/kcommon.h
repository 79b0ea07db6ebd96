/*
 * kcommon.h - what the kernel files share (CUDA C++, not for C callers):
 * the counter-hash input generator (identical on host and device, so the
 * CPU reference recomputes any input element without copying it back),
 * poison and unwritten-output checks, error helpers, and the table of
 * benchmark families behind kernels.h.
 *
 * Input grids are exactly representable in the storage type, so host and
 * device see the same values with no rounding question:
 *   KG_F24: 24-bit uniform in [-1, 1)          (fp32)
 *   KG_B7:  (i - 127) / 128, i in [0, 255)      (bf16 and fp16 exact)
 *   KG_E3:  (i - 7) / 8, i in [0, 15)           (fp8 e4m3 exact)
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

enum kgrid { KG_F24, KG_B7, KG_E3 };
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
	case KG_F24:
		return (float)(uint32_t)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
	case KG_B7:
		return ((float)(int)((h >> 32) % 255u) - 127.0f) * (1.0f / 128.0f);
	default:
		return ((float)(int)((h >> 32) % 15u) - 7.0f) * (1.0f / 8.0f);
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
