/*
 * roofline.h - a GPU's roofline: memory ceilings (HBM, L2, aggregate
 * shared memory) and compute roofs (tensor cores per data type, CUDA-core
 * FP32), their ridge points, and ops placed on it.
 *
 * Ceilings are the datasheet peaks of the hardware file (the classic
 * roofline); an op's placement uses llmsim_predict's FLOPs, HBM bytes and
 * time, so the point sits at its predicted achieved rate, under the roof.
 */
#ifndef LLMSIM_REPORT_ROOFLINE_H
#define LLMSIM_REPORT_ROOFLINE_H

#include "../base/err.h"
#include "../hw/gpu.h"
#include "../sim/sim.h"

enum llmsim_ceil_kind {
	LLMSIM_CEIL_HBM, LLMSIM_CEIL_L2, LLMSIM_CEIL_SMEM, /* bandwidths */
	LLMSIM_CEIL_TENSOR, LLMSIM_CEIL_VECTOR,            /* compute roofs */
};

struct llmsim_ceiling {
	enum llmsim_ceil_kind kind;
	enum llmsim_dtype dtype;      /* compute roofs */
	char name[40];                /* "HBM", "shared memory", "BF16 tensor", "FP32 CUDA core" */
	double bytes_per_s;           /* bandwidths; 0 for roofs */
	double flops_per_s;           /* roofs; 0 for bandwidths */
	double ridge_flops_per_byte;  /* roofs: where the roof meets the HBM line */
};

#define LLMSIM_ROOF_MAX (3 + LLMSIM_DT_COUNT + 1)

struct llmsim_roofline {
	struct llmsim_ceiling ceil[LLMSIM_ROOF_MAX];
	int n;
	double hbm_bytes_per_s;
};

/* Build the ceilings of gpu: HBM, L2 and shared memory (SMs x per-SM
 * bandwidth) where the file gives them, a tensor roof for every data type
 * with a nonzero tensor rate, and the CUDA-core FP32 roof. Returns 0, or
 * LLMSIM_EINVAL when the GPU has no HBM bandwidth. */
int llmsim_roofline_init(const struct llmsim_gpu *gpu, struct llmsim_roofline *r,
			 struct llmsim_err *err);

/* The ceiling of `kind` (and dtype for compute roofs), or NULL. */
const struct llmsim_ceiling *llmsim_roofline_find(const struct llmsim_roofline *r,
						  enum llmsim_ceil_kind kind,
						  enum llmsim_dtype dt);

/* One op on the roofline. */
struct llmsim_roof_point {
	struct llmsim_op op;
	struct llmsim_pred pred;
	const struct llmsim_ceiling *roof; /* the compute roof that caps it (NULL: none) */
	double attainable_flops_per_s;     /* min(roof, intensity x HBM bandwidth) */
	double achieved_flops_per_s;       /* predicted flops / predicted time */
};

/* Predict op and place it: GEMM, attention and decode under the tensor roof
 * of their data type (vector if the GPU has no tensor rate for it),
 * element-wise ops under the CUDA-core FP32 roof. Returns llmsim_predict's
 * status. */
int llmsim_roofline_place(const struct llmsim_gpu *gpu, const struct llmsim_roofline *r,
			  const struct llmsim_op *op, struct llmsim_roof_point *pt,
			  struct llmsim_err *err);

#endif
