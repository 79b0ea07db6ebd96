/*
 * steps.h - whole steps of a PyTorch program measured on a real GPU
 * against `llmsim infer`'s prediction of the same steps: the same walk of
 * the op graph (llmsim_infer_step) that `infer` runs, for the measured
 * model, in the program's kernels (plain PyTorch eager: struct
 * llmsim_lowering's torch, PyTorch's SDPA attention), with its launches
 * paced by the host (eager runtime), at the clock the power limit allows
 * the repeated step's load.
 *
 * The measurement file (calib/data/torch_steps.json, written by
 * calib/torch/llama_steps.py on the calibration GPU) is JSON, which the
 * YAML loader reads:
 *   {"gpu": "h200", "model": {"hidden":.., "heads":.., "kv_heads":..,
 *    "head_dim":.., "intermediate":.., "vocab":..}, "layers": L,
 *    "includes_lm_head": true, "lm_head_positions": "last",
 *    "fused_qkv": true, "fused_gate_up": true, "prefill_gqa": "native",
 *    "phases": [{"phase": "prefill", "batch": B, "prompt": P,
 *    "time_s": t}, {"phase": "decode", "batch": B, "context": C,
 *    "time_s": t}, ...]}
 * Each phase ran `repeats` times back to back (3 warm-up + 10 timed: 13).
 */
#ifndef LLMSIM_VALIDATE_STEPS_H
#define LLMSIM_VALIDATE_STEPS_H

#include <stdint.h>
#include "base/err.h"
#include "sim/infer/infer.h"

#define LLMSIM_STEPS_MAX 64

/* One measured step. */
struct llmsim_step_meas {
	int decode;                /* 0: prefill of `tokens` per sequence; 1: decode at
				    * `tokens` of context */
	int64_t batch, tokens;
	double measured_s;
};

/* What the program ran, as the file states it. */
struct llmsim_steps_file {
	char gpu[64];
	int hidden, heads, kv_heads, head_dim, intermediate, vocab; /* its model's shape */
	int layers;                /* decoder layers it ran */
	int ends;                  /* embedding, final norm and LM head timed too */
	struct llmsim_lowering lower; /* its kernels */
	int repeats;               /* each phase back to back this many times */
	int n;
	struct llmsim_step_meas step[LLMSIM_STEPS_MAX];
};

/* Load a measurement file. LLMSIM_ENOENT when it is absent; located
 * messages (path:line:col) for malformed content. */
int llmsim_steps_load(const char *path, struct llmsim_steps_file *f, struct llmsim_err *err);

/* The prediction of one step. */
struct llmsim_step_pred {
	struct llmsim_step_meas meas;
	double predicted_s;        /* wall time, launches paced by the host */
	double kernel_s;           /* its kernels' time */
	double load_duty, load_rho; /* the power limit's load it was priced in */
	double err_pct;            /* 100 * (predicted - measured) / measured */
};

/* Predict step s of a program that runs `layers` layers (with the ends
 * when `ends`) `repeats` times back to back, on cfg's model and GPU in
 * cfg's kernels (its runtime, lowering and attention): priced lone, then
 * in the load that run shows (its kernels' share of its wall time, its FLOP
 * rate). 0 or the error of the walk. */
int llmsim_steps_predict_one(const struct llmsim_infer_cfg *cfg, int layers, int ends,
			     int repeats, const struct llmsim_step_meas *s,
			     struct llmsim_step_pred *out, struct llmsim_err *err);

struct llmsim_steps_cmp {
	int n;
	struct llmsim_step_pred pt[LLMSIM_STEPS_MAX];
	double median_abs_err_pct;
};

/* Every step of f for model m on gpu, which must be the ones measured: the
 * file's GPU, and a model of its shape (EINVAL naming what differs). */
int llmsim_steps_compare(const struct llmsim_steps_file *f, const struct llmsim_model *m,
			 const struct llmsim_gpu *gpu, struct llmsim_steps_cmp *out,
			 struct llmsim_err *err);

#endif
