/*
 * precision.h - the precision recipes of training (`--precision`), as
 * Transformer Engine runs them (transformer_engine.common.recipe:
 * DelayedScaling, Float8CurrentScaling, MXFP8BlockScaling,
 * NVFP4BlockScaling) and TorchTitan through it or torchao: which format
 * the three GEMMs of a linear layer (forward, data gradient, weight
 * gradient) run in, the quantize and amax kernels around them and which of
 * them fuse into the norm before, what the backward keeps (the quantized
 * copy of each GEMM input), the quantized weight copies a step keeps, and
 * the scaling state. The op graph (sim/graph.c) adds the kernels as ops;
 * training's memory (sim/train/memory.c) reads the bytes from here.
 *
 * TorchTitan runs FP8 through torchao's float8 training: its "tensorwise"
 * recipe is fp8-current here (with FSDP2's FP8 all-gather of weights, an
 * FSDP matter); torchao's "rowwise" recipe is not modelled; its MX
 * training is mxfp8.
 *
 * Every recipe keeps the LM head, the router, attention and the
 * element-wise ops in BF16 (Megatron-Core keeps its output layer out of
 * the FP8 autocast; TE's DotProductAttention is BF16 unless fp8_dpa).
 */
#ifndef LLMSIM_PRECISION_H
#define LLMSIM_PRECISION_H

#include "base/dtype.h"
#include "base/err.h"
#include "hw/gpu.h"

enum llmsim_precision_recipe {
	LLMSIM_PREC_BF16,        /* every GEMM in BF16 */
	LLMSIM_PREC_FP8_DELAYED, /* FP8 per tensor, scale from the amax history of past
				  * steps (TE DelayedScaling; Megatron --fp8-recipe delayed) */
	LLMSIM_PREC_FP8_CURRENT, /* FP8 per tensor, scale from this tensor's amax
				  * (TE Float8CurrentScaling; TorchTitan's float8
				  * "tensorwise"): an amax pass before each quantize */
	LLMSIM_PREC_MXFP8,       /* MXFP8: 32-element blocks, E8M0 scales (TE
				  * MXFP8BlockScaling; Blackwell only) */
	LLMSIM_PREC_NVFP4,       /* NVFP4: 16-element blocks, E4M3 scales plus a per-tensor
				  * FP32 one (TE NVFP4BlockScaling; Blackwell only) */
	LLMSIM_PREC_COUNT
};

/* What a recipe does, per linear layer (see precision.c for the sources). */
struct llmsim_precision_desc {
	const char *name;          /* "bf16", "fp8-delayed", ... */
	enum llmsim_dtype gemm;    /* fprop, dgrad and wgrad all run in it */
	int quantized;             /* 0: bf16 (no quantize kernels) */
	int amax_pass;             /* a separate amax read before each quantize (the
				    * scale is needed before the first element is cast) */
	int norm_fused;            /* the quantize of a norm's output runs inside the norm */
	int block_scaled;          /* scales along the GEMM's K: a transposed copy needs
				    * its own quantize, on every GPU */
	int hadamard;              /* a 16-point random Hadamard transform on the
				    * weight-gradient GEMM's inputs, in their quantize */
	double state_bytes;        /* scaling state per quantized tensor (fp32 amax
				    * history, scale, scale-inverse) */
};

const struct llmsim_precision_desc *llmsim_precision_desc(enum llmsim_precision_recipe r);
/* "bf16", "fp8-delayed", "fp8-current", "mxfp8", "nvfp4"; "?" out of range. */
const char *llmsim_precision_name(enum llmsim_precision_recipe r);
/* The recipe of a name, or -1. */
int llmsim_precision_parse(const char *s);
extern const char *const llmsim_precision_names[]; /* NULL-terminated */

/* The recipe `--dtype` implies: bf16 -> bf16, fp8 -> fp8-delayed (TE's and
 * Megatron's default recipe), mxfp8 -> mxfp8, nvfp4 (or fp4) -> nvfp4;
 * -1 for a type no recipe trains in. */
int llmsim_precision_of_dtype(enum llmsim_dtype dt);

/* 0 when gpu has tensor cores for recipe r's GEMM format; else
 * LLMSIM_EUNSUPPORTED with one line naming the GPU and the tensor formats
 * it has ("gpu h100 (NVIDIA H100 SXM5 80GB) has no mxfp8 tensor cores;
 * its tensor formats: fp64, tf32, bf16, fp16, fp8, int8"). */
int llmsim_precision_check(const struct llmsim_gpu *gpu, enum llmsim_precision_recipe r,
			   struct llmsim_err *err);

/* Whether gpu's FP8 GEMMs take only the TN layout (both operands K-major:
 * Hopper), so that per-tensor FP8 needs a transposed copy of each operand
 * the data and weight gradients read along the other dimension (TE's
 * cast-transpose); Blackwell's tensor cores read either layout. */
int llmsim_precision_tn_only(const struct llmsim_gpu *gpu);

/* Quantized copies one quantize writes of a GEMM input (1: rowwise only;
 * 2: rowwise and columnwise): 2 for block-scaled recipes, and for
 * per-tensor FP8 on a TN-only GPU; 0 for bf16. */
int llmsim_precision_copies(enum llmsim_precision_recipe r, int tn_only);

/* Bytes per element of a GEMM input saved for the weight gradient: 2 in
 * bf16; the quantized (columnwise) copy's element and scale otherwise. */
double llmsim_precision_saved_bytes(enum llmsim_precision_recipe r);

/* Bytes per parameter of the quantized weight copies a step keeps (TE
 * quantizes each weight at the first micro-batch and reuses it for the
 * rest: rowwise for the forward, columnwise for the data gradient), and
 * its scaling state per quantized tensor; 0 for bf16. */
double llmsim_precision_weight_bytes(enum llmsim_precision_recipe r, int tn_only);

#endif
