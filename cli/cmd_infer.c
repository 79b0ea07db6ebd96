/*
 * cmd_infer.c - `llmsim infer`: one request shape on one replica: TTFT,
 * TPOT, throughput, what bounds prefill and decode, memory per GPU and the
 * largest batch that fits.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "base/paths.h"
#include "sim/infer/infer.h"
#include "calib/validate/steps.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "infer_ops.h"
#include "trace_out.h"

static const char *const attn_names[] = {"naive", "flash2", "flash3", "paged", "sdpa", "cudnn",
					 "sdpa_math", "hf_eager", NULL};
_Static_assert(sizeof attn_names / sizeof attn_names[0] == LLMSIM_AC_COUNT + 1, "attention");
static const char *const rt_names[] = {"graph", "eager", NULL};

static void byte_shares(const struct llmsim_step_cost *c, char *buf, size_t size)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
	double t = c->hbm_bytes > 0 ? c->hbm_bytes : 1;
	snprintf(buf, size, "weights %s + KV %s + activations %s of bytes",
		 llmsim_fmt_pct(a, c->bytes[LLMSIM_BYTES_WEIGHTS] / t),
		 llmsim_fmt_pct(b, c->bytes[LLMSIM_BYTES_KV] / t),
		 llmsim_fmt_pct(d, c->bytes[LLMSIM_BYTES_ACT] / t));
}

static const char *bound_word(enum llmsim_bound b)
{
	switch (b) {
	case LLMSIM_BOUND_TENSOR: case LLMSIM_BOUND_VECTOR: return "compute-bound";
	case LLMSIM_BOUND_HBM: return "HBM-bound";
	case LLMSIM_BOUND_LINK: return "interconnect-bound";
	case LLMSIM_BOUND_LAUNCH: return "launch-bound";
	case LLMSIM_BOUND_LATENCY: return "latency-bound";
	case LLMSIM_BOUND_L2: return "L2-bound";
	case LLMSIM_BOUND_SMEM: return "shared-memory-bound";
	default: return "bound";
	}
}

static void phase_line(const char *name, const struct llmsim_phase *ph)
{
	char sh[160], p1[LLMSIM_FMT_MAX], p2[LLMSIM_FMT_MAX], p3[LLMSIM_FMT_MAX];
	byte_shares(&ph->cost, sh, sizeof sh);
	printf("%s: %s (%s: %s of kernel time), %s, at %s of HBM peak and %s of math peak\n",
	       name, bound_word(ph->bound), llmsim_bound_name(ph->bound),
	       llmsim_fmt_pct(p1, ph->bound_share), sh, llmsim_fmt_pct(p2, ph->hbm_peak_fraction),
	       llmsim_fmt_pct(p3, ph->flops_peak_fraction));
}

/* `infer --torch-steps FILE`: measured PyTorch steps against infer's walk
 * of them (calib/validate/steps.h). */
static int torch_steps(const char *cmd, const char *path, const struct llmsim_model *m,
		       const struct llmsim_gpu *g, int json)
{
	static struct llmsim_steps_file f;
	static struct llmsim_steps_cmp c;
	struct llmsim_err err = {0};
	char p[4096]; /* calib/data/torch_steps.json reads from any folder */
	if (llmsim_steps_load(llmsim_data_input(path, p, sizeof p), &f, &err) ||
	    llmsim_steps_compare(&f, m, g, &c, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "gpu", f.gpu);
		llmsim_json_str(&j, "model", m->name);
		llmsim_json_int(&j, "layers", f.layers);
		llmsim_json_bool(&j, "ends", f.ends);
		llmsim_json_arr_begin(&j, "phases");
		for (int i = 0; i < c.n; i++) {
			const struct llmsim_step_pred *p = &c.pt[i];
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "phase", p->meas.decode ? "decode" : "prefill");
			llmsim_json_int(&j, "batch", p->meas.batch);
			llmsim_json_int(&j, p->meas.decode ? "context" : "prompt", p->meas.tokens);
			llmsim_json_num(&j, "measured_s", p->meas.measured_s);
			llmsim_json_num(&j, "predicted_s", p->predicted_s);
			llmsim_json_num(&j, "kernel_time_s", p->kernel_s);
			llmsim_json_num(&j, "load_duty", p->load_duty);
			llmsim_json_num(&j, "load_rho", p->load_rho);
			llmsim_json_num(&j, "error_pct", p->err_pct);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_num(&j, "median_abs_error_pct", c.median_abs_err_pct);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
		return 0;
	}
	printf("%d layers of %s%s on %s, plain PyTorch eager (calib/torch/llama_steps.py), predicted\n"
	       "as infer --engine torch --runtime eager prices it, against measured\n\n",
	       f.layers, m->name, f.ends ? " with embedding and LM head" : "", f.gpu);
	struct llmsim_table t;
	const char *head[] = {"<phase", "batch", "tokens", "measured", "llmsim", "kernels", "error"};
	llmsim_table_init(&t, 7, head);
	for (int i = 0; i < c.n; i++) {
		const struct llmsim_step_pred *p = &c.pt[i];
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], k[LLMSIM_FMT_MAX];
		llmsim_table_rowf(&t, "%s\t%lld\t%lld\t%s\t%s\t%s\t%+.1f%%",
				  p->meas.decode ? "decode" : "prefill", (long long)p->meas.batch,
				  (long long)p->meas.tokens, llmsim_fmt_time(a, p->meas.measured_s),
				  llmsim_fmt_time(b, p->predicted_s), llmsim_fmt_time(k, p->kernel_s),
				  p->err_pct);
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	printf("\nllmsim: the step's wall time, its launches paced by the host; kernels: their sum.\n"
	       "median |error| %.1f%%. The measured programs of `llmsim calib validate --steps`\n"
	       "(a lean engine in CUDA graphs, HF transformers) are the steps class infer's\n"
	       "expected errors come from.\n",
	       c.median_abs_err_pct);
	return 0;
}

static void phase_json(struct llmsim_json *j, const char *key, const struct llmsim_phase *ph,
		       int steps)
{
	const struct llmsim_step_cost *c = &ph->cost;
	double t = c->hbm_bytes > 0 ? c->hbm_bytes : 1;
	llmsim_json_obj_begin(j, key);
	llmsim_json_num(j, "time_s", ph->time_s);
	llmsim_json_int(j, "steps", steps);
	llmsim_json_str(j, "bound", llmsim_bound_name(ph->bound));
	llmsim_json_num(j, "bound_share", ph->bound_share);
	llmsim_json_num(j, "kernel_time_s", c->gpu_s);
	llmsim_json_num(j, "comm_s", c->comm_s);
	llmsim_json_int(j, "kernels", c->kernels);
	llmsim_json_num(j, "flops", c->flops);
	llmsim_json_num(j, "hbm_bytes", c->hbm_bytes);
	llmsim_json_obj_begin(j, "bytes_share");
	for (int i = 0; i < LLMSIM_BYTES_CAT_COUNT; i++)
		llmsim_json_num(j, llmsim_byte_cat_name(i), c->bytes[i] / t);
	llmsim_json_obj_end(j);
	llmsim_json_obj_begin(j, "time_share");
	double tt = 0;
	for (int i = 0; i < LLMSIM_BOUND_COUNT; i++)
		tt += c->time_by_bound_s[i];
	for (int i = 0; i < LLMSIM_BOUND_COUNT; i++)
		if (c->time_by_bound_s[i] > 0)
			llmsim_json_num(j, llmsim_bound_name(i), c->time_by_bound_s[i] / tt);
	llmsim_json_obj_end(j);
	llmsim_json_num(j, "hbm_peak_fraction", ph->hbm_peak_fraction);
	llmsim_json_num(j, "flops_peak_fraction", ph->flops_peak_fraction);
	llmsim_json_num(j, "sm_clock_hz", c->sm_clock_hz);
	llmsim_json_num(j, "load_duty", c->load_duty);
	llmsim_json_num(j, "load_rho", c->load_rho);
	llmsim_json_obj_end(j);
}

int cmd_infer(int argc, char **argv, const struct cli_setup *setup)
{
	/* --model and --gpu: loaded by main (setup) */
	const char *cmd = "llmsim infer", *torch = NULL, *trace_out = NULL;
	struct cli_place pl = {.gpu = "h200"};
	struct cli_run run = {.engine = LLMSIM_ENGINE_DEFAULT};
	int attn = -1, rt = -1, json = 0, ops = 0;
	int64_t batch = 1, prompt = 1024, output = 256, block = 16, max_tokens = 0;
	double util = llmsim_infer_params_default.mem_utilization;
	const struct llmsim_opt opts[] = {
		CLI_PLACE_OPTS(pl, "GPUs in all; replicas = N / (tp*pp) (default tp*pp)"),
		{"batch", LLMSIM_ARG_I64, &batch, "B", "sequences per replica (default 1)", 0, NULL, NULL},
		{"prompt", LLMSIM_ARG_I64, &prompt, "P", "prompt tokens (default 1024)", 1, NULL, NULL},
		{"output", LLMSIM_ARG_I64, &output, "O", "output tokens (default 256)", 1, NULL, NULL},
		CLI_DTYPE_OPTS(pl),
		CLI_RUN_OPTS(run, "the program: torch (a lean PyTorch engine in CUDA graphs: the default, as in serve, spec and the serving plan), hf (HF transformers, eager) or fused (a serving engine's kernels: vLLM, TensorRT-LLM)"),
		{"attention", LLMSIM_ARG_CHOICE, &attn, NULL, "attention kernels: paged (vLLM), flash2, flash3, naive, sdpa (PyTorch's FlashAttention-2), cudnn (PyTorch's cuDNN), sdpa_math (PyTorch's math backend), hf_eager (HF transformers' eager attention) (default: the engine's)", 0, attn_names, NULL},
		{"block-size", LLMSIM_ARG_I64, &block, "N", "paged KV block, tokens (default 16)", 1, NULL, NULL},
		{"runtime", LLMSIM_ARG_CHOICE, &rt, NULL, "CUDA graph or eager launches (default: graph; hf: eager)", 0, rt_names, NULL},
		{"max-tokens", LLMSIM_ARG_I64, &max_tokens, "T", "per-step token budget for prefill (default 8192)", 1, NULL, NULL},
		{"mem-util", LLMSIM_ARG_DOUBLE, &util, "F", "fraction of HBM the engine uses (default 0.9)", 0.01, NULL, NULL},
		{"ops", LLMSIM_ARG_FLAG, &ops, NULL, "list every op of a prefill step and of a decode step", 0, NULL, NULL},
		{"torch-steps", LLMSIM_ARG_STRING, &torch, "FILE", "compare with measured PyTorch steps (calib/data/torch_steps.json)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
		CLI_TRACE_OUT_OPT(trace_out),
	};
	int r = llmsim_args_parse(cmd, "--model M [--gpu G] [--gpus N --tp T --pp P --ep E] --batch B --prompt P --output O [options]",
				  "Predict one request shape: prefill (TTFT: until every sequence of the batch\n"
				  "has its first token, in steps of at most --max-tokens tokens), decode (TPOT:\n"
				  "mean step over the growing cache), throughput, memory per GPU and the\n"
				  "largest batch that fits. --engine says which program runs the model: its\n"
				  "kernels (torch: a lean PyTorch engine, the default; hf: HF transformers;\n"
				  "fused: a serving engine). Each phase is priced inside the load of its own\n"
				  "steps back to back (--load busy; lone: an idle GPU's burst clock). The\n"
				  "expected errors printed are the measured whole-step class of the engine\n"
				  "and phase (llmsim calib validate --steps). --torch-steps FILE instead\n"
				  "predicts the steps of calib/torch/llama_steps.py's eager run and compares.\n"
				  "--trace-out FILE.json writes the prefill and decode steps as a\n"
				  "Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing).",
				  argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				  NULL, 0, NULL);
	if (r == LLMSIM_ARGS_HELP)
		return 0;
	if (r)
		return 2;
	if (util > 1)
		return llmsim_args_error(cmd, "--mem-util must be at most 1");

	struct llmsim_err err = {0};
	const struct llmsim_model *m = setup->model;
	const struct llmsim_gpu *g = setup->gpu;
	if (torch && trace_out)
		return llmsim_args_error(cmd, "--trace-out writes a simulated run, not --torch-steps");
	if (torch)
		return torch_steps(cmd, torch, m, g, json);
	if (trace_out && cli_trace_check(cmd, trace_out))
		return 1;
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, m, g);
	if ((r = cli_run_apply(cmd, &run, &cfg)))
		return r;
	cfg.weight_dtype = cli_wdt_vals[pl.wdt];
	cfg.kv_dtype = cli_kvdt_vals[pl.kvdt];
	if (attn >= 0)
		cfg.attn = (enum llmsim_attn_choice)attn;
	cfg.block_size = block;
	if (rt >= 0)
		cfg.runtime = (enum llmsim_runtime)rt;
	cfg.max_step_tokens = max_tokens;
	cfg.params.mem_utilization = util;
	int replicas = 1;
	struct llmsim_infer_result res;
	struct llmsim_infer_req req = {.batch = batch, .prompt = prompt, .output = output};
	struct llmsim_timeline tl = {.max_events = CLI_TRACE_MAX_EVENTS};
	cfg.timeline = trace_out ? &tl : NULL;
	if (llmsim_infer_layout(&cfg, pl.gpus, pl.tp, pl.pp, pl.ep, &replicas, &err) ||
	    llmsim_infer_run(&cfg, &req, &res, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		llmsim_tl_release(&tl);
		return 1;
	}
	cfg.timeline = NULL;
	r = trace_out ? cli_trace_write(cmd, trace_out, &tl) : 0;
	llmsim_tl_release(&tl);
	if (r)
		return r;
	int ngpus = cli_place_gpus(&cfg, replicas);
	double total_tps = res.tokens_per_s * replicas;

	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		cli_place_json(&j, &cfg, replicas);
		llmsim_json_str(&j, "weight_dtype", llmsim_dtype_name(cfg.weight_dtype));
		llmsim_json_str(&j, "kv_dtype", llmsim_dtype_name(cfg.kv_dtype));
		llmsim_json_str(&j, "attention", llmsim_attn_choice_name(cfg.attn));
		llmsim_json_int(&j, "block_size", cfg.block_size);
		cli_run_json(&j, &cfg);
		llmsim_json_int(&j, "batch", batch);
		llmsim_json_int(&j, "prompt", prompt);
		llmsim_json_int(&j, "output", output);
		llmsim_json_num(&j, "ttft_s", res.ttft_s);
		llmsim_json_num(&j, "tpot_s", res.tpot_s);
		llmsim_json_num(&j, "e2e_s", res.e2e_s);
		llmsim_json_num(&j, "tokens_per_s", total_tps);
		llmsim_json_num(&j, "load_duty", res.load_duty);
		llmsim_json_num(&j, "tokens_per_s_per_replica", res.tokens_per_s);
		llmsim_json_num(&j, "tokens_per_s_per_gpu", total_tps / ngpus);
		llmsim_json_num(&j, "kv_bytes_per_token", res.kv_bytes_per_token);
		llmsim_json_num(&j, "kv_bytes_per_token_per_gpu", res.mem.kv_bytes_per_token);
		llmsim_json_num(&j, "kv_bytes", res.kv_bytes);
		llmsim_json_num(&j, "weight_bytes_per_gpu", res.mem.weight_bytes);
		llmsim_json_num(&j, "activation_bytes_per_gpu", res.mem.activation_bytes);
		llmsim_json_num(&j, "reserve_bytes_per_gpu", res.mem.reserve_bytes);
		llmsim_json_num(&j, "kv_capacity_bytes_per_gpu", res.mem.kv_capacity_bytes);
		llmsim_json_num(&j, "mem_utilization", cfg.params.mem_utilization);
		llmsim_json_int(&j, "max_batch", res.max_batch);
		llmsim_json_str(&j, "tpot_method", res.decode_points < 9 || output - 1 <= 9
					  ? "every decode step" : "composite Simpson over 9 context lengths");
		phase_json(&j, "prefill", &res.prefill, res.prefill_steps);
		phase_json(&j, "decode", &res.decode, output > 1 ? (int)(output - 1) : 0);
		llmsim_json_obj_begin(&j, "expected_error");
		cli_step_err_json(&j, "ttft", cfg.gpu, cfg.lower.engine, cfg.runtime, "prefill");
		cli_step_err_json(&j, "tpot", cfg.gpu, cfg.lower.engine, cfg.runtime, "decode");
		llmsim_json_obj_end(&j);
		if (ops && cli_infer_ops(&cfg, &req, &res, &j, &err)) {
			fprintf(stderr, "%s: %s\n", cmd, err.msg);
			return 1;
		}
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
		return 0;
	}

	char b1[LLMSIM_FMT_MAX], b2[LLMSIM_FMT_MAX];
	cli_place_print(&cfg, replicas);
	printf(", %s weights, %s KV, %s attention", llmsim_dtype_name(cfg.weight_dtype),
	       llmsim_dtype_name(cfg.kv_dtype), llmsim_attn_choice_name(cfg.attn));
	if (cfg.attn == LLMSIM_AC_PAGED)
		printf(" (block %lld)", (long long)cfg.block_size);
	printf("\n");
	cli_run_print(&cfg, "each phase inside the load of its own steps back to back");
	printf("batch %lld, prompt %lld, output %lld tokens\n\n", (long long)batch,
	       (long long)prompt, (long long)output);
	struct llmsim_table t;
	const char *head[] = {"<metric", "value", "<note"};
	llmsim_table_init(&t, 3, head);
	char note[96];
	snprintf(note, sizeof note, "%d prefill step%s", res.prefill_steps,
		 res.prefill_steps == 1 ? "" : "s");
	char eb[256];
	llmsim_table_rowf(&t, "TTFT\t%s\t%s", llmsim_fmt_time(b1, res.ttft_s), note);
	cli_step_err(cfg.gpu, cfg.lower.engine, cfg.runtime, "prefill", eb, sizeof eb);
	llmsim_table_rowf(&t, "  expected error\t\t%s", eb);
	snprintf(note, sizeof note, output - 1 <= 9 ? "mean of all %lld decode steps"
						    : "mean of %lld steps, Simpson over 9 contexts",
		 (long long)(output - 1));
	llmsim_table_rowf(&t, "TPOT\t%s\t%s", llmsim_fmt_time(b1, res.tpot_s), note);
	if (output > 1) {
		cli_step_err(cfg.gpu, cfg.lower.engine, cfg.runtime, "decode", eb, sizeof eb);
		llmsim_table_rowf(&t, "  expected error\t\t%s", eb);
	}
	llmsim_table_rowf(&t, "end-to-end\t%s\t", llmsim_fmt_time(b1, res.e2e_s));
	snprintf(note, sizeof note, "%.1f tok/s per GPU", total_tps / ngpus);
	llmsim_table_rowf(&t, "output tokens/s\t%.1f\t%s", total_tps, note);
	for (int p = 0; p < (output > 1 ? 2 : 1); p++) {
		const struct llmsim_step_cost *c = p ? &res.decode.cost : &res.prefill.cost;
		if (c->load_duty > 0)
			snprintf(note, sizeof note, "%s: busy %s, tensor intensity %.2f (power limit)",
				 p ? "decode" : "prefill", llmsim_fmt_pct(b2, c->load_duty),
				 c->load_rho);
		else
			snprintf(note, sizeof note, "%s: its burst clock", p ? "decode" : "prefill");
		llmsim_table_rowf(&t, "SM clock\t%s\t%s", llmsim_fmt_hz(b1, c->sm_clock_hz), note);
	}
	llmsim_table_rowf(&t, "weights per GPU\t%s\t%s", llmsim_fmt_bytes(b1, res.mem.weight_bytes),
			  llmsim_dtype_name(cfg.weight_dtype));
	snprintf(note, sizeof note, "%s per token per GPU",
		 llmsim_fmt_bytes(b2, res.mem.kv_bytes_per_token));
	llmsim_table_rowf(&t, "KV per token\t%s\t%s", llmsim_fmt_bytes(b1, res.kv_bytes_per_token), note);
	llmsim_table_rowf(&t, "KV of the batch\t%s\tper GPU", llmsim_fmt_bytes(b1, res.kv_bytes));
	llmsim_table_rowf(&t, "activations\t%s\tper GPU, step of %lld tokens",
			  llmsim_fmt_bytes(b1, res.mem.activation_bytes),
			  (long long)(max_tokens ? max_tokens : cfg.params.max_step_tokens));
	snprintf(note, sizeof note, "HBM x (1 - %.2f) left unused", cfg.params.mem_utilization);
	llmsim_table_rowf(&t, "reserve\t%s\t%s", llmsim_fmt_bytes(b1, res.mem.reserve_bytes), note);
	llmsim_table_rowf(&t, "free for KV\t%s\tper GPU", llmsim_fmt_bytes(b1, res.mem.kv_capacity_bytes));
	llmsim_table_rowf(&t, "max batch\t%lld\tof this shape, per replica", (long long)res.max_batch);
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	putchar('\n');
	phase_line("prefill", &res.prefill);
	if (output > 1)
		phase_line("decode", &res.decode);
	if (ops && cli_infer_ops(&cfg, &req, &res, NULL, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	return 0;
}
