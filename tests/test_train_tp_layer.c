/*
 * test_train_tp_layer.c - the training model against a real tensor-parallel
 * step: one Llama 3.1 70B layer, forward and backward, 4096 tokens, on 1 and
 * 2 H200s (calib/nccl/tp_layer.py --compile; calib/data/multi_gpu/
 * tp_layer_tp*_compiled.json), priced by `llmsim train` on the same layer
 * (calib/data/multi_gpu/llama70b-1layer.yaml: TP without sequence
 * parallelism, flash2, no recomputation, one micro-batch of one sequence).
 *
 * The issue asks for the step within 10%; today's model misses that (the
 * README says by how much), so the test logs the target and holds the model
 * to the brief's peer bar (support.h: better than the best Python
 * estimator's 20%); exposed TP communication is checked against the
 * measured step minus the same step without its all-reduces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "support.h"

/* The number after "key": in a small JSON file; NAN if absent. */
static double json_num(const char *path, const char *key)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	if (!f)
		return NAN;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(buf, pat);
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}


Test(train_tp_layer, step_and_exposed_comm_beat_the_peer_bar)
{
	char model_path[1024], json[1024];
	snprintf(model_path, sizeof model_path, "%s/calib/data/multi_gpu/llama70b-1layer.yaml",
		 LLMSIM_SOURCE_DIR);
	struct llmsim_model m;
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load(model_path, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &g, &err), 0, "%s", err.msg);
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &ctx, &err), 0, "%s", err.msg);
	for (int tp = 1; tp <= 2; tp++) {
		snprintf(json, sizeof json, "%s/calib/data/multi_gpu/tp_layer_tp%d_compiled.json",
			 LLMSIM_SOURCE_DIR, tp);
		double meas = json_num(json, "fwdbwd_s"), nocomm = json_num(json, "fwdbwd_nocomm_s");
		cr_assert(isfinite(meas) && meas > 0, "%s: no fwdbwd_s", json);
		struct llmsim_train_cfg c;
		llmsim_train_cfg_init(&c);
		c.gpus = c.tp = tp;
		c.seq = 4096;
		c.micro_batch = 1;
		c.global_batch = 1;
		c.recompute = LLMSIM_RECOMP_NONE;
		c.sequence_parallel = 0;
		c.attn = LLMSIM_ATTN_FLASH2;
		struct llmsim_train_result r;
		cr_assert_eq(llmsim_train_simulate(ctx, &c, &r, &err), 0, "%s", err.msg);
		double pred = r.time.compute_s + r.time.comm_exposed_s;
		double e = (pred - meas) / meas;
		cr_log_info("tp %d: predicted %.2f ms, measured %.2f ms (%+.1f%%; issue target 10%%)",
			    tp, pred * 1e3, meas * 1e3, 100 * e);
		/* the multi-GPU issue's target for the layer's step */
		cr_expect_leq(fabs(e), 0.10, "tp %d: step %+.1f%% (target 10%%)", tp, 100 * e);
		if (tp > 1) {
			double mc = meas - nocomm, pc = r.time.tp_exposed_s;
			double ec = (pc - mc) / mc;
			cr_log_info("tp %d: exposed all-reduce predicted %.3f ms, measured %.3f ms (%+.1f%%)",
				    tp, pc * 1e3, mc * 1e3, 100 * ec);
			cr_expect_leq(fabs(ec), PEER_BEST_MEDIAN_MISS, "tp %d: exposed comm %+.1f%%", tp,
				      100 * ec);
		}
	}
	llmsim_train_ctx_free(ctx);
}
