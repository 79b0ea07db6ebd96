/*
 * steps.h - compare the inference model's per-layer step predictions
 * with PyTorch measurements of a few Llama-shaped layers on a real GPU
 * (calib/data/torch_steps.json, written by the lead's device run):
 *   {"gpu": "h200", "model": {"hidden":.., "heads":.., "kv_heads":..,
 *    "head_dim":.., "intermediate":.., "vocab":..}, "layers": L,
 *    "dtype": "bf16", "phases": [{"phase": "prefill", "batch": B,
 *    "prompt": P, "time_s": t}, {"phase": "decode", "batch": B,
 *    "context": C, "time_s": t}, ...]}
 * The layers are priced without embedding or LM head, eager runtime
 * (PyTorch launches each kernel), FlashAttention-2 prefill and decode over
 * a contiguous cache (what SDPA runs).
 */
#ifndef LLMSIM_VALIDATE_STEPS_H
#define LLMSIM_VALIDATE_STEPS_H

#include <stdint.h>
#include "../../base/err.h"

#define LLMSIM_TORCH_MAX_PHASES 64

struct llmsim_torch_point {
	int decode;                /* 0: prefill of `tokens` per sequence; 1: decode at context */
	int64_t batch, tokens;     /* tokens: prompt (prefill) or context (decode) */
	double measured_s, predicted_s;
	double err_pct;            /* 100 * (predicted - measured) / measured */
};

struct llmsim_torch_cmp {
	char gpu[64];
	int layers;
	int n;
	struct llmsim_torch_point pt[LLMSIM_TORCH_MAX_PHASES];
	double median_abs_err_pct;
};

/* Load the file, price every phase, fill out. LLMSIM_ENOENT when the file
 * is absent; located messages for malformed content. */
int llmsim_torch_compare(const char *path, struct llmsim_torch_cmp *out, struct llmsim_err *err);

#endif
