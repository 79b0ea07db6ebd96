/*
 * memory.c - memory per GPU of a training configuration, in closed form.
 *
 * Model states: bytes per trained parameter by recipe and ZeRO stage (see
 * train.h). Activations: the tensors each layer saves for backward,
 * following Korthikanti et al. 2022 ("Reducing Activation Recomputation in
 * Large Transformer Models", Section 4 and Table 2) term by term, so that a
 * GPT-3-like layer (MHA, LayerNorm, 4h GeLU MLP, dropout) gives exactly
 * sbh(34 + 5as/h) and its TP / SP / selective / full variants; GQA, gated
 * MLPs, MLA, MoE and flash attention change the terms they touch.
 * Activations are 16-bit (2 bytes) also under FP8 (we keep the bf16 copies
 * Transformer Engine saves for the backward of non-GEMM ops).
 *
 * Allowances: the stack's (cfg.allow, stated with their sources in
 * hw/stacks/NAME.yaml): its CUDA context and workspaces, NCCL buffers per
 * communicator the layout uses, CUDA graph pools, and a fraction of
 * everything else for allocator fragmentation (without a stack: 1 GB and
 * 5%, the allowances before stacks were data). The llama3 recipe's per-rank
 * memory (memory_rank.c) takes no fragmentation: its stack frees early.
 *
 * Memory as the stacks hold it (train.h): recomputation by module drops
 * what each module saved inside; full recomputation over groups or blocks
 * of layers (uniform, block); activation offload keeps a fraction of the
 * saved activations of the layers waiting for their backward in host
 * memory, all but the layer computing and the one in transfer; FSDP
 * (Megatron-FSDP, FSDP2) shards as its kind does and holds its unsharded
 * buffers. The distributed optimizer and every ZeRO stage shard over the
 * data-parallel x context-parallel ranks (n_dense below): CP ranks hold the
 * same weights.
 *
 * Offload (ZeRO-Offload / ZeRO-Infinity, see train.h): the host of a node
 * holds, for each of its ranks, that rank's partition of the fp32 master
 * weights, Adam m and v and the fp32 gradient accumulator (16 B per
 * parameter; DeepSpeed's stage 1/2 CPU optimizer allocates all four),
 * plus the 16-bit weights with params offload, plus 4 GB per process
 * (PyTorch, the CUDA runtime, pinned staging buffers: an assumption).
 * The most loaded rank is taken for every rank of the node.
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

void train_geom_init(const struct llmsim_model *m, struct train_geom *g)
{
	struct llmsim_params p;
	llmsim_model_params(m, &p);
	memset(g, 0, sizeof *g);
	g->layers = m->layers;
	g->moe_layers = llmsim_model_moe_layers(m, 0, m->layers);
	g->dense_layers = m->layers - g->moe_layers;
	g->attn_per_layer = p.attention / m->layers;
	g->mlp_per_dense_layer = g->dense_layers ? p.mlp_dense / g->dense_layers : 0;
	if (g->moe_layers) {
		g->experts_per_moe_layer = p.mlp_experts / g->moe_layers;
		g->shared_per_moe_layer = (p.mlp_shared + p.router) / g->moe_layers;
	}
	g->norms_per_layer = p.norms / m->layers;
	g->embedding = p.embedding;
	g->lm_head = p.lm_head;
	/* LoRA on q, k, v, o: A [in, r] and B [r, out] for each, per unit rank */
	double qdim, kvdim;
	if (m->has_mla) {
		qdim = (double)m->heads * (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim);
		kvdim = (double)m->heads * m->mla.v_head_dim;
	} else {
		qdim = (double)m->heads * m->head_dim;
		kvdim = (double)m->kv_heads * m->head_dim;
	}
	g->lora_per_layer = (m->hidden + qdim) + 2 * (m->hidden + kvdim) + (qdim + m->hidden);
	g->dropout = llmsim_graph_dropout(m);
}

void train_params_per_gpu(const struct train_geom *g, const struct llmsim_model *m,
			  const struct llmsim_train_cfg *c, struct train_params *p)
{
	double t = c->tp;
	double emb;
	if (c->pp == 1)
		emb = (g->embedding + g->lm_head) / t;
	else /* tied embeddings keep a copy on the last stage */
		emb = fmax(g->embedding, g->lm_head > 0 ? g->lm_head : g->embedding) / t;
	if (train_ends_in_slots(c)) { /* the fullest rank's (pp_layout.c) */
		struct train_params q;
		int e, h;
		memset(p, 0, sizeof *p);
		struct train_pp_split s;
		train_pp_split(m, c, &s);
		for (int i = 0; i < s.nreps; i++) { /* a first maximum lies on one */
			int n = train_pp_split_rank(&s, s.reps[i], &e, &h);
			double ends = (e ? g->embedding : 0) +
				      (h ? (g->lm_head > 0 ? g->lm_head : g->embedding) : 0);
			train_params_layers(g, c, n, ends / t, &q);
			if (q.dense + q.expert > p->dense + p->expert)
				*p = q;
		}
		return;
	}
	if (c->schedule == LLMSIM_SCHED_DUALPIPE && c->pp > 1) {
		/* DualPipe: two stages a rank, rank 0 the first and the last
		 * (DeepSeek-V3 Table 2: the parameters twice) */
		double ends = g->embedding + (g->lm_head > 0 ? g->lm_head : g->embedding);
		train_params_layers(g, c, 2 * train_stage_layers(m, c), ends / t, p);
		return;
	}
	train_params_layers(g, c, train_stage_layers(m, c), emb, p);
}

void train_params_layers(const struct train_geom *g, const struct llmsim_train_cfg *c,
			 double stage_layers, double emb, struct train_params *p)
{
	double t = c->tp;
	double frac_moe = g->layers ? (double)g->moe_layers / g->layers : 0;
	double dense_layer = g->attn_per_layer / t + g->norms_per_layer;
	double dense = stage_layers * dense_layer +
		       stage_layers * (1 - frac_moe) * g->mlp_per_dense_layer / t +
		       stage_layers * frac_moe * g->shared_per_moe_layer / t;
	double expert = stage_layers * frac_moe * g->experts_per_moe_layer / (t * c->ep);
	dense += emb;
	memset(p, 0, sizeof *p);
	p->dense = dense;
	p->expert = expert;
	p->layer = dense_layer + (1 - frac_moe) * g->mlp_per_dense_layer / t +
		   frac_moe * (g->shared_per_moe_layer / t +
			       g->experts_per_moe_layer / (t * c->ep));
	if (c->lora_rank > 0) {
		p->frozen = dense + expert;
		p->trained_dense = stage_layers * g->lora_per_layer * c->lora_rank / t;
		p->trained_expert = 0;
	} else {
		p->trained_dense = dense;
		p->trained_expert = expert;
	}
}

void llmsim_train_state_bytes(enum llmsim_recipe r, int zero, int n, double *weights,
			      double *grads, double *optimizer)
{
	double w, g, o;
	switch (r) {
	case LLMSIM_RECIPE_AMP:
		w = 4, g = 4, o = 8;
		break;
	case LLMSIM_RECIPE_ZERO:
		w = 2, g = 2, o = 12;
		break;
	default: /* megatron */
		w = 2, g = 4, o = 12;
		break;
	}
	if (zero >= 1)
		o /= n;
	if (zero >= 2)
		g /= n;
	if (zero >= 3)
		w /= n;
	*weights = w;
	*grads = g;
	*optimizer = o;
}

void llmsim_train_offload_bytes(enum llmsim_recipe r, int zero, enum llmsim_offload o, int n,
				double *gpu_weights, double *gpu_grads, double *gpu_optimizer,
				double *host)
{
	if (o == LLMSIM_OFFLOAD_NONE) {
		llmsim_train_state_bytes(r, zero, n, gpu_weights, gpu_grads, gpu_optimizer);
		*host = 0;
		return;
	}
	/* DeepSpeed reduces 16-bit gradients and casts them to fp32 on the
	 * host, whatever the recipe does without offload */
	double w = 2, g = 2, h = TRAIN_HOST_STATE_BYTES;
	if (zero >= 2)
		g /= n;
	if (zero >= 3)
		w /= n;
	if (o == LLMSIM_OFFLOAD_PARAMS) { /* the GPU keeps only working buffers */
		h += 2; /* the 16-bit weights (ZeRO-3: this rank's 1/n) */
		w = g = 0;
	}
	*gpu_weights = w;
	*gpu_grads = g;
	*gpu_optimizer = 0;
	*host = h / n;
}

double llmsim_train_act_layer_bytes(const struct llmsim_model *m,
				    const struct llmsim_train_cfg *c, int moe_layer,
				    int dropout)
{
	const double e = 2; /* 16-bit activations */
	/* a GEMM input saved for the weight gradient: its quantized copy
	 * under a quantized precision recipe (the norm's and activation's own
	 * inputs stay 16-bit) */
	const double q = c->lora_rank > 0 ? e : llmsim_precision_saved_bytes(c->precision);
	double t = c->tp;
	double spd = (c->tp > 1 && c->sequence_parallel) ? t : 1; /* SP divisor */
	double T = (double)c->micro_batch * (double)c->seq / c->cp; /* tokens here */
	double s_full = (double)c->seq;
	double h = m->hidden;
	double a_loc = m->heads / t;
	double mask = dropout ? 1 : 0; /* 1 byte per element */
	/* recompute modules (Megatron-Core's CheckpointWithoutOutput): a module
	 * named keeps its input, which the layer saves anyway, and drops what it
	 * saved inside (its outputs to the ops after it are recomputed too) */
	unsigned rm = c->recompute == LLMSIM_RECOMP_MODULES ? c->recompute_modules : 0;
	if (c->recompute == LLMSIM_RECOMP_SELECTIVE)
		rm = 1u << LLMSIM_RM_CORE_ATTN;
#define RM(k) (rm & (1u << LLMSIM_RM_##k))

	if (c->recompute == LLMSIM_RECOMP_FULL)
		return e * T * h / spd; /* the layer input only */

	/* attention block */
	double qk, v, out_in, latents = 0;
	if (m->has_mla) {
		double dq = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
		qk = e * T * a_loc * dq * 2;
		v = e * T * a_loc * m->mla.v_head_dim;
		out_in = q * T * a_loc * m->mla.v_head_dim;
		/* latents the up-projections read */
		latents = q * T * (m->mla.kv_lora_rank + m->mla.qk_rope_head_dim + m->mla.q_lora_rank);
		if (RM(MLA_UP_PROJ)) /* q, k, v again from the latents */
			qk = v = 0;
	} else {
		double kv_loc = m->kv_heads >= c->tp ? m->kv_heads / t : 1;
		qk = e * T * (a_loc + kv_loc) * m->head_dim;
		v = e * T * kv_loc * m->head_dim;
		out_in = q * T * a_loc * m->head_dim;
	}
	/* a norm's output: kept 16-bit where a module reads it (the router, a
	 * recomputed module's input), its quantized copy where a GEMM does */
	double norm_out = RM(LAYERNORM) ? 0 : e * T * h / spd;
	double norm_q = RM(LAYERNORM) ? 0 : q * T * h / spd;
	double attn = e * T * h / spd     /* norm input */
		      + norm_q            /* QKV input (norm output) */
		      + qk + v + out_in + latents
		      + mask * T * h / spd; /* attention dropout mask */
	if (!RM(CORE_ATTN)) {
		if (c->attn == LLMSIM_ATTN_NAIVE) /* scores: softmax out (+ mask, dropout out) */
			attn += (dropout ? 5 : 2) * a_loc * T * s_full;
		else /* flash: the fp32 log-sum-exp per row */
			attn += 4 * a_loc * T;
	}

	/* MLP block */
	double mlp = e * T * h / spd + mask * T * h / spd; /* norm input, dropout mask */
	int gated = m->mlp == LLMSIM_MLP_GATED;
	double per_ffn = (gated ? 2 * e : e) + q; /* act inputs + fc2 input, per ffn column */
	if (moe_layer) {
		double fe = m->moe.expert_intermediate;
		double Tr = T * m->moe.top_k * c->moe_imbalance; /* busiest rank */
		/* moe_act: the activation's output (fc2's input) recomputed */
		double per_exp = RM(MOE_ACT) ? per_ffn - q : per_ffn;
		double moe = norm_out;                    /* router input (bf16) */
		moe += 4 * T * m->moe.experts;           /* router probabilities (fp32) */
		moe += q * Tr * h + per_exp * Tr * fe / t; /* routed experts */
		if (m->moe.shared_experts > 0 && !RM(SHARED_EXPERTS))
			moe += per_ffn * T * (double)m->moe.shared_experts * fe / t;
		mlp += RM(MOE) ? norm_out : moe;
	} else {
		mlp += RM(MLP) ? norm_out : norm_q + per_ffn * T * m->intermediate / t;
	}
#undef RM
	return attn + mlp;
}

double llmsim_train_bubble_fraction(int pp, int chunks, int64_t microbatches,
				    enum llmsim_pp_sched s)
{
	if (pp <= 1 || microbatches < 1)
		return 0;
	double v = s == LLMSIM_SCHED_INTERLEAVED && chunks > 1 ? chunks : 1;
	return (pp - 1) / (v * (double)microbatches);
}

double train_logits_bytes(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			  double T)
{
	return 4.0 * T * m->vocab / c->tp;
}

double train_p2p_buffer_bytes(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			      double T)
{
	return 4 * 2 * T * m->hidden / (c->sequence_parallel ? c->tp : 1);
}

double train_act_per_layer(const struct train_geom *g, const struct llmsim_model *m,
			   const struct llmsim_train_cfg *c, double *dense, double *transient)
{
	double frac_moe = g->layers ? (double)g->moe_layers / g->layers : 0;
	double ad = llmsim_train_act_layer_bytes(m, c, 0, g->dropout);
	double am = g->moe_layers ? llmsim_train_act_layer_bytes(m, c, 1, g->dropout) : 0;
	*dense = ad;
	*transient = 0;
	double mean = (1 - frac_moe) * ad + frac_moe * am;
	if (c->recompute != LLMSIM_RECOMP_FULL)
		return mean;
	struct llmsim_train_cfg nc = *c;
	nc.recompute = LLMSIM_RECOMP_NONE;
	double whole = llmsim_train_act_layer_bytes(m, &nc, g->moe_layers > 0, g->dropout);
	double whole_mean = (1 - frac_moe) * llmsim_train_act_layer_bytes(m, &nc, 0, g->dropout) +
			    (g->moe_layers ? frac_moe * llmsim_train_act_layer_bytes(m, &nc, 1,
										  g->dropout)
					   : 0);
	double ls = llmsim_train_stage_layers(m, c), n = c->recompute_layers;
	if (c->recompute_method == LLMSIM_RECOMP_BLOCK && n > 0 && n < ls) {
		/* the first n layers of the stage recomputed, the rest kept whole;
		 * one recomputed layer re-materialized at a time */
		*transient = whole;
		return (n * mean + (ls - n) * whole_mean) / ls;
	}
	if (c->recompute_method == LLMSIM_RECOMP_BLOCK)
		n = 1; /* every layer of the stage: uniform, one a group */
	/* uniform: a group's input per n layers, a group re-materialized */
	n = n >= 1 ? fmin(n, ls >= 1 ? ls : 1) : 1;
	*transient = n * whole;
	return mean / n;
}

double llmsim_train_nccl_bytes(const struct llmsim_train_cfg *c)
{
	int groups = (c->tp > 1) + (c->cp > 1) + (c->dp * c->cp > 1) + (c->pp > 1) + (c->ep > 1);
	return groups * c->allow.nccl_bytes_per_group;
}

double train_allow_bytes(const struct llmsim_train_cfg *c)
{
	return c->allow.context_bytes + llmsim_train_nccl_bytes(c) + c->allow.cuda_graph_bytes;
}

double train_act_offloaded(const struct llmsim_train_cfg *c, double layers, double per_layer)
{
	if (!(c->offload_activations > 0))
		return 0;
	/* the layer computing and the one in flight to or from the host stay */
	return c->offload_activations * fmax(0, layers - 2) * per_layer;
}

int train_fsdp_state_bytes(const struct llmsim_train_cfg *c, int n, double *w, double *g,
			   double *o)
{
	if (c->zero < 2 || c->fsdp == LLMSIM_FSDP_NONE)
		return 0;
	if (c->fsdp == LLMSIM_FSDP_FSDP2) {
		/* fp32 sharded parameters (the optimizer's), fp32 gradients,
		 * Adam m and v; without resharding after the forward (ZeRO-2)
		 * the bf16 parameters stay gathered from forward to backward */
		*w = 4.0 / n + (c->zero == 2 ? 2 : 0);
		*g = 4.0 / n;
		*o = 8.0 / n;
		return 1;
	}
	/* Megatron-FSDP: bf16 model weights sharded (optim_grads_params) or
	 * whole (optim_grads), fp32 main grads and fp32 main weights, m, v
	 * sharded */
	*w = c->zero == 3 ? 2.0 / n : 2;
	*g = 4.0 / n;
	*o = 12.0 / n;
	return 1;
}

double train_fsdp_buffer_bytes(const struct llmsim_train_cfg *c, double layer_params)
{
	if (c->zero < 2 || c->fsdp == LLMSIM_FSDP_NONE)
		return 0;
	/* the bf16 parameters of the layer running and of the one prefetched,
	 * gathered (ZeRO-3 only: at ZeRO-2 they are the weights above), and
	 * one layer's unsharded gradients before their reduce-scatter: bf16
	 * computed and fp32 reduced (FSDP2's reduce_dtype), or Megatron-FSDP's
	 * fp32 gradient bucket */
	double gather = c->zero == 3 ? 2 * 2 * layer_params : 0;
	double grad = (c->fsdp == LLMSIM_FSDP_FSDP2 ? 2 + 4 : 4) * layer_params;
	return gather + grad;
}

/* quantized tensors of one layer's linears with scaling state: input,
 * weight and output gradient of QKV, O, the MLP's two (MLA and MoE have
 * more; the state is a few KB a tensor either way) */
#define QUANT_TENSORS_PER_LAYER 12

double train_quant_weight_bytes(const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c,
				const struct train_params *p, double layers)
{
	const struct llmsim_precision_desc *d = llmsim_precision_desc(c->precision);
	if (!d->quantized || c->lora_rank > 0)
		return 0;
	double held = c->zero >= 3 ? fmin(2, layers) : layers;
	return held * p->layer * llmsim_precision_weight_bytes(c->precision,
							       llmsim_precision_tn_only(gpu)) +
	       layers * QUANT_TENSORS_PER_LAYER * d->state_bytes;
}

/* train_params_per_gpu and train_act_per_layer through the memo (NULL:
 * none); a hit is the very value a call gives. */
static void params_memo(const struct train_geom *g, const struct llmsim_model *m,
			const struct llmsim_train_cfg *c, struct train_pp_memo *memo,
			struct train_params *p)
{
	if (!memo) {
		train_params_per_gpu(g, m, c, p);
		return;
	}
	struct train_params_memo *e = &memo->params[c->chunks & (TRAIN_PARAMS_MEMO - 1)];
	if (!e->used || e->tp != c->tp || e->pp != c->pp || e->ep != c->ep ||
	    e->lora_rank != c->lora_rank || e->chunks != c->chunks ||
	    e->schedule != (int)c->schedule || e->uneven_pp != c->uneven_pp ||
	    e->recipe != (int)c->recipe) {
		*e = (struct train_params_memo){
			.used = 1, .tp = c->tp, .pp = c->pp, .ep = c->ep, .lora_rank = c->lora_rank,
			.chunks = c->chunks, .schedule = c->schedule, .uneven_pp = c->uneven_pp,
			.recipe = c->recipe};
		train_params_per_gpu(g, m, c, &e->p);
	}
	*p = e->p;
}

static double act_memo(const struct train_geom *g, const struct llmsim_model *m,
		       const struct llmsim_train_cfg *c, struct train_pp_memo *memo, double *ad,
		       double *transient)
{
	/* full recomputation over groups or blocks of layers depends on the
	 * stage's layers too: not memoized */
	if (!memo || (c->recompute == LLMSIM_RECOMP_FULL && c->recompute_layers > 0))
		return train_act_per_layer(g, m, c, ad, transient);
	struct train_act_memo *e = &memo->act;
	if (!e->used || e->tp != c->tp || e->cp != c->cp || e->micro_batch != c->micro_batch ||
	    e->recompute != (int)c->recompute || e->modules != c->recompute_modules ||
	    e->method != (int)c->recompute_method || e->attn != (int)c->attn ||
	    e->precision != (int)c->precision || e->lora != (c->lora_rank > 0) ||
	    e->sp != c->sequence_parallel || e->seq != c->seq ||
	    e->moe_imbalance != c->moe_imbalance) {
		*e = (struct train_act_memo){
			.used = 1, .tp = c->tp, .cp = c->cp, .micro_batch = c->micro_batch,
			.recompute = c->recompute, .modules = c->recompute_modules,
			.method = c->recompute_method, .attn = c->attn,
			.precision = c->precision, .lora = c->lora_rank > 0, .sp = c->sequence_parallel,
			.seq = c->seq, .moe_imbalance = c->moe_imbalance};
		e->per_layer = train_act_per_layer(g, m, c, &e->ad, &e->transient);
	}
	*ad = e->ad;
	*transient = e->transient;
	return e->per_layer;
}

void train_memory(const struct train_geom *g, const struct llmsim_model *m,
		  const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c,
		  int64_t microbatches, struct train_pp_memo *memo,
		  struct llmsim_train_mem *mem)
{
	if (train_ends_in_slots(c)) { /* per pipeline rank (memory_rank.c) */
		train_memory_ranks(g, m, gpu, c, microbatches, memo, mem);
		return;
	}
	struct train_params p;
	params_memo(g, m, c, memo, &p);
	memset(mem, 0, sizeof *mem);
	mem->pp_rank = -1;
	int n_dense = c->dp * c->cp;              /* ZeRO group of dense params */
	int n_exp = n_dense / (c->ep > 0 ? c->ep : 1);
	double wd, gd, od, hd, we, ge, oe, he;
	llmsim_train_offload_bytes(c->recipe, c->zero, c->offload, n_dense, &wd, &gd, &od, &hd);
	llmsim_train_offload_bytes(c->recipe, c->zero, c->offload, n_exp, &we, &ge, &oe, &he);
	int fsdp = train_fsdp_state_bytes(c, n_dense, &wd, &gd, &od);
	train_fsdp_state_bytes(c, n_exp, &we, &ge, &oe);
	double other = train_allow_bytes(c);
	double host = 0;
	if (c->lora_rank > 0) {
		double fz = c->zero >= 3 ? (double)n_dense : 1.0;
		if (c->offload == LLMSIM_OFFLOAD_PARAMS) /* frozen base in host memory too */
			host += 2 * p.frozen / fz;
		else
			mem->weights_bytes = 2 * p.frozen / fz;
		mem->weights_bytes += wd * p.trained_dense;
		mem->grads_bytes = gd * p.trained_dense;
		mem->optimizer_bytes = od * p.trained_dense;
		host += hd * p.trained_dense;
	} else {
		mem->weights_bytes = wd * p.dense + we * p.expert;
		mem->grads_bytes = gd * p.dense + ge * p.expert;
		mem->optimizer_bytes = od * p.dense + oe * p.expert;
		host += hd * p.dense + he * p.expert;
		if (c->recipe == LLMSIM_RECIPE_AMP && !fsdp) /* bf16 autocast copies of the weights */
			other += 2 * (c->zero >= 3 ? 2 * p.layer : p.dense + p.expert);
	}
	mem->quant_weights_bytes = train_quant_weight_bytes(gpu, c, &p, train_stage_layers(m, c));
	other += mem->quant_weights_bytes;
	if (fsdp)
		other += train_fsdp_buffer_bytes(c, p.layer);
	else if (c->zero >= 3) /* gathered 16-bit layer + the prefetched next one */
		other += 2 * 2 * p.layer +
			 (c->lora_rank ? 0 : (c->offload ? 2 : 4) * p.layer);
	mem->params_per_gpu = p.dense + p.expert;
	mem->trained_params_per_gpu = p.trained_dense + p.trained_expert;

	/* activations of the first stage (most micro-batches in flight) and
	 * the last (the logits) */
	double ad, transient;
	double per_layer = act_memo(g, m, c, memo, &ad, &transient);
	double stage_layers = train_stage_layers(m, c);
	double inflight;
	int64_t mb = microbatches;
	if (c->pp == 1)
		inflight = 1;
	else if (c->schedule == LLMSIM_SCHED_DUALPIPE) /* Table 2: pp + 1 */
		inflight = mb < c->pp + 1 ? mb : c->pp + 1;
	else if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		inflight = (mb < c->pp ? mb : c->pp) *
			   (1 + (c->pp - 1) / ((double)c->pp * c->chunks));
	else
		inflight = mb < c->pp ? mb : c->pp;
	double T = (double)c->micro_batch * c->seq / c->cp;
	double logits = train_logits_bytes(m, c, T);
	double off_first = train_act_offloaded(c, stage_layers * inflight, per_layer);
	double off_last = train_act_offloaded(c, stage_layers, per_layer);
	double first = stage_layers * inflight * per_layer - off_first + transient;
	double last = stage_layers * per_layer - off_last + transient + logits;
	if (c->pp == 1)
		first += logits;
	mem->act_per_layer_bytes = ad;
	mem->act_in_flight_layers = stage_layers * inflight;
	mem->activations_bytes = fmax(first, last);
	/* p2p buffers (send + receive, fwd + bwd) */
	if (c->pp > 1)
		other += train_p2p_buffer_bytes(m, c, T);
	double sum = mem->weights_bytes + mem->grads_bytes + mem->optimizer_bytes +
		     mem->activations_bytes + other;
	mem->fragmentation_bytes = c->allow.fragmentation_frac * sum;
	mem->other_bytes = other + mem->fragmentation_bytes;
	mem->total_bytes = sum + mem->fragmentation_bytes;
	mem->hbm_bytes = gpu->hbm_bytes;
	mem->act_offloaded_bytes = fmax(off_first, off_last);
	host += mem->act_offloaded_bytes;
	if (c->offload != LLMSIM_OFFLOAD_NONE || c->offload_activations > 0) {
		int ranks = c->gpus < gpu->gpus_per_node ? c->gpus : gpu->gpus_per_node;
		mem->host_per_gpu_bytes = host + TRAIN_HOST_RANK_BYTES;
		mem->host_params_per_gpu = p.trained_dense / n_dense + p.trained_expert / n_exp;
		mem->host_per_node_bytes = ranks * mem->host_per_gpu_bytes;
		mem->host_bytes = gpu->host_memory_bytes;
	}
}
