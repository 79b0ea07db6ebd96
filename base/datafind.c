/*
 * datafind.c - reading, naming, listing and finding the description files
 * of the data folder (see datafind.h). The stem of a file wins over the
 * names inside files, so that a lookup by stem parses one file only.
 */
#include "datafind.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "paths.h"
#include "yaml.h"

#define MAX_FILES 256

int llmsim_data_read_file(const char *path, llmsim_data_parse_fn parse, void *obj,
			  struct llmsim_err *err)
{
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	rc = parse(root, obj, path, err);
	llmsim_ynode_free(root);
	return rc;
}

int llmsim_data_read_buf(const char *buf, size_t len, const char *name,
			 llmsim_data_parse_fn parse, void *obj, struct llmsim_err *err)
{
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_buf(buf, len, name, &root, err);
	if (rc)
		return rc;
	rc = parse(root, obj, name, err);
	llmsim_ynode_free(root);
	return rc;
}

int llmsim_data_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

int llmsim_data_read_aliases(const struct llmsim_ynode *root, const char *path,
			     void *aliases, size_t size, int max, int *n,
			     struct llmsim_err *err)
{
	char *out = aliases;
	const struct llmsim_ynode *a = llmsim_ymap_get(root, "aliases");
	if (!a)
		return 0;
	if (a->kind != LLMSIM_Y_SEQ)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, a->line, a->col,
					 "'aliases' must be a list of names");
	if (a->n > (size_t)max)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, a->line, a->col,
					 "'aliases' has %zu names, at most %d allowed", a->n, max);
	for (size_t i = 0; i < a->n; i++) {
		const struct llmsim_ynode *v = a->vals[i];
		if (v->kind != LLMSIM_Y_SCALAR || !llmsim_data_name_ok(v->scalar) ||
		    strlen(v->scalar) >= size)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
						 "an alias must be a name of 1 to %zu letters, digits, '.', '_' or '-'",
						 size - 1);
		snprintf(out + i * size, size, "%s", v->scalar);
	}
	*n = (int)a->n;
	return 0;
}

int llmsim_data_is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n >= 5 && !strcasecmp(s + n - 5, ".yaml")) ||
	       (n >= 5 && !strcasecmp(s + n - 5, ".json"));
}

/* ---- the files of one folder ---- */

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

/* Every regular *.yaml file of <data>/sub, sorted by name. */
static int list_files(const char *sub, struct file_list *l, struct llmsim_err *err)
{
	char dir[4096];
	l->n = 0;
	if (llmsim_data_path(dir, sizeof dir, sub, "") != 0)
		return llmsim_err_set(err, LLMSIM_ENOENT, "no llmsim data folder with %s/: %s", sub,
				      llmsim_data_dir_hint());
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

int llmsim_data_list(const char *sub, void (*fn)(const char *path, void *ctx), void *ctx,
		     struct llmsim_err *err)
{
	struct file_list l;
	int rc = list_files(sub, &l, err);
	if (rc)
		return rc;
	for (int i = 0; i < l.n; i++)
		fn(l.path[i], ctx);
	list_release(&l);
	return 0;
}

/* ---- finding by name ---- */

/* Does the file name (without folder and .yaml) equal name? */
static int stem_is(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b) - 5; /* list_files kept only *.yaml */
	return strlen(name) == n && !strncasecmp(b, name, n);
}

int llmsim_data_answers(const struct llmsim_data_kind *k, const void *obj, const char *name)
{
	const char *s;
	for (int i = 0; (s = k->name(obj, i)); i++)
		if (!strcasecmp(s, name))
			return 1;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* "unknown WHAT 'name' (known: ...)", the names of every file sorted. */
static int unknown(const struct llmsim_data_kind *k, const char *name, char (*known)[64],
		   int nknown, struct llmsim_err *err)
{
	qsort(known, (size_t)nknown, sizeof known[0], cmp_name);
	char list[2048] = "";
	for (int i = 0; i < nknown; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
	}
	return llmsim_err_set(err, LLMSIM_ENOENT, "unknown %s '%s' (known: %s)", k->what, name,
			      nknown ? list : "none");
}

int llmsim_data_find(const struct llmsim_data_kind *k, const char *name, void *obj,
		     struct llmsim_err *err)
{
	if (!name || !*name)
		return llmsim_err_set(err, LLMSIM_EINVAL, "empty %s name", k->what);
	if (llmsim_data_is_path(name)) {
		char p[4096];
		return llmsim_data_read_file(llmsim_data_input(name, p, sizeof p), k->parse, obj, err);
	}
	struct file_list l;
	int rc = list_files(k->sub, &l, err);
	if (rc)
		return rc;
	for (int i = 0; i < l.n; i++)
		if (stem_is(l.path[i], name)) {
			rc = llmsim_data_read_file(l.path[i], k->parse, obj, err);
			list_release(&l);
			return rc;
		}
	char known[MAX_FILES][64];
	int nknown = 0;
	for (int i = 0; i < l.n; i++) {
		/* A broken shipped file is reported, not skipped: a description
		 * silently missing from the search would be worse. */
		if ((rc = llmsim_data_read_file(l.path[i], k->parse, obj, err))) {
			list_release(&l);
			return rc;
		}
		if (llmsim_data_answers(k, obj, name)) {
			list_release(&l);
			return 0;
		}
		snprintf(known[nknown++], sizeof known[0], "%s", k->name(obj, 0));
	}
	list_release(&l);
	return unknown(k, name, known, nknown, err);
}

int llmsim_data_find_name(const struct llmsim_data_kind *k, const char *name, void *obj,
			  struct llmsim_err *err)
{
	if (!name || !llmsim_data_name_ok(name) || llmsim_data_is_path(name))
		return llmsim_err_set(err, LLMSIM_EINVAL, "'%s' is not a %s name", name ? name : "",
				      k->what);
	return llmsim_data_find(k, name, obj, err);
}
