/*
 * torch_step.c - the torch engine's training step (train.h): one GPU
 * running calib/torch/steps_train.py's loop, timed as PyTorch runs it.
 *
 *  - The op graph with its tensors (sim/graph_torch_train.c): every kernel
 *    of the forward, of autograd's backward, of torch.utils.checkpoint's
 *    recompute (each layer's forward again before its backward, up to the
 *    early stop: graph_mem.h's `stop`), priced by llmsim_predict inside the
 *    step's own load.
 *  - fused AdamW: torch.optim.AdamW(fused=True) launches
 *    multi_tensor_apply_kernel over the parameters, their gradients and
 *    the two moments (4 lists): each launch takes up to 320 chunks of
 *    65536 elements and 36 tensors (MultiTensorApply.cuh:
 *    depth_to_max_blocks, depth_to_max_tensors, kChunkSize), each priced
 *    as an AdamW op of its elements; then the step counters' increment
 *    (_foreach_add_, up to 110 tensors a launch). zero_grad(set_to_none)
 *    launches nothing.
 *  - Eager launches: the host issues every kernel from Python, one after
 *    the other, TRAIN_EAGER_HOST_S each; the GPU starts a kernel when the
 *    one before has ended (plus graph_kernel_gap_s) and its launch has
 *    been issued; the host runs ahead by at most TRAIN_LAUNCH_QUEUE
 *    kernels, and waits for the GPU where the step reads a result back
 *    (graph_mem.h's host_sync: embedding_dense_backward's segment count).
 *    Steps follow each other with no sync between them (the timing loop
 *    records events): the step time is the steady state of three.
 *  - The load: the step's tensor FLOPs over its kernel time (rho) and its
 *    kernels' share of the step (duty), found by pricing the step at the
 *    burst clock first, then in the load that shows.
 *  - Memory: the caching allocator's timeline (mem_timeline.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train_int.h"

/* fused AdamW's multi_tensor_apply (see the file comment) */
enum { ADAM_CHUNK = 65536, ADAM_MAX_BLOCKS = 320, ADAM_MAX_TENSORS = 36, STEP_MAX_TENSORS = 110 };

int train_torch_params(const struct llmsim_model *m, double *numel, int max)
{
	int n = 0;
	double H = m->hidden, d = m->head_dim, I = m->intermediate;
	double qw = m->heads * d, kw = m->kv_heads * d;
	int bias = m->linear_bias, qkvb = m->linear_bias || m->qkv_bias;
	double nb = m->norm == LLMSIM_NORM_LAYER ? 2 : 1; /* weight (and bias) */
#define P(x)                          \
	do {                          \
		if (n < max)          \
			numel[n] = x; \
		n++;                  \
	} while (0)
	P((double)m->vocab * H);
	if (m->position == LLMSIM_POS_LEARNED && m->position_rows > 0)
		P((double)m->position_rows * H);
	for (int l = 0; l < m->layers; l++) {
		for (int k = 0; k < nb; k++)
			P(H);
		P(qw * H);
		if (qkvb)
			P(qw);
		P(kw * H);
		if (qkvb)
			P(kw);
		P(kw * H);
		if (qkvb)
			P(kw);
		P(H * qw);
		if (bias)
			P(H);
		for (int k = 0; k < nb; k++)
			P(H);
		int mats = m->mlp == LLMSIM_MLP_GATED ? 2 : 1;
		for (int k = 0; k < mats; k++) {
			P(I * H);
			if (bias)
				P(I);
		}
		P(H * I);
		if (bias)
			P(H);
	}
	for (int k = 0; k < nb; k++)
		P(H);
	if (!m->tied_embeddings)
		P((double)m->vocab * H);
#undef P
	return n;
}

/* The optimizer step's kernels (see the file comment) into ops[0..max):
 * returns how many. */
static int optimizer_ops(const struct llmsim_model *m, struct llmsim_op *ops, int max)
{
	int np = train_torch_params(m, NULL, 0), n = 0, tensors = 0, blocks = 0;
	double elems = 0, *numel = malloc(sizeof *numel * (size_t)(np > 0 ? np : 1));
	if (!numel)
		return -1;
	train_torch_params(m, numel, np);
	struct llmsim_op op;
	train_adamw_op(&op, 1);
#define LAUNCH(x_)                                               \
	do {                                                     \
		if (n < max) {                                   \
			ops[n] = op;                             \
			ops[n].u.ew.hidden = (int64_t)ceil(x_);  \
		}                                                \
		n++;                                             \
	} while (0)
	for (int i = 0; i < np; i++) {
		double chunks = ceil(numel[i] / ADAM_CHUNK);
		tensors++;
		for (double k = 0; k < chunks; k++) {
			elems += fmin(ADAM_CHUNK, numel[i] - k * ADAM_CHUNK);
			blocks++;
			int last_chunk = k + 1 >= chunks;
			if (blocks == ADAM_MAX_BLOCKS || (last_chunk && tensors == ADAM_MAX_TENSORS)) {
				LAUNCH(elems);
				/* the launch's last tensor carries on if chunks remain */
				tensors = last_chunk ? 0 : 1;
				blocks = 0;
				elems = 0;
			}
		}
	}
	if (blocks > 0)
		LAUNCH(elems);
	/* the step counters: one float each, += 1 */
	op.u.ew.kind = LLMSIM_EW_ADD;
	op.u.ew.bcast = 1;
	for (int done = 0; done < np; done += STEP_MAX_TENSORS)
		LAUNCH(np - done < STEP_MAX_TENSORS ? np - done : STEP_MAX_TENSORS);
#undef LAUNCH
	free(numel);
	return n;
}

/* ---- the program's order ---- */

void train_torch_walk(const struct llmsim_graph *g, const struct llmsim_graph_mem *mem,
		      int layers, int64_t microbatches, int full,
		      void (*fn)(const struct train_torch_at *at, void *arg), void *arg)
{
	struct train_torch_at at = {0};
	for (int64_t mb = 0; mb < microbatches; mb++) {
		at.microbatch = mb;
#define NODES(sec_, inst_, ph_, recomp_, lim_)                                                 \
	for (int i_ = 0; i_ < g->n; i_++) {                                                     \
		const struct llmsim_gnode *n_ = &g->node[i_];                                     \
		if (n_->sec != (sec_) || (n_->phase == LLMSIM_PH_FWD) != ((ph_) == LLMSIM_PH_FWD)) \
			continue;                                                                 \
		if ((lim_) >= 0 && i_ >= (lim_))                                                   \
			break;                                                                    \
		at.ev = TRAIN_AT_NODE, at.sec = (sec_), at.layer = (inst_), at.node = i_;         \
		at.recompute = (recomp_);                                                         \
		fn(&at, arg);                                                                     \
	}
#define EVENT(e_, inst_)                                                   \
	do {                                                               \
		at.ev = (e_), at.layer = (inst_), at.node = -1, at.recompute = 0; \
		fn(&at, arg);                                                      \
	} while (0)
		NODES(LLMSIM_SEC_PRE, -1, LLMSIM_PH_FWD, 0, -1);
		for (int l = 0; l < layers; l++) {
			NODES(LLMSIM_SEC_DENSE, l, LLMSIM_PH_FWD, 0, -1);
			EVENT(TRAIN_AT_LAYER_FWD_END, l);
		}
		NODES(LLMSIM_SEC_POST, -1, LLMSIM_PH_FWD, 0, -1);
		EVENT(TRAIN_AT_FWD_END, -1);
		NODES(LLMSIM_SEC_POST, -1, LLMSIM_PH_BWD, 0, -1);
		for (int l = layers - 1; l >= 0; l--) {
			if (full) {
				NODES(LLMSIM_SEC_DENSE, l, LLMSIM_PH_FWD, 1,
				      mem->io[LLMSIM_SEC_DENSE].stop);
				EVENT(TRAIN_AT_RECOMPUTE_END, l);
			}
			NODES(LLMSIM_SEC_DENSE, l, LLMSIM_PH_BWD, 0, -1);
		}
		NODES(LLMSIM_SEC_PRE, -1, LLMSIM_PH_BWD, 0, -1);
		EVENT(TRAIN_AT_BWD_END, -1);
#undef NODES
#undef EVENT
	}
	at.ev = TRAIN_AT_STEP_END, at.layer = -1, at.node = -1, at.recompute = 0;
	fn(&at, arg);
}

/* ---- one step as a list of visits ---- */

enum { V_FWD, V_BWD, V_RECOMPUTE, V_ACCUM, V_OPT };

/* a node (or op) run once in the step, with its price at its load */
struct visit {
	const struct llmsim_op *op;
	const char *name;          /* the node's, or the optimizer's launch */
	int64_t mb;                /* its micro-batch (-1: the optimizer) */
	int kind;                  /* V_* */
	int sync;                  /* the host waits for the GPU after it */
	int layer;                 /* -1 outside the layers */
	double x;                  /* its load: rho * duty over the power window */
	double t, flops, tflops;   /* time, FLOPs, tensor FLOPs */
	int kernels;
	double start, end;         /* on the GPU, in the last step simulated */
	double prev_start, prev_end; /* in the step before */
};

struct steplist {
	const struct llmsim_graph *g;
	const struct llmsim_graph_mem *mem;
	struct visit *v;
	int n, cap;
	int64_t mbs;
	const struct llmsim_op *accum;  /* gradient accumulation adds, one per parameter */
	int naccum;
	const struct llmsim_op *opt;    /* the optimizer's launches */
	int nopt;
	int oom;
};

static void push(struct steplist *l, const struct llmsim_op *op, const char *name, int64_t mb,
		 int kind, int layer, int sync)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 1024;
		struct visit *p = realloc(l->v, sizeof *p * (size_t)cap);
		if (!p) {
			l->oom = 1;
			return;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = (struct visit){.op = op, .name = name, .mb = mb, .kind = kind,
				      .layer = layer, .sync = sync};
}

static void list_at(const struct train_torch_at *at, void *arg)
{
	struct steplist *l = arg;
	if (at->ev == TRAIN_AT_NODE) {
		const struct llmsim_gnode *n = &l->g->node[at->node];
		int kind = at->recompute ? V_RECOMPUTE : n->phase == LLMSIM_PH_FWD ? V_FWD : V_BWD;
		int sync = at->sec == LLMSIM_SEC_PRE &&
			   at->node == l->mem->io[LLMSIM_SEC_PRE].host_sync;
		push(l, &n->op, n->name, at->microbatch, kind,
		     at->sec == LLMSIM_SEC_DENSE ? at->layer : -1, sync);
	} else if (at->ev == TRAIN_AT_BWD_END && at->microbatch > 0) {
		/* AccumulateGrad adds a later micro-batch's gradients into .grad */
		for (int i = 0; i < l->naccum; i++)
			push(l, &l->accum[i], "accumulate_grad", at->microbatch, V_ACCUM, -1, 0);
	} else if (at->ev == TRAIN_AT_STEP_END) {
		for (int i = 0; i < l->nopt; i++)
			push(l, &l->opt[i],
			     l->opt[i].u.ew.kind == LLMSIM_EW_ADAMW ? "adamw (multi_tensor_apply)"
								    : "step += 1 (_foreach_add_)",
			     -1, V_OPT, -1, 0);
	}
}

/* Each visit priced at its load (x rounded up to 1/64, so that prices stay
 * cached; a given load or lone kernels when the configuration says so). */
static int price(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		 struct steplist *l, struct llmsim_err *err)
{
	for (int i = 0; i < l->n; i++) {
		struct visit *v = &l->v[i];
		ctx->load_rho = c->load == LLMSIM_LOAD_LONE ? 0 : c->load_rho > 0 ? c->load_rho : v->x;
		struct price p;
		int rc = train_price(ctx, v->op, &p, err);
		if (rc)
			return rc;
		v->t = p.time_s;
		v->flops = p.flops;
		v->tflops = v->op->kind == LLMSIM_OP_GEMM || v->op->kind == LLMSIM_OP_ATTENTION
				    ? p.flops : 0;
		v->kernels = p.kernels > 0 ? p.kernels : 1;
	}
	ctx->load_rho = 0;
	return 0;
}

/* The host's launches and the GPU's kernels of `steps` steps back to
 * back (see the file comment); the visits' times of the last two. */
struct pace {
	double cpu, gpu;           /* the host's clock; the GPU's last kernel end */
	double ends[TRAIN_LAUNCH_QUEUE]; /* the GPU ends of the last kernels, by launch */
	int64_t issued;
};

static void pace(const struct llmsim_gpu *gpu, struct steplist *l, int steps, double host_s,
		 struct pace *p)
{
	double gap = gpu->param[LLMSIM_PARAM_GRAPH_KERNEL_GAP_S];
	memset(p, 0, sizeof *p);
	for (int s = 0; s < steps; s++)
		for (int i = 0; i < l->n; i++) {
			struct visit *v = &l->v[i];
			v->prev_start = v->start;
			v->prev_end = v->end;
			for (int k = 0; k < v->kernels; k++) {
				int64_t slot = p->issued % TRAIN_LAUNCH_QUEUE;
				p->cpu += host_s;
				/* a full queue: the launch waits for a kernel to end */
				if (p->issued >= TRAIN_LAUNCH_QUEUE && p->cpu < p->ends[slot])
					p->cpu = p->ends[slot];
				double start = fmax(p->gpu + (p->issued ? gap : 0), p->cpu);
				if (!k)
					v->start = start;
				p->gpu = start + v->t / v->kernels;
				p->ends[slot] = p->gpu;
				p->issued++;
			}
			v->end = p->gpu;
			if (v->sync)
				p->cpu = fmax(p->cpu, p->gpu);
		}
}

/* The step's load: its tensor work over the step at the 16-bit peak,
 * rho * duty (sim/predict.c: one clock for every op of a load the power
 * controller averages; the step repeats for far longer than its window),
 * rounded up to 1/64 so that prices stay cached. Returns whether it moved. */
static int load(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, struct steplist *l,
		double step_s)
{
	double flops = 0, busy = 0;
	for (int i = 0; i < l->n; i++) {
		flops += l->v[i].tflops;
		busy += l->v[i].t;
	}
	double x = ceil(fmin(1, llmsim_tensor_rho(gpu, dt, flops, fmax(step_s, busy))) * 64) / 64;
	int changed = 0;
	for (int i = 0; i < l->n; i++) {
		changed |= l->v[i].x != x;
		l->v[i].x = x;
	}
	return changed;
}

struct stepsum {
	double step_s, gpu_s, kernels;
	double s[V_OPT + 1], flops[V_OPT + 1], tensor_flops;
	double x_mean;
};

/* The step time of l in its own load: priced at the burst clock, then in
 * the loads its run shows, until they settle (three rounds at most). */
static int run(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
	       struct steplist *l, struct stepsum *o, struct llmsim_err *err)
{
	struct pace p;
	int own = c->load == LLMSIM_LOAD_BUSY && !(c->load_rho > 0) &&
		  llmsim_gpu_power_cap_hz(&ctx->gpu) > 0;
	double step = 0;
	for (int round = 0; round < 4; round++) {
		int rc = price(ctx, c, l, err);
		if (rc)
			return rc;
		pace(&ctx->gpu, l, 3, TRAIN_EAGER_HOST_S, &p);
		step = l->v[l->n - 1].end - l->v[l->n - 1].prev_end;
		if (!own || round == 3)
			break;
		if (!load(&ctx->gpu, c->dtype, l, step))
			break;
	}
	memset(o, 0, sizeof *o);
	o->step_s = step;
	double xs = 0;
	for (int i = 0; i < l->n; i++) {
		const struct visit *v = &l->v[i];
		o->gpu_s += v->t;
		o->kernels += v->kernels;
		o->s[v->kind] += v->t;
		o->flops[v->kind] += v->flops;
		o->tensor_flops += v->tflops;
		xs += v->x * v->t;
	}
	o->x_mean = o->gpu_s > 0 ? xs / o->gpu_s : 0;
	return 0;
}

/* The last simulated step's kernels on one stream into tl, from the end
 * of the step before; past three micro-batches the ones not simulated are
 * one block before the optimizer, `extra_s` long (the step extrapolates
 * them so). Phases (a micro-batch's forward, backward, the gradient
 * accumulation, the optimizer) on a track of their own. */
static void torch_timeline(struct llmsim_timeline *tl, const struct steplist *l,
			   int64_t sim, int64_t mbs, double extra_s)
{
	static const char *const phase[] = {[V_FWD] = "forward", [V_BWD] = "backward",
					    [V_RECOMPUTE] = "backward", [V_ACCUM] = "accumulate grads",
					    [V_OPT] = "optimizer"};
	int ks = llmsim_tl_track(tl, 0, "GPU 0 (PyTorch eager)", 1, "stream (kernels)");
	int ph = llmsim_tl_track(tl, 0, "GPU 0 (PyTorch eager)", 2, "phases");
	double base = l->v[l->n - 1].prev_end, shift = 0;
	int64_t from = -1;
	for (int i = 0; i < l->n; i++) {
		const struct visit *v = &l->v[i];
		if (v->kind == V_OPT && !(shift > 0) && extra_s > 0) {
			struct llmsim_tl_event *e = llmsim_tl_add(
				tl, ph, "extrapolated", v->start - base, extra_s,
				"micro-batches %lld-%lld (extrapolated)", (long long)sim,
				(long long)(mbs - 1));
			llmsim_tl_arg(e, "microbatches", (double)(mbs - sim));
			shift = extra_s;
		}
		struct llmsim_tl_event *e =
			llmsim_tl_add(tl, ks, v->kind == V_OPT ? "optimizer" : "kernel",
				      v->start - base + shift, v->end - v->start, "%s", v->name);
		llmsim_tl_arg(e, "kernels", v->kernels);
		if (v->layer >= 0)
			llmsim_tl_arg(e, "layer", v->layer);
		if (v->kind == V_RECOMPUTE)
			llmsim_tl_arg(e, "recompute", 1);
		/* a phase ends where the next visit starts another */
		const struct visit *w = i + 1 < l->n ? &l->v[i + 1] : NULL;
		if (from < 0)
			from = i;
		if (w && w->mb == v->mb && !strcmp(phase[w->kind], phase[v->kind]))
			continue;
		const struct visit *f = &l->v[from];
		double at = f->start - base + shift, dur = v->end - f->start;
		if (v->kind == V_OPT) {
			llmsim_tl_add(tl, ph, phase[v->kind], at, dur, "optimizer");
		} else {
			e = llmsim_tl_add(tl, ph, phase[v->kind], at, dur, "%s %lld", phase[v->kind],
					  (long long)v->mb);
			llmsim_tl_arg(e, "microbatch", (double)v->mb);
		}
		from = -1;
	}
}

int train_torch_simulate(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 struct llmsim_train_result *r, struct llmsim_err *err)
{
	memset(r, 0, sizeof *r);
	r->cfg = *c;
	int64_t mbs = c->global_batch / c->micro_batch;
	r->microbatches = mbs;
	struct llmsim_graph_cfg gc;
	train_graph_cfg(ctx, c, 0, &gc);
	int rc = llmsim_graph_build_mem(&ctx->model, &gc, &ctx->graph, &ctx->mem, err);
	if (rc)
		return rc;
	ctx->operand_data = c->operand_data;
	const struct llmsim_model *m = &ctx->model;
	int np = train_torch_params(m, NULL, 0);
	int nopt = optimizer_ops(m, NULL, 0);
	struct llmsim_op *ops = calloc((size_t)(np + (nopt > 0 ? nopt : 0) + 1), sizeof *ops);
	double *numel = malloc(sizeof *numel * (size_t)(np + 1));
	struct steplist l = {.g = &ctx->graph, .mem = &ctx->mem, .accum = ops, .naccum = np,
			     .opt = ops + np};
	if (!ops || !numel || nopt < 0) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	train_torch_params(m, numel, np);
	for (int i = 0; i < np; i++) {
		ops[i].kind = LLMSIM_OP_ELEMENTWISE;
		ops[i].dtype = LLMSIM_DT_FP32;
		ops[i].u.ew.kind = LLMSIM_EW_ADD;
		ops[i].u.ew.tokens = 1;
		ops[i].u.ew.hidden = (int64_t)numel[i];
	}
	l.nopt = optimizer_ops(m, ops + np, nopt);
	/* micro-batches after the second repeat the second: past three,
	 * run two and three and extend by the last one's time */
	struct stepsum s2 = {0}, s3;
	int64_t sim = mbs > 3 ? 3 : mbs;
	for (int64_t k = sim > 2 && mbs > 3 ? 2 : sim; k <= sim && !rc; k++) {
		l.n = 0;
		l.mbs = k;
		train_torch_walk(&ctx->graph, &ctx->mem, m->layers, k,
				 c->recompute == LLMSIM_RECOMP_FULL, list_at, &l);
		if (l.oom) {
			rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
			goto out;
		}
		if (k < sim)
			rc = run(ctx, c, &l, &s2, err);
		else
			rc = run(ctx, c, &l, &s3, err);
	}
	if (rc)
		goto out;
	double extra = mbs > sim ? (double)(mbs - sim) : 0;
#define EXT(f) (s3.f + extra * (s3.f - s2.f))
	struct llmsim_train_time *t = &r->time;
	t->step_s = EXT(step_s);
	t->optimizer_s = s3.s[V_OPT];
	t->compute_s = EXT(gpu_s) - t->optimizer_s;
	t->fwd_mb_s = s3.s[V_FWD] / sim;
	t->bwd_mb_s = (s3.s[V_BWD] + s3.s[V_RECOMPUTE]) / sim;
	r->torch.gpu_s = EXT(gpu_s);
	r->torch.kernels = EXT(kernels);
	r->torch.host_s = r->torch.kernels * TRAIN_EAGER_HOST_S;
	r->torch.idle_s = fmax(0, t->step_s - r->torch.gpu_s);
	r->torch.optimizer_launches = l.nopt;
	if (ctx->timeline)
		torch_timeline(ctx->timeline, &l, sim, mbs, EXT(step_s) - s3.step_s);
	r->model_flops = EXT(flops[V_FWD]) + EXT(flops[V_BWD]);
	r->hw_flops = r->model_flops + EXT(flops[V_RECOMPUTE]);
	r->load_rho = s3.x_mean;
	r->sm_clock_hz = train_load_clock(&ctx->gpu, c, c->load == LLMSIM_LOAD_LONE ? 0 : s3.x_mean);
#undef EXT
	r->tokens_per_step = (double)c->global_batch * c->seq;
	r->tokens_per_s = t->step_s > 0 ? r->tokens_per_step / t->step_s : 0;
	r->peak_flops_per_s = llmsim_gpu_peak_flops(&ctx->gpu, c->dtype);
	double denom = t->step_s * r->peak_flops_per_s;
	r->mfu = denom > 0 ? r->model_flops / denom : 0;
	r->hfu = denom > 0 ? r->hw_flops / denom : 0;

	/* memory: its peak is reached by the second micro-batch */
	if ((rc = train_torch_memory(ctx, c, sim, r, err)))
		goto out;
	r->gpu_fits = r->mem.total_bytes <= r->mem.hbm_bytes;
	r->host_fits = 1;
	r->fits = r->gpu_fits;
out:
	free(l.v);
	free(ops);
	free(numel);
	return rc;
}

