/*
 * test_serve_engines.c - the serving engines as they run today
 * (sim/infer/serve_server.c, serve.h): each engine's defaults and captured
 * CUDA-graph sizes as its sources state them, SGLang's prefill-first steps
 * against vLLM's mixed ones, the prefix cache, and speculative decoding
 * inside the engine (tokens per step from the acceptance rates, the
 * draft's cost). Expected numbers are derived by hand.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sim/infer/serve.h"
#include "sim/timeline.h"
#include "support.h"

static struct llmsim_model m8b, m1b;
static struct llmsim_gpu h200, a100, l40s, b200;

static void setup(struct llmsim_serve_cfg *cfg)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load("8b", &m8b, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_model_load("1b", &m1b, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("a100", &a100, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("l40s", &l40s, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("b200", &b200, &e), 0, "%s", e.msg);
	llmsim_serve_cfg_init(cfg, &m8b, &h200);
}

static void run(const struct llmsim_serve_cfg *cfg, struct llmsim_serve_result *r)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_serve_run(cfg, r, &e), 0, "%s", e.msg);
}

/* vLLM: 8192 tokens and 1024 sequences on a >= 70 GiB GPU but the A100,
 * else 2048 and 256; SGLang's chunk 8192 below 160 GB, 16384 above;
 * TensorRT-LLM: no chunking, guaranteed no eviction, 8192 tokens. */
Test(serve_engines, defaults)
{
	struct llmsim_serve_cfg c;
	setup(&c);
	llmsim_serve_server(&c, LLMSIM_SERVER_VLLM);
	cr_expect_eq(c.max_tokens, 8192);
	cr_expect_eq(c.max_batch, 1024);
	cr_expect(c.chunked_prefill);
	c.infer.gpu = &a100;
	llmsim_serve_server(&c, LLMSIM_SERVER_VLLM);
	cr_expect_eq(c.max_tokens, 2048);
	cr_expect_eq(c.max_batch, 256);
	c.infer.gpu = &l40s;
	llmsim_serve_server(&c, LLMSIM_SERVER_SGLANG);
	cr_expect_eq(c.max_tokens, 8192);
	c.infer.gpu = &b200;
	llmsim_serve_server(&c, LLMSIM_SERVER_SGLANG);
	cr_expect_eq(c.max_tokens, 16384);
	llmsim_serve_server(&c, LLMSIM_SERVER_TRTLLM);
	cr_expect_eq(c.sched, LLMSIM_SCHED_NO_EVICT);
	cr_expect(!c.chunked_prefill);
	cr_expect_eq(c.max_tokens, 8192);
	cr_expect_eq(llmsim_server_parse("sglang"), LLMSIM_SERVER_SGLANG);
	cr_expect_eq(llmsim_server_parse("tgi"), -1);
}

/* vLLM captures 1, 2, 4, 8..248 by 8, 256..min(2 x max_num_seqs, 512) by
 * 16; SGLang 1, 2, 4, 8, 12, 16..256 by 8, 272..496 by 16, 512.. by 32 up
 * to 256 sequences below tp 4 on a < 160 GB GPU, 512 from tp 4. */
Test(serve_engines, graph_sizes)
{
	struct llmsim_serve_cfg c;
	int g;
	setup(&c);
	c.eng.server = LLMSIM_SERVER_VLLM;
	c.max_batch = 256; /* captured up to 512 tokens */
	static const int64_t vin[] = {1, 3, 5, 250, 256, 257, 500, 512};
	static const int64_t vout[] = {1, 4, 8, 256, 256, 272, 512, 512};
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(llmsim_serve_graph_size(&c, vin[i], &g), vout[i], "vllm %lld", (long long)vin[i]);
		cr_expect(g);
	}
	cr_expect_eq(llmsim_serve_graph_size(&c, 513, &g), 513);
	cr_expect(!g, "past 512 tokens: no graph");
	c.max_batch = 64; /* up to 128 */
	llmsim_serve_graph_size(&c, 129, &g);
	cr_expect(!g);
	c.eng.server = LLMSIM_SERVER_SGLANG;
	static const int64_t sin[] = {3, 9, 13, 255, 256};
	static const int64_t sout[] = {4, 12, 16, 256, 256};
	for (int i = 0; i < 5; i++)
		cr_expect_eq(llmsim_serve_graph_size(&c, sin[i], &g), sout[i], "sglang %lld",
			     (long long)sin[i]);
	llmsim_serve_graph_size(&c, 257, &g);
	cr_expect(!g, "tp 1 on an H200 captures up to 256");
	c.infer.tp = 4;
	cr_expect_eq(llmsim_serve_graph_size(&c, 257, &g), 272);
	cr_expect_eq(llmsim_serve_graph_size(&c, 497, &g), 512);
	cr_expect_eq(llmsim_serve_graph_size(&c, 513, &g), 513);
	cr_expect(!g);
	c.eng.server = LLMSIM_SERVER_GENERIC;
	cr_expect_eq(llmsim_serve_graph_size(&c, 777, &g), 777);
	cr_expect(g);
}

/* The share of steps with both prefill and decode tokens: vLLM mixes them
 * (chunked prefill beside the decodes), SGLang never does (a prefill step
 * pauses the decodes). */
static int64_t mixed_steps(enum llmsim_server s, int64_t *steps)
{
	struct llmsim_serve_cfg c;
	struct llmsim_serve_result r;
	struct llmsim_timeline tl = {0};
	setup(&c);
	llmsim_serve_server(&c, s);
	c.requests = 200;
	c.rate_per_s = 20;
	c.timeline = &tl;
	run(&c, &r);
	int64_t mixed = 0;
	*steps = 0;
	for (int64_t i = 0; i < tl.nev; i++) {
		const struct llmsim_tl_event *ev = &tl.ev[i];
		if (strcmp(ev->cat, "step"))
			continue;
		double pre = 0, dec = 0;
		for (int k = 0; k < ev->nargs; k++) {
			if (!strcmp(ev->arg[k].key, "prefill_tokens"))
				pre = ev->arg[k].value;
			if (!strcmp(ev->arg[k].key, "decode_tokens"))
				dec = ev->arg[k].value;
		}
		mixed += pre > 0 && dec > 0;
		++*steps;
	}
	llmsim_tl_release(&tl);
	return mixed;
}

Test(serve_engines, sglang_runs_prefill_first)
{
	int64_t n;
	cr_expect_gt(mixed_steps(LLMSIM_SERVER_VLLM, &n), 0);
	cr_expect_gt(n, 0);
	cr_expect_eq(mixed_steps(LLMSIM_SERVER_SGLANG, &n), 0);
	cr_expect_gt(n, 0);
}

/* Half of a 2048-token prompt in the prefix cache (1024 tokens, 64 whole
 * blocks): the first token comes sooner than the whole prompt's, later
 * than a 1024-token prompt's alone (its attention still reads the cached
 * half), and the pool holds the shared prefix once, 1024 slots fewer. */
Test(serve_engines, prefix_cache)
{
	struct llmsim_serve_cfg c;
	struct llmsim_serve_result whole, half, shorter;
	setup(&c);
	c.requests = 1;
	c.prompt.a = 2048;
	c.output.a = 8;
	run(&c, &whole);
	c.eng.prefix_share = 0.5;
	run(&c, &half);
	c.eng.prefix_share = 0;
	c.prompt.a = 1024;
	run(&c, &shorter);
	cr_expect_lt(half.ttft_s.p50, whole.ttft_s.p50);
	cr_expect_gt(half.ttft_s.p50, shorter.ttft_s.p50);
	cr_expect_eq(half.kv_capacity_tokens, whole.kv_capacity_tokens - 1024);
	cr_expect_eq(half.generated_tokens, 8);
}

/* MTP of depth 3 with every draft accepted: 4 tokens a step, so a
 * 41-token output is the prefill's token and 10 steps; per-position rates
 * 1, 1, 0 keep 3 a step: 31 tokens in 1 + 10 steps. Nothing accepted: one
 * token a step, each dearer than a plain decode (the drafts and the
 * 4-token verify). */
Test(serve_engines, speculation_tokens_per_step)
{
	struct llmsim_serve_cfg c;
	struct llmsim_serve_result r, plain;
	setup(&c);
	c.requests = 1;
	c.prompt.a = 256;
	c.output.a = 41;
	run(&c, &plain);
	c.eng.spec = (struct llmsim_serve_spec){.gamma = 3, .kind = LLMSIM_SPEC_MTP,
						 .alpha = {1}, .nalpha = 1};
	run(&c, &r);
	cr_expect_eq(r.steps, 11);
	cr_expect_eq(r.generated_tokens, 41);
	c.output.a = 31;
	c.eng.spec.nalpha = 3;
	c.eng.spec.alpha[1] = 1;
	c.eng.spec.alpha[2] = 0;
	run(&c, &r);
	cr_expect_eq(r.steps, 11);
	c.output.a = 41;
	c.eng.spec.nalpha = 1;
	c.eng.spec.alpha[0] = 0;
	run(&c, &r);
	cr_expect_eq(r.steps, 41);
	cr_expect_gt(r.tpot_s.p50, plain.tpot_s.p50);
}

/* A draft model on the target's GPUs: its weights and its own cache per
 * token leave the target fewer KV slots; Medusa heads add weights only. */
Test(serve_engines, speculation_memory)
{
	struct llmsim_serve_cfg c;
	struct llmsim_serve_result plain, draft, medusa;
	setup(&c);
	c.requests = 4;
	run(&c, &plain);
	c.eng.spec = (struct llmsim_serve_spec){.gamma = 4, .kind = LLMSIM_SPEC_DRAFT,
						 .alpha = {0.7}, .nalpha = 1, .draft = &m1b};
	run(&c, &draft);
	/* the 1B caches 32 KiB a token (16 layers x 8 kv heads x 64 x 2 x 2 B)
	 * beside the 8B's 128 KiB: at most 128/160 of the slots are left */
	cr_expect_lt(draft.kv_capacity_tokens, plain.kv_capacity_tokens * 128 / 160);
	c.eng.spec = (struct llmsim_serve_spec){.gamma = 3, .kind = LLMSIM_SPEC_MEDUSA,
						 .alpha = {0.6}, .nalpha = 1};
	run(&c, &medusa);
	cr_expect_lt(medusa.kv_capacity_tokens, plain.kv_capacity_tokens);
	cr_expect_gt(medusa.kv_capacity_tokens, draft.kv_capacity_tokens);
}

/* The options in `serve` and the serving plan: the engine and its
 * features named in the JSON; speculation's options checked as `spec`
 * checks them (one kind, acceptance given once), a share in [0, 1). */
Test(serve_engines, cli)
{
	static char out[1 << 20], err[1 << 12];
	int rc = run_llmsim("serve --model 8b --requests 50 --rate 5 --server sglang --prefix-share 0.25 "
			    "--mtp 1 --alpha 0.8 --json",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(json_parses(out));
	cr_expect(strstr(out, "\"server\": \"sglang\"") && strstr(out, "\"prefix_share\": 0.25") &&
		  strstr(out, "\"kind\": \"mtp\"") && strstr(out, "\"max_step_tokens\": 8192"),
		  "%.2000s", out);
	rc = run_llmsim("plan --workload serve --model 8b --gpus 1 --requests 40 --max-batch 8 "
			"--server vllm --draft 1b --gamma 3 --alphas 0.9,0.7,0.5 --json",
			out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"server\": \"vllm\"") && strstr(out, "\"kind\": \"draft\"") &&
		  strstr(out, "\"draft\": \"llama-3.2-1b\""), "%.2000s", out);
	static const char *const bad[] = {
		"--mtp 1 --medusa-heads 2 --alpha 0.5", "--mtp 1", "--mtp 1 --alpha 0.5 --alphas 0.5",
		"--gamma 3 --alpha 0.5", "--mtp 1 --alpha 1.5", "--prefix-share 1", "--server tgi",
		"--medusa-heads 2 --gamma 3 --alpha 0.5",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "serve --model 8b --requests 10 %s", bad[i]);
		rc = run_llmsim(cmd, out, sizeof out, err, sizeof err);
		cr_expect_eq(rc, 2, "%s: %s", bad[i], err);
		cr_expect_eq(count_lines(err), 1, "%s: %s", bad[i], err);
	}
}
