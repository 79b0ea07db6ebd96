/*
 * train.h - one training step of a dense or MoE decoder on many GPUs:
 * memory per GPU (closed form) and step time (every op priced through
 * llmsim_predict), for data, ZeRO 1-3, tensor (+sequence), pipeline
 * (1F1B, interleaved), context and expert parallelism; and the search over
 * all of them (`llmsim plan`, plan.h).
 *
 * Layout of ranks (Megatron order): gpus = tp * cp * dp * pp; TP is the
 * innermost group (consecutive ranks, inside a node when tp <= gpus per
 * node), then CP, then DP, then PP. Expert parallelism is carved out of the
 * dp*cp ranks (ep divides dp*cp; the expert-data-parallel group is
 * dp*cp/ep); experts are also split by TP (expert TP = TP).
 *
 * Sequence parallelism is always on when tp > 1 (as Megatron-LM runs it):
 * norms, dropout and residuals are sharded over TP, and each TP all-reduce
 * becomes an all-gather + reduce-scatter of the same volume.
 */
#ifndef LLMSIM_TRAIN_H
#define LLMSIM_TRAIN_H

#include <stdint.h>
#include "base/dtype.h"
#include "base/err.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/graph.h"
#include "sim/graph_mem.h"
#include "sim/sim.h"

/* Activation recomputation: none; selective (the attention core,
 * Korthikanti et al. 2022); full (whole layers: --recompute-method and
 * --recompute-num-layers choose which); modules (Megatron-Core's
 * --recompute-granularity selective --recompute-modules: each module named
 * in cfg.recompute_modules saves only its input and runs its forward again
 * in the backward). */
enum llmsim_recompute { LLMSIM_RECOMP_NONE, LLMSIM_RECOMP_SELECTIVE, LLMSIM_RECOMP_FULL,
			LLMSIM_RECOMP_MODULES, LLMSIM_RECOMP_COUNT };
/* Megatron-Core's recompute modules (transformer_config.py,
 * recompute_modules), by their names there: core_attn (the attention core),
 * mlp (a dense MLP), moe_act (the experts' activation function), mla_up_proj
 * (MLA's up-projections), layernorm (input and pre-MLP norms), moe (the whole
 * MoE layer), shared_experts. */
enum llmsim_recompute_module { LLMSIM_RM_CORE_ATTN, LLMSIM_RM_MLP, LLMSIM_RM_MOE_ACT,
			       LLMSIM_RM_MLA_UP_PROJ, LLMSIM_RM_LAYERNORM, LLMSIM_RM_MOE,
			       LLMSIM_RM_SHARED_EXPERTS, LLMSIM_RM_COUNT };
/* Full recompute over the layers of a stage (Megatron's --recompute-method):
 * uniform checkpoints the input of every group of recompute_layers layers
 * (all layers recomputed, a group re-materialized at a time); block
 * recomputes the first recompute_layers layers of each stage and keeps the
 * rest whole. */
enum llmsim_recompute_method { LLMSIM_RECOMP_UNIFORM, LLMSIM_RECOMP_BLOCK,
			       LLMSIM_RECOMP_METHOD_COUNT };
/* What ZeRO-2/3 runs as (`--fsdp`): none (DeepSpeed's ZeRO, or the llama3
 * recipe's FSDP, as memory.c and memory_rank.c hold them); megatron
 * (Megatron-FSDP, --use-megatron-fsdp: bf16 weights and fp32 main weights,
 * m, v and main grads sharded; parameter and gradient buckets of one layer
 * unsharded, double-buffered); fsdp2 (PyTorch fully_shard with
 * MixedPrecisionPolicy(bf16, fp32 reduce): fp32 sharded parameters, grads,
 * m and v; the bf16 parameters of the layer running and the one prefetched
 * unsharded, and its fp32 gradients unsharded until reduce-scattered). */
enum llmsim_fsdp { LLMSIM_FSDP_NONE, LLMSIM_FSDP_MEGATRON, LLMSIM_FSDP_FSDP2, LLMSIM_FSDP_COUNT };
/* Memory a stack keeps beside the model's tensors, stated per stack
 * (sim/train/stack.h; the numbers and their sources are in its file). */
struct llmsim_train_allow {
	double context_bytes;        /* CUDA context, cuBLAS/cuDNN/TE workspaces */
	double fragmentation_frac;   /* the caching allocator, of everything else */
	double nccl_bytes_per_group; /* NCCL buffers of each communicator in use */
	double cuda_graph_bytes;     /* captured CUDA graphs' memory pools */
	double error_frac;           /* the memory model's error for the stack: a total
				      * within it of the HBM is "within the memory
				      * model's error of the limit" (0: none stated) */
};
/* Pipeline schedules: 1F1B; Megatron's interleaved 1F1B (chunks per
 * stage); DeepSeek's DualPipe (DeepSeek-AI 2024, "DeepSeek-V3 Technical
 * Report", Sec. 3.2.1 and Table 2): micro-batches fed from both ends, each
 * rank holding two stages (the parameters twice, pp + 1 micro-batches of
 * activations), a forward chunk of one micro-batch paired with a backward
 * chunk of another so that the all-to-alls and the pipeline sends of each
 * overlap the other's compute, on the SMs the communication kernels leave
 * (20 of them taken: Sec. 3.2.2), bubble (pp/2 - 1)(F&B + B - 3W). */
enum llmsim_pp_sched { LLMSIM_SCHED_1F1B, LLMSIM_SCHED_INTERLEAVED, LLMSIM_SCHED_DUALPIPE,
		       LLMSIM_SCHED_COUNT };
/* Optimizer-state recipes (bytes per trained parameter, ZeRO stage 0):
 *   amp      PyTorch AMP: fp32 weights 4 + fp32 grads 4 + Adam m,v 8 = 16,
 *            plus a bf16 autocast copy of the weights (2) counted in other_bytes;
 *   megatron bf16 weights 2 + fp32 main grads 4 + fp32 master, m, v 12 = 18
 *            (ZeRO-1 is Megatron's distributed optimizer);
 *   zero     the ZeRO paper's mixed-precision Adam: 16-bit weights 2 +
 *            16-bit grads 2 + fp32 master, m, v 12 = 16;
 *   llama3   Meta's Llama 3 pre-training stack (Dubey et al. 2024, "The
 *            Llama 3 Herd of Models", Sec. 3.3.2 and 3.3.4): the bytes of
 *            megatron (FSDP's fp32 master, m, v and fp32 gradients, bf16
 *            weights held unsharded through the step: --zero 2 is FSDP
 *            without resharding after forward), and the mechanisms the
 *            paper describes (pp_layout.c, memory_rank.c):
 *            - the pipeline split counts the embedding and the output
 *              projection + loss as one layer each ("we reduce one
 *              Transformer layer each from the first and the last
 *              stages"); memory is that of the fullest pipeline rank
 *              under Megatron's interleaved schedule;
 *            - no allocator-fragmentation allowance: stage inputs and
 *              outputs are freed proactively and
 *              TORCH_NCCL_AVOID_RECORD_STREAMS returns the p2p buffers at
 *              once; what is left is identically shaped tensors of every
 *              micro-batch, which the caching allocator reuses;
 *            - the FP32 gradient reduce-scatter of each model chunk runs
 *              on the DP link beside the rest of the pipeline's compute;
 *            - context parallelism all-gathers K and V (exposed) instead
 *              of a ring. */
enum llmsim_recipe { LLMSIM_RECIPE_AMP, LLMSIM_RECIPE_MEGATRON, LLMSIM_RECIPE_ZERO,
		     LLMSIM_RECIPE_LLAMA3, LLMSIM_RECIPE_COUNT };
/* Model states kept in host memory (DeepSpeed; Ren et al. 2021
 * "ZeRO-Offload", Rajbhandari et al. 2021 "ZeRO-Infinity"):
 *   none       everything in HBM;
 *   optimizer  ZeRO-Offload: fp32 master weights, Adam m and v and an fp32
 *              gradient accumulator (4+4+4+4 = 16 B per parameter) in host
 *              memory, partitioned over DP as ZeRO does; the GPU keeps
 *              16-bit weights and 16-bit gradients (ZeRO stage 1, 2 or 3
 *              semantics for them). Gradients stream down over PCIe as
 *              backward produces them, DeepSpeed's CPU Adam runs on the
 *              host, the updated 16-bit shard streams back up;
 *   params     ZeRO-Infinity (CPU): also the 16-bit weights live in host
 *              memory (ZeRO-3 only); each layer's shard is fetched over
 *              PCIe and all-gathered over NVLink, in forward and again in
 *              backward, every micro-batch.
 * Offload needs a 16-bit-weight recipe (megatron or zero) and a GPU file
 * with a `host:` section. */
enum llmsim_offload { LLMSIM_OFFLOAD_NONE, LLMSIM_OFFLOAD_OPTIMIZER, LLMSIM_OFFLOAD_PARAMS,
		      LLMSIM_OFFLOAD_COUNT };
/* The Megatron-LM release whose program runs the step (a stack file's
 * `program:`, sim/train/stack.h), where the releases differ in what the
 * published runs measured:
 *   core           today's Megatron-Core (the default): gradient reduction
 *                  bucketed and overlapped with backward (--overlap-grad-reduce),
 *                  pipeline sends of the whole activation (1/tp of it under SP),
 *                  the optimizer as one fused AdamW pass;
 *   megatron-2021  Narayanan et al. 2021 (arXiv:2104.04473) as its code ran it
 *                  (Megatron-LM v2, fp16): every pipeline send split over the
 *                  TP ranks and all-gathered over NVLink on arrival (the
 *                  scatter/gather of section 4.1); the TP all-reduce of a
 *                  column-parallel linear's input gradient exposed (no async
 *                  all-reduce yet); the data-parallel all-reduce of the 16-bit
 *                  gradients after the last backward, not overlapped (LocalDDP's
 *                  allreduce_gradients); the optimizer step as Megatron's
 *                  mixed-precision optimizer runs it: the gradient norm
 *                  (clip_grad_norm_fp32), Adam, the fp32 master weights copied
 *                  to the 16-bit model weights;
 *   megatron-2022  Korthikanti et al. 2022 (arXiv:2205.05198), Megatron-LM v3,
 *                  bf16: as 2021, with the column-parallel input gradient's
 *                  collective overlapped with the weight-gradient GEMM
 *                  (async TP all-reduce; with SP the reduce-scatter, and the
 *                  re-all-gather of the SP-sharded input overlapped with the
 *                  data-gradient GEMM) and fp32 gradients reduced.
 * An overlapped collective shares the SMs: its NCCL channels (one block
 * each) leave the GEMM it hides behind (sms - channels) of the SMs, for
 * the old stacks, whose GEMMs take every SM. */
/* How tensor-parallel collectives overlap the GEMMs beside them
 * (`--tp-overlap`; Megatron-Core's --tp-comm-overlap with Transformer
 * Engine's userbuffers, transformer_engine/pytorch/module/base.py
 * initialize_ub and its default configs):
 *   none         no userbuffers: the stack's own policy (core: a column
 *                point's backward collective behind the weight-gradient
 *                GEMM, Megatron's asynchronous TP communication; the rest
 *                exposed);
 *   bulk         TE's bulk overlaps: the column point's backward
 *                reduce-scatter behind the weight gradient and its
 *                sequence-parallel re-all-gather behind the data gradient,
 *                each on its own SMs (num_sm 16 by default);
 *   userbuffers  bulk, and the forward all-gather split into a ring
 *                exchange inside the column linear's forward GEMM
 *                (qkv_fprop, fc1_fprop: tp steps, one SM, copy engines),
 *                the forward reduce-scatter pipelined with the row linear's
 *                forward GEMM (proj_fprop, fc2_fprop: 4 chunks, 16 SMs),
 *                the backward all-gather as a ring exchange inside the row
 *                linear's data gradient (proj_dgrad, fc2_dgrad). */
enum llmsim_tp_overlap { LLMSIM_TP_OVERLAP_NONE, LLMSIM_TP_OVERLAP_BULK,
			 LLMSIM_TP_OVERLAP_UB, LLMSIM_TP_OVERLAP_COUNT };
extern const char *const llmsim_tp_overlap_names[]; /* none, bulk, userbuffers; NULL */
const char *llmsim_tp_overlap_name(enum llmsim_tp_overlap o);

enum llmsim_ddp { LLMSIM_DDP_STACK, LLMSIM_DDP_TORCH, LLMSIM_DDP_LOCAL, LLMSIM_DDP_COUNT };
enum llmsim_stack { LLMSIM_STACK_CORE, LLMSIM_STACK_MEGATRON_2021, LLMSIM_STACK_MEGATRON_2022,
		    LLMSIM_STACK_COUNT };

const char *llmsim_recompute_name(enum llmsim_recompute r);
const char *llmsim_pp_sched_name(enum llmsim_pp_sched s);
const char *llmsim_recipe_name(enum llmsim_recipe r);
const char *llmsim_offload_name(enum llmsim_offload o);
const char *llmsim_stack_name(enum llmsim_stack s);
extern const char *const llmsim_recompute_names[];  /* NULL-terminated */
extern const char *const llmsim_recompute_module_names[]; /* core_attn, mlp, ... */
extern const char *const llmsim_recompute_method_names[]; /* uniform, block */
extern const char *const llmsim_fsdp_names[];       /* none, megatron, fsdp2 */
extern const char *const llmsim_pp_sched_names[];
extern const char *const llmsim_recipe_names[];
extern const char *const llmsim_offload_names[];    /* none, optimizer, params */
extern const char *const llmsim_stack_names[];      /* core, megatron-2021, megatron-2022 */
extern const char *const llmsim_ddp_names[];        /* stack, torch, local */

struct llmsim_train_cfg {
	int gpus;
	int tp, pp, dp, cp, ep;
	int zero;                       /* 0..3 */
	int micro_batch;                /* sequences per micro-batch */
	int64_t global_batch;           /* sequences per step */
	int64_t seq;                    /* tokens per sequence */
	enum llmsim_recompute recompute;
	enum llmsim_pp_sched schedule;
	int chunks;                     /* interleaved: model chunks per stage (v) */
	enum llmsim_dtype dtype;        /* the linear layers' GEMM type: the precision
					 * recipe's format (llmsim_train_cfg_precision) */
	enum llmsim_precision_recipe precision; /* sim/precision.h (default bf16) */
	enum llmsim_tp_overlap tp_overlap; /* userbuffers overlap of TP (default none) */
	enum llmsim_moe_dispatch moe_dispatch; /* MoE token dispatch (default alltoall) */
	enum llmsim_cp_comm cp_comm;    /* CP as a ring, all-to-all or both (default p2p) */
	int moe_overlap;                /* 1: the EP exchanges of one micro-batch overlap
					 * another's compute (Megatron-Core's
					 * --overlap-moe-expert-parallel-comm, the 1F1B
					 * overlap of MoE; DeepSeek-V3's DualPipe pairs) on
					 * the SMs the exchange leaves */
	enum llmsim_recipe recipe;
	enum llmsim_attn_impl attn;
	int lora_rank;                  /* 0: full fine-tuning / pre-training */
	int sequence_parallel;          /* 1 (default): SP with TP, as Megatron */
	int uneven_pp;                  /* layers need not divide pp*chunks: the
					 * busiest stage holds ceil(L/(pp*v))*v */
	double moe_imbalance;           /* >= 1: busiest expert's load / mean */
	enum llmsim_offload offload;    /* model states in host memory */
	int dpu;                        /* ZeRO-Offload's one-step delayed parameter
					 * update: the CPU Adam step (and the upload
					 * of its result) overlaps the next step's
					 * forward and backward */
	/* the program that runs the step (sim/graph.h's engines):
	 *   fused  Megatron-LM's fused kernels (one kernel per op: fused QKV
	 *          and gate-up GEMMs, fused RoPE, SwiGLU, cross-entropy; the
	 *          default);
	 *   torch  a plain PyTorch step on one GPU as calib/torch/steps_train.py
	 *          writes it: fp32 parameters under bf16 autocast,
	 *          loss.backward(), fused AdamW, zero_grad(set_to_none=True),
	 *          every op launched from Python (eager), its memory the caching
	 *          allocator's timeline (sim/graph_torch_train.c,
	 *          sim/train/torch_step.c, mem_timeline.c);
	 *   hf     not a training program llmsim models (rejected) */
	enum llmsim_engine engine;
	/* the clock the ops run at: the step's own load (busy, the default: a
	 * training loop keeps the GPU busy, duty 1, at the tensor intensity of
	 * its ops), a given one (busy with load_rho > 0), or lone kernels at
	 * the burst clock */
	enum llmsim_load load;
	double load_rho;
	enum llmsim_operand_data operand_data; /* what the operands hold (hw/gpu.h) */
	enum llmsim_stack stack;        /* the Megatron release (core: today's) */
	enum llmsim_ddp ddp;            /* the gradient all-reduce (ZeRO 0/1): 0 the stack's
					 * (core overlapped, megatron-2021/2022 after the
					 * backward); LLMSIM_DDP_TORCH overlapped with the
					 * last backward bucket by bucket (PyTorch DDP,
					 * Megatron's --DDP-impl torch); LLMSIM_DDP_LOCAL
					 * after the backward (Megatron's LocalDDP) */
	/* memory as the stacks hold it (stack.h, memory.c) */
	unsigned recompute_modules;     /* LLMSIM_RECOMP_MODULES: bit per module */
	enum llmsim_recompute_method recompute_method; /* LLMSIM_RECOMP_FULL */
	int recompute_layers;           /* full: layers a group (uniform) or recomputed
					 * per stage (block); 0: every layer, one a group */
	double offload_activations;     /* 0..1: of the saved activations of the layers
					 * waiting for their backward, the fraction kept in
					 * host memory (sent over the host link as the
					 * forward goes, fetched ahead of the backward) */
	enum llmsim_fsdp fsdp;          /* what ZeRO-2/3 runs as */
	struct llmsim_train_allow allow;
	char stack_name[32];            /* the stack file's name ("": none applied) */
};

/* Defaults: everything 1, zero 0, micro-batch 1, seq 4096, global batch
 * 1024, no recompute, 1F1B, bf16, megatron recipe, flash2, imbalance 1,
 * no offload, no DPU, the fused engine in its own load on trained data. */
void llmsim_train_cfg_init(struct llmsim_train_cfg *c);

/* Set c's precision recipe and with it the GEMM type (dtype). */
void llmsim_train_cfg_precision(struct llmsim_train_cfg *c, enum llmsim_precision_recipe p);

/* c as the torch engine runs calib/torch/steps_train.py on gpu: engine
 * torch, the amp recipe, attention as PyTorch's SDPA dispatches it
 * (llmsim_train_sdpa), one micro-batch a step (global batch = micro-batch). */
void llmsim_train_cfg_torch(struct llmsim_train_cfg *c, const struct llmsim_gpu *gpu);

/* torch.nn.functional.scaled_dot_product_attention's kernels on gpu:
 * cuDNN's fused attention on Hopper and later (the default backend there
 * since PyTorch 2.5; priced as flash3, as calib's held-out SDPA cases
 * are), FlashAttention-2 before. */
enum llmsim_attn_impl llmsim_train_sdpa(const struct llmsim_gpu *gpu);

/* Layers of the busiest pipeline stage. */
double llmsim_train_stage_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c);

/* Why a configuration is invalid (llmsim_train_check; the planner counts finer
 * reasons of its own, plan.h). */
enum llmsim_train_reject {
	LLMSIM_REJ_NONE,
	LLMSIM_REJ_GPUS,      /* tp*pp*dp*cp != gpus */
	LLMSIM_REJ_HEADS,     /* heads (or kv heads) not divisible by tp */
	LLMSIM_REJ_LAYERS,    /* layers not divisible by pp (* chunks) */
	LLMSIM_REJ_BATCH,     /* global batch not divisible by micro-batch * dp */
	LLMSIM_REJ_SEQ,       /* seq not divisible by 2 * cp */
	LLMSIM_REJ_EXPERTS,   /* ep does not divide experts or dp*cp */
	LLMSIM_REJ_SCHEDULE,  /* interleaving needs pp > 1 and micro-batches % pp == 0 */
	LLMSIM_REJ_OPTION,    /* other bad option (zero stage, dtype, lora, ...) */
	LLMSIM_REJ_OOM,       /* does not fit in HBM */
	LLMSIM_REJ_HOST_OOM,  /* offloaded states do not fit in host memory */
	LLMSIM_REJ_COUNT
};

/* The largest MoE imbalance (busiest expert's load over the mean) model m
 * allows: experts / top_k, when the busiest expert gets every token; 1
 * for a dense model. */
double llmsim_train_max_imbalance(const struct llmsim_model *m);

/* Check a configuration against the model (not memory). Returns the first
 * reason it is invalid (LLMSIM_REJ_NONE if valid) and, when err is given,
 * one line per violation joined by "; " in err->msg. */
enum llmsim_train_reject llmsim_train_check(const struct llmsim_model *m,
					    const struct llmsim_train_cfg *c,
					    struct llmsim_err *err);

/* Memory per GPU (the most loaded rank: first pipeline stage for
 * activations, the larger of first/last stage for weights), bytes. */
struct llmsim_train_mem {
	double weights_bytes, grads_bytes, optimizer_bytes, activations_bytes, other_bytes;
	double total_bytes;
	double params_per_gpu;          /* parameters held (before ZeRO-3) */
	double trained_params_per_gpu;  /* with grads and optimizer state */
	double act_per_layer_bytes;     /* one micro-batch, one layer (dense) */
	double act_in_flight_layers;    /* layer-activations held (pipeline) */
	double fragmentation_bytes;     /* part of other_bytes */
	double quant_weights_bytes;     /* part of other_bytes: the precision recipe's
					 * quantized weight copies and scaling state */
	double act_offloaded_bytes;     /* activations kept in host memory
					 * (--offload-activations; not in total_bytes) */
	int pp_rank;                    /* the pipeline rank it is of: -1 the closed
					 * form's (first stage's activations, the larger
					 * stage's weights); >= 0 that rank (llama3) */
	double grad_transient_bytes;    /* part of grads_bytes: one chunk's unsharded
					 * FP32 gradients in their reduce-scatter */
	double hbm_bytes;               /* capacity */
	/* host memory (offload only; 0 otherwise) */
	double host_per_gpu_bytes;      /* offloaded states of one rank + its process */
	double host_per_node_bytes;     /* host_per_gpu_bytes x ranks on the node */
	double host_params_per_gpu;     /* trained params whose states one rank offloads */
	double host_bytes;              /* capacity of one node */
};

/* Bytes per trained parameter of weights, gradients and optimizer state
 * for a recipe and ZeRO stage over n data-parallel ranks (weights exclude
 * the AMP autocast copy). */
void llmsim_train_state_bytes(enum llmsim_recipe r, int zero, int n, double *weights,
			      double *grads, double *optimizer);

/* Bytes per trained parameter on the GPU (weights, gradients, optimizer
 * state) and in host memory, for an offload mode, recipe and ZeRO stage
 * over n data-parallel ranks (the host holds this rank's 1/n partition).
 * LLMSIM_OFFLOAD_NONE gives llmsim_train_state_bytes and host 0.
 * Offloaded: GPU 2 (16-bit weights, /n at ZeRO-3; 0 with params) + 2
 * (16-bit gradients, /n at ZeRO-2 and 3; 0 with params) + 0; host 16/n
 * (fp32 master, m, v and gradient accumulator) + 2/n with params. */
void llmsim_train_offload_bytes(enum llmsim_recipe r, int zero, enum llmsim_offload o, int n,
				double *gpu_weights, double *gpu_grads, double *gpu_optimizer,
				double *host);

/* The NCCL buffers c's stack allows for the communicators its layout uses
 * (TP, CP, DP x CP, PP, EP: cfg.allow.nccl_bytes_per_group each). */
double llmsim_train_nccl_bytes(const struct llmsim_train_cfg *c);

/* Activation bytes one layer saves for backward, for one micro-batch on
 * one GPU: the Korthikanti et al. 2022 accounting generalized to GQA,
 * gated MLPs, MoE and flash attention. dropout: the model stores dropout
 * masks (GPT-style models; Llama-style ones train without dropout). */
double llmsim_train_act_layer_bytes(const struct llmsim_model *m,
				    const struct llmsim_train_cfg *c, int moe_layer,
				    int dropout);

/* Pipeline bubble as a fraction of the ideal (compute) time:
 * 1F1B (p-1)/m; interleaved (p-1)/(v*m). */
double llmsim_train_bubble_fraction(int pp, int chunks, int64_t microbatches,
				    enum llmsim_pp_sched s);

/* The pipeline split (pp_layout.c). With the llama3 recipe and pp > 1 the
 * embedding and the output projection + loss each take one layer's slot:
 * L + 2 slots over pp * chunks model chunks of ceil((L+2)/(pp*chunks))
 * slots, virtual stage j*pp + r on rank r as chunk j (Megatron's
 * interleaving), slot 0 the embedding, slot L+1 the head; otherwise L
 * slots and no ends. */
int llmsim_train_pp_ends_in_slots(const struct llmsim_train_cfg *c);
/* The slots the split divides: L + 2 with the ends in slots, else L. */
int64_t llmsim_train_pp_slots(const struct llmsim_model *m, const struct llmsim_train_cfg *c);
/* 1 when the llama3 split (k = ceil(slots / (pp x chunks)) slots a chunk,
 * pp_layout.c) would leave a model chunk without a slot: such a layout is
 * rejected (Megatron has no empty virtual stage). */
int llmsim_train_pp_empty_chunks(const struct llmsim_model *m, const struct llmsim_train_cfg *c);
/* Layers (transformer layers only) of chunk j on pipeline rank r; *emb,
 * *head (may be NULL) whether it holds the embedding / the head. Only for
 * llmsim_train_pp_ends_in_slots configurations. */
int llmsim_train_pp_chunk_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
				 int rank, int chunk, int *emb, int *head);
/* The peak, over one step of Megatron's schedule on pipeline rank `rank`
 * of pp, of the sum of weight[chunk] over the (micro-batch, chunk)
 * forwards whose backward has not yet run: interleaved (chunks > 1)
 * runs min((pp-rank-1)*2 + (chunks-1)*pp, m*chunks) warm-up forwards,
 * then one forward and one backward alternately, then the cool-down
 * backwards, the forward chunk of the k-th (k % (pp*chunks)) / pp, the
 * backward's chunks-1 minus that; 1F1B (chunks 1) is the same with
 * min(pp-rank-1, m) warm-up forwards. weight NULL: 1 per chunk (the
 * chunk instances in flight). m: micro-batches of the step. */
double llmsim_train_pp_peak_inflight(int pp, int chunks, int64_t m, int rank,
				     const double *weight);

/* DualPipe's bubble (DeepSeek-V3 Table 2): (pp/2 - 1)(F&B + B - 3W), with
 * fb the time of a forward and a backward chunk overlapped, b a full
 * backward chunk, w its weight-gradient part. */
double llmsim_train_dualpipe_bubble_s(int pp, double fb, double b, double w);

/* Bytes each rank sends, summed over a step, per kind of communication
 * (the volumes behind the collectives, for tests and reports). */
struct llmsim_train_comm {
	double tp_bytes;     /* TP all-reduces (or AG+RS), whole step */
	double dp_bytes;     /* DP gradient reduction + parameter gathers */
	double zero3_bytes;  /* ZeRO-3 per-layer gathers and reduce-scatters */
	double pp_bytes;     /* pipeline send/recv */
	double cp_bytes;     /* ring attention KV passing */
	double ep_bytes;     /* all-to-all dispatch and combine */
	/* per collective payloads (the op's `bytes`) */
	double tp_msg_bytes;      /* one TP all-reduce: s/cp * b * h * 2 */
	double dp_grad_bytes;     /* gradient buffer reduced over DP */
	/* offload: bytes each GPU moves over PCIe per step */
	double pcie_down_bytes;   /* 16-bit gradients to the host */
	double pcie_up_bytes;     /* 16-bit weights from the host */
};

struct llmsim_train_time {
	double compute_s;       /* kernels on the critical path, all micro-batches */
	double comm_exposed_s;  /* communication not hidden behind compute */
	double bubble_s;        /* pipeline fill and drain */
	double optimizer_s;     /* optimizer step (after the last backward) */
	double quantize_s;      /* part of compute_s: the precision recipe's quantize and
				 * amax kernels (their weights' once a step) */
	double step_s;
	/* details */
	double fwd_mb_s, bwd_mb_s;  /* one micro-batch through the slowest stage */
	double tp_exposed_s, cp_exposed_s, ep_exposed_s, pp_exposed_s;
	double dp_exposed_s, zero3_exposed_s;
	double dp_comm_s;       /* total DP communication before overlap */
	/* offload */
	double offload_s;       /* exposed: PCIe beyond overlap + CPU Adam not hidden */
	double cpu_adam_s;      /* the node's CPU Adam step */
	double pcie_down_s, pcie_up_s; /* transfers per step, before overlap */
	double act_offload_s;   /* activation offload's transfers not hidden */
};

/* The torch engine's step as PyTorch runs it (all 0 for the fused one). */
enum { LLMSIM_TORCH_MEM_PARAMS, LLMSIM_TORCH_MEM_OPTIMIZER, LLMSIM_TORCH_MEM_GRADS,
       LLMSIM_TORCH_MEM_ACTIVATIONS, LLMSIM_TORCH_MEM_WORKSPACE, LLMSIM_TORCH_MEM_COUNT };
struct llmsim_train_torch {
	/* memory (mem_timeline.c): the caching allocator over the step */
	double peak_allocated_bytes;  /* torch.cuda.max_memory_allocated of a step */
	double reserved_bytes;        /* its segments: torch.cuda.max_memory_reserved */
	double device_bytes;          /* the GPU's memory (torch.cuda.mem_get_info()[1]) */
	double at_peak_bytes[LLMSIM_TORCH_MEM_COUNT]; /* what is live at the peak (tensor
						       * bytes, before the allocator's
						       * rounding) */
	char peak_at[64];             /* the op allocating at the peak: "log_softmax.bwd" */
	int peak_layer;               /* its layer, -1 outside the layers */
	int peak_recompute;           /* the op was a recomputed one */
	/* time (torch_step.c) */
	double gpu_s;                 /* kernels of a step (forward, backward, optimizer) */
	double host_s;                /* the host's launch time of a step */
	double idle_s;                /* step time the GPU waits: on launches, syncs and
				       * between kernels */
	double kernels;               /* kernels launched per step */
	double optimizer_launches;    /* fused AdamW's multi_tensor_apply launches */
};

struct llmsim_train_result {
	struct llmsim_train_cfg cfg;
	struct llmsim_train_mem mem;
	struct llmsim_train_time time;
	struct llmsim_train_comm comm;
	int64_t microbatches;     /* per pipeline per step */
	double tokens_per_step;
	double tokens_per_s;
	double model_flops;       /* per step, all GPUs: fwd + bwd */
	double hw_flops;          /* with recomputation */
	double peak_flops_per_s;  /* per GPU, the matmul dtype */
	double mfu, hfu;
	double load_rho;          /* the tensor intensity the step's ops were
				   * priced in (the power limit's one clock,
				   * sim/predict.c); 0: the burst clock */
	int fits;                 /* gpu_fits && host_fits */
	int mem_tight;            /* fits, but within the memory model's error of the
				   * HBM (cfg.allow.error_frac of the total, either way) */
	double mem_error_bytes;   /* that error: error_frac x total_bytes */
	int gpu_fits, host_fits;  /* gpu: total_bytes (1 - error_frac) <= HBM */
	double sm_clock_hz;       /* the SM clock its tensor work runs at: the power
				   * limit's at its load, or the burst clock (lone) */
	struct llmsim_train_torch torch; /* engine torch */
};

/* An evaluation context: a model and GPU, with a cache of priced ops so
 * that a search prices each distinct op shape once. */
struct llmsim_train_ctx;

int llmsim_train_ctx_new(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
			 struct llmsim_train_ctx **out, struct llmsim_err *err);
void llmsim_train_ctx_free(struct llmsim_train_ctx *ctx); /* NULL: no-op */

/* Simulate one configuration. Returns 0 (also when it does not fit: see
 * r->fits), LLMSIM_EINVAL with the violations in err when the
 * configuration is invalid, or an error from llmsim_predict. */
int llmsim_train_simulate(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  struct llmsim_train_result *r, struct llmsim_err *err);

/* The op graph of one micro-batch of c (sim/graph.h) as training walks it,
 * each node predicted (pred[i] of g->node[i], room for LLMSIM_GRAPH_MAX) at
 * load_rho (the step's tensor intensity, r->load_rho: the clock its load
 * allows; 0: lone kernels at the burst clock). For listings and the
 * comparisons that must show the very ops `train` prices. */
int llmsim_train_step_ops(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  double load_rho, struct llmsim_graph *g, struct llmsim_pred *pred,
			  struct llmsim_err *err);

/* The simulated timeline of one step of c into tl (sim/timeline.h; reset
 * first), r being llmsim_train_simulate's result for c. The fused engine:
 * one process per pipeline stage (pid its first rank) with its forward and
 * backward micro-batch chunks in the schedule the step was priced with
 * (1F1B or interleaved, sim/train/schedule.c), their kernels, recompute and
 * each communication's exposed and hidden parts on their own tracks, the
 * data-parallel reductions and the optimizer; it ends at r->time.step_s.
 * The torch engine: the step's kernels in launch order on one stream.
 * Returns 0, or an error from the pricing or out of memory. */
struct llmsim_timeline;
int llmsim_train_timeline(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
			  const struct llmsim_train_result *r, struct llmsim_timeline *tl,
			  struct llmsim_err *err);

/* The search over configurations (`llmsim plan`): sim/train/plan.h. */

#endif
