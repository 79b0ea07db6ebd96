/*
 * fuzz_json.c - libFuzzer target for the JSON reader (base/jsonread.h)
 * and, on what it accepts, the Hugging Face config reader (models/hf.h).
 * A parse must either fail with a located message or give a tree whose
 * every node keeps the reader's promises (positions from 1:1, finite
 * numbers, exact integers, nesting within LLMSIM_JSON_MAX_NEST); a config
 * that converts must give a model of finite, positive size, and convert
 * again without the caller keeping its description (nothing leaks).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonread.h"
#include "models/hf.h"

static void walk(const struct llmsim_jnode *n, int depth)
{
	if (!n || depth > LLMSIM_JSON_MAX_NEST || n->line < 1 || n->col < 1)
		abort();
	switch (n->kind) {
	case LLMSIM_J_NULL:
	case LLMSIM_J_BOOL:
		break;
	case LLMSIM_J_NUM:
		if (!isfinite(n->num) || !n->str || (n->is_int && fabs((double)n->i - n->num) > fabs(n->num) * 1e-15 + 1))
			abort();
		break;
	case LLMSIM_J_STR:
		if (!n->str)
			abort();
		break;
	case LLMSIM_J_OBJ:
		for (size_t i = 0; i < n->n; i++)
			if (!n->keys[i] || llmsim_jobj_get(n, n->keys[i]) != n->vals[i])
				abort(); /* keys are distinct: each finds its own value */
		/* fall through */
	case LLMSIM_J_ARR:
		for (size_t i = 0; i < n->n; i++)
			walk(n->vals[i], depth + 1);
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llmsim_jdoc *d;
	struct llmsim_err err = {0};
	if (llmsim_json_parse((const char *)data, size, "fuzz.json", &d, &err)) {
		if (strncmp(err.msg, "fuzz.json:", 10) && err.code != LLMSIM_ENOMEM)
			abort();
		return 0;
	}
	const struct llmsim_jnode *root = llmsim_jdoc_root(d);
	walk(root, 1);
	int obj = root->kind == LLMSIM_J_OBJ;
	llmsim_jdoc_free(d);
	if (!obj || size > 1 << 20)
		return 0;
	static struct llmsim_model m;
	struct llmsim_hf_info info;
	memset(&err, 0, sizeof err);
	if (llmsim_model_from_hf_buf((const char *)data, size, "fuzz.json", NULL, NULL, &m, &info,
				     &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	struct llmsim_params p;
	llmsim_model_params(&m, &p);
	if (!info.yaml || !isfinite(p.total) || !(p.total > 0) || m.layers <= 0)
		abort();
	llmsim_hf_info_release(&info);
	/* without info, as `model show` of a config.json loads it: nothing
	 * may be left allocated (LeakSanitizer in the corpus replay) */
	if (llmsim_model_from_hf_buf((const char *)data, size, "fuzz.json", NULL, NULL, &m, NULL,
				     &err))
		abort();
	return 0;
}
