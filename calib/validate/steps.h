/*
 * steps.h - the `steps` validation class: whole steps of real programs,
 * measured on a GPU, against what llmsim predicts for the same steps
 * through the very functions its commands run (`llmsim infer`'s
 * llmsim_infer_run; `llmsim train`'s for training rows).
 *
 * The measurements are the calibration store's `steps` table (schema 3,
 * calib/store.h: llmsim_store_steps), written by the PyTorch programs of
 * calib/torch/ and shipped in calib/data/ (calib/shipped.h). Each row
 * names its program ("lean_graph", "hf_sdpa", "hf_sdpa_eager",
 * "torch_train"), its model ("model=llama-3.1-8b layers=32": the model's
 * shape, with the layers the program ran), its phase and shape. A step
 * measured again in a later run of the same program supersedes the
 * earlier measurement (the later run is the one its notes describe, e.g.
 * a Qwen3 MoE re-measured with balanced routing): each shape counts once.
 *
 * A program is predicted by its entry of the table in steps.c
 * (struct llmsim_steps_program): which llmsim engine runs it and what is
 * compared. The inference programs (steps.c):
 *   lean_graph     the torch engine, one CUDA graph a step: wall time
 *   hf_sdpa        the hf engine, eager: the profiler's kernel time (the
 *                  host's gaps are reported beside it: the wall time)
 *   hf_sdpa_eager  the hf engine, eager: wall time (launch-bound decode)
 * Training rows (program torch_train) are predicted in steps_train.c
 * through the function `llmsim train` uses, and carry peak memory too.
 *
 * Errors are 100 (predicted - measured) / measured. A class is a program
 * and phase (and a training step's recompute): its n, median |error|,
 * p80 and p90 of |error|, the median signed error and the worst row. The
 * p80 is what `infer`, `serve` and `plan` print as a whole step's expected
 * error (it covers 80% of the class), written into the GPU's profile
 * (steps_errors:) by `llmsim calib fit`.
 */
#ifndef LLMSIM_VALIDATE_STEPS_H
#define LLMSIM_VALIDATE_STEPS_H

#include <stdint.h>
#include <stdio.h>
#include "base/err.h"
#include "calib/store.h"
#include "hw/gpu.h"
#include "models/model.h"

/* The target: every whole step within this |error|. */
#define LLMSIM_STEPS_TARGET_PCT 10.0

/* One measured step and its prediction. */
struct llmsim_steps_row {
	int64_t step_id;
	struct llmsim_step_rec st;      /* the measurement, as stored */
	char model[64];                 /* model_spec's model (a shipped name) */
	int layers;                     /* model_spec's layers (the model's when absent) */
	enum llmsim_operand_data operand_data; /* what its run's operands held */
	const char *engine;             /* the engine it is priced as (static) */
	const char *basis;              /* what is compared: "wall" or "kernels" (static) */
	double measured_s;              /* the measured time of that basis */
	double predicted_s;             /* llmsim's of the same basis */
	double err_pct;                 /* 100 (predicted - measured) / measured */
	double wall_measured_s, wall_predicted_s;     /* the step's wall time */
	double kernel_measured_s, kernel_predicted_s; /* its kernels' time (NaN: not taken) */
	double sm_clock_measured_hz, sm_clock_predicted_hz;
	double load_duty, load_rho;     /* the load it was priced in */
	/* training: peak allocated memory (NaN when not compared) */
	double mem_measured_bytes, mem_predicted_bytes, mem_err_pct;
	double mem_reserved_measured_bytes, mem_reserved_predicted_bytes;
	int ok;                         /* 0: not predicted; `error` says why */
	char error[LLMSIM_ERR_MSG_MAX];
};

/* What a program's predictor is given: the GPU (with its profile), the
 * model of the row's shape cut to the layers the program ran
 * (row->layers, any context allowed: max_seq 0), and the row with its
 * measurement filled in (measured_s of its basis, the wall and kernel
 * times, the clock, and mem_measured_bytes / mem_reserved_measured_bytes
 * where the program recorded them, else NaN). It fills predicted_s (of
 * row->basis) and what else it knows (wall_predicted_s,
 * kernel_predicted_s, sm_clock_predicted_hz, load_duty, load_rho, and for
 * training mem_predicted_bytes, mem_reserved_predicted_bytes) and returns
 * 0, or an error: the row is then reported as not predicted, with the
 * message, and misses the target. The errors (err_pct, mem_err_pct) are
 * computed by the caller. */
typedef int (*llmsim_steps_predict_fn)(const struct llmsim_gpu *gpu,
				       const struct llmsim_model *m,
				       struct llmsim_steps_row *row, struct llmsim_err *err);

/* A program of the store and how llmsim predicts it. */
struct llmsim_steps_program {
	const char *program;            /* the store's steps.program */
	const char *engine;             /* the llmsim engine it runs as ("torch") */
	const char *basis;              /* what is compared: "wall" (the step's time) or
					 * "kernels" (the profiler's kernel time) */
	const char *about;              /* one line: the program */
	llmsim_steps_predict_fn predict;
};

struct llmsim_infer_cfg;
struct llmsim_infer_result;
/* One measured inference step through llmsim_infer_run on cfg: a prefill
 * of `batch` sequences of `len` tokens in one step (cfg's step budget set
 * to hold it), or a decode step of `batch` sequences at `len` cached
 * tokens (the first decode step after such a prompt). The step is
 * res->prefill or res->decode. */
int llmsim_steps_run_one(struct llmsim_infer_cfg *cfg, int decode, int64_t batch, int64_t len,
			 struct llmsim_infer_result *res, struct llmsim_err *err);

/* The torch_train rows (steps_train.c, `llmsim train`'s function). */
int llmsim_steps_predict_train(const struct llmsim_gpu *gpu, const struct llmsim_model *m,
			       struct llmsim_steps_row *row, struct llmsim_err *err);

/* The programs predicted, NULL-terminated by program. */
extern const struct llmsim_steps_program llmsim_steps_programs[];

/* One class: a program and phase (and recompute), of one quantity. */
struct llmsim_steps_class {
	char program[32], phase[16], recompute[16];
	const char *engine;             /* static */
	const char *quantity;           /* "time" or "memory" (static) */
	int n;                          /* rows predicted */
	int failed;                     /* rows not predicted */
	int within_target;              /* rows within LLMSIM_STEPS_TARGET_PCT */
	double median_abs_pct, p80_abs_pct, p90_abs_pct, median_signed_pct;
	double worst_pct;               /* the signed error of the largest |error| */
	int64_t worst_step_id;
};

#define LLMSIM_STEPS_MAX_CLASSES 32

struct llmsim_steps_report {
	char gpu[64];
	int n;                          /* rows (predicted or not) */
	struct llmsim_steps_row *rows;  /* n rows, in the store's order */
	int superseded;                 /* measurements left out: re-measured later */
	int unknown_program;            /* rows of programs no predictor handles */
	int nclasses;
	struct llmsim_steps_class classes[LLMSIM_STEPS_MAX_CLASSES];
};

/* Predict every step of s measured on gpu's kind (its hw_name) of the
 * programs known (program: only that one; NULL every one), and the
 * classes. Returns 0 (a step that cannot be predicted is a failed row, not
 * an error), LLMSIM_ENOENT when s holds no such step, or a store or memory
 * error. Free with llmsim_steps_report_free. */
int llmsim_steps_validate(struct llmsim_store *s, const struct llmsim_gpu *gpu,
			  const char *program, struct llmsim_steps_report *out,
			  struct llmsim_err *err);
void llmsim_steps_report_free(struct llmsim_steps_report *r);

/* The class of program/phase/quantity in r (recompute "" matches any), or
 * NULL. */
const struct llmsim_steps_class *llmsim_steps_class_find(const struct llmsim_steps_report *r,
							 const char *program, const char *phase,
							 const char *quantity);

/* The training classes' lines of the profile's steps_errors: block
 * (steps_train.c): torch/train (time) and torch/train_memory (peak
 * allocated memory) over every torch_train row of r. */
void llmsim_steps_write_train_profile(FILE *f, const struct llmsim_steps_report *r);

/* Replace the steps_errors: block of the profile at path (appended when it
 * has none) by r's, leaving every other line as it is. */
int llmsim_steps_update_profile(const char *path, const struct llmsim_steps_report *r,
				struct llmsim_err *err);

/* ---- the old comparison: calib/data/torch_steps.json ---- */

#define LLMSIM_STEPS_MAX 64

/* One measured step of the file. */
struct llmsim_step_meas {
	int decode;                /* 0: prefill of `tokens` per sequence; 1: decode at
				    * `tokens` of context */
	int64_t batch, tokens;
	double measured_s;
};

/* calib/data/torch_steps.json (calib/torch/llama_steps.py: plain PyTorch
 * eager with NVTX ranges, 4 layers), JSON, which the YAML loader reads:
 *   {"gpu": "h200", "model": {"hidden":.., "heads":.., "kv_heads":..,
 *    "head_dim":.., "intermediate":.., "vocab":..}, "layers": L,
 *    "includes_lm_head": true, "lm_head_positions": "last",
 *    "fused_qkv": true, "fused_gate_up": true, "prefill_gqa": "native",
 *    "phases": [{"phase": "prefill", "batch": B, "prompt": P,
 *    "time_s": t}, {"phase": "decode", "batch": B, "context": C,
 *    "time_s": t}, ...]}
 * Each phase ran 3 warm-up and 10 timed repeats back to back. */
struct llmsim_steps_file {
	char gpu[64];
	int hidden, heads, kv_heads, head_dim, intermediate, vocab; /* its model's shape */
	int layers;                /* decoder layers it ran */
	int ends;                  /* embedding, final norm and LM head timed too */
	int fused_qkv, fused_gate_up, gqa_expand;
	int n;
	struct llmsim_step_meas step[LLMSIM_STEPS_MAX];
};

/* Load a measurement file. LLMSIM_ENOENT when it is absent; located
 * messages (path:line:col) for malformed content. */
int llmsim_steps_load(const char *path, struct llmsim_steps_file *f, struct llmsim_err *err);

/* The prediction of one step of the file. */
struct llmsim_step_pred {
	struct llmsim_step_meas meas;
	double predicted_s;        /* wall time, launches paced by the host */
	double kernel_s;           /* its kernels' time */
	double load_duty, load_rho; /* the load it was priced in */
	double err_pct;            /* 100 * (predicted - measured) / measured */
};

struct llmsim_steps_cmp {
	int n;
	struct llmsim_step_pred pt[LLMSIM_STEPS_MAX];
	double median_abs_err_pct;
};

/* Every step of f for model m on gpu, which must be the ones measured: the
 * file's GPU, and a model of its shape (EINVAL naming what differs);
 * predicted as `infer --engine torch --runtime eager` prices the program
 * (llmsim_infer_run on m cut to the file's layers; q and k roped as one
 * tensor, as llama_steps.py does). */
int llmsim_steps_compare(const struct llmsim_steps_file *f, const struct llmsim_model *m,
			 const struct llmsim_gpu *gpu, struct llmsim_steps_cmp *out,
			 struct llmsim_err *err);

#endif
