/* plots.c - gnuplot scripts for the roofline, stacked bars and curves. */
#include "plots.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/fmt.h"
#include "plot_labels.h"

/* Colour-blind-safe palette (Okabe-Ito, then Tableau) for parts and roofs. */
static const char *const palette[] = {
	"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#555555",
};
#define NPALETTE ((int)(sizeof palette / sizeof palette[0]))

static const struct {
	int pt;
	double ps;
	const char *color;      /* gnuplot '#AARRGGBB': AA is transparency */
	int outline;            /* open point type drawn over it in black, or 0 */
} marks[] = {
	/* The layer's ops: large, outlined, on top of everything. */
	[LLMSIM_MARK_PREFILL] = {7, 1.5, "#0072B2", 6},    /* filled circle */
	[LLMSIM_MARK_DECODE] = {9, 1.7, "#D55E00", 8},     /* filled triangle */
	/* Calibration kernels can number hundreds: small and translucent. */
	[LLMSIM_MARK_MEASURED] = {5, 0.8, "#607B3294", 0}, /* filled square, purple */
	[LLMSIM_MARK_PREDICTED] = {4, 0.8, "#60707070", 0},/* open square, grey */
};
_Static_assert(sizeof marks / sizeof marks[0] == LLMSIM_MARK_COUNT, "one style per mark");

struct files {
	char dat[4096], gp[4096], log[4096];
	char qdat[8200];        /* dat as a gnuplot string */
	FILE *d, *g;
};

static int open_files(const struct llmsim_plot_target *t, struct files *fl,
		      struct llmsim_err *err)
{
	snprintf(fl->dat, sizeof fl->dat, "%s/%s.dat", t->work, t->name);
	snprintf(fl->gp, sizeof fl->gp, "%s/%s.gp", t->work, t->name);
	snprintf(fl->log, sizeof fl->log, "%s/%s.log", t->work, t->name);
	size_t k = 0;
	fl->qdat[k++] = '\'';
	for (const char *c = fl->dat; *c && k + 3 < sizeof fl->qdat; c++) {
		if (*c == '\'')
			fl->qdat[k++] = '\'';
		fl->qdat[k++] = *c;
	}
	fl->qdat[k++] = '\'';
	fl->qdat[k] = 0;
	fl->d = fopen(fl->dat, "w");
	fl->g = fl->d ? fopen(fl->gp, "w") : NULL;
	if (!fl->g) {
		int e = errno;
		if (fl->d)
			fclose(fl->d);
		return llmsim_err_set(err, LLMSIM_EIO, "cannot write in '%s': %s", t->work,
				      strerror(e));
	}
	return 0;
}

/* Close both files and run gnuplot on the script. */
static int finish(const struct llmsim_plot_target *t, struct files *fl, struct llmsim_err *err)
{
	int bad = ferror(fl->d) | ferror(fl->g);
	bad |= fclose(fl->d) != 0;
	bad |= fclose(fl->g) != 0;
	if (bad)
		return llmsim_err_set(err, LLMSIM_EIO, "cannot write the plot files in '%s'",
				      t->work);
	return llmsim_gnuplot_run(t->gp, fl->gp, fl->log, t->png, t->width, t->height, err);
}

/* Terminal, output, title and the look every picture shares. */
static void preamble(const struct llmsim_plot_target *t, FILE *g)
{
	llmsim_gnuplot_terminal(t->gp, g, t->width, t->height);
	fputs("set output ", g);
	llmsim_gnuplot_quote(g, t->png);
	fputs("\nset encoding utf8\n", g);
	if (t->title) {
		fputs("set title ", g);
		llmsim_gnuplot_quote(g, t->title);
		fputs(" font ',14' noenhanced\n", g);
	}
	fputs("set border 3 lw 1.2 lc rgb '#333333'\n"
	      "set tics nomirror out\n"
	      "set grid xtics ytics lw 1 lc rgb '#e3e3e3' dt 1\n"
	      "set key outside right top vertical Left reverse noenhanced "
	      "spacing 1.3 samplen 2.5 box lc rgb '#bbbbbb'\n"
	      "set datafile missing '?'\n", g);
}

/* A quoted label for a data file (double quotes dropped from the text). */
static void dat_label(FILE *d, const char *s)
{
	fputc('"', d);
	for (; s && *s; s++)
		if (*s != '"' && *s != '\n')
			fputc(*s, d);
	fputc('"', d);
}

/* SI prefix for values up to vmax: scale (1e9 for G) and its letter. */
static void si_scale(double vmax, double *scale, const char **prefix)
{
	static const char *const pre[] = {"n", "µ", "m", "", "k", "M", "G", "T", "P"};
	int e = vmax > 0 ? (int)floor(log10(vmax) / 3) : 0;
	if (e < -3)
		e = -3;
	if (e > 5)
		e = 5;
	*scale = pow(1000.0, e);
	*prefix = pre[e + 3];
}

static double decade_floor(double v)
{
	return pow(10, floor(log10(v)));
}

static double decade_ceil(double v)
{
	return pow(10, ceil(log10(v)));
}

/* Small boxes along the ceilings as drawn, every few pixels. */
static int line_boxes(const struct llmsim_roofline *r, const int *show, double top,
		      const struct plot_box *area, double xlo, double xhi, double ylo, double yhi,
		      struct plot_box *out, int max)
{
	int n = 0;
	double lx = log10(xhi / xlo), ly = log10(yhi / ylo);
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_ceiling *c = &r->ceil[i];
		double x0, y0, x1, y1;
		if (show && !show[i])
			continue;
		if (c->bytes_per_s > 0) {
			x0 = xlo;
			x1 = fmin(top / c->bytes_per_s, xhi);
			y0 = x0 * c->bytes_per_s;
			y1 = x1 * c->bytes_per_s;
		} else {
			x0 = c->ridge_flops_per_byte;
			x1 = xhi;
			y0 = y1 = c->flops_per_s;
		}
		double px0 = area->x0 + log10(x0 / xlo) / lx * (area->x1 - area->x0);
		double px1 = area->x0 + log10(x1 / xlo) / lx * (area->x1 - area->x0);
		double py0 = area->y0 + log10(y0 / ylo) / ly * (area->y1 - area->y0);
		double py1 = area->y0 + log10(y1 / ylo) / ly * (area->y1 - area->y0);
		int steps = (int)(hypot(px1 - px0, py1 - py0) / 5) + 1;
		for (int k = 0; k <= steps && n < max; k++) {
			double x = px0 + (px1 - px0) * k / steps, y = py0 + (py1 - py0) * k / steps;
			out[n++] = (struct plot_box){x - 2, y - 2, x + 2, y + 2};
		}
	}
	return n;
}

static void place_series_labels(FILE *g, const struct llmsim_plot_target *t,
				const struct llmsim_plot_series *series, int nseries,
				const struct plot_box *area, double xlo, double xhi, double ylo,
				double yhi, const struct plot_box *lines, int nlines)
{
	int n = 0;
	for (int s = 0; s < nseries; s++)
		n += series[s].labels ? series[s].n : 0;
	struct plot_label *p = calloc((size_t)n + 1, sizeof *p);
	const char **text = calloc((size_t)n + 1, sizeof *text);
	const char **color = calloc((size_t)n + 1, sizeof *color);
	if (!p || !text || !color)
		goto out;
	n = 0;
	double lx = log10(xhi / xlo), ly = log10(yhi / ylo);
	for (int s = 0; s < nseries; s++) {
		const struct llmsim_plot_series *se = &series[s];
		for (int i = 0; se->labels && i < se->n; i++) {
			double x = se->x[i], y = se->y[i];
			if (!(x > 0 && y > 0 && isfinite(x) && isfinite(y)) || !se->labels[i][0])
				continue;
			p[n].px = area->x0 + log10(x / xlo) / lx * (area->x1 - area->x0);
			p[n].py = area->y0 + log10(y / ylo) / ly * (area->y1 - area->y0);
			text[n] = se->labels[i];
			color[n++] = marks[se->mark].color;
		}
	}
	plot_place_labels(p, text, n, area, lines, nlines);
	/* Labels on a white ground stay readable over calibration points. */
	fputs("set style textbox opaque fillcolor rgb 'white' noborder margins 0.5, 0.5\n", g);
	for (int i = 0; i < n; i++) {
		double sx = p[i].lx / t->width, sy = p[i].ly / t->height;
		fputs("set label ", g);
		llmsim_gnuplot_quote(g, text[i]);
		fprintf(g, " at screen %.5f, screen %.5f left font ',8' tc rgb '%s' noenhanced "
			   "front boxed\n", sx, sy, color[i]);
		if (p[i].leader) {
			/* From the point to the near end of the label. */
			double ex = p[i].lx > p[i].px ? p[i].lx - 2
						     : p[i].lx + strlen(text[i]) * PLOT_LABEL_CHAR_PX + 2;
			fprintf(g, "set arrow from screen %.5f, screen %.5f to screen %.5f, "
				   "screen %.5f nohead lw 0.7 lc rgb '#9a9a9a' back\n",
				p[i].px / t->width, p[i].py / t->height, ex / t->width, sy);
		}
	}
out:
	free(p);
	free(text);
	free(color);
}

int llmsim_plot_roofline(const struct llmsim_plot_target *t, const struct llmsim_roofline *r,
			 const int *show, const struct llmsim_plot_series *series,
			 int nseries, struct llmsim_err *err)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, top = 0;
	for (int i = 0; i < r->n; i++) {
		if (show && !show[i])
			continue;
		if (r->ceil[i].flops_per_s > 0) {
			top = fmax(top, r->ceil[i].flops_per_s);
			xhi = fmax(xhi, r->ceil[i].ridge_flops_per_byte);
		}
	}
	for (int s = 0; s < nseries; s++)
		for (int i = 0; i < series[s].n; i++) {
			double x = series[s].x[i], y = series[s].y[i];
			if (!(x > 0 && y > 0 && isfinite(x) && isfinite(y)))
				continue;
			xlo = fmin(xlo, x);
			xhi = fmax(xhi, x);
			ylo = fmin(ylo, y);
			top = fmax(top, y);
		}
	if (!(top > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "nothing to draw on the roofline");
	if (!isfinite(xlo))
		xlo = 0.1;
	xlo = decade_floor(xlo / 1.5);
	xhi = decade_ceil(xhi * 3);
	ylo = fmin(ylo, xlo * r->hbm_bytes_per_s);
	ylo = decade_floor(ylo / 1.5);
	double yhi = decade_ceil(top * 2.5);

	struct files fl;
	int rc = open_files(t, &fl, err);
	if (rc)
		return rc;
	FILE *d = fl.d, *g = fl.g;
	preamble(t, g);
	fprintf(g, "set logscale xy 10\n"
		   "set xrange [%g:%g]\nset yrange [%g:%g]\n"
		   "set mxtics 10\nset mytics 10\n"
		   "set format x '%%g'\nset format y '%%.0s %%cFLOP/s'\n"
		   "set xlabel 'Arithmetic intensity [FLOP/byte] (HBM traffic)'\n"
		   "set ylabel 'Attainable rate [FLOP/s]'\n",
		xlo, xhi, ylo, yhi);

	/* Legend titles of the ceilings, then a fixed plot area (so that
	 * labels can be placed in pixels) leaving room for the legend. */
	char titles[LLMSIM_ROOF_MAX][96];
	size_t longest = 0;
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_ceiling *c = &r->ceil[i];
		char v[LLMSIM_FMT_MAX];
		if (c->bytes_per_s > 0)
			snprintf(titles[i], sizeof titles[i], "%s %s", c->name,
				 llmsim_fmt_bytes_rate(v, c->bytes_per_s));
		else
			snprintf(titles[i], sizeof titles[i], "%s %s, ridge %.0f FLOP/B", c->name,
				 llmsim_fmt_flops_rate(v, c->flops_per_s), c->ridge_flops_per_byte);
		if ((!show || show[i]) && strlen(titles[i]) > longest)
			longest = strlen(titles[i]);
	}
	for (int s = 0; s < nseries; s++)
		longest = strlen(series[s].title) > longest ? strlen(series[s].title) : longest;
	/* DejaVu Sans 11 pt: about 8 px a character, plus sample and box. */
	struct plot_box area = {140, 64, t->width - (96 + 8.0 * longest), t->height - 44};
	if (area.x1 < area.x0 + 240)
		area.x1 = area.x0 + 240;
	fprintf(g, "set lmargin at screen %.5f\nset rmargin at screen %.5f\n"
		   "set bmargin at screen %.5f\nset tmargin at screen %.5f\n"
		   "set key at screen %.5f, screen %.5f left top\n",
		area.x0 / t->width, area.x1 / t->width, area.y0 / t->height,
		area.y1 / t->height, (area.x1 + 16) / t->width, area.y1 / t->height);
	enum { MAX_LINE_BOXES = 4096 };
	struct plot_box *lines = malloc(MAX_LINE_BOXES * sizeof *lines);
	int nlines = lines ? line_boxes(r, show, top, &area, xlo, xhi, ylo, yhi, lines,
					MAX_LINE_BOXES)
			   : 0;
	place_series_labels(g, t, series, nseries, &area, xlo, xhi, ylo, yhi, lines, nlines);
	free(lines);

	/* One data block per ceiling, then one per series (index k). */
	int block = 0, color = 0;
	fputs("plot \\\n", g);
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_ceiling *c = &r->ceil[i];
		if (show && !show[i])
			continue;
		if (c->bytes_per_s > 0) {
			/* A bandwidth diagonal, up to the highest roof shown. */
			double xe = fmin(top / c->bytes_per_s, xhi);
			fprintf(d, "%g %g\n%g %g\n\n\n", xlo, xlo * c->bytes_per_s, xe,
				xe * c->bytes_per_s);
			const char *style = c->kind == LLMSIM_CEIL_HBM ? "lw 2.8 lc rgb '#000000' dt 1"
					  : c->kind == LLMSIM_CEIL_L2 ? "lw 1.8 lc rgb '#666666' dt 2"
								    : "lw 1.8 lc rgb '#999999' dt 3";
			fprintf(g, "  %s index %d with lines %s title ", fl.qdat, block, style);
		} else {
			fprintf(d, "%g %g\n%g %g\n\n\n", c->ridge_flops_per_byte, c->flops_per_s,
				xhi, c->flops_per_s);
			fprintf(g, "  %s index %d with lines lw 2.4 lc rgb '%s' dt %d title ",
				fl.qdat, block, palette[color++ % NPALETTE],
				c->kind == LLMSIM_CEIL_VECTOR ? 4 : 1);
		}
		llmsim_gnuplot_quote(g, titles[i]);
		fputs(", \\\n", g);
		block++;
	}
	/* Series later in the list are drawn first, so that the first (the
	 * layer's ops) end up on top; their legend entries come first, from
	 * empty plots in the series' styles. */
	for (int s = 0; s < nseries; s++) {
		const struct llmsim_plot_series *se = &series[s];
		if (se->n <= 0)
			continue;
		fprintf(g, "  1/0 with points pt %d ps %.1f lc rgb '%s' title ",
			marks[se->mark].pt, marks[se->mark].ps, marks[se->mark].color);
		llmsim_gnuplot_quote(g, se->title);
		fputs(", \\\n", g);
	}
	for (int s = nseries - 1; s >= 0; s--) {
		const struct llmsim_plot_series *se = &series[s];
		int any = 0;
		for (int i = 0; i < se->n; i++) {
			if (!(se->x[i] > 0 && se->y[i] > 0 && isfinite(se->x[i]) &&
			      isfinite(se->y[i])))
				continue;
			fprintf(d, "%.9g %.9g ", se->x[i], se->y[i]);
			dat_label(d, se->labels ? se->labels[i] : "");
			fputc('\n', d);
			any = 1;
		}
		if (!any)
			continue;
		fputs("\n\n", d);
		const char *col = marks[se->mark].color;
		fprintf(g, "  %s index %d using 1:2 with points pt %d ps %.1f lc rgb '%s' notitle",
			fl.qdat, block, marks[se->mark].pt, marks[se->mark].ps, col);
		if (marks[se->mark].outline)
			fprintf(g, ", \\\n  %s index %d using 1:2 with points pt %d ps %.1f lw 0.8 "
				   "lc rgb '#202020' notitle",
				fl.qdat, block, marks[se->mark].outline, marks[se->mark].ps);
		fputs(", \\\n", g);
		block++;
	}
	/* End the plot list with an invisible, titleless element. */
	fputs("  1/0 notitle\n", g);
	return finish(t, &fl, err);
}

int llmsim_plot_stacked(const struct llmsim_plot_target *t, const struct llmsim_plot_bars *b,
			struct llmsim_err *err)
{
	double vmax = b->limit;
	for (int i = 0; i < b->nbars; i++) {
		double sum = 0;
		for (int p = 0; p < b->nparts; p++)
			sum += b->v[i * b->nparts + p] > 0 ? b->v[i * b->nparts + p] : 0;
		vmax = fmax(vmax, sum);
	}
	if (b->nbars < 1 || b->nparts < 1 || !(vmax > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "nothing to draw in '%s'", t->name);
	double scale;
	const char *pre;
	si_scale(vmax, &scale, &pre);

	struct files fl;
	int rc = open_files(t, &fl, err);
	if (rc)
		return rc;
	FILE *d = fl.d, *g = fl.g;
	preamble(t, g);
	for (int i = 0; i < b->nbars; i++) {
		dat_label(d, b->bar_names[i]);
		for (int p = 0; p < b->nparts; p++) {
			double v = b->v[i * b->nparts + p];
			fprintf(d, " %.9g", v > 0 ? v / scale : 0);
		}
		fputc('\n', d);
	}
	fprintf(g, "set style data histograms\nset style histogram rowstacked\n"
		   "set style fill solid 0.9 border rgb '#333333'\nset boxwidth %.2f\n"
		   "set grid noxtics\nset xtics scale 0 noenhanced%s\n"
		   "set yrange [0:%g]\nset format y '%%g'\n",
		b->nbars > 1 ? 0.6 : 0.35, b->nbars > 4 ? " rotate by -20" : "",
		vmax / scale * 1.12);
	if (b->nbars > 4)
		fputs("set bmargin 7\n", g); /* room for the slanted names */
	fputs("set ylabel ", g);
	char yl[160];
	/* "GB", "ms", but "k tokens/s" for units that are words. */
	snprintf(yl, sizeof yl, "%s [%s%s%s]", b->ylabel, pre,
		 *pre && strlen(b->unit) > 1 ? " " : "", b->unit);
	llmsim_gnuplot_quote(g, yl);
	fputc('\n', g);
	if (b->limit > 0) {
		fprintf(g, "set arrow from graph 0, first %g to graph 1, first %g nohead "
			   "lw 2 dt 2 lc rgb '#C00000' front\n",
			b->limit / scale, b->limit / scale);
		fprintf(g, "set label ");
		llmsim_gnuplot_quote(g, b->limit_label ? b->limit_label : "limit");
		fprintf(g, " at graph 0.01, first %g offset 0,0.8 tc rgb '#C00000' front\n",
			b->limit / scale);
	}
	fputs("plot \\\n", g);
	for (int p = 0; p < b->nparts; p++) {
		fprintf(g, "  %s using %d%s lc rgb '%s' title ", fl.qdat, p + 2,
			p == 0 ? ":xtic(1)" : "", palette[p % NPALETTE]);
		llmsim_gnuplot_quote(g, b->part_names[p]);
		fputs(p + 1 < b->nparts ? ", \\\n" : "\n", g);
	}
	return finish(t, &fl, err);
}

int llmsim_plot_curve(const struct llmsim_plot_target *t, const struct llmsim_plot_curve *c,
		      struct llmsim_err *err)
{
	double ymax = 0, xmin = INFINITY, xmax = 0;
	for (int i = 0; i < c->n; i++) {
		if (!(c->x[i] > 0 && c->y[i] > 0))
			continue;
		ymax = fmax(ymax, c->y[i]);
		xmin = fmin(xmin, c->x[i]);
		xmax = fmax(xmax, c->x[i]);
	}
	if (!(ymax > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "nothing to draw in '%s'", t->name);
	double scale;
	const char *pre;
	si_scale(ymax, &scale, &pre);

	struct files fl;
	int rc = open_files(t, &fl, err);
	if (rc)
		return rc;
	FILE *d = fl.d, *g = fl.g;
	preamble(t, g);
	for (int i = 0; i < c->n; i++) {
		if (!(c->x[i] > 0 && c->y[i] > 0))
			continue;
		fprintf(d, "%.9g %.9g ", c->x[i], c->y[i] / scale);
		dat_label(d, c->labels ? c->labels[i] : "");
		fputc('\n', d);
	}
	char lab[160];
	/* Latency grows with throughput: the upper left stays empty. */
	fputs("set key inside left top\n", g);
	fprintf(g, "set logscale x 10\nset mxtics 10\nset xrange [%g:%g]\n"
		   "set format x '%%.0s %%c'\nset yrange [0:%g]\nset format y '%%g'\n",
		decade_floor(xmin / 1.2), decade_ceil(xmax * 1.5), ymax / scale * 1.18);
	snprintf(lab, sizeof lab, "%s [%s]", c->xlabel, c->xunit);
	fputs("set xlabel ", g);
	llmsim_gnuplot_quote(g, lab);
	snprintf(lab, sizeof lab, "%s [%s%s]", c->ylabel, pre, c->yunit);
	fputs("\nset ylabel ", g);
	llmsim_gnuplot_quote(g, lab);
	fprintf(g, "\nplot %s using 1:2 with linespoints lw 2.2 pt 7 ps 1.3 lc rgb '%s' title ",
		fl.qdat, palette[0]);
	llmsim_gnuplot_quote(g, c->title ? c->title : "");
	if (c->labels)
		fprintf(g, ", \\\n  %s using 1:2:3 with labels offset char 0,1.1 font ',9' "
			   "noenhanced notitle", fl.qdat);
	fputc('\n', g);
	return finish(t, &fl, err);
}
