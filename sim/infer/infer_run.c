/*
 * infer_run.c - one request shape on one replica: a batch of identical
 * requests prefilled together, then decoded to the end, with TTFT, TPOT,
 * throughput, what bounds each phase and the largest batch that fits.
 */
#include "base/bounds.h"
#include "infer.h"
#include "sim/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cost_axpy(struct llmsim_step_cost *y, double w, const struct llmsim_step_cost *x)
{
	double g = y->gpu_s + w * x->gpu_s;
	if (g > 0)
		y->sm_clock_hz = (y->sm_clock_hz * y->gpu_s + w * x->sm_clock_hz * x->gpu_s) / g;
	y->load_duty = x->load_duty;
	y->load_rho = x->load_rho;
	y->time_s += w * x->time_s;
	y->gpu_s += w * x->gpu_s;
	y->comm_s += w * x->comm_s;
	y->flops += w * x->flops;
	y->hbm_bytes += w * x->hbm_bytes;
	for (int i = 0; i < LLMSIM_BYTES_CAT_COUNT; i++)
		y->bytes[i] += w * x->bytes[i];
	for (int i = 0; i < LLMSIM_BOUND_COUNT; i++)
		y->time_by_bound_s[i] += w * x->time_by_bound_s[i];
	y->workspace_bytes = fmax(y->workspace_bytes, x->workspace_bytes);
	y->kernels += (int64_t)llround(w * (double)x->kernels);
	y->tokens += (int64_t)llround(w * (double)x->tokens);
}

static void phase_finish(const struct llmsim_infer_cfg *cfg, struct llmsim_phase *ph)
{
	const struct llmsim_step_cost *c = &ph->cost;
	enum llmsim_dtype math, w;
	llmsim_infer_gemm_dtypes(cfg, &math, &w);
	ph->bound = llmsim_step_bound(c, &ph->bound_share);
	double peak = llmsim_gpu_peak_flops(cfg->gpu, math);
	ph->hbm_peak_fraction = c->time_s > 0 ? c->hbm_bytes / c->time_s / cfg->gpu->hbm_bytes_per_s : 0;
	ph->flops_peak_fraction = c->time_s > 0 && peak > 0 ? c->flops / c->time_s / peak : 0;
}

/* The replica's track tid of the timeline: 1 its steps, 2 their kernels. */
static int tl_track(const struct llmsim_infer_cfg *cfg, int tid)
{
	char proc[64];
	snprintf(proc, sizeof proc, "replica (tp %d x pp %d)", cfg->tp, cfg->pp);
	return llmsim_tl_track(cfg->timeline, 0, proc, tid,
			       tid == 1 ? "engine steps" : "kernels (first prefill and decode step)");
}

/* A step on the timeline (cfg->timeline, if any), after the ones so far. */
static void tl_step(const struct llmsim_infer_cfg *cfg, const char *what, double dur_s,
		    int64_t seqs, int64_t tokens, double context, const struct llmsim_step_cost *c)
{
	struct llmsim_timeline *tl = cfg->timeline;
	if (!tl)
		return;
	int tr = tl_track(cfg, 1);
	struct llmsim_tl_event *e = llmsim_tl_add(tl, tr, what, tl->now_s, dur_s, "%s", what);
	tl->now_s += dur_s;
	llmsim_tl_arg(e, "sequences", (double)seqs);
	llmsim_tl_arg(e, "tokens_per_sequence", (double)tokens);
	llmsim_tl_arg(e, "context", context);
	if (c) {
		llmsim_tl_arg(e, "kernel_s", c->gpu_s);
		llmsim_tl_arg(e, "comm_s", c->comm_s);
		llmsim_tl_arg(e, "kernels", (double)c->kernels);
	}
}

/* The kernels of step s, starting where the timeline's next step will:
 * the ops inside the first prefill and the first decode step. */
static void tl_ops(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s)
{
	struct llmsim_timeline *tl = cfg->timeline;
	if (!tl)
		return;
	int tr = tl_track(cfg, 2);
	struct llmsim_err err = {0};
	if (llmsim_infer_step_trace(cfg, s, tl, tr, tl->now_s, &err))
		tl->oom = 1; /* priced before: cannot fail but for memory */
}

/* Prefill `count` sequences of `prompt` tokens in steps of at most
 * `budget` tokens: whole sequences per step, or chunks of one sequence
 * when the prompt alone exceeds the budget. Adds into total. */
static int prefill(const struct llmsim_infer_cfg *cfg, int64_t count, int64_t prompt,
		   int64_t budget, struct llmsim_step_cost *total, int *steps,
		   struct llmsim_err *err)
{
	struct llmsim_step_cost c;
	if (prompt <= budget) {
		int64_t per = budget / prompt;
		if (per > count)
			per = count;
		int64_t full = count / per, rest = count % per;
		struct llmsim_prefill_chunk ch = {.tokens = prompt, .context = 0, .count = per};
		struct llmsim_step s = {.prefill = &ch, .nprefill = 1, .logits = per, .q_len = 1};
		int rc = llmsim_infer_step(cfg, &s, &c, err);
		if (rc)
			return rc;
		cost_axpy(total, (double)full, &c);
		*steps += (int)full;
		for (int64_t i = 0; cfg->timeline && i < full; i++) {
			if (!i)
				tl_ops(cfg, &s);
			tl_step(cfg, "prefill", c.time_s, per, prompt, 0, &c);
		}
		if (rest) {
			ch.count = rest;
			s.logits = rest;
			if ((rc = llmsim_infer_step(cfg, &s, &c, err)))
				return rc;
			cost_axpy(total, 1.0, &c);
			*steps += 1;
			tl_step(cfg, "prefill", c.time_s, rest, prompt, 0, &c);
		}
		return 0;
	}
	/* chunked: every sequence the same, so price one and scale */
	struct llmsim_step_cost one;
	memset(&one, 0, sizeof one);
	int64_t nch = (prompt + budget - 1) / budget, k = 0;
	struct llmsim_step_cost *chunk = cfg->timeline ? calloc((size_t)nch, sizeof *chunk) : NULL;
	for (int64_t done = 0; done < prompt; done += budget, k++) {
		int64_t t = prompt - done < budget ? prompt - done : budget;
		struct llmsim_prefill_chunk ch = {.tokens = t, .context = done, .count = 1};
		struct llmsim_step s = {.prefill = &ch, .nprefill = 1, .q_len = 1,
					.logits = done + t == prompt ? 1 : 0};
		int rc = llmsim_infer_step(cfg, &s, &c, err);
		if (rc) {
			free(chunk);
			return rc;
		}
		cost_axpy(&one, 1.0, &c);
		*steps += (int)count;
		if (chunk)
			chunk[k] = c;
	}
	cost_axpy(total, (double)count, &one);
	/* the timeline: each sequence's chunks in turn */
	struct llmsim_prefill_chunk ch0 = {.tokens = budget, .context = 0, .count = 1};
	struct llmsim_step s0 = {.prefill = &ch0, .nprefill = 1, .q_len = 1};
	for (int64_t q = 0; chunk && q < count; q++)
		for (int64_t i = 0; i < nch; i++) {
			if (!q && !i)
				tl_ops(cfg, &s0);
			tl_step(cfg, "prefill", chunk[i].time_s, 1,
				i + 1 < nch ? budget : prompt - i * budget, (double)(i * budget),
				&chunk[i]);
		}
	if (cfg->timeline && !chunk)
		cfg->timeline->oom = 1;
	free(chunk);
	return 0;
}

/* One decode step of `batch` sequences over kv_len tokens. */
static struct llmsim_step decode_step(int64_t batch, double kv_len)
{
	return (struct llmsim_step){.decode_seqs = batch, .q_len = 1, .decode_kv_len = kv_len,
				    .logits = batch};
}

/* The decode steps on the timeline: those priced as they were; between
 * Simpson's nine points, each step's time linear in its context, scaled
 * by one factor so that the steps add up to the priced mean (TPOT) times
 * their number, as e2e does. */
static void tl_decode(const struct llmsim_infer_cfg *cfg, int64_t batch, int64_t prompt,
		      int64_t nsteps, const double *x, const double *f, int npts, double tpot_s)
{
	struct llmsim_timeline *tl = cfg->timeline;
	if (!tl || nsteps < 1)
		return;
	double sum = 0, scale = 1;
	for (int pass = 0; pass < 2; pass++) {
		for (int64_t j = 1, i = 0; j <= nsteps; j++) {
			double kv = (double)(prompt + j), t = f[j - 1 < npts ? j - 1 : 0];
			if (npts == 9) {
				while (i < 7 && kv > x[i + 1])
					i++;
				double w = x[i + 1] > x[i] ? (kv - x[i]) / (x[i + 1] - x[i]) : 0;
				t = f[i] + w * (f[i + 1] - f[i]);
			}
			if (pass == 0) {
				sum += t;
				continue;
			}
			if (j == 1) {
				struct llmsim_step s = decode_step(batch, kv);
				tl_ops(cfg, &s);
			}
			tl_step(cfg, "decode", t * scale, batch, 1, kv, NULL);
		}
		scale = sum > 0 ? tpot_s * (double)nsteps / sum : 1;
	}
	if (npts == 9)
		snprintf(tl->note, sizeof tl->note,
			 "decode: %lld steps, 9 contexts priced (Simpson), the steps between "
			 "linear in the context, scaled by %.6f to the priced mean",
			 (long long)nsteps, scale);
}

static int decode_at(const struct llmsim_infer_cfg *cfg, int64_t batch, double kv_len,
		     struct llmsim_step_cost *c, struct llmsim_err *err)
{
	struct llmsim_step s = decode_step(batch, kv_len);
	return llmsim_infer_step(cfg, &s, c, err);
}

/* The run with its prefill priced under cfg and its decode under dec
 * (the same but for the load). */
static int infer_once(const struct llmsim_infer_cfg *cfg, const struct llmsim_infer_cfg *dec,
		      const struct llmsim_infer_req *req, struct llmsim_infer_result *res,
		      struct llmsim_err *err)
{
	const struct llmsim_model *m = cfg->model;
	memset(res, 0, sizeof *res);
	if (cfg->timeline)
		llmsim_tl_reset(cfg->timeline); /* a run priced again starts over */
	if (req->batch < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "batch must be at least 1, got %lld",
				      (long long)req->batch);
	if (req->prompt < 1 || req->output < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "prompt and output must be at least 1 token each");
	/* before any product of them is formed (base/bounds.h says why) */
	if (req->batch > LLMSIM_MAX_BATCH)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d sequences in a batch, not %lld",
				      LLMSIM_MAX_BATCH, (long long)req->batch);
	if (req->prompt > LLMSIM_MAX_TOKENS || req->output > LLMSIM_MAX_TOKENS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d prompt or output tokens",
				      LLMSIM_MAX_TOKENS);
	/* the last output token is never fed back: the sequence holds
	 * prompt + output - 1 positions */
	if (m->max_seq > 0 && req->prompt + req->output - 1 > m->max_seq)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "prompt + output = %lld tokens exceeds the %d-token context of %s",
				      (long long)(req->prompt + req->output), m->max_seq, m->name);
	int rc = llmsim_infer_memory(cfg, &res->mem, err);
	if (rc)
		return rc;
	int64_t seq_tokens = llmsim_infer_kv_tokens(cfg, req->prompt + req->output);
	res->max_batch = res->mem.kv_capacity_tokens / seq_tokens;
	res->kv_bytes_per_token = llmsim_model_kv_bytes_per_token(m, cfg->kv_dtype);
	res->kv_bytes = (double)req->batch * seq_tokens * res->mem.kv_bytes_per_token;
	if (req->batch > res->max_batch)
		return llmsim_err_set(err, LLMSIM_ENOFIT,
				      "batch %lld needs %.1f GB of KV cache per GPU but %.1f GB is free after weights and activations (largest batch of this shape: %lld)",
				      (long long)req->batch, res->kv_bytes / 1e9,
				      res->mem.kv_capacity_bytes / 1e9, (long long)res->max_batch);

	int64_t budget = cfg->max_step_tokens ? cfg->max_step_tokens : cfg->params.max_step_tokens;
	if ((rc = prefill(cfg, req->batch, req->prompt, budget, &res->prefill.cost,
			  &res->prefill_steps, err)))
		return rc;
	res->prefill.time_s = res->prefill.cost.time_s;
	res->ttft_s = res->prefill.time_s;
	phase_finish(cfg, &res->prefill);

	/* Decode steps 1..O-1 attend over prompt+j tokens (their own included). */
	int64_t nsteps = req->output - 1;
	struct llmsim_step_cost c;
	double px[9], pf[9];
	if (nsteps > 0) {
		double lo = (double)req->prompt + 1, hi = (double)(req->prompt + nsteps);
		if (nsteps <= 9) {
			for (int64_t j = 1; j <= nsteps; j++) {
				if ((rc = decode_at(dec, req->batch, (double)(req->prompt + j), &c, err)))
					return rc;
				cost_axpy(&res->decode.cost, 1.0 / nsteps, &c);
				px[j - 1] = (double)(req->prompt + j);
				pf[j - 1] = c.time_s;
			}
			res->decode_points = (int)nsteps;
		} else {
			/* composite Simpson, 8 intervals: mean = sum(w f) / 24 */
			static const double w[9] = {1, 4, 2, 4, 2, 4, 2, 4, 1};
			for (int i = 0; i <= 8; i++) {
				double x = lo + (hi - lo) * i / 8.0;
				if ((rc = decode_at(dec, req->batch, x, &c, err)))
					return rc;
				cost_axpy(&res->decode.cost, w[i] / 24.0, &c);
				px[i] = x;
				pf[i] = c.time_s;
			}
			res->decode_points = 9;
		}
		res->decode.time_s = res->decode.cost.time_s;
		phase_finish(dec, &res->decode);
	}
	res->tpot_s = res->decode.time_s;
	res->e2e_s = res->ttft_s + (double)nsteps * res->tpot_s;
	tl_decode(dec, req->batch, req->prompt, nsteps, px, pf, res->decode_points, res->tpot_s);
	if (cfg->timeline) {
		llmsim_tl_figure(cfg->timeline, "ttft_s", res->ttft_s);
		llmsim_tl_figure(cfg->timeline, "e2e_s", res->e2e_s);
	}
	res->tokens_per_s = res->e2e_s > 0 ? (double)req->batch * req->output / res->e2e_s : 0;
	return 0;
}

/* The load a run of duration_s keeping the GPU busy busy_s puts on the
 * power controller: its busy share, times how much of the controller's
 * window the run fills by its middle. */
double llmsim_infer_load(const struct llmsim_gpu *gpu, double busy_s, double duration_s)
{
	if (!(duration_s > 0) || !(busy_s > 0) || !(llmsim_gpu_power_cap_hz(gpu) > 0))
		return 0;
	return llmsim_power_load(gpu, busy_s / duration_s, duration_s);
}

/* The load a phase that keeps the GPU busy busy_s of its wall_s puts on
 * the power controller when it runs back to back (the busy load): its busy
 * share, at most 1; 0 when the GPU states no power-capped clock. */
static double infer_busy_duty(const struct llmsim_gpu *gpu, double busy_s, double wall_s)
{
	if (!(wall_s > 0) || !(busy_s > 0) || !(llmsim_gpu_power_cap_hz(gpu) > 0))
		return 0;
	return busy_s < wall_s ? busy_s / wall_s : 1;
}

double llmsim_infer_rho(const struct llmsim_infer_cfg *cfg, double flops, double busy_s)
{
	enum llmsim_dtype math, weights;
	llmsim_infer_gemm_dtypes(cfg, &math, &weights);
	double rho = llmsim_tensor_rho(cfg->gpu, math, flops, busy_s);
	return rho < 1 ? rho : 1;
}

/* A phase's own load, from its price at the burst clock: into c (left
 * lone when it has no load). The steps walk every pipeline stage in turn:
 * each GPU does 1/pp of their FLOPs. */
static void phase_load(const struct llmsim_infer_cfg *base, const struct llmsim_phase *lone,
		       struct llmsim_infer_cfg *c)
{
	*c = *base;
	c->load_duty = infer_busy_duty(base->gpu, lone->cost.gpu_s, lone->cost.time_s);
	c->load_rho = base->load_rho > 0 ? base->load_rho
					 : llmsim_infer_rho(base, lone->cost.flops / base->pp,
							    lone->cost.gpu_s);
	if (!(c->load_duty > 0) || !(c->load_rho > 0))
		c->load_duty = c->load_rho = 0;
}

int llmsim_infer_run(const struct llmsim_infer_cfg *cfg, const struct llmsim_infer_req *req,
		     struct llmsim_infer_result *res, struct llmsim_err *err)
{
	struct llmsim_infer_cfg lone = *cfg;
	if (cfg->load_duty > 0 && cfg->load != LLMSIM_LOAD_LONE) {
		/* the caller's load: every step in it */
		int rc = infer_once(cfg, cfg, req, res, err);
		if (!rc)
			res->load_duty = cfg->load_duty;
		return rc;
	}
	lone.load_duty = lone.load_rho = 0;
	int rc = infer_once(&lone, &lone, req, res, err);
	if (rc || cfg->load == LLMSIM_LOAD_LONE || !(llmsim_gpu_power_cap_hz(cfg->gpu) > 0))
		return rc;
	/* busy: each phase inside the load of its own steps back to back */
	struct llmsim_infer_cfg pre, dec;
	phase_load(cfg, &res->prefill, &pre);
	phase_load(cfg, &res->decode, &dec);
	if (!(pre.load_duty > 0) && !(dec.load_duty > 0))
		return 0;
	if ((rc = infer_once(&pre, &dec, req, res, err)))
		return rc;
	res->load_duty = fmax(pre.load_duty, dec.load_duty);
	return 0;
}
