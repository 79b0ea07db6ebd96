/*
 * step.c - inference's walk of the op graph (sim/graph.h): one engine step
 * on one replica, every op priced by llmsim_predict, each section counted
 * as often as it runs (its dense and MoE layers, the embedding and head
 * once, pp - 1 activation sends: the pipeline's latency), and the kernel
 * times added up into the step's wall time: back to back with the dependent
 * kernels' gap under a CUDA graph, or paced by the host's launches in
 * eager mode.
 */
#include "infer.h"
#include "sim/timeline.h"

#include <math.h>
#include <string.h>

/* The graph of a step under cfg. */
static void graph_cfg(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
		      struct llmsim_graph_cfg *g)
{
	const struct llmsim_gpu *gpu = cfg->gpu;
	int gpn = llmsim_gpu_nvlink_domain(gpu) > 0 ? llmsim_gpu_nvlink_domain(gpu) : 8;
	llmsim_graph_cfg_init(g);
	g->work = LLMSIM_WORK_INFER;
	g->tp = cfg->tp;
	g->ep = cfg->ep;
	g->ep_in_tp = 1; /* experts spread over the TP ranks, which share the tokens */
	g->tp_nodes = llmsim_group_nodes(gpn, cfg->tp, 1);
	g->ep_nodes = llmsim_group_nodes(gpn, cfg->ep, 1);
	/* consecutive stages sit tp ranks apart */
	g->pp_nodes = cfg->tp >= gpn ? 2 : 1;
	llmsim_infer_gemm_dtypes(cfg, &g->math, &g->weights);
	g->act = cfg->act_dtype;
	g->kv = cfg->kv_dtype;
	switch (cfg->attn) {
	case LLMSIM_AC_NAIVE:
		g->attn = LLMSIM_ATTN_NAIVE, g->decode = LLMSIM_DEC_NAIVE;
		break;
	case LLMSIM_AC_FLASH2:
		g->attn = LLMSIM_ATTN_FLASH2, g->decode = LLMSIM_DEC_FLASH2;
		break;
	case LLMSIM_AC_FLASH3:
		g->attn = LLMSIM_ATTN_FLASH3, g->decode = LLMSIM_DEC_FLASHDECODING;
		break;
	case LLMSIM_AC_SDPA:
		g->attn = LLMSIM_ATTN_FLASH2, g->decode = LLMSIM_DEC_FLASHDECODING;
		break;
	case LLMSIM_AC_CUDNN:
		g->attn = LLMSIM_ATTN_FLASH3, g->decode = LLMSIM_DEC_FLASHDECODING;
		break;
	case LLMSIM_AC_SDPA_MATH:
		g->attn = LLMSIM_ATTN_SDPA_MATH, g->decode = LLMSIM_DEC_NAIVE;
		break;
	case LLMSIM_AC_HF_EAGER:
		g->attn = LLMSIM_ATTN_HF_EAGER, g->decode = LLMSIM_DEC_NAIVE;
		break;
	default:
		g->attn = LLMSIM_ATTN_FLASH2, g->decode = LLMSIM_DEC_PAGED;
		break;
	}
	g->block_size = cfg->block_size;
	g->lower = cfg->lower;
	g->operand_data = cfg->operand_data;
	g->prefill = s->prefill;
	g->nprefill = s->nprefill;
	g->decode_seqs = s->decode_seqs;
	g->q_len = s->q_len > 0 ? s->q_len : 1;
	g->decode_kv_len = s->decode_kv_len;
	g->logits = s->logits > 0 ? s->logits : 0;
	g->parts = s->parts;
	if (s->layers > 0 && !s->ends)
		g->sections = 1u << LLMSIM_SEC_DENSE | 1u << LLMSIM_SEC_MOE;
}

/* Wall time of the kernel sequence. Graph: kernels back to back, each
 * dependent one starting the GPU's gap inside a step after the one before
 * (step_kernel_gap_s). Eager: the same gap, and the host issues kernels
 * one by one (eager_host_s each, through HF's modules too); the GPU starts
 * a kernel when both it and its launch are ready, so a run of small kernels is paced by the host,
 * while a long kernel lets the host run ahead. */
/* The kernels in the order the step runs them (sections in turn, each
 * run `mult` times), from the GPU's time 0; eager: the host's pacing as
 * wall_time says. Each node run goes on tl's track when tl is given (its
 * first kernel's start to its last one's end). Returns the last end. */
static double walk(const struct llmsim_infer_cfg *cfg, const struct llmsim_graph *g,
		   const double *mult, const struct llmsim_pred *p, struct llmsim_timeline *tl,
		   int track, double t0)
{
	const struct llmsim_infer_params *pp = &cfg->params;
	double gap = cfg->gpu->param[LLMSIM_PARAM_STEP_KERNEL_GAP_S];
	int eager = cfg->runtime != LLMSIM_RT_GRAPH;
	double host = pp->eager_host_s;
	double cpu = 0, gpu = 0;
	for (int s = 0; s < LLMSIM_SEC_COUNT; s++)
		for (int64_t r = 0; r < (int64_t)mult[s]; r++)
			for (int i = 0; i < g->n; i++) {
				const struct llmsim_gnode *n = &g->node[i];
				if (n->sec != (enum llmsim_gsec)s)
					continue;
				int kernels = p[i].kernels > 0 ? p[i].kernels : 1;
				double start = gpu;
				if (eager) {
					double per = p[i].time_s / kernels;
					for (int k = 0; k < kernels; k++) {
						cpu += host;
						gpu = fmax(gpu + gap, cpu) + per;
						if (!k)
							start = gpu - per;
					}
				} else { /* a graph: the gap before each kernel */
					start = gpu + n->count * kernels * gap;
					gpu = start + n->count * p[i].time_s;
				}
				if (tl) {
					struct llmsim_tl_event *e = llmsim_tl_add(
						tl, track, "kernel", t0 + start, gpu - start, "%s", n->name);
					if (s == LLMSIM_SEC_DENSE || s == LLMSIM_SEC_MOE)
						llmsim_tl_arg(e, "layer", (double)r);
					llmsim_tl_arg(e, "kernels", (double)(n->count * kernels));
				}
			}
	return gpu;
}

/* Wall time of the kernel sequence. Graph: kernels back to back, each
 * dependent one starting the GPU's gap inside a step after the one before
 * (step_kernel_gap_s). Eager: the same gap, and the host issues kernels
 * one by one (eager_host_s each, through HF's modules too); the GPU starts
 * a kernel when both it and its launch are ready, so a run of small kernels is paced by the host,
 * while a long kernel lets the host run ahead. */
static double wall_time(const struct llmsim_infer_cfg *cfg, const struct llmsim_graph *g,
			const double *mult, const struct llmsim_pred *p,
			const struct llmsim_step_cost *cost)
{
	double gap = cfg->gpu->param[LLMSIM_PARAM_STEP_KERNEL_GAP_S];
	if (cfg->runtime == LLMSIM_RT_GRAPH)
		return cost->gpu_s + (double)cost->kernels * gap;
	return walk(cfg, g, mult, p, NULL, 0, 0);
}

/* Each section's runs in the step: its layers (the first `layers`, or
 * all), the ends once, the sends between stages. */
static void multiplicities(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
			   double mult[LLMSIM_SEC_COUNT])
{
	const struct llmsim_model *m = cfg->model;
	int layers = s->layers > 0 ? s->layers : m->layers;
	int moe = llmsim_model_moe_layers(m, 0, layers);
	int ends = s->layers <= 0 || s->ends;
	mult[LLMSIM_SEC_DENSE] = layers - moe;
	mult[LLMSIM_SEC_MOE] = moe;
	mult[LLMSIM_SEC_PRE] = mult[LLMSIM_SEC_POST] = ends;
	mult[LLMSIM_SEC_P2P] = ends ? cfg->pp - 1 : 0;
}

int llmsim_infer_step_ops(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
			  struct llmsim_graph *g, struct llmsim_pred *pred,
			  double mult[LLMSIM_SEC_COUNT], struct llmsim_step_cost *cost,
			  struct llmsim_err *err)
{
	memset(cost, 0, sizeof *cost);
	cost->load_duty = cfg->load_duty;
	cost->load_rho = cfg->load_duty > 0 ? cfg->load_rho : 0;
	struct llmsim_graph_cfg gc;
	graph_cfg(cfg, s, &gc);
	cost->tokens = llmsim_graph_tokens(&gc);
	int rc = llmsim_graph_build(cfg->model, &gc, g, err);
	if (rc || cost->tokens <= 0)
		return rc;
	multiplicities(cfg, s, mult);
	for (int i = 0; i < g->n; i++) {
		const struct llmsim_gnode *n = &g->node[i];
		struct llmsim_pred *p = &pred[i];
		double k = mult[n->sec] * n->count;
		if (!(k > 0)) { /* a section the step does not run (pp = 1: no sends) */
			memset(p, 0, sizeof *p);
			continue;
		}
		if ((rc = llmsim_graph_price(cfg->gpu, n, cfg->load_duty, cfg->load_rho, p, err)))
			return rc;
		int kernels = p->kernels > 0 ? p->kernels : 1;
		cost->gpu_s += k * p->time_s;
		cost->sm_clock_hz += k * p->time_s * p->sm_clock_hz;
		if (n->op.kind == LLMSIM_OP_COLLECTIVE)
			cost->comm_s += k * p->time_s;
		cost->flops += k * p->flops;
		cost->hbm_bytes += k * p->hbm_bytes;
		cost->bytes[n->cat] += k * p->hbm_bytes;
		if ((unsigned)p->bound < LLMSIM_BOUND_COUNT)
			cost->time_by_bound_s[p->bound] += k * p->time_s;
		cost->workspace_bytes = fmax(cost->workspace_bytes, p->workspace_bytes);
		cost->kernels += (int64_t)k * kernels;
	}
	cost->sm_clock_hz = cost->gpu_s > 0 ? cost->sm_clock_hz / cost->gpu_s : 0;
	cost->time_s = wall_time(cfg, g, mult, pred, cost);
	return 0;
}

int llmsim_infer_step(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
		      struct llmsim_step_cost *cost, struct llmsim_err *err)
{
	/* large: kept off the stack, one per thread */
	static _Thread_local struct llmsim_graph g;
	static _Thread_local struct llmsim_pred p[LLMSIM_GRAPH_MAX];
	double mult[LLMSIM_SEC_COUNT];
	return llmsim_infer_step_ops(cfg, s, &g, p, mult, cost, err);
}

int llmsim_infer_step_trace(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
			    struct llmsim_timeline *tl, int track, double start_s,
			    struct llmsim_err *err)
{
	static _Thread_local struct llmsim_graph g;
	static _Thread_local struct llmsim_pred p[LLMSIM_GRAPH_MAX];
	double mult[LLMSIM_SEC_COUNT];
	struct llmsim_step_cost cost;
	int rc = llmsim_infer_step_ops(cfg, s, &g, p, mult, &cost, err);
	if (!rc)
		walk(cfg, &g, mult, p, tl, track, start_s);
	return rc;
}

enum llmsim_bound llmsim_step_bound(const struct llmsim_step_cost *c, double *share)
{
	int best = 0;
	double tot = 0;
	for (int b = 0; b < LLMSIM_BOUND_COUNT; b++) {
		tot += c->time_by_bound_s[b];
		if (c->time_by_bound_s[b] > c->time_by_bound_s[best])
			best = b;
	}
	if (share)
		*share = tot > 0 ? c->time_by_bound_s[best] / tot : 0;
	return (enum llmsim_bound)best;
}
