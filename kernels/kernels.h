/*
 * kernels.h - the calibration microbenchmarks, as seen from C.
 *
 * Each benchmark case is described by a struct llmsim_kspec (a family, a
 * variant and shapes). llmsim_kbench_setup allocates device buffers and
 * fills the inputs with fresh random values (a counter hash, reproducible
 * on the host, never zeros); llmsim_kbench_check poisons the outputs, runs
 * the case once and compares with a float64 CPU reference on a sample of
 * outputs (||out - ref|| / ||ref||), and fails if any output element is not
 * finite (unwritten); llmsim_kbench_run launches one invocation on the
 * legacy default stream, asynchronously. Each case declares the FLOPs and
 * the minimal HBM bytes it does (bytes_declared; for the shared-memory case
 * the shared-memory bytes), from which rates are computed.
 *
 * kernels/ knows nothing of sim/: the runner names cases in op-spec terms.
 * All functions return 0 or a negative value and write one line into err.
 */
#ifndef LLMSIM_KERNELS_H
#define LLMSIM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum llmsim_kfam {
	LLMSIM_KF_STREAM,  /* variant: LLMSIM_KS_*; n = fp32 elements per array */
	LLMSIM_KF_SMEM,    /* shared-memory read bandwidth; n = iterations */
	LLMSIM_KF_EMPTY,   /* empty kernel; n = back-to-back launches per invocation */
	LLMSIM_KF_GEMM,    /* C(m x n) = A(m x k) * B(k x n); dtype */
	LLMSIM_KF_EW,      /* variant: LLMSIM_KE_*; m = tokens, n = hidden; bf16 */
	LLMSIM_KF_ATTN,    /* variant: LLMSIM_KA_*; bf16 */
	LLMSIM_KF_DECODE,  /* variant: LLMSIM_KD_*; bf16 KV cache */
	LLMSIM_KF_COUNT
};

enum { LLMSIM_KS_COPY, LLMSIM_KS_SCALE, LLMSIM_KS_TRIAD, LLMSIM_KS_COUNT };
enum {
	LLMSIM_KE_ADD, LLMSIM_KE_MUL, LLMSIM_KE_SILU_MUL, LLMSIM_KE_GELU,
	LLMSIM_KE_RMSNORM, LLMSIM_KE_LAYERNORM, LLMSIM_KE_SOFTMAX, LLMSIM_KE_ROPE,
	LLMSIM_KE_COUNT
};
/* kernels/ew.cu rotates small inputs over this many copies at most, of
 * this many bytes in all (the calibration cases that still fit in L2 say
 * in_l2=1: calib/runner/cases.c) */
#define LLMSIM_KE_MAX_SETS     8
#define LLMSIM_KE_ROTATE_BYTES (256.0 * 1024 * 1024)
/* element-wise kernels with a second (T, H) input */
static inline int llmsim_ke_two_inputs(int kind)
{
	return kind == LLMSIM_KE_ADD || kind == LLMSIM_KE_MUL || kind == LLMSIM_KE_SILU_MUL;
}
enum { LLMSIM_KA_NAIVE, LLMSIM_KA_FLASH2, LLMSIM_KA_COUNT };
enum { LLMSIM_KD_FLASH2, LLMSIM_KD_SPLITKV, LLMSIM_KD_PAGED, LLMSIM_KD_COUNT };

/* GEMM data types (inputs / output / math). */
enum llmsim_kdtype {
	LLMSIM_KDT_FP32,   /* fp32 in, fp32 out, fp32 math (CUDA cores) */
	LLMSIM_KDT_TF32,   /* fp32 in/out, tf32 tensor math */
	LLMSIM_KDT_BF16,   /* bf16 in/out, fp32 accumulation */
	LLMSIM_KDT_FP16,   /* fp16 in/out, fp32 accumulation */
	LLMSIM_KDT_FP8,    /* e4m3 in (cuBLASLt, unit scales), bf16 out */
	LLMSIM_KDT_COUNT
};

/* The values a case fills its operands with (kcommon.h says how):
 * normal is what trained weights and activations look like, and the
 * default; grid and zeros exist to measure how operand data moves the
 * clock under the power limit. */
enum llmsim_kdata { LLMSIM_KDATA_NORMAL, LLMSIM_KDATA_GRID, LLMSIM_KDATA_ZEROS, LLMSIM_KDATA_COUNT };

struct llmsim_kspec {
	enum llmsim_kfam fam;
	enum llmsim_kdata data;    /* operand values (0: normal) */
	int variant;
	enum llmsim_kdtype dtype;  /* GEMM only */
	int64_t m, n, k;           /* GEMM; EW: m tokens, n hidden; STREAM/SMEM/EMPTY: n */
	int64_t batch, heads, kv_heads, seq, head_dim; /* ATTN (seq) / DECODE (seq = kv_len) */
	int64_t block_size;        /* DECODE paged: tokens per KV block */
	int causal;                /* ATTN */
};

struct llmsim_kbench {
	struct llmsim_kspec spec;
	char impl[64];             /* "cublas", "llmsim_flash2", ... */
	double flops_declared;
	double bytes_declared;
	double tol;                /* the dtype's tolerance for check_rel_err */
	double check_rel_err;      /* after llmsim_kbench_check; -1 if none */
	int launches;              /* kernels one invocation launches (LLMSIM_KF_EMPTY: n) */
	void *priv;                /* family state */
};

/* Allocate and fill a case. seed makes the inputs (pass a fresh one per
 * case). On failure everything is freed. */
int llmsim_kbench_setup(struct llmsim_kbench *b, const struct llmsim_kspec *spec,
			uint64_t seed, char *err, size_t errsz);
/* Poison outputs, run once, synchronize, compare with the CPU reference.
 * Returns 0 when within tolerance (check_rel_err set), else negative. */
int llmsim_kbench_check(struct llmsim_kbench *b, char *err, size_t errsz);
/* Launch one invocation (asynchronous). Returns 0 or negative (launch error). */
int llmsim_kbench_run(struct llmsim_kbench *b, char *err, size_t errsz);
/* Free device and host state; safe on a zeroed or freed bench. */
void llmsim_kbench_free(struct llmsim_kbench *b);

/* Library versions for the run record ("" when unknown). */
void llmsim_kernels_cublas_version(char *buf, size_t size);

/* Release library handles (cuBLAS, cuBLASLt) at the end of a run. */
void llmsim_kernels_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
