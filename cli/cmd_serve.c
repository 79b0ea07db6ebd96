/*
 * cmd_serve.c - `llmsim serve`: a discrete-event simulation of a vLLM-like
 * engine serving many requests with continuous batching, reporting
 * throughput, latency percentiles, KV waste and preemptions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "base/paths.h"
#include "calib/validate/serve_runs.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "json_error.h"
#include "serve_eng.h"
#include "trace_out.h"

static const char *const alloc_names[] = {"paged", "contiguous", NULL};
static const char *const sched_names[] = {"vllm", "no-evict", NULL};

/* `serve --published`: predict every entry of the published suite. */
static int published(const char *cmd, const char *suite, int json)
{
	char def[1024];
	struct llmsim_err err = {0};
	if (!suite) {
		if (llmsim_data_path(def, sizeof def, "models/runs", "serve_published.yaml")) {
			fprintf(stderr, "%s: no llmsim data folder: %s\n", cmd, llmsim_data_dir_hint());
			return 1;
		}
		suite = def;
	}
	struct llmsim_serve_pub *v;
	int n;
	if (llmsim_serve_pubs_load(suite, &v, &n, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	double *pred = calloc((size_t)n, sizeof *pred);
	if (!pred) {
		free(v);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (llmsim_serve_pub_predict(&v[i], &pred[i], &err)) {
			fprintf(stderr, "%s: %s: %s\n", cmd, v[i].name, err.msg);
			free(v);
			free(pred);
			return 1;
		}
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "suite", suite);
		llmsim_json_arr_begin(&j, "runs");
		for (int i = 0; i < n; i++) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "name", v[i].name);
			llmsim_json_str(&j, "source", v[i].source);
			llmsim_json_str(&j, "metric", llmsim_pub_metric_name(v[i].metric));
			llmsim_json_num(&j, "published", v[i].published);
			llmsim_json_num(&j, "predicted", pred[i]);
			llmsim_json_num(&j, "error_pct", 100 * (pred[i] - v[i].published) / v[i].published);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		struct llmsim_table t;
		const char *head[] = {"<run", "<metric", "published", "llmsim", "error"};
		llmsim_table_init(&t, 5, head);
		for (int i = 0; i < n; i++) {
			const char *f = v[i].metric == LLMSIM_PUB_KV_WASTE ? "%s\t%s\t%.3f\t%.3f\t%+.1f%%"
									     : "%s\t%s\t%.0f\t%.0f\t%+.1f%%";
			llmsim_table_rowf(&t, f, v[i].name, llmsim_pub_metric_name(v[i].metric),
					  v[i].published, pred[i],
					  100 * (pred[i] - v[i].published) / v[i].published);
		}
		llmsim_table_print(&t, stdout);
		llmsim_table_release(&t);
	}
	free(v);
	free(pred);
	return 0;
}

static void pcts_row(struct llmsim_table *t, const char *name, const struct llmsim_pcts *p)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
	llmsim_table_rowf(t, "%s\t%s\t%s\t%s\t%s", name, llmsim_fmt_time(a, p->mean),
			  llmsim_fmt_time(b, p->p50), llmsim_fmt_time(c, p->p90),
			  llmsim_fmt_time(d, p->p99));
}

/* A run whose load slows the clock under the power limit runs again at
 * that clock (llmsim_serve_run): its count starts over, and says why. */
struct serve_pass {
	int64_t last;
	int again;
};

static void serve_progress(void *ctx, int64_t done, int64_t total)
{
	struct serve_pass *p = ctx;
	if (done < p->last)
		p->again = 1;
	p->last = done;
	cli_progress("llmsim serve: %s%lld of %lld requests done",
		     p->again ? "again at the clock its load sets: " : "", (long long)done,
		     (long long)total);
}

int cmd_serve(int argc, char **argv, const struct cli_setup *setup)
{
	/* --gpu and --model (optional with --published): loaded by main (setup) */
	const char *cmd = "llmsim serve";
	const char *pdist = NULL, *odist = NULL, *lengths = NULL, *suite = NULL, *trace_out = NULL;
	int rc = 1;
	struct cli_place pl = {.gpu = "h200"};
	struct cli_run run = {.engine = LLMSIM_ENGINE_DEFAULT};
	int alloc = 0, chunked = 0;
	int sched = 0, offline = 0, json = 0, pub = 0, seen_req = 0, seen_prompt = 0, seen_output = 0;
	int seen_batch = 0, seen_tokens = 0, seen_sched = 0;
	struct cli_serve_eng eng = {0};
	int64_t requests = 1000, prompt = 1024, output = 256, block = 16, max_batch = 256;
	int64_t max_tokens = 8192, seed = 1, reserve = 0;
	double rate = 0, util = llmsim_infer_params_default.mem_utilization;
	const struct llmsim_opt opts[] = {
		CLI_PLACE_OPTS(pl, "GPUs in all; replicas = N / (tp*pp) share the requests"),
		{"requests", LLMSIM_ARG_I64, &requests, "N", "requests to simulate (default 1000, or the file's)", 1, NULL, &seen_req},
		{"rate", LLMSIM_ARG_DOUBLE, &rate, "R", "Poisson arrivals per second over all replicas", 1e-9, NULL, NULL},
		{"offline", LLMSIM_ARG_FLAG, &offline, NULL, "all requests arrive at t=0 (the default without --rate)", 0, NULL, NULL},
		{"prompt", LLMSIM_ARG_I64, &prompt, "P", "prompt tokens (default 1024)", 1, NULL, &seen_prompt},
		{"output", LLMSIM_ARG_I64, &output, "O", "output tokens (default 256)", 1, NULL, &seen_output},
		{"prompt-dist", LLMSIM_ARG_STRING, &pdist, "SPEC", "uniform:LO:HI, normal:MEAN:SD or lognormal:MU:SIGMA", 0, NULL, NULL},
		{"output-dist", LLMSIM_ARG_STRING, &odist, "SPEC", "as --prompt-dist, for output lengths", 0, NULL, NULL},
		{"lengths", LLMSIM_ARG_STRING, &lengths, "FILE", "lines of 'prompt output' tokens (cycled)", 0, NULL, NULL},
		CLI_DTYPE_OPTS(pl),
		CLI_RUN_OPTS(run, "the engine's kernels: torch (a lean PyTorch engine in CUDA graphs: the default, the engine whose steps are measured), fused (a serving engine's fused kernels: vLLM, TensorRT-LLM) or hf (HF transformers)"),
		{"kv-alloc", LLMSIM_ARG_CHOICE, &alloc, NULL, "KV allocation (default paged)", 0, alloc_names, NULL},
		{"reserve", LLMSIM_ARG_I64, &reserve, "N", "contiguous: tokens reserved per sequence (default prompt + longest output)", 1, NULL, NULL},
		{"block-size", LLMSIM_ARG_I64, &block, "N", "paged KV block, tokens (default 16)", 1, NULL, NULL},
		{"max-batch", LLMSIM_ARG_I64, &max_batch, "B", "running sequences at most (default 256, vLLM max_num_seqs; --server's)", 1, NULL, &seen_batch},
		{"max-tokens", LLMSIM_ARG_I64, &max_tokens, "T", "per-step token budget (default 8192; --server's)", 1, NULL, &seen_tokens},
		{"scheduler", LLMSIM_ARG_CHOICE, &sched, NULL, "vllm: admit greedily, preempt newest; no-evict: TensorRT-LLM's guaranteed admission (default vllm; --server's)", 0, sched_names, &seen_sched},
		{"chunked-prefill", LLMSIM_ARG_FLAG, &chunked, NULL, "split prompts across steps to fill the budget (--server vllm and sglang do)", 0, NULL, NULL},
		CLI_SERVE_ENG_OPTS(eng),
		{"mem-util", LLMSIM_ARG_DOUBLE, &util, "F", "fraction of HBM the engine uses (default 0.9)", 0.01, NULL, NULL},
		{"seed", LLMSIM_ARG_I64, &seed, "S", "random seed for arrivals and lengths (default 1)", 0, NULL, NULL},
		{"published", LLMSIM_ARG_FLAG, &pub, NULL, "predict the published results suite and print the errors", 0, NULL, NULL},
		{"suite", LLMSIM_ARG_STRING, &suite, "FILE", "suite for --published (default <data>/models/runs/serve_published.yaml)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
		CLI_TRACE_OUT_OPT(trace_out),
	};
	int r = llmsim_args_parse(cmd, "--model M [--gpu G] [--gpus N --tp T --pp P --ep E] --requests N [--rate R | --offline] --prompt P --output O [options]",
				  "Simulate a vLLM-like engine (continuous batching, paged or contiguous\n"
				  "KV cache, recompute preemption); each step is priced by the GPU model in\n"
				  "the kernels of --engine (torch by default, as infer, spec and the serving\n"
				  "plan: the lean engine whose steps are measured), inside the run's own\n"
				  "load (--load busy) or as lone\n"
				  "kernels (--load lone). --trace-out FILE.json writes each engine step\n"
				  "(its prefill and decode tokens) and the first 1000 requests' spans as a\n"
				  "Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing).",
				  argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				  NULL, 0, NULL);
	if (r == LLMSIM_ARGS_HELP)
		return 0;
	if (r)
		return 2;
	if (pub && trace_out)
		return llmsim_args_error(cmd, "--trace-out writes one simulated run, not --published");
	if (pub)
		return published(cmd, suite, json);
	if (!setup->model)
		return llmsim_args_error(cmd, "--model is required (try '%s --help')", cmd);
	if (offline && rate > 0)
		return llmsim_args_error(cmd, "--rate and --offline exclude each other");
	if (lengths && (pdist || odist || seen_prompt || seen_output))
		return llmsim_args_error(cmd, "--lengths replaces --prompt/--output and their distributions");
	struct llmsim_serve_engine feat;
	if ((rc = cli_serve_eng_apply(cmd, &eng, &feat)))
		return rc;
	if (trace_out && cli_trace_check(cmd, trace_out)) /* after the usage errors (2) */
		return 1;

	struct llmsim_err err = {0};
	const struct llmsim_model *m = setup->model;
	const struct llmsim_gpu *g = setup->gpu;
	struct llmsim_serve_cfg cfg;
	int64_t *plist = NULL, *olist = NULL, nlist = 0;
	int replicas = 1;
	llmsim_serve_cfg_init(&cfg, m, g);
	if ((rc = cli_run_apply(cmd, &run, &cfg.infer)))
		return rc;
	rc = 1;
	cfg.infer.runtime = LLMSIM_RT_GRAPH; /* an engine's steps are CUDA graphs */
	cfg.infer.weight_dtype = cli_wdt_vals[pl.wdt];
	cfg.infer.kv_dtype = cli_kvdt_vals[pl.kvdt];
	cfg.infer.block_size = block;
	cfg.infer.params.mem_utilization = util;
	cfg.kv_alloc = (enum llmsim_kv_alloc)alloc;
	cfg.reserve_tokens = reserve;
	/* contiguous reservation pairs with a non-paged decode kernel */
	if (cfg.infer.lower.engine == LLMSIM_ENGINE_FUSED)
		cfg.infer.attn = alloc == LLMSIM_KV_CONTIGUOUS ? LLMSIM_AC_FLASH2 : LLMSIM_AC_PAGED;
	cfg.max_batch = max_batch;
	cfg.max_tokens = max_tokens;
	cfg.chunked_prefill = chunked;
	cfg.sched = (enum llmsim_sched)sched;
	/* the engine's defaults, then what the options say */
	if (feat.server != LLMSIM_SERVER_GENERIC) {
		llmsim_serve_server(&cfg, feat.server);
		if (seen_batch)
			cfg.max_batch = max_batch;
		if (seen_tokens)
			cfg.max_tokens = max_tokens;
		if (seen_sched)
			cfg.sched = (enum llmsim_sched)sched;
		if (chunked)
			cfg.chunked_prefill = 1;
	}
	cfg.eng = feat;
	cfg.seed = (uint64_t)seed;
	if (llmsim_infer_layout(&cfg.infer, pl.gpus, pl.tp, pl.pp, pl.ep, &replicas, &err))
		goto fail;
	cfg.prompt.a = (double)prompt;
	cfg.output.a = (double)output;
	/* a malformed option value is a usage error (2), as every other one */
	if (pdist && llmsim_dist_parse(pdist, &cfg.prompt, &err))
		return llmsim_args_error(cmd, "--prompt-dist: %s", err.msg);
	if (odist && llmsim_dist_parse(odist, &cfg.output, &err))
		return llmsim_args_error(cmd, "--output-dist: %s", err.msg);
	if (lengths) {
		if (llmsim_lengths_load(lengths, &plist, &olist, &nlist, &err))
			goto fail;
		cfg.prompt_list = plist;
		cfg.output_list = olist;
		cfg.nlist = nlist;
		if (!seen_req)
			requests = nlist;
	}
	/* Replicas share the requests evenly; a Poisson stream split at random
	 * is Poisson at rate/replicas on each. */
	cfg.requests = (requests + replicas - 1) / replicas;
	cfg.rate_per_s = rate / replicas;
	struct llmsim_serve_result res;
	struct llmsim_timeline tl = {.max_events = CLI_TRACE_MAX_EVENTS};
	cfg.timeline = trace_out ? &tl : NULL;
	cfg.timeline_requests = CLI_TRACE_MAX_REQUESTS;
	struct serve_pass pass = {0};
	cfg.progress = serve_progress; /* shown on a terminal only (json_error.h) */
	cfg.progress_ctx = &pass;
	int served = llmsim_serve_run(&cfg, &res, &err);
	cli_progress_done();
	if (served) {
		llmsim_tl_release(&tl);
		goto fail;
	}
	if (trace_out && replicas > 1) {
		size_t n = strlen(tl.note);
		snprintf(tl.note + n, sizeof tl.note - n, "%sone replica of %d shown", n ? "; " : "",
			 replicas);
	}
	rc = trace_out ? cli_trace_write(cmd, trace_out, &tl) : 0;
	llmsim_tl_release(&tl);
	if (rc) {
		free(plist);
		free(olist);
		return rc;
	}
	double tps = res.tokens_per_s * replicas, rps = res.requests_per_s * replicas;
	int ngpus = cli_place_gpus(&cfg.infer, replicas);
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		cli_place_json(&j, &cfg.infer, replicas);
		llmsim_json_str(&j, "kv_alloc", llmsim_kv_alloc_name(cfg.kv_alloc));
		llmsim_json_str(&j, "scheduler", llmsim_sched_name(cfg.sched));
		cli_run_json(&j, &cfg.infer);
		cli_serve_eng_json(&j, &cfg);
		llmsim_json_obj_begin(&j, "expected_error");
		cli_step_err_json(&j, "ttft", cfg.infer.gpu, cfg.infer.lower.engine,
				  cfg.infer.runtime, "prefill");
		cli_step_err_json(&j, "tpot", cfg.infer.gpu, cfg.infer.lower.engine,
				  cfg.infer.runtime, "decode");
		llmsim_json_obj_end(&j);
		llmsim_json_int(&j, "requests", res.requests_done * replicas);
		llmsim_json_int(&j, "requests_per_replica", res.requests_done);
		if (rate > 0)
			llmsim_json_num(&j, "rate_per_s", rate);
		else
			llmsim_json_null(&j, "rate_per_s");
		llmsim_json_num(&j, "tokens_per_s", tps);
		llmsim_json_num(&j, "tokens_per_s_per_gpu", tps / ngpus);
		llmsim_json_num(&j, "requests_per_s", rps);
		llmsim_json_num(&j, "duration_s", res.duration_s);
		cli_json_pcts(&j, "ttft_s_dist", &res.ttft_s);
		cli_json_pcts(&j, "tpot_s_dist", &res.tpot_s);
		cli_json_pcts(&j, "e2e_s_dist", &res.e2e_s);
		llmsim_json_num(&j, "kv_waste_fraction", res.kv_waste_fraction);
		llmsim_json_num(&j, "kv_used_fraction", res.kv_used_fraction);
		llmsim_json_int(&j, "kv_capacity_tokens", res.kv_capacity_tokens);
		llmsim_json_int(&j, "max_concurrent", res.max_concurrent);
		llmsim_json_num(&j, "mean_batch", res.mean_batch);
		llmsim_json_num(&j, "busy_s", res.busy_s);
		llmsim_json_num(&j, "load_duty", res.load_duty);
		llmsim_json_int(&j, "preemptions", res.preemptions);
		llmsim_json_int(&j, "steps", res.steps);
		llmsim_json_int(&j, "prompt_tokens", res.prompt_tokens);
		llmsim_json_int(&j, "output_tokens", res.output_tokens);
		llmsim_json_int(&j, "generated_tokens", res.generated_tokens);
		llmsim_json_int(&j, "step_parts_priced", res.priced);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		char b1[LLMSIM_FMT_MAX], b2[LLMSIM_FMT_MAX];
		cli_place_print(&cfg.infer, replicas);
		printf(", %s scheduler, %s KV (%s), %lld requests, %s\n",
		       llmsim_sched_name(cfg.sched), llmsim_kv_alloc_name(cfg.kv_alloc),
		       llmsim_dtype_name(cfg.infer.kv_dtype), (long long)(res.requests_done * replicas),
		       rate > 0 ? "Poisson arrivals" : "offline");
		cli_run_print(&cfg.infer, "inside the run's own load: its busy share and FLOP rate");
		char eb0[320];
		cli_serve_eng_describe(&cfg.eng, eb0, sizeof eb0);
		printf("%s: %lld running sequences at most, %lld tokens a step%s\n", eb0,
		       (long long)cfg.max_batch, (long long)cfg.max_tokens,
		       cfg.chunked_prefill ? ", chunked prefill" : "");
		char eb[256];
		cli_step_err(cfg.infer.gpu, cfg.infer.lower.engine, cfg.infer.runtime, "prefill", eb,
			     sizeof eb);
		printf("expected error of a prefill step: %s\n", eb);
		cli_step_err(cfg.infer.gpu, cfg.infer.lower.engine, cfg.infer.runtime, "decode", eb,
			     sizeof eb);
		printf("expected error of a decode step: %s\n\n", eb);
		struct llmsim_table t;
		const char *head[] = {"<|latency", "mean", "p50", "p90", "p99"}; /* |: units by row */
		llmsim_table_init(&t, 5, head);
		pcts_row(&t, "TTFT", &res.ttft_s);
		pcts_row(&t, "TPOT", &res.tpot_s);
		pcts_row(&t, "end-to-end", &res.e2e_s);
		llmsim_table_print(&t, stdout);
		llmsim_table_release(&t);
		putchar('\n');
		const char *h2[] = {"<metric", "value"};
		llmsim_table_init(&t, 2, h2);
		llmsim_table_rowf(&t, "output tokens/s\t%.1f", tps);
		llmsim_table_rowf(&t, "output tokens/s per GPU\t%.1f", tps / ngpus);
		llmsim_table_rowf(&t, "requests/s\t%.3f", rps);
		llmsim_table_rowf(&t, "duration\t%s", llmsim_fmt_time(b1, res.duration_s));
		llmsim_table_rowf(&t, "KV waste (time-averaged)\t%s", llmsim_fmt_pct(b1, res.kv_waste_fraction));
		llmsim_table_rowf(&t, "KV pool used (time-averaged)\t%s", llmsim_fmt_pct(b1, res.kv_used_fraction));
		llmsim_table_rowf(&t, "KV pool per replica\t%s tokens (%s per GPU)",
				  llmsim_fmt_count(b1, (double)res.kv_capacity_tokens),
				  llmsim_fmt_bytes(b2, res.mem.kv_capacity_bytes));
		llmsim_table_rowf(&t, "peak concurrent sequences\t%lld", (long long)res.max_concurrent);
		llmsim_table_rowf(&t, "mean running sequences\t%.1f", res.mean_batch);
		llmsim_table_rowf(&t, "preemptions\t%lld", (long long)res.preemptions);
		llmsim_table_rowf(&t, "engine steps\t%lld", (long long)res.steps);
		if (res.load_duty > 0)
			llmsim_table_rowf(&t, "GPU busy (clock set by the power limit)\t%s",
					  llmsim_fmt_pct(b1, res.load_duty));
		llmsim_table_print(&t, stdout);
		llmsim_table_release(&t);
	}
	free(plist);
	free(olist);
	return rc;
fail:
	fprintf(stderr, "%s: %s\n", cmd, err.msg);
	free(plist);
	free(olist);
	return 1;
}
