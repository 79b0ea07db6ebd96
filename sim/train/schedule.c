/*
 * schedule.c - the timeline of one training step (llmsim_train_timeline):
 * the pipeline schedule the step was priced with, laid out event by event.
 *
 * Every stage runs the slowest stage's micro-batch (the step prices them
 * alike: struct train_mb's fwd_s and bwd_s), each model chunk a 1/v share of it. The
 * order of a stage's forward and backward chunks is Megatron-LM's
 * (megatron/core/pipeline_parallel/schedules.py):
 *  - 1F1B: min(p - s - 1, m) warm-up forwards, then one forward and one
 *    backward in turn, then the remaining backwards;
 *  - interleaved: (p - s - 1) * 2 + (v - 1) * p warm-up forwards, the k-th
 *    forward of chunk (k / p) % v and micro-batch (k / (p v)) p + k % p,
 *    backwards the same with the chunks in reverse.
 * A chunk starts when its stage is free and its input is there: the
 * forward of the virtual stage before (chunk c of stage s follows stage
 * s - 1, or chunk c - 1 of the last stage), the backward of the one after.
 * With identical stages this schedule ends at exactly the analytic
 * (m + (p - 1) / v)(fwd_s + bwd_s) of step.c (tests/test_trace_out.c checks
 * both agree); p2p sends are inside each chunk, as the step prices them.
 *
 * Around the pipeline, as step.c prices them: the exposed part of the
 * ZeRO-1/2 parameter all-gather (the previous optimizer's, its hidden part
 * behind the first forward) before it; after each stage's last backward
 * the exposed gradient reduction (its hidden part behind that backward),
 * the tied embeddings' all-reduce (first and last stage), then the
 * optimizer on every stage at once (its gradient-norm reduction joins
 * them), or the offloaded update.
 *
 * Each chunk's parts are drawn on their own tracks of the stage, one after
 * the other as they add up in the step: the kernels (recompute first),
 * then the exposed TP, EP, CP, ZeRO-3 and p2p time; the hidden parts of
 * TP (backward), CP and ZeRO-3 lie beside the kernels that hide them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/timeline.h"
#include "train_int.h"

enum { T_SCHED = 1, T_KERNELS, T_TP, T_CP, T_EP, T_ZERO3, T_PP, T_DP, T_OFFLOAD, T_COUNT };
static const char *const track_names[T_COUNT] = {
	[T_SCHED] = "micro-batches", [T_KERNELS] = "kernels", [T_TP] = "TP comm",
	[T_CP] = "CP comm",  [T_EP] = "EP comm",  [T_ZERO3] = "ZeRO-3 comm",
	[T_PP] = "PP p2p",   [T_DP] = "DP comm",  [T_OFFLOAD] = "offload",
};

/* one chunk of a stage's schedule */
struct op {
	int bwd, chunk;
	int64_t mb;
	double start, end;
};

/* The order of stage s's chunks (see the file comment) into o[0..2 m v):
 * m v forwards and as many backwards. */
static void stage_order(int p, int64_t m, int v, int s, int il, struct op *o)
{
	int64_t total = m * v, n = 0, fk = 0, bk = 0;
	int64_t warm = il ? (int64_t)(p - s - 1) * 2 + (int64_t)(v - 1) * p : p - s - 1;
	if (warm > total)
		warm = total;
#define PUT(bwd_, k_)                                                              \
	do {                                                                       \
		int64_t k = (k_);                                                  \
		int c = (int)((k / p) % v);                                        \
		o[n].bwd = (bwd_);                                                 \
		o[n].chunk = (bwd_) ? v - 1 - c : c;                               \
		o[n].mb = il ? k / ((int64_t)p * v) * p + k % p : k;               \
		n++;                                                               \
	} while (0)
	for (; fk < warm; fk++)
		PUT(0, fk);
	while (fk < total) {
		PUT(0, fk);
		fk++;
		PUT(1, bk);
		bk++;
	}
	for (; bk < total; bk++)
		PUT(1, bk);
#undef PUT
}

struct sched {
	int p, v;
	int64_t m;
	struct op **o;             /* per stage, 2 m v chunks in order */
	double *fwd_end, *bwd_end; /* by (virtual stage, micro-batch) */
};

static double *done(struct sched *S, int bwd, int vs, int64_t mb)
{
	return &(bwd ? S->bwd_end : S->fwd_end)[(int64_t)vs * S->m + mb];
}

/* Start times of every chunk: each stage takes its next chunk as soon as
 * its input is there (a stage waiting on another stalls, the others go
 * on). Returns -1 if the order deadlocks (it cannot: Megatron's is sound). */
static int run(struct sched *S, const double *fc, const double *bc, double t0)
{
	int p = S->p, P = S->p * S->v;
	int64_t total = 2 * S->m * S->v, left = total * p;
	int64_t *next = calloc((size_t)p, sizeof *next);
	double *free_at = calloc((size_t)p, sizeof *free_at);
	if (!next || !free_at) {
		free(next);
		free(free_at);
		return -1;
	}
	for (int s = 0; s < p; s++)
		free_at[s] = t0;
	for (int64_t i = 0; i < (int64_t)P * S->m; i++)
		S->fwd_end[i] = S->bwd_end[i] = -1;
	while (left > 0) {
		int moved = 0;
		for (int s = 0; s < p; s++)
			for (; next[s] < total; next[s]++, left--, moved = 1) {
				struct op *o = &S->o[s][next[s]];
				int vs = o->chunk * p + s;
				double dep = t0;
				if (!o->bwd && vs > 0)
					dep = *done(S, 0, vs - 1, o->mb);
				else if (o->bwd)
					dep = vs < P - 1 ? *done(S, 1, vs + 1, o->mb)
							 : *done(S, 0, vs, o->mb);
				if (dep < 0)
					break;
				o->start = fmax(free_at[s], dep);
				o->end = o->start + (o->bwd ? bc[s] : fc[s]);
				free_at[s] = o->end;
				*done(S, o->bwd, vs, o->mb) = o->end;
			}
		if (!moved)
			break;
	}
	free(next);
	free(free_at);
	return left > 0 ? -1 : 0;
}

/* A part of a chunk on one of the stage's tracks, seconds. */
struct seg {
	int track;
	double dur;
	const char *name;
};

/* One chunk's parts on stage s's tracks (file comment): the recompute,
 * then the kernels with the hidden communication beside them, then the
 * exposed communication, end to end. */
static void chunk_parts(struct llmsim_timeline *tl, const int *tr, const struct op *o,
			const struct train_mb *mb, const struct dp_cost *dc)
{
	int b = o->bwd;
	double v = mb->chunks, t = o->start;
	double rc = b ? mb->recompute_s / v : 0;
	double k = (b ? mb->compute_bwd_s - mb->recompute_s : mb->compute_fwd_s) / v;
	double z3_all = mb->layers * (b ? dc->z3_layer_bwd_s : dc->z3_layer_fwd_s);
	double z3 = b ? mb->z3_bwd_s : mb->z3_fwd_s;
	llmsim_tl_add(tl, tr[T_KERNELS], "compute", t, rc, "recompute");
	t += rc;
	const struct seg hidden[] = {
		{T_TP, b ? mb->tp_bwd_hidden_s / v : 0, "TP (hidden)"},
		{T_CP, (b ? mb->cp_bwd_hidden_s : mb->cp_fwd_hidden_s) / v, "CP ring (hidden)"},
		{T_ZERO3, fmax(0, z3_all - z3) / v,
		 b ? "ZeRO-3 gather+RS (hidden)" : "ZeRO-3 gather (hidden)"},
	};
	for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++)
		llmsim_tl_add(tl, tr[hidden[i].track], "comm", t, fmin(hidden[i].dur, k), "%s",
			      hidden[i].name);
	const struct seg serial[] = {
		{T_KERNELS, k, b ? "backward kernels" : "forward kernels"},
		{T_TP, (b ? mb->tp_bwd_s : mb->tp_fwd_s) / v, "TP (exposed)"},
		{T_EP, (b ? mb->ep_bwd_s : mb->ep_fwd_s) / v, "EP all-to-all (exposed)"},
		{T_CP, (b ? mb->cp_bwd_s : mb->cp_fwd_s) / v, "CP ring (exposed)"},
		{T_ZERO3, z3 / v, b ? "ZeRO-3 gather+RS (exposed)" : "ZeRO-3 gather (exposed)"},
		{T_PP, mb->p2p_s / v, b ? "send gradients" : "send activations"},
	};
	for (size_t i = 0; i < sizeof serial / sizeof *serial; i++) {
		llmsim_tl_add(tl, tr[serial[i].track], i ? "comm" : "compute", t, serial[i].dur,
			      "%s", serial[i].name);
		t += serial[i].dur;
	}
}

/* The stage's tracks, named by its ranks. */
static int stage_tracks(struct llmsim_timeline *tl, const struct llmsim_train_cfg *c, int s,
			int *tr)
{
	int per = c->tp * c->cp * c->dp, first = s * per;
	char proc[64];
	snprintf(proc, sizeof proc, "stage %d (ranks %d-%d: tp %d x cp %d x dp %d)", s, first,
		 first + per - 1, c->tp, c->cp, c->dp);
	for (int k = T_SCHED; k < T_COUNT; k++)
		if ((tr[k] = llmsim_tl_track(tl, first, proc, k, track_names[k])) < 0)
			return -1;
	return 0;
}

static int fused_timeline(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  const struct llmsim_train_result *r, struct llmsim_timeline *tl,
			  struct llmsim_err *err)
{
	struct shape_cost sc;
	struct dp_cost dc;
	struct train_mb mb;
	struct train_dp_exp dx;
	int rc = train_shape_cost(ctx, c, &sc, err);
	if (!rc)
		rc = train_dp_cost(ctx, c, &dc, err);
	if (rc)
		return rc;
	int64_t m = r->microbatches;
	train_mb_parts(ctx, c, &sc, &dc, &mb);
	train_dp_exposed(c, &dc, m, &mb, &dx);
	int p = c->pp, v = (int)mb.chunks, il = c->schedule == LLMSIM_SCHED_INTERLEAVED;
	int64_t n = 2 * m * v; /* chunks a stage runs */
	if (tl->max_events && (double)p * (double)n + 4.0 * p > (double)tl->max_events)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "--trace-out: %lld forward and backward chunks on each of %d "
				      "stages pass a trace's %lld events: fewer micro-batches a step "
				      "(--global-batch) to draw it",
				      (long long)n, p, (long long)tl->max_events);
	struct sched S = {.p = p, .v = v, .m = m};
	size_t slots = (size_t)p * (size_t)v * (size_t)m;
	S.o = calloc((size_t)p, sizeof *S.o);
	S.fwd_end = malloc(slots * sizeof *S.fwd_end);
	S.bwd_end = malloc(slots * sizeof *S.bwd_end);
	int ok = S.o && S.fwd_end && S.bwd_end;
	for (int s = 0; ok && s < p; s++) {
		ok = (S.o[s] = malloc((size_t)(2 * m * v) * sizeof **S.o)) != NULL;
		if (ok)
			stage_order(p, m, v, s, il, S.o[s]);
	}
	double t0 = dx.gather_s;
	double *fc = malloc((size_t)p * sizeof *fc), *bc = malloc((size_t)p * sizeof *bc);
	ok = ok && fc && bc;
	for (int s = 0; ok && s < p; s++)
		fc[s] = mb.fwd_s / v, bc[s] = mb.bwd_s / v;
	if (ok && run(&S, fc, bc, t0))
		rc = llmsim_err_set(err, LLMSIM_EINVAL, "the pipeline schedule deadlocks");
	else if (!ok)
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory for the schedule");
	double pipe_end = t0;
	for (int s = 0; !rc && s < p; s++)
		pipe_end = fmax(pipe_end, S.o[s][n - 1].end);
	/* after the pipeline: every stage waits for the slowest reduction */
	double opt_at = pipe_end + dx.grad_s + dx.emb_s;
	int off = c->offload != LLMSIM_OFFLOAD_NONE && dc.has_host;
	/* a chunk is up to 10 events with its parts: past the limit, the
	 * chunks alone, so that every stage is there */
	int parts = !tl->max_events || 10.0 * (double)p * (double)n <= (double)tl->max_events;
	if (!parts)
		snprintf(tl->note, sizeof tl->note,
			 "%lld chunks on %d stages: their kernels and communication left out "
			 "(more than %lld events)",
			 (long long)n, p, (long long)tl->max_events);
	for (int s = 0; !rc && s < p; s++) {
		int tr[T_COUNT];
		if (stage_tracks(tl, c, s, tr)) {
			rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory for the timeline");
			break;
		}
		double prev_dp = 0;
		struct llmsim_tl_event *e;
		if (dx.gather_s > 0 || dx.gather_hidden_s > 0) {
			e = llmsim_tl_add(tl, tr[T_DP], "comm", 0, dx.gather_s,
					  "param all-gather (exposed)");
			llmsim_tl_arg(e, "hidden_s", dx.gather_hidden_s);
			llmsim_tl_add(tl, tr[T_DP], "comm", t0, dx.gather_hidden_s,
				      "param all-gather (hidden)");
			prev_dp = t0 + dx.gather_hidden_s;
		}
		for (int64_t i = 0; i < n; i++) {
			const struct op *o = &S.o[s][i];
			e = il ? llmsim_tl_add(tl, tr[T_SCHED], o->bwd ? "backward" : "forward",
					       o->start, o->end - o->start, "%c%lld.%d",
					       o->bwd ? 'B' : 'F', (long long)o->mb, o->chunk)
			       : llmsim_tl_add(tl, tr[T_SCHED], o->bwd ? "backward" : "forward",
					       o->start, o->end - o->start, "%c%lld",
					       o->bwd ? 'B' : 'F', (long long)o->mb);
			llmsim_tl_arg(e, "microbatch", (double)o->mb);
			llmsim_tl_arg(e, "chunk", (double)o->chunk);
			if (parts)
				chunk_parts(tl, tr, o, &mb, &dc);
			/* a micro-batch's gradients are reduced after its last
			 * backward chunk (ZeRO-2: every one; else the last) */
			int last = i == n - 1;
			if (o->bwd && o->chunk == 0 && (c->zero == 2 || last) &&
			    dx.grad_hidden_s > 0) {
				double from = fmax(prev_dp, o->end - dx.grad_hidden_s);
				llmsim_tl_add(tl, tr[T_DP], "comm", from, o->end - from,
					      "grad reduce (hidden)");
				prev_dp = o->end;
			}
		}
		double end = S.o[s][n - 1].end;
		e = llmsim_tl_add(tl, tr[T_DP], "comm", end, dx.grad_s,
				  dx.flushes > 1 ? "grad reduce x%lld (exposed)"
						 : "grad reduce (exposed)", (long long)dx.flushes);
		llmsim_tl_arg(e, "per_microbatch_s", dx.flushes ? dx.grad_s / dx.flushes : 0);
		if (s == 0 || s == p - 1)
			llmsim_tl_add(tl, tr[T_DP], "comm", pipe_end + dx.grad_s, dx.emb_s,
				      "tied embedding all-reduce");
		if (off) {
			e = llmsim_tl_add(tl, tr[T_SCHED], "optimizer", opt_at, r->time.offload_s,
					  "offload: PCIe + CPU Adam (exposed)");
			llmsim_tl_arg(e, "cpu_adam_s", r->time.cpu_adam_s);
			llmsim_tl_arg(e, "pcie_down_s", r->time.pcie_down_s);
			llmsim_tl_arg(e, "pcie_up_s", r->time.pcie_up_s);
			llmsim_tl_add(tl, tr[T_OFFLOAD], "comm", opt_at, r->time.offload_s,
				      "offload (exposed)");
		} else {
			llmsim_tl_add(tl, tr[T_SCHED], "optimizer", opt_at, r->time.optimizer_s,
				      "optimizer");
		}
	}
	/* what the step does not price: every stage at its own time (the
	 * middle ones without the embedding or the LM head) */
	if (!rc && p > 1) {
		const struct layer_cost *E = &sc.emb, *H = &sc.head;
		for (int s = 0; s < p; s++) {
			fc[s] = (mb.fwd_s - mb.end_fwd_s + (s == 0) * (E->fwd_s + E->tp_fwd_s) +
				 (s == p - 1) * (H->fwd_s + H->tp_fwd_s)) / v;
			bc[s] = (mb.bwd_s - mb.end_bwd_s + (s == 0) * (E->bwd_s + E->tp_bwd_s) +
				 (s == p - 1) * (H->bwd_s + H->tp_bwd_s)) / v;
		}
		double own = t0;
		if (!run(&S, fc, bc, t0))
			for (int s = 0; s < p; s++)
				own = fmax(own, S.o[s][n - 1].end);
		llmsim_tl_figure(tl, "pipeline_s", pipe_end - t0);
		llmsim_tl_figure(tl, "pipeline_own_stage_times_s", own - t0);
	}
	free(fc);
	free(bc);
	for (int s = 0; S.o && s < p; s++)
		free(S.o[s]);
	free(S.o);
	free(S.fwd_end);
	free(S.bwd_end);
	return rc;
}

int llmsim_train_timeline(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  const struct llmsim_train_result *r, struct llmsim_timeline *tl,
			  struct llmsim_err *err)
{
	llmsim_tl_reset(tl);
	int rc;
	if (c->schedule == LLMSIM_SCHED_DUALPIPE)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "--trace-out: the DualPipe schedule's two-way order is not "
				      "drawn (its step is priced by the paper's bubble formula); "
				      "use --schedule 1f1b or interleaved for a timeline");
	if (c->engine == LLMSIM_ENGINE_TORCH) {
		struct llmsim_train_result again;
		ctx->timeline = tl;
		rc = train_torch_simulate(ctx, c, &again, err);
		ctx->timeline = NULL;
	} else {
		rc = fused_timeline(ctx, c, r, tl, err);
	}
	llmsim_tl_figure(tl, "step_time_s", r->time.step_s);
	if (!rc && tl->oom)
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory for the timeline");
	return rc;
}
