/*
 * validate.c - predicted against measured over a split of the measured
 * cases: error statistics per class, the worst cases, and predicted HBM
 * bytes against the DRAM counters of memory-bound kernels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

void llmsim_err_stats_compute(const double *pct, size_t n, struct llmsim_err_stats *out)
{
	double *a = malloc((n ? n : 1) * sizeof *a), *s = malloc((n ? n : 1) * sizeof *s);
	LLMSIM_ASSERT(a && s);
	for (size_t i = 0; i < n; i++) {
		a[i] = fabs(pct[i]);
		s[i] = pct[i];
	}
	out->n = (int)n;
	out->median_abs_pct = llmsim_quantile(a, n, 0.5);
	out->p90_abs_pct = llmsim_quantile(a, n, 0.9);
	out->p80_abs_pct = llmsim_quantile_cover(a, n, 0.8); /* covers 80%: the error bar */
	out->median_signed_pct = llmsim_quantile(s, n, 0.5);
	out->meets_target = n > 0 && out->median_abs_pct <= LLMSIM_CALIB_TARGET_MEDIAN_PCT &&
			    out->p90_abs_pct <= LLMSIM_CALIB_TARGET_P90_PCT &&
			    fabs(out->median_signed_pct) <= LLMSIM_CALIB_TARGET_BIAS_PCT;
	free(a);
	free(s);
}

struct scored {
	size_t i; /* index into set->p */
	double pred_s, err_pct, clock_hz;
};

static int cmp_worst(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;
	double ex = fabs(x->err_pct), ey = fabs(y->err_pct);
	if (ex != ey)
		return ex < ey ? 1 : -1;
	return (x->i > y->i) - (x->i < y->i);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct llmsim_err_stats *)a)->name,
		      ((const struct llmsim_err_stats *)b)->name);
}

/* The first n scored cases as rows (op, class, measured, predicted, error). */
static void list_cases(const struct llmsim_calib_set *set, const struct scored *sc, size_t n,
		       struct llmsim_worst_case *out)
{
	for (size_t j = 0; j < n; j++) {
		const struct llmsim_calib_point *pt = &set->p[sc[j].i];
		out[j].case_id = pt->case_id;
		memcpy(out[j].op_spec, pt->op_spec, sizeof out[j].op_spec);
		memcpy(out[j].op_class, pt->op_class, sizeof out[j].op_class);
		out[j].measured_s = pt->measured_s;
		out[j].predicted_s = sc[j].pred_s;
		out[j].err_pct = sc[j].err_pct;
		out[j].measured_clock_hz = pt->loaded_clock_hz;
		out[j].predicted_clock_hz = sc[j].clock_hz;
	}
}

/* Ridge point of the roofline for the op's data type: FLOPs per HBM byte
 * above which the op is compute-bound. */
static double ridge(const struct llmsim_gpu *gpu, const struct llmsim_calib_point *pt)
{
	if (pt->op.kind == LLMSIM_OP_STREAM)
		return INFINITY; /* memory-bound by design */
	return llmsim_gpu_peak_flops(gpu, pt->op.dtype) / gpu->hbm_bytes_per_s;
}

int llmsim_calib_validate(const struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
			  const char *split, struct llmsim_validation *v, struct llmsim_err *err)
{
	return llmsim_calib_validate_cases(gpu, set, split, v, NULL, NULL, err);
}

int llmsim_calib_validate_cases(const struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
				const char *split, struct llmsim_validation *v,
				struct llmsim_worst_case *cases, size_t *ncases,
				struct llmsim_err *err)
{
	memset(v, 0, sizeof *v);
	if (ncases)
		*ncases = 0;
	v->split = split;
	size_t n = 0, nh = 0, nc = 0;
	struct scored *sc = malloc((set->n ? set->n : 1) * sizeof *sc);
	double *pct = malloc((set->n ? set->n : 1) * sizeof *pct);
	double *hbm = malloc((set->n ? set->n : 1) * sizeof *hbm);
	double *clk = malloc((set->n ? set->n : 1) * sizeof *clk);
	if (!sc || !pct || !hbm || !clk) {
		free(sc);
		free(pct);
		free(hbm);
		free(clk);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < set->n; i++) {
		const struct llmsim_calib_point *pt = &set->p[i];
		/* probes (other operand data, repeats) are not predictions of
		 * the model's conditions: never scored */
		if ((split && strcmp(pt->split, split)) || !strcmp(pt->split, "probe"))
			continue;
		if (pt->how == LLMSIM_CALIB_NOT_MODELLED) {
			v->not_modelled++;
			continue;
		}
		struct llmsim_pred p;
		double t;
		if (llmsim_calib_predict(gpu, pt, &t, &p, NULL) || !(t > 0)) {
			v->failed++;
			continue;
		}
		sc[n].i = i;
		sc[n].pred_s = t;
		sc[n].clock_hz = p.sm_clock_hz;
		sc[n].err_pct = 100.0 * (t - pt->measured_s) / pt->measured_s;
		n++;
		double intensity = p.hbm_bytes > 0 ? p.flops / p.hbm_bytes : INFINITY;
		if (isfinite(pt->dram_bytes) && pt->dram_bytes > 0 && p.hbm_bytes > 0 &&
		    intensity < ridge(gpu, pt))
			hbm[nh++] = 100.0 * (p.hbm_bytes - pt->dram_bytes) / pt->dram_bytes;
		/* where the power limit binds (the predicted clock below the
		 * burst clock): such a load pulls the clock down within
		 * milliseconds, while a light case after a heavy one reads a
		 * clock still climbing back (the controller raises it slowly) */
		if (pt->loaded_clock_hz > 0 && p.sm_clock_hz > 0 &&
		    p.sm_clock_hz < gpu->burst_clock_hz * (1 - 1e-9))
			clk[nc++] = 100.0 * (p.sm_clock_hz - pt->loaded_clock_hz) / pt->loaded_clock_hz;
	}

	/* per class, in name order */
	for (size_t j = 0; j < n; j++) {
		const char *cls = set->p[sc[j].i].op_class;
		int c;
		for (c = 0; c < v->nclasses; c++)
			if (!strcmp(v->classes[c].name, cls))
				break;
		if (c == v->nclasses) {
			if (v->nclasses == LLMSIM_VALIDATE_MAX_CLASSES)
				continue; /* more classes than a profile can hold */
			snprintf(v->classes[c].name, sizeof v->classes[c].name, "%s", cls);
			v->nclasses++;
		}
	}
	for (int c = 0; c < v->nclasses; c++) {
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(set->p[sc[j].i].op_class, v->classes[c].name))
				pct[k++] = sc[j].err_pct;
		char name[32];
		memcpy(name, v->classes[c].name, sizeof name);
		llmsim_err_stats_compute(pct, k, &v->classes[c]);
		memcpy(v->classes[c].name, name, sizeof name);
	}
	qsort(v->classes, (size_t)v->nclasses, sizeof v->classes[0], cmp_name);
	for (size_t j = 0; j < n; j++)
		pct[j] = sc[j].err_pct;
	llmsim_err_stats_compute(pct, n, &v->all);
	snprintf(v->all.name, sizeof v->all.name, "all");

	qsort(sc, n, sizeof *sc, cmp_worst);
	v->nworst = n < LLMSIM_VALIDATE_WORST ? (int)n : LLMSIM_VALIDATE_WORST;
	list_cases(set, sc, (size_t)v->nworst, v->worst);
	if (cases && ncases) {
		*ncases = n;
		list_cases(set, sc, n, cases);
	}
	v->hbm_n = (int)nh;
	struct llmsim_err_stats hs;
	llmsim_err_stats_compute(hbm, nh, &hs);
	v->hbm_median_abs_pct = hs.median_abs_pct;
	v->hbm_median_signed_pct = hs.median_signed_pct;
	v->clock_n = (int)nc;
	llmsim_err_stats_compute(clk, nc, &hs);
	v->clock_median_abs_pct = hs.median_abs_pct;
	v->clock_median_signed_pct = hs.median_signed_pct;
	free(sc);
	free(pct);
	free(hbm);
	free(clk);
	return 0;
}
