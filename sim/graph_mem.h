/*
 * graph_mem.h - the tensors of a PyTorch training step's op graph: which
 * node allocates each tensor and after which node it is freed, as PyTorch
 * runs the step (autograd's saved tensors, autocast's weight copies, the
 * gradients as backward produces them). sim/train/mem_timeline.c walks
 * them in program order into the live bytes of the caching allocator and
 * their peak (torch.cuda.max_memory_allocated).
 *
 * A tensor belongs to one section of the graph and to each instance of it
 * (every layer has its own); born and dies are indices of that section's
 * nodes in g->node. What flows between sections is the residual stream
 * (each section's input is the output of the one before) and its gradient,
 * described per section by struct llmsim_gsec_io.
 *
 * Only the torch engine's training graph (struct llmsim_lowering's engine
 * LLMSIM_ENGINE_TORCH, work TRAIN) describes its tensors; other graphs
 * have none.
 */
#ifndef LLMSIM_GRAPH_MEM_H
#define LLMSIM_GRAPH_MEM_H

#include "graph.h"

enum llmsim_gt_kind {
	LLMSIM_GT_ACT,   /* an activation or a gradient of one: allocated when node `born`
			  * runs, freed after node `dies` (a forward node: used in forward
			  * only; a backward node: saved for backward) */
	LLMSIM_GT_WCAST, /* autocast's copy of a weight: as ACT, and besides held by
			  * autocast's cache until the forward leaves autocast (what keeps
			  * it when full recomputation drops what the layer saved) */
	LLMSIM_GT_GRAD,  /* a parameter's gradient: from node `born` (backward) until
			  * zero_grad(set_to_none=True) after the optimizer step; `dies`
			  * -1. A later micro-batch's is added into it (the node after
			  * `born`, an in-place add) and freed: dies = that node */
	LLMSIM_GT_WORK,  /* a kernel's workspace: only while node `born` runs */
	LLMSIM_GT_KIND_COUNT
};

struct llmsim_gtensor {
	double bytes;
	int born, dies;            /* node indices; dies -1: see the kind */
	enum llmsim_gt_kind kind;
};

/* The residual stream at a section's edges (node indices; -1: none). */
struct llmsim_gsec_io {
	int in_dies;               /* the node after which the section's input (the
				    * stream it reads, saved by its first norm) is freed */
	int out_born;              /* the node that allocates its output */
	int grad_in_born;          /* backward: the node that allocates the gradient of its
				    * input; -1 where the stream's gradient passes through
				    * (accumulated in place: one tensor down the layers) */
	int grad_out_dies;         /* the node after which the gradient of its output is
				    * freed; -1: it passes through */
	int stop;                  /* full recomputation (torch.utils.checkpoint, its early
				    * stop): the first forward node the recompute does not
				    * re-run, being after the last tensor the layer saves for
				    * backward; -1: every forward node runs again */
	int host_sync;             /* the node after which the host waits for the GPU (a
				    * device-to-host read of a result); -1: none */
};

#define LLMSIM_GRAPH_MAX_TENSORS 320

struct llmsim_graph_mem {
	int n;
	struct llmsim_gtensor t[LLMSIM_GRAPH_MAX_TENSORS];
	struct llmsim_gsec_io io[LLMSIM_SEC_COUNT];
	double stream_bytes;       /* one residual-stream tensor (and its gradient) */
};

/* llmsim_graph_build, and the tensors of the graph into mem (every
 * section: c->sections and c->parts must be 0). LLMSIM_EINVAL as
 * llmsim_graph_build, or for a graph that describes no tensors (any but the
 * torch training lowering). */
int llmsim_graph_build_mem(const struct llmsim_model *m, const struct llmsim_graph_cfg *c,
			   struct llmsim_graph *g, struct llmsim_graph_mem *mem,
			   struct llmsim_err *err);

#endif
