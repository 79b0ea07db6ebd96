/*
 * dtype.h - numeric data types the simulator prices, with their sizes.
 */
#ifndef LLMSIM_DTYPE_H
#define LLMSIM_DTYPE_H

enum llmsim_dtype {
	LLMSIM_DT_FP64,
	LLMSIM_DT_FP32,
	LLMSIM_DT_TF32,  /* FP32 storage, TF32 tensor-core math */
	LLMSIM_DT_BF16,
	LLMSIM_DT_FP16,
	LLMSIM_DT_FP8,   /* E4M3/E5M2 */
	LLMSIM_DT_FP4,   /* NVFP4/MXFP4 */
	LLMSIM_DT_INT8,
	LLMSIM_DT_INT4,  /* weight-only quantization */
	LLMSIM_DT_INT64, /* indices and sort keys (no math rate) */
	LLMSIM_DT_COUNT
};

/* "bf16" etc.; NULL for out-of-range. */
const char *llmsim_dtype_name(enum llmsim_dtype dt);
/* Parse a name (case-insensitive, "fp16"/"half" etc.); -1 if unknown. */
int llmsim_dtype_parse(const char *s);
/* Storage bytes per element (0.5 for 4-bit types; 4 for tf32). */
double llmsim_dtype_bytes(enum llmsim_dtype dt);

#endif
