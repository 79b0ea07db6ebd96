/*
 * fit.h - measured cases next to the model: load them from the store,
 * predict each on a GPU, fit the model's efficiency and overhead
 * parameters (hw/gpu_params.h) on the "fit" split, and write the result as
 * a calibration profile (hw/profiles/NAME.yaml) that the hardware loader
 * applies.
 *
 * How a case is predicted:
 *  - its op spec parses (sim/sim.h): llmsim_predict. It is scored in the
 *    class the runner stored ("hbm" for STREAM copies written as
 *    `ew kind=copy ...`, so that they do not blur the element-wise
 *    figures), or the simulator's class of the op when none was stored;
 *  - it does not parse (or is stored as "l2": a copy re-run over arrays
 *    that stay in L2, which the op model would price from HBM), but its
 *    stored class measures one parameter: llmsim_predict on the stream op
 *    of that class (sim/stream.c) with the declared bytes: "launch" (one
 *    empty kernel; a spec with launches=N > 1 times the host launch rate
 *    and is not modelled), "hbm" (a copy at the bandwidth plateau, at
 *    least 4x the L2 size), "l2", "smem";
 *  - otherwise it is not modelled (and says why).
 */
#ifndef LLMSIM_CALIB_FIT_H
#define LLMSIM_CALIB_FIT_H

#include <stddef.h>
#include <stdint.h>
#include "hw/gpu.h"
#include "sim/sim.h"
#include "store.h"

enum llmsim_calib_how {
	LLMSIM_CALIB_SIM,          /* llmsim_predict on op */
	LLMSIM_CALIB_NOT_MODELLED,
};

/* One measured case, ready to be predicted. */
struct llmsim_calib_point {
	int64_t case_id;
	char op_spec[256];
	char op_class[32]; /* the class it is scored and fitted in (see above) */
	char split[16];	   /* "fit" or "holdout" */
	double measured_s; /* median GPU time of the case */
	double bytes_declared;
	double dram_bytes; /* dram__bytes_read.sum + _write.sum, NaN if not measured */
	int per_call;	   /* timed per call with CUDA events (PyTorch library
			    * cases): the call's kernels and the gaps between
			    * them, not kernel durations (CUPTI) */
	double loop_s;	   /* how long the timed loop had run when its median
			    * repetition started (reps / 2 x the median): the
			    * load the power controller had seen */
	double loaded_clock_hz; /* the SM clock read (NVML) while a sustained load
				 * timed it (cases.load_s > 0); 0 if none: a second
				 * observable of the power law beside the time */
	enum llmsim_calib_how how;
	struct llmsim_op op; /* LLMSIM_CALIB_SIM: the parsed spec, or the stream op */
	char why[160];	     /* LLMSIM_CALIB_NOT_MODELLED: the reason */
};

/* The cases of one GPU, with the provenance a profile records. */
struct llmsim_calib_set {
	struct llmsim_calib_point *p;
	size_t n, cap;
	char hw_name[64];
	char device[128]; /* of the newest run */
	char driver[32];
	char cuda[32];
	double sm_clock_hz; /* median measured SM clock, else the device's max */
	double l2_bytes;    /* of the device (plateau threshold); NaN if unknown */
};

/* Load every committed case whose device maps to hw_name. Fails with
 * LLMSIM_ENOENT when there is none. Release with llmsim_calib_set_release. */
int llmsim_calib_set_load(struct llmsim_store *s, const char *hw_name, struct llmsim_calib_set *set,
			  struct llmsim_err *err);

/* Add one case by hand (tests, synthetic data); classifies it as above
 * (the HBM plateau uses set->l2_bytes, or 0 when NaN). */
int llmsim_calib_set_add(struct llmsim_calib_set *set, int64_t case_id, const struct llmsim_case *c,
			 double dram_bytes, struct llmsim_err *err);

void llmsim_calib_set_release(struct llmsim_calib_set *set); /* zeroes it */

/* Predicted time of a point on gpu, and the prediction when pred is
 * non-NULL. Returns 0, or
 * the error of llmsim_predict; LLMSIM_EUNSUPPORTED for a not-modelled
 * point. */
int llmsim_calib_predict(const struct llmsim_gpu *gpu, const struct llmsim_calib_point *pt,
			 double *time_s, struct llmsim_pred *pred, struct llmsim_err *err);

/* Options of the fit. */
struct llmsim_fit_opts {
	int max_sweeps; /* coordinate-descent sweeps (0: 8) */
	/* 1 to allow a parameter to move; NULL: every parameter in the fit
	 * table (fit.c) that some fit case is sensitive to */
	const int *allow;
};

/* What the fit did, per parameter. */
struct llmsim_fit_result {
	double start[LLMSIM_PARAM_COUNT];	       /* the GPU's values before */
	double param[LLMSIM_PARAM_COUNT];	       /* after (== start where not fitted) */
	int fitted[LLMSIM_PARAM_COUNT];	       /* 1: fit cases of its classes depend on it */
	int ncases[LLMSIM_PARAM_COUNT];	       /* such cases, at the fitted values */
	int fit_cases;			       /* modelled cases of split "fit" */
	int held_out_cases;		       /* modelled cases of split "holdout" */
	double objective_start, objective_end; /* sum over all classes of mean |ln(pred/meas)| */
	int sweeps;
};

/* Fit gpu->param on the set's "fit" cases: each parameter that cases of its
 * own classes (llmsim_calib_fit_classes) depend on moves within its bounds
 * to minimize the sum over those classes of the mean absolute log error,
 * by block coordinate descent (a log grid then golden-section search per
 * parameter, sweeps until none moves). On success gpu->param holds the
 * fitted values. LLMSIM_ENOENT if the set has no modelled fit case. */
int llmsim_calib_fit(struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
		     const struct llmsim_fit_opts *opts, struct llmsim_fit_result *res,
		     struct llmsim_err *err);

/* Bounds a parameter is fitted within; 0 if it is not fitted at all. */
int llmsim_calib_fit_bounds(enum llmsim_param e, double *lo, double *hi);

/* The op classes a parameter is fitted on, space-separated ("hbm
 * elementwise decode"); NULL if it is not fitted. */
const char *llmsim_calib_fit_classes(enum llmsim_param e);

#endif
