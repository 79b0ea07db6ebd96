/*
 * plan.h - the search over training configurations (`llmsim plan`): every
 * way to train a model on N GPUs, priced by the training model (train.h),
 * ranked by throughput, and reported as distinct answers.
 *
 * The space: TP x CP x PP x DP (x EP for MoE models; any degree can be
 * pinned), ZeRO 0-3, micro-batch 1-16, recomputation none / selective /
 * full, 1F1B or interleaved with 2-8 chunks per stage, attention naive /
 * flash2 / flash3, offload none / optimizer / params (where the GPU file
 * describes its host and the recipe keeps 16-bit weights), and with a LoRA
 * rank both full training and LoRA. Pipeline stages need not divide the
 * layers (the busiest stage holds ceil(L / (pp v)) v of them: Llama 3 405B
 * ran 126 layers over 16 stages); `even_pp` restricts to even splits.
 *
 * Counting: a configuration is either priced (its memory and step time
 * computed: it fits, or it is out of HBM or host memory) or pruned before
 * pricing, a whole invalid subtree at a time (each pruned configuration
 * is counted under the exact rule it breaks). Both counts are reported,
 * with the rate of each.
 *
 * Distinct answers (plan_rank.c): predictions carry an expected error e
 * (sim/expected_error.h). The configurations are ordered by tokens/s,
 * counted e slower for offload and again for memory within the memory
 * model's error of the limit (the stack's error_frac: never rejected, said
 * to be tight): either ranks above a configuration in HBM with room to
 * spare only when it is faster by more than the expected error. Each row is the best configuration of a layout not shown yet
 * (parallel degrees, ZeRO stage, offload, LoRA); the configurations of the
 * same layout within e of it fold into it ("and N equivalent"): the rows
 * are the best layouts in order, not a ladder in steps of e. Beside the
 * rows, the best of each kind: in HBM alone, with offload (it wins only
 * when faster than the best in HBM alone by more than e), with TP inside
 * one node, and full training and LoRA when a LoRA rank is given.
 *
 * The global batch, when not given, follows a token budget that grows with
 * the GPU count (llmsim_plan_batch_rule).
 */
#ifndef LLMSIM_PLAN_H
#define LLMSIM_PLAN_H

#include <stdint.h>
#include "sim/expected_error.h"
#include "sim/train/stack.h"
#include "sim/train/train.h"

/* Why the search dropped configurations (counts are of configurations). */
enum llmsim_plan_why {
	LLMSIM_PLAN_HEADS,          /* attention heads not divisible by tp */
	LLMSIM_PLAN_KV_HEADS,       /* kv heads and tp: neither divides the other */
	LLMSIM_PLAN_SEQ,            /* seq not divisible by 2 * cp (load-balanced ring) */
	LLMSIM_PLAN_STAGES,         /* more pipeline stages x chunks than layers */
	LLMSIM_PLAN_LAYERS,         /* layers not divisible by pp x chunks (even_pp only) */
	LLMSIM_PLAN_EXPERTS,        /* experts not divisible by ep */
	LLMSIM_PLAN_BATCH,          /* global batch not divisible by micro-batch x dp */
	LLMSIM_PLAN_INTERLEAVE_PP,  /* interleaved schedule with one stage */
	LLMSIM_PLAN_INTERLEAVE_MB,  /* interleaved: micro-batches not divisible by pp */
	LLMSIM_PLAN_ZERO3_PP,       /* ZeRO-3 with pipeline parallelism */
	LLMSIM_PLAN_KERNEL,         /* an op the GPU cannot run (FlashAttention-3 before Hopper) */
	LLMSIM_PLAN_OFFLOAD_ZERO,   /* offload needs ZeRO >= 1 (DeepSpeed offloads partitions) */
	LLMSIM_PLAN_OFFLOAD_PARAMS, /* params offload needs ZeRO-3 */
	LLMSIM_PLAN_STACK,          /* a feature the chosen stack lacks, or a pair it refuses */
	LLMSIM_PLAN_OOM,            /* priced: does not fit in HBM */
	LLMSIM_PLAN_HOST_OOM,       /* priced: offloaded states exceed the node's host memory */
	LLMSIM_PLAN_WHY_COUNT
};
const char *llmsim_plan_why_name(enum llmsim_plan_why w); /* a phrase for tables */
const char *llmsim_plan_why_key(enum llmsim_plan_why w);  /* snake_case, for JSON */
/* 1 for the reasons found by pricing (memory), 0 for those pruned before. */
int llmsim_plan_why_priced(enum llmsim_plan_why w);

struct llmsim_plan_req {
	int gpus;
	int64_t seq;
	int64_t global_batch;        /* sequences per step; 0: llmsim_plan_batch_rule */
	enum llmsim_dtype dtype;
	enum llmsim_recipe recipe;
	int lora_rank;               /* > 0: LoRA at this rank is searched beside full training */
	double moe_imbalance;
	int even_pp;                 /* only pp x chunks dividing the layers */
	int max_chunks;              /* interleaved chunks per stage tried: 2..max (0: 8) */
	int top;                     /* distinct rows kept (0: 5) */
	int dpu;                     /* offloaded configurations use DPU */
	int no_offload;              /* search offload none only */
	int tp, pp, cp, ep;          /* > 0: that degree only */
	double error_frac;           /* > 0: the expected error to group by; 0: the GPU's
				      * (llmsim_expected_error, train step) */
	/* the stack whose launches are searched (stack.h): its program, recipe
	 * (req.recipe still decides the optimizer-state bytes), FSDP kind and
	 * allowances, and only the layouts it can launch; NULL: every layout
	 * llmsim models, as one program (the allowances before stacks) */
	const struct llmsim_stack_def *stack;
	/* called (when set) before each parallel layout's search: the
	 * configurations priced and pruned so far, for a progress line */
	void (*progress)(void *ctx, int64_t priced, int64_t pruned);
	void *progress_ctx;
};

/* The batch rule: a token budget of max(4 Mi, 1024 x gpus) tokens (Llama 3
 * 405B: 4M tokens per step to start, 16M on 16,384 GPUs, Dubey et al. 2024
 * Sec. 3.3.4 and Table 4; Megatron-LM's weak scaling grows the batch with
 * the GPU count the same way, 1-2K tokens per GPU at scale, Narayanan et
 * al. 2021 Table 1), in sequences of `seq` tokens, made q x 2^k sequences
 * with q the odd part of the GPU count (so that data-parallel degrees of
 * every divisor of the GPUs divide it) and 2^k the power of two nearest
 * (in ratio) to budget / (seq q); at least q. Sets *tokens (may be NULL)
 * to the budget before rounding. */
int64_t llmsim_plan_batch_rule(int gpus, int64_t seq, double *tokens);

/* One distinct row: the best configuration of a layout (its parallel
 * degrees, ZeRO stage, offload and LoRA) and how many more of the same
 * layout (other micro-batches, recomputation, schedules, attention kernels)
 * lie within the expected error of it. */
struct llmsim_plan_row {
	struct llmsim_train_result r;
	int64_t equivalent;          /* other configurations folded into it */
	double group_best_tokens_per_s, group_worst_tokens_per_s;
};

enum llmsim_plan_kind {
	LLMSIM_PLAN_KIND_HBM,        /* every model state in HBM */
	LLMSIM_PLAN_KIND_OFFLOAD,    /* offload optimizer or params */
	LLMSIM_PLAN_KIND_TP_NODE,    /* tp within one node */
	LLMSIM_PLAN_KIND_FULL,       /* full training (with a LoRA rank) */
	LLMSIM_PLAN_KIND_LORA,       /* LoRA (with a LoRA rank) */
	LLMSIM_PLAN_KIND_COUNT
};
const char *llmsim_plan_kind_name(enum llmsim_plan_kind k);
const char *llmsim_plan_kind_key(enum llmsim_plan_kind k);

struct llmsim_plan_best {
	int searched;                /* the kind is part of this search */
	int found;                   /* and some configuration of it fits */
	struct llmsim_train_result r;
	double vs_first;             /* tokens/s over row #1's, minus 1 */
	int beyond_error;            /* faster than what it is compared with by more than
				      * the error (offload: than the best in HBM alone) */
};

struct llmsim_plan_out {
	int64_t global_batch;        /* the batch searched */
	int batch_from_rule;         /* it came from llmsim_plan_batch_rule */
	double batch_budget_tokens;  /* the rule's budget (0 when given) */
	int64_t priced, pruned;      /* configurations */
	int64_t feasible, feasible_offload;
	int64_t tight;               /* of the feasible, within the memory model's error
				      * of the HBM */
	int64_t why[LLMSIM_PLAN_WHY_COUNT];
	struct llmsim_expected_error error;
	double error_frac;           /* the width rows are grouped by */
	struct llmsim_plan_row *rows; /* distinct, best first (owned) */
	int nrows;
	struct llmsim_train_result fastest; /* the fastest prediction of all */
	struct llmsim_plan_best kind[LLMSIM_PLAN_KIND_COUNT];
	struct llmsim_train_result closest; /* smallest shortfall, when none fits */
	int have_closest;
	int offload_searched;
	char offload_note[96];       /* why offload was not searched, "" if it was */
	char hint[320];              /* when nothing fits: the cause, true for this case */
	double elapsed_s;            /* the search and the ranking */
};

/* Search, rank and group (see the top of this file). Fails with
 * LLMSIM_EINVAL (one line in err) on bad requests: degrees, pins that do
 * not divide the GPUs, bounds. Nothing fitting is not an error: see
 * out->nrows, out->closest and out->hint. Free with llmsim_plan_out_release. */
int llmsim_plan_run(struct llmsim_train_ctx *ctx, const struct llmsim_plan_req *req,
		    struct llmsim_plan_out *out, struct llmsim_err *err);
void llmsim_plan_out_release(struct llmsim_plan_out *out);

/* Time, GPU-hours and energy to train `tokens` tokens at r's throughput:
 * energy from the power model's draw of each GPU at r's load
 * (llmsim_power_w; GPU boards only: host, network and cooling are not in
 * it). */
struct llmsim_plan_budget {
	double tokens, time_s, gpu_hours, power_w_per_gpu, energy_j;
};
void llmsim_plan_budget(const struct llmsim_gpu *gpu, const struct llmsim_train_result *r,
			double tokens, struct llmsim_plan_budget *b);

#endif
