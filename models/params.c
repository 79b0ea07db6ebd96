/*
 * params.c - what follows from a model's shape alone: parameter counts by
 * part, KV-cache bytes per token, forward FLOPs per token.
 *
 * Counts are exact for the architectures the struct expresses: every weight
 * matrix, bias and norm vector. Which layers are MoE layers is
 * llmsim_model_is_moe_layer's rule (model.h).
 */
#include "model.h"

#include "model_load.h"

/* One layer's attention weights (matmul) and biases + latent norms (other). */
static void attn_layer(const struct llmsim_model *m, double *mat, double *other)
{
	double h = m->hidden, H = m->heads;
	if (m->has_mla) {
		const struct llmsim_mla *a = &m->mla;
		double qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
		if (a->q_lora_rank > 0) {
			/* q_a (h -> q_lora), norm on the latent, q_b (-> heads * qk) */
			*mat = h * a->q_lora_rank + (double)a->q_lora_rank * H * qk;
			*other = a->q_lora_rank;
		} else {
			*mat = h * H * qk;
			*other = 0;
		}
		/* kv_a (h -> kv_lora + rope), norm on the kv latent,
		 * kv_b (kv_lora -> heads * (nope + v)), o (heads * v -> h) */
		*mat += h * (a->kv_lora_rank + a->qk_rope_head_dim) +
			(double)a->kv_lora_rank * H * (a->qk_nope_head_dim + a->v_head_dim) +
			H * a->v_head_dim * h;
		*other += a->kv_lora_rank;
	} else {
		double q = H * m->head_dim, kv = (double)m->kv_heads * m->head_dim;
		*mat = h * q + 2 * h * kv + q * h;
		*other = 0;
		if (m->qkv_bias || m->linear_bias)
			*other += q + 2 * kv;
	}
	if (m->linear_bias)
		*other += h; /* output projection bias */
}

/* One MLP of width i: weights and biases. */
static void mlp(const struct llmsim_model *m, double i, double *mat, double *other)
{
	double h = m->hidden;
	int gated = m->mlp == LLMSIM_MLP_GATED;
	*mat = (gated ? 3 : 2) * h * i;
	*other = m->linear_bias ? (gated ? 2 * i : i) + h : 0;
}

int llmsim_model_is_moe_layer(const struct llmsim_model *m, int l)
{
	int freq = m->moe.layer_freq > 0 ? m->moe.layer_freq : 1;
	return m->has_moe && m->moe.experts > 0 && l >= m->moe.dense_layers && l % freq == 0;
}

int llmsim_model_moe_layers(const struct llmsim_model *m, int first, int n)
{
	int c = 0;
	for (int l = first; l < first + n; l++)
		c += llmsim_model_is_moe_layer(m, l);
	return c;
}

static double norm_params(const struct llmsim_model *m)
{
	return m->norm == LLMSIM_NORM_LAYER ? 2.0 * m->hidden : m->hidden;
}

/* The whole count; *matmul_active gets the per-token matmul weights. */
static void count(const struct llmsim_model *m, struct llmsim_params *p, double *matmul_active)
{
	double h = m->hidden, am, ao, dm, dom, em = 0, eo = 0;
	*p = (struct llmsim_params){0};

	p->embedding = (double)m->vocab * h;
	if (m->position == LLMSIM_POS_LEARNED)
		p->embedding += (double)(m->position_rows ? m->position_rows : m->max_seq) * h;
	p->lm_head = m->tied_embeddings ? 0 : (double)m->vocab * h;

	attn_layer(m, &am, &ao);
	p->per_layer_attention = am + ao;
	p->attention = m->layers * (am + ao);

	mlp(m, m->intermediate, &dm, &dom);
	double nmoe = llmsim_model_moe_layers(m, 0, m->layers);
	double ndense = m->layers - nmoe;
	p->mlp_dense = ndense * (dm + dom);

	double act_moe_mat = 0;
	if (m->has_moe) {
		mlp(m, m->moe.expert_intermediate, &em, &eo);
		p->mlp_experts = nmoe * m->moe.experts * (em + eo);
		p->mlp_shared = nmoe * m->moe.shared_experts * (em + eo);
		p->router = nmoe * h * m->moe.experts;
		act_moe_mat = nmoe * ((double)m->moe.top_k * em + m->moe.shared_experts * em +
				      h * m->moe.experts);
	}
	/* two norms per layer, and the final norm */
	p->norms = (2.0 * m->layers + 1) * norm_params(m);
	if (m->qk_norm) /* a query and a key norm of head_dim weights a layer */
		p->norms += 2.0 * m->layers * m->head_dim;

	p->total = p->embedding + p->lm_head + p->attention + p->mlp_dense + p->mlp_experts +
		   p->mlp_shared + p->router + p->norms;
	p->active = p->total;
	if (m->has_moe)
		p->active -= p->mlp_experts * (1.0 - (double)m->moe.top_k / m->moe.experts);

	/* The LM head multiplies even when tied to the embedding table. */
	*matmul_active = m->layers * am + ndense * dm + act_moe_mat + (double)m->vocab * h;

	/* MTP module (DeepSeek-V3): two norms on the inputs, a 2h -> h
	 * projection, one full layer (MoE when the model is), and a norm
	 * before the shared head; embedding and head are shared. */
	if (m->mtp_layers > 0) {
		double layer = am + ao + 2 * norm_params(m);
		if (m->has_moe)
			layer += m->moe.experts * (em + eo) + m->moe.shared_experts * (em + eo) +
				 h * m->moe.experts;
		else
			layer += dm + dom;
		p->mtp = m->mtp_layers * (3 * norm_params(m) + 2 * h * h + layer);
	}
}

void llmsim_model_params(const struct llmsim_model *m, struct llmsim_params *p)
{
	double unused;
	count(m, p, &unused);
}

double llmsim_model_matmul_params_active(const struct llmsim_model *m)
{
	struct llmsim_params p;
	double mat;
	count(m, &p, &mat);
	return mat;
}

double llmsim_model_kv_bytes_per_token(const struct llmsim_model *m, enum llmsim_dtype kv_dtype)
{
	double per_layer;
	if (m->attention == LLMSIM_ATTN_MLA)
		per_layer = m->mla.kv_lora_rank + m->mla.qk_rope_head_dim;
	else
		per_layer = 2.0 * m->kv_heads * m->head_dim;
	return per_layer * m->layers * llmsim_dtype_bytes(kv_dtype);
}

double llmsim_model_flops_per_token(const struct llmsim_model *m, int64_t ctx)
{
	double score_dim = m->head_dim, value_dim = m->head_dim;
	if (m->attention == LLMSIM_ATTN_MLA) {
		score_dim = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
		value_dim = m->mla.v_head_dim;
	}
	/* QK^T: 2 * heads * score_dim per context token; PV: 2 * heads * value_dim */
	double attn = 2.0 * m->heads * (score_dim + value_dim) * (double)ctx * m->layers;
	return 2.0 * llmsim_model_matmul_params_active(m) + attn;
}
