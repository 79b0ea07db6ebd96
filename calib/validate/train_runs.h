/*
 * train_runs.h - the published training runs (models/runs/train_*.yaml)
 * and their predictions: each entry a training run from a paper or a
 * framework's performance page, its configuration, and what was measured
 * (iteration time or throughput, MFU, memory per GPU), predicted by
 * `llmsim train`'s code path (llmsim_train_simulate).
 *
 * A run may name how the software stack ran it (stack, precision recipe,
 * recompute modules, activation offload, FSDP, MoE dispatch, TP and CP
 * communication: the names of issue 21). The loader accepts every such
 * field and passes it on (struct llmsim_run_stack_opts); what the simulator
 * does not price yet is priced as the nearest thing it does, and the entry
 * says so (not_modelled).
 */
#ifndef LLMSIM_VALIDATE_TRAIN_RUNS_H
#define LLMSIM_VALIDATE_TRAIN_RUNS_H

#include "sim/train/train.h"

/* The stacks a run may name (core, megatron-2021, megatron-2022, llama3,
 * mcore-te, torchtitan, deepspeed), NULL-terminated. */
extern const char *const llmsim_run_stack_names[];
/* Precision recipes: bf16, fp8-delayed, fp8-current, mxfp8, nvfp4. */
enum llmsim_run_precision { LLMSIM_RUN_PREC_UNSET = -1, LLMSIM_RUN_PREC_BF16,
			    LLMSIM_RUN_PREC_FP8_DELAYED, LLMSIM_RUN_PREC_FP8_CURRENT,
			    LLMSIM_RUN_PREC_MXFP8, LLMSIM_RUN_PREC_NVFP4, LLMSIM_RUN_PREC_COUNT };
extern const char *const llmsim_run_precision_names[];
/* Megatron's --recompute-modules names, one bit each (1 << index). */
extern const char *const llmsim_run_recompute_module_names[];
/* --recompute-method, --fsdp, --moe-dispatch, --tp-overlap, --cp-comm */
extern const char *const llmsim_run_recompute_method_names[]; /* uniform, block */
extern const char *const llmsim_run_fsdp_names[];             /* none, megatron, fsdp2 */
extern const char *const llmsim_run_moe_dispatch_names[];     /* allgather, alltoall, deepep */
extern const char *const llmsim_run_tp_overlap_names[];       /* none, bulk, userbuffers */
extern const char *const llmsim_run_cp_comm_names[];          /* p2p, a2a, a2a+p2p */

/* How the stack ran the step, as the row gives it; -1 where not given
 * (the index into the names above otherwise). */
struct llmsim_run_stack_opts {
	int stack;                   /* llmsim_run_stack_names */
	int precision;               /* enum llmsim_run_precision */
	int recompute_modules;       /* 1 << llmsim_run_recompute_module_names index; -1 */
	int recompute_method;        /* uniform, block */
	int recompute_num_layers;    /* -1: all */
	double offload_activations;  /* 0..1 of the offloadable saved tensors; -1 */
	int fsdp;                    /* none, megatron, fsdp2 */
	int moe_dispatch;            /* allgather, alltoall, deepep */
	int moe_overlap;             /* 0 off, 1 on */
	int tp_overlap;              /* none, bulk, userbuffers */
	int cp_comm;                 /* p2p, a2a, a2a+p2p */
};

struct llmsim_run_entry {
	char name[64];
	char source[384];
	char suite[32];               /* `suite:`, else the name up to its first '-' */
	double target_pct;            /* each row's |error| at most this (0: none) */
	double mean_target_pct;       /* the suite's mean |error| at most this (0: none) */
	int held_back;                /* its suite is held back (struct llmsim_run_suite) */
	char model[64];               /* a model name, or "" when inline */
	struct llmsim_model inline_model;
	int has_inline;
	char gpu[32];
	struct llmsim_train_cfg cfg;
	struct llmsim_run_stack_opts opts; /* as given (cfg holds what is priced) */
	char precision[16];           /* the recipe's name, else the dtype's ("bf16", "fp8") */
	char not_modelled[512];       /* "; "-separated fields priced as something nearer
				       * the simulator ("" when none) */
	double published_step_s;      /* 0: not published (also from tokens/s/GPU) */
	double published_tokens_per_gpu_s; /* tokens/s per GPU as published (0: none) */
	double published_mfu;         /* 0: not published */
	double published_mem_bytes;   /* model states per GPU (0: not published) */
	double published_act_layer_bytes; /* activations of one layer, one micro-batch, per
					   * GPU (0: not published) */
	double published_peak_mem_bytes; /* peak memory per GPU (0: not published) */
	double published_model_flops_per_gpu_s; /* the source's model FLOP/s per GPU (its own
						 * FLOP count; 0: not published) */
};

/* A suite's statistics targets (a file's `suites:` section):
 *   suites:
 *     modern: {median_abs_target_pct: 8, within_pct: 15, within_share_target: 0.9,
 *              bias_target_pct: 5, not_fit_max: 0, held_back: false}
 * Each target is off (0, or -1 for not_fit_max) unless given. */
struct llmsim_run_suite {
	char name[32];
	int held_back;                 /* run only when --only names it */
	double median_abs_target_pct;  /* median |error| of the priced rows at most */
	double within_pct;             /* the band of within_share (default 15) */
	double within_share_target;    /* share of priced rows within within_pct, at least */
	double bias_target_pct;        /* |median signed error| per GPU and per precision */
	int not_fit_max;               /* rows judged not to fit, at most (-1: no target) */
};

/* One runs file: its entries and its suites' targets (malloc'd). */
struct llmsim_run_file {
	struct llmsim_run_entry *runs;
	int n;
	struct llmsim_run_suite *suites;
	int nsuites;
};

/* Load a runs file. On error f is empty and err names file:line:col. */
int llmsim_run_file_load(const char *path, struct llmsim_run_file *f, struct llmsim_err *err);
void llmsim_run_file_release(struct llmsim_run_file *f); /* NULL fields: no-op */

/* Load the runs alone; *out is malloc'd (free()). */
int llmsim_runs_load(const char *path, struct llmsim_run_entry **out, int *n,
		     struct llmsim_err *err);

/* What one run predicts against what it published (0 where not published). */
enum llmsim_run_metric { LLMSIM_RUN_STEP_TIME, LLMSIM_RUN_MFU, LLMSIM_RUN_STATE_MEMORY,
			 LLMSIM_RUN_ACT_LAYER, LLMSIM_RUN_PEAK_MEMORY, LLMSIM_RUN_MODEL_FLOPS,
			 LLMSIM_RUN_METRIC_COUNT };

/* "step_time", "mfu", "model_state_memory", "activations_per_layer",
 * "peak_memory", "model_flops_per_gpu". */
const char *llmsim_run_metric_name(enum llmsim_run_metric m);

struct llmsim_run_outcome {
	struct llmsim_train_result r;         /* the simulated step */
	struct llmsim_gpu gpu;                /* the GPU it ran on */
	double predicted[LLMSIM_RUN_METRIC_COUNT];
	double published[LLMSIM_RUN_METRIC_COUNT]; /* 0: not published */
};

/* Simulate one run (its model, inline or by name, on its GPU) and fill
 * out. Returns 0 (also when it does not fit: out->r.fits), or the error of
 * loading or simulating it. */
int llmsim_run_predict(const struct llmsim_run_entry *e, struct llmsim_run_outcome *out,
		       struct llmsim_err *err);

/* The row's main metric (the first published, in enum order) as a signed
 * step-time error in %: + when llmsim is slower than published. Step time
 * compares directly; MFU as published / predicted - 1. Returns 0 and sets
 * *pct, or -1 when the main metric is not a throughput (memory rows). */
int llmsim_run_time_error(const struct llmsim_run_outcome *o, double *pct);

#endif
