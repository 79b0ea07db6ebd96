/*
 * selftest.c - llmsim-inject-selftest: drives libllmsim_inject.so (path in
 * argv[1]) the way the CUDA driver and a program would, over the fake
 * CUPTI (fake_cupti.c, linked in): InitializeInjection (twice), a kernel
 * outside any range, NVTX ranges "prefill b=1 s=16" > "qkv_proj" with a
 * kernel inside the inner one and a memcpy in the outer one, a start/end
 * range; with N, N more kernels in a third range (several buffers); the
 * library writes its trace at exit. tests/test_trace_inject.c
 * runs it with the LLMSIM_TRACE_* variables set and checks the trace.
 */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void fake_launch(const char *name, int grid_x, int block_x, uint64_t start, uint64_t dur);
void fake_memcpy(uint64_t bytes, uint64_t start, uint64_t dur);

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s LIBLLMSIM_INJECT.so [N]\n", argv[0]);
		return 2;
	}
	int many = argc == 3 ? atoi(argv[2]) : 0; /* N more kernels in "decode b=1 ctx=8" */
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "no InitializeInjection in %s\n", argv[1]);
		return 1;
	}
	if (init() != 1 || init() != 1)
		return 1;
	fake_launch("outside_kernel", 1, 128, 1000, 500);
	nvtxRangePushA("prefill b=1 s=16");
	nvtxRangePushA("qkv_proj");
	fake_launch("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT", 48, 384, 2000, 10000);
	nvtxRangePop();
	fake_memcpy(4096, 13000, 100);
	nvtxRangePop();
	nvtxRangeId_t r = nvtxRangeStartA("startend");
	nvtxRangeEnd(r);
	if (many > 0) {
		nvtxRangePushA("decode b=1 ctx=8");
		for (int i = 0; i < many; i++)
			fake_launch("many_kernel", 1, 32, 100000 + 1000 * (uint64_t)i, 500);
		nvtxRangePop();
	}
	return 0;
}
