/*
 * hf.c - Hugging Face config.json to an llmsim model (see hf.h).
 *
 * The config is read into the fields of a model description by the rules
 * of its family (Llama-style decoders, DeepSeek's MLA + MoE, GPT-2 style,
 * OPT), each key's JSON position kept for messages. The result is written
 * as the model YAML `llmsim model import` prints, with the key each value
 * came from in a comment, the notes and the unused keys under `extra:`,
 * and that text is loaded by the model loader: a config.json and its
 * imported file give the same model because they are the same file, and
 * every check of model YAML applies to both.
 */
#include "hf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/gzfile.h"
#include "base/jsonread.h"
#include "base/paths.h"
#include "model_load.h"

enum family { F_LLAMA, F_DEEPSEEK, F_GPT2, F_OPT };

/* One model_type: its family and the defaults of its transformers
 * configuration class. */
struct arch {
	const char *type, *class_name;
	enum family fam;
	int tied;          /* tie_word_embeddings when absent */
	int qkv_bias;      /* bias on q, k, v always (Qwen2) */
	int experts;       /* routed experts from num_local_experts (Mixtral) */
	int multi_query;   /* multi_query decides the KV heads (GPTBigCode) */
	const char *act;   /* activation when the config names none */
	const char *note;  /* what llmsim leaves out of every model of the type */
	int qk_norm;       /* q_norm and k_norm per head (Qwen3) */
};

static const struct arch archs[] = {
	{"llama", "LlamaForCausalLM", F_LLAMA, 0, 0, 0, 0, "silu", NULL, 0},
	{"mistral", "MistralForCausalLM", F_LLAMA, 0, 0, 0, 0, "silu", NULL, 0},
	{"mixtral", "MixtralForCausalLM", F_LLAMA, 0, 0, 1, 0, "silu", NULL, 0},
	{"qwen2", "Qwen2ForCausalLM", F_LLAMA, 0, 1, 0, 0, "silu", NULL, 0},
	{"qwen3", "Qwen3ForCausalLM", F_LLAMA, 0, 0, 0, 0, "silu", NULL, 1},
	/* experts 2: Qwen's keys (num_experts, moe_intermediate_size) */
	{"qwen3_moe", "Qwen3MoeForCausalLM", F_LLAMA, 0, 0, 2, 0, "silu", NULL, 1},
	{"gemma", "GemmaForCausalLM", F_LLAMA, 1, 0, 0, 0, "gelu_pytorch_tanh", NULL, 0},
	{"gemma2", "Gemma2ForCausalLM", F_LLAMA, 1, 0, 0, 0, "gelu_pytorch_tanh",
	 "Gemma 2's extra norms after attention and after the MLP (2 x hidden parameters a "
	 "layer) and its alternating local attention are not modelled", 0},
	{"deepseek_v2", "DeepseekV2ForCausalLM", F_DEEPSEEK, 0, 0, 0, 0, "silu", NULL, 0},
	{"deepseek_v3", "DeepseekV3ForCausalLM", F_DEEPSEEK, 0, 0, 0, 0, "silu", NULL, 0},
	{"gpt2", "GPT2LMHeadModel", F_GPT2, 1, 0, 0, 0, "gelu_new", NULL, 0},
	{"gpt_bigcode", "GPTBigCodeForCausalLM", F_GPT2, 1, 0, 0, 1, "gelu_pytorch_tanh", NULL, 0},
	{"opt", "OPTForCausalLM", F_OPT, 1, 0, 0, 0, "relu", NULL, 0},
};
#define NARCHS (sizeof archs / sizeof archs[0])

const char *llmsim_hf_known_types(void)
{
	static char list[256];
	if (!list[0])
		for (size_t i = 0; i < NARCHS; i++) {
			size_t l = strlen(list);
			snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", archs[i].type);
		}
	return list;
}

int llmsim_hf_is_config(const char *path)
{
	size_t n = strlen(path);
	return n >= 5 && !strcasecmp(path + n - 5, ".json");
}

void llmsim_hf_info_release(struct llmsim_hf_info *info)
{
	if (!info)
		return;
	free(info->yaml);
	info->yaml = NULL;
}

/* ---- a growing string ---- */

struct buf {
	char *s;
	size_t len, cap;
	int oom;
};

static void bput(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bput(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = b->s ? vsnprintf(b->s + b->len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? 2 * b->cap : 4096;
		while (n >= 0 && cap - b->len <= (size_t)n)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

/* s as a YAML double-quoted scalar: \" \\ and control characters escaped,
 * UTF-8 as it is */
static void bquote(struct buf *b, const char *s)
{
	bput(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			bput(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			bput(b, "\\x%02x", c);
		else
			bput(b, "%c", c);
	}
	bput(b, "\"");
}

/* A mapping key: plain when it is a name ([A-Za-z_][A-Za-z0-9_.-]*, and
 * not one YAML reads as something else), else quoted. */
static void bkey(struct buf *b, const char *k)
{
	int plain = isalpha((unsigned char)k[0]) || k[0] == '_';
	for (const char *c = k; plain && *c; c++)
		plain = isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-';
	static const char *const words[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"};
	for (size_t i = 0; plain && i < sizeof words / sizeof words[0]; i++)
		plain = strcasecmp(k, words[i]) != 0;
	if (plain)
		bput(b, "%s", k);
	else
		bquote(b, k);
}

/* A JSON value as YAML flow (JSON is YAML's flow syntax, strings re-quoted). */
static void bvalue(struct buf *b, const struct llmsim_jnode *v)
{
	switch (v->kind) {
	case LLMSIM_J_NULL: bput(b, "null"); break;
	case LLMSIM_J_BOOL: bput(b, "%s", v->boolean ? "true" : "false"); break;
	case LLMSIM_J_NUM: bput(b, "%s", v->str); break;
	case LLMSIM_J_STR: bquote(b, v->str); break;
	case LLMSIM_J_ARR:
		bput(b, "[");
		for (size_t i = 0; i < v->n; i++) {
			bput(b, "%s", i ? ", " : "");
			bvalue(b, v->vals[i]);
		}
		bput(b, "]");
		break;
	case LLMSIM_J_OBJ:
		bput(b, "{");
		for (size_t i = 0; i < v->n; i++) {
			bput(b, "%s", i ? ", " : "");
			bquote(b, v->keys[i]);
			bput(b, ": ");
			bvalue(b, v->vals[i]);
		}
		bput(b, "}");
		break;
	}
}

/* ---- reading the config ---- */

struct rd {
	const struct llmsim_jnode *root;
	const char *path, *type;
	unsigned char *used;          /* per key of root */
	struct llmsim_hf_info *info;
	struct llmsim_err *err;
	char notes[512];
};

static void origin(struct rd *r, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void origin(struct rd *r, const char *field, const char *fmt, ...)
{
	if (r->info->norigins == LLMSIM_HF_MAX_ORIGINS)
		return;
	struct llmsim_hf_origin *o = &r->info->origin[r->info->norigins++];
	o->field = field;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->from, sizeof o->from, fmt, ap);
	va_end(ap);
}

static void note(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct rd *r, const char *fmt, ...)
{
	size_t l = strlen(r->notes);
	if (l + 3 >= sizeof r->notes)
		return;
	if (l)
		l += (size_t)snprintf(r->notes + l, sizeof r->notes - l, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes + l, sizeof r->notes - l, fmt, ap);
	va_end(ap);
}

/* The value of key (NULL when absent or null), marked used. */
static const struct llmsim_jnode *get(struct rd *r, const char *key)
{
	const struct llmsim_jnode *root = r->root;
	for (size_t i = 0; i < root->n; i++)
		if (!strcmp(root->keys[i], key)) {
			r->used[i] = 1;
			return root->vals[i]->kind == LLMSIM_J_NULL ? NULL : root->vals[i];
		}
	return NULL;
}

static int missing(struct rd *r, const char *key)
{
	return llmsim_err_setloc(r->err, LLMSIM_EPARSE, r->path, r->root->line, r->root->col,
				 "missing key '%s' (model_type '%s')", key, r->type);
}

static int bad(struct rd *r, const struct llmsim_jnode *v, const char *key, const char *what)
{
	return llmsim_err_setloc(r->err, LLMSIM_EPARSE, r->path, v->line, v->col,
				 "'%s' must be %s, got %s", key, what,
				 v->kind == LLMSIM_J_NUM ? v->str : llmsim_jkind_name(v->kind));
}

/* An integer of key: *present 0 when absent or null (then *out is left
 * alone); min is the least accepted. */
static int get_int(struct rd *r, const char *key, int min, int *out, int *present)
{
	const struct llmsim_jnode *v = get(r, key);
	*present = v != NULL;
	if (!v)
		return 0;
	if (v->kind != LLMSIM_J_NUM || !v->is_int || v->i < min || v->i > 0x7fffffff)
		return bad(r, v, key, min > 0 ? "a positive integer" : "an integer of at least 0");
	*out = (int)v->i;
	return 0;
}

/* A required positive integer: the llmsim field's value and its origin. */
static int need(struct rd *r, const char *key, const char *field, int *out)
{
	int present, rc = get_int(r, key, 1, out, &present);
	if (rc)
		return rc;
	if (!present)
		return missing(r, key);
	origin(r, field, "%s", key);
	return 0;
}

static int get_bool(struct rd *r, const char *key, int *out, int *present)
{
	const struct llmsim_jnode *v = get(r, key);
	*present = v != NULL;
	if (!v)
		return 0;
	if (v->kind != LLMSIM_J_BOOL)
		return bad(r, v, key, "true or false");
	*out = v->boolean;
	return 0;
}

static int get_str(struct rd *r, const char *key, const char **out)
{
	const struct llmsim_jnode *v = get(r, key);
	if (!v)
		return 0;
	if (v->kind != LLMSIM_J_STR)
		return bad(r, v, key, "a string");
	*out = v->str;
	return 0;
}

/* The fields a family sets, in the order the YAML lists them. */
struct fields {
	int layers, hidden, heads, kv_heads, head_dim, vocab, intermediate, max_seq;
	const char *mlp, *act, *norm, *pos;
	int tied, qkv_bias, linear_bias, mtp_layers, position_rows, qk_norm;
	int has_mla;
	int q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
	int has_moe;
	int experts, shared_experts, top_k, expert_intermediate, dense_layers, layer_freq;
};

/* The keys every Llama-style config has, with ffn_key for the MLP width
 * (OPT names it ffn_dim). */
static const char *const core_keys[] = {"num_hidden_layers", "hidden_size",
	"num_attention_heads", "intermediate_size", "vocab_size", "max_position_embeddings"};

static int need_core(struct rd *r, const char *ffn_key, struct fields *f)
{
	int rc;
	if ((rc = need(r, core_keys[0], "layers", &f->layers)) ||
	    (rc = need(r, core_keys[1], "hidden", &f->hidden)) ||
	    (rc = need(r, core_keys[2], "heads", &f->heads)) ||
	    (rc = need(r, ffn_key, "intermediate", &f->intermediate)) ||
	    (rc = need(r, core_keys[4], "vocab", &f->vocab)) ||
	    (rc = need(r, core_keys[5], "max_seq", &f->max_seq)))
		return rc;
	return 0;
}

/* head_dim = hidden / heads, for families that have no head_dim key. */
static int even_heads(struct rd *r, const char *hidden_key, const char *heads_key,
		      struct fields *f)
{
	if (f->hidden % f->heads)
		return llmsim_err_setloc(r->err, LLMSIM_EPARSE, r->path, r->root->line, r->root->col,
					 "%s %d is not a multiple of %s %d", hidden_key, f->hidden,
					 heads_key, f->heads);
	f->head_dim = f->hidden / f->heads;
	origin(r, "head_dim", "%s / %s", hidden_key, heads_key);
	return 0;
}

static int activation(struct rd *r, const char *key, const char *dflt, const char **out)
{
	const char *a = dflt;
	const struct llmsim_jnode *v = get(r, key);
	int rc = get_str(r, key, &a);
	if (rc)
		return rc;
	if (!strcmp(a, "silu") || !strcmp(a, "swish"))
		*out = "silu";
	else if (!strncmp(a, "gelu", 4))
		*out = "gelu";
	else if (!strcmp(a, "relu"))
		*out = "relu";
	else if (v)
		return llmsim_err_setloc(r->err, LLMSIM_EPARSE, r->path, v->line, v->col,
					 "'%s' is '%.40s': llmsim models silu, gelu (any gelu_*) and relu",
					 key, a);
	else
		*out = "silu";
	return 0;
}

static int tied(struct rd *r, const struct arch *a, struct fields *f)
{
	int present, rc = get_bool(r, "tie_word_embeddings", &f->tied, &present);
	if (!present)
		f->tied = a->tied;
	origin(r, "tied_embeddings", present ? "tie_word_embeddings" : "%s's default (%s)",
	       a->class_name, a->tied ? "true" : "false");
	return rc;
}

static int read_llama(struct rd *r, const struct arch *a, struct fields *f)
{
	int rc, present;
	if ((rc = need_core(r, "intermediate_size", f)))
		return rc;
	if ((rc = get_int(r, "num_key_value_heads", 1, &f->kv_heads, &present)))
		return rc;
	if (!present)
		f->kv_heads = f->heads;
	origin(r, "kv_heads", present ? "num_key_value_heads" : "num_attention_heads (no num_key_value_heads)");
	if ((rc = get_int(r, "head_dim", 1, &f->head_dim, &present)))
		return rc;
	if (!present) {
		if (f->hidden % f->heads)
			return llmsim_err_setloc(r->err, LLMSIM_EPARSE, r->path, r->root->line,
						 r->root->col,
						 "missing key 'head_dim': hidden_size %d is not a multiple of "
						 "num_attention_heads %d",
						 f->hidden, f->heads);
		f->head_dim = f->hidden / f->heads;
	}
	origin(r, "head_dim", present ? "head_dim" : "hidden_size / num_attention_heads");
	/* Gemma names it hidden_activation, beside an older hidden_act */
	const char *act_key = get(r, "hidden_activation") ? "hidden_activation" : "hidden_act";
	if ((rc = activation(r, act_key, a->act, &f->act)))
		return rc;
	if (strcmp(act_key, "hidden_act"))
		(void)get(r, "hidden_act");
	origin(r, "activation", "%s", act_key);
	f->mlp = "gated";
	f->norm = "rms";
	f->pos = "rope";
	if ((rc = tied(r, a, f)))
		return rc;
	f->qkv_bias = a->qkv_bias;
	int ab = 0, mb = 0;
	if ((rc = get_bool(r, "attention_bias", &ab, &present)))
		return rc;
	if (ab) {
		f->qkv_bias = 1;
		note(r, "attention_bias also puts a bias on o_proj (hidden_size values a layer), "
			"not counted");
	}
	if (a->qkv_bias || ab)
		origin(r, "qkv_bias", a->qkv_bias ? "%s has biases on q, k and v" : "attention_bias",
		       a->class_name);
	if ((rc = get_bool(r, "mlp_bias", &mb, &present)))
		return rc;
	if (mb)
		note(r, "mlp_bias: the MLP's biases (%d values a layer) are not counted",
		     2 * f->intermediate + f->hidden);
	/* a sliding window (Mistral; Qwen2 when use_sliding_window is true) */
	int sw = 0, use_sw = 1;
	if ((rc = get_bool(r, "use_sliding_window", &use_sw, &present)))
		return rc;
	if ((rc = get_int(r, "sliding_window", 1, &sw, &present)))
		return rc;
	if (present && use_sw && sw < f->max_seq)
		note(r, "sliding_window %d: attention over the last %d tokens is priced as full "
			"attention (KV cache and attention FLOPs past %d tokens are overstated)",
		     sw, sw, sw);
	if (a->qk_norm) {
		f->qk_norm = 1;
		origin(r, "qk_norm", "%s normalizes each query and key head (q_norm, k_norm)",
		       a->class_name);
	}
	if (a->experts == 1) {
		f->has_moe = 1;
		if ((rc = need(r, "num_local_experts", "moe.experts", &f->experts)) ||
		    (rc = need(r, "num_experts_per_tok", "moe.top_k", &f->top_k)))
			return rc;
		f->expert_intermediate = f->intermediate;
		f->layer_freq = 1;
		origin(r, "moe.expert_intermediate", "intermediate_size (each expert's width)");
	} else if (a->experts == 2) {
		int step = 1;
		if ((rc = need(r, "num_experts", "moe.experts", &f->experts)) ||
		    (rc = need(r, "num_experts_per_tok", "moe.top_k", &f->top_k)) ||
		    (rc = need(r, "moe_intermediate_size", "moe.expert_intermediate",
			       &f->expert_intermediate)) ||
		    (rc = get_int(r, "decoder_sparse_step", 1, &step, &present)))
			return rc;
		f->has_moe = 1;
		f->layer_freq = 1;
		const struct llmsim_jnode *only = get(r, "mlp_only_layers");
		if (step != 1 || (only && only->kind == LLMSIM_J_ARR && only->n > 0))
			note(r, "decoder_sparse_step %d and mlp_only_layers: read as every layer MoE",
			     step);
		origin(r, "moe.layer_freq", "decoder_sparse_step");
	}
	return 0;
}

static int read_deepseek(struct rd *r, const struct arch *a, struct fields *f)
{
	int rc, present;
	if ((rc = need_core(r, "intermediate_size", f)) ||
	    (rc = need(r, "kv_lora_rank", "mla.kv_lora_rank", &f->kv_lora_rank)) ||
	    (rc = need(r, "qk_nope_head_dim", "mla.qk_nope_head_dim", &f->qk_nope_head_dim)) ||
	    (rc = need(r, "qk_rope_head_dim", "mla.qk_rope_head_dim", &f->qk_rope_head_dim)) ||
	    (rc = need(r, "v_head_dim", "mla.v_head_dim", &f->v_head_dim)))
		return rc;
	f->has_mla = 1;
	if ((rc = get_int(r, "num_key_value_heads", 1, &f->kv_heads, &present)))
		return rc;
	if (!present)
		f->kv_heads = f->heads;
	origin(r, "kv_heads", present ? "num_key_value_heads" : "num_attention_heads");
	f->head_dim = f->qk_nope_head_dim + f->qk_rope_head_dim;
	origin(r, "head_dim", "qk_nope_head_dim + qk_rope_head_dim");
	if ((rc = get_int(r, "q_lora_rank", 0, &f->q_lora_rank, &present)))
		return rc;
	origin(r, "mla.q_lora_rank", present ? "q_lora_rank" : "q_lora_rank null: queries projected directly");
	if ((rc = activation(r, "hidden_act", a->act, &f->act)))
		return rc;
	origin(r, "activation", "hidden_act");
	f->mlp = "gated";
	f->norm = "rms";
	f->pos = "rope";
	if ((rc = tied(r, a, f)))
		return rc;
	if ((rc = get_int(r, "num_nextn_predict_layers", 0, &f->mtp_layers, &present)))
		return rc;
	if (present)
		origin(r, "mtp_layers", "num_nextn_predict_layers");
	if ((rc = get_int(r, "n_routed_experts", 1, &f->experts, &present)))
		return rc;
	if (present) {
		f->has_moe = 1;
		origin(r, "moe.experts", "n_routed_experts");
		if ((rc = need(r, "num_experts_per_tok", "moe.top_k", &f->top_k)) ||
		    (rc = need(r, "moe_intermediate_size", "moe.expert_intermediate",
			       &f->expert_intermediate)))
			return rc;
		f->layer_freq = 1;
		if ((rc = get_int(r, "n_shared_experts", 0, &f->shared_experts, &present)))
			return rc;
		origin(r, "moe.shared_experts", present ? "n_shared_experts" : "none (n_shared_experts null)");
		if ((rc = get_int(r, "first_k_dense_replace", 0, &f->dense_layers, &present)))
			return rc;
		origin(r, "moe.dense_layers", present ? "first_k_dense_replace" : "none");
		if ((rc = get_int(r, "moe_layer_freq", 1, &f->layer_freq, &present)))
			return rc;
		origin(r, "moe.layer_freq", present ? "moe_layer_freq" : "every layer");
	}
	return 0;
}

/* Published quantized weights (any family): said, since the weight bytes
 * follow --weight-dtype, not the config. */
static void quant_note(struct rd *r)
{
	const struct llmsim_jnode *q = get(r, "quantization_config");
	if (!q || q->kind != LLMSIM_J_OBJ)
		return;
	const struct llmsim_jnode *m = llmsim_jobj_get(q, "quant_method");
	const char *how = m && m->kind == LLMSIM_J_STR ? m->str : "?";
	note(r, "the published weights are quantized (quant_method %s): plan them with "
		"--weight-dtype%s",
	     how, !strcmp(how, "fp8") ? " fp8" : "");
}

static int read_gpt2(struct rd *r, const struct arch *a, struct fields *f)
{
	int rc, present;
	if ((rc = need(r, "n_layer", "layers", &f->layers)) ||
	    (rc = need(r, "n_embd", "hidden", &f->hidden)) ||
	    (rc = need(r, "n_head", "heads", &f->heads)) ||
	    (rc = need(r, "vocab_size", "vocab", &f->vocab)))
		return rc;
	if ((rc = get_int(r, "n_positions", 1, &f->max_seq, &present)))
		return rc;
	if (present) {
		origin(r, "max_seq", "n_positions");
		(void)get(r, "n_ctx");
	} else if ((rc = need(r, "n_ctx", "max_seq", &f->max_seq))) {
		return rc;
	}
	if ((rc = even_heads(r, "n_embd", "n_head", f)))
		return rc;
	if ((rc = get_int(r, "n_inner", 1, &f->intermediate, &present)))
		return rc;
	if (!present)
		f->intermediate = 4 * f->hidden;
	origin(r, "intermediate", present ? "n_inner" : "4 x n_embd (n_inner null)");
	f->kv_heads = f->heads;
	if (a->multi_query) {
		int mq = 1;
		if ((rc = get_bool(r, "multi_query", &mq, &present)))
			return rc;
		f->kv_heads = mq ? 1 : f->heads;
		origin(r, "kv_heads", present ? "multi_query: %s" : "multi_query (default true)",
		       mq ? "true, one KV head" : "false");
	} else {
		origin(r, "kv_heads", "n_head (multi-head attention)");
	}
	if ((rc = activation(r, "activation_function", a->act, &f->act)))
		return rc;
	origin(r, "activation", "activation_function");
	f->mlp = "plain";
	f->norm = "layer";
	f->pos = "learned";
	f->linear_bias = 1;
	origin(r, "linear_bias", "%s: biases on every linear layer", a->class_name);
	return tied(r, a, f);
}

static int read_opt(struct rd *r, const struct arch *a, struct fields *f)
{
	int rc, present;
	if ((rc = need_core(r, "ffn_dim", f)) ||
	    (rc = even_heads(r, "hidden_size", "num_attention_heads", f)))
		return rc;
	f->kv_heads = f->heads;
	origin(r, "kv_heads", "num_attention_heads (multi-head attention)");
	int proj = f->hidden;
	if ((rc = get_int(r, "word_embed_proj_dim", 1, &proj, &present)))
		return rc;
	if (proj != f->hidden) {
		const struct llmsim_jnode *v = get(r, "word_embed_proj_dim");
		return llmsim_err_setloc(r->err, LLMSIM_EUNSUPPORTED, r->path, v->line, v->col,
					 "word_embed_proj_dim %d differs from hidden_size %d: OPT's "
					 "project_in/project_out layers are not modelled",
					 proj, f->hidden);
	}
	int bias = 1;
	if ((rc = get_bool(r, "enable_bias", &bias, &present)))
		return rc;
	f->linear_bias = bias;
	origin(r, "linear_bias", present ? "enable_bias" : "enable_bias (default true)");
	if ((rc = activation(r, "activation_function", a->act, &f->act)))
		return rc;
	origin(r, "activation", "activation_function");
	f->mlp = "plain";
	f->norm = "layer";
	f->pos = "learned";
	f->position_rows = f->max_seq + 2;
	origin(r, "position_rows", "max_position_embeddings + 2 (OPT's position offset)");
	return tied(r, a, f);
}

/* A Llama-style reading of an unknown model_type may not drop what it
 * cannot place: experts or latent attention in its keys stop it. */
static int unknown_type(struct rd *r, const char *as, const struct arch **a)
{
	static const char *const marks[] = {"expert", "lora_rank", "moe"};
	char keys[160] = "";
	for (size_t i = 0; i < r->root->n; i++)
		for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++)
			if (strstr(r->root->keys[i], marks[k]) &&
			    strlen(keys) + strlen(r->root->keys[i]) + 3 < sizeof keys) {
				snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s",
					 keys[0] ? ", " : "", r->root->keys[i]);
				break;
			}
	if (keys[0])
		return llmsim_err_setloc(r->err, LLMSIM_EUNSUPPORTED, r->path, r->root->line,
					 r->root->col,
					 "model_type '%s' is not one llmsim reads (%s), and its keys "
					 "%s describe experts or latent attention a Llama-style reading "
					 "would drop",
					 r->type, llmsim_hf_known_types(), keys);
	if (as) {
		for (size_t i = 0; i < NARCHS; i++)
			if (!strcmp(archs[i].type, as)) {
				*a = &archs[i];
				return 0;
			}
		return llmsim_err_set(r->err, LLMSIM_EINVAL, "--as '%s': expected one of %s", as,
				      llmsim_hf_known_types());
	}
	/* which Llama-style key is missing, if any */
	for (size_t i = 0; i < sizeof core_keys / sizeof core_keys[0]; i++)
		if (!llmsim_jobj_get(r->root, core_keys[i]))
			return llmsim_err_setloc(r->err, LLMSIM_EUNSUPPORTED, r->path, r->root->line,
						 r->root->col,
						 "model_type '%s' is not one llmsim reads (%s); read as a "
						 "Llama-style decoder it lacks '%s'",
						 r->type, llmsim_hf_known_types(), core_keys[i]);
	return llmsim_err_setloc(r->err, LLMSIM_EUNSUPPORTED, r->path, r->root->line, r->root->col,
				 "model_type '%s' is not one llmsim reads (%s); its keys are a "
				 "Llama-style decoder's: `llmsim model import --as llama` reads it so "
				 "(check the result)",
				 r->type, llmsim_hf_known_types());
}

/* ---- the YAML ---- */

/* A name llmsim accepts, from s: lowercase, anything but letters, digits,
 * '.', '_', '-' as '-', at most 63 characters. */
static void make_name(char *out, size_t size, const char *s)
{
	size_t o = 0;
	for (; *s && o + 1 < size && o < 63; s++) {
		unsigned char c = (unsigned char)*s;
		out[o++] = isalnum(c) || c == '.' || c == '_' || c == '-' ? (char)tolower(c) : '-';
	}
	out[o] = 0;
	if (!o)
		snprintf(out, size, "model");
}

/* The model's name: given, or the last part of _name_or_path, or the
 * config's folder (for .../NAME/config.json), or the file's stem. */
static void pick_name(char *out, size_t size, const char *given, const char *name_or_path,
		      const char *path)
{
	if (given) {
		snprintf(out, size, "%s", given);
		return;
	}
	char tmp[256];
	const char *b;
	if (name_or_path && *name_or_path && !strchr(name_or_path, ' ')) {
		b = strrchr(name_or_path, '/');
		make_name(out, size, b && b[1] ? b + 1 : name_or_path);
		return;
	}
	b = strrchr(path, '/');
	const char *file = b ? b + 1 : path;
	if (!strcasecmp(file, "config.json")) {
		/* a downloaded model's folder names it: .../Mistral-7B-v0.1/config.json */
		char full[4096];
		const char *dir = full;
		if (b)
			snprintf(full, sizeof full, "%.*s", (int)(b - path), path);
		else if (!getcwd(full, sizeof full))
			dir = "";
		const char *d = strrchr(dir, '/');
		if (*dir && strcmp(dir, "/")) {
			make_name(out, size, d ? d + 1 : dir);
			return;
		}
	}
	snprintf(tmp, sizeof tmp, "%s", file);
	size_t n = strlen(tmp);
	if (n > 5)
		tmp[n - 5] = 0;
	make_name(out, size, tmp);
}

static const char *from(const struct llmsim_hf_info *info, const char *field)
{
	for (int i = 0; i < info->norigins; i++)
		if (!strcmp(info->origin[i].field, field))
			return info->origin[i].from;
	return NULL;
}

static void line_int(struct buf *b, const struct llmsim_hf_info *info, const char *indent,
		     const char *key, const char *field, int v)
{
	char left[64];
	snprintf(left, sizeof left, "%s%s: %d", indent, key, v);
	const char *o = from(info, field);
	if (o)
		bput(b, "%-31s # %s\n", left, o);
	else
		bput(b, "%s\n", left);
}

static void line_str(struct buf *b, const struct llmsim_hf_info *info, const char *key,
		     const char *field, const char *v)
{
	char left[64];
	snprintf(left, sizeof left, "%s: %s", key, v);
	const char *o = field ? from(info, field) : NULL;
	if (o)
		bput(b, "%-31s # %s\n", left, o);
	else
		bput(b, "%s\n", left);
}

static void render(struct buf *b, const struct rd *r, const struct fields *f, const char *name,
		   const char *path)
{
	const struct llmsim_hf_info *info = r->info;
	const char *who = info->name_or_path[0] && !strchr(info->name_or_path, ' ')
			      ? info->name_or_path
			      : name;
	bput(b, "# %s: read from a Hugging Face config.json (model_type %s%s%s) by llmsim %s.\n",
	     name, info->model_type, info->architecture[0] ? ", " : "", info->architecture,
	     llmsim_version());
	bput(b, "# File: %s. Each value names the config key it came from.\n", path);
	bput(b, "name: %s\nfull_name: ", name);
	bquote(b, who);
	bput(b, "\nsource: ");
	char src[400];
	snprintf(src, sizeof src, "%s config.json (Hugging Face, model_type %s)", who,
		 info->model_type);
	bquote(b, src);
	bput(b, "\n");
	line_int(b, info, "", "layers", "layers", f->layers);
	line_int(b, info, "", "hidden", "hidden", f->hidden);
	line_int(b, info, "", "heads", "heads", f->heads);
	line_int(b, info, "", "kv_heads", "kv_heads", f->kv_heads);
	line_int(b, info, "", "head_dim", "head_dim", f->head_dim);
	line_int(b, info, "", "vocab", "vocab", f->vocab);
	line_int(b, info, "", "intermediate", "intermediate", f->intermediate);
	line_int(b, info, "", "max_seq", "max_seq", f->max_seq);
	if (f->position_rows)
		line_int(b, info, "", "position_rows", "position_rows", f->position_rows);
	line_str(b, info, "mlp", NULL, f->mlp);
	line_str(b, info, "activation", "activation", f->act);
	line_str(b, info, "norm", NULL, f->norm);
	line_str(b, info, "position", NULL, f->pos);
	line_str(b, info, "tied_embeddings", "tied_embeddings", f->tied ? "true" : "false");
	if (f->qkv_bias)
		line_str(b, info, "qkv_bias", "qkv_bias", "true");
	if (f->linear_bias)
		line_str(b, info, "linear_bias", "linear_bias", "true");
	if (f->qk_norm)
		line_str(b, info, "qk_norm", "qk_norm", "true");
	if (f->mtp_layers)
		line_int(b, info, "", "mtp_layers", "mtp_layers", f->mtp_layers);
	if (f->has_mla) {
		bput(b, "mla:\n");
		line_int(b, info, "  ", "q_lora_rank", "mla.q_lora_rank", f->q_lora_rank);
		line_int(b, info, "  ", "kv_lora_rank", "mla.kv_lora_rank", f->kv_lora_rank);
		line_int(b, info, "  ", "qk_nope_head_dim", "mla.qk_nope_head_dim", f->qk_nope_head_dim);
		line_int(b, info, "  ", "qk_rope_head_dim", "mla.qk_rope_head_dim", f->qk_rope_head_dim);
		line_int(b, info, "  ", "v_head_dim", "mla.v_head_dim", f->v_head_dim);
	}
	if (f->has_moe) {
		bput(b, "moe:\n");
		line_int(b, info, "  ", "experts", "moe.experts", f->experts);
		line_int(b, info, "  ", "shared_experts", "moe.shared_experts", f->shared_experts);
		line_int(b, info, "  ", "top_k", "moe.top_k", f->top_k);
		line_int(b, info, "  ", "expert_intermediate", "moe.expert_intermediate",
			 f->expert_intermediate);
		line_int(b, info, "  ", "dense_layers", "moe.dense_layers", f->dense_layers);
		line_int(b, info, "  ", "layer_freq", "moe.layer_freq", f->layer_freq);
	}
	if (r->notes[0]) {
		bput(b, "notes: ");
		bquote(b, r->notes);
		bput(b, "\n");
	}
	int any = 0;
	for (size_t i = 0; i < r->root->n; i++) {
		if (r->used[i])
			continue;
		if (!any++)
			bput(b, "extra:                          # config keys llmsim does not use, as they were\n");
		bput(b, "  ");
		bkey(b, r->root->keys[i]);
		bput(b, ": ");
		bvalue(b, r->root->vals[i]);
		bput(b, "\n");
	}
}

/* The type of the config: model_type, or the architecture's when absent. */
static int find_type(struct rd *r, const char *as, const struct arch **a)
{
	const struct llmsim_jnode *t = get(r, "model_type");
	const struct llmsim_jnode *ar = get(r, "architectures");
	if (t && t->kind != LLMSIM_J_STR)
		return bad(r, t, "model_type", "a string");
	if (ar && ar->kind == LLMSIM_J_ARR && ar->n && ar->vals[0]->kind == LLMSIM_J_STR)
		snprintf(r->info->architecture, sizeof r->info->architecture, "%s", ar->vals[0]->str);
	*a = NULL;
	for (size_t i = 0; i < NARCHS; i++)
		if ((t && !strcmp(archs[i].type, t->str)) ||
		    (!t && !strcmp(archs[i].class_name, r->info->architecture)))
			*a = &archs[i];
	snprintf(r->info->model_type, sizeof r->info->model_type, "%s",
		 t ? t->str : *a ? (*a)->type : "");
	r->type = r->info->model_type;
	if (!t && !r->info->architecture[0] && !as)
		return llmsim_err_setloc(r->err, LLMSIM_EPARSE, r->path, r->root->line, r->root->col,
					 "missing key 'model_type' (and no 'architectures'): not a "
					 "Hugging Face model config?");
	if (!r->type[0])
		r->type = r->info->architecture[0] ? r->info->architecture : "?";
	return *a ? 0 : unknown_type(r, as, a);
}

int llmsim_model_from_hf_buf(const char *buf, size_t len, const char *path, const char *name,
			     const char *as, struct llmsim_model *m, struct llmsim_hf_info *info,
			     struct llmsim_err *err)
{
	struct llmsim_hf_info own;
	if (!info)
		info = &own;
	memset(info, 0, sizeof *info);
	struct llmsim_jdoc *doc;
	int rc = llmsim_json_parse(buf, len, path, &doc, err);
	if (rc)
		return rc;
	const struct llmsim_jnode *root = llmsim_jdoc_root(doc);
	struct rd r = {.root = root, .path = path, .info = info, .err = err};
	struct buf y = {0};
	if (root->kind != LLMSIM_J_OBJ) {
		rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
				       "a config.json must be an object, not %s",
				       llmsim_jkind_name(root->kind));
		goto out;
	}
	if (!(r.used = calloc(root->n ? root->n : 1, 1))) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	const char *nop = NULL;
	const struct arch *a = NULL;
	if ((rc = get_str(&r, "_name_or_path", &nop)) || (rc = find_type(&r, as, &a)))
		goto out;
	snprintf(info->name_or_path, sizeof info->name_or_path, "%s", nop ? nop : "");
	if (a->note)
		note(&r, "%s", a->note);
	struct fields f = {0};
	switch (a->fam) {
	case F_LLAMA: rc = read_llama(&r, a, &f); break;
	case F_DEEPSEEK: rc = read_deepseek(&r, a, &f); break;
	case F_GPT2: rc = read_gpt2(&r, a, &f); break;
	case F_OPT: rc = read_opt(&r, a, &f); break;
	}
	if (rc)
		goto out;
	quant_note(&r);
	if (strcmp(info->model_type, a->type))
		note(&r, "model_type '%s' read as '%s'", info->model_type, a->type);
	char nm[64];
	pick_name(nm, sizeof nm, name, nop, path);
	render(&y, &r, &f, nm, path);
	if (y.oom) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	/* the loader checks what model YAML must satisfy; its positions are
	 * in the text made here, so the message keeps only the file's name */
	struct llmsim_err e = {0};
	if ((rc = llmsim_model_load_buf(y.s, y.len, path, m, &e))) {
		size_t pl = strlen(path);
		const char *msg = e.msg;
		if (!strncmp(msg, path, pl) && msg[pl] == ':') {
			msg += pl + 1;
			while (*msg && *msg != ' ')
				msg++;
			msg += *msg == ' ';
		}
		rc = llmsim_err_set(err, rc, "%s: as llmsim reads it, %s", path, msg);
		goto out;
	}
	snprintf(m->path, sizeof m->path, "%s", path);
	/* what `model import` prints: the whole description */
	info->yaml = y.s;
	y.s = NULL;
out:
	free(y.s);
	free(r.used);
	llmsim_jdoc_free(doc);
	if (info == &own) /* the caller wants no description: it is not kept */
		llmsim_hf_info_release(&own);
	return rc;
}

int llmsim_model_from_hf(const char *path, const char *name, const char *as,
			 struct llmsim_model *m, struct llmsim_hf_info *info, struct llmsim_err *err)
{
	char *buf;
	size_t len;
	int rc = llmsim_gz_slurp(path, LLMSIM_JSON_MAX_BYTES, &buf, &len, err);
	if (rc)
		return rc;
	rc = llmsim_model_from_hf_buf(buf, len, path, name, as, m, info, err);
	free(buf);
	return rc;
}
