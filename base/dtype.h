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
	LLMSIM_DT_MXFP8, /* OCP MX FP8: E4M3 elements, one E8M0 scale per 32 (Blackwell
			  * block-scaled tensor cores) */
	LLMSIM_DT_NVFP4, /* NVIDIA FP4: E2M1 elements, one E4M3 scale per 16 and an FP32
			  * scale per tensor (Blackwell block-scaled tensor cores) */
	LLMSIM_DT_COUNT
};

/* "bf16" etc.; NULL for out-of-range. */
const char *llmsim_dtype_name(enum llmsim_dtype dt);
/* Parse a name (case-insensitive, "fp16"/"half" etc.); -1 if unknown. */
int llmsim_dtype_parse(const char *s);
/* Storage bytes per element (0.5 for 4-bit types; 4 for tf32; a
 * block-scaled type's element with its share of the block's scale:
 * mxfp8 1 + 1/32, nvfp4 0.5 + 1/16). */
double llmsim_dtype_bytes(enum llmsim_dtype dt);
/* 1 for the 8- and 4-bit types tensor cores multiply with 16-bit outputs
 * (fp8, fp4, int8, int4, mxfp8, nvfp4), else 0. */
int llmsim_dtype_narrow(enum llmsim_dtype dt);

#endif
