/*
 * plan_serve.h - search every way to serve a model on N GPUs: the split
 * into data-parallel replicas and each replica's tp x pp (x ep), weight and
 * KV data types, and batch size; rank by total output tokens per second
 * under TTFT and TPOT targets.
 */
#ifndef LLMSIM_PLAN_SERVE_H
#define LLMSIM_PLAN_SERVE_H

#include <stdint.h>
#include "infer.h"

struct llmsim_plan_serve_cfg {
	const struct llmsim_model *model;
	const struct llmsim_gpu *gpu;
	int gpus;
	int64_t prompt, output;
	double ttft_slo_s, tpot_slo_s;  /* 0: no target */
	unsigned weight_dtypes;         /* bit per enum llmsim_dtype; 0: all the GPU runs */
	unsigned kv_dtypes;             /* as above; 0: bf16 and fp8 */
	int64_t max_batch;              /* largest batch tried per replica (default 1024) */
};

struct llmsim_plan_serve_row {
	int replicas, tp, pp, ep;
	enum llmsim_dtype weight_dtype, kv_dtype;
	int64_t batch, max_batch;
	double ttft_s, tpot_s, e2e_s;
	double tokens_per_s;            /* all replicas */
	double tokens_per_s_per_gpu;
	double weight_bytes_per_gpu;
	int feasible;                   /* meets both targets */
};

/* Evaluate every configuration. *rows (malloc'd, free it) holds one row
 * per configuration that fits in memory, feasible ones first, each group
 * by throughput, highest first; *evaluated counts every configuration
 * tried (including those that do not fit). */
int llmsim_plan_serve(const struct llmsim_plan_serve_cfg *cfg,
		      struct llmsim_plan_serve_row **rows, int64_t *nrows,
		      int64_t *evaluated, int64_t *feasible, struct llmsim_err *err);

#endif
