/*
 * names.c - the names of op kinds, implementations, passes and bounds, as
 * op specs, the CLI and JSON output spell them.
 */
#include <string.h>

#include "base/enum.h"
#include "sim.h"

static const char *const op_kind_names[] = {
	[LLMSIM_OP_GEMM] = "gemm",
	[LLMSIM_OP_ELEMENTWISE] = "ew",
	[LLMSIM_OP_ATTENTION] = "attention",
	[LLMSIM_OP_DECODE] = "decode",
	[LLMSIM_OP_COLLECTIVE] = "collective",
	[LLMSIM_OP_STREAM] = "stream",
};
_Static_assert(sizeof op_kind_names / sizeof op_kind_names[0] == LLMSIM_OP_COUNT, "op kinds");

static const char *const ew_names[] = {
	[LLMSIM_EW_ADD] = "add",
	[LLMSIM_EW_MUL] = "mul",
	[LLMSIM_EW_SILU_MUL] = "silu_mul",
	[LLMSIM_EW_GELU] = "gelu",
	[LLMSIM_EW_RMSNORM] = "rmsnorm",
	[LLMSIM_EW_LAYERNORM] = "layernorm",
	[LLMSIM_EW_SOFTMAX] = "softmax",
	[LLMSIM_EW_ROPE] = "rope",
	[LLMSIM_EW_EMBEDDING] = "embedding",
	[LLMSIM_EW_CROSS_ENTROPY] = "cross_entropy",
	[LLMSIM_EW_COPY] = "copy",
	[LLMSIM_EW_ADAMW] = "adamw",
	[LLMSIM_EW_SILU] = "silu",
	[LLMSIM_EW_RELU] = "relu",
	[LLMSIM_EW_GATHER] = "gather",
	[LLMSIM_EW_SCATTER_ADD] = "scatter_add",
	[LLMSIM_EW_TOPK] = "topk",
	[LLMSIM_EW_SORT] = "sort",
	[LLMSIM_EW_REDUCE] = "reduce",
	[LLMSIM_EW_QUANTIZE] = "quantize",
};
_Static_assert(sizeof ew_names / sizeof ew_names[0] == LLMSIM_EW_COUNT, "ew kinds");

static const char *const attn_names[] = {
	[LLMSIM_ATTN_NAIVE] = "naive",
	[LLMSIM_ATTN_FLASH1] = "flash1",
	[LLMSIM_ATTN_FLASH2] = "flash2",
	[LLMSIM_ATTN_FLASH3] = "flash3",
	[LLMSIM_ATTN_SDPA_MATH] = "sdpa_math",
	[LLMSIM_ATTN_SDPA_MATH_BF16] = "sdpa_math_bf16",
	[LLMSIM_ATTN_HF_EAGER] = "hf_eager",
};
_Static_assert(sizeof attn_names / sizeof attn_names[0] == LLMSIM_ATTN_IMPL_COUNT, "attn");

static const char *const dec_names[] = {
	[LLMSIM_DEC_NAIVE] = "naive",
	[LLMSIM_DEC_FLASH2] = "flash2",
	[LLMSIM_DEC_FLASHDECODING] = "flashdecoding",
	[LLMSIM_DEC_PAGED] = "paged",
};
_Static_assert(sizeof dec_names / sizeof dec_names[0] == LLMSIM_DEC_IMPL_COUNT, "decode");

static const char *const coll_names[] = {
	[LLMSIM_COLL_ALLREDUCE] = "allreduce",
	[LLMSIM_COLL_ALLGATHER] = "allgather",
	[LLMSIM_COLL_REDUCESCATTER] = "reducescatter",
	[LLMSIM_COLL_ALLTOALL] = "alltoall",
	[LLMSIM_COLL_SENDRECV] = "sendrecv",
};
_Static_assert(sizeof coll_names / sizeof coll_names[0] == LLMSIM_COLL_COUNT, "coll");

static const char *const bound_names[] = {
	[LLMSIM_BOUND_TENSOR] = "tensor",
	[LLMSIM_BOUND_VECTOR] = "vector",
	[LLMSIM_BOUND_HBM] = "hbm",
	[LLMSIM_BOUND_L2] = "l2",
	[LLMSIM_BOUND_SMEM] = "smem",
	[LLMSIM_BOUND_LATENCY] = "latency",
	[LLMSIM_BOUND_LAUNCH] = "launch",
	[LLMSIM_BOUND_LINK] = "link",
};
_Static_assert(sizeof bound_names / sizeof bound_names[0] == LLMSIM_BOUND_COUNT, "bounds");

static const char *const pass_names[] = {
	[LLMSIM_PASS_FWD] = "fwd",
	[LLMSIM_PASS_BWD] = "bwd",
	[LLMSIM_PASS_FWDBWD] = "fwdbwd",
};

#define NAME(tab, k) llmsim_enum_name(tab, LLMSIM_ENUM_N(tab), (int)(k))
#define PARSE(tab, s) llmsim_enum_parse(tab, LLMSIM_ENUM_N(tab), s)

const char *llmsim_op_kind_name(enum llmsim_op_kind k) { return NAME(op_kind_names, k); }
const char *llmsim_ew_kind_name(enum llmsim_ew_kind k) { return NAME(ew_names, k); }
const char *llmsim_attn_impl_name(enum llmsim_attn_impl k) { return NAME(attn_names, k); }
const char *llmsim_decode_impl_name(enum llmsim_decode_impl k) { return NAME(dec_names, k); }
const char *llmsim_coll_kind_name(enum llmsim_coll_kind k) { return NAME(coll_names, k); }
const char *llmsim_bound_name(enum llmsim_bound b) { return NAME(bound_names, b); }
const char *llmsim_pass_name(enum llmsim_pass p) { return NAME(pass_names, p); }

int llmsim_ew_kind_parse(const char *s) { return PARSE(ew_names, s); }
int llmsim_attn_impl_parse(const char *s) { return PARSE(attn_names, s); }
int llmsim_decode_impl_parse(const char *s) { return PARSE(dec_names, s); }
int llmsim_coll_kind_parse(const char *s) { return PARSE(coll_names, s); }
int llmsim_pass_parse(const char *s) { return PARSE(pass_names, s); }

const char *llmsim_op_class(const struct llmsim_op *op)
{
	switch (op->kind) {
	case LLMSIM_OP_GEMM: return "gemm";
	case LLMSIM_OP_ELEMENTWISE:
		/* an MoE layer's routing kernels: index and sort work, small and
		 * latency-bound, apart from the streaming element-wise class */
		switch (op->u.ew.kind) {
		case LLMSIM_EW_GATHER:
		case LLMSIM_EW_SCATTER_ADD:
		case LLMSIM_EW_TOPK:
		case LLMSIM_EW_SORT: return "routing";
		default: return "elementwise";
		}
	case LLMSIM_OP_ATTENTION: return "attention";
	case LLMSIM_OP_DECODE: return "decode";
	case LLMSIM_OP_COLLECTIVE: return "collective";
	case LLMSIM_OP_STREAM: {
		const char *n = llmsim_stream_kind_name(op->u.stream.kind);
		return n ? n : "unknown";
	}
	default: return "unknown";
	}
}
