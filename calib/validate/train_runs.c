/*
 * train_runs.c - the published-runs suite (models/runs/train_published.yaml):
 * each entry a training run from a paper, its configuration, and what the
 * paper measured (iteration time, MFU, memory); and its predictions.
 *
 *   runs:
 *     - name: korthikanti-175b-selective
 *       source: "..."
 *       model: gpt-3-175b            # a model name, or an inline map:
 *       model: {name: gpt-22b, style: gpt, layers: 48, hidden: 6144,
 *               heads: 64, vocab: 51200}   # [kv_heads, intermediate]
 *       gpu: a100
 *       gpus: 64
 *       tp: 8
 *       pp: 8                        # dp = gpus / (tp*pp*cp) unless given
 *       ...every `llmsim train` option, with '_' for '-'...
 *       stack: megatron-2021         # core (default), megatron-2021, megatron-2022,
 *                                    # llama3, mcore-te, torchtitan, deepspeed
 *       ddp: torch                   # the stack's (default), torch or local
 *       precision: mxfp8             # bf16, fp8-delayed, fp8-current, mxfp8, nvfp4
 *       recompute: modules           # none, selective, full, modules
 *       recompute_modules: [mla_up_proj, moe_act]   # Megatron's names
 *       recompute_method: block      # uniform, block (with full)
 *       recompute_num_layers: 5
 *       offload_activations: 0.5     # share of the offloadable saved tensors
 *       fsdp: megatron               # none, megatron, fsdp2 (zero 3 unless zero is given)
 *       moe_dispatch: deepep         # allgather, alltoall, deepep
 *       moe_overlap: true
 *       tp_overlap: userbuffers      # none, bulk, userbuffers (needs tp > 1)
 *       cp_comm: p2p                 # p2p, a2a, a2a+p2p (needs cp > 1)
 *       suite: k22-table5            # default: the name up to its first '-'
 *       target_pct: 8                # each row's |error| at most (main metric)
 *       suite_mean_target_pct: 3     # the suite's mean |error| at most
 *       published_step_time_s: 13.75
 *       published_mfu: 0.514
 *       published_model_state_bytes: 1.2e11
 *       published_activation_layer_bytes: 2.1e8
 *       published_tokens_per_s_per_gpu: 4312   # the step time it implies is compared
 *       published_model_flops_per_s_per_gpu: 1.937e15  # the source's FLOP count
 *       published_peak_memory_bytes: 7.6e10
 *   suites:                          # optional: a suite's statistics targets
 *     modern: {median_abs_target_pct: 8, within_pct: 15, within_share_target: 0.9,
 *              bias_target_pct: 5, not_fit_max: 0}
 *
 * The stack's fields are kept in e->opts and priced with the simulator's
 * features over the stack file's defaults (train_stack.c); e->not_modelled
 * would list a field priced as something nearer it (none today).
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/enum.h"
#include "base/yaml.h"
#include "sim/train/stack.h"
#include "suite.h"
#include "train_runs.h"
#include "train_runs_int.h"

static const char *const styles[] = {"gpt", "llama", NULL};
static const char *const attn_names[] = {"naive", "flash2", "flash3", NULL};
const char *const llmsim_run_dtype_names[] = {"bf16", "fp8", NULL};
/* Megatron-LM v2's --DDP-impl: the stack's own, PyTorch DDP (overlapped), LocalDDP */

struct raw_model {
	char name[64];
	int style, layers, hidden, heads, kv_heads, vocab, intermediate;
};

/* Counts take the bounds of the flags of the same name (base/bounds.h). */
#define RF(key, type, range, req, mx) \
	{#key, LLMSIM_YF_##type, offsetof(struct raw_run, key), 0, req, LLMSIM_YR_##range, NULL, mx}

static const struct llmsim_yfield run_fields[] = {
	{"name", LLMSIM_YF_STRING, offsetof(struct raw_run, name), 64, 1, LLMSIM_YR_ANY, NULL, 0},
	{"source", LLMSIM_YF_STRING, offsetof(struct raw_run, source), 384, 1, LLMSIM_YR_ANY, NULL, 0},
	{"gpu", LLMSIM_YF_STRING, offsetof(struct raw_run, gpu), 32, 1, LLMSIM_YR_ANY, NULL, 0},
	{"suite", LLMSIM_YF_STRING, offsetof(struct raw_run, suite), 32, 0, LLMSIM_YR_ANY, NULL, 0},
	RF(gpus, INT, POSITIVE, 1, LLMSIM_MAX_GPUS),
	RF(tp, INT, POSITIVE, 0, LLMSIM_MAX_GPUS),
	RF(pp, INT, POSITIVE, 0, LLMSIM_MAX_GPUS),
	RF(dp, INT, POSITIVE, 0, LLMSIM_MAX_GPUS),
	RF(cp, INT, POSITIVE, 0, LLMSIM_MAX_GPUS),
	RF(ep, INT, POSITIVE, 0, LLMSIM_MAX_GPUS),
	RF(zero, INT, NONNEG, 0, 3),
	RF(micro_batch, INT, POSITIVE, 0, LLMSIM_MAX_BATCH),
	RF(global_batch, INT, POSITIVE, 1, LLMSIM_MAX_BATCH),
	RF(seq, INT, POSITIVE, 1, LLMSIM_MAX_TOKENS),
	{"recompute", LLMSIM_YF_ENUM, offsetof(struct raw_run, recompute), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_recompute_kind_names, 0},
	{"recompute_method", LLMSIM_YF_ENUM, offsetof(struct raw_run, recompute_method), 0, 0,
	 LLMSIM_YR_ANY, llmsim_run_recompute_method_names, 0},
	RF(recompute_num_layers, INT, POSITIVE, 0, LLMSIM_MAX_LAYERS),
	RF(offload_activations, DOUBLE, NONNEG, 0, 0),
	{"precision", LLMSIM_YF_ENUM, offsetof(struct raw_run, precision), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_precision_names, 0},
	{"fsdp", LLMSIM_YF_ENUM, offsetof(struct raw_run, fsdp), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_fsdp_names, 0},
	{"moe_dispatch", LLMSIM_YF_ENUM, offsetof(struct raw_run, moe_dispatch), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_moe_dispatch_names, 0},
	{"moe_overlap", LLMSIM_YF_BOOL, offsetof(struct raw_run, moe_overlap), 0, 0, LLMSIM_YR_ANY,
	 NULL, 0},
	{"tp_overlap", LLMSIM_YF_ENUM, offsetof(struct raw_run, tp_overlap), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_tp_overlap_names, 0},
	{"cp_comm", LLMSIM_YF_ENUM, offsetof(struct raw_run, cp_comm), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_cp_comm_names, 0},
	{"schedule", LLMSIM_YF_ENUM, offsetof(struct raw_run, schedule), 0, 0, LLMSIM_YR_ANY,
	 llmsim_pp_sched_names, 0},
	RF(chunks, INT, POSITIVE, 0, LLMSIM_MAX_LAYERS),
	{"dtype", LLMSIM_YF_ENUM, offsetof(struct raw_run, dtype), 0, 0, LLMSIM_YR_ANY, llmsim_run_dtype_names, 0},
	{"recipe", LLMSIM_YF_ENUM, offsetof(struct raw_run, recipe), 0, 0, LLMSIM_YR_ANY,
	 llmsim_recipe_names, 0},
	{"offload", LLMSIM_YF_ENUM, offsetof(struct raw_run, offload), 0, 0, LLMSIM_YR_ANY,
	 llmsim_offload_names, 0},
	{"dpu", LLMSIM_YF_BOOL, offsetof(struct raw_run, dpu), 0, 0, LLMSIM_YR_ANY, NULL, 0},
	{"attention", LLMSIM_YF_ENUM, offsetof(struct raw_run, attention), 0, 0, LLMSIM_YR_ANY,
	 attn_names, 0},
	RF(lora_rank, INT, NONNEG, 0, LLMSIM_MAX_WIDTH),
	{"sequence_parallel", LLMSIM_YF_BOOL, offsetof(struct raw_run, sequence_parallel), 0, 0,
	 LLMSIM_YR_ANY, NULL, 0},
	{"uneven_pp", LLMSIM_YF_BOOL, offsetof(struct raw_run, uneven_pp), 0, 0, LLMSIM_YR_ANY, NULL, 0},
	{"stack", LLMSIM_YF_ENUM, offsetof(struct raw_run, stack), 0, 0, LLMSIM_YR_ANY,
	 llmsim_run_stack_names, 0},
	{"ddp", LLMSIM_YF_ENUM, offsetof(struct raw_run, ddp), 0, 0, LLMSIM_YR_ANY, llmsim_ddp_names, 0},
	RF(moe_imbalance, DOUBLE, POSITIVE, 0, LLMSIM_MAX_EXPERTS),
	RF(published_step_time_s, DOUBLE, POSITIVE, 0, 0),
	RF(published_mfu, DOUBLE, FRACTION, 0, 0),
	RF(published_model_state_bytes, DOUBLE, POSITIVE, 0, 0),
	RF(published_activation_layer_bytes, DOUBLE, POSITIVE, 0, 0),
	RF(published_tokens_per_s_per_gpu, DOUBLE, POSITIVE, 0, 0),
	RF(published_model_flops_per_s_per_gpu, DOUBLE, POSITIVE, 0, 0),
	RF(published_peak_memory_bytes, DOUBLE, POSITIVE, 0, 0),
	RF(target_pct, DOUBLE, POSITIVE, 0, 0),
	RF(suite_mean_target_pct, DOUBLE, POSITIVE, 0, 0),
};

#define MF(key, mx) {#key, LLMSIM_YF_INT, offsetof(struct raw_model, key), 0, 0, LLMSIM_YR_POSITIVE, NULL, mx}
static const struct llmsim_yfield model_fields[] = {
	{"name", LLMSIM_YF_STRING, offsetof(struct raw_model, name), 64, 1, LLMSIM_YR_ANY, NULL, 0},
	{"style", LLMSIM_YF_ENUM, offsetof(struct raw_model, style), 0, 1, LLMSIM_YR_ANY, styles, 0},
	MF(layers, LLMSIM_MAX_LAYERS), MF(hidden, LLMSIM_MAX_WIDTH), MF(heads, LLMSIM_MAX_WIDTH),
	MF(kv_heads, LLMSIM_MAX_WIDTH), MF(vocab, LLMSIM_MAX_VOCAB),
	MF(intermediate, LLMSIM_MAX_WIDTH),
};

/* A GPT-style (MHA, LayerNorm, GeLU 4h MLP, learned positions, biases,
 * tied embeddings) or Llama-style (GQA, RMSNorm, SwiGLU, RoPE) model. */
static int inline_model(const struct llmsim_ynode *map, const char *path,
			struct llmsim_model *m, struct llmsim_err *err)
{
	struct raw_model r;
	memset(&r, 0, sizeof r);
	int rc = llmsim_yaml_extract(map, model_fields, sizeof model_fields / sizeof *model_fields,
				     &r, path, "model", err);
	if (!rc)
		rc = llmsim_ymap_check_unused(map, path, "model", err);
	if (rc)
		return rc;
	if (!r.layers || !r.hidden || !r.heads || !r.vocab || r.hidden % r.heads)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "inline model needs layers, hidden, heads (dividing "
					 "hidden) and vocab");
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", r.name);
	snprintf(m->full_name, sizeof m->full_name, "%s", r.name);
	snprintf(m->path, sizeof m->path, "%s", path);
	m->layers = r.layers;
	m->hidden = r.hidden;
	m->heads = r.heads;
	m->kv_heads = r.kv_heads ? r.kv_heads : r.heads;
	m->head_dim = r.hidden / r.heads;
	m->vocab = r.vocab;
	m->max_seq = 1 << 20;
	m->attention = m->kv_heads == m->heads ? LLMSIM_ATTN_MHA
		       : m->kv_heads == 1    ? LLMSIM_ATTN_MQA
					     : LLMSIM_ATTN_GQA;
	if (r.style == 0) {
		if (!r.intermediate && r.hidden > INT_MAX / 4)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
						 "inline model: hidden %d is too large for a 4 x hidden"
						 " MLP", r.hidden);
		m->intermediate = r.intermediate ? r.intermediate : 4 * r.hidden;
		m->mlp = LLMSIM_MLP_PLAIN;
		m->activation = LLMSIM_ACT_GELU;
		m->norm = LLMSIM_NORM_LAYER;
		m->position = LLMSIM_POS_LEARNED;
		m->tied_embeddings = 1;
		m->linear_bias = 1;
	} else {
		if (!r.intermediate)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
						 "llama-style inline model needs intermediate");
		m->intermediate = r.intermediate;
		m->mlp = LLMSIM_MLP_GATED;
		m->activation = LLMSIM_ACT_SILU;
		m->norm = LLMSIM_NORM_RMS;
		m->position = LLMSIM_POS_ROPE;
	}
	return 0;
}

static int one_run(const struct llmsim_ynode *map, const char *path, void *entry,
		   struct llmsim_err *err)
{
	struct llmsim_run_entry *e = entry;
	struct raw_run r;
	memset(&r, 0, sizeof r);
	r.tp = r.pp = r.cp = r.ep = r.micro_batch = r.chunks = 1;
	r.attention = 1;
	r.sequence_parallel = 1;
	r.moe_imbalance = 1;
	/* -1: not given */
	r.recipe = r.stack = r.zero = r.recompute = r.dtype = r.precision = -1;
	r.recompute_method = r.recompute_num_layers = r.fsdp = r.moe_dispatch = -1;
	r.moe_overlap = r.tp_overlap = r.cp_comm = -1;
	r.offload_activations = -1;
	if (map->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "each run must be a mapping");
	const struct llmsim_ynode *mn = llmsim_ymap_get(map, "model");
	int rc = llmsim_yaml_extract(map, run_fields, sizeof run_fields / sizeof *run_fields, &r,
				     path, "run", err);
	if (rc)
		return rc;
	memset(e, 0, sizeof *e);
	struct llmsim_train_cfg *c = &e->cfg;
	llmsim_train_cfg_init(c);
	c->tp = r.tp, c->pp = r.pp, c->cp = r.cp, c->ep = r.ep;
	if ((rc = llmsim_run_stack_opts(map, path, &r, e, err)))
		return rc;
	if ((rc = llmsim_ymap_check_unused(map, path, "run", err)))
		return rc;
	if (!mn)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "run '%s' has no model", r.name);
	if (mn->kind == LLMSIM_Y_SCALAR) {
		snprintf(e->model, sizeof e->model, "%s", mn->scalar);
	} else if (mn->kind == LLMSIM_Y_MAP) {
		if ((rc = inline_model(mn, path, &e->inline_model, err)))
			return rc;
		e->inline_model.max_seq = r.seq; /* learned positions: the run's length */
		e->has_inline = 1;
	} else {
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, mn->line, mn->col,
					 "model must be a name or a mapping");
	}
	snprintf(e->name, sizeof e->name, "%s", r.name);
	snprintf(e->source, sizeof e->source, "%s", r.source);
	snprintf(e->gpu, sizeof e->gpu, "%s", r.gpu);
	if (r.suite[0])
		snprintf(e->suite, sizeof e->suite, "%s", r.suite);
	else
		snprintf(e->suite, sizeof e->suite, "%.*s", (int)strcspn(r.name, "-"), r.name);
	e->target_pct = r.target_pct;
	e->mean_target_pct = r.suite_mean_target_pct;
	e->published_act_layer_bytes = r.published_activation_layer_bytes;
	c->gpus = r.gpus;
	/* tp * pp * cp may not fit an int: past gpus, dp is 0 anyway */
	long long tpp = (long long)r.tp * r.pp;
	c->dp = r.dp ? r.dp : tpp > r.gpus ? 0 : (int)(r.gpus / (tpp * r.cp));
	c->micro_batch = r.micro_batch;
	c->global_batch = r.global_batch;
	c->seq = r.seq;
	c->schedule = r.schedule;
	c->chunks = r.chunks;
	c->offload = r.offload;
	c->dpu = r.dpu;
	c->attn = r.attention == 0 ? LLMSIM_ATTN_NAIVE
		  : r.attention == 2 ? LLMSIM_ATTN_FLASH3
				     : LLMSIM_ATTN_FLASH2;
	c->lora_rank = r.lora_rank;
	c->sequence_parallel = r.sequence_parallel;
	c->uneven_pp = r.uneven_pp;
	c->moe_imbalance = r.moe_imbalance;
	c->ddp = (enum llmsim_ddp)r.ddp;
	if (r.published_tokens_per_s_per_gpu > 0 && r.published_step_time_s > 0)
		return llmsim_run_err_at(err, path, map, "published_tokens_per_s_per_gpu",
			  "give one of '%s' and '%s'", "published_tokens_per_s_per_gpu",
			  "published_step_time_s");
	e->published_step_s = r.published_step_time_s;
	e->published_tokens_per_gpu_s = r.published_tokens_per_s_per_gpu;
	if (r.published_tokens_per_s_per_gpu > 0) /* the step those tokens take */
		e->published_step_s = (double)r.global_batch * r.seq /
				      (r.published_tokens_per_s_per_gpu * r.gpus);
	e->published_mfu = r.published_mfu;
	e->published_mem_bytes = r.published_model_state_bytes;
	e->published_peak_mem_bytes = r.published_peak_memory_bytes;
	e->published_model_flops_per_gpu_s = r.published_model_flops_per_s_per_gpu;
	return 0;
}

/* ---- the `suites:` section ---- */

struct suites_ctx {
	struct llmsim_run_suite *s;
	int n;
	int *line, *col;
};

struct raw_suite {
	int held_back, not_fit_max;
	double median_abs_target_pct, within_pct, within_share_target, bias_target_pct;
};

#define SF(key, type, range) \
	{#key, LLMSIM_YF_##type, offsetof(struct raw_suite, key), 0, 0, LLMSIM_YR_##range, NULL, 0}
static const struct llmsim_yfield suite_fields[] = {
	{"held_back", LLMSIM_YF_BOOL, offsetof(struct raw_suite, held_back), 0, 0, LLMSIM_YR_ANY,
	 NULL, 0},
	SF(not_fit_max, INT, NONNEG),
	SF(median_abs_target_pct, DOUBLE, POSITIVE),
	SF(within_pct, DOUBLE, POSITIVE),
	SF(within_share_target, DOUBLE, FRACTION),
	SF(bias_target_pct, DOUBLE, POSITIVE),
};

static int suites_head(const struct llmsim_ynode *root, const char *path, void *ctx,
		       struct llmsim_err *err)
{
	struct suites_ctx *x = ctx;
	const struct llmsim_ynode *s = llmsim_ymap_get(root, "suites");
	if (!s)
		return 0;
	if (s->kind != LLMSIM_Y_MAP || !s->n)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, s->line, s->col,
					 "'suites' must map suite names to their targets");
	x->s = calloc(s->n, sizeof *x->s);
	x->line = calloc(s->n, sizeof *x->line);
	x->col = calloc(s->n, sizeof *x->col);
	if (!x->s || !x->line || !x->col)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n; i++) {
		const struct llmsim_ynode *v = s->vals[i];
		struct raw_suite r = {.not_fit_max = -1, .within_pct = 15};
		if (v->kind != LLMSIM_Y_MAP)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
						 "suite '%s' must be a mapping of targets", s->keys[i]);
		int rc = llmsim_yaml_extract(v, suite_fields, sizeof suite_fields / sizeof *suite_fields,
					     &r, path, "suite", err);
		if (!rc)
			rc = llmsim_ymap_check_unused(v, path, "suite", err);
		if (rc)
			return rc;
		if (strlen(s->keys[i]) >= sizeof x->s[i].name)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, s->key_line[i],
						 s->key_col[i], "suite name '%s' is too long",
						 s->keys[i]);
		struct llmsim_run_suite *t = &x->s[x->n];
		snprintf(t->name, sizeof t->name, "%s", s->keys[i]);
		t->held_back = r.held_back;
		t->not_fit_max = r.not_fit_max;
		t->median_abs_target_pct = r.median_abs_target_pct;
		t->within_pct = r.within_pct;
		t->within_share_target = r.within_share_target;
		t->bias_target_pct = r.bias_target_pct;
		x->line[x->n] = s->key_line[i];
		x->col[x->n++] = s->key_col[i];
	}
	return 0;
}

int llmsim_run_file_load(const char *path, struct llmsim_run_file *f, struct llmsim_err *err)
{
	struct suites_ctx x = {0};
	void *v = NULL;
	memset(f, 0, sizeof *f);
	int rc = llmsim_suite_load_head(path, sizeof *f->runs, one_run, suites_head, &x, &v, &f->n,
					err);
	f->runs = v;
	for (int i = 0; !rc && i < x.n; i++) {
		int rows = 0;
		for (int k = 0; k < f->n; k++)
			if (!strcmp(f->runs[k].suite, x.s[i].name)) {
				f->runs[k].held_back = x.s[i].held_back;
				rows++;
			}
		if (!rows)
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, x.line[i], x.col[i],
					       "suite '%s' has no runs", x.s[i].name);
	}
	free(x.line);
	free(x.col);
	f->suites = x.s;
	f->nsuites = x.n;
	if (rc)
		llmsim_run_file_release(f);
	return rc;
}

void llmsim_run_file_release(struct llmsim_run_file *f)
{
	free(f->runs);
	free(f->suites);
	memset(f, 0, sizeof *f);
}

int llmsim_runs_load(const char *path, struct llmsim_run_entry **out, int *n,
		     struct llmsim_err *err)
{
	struct llmsim_run_file f;
	int rc = llmsim_run_file_load(path, &f, err);
	*out = f.runs;
	*n = f.n;
	free(f.suites);
	return rc;
}

static const char *const run_metric_names[LLMSIM_RUN_METRIC_COUNT] = {
	[LLMSIM_RUN_STEP_TIME] = "step_time",
	[LLMSIM_RUN_MFU] = "mfu",
	[LLMSIM_RUN_STATE_MEMORY] = "model_state_memory",
	[LLMSIM_RUN_ACT_LAYER] = "activations_per_layer",
	[LLMSIM_RUN_PEAK_MEMORY] = "peak_memory",
	[LLMSIM_RUN_MODEL_FLOPS] = "model_flops_per_gpu",
};

const char *llmsim_run_metric_name(enum llmsim_run_metric m)
{
	return llmsim_enum_label(run_metric_names, LLMSIM_RUN_METRIC_COUNT, (int)m);
}

int llmsim_run_predict(const struct llmsim_run_entry *e, struct llmsim_run_outcome *o,
		       struct llmsim_err *err)
{
	static struct llmsim_model m;
	static struct llmsim_gpu gpu;
	struct llmsim_train_ctx *ctx = NULL;
	memset(o, 0, sizeof *o);
	int rc = 0;
	if (e->has_inline)
		m = e->inline_model;
	else
		rc = llmsim_model_load(e->model, &m, err);
	if (!rc)
		rc = llmsim_gpu_load(e->gpu, &gpu, err);
	if (!rc)
		rc = llmsim_train_ctx_new(&m, &gpu, &ctx, err);
	/* the stack's communication where the model has it: MoE dispatch and
	 * overlap for MoE models, a2a CP where the heads split over CP; a
	 * row's own fields as given */
	struct llmsim_train_cfg c = e->cfg;
	if (!m.has_moe && e->opts.moe_dispatch < 0 && e->opts.moe_overlap < 0)
		c.moe_dispatch = LLMSIM_MOE_ALLTOALL, c.moe_overlap = 0;
	if (e->opts.cp_comm < 0)
		c.cp_comm = llmsim_stack_cp_comm(c.cp_comm, &m, &c);
	if (!rc)
		rc = llmsim_train_simulate(ctx, &c, &o->r, err);
	llmsim_train_ctx_free(ctx);
	if (rc)
		return rc;
	o->gpu = gpu;
	o->predicted[LLMSIM_RUN_STEP_TIME] = o->r.time.step_s;
	o->predicted[LLMSIM_RUN_MFU] = o->r.mfu;
	o->predicted[LLMSIM_RUN_STATE_MEMORY] = o->r.mem.weights_bytes + o->r.mem.grads_bytes +
						o->r.mem.optimizer_bytes;
	o->published[LLMSIM_RUN_STEP_TIME] = e->published_step_s;
	o->published[LLMSIM_RUN_MFU] = e->published_mfu;
	o->published[LLMSIM_RUN_STATE_MEMORY] = e->published_mem_bytes;
	o->predicted[LLMSIM_RUN_ACT_LAYER] = o->r.mem.act_per_layer_bytes;
	o->published[LLMSIM_RUN_ACT_LAYER] = e->published_act_layer_bytes;
	o->predicted[LLMSIM_RUN_PEAK_MEMORY] = o->r.mem.total_bytes;
	o->published[LLMSIM_RUN_PEAK_MEMORY] = e->published_peak_mem_bytes;
	o->predicted[LLMSIM_RUN_MODEL_FLOPS] =
		o->r.time.step_s > 0 ? o->r.model_flops / (o->r.time.step_s * e->cfg.gpus) : 0;
	o->published[LLMSIM_RUN_MODEL_FLOPS] = e->published_model_flops_per_gpu_s;
	return 0;
}

int llmsim_run_time_error(const struct llmsim_run_outcome *o, double *pct)
{
	int k = 0;
	while (k < LLMSIM_RUN_METRIC_COUNT && !(o->published[k] > 0))
		k++;
	if (k == LLMSIM_RUN_STEP_TIME && o->predicted[k] > 0) {
		*pct = 100.0 * (o->predicted[k] - o->published[k]) / o->published[k];
		return 0;
	}
	if (k == LLMSIM_RUN_MFU && o->predicted[k] > 0) {
		*pct = 100.0 * (o->published[k] / o->predicted[k] - 1);
		return 0;
	}
	return -1;
}
