/*
 * train_dist.c - a suite of published runs judged as a whole (train_dist.h).
 */
#include "train_dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"

int llmsim_run_suite_has_targets(const struct llmsim_run_suite *t)
{
	return t->median_abs_target_pct > 0 || t->within_share_target > 0 ||
	       t->bias_target_pct > 0 || t->not_fit_max >= 0;
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct llmsim_run_group *)a)->name,
		      ((const struct llmsim_run_group *)b)->name);
}

/* The group of key among g[0..*ng), added when new; past the room, the
 * last group, "other". */
static int group_of(struct llmsim_run_group *g, int *ng, const char *key)
{
	for (int k = 0; k < *ng; k++)
		if (!strcmp(g[k].name, key))
			return k;
	if (*ng == LLMSIM_RUN_DIST_GROUPS)
		return LLMSIM_RUN_DIST_GROUPS - 1;
	int k = (*ng)++;
	memset(&g[k], 0, sizeof g[k]);
	snprintf(g[k].name, sizeof g[k].name, "%s", k == LLMSIM_RUN_DIST_GROUPS - 1 ? "other" : key);
	return k;
}

/* The median signed error of the priced rows of each GPU kind (by_gpu) or
 * precision; buf has room for n. */
static int groups(const struct llmsim_run_point *pts, int n, int by_gpu, double bias,
		  struct llmsim_run_group *g, double *buf)
{
	int ng = 0;
	for (int i = 0; i < n; i++)
		group_of(g, &ng, by_gpu ? pts[i].gpu : pts[i].precision);
	for (int k = 0; k < ng; k++) {
		size_t m = 0;
		for (int i = 0; i < n; i++) {
			int gi = group_of(g, &ng, by_gpu ? pts[i].gpu : pts[i].precision);
			if (gi == k && pts[i].ok && pts[i].fits && pts[i].has_err)
				buf[m++] = pts[i].err_pct;
		}
		g[k].n = (int)m;
		g[k].median_signed_pct = m ? llmsim_quantile(buf, m, 0.5) : NAN;
		g[k].pass = !(bias > 0) || !m || fabs(g[k].median_signed_pct) <= bias;
	}
	qsort(g, (size_t)ng, sizeof *g, cmp_group);
	return ng;
}

void llmsim_run_dist_compute(const struct llmsim_run_suite *t, const struct llmsim_run_point *pts,
			     int n, struct llmsim_run_dist *out)
{
	memset(out, 0, sizeof *out);
	double *a = malloc((n ? n : 1) * sizeof *a), *s = malloc((n ? n : 1) * sizeof *s);
	if (!a || !s) { /* no statistics: nothing passes */
		free(a);
		free(s);
		out->rows = n;
		out->median_abs_pct = out->median_signed_pct = NAN;
		return;
	}
	size_t m = 0, within = 0;
	out->rows = n;
	for (int i = 0; i < n; i++) {
		if (!pts[i].ok) {
			out->failed++;
			continue;
		}
		if (!pts[i].fits) {
			out->not_fit++;
			continue;
		}
		if (!pts[i].has_err)
			continue;
		a[m] = fabs(pts[i].err_pct);
		s[m++] = pts[i].err_pct;
		within += fabs(pts[i].err_pct) <= t->within_pct;
	}
	out->priced = (int)m;
	out->median_abs_pct = m ? llmsim_quantile(a, m, 0.5) : NAN;
	out->median_signed_pct = m ? llmsim_quantile(s, m, 0.5) : NAN;
	out->within_share = m ? (double)within / (double)m : 0;
	out->ngpu = groups(pts, n, 1, t->bias_target_pct, out->gpu, a);
	out->nprecision = groups(pts, n, 0, t->bias_target_pct, out->precision, a);
	free(a);
	free(s);

	out->pass_median = !(t->median_abs_target_pct > 0) ||
			   (m && out->median_abs_pct <= t->median_abs_target_pct);
	out->pass_within = !(t->within_share_target > 0) ||
			   (m && out->within_share >= t->within_share_target);
	out->pass_bias = 1;
	for (int k = 0; k < out->ngpu; k++)
		out->pass_bias &= out->gpu[k].pass;
	for (int k = 0; k < out->nprecision; k++)
		out->pass_bias &= out->precision[k].pass;
	out->pass_fit = t->not_fit_max < 0 || out->not_fit <= t->not_fit_max;
	out->pass = out->pass_median && out->pass_within && out->pass_bias && out->pass_fit &&
		    !out->failed;
}
