/*
 * validate.h - predicted against measured: per-class error statistics,
 * the worst cases, and predicted HBM bytes against the DRAM counters; and
 * the calibration profile written from a fit and its held-out errors.
 *
 * Errors are signed percentages, 100 * (predicted - measured) / measured;
 * their medians and percentiles are base/stats.h's.
 */
#ifndef LLMSIM_CALIB_VALIDATE_H
#define LLMSIM_CALIB_VALIDATE_H

#include <stddef.h>
#include "base/stats.h"
#include "fit.h"

/* The targets, per class: median and 90th percentile of the
 * absolute error on held-out cases. */
#define LLMSIM_CALIB_TARGET_MEDIAN_PCT 5.0
#define LLMSIM_CALIB_TARGET_P90_PCT    15.0
#define LLMSIM_CALIB_TARGET_BIAS_PCT   3.0 /* |median signed error| */


struct llmsim_err_stats {
	char name[32];
	int n;
	double median_abs_pct, p80_abs_pct, p90_abs_pct;
	double median_signed_pct; /* bias: > 0 when the model is slow */
	int meets_target;	  /* median, p90 and bias within the targets */
};

/* Statistics of n signed % errors (pct is not modified). */
void llmsim_err_stats_compute(const double *pct, size_t n, struct llmsim_err_stats *out);

#define LLMSIM_VALIDATE_MAX_CLASSES 16
#define LLMSIM_VALIDATE_WORST	    10

struct llmsim_worst_case {
	int64_t case_id;
	char op_spec[256];
	char op_class[32];
	double measured_s, predicted_s, err_pct;
	double measured_clock_hz;  /* read under a sustained load, 0 if none */
	double predicted_clock_hz; /* the clock it was priced at */
};

struct llmsim_validation {
	const char *split; /* "holdout", "fit", or NULL for every case */
	struct llmsim_err_stats classes[LLMSIM_VALIDATE_MAX_CLASSES]; /* sorted by name */
	int nclasses;
	struct llmsim_err_stats all;
	struct llmsim_worst_case worst[LLMSIM_VALIDATE_WORST]; /* largest |error| first */
	int nworst;
	/* memory-bound cases (predicted intensity below the ridge point) with
	 * DRAM counters: predicted HBM bytes against read + write counters */
	int hbm_n;
	double hbm_median_abs_pct;
	double hbm_median_signed_pct;
	/* cases timed inside a sustained load with their SM clock read, where
	 * the power limit binds: the predicted clock against it (the power
	 * law's check) */
	int clock_n;
	double clock_median_abs_pct;
	double clock_median_signed_pct;
	int not_modelled; /* cases of the split that were not predicted */
	int failed;	  /* modelled but the prediction failed */
};

/* Predict every case of the split (NULL: all) and gather the statistics. */
int llmsim_calib_validate(const struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
			  const char *split, struct llmsim_validation *v, struct llmsim_err *err);

/* The same, and every predicted case of the split, largest |error| first,
 * into cases (room for set->n entries); *ncases says how many. */
int llmsim_calib_validate_cases(const struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
				const char *split, struct llmsim_validation *v,
				struct llmsim_worst_case *cases, size_t *ncases,
				struct llmsim_err *err);

/* Provenance written into a profile's `calibration:` section. */
struct llmsim_profile_info {
	const char *date;   /* "2026-11-29"; NULL: today (UTC) */
	const char *source; /* the database it came from, or NULL */
};

/* Write the profile for gpu (its fitted parameters, those res->fitted
 * marks) with the held-out statistics in held_out, to path atomically: a
 * temporary file next to it, checked by the hardware loader, then renamed.
 * On failure nothing is left at path (an older file stays as it was). */
int llmsim_calib_write_profile(const char *path, const struct llmsim_gpu *gpu,
			       const struct llmsim_calib_set *set,
			       const struct llmsim_fit_result *res,
			       const struct llmsim_validation *held_out,
			       const struct llmsim_profile_info *info, struct llmsim_err *err);

/* Write the transfer table of gpu's calibration basis (hw/transfer/
 * BASIS.yaml, read by llmsim_gpu_apply_basis): the held-out statistics of
 * gpu predicted from its hardware file and basis alone, measured on the
 * device of set: what predicting an uncalibrated GPU from the basis costs.
 * Whole-step classes are added after it (llmsim_steps_update_profile). The
 * GPU must name a basis; the file is written whole or not at all. */
int llmsim_calib_write_transfer(const char *path, const struct llmsim_gpu *gpu,
				const struct llmsim_calib_set *set,
				const struct llmsim_validation *held_out,
				const struct llmsim_profile_info *info, struct llmsim_err *err);

#endif
