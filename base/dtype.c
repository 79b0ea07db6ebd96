/* dtype.c - data type names and sizes. */
#include "dtype.h"

#include <stddef.h>
#include <strings.h>

static const struct {
	const char *name;
	double bytes;
} dtypes[] = {
	[LLMSIM_DT_FP64] = {"fp64", 8},
	[LLMSIM_DT_FP32] = {"fp32", 4},
	[LLMSIM_DT_TF32] = {"tf32", 4},
	[LLMSIM_DT_BF16] = {"bf16", 2},
	[LLMSIM_DT_FP16] = {"fp16", 2},
	[LLMSIM_DT_FP8] = {"fp8", 1},
	[LLMSIM_DT_FP4] = {"fp4", 0.5},
	[LLMSIM_DT_INT8] = {"int8", 1},
	[LLMSIM_DT_INT4] = {"int4", 0.5},
	[LLMSIM_DT_INT64] = {"int64", 8},
	/* OCP Microscaling Formats (MX) v1.0 spec: 32-element blocks, an
	 * 8-bit E8M0 scale each */
	[LLMSIM_DT_MXFP8] = {"mxfp8", 1 + 1.0 / 32},
	/* NVIDIA, "Pretraining Large Language Models with NVFP4" (2025) and
	 * Transformer Engine's NVFP4BlockScaling: 16-element blocks with an
	 * E4M3 scale each (the per-tensor FP32 scale is negligible) */
	[LLMSIM_DT_NVFP4] = {"nvfp4", 0.5 + 1.0 / 16},
};
_Static_assert(sizeof dtypes / sizeof dtypes[0] == LLMSIM_DT_COUNT, "dtype table");

const char *llmsim_dtype_name(enum llmsim_dtype dt)
{
	return (unsigned)dt < LLMSIM_DT_COUNT ? dtypes[dt].name : NULL;
}

int llmsim_dtype_parse(const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < LLMSIM_DT_COUNT; i++)
		if (!strcasecmp(s, dtypes[i].name))
			return i;
	if (!strcasecmp(s, "half"))
		return LLMSIM_DT_FP16;
	if (!strcasecmp(s, "float") || !strcasecmp(s, "float32"))
		return LLMSIM_DT_FP32;
	if (!strcasecmp(s, "bfloat16"))
		return LLMSIM_DT_BF16;
	if (!strcasecmp(s, "fp8_e4m3") || !strcasecmp(s, "e4m3"))
		return LLMSIM_DT_FP8;
	return -1;
}

double llmsim_dtype_bytes(enum llmsim_dtype dt)
{
	return (unsigned)dt < LLMSIM_DT_COUNT ? dtypes[dt].bytes : 0;
}

int llmsim_dtype_narrow(enum llmsim_dtype dt)
{
	switch (dt) {
	case LLMSIM_DT_FP8:
	case LLMSIM_DT_FP4:
	case LLMSIM_DT_INT8:
	case LLMSIM_DT_INT4:
	case LLMSIM_DT_MXFP8:
	case LLMSIM_DT_NVFP4:
		return 1;
	default:
		return 0;
	}
}
