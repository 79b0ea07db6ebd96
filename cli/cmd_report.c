/*
 * cmd_report.c - `llmsim report --model M --gpu G --out DIR`: write a
 * self-contained HTML report (index.html with embedded PNG pictures, and
 * the PNG files) on the roofline, memory, step time, configurations and,
 * for serving, latency against throughput.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "report_gather.h"
#include "args.h"
#include "commands.h"
#include "common.h"

/* train first: the default of every command with --workload (plan, roofline) */
static const char *const workload_choices[] = {"train", "serve", NULL};

static const char about[] =
	"Write DIR/index.html (one page, pictures embedded, no network needed) and\n"
	"its pictures (roofline.png, memory.png, step_time.png, configs.png and for\n"
	"serving latency_throughput.png), drawn by gnuplot. DIR must not exist or be\n"
	"empty (--force replaces it); nothing is written unless all of it succeeds.\n\n"
	"training: with no --tp/--pp/--dp/--cp/--ep/--zero/--micro-batch the report\n"
	"shows the plan's best configuration of --gpus GPUs (default 8).\n"
	"serving: one replica of --tp x --pp GPUs; --batch sequences of --prompt\n"
	"(default 1024) + --output tokens; the curve doubles the batch until the KV\n"
	"cache no longer fits; the serving plan compares configurations of --gpus.\n"
	"Calibration measurements of the GPU come from --db FILE, or else from the\n"
	"dumps in the data folder's calib/data.";

static int parse_dtype(const char *cmd, const char *s, enum llmsim_dtype *out)
{
	int dt = llmsim_dtype_parse(s);
	if (dt < 0)
		return llmsim_args_error(cmd, "unknown data type '%s'", s);
	*out = (enum llmsim_dtype)dt;
	return 0;
}

static void json_out(const struct llmsim_report_result *r, const char *model, const char *gpu,
		     int train)
{
	struct llmsim_json j;
	char path[4200];
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "out_dir", r->dir);
	llmsim_json_arr_begin(&j, "files");
	for (int i = 0; i < r->nfiles; i++) {
		snprintf(path, sizeof path, "%s/%s", r->dir, r->files[i]);
		llmsim_json_str(&j, NULL, path);
	}
	llmsim_json_arr_end(&j);
	llmsim_json_str(&j, "model", model);
	llmsim_json_str(&j, "gpu", gpu);
	llmsim_json_str(&j, "workload", train ? "train" : "serve");
	llmsim_json_obj_begin(&j, "summary");
	llmsim_json_int(&j, "ops", r->ops);
	llmsim_json_num(&j, train ? "layer_forward_s" : "layer_prefill_s", r->phase_time_s[0]);
	llmsim_json_num(&j, train ? "layer_backward_s" : "layer_decode_s", r->phase_time_s[1]);
	llmsim_json_num(&j, train ? "layer_forward_flops" : "layer_prefill_flops",
			r->phase_flops[0]);
	llmsim_json_num(&j, train ? "layer_backward_flops" : "layer_decode_flops",
			r->phase_flops[1]);
	llmsim_json_int(&j, "measured_points", r->measured_points);
	if (train) {
		llmsim_json_str(&j, "config", r->train_config);
		llmsim_json_num(&j, "step_s", r->step_s);
		llmsim_json_num(&j, "tokens_per_s", r->tokens_per_s);
		llmsim_json_num(&j, "mfu", r->mfu);
		llmsim_json_num(&j, "mem_per_gpu_bytes", r->mem_per_gpu_bytes);
	} else {
		llmsim_json_num(&j, "ttft_s", r->ttft_s);
		llmsim_json_num(&j, "tpot_s", r->tpot_s);
		llmsim_json_num(&j, "tokens_per_s", r->serve_tokens_per_s);
		llmsim_json_int(&j, "max_batch", r->max_batch);
	}
	if (r->unavailable[0])
		llmsim_json_str(&j, "unavailable", r->unavailable);
	else
		llmsim_json_null(&j, "unavailable");
	llmsim_json_obj_end(&j);
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

static void human_out(const struct llmsim_report_result *r, int train)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
	printf("wrote %s/index.html", r->dir);
	for (int i = 1; i < r->nfiles; i++)
		printf("%s%s", i == 1 ? " (with " : ", ", r->files[i]);
	printf("%s\n", r->nfiles > 1 ? ")" : "");
	printf("one layer: %s %s, %s %s; %d ops, %d calibration points\n",
	       train ? "forward" : "prefill", llmsim_fmt_time(a, r->phase_time_s[0]),
	       train ? "backward" : "decode", llmsim_fmt_time(b, r->phase_time_s[1]), r->ops,
	       r->measured_points);
	if (train && isfinite(r->step_s))
		printf("training (%s): step %s, %.0f tokens/s, MFU %s\n", r->train_config,
		       llmsim_fmt_time(a, r->step_s), r->tokens_per_s, llmsim_fmt_pct(b, r->mfu));
	if (!train && isfinite(r->ttft_s))
		printf("serving: TTFT %s, TPOT %s, %.0f tokens/s, largest batch %lld\n",
		       llmsim_fmt_time(a, r->ttft_s), llmsim_fmt_time(b, r->tpot_s),
		       r->serve_tokens_per_s, (long long)r->max_batch);
	if (r->unavailable[0])
		printf("not available: %s\n", r->unavailable);
}

int cmd_report(int argc, char **argv, const struct cli_setup *setup)
{
	/* --model and --gpu: loaded by main (setup) */
	const char *cmd = "llmsim report";
	const char *gpu_name = "h200", *model_name = NULL, *out = NULL, *db = NULL;
	const char *dtype = "bf16", *wdtype = NULL, *kvdtype = NULL, *attn = NULL;
	int json = 0, force = 0, workload = 0, gpus = 0, dp = 0, recompute = 0, sched = 0;
	int seen[8] = {0}, recipe = LLMSIM_RECIPE_MEGATRON;
	int64_t gb = 1024;
	struct llmsim_report_cfg cfg;
	llmsim_report_cfg_init(&cfg);
	int64_t seq_default = cfg.layer.seq;
	cfg.layer.seq = 0; /* given or not: cli_context_seq */
	struct llmsim_train_cfg *t = &cfg.train;
	const struct llmsim_opt opts[] = {
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "model name, alias or file (required)", 0, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU (default h200)", 0, NULL, NULL},
		{"out", LLMSIM_ARG_STRING, &out, "DIR", "output folder (required)", 0, NULL, NULL},
		{"force", LLMSIM_ARG_FLAG, &force, NULL, "replace DIR when it is not empty", 0, NULL, NULL},
		{"workload", LLMSIM_ARG_CHOICE, &workload, NULL, "train or serve (default train, as plan and roofline)", 0, workload_choices, NULL},
		{"dtype", LLMSIM_ARG_STRING, &dtype, "DT", "math and activation type (default bf16)", 0, NULL, NULL},
		{"seq", LLMSIM_ARG_I64, &cfg.layer.seq, "S", "tokens per sequence / prompt (default 4096, or the model's context if shorter)", 1, NULL, NULL},
		{"batch", LLMSIM_ARG_I64, &cfg.layer.batch, "B", "sequences of the roofline ops and the request (default 1)", 1, NULL, NULL},
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "calibration database (default: shipped dumps)", 0, NULL, NULL},
		{"width", LLMSIM_ARG_INT, &cfg.width, "PX", "roofline picture width (default 1280)", 320, NULL, NULL},
		{"height", LLMSIM_ARG_INT, &cfg.height, "PX", "roofline picture height (default 800)", 240, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "GPUs the plans search (default 8; train: tp*pp*dp*cp when given)", 1, NULL, NULL},
		{"tp", LLMSIM_ARG_INT, &cfg.tp, "T", "tensor parallel (default 1)", 1, NULL, &seen[0]},
		{"pp", LLMSIM_ARG_INT, &cfg.pp, "P", "pipeline stages (default 1)", 1, NULL, &seen[1]},
		{"dp", LLMSIM_ARG_INT, &dp, "D", "train: data parallel (default gpus/(tp*pp*cp))", 1, NULL, &seen[2]},
		{"cp", LLMSIM_ARG_INT, &t->cp, "C", "train: context parallel (default 1)", 1, NULL, &seen[3]},
		{"ep", LLMSIM_ARG_INT, &cfg.ep, "E", "expert parallel (default 1)", 1, NULL, &seen[4]},
		{"zero", LLMSIM_ARG_INT, &t->zero, "Z", "train: ZeRO stage 0-3 (default 0)", 0, NULL, &seen[5]},
		{"micro-batch", LLMSIM_ARG_INT, &t->micro_batch, "B", "train: sequences per micro-batch (default 1)", 1, NULL, &seen[6]},
		{"global-batch", LLMSIM_ARG_I64, &gb, "B", "train: sequences per step (default 1024)", 1, NULL, NULL},
		{"recompute", LLMSIM_ARG_CHOICE, &recompute, NULL, "train: activation recomputation (default none)", 0, llmsim_recompute_names, &seen[7]},
		{"schedule", LLMSIM_ARG_CHOICE, &sched, NULL, "train: pipeline schedule (default 1f1b)", 0, llmsim_pp_sched_names, NULL},
		{"chunks", LLMSIM_ARG_INT, &t->chunks, "V", "train: model chunks per stage, interleaved (default 2)", 1, NULL, NULL},
		{"recipe", LLMSIM_ARG_CHOICE, &recipe, NULL, "train: optimizer recipe (default megatron)", 0, llmsim_recipe_names, NULL},
		{"top", LLMSIM_ARG_INT, &cfg.top, "N", "configurations compared, 1-8 (default 5)", 1, NULL, NULL},
		{"prompt", LLMSIM_ARG_I64, &cfg.prompt, "N", "serve: prompt tokens (default 1024, as infer, serve and plan)", 1, NULL, NULL},
		{"output", LLMSIM_ARG_I64, &cfg.output, "N", "serve: output tokens (default 256)", 1, NULL, NULL},
		{"weight-dtype", LLMSIM_ARG_STRING, &wdtype, "DT", "serve: weight type (default dtype)", 0, NULL, NULL},
		{"kv-dtype", LLMSIM_ARG_STRING, &kvdtype, "DT", "KV cache type (default: fp8 for fp8, else the activation type)", 0, NULL, NULL},
		{"attention", LLMSIM_ARG_STRING, &attn, "A", "serve: naive|flash2|flash3|paged|sdpa|cudnn (sdpa, the default torch engine's); train: naive|flash2|flash3 (flash2)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "print the files written and the summary as JSON", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--model M [--gpu G] [--workload train|serve] [options] --out DIR",
				   about, argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				   NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!out)
		return llmsim_args_error(cmd, "--out is required");
	if (cli_context_seq(cmd, setup->model, &cfg.layer.seq, seq_default))
		return 1;
	if (parse_dtype(cmd, dtype, &cfg.layer.dtype) ||
	    parse_dtype(cmd, wdtype ? wdtype : dtype, &cfg.weight_dtype))
		return 2;
	/* The KV cache follows an FP8 model; other narrow types keep BF16. */
	cfg.kv_dtype = cfg.layer.dtype == LLMSIM_DT_FP8 ? LLMSIM_DT_FP8
						       : llmsim_graph_act_dtype(cfg.layer.dtype);
	if (kvdtype && parse_dtype(cmd, kvdtype, &cfg.kv_dtype))
		return 2;
	int train = workload == 0;
	cfg.out_dir = out;
	cfg.force = force;
	cfg.db_path = db;
	cfg.layer.kv_dtype = cfg.kv_dtype;
	cfg.layer.workload = train ? LLMSIM_WORKLOAD_TRAIN : LLMSIM_WORKLOAD_SERVE;
	if (attn) {
		int a = train ? llmsim_attn_impl_parse(attn) : llmsim_attn_choice_parse(attn);
		if (a < 0 || (train && a == LLMSIM_ATTN_FLASH1))
			return llmsim_args_error(cmd, "unknown attention '%s' for %s", attn,
						 train ? "training" : "serving");
		if (train)
			t->attn = (enum llmsim_attn_impl)a;
		else
			cfg.attn = (enum llmsim_attn_choice)a;
	}
	if (train) {
		t->attn = attn ? t->attn : LLMSIM_ATTN_FLASH2;
		t->tp = cfg.tp;
		t->pp = cfg.pp;
		t->ep = cfg.ep;
		t->seq = cfg.layer.seq;
		t->global_batch = gb;
		t->dtype = cfg.layer.dtype;
		t->recipe = (enum llmsim_recipe)recipe;
		t->recompute = (enum llmsim_recompute)recompute;
		t->schedule = (enum llmsim_pp_sched)sched;
		for (int i = 0; i < 8; i++)
			cfg.train_given |= seen[i];
		int inner = t->tp * t->pp * t->cp;
		if (!dp) {
			if (gpus && gpus % inner) {
				fprintf(stderr, "%s: --gpus %d not divisible by tp*pp*cp = %d\n", cmd,
					gpus, inner);
				return 1;
			}
			dp = gpus ? gpus / inner : 1;
		}
		t->dp = dp;
		t->gpus = gpus ? gpus : inner * dp;
		cfg.plan_gpus = cfg.train_given || gpus ? t->gpus : 8;
	} else {
		cfg.plan_gpus = gpus ? gpus : 8;
	}

	struct llmsim_err err = {0};
	static struct llmsim_report_result res;
	static struct llmsim_report_data data; /* large: every op's prediction */
	if (cfg.prompt <= 0)
		cfg.prompt = 1024;
	cfg.layer.attn = cfg.attn;
	cfg.layer.train_attn = t->attn;
	data.cfg = &cfg;
	data.gpu = setup->gpu;
	data.model = setup->model;
	/* what can refuse without computing comes first */
	rc = llmsim_report_check(&cfg, &err) || cli_report_gather(&data, &err) ||
	     llmsim_report_write(&data, &res, &err);
	cli_report_data_release(&data);
	if (rc) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	if (json)
		json_out(&res, setup->model->name, setup->gpu->name, train);
	else
		human_out(&res, train);
	return 0;
}
