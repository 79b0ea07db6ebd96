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
