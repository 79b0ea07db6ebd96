/*
 * hf.h - a Hugging Face config.json read as an llmsim model.
 *
 * The architectures read: Llama, Mistral, Mixtral, Qwen2, Gemma (and
 * Gemma 2), DeepSeek V2/V3 (MLA attention, DeepSeekMoE experts, MTP
 * modules), GPT-2 and GPTBigCode (StarCoder), and OPT, by `model_type`
 * (or the first `architectures` entry when it is absent). Each maps the
 * config's keys onto struct llmsim_model with the defaults of its
 * transformers configuration class (tie_word_embeddings, num_key_value_heads,
 * head_dim, ...). Keys llmsim does not need (rope_theta, rms_norm_eps,
 * token ids, ...) are accepted and listed in m->extra_keys; keys that
 * change what a model costs but that llmsim does not model (a sliding
 * window, an o_proj bias, a quantization config) are said in m->notes.
 * A missing key is an error naming it; an unknown model_type is an error
 * naming the first Llama-style key the config lacks, or, when it has them
 * all, asking for `as` ("llama") to read it as a Llama-style decoder.
 */
#ifndef LLMSIM_HF_H
#define LLMSIM_HF_H

#include <stddef.h>
#include "model.h"

/* Where one field of the model came from, for `llmsim model import`. */
struct llmsim_hf_origin {
	const char *field;       /* llmsim key: "layers", "moe.top_k" */
	char from[96];           /* "num_hidden_layers", "hidden_size / num_attention_heads" */
};

#define LLMSIM_HF_MAX_ORIGINS 40

/* What an import found besides the model. `yaml` holds the model
 * description as llmsim YAML (what `llmsim model import` prints: each value
 * with the key it came from, the notes, the unused keys under `extra:`);
 * release it with llmsim_hf_info_release. */
struct llmsim_hf_info {
	char model_type[48];
	char architecture[96];   /* architectures[0], "" when absent */
	char name_or_path[160];  /* _name_or_path, "" when absent */
	struct llmsim_hf_origin origin[LLMSIM_HF_MAX_ORIGINS];
	int norigins;
	char *yaml;
};

/* 1 if path names a config.json: it ends in ".json" (any case). */
int llmsim_hf_is_config(const char *path);

/* Read the config.json at path into m (m->name from `name` when non-NULL,
 * else from _name_or_path or the file's folder or stem; m->path = path).
 * as: NULL, or a model_type to read an unknown one as ("llama"). info may
 * be NULL. Errors are "path:line:col: message". */
int llmsim_model_from_hf(const char *path, const char *name, const char *as,
			 struct llmsim_model *m, struct llmsim_hf_info *info,
			 struct llmsim_err *err);

/* The same on len bytes at buf; `path` names them in messages. */
int llmsim_model_from_hf_buf(const char *buf, size_t len, const char *path, const char *name,
			     const char *as, struct llmsim_model *m, struct llmsim_hf_info *info,
			     struct llmsim_err *err);

void llmsim_hf_info_release(struct llmsim_hf_info *info); /* NULL is a no-op */

/* The model_type values read, ", "-separated, for messages and --help. */
const char *llmsim_hf_known_types(void);

#endif
