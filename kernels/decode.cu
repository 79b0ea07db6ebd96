/*
 * decode.cu - decode attention: one query token per sequence against a bf16
 * KV cache, GQA (all heads of one kv head share a block), fp32 math.
 * Layout: q, o (B, H, D); contiguous cache K, V (B, kv_len, Hkv, D); paged
 * cache K, V (blocks, block_size, Hkv, D) with a block table (B, max_blocks)
 * holding a random permutation of the physical blocks.
 *
 * nvcc -arch=sm_90 -c decode.cu
 * variant flash2:  grid (Hkv, B): one block per (sequence, kv head), no split.
 * variant splitkv: flashdecoding: grid (Hkv, B, splits), partial (m, l, acc)
 *                  per split in fp32, then a reduce kernel; splits fill ~2 waves.
 * variant paged:   block table lookups, 512-token partitions (vLLM v2 style)
 *                  and the same reduce when kv_len > 512.
 * Inside a block: D/8 lanes per token (16-byte loads), 4 warps walk the
 * tokens with an online softmax per query head, then merge through shared
 * memory. Small caches rotate over several copies beyond the L2.
 * Check: 8 random (sequence, head) outputs against float64 attention.
 */
#include <stdlib.h>
#include <string.h>
#include "kcommon.h"

typedef __nv_bfloat16 bf16;

#define DEC_THREADS 128
#define DEC_GMAX 8            /* query heads per kv head */
#define DEC_MAX_SETS 8
#define DEC_ROTATE_BYTES (256.0 * 1024 * 1024)
#define PAGED_PARTITION 512
#define LOG2E 1.4426950408889634f

struct dec_state {
	int64_t b, h, hkv, d, len, bs, max_blocks;
	int paged, splits, chunk, sets, cur;
	bf16 *q, *o;                       /* (B, H, D) */
	bf16 *k[DEC_MAX_SETS], *v[DEC_MAX_SETS];
	int *table;                        /* paged: (B, max_blocks) */
	int *htable;                       /* host copy */
	float *part_o;                     /* (B, H, splits, D) */
	float2 *part_ml;                   /* (B, H, splits) */
	uint64_t seed;
	int grid;                          /* kgrid of q and the KV cache */
};

__device__ static inline void ld8(const bf16 *p, float f[8])
{
	union {
		uint4 u;
		__nv_bfloat162 h[4];
	} v;
	v.u = *(const uint4 *)p;
#pragma unroll
	for (int i = 0; i < 4; i++) {
		float2 t = __bfloat1622float2(v.h[i]);
		f[2 * i] = t.x;
		f[2 * i + 1] = t.y;
	}
}

template <int D, bool PAGED>
__global__ void __launch_bounds__(DEC_THREADS)
k_decode(const bf16 *__restrict__ q, const bf16 *__restrict__ kc, const bf16 *__restrict__ vc,
	 const int *__restrict__ table, int max_blocks, int bs, bf16 *__restrict__ o,
	 float *__restrict__ part_o, float2 *__restrict__ part_ml, int H, int Hkv, int len,
	 int chunk, int splits, float scale_log2)
{
	constexpr int LT = D / 8, TPW = 32 / LT, NG = (DEC_THREADS / 32) * TPW;
	__shared__ float sm_acc[NG][DEC_GMAX][D];
	__shared__ float sm_m[NG][DEC_GMAX], sm_l[NG][DEC_GMAX];
	int kvh = blockIdx.x, b = blockIdx.y, split = blockIdx.z;
	int g = H / Hkv;
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	int gid = warp * TPW + lane / LT, sl = lane % LT;
	float qv[DEC_GMAX][8], acc[DEC_GMAX][8], m[DEC_GMAX], l[DEC_GMAX];
#pragma unroll
	for (int hh = 0; hh < DEC_GMAX; hh++) {
		m[hh] = -INFINITY;
		l[hh] = 0.0f;
#pragma unroll
		for (int e = 0; e < 8; e++)
			acc[hh][e] = 0.0f, qv[hh][e] = 0.0f;
		if (hh < g) {
			ld8(q + ((int64_t)b * H + kvh * g + hh) * D + sl * 8, qv[hh]);
#pragma unroll
			for (int e = 0; e < 8; e++)
				qv[hh][e] *= scale_log2;
		}
	}
	int t0 = split * chunk, t1 = min(len, t0 + chunk);
	auto addr = [&](int t) -> int64_t {
		int64_t row;
		if (PAGED)
			row = (int64_t)table[(int64_t)b * max_blocks + t / bs] * bs + t % bs;
		else
			row = (int64_t)b * len + t;
		return (row * Hkv + kvh) * D + sl * 8;
	};
	/* The loop is warp-uniform (the shuffles need every lane): each step a
	 * warp takes TPW tokens; lanes past the end compute and discard. */
	uint4 kn = make_uint4(0, 0, 0, 0), vn = kn;
	int tb = t0 + warp * TPW, t = tb + lane / LT;
	if (t < t1) {
		int64_t a = addr(t);
		kn = *(const uint4 *)(kc + a);
		vn = *(const uint4 *)(vc + a);
	}
	for (; tb < t1; tb += NG, t += NG) {
		union {
			uint4 u;
			__nv_bfloat162 h[4];
		} ku, vu;
		ku.u = kn, vu.u = vn;
		bool valid = t < t1;
		if (t + NG < t1) { /* prefetch the next token while this one computes */
			int64_t a = addr(t + NG);
			kn = *(const uint4 *)(kc + a);
			vn = *(const uint4 *)(vc + a);
		}
		float kf[8], vf[8];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			float2 a = __bfloat1622float2(ku.h[i]), c = __bfloat1622float2(vu.h[i]);
			kf[2 * i] = a.x, kf[2 * i + 1] = a.y;
			vf[2 * i] = c.x, vf[2 * i + 1] = c.y;
		}
#pragma unroll
		for (int hh = 0; hh < DEC_GMAX; hh++) {
			if (hh >= g) /* g is the same for the whole block */
				break;
			float s = 0.0f;
#pragma unroll
			for (int e = 0; e < 8; e++)
				s += qv[hh][e] * kf[e];
#pragma unroll
			for (int off = LT / 2; off; off >>= 1)
				s += __shfl_xor_sync(0xffffffffu, s, off);
			if (valid) {
				float mn = fmaxf(m[hh], s);
				float alpha = exp2f(m[hh] - mn), p = exp2f(s - mn);
				l[hh] = l[hh] * alpha + p;
#pragma unroll
				for (int e = 0; e < 8; e++)
					acc[hh][e] = acc[hh][e] * alpha + p * vf[e];
				m[hh] = mn;
			}
		}
	}
#pragma unroll
	for (int hh = 0; hh < DEC_GMAX; hh++) {
		if (hh < g) {
#pragma unroll
			for (int e = 0; e < 8; e++)
				sm_acc[gid][hh][sl * 8 + e] = acc[hh][e];
			if (sl == 0)
				sm_m[gid][hh] = m[hh], sm_l[gid][hh] = l[hh];
		}
	}
	__syncthreads();
	for (int idx = threadIdx.x; idx < g * D; idx += DEC_THREADS) {
		int hh = idx / D, d = idx % D;
		float M = -INFINITY;
		for (int gg = 0; gg < NG; gg++)
			M = fmaxf(M, sm_m[gg][hh]);
		float L = 0.0f, A = 0.0f;
		for (int gg = 0; gg < NG; gg++) {
			float w = sm_m[gg][hh] == -INFINITY ? 0.0f : exp2f(sm_m[gg][hh] - M);
			L += sm_l[gg][hh] * w;
			A += sm_acc[gg][hh][d] * w;
		}
		int64_t bh = (int64_t)b * H + kvh * g + hh;
		if (splits == 1) {
			o[bh * D + d] = __float2bfloat16_rn(A / L);
		} else {
			part_o[(bh * splits + split) * D + d] = A;
			if (d == 0)
				part_ml[bh * splits + split] = make_float2(M, L);
		}
	}
}

/* Merge the splits of one (sequence, head): grid B*H, block D. */
__global__ void k_decode_reduce(const float *__restrict__ part_o,
				const float2 *__restrict__ part_ml, bf16 *__restrict__ o,
				int splits, int D)
{
	int64_t bh = blockIdx.x;
	int d = threadIdx.x;
	float M = -INFINITY;
	for (int s = 0; s < splits; s++)
		M = fmaxf(M, part_ml[bh * splits + s].x);
	float L = 0.0f, A = 0.0f;
	for (int s = 0; s < splits; s++) {
		float2 ml = part_ml[bh * splits + s];
		float w = ml.x == -INFINITY ? 0.0f : exp2f(ml.x - M);
		L += ml.y * w;
		A += part_o[(bh * splits + s) * D + d] * w;
	}
	o[bh * D + d] = __float2bfloat16_rn(A / L);
}

static void dec_release(struct llmsim_kbench *b)
{
	struct dec_state *s = (struct dec_state *)b->priv;
	cudaFree(s->q);
	cudaFree(s->o);
	for (int i = 0; i < DEC_MAX_SETS; i++) {
		cudaFree(s->k[i]);
		cudaFree(s->v[i]);
	}
	cudaFree(s->table);
	cudaFree(s->part_o);
	cudaFree(s->part_ml);
	free(s->htable);
	free(s);
}

static int dec_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	const struct llmsim_kspec *p = &b->spec;
	if (p->batch <= 0 || p->heads <= 0 || p->kv_heads <= 0 || p->heads % p->kv_heads ||
	    p->heads / p->kv_heads > DEC_GMAX || (p->head_dim != 64 && p->head_dim != 128) ||
	    p->seq <= 0 || (p->variant == LLMSIM_KD_PAGED && p->block_size <= 0))
		return kerr(err, errsz, "decode: needs heads/kv_heads in 1..%d, head_dim 64 or 128, "
			    "kv_len > 0 (block_size > 0 when paged)", DEC_GMAX);
	if (p->variant < 0 || p->variant >= LLMSIM_KD_COUNT)
		return kerr(err, errsz, "decode: unknown variant %d", p->variant);
	struct dec_state *s = (struct dec_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->b = p->batch, s->h = p->heads, s->hkv = p->kv_heads, s->d = p->head_dim, s->len = p->seq;
	s->paged = p->variant == LLMSIM_KD_PAGED;
	s->seed = seed * 32;
	s->grid = kgrid_for(p->data, KR_ACT, KT_BF16);
	int dev = 0, sms = 132;
	cudaGetDevice(&dev);
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	s->splits = 1;
	if (p->variant == LLMSIM_KD_SPLITKV) {
		int64_t want = KDIV_UP(2 * (int64_t)sms, s->b * s->hkv), most = s->len / 256;
		s->splits = (int)(want < most ? want : most);
		if (s->splits < 1)
			s->splits = 1;
	} else if (s->paged) {
		s->splits = (int)KDIV_UP(s->len, PAGED_PARTITION);
	}
	s->chunk = (int)KDIV_UP(KDIV_UP(s->len, s->splits), 16) * 16;
	s->splits = (int)KDIV_UP(s->len, s->chunk);
	int64_t nq = s->b * s->h * s->d;
	int64_t rows = s->b * s->len; /* contiguous rows; paged rounds up per sequence */
	if (s->paged) {
		s->bs = p->block_size;
		s->max_blocks = KDIV_UP(s->len, s->bs);
		rows = s->b * s->max_blocks * s->bs;
	}
	int64_t nkv = rows * s->hkv * s->d;
	double kv_bytes = 2.0 * 2 * (double)s->b * s->len * s->hkv * s->d;
	s->sets = (int)(DEC_ROTATE_BYTES / (2.0 * 2 * nkv)) + 1;
	if (s->sets > DEC_MAX_SETS)
		s->sets = DEC_MAX_SETS;
	if (kalloc((void **)&s->q, nq * 2, err, errsz) || kalloc((void **)&s->o, nq * 2, err, errsz) ||
	    kfill(s->q, nq, KT_BF16, s->seed, s->grid, err, errsz))
		return -1;
	for (int i = 0; i < s->sets; i++)
		if (kalloc((void **)&s->k[i], nkv * 2, err, errsz) ||
		    kalloc((void **)&s->v[i], nkv * 2, err, errsz) ||
		    kfill(s->k[i], nkv, KT_BF16, s->seed + 1 + 2 * i, s->grid, err, errsz) ||
		    kfill(s->v[i], nkv, KT_BF16, s->seed + 2 + 2 * i, s->grid, err, errsz))
			return -1;
	double extra = 0;
	if (s->paged) {
		int64_t nb = s->b * s->max_blocks;
		s->htable = (int *)malloc(nb * sizeof(int));
		if (!s->htable)
			return kerr(err, errsz, "out of host memory");
		for (int64_t i = 0; i < nb; i++)
			s->htable[i] = (int)i;
		uint64_t r = s->seed;
		for (int64_t i = nb - 1; i > 0; i--) { /* Fisher-Yates */
			int64_t j = (int64_t)(krand(&r) % (uint64_t)(i + 1));
			int tmp = s->htable[i];
			s->htable[i] = s->htable[j];
			s->htable[j] = tmp;
		}
		if (kalloc((void **)&s->table, nb * sizeof(int), err, errsz))
			return -1;
		KCK(cudaMemcpy(s->table, s->htable, nb * sizeof(int), cudaMemcpyHostToDevice));
		extra += (double)nb * 4;
	}
	if (s->splits > 1) {
		int64_t np = s->b * s->h * s->splits;
		if (kalloc((void **)&s->part_o, np * s->d * 4, err, errsz) ||
		    kalloc((void **)&s->part_ml, np * sizeof(float2), err, errsz))
			return -1;
		extra += 2.0 * np * (s->d + 2) * 4; /* written, then read by the reduce */
	}
	static const char *const impl[LLMSIM_KD_COUNT] = {"llmsim_decode_flash2",
							  "llmsim_flashdecoding", "llmsim_paged"};
	snprintf(b->impl, sizeof b->impl, "%s", impl[p->variant]);
	b->flops_declared = 4.0 * s->b * s->h * s->d * (double)s->len;
	b->bytes_declared = kv_bytes + 2.0 * nq * 2 + extra;
	b->launches = s->splits > 1 ? 2 : 1;
	b->tol = 2e-2;
	return 0;
}

static int dec_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct dec_state *s = (struct dec_state *)b->priv;
	int i = s->cur;
	s->cur = (s->cur + 1) % s->sets;
	dim3 grid((unsigned)s->hkv, (unsigned)s->b, (unsigned)s->splits);
	float sl2 = LOG2E / sqrtf((float)s->d);
	int H = (int)s->h, Hkv = (int)s->hkv, len = (int)s->len, mb = (int)s->max_blocks,
	    bs = (int)s->bs;
#define DEC_LAUNCH(D_, P_)                                                                   \
	k_decode<D_, P_><<<grid, DEC_THREADS>>>(s->q, s->k[i], s->v[i], s->table, mb, bs, s->o, \
						s->part_o, s->part_ml, H, Hkv, len, s->chunk,    \
						s->splits, sl2)
	if (s->d == 64 && s->paged)
		DEC_LAUNCH(64, true);
	else if (s->d == 64)
		DEC_LAUNCH(64, false);
	else if (s->paged)
		DEC_LAUNCH(128, true);
	else
		DEC_LAUNCH(128, false);
#undef DEC_LAUNCH
	KLAUNCH();
	if (s->splits > 1) {
		k_decode_reduce<<<(unsigned)(s->b * s->h), (unsigned)s->d>>>(s->part_o, s->part_ml,
									       s->o, s->splits,
									       (int)s->d);
		KLAUNCH();
	}
	return 0;
}

static int dec_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct dec_state *s = (struct dec_state *)b->priv;
	int64_t nq = s->b * s->h * s->d, D = s->d;
	s->cur = 0;
	if (kpoison(s->o, (size_t)nq * 2, err, errsz) || dec_run(b, err, errsz))
		return -1;
	KCK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	if (kcount_nonfinite(s->o, nq, KT_BF16, &bad, err, errsz))
		return -1;
	double *sc = (double *)malloc(s->len * sizeof(double));
	if (!sc)
		return kerr(err, errsz, "out of host memory");
	double ref[128], qv[128];
	float out[128];
	struct kacc acc = {0, 0, 0};
	uint64_t r = s->seed + 7;
	int rc = 0;
	for (int q = 0; q < 8 && rc == 0; q++) {
		int64_t bb = (int64_t)(krand(&r) % (uint64_t)s->b);
		int64_t hh = (int64_t)(krand(&r) % (uint64_t)s->h);
		int64_t kvh = hh / (s->h / s->hkv), qoff = (bb * s->h + hh) * D;
		for (int64_t d = 0; d < D; d++)
			qv[d] = kval(s->seed, qoff + d, s->grid, KT_BF16);
		double mx = -INFINITY, sum = 0;
		for (int64_t t = 0; t < s->len; t++) {
			int64_t row = s->paged ? (int64_t)s->htable[bb * s->max_blocks + t / s->bs] *
							 s->bs + t % s->bs
					       : bb * s->len + t;
			int64_t koff = (row * s->hkv + kvh) * D;
			double dot = 0;
			for (int64_t d = 0; d < D; d++)
				dot += qv[d] * kval(s->seed + 1, koff + d, s->grid, KT_BF16);
			sc[t] = dot / sqrt((double)D);
			mx = sc[t] > mx ? sc[t] : mx;
		}
		for (int64_t d = 0; d < D; d++)
			ref[d] = 0;
		for (int64_t t = 0; t < s->len; t++) {
			int64_t row = s->paged ? (int64_t)s->htable[bb * s->max_blocks + t / s->bs] *
							 s->bs + t % s->bs
					       : bb * s->len + t;
			int64_t voff = (row * s->hkv + kvh) * D;
			double p = exp(sc[t] - mx);
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

const struct kfam_ops kfam_decode = {dec_setup, dec_check, dec_run, dec_release};
