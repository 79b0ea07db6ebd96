/*
 * validate_dist.h - `llmsim validate`'s report of the suites judged as a
 * whole (calib/validate/train_dist.h): one table (or a JSON array) of each
 * suite's median |error|, share within its band, median signed error per
 * GPU kind and per precision, and rows judged not to fit, with its targets.
 */
#ifndef LLMSIM_CLI_VALIDATE_DIST_H
#define LLMSIM_CLI_VALIDATE_DIST_H

#include <stdio.h>

#include "base/json.h"
#include "calib/validate/train_dist.h"

struct validate_dist {
	const struct llmsim_run_suite *t;
	struct llmsim_run_dist d;
};

/* The text table of n suites, with a line saying how rows are judged. */
void validate_dist_print(const struct validate_dist *v, int n, FILE *f);

/* The JSON array "distributions" of n suites. */
void validate_dist_json(struct llmsim_json *j, const struct validate_dist *v, int n);

#endif
