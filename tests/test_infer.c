/*
 * test_infer.c - one request shape: KV bytes per token for MHA, GQA, MQA
 * and MLA, memory per GPU, decode at batch 1 bound by weight and KV bytes,
 * TTFT growing with the prompt, TPOT integration, clear errors for
 * impossible requests, and the comparison with PyTorch measurements.
 * Expected values are derived by hand from the models' published shapes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/infer/infer.h"
#include "sim/infer/spec.h"
#include "base/stats.h"
#include "calib/validate/steps.h"
#include "support.h"

static struct llmsim_gpu h200;

static void load(const char *name, struct llmsim_model *m)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load(name, m, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &e), 0, "%s", e.msg);
}

static double per_gpu_kv(const struct llmsim_model *m, int tp, int pp, enum llmsim_dtype w)
{
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_mem mem;
	struct llmsim_err e = {0};
	llmsim_infer_cfg_init(&cfg, m, &h200);
	cfg.tp = tp;
	cfg.pp = pp;
	cfg.weight_dtype = w;
	cr_assert_eq(llmsim_infer_memory(&cfg, &mem, &e), 0, "%s", e.msg);
	return mem.kv_bytes_per_token;
}

Test(infer, kv_bytes_per_token_mha_gqa_mqa_mla)
{
	struct llmsim_model m;
	/* MHA, Llama 2 7B: 32 layers x 2 (K,V) x 32 heads x 128 x 2 B = 524288 */
	load("llama-2-7b", &m);
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 524288, 1e-12);
	expect_close(per_gpu_kv(&m, 2, 1, LLMSIM_DT_BF16), 524288 / 2, 1e-12);
	/* GQA, Llama 3.1 70B: 80 x 2 x 8 x 128 x 2 = 327680; tp 8 -> 1 head each */
	load("70b", &m);
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 327680, 1e-12);
	expect_close(per_gpu_kv(&m, 8, 1, LLMSIM_DT_BF16), 40960, 1e-12);
	/* tp 16 > 8 KV heads: each head held by two ranks, still 40960 */
	expect_close(per_gpu_kv(&m, 16, 1, LLMSIM_DT_INT4), 40960, 1e-12);
	/* pp 2: half the layers per stage */
	expect_close(per_gpu_kv(&m, 4, 2, LLMSIM_DT_BF16), 327680 / 8, 1e-12);
	/* MQA, StarCoder 15B: 40 x 2 x 1 x 128 x 2 = 20480, replicated on tp */
	load("starcoder-15b", &m);
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 20480, 1e-12);
	expect_close(per_gpu_kv(&m, 4, 1, LLMSIM_DT_BF16), 20480, 1e-12);
	/* MLA, DeepSeek-V3: 61 x (512 latent + 64 rope) x 2 = 70272, fp8 half;
	 * the latent is shared by all heads, so every tp rank holds all of it */
	load("deepseek-v3", &m);
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 70272, 1e-12);
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_FP8), 35136, 1e-12);
	expect_close(per_gpu_kv(&m, 8, 1, LLMSIM_DT_FP8), 70272, 1e-12);
}

Test(infer, weights_per_gpu)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_mem mem;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	cr_assert_eq(llmsim_infer_memory(&cfg, &mem, NULL), 0);
	/* Llama 3.1 8B: 8.03 B parameters (model card) x 2 bytes */
	expect_close(mem.weight_bytes, 8.03e9 * 2, 0.01);
	load("70b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	cfg.tp = 8;
	cfg.weight_dtype = LLMSIM_DT_INT4;
	cr_assert_eq(llmsim_infer_memory(&cfg, &mem, NULL), 0);
	/* 70.55 B in all; embedding and LM head 128256 x 8192 = 1.0507 B each
	 * stay bf16: (70.55 - 2.10) B x 0.5 / 8 + 2.10 B x 2 / 8 = 4.80 GB */
	expect_close(mem.weight_bytes, 4.80e9, 0.02);
}

Test(infer, largest_batch)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_result r;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	struct llmsim_infer_req req = {.batch = 1, .prompt = 1024, .output = 1024};
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &r, NULL), 0);
	/* 0.9 x 150.76 GB (143771 MiB) = 135.7 GB, minus 16.06 GB of weights,
	 * minus at most 3 GB of activations, over 131072 B x 2048 tokens:
	 * between (135.7 - 16.06 - 3) / 0.2684 = 434 and (135.7 - 16.06) / 0.2684 = 445 */
	cr_expect(r.max_batch >= 434 && r.max_batch <= 446, "max batch %lld", (long long)r.max_batch);
	req.batch = r.max_batch + 1;
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_infer_run(&cfg, &req, &r, &e), LLMSIM_ENOFIT);
	cr_expect(strstr(e.msg, "largest batch") != NULL, "%s", e.msg);
}

Test(infer, decode_batch1_is_weight_and_kv_bytes)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_step_cost c;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	struct llmsim_step s = {.decode_seqs = 1, .q_len = 1, .decode_kv_len = 1025, .logits = 1};
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_infer_step(&cfg, &s, &c, &e), 0, "%s", e.msg);
	/* every weight but the embedding table is read once: (8.03 B - 0.525 B) x 2 */
	expect_close(c.bytes[LLMSIM_BYTES_WEIGHTS], (8.03e9 - 0.525e9) * 2, 0.03);
	/* the cache: 1025 tokens x 131072 B = 134 MB (plus writes of the new token) */
	cr_expect(c.bytes[LLMSIM_BYTES_KV] >= 1025 * 131072.0 &&
		  c.bytes[LLMSIM_BYTES_KV] <= 1.3 * 1025 * 131072.0, "KV bytes %g",
		  c.bytes[LLMSIM_BYTES_KV]);
	cr_expect_gt((c.bytes[LLMSIM_BYTES_WEIGHTS] + c.bytes[LLMSIM_BYTES_KV]) / c.hbm_bytes, 0.97);
	/* time: no faster than the bytes at HBM peak; no slower than the bytes
	 * at the model's sustained HBM fraction plus every kernel's fixed cost,
	 * one DRAM latency and the graph's launch gap, with 25% allowance for
	 * one-row GEMMs too small to keep enough loads in flight */
	double peak = h200.hbm_bytes_per_s, eff = h200.param[LLMSIM_PARAM_HBM_FRACTION];
	double fixed = h200.param[LLMSIM_PARAM_KERNEL_OVERHEAD_S] + h200.hbm_latency_s +
		       h200.param[LLMSIM_PARAM_STEP_KERNEL_GAP_S];
	cr_expect_geq(c.time_s, c.hbm_bytes / peak);
	cr_expect_leq(c.time_s, 1.25 * c.hbm_bytes / (peak * eff) + (double)c.kernels * fixed,
		      "%g s for %g bytes in %lld kernels", c.time_s, c.hbm_bytes, (long long)c.kernels);
	double share;
	cr_expect_eq(llmsim_step_bound(&c, &share) == LLMSIM_BOUND_TENSOR, 0);
}

Test(infer, ttft_grows_with_prompt)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_result r;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	double t[3];
	int64_t p[3] = {256, 1024, 4096};
	for (int i = 0; i < 3; i++) {
		struct llmsim_infer_req req = {.batch = 1, .prompt = p[i], .output = 16};
		cr_assert_eq(llmsim_infer_run(&cfg, &req, &r, NULL), 0);
		t[i] = r.ttft_s;
	}
	cr_expect_lt(t[0], t[1]);
	cr_expect_lt(t[1], t[2]);
	/* 4x the tokens: 4x the linear-layer FLOPs and more than 4x attention;
	 * fixed per-kernel costs keep it a little below 4 */
	cr_expect(t[2] / t[1] > 3.5 && t[2] / t[1] < 6.0, "ratio %g", t[2] / t[1]);
}

Test(infer, tpot_simpson_matches_every_step)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_result r;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	struct llmsim_infer_req req = {.batch = 8, .prompt = 1000, .output = 401};
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &r, NULL), 0);
	cr_expect_eq(r.decode_points, 9);
	/* decode steps 1..400 attend over 1001..1400 tokens */
	double sum = 0;
	for (int j = 1; j <= 400; j++) {
		struct llmsim_step s = {.decode_seqs = 8, .q_len = 1, .decode_kv_len = 1000 + j,
					.logits = 8};
		struct llmsim_step_cost c;
		cr_assert_eq(llmsim_infer_step(&cfg, &s, &c, NULL), 0);
		sum += c.time_s;
	}
	expect_close(r.tpot_s, sum / 400, 0.005);
	expect_close(r.e2e_s, r.ttft_s + 400 * r.tpot_s, 1e-9);
	expect_close(r.tokens_per_s, 8 * 401 / r.e2e_s, 1e-9);
}

Test(infer, eager_never_faster_than_graph)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_result g, e;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	struct llmsim_infer_req req = {.batch = 1, .prompt = 128, .output = 64};
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &g, NULL), 0);
	cfg.runtime = LLMSIM_RT_EAGER;
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &e, NULL), 0);
	cr_expect_geq(e.tpot_s, g.tpot_s);
	/* batch-1 decode kernels are shorter than the 8 us host cost, so the
	 * host paces the step: at least kernels x host cost */
	cr_expect_geq(e.tpot_s, (double)e.decode.cost.kernels * cfg.params.eager_host_s * 0.999);
}

Test(infer, impossible_requests)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_result r;
	struct llmsim_err e = {0};
	load("405b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	struct llmsim_infer_req req = {.batch = 1, .prompt = 128, .output = 128};
	cr_expect_eq(llmsim_infer_run(&cfg, &req, &r, &e), LLMSIM_ENOFIT);
	cr_expect(strstr(e.msg, "does not fit") != NULL, "%s", e.msg);
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	req.batch = 0;
	cr_expect_eq(llmsim_infer_run(&cfg, &req, &r, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "batch") != NULL, "%s", e.msg);
	/* Llama 3.1's window is 131072 tokens */
	req.batch = 1;
	req.prompt = 131000;
	req.output = 1000;
	cr_expect_eq(llmsim_infer_run(&cfg, &req, &r, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "exceeds") != NULL, "%s", e.msg);
	cfg.tp = 3;
	cr_expect_eq(llmsim_infer_cfg_check(&cfg, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "tp 3") != NULL, "%s", e.msg);
}

Test(infer, experts_touched)
{
	/* 8 experts, top 2: one token touches exactly 2; two tokens miss a
	 * given expert with probability (6/8)^2, so 8 (1 - 0.5625) = 3.5 */
	expect_close(llmsim_graph_experts_touched(1, 2, 8, 8), 2.0, 1e-12);
	expect_close(llmsim_graph_experts_touched(2, 2, 8, 8), 3.5, 1e-12);
	expect_close(llmsim_graph_experts_touched(1000, 2, 8, 8), 8.0, 1e-9);
	/* DeepSeek-V3, 256 experts, top 8, 32 per rank (ep 8), batch 16:
	 * 32 (1 - (248/256)^16) = 32 x 0.3982 = 12.74 */
	expect_close(llmsim_graph_experts_touched(16, 8, 256, 32), 12.743, 1e-3);
}

Test(infer, moe_and_mla_steps_price)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	struct llmsim_infer_result r;
	struct llmsim_err e = {0};
	load("mixtral-8x7b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	cfg.tp = 2;
	cfg.ep = 2;
	struct llmsim_infer_req req = {.batch = 4, .prompt = 512, .output = 32};
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &r, &e), 0, "%s", e.msg);
	cr_expect_gt(r.tpot_s, 0);
	load("deepseek-v3", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	cfg.tp = 8;
	cfg.weight_dtype = LLMSIM_DT_FP8;
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &r, &e), 0, "%s", e.msg);
	/* decode reads the latent cache: far fewer KV bytes than weights */
	cr_expect_lt(r.decode.cost.bytes[LLMSIM_BYTES_KV], r.decode.cost.bytes[LLMSIM_BYTES_WEIGHTS]);
}

Test(infer, verify_cost_grows_with_tokens)
{
	struct llmsim_model m;
	struct llmsim_infer_cfg cfg;
	load("8b", &m);
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	struct llmsim_step_cost one, five;
	for (int b = 1; b <= 128; b *= 128) {
		struct llmsim_step s1 = {.decode_seqs = b, .q_len = 1, .decode_kv_len = 2048, .logits = b};
		struct llmsim_step s5 = {.decode_seqs = b, .q_len = 5, .decode_kv_len = 2052, .logits = 5 * b};
		cr_assert_eq(llmsim_infer_step(&cfg, &s1, &one, NULL), 0);
		cr_assert_eq(llmsim_infer_step(&cfg, &s5, &five, NULL), 0);
		cr_expect_geq(five.time_s, one.time_s);
		/* at batch 1 the weights dominate: 5 tokens cost about one */
		if (b == 1)
			cr_expect_lt(five.time_s / one.time_s, 1.25);
		/* at 128 x 5 = 640 tokens the GEMMs approach compute: clearly more */
		else
			cr_expect_gt(five.time_s / one.time_s, 1.3, "ratio %g", five.time_s / one.time_s);
	}
}

Test(infer, torch_measurements)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/calib/data/torch_steps.json", LLMSIM_SOURCE_DIR);
	if (access(path, R_OK))
		cr_skip_test("calib/data/torch_steps.json is absent (written by the lead's H200 run)");
	static struct llmsim_steps_file f;
	static struct llmsim_steps_cmp c;
	struct llmsim_model m;
	struct llmsim_err e = {0};
	load("8b", &m);
	cr_assert_eq(llmsim_steps_load(path, &f, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_steps_compare(&f, &m, &h200, &c, &e), 0, "%s", e.msg);
	cr_assert_gt(c.n, 0);
	for (int i = 0; i < c.n; i++)
		cr_log_info("%s batch %lld %s %lld: measured %.4g s, predicted %.4g s (%+.1f%%)",
			    c.pt[i].meas.decode ? "decode" : "prefill", (long long)c.pt[i].meas.batch,
			    c.pt[i].meas.decode ? "context" : "prompt", (long long)c.pt[i].meas.tokens,
			    c.pt[i].meas.measured_s, c.pt[i].predicted_s, c.pt[i].err_pct);
	/* Prefill is GPU-bound: the brief's serving target is 15%, now that
	 * the program's own kernels (RoPE, SiLU and the KV copies unfused, on
	 * strided views) are what is priced. Decode steps of that script are
	 * host-bound (about 94 kernel launches per 4-layer step at ~27 us each
	 * on the calibration machine's CPU, read off
	 * calib/data/trace_llama.txt.gz): they are logged above, not held to a
	 * GPU-model target. */
	double pe[LLMSIM_STEPS_MAX];
	size_t n = 0;
	for (int i = 0; i < c.n; i++)
		if (!c.pt[i].meas.decode)
			pe[n++] = fabs(c.pt[i].err_pct);
	cr_assert_gt(n, 0, "no prefill phase in %s", path);
	double med = llmsim_quantile(pe, n, 0.5);
	cr_expect_lt(med, 15.0, "prefill median |error| %.1f%%", med);

	/* the file's model must be the one given */
	load("70b", &m);
	cr_expect_eq(llmsim_steps_compare(&f, &m, &h200, &c, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "hidden 4096"), "%s", e.msg);
}

Test(infer, spec_verify_uses_the_gpu_model)
{
	struct llmsim_model m;
	load("8b", &m);
	struct llmsim_spec_cfg cfg = {.kind = LLMSIM_SPEC_MEDUSA, .gamma = 3, .nalpha = 1,
				      .alpha = {0.0}, .tree = 16, .batch = 1, .context = 512};
	llmsim_infer_cfg_init(&cfg.target, &m, &h200);
	struct llmsim_spec_result r;
	cr_assert_eq(llmsim_spec_run(&cfg, &r, NULL), 0);
	/* alpha 0: one token per step, so speculation only costs: speedup < 1 */
	expect_close(r.expected_tokens_per_step, 1.0, 1e-12);
	cr_expect_lt(r.speedup, 1.0);
	expect_close(r.tpot_s, r.draft_s + r.verify_s, 1e-12);
	cfg.alpha[0] = 1.5;
	cr_expect_eq(llmsim_spec_run(&cfg, &r, NULL), LLMSIM_EINVAL);
}

