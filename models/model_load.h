/*
 * model_load.h - internal entry points of the model loader, for the fuzz
 * targets and tests. Not part of the public contract (that is model.h).
 */
#ifndef LLMSIM_MODEL_LOAD_H
#define LLMSIM_MODEL_LOAD_H

#include <stddef.h>
#include "model.h"

/* Parse a model description held in memory, exactly as
 * llmsim_model_load_file does with a file's bytes; `name` stands in for the
 * path in messages and in m->path. */
int llmsim_model_load_buf(const char *buf, size_t len, const char *name,
			  struct llmsim_model *m, struct llmsim_err *err);

/* Matrix-multiply weights used per token (the FLOP-bearing part of the
 * active parameters: no embedding lookup, norms or biases; the LM head
 * included). */
double llmsim_model_matmul_params_active(const struct llmsim_model *m);

#endif
