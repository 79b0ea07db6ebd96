/*
 * counters.c - hardware counters through the CUPTI Range Profiler (CUDA
 * 12.6+; the Event/Metric APIs are gone in 13.0): auto range (one range per
 * kernel), kernel replay, one pass of the metrics below on GH100.
 *
 * Sequence (cupti.md): profiler init, chip name, counter availability, host
 * config image for the metrics; then per case: range profiler enable on the
 * context, counter data image, set config, start, launch, stop, decode,
 * evaluate each range, disable. Counters replay and serialise kernels, so
 * the timings come from a separate activity-only pass, made before with no
 * profiler enabled (and kernel tracing paused during the counter pass).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <stdlib.h>
#include <string.h>
#include "runner.h"

#define MAX_RANGES 256

const char *const counter_metric_names[COUNTER_METRICS] = {
	"gpu__time_duration.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_bytes.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
	"sm__inst_executed_pipe_tensor.sum",
	"sm__cycles_elapsed.avg.per_second",
};
/* metrics averaged over kernels (weighted by duration) rather than summed */
static const int metric_is_avg[COUNTER_METRICS] = {0, 0, 0, 0, 1, 0, 0, 1};

static int initialized, profiler_inited;
static CUpti_Profiler_Host_Object *host;
static CUpti_RangeProfiler_Object *rp;
static uint8_t *config, *counter_data, *avail;
static size_t config_size, counter_data_size;
static CUcontext g_ctx;

static int fail(CUptiResult r, const char *what, char *err, size_t errsz)
{
	const char *s = "?";
	cuptiGetResultString(r, &s);
	snprintf(err, errsz, "%s: %s", what, s);
	return -1;
}

#define CP(call, what)                                          \
	do {                                                    \
		CUptiResult r_ = (call);                        \
		if (r_ != CUPTI_SUCCESS)                        \
			return fail(r_, what, err, errsz);      \
	} while (0)

/* Host side: metrics into a config image for chip (availability optional). */
static int host_config(const char *chip, const uint8_t *availability, char *err, size_t errsz)
{
	CUpti_Profiler_Host_Initialize_Params hi = {
		.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
		.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER,
		.pChipName = chip,
		.pCounterAvailabilityImage = availability,
	};
	CP(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize");
	host = hi.pHostObject;
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
		.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
		.pHostObject = host,
		.ppMetricNames = (const char **)counter_metric_names,
		.numMetrics = COUNTER_METRICS,
	};
	CP(cuptiProfilerHostConfigAddMetrics(&am), "cuptiProfilerHostConfigAddMetrics");
	CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
		.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE,
		.pHostObject = host,
	};
	CP(cuptiProfilerHostGetConfigImageSize(&cs), "cuptiProfilerHostGetConfigImageSize");
	config_size = cs.configImageSize;
	config = malloc(config_size ? config_size : 1);
	if (!config) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	CUpti_Profiler_Host_GetConfigImage_Params ci = {
		.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
		.pHostObject = host,
		.configImageSize = config_size,
		.pConfigImage = config,
	};
	CP(cuptiProfilerHostGetConfigImage(&ci), "cuptiProfilerHostGetConfigImage");
	return 0;
}

static void host_release(void)
{
	if (host) {
		CUpti_Profiler_Host_Deinitialize_Params d = {
			.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
			.pHostObject = host,
		};
		cuptiProfilerHostDeinitialize(&d);
		host = NULL;
	}
	free(config);
	config = NULL;
}

int counters_passes(const char *chip, size_t *passes, char *err, size_t errsz)
{
	int rc = host_config(chip, NULL, err, errsz);
	if (rc == 0) {
		CUpti_Profiler_Host_GetNumOfPasses_Params np = {
			.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
			.configImageSize = config_size,
			.pConfigImage = config,
		};
		CUptiResult r = cuptiProfilerHostGetNumOfPasses(&np);
		if (r != CUPTI_SUCCESS)
			rc = fail(r, "cuptiProfilerHostGetNumOfPasses", err, errsz);
		else
			*passes = np.numOfPasses;
	}
	host_release();
	return rc;
}

static int counters_init_steps(char *err, size_t errsz)
{
	CUpti_Profiler_Initialize_Params pi = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
	CP(cuptiProfilerInitialize(&pi), "cuptiProfilerInitialize");
	profiler_inited = 1;
	int dev = 0;
	cudaGetDevice(&dev);
	CUpti_Device_GetChipName_Params cn = {
		.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
		.deviceIndex = (size_t)dev,
	};
	CP(cuptiDeviceGetChipName(&cn), "cuptiDeviceGetChipName");
	/* the context, without linking libcuda: a driver entry point */
	CUresult (*ctx_get)(CUcontext *) = NULL;
	enum cudaDriverEntryPointQueryResult q;
	CUcontext ctx = NULL;
	if (cudaFree(0) != cudaSuccess ||
	    cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&ctx_get, 12000,
					     cudaEnableDefault, &q) != cudaSuccess ||
	    !ctx_get || ctx_get(&ctx) != CUDA_SUCCESS || !ctx) {
		snprintf(err, errsz, "cannot get the CUDA context (cuCtxGetCurrent entry point)");
		return -1;
	}
	CUpti_Profiler_GetCounterAvailability_Params ca = {
		.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE,
		.ctx = ctx,
	};
	CP(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability(size)");
	avail = malloc(ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1);
	if (!avail) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	ca.pCounterAvailabilityImage = avail;
	CP(cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");
	if (host_config(cn.pChipName, avail, err, errsz))
		return -1;
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
		.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
		.configImageSize = config_size,
		.pConfigImage = config,
	};
	CP(cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
	if (np.numOfPasses != 1)
		fprintf(stderr, "llmsim-calib-runner: counters need %zu passes on %s (kernel replay)\n",
			np.numOfPasses, cn.pChipName);
	g_ctx = ctx;
	return 0;
}

/* Enable the range profiler on the context for one measurement: outside
 * the counter pass the timed runs see no profiler state at all. */
static int enable(char *err, size_t errsz)
{
	CUpti_RangeProfiler_Enable_Params en = {
		.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE,
		.ctx = g_ctx,
	};
	CP(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
	rp = en.pRangeProfilerObject;
	CUpti_RangeProfiler_GetCounterDataSize_Params ds = {
		.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
		.pRangeProfilerObject = rp,
		.pMetricNames = (const char **)counter_metric_names,
		.numMetrics = COUNTER_METRICS,
		.maxNumOfRanges = MAX_RANGES,
		.maxNumRangeTreeNodes = MAX_RANGES,
	};
	CP(cuptiRangeProfilerGetCounterDataSize(&ds), "cuptiRangeProfilerGetCounterDataSize");
	if (ds.counterDataSize > counter_data_size) {
		free(counter_data);
		counter_data_size = 0;
		counter_data = malloc(ds.counterDataSize);
		if (!counter_data) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
	}
	counter_data_size = ds.counterDataSize;
	return 0;
}

static void disable(void)
{
	if (rp) {
		CUpti_RangeProfiler_Disable_Params d = {
			.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
			.pRangeProfilerObject = rp,
		};
		cuptiRangeProfilerDisable(&d);
		rp = NULL;
	}
}

int counters_init(char *err, size_t errsz)
{
	/* a trial enable finds missing privileges or busy counters up front */
	int rc = counters_init_steps(err, errsz);
	if (rc == 0)
		rc = enable(err, errsz);
	disable();
	if (rc) {
		counters_shutdown();
		return -1;
	}
	initialized = 1;
	return 0;
}

static int measure_enabled(int (*run)(void *arg, char *err, size_t errsz), void *arg,
			   struct counter_values *out, char *err, size_t errsz)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
		.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
		.pRangeProfilerObject = rp,
		.counterDataSize = counter_data_size,
		.pCounterData = counter_data,
	};
	CP(cuptiRangeProfilerCounterDataImageInitialize(&di),
	   "cuptiRangeProfilerCounterDataImageInitialize");
	CUpti_RangeProfiler_SetConfig_Params sc = {
		.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
		.pRangeProfilerObject = rp,
		.configSize = config_size,
		.pConfig = config,
		.counterDataImageSize = counter_data_size,
		.pCounterDataImage = counter_data,
		.range = CUPTI_AutoRange,
		.replayMode = CUPTI_KernelReplay,
		.maxRangesPerPass = MAX_RANGES,
		.numNestingLevels = 1,
		.minNestingLevel = 1,
		.passIndex = 0,
		.targetNestingLevel = 1,
	};
	CP(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
	CUpti_RangeProfiler_Start_Params st = {
		.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
		.pRangeProfilerObject = rp,
	};
	CP(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
	char rerr[256] = "";
	int rrc = run(arg, rerr, sizeof rerr);
	cudaError_t ce = cudaDeviceSynchronize();
	CUpti_RangeProfiler_Stop_Params sp = {
		.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
		.pRangeProfilerObject = rp,
	};
	CUptiResult r = cuptiRangeProfilerStop(&sp);
	if (rrc) {
		snprintf(err, errsz, "launch under the profiler: %s", rerr);
		return -1;
	}
	if (ce != cudaSuccess) {
		snprintf(err, errsz, "launch under the profiler: %s", cudaGetErrorString(ce));
		return -1;
	}
	if (r != CUPTI_SUCCESS)
		return fail(r, "cuptiRangeProfilerStop", err, errsz);
	if (!sp.isAllPassSubmitted) {
		snprintf(err, errsz, "kernel replay left passes unsubmitted");
		return -1;
	}
	CUpti_RangeProfiler_DecodeData_Params dd = {
		.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
		.pRangeProfilerObject = rp,
	};
	CP(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {
		.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE,
		.pCounterDataImage = counter_data,
		.counterDataImageSize = counter_data_size,
	};
	CP(cuptiRangeProfilerGetCounterDataInfo(&gi), "cuptiRangeProfilerGetCounterDataInfo");
	double wsum = 0;
	for (size_t i = 0; i < gi.numTotalRanges; i++) {
		double v[COUNTER_METRICS] = {0};
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
			.pHostObject = host,
			.pCounterDataImage = counter_data,
			.counterDataImageSize = counter_data_size,
			.rangeIndex = i,
			.ppMetricNames = (const char **)counter_metric_names,
			.numMetrics = COUNTER_METRICS,
			.pMetricValues = v,
		};
		CP(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
		double w = v[0] > 0 ? v[0] : 1; /* gpu__time_duration.sum weights the averages */
		for (int m = 0; m < COUNTER_METRICS; m++)
			out->v[m] += metric_is_avg[m] ? v[m] * w : v[m];
		wsum += w;
	}
	for (int m = 0; m < COUNTER_METRICS; m++)
		if (metric_is_avg[m] && wsum > 0)
			out->v[m] /= wsum;
	out->ranges = (int)gi.numTotalRanges;
	if (dd.numOfRangeDropped)
		fprintf(stderr, "llmsim-calib-runner: counters: %zu ranges dropped\n",
			dd.numOfRangeDropped);
	return 0;
}

int counters_measure(int (*run)(void *arg, char *err, size_t errsz), void *arg,
		     struct counter_values *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof *out);
	if (!initialized) {
		snprintf(err, errsz, "counters not initialized");
		return -1;
	}
	int rc = enable(err, errsz);
	if (rc == 0)
		rc = measure_enabled(run, arg, out, err, errsz);
	disable();
	return rc;
}

void counters_shutdown(void)
{
	disable();
	host_release();
	free(counter_data);
	counter_data = NULL;
	free(avail);
	avail = NULL;
	if (profiler_inited) {
		CUpti_Profiler_DeInitialize_Params p = {
			.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
		cuptiProfilerDeInitialize(&p);
		profiler_inited = 0;
	}
	initialized = 0;
}
