/*
 * model.h - a decoder-only transformer as data, and what follows from its
 * shape alone: parameter counts, KV-cache bytes per token, FLOPs per token.
 *
 * Dense, GQA/MQA, MLA (DeepSeek) and MoE (Mixtral, DeepSeekMoE) models are
 * all one struct. Nothing here knows about GPUs.
 */
#ifndef LLMSIM_MODEL_H
#define LLMSIM_MODEL_H

#include <stdint.h>
#include "base/dtype.h"
#include "base/err.h"

enum llmsim_attn_kind { LLMSIM_ATTN_MHA, LLMSIM_ATTN_GQA, LLMSIM_ATTN_MQA, LLMSIM_ATTN_MLA };
enum llmsim_mlp_kind { LLMSIM_MLP_GATED, LLMSIM_MLP_PLAIN };       /* SwiGLU vs up/act/down */
enum llmsim_act_kind { LLMSIM_ACT_SILU, LLMSIM_ACT_GELU, LLMSIM_ACT_RELU };
enum llmsim_norm_kind { LLMSIM_NORM_RMS, LLMSIM_NORM_LAYER };
enum llmsim_pos_kind { LLMSIM_POS_ROPE, LLMSIM_POS_LEARNED, LLMSIM_POS_NONE };

#define LLMSIM_MODEL_MAX_ALIASES 8

struct llmsim_mla {
	int q_lora_rank;        /* 0: queries projected directly (no q LoRA) */
	int kv_lora_rank;       /* latent KV width (the cache) */
	int qk_nope_head_dim;
	int qk_rope_head_dim;   /* decoupled rope key, shared across heads, cached */
	int v_head_dim;
};

struct llmsim_moe {
	int experts;            /* routed experts */
	int shared_experts;
	int top_k;              /* routed experts per token */
	int expert_intermediate;/* FFN width of one expert */
	int dense_layers;       /* the first this-many layers are dense MLPs */
	int layer_freq;         /* 1: every (non-dense) layer is MoE; 2: every other */
	int max_nodes;          /* node-limited routing: a token's routed experts lie on at
				 * most this many nodes of the EP group (DeepSeek-V3: 4);
				 * 0: unlimited */
};

struct llmsim_model {
	char name[64];
	char full_name[128];
	char path[512];
	char source[256];       /* where the dimensions come from */
	char aliases[LLMSIM_MODEL_MAX_ALIASES][32];
	int naliases;

	int layers;
	int hidden;
	int heads;
	int kv_heads;
	int head_dim;
	int vocab;
	int intermediate;       /* dense FFN width */
	int max_seq;
	enum llmsim_attn_kind attention;   /* derived from heads/kv_heads/mla */
	enum llmsim_mlp_kind mlp;
	enum llmsim_act_kind activation;
	enum llmsim_norm_kind norm;
	enum llmsim_pos_kind position;
	int tied_embeddings;
	int qkv_bias;           /* bias on q, k, v projections (Qwen) */
	int linear_bias;        /* bias on every linear layer (GPT-3, OPT) */
	int qk_norm;            /* RMSNorm of each query and key head before RoPE (Qwen3,
				 * OLMo 2): a head_dim weight each */
	int mtp_layers;         /* multi-token-prediction modules (DeepSeek-V3) */
	double params_published;/* the size the authors state, for checks (0: none) */

	int has_mla;
	struct llmsim_mla mla;
	int has_moe;
	struct llmsim_moe moe;

	int position_rows;      /* rows of a learned position table (OPT: max_seq + 2); 0 otherwise */

	/* What the description carries beyond the shape: the keys of its
	 * `extra:` map (or of a config.json, those llmsim does not use),
	 * ", "-separated and cut with "..." past the buffer; and `notes:`,
	 * what it leaves out ("" when none). */
	char extra_keys[512];
	int nextra;
	char notes[512];
};

/* Load a model by name, alias or path: a path ending in .json, or a folder
 * holding a config.json (a downloaded model), is a Hugging Face config
 * (models/hf.h); any other path or name model YAML (models/NAME.yaml in
 * the data folder). */
int llmsim_model_load(const char *name_or_path, struct llmsim_model *m,
		      struct llmsim_err *err);
/* A shipped model by its name or an alias only, never a path: for names
 * that come from data (a trace's "model NAME" range), so that a file's
 * author cannot make llmsim open a path of their choosing. */
int llmsim_model_load_named(const char *name, struct llmsim_model *m, struct llmsim_err *err);
int llmsim_model_load_file(const char *path, struct llmsim_model *m,
			   struct llmsim_err *err);
int llmsim_model_list(void (*fn)(const char *path, void *ctx), void *ctx,
		      struct llmsim_err *err);

const char *llmsim_attn_kind_name(enum llmsim_attn_kind k); /* "gqa" */

/* Whether layer l (0-based) is a mixture-of-experts layer: the model has a
 * moe section, l >= dense_layers and l % layer_freq == 0 (the rule of the
 * DeepSeek and Hugging Face MoE configs: first_k_dense_replace,
 * moe_layer_freq). Every part of llmsim counts MoE layers by this rule. */
int llmsim_model_is_moe_layer(const struct llmsim_model *m, int l);

/* MoE layers among layers [first, first + n). */
int llmsim_model_moe_layers(const struct llmsim_model *m, int first, int n);

/* Parameter counts (weights, excluding MTP modules unless stated). */
struct llmsim_params {
	double embedding;       /* token (+ learned position) embeddings */
	double lm_head;         /* 0 when tied */
	double attention;       /* all layers */
	double mlp_dense;       /* dense MLP layers */
	double mlp_experts;     /* all routed experts, all layers */
	double mlp_shared;      /* shared experts */
	double router;
	double norms;
	double mtp;             /* multi-token-prediction modules */
	double total;           /* sum of the above except mtp */
	double active;          /* per token: routed experts counted top_k/experts */
	double per_layer_attention; /* one layer */
};
void llmsim_model_params(const struct llmsim_model *m, struct llmsim_params *p);

/* KV-cache bytes per token summed over all layers, for the cache dtype:
 * MHA/GQA/MQA: 2 * kv_heads * head_dim; MLA: kv_lora_rank + rope dim. */
double llmsim_model_kv_bytes_per_token(const struct llmsim_model *m,
				       enum llmsim_dtype kv_dtype);

/* Forward FLOPs for one token at context length ctx (attention against ctx
 * previous tokens), including the LM head: 2 * active matmul params plus
 * attention score and value FLOPs. */
double llmsim_model_flops_per_token(const struct llmsim_model *m, int64_t ctx);

#endif
