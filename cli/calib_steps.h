/*
 * calib_steps.h - the `steps` section of `llmsim calib validate`: whole
 * measured steps against llmsim's predictions (calib/validate/steps.h),
 * per class and, on request, step by step.
 */
#ifndef LLMSIM_CLI_CALIB_STEPS_H
#define LLMSIM_CLI_CALIB_STEPS_H

#include <stdio.h>
#include "base/json.h"
#include "calib/validate/steps.h"

/* The classes table (and with `rows` every step, largest |error| first). */
void calib_steps_print(FILE *f, const struct llmsim_steps_report *r, int rows);
/* The section as a JSON object under key. */
void calib_steps_json(struct llmsim_json *j, const char *key, const struct llmsim_steps_report *r);

#endif
