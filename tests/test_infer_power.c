/*
 * test_infer_power.c - the load a serving or inference run puts on the
 * power controller (llmsim_infer_load), and that a loaded run is no faster
 * than a lone-kernel one.
 */
#include <math.h>

#include "sim/infer/infer.h"
#include "support.h"
#include "test_sim_gpus.h"

static void gpu_with_cap(struct llmsim_gpu *g)
{
	test_gpu_h200(g);
	g->param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ] = 1.41e9;
	g->power_window_s = 0.05;
}

/* Hand values: busy 0.8 s of a 1 s run -> 0.8; a run of 40 ms busy
 * throughout fills 20 ms of the 50 ms window by its middle -> 1 x 0.4; a
 * GPU without a power-capped clock -> 0; nothing busy -> 0. */
Test(infer_power, load_is_the_busy_share_scaled_by_the_window)
{
	struct llmsim_gpu g;
	gpu_with_cap(&g);
	expect_close(llmsim_infer_load(&g, 0.8, 1.0), 0.8, 1e-12);
	expect_close(llmsim_infer_load(&g, 0.04, 0.04), 0.4, 1e-12);
	expect_close(llmsim_infer_load(&g, 2.0, 1.0), 1.0, 1e-12);
	cr_expect_eq(llmsim_infer_load(&g, 0, 1.0), 0);
	g.param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ] = 1e12;
	cr_expect_eq(llmsim_infer_load(&g, 0.8, 1.0), 0);
}

/* A long prefill (8B, 64 sequences of 4096 tokens: hundreds of ms of GEMMs)
 * keeps the GPU busy past the window: priced in that load it takes longer
 * than at the burst clock, by no more than burst / capped clock. */
Test(infer_power, a_long_batch_runs_at_the_power_limit)
{
	struct llmsim_gpu g;
	gpu_with_cap(&g);
	g.tensor_clock_hz = 1.83e9;
	g.burst_clock_hz = 1.67e9;
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, &m, &g);
	struct llmsim_infer_req req = {.batch = 64, .prompt = 4096, .output = 2};
	struct llmsim_infer_result loaded, lone;
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &loaded, &err), 0, "%s", err.msg);
	cfg.load_duty = 1e-9; /* a load too light to slow anything: the burst clock */
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &lone, &err), 0, "%s", err.msg);
	cr_expect_gt(loaded.ttft_s, lone.ttft_s * 1.01, "loaded %g, lone %g", loaded.ttft_s,
		     lone.ttft_s);
	cr_expect_leq(loaded.ttft_s, lone.ttft_s * 1.67 / 1.41 * (1 + 1e-9));
}
