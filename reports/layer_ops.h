/*
 * layer_ops.h - the kernels of one transformer layer, as llmsim ops, for
 * the roofline: prefill and decode (serving) or forward and backward
 * (training). Only shapes are built here; every FLOP and byte comes from
 * llmsim_predict.
 *
 * Serving, prefill (T = batch * seq tokens): norm, QKV GEMM, RoPE,
 * attention (causal, FlashAttention-2), O GEMM, residual add, norm, MLP
 * up/gate GEMM, activation, down GEMM, residual add. Decode (T = batch):
 * the same with the decode-attention op against a KV cache of `seq`
 * tokens. MLA models get the low-rank projections (and the absorbed MLA
 * decode); MoE models get the router and the routed experts as a batched
 * GEMM (tokens spread evenly over experts) plus shared experts. Training,
 * forward: the prefill ops with pass=fwd; backward: each GEMM's data and
 * weight gradients, attention and element-wise ops with pass=bwd.
 *
 * With tp > 1 the ops are those of one GPU: attention heads and MLP (and
 * expert) widths are split tp ways, KV heads too or replicated when fewer
 * than tp, the MLA down-projections and the router replicated; training
 * (sequence parallelism) also splits the tokens of norms and residuals.
 * Communication is not on the roofline (it is bound by links, not HBM).
 */
#ifndef LLMSIM_REPORT_LAYER_OPS_H
#define LLMSIM_REPORT_LAYER_OPS_H

#include <stdint.h>
#include "../base/err.h"
#include "../models/model.h"
#include "../sim/sim.h"

enum llmsim_workload { LLMSIM_WORKLOAD_SERVE, LLMSIM_WORKLOAD_TRAIN };

/* Two phases per workload: 0 prefill/forward, 1 decode/backward. */
const char *llmsim_phase_name(enum llmsim_workload w, int phase);

struct llmsim_layer_cfg {
	enum llmsim_workload workload;
	enum llmsim_dtype dtype;      /* GEMM math and weights (see llmsim_layer_act_dtype) */
	enum llmsim_dtype kv_dtype;   /* decode KV cache */
	int64_t batch;                /* sequences */
	int64_t seq;                  /* prompt length; decode: KV cache length */
	enum llmsim_attn_impl attn_impl;
	enum llmsim_decode_impl decode_impl;
	int tp;                       /* tensor parallel: the ops of one of tp GPUs */
};

/* The type of activations, attention and element-wise ops for a GEMM
 * type: 8- and 4-bit types run GEMMs only (FP8 W8A8, INT4 weight-only
 * with BF16 math), everything else in BF16; other types run as they are
 * (FP32 and wider with naive attention, which has kernels for them). */
enum llmsim_dtype llmsim_layer_act_dtype(enum llmsim_dtype gemm_dtype);

/* Defaults: serve, bf16, batch 1, seq 4096, flash2, paged decode, tp 1. */
void llmsim_layer_cfg_init(struct llmsim_layer_cfg *c);

#define LLMSIM_LAYER_OPS_MAX 64

struct llmsim_layer_op {
	char name[32];                /* "qkv", "attention", "down.wgrad" */
	int phase;                    /* 0 prefill/forward, 1 decode/backward */
	struct llmsim_op op;
};

/* Fill ops[0..*n) with the kernels of one layer (for MoE models, a MoE
 * layer). Returns 0, or LLMSIM_EINVAL when the configuration gives an
 * empty or overflowing shape, or heads not divisible by tp. */
int llmsim_layer_ops(const struct llmsim_model *m, const struct llmsim_layer_cfg *c,
		     struct llmsim_layer_op ops[LLMSIM_LAYER_OPS_MAX], int *n,
		     struct llmsim_err *err);

#endif
