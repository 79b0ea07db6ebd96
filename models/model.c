/*
 * model.c - reading a model description (models/NAME.yaml) into struct
 * llmsim_model, and finding one by name.
 *
 * The file holds the fields of the struct at the top level, with optional
 * `mla:` and `moe:` sections, an optional `notes:` line (what the
 * description leaves out) and an optional `extra:` map of anything: keys
 * llmsim does not use (rope_theta, rms_norm_eps, ...), kept with the
 * description and listed, never read. Any other key is an error, so a
 * misspelt field cannot pass unnoticed. The attention kind is derived, never stated:
 * an mla section makes it MLA, else kv_heads == heads is MHA, kv_heads == 1
 * MQA, anything else GQA. A name containing '/' or ending in ".yaml" is a
 * path (one ending in .json, or a folder holding config.json, a Hugging
 * Face config: models/hf.h); other names match a file stem, `name:` or
 * `aliases:` in <data>/models/, case-insensitively.
 */
#include "model.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bounds.h"
#include "base/datafind.h"
#include "base/enum.h"
#include "base/paths.h"
#include "base/yaml.h"
#include "models/hf.h"
#include "model_load.h"

#define M(f) offsetof(struct llmsim_model, f)
#define FLD(k, t, f, req, rng) {.key = k, .type = t, .offset = M(f), .size = sizeof(((struct llmsim_model *)0)->f), .required = req, .range = rng}
/* Every count takes the bound of its flag (base/bounds.h), so a file is
 * refused where --layers 2147483647 is, with the file's line and column. */
#define FLDMAX(k, t, f, req, rng, mx) {.key = k, .type = t, .offset = M(f), .size = sizeof(((struct llmsim_model *)0)->f), .required = req, .range = rng, .max = mx}
#define REQ_POS_INT(k, mx) FLDMAX(#k, LLMSIM_YF_INT, k, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE, mx)
#define OPT_BOOL(k) FLD(#k, LLMSIM_YF_BOOL, k, LLMSIM_YF_OPTIONAL, LLMSIM_YR_ANY)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const mlp_names[] = {"gated", "plain", NULL};
static const char *const act_names[] = {"silu", "gelu", "relu", NULL};
static const char *const norm_names[] = {"rms", "layer", NULL};
static const char *const pos_names[] = {"rope", "learned", "none", NULL};

#define ENUM(k, f, nm) {.key = k, .type = LLMSIM_YF_ENUM, .offset = M(f), .required = LLMSIM_YF_REQUIRED, .names = nm}

static const struct llmsim_yfield top_fields[] = {
	FLD("name", LLMSIM_YF_STRING, name, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	FLD("full_name", LLMSIM_YF_STRING, full_name, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	FLD("source", LLMSIM_YF_STRING, source, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	FLDMAX("params_published", LLMSIM_YF_DOUBLE, params_published, LLMSIM_YF_OPTIONAL,
	       LLMSIM_YR_POSITIVE, LLMSIM_MAX_PARAMS),
	REQ_POS_INT(layers, LLMSIM_MAX_LAYERS),
	REQ_POS_INT(hidden, LLMSIM_MAX_WIDTH),
	REQ_POS_INT(heads, LLMSIM_MAX_WIDTH),
	REQ_POS_INT(kv_heads, LLMSIM_MAX_WIDTH),
	REQ_POS_INT(head_dim, LLMSIM_MAX_WIDTH),
	REQ_POS_INT(vocab, LLMSIM_MAX_VOCAB),
	REQ_POS_INT(intermediate, LLMSIM_MAX_WIDTH),
	REQ_POS_INT(max_seq, LLMSIM_MAX_TOKENS),
	ENUM("mlp", mlp, mlp_names),
	ENUM("activation", activation, act_names),
	ENUM("norm", norm, norm_names),
	ENUM("position", position, pos_names),
	OPT_BOOL(tied_embeddings),
	OPT_BOOL(qkv_bias),
	OPT_BOOL(linear_bias),
	OPT_BOOL(qk_norm),
	FLDMAX("mtp_layers", LLMSIM_YF_INT, mtp_layers, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG,
	       LLMSIM_MAX_DRAFT),
	FLDMAX("position_rows", LLMSIM_YF_INT, position_rows, LLMSIM_YF_OPTIONAL,
	       LLMSIM_YR_POSITIVE, LLMSIM_MAX_TOKENS),
	FLD("notes", LLMSIM_YF_STRING, notes, LLMSIM_YF_OPTIONAL, LLMSIM_YR_ANY),
};

#define MLA(k, rng) {.key = #k, .type = LLMSIM_YF_INT, .offset = offsetof(struct llmsim_mla, k), .required = LLMSIM_YF_REQUIRED, .range = rng, .max = LLMSIM_MAX_WIDTH}
static const struct llmsim_yfield mla_fields[] = {
	MLA(q_lora_rank, LLMSIM_YR_NONNEG),
	MLA(kv_lora_rank, LLMSIM_YR_POSITIVE),
	MLA(qk_nope_head_dim, LLMSIM_YR_POSITIVE),
	MLA(qk_rope_head_dim, LLMSIM_YR_POSITIVE),
	MLA(v_head_dim, LLMSIM_YR_POSITIVE),
};

#define MOE(k, req, rng, mx) {.key = #k, .type = LLMSIM_YF_INT, .offset = offsetof(struct llmsim_moe, k), .required = req, .range = rng, .max = mx}
static const struct llmsim_yfield moe_fields[] = {
	MOE(experts, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE, LLMSIM_MAX_EXPERTS),
	MOE(shared_experts, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG, LLMSIM_MAX_EXPERTS),
	MOE(top_k, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE, LLMSIM_MAX_EXPERTS),
	MOE(expert_intermediate, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE, LLMSIM_MAX_WIDTH),
	MOE(dense_layers, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG, LLMSIM_MAX_LAYERS),
	MOE(layer_freq, LLMSIM_YF_OPTIONAL, LLMSIM_YR_POSITIVE, LLMSIM_MAX_LAYERS),
	MOE(max_nodes, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG, LLMSIM_MAX_GPUS),
};

const char *llmsim_attn_kind_name(enum llmsim_attn_kind k)
{
	static const char *const names[] = {
		[LLMSIM_ATTN_MHA] = "mha",
		[LLMSIM_ATTN_GQA] = "gqa",
		[LLMSIM_ATTN_MQA] = "mqa",
		[LLMSIM_ATTN_MLA] = "mla",
	};
	_Static_assert(N(names) == LLMSIM_ATTN_MLA + 1, "attention kind names");
	return llmsim_enum_label(names, N(names), (int)k);
}

/* Complain at the value of `key` in map. */
static int bad(const struct llmsim_ynode *map, const char *key, const char *path,
	       struct llmsim_err *err, const char *msg)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	LLMSIM_ASSERT(v);
	return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col, "%s", msg);
}

static int sub(const struct llmsim_ynode *root, const char *key, const struct llmsim_yfield *f,
	       size_t n, void *dst, const char *path, int *present, struct llmsim_err *err)
{
	const struct llmsim_ynode *s = llmsim_ymap_get(root, key);
	*present = s != NULL;
	if (!s)
		return 0;
	if (s->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, s->line, s->col,
					 "'%s' must be a mapping", key);
	int rc = llmsim_yaml_extract(s, f, n, dst, path, key, err);
	if (!rc)
		rc = llmsim_ymap_check_unused(s, path, key, err);
	return rc;
}

static int check(const struct llmsim_ynode *root, struct llmsim_model *m, const char *path,
		 struct llmsim_err *err)
{
	char msg[256];
	if (!llmsim_data_name_ok(m->name))
		return bad(root, "name", path, err, "'name' must be letters, digits, '.', '_' or '-'");
	if (m->kv_heads > m->heads || m->heads % m->kv_heads) {
		snprintf(msg, sizeof msg, "'kv_heads' (%d) must divide 'heads' (%d)", m->kv_heads,
			 m->heads);
		return bad(root, "kv_heads", path, err, msg);
	}
	const struct llmsim_ynode *s;
	if (m->has_mla && m->head_dim != m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim) {
		snprintf(msg, sizeof msg,
			 "'head_dim' (%d) must be qk_nope_head_dim + qk_rope_head_dim (%d) with mla",
			 m->head_dim, m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim);
		return bad(root, "head_dim", path, err, msg);
	}
	if (m->has_moe) {
		s = llmsim_ymap_get(root, "moe");
		if (m->moe.top_k > m->moe.experts)
			return bad(s, "top_k", path, err, "'top_k' must not exceed 'experts'");
		if (m->moe.dense_layers >= m->layers && llmsim_ymap_get(s, "dense_layers"))
			return bad(s, "dense_layers", path, err,
				   "'dense_layers' must be fewer than 'layers'");
	}
	if (m->position_rows && m->position != LLMSIM_POS_LEARNED)
		return bad(root, "position_rows", path, err,
			   "'position_rows' needs 'position: learned'");
	if (m->position_rows && m->position_rows < m->max_seq)
		return bad(root, "position_rows", path, err,
			   "'position_rows' must be at least 'max_seq'");
	/* 1000x the largest published model: keeps every count in 64 bits */
	struct llmsim_params p;
	llmsim_model_params(m, &p);
	if (!(p.total + p.mtp <= LLMSIM_MAX_PARAMS)) {
		snprintf(msg, sizeof msg, "%.3g parameters: more than 1e15 (check the sizes)",
			 p.total + p.mtp);
		return bad(root, "layers", path, err, msg);
	}
	return 0;
}

/* The `extra:` map: its keys, listed in m->extra_keys; its values are the
 * file's own business. */
static int read_extra(const struct llmsim_ynode *root, struct llmsim_model *m, const char *path,
		      struct llmsim_err *err)
{
	const struct llmsim_ynode *x = llmsim_ymap_get(root, "extra");
	if (!x)
		return 0;
	if (x->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, x->line, x->col,
					 "'extra' must be a mapping of keys llmsim does not use");
	size_t l = 0;
	for (size_t i = 0; i < x->n; i++) {
		size_t k = strlen(x->keys[i]);
		if (l + k + 6 >= sizeof m->extra_keys) {
			snprintf(m->extra_keys + l, sizeof m->extra_keys - l, "%s...", l ? ", " : "");
			break;
		}
		l += (size_t)snprintf(m->extra_keys + l, sizeof m->extra_keys - l, "%s%s",
				      l ? ", " : "", x->keys[i]);
	}
	m->nextra = (int)x->n;
	return 0;
}

/* An unknown top-level key, with where keys llmsim does not use belong. */
static int unknown_key(const struct llmsim_ynode *root, const char *path, struct llmsim_err *err)
{
	for (size_t i = 0; i < root->n; i++)
		if (!root->used[i])
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->key_line[i],
						 root->key_col[i],
						 "unknown key '%s' (keys llmsim does not use go under "
						 "'extra:')",
						 root->keys[i]);
	return 0;
}

static int load_tree(const struct llmsim_ynode *root, void *obj, const char *path,
		     struct llmsim_err *err)
{
	struct llmsim_model *m = obj;
	int rc;
	memset(m, 0, sizeof *m);
	snprintf(m->path, sizeof m->path, "%s", path);
	m->moe.layer_freq = 1;
	if (root->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "a model file must be a mapping of keys");
	if ((rc = llmsim_yaml_extract(root, top_fields, N(top_fields), m, path, NULL, err)))
		return rc;
	if ((rc = llmsim_data_read_aliases(root, path, m->aliases, sizeof m->aliases[0],
					   LLMSIM_MODEL_MAX_ALIASES, &m->naliases, err)))
		return rc;
	if ((rc = sub(root, "mla", mla_fields, N(mla_fields), &m->mla, path, &m->has_mla, err)))
		return rc;
	if ((rc = sub(root, "moe", moe_fields, N(moe_fields), &m->moe, path, &m->has_moe, err)))
		return rc;
	if ((rc = read_extra(root, m, path, err)) || (rc = unknown_key(root, path, err)))
		return rc;
	if ((rc = check(root, m, path, err)))
		return rc;
	if (m->position == LLMSIM_POS_LEARNED && !m->position_rows)
		m->position_rows = m->max_seq;
	if (m->has_mla)
		m->attention = LLMSIM_ATTN_MLA;
	else if (m->kv_heads == m->heads)
		m->attention = LLMSIM_ATTN_MHA;
	else if (m->kv_heads == 1)
		m->attention = LLMSIM_ATTN_MQA;
	else
		m->attention = LLMSIM_ATTN_GQA;
	return 0;
}

int llmsim_model_load_buf(const char *buf, size_t len, const char *name, struct llmsim_model *m,
			  struct llmsim_err *err)
{
	return llmsim_data_read_buf(buf, len, name, load_tree, m, err);
}

int llmsim_model_load_file(const char *path, struct llmsim_model *m, struct llmsim_err *err)
{
	return llmsim_data_read_file(path, load_tree, m, err);
}

/* ---- finding models by name ---- */

static const char *name_at(const void *obj, int i)
{
	const struct llmsim_model *m = obj;
	return i == 0 ? m->name : i <= m->naliases ? m->aliases[i - 1] : NULL;
}

static const struct llmsim_data_kind model_kind = {
	.sub = "models", .what = "model", .parse = load_tree, .name = name_at,
};

int llmsim_model_list(void (*fn)(const char *path, void *ctx), void *ctx, struct llmsim_err *err)
{
	return llmsim_data_list(model_kind.sub, fn, ctx, err);
}

int llmsim_model_load(const char *name, struct llmsim_model *m, struct llmsim_err *err)
{
	char p[4096];
	struct stat st;
	if (name && llmsim_hf_is_config(name))
		return llmsim_model_from_hf(llmsim_data_input(name, p, sizeof p), NULL, NULL, m, NULL,
					    err);
	/* a downloaded model's folder: its config.json */
	if (name && !stat(name, &st) && S_ISDIR(st.st_mode)) {
		size_t n = strlen(name);
		if (snprintf(p, sizeof p, "%s%sconfig.json", name, n && name[n - 1] == '/' ? "" : "/") >=
		    (int)sizeof p)
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s: path too long", name);
		if (access(p, F_OK))
			return llmsim_err_set(err, LLMSIM_ENOENT,
					      "%s: a folder without a config.json (want a model name, a "
					      "model YAML or a Hugging Face config.json)",
					      name);
		return llmsim_model_from_hf(p, NULL, NULL, m, NULL, err);
	}
	return llmsim_data_find(&model_kind, name, m, err);
}

int llmsim_model_load_named(const char *name, struct llmsim_model *m, struct llmsim_err *err)
{
	return llmsim_data_find_name(&model_kind, name, m, err);
}
