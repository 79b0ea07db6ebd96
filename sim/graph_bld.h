/*
 * graph_bld.h - the op graph's builder, shared by sim/graph.c (the layer's
 * structure: projections, attention, MLP, MoE, the ends, the parallel
 * collectives), sim/graph_engine.c (how an engine runs a norm, RoPE, the
 * KV write, the activation, MoE routing: struct llmsim_lowering) and
 * sim/graph_torch_train.c (PyTorch's training step: autocast, autograd's
 * backward, the tensors each op keeps). Internal to sim/: nothing outside
 * the graph includes it.
 *
 * Every helper adds nodes of the current section and part (b->sec,
 * b->part) and returns NULL (adds nothing) when the config leaves that
 * section or part out, or the shape is empty.
 */
#ifndef LLMSIM_GRAPH_BLD_H
#define LLMSIM_GRAPH_BLD_H

#include "graph.h"
#include "graph_mem.h"

struct bld {
	const struct llmsim_model *m;
	const struct llmsim_graph_cfg *c;
	struct llmsim_graph *g;
	int train;
	enum llmsim_engine engine;  /* c->lower.engine, checked */
	enum llmsim_gsec sec;
	unsigned part;              /* of the nodes being added */
	int64_t T, Tsp;             /* tokens of the step; of norms and residuals */
	double flops_scale;
	enum llmsim_ew_kind norm;
	int pending[4], npending;   /* a column point's backward collectives, waiting for
				     * the first weight gradient after the point */
	int regather;               /* an SP re-all-gather waiting for the data gradient
				     * after the point (-1: none) */
	char prefix[24];            /* of the names of the FFN being added */
	int normed;                 /* the next linear's input is a norm's output (its
				     * quantize may fuse into the norm) */
	int sp_input;               /* the next linear's input is all-gathered over TP
				     * (sequence parallelism): quantized on Tsp tokens */
	int ub_pending;             /* a column point's forward all-gather waiting for its
				     * linear's forward GEMM (-1: none) */
	struct llmsim_graph_mem *mem; /* the tensors of the nodes (graph_mem.h), or NULL */
};

/* dst = a b c, cut to size (names are built on the planners' hot path:
 * no printf) */
void gb_cat3(char *dst, size_t size, const char *a, const char *b, const char *c);

/* A node of op kind `kind`, or NULL when the config leaves it out. */
struct llmsim_gnode *gb_node(struct bld *b, const char *name, enum llmsim_gphase ph,
			     enum llmsim_op_kind kind, enum llmsim_byte_cat cat, unsigned role);

/* One GEMM node (m, n, k, batch); quantized: in the linear layers' math and
 * weight types, else the activation type. */
struct llmsim_gnode *gb_gemm(struct bld *b, const char *name, enum llmsim_gphase ph, int64_t m,
			     int64_t n, int64_t k, int64_t batch, int quantized, unsigned role);

/* An element-wise node in the activation type. */
struct llmsim_gnode *gb_ew1(struct bld *b, const char *name, enum llmsim_gphase ph,
			    enum llmsim_ew_kind kind, int64_t tokens, int64_t hidden,
			    enum llmsim_byte_cat cat, int strided, unsigned role);
/* An element-wise op, and its backward in training. */
void gb_ew(struct bld *b, const char *name, enum llmsim_ew_kind kind, int64_t tokens,
	   int64_t hidden, enum llmsim_byte_cat cat, int strided, unsigned role);

/* ---- PyTorch's training step (graph_torch_train.c) ---- */

/* The embedding, one dense layer, the final norm, LM head and loss of a
 * plain PyTorch training step under autocast, each section's forward then
 * its backward as autograd runs it (see graph_torch_train.c), and their
 * tensors into b->mem when it is set. 0 or LLMSIM_EINVAL (a model the
 * program cannot express: MoE, MLA). */
int gb_torch_train(struct bld *b, struct llmsim_err *err);
/* ---- how the engine runs an op (graph_engine.c) ---- */

/* A norm of `hidden` over T rows (the model's kind): one kernel, or
 * LlamaRMSNorm's eight (hf). */
void gb_norm(struct bld *b, const char *name, int64_t T, int64_t hidden);
/* RoPE over the T tokens' query heads (q_width) and key heads (k_width). */
void gb_rope(struct bld *b, int64_t q_width, int64_t k_width);
/* The per-head query and key norms of a qk_norm model (q_width, k_width:
 * the heads' widths of one token). */
void gb_qk_norm(struct bld *b, int64_t q_width, int64_t k_width);
/* The step's K and V (`width` each per token) into the cache; `separate`:
 * K and V are two tensors (GQA), else one latent (MLA). */
void gb_kv_write(struct bld *b, int64_t width, int separate);
/* A gated MLP's activation and product over T x w (batch experts), or a
 * plain one's activation; `halves`: gate and up are the halves of one GEMM
 * output (strided views). */
void gb_activation(struct bld *b, int64_t T, int64_t w, int64_t batch, int halves,
		   unsigned role);
/* Whether the engine runs the torch-style (PyTorch op by op) lowering. */
int gb_pytorch(const struct bld *b);

#endif
