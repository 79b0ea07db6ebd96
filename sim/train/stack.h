/*
 * stack.h - software stacks as data: which framework and release runs a
 * training step, which layouts it can launch, which overlaps it runs and
 * what memory it keeps beside the model's tensors. A stack is a YAML file,
 * hw/stacks/NAME.yaml in the data folder (core, megatron-2021,
 * megatron-2022, llama3, mcore-te, torchtitan, deepspeed), or any file a
 * user copies from one and edits (`--stack ./mine.yaml`).
 *
 * What a stack can launch is a set of features (one name each, below): a
 * layout needs the features its configuration uses (llmsim_stack_needs), and
 * a stack launches it when it has all of them and no pair it refuses
 * (`refuse:` lists features that do not combine in that framework, each with
 * its source). The planner searches only what the chosen stack launches;
 * `train` names the missing feature and the stacks that have it.
 *
 * Memory allowances (struct llmsim_train_allow, train.h) are per stack, each
 * a stated quantity with its source in the file.
 */
#ifndef LLMSIM_TRAIN_STACK_H
#define LLMSIM_TRAIN_STACK_H

#include <stddef.h>
#include <stdint.h>
#include "base/err.h"
#include "sim/train/train.h"

/* Layout features, by their names in a stack file. */
enum llmsim_feature {
	LLMSIM_FEAT_TP, LLMSIM_FEAT_SP, LLMSIM_FEAT_PP, LLMSIM_FEAT_UNEVEN_PP, LLMSIM_FEAT_CP,
	LLMSIM_FEAT_EP, LLMSIM_FEAT_INTERLEAVED, LLMSIM_FEAT_DUALPIPE,
	LLMSIM_FEAT_ZERO1,            /* distributed optimizer (optimizer states sharded) */
	LLMSIM_FEAT_ZERO2,            /* DeepSpeed ZeRO-2 (or the llama3 stack's FSDP) */
	LLMSIM_FEAT_ZERO3,            /* DeepSpeed ZeRO-3 */
	LLMSIM_FEAT_FSDP_MEGATRON,    /* Megatron-FSDP (--use-megatron-fsdp) */
	LLMSIM_FEAT_FSDP2,            /* PyTorch FSDP2 (fully_shard) */
	LLMSIM_FEAT_OFFLOAD_OPTIMIZER, LLMSIM_FEAT_OFFLOAD_PARAMS, LLMSIM_FEAT_OFFLOAD_ACTIVATIONS,
	LLMSIM_FEAT_DPU,
	LLMSIM_FEAT_RECOMPUTE_SELECTIVE, LLMSIM_FEAT_RECOMPUTE_FULL, LLMSIM_FEAT_RECOMPUTE_MODULES,
	LLMSIM_FEAT_RECOMPUTE_BLOCK,  /* full recompute of some layers of a stage */
	LLMSIM_FEAT_ATTN_NAIVE, LLMSIM_FEAT_ATTN_FLASH2, LLMSIM_FEAT_ATTN_FLASH3,
	LLMSIM_FEAT_FP8, LLMSIM_FEAT_LORA,
	LLMSIM_FEAT_COUNT
};
_Static_assert(LLMSIM_FEAT_COUNT <= 32, "features fit a 32-bit mask");
extern const char *const llmsim_feature_names[];  /* NULL-terminated, enum order */
/* A phrase for messages: "context parallelism", "ZeRO-3", ... */
const char *llmsim_feature_phrase(enum llmsim_feature f);

/* What a stack's launcher writes (`plan --emit`). */
enum llmsim_stack_emit { LLMSIM_EMIT_MEGATRON, LLMSIM_EMIT_DEEPSPEED, LLMSIM_EMIT_TORCHTITAN,
			 LLMSIM_EMIT_COUNT };
extern const char *const llmsim_stack_emit_names[]; /* megatron, deepspeed, torchtitan */

#define LLMSIM_STACK_MAX_REFUSE 16

struct llmsim_stack_refusal {
	uint32_t mask;                /* features that do not combine */
	char why[160];                /* its source, for messages */
};

struct llmsim_stack_def {
	char name[32];                /* "mcore-te" */
	char framework[96];           /* "Megatron-Core with Transformer Engine" */
	char release[64];             /* "core_v0.15.3, TE 2.8" */
	char source[256];             /* where the launch rules were read */
	char path[512];               /* the file it came from */
	enum llmsim_stack program;    /* the step's collectives as that release runs them */
	enum llmsim_recipe recipe;    /* optimizer-state bytes */
	enum llmsim_fsdp fsdp;        /* what ZeRO-2/3 runs as: none (DeepSpeed ZeRO or the
				       * recipe's own), megatron or fsdp2 */
	enum llmsim_stack_emit emit;
	uint32_t features;            /* bit (1u << enum llmsim_feature) */
	struct llmsim_stack_refusal refuse[LLMSIM_STACK_MAX_REFUSE];
	int nrefuse;
	uint32_t modules;             /* recompute modules it knows, bit per
				       * enum llmsim_recompute_module */
	/* overlaps it runs (the timing of TP/MoE overlap is the precision and
	 * communication work's; these say what the stack does) */
	int overlap_grad_reduce, overlap_param_gather, overlap_moe;
	int tp_overlap;               /* 0 none, 1 bulk, 2 userbuffers (NAMES.md) */
	struct llmsim_train_allow allow;
};

/* Load a stack by name (hw/stacks/NAME.yaml, or a name/alias inside one) or
 * by path. Errors carry file:line:col: an unknown key, an unknown feature or
 * module name, an impossible overlap (TP overlap without TP, grad-reduce
 * overlap without a data-parallel sharding), a value out of range. */
int llmsim_stack_load(const char *name_or_path, struct llmsim_stack_def *s,
		      struct llmsim_err *err);
/* The same for the bytes at buf (`name` in messages), for tests and fuzzing. */
int llmsim_stack_load_buf(const char *buf, size_t len, const char *name,
			  struct llmsim_stack_def *s, struct llmsim_err *err);

/* The shipped stacks, sorted by file name: fn(path, ctx) each. */
int llmsim_stack_list(void (*fn)(const char *path, void *ctx), void *ctx, struct llmsim_err *err);

/* The stack's program, recipe, sharding kind (what ZeRO-2/3 runs as),
 * allowances and name into c (what a stack decides; the layout is left
 * alone). */
void llmsim_stack_apply(const struct llmsim_stack_def *s, struct llmsim_train_cfg *c);

/* The features configuration c of model m needs, as a mask (the fsdp kind
 * counts only at ZeRO 2 and 3). */
uint32_t llmsim_stack_needs(const struct llmsim_model *m, const struct llmsim_train_cfg *c);

/* 0 when s launches c; else -1 with one line in why (may be NULL): the
 * feature it lacks or the pair it refuses. *missing (may be NULL): the
 * first feature it lacks, or -1 for a refused pair. */
int llmsim_stack_launches(const struct llmsim_stack_def *s, const struct llmsim_model *m,
			  const struct llmsim_train_cfg *c, char *why, size_t nwhy, int *missing);

/* "the S stack cannot launch PHRASE ('name'); stacks with it: a, b": the
 * shipped stacks that have feature f, into why. */
void llmsim_stack_lacks(const struct llmsim_stack_def *s, enum llmsim_feature f, char *why,
			size_t nwhy);

/* The same as llmsim_stack_launches, and when s lacks a feature, the
 * shipped stacks that have it (llmsim_stack_lacks's line). */
int llmsim_stack_check(const struct llmsim_stack_def *s, const struct llmsim_model *m,
		       const struct llmsim_train_cfg *c, char *why, size_t nwhy);

#endif
