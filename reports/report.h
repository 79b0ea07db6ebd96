/*
 * report.h - `llmsim report`: one self-contained HTML page (index.html,
 * pictures embedded as base64 PNG) plus the PNG files, for a model on a
 * GPU: the roofline with one layer's ops and any calibration measurements,
 * memory per GPU, time per step, the best configurations, and for serving
 * the latency-throughput curve.
 *
 * Reports draw results; they simulate nothing. The caller (cli/
 * report_gather.c) runs the walkers and the calibration scoring and hands
 * their results over in struct llmsim_report_data; this module turns them
 * into pictures (gnuplot) and a page. Nothing is written unless everything
 * succeeds: the pictures and the page are made in DIR.tmp-XXXXXX, checked,
 * and renamed to DIR.
 */
#ifndef LLMSIM_REPORT_H
#define LLMSIM_REPORT_H

#include <stdint.h>
#include "base/err.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "calib/measured.h"
#include "sim/infer/plan_serve.h"
#include "sim/infer/infer.h"
#include "sim/train/train.h"
#include "roofline.h"

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
 * 8 GPUs, top 5, tp=pp=ep=1, paged attention, output 256 tokens (prompt 0:
 * the layer's seq). */
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

#define LLMSIM_REPORT_TOP_MAX 8
#define LLMSIM_REPORT_CURVE_MAX 16

/* One point of the serving curve: a batch and its request's result. */
struct llmsim_report_serve_pt {
	int64_t batch;
	struct llmsim_infer_result r;
};

/* Everything the report shows, gathered by the caller. */
struct llmsim_report_data {
	const struct llmsim_gpu *gpu;
	const struct llmsim_model *model;
	const struct llmsim_report_cfg *cfg;
	struct llmsim_params params;

	/* the roofline: one layer's ops of the layout shown, and the measured
	 * calibration cases of the GPU */
	struct llmsim_layer_cfg layer;          /* cfg->layer with the layout's tp */
	struct llmsim_layer_op ops[LLMSIM_LAYER_OPS_MAX];
	int nops;
	struct llmsim_measured meas;

	/* training */
	int have_train;
	char train_note[LLMSIM_ERR_MSG_MAX];    /* why not, when not */
	struct llmsim_train_result chosen;
	int chosen_given;
	struct llmsim_train_result top[LLMSIM_REPORT_TOP_MAX];
	int ntop;
	int64_t plan_evaluated, plan_feasible;  /* evaluated: priced (memory and time) */
	int64_t plan_pruned;                    /* dropped before pricing */
	double plan_elapsed_s;
	double plan_error_frac;                 /* the rows' expected error */

	/* serving */
	int have_serve;
	char serve_note[LLMSIM_ERR_MSG_MAX];
	struct llmsim_infer_cfg icfg;
	struct llmsim_infer_result req;         /* the requested batch */
	struct llmsim_report_serve_pt curve[LLMSIM_REPORT_CURVE_MAX];
	int ncurve;
	struct llmsim_plan_serve_row splan[LLMSIM_REPORT_TOP_MAX]; /* the serving plan's best */
	int nsplan;
	struct llmsim_plan_serve_row sfront[LLMSIM_REPORT_CURVE_MAX]; /* its Pareto front, by
							 * tokens/s per user, lowest first */
	int nsfront;
	int64_t splan_evaluated, splan_feasible;
	char splan_note[LLMSIM_ERR_MSG_MAX];    /* why no plan, when none */
};

/* Check what can refuse before anything is computed or written: the
 * picture size, gnuplot, the output folder (absent, empty, or --force).
 * Returns 0, or the error llmsim_report_write would give. */
int llmsim_report_check(const struct llmsim_report_cfg *cfg, struct llmsim_err *err);

/* Write the report of d (its cfg, gpu and model set) into d->cfg->out_dir.
 * Returns 0, or an error with one line in err (gnuplot missing:
 * LLMSIM_ENOENT with LLMSIM_GNUPLOT_MISSING; folder refused: LLMSIM_EINVAL;
 * ...), in which case nothing was created or changed. */
int llmsim_report_write(const struct llmsim_report_data *d, struct llmsim_report_result *res,
			struct llmsim_err *err);

/* Short names, distinct for the configurations of one plan: a training
 * configuration ("tp2 pp1 dp4 z1 mb2 sel fa2", offload and LoRA when on)
 * and a serving one ("8 x tp1 fp8/bf16 s256", s: max_num_seqs; "P 2 x tp2 +
 * D 1 x tp4 ..." disaggregated). */
void llmsim_report_train_name(const struct llmsim_train_cfg *c, char *buf, size_t size);
void llmsim_report_serve_name(const struct llmsim_plan_serve_row *r, char *buf, size_t size);

#endif
