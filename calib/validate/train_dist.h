/*
 * train_dist.h - a suite of published runs judged as a whole (issue 21's
 * targets for modern stacks): the median |error| of the rows priced, the
 * share within a band, the median signed error per GPU kind and per
 * precision recipe (a bias any of them must stay under), and the rows
 * judged not to fit. Errors are of step time, + when llmsim is slower
 * (llmsim_run_time_error); a row that does not fit is counted as such and
 * kept out of the error statistics.
 */
#ifndef LLMSIM_VALIDATE_TRAIN_DIST_H
#define LLMSIM_VALIDATE_TRAIN_DIST_H

#include "train_runs.h"

/* One row as the statistics see it. */
struct llmsim_run_point {
	const char *gpu, *precision;
	int ok;             /* simulated (0: failed, counted in failed) */
	int fits;           /* judged to fit */
	int has_err;        /* a throughput row: err_pct is its step-time error */
	double err_pct;
};

#define LLMSIM_RUN_DIST_GROUPS 16

/* The rows of one GPU kind or one precision. */
struct llmsim_run_group {
	char name[32];
	int n;                   /* priced rows */
	double median_signed_pct;
	int pass;                /* |median| within the bias target (1 without one) */
};

struct llmsim_run_dist {
	int rows, failed, not_fit, priced;   /* priced: fit, with an error */
	double median_abs_pct, median_signed_pct; /* NaN without priced rows */
	double within_share;                 /* of priced rows within t->within_pct */
	struct llmsim_run_group gpu[LLMSIM_RUN_DIST_GROUPS], precision[LLMSIM_RUN_DIST_GROUPS];
	int ngpu, nprecision;                /* sorted by name */
	int pass_median, pass_within, pass_bias, pass_fit; /* 1 where no target */
	int pass;                            /* all four, and no failed row */
};

/* The statistics of n rows against t's targets. Groups past
 * LLMSIM_RUN_DIST_GROUPS fold into the last one (named "other"). */
void llmsim_run_dist_compute(const struct llmsim_run_suite *t, const struct llmsim_run_point *pts,
			     int n, struct llmsim_run_dist *out);

/* Whether t asks for any of these statistics. */
int llmsim_run_suite_has_targets(const struct llmsim_run_suite *t);

#endif
