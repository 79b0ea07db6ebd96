/*
 * report.h - `llmsim report`: one self-contained HTML page (index.html,
 * pictures embedded as base64 PNG) plus the PNG files, for a model on a
 * GPU: the roofline with one layer's ops and any calibration measurements,
 * memory per GPU, time per step, the best configurations, and for serving
 * the latency-throughput curve.
 *
 * Nothing is written unless everything succeeds: the pictures (drawn by
 * gnuplot) and the page are made in DIR.tmp-XXXXXX, checked, and renamed
 * to DIR. Reports read results (llmsim_predict, the training and inference
 * libraries, the calibration store) and compute no cost of their own.
 */
#ifndef LLMSIM_REPORT_H
#define LLMSIM_REPORT_H

#include <stdint.h>
#include "../base/err.h"
#include "../hw/gpu.h"
#include "../models/model.h"
#include "../sim/infer/infer.h"
#include "../sim/train/train.h"
#include "layer_ops.h"

struct llmsim_report_cfg {
	const char *out_dir;
	int force;                      /* replace a non-empty out_dir */
	struct llmsim_layer_cfg layer;  /* workload, dtype, batch, seq of the roofline ops */
	const char *db_path;            /* calibration database; NULL: shipped dumps */
	int width, height;              /* roofline picture, pixels */

	/* training: the configuration shown (else the plan's best) */
	struct llmsim_train_cfg train;
	int train_given;                /* a parallel layout was given */
	int plan_gpus;                  /* GPUs the training or serving plan searches */
	int top;                        /* configurations compared (<= 8) */

	/* serving */
	int tp, pp, ep;
	enum llmsim_dtype weight_dtype, kv_dtype;
	enum llmsim_attn_choice attn;
	int64_t prompt, output;         /* request shape */
};

/* Defaults: serve, bf16, batch 1, seq 4096, 1280x800 pictures, plan over
 * 8 GPUs, top 5, tp=pp=ep=1, paged attention, output 256 tokens. */
void llmsim_report_cfg_init(struct llmsim_report_cfg *c);

/* Size of every picture but the roofline (which cfg->width/height set). */
#define LLMSIM_REPORT_BAR_WIDTH 1100
#define LLMSIM_REPORT_BAR_HEIGHT 560

#define LLMSIM_REPORT_MAX_FILES 8

/* What was written, and the figures --json prints. */
struct llmsim_report_result {
	char dir[4000];
	char files[LLMSIM_REPORT_MAX_FILES][64];   /* names inside dir, index.html first */
	int nfiles;
	int ops;                        /* ops on the roofline */
	double phase_time_s[2];         /* one layer: prefill/forward, decode/backward */
	double phase_flops[2];
	int measured_points;            /* calibration cases drawn */
	/* training (NAN when not computed) */
	double step_s, tokens_per_s, mfu, mem_per_gpu_bytes;
	char train_config[96];
	/* serving */
	double ttft_s, tpot_s, serve_tokens_per_s;
	int64_t max_batch;
	char unavailable[256];          /* sections left out, "" if none */
};

/* Write the report for model on gpu into cfg->out_dir. Returns 0, or an
 * error with one line in err (gnuplot missing: LLMSIM_ENOENT with
 * LLMSIM_GNUPLOT_MISSING; folder refused: LLMSIM_EINVAL; ...), in which
 * case nothing was created or changed. */
int llmsim_report_write(const struct llmsim_gpu *gpu, const struct llmsim_model *model,
			const struct llmsim_report_cfg *cfg, struct llmsim_report_result *res,
			struct llmsim_err *err);

#endif
