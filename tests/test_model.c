/*
 * test_model.c - the model loader and what follows from a model's shape:
 * parameter counts against published sizes, exact counts by hand for a
 * fixture, KV bytes per token for MHA, GQA, MQA and MLA, FLOPs per token,
 * broken fixtures with exact positions, and `llmsim model`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/model.h"
#include "models/model_load.h"
#include "support.h"

#define FIX(buf, name) test_data(buf, sizeof buf, name)

static struct llmsim_model load(const char *name)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	int rc = llmsim_model_load(name, &m, &err);
	cr_assert_eq(rc, 0, "%s: %s", name, err.msg);
	return m;
}

static double total(const char *name)
{
	struct llmsim_model m = load(name);
	struct llmsim_params p;
	llmsim_model_params(&m, &p);
	return p.total;
}

/* ---- published sizes (model cards / papers), within 1% ---- */

Test(model, param_counts_match_published_sizes)
{
	const struct {
		const char *name;
		double published; /* the authors' figure */
	} cases[] = {
		{"llama-2-7b", 6.74e9},      /* Llama 2 model card */
		{"llama-2-13b", 13.02e9},    /* Llama 2 model card */
		{"llama-2-70b", 68.98e9},    /* Llama 2 model card */
		{"llama-3.1-8b", 8.03e9},    /* HF safetensors metadata */
		{"llama-3.1-70b", 70.55e9},  /* HF safetensors metadata */
		{"llama-3.1-405b", 405.85e9},/* HF safetensors metadata */
		{"llama-3.2-1b", 1.23e9},    /* model card */
		{"llama-3.2-3b", 3.21e9},    /* model card */
		{"mixtral-8x7b", 46.7e9},    /* Mixtral model card */
		{"qwen2.5-72b", 72.7e9},     /* Qwen2.5 model card */
		{"gpt-3-175b", 175.0e9},     /* Brown et al. Table 2.1 */
		{"gpt-22b", 22.0e9},         /* Korthikanti et al. 2022 Table 3 */
		{"mt-nlg-530b", 529.6e9},    /* Narayanan et al. 2021 Table 1 */
		{"gpt-1t", 1008.0e9},        /* Narayanan et al. 2021 Table 1 */
		{"opt-13b", 12.85e9},        /* released checkpoint */
		{"starcoder-15b", 15.5e9},   /* Li et al. 2023 */
		{"deepseek-v3", 671e9},      /* V3 report: 671B, MTP excluded */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_close(total(cases[i].name), cases[i].published, 0.01);
}

Test(model, exact_counts_of_released_checkpoints)
{
	/* Exact tensor-element totals of the released safetensors (model
	 * cards / HF "Safetensors: params"). */
	expect_close(total("llama-2-7b"), 6738415616.0, 1e-12);
	expect_close(total("llama-3.1-8b"), 8030261248.0, 1e-12);
	expect_close(total("llama-3.1-70b"), 70553706496.0, 1e-12);
	expect_close(total("mixtral-8x7b"), 46702792704.0, 1e-12);
}

static void check_one(const char *path, void *v)
{
	struct llmsim_model m;
	struct llmsim_params p;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_model_load_file(path, &m, &err), 0, "%s: %s", path, err.msg);
	cr_expect_gt(m.params_published, 0, "%s lacks params_published", path);
	llmsim_model_params(&m, &p);
	expect_close(p.total, m.params_published, 0.01);
	/* its name and every alias resolve back to it */
	for (int i = -1; i < m.naliases; i++) {
		struct llmsim_model r;
		const char *n = i < 0 ? m.name : m.aliases[i];
		cr_expect_eq(llmsim_model_load(n, &r, &err), 0, "%s: %s", n, err.msg);
		cr_expect_str_eq(r.name, m.name, "%s", n);
	}
	(*(int *)v)++;
}

/* Every shipped file loads, states its published size, and agrees with it. */
Test(model, every_shipped_file_loads_and_matches_its_size)
{
	struct llmsim_err err = {0};
	int n = 0;
	cr_assert_eq(llmsim_model_list(check_one, &n, &err), 0, "%s", err.msg);
	cr_expect_geq(n, 14);
}

Test(model, moe_active_params)
{
	struct llmsim_params p;
	struct llmsim_model m = load("mixtral-8x7b");
	llmsim_model_params(&m, &p);
	expect_close(p.active, 12.9e9, 0.01); /* Mixtral paper: 13B (model card 12.9B) active */

	m = load("deepseek-v3");
	llmsim_model_params(&m, &p);
	/* README_WEIGHTS: 36.6B activated, which leaves out the input
	 * embedding; llmsim counts it: + 129280 * 7168. */
	expect_close(p.active, 36.6e9 + 129280.0 * 7168, 0.01);
	/* MTP module: 11.5B unique parameters (README_WEIGHTS), not in total */
	expect_close(p.mtp, 11.5e9, 0.02);
	expect_close(p.embedding, 129280.0 * 7168, 0);
	/* router: h x experts on the 58 MoE layers */
	expect_close(p.router, 58.0 * 7168 * 256, 0);
}

Test(model, attention_kinds_are_derived)
{
	cr_expect_eq(load("llama-2-7b").attention, LLMSIM_ATTN_MHA);
	cr_expect_eq(load("70b").attention, LLMSIM_ATTN_GQA);
	cr_expect_eq(load("starcoder-15b").attention, LLMSIM_ATTN_MQA);
	cr_expect_eq(load("deepseek-v3").attention, LLMSIM_ATTN_MLA);
	cr_expect_str_eq(llmsim_attn_kind_name(LLMSIM_ATTN_GQA), "gqa");
}

Test(model, aliases_resolve_to_llama_3_1)
{
	cr_expect_str_eq(load("8b").name, "llama-3.1-8b");
	cr_expect_str_eq(load("70b").name, "llama-3.1-70b");
	cr_expect_str_eq(load("405B").name, "llama-3.1-405b");
	cr_expect_str_eq(load("Mixtral").name, "mixtral-8x7b");
	cr_expect_str_eq(load("LLAMA-2-7B").name, "llama-2-7b");
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_model_load("llama-9", &m, &err), LLMSIM_ENOENT);
	cr_expect_not_null(strstr(err.msg, "unknown model 'llama-9' (known: deepseek-v3, "), "%s",
			   err.msg);
}

/* ---- KV cache per token ---- */

Test(model, kv_bytes_per_token_by_hand)
{
	char p[512];
	/* MHA, Llama 2 7B: 2 (K,V) x 32 heads x 128 dims x 32 layers x 2 B */
	struct llmsim_model m = load("llama-2-7b");
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 2.0 * 32 * 128 * 32 * 2, 0);
	/* GQA, Llama 3.1 70B: 2 x 8 KV heads x 128 x 80 layers x 2 B; fp8 halves it */
	m = load("70b");
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 2.0 * 8 * 128 * 80 * 2, 0);
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_FP8), 2.0 * 8 * 128 * 80 * 1, 0);
	/* MQA fixture: 2 x 1 KV head x 64 x 4 layers x 2 B */
	m = load(FIX(p, "models/mqa-tiny.yaml"));
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), 2.0 * 1 * 64 * 4 * 2, 0);
	/* MLA, DeepSeek-V3: (kv_lora_rank 512 + rope 64) x 61 layers x 2 B */
	m = load("deepseek-v3");
	expect_close(llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16), (512.0 + 64) * 61 * 2, 0);
}

/* ---- the MQA fixture counted by hand ---- */

Test(model, fixture_params_and_flops_by_hand)
{
	char p[512];
	struct llmsim_model m = load(FIX(p, "models/mqa-tiny.yaml"));
	struct llmsim_params c;
	llmsim_model_params(&m, &c);
	/* embedding 1000 x 512 tokens + 1024 x 512 positions */
	expect_close(c.embedding, 1000.0 * 512 + 1024.0 * 512, 0);
	expect_close(c.lm_head, 0, 0); /* tied */
	/* per layer: q, o 512x512; k, v 512x64; biases 512 + 64 + 64 + 512 */
	double attn = 2 * 512.0 * 512 + 2 * 512.0 * 64 + 512 + 64 + 64 + 512;
	expect_close(c.per_layer_attention, attn, 0);
	expect_close(c.attention, 4 * attn, 0);
	/* plain MLP: 2 x 512 x 2048 weights + 2048 + 512 biases */
	double mlp = 2 * 512.0 * 2048 + 2048 + 512;
	expect_close(c.mlp_dense, 4 * mlp, 0);
	/* LayerNorm weight + bias: 2 per layer and a final one */
	expect_close(c.norms, (2 * 4 + 1) * 2 * 512.0, 0);
	expect_close(c.total, 11808256.0, 0); /* the sum of the above, added by hand */
	expect_close(c.active, c.total, 0);
	/* FLOPs at ctx 100: 2 x (4 x (589824 + 2097152) matmul weights + 1000 x 512
	 * LM head) + attention 2 x 8 heads x (64 + 64) x 100 x 4 layers */
	expect_close(llmsim_model_flops_per_token(&m, 100),
		     2 * (4 * (589824.0 + 2097152) + 512000) + 2.0 * 8 * 128 * 100 * 4, 0);
}

Test(model, flops_per_token_of_shipped_models)
{
	/* Llama 3.1 8B at ctx 0: 2 x (8,030,261,248 - 128256 x 4096 embedding
	 * - 65 x 4096 norms); the LM head is in. */
	struct llmsim_model m = load("8b");
	expect_close(llmsim_model_flops_per_token(&m, 0),
		     2 * (8030261248.0 - 128256.0 * 4096 - 65.0 * 4096), 1e-12);
	/* at ctx 8192: + 2 x 32 heads x (128 + 128) x 8192 x 32 layers */
	expect_close(llmsim_model_flops_per_token(&m, 8192) - llmsim_model_flops_per_token(&m, 0),
		     2.0 * 32 * 256 * 8192 * 32, 1e-12);
	/* DeepSeek-V3: 2 x 36.6B activated (README_WEIGHTS, no input embedding) */
	m = load("deepseek-v3");
	expect_close(llmsim_model_flops_per_token(&m, 0), 2 * 36.6e9, 0.01);
	/* MLA attention: scores over 128 + 64, values over 128 */
	expect_close(llmsim_model_flops_per_token(&m, 1000) - llmsim_model_flops_per_token(&m, 0),
		     2.0 * 128 * (192 + 128) * 1000 * 61, 1e-12);
}

/* ---- broken fixtures: exact messages (positions counted by hand) ---- */

static void expect_fail(const char *name, const char *msg)
{
	char p[512], want[1024];
	struct llmsim_model m;
	struct llmsim_err err = {0};
	FIX(p, name);
	cr_expect_neq(llmsim_model_load_file(p, &m, &err), 0, "%s loaded", name);
	snprintf(want, sizeof want, "%s:%s", p, msg);
	cr_expect_str_eq(err.msg, want);
}

Test(model, broken_fixtures_fail_with_position)
{
	expect_fail("models/bad-kv-heads.yaml", "8:11: 'kv_heads' (3) must divide 'heads' (8)");
	expect_fail("models/bad-unknown-key.yaml",
		    "7:1: unknown key 'hiden' (keys llmsim does not use go under 'extra:')");
	/* missing top-level key: reported at the document's first key */
	expect_fail("models/bad-missing-key.yaml", "2:1: missing key 'vocab'");
	expect_fail("models/bad-wrong-type.yaml", "13:6: 'mlp' must be one of gated, plain, got 'swiglu'");
	expect_fail("models/bad-zero-size.yaml", "5:9: 'layers' must be positive, got 0");
	expect_fail("models/bad-negative-size.yaml", "6:9: 'hidden' must be positive, got -512");
	expect_fail("models/bad-duplicate-key.yaml", "8:1: duplicate key 'heads'");
	expect_fail("models/bad-syntax.yaml", "12:14: mapping values are not allowed in this context");
	expect_fail("models/bad-tab.yaml",
		    "20:1: found character that cannot start any token while scanning for the next token");
	expect_fail("models/bad-empty.yaml", "1:1: empty document");
	expect_fail("models/bad-moe-top-k.yaml", "21:10: 'top_k' must not exceed 'experts'");
}

Test(model, buffer_entry_point_matches_file)
{
	const char y[] = "name: b\nfull_name: B\nsource: s\nlayers: 2\nhidden: 64\nheads: 4\n"
			 "kv_heads: 2\nhead_dim: 16\nvocab: 10\nintermediate: 128\nmax_seq: 8\n"
			 "mlp: gated\nactivation: silu\nnorm: rms\nposition: rope\n";
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load_buf(y, sizeof y - 1, "mem", &m, &err), 0, "%s", err.msg);
	cr_expect_eq(m.attention, LLMSIM_ATTN_GQA);
	struct llmsim_params p;
	llmsim_model_params(&m, &p);
	/* embed + head 2 x 10 x 64; per layer q,o 64x64, k,v 64x32, gated 3 x 64 x 128,
	 * 2 RMS norms of 64; final norm 64 */
	double layer = 2 * 64.0 * 64 + 2 * 64.0 * 32 + 3 * 64.0 * 128 + 2 * 64;
	expect_close(p.total, 2 * 640.0 + 2 * layer + 64, 0);
}

Test(model, absurd_sizes_are_rejected)
{
	/* 2^16 layers of hidden and MLP width 2^20, each within its bound:
	 * about 2^16 x 3 x 2^40 parameters, far past the 1e15 cap that keeps
	 * every derived count in 64 bits */
	const char y[] = "name: b\nfull_name: B\nsource: s\nlayers: 65536\n"
			 "hidden: 1048576\nheads: 4\nkv_heads: 2\nhead_dim: 16\nvocab: 10\n"
			 "intermediate: 1048576\nmax_seq: 8\nmlp: gated\nactivation: silu\nnorm: rms\n"
			 "position: rope\n";
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_model_load_buf(y, sizeof y - 1, "mem", &m, &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "more than 1e15") != NULL, "%s", err.msg);
}

/* ---- the CLI ---- */

static char out[1 << 16], errb[4096];

Test(model_cli, show_json_parses)
{
	cr_assert_eq(run_llmsim("model show 70b --json", out, sizeof out, errb, sizeof errb), 0,
		     "%s", errb);
	cr_expect(json_parses(out), "not JSON:\n%s", out);
	cr_expect_not_null(strstr(out, "\"kv_bytes_per_token\": 327680"), "%s", out);
	cr_expect_not_null(strstr(out, "\"attention\": \"gqa\""));
	cr_expect_not_null(strstr(out, "\"layers\": 80"));
	cr_expect_not_null(strstr(out, "\"params\": 70553706496"));
}

Test(model_cli, show_with_gpu)
{
	cr_assert_eq(run_llmsim("model show 70b --gpu h200 --json", out, sizeof out, errb,
				sizeof errb),
		     0, "%s", errb);
	/* bf16 weights 141.1 GB on a 150.75 GB H200: 1 GPU */
	cr_expect_not_null(strstr(out, "\"gpus_for_weights\": 1"), "%s", out);
	cr_assert_eq(run_llmsim("model show 405b --gpu h200 --json", out, sizeof out, errb,
				sizeof errb),
		     0, "%s", errb);
	/* 405.85e9 x 2 B = 811.7 GB over 150.75 GB: 6 GPUs */
	cr_expect_not_null(strstr(out, "\"gpus_for_weights\": 6"), "%s", out);
	cr_assert_eq(run_llmsim("model show 70b --gpu h200", out, sizeof out, errb, sizeof errb), 0,
		     "%s", errb);
	cr_expect_not_null(strstr(out, "(the default; --ctx N)"), "%s", out);
}

Test(model_cli, errors_are_one_line)
{
	cr_expect_eq(run_llmsim("model show 70b --frob", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_eq(count_lines(errb), 1, "%s", errb);
	cr_expect_eq(run_llmsim("model show llama-9", out, sizeof out, errb, sizeof errb), 1);
	cr_expect_eq(count_lines(errb), 1, "%s", errb);
	cr_expect_eq(strncmp(errb, "llmsim model show: unknown model 'llama-9'", 42), 0, "%s", errb);
	cr_expect_eq(out[0], 0, "no output on failure");
	cr_expect_eq(run_llmsim("model show 70b --kv-dtype fp4", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_eq(count_lines(errb), 1, "%s", errb);
}

Test(model_cli, list)
{
	cr_assert_eq(run_llmsim("model list", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect_not_null(strstr(out, "deepseek-v3"));
	cr_assert_eq(run_llmsim("model list --json", out, sizeof out, errb, sizeof errb), 0, "%s",
		     errb);
	cr_expect(json_parses(out), "not JSON:\n%s", out);
}

