/*
 * serve.h - a discrete-event simulation of a vLLM-like serving engine on
 * one replica: requests arrive (Poisson at a rate, or all at once), an
 * iteration-level scheduler batches every running sequence's next token
 * with new prompts' prefill tokens under a per-step token budget, the KV
 * cache is allocated contiguously or in pages, and the newest sequence is
 * preempted (and later recomputed) when the cache runs out. Each step is
 * priced by the GPU model through llmsim_infer_step. The engine may be one
 * of today's (vLLM V1, SGLang, TensorRT-LLM: enum llmsim_server), with a
 * prefix cache and speculative decoding (struct llmsim_serve_engine).
 */
#ifndef LLMSIM_SERVE_H
#define LLMSIM_SERVE_H

#include <stdint.h>
#include "dist.h"
#include "infer.h"
#include "kv.h"
#include "spec.h"

/* Admission: vLLM admits a sequence when its prompt fits now and preempts
 * (recomputes) the newest when decoding runs out of blocks; TensorRT-LLM's
 * default GUARANTEED_NO_EVICT admits only when every running sequence and
 * the new one can reach their full length, and never preempts. */
enum llmsim_sched { LLMSIM_SCHED_VLLM, LLMSIM_SCHED_NO_EVICT, LLMSIM_SERVE_SCHED_COUNT };

/* Whose engine runs the replica (llmsim_serve_server sets its defaults;
 * serve_server.c cites each):
 *   generic  every step one CUDA graph, the scheduler and budget as given
 *            (llmsim's engine before the named ones; the default);
 *   vllm     vLLM V1: chunked prefill mixed with decodes under
 *            max_num_batched_tokens, prefix caching, piecewise CUDA graphs
 *            captured for 1, 2, 4, 8..256 by 8, 272..512 by 16 tokens
 *            (a step pads to the next; larger ones run without a graph);
 *   sglang   SGLang: prefill steps first, decodes paused while one runs (no
 *            mixed chunks by default), chunked_prefill_size, the radix
 *            cache, decode graphs for 1, 2, 4, 8, 12, 16..256 by 8 sequences;
 *   trtllm   TensorRT-LLM: in-flight batching of context and generation
 *            requests without chunking, GUARANTEED_NO_EVICT admission,
 *            max_num_tokens, every generation step a captured graph. */
enum llmsim_server {
	LLMSIM_SERVER_GENERIC,
	LLMSIM_SERVER_VLLM,
	LLMSIM_SERVER_SGLANG,
	LLMSIM_SERVER_TRTLLM,
	LLMSIM_SERVER_COUNT
};

/* Speculative decoding inside the engine (spec.h prices its parts): each
 * decoding sequence verifies gamma + 1 (Medusa: tree) query tokens a step
 * and keeps 1 + the accepted ones, position i accepted with probability
 * alpha[i-1] given all before it were (drawn per sequence and step). */
struct llmsim_serve_spec {
	int gamma;                      /* draft tokens, Medusa heads or MTP depth; 0: none */
	enum llmsim_spec_kind kind;
	double alpha[LLMSIM_SPEC_MAX];  /* acceptance per position */
	int nalpha;                     /* 1: alpha[0] for every position; else gamma */
	int tree;                       /* MEDUSA: candidates verified (0: gamma + 1) */
	const struct llmsim_model *draft; /* DRAFT: the draft model, on the replica's GPUs */
};

/* What an engine does beyond the scheduler and budget. */
struct llmsim_serve_engine {
	enum llmsim_server server;
	double prefix_share;            /* fraction of each prompt already in the prefix
					 * cache (whole blocks; one prefix shared by every
					 * request, held once): prefill computes the rest */
	struct llmsim_serve_spec spec;
};

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
	struct llmsim_serve_engine eng; /* zero: the generic engine, no prefix cache, no
				       * speculation */
};

/* Set cfg's engine to s with that engine's defaults: scheduler, chunked
 * prefill and token budget (max_batch is left as it is). */
void llmsim_serve_server(struct llmsim_serve_cfg *cfg, enum llmsim_server s);
const char *llmsim_server_name(enum llmsim_server s);
int llmsim_server_parse(const char *s);  /* -1 if unknown */
/* The size a step of n runs as in cfg's engine (vLLM: n tokens; SGLang:
 * n decoding sequences): the next captured size, or n itself when none is
 * as large (then *graph = 0: no graph) or the engine captures every size
 * (generic, trtllm). */
int64_t llmsim_serve_graph_size(const struct llmsim_serve_cfg *cfg, int64_t n, int *graph);

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
