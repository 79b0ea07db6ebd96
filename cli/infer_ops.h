/*
 * infer_ops.h - `llmsim infer --ops`: every op of a prefill step and of a
 * decode step, as infer priced them (the graph walk llmsim_infer_step_ops,
 * at the load of its phase), to set beside a profiler's kernel list.
 */
#ifndef LLMSIM_CLI_INFER_OPS_H
#define LLMSIM_CLI_INFER_OPS_H

#include "base/json.h"
#include "sim/infer/infer.h"

/* The ops of the first prefill step of req and of the decode step at the
 * middle of its output, in the loads res records; text, or JSON arrays
 * "prefill_ops" and "decode_ops" into j when j is not NULL. */
int cli_infer_ops(const struct llmsim_infer_cfg *cfg, const struct llmsim_infer_req *req,
		  const struct llmsim_infer_result *res, struct llmsim_json *j,
		  struct llmsim_err *err);

#endif
