/*
 * steps_json.c - the older comparison (steps.h): calib/data/torch_steps.json,
 * calib/torch/llama_steps.py's 4-layer plain-PyTorch eager run with NVTX
 * ranges, predicted as `llmsim infer --engine torch --runtime eager`
 * prices that program. The file is JSON, which the YAML loader reads.
 */
#include "steps.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/stats.h"
#include "base/yaml.h"
#include "sim/infer/infer.h"

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
	int rc;
	for (int i = 0; i < 6; i++) {
		if ((rc = get_num(mv, keys[i], path, &v, err)))
			return rc;
		*dims[i] = (int)v;
	}
	if ((rc = get_num(root, "layers", path, &v, err)))
		return rc;
	f->layers = (int)v;
	if ((rc = get_flag(root, "includes_lm_head", path, 1, &f->ends, err)) ||
	    (rc = get_flag(root, "fused_qkv", path, 1, &f->fused_qkv, err)) ||
	    (rc = get_flag(root, "fused_gate_up", path, 1, &f->fused_gate_up, err)))
		return rc;
	const struct llmsim_ynode *gq = llmsim_ymap_get(root, "prefill_gqa");
	if (gq && (gq->kind != LLMSIM_Y_SCALAR ||
		   (strcmp(gq->scalar, "native") && strcmp(gq->scalar, "expand"))))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, gq->line, gq->col,
					 "'prefill_gqa' must be \"native\" or \"expand\"");
	f->gqa_expand = gq && !strcmp(gq->scalar, "expand");
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
	if (!f->ends)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the program timed its layers without the embedding and LM head: "
				      "infer prices whole steps");
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
	/* the model the program ran: its first `layers` layers, the ends */
	struct llmsim_model cut = *m;
	cut.layers = f->layers;
	/* the program's kernels: plain PyTorch, SDPA, launched from Python */
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, &cut, gpu);
	llmsim_infer_cfg_engine(&cfg, LLMSIM_ENGINE_TORCH);
	cfg.runtime = LLMSIM_RT_EAGER;
	cfg.lower.rope_joint = 1;
	cfg.lower.split_qkv = !f->fused_qkv;
	cfg.lower.split_gate_up = !f->fused_gate_up;
	cfg.lower.gqa_expand = f->gqa_expand;
	cfg.params.mem_utilization = 1.0;
	double errs[LLMSIM_STEPS_MAX];
	for (int i = 0; i < f->n; i++) {
		const struct llmsim_step_meas *s = &f->step[i];
		struct llmsim_infer_result res;
		if ((rc = llmsim_steps_run_one(&cfg, s->decode, s->batch, s->tokens, &res, err)))
			return rc;
		const struct llmsim_phase *ph = s->decode ? &res.decode : &res.prefill;
		struct llmsim_step_pred *p = &out->pt[i];
		p->meas = *s;
		p->predicted_s = ph->time_s;
		p->kernel_s = ph->cost.gpu_s;
		p->load_duty = ph->cost.load_duty;
		p->load_rho = ph->cost.load_rho;
		p->err_pct = 100.0 * (p->predicted_s - s->measured_s) / s->measured_s;
		errs[i] = fabs(p->err_pct);
		out->n++;
	}
	out->median_abs_err_pct = llmsim_quantile(errs, (size_t)out->n, 0.5);
	return 0;
}
