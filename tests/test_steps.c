/*
 * test_steps.c - the `steps` validation class (calib/validate/steps.h):
 * the shipped whole-step measurements against the target (every
 * prefill and decode step within 10%), the rule that a later measurement
 * of a step supersedes an earlier one, the class statistics of rows whose
 * predictions the test makes itself through `infer`'s own function, and
 * the profile block round trip into the whole-step accessor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"
#include "base/stats.h"
#include "calib/shipped.h"
#include "calib/store.h"
#include "calib/validate/steps.h"
#include "sim/expected_error.h"
#include "sim/infer/infer.h"

static struct llmsim_gpu h200;

static void load_gpu(void)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &e), 0, "%s", e.msg);
}

static int is_inference(const struct llmsim_steps_row *w)
{
	return !strcmp(w->st.phase, "prefill") || !strcmp(w->st.phase, "decode");
}

/* The target on the shipped measurements: every prefill and
 * decode step of every measured program within 10%. A step that misses
 * fails, naming itself, unless it is one of the known misses below, each
 * with its cause as the kernel lists show it (README, "How accurate it
 * is"). A known miss must still miss (else take it off the list: the test
 * says so), and the printed error bar of its class must tell a user: its
 * p80 reaches the miss, or the class is biased the same way. */
static const struct {
	const char *program, *model, *phase;
	long long batch, tokens, context;
	const char *why;
} known_misses[] = {
	/* HF transformers eager decode: host-bound, ~30 us of Python per launch */
	{"hf_sdpa_eager", "llama-3.1-8b", "decode", 1, 1, 2048, "host time per launch"},
	{"hf_sdpa_eager", "llama-3.1-8b", "decode", 8, 1, 2048, "host time per launch"},
	{"hf_sdpa_eager", "llama-3.1-8b", "decode", 32, 1, 2048, "host time per launch"},
	/* HF prefill: its strided broadcast multiplies (rotate_half on
	 * transposed views, the fp32 norm scale) run at ~0.7 TB/s, its casts
	 * in PyTorch's unrolled kernel, its concatenations: 2x the model */
	{"hf_sdpa", "llama-3.2-1b", "prefill", 1, 8192, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-3.1-8b", "prefill", 1, 2048, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-2-13b", "prefill", 1, 8192, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-2-13b", "prefill", 8, 1024, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-3.2-1b", "prefill", 4, 2048, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-2-13b", "prefill", 4, 2048, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-3.1-8b", "prefill", 1, 8192, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-3.2-1b", "prefill", 8, 1024, 0, "HF's strided kernels"},
	{"hf_sdpa", "llama-2-13b", "prefill", 1, 512, 0, "HF's strided kernels"},
	/* Mixtral: torch._grouped_mm at 128 rows per expert (m=1024 over 8)
	 * runs 20% below both its math and its weight stream, and at 2 rows
	 * 23% below the stream (its own fit cases in torch_ops.tsv) */
	{"lean_graph", "mixtral-8x7b", "prefill", 1, 512, 0, "grouped GEMM at 128 rows/expert"},
	{"lean_graph", "mixtral-8x7b", "decode", 1, 1, 512, "grouped GEMM at 2 rows"},
	/* FlashAttention-2's non-split decode at batch 128-256 (the packed
	 * query tile mostly padding) 11% slower than its model */
	{"lean_graph", "qwen2.5-72b", "decode", 256, 1, 512, "FA2 decode at large batch"},
	{"lean_graph", "llama-3.2-1b", "decode", 256, 1, 512, "FA2 decode at large batch"},
	{"lean_graph", "llama-3.2-1b", "decode", 128, 1, 1024, "FA2 decode at large batch"},
	/* measured once, without its kernel list (steps_lean_call2.tsv) */
	{"lean_graph", "llama-3.2-1b", "prefill", 16, 512, 0, "no kernel list to attribute it"},
};

static int known_miss(const struct llmsim_steps_row *w)
{
	for (size_t i = 0; i < sizeof known_misses / sizeof known_misses[0]; i++) {
		const char *ph = w->st.phase;
		long long t = !strcmp(ph, "decode") ? 1 : (long long)w->st.tokens;
		long long c = !strcmp(ph, "decode") ? (long long)w->st.context : 0;
		if (!strcmp(known_misses[i].program, w->st.program) &&
		    !strcmp(known_misses[i].model, w->model) && !strcmp(known_misses[i].phase, ph) &&
		    known_misses[i].batch == (long long)w->st.batch && known_misses[i].tokens == t &&
		    known_misses[i].context == c)
			return (int)i + 1;
	}
	return 0;
}

Test(steps, shipped_inference_steps_within_target)
{
	load_gpu();
	struct llmsim_store *s;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_open_shipped(&s, NULL, 0, NULL, 0, &e), 0, "%s", e.msg);
	static struct llmsim_steps_report r;
	cr_assert_eq(llmsim_steps_validate(s, &h200, NULL, &r, &e), 0, "%s", e.msg);
	llmsim_store_close(s);
	int n = 0, missed = 0;
	for (int i = 0; i < r.n; i++) {
		const struct llmsim_steps_row *w = &r.rows[i];
		if (!is_inference(w))
			continue;
		n++;
		cr_expect(w->ok, "%s %s %s b%lld %lld/%lld: not predicted: %s", w->st.program,
			  w->st.model_spec, w->st.phase, (long long)w->st.batch,
			  (long long)w->st.tokens, (long long)w->st.context, w->error);
		if (!w->ok)
			continue;
		int k = known_miss(w);
		if (!k) {
			cr_expect_leq(fabs(w->err_pct), LLMSIM_STEPS_TARGET_PCT,
				      "%s %s %s b%lld tokens %lld context %lld: measured %.4g s (%s), "
				      "predicted %.4g s: %+.1f%%",
				      w->st.program, w->st.model_spec, w->st.phase,
				      (long long)w->st.batch, (long long)w->st.tokens,
				      (long long)w->st.context, w->measured_s, w->basis,
				      w->predicted_s, w->err_pct);
			continue;
		}
		missed++;
		cr_expect_gt(fabs(w->err_pct), LLMSIM_STEPS_TARGET_PCT,
			     "%s %s %s b%lld: %+.1f%% now meets the target: take it off known_misses",
			     w->st.program, w->model, w->st.phase, (long long)w->st.batch, w->err_pct);
		const struct llmsim_steps_class *c =
			llmsim_steps_class_find(&r, w->st.program, w->st.phase, "time");
		cr_assert_not_null(c);
		cr_expect(c->p80_abs_pct >= fabs(w->err_pct) ||
				  (c->median_signed_pct * w->err_pct > 0 &&
				   fabs(c->median_signed_pct) >= 0.5 * c->median_abs_pct),
			  "%s %s %s: %+.1f%% (%s) is beyond its class's error bar +/-%.1f%% "
			  "and the class does not lean that way",
			  w->st.program, w->model, w->st.phase, w->err_pct,
			  known_misses[k - 1].why, c->p80_abs_pct);
	}
	cr_log_info("%d inference steps, %d known misses", n, missed);
	/* the programs the issue names are all there: lean engine, HF prefill
	 * and HF eager decode */
	cr_expect_not_null(llmsim_steps_class_find(&r, "lean_graph", "prefill", "time"));
	cr_expect_not_null(llmsim_steps_class_find(&r, "lean_graph", "decode", "time"));
	cr_expect_not_null(llmsim_steps_class_find(&r, "hf_sdpa", "prefill", "time"));
	cr_expect_not_null(llmsim_steps_class_find(&r, "hf_sdpa_eager", "decode", "time"));
	cr_expect_gt(n, 80, "%d inference steps", n);
	llmsim_steps_report_free(&r);
}

/* ---- a store of our own ---- */

static int64_t begin(struct llmsim_store *s, const char *started)
{
	struct llmsim_device_info dev = {.sms = 132, .device_count = 1};
	snprintf(dev.name, sizeof dev.name, "NVIDIA H200");
	snprintf(dev.hw_name, sizeof dev.hw_name, "h200");
	struct llmsim_run_info run = {0};
	snprintf(run.started_at, sizeof run.started_at, "%s", started);
	snprintf(run.tool, sizeof run.tool, "test");
	snprintf(run.operand_data, sizeof run.operand_data, "normal");
	int64_t id;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_run_begin(s, &dev, &run, &id, &e), 0, "%s", e.msg);
	return id;
}

static void step(struct llmsim_store *s, int64_t run, const char *phase, int64_t batch,
		 int64_t tokens, int64_t context, double time_s)
{
	struct llmsim_step_rec st;
	memset(&st, 0, sizeof st);
	snprintf(st.program, sizeof st.program, "lean_graph");
	snprintf(st.model_spec, sizeof st.model_spec, "model=llama-3.2-1b layers=4");
	snprintf(st.phase, sizeof st.phase, "%s", phase);
	st.batch = batch, st.tokens = tokens, st.context = context, st.graph = 1;
	st.time_median_s = time_s;
	st.time_p10_s = st.time_p90_s = st.kernel_time_s = st.sm_clock_hz = st.power_w = NAN;
	st.mem_peak_allocated_bytes = st.mem_peak_reserved_bytes = st.mem_device_total_bytes = NAN;
	int64_t id;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_add_step(s, run, &st, &id, &e), 0, "%s", e.msg);
}

/* infer's own prediction of a lean-engine step of the 4-layer 1B model:
 * the torch engine, one CUDA graph, the whole batch in one step */
static double infer_step(const char *phase, int64_t batch, int64_t tokens, int64_t context)
{
	static struct llmsim_model m;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load("llama-3.2-1b", &m, &e), 0, "%s", e.msg);
	m.layers = 4;
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, &m, &h200);
	llmsim_infer_cfg_engine(&cfg, LLMSIM_ENGINE_TORCH);
	cfg.params.mem_utilization = 1;
	struct llmsim_infer_req req = {.batch = batch};
	int decode = !strcmp(phase, "decode");
	req.prompt = decode ? context : tokens;
	req.output = decode ? 2 : 1;
	if (!decode)
		cfg.max_step_tokens = batch * tokens;
	struct llmsim_infer_result res;
	cr_assert_eq(llmsim_infer_run(&cfg, &req, &res, &e), 0, "%s", e.msg);
	return decode ? res.tpot_s : res.ttft_s;
}

/* Five decode steps whose measured times are infer's own prediction times
 * 1.00, 1.02, 1.05, 0.90 and 1.10: their errors are 0, -1.96, -4.76,
 * +11.1 and -9.09% (100 (1/f - 1)); the same shape measured again in a
 * later run replaces the first. */
Test(steps, classes_and_supersede_rule)
{
	load_gpu();
	struct llmsim_store *s;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_open(":memory:", LLMSIM_STORE_CREATE, &s, &e), 0, "%s", e.msg);
	static const double f[5] = {1.00, 1.02, 1.05, 0.90, 1.10};
	static const int64_t ctx[5] = {512, 1024, 2048, 4096, 8192};
	double t[5];
	for (int i = 0; i < 5; i++)
		t[i] = infer_step("decode", 8, 1, ctx[i]);
	/* an older run: the first shape at twice its time (superseded) */
	int64_t old = begin(s, "2026-01-01T00:00:00Z");
	step(s, old, "decode", 8, 1, ctx[0], 2 * t[0]);
	cr_assert_eq(llmsim_store_run_commit(s, old, &e), 0, "%s", e.msg);
	int64_t run = begin(s, "2026-02-01T00:00:00Z");
	for (int i = 0; i < 5; i++)
		step(s, run, "decode", 8, 1, ctx[i], f[i] * t[i]);
	cr_assert_eq(llmsim_store_run_commit(s, run, &e), 0, "%s", e.msg);
	static struct llmsim_steps_report r;
	cr_assert_eq(llmsim_steps_validate(s, &h200, NULL, &r, &e), 0, "%s", e.msg);
	llmsim_store_close(s);
	cr_expect_eq(r.n, 5);
	cr_expect_eq(r.superseded, 1);
	for (int i = 0; i < r.n; i++) {
		cr_expect(r.rows[i].ok, "%s", r.rows[i].error);
		int k = 0;
		while (k < 5 && ctx[k] != r.rows[i].st.context)
			k++;
		cr_assert_lt(k, 5);
		expect_close(r.rows[i].err_pct, 100 * (1 / f[k] - 1), 1e-9);
	}
	const struct llmsim_steps_class *c = llmsim_steps_class_find(&r, "lean_graph", "decode",
								     "time");
	cr_assert_not_null(c);
	cr_expect_eq(c->n, 5);
	/* |errors| sorted: 0, 1.96, 4.76, 9.09, 11.1: median 4.76; the p80
	 * covering 4 of 5 is the 4th, 9.09; the signed median -1.96; the
	 * worst +11.1; within 10%: 4 */
	expect_close(c->median_abs_pct, 100 * (1 - 1 / 1.05), 1e-9);
	expect_close(c->p80_abs_pct, 100 * (1 - 1 / 1.10), 1e-9);
	expect_close(c->median_signed_pct, 100 * (1 / 1.02 - 1), 1e-9);
	expect_close(c->worst_pct, 100 * (1 / 0.90 - 1), 1e-9);
	cr_expect_eq(c->within_target, 4);
	cr_expect_str_eq(c->engine, "torch");

	/* the profile block: written, read back by the loader into the
	 * whole-step accessor, replaced (not repeated) when written again */
	char path[] = "/tmp/llmsim_test_steps_XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *p = fdopen(fd, "w");
	fprintf(p, "gpu: h200\n");
	fclose(p);
	cr_assert_eq(llmsim_steps_update_profile(path, &r, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_steps_update_profile(path, &r, &e), 0, "%s", e.msg);
	struct llmsim_gpu g = h200;
	cr_assert_eq(llmsim_gpu_apply_profile(&g, path, &e), 0, "%s", e.msg);
	cr_expect_eq(g.nstep_errors, 1);
	struct llmsim_expected_error x;
	llmsim_expected_step_error(&g, "torch", "decode", &x, NULL);
	cr_expect(x.calibrated);
	/* the p80 rounded up to the hundredth: 9.0909 -> 9.10 */
	expect_close(x.abs_frac, 0.0910, 1e-9);
	cr_expect_eq(x.n, 5);
	/* bias -1.96% against a median |error| of 4.76%: under half, no lean */
	expect_close(x.bias_frac, 0, 0);
	llmsim_expected_step_error(&g, "fused", "decode", &x, NULL);
	cr_expect_not(x.calibrated);
	expect_close(x.abs_frac, LLMSIM_STEP_ERROR_DEFAULT, 0);
	unlink(path);
	llmsim_steps_report_free(&r);
}

/* A step the program could not have run is a failed row, not an error. */
Test(steps, unpredictable_row_is_reported)
{
	load_gpu();
	struct llmsim_store *s;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_open(":memory:", LLMSIM_STORE_CREATE, &s, &e), 0, "%s", e.msg);
	int64_t run = begin(s, "2026-02-01T00:00:00Z");
	struct llmsim_step_rec st;
	memset(&st, 0, sizeof st);
	snprintf(st.program, sizeof st.program, "lean_graph");
	snprintf(st.model_spec, sizeof st.model_spec, "model=no-such-model layers=4");
	snprintf(st.phase, sizeof st.phase, "prefill");
	st.batch = 1, st.tokens = 128, st.graph = 1, st.time_median_s = 1e-3;
	st.kernel_time_s = st.sm_clock_hz = NAN;
	st.mem_peak_allocated_bytes = st.mem_peak_reserved_bytes = NAN;
	int64_t id;
	cr_assert_eq(llmsim_store_add_step(s, run, &st, &id, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_store_run_commit(s, run, &e), 0, "%s", e.msg);
	static struct llmsim_steps_report r;
	cr_assert_eq(llmsim_steps_validate(s, &h200, NULL, &r, &e), 0, "%s", e.msg);
	llmsim_store_close(s);
	cr_assert_eq(r.n, 1);
	cr_expect_not(r.rows[0].ok);
	cr_expect(strstr(r.rows[0].error, "no-such-model") != NULL, "%s", r.rows[0].error);
	cr_expect_eq(r.classes[0].failed, 1);
	cr_expect_eq(r.classes[0].n, 0);
	llmsim_steps_report_free(&r);
	/* and a store of no steps: ENOENT */
	cr_assert_eq(llmsim_store_open(":memory:", LLMSIM_STORE_CREATE, &s, &e), 0, "%s", e.msg);
	cr_expect_eq(llmsim_steps_validate(s, &h200, NULL, &r, &e), LLMSIM_ENOENT);
	llmsim_store_close(s);
}
