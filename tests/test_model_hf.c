/*
 * test_model_hf.c - Hugging Face config.json in (models/hf.h): the
 * published config of every shipped model (tests/data/hf/, sources in
 * SOURCES.md) gives the shape and the parameter count of its shipped YAML;
 * configs of architectures llmsim ships no YAML for give their published
 * counts, derived by hand below; `model import` writes YAML that loads to
 * the same model, keeps unused keys under `extra:` and says what it leaves
 * out; a missing key, an unknown architecture and a bad value each fail
 * with one line naming the key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/hf.h"
#include "models/model_load.h"
#include "models/model.h"
#include "support.h"

static void hf_path(char *buf, size_t size, const char *stem)
{
	snprintf(buf, size, "%s/hf/%s.json", LLMSIM_TEST_DATA, stem);
}

static struct llmsim_model from_hf(const char *stem, struct llmsim_hf_info *info)
{
	char p[512];
	hf_path(p, sizeof p, stem);
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_from_hf(p, NULL, NULL, &m, info, &err), 0, "%s: %s", p, err.msg);
	return m;
}

static double params_of(const struct llmsim_model *m, double *mtp)
{
	struct llmsim_params p;
	llmsim_model_params(m, &p);
	if (mtp)
		*mtp = p.mtp;
	return p.total;
}

/* Every models/NAME.yaml has its published config.json in tests/data/hf/
 * under the same stem; read as it is, it must describe the same model. */
static void same_as_shipped(const char *path, void *ctx)
{
	const char *base = strrchr(path, '/') + 1;
	char stem[128];
	snprintf(stem, sizeof stem, "%.*s", (int)(strlen(base) - 5), base);
	char hp[512];
	hf_path(hp, sizeof hp, stem);
	cr_expect_eq(access(hp, R_OK), 0, "no published config.json for %s (want %s)", path, hp);
	if (access(hp, R_OK))
		return;
	struct llmsim_model y, h;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load_file(path, &y, &err), 0, "%s", err.msg);
	h = from_hf(stem, NULL);
	double ymtp, hmtp;
	double yp = params_of(&y, &ymtp), hp_ = params_of(&h, &hmtp);
	cr_expect_eq(yp, hp_, "%s: YAML %.0f params, config.json %.0f", stem, yp, hp_);
	cr_expect_eq(ymtp, hmtp, "%s: MTP params", stem);
	/* and the shape itself, field by field */
	cr_expect_eq(y.layers, h.layers, "%s layers", stem);
	cr_expect_eq(y.hidden, h.hidden, "%s hidden", stem);
	cr_expect_eq(y.heads, h.heads, "%s heads", stem);
	cr_expect_eq(y.kv_heads, h.kv_heads, "%s kv_heads", stem);
	cr_expect_eq(y.head_dim, h.head_dim, "%s head_dim", stem);
	cr_expect_eq(y.vocab, h.vocab, "%s vocab", stem);
	cr_expect_eq(y.attention, h.attention, "%s attention", stem);
	cr_expect_eq(y.tied_embeddings, h.tied_embeddings, "%s tied", stem);
	/* the KV cache per token follows from the shape too */
	expect_close(llmsim_model_kv_bytes_per_token(&h, LLMSIM_DT_BF16),
		     llmsim_model_kv_bytes_per_token(&y, LLMSIM_DT_BF16), 0);
	(*(int *)ctx)++;
}

Test(model_hf, config_of_every_shipped_model_gives_its_parameter_count)
{
	int n = 0;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_list(same_as_shipped, &n, &err), 0, "%s", err.msg);
	cr_expect_geq(n, 14, "every shipped model compared (%d)", n);
}

/* Architectures with no shipped YAML, against counts worked out by hand
 * from the config (the published figures of the released checkpoints). */
Test(model_hf, other_architectures_by_hand)
{
	/* GPT-2 (124M): wte 50257 x 768 + wpe 1024 x 768 = 39,383,808; a layer:
	 * c_attn 768 x 2304 + 2304, c_proj 768^2 + 768, c_fc 768 x 3072 + 3072,
	 * c_proj 3072 x 768 + 768, 2 LayerNorms 4 x 768 = 7,087,872; x 12 =
	 * 85,054,464; ln_f 1536; the head is tied: 124,439,808 (the figure
	 * GPT2LMHeadModel's parameters sum to) */
	struct llmsim_model m = from_hf("gpt2", NULL);
	cr_expect_eq(params_of(&m, NULL), 124439808.0);
	cr_expect_eq(m.mlp, LLMSIM_MLP_PLAIN);
	cr_expect_eq(m.position_rows, 1024);
	/* Mistral 7B: embed and head 2 x 32000 x 4096 = 262,144,000; a layer:
	 * q, o 2 x 4096^2, k, v 2 x 4096 x 1024, MLP 3 x 4096 x 14336, 2 norms
	 * of 4096 = 218,112,000; x 32 = 6,979,584,000; final norm 4096:
	 * 7,241,732,096 (the model card's 7.24B) */
	struct llmsim_hf_info info;
	m = from_hf("mistral-7b-v0.1", &info);
	cr_expect_eq(params_of(&m, NULL), 7241732096.0);
	cr_expect(strstr(m.notes, "sliding_window 4096"), "the window is said: %s", m.notes);
	llmsim_hf_info_release(&info);
	/* Gemma 7B: head_dim 256 (not 3072/16), tied: embed 256000 x 3072 =
	 * 786,432,000; a layer: q, k, v 3 x 3072 x 4096, o 4096 x 3072, MLP
	 * 3 x 3072 x 24576, 2 norms 6144 = 276,830,208; x 28 = 7,751,245,824;
	 * final norm 3072: 8,537,680,896 */
	m = from_hf("gemma-7b", NULL);
	cr_expect_eq(params_of(&m, NULL), 8537680896.0);
	cr_expect_eq(m.head_dim, 256);
	cr_expect_eq(m.activation, LLMSIM_ACT_GELU);
	/* DeepSeek-V2-Lite, q_lora_rank null (queries projected directly):
	 * embed and head 2 x 102400 x 2048 = 419,430,400; attention a layer:
	 * q 2048 x 16 x 192 + kv_a 2048 x (512 + 64) + kv norm 512 + kv_b 512 x
	 * 16 x (128 + 128) + o 16 x 128 x 2048 = 13,894,144, x 27 = 375,141,888;
	 * 1 dense MLP 3 x 2048 x 10944 = 67,239,936; 26 MoE layers of 64 routed
	 * + 2 shared experts of 3 x 2048 x 1408 and a 2048 x 64 router =
	 * 26 x (66 x 8,650,752 + 131,072) = 14,847,778,816; norms 55 x 2048 =
	 * 112,640: 15,706,484,224 (the model card's 15.7B) */
	m = from_hf("deepseek-v2-lite", NULL);
	cr_expect_eq(params_of(&m, NULL), 15706484224.0);
	cr_expect_eq(m.mla.q_lora_rank, 0);
	cr_expect_eq(m.moe.shared_experts, 2);
	cr_expect_eq(m.moe.dense_layers, 1);
}

Test(model_hf, import_writes_yaml_that_loads_to_the_same_model)
{
	struct llmsim_hf_info info;
	struct llmsim_model h = from_hf("deepseek-v3", &info);
	cr_assert_not_null(info.yaml);
	cr_expect_str_eq(info.model_type, "deepseek_v3");
	cr_expect_str_eq(info.architecture, "DeepseekV3ForCausalLM");
	/* each value says where it came from; unused keys are kept as they were */
	cr_expect(strstr(info.yaml, "layers: 61") && strstr(info.yaml, "# num_hidden_layers"));
	cr_expect(strstr(info.yaml, "# first_k_dense_replace"));
	cr_expect(strstr(info.yaml, "extra:") && strstr(info.yaml, "  rope_theta: 10000\n"));
	cr_expect(strstr(info.yaml, "  rope_scaling: {\"beta_fast\": 32,"), "%s", info.yaml);
	cr_expect(strstr(h.extra_keys, "rope_theta"), "%s", h.extra_keys);
	cr_expect(strstr(h.notes, "quant_method fp8"), "%s", h.notes);
	char path[] = "/tmp/llmsim-import-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, info.yaml, strlen(info.yaml)), (ssize_t)strlen(info.yaml));
	close(fd);
	struct llmsim_model y;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load_file(path, &y, &err), 0, "%s", err.msg);
	unlink(path);
	double ymtp, hmtp;
	cr_expect_eq(params_of(&y, &ymtp), params_of(&h, &hmtp));
	cr_expect_eq(ymtp, hmtp);
	cr_expect_str_eq(y.extra_keys, h.extra_keys);
	cr_expect_eq(y.nextra, h.nextra);
	cr_expect_str_eq(y.notes, h.notes);
	llmsim_hf_info_release(&info);
	llmsim_hf_info_release(NULL);
}

/* A config.json wherever --model takes a name, with the same errors. */
Test(model_hf, model_option_takes_a_config)
{
	char p[512];
	hf_path(p, sizeof p, "llama-3.1-8b");
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load(p, &m, &err), 0, "%s", err.msg);
	cr_expect_str_eq(m.name, "llama-3.1-8b");
	/* a downloaded model's folder, named by it */
	char dir[] = "/tmp/llmsim-hfdir-XXXXXX", cfg[256], cmd[1024];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "mkdir %s/Llama-3.1-8B && cp %s %s/Llama-3.1-8B/config.json", dir, p,
		 dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cfg, sizeof cfg, "%s/Llama-3.1-8B/", dir);
	struct llmsim_model f;
	cr_assert_eq(llmsim_model_load(cfg, &f, &err), 0, "%s", err.msg);
	cr_expect_str_eq(f.name, "llama-3.1-8b");
	cr_expect_eq(f.layers, m.layers);
	cr_expect_eq(llmsim_model_load(dir, &f, &err), LLMSIM_ENOENT, "a folder without a config");
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	cr_expect_eq(m.kv_heads, 8);
	cr_expect_eq(m.max_seq, 131072);
	char out[1 << 16], errb[2048], args[1024];
	snprintf(args, sizeof args, "infer --model %s --gpu h200 --batch 1 --prompt 128 --output 16 --json", p);
	cr_expect_eq(run_llmsim(args, out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect(json_parses(out), "%s", out);
	snprintf(args, sizeof args, "model import %s --name my-llama", p);
	cr_expect_eq(run_llmsim(args, out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect(strstr(out, "name: my-llama\n"), "%s", out);
	cr_expect(strstr(errb, "keys not used (kept under 'extra:'): "), "%s", errb);
	cr_expect(strstr(errb, "rope_theta"), "%s", errb);
}

static void expect_fail(const char *json, const char *want)
{
	struct llmsim_model m;
	struct llmsim_err err = {0};
	int rc = llmsim_model_from_hf_buf(json, strlen(json), "c.json", NULL, NULL, &m, NULL, &err);
	cr_expect_neq(rc, 0, "%s loaded", json);
	cr_expect_str_eq(err.msg, want, "for %s", json);
}

#define LLAMA_KEYS                                                                     \
	"\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "   \
	"\"intermediate_size\": 128, \"vocab_size\": 100, \"max_position_embeddings\": 64"

Test(model_hf, errors_name_the_key)
{
	expect_fail("{\"model_type\": \"llama\", \"hidden_size\": 64}",
		    "c.json:1:1: missing key 'num_hidden_layers' (model_type 'llama')");
	expect_fail("{\"model_type\": \"llama\", " LLAMA_KEYS ", \"num_key_value_heads\": 0}",
		    "c.json:1:193: 'num_key_value_heads' must be a positive integer, got 0");
	expect_fail("{\"model_type\": \"llama\", " LLAMA_KEYS ", \"hidden_act\": \"tanh\"}",
		    "c.json:1:184: 'hidden_act' is 'tanh': llmsim models silu, gelu (any gelu_*) and relu");
	expect_fail("{\"model_type\": \"llama\", " LLAMA_KEYS ", \"num_key_value_heads\": 3}",
		    "c.json: as llmsim reads it, 'kv_heads' (3) must divide 'heads' (4)");
	expect_fail("{\"model_type\": \"llama\", \"num_hidden_layers\": \"2\"}",
		    "c.json:1:46: 'num_hidden_layers' must be a positive integer, got a string");
	/* unknown architectures: the first Llama-style key it lacks */
	expect_fail("{\"model_type\": \"falcon\", \"hidden_size\": 4544, \"num_hidden_layers\": 32, "
		    "\"num_attention_heads\": 71, \"vocab_size\": 65024}",
		    "c.json:1:1: model_type 'falcon' is not one llmsim reads (llama, mistral, mixtral, "
		    "qwen2, qwen3, qwen3_moe, gemma, gemma2, deepseek_v2, deepseek_v3, gpt2, gpt_bigcode, opt); read as a "
		    "Llama-style decoder it lacks 'intermediate_size'");
	/* ... experts it would drop stop it ... */
	expect_fail("{\"model_type\": \"qwen2_moe\", " LLAMA_KEYS ", \"num_experts\": 60}",
		    "c.json:1:1: model_type 'qwen2_moe' is not one llmsim reads (llama, mistral, "
		    "mixtral, qwen2, qwen3, qwen3_moe, gemma, gemma2, deepseek_v2, deepseek_v3, gpt2, gpt_bigcode, opt), "
		    "and its keys num_experts describe experts or latent attention a Llama-style "
		    "reading would drop");
	/* ... and a complete one is read so only when asked (--as llama) */
	const char *phi = "{\"model_type\": \"phi3\", " LLAMA_KEYS "}";
	expect_fail(phi, "c.json:1:1: model_type 'phi3' is not one llmsim reads (llama, mistral, "
			 "mixtral, qwen2, qwen3, qwen3_moe, gemma, gemma2, deepseek_v2, deepseek_v3, gpt2, gpt_bigcode, "
			 "opt); its keys are a Llama-style decoder's: `llmsim model import --as llama` "
			 "reads it so (check the result)");
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_model_from_hf_buf(phi, strlen(phi), "c.json", NULL, "llama", &m, NULL,
					      &err), 0, "%s", err.msg);
	cr_expect(strstr(m.notes, "model_type 'phi3' read as 'llama'"), "%s", m.notes);
	expect_fail("[1]", "c.json:1:1: a config.json must be an object, not an array");
	expect_fail("{\"hidden_size\": 1}",
		    "c.json:1:1: missing key 'model_type' (and no 'architectures'): not a Hugging "
		    "Face model config?");
	expect_fail("{\"model_type\": \"opt\", \"num_hidden_layers\": 24, \"hidden_size\": 1024, "
		    "\"num_attention_heads\": 16, \"ffn_dim\": 4096, \"vocab_size\": 50272, "
		    "\"max_position_embeddings\": 2048, \"word_embed_proj_dim\": 512}",
		    "c.json:1:190: word_embed_proj_dim 512 differs from hidden_size 1024: OPT's "
		    "project_in/project_out layers are not modelled");
}

/* Without model_type, the architecture names the type (older configs). */
Test(model_hf, architectures_stand_in_for_model_type)
{
	const char *j = "{\"architectures\": [\"MistralForCausalLM\"], " LLAMA_KEYS "}";
	struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_hf_info info;
	cr_assert_eq(llmsim_model_from_hf_buf(j, strlen(j), "dir/my-model/config.json", NULL, NULL,
					      &m, &info, &err), 0, "%s", err.msg);
	cr_expect_str_eq(info.model_type, "mistral");
	cr_expect_str_eq(m.name, "my-model", "named by its folder");
	llmsim_hf_info_release(&info);
}

/* A model YAML carries unused keys under extra:, and names the place for
 * one at the top level. */
Test(model_hf, yaml_extra_map)
{
	const char *y = "name: t\nfull_name: T\nsource: s\nlayers: 2\nhidden: 64\nheads: 4\n"
			"kv_heads: 4\nhead_dim: 16\nvocab: 100\nintermediate: 128\nmax_seq: 64\n"
			"mlp: gated\nactivation: silu\nnorm: rms\nposition: rope\n"
			"extra:\n  rope_theta: 500000.0\n  rope_scaling: {factor: 8.0}\n";
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load_buf(y, strlen(y), "t.yaml", &m, &err), 0, "%s", err.msg);
	cr_expect_str_eq(m.extra_keys, "rope_theta, rope_scaling");
	cr_expect_eq(m.nextra, 2);
	char bad[1024];
	snprintf(bad, sizeof bad, "%.*srope_theta: 500000.0\n", (int)(strstr(y, "extra:") - y), y);
	cr_expect_neq(llmsim_model_load_buf(bad, strlen(bad), "t.yaml", &m, &err), 0);
	cr_expect_str_eq(err.msg, "t.yaml:16:1: unknown key 'rope_theta' (keys llmsim does not use "
				  "go under 'extra:')");
	snprintf(bad, sizeof bad, "%.*sextra: 3\n", (int)(strstr(y, "extra:") - y), y);
	cr_expect_neq(llmsim_model_load_buf(bad, strlen(bad), "t.yaml", &m, &err), 0);
	cr_expect_str_eq(err.msg, "t.yaml:16:8: 'extra' must be a mapping of keys llmsim does not use");
}
