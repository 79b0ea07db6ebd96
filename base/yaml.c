/*
 * yaml.c - libyaml event stream to a positioned tree, and the extractor.
 *
 * The parser is iterative over events with an explicit stack so that a
 * deeply nested (or fuzzed) document cannot overflow the C stack; nesting
 * past LLMSIM_YAML_MAX_DEPTH is an error. Time is linear in the document:
 * containers grow geometrically and each open mapping indexes its keys by
 * hash for the duplicate-key check (a 200,000-key mapping parses in tens
 * of milliseconds, bench/bench_yaml.c).
 */
#include "yaml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "bounds.h"
#include "enum.h"
#include "gzfile.h"
#include "hash.h"

#define LLMSIM_YAML_MAX_DEPTH 64
/* "Did you mean" compares a missing key with every key of its mapping:
 * only in mappings of at most this many keys (any description's). */
#define LLMSIM_YAML_SUGGEST_MAX_KEYS 1024

static struct llmsim_ynode *node_new(enum llmsim_ykind kind, int line, int col)
{
	struct llmsim_ynode *n = calloc(1, sizeof *n);
	if (n) {
		n->kind = kind;
		n->line = line;
		n->col = col;
	}
	return n;
}

void llmsim_ynode_free(struct llmsim_ynode *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->n; i++) {
		if (node->keys)
			free(node->keys[i]);
		if (node->vals)
			llmsim_ynode_free(node->vals[i]);
	}
	free(node->keys);
	free(node->key_line);
	free(node->key_col);
	free(node->used);
	free(node->vals);
	free(node->scalar);
	free(node);
}

/* Resize array a (a pointer lvalue) to n elements; nonzero on failure. */
#define RESIZE(a, n) resize((void **)&(a), sizeof *(a), (n))
static int resize(void **a, size_t elem, size_t n)
{
	void *q = realloc(*a, n * elem);
	if (!q)
		return -1;
	*a = q;
	return 0;
}

/* Append value v (and for maps key k at kl:kc) to container c; the arrays
 * double, so n appends cost O(n). */
static int node_push(struct llmsim_ynode *c, char *k, int kl, int kc,
		     struct llmsim_ynode *v)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		if (RESIZE(c->vals, cap))
			return -1;
		if (c->kind == LLMSIM_Y_MAP && (RESIZE(c->keys, cap) || RESIZE(c->key_line, cap) ||
						RESIZE(c->key_col, cap) || RESIZE(c->used, cap)))
			return -1;
		c->cap = cap;
	}
	if (c->kind == LLMSIM_Y_MAP) {
		c->keys[c->n] = k;
		c->key_line[c->n] = kl;
		c->key_col[c->n] = kc;
		c->used[c->n] = 0;
	}
	c->vals[c->n++] = v;
	return 0;
}

/* The duplicate-key check's comparison: key `pos` of the mapping is s. */
struct key_probe {
	const struct llmsim_ynode *map;
	const char *s;
};

static int same_key(size_t pos, const void *probe)
{
	const struct key_probe *k = probe;
	return !strcmp(k->map->keys[pos], k->s);
}

struct frame {
	struct llmsim_ynode *node;
	char *pending_key; /* MAP: key read, value not yet */
	int kl, kc;
	struct llmsim_hindex keys; /* MAP: its keys by hash */
};

static int parse(yaml_parser_t *p, const char *name, struct llmsim_ynode **root,
		 struct llmsim_err *err)
{
	struct frame st[LLMSIM_YAML_MAX_DEPTH];
	int depth = 0, docs = 0, rc = 0;
	struct llmsim_ynode *top = NULL;
	yaml_event_t ev;

	*root = NULL;
	for (;;) {
		if (!yaml_parser_parse(p, &ev)) {
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, name,
					       (int)p->problem_mark.line + 1,
					       (int)p->problem_mark.column + 1,
					       "%s%s%s", p->problem ? p->problem : "malformed YAML",
					       p->context ? " " : "", p->context ? p->context : "");
			goto fail;
		}
		int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
		struct llmsim_ynode *made = NULL;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			yaml_event_delete(&ev);
			goto done;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				rc = llmsim_err_setloc(err, LLMSIM_EPARSE, name, line, col,
						       "more than one YAML document");
				yaml_event_delete(&ev);
				goto fail;
			}
			break;
		case YAML_ALIAS_EVENT:
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, name, line, col,
					       "aliases are not supported");
			yaml_event_delete(&ev);
			goto fail;
		case YAML_SCALAR_EVENT:
			if (depth > 0 && st[depth - 1].node->kind == LLMSIM_Y_MAP &&
			    !st[depth - 1].pending_key) {
				char *k = strdup((const char *)ev.data.scalar.value);
				if (!k) {
					rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
					yaml_event_delete(&ev);
					goto fail;
				}
				struct key_probe probe = {st[depth - 1].node, k};
				if (llmsim_hindex_find(&st[depth - 1].keys, llmsim_hash_str(LLMSIM_HASH_SEED, k),
						       same_key, &probe) >= 0) {
					rc = llmsim_err_setloc(err, LLMSIM_EPARSE, name, line, col,
							       "duplicate key '%s'", k);
					free(k);
					yaml_event_delete(&ev);
					goto fail;
				}
				st[depth - 1].pending_key = k;
				st[depth - 1].kl = line;
				st[depth - 1].kc = col;
				break;
			}
			made = node_new(LLMSIM_Y_SCALAR, line, col);
			if (made) {
				made->scalar = strdup((const char *)ev.data.scalar.value);
				made->quoted = ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
					       ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
				if (!made->scalar) {
					free(made);
					made = NULL;
				}
			}
			goto attach;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth > 0 && st[depth - 1].node->kind == LLMSIM_Y_MAP &&
			    !st[depth - 1].pending_key) {
				rc = llmsim_err_setloc(err, LLMSIM_EPARSE, name, line, col,
						       "a mapping key must be a plain scalar");
				yaml_event_delete(&ev);
				goto fail;
			}
			if (depth >= LLMSIM_YAML_MAX_DEPTH) {
				rc = llmsim_err_setloc(err, LLMSIM_EPARSE, name, line, col,
						       "nesting deeper than %d levels", LLMSIM_YAML_MAX_DEPTH);
				yaml_event_delete(&ev);
				goto fail;
			}
			made = node_new(ev.type == YAML_MAPPING_START_EVENT ? LLMSIM_Y_MAP
									    : LLMSIM_Y_SEQ, line, col);
		attach:
			if (!made) {
				rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
				yaml_event_delete(&ev);
				goto fail;
			}
			if (depth == 0) {
				if (top) { /* cannot happen with one document */
					llmsim_ynode_free(made);
				} else {
					top = made;
				}
			} else {
				struct frame *f = &st[depth - 1];
				if (node_push(f->node, f->pending_key, f->kl, f->kc, made)) {
					llmsim_ynode_free(made);
					rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
					yaml_event_delete(&ev);
					goto fail;
				}
				if (f->node->kind == LLMSIM_Y_MAP &&
				    llmsim_hindex_add(&f->keys, llmsim_hash_str(LLMSIM_HASH_SEED, f->pending_key),
						      f->node->n - 1)) {
					f->pending_key = NULL; /* the map owns it now */
					rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
					yaml_event_delete(&ev);
					goto fail;
				}
				f->pending_key = NULL;
			}
			if (made->kind != LLMSIM_Y_SCALAR) {
				st[depth].node = made;
				st[depth].pending_key = NULL;
				memset(&st[depth].keys, 0, sizeof st[depth].keys);
				depth++;
			}
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth > 0)
				llmsim_hindex_release(&st[--depth].keys);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
done:
	if (!top) {
		return llmsim_err_setloc(err, LLMSIM_EPARSE, name, 1, 1, "empty document");
	}
	*root = top;
	return 0;
fail:
	for (int i = 0; i < depth; i++) {
		free(st[i].pending_key);
		llmsim_hindex_release(&st[i].keys);
	}
	llmsim_ynode_free(top);
	return rc;
}

int llmsim_yaml_load_buf(const char *buf, size_t len, const char *name,
			 struct llmsim_ynode **root, struct llmsim_err *err)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	int rc = parse(&p, name, root, err);
	yaml_parser_delete(&p);
	return rc;
}

int llmsim_yaml_load_file(const char *path, struct llmsim_ynode **root,
			  struct llmsim_err *err)
{
	struct llmsim_err oerr = {0};
	FILE *f = llmsim_gz_open(path, NULL, &oerr); /* plain or .gz */
	if (!f)
		return llmsim_err_set(err, oerr.code, "%s", oerr.msg);
	char *buf = malloc(LLMSIM_MAX_YAML_BYTES + 1);
	if (!buf) {
		fclose(f);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	errno = 0;
	size_t len = fread(buf, 1, LLMSIM_MAX_YAML_BYTES + 1, f);
	int bad = ferror(f), big = len > LLMSIM_MAX_YAML_BYTES, why = errno;
	int rc;
	if (llmsim_gz_close(f, path, &oerr) && oerr.code == LLMSIM_EPARSE)
		rc = llmsim_err_set(err, oerr.code, "%s", oerr.msg);
	else if (bad)
		rc = llmsim_err_set(err, LLMSIM_EIO, "%s: cannot read: %s", path,
				    why ? strerror(why) : "read error");
	else if (big)
		rc = llmsim_err_set(err, LLMSIM_EINVAL,
				    "%s: larger than %u KiB, the limit for a YAML file (llmsim's"
				    " descriptions are a few KiB)", path, LLMSIM_MAX_YAML_BYTES >> 10);
	else
		rc = llmsim_yaml_load_buf(buf, len, path, root, err);
	free(buf);
	return rc;
}

struct llmsim_ynode *llmsim_ymap_get(const struct llmsim_ynode *map, const char *key)
{
	if (!map || map->kind != LLMSIM_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i], key)) {
			map->used[i] = 1;
			return map->vals[i];
		}
	return NULL;
}

int llmsim_ynode_double(const struct llmsim_ynode *v, const char *path,
			const char *key, double *out, struct llmsim_err *err)
{
	if (v->kind != LLMSIM_Y_SCALAR)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be a number, not a %s", key,
					 v->kind == LLMSIM_Y_MAP ? "mapping" : "sequence");
	const char *s = v->scalar;
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (v->quoted || end == s || *end || errno == ERANGE || !isfinite(d) ||
	    !strncasecmp(s, "0x", 2) || !strncasecmp(s, "nan", 3) || !strncasecmp(s, "inf", 3))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be a finite number, got '%s'", key, s);
	*out = d;
	return 0;
}

int llmsim_ynode_bool(const struct llmsim_ynode *v, const char *path,
		      const char *key, int *out, struct llmsim_err *err)
{
	if (v->kind == LLMSIM_Y_SCALAR && !v->quoted) {
		if (!strcmp(v->scalar, "true")) { *out = 1; return 0; }
		if (!strcmp(v->scalar, "false")) { *out = 0; return 0; }
	}
	return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
				 "'%s' must be true or false", key);
}

int llmsim_ymap_check_unused(const struct llmsim_ynode *map, const char *path,
			     const char *where, struct llmsim_err *err)
{
	if (!map || map->kind != LLMSIM_Y_MAP)
		return 0;
	for (size_t i = 0; i < map->n; i++)
		if (!map->used[i])
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->key_line[i],
						 map->key_col[i], "unknown key '%s'%s%s%s",
						 map->keys[i], where ? " in '" : "",
						 where ? where : "", where ? "'" : "");
	return 0;
}

static int check_range(const struct llmsim_yfield *f, const struct llmsim_ynode *v,
		       double d, const char *path, struct llmsim_err *err)
{
	if (f->max > 0 && d > f->max)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be at most %.15g, got %s", f->key, f->max,
					 v->scalar);
	switch (f->range) {
	case LLMSIM_YR_ANY: return 0;
	case LLMSIM_YR_POSITIVE:
		if (d > 0) return 0;
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be positive, got %s", f->key, v->scalar);
	case LLMSIM_YR_NONNEG:
		if (d >= 0) return 0;
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must not be negative, got %s", f->key, v->scalar);
	case LLMSIM_YR_FRACTION:
		if (d > 0 && d <= 1) return 0;
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be in (0, 1], got %s", f->key, v->scalar);
	}
	return 0;
}

/* Edit distance of two short keys (capped at 32 characters). */
static int edit_distance(const char *a, const char *b)
{
	int n = (int)strlen(a), m = (int)strlen(b);
	if (n > 32 || m > 32)
		return 99;
	int d[33][33];
	for (int i = 0; i <= n; i++)
		d[i][0] = i;
	for (int j = 0; j <= m; j++)
		d[0][j] = j;
	for (int i = 1; i <= n; i++)
		for (int j = 1; j <= m; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			d[i][j] = c;
		}
	return d[n][m];
}

/* A key of `map` that no field names and that looks like a misspelling of
 * `want` (a missing required key): its index, or -1. */
static long misspelt(const struct llmsim_ynode *map, const struct llmsim_yfield *fields, size_t n,
		     const char *want)
{
	if (map->n > LLMSIM_YAML_SUGGEST_MAX_KEYS)
		return -1;
	for (size_t i = 0; i < map->n; i++) {
		int known = 0;
		for (size_t j = 0; j < n && !known; j++)
			known = !strcmp(map->keys[i], fields[j].key);
		int len = (int)strlen(want);
		if (!known && edit_distance(map->keys[i], want) <= (len > 6 ? len / 2 : 3))
			return (long)i;
	}
	return -1;
}

int llmsim_yaml_extract(const struct llmsim_ynode *map,
			const struct llmsim_yfield *fields, size_t n,
			void *base, const char *path, const char *where,
			struct llmsim_err *err)
{
	if (!map || map->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map ? map->line : 1,
					 map ? map->col : 1, "'%s' must be a mapping",
					 where ? where : "document");
	for (size_t i = 0; i < n; i++) {
		const struct llmsim_yfield *f = &fields[i];
		const struct llmsim_ynode *v = llmsim_ymap_get(map, f->key);
		char *dst = (char *)base + f->offset;
		int rc;
		if (!v) {
			long t = f->required ? misspelt(map, fields, n, f->key) : -1;
			if (t >= 0)
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->key_line[t],
							 map->key_col[t],
							 "unknown key '%s'%s%s%s (did you mean '%s'?)",
							 map->keys[t], where ? " in '" : "",
							 where ? where : "", where ? "'" : "", f->key);
			if (f->required)
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
							 "missing key '%s'%s%s%s", f->key,
							 where ? " in '" : "", where ? where : "",
							 where ? "'" : "");
			continue;
		}
		switch (f->type) {
		case LLMSIM_YF_DOUBLE: {
			double d;
			if ((rc = llmsim_ynode_double(v, path, f->key, &d, err)))
				return rc;
			if ((rc = check_range(f, v, d, path, err)))
				return rc;
			memcpy(dst, &d, sizeof d);
			break;
		}
		case LLMSIM_YF_INT: {
			double d;
			if ((rc = llmsim_ynode_double(v, path, f->key, &d, err)))
				return rc;
			if (d != floor(d) || fabs(d) > 2147483647.0)
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
							 "'%s' must be an integer, got %s", f->key, v->scalar);
			if ((rc = check_range(f, v, d, path, err)))
				return rc;
			int x = (int)d;
			memcpy(dst, &x, sizeof x);
			break;
		}
		case LLMSIM_YF_STRING:
			if (v->kind != LLMSIM_Y_SCALAR)
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
							 "'%s' must be a string", f->key);
			if (strlen(v->scalar) >= f->size || !v->scalar[0])
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
							 "'%s' must be 1 to %zu characters", f->key,
							 f->size - 1);
			memcpy(dst, v->scalar, strlen(v->scalar) + 1);
			break;
		case LLMSIM_YF_BOOL: {
			int b = 0;
			if ((rc = llmsim_ynode_bool(v, path, f->key, &b, err)))
				return rc;
			memcpy(dst, &b, sizeof b);
			break;
		}
		case LLMSIM_YF_ENUM: {
			int nnames = 0; /* the owning module's table, NULL-terminated */
			while (f->names[nnames])
				nnames++;
			int idx = v->kind == LLMSIM_Y_SCALAR
					  ? llmsim_enum_parse(f->names, nnames, v->scalar)
					  : -1;
			if (idx < 0) {
				char opts[256] = "";
				for (int j = 0; f->names[j]; j++) {
					strncat(opts, j ? ", " : "", sizeof opts - strlen(opts) - 1);
					strncat(opts, f->names[j], sizeof opts - strlen(opts) - 1);
				}
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
							 "'%s' must be one of %s, got '%s'", f->key, opts,
							 v->kind == LLMSIM_Y_SCALAR ? v->scalar : "(not a scalar)");
			}
			memcpy(dst, &idx, sizeof idx);
			break;
		}
		}
	}
	return 0;
}
