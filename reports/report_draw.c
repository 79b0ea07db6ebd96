/* report_draw.c - the report's pictures from the gathered data. */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/fmt.h"

#define BAR_W LLMSIM_REPORT_BAR_WIDTH
#define BAR_H LLMSIM_REPORT_BAR_HEIGHT

static const char *const pic_names[PIC_COUNT] = {
	[PIC_ROOFLINE] = "roofline.png",
	[PIC_MEMORY] = "memory.png",
	[PIC_TIME] = "step_time.png",
	[PIC_CONFIGS] = "configs.png",
	[PIC_SERVE] = "latency_throughput.png",
};
_Static_assert(sizeof pic_names / sizeof pic_names[0] == PIC_COUNT, "one name per picture");

static int target(struct llmsim_plot_target *t, const struct llmsim_gnuplot *gp,
		  const char *work, const char *stage, struct report_pics *pics,
		  enum report_pic which, int w, int h, const char *title)
{
	snprintf(pics->name[which], sizeof pics->name[which], "%s", pic_names[which]);
	int n = snprintf(pics->path[which], sizeof pics->path[which], "%s/%s", stage,
			 pic_names[which]);
	if (n < 0 || (size_t)n >= sizeof pics->path[which])
		return -1;
	*t = (struct llmsim_plot_target){
		.gp = gp, .work = work, .png = pics->path[which], .width = w, .height = h,
		.title = title,
	};
	t->name = pic_names[which];
	return 0;
}

/* One stacked-bar picture. */
static int bars(const struct llmsim_gnuplot *gp, const char *work, const char *stage,
		struct report_pics *pics, enum report_pic which, const char *title,
		const struct llmsim_plot_bars *b, struct llmsim_err *err)
{
	struct llmsim_plot_target t;
	if (target(&t, gp, work, stage, pics, which, BAR_W, BAR_H, title))
		return llmsim_err_set(err, LLMSIM_EINVAL, "output path too long");
	return llmsim_plot_stacked(&t, b, err);
}

/* The roofs a model's ops use: the tensor roofs of its GEMM and activation
 * types, FP8 (the usual low-precision alternative) and CUDA-core FP32;
 * all bandwidths. */
static void roofs_shown(const struct report_data *d, int *show)
{
	for (int i = 0; i < d->roof.n; i++) {
		const struct llmsim_ceiling *c = &d->roof.ceil[i];
		enum llmsim_dtype dt = d->in->cfg->layer.dtype;
		show[i] = c->kind != LLMSIM_CEIL_TENSOR || c->dtype == dt ||
			  c->dtype == llmsim_graph_act_dtype(dt) || c->dtype == LLMSIM_DT_FP8;
	}
}

static const char *model_name(const struct report_data *d)
{
	return d->in->model->full_name[0] ? d->in->model->full_name : d->in->model->name;
}

static const char *gpu_name(const struct report_data *d)
{
	return d->in->gpu->full_name[0] ? d->in->gpu->full_name : d->in->gpu->name;
}

static int draw_roofline(const struct report_data *d, const struct llmsim_plot_target *t,
			 struct llmsim_err *err)
{
	static double x[2][LLMSIM_LAYER_OPS_MAX], y[2][LLMSIM_LAYER_OPS_MAX];
	static const char *lab[2][LLMSIM_LAYER_OPS_MAX];
	static double mx[LLMSIM_MEASURED_MAX], my[LLMSIM_MEASURED_MAX], py[LLMSIM_MEASURED_MAX];
	int n[2] = {0, 0}, show[LLMSIM_ROOF_MAX];
	enum llmsim_workload w = d->in->cfg->layer.workload;
	char t0[64], t1[64], tm[64];

	for (int i = 0; i < d->in->nops; i++) {
		int ph = d->in->ops[i].phase;
		x[ph][n[ph]] = d->pts[i].pred.intensity_flops_per_byte;
		y[ph][n[ph]] = d->pts[i].achieved_flops_per_s;
		lab[ph][n[ph]++] = d->in->ops[i].name;
	}
	for (int i = 0; i < d->in->meas.n; i++) {
		mx[i] = d->in->meas.pts[i].intensity_flops_per_byte;
		my[i] = d->in->meas.pts[i].measured_flops_per_s;
		py[i] = d->in->meas.pts[i].predicted_flops_per_s;
	}
	snprintf(t0, sizeof t0, "%s ops (predicted)", llmsim_phase_name(w, 0));
	snprintf(t1, sizeof t1, "%s ops (predicted)", llmsim_phase_name(w, 1));
	snprintf(tm, sizeof tm, "calibration: measured (%d kernels)", d->in->meas.n);
	struct llmsim_plot_series s[4] = {
		{t0, LLMSIM_MARK_PREFILL, x[0], y[0], lab[0], n[0]},
		{t1, LLMSIM_MARK_DECODE, x[1], y[1], lab[1], n[1]},
		{tm, LLMSIM_MARK_MEASURED, mx, my, NULL, d->in->meas.n},
		{"calibration: predicted", LLMSIM_MARK_PREDICTED, mx, py, NULL, d->in->meas.n},
	};
	roofs_shown(d, show);
	return llmsim_plot_roofline(t, &d->roof, show, s, d->in->meas.n ? 4 : 2, err);
}

static int draw_train(const struct report_data *d, const struct llmsim_gnuplot *gp,
		      const char *work, const char *stage, struct report_pics *pics,
		      struct llmsim_err *err)
{
	static char names[LLMSIM_REPORT_TOP_MAX + 1][64];
	const char *bn[LLMSIM_REPORT_TOP_MAX + 1];
	const struct llmsim_train_result *r[LLMSIM_REPORT_TOP_MAX + 1];
	double mem[(LLMSIM_REPORT_TOP_MAX + 1) * 5], tim[(LLMSIM_REPORT_TOP_MAX + 1) * 5];
	double tps[LLMSIM_REPORT_TOP_MAX + 1];
	int nb = 0, rc;
	char title[400];

	/* The chosen configuration first, then the plan's best (no repeats). */
	if (d->in->chosen_given)
		r[nb++] = &d->in->chosen;
	for (int i = 0; i < d->in->ntop; i++) {
		char a[64], b[64];
		llmsim_report_train_name(&d->in->top[i].cfg, a, sizeof a);
		int dup = 0;
		for (int j = 0; j < nb; j++) {
			llmsim_report_train_name(&r[j]->cfg, b, sizeof b);
			dup |= !strcmp(a, b);
		}
		if (!dup)
			r[nb++] = &d->in->top[i];
	}
	if (!nb)
		return 0;
	for (int i = 0; i < nb; i++) {
		llmsim_report_train_name(&r[i]->cfg, names[i], sizeof names[i]);
		if (i == 0 && d->in->chosen_given)
			strncat(names[i], " (given)", sizeof names[i] - strlen(names[i]) - 1);
		bn[i] = names[i];
		const struct llmsim_train_mem *m = &r[i]->mem;
		double *v = &mem[i * 5];
		v[0] = m->weights_bytes, v[1] = m->grads_bytes, v[2] = m->optimizer_bytes;
		v[3] = m->activations_bytes, v[4] = m->other_bytes;
		const struct llmsim_train_time *tt = &r[i]->time;
		double *u = &tim[i * 5];
		u[0] = tt->compute_s, u[1] = tt->comm_exposed_s, u[2] = tt->bubble_s;
		u[3] = tt->optimizer_s, u[4] = tt->offload_s; /* together: the step */
		tps[i] = r[i]->tokens_per_s;
	}
	static const char *const mparts[] = {"weights", "gradients", "optimizer", "activations",
					     "other (buffers, fragmentation)"};
	static const char *const tparts[] = {"compute", "exposed communication",
					     "pipeline bubble", "optimizer step",
					     "offload (PCIe and CPU Adam not hidden)"};
	snprintf(title, sizeof title, "Memory per GPU - %s, %d GPUs", model_name(d),
		 r[0]->cfg.gpus);
	char cap[64], v[LLMSIM_FMT_MAX];
	snprintf(cap, sizeof cap, "HBM capacity %s", llmsim_fmt_bytes(v, d->in->gpu->hbm_bytes));
	struct llmsim_plot_bars mb = {bn, nb, mparts, 5, mem, "B", "Memory per GPU",
				      d->in->gpu->hbm_bytes, cap};
	rc = bars(gp, work, stage, pics, PIC_MEMORY, title, &mb, err);
	if (rc)
		return rc;
	snprintf(title, sizeof title, "Time per step - global batch %lld x %lld tokens",
		 (long long)r[0]->cfg.global_batch, (long long)r[0]->cfg.seq);
	struct llmsim_plot_bars tb = {bn, nb, tparts, 5, tim, "s", "Time per step", 0, NULL};
	rc = bars(gp, work, stage, pics, PIC_TIME, title, &tb, err);
	if (rc)
		return rc;
	static const char *const cparts[] = {"training throughput"};
	snprintf(title, sizeof title, "Configurations compared - throughput (higher is better)");
	struct llmsim_plot_bars cb = {bn, nb, cparts, 1, tps, "tokens/s", "Throughput", 0, NULL};
	rc = bars(gp, work, stage, pics, PIC_CONFIGS, title, &cb, err);
	if (rc)
		return rc;
	return 0;
}

/* What bounds a kernel, in words for a legend. */
static const char *bound_words(enum llmsim_bound b)
{
	static const char *const words[LLMSIM_BOUND_COUNT] = {
		[LLMSIM_BOUND_TENSOR] = "tensor-core math",
		[LLMSIM_BOUND_VECTOR] = "CUDA-core math",
		[LLMSIM_BOUND_HBM] = "HBM bandwidth",
		[LLMSIM_BOUND_L2] = "L2 bandwidth",
		[LLMSIM_BOUND_SMEM] = "shared-memory bandwidth",
		[LLMSIM_BOUND_LATENCY] = "memory latency",
		[LLMSIM_BOUND_LAUNCH] = "launch overhead",
		[LLMSIM_BOUND_LINK] = "interconnect",
	};
	return (unsigned)b < LLMSIM_BOUND_COUNT && words[b] ? words[b] : "other";
}

static int draw_serve(const struct report_data *d, const struct llmsim_gnuplot *gp,
		      const char *work, const char *stage, struct report_pics *pics,
		      struct llmsim_err *err)
{
	static char names[LLMSIM_REPORT_CURVE_MAX][32];
	const char *bn[LLMSIM_REPORT_CURVE_MAX];
	const char *lab[LLMSIM_REPORT_CURVE_MAX];
	double mem[LLMSIM_REPORT_CURVE_MAX * 3], x[LLMSIM_REPORT_CURVE_MAX], y[LLMSIM_REPORT_CURVE_MAX];
	double tim[LLMSIM_REPORT_CURVE_MAX * (LLMSIM_BOUND_COUNT + 1)];
	const char *tparts[LLMSIM_BOUND_COUNT + 1];
	int nb = 0, rc, cols[LLMSIM_BOUND_COUNT], ncols = 0;
	struct llmsim_plot_target t;
	char title[400];

	/* Bars for a few batch sizes: 1, 8, 64, 512 and the largest that fits. */
	const struct llmsim_report_serve_pt *sel[LLMSIM_REPORT_CURVE_MAX];
	for (int i = 0; i < d->in->ncurve; i++) {
		int64_t b = d->in->curve[i].batch;
		if (b == 1 || b == 8 || b == 64 || b == 512 || i == d->in->ncurve - 1)
			sel[nb++] = &d->in->curve[i];
	}
	for (int k = 0; k < LLMSIM_BOUND_COUNT; k++) {
		int used = 0;
		for (int i = 0; i < nb; i++)
			used |= sel[i]->r.decode.cost.time_by_bound_s[k] > 0;
		if (used) {
			cols[ncols] = k;
			tparts[ncols++] = bound_words((enum llmsim_bound)k);
		}
	}
	tparts[ncols] = "gaps between kernels";
	for (int i = 0; i < nb; i++) {
		const struct llmsim_infer_result *r = &sel[i]->r;
		snprintf(names[i], sizeof names[i], "batch %lld", (long long)sel[i]->batch);
		bn[i] = names[i];
		mem[i * 3] = r->mem.weight_bytes;
		mem[i * 3 + 1] = r->mem.activation_bytes;
		mem[i * 3 + 2] = r->kv_bytes;
		double *u = &tim[i * (ncols + 1)], kern = 0;
		for (int k = 0; k < ncols; k++)
			kern += u[k] = r->decode.cost.time_by_bound_s[cols[k]];
		u[ncols] = fmax(0, r->decode.cost.time_s - kern);
	}
	static const char *const mparts[] = {"weights", "activations + workspace", "KV cache"};
	/* Memory and decode time need the curve (the requested batch fits). */
	if (nb) {
		snprintf(title, sizeof title,
			 "Memory per GPU - %s, prompt %lld + output %lld tokens", model_name(d),
			 (long long)d->in->cfg->prompt, (long long)d->in->cfg->output);
		char cap[64], v[LLMSIM_FMT_MAX];
		snprintf(cap, sizeof cap, "HBM capacity %s",
			 llmsim_fmt_bytes(v, d->in->gpu->hbm_bytes));
		struct llmsim_plot_bars mb = {bn, nb, mparts, 3, mem, "B", "Memory per GPU",
					      d->in->gpu->hbm_bytes, cap};
		rc = bars(gp, work, stage, pics, PIC_MEMORY, title, &mb, err);
		if (rc)
			return rc;
		snprintf(title, sizeof title, "Decode step time by bound (mean step, TPOT)");
		struct llmsim_plot_bars tb = {bn, nb, tparts, ncols + 1, tim, "s",
					      "Time per decode step", 0, NULL};
		rc = bars(gp, work, stage, pics, PIC_TIME, title, &tb, err);
		if (rc)
			return rc;
	}
	if (d->in->nsfront) { /* the serving plan's Pareto front */
		double fx[LLMSIM_REPORT_CURVE_MAX], fy[LLMSIM_REPORT_CURVE_MAX];
		static char flab[LLMSIM_REPORT_CURVE_MAX][48];
		const char *fl[LLMSIM_REPORT_CURVE_MAX];
		for (int i = 0; i < d->in->nsfront; i++) {
			const struct llmsim_plan_serve_row *w = &d->in->sfront[i];
			llmsim_report_serve_name(w, flab[i], sizeof flab[i]);
			fl[i] = flab[i];
			fx[i] = w->tokens_per_s_per_user;
			fy[i] = w->tokens_per_s_per_gpu;
		}
		snprintf(title, sizeof title, "Serving plan on %d GPUs - Pareto front",
			 d->in->cfg->plan_gpus);
		struct llmsim_plot_curve fc = {fx, fy, fl, d->in->nsfront, "Tokens per second per user",
					       "tokens/s", "Tokens per second per GPU", "tokens/s",
					       "configurations on the front"};
		if (target(&t, gp, work, stage, pics, PIC_CONFIGS, BAR_W, BAR_H, title))
			return llmsim_err_set(err, LLMSIM_EINVAL, "output path too long");
		rc = llmsim_plot_curve(&t, &fc, err);
		if (rc)
			return rc;
	}
	if (!d->in->ncurve)
		return 0;
	for (int i = 0; i < d->in->ncurve; i++) {
		snprintf(names[i], sizeof names[i], "%lld", (long long)d->in->curve[i].batch);
		lab[i] = names[i];
		x[i] = d->in->curve[i].r.tokens_per_s;
		y[i] = d->in->curve[i].r.tpot_s;
	}
	snprintf(title, sizeof title, "Latency against throughput - %s on %s", model_name(d),
		 gpu_name(d));
	struct llmsim_plot_curve c = {x, y, lab, d->in->ncurve, "Throughput", "output tokens/s",
				      "Time per output token", "s",
				      "batch size (label) from 1, doubling"};
	if (target(&t, gp, work, stage, pics, PIC_SERVE, BAR_W, BAR_H, title))
		return llmsim_err_set(err, LLMSIM_EINVAL, "output path too long");
	return llmsim_plot_curve(&t, &c, err);
}

int report_draw(const struct report_data *d, const struct llmsim_gnuplot *gp,
		const char *work, const char *stage, struct report_pics *pics,
		struct llmsim_err *err)
{
	struct llmsim_plot_target t;
	char title[400];
	int rc;
	memset(pics, 0, sizeof *pics);
	char tp[24] = "";
	if (d->in->layer.tp > 1)
		snprintf(tp, sizeof tp, ", 1 of tp %d", d->in->layer.tp);
	snprintf(title, sizeof title, "Roofline - %s, %s %s, batch %lld, seq %lld%s",
		 gpu_name(d), model_name(d), llmsim_dtype_name(d->in->layer.dtype),
		 (long long)d->in->layer.batch, (long long)d->in->layer.seq, tp);
	if (target(&t, gp, work, stage, pics, PIC_ROOFLINE, d->in->cfg->width, d->in->cfg->height, title))
		return llmsim_err_set(err, LLMSIM_EINVAL, "output path too long");
	rc = draw_roofline(d, &t, err);
	if (rc)
		return rc;
	if (d->in->have_train)
		return draw_train(d, gp, work, stage, pics, err);
	if (d->in->cfg->layer.workload == LLMSIM_WORKLOAD_SERVE)
		return draw_serve(d, gp, work, stage, pics, err);
	return 0;
}
