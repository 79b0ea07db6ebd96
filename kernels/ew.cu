/*
 * ew.cu - elementwise and normalization kernels over bf16 activations
 * (tokens x hidden, row-major), 16-byte vectorized (8 bf16 per access),
 * fp32 math: add, mul, silu_mul, gelu (tanh), rmsnorm, layernorm, softmax
 * (over hidden), rope (NeoX halves, head_dim 128, positions token % 4096,
 * cos/sin table in fp32).
 *
 * nvcc -arch=sm_90 -c ew.cu
 * Elementwise kernels are grid-stride over vectors; row kernels take one
 * block per token. Small tensors rotate over up to 8 input sets (the
 * smallest still fit in L2: their calibration cases say in_l2=1).
 * Check: 24 random whole rows against a float64 reference, and no output
 * element left unwritten.
 */
#include <stdlib.h>
#include <string.h>
#include "kcommon.h"

#define EW_MAX_SETS LLMSIM_KE_MAX_SETS
#define EW_ROTATE_BYTES LLMSIM_KE_ROTATE_BYTES
#define ROPE_DIM 128
#define ROPE_POS 4096
#define NORM_EPS 1e-5f

typedef __nv_bfloat16 bf16;

struct ew_state {
	int64_t t, h;                  /* tokens, hidden */
	int sets, cur;
	bf16 *x[EW_MAX_SETS];          /* (T, H) first input */
	bf16 *y[EW_MAX_SETS];          /* (T, H) second input (add, mul, silu_mul: up) */
	bf16 *w, *bias;                /* (H) norm weight and bias */
	float2 *rope;                  /* (ROPE_POS, ROPE_DIM/2) cos, sin */
	bf16 *out;                     /* (T, H) */
	uint64_t seed;
	int grid, threads;
	int dgrid;                     /* kgrid of every operand (activations) */
};

union v8 {
	uint4 u;
	__nv_bfloat162 h[4];
};

__device__ static inline void load8(const bf16 *p, float f[8])
{
	union v8 v;
	v.u = *(const uint4 *)p;
#pragma unroll
	for (int i = 0; i < 4; i++) {
		float2 t = __bfloat1622float2(v.h[i]);
		f[2 * i] = t.x;
		f[2 * i + 1] = t.y;
	}
}

__device__ static inline void store8(bf16 *p, const float f[8])
{
	union v8 v;
#pragma unroll
	for (int i = 0; i < 4; i++)
		v.h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
	*(uint4 *)p = v.u;
}

__device__ __host__ static inline float gelu_tanh(float x)
{
	return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void k_ew_binary(bf16 *__restrict__ out, const bf16 *__restrict__ x,
			    const bf16 *__restrict__ y, int64_t nvec, int kind)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nvec;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float a[8], b[8], o[8];
		load8(x + 8 * i, a);
		if (kind != LLMSIM_KE_GELU)
			load8(y + 8 * i, b);
#pragma unroll
		for (int j = 0; j < 8; j++) {
			switch (kind) {
			case LLMSIM_KE_ADD: o[j] = a[j] + b[j]; break;
			case LLMSIM_KE_MUL: o[j] = a[j] * b[j]; break;
			case LLMSIM_KE_SILU_MUL: o[j] = a[j] / (1.0f + __expf(-a[j])) * b[j]; break;
			default: o[j] = gelu_tanh(a[j]); break;
			}
		}
		store8(out + 8 * i, o);
	}
}

/* Sum over the block (blockDim a multiple of 32, <= 1024); all threads get it. */
__device__ static float block_sum(float v, float *red)
{
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	int w = threadIdx.x / 32, l = threadIdx.x % 32, nw = blockDim.x / 32;
	__syncthreads(); /* red may still be read from a previous call */
	if (l == 0)
		red[w] = v;
	__syncthreads();
	v = l < nw ? red[l] : 0.0f;
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ static float block_max(float v, float *red)
{
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	int w = threadIdx.x / 32, l = threadIdx.x % 32, nw = blockDim.x / 32;
	__syncthreads();
	if (l == 0)
		red[w] = v;
	__syncthreads();
	v = l < nw ? red[l] : -INFINITY;
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* One block per row: rmsnorm, layernorm, softmax. */
__global__ void k_ew_row(bf16 *__restrict__ out, const bf16 *__restrict__ x,
			 const bf16 *__restrict__ w, const bf16 *__restrict__ bias, int64_t h,
			 int kind)
{
	__shared__ float red[32];
	const bf16 *xr = x + blockIdx.x * h;
	bf16 *orow = out + blockIdx.x * h;
	int64_t nv = h / 8;
	float s1 = 0, s2 = 0, mx = -INFINITY;
	for (int64_t v = threadIdx.x; v < nv; v += blockDim.x) {
		float a[8];
		load8(xr + 8 * v, a);
#pragma unroll
		for (int j = 0; j < 8; j++) {
			s1 += a[j];
			s2 += a[j] * a[j];
			mx = fmaxf(mx, a[j]);
		}
	}
	float scale, shift = 0;
	if (kind == LLMSIM_KE_RMSNORM) {
		scale = rsqrtf(block_sum(s2, red) / (float)h + NORM_EPS);
	} else if (kind == LLMSIM_KE_LAYERNORM) {
		float mean = block_sum(s1, red) / (float)h;
		float var = fmaxf(block_sum(s2, red) / (float)h - mean * mean, 0.0f);
		scale = rsqrtf(var + NORM_EPS);
		shift = mean;
	} else {
		shift = block_max(mx, red);
		float se = 0;
		for (int64_t v = threadIdx.x; v < nv; v += blockDim.x) {
			float a[8];
			load8(xr + 8 * v, a);
#pragma unroll
			for (int j = 0; j < 8; j++)
				se += __expf(a[j] - shift);
		}
		scale = 1.0f / block_sum(se, red);
	}
	for (int64_t v = threadIdx.x; v < nv; v += blockDim.x) {
		float a[8], o[8], g[8], c[8];
		load8(xr + 8 * v, a);
		if (kind == LLMSIM_KE_SOFTMAX) {
#pragma unroll
			for (int j = 0; j < 8; j++)
				o[j] = __expf(a[j] - shift) * scale;
		} else {
			load8(w + 8 * v, g);
			if (kind == LLMSIM_KE_LAYERNORM)
				load8(bias + 8 * v, c);
#pragma unroll
			for (int j = 0; j < 8; j++) {
				o[j] = (a[j] - shift) * scale * g[j];
				if (kind == LLMSIM_KE_LAYERNORM)
					o[j] += c[j];
			}
		}
		store8(orow + 8 * v, o);
	}
}

/* NeoX rope: per head, element i < 64 pairs with i + 64. One thread per
 * 8 pairs (two 16-byte loads); heads = h / 128. */
__global__ void k_rope(bf16 *__restrict__ out, const bf16 *__restrict__ x,
		       const float2 *__restrict__ cs, int64_t t, int64_t h)
{
	int64_t per_tok = h / 16; /* threads per token: (h / 128 heads) x 8 */
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < t * per_tok;
	     i += (int64_t)gridDim.x * blockDim.x) {
		int64_t tok = i / per_tok, r = i % per_tok;
		int64_t head = r / 8, q = r % 8;
		const bf16 *p = x + tok * h + head * ROPE_DIM + q * 8;
		bf16 *o = out + tok * h + head * ROPE_DIM + q * 8;
		const float2 *c = cs + (tok % ROPE_POS) * (ROPE_DIM / 2) + q * 8;
		float a[8], b[8], oa[8], ob[8];
		load8(p, a);
		load8(p + ROPE_DIM / 2, b);
#pragma unroll
		for (int j = 0; j < 8; j++) {
			float2 e = c[j];
			oa[j] = a[j] * e.x - b[j] * e.y;
			ob[j] = b[j] * e.x + a[j] * e.y;
		}
		store8(o, oa);
		store8(o + ROPE_DIM / 2, ob);
	}
}

static void rope_angle(int64_t pos, int i, double *c, double *s)
{
	double th = (double)pos * pow(10000.0, -2.0 * i / ROPE_DIM);
	*c = cos(th);
	*s = sin(th);
}

static void ew_release(struct llmsim_kbench *b)
{
	struct ew_state *s = (struct ew_state *)b->priv;
	for (int i = 0; i < EW_MAX_SETS; i++) {
		cudaFree(s->x[i]);
		cudaFree(s->y[i]);
	}
	cudaFree(s->w);
	cudaFree(s->bias);
	cudaFree(s->rope);
	cudaFree(s->out);
	free(s);
}

static const char *const ew_impl[LLMSIM_KE_COUNT] = {
	"llmsim_ew_add", "llmsim_ew_mul", "llmsim_ew_silu_mul", "llmsim_ew_gelu",
	"llmsim_rmsnorm", "llmsim_layernorm", "llmsim_softmax", "llmsim_rope",
};
/* FLOPs per element, counting exp/tanh/rsqrt as one */
static const double ew_flops[LLMSIM_KE_COUNT] = {1, 1, 5, 8, 4, 7, 4, 3};


static int ew_setup(struct llmsim_kbench *b, uint64_t seed, char *err, size_t errsz)
{
	int kind = b->spec.variant;
	int64_t t = b->spec.m, h = b->spec.n;
	if (kind < 0 || kind >= LLMSIM_KE_COUNT)
		return kerr(err, errsz, "ew: unknown kind %d", kind);
	if (t <= 0 || h <= 0 || h % 8 || (kind == LLMSIM_KE_ROPE && h % ROPE_DIM))
		return kerr(err, errsz, "ew: tokens=%lld hidden=%lld: hidden must be a multiple "
			    "of 8 (128 for rope)", (long long)t, (long long)h);
	struct ew_state *s = (struct ew_state *)calloc(1, sizeof *s);
	if (!s)
		return kerr(err, errsz, "out of host memory");
	b->priv = s;
	s->t = t, s->h = h;
	s->seed = seed * 32;
	s->dgrid = kgrid_for(b->spec.data, KR_ACT, KT_BF16);
	size_t tb = (size_t)(t * h) * 2;
	double in_bytes = (double)tb * (llmsim_ke_two_inputs(kind) ? 2 : 1);
	s->sets = (int)(EW_ROTATE_BYTES / in_bytes) + 1;
	if (s->sets > EW_MAX_SETS)
		s->sets = EW_MAX_SETS;
	for (int i = 0; i < s->sets; i++) {
		if (kalloc((void **)&s->x[i], tb, err, errsz) ||
		    kfill(s->x[i], t * h, KT_BF16, s->seed + 2 * i, s->dgrid, err, errsz))
			return -1;
		if (llmsim_ke_two_inputs(kind) &&
		    (kalloc((void **)&s->y[i], tb, err, errsz) ||
		     kfill(s->y[i], t * h, KT_BF16, s->seed + 2 * i + 1, s->dgrid, err, errsz)))
			return -1;
	}
	if (kalloc((void **)&s->out, tb, err, errsz))
		return -1;
	double e = (double)(t * h), extra = 0;
	if (kind == LLMSIM_KE_RMSNORM || kind == LLMSIM_KE_LAYERNORM) {
		if (kalloc((void **)&s->w, h * 2, err, errsz) ||
		    kalloc((void **)&s->bias, h * 2, err, errsz) ||
		    kfill(s->w, h, KT_BF16, s->seed + 30, s->dgrid, err, errsz) ||
		    kfill(s->bias, h, KT_BF16, s->seed + 31, s->dgrid, err, errsz))
			return -1;
		extra = (kind == LLMSIM_KE_LAYERNORM ? 2.0 : 1.0) * h * 2;
	}
	if (kind == LLMSIM_KE_ROPE) {
		size_t n = (size_t)ROPE_POS * (ROPE_DIM / 2);
		float2 *tab = (float2 *)malloc(n * sizeof *tab);
		if (!tab)
			return kerr(err, errsz, "out of host memory");
		for (int64_t p = 0; p < ROPE_POS; p++)
			for (int i = 0; i < ROPE_DIM / 2; i++) {
				double c, sn;
				rope_angle(p, i, &c, &sn);
				tab[p * (ROPE_DIM / 2) + i] = make_float2((float)c, (float)sn);
			}
		int rc = kalloc((void **)&s->rope, n * sizeof *tab, err, errsz);
		cudaError_t ce = rc ? cudaSuccess
				    : cudaMemcpy(s->rope, tab, n * sizeof *tab, cudaMemcpyHostToDevice);
		free(tab);
		if (rc)
			return -1;
		KCK(ce);
	}
	snprintf(b->impl, sizeof b->impl, "%s", ew_impl[kind]);
	b->flops_declared = ew_flops[kind] * e;
	b->bytes_declared = in_bytes + (double)tb + extra;
	b->tol = 1e-2; /* bf16 output: 2^-9 relative rounding per element */
	int dev = 0, sms = 132;
	cudaGetDevice(&dev);
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if (kind == LLMSIM_KE_RMSNORM || kind == LLMSIM_KE_LAYERNORM || kind == LLMSIM_KE_SOFTMAX) {
		int64_t th = (h / 8 + 31) / 32 * 32;
		s->threads = (int)(th > 256 ? 256 : th);
		s->grid = (int)t;
	} else {
		int64_t work = kind == LLMSIM_KE_ROPE ? t * h / 16 : t * h / 8;
		int64_t g = KDIV_UP(work, 256);
		s->threads = 256;
		s->grid = (int)(g < sms * 8 ? g : sms * 8);
	}
	return 0;
}

static int ew_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct ew_state *s = (struct ew_state *)b->priv;
	int kind = b->spec.variant, i = s->cur;
	s->cur = (s->cur + 1) % s->sets;
	switch (kind) {
	case LLMSIM_KE_RMSNORM:
	case LLMSIM_KE_LAYERNORM:
	case LLMSIM_KE_SOFTMAX:
		k_ew_row<<<s->grid, s->threads>>>(s->out, s->x[i], s->w, s->bias, s->h, kind);
		break;
	case LLMSIM_KE_ROPE:
		k_rope<<<s->grid, s->threads>>>(s->out, s->x[i], s->rope, s->t, s->h);
		break;
	default:
		k_ew_binary<<<s->grid, s->threads>>>(s->out, s->x[i], s->y[i], s->t * s->h / 8,
						     kind);
		break;
	}
	KLAUNCH();
	return 0;
}

/* float64 reference of one row into ref (h). */
static void ew_ref_row(const struct ew_state *s, int kind, int64_t row, double *ref)
{
	int64_t h = s->h, base = row * h;
	double s1 = 0, s2 = 0, mx = -INFINITY;
	for (int64_t j = 0; j < h; j++) {
		double a = kval(s->seed, base + j, s->dgrid, KT_BF16);
		s1 += a, s2 += a * a, mx = a > mx ? a : mx;
	}
	double se = 0;
	if (kind == LLMSIM_KE_SOFTMAX)
		for (int64_t j = 0; j < h; j++)
			se += exp(kval(s->seed, base + j, s->dgrid, KT_BF16) - mx);
	for (int64_t j = 0; j < h; j++) {
		double a = kval(s->seed, base + j, s->dgrid, KT_BF16);
		double y = llmsim_ke_two_inputs(kind) ? kval(s->seed + 1, base + j, s->dgrid, KT_BF16) : 0;
		double w = s->w ? kval(s->seed + 30, j, s->dgrid, KT_BF16) : 0;
		double c = s->bias ? kval(s->seed + 31, j, s->dgrid, KT_BF16) : 0;
		switch (kind) {
		case LLMSIM_KE_ADD: ref[j] = a + y; break;
		case LLMSIM_KE_MUL: ref[j] = a * y; break;
		case LLMSIM_KE_SILU_MUL: ref[j] = a / (1 + exp(-a)) * y; break;
		case LLMSIM_KE_GELU: ref[j] = 0.5 * a * (1 + tanh(0.7978845608 * (a + 0.044715 * a * a * a))); break;
		case LLMSIM_KE_RMSNORM: ref[j] = a / sqrt(s2 / h + NORM_EPS) * w; break;
		case LLMSIM_KE_LAYERNORM: {
			double mean = s1 / h, var = s2 / h - mean * mean;
			ref[j] = (a - mean) / sqrt(var + NORM_EPS) * w + c;
			break;
		}
		case LLMSIM_KE_SOFTMAX: ref[j] = exp(a - mx) / se; break;
		default: {
			int64_t d = j % ROPE_DIM, i = d % (ROPE_DIM / 2), hb = j - d;
			double cs, sn;
			rope_angle(row % ROPE_POS, (int)i, &cs, &sn);
			double x1 = kval(s->seed, base + hb + i, s->dgrid, KT_BF16);
			double x2 = kval(s->seed, base + hb + i + ROPE_DIM / 2, s->dgrid, KT_BF16);
			ref[j] = d < ROPE_DIM / 2 ? x1 * cs - x2 * sn : x2 * cs + x1 * sn;
			break;
		}
		}
	}
}

static int ew_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	struct ew_state *s = (struct ew_state *)b->priv;
	s->cur = 0;
	if (kpoison(s->out, (size_t)(s->t * s->h) * 2, err, errsz) || ew_run(b, err, errsz))
		return -1;
	KCK(cudaDeviceSynchronize());
	uint64_t bad = 0;
	if (kcount_nonfinite(s->out, s->t * s->h, KT_BF16, &bad, err, errsz))
		return -1;
	float *out = (float *)malloc(s->h * sizeof(float));
	double *ref = (double *)malloc(s->h * sizeof(double));
	if (!out || !ref) {
		free(out);
		free(ref);
		return kerr(err, errsz, "out of host memory");
	}
	struct kacc acc = {0, 0, 0};
	uint64_t r = s->seed;
	int rc = 0;
	for (int q = 0; q < 24 && rc == 0; q++) {
		int64_t row = (int64_t)(krand(&r) % (uint64_t)s->t);
		rc = kread_n(s->out, row * s->h, s->h, KT_BF16, out, err, errsz);
		if (rc == 0) {
			ew_ref_row(s, b->spec.variant, row, ref);
			for (int64_t j = 0; j < s->h; j++)
				kacc_add(&acc, out[j], ref[j]);
		}
	}
	free(out);
	free(ref);
	return rc ? rc : kcheck_finish(b, &acc, bad, err, errsz);
}

const struct kfam_ops kfam_ew = {ew_setup, ew_check, ew_run, ew_release};
