/*
 * fuzz_profile.c - libFuzzer target for calibration profiles
 * (llmsim_gpu_apply_profile_buf, the code path of llmsim_gpu_apply_profile,
 * and llmsim_gpu_profile_calibration): the input is applied to the shipped
 * H200 as its profile. A failed profile must leave a message and the GPU
 * untouched; a profile that applies must keep every model parameter
 * positive and finite, give error classes with names and counts, and let
 * one op of each kind predict to a time that is a positive number.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "hw/gpu_load.h"
#include "sim/sim.h"
#include "fuzz_input.h"

static const char *const specs[] = {
	"gemm m=4096 n=4096 k=4096",
	"gemm m=1 n=8192 k=8192 dtype=fp8",
	"ew kind=rmsnorm tokens=8192 hidden=4096",
	"ew kind=softmax tokens=128 hidden=32000 pass=bwd",
	"attention impl=flash2 batch=1 heads=32 kv_heads=8 seq=4096 head_dim=128",
	"attention impl=flash3 batch=2 heads=16 seq=1024 head_dim=128 pass=fwdbwd",
	"decode impl=paged batch=8 heads=32 kv_heads=8 kv_len=4096 head_dim=128",
	"collective kind=allreduce bytes=1e8 gpus=8",
	"collective kind=alltoall bytes=4096 gpus=16 nodes=2",
};

static void calib_kv(const char *key, const char *value, void *ctx)
{
	(void)ctx;
	if (!key || !value)
		abort();
}

static void check(const struct llmsim_gpu *g)
{
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		if (!isfinite(g->param[i]) || !(g->param[i] > 0))
			abort();
	if (g->nerr_classes < 0 || g->nerr_classes > LLMSIM_GPU_MAX_ERR_CLASSES)
		abort();
	for (int i = 0; i < g->nerr_classes; i++) {
		const struct llmsim_err_class *c = &g->err_classes[i];
		if (!c->name[0] || c->n <= 0 || !(c->median_abs_pct >= 0) ||
		    c->p90_abs_pct < c->median_abs_pct)
			abort();
	}
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		struct llmsim_op op;
		struct llmsim_pred p;
		struct llmsim_err err = {0};
		if (llmsim_op_parse(specs[i], &op, &err) || llmsim_predict(g, &op, &p, &err))
			abort();
		if (isnan(p.time_s) || !(p.time_s > 0) || (!isnan(p.time_err_pct) && p.time_err_pct < 0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct llmsim_gpu g, fixed;
	static int loaded;
	struct llmsim_err err = {0};

	if (!loaded) {
		/* the H200 as its hardware file states it, without the shipped profile */
		setenv("LLMSIM_NO_PROFILE", "1", 1);
		if (llmsim_gpu_load("h200", &fixed, &err))
			abort();
		unsetenv("LLMSIM_NO_PROFILE");
		loaded = 1;
	}
	g = fixed;
	if (llmsim_gpu_apply_profile_buf(&g, (const char *)data, size, "profile.yaml", &err) == 0)
		check(&g);
	else if (!err.msg[0] || memcmp(&g, &fixed, sizeof g))
		abort(); /* a failed profile must leave the GPU untouched */

	err.msg[0] = 0;
	if (llmsim_gpu_profile_calibration(fuzz_input_path(data, size), calib_kv, NULL, &err) &&
	    !err.msg[0])
		abort();
	return 0;
}
