/*
 * report_int.h - what the report gathers before it draws and writes, and
 * the steps between (internal to reports/).
 */
#ifndef LLMSIM_REPORT_INT_H
#define LLMSIM_REPORT_INT_H

#include "gnuplot.h"
#include "plots.h"
#include "report.h"
#include "roofline.h"

/* What the report draws: the gathered results, and the roofline with the
 * layer's ops placed on it (llmsim_roofline_point, from their predictions). */
struct report_data {
	const struct llmsim_report_data *in;
	struct llmsim_roofline roof;
	struct llmsim_roof_point pts[LLMSIM_LAYER_OPS_MAX];
};

/* A picture of the report: file name, caption, and whether it was drawn. */
enum report_pic { PIC_ROOFLINE, PIC_MEMORY, PIC_TIME, PIC_CONFIGS, PIC_SERVE, PIC_COUNT };
struct report_pics {
	char path[PIC_COUNT][4096];     /* in the staging folder; "" when not drawn */
	char name[PIC_COUNT][32];       /* "roofline.png" */
};

/* Draw the pictures into the staging folder `stage`. */
int report_draw(const struct report_data *d, const struct llmsim_gnuplot *gp,
		const char *work, const char *stage, struct report_pics *pics,
		struct llmsim_err *err);

/* Write the page to path. */
int report_html(const struct report_data *d, const struct report_pics *pics,
		const char *path, struct llmsim_err *err);


#endif
