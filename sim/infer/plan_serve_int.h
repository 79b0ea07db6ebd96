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

/* The disaggregated layouts (plan_serve_disagg.c). */
int plan_serve_disagg(struct plan_serve_search *s, struct llmsim_err *err);

#endif
