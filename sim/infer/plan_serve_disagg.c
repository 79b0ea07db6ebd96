/*
 * plan_serve_disagg.c - disaggregated prefill and decode (see
 * plan_serve.h): a pool of prefill replicas and a pool of decode replicas
 * splitting the GPUs, each simulated with the serving engine: the prefill
 * replica with one-token requests (its TTFT is a request's first token),
 * the decode replica with requests that arrive holding their prompt's
 * cache (serve.h: prefilled). Between them each request's KV cache is sent
 * once, a send/recv priced by the GPU model.
 *
 * Loads: under a rate both pools get their share of it; under a closed
 * loop the decode pool runs the users (their time in the prefill pool is
 * not taken off its concurrency: an upper bound on throughput) and the
 * prefill pool the request rate that gives; offline, each pool runs its
 * share of the requests at once. Under every load the deployment goes at
 * the slower pool's request rate.
 *
 * Splits tried: every prefill-pool size of 1..N-1 GPUs up to 16 GPUs, else
 * eighths of N; replicas of tp within an NVLink domain; pp 1, ep 1.
 */
#include "plan_serve_int.h"

#include <math.h>
#include <string.h>

#include "sim/graph.h"

/* Each GPU of the prefill replica sends its share of the heads (the MLA latent is split
 * between the ranks that hold it). */
int plan_serve_kv_transfer(const struct plan_serve_search *s, enum llmsim_dtype kvdt, int tp_p,
			   int network, double *t, struct llmsim_err *err)
{
	const struct llmsim_model *m = s->pc->model;
	double total = (double)s->pc->prompt * llmsim_model_kv_bytes_per_token(m, kvdt);
	int senders = m->has_mla || m->kv_heads >= tp_p ? tp_p : m->kv_heads;
	struct llmsim_op op;
	struct llmsim_pred p;
	llmsim_graph_coll_op(&op, LLMSIM_COLL_SENDRECV, total / senders, 2, network ? 2 : 1,
			     LLMSIM_DT_BF16);
	int rc = llmsim_predict(s->pc->gpu, &op, &p, err);
	*t = rc ? 0 : p.time_s;
	return rc;
}

void plan_serve_shift(struct llmsim_pcts *p, double dt)
{
	p->mean += dt, p->p50 += dt, p->p90 += dt, p->p99 += dt, p->max += dt;
}

int plan_serve_run_prefill(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
			   int replicas, double rate, struct llmsim_serve_result *res,
			   struct llmsim_err *err)
{
	struct llmsim_serve_cfg sc;
	plan_serve_engine(s, ic, replicas, 256, &sc);
	sc.output.a = 1;
	sc.concurrency = 0;
	sc.rate_per_s = rate > 0 ? rate / replicas : 0;
	return llmsim_serve_run(&sc, res, err);
}

/* The decode pool of one split at one cap, and the row it makes; *bound
 * is cleared when the cap never bound (a larger one runs the same). */
static int one(struct plan_serve_search *s, const struct llmsim_infer_cfg *ip, int P,
	       const struct llmsim_infer_cfg *id, int D, int64_t cap,
	       const struct llmsim_serve_result *pre_rate, int network, double xfer, int *bound,
	       struct llmsim_err *err)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	struct llmsim_serve_cfg sc;
	struct llmsim_serve_result dec, pre;
	struct llmsim_plan_serve_row row;
	struct llmsim_err e2 = {0};
	plan_serve_engine(s, id, D, cap, &sc);
	sc.prefilled = 1;
	int rc = llmsim_serve_run(&sc, &dec, &e2);
	s->out->simulated++;
	s->out->simulated_disagg++;
	if (rc == LLMSIM_ENOFIT) {
		s->out->why[LLMSIM_SERVE_KV]++;
		return 0;
	}
	if (rc) {
		*err = e2;
		return rc;
	}
	*bound = dec.max_concurrent >= cap;
	if (pc->load == LLMSIM_LOAD_RATE) {
		pre = *pre_rate;
	} else {
		/* the prefill pool at the decode pool's request rate (closed
		 * loop), or at once (offline: the slower pool sets the pace) */
		double rate = pc->load == LLMSIM_LOAD_CONCURRENCY ? dec.requests_per_s * D : 0;
		if ((rc = plan_serve_run_prefill(s, ip, P, rate, &pre, &e2))) {
			if (rc == LLMSIM_ENOFIT)
				return 0;
			*err = e2;
			return rc;
		}
	}
	plan_serve_disagg_row(s, ip, P, &pre, id, D, &dec, cap, network, xfer, &row);
	plan_serve_judge(s, &row);
	if ((rc = plan_serve_push(s, &row)))
		return llmsim_err_set(err, rc, "out of memory");
	return 0;
}

void plan_serve_disagg_row(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ip,
			   int P, const struct llmsim_serve_result *pre,
			   const struct llmsim_infer_cfg *id, int D,
			   const struct llmsim_serve_result *dec, int64_t cap, int network,
			   double xfer, struct llmsim_plan_serve_row *row)
{
	(void)s;
	double tps = dec->tokens_per_s * D, rps = dec->requests_per_s * D;
	/* the slower pool sets the pace */
	double prps = pre->requests_per_s * P;
	if (prps > 0 && prps < rps) {
		tps *= prps / rps;
		rps = prps;
	}
	*row = (struct llmsim_plan_serve_row){
		.disagg = 1, .replicas = D, .tp = id->tp, .pp = 1, .ep = 1, .p_replicas = P,
		.p_tp = ip->tp, .weight_dtype = id->weight_dtype, .kv_dtype = id->kv_dtype,
		.max_batch = cap, .ttft_s = pre->ttft_s, .tpot_s = dec->tpot_s, .e2e_s = dec->e2e_s,
		.kv_transfer_s = xfer, .kv_over_network = network, .tokens_per_s = tps,
		.requests_per_s = rps, .mean_batch = dec->mean_batch,
		.preemptions = dec->preemptions + pre->preemptions,
		.weight_bytes_per_gpu = fmax(dec->mem.weight_bytes, pre->mem.weight_bytes),
		.kv_capacity_tokens = dec->kv_capacity_tokens,
		.gpus = P * ip->tp + D * id->tp,
	};
	plan_serve_shift(&row->ttft_s, xfer);
	plan_serve_shift(&row->e2e_s, pre->ttft_s.mean + xfer);
}

/* A replica layout of tp GPUs (pp 1, ep 1) in types w/kv, or -1. */
static int layout(struct plan_serve_search *s, int tp, enum llmsim_dtype w, enum llmsim_dtype kv,
		  struct llmsim_infer_cfg *ic)
{
	llmsim_infer_cfg_init(ic, s->pc->model, s->pc->gpu);
	ic->weight_dtype = w;
	ic->kv_dtype = kv;
	enum llmsim_serve_why why;
	if (llmsim_infer_layout(ic, tp, tp, 1, 1, NULL, NULL))
		return -1;
	return plan_serve_fits(s, ic, &why);
}

int plan_serve_disagg(struct plan_serve_search *s, struct llmsim_err *err)
{
	const struct llmsim_plan_serve_cfg *pc = s->pc;
	int N = pc->gpus;
	if (N < 2 || pc->output < 2)
		return 0;
	int domain = llmsim_gpu_nvlink_domain(pc->gpu), network = N > domain;
	int tps[32], ntp = 0;
	for (int t = 1; t <= N && t <= domain && ntp < 32; t *= 2)
		tps[ntp++] = t;
	int splits[16], nsplit = 0;
	for (int k = 1; N <= 16 ? k < N : k < 8; k++)
		if (N <= 16 || (N * k) % 8 == 0)
			splits[nsplit++] = N <= 16 ? k : N * k / 8;
	for (int w = 0; w < s->nw; w++) {
		if (!plan_serve_dtype_ok(s, s->w[w]))
			continue;
		for (int k = 0; k < s->nkv; k++) {
			struct llmsim_infer_cfg lay[32];
			int ok[32];
			for (int i = 0; i < ntp; i++)
				ok[i] = !layout(s, tps[i], s->w[w], s->kv[k], &lay[i]);
			for (int a = 0; a < ntp; a++) {
				if (!ok[a])
					continue;
				double xfer;
				int rc = plan_serve_kv_transfer(s, s->kv[k], tps[a], network, &xfer, err);
				if (rc)
					return rc;
				for (int g = 0; g < nsplit; g++) {
					int Gp = splits[g], Gd = N - splits[g];
					if (Gp % tps[a])
						continue;
					int P = Gp / tps[a];
					struct llmsim_serve_result pre;
					memset(&pre, 0, sizeof pre);
					if (pc->load == LLMSIM_LOAD_RATE) {
						struct llmsim_err e2 = {0};
						rc = plan_serve_run_prefill(s, &lay[a], P, pc->rate_per_s, &pre, &e2);
						if (rc == LLMSIM_ENOFIT)
							continue;
						if (rc) {
							*err = e2;
							return rc;
						}
					}
					for (int d = 0; d < ntp; d++) {
						if (!ok[d] || Gd % tps[d])
							continue;
						int D = Gd / tps[d];
						int64_t caps[PLAN_SERVE_MAX_CAPS];
						int ncap = plan_serve_caps(s, D, caps);
						int bound = 1;
						for (int c = 0; c < ncap && bound; c++)
							if ((rc = one(s, &lay[a], P, &lay[d], D, caps[c],
								      &pre, network, xfer, &bound, err)))
								return rc;
					}
				}
			}
		}
	}
	return 0;
}
