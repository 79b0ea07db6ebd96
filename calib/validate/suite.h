/*
 * suite.h - what the suite files of calib/validate/ share: a mapping
 * whose one key, `runs:`, is a non-empty list of entries.
 */
#ifndef LLMSIM_VALIDATE_SUITE_H
#define LLMSIM_VALIDATE_SUITE_H

#include <stddef.h>

#include "base/err.h"
#include "base/yaml.h"

/* Reads one entry of the list (`node`) into `entry`. */
typedef int (*llmsim_suite_entry_fn)(const struct llmsim_ynode *node, const char *path,
				     void *entry, struct llmsim_err *err);

/* Reads the file's other top-level keys (root is the whole mapping); those
 * it does not llmsim_ymap_get are refused as unknown keys. */
typedef int (*llmsim_suite_head_fn)(const struct llmsim_ynode *root, const char *path,
				    void *ctx, struct llmsim_err *err);

/* Load the suite at `path`: *out (calloc'd, free it) holds *n entries of
 * `size` bytes each, read by `one` in the file's order. On an error
 * *out is NULL, *n 0, and err says where. */
int llmsim_suite_load(const char *path, size_t size, llmsim_suite_entry_fn one, void **out,
		      int *n, struct llmsim_err *err);

/* The same, with `head` (may be NULL) called on the root before its keys are
 * checked and before the entries are read. */
int llmsim_suite_load_head(const char *path, size_t size, llmsim_suite_entry_fn one,
			   llmsim_suite_head_fn head, void *ctx, void **out, int *n,
			   struct llmsim_err *err);

#endif
