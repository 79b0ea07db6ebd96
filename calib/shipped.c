/* shipped.c - the shipped calibration dumps in one in-memory store (see
 * shipped.h). */
#include "shipped.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gzfile.h"
#include "base/paths.h"

/* Does the file start with the dump's header ("llmsim-calib<TAB>")? Other
 * tab-separated files live beside the dumps (nccl-tests tables). */
static int is_dump(const char *path)
{
	FILE *f = llmsim_gz_open(path, NULL, NULL);
	if (!f)
		return 0;
	char head[13] = {0};
	size_t n = fread(head, 1, sizeof head, f);
	llmsim_gz_close(f, path, NULL);
	return n == sizeof head && !memcmp(head, "llmsim-calib\t", sizeof head);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int llmsim_store_open_shipped(struct llmsim_store **out, char *source, size_t size,
			      char *skipped, size_t skipped_size, struct llmsim_err *err)
{
	static const char *const patterns[] = {"*.tsv", "*.tsv.gz", "*/*.tsv", "*/*.tsv.gz"};
	const char *data = llmsim_data_dir();
	*out = NULL;
	if (source && size)
		source[0] = 0;
	if (skipped && skipped_size)
		skipped[0] = 0;
	if (!data)
		return llmsim_err_set(err, LLMSIM_ENOENT, "no shipped calibration: no llmsim data folder: %s",
				      llmsim_data_dir_hint());
	glob_t g = {0};
	int any = 0;
	for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
		char pat[4096];
		if (!llmsim_data_path(pat, sizeof pat, "calib/data", patterns[i]) &&
		    glob(pat, any ? GLOB_APPEND : 0, NULL, &g) == 0)
			any = 1;
	}
	if (!any)
		return llmsim_err_set(err, LLMSIM_ENOENT, "no shipped calibration in %s/calib/data",
				      data);
	qsort(g.gl_pathv, g.gl_pathc, sizeof g.gl_pathv[0], cmp_str);
	struct llmsim_store *s;
	int rc = llmsim_store_open(":memory:", LLMSIM_STORE_CREATE, &s, err);
	int dumps = 0;
	size_t skip = strlen(data) + 1;
	for (size_t i = 0; !rc && i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		/* retired/ keeps the record of data no fit may use (its README) */
		if (strstr(path + skip, "retired/") == path + skip + strlen("calib/data/") ||
		    !is_dump(path))
			continue;
		struct llmsim_err e = {0}, zerr = {0};
		FILE *f = llmsim_gz_open(path, NULL, &e);
		if (f) {
			/* one transaction: a broken dump leaves the store as it was */
			rc = llmsim_store_import(s, f, path, &e);
			if (llmsim_gz_close(f, path, &zerr)) {
				rc = zerr.code;
				e = zerr;
			}
		} else {
			rc = e.code;
		}
		if (rc && skipped && skipped_size) {
			size_t l = strlen(skipped);
			snprintf(skipped + l, skipped_size - l, "%s%s (%.300s)", l ? "; " : "",
				 path + skip, e.msg);
			rc = 0;
			continue;
		}
		if (rc) {
			if (err)
				*err = e;
			break;
		}
		if (source && size) {
			size_t l = strlen(source);
			snprintf(source + l, size - l, "%s%s", l ? ", " : "", path + skip);
		}
		dumps++;
	}
	globfree(&g);
	if (!rc && !dumps)
		rc = llmsim_err_set(err, LLMSIM_ENOENT, "no shipped calibration in %s/calib/data",
				    data);
	if (rc) {
		llmsim_store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}
