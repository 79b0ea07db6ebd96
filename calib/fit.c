/*
 * fit.c - fitting the model's efficiency and overhead parameters to
 * measured kernel times.
 *
 * Each parameter is fitted on the op classes that own it (the table
 * below): the tensor fraction on GEMMs, the HBM fraction on copies,
 * element-wise ops (decode attention has its own fraction), the per-kernel overhead on the empty kernel,
 * copies and element-wise ops (where it is a large, visible part of the
 * time; in a GEMM or attention kernel it would only soak up what the
 * tensor model misses). A parameter only its own microbenchmark can pin (shared
 * memory, L2 bandwidth) is left at the hardware file's value when there is
 * no such case, rather than let GEMM times reinterpret it: a GEMM slower
 * than the tensor model says is a lower tensor fraction, not a slow shared
 * memory.
 *
 * The objective of a parameter is the sum over its classes of the mean
 * absolute log error, mean |ln(predicted / measured)|, over the "fit"
 * cases: log errors weigh a 2x too slow and a 2x too fast prediction
 * alike, the absolute value keeps a few odd kernels from dragging a
 * parameter (an L1 fit is a median-type estimate), and the per-class mean
 * keeps the class with most cases from outvoting the others.
 *
 * The search is block coordinate descent in log space, parameters in the
 * table's order (overhead, memory, then GEMM, attention, collectives): for
 * each, a grid over its bounds, then golden-section search around the best
 * grid point; a parameter only moves when its objective drops; sweeps
 * repeat until no parameter moves. Only the cases a parameter influences
 * are re-predicted while it moves.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"

/* Which parameters are fitted, within which bounds, on which classes (in
 * fit order). Parameters that are hardware facts (sfu_ops_per_clock_per_sm)
 * or not listed keep the hardware file's value. Fractions stay at most 1
 * (the loader's range). */
static const struct {
	const char *key;
	double lo, hi;
	const char *classes; /* owners, space-separated */
} params[] = {
    {"kernel_overhead_s", 1e-7, 3e-5, "launch hbm l2 smem elementwise"},
    /* the per-call library cases (decode's split and combine kernels
     * show it most) */
    {"graph_kernel_gap_s", 1e-8, 1e-5, "decode"},
    {"hbm_fraction", 0.30, 1.0, "hbm elementwise"},
    {"decode_hbm_fraction", 0.10, 1.0, "decode"},
    {"bytes_in_flight_per_thread", 8, 1024, "elementwise decode"},
    {"l2_hit_round_trip_s", 5e-8, 1e-6, "decode"},
    /* PyTorch's non-vectorized path (strided views): its per-element
     * offset arithmetic, from the strided cases of the element-wise class */
    {"strided_index_ops_per_element", 2, 400, "elementwise"},
    /* l2_fraction on the pure L2 cases (class "l2", STREAM re-runs over
     * arrays that stay in L2, the part beyond the reusable L2 priced at
     * HBM): with GEMMs held by their own per-SM in-flight limit and HBM
     * fraction it moves their held-out error by under a point (H200:
     * 0.78). Copies mix L2 reads with write-allocations, so it is a
     * floor for read-mostly traffic. */
    {"l2_fraction", 0.10, 1.0, "l2"},
    {"smem_fraction", 0.10, 1.0, "smem"},
    {"gemm_tensor_fraction", 0.20, 1.0, "gemm"},
    {"vector_fraction", 0.10, 1.0, "gemm"},
    {"gemm_hbm_fraction", 0.30, 1.0, "gemm"},
    {"sm_inflight_bytes", 2048, 262144, "gemm"},
    /* the knee between the HBM rate and the loads in flight, on the
     * GEMVs, element-wise ops and decode kernels near it */
    {"hbm_queue_exponent", 1.0, 32, "gemm elementwise decode"},
    /* the power law's capped clock, on the tensor-bound cases timed inside
     * a sustained load (cases.load_s: PyTorch GEMMs looped for 0.3 s,
     * MoE expert GEMMs): the only cases it moves, as lone kernel loops
     * stay at their burst clock */
    {"power_capped_clock_hz", 0.8e9, 2.0e9, "gemm"},
    /* what an 8-bit tensor FLOP draws against a 16-bit one, on the FP8
     * GEMMs timed inside a sustained load: their clock below BF16's */
    {"narrow_tensor_energy_relative", 0.2, 1.5, "gemm"},
    /* the grouped GEMM kernel of MoE experts (torch._grouped_mm) */
    {"grouped_gemm_tensor_fraction", 0.20, 1.0, "gemm"},
    {"grouped_gemm_hbm_fraction", 0.10, 1.0, "gemm"},
    {"grouped_gemm_fixed_s", 1e-7, 1e-4, "gemm"},
    /* an MoE combine's index_add_: its L2 atomics */
    {"l2_atomic_ops_per_s", 1e9, 1e13, "routing"},
    {"attention_tensor_fraction", 0.10, 1.0, "attention"},
    {"attention3_tensor_fraction", 0.10, 1.0, "attention"},
    {"attention_bwd_relative", 0.20, 1.5, "attention"},
    {"attention3_bwd_relative", 0.20, 1.5, "attention"},
    {"collective_bw_fraction", 0.10, 1.0, "collective"},
    /* collective_step_latency_s (Simple) is not fitted: 2 GPUs have only
     * 1- and 2-step rings, and the channel straggle takes whatever a
     * step would (the fit drives it to its bound, which 8 GPUs' 14 steps
     * would then miss); the hardware file states NCCL's own figure. */
    {"collective_ll_bw_fraction", 0.05, 1.0, "collective"},
    {"collective_ll_step_latency_s", 1e-8, 1e-4, "collective"},
    {"collective_fixed_s", 1e-7, 1e-4, "collective"},
    /* the local copy-out and the channel straggle: the all-gather and
     * reduce-scatter against all-reduce, and the curve of the bus
     * bandwidth from 4 MB to 2 GB (sim/collective.c). The LL128 step is
     * not fitted either: NCCL never picks LL128 on 2 GPUs (its Simple
     * latency, 8.4 + 3.4 per step, undercuts LL128's 14 + 1.9). NCCL's own figures
     * (collective_nccl_link_fraction, collective_ll_max_bytes_per_s) are
     * constants of its source, not fitted. */
    {"collective_local_bw_fraction", 0.02, 1.0, "collective"},
    {"collective_straggle_fraction", 0.001, 3.0, "collective"},
};
#define NPARAMS (sizeof params / sizeof params[0])

#define GRID	     24	  /* grid points per parameter */
#define GOLDEN_ITERS 40	  /* golden-section steps (bracket shrinks 0.618^40) */
#define MISS_PENALTY 10.0 /* |log error| of a prediction that fails */

int llmsim_calib_fit_bounds(enum llmsim_param e, double *lo, double *hi)
{
	if ((unsigned)e >= LLMSIM_PARAM_COUNT)
		return 0;
	for (size_t i = 0; i < NPARAMS; i++)
		if (!strcmp(params[i].key, llmsim_param_info[e].key)) {
			*lo = params[i].lo;
			*hi = params[i].hi;
			return 1;
		}
	return 0;
}

const char *llmsim_calib_fit_classes(enum llmsim_param e)
{
	for (size_t i = 0; (unsigned)e < LLMSIM_PARAM_COUNT && i < NPARAMS; i++)
		if (!strcmp(params[i].key, llmsim_param_info[e].key))
			return params[i].classes;
	return NULL;
}

/* Is `name` one of the space-separated words of `list`? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

struct fitter {
	struct llmsim_gpu *gpu;
	const struct llmsim_calib_set *set;
	size_t *idx; /* fit cases: indices into set->p */
	size_t n;
	int *cls; /* class number of each fit case */
	int ncls;
	int *cls_n;			/* cases per class */
	double *aerr;			/* |ln(pred/meas)| of each fit case */
	size_t *sens[LLMSIM_PARAM_COUNT]; /* fit cases each parameter moves */
	size_t nsens[LLMSIM_PARAM_COUNT];
	double *csum;	    /* per class sum of aerr (scratch) */
	const char **names; /* class names */
	unsigned char *use; /* classes in the objective now */
};

static double abs_log_err(const struct fitter *f, size_t j)
{
	const struct llmsim_calib_point *pt = &f->set->p[f->idx[j]];
	double t;
	if (llmsim_calib_predict(f->gpu, pt, &t, NULL, NULL) || !(t > 0) || !isfinite(t))
		return MISS_PENALTY;
	return fabs(log(t / pt->measured_s));
}

static double objective(const struct fitter *f)
{
	double total = 0;
	memset(f->csum, 0, (size_t)f->ncls * sizeof *f->csum);
	for (size_t j = 0; j < f->n; j++)
		f->csum[f->cls[j]] += f->aerr[j];
	for (int c = 0; c < f->ncls; c++)
		if (f->use[c])
			total += f->csum[c] / f->cls_n[c];
	return total;
}

/* Set parameter e to v, re-predict the cases it moves; the objective. */
static double try_value(struct fitter *f, int e, double v)
{
	f->gpu->param[e] = v;
	for (size_t k = 0; k < f->nsens[e]; k++)
		f->aerr[f->sens[e][k]] = abs_log_err(f, f->sens[e][k]);
	return objective(f);
}

/* One parameter: grid over [lo, hi] in log space, then golden section
 * around the best grid point. Keeps the old value unless one is better. */
static double fit_one(struct fitter *f, int e, double lo, double hi, double cur_obj)
{
	double x0 = f->gpu->param[e], best_x = x0, best = cur_obj;
	double a = log(lo), b = log(hi), step = (b - a) / (GRID - 1);
	int best_i = -1;
	for (int i = 0; i < GRID; i++) {
		double o = try_value(f, e, exp(a + i * step));
		if (o < best - 1e-12) {
			best = o;
			best_x = exp(a + i * step);
			best_i = i;
		}
	}
	/* bracket: the grid neighbours of the best point (or of the current
	 * value when no grid point beat it) */
	double c = best_i >= 0 ? a + best_i * step : log(x0);
	double l = fmax(a, c - step), r = fmin(b, c + step);
	const double g = 0.5 * (sqrt(5.0) - 1);
	double x1 = r - g * (r - l), x2 = l + g * (r - l);
	double f1 = try_value(f, e, exp(x1)), f2 = try_value(f, e, exp(x2));
	for (int it = 0; it < GOLDEN_ITERS && r - l > 1e-7; it++) {
		if (f1 <= f2) {
			r = x2;
			x2 = x1;
			f2 = f1;
			x1 = r - g * (r - l);
			f1 = try_value(f, e, exp(x1));
		} else {
			l = x1;
			x1 = x2;
			f1 = f2;
			x2 = l + g * (r - l);
			f2 = try_value(f, e, exp(x2));
		}
		if (f1 < best - 1e-12) {
			best = f1;
			best_x = exp(x1);
		}
		if (f2 < best - 1e-12) {
			best = f2;
			best_x = exp(x2);
		}
	}
	return try_value(f, e, best_x);
}

static int class_of(const char **names, int *n, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(names[i], name))
			return i;
	names[*n] = name;
	return (*n)++;
}

static void fitter_release(struct fitter *f)
{
	free(f->idx);
	free(f->cls);
	free(f->cls_n);
	free(f->aerr);
	free(f->csum);
	free(f->names);
	free(f->use);
	for (int e = 0; e < LLMSIM_PARAM_COUNT; e++)
		free(f->sens[e]);
}

/* The fit cases parameter e influences, with every other parameter where
 * it is now: predictions that change when e moves to either bound or 10%
 * either way. A parameter enters each time term monotonically (a rate
 * divides, an overhead adds) and terms combine by max and sum, so a case
 * that ignores both bounds ignores every value between them. Re-done
 * before each parameter's search, as the others move the binding terms.
 * Returns how many of them belong to the classes in f->use. */
static int find_sensitive(struct fitter *f, int e, double lo, double hi)
{
	double v0 = f->gpu->param[e];
	int owned = 0;
	const double probe[] = {lo, hi, v0 * 0.9, v0 * 1.1};
	f->nsens[e] = 0;
	for (size_t j = 0; j < f->n; j++) {
		const struct llmsim_calib_point *pt = &f->set->p[f->idx[j]];
		double base, t;
		f->gpu->param[e] = v0;
		int bad = llmsim_calib_predict(f->gpu, pt, &base, NULL, NULL);
		int moved = 0;
		for (size_t k = 0; k < sizeof probe / sizeof probe[0] && !moved; k++) {
			f->gpu->param[e] = probe[k];
			int rc = llmsim_calib_predict(f->gpu, pt, &t, NULL, NULL);
			moved = rc != bad || (!rc && fabs(t - base) > 1e-9 * base);
		}
		if (moved) {
			f->sens[e][f->nsens[e]++] = j;
			owned += f->use[f->cls[j]];
		}
	}
	f->gpu->param[e] = v0;
	return owned;
}

/* The parameter index of params[i] and its bounds for this fit: the table's,
 * widened to include the start (a start outside them is not thrown away).
 * -1 if this build lacks the key or the caller does not allow it. */
static int param_of(const struct fitter *f, const int *allow, size_t i, double *lo, double *hi)
{
	int e;
	for (e = 0; e < LLMSIM_PARAM_COUNT; e++)
		if (!strcmp(llmsim_param_info[e].key, params[i].key))
			break;
	if (e == LLMSIM_PARAM_COUNT || (allow && !allow[e]))
		return -1;
	*lo = fmin(params[i].lo, f->gpu->param[e]);
	*hi = fmax(params[i].hi, f->gpu->param[e]);
	return e;
}

/* Put the owner classes of params[i] (all classes when i is NPARAMS) in
 * the objective. */
static void use_classes(struct fitter *f, size_t i)
{
	for (int c = 0; c < f->ncls; c++)
		f->use[c] = i == NPARAMS || in_list(params[i].classes, f->names[c]);
}

int llmsim_calib_fit(struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
		     const struct llmsim_fit_opts *opts, struct llmsim_fit_result *res,
		     struct llmsim_err *err)
{
	struct fitter f = {.gpu = gpu, .set = set};
	memset(res, 0, sizeof *res);
	memcpy(res->start, gpu->param, sizeof res->start);
	/* Cases the model cannot predict at the start (an op the GPU lacks a
	 * data type for) are left out rather than weigh as a constant. */
	for (size_t i = 0; i < set->n; i++) {
		double t;
		if (set->p[i].how == LLMSIM_CALIB_NOT_MODELLED ||
		    llmsim_calib_predict(gpu, &set->p[i], &t, NULL, NULL))
			continue;
		if (!strcmp(set->p[i].split, "fit"))
			res->fit_cases++;
		else if (!strcmp(set->p[i].split, "holdout"))
			res->held_out_cases++;
	}
	if (!res->fit_cases)
		return llmsim_err_set(err, LLMSIM_ENOENT,
				      "no modelled case of split \"fit\" for GPU '%s' to fit on",
				      set->hw_name);
	size_t n = (size_t)res->fit_cases;
	f.idx = malloc(n * sizeof *f.idx);
	f.cls = malloc(n * sizeof *f.cls);
	f.cls_n = calloc(n, sizeof *f.cls_n);
	f.aerr = malloc(n * sizeof *f.aerr);
	f.csum = malloc(n * sizeof *f.csum);
	f.names = malloc(n * sizeof *f.names);
	f.use = malloc(n);
	int rc = 0;
	if (!f.idx || !f.cls || !f.cls_n || !f.aerr || !f.csum || !f.names || !f.use) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < set->n; i++) {
		double t;
		if (set->p[i].how == LLMSIM_CALIB_NOT_MODELLED || strcmp(set->p[i].split, "fit") ||
		    llmsim_calib_predict(gpu, &set->p[i], &t, NULL, NULL))
			continue;
		f.idx[f.n] = i;
		f.cls[f.n] = class_of(f.names, &f.ncls, set->p[i].op_class);
		f.cls_n[f.cls[f.n]]++;
		f.n++;
	}
	const int *allow = opts ? opts->allow : NULL;
	for (int e = 0; e < LLMSIM_PARAM_COUNT; e++) {
		f.sens[e] = malloc(n * sizeof *f.sens[e]);
		if (!f.sens[e]) {
			rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t j = 0; j < f.n; j++)
		f.aerr[j] = abs_log_err(&f, j);
	use_classes(&f, NPARAMS);
	res->objective_start = objective(&f);
	int max_sweeps = opts && opts->max_sweeps > 0 ? opts->max_sweeps : 8;
	for (res->sweeps = 0; res->sweeps < max_sweeps;) {
		int moved = 0;
		res->sweeps++;
		for (size_t i = 0; i < NPARAMS; i++) {
			double lo, hi;
			int e = param_of(&f, allow, i, &lo, &hi);
			if (e < 0)
				continue;
			use_classes(&f, i);
			if (!find_sensitive(&f, e, lo, hi))
				continue;
			res->fitted[e] = 1;
			double before = gpu->param[e];
			fit_one(&f, e, lo, hi, objective(&f));
			moved |= fabs(gpu->param[e] / before - 1) > 1e-6;
		}
		if (!moved)
			break;
	}
	/* what each fitted parameter influences at the fitted values */
	for (size_t i = 0; i < NPARAMS; i++) {
		double lo, hi;
		int e = param_of(&f, allow, i, &lo, &hi);
		if (e >= 0 && res->fitted[e]) {
			use_classes(&f, i);
			res->ncases[e] = find_sensitive(&f, e, lo, hi);
		}
	}
	use_classes(&f, NPARAMS);
	res->objective_end = objective(&f);
	memcpy(res->param, gpu->param, sizeof res->param);
out:
	fitter_release(&f);
	return rc;
}
