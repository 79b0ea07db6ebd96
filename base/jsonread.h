/*
 * jsonread.h - reading a JSON document (RFC 8259) into a small tree with
 * source positions, for inputs that come as JSON (Hugging Face
 * config.json). The writer of --json output is json.h.
 *
 * The reader is strict: one value, no comments, no trailing commas, no
 * NaN or Infinity, no duplicate keys in an object, no NUL in a string (C
 * strings), no unescaped control characters. Input is bounded
 * (LLMSIM_JSON_MAX_BYTES) and so is nesting (LLMSIM_JSON_MAX_NEST), so a
 * hostile file can neither exhaust memory nor the stack. Every complaint
 * is "name:line:col: message" (1-based), at the offending character.
 */
#ifndef LLMSIM_JSONREAD_H
#define LLMSIM_JSONREAD_H

#include <stddef.h>
#include <stdint.h>
#include "err.h"

#define LLMSIM_JSON_MAX_BYTES (16u << 20)
#define LLMSIM_JSON_MAX_NEST 64

enum llmsim_jkind {
	LLMSIM_J_NULL, LLMSIM_J_BOOL, LLMSIM_J_NUM, LLMSIM_J_STR, LLMSIM_J_ARR, LLMSIM_J_OBJ,
};

struct llmsim_jnode {
	enum llmsim_jkind kind;
	int line, col;               /* 1-based position of the value */
	int boolean;                 /* BOOL */
	double num;                  /* NUM: its value (nearest double) */
	int is_int;                  /* NUM: written without fraction or exponent and
				      * within int64_t; then `i` holds it exactly */
	int64_t i;
	const char *str;             /* STR: UTF-8, NUL-terminated; NUM: the text as written */
	size_t n;                    /* ARR, OBJ: items */
	const char **keys;           /* OBJ: n keys, in file order */
	const struct llmsim_jnode **vals; /* ARR, OBJ: n values */
};

struct llmsim_jdoc; /* owns every node and string */

/* Parse len bytes of buf; `name` (the file) is used in messages. On
 * success *doc owns the tree. */
int llmsim_json_parse(const char *buf, size_t len, const char *name, struct llmsim_jdoc **doc,
		      struct llmsim_err *err);

/* Read and parse a whole file (plain or gzip, base/gzfile.h). A file past
 * LLMSIM_JSON_MAX_BYTES fails with LLMSIM_EINVAL. */
int llmsim_json_load_file(const char *path, struct llmsim_jdoc **doc, struct llmsim_err *err);

void llmsim_jdoc_free(struct llmsim_jdoc *doc); /* NULL is a no-op */

/* The document's top-level value. */
const struct llmsim_jnode *llmsim_jdoc_root(const struct llmsim_jdoc *doc);

/* The value of key in an object (NULL if absent or obj is no object). */
const struct llmsim_jnode *llmsim_jobj_get(const struct llmsim_jnode *obj, const char *key);

/* The name of a kind, for messages: "null", "a boolean", "a number",
 * "a string", "an array", "an object". */
const char *llmsim_jkind_name(enum llmsim_jkind k);

#endif
