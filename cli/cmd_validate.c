/*
 * cmd_validate.c - `llmsim validate`: predict every run of the published
 * training-runs suite and print predicted vs published (iteration time,
 * MFU, model-state memory) with the % error and the mean absolute error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "base/paths.h"
#include "calib/validate/train_runs.h"
#include "args.h"
#include "commands.h"
#include "train_out.h"

static const char about[] =
	"Predict the published training runs of models/runs/train_published.yaml\n"
	"(Megatron-LM 2021, Korthikanti et al. 2022, Llama 3 2024, ZeRO 2020) and\n"
	"compare: iteration time, MFU and model-state memory per GPU, with the\n"
	"% error of each and the mean absolute error per metric. Nothing is fitted\n"
	"to these figures.";

enum { M_STEP = LLMSIM_RUN_STEP_TIME, M_MFU = LLMSIM_RUN_MFU, M_MEM = LLMSIM_RUN_STATE_MEMORY,
       M_COUNT = LLMSIM_RUN_METRIC_COUNT };

struct outcome {
	int ok;
	char error[LLMSIM_ERR_MSG_MAX];
	struct llmsim_run_outcome o;
};

static double err_pct(double pred, double pub)
{
	return 100.0 * (pred - pub) / pub;
}

static int run_one(const struct llmsim_run_entry *e, struct outcome *o)
{
	struct llmsim_err err = {0};
	memset(o, 0, sizeof *o);
	if (llmsim_run_predict(e, &o->o, &err)) {
		snprintf(o->error, sizeof o->error, "%s", err.msg);
		return -1;
	}
	o->ok = 1;
	return 0;
}

static void fmt_metric(char *buf, int k, double v)
{
	if (k == M_STEP)
		llmsim_fmt_time(buf, v);
	else if (k == M_MFU)
		llmsim_fmt_pct(buf, v);
	else
		llmsim_fmt_bytes(buf, v);
}

int cmd_validate(int argc, char **argv, const struct cli_setup *s)
{
	(void)s; /* no model or GPU of its own: its verbs load theirs */
	const char *cmd = "llmsim validate";
	const char *suite = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
		{"suite", LLMSIM_ARG_STRING, &suite, "FILE", "runs file (default <data>/models/runs/train_published.yaml)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "[--suite FILE] [--json]", about, argc - 1, argv + 1, opts,
				   sizeof opts / sizeof opts[0], NULL, 0, NULL);
	if (rc == LLMSIM_ARGS_HELP)
		return 0;
	if (rc)
		return 2;
	char path[1024];
	if (!suite) {
		if (llmsim_data_path(path, sizeof path, "models/runs", "train_published.yaml")) {
			fprintf(stderr, "%s: no llmsim data folder: %s\n", cmd, llmsim_data_dir_hint());
			return 1;
		}
		suite = path;
	}
	struct llmsim_err err = {0};
	struct llmsim_run_entry *runs;
	int n;
	if (llmsim_runs_load(suite, &runs, &n, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	struct outcome *out = calloc(n, sizeof *out);
	if (!out) {
		free(runs);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	int failed = 0;
	double sum[M_COUNT] = {0}, sum_signed[M_COUNT] = {0};
	int cnt[M_COUNT] = {0};
	for (int i = 0; i < n; i++) {
		if (run_one(&runs[i], &out[i])) {
			failed++;
			continue;
		}
		for (int k = 0; k < M_COUNT; k++)
			if (out[i].o.published[k] > 0) {
				double e = err_pct(out[i].o.predicted[k], out[i].o.published[k]);
				sum[k] += fabs(e);
				sum_signed[k] += e;
				cnt[k]++;
			}
	}

	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "suite", suite);
		llmsim_json_arr_begin(&j, "runs");
		for (int i = 0; i < n; i++) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "name", runs[i].name);
			llmsim_json_str(&j, "source", runs[i].source);
			llmsim_json_str(&j, "model", runs[i].has_inline ? runs[i].inline_model.name
								      : runs[i].model);
			llmsim_json_str(&j, "gpu", runs[i].gpu);
			if (!out[i].ok) {
				llmsim_json_str(&j, "error", out[i].error);
				llmsim_json_obj_end(&j);
				continue;
			}
			for (int k = 0; k < M_COUNT; k++) {
				if (out[i].o.published[k] <= 0)
					continue;
				llmsim_json_obj_begin(&j, llmsim_run_metric_name(k));
				llmsim_json_num(&j, k == M_STEP ? "predicted_s" : k == M_MEM ? "predicted_bytes" : "predicted", out[i].o.predicted[k]);
				llmsim_json_num(&j, k == M_STEP ? "published_s" : k == M_MEM ? "published_bytes" : "published", out[i].o.published[k]);
				llmsim_json_num(&j, "error_pct", err_pct(out[i].o.predicted[k], out[i].o.published[k]));
				llmsim_json_obj_end(&j);
			}
			llmsim_json_obj_begin(&j, "train");
			train_json_result(&j, &out[i].o.r);
			llmsim_json_obj_end(&j);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_obj_begin(&j, "mean_abs_error_pct");
		for (int k = 0; k < M_COUNT; k++)
			if (cnt[k])
				llmsim_json_num(&j, llmsim_run_metric_name(k), sum[k] / cnt[k]);
		llmsim_json_obj_end(&j);
		llmsim_json_obj_begin(&j, "mean_error_pct");
		for (int k = 0; k < M_COUNT; k++)
			if (cnt[k])
				llmsim_json_num(&j, llmsim_run_metric_name(k), sum_signed[k] / cnt[k]);
		llmsim_json_obj_end(&j);
		llmsim_json_int(&j, "failed", failed);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		static const char *const head[] = {"<run", "<gpu", "gpus", "<configuration",
						   "<metric", "predicted", "published", "error"};
		struct llmsim_table t;
		llmsim_table_init(&t, 8, head);
		for (int i = 0; i < n; i++) {
			char gpus[16], line[160];
			snprintf(gpus, sizeof gpus, "%d", runs[i].cfg.gpus);
			if (!out[i].ok) {
				llmsim_table_rowf(&t, "%s\t%s\t%s\terror: %s\t\t\t\t", runs[i].name,
						  runs[i].gpu, gpus, out[i].error);
				continue;
			}
			train_cfg_line(line, sizeof line, &runs[i].cfg);
			int first = 1;
			for (int k = 0; k < M_COUNT; k++) {
				if (out[i].o.published[k] <= 0)
					continue;
				char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
				fmt_metric(a, k, out[i].o.predicted[k]);
				fmt_metric(b, k, out[i].o.published[k]);
				llmsim_table_rowf(&t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%+.1f%%",
						  first ? runs[i].name : "", first ? runs[i].gpu : "",
						  first ? gpus : "", first ? line : "", llmsim_run_metric_name(k), a, b,
						  err_pct(out[i].o.predicted[k], out[i].o.published[k]));
				first = 0;
			}
		}
		llmsim_table_print(&t, stdout);
		llmsim_table_release(&t);
		putchar('\n');
		for (int k = 0; k < M_COUNT; k++)
			if (cnt[k])
				printf("%-19s mean absolute error %5.1f%% (mean signed %+.1f%%) over %d runs\n",
				       llmsim_run_metric_name(k), sum[k] / cnt[k], sum_signed[k] / cnt[k], cnt[k]);
		if (failed)
			printf("%d run(s) could not be simulated\n", failed);
	}
	free(out);
	free(runs);
	return failed ? 1 : 0;
}
