/*
 * kbench.cu - the benchmark case lifecycle behind kernels.h (dispatch to the
 * family files), and the shared helpers of kcommon.h: input fill, poison,
 * unwritten-output count, sampled reads.
 *
 * nvcc -arch=sm_90 -c kbench.cu   (built by kernels/CMakeLists.txt)
 */
#include <stdlib.h>
#include <string.h>
#include "kcommon.h"

/* C++ has no array designators: a switch keeps the enum-indexed mapping. */
static const struct kfam_ops *fam_ops_of(int fam)
{
	switch (fam) {
	case LLMSIM_KF_STREAM: return &kfam_stream;
	case LLMSIM_KF_SMEM: return &kfam_smem;
	case LLMSIM_KF_EMPTY: return &kfam_empty;
	case LLMSIM_KF_GEMM: return &kfam_gemm;
	case LLMSIM_KF_EW: return &kfam_ew;
	case LLMSIM_KF_ATTN: return &kfam_attn;
	case LLMSIM_KF_DECODE: return &kfam_decode;
	}
	return NULL;
}

__global__ void k_fill(void *p, int64_t n, int t, uint64_t seed, int grid)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float v = kgen(seed, (uint64_t)i, grid);
		switch (t) {
		case KT_F32: ((float *)p)[i] = v; break;
		case KT_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
		case KT_F16: ((__half *)p)[i] = __float2half_rn(v); break;
		default: ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v); break;
		}
	}
}

__device__ static inline float kload(const void *p, int64_t i, int t)
{
	switch (t) {
	case KT_F32: return ((const float *)p)[i];
	case KT_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
	case KT_F16: return __half2float(((const __half *)p)[i]);
	default: return (float)((const __nv_fp8_e4m3 *)p)[i];
	}
}

__global__ void k_nonfinite(const void *p, int64_t n, int t, unsigned long long *count)
{
	unsigned long long c = 0;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		c += !isfinite(kload(p, i, t));
	if (c)
		atomicAdd(count, c);
}

int kfill(void *p, int64_t n, int t, uint64_t seed, int grid, char *err, size_t errsz)
{
	k_fill<<<1024, 256>>>(p, n, t, seed, grid);
	KLAUNCH();
	return 0;
}

int kcount_nonfinite(const void *p, int64_t n, int t, uint64_t *count, char *err, size_t errsz)
{
	unsigned long long *d = NULL, h = 0;
	KCK(cudaMalloc(&d, sizeof *d));
	cudaError_t e = cudaMemset(d, 0, sizeof *d);
	if (e == cudaSuccess) {
		k_nonfinite<<<1024, 256>>>(p, n, t, d);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
	cudaFree(d);
	KCK(e);
	*count = h;
	return 0;
}

int kalloc(void **p, size_t bytes, char *err, size_t errsz)
{
	*p = NULL;
	cudaError_t e = cudaMalloc(p, bytes);
	if (e != cudaSuccess) {
		*p = NULL;
		cudaGetLastError();
		return kerr(err, errsz, "cudaMalloc(%zu bytes): %s", bytes, cudaGetErrorString(e));
	}
	return 0;
}

int kpoison(void *p, size_t bytes, char *err, size_t errsz)
{
	KCK(cudaMemset(p, 0xFF, bytes));
	return 0;
}

static float host_elem(const unsigned char *q, int t)
{
	switch (t) {
	case KT_F32: {
		float f;
		memcpy(&f, q, 4);
		return f;
	}
	case KT_BF16: {
		__nv_bfloat16 v;
		memcpy(&v, q, 2);
		return __bfloat162float(v);
	}
	case KT_F16: {
		__half v;
		memcpy(&v, q, 2);
		return __half2float(v);
	}
	default: {
		__nv_fp8_e4m3 v;
		memcpy(&v, q, 1);
		return (float)v;
	}
	}
}

int kread_n(const void *p, int64_t i, int64_t n, int t, float *out, char *err, size_t errsz)
{
	size_t eb = ktype_bytes(t);
	unsigned char *tmp = (unsigned char *)malloc(n * eb);
	if (!tmp)
		return kerr(err, errsz, "out of host memory");
	cudaError_t e = cudaMemcpy(tmp, (const unsigned char *)p + i * eb, n * eb,
				   cudaMemcpyDeviceToHost);
	if (e == cudaSuccess)
		for (int64_t j = 0; j < n; j++)
			out[j] = host_elem(tmp + j * eb, t);
	free(tmp);
	KCK(e);
	return 0;
}

int kread(const void *p, int64_t i, int t, float *out, char *err, size_t errsz)
{
	return kread_n(p, i, 1, t, out, err, errsz);
}

int kcheck_finish(struct llmsim_kbench *b, const struct kacc *a, uint64_t nonfinite,
		  char *err, size_t errsz)
{
	b->check_rel_err = kacc_rel(a);
	if (nonfinite)
		return kerr(err, errsz, "%llu output elements not finite (unwritten or overflow)",
			    (unsigned long long)nonfinite);
	if (!(b->check_rel_err <= b->tol))
		return kerr(err, errsz, "check failed: rel err %.3g > tol %.3g over %lld samples",
			    b->check_rel_err, b->tol, (long long)a->n);
	return 0;
}

extern "C" int llmsim_kbench_setup(struct llmsim_kbench *b, const struct llmsim_kspec *spec,
				   uint64_t seed, char *err, size_t errsz)
{
	memset(b, 0, sizeof *b);
	b->spec = *spec;
	b->check_rel_err = -1;
	b->launches = 1;
	if ((unsigned)spec->fam >= LLMSIM_KF_COUNT)
		return kerr(err, errsz, "unknown kernel family %d", (int)spec->fam);
	int rc = fam_ops_of(spec->fam)->setup(b, seed, err, errsz);
	if (rc == 0) {
		cudaError_t e = cudaDeviceSynchronize();
		if (e != cudaSuccess)
			rc = kerr(err, errsz, "setup: %s", cudaGetErrorString(e));
	}
	if (rc)
		llmsim_kbench_free(b);
	return rc;
}

extern "C" int llmsim_kbench_check(struct llmsim_kbench *b, char *err, size_t errsz)
{
	if (!b->priv)
		return kerr(err, errsz, "case not set up");
	return fam_ops_of(b->spec.fam)->check(b, err, errsz);
}

extern "C" int llmsim_kbench_run(struct llmsim_kbench *b, char *err, size_t errsz)
{
	if (!b->priv)
		return kerr(err, errsz, "case not set up");
	return fam_ops_of(b->spec.fam)->run(b, err, errsz);
}

extern "C" void llmsim_kbench_free(struct llmsim_kbench *b)
{
	if (b->priv && (unsigned)b->spec.fam < LLMSIM_KF_COUNT)
		fam_ops_of(b->spec.fam)->release(b);
	b->priv = NULL;
}
