/*
 * memory_rank.c - memory per GPU of the llama3 recipe, rank by rank.
 *
 * The pipeline split puts the embedding and the head in layer slots
 * (pp_layout.c), so the ranks differ: rank 0 holds the embedding and one
 * layer fewer but the longest warm-up, rank 1 a full stage and two chunk
 * forwards fewer in flight, the last rank one layer fewer, the head and the
 * logits. Each of ranks 0, 1 and pp-1 is costed (ranks 2..pp-2 hold what
 * rank 1 holds with fewer forwards in flight) and the fullest is the
 * configuration's memory. Per rank (Dubey et al. 2024, Sec. 3.3.2-3.3.4):
 *  - model states: the recipe's bytes per parameter of what the rank holds
 *    (llmsim_train_state_bytes; ZeRO-2 is FSDP without resharding after
 *    forward: bf16 weights held, fp32 gradients and optimizer sharded),
 *    plus, at ZeRO-2, one model chunk's unsharded FP32 gradients while
 *    they are reduce-scattered ("reduce-scatter gradients in FP32"): the
 *    next chunk's forward runs, and the activations peak, before the
 *    transfer ends;
 *  - activations: each chunk's layers times a layer's saved tensors
 *    (llmsim_train_act_layer_bytes), summed over the chunk forwards the
 *    schedule keeps in flight at its peak (llmsim_train_pp_peak_inflight);
 *    the embedding chunk saves nothing for its backward but the token ids,
 *    the head chunk its fp32 logits for one micro-batch (the last rank runs
 *    the head's backward right after its forward);
 *  - buffers: 1 GB of CUDA context and NCCL workspace, the p2p buffers
 *    (send + receive, forward + backward), and with context parallelism
 *    one layer's all-gathered K and V (forward) and the gathered K, V
 *    with their gradients (backward);
 *  - no fragmentation allowance (train.h, the llama3 recipe says why).
 * What the split and the schedule give ranks 0, 1 and pp-1 (layers, ends,
 * largest chunk, layers in flight) depends only on (layers, pp, chunks,
 * micro-batches); the ctx keeps it (train_pp_memo), since the plan prices
 * many configurations of one pipeline shape.
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

/* The gathered K and V of one layer over the whole sequence, bytes. */
static double cp_kv_bytes(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	if (c->cp <= 1)
		return 0;
	double kv_dim;
	if (m->has_mla)
		kv_dim = (double)m->heads / c->tp *
			 (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim + m->mla.v_head_dim);
	else
		kv_dim = 2.0 * (m->kv_heads >= c->tp ? m->kv_heads / c->tp : 1) * m->head_dim;
	return 2.0 * c->micro_batch * (double)c->seq * kv_dim;
}

/* What every rank shares: the model states' bytes per parameter, a
 * layer's activations, the buffers. */
struct rank_shared {
	double wd, gd, od, we, ge, oe; /* bytes per dense / expert parameter */
	double per_layer, ad, transient; /* train_act_per_layer */
	double T;                        /* tokens of a micro-batch on a GPU */
	double other;                    /* buffers */
};

static void rank_shared(const struct train_geom *g, const struct llmsim_model *m,
			const struct llmsim_train_cfg *c, struct rank_shared *sh)
{
	int n_dense = c->dp * c->cp, n_exp = n_dense / (c->ep > 0 ? c->ep : 1);
	llmsim_train_state_bytes(c->recipe, c->zero, n_dense, &sh->wd, &sh->gd, &sh->od);
	llmsim_train_state_bytes(c->recipe, c->zero, n_exp, &sh->we, &sh->ge, &sh->oe);
	train_fsdp_state_bytes(c, n_dense, &sh->wd, &sh->gd, &sh->od); /* a stack's FSDP kind */
	train_fsdp_state_bytes(c, n_exp, &sh->we, &sh->ge, &sh->oe);
	sh->per_layer = train_act_per_layer(g, m, c, &sh->ad, &sh->transient);
	sh->T = (double)c->micro_batch * c->seq / c->cp;
	sh->other = train_allow_bytes(c) + train_p2p_buffer_bytes(m, c, sh->T) +
		    2 * cp_kv_bytes(m, c);
}

/* What the split and the schedule give one rank, whatever the bytes. */
static void rank_terms(const struct train_pp_split *s, int64_t microbatches, int rank,
		       struct train_pp_rank_terms *t)
{
	double w[64], most = 0; /* layers of each chunk (chunks <= 64: plan.h, config) */
	for (int j = 0; j < s->v && j < 64; j++) {
		w[j] = train_pp_split_chunk(s, rank, j, NULL, NULL);
		most = fmax(most, w[j]);
	}
	t->rank = rank;
	t->layers = train_pp_split_rank(s, rank, &t->emb, &t->head);
	t->most_chunk_layers = most;
	t->inflight_layers = llmsim_train_pp_peak_inflight(s->pp, s->v, microbatches, rank, w);
}

static void rank_memory(const struct train_geom *g, const struct llmsim_model *m,
			const struct llmsim_train_cfg *c, const struct rank_shared *sh,
			const struct train_pp_rank_terms *rt, struct llmsim_train_mem *mem)
{
	int e = rt->emb, h = rt->head;
	double t = c->tp;
	double head = g->lm_head > 0 ? g->lm_head : g->embedding;
	struct train_params p;
	train_params_layers(g, c, rt->layers, ((e ? g->embedding : 0) + (h ? head : 0)) / t, &p);

	memset(mem, 0, sizeof *mem);
	mem->pp_rank = rt->rank;
	mem->weights_bytes = sh->wd * p.dense + sh->we * p.expert;
	mem->grads_bytes = sh->gd * p.dense + sh->ge * p.expert;
	mem->optimizer_bytes = sh->od * p.dense + sh->oe * p.expert;
	if (c->zero == 2 && c->fsdp == LLMSIM_FSDP_NONE) {
		/* the largest chunk's FP32 gradients in their reduce-scatter */
		double chunk = fmax(rt->most_chunk_layers * p.layer, (e ? g->embedding : 0) / t);
		chunk = fmax(chunk, (h ? head : 0) / t);
		mem->grad_transient_bytes = 4 * chunk;
		mem->grads_bytes += mem->grad_transient_bytes;
	}
	mem->params_per_gpu = p.dense + p.expert;
	mem->trained_params_per_gpu = p.trained_dense + p.trained_expert;

	double layers = rt->inflight_layers;
	mem->act_offloaded_bytes = train_act_offloaded(c, layers, sh->per_layer);
	double act = layers * sh->per_layer - mem->act_offloaded_bytes + sh->transient;
	if (h)
		act += train_logits_bytes(m, c, sh->T);
	mem->act_per_layer_bytes = sh->ad;
	mem->act_in_flight_layers = layers;
	mem->activations_bytes = act;
	mem->other_bytes = sh->other + train_fsdp_buffer_bytes(c, p.layer);
	mem->total_bytes = mem->weights_bytes + mem->grads_bytes + mem->optimizer_bytes +
			   mem->activations_bytes + mem->other_bytes;
}

/* The terms of ranks 0, 1 and pp-1 (each once), from the memo if it holds
 * them. */
static const struct train_pp_memo_entry *shape_terms(const struct llmsim_model *m,
						     const struct llmsim_train_cfg *c,
						     int64_t microbatches,
						     struct train_pp_memo *memo,
						     struct train_pp_memo_entry *local)
{
	int v = train_pp_chunks(c);
	struct train_pp_memo_entry *e = local;
	if (memo) {
		unsigned h = (unsigned)c->pp * 131u + (unsigned)v * 17u + (unsigned)microbatches;
		e = &memo->e[h % TRAIN_PP_MEMO];
		if (e->pp == c->pp && e->v == v && e->microbatches == microbatches &&
		    e->layers == m->layers)
			return e;
	}
	struct train_pp_split s;
	train_pp_split(m, c, &s);
	const int ranks[] = {0, 1, c->pp - 1};
	e->layers = m->layers, e->pp = c->pp, e->v = v, e->microbatches = microbatches;
	e->nranks = 0;
	for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
		if (!i || ranks[i] != ranks[i - 1])
			rank_terms(&s, microbatches, ranks[i], &e->r[e->nranks++]);
	return e;
}

void train_memory_ranks(const struct train_geom *g, const struct llmsim_model *m,
			const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c,
			int64_t microbatches, struct train_pp_memo *memo,
			struct llmsim_train_mem *mem)
{
	struct train_pp_memo_entry local;
	const struct train_pp_memo_entry *e = shape_terms(m, c, microbatches, memo, &local);
	struct rank_shared sh;
	rank_shared(g, m, c, &sh);
	for (int i = 0; i < e->nranks; i++) {
		struct llmsim_train_mem x;
		rank_memory(g, m, c, &sh, &e->r[i], &x);
		if (!i || x.total_bytes > mem->total_bytes)
			*mem = x;
	}
	mem->hbm_bytes = gpu->hbm_bytes;
}
