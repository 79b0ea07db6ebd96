/*
 * validate_dist.c - the suites judged as a whole, as text and JSON
 * (validate_dist.h).
 */
#include "validate_dist.h"

#include <math.h>

#include "base/fmt.h"

static const char *verdict(int pass)
{
	return pass ? "met" : "MISSED";
}

static void group_rows(struct llmsim_table *t, const char *suite, const struct llmsim_run_group *g,
		       int n, double bias)
{
	for (int k = 0; k < n; k++) {
		char tgt[24] = "", med[24] = "";
		if (bias > 0)
			snprintf(tgt, sizeof tgt, "+/- %.0f%%", bias);
		if (g[k].n)
			snprintf(med, sizeof med, "%+.1f%%", g[k].median_signed_pct);
		llmsim_table_rowf(t, "%s\tmedian error, %s\t%d\t%s\t%s\t%s", suite, g[k].name, g[k].n,
				  med, tgt, tgt[0] && g[k].n ? verdict(g[k].pass) : "");
	}
}

/* One row a check: the statistic, the rows it is of, its target. */
void validate_dist_print(const struct validate_dist *v, int n, FILE *f)
{
	if (!n)
		return;
	static const char *const head[] = {"<suite", "<check", "rows", "value", "<target",
					   "<verdict"};
	struct llmsim_table t;
	llmsim_table_init(&t, 6, head);
	for (int i = 0; i < n; i++) {
		const struct llmsim_run_suite *s = v[i].t;
		const struct llmsim_run_dist *d = &v[i].d;
		char val[24] = "", tgt[24] = "";
		if (d->priced)
			snprintf(val, sizeof val, "%.1f%%", d->median_abs_pct);
		if (s->median_abs_target_pct > 0)
			snprintf(tgt, sizeof tgt, "<= %.0f%%", s->median_abs_target_pct);
		llmsim_table_rowf(&t, "%s\tmedian |error|\t%d\t%s\t%s\t%s", s->name, d->priced, val,
				  tgt, tgt[0] ? verdict(d->pass_median) : "");
		val[0] = tgt[0] = 0;
		if (d->priced)
			snprintf(val, sizeof val, "%.0f%%", 100 * d->within_share);
		if (s->within_share_target > 0)
			snprintf(tgt, sizeof tgt, ">= %.0f%%", 100 * s->within_share_target);
		llmsim_table_rowf(&t, "%s\twithin %.0f%%\t%d\t%s\t%s\t%s", s->name, s->within_pct,
				  d->priced, val, tgt, tgt[0] ? verdict(d->pass_within) : "");
		val[0] = 0;
		if (d->priced)
			snprintf(val, sizeof val, "%+.1f%%", d->median_signed_pct);
		llmsim_table_rowf(&t, "%s\tmedian error\t%d\t%s\t\t", s->name, d->priced, val);
		group_rows(&t, s->name, d->gpu, d->ngpu, s->bias_target_pct);
		group_rows(&t, s->name, d->precision, d->nprecision, s->bias_target_pct);
		tgt[0] = 0;
		if (s->not_fit_max >= 0)
			snprintf(tgt, sizeof tgt, "<= %d", s->not_fit_max);
		llmsim_table_rowf(&t, "%s\tjudged not to fit\t%d\t\t%s\t%s", s->name, d->not_fit, tgt,
				  tgt[0] ? verdict(d->pass_fit) : "");
		if (d->failed)
			llmsim_table_rowf(&t, "%s\tnot simulated\t%d\t\t0\tMISSED", s->name, d->failed);
	}
	fprintf(f, "\nsuites judged as a whole (error: predicted step time against the published "
		   "one, + when llmsim is slower; rows judged not to fit are counted apart)\n");
	llmsim_table_print(&t, f);
	llmsim_table_release(&t);
}

static void num_or_null(struct llmsim_json *j, const char *key, double v)
{
	if (isfinite(v))
		llmsim_json_num(j, key, v);
	else
		llmsim_json_null(j, key);
}

static void groups_json(struct llmsim_json *j, const char *key, const char *name,
			const struct llmsim_run_group *g, int n)
{
	llmsim_json_arr_begin(j, key);
	for (int k = 0; k < n; k++) {
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_str(j, name, g[k].name);
		llmsim_json_int(j, "rows", g[k].n);
		num_or_null(j, "median_error_pct", g[k].median_signed_pct);
		llmsim_json_bool(j, "pass", g[k].pass);
		llmsim_json_obj_end(j);
	}
	llmsim_json_arr_end(j);
}

void validate_dist_json(struct llmsim_json *j, const struct validate_dist *v, int n)
{
	llmsim_json_arr_begin(j, "distributions");
	for (int i = 0; i < n; i++) {
		const struct llmsim_run_suite *s = v[i].t;
		const struct llmsim_run_dist *d = &v[i].d;
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_str(j, "suite", s->name);
		llmsim_json_bool(j, "held_back", s->held_back);
		llmsim_json_int(j, "rows", d->rows);
		llmsim_json_int(j, "priced", d->priced);
		llmsim_json_int(j, "not_fit", d->not_fit);
		llmsim_json_int(j, "failed", d->failed);
		num_or_null(j, "median_abs_error_pct", d->median_abs_pct);
		num_or_null(j, "median_error_pct", d->median_signed_pct);
		llmsim_json_num(j, "within_pct", s->within_pct);
		llmsim_json_num(j, "within_share", d->within_share);
		groups_json(j, "by_gpu", "gpu", d->gpu, d->ngpu);
		groups_json(j, "by_precision", "precision", d->precision, d->nprecision);
		llmsim_json_obj_begin(j, "targets");
		if (s->median_abs_target_pct > 0)
			llmsim_json_num(j, "median_abs_error_pct", s->median_abs_target_pct);
		if (s->within_share_target > 0)
			llmsim_json_num(j, "within_share", s->within_share_target);
		if (s->bias_target_pct > 0)
			llmsim_json_num(j, "bias_pct", s->bias_target_pct);
		if (s->not_fit_max >= 0)
			llmsim_json_int(j, "not_fit_max", s->not_fit_max);
		llmsim_json_obj_end(j);
		llmsim_json_bool(j, "pass_median", d->pass_median);
		llmsim_json_bool(j, "pass_within", d->pass_within);
		llmsim_json_bool(j, "pass_bias", d->pass_bias);
		llmsim_json_bool(j, "pass_fit", d->pass_fit);
		llmsim_json_bool(j, "pass", d->pass);
		llmsim_json_obj_end(j);
	}
	llmsim_json_arr_end(j);
}
