/*
 * cmd_model.c - `llmsim model list` and `llmsim model show NAME|PATH`:
 * a model's shape, parameter counts (against the published size), weight
 * bytes per data type, KV cache per token, FLOPs per token, and with
 * --gpu how many GPUs its weights alone need.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/paths.h"
#include "base/fmt.h"
#include "base/json.h"
#include "hw/gpu.h"
#include "base/datafind.h"
#include "models/hf.h"
#include "models/model.h"
#include "args.h"
#include "commands.h"
#include "common.h"

static const char model_about[] =
	"Model descriptions: models/*.yaml in the data folder, or a Hugging Face\n"
	"config.json.\n\n"
	"verbs:\n"
	"  list            every shipped model with its size and KV cache per token\n"
	"  show NAME|PATH  one model: shape, parameters, weight and KV bytes, FLOPs,\n"
	"                  and with --gpu the GPUs its weights need\n"
	"  import CONFIG   a Hugging Face config.json as llmsim model YAML, on stdout\n\n"
	"NAME is a file stem, a name or an alias (8b, 70b, 405b are Llama 3.1);\n"
	"a name containing '/' or ending in .yaml is a file, one ending in .json a\n"
	"config.json (every command's --model takes one as it is).";

static const char *const mlp_name[] = {"gated", "plain"};
static const char *const act_name[] = {"SiLU", "GELU", "ReLU"};
static const char *const norm_name[] = {"RMSNorm", "LayerNorm"};
static const char *const pos_name[] = {"RoPE", "learned", "none"};

/* ---- list ---- */

static int list_row(struct cli_list *c, const char *path)
{
	struct llmsim_model m;
	struct llmsim_params p;
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], k[LLMSIM_FMT_MAX];
	if (llmsim_model_load_file(path, &m, &c->err))
		return -1;
	llmsim_model_params(&m, &p);
	double kv = llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16);
	if (c->json) {
		llmsim_json_obj_begin(&c->j, NULL);
		llmsim_json_str(&c->j, "name", m.name);
		llmsim_json_str(&c->j, "full_name", m.full_name);
		llmsim_json_str(&c->j, "path", m.path);
		llmsim_json_str(&c->j, "attention", llmsim_attn_kind_name(m.attention));
		llmsim_json_int(&c->j, "layers", m.layers);
		llmsim_json_int(&c->j, "hidden", m.hidden);
		llmsim_json_num(&c->j, "params", p.total);
		llmsim_json_num(&c->j, "active_params", p.active);
		llmsim_json_num(&c->j, "kv_bytes_per_token_bf16", kv);
		llmsim_json_obj_end(&c->j);
		return 0;
	}
	char layers[16], hidden[16], alias[96] = "";
	snprintf(layers, sizeof layers, "%d", m.layers);
	snprintf(hidden, sizeof hidden, "%d", m.hidden);
	for (int i = 0; i < m.naliases; i++) {
		size_t u = strlen(alias);
		snprintf(alias + u, sizeof alias - u, "%s%s", i ? ", " : "", m.aliases[i]);
	}
	const char *cells[] = {m.name, m.full_name, llmsim_attn_kind_name(m.attention), layers,
			       hidden, llmsim_fmt_count(a, p.total), llmsim_fmt_count(b, p.active),
			       llmsim_fmt_bytes(k, kv), alias};
	llmsim_table_row(&c->t, cells);
	return 0;
}

static int model_list(int argc, char **argv)
{
	static const char *const head[] = {"<name", "<full name", "<attn", "layers", "hidden",
					   "params", "active", "KV/token", "<aliases"};
	return cli_list_verb("llmsim model", "List the shipped models (KV cache per token in bf16).",
			     argc, argv, head, 9, llmsim_model_list, list_row);
}

/* ---- show ---- */

static const enum llmsim_dtype weight_dts[] = {LLMSIM_DT_FP32, LLMSIM_DT_BF16, LLMSIM_DT_FP8,
					       LLMSIM_DT_INT4, LLMSIM_DT_FP4};
#define NWDT (int)(sizeof weight_dts / sizeof weight_dts[0])

struct show {
	struct llmsim_model m;
	struct llmsim_params p;
	struct llmsim_gpu g;
	int has_gpu;
	enum llmsim_dtype kv_dt, w_dt;
	int64_t ctx;
	int ctx_given;
	double kv, flops, attn_flops;
};

static double gpus_for(const struct show *s, enum llmsim_dtype dt)
{
	return ceil(s->p.total * llmsim_dtype_bytes(dt) / s->g.hbm_bytes);
}

static void show_json(const struct show *s)
{
	const struct llmsim_model *m = &s->m;
	const struct llmsim_params *p = &s->p;
	struct llmsim_json j;
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "name", m->name);
	llmsim_json_str(&j, "full_name", m->full_name);
	llmsim_json_str(&j, "path", m->path);
	llmsim_json_str(&j, "source", m->source);
	llmsim_json_str(&j, "notes", m->notes);
	llmsim_json_str_list(&j, "extra_keys", m->extra_keys); /* "..." when cut */
	llmsim_json_int(&j, "layers", m->layers);
	llmsim_json_int(&j, "hidden", m->hidden);
	llmsim_json_int(&j, "heads", m->heads);
	llmsim_json_int(&j, "kv_heads", m->kv_heads);
	llmsim_json_int(&j, "head_dim", m->head_dim);
	llmsim_json_int(&j, "vocab", m->vocab);
	llmsim_json_int(&j, "intermediate", m->intermediate);
	llmsim_json_int(&j, "max_seq", m->max_seq);
	llmsim_json_str(&j, "attention", llmsim_attn_kind_name(m->attention));
	llmsim_json_str(&j, "mlp", mlp_name[m->mlp]);
	llmsim_json_bool(&j, "tied_embeddings", m->tied_embeddings);
	if (m->has_mla) {
		llmsim_json_obj_begin(&j, "mla");
		llmsim_json_int(&j, "q_lora_rank", m->mla.q_lora_rank);
		llmsim_json_int(&j, "kv_lora_rank", m->mla.kv_lora_rank);
		llmsim_json_int(&j, "qk_nope_head_dim", m->mla.qk_nope_head_dim);
		llmsim_json_int(&j, "qk_rope_head_dim", m->mla.qk_rope_head_dim);
		llmsim_json_int(&j, "v_head_dim", m->mla.v_head_dim);
		llmsim_json_obj_end(&j);
	}
	if (m->has_moe) {
		llmsim_json_obj_begin(&j, "moe");
		llmsim_json_int(&j, "experts", m->moe.experts);
		llmsim_json_int(&j, "shared_experts", m->moe.shared_experts);
		llmsim_json_int(&j, "top_k", m->moe.top_k);
		llmsim_json_int(&j, "expert_intermediate", m->moe.expert_intermediate);
		llmsim_json_int(&j, "dense_layers", m->moe.dense_layers);
		llmsim_json_int(&j, "layer_freq", m->moe.layer_freq);
		llmsim_json_int(&j, "max_nodes", m->moe.max_nodes);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_num(&j, "params", p->total);
	llmsim_json_num(&j, "active_params", p->active);
	if (m->params_published > 0)
		llmsim_json_num(&j, "params_published", m->params_published);
	llmsim_json_obj_begin(&j, "params_breakdown");
	llmsim_json_num(&j, "embedding", p->embedding);
	llmsim_json_num(&j, "lm_head", p->lm_head);
	llmsim_json_num(&j, "attention", p->attention);
	llmsim_json_num(&j, "mlp_dense", p->mlp_dense);
	llmsim_json_num(&j, "mlp_experts", p->mlp_experts);
	llmsim_json_num(&j, "mlp_shared", p->mlp_shared);
	llmsim_json_num(&j, "router", p->router);
	llmsim_json_num(&j, "norms", p->norms);
	llmsim_json_num(&j, "mtp", p->mtp);
	llmsim_json_obj_end(&j);
	llmsim_json_obj_begin(&j, "weight_bytes_by_dtype");
	for (int i = 0; i < NWDT; i++)
		llmsim_json_num(&j, llmsim_dtype_name(weight_dts[i]),
				p->total * llmsim_dtype_bytes(weight_dts[i]));
	llmsim_json_obj_end(&j);
	llmsim_json_str(&j, "weight_dtype", llmsim_dtype_name(s->w_dt));
	llmsim_json_str(&j, "kv_dtype", llmsim_dtype_name(s->kv_dt));
	llmsim_json_num(&j, "kv_bytes_per_token", s->kv);
	llmsim_json_int(&j, "ctx", s->ctx);
	llmsim_json_num(&j, "flops_per_token", s->flops);
	llmsim_json_num(&j, "attention_flops_per_token", s->attn_flops);
	if (s->has_gpu) {
		llmsim_json_obj_begin(&j, "gpu");
		llmsim_json_str(&j, "name", s->g.name);
		llmsim_json_num(&j, "hbm_bytes", s->g.hbm_bytes);
		double wb = p->total * llmsim_dtype_bytes(s->w_dt);
		llmsim_json_num(&j, "weight_bytes", wb);
		llmsim_json_num(&j, "gpus_for_weights", gpus_for(s, s->w_dt));
		llmsim_json_num(&j, "weight_fraction_of_gpu", wb / s->g.hbm_bytes);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

static void line(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(const char *key, const char *fmt, ...)
{
	va_list ap;
	printf("  %-18s ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void show_human(const struct show *s)
{
	const struct llmsim_model *m = &s->m;
	const struct llmsim_params *p = &s->p;
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX];

	printf("%s (%s)\n", m->full_name, m->name);
	printf("source: %s\n", m->source);
	printf("file:   %s\n", llmsim_data_rel(m->path));
	if (m->notes[0])
		printf("notes:  %s\n", m->notes);
	if (m->nextra)
		printf("extra:  %d key%s llmsim does not use: %s\n", m->nextra,
		       m->nextra == 1 ? "" : "s", m->extra_keys);
	putchar('\n');

	printf("shape\n");
	line("layers", "%d", m->layers);
	line("hidden", "%d", m->hidden);
	if (m->has_mla)
		line("attention", "MLA, %d heads (q rank %d, kv rank %d, qk %d+%d, v %d)", m->heads,
		     m->mla.q_lora_rank, m->mla.kv_lora_rank, m->mla.qk_nope_head_dim,
		     m->mla.qk_rope_head_dim, m->mla.v_head_dim);
	else
		line("attention", "%s: %d query heads, %d KV head%s (%d queries each), head dim %d",
		     llmsim_attn_kind_name(m->attention), m->heads, m->kv_heads,
		     m->kv_heads == 1 ? "" : "s", m->heads / m->kv_heads, m->head_dim);
	line("MLP", "%s %s, width %d", mlp_name[m->mlp], act_name[m->activation], m->intermediate);
	if (m->has_moe)
		line("MoE", "%d routed experts (top %d) + %d shared, width %d; %d dense layers first",
		     m->moe.experts, m->moe.top_k, m->moe.shared_experts,
		     m->moe.expert_intermediate, m->moe.dense_layers);
	line("vocabulary", "%d%s", m->vocab, m->tied_embeddings ? " (LM head tied)" : "");
	line("norm, position", "%s, %s", norm_name[m->norm], pos_name[m->position]);
	line("max context", "%d tokens", m->max_seq);
	if (m->mtp_layers)
		line("MTP modules", "%d", m->mtp_layers);
	printf("\n");

	printf("parameters\n");
	line("total", "%s (%.0f)", llmsim_fmt_count(a, p->total), p->total);
	if (m->params_published > 0)
		line("published", "%s (counted %+.2f%%)", llmsim_fmt_count(b, m->params_published),
		     100 * (p->total - m->params_published) / m->params_published);
	line("active per token", "%s (%s of total)", llmsim_fmt_count(a, p->active),
	     llmsim_fmt_pct(b, p->active / p->total));
	if (p->mtp > 0)
		line("MTP (not in total)", "%s", llmsim_fmt_count(a, p->mtp));
	printf("\n");

	static const char *const bh[] = {"<part", "params", "share"};
	struct llmsim_table t;
	llmsim_table_init(&t, 3, bh);
	const struct {
		const char *name;
		double v;
	} parts[] = {
		{"embedding", p->embedding}, {"attention", p->attention},
		{"MLP (dense)", p->mlp_dense}, {"MLP (routed experts)", p->mlp_experts},
		{"MLP (shared experts)", p->mlp_shared}, {"router", p->router},
		{"norms", p->norms}, {"LM head", p->lm_head},
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		if (parts[i].v <= 0)
			continue;
		llmsim_table_rowf(&t, "%s\t%s\t%s", parts[i].name, llmsim_fmt_count(a, parts[i].v),
				  llmsim_fmt_pct(b, parts[i].v / p->total));
	}
	printf("parameter breakdown\n");
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	printf("\n");

	static const char *const wh[] = {"<weights", "bytes", "GPUs", "of one GPU"};
	int ncol = s->has_gpu ? 4 : 2;
	llmsim_table_init(&t, ncol, wh);
	for (int i = 0; i < NWDT; i++) {
		double wb = p->total * llmsim_dtype_bytes(weight_dts[i]);
		char name[32], n[16];
		snprintf(name, sizeof name, "%s%s", llmsim_dtype_name(weight_dts[i]),
			 weight_dts[i] == s->w_dt ? " *" : "");
		snprintf(n, sizeof n, "%.0f", s->has_gpu ? gpus_for(s, weight_dts[i]) : 0);
		const char *cells[] = {name, llmsim_fmt_bytes(a, wb), n,
				       s->has_gpu ? llmsim_fmt_pct(c, wb / s->g.hbm_bytes) : ""};
		llmsim_table_row(&t, cells);
	}
	if (s->has_gpu)
		printf("weights on %s (%s HBM each; * = --weight-dtype)\n", s->g.name,
		       llmsim_fmt_bytes(a, s->g.hbm_bytes));
	else
		printf("weights by data type (* = --weight-dtype; --gpu NAME for GPU counts)\n");
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	printf("\n");

	printf("per token\n");
	line("KV cache", "%s in %s (%.0f B, all layers)", llmsim_fmt_bytes(a, s->kv),
	     llmsim_dtype_name(s->kv_dt), s->kv);
	line("KV at max context", "%s per sequence of %d tokens",
	     llmsim_fmt_bytes(b, s->kv * m->max_seq), m->max_seq);
	line("forward FLOPs", "%s at context %lld%s, attention %s of it",
	     llmsim_fmt_flops(a, s->flops), (long long)s->ctx,
	     s->ctx_given ? "" : " (the default; --ctx N)", llmsim_fmt_flops(c, s->attn_flops));
	if (s->has_gpu) {
		double wb = p->total * llmsim_dtype_bytes(s->w_dt);
		double left = s->g.hbm_bytes - wb;
		if (left > 0)
			line("KV room on 1 GPU", "%s after %s weights: %.0f tokens",
			     llmsim_fmt_bytes(a, left), llmsim_dtype_name(s->w_dt), floor(left / s->kv));
		else
			line("weights alone", "need %.0f x %s (%s weights)", gpus_for(s, s->w_dt),
			     s->g.name, llmsim_dtype_name(s->w_dt));
	}
}

static int model_show(int argc, char **argv)
{
	struct show s = {0};
	const char *gpu = NULL;
	int json = 0, npos = 0, kv_i = 0, w_i = 0;
	char *pos[1];
	s.ctx = 4096;
	const struct llmsim_opt opts[] = {
		{"gpu", LLMSIM_ARG_STRING, &gpu, "NAME", "GPU for the weights-fit figures", 0, NULL, NULL},
		{"kv-dtype", LLMSIM_ARG_CHOICE, &kv_i, NULL, "KV-cache data type (default bf16)", 0,
		 cli_kvdt_names, NULL},
		{"weight-dtype", LLMSIM_ARG_CHOICE, &w_i, NULL, "weight data type (default bf16)", 0,
		 cli_wdt_names, NULL},
		{"ctx", LLMSIM_ARG_I64, &s.ctx, "N", "context length for FLOPs per token (default 4096)",
		 0, NULL, &s.ctx_given},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	const int nopts = (int)(sizeof opts / sizeof opts[0]);
	int rc = llmsim_args_parse("llmsim model show", "NAME|PATH [options]",
				   "Show a model's shape, parameters, weight and KV bytes and FLOPs.",
				   argc - 1, argv + 1, opts, nopts, pos, 1, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (npos != 1)
		return llmsim_args_error("llmsim model show",
					 "expected a model name or file (try 'llmsim model list')");
	struct llmsim_err err = {0};
	if (llmsim_model_load(pos[0], &s.m, &err)) {
		fprintf(stderr, "llmsim model show: %s\n", err.msg);
		return 1;
	}
	if (gpu) {
		if (llmsim_gpu_load(gpu, &s.g, &err)) {
			fprintf(stderr, "llmsim model show: %s\n", err.msg);
			return 1;
		}
		s.has_gpu = 1;
	}
	s.kv_dt = cli_kvdt_vals[kv_i];
	s.w_dt = cli_wdt_vals[w_i];
	llmsim_model_params(&s.m, &s.p);
	s.kv = llmsim_model_kv_bytes_per_token(&s.m, s.kv_dt);
	s.flops = llmsim_model_flops_per_token(&s.m, s.ctx);
	s.attn_flops = s.flops - llmsim_model_flops_per_token(&s.m, 0);
	if (json)
		show_json(&s);
	else
		show_human(&s);
	return 0;
}

/* ---- import ---- */

static int model_import(int argc, char **argv)
{
	const char *cmd = "llmsim model import", *name = NULL, *as = NULL;
	int npos = 0, json = 0;
	char *pos[1];
	const struct llmsim_opt opts[] = {
		{"name", LLMSIM_ARG_STRING, &name, "NAME",
		 "the model's name (default: from _name_or_path, the folder or the file)", 0, NULL,
		 NULL},
		{"as", LLMSIM_ARG_STRING, &as, "TYPE",
		 "read an unknown model_type as this one (llama, ...)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL,
		 "JSON on stdout: the name, model_type, the YAML text, the keys not used", 0, NULL,
		 NULL},
	};
	char about[768];
	snprintf(about, sizeof about,
		 "Write a Hugging Face config.json as an llmsim model description on stdout:\n"
		 "  llmsim model import config.json > my.yaml\n"
		 "Each value names the config key it came from; keys llmsim does not use\n"
		 "(rope_theta, rms_norm_eps, ...) are kept under 'extra:' and listed on\n"
		 "stderr, with what the description leaves out (notes). model_type: %s.",
		 llmsim_hf_known_types());
	int rc = llmsim_args_parse(cmd, "CONFIG.json [--name NAME] [--as TYPE] [--json]", about,
				   argc - 1, argv + 1, opts, 3, pos, 1, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (npos != 1)
		return llmsim_args_error(cmd, "expected the config.json to import");
	if (name && !llmsim_data_name_ok(name))
		return llmsim_args_error(cmd, "--name: '%s' is not a name (letters, digits, '.', '_', '-')",
					 name);
	struct llmsim_model m;
	struct llmsim_hf_info info;
	struct llmsim_err err = {0};
	if (llmsim_model_from_hf(pos[0], name, as, &m, &info, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "name", m.name);
		llmsim_json_str(&j, "model_type", info.model_type);
		llmsim_json_str(&j, "architecture", info.architecture);
		llmsim_json_str(&j, "yaml", info.yaml);
		llmsim_json_str_list(&j, "extra_keys", m.nextra ? m.extra_keys : "");
		llmsim_json_str(&j, "notes", m.notes);
		cli_json_end(&j);
	} else {
		fputs(info.yaml, stdout);
	}
	if (m.nextra)
		fprintf(stderr, "%s: %d key%s not used (kept under 'extra:'): %s\n", cmd, m.nextra,
			m.nextra == 1 ? "" : "s", m.extra_keys);
	if (m.notes[0])
		fprintf(stderr, "%s: note: %s\n", cmd, m.notes);
	llmsim_hf_info_release(&info);
	return 0;
}

int cmd_model(int argc, char **argv, const struct cli_setup *s)
{
	(void)s; /* no model or GPU of its own: its verbs load theirs */
	if (argc >= 2 && !strcmp(argv[1], "import"))
		return model_import(argc - 1, argv + 1);
	if (argc < 2)
		return llmsim_args_error("llmsim model", "a verb is required (list|show|import)");
	return cli_list_show("llmsim model", model_about, argc, argv, model_list, model_show);
}
