/*
 * calib_steps_train.h - the training rows of the steps class in `llmsim
 * calib validate` and `llmsim calib fit` (calib/validate/steps_train.h).
 */
#ifndef LLMSIM_CLI_CALIB_STEPS_TRAIN_H
#define LLMSIM_CLI_CALIB_STEPS_TRAIN_H

#include <stdio.h>
#include "base/json.h"
#include "calib/store.h"
#include "calib/validate/steps_train.h"
#include "hw/gpu.h"

/* The torch_train steps of store s predicted on gpu: a table per step and
 * per group to f, or the JSON member "steps_train" into j (an open object)
 * when j is given. A store with none prints nothing. 0, or 1 after one
 * error line. */
int cli_steps_train_report(const char *cmd, struct llmsim_store *s, const struct llmsim_gpu *gpu,
			   struct llmsim_json *j, FILE *f);

/* The class's expected errors for a profile (llmsim_steps_train_errors):
 * how many into out[0..max) (0: no steps), or -1 after one error line. */
int cli_steps_train_errors(const char *cmd, struct llmsim_store *s, const struct llmsim_gpu *gpu,
			   struct llmsim_step_err *out, int max);

#endif
