/*
 * cmd_spec.c - `llmsim spec`: speculative decoding with a draft model,
 * Medusa heads or multi-token-prediction modules: expected tokens per
 * target step, the draft's and the verify step's cost from the GPU model,
 * the speedup over plain decoding and the resulting TPOT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "sim/infer/spec.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "serve_eng.h"

static const char *const wdt_names[] = {"bf16", "fp8", "int4", "fp4", NULL};
static const enum llmsim_dtype wdt_vals[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8, LLMSIM_DT_INT4,
					     LLMSIM_DT_FP4};
static const char *const kvdt_names[] = {"bf16", "fp8", NULL};
static const enum llmsim_dtype kvdt_vals[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8};
static const char *const kind_names[] = {"draft", "medusa", "mtp"};

int cmd_spec(int argc, char **argv, const struct cli_setup *setup)
{
	/* --model and --gpu: loaded by main (setup) */
	const char *cmd = "llmsim spec", *model_name = NULL, *draft_name = NULL, *gpu_name = "h200";
	const char *alphas = NULL;
	int gpus = 0, tp = 0, gamma = 4, heads = 0, tree = 0, mtp = 0, wdt = 0, kvdt = 0, json = 0;
	int seen_alpha = 0, seen_gamma = 0;
	int64_t batch = 1, context = 1024;
	double alpha = 0;
	struct cli_run run = {.engine = LLMSIM_ENGINE_DEFAULT};
	const struct llmsim_opt opts[] = {
		{"model", LLMSIM_ARG_STRING, &model_name, "TARGET", "target model (required)", 0, NULL, NULL},
		{"draft", LLMSIM_ARG_STRING, &draft_name, "MODEL", "draft model (draft-model speculation)", 0, NULL, NULL},
		{"gamma", LLMSIM_ARG_INT, &gamma, "K", "draft tokens per step (default 4)", 1, NULL, &seen_gamma},
		{"alpha", LLMSIM_ARG_DOUBLE, &alpha, "A", "acceptance rate of every position, in [0, 1]", 0, NULL, &seen_alpha},
		{"alphas", LLMSIM_ARG_STRING, &alphas, "A1,A2,..", "acceptance per position (conditional on the previous)", 0, NULL, NULL},
		{"medusa-heads", LLMSIM_ARG_INT, &heads, "K", "Medusa heads instead of a draft model", 1, NULL, NULL},
		{"tree", LLMSIM_ARG_INT, &tree, "N", "Medusa candidate tokens verified per step (default heads+1)", 1, NULL, NULL},
		{"mtp", LLMSIM_ARG_INT, &mtp, "D", "multi-token-prediction depth (DeepSeek-V3 MTP modules)", 1, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU name or YAML path (default h200)", 0, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "all GPUs, replicas of --tp GPUs each (default: one replica)", 1, NULL, NULL},
		{"tp", LLMSIM_ARG_INT, &tp, "T", "tensor-parallel GPUs of one target replica (default --gpus, else 1)", 1, NULL, NULL},
		{"batch", LLMSIM_ARG_I64, &batch, "B", "sequences decoding together (default 1)", 0, NULL, NULL},
		{"context", LLMSIM_ARG_I64, &context, "L", "tokens already in the cache (default 1024)", 0, NULL, NULL},
		{"weight-dtype", LLMSIM_ARG_CHOICE, &wdt, NULL, "weights of both models (default bf16)", 0, wdt_names, NULL},
		{"kv-dtype", LLMSIM_ARG_CHOICE, &kvdt, NULL, "KV cache (default bf16)", 0, kvdt_names, NULL},
		CLI_RUN_OPTS(run, "the kernels of both models: torch (a lean PyTorch engine in CUDA graphs: the default, as in infer, serve and the serving plan), fused (a serving engine's fused kernels) or hf (HF transformers)"),
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	};
	int r = llmsim_args_parse(cmd, "--model TARGET (--draft MODEL --gamma K | --medusa-heads K [--tree N] | --mtp D) (--alpha A | --alphas A1,..) [options]",
				  "Speculative decoding (Leviathan et al. 2023): expected tokens per target\n"
				  "step, draft and verify cost from the GPU model, speedup and TPOT.",
				  argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				  NULL, 0, NULL);
	if (r == LLMSIM_ARGS_HELP)
		return 0;
	if (r)
		return 2;
	if (!!draft_name + !!heads + !!mtp != 1)
		return llmsim_args_error(cmd, "give exactly one of --draft, --medusa-heads and --mtp");
	if ((heads || mtp) && seen_gamma)
		return llmsim_args_error(cmd, "--gamma is for a draft model; Medusa and MTP take their depth from --medusa-heads / --mtp");
	if (!seen_alpha && !alphas)
		return llmsim_args_error(cmd, "give --alpha or --alphas (acceptance rates)");
	if (seen_alpha && alphas)
		return llmsim_args_error(cmd, "--alpha and --alphas exclude each other");
	if (tree && !heads)
		return llmsim_args_error(cmd, "--tree goes with --medusa-heads");
	/* --gpus is all GPUs, as in every command: replicas of tp GPUs each;
	 * speculation is priced per replica */
	int ntp = tp ? tp : gpus ? gpus : 1, ngpus = gpus ? gpus : ntp;
	if (ngpus % ntp) {
		fprintf(stderr, "%s: --gpus %d is not a multiple of --tp %d\n", cmd, ngpus, ntp);
		return 1;
	}

	struct llmsim_err err = {0};
	static struct llmsim_model m, dm;
	static struct llmsim_gpu g;
	m = *setup->model;
	g = *setup->gpu;
	struct llmsim_spec_cfg cfg;
	memset(&cfg, 0, sizeof cfg);
	if (alphas) {
		if (cli_parse_alphas(alphas, cfg.alpha, &cfg.nalpha))
			return llmsim_args_error(cmd, "--alphas: expected numbers separated by commas, got '%s'", alphas);
	} else {
		cfg.alpha[0] = alpha;
		cfg.nalpha = 1;
	}
	cfg.kind = heads ? LLMSIM_SPEC_MEDUSA : mtp ? LLMSIM_SPEC_MTP : LLMSIM_SPEC_DRAFT;
	cfg.gamma = heads ? heads : mtp ? mtp : gamma;
	cfg.tree = tree ? tree : cfg.gamma + 1;
	cfg.batch = batch;
	cfg.context = context;
	if (draft_name && llmsim_model_load(draft_name, &dm, &err))
		goto fail;
	llmsim_infer_cfg_init(&cfg.target, &m, &g);
	if ((r = cli_run_apply(cmd, &run, &cfg.target)))
		return r;
	cfg.target.weight_dtype = wdt_vals[wdt];
	cfg.target.kv_dtype = kvdt_vals[kvdt];
	if (llmsim_infer_layout(&cfg.target, ntp, ntp, 1, 0, NULL, &err))
		goto fail;
	if (draft_name) {
		if (dm.vocab != m.vocab)
			fprintf(stderr, "%s: warning: draft vocabulary %d differs from the target's %d\n",
				cmd, dm.vocab, m.vocab);
		llmsim_infer_cfg_init(&cfg.draft, &dm, &g);
		cli_run_apply(cmd, &run, &cfg.draft); /* parsed above: cannot fail */
		cfg.draft.weight_dtype = cfg.target.weight_dtype;
		cfg.draft.kv_dtype = cfg.target.kv_dtype;
		/* the draft runs on the target's GPUs: same tp if its heads allow */
		if (llmsim_infer_layout(&cfg.draft, ntp, ntp, 1, 0, NULL, NULL) &&
		    llmsim_infer_layout(&cfg.draft, 1, 1, 1, 0, NULL, &err))
			goto fail;
	}
	struct llmsim_spec_result res;
	if (llmsim_spec_run(&cfg, &res, &err))
		goto fail;
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "model", m.name);
		llmsim_json_str(&j, "method", kind_names[cfg.kind]);
		if (draft_name)
			llmsim_json_str(&j, "draft", dm.name);
		llmsim_json_str(&j, "gpu", g.name);
		llmsim_json_int(&j, "gpus", ngpus);
		llmsim_json_int(&j, "tp", cfg.target.tp);
		llmsim_json_int(&j, "replicas", ngpus / ntp);
		cli_run_json(&j, &cfg.target);
		llmsim_json_int(&j, "gamma", cfg.gamma);
		llmsim_json_arr_begin(&j, "alphas");
		for (int i = 0; i < cfg.gamma; i++)
			llmsim_json_num(&j, NULL, cfg.alpha[cfg.nalpha == 1 ? 0 : i]);
		llmsim_json_arr_end(&j);
		llmsim_json_int(&j, "batch", batch);
		llmsim_json_int(&j, "context", context);
		llmsim_json_int(&j, "verify_tokens", res.verify_tokens);
		llmsim_json_num(&j, "expected_tokens_per_step", res.expected_tokens_per_step);
		llmsim_json_num(&j, "target_step_s", res.target_step_s);
		llmsim_json_num(&j, "verify_s", res.verify_s);
		llmsim_json_num(&j, "draft_s", res.draft_s);
		llmsim_json_num(&j, "step_s", res.step_s);
		llmsim_json_num(&j, "tpot_s", res.tpot_s);
		llmsim_json_num(&j, "baseline_tpot_s", res.target_step_s);
		llmsim_json_num(&j, "speedup", res.speedup);
		llmsim_json_obj_begin(&j, "memory_bytes_per_gpu");
		llmsim_json_num(&j, "weights", res.mem.weight_bytes);
		llmsim_json_num(&j, "speculation_weights", res.extra_weight_bytes);
		llmsim_json_num(&j, "activations", res.mem.activation_bytes);
		llmsim_json_num(&j, "kv", res.kv_bytes);
		llmsim_json_num(&j, "kv_capacity", res.mem.kv_capacity_bytes);
		llmsim_json_obj_end(&j);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
		return 0;
	}
	char b1[LLMSIM_FMT_MAX];
	char what[96];
	if (cfg.kind == LLMSIM_SPEC_DRAFT)
		snprintf(what, sizeof what, "draft %s, gamma %d", dm.name, cfg.gamma);
	else if (cfg.kind == LLMSIM_SPEC_MEDUSA)
		snprintf(what, sizeof what, "%d heads, tree of %d", cfg.gamma, cfg.tree);
	else
		snprintf(what, sizeof what, "depth %d", cfg.gamma);
	printf("%s on %d x %s (tp %d; %d replica%s), batch %lld, context %lld\n"
	       "%s speculation (%s)\n", m.name, ngpus, g.name, cfg.target.tp, ngpus / ntp,
	       ngpus / ntp > 1 ? "s" : "", (long long)batch, (long long)context,
	       kind_names[cfg.kind], what);
	cli_run_print(&cfg.target, "the decode steps back to back");
	putchar('\n');
	struct llmsim_table t;
	const char *head[] = {"<quantity", "value", "<note"};
	llmsim_table_init(&t, 3, head);
	char note[96];
	llmsim_table_rowf(&t, "expected tokens per step\t%.4f\tgamma %d", res.expected_tokens_per_step, cfg.gamma);
	llmsim_table_rowf(&t, "plain decode step\t%s\ttarget, 1 token", llmsim_fmt_time(b1, res.target_step_s));
	snprintf(note, sizeof note, "target, %lld tokens per sequence (%.2fx plain)",
		 (long long)res.verify_tokens, res.verify_s / res.target_step_s);
	llmsim_table_rowf(&t, "verify step\t%s\t%s", llmsim_fmt_time(b1, res.verify_s), note);
	llmsim_table_rowf(&t, "drafting\t%s\t%s", llmsim_fmt_time(b1, res.draft_s),
			  cfg.kind == LLMSIM_SPEC_DRAFT ? "gamma draft decode steps"
			  : cfg.kind == LLMSIM_SPEC_MEDUSA ? "Medusa heads" : "MTP modules");
	llmsim_table_rowf(&t, "TPOT\t%s\tstep / expected tokens", llmsim_fmt_time(b1, res.tpot_s));
	llmsim_table_rowf(&t, "speedup\t%.2fx\tover plain decoding", res.speedup);
	char b2[LLMSIM_FMT_MAX], b3[LLMSIM_FMT_MAX];
	snprintf(note, sizeof note, "weights %s + %s %s + KV %s",
		 llmsim_fmt_bytes(b1, res.mem.weight_bytes), llmsim_fmt_bytes(b2, res.extra_weight_bytes),
		 cfg.kind == LLMSIM_SPEC_DRAFT ? "draft" : cfg.kind == LLMSIM_SPEC_MEDUSA ? "heads" : "MTP",
		 llmsim_fmt_bytes(b3, res.kv_bytes));
	llmsim_table_rowf(&t, "memory per GPU\t%s\t%s",
			  llmsim_fmt_bytes(b1, res.mem.weight_bytes + res.extra_weight_bytes +
						       res.mem.activation_bytes + res.kv_bytes),
			  note);
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	return 0;
fail:
	fprintf(stderr, "%s: %s\n", cmd, err.msg);
	return 1;
}
