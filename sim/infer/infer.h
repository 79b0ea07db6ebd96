/*
 * infer.h - inference on one model replica: the ops of one engine step
 * (prefill chunks and decode tokens batched together), their prices from
 * the GPU model (sim/sim.h), the memory a replica needs per GPU, and the
 * summary of one request shape (TTFT, TPOT, largest batch).
 *
 * A replica is tp x pp GPUs. Tensor parallelism shards attention heads,
 * MLP widths and the vocabulary over tp GPUs (KV heads are replicated when
 * kv_heads < tp; an MLA latent cache is replicated on every rank). Pipeline
 * parallelism gives each stage ceil(layers/pp) layers; one batch crosses
 * the stages in turn (pp - 1 activation send/recvs), so `infer` reports
 * the pipeline's latency and does not overlap micro-batches. Expert
 * parallelism (ep divides tp) places experts/ep experts on each rank, each
 * expert's FFN sharded over tp/ep ranks, with an all-to-all dispatch and
 * combine around the experts (DeepEP style) when ep > 1.
 *
 * Every FLOP and byte comes from llmsim_predict; this module only decides
 * which ops a step runs and how their times add up (CUDA graph or eager).
 */
#ifndef LLMSIM_INFER_H
#define LLMSIM_INFER_H

#include <stdint.h>
#include "base/dtype.h"
#include "base/err.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/graph.h"
#include "sim/sim.h"

enum llmsim_runtime {
	LLMSIM_RT_GRAPH, /* a step is one captured CUDA graph */
	LLMSIM_RT_EAGER, /* the host launches each kernel (PyTorch eager) */
	LLMSIM_RT_COUNT
};

/* The attention choice of the CLI: a prefill and a decode kernel. */
enum llmsim_attn_choice {
	LLMSIM_AC_NAIVE,  /* naive prefill, naive decode */
	LLMSIM_AC_FLASH2, /* FlashAttention-2 prefill and decode (no KV split) */
	LLMSIM_AC_FLASH3, /* FlashAttention-3 prefill, flash-decoding */
	LLMSIM_AC_PAGED,  /* FlashAttention-2 prefill, PagedAttention decode */
	LLMSIM_AC_SDPA,   /* PyTorch's scaled_dot_product_attention: FlashAttention-2
			   * prefill, and its split-KV decode (flash_fwd_splitkv and
			   * combine, as flashdecoding) over a contiguous cache */
	LLMSIM_AC_CUDNN,  /* SDPA's own choice on Hopper and later: cuDNN's fused
			   * attention for prefill (the flash3 class of the op model),
			   * its split-KV decode as flashdecoding */
	LLMSIM_AC_SDPA_MATH, /* PyTorch's math SDPA backend (FP32 upcast) for prefill,
			      * materialized scores at decode */
	LLMSIM_AC_HF_EAGER,  /* HF transformers' eager attention for prefill,
			      * materialized scores at decode */
	LLMSIM_AC_COUNT
};

/* Constants of the inference model that are not GPU efficiencies. Each is
 * an assumption with its reason in infer_params.c; callers may override. */
struct llmsim_infer_params {
	double eager_host_s;      /* host time to launch one kernel from PyTorch eager (HF's modules too) */
	double mem_utilization;   /* fraction of HBM the engine may use (vLLM 0.9) */
	int64_t max_step_tokens;  /* default per-step token budget (activations) */
};
extern const struct llmsim_infer_params llmsim_infer_params_default;

struct llmsim_timeline;

struct llmsim_infer_cfg {
	const struct llmsim_model *model;
	const struct llmsim_gpu *gpu;
	int tp, pp, ep;                /* replica = tp * pp GPUs */
	enum llmsim_dtype act_dtype;   /* activations (bf16) */
	enum llmsim_dtype weight_dtype;/* bf16, fp8, int4, fp4 */
	enum llmsim_dtype kv_dtype;    /* bf16, fp8 */
	enum llmsim_attn_choice attn;
	int64_t block_size;            /* paged KV tokens per block */
	enum llmsim_runtime runtime;
	struct llmsim_lowering lower;  /* the engine and its kernels (sim/graph.h):
					* fused, torch (LLMSIM_ENGINE_DEFAULT, the
					* default of llmsim_infer_cfg_init) or hf; llmsim_infer_cfg_engine sets the
					* engine with its attention and runtime */
	int64_t max_step_tokens;       /* 0: params.max_step_tokens */
	enum llmsim_load load;         /* busy (default): each phase priced inside the
					* load of its own steps back to back (the GPU
					* busy with them: a serving engine, a loop of
					* steps); lone: every op at its burst clock */
	double load_duty;              /* > 0: the load's busy share, as the caller
					* knows it (op.load_duty; a trace's phase): every
					* step priced at it, `load` aside */
	double load_rho;               /* > 0: the tensor intensity of the load
					* (op.load_rho), given; 0: the phase's own */
	enum llmsim_operand_data operand_data; /* what the weights and activations
					* hold (trained, the default) */
	struct llmsim_infer_params params;
	struct llmsim_timeline *timeline; /* NULL, or where llmsim_infer_run records the
					   * run's steps (sim/timeline.h; reset first) */
};

/* Fill cfg with defaults (tp=pp=ep=1, bf16, the default engine
 * LLMSIM_ENGINE_DEFAULT with its attention and runtime as
 * llmsim_infer_cfg_engine sets them, block 16, busy load, trained data)
 * for model and gpu. */
void llmsim_infer_cfg_init(struct llmsim_infer_cfg *cfg,
			   const struct llmsim_model *model,
			   const struct llmsim_gpu *gpu);

/* The engine e with the kernels and runtime it runs: fused: paged
 * attention (vLLM), CUDA graphs; torch: SDPA (FlashAttention-2 prefill,
 * split-KV decode), CUDA graphs (a lean engine captures its steps); hf:
 * eager, SDPA's own backend (cuDNN prefill on Hopper and later,
 * FlashAttention-2 before). */
void llmsim_infer_cfg_engine(struct llmsim_infer_cfg *cfg, enum llmsim_engine e);
/* How an engine's program launches its steps, as measured: HF eager, the
 * lean PyTorch engine and a serving engine in CUDA graphs (the default
 * llmsim_infer_cfg_engine sets; a steps class belongs to it). */
enum llmsim_runtime llmsim_engine_runtime(enum llmsim_engine e);

/* Check the parallel layout and data types against the model and GPU
 * (heads divisible by tp, ep dividing tp and the experts, ...). */
int llmsim_infer_cfg_check(const struct llmsim_infer_cfg *cfg, struct llmsim_err *err);

/* Resolve the CLI's --gpus/--tp/--pp/--ep (0: not given) into cfg and the
 * number of data-parallel replicas: tp defaults to gpus/pp (or 1), gpus to
 * tp*pp; gpus must be a multiple of tp*pp. Then checks the layout. */
int llmsim_infer_layout(struct llmsim_infer_cfg *cfg, int gpus, int tp, int pp, int ep,
			int *replicas, struct llmsim_err *err);

/* The math dtype and weight (GEMM B operand) dtype of the linear layers:
 * fp8 weights run FP8 math where the GPU has it (W8A8), int4 is
 * weight-only (W4A16), fp4 is W4A4 where the GPU has FP4 math. */
void llmsim_infer_gemm_dtypes(const struct llmsim_infer_cfg *cfg,
			      enum llmsim_dtype *math, enum llmsim_dtype *weights);

/* Memory of one GPU of the replica (the busiest pipeline stage). */
struct llmsim_infer_mem {
	double weight_bytes;           /* weights held by one GPU */
	double kv_bytes_per_token;     /* KV cache of one token on one GPU */
	double activation_bytes;       /* peak activations + op workspace */
	double reserve_bytes;          /* HBM the engine leaves unused */
	double kv_capacity_bytes;      /* HBM left for the KV cache */
	int64_t kv_capacity_tokens;    /* kv_capacity_bytes / kv_bytes_per_token */
};
int llmsim_infer_memory(const struct llmsim_infer_cfg *cfg, struct llmsim_infer_mem *mem,
			struct llmsim_err *err);

/* KV tokens one sequence of `len` tokens occupies: paged attention rounds
 * up to whole blocks. */
int64_t llmsim_infer_kv_tokens(const struct llmsim_infer_cfg *cfg, int64_t len);

/* ---- one engine step ---- */

struct llmsim_step {
	int64_t decode_seqs;       /* sequences decoding this step */
	int64_t q_len;             /* query tokens per decoding sequence (1; k+1 verifies) */
	double decode_kv_len;      /* mean KV length of a decoding sequence, incl. its new tokens */
	const struct llmsim_prefill_chunk *prefill;
	int nprefill;
	int64_t logits;            /* rows through the LM head and sampler */
	int layers;                /* 0: all of the model's; else price the first this many
				    * layers only */
	int ends;                  /* with layers > 0: also the embedding, the final norm and
				    * the LM head (and the pipeline sends); without layers
				    * they are always in */
	unsigned parts;            /* LLMSIM_PART_* (sim/graph.h) to price; 0: all */
};

struct llmsim_step_cost {
	double time_s;             /* the step, with launch gaps / host pacing */
	double gpu_s;              /* sum of kernel times */
	double comm_s;             /* collectives and send/recv (inside gpu_s) */
	double flops;
	double hbm_bytes;
	double bytes[LLMSIM_BYTES_CAT_COUNT];
	double time_by_bound_s[LLMSIM_BOUND_COUNT];
	double workspace_bytes;    /* largest op workspace */
	int64_t kernels;
	int64_t tokens;            /* new tokens processed */
	double sm_clock_hz;        /* the SM clock of its ops, weighted by their time */
	double load_duty, load_rho; /* the load its ops were priced in (0: lone) */
};

/* Price one step on one replica: its graph (sim/graph.h) walked, every op
 * through llmsim_predict at cfg's load. */
int llmsim_infer_step(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *step,
		      struct llmsim_step_cost *cost, struct llmsim_err *err);

/* The same, keeping what it walked: the graph (g), each node's prediction
 * (pred[i] of g->node[i]) and how often each section ran (mult). For
 * listings and the comparisons that must show the very ops `infer` prices;
 * pred has room for LLMSIM_GRAPH_MAX. */
int llmsim_infer_step_ops(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *step,
			  struct llmsim_graph *g, struct llmsim_pred *pred,
			  double mult[LLMSIM_SEC_COUNT], struct llmsim_step_cost *cost,
			  struct llmsim_err *err);

/* The kernels of one step (each node's runs, in the order the step runs
 * them, with the gaps and host pacing of cfg's runtime) as events on
 * tl's track from start_s: the ops inside a step's event. */
int llmsim_infer_step_trace(const struct llmsim_infer_cfg *cfg, const struct llmsim_step *s,
			    struct llmsim_timeline *tl, int track, double start_s,
			    struct llmsim_err *err);

/* The bound that takes most of the step's kernel time, and its share. */
enum llmsim_bound llmsim_step_bound(const struct llmsim_step_cost *c, double *share);

/* ---- one request shape ---- */

struct llmsim_infer_req {
	int64_t batch, prompt, output;
};

struct llmsim_phase {
	double time_s;             /* prefill: TTFT; decode: mean step (TPOT) */
	struct llmsim_step_cost cost; /* prefill: all chunks; decode: mean step */
	enum llmsim_bound bound;
	double bound_share;        /* of kernel time */
	double hbm_peak_fraction;  /* achieved HBM bytes/s over peak */
	double flops_peak_fraction;/* achieved FLOP/s over the math dtype's peak */
};

struct llmsim_infer_result {
	double ttft_s, tpot_s, e2e_s, tokens_per_s;
	double kv_bytes_per_token;     /* whole model, one token (all GPUs) */
	double kv_bytes;               /* the batch's cache at the end, per GPU */
	struct llmsim_infer_mem mem;
	int64_t max_batch;             /* largest batch of this shape that fits */
	int decode_points;             /* context lengths priced for TPOT */
	int prefill_steps;             /* chunks the prefill took */
	double load_duty;              /* the largest busy share its phases were priced
					* in (the power limit's clock): 0, lone kernels;
					* each phase's load is in its cost */
	struct llmsim_phase prefill, decode;
};

/* Prefill (chunked by the step token budget, whole sequences per chunk),
 * then output-1 decode steps with the cache growing from prompt+1 to
 * prompt+output-1. TPOT is the mean decode step: every step is priced when
 * there are at most 9, else composite Simpson's rule over 9 context lengths
 * (the step time is smooth in the context). Fails with LLMSIM_ENOFIT when
 * the weights or the batch's cache do not fit. With the busy load (and no
 * load_duty given) on a GPU with a power-capped clock, the run is priced
 * twice: at the burst clock, then each phase inside the load of its own
 * steps back to back: its kernels' share of its wall time (a CUDA graph:
 * about 1; eager: what the host's pacing leaves) and its FLOP rate (the
 * tensor intensity, unless load_rho is given). */
int llmsim_infer_run(const struct llmsim_infer_cfg *cfg, const struct llmsim_infer_req *req,
		     struct llmsim_infer_result *res, struct llmsim_err *err);

/* The load (op.load_duty) a run that keeps the GPU busy busy_s out of
 * duration_s puts on its power controller: the busy share, scaled down
 * when the run is shorter than twice gpu->power_window_s; 0 when the GPU
 * states no power-capped clock. */
double llmsim_infer_load(const struct llmsim_gpu *gpu, double busy_s, double duration_s);

/* The tensor intensity (op.load_rho) of a run that does flops (per GPU,
 * the linear layers' math dtype cfg implies) in busy_s: its FLOP rate over
 * the 16-bit tensor peak at the burst clock, 8-bit FLOPs weighted by
 * their energy (narrow_tensor_energy_relative); at most 1. */
double llmsim_infer_rho(const struct llmsim_infer_cfg *cfg, double flops, double busy_s);

/* Names and parsers (-1 if unknown). */
const char *llmsim_runtime_name(enum llmsim_runtime r);
const char *llmsim_attn_choice_name(enum llmsim_attn_choice a);
int llmsim_attn_choice_parse(const char *s);

#endif
