/*
 * spec.c - speculative decoding: acceptance math and step prices (see
 * spec.h). The verify step is an ordinary decode step whose sequences each
 * carry q_len = gamma + 1 (or tree) query tokens, so its cost comes from
 * the GPU model like any other step: nearly the plain step's while the
 * weights dominate, growing once the extra tokens make the GEMMs compute
 * bound.
 */
#include "spec.h"

#include <math.h>
#include <string.h>

double llmsim_spec_expected_tokens(const double *alpha, int k)
{
	double e = 1, run = 1;
	for (int i = 0; i < k; i++) {
		run *= alpha[i];
		e += run;
	}
	return e;
}

double llmsim_spec_expected_tokens_const(double a, int k)
{
	if (a >= 1)
		return k + 1;
	return (1 - pow(a, k + 1)) / (1 - a);
}

static int decode_step(const struct llmsim_infer_cfg *cfg, int64_t batch, int64_t q_len,
		       int64_t kv_len, unsigned parts, struct llmsim_step_cost *c,
		       struct llmsim_err *err)
{
	struct llmsim_step s = {.decode_seqs = batch, .q_len = q_len,
				.decode_kv_len = (double)kv_len, .logits = batch * q_len,
				.parts = parts};
	return llmsim_infer_step(cfg, &s, c, err);
}

/* A GEMM outside the model's layers (Medusa heads, the MTP projection). */
static int extra_gemm(const struct llmsim_infer_cfg *cfg, int64_t m, int64_t n, int64_t k,
		      double *t, struct llmsim_err *err)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = cfg->act_dtype};
	op.u.gemm.m = m;
	op.u.gemm.n = n;
	op.u.gemm.k = k;
	op.u.gemm.batch = 1;
	op.u.gemm.b_dtype = cfg->act_dtype;
	struct llmsim_pred p;
	int rc = llmsim_predict(cfg->gpu, &op, &p, err);
	if (!rc)
		*t += p.time_s + (cfg->runtime == LLMSIM_RT_GRAPH ?
					  cfg->gpu->param[LLMSIM_PARAM_STEP_KERNEL_GAP_S] :
					  0);
	return rc;
}

int llmsim_spec_extra(const struct llmsim_spec_cfg *cfg, double *weight_bytes,
		      double *draft_kv_bytes_per_token, struct llmsim_err *err)
{
	const struct llmsim_infer_cfg *t = &cfg->target;
	const struct llmsim_model *m = t->model;
	double ab = llmsim_dtype_bytes(t->act_dtype);
	*draft_kv_bytes_per_token = 0;
	if (cfg->kind == LLMSIM_SPEC_DRAFT) {
		struct llmsim_infer_mem dm;
		int rc = llmsim_infer_memory(&cfg->draft, &dm, err);
		if (rc)
			return rc;
		*weight_bytes = dm.weight_bytes;
		*draft_kv_bytes_per_token = dm.kv_bytes_per_token;
	} else if (cfg->kind == LLMSIM_SPEC_MEDUSA) {
		*weight_bytes = cfg->gamma * ((double)m->hidden * m->hidden +
					      (double)m->hidden * m->vocab / t->tp) * ab;
	} else {
		struct llmsim_params p;
		llmsim_model_params(m, &p);
		double layer = (p.attention + p.mlp_dense + p.mlp_experts + p.mlp_shared) / m->layers;
		*weight_bytes = cfg->gamma * (layer / t->tp * llmsim_dtype_bytes(t->weight_dtype) +
					      2.0 * m->hidden * m->hidden * ab);
	}
	return 0;
}

/* Memory of one GPU of the target's replica, as `infer` checks it: the
 * target's weights and activations (llmsim_infer_memory), then what
 * speculation adds on the same GPUs (llmsim_spec_extra) and the caches:
 * the target's of batch x (context + verify tokens), a draft model's of
 * batch x (context + gamma). */
static int spec_memory(const struct llmsim_spec_cfg *cfg, int64_t q,
		       struct llmsim_spec_result *res, struct llmsim_err *err)
{
	const struct llmsim_infer_cfg *t = &cfg->target;
	const struct llmsim_model *m = t->model;
	int rc = llmsim_infer_memory(t, &res->mem, err);
	if (rc)
		return rc;
	double extra, draft_kv;
	if ((rc = llmsim_spec_extra(cfg, &extra, &draft_kv, err)))
		return rc;
	double kv = (double)cfg->batch * (double)llmsim_infer_kv_tokens(t, cfg->context + q) *
		    res->mem.kv_bytes_per_token;
	if (cfg->kind == LLMSIM_SPEC_DRAFT)
		kv += (double)cfg->batch *
		      (double)llmsim_infer_kv_tokens(&cfg->draft, cfg->context + cfg->gamma) * draft_kv;
	const char *what = cfg->kind == LLMSIM_SPEC_DRAFT	 ? "draft"
			   : cfg->kind == LLMSIM_SPEC_MEDUSA ? "Medusa heads"
							     : "MTP modules";
	res->kv_bytes = kv;
	res->extra_weight_bytes = extra;
	if (kv + extra > res->mem.kv_capacity_bytes)
		return llmsim_err_set(err, LLMSIM_ENOFIT,
				      "batch %lld at context %lld needs %.1f GB of KV cache and %.1f GB "
				      "of %s weights per GPU but %.1f GB is free after %s's weights "
				      "and activations (%.1f GB of weights per GPU on %d x %s)",
				      (long long)cfg->batch, (long long)cfg->context, kv / 1e9,
				      extra / 1e9, what, fmax(0, res->mem.kv_capacity_bytes) / 1e9,
				      m->name, res->mem.weight_bytes / 1e9, t->tp * t->pp, t->gpu->name);
	return 0;
}

int llmsim_spec_check(const struct llmsim_spec_cfg *cfg, struct llmsim_err *err)
{
	int k = cfg->gamma;
	if (k < 1 || k > LLMSIM_SPEC_MAX)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s must be 1..%d, got %d",
				      cfg->kind == LLMSIM_SPEC_MEDUSA ? "medusa heads"
				      : cfg->kind == LLMSIM_SPEC_MTP	 ? "mtp depth"
									 : "gamma",
				      LLMSIM_SPEC_MAX, k);
	if (cfg->nalpha != 1 && cfg->nalpha != k)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "give one acceptance rate or one per position (%d), not %d", k,
				      cfg->nalpha);
	for (int i = 0; i < k; i++) {
		double a = cfg->alpha[cfg->nalpha == 1 ? 0 : i];
		if (!(a >= 0 && a <= 1))
			return llmsim_err_set(err, LLMSIM_EINVAL, "acceptance rate %g is not in [0, 1]", a);
	}
	if (cfg->kind == LLMSIM_SPEC_MEDUSA && (cfg->tree < 1 || cfg->tree > LLMSIM_MAX_TREE))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the Medusa tree needs 1 to %d candidates, not %d", LLMSIM_MAX_TREE,
				      cfg->tree);
	return 0;
}

int llmsim_spec_draft(const struct llmsim_spec_cfg *cfg, int64_t batch, int64_t context,
		      double *draft_s, struct llmsim_err *err)
{
	const struct llmsim_infer_cfg *t = &cfg->target;
	const struct llmsim_model *m = t->model;
	struct llmsim_step_cost c;
	int k = cfg->gamma, rc = 0;
	*draft_s = 0;
	switch (cfg->kind) {
	case LLMSIM_SPEC_DRAFT:
		/* gamma autoregressive draft steps over the same context */
		for (int i = 0; i < k && !rc; i++) {
			rc = decode_step(&cfg->draft, batch, 1, context + 1 + i, 0, &c, err);
			*draft_s += c.time_s;
		}
		break;
	case LLMSIM_SPEC_MEDUSA:
		/* each head: SiLU(W1 h) + h with W1 [h, h], then its own
		 * vocabulary projection W2 [h, vocab/tp] (Cai et al. 2024, eq. 1) */
		for (int i = 0; i < k && !rc; i++) {
			rc = extra_gemm(t, batch, m->hidden, m->hidden, draft_s, err);
			if (!rc)
				rc = extra_gemm(t, batch, m->vocab / t->tp, m->hidden, draft_s, err);
		}
		break;
	case LLMSIM_SPEC_MTP: {
		/* each MTP module: project [h; emb] (2h -> h), one transformer
		 * layer (priced as the model's mean layer), the shared LM head */
		struct llmsim_step_cost body, head;
		for (int i = 0; i < k && !rc; i++) {
			rc = decode_step(t, batch, 1, context + 1 + i, LLMSIM_PART_BODY | LLMSIM_PART_ATTN,
					 &body, err);
			if (!rc)
				rc = decode_step(t, batch, 1, context + 1 + i, LLMSIM_PART_HEAD, &head, err);
			if (!rc)
				rc = extra_gemm(t, batch, m->hidden, 2 * m->hidden, draft_s, err);
			if (!rc)
				*draft_s += body.time_s / m->layers + head.time_s;
		}
		break;
	}
	}
	return rc;
}

int llmsim_spec_run(const struct llmsim_spec_cfg *cfg, struct llmsim_spec_result *res,
		    struct llmsim_err *err)
{
	memset(res, 0, sizeof *res);
	int k = cfg->gamma;
	int rc = llmsim_spec_check(cfg, err);
	if (rc)
		return rc;
	double a[LLMSIM_SPEC_MAX];
	for (int i = 0; i < k; i++)
		a[i] = cfg->alpha[cfg->nalpha == 1 ? 0 : i];
	if (cfg->batch < 1 || cfg->batch > LLMSIM_MAX_BATCH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "batch must be 1 to %d", LLMSIM_MAX_BATCH);
	if (cfg->context < 1 || cfg->context > LLMSIM_MAX_TOKENS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "context must be 1 to %d tokens",
				      LLMSIM_MAX_TOKENS);
	const struct llmsim_infer_cfg *t = &cfg->target;
	const struct llmsim_model *m = t->model;
	if (m->max_seq > 0 && cfg->context + k + 1 > m->max_seq)
		return llmsim_err_set(err, LLMSIM_EINVAL, "context %lld exceeds the %d-token window of %s",
				      (long long)cfg->context, m->max_seq, m->name);
	res->expected_tokens_per_step = llmsim_spec_expected_tokens(a, k);

	struct llmsim_step_cost c;
	if ((rc = decode_step(t, cfg->batch, 1, cfg->context + 1, 0, &c, err)))
		return rc;
	res->target_step_s = c.time_s;

	int64_t q = cfg->kind == LLMSIM_SPEC_MEDUSA ? cfg->tree : k + 1;
	res->verify_tokens = q;
	if ((rc = spec_memory(cfg, q, res, err)))
		return rc;
	if ((rc = decode_step(t, cfg->batch, q, cfg->context + q, 0, &c, err)))
		return rc;
	res->verify_s = c.time_s;
	if ((rc = llmsim_spec_draft(cfg, cfg->batch, cfg->context, &res->draft_s, err)))
		return rc;
	res->step_s = res->draft_s + res->verify_s;
	res->tpot_s = res->step_s / res->expected_tokens_per_step;
	res->speedup = res->tpot_s > 0 ? res->target_step_s / res->tpot_s : 0;
	return 0;
}
