/*
 * graph.h - the op graph of one model step: the only place where a model,
 * a workload (a training micro-batch, or an inference engine step of
 * prefill chunks and decoding sequences) and a parallel layout become
 * llmsim ops. Training (sim/train/), inference and serving (sim/infer/),
 * the trace comparison (calib/trace/) and the reports walk it; none of
 * them builds ops of a layer.
 *
 * Every per-architecture decision is taken here, once: the norm kind
 * (RMSNorm or LayerNorm), the MLP (gated or plain) and its activation
 * (SiLU, GELU, ReLU), MLA's projections and latent norms, MoE routing
 * (router, its softmax, the experts a rank runs and their tokens, shared
 * experts, which layers are MoE: llmsim_model_is_moe_layer), RoPE, the KV
 * write of inference, LoRA adapters, the dropout of GPT-style training,
 * and the data types (linear layers in the math/weight types; router, LM
 * head, attention and element-wise ops in the activation type).
 *
 * The graph holds one instance of each section: the ops before the layers
 * (embedding), of one dense layer, of one MoE layer, after the layers
 * (final norm, LM head, loss or sampler) and of one pipeline send. A
 * walker multiplies each section by how often it runs (layers of a stage,
 * pp - 1 sends) and applies its own policies: which communication overlaps
 * what, recomputation, how kernel times add up into wall time (CUDA graph
 * or eager), the clock of the power limit. Collectives are nodes like any
 * other op; a tensor-parallel point is Megatron's f/g operator around a
 * column- or row-parallel linear, expressed as the collectives it runs in
 * each direction, with the GEMM whose time can hide it.
 *
 * Nodes are in launch order within a section. Building allocates nothing
 * and prices nothing: every FLOP, byte and second is llmsim_predict's.
 */
#ifndef LLMSIM_GRAPH_H
#define LLMSIM_GRAPH_H

#include <stdint.h>
#include "base/err.h"
#include "models/model.h"
#include "precision.h"
#include "sim.h"

enum llmsim_gsec {
	LLMSIM_SEC_PRE,   /* embedding (and its TP collective) */
	LLMSIM_SEC_DENSE, /* one dense layer */
	LLMSIM_SEC_MOE,   /* one mixture-of-experts layer */
	LLMSIM_SEC_POST,  /* final norm, LM head, loss or logits and sampler */
	LLMSIM_SEC_P2P,   /* one activation send between pipeline stages */
	LLMSIM_SEC_COUNT
};

enum llmsim_gphase {
	LLMSIM_PH_FWD,       /* forward (every inference op) */
	LLMSIM_PH_BWD,       /* backward: data and weight gradients */
	LLMSIM_PH_RECOMPUTE, /* a forward op run again in backward (walkers that list what
			      * they priced mark recomputed forward ops so) */
	LLMSIM_PH_COUNT
};

/* node.chunk of inference attention: which prefill chunk it serves */
#define LLMSIM_CHUNK_ALL (-1)    /* every token of the step (or a training op) */
#define LLMSIM_CHUNK_DECODE (-2) /* the decoding sequences */

enum llmsim_byte_cat {
	LLMSIM_BYTES_WEIGHTS, /* GEMM operands: weights and their activations */
	LLMSIM_BYTES_KV,      /* attention and decode kernels, the KV write: the KV cache */
	LLMSIM_BYTES_ACT,     /* element-wise ops and collectives: activations */
	LLMSIM_BYTES_CAT_COUNT
};

/* The parts of an inference step, which add up to the whole; the serving
 * simulation prices and caches each by the few numbers it depends on. */
enum {
	LLMSIM_PART_BODY = 1u, /* per-token work: linear layers, norms, collectives, sends */
	LLMSIM_PART_ATTN = 2u, /* attention and decode kernels, MLA's per-context GEMMs */
	LLMSIM_PART_HEAD = 4u, /* LM head with its loss, or logits gather and sampler */
	LLMSIM_PART_ALL = 7u,
};

/* Megatron's f/g operators (Shoeybi et al. 2019), around a column-parallel
 * linear (QKV, the MLP's up projection, the LM head: identity forward,
 * all-reduce of the input gradient backward) or a row-parallel one (the
 * output projection, the MLP's down projection, the vocab-parallel
 * embedding: all-reduce forward, identity backward). With sequence
 * parallelism each all-reduce becomes an all-gather and a reduce-scatter
 * of the same volume: AG forward / RS backward at a column point, RS
 * forward / AG backward at a row point. */
enum llmsim_tp_point { LLMSIM_TP_NONE, LLMSIM_TP_COL, LLMSIM_TP_ROW };

/* What a node is, for walker policies (flags). */
enum {
	LLMSIM_GN_LINEAR = 1u << 0,  /* a linear layer's GEMM (forward or data gradient) */
	LLMSIM_GN_WGRAD = 1u << 1,   /* a weight-gradient GEMM */
	LLMSIM_GN_LORA = 1u << 2,    /* a LoRA adapter's GEMM */
	LLMSIM_GN_ATTN = 1u << 3,    /* the attention core (and its dropout): what selective
				      * recomputation re-runs */
	LLMSIM_GN_EXPERT = 1u << 4,  /* routed experts */
	LLMSIM_GN_KV_WRITE = 1u << 5,/* the step's K and V into the cache */
	LLMSIM_GN_TP = 1u << 6,      /* a tensor-parallel collective */
	LLMSIM_GN_EP = 1u << 7,      /* an expert-parallel all-to-all (dispatch, combine) */
	LLMSIM_GN_CP = 1u << 8,      /* a context-parallel ring step (KV blocks) */
	LLMSIM_GN_PP = 1u << 9,      /* a pipeline send */
	LLMSIM_GN_COMM = LLMSIM_GN_TP | LLMSIM_GN_EP | LLMSIM_GN_CP | LLMSIM_GN_PP,
	LLMSIM_GN_QUANT = 1u << 10,  /* a precision recipe's quantize or amax kernel */
	LLMSIM_GN_PER_STEP = 1u << 11, /* runs once a step, not once a micro-batch (a
					* weight's quantize: Transformer Engine quantizes
					* each weight at the first micro-batch and reuses it) */
};

/* How MoE tokens reach their experts in training (`--moe-dispatch`;
 * Megatron-Core's --moe-token-dispatcher-type):
 *   alltoall   each rank sends top_k slots a token to the experts' ranks
 *              (NCCL all-to-all), and back;
 *   allgather  every EP rank gathers the whole group's tokens (all-gather)
 *              and keeps the ones its experts take; the combine is a
 *              reduce-scatter of the same volume;
 *   deepep     DeepSeek's DeepEP kernels (Megatron's "flex" dispatcher):
 *              an all-to-all over NVLink and RDMA, the dispatch in FP8 (one
 *              fp32 scale per 128 elements; DeepEP README: "dispatch
 *              supports FP8, combine BF16"), node-limited tokens sent once
 *              a node over the network and forwarded over NVLink. */
/* How context-parallel ranks share the sequence's attention in training
 * (`--cp-comm`; Megatron-Core's --cp-comm-type):
 *   p2p      a ring: cp - 1 K and V blocks passed beside the attention of
 *            the block before (the load-balanced ring attention);
 *   a2a      all-to-all (DeepSpeed-Ulysses): Q, K and V exchanged so that
 *            each rank attends over the whole sequence with 1/cp of the
 *            heads, the output exchanged back; exposed;
 *   a2a+p2p  both in a hierarchy: all-to-all among the CP ranks of one
 *            NVLink domain (a2a_size of them), a ring of KV blocks across
 *            the domains. */
enum llmsim_cp_comm { LLMSIM_CP_P2P, LLMSIM_CP_A2A, LLMSIM_CP_A2A_P2P, LLMSIM_CP_COMM_COUNT };
extern const char *const llmsim_cp_comm_names[]; /* p2p, a2a, a2a+p2p; NULL */
const char *llmsim_cp_comm_name(enum llmsim_cp_comm c);

enum llmsim_moe_dispatch { LLMSIM_MOE_ALLTOALL, LLMSIM_MOE_ALLGATHER, LLMSIM_MOE_DEEPEP,
			   LLMSIM_MOE_DISPATCH_COUNT };
extern const char *const llmsim_moe_dispatch_names[]; /* alltoall, allgather, deepep; NULL */
const char *llmsim_moe_dispatch_name(enum llmsim_moe_dispatch d);

struct llmsim_gnode {
	char name[48];             /* "qkv_proj", "attention", "qkv_proj.wgrad", "tp_allgather";
				    * op names are those of llama_steps.py's NVTX op ranges
				    * (calib/trace), which the trace comparison matches */
	enum llmsim_gsec sec;
	enum llmsim_gphase phase;
	int chunk;                 /* LLMSIM_CHUNK_ALL, a prefill chunk's index, or
				    * LLMSIM_CHUNK_DECODE */
	enum llmsim_byte_cat cat;
	unsigned part;             /* LLMSIM_PART_BODY, _ATTN or _HEAD */
	unsigned role;             /* LLMSIM_GN_* */
	enum llmsim_tp_point tp;   /* a TP collective: the point it belongs to */
	int hides;                 /* a collective that can overlap compute: the index of the
				    * node whose time can hide it (a column point's backward
				    * collective: the first weight-gradient GEMM after the
				    * point; a CP ring step: the attention it feeds); -1 none */
	double count;              /* runs per instance of its section: 1; a CP rank's share of
				    * the attention over the whole sequence: 1/cp; ring steps:
				    * cp - 1 */
	int ub;                    /* a TP collective: the GEMM Transformer Engine's
				    * userbuffers overlap runs it inside (a column
				    * point's forward all-gather: the linear's forward
				    * GEMM, ring exchange; a row point's forward
				    * reduce-scatter: the linear's forward GEMM,
				    * pipelined; its backward all-gather: the linear's
				    * data gradient, ring exchange); -1 none */
	double flops_scale;        /* model FLOPs per priced FLOP: 1; routed experts with a
				    * busiest one: the balanced load over the one priced */
	struct llmsim_op op;
};

/* The step of an inference engine: `tokens` new prompt tokens of each of
 * `count` identical sequences whose first `context` tokens are cached. */
struct llmsim_prefill_chunk {
	int64_t tokens, context, count;
};

enum llmsim_work { LLMSIM_WORK_INFER, LLMSIM_WORK_TRAIN };

/* The program that runs the model, which decides how each architectural op
 * becomes kernels (the measured kernel lists of calib/data/h200-2026-12-01
 * are the ground truth of each):
 * - fused: a serving engine (vLLM, TensorRT-LLM, SGLang) or Megatron: one
 *   kernel per op: Q, K, V in one GEMM, gate and up in one GEMM, fused
 *   RoPE, SwiGLU's SiLU-and-multiply in one kernel, the residual add fused
 *   into the next RMSNorm (vLLM's fused_add_rms_norm), the paged KV write
 *   of K and V together, a sampler after the LM head, and in serving the
 *   two MLA down-projections fused (vLLM's fused_qkv_a_proj);
 * - torch: a lean PyTorch engine as calib/torch/steps_lean.py writes one:
 *   F.linear on fused QKV and gate-up weights, F.rms_norm, RoPE as PyTorch
 *   writes it for q and for k (x1*cos, x2*sin on strided halves, their
 *   difference, x2*cos, x1*sin, their sum, the concatenation), K and V
 *   copied into a static cache one by one (strided views), SDPA, SiLU and
 *   the product apart on the strided halves of gate-up, MoE routing as
 *   PyTorch ops (gate GEMM, top-k, softmax, a stable argsort, the permute,
 *   grouped GEMMs, the weighted combine by index_add_), the final norm and
 *   the LM head on each sequence's last position only, logits returned;
 *   in training (work TRAIN) a plain PyTorch step on one GPU as
 *   calib/torch/steps_train.py writes it: fp32 parameters under bf16
 *   autocast (weights = FP32, math the autocast type), autograd's backward,
 *   each node's tensors in graph_mem.h (sim/graph_torch_train.c);
 * - hf: Hugging Face transformers' modules, eager: q, k, v and gate, up as
 *   separate nn.Linear, LlamaRMSNorm in fp32 pieces, rotate_half RoPE on
 *   the transposed [b, h, s, d] views, contiguous SiLU and multiply,
 *   DynamicCache (an empty cache takes prefill's K and V as they are;
 *   decode concatenates each step's onto the whole cache). */
enum llmsim_engine {
	LLMSIM_ENGINE_FUSED,
	LLMSIM_ENGINE_TORCH,
	LLMSIM_ENGINE_HF,
	LLMSIM_ENGINE_COUNT
};

/* The one default engine of every verb that prices inference (infer,
 * serve, spec, plan --workload serve, report) and of
 * llmsim_infer_cfg_init: the lean PyTorch engine in CUDA graphs, the
 * engine whose whole steps are measured (calib/data/h200-2026-12-01/
 * steps_lean*.tsv: 38 prefill and 44 decode steps, p80 7.5% and 7.7% in
 * hw/profiles/h200.yaml steps_errors:). The fused engine has no measured
 * step (its error bar is the stated 10% default) and HF's measured steps
 * miss by 10-42%. A run that states its engine (a published serving row's
 * engine:, --engine) keeps it. */
#define LLMSIM_ENGINE_DEFAULT LLMSIM_ENGINE_TORCH

/* "fused", "torch", "hf"; "?" out of range. */
const char *llmsim_engine_name(enum llmsim_engine e);
/* The engine of a name, or -1. */
int llmsim_engine_parse(const char *s);
/* "fused, torch or hf": the choices, for messages. */
const char *llmsim_engine_choices(void);

/* How the ops run as kernels: the engine, and variations of a program the
 * engine's defaults leave out (all 0: the engine's own way). */
struct llmsim_lowering {
	enum llmsim_engine engine;
	int split_qkv;             /* q_proj, k_proj, v_proj as three GEMMs (hf: always) */
	int split_gate_up;         /* gate_proj, up_proj as two GEMMs (hf: always) */
	int gqa_expand;            /* K and V repeated to every query head before attention
				    * (kv_expand: SDPA without native GQA) */
	int rope_joint;            /* torch: q and k roped as one tensor (seven kernels over
				    * the fused projection's q and k, as calib/torch/
				    * llama_steps.py does), not each apart */
};

/* The load a walker prices its ops in (`--load` of infer, serve, train,
 * as `llmsim op` spells it): busy, inside the program's own sustained load
 * (the clock the power limit sets for it: op.load_duty, op.load_rho); lone,
 * each op a lone kernel on an idle GPU (its burst clock). */
enum llmsim_load { LLMSIM_LOAD_BUSY, LLMSIM_LOAD_LONE, LLMSIM_LOAD_COUNT };
/* "busy", "lone"; "?" out of range. */
const char *llmsim_load_name(enum llmsim_load l);

struct llmsim_graph_cfg {
	enum llmsim_work work;
	enum llmsim_operand_data operand_data; /* what every op's operands hold
				    * (op.operand_data; 0: trained data) */

	/* layout: the ops of one rank */
	int tp;                    /* tensor parallel (heads, widths, vocabulary split) */
	int sp;                    /* sequence parallelism with tp > 1 (training) */
	int cp;                    /* context parallel (training): tokens and attention
				    * split cp ways, KV blocks passed around a ring */
	int cp_allgather;          /* 1: the cp ranks all-gather K and V before the
				    * attention and reduce-scatter their gradients
				    * after it, exposed, instead of the ring (Llama 3:
				    * Dubey et al. 2024 Sec. 3.3.2) */
	enum llmsim_cp_comm cp_comm; /* the ring, all-to-all or both (cp_allgather aside) */
	int cp_a2a;                /* a2a+p2p: CP ranks of one all-to-all group (divides
				    * cp); a2a: cp */
	int cp_a2a_nodes;          /* nodes that group spans */
	int ep;                    /* expert parallel: E/ep experts per rank */
	int ep_in_tp;              /* 1: the EP ranks are TP ranks holding the same tokens
				    * (inference; each expert's FFN split tp/ep ways);
				    * 0: data-parallel ranks with tokens of their own
				    * (training; expert TP = TP) */
	int tp_nodes, ep_nodes, cp_nodes, pp_nodes; /* nodes each group's collective spans
						     * (a pipeline send: 1 or 2) */
	int pp_scatter;            /* training: Megatron's scatter/gather (Narayanan et al.
				    * 2021, section 4.1): each TP rank sends 1/tp of the
				    * activation to its peer of the next stage, which
				    * all-gathers it over NVLink; 0: the whole activation
				    * (1/tp of it under SP, already sharded) */
	int sp_regather;           /* training with SP: a column-parallel linear keeps its
				    * input sharded and all-gathers it again in backward for
				    * its weight gradient (Korthikanti et al. 2022, section
				    * 4.2.2), beside the data-gradient GEMM it overlaps
				    * (Megatron's LinearWithGradAccumulationAndAsync-
				    * Communication); 0: left out */

	/* data types */
	enum llmsim_dtype math;    /* linear layers' GEMM math */
	enum llmsim_dtype weights; /* linear layers' weights (GEMM B operand) */
	enum llmsim_dtype act;     /* activations, attention, element-wise, router, LM head */
	enum llmsim_dtype kv;      /* KV cache (decode) */
	/* training: the precision recipe of the linear layers (sim/precision.h):
	 * their GEMMs in its format (math), its quantize and amax kernels as
	 * nodes (LLMSIM_GN_QUANT), an FP8 all-gather of a column point's
	 * sequence-parallel input (quantized before the gather) */
	enum llmsim_precision_recipe precision;
	int quant_copies;          /* copies each quantize writes (llmsim_precision_copies) */
	enum llmsim_moe_dispatch moe_dispatch; /* training's MoE token dispatch */

	enum llmsim_attn_impl attn;     /* prefill and training attention */
	enum llmsim_decode_impl decode; /* decode attention */
	int64_t block_size;             /* paged decode: tokens per KV block */
	struct llmsim_lowering lower;

	/* training: one micro-batch (work = TRAIN) */
	int64_t micro_batch, seq;  /* sequences, tokens each (whole sequences: cp splits them) */
	int lora_rank;             /* 0: every weight trained; else frozen base weights and
				    * adapters of this rank on Q, K, V and O */
	double moe_imbalance;      /* >= 1: the busiest expert's tokens over the mean */

	/* inference: one engine step (work = INFER) */
	const struct llmsim_prefill_chunk *prefill;
	int nprefill;
	int64_t decode_seqs;       /* sequences decoding */
	int64_t q_len;             /* query tokens per decoding sequence (1; k+1 to verify) */
	double decode_kv_len;      /* mean KV length of a decoding sequence, its new tokens in */
	int64_t logits;            /* rows through the LM head and sampler */

	unsigned parts;            /* build only nodes of these LLMSIM_PART_*; 0: all */
	unsigned sections;         /* build only these sections (1u << LLMSIM_SEC_*); 0: all */
};

/* Defaults: inference, tp = sp = cp = ep = 1 on one node, bf16 everywhere,
 * FlashAttention-2 and paged decode (block 16), fused kernels, q_len 1,
 * micro-batch 1 of 4096 tokens, imbalance 1. */
void llmsim_graph_cfg_init(struct llmsim_graph_cfg *c);

#define LLMSIM_GRAPH_MAX 512 /* the largest step: MLA + MoE layers of a quantized recipe with its
			      * amax, quantize and transpose kernels, every parallelism */

struct llmsim_graph {
	int n;
	struct llmsim_gnode node[LLMSIM_GRAPH_MAX];
};

/* Build the graph of model m under c into g. Returns 0, or LLMSIM_EINVAL
 * with one line (a layout that does not divide the model: heads, KV heads,
 * widths or experts by tp, ep; an empty step; shapes that overflow). The
 * checks are those every walker needs; walkers check their own layouts
 * (pipeline, batch) themselves. */
int llmsim_graph_build(const struct llmsim_model *m, const struct llmsim_graph_cfg *c,
		       struct llmsim_graph *g, struct llmsim_err *err);

/* Tokens the ops of one rank process: a training micro-batch's
 * micro_batch * seq / cp, or every new token of an inference step. */
int64_t llmsim_graph_tokens(const struct llmsim_graph_cfg *c);

/* The type of activations, attention and element-wise ops under linear
 * layers of math type dt: 8- and 4-bit types run GEMMs only (FP8 W8A8,
 * INT4 weight-only with BF16 math), everything else runs as it is (FP32
 * and wider with unfused attention, which has kernels for them). */
enum llmsim_dtype llmsim_graph_act_dtype(enum llmsim_dtype dt);

/* The collective op every part of llmsim prices: `bytes` per rank over
 * `gpus` ranks on `nodes` nodes, NCCL choosing its algorithm (sim/
 * collective.c models the choice), in the activation type dt. */
void llmsim_graph_coll_op(struct llmsim_op *op, enum llmsim_coll_kind kind, double bytes,
			  int gpus, int nodes, enum llmsim_dtype dt);

/* Nodes a group of `size` ranks, `stride` ranks apart, spans on nodes of
 * gpus_per_node GPUs (consecutive ranks fill a node first). */
int llmsim_group_nodes(int gpus_per_node, int size, int stride);

/* Whether the model trains with dropout (GPT-style: biases or LayerNorm;
 * Llama-style models train without): the dropout kernel of unfused
 * attention, and the masks training saves. */
int llmsim_graph_dropout(const struct llmsim_model *m);

/* Expected distinct nodes a token's top_k experts are on, the experts
 * spread evenly over `nodes` nodes, each token limited to max_nodes of
 * them (0: no limit): the chosen M = min(max_nodes, nodes) nodes, each
 * missed by all k experts (drawn without replacement from the M x
 * experts/nodes of the chosen nodes) with probability
 * C((M-1)e, k) / C(Me, k). 1 for one node. */
double llmsim_graph_nodes_touched(int top_k, int experts, int nodes, int max_nodes);

/* Expected distinct experts, of `local` held by one rank, that n tokens
 * touch when each routes to top_k of `experts` uniformly at random. */
double llmsim_graph_experts_touched(int64_t n, int top_k, int experts, int local);

/* Predict node n at a load (op.load_duty, op.load_rho; 0, 0: a lone
 * kernel). llmsim_predict's result. */
int llmsim_graph_price(const struct llmsim_gpu *gpu, const struct llmsim_gnode *n,
		       double load_duty, double load_rho, struct llmsim_pred *p,
		       struct llmsim_err *err);

/* Names, for listings and JSON: "pre", "dense", "moe", "post", "p2p";
 * "fwd", "bwd", "recompute"; "weights", "kv", "activations". */
const char *llmsim_gsec_name(enum llmsim_gsec s);
const char *llmsim_byte_cat_name(enum llmsim_byte_cat c);

#endif
