/*
 * config.c - training configurations: defaults, names, and the validity
 * rules Megatron-LM enforces (divisibility of heads, layers, batch, ...).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/bounds.h"
#include "base/enum.h"
#include "train_int.h"

/* Each NULL-terminated (the YAML loaders' and the CLI's choices). */
const char *const llmsim_recompute_names[] = {
	[LLMSIM_RECOMP_NONE] = "none", [LLMSIM_RECOMP_SELECTIVE] = "selective",
	[LLMSIM_RECOMP_FULL] = "full", [LLMSIM_RECOMP_MODULES] = "modules",
	[LLMSIM_RECOMP_COUNT] = NULL};
const char *const llmsim_recompute_module_names[] = {
	[LLMSIM_RM_CORE_ATTN] = "core_attn", [LLMSIM_RM_MLP] = "mlp",
	[LLMSIM_RM_MOE_ACT] = "moe_act", [LLMSIM_RM_MLA_UP_PROJ] = "mla_up_proj",
	[LLMSIM_RM_LAYERNORM] = "layernorm", [LLMSIM_RM_MOE] = "moe",
	[LLMSIM_RM_SHARED_EXPERTS] = "shared_experts", [LLMSIM_RM_COUNT] = NULL};
const char *const llmsim_recompute_method_names[] = {
	[LLMSIM_RECOMP_UNIFORM] = "uniform", [LLMSIM_RECOMP_BLOCK] = "block",
	[LLMSIM_RECOMP_METHOD_COUNT] = NULL};
const char *const llmsim_fsdp_names[] = {
	[LLMSIM_FSDP_NONE] = "none", [LLMSIM_FSDP_MEGATRON] = "megatron",
	[LLMSIM_FSDP_FSDP2] = "fsdp2", [LLMSIM_FSDP_COUNT] = NULL};
_Static_assert(sizeof llmsim_recompute_module_names / sizeof *llmsim_recompute_module_names ==
	       LLMSIM_RM_COUNT + 1, "recompute module names");
_Static_assert(sizeof llmsim_recompute_method_names / sizeof *llmsim_recompute_method_names ==
	       LLMSIM_RECOMP_METHOD_COUNT + 1, "recompute method names");
_Static_assert(sizeof llmsim_fsdp_names / sizeof *llmsim_fsdp_names == LLMSIM_FSDP_COUNT + 1,
	       "fsdp names");
const char *const llmsim_pp_sched_names[] = {
	[LLMSIM_SCHED_1F1B] = "1f1b", [LLMSIM_SCHED_INTERLEAVED] = "interleaved",
	[LLMSIM_SCHED_DUALPIPE] = "dualpipe", [LLMSIM_SCHED_COUNT] = NULL};
const char *const llmsim_recipe_names[] = {
	[LLMSIM_RECIPE_AMP] = "amp", [LLMSIM_RECIPE_MEGATRON] = "megatron",
	[LLMSIM_RECIPE_ZERO] = "zero", [LLMSIM_RECIPE_LLAMA3] = "llama3",
	[LLMSIM_RECIPE_COUNT] = NULL};
const char *const llmsim_offload_names[] = {
	[LLMSIM_OFFLOAD_NONE] = "none", [LLMSIM_OFFLOAD_OPTIMIZER] = "optimizer",
	[LLMSIM_OFFLOAD_PARAMS] = "params", [LLMSIM_OFFLOAD_COUNT] = NULL};
const char *const llmsim_stack_names[] = {
	[LLMSIM_STACK_CORE] = "core", [LLMSIM_STACK_MEGATRON_2021] = "megatron-2021",
	[LLMSIM_STACK_MEGATRON_2022] = "megatron-2022", [LLMSIM_STACK_COUNT] = NULL};
const char *const llmsim_ddp_names[] = {
	[LLMSIM_DDP_STACK] = "stack", [LLMSIM_DDP_TORCH] = "torch", [LLMSIM_DDP_LOCAL] = "local",
	[LLMSIM_DDP_COUNT] = NULL};
_Static_assert(sizeof llmsim_ddp_names / sizeof *llmsim_ddp_names == LLMSIM_DDP_COUNT + 1,
	       "ddp names");
_Static_assert(sizeof llmsim_stack_names / sizeof *llmsim_stack_names == LLMSIM_STACK_COUNT + 1,
	       "stack names");
_Static_assert(sizeof llmsim_offload_names / sizeof *llmsim_offload_names ==
	       LLMSIM_OFFLOAD_COUNT + 1, "offload names");
_Static_assert(sizeof llmsim_recompute_names / sizeof *llmsim_recompute_names ==
	       LLMSIM_RECOMP_COUNT + 1, "recompute names");
_Static_assert(sizeof llmsim_pp_sched_names / sizeof *llmsim_pp_sched_names ==
	       LLMSIM_SCHED_COUNT + 1, "schedule names");
_Static_assert(sizeof llmsim_recipe_names / sizeof *llmsim_recipe_names ==
	       LLMSIM_RECIPE_COUNT + 1, "recipe names");

const char *llmsim_recompute_name(enum llmsim_recompute r)
{
	return llmsim_enum_label(llmsim_recompute_names, LLMSIM_RECOMP_COUNT, (int)r);
}

const char *llmsim_pp_sched_name(enum llmsim_pp_sched s)
{
	return llmsim_enum_label(llmsim_pp_sched_names, LLMSIM_SCHED_COUNT, (int)s);
}

const char *llmsim_recipe_name(enum llmsim_recipe r)
{
	return llmsim_enum_label(llmsim_recipe_names, LLMSIM_RECIPE_COUNT, (int)r);
}

const char *llmsim_offload_name(enum llmsim_offload o)
{
	return llmsim_enum_label(llmsim_offload_names, LLMSIM_OFFLOAD_COUNT, (int)o);
}

const char *llmsim_stack_name(enum llmsim_stack s)
{
	return llmsim_enum_label(llmsim_stack_names, LLMSIM_STACK_COUNT, (int)s);
}

double llmsim_train_stage_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	if (llmsim_train_pp_ends_in_slots(c)) /* the fullest rank (pp_layout.c) */
		return train_pp_max_layers(m, c);
	return train_stage_layers(m, c); /* train_int.h */
}

void llmsim_train_cfg_init(struct llmsim_train_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->gpus = c->tp = c->pp = c->dp = c->cp = c->ep = 1;
	c->micro_batch = 1;
	c->global_batch = 1024;
	c->seq = 4096;
	c->recompute = LLMSIM_RECOMP_NONE;
	c->schedule = LLMSIM_SCHED_1F1B;
	c->chunks = 1;
	c->dtype = LLMSIM_DT_BF16;
	c->recipe = LLMSIM_RECIPE_MEGATRON;
	c->attn = LLMSIM_ATTN_FLASH2;
	c->moe_imbalance = 1.0;
	c->sequence_parallel = 1;
	c->recompute_method = LLMSIM_RECOMP_UNIFORM;
	/* the allowances before stacks were data: what core, megatron-2021 and
	 * megatron-2022 state (hw/stacks/) */
	c->allow.context_bytes = 1.0e9;
	c->allow.fragmentation_frac = 0.05;
}

enum llmsim_attn_impl llmsim_train_sdpa(const struct llmsim_gpu *gpu)
{
	return !strcmp(gpu->arch, "hopper") || !strcmp(gpu->arch, "blackwell") ? LLMSIM_ATTN_FLASH3
									       : LLMSIM_ATTN_FLASH2;
}

void llmsim_train_cfg_precision(struct llmsim_train_cfg *c, enum llmsim_precision_recipe p)
{
	c->precision = p;
	c->dtype = llmsim_precision_desc(p)->gemm;
}

const char *const llmsim_tp_overlap_names[] = {
	[LLMSIM_TP_OVERLAP_NONE] = "none", [LLMSIM_TP_OVERLAP_BULK] = "bulk",
	[LLMSIM_TP_OVERLAP_UB] = "userbuffers", [LLMSIM_TP_OVERLAP_COUNT] = NULL,
};

const char *llmsim_tp_overlap_name(enum llmsim_tp_overlap o)
{
	return (unsigned)o < LLMSIM_TP_OVERLAP_COUNT ? llmsim_tp_overlap_names[o] : "?";
}

int train_cp_a2a_size(int gpn, const struct llmsim_train_cfg *c)
{
	if (c->cp <= 1 || c->cp_comm == LLMSIM_CP_P2P)
		return 1;
	if (c->cp_comm == LLMSIM_CP_A2A)
		return c->cp;
	int best = 1;
	for (int d = 1; d <= c->cp; d++)
		if (c->cp % d == 0 && (int64_t)d * c->tp <= gpn)
			best = d;
	return best;
}

void llmsim_train_cfg_torch(struct llmsim_train_cfg *c, const struct llmsim_gpu *gpu)
{
	c->engine = LLMSIM_ENGINE_TORCH;
	c->recipe = LLMSIM_RECIPE_AMP;
	c->attn = llmsim_train_sdpa(gpu);
	c->global_batch = c->micro_batch;
}

/* Append one violation to err->msg ("; "-separated). */
static void add(struct llmsim_err *err, int *first, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct llmsim_err *err, int *first, const char *fmt, ...)
{
	if (!err)
		return;
	size_t len = *first ? 0 : strlen(err->msg);
	if (*first)
		err->code = LLMSIM_EINVAL;
	else if (len + 2 < sizeof err->msg) {
		memcpy(err->msg + len, "; ", 3);
		len += 2;
	}
	*first = 0;
	va_list ap;
	va_start(ap, fmt);
	if (len < sizeof err->msg)
		vsnprintf(err->msg + len, sizeof err->msg - len, fmt, ap);
	va_end(ap);
}

#define VIOLATE(reason, ...)                                   \
	do {                                                   \
		if (r == LLMSIM_REJ_NONE)                      \
			r = (reason);                          \
		if (!err)                                      \
			return r;                              \
		add(err, &first, __VA_ARGS__);                 \
	} while (0)

double llmsim_train_max_imbalance(const struct llmsim_model *m)
{
	/* T tokens each routed to top_k of E experts: the mean expert gets
	 * T*top_k/E, the busiest at most all T */
	if (!m->has_moe || m->moe.experts <= 1 || m->moe.top_k < 1)
		return 1.0;
	return (double)m->moe.experts / m->moe.top_k;
}

enum llmsim_train_reject llmsim_train_check(const struct llmsim_model *m,
					    const struct llmsim_train_cfg *c,
					    struct llmsim_err *err)
{
	enum llmsim_train_reject r = LLMSIM_REJ_NONE;
	int first = 1;

	/* bounds first: the checks below form products of these values only
	 * once they are known to be bounded (base/bounds.h) */
	int unbounded = 0;
	if (c->gpus > LLMSIM_MAX_GPUS || c->tp > LLMSIM_MAX_GPUS || c->pp > LLMSIM_MAX_GPUS ||
	    c->dp > LLMSIM_MAX_GPUS || c->cp > LLMSIM_MAX_GPUS || c->ep > LLMSIM_MAX_GPUS) {
		unbounded = 1;
		VIOLATE(LLMSIM_REJ_GPUS, "at most %d GPUs (and as many in any parallel degree)",
			LLMSIM_MAX_GPUS);
	}
	if (c->global_batch > LLMSIM_MAX_BATCH || c->micro_batch > LLMSIM_MAX_BATCH) {
		unbounded = 1;
		VIOLATE(LLMSIM_REJ_BATCH, "at most %d sequences in a batch", LLMSIM_MAX_BATCH);
	}
	if (c->seq > LLMSIM_MAX_TOKENS) {
		unbounded = 1;
		VIOLATE(LLMSIM_REJ_SEQ, "at most %d tokens per sequence", LLMSIM_MAX_TOKENS);
	}
	if (c->chunks > LLMSIM_MAX_LAYERS) {
		unbounded = 1;
		VIOLATE(LLMSIM_REJ_SCHEDULE, "at most %d model chunks per stage", LLMSIM_MAX_LAYERS);
	}
	if (unbounded)
		return r;
	int64_t prod = 0; /* up to 2^80: checked */
	if (c->tp < 1 || c->pp < 1 || c->dp < 1 || c->cp < 1 || c->ep < 1 || c->gpus < 1)
		VIOLATE(LLMSIM_REJ_GPUS, "parallel degrees and --gpus must be >= 1");
	else if (llmsim_mul_i64((int64_t)c->tp * c->pp, (int64_t)c->dp * c->cp, &prod) ||
		 prod != c->gpus)
		VIOLATE(LLMSIM_REJ_GPUS, "tp*pp*dp*cp = %d*%d*%d*%d = %.0f, not --gpus %d",
			c->tp, c->pp, c->dp, c->cp, (double)c->tp * c->pp * c->dp * c->cp, c->gpus);
	if (c->tp >= 1 && m->heads % c->tp)
		VIOLATE(LLMSIM_REJ_HEADS, "%d attention heads not divisible by tp %d",
			m->heads, c->tp);
	else if (c->tp >= 1 && !m->has_mla && m->kv_heads % c->tp && c->tp % m->kv_heads)
		VIOLATE(LLMSIM_REJ_HEADS, "%d kv heads and tp %d: neither divides the other",
			m->kv_heads, c->tp);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED && c->chunks < 2)
		VIOLATE(LLMSIM_REJ_SCHEDULE, "interleaved schedule needs --chunks >= 2");
	if (c->schedule != LLMSIM_SCHED_INTERLEAVED && c->chunks != 1)
		VIOLATE(LLMSIM_REJ_SCHEDULE, "--chunks needs --schedule interleaved");
	if (c->schedule == LLMSIM_SCHED_DUALPIPE &&
	    (c->pp < 2 || c->pp % 2 || c->micro_batch < 1 || c->dp < 1 ||
	     (c->global_batch / ((int64_t)c->micro_batch * c->dp)) % 2))
		VIOLATE(LLMSIM_REJ_SCHEDULE, "DualPipe needs an even number of pipeline stages "
			"and of micro-batches (DeepSeek-V3 Sec. 3.2.1)");
	if (c->schedule == LLMSIM_SCHED_DUALPIPE && c->recipe == LLMSIM_RECIPE_LLAMA3)
		VIOLATE(LLMSIM_REJ_SCHEDULE, "the llama3 recipe runs Megatron's schedules, not "
			"DualPipe");
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED && c->pp < 2)
		VIOLATE(LLMSIM_REJ_SCHEDULE, "interleaved schedule needs pp >= 2");
	int v = c->chunks >= 1 ? c->chunks : 1;
	if (c->pp >= 1 && !c->uneven_pp && llmsim_train_pp_slots(m, c) % ((int64_t)c->pp * v))
		VIOLATE(LLMSIM_REJ_LAYERS, "%d layers%s not divisible by pp*chunks = %lld",
			m->layers, llmsim_train_pp_ends_in_slots(c) ? " + embedding + head" : "",
			(long long)c->pp * v);
	if (llmsim_train_pp_ends_in_slots(c) && (int64_t)c->pp * v > llmsim_train_pp_slots(m, c))
		VIOLATE(LLMSIM_REJ_LAYERS, "pp*chunks = %lld: more model chunks than the %lld "
			"layer slots", (long long)c->pp * v, (long long)llmsim_train_pp_slots(m, c));
	if (llmsim_train_pp_empty_chunks(m, c))
		VIOLATE(LLMSIM_REJ_LAYERS, "pp*chunks = %lld over %lld layer slots leaves model "
			"chunks without a layer", (long long)c->pp * v,
			(long long)llmsim_train_pp_slots(m, c));
	if (c->recipe == LLMSIM_RECIPE_LLAMA3 && (c->lora_rank || c->offload))
		VIOLATE(LLMSIM_REJ_OPTION, "the llama3 recipe is Meta's pre-training stack: every "
			"weight trained in HBM (no LoRA, no offload)");
	if (llmsim_train_pp_ends_in_slots(c) && c->chunks > 64)
		VIOLATE(LLMSIM_REJ_SCHEDULE, "--chunks %d: the llama3 split takes at most 64",
			c->chunks);
	if (c->micro_batch < 1 || c->global_batch < 1)
		VIOLATE(LLMSIM_REJ_BATCH, "batch sizes must be >= 1");
	else if (c->dp >= 1 && c->global_batch % ((int64_t)c->micro_batch * c->dp))
		VIOLATE(LLMSIM_REJ_BATCH,
			"global batch %lld not divisible by micro-batch*dp = %d*%d",
			(long long)c->global_batch, c->micro_batch, c->dp);
	else if (c->schedule == LLMSIM_SCHED_INTERLEAVED && c->pp > 1 &&
		 (c->global_batch / ((int64_t)c->micro_batch * c->dp)) % c->pp)
		VIOLATE(LLMSIM_REJ_SCHEDULE,
			"interleaved schedule needs micro-batches (%lld) divisible by pp %d",
			(long long)(c->global_batch / ((int64_t)c->micro_batch * c->dp)), c->pp);
	if (c->seq < 1)
		VIOLATE(LLMSIM_REJ_SEQ, "sequence length must be >= 1");
	else if (c->cp > 1 && c->seq % (2 * c->cp))
		VIOLATE(LLMSIM_REJ_SEQ, "seq %lld not divisible by 2*cp = %d (load-balanced ring)",
			(long long)c->seq, 2 * c->cp);
	if (c->ep > 1 && !m->has_moe)
		VIOLATE(LLMSIM_REJ_EXPERTS, "ep %d needs an MoE model", c->ep);
	else if (c->ep > 1 && m->moe.experts % c->ep)
		VIOLATE(LLMSIM_REJ_EXPERTS, "%d experts not divisible by ep %d", m->moe.experts,
			c->ep);
	else if (c->ep > 1 && ((int64_t)c->dp * c->cp) % c->ep)
		VIOLATE(LLMSIM_REJ_EXPERTS, "ep %d does not divide dp*cp = %d", c->ep,
			c->dp * c->cp);
	if (c->zero < 0 || c->zero > 3)
		VIOLATE(LLMSIM_REJ_OPTION, "--zero must be 0, 1, 2 or 3");
	if (c->zero == 3 && c->pp > 1)
		VIOLATE(LLMSIM_REJ_OPTION, "ZeRO-3 with pipeline parallelism is not supported "
			"(parameters would be re-gathered every micro-batch of every stage)");
	if ((unsigned)c->precision >= LLMSIM_PREC_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "unknown precision recipe (%d)", (int)c->precision);
	else if (c->dtype != llmsim_precision_desc(c->precision)->gemm)
		VIOLATE(LLMSIM_REJ_OPTION, "--precision %s runs its GEMMs in %s, not %s",
			llmsim_precision_name(c->precision),
			llmsim_dtype_name(llmsim_precision_desc(c->precision)->gemm),
			llmsim_dtype_name(c->dtype) ? llmsim_dtype_name(c->dtype) : "?");
	if ((unsigned)c->tp_overlap >= LLMSIM_TP_OVERLAP_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "unknown TP overlap (%d)", (int)c->tp_overlap);
	else if (c->tp_overlap != LLMSIM_TP_OVERLAP_NONE && c->tp == 1)
		VIOLATE(LLMSIM_REJ_OPTION, "--tp-overlap %s overlaps tensor-parallel "
			"communication: it needs tp > 1", llmsim_tp_overlap_name(c->tp_overlap));
	else if (c->tp_overlap != LLMSIM_TP_OVERLAP_NONE && !c->sequence_parallel)
		VIOLATE(LLMSIM_REJ_OPTION, "--tp-overlap %s splits all-gathers and "
			"reduce-scatters: it needs sequence parallelism (drop --no-sp)",
			llmsim_tp_overlap_name(c->tp_overlap));
	if ((unsigned)c->cp_comm >= LLMSIM_CP_COMM_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "unknown CP communication (%d)", (int)c->cp_comm);
	else if (c->cp_comm != LLMSIM_CP_P2P && c->cp == 1)
		VIOLATE(LLMSIM_REJ_OPTION, "--cp-comm %s is context parallelism's: it needs cp > 1",
			llmsim_cp_comm_name(c->cp_comm));
	else if (c->cp_comm == LLMSIM_CP_A2A && c->tp >= 1 && m->heads % c->tp == 0 &&
		 (m->heads / c->tp) % c->cp)
		VIOLATE(LLMSIM_REJ_HEADS, "--cp-comm a2a splits heads over CP: %d heads per TP "
			"rank are not divisible by cp %d", m->heads / c->tp, c->cp);
	else if (c->cp_comm != LLMSIM_CP_P2P && c->recipe == LLMSIM_RECIPE_LLAMA3)
		VIOLATE(LLMSIM_REJ_OPTION, "the llama3 recipe all-gathers K and V for CP; "
			"--cp-comm %s is Megatron-Core's", llmsim_cp_comm_name(c->cp_comm));
	if ((unsigned)c->moe_dispatch >= LLMSIM_MOE_DISPATCH_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "unknown MoE dispatch (%d)", (int)c->moe_dispatch);
	/* a dense model has no tokens to dispatch: the MoE options do nothing */
	if (c->attn != LLMSIM_ATTN_NAIVE && c->attn != LLMSIM_ATTN_FLASH2 &&
	    c->attn != LLMSIM_ATTN_FLASH3)
		VIOLATE(LLMSIM_REJ_OPTION, "--attention must be naive, flash2 or flash3");
	if (c->lora_rank < 0 || c->lora_rank > LLMSIM_MAX_WIDTH)
		VIOLATE(LLMSIM_REJ_OPTION, "--lora-rank must be 0 to %d", LLMSIM_MAX_WIDTH);
	if (c->chunks > m->layers)
		VIOLATE(LLMSIM_REJ_SCHEDULE, "--chunks %d: more model chunks than the %d layers",
			c->chunks, m->layers);
	double imb_max = llmsim_train_max_imbalance(m);
	if (!(c->moe_imbalance >= 1.0))
		VIOLATE(LLMSIM_REJ_OPTION, "--moe-imbalance must be >= 1");
	else if (m->has_moe && !(c->moe_imbalance <= imb_max))
		VIOLATE(LLMSIM_REJ_OPTION, "--moe-imbalance %g: at most %g, experts/top_k (the "
			"busiest expert can get every token, no more)", c->moe_imbalance, imb_max);
	if ((unsigned)c->offload >= LLMSIM_OFFLOAD_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "--offload must be none, optimizer or params");
	else if (c->offload != LLMSIM_OFFLOAD_NONE && c->recipe == LLMSIM_RECIPE_AMP)
		VIOLATE(LLMSIM_REJ_OPTION, "offload keeps 16-bit weights on the GPU: use the "
			"megatron or zero recipe, not amp");
	else if (c->offload == LLMSIM_OFFLOAD_OPTIMIZER && c->zero < 1)
		VIOLATE(LLMSIM_REJ_OPTION, "--offload optimizer needs --zero 1, 2 or 3 "
			"(DeepSpeed offloads ZeRO partitions)");
	else if (c->offload == LLMSIM_OFFLOAD_PARAMS && c->zero != 3)
		VIOLATE(LLMSIM_REJ_OPTION, "--offload params needs --zero 3 (ZeRO-Infinity)");
	if (c->dpu && c->offload == LLMSIM_OFFLOAD_NONE)
		VIOLATE(LLMSIM_REJ_OPTION, "--dpu needs --offload optimizer or params");
	if (c->recompute == LLMSIM_RECOMP_MODULES &&
	    (!c->recompute_modules || c->recompute_modules >> LLMSIM_RM_COUNT))
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute modules needs --recompute-modules "
			"(core_attn, mlp, moe_act, mla_up_proj, layernorm, moe, shared_experts)");
	if (c->recompute == LLMSIM_RECOMP_MODULES && !m->has_moe &&
	    (c->recompute_modules & (1u << LLMSIM_RM_MOE | 1u << LLMSIM_RM_MOE_ACT |
				     1u << LLMSIM_RM_SHARED_EXPERTS)))
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute-modules moe, moe_act and shared_experts "
			"need an MoE model, and %s is dense", m->name);
	if (c->recompute == LLMSIM_RECOMP_MODULES && !m->has_mla &&
	    (c->recompute_modules & 1u << LLMSIM_RM_MLA_UP_PROJ))
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute-modules mla_up_proj needs MLA, and %s has none",
			m->name);
	if (c->recompute == LLMSIM_RECOMP_MODULES &&
	    (c->recompute_modules & 1u << LLMSIM_RM_MOE) &&
	    (c->recompute_modules & 1u << LLMSIM_RM_MOE_ACT))
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute-modules moe already recomputes moe_act "
			"(Megatron-Core refuses both)");
	if (c->recompute != LLMSIM_RECOMP_MODULES && c->recompute_modules)
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute-modules needs --recompute modules");
	if ((unsigned)c->recompute_method >= LLMSIM_RECOMP_METHOD_COUNT || c->recompute_layers < 0 ||
	    c->recompute_layers > LLMSIM_MAX_LAYERS)
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute-method uniform or block, "
			"--recompute-num-layers 0 to %d", LLMSIM_MAX_LAYERS);
	else if (c->recompute != LLMSIM_RECOMP_FULL &&
		 (c->recompute_method != LLMSIM_RECOMP_UNIFORM || c->recompute_layers))
		VIOLATE(LLMSIM_REJ_OPTION, "--recompute-method and --recompute-num-layers need "
			"--recompute full");
	if (!(c->offload_activations >= 0 && c->offload_activations <= 1))
		VIOLATE(LLMSIM_REJ_OPTION, "--offload-activations is a fraction, 0 to 1");
	if ((unsigned)c->fsdp >= LLMSIM_FSDP_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "--fsdp must be none, megatron or fsdp2");
	else if (c->fsdp != LLMSIM_FSDP_NONE && c->zero >= 2 && c->offload != LLMSIM_OFFLOAD_NONE)
		VIOLATE(LLMSIM_REJ_OPTION, "--fsdp %s with --offload: offload is DeepSpeed's "
			"(--fsdp none)", llmsim_fsdp_names[c->fsdp]);
	if (!(c->allow.context_bytes >= 0) || !(c->allow.fragmentation_frac >= 0) ||
	    !(c->allow.fragmentation_frac < 1) || !(c->allow.nccl_bytes_per_group >= 0) ||
	    !(c->allow.cuda_graph_bytes >= 0) || !(c->allow.error_frac >= 0) ||
	    !(c->allow.error_frac < 1))
		VIOLATE(LLMSIM_REJ_OPTION, "memory allowances must be >= 0 (fractions below 1)");
	if ((unsigned)c->recompute >= LLMSIM_RECOMP_COUNT ||
	    (unsigned)c->recipe >= LLMSIM_RECIPE_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "bad recompute or recipe");
	if (c->engine != LLMSIM_ENGINE_FUSED && c->engine != LLMSIM_ENGINE_TORCH)
		VIOLATE(LLMSIM_REJ_OPTION, "--engine %s: training runs as fused (Megatron-LM) or "
			"torch (plain PyTorch); HF transformers' training is not modelled",
			llmsim_engine_name(c->engine));
	if (c->engine == LLMSIM_ENGINE_TORCH) {
		/* what the torch program is (train.h): one GPU, every weight */
		if (c->gpus != 1 || c->tp != 1 || c->pp != 1 || c->dp != 1 || c->cp != 1 ||
		    c->ep != 1 || c->zero)
			VIOLATE(LLMSIM_REJ_OPTION, "--engine torch runs on one GPU (tp, pp, dp, "
				"cp, ep 1, ZeRO 0)");
		if (c->recipe != LLMSIM_RECIPE_AMP)
			VIOLATE(LLMSIM_REJ_OPTION, "--engine torch trains fp32 parameters under "
				"autocast: the amp recipe, not %s", llmsim_recipe_name(c->recipe));
		if (c->recompute == LLMSIM_RECOMP_SELECTIVE || c->recompute == LLMSIM_RECOMP_MODULES ||
		    c->recompute_layers || c->offload_activations > 0 || c->fsdp)
			VIOLATE(LLMSIM_REJ_OPTION, "--engine torch recomputes none or full "
				"(torch.utils.checkpoint per layer, every layer), not selective or "
				"modules, and offloads no activations and shards nothing (--fsdp none)");
		if (c->dtype != LLMSIM_DT_BF16)
			VIOLATE(LLMSIM_REJ_OPTION, "--engine torch autocasts to bf16, not %s",
				llmsim_dtype_name(c->dtype));
		if (c->lora_rank || c->offload != LLMSIM_OFFLOAD_NONE)
			VIOLATE(LLMSIM_REJ_OPTION, "--engine torch trains every weight in HBM "
				"(no LoRA, no offload)");
		if (m->has_moe || m->has_mla)
			VIOLATE(LLMSIM_REJ_OPTION, "--engine torch runs dense models with "
				"multi-head or grouped-query attention: %s has %s", m->name,
				m->has_moe ? "experts" : "MLA");
	}
	if ((unsigned)c->operand_data >= LLMSIM_OPD_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "unknown operand data (%d)", (int)c->operand_data);
	if ((unsigned)c->load >= LLMSIM_LOAD_COUNT)
		VIOLATE(LLMSIM_REJ_OPTION, "unknown load (%d)", (int)c->load);
	if (c->load_rho < 0 || c->load_rho > 1 || c->load_rho != c->load_rho)
		VIOLATE(LLMSIM_REJ_OPTION, "a load's tensor intensity must be in (0, 1]");
	return r;
}
