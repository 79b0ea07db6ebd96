/*
 * gpu_find.c - finding a GPU by name among the shipped hardware files,
 * listing them, and applying a calibration profile on top.
 *
 * A name containing '/' or ending in ".yaml" is a path and is loaded as it
 * stands (no profile: a profile belongs to a shipped description). Any
 * other name is matched, case-insensitively, against each file's stem,
 * then its `name:` and `aliases:`. After a name resolves, the profile
 * <data>/hw/profiles/NAME.yaml replaces efficiencies and attaches expected
 * errors, unless LLMSIM_NO_PROFILE=1.
 */
#include "gpu.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/paths.h"
#include "../base/yaml.h"
#include "gpu_load.h"

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

/* Every regular *.yaml file of <data>/hw, sorted by name. */
static int list_files(struct file_list *l, struct llmsim_err *err)
{
	char dir[4096];
	l->n = 0;
	if (llmsim_data_path(dir, sizeof dir, "hw", "") != 0)
		return llmsim_err_set(err, LLMSIM_ENOENT,
				      "no llmsim data folder with hw/ (set LLMSIM_DATA_DIR)");
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
		l->path[l->n] = strdup(p);
		if (!l->path[l->n]) {
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

int llmsim_gpu_list(void (*fn)(const char *path, void *ctx), void *ctx, struct llmsim_err *err)
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

/* Does the file name (without folder and .yaml) equal name? */
static int stem_is(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b) - 5; /* list_files kept only *.yaml */
	return strlen(name) == n && !strncasecmp(b, name, n);
}

static int names_gpu(const struct llmsim_gpu *g, const char *name)
{
	if (!strcasecmp(g->name, name))
		return 1;
	for (int i = 0; i < g->naliases; i++)
		if (!strcasecmp(g->aliases[i], name))
			return 1;
	return 0;
}

static int is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n >= 5 && !strcasecmp(s + n - 5, ".yaml"));
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Find `name` among the shipped files and load it into gpu. */
static int resolve(const char *name, struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	struct file_list l;
	int rc = list_files(&l, err);
	if (rc)
		return rc;
	for (int i = 0; i < l.n; i++)
		if (stem_is(l.path[i], name)) {
			rc = llmsim_gpu_load_file(l.path[i], gpu, err);
			list_release(&l);
			return rc;
		}
	char known[MAX_FILES][64];
	int nknown = 0;
	for (int i = 0; i < l.n; i++) {
		/* A broken shipped file is reported, not skipped: a GPU
		 * silently missing from the search would be worse. */
		if ((rc = llmsim_gpu_load_file(l.path[i], gpu, err))) {
			list_release(&l);
			return rc;
		}
		if (names_gpu(gpu, name)) {
			list_release(&l);
			return 0;
		}
		snprintf(known[nknown++], sizeof known[0], "%s", gpu->name);
	}
	list_release(&l);
	qsort(known, (size_t)nknown, sizeof known[0], cmp_name);
	char list[1024] = "";
	for (int i = 0; i < nknown; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
	}
	return llmsim_err_set(err, LLMSIM_ENOENT, "unknown GPU '%s' (known: %s)", name,
			      nknown ? list : "none");
}

int llmsim_gpu_profile_path(const char *gpu_name, char *buf, size_t size)
{
	char file[128];
	if (snprintf(file, sizeof file, "%s.yaml", gpu_name) >= (int)sizeof file)
		return -1;
	return llmsim_data_path(buf, size, "hw/profiles", file);
}

int llmsim_gpu_load(const char *name_or_path, struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	if (!name_or_path || !*name_or_path)
		return llmsim_err_set(err, LLMSIM_EINVAL, "empty GPU name");
	if (is_path(name_or_path))
		return llmsim_gpu_load_file(name_or_path, gpu, err);
	int rc = resolve(name_or_path, gpu, err);
	if (rc)
		return rc;
	const char *no = getenv("LLMSIM_NO_PROFILE");
	if (no && !strcmp(no, "1"))
		return 0;
	char prof[4096];
	if (llmsim_gpu_profile_path(gpu->name, prof, sizeof prof) || access(prof, F_OK))
		return 0;
	return llmsim_gpu_apply_profile(gpu, prof, err);
}

/* ---- calibration profiles ---- */

static const struct llmsim_yfield class_fields[] = {
	{.key = "median", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_err_class, median_abs_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_NONNEG},
	{.key = "p90", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_err_class, p90_abs_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_NONNEG},
	{.key = "n", .type = LLMSIM_YF_INT, .offset = offsetof(struct llmsim_err_class, n),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_POSITIVE},
};

static int load_classes(const struct llmsim_ynode *m, struct llmsim_gpu *g, const char *path,
			struct llmsim_err *err)
{
	if (m->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->line, m->col,
					 "'expected_error_pct' must be a mapping");
	if (m->n > LLMSIM_GPU_MAX_ERR_CLASSES)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->line, m->col,
					 "'expected_error_pct' has %zu classes, at most %d allowed",
					 m->n, LLMSIM_GPU_MAX_ERR_CLASSES);
	g->nerr_classes = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct llmsim_err_class *c = &g->err_classes[i];
		memset(c, 0, sizeof *c);
		if (strlen(m->keys[i]) >= sizeof c->name || !m->keys[i][0])
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->key_line[i],
						 m->key_col[i], "op class name must be 1 to %zu characters",
						 sizeof c->name - 1);
		m->used[i] = 1;
		snprintf(c->name, sizeof c->name, "%s", m->keys[i]);
		int rc = llmsim_yaml_extract(m->vals[i], class_fields,
					     sizeof class_fields / sizeof class_fields[0], c, path,
					     m->keys[i], err);
		if (!rc)
			rc = llmsim_ymap_check_unused(m->vals[i], path, m->keys[i], err);
		if (rc)
			return rc;
		if (c->p90_abs_pct < c->median_abs_pct) {
			const struct llmsim_ynode *v = llmsim_ymap_get(m->vals[i], "p90");
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
						 "'p90' must not be below 'median'");
		}
		g->nerr_classes++;
	}
	return 0;
}

static int check_calibration(const struct llmsim_ynode *c, const char *path,
			     struct llmsim_err *err)
{
	if (c->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, c->line, c->col,
					 "'calibration' must be a mapping");
	for (size_t i = 0; i < c->n; i++) {
		c->used[i] = 1;
		if (c->vals[i]->kind != LLMSIM_Y_SCALAR)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, c->vals[i]->line,
						 c->vals[i]->col,
						 "'%s' in 'calibration' must be a single value",
						 c->keys[i]);
	}
	return 0;
}

static int apply_tree(struct llmsim_gpu *gpu, const struct llmsim_ynode *root, const char *path,
		      struct llmsim_err *err)
{
	struct llmsim_gpu g = *gpu;
	const struct llmsim_ynode *v;
	int rc;

	if (root->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "a profile must be a mapping of keys");
	v = llmsim_ymap_get(root, "gpu");
	if (!v)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "missing key 'gpu'");
	if (v->kind != LLMSIM_Y_SCALAR || !names_gpu(gpu, v->scalar))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "profile is for GPU '%s', not '%s'",
					 v->kind == LLMSIM_Y_SCALAR ? v->scalar : "?", gpu->name);
	if ((v = llmsim_ymap_get(root, "calibration")) && (rc = check_calibration(v, path, err)))
		return rc;
	if ((v = llmsim_ymap_get(root, "efficiency")) &&
	    (rc = llmsim_gpu_extract_eff(v, g.eff, path, err)))
		return rc;
	if ((v = llmsim_ymap_get(root, "expected_error_pct")) && (rc = load_classes(v, &g, path, err)))
		return rc;
	if ((rc = llmsim_ymap_check_unused(root, path, NULL, err)))
		return rc;
	snprintf(g.profile_path, sizeof g.profile_path, "%s", path);
	*gpu = g;
	return 0;
}

int llmsim_gpu_apply_profile_buf(struct llmsim_gpu *gpu, const char *buf, size_t len,
				 const char *name, struct llmsim_err *err)
{
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_buf(buf, len, name, &root, err);
	if (rc)
		return rc;
	rc = apply_tree(gpu, root, name, err);
	llmsim_ynode_free(root);
	return rc;
}

int llmsim_gpu_apply_profile(struct llmsim_gpu *gpu, const char *path, struct llmsim_err *err)
{
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	rc = apply_tree(gpu, root, path, err);
	llmsim_ynode_free(root);
	return rc;
}

int llmsim_gpu_profile_calibration(const char *path,
				   void (*fn)(const char *key, const char *value, void *ctx),
				   void *ctx, struct llmsim_err *err)
{
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	const struct llmsim_ynode *c = llmsim_ymap_get(root, "calibration");
	if (c && !(rc = check_calibration(c, path, err)))
		for (size_t i = 0; i < c->n; i++)
			fn(c->keys[i], c->vals[i]->scalar, ctx);
	llmsim_ynode_free(root);
	return rc;
}

const struct llmsim_err_class *llmsim_gpu_err_class(const struct llmsim_gpu *gpu,
						    const char *op_class)
{
	for (int i = 0; i < gpu->nerr_classes; i++)
		if (!strcmp(gpu->err_classes[i].name, op_class))
			return &gpu->err_classes[i];
	return NULL;
}
