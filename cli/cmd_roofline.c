/*
 * cmd_roofline.c - `llmsim roofline --gpu G [--model M]`: a GPU's
 * ceilings (HBM, L2, shared memory, each tensor data type, CUDA-core FP32)
 * and ridge points, and with --model every op of one layer (prefill and
 * decode, or forward and backward) placed on it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "reports/roofline.h"
#include "sim/sim.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "layer_ops.h"

/* train first: the default of every command with --workload (plan, report) */
static const char *const workload_choices[] = {"train", "serve", NULL};

static const char *ceil_kind(const struct llmsim_ceiling *c)
{
	switch (c->kind) {
	case LLMSIM_CEIL_HBM:
	case LLMSIM_CEIL_L2:
	case LLMSIM_CEIL_SMEM:
		return "bandwidth";
	case LLMSIM_CEIL_TENSOR:
		return "tensor";
	default:
		return "cuda_core";
	}
}

static void print_ceilings(const struct llmsim_gpu *g, const struct llmsim_roofline *r)
{
	static const char *const head[] = {"<ceiling", "<kind", "peak", "ridge (FLOP/byte)"};
	char a[LLMSIM_FMT_MAX], b[32];
	struct llmsim_table t;
	printf("Roofline of %s (%s)\n\n", g->full_name[0] ? g->full_name : g->name, g->name);
	llmsim_table_init(&t, 4, head);
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_ceiling *c = &r->ceil[i];
		if (c->flops_per_s > 0)
			snprintf(b, sizeof b, "%.1f", c->ridge_flops_per_byte);
		else
			snprintf(b, sizeof b, "-");
		const char *cells[] = {c->name, ceil_kind(c),
				       c->bytes_per_s > 0 ? llmsim_fmt_bytes_rate(a, c->bytes_per_s)
							  : llmsim_fmt_flops_rate(a, c->flops_per_s),
				       b};
		llmsim_table_row(&t, cells);
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

static void print_ops(const struct llmsim_model *m, const struct llmsim_layer_cfg *c,
		      const struct llmsim_layer_op *ops, const struct llmsim_roof_point *pts,
		      int n)
{
	static const char *const head[] = {"<phase", "<op", "FLOPs", "HBM bytes", "FLOP/byte",
					   "attainable", "time", "achieved", "<bound"};
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], i_[32], d[LLMSIM_FMT_MAX],
		e[LLMSIM_FMT_MAX], f[LLMSIM_FMT_MAX];
	struct llmsim_table t;
	printf("\nOps of one layer of %s (%s, batch %lld, seq %lld, tp %d): %s and %s\n\n",
	       m->full_name[0] ? m->full_name : m->name, llmsim_dtype_name(c->dtype),
	       (long long)c->batch, (long long)c->seq, c->tp, llmsim_phase_name(c->workload, 0),
	       llmsim_phase_name(c->workload, 1));
	llmsim_table_init(&t, 9, head);
	for (int ph = 0; ph < 2; ph++) {
		double fl = 0, by = 0, tm = 0;
		for (int k = 0; k < n; k++) {
			const struct llmsim_roof_point *p = &pts[k];
			if (ops[k].phase != ph)
				continue;
			fl += p->pred.flops;
			by += p->pred.hbm_bytes;
			tm += p->pred.time_s;
			snprintf(i_, sizeof i_, "%.2f", p->pred.intensity_flops_per_byte);
			const char *cells[] = {llmsim_phase_name(c->workload, ph), ops[k].name,
					       llmsim_fmt_flops(a, p->pred.flops),
					       llmsim_fmt_bytes(b, p->pred.hbm_bytes), i_,
					       llmsim_fmt_flops_rate(d, p->attainable_flops_per_s),
					       llmsim_fmt_time(e, p->pred.time_s),
					       llmsim_fmt_flops_rate(f, p->achieved_flops_per_s),
					       llmsim_bound_name(p->pred.bound)};
			llmsim_table_row(&t, cells);
		}
		snprintf(i_, sizeof i_, "%.2f", by > 0 ? fl / by : 0);
		const char *cells[] = {llmsim_phase_name(c->workload, ph), "(layer total)",
				       llmsim_fmt_flops(a, fl), llmsim_fmt_bytes(b, by), i_, "",
				       llmsim_fmt_time(e, tm),
				       llmsim_fmt_flops_rate(f, tm > 0 ? fl / tm : 0), ""};
		llmsim_table_row(&t, cells);
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	printf("\nattainable = min(roof, intensity x HBM bandwidth) at datasheet peaks; "
	       "achieved = FLOPs / predicted time.\nThe ops are those `llmsim %s` prices "
	       "(the op graph, sim/graph.c), as lone kernels; communication is left out.\n",
	       c->workload == LLMSIM_WORKLOAD_TRAIN ? "train" : "infer");
}

static void json_out(const struct llmsim_gpu *g, const struct llmsim_roofline *r,
		     const struct llmsim_model *m, const struct llmsim_layer_cfg *c,
		     const struct llmsim_layer_op *ops, const struct llmsim_roof_point *pts, int n)
{
	struct llmsim_json j;
	char spec[512];
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "gpu", g->name);
	llmsim_json_num(&j, "hbm_bytes_per_s", r->hbm_bytes_per_s);
	llmsim_json_arr_begin(&j, "ceilings");
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_ceiling *ce = &r->ceil[i];
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "name", ce->name);
		llmsim_json_str(&j, "kind", ceil_kind(ce));
		if (ce->bytes_per_s > 0) {
			llmsim_json_num(&j, "bytes_per_s", ce->bytes_per_s);
		} else {
			llmsim_json_str(&j, "dtype", llmsim_dtype_name(ce->dtype));
			llmsim_json_num(&j, "flops_per_s", ce->flops_per_s);
			llmsim_json_num(&j, "ridge_flops_per_byte", ce->ridge_flops_per_byte);
		}
		llmsim_json_obj_end(&j);
	}
	llmsim_json_arr_end(&j);
	if (m) {
		llmsim_json_str(&j, "model", m->name);
		llmsim_json_str(&j, "dtype", llmsim_dtype_name(c->dtype));
		llmsim_json_int(&j, "batch", c->batch);
		llmsim_json_int(&j, "seq", c->seq);
		llmsim_json_int(&j, "tp", c->tp);
		llmsim_json_str(&j, "workload",
				c->workload == LLMSIM_WORKLOAD_TRAIN ? "train" : "serve");
		llmsim_json_arr_begin(&j, "ops");
		for (int k = 0; k < n; k++) {
			const struct llmsim_roof_point *p = &pts[k];
			llmsim_op_format(&p->op, spec, sizeof spec);
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "phase", llmsim_phase_name(c->workload, ops[k].phase));
			llmsim_json_str(&j, "name", ops[k].name);
			llmsim_json_str(&j, "spec", spec);
			llmsim_json_num(&j, "flops", p->pred.flops);
			llmsim_json_num(&j, "hbm_bytes", p->pred.hbm_bytes);
			llmsim_json_num(&j, "intensity_flops_per_byte",
					p->pred.intensity_flops_per_byte);
			llmsim_json_num(&j, "attainable_flops_per_s", p->attainable_flops_per_s);
			llmsim_json_num(&j, "achieved_flops_per_s", p->achieved_flops_per_s);
			llmsim_json_num(&j, "time_s", p->pred.time_s);
			llmsim_json_str(&j, "roof", p->roof ? p->roof->name : "");
			llmsim_json_str(&j, "bound", llmsim_bound_name(p->pred.bound));
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

int cmd_roofline(int argc, char **argv, const struct cli_setup *setup)
{
	/* --gpu and --model: loaded by main (setup) */
	const char *cmd = "llmsim roofline";
	const char *gpu_name = "h200", *model_name = NULL, *dtype = "bf16", *kv_dtype = NULL;
	int json = 0, workload = 0;
	struct llmsim_layer_cfg c;
	llmsim_layer_cfg_init(&c);
	int64_t seq_default = c.seq;
	c.seq = 0; /* given or not: cli_context_seq */
	const struct llmsim_opt opts[] = {
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU name, alias or file (default h200)", 0, NULL, NULL},
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "place one layer's ops of this model", 0, NULL, NULL},
		{"dtype", LLMSIM_ARG_STRING, &dtype, "DT", "math and activation type (default bf16)", 0, NULL, NULL},
		{"kv-dtype", LLMSIM_ARG_STRING, &kv_dtype, "DT", "decode KV cache type (default: fp8 for fp8, else the activation type)", 0, NULL, NULL},
		{"seq", LLMSIM_ARG_I64, &c.seq, "S", "prompt tokens; decode KV length (default 4096, or the model's context if shorter)", 1, NULL, NULL},
		{"batch", LLMSIM_ARG_I64, &c.batch, "B", "sequences (default 1)", 1, NULL, NULL},
		{"tp", LLMSIM_ARG_INT, &c.tp, "T", "tensor parallel: the ops of one of T GPUs (default 1)", 1, NULL, NULL},
		{"workload", LLMSIM_ARG_CHOICE, &workload, NULL, "train: forward+backward (the default, as plan and report); serve: prefill+decode", 0, workload_choices, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--gpu G [--model M] [--dtype bf16] [--seq S] [--batch B] [--json]",
				   "A GPU's roofline: memory ceilings, compute roofs and their ridge\n"
				   "points; with --model, every op of one layer placed on it.",
				   argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				   NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	int dt = llmsim_dtype_parse(dtype);
	if (dt < 0)
		return llmsim_args_error(cmd, "unknown data type '%s'", dtype);
	/* The KV cache follows an FP8 model; other narrow types keep BF16. */
	int kdt = kv_dtype ? llmsim_dtype_parse(kv_dtype)
			   : dt == LLMSIM_DT_FP8 ? dt
						 : (int)llmsim_graph_act_dtype((enum llmsim_dtype)dt);
	if (kdt < 0)
		return llmsim_args_error(cmd, "unknown data type '%s'", kv_dtype);
	c.dtype = (enum llmsim_dtype)dt;
	c.kv_dtype = (enum llmsim_dtype)kdt;
	c.workload = workload ? LLMSIM_WORKLOAD_SERVE : LLMSIM_WORKLOAD_TRAIN;

	const struct llmsim_gpu *gpu = setup->gpu;
	const struct llmsim_model *model = setup->model;
	if (cli_context_seq(cmd, model, &c.seq, seq_default))
		return 1;
	static struct llmsim_layer_op ops[LLMSIM_LAYER_OPS_MAX];
	static struct llmsim_roof_point pts[LLMSIM_LAYER_OPS_MAX];
	struct llmsim_roofline r;
	struct llmsim_err err = {0};
	int n = 0;
	if (llmsim_roofline_init(gpu, &r, &err) ||
	    (model && cli_layer_ops(model, gpu, &c, ops, &n, &err))) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	for (int k = 0; k < n; k++)
		llmsim_roofline_point(&r, &ops[k].op, &ops[k].pred, &pts[k]);
	if (json) {
		json_out(gpu, &r, model, &c, ops, pts, n);
		return 0;
	}
	print_ceilings(gpu, &r);
	if (model)
		print_ops(model, &c, ops, pts, n);
	return 0;
}
