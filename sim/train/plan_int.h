/*
 * plan_int.h - what the planner's search (plan.c) hands its ranking
 * (plan_rank.c): every configuration that fits, packed small, and the
 * survivors of each stage of pruning (for a hint that names the true
 * cause when nothing fits).
 */
#ifndef LLMSIM_PLAN_INT_H
#define LLMSIM_PLAN_INT_H

#include "plan.h"

/* A configuration that fits, packed: the rest of its configuration is the
 * search's (struct plan_base). */
struct plan_entry {
	double tokens_per_s;
	int32_t tp, pp, cp, ep;
	uint8_t zero, micro_batch, recompute, chunks, attn, offload, lora, cp_comm;
};

struct plan_entries {
	struct plan_entry *v;
	int64_t n, cap;
};

/* What every configuration of the search shares. */
struct plan_base {
	struct llmsim_train_cfg cfg;  /* gpus, seq, batch, dtype, recipe, imbalance, uneven */
	int lora_rank, dpu;
};

/* Survivors of the pruning stages, for the hint. */
struct plan_survivors {
	int64_t layouts;              /* configurations of layouts the model allows */
	int64_t batch;                /* of which the batch divides */
	int min_dp;                   /* smallest dp among the layouts allowed (0: none) */
};

/* The full configuration of an entry. */
void plan_entry_cfg(const struct plan_entry *e, const struct plan_base *b,
		    struct llmsim_train_cfg *c);

/* Sort the entries, group them into rows, find the best of each kind and
 * expand what is shown (priced again through llmsim_train_simulate, from
 * the context's cache). */
int plan_rank(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	      const struct plan_base *b, struct plan_entries *es, struct llmsim_plan_out *out,
	      struct llmsim_err *err);

/* out->hint when nothing fits. */
void plan_hint(const struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	       const struct plan_survivors *sv, struct llmsim_plan_out *out);

#endif
