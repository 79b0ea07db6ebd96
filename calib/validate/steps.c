/*
 * steps.c - per-layer step predictions against PyTorch measurements
 * (see steps.h). The file is JSON, which the YAML loader reads.
 */
#include "steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/stats.h"
#include "../../base/yaml.h"
#include "../../sim/infer/infer.h"

static int get_num(const struct llmsim_ynode *map, const char *key, const char *path,
		   double *out, struct llmsim_err *err)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	if (!v)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "missing key '%s'", key);
	if (llmsim_ynode_double(v, path, key, out, err))
		return LLMSIM_EPARSE;
	if (!(*out > 0))
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'%s' must be positive", key);
	return 0;
}

static int compare(const struct llmsim_ynode *root, const char *path,
		   struct llmsim_torch_cmp *out, struct llmsim_err *err)
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
	snprintf(out->gpu, sizeof out->gpu, "%s", gv->scalar);
	static struct llmsim_gpu gpu;
	int rc = llmsim_gpu_load(out->gpu, &gpu, err);
	if (rc)
		return rc;
	static struct llmsim_model m;
	memset(&m, 0, sizeof m);
	snprintf(m.name, sizeof m.name, "torch-layers");
	double v[6], layers;
	static const char *const keys[6] = {"hidden", "heads", "kv_heads", "head_dim",
					    "intermediate", "vocab"};
	for (int i = 0; i < 6; i++)
		if ((rc = get_num(mv, keys[i], path, &v[i], err)))
			return rc;
	if ((rc = get_num(root, "layers", path, &layers, err)))
		return rc;
	m.hidden = (int)v[0];
	m.heads = (int)v[1];
	m.kv_heads = (int)v[2];
	m.head_dim = (int)v[3];
	m.intermediate = (int)v[4];
	m.vocab = (int)v[5];
	m.layers = (int)layers;
	m.attention = m.kv_heads == m.heads ? LLMSIM_ATTN_MHA
		      : m.kv_heads == 1    ? LLMSIM_ATTN_MQA : LLMSIM_ATTN_GQA;
	m.mlp = LLMSIM_MLP_GATED;
	m.activation = LLMSIM_ACT_SILU;
	m.norm = LLMSIM_NORM_RMS;
	m.position = LLMSIM_POS_ROPE;
	out->layers = m.layers;

	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, &m, &gpu);
	cfg.attn = LLMSIM_AC_FLASH2;
	cfg.runtime = LLMSIM_RT_EAGER;
	if ((rc = llmsim_infer_cfg_check(&cfg, err)))
		return rc;
	double errs[LLMSIM_TORCH_MAX_PHASES];
	for (size_t i = 0; i < pv->n; i++) {
		const struct llmsim_ynode *ph = pv->vals[i];
		if (out->n >= LLMSIM_TORCH_MAX_PHASES)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, ph->line, ph->col,
						 "more than %d phases", LLMSIM_TORCH_MAX_PHASES);
		const struct llmsim_ynode *kind = ph->kind == LLMSIM_Y_MAP ? llmsim_ymap_get(ph, "phase") : NULL;
		if (!kind || kind->kind != LLMSIM_Y_SCALAR ||
		    (strcmp(kind->scalar, "prefill") && strcmp(kind->scalar, "decode")))
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, ph->line, ph->col,
						 "each phase needs \"phase\": \"prefill\" or \"decode\"");
		struct llmsim_torch_point *p = &out->pt[out->n];
		p->decode = !strcmp(kind->scalar, "decode");
		double b, t, len;
		if ((rc = get_num(ph, "batch", path, &b, err)) ||
		    (rc = get_num(ph, p->decode ? "context" : "prompt", path, &len, err)) ||
		    (rc = get_num(ph, "time_s", path, &t, err)))
			return rc;
		p->batch = (int64_t)b;
		p->tokens = (int64_t)len;
		p->measured_s = t;
		struct llmsim_prefill_chunk ch = {.tokens = p->tokens, .context = 0, .count = p->batch};
		struct llmsim_step s = {.q_len = 1, .layers = m.layers};
		if (p->decode) {
			s.decode_seqs = p->batch;
			s.decode_kv_len = (double)p->tokens + 1;
		} else {
			s.prefill = &ch;
			s.nprefill = 1;
		}
		struct llmsim_step_cost c;
		if ((rc = llmsim_infer_step(&cfg, &s, &c, err)))
			return rc;
		p->predicted_s = c.time_s;
		p->err_pct = 100.0 * (p->predicted_s - p->measured_s) / p->measured_s;
		errs[out->n] = fabs(p->err_pct);
		out->n++;
	}
	if (!out->n)
		return llmsim_err_set(err, LLMSIM_EPARSE, "%s: no phases", path);
	out->median_abs_err_pct = llmsim_quantile(errs, (size_t)out->n, 0.5);
	return 0;
}

int llmsim_torch_compare(const char *path, struct llmsim_torch_cmp *out, struct llmsim_err *err)
{
	memset(out, 0, sizeof *out);
	if (access(path, R_OK))
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s: no such file", path);
	struct llmsim_ynode *root;
	int rc = llmsim_yaml_load_file(path, &root, err);
	if (rc)
		return rc;
	rc = compare(root, path, out, err);
	llmsim_ynode_free(root);
	return rc;
}
