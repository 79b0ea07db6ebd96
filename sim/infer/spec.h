/*
 * spec.h - speculative decoding: a draft model proposing gamma tokens that
 * the target verifies in one step (Leviathan et al. 2023), Medusa heads
 * verifying a candidate tree, and DeepSeek-V3-style multi-token prediction
 * (MTP) modules as a one-layer draft. The acceptance math is closed form;
 * every cost (the draft's steps, the target's multi-token verify step) is
 * priced by the GPU model.
 */
#ifndef LLMSIM_SPEC_H
#define LLMSIM_SPEC_H

#include "base/bounds.h"
#include "infer.h"

#define LLMSIM_SPEC_MAX LLMSIM_MAX_DRAFT

/* Expected tokens per target step when draft position i (1-based) is
 * accepted with probability alpha[i-1] given all before it were:
 * 1 + sum_{j=1..k} prod_{i=1..j} alpha_i. */
double llmsim_spec_expected_tokens(const double *alpha, int k);

/* The same for one alpha: (1 - a^(k+1)) / (1 - a), and k + 1 at a = 1. */
double llmsim_spec_expected_tokens_const(double alpha, int k);

enum llmsim_spec_kind { LLMSIM_SPEC_DRAFT, LLMSIM_SPEC_MEDUSA, LLMSIM_SPEC_MTP };

struct llmsim_spec_cfg {
	enum llmsim_spec_kind kind;
	struct llmsim_infer_cfg target;
	struct llmsim_infer_cfg draft;  /* DRAFT: the draft model's replica */
	int gamma;                      /* draft tokens, Medusa heads, or MTP depth */
	double alpha[LLMSIM_SPEC_MAX];  /* acceptance per position */
	int nalpha;                     /* 1: alpha[0] for every position; else gamma */
	int tree;                       /* MEDUSA: candidate tokens verified per step */
	int64_t batch, context;         /* sequences, and tokens already cached */
};

struct llmsim_spec_result {
	double expected_tokens_per_step;
	double target_step_s;   /* plain decode step of the target (one token) */
	double verify_s;        /* target step verifying gamma+1 (or tree) tokens */
	double draft_s;         /* proposing: gamma draft steps, heads or MTP modules */
	double step_s;          /* draft_s + verify_s */
	double tpot_s;          /* step_s / expected tokens */
	double speedup;         /* target_step_s / tpot_s */
	int64_t verify_tokens;  /* query tokens per sequence in the verify step */
	/* memory of one GPU of the target's replica */
	struct llmsim_infer_mem mem;    /* the target's */
	double kv_bytes;                /* the batch's cache: target (context + verify
					 * tokens) and draft (context + gamma) */
	double extra_weight_bytes;      /* the draft model, Medusa heads or MTP modules */
};

/* Price one speculative step at the configured batch and context. Fails on
 * acceptance rates outside [0, 1], gamma outside 1..LLMSIM_SPEC_MAX, a
 * GPU-model error, or with LLMSIM_ENOFIT (as `infer` does) when the
 * target's weights, the draft's (or the heads' / modules') and the batch's
 * KV cache do not fit in the target's GPUs. */
int llmsim_spec_run(const struct llmsim_spec_cfg *cfg, struct llmsim_spec_result *res,
		    struct llmsim_err *err);

/* The checks of llmsim_spec_run on gamma, the acceptance rates and the
 * Medusa tree (batch and context aside): 0 or LLMSIM_EINVAL. */
int llmsim_spec_check(const struct llmsim_spec_cfg *cfg, struct llmsim_err *err);

/* What speculation adds on each of the target's GPUs: the draft model's
 * weights (Medusa heads: W1 [h, h] on every rank, W2 [h, vocab/tp]; MTP
 * modules: a layer and the 2h -> h projection each) in *weight_bytes, and
 * the draft model's KV cache per token (0 but for a draft model). */
int llmsim_spec_extra(const struct llmsim_spec_cfg *cfg, double *weight_bytes,
		      double *draft_kv_bytes_per_token, struct llmsim_err *err);

/* The time to propose one step's drafts for batch sequences at context
 * tokens: gamma draft-model steps, the Medusa heads, or the MTP modules
 * (the verify step is the target's own decode step of gamma + 1 or tree
 * query tokens). cfg's batch and context are not used. */
int llmsim_spec_draft(const struct llmsim_spec_cfg *cfg, int64_t batch, int64_t context,
		      double *draft_s, struct llmsim_err *err);

#endif
