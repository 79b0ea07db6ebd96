/*
 * report_int.h - what the report gathers before it draws and writes, and
 * the steps between (internal to reports/).
 */
#ifndef LLMSIM_REPORT_INT_H
#define LLMSIM_REPORT_INT_H

#include "gnuplot.h"
#include "layer_ops.h"
#include "measured.h"
#include "plots.h"
#include "report.h"
#include "roofline.h"
#include "../sim/infer/plan_serve.h"

#define REPORT_TOP_MAX 8
#define REPORT_CURVE_MAX 16

struct report_serve_pt {
	int64_t batch;
	struct llmsim_infer_result r;
};


struct report_data {
	const struct llmsim_gpu *gpu;
	const struct llmsim_model *model;
	const struct llmsim_report_cfg *cfg;
	struct llmsim_params params;

	struct llmsim_layer_cfg layer;          /* cfg->layer with the layout's tp */
	struct llmsim_roofline roof;
	struct llmsim_layer_op ops[LLMSIM_LAYER_OPS_MAX];
	struct llmsim_roof_point pts[LLMSIM_LAYER_OPS_MAX];
	int nops;
	struct llmsim_measured meas;

	/* training */
	int have_train;
	char train_note[LLMSIM_ERR_MSG_MAX];    /* why not, when not */
	struct llmsim_train_result chosen;
	int chosen_given;
	struct llmsim_train_result top[REPORT_TOP_MAX];
	int ntop;
	int64_t plan_evaluated, plan_feasible;
	double plan_elapsed_s;

	/* serving */
	int have_serve;
	char serve_note[LLMSIM_ERR_MSG_MAX];
	struct llmsim_infer_cfg icfg;
	struct llmsim_infer_result req;         /* the requested batch */
	struct report_serve_pt curve[REPORT_CURVE_MAX];
	int ncurve;
	struct llmsim_plan_serve_row splan[REPORT_TOP_MAX]; /* the serving plan's best */
	int nsplan;
	int64_t splan_evaluated, splan_feasible;
	char splan_note[LLMSIM_ERR_MSG_MAX];    /* why no plan, when none */
};

/* A picture of the report: file name, caption, and whether it was drawn. */
enum report_pic { PIC_ROOFLINE, PIC_MEMORY, PIC_TIME, PIC_CONFIGS, PIC_SERVE, PIC_COUNT };
struct report_pics {
	char path[PIC_COUNT][4096];     /* in the staging folder; "" when not drawn */
	char name[PIC_COUNT][32];       /* "roofline.png" */
};

/* Gather everything (predictions, measurements, training or serving). */
int report_gather(struct report_data *d, struct llmsim_err *err);
void report_data_release(struct report_data *d);

/* Draw the pictures into the staging folder `stage`. */
int report_draw(const struct report_data *d, const struct llmsim_gnuplot *gp,
		const char *work, const char *stage, struct report_pics *pics,
		struct llmsim_err *err);

/* Write the page to path. */
int report_html(const struct report_data *d, const struct report_pics *pics,
		const char *path, struct llmsim_err *err);

/* A short name of a training configuration: "tp2 pp1 dp4 z1 mb2 sel". */
void report_train_name(const struct llmsim_train_cfg *c, char *buf, size_t size);

/* A short name of a serving configuration: "8x tp1 fp8/bf16 b512". */
void report_serve_name(const struct llmsim_plan_serve_row *r, char *buf, size_t size);

#endif
