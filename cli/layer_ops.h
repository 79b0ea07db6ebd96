/*
 * layer_ops.h - the ops of one layer of a workload, as the walkers price
 * them, for the roofline (`llmsim roofline --model`, the report): serving,
 * the graph `infer` walks for a prefill step of batch x seq tokens and for
 * a decode step of batch sequences against a cache of seq tokens;
 * training, the graph `train` walks for a micro-batch of batch sequences
 * (forward, then backward). The layer is the model's MoE layer when it has
 * one, else its dense layer; one GPU of tp; communication left out (links
 * bound it, not HBM); lone kernels (the burst clock).
 */
#ifndef LLMSIM_CLI_LAYER_OPS_H
#define LLMSIM_CLI_LAYER_OPS_H

#include "reports/roofline.h"

/* Fill ops[0..*n) (room for LLMSIM_LAYER_OPS_MAX). Returns 0, or the
 * error of the walk (a layout that does not divide the model, an empty
 * shape). */
int cli_layer_ops(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
		  const struct llmsim_layer_cfg *c, struct llmsim_layer_op *ops, int *n,
		  struct llmsim_err *err);

#endif
