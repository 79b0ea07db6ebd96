/*
 * plan_serve_int.h - what the files of the serving plan share: the search
 * state and the helpers that turn a layout into engine runs and rows.
 */
#ifndef LLMSIM_PLAN_SERVE_INT_H
#define LLMSIM_PLAN_SERVE_INT_H

#include "plan_serve.h"

#define PLAN_SERVE_MAX_CAPS 24

struct plan_serve_search {
	const struct llmsim_plan_serve_cfg *pc;
	struct llmsim_plan_serve_out *out;
	int64_t cap;                    /* rows allocated */
	enum llmsim_dtype w[4], kv[2];  /* types searched */
	int nw, nkv;
};

int plan_serve_push(struct plan_serve_search *s, const struct llmsim_plan_serve_row *row);
/* Quantiles, feasibility, the miss, per-GPU and per-user rates; counts. */
void plan_serve_judge(const struct plan_serve_search *s, struct llmsim_plan_serve_row *r);
/* The value of p at quantile q (0.5, 0.9, 0.99). */
double plan_serve_quantile(const struct llmsim_pcts *p, double q);
/* The engine of one replica of ic out of `replicas`, capped at max_seqs,
 * with its share of the load and its request count. */
void plan_serve_engine(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
		       int replicas, int64_t max_seqs, struct llmsim_serve_cfg *sc);
/* A replica's users of a closed loop: users / replicas, rounded, >= 1. */
int64_t plan_serve_users(int64_t users, int replicas);
/* The running-sequence caps tried; returns how many. */
int plan_serve_caps(const struct plan_serve_search *s, int replicas, int64_t *caps);
/* 0 if ic's weights and one request's KV fit; else -1 and why. */
int plan_serve_fits(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
		    enum llmsim_serve_why *why);
/* The GPU runs weights of type w. */
int plan_serve_dtype_ok(const struct plan_serve_search *s, enum llmsim_dtype w);

/* The capacity search: the fewest GPUs (plan_serve_capacity.c). */
int plan_serve_capacity(struct plan_serve_search *s, struct llmsim_err *err);

/* One request's KV cache from a prefill replica of tp_p GPUs to a decode
 * replica, over the network or NVLink: its time (plan_serve_disagg.c). */
int plan_serve_kv_transfer(const struct plan_serve_search *s, enum llmsim_dtype kvdt, int tp_p,
			   int network, double *t, struct llmsim_err *err);
/* A prefill replica's run (one-token requests) at its share of a request
 * rate (rate > 0), or offline. */
int plan_serve_run_prefill(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ic,
			   int replicas, double rate, struct llmsim_serve_result *res,
			   struct llmsim_err *err);
/* Shift every figure of p by dt. */
void plan_serve_shift(struct llmsim_pcts *p, double dt);

/* The row of a prefill pool of P replicas of ip (its run pre) and a
 * decode pool of D of id (its run dec) at cap, the KV cache moved in xfer
 * seconds (over the network when network): the slower pool sets the pace,
 * the transfer is in TTFT. Not judged. */
void plan_serve_disagg_row(const struct plan_serve_search *s, const struct llmsim_infer_cfg *ip,
			   int P, const struct llmsim_serve_result *pre,
			   const struct llmsim_infer_cfg *id, int D,
			   const struct llmsim_serve_result *dec, int64_t cap, int network,
			   double xfer, struct llmsim_plan_serve_row *row);

/* The disaggregated layouts (plan_serve_disagg.c). */
int plan_serve_disagg(struct plan_serve_search *s, struct llmsim_err *err);

#endif
