/*
 * stream.cu - HBM streaming (STREAM copy, scale, triad over fp32 arrays,
 * float4 vectorized, grid-stride), shared-memory read bandwidth, and an
 * empty kernel for launch overhead.
 *
 * nvcc -arch=sm_90 -c stream.cu
 * variants: copy a = b (8 B/elem), scale a = s*b (8 B, 1 FLOP),
 *           triad a = b + s*c (12 B, 2 FLOP); smem: float4 reads of a
 *           16 KB tile per block, conflict-free; empty: one thread writes a flag.
 */
#include <stdlib.h>
#include "kcommon.h"

#define STREAM_SCALE 1.5f  /* exact in fp32: the reference has no rounding doubt */

struct stream_state {
	float *a, *b, *c;      /* (n) each; a is the output */
	int64_t n;
	uint64_t seed_b, seed_c;
	int grid_in;              /* kgrid of b and c */
	int grid;
};

__global__ void k_copy(float4 *__restrict__ a, const float4 *__restrict__ b, int64_t n4)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
	     i += (int64_t)gridDim.x * blockDim.x)
		a[i] = b[i];
}

__global__ void k_scale(float4 *__restrict__ a, const float4 *__restrict__ b, float s, int64_t n4)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float4 v = b[i];
		a[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
	}
}

__global__ void k_triad(float4 *__restrict__ a, const float4 *__restrict__ b,
			const float4 *__restrict__ c, float s, int64_t n4)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float4 u = b[i], v = c[i];
		a[i] = make_float4(u.x + s * v.x, u.y + s * v.y, u.z + s * v.z, u.w + s * v.w);
	}
}

static int sm_count(void)
{
	int dev = 0, sms = 132;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
		sms = 132;
	return sms;
}

static void stream_release(struct llmsim_kbench *b)
{
	struct stream_state *s = (struct stream_state *)b->priv;
	cudaFree(s->a);
	cudaFree(s->b);
	cudaFree(s->c);
	free(s);
}

static int stream_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	int64_t n = b->spec.n;
	if (n <= 0 || n % 4)
		return kerr(err, errsz, "stream: n=%lld must be a positive multiple of 4", (long long)n);
	struct stream_state *s = (struct stream_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->n = n;
	s->grid_in = kgrid_for(b->spec.data, KR_ACT, KT_F32);
	s->seed_b = seed * 3 + 1;
	s->seed_c = seed * 3 + 2;
	/* Enough resident threads to cover latency; grid-stride beyond. */
	int64_t blocks = KDIV_UP(n / 4, 256);
	s->grid = (int)(blocks < sm_count() * 8 ? blocks : sm_count() * 8);
	size_t bytes = (size_t)n * 4;
	if (kalloc((void **)&s->a, bytes, err, errsz) || kalloc((void **)&s->b, bytes, err, errsz))
		return -1;
	if (kfill(s->b, n, KT_F32, s->seed_b, s->grid_in, err, errsz))
		return -1;
	double e = (double)n;
	switch (b->spec.variant) {
	case LLMSIM_KS_COPY:
		snprintf(b->impl, sizeof b->impl, "stream_copy");
		b->flops_declared = 0;
		b->bytes_declared = 8 * e;
		break;
	case LLMSIM_KS_SCALE:
		snprintf(b->impl, sizeof b->impl, "stream_scale");
		b->flops_declared = e;
		b->bytes_declared = 8 * e;
		break;
	case LLMSIM_KS_TRIAD:
		snprintf(b->impl, sizeof b->impl, "stream_triad");
		b->flops_declared = 2 * e;
		b->bytes_declared = 12 * e;
		if (kalloc((void **)&s->c, bytes, err, errsz) ||
		    kfill(s->c, n, KT_F32, s->seed_c, s->grid_in, err, errsz))
			return -1;
		break;
	default:
		return kerr(err, errsz, "stream: unknown variant %d", b->spec.variant);
	}
	b->tol = 1e-6;
	return 0;
}

static int stream_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct stream_state *s = (struct stream_state *)b->priv;
	int64_t n4 = s->n / 4;
	switch (b->spec.variant) {
	case LLMSIM_KS_COPY:
		k_copy<<<s->grid, 256>>>((float4 *)s->a, (const float4 *)s->b, n4);
		break;
	case LLMSIM_KS_SCALE:
		k_scale<<<s->grid, 256>>>((float4 *)s->a, (const float4 *)s->b, STREAM_SCALE, n4);
		break;
	default:
		k_triad<<<s->grid, 256>>>((float4 *)s->a, (const float4 *)s->b,
					  (const float4 *)s->c, STREAM_SCALE, n4);
		break;
	}
	KLAUNCH();
	return 0;
}

static int stream_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct stream_state *s = (struct stream_state *)b->priv;
	if (kpoison(s->a, (size_t)s->n * 4, err, errsz) || stream_run(b, err, errsz))
		return -1;
	KCK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	if (kcount_nonfinite(s->a, s->n, KT_F32, &bad, err, errsz))
		return -1;
	/* 16 random chunks of up to 4096 elements, compared exactly enough */
	enum { CHUNK = 4096 };
	static float out[CHUNK];
	struct kacc acc = {0, 0, 0};
	uint64_t r = s->seed_b;
	for (int c = 0; c < 16; c++) {
		int64_t len = s->n < CHUNK ? s->n : CHUNK;
		int64_t i0 = (int64_t)(krand(&r) % (uint64_t)(s->n - len + 1));
		if (kread_n(s->a, i0, len, KT_F32, out, err, errsz))
			return -1;
		for (int64_t j = 0; j < len; j++) {
			double bv = kgen(s->seed_b, i0 + j, s->grid_in), ref;
			if (b->spec.variant == LLMSIM_KS_COPY)
				ref = bv;
			else if (b->spec.variant == LLMSIM_KS_SCALE)
				ref = STREAM_SCALE * bv;
			else
				ref = bv + STREAM_SCALE * (double)kgen(s->seed_c, i0 + j, s->grid_in);
			kacc_add(&acc, out[j], ref);
		}
	}
	return kcheck_finish(b, &acc, bad, err, errsz);
}

const struct kfam_ops kfam_stream = {stream_setup, stream_check, stream_run, stream_release};

/* ---- shared-memory read bandwidth ---- */

#define SMEM_THREADS 256
#define SMEM_TILE 1024 /* float4 per block: 16 KB */

struct smem_state {
	float4 *in;    /* (blocks * SMEM_TILE) */
	float *out;    /* (blocks * SMEM_THREADS) */
	int blocks;
	int iters;
	uint64_t seed;
	int grid_in;   /* kgrid of in */
};

__global__ void __launch_bounds__(SMEM_THREADS) k_smem(const float4 *__restrict__ in,
							float *__restrict__ out, int iters)
{
	__shared__ float4 tile[SMEM_TILE];
	int t = threadIdx.x;
	for (int j = t; j < SMEM_TILE; j += SMEM_THREADS)
		tile[j] = in[(int64_t)blockIdx.x * SMEM_TILE + j];
	__syncthreads();
	float4 a0 = make_float4(0, 0, 0, 0), a1 = a0;
	/* a warp reads 32 consecutive float4: 4 wavefronts, no bank conflict */
	for (int i = 0; i < iters; i += 2) {
		float4 u = tile[(t + i * SMEM_THREADS) & (SMEM_TILE - 1)];
		float4 v = tile[(t + (i + 1) * SMEM_THREADS) & (SMEM_TILE - 1)];
		a0.x += u.x; a0.y += u.y; a0.z += u.z; a0.w += u.w;
		a1.x += v.x; a1.y += v.y; a1.z += v.z; a1.w += v.w;
	}
	out[(int64_t)blockIdx.x * SMEM_THREADS + t] = (a0.x + a0.y) + (a0.z + a0.w) +
						      (a1.x + a1.y) + (a1.z + a1.w);
}

static void smem_release(struct llmsim_kbench *b)
{
	struct smem_state *s = (struct smem_state *)b->priv;
	cudaFree(s->in);
	cudaFree(s->out);
	free(s);
}

static int smem_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	if (b->spec.n <= 0 || b->spec.n % 8 || b->spec.n > (1 << 24))
		return kerr(err, errsz, "smem: iterations must be a positive multiple of 8");
	struct smem_state *s = (struct smem_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->blocks = sm_count() * 8; /* 8 x 256 threads: a full SM */
	s->iters = (int)b->spec.n;
	s->seed = seed;
	s->grid_in = kgrid_for(b->spec.data, KR_ACT, KT_F32);
	if (kalloc((void **)&s->in, (size_t)s->blocks * SMEM_TILE * 16, err, errsz) ||
	    kalloc((void **)&s->out, (size_t)s->blocks * SMEM_THREADS * 4, err, errsz) ||
	    kfill(s->in, (int64_t)s->blocks * SMEM_TILE * 4, KT_F32, seed, s->grid_in, err, errsz))
		return -1;
	snprintf(b->impl, sizeof b->impl, "smem_read_f4");
	double reads = (double)s->blocks * SMEM_THREADS * s->iters;
	b->bytes_declared = 16 * reads; /* shared-memory bytes read, not HBM */
	b->flops_declared = 4 * reads;
	b->tol = 1e-4;
	return 0;
}

static int smem_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct smem_state *s = (struct smem_state *)b->priv;
	k_smem<<<s->blocks, SMEM_THREADS>>>(s->in, s->out, s->iters);
	KLAUNCH();
	return 0;
}

static int smem_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct smem_state *s = (struct smem_state *)b->priv;
	int64_t nout = (int64_t)s->blocks * SMEM_THREADS;
	if (kpoison(s->out, nout * 4, err, errsz) || smem_run(b, err, errsz))
		return -1;
	KCK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	if (kcount_nonfinite(s->out, nout, KT_F32, &bad, err, errsz))
		return -1;
	float *out = (float *)malloc(nout * sizeof(float));
	if (!out)
		return kerr(err, errsz, "out of host memory");
	if (kread_n(s->out, 0, nout, KT_F32, out, err, errsz)) {
		free(out);
		return -1;
	}
	/* thread t of block k reads float4 (t + i*256) mod 1024: the four
	 * float4 t, t+256, t+512, t+768, each iters/4 times */
	struct kacc acc = {0, 0, 0};
	for (int64_t g = 0; g < nout; g += 97) {
		int64_t blk = g / SMEM_THREADS, t = g % SMEM_THREADS;
		double sum = 0;
		for (int q = 0; q < 4; q++)
			for (int c = 0; c < 4; c++)
				sum += kgen(s->seed, (blk * SMEM_TILE + t + q * SMEM_THREADS) * 4 + c,
					    s->grid_in);
		kacc_add(&acc, out[g], sum * (s->iters / 4));
	}
	free(out);
	return kcheck_finish(b, &acc, bad, err, errsz);
}

const struct kfam_ops kfam_smem = {smem_setup, smem_check, smem_run, smem_release};

/* ---- empty kernel: launch overhead ---- */

struct empty_state {
	int *flag;
	int value;
};

__global__ void k_empty(int *flag, int v)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		*flag = v;
}

static void empty_release(struct llmsim_kbench *b)
{
	struct empty_state *s = (struct empty_state *)b->priv;
	cudaFree(s->flag);
	free(s);
}

static int empty_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	if (b->spec.n <= 0 || b->spec.n > 100000)
		return kerr(err, errsz, "empty: launches must be 1..100000");
	struct empty_state *s = (struct empty_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->value = (int)(seed & 0x3fffffff) + 1;
	if (kalloc((void **)&s->flag, sizeof(int), err, errsz))
		return -1;
	snprintf(b->impl, sizeof b->impl, "empty_kernel");
	b->launches = (int)b->spec.n;
	b->tol = 0;
	return 0;
}

static int empty_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct empty_state *s = (struct empty_state *)b->priv;
	for (int64_t i = 0; i < b->spec.n; i++)
		k_empty<<<1, 32>>>(s->flag, s->value);
	KLAUNCH();
	return 0;
}

static int empty_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct empty_state *s = (struct empty_state *)b->priv;
	int v = 0;
	if (kpoison(s->flag, sizeof(int), err, errsz) || empty_run(b, err, errsz))
		return -1;
	KCK(cudaMemcpy(&v, s->flag, sizeof v, cudaMemcpyDeviceToHost));
	struct kacc acc = {0, 0, 0};
	kacc_add(&acc, v, s->value);
	return kcheck_finish(b, &acc, 0, err, errsz);
}

const struct kfam_ops kfam_empty = {empty_setup, empty_check, empty_run, empty_release};
