/*
 * devinfo.c - the GPU and software a run is made on: CUDA runtime device
 * properties and versions, CUPTI and cuBLAS versions, and, when the NVML
 * library is present (dlopen, optional), the driver version and the
 * maximum SM and memory clocks.
 */
#include <ctype.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "runner.h"

/* NVML's types, declared here: the header is not needed for four calls */
typedef void *nvml_device;
enum { NVML_SUCCESS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static void nvml_fill(struct llmsim_device_info *d)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
	int (*shutdown)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
	int (*by_uuid)(const char *, nvml_device *) =
		(int (*)(const char *, nvml_device *))dlsym(h, "nvmlDeviceGetHandleByUUID");
	int (*max_clock)(nvml_device, int, unsigned *) =
		(int (*)(nvml_device, int, unsigned *))dlsym(h, "nvmlDeviceGetMaxClockInfo");
	int (*driver)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
	if (init && init() == NVML_SUCCESS) {
		char buf[80];
		if (driver && driver(buf, sizeof buf) == NVML_SUCCESS)
			snprintf(d->driver, sizeof d->driver, "%.31s", buf);
		nvml_device dev = NULL;
		unsigned mhz = 0;
		if (by_uuid && d->uuid[0] && by_uuid(d->uuid, &dev) == NVML_SUCCESS && max_clock) {
			if (max_clock(dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
				d->sm_clock_max_hz = mhz * 1e6;
			if (max_clock(dev, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS)
				d->mem_clock_hz = mhz * 1e6;
		}
		if (shutdown)
			shutdown();
	}
	/* libnvidia-ml stays loaded: unloading driver libraries is not worth the risk */
}

static void version_str(char *buf, size_t size, int v)
{
	snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
}

static const char *const hw_names[] = {"H200", "H100", "A100", "B200", "L40S", "L4", "MI300X"};

void devinfo_fill(struct llmsim_device_info *d)
{
	memset(d, 0, sizeof *d);
	int dev = 0, v = 0;
	struct cudaDeviceProp p;
	cudaGetDevice(&dev);
	d->device_count = 1;
	if (cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
		snprintf(d->name, sizeof d->name, "%.127s", p.name);
		const unsigned char *u = (const unsigned char *)p.uuid.bytes;
		snprintf(d->uuid, sizeof d->uuid,
			 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
		d->sms = p.multiProcessorCount;
		d->hbm_bytes = (double)p.totalGlobalMem;
		d->l2_bytes = (double)p.l2CacheSize;
	}
	int khz = 0;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess)
		d->sm_clock_max_hz = khz * 1e3;
	if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
		d->mem_clock_hz = khz * 1e3;
	for (size_t i = 0; i < sizeof hw_names / sizeof hw_names[0]; i++)
		if (strstr(d->name, hw_names[i])) {
			size_t j = 0;
			for (; hw_names[i][j] && j + 1 < sizeof d->hw_name; j++)
				d->hw_name[j] = (char)tolower((unsigned char)hw_names[i][j]);
			d->hw_name[j] = 0;
			break;
		}
	if (cudaDriverGetVersion(&v) == cudaSuccess)
		snprintf(d->driver, sizeof d->driver, "cuda %d.%d", v / 1000, v % 1000 / 10);
	if (cudaRuntimeGetVersion(&v) == cudaSuccess)
		version_str(d->cuda_runtime, sizeof d->cuda_runtime, v);
	uint32_t cv = 0;
	if (cuptiGetVersion(&cv) == CUPTI_SUCCESS)
		snprintf(d->cupti, sizeof d->cupti, "%u", cv);
	llmsim_kernels_cublas_version(d->cublas, sizeof d->cublas);
	nvml_fill(d); /* replaces the driver version and the clocks when present */
}
