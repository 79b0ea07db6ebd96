/*
 * suite.c - loading a suite file's `runs:` list (see suite.h).
 */
#include "suite.h"

#include <stdlib.h>

int llmsim_suite_load(const char *path, size_t size, llmsim_suite_entry_fn one, void **out,
		      int *n, struct llmsim_err *err)
{
	return llmsim_suite_load_head(path, size, one, NULL, NULL, out, n, err);
}

int llmsim_suite_load_head(const char *path, size_t size, llmsim_suite_entry_fn one,
			   llmsim_suite_head_fn head, void *ctx, void **out, int *n,
			   struct llmsim_err *err)
{
	struct llmsim_ynode *root = NULL;
	*out = NULL;
	*n = 0;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	const struct llmsim_ynode *runs = llmsim_ymap_get(root, "runs");
	char *v = NULL;
	if (!runs || runs->kind != LLMSIM_Y_SEQ || !runs->n) {
		rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
				       "expected a non-empty 'runs:' list");
		goto out;
	}
	if (head && (rc = head(root, path, ctx, err)))
		goto out;
	if ((rc = llmsim_ymap_check_unused(root, path, "suite", err)))
		goto out;
	if (!(v = calloc(runs->n, size))) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < runs->n && !rc; i++)
		rc = one(runs->vals[i], path, v + i * size, err);
	if (!rc) {
		*out = v;
		*n = (int)runs->n;
		v = NULL;
	}
out:
	free(v);
	llmsim_ynode_free(root);
	return rc;
}
