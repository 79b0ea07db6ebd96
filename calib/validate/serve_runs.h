/*
 * serve_runs.h - published serving results (models/runs/serve_published.yaml)
 * and their predictions: each entry is one `llmsim serve` (many requests)
 * or `llmsim infer` (one batch) configuration with the figure its source
 * measured: output tokens/s (all GPUs or per GPU) or the KV waste fraction,
 * predicted by those commands' code paths (llmsim_serve_run,
 * llmsim_infer_run).
 */
#ifndef LLMSIM_VALIDATE_SERVE_RUNS_H
#define LLMSIM_VALIDATE_SERVE_RUNS_H

#include "sim/infer/serve.h"

enum llmsim_pub_metric {
	LLMSIM_PUB_TOKENS_PER_S,         /* output tokens/s of all the GPUs */
	LLMSIM_PUB_TOKENS_PER_S_PER_GPU, /* output tokens/s per GPU */
	LLMSIM_PUB_KV_WASTE,             /* time-averaged KV waste fraction */
	LLMSIM_PUB_COUNT
};

struct llmsim_serve_pub {
	char name[64];
	char source[256];
	int infer;                     /* 1: one batch (`infer`); 0: `serve` */
	enum llmsim_engine engine;     /* the engine the source ran (engine:; fused when absent) */
	char model[64], gpu[64];
	int gpus, tp, pp, ep;
	enum llmsim_dtype weight_dtype, kv_dtype;
	enum llmsim_sched sched;
	enum llmsim_kv_alloc kv_alloc;
	int chunked_prefill;
	int64_t max_batch, max_tokens, requests, prompt, output, batch;
	int64_t reserve;               /* contiguous reservation; 0: default */
	double rate_per_s;             /* 0: offline */
	char prompt_dist[64], output_dist[64]; /* "" : fixed lengths */
	enum llmsim_pub_metric metric;
	double published;
};

/* Load the suite; *out is malloc'd (free()). Unknown keys, missing
 * required keys and bad values fail with path:line:col. */
int llmsim_serve_pubs_load(const char *path, struct llmsim_serve_pub **out, int *n,
			   struct llmsim_err *err);

/* Predict one entry's published metric into *predicted. */
int llmsim_serve_pub_predict(const struct llmsim_serve_pub *p, double *predicted,
			     struct llmsim_err *err);

const char *llmsim_pub_metric_name(enum llmsim_pub_metric m);

#endif
