/*
 * cmd_op.c - `llmsim op KIND ...`: predict one kernel (gemm, attention,
 * decode, elementwise, collective, or any op from its spec line) on one
 * GPU, and print its cost description, launch shape, occupancy, waves,
 * the time of each limit, the time and what bounds it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "hw/gpu.h"
#include "sim/sim.h"
#include "args.h"
#include "commands.h"
#include "common.h"

static const char *const pass_choices[] = {"fwd", "bwd", "fwdbwd", NULL};
static const char *const attn_choices[] = {"naive", "flash1", "flash2", "flash3", "sdpa_math",
					   "sdpa_math_bf16", "hf_eager", NULL};
_Static_assert(sizeof attn_choices / sizeof attn_choices[0] == LLMSIM_ATTN_IMPL_COUNT + 1,
	       "attention impls, in enum order");
static const char *const dec_choices[] = {"naive", "flash2", "flashdecoding", "paged", NULL};
static const char *const ew_choices[] = {"add", "mul", "silu_mul", "gelu", "rmsnorm",
	"layernorm", "softmax", "rope", "embedding", "cross_entropy", "copy", "adamw", NULL};
static const char *const coll_choices[] = {"allreduce", "allgather", "reducescatter",
	"alltoall", "sendrecv", NULL};
static const char *const algo_choices[] = {"auto", "ring", "tree", NULL};

static const char op_about[] =
	"Predict one kernel on one GPU: FLOPs, HBM bytes, launch shape, occupancy,\n"
	"waves, the time of each limit (compute, memory, latency, overhead), the\n"
	"time and what bounds it.\n\n"
	"kinds:\n"
	"  gemm         --m M --n N --k K [--batch B] [--b-dtype int4]\n"
	"  attention    --impl naive|flash1|flash2|flash3|sdpa_math|sdpa_math_bf16|hf_eager\n"
	"               --batch B --heads H --seq S\n"
	"               --head-dim D [--kv-heads G] [--kv-seq L] [--causal] [--pass P]\n"
	"  decode       --impl naive|flash2|flashdecoding|paged --batch B --heads H\n"
	"               --kv-heads G --kv-len L --head-dim D [--q-len 1]\n"
	"               [--kv-lora-rank R --rope-dim P [--mla-materialized]]\n"
	"  elementwise  --kind KIND --tokens T --hidden H [--pass fwd|bwd]\n"
	"  collective   --kind KIND --bytes N --gpus P [--nodes 1] [--algo auto]\n"
	"  spec \"SPEC\"  any op from its spec line (\"gemm m=1 n=8192 k=8192\"; the\n"
	"               calibration streams: \"stream kind=l2 bytes=8388608\")\n\n"
	"Every kind takes --dtype (bf16), --gpu (h200) and --json.";

struct common {
	const char *gpu, *dtype;        /* --gpu: loaded by main (setup) */
	const char *operand_data, *load;
	const struct llmsim_gpu *g;     /* it */
	int json;
};

static int usage_error(const char *cmd)
{
	return llmsim_args_error(cmd, "expected a kind: gemm, attention, decode, elementwise, "
				 "collective or spec (try 'llmsim op --help')");
}

static void row(struct llmsim_table *t, const char *k, const char *v)
{
	const char *c[] = {k, v};
	llmsim_table_row(t, c);
}

static void print_human(const struct llmsim_gpu *g, const struct llmsim_op *op,
			const struct llmsim_pred *p, const char *spec)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX], buf[256];
	static const char *const head[] = {"<quantity", "<value"};
	struct llmsim_table t;
	llmsim_table_init(&t, 2, head);
	row(&t, "op", spec);
	row(&t, "gpu", g->full_name[0] ? g->full_name : g->name);
	row(&t, "class", p->op_class);
	row(&t, "FLOPs", llmsim_fmt_flops(a, p->flops));
	snprintf(buf, sizeof buf, "%s (read %s, write %s)", llmsim_fmt_bytes(a, p->hbm_bytes),
		 llmsim_fmt_bytes(b, p->hbm_read_bytes), llmsim_fmt_bytes(c, p->hbm_write_bytes));
	row(&t, "HBM traffic", buf);
	row(&t, "L2 hits", llmsim_fmt_bytes(a, p->l2_bytes));
	if (p->smem_bytes > 0)
		row(&t, "shared memory", llmsim_fmt_bytes(a, p->smem_bytes));
	if (p->workspace_bytes > 0)
		row(&t, "workspace", llmsim_fmt_bytes(a, p->workspace_bytes));
	if (op->kind == LLMSIM_OP_COLLECTIVE) {
		row(&t, "link bytes/rank", llmsim_fmt_bytes(a, p->link_bytes));
	} else {
		snprintf(buf, sizeof buf, "%.3g FLOP/B", p->intensity_flops_per_byte);
		row(&t, "intensity", buf);
	}
	if (p->kernels > 0 && op->kind != LLMSIM_OP_COLLECTIVE && op->kind != LLMSIM_OP_STREAM) {
		snprintf(buf, sizeof buf, "%d kernel%s; main: %lld blocks x %d threads, %d regs, %s smem",
			 p->kernels, p->kernels > 1 ? "s" : "", (long long)p->blocks,
			 p->threads_per_block, p->regs_per_thread,
			 llmsim_fmt_bytes(a, p->smem_bytes_per_block));
		row(&t, "launch", buf);
		snprintf(buf, sizeof buf, "%d blocks/SM, %s of warps", p->blocks_per_sm,
			 llmsim_fmt_pct(a, p->occupancy));
		row(&t, "occupancy", buf);
		snprintf(buf, sizeof buf, "%.3g waves, tail %s", p->waves,
			 llmsim_fmt_pct(a, p->tail_efficiency));
		row(&t, "waves", buf);
	}
	if (p->tile_m > 0) {
		snprintf(buf, sizeof buf, "%d x %d%s%.0d, split %d", p->tile_m, p->tile_n,
			 p->tile_k ? " x " : "", p->tile_k, p->split_k ? p->split_k : 1);
		row(&t, "tile", buf);
	}
	row(&t, "compute", llmsim_fmt_time(a, p->compute_s));
	row(&t, op->kind == LLMSIM_OP_COLLECTIVE ? "link transfer"
		: op->kind == LLMSIM_OP_STREAM	 ? "memory"
						 : "memory (HBM)",
	    llmsim_fmt_time(a, p->memory_s));
	row(&t, "latency", llmsim_fmt_time(a, p->latency_s));
	row(&t, "overhead", llmsim_fmt_time(a, p->overhead_s));
	if (p->kernels > 1) {
		size_t len = 0;
		buf[0] = 0;
		for (int i = 0; i < p->kernels && i < LLMSIM_PRED_MAX_KERNELS && len < 200; i++)
			len += snprintf(buf + len, sizeof buf - len, "%s%s (%s)", i ? ", " : "",
					llmsim_fmt_time(a, p->kernel_time_s[i]),
					llmsim_bound_name(p->kernel_bound[i]));
		row(&t, "per kernel", buf);
	}
	if (op->load_duty > 0) {
		if (op->load_rho > 0)
			snprintf(buf, sizeof buf, "inside a busy program of tensor intensity %.2f "
				 "(--load busy:%.2f)", op->load_rho, op->load_rho);
		else
			snprintf(buf, sizeof buf, "inside a busy program doing work like this op "
				 "(--load busy; --load lone for an idle GPU)");
	} else {
		snprintf(buf, sizeof buf, "a lone kernel on an idle GPU: its burst clock (--load lone)");
	}
	row(&t, "load", buf);
	snprintf(buf, sizeof buf, "%s (tensor activity %.2f of trained data)",
		 llmsim_operand_data_name(op->operand_data),
		 (unsigned)op->operand_data < LLMSIM_OPD_COUNT
			 ? g->operand_activity[op->operand_data] : 1.0);
	row(&t, "operand data", buf);
	row(&t, "SM clock", llmsim_fmt_hz(a, p->sm_clock_hz));
	row(&t, "time", llmsim_fmt_time(a, p->time_s));
	row(&t, "bound", llmsim_bound_name(p->bound));
	if (p->time_s > 0 && p->flops > 0)
		row(&t, "achieved", llmsim_fmt_flops_rate(a, p->flops / p->time_s));
	if (isfinite(p->time_err_pct)) {
		int n = g->transfer_path[0] && !g->profile_path[0]
				? snprintf(buf, sizeof buf,
					   "+/- %.1f%% (uncalibrated: p80 of %d held-out %s kernels "
					   "of the %s predicted from the %s's calibration%s)",
					   p->time_err_pct, p->time_err_n, p->op_class,
					   g->transfer_measured_on, g->basis,
					   g->uncalibrated_step_error_fraction > 0
						   ? ", widened by this file's uncalibrated values"
						   : "")
				: snprintf(buf, sizeof buf,
					   "+/- %.1f%% (one kernel: p80 of %d held-out %s kernels)",
					   p->time_err_pct, p->time_err_n, p->op_class);
		if (isfinite(p->time_bias_pct) && n > 0 && (size_t)n < sizeof buf)
			snprintf(buf + n, sizeof buf - (size_t)n,
				 "; biased: its class's predicted times run %.1f%% %s",
				 fabs(p->time_bias_pct), p->time_bias_pct < 0 ? "short" : "long");
		row(&t, "expected error", buf);
	} else {
		row(&t, "expected error", "not calibrated (no held-out kernels of its class)");
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

static void print_json(const struct llmsim_gpu *g, const struct llmsim_op *op,
		       const struct llmsim_pred *p, const char *spec)
{
	struct llmsim_json j;
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "spec", spec);
	llmsim_json_str(&j, "op_class", p->op_class);
	llmsim_json_str(&j, "gpu", g->name);
	llmsim_json_num(&j, "flops", p->flops);
	llmsim_json_num(&j, "hbm_bytes", p->hbm_bytes);
	llmsim_json_num(&j, "hbm_read_bytes", p->hbm_read_bytes);
	llmsim_json_num(&j, "hbm_write_bytes", p->hbm_write_bytes);
	llmsim_json_num(&j, "l2_bytes", p->l2_bytes);
	llmsim_json_num(&j, "smem_bytes", p->smem_bytes);
	llmsim_json_num(&j, "workspace_bytes", p->workspace_bytes);
	llmsim_json_num(&j, "intensity_flops_per_byte", p->intensity_flops_per_byte);
	llmsim_json_num(&j, "link_bytes", p->link_bytes);
	llmsim_json_int(&j, "kernels", p->kernels);
	llmsim_json_int(&j, "blocks", p->blocks);
	llmsim_json_int(&j, "threads_per_block", p->threads_per_block);
	llmsim_json_int(&j, "regs_per_thread", p->regs_per_thread);
	llmsim_json_num(&j, "smem_bytes_per_block", p->smem_bytes_per_block);
	llmsim_json_int(&j, "blocks_per_sm", p->blocks_per_sm);
	llmsim_json_num(&j, "occupancy", p->occupancy);
	llmsim_json_num(&j, "waves", p->waves);
	llmsim_json_num(&j, "tail_efficiency", p->tail_efficiency);
	llmsim_json_int(&j, "tile_m", p->tile_m);
	llmsim_json_int(&j, "tile_n", p->tile_n);
	llmsim_json_int(&j, "tile_k", p->tile_k);
	llmsim_json_int(&j, "split_k", p->split_k);
	llmsim_json_num(&j, "compute_s", p->compute_s);
	llmsim_json_num(&j, "memory_s", p->memory_s);
	llmsim_json_num(&j, "latency_s", p->latency_s);
	llmsim_json_num(&j, "overhead_s", p->overhead_s);
	llmsim_json_num(&j, "time_s", p->time_s);
	llmsim_json_str(&j, "bound", llmsim_bound_name(p->bound));
	llmsim_json_num(&j, "achieved_flops_per_s", p->time_s > 0 ? p->flops / p->time_s : 0);
	llmsim_json_num(&j, "time_err_pct", p->time_err_pct); /* NaN -> null */
	llmsim_json_str(&j, "time_err_class", "kernel");
	llmsim_json_int(&j, "time_err_n", p->time_err_n);
	llmsim_json_num(&j, "time_bias_pct", p->time_bias_pct); /* NaN (unbiased) -> null */
	llmsim_json_num(&j, "sm_clock_hz", p->sm_clock_hz);
	llmsim_json_str(&j, "load", op->load_duty > 0 ? "busy" : "lone");
	llmsim_json_num(&j, "load_rho", op->load_rho);
	llmsim_json_str(&j, "operand_data", llmsim_operand_data_name(op->operand_data));
	llmsim_json_arr_begin(&j, "kernel_times_s"); /* one per kernel */
	for (int i = 0; i < p->kernels && i < LLMSIM_PRED_MAX_KERNELS; i++)
		llmsim_json_num(&j, NULL, p->kernel_time_s[i]);
	llmsim_json_arr_end(&j);
	llmsim_json_arr_begin(&j, "kernel_bound");
	for (int i = 0; i < p->kernels && i < LLMSIM_PRED_MAX_KERNELS; i++)
		llmsim_json_str(&j, NULL, llmsim_bound_name(p->kernel_bound[i]));
	llmsim_json_arr_end(&j);
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

static int run(const char *cmd, const struct common *c, struct llmsim_op *op)
{
	const struct llmsim_gpu *g = c->g;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	char spec[512];
	if (c->dtype) {
		int dt = llmsim_dtype_parse(c->dtype);
		if (dt < 0)
			return llmsim_args_error(cmd, "--dtype: unknown data type '%s'", c->dtype);
		op->dtype = dt;
	}
	enum llmsim_operand_data d;
	enum llmsim_load load;
	int rc;
	double rho;
	if ((rc = cli_operand_data_parse(cmd, c->operand_data, &d)) ||
	    (rc = cli_load_parse(cmd, c->load, &load, &rho)))
		return rc;
	op->operand_data = d;
	/* the default: a kernel inside a running program that keeps the GPU
	 * busy with work like it (duty 1, its own tensor intensity) */
	op->load_duty = load == LLMSIM_LOAD_LONE ? 0 : 1;
	op->load_rho = rho;
	if (llmsim_predict(g, op, &p, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	llmsim_op_format(op, spec, sizeof spec);
	if (c->json)
		print_json(g, op, &p, spec);
	else
		print_human(g, op, &p, spec);
	return 0;
}

#define COMMON(c)                                                                           \
	{"dtype", LLMSIM_ARG_STRING, &(c).dtype, "DT", "math/activation type (default bf16)", \
	 0, NULL, NULL},                                                                      \
	{"gpu", LLMSIM_ARG_STRING, &(c).gpu, "NAME", "GPU name or file (default h200)", 0,    \
	 NULL, NULL},                                                                         \
	{"operand-data", LLMSIM_ARG_STRING, &(c).operand_data, "D",                          \
	 "trained (default), random, grid, coarse or zeros", 0, NULL, NULL},                  \
	{"load", LLMSIM_ARG_STRING, &(c).load, "L",                                          \
	 "busy (default: inside a running program), busy:RHO or lone (an idle GPU)", 0, NULL, \
	 NULL},                                                                               \
	{"json", LLMSIM_ARG_FLAG, &(c).json, NULL, "JSON output", 0, NULL, NULL}

#define PARSE(cmd, syn, opts)                                                               \
	do {                                                                                \
		int r_ = llmsim_args_parse(cmd, syn, NULL, argc - 2, argv + 2, opts,        \
					   (int)(sizeof opts / sizeof opts[0]), NULL, 0, NULL); \
		if (r_ == LLMSIM_ARGS_HELP)                                                 \
			return 0;                                                           \
		if (r_)                                                                     \
			return 2;                                                           \
	} while (0)

#define REQUIRE(cmd, cond, name)                                                            \
	do {                                                                                \
		if (!(cond))                                                                \
			return llmsim_args_error(cmd, "--%s is required", name);            \
	} while (0)

static int op_gemm(int argc, char **argv, struct common *c)
{
	const char *cmd = "llmsim op gemm";
	int64_t m = 0, n = 0, k = 0, batch = 1;
	const char *bdt = NULL;
	struct llmsim_opt opts[] = {
		{"m", LLMSIM_ARG_I64, &m, "M", "rows of A and C", 1, NULL, NULL},
		{"n", LLMSIM_ARG_I64, &n, "N", "columns of B and C", 1, NULL, NULL},
		{"k", LLMSIM_ARG_I64, &k, "K", "inner dimension", 1, NULL, NULL},
		{"batch", LLMSIM_ARG_I64, &batch, "B", "batched GEMM count (default 1)", 1, NULL, NULL},
		{"b-dtype", LLMSIM_ARG_STRING, &bdt, "DT",
		 "weight (B) storage type for weight-only quantization (default dtype)", 0, NULL, NULL},
		COMMON(*c),
	};
	PARSE(cmd, "--m M --n N --k K [options]", opts);
	REQUIRE(cmd, m, "m");
	REQUIRE(cmd, n, "n");
	REQUIRE(cmd, k, "k");
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = LLMSIM_DT_BF16};
	if (c->dtype && llmsim_dtype_parse(c->dtype) >= 0)
		op.dtype = llmsim_dtype_parse(c->dtype);
	op.u.gemm.m = m, op.u.gemm.n = n, op.u.gemm.k = k, op.u.gemm.batch = batch;
	op.u.gemm.b_dtype = op.dtype;
	if (bdt) {
		int b = llmsim_dtype_parse(bdt);
		if (b < 0)
			return llmsim_args_error(cmd, "--b-dtype: unknown data type '%s'", bdt);
		op.u.gemm.b_dtype = b;
	}
	return run(cmd, c, &op);
}

static int op_attention(int argc, char **argv, struct common *c)
{
	const char *cmd = "llmsim op attention";
	int impl = LLMSIM_ATTN_FLASH2, pass = 0, causal = 0, seen_impl = 0;
	int64_t batch = 0, heads = 0, kvh = 0, seq = 0, kvs = 0, hd = 0, vhd = 0;
	struct llmsim_opt opts[] = {
		{"impl", LLMSIM_ARG_CHOICE, &impl, NULL, "implementation (default flash2)", 0,
		 attn_choices, &seen_impl},
		{"batch", LLMSIM_ARG_I64, &batch, "B", "sequences", 1, NULL, NULL},
		{"heads", LLMSIM_ARG_I64, &heads, "H", "query heads", 1, NULL, NULL},
		{"kv-heads", LLMSIM_ARG_I64, &kvh, "G", "K/V heads (default heads)", 1, NULL, NULL},
		{"seq", LLMSIM_ARG_I64, &seq, "S", "query tokens per sequence", 1, NULL, NULL},
		{"kv-seq", LLMSIM_ARG_I64, &kvs, "L", "key tokens (default seq)", 1, NULL, NULL},
		{"head-dim", LLMSIM_ARG_I64, &hd, "D", "QK head dimension", 1, NULL, NULL},
		{"v-head-dim", LLMSIM_ARG_I64, &vhd, "D", "V head dimension (default head-dim)", 1,
		 NULL, NULL},
		{"causal", LLMSIM_ARG_FLAG, &causal, NULL, "causal mask", 0, NULL, NULL},
		{"pass", LLMSIM_ARG_CHOICE, &pass, NULL, "fwd, bwd or both (default fwd)", 0,
		 pass_choices, NULL},
		COMMON(*c),
	};
	PARSE(cmd, "--impl IMPL --batch B --heads H --seq S --head-dim D [options]", opts);
	REQUIRE(cmd, batch, "batch");
	REQUIRE(cmd, heads, "heads");
	REQUIRE(cmd, seq, "seq");
	REQUIRE(cmd, hd, "head-dim");
	struct llmsim_op op = {.kind = LLMSIM_OP_ATTENTION, .dtype = LLMSIM_DT_BF16};
	op.u.attn.impl = impl;
	op.u.attn.batch = batch, op.u.attn.heads = heads;
	op.u.attn.kv_heads = kvh ? kvh : heads;
	op.u.attn.seq = seq, op.u.attn.kv_seq = kvs ? kvs : seq;
	op.u.attn.head_dim = hd, op.u.attn.v_head_dim = vhd ? vhd : hd;
	op.u.attn.causal = causal;
	op.u.attn.pass = pass;
	return run(cmd, c, &op);
}

static int op_decode(int argc, char **argv, struct common *c)
{
	const char *cmd = "llmsim op decode";
	int impl = LLMSIM_DEC_PAGED, materialized = 0;
	int64_t batch = 0, heads = 0, kvh = 0, kvl = 0, hd = 0, ql = 1, bs = 16, r = 0, rope = 0;
	const char *kvdt = NULL;
	struct llmsim_opt opts[] = {
		{"impl", LLMSIM_ARG_CHOICE, &impl, NULL, "implementation (default paged)", 0,
		 dec_choices, NULL},
		{"block-size", LLMSIM_ARG_I64, &bs, "N", "paged: tokens per KV block (default 16)",
		 1, NULL, NULL},
		{"batch", LLMSIM_ARG_I64, &batch, "B", "sequences", 1, NULL, NULL},
		{"heads", LLMSIM_ARG_I64, &heads, "H", "query heads", 1, NULL, NULL},
		{"kv-heads", LLMSIM_ARG_I64, &kvh, "G", "K/V heads (default heads)", 1, NULL, NULL},
		{"kv-len", LLMSIM_ARG_I64, &kvl, "L", "cached tokens per sequence", 1, NULL, NULL},
		{"head-dim", LLMSIM_ARG_I64, &hd, "D", "head dimension (MLA: the nope part)", 1,
		 NULL, NULL},
		{"q-len", LLMSIM_ARG_I64, &ql, "N", "query tokens per sequence (default 1)", 1, NULL,
		 NULL},
		{"kv-lora-rank", LLMSIM_ARG_I64, &r, "R", "MLA latent rank (0: not MLA)", 0, NULL,
		 NULL},
		{"rope-dim", LLMSIM_ARG_I64, &rope, "P", "MLA decoupled RoPE dimension", 0, NULL,
		 NULL},
		{"mla-materialized", LLMSIM_ARG_FLAG, &materialized, NULL,
		 "MLA: up-project the cache each step instead of absorbing", 0, NULL, NULL},
		{"kv-dtype", LLMSIM_ARG_STRING, &kvdt, "DT", "KV cache type (default dtype)", 0,
		 NULL, NULL},
		COMMON(*c),
	};
	PARSE(cmd, "--impl IMPL --batch B --heads H --kv-heads G --kv-len L --head-dim D [options]",
	      opts);
	REQUIRE(cmd, batch, "batch");
	REQUIRE(cmd, heads, "heads");
	REQUIRE(cmd, kvl, "kv-len");
	REQUIRE(cmd, hd, "head-dim");
	struct llmsim_op op = {.kind = LLMSIM_OP_DECODE, .dtype = LLMSIM_DT_BF16};
	if (c->dtype && llmsim_dtype_parse(c->dtype) >= 0)
		op.dtype = llmsim_dtype_parse(c->dtype);
	op.u.dec.impl = impl;
	op.u.dec.batch = batch, op.u.dec.heads = heads, op.u.dec.kv_heads = kvh ? kvh : heads;
	op.u.dec.kv_len = kvl, op.u.dec.head_dim = hd, op.u.dec.q_len = ql;
	op.u.dec.block_size = bs, op.u.dec.kv_lora_rank = r, op.u.dec.rope_dim = rope;
	op.u.dec.mla_absorbed = !materialized;
	op.u.dec.kv_dtype = op.dtype;
	if (kvdt) {
		int d = llmsim_dtype_parse(kvdt);
		if (d < 0)
			return llmsim_args_error(cmd, "--kv-dtype: unknown data type '%s'", kvdt);
		op.u.dec.kv_dtype = d;
	}
	return run(cmd, c, &op);
}

static int op_elementwise(int argc, char **argv, struct common *c)
{
	const char *cmd = "llmsim op elementwise";
	int kind = -1, pass = 0;
	int64_t tokens = 0, hidden = 0;
	struct llmsim_opt opts[] = {
		{"kind", LLMSIM_ARG_CHOICE, &kind, NULL, "the op", 0, ew_choices, NULL},
		{"tokens", LLMSIM_ARG_I64, &tokens, "T", "rows (tokens; 1 for adamw)", 1, NULL, NULL},
		{"hidden", LLMSIM_ARG_I64, &hidden, "H",
		 "row width (vocab for cross_entropy, params for adamw)", 1, NULL, NULL},
		{"pass", LLMSIM_ARG_CHOICE, &pass, NULL, "fwd, bwd or both (default fwd)", 0,
		 pass_choices, NULL},
		COMMON(*c),
	};
	PARSE(cmd, "--kind KIND --tokens T --hidden H [options]", opts);
	REQUIRE(cmd, kind >= 0, "kind");
	REQUIRE(cmd, tokens, "tokens");
	REQUIRE(cmd, hidden, "hidden");
	struct llmsim_op op = {.kind = LLMSIM_OP_ELEMENTWISE, .dtype = LLMSIM_DT_BF16};
	op.u.ew.kind = kind, op.u.ew.tokens = tokens, op.u.ew.hidden = hidden;
	op.u.ew.pass = pass;
	return run(cmd, c, &op);
}

static int op_collective(int argc, char **argv, struct common *c)
{
	const char *cmd = "llmsim op collective";
	int kind = -1, algo = 0, gpus = 0, nodes = 1;
	double bytes = 0;
	struct llmsim_opt opts[] = {
		{"kind", LLMSIM_ARG_CHOICE, &kind, NULL, "the collective", 0, coll_choices, NULL},
		{"bytes", LLMSIM_ARG_DOUBLE, &bytes, "N", "buffer bytes (nccl-tests size)", 1, NULL,
		 NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "P", "ranks in the group", 1, NULL, NULL},
		{"nodes", LLMSIM_ARG_INT, &nodes, "N", "NVLink domains the group spans: nodes, or racks of a multi-node NVLink domain (default 1)", 1, NULL,
		 NULL},
		{"algo", LLMSIM_ARG_CHOICE, &algo, NULL, "algorithm (default auto: the faster)", 0,
		 algo_choices, NULL},
		COMMON(*c),
	};
	PARSE(cmd, "--kind KIND --bytes N --gpus P [options]", opts);
	REQUIRE(cmd, kind >= 0, "kind");
	REQUIRE(cmd, bytes > 0, "bytes");
	REQUIRE(cmd, gpus, "gpus");
	struct llmsim_op op = {.kind = LLMSIM_OP_COLLECTIVE, .dtype = LLMSIM_DT_BF16};
	op.u.coll.kind = kind, op.u.coll.bytes = bytes, op.u.coll.gpus = gpus;
	op.u.coll.nodes = nodes, op.u.coll.algo = algo;
	return run(cmd, c, &op);
}

/* The values of a spec take the bounds of the options of the same name
 * (`op gemm --m`, `--bytes`, `--gpus`: cli/args.c), and none is negative:
 * "stream bytes=1e308" is refused as --bytes 1e308 is. 0, or 1 with the
 * message printed. */
static int spec_bounds(const char *cmd, const char *spec)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", spec); /* llmsim_op_parse took it: it fits */
	char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save);
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '='), *end;
		if (!eq)
			continue;
		*eq = 0;
		double v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end)
			continue; /* not a number: an enum, checked by the parser */
		for (char *p = tok; *p; p++)
			if (*p == '_')
				*p = '-';
		double max = llmsim_args_max("llmsim op spec", tok);
		if (isnan(max))
			continue;
		for (char *p = tok; *p; p++)
			if (*p == '-')
				*p = '_';
		if (v < 0 || v > max) {
			fprintf(stderr, "%s: %s=%s: must be 0 to %.15g\n", cmd, tok, eq + 1, max);
			return 1;
		}
	}
	return 0;
}

static int op_spec(int argc, char **argv, struct common *c)
{
	const char *cmd = "llmsim op spec";
	char *pos[1];
	int npos = 0;
	struct llmsim_opt opts[] = {COMMON(*c)};
	int r = llmsim_args_parse(cmd, "\"SPEC\" [options]", NULL, argc - 2, argv + 2, opts,
				  (int)(sizeof opts / sizeof opts[0]), pos, 1, &npos);
	if (r == LLMSIM_ARGS_HELP)
		return 0;
	if (r)
		return 2;
	if (npos != 1)
		return llmsim_args_error(cmd, "expected one op spec, e.g. \"gemm m=1 n=8192 k=8192\"");
	struct llmsim_op op;
	struct llmsim_err err = {0};
	if (llmsim_op_parse(pos[0], &op, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	if (spec_bounds(cmd, pos[0]))
		return 1;
	return run(cmd, c, &op);
}

int cmd_op(int argc, char **argv, const struct cli_setup *setup)
{
	struct common c = {.gpu = "h200", .g = setup->gpu};
	if (argc < 2)
		return usage_error("llmsim op");
	const char *k = argv[1];
	if (!strcmp(k, "--help") || !strcmp(k, "-h") || !strcmp(k, "help")) {
		llmsim_args_usage(stdout, "llmsim op", "KIND [options]", op_about, NULL, 0);
		return 0;
	}
	if (!strcmp(k, "gemm"))
		return op_gemm(argc, argv, &c);
	if (!strcmp(k, "attention"))
		return op_attention(argc, argv, &c);
	if (!strcmp(k, "decode"))
		return op_decode(argc, argv, &c);
	if (!strcmp(k, "elementwise") || !strcmp(k, "ew"))
		return op_elementwise(argc, argv, &c);
	if (!strcmp(k, "collective"))
		return op_collective(argc, argv, &c);
	if (!strcmp(k, "spec"))
		return op_spec(argc, argv, &c);
	return llmsim_args_error("llmsim op", "unknown kind '%s' (gemm, attention, decode, "
				 "elementwise, collective, spec)", k);
}
