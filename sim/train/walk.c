/*
 * walk.c - training's walk of the op graph (sim/graph.h): one micro-batch
 * on one GPU, every op priced by llmsim_predict (once per distinct op,
 * through the context's cache), summed per section into the costs the
 * step combines (step.c), under training's policies:
 *  - TP forward collectives are exposed; a column point's backward
 *    collective overlaps the weight-gradient GEMM the graph pairs it with
 *    (Megatron's asynchronous TP all-reduce), what exceeds it is exposed;
 *    a row point's backward collective is exposed (no TP-comm overlap);
 *    by stack (train.h, tp_policy_of): megatron-2021 exposes the column
 *    point's too, megatron-2022 adds the SP re-all-gather beside the
 *    data-gradient GEMM and charges each overlap the SMs its NCCL channels
 *    take from the GEMM;
 *  - pipeline sends: megatron-2021/2022 split each over the TP ranks and
 *    all-gather it on arrival (the scatter/gather, graph.c's p2p);
 *  - EP all-to-alls are exposed;
 *  - a CP ring step overlaps the attention it feeds (the load-balanced
 *    ring), what exceeds it is exposed;
 *  - the attention core (and its dropout) is what selective
 *    recomputation re-runs (step.c adds it, or the whole forward for
 *    full recomputation);
 *  - model FLOPs count routed experts at their balanced load.
 * The layers of one step run at the one clock the power limit allows
 * their load: priced at the burst clock, their load measured, priced
 * again in it (sim/predict.c).
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

void train_graph_cfg(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     unsigned sections, struct llmsim_graph_cfg *g)
{
	int gpn = llmsim_gpu_nvlink_domain(&ctx->gpu); /* a collective's nodes are NVLink domains */
	llmsim_graph_cfg_init(g);
	g->work = LLMSIM_WORK_TRAIN;
	g->tp = c->tp;
	g->sp = c->sequence_parallel && c->tp > 1;
	g->cp = c->cp;
	g->ep = c->ep;
	g->ep_in_tp = 0; /* EP over the data-parallel ranks */
	g->tp_nodes = llmsim_group_nodes(gpn, c->tp, 1);
	g->ep_nodes = llmsim_group_nodes(gpn, c->ep, c->tp);
	/* ring neighbours sit tp ranks apart */
	g->cp_nodes = llmsim_group_nodes(gpn, 2, c->tp) > 1 ? 2 : 1;
	if (c->recipe == LLMSIM_RECIPE_LLAMA3) { /* all-gather CP: the whole group */
		g->cp_allgather = 1;
		g->cp_nodes = llmsim_group_nodes(gpn, c->cp, c->tp);
	}
	/* consecutive stages sit tp * cp * dp ranks apart */
	g->pp_nodes = c->tp * c->cp * c->dp >= gpn ? 2 : 1;
	g->pp_scatter = c->stack != LLMSIM_STACK_CORE;
	g->sp_regather = c->stack == LLMSIM_STACK_MEGATRON_2022;
	g->math = g->weights = c->dtype;
	g->act = llmsim_graph_act_dtype(c->dtype);
	g->attn = c->attn;
	g->micro_batch = c->micro_batch;
	g->seq = c->seq;
	g->lora_rank = c->lora_rank;
	g->moe_imbalance = c->moe_imbalance;
	g->sections = sections;
	if (c->engine == LLMSIM_ENGINE_TORCH) {
		/* fp32 parameters (the residual stream too) under autocast to the
		 * matmul type */
		g->lower.engine = LLMSIM_ENGINE_TORCH;
		g->weights = LLMSIM_DT_FP32;
	}
}

/* Every node's time (count included), model FLOPs and link bytes. */
static int price_all(struct llmsim_train_ctx *ctx, const struct llmsim_graph *g,
		     struct train_priced *pr, struct llmsim_err *err)
{
	for (int i = 0; i < g->n; i++) {
		const struct llmsim_gnode *n = &g->node[i];
		struct price p;
		int rc = train_price(ctx, &n->op, &p, err);
		if (rc)
			return rc;
		pr[i].t = p.time_s * n->count;
		pr[i].flops = p.flops * n->count * n->flops_scale;
		pr[i].link_bytes = p.link_bytes * n->count;
		pr[i].kernels = p.kernels;
	}
	return 0;
}

static struct layer_cost *cost_of(struct shape_cost *sc, enum llmsim_gsec s)
{
	switch (s) {
	case LLMSIM_SEC_PRE: return &sc->emb;
	case LLMSIM_SEC_DENSE: return &sc->dense;
	case LLMSIM_SEC_MOE: return &sc->moe;
	case LLMSIM_SEC_POST: return &sc->head;
	default: return NULL;
	}
}

/* How a TP collective that can hide behind a GEMM is charged, by stack:
 * core hides it (what exceeds the GEMM is exposed); megatron-2021 exposes
 * it whole (no async all-reduce in Megatron-LM v2); megatron-2022 hides it
 * but the GEMM runs meanwhile on the SMs NCCL's channels leave it (one
 * block per channel, up to collective_max_channels of the large messages
 * of TP), so the overlap costs the overlapped time x channels / SMs. */
struct tp_policy {
	int hide;
	double contention; /* of the overlapped time, added */
};

double train_overlap_contention(const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c)
{
	if (c->stack == LLMSIM_STACK_CORE || !(gpu->sms > 0))
		return 0;
	return fmin(1.0, gpu->param[LLMSIM_PARAM_COLLECTIVE_MAX_CHANNELS] / gpu->sms);
}

static void tp_policy_of(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 struct tp_policy *p)
{
	p->hide = c->stack != LLMSIM_STACK_MEGATRON_2021;
	p->contention = p->hide ? train_overlap_contention(&ctx->gpu, c) : 0;
}

/* The exposed time of a collective of time t beside a GEMM of time gemm. */
double train_tp_overlap_s(double t, double gemm, int hide, double contention)
{
	if (!hide)
		return t;
	return fmax(0, t - gemm) + contention * fmin(t, gemm);
}

/* The recompute modules (train.h) a forward node belongs to, by what the
 * graph says of it (role, name): the attention core; the input and pre-MLP
 * norms; MLA's up-projections; the routed experts, their activation, the
 * router and permutation (the MoE layer); the shared experts (in the MoE
 * layer too); a dense layer's MLP. */
static unsigned module_of(const struct llmsim_gnode *n, int moe_section)
{
	const char *s = n->name;
	unsigned m = 0;
	int act = strstr(s, "silu") || strstr(s, "gelu") || strstr(s, "act") || strstr(s, "swiglu");
	int ffn = strstr(s, "gate") || strstr(s, "up_proj") || strstr(s, "down_proj") || act;
	if (n->role & LLMSIM_GN_ATTN)
		m |= 1u << LLMSIM_RM_CORE_ATTN;
	if (!strcmp(s, "attn_norm") || !strcmp(s, "mlp_norm"))
		m |= 1u << LLMSIM_RM_LAYERNORM;
	if (!strncmp(s, "q_b_proj", 8) || !strncmp(s, "kv_b_proj", 9))
		m |= 1u << LLMSIM_RM_MLA_UP_PROJ;
	if (n->role & LLMSIM_GN_EXPERT) {
		m |= 1u << LLMSIM_RM_MOE;
		if (act)
			m |= 1u << LLMSIM_RM_MOE_ACT;
	} else if (!strncmp(s, "shared.", 7)) {
		m |= 1u << LLMSIM_RM_MOE | 1u << LLMSIM_RM_SHARED_EXPERTS;
	} else if (!strncmp(s, "router", 6) || !strncmp(s, "moe_", 4)) {
		m |= 1u << LLMSIM_RM_MOE;
	} else if (ffn && !moe_section) {
		m |= 1u << LLMSIM_RM_MLP;
	}
	return m;
}

/* Sum one priced graph into the section costs. */
static void accumulate(const struct llmsim_graph *g, const struct train_priced *pr,
		       const struct tp_policy *pol, struct shape_cost *sc)
{
	for (int i = 0; i < g->n; i++) {
		const struct llmsim_gnode *n = &g->node[i];
		struct layer_cost *lc = cost_of(sc, n->sec);
		if (!lc)
			continue;
		int fwd = n->phase == LLMSIM_PH_FWD;
		double t = pr[i].t, hidden = n->hides >= 0 ? pr[n->hides].t : 0;
		if (n->role & LLMSIM_GN_TP) {
			lc->tp_bytes += pr[i].link_bytes;
			if (fwd)
				lc->tp_fwd_s += t;
			else if (n->hides >= 0) {
				lc->tp_bwd_s += train_tp_overlap_s(t, hidden, pol->hide,
								   pol->contention);
				lc->tp_bwd_hidden_s += pol->hide ? fmin(t, hidden) : 0;
			} else {
				lc->tp_bwd_s += t;
			}
		} else if (n->role & LLMSIM_GN_EP) {
			lc->ep_bytes += pr[i].link_bytes;
			*(fwd ? &lc->ep_fwd_s : &lc->ep_bwd_s) += t;
			if (fwd) /* the MoE layer recomputed dispatches again */
				lc->mod_fwd_s[LLMSIM_RM_MOE] += t;
		} else if (n->role & LLMSIM_GN_CP) {
			lc->cp_bytes += n->op.u.coll.bytes * n->count;
			*(fwd ? &lc->cp_fwd_exposed_s : &lc->cp_bwd_exposed_s) += fmax(0, t - hidden);
			*(fwd ? &lc->cp_fwd_hidden_s : &lc->cp_bwd_hidden_s) += fmin(t, hidden);
		} else if (fwd) {
			lc->fwd_s += t;
			lc->fwd_flops += pr[i].flops;
			if (n->role & LLMSIM_GN_ATTN) {
				lc->attn_core_fwd_s += t;
				lc->attn_core_fwd_flops += pr[i].flops;
			}
			unsigned mods = module_of(n, lc == &sc->moe);
			for (int k = 0; mods && k < LLMSIM_RM_COUNT; k++)
				if (mods & 1u << k) {
					lc->mod_fwd_s[k] += t;
					lc->mod_fwd_flops[k] += pr[i].flops;
				}
		} else {
			lc->bwd_s += t;
			lc->bwd_flops += pr[i].flops;
			if (n->role & LLMSIM_GN_WGRAD)
				lc->wgrad_s += t;
		}
	}
}

static int build(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		 unsigned sections, struct llmsim_err *err)
{
	struct llmsim_graph_cfg gc;
	train_graph_cfg(ctx, c, sections, &gc);
	return llmsim_graph_build(&ctx->model, &gc, &ctx->graph, err);
}

/* The built graph priced at the context's load, into sc. */
static int shape_cost_at(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 struct shape_cost *sc, struct llmsim_err *err)
{
	memset(sc, 0, sizeof *sc);
	int rc = price_all(ctx, &ctx->graph, ctx->priced, err);
	if (rc)
		return rc;
	struct tp_policy pol;
	tp_policy_of(ctx, c, &pol);
	accumulate(&ctx->graph, ctx->priced, &pol, sc);
	int64_t T = (int64_t)c->micro_batch * c->seq / c->cp;
	sc->tp_msg_bytes = (double)T * ctx->model.hidden * 2;
	return 0;
}

int train_p2p_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		   struct shape_cost *sc, struct llmsim_err *err)
{
	sc->p2p_s = sc->p2p_bytes = 0;
	if (c->pp <= 1)
		return 0;
	const struct llmsim_graph *g = &ctx->graph;
	int rc = build(ctx, c, 1u << LLMSIM_SEC_P2P, err);
	if (!rc)
		rc = price_all(ctx, g, ctx->priced, err);
	for (int i = 0; !rc && i < g->n; i++) {
		sc->p2p_s += ctx->priced[i].t;
		if (g->node[i].op.u.coll.kind == LLMSIM_COLL_SENDRECV)
			sc->p2p_bytes += g->node[i].op.u.coll.bytes; /* what crosses stages */
	}
	return rc;
}

/* The tensor intensity of the layers' load (op.load_rho): their FLOP rate
 * per GPU over the 16-bit tensor peak at the burst clock, 8-bit FLOPs
 * weighted by their energy, rounded up to 1/64 so that op prices stay
 * cached across configurations; 0 without a power-capped clock. */
static double layers_rho(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 const struct shape_cost *sc)
{
	if (!(llmsim_gpu_power_cap_hz(&ctx->gpu) > 0))
		return 0;
	double flops = sc->dense.fwd_flops + sc->dense.bwd_flops + sc->moe.fwd_flops +
		       sc->moe.bwd_flops;
	double busy_s = sc->dense.fwd_s + sc->dense.bwd_s + sc->moe.fwd_s + sc->moe.bwd_s;
	double rho = ceil(llmsim_tensor_rho(&ctx->gpu, c->dtype, flops, busy_s) * 64) / 64;
	return rho < 1 ? rho : 1;
}

/* A training step keeps the GPU busy for seconds: its ops run at the one
 * clock the power limit allows its load (sim/predict.c). The layers are
 * priced at the burst clock, their load measured, and priced again in it. */
int train_shape_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     struct shape_cost *sc, struct llmsim_err *err)
{
	/* a load given (c->load_rho) prices once in it; lone kernels at the
	 * burst clock (load lone) once outside any */
	ctx->load_rho = c->load == LLMSIM_LOAD_LONE ? 0 : c->load_rho;
	ctx->operand_data = c->operand_data;
	int rc = build(ctx, c,
		       1u << LLMSIM_SEC_PRE | 1u << LLMSIM_SEC_DENSE | 1u << LLMSIM_SEC_MOE |
			       1u << LLMSIM_SEC_POST,
		       err);
	if (!rc)
		rc = shape_cost_at(ctx, c, sc, err);
	sc->load_rho = ctx->load_rho;
	double rho = rc || c->load == LLMSIM_LOAD_LONE || c->load_rho > 0 ? 0 : layers_rho(ctx, c, sc);
	if (rho > 0) {
		ctx->load_rho = rho;
		rc = shape_cost_at(ctx, c, sc, err);
		sc->load_rho = rho;
	}
	/* the sends of the step, in its load */
	if (!rc)
		rc = train_p2p_cost(ctx, c, sc, err);
	ctx->load_rho = 0;
	return rc;
}

int llmsim_train_step_ops(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  double load_rho, struct llmsim_graph *g, struct llmsim_pred *pred,
			  struct llmsim_err *err)
{
	struct llmsim_graph_cfg gc;
	train_graph_cfg(ctx, c, 0, &gc);
	int rc = llmsim_graph_build(&ctx->model, &gc, g, err);
	for (int i = 0; !rc && i < g->n; i++)
		rc = llmsim_graph_price(&ctx->gpu, &g->node[i], load_rho > 0 ? 1 : 0, load_rho,
					&pred[i], err);
	return rc;
}

double train_load_clock(const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c, double x)
{
	/* a tensor-bound GEMM in the load: the clock the power law gives it */
	struct llmsim_op op;
	struct llmsim_pred p;
	memset(&op, 0, sizeof op);
	op.kind = LLMSIM_OP_GEMM;
	op.dtype = op.u.gemm.b_dtype = c->dtype;
	op.u.gemm.m = op.u.gemm.n = op.u.gemm.k = 8192;
	op.u.gemm.batch = 1;
	op.load_duty = x > 0 ? 1 : 0;
	op.load_rho = x;
	op.operand_data = c->operand_data;
	return llmsim_predict(gpu, &op, &p, NULL) ? 0 : p.sm_clock_hz;
}
