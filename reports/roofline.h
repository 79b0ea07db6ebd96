/*
 * roofline.h - a GPU's roofline: memory ceilings (HBM, L2, aggregate
 * shared memory) and compute roofs (tensor cores per data type, CUDA-core
 * FP32), their ridge points, and ops placed on it.
 *
 * Ceilings are the datasheet peaks of the hardware file (the classic
 * roofline); an op is placed from its prediction (llmsim_predict's FLOPs,
 * HBM bytes and time, made by the caller: reports price nothing), so the
 * point sits at its predicted achieved rate, under the roof.
 *
 * The ops of one layer placed on it are those of the op graph
 * (sim/graph.h) that `llmsim infer` (serving: a prefill step and a decode
 * step) or `llmsim train` (a micro-batch's forward and backward) walks,
 * one GPU of the layout, lone kernels (the burst clock); communication is
 * not on the roofline (links bound it, not HBM).
 */
#ifndef LLMSIM_REPORT_ROOFLINE_H
#define LLMSIM_REPORT_ROOFLINE_H

#include "base/err.h"
#include "hw/gpu.h"
#include "sim/infer/infer.h"
#include "sim/sim.h"

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

/* Place op with its prediction: GEMM, attention and decode under the
 * tensor roof of their data type (vector if the GPU has no tensor rate for
 * it), element-wise ops under the CUDA-core FP32 roof. */
void llmsim_roofline_point(const struct llmsim_roofline *r, const struct llmsim_op *op,
			   const struct llmsim_pred *pred, struct llmsim_roof_point *pt);

/* ---- the ops of one layer on it ---- */

enum llmsim_workload { LLMSIM_WORKLOAD_SERVE, LLMSIM_WORKLOAD_TRAIN };

/* Two phases per workload: 0 prefill/forward, 1 decode/backward. */
const char *llmsim_phase_name(enum llmsim_workload w, int phase);

/* The workload whose layer is drawn. */
struct llmsim_layer_cfg {
	enum llmsim_workload workload;
	enum llmsim_dtype dtype;      /* linear layers' math and weights; activations in
				       * llmsim_graph_act_dtype of it */
	enum llmsim_dtype kv_dtype;   /* decode KV cache */
	int64_t batch;                /* sequences */
	int64_t seq;                  /* prompt length; decode: KV cache length */
	enum llmsim_attn_choice attn; /* serving: prefill and decode kernels */
	enum llmsim_attn_impl train_attn; /* training attention */
	int tp;                       /* tensor parallel: the ops of one of tp GPUs */
};

/* Defaults: serve, bf16, batch 1, seq 4096, paged (FlashAttention-2
 * prefill, PagedAttention decode), flash2 training, tp 1. */
void llmsim_layer_cfg_init(struct llmsim_layer_cfg *c);

#define LLMSIM_LAYER_OPS_MAX 128

/* One op of the layer, as its walker priced it. */
struct llmsim_layer_op {
	char name[48];                /* the graph node's: "qkv_proj", "down_proj.wgrad" */
	int phase;                    /* 0 prefill/forward, 1 decode/backward */
	struct llmsim_op op;
	struct llmsim_pred pred;
};

#endif
