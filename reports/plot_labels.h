/*
 * plot_labels.h - placing point labels on a picture without overlaps
 * (internal to reports/).
 *
 * gnuplot puts `with labels` text at a fixed offset, so labels of points
 * that sit close together pile up. Callers that fix their plot area in
 * pixels map every point to pixels and let plot_place_labels pick, for
 * each label, the first of a list of candidate spots (right, left, above,
 * below, then further up or down with a leader line) that overlaps no
 * placed label, no point and no obstacle, and stays inside the area.
 */
#ifndef LLMSIM_REPORT_PLOT_LABELS_H
#define LLMSIM_REPORT_PLOT_LABELS_H

#define PLOT_LABEL_CHAR_PX 6.2   /* DejaVu Sans at 8 pt, average advance */
#define PLOT_LABEL_LINE_PX 11.0
#define PLOT_MARK_PX 6.0         /* half the size of a point's mark */

/* A rectangle in pixels, y up. */
struct plot_box {
	double x0, y0, x1, y1;
};

struct plot_label {
	double px, py;          /* the point, pixels (y up) */
	double lx, ly;          /* out: label anchor, left end and vertical centre */
	int leader;             /* out: draw a line from the point to the label */
};

/* Place the labels text[0..n) of points p[0..n) inside area, avoiding each
 * other, the points and obstacles[0..nobst). */
void plot_place_labels(struct plot_label *p, const char *const *text, int n,
		       const struct plot_box *area, const struct plot_box *obstacles,
		       int nobst);

#endif
