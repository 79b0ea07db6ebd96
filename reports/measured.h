/*
 * measured.h - calibration measurements of one GPU placed on its
 * roofline: for each stored case, the predicted intensity and rate next to
 * the rate its measured time gives (FLOPs from the op's cost description,
 * time from the measurement).
 *
 * Measurements come from a calibration database (--db FILE), or else from
 * the shipped calibration (calib/shipped.h: the text dumps of
 * <data>/calib/data/, in memory).
 */
#ifndef LLMSIM_REPORT_MEASURED_H
#define LLMSIM_REPORT_MEASURED_H

#include "../base/err.h"
#include "../hw/gpu.h"

struct llmsim_measured_pt {
	char op_class[32];
	char spec[256];                /* as stored */
	char canon[512];               /* llmsim_op_format of the parsed spec */
	double flops;                  /* predicted (the cost description) */
	double intensity_flops_per_byte;
	double measured_s, predicted_s;
	double measured_flops_per_s;   /* flops / measured_s */
	double predicted_flops_per_s;  /* flops / predicted_s */
};

/* Error of the prediction over the measured cases of one op class. */
struct llmsim_measured_class {
	char name[32];
	int n;
	double median_abs_pct, p90_abs_pct;
};

#define LLMSIM_MEASURED_MAX 400
#define LLMSIM_MEASURED_CLASSES 12

struct llmsim_measured {
	struct llmsim_measured_pt *pts;   /* owned */
	int n;
	int cases;                        /* cases stored for this GPU */
	int skipped;                      /* unparsable or unpriceable specs */
	char source[512];                 /* "--db FILE" or the files imported */
	char note[512];                   /* import problems, "" if none */
	struct llmsim_measured_class cls[LLMSIM_MEASURED_CLASSES];
	int ncls;
};

/* Load the measured cases of gpu (devices.hw_name == gpu->name). With
 * db_path NULL, the shipped calibration (a dump that fails to import is
 * noted in m->note, and the page has no measurements). No measurements is
 * not an error: m->n is 0. Returns 0, or an error of the store when
 * db_path cannot be read. */
int llmsim_measured_load(const struct llmsim_gpu *gpu, const char *db_path,
			 struct llmsim_measured *m, struct llmsim_err *err);

void llmsim_measured_release(struct llmsim_measured *m); /* NULL-safe */

/* The measured case whose op is op (same canonical spec), or NULL. */
const struct llmsim_measured_pt *llmsim_measured_find(const struct llmsim_measured *m,
						      const char *canon_spec);

#endif
