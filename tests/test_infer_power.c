/*
 * test_infer_power.c - the load a serving or inference run puts on the
 * power controller (llmsim_infer_load), that a loaded run is no faster
 * than a lone-kernel one, and that serving settles its load in one pass
 * when the load leaves the clock alone and in the load's own run when not.
 */
#include <math.h>
#include <string.h>

#include "sim/infer/infer.h"
#include "sim/infer/serve.h"
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
/* The capped GPU with a burst clock above the cap, and Llama 3.1 8B. */
static void capped_8b(struct llmsim_gpu *g, struct llmsim_model *m)
{
	struct llmsim_err err = {0};
	gpu_with_cap(g);
	g->tensor_clock_hz = 1.83e9;
	g->burst_clock_hz = 1.67e9;
	cr_assert_eq(llmsim_model_load("8b", m, &err), 0, "%s", err.msg);
}

Test(infer_power, a_long_batch_runs_at_the_power_limit)
{
	struct llmsim_gpu g;
	struct llmsim_model m;
	struct llmsim_err err = {0};
	capped_8b(&g, &m);
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

/* One serving run (sim/infer/serve.h) of `requests` requests of the given
 * lengths, at `rate` (0: offline), in the load cfg says, on the fused
 * engine (its steps back to back: the load these tests set out to reach
 * or stay under). */
static void serve(const struct llmsim_gpu *g, const struct llmsim_model *m, int64_t requests,
		  double rate, int64_t prompt, int64_t output, enum llmsim_load load,
		  double duty, double rho, struct llmsim_serve_result *r)
{
	struct llmsim_serve_cfg cfg;
	struct llmsim_err err = {0};
	llmsim_serve_cfg_init(&cfg, m, g);
	llmsim_infer_cfg_engine(&cfg.infer, LLMSIM_ENGINE_FUSED);
	cfg.infer.load = load;
	cfg.infer.load_duty = duty;
	cfg.infer.load_rho = rho;
	cfg.requests = requests;
	cfg.rate_per_s = rate;
	cfg.prompt.a = (double)prompt;
	cfg.output.a = (double)output;
	cfg.chunked_prefill = 1;
	cr_assert_eq(llmsim_serve_run(&cfg, r, &err), 0, "%s", err.msg);
}

/* The figures of two runs, load_duty aside. */
static void same_run(const struct llmsim_serve_result *a, const struct llmsim_serve_result *b)
{
	cr_expect_eq(a->steps, b->steps);
	cr_expect_eq(a->priced, b->priced);
	cr_expect(a->duration_s == b->duration_s, "%.17g against %.17g", a->duration_s,
		  b->duration_s);
	cr_expect(a->busy_s == b->busy_s);
	cr_expect(a->flops == b->flops);
	cr_expect(!memcmp(&a->ttft_s, &b->ttft_s, sizeof a->ttft_s));
	cr_expect(!memcmp(&a->tpot_s, &b->tpot_s, sizeof a->tpot_s));
	cr_expect(!memcmp(&a->e2e_s, &b->e2e_s, sizeof a->e2e_s));
}

/* A light load (8B decoding short requests at 2 a second: a low tensor
 * intensity) leaves every step's price as at the burst clock: the run in
 * that load is the burst clock's run (one pass), with its load reported. */
Test(infer_power, serving_under_the_limit_settles_in_one_pass)
{
	struct llmsim_gpu g;
	gpu_with_cap(&g);
	struct llmsim_model m;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	struct llmsim_serve_result busy, lone;
	serve(&g, &m, 200, 2, 256, 64, LLMSIM_LOAD_BUSY, 0, 0, &busy);
	serve(&g, &m, 200, 2, 256, 64, LLMSIM_LOAD_LONE, 0, 0, &lone);
	cr_expect_gt(busy.load_duty, 0);
	cr_expect_eq(lone.load_duty, 0);
	same_run(&busy, &lone);
}

/* A heavy load (offline prefill of long prompts) slows the clock: the
 * run is the one priced in the load the burst clock's run showed, as
 * given outright (load_duty and load_rho set: one pass in that load). */
Test(infer_power, serving_over_the_limit_is_priced_in_its_load)
{
	struct llmsim_gpu g;
	struct llmsim_model m;
	capped_8b(&g, &m);
	struct llmsim_serve_result busy, lone, given;
	serve(&g, &m, 64, 0, 4096, 4, LLMSIM_LOAD_BUSY, 0, 0, &busy);
	serve(&g, &m, 64, 0, 4096, 4, LLMSIM_LOAD_LONE, 0, 0, &lone);
	struct llmsim_infer_cfg ic;
	llmsim_infer_cfg_init(&ic, &m, &g);
	llmsim_infer_cfg_engine(&ic, LLMSIM_ENGINE_FUSED);
	double duty = llmsim_infer_load(&g, lone.busy_s, lone.duration_s);
	double rho = llmsim_infer_rho(&ic, lone.flops, lone.busy_s);
	cr_assert_gt(duty, 0);
	serve(&g, &m, 64, 0, 4096, 4, LLMSIM_LOAD_BUSY, duty, rho, &given);
	cr_expect_gt(busy.duration_s, lone.duration_s * 1.01, "loaded %g, lone %g",
		     busy.duration_s, lone.duration_s);
	cr_expect(busy.load_duty == duty);
	same_run(&busy, &given);
}
