/*
 * cmd_plan.c - `llmsim plan`: search every parallel configuration of a
 * model on N GPUs (sim/train/plan.h) and report distinct answers: rows
 * grouped within the prediction's expected error, the best of each kind,
 * the winner in detail, what a token budget costs, the search's counts
 * and the rejections by exact cause; `--emit` prints the launch arguments
 * (plan_emit.h). `--workload serve` hands over to the serving planner
 * (cmd_plan_serve.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "base/paths.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/plan.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "json_error.h"
#include "plan_emit.h"
#include "train_out.h"

static const char about[] =
	"Enumerate every training configuration of --gpus GPUs: TP x PP x DP x CP\n"
	"(x EP for MoE models; --tp/--pp/--cp/--ep pin a degree), ZeRO 0-3,\n"
	"micro-batch 1-16, recomputation none/selective/full, 1F1B or interleaved\n"
	"with 2-8 chunks per stage, pipeline stages of unequal layer counts,\n"
	"attention naive/flash2/flash3, offload none/optimizer/params to the host the\n"
	"GPU file describes, as far as the software stack (--stack, hw/stacks/; default\n"
	"mcore-te) can launch them, with its recompute modules and activation offload;\n"
	"price those that are valid, drop those that do not fit in HBM or host memory\n"
	"(a layout within the memory model's error of the HBM is kept, marked tight),\n"
	"rank the rest by tokens/s. Each row is the best of a layout (degrees, ZeRO,\n"
	"offload), its configurations within the expected error folded into it;\n"
	"offload and tight memory rank first only when they win by more than that\n"
	"error. --emit stack writes each row's launch for the stack.\n"
	"The global batch defaults to max(4 Mi, 1024 x GPUs) tokens (Llama 3,\n"
	"Megatron-LM), in a sequence count every data-parallel degree divides.\n"
	"Exit status 1 when nothing fits (the closest configuration and the cause).\n"
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

static void pct_pm(char *buf, double frac)
{
	snprintf(buf, LLMSIM_FMT_MAX, "+/-%.0f%%", 100 * frac);
}

/* A row's memory headroom with the memory model's error: "62.7 GB +/-4.4",
 * "tight" when within the error of the limit. */
static void headroom_cell(char *buf, size_t n, const struct llmsim_train_result *r)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
	double room = r->mem.hbm_bytes - r->mem.total_bytes;
	llmsim_fmt_bytes(a, fabs(room));
	llmsim_fmt_bytes(b, r->mem_error_bytes);
	snprintf(buf, n, "%s%s +/-%s%s", room < 0 ? "-" : "", a, b,
		 r->mem_tight ? " tight" : "");
}

/* The distinct rows, one line each (ep for MoE models, lora with a rank). */
static void print_rows(const struct llmsim_plan_out *o, int moe, int lora)
{
	static const char *const all[] = {
		"#", "<stack", "tp", "pp", "dp", "cp", "ep", "<zero", "mb", "<recompute", "~<schedule",
		"~<attention", "<offload", "<train", "GPU mem", "<headroom", "~host/node", "step",
		"tokens/s", "MFU", "error", "equivalent"}; /* ~: a detail column (--wide) */
	enum { NCOL = sizeof all / sizeof all[0], EP = 6, LORA = 13 };
	const char *head[NCOL];
	int n = 0;
	for (int k = 0; k < NCOL; k++)
		if ((k != EP || moe) && (k != LORA || lora))
			head[n++] = all[k];
	struct llmsim_table t;
	llmsim_table_init(&t, n, head);
	for (int i = 0; i < o->nrows; i++) {
		const struct llmsim_train_result *r = &o->rows[i].r;
		const struct llmsim_train_cfg *c = &r->cfg;
		char v[NCOL][2 * LLMSIM_FMT_MAX + 16];
		const char *cells[NCOL];
		snprintf(v[0], sizeof v[0], "%d", i + 1);
		snprintf(v[1], sizeof v[1], "%s", train_stack_str(c));
		snprintf(v[2], sizeof v[2], "%d", c->tp);
		snprintf(v[3], sizeof v[3], "%d", c->pp);
		snprintf(v[4], sizeof v[4], "%d", c->dp);
		snprintf(v[5], sizeof v[5], "%d", c->cp);
		snprintf(v[6], sizeof v[6], "%d", c->ep);
		snprintf(v[7], sizeof v[7], "%d%s", c->zero,
			 c->zero >= 2 && c->fsdp == LLMSIM_FSDP_MEGATRON ? " mfsdp"
			 : c->zero >= 2 && c->fsdp == LLMSIM_FSDP_FSDP2  ? " fsdp2"
									 : "");
		snprintf(v[8], sizeof v[8], "%d", c->micro_batch);
		if (c->recompute == LLMSIM_RECOMP_MODULES)
			train_modules_str(v[9], sizeof v[9], c);
		else
			snprintf(v[9], sizeof v[9], "%s%s", llmsim_recompute_name(c->recompute),
				 c->offload_activations > 0 ? " +act-offload" : "");
		if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
			snprintf(v[10], sizeof v[10], "interleaved/%d", c->chunks);
		else
			snprintf(v[10], sizeof v[10], "1f1b");
		snprintf(v[11], sizeof v[11], "%s", llmsim_attn_impl_name(c->attn));
		snprintf(v[12], sizeof v[12], "%s%s", llmsim_offload_name(c->offload),
			 c->dpu ? "+dpu" : "");
		if (c->lora_rank)
			snprintf(v[13], sizeof v[13], "lora r%d", c->lora_rank);
		else
			snprintf(v[13], sizeof v[13], "full");
		llmsim_fmt_bytes(v[14], r->mem.total_bytes);
		headroom_cell(v[15], sizeof v[15], r);
		if (c->offload != LLMSIM_OFFLOAD_NONE)
			llmsim_fmt_bytes(v[16], r->mem.host_per_node_bytes);
		else
			snprintf(v[16], sizeof v[16], "-");
		llmsim_fmt_time(v[17], r->time.step_s);
		llmsim_fmt_count(v[18], r->tokens_per_s);
		llmsim_fmt_pct(v[19], r->mfu);
		pct_pm(v[20], o->error_frac);
		snprintf(v[21], sizeof v[21], "%lld", (long long)o->rows[i].equivalent);
		int m = 0;
		for (int k = 0; k < NCOL; k++)
			if ((k != EP || moe) && (k != LORA || lora))
				cells[m++] = v[k];
		llmsim_table_row(&t, cells);
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

/* The best of each kind the search covered. */
static void print_kinds(const struct llmsim_plan_out *o, const struct llmsim_plan_req *req,
			const struct llmsim_gpu *gpu)
{
	static const char *const head[] = {"<kind", "~<configuration", "tokens/s", "vs #1",
					   "<verdict"};
	struct llmsim_table t;
	llmsim_table_init(&t, 5, head);
	char e[LLMSIM_FMT_MAX];
	pct_pm(e, o->error_frac);
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++) {
		const struct llmsim_plan_best *b = &o->kind[k];
		char name[64], cfg[200], tps[LLMSIM_FMT_MAX], vs[32], verdict[160];
		if (!b->searched && k != LLMSIM_PLAN_KIND_OFFLOAD)
			continue;
		snprintf(name, sizeof name, "%s", llmsim_plan_kind_name(k));
		if (k == LLMSIM_PLAN_KIND_LORA)
			snprintf(name, sizeof name, "best with LoRA rank %d", req->lora_rank);
		if (k == LLMSIM_PLAN_KIND_TP_NODE)
			snprintf(name, sizeof name, "best with tp <= %d (a node)", gpu->gpus_per_node);
		if (!b->searched) {
			llmsim_table_rowf(&t, "%s\t-\t-\t-\tnot searched: %s", name, o->offload_note);
			continue;
		}
		if (!b->found) {
			llmsim_table_rowf(&t, "%s\t-\t-\t-\tnothing of this kind fits", name);
			continue;
		}
		train_cfg_line(cfg, sizeof cfg, &b->r.cfg);
		llmsim_fmt_count(tps, b->r.tokens_per_s);
		snprintf(vs, sizeof vs, "%+.1f%%", 100 * b->vs_first);
		if (k == LLMSIM_PLAN_KIND_OFFLOAD)
			snprintf(verdict, sizeof verdict, "%s",
				 !o->kind[LLMSIM_PLAN_KIND_HBM].found
					 ? "wins: nothing fits in HBM alone"
				 : b->beyond_error ? "wins by more than the error"
						   : "does not beat HBM alone by more than the error");
		else
			snprintf(verdict, sizeof verdict, "%s",
				 fabs(b->vs_first) < 1e-12 ? "= #1"
				 : b->beyond_error	   ? "slower than #1 beyond the error"
							   : "within the error of #1");
		llmsim_table_rowf(&t, "%s\t%s\t%s\t%s\t%s", name, cfg, tps, vs, verdict);
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

static void print_rejected(FILE *f, const struct llmsim_plan_out *o)
{
	static const char *const head[] = {"configurations", "<rejected because"};
	struct llmsim_table t;
	llmsim_table_init(&t, 2, head);
	for (int i = 0; i < LLMSIM_PLAN_WHY_COUNT; i++)
		if (o->why[i])
			llmsim_table_rowf(&t, "%lld\t%s", (long long)o->why[i],
					  llmsim_plan_why_name(i));
	if (t.rows)
		llmsim_table_print(&t, f);
	else
		fputs("rejected: none\n", f);
	llmsim_table_release(&t);
}

static void print_budget(const struct llmsim_gpu *gpu, const struct llmsim_train_result *r,
			 double tokens, double err_frac)
{
	struct llmsim_plan_budget b;
	llmsim_plan_budget(gpu, r, tokens, &b);
	char a[LLMSIM_FMT_MAX], h[LLMSIM_FMT_MAX];
	double mwh = b.energy_j / 3.6e9;
	printf("\nto train %s tokens with #1: %.1f days, %s GPU-hours, %.3g %s of GPU energy "
	       "(%.0f W per GPU by the power model; boards only: no host, network or cooling); "
	       "+/-%.0f%%\n",
	       llmsim_fmt_count(a, tokens), b.time_s / 86400, llmsim_fmt_count(h, b.gpu_hours),
	       mwh >= 1000 ? mwh / 1000 : mwh, mwh >= 1000 ? "GWh" : "MWh", b.power_w_per_gpu,
	       100 * err_frac);
}

/* The human report: what was asked, the batch, the search in numbers, the
 * rows, the kinds, the winner in detail, the rejections. */
static void print_human(const struct llmsim_plan_out *o, const struct llmsim_model *m,
			const struct llmsim_gpu *gpu, const struct llmsim_plan_req *req,
			double tokens)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX];
	char e[LLMSIM_FMT_MAX];
	int nodes = (req->gpus + gpu->gpus_per_node - 1) / gpu->gpus_per_node;
	printf("plan: %s on %d x %s (%d node%s); %s, %s recipe%s\n",
	       m->full_name[0] ? m->full_name : m->name, req->gpus, gpu->name, nodes,
	       nodes == 1 ? "" : "s", llmsim_dtype_name(req->dtype), llmsim_recipe_name(req->recipe),
	       req->lora_rank ? ", full training and LoRA" : "");
	if (req->stack)
		printf("stack:  %s: %s %s (%s); only the layouts it can launch\n", req->stack->name,
		       req->stack->framework, req->stack->release, llmsim_data_rel(req->stack->path));
	printf("batch:  %lld sequences x %lld tokens = %s tokens per step", (long long)o->global_batch,
	       (long long)req->seq, llmsim_fmt_count(a, (double)o->global_batch * req->seq));
	if (o->batch_from_rule)
		printf(" (the batch rule: max(4 Mi, 1024 x %d GPUs) = %s tokens, rounded to a "
		       "sequence count every dp of %d GPUs divides; --global-batch sets it)\n",
		       req->gpus, llmsim_fmt_count(b, o->batch_budget_tokens), req->gpus);
	else
		printf(" (--global-batch)\n");
	int64_t total = o->priced + o->pruned;
	printf("search: %s configurations: %s priced, %s pruned before pricing; "
	       "%lld fit (%lld in HBM alone, %lld with offload%s%s)\n",
	       llmsim_fmt_count(a, (double)total), llmsim_fmt_count(c, (double)o->priced),
	       llmsim_fmt_count(e, (double)o->pruned), (long long)o->feasible,
	       (long long)(o->feasible - o->feasible_offload), (long long)o->feasible_offload,
	       o->offload_searched ? "" : ": not searched, ", o->offload_note);
	printf("error:  %s per step (%s); configurations within it of a row are that row's "
	       "equivalents\n", (pct_pm(a, o->error_frac), a), o->error.source);
	putchar('\n');
	if (o->nrows) {
		printf("best %d layouts, in order (by tokens/s, offload and tight memory counted the "
		       "error slower; the configurations of a layout within the error of its row "
		       "folded into it: `equivalent`; headroom +/- the memory model's error):\n",
		       o->nrows);
		print_rows(o, m->has_moe && m->moe.experts > 1, req->lora_rank > 0);
		for (int i = 0; i < o->nrows; i++)
			if (o->rows[i].r.mem_tight) {
				printf("tight: within the memory model's error of the limit; ranked "
				       "below the layouts with room to spare unless faster by more "
				       "than the error\n");
				break;
			}
		putchar('\n');
		print_kinds(o, req, gpu);
		const struct llmsim_train_result *r1 = &o->rows[0].r;
		if (o->fastest.tokens_per_s > r1->tokens_per_s * (1 + 1e-12)) {
			printf("\nthe fastest prediction (%+.1f%%, offload %s) is within the error of "
			       "#1, which keeps every model state in HBM\n",
			       100 * (o->fastest.tokens_per_s / r1->tokens_per_s - 1),
			       llmsim_offload_name(o->fastest.cfg.offload));
		}
		if (r1->microbatches < 2)
			printf("\nwarning: #1 runs %lld micro-batch per pipeline (global batch %lld / "
			       "(dp %d x micro-batch %d)): no gradient accumulation, nothing to hide "
			       "the gradient reduction behind; a larger --global-batch gives more\n",
			       (long long)r1->microbatches, (long long)r1->cfg.global_batch,
			       r1->cfg.dp, r1->cfg.micro_batch);
		printf("\n#1 in detail: ");
		train_print_result(stdout, r1, m, gpu); /* its expected step time error too */
		if (tokens > 0)
			print_budget(gpu, r1, tokens, o->error_frac);
	} else if (o->have_closest) {
		printf("no configuration fits; the closest: ");
		train_print_result(stdout, &o->closest, m, gpu);
	} else {
		printf("no valid configuration of %d GPUs\n", req->gpus);
	}
	putchar('\n');
	print_rejected(stdout, o);
	if (!o->nrows)
		printf("hint: %s\n", o->hint);
}

static void json_budget(struct llmsim_json *j, const struct llmsim_gpu *gpu,
			const struct llmsim_train_result *r, double tokens)
{
	struct llmsim_plan_budget b;
	llmsim_plan_budget(gpu, r, tokens, &b);
	llmsim_json_obj_begin(j, "to_train");
	llmsim_json_num(j, "tokens", b.tokens);
	llmsim_json_num(j, "time_s", b.time_s);
	llmsim_json_num(j, "gpu_hours", b.gpu_hours);
	llmsim_json_num(j, "power_w_per_gpu", b.power_w_per_gpu);
	llmsim_json_num(j, "energy_j", b.energy_j);
	llmsim_json_obj_end(j);
}

static void print_json(const struct llmsim_plan_out *o, const struct llmsim_model *m,
		       const struct llmsim_gpu *gpu, const struct llmsim_plan_req *req,
		       double tokens, int emit, const char *emitted, const char *emit_why)
{
	const char *emit_fw = emit >= 0 ? plan_fw_names[emit] : NULL;
	struct llmsim_json j;
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "workload", "train");
	llmsim_json_str(&j, "model", m->name);
	llmsim_json_str(&j, "gpu", gpu->name);
	llmsim_json_int(&j, "gpus", req->gpus);
	if (req->stack) {
		llmsim_json_str(&j, "stack", req->stack->name);
		llmsim_json_str(&j, "stack_file", llmsim_data_rel(req->stack->path));
	}
	llmsim_json_int(&j, "seq", req->seq);
	llmsim_json_int(&j, "global_batch", o->global_batch);
	llmsim_json_bool(&j, "global_batch_from_rule", o->batch_from_rule);
	if (o->batch_from_rule)
		llmsim_json_num(&j, "batch_rule_tokens", o->batch_budget_tokens);
	else
		llmsim_json_null(&j, "batch_rule_tokens");
	llmsim_json_int(&j, "configs_priced", o->priced);
	llmsim_json_int(&j, "configs_pruned", o->pruned);
	llmsim_json_int(&j, "configs_total", o->priced + o->pruned);
	llmsim_json_int(&j, "configs_feasible", o->feasible);
	llmsim_json_int(&j, "configs_feasible_offload", o->feasible_offload);
	llmsim_json_bool(&j, "offload_searched", o->offload_searched);
	llmsim_json_bool(&j, "dpu", req->dpu);
	llmsim_json_obj_begin(&j, "expected_error");
	llmsim_json_num(&j, "abs_frac", o->error.abs_frac);
	llmsim_json_num(&j, "bias_frac", o->error.bias_frac);
	llmsim_json_bool(&j, "calibrated", o->error.calibrated);
	llmsim_json_str(&j, "source", o->error.source);
	llmsim_json_num(&j, "grouped_by_frac", o->error_frac);
	llmsim_json_obj_end(&j);
	llmsim_json_arr_begin(&j, "results");
	for (int i = 0; i < o->nrows; i++) {
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_int(&j, "rank", i + 1);
		llmsim_json_int(&j, "equivalent", o->rows[i].equivalent);
		llmsim_json_num(&j, "expected_error_frac", o->error_frac);
		train_json_result(&j, &o->rows[i].r);
		if (tokens > 0)
			json_budget(&j, gpu, &o->rows[i].r, tokens);
		if (emit >= 0) { /* every row as its stack's launcher writes it */
			static char launch[16384];
			char why[320];
			if (plan_emit_train(emit, &o->rows[i].r, m, tokens, launch, sizeof launch, why,
					    sizeof why))
				llmsim_json_null(&j, "launch"), llmsim_json_str(&j, "cannot_express", why);
			else
				llmsim_json_str(&j, "launch", launch);
		}
		llmsim_json_obj_end(&j);
	}
	llmsim_json_arr_end(&j);
	llmsim_json_obj_begin(&j, "kinds");
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++) {
		const struct llmsim_plan_best *b = &o->kind[k];
		if (!b->searched || !b->found) {
			llmsim_json_null(&j, llmsim_plan_kind_key(k));
			continue;
		}
		llmsim_json_obj_begin(&j, llmsim_plan_kind_key(k));
		llmsim_json_num(&j, "vs_first", b->vs_first);
		llmsim_json_bool(&j, "beyond_error", b->beyond_error);
		train_json_result(&j, &b->r);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_arr_begin(&j, "rejected"); /* reason keys are values, not keys */
	for (int i = 0; i < LLMSIM_PLAN_WHY_COUNT; i++)
		cli_json_rejected(&j, llmsim_plan_why_key(i), llmsim_plan_why_name(i), o->why[i]);
	llmsim_json_arr_end(&j);
	if (!o->nrows) {
		llmsim_json_str(&j, "hint", o->hint);
		if (o->have_closest) {
			llmsim_json_obj_begin(&j, "closest");
			train_json_result(&j, &o->closest);
			llmsim_json_obj_end(&j);
		}
	}
	if (emit_fw) {
		llmsim_json_obj_begin(&j, "emit");
		llmsim_json_str(&j, "framework", emit_fw);
		if (emitted && emitted[0])
			llmsim_json_str(&j, "launch", emitted);
		else
			llmsim_json_null(&j, "launch");
		if (emit_why && emit_why[0])
			llmsim_json_str(&j, "cannot_express", emit_why);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

/* --emit: #1 if the framework can express it, else the best row that it
 * can (saying why #1 cannot). Returns the row emitted, or -1. */
static int emit_rows(enum plan_fw fw, const struct llmsim_plan_out *o,
		     const struct llmsim_model *m, double tokens, char *out, size_t n,
		     char *why1, size_t nwhy)
{
	char why[320];
	why1[0] = 0;
	for (int i = 0; i < o->nrows; i++) {
		if (!plan_emit_train(fw, &o->rows[i].r, m, tokens, out, n, why, sizeof why))
			return i;
		if (i == 0)
			snprintf(why1, nwhy, "%s", why);
	}
	return -1;
}

static void plan_progress(void *ctx, int64_t priced, int64_t pruned)
{
	(void)ctx;
	cli_progress("llmsim plan: %lld configurations priced, %lld pruned", (long long)priced,
		     (long long)pruned);
}

int cmd_plan(int argc, char **argv, const struct cli_setup *setup)
{
	if (wants_serve(argc, argv))
		return cmd_plan_serve(argc, argv, setup);
	const char *cmd = "llmsim plan";
	const char *model_name = NULL, *gpu_name = "h200"; /* loaded by main (setup) */
	int gpus = 0, json = 0, workload = 0, dtype = 0, recipe = LLMSIM_RECIPE_MEGATRON;
	int top = 5, lora = 0, uneven = 0, even = 0, dpu = 0, no_offload = 0, chunks = 0;
	int tp = 0, pp = 0, cp = 0, ep = 0, emit = -1, verbose = 0, recipe_seen = 0;
	const char *stack_name = "mcore-te";
	int64_t seq = 4096, gb = 0;
	double imb = 1.0, tokens = 0;
	const struct llmsim_opt opts[] = {
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "model name, alias or file (required)", 0, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "GPU count (required)", 1, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU (default h200)", 0, NULL, NULL},
		{"workload", LLMSIM_ARG_CHOICE, &workload, "W", "what to plan (default train)", 0, workloads, NULL},
		{"seq", LLMSIM_ARG_I64, &seq, "S", "tokens per sequence (default 4096)", 1, NULL, NULL},
		{"global-batch", LLMSIM_ARG_I64, &gb, "B", "sequences per step (default: the batch rule, max(4 Mi, 1024 x GPUs) tokens)", 1, NULL, NULL},
		{"top", LLMSIM_ARG_INT, &top, "K", "distinct rows shown (default 5)", 1, NULL, NULL},
		{"dtype", LLMSIM_ARG_CHOICE, &dtype, "T", "matmul type (default bf16)", 0, train_dtype_choices, NULL},
		{"stack", LLMSIM_ARG_STRING, &stack_name, "S", "the software stack whose launchable layouts are searched: a name in hw/stacks or a file (default mcore-te; torchtitan, deepspeed, llama3, core, megatron-2021, megatron-2022)", 0, NULL, NULL},
		{"recipe", LLMSIM_ARG_CHOICE, &recipe, "R", "optimizer-state recipe (default: the stack's)", 0, llmsim_recipe_names, &recipe_seen},
		{"lora-rank", LLMSIM_ARG_INT, &lora, "R", "also search LoRA fine-tuning at this rank (default 0: full training only)", 0, NULL, NULL},
		{"moe-imbalance", LLMSIM_ARG_DOUBLE, &imb, "F", "busiest expert's load / mean (default 1)", 1, NULL, NULL},
		{"tp", LLMSIM_ARG_INT, &tp, "T", "tensor-parallel degree only (default: searched)", 1, NULL, NULL},
		{"pp", LLMSIM_ARG_INT, &pp, "P", "pipeline stages only (default: searched)", 1, NULL, NULL},
		{"cp", LLMSIM_ARG_INT, &cp, "C", "context-parallel degree only (default: searched)", 1, NULL, NULL},
		{"ep", LLMSIM_ARG_INT, &ep, "E", "expert-parallel degree only (default: searched)", 1, NULL, NULL},
		{"max-chunks", LLMSIM_ARG_INT, &chunks, "V", "interleaved chunks per stage tried, 2..V (default 8)", 1, NULL, NULL},
		{"even-pp", LLMSIM_ARG_FLAG, &even, NULL, "only pipeline stages of equal layer counts", 0, NULL, NULL},
		{"uneven-pp", LLMSIM_ARG_FLAG, &uneven, NULL, "stages of unequal layer counts (the default; kept for scripts)", 0, NULL, NULL},
		{"dpu", LLMSIM_ARG_FLAG, &dpu, NULL, "offloaded configurations use the one-step delayed parameter update", 0, NULL, NULL},
		{"no-offload", LLMSIM_ARG_FLAG, &no_offload, NULL, "keep every model state in HBM (search offload none only)", 0, NULL, NULL},
		{"tokens", LLMSIM_ARG_DOUBLE, &tokens, "N", "a token budget: time to train, GPU-hours and energy of #1", 1, NULL, NULL},
		{"emit", LLMSIM_ARG_CHOICE, &emit, "F", "print #1's launch arguments: stack (the stack's own launcher), megatron, deepspeed or torchtitan", 0, plan_fw_names, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
		{"verbose", LLMSIM_ARG_FLAG, &verbose, NULL,
		 "the search's own wall time and rates, on stderr (stdout stays reproducible)", 0,
		 NULL, NULL},
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
	if (even && uneven)
		return llmsim_args_error(cmd, "--even-pp and --uneven-pp exclude each other");
	if (emit >= 0 && !plan_fw_trains(emit))
		return llmsim_args_error(cmd, "--emit %s is for serving plans (add --workload serve); "
					 "training plans emit stack, megatron, deepspeed or torchtitan", plan_fw_names[emit]);
	if (chunks > 64)
		return llmsim_args_error(cmd, "--max-chunks: at most 64, got %d", chunks);

	struct llmsim_err err = {0};
	const struct llmsim_model m = *setup->model;
	const struct llmsim_gpu gpu = *setup->gpu;
	if (cli_check_context(cmd, &m, seq))
		return 1;
	static struct llmsim_stack_def sd;
	if (train_stack_load(cmd, stack_name, &sd))
		return 1;
	if (!recipe_seen)
		recipe = sd.recipe;
	if (emit == PLAN_FW_STACK)
		emit = plan_fw_of_stack(&sd);
	struct llmsim_plan_req req = {
		.gpus = gpus, .seq = seq, .global_batch = gb,
		.dtype = dtype == 1 ? LLMSIM_DT_FP8 : LLMSIM_DT_BF16,
		.recipe = recipe, .lora_rank = lora, .moe_imbalance = imb, .top = top,
		.even_pp = even, .max_chunks = chunks, .dpu = dpu, .no_offload = no_offload,
		.tp = tp, .pp = pp, .cp = cp, .ep = ep, .stack = &sd,
	};
	struct llmsim_train_ctx *ctx;
	struct llmsim_plan_out o;
	if (llmsim_train_ctx_new(&m, &gpu, &ctx, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	req.progress = plan_progress;
	int prc = llmsim_plan_run(ctx, &req, &o, &err);
	cli_progress_done();
	if (prc) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		llmsim_train_ctx_free(ctx);
		return 1;
	}
	llmsim_train_ctx_free(ctx);
	if (verbose) {
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX];
		double el = o.elapsed_s > 0 ? o.elapsed_s : 1e-9;
		fprintf(stderr, "%s: searched in %s: %s/s priced, %s/s pruned\n", cmd,
			llmsim_fmt_time(a, o.elapsed_s), llmsim_fmt_count(b, o.priced / el),
			llmsim_fmt_count(c, o.pruned / el));
	}

	static char launch[16384];
	char why1[320] = "";
	int emitted = -1;
	launch[0] = 0;
	if (emit >= 0 && o.nrows)
		emitted = emit_rows(emit, &o, &m, tokens, launch, sizeof launch, why1, sizeof why1);
	if (json) {
		print_json(&o, &m, &gpu, &req, tokens, emit,
			   emitted >= 0 ? launch : NULL, why1);
	} else {
		print_human(&o, &m, &gpu, &req, tokens);
		if (emitted >= 0) {
			printf("\nlaunch #%d with %s%s:\n%s", emitted + 1, plan_fw_source(emit),
			       emitted ? " (the first row it can express)" : "", launch);
		}
	}
	int status = 0;
	if (!o.nrows) {
		fprintf(stderr, "%s: no configuration fits: %s\n", cmd, o.hint);
		status = 1;
	} else if (emit >= 0 && why1[0]) {
		if (emitted >= 0)
			fprintf(stderr, "%s: --emit %s: #1 cannot be expressed (%s); emitted #%d\n",
				cmd, plan_fw_names[emit], why1, emitted + 1);
		else {
			fprintf(stderr, "%s: --emit %s: %s\n", cmd, plan_fw_names[emit], why1);
			status = 1;
		}
	}
	llmsim_plan_out_release(&o);
	return status;
}
