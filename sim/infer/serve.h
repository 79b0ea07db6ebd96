/*
 * serve.h - a discrete-event simulation of a vLLM-like serving engine on
 * one replica: requests arrive (Poisson at a rate, or all at once), an
 * iteration-level scheduler batches every running sequence's next token
 * with new prompts' prefill tokens under a per-step token budget, the KV
 * cache is allocated contiguously or in pages, and the newest sequence is
 * preempted (and later recomputed) when the cache runs out. Each step is
 * priced by the GPU model through llmsim_infer_step.
 */
#ifndef LLMSIM_SERVE_H
#define LLMSIM_SERVE_H

#include <stdint.h>
#include "dist.h"
#include "infer.h"
#include "kv.h"

/* Admission: vLLM admits a sequence when its prompt fits now and preempts
 * (recomputes) the newest when decoding runs out of blocks; TensorRT-LLM's
 * default GUARANTEED_NO_EVICT admits only when every running sequence and
 * the new one can reach their full length, and never preempts. */
enum llmsim_sched { LLMSIM_SCHED_VLLM, LLMSIM_SCHED_NO_EVICT, LLMSIM_SERVE_SCHED_COUNT };

struct llmsim_serve_cfg {
	struct llmsim_infer_cfg infer; /* the replica (runtime is forced to graph) */
	int64_t requests;
	double rate_per_s;            /* Poisson arrivals; 0: offline, all at t=0 */
	struct llmsim_dist prompt, output; /* lengths, when no list is given */
	const int64_t *prompt_list, *output_list; /* lengths from a file (cycled) */
	int64_t nlist;
	enum llmsim_kv_alloc kv_alloc;
	int64_t reserve_tokens;       /* contiguous: slots reserved per sequence; 0: its
				       * prompt + the workload's longest output */
	int64_t max_batch;            /* running sequences at most (vLLM max_num_seqs) */
	int64_t max_tokens;           /* per-step token budget (max_num_batched_tokens) */
	int chunked_prefill;          /* split prompts over steps to fill the budget */
	enum llmsim_sched sched;
	uint64_t seed;
	int64_t concurrency;          /* > 0: a closed loop of this many users: the first
				       * requests arrive at t = 0, each next one when a
				       * request completes (rate_per_s is then unused) */
	int prefilled;                /* a disaggregated decode replica: every request
				       * arrives with its prompt's KV cache and its first
				       * token (a prefill replica made them): TTFT 0 here;
				       * a preempted one prefills again in place */
	/* optional: called every few thousand engine steps with the requests
	 * done so far (the CLI's progress line on a terminal); NULL: none */
	void (*progress)(void *ctx, int64_t done, int64_t total);
	void *progress_ctx;
	struct llmsim_timeline *timeline; /* NULL, or where the run records its engine
				       * steps (prefill and decode tokens in args) and
				       * the spans of its first timeline_requests
				       * requests (sim/timeline.h; reset first) */
	int64_t timeline_requests;
};

/* Defaults: vLLM's max_num_seqs 256, a budget of 8192 tokens, paged KV,
 * offline, seed 1. */
void llmsim_serve_cfg_init(struct llmsim_serve_cfg *cfg, const struct llmsim_model *model,
			   const struct llmsim_gpu *gpu);

struct llmsim_pcts {
	double mean, p50, p90, p99, max;
};

struct llmsim_serve_result {
	int64_t requests_done;
	int64_t prompt_tokens, output_tokens; /* of the requests (not recomputed) */
	int64_t generated_tokens;     /* tokens the engine emitted */
	int64_t steps, preemptions, max_concurrent;
	double mean_batch;            /* running sequences per step, averaged over steps */
	double duration_s;            /* first arrival to last completion */
	double tokens_per_s, requests_per_s;
	struct llmsim_pcts ttft_s, tpot_s, e2e_s;
	double kv_waste_fraction;     /* time-averaged (reserved - used) / reserved */
	double kv_used_fraction;      /* time-averaged used / pool */
	int64_t kv_capacity_tokens;
	int64_t reserve_tokens;       /* contiguous: the largest reservation of a sequence */
	double busy_s;                /* time spent in steps */
	double flops;                 /* FLOPs of the steps (one TP rank, every pipeline stage) */
	double load_duty;             /* the load the steps were priced in (the
				       * power limit's clock, sim/predict.c):
				       * busy share of the run, see below */
	int64_t priced;               /* distinct step parts priced by the GPU model */
	struct llmsim_infer_mem mem;
};

/* Run the simulation. Fails on a bad configuration, a request that can
 * never fit in the KV cache, or a GPU-model error. Unless cfg->infer sets
 * a load_duty, a GPU with a power-capped clock is simulated twice: at its
 * burst clock, then with its steps priced in the load that run showed
 * (busy time over duration, scaled down when the run is shorter than the
 * power controller's window). */
int llmsim_serve_run(const struct llmsim_serve_cfg *cfg, struct llmsim_serve_result *res,
		     struct llmsim_err *err);

const char *llmsim_sched_name(enum llmsim_sched s);
int llmsim_sched_parse(const char *s);

/* Mean and percentiles (base/stats.h; the array is sorted in place); all
 * zero when n is 0. */
void llmsim_pcts_compute(double *v, int64_t n, struct llmsim_pcts *out);

#endif
