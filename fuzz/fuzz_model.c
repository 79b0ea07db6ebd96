/*
 * fuzz_model.c - libFuzzer target for the model loader: the input is read
 * as a model file (llmsim_model_load_buf, the code path of
 * llmsim_model_load_file). A model that loads must give finite, positive
 * parameter counts, KV bytes and FLOPs; a failure must leave a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "models/model.h"
#include "models/model_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct llmsim_model m;
	struct llmsim_err err = {0};
	struct llmsim_params p;

	if (llmsim_model_load_buf((const char *)data, size, "fuzz.yaml", &m, &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	if (m.heads % m.kv_heads || m.layers <= 0 || m.hidden <= 0)
		abort();
	llmsim_model_params(&m, &p);
	double kv = llmsim_model_kv_bytes_per_token(&m, LLMSIM_DT_BF16);
	double f = llmsim_model_flops_per_token(&m, 4096);
	if (!isfinite(p.total) || !(p.total > 0) || !(p.active > 0) || p.active > p.total * (1 + 1e-12) ||
	    !isfinite(kv) || !(kv > 0) || !isfinite(f) || !(f > 0) || p.mtp < 0)
		abort();
	(void)llmsim_attn_kind_name(m.attention);
	return 0;
}
