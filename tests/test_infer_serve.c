/*
 * test_infer_serve.c - the serving simulation: every request finishes and
 * the tokens generated are the sum of the outputs (also under preemption),
 * paged waste stays below a block per sequence while contiguous waste grows
 * with the reserved-but-unused length, seeds reproduce, and the CLI
 * reports malformed lengths files by file and line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/infer/serve.h"
#include "calib/validate/serve_runs.h"
#include "support.h"

static struct llmsim_model m8b;
static struct llmsim_gpu h200;

static void setup(struct llmsim_serve_cfg *cfg)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load("8b", &m8b, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &e), 0, "%s", e.msg);
	llmsim_serve_cfg_init(cfg, &m8b, &h200);
}

static void run(const struct llmsim_serve_cfg *cfg, struct llmsim_serve_result *r)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_serve_run(cfg, r, &e), 0, "%s", e.msg);
}

Test(infer_serve, conservation)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result r;
	setup(&cfg);
	/* 7 shapes cycled over 301 requests */
	static const int64_t p[7] = {100, 2000, 37, 512, 1, 4000, 800};
	static const int64_t o[7] = {1, 300, 64, 128, 1000, 2, 17};
	cfg.prompt_list = p;
	cfg.output_list = o;
	cfg.nlist = 7;
	cfg.requests = 301;
	cfg.rate_per_s = 30;
	cfg.chunked_prefill = 1;
	cfg.max_tokens = 2048;
	run(&cfg, &r);
	/* 301 = 43 x 7: each shape 43 times; outputs sum to 1512 per cycle */
	cr_expect_eq(r.requests_done, 301);
	cr_expect_eq(r.output_tokens, 43 * 1512);
	cr_expect_eq(r.generated_tokens, 43 * 1512);
	cr_expect_eq(r.prompt_tokens, 43 * (100 + 2000 + 37 + 512 + 1 + 4000 + 800));
	cr_expect_gt(r.tokens_per_s, 0);
	cr_expect_leq(r.ttft_s.p50, r.ttft_s.p90);
	cr_expect_leq(r.ttft_s.p90, r.ttft_s.p99);
	cr_expect_leq(r.e2e_s.p99, r.e2e_s.max);
}

Test(infer_serve, preemption_keeps_every_token)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result r;
	setup(&cfg);
	/* shrink the pool to ~3 GB of KV = 3e9 / 131072 B = ~22900 tokens:
	 * 200 sequences of 512 + 512 tokens cannot all grow at once */
	struct llmsim_infer_mem mem;
	cfg.infer.max_step_tokens = cfg.max_tokens;
	cr_assert_eq(llmsim_infer_memory(&cfg.infer, &mem, NULL), 0);
	cfg.infer.params.mem_utilization =
		(mem.weight_bytes + mem.activation_bytes + 3e9) / h200.hbm_bytes;
	cfg.requests = 200;
	cfg.prompt.a = 512;
	cfg.output.a = 512;
	run(&cfg, &r);
	cr_expect(r.kv_capacity_tokens > 20000 && r.kv_capacity_tokens < 25000, "%lld",
		  (long long)r.kv_capacity_tokens);
	cr_expect_gt(r.preemptions, 0);
	cr_expect_eq(r.requests_done, 200);
	cr_expect_eq(r.generated_tokens, 200 * 512);
	/* never more sequences than fit with at least their prompt + 1 block */
	cr_expect_leq(r.max_concurrent, r.kv_capacity_tokens / 512);
}

Test(infer_serve, paged_waste_below_a_block)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result r;
	setup(&cfg);
	cfg.requests = 64;
	cfg.prompt.a = 500;
	cfg.output.a = 100;
	run(&cfg, &r);
	/* at most 15 of a 16-token block unused per sequence holding >= 500
	 * tokens: waste <= 15 / 500 = 3% */
	cr_expect_lt(r.kv_waste_fraction, 0.03);
	cr_expect_eq(r.preemptions, 0);
}

Test(infer_serve, contiguous_waste_grows_with_the_gap)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result small, large;
	setup(&cfg);
	cfg.kv_alloc = LLMSIM_KV_CONTIGUOUS;
	cfg.infer.attn = LLMSIM_AC_FLASH2;
	cfg.requests = 64;
	cfg.prompt.a = 100;
	cfg.output.a = 100;
	run(&cfg, &small);
	cfg.output.a = 400;
	run(&cfg, &large);
	/* reserved 100 + O, used growing from 101 to 100 + O: the unused part
	 * averages about O/2 of 100 + O: 50/200 = 25% and 200/500 = 40% */
	cr_expect(small.kv_waste_fraction > 0.15 && small.kv_waste_fraction < 0.35, "%g",
		  small.kv_waste_fraction);
	cr_expect(large.kv_waste_fraction > 0.30 && large.kv_waste_fraction < 0.50, "%g",
		  large.kv_waste_fraction);
	cr_expect_gt(large.kv_waste_fraction, small.kv_waste_fraction);
}

Test(infer_serve, seeds_reproduce)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result a, b, c;
	setup(&cfg);
	cfg.requests = 500;
	cfg.rate_per_s = 20;
	llmsim_dist_parse("lognormal:6:0.7", &cfg.prompt, NULL);
	llmsim_dist_parse("uniform:10:300", &cfg.output, NULL);
	cfg.seed = 5;
	run(&cfg, &a);
	run(&cfg, &b);
	cfg.seed = 6;
	run(&cfg, &c);
	cr_expect_eq(a.steps, b.steps);
	cr_expect_eq(a.output_tokens, b.output_tokens);
	cr_expect_eq(a.ttft_s.p99, b.ttft_s.p99);
	cr_expect_eq(a.tpot_s.p50, b.tpot_s.p50);
	cr_expect_neq(a.output_tokens, c.output_tokens);
}

Test(infer_serve, offline_single_batch)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result r;
	setup(&cfg);
	/* the same load for both (lone kernels): serve prices a run in the
	 * load of the whole run, infer each phase in its own; what is
	 * compared here is the step prices */
	cfg.infer.load = LLMSIM_LOAD_LONE;
	/* 8 identical requests fit one step's budget: one prefill step, then
	 * 63 decode steps together */
	cfg.requests = 8;
	cfg.prompt.a = 256;
	cfg.output.a = 64;
	run(&cfg, &r);
	cr_expect_eq(r.steps, 64);
	cr_expect_eq(r.max_concurrent, 8);
	expect_close(r.ttft_s.p50, r.ttft_s.p99, 1e-12);
	/* the same batch through `infer`: the step prices (summed from cached
	 * parts, contexts interpolated on a grid) agree with whole steps */
	struct llmsim_infer_result ir;
	struct llmsim_infer_req req = {.batch = 8, .prompt = 256, .output = 64};
	cr_assert_eq(llmsim_infer_run(&cfg.infer, &req, &ir, NULL), 0);
	/* the default engine (torch): its per-sequence ops make the cached
	 * parts agree to 1e-4 (measured 1.4e-4 on TTFT) */
	expect_close(r.ttft_s.p50, ir.ttft_s, 1e-3);
	expect_close(r.duration_s, ir.e2e_s, 0.005);
	/* the fused engine's step prices add up exactly */
	llmsim_infer_cfg_engine(&cfg.infer, LLMSIM_ENGINE_FUSED);
	run(&cfg, &r);
	cr_assert_eq(llmsim_infer_run(&cfg.infer, &req, &ir, NULL), 0);
	expect_close(r.ttft_s.p50, ir.ttft_s, 1e-6);
	expect_close(r.duration_s, ir.e2e_s, 0.005);
}

Test(infer_serve, cli_reports_bad_lengths_file)
{
	char out[4096], err[1024], path[512], args[1024];
	snprintf(args, sizeof args, "serve --model 8b --lengths %s",
		 test_data(path, sizeof path, "infer/bad_lengths.txt"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "bad_lengths.txt:3:") != NULL, "stderr: %s", err);
	cr_expect_eq(out[0], 0, "no partial output: %s", out);
	/* a malformed option value is a usage error (issue 16: exit 2) */
	cr_expect_eq(run_llmsim("serve --model 8b --prompt-dist gamma:1:2", out, sizeof out, err, sizeof err), 2);
	cr_expect(strstr(err, "llmsim serve: ") == err, "stderr: %s", err);
	/* too many requests is a usage error, not an allocation failure */
	cr_expect_eq(run_llmsim("serve --model 8b --requests 1e12", out, sizeof out, err, sizeof err), 2);
	cr_expect_str_eq(err, "llmsim serve: --requests: at most 10000000 requests, got '1e12'\n");
}

Test(infer_serve, cli_json_keys)
{
	static char out[16384];
	char err[1024];
	cr_assert_eq(run_llmsim("serve --model 8b --requests 50 --rate 5 --json", out, sizeof out, err, sizeof err), 0, "%s", err);
	const char *keys[] = {"\"tokens_per_s\"", "\"ttft_s_dist\"", "\"tpot_s_dist\"", "\"p50\"", "\"p90\"",
			      "\"p99\"", "\"kv_waste_fraction\"", "\"max_concurrent\"", "\"preemptions\""};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		cr_expect(strstr(out, keys[i]) != NULL, "missing %s", keys[i]);
	cr_assert_eq(run_llmsim("infer --model 8b --batch 4 --json", out, sizeof out, err, sizeof err), 0, "%s", err);
	const char *ik[] = {"\"ttft_s\"", "\"tpot_s\"", "\"e2e_s\"", "\"tokens_per_s\"",
			    "\"kv_bytes_per_token\": 131072", "\"kv_bytes\"", "\"weight_bytes_per_gpu\"",
			    "\"max_batch\"", "\"prefill\"", "\"decode\"", "\"bound\""};
	for (size_t i = 0; i < sizeof ik / sizeof ik[0]; i++)
		cr_expect(strstr(out, ik[i]) != NULL, "missing %s", ik[i]);
	cr_assert_eq(run_llmsim("spec --model 8b --draft llama-3.2-1b --gamma 4 --alpha 0.8 --json", out, sizeof out, err, sizeof err), 0, "%s", err);
	/* (1 - 0.8^5) / 0.2 = 3.3616 */
	cr_expect(strstr(out, "\"expected_tokens_per_step\": 3.3616") != NULL, "%s", out);
	cr_expect_eq(run_llmsim("infer --model 405b --batch 1", out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "llmsim infer: ") == err && strstr(err, "does not fit"), "%s", err);
	cr_expect_eq(run_llmsim("infer --model 8b --batch 0", out, sizeof out, err, sizeof err), 1);
}

Test(infer_serve, published_suite_loads)
{
	char path[1024];
	struct llmsim_serve_pub *v;
	int n;
	struct llmsim_err e = {0};
	snprintf(path, sizeof path, "%s/models/runs/serve_published.yaml", LLMSIM_SOURCE_DIR);
	cr_assert_eq(llmsim_serve_pubs_load(path, &v, &n, &e), 0, "%s", e.msg);
	cr_expect_geq(n, 20);
	for (int i = 0; i < n; i++)
		cr_expect_gt(v[i].published, 0, "%s", v[i].name);
	free(v);
	/* an unknown key is reported where it stands: line 6, column 5 */
	cr_expect_eq(llmsim_serve_pubs_load(test_data(path, sizeof path, "infer/bad_suite.yaml"), &v, &n, &e),
		     LLMSIM_EPARSE);
	cr_expect(strstr(e.msg, "bad_suite.yaml:6:5:") != NULL && strstr(e.msg, "colour"), "%s", e.msg);
}

/* A closed loop of 16 users (plan --concurrency): never more than 16
 * sequences run, every request completes, and each user's next request
 * arrives when one of theirs completes: 200 requests of 16 users, so at
 * most 16 are ever in the system and the first 16 arrive at t = 0. */
Test(infer_serve, closed_loop_concurrency)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result r;
	setup(&cfg);
	cfg.requests = 200;
	cfg.concurrency = 16;
	cfg.max_batch = 64;
	cfg.prompt.a = 512;
	cfg.output.a = 64;
	cfg.chunked_prefill = 1;
	run(&cfg, &r);
	cr_expect_eq(r.requests_done, 200);
	cr_expect_leq(r.max_concurrent, 16);
	cr_expect_eq(r.max_concurrent, 16); /* the engine holds them all at once */
	cr_expect_eq(r.generated_tokens, 200 * 64);
}

/* A disaggregated decode replica (prefilled): requests arrive with their
 * prompt's cache and first token, so TTFT is 0 for every one, the engine
 * emits output - 1 tokens per request (200 x 63) and prefills nothing: its
 * steps carry one token per running sequence. */
Test(infer_serve, prefilled_decode_replica)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_serve_result r;
	setup(&cfg);
	cfg.requests = 200;
	cfg.rate_per_s = 20;
	cfg.prefilled = 1;
	cfg.prompt.a = 2048;
	cfg.output.a = 64;
	run(&cfg, &r);
	cr_expect_eq(r.requests_done, 200);
	cr_expect_eq(r.generated_tokens, 200 * 63);
	cr_expect_eq(r.output_tokens, 200 * 64);
	expect_close(r.ttft_s.max, 0, 0);
	cr_expect_gt(r.tpot_s.mean, 0);
	/* one output token a request cannot come from a decode replica */
	cfg.output.a = 1;
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_serve_run(&cfg, &r, &e), LLMSIM_EINVAL);
}

/* A step's expected error is its program's class: the lean engine run in
 * CUDA graphs carries the lean_graph steps' p80, the same engine run eager
 * has no measured class (the eager steps of calib/data/torch_steps.json
 * miss by 23-27% at decode: a graph program's error bar would hide it) and
 * says the stated default. */
Test(infer_serve, eager_steps_do_not_borrow_the_graph_class)
{
	static char o[1 << 16], e[4096];
	const char *base = "infer --model llama-3.1-8b --batch 1 --prompt 2048 --output 16 --json";
	char args[256];
	cr_assert_eq(run_llmsim(base, o, sizeof o, e, sizeof e), 0, "%s", e);
	cr_expect(strstr(o, "lean_graph"), "%s", o);
	snprintf(args, sizeof args, "%s --runtime eager", base);
	cr_assert_eq(run_llmsim(args, o, sizeof o, e, sizeof e), 0, "%s", e);
	cr_expect(!strstr(o, "lean_graph") && strstr(o, "\"calibrated\": false"), "%s", o);
}
