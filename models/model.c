/*
 * model.c - reading a model description (models/NAME.yaml) into struct
 * llmsim_model, and finding one by name.
 *
 * The file holds the fields of the struct at the top level, with optional
 * `mla:` and `moe:` sections. The attention kind is derived, never stated:
 * an mla section makes it MLA, else kv_heads == heads is MHA, kv_heads == 1
 * MQA, anything else GQA. A name containing '/' or ending in ".yaml" is a
 * path; other names match a file stem, `name:` or `aliases:` in
 * <data>/models/, case-insensitively.
 */
#include "model.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../base/paths.h"
#include "../base/yaml.h"
#include "model_load.h"

#define M(f) offsetof(struct llmsim_model, f)
#define FLD(k, t, f, req, rng) {.key = k, .type = t, .offset = M(f), .size = sizeof(((struct llmsim_model *)0)->f), .required = req, .range = rng}
#define REQ_POS_INT(k) FLD(#k, LLMSIM_YF_INT, k, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE)
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
	FLD("params_published", LLMSIM_YF_DOUBLE, params_published, LLMSIM_YF_OPTIONAL,
	    LLMSIM_YR_POSITIVE),
	REQ_POS_INT(layers),
	REQ_POS_INT(hidden),
	REQ_POS_INT(heads),
	REQ_POS_INT(kv_heads),
	REQ_POS_INT(head_dim),
	REQ_POS_INT(vocab),
	REQ_POS_INT(intermediate),
	REQ_POS_INT(max_seq),
	ENUM("mlp", mlp, mlp_names),
	ENUM("activation", activation, act_names),
	ENUM("norm", norm, norm_names),
	ENUM("position", position, pos_names),
	OPT_BOOL(tied_embeddings),
	OPT_BOOL(qkv_bias),
	OPT_BOOL(linear_bias),
	FLD("mtp_layers", LLMSIM_YF_INT, mtp_layers, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG),
	FLD("position_rows", LLMSIM_YF_INT, position_rows, LLMSIM_YF_OPTIONAL, LLMSIM_YR_POSITIVE),
};

#define MLA(k, rng) {.key = #k, .type = LLMSIM_YF_INT, .offset = offsetof(struct llmsim_mla, k), .required = LLMSIM_YF_REQUIRED, .range = rng}
static const struct llmsim_yfield mla_fields[] = {
	MLA(q_lora_rank, LLMSIM_YR_NONNEG),
	MLA(kv_lora_rank, LLMSIM_YR_POSITIVE),
	MLA(qk_nope_head_dim, LLMSIM_YR_POSITIVE),
	MLA(qk_rope_head_dim, LLMSIM_YR_POSITIVE),
	MLA(v_head_dim, LLMSIM_YR_POSITIVE),
};

#define MOE(k, req, rng) {.key = #k, .type = LLMSIM_YF_INT, .offset = offsetof(struct llmsim_moe, k), .required = req, .range = rng}
static const struct llmsim_yfield moe_fields[] = {
	MOE(experts, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE),
	MOE(shared_experts, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG),
	MOE(top_k, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE),
	MOE(expert_intermediate, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE),
	MOE(dense_layers, LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG),
	MOE(layer_freq, LLMSIM_YF_OPTIONAL, LLMSIM_YR_POSITIVE),
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
	return (unsigned)k < N(names) ? names[k] : "?";
}

static int name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* Complain at the value of `key` in map. */
static int bad(const struct llmsim_ynode *map, const char *key, const char *path,
	       struct llmsim_err *err, const char *msg)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	LLMSIM_ASSERT(v);
	return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col, "%s", msg);
}

static int load_aliases(const struct llmsim_ynode *root, struct llmsim_model *m,
			const char *path, struct llmsim_err *err)
{
	const struct llmsim_ynode *a = llmsim_ymap_get(root, "aliases");
	if (!a)
		return 0;
	if (a->kind != LLMSIM_Y_SEQ)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, a->line, a->col,
					 "'aliases' must be a list of names");
	if (a->n > LLMSIM_MODEL_MAX_ALIASES)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, a->line, a->col,
					 "'aliases' has %zu names, at most %d allowed", a->n,
					 LLMSIM_MODEL_MAX_ALIASES);
	for (size_t i = 0; i < a->n; i++) {
		const struct llmsim_ynode *v = a->vals[i];
		if (v->kind != LLMSIM_Y_SCALAR || !name_ok(v->scalar) ||
		    strlen(v->scalar) >= sizeof m->aliases[0])
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
						 "an alias must be a name of 1 to %zu letters, digits, '.', '_' or '-'",
						 sizeof m->aliases[0] - 1);
		snprintf(m->aliases[i], sizeof m->aliases[i], "%s", v->scalar);
	}
	m->naliases = (int)a->n;
	return 0;
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
	if (!name_ok(m->name))
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
	return 0;
}

static int load_tree(const struct llmsim_ynode *root, struct llmsim_model *m, const char *path,
		     struct llmsim_err *err)
{
	int rc;
	memset(m, 0, sizeof *m);
	snprintf(m->path, sizeof m->path, "%s", path);
	m->moe.layer_freq = 1;
	if (root->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "a model file must be a mapping of keys");
	if ((rc = llmsim_yaml_extract(root, top_fields, N(top_fields), m, path, NULL, err)))
		return rc;
	if ((rc = load_aliases(root, m, path, err)))
		return rc;
	if ((rc = sub(root, "mla", mla_fields, N(mla_fields), &m->mla, path, &m->has_mla, err)))
		return rc;
	if ((rc = sub(root, "moe", moe_fields, N(moe_fields), &m->moe, path, &m->has_moe, err)))
		return rc;
	if ((rc = llmsim_ymap_check_unused(root, path, NULL, err)))
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
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_buf(buf, len, name, &root, err);
	if (rc)
		return rc;
	rc = load_tree(root, m, name, err);
	llmsim_ynode_free(root);
	return rc;
}

int llmsim_model_load_file(const char *path, struct llmsim_model *m, struct llmsim_err *err)
{
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	rc = load_tree(root, m, path, err);
	llmsim_ynode_free(root);
	return rc;
}

/* ---- finding models by name ---- */

#define MAX_FILES 256

struct file_list {
	char *path[MAX_FILES];
	int n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_release(struct file_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->path[i]);
	l->n = 0;
}

static int list_files(struct file_list *l, struct llmsim_err *err)
{
	char dir[4096];
	l->n = 0;
	if (llmsim_data_path(dir, sizeof dir, "models", "") != 0)
		return llmsim_err_set(err, LLMSIM_ENOENT,
				      "no llmsim data folder with models/ (set LLMSIM_DATA_DIR)");
	DIR *d = opendir(dir);
	if (!d)
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s: cannot open: %s", dir,
				      strerror(errno));
	struct dirent *e;
	while ((e = readdir(d)) && l->n < MAX_FILES) {
		size_t n = strlen(e->d_name);
		if (n <= 5 || strcmp(e->d_name + n - 5, ".yaml") || e->d_name[0] == '.')
			continue;
		char p[4096 + 256];
		struct stat st;
		snprintf(p, sizeof p, "%s%s", dir, e->d_name);
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!(l->path[l->n] = strdup(p))) {
			closedir(d);
			list_release(l);
			return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		}
		l->n++;
	}
	closedir(d);
	qsort(l->path, (size_t)l->n, sizeof l->path[0], cmp_str);
	return 0;
}

int llmsim_model_list(void (*fn)(const char *path, void *ctx), void *ctx, struct llmsim_err *err)
{
	struct file_list l;
	int rc = list_files(&l, err);
	if (rc)
		return rc;
	for (int i = 0; i < l.n; i++)
		fn(l.path[i], ctx);
	list_release(&l);
	return 0;
}

static int stem_is(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b) - 5;
	return strlen(name) == n && !strncasecmp(b, name, n);
}

static int names_model(const struct llmsim_model *m, const char *name)
{
	if (!strcasecmp(m->name, name))
		return 1;
	for (int i = 0; i < m->naliases; i++)
		if (!strcasecmp(m->aliases[i], name))
			return 1;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

int llmsim_model_load(const char *name, struct llmsim_model *m, struct llmsim_err *err)
{
	if (!name || !*name)
		return llmsim_err_set(err, LLMSIM_EINVAL, "empty model name");
	size_t len = strlen(name);
	if (strchr(name, '/') || (len >= 5 && !strcasecmp(name + len - 5, ".yaml")))
		return llmsim_model_load_file(name, m, err);
	struct file_list l;
	int rc = list_files(&l, err);
	if (rc)
		return rc;
	for (int i = 0; i < l.n; i++)
		if (stem_is(l.path[i], name)) {
			rc = llmsim_model_load_file(l.path[i], m, err);
			list_release(&l);
			return rc;
		}
	char known[MAX_FILES][64];
	int nknown = 0;
	for (int i = 0; i < l.n; i++) {
		if ((rc = llmsim_model_load_file(l.path[i], m, err))) {
			list_release(&l);
			return rc;
		}
		if (names_model(m, name)) {
			list_release(&l);
			return 0;
		}
		snprintf(known[nknown++], sizeof known[0], "%s", m->name);
	}
	list_release(&l);
	qsort(known, (size_t)nknown, sizeof known[0], cmp_name);
	char list[2048] = "";
	for (int i = 0; i < nknown; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
	}
	return llmsim_err_set(err, LLMSIM_ENOENT, "unknown model '%s' (known: %s)", name,
			      nknown ? list : "none");
}
