/*
 * precision.c - the precision recipes of training (see precision.h).
 *
 * Sources:
 * [TE]  Transformer Engine, transformer_engine/common/recipe/__init__.py
 *       and its user guide ("Using FP8 and FP4 with Transformer Engine"):
 *       DelayedScaling(fp8_format=HYBRID, amax_history_len=1024): E4M3
 *       forward, E5M2 gradients, the scale from the history's amax;
 *       Float8CurrentScaling: the scale from the tensor's own amax;
 *       MXFP8BlockScaling(E4M3): 1x32 blocks with E8M0 scales;
 *       NVFP4BlockScaling(E2M1): 1x16 blocks (16x16 for weights) with E4M3
 *       scales and a per-tensor FP32 scale, a random Hadamard transform on
 *       the weight-gradient inputs, stochastic rounding of gradients.
 *       A Linear quantizes its input and its output gradient for its
 *       three GEMMs (fprop X W, dgrad dY W^T, wgrad X^T dY: all three in
 *       the recipe's format) and saves the quantized input for the weight
 *       gradient; weights are quantized at the first micro-batch of a step
 *       (is_first_microbatch) and reused after.
 * [OCP] OCP Microscaling Formats (MX) v1.0: a block of 32 elements shares
 *       one 8-bit E8M0 scale.
 * [PTX] PTX ISA, wgmma (sm_90: FP8 operands K-major only) and tcgen05.mma
 *       (sm_100: kind::f8f6f4 either major-ness; kind::mxf8f6f4 and
 *       kind::mxf4nvf4 with block scales along K).
 * Assumptions (stated, not measured here): the quantize of a norm's
 * output fuses into the norm where the scale is known before the norm runs
 * (delayed scaling) or is computed per block inside it (MXFP8); current
 * scaling and NVFP4 need the whole tensor's amax first, so their norm
 * writes BF16 and an amax pass and a quantize follow (TE's
 * layernorm_linear.py runs an unfused norm for such quantizers).
 */
#include "precision.h"

#include <stdio.h>
#include <string.h>

/* TE DelayedScaling's default amax_history_len: fp32 entries, plus the
 * fp32 scale and scale-inverse */
#define DELAYED_HISTORY 1024

static const struct llmsim_precision_desc descs[LLMSIM_PREC_COUNT] = {
	[LLMSIM_PREC_BF16] = {.name = "bf16", .gemm = LLMSIM_DT_BF16},
	[LLMSIM_PREC_FP8_DELAYED] = {.name = "fp8-delayed", .gemm = LLMSIM_DT_FP8, .quantized = 1,
				     .norm_fused = 1,
				     .state_bytes = 4.0 * DELAYED_HISTORY + 8},
	[LLMSIM_PREC_FP8_CURRENT] = {.name = "fp8-current", .gemm = LLMSIM_DT_FP8, .quantized = 1,
				     .amax_pass = 1, .state_bytes = 12},
	[LLMSIM_PREC_MXFP8] = {.name = "mxfp8", .gemm = LLMSIM_DT_MXFP8, .quantized = 1,
			       .norm_fused = 1, .block_scaled = 1},
	[LLMSIM_PREC_NVFP4] = {.name = "nvfp4", .gemm = LLMSIM_DT_NVFP4, .quantized = 1,
			       .amax_pass = 1, .block_scaled = 1, .hadamard = 1, .state_bytes = 8},
};

const char *const llmsim_precision_names[] = {"bf16", "fp8-delayed", "fp8-current", "mxfp8",
					      "nvfp4", NULL};
_Static_assert(sizeof llmsim_precision_names / sizeof llmsim_precision_names[0] ==
		       LLMSIM_PREC_COUNT + 1,
	       "precision names");

const struct llmsim_precision_desc *llmsim_precision_desc(enum llmsim_precision_recipe r)
{
	return (unsigned)r < LLMSIM_PREC_COUNT ? &descs[r] : &descs[LLMSIM_PREC_BF16];
}

const char *llmsim_precision_name(enum llmsim_precision_recipe r)
{
	return (unsigned)r < LLMSIM_PREC_COUNT ? descs[r].name : "?";
}

int llmsim_precision_parse(const char *s)
{
	for (int i = 0; s && i < LLMSIM_PREC_COUNT; i++)
		if (!strcmp(s, descs[i].name))
			return i;
	return -1;
}

int llmsim_precision_of_dtype(enum llmsim_dtype dt)
{
	switch (dt) {
	case LLMSIM_DT_BF16: return LLMSIM_PREC_BF16;
	case LLMSIM_DT_FP8: return LLMSIM_PREC_FP8_DELAYED;
	case LLMSIM_DT_MXFP8: return LLMSIM_PREC_MXFP8;
	case LLMSIM_DT_FP4:
	case LLMSIM_DT_NVFP4: return LLMSIM_PREC_NVFP4;
	default: return -1;
	}
}

int llmsim_precision_check(const struct llmsim_gpu *gpu, enum llmsim_precision_recipe r,
			   struct llmsim_err *err)
{
	enum llmsim_dtype dt = llmsim_precision_desc(r)->gemm;
	if (gpu->tensor_flops_per_s[dt] > 0)
		return 0;
	char have[160] = "";
	size_t n = 0;
	for (int d = 0; d < LLMSIM_DT_COUNT && n < sizeof have; d++)
		if (gpu->tensor_flops_per_s[d] > 0)
			n += (size_t)snprintf(have + n, sizeof have - n, "%s%s", n ? ", " : "",
					      llmsim_dtype_name(d));
	return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
			      "gpu %s (%s) has no %s tensor cores for precision %s; its tensor "
			      "formats: %s",
			      gpu->name, gpu->full_name, llmsim_dtype_name(dt), descs[r].name,
			      n ? have : "none");
}

int llmsim_precision_tn_only(const struct llmsim_gpu *gpu)
{
	/* [PTX] wgmma: FP8 operands must be K-major; earlier tensor cores
	 * with FP8 (Ada) are TN-only as well; tcgen05 (Blackwell) reads
	 * either */
	return strcmp(gpu->arch, "blackwell") != 0;
}

int llmsim_precision_copies(enum llmsim_precision_recipe r, int tn_only)
{
	const struct llmsim_precision_desc *d = llmsim_precision_desc(r);
	if (!d->quantized)
		return 0;
	return d->block_scaled || tn_only ? 2 : 1;
}

double llmsim_precision_saved_bytes(enum llmsim_precision_recipe r)
{
	const struct llmsim_precision_desc *d = llmsim_precision_desc(r);
	/* the columnwise copy the weight gradient reads, with its scales */
	return d->quantized ? llmsim_dtype_bytes(d->gemm) : 2;
}

double llmsim_precision_weight_bytes(enum llmsim_precision_recipe r, int tn_only)
{
	const struct llmsim_precision_desc *d = llmsim_precision_desc(r);
	return llmsim_precision_copies(r, tn_only) * llmsim_dtype_bytes(d->gemm);
}
