/*
 * step.c - one training step: data-parallel and ZeRO communication, the
 * optimizer, the pipeline schedule, and how they overlap.
 *
 * Overlap model (stated):
 *  - TP/SP and EP collectives are on the critical path (exposed).
 *  - CP ring KV passing overlaps the attention of the same layer.
 *  - ZeRO 0/1 (Megatron --overlap-grad-reduce): the gradient all-reduce
 *    (ZeRO-0) or reduce-scatter (ZeRO-1/2) runs bucket by bucket during
 *    the backward of the last micro-batch; what exceeds that backward, and
 *    at least the last bucket (40M parameters), is exposed. ZeRO-2 reduces
 *    after every micro-batch (gradients are sharded) with the same rule.
 *  - ZeRO 1/2 parameter all-gather after the optimizer overlaps the first
 *    micro-batch's forward of the next step (--overlap-param-gather), same
 *    rule.
 *  - ZeRO-3 (FSDP): each layer's parameters are all-gathered one layer
 *    ahead (forward and backward) and its gradients reduce-scattered
 *    during the next layer's backward: per layer, only what exceeds that
 *    layer's compute is exposed; every micro-batch gathers again.
 *  - DualPipe (train.h): each forward chunk's all-to-alls and sends overlap
 *    the backward chunk it is paired with, and the reverse: per
 *    micro-batch only what exceeds the pair's compute is exposed; the
 *    compute runs on the SMs the communication kernels leave.
 *  - Pipeline: 1F1B or interleaved; the bubble is (p-1)/v times one
 *    micro-batch's forward+backward of the slowest stage (the last: it
 *    holds the LM head); p2p sends between stages are exposed, v per
 *    micro-batch and direction for interleaving.
 *  - Tied embeddings with pp > 1: the embedding gradient all-reduce
 *    between the first and last stage is exposed (Megatron).
 *  - The optimizer (fused AdamW over this GPU's shard, fp32) runs after
 *    the last gradient reduction.
 *  - The stack (train.h): megatron-2021/2022 all-reduce the gradients
 *    after the last backward, whole (LocalDDP; cfg.ddp torch overlaps as
 *    above); 2021 reduces 16-bit gradients and adds each micro-batch's
 *    gradients into the accumulated ones (grad_accum_s, in every
 *    micro-batch's backward); both add the mixed-precision optimizer's
 *    passes (megatron_optimizer_extra_s). Pipeline sends with the
 *    scatter/gather and TP overlap are the walk's (walk.c, graph.c).
 *  - Offload (see offload_time): PCIe at 80% of its peak per direction,
 *    a link shared by gpus_per_host_link GPUs, the node's DRAM shared by
 *    its ranks; CPU Adam at cores x per-core rate, or DRAM-bound at 30 B
 *    per parameter, whichever is slower.
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

static double coll(struct llmsim_train_ctx *ctx, enum llmsim_coll_kind kind, double bytes,
		   int gpus, int nodes, double *sent, int *rc, struct llmsim_err *err)
{
	if (gpus <= 1 || bytes <= 0 || *rc)
		return 0;
	struct llmsim_op op;
	struct price p;
	llmsim_graph_coll_op(&op, kind, bytes, gpus, nodes, LLMSIM_DT_BF16);
	*rc = train_price(ctx, &op, &p, err);
	if (*rc)
		return 0;
	if (sent)
		*sent += p.link_bytes;
	return p.time_s;
}

static void offload_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 const struct train_params *p, struct dp_cost *dc);
static double pcie_s(const struct llmsim_gpu *g, int ranks, double bytes);

static double grad_elem_bytes(const struct llmsim_train_cfg *c)
{
	/* Megatron-LM v2 under fp16 (Narayanan et al. 2021) reduces the
	 * 16-bit gradients (accumulate_allreduce_grads_in_fp32 is forced on
	 * for bf16 only); megatron reduces fp32 main grads */
	if (c->stack == LLMSIM_STACK_MEGATRON_2021)
		return 2;
	return c->recipe == LLMSIM_RECIPE_ZERO ? 2 : 4;
}

/* The passes Megatron's mixed-precision optimizer makes over this GPU's
 * `params` before and around Adam (megatron-2021/2022 stacks; optimizer.py
 * of Megatron-LM v2/v3): with fp16 (2021) the 16-bit gradients copied
 * into the fp32 main gradients (2 B read, 4 written) and unscaled with
 * the inf check (4 read, 4 written); always the gradient norm of
 * clip_grad_norm_fp32 (multi_tensor_l2norm: 4 B read), and the zeroing of
 * the contiguous gradient buffer for the next step (zero_grad_buffer: a
 * memset of its 2 B (2021, fp16) or 4 B (2022, fp32 main grads) a
 * parameter, priced as the copy that moves the same bytes: half as many
 * elements read and written). Adam itself and the copy of the fp32 master
 * weights to the 16-bit ones are the AdamW op's. Returns their time. */
static double megatron_optimizer_extra_s(struct llmsim_train_ctx *ctx,
					 const struct llmsim_train_cfg *c, double params,
					 int *rc, struct llmsim_err *err)
{
	if (c->stack == LLMSIM_STACK_CORE || params < 1 || *rc)
		return 0;
	/* rows of 64 Ki parameters: the chunks multi_tensor_apply spreads */
	int64_t hidden = 65536, rows = (int64_t)ceil(params / hidden);
	struct llmsim_op op;
	struct price p;
	double t = 0;
	int fp16 = c->stack == LLMSIM_STACK_MEGATRON_2021;
	for (int pass = 0; pass < 4 && !*rc; pass++) {
		if (pass < 2 && !fp16)
			continue;
		memset(&op, 0, sizeof op);
		op.kind = LLMSIM_OP_ELEMENTWISE;
		op.dtype = pass == 0 || (pass == 3 && fp16) ? LLMSIM_DT_FP16 : LLMSIM_DT_FP32;
		op.u.ew.kind = pass == 2 ? LLMSIM_EW_REDUCE : LLMSIM_EW_COPY;
		op.u.ew.out_dtype = pass == 0 ? LLMSIM_DT_FP32 : 0;
		op.u.ew.tokens = pass == 3 ? (rows + 1) / 2 : rows;
		op.u.ew.hidden = hidden;
		op.u.ew.pass = LLMSIM_PASS_FWD;
		*rc = train_price(ctx, &op, &p, err);
		t += *rc ? 0 : p.time_s;
	}
	return t;
}

/* Megatron-LM v2 (megatron-2021) ends each micro-batch's backward by adding
 * every parameter's fresh gradient into the accumulated one: LocalDDP's
 * hook param.main_grad.add_(param.grad) (autograd's AccumulateGrad under
 * --DDP-impl torch), one element-wise add over the stage's `params` in the
 * 16-bit type (2 + 2 B read, 2 B written a parameter). Megatron-LM v3
 * (megatron-2022) fuses it into the weight-gradient GEMM, which
 * accumulates into the fp32 main gradient (gradient_accumulation_fusion):
 * not priced apart. Returns the add's time. */
static double grad_accum_s(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			   double params, int *rc, struct llmsim_err *err)
{
	if (c->stack != LLMSIM_STACK_MEGATRON_2021 || params < 1 || *rc)
		return 0;
	int64_t hidden = 65536;
	struct llmsim_op op;
	struct price p;
	memset(&op, 0, sizeof op);
	op.kind = LLMSIM_OP_ELEMENTWISE;
	op.dtype = LLMSIM_DT_FP16;
	op.u.ew.kind = LLMSIM_EW_ADD;
	op.u.ew.tokens = (int64_t)ceil(params / hidden);
	op.u.ew.hidden = hidden;
	op.u.ew.pass = LLMSIM_PASS_FWD;
	*rc = train_price(ctx, &op, &p, err);
	return *rc ? 0 : p.time_s;
}

int train_dp_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		  struct dp_cost *dc, struct llmsim_err *err)
{
	struct train_params p;
	int rc = 0;
	memset(dc, 0, sizeof *dc);
	train_params_per_gpu(&ctx->geom, &ctx->model, c, &p);
	int gpn = llmsim_gpu_nvlink_domain(&ctx->gpu);
	int D = c->dp * c->cp, De = D / (c->ep > 0 ? c->ep : 1);
	int nd = llmsim_group_nodes(gpn, D, c->tp);
	int ne = llmsim_group_nodes(gpn, De, c->tp * c->ep);
	double gb = grad_elem_bytes(c);
	double wb = c->recipe == LLMSIM_RECIPE_AMP ? 4 : 2;
	double trained = p.trained_dense + p.trained_expert;

	if (c->zero == 0) {
		dc->grad_sync_s = coll(ctx, LLMSIM_COLL_ALLREDUCE, p.trained_dense * gb, D, nd,
				       &dc->grad_bytes, &rc, err) +
				  coll(ctx, LLMSIM_COLL_ALLREDUCE, p.trained_expert * gb, De, ne,
				       &dc->grad_bytes, &rc, err);
	} else if (c->zero <= 2) {
		dc->grad_sync_s = coll(ctx, LLMSIM_COLL_REDUCESCATTER, p.trained_dense * gb, D,
				       nd, &dc->grad_bytes, &rc, err) +
				  coll(ctx, LLMSIM_COLL_REDUCESCATTER, p.trained_expert * gb, De,
				       ne, &dc->grad_bytes, &rc, err);
		dc->param_gather_s = coll(ctx, LLMSIM_COLL_ALLGATHER, p.trained_dense * wb, D,
					  nd, &dc->gather_bytes, &rc, err) +
				     coll(ctx, LLMSIM_COLL_ALLGATHER, p.trained_expert * wb, De,
					  ne, &dc->gather_bytes, &rc, err);
	} else {
		/* ZeRO-3: one layer's 16-bit weights gathered in forward and
		 * again in backward, its gradients reduce-scattered */
		double lw = p.layer * 2;
		double lg = (c->lora_rank ? p.trained_dense / train_stage_layers(&ctx->model, c)
					  : p.layer) * gb;
		double ag = coll(ctx, LLMSIM_COLL_ALLGATHER, lw, D, nd, &dc->z3_layer_bytes,
				 &rc, err);
		double ag2 = coll(ctx, LLMSIM_COLL_ALLGATHER, lw, D, nd, &dc->z3_layer_bytes,
				  &rc, err);
		double rs = coll(ctx, LLMSIM_COLL_REDUCESCATTER, lg, D, nd, &dc->z3_layer_bytes,
				 &rc, err);
		dc->z3_layer_fwd_s = ag;
		dc->z3_layer_bwd_s = ag2 + rs;
	}
	/* tied input/output embeddings live on the first and the last stage:
	 * Megatron all-reduces their gradients between the two (exposed) */
	if (ctx->model.tied_embeddings && c->pp > 1 && !c->lora_rank) {
		int stride = c->tp * c->cp * c->dp * (c->pp - 1);
		dc->emb_sync_s = coll(ctx, LLMSIM_COLL_ALLREDUCE,
				      (double)ctx->model.vocab * ctx->model.hidden / c->tp * gb, 2,
				      stride >= gpn ? 2 : 1, &dc->grad_bytes, &rc, err);
	}
	dc->bucket_frac = trained > 0 ? fmin(1.0, TRAIN_GRAD_BUCKET_PARAMS / trained) : 1;

	/* optimizer over this GPU's shard */
	double shard = c->zero >= 1 ? p.trained_dense / D + p.trained_expert / De : trained;
	offload_cost(ctx, c, &p, dc);
	if (shard >= 1 && !rc) {
		struct llmsim_op op;
		struct price pr;
		train_adamw_op(&op, shard);
		rc = train_price(ctx, &op, &pr, err);
		dc->optimizer_s = pr.time_s + megatron_optimizer_extra_s(ctx, c, shard, &rc, err);
	}
	dc->grad_accum_s = grad_accum_s(ctx, c, trained, &rc, err);
	dc->overlap_contention = train_overlap_contention(&ctx->gpu, c);
	return rc;
}

void train_adamw_op(struct llmsim_op *op, double params)
{
	memset(op, 0, sizeof *op);
	op->kind = LLMSIM_OP_ELEMENTWISE;
	op->dtype = LLMSIM_DT_FP32;
	op->u.ew.kind = LLMSIM_EW_ADAMW;
	op->u.ew.tokens = 1;
	op->u.ew.hidden = (int64_t)ceil(params);
	op->u.ew.pass = LLMSIM_PASS_FWD;
}

/* PCIe time of `bytes` moved by every rank of the node at once: this
 * GPU's share of its host link, or the node's DRAM, whichever is slower. */
static double pcie_s(const struct llmsim_gpu *g, int ranks, double bytes)
{
	double link = g->pcie_bytes_per_s * TRAIN_PCIE_FRACTION /
		      (g->gpus_per_host_link > 0 ? g->gpus_per_host_link : 1);
	double dram = g->host_memory_bytes_per_s / ranks;
	return bytes / fmin(link, dram);
}

/* Offload transfers and the CPU Adam step of one configuration. */
static void offload_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 const struct train_params *p, struct dp_cost *dc)
{
	const struct llmsim_gpu *g = &ctx->gpu;
	dc->has_host = g->has_host;
	if (!g->has_host)
		return;
	int D = c->dp * c->cp, De = D / (c->ep > 0 ? c->ep : 1);
	int ranks = c->gpus < g->gpus_per_node ? c->gpus : g->gpus_per_node;
	double ls = train_stage_layers(&ctx->model, c);
	/* the shard this rank updates (ZeRO partitions over DP even at
	 * stage 0 here: offload needs stage >= 1) */
	double upd = p->trained_dense / D + p->trained_expert / De;
	dc->off_shard_params = upd;
	dc->off_held_params = p->dense / D + p->expert / De;
	dc->off_grad_down_s = pcie_s(g, ranks, 2 * upd);
	dc->off_param_up_s = pcie_s(g, ranks, 2 * upd);
	dc->off_layer_up_s = pcie_s(g, ranks, 2 * p->layer / D);
	dc->off_layer_down_s = pcie_s(g, ranks, 2 * upd / ls);
	/* CPU Adam over the node's shards: the cores' rate, or DRAM traffic */
	double rate = fmin(g->cpu_cores * g->cpu_adam_params_per_s_per_core,
			   g->host_memory_bytes_per_s / TRAIN_CPU_ADAM_BYTES);
	dc->cpu_adam_s = ranks * upd / rate;
}

/* Exposed part of an overlapped transfer: what exceeds the window, and at
 * least the last bucket. */
static double exposed(double comm, double window, double last_frac)
{
	return fmax(comm - window, comm * last_frac);
}

/* The llama3 recipe's FP32 gradient reduce-scatter (FSDP's, one per model
 * chunk and micro-batch, Dubey et al. 2024 Sec. 3.3.4): each runs on the
 * DP link beside whatever the stage computes next, not only its own
 * micro-batch's backward. The window is the step from the first backward
 * on: all micro-batches' forward and backward and the bubble, less the
 * warm-up forwards of the rank with the most layers; the last layer's
 * transfer, after the last backward, is exposed in any case (FSDP wraps
 * each transformer layer). rs: one micro-batch's reduction of the stage. */
static double fsdp_rs_exposed(const struct llmsim_train_cfg *c, int64_t m, double rs, double tf,
			      double tb, double bubble, double ls)
{
	int v = train_pp_chunks(c);
	/* the rank of the most layers with the shortest window: rank 1 when
	 * the ends take a slot (rank 0 holds a layer fewer), else rank 0 */
	int rank = train_ends_in_slots(c) && c->pp > 2 ? 1 : 0;
	double warm = c->pp > 1 ? llmsim_train_pp_peak_inflight(c->pp, v, m, rank, NULL) - 1 : 0;
	double window = m * (tf + tb) + bubble - warm / v * tf;
	return exposed(m * rs, window, 1 / (m * (ls >= 1 ? ls : 1)));
}

double llmsim_train_dualpipe_bubble_s(int pp, double fb, double b, double w)
{
	return pp > 2 ? fmax(0, (pp / 2 - 1) * (fb + b - 3 * w)) : 0;
}

/* The ends of the pipeline: the first stage also runs the embedding, the
 * last the final norm, LM head and loss; with pp > 1 the slower of the
 * two is the critical stage (with pp = 1 one GPU runs both). */
static const struct layer_cost *end_stage(const struct llmsim_train_cfg *c,
					  const struct shape_cost *sc, struct layer_cost *sum)
{
	const struct layer_cost *E = &sc->emb, *H = &sc->head;
	if (c->pp > 1) {
		double te = E->fwd_s + E->bwd_s + E->tp_fwd_s + E->tp_bwd_s;
		double th = H->fwd_s + H->bwd_s + H->tp_fwd_s + H->tp_bwd_s;
		return te > th ? E : H;
	}
	memset(sum, 0, sizeof *sum);
	sum->fwd_s = E->fwd_s + H->fwd_s;
	sum->bwd_s = E->bwd_s + H->bwd_s;
	sum->fwd_flops = E->fwd_flops + H->fwd_flops;
	sum->bwd_flops = E->bwd_flops + H->bwd_flops;
	sum->tp_fwd_s = E->tp_fwd_s + H->tp_fwd_s;
	sum->tp_bwd_s = E->tp_bwd_s + H->tp_bwd_s;
	sum->tp_bytes = E->tp_bytes + H->tp_bytes;
	return sum;
}

/* ZeRO-3 per-layer transfers, prefetched one layer ahead: NVLink
 * collectives (nv) and PCIe (pcie, offload) run on different links, so
 * a layer's transfers take the longer of the two; beyond the layer's
 * compute they are exposed, and the first layer's are never hidden. */
static double z3_exposed(double nv, double pcie, double compute, double ls)
{
	return ls * fmax(0, fmax(nv, pcie) - compute / ls) + nv + pcie;
}

/* Offload: PCIe transfers not hidden and the CPU Adam step (stated model):
 *  - gradients stream to the host bucket by bucket during backward
 *    (ZeRO-1: the last micro-batch's; ZeRO-2: every micro-batch's, the
 *    host accumulates in fp32; ZeRO-3: per layer, in the layer pipeline);
 *  - after the last backward the node's CPU Adam runs, then (optimizer
 *    offload) the updated 16-bit shard is copied up; ZeRO-1/2 then
 *    all-gather it over NVLink as without offload. With params offload
 *    the update is written in host memory and nothing is copied up;
 *  - DPU (ZeRO-Offload Sec. 5): the step's Adam and upload overlap the
 *    next step's forward and backward; only what exceeds them is exposed.
 * The GPU optimizer time goes to 0. */
static void offload_time(const struct llmsim_train_cfg *c, const struct dp_cost *dc,
			 int64_t m, double ls, double tb, double z3f_off, double z3b_off,
			 struct llmsim_train_time *t, struct llmsim_train_comm *cm)
{
	int params = c->offload == LLMSIM_OFFLOAD_PARAMS;
	int64_t flushes = c->zero >= 2 ? m : 1;
	double down = 0;
	if (c->zero <= 2)
		down = flushes * exposed(dc->off_grad_down_s, tb, dc->bucket_frac);
	double zero3 = m * (z3f_off + z3b_off);
	double up = params ? 0 : dc->off_param_up_s;
	double adam = dc->cpu_adam_s + up;
	double gpu = t->step_s - t->optimizer_s;
	if (c->dpu)
		adam = fmax(0, adam - gpu);
	t->step_s -= t->optimizer_s;
	t->optimizer_s = 0;
	t->offload_s = down + zero3 + adam;
	t->cpu_adam_s = dc->cpu_adam_s;
	t->pcie_down_s = flushes * dc->off_grad_down_s;
	t->pcie_up_s = params ? 2.0 * m * ls * dc->off_layer_up_s : dc->off_param_up_s;
	cm->pcie_down_bytes = flushes * 2 * dc->off_shard_params;
	cm->pcie_up_bytes = params ? 2.0 * 2 * m * dc->off_held_params : 2 * dc->off_shard_params;
	t->step_s += t->offload_s;
}

double train_recompute_frac(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	if (c->recompute != LLMSIM_RECOMP_FULL)
		return 0;
	double ls = train_stage_layers(m, c);
	if (c->recompute_method == LLMSIM_RECOMP_BLOCK && c->recompute_layers > 0 &&
	    c->recompute_layers < ls)
		return c->recompute_layers / ls;
	return 1;
}

double train_modules_fwd(const struct llmsim_train_cfg *c, const struct layer_cost *L, int flops)
{
	if (c->recompute != LLMSIM_RECOMP_MODULES)
		return 0;
	unsigned rm = c->recompute_modules;
	if (rm & 1u << LLMSIM_RM_MOE) /* the MoE layer holds its activation and shared experts */
		rm &= ~(1u << LLMSIM_RM_MOE_ACT | 1u << LLMSIM_RM_SHARED_EXPERTS);
	double t = 0;
	for (int k = 0; k < LLMSIM_RM_COUNT; k++)
		if (rm & 1u << k)
			t += flops ? L->mod_fwd_flops[k] : L->mod_fwd_s[k];
	return t;
}

/* Activation offload (--offload-activations f): each layer's saved
 * activations, f of them, go to the host over this GPU's share of its host
 * link as the forward produces them and come back ahead of the backward
 * (Megatron-Core's fine-grained activation offloading: on their own
 * streams, overlapped with the next layer's compute); a layer's transfer
 * beyond its own compute is exposed. */
static void act_offload_parts(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			      const struct shape_cost *sc, struct train_mb *mb)
{
	const struct llmsim_gpu *g = &ctx->gpu;
	mb->act_off_fwd_s = mb->act_off_bwd_s = 0;
	if (!(c->offload_activations > 0) || !g->has_host)
		return;
	int ranks = c->gpus < g->gpus_per_node ? c->gpus : g->gpus_per_node;
	double bd = c->offload_activations *
		    llmsim_train_act_layer_bytes(&ctx->model, c, 0, ctx->geom.dropout);
	double bm = ctx->geom.moe_layers ? c->offload_activations *
		    llmsim_train_act_layer_bytes(&ctx->model, c, 1, ctx->geom.dropout) : 0;
	double td = pcie_s(g, ranks, bd), tm = pcie_s(g, ranks, bm);
	const struct layer_cost *D = &sc->dense, *M = &sc->moe;
	mb->act_off_fwd_s = mb->dense_layers * fmax(0, td - D->fwd_s) +
			    mb->moe_layers * fmax(0, tm - M->fwd_s);
	mb->act_off_bwd_s = mb->dense_layers * fmax(0, td - D->bwd_s) +
			    mb->moe_layers * fmax(0, tm - M->bwd_s);
}

void train_mb_parts(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		    const struct shape_cost *sc, const struct dp_cost *dc, struct train_mb *mb)
{
	const struct train_geom *g = &ctx->geom;
	memset(mb, 0, sizeof *mb);
	int in_slots = train_ends_in_slots(c); /* llama3: train_pp_slowest below */
	double ls = in_slots ? 0 : train_stage_layers(&ctx->model, c);
	double fm = g->layers ? (double)g->moe_layers / g->layers : 0;
	double ld = ls * (1 - fm), lm = ls * fm;
	const struct layer_cost *D = &sc->dense, *M = &sc->moe;
	int full = c->recompute == LLMSIM_RECOMP_FULL;
	int sel = c->recompute == LLMSIM_RECOMP_SELECTIVE;
	struct layer_cost ends;
	const struct layer_cost *H = end_stage(c, sc, &ends);
	if (in_slots) { /* llama3: the ends take a layer's slot */
		ls = train_pp_slowest(&ctx->model, c, sc, fm, &ends, &H);
		ld = ls * (1 - fm), lm = ls * fm;
	}
	mb->layers = ls, mb->dense_layers = ld, mb->moe_layers = lm;

	/* one micro-batch through the slowest stage */
	double cf = ld * D->fwd_s + lm * M->fwd_s + H->fwd_s;
	double cb = ld * D->bwd_s + lm * M->bwd_s + H->bwd_s;
	cb += dc->grad_accum_s;
	double rf = train_recompute_frac(&ctx->model, c);
	if (full)
		mb->recompute_s = rf * (ld * D->fwd_s + lm * M->fwd_s);
	else if (sel)
		mb->recompute_s = ld * D->attn_core_fwd_s + lm * M->attn_core_fwd_s;
	else if (c->recompute == LLMSIM_RECOMP_MODULES)
		mb->recompute_s = ld * train_modules_fwd(c, D, 0) + lm * train_modules_fwd(c, M, 0);
	cb += mb->recompute_s;
	double tpf = ld * D->tp_fwd_s + lm * M->tp_fwd_s + H->tp_fwd_s;
	double tpb = ld * D->tp_bwd_s + lm * M->tp_bwd_s + H->tp_bwd_s;
	double epf = lm * M->ep_fwd_s, epb = lm * M->ep_bwd_s;
	double cpf = ld * D->cp_fwd_exposed_s + lm * M->cp_fwd_exposed_s;
	double cpb = ld * D->cp_bwd_exposed_s + lm * M->cp_bwd_exposed_s;
	mb->tp_bwd_hidden_s = ld * D->tp_bwd_hidden_s + lm * M->tp_bwd_hidden_s + H->tp_bwd_hidden_s;
	mb->cp_fwd_hidden_s = ld * D->cp_fwd_hidden_s + lm * M->cp_fwd_hidden_s;
	mb->cp_bwd_hidden_s = ld * D->cp_bwd_hidden_s + lm * M->cp_bwd_hidden_s;
	if (full) { /* the recomputed forward communicates again */
		tpb += rf * (ld * D->tp_fwd_s + lm * M->tp_fwd_s);
		epb += rf * epf;
		cpb += rf * cpf;
		mb->cp_bwd_hidden_s += rf * mb->cp_fwd_hidden_s;
	}
	act_offload_parts(ctx, c, sc, mb);
	double z3f = 0, z3b = 0, z3f_off = 0, z3b_off = 0;
	int off = c->offload != LLMSIM_OFFLOAD_NONE && dc->has_host;
	int offp = off && c->offload == LLMSIM_OFFLOAD_PARAMS;
	if (c->zero == 3) {
		double lf = ld * D->fwd_s + lm * M->fwd_s, lb = cb - H->bwd_s;
		z3f = z3_exposed(dc->z3_layer_fwd_s, 0, lf, ls);
		z3b = z3_exposed(dc->z3_layer_bwd_s, 0, lb, ls);
		if (off) { /* PCIe: layer shards up (params), gradient shards down */
			double up = offp ? dc->off_layer_up_s : 0;
			z3f_off = z3_exposed(dc->z3_layer_fwd_s, up, lf, ls) - z3f;
			z3b_off = z3_exposed(dc->z3_layer_bwd_s, fmax(up, dc->off_layer_down_s),
					     lb, ls) - z3b;
		}
	}
	mb->chunks = c->schedule == LLMSIM_SCHED_INTERLEAVED ? c->chunks : 1;
	mb->p2p_s = c->pp > 1 ? mb->chunks * sc->p2p_s : 0;
	if (mb->p2p_s > 0 && c->stack == LLMSIM_STACK_CORE &&
	    c->schedule == LLMSIM_SCHED_INTERLEAVED) {
		/* Megatron-Core overlaps the interleaved schedule's sends with
		 * the next model chunk's compute (overlap_p2p_comm, on with
		 * virtual stages: --no-overlap-p2p-communication turns it off),
		 * as Meta's stack does (Dubey et al. 2024 Sec. 3.3.2:
		 * "asynchronous point-to-point communication in PP"): a send is
		 * exposed only beyond the chunk beside it */
		double v = mb->chunks;
		mb->p2p_s = 0.5 * v * (fmax(0, sc->p2p_s - cf / v) + fmax(0, sc->p2p_s - cb / v));
	}
	mb->compute_fwd_s = cf, mb->compute_bwd_s = cb;
	mb->tp_fwd_s = tpf, mb->tp_bwd_s = tpb, mb->ep_fwd_s = epf, mb->ep_bwd_s = epb, mb->cp_fwd_s = cpf, mb->cp_bwd_s = cpb;
	mb->z3_fwd_s = z3f, mb->z3_bwd_s = z3b, mb->z3_fwd_off_s = z3f_off, mb->z3_bwd_off_s = z3b_off;
	mb->end_fwd_s = H->fwd_s + H->tp_fwd_s;
	mb->end_bwd_s = H->bwd_s + H->tp_bwd_s;
	mb->end_tp_bytes = H->tp_bytes;
	mb->fwd_s = cf + tpf + epf + cpf + z3f + mb->p2p_s + mb->act_off_fwd_s;
	mb->bwd_s = cb + tpb + epb + cpb + z3b + mb->p2p_s + mb->act_off_bwd_s;
	mb->bubble_s = (c->pp - 1) / mb->chunks * (mb->fwd_s + mb->bwd_s);
	if (c->schedule == LLMSIM_SCHED_DUALPIPE) {
		/* DualPipe: each chunk's all-to-alls and sends hidden by the paired
		 * chunk's compute, which runs on the SMs the communication leaves;
		 * what the pair's compute cannot cover stays exposed */
		int sms = ctx->gpu.sms;
		double slow = sms > TRAIN_DUALPIPE_COMM_SMS
				      ? (double)sms / (sms - TRAIN_DUALPIPE_COMM_SMS)
				      : 1;
		double w = slow * (ld * D->wgrad_s + lm * M->wgrad_s + H->wgrad_s);
		mb->compute_fwd_s = cf *= slow, mb->compute_bwd_s = cb *= slow;
		mb->pair_exposed_s = fmax(0, epf + epb + 2 * mb->p2p_s - (cf + cb));
		mb->ep_fwd_s = mb->ep_bwd_s = mb->p2p_s = 0;
		mb->fwd_s = cf + tpf + cpf + z3f;
		mb->bwd_s = cb + tpb + cpb + z3b;
		mb->bubble_s = llmsim_train_dualpipe_bubble_s(c->pp, mb->fwd_s + mb->bwd_s + mb->pair_exposed_s,
							    mb->bwd_s, w);
	} else if (c->moe_overlap && epf + epb > 0) {
		/* the 1F1B overlap of MoE (Megatron-Core's
		 * --overlap-moe-expert-parallel-comm): one micro-batch's forward
		 * runs beside another's backward, layer by layer, so each one's
		 * exchanges hide behind the other's compute, which meanwhile
		 * runs on the SMs the exchange leaves (DeepEP's num_sms, or
		 * NCCL's channels); what the pair's compute cannot cover stays
		 * exposed, split between the two as their exchanges are */
		double comm_sms = c->moe_dispatch == LLMSIM_MOE_DEEPEP
					  ? TRAIN_DEEPEP_SMS
					  : ctx->gpu.param[LLMSIM_PARAM_COLLECTIVE_MAX_CHANNELS];
		double frac = ctx->gpu.sms > 0 ? fmin(1, comm_sms / ctx->gpu.sms) : 0;
		double ep = epf + epb, comp = cf + cb;
		double x = fmax(0, ep - comp) + frac * fmin(ep, comp);
		mb->ep_fwd_s = epf * x / ep, mb->ep_bwd_s = epb * x / ep;
		mb->fwd_s = cf + tpf + mb->ep_fwd_s + cpf + z3f + mb->p2p_s;
		mb->bwd_s = cb + tpb + mb->ep_bwd_s + cpb + z3b + mb->p2p_s;
		mb->bubble_s = (c->pp - 1) / mb->chunks * (mb->fwd_s + mb->bwd_s);
	}
}

void train_dp_exposed(const struct llmsim_train_cfg *c, const struct dp_cost *dc, int64_t m,
		      const struct train_mb *mb, struct train_dp_exp *x)
{
	memset(x, 0, sizeof *x);
	if (c->zero == 2 && c->recipe == LLMSIM_RECIPE_LLAMA3) { /* FSDP beside the pipeline */
		x->flushes = m;
		x->grad_s = fsdp_rs_exposed(c, m, dc->grad_sync_s, mb->fwd_s, mb->bwd_s, mb->bubble_s,
					    mb->layers);
		x->grad_hidden_s = fmax(0, dc->grad_sync_s - x->grad_s / (double)m);
	} else if (c->zero <= 2) {
		x->flushes = c->zero == 2 ? m : 1;
		/* Megatron-LM v2/v3's LocalDDP all-reduced the gradients after
		 * the last backward, not overlapped with it; an overlapped one
		 * of those stacks shares the SMs with the backward */
		int overlap = c->ddp == LLMSIM_DDP_STACK ? c->stack == LLMSIM_STACK_CORE
							  : c->ddp == LLMSIM_DDP_TORCH;
		double one = exposed(dc->grad_sync_s, mb->bwd_s, dc->bucket_frac);
		if (c->zero <= 1 && !overlap)
			one = dc->grad_sync_s;
		else if (c->zero <= 1)
			one += dc->overlap_contention * fmin(dc->grad_sync_s, mb->bwd_s);
		x->grad_s = (double)x->flushes * one;
		x->grad_hidden_s = fmax(0, dc->grad_sync_s - one);
	}
	if (c->zero == 1 || c->zero == 2) {
		x->gather_s = exposed(dc->param_gather_s, mb->fwd_s, dc->bucket_frac);
		x->gather_hidden_s = dc->param_gather_s - x->gather_s;
	}
	x->emb_s = dc->emb_sync_s;
	x->total_s = x->grad_s + x->gather_s + x->emb_s;
}

/* The step time of c into t (and the PCIe bytes of offload into cm), its
 * micro-batch parts into mb: what a search ranks by. */
static void combine_time(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 const struct shape_cost *sc, const struct dp_cost *dc, int64_t m,
			 struct train_mb *mb, struct llmsim_train_time *t,
			 struct llmsim_train_comm *cm)
{
	struct train_dp_exp dx;
	train_mb_parts(ctx, c, sc, dc, mb);
	train_dp_exposed(c, dc, m, mb, &dx);
	double ls = mb->layers;
	t->fwd_mb_s = mb->fwd_s;
	t->bwd_mb_s = mb->bwd_s;
	/* the weights' quantize, once a step for every layer of the stage */
	const struct layer_cost *D = &sc->dense, *M = &sc->moe;
	double ld = mb->dense_layers, lm = mb->moe_layers;
	t->compute_s = m * (mb->compute_fwd_s + mb->compute_bwd_s) + ld * D->per_step_s +
		       lm * M->per_step_s;
	t->quantize_s = m * (ld * D->quant_s + lm * M->quant_s) + ld * D->per_step_s +
			lm * M->per_step_s;
	t->tp_exposed_s = m * (mb->tp_fwd_s + mb->tp_bwd_s);
	t->ep_exposed_s = m * (mb->ep_fwd_s + mb->ep_bwd_s + mb->pair_exposed_s);
	t->cp_exposed_s = m * (mb->cp_fwd_s + mb->cp_bwd_s);
	t->pp_exposed_s = m * 2 * mb->p2p_s;
	t->zero3_exposed_s = m * (mb->z3_fwd_s + mb->z3_bwd_s);
	t->dp_exposed_s = dx.total_s;
	t->dp_comm_s = (c->zero == 2 ? m : 1) * dc->grad_sync_s + dc->param_gather_s +
		       m * ls * (dc->z3_layer_fwd_s + dc->z3_layer_bwd_s);
	t->comm_exposed_s = t->tp_exposed_s + t->ep_exposed_s + t->cp_exposed_s +
			    t->pp_exposed_s + t->zero3_exposed_s + t->dp_exposed_s;
	t->bubble_s = mb->bubble_s;
	t->optimizer_s = dc->optimizer_s;
	t->act_offload_s = m * (mb->act_off_fwd_s + mb->act_off_bwd_s);
	t->step_s = t->compute_s + t->comm_exposed_s + t->bubble_s + t->optimizer_s +
		    t->act_offload_s;
	if (c->offload != LLMSIM_OFFLOAD_NONE && dc->has_host)
		offload_time(c, dc, m, ls, mb->bwd_s, mb->z3_fwd_off_s, mb->z3_bwd_off_s, t, cm);
}

/* Whether mem fits the GPU: within the memory model's error of the limit
 * (the stack's) it is not rejected but said to be tight. */
static void gpu_fit(const struct llmsim_train_cfg *c, const struct llmsim_train_mem *mem,
		    int *fits, int *tight)
{
	double e = c->allow.error_frac;
	*fits = mem->total_bytes * (1 - e) <= mem->hbm_bytes;
	*tight = *fits && mem->total_bytes * (1 + e) > mem->hbm_bytes;
}

static double tokens_per_step(const struct llmsim_train_cfg *c)
{
	return (double)c->global_batch * c->seq;
}

void train_step_lean(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     const struct shape_cost *sc, const struct dp_cost *dc,
		     struct train_step *s)
{
	int64_t m = c->global_batch / ((int64_t)c->micro_batch * c->dp);
	struct train_mb mb;
	struct llmsim_train_comm cm;
	combine_time(ctx, c, sc, dc, m, &mb, &s->time, &cm);
	s->tokens_per_s = s->time.step_s > 0 ? tokens_per_step(c) / s->time.step_s : 0;
	train_memory(&ctx->geom, &ctx->model, &ctx->gpu, c, m, &ctx->pp_memo, &s->mem);
	gpu_fit(c, &s->mem, &s->gpu_fits, &s->mem_tight);
	s->fits = s->gpu_fits && s->mem.host_per_node_bytes <= s->mem.host_bytes;
}

void train_combine(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		   const struct shape_cost *sc, const struct dp_cost *dc,
		   struct llmsim_train_result *r)
{
	const struct train_geom *g = &ctx->geom;
	memset(r, 0, sizeof *r);
	r->cfg = *c;
	int64_t m = c->global_batch / ((int64_t)c->micro_batch * c->dp);
	r->microbatches = m;
	struct train_mb mb;
	struct llmsim_train_time *t = &r->time;
	combine_time(ctx, c, sc, dc, m, &mb, t, &r->comm);
	double ls = mb.layers, ld = mb.dense_layers, lm = mb.moe_layers;
	const struct layer_cost *D = &sc->dense, *M = &sc->moe;
	int full = c->recompute == LLMSIM_RECOMP_FULL;
	int sel = c->recompute == LLMSIM_RECOMP_SELECTIVE;

	/* communication volumes, bytes each GPU sends per step (the end stage
	 * the slowest stage holds, as train_mb_parts chose it) */
	struct llmsim_train_comm *cm = &r->comm;
	double rf = train_recompute_frac(&ctx->model, c);
	cm->tp_bytes = m * (ld * D->tp_bytes + lm * M->tp_bytes + mb.end_tp_bytes +
			    rf * (ld * D->tp_bytes + lm * M->tp_bytes) / 2);
	cm->ep_bytes = m * lm * M->ep_bytes * (1 + rf / 2);
	cm->cp_bytes = m * (ld * D->cp_bytes + lm * M->cp_bytes);
	cm->pp_bytes = c->pp > 1 ? m * 2 * mb.chunks * sc->p2p_bytes : 0;
	cm->dp_bytes = (c->zero == 2 ? m : 1) * dc->grad_bytes + dc->gather_bytes;
	cm->zero3_bytes = m * ls * dc->z3_layer_bytes;
	cm->tp_msg_bytes = sc->tp_msg_bytes;
	cm->dp_grad_bytes = dc->grad_bytes;

	/* throughput and utilization */
	const struct layer_cost *E = &sc->emb, *L = &sc->head; /* every stage's share */
	double per_mb = g->dense_layers * (D->fwd_flops + D->bwd_flops) +
			g->moe_layers * (M->fwd_flops + M->bwd_flops) + E->fwd_flops +
			E->bwd_flops + L->fwd_flops + L->bwd_flops;
	double recomp = full ? rf * (g->dense_layers * D->fwd_flops + g->moe_layers * M->fwd_flops)
		      : sel  ? g->dense_layers * D->attn_core_fwd_flops +
				      g->moe_layers * M->attn_core_fwd_flops
			     : g->dense_layers * train_modules_fwd(c, D, 1) +
				      g->moe_layers * train_modules_fwd(c, M, 1);
	double seqs_per_mb_shard = (double)c->global_batch / c->micro_batch;
	r->model_flops = per_mb * c->tp * c->cp * seqs_per_mb_shard;
	r->hw_flops = (per_mb + recomp) * c->tp * c->cp * seqs_per_mb_shard;
	r->tokens_per_step = tokens_per_step(c);
	r->tokens_per_s = t->step_s > 0 ? r->tokens_per_step / t->step_s : 0;
	r->peak_flops_per_s = llmsim_gpu_peak_flops(&ctx->gpu, c->dtype);
	double denom = t->step_s * c->gpus * r->peak_flops_per_s;
	r->mfu = denom > 0 ? r->model_flops / denom : 0;
	r->hfu = denom > 0 ? r->hw_flops / denom : 0;

	train_memory(g, &ctx->model, &ctx->gpu, c, m, &ctx->pp_memo, &r->mem);
	gpu_fit(c, &r->mem, &r->gpu_fits, &r->mem_tight);
	r->mem_error_bytes = c->allow.error_frac * r->mem.total_bytes;
	r->host_fits = r->mem.host_per_node_bytes <= r->mem.host_bytes;
	r->fits = r->gpu_fits && r->host_fits;
}

int llmsim_train_simulate(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  struct llmsim_train_result *r, struct llmsim_err *err)
{
	if (llmsim_train_check(&ctx->model, c, err) != LLMSIM_REJ_NONE)
		return LLMSIM_EINVAL;
	int rc = llmsim_precision_check(&ctx->gpu, c->precision, err);
	if (rc)
		return rc;
	if (c->offload != LLMSIM_OFFLOAD_NONE && !ctx->gpu.has_host)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "--offload needs the host of a node: %s has no 'host:' section",
				      ctx->gpu.path[0] ? ctx->gpu.path : ctx->gpu.name);
	if (c->offload_activations > 0 && !ctx->gpu.has_host)
		return llmsim_err_set(err, LLMSIM_EINVAL, "--offload-activations needs the host "
				      "of a node: %s has no 'host:' section",
				      ctx->gpu.path[0] ? ctx->gpu.path : ctx->gpu.name);
	if (c->engine == LLMSIM_ENGINE_TORCH)
		return train_torch_simulate(ctx, c, r, err);
	struct shape_cost sc;
	struct dp_cost dc;
	rc = train_shape_cost(ctx, c, &sc, err);
	if (!rc)
		rc = train_dp_cost(ctx, c, &dc, err);
	if (rc)
		return rc;
	train_combine(ctx, c, &sc, &dc, r);
	r->load_rho = sc.load_rho;
	r->sm_clock_hz = train_load_clock(&ctx->gpu, c, sc.load_rho);
	return 0;
}
