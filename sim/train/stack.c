/*
 * stack.c - software stacks as data (stack.h): the loader of
 * hw/stacks/NAME.yaml with located errors, the features a configuration
 * needs, and whether a stack launches it.
 */
#include "stack.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/datafind.h"
#include "base/yaml.h"

const char *const llmsim_feature_names[] = {
	[LLMSIM_FEAT_TP] = "tp",
	[LLMSIM_FEAT_SP] = "sp",
	[LLMSIM_FEAT_PP] = "pp",
	[LLMSIM_FEAT_UNEVEN_PP] = "uneven_pp",
	[LLMSIM_FEAT_CP] = "cp",
	[LLMSIM_FEAT_EP] = "ep",
	[LLMSIM_FEAT_INTERLEAVED] = "interleaved",
	[LLMSIM_FEAT_DUALPIPE] = "dualpipe",
	[LLMSIM_FEAT_ZERO1] = "zero1",
	[LLMSIM_FEAT_ZERO2] = "zero2",
	[LLMSIM_FEAT_ZERO3] = "zero3",
	[LLMSIM_FEAT_FSDP_MEGATRON] = "fsdp_megatron",
	[LLMSIM_FEAT_FSDP2] = "fsdp2",
	[LLMSIM_FEAT_OFFLOAD_OPTIMIZER] = "offload_optimizer",
	[LLMSIM_FEAT_OFFLOAD_PARAMS] = "offload_params",
	[LLMSIM_FEAT_OFFLOAD_ACTIVATIONS] = "offload_activations",
	[LLMSIM_FEAT_DPU] = "dpu",
	[LLMSIM_FEAT_RECOMPUTE_SELECTIVE] = "recompute_selective",
	[LLMSIM_FEAT_RECOMPUTE_FULL] = "recompute_full",
	[LLMSIM_FEAT_RECOMPUTE_MODULES] = "recompute_modules",
	[LLMSIM_FEAT_RECOMPUTE_BLOCK] = "recompute_block",
	[LLMSIM_FEAT_ATTN_NAIVE] = "attention_naive",
	[LLMSIM_FEAT_ATTN_FLASH2] = "attention_flash2",
	[LLMSIM_FEAT_ATTN_FLASH3] = "attention_flash3",
	[LLMSIM_FEAT_FP8] = "fp8",
	[LLMSIM_FEAT_LORA] = "lora",
	[LLMSIM_FEAT_COUNT] = NULL,
};

static const char *const phrases[LLMSIM_FEAT_COUNT] = {
	[LLMSIM_FEAT_TP] = "tensor parallelism",
	[LLMSIM_FEAT_SP] = "sequence parallelism",
	[LLMSIM_FEAT_PP] = "pipeline parallelism",
	[LLMSIM_FEAT_UNEVEN_PP] = "pipeline stages of unequal layer counts",
	[LLMSIM_FEAT_CP] = "context parallelism",
	[LLMSIM_FEAT_EP] = "expert parallelism",
	[LLMSIM_FEAT_INTERLEAVED] = "the interleaved pipeline schedule",
	[LLMSIM_FEAT_DUALPIPE] = "the DualPipe schedule",
	[LLMSIM_FEAT_ZERO1] = "a distributed optimizer (ZeRO-1)",
	[LLMSIM_FEAT_ZERO2] = "ZeRO-2",
	[LLMSIM_FEAT_ZERO3] = "ZeRO-3",
	[LLMSIM_FEAT_FSDP_MEGATRON] = "Megatron-FSDP",
	[LLMSIM_FEAT_FSDP2] = "FSDP2",
	[LLMSIM_FEAT_OFFLOAD_OPTIMIZER] = "optimizer offload",
	[LLMSIM_FEAT_OFFLOAD_PARAMS] = "parameter offload (ZeRO-Infinity)",
	[LLMSIM_FEAT_OFFLOAD_ACTIVATIONS] = "activation offload",
	[LLMSIM_FEAT_DPU] = "the delayed parameter update",
	[LLMSIM_FEAT_RECOMPUTE_SELECTIVE] = "selective recomputation",
	[LLMSIM_FEAT_RECOMPUTE_FULL] = "full recomputation",
	[LLMSIM_FEAT_RECOMPUTE_MODULES] = "recomputation by module",
	[LLMSIM_FEAT_RECOMPUTE_BLOCK] = "full recomputation of some layers (block)",
	[LLMSIM_FEAT_ATTN_NAIVE] = "unfused attention",
	[LLMSIM_FEAT_ATTN_FLASH2] = "FlashAttention-2",
	[LLMSIM_FEAT_ATTN_FLASH3] = "FlashAttention-3",
	[LLMSIM_FEAT_FP8] = "FP8 matmuls",
	[LLMSIM_FEAT_LORA] = "LoRA",
};
_Static_assert(sizeof llmsim_feature_names / sizeof *llmsim_feature_names ==
	       LLMSIM_FEAT_COUNT + 1, "feature names");

const char *const llmsim_stack_emit_names[] = {"megatron", "deepspeed", "torchtitan", NULL};
_Static_assert(sizeof llmsim_stack_emit_names / sizeof *llmsim_stack_emit_names ==
	       LLMSIM_EMIT_COUNT + 1, "emit names");

static const char *const tp_overlap_names[] = {"none", "bulk", "userbuffers", NULL};

const char *llmsim_feature_phrase(enum llmsim_feature f)
{
	return (unsigned)f < LLMSIM_FEAT_COUNT ? phrases[f] : "?";
}

#define BIT(f) (1u << (f))

uint32_t llmsim_stack_needs(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	uint32_t n = 0;
	if (c->tp > 1)
		n |= BIT(LLMSIM_FEAT_TP);
	if (c->tp > 1 && c->sequence_parallel)
		n |= BIT(LLMSIM_FEAT_SP);
	if (c->pp > 1)
		n |= BIT(LLMSIM_FEAT_PP);
	if (c->pp > 1 && c->uneven_pp &&
	    llmsim_train_pp_slots(m, c) % ((int64_t)c->pp * (c->chunks > 1 ? c->chunks : 1)))
		n |= BIT(LLMSIM_FEAT_UNEVEN_PP);
	if (c->cp > 1)
		n |= BIT(LLMSIM_FEAT_CP);
	if (c->ep > 1)
		n |= BIT(LLMSIM_FEAT_EP);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		n |= BIT(LLMSIM_FEAT_INTERLEAVED);
	if (c->schedule == LLMSIM_SCHED_DUALPIPE)
		n |= BIT(LLMSIM_FEAT_DUALPIPE);
	if (c->zero == 1)
		n |= BIT(LLMSIM_FEAT_ZERO1);
	if (c->zero >= 2)
		n |= c->fsdp == LLMSIM_FSDP_MEGATRON ? BIT(LLMSIM_FEAT_FSDP_MEGATRON)
		     : c->fsdp == LLMSIM_FSDP_FSDP2  ? BIT(LLMSIM_FEAT_FSDP2)
		     : c->zero == 2		     ? BIT(LLMSIM_FEAT_ZERO2)
						     : BIT(LLMSIM_FEAT_ZERO3);
	if (c->offload == LLMSIM_OFFLOAD_OPTIMIZER)
		n |= BIT(LLMSIM_FEAT_OFFLOAD_OPTIMIZER);
	if (c->offload == LLMSIM_OFFLOAD_PARAMS)
		n |= BIT(LLMSIM_FEAT_OFFLOAD_PARAMS);
	if (c->offload_activations > 0)
		n |= BIT(LLMSIM_FEAT_OFFLOAD_ACTIVATIONS);
	if (c->dpu)
		n |= BIT(LLMSIM_FEAT_DPU);
	if (c->recompute == LLMSIM_RECOMP_SELECTIVE)
		n |= BIT(LLMSIM_FEAT_RECOMPUTE_SELECTIVE);
	if (c->recompute == LLMSIM_RECOMP_FULL)
		n |= BIT(LLMSIM_FEAT_RECOMPUTE_FULL);
	if (c->recompute == LLMSIM_RECOMP_FULL && c->recompute_method == LLMSIM_RECOMP_BLOCK)
		n |= BIT(LLMSIM_FEAT_RECOMPUTE_BLOCK);
	if (c->recompute == LLMSIM_RECOMP_MODULES)
		n |= BIT(LLMSIM_FEAT_RECOMPUTE_MODULES);
	if (c->attn == LLMSIM_ATTN_NAIVE)
		n |= BIT(LLMSIM_FEAT_ATTN_NAIVE);
	if (c->attn == LLMSIM_ATTN_FLASH2)
		n |= BIT(LLMSIM_FEAT_ATTN_FLASH2);
	if (c->attn == LLMSIM_ATTN_FLASH3)
		n |= BIT(LLMSIM_FEAT_ATTN_FLASH3);
	if (c->dtype == LLMSIM_DT_FP8)
		n |= BIT(LLMSIM_FEAT_FP8);
	if (c->lora_rank > 0)
		n |= BIT(LLMSIM_FEAT_LORA);
	return n;
}

/* "a, b and c" of the features in mask. */
static void mask_phrase(uint32_t mask, char *buf, size_t n)
{
	size_t len = 0;
	int k = 0, total = __builtin_popcount(mask);
	buf[0] = 0;
	for (int f = 0; f < LLMSIM_FEAT_COUNT && len < n; f++) {
		if (!(mask & BIT(f)))
			continue;
		const char *sep = k == 0 ? "" : k == total - 1 ? " with " : ", ";
		int w = snprintf(buf + len, n - len, "%s%s", sep, phrases[f]);
		if (w > 0)
			len += (size_t)w;
		k++;
	}
}

int llmsim_stack_launches(const struct llmsim_stack_def *s, const struct llmsim_model *m,
			  const struct llmsim_train_cfg *c, char *why, size_t nwhy, int *missing)
{
	uint32_t need = llmsim_stack_needs(m, c);
	uint32_t lack = need & ~s->features;
	if (missing)
		*missing = -1;
	if (lack) {
		int f = __builtin_ctz(lack);
		if (missing)
			*missing = f;
		if (why)
			snprintf(why, nwhy, "the %s stack cannot launch %s ('%s')", s->name,
				 phrases[f], llmsim_feature_names[f]);
		return -1;
	}
	if (c->recompute == LLMSIM_RECOMP_MODULES && (c->recompute_modules & ~s->modules)) {
		int k = __builtin_ctz(c->recompute_modules & ~s->modules);
		if (why)
			snprintf(why, nwhy, "the %s stack does not recompute module '%s'", s->name,
				 llmsim_recompute_module_names[k]);
		return -1;
	}
	for (int i = 0; i < s->nrefuse; i++)
		if ((need & s->refuse[i].mask) == s->refuse[i].mask) {
			if (why) {
				char p[256];
				mask_phrase(s->refuse[i].mask, p, sizeof p);
				snprintf(why, nwhy, "the %s stack refuses %s (%s)", s->name, p,
					 s->refuse[i].why);
			}
			return -1;
		}
	return 0;
}

/* ---- the shipped stacks that have a feature ---- */

struct having {
	int feature;
	char *buf;
	size_t n, len;
	int count;
};

static void add_having(const char *path, void *ctx)
{
	struct having *h = ctx;
	struct llmsim_stack_def s;
	struct llmsim_err e = {0};
	if (llmsim_stack_load(path, &s, &e) || !(s.features & BIT(h->feature)))
		return;
	if (h->len < h->n) {
		int w = snprintf(h->buf + h->len, h->n - h->len, "%s%s", h->count ? ", " : "",
				 s.name);
		if (w > 0)
			h->len += (size_t)w;
	}
	h->count++;
}

void llmsim_stack_lacks(const struct llmsim_stack_def *s, enum llmsim_feature f, char *why,
			size_t nwhy)
{
	char names[256];
	struct having h = {.feature = f, .buf = names, .n = sizeof names};
	names[0] = 0;
	struct llmsim_err e = {0};
	llmsim_stack_list(add_having, &h, &e);
	snprintf(why, nwhy, "the %s stack cannot launch %s ('%s'); %s%s", s->name,
		 llmsim_feature_phrase(f), llmsim_feature_names[f],
		 h.count ? "stacks with it: " : "no shipped stack has it", names);
}

int llmsim_stack_check(const struct llmsim_stack_def *s, const struct llmsim_model *m,
		       const struct llmsim_train_cfg *c, char *why, size_t nwhy)
{
	int missing;
	if (!llmsim_stack_launches(s, m, c, why, nwhy, &missing))
		return 0;
	if (missing >= 0 && why)
		llmsim_stack_lacks(s, (enum llmsim_feature)missing, why, nwhy);
	return -1;
}

/* ---- loading ---- */

static const struct llmsim_yfield top_fields[] = {
	{.key = "name", .type = LLMSIM_YF_STRING, .offset = offsetof(struct llmsim_stack_def, name),
	 .size = sizeof ((struct llmsim_stack_def *)0)->name, .required = LLMSIM_YF_REQUIRED},
	{.key = "framework", .type = LLMSIM_YF_STRING,
	 .offset = offsetof(struct llmsim_stack_def, framework),
	 .size = sizeof ((struct llmsim_stack_def *)0)->framework, .required = LLMSIM_YF_REQUIRED},
	{.key = "release", .type = LLMSIM_YF_STRING,
	 .offset = offsetof(struct llmsim_stack_def, release),
	 .size = sizeof ((struct llmsim_stack_def *)0)->release, .required = LLMSIM_YF_REQUIRED},
	{.key = "source", .type = LLMSIM_YF_STRING,
	 .offset = offsetof(struct llmsim_stack_def, source),
	 .size = sizeof ((struct llmsim_stack_def *)0)->source, .required = LLMSIM_YF_REQUIRED},
	{.key = "program", .type = LLMSIM_YF_ENUM,
	 .offset = offsetof(struct llmsim_stack_def, program), .required = LLMSIM_YF_REQUIRED,
	 .names = llmsim_stack_names},
	{.key = "recipe", .type = LLMSIM_YF_ENUM, .offset = offsetof(struct llmsim_stack_def, recipe),
	 .required = LLMSIM_YF_REQUIRED, .names = llmsim_recipe_names},
	{.key = "fsdp", .type = LLMSIM_YF_ENUM, .offset = offsetof(struct llmsim_stack_def, fsdp),
	 .required = LLMSIM_YF_OPTIONAL, .names = llmsim_fsdp_names},
	{.key = "emit", .type = LLMSIM_YF_ENUM, .offset = offsetof(struct llmsim_stack_def, emit),
	 .required = LLMSIM_YF_REQUIRED, .names = llmsim_stack_emit_names},
};

static const struct llmsim_yfield overlap_fields[] = {
	{.key = "grad_reduce", .type = LLMSIM_YF_BOOL,
	 .offset = offsetof(struct llmsim_stack_def, overlap_grad_reduce)},
	{.key = "param_gather", .type = LLMSIM_YF_BOOL,
	 .offset = offsetof(struct llmsim_stack_def, overlap_param_gather)},
	{.key = "moe", .type = LLMSIM_YF_BOOL, .offset = offsetof(struct llmsim_stack_def, overlap_moe)},
	{.key = "tp", .type = LLMSIM_YF_ENUM, .offset = offsetof(struct llmsim_stack_def, tp_overlap),
	 .names = tp_overlap_names},
};

#define ALLOW(k, r, req)                                                                   \
	{.key = #k, .type = LLMSIM_YF_DOUBLE,                                              \
	 .offset = offsetof(struct llmsim_stack_def, allow) + offsetof(struct llmsim_train_allow, k), \
	 .required = req, .range = r}
static const struct llmsim_yfield memory_fields[] = {
	ALLOW(context_bytes, LLMSIM_YR_NONNEG, LLMSIM_YF_REQUIRED),
	ALLOW(fragmentation_frac, LLMSIM_YR_NONNEG, LLMSIM_YF_REQUIRED),
	ALLOW(nccl_bytes_per_group, LLMSIM_YR_NONNEG, LLMSIM_YF_REQUIRED),
	ALLOW(cuda_graph_bytes, LLMSIM_YR_NONNEG, LLMSIM_YF_REQUIRED),
	ALLOW(error_frac, LLMSIM_YR_NONNEG, LLMSIM_YF_REQUIRED),
};

#define N(a) (sizeof a / sizeof a[0])

static int at(const struct llmsim_ynode *n, const char *path, struct llmsim_err *err,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int at(const struct llmsim_ynode *n, const char *path, struct llmsim_err *err,
	      const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return llmsim_err_setloc(err, LLMSIM_EPARSE, path, n->line, n->col, "%s", msg);
}

/* A sequence of names from table (count entries) into a mask. */
static int name_seq(const struct llmsim_ynode *seq, const char *const *table, int count,
		    const char *what, const char *path, uint32_t *mask, struct llmsim_err *err)
{
	*mask = 0;
	if (seq->kind != LLMSIM_Y_SEQ)
		return at(seq, path, err, "%s must be a list", what);
	for (size_t i = 0; i < seq->n; i++) {
		const struct llmsim_ynode *v = seq->vals[i];
		int k = -1;
		for (int j = 0; v->kind == LLMSIM_Y_SCALAR && j < count; j++)
			if (!strcmp(v->scalar, table[j]))
				k = j;
		if (k < 0) {
			char known[512];
			size_t len = 0;
			for (int j = 0; j < count && len < sizeof known; j++) {
				int w = snprintf(known + len, sizeof known - len, "%s%s", j ? ", " : "",
						 table[j]);
				if (w > 0)
					len += (size_t)w;
			}
			return at(v, path, err, "unknown %s '%s' (known: %s)", what,
				  v->kind == LLMSIM_Y_SCALAR ? v->scalar : "?", known);
		}
		*mask |= BIT(k);
	}
	return 0;
}

static int load_refusals(const struct llmsim_ynode *seq, struct llmsim_stack_def *s,
			 const char *path, struct llmsim_err *err)
{
	if (seq->kind != LLMSIM_Y_SEQ)
		return at(seq, path, err, "'refuse' must be a list of {features, why}");
	if (seq->n > LLMSIM_STACK_MAX_REFUSE)
		return at(seq, path, err, "'refuse': at most %d rules", LLMSIM_STACK_MAX_REFUSE);
	for (size_t i = 0; i < seq->n; i++) {
		const struct llmsim_ynode *r = seq->vals[i];
		struct llmsim_stack_refusal *f = &s->refuse[s->nrefuse];
		if (r->kind != LLMSIM_Y_MAP)
			return at(r, path, err, "a 'refuse' rule is a mapping {features, why}");
		const struct llmsim_ynode *fs = llmsim_ymap_get(r, "features");
		const struct llmsim_ynode *why = llmsim_ymap_get(r, "why");
		if (!fs || !why || why->kind != LLMSIM_Y_SCALAR)
			return at(r, path, err, "a 'refuse' rule needs 'features' and 'why'");
		int rc = name_seq(fs, llmsim_feature_names, LLMSIM_FEAT_COUNT, "feature", path,
				  &f->mask, err);
		if (rc)
			return rc;
		if (__builtin_popcount(f->mask) < 2)
			return at(fs, path, err, "a 'refuse' rule names two features or more");
		if ((rc = llmsim_ymap_check_unused(r, path, "refuse", err)))
			return rc;
		snprintf(f->why, sizeof f->why, "%s", why->scalar);
		s->nrefuse++;
	}
	return 0;
}

/* What the file states must agree with itself. */
static int cross_check(const struct llmsim_ynode *root, const struct llmsim_stack_def *s,
		       const char *path, struct llmsim_err *err)
{
	const struct llmsim_ynode *ov = llmsim_ymap_get(root, "overlaps");
	const struct llmsim_ynode *v;
	uint32_t shard = BIT(LLMSIM_FEAT_ZERO1) | BIT(LLMSIM_FEAT_ZERO2) | BIT(LLMSIM_FEAT_ZERO3) |
			 BIT(LLMSIM_FEAT_FSDP_MEGATRON) | BIT(LLMSIM_FEAT_FSDP2);
	if (ov && s->tp_overlap && !(s->features & BIT(LLMSIM_FEAT_TP)) &&
	    (v = llmsim_ymap_get(ov, "tp")))
		return at(v, path, err, "TP overlap '%s' without tensor parallelism ('tp' is not in "
			  "launch.features)", tp_overlap_names[s->tp_overlap]);
	if (ov && s->tp_overlap && !(s->features & BIT(LLMSIM_FEAT_SP)) &&
	    (v = llmsim_ymap_get(ov, "tp")))
		return at(v, path, err, "TP overlap '%s' without sequence parallelism ('sp' is not in "
			  "launch.features; Megatron: 'Tensor parallel communication/GEMM overlap can "
			  "happen only when sequence parallelism is enabled')",
			  tp_overlap_names[s->tp_overlap]);
	if (ov && s->overlap_moe && !(s->features & BIT(LLMSIM_FEAT_EP)) &&
	    (v = llmsim_ymap_get(ov, "moe")))
		return at(v, path, err, "MoE all-to-all overlap without expert parallelism ('ep' "
			  "is not in launch.features)");
	if (ov && s->overlap_param_gather && !(s->features & shard) &&
	    (v = llmsim_ymap_get(ov, "param_gather")))
		return at(v, path, err, "parameter all-gather overlap without sharded parameters "
			  "or optimizer (no zero1, zero2, zero3, fsdp_megatron or fsdp2)");
	const struct llmsim_ynode *launch = llmsim_ymap_get(root, "launch");
	if (s->fsdp == LLMSIM_FSDP_MEGATRON && !(s->features & BIT(LLMSIM_FEAT_FSDP_MEGATRON)))
		return at(llmsim_ymap_get(root, "fsdp"), path, err, "fsdp: megatron needs "
			  "'fsdp_megatron' in launch.features");
	if (s->fsdp == LLMSIM_FSDP_FSDP2 && !(s->features & BIT(LLMSIM_FEAT_FSDP2)))
		return at(llmsim_ymap_get(root, "fsdp"), path, err, "fsdp: fsdp2 needs 'fsdp2' in "
			  "launch.features");
	if ((s->features & BIT(LLMSIM_FEAT_RECOMPUTE_MODULES)) && !s->modules)
		return at(launch, path, err, "'recompute_modules' in launch.features needs the "
			  "modules it knows (launch.recompute_modules)");
	if (s->modules && !(s->features & BIT(LLMSIM_FEAT_RECOMPUTE_MODULES)) &&
	    (v = llmsim_ymap_get(launch, "recompute_modules")))
		return at(v, path, err, "recompute modules listed without 'recompute_modules' in "
			  "launch.features");
	if (s->allow.fragmentation_frac >= 1 || s->allow.error_frac >= 1) {
		const struct llmsim_ynode *mem = llmsim_ymap_get(root, "memory");
		v = llmsim_ymap_get(mem, s->allow.error_frac >= 1 ? "error_frac"
								   : "fragmentation_frac");
		return at(v, path, err, "a fraction must be below 1");
	}
	return 0;
}

static int load_tree(const struct llmsim_ynode *root, void *obj, const char *path,
		     struct llmsim_err *err)
{
	struct llmsim_stack_def *s = obj;
	memset(s, 0, sizeof *s);
	snprintf(s->path, sizeof s->path, "%s", path);
	if (root->kind != LLMSIM_Y_MAP)
		return at(root, path, err, "a stack file is a mapping");
	int rc = llmsim_yaml_extract(root, top_fields, N(top_fields), s, path, NULL, err);
	if (rc)
		return rc;
	if (!llmsim_data_name_ok(s->name))
		return at(llmsim_ymap_get(root, "name"), path, err, "'name' must be letters, digits, "
			  "'.', '_' or '-'");
	const struct llmsim_ynode *launch = llmsim_ymap_get(root, "launch");
	if (!launch || launch->kind != LLMSIM_Y_MAP)
		return at(launch ? launch : root, path, err, "'launch' (a mapping with 'features') "
			  "is required");
	const struct llmsim_ynode *v = llmsim_ymap_get(launch, "features");
	if (!v)
		return at(launch, path, err, "'launch' needs 'features'");
	if ((rc = name_seq(v, llmsim_feature_names, LLMSIM_FEAT_COUNT, "feature", path,
			   &s->features, err)))
		return rc;
	if ((v = llmsim_ymap_get(launch, "recompute_modules")) &&
	    (rc = name_seq(v, llmsim_recompute_module_names, LLMSIM_RM_COUNT, "recompute module",
			   path, &s->modules, err)))
		return rc;
	if ((v = llmsim_ymap_get(launch, "refuse")) && (rc = load_refusals(v, s, path, err)))
		return rc;
	if ((rc = llmsim_ymap_check_unused(launch, path, "launch", err)))
		return rc;
	const struct llmsim_ynode *ov = llmsim_ymap_get(root, "overlaps");
	if (ov && ((rc = llmsim_yaml_extract(ov, overlap_fields, N(overlap_fields), s, path,
					     "overlaps", err)) ||
		   (rc = llmsim_ymap_check_unused(ov, path, "overlaps", err))))
		return rc;
	const struct llmsim_ynode *mem = llmsim_ymap_get(root, "memory");
	if (!mem)
		return at(root, path, err, "'memory' (the stack's allowances) is required");
	if ((rc = llmsim_yaml_extract(mem, memory_fields, N(memory_fields), s, path, "memory",
				      err)) ||
	    (rc = llmsim_ymap_check_unused(mem, path, "memory", err)))
		return rc;
	if ((rc = llmsim_ymap_check_unused(root, path, NULL, err)))
		return rc;
	return cross_check(root, s, path, err);
}

static const char *name_at(const void *obj, int i)
{
	const struct llmsim_stack_def *s = obj;
	return i == 0 ? s->name : NULL;
}

static const struct llmsim_data_kind stack_kind = {
	.sub = "hw/stacks", .what = "stack", .parse = load_tree, .name = name_at,
};

int llmsim_stack_load(const char *name_or_path, struct llmsim_stack_def *s,
		      struct llmsim_err *err)
{
	return llmsim_data_find(&stack_kind, name_or_path, s, err);
}

int llmsim_stack_load_buf(const char *buf, size_t len, const char *name,
			  struct llmsim_stack_def *s, struct llmsim_err *err)
{
	return llmsim_data_read_buf(buf, len, name, load_tree, s, err);
}

int llmsim_stack_list(void (*fn)(const char *path, void *ctx), void *ctx, struct llmsim_err *err)
{
	return llmsim_data_list(stack_kind.sub, fn, ctx, err);
}

void llmsim_stack_apply(const struct llmsim_stack_def *s, struct llmsim_train_cfg *c)
{
	c->stack = s->program;
	c->recipe = s->recipe;
	c->fsdp = s->fsdp;
	c->allow = s->allow;
	snprintf(c->stack_name, sizeof c->stack_name, "%s", s->name);
}
