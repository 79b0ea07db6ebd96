/*
 * steps.c - measured steps of a PyTorch program against `llmsim infer`'s
 * walk of the same steps (see steps.h). The file is JSON, which the YAML
 * loader reads.
 */
#include "steps.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/stats.h"
#include "base/yaml.h"

static int get_num(const struct llmsim_ynode *map, const char *key, const char *path,
		   double *out, struct llmsim_err *err)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	if (!v)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "missing key '%s'", key);
	if (llmsim_ynode_double(v, path, key, out, err))
		return LLMSIM_EPARSE;
	if (!(*out > 0) || *out > 1e12)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be positive (and below 1e12)", key);
	return 0;
}

/* An optional flag (absent: def). */
static int get_flag(const struct llmsim_ynode *map, const char *key, const char *path, int def,
		    int *out, struct llmsim_err *err)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	*out = def;
	return v ? llmsim_ynode_bool(v, path, key, out, err) : 0;
}

static int load(const struct llmsim_ynode *root, const char *path, struct llmsim_steps_file *f,
		struct llmsim_err *err)
{
	if (root->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "expected an object");
	const struct llmsim_ynode *gv = llmsim_ymap_get(root, "gpu");
	const struct llmsim_ynode *mv = llmsim_ymap_get(root, "model");
	const struct llmsim_ynode *pv = llmsim_ymap_get(root, "phases");
	if (!gv || gv->kind != LLMSIM_Y_SCALAR || !mv || mv->kind != LLMSIM_Y_MAP || !pv ||
	    pv->kind != LLMSIM_Y_SEQ)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "need 'gpu' (a name), 'model' (an object) and 'phases' (a list)");
	snprintf(f->gpu, sizeof f->gpu, "%s", gv->scalar);
	static const char *const keys[6] = {"hidden", "heads", "kv_heads", "head_dim",
					    "intermediate", "vocab"};
	int *dims[6] = {&f->hidden, &f->heads, &f->kv_heads, &f->head_dim, &f->intermediate,
			&f->vocab};
	double v;
	int rc, fused_qkv, fused_gate_up, lm_head;
	for (int i = 0; i < 6; i++) {
		if ((rc = get_num(mv, keys[i], path, &v, err)))
			return rc;
		*dims[i] = (int)v;
	}
	if ((rc = get_num(root, "layers", path, &v, err)))
		return rc;
	f->layers = (int)v;
	if ((rc = get_flag(root, "includes_lm_head", path, 1, &lm_head, err)) ||
	    (rc = get_flag(root, "fused_qkv", path, 1, &fused_qkv, err)) ||
	    (rc = get_flag(root, "fused_gate_up", path, 1, &fused_gate_up, err)))
		return rc;
	const struct llmsim_ynode *gq = llmsim_ymap_get(root, "prefill_gqa");
	if (gq && (gq->kind != LLMSIM_Y_SCALAR ||
		   (strcmp(gq->scalar, "native") && strcmp(gq->scalar, "expand"))))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, gq->line, gq->col,
					 "'prefill_gqa' must be \"native\" or \"expand\"");
	f->ends = lm_head;
	f->lower.torch = 1;
	f->lower.split_qkv = !fused_qkv;
	f->lower.split_gate_up = !fused_gate_up;
	f->lower.gqa_expand = gq && !strcmp(gq->scalar, "expand");
	f->repeats = 13; /* llama_steps.py: 3 warm-up and 10 timed repeats */
	for (size_t i = 0; i < pv->n; i++) {
		const struct llmsim_ynode *ph = pv->vals[i];
		if (f->n >= LLMSIM_STEPS_MAX)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, ph->line, ph->col,
						 "more than %d phases", LLMSIM_STEPS_MAX);
		const struct llmsim_ynode *kind =
			ph->kind == LLMSIM_Y_MAP ? llmsim_ymap_get(ph, "phase") : NULL;
		if (!kind || kind->kind != LLMSIM_Y_SCALAR ||
		    (strcmp(kind->scalar, "prefill") && strcmp(kind->scalar, "decode")))
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, ph->line, ph->col,
						 "each phase needs \"phase\": \"prefill\" or \"decode\"");
		struct llmsim_step_meas *s = &f->step[f->n];
		s->decode = !strcmp(kind->scalar, "decode");
		double b, t, len;
		if ((rc = get_num(ph, "batch", path, &b, err)) ||
		    (rc = get_num(ph, s->decode ? "context" : "prompt", path, &len, err)) ||
		    (rc = get_num(ph, "time_s", path, &t, err)))
			return rc;
		s->batch = (int64_t)b;
		s->tokens = (int64_t)len;
		s->measured_s = t;
		f->n++;
	}
	if (!f->n)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, pv->line, pv->col, "no phases");
	return 0;
}

int llmsim_steps_load(const char *path, struct llmsim_steps_file *f, struct llmsim_err *err)
{
	memset(f, 0, sizeof *f);
	if (access(path, R_OK))
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s: no such file", path);
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	rc = load(root, path, f, err);
	llmsim_ynode_free(root);
	return rc;
}

/* The step of s on its own. */
static int step_at(const struct llmsim_infer_cfg *cfg, int layers, int ends,
		   const struct llmsim_step_meas *s, struct llmsim_step_cost *c,
		   struct llmsim_err *err)
{
	struct llmsim_prefill_chunk ch = {.tokens = s->tokens, .context = 0, .count = s->batch};
	struct llmsim_step st = {.q_len = 1, .layers = layers, .ends = ends,
				 .logits = s->batch};
	if (s->decode) {
		st.decode_seqs = s->batch;
		st.decode_kv_len = (double)s->tokens + 1; /* the new token's key too */
	} else {
		st.prefill = &ch;
		st.nprefill = 1;
	}
	return llmsim_infer_step(cfg, &st, c, err);
}

int llmsim_steps_predict_one(const struct llmsim_infer_cfg *cfg, int layers, int ends,
			     int repeats, const struct llmsim_step_meas *s,
			     struct llmsim_step_pred *out, struct llmsim_err *err)
{
	struct llmsim_step_cost c;
	memset(out, 0, sizeof *out);
	out->meas = *s;
	struct llmsim_infer_cfg loaded = *cfg;
	loaded.load_duty = loaded.load_rho = 0;
	int rc = step_at(&loaded, layers, ends, s, &c, err);
	if (rc)
		return rc;
	/* the repeats back to back: their kernels' share of the wall time,
	 * over how much of the power controller's window they fill */
	double n = repeats > 0 ? repeats : 1;
	loaded.load_duty = llmsim_infer_load(cfg->gpu, n * c.gpu_s, n * c.time_s);
	loaded.load_rho = llmsim_infer_rho(cfg, c.flops, c.gpu_s);
	if (loaded.load_duty > 0 && loaded.load_rho > 0 &&
	    (rc = step_at(&loaded, layers, ends, s, &c, err)))
		return rc;
	out->predicted_s = c.time_s;
	out->kernel_s = c.gpu_s;
	out->load_duty = loaded.load_rho > 0 ? loaded.load_duty : 0;
	out->load_rho = out->load_duty > 0 ? loaded.load_rho : 0;
	out->err_pct = 100.0 * (out->predicted_s - s->measured_s) / s->measured_s;
	return 0;
}

/* The model must be the one the program ran. */
static int same_model(const struct llmsim_steps_file *f, const struct llmsim_model *m,
		      struct llmsim_err *err)
{
	const struct {
		const char *key;
		int file, model;
	} d[] = {
		{"hidden", f->hidden, m->hidden},       {"heads", f->heads, m->heads},
		{"kv_heads", f->kv_heads, m->kv_heads}, {"head_dim", f->head_dim, m->head_dim},
		{"intermediate", f->intermediate, m->intermediate}, {"vocab", f->vocab, m->vocab},
	};
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
		if (d[i].file != d[i].model)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "the measured model has %s %d, %s has %d", d[i].key,
					      d[i].file, m->name, d[i].model);
	if (f->layers > m->layers)
		return llmsim_err_set(err, LLMSIM_EINVAL, "the measured program ran %d layers, %s has %d",
				      f->layers, m->name, m->layers);
	return 0;
}

int llmsim_steps_compare(const struct llmsim_steps_file *f, const struct llmsim_model *m,
			 const struct llmsim_gpu *gpu, struct llmsim_steps_cmp *out,
			 struct llmsim_err *err)
{
	memset(out, 0, sizeof *out);
	if (strcasecmp(f->gpu, gpu->name))
		return llmsim_err_set(err, LLMSIM_EINVAL, "the steps were measured on %s, not %s",
				      f->gpu, gpu->name);
	int rc = same_model(f, m, err);
	if (rc)
		return rc;
	/* the program's kernels: plain PyTorch, SDPA, launched from Python */
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, m, gpu);
	cfg.attn = LLMSIM_AC_SDPA;
	cfg.runtime = LLMSIM_RT_EAGER;
	cfg.lower = f->lower;
	double errs[LLMSIM_STEPS_MAX];
	for (int i = 0; i < f->n; i++) {
		if ((rc = llmsim_steps_predict_one(&cfg, f->layers, f->ends, f->repeats, &f->step[i],
						   &out->pt[i], err)))
			return rc;
		errs[i] = fabs(out->pt[i].err_pct);
		out->n++;
	}
	out->median_abs_err_pct = llmsim_quantile(errs, (size_t)out->n, 0.5);
	return 0;
}
