/*
 * trace_analyze.h - understanding a captured trace: kernel classes from
 * their names, op shapes recovered from NVTX ranges and a model
 * description, predictions by the GPU model (sim/sim.h) compared with the
 * measured kernel times, and the same program replayed on another GPU.
 *
 * Shape recovery: a kernel belongs to the innermost NVTX range open when it
 * was launched. Walking up from there, the first range whose name is an op
 * of the model's graph ("qkv_proj", "attention", "silu_mul", ... the names
 * of sim/graph.h) is its op range, and the first range named like a step
 * ("prefill b=4 s=2048", "decode b=8 ctx=2048") its phase. The ops are the
 * graph's nodes of that name for that step, the graph `llmsim infer` walks
 * (trace_ops.c: fused kernels or plain PyTorch's, by the kernel count).
 * When the op range holds exactly as many kernels as the graph has ops of
 * its name, each kernel is compared with its op (an element-wise op's
 * strided path taken from its kernel's name); otherwise the range is
 * compared as a whole (sum of its kernels against its ops).
 * A step range whose kernels lie in no op range at all (a program that
 * marks only its steps) is recovered by order: its GEMMs are QKV, O,
 * gate/up and down of each layer (fused projections), then the LM head when
 * one is left over, a split-K reduction joining its GEMM; consecutive
 * attention kernels are the layer's attention.
 * Anything else is "unmatched": counted at its measured time and flagged.
 */
#ifndef LLMSIM_TRACE_ANALYZE_H
#define LLMSIM_TRACE_ANALYZE_H

#include <stddef.h>
#include "trace.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/graph.h"
#include "sim/sim.h"

enum llmsim_trace_class {
	LLMSIM_TC_GEMM,
	LLMSIM_TC_ATTENTION,
	LLMSIM_TC_ELEMENTWISE,
	LLMSIM_TC_NORMALIZATION,
	LLMSIM_TC_COMMUNICATION,
	LLMSIM_TC_COPIES,         /* memcpy / memset records */
	LLMSIM_TC_OTHER,
	LLMSIM_TC_COUNT
};

/* "gemm", "attention", ... (static). */
const char *llmsim_trace_class_name(enum llmsim_trace_class c);

/* The class of a kernel from its (mangled or demangled) name. */
enum llmsim_trace_class llmsim_trace_classify(const char *kernel_name);

/* Whether a kernel is PyTorch's generic (non-vectorized) elementwise path,
 * "elementwise_kernel" / "unrolled_elementwise_kernel": what runs when an
 * operand is strided (a slice, a transposed view) or needs a cast. It moves
 * the same bytes as the vectorized path, only slower; the GPU model prices
 * the vectorized one. */
int llmsim_trace_nonvectorized(const char *kernel_name);

/* The class an op's time belongs to (decode attention is "attention",
 * rmsnorm/layernorm/softmax are "normalization"). */
enum llmsim_trace_class llmsim_trace_op_class(const struct llmsim_op *op);

/* A readable kernel name: demangled, without return type, parameters, and
 * template arguments beyond the first (often the functor); at most size-1
 * characters. Returns buf. */
char *llmsim_trace_short_name(const char *kernel_name, char *buf, size_t size);

/* Tile shape from a cuBLAS nvjet / cutlass name ("..._128x256_64x4_..."):
 * 0 and tile_m/n/k, or -1 when the name has none. */
int llmsim_trace_gemm_tile(const char *kernel_name, int *tile_m, int *tile_n, int *tile_k);

/* A step range name: "prefill b=4 s=2048", "decode b=8 ctx=2048 [q=1]". */
struct llmsim_trace_phase {
	int decode;               /* 0 prefill, 1 decode */
	int64_t batch;            /* sequences */
	int64_t new_tokens;       /* per sequence: s (prefill) or q (decode, default 1) */
	int64_t context;          /* keys each new token attends to (incl. itself) */
};
/* 0 and *p, or -1 when name is not a step range. */
int llmsim_trace_phase_parse(const char *name, struct llmsim_trace_phase *p);

/* ---- show (trace_summary.c) ----------------------------------------- */

/* Time summed under one name. */
struct llmsim_trace_name_sum {
	const char *name;         /* the trace's interned string */
	int64_t count;            /* kernels: launches; ranges: ranges of that name */
	double s;                 /* kernels: their time; ranges: kernel time launched
				   * inside (each kernel once per name enclosing it) */
};

struct llmsim_trace_summary {
	double cls_s[LLMSIM_TC_COUNT];     /* per class (copies included) */
	int64_t cls_n[LLMSIM_TC_COUNT];
	double total_s;
	struct llmsim_trace_name_sum *kernels; /* per distinct kernel name, heaviest first */
	size_t nkernels;
	struct llmsim_trace_name_sum *ranges;  /* per distinct NVTX range name, heaviest first */
	size_t nranges;
};

/* Summarize a checked trace (llmsim_trace_check) in time linear in its
 * records. Names point into t: release s before t. 0 or LLMSIM_ENOMEM. */
int llmsim_trace_summarize(const struct llmsim_trace *t, struct llmsim_trace_summary *s,
			   struct llmsim_err *err);
void llmsim_trace_summary_release(struct llmsim_trace_summary *s); /* NULL is a no-op */

/* The model a program names in an NVTX range "model NAME" (the first such
 * range; NAME ends at a space) into buf (size bytes), or "" when none.
 * Fails with LLMSIM_EINVAL when NAME is not a model name (letters, digits,
 * '.', '_', '-'; no path): load it with llmsim_model_load_named, which
 * looks among the shipped models only. */
int llmsim_trace_declared_model(const struct llmsim_trace *t, char *buf, size_t size,
				struct llmsim_err *err);

/* ---- compare -------------------------------------------------------- */

/* One row of the comparison: kernels with the same phase, op range, kernel
 * name and op spec, aggregated. */
struct llmsim_trace_row {
	char phase[64];           /* phase range name, "" if none */
	char range[64];           /* op range name, "" if none */
	char kernel[160];         /* short kernel name, or "N kernels" (range-level) */
	char op_spec[256];        /* recovered op, "" when unmatched */
	char note[96];            /* why unmatched, or "range-level" */
	enum llmsim_trace_class cls;
	int matched;
	int64_t launches;         /* kernels (or ranges, range-level) aggregated */
	double measured_s;        /* summed */
	double predicted_s;       /* summed; = measured_s when unmatched */
	double target_s;          /* replay: predicted on the target (raw model) */
	double replay_s;          /* replay: measured x target/source model ratio, or rule */
};

struct llmsim_trace_class_sum {
	int64_t kernels, unmatched_kernels;
	double measured_s;
	double predicted_s;       /* matched predicted + unmatched measured */
	double unmatched_s;
	double matched_measured_s, matched_predicted_s;
	double target_s, replay_s;
};

struct llmsim_trace_phase_sum {
	char name[64];
	int64_t instances;        /* ranges with this name */
	double measured_s, predicted_s, replay_s, target_s; /* summed over instances */
	double span_s;            /* median over instances of first kernel start to
				   * last kernel end: against measured_s / instances,
				   * how busy the GPU was */
};

struct llmsim_trace_cmp {
	struct llmsim_trace_row *rows;
	size_t nrows, caprows;
	struct llmsim_trace_class_sum cls[LLMSIM_TC_COUNT];
	struct llmsim_trace_class_sum total;
	struct llmsim_trace_phase_sum *phases;
	size_t nphases, capphases;
	/* recovered kernels on PyTorch's non-vectorized elementwise path */
	int64_t nonvec_kernels;
	double nonvec_measured_s, nonvec_predicted_s;
	int64_t excluded_kernels; /* LLMSIM_TRACE_PHASES_ONLY: left out (and copies) */
	double excluded_s;
	int64_t op_ranges;        /* op range instances recovered */
	int64_t range_level;      /* of which compared as a whole */
	int replay;               /* target_s / replay_s are filled */
	/* replay: how each class's unmatched kernels were scaled (device
	 * copies; host copies go by PCIe), and why */
	double unmatched_ratio[LLMSIM_TC_COUNT];
	const char *rule[LLMSIM_TC_COUNT];
	char model[64];           /* model used for shapes, "" none */
	char gpu[64], target[64];
};

void llmsim_trace_cmp_release(struct llmsim_trace_cmp *c); /* NULL is a no-op */

/* Flags of llmsim_trace_compare. */
enum {
	/* only kernels and copies launched inside a step range ("prefill ...",
	 * "decode ..."); the rest (set-up: weight init, warm-up outside the
	 * steps) is counted in excluded_* and left out of every sum */
	LLMSIM_TRACE_PHASES_ONLY = 1,
};

/* Compare a trace with the GPU model on gpu. m may be NULL (no shapes are
 * recovered: everything is unmatched). target may be NULL; when given,
 * every row is also priced on it (replay): recovered ops by the model
 * (target_s) and by measured x target/source model ratio (replay_s);
 * unmatched kernels by the rule of llmsim_trace_replay_ratio. flags:
 * LLMSIM_TRACE_* above. out is zeroed first. */
int llmsim_trace_compare(const struct llmsim_trace *t, const struct llmsim_gpu *gpu,
			 const struct llmsim_model *m, const struct llmsim_gpu *target,
			 unsigned flags, struct llmsim_trace_cmp *out, struct llmsim_err *err);

/* One recovered op invocation: a kernel paired with its op, or the kernels
 * of an op range compared as a whole against its single op. */
struct llmsim_trace_instance {
	const char *phase, *range;        /* range names */
	const char *op_spec;
	const struct llmsim_op *op;
	const struct llmsim_pred *pred;   /* on the compare GPU */
	const int *kernels;               /* indexes into the trace's kernels */
	int nkernels;
	double measured_s;                /* sum of their durations */
	int op_range;                     /* index of its op range in the trace's ranges
					   * (-1: recovered by order in a step range) */
};

/* Call fn for every recovered op invocation with a single op (as
 * llmsim_trace_compare recovers them; flags alike), in op range order. A
 * nonzero return from fn stops and is returned. */
int llmsim_trace_instances(const struct llmsim_trace *t, const struct llmsim_gpu *gpu,
			   const struct llmsim_model *m, unsigned flags,
			   int (*fn)(const struct llmsim_trace_instance *in, void *ctx), void *ctx,
			   struct llmsim_err *err);

/* ---- the ops of an op range (trace_ops.c) -------------------------- */

/* The graphs of model m for one phase, rebuilt when the phase changes
 * (m must outlive it). 0 or LLMSIM_ENOMEM. */
struct llmsim_trace_graphs;
int llmsim_trace_graphs_new(const struct llmsim_model *m, struct llmsim_trace_graphs **out);
void llmsim_trace_graphs_free(struct llmsim_trace_graphs *tg); /* NULL: no-op */

/* Whether name is an op of the model's graph (an op range we recover). */
int llmsim_trace_op_known(const struct llmsim_trace_graphs *tg, const char *range_name);

/* The graph nodes of op range `name` holding nkernels kernels in the step
 * that phase range `phase_name` (parsed: ph) names, fa/fd the attention
 * kernels its kernels show ("flash2", "flash3"; "flash2",
 * "flashdecoding"): fills ops[] (up to max) and returns their count, with
 * *per_kernel = 1 when they pair one-to-one with the kernels; -1 when the
 * graph has no such op (or cannot be built: err says why). The nodes live
 * in tg until its next call. */
#define LLMSIM_TRACE_OPS_MAX 8
#define LLMSIM_TRACE_SPEC_MAX 256 /* an op spec of a row (llmsim_op_format_short) */
int llmsim_trace_ops(struct llmsim_trace_graphs *tg, const char *phase_name,
		     const struct llmsim_trace_phase *ph, const char *fa, const char *fd,
		     const char *name, int nkernels, const struct llmsim_gnode **ops, int max,
		     int *per_kernel, struct llmsim_err *err);

/* ---- calibration cases (trace_calib.c) ------------------------------ */

struct llmsim_store;

/* Add the trace's recovered GEMM and attention invocations to a
 * calibration store as one run (one transaction): one case per distinct op
 * spec, its times the median/min/p10/p90 over the invocations, its kernels
 * those of the invocations (durations: medians); impl "traced:<kernel>",
 * split as given ("fit" or "holdout"); flops/bytes declared from the
 * model's cost description. The device is the trace's, mapped to hw_name.
 * Refuses (LLMSIM_EINVAL, nothing written) when a case is impossible: an
 * invocation that took no time, or one faster than the GPU's dense peak
 * allows for its recovered FLOPs. *ncases (may be NULL) gets the number of
 * cases added. */
int llmsim_trace_to_calib(const struct llmsim_trace *t, const struct llmsim_gpu *gpu,
			  const struct llmsim_model *m, struct llmsim_store *store,
			  const char *split, int *ncases, struct llmsim_err *err);

#endif
