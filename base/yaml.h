/*
 * yaml.h - YAML documents as a small tree with source positions, and a
 * table-driven extractor that turns a mapping into a C struct.
 *
 * Only this module includes libyaml. The tree keeps the 1-based line and
 * column of every key and value so that every later complaint ("unknown
 * key", "must be positive") can name the place in the file. Anchors,
 * aliases and multi-document streams are refused: hardware and model files
 * are plain data.
 */
#ifndef LLMSIM_YAML_H
#define LLMSIM_YAML_H

#include <stddef.h>
#include "err.h"

enum llmsim_ykind { LLMSIM_Y_SCALAR, LLMSIM_Y_MAP, LLMSIM_Y_SEQ };

struct llmsim_ynode {
	enum llmsim_ykind kind;
	int line, col;            /* 1-based position of the node */
	char *scalar;             /* LLMSIM_Y_SCALAR: the text */
	int quoted;               /* scalar was quoted: never a number */
	size_t n;                 /* MAP: pairs; SEQ: items */
	char **keys;              /* MAP: n keys */
	int *key_line, *key_col;  /* MAP: n key positions */
	unsigned char *used;      /* MAP: key consumed by an extractor */
	struct llmsim_ynode **vals; /* MAP and SEQ: n values */
	size_t cap;               /* private: room in the arrays */
};

/* Parse a whole file. On success *root owns the tree (free with
 * llmsim_ynode_free). `name` is used in messages. */
int llmsim_yaml_load_file(const char *path, struct llmsim_ynode **root,
			  struct llmsim_err *err);
int llmsim_yaml_load_buf(const char *buf, size_t len, const char *name,
			 struct llmsim_ynode **root, struct llmsim_err *err);
void llmsim_ynode_free(struct llmsim_ynode *node); /* NULL is a no-op */

/* The value of `key` in a map (NULL if absent or node is not a map);
 * marks the key used. */
struct llmsim_ynode *llmsim_ymap_get(const struct llmsim_ynode *map,
				     const char *key);

/* Scalar conversions. Each fails with a located message naming `key`. */
int llmsim_ynode_double(const struct llmsim_ynode *v, const char *path,
			const char *key, double *out, struct llmsim_err *err);
int llmsim_ynode_bool(const struct llmsim_ynode *v, const char *path,
		      const char *key, int *out, struct llmsim_err *err);

/* Fails on the first key of `map` no extractor has used:
 * "path:L:C: unknown key 'k' in 'where'". */
int llmsim_ymap_check_unused(const struct llmsim_ynode *map, const char *path,
			     const char *where, struct llmsim_err *err);

/* Table-driven extraction of one mapping into a struct. */
enum llmsim_yftype {
	LLMSIM_YF_DOUBLE,  /* double */
	LLMSIM_YF_INT,     /* int, must be integral */
	LLMSIM_YF_STRING,  /* char[size] inline buffer */
	LLMSIM_YF_BOOL,    /* int 0/1 */
	LLMSIM_YF_ENUM,    /* int index into names[] */
};

enum {
	LLMSIM_YF_OPTIONAL = 0,
	LLMSIM_YF_REQUIRED = 1,
};

enum llmsim_yrange {
	LLMSIM_YR_ANY,      /* any finite value */
	LLMSIM_YR_POSITIVE, /* > 0 */
	LLMSIM_YR_NONNEG,   /* >= 0 */
	LLMSIM_YR_FRACTION, /* 0 < x <= 1 */
};

struct llmsim_yfield {
	const char *key;
	enum llmsim_yftype type;
	size_t offset;             /* offsetof into the target struct */
	size_t size;               /* STRING: buffer size */
	int required;
	enum llmsim_yrange range;
	const char *const *names;  /* ENUM: NULL-terminated */
	double max;                /* INT, DOUBLE: the largest value (base/bounds.h), 0: none */
};

/* Extract `n` fields from `map` into `base`; unknown keys are left for
 * llmsim_ymap_check_unused. A required key that is missing is reported at
 * the map's own position. */
int llmsim_yaml_extract(const struct llmsim_ynode *map,
			const struct llmsim_yfield *fields, size_t n,
			void *base, const char *path, const char *where,
			struct llmsim_err *err);

#endif
