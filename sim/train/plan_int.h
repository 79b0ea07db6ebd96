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
	double rank_tps;             /* what it is ranked by (plan_rank_tps) */
	int32_t tp, pp, cp, ep;
	uint8_t zero, micro_batch, recompute, modules, chunks, attn, offload, lora;
	uint8_t cp_comm;
	uint8_t act_offload;         /* percent of the saved activations in host memory */
	uint8_t tight;               /* within the memory model's error of the HBM */
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

/* The stack filter of the search (plan_stack.c): the base configuration
 * as the stack runs it, and whether it launches a layout (its parallel
 * degrees alone: a whole subtree) or a whole configuration. */
void plan_stack_base(const struct llmsim_plan_req *req, struct llmsim_train_cfg *c);
int plan_stack_layout_ok(const struct llmsim_plan_req *req, const struct llmsim_train_cfg *c);
int plan_stack_ok(const struct llmsim_plan_req *req, const struct llmsim_model *m,
		  const struct llmsim_train_cfg *c);
/* A way to hold activations the search tries: a recomputation kind, its
 * modules, and the fraction of the saved activations offloaded to the host. */
struct plan_recompute {
	enum llmsim_recompute kind;
	unsigned modules;
	double act_offload;
};
#define PLAN_MAX_RECOMPUTE 5
/* The ways the search tries (into rec, returns how many): no recompute,
 * selective and full of every layer; for an MoE model under a stack that
 * recomputes by module, the experts' activation (moe_act) with MLA's
 * up-projections where the model has MLA, as Megatron-Bridge's DeepSeek-V3
 * recipe runs it; under a stack that offloads activations, to a GPU with a
 * host, no recompute with every offloadable activation in host memory.
 * Without a stack the first three only. */
int plan_recompute_choices(const struct llmsim_plan_req *req, const struct llmsim_model *m,
			   const struct llmsim_gpu *gpu, struct plan_recompute *rec);

/* One line naming the feature and the stacks that have it when the
 * request pins what the stack cannot launch (tp, pp, cp, ep, fp8, LoRA). */
int plan_stack_check_req(const struct llmsim_plan_req *req, struct llmsim_err *err);
/* The offload modes the stack can launch (1: none only), and why not when
 * it launches none (note, n bytes). */
int plan_stack_offloads(const struct llmsim_plan_req *req, char *note, size_t n);

/* What a configuration is ranked by (plan_rank.c): its tokens/s, counted
 * the expected step error e slower for offload and again for memory within
 * the memory model's error of the limit, so that either ranks above a
 * configuration in HBM with room to spare only when faster by more than
 * the error. */
double plan_rank_tps(double tokens_per_s, enum llmsim_offload offload, int mem_tight, double e);

/* The full configuration of an entry. */
void plan_entry_cfg(const struct plan_entry *e, const struct plan_base *b,
		    struct llmsim_train_cfg *c);

/* The order of the ranking: plan_rank_tps first, then tokens/s, then
 * memory to spare before within the error of the limit; ties in an order
 * that does not depend on the search's: HBM alone before offload, then
 * the smaller degrees and options (configurations differ in some key: a
 * total order). Negative when a comes first. */
int plan_entry_cmp(const struct plan_entry *a, const struct plan_entry *b);

/* A row: the first of a layout in the ranking's order (shown), with the
 * layout's later entries within the error of it folded in (n in all,
 * shown among them; their best and worst tokens/s). */
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

/* The fastest entry (the highest tokens/s, ties in the ranking's order),
 * the rows (at most top: in the ranking's order, the first entry of each
 * layout, a layout's tp, pp, cp, ep, ZeRO stage, offload and LoRA, with
 * its later entries within (1 + e) folded in) and the best of each kind
 * searched (a bit each in `searched`, 1u << enum llmsim_plan_kind; the TP
 * kind: tp <= gpus_per_node: its first, or the first of it in HBM alone
 * within the error of that), as sorting all the entries by
 * plan_entry_cmp and walking them would give, without the sort
 * (plan_rank.c says how). Returns 0, or LLMSIM_ENOMEM. */
int plan_select(const struct plan_entries *es, double e, int top, unsigned searched,
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
