/*
 * cmd_plan.c - `llmsim plan`: search every parallel configuration of a
 * model on N GPUs and rank those that fit by throughput. `--workload
 * serve` hands over to the serving planner (cmd_plan_serve.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "args.h"
#include "commands.h"
#include "train_out.h"

static const char about[] =
	"Enumerate every training configuration of --gpus GPUs: TP x PP x DP x CP\n"
	"(x EP for MoE models), ZeRO 0-3, micro-batch 1-16, recomputation\n"
	"none/selective/full, 1F1B or interleaved (2 or 4 chunks), attention\n"
	"naive/flash2/flash3, offload none/optimizer (ZeRO-Offload, ZeRO >= 1)/params\n"
	"(ZeRO-Infinity, ZeRO-3) to the host the GPU file describes; drop those that\n"
	"are invalid or do not fit in HBM or host memory, rank the rest by tokens/s\n"
	"(offload adds PCIe and CPU Adam time, so it wins only where nothing else\n"
	"fits). Defaults: --seq 4096, --global-batch 1024 sequences\n"
	"(4M tokens at 4096), bf16, the megatron recipe, --top 5. Exit status 1 when\n"
	"nothing fits (the closest configuration and its shortfall are shown).\n"
	"--workload serve plans inference serving instead (see its --help).";

static const char *const workloads[] = {"train", "serve", NULL};

static int wants_serve(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--workload=serve"))
			return 1;
		if (!strcmp(argv[i], "--workload") && i + 1 < argc && !strcmp(argv[i + 1], "serve"))
			return 1;
	}
	return 0;
}

/* The ranked configurations, one row each (ep only for MoE models). */
static void print_top(const struct llmsim_plan_out *o, int moe)
{
	static const char *const all[] = {
		"#", "tp", "pp", "dp", "cp", "ep", "zero", "mb", "<recompute", "<schedule",
		"<attention", "<offload", "GPU mem", "host/node", "compute", "comm", "bubble",
		"optim", "step", "tokens/s", "MFU"};
	enum { NCOL = sizeof all / sizeof all[0], EP = 5 };
	const char *head[NCOL];
	int n = 0;
	for (int k = 0; k < NCOL; k++)
		if (k != EP || moe)
			head[n++] = all[k];
	struct llmsim_table t;
	llmsim_table_init(&t, n, head);
	for (int i = 0; i < o->nresults; i++) {
		const struct llmsim_train_result *r = &o->results[i];
		const struct llmsim_train_cfg *c = &r->cfg;
		char v[NCOL][LLMSIM_FMT_MAX];
		const char *cells[NCOL];
		snprintf(v[0], sizeof v[0], "%d", i + 1);
		snprintf(v[1], sizeof v[1], "%d", c->tp);
		snprintf(v[2], sizeof v[2], "%d", c->pp);
		snprintf(v[3], sizeof v[3], "%d", c->dp);
		snprintf(v[4], sizeof v[4], "%d", c->cp);
		snprintf(v[5], sizeof v[5], "%d", c->ep);
		snprintf(v[6], sizeof v[6], "%d", c->zero);
		snprintf(v[7], sizeof v[7], "%d", c->micro_batch);
		snprintf(v[8], sizeof v[8], "%s", llmsim_recompute_name(c->recompute));
		if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
			snprintf(v[9], sizeof v[9], "interleaved/%d", c->chunks);
		else
			snprintf(v[9], sizeof v[9], "1f1b");
		snprintf(v[10], sizeof v[10], "%s", llmsim_attn_impl_name(c->attn));
		snprintf(v[11], sizeof v[11], "%s%s", llmsim_offload_name(c->offload),
			 c->dpu ? "+dpu" : "");
		llmsim_fmt_bytes(v[12], r->mem.total_bytes);
		if (c->offload != LLMSIM_OFFLOAD_NONE)
			llmsim_fmt_bytes(v[13], r->mem.host_per_node_bytes);
		else
			snprintf(v[13], sizeof v[13], "-");
		llmsim_fmt_time(v[14], r->time.compute_s);
		llmsim_fmt_time(v[15], r->time.comm_exposed_s);
		llmsim_fmt_time(v[16], r->time.bubble_s);
		llmsim_fmt_time(v[17], r->time.optimizer_s + r->time.offload_s);
		llmsim_fmt_time(v[18], r->time.step_s);
		llmsim_fmt_count(v[19], r->tokens_per_s);
		llmsim_fmt_pct(v[20], r->mfu);
		int m = 0;
		for (int k = 0; k < NCOL; k++)
			if (k != EP || moe)
				cells[m++] = v[k];
		llmsim_table_row(&t, cells);
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

static void print_rejected(FILE *f, const struct llmsim_plan_out *o)
{
	static const char *const head[] = {"rejected", "<reason"};
	struct llmsim_table t;
	llmsim_table_init(&t, 2, head);
	for (int i = 1; i < LLMSIM_REJ_COUNT; i++)
		if (o->rejected[i])
			llmsim_table_rowf(&t, "%lld\t%s", (long long)o->rejected[i],
					  llmsim_train_reject_name(i));
	if (t.rows)
		llmsim_table_print(&t, f);
	else
		fputs("rejected: none\n", f);
	llmsim_table_release(&t);
}

/* The human report: what was asked, the search in one line, the ranked
 * table, the winner in detail, the rejections. */
static void print_human(const struct llmsim_plan_out *o, const struct llmsim_model *m,
			const struct llmsim_gpu *gpu, const struct llmsim_plan_req *req)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
	int nodes = (req->gpus + gpu->gpus_per_node - 1) / gpu->gpus_per_node;
	printf("plan: %s on %d x %s (%d node%s); %lld sequences x %lld tokens = %s tokens per "
	       "step; %s, %s recipe\n",
	       m->full_name[0] ? m->full_name : m->name, req->gpus, gpu->name, nodes,
	       nodes == 1 ? "" : "s", (long long)req->global_batch, (long long)req->seq,
	       llmsim_fmt_count(a, (double)req->global_batch * req->seq),
	       llmsim_dtype_name(req->dtype), llmsim_recipe_name(req->recipe));
	int64_t rej = 0;
	for (int i = 1; i < LLMSIM_REJ_COUNT; i++)
		rej += o->rejected[i];
	printf("search: %lld configurations in %s (%s/s): %lld feasible (%lld in HBM alone, "
	       "%lld with offload%s), %lld rejected\n",
	       (long long)o->evaluated, llmsim_fmt_time(b, o->elapsed_s),
	       llmsim_fmt_count(d, o->elapsed_s > 0 ? o->evaluated / o->elapsed_s : 0),
	       (long long)o->feasible, (long long)(o->feasible - o->feasible_offload),
	       (long long)o->feasible_offload,
	       req->no_offload ? ", not searched" : !gpu->has_host ? ", no host described" : "",
	       (long long)rej);
	if (!req->no_offload && o->nresults && o->feasible == o->feasible_offload)
		printf("        nothing fits in HBM alone: every feasible configuration offloads "
		       "model states to host memory\n");
	putchar('\n');
	if (o->nresults) {
		printf("best %d by tokens/s (memory per GPU, host memory per node, times per step):\n",
		       o->nresults);
		print_top(o, m->has_moe && m->moe.experts > 1);
		printf("\n#1 in detail: ");
		train_print_result(stdout, &o->results[0], m, gpu);
	} else if (o->have_closest) {
		printf("no configuration fits; the closest: ");
		train_print_result(stdout, &o->closest, m, gpu);
	} else {
		printf("no valid configuration of %d GPUs\n", req->gpus);
	}
	putchar('\n');
	print_rejected(stdout, o);
	if (!o->nresults && req->lora_rank == 0)
		printf("hint: full training keeps %s per parameter of model state; try more GPUs, "
		       "--lora-rank 16%s\n", req->recipe == LLMSIM_RECIPE_MEGATRON ? "18 B" : "16 B",
		       req->no_offload ? " or drop --no-offload" : "");
}

int cmd_plan(int argc, char **argv, const struct cli_setup *setup)
{
	if (wants_serve(argc, argv))
		return cmd_plan_serve(argc, argv, setup);
	const char *cmd = "llmsim plan";
	const char *model_name = NULL, *gpu_name = "h200"; /* loaded by main (setup) */
	int gpus = 0, json = 0, workload = 0, dtype = 0, recipe = LLMSIM_RECIPE_MEGATRON;
	int top = 5, lora = 0, uneven = 0, dpu = 0, no_offload = 0;
	int64_t seq = 4096, gb = 1024;
	double imb = 1.0;
	const struct llmsim_opt opts[] = {
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "model name, alias or file (required)", 0, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "GPU count (required)", 1, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU (default h200)", 0, NULL, NULL},
		{"workload", LLMSIM_ARG_CHOICE, &workload, "W", "what to plan (default train)", 0, workloads, NULL},
		{"seq", LLMSIM_ARG_I64, &seq, "S", "tokens per sequence (default 4096)", 1, NULL, NULL},
		{"global-batch", LLMSIM_ARG_I64, &gb, "B", "sequences per step (default 1024)", 1, NULL, NULL},
		{"top", LLMSIM_ARG_INT, &top, "K", "configurations shown (default 5)", 1, NULL, NULL},
		{"dtype", LLMSIM_ARG_CHOICE, &dtype, "T", "matmul type (default bf16)", 0, train_dtype_choices, NULL},
		{"recipe", LLMSIM_ARG_CHOICE, &recipe, "R", "optimizer-state recipe (default megatron)", 0, llmsim_recipe_names, NULL},
		{"lora-rank", LLMSIM_ARG_INT, &lora, "R", "LoRA fine-tuning rank (default 0: off)", 0, NULL, NULL},
		{"moe-imbalance", LLMSIM_ARG_DOUBLE, &imb, "F", "busiest expert's load / mean (default 1)", 1, NULL, NULL},
		{"uneven-pp", LLMSIM_ARG_FLAG, &uneven, NULL, "allow pipeline stages of unequal layer counts", 0, NULL, NULL},
		{"dpu", LLMSIM_ARG_FLAG, &dpu, NULL, "offloaded configurations use the one-step delayed parameter update", 0, NULL, NULL},
		{"no-offload", LLMSIM_ARG_FLAG, &no_offload, NULL, "keep every model state in HBM (search offload none only)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--model M --gpus N [--gpu G] [--workload train|serve] [options]",
				   about, argc - 1, argv + 1, opts, sizeof opts / sizeof opts[0], NULL,
				   0, NULL);
	if (rc == LLMSIM_ARGS_HELP)
		return 0;
	if (rc)
		return 2;
	if (!gpus)
		return llmsim_args_error(cmd, "--gpus is required");

	struct llmsim_err err = {0};
	const struct llmsim_model m = *setup->model;
	const struct llmsim_gpu gpu = *setup->gpu;
	struct llmsim_plan_req req = {
		.gpus = gpus, .seq = seq, .global_batch = gb,
		.dtype = dtype == 1 ? LLMSIM_DT_FP8 : LLMSIM_DT_BF16,
		.recipe = recipe, .lora_rank = lora, .moe_imbalance = imb, .top = top,
		.uneven_pp = uneven, .dpu = dpu, .no_offload = no_offload,
	};
	struct llmsim_train_ctx *ctx;
	struct llmsim_plan_out o;
	if (llmsim_train_ctx_new(&m, &gpu, &ctx, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	if (llmsim_plan_run(ctx, &req, &o, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		llmsim_train_ctx_free(ctx);
		return 1;
	}
	llmsim_train_ctx_free(ctx);

	char a[LLMSIM_FMT_MAX];
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "workload", "train");
		llmsim_json_str(&j, "model", m.name);
		llmsim_json_str(&j, "gpu", gpu.name);
		llmsim_json_int(&j, "gpus", gpus);
		llmsim_json_int(&j, "seq", seq);
		llmsim_json_int(&j, "global_batch", gb);
		llmsim_json_int(&j, "configs_evaluated", o.evaluated);
		llmsim_json_int(&j, "configs_feasible", o.feasible);
		llmsim_json_int(&j, "configs_feasible_offload", o.feasible_offload);
		llmsim_json_bool(&j, "dpu", dpu);
		llmsim_json_arr_begin(&j, "results");
		for (int i = 0; i < o.nresults; i++) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_int(&j, "rank", i + 1);
			train_json_result(&j, &o.results[i]);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_obj_begin(&j, "rejected");
		for (int i = 1; i < LLMSIM_REJ_COUNT; i++)
			llmsim_json_int(&j, llmsim_train_reject_key(i), o.rejected[i]);
		llmsim_json_obj_end(&j);
		if (!o.nresults && o.have_closest) {
			llmsim_json_obj_begin(&j, "closest");
			train_json_result(&j, &o.closest);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_num(&j, "elapsed_s", o.elapsed_s);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		print_human(&o, &m, &gpu, &req);
	}
	int status = 0;
	if (!o.nresults) {
		if (o.have_closest && !o.closest.gpu_fits)
			fprintf(stderr, "%s: no configuration fits: the closest needs %s more per GPU\n",
				cmd, llmsim_fmt_bytes(a, o.closest.mem.total_bytes -
								 o.closest.mem.hbm_bytes));
		else if (o.have_closest)
			fprintf(stderr, "%s: no configuration fits: the closest needs %s more host "
				"memory per node\n", cmd,
				llmsim_fmt_bytes(a, o.closest.mem.host_per_node_bytes -
							    o.closest.mem.host_bytes));
		else
			fprintf(stderr, "%s: no valid configuration of %d GPUs\n", cmd, gpus);
		status = 1;
	}
	llmsim_plan_out_release(&o);
	return status;
}
