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
	uint8_t zero, micro_batch, recompute, chunks, attn, offload, lora, pad;
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

/* The order of the ranking: fastest first; ties in an order that does not
 * depend on the search's: HBM alone before offload, then the smaller
 * degrees and options (configurations differ in some key: a total order).
 * Negative when a comes first. */
int plan_entry_cmp(const struct plan_entry *a, const struct plan_entry *b);

/* A row's group: the entries within the error of its fastest (n of
 * them), shown by the fastest of them in HBM alone, else its fastest. */
struct plan_group {
	struct plan_entry shown;
	int64_t n;
	double best_tps, worst_tps;
};

/* What the ranking shows, chosen from the entries. */
struct plan_selection {
	struct plan_entry fastest;
	struct plan_group *rows;      /* room for top (the caller's) */
	int nrows;
	struct plan_entry kind[LLMSIM_PLAN_KIND_COUNT];
	int have_kind[LLMSIM_PLAN_KIND_COUNT];
};

/* The fastest entry, the groups of the first top rows (width e: from the
 * fastest left, everything within (1 + e) of it) and the best of each
 * kind searched (a bit each in `searched`, 1u << enum llmsim_plan_kind;
 * the TP kind: tp <= gpus_per_node), as sorting all the entries by
 * their order (fastest first, ties by the smaller options) and walking
 * them would give, without the sort (plan_rank.c says how). Reorders
 * the entries. */
void plan_select(struct plan_entries *es, double e, int top, unsigned searched,
		 int gpus_per_node, struct plan_selection *sel);

/* Group the entries into rows and find the best of each kind
 * (plan_select), and expand what is shown (priced again through
 * llmsim_train_simulate, from the context's cache). */
int plan_rank(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	      const struct plan_base *b, struct plan_entries *es, struct llmsim_plan_out *out,
	      struct llmsim_err *err);

/* out->hint when nothing fits. */
void plan_hint(const struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
	       const struct plan_survivors *sv, struct llmsim_plan_out *out);

#endif
