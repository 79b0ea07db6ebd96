/*
 * attn.cu - prefill attention, bf16 in and out, fp32 accumulation, GQA
 * (kv head = head / (heads / kv_heads)), causal or not.
 * Layout: Q, O (B, S, H, D); K, V (B, S, Hkv, D), row-major.
 *
 * nvcc -arch=sm_90 -c attn.cu   (links cublas)
 * variant naive:  S = Q K^T (cuBLAS batched GEMM, fp32 scores in HBM),
 *                 P = softmax(scale * S, causal mask) (bf16, HBM),
 *                 O = P V (cuBLAS batched GEMM): three kernels, N^2 traffic.
 * variant flash2: one kernel, FlashAttention-2 forward: a block of 4 warps
 *                 takes 64 query rows, each warp 16 rows; K/V tiles of 64
 *                 rows in shared memory; S and O through WMMA (mma.sync
 *                 bf16 16x16x16, fp32 accumulate); online softmax in
 *                 registers (two lanes per row); O kept in shared memory
 *                 (fp32) and rescaled per tile; causal skips masked tiles.
 * Check: 8 random (batch, head, query) rows against float64 attention.
 */
#include <cublas_v2.h>
#include <mma.h>
#include <stdlib.h>
#include <string.h>
#include "kcommon.h"

using namespace nvcuda;
typedef __nv_bfloat16 bf16;

#define FA_BR 64
#define FA_BC 64
#define LOG2E 1.4426950408889634f

struct attn_state {
	int64_t b, s, h, hkv, d;
	int causal;
	bf16 *q, *k, *v, *o;      /* (B,S,H,D), (B,S,Hkv,D) x2, (B,S,H,D) */
	float *scores;            /* naive: (B*H, S, S) */
	bf16 *p;                  /* naive: (B*H, S, S) */
	void **ptrs;              /* naive: device pointer arrays, 6 x B*H */
	uint64_t seed;
	int grid;                 /* kgrid of q, k and v */
	size_t smem_bytes;        /* flash2: dynamic shared memory per block */
};

template <int D> struct fa_smem {
	static constexpr int LDK = D + 8, LDS = FA_BC + 4, LDP = FA_BC + 8, LDO = D + 4;
	static constexpr size_t k_off = 0;
	static constexpr size_t v_off = k_off + (size_t)FA_BC * LDK * 2;
	static constexpr size_t s_off = v_off + (size_t)FA_BC * LDK * 2;
	static constexpr size_t p_off = s_off + (size_t)4 * 16 * LDS * 4;
	static constexpr size_t o_off = p_off + (size_t)4 * 16 * LDP * 2;
	static constexpr size_t bytes = o_off + (size_t)4 * 16 * LDO * 4;
};

template <int D>
__global__ void __launch_bounds__(128) k_flash2(const bf16 *__restrict__ Q,
						const bf16 *__restrict__ K,
						const bf16 *__restrict__ V, bf16 *__restrict__ O,
						int S, int H, int Hkv, float scale_log2, int causal)
{
	typedef fa_smem<D> L;
	extern __shared__ __align__(128) unsigned char smem[];
	bf16 *Ks = (bf16 *)(smem + L::k_off);
	bf16 *Vs = (bf16 *)(smem + L::v_off);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	float *So = (float *)(smem + L::s_off) + warp * 16 * L::LDS;
	bf16 *Po = (bf16 *)(smem + L::p_off) + warp * 16 * L::LDP;
	float *Oo = (float *)(smem + L::o_off) + warp * 16 * L::LDO;
	int qblk = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
	int kvh = h / (H / Hkv);
	int q0 = qblk * FA_BR + warp * 16;
	const int64_t qs = (int64_t)H * D, kvs = (int64_t)Hkv * D;
	const bf16 *Qb = Q + ((int64_t)b * S * H + h) * D;
	const bf16 *Kb = K + ((int64_t)b * S * Hkv + kvh) * D;
	const bf16 *Vb = V + ((int64_t)b * S * Hkv + kvh) * D;

	wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> qf[D / 16];
#pragma unroll
	for (int kd = 0; kd < D / 16; kd++)
		wmma::load_matrix_sync(qf[kd], Qb + (int64_t)q0 * qs + kd * 16, (unsigned)qs);
	for (int e = lane; e < 16 * L::LDO; e += 32)
		Oo[e] = 0.0f;
	int r = lane >> 1, hf = lane & 1, qi = q0 + r;
	float m = -INFINITY, l = 0.0f;
	int ntiles = causal ? (qblk * FA_BR + FA_BR) / FA_BC : S / FA_BC;
	for (int t = 0; t < ntiles; t++) {
		int k0 = t * FA_BC;
		__syncthreads(); /* all warps are done with the previous tile */
		for (int v = threadIdx.x; v < FA_BC * D / 8; v += blockDim.x) {
			int row = v / (D / 8), c = v % (D / 8);
			*(uint4 *)&Ks[row * L::LDK + c * 8] =
				*(const uint4 *)&Kb[(int64_t)(k0 + row) * kvs + c * 8];
			*(uint4 *)&Vs[row * L::LDK + c * 8] =
				*(const uint4 *)&Vb[(int64_t)(k0 + row) * kvs + c * 8];
		}
		__syncthreads();
		if (causal && k0 > q0 + 15)
			continue; /* every row of this warp is masked in this tile */
#pragma unroll
		for (int j = 0; j < FA_BC / 16; j++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
			wmma::fill_fragment(sf, 0.0f);
#pragma unroll
			for (int kd = 0; kd < D / 16; kd++) {
				wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> kf;
				wmma::load_matrix_sync(kf, Ks + j * 16 * L::LDK + kd * 16, L::LDK);
				wmma::mma_sync(sf, qf[kd], kf, sf);
			}
			wmma::store_matrix_sync(So + j * 16, sf, L::LDS, wmma::mem_row_major);
		}
		__syncwarp();
		/* online softmax: lane pair (2r, 2r+1) owns row r, 32 columns each */
		float sv[32], mx = -INFINITY;
#pragma unroll
		for (int c = 0; c < 32; c++) {
			int j = hf * 32 + c;
			float x = So[r * L::LDS + j] * scale_log2;
			if (causal && k0 + j > qi)
				x = -INFINITY;
			sv[c] = x;
			mx = fmaxf(mx, x);
		}
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		/* the first tile holds key 0 <= qi, so m is finite from then on */
		float mnew = fmaxf(m, mx);
		float alpha = exp2f(m - mnew), ls = 0.0f;
#pragma unroll
		for (int c = 0; c < 32; c++) {
			float p = exp2f(sv[c] - mnew);
			ls += p;
			Po[r * L::LDP + hf * 32 + c] = __float2bfloat16_rn(p);
		}
		ls += __shfl_xor_sync(0xffffffffu, ls, 1);
		l = l * alpha + ls;
		m = mnew;
		for (int c = 0; c < D / 2; c++)
			Oo[r * L::LDO + hf * (D / 2) + c] *= alpha;
		__syncwarp();
#pragma unroll
		for (int dj = 0; dj < D / 16; dj++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
			wmma::load_matrix_sync(of, Oo + dj * 16, L::LDO, wmma::mem_row_major);
#pragma unroll
			for (int kk = 0; kk < FA_BC / 16; kk++) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> pf;
				wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> vf;
				wmma::load_matrix_sync(pf, Po + kk * 16, L::LDP);
				wmma::load_matrix_sync(vf, Vs + kk * 16 * L::LDK + dj * 16, L::LDK);
				wmma::mma_sync(of, pf, vf, of);
			}
			wmma::store_matrix_sync(Oo + dj * 16, of, L::LDO, wmma::mem_row_major);
		}
		__syncwarp();
	}
	float inv = 1.0f / l;
	bf16 *orow = O + (((int64_t)b * S + qi) * H + h) * D + hf * (D / 2);
	for (int c = 0; c < D / 2; c += 8) {
		union {
			uint4 u;
			__nv_bfloat162 h2[4];
		} pk;
#pragma unroll
		for (int e = 0; e < 4; e++)
			pk.h2[e] = __floats2bfloat162_rn(Oo[r * L::LDO + hf * (D / 2) + c + 2 * e] * inv,
							 Oo[r * L::LDO + hf * (D / 2) + c + 2 * e + 1] * inv);
		*(uint4 *)(orow + c) = pk.u;
	}
}

/* naive: one block per score row; scale, causal mask, softmax, bf16 out. */
__global__ void k_attn_softmax(const float *__restrict__ sc, bf16 *__restrict__ p, int S,
			       float scale_log2, int causal)
{
	__shared__ float red[32];
	int64_t row = blockIdx.x;
	int qi = (int)(row % S);
	int n = causal ? qi + 1 : S;
	const float *x = sc + row * S;
	bf16 *y = p + row * S;
	float mx = -INFINITY;
	for (int j = threadIdx.x; j < n; j += blockDim.x)
		mx = fmaxf(mx, x[j] * scale_log2);
#pragma unroll
	for (int o = 16; o; o >>= 1)
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	int w = threadIdx.x / 32, l = threadIdx.x % 32, nw = blockDim.x / 32;
	if (l == 0)
		red[w] = mx;
	__syncthreads();
	mx = l < nw ? red[l] : -INFINITY;
#pragma unroll
	for (int o = 16; o; o >>= 1)
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	float sum = 0;
	for (int j = threadIdx.x; j < n; j += blockDim.x)
		sum += exp2f(x[j] * scale_log2 - mx);
#pragma unroll
	for (int o = 16; o; o >>= 1)
		sum += __shfl_xor_sync(0xffffffffu, sum, o);
	__syncthreads();
	if (l == 0)
		red[w] = sum;
	__syncthreads();
	sum = l < nw ? red[l] : 0.0f;
#pragma unroll
	for (int o = 16; o; o >>= 1)
		sum += __shfl_xor_sync(0xffffffffu, sum, o);
	float inv = 1.0f / sum;
	for (int j = threadIdx.x; j < S; j += blockDim.x)
		y[j] = __float2bfloat16_rn(j < n ? exp2f(x[j] * scale_log2 - mx) * inv : 0.0f);
}

static void attn_release(struct llmsim_kbench *b)
{
	struct attn_state *s = (struct attn_state *)b->priv;
	cudaFree(s->q);
	cudaFree(s->k);
	cudaFree(s->v);
	cudaFree(s->o);
	cudaFree(s->scores);
	cudaFree(s->p);
	cudaFree(s->ptrs);
	free(s);
}

static double attn_pairs(const struct attn_state *s)
{
	double n = (double)s->s;
	return s->causal ? n * (n + 1) / 2 : n * n;
}

static int attn_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	const struct llmsim_kspec *p = &b->spec;
	if (p->batch <= 0 || p->heads <= 0 || p->kv_heads <= 0 || p->heads % p->kv_heads ||
	    (p->head_dim != 64 && p->head_dim != 128) || p->seq <= 0 || p->seq % FA_BR)
		return kerr(err, errsz, "attention: needs heads %% kv_heads == 0, head_dim 64 or "
			    "128, seq a multiple of %d", FA_BR);
	if (p->variant != LLMSIM_KA_NAIVE && p->variant != LLMSIM_KA_FLASH2)
		return kerr(err, errsz, "attention: unknown variant %d", p->variant);
	struct attn_state *s = (struct attn_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->b = p->batch, s->s = p->seq, s->h = p->heads, s->hkv = p->kv_heads, s->d = p->head_dim;
	s->causal = p->causal != 0;
	s->seed = seed * 8;
	s->grid = kgrid_for(p->data, KR_ACT, KT_BF16); /* q, k, v: activations */
	int64_t nq = s->b * s->s * s->h * s->d, nkv = s->b * s->s * s->hkv * s->d;
	if (kalloc((void **)&s->q, nq * 2, err, errsz) || kalloc((void **)&s->o, nq * 2, err, errsz) ||
	    kalloc((void **)&s->k, nkv * 2, err, errsz) || kalloc((void **)&s->v, nkv * 2, err, errsz) ||
	    kfill(s->q, nq, KT_BF16, s->seed, s->grid, err, errsz) ||
	    kfill(s->k, nkv, KT_BF16, s->seed + 1, s->grid, err, errsz) ||
	    kfill(s->v, nkv, KT_BF16, s->seed + 2, s->grid, err, errsz))
		return -1;
	double io_bytes = 2.0 * (2 * nq + 2 * nkv);
	b->tol = 2e-2; /* bf16 P and O: 2^-9 relative per rounding */
	if (p->variant == LLMSIM_KA_NAIVE) {
		int64_t nbh = s->b * s->h, nss = nbh * s->s * s->s;
		if (kalloc((void **)&s->scores, (size_t)nss * 4, err, errsz) ||
		    kalloc((void **)&s->p, (size_t)nss * 2, err, errsz) ||
		    kalloc((void **)&s->ptrs, (size_t)nbh * 6 * sizeof(void *), err, errsz))
			return -1;
		void **hp = (void **)malloc((size_t)nbh * 6 * sizeof(void *));
		if (!hp)
			return kerr(err, errsz, "out of host memory");
		for (int64_t bb = 0; bb < s->b; bb++)
			for (int64_t hh = 0; hh < s->h; hh++) {
				int64_t i = bb * s->h + hh, kvh = hh / (s->h / s->hkv);
				hp[0 * nbh + i] = s->k + (bb * s->s * s->hkv + kvh) * s->d;
				hp[1 * nbh + i] = s->q + (bb * s->s * s->h + hh) * s->d;
				hp[2 * nbh + i] = s->scores + i * s->s * s->s;
				hp[3 * nbh + i] = s->v + (bb * s->s * s->hkv + kvh) * s->d;
				hp[4 * nbh + i] = s->p + i * s->s * s->s;
				hp[5 * nbh + i] = s->o + (bb * s->s * s->h + hh) * s->d;
			}
		cudaError_t e = cudaMemcpy(s->ptrs, hp, (size_t)nbh * 6 * sizeof(void *),
					   cudaMemcpyHostToDevice);
		free(hp);
		KCK(e);
		cublasHandle_t hnd;
		if (kcublas(&hnd, err, errsz))
			return -1;
		snprintf(b->impl, sizeof b->impl, "llmsim_naive_attention");
		b->flops_declared = 4.0 * s->b * s->h * s->d * (double)s->s * s->s;
		/* scores written and read (fp32), P written and read (bf16) */
		b->bytes_declared = io_bytes + (double)nss * (4 + 4 + 2 + 2);
		b->launches = 3;
	} else {
		s->smem_bytes = s->d == 64 ? fa_smem<64>::bytes : fa_smem<128>::bytes;
		if (s->d == 64)
			KCK(cudaFuncSetAttribute(k_flash2<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
						 (int)s->smem_bytes));
		else
			KCK(cudaFuncSetAttribute(k_flash2<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
						 (int)s->smem_bytes));
		snprintf(b->impl, sizeof b->impl, "llmsim_flash2");
		b->flops_declared = 4.0 * s->b * s->h * s->d * attn_pairs(s);
		b->bytes_declared = io_bytes;
	}
	return 0;
}

#define KCUBLAS(call)                                                                \
	do {                                                                         \
		cublasStatus_t s_ = (call);                                          \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                     \
			return kerr(err, errsz, "%s: %s", #call,                     \
				    cublasGetStatusString(s_));                      \
	} while (0)

static int attn_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct attn_state *s = (struct attn_state *)b->priv;
	int S = (int)s->s, H = (int)s->h, Hkv = (int)s->hkv, D = (int)s->d;
	float scale_log2 = LOG2E / sqrtf((float)D);
	if (b->spec.variant == LLMSIM_KA_FLASH2) {
		dim3 grid(S / FA_BR, H, (unsigned)s->b);
		if (D == 64)
			k_flash2<64><<<grid, 128, s->smem_bytes>>>(s->q, s->k, s->v, s->o, S, H, Hkv,
								   scale_log2, s->causal);
		else
			k_flash2<128><<<grid, 128, s->smem_bytes>>>(s->q, s->k, s->v, s->o, S, H, Hkv,
								    scale_log2, s->causal);
		KLAUNCH();
		return 0;
	}
	cublasHandle_t h;
	if (kcublas(&h, err, errsz))
		return -1;
	int nbh = (int)(s->b * s->h);
	void **pp = s->ptrs;
	float one = 1.0f, zero = 0.0f;
	/* column-major: S^T (Skv x Sq) = K (op T of D x Skv) * Q^T (D x Sq) */
	KCUBLAS(cublasGemmBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &one,
				    (const void *const *)(pp + 0 * nbh), CUDA_R_16BF, Hkv * D,
				    (const void *const *)(pp + 1 * nbh), CUDA_R_16BF, H * D, &zero,
				    pp + 2 * nbh, CUDA_R_32F, S, nbh, CUBLAS_COMPUTE_32F,
				    CUBLAS_GEMM_DEFAULT));
	k_attn_softmax<<<(unsigned)(s->b * s->h * s->s), 256>>>(s->scores, s->p, S, scale_log2,
								  s->causal);
	KLAUNCH();
	/* O^T (D x Sq) = V^T (D x Skv) * P^T (Skv x Sq) */
	KCUBLAS(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one,
				    (const void *const *)(pp + 3 * nbh), CUDA_R_16BF, Hkv * D,
				    (const void *const *)(pp + 4 * nbh), CUDA_R_16BF, S, &zero,
				    pp + 5 * nbh, CUDA_R_16BF, H * D, nbh, CUBLAS_COMPUTE_32F,
				    CUBLAS_GEMM_DEFAULT));
	return 0;
}

static int attn_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct attn_state *s = (struct attn_state *)b->priv;
	int64_t nq = s->b * s->s * s->h * s->d, D = s->d;
	if (kpoison(s->o, (size_t)nq * 2, err, errsz) || attn_run(b, err, errsz))
		return -1;
	KCK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	if (kcount_nonfinite(s->o, nq, KT_BF16, &bad, err, errsz))
		return -1;
	double *sc = (double *)malloc(s->s * sizeof(double));
	double ref[128], qv[128];
	float out[128];
	if (!sc)
		return kerr(err, errsz, "out of host memory");
	struct kacc acc = {0, 0, 0};
	uint64_t r = s->seed;
	int rc = 0;
	for (int q = 0; q < 8 && rc == 0; q++) {
		int64_t bb = (int64_t)(krand(&r) % (uint64_t)s->b);
		int64_t hh = (int64_t)(krand(&r) % (uint64_t)s->h);
		int64_t qi = (int64_t)(krand(&r) % (uint64_t)s->s);
		int64_t kvh = hh / (s->h / s->hkv), n = s->causal ? qi + 1 : s->s;
		int64_t qoff = ((bb * s->s + qi) * s->h + hh) * D;
		for (int64_t d = 0; d < D; d++)
			qv[d] = kval(s->seed, qoff + d, s->grid, KT_BF16);
		double mx = -INFINITY, sum = 0;
		for (int64_t j = 0; j < n; j++) {
			int64_t koff = ((bb * s->s + j) * s->hkv + kvh) * D;
			double dot = 0;
			for (int64_t d = 0; d < D; d++)
				dot += qv[d] * kval(s->seed + 1, koff + d, s->grid, KT_BF16);
			sc[j] = dot / sqrt((double)D);
			mx = sc[j] > mx ? sc[j] : mx;
		}
		for (int64_t d = 0; d < D; d++)
			ref[d] = 0;
		for (int64_t j = 0; j < n; j++) {
			double p = exp(sc[j] - mx);
			int64_t voff = ((bb * s->s + j) * s->hkv + kvh) * D;
			sum += p;
			for (int64_t d = 0; d < D; d++)
				ref[d] += p * kval(s->seed + 2, voff + d, s->grid, KT_BF16);
		}
		rc = kread_n(s->o, qoff, D, KT_BF16, out, err, errsz);
		for (int64_t d = 0; d < D && rc == 0; d++)
			kacc_add(&acc, out[d], ref[d] / sum);
	}
	free(sc);
	return rc ? rc : kcheck_finish(b, &acc, bad, err, errsz);
}

const struct kfam_ops kfam_attn = {attn_setup, attn_check, attn_run, attn_release};
