/*
 * gpu_find.c - finding a GPU by name among the shipped hardware files,
 * listing them, and applying a calibration profile on top.
 *
 * A name containing '/' or ending in ".yaml" is a path and is loaded as it
 * stands (no profile: a profile belongs to a shipped description). Any
 * other name is matched, case-insensitively, against each file's stem,
 * then its `name:` and `aliases:` (base/datafind.c). After a name
 * resolves, the profile <data>/hw/profiles/NAME.yaml replaces efficiencies
 * and attaches expected errors, unless LLMSIM_NO_PROFILE=1.
 */
#include "gpu.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/datafind.h"
#include "base/paths.h"
#include "base/yaml.h"
#include "gpu_load.h"

int llmsim_gpu_list(void (*fn)(const char *path, void *ctx), void *ctx, struct llmsim_err *err)
{
	return llmsim_data_list(llmsim_gpu_kind.sub, fn, ctx, err);
}

/* The default profile path for a GPU short name: <data>/hw/profiles/NAME.yaml.
 * Returns 0, or -1 when it does not fit or there is no data folder. */
static int gpu_profile_path(const char *gpu_name, char *buf, size_t size)
{
	char file[128];
	if (snprintf(file, sizeof file, "%s.yaml", gpu_name) >= (int)sizeof file)
		return -1;
	return llmsim_data_path(buf, size, "hw/profiles", file);
}

static int gpu_own_profile(struct llmsim_gpu *gpu, struct llmsim_err *err);

int llmsim_gpu_load(const char *name_or_path, struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	int rc = llmsim_data_find(&llmsim_gpu_kind, name_or_path, gpu, err);
	if (rc)
		return rc;
	/* its basis whether named or given by path (a copied h100 file states
	 * no efficiencies of its own); a file named by its path gets no profile */
	if ((rc = llmsim_gpu_apply_basis(gpu, err)) || llmsim_data_is_path(name_or_path))
		return rc;
	return gpu_own_profile(gpu, err);
}

/* The profile hw/profiles/NAME.yaml fitted for gpu, where there is one. */
static int gpu_own_profile(struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	const char *no = getenv("LLMSIM_NO_PROFILE");
	if (no && !strcmp(no, "1"))
		return 0;
	char prof[4096];
	if (gpu_profile_path(gpu->name, prof, sizeof prof) || access(prof, F_OK))
		return 0;
	return llmsim_gpu_apply_profile(gpu, prof, err);
}

/* ---- the calibrated basis of an uncalibrated GPU ---- */

int llmsim_gpu_device_is(const struct llmsim_gpu *gpu, const char *device)
{
	for (int i = -1; i < gpu->naliases; i++) {
		const char *n = i < 0 ? gpu->name : gpu->aliases[i];
		size_t len = strlen(n);
		for (const char *p = device; len && *p; p++) {
			if (p > device && isalnum((unsigned char)p[-1]))
				continue;
			if (!strncasecmp(p, n, len) && !isalnum((unsigned char)p[len]))
				return 1;
		}
	}
	return 0;
}

static int load_classes(const struct llmsim_ynode *m, struct llmsim_gpu *g, const char *path,
			struct llmsim_err *err);
static int load_step_classes(const struct llmsim_ynode *m, struct llmsim_gpu *g,
			     const char *path, struct llmsim_err *err);

/* hw/transfer/BASIS.yaml: what predicting another GPU from BASIS's
 * calibration was measured to cost. {basis, measured_on, relation, date,
 * source: scalars; expected_error_pct: per kernel class; steps_errors: per
 * engine/phase}, the two blocks in a profile's format. */
static int transfer_tree(const struct llmsim_ynode *root, void *obj, const char *path,
			 struct llmsim_err *err)
{
	struct llmsim_gpu *g = obj;
	const struct llmsim_ynode *v;
	int rc;
	if (root->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "a transfer table must be a mapping of keys");
	static const char *const scalars[] = {"basis", "measured_on", "relation", "date",
					      "source"};
	for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
		if ((v = llmsim_ymap_get(root, scalars[i])) && v->kind != LLMSIM_Y_SCALAR)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
						 "'%s' must be a single value", scalars[i]);
	for (size_t i = 0; i < root->n; i++)
		for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++)
			if (!strcmp(root->keys[i], scalars[k]))
				root->used[i] = 1;
	if ((v = llmsim_ymap_get(root, "measured_on")))
		snprintf(g->transfer_measured_on, sizeof g->transfer_measured_on, "%s", v->scalar);
	v = llmsim_ymap_get(root, "basis");
	if (!v || strcmp(v->scalar, g->basis))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "a transfer table from '%s' must say 'basis: %s'", g->basis,
					 g->basis);
	if ((v = llmsim_ymap_get(root, "expected_error_pct")) && (rc = load_classes(v, g, path, err)))
		return rc;
	if ((v = llmsim_ymap_get(root, "steps_errors")) && (rc = load_step_classes(v, g, path, err)))
		return rc;
	return llmsim_ymap_check_unused(root, path, NULL, err);
}

/* a in quadrature with b, both in % */
static double quad(double a, double b) { return sqrt(a * a + b * b); }

int llmsim_gpu_apply_basis(struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	if (!gpu->basis[0])
		return 0;
	struct llmsim_gpu *b = malloc(sizeof *b);
	if (!b)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	/* the basis as found, with its profile, but never its own basis: a
	 * chain (or two files naming each other) is refused below, not followed */
	int rc = llmsim_data_find(&llmsim_gpu_kind, gpu->basis, b, err);
	if (!rc && !b->basis[0])
		rc = gpu_own_profile(b, err);
	if (!rc && b->basis[0])
		rc = llmsim_err_set(err, LLMSIM_EINVAL,
				    "%s: its calibration basis '%s' has a basis of its own ('%s'): "
				    "name the calibrated GPU", gpu->path, gpu->basis, b->basis);
	if (rc) {
		free(b);
		return rc;
	}
	/* a shared die: its efficiencies, fitted or stated, where the file
	 * states none of its own */
	for (int e = 0; llmsim_gpu_relation_shares_die(gpu->relation) && e < LLMSIM_PARAM_COUNT;
	     e++)
		if (!gpu->param_stated[e]) {
			gpu->param[e] = b->param[e];
			gpu->param_from_basis[e] = 1;
		}
	free(b);
	/* the measured transfer errors, widened by what the file says its
	 * relation adds beyond the one measured */
	char path[sizeof gpu->transfer_path], file[160];
	snprintf(file, sizeof file, "%s.yaml", gpu->basis);
	if (llmsim_data_path(path, sizeof path, "hw/transfer", file) || access(path, F_OK))
		return 0;
	struct llmsim_gpu g = *gpu;
	g.nerr_classes = g.nstep_errors = 0;
	if ((rc = llmsim_data_read_file(path, transfer_tree, &g, err)))
		return rc;
	double u = 100 * gpu->uncalibrated_step_error_fraction;
	for (int i = 0; i < g.nerr_classes; i++) {
		struct llmsim_err_class *c = &g.err_classes[i];
		c->median_abs_pct = quad(c->median_abs_pct, u);
		c->p80_abs_pct = quad(c->p80_abs_pct, u);
		c->p90_abs_pct = quad(c->p90_abs_pct, u);
	}
	for (int i = 0; i < g.nstep_errors; i++) {
		struct llmsim_step_err_class *c = &g.step_errors[i];
		c->median_abs_pct = quad(c->median_abs_pct, u);
		c->p80_abs_pct = quad(c->p80_abs_pct, u);
	}
	snprintf(g.transfer_path, sizeof g.transfer_path, "%s", path);
	*gpu = g;
	return 0;
}

/* ---- calibration profiles ---- */

static const struct llmsim_yfield class_fields[] = {
	{.key = "median", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_err_class, median_abs_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_NONNEG},
	{.key = "p80", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_err_class, p80_abs_pct),
	 .required = LLMSIM_YF_OPTIONAL, .range = LLMSIM_YR_NONNEG},
	{.key = "p90", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_err_class, p90_abs_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_NONNEG},
	{.key = "bias", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_err_class, bias_pct),
	 .required = LLMSIM_YF_OPTIONAL, .range = LLMSIM_YR_ANY},
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
		c->p80_abs_pct = NAN; /* a profile written before p80 was: its p90 */
		int rc = llmsim_yaml_extract(m->vals[i], class_fields,
					     sizeof class_fields / sizeof class_fields[0], c, path,
					     m->keys[i], err);
		if (!rc)
			rc = llmsim_ymap_check_unused(m->vals[i], path, m->keys[i], err);
		if (rc)
			return rc;
		int has80 = !isnan(c->p80_abs_pct);
		const char *bad = NULL, *below = NULL;
		if (has80 && c->p80_abs_pct < c->median_abs_pct)
			bad = "p80", below = "median";
		else if (c->p90_abs_pct < c->median_abs_pct)
			bad = "p90", below = "median";
		if (bad) {
			const struct llmsim_ynode *v = llmsim_ymap_get(m->vals[i], bad);
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
						 "'%s' must not be below '%s'", bad, below);
		}
		if (!has80)
			c->p80_abs_pct = c->p90_abs_pct;
		g->nerr_classes++;
	}
	return 0;
}

static const struct llmsim_yfield step_fields[] = {
	{.key = "p80", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_step_err_class, p80_abs_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_NONNEG},
	{.key = "median", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_step_err_class, median_abs_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_NONNEG},
	{.key = "bias", .type = LLMSIM_YF_DOUBLE,
	 .offset = offsetof(struct llmsim_step_err_class, bias_pct),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_ANY},
	{.key = "n", .type = LLMSIM_YF_INT, .offset = offsetof(struct llmsim_step_err_class, n),
	 .required = LLMSIM_YF_REQUIRED, .range = LLMSIM_YR_POSITIVE},
	{.key = "program", .type = LLMSIM_YF_STRING,
	 .offset = offsetof(struct llmsim_step_err_class, program),
	 .size = sizeof(((struct llmsim_step_err_class *)0)->program),
	 .required = LLMSIM_YF_OPTIONAL, .range = LLMSIM_YR_ANY},
};

/* steps_errors: {ENGINE/PHASE: {p80, median, bias, n, program}} */
static int load_step_classes(const struct llmsim_ynode *m, struct llmsim_gpu *g,
			     const char *path, struct llmsim_err *err)
{
	if (m->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->line, m->col,
					 "'steps_errors' must be a mapping");
	if (m->n > LLMSIM_GPU_MAX_STEP_CLASSES)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->line, m->col,
					 "'steps_errors' has %zu classes, at most %d allowed", m->n,
					 LLMSIM_GPU_MAX_STEP_CLASSES);
	g->nstep_errors = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct llmsim_step_err_class *c = &g->step_errors[i];
		memset(c, 0, sizeof *c);
		const char *slash = strchr(m->keys[i], '/');
		if (strlen(m->keys[i]) >= sizeof c->name || !slash || slash == m->keys[i] ||
		    !slash[1])
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->key_line[i],
						 m->key_col[i],
						 "a steps_errors class is ENGINE/PHASE (\"torch/prefill\"), "
						 "at most %zu characters", sizeof c->name - 1);
		m->used[i] = 1;
		snprintf(c->name, sizeof c->name, "%s", m->keys[i]);
		int rc = llmsim_yaml_extract(m->vals[i], step_fields,
					     sizeof step_fields / sizeof step_fields[0], c, path,
					     m->keys[i], err);
		if (!rc)
			rc = llmsim_ymap_check_unused(m->vals[i], path, m->keys[i], err);
		if (rc)
			return rc;
		g->nstep_errors++;
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

static int apply_tree(const struct llmsim_ynode *root, void *obj, const char *path,
		      struct llmsim_err *err)
{
	struct llmsim_gpu *gpu = obj;
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
	if (v->kind != LLMSIM_Y_SCALAR || !llmsim_data_answers(&llmsim_gpu_kind, gpu, v->scalar))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "profile is for GPU '%s', not '%s'",
					 v->kind == LLMSIM_Y_SCALAR ? v->scalar : "?", gpu->name);
	if ((v = llmsim_ymap_get(root, "calibration")) && (rc = check_calibration(v, path, err)))
		return rc;
	const struct llmsim_ynode *dev = v ? llmsim_ymap_get(v, "device") : NULL;
	if (dev && dev->scalar[0] && !llmsim_gpu_device_is(gpu, dev->scalar))
		return llmsim_err_setloc(err, LLMSIM_EINVAL, path, dev->line, dev->col,
					 "profile measured on '%s', loaded with the hardware file of "
					 "'%s' (%s)", dev->scalar, gpu->full_name, gpu->name);
	/* the GPU's own measurements supersede what a transfer attached */
	g.nerr_classes = g.nstep_errors = 0;
	g.transfer_path[0] = g.transfer_measured_on[0] = 0;
	if ((v = llmsim_ymap_get(root, "efficiency")) &&
	    (rc = llmsim_gpu_extract_params(v, g.param, path, err)))
		return rc;
	if ((v = llmsim_ymap_get(root, "expected_error_pct")) && (rc = load_classes(v, &g, path, err)))
		return rc;
	if ((v = llmsim_ymap_get(root, "steps_errors")) &&
	    (rc = load_step_classes(v, &g, path, err)))
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
	return llmsim_data_read_buf(buf, len, name, apply_tree, gpu, err);
}

int llmsim_gpu_apply_profile(struct llmsim_gpu *gpu, const char *path, struct llmsim_err *err)
{
	return llmsim_data_read_file(path, apply_tree, gpu, err);
}

struct cal_walk {
	void (*fn)(const char *key, const char *value, void *ctx);
	void *ctx;
};

static int walk_calibration(const struct llmsim_ynode *root, void *obj, const char *path,
			    struct llmsim_err *err)
{
	const struct cal_walk *w = obj;
	const struct llmsim_ynode *c = llmsim_ymap_get(root, "calibration");
	int rc = 0;
	if (c && !(rc = check_calibration(c, path, err)))
		for (size_t i = 0; i < c->n; i++)
			w->fn(c->keys[i], c->vals[i]->scalar, w->ctx);
	return rc;
}

int llmsim_gpu_profile_calibration(const char *path,
				   void (*fn)(const char *key, const char *value, void *ctx),
				   void *ctx, struct llmsim_err *err)
{
	struct cal_walk w = {fn, ctx};
	return llmsim_data_read_file(path, walk_calibration, &w, err);
}

int llmsim_err_class_biased(const struct llmsim_err_class *c)
{
	return fabs(c->bias_pct) >= 1.0 && fabs(c->bias_pct) >= 0.5 * c->median_abs_pct;
}

const struct llmsim_err_class *llmsim_gpu_err_class(const struct llmsim_gpu *gpu,
						    const char *op_class)
{
	for (int i = 0; i < gpu->nerr_classes; i++)
		if (!strcmp(gpu->err_classes[i].name, op_class))
			return &gpu->err_classes[i];
	return NULL;
}

const struct llmsim_step_err_class *llmsim_gpu_step_err(const struct llmsim_gpu *gpu,
							const char *engine, const char *phase)
{
	size_t ne = strlen(engine);
	for (int i = 0; i < gpu->nstep_errors; i++) {
		const char *n = gpu->step_errors[i].name;
		if (!strncmp(n, engine, ne) && n[ne] == '/' && !strcmp(n + ne + 1, phase))
			return &gpu->step_errors[i];
	}
	return NULL;
}
