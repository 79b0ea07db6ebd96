/*
 * gemm.cu - GEMMs through cuBLAS (fp32, tf32, bf16, fp16) and cuBLASLt (fp8
 * e4m3 inputs with unit scale pointers, bf16 output).
 *
 * nvcc -arch=sm_90 -c gemm.cu   (links cublas, cublasLt)
 * Row-major C (M x N) = A (M x K) * B (K x N), with B stored as W = B^T
 * (N x K, the nn.Linear weight layout). Column-major cuBLAS sees
 * C^T (N x M) = op(W) * A^T with op = T: one "TN" call, which is also the
 * only layout cuBLASLt takes for fp8 on Hopper.
 * Inputs rotate over several buffer sets whose total exceeds the L2, so
 * small (decode) GEMMs read their weights from HBM as in a real model.
 * Operands (kcommon.h): activations A N(0, 1), weights W N(0, 0.02); FP8
 * ones scaled to the e4m3 range, with the dequantization scales passed to
 * cuBLASLt as its A/B scale pointers, as a quantized model runs.
 * Check: 128 random outputs against float64 dot products of the stored
 * (rounded) operands, and no output element left unwritten.
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdlib.h>
#include <string.h>
#include "kcommon.h"

#define GEMM_MAX_SETS 16
#define GEMM_ROTATE_BYTES (256.0 * 1024 * 1024)
#define GEMM_LT_WORKSPACE (32u << 20)

static cublasHandle_t g_cublas;
static cublasLtHandle_t g_cublaslt;

int kcublas(struct cublasContext **h, char *err, size_t errsz)
{
	if (!g_cublas) {
		cublasStatus_t st = cublasCreate(&g_cublas);
		if (st != CUBLAS_STATUS_SUCCESS) {
			g_cublas = NULL;
			return kerr(err, errsz, "cublasCreate: %s", cublasGetStatusString(st));
		}
	}
	*h = g_cublas;
	return 0;
}

int kcublaslt(struct cublasLtContext **h, char *err, size_t errsz)
{
	if (!g_cublaslt) {
		cublasStatus_t st = cublasLtCreate(&g_cublaslt);
		if (st != CUBLAS_STATUS_SUCCESS) {
			g_cublaslt = NULL;
			return kerr(err, errsz, "cublasLtCreate: %s", cublasGetStatusString(st));
		}
	}
	*h = g_cublaslt;
	return 0;
}

extern "C" void llmsim_kernels_cublas_version(char *buf, size_t size)
{
	int v = 0;
	cublasHandle_t h = NULL;
	if (kcublas(&h, NULL, 0) == 0 && cublasGetVersion(h, &v) == CUBLAS_STATUS_SUCCESS)
		snprintf(buf, size, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	else
		snprintf(buf, size, "%s", "");
}

extern "C" void llmsim_kernels_shutdown(void)
{
	if (g_cublas)
		cublasDestroy(g_cublas);
	if (g_cublaslt)
		cublasLtDestroy(g_cublaslt);
	g_cublas = NULL;
	g_cublaslt = NULL;
}

#define KCUBLAS(call)                                                                \
	do {                                                                         \
		cublasStatus_t s_ = (call);                                          \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                     \
			return kerr(err, errsz, "%s: %s", #call,                     \
				    cublasGetStatusString(s_));                      \
	} while (0)

struct gemm_state {
	int64_t m, n, k;
	int in_t, out_t;              /* ktype of A/W and of C */
	int grid_a, grid_w;           /* kgrid of A (activations) and W (weights) */
	float deq_a, deq_w;           /* FP8: dequantization scales (1 otherwise) */
	int sets, cur;
	void *a[GEMM_MAX_SETS];       /* (M, K) */
	void *w[GEMM_MAX_SETS];       /* (N, K) = B^T */
	void *c;                      /* (M, N) */
	uint64_t seed;
	/* cuBLASLt (fp8) */
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	int lt_auto; /* 1: pass algo NULL, cuBLASLt picks per call */
	float *scales;                /* (2) device: a_scale, b_scale = 1 */
	void *ws;
};

static uint64_t seed_a(const struct gemm_state *s, int set) { return s->seed + 2 * set; }
static uint64_t seed_w(const struct gemm_state *s, int set) { return s->seed + 2 * set + 1; }

static void gemm_release(struct llmsim_kbench *b)
{
	struct gemm_state *s = (struct gemm_state *)b->priv;
	for (int i = 0; i < GEMM_MAX_SETS; i++) {
		cudaFree(s->a[i]);
		cudaFree(s->w[i]);
	}
	cudaFree(s->c);
	cudaFree(s->scales);
	cudaFree(s->ws);
	if (s->op)
		cublasLtMatmulDescDestroy(s->op);
	if (s->la)
		cublasLtMatrixLayoutDestroy(s->la);
	if (s->lb)
		cublasLtMatrixLayoutDestroy(s->lb);
	if (s->lc)
		cublasLtMatrixLayoutDestroy(s->lc);
	free(s);
}

static int lt_setup(struct gemm_state *s, char *err, size_t errsz)
{
	cublasLtHandle_t lt;
	if (kcublaslt(&lt, err, errsz))
		return -1;
	if (kalloc((void **)&s->scales, 2 * sizeof(float), err, errsz) ||
	    kalloc(&s->ws, GEMM_LT_WORKSPACE, err, errsz))
		return -1;
	/* cuBLASLt's "A" is our W (see the layouts below), its "B" our A */
	float deq[2] = {s->deq_w, s->deq_a};
	KCK(cudaMemcpy(s->scales, deq, sizeof deq, cudaMemcpyHostToDevice));
	KCUBLAS(cublasLtMatmulDescCreate(&s->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	KCUBLAS(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	KCUBLAS(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	const float *sa = s->scales, *sb = s->scales + 1;
	KCUBLAS(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa,
					       sizeof sa));
	KCUBLAS(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb,
					       sizeof sb));
	/* column-major: W is K x N (ld K), A^T is K x M (ld K), C^T is N x M (ld N) */
	KCUBLAS(cublasLtMatrixLayoutCreate(&s->la, CUDA_R_8F_E4M3, s->k, s->n, s->k));
	KCUBLAS(cublasLtMatrixLayoutCreate(&s->lb, CUDA_R_8F_E4M3, s->k, s->m, s->k));
	KCUBLAS(cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_16BF, s->n, s->m, s->n));
	cublasLtMatmulPreference_t pref = NULL;
	KCUBLAS(cublasLtMatmulPreferenceCreate(&pref));
	size_t wsb = GEMM_LT_WORKSPACE;
	cublasLtMatmulHeuristicResult_t heur;
	int found = 0;
	cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
		pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
	if (st == CUBLAS_STATUS_SUCCESS)
		st = cublasLtMatmulAlgoGetHeuristic(lt, s->op, s->la, s->lb, s->lc, s->lc, pref, 1,
						    &heur, &found);
	cublasLtMatmulPreferenceDestroy(pref);
	if (st != CUBLAS_STATUS_SUCCESS || found < 1)
		return kerr(err, errsz, "cublasLt fp8: no algorithm for m=%lld n=%lld k=%lld (%s)",
			    (long long)s->m, (long long)s->n, (long long)s->k,
			    cublasGetStatusString(st));
	s->algo = heur.algo;
	return 0;
}

static int gemm_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	const struct llmsim_kspec *p = &b->spec;
	if (p->m <= 0 || p->n <= 0 || p->k <= 0)
		return kerr(err, errsz, "gemm: bad shape");
	struct gemm_state *s = (struct gemm_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->m = p->m, s->n = p->n, s->k = p->k;
	s->seed = seed * 64;
	switch (p->dtype) {
	case LLMSIM_KDT_FP32:
		s->in_t = s->out_t = KT_F32, b->tol = 1e-4;
		break;
	case LLMSIM_KDT_TF32:
		/* tf32 keeps 10 mantissa bits: ~2^-11 per product, random signs */
		s->in_t = s->out_t = KT_F32, b->tol = 5e-3;
		break;
	case LLMSIM_KDT_BF16:
		s->in_t = s->out_t = KT_BF16, b->tol = 1e-2;
		break;
	case LLMSIM_KDT_FP16:
		s->in_t = s->out_t = KT_F16, b->tol = 5e-3;
		break;
	case LLMSIM_KDT_FP8:
		s->in_t = KT_FP8, s->out_t = KT_BF16, b->tol = 2e-2;
		break;
	default:
		return kerr(err, errsz, "gemm: unknown dtype %d", (int)p->dtype);
	}
	s->grid_a = kgrid_for(p->data, KR_ACT, s->in_t);
	s->grid_w = kgrid_for(p->data, KR_WEIGHT, s->in_t);
	s->deq_a = s->grid_a == KG_N8 ? KN8_DEQUANT(1.0f) : 1.0f;
	s->deq_w = s->grid_w == KG_N8 ? KN8_DEQUANT(0.02f) : 1.0f;
	snprintf(b->impl, sizeof b->impl, "%s", p->dtype == LLMSIM_KDT_FP8 ? "cublaslt" : "cublas");
	double eb = (double)ktype_bytes(s->in_t), ob = (double)ktype_bytes(s->out_t);
	double in_bytes = ((double)s->m * s->k + (double)s->n * s->k) * eb;
	b->flops_declared = 2.0 * s->m * s->n * s->k;
	b->bytes_declared = in_bytes + (double)s->m * s->n * ob;
	s->sets = (int)(GEMM_ROTATE_BYTES / in_bytes) + 1;
	if (s->sets > GEMM_MAX_SETS)
		s->sets = GEMM_MAX_SETS;
	for (int i = 0; i < s->sets; i++) {
		if (kalloc(&s->a[i], (size_t)(s->m * s->k * eb), err, errsz) ||
		    kalloc(&s->w[i], (size_t)(s->n * s->k * eb), err, errsz) ||
		    kfill(s->a[i], s->m * s->k, s->in_t, seed_a(s, i), s->grid_a, err, errsz) ||
		    kfill(s->w[i], s->n * s->k, s->in_t, seed_w(s, i), s->grid_w, err, errsz))
			return -1;
	}
	if (kalloc(&s->c, (size_t)(s->m * s->n * ob), err, errsz))
		return -1;
	cublasHandle_t h;
	if (kcublas(&h, err, errsz))
		return -1;
	if (p->dtype == LLMSIM_KDT_FP8 && lt_setup(s, err, errsz))
		return -1;
	return 0;
}

static int gemm_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct gemm_state *s = (struct gemm_state *)b->priv;
	int i = s->cur;
	s->cur = (s->cur + 1) % s->sets;
	float alpha = 1.0f, beta = 0.0f;
	int m = (int)s->m, n = (int)s->n, k = (int)s->k;
	if (b->spec.dtype == LLMSIM_KDT_FP8) {
		cublasLtHandle_t lt;
		if (kcublaslt(&lt, err, errsz))
			return -1;
		/* The heuristic's algorithm has been refused at run time on some
		 * driver/cuBLAS pairs ("not supported"): then let cuBLASLt choose
		 * per call (algo NULL), and keep doing so. */
		cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
		if (!s->lt_auto)
			st = cublasLtMatmul(lt, s->op, &alpha, s->w[i], s->la, s->a[i], s->lb, &beta,
					    s->c, s->lc, s->c, s->lc, &s->algo, s->ws,
					    GEMM_LT_WORKSPACE, 0);
		if (st == CUBLAS_STATUS_NOT_SUPPORTED) {
			s->lt_auto = 1;
			KCUBLAS(cublasLtMatmul(lt, s->op, &alpha, s->w[i], s->la, s->a[i], s->lb,
					       &beta, s->c, s->lc, s->c, s->lc, NULL, s->ws,
					       GEMM_LT_WORKSPACE, 0));
		} else if (st != CUBLAS_STATUS_SUCCESS) {
			return kerr(err, errsz, "cublasLtMatmul (fp8): %s", cublasGetStatusString(st));
		}
		return 0;
	}
	cublasHandle_t h;
	if (kcublas(&h, err, errsz))
		return -1;
	cudaDataType_t t = s->in_t == KT_F32 ? CUDA_R_32F : s->in_t == KT_BF16 ? CUDA_R_16BF
									 : CUDA_R_16F;
	cublasComputeType_t ct = b->spec.dtype == LLMSIM_KDT_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
								  : CUBLAS_COMPUTE_32F;
	KCUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, s->w[i], t, k,
			     s->a[i], t, k, &beta, s->c, t, n, ct, CUBLAS_GEMM_DEFAULT));
	return 0;
}

static int gemm_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct gemm_state *s = (struct gemm_state *)b->priv;
	size_t ob = ktype_bytes(s->out_t);
	s->cur = 0; /* check the set whose seeds the reference uses */
	if (kpoison(s->c, (size_t)(s->m * s->n) * ob, err, errsz) || gemm_run(b, err, errsz))
		return -1;
	KCK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	if (kcount_nonfinite(s->c, s->m * s->n, s->out_t, &bad, err, errsz))
		return -1;
	struct kacc acc = {0, 0, 0};
	uint64_t r = s->seed;
	for (int q = 0; q < 128; q++) {
		int64_t i = (int64_t)(krand(&r) % (uint64_t)s->m);
		int64_t j = (int64_t)(krand(&r) % (uint64_t)s->n);
		float out;
		if (kread(s->c, i * s->n + j, s->out_t, &out, err, errsz))
			return -1;
		double ref = 0;
		for (int64_t kk = 0; kk < s->k; kk++)
			ref += (double)kval(seed_a(s, 0), i * s->k + kk, s->grid_a, s->in_t) *
			       (double)kval(seed_w(s, 0), j * s->k + kk, s->grid_w, s->in_t);
		kacc_add(&acc, out, ref * s->deq_a * s->deq_w);
	}
	return kcheck_finish(b, &acc, bad, err, errsz);
}

const struct kfam_ops kfam_gemm = {gemm_setup, gemm_check, gemm_run, gemm_release};
