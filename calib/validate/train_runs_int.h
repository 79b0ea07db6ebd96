/*
 * train_runs_int.h - what train_runs.c (a run's fields) and train_stack.c
 * (the stack fields of issue 21 and what each is priced as) share.
 */
#ifndef LLMSIM_VALIDATE_TRAIN_RUNS_INT_H
#define LLMSIM_VALIDATE_TRAIN_RUNS_INT_H

#include "base/yaml.h"
#include "train_runs.h"

/* One run as the YAML extractor fills it (one_run sets -1 in the fields
 * whose absence it must tell apart: recipe, stack, zero, recompute, dtype
 * and the stack fields). */
struct raw_run {
	char name[64], source[384], gpu[32], suite[32];
	int gpus, tp, pp, dp, cp, ep, zero, micro_batch, global_batch, seq;
	int recompute, schedule, chunks, dtype, recipe, attention, lora_rank;
	int sequence_parallel, uneven_pp, offload, dpu, stack, ddp;
	int precision, recompute_method, recompute_num_layers, fsdp, moe_dispatch, moe_overlap;
	int tp_overlap, cp_comm;
	double moe_imbalance, offload_activations;
	double published_step_time_s, published_mfu, published_model_state_bytes;
	double published_activation_layer_bytes, target_pct, suite_mean_target_pct;
	double published_tokens_per_s_per_gpu, published_model_flops_per_s_per_gpu;
	double published_peak_memory_bytes;
};


extern const char *const llmsim_run_dtype_names[];           /* bf16, fp8 */
/* recompute: the simulator's three, and modules (recompute_modules) */
extern const char *const llmsim_run_recompute_kind_names[];  /* none, selective, full, modules */
enum { LLMSIM_RUN_RECOMP_MODULES = 3 };

/* The stack fields of r (and recompute_modules, read from map) into e->opts,
 * and into e->cfg as far as the simulator prices them, each substitution
 * noted in e->not_modelled. e->cfg's tp, pp and cp must be set. Returns 0, or
 * LLMSIM_EPARSE naming path:line:col. */
int llmsim_run_stack_opts(const struct llmsim_ynode *map, const char *path,
			  const struct raw_run *r, struct llmsim_run_entry *e,
			  struct llmsim_err *err);

/* An error at the value of key in map (at the map when key is absent). */
int llmsim_run_err_at(struct llmsim_err *err, const char *path, const struct llmsim_ynode *map,
		      const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
