/*
 * plan_serve_capacity.c - the capacity question (plan_serve.h): the fewest
 * GPUs of one kind that serve a load within latency targets.
 *
 * A unit is a replica layout in its types: an aggregated replica (tp x pp x
 * ep), or one replica of a disaggregated prefill or decode pool (tp x 1).
 * Replicas of a unit are identical and split the load evenly, so a unit's
 * deployment of R replicas is one replica's run at 1/R of the load, and a
 * unit is searched over R alone:
 *
 *   1. one request alone (a run of one request) gives the unit's TTFT and
 *      TPOT at batch 1; a replica under load is no faster, so a unit whose
 *      batch-1 figure misses a target is dropped before any load is
 *      simulated;
 *   2. an offline run (every request at once, at the largest cap) gives the
 *      replica's saturated request rate mu; a replica whose share of the
 *      rate is past mu does not keep up (its queue grows without end), so
 *      R >= rate / mu, and a unit whose R x GPUs at that bound is past the
 *      best count found so far is dropped;
 *   3. from that bound R grows by half until the unit meets the targets,
 *      then bisection finds the fewest (assumed: another replica never
 *      makes a replica slower). At each R the largest cap runs first; when
 *      it meets TTFT but misses TPOT, smaller caps (powers of two below the
 *      sequences it ran) trade queueing for a shorter step.
 *
 * Every (unit, R, cap) is simulated once, whatever GPU count it serves as
 * part of. The pools of a disaggregated deployment are searched apart
 * (TTFT is the prefill pool's plus the KV transfer, TPOT the decode
 * pool's) and every pair that meets is a row. Pipeline stages add no speed
 * to a replica here (one batch crosses them in turn): each tp takes the
 * fewest stages that hold its weights. Under a closed loop (concurrency)
 * every replica keeps up by construction, R starts at 1, and only
 * aggregated layouts are searched (the pools' arrival rates would depend on
 * each other).
 */
#include "plan_serve_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum unit_kind { U_AGG, U_PREFILL, U_DECODE };

struct unit {
	enum unit_kind kind;
	struct llmsim_infer_cfg ic;
	int g;                          /* GPUs of one replica */
	double ttft1_s, tpot1_s;        /* one request alone */
	double mu;                      /* saturated requests/s of one replica (0: not run) */
	int r_lo;                       /* replicas at least */
	int best_r;                     /* fewest replicas that meet (0: none) */
	int64_t best_cap;
	struct llmsim_serve_result best;
	double xfer_s[2];               /* prefill units: the KV transfer over NVLink, network */
};

struct cap_search {
	struct plan_serve_search *s;
	struct unit *u;
	int nu, cap;
	int best_n;                     /* fewest GPUs that meet so far (0: none) */
	int network;                    /* the pools' transfer goes over the network */
};

static int64_t top_cap(const struct plan_serve_search *s)
{
	return s->pc->max_batch > 0 ? s->pc->max_batch : 256;
}

/* A deployment that keeps up with a rate serves all of it: its throughput
 * is the rate's (a run of a few hundred requests counts its ramp and
 * drain against it). */
static void steady(const struct plan_serve_search *s, struct llmsim_plan_serve_row *row)
{
	if (s->pc->load != LLMSIM_LOAD_RATE || !row->keeps_up)
		return;
	row->requests_per_s = s->pc->rate_per_s;
	row->tokens_per_s = s->pc->rate_per_s * (double)s->pc->output;
}

/* One replica of u out of R at cap: its run. Counts it; ENOFIT is no error. */
static int run(struct plan_serve_search *s, const struct unit *u, int R, int64_t cap, int offline,
	       int64_t requests, struct llmsim_serve_result *res, struct llmsim_err *err)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	struct llmsim_serve_cfg sc;
	plan_serve_engine(s, &u->ic, R, cap, &sc);
	if (u->kind == U_PREFILL)
		sc.output.a = 1;
	if (u->kind == U_DECODE)
		sc.prefilled = 1;
	if (offline) {
		sc.rate_per_s = 0;
		sc.concurrency = 0;
	}
	if (requests > 0)
		sc.requests = requests;
	int rc = llmsim_serve_run(&sc, res, err);
	s->out->simulated++;
	if (u->kind != U_AGG)
		s->out->simulated_disagg++;
	if (pc->progress)
		pc->progress(pc->progress_ctx, s->out->simulated, s->out->pruned);
	return rc;
}

/* Whether u's replicas, R of them, keep up with the rate. */
static int keeps_up(const struct plan_serve_search *s, const struct unit *u, int R)
{
	if (s->pc->load != LLMSIM_LOAD_RATE)
		return 1;
	return s->pc->rate_per_s / R <= u->mu;
}

/* A pool's run against its own target: the prefill pool's TTFT (with the
 * transfer), the decode pool's TPOT. */
static int pool_meets(const struct cap_search *c, const struct unit *u,
		      const struct llmsim_serve_result *r, int R, int *ttft_miss)
{
	const struct llmsim_plan_serve_cfg *pc = c->s->pc;
	double q = c->s->out->quantile;
	*ttft_miss = 0;
	if (u->kind == U_PREFILL) {
		double t = plan_serve_quantile(&r->ttft_s, q) + u->xfer_s[c->network];
		*ttft_miss = pc->ttft_slo_s > 0 && t > pc->ttft_slo_s;
		return !*ttft_miss && keeps_up(c->s, u, R);
	}
	return !(pc->tpot_slo_s > 0 && plan_serve_quantile(&r->tpot_s, q) > pc->tpot_slo_s) &&
	       keeps_up(c->s, u, R);
}

/* u with R replicas: 1 when some cap meets the targets (kept in u->best
 * when R is the fewest yet), 0 when none does, or an error. */
static int eval(struct cap_search *c, struct unit *u, int R, struct llmsim_err *err)
{
	struct plan_serve_search *s = c->s;
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	int64_t cap = top_cap(s);
	if (pc->load == LLMSIM_LOAD_CONCURRENCY) {
		int64_t users = plan_serve_users(pc->concurrency, R);
		cap = cap < users ? cap : users;
	}
	for (int tries = 0; tries < 4 && cap >= 1; tries++) {
		struct llmsim_serve_result res;
		struct llmsim_err e2 = {0};
		int rc = run(s, u, R, u->kind == U_PREFILL ? 256 : cap, 0, 0, &res, &e2);
		if (rc == LLMSIM_ENOFIT) {
			s->out->why[LLMSIM_SERVE_KV]++;
			return 0;
		}
		if (rc) {
			*err = e2;
			return rc;
		}
		int met, ttft_miss;
		if (u->kind == U_AGG) {
			if (!s->out->requests_per_replica)
				s->out->requests_per_replica = res.requests_done;
			struct llmsim_plan_serve_row row = {
				.gpus = R * u->g, .replicas = R, .tp = u->ic.tp, .pp = u->ic.pp,
				.ep = u->ic.ep, .weight_dtype = u->ic.weight_dtype,
				.kv_dtype = u->ic.kv_dtype, .max_batch = cap, .ttft_s = res.ttft_s,
				.tpot_s = res.tpot_s, .e2e_s = res.e2e_s,
				.tokens_per_s = res.tokens_per_s * R,
				.requests_per_s = res.requests_per_s * R, .mean_batch = res.mean_batch,
				.preemptions = res.preemptions,
				.weight_bytes_per_gpu = res.mem.weight_bytes,
				.kv_capacity_tokens = res.kv_capacity_tokens,
				.keeps_up = keeps_up(s, u, R),
			};
			steady(s, &row);
			plan_serve_judge(s, &row);
			if ((rc = plan_serve_push(s, &row)))
				return llmsim_err_set(err, rc, "out of memory");
			met = row.feasible;
			ttft_miss = pc->ttft_slo_s > 0 && row.ttft_q_s > pc->ttft_slo_s;
		} else {
			met = pool_meets(c, u, &res, R, &ttft_miss);
		}
		if (met) {
			if (!u->best_r || R < u->best_r) {
				u->best_r = R;
				u->best_cap = cap;
				u->best = res;
			}
			return 1;
		}
		/* a smaller cap only queues longer (TTFT) and serves less: it can
		 * help TPOT alone, where a TTFT target watches the queue (the
		 * decode pool's queue is in its TPOT) */
		if (ttft_miss || u->kind == U_PREFILL || !keeps_up(s, u, R) ||
		    (u->kind == U_AGG && !(pc->ttft_slo_s > 0)))
			return 0;
		int64_t ran = res.max_concurrent < cap ? res.max_concurrent : cap, next = 1;
		while (next * 2 < ran)
			next *= 2;
		if (next >= cap || ran <= 1)
			return 0;
		cap = next;
	}
	return 0;
}

/* The fewest replicas of u that meet the targets, no more than `most`
 * (u->best_r; 0 when none does). */
static int search_r(struct cap_search *c, struct unit *u, int most, struct llmsim_err *err)
{
	int R = u->r_lo, miss = 0, rc;
	const struct llmsim_plan_serve_cfg *pc = c->s->pc;
	if (pc->load == LLMSIM_LOAD_CONCURRENCY && pc->concurrency < most)
		most = (int)pc->concurrency; /* a replica more than users stays idle */
	if (R > most)
		return 0;
	for (;;) {
		if ((rc = eval(c, u, R, err)) < 0)
			return rc;
		if (rc)
			break;
		miss = R;
		if (R >= most)
			return 0;
		int next = (int)ceil(R * 1.5);
		R = next > R + 1 ? next : R + 1;
		R = R < most ? R : most;
	}
	int lo = miss + 1; /* the fewest lies in [lo, R] */
	while (lo < R) {
		int mid = lo + (R - lo) / 2;
		if ((rc = eval(c, u, mid, err)) < 0)
			return rc;
		if (rc)
			R = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* The bounds of u: one request alone, then (under a rate) the saturated
 * rate. 0 when it may meet the targets, 1 when a bound drops it. */
static int bounds(struct cap_search *c, struct unit *u, struct llmsim_err *err)
{
	struct plan_serve_search *s = c->s;
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	struct llmsim_serve_result res;
	struct llmsim_err e2 = {0};
	int rc = run(s, u, 1, 1, 1, 1, &res, &e2);
	if (rc == LLMSIM_ENOFIT) {
		s->out->why[LLMSIM_SERVE_KV]++;
		return 1;
	}
	if (rc) {
		*err = e2;
		return rc;
	}
	u->ttft1_s = res.ttft_s.max;
	u->tpot1_s = res.tpot_s.max;
	/* the fastest figures, for a target no layout can meet */
	if (u->kind != U_DECODE && (!s->out->fastest_ttft_s || u->ttft1_s < s->out->fastest_ttft_s))
		s->out->fastest_ttft_s = u->ttft1_s;
	if (u->kind != U_PREFILL && (!s->out->fastest_tpot_s || u->tpot1_s < s->out->fastest_tpot_s))
		s->out->fastest_tpot_s = u->tpot1_s;
	int miss_ttft = u->kind != U_DECODE && pc->ttft_slo_s > 0 &&
			u->ttft1_s + (u->kind == U_PREFILL ? u->xfer_s[0] : 0) > pc->ttft_slo_s;
	int miss_tpot = u->kind != U_PREFILL && pc->tpot_slo_s > 0 && u->tpot1_s > pc->tpot_slo_s;
	if (miss_ttft || miss_tpot) {
		s->out->why[LLMSIM_SERVE_BOUND]++;
		return 1;
	}
	u->r_lo = 1;
	if (pc->load == LLMSIM_LOAD_RATE) {
		int64_t cap = u->kind == U_PREFILL ? 256 : top_cap(s);
		int64_t n = 4 * cap > 300 ? 4 * cap : 300;
		rc = run(s, u, 1, cap, 1, n, &res, &e2);
		if (rc == LLMSIM_ENOFIT) {
			s->out->why[LLMSIM_SERVE_KV]++;
			return 1;
		}
		if (rc) {
			*err = e2;
			return rc;
		}
		u->mu = res.requests_per_s;
		if (!(u->mu > 0))
			return 1;
		double r = ceil(pc->rate_per_s / u->mu);
		u->r_lo = r < LLMSIM_MAX_GPUS ? (int)r : LLMSIM_MAX_GPUS;
	}
	return 0;
}

static int add_unit(struct cap_search *c, enum unit_kind kind, const struct llmsim_infer_cfg *ic)
{
	if (c->nu == c->cap) {
		int cap = c->cap ? 2 * c->cap : 32;
		void *p = realloc(c->u, (size_t)cap * sizeof *c->u);
		if (!p)
			return LLMSIM_ENOMEM;
		c->u = p;
		c->cap = cap;
	}
	struct unit *u = &c->u[c->nu++];
	memset(u, 0, sizeof *u);
	u->kind = kind;
	u->ic = *ic;
	u->g = ic->tp * ic->pp;
	return 0;
}

/* A layout in types w/kv that holds its weights and one request's cache:
 * 0, or -1 (counted as pruned). */
static int layout(struct plan_serve_search *s, int tp, int pp, int ep, enum llmsim_dtype w,
		  enum llmsim_dtype kv, struct llmsim_infer_cfg *ic, int count)
{
	enum llmsim_serve_why why = LLMSIM_SERVE_LAYOUT;
	llmsim_infer_cfg_init(ic, s->pc->model, s->pc->gpu);
	ic->weight_dtype = w;
	ic->kv_dtype = kv;
	if (!plan_serve_dtype_ok(s, w))
		why = LLMSIM_SERVE_DTYPE;
	else if (!llmsim_infer_layout(ic, tp * pp, tp, pp, ep, NULL, NULL) &&
		 !plan_serve_fits(s, ic, &why))
		return 0;
	if (count) {
		s->out->why[why]++;
		s->out->pruned++;
	}
	return -1;
}

/* Every unit: aggregated tp x pp (x ep), and the pools' tp x 1. */
static int units(struct cap_search *c)
{
	struct plan_serve_search *s = c->s;
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	const struct llmsim_model *m = pc->model;
	int domain = llmsim_gpu_nvlink_domain(pc->gpu), rc;
	int pools = !pc->no_disagg && pc->tp <= 0 && pc->pp <= 0 && pc->output >= 2 &&
		    pc->load == LLMSIM_LOAD_RATE;
	for (int tp = 1; tp <= domain && tp <= LLMSIM_MAX_GPUS; tp *= 2)
		for (int w = 0; w < s->nw; w++)
			for (int k = 0; k < s->nkv; k++) {
				struct llmsim_infer_cfg ic;
				for (int ep = 1; ep <= tp; ep *= 2) {
					if (ep > 1 && (!m->has_moe || m->moe.experts % ep))
						break;
					if (pc->tp > 0 && tp != pc->tp)
						break;
					/* the fewest stages that hold the weights */
					for (int pp = 1; pp <= 8 && pp <= m->layers && tp * pp <= LLMSIM_MAX_GPUS;
					     pp *= 2) {
						if (pc->pp > 0 && pp != pc->pp)
							continue;
						if (layout(s, tp, pp, ep, s->w[w], s->kv[k], &ic,
							   pp == 8 || 2 * pp > m->layers))
							continue;
						if ((rc = add_unit(c, U_AGG, &ic)))
							return rc;
						break;
					}
				}
				if (pools && !layout(s, tp, 1, 1, s->w[w], s->kv[k], &ic, 0)) {
					if ((rc = add_unit(c, U_PREFILL, &ic)) || (rc = add_unit(c, U_DECODE, &ic)))
						return rc;
				}
			}
	s->out->units = c->nu;
	return 0;
}

static int cmp_lo(const void *a, const void *b)
{
	const struct unit *x = *(struct unit *const *)a, *y = *(struct unit *const *)b;
	long long nx = (long long)x->r_lo * x->g, ny = (long long)y->r_lo * y->g;
	return (nx > ny) - (nx < ny);
}

/* The pairs of pools that meet: a row each. */
static int pair_pools(struct cap_search *c, struct llmsim_err *err)
{
	struct plan_serve_search *s = c->s;
	int domain = llmsim_gpu_nvlink_domain(s->pc->gpu);
	for (int i = 0; i < c->nu; i++) {
		const struct unit *p = &c->u[i];
		if (p->kind != U_PREFILL || !p->best_r)
			continue;
		for (int j = 0; j < c->nu; j++) {
			const struct unit *d = &c->u[j];
			if (d->kind != U_DECODE || !d->best_r ||
			    d->ic.weight_dtype != p->ic.weight_dtype || d->ic.kv_dtype != p->ic.kv_dtype)
				continue;
			struct llmsim_plan_serve_row row;
			int n = p->best_r * p->g + d->best_r * d->g, net = n > domain;
			plan_serve_disagg_row(s, &p->ic, p->best_r, &p->best, &d->ic, d->best_r, &d->best,
					      d->best_cap, net, p->xfer_s[net], &row);
			row.keeps_up = 1; /* both pools do */
			steady(s, &row);
			plan_serve_judge(s, &row);
			int rc = plan_serve_push(s, &row);
			if (rc)
				return llmsim_err_set(err, rc, "out of memory");
		}
	}
	return 0;
}

static void impossible(struct plan_serve_search *s)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	struct llmsim_plan_serve_out *o = s->out;
	int qp = (int)lround(100 * o->quantile);
	if (pc->tpot_slo_s > 0 && o->fastest_tpot_s > pc->tpot_slo_s) {
		o->impossible = 1;
		snprintf(o->reason, sizeof o->reason,
			 "no number of %s GPUs meets TPOT p%d <= %.4g s: one request alone takes "
			 "%.4g s a token on the fastest layout",
			 pc->gpu->name, qp, pc->tpot_slo_s, o->fastest_tpot_s);
	} else if (pc->ttft_slo_s > 0 && o->fastest_ttft_s > pc->ttft_slo_s) {
		o->impossible = 1;
		snprintf(o->reason, sizeof o->reason,
			 "no number of %s GPUs meets TTFT p%d <= %.4g s: one request alone waits "
			 "%.4g s for its first token on the fastest layout",
			 pc->gpu->name, qp, pc->ttft_slo_s, o->fastest_ttft_s);
	}
}

int plan_serve_capacity(struct plan_serve_search *s, struct llmsim_err *err)
{
	struct cap_search c = {.s = s};
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	struct unit **order = NULL;
	int rc = units(&c), n = 0;
	if (rc) {
		rc = llmsim_err_set(err, rc, "out of memory");
		goto out;
	}
	for (int i = 0; i < c.nu && !rc; i++) {
		struct unit *u = &c.u[i];
		if (u->kind == U_PREFILL) {
			for (int net = 0; net < 2 && !rc; net++)
				rc = plan_serve_kv_transfer(s, u->ic.kv_dtype, u->ic.tp, net, &u->xfer_s[net],
							    err);
			if (rc)
				break;
		}
		rc = bounds(&c, u, err);
		if (rc > 0) {
			s->out->units_pruned++;
			u->r_lo = 0;
			rc = 0;
		}
	}
	if (rc)
		goto out;
	impossible(s);
	if (s->out->impossible)
		goto out;
	order = malloc((size_t)(c.nu ? c.nu : 1) * sizeof *order);
	if (!order) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < c.nu; i++)
		if (c.u[i].r_lo > 0 && c.u[i].kind == U_AGG)
			order[n++] = &c.u[i];
	qsort(order, (size_t)n, sizeof *order, cmp_lo);
	for (int i = 0; i < n && !rc; i++) {
		struct unit *u = order[i];
		int most = LLMSIM_MAX_GPUS / u->g;
		if (c.best_n) /* no more GPUs than the best so far (ties kept) */
			most = c.best_n / u->g < most ? c.best_n / u->g : most;
		if (u->r_lo > most) {
			s->out->units_pruned++;
			continue;
		}
		rc = search_r(&c, u, most, err);
		if (!rc && u->best_r && (!c.best_n || u->best_r * u->g < c.best_n))
			c.best_n = u->best_r * u->g;
	}
	/* the pools: each against its own target, bounded by the best so far
	 * less the other pool's smallest bound */
	int lo[3] = {0, LLMSIM_MAX_GPUS, LLMSIM_MAX_GPUS};
	for (int i = 0; i < c.nu; i++)
		if (c.u[i].r_lo > 0 && c.u[i].kind != U_AGG && c.u[i].r_lo * c.u[i].g < lo[c.u[i].kind])
			lo[c.u[i].kind] = c.u[i].r_lo * c.u[i].g;
	c.network = c.best_n > llmsim_gpu_nvlink_domain(pc->gpu);
	for (int i = 0; i < c.nu && !rc; i++) {
		struct unit *u = &c.u[i];
		if (u->kind == U_AGG || !u->r_lo)
			continue;
		int other = lo[u->kind == U_PREFILL ? U_DECODE : U_PREFILL];
		int room = (c.best_n ? c.best_n : LLMSIM_MAX_GPUS) - other;
		int most = room / u->g;
		if (u->r_lo > most) {
			s->out->units_pruned++;
			continue;
		}
		rc = search_r(&c, u, most, err);
	}
	if (!rc)
		rc = pair_pools(&c, err);
	if (!rc)
		for (int64_t i = 0; i < s->out->nrows; i++)
			if (s->out->rows[i].feasible &&
			    (!s->out->gpus_needed || s->out->rows[i].gpus < s->out->gpus_needed))
				s->out->gpus_needed = s->out->rows[i].gpus;
out:
	free(order);
	free(c.u);
	return rc;
}
