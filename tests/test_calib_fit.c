/*
 * test_calib_fit.c - the fit recovers known parameters from synthetic
 * measurements; validation statistics on hand-made sets; the profile it
 * writes loads back.
 *
 * Synthetic measurements: each case's time is llmsim_predict's on an H200
 * whose efficiencies were set to known "true" values, times a small
 * deterministic noise factor. The fit starts elsewhere and must find the
 * true values again; nothing here depends on how the simulator prices an
 * op beyond that prediction being a function of the parameters.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/fit.h"
#include "calib/validate.h"
#include "support.h"

static struct llmsim_gpu h200(void)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	char path[1024];
	snprintf(path, sizeof path, "%s/hw/h200-sxm-141gb.yaml", LLMSIM_SOURCE_DIR);
	cr_assert_eq(llmsim_gpu_load_file(path, &g, &err), 0, "%s", err.msg);
	return g;
}

static const char *const specs[] = {
    /* GEMMs: large ones set the tensor fraction, small ones the overhead */
    "gemm m=8192 n=8192 k=8192",
    "gemm m=4096 n=4096 k=4096",
    "gemm m=2048 n=2048 k=2048",
    "gemm m=8192 n=28672 k=4096",
    "gemm m=4096 n=14336 k=4096",
    "gemm m=16384 n=4096 k=4096",
    "gemm m=1024 n=1024 k=1024",
    "gemm m=512 n=512 k=512",
    "gemm m=256 n=256 k=256",
    "gemm m=8192 n=4096 k=14336",
    "gemm m=2048 n=8192 k=8192",
    "gemm m=128 n=128 k=128",
    /* element-wise: large ones set the HBM fraction, tiny ones the overhead */
    "ew kind=add tokens=65536 hidden=8192",
    "ew kind=copy tokens=65536 hidden=16384",
    "ew kind=rmsnorm tokens=32768 hidden=8192",
    "ew kind=silu_mul tokens=32768 hidden=14336",
    "ew kind=mul tokens=131072 hidden=8192",
    "ew kind=copy tokens=16384 hidden=8192",
    "ew kind=add tokens=16 hidden=1024",
    "ew kind=copy tokens=8 hidden=512",
    "ew kind=add tokens=32 hidden=256",
    "ew kind=mul tokens=64 hidden=128",
    /* attention: FlashAttention-2 forward, long sequences (tensor-bound) */
    "attention impl=flash2 batch=4 heads=32 seq=4096 head_dim=128",
    "attention impl=flash2 batch=1 heads=32 seq=8192 head_dim=128",
    "attention impl=flash2 batch=8 heads=16 seq=2048 head_dim=128",
    "attention impl=flash2 batch=2 heads=64 seq=4096 head_dim=128 causal=0",
    "attention impl=flash2 batch=1 heads=64 kv_heads=8 seq=16384 head_dim=128",
};
#define NSPECS (sizeof specs / sizeof specs[0])

/* Deterministic noise in [-amp, +amp] (a fixed LCG). */
static double noise(unsigned *state, double amp)
{
	*state = *state * 1103515245u + 12345u;
	return amp * (2.0 * ((*state >> 8) & 0xffff) / 65535.0 - 1.0);
}

/* Measurements under `truth`, plus `nlaunch` empty-kernel cases. */
static void make_set(const struct llmsim_gpu *truth, double amp, struct llmsim_calib_set *set)
{
	unsigned st = 12345;
	memset(set, 0, sizeof *set);
	snprintf(set->hw_name, sizeof set->hw_name, "h200");
	set->l2_bytes = truth->l2_bytes;
	for (size_t i = 0; i < NSPECS; i++) {
		struct llmsim_case c = {.reps = 10};
		struct llmsim_op op;
		struct llmsim_pred p;
		struct llmsim_err err = {0};
		cr_assert_eq(llmsim_op_parse(specs[i], &op, &err), 0, "%s: %s", specs[i], err.msg);
		cr_assert_eq(llmsim_predict(truth, &op, &p, &err), 0, "%s: %s", specs[i], err.msg);
		snprintf(c.op_spec, sizeof c.op_spec, "%s", specs[i]);
		snprintf(c.op_class, sizeof c.op_class, "%s", llmsim_op_class(&op));
		snprintf(c.split, sizeof c.split, "%s", i % 4 == 3 ? "holdout" : "fit");
		c.time_median_s = p.time_s * (1 + noise(&st, amp));
		cr_assert_eq(llmsim_calib_set_add(set, (int64_t)i + 1, &c, NAN, &err), 0);
	}
	for (int i = 0; i < 3; i++) {
		struct llmsim_case c = {
			.reps = 100,
			.time_median_s = truth->param[LLMSIM_PARAM_KERNEL_OVERHEAD_S],
		};
		c.time_median_s *= 1 + noise(&st, amp);
		snprintf(c.op_spec, sizeof c.op_spec, "launch empty kernel %d", i);
		snprintf(c.op_class, sizeof c.op_class, "launch");
		snprintf(c.split, sizeof c.split, "fit");
		cr_assert_eq(llmsim_calib_set_add(set, 100 + i, &c, NAN, NULL), 0);
	}
}

/* The parameters the synthetic truth moves away from the hardware file. */
static const struct {
	enum llmsim_param e;
	double truth;
} moved[] = {
    {LLMSIM_PARAM_GEMM_TENSOR_FRACTION, 0.71},
    {LLMSIM_PARAM_HBM_FRACTION, 0.83},
    {LLMSIM_PARAM_KERNEL_OVERHEAD_S, 4.6e-6},
    {LLMSIM_PARAM_ATTENTION_TENSOR_FRACTION, 0.52},
};
#define NMOVED (sizeof moved / sizeof moved[0])

static void check_recovery(const double *start, const int *allow, double amp, double tol)
{
	struct llmsim_gpu truth = h200(), gpu = h200();
	for (size_t i = 0; i < NMOVED; i++)
		truth.param[moved[i].e] = moved[i].truth;
	struct llmsim_calib_set set;
	make_set(&truth, amp, &set);
	for (size_t i = 0; i < NMOVED; i++)
		gpu.param[moved[i].e] = start[i];
	struct llmsim_fit_opts o = {.allow = allow};
	struct llmsim_fit_result r;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_calib_fit(&gpu, &set, &o, &r, &err), 0, "%s", err.msg);
	if (getenv("FITDBG")) { /* FITDBG=1 shows what the fit did */
		fprintf(stderr, "objective %g -> %g, %d sweeps\n", r.objective_start,
			r.objective_end, r.sweeps);
		for (int e = 0; e < LLMSIM_PARAM_COUNT; e++)
			if (r.fitted[e])
				fprintf(stderr, "  %-28s %g -> %g (%d cases)\n",
					llmsim_param_info[e].key, r.start[e], r.param[e],
					r.ncases[e]);
	}
	for (size_t i = 0; i < NMOVED; i++) {
		cr_expect(r.fitted[moved[i].e], "%s not fitted", llmsim_param_info[moved[i].e].key);
		cr_expect(fabs(gpu.param[moved[i].e] / moved[i].truth - 1) <= tol,
			  "%s: fitted %g, true %g (start %g, tol %g)",
			  llmsim_param_info[moved[i].e].key, gpu.param[moved[i].e], moved[i].truth,
			  start[i], tol);
		cr_expect_eq(r.param[moved[i].e], gpu.param[moved[i].e]);
	}
	cr_expect(r.objective_end <= r.objective_start);
	cr_expect_eq(r.fit_cases + r.held_out_cases, (int)NSPECS + 3);
	llmsim_calib_set_release(&set);
}

static int allow_moved[LLMSIM_PARAM_COUNT];

static void init_allow(void)
{
	memset(allow_moved, 0, sizeof allow_moved);
	for (size_t i = 0; i < NMOVED; i++)
		allow_moved[moved[i].e] = 1;
}

Test(calib_fit, recovers_exact_parameters, .init = init_allow)
{
	/* No noise: the true values are the exact minimum. */
	const double start[NMOVED] = {0.80, 0.90, 3e-6, 0.60};
	check_recovery(start, allow_moved, 0.0, 0.005);
}

Test(calib_fit, recovers_with_noise_from_several_starts, .init = init_allow)
{
	/* +-1% noise: the fitted values stay within 3% of the truth, whether
	 * the search starts above, below or at the bound of each parameter. */
	const double starts[][NMOVED] = {
	    {0.80, 0.90, 3e-6, 0.60},
	    {0.35, 0.45, 2e-5, 0.25},
	    {1.00, 1.00, 1e-7, 1.00},
	};
	for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
		check_recovery(starts[s], allow_moved, 0.01, 0.03);
}

Test(calib_fit, every_parameter_free)
{
	/* Everything the cases depend on may move: the four the truth moved
	 * must still come back (others that no case pins may wander). */
	const double start[NMOVED] = {0.80, 0.90, 3e-6, 0.60};
	check_recovery(start, NULL, 0.01, 0.05);
}

Test(calib_fit, no_fit_cases)
{
	struct llmsim_gpu gpu = h200();
	struct llmsim_calib_set set = {0};
	struct llmsim_case c = {.time_median_s = 1e-3};
	snprintf(c.op_spec, sizeof c.op_spec, "gemm m=1024 n=1024 k=1024");
	snprintf(c.op_class, sizeof c.op_class, "gemm");
	snprintf(c.split, sizeof c.split, "holdout");
	cr_assert_eq(llmsim_calib_set_add(&set, 1, &c, NAN, NULL), 0);
	struct llmsim_fit_result r;
	struct llmsim_err err = {0};
	double before[LLMSIM_PARAM_COUNT];
	memcpy(before, gpu.param, sizeof before);
	cr_expect_eq(llmsim_calib_fit(&gpu, &set, NULL, &r, &err), LLMSIM_ENOENT);
	cr_expect(memcmp(before, gpu.param, sizeof before) == 0);
	llmsim_calib_set_release(&set);
}

Test(calib_fit, classifies_cases)
{
	struct llmsim_calib_set set = {0};
	set.l2_bytes = 50e6;
	struct {
		const char *spec, *cls;
		double bytes, t;
		enum llmsim_calib_how how;
		const char *scored_as;
		int stream; /* the stream op it is priced as (sim/stream.c), or -1 */
	} cases[] = {
	    {"gemm m=64 n=64 k=64", "gemm", 0, 1e-5, LLMSIM_CALIB_SIM, "gemm", -1},
	    /* a simulator op stored as "hbm" (a STREAM copy): scored as stored */
	    {"ew kind=copy tokens=1024 hidden=1024", "hbm", 4e6, 1e-5, LLMSIM_CALIB_SIM, "hbm", -1},
	    /* no class stored: the simulator's */
	    {"ew kind=add tokens=64 hidden=64", "", 0, 1e-5, LLMSIM_CALIB_SIM, "elementwise", -1},
	    {"copy 1GB", "hbm", 1e9, 3e-4, LLMSIM_CALIB_SIM, "hbm", LLMSIM_STREAM_HBM},
	    {"copy 100MB", "hbm", 1e8, 3e-5, LLMSIM_CALIB_NOT_MODELLED, "hbm", -1}, /* < 4 x L2 */
	    {"empty", "launch", 0, 2e-6, LLMSIM_CALIB_SIM, "launch", LLMSIM_STREAM_LAUNCH},
	    {"smem stream", "smem", 1e9, 1e-4, LLMSIM_CALIB_SIM, "smem", LLMSIM_STREAM_SMEM},
	    {"smem nobytes", "smem", 0, 1e-4, LLMSIM_CALIB_NOT_MODELLED, "smem", -1},
	    {"warp shuffle", "other", 0, 1e-4, LLMSIM_CALIB_NOT_MODELLED, "other", -1},
	    {"gemm m=64 n=64 k=64", "gemm", 0, 0, LLMSIM_CALIB_NOT_MODELLED, "gemm", -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct llmsim_case c = {.time_median_s = cases[i].t,
					.bytes_declared = cases[i].bytes};
		snprintf(c.op_spec, sizeof c.op_spec, "%s", cases[i].spec);
		snprintf(c.op_class, sizeof c.op_class, "%s", cases[i].cls);
		snprintf(c.split, sizeof c.split, "fit");
		cr_assert_eq(llmsim_calib_set_add(&set, (int64_t)i, &c, NAN, NULL), 0);
		cr_expect_eq(set.p[i].how, cases[i].how, "case %zu (%s): how %d, expected %d", i,
			     cases[i].spec, set.p[i].how, cases[i].how);
		cr_expect_str_eq(set.p[i].op_class, cases[i].scored_as, "case %zu", i);
		if (cases[i].stream >= 0)
			cr_expect(set.p[i].op.kind == LLMSIM_OP_STREAM &&
					  (int)set.p[i].op.u.stream.kind == cases[i].stream,
				  "case %zu (%s) is priced as the stream op of its class", i,
				  cases[i].spec);
		if (cases[i].how == LLMSIM_CALIB_NOT_MODELLED)
			cr_expect(set.p[i].why[0], "case %zu says why", i);
	}
	/* Direct predictions, by hand: launch = overhead; a 1 GB copy at
	 * hbm_fraction f on 4.8 TB/s takes overhead + 1e9 / (4.8e12 f). */
	struct llmsim_gpu g = h200();
	g.param[LLMSIM_PARAM_KERNEL_OVERHEAD_S] = 2e-6;
	g.param[LLMSIM_PARAM_HBM_FRACTION] = 0.9;
	double t;
	cr_assert_eq(llmsim_calib_predict(&g, &set.p[5], &t, NULL, NULL), 0);
	expect_close(t, 2e-6, 1e-12);
	cr_assert_eq(llmsim_calib_predict(&g, &set.p[3], &t, NULL, NULL), 0);
	expect_close(t, 2e-6 + 1e9 / (g.hbm_bytes_per_s * 0.9), 1e-12);
	expect_close(g.hbm_bytes_per_s, 4.8e12, 0.01); /* the H200 datasheet figure */
	cr_expect_eq(llmsim_calib_predict(&g, &set.p[8], &t, NULL, NULL), LLMSIM_EUNSUPPORTED);
	llmsim_calib_set_release(&set);
}

Test(calib_validate, quantiles_by_hand)
{
	/* rank q (n - 1), linear between neighbours */
	double a[] = {4, 1, 3, 2};
	cr_expect_eq(llmsim_quantile(a, 4, 0.5), 2.5);
	double b[] = {4, 1, 3, 2};
	expect_close(llmsim_quantile(b, 4, 0.9), 3.7, 1e-12); /* rank 2.7: 3 + 0.7 */
	double c[] = {7};
	cr_expect_eq(llmsim_quantile(c, 1, 0.9), 7);
	cr_expect(isnan(llmsim_quantile(c, 0, 0.5)));
	double d[] = {5, 1, 9};
	cr_expect_eq(llmsim_quantile(d, 3, 0.5), 5);
	cr_expect_eq(llmsim_quantile(d, 3, 1.0), 9);
	cr_expect_eq(llmsim_quantile(d, 3, 0.0), 1);

	/* the covering quantile: the smallest value at least q of them do not
	 * exceed, v[ceil(q n) - 1]. 8 values, q 0.8: ceil(6.4) = 7th, which 7/8
	 * = 87.5% do not exceed (the interpolated p80, at rank 5.6, covers only
	 * 6/8 = 75%); 10 values: exactly the 8th. */
	double e[] = {8, 1, 7, 2, 6, 3, 5, 4};
	cr_expect_eq(llmsim_quantile_cover(e, 8, 0.8), 7);
	double f[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
	cr_expect_eq(llmsim_quantile_cover(f, 10, 0.8), 8);
	double g1[] = {3};
	cr_expect_eq(llmsim_quantile_cover(g1, 1, 0.8), 3);
	cr_expect(isnan(llmsim_quantile_cover(g1, 0, 0.8)));

	/* |err| sorted 2 3 4 10 20: median 4, p90 at rank 3.6 = 10 + 0.6*10 = 16;
	 * signed sorted -10 -3 2 4 20: median 2. p90 16 > 15: target missed. */
	const double pct[] = {-10, 2, -3, 4, 20};
	struct llmsim_err_stats s;
	llmsim_err_stats_compute(pct, 5, &s);
	cr_expect_eq(s.n, 5);
	expect_close(s.median_abs_pct, 4, 1e-12);
	expect_close(s.p90_abs_pct, 16, 1e-12);
	expect_close(s.p80_abs_pct, 10, 1e-12); /* ceil(0.8 x 5) = 4th of 2 3 4 10 20 */
	expect_close(s.median_signed_pct, 2, 1e-12);
	cr_expect_not(s.meets_target);
	const double ok[] = {1, -2, 3, -4, 5, 14};
	/* |err| 1 2 3 4 5 14: median 3.5, p90 rank 4.5 = 5 + 0.5*9 = 9.5 */
	llmsim_err_stats_compute(ok, 6, &s);
	expect_close(s.median_abs_pct, 3.5, 1e-12);
	expect_close(s.p90_abs_pct, 9.5, 1e-12);
	cr_expect(s.meets_target);
}

static void add_direct(struct llmsim_calib_set *set, const char *cls, const char *split, double t,
		       double bytes, double dram)
{
	struct llmsim_case c = {.time_median_s = t, .bytes_declared = bytes};
	snprintf(c.op_spec, sizeof c.op_spec, "%s %s %zu", cls, split, set->n);
	snprintf(c.op_class, sizeof c.op_class, "%s", cls);
	snprintf(c.split, sizeof c.split, "%s", split);
	cr_assert_eq(llmsim_calib_set_add(set, (int64_t)set->n + 1, &c, dram, NULL), 0);
}

Test(calib_validate, hand_made_set)
{
	/* Direct cases predict exactly: launch = kernel_overhead_s = 2 us;
	 * hbm = 2 us + bytes / (4.8e12 * 0.8). */
	struct llmsim_gpu g = h200();
	g.hbm_bytes_per_s = 4.8e12;
	g.param[LLMSIM_PARAM_KERNEL_OVERHEAD_S] = 2e-6;
	g.param[LLMSIM_PARAM_HBM_FRACTION] = 0.8;
	struct llmsim_calib_set set = {0};
	set.l2_bytes = 0;
	/* launch, held out: measured 2.0, 2.5, 1.6, 2.2, 2.0 us -> errors
	 * 0, -20, +25, -9.0909, 0 %: |err| sorted 0 0 9.09 20 25, median
	 * 9.0909, p90 at rank 3.6 = 20 + 0.6 * 5 = 23; signed median 0. */
	const double lt[] = {2.0e-6, 2.5e-6, 1.6e-6, 2.2e-6, 2.0e-6};
	for (int i = 0; i < 5; i++)
		add_direct(&set, "launch", "holdout", lt[i], 0, NAN);
	add_direct(&set, "launch", "fit", 4.0e-6, 0, NAN); /* -50 %, fit split only */
	/* hbm, held out: 3.84 GB -> 2 us + 1 ms = 1.002 ms predicted.
	 * Measured 1.002 ms (0 %) with DRAM bytes 3.2 GB (predicted 3.84 GB:
	 * +20 %), and 0.835 ms (+20 %) with 4.8 GB (-20 %). */
	add_direct(&set, "hbm", "holdout", 1.002e-3, 3.84e9, 3.2e9);
	add_direct(&set, "hbm", "holdout", 0.835e-3, 3.84e9, 4.8e9);
	add_direct(&set, "other", "holdout", 1e-3, 0, NAN); /* not modelled */

	struct llmsim_validation v = {0};
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_calib_validate(&g, &set, "holdout", &v, &err), 0, "%s", err.msg);
	cr_assert_eq(v.nclasses, 2);
	cr_expect_str_eq(v.classes[0].name, "hbm");
	cr_expect_str_eq(v.classes[1].name, "launch");
	const struct llmsim_err_stats *l = &v.classes[1], *h = &v.classes[0];
	cr_expect_eq(l->n, 5);
	expect_close(l->median_abs_pct, 100.0 / 11, 1e-9);
	expect_close(l->p90_abs_pct, 23, 1e-9);
	expect_close(l->median_signed_pct, 0, 1e-9);
	cr_expect_not(l->meets_target);
	cr_expect_eq(h->n, 2);
	/* 0.835 ms measured, 1.002 ms predicted: +20 % */
	expect_close(h->median_abs_pct, 10, 1e-6);
	expect_close(h->p90_abs_pct, 18, 1e-6);
	cr_expect_eq(v.not_modelled, 1);
	cr_expect_eq(v.all.n, 7);
	/* worst first: +25 % launch, then the +20 % hbm case and the -20 %
	 * launch case (in either order: their |error| ties up to rounding) */
	cr_assert(v.nworst == 7);
	expect_close(v.worst[0].err_pct, 25, 1e-9);
	expect_close(fabs(v.worst[1].err_pct), 20, 1e-6);
	expect_close(fabs(v.worst[2].err_pct), 20, 1e-6);
	cr_expect(strcmp(v.worst[1].op_class, v.worst[2].op_class) != 0,
		  "one launch and one hbm case at 20 %%");
	/* HBM bytes: +20 % and -20 % */
	cr_expect_eq(v.hbm_n, 2);
	expect_close(v.hbm_median_abs_pct, 20, 1e-9);
	expect_close(v.hbm_median_signed_pct, 0, 1e-9);

	/* every split: the fit launch case joins (-50 %) */
	cr_assert_eq(llmsim_calib_validate(&g, &set, NULL, &v, &err), 0);
	cr_expect_eq(v.classes[1].n, 6);
	expect_close(v.worst[0].err_pct, -50, 1e-9);
	llmsim_calib_set_release(&set);
}

Test(calib_fit, profile_written_atomically_and_loads)
{
	struct llmsim_gpu truth = h200(), gpu = h200();
	truth.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION] = 0.7;
	struct llmsim_calib_set set;
	make_set(&truth, 0.0, &set);
	snprintf(set.device, sizeof set.device, "NVIDIA \"H200\"");
	snprintf(set.driver, sizeof set.driver, "580.159.04");
	set.sm_clock_hz = 1.98e9;
	struct llmsim_fit_result r;
	struct llmsim_validation ho = {0};
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_calib_fit(&gpu, &set, NULL, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_calib_validate(&gpu, &set, "holdout", &ho, &err), 0);
	char dir[] = "/tmp/llmsim-prof-XXXXXX", path[128];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/h200.yaml", dir);
	struct llmsim_profile_info info = {.date = "2026-11-29", .source = "test.db"};
	cr_assert_eq(llmsim_calib_write_profile(path, &gpu, &set, &r, &ho, &info, &err), 0, "%s",
		     err.msg);
	struct llmsim_gpu back = h200();
	cr_assert_eq(llmsim_gpu_apply_profile(&back, path, &err), 0, "%s", err.msg);
	expect_close(back.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION], 0.7, 0.01);
	cr_expect_gt(back.nerr_classes, 0);
	const struct llmsim_err_class *ec = llmsim_gpu_err_class(&back, "gemm");
	cr_assert_not_null(ec);
	cr_expect_eq(ec->n, 3); /* gemm specs 3, 7, 11 of the 12 are held out */

	/* A path that cannot be written: an error, and no temporary left. */
	char bad[160];
	snprintf(bad, sizeof bad, "%s/missing/h200.yaml", dir);
	cr_expect_neq(llmsim_calib_write_profile(bad, &gpu, &set, &r, &ho, &info, &err), 0);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1 && rm -rf '%s'", dir, dir);
	cr_expect_eq(system(cmd), 0, "only the profile is left in %s", dir);
	llmsim_calib_set_release(&set);
}
