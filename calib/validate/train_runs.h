/*
 * train_runs.h - the published training runs (models/runs/train_published.yaml)
 * and their predictions: each entry a training run from a paper, its
 * configuration, and what the paper measured (iteration time, MFU,
 * model-state memory per GPU), predicted by `llmsim train`'s code path
 * (llmsim_train_simulate).
 */
#ifndef LLMSIM_VALIDATE_TRAIN_RUNS_H
#define LLMSIM_VALIDATE_TRAIN_RUNS_H

#include "sim/train/train.h"

struct llmsim_run_entry {
	char name[64];
	char source[256];
	char suite[32];               /* `suite:`, else the name up to its first '-' */
	double target_pct;            /* each row's |error| at most this (0: none) */
	double mean_target_pct;       /* the suite's mean |error| at most this (0: none) */
	char model[64];               /* a model name, or "" when inline */
	struct llmsim_model inline_model;
	int has_inline;
	char gpu[32];
	struct llmsim_train_cfg cfg;
	double published_step_s;      /* 0: not published */
	double published_mfu;         /* 0: not published */
	double published_mem_bytes;   /* 0: not published */
	double published_act_layer_bytes; /* activations of one layer, one micro-batch, per
					   * GPU (0: not published) */
};

/* Load the suite; *out is malloc'd (free()). */
int llmsim_runs_load(const char *path, struct llmsim_run_entry **out, int *n,
		     struct llmsim_err *err);

/* What one run predicts against what it published (0 where not published). */
enum llmsim_run_metric { LLMSIM_RUN_STEP_TIME, LLMSIM_RUN_MFU, LLMSIM_RUN_STATE_MEMORY,
			 LLMSIM_RUN_ACT_LAYER, LLMSIM_RUN_METRIC_COUNT };

/* "step_time", "mfu", "model_state_memory", "activations_per_layer". */
const char *llmsim_run_metric_name(enum llmsim_run_metric m);

struct llmsim_run_outcome {
	struct llmsim_train_result r;         /* the simulated step */
	struct llmsim_gpu gpu;                /* the GPU it ran on */
	double predicted[LLMSIM_RUN_METRIC_COUNT];
	double published[LLMSIM_RUN_METRIC_COUNT]; /* 0: not published */
};

/* Simulate one run (its model, inline or by name, on its GPU) and fill
 * out. Returns 0, or the error of loading or simulating it. */
int llmsim_run_predict(const struct llmsim_run_entry *e, struct llmsim_run_outcome *out,
		       struct llmsim_err *err);

#endif
