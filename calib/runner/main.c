/*
 * main.c - llmsim-calib-runner: runs the calibration cases on the GPU under
 * CUPTI and writes them into the calibration store.
 *
 *   llmsim-calib-runner --db FILE [--quick] [--only CLASS] [--list]
 *                       [--budget-s S] [--verbose] [--no-counters] [--skip N]
 *                       [--operand-data normal|grid|zeros]
 *
 * --counter-passes CHIP prints how many replay passes the counter metrics
 * take on CHIP ("GH100"), from CUPTI's host side alone (no GPU needed).
 * --skip N skips the first N selected cases of each class: after a case
 * breaks the CUDA context (exit 3) the runner prints the --only/--skip
 * arguments that resume after it.
 *
 * --operand-data picks the values every case fills its operands with
 * (kernels/kcommon.h): normal (the default; what trained weights and
 * activations look like, and the only data the fit takes), or grid / zeros
 * to measure how operand data moves the clock under the power limit. The
 * store records it with each run (runs.operand_data); cases on other data
 * than normal are stored as "probe" cases, which no fit uses.
 *
 * Per case: set up (fresh random inputs), check against the CPU reference,
 * warm up, time 10-50 repetitions (about 50 ms) with the CUPTI Activity API
 * (the case time of one repetition is the sum of its kernels' durations),
 * then one invocation under the Range Profiler for hardware counters. Each
 * class is one store run, committed on its own: a failure or a kill later
 * leaves the earlier classes in the database. A failing case is logged on
 * one line and skipped. SIGTERM/SIGINT and --budget-s stop after the
 * current case and commit what was measured.
 */
#include <cuda_runtime.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/stats.h"
#include "runner.h"

#define PROG "llmsim-calib-runner"
/* how messages name us: `llmsim calib run` starts us with that as argv[0] */
static const char *prog = PROG;
#define MAX_REPS 64

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static volatile sig_atomic_t g_stop;
static int g_operand_data; /* --operand-data: enum llmsim_kdata of every case */

const char *const runner_operand_data_name[LLMSIM_KDATA_COUNT] = {
	[LLMSIM_KDATA_NORMAL] = "normal", [LLMSIM_KDATA_GRID] = "grid",
	[LLMSIM_KDATA_ZEROS] = "zeros",
};
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

struct opts {
	const char *db;
	const char *only;
	int quick, list, verbose, no_counters;
	int skip;             /* selected cases of each class to skip (resume) */
	const char *passes_chip; /* --counter-passes CHIP: host-side check only */
	int data;             /* enum llmsim_kdata */
	double budget_s;
};

/* timing parameters: full and --quick */
struct plan {
	double warmup_s;      /* heavy GEMM before the first case */
	int warm_reps;        /* per case, before timing */
	double target_s;      /* time the repetitions should add up to */
	int min_reps, max_reps;
};
static const struct plan plan_full = {1.0, 3, 0.05, 10, 50};
static const struct plan plan_quick = {0.3, 2, 0.01, 5, 10};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void demangle(const char *name, char *out, size_t size)
{
	int st = -1;
	char *d = __cxa_demangle(name, NULL, NULL, &st);
	snprintf(out, size, "%s", st == 0 && d ? d : name);
	free(d);
}

struct case_result {
	struct llmsim_case c;
	struct llmsim_kernel_rec *k;
	int nk;
	struct counter_values cv;
	int have_counters;
	int by_order;          /* kernels attributed by launch order, not external ids */
};

static int cmp_start(const void *a, const void *b)
{
	const struct kernel_record *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int run_cb(void *arg, char *err, size_t errsz)
{
	return llmsim_kbench_run(arg, err, errsz);
}

static cudaEvent_t ev[2 * MAX_REPS + 2];
static int counters_on;
static char counters_why[256] = "";
static int counters_fail_streak;

/* Group kernel records of the timed repetitions into the case result. */
static int summarize(struct case_result *res, const struct llmsim_kbench *b,
		     struct kernel_record *r, size_t n, uint64_t ext_base, int reps,
		     const double *ev_s, char *err, size_t errsz)
{
	double rep_time[MAX_REPS];
	int rep_n[MAX_REPS] = {0};
	double rep_lo[MAX_REPS], rep_hi[MAX_REPS];
	int *rep_of = calloc(n ? n : 1, sizeof *rep_of);
	if (!rep_of)
		return snprintf(err, errsz, "out of memory"), -1;
	qsort(r, n, sizeof *r, cmp_start);
	size_t matched = 0;
	for (size_t i = 0; i < n; i++) {
		rep_of[i] = -1;
		if (r[i].external > ext_base && r[i].external <= ext_base + (uint64_t)reps) {
			rep_of[i] = (int)(r[i].external - ext_base - 1);
			matched++;
		}
	}
	if (matched == 0 && n > 0 && n % reps == 0) {
		/* no external ids came back: the repetitions ran in order on one stream */
		size_t per = n / reps;
		for (size_t i = 0; i < n; i++)
			rep_of[i] = (int)(i / per);
		res->by_order = 1;
		matched = n;
	}
	for (int i = 0; i < reps; i++)
		rep_time[i] = 0, rep_lo[i] = INFINITY, rep_hi[i] = 0;
	for (size_t i = 0; i < n; i++) {
		int k = rep_of[i];
		if (k < 0)
			continue;
		rep_time[k] += (r[i].end_ns - r[i].start_ns) * 1e-9;
		rep_n[k]++;
		if (r[i].start_ns * 1e-9 < rep_lo[k])
			rep_lo[k] = r[i].start_ns * 1e-9;
		if (r[i].end_ns * 1e-9 > rep_hi[k])
			rep_hi[k] = r[i].end_ns * 1e-9;
	}
	double t[MAX_REPS];
	int nt = 0;
	for (int i = 0; i < reps; i++) {
		if (matched == 0) {
			t[nt++] = ev_s[i]; /* no kernel records at all: event times */
		} else if (rep_n[i] > 0) {
			/* launch cases: GPU time per launch, back to back */
			t[nt++] = b->spec.fam == LLMSIM_KF_EMPTY
					  ? (rep_hi[i] - rep_lo[i]) / b->launches
					  : rep_time[i];
		}
	}
	if (nt == 0) {
		free(rep_of);
		return snprintf(err, errsz, "no timings recorded"), -1;
	}
	llmsim_sort_doubles(t, (size_t)nt);
	res->c.reps = nt;
	res->c.time_median_s = llmsim_quantile_sorted(t, (size_t)nt, 0.5);
	res->c.time_min_s = t[0];
	res->c.time_p10_s = llmsim_quantile_sorted(t, (size_t)nt, 0.1);
	res->c.time_p90_s = llmsim_quantile_sorted(t, (size_t)nt, 0.9);

	/* kernels by name, in first-launch order */
	res->k = calloc(n ? n : 1, sizeof *res->k);
	double *d = malloc((n ? n : 1) * sizeof *d);
	char *done = calloc(n ? n : 1, 1);
	if (!res->k || !d || !done) {
		free(d), free(done), free(rep_of);
		return snprintf(err, errsz, "out of memory"), -1;
	}
	int reps_with = 0;
	for (int i = 0; i < reps; i++)
		reps_with += rep_n[i] > 0;
	for (size_t i = 0; i < n; i++) {
		if (done[i] || rep_of[i] < 0)
			continue;
		int nd = 0;
		for (size_t j = i; j < n; j++)
			if (!done[j] && rep_of[j] >= 0 && !strcmp(r[j].name, r[i].name)) {
				d[nd++] = (r[j].end_ns - r[j].start_ns) * 1e-9;
				done[j] = 1;
			}
		struct llmsim_kernel_rec *k = &res->k[res->nk++];
		demangle(r[i].name, k->name, sizeof k->name);
		memcpy(k->grid, r[i].grid, sizeof k->grid);
		memcpy(k->block, r[i].block, sizeof k->block);
		k->regs_per_thread = r[i].regs;
		k->static_smem_bytes = r[i].static_smem;
		k->dynamic_smem_bytes = r[i].dynamic_smem;
		k->duration_median_s = llmsim_quantile(d, (size_t)nd, 0.5);
		k->launches_per_rep = reps_with ? (nd + reps_with - 1) / reps_with : nd;
	}
	free(d), free(done), free(rep_of);
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Returns 0, -1 (case failed: skip), -2 (CUDA context broken: stop). */
static int measure(const struct rcase *rc, int idx, const struct plan *pl, uint64_t run_seed,
		   struct case_result *res, char *err, size_t errsz)
{
	struct llmsim_kbench b;
	memset(res, 0, sizeof *res);
	snprintf(res->c.op_spec, sizeof res->c.op_spec, "%s", rc->op_spec);
	snprintf(res->c.op_class, sizeof res->c.op_class, "%s", rc->op_class);
	/* only normal operands may be fitted: other data is a probe of how
	 * data moves the clock */
	snprintf(res->c.split, sizeof res->c.split, "%s",
		 g_operand_data == LLMSIM_KDATA_NORMAL ? rc->split : "probe");
	struct llmsim_kspec spec = rc->spec;
	spec.data = (enum llmsim_kdata)g_operand_data;
	if (llmsim_kbench_setup(&b, &spec, mix(run_seed + (uint64_t)idx) | 1, err, errsz))
		goto fail_nofree;
	snprintf(res->c.impl, sizeof res->c.impl, "%s", b.impl);
	res->c.flops_declared = b.flops_declared;
	res->c.bytes_declared = b.bytes_declared;
	if (llmsim_kbench_check(&b, err, errsz))
		goto fail;
	res->c.check_rel_err = b.check_rel_err;
	for (int i = 0; i < pl->warm_reps; i++)
		if (llmsim_kbench_run(&b, err, errsz))
			goto fail;
	float ms = 0;
	if (cudaEventRecord(ev[0], 0) != cudaSuccess || llmsim_kbench_run(&b, err, errsz) ||
	    cudaEventRecord(ev[1], 0) != cudaSuccess || cudaEventSynchronize(ev[1]) != cudaSuccess ||
	    cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess) {
		if (!err[0])
			snprintf(err, errsz, "warm-up: %s", cudaGetErrorString(cudaGetLastError()));
		goto fail;
	}
	double est = ms > 0 ? ms * 1e-3 : 1e-6;
	int reps = (int)ceil(pl->target_s / est);
	reps = reps < pl->min_reps ? pl->min_reps : reps > pl->max_reps ? pl->max_reps : reps;
	struct kernel_record *r = NULL;
	size_t n = 0;
	if (activity_take(&r, &n, err, errsz) < 0) /* drop the warm-up's records */
		goto fail;
	activity_free(r, n);
	uint64_t ext_base = (uint64_t)(idx + 1) * 1000;
	clock_begin();
	for (int i = 0; i < reps; i++) {
		activity_push(ext_base + i + 1);
		cudaEventRecord(ev[2 * i], 0);
		int rrc = llmsim_kbench_run(&b, err, errsz);
		cudaEventRecord(ev[2 * i + 1], 0);
		activity_pop();
		if (rrc)
			goto fail;
	}
	cudaError_t ce = cudaDeviceSynchronize();
	double timed_clock_hz = clock_end();
	if (ce != cudaSuccess) {
		snprintf(err, errsz, "timed runs: %s", cudaGetErrorString(ce));
		goto fail;
	}
	double ev_s[MAX_REPS];
	for (int i = 0; i < reps; i++) {
		float e = 0;
		cudaEventElapsedTime(&e, ev[2 * i], ev[2 * i + 1]);
		ev_s[i] = e * 1e-3;
	}
	if (activity_take(&r, &n, err, errsz) < 0)
		goto fail;
	int src = summarize(res, &b, r, n, ext_base, reps, ev_s, err, errsz);
	activity_free(r, n);
	if (src)
		goto fail;
	if (counters_on) {
		char cerr[256] = "";
		activity_pause(1);
		int crc = counters_measure(run_cb, &b, &res->cv, cerr, sizeof cerr);
		activity_pause(0);
		if (crc == 0) {
			res->have_counters = 1;
			if (!(timed_clock_hz > 0)) /* no NVML: the counter pass's clock */
				res->c.sm_clock_hz = res->cv.v[COUNTER_METRICS - 1];
			counters_fail_streak = 0;
		} else {
			fprintf(stderr, "%s: counters failed for '%s': %s\n", prog, rc->op_spec, cerr);
			if (++counters_fail_streak >= 3) {
				counters_on = 0;
				snprintf(counters_why, sizeof counters_why,
					 "off after 3 failures in a row: %s", cerr);
				fprintf(stderr, "%s: counters %s\n", prog, counters_why);
			}
		}
		/* the profiled invocation's records are dropped at the next take */
	}
	if (timed_clock_hz > 0)
		res->c.sm_clock_hz = timed_clock_hz;
	llmsim_kbench_free(&b);
	return 0;
fail:
	llmsim_kbench_free(&b);
fail_nofree:
	free(res->k);
	res->k = NULL;
	res->nk = 0;
	/* an error that survives clearing (illegal address, ...) is sticky:
	 * the context is unusable and every later case would fail */
	cudaGetLastError();
	if (cudaDeviceSynchronize() != cudaSuccess)
		return -2;
	return -1;
}

/* ~1 s of a heavy GEMM so the SM clock has ramped before the first case. */
static void warm_up(double seconds)
{
	struct llmsim_kspec s = {.fam = LLMSIM_KF_GEMM, .dtype = LLMSIM_KDT_BF16,
				 .m = 8192, .n = 8192, .k = 8192};
	struct llmsim_kbench b;
	char err[256];
	if (llmsim_kbench_setup(&b, &s, 12345, err, sizeof err)) {
		fprintf(stderr, "%s: warm-up GEMM: %s\n", prog, err);
		return;
	}
	double t0 = now_s();
	while (now_s() - t0 < seconds && !g_stop) {
		for (int i = 0; i < 10; i++)
			if (llmsim_kbench_run(&b, err, sizeof err))
				break;
		if (cudaDeviceSynchronize() != cudaSuccess)
			break;
	}
	llmsim_kbench_free(&b);
	struct kernel_record *r;
	size_t n;
	if (activity_take(&r, &n, err, sizeof err) >= 0)
		activity_free(r, n);
}

static int store_case(struct llmsim_store *st, int64_t run_id, const struct case_result *res,
		      struct llmsim_err *e)
{
	int64_t case_id = 0;
	int rc = llmsim_store_add_case(st, run_id, &res->c, &case_id, e);
	for (int i = 0; rc == 0 && i < res->nk; i++)
		rc = llmsim_store_add_kernel(st, case_id, &res->k[i], e);
	for (int m = 0; rc == 0 && res->have_counters && m < COUNTER_METRICS; m++)
		rc = llmsim_store_add_counter(st, case_id, counter_metric_names[m], res->cv.v[m], e);
	return rc;
}

/* The rest of a --verbose case line (its start is printed before the case
 * runs, so a crash or a hang shows which case it was). */
static void print_case(const struct case_result *res)
{
	double t = res->c.time_median_s;
	fprintf(stderr, "%.3f us (p10 %.3f, p90 %.3f, %d reps, %d kernels%s)", t * 1e6,
		res->c.time_p10_s * 1e6, res->c.time_p90_s * 1e6, res->c.reps, res->nk,
		res->by_order ? ", by order" : "");
	if (res->c.flops_declared > 0 && t > 0)
		fprintf(stderr, " %.1f TFLOP/s", res->c.flops_declared / t * 1e-12);
	if (res->c.bytes_declared > 0 && t > 0)
		fprintf(stderr, " %.0f GB/s", res->c.bytes_declared / t * 1e-9);
	fprintf(stderr, " err %.2g", res->c.check_rel_err);
	if (res->have_counters)
		fprintf(stderr, " dram %.1f MB, %.0f MHz", (res->cv.v[1] + res->cv.v[2]) * 1e-6,
			res->cv.v[COUNTER_METRICS - 1] * 1e-6);
	fprintf(stderr, "\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " --db FILE [--quick] [--only CLASS] [--list] [--budget-s S] "
		   "[--verbose] [--no-counters] [--skip N] [--operand-data normal|grid|zeros]\n"
		   "       " PROG " --list [--quick] [--only CLASS] | --counter-passes CHIP\n"
		   "classes:");
	for (int i = 0; i < runner_nclasses; i++)
		fprintf(f, " %s", runner_classes[i]);
	fprintf(f, "\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"db", required_argument, 0, 'd'},    {"quick", no_argument, 0, 'q'},
		{"only", required_argument, 0, 'o'},  {"list", no_argument, 0, 'l'},
		{"budget-s", required_argument, 0, 'b'}, {"verbose", no_argument, 0, 'v'},
		{"no-counters", no_argument, 0, 'n'}, {"skip", required_argument, 0, 's'},
		{"counter-passes", required_argument, 0, 'p'},
		{"operand-data", required_argument, 0, 'D'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	int c;
	memset(o, 0, sizeof *o);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 'q': o->quick = 1; break;
		case 'o': o->only = optarg; break;
		case 'l': o->list = 1; break;
		case 'v': o->verbose = 1; break;
		case 'n': o->no_counters = 1; break;
		case 'p': o->passes_chip = optarg; break;
		case 'D': {
			int d = -1;
			for (int i = 0; i < LLMSIM_KDATA_COUNT; i++)
				if (!strcmp(optarg, runner_operand_data_name[i]))
					d = i;
			if (d < 0) {
				fprintf(stderr, "%s: unknown --operand-data '%s' (normal, grid or zeros)\n",
					prog, optarg);
				return 2;
			}
			o->data = d;
			break;
		}
		case 'b': {
			char *end;
			o->budget_s = strtod(optarg, &end);
			if (*end || o->budget_s <= 0) {
				fprintf(stderr, "%s: bad --budget-s '%s'\n", prog, optarg);
				return 2;
			}
			break;
		}
		case 's': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 100000) {
				fprintf(stderr, "%s: bad --skip '%s'\n", prog, optarg);
				return 2;
			}
			o->skip = (int)v;
			break;
		}
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return 2;
	}
	if (o->only) {
		int ok = 0;
		for (int i = 0; i < runner_nclasses; i++)
			ok |= !strcmp(o->only, runner_classes[i]);
		if (!ok) {
			fprintf(stderr, "%s: unknown class '%s'\n", prog, o->only);
			usage(stderr);
			return 2;
		}
	}
	if (!o->list && !o->db && !o->passes_chip) {
		fprintf(stderr, "%s: --db FILE is required\n", prog);
		return 2;
	}
	return 0;
}

static int selected(const struct opts *o, const struct rcase *c)
{
	return (!o->only || !strcmp(o->only, c->op_class)) && (!o->quick || c->quick);
}

static void iso_now(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int main(int argc, char **argv)
{
	struct opts o;
	if (argc > 0 && argv[0] && !strchr(argv[0], '/'))
		prog = argv[0];
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	g_operand_data = o.data;
	if (o.passes_chip) {
		/* the counter configuration on the host alone (no GPU needed) */
		size_t passes = 0;
		char perr[256] = "";
		if (counters_passes(o.passes_chip, &passes, perr, sizeof perr)) {
			fprintf(stderr, "%s: %s\n", prog, perr);
			return 1;
		}
		printf("%zu\n", passes);
		return 0;
	}
	const struct rcase *cases;
	int ncases = runner_cases(&cases);
	if (o.list) {
		for (int i = 0; i < ncases; i++)
			if (selected(&o, &cases[i]))
				printf("%-12s %-8s %s\n", cases[i].op_class, cases[i].split,
				       cases[i].op_spec);
		return 0;
	}
	int ndev = 0;
	cudaError_t ce = cudaGetDeviceCount(&ndev);
	if (ce != cudaSuccess || ndev < 1) {
		fprintf(stderr, "%s: no CUDA GPU found (cudaGetDeviceCount: %s)\n", prog,
			ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	double t_start = now_s();
	const struct plan *pl = o.quick ? &plan_quick : &plan_full;
	int tty = isatty(2);
	ce = cudaSetDevice(0);
	if (ce == cudaSuccess)
		ce = cudaFree(0);
	for (size_t i = 0; ce == cudaSuccess && i < sizeof ev / sizeof ev[0]; i++)
		ce = cudaEventCreate(&ev[i]);
	if (ce != cudaSuccess) {
		fprintf(stderr, "%s: CUDA init: %s\n", prog, cudaGetErrorString(ce));
		return 1;
	}
	char err[512] = "";
	if (activity_init(err, sizeof err))
		fprintf(stderr, "%s: CUPTI activity unavailable (%s): timing with CUDA events\n", prog,
			err);
	struct llmsim_device_info dev;
	devinfo_fill(&dev);
	fprintf(stderr, "%s: %s, %d SMs, L2 %.0f MiB, %.0f GiB, driver %s, CUDA %s, CUPTI %s, "
		"cuBLAS %s, max SM clock %.0f MHz\n",
		prog, dev.name, dev.sms, dev.l2_bytes / 1048576, dev.hbm_bytes / 1073741824.0, dev.driver,
		dev.cuda_runtime, dev.cupti, dev.cublas, dev.sm_clock_max_hz * 1e-6);
	if (clock_init(dev.uuid))
		fprintf(stderr, "%s: NVML unavailable: a case's clock is its counter pass's\n", prog);
	struct llmsim_err e = {0};
	struct llmsim_store *st = NULL;
	if (llmsim_store_open(o.db, LLMSIM_STORE_CREATE, &st, &e)) {
		fprintf(stderr, "%s: %s\n", prog, e.msg);
		return 1;
	}
	err[0] = 0;
	if (o.no_counters) {
		snprintf(counters_why, sizeof counters_why, "off (--no-counters)");
	} else if (counters_init(err, sizeof err) == 0) {
		counters_on = 1;
		snprintf(counters_why, sizeof counters_why, "on");
	} else {
		snprintf(counters_why, sizeof counters_why, "off (%s)", err);
		fprintf(stderr, "%s: hardware counters unavailable, timings only: %s\n", prog, err);
	}
	warm_up(pl->warmup_s);
	uint64_t run_seed = mix((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	int total_ok = 0, total_fail = 0, broken = 0;
	char host[64] = "";
	gethostname(host, sizeof host - 1);
	for (int ci = 0; ci < runner_nclasses && !g_stop && !broken; ci++) {
		const char *cls = runner_classes[ci];
		int n = 0, done = 0, ok = 0, fail = 0;
		for (int i = 0; i < ncases; i++)
			n += selected(&o, &cases[i]) && !strcmp(cases[i].op_class, cls);
		if (!n)
			continue;
		double t0 = now_s();
		struct llmsim_run_info run = {.quick = o.quick};
		iso_now(run.started_at, sizeof run.started_at);
		snprintf(run.host, sizeof run.host, "%s", host);
		snprintf(run.tool, sizeof run.tool, PROG " %s (git %s)", LLMSIM_VERSION, LLMSIM_GIT_REV);
		snprintf(run.notes, sizeof run.notes, "class=%s; counters %.200s", cls, counters_why);
		snprintf(run.operand_data, sizeof run.operand_data, "%s",
			 runner_operand_data_name[g_operand_data]);
		int64_t run_id = 0;
		if (llmsim_store_run_begin(st, &dev, &run, &run_id, &e)) {
			fprintf(stderr, "%s: store: %s\n", prog, e.msg);
			break;
		}
		double best_flops = 0, best_bytes = 0;
		for (int i = 0; i < ncases && !g_stop; i++) {
			const struct rcase *c = &cases[i];
			if (!selected(&o, c) || strcmp(c->op_class, cls))
				continue;
			if (o.budget_s > 0 && now_s() - t_start > o.budget_s) {
				fprintf(stderr, "%s: budget of %.0f s reached, stopping\n", prog, o.budget_s);
				g_stop = 1;
				break;
			}
			done++;
			if (done <= o.skip)
				continue;
			if (o.verbose) {
				fprintf(stderr, "  [%s %d/%d] %s: ", cls, done, n, c->op_spec);
				fflush(stderr);
			} else if (tty) {
				fprintf(stderr, "\r[%s %d/%d] %-70.70s", cls, done, n, c->op_spec);
			}
			struct case_result res;
			err[0] = 0;
			int mrc = measure(c, i, pl, run_seed, &res, err, sizeof err);
			if (mrc == 0 && store_case(st, run_id, &res, &e) != 0) {
				snprintf(err, sizeof err, "store: %.400s", e.msg);
				mrc = -1;
			}
			if (mrc) {
				fail++;
				fprintf(stderr, "%s%s: case '%s' failed: %s\n",
					o.verbose ? "FAILED\n" : tty ? "\n" : "", prog, c->op_spec, err);
				if (mrc == -2) {
					fprintf(stderr, "%s: the CUDA context is broken; stopping "
							"after committing this class; resume with --only %s "
							"--skip %d\n", prog, cls, done);
					broken = 1;
					free(res.k);
					break;
				}
			} else {
				ok++;
				if (o.verbose)
					print_case(&res);
				double t = res.c.time_median_s;
				if (t > 0 && res.c.flops_declared / t > best_flops)
					best_flops = res.c.flops_declared / t;
				if (t > 0 && res.c.bytes_declared / t > best_bytes)
					best_bytes = res.c.bytes_declared / t;
			}
			free(res.k);
		}
		if (tty && !o.verbose)
			fprintf(stderr, "\n");
		if (llmsim_store_run_commit(st, run_id, &e)) {
			fprintf(stderr, "%s: store commit of class %s: %s\n", prog, cls, e.msg);
			llmsim_store_run_abort(st);
			fail += ok, ok = 0;
		}
		total_ok += ok, total_fail += fail;
		fprintf(stderr, "class %s: %d ok, %d failed, %d not run, %.1f s; best %.1f TFLOP/s, "
			"%.0f GB/s; counters %s\n",
			cls, ok, fail, n - ok - fail, now_s() - t0, best_flops * 1e-12, best_bytes * 1e-9,
			counters_on ? "on" : "off");
	}
	uint64_t dropped = activity_dropped();
	if (dropped)
		fprintf(stderr, "%s: CUPTI dropped %llu records\n", prog, (unsigned long long)dropped);
	counters_shutdown();
	clock_shutdown();
	activity_shutdown();
	llmsim_kernels_shutdown();
	llmsim_store_close(st);
	fprintf(stderr, "%s: %d cases stored, %d failed, %.1f s%s\n", prog, total_ok, total_fail,
		now_s() - t_start, g_stop ? " (stopped early)" : "");
	return broken ? 3 : g_stop ? 4 : 0;
}
