/*
 * datafind.h - description files in the data folder (hw/, models/): reading
 * one into a struct, the names and aliases it answers to, listing them and
 * finding one by name. Shared by the GPU and model loaders, which must not
 * depend on each other.
 */
#ifndef LLMSIM_DATAFIND_H
#define LLMSIM_DATAFIND_H

#include <stddef.h>
#include "err.h"

struct llmsim_ynode;

/* Fills obj from the parsed tree of a file; `path` is for messages. */
typedef int (*llmsim_data_parse_fn)(const struct llmsim_ynode *root, void *obj,
				    const char *path, struct llmsim_err *err);

/* Parse the YAML file at path (or the len bytes at buf, `name` standing in
 * for the path) and hand its tree to parse(root, obj, path, err); the tree
 * is freed before returning. Returns the parse error or parse's status. */
int llmsim_data_read_file(const char *path, llmsim_data_parse_fn parse, void *obj,
			  struct llmsim_err *err);
int llmsim_data_read_buf(const char *buf, size_t len, const char *name,
			 llmsim_data_parse_fn parse, void *obj, struct llmsim_err *err);

/* 1 if s is a valid name or alias: one or more letters, digits, '.', '_'
 * or '-' (nothing that could be a path), else 0. */
int llmsim_data_name_ok(const char *s);

/* Read the optional `aliases:` list of root into aliases, a char[max][size]
 * array, and its count into *n (left alone when absent). Each alias must
 * pass llmsim_data_name_ok and fit in size - 1 characters; errors are
 * located at the offending node. */
int llmsim_data_read_aliases(const struct llmsim_ynode *root, const char *path,
			     void *aliases, size_t size, int max, int *n,
			     struct llmsim_err *err);

/* 1 if s names a file rather than a description: it contains '/' or ends
 * in ".yaml" or ".json" (any case). */
int llmsim_data_is_path(const char *s);

/* Call fn(path, ctx) for each regular, non-hidden *.yaml file of
 * <data>/SUB/ (at most 256), sorted by name. Fails with LLMSIM_ENOENT when
 * there is no data folder or it cannot be opened. */
int llmsim_data_list(const char *sub, void (*fn)(const char *path, void *ctx), void *ctx,
		     struct llmsim_err *err);

/* One kind of description, for llmsim_data_find. */
struct llmsim_data_kind {
	const char *sub;             /* folder in the data folder: "hw" */
	const char *what;            /* noun in messages: "GPU" */
	llmsim_data_parse_fn parse;  /* tree -> struct */
	/* The i-th name of a parsed obj: 0 its name (at most 63 characters),
	 * then its aliases; NULL past the last. */
	const char *(*name)(const void *obj, int i);
};

/* 1 if the parsed obj answers to name (its name or an alias), compared
 * case-insensitively. */
int llmsim_data_answers(const struct llmsim_data_kind *k, const void *obj, const char *name);

/* Read into obj the description `name` names. A path (llmsim_data_is_path)
 * is read as it stands (a relative one not found here is looked for in the
 * data folder: llmsim_data_input). Otherwise the file of <data>/SUB whose stem equals
 * name, case-insensitively; failing that, the first file in sorted order
 * that answers to it (every file is parsed in turn; a broken one is an
 * error, not skipped). Fails with LLMSIM_EINVAL "empty WHAT name" for a
 * NULL or empty name, LLMSIM_ENOENT "unknown WHAT 'name' (known: a, b)"
 * when nothing answers. obj is undefined after a failure. */
int llmsim_data_find(const struct llmsim_data_kind *k, const char *name, void *obj,
		     struct llmsim_err *err);

/* As llmsim_data_find, for a name that comes from data rather than from
 * the user (a model named inside a trace): only a name or alias of a
 * description in <data>/SUB is looked up, never a path; anything else
 * fails with LLMSIM_EINVAL "'x' is not a WHAT name". */
int llmsim_data_find_name(const struct llmsim_data_kind *k, const char *name, void *obj,
			  struct llmsim_err *err);

#endif
