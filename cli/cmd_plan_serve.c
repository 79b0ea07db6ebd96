/*
 * cmd_plan_serve.c - `llmsim plan --workload serve`: rank every way to
 * serve a model on N GPUs (replicas x tp x pp x ep, weight and KV types,
 * batch) by throughput under TTFT/TPOT targets. `llmsim plan` hands over
 * its whole argv when it sees --workload serve.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fmt.h"
#include "base/json.h"
#include "sim/infer/plan_serve.h"
#include "args.h"
#include "commands.h"

static int parse_dtypes(const char *s, unsigned *mask)
{
	char buf[128];
	*mask = 0;
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int d = llmsim_dtype_parse(t);
		if (d < 0)
			return -1;
		*mask |= 1u << d;
	}
	return *mask ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cmd_plan_serve(int argc, char **argv, const struct cli_setup *setup)
{
	/* --model and --gpu: loaded by main (setup) */
	const char *cmd = "llmsim plan", *model_name = NULL, *gpu_name = "h200", *workload = NULL;
	const char *wdts = NULL, *kvdts = NULL;
	int gpus = 0, top = 10, json = 0;
	int64_t prompt = 1024, output = 256, max_batch = 1024;
	double ttft = 0, tpot = 0;
	const struct llmsim_opt opts[] = {
		{"workload", LLMSIM_ARG_STRING, &workload, "serve", "serve (this search)", 0, NULL, NULL},
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "model name, alias or YAML path (required)", 0, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "GPUs to split into replicas (required)", 1, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU name or YAML path (default h200)", 0, NULL, NULL},
		{"prompt", LLMSIM_ARG_I64, &prompt, "P", "prompt tokens (default 1024)", 1, NULL, NULL},
		{"output", LLMSIM_ARG_I64, &output, "O", "output tokens (default 256)", 1, NULL, NULL},
		{"ttft-slo", LLMSIM_ARG_DOUBLE, &ttft, "S", "time-to-first-token target, seconds (default none)", 0, NULL, NULL},
		{"tpot-slo", LLMSIM_ARG_DOUBLE, &tpot, "S", "time-per-output-token target, seconds (default none)", 0, NULL, NULL},
		{"weight-dtypes", LLMSIM_ARG_STRING, &wdts, "LIST", "weight types to try (default bf16,fp8,int4[,fp4])", 0, NULL, NULL},
		{"kv-dtypes", LLMSIM_ARG_STRING, &kvdts, "LIST", "KV types to try (default bf16,fp8)", 0, NULL, NULL},
		{"max-batch", LLMSIM_ARG_I64, &max_batch, "B", "largest batch per replica tried (default 1024)", 1, NULL, NULL},
		{"top", LLMSIM_ARG_INT, &top, "K", "configurations shown (default 10)", 1, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	};
	int r = llmsim_args_parse(cmd, "--model M --gpus N --workload serve [--gpu G] [--prompt P --output O] [--ttft-slo S --tpot-slo S] [--top K] [--json]",
				  "Search replicas x tp x pp x ep, weight and KV types and batch sizes\n"
				  "for serving; rank by total output tokens/s under the latency targets.",
				  argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				  NULL, 0, NULL);
	if (r == LLMSIM_ARGS_HELP)
		return 0;
	if (r)
		return 2;
	if (workload && strcmp(workload, "serve"))
		return llmsim_args_error(cmd, "--workload '%s' is not handled here (serve)", workload);
	if (!gpus)
		return llmsim_args_error(cmd, "--gpus is required (try '%s --workload serve --help')", cmd);
	struct llmsim_plan_serve_cfg pc = {.gpus = gpus, .prompt = prompt, .output = output,
					   .ttft_slo_s = ttft, .tpot_slo_s = tpot,
					   .max_batch = max_batch};
	if (wdts && parse_dtypes(wdts, &pc.weight_dtypes))
		return llmsim_args_error(cmd, "--weight-dtypes: expected names like bf16,fp8,int4, got '%s'", wdts);
	if (kvdts && parse_dtypes(kvdts, &pc.kv_dtypes))
		return llmsim_args_error(cmd, "--kv-dtypes: expected names like bf16,fp8, got '%s'", kvdts);

	struct llmsim_err err = {0};
	pc.model = setup->model;
	pc.gpu = setup->gpu;
	double t0 = now_s();
	struct llmsim_plan_serve_row *rows;
	int64_t n, evaluated, feasible;
	if (llmsim_plan_serve(&pc, &rows, &n, &evaluated, &feasible, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	double elapsed = now_s() - t0;
	int64_t shown = feasible < top ? feasible : top;
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "workload", "serve");
		llmsim_json_str(&j, "model", setup->model->name);
		llmsim_json_str(&j, "gpu", setup->gpu->name);
		llmsim_json_int(&j, "gpus", gpus);
		llmsim_json_int(&j, "prompt", prompt);
		llmsim_json_int(&j, "output", output);
		if (ttft > 0) llmsim_json_num(&j, "ttft_slo_s", ttft); else llmsim_json_null(&j, "ttft_slo_s");
		if (tpot > 0) llmsim_json_num(&j, "tpot_slo_s", tpot); else llmsim_json_null(&j, "tpot_slo_s");
		llmsim_json_int(&j, "configs_evaluated", evaluated);
		llmsim_json_int(&j, "configs_feasible", feasible);
		llmsim_json_arr_begin(&j, "results");
		for (int64_t i = 0; i < shown; i++) {
			const struct llmsim_plan_serve_row *x = &rows[i];
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_int(&j, "rank", i + 1);
			llmsim_json_int(&j, "replicas", x->replicas);
			llmsim_json_int(&j, "tp", x->tp);
			llmsim_json_int(&j, "pp", x->pp);
			llmsim_json_int(&j, "ep", x->ep);
			llmsim_json_str(&j, "weight_dtype", llmsim_dtype_name(x->weight_dtype));
			llmsim_json_str(&j, "kv_dtype", llmsim_dtype_name(x->kv_dtype));
			llmsim_json_int(&j, "batch", x->batch);
			llmsim_json_int(&j, "max_batch", x->max_batch);
			llmsim_json_num(&j, "ttft_s", x->ttft_s);
			llmsim_json_num(&j, "tpot_s", x->tpot_s);
			llmsim_json_num(&j, "e2e_s", x->e2e_s);
			llmsim_json_num(&j, "tokens_per_s", x->tokens_per_s);
			llmsim_json_num(&j, "tokens_per_s_per_gpu", x->tokens_per_s_per_gpu);
			llmsim_json_num(&j, "weight_bytes_per_gpu", x->weight_bytes_per_gpu);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_num(&j, "elapsed_s", elapsed);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		printf("%s on %d x %s, prompt %lld, output %lld: %lld configurations, %lld meet the targets (%.2f s)\n\n",
		       setup->model->name, gpus, setup->gpu->name, (long long)prompt, (long long)output,
		       (long long)evaluated, (long long)feasible, elapsed);
		if (!shown) {
			printf("no configuration meets the targets\n");
		} else {
			struct llmsim_table t;
			const char *head[] = {"rank", "replicas", "tp", "pp", "ep", "<weights", "<kv",
					      "batch", "TTFT", "TPOT", "tok/s", "tok/s/GPU"};
			llmsim_table_init(&t, 12, head);
			for (int64_t i = 0; i < shown; i++) {
				const struct llmsim_plan_serve_row *x = &rows[i];
				char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
				llmsim_table_rowf(&t, "%lld\t%d\t%d\t%d\t%d\t%s\t%s\t%lld\t%s\t%s\t%.0f\t%.0f",
						  (long long)(i + 1), x->replicas, x->tp, x->pp, x->ep,
						  llmsim_dtype_name(x->weight_dtype),
						  llmsim_dtype_name(x->kv_dtype), (long long)x->batch,
						  llmsim_fmt_time(a, x->ttft_s), llmsim_fmt_time(b, x->tpot_s),
						  x->tokens_per_s, x->tokens_per_s_per_gpu);
			}
			llmsim_table_print(&t, stdout);
			llmsim_table_release(&t);
		}
	}
	free(rows);
	return 0;
}
