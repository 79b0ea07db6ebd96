/*
 * train_int.h - internals shared by the files of sim/train/: the model's
 * geometry as training sees it, the evaluation context with its op-price
 * cache, and the per-shape cost blocks the search reuses.
 */
#ifndef LLMSIM_TRAIN_INT_H
#define LLMSIM_TRAIN_INT_H

#include "train.h"
#include "sim/graph.h"
#include "sim/timeline.h"

/* Fixed allowances, stated once (see memory.c). */
#define TRAIN_CONTEXT_BYTES 1.0e9      /* CUDA context, cuBLAS workspaces: the torch
					* engine's (the fused one takes its stack's,
					* cfg.allow) */
#define TRAIN_GRAD_BUCKET_PARAMS 40e6  /* Megatron DDP bucket (params) */
#define TRAIN_DUALPIPE_COMM_SMS 20     /* SMs DeepSeek-V3's all-to-all kernels take
					* (DeepSeek-V3 Technical Report Sec. 3.2.2:
					* "only 20 SMs are sufficient to fully utilize
					* the bandwidths of IB and NVLink") */

/* Transformer Engine's userbuffers defaults (transformer_engine/pytorch/
 * module/base.py, initialize_ub: num_sm 16 and num_splits 4 for the
 * pipelined and bulk methods; one SM for a ring exchange, which moves its
 * chunks with the copy engines) */
#define TRAIN_UB_SMS 16
#define TRAIN_UB_SPLITS 4
/* SMs DeepEP's normal kernels take (deep_ep.Buffer.num_sms, default 20) */
#define TRAIN_DEEPEP_SMS 20

/* Offload allowances and rates (stated assumptions, see step.c). */
#define TRAIN_HOST_RANK_BYTES 4.0e9    /* host memory of one training process:
					* PyTorch + CUDA runtime + pinned staging */
#define TRAIN_HOST_STATE_BYTES 16.0    /* fp32 master + m + v + fp32 grad accumulator */
#define TRAIN_PCIE_FRACTION 0.80       /* pinned cudaMemcpyAsync vs PCIe peak */
#define TRAIN_CPU_ADAM_BYTES 30.0      /* host DRAM traffic per parameter of CPU
					* Adam: read grad 4, read+write master,
					* m, v 24, write the 16-bit copy 2 */

/* The torch engine's host (stated assumptions, see torch_step.c):
 * - TRAIN_EAGER_HOST_S: host time of one kernel launched from a PyTorch
 *   eager program: Python, the dispatcher (autograd, autocast) and the
 *   launch. Measured on the calibration host, not fitted to a training
 *   step: HF transformers' eager decode of a 4-layer Llama-3.1-8B at batch
 *   1 (calib/data/h200-2026-12-01/torch_ops.tsv, steps) launches 206
 *   kernels in 6.295 ms with 1.153 ms of kernel time, the GPU idle 82% of
 *   the step: the host's pace, 30.6 us a kernel.
 * - TRAIN_LAUNCH_QUEUE: kernels the host may launch ahead of the GPU on
 *   one stream before a launch blocks (about 1000: NVIDIA developer forum,
 *   "CUDA stream are blocked when launching lots of kernels (>1000)"). */
#define TRAIN_EAGER_HOST_S 30.6e-6
#define TRAIN_LAUNCH_QUEUE 1024

/* llmsim_train_pp_ends_in_slots and llmsim_train_stage_layers, inline for
 * a search's every configuration (the functions return these). */
static inline int train_ends_in_slots(const struct llmsim_train_cfg *c)
{
	return c->recipe == LLMSIM_RECIPE_LLAMA3 && c->pp > 1;
}

static inline double train_stage_layers(const struct llmsim_model *m,
					const struct llmsim_train_cfg *c)
{
	int v = c->schedule == LLMSIM_SCHED_INTERLEAVED && c->chunks > 1 ? c->chunks : 1;
	int64_t pv = (int64_t)(c->pp > 0 ? c->pp : 1) * v;
	if (train_ends_in_slots(c)) /* the fullest rank (pp_layout.c) */
		return llmsim_train_stage_layers(m, c);
	if (pv <= INT32_MAX - m->layers) { /* 32-bit divisions, the cheaper */
		int32_t p32 = (int32_t)pv;
		if (!c->uneven_pp || m->layers % p32 == 0)
			return (double)m->layers / (c->pp > 0 ? c->pp : 1);
		return (double)((m->layers + p32 - 1) / p32) * v;
	}
	if (!c->uneven_pp || m->layers % pv == 0)
		return (double)m->layers / (c->pp > 0 ? c->pp : 1);
	return (double)((m->layers + pv - 1) / pv) * v;
}

/* The model's parameters split by how training shards them. */
struct train_geom {
	int layers, dense_layers, moe_layers;
	double attn_per_layer;      /* attention weights of one layer */
	double mlp_per_dense_layer; /* dense MLP of one dense layer */
	double experts_per_moe_layer; /* routed experts of one MoE layer */
	double shared_per_moe_layer;  /* shared experts + router of one MoE layer */
	double norms_per_layer;
	double embedding, lm_head;
	double lora_per_layer;      /* adapters on q,k,v,o at rank 1 (x rank) */
	int dropout;                /* GPT-style (biases, LayerNorm): dropout on */
};

void train_geom_init(const struct llmsim_model *m, struct train_geom *g);

/* Parameter counts one GPU holds (the most loaded pipeline stage). */
struct train_params {
	double dense;       /* TP/PP-sharded, replicated over dp*cp */
	double expert;      /* also sharded over ep; replicated over dp*cp/ep */
	double trained_dense, trained_expert; /* with grads and optimizer state */
	double frozen;      /* LoRA base weights */
	double layer;       /* one layer's weights on this GPU (ZeRO-3 gathers) */
};
void train_params_per_gpu(const struct train_geom *g, const struct llmsim_model *m,
			  const struct llmsim_train_cfg *c, struct train_params *p);

/* The precision recipe's quantized weight copies and scaling state
 * (sim/precision.h) a rank holds through the step: every linear weight of
 * its `layers` layers (ZeRO-3: the two layers gathered at a time), p.layer
 * parameters each; 0 for bf16 and LoRA (frozen weights are not quantized
 * here). */
double train_quant_weight_bytes(const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c,
				const struct train_params *p, double layers);

/* A layer's saved activations, one micro-batch (the mean of dense and MoE
 * layers); *dense the dense layer's, *transient the layer full
 * recomputation re-materializes (0 otherwise). */
/* A micro-batch's fp32 logits for the loss (tokens T on a GPU, the
 * vocabulary split by tp), and the pipeline's p2p buffers (send and
 * receive, forward and backward, split by tp under SP): the bytes both the
 * closed-form memory (memory.c) and the per-rank one (memory_rank.c) hold. */
double train_logits_bytes(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			  double T);
double train_p2p_buffer_bytes(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			      double T);
double train_act_per_layer(const struct train_geom *g, const struct llmsim_model *m,
			   const struct llmsim_train_cfg *c, double *dense, double *transient);

/* The stack's allowances beside fragmentation (train.h, struct
 * llmsim_train_allow): its context, the NCCL buffers of each communicator
 * the layout uses (TP, CP, DP x CP, PP, EP), CUDA graphs. */
double train_allow_bytes(const struct llmsim_train_cfg *c);
/* Of `layers` layer-activations of per_layer bytes waiting for their
 * backward, the bytes activation offload keeps in host memory. */
double train_act_offloaded(const struct llmsim_train_cfg *c, double layers, double per_layer);
/* Bytes per parameter of weights, gradients and optimizer state under
 * FSDP (c->fsdp, ZeRO 2 or 3) sharded over n ranks; returns 0 (and leaves
 * them) when c runs no FSDP. */
int train_fsdp_state_bytes(const struct llmsim_train_cfg *c, int n, double *w, double *g,
			   double *o);
/* FSDP's unsharded buffers for layers of layer_params parameters here. */
double train_fsdp_buffer_bytes(const struct llmsim_train_cfg *c, double layer_params);

struct train_pp_memo;
/* Memory of one configuration (closed form). memo (may be NULL): the
 * llama3 recipe's per-rank terms kept between calls of one model. */
void train_memory(const struct train_geom *g, const struct llmsim_model *m,
		  const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c,
		  int64_t microbatches, struct train_pp_memo *memo,
		  struct llmsim_train_mem *mem);

/* The parameters one GPU holds for `layers` layers of the stage plus
 * `ends` embedding / head parameters (TP-sharded already). */
void train_params_layers(const struct train_geom *g, const struct llmsim_train_cfg *c,
			 double layers, double ends, struct train_params *p);

/* A graph node priced: its time, model FLOPs and link bytes, its count in;
 * its kernels. */
struct train_priced {
	double t, flops, link_bytes;
	int kernels;
};

/* Op price cache entry. */
struct price_slot {
	struct llmsim_op op;
	double time_s, flops, link_bytes;
	int kernels;
	int used;
};

/* The llama3 recipe's per-rank schedule terms of one pipeline shape
 * (memory_rank.c): ranks 0, 1 and pp-1's layers, ends, largest chunk and
 * layers in flight for (layers, pp, chunks, micro-batches). The plan prices
 * many configurations of a shape, which differ only in what the terms
 * are multiplied by; a small table keeps them (direct-mapped, pp 0
 * empty). */
struct train_pp_rank_terms {
	int rank, layers, emb, head;
	double most_chunk_layers, inflight_layers;
};
struct train_pp_memo_entry {
	int layers, pp, v;
	int64_t microbatches;
	int nranks;
	struct train_pp_rank_terms r[3];
};
#define TRAIN_PP_MEMO 64
/* The closed form's terms that many configurations of a search share
 * (train_memory): a layer's activations, keyed by every field of the
 * configuration train_act_per_layer reads (one entry: the search's inner
 * loops change none of them), and the parameters a GPU holds, keyed by
 * every field train_params_per_gpu reads (an entry per chunks & 7: the
 * innermost loops change the chunks). */
struct train_act_memo {
	int used, tp, cp, micro_batch, recompute, method, attn, precision, lora, sp;
	unsigned modules;
	int64_t seq;
	double moe_imbalance;
	double per_layer, ad, transient;
};
struct train_params_memo {
	int used, tp, pp, ep, lora_rank, chunks, schedule, uneven_pp, recipe;
	struct train_params p;
};
#define TRAIN_PARAMS_MEMO 8
struct train_pp_memo {
	struct train_pp_memo_entry e[TRAIN_PP_MEMO];
	struct train_act_memo act;
	struct train_params_memo params[TRAIN_PARAMS_MEMO];
};

struct llmsim_train_ctx {
	struct llmsim_model model;
	struct llmsim_gpu gpu;
	struct train_geom geom;
	struct price_slot *slots;
	size_t nslots, nused;
	int64_t predicts, hits;
	/* the power limit's load the ops are priced in (sim/predict.c): 0 while
	 * the step is priced at the burst clock, else the step's tensor
	 * intensity (op.load_rho), busy throughout (load_duty 1) */
	double load_rho;
	enum llmsim_operand_data operand_data; /* of every op priced */
	/* the graph being walked (walk.c) and its nodes' prices */
	struct llmsim_graph graph;
	struct train_priced priced[LLMSIM_GRAPH_MAX];
	struct llmsim_graph_mem mem; /* the torch engine's tensors (torch_step.c) */
	struct llmsim_timeline *timeline; /* non-NULL: the torch engine records its
					   * step's kernels there (schedule.c) */
	struct train_pp_memo pp_memo;     /* train_memory's, llama3 recipe */
};

/* Price an op through llmsim_predict, once per distinct op, at the
 * context's load and operand data. */
struct price {
	double time_s, flops, link_bytes;
	int kernels;                /* launches it takes */
};
int train_price(struct llmsim_train_ctx *ctx, const struct llmsim_op *op, struct price *out,
		struct llmsim_err *err);

/* Costs of one section of the graph (a layer, the embedding, the head) for
 * one micro-batch on one GPU (depends on tp, cp, ep, micro-batch, seq,
 * attention impl, dtype, lora, sp, imbalance), summed by walk.c. */
struct layer_cost {
	double fwd_s, bwd_s;          /* kernels (bwd without recompute) */
	double wgrad_s;               /* the weight-gradient GEMMs of bwd_s */
	double per_step_s;            /* kernels once a step, not a micro-batch (the
				       * weights' quantize: LLMSIM_GN_PER_STEP) */
	double quant_s;               /* a micro-batch's quantize and amax kernels (in
				       * fwd_s and bwd_s) */
	double attn_core_fwd_s;       /* selective recompute re-runs this */
	double fwd_flops, bwd_flops, attn_core_fwd_flops; /* model (balanced) */
	double mod_fwd_s[LLMSIM_RM_COUNT];     /* forward kernels of each recompute module
						* (the MoE layer's with its dispatch) */
	double mod_fwd_flops[LLMSIM_RM_COUNT];
	double tp_fwd_s, tp_bwd_s;    /* TP collectives (exposed) */
	double tp_bwd_hidden_s;       /* backward TP collectives behind GEMMs */
	double tp_fwd_hidden_s;       /* forward TP collectives inside GEMMs (userbuffers) */
	double ep_fwd_s, ep_bwd_s;    /* all-to-all (exposed) */
	double cp_fwd_exposed_s, cp_bwd_exposed_s; /* ring beyond attention */
	double cp_fwd_hidden_s, cp_bwd_hidden_s;   /* ring behind attention */
	double tp_bytes, ep_bytes, cp_bytes;       /* sent per rank, fwd+bwd */
};

struct shape_cost {
	struct layer_cost dense, moe;
	struct layer_cost emb;        /* embedding (first pipeline stage) */
	struct layer_cost head;       /* final norm + LM head + loss (last stage) */
	double p2p_s;                 /* one activation send between stages */
	double p2p_bytes;
	double tp_msg_bytes;
	double load_rho;              /* the power limit's load it was priced in */
};

/* The exposed time of a TP collective of time t that can overlap a GEMM
 * of time gemm (walk.c's policy): t when not hidden; else what exceeds the
 * GEMM plus `contention` of the overlapped time (the SMs the collective's
 * channels take from the GEMM). */
double train_tp_overlap_s(double t, double gemm, int hide, double contention);

/* The CP ranks of one all-to-all group: cp for a2a; for a2a+p2p the
 * most that, tp ranks apart, fit one NVLink domain of gpn GPUs (a
 * divisor of cp); 1 for p2p. */
int train_cp_a2a_size(int gpn, const struct llmsim_train_cfg *c);

/* The exposed part of a TP collective of time t that userbuffers split
 * inside a GEMM of time gemm in `steps` chunks: a ring exchange (ring:
 * the first chunk local, steps - 1 transfers each beside one chunk's
 * GEMM) or a pipeline (each chunk's reduce-scatter beside the next
 * chunk's GEMM, the last one's after them). The SMs it takes are the
 * caller's. */
double train_ub_exposed_s(double t, double gemm, int steps, int ring);

/* Of an overlapped collective's overlapped time, what the GEMMs beside it
 * lose to the SMs its NCCL channels take (collective_max_channels / sms,
 * the large messages of TP and DP running on all of them): the
 * megatron-2021/2022 stacks' share; 0 for core. */
double train_overlap_contention(const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c);

int train_shape_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     struct shape_cost *sc, struct llmsim_err *err);
/* The optimizer step as one fused AdamW op over `params` fp32 parameters
 * (the fused engine prices it whole, the torch engine per launch). */
void train_adamw_op(struct llmsim_op *op, double params);

/* The SM clock tensor work of c's data type runs at in a load x (rho *
 * duty; 0: a lone kernel's burst clock). */
double train_load_clock(const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c, double x);

/* The op graph's configuration of c (sections: 1u << LLMSIM_SEC_*, 0 all). */
void train_graph_cfg(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     unsigned sections, struct llmsim_graph_cfg *g);
/* Only the pipeline send/recv of sc (depends on pp and where stages sit). */
int train_p2p_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		   struct shape_cost *sc, struct llmsim_err *err);

/* Data-parallel / ZeRO / optimizer costs (depend on tp, pp, dp, cp, ep,
 * zero, recipe, lora; not on micro-batch). */
struct dp_cost {
	double grad_sync_s;     /* one full gradient reduction (AR or RS) */
	double param_gather_s;  /* ZeRO 1/2 parameter all-gather after the step */
	double z3_layer_fwd_s, z3_layer_bwd_s; /* ZeRO-3 per layer, per micro-batch */
	double optimizer_s;
	double emb_sync_s;      /* tied embeddings: first/last stage grad all-reduce */
	double grad_accum_s;    /* megatron-2021: each micro-batch's gradients added into
				 * the accumulated ones (one element-wise add a step) */
	double overlap_contention; /* train_overlap_contention of the configuration */
	double bucket_frac;     /* last bucket's share of the reduction */
	double grad_bytes, gather_bytes, z3_layer_bytes;
	/* offload (filled for every configuration; used when c->offload):
	 * PCIe time of this GPU moving `bytes`, its link shared with
	 * gpus_per_host_link GPUs, and the node's DRAM with its ranks */
	double off_grad_down_s;    /* one flush of this rank's 16-bit grad shard */
	double off_param_up_s;     /* this rank's updated 16-bit shard (optimizer) */
	double off_layer_up_s;     /* params: one layer's 16-bit shard, per pass */
	double off_layer_down_s;   /* ZeRO-3: one layer's 16-bit grad shard */
	double off_shard_params;   /* trained params this rank updates */
	double off_held_params;    /* params this rank holds a shard of */
	double cpu_adam_s;         /* the node's CPU Adam step */
	int has_host;
};

int train_dp_cost(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		  struct dp_cost *dc, struct llmsim_err *err);

/* ---- the llama3 recipe's pipeline split (pp_layout.c, memory_rank.c) ---- */

/* Model chunks per stage: chunks when interleaved, else 1. */
int train_pp_chunks(const struct llmsim_train_cfg *c);
/* Layers of pipeline rank `rank` (all its chunks); *emb, *head (may be
 * NULL) whether it holds the embedding / the head. */
int train_pp_rank_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			 int rank, int *emb, int *head);
/* The split of L + 2 slots over pp x chunks virtual stages of k slots,
 * stage u = j*pp + r chunk j of rank r (llmsim_train_pp_chunk_layers), in
 * the terms every rank's and chunk's layers follow from without a loop. */
#define TRAIN_PP_REPS 6
struct train_pp_split {
	int pp, v;                 /* ranks, chunks per rank */
	int64_t slots, k;          /* L + 2; slots per stage */
	int64_t full, part;        /* full stages (slots / k); the next one's slots */
	int64_t head_stage;        /* the stage of slot L + 1 */
	int q, rem, head_rank;     /* full / pp, full % pp, head_stage % pp */
	/* ranks that stand for all: the ranks 0..pp-1 fall into runs holding
	 * the same layers, embedding and head, and reps[0..nreps) (ascending)
	 * are the first rank of each run, so a first maximum over them is the
	 * first maximum over every rank (test_train_pp_fast.c checks it) */
	int reps[TRAIN_PP_REPS], nreps;
};
void train_pp_split(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
		    struct train_pp_split *s);
/* train_pp_rank_layers, llmsim_train_pp_chunk_layers of a split. */
int train_pp_split_rank(const struct train_pp_split *s, int rank, int *emb, int *head);
int train_pp_split_chunk(const struct train_pp_split *s, int rank, int chunk, int *emb,
			 int *head);
/* Layers of the fullest rank. */
double train_pp_max_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c);
/* The rank of the largest time per micro-batch (layers at the mean of
 * dense and MoE, moe_frac MoE, plus the end section it runs): returns its
 * layers, *end the section (none, zeroed, when it runs neither end). */
double train_pp_slowest(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			const struct shape_cost *sc, double moe_frac, struct layer_cost *none,
			const struct layer_cost **end);
/* Memory of the fullest of pipeline ranks 0, 1 and pp-1 (memory_rank.c);
 * memo as train_memory's. */
void train_memory_ranks(const struct train_geom *g, const struct llmsim_model *m,
			const struct llmsim_gpu *gpu, const struct llmsim_train_cfg *c,
			int64_t microbatches, struct train_pp_memo *memo,
			struct llmsim_train_mem *mem);


/* ---- the torch engine (torch_step.c, mem_timeline.c) ---- */

/* The parameters of m as PyTorch's module holds them, in module order
 * (numel of each into numel[0..max), NULL to count): returns how many. */
int train_torch_params(const struct llmsim_model *m, double *numel, int max);

/* A point of the step in program order. */
enum train_torch_ev {
	TRAIN_AT_NODE,            /* a node runs */
	TRAIN_AT_LAYER_FWD_END,   /* a layer's forward has ended (checkpoint drops what it
				   * saved) */
	TRAIN_AT_FWD_END,         /* the forward returns and leaves autocast */
	TRAIN_AT_RECOMPUTE_END,   /* a layer's recompute has ended, its backward begins */
	TRAIN_AT_BWD_END,         /* a micro-batch's backward has ended */
	TRAIN_AT_STEP_END,        /* the optimizer step, then zero_grad */
};
struct train_torch_at {
	enum train_torch_ev ev;
	enum llmsim_gsec sec;
	int layer;                /* the layer (-1 outside them) */
	int node;                 /* g->node index (TRAIN_AT_NODE) */
	int recompute;            /* a forward node re-run by checkpoint's recompute */
	int64_t microbatch;
};
/* Call fn at every point of one optimizer step of `microbatches` forward
 * and backward passes over `layers` layers of g (with full recomputation
 * when `full`), in the order PyTorch runs them. */
void train_torch_walk(const struct llmsim_graph *g, const struct llmsim_graph_mem *mem,
		      int layers, int64_t microbatches, int full,
		      void (*fn)(const struct train_torch_at *at, void *arg), void *arg);

/* One micro-batch's kernel time and FLOPs, its layers counted. */
struct train_torch_sums {
	double fwd_s, bwd_s, recompute_s;
	double fwd_flops, bwd_flops, recompute_flops, tensor_flops;
};

/* The torch engine's step (llmsim_train_simulate with c->engine torch). */
int train_torch_simulate(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			 struct llmsim_train_result *r, struct llmsim_err *err);
/* Its memory: the caching allocator over the step's tensors into r->mem
 * and r->torch (mem_timeline.c), the graph built in ctx. */
int train_torch_memory(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		       int64_t microbatches, struct llmsim_train_result *r,
		       struct llmsim_err *err);

/* The caching allocator's model (mem_timeline.c: the rules of
 * CUDACachingAllocator.cpp with its defaults). Zero-initialize; release
 * with train_alloc_release. */
struct train_alloc_blk {
	double size, addr;
	int prev, next;           /* neighbours in the segment, -1 */
	int small, free, dead;
};
struct train_alloc {
	struct train_alloc_blk *b;
	int n, cap;
	int *fl[2];               /* free blocks of each pool (0 large, 1 small), by (size, addr) */
	int nfl[2], capfl[2];
	int *spare;               /* dead block slots */
	int nspare;
	double reserved;          /* segments taken (cudaMalloc'd) */
	double allocated, peak;   /* bytes of the blocks handed out: now, at most */
	double top;               /* the next segment's address */
	int oom;                  /* out of host memory */
};
/* A block of at least `bytes`: its handle, or -1 (out of host memory). */
int train_alloc_malloc(struct train_alloc *a, double bytes);
/* Return block x (-1: nothing). */
void train_alloc_free(struct train_alloc *a, int x);
void train_alloc_release(struct train_alloc *a);

/* One micro-batch through the slowest stage as the step prices it
 * (train_combine), in its parts; the schedule (schedule.c) lays them out. */
struct train_mb {
	double layers, dense_layers, moe_layers; /* layers of the stage: all, dense, MoE */
	double compute_fwd_s, compute_bwd_s; /* kernels: forward; backward with its recompute */
	double recompute_s;         /* the recomputed forward inside compute_bwd_s */
	double act_off_fwd_s, act_off_bwd_s; /* activation offload's transfers beyond
				     * the layers' compute (forward, backward) */
	double tp_fwd_s, tp_bwd_s, ep_fwd_s, ep_bwd_s, cp_fwd_s, cp_bwd_s; /* exposed
				     * collectives */
	double tp_bwd_hidden_s, cp_fwd_hidden_s, cp_bwd_hidden_s; /* the parts compute hides */
	double z3_fwd_s, z3_bwd_s;  /* ZeRO-3 gathers and reductions not hidden */
	double z3_fwd_off_s, z3_bwd_off_s; /* offload: the PCIe part beyond z3_fwd_s, z3_bwd_s */
	double p2p_s;               /* pipeline send/recv, per direction (chunks of them) */
	double fwd_s, bwd_s;        /* forward and backward of a micro-batch, all in */
	double chunks;              /* model chunks per stage (1: 1F1B) */
	double end_fwd_s, end_bwd_s; /* the slower end stage's own part of fwd_s and bwd_s (its
				     * embedding or LM head with their TP collectives) */
	double end_tp_bytes;        /* that end stage's TP bytes a micro-batch */
	double pair_exposed_s;      /* DualPipe: the pair's communication its compute
				     * does not cover (its fwd_s/bwd_s carry no EP or PP part) */
	double bubble_s;            /* the schedule's bubble: (pp-1)/chunks (fwd_s + bwd_s), or
				     * DualPipe's (llmsim_train_dualpipe_bubble_s) */
};
void train_mb_parts(const struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		    const struct shape_cost *sc, const struct dp_cost *dc, struct train_mb *mb);
/* Of the stage's layers, the share full recomputation re-runs (block: its
 * first recompute_layers; else all); 0 without full recomputation. */
double train_recompute_frac(const struct llmsim_model *m, const struct llmsim_train_cfg *c);
/* The forward time (flops: 0) or FLOPs (1) the recompute modules of c
 * re-run in one layer of cost L (0 unless LLMSIM_RECOMP_MODULES). */
double train_modules_fwd(const struct llmsim_train_cfg *c, const struct layer_cost *L, int flops);

/* The data-parallel communication a step exposes, and what it hides. */
struct train_dp_exp {
	int64_t flushes;            /* gradient reductions: m at ZeRO-2, 1 at 0/1, 0 at 3 */
	double grad_s;              /* their parts past the backward, all flushes */
	double grad_hidden_s;       /* one reduction's part behind its backward */
	double gather_s;            /* ZeRO 1/2 parameter all-gather, exposed */
	double gather_hidden_s;     /* its part behind the first forward */
	double emb_s;               /* tied embeddings' all-reduce (exposed) */
	double total_s;             /* grad_s + gather_s + emb_s */
};
void train_dp_exposed(const struct llmsim_train_cfg *c, const struct dp_cost *dc, int64_t m,
		      const struct train_mb *mb, struct train_dp_exp *x);

/* What a search needs of a configuration: its step time and memory, and
 * so its tokens/s and whether it fits (train_combine's figures, the same
 * arithmetic). */
struct train_step {
	struct llmsim_train_time time;
	struct llmsim_train_mem mem;
	double tokens_per_s;
	int fits, gpu_fits;
	int mem_tight;              /* llmsim_train_result.mem_tight */
};
void train_step_lean(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		     const struct shape_cost *sc, const struct dp_cost *dc,
		     struct train_step *s);

/* Combine into a result (pure arithmetic). */
void train_combine(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		   const struct shape_cost *sc, const struct dp_cost *dc,
		   struct llmsim_train_result *r);

#endif
