/*
 * plots.h - the report's pictures, drawn by gnuplot: a roofline with ops
 * placed on it, stacked bars (memory per GPU, time per step), and an x-y
 * curve (serving latency against throughput).
 *
 * Each function writes NAME.dat and NAME.gp into the work folder, runs
 * gnuplot, and checks the PNG it wrote (llmsim_gnuplot_run). Values are in
 * SI base units; the axes print them with SI prefixes.
 */
#ifndef LLMSIM_REPORT_PLOTS_H
#define LLMSIM_REPORT_PLOTS_H

#include "base/err.h"
#include "gnuplot.h"
#include "roofline.h"

/* Where a picture goes and how big it is. */
struct llmsim_plot_target {
	const struct llmsim_gnuplot *gp;
	const char *work;       /* folder for the data, script and log */
	const char *name;       /* base name of the data and script files */
	const char *png;        /* output picture */
	int width, height;      /* pixels */
	const char *title;
};

enum llmsim_mark { LLMSIM_MARK_PREFILL, LLMSIM_MARK_DECODE, LLMSIM_MARK_MEASURED,
		   LLMSIM_MARK_PREDICTED, LLMSIM_MARK_COUNT };

/* A set of points on the roofline, drawn with one mark and one legend entry. */
struct llmsim_plot_series {
	const char *title;                /* legend */
	enum llmsim_mark mark;
	const double *x, *y;              /* intensity [FLOP/byte], rate [FLOP/s] */
	const char *const *labels;        /* per point, or NULL for no labels */
	int n;
};

/* The roofline: the ceilings r->ceil[i] with show[i] set (NULL: all),
 * memory ceilings as diagonals, compute roofs as horizontal lines from
 * their HBM ridge point, then the series. Log-log axes. */
int llmsim_plot_roofline(const struct llmsim_plot_target *t, const struct llmsim_roofline *r,
			 const int *show, const struct llmsim_plot_series *series,
			 int nseries, struct llmsim_err *err);

/* Stacked bars: nbars bars named bar_names, each stacked from nparts
 * parts named part_names; v[bar * nparts + part] in SI units of `unit`
 * ("B", "s"). limit > 0 draws a dashed horizontal line labelled
 * limit_label (e.g. the HBM capacity). */
struct llmsim_plot_bars {
	const char *const *bar_names;
	int nbars;
	const char *const *part_names;
	int nparts;
	const double *v;
	const char *unit;
	const char *ylabel;
	double limit;
	const char *limit_label;
};
int llmsim_plot_stacked(const struct llmsim_plot_target *t, const struct llmsim_plot_bars *b,
			struct llmsim_err *err);

/* One curve through (x[i], y[i]), each point labelled, log x axis. */
struct llmsim_plot_curve {
	const double *x, *y;
	const char *const *labels;
	int n;
	const char *xlabel, *xunit;   /* "Throughput", "tokens/s" */
	const char *ylabel, *yunit;   /* "Time per output token", "s" */
	const char *title;            /* legend */
};
int llmsim_plot_curve(const struct llmsim_plot_target *t, const struct llmsim_plot_curve *c,
		      struct llmsim_err *err);

#endif
