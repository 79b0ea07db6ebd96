/*
 * plan_serve.h - search every way to serve a model on N GPUs and rank them
 * by what users measure: per-request TTFT and TPOT percentiles under a
 * load, simulated with the continuous-batching engine of `serve`
 * (serve.h).
 *
 * Layouts:
 *   aggregated     replicas of tp x pp (x ep) GPUs, each an engine that
 *                  batches prefill and decode (vLLM-like, chunked prefill);
 *   disaggregated  a prefill pool and a decode pool of replicas (tp x 1
 *                  each), the prompt's KV cache sent from the prefill
 *                  replica to a decode replica over NVLink when both pools
 *                  fit one NVLink domain, else over the network (priced as
 *                  a send/recv through llmsim_predict; not overlapped with
 *                  the prefill). A request's TTFT is the prefill pool's
 *                  plus the transfer; its TPOT the decode pool's.
 * For each layout and allowed weight and KV type, the engine's running
 * sequences (max_num_seqs) are swept over powers of two. Weight and KV
 * types other than bf16 are searched only when allowed.
 *
 * The load, for the whole deployment, split evenly over replicas:
 *   rate          Poisson arrivals at rate_per_s requests/s;
 *   concurrency   that many users in a closed loop (each sends its next
 *                 request when the previous completes);
 *   offline       every request at t = 0 (a batch job: TTFT is queueing).
 * Every replica is simulated with `requests` requests (at least 8 per
 * user of its share, or 4 per sequence it may run, offline).
 *
 * Ranking: configurations that meet both targets (at slo_quantile) come
 * first; among them by output tokens/s per GPU, except under a rate, which
 * fixes the throughput of every configuration that keeps up (whose
 * throughput is within the expected error of the best): there those that
 * keep up come first, by tokens/s per user (1 / mean TPOT). With no target
 * the ranking is by throughput only, and no row "meets" anything (meeting
 * needs a target). Ties break on the tighter TTFT, then TPOT, at the target
 * quantile. The Pareto front of tokens/s per GPU against tokens/s per user
 * is marked on the rows (in a capacity search: at each GPU count).
 *
 * The capacity question (gpus = 0): the fewest GPUs that serve the load
 * within the targets (plan_serve_capacity.c). Every replica layout
 * (aggregated tp x pp x ep, a prefill pool's or a decode pool's tp, each in
 * every allowed type) is a unit; its replica count R sets the share of the
 * load each replica sees, so a unit is searched over R alone, and the two
 * pools of a disaggregated deployment separately (TTFT is the prefill
 * pool's plus the transfer, TPOT the decode pool's). Bounds prune before
 * simulating: a unit whose batch-1 TPOT or TTFT misses its target misses it
 * at any batch; a replica serves at most its saturated request rate (an
 * offline run), which bounds R from below; a unit whose bound is past the
 * best count found so far is skipped. Each (unit, R, cap) is simulated at
 * most once and reused across GPU counts; R is searched by doubling, then
 * bisection (assumed: more replicas never make a replica slower).
 */
#ifndef LLMSIM_PLAN_SERVE_H
#define LLMSIM_PLAN_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include "sim/expected_error.h"
#include "infer.h"
#include "serve.h"

enum llmsim_serve_load { LLMSIM_LOAD_OFFLINE, LLMSIM_LOAD_RATE, LLMSIM_LOAD_CONCURRENCY };

struct llmsim_plan_serve_cfg {
	const struct llmsim_model *model;
	const struct llmsim_gpu *gpu;
	int gpus;
	int64_t prompt, output;         /* tokens of every request */
	enum llmsim_serve_load load;
	double rate_per_s;              /* LLMSIM_LOAD_RATE: requests/s, all replicas */
	int64_t concurrency;            /* LLMSIM_LOAD_CONCURRENCY: users, all replicas */
	int64_t requests;               /* simulated per replica, at least (0: 300) */
	double ttft_slo_s, tpot_slo_s;  /* 0: no target */
	double slo_quantile;            /* 0.5, 0.9 or 0.99 (0: 0.99) */
	unsigned weight_dtypes;         /* bit per enum llmsim_dtype; 0: bf16 only */
	unsigned kv_dtypes;             /* as above; 0: bf16 only */
	int64_t max_batch;              /* largest max_num_seqs tried (0: 256) */
	int no_disagg;                  /* aggregated layouts only */
	int tp, pp;                     /* > 0: aggregated replicas of that degree only */
	double usd_per_gpu_hour;        /* > 0: the cost of a GPU, for each row's cost per
					 * million output tokens (0: not priced) */
	struct llmsim_serve_engine engine; /* how every replica's engine runs (serve.h);
					 * zero: vLLM-like, chunked prefill, 8192 tokens */
	/* optional: called after each simulation with the counts so far (the
	 * CLI's progress line on a terminal); NULL: none */
	void (*progress)(void *ctx, int64_t simulated, int64_t pruned);
	void *progress_ctx;
};

/* Why a configuration was dropped. */
enum llmsim_serve_why {
	LLMSIM_SERVE_LAYOUT,     /* heads, widths or experts not divisible (pruned) */
	LLMSIM_SERVE_DTYPE,      /* a type the GPU does not run (pruned) */
	LLMSIM_SERVE_WEIGHTS,    /* the weights do not fit (pruned) */
	LLMSIM_SERVE_KV,         /* one request's KV cache does not fit (pruned) */
	LLMSIM_SERVE_TTFT,       /* simulated: misses the TTFT target */
	LLMSIM_SERVE_TPOT,       /* simulated: misses the TPOT target (and not TTFT) */
	LLMSIM_SERVE_LOAD,       /* capacity: simulated, meets both but cannot keep up
				  * (a replica's share past its saturated rate) */
	LLMSIM_SERVE_BOUND,      /* capacity: one request alone misses a target (a
				  * replica layout pruned before any load) */
	LLMSIM_SERVE_WHY_COUNT
};
const char *llmsim_serve_why_name(enum llmsim_serve_why w);
const char *llmsim_serve_why_key(enum llmsim_serve_why w);

struct llmsim_plan_serve_row {
	int disagg;
	int gpus;                       /* of the deployment: replicas x tp x pp (+ the
					 * prefill pool's) */
	int replicas, tp, pp, ep;       /* aggregated replicas, or the decode pool */
	int p_replicas, p_tp;           /* disaggregated: the prefill pool */
	enum llmsim_dtype weight_dtype, kv_dtype;
	int64_t max_batch;              /* max_num_seqs of a (decode) replica */
	struct llmsim_pcts ttft_s, tpot_s, e2e_s;
	double ttft_q_s, tpot_q_s;      /* at the target quantile */
	double kv_transfer_s;           /* disaggregated: one request's cache */
	int kv_over_network;
	double tokens_per_s;            /* output tokens/s, all replicas */
	double tokens_per_s_per_gpu;
	double tokens_per_s_per_user;   /* 1 / mean TPOT */
	double requests_per_s;
	double mean_batch;              /* running sequences per step (decode replicas) */
	int64_t preemptions;
	double weight_bytes_per_gpu;
	int64_t kv_capacity_tokens;     /* per (decode) replica */
	double usd_per_mtok;            /* cost per million output tokens (0: no price) */
	int feasible;                   /* meets both targets (never when none is given) */
	int pareto;                     /* on the front of per-GPU vs per-user tokens/s */
	int keeps_up;                   /* its throughput is within the expected error of the
					 * best row's (under a rate: it keeps up with the load) */
	double miss;                    /* the larger of quantile / target, 0 with no target */
};

struct llmsim_plan_serve_out {
	struct llmsim_plan_serve_row *rows; /* every simulated configuration, ranked (owned) */
	int64_t nrows;
	int64_t simulated, simulated_disagg, pruned, feasible;
	int64_t why[LLMSIM_SERVE_WHY_COUNT];
	int64_t best_agg, best_disagg;  /* indices into rows of the best of each, -1: none */
	int64_t requests_per_replica;   /* of the aggregated replicas */
	struct llmsim_expected_error error;
	double quantile;
	int targets;                    /* a TTFT or TPOT target was given */
	int capacity;                   /* a capacity search (cfg->gpus was 0) */
	int gpus_needed;                /* capacity: the fewest GPUs that meet the targets
					 * (0: none within LLMSIM_MAX_GPUS) */
	int impossible;                 /* capacity: a target below what one request alone
					 * takes on the fastest layout (reason says which) */
	double fastest_ttft_s, fastest_tpot_s; /* capacity: one request alone, the fastest
					 * layout's prefill and decode step */
	int64_t units, units_pruned;    /* capacity: replica layouts, and those a bound
					 * dropped before any load was simulated */
	char reason[320];               /* when none meets the targets (or none fits): why */
	double elapsed_s;
};

/* Search and rank; with cfg->gpus 0, the capacity search (which needs a
 * rate or a concurrency and a target). Fails on bad requests (bounds, a
 * load without its rate, more GPUs than LLMSIM_MAX_GPUS, a price that is
 * not a positive number); nothing fitting or meeting the targets is not a
 * failure (out->feasible, out->impossible, out->reason). Free with
 * llmsim_plan_serve_release. */
int llmsim_plan_serve(const struct llmsim_plan_serve_cfg *cfg, struct llmsim_plan_serve_out *out,
		      struct llmsim_err *err);
void llmsim_plan_serve_release(struct llmsim_plan_serve_out *out);

/* The ranking (negative: x ranks first): meets the targets; the closest
 * of those that miss; the fewest GPUs; under a rate (by_user) keeping up;
 * tokens/s per GPU then per user (by_user: the other way round); then the
 * tighter TTFT, then TPOT, at the target quantile; aggregated, smaller tp,
 * smaller cap. */
int llmsim_plan_serve_cmp(const struct llmsim_plan_serve_row *x,
			  const struct llmsim_plan_serve_row *y, int by_user);

/* "8 x tp1", "2 x tp2 pp2 ep2", disaggregated "P 2 x tp2 + D 1 x tp4". */
void llmsim_plan_serve_layout(const struct llmsim_plan_serve_row *r, char *buf, size_t size);

/* The rows on the Pareto front, by GPU count, then tokens/s per user,
 * lowest first: their indices into out->rows in idx (room for out->nrows);
 * returns how many. */
int64_t llmsim_plan_serve_front(const struct llmsim_plan_serve_out *out, int64_t *idx);

#endif
