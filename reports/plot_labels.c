/* plot_labels.c - label placement without overlaps (see plot_labels.h). */
#include "plot_labels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double overlap(const struct plot_box *a, const struct plot_box *b)
{
	double w = fmin(a->x1, b->x1) - fmax(a->x0, b->x0);
	double h = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
	return w > 0 && h > 0 ? w * h : 0;
}

void plot_place_labels(struct plot_label *p, const char *const *text, int n,
		       const struct plot_box *area, const struct plot_box *obstacles,
		       int nobst)
{
	struct plot_box *placed = calloc((size_t)(2 * n + nobst + 1), sizeof *placed);
	int np = 0;
	if (!placed)
		return;
	for (int i = 0; i < nobst; i++)
		placed[np++] = obstacles[i];
	for (int i = 0; i < n; i++) /* every point is an obstacle */
		placed[np++] = (struct plot_box){p[i].px - PLOT_MARK_PX, p[i].py - PLOT_MARK_PX,
						 p[i].px + PLOT_MARK_PX, p[i].py + PLOT_MARK_PX};
	for (int i = 0; i < n; i++) {
		double w = strlen(text[i]) * PLOT_LABEL_CHAR_PX, h = PLOT_LABEL_LINE_PX;
		double best = INFINITY, bx = p[i].px + 9, by = p[i].py;
		int lead = 0;
		for (int c = 0; c < 40 && best > 0; c++) {
			/* Candidates: 0-3 next to the point, then steps of one
			 * line up and down on each side. */
			double dx, dy;
			int k = c / 4 + 1, side = c % 4;
			if (c < 4) {
				static const double near[4][2] = {
					{9, 0}, {-9, 0}, {5, 11}, {5, -11}};
				dx = near[c][0];
				dy = near[c][1];
			} else {
				dx = side < 2 ? 12 : -12;
				dy = (side % 2 ? -1 : 1) * (k * PLOT_LABEL_LINE_PX + 4);
			}
			double lx = dx >= 0 ? p[i].px + dx : p[i].px + dx - w;
			double ly = p[i].py + dy;
			struct plot_box b = {lx, ly - h / 2, lx + w, ly + h / 2};
			double cost = 0;
			if (b.x0 < area->x0 || b.x1 > area->x1 || b.y0 < area->y0 || b.y1 > area->y1)
				cost += 1e6;
			for (int j = 0; j < np; j++)
				cost += overlap(&b, &placed[j]);
			cost += c * 1e-3; /* prefer nearer spots on ties */
			if (cost < best) {
				best = cost;
				bx = lx;
				by = ly;
				lead = c >= 4;
			}
			if (cost < 1)
				break;
		}
		p[i].lx = bx;
		p[i].ly = by;
		p[i].leader = lead;
		placed[np++] = (struct plot_box){bx, by - h / 2, bx + w, by + h / 2};
	}
	free(placed);
}

/* Labels of every labelled series as `set label` (and leader arrows). */
