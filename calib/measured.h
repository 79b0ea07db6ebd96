/*
 * measured.h - the measured calibration cases of one GPU beside their
 * predictions, scored exactly as `llmsim calib validate` scores them
 * (llmsim_calib_predict: the stream ops of the direct classes, the power
 * limit of a looped case, the kernel gaps of a library call), for the
 * report's roofline and its measurements table.
 *
 * Measurements come from a calibration database (--db FILE), or else from
 * the text dumps shipped as <data>/calib/data/NAME.tsv, imported into an
 * in-memory database through the calibration store.
 */
#ifndef LLMSIM_CALIB_MEASURED_H
#define LLMSIM_CALIB_MEASURED_H

#include "base/err.h"
#include "hw/gpu.h"
#include "validate.h"

/* One scored case with math: a point of the roofline. */
struct llmsim_measured_pt {
	char op_class[32];             /* the class it is scored in */
	char spec[256];                /* as stored */
	char canon[512];               /* llmsim_op_format of its op */
	double flops;                  /* predicted (the cost description) */
	double intensity_flops_per_byte;
	double measured_s, predicted_s;
	double measured_flops_per_s;   /* flops / measured_s */
	double predicted_flops_per_s;  /* flops / predicted_s */
};

#define LLMSIM_MEASURED_MAX 400

struct llmsim_measured {
	struct llmsim_measured_pt *pts;   /* owned; the cases with FLOPs and HBM bytes */
	int n;
	int cases;                        /* cases stored for this GPU */
	int skipped;                      /* not modelled, or their prediction failed */
	char source[512];                 /* "--db FILE" or the files imported */
	char note[512];                   /* import problems, "" if none */
	struct llmsim_validation all;     /* every case (fit and held-out) per class:
					   * llmsim_calib_validate over no split */
};

/* Load and score the cases of gpu (devices.hw_name == gpu->name). With
 * db_path NULL, every .tsv dump in <data>/calib/data is imported (a file
 * that fails to import is noted in m->note and skipped). No measurements
 * is not an error: m->n and m->cases are 0. Returns 0, or an error of the
 * store when db_path cannot be read. */
int llmsim_measured_load(const struct llmsim_gpu *gpu, const char *db_path,
			 struct llmsim_measured *m, struct llmsim_err *err);

void llmsim_measured_release(struct llmsim_measured *m); /* NULL-safe */

/* The measured case whose op is op (same canonical spec), or NULL. */
const struct llmsim_measured_pt *llmsim_measured_find(const struct llmsim_measured *m,
						      const char *canon_spec);

#endif
