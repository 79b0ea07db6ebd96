/*
 * trace_ops.c - the ops behind each NVTX op range of a decoder step: the
 * nodes of that name of the op graph (sim/graph.h) `llmsim infer` walks
 * for the step the enclosing phase range names, on one GPU.
 *
 * A program may run an op as one fused kernel or as plain PyTorch's
 * several (RoPE as rotate-half's seven kernels, SiLU then the multiply, K
 * and V copied one by one: struct llmsim_lowering's torch engine), and may
 * project Q, K, V (gate and up) with one GEMM or with several: the range's
 * kernel count tells which. Each phase's graph is built in those three
 * lowerings (fused, plain PyTorch, PyTorch with separate projections and
 * K/V expanded to the query heads) and the range takes the one whose
 * nodes of its name pair one-to-one with its kernels, else the fused
 * one's as a whole.
 */
#include "trace_analyze.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { LOWER_FUSED, LOWER_TORCH, LOWER_SPLIT, LOWER_COUNT };

struct llmsim_trace_graphs {
	const struct llmsim_model *m;
	char key[96];                     /* phase range name and kernels it was built for */
	int valid;
	struct llmsim_prefill_chunk ch;
	struct llmsim_graph g[LOWER_COUNT];
	/* one-token prefill and decode steps: the op names known */
	struct llmsim_graph known[2][LOWER_COUNT];
	int have_known;
};

static int build(struct llmsim_trace_graphs *tg, const char *phase_name,
		 const struct llmsim_trace_phase *ph, const char *fa, const char *fd,
		 struct llmsim_err *err);

void llmsim_trace_graphs_free(struct llmsim_trace_graphs *tg)
{
	free(tg);
}

/* The graph configuration of a phase with the attention kernels seen. */
static void phase_cfg(struct llmsim_trace_graphs *tg, const struct llmsim_trace_phase *ph,
		      const char *fa, const char *fd, int lower, struct llmsim_graph_cfg *c)
{
	llmsim_graph_cfg_init(c);
	c->attn = fa && !strcmp(fa, "flash3") ? LLMSIM_ATTN_FLASH3 : LLMSIM_ATTN_FLASH2;
	c->decode = fd && !strcmp(fd, "flash2") ? LLMSIM_DEC_FLASH2 : LLMSIM_DEC_FLASHDECODING;
	/* calib/torch/llama_steps.py: plain PyTorch, q and k roped as one */
	c->lower.engine = lower != LOWER_FUSED ? LLMSIM_ENGINE_TORCH : LLMSIM_ENGINE_FUSED;
	c->lower.rope_joint = lower != LOWER_FUSED;
	c->lower.split_qkv = c->lower.split_gate_up = c->lower.gqa_expand = lower == LOWER_SPLIT;
	c->logits = ph->batch;
	if (ph->decode) {
		c->decode_seqs = ph->batch;
		c->q_len = ph->new_tokens;
		c->decode_kv_len = (double)ph->context;
	} else {
		tg->ch = (struct llmsim_prefill_chunk){.tokens = ph->new_tokens,
						       .context = ph->context - ph->new_tokens,
						       .count = ph->batch};
		c->prefill = &tg->ch;
		c->nprefill = 1;
	}
}

static int build(struct llmsim_trace_graphs *tg, const char *phase_name,
		 const struct llmsim_trace_phase *ph, const char *fa, const char *fd,
		 struct llmsim_err *err)
{
	char key[96];
	snprintf(key, sizeof key, "%.64s|%s|%s", phase_name, fa ? fa : "", fd ? fd : "");
	if (tg->valid && !strcmp(key, tg->key))
		return 0;
	tg->valid = 0;
	for (int l = 0; l < LOWER_COUNT; l++) {
		struct llmsim_graph_cfg c;
		phase_cfg(tg, ph, fa, fd, l, &c);
		int rc = llmsim_graph_build(tg->m, &c, &tg->g[l], err);
		if (rc)
			return rc;
	}
	snprintf(tg->key, sizeof tg->key, "%s", key);
	tg->valid = 1;
	return 0;
}

/* The nodes of the op `name` in graph g: the first run of consecutive
 * nodes of that name (an op's kernels; a layer's second residual is the
 * same op as its first) in the first section holding one (a model with
 * dense and MoE layers: the dense layer's), no collectives. */
static int named(const struct llmsim_graph *g, const char *name, const struct llmsim_gnode **out,
		 int max)
{
	static const enum llmsim_gsec order[] = {LLMSIM_SEC_PRE, LLMSIM_SEC_DENSE, LLMSIM_SEC_MOE,
						 LLMSIM_SEC_POST};
	for (size_t s = 0; s < sizeof order / sizeof order[0]; s++) {
		int n = 0;
		for (int i = 0; i < g->n; i++) {
			const struct llmsim_gnode *x = &g->node[i];
			if (x->sec != order[s] || (x->role & LLMSIM_GN_COMM))
				continue;
			if (!strcasecmp(x->name, name)) {
				if (n < max)
					out[n] = x;
				n++;
			} else if (n) {
				break; /* the run ended */
			}
		}
		if (n)
			return n < max ? n : max;
	}
	return 0;
}

int llmsim_trace_graphs_new(const struct llmsim_model *m, struct llmsim_trace_graphs **out)
{
	struct llmsim_trace_graphs *tg = calloc(1, sizeof *tg);
	*out = tg;
	if (!tg)
		return LLMSIM_ENOMEM;
	tg->m = m;
	/* the names of a one-token prefill's and decode's ops, every lowering
	 * (a model the graph cannot build knows none: all unmatched) */
	const struct llmsim_trace_phase ref[2] = {
		{.decode = 0, .batch = 1, .new_tokens = 1, .context = 1},
		{.decode = 1, .batch = 1, .new_tokens = 1, .context = 2},
	};
	tg->have_known = 1;
	for (int p = 0; p < 2 && tg->have_known; p++)
		for (int l = 0; l < LOWER_COUNT && tg->have_known; l++) {
			struct llmsim_graph_cfg c;
			phase_cfg(tg, &ref[p], NULL, NULL, l, &c);
			tg->have_known = llmsim_graph_build(m, &c, &tg->known[p][l], NULL) == 0;
		}
	return 0;
}

int llmsim_trace_op_known(const struct llmsim_trace_graphs *tg, const char *name)
{
	const struct llmsim_gnode *x[1];
	if (!tg || !tg->have_known)
		return 0;
	for (int p = 0; p < 2; p++)
		for (int l = 0; l < LOWER_COUNT; l++)
			if (named(&tg->known[p][l], name, x, 1))
				return 1;
	return 0;
}

int llmsim_trace_ops(struct llmsim_trace_graphs *tg, const char *phase_name,
		     const struct llmsim_trace_phase *ph, const char *fa, const char *fd,
		     const char *name, int nkernels, const struct llmsim_gnode **ops, int max,
		     int *per_kernel, struct llmsim_err *err)
{
	int rc = build(tg, phase_name, ph, fa, fd, err);
	if (rc)
		return -1;
	int n[LOWER_COUNT];
	const struct llmsim_gnode *tmp[LOWER_COUNT][LLMSIM_TRACE_OPS_MAX];
	for (int l = 0; l < LOWER_COUNT; l++)
		n[l] = named(&tg->g[l], name, tmp[l], LLMSIM_TRACE_OPS_MAX);
	/* the lowering whose ops pair with the kernels: plain PyTorch's first
	 * (its decompositions), then the fused, then separate projections */
	static const int pref[] = {LOWER_TORCH, LOWER_FUSED, LOWER_SPLIT};
	int pick = -1;
	for (int i = 0; i < LOWER_COUNT && pick < 0; i++)
		if (n[pref[i]] == nkernels)
			pick = pref[i];
	*per_kernel = pick >= 0;
	/* as a whole: the lowering with the most ops that the kernels can
	 * hold (a program's extra kernels: a slice copy, a cast), else the
	 * fewest; plain PyTorch's first on a tie (the programs traced are) */
	for (int i = 0; i < LOWER_COUNT && !*per_kernel; i++) {
		int l = pref[i];
		if (!n[l])
			continue;
		if (pick < 0 || (n[pick] > nkernels ? n[l] < n[pick]
						    : n[l] <= nkernels && n[l] > n[pick]))
			pick = l;
	}
	if (pick < 0)
		return -1;
	int k = n[pick] < max ? n[pick] : max;
	for (int i = 0; i < k; i++)
		ops[i] = tmp[pick][i];
	return k;
}
