/*
 * calib_steps_train.c - the training rows of the steps class in `llmsim
 * calib validate` (a table per step and per group, or JSON) and in the
 * profile `llmsim calib fit` writes (calib/validate/steps_train.h).
 */
#include "calib_steps_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"

static void pct(char *buf, double v)
{
	if (isfinite(v))
		snprintf(buf, LLMSIM_FMT_MAX, "%+.1f%%", v);
	else
		snprintf(buf, LLMSIM_FMT_MAX, "-");
}

static void apct(char *buf, double v)
{
	if (isfinite(v))
		snprintf(buf, LLMSIM_FMT_MAX, "%.1f%%", v);
	else
		snprintf(buf, LLMSIM_FMT_MAX, "-");
}

static void print_text(FILE *f, const struct llmsim_steps_train *v)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
	char e[LLMSIM_FMT_MAX], g[LLMSIM_FMT_MAX], h[LLMSIM_FMT_MAX];
	fprintf(f, "\nsteps, training (program torch_train, predicted by `llmsim train --engine "
		"torch`): %d steps\n", v->n);
	static const char *const head[] = {"<model", "layers", "batch", "seq", "<recompute",
					   "measured", "predicted", "error", "peak alloc",
					   "predicted", "error", "reserved", "predicted", "<peak at"};
	struct llmsim_table t;
	llmsim_table_init(&t, 14, head);
	for (int i = 0; i < v->n; i++) {
		const struct llmsim_steps_train_row *r = &v->row[i];
		char x[LLMSIM_FMT_MAX], y[LLMSIM_FMT_MAX];
		llmsim_table_rowf(&t, "%s\t%d\t%lld\t%lld\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s",
				  r->model, r->layers, (long long)r->batch, (long long)r->seq,
				  llmsim_recompute_name(r->recompute),
				  llmsim_fmt_time(a, r->measured[LLMSIM_STEPS_TIME]),
				  llmsim_fmt_time(b, r->predicted[LLMSIM_STEPS_TIME]),
				  (pct(c, r->err_pct[LLMSIM_STEPS_TIME]), c),
				  llmsim_fmt_bytes(d, r->measured[LLMSIM_STEPS_PEAK]),
				  llmsim_fmt_bytes(e, r->predicted[LLMSIM_STEPS_PEAK]),
				  (pct(g, r->err_pct[LLMSIM_STEPS_PEAK]), g),
				  llmsim_fmt_bytes(x, r->measured[LLMSIM_STEPS_RESERVED]),
				  llmsim_fmt_bytes(y, r->predicted[LLMSIM_STEPS_RESERVED]), r->peak_at);
	}
	llmsim_table_print(&t, f);
	llmsim_table_release(&t);

	static const char *const gh[] = {"<group", "<metric", "n", "median |err|", "p80 |err|",
					 "p90 |err|", "median", "worst"};
	struct llmsim_table gt;
	llmsim_table_init(&gt, 8, gh);
	for (int k = 0; k <= v->ngroups; k++) {
		const struct llmsim_steps_stats *s = k < v->ngroups ? v->group[k].s : v->all;
		for (int m = 0; m < LLMSIM_STEPS_METRIC_COUNT; m++) {
			if (s[m].n < 1)
				continue;
			apct(a, s[m].median_abs_pct);
			apct(b, s[m].p80_abs_pct);
			apct(c, s[m].p90_abs_pct);
			pct(d, s[m].median_pct);
			pct(e, s[m].worst_pct);
			llmsim_table_rowf(&gt, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s",
					  k < v->ngroups ? v->group[k].name : "torch_train (the class)",
					  llmsim_steps_metric_name((enum llmsim_steps_metric)m), s[m].n,
					  a, b, c, d, e);
		}
	}
	fputc('\n', f);
	llmsim_table_print(&gt, f);
	llmsim_table_release(&gt);
	snprintf(h, sizeof h, "%d", v->misses);
	fprintf(f, "targets: every step within %.0f%% in time and peak allocated memory: %s\n",
		LLMSIM_STEPS_TRAIN_TIME_TARGET_PCT, v->misses ? h : "met");
	if (v->misses)
		fprintf(f, "  (%s of %d steps miss)\n", h, v->n);
}

static void json_stats(struct llmsim_json *j, const char *key, const struct llmsim_steps_stats *s)
{
	llmsim_json_obj_begin(j, key);
	llmsim_json_int(j, "n", s->n);
	llmsim_json_num(j, "median_abs_pct_err", s->median_abs_pct);
	llmsim_json_num(j, "p80_abs_pct_err", s->p80_abs_pct);
	llmsim_json_num(j, "p90_abs_pct_err", s->p90_abs_pct);
	llmsim_json_num(j, "median_signed_pct_err", s->median_pct);
	llmsim_json_num(j, "worst_pct_err", s->worst_pct);
	llmsim_json_obj_end(j);
}

static void print_json(struct llmsim_json *j, const struct llmsim_steps_train *v)
{
	llmsim_json_obj_begin(j, "steps_train");
	llmsim_json_str(j, "program", "torch_train");
	llmsim_json_num(j, "time_target_pct", LLMSIM_STEPS_TRAIN_TIME_TARGET_PCT);
	llmsim_json_num(j, "memory_target_pct", LLMSIM_STEPS_TRAIN_MEM_TARGET_PCT);
	llmsim_json_int(j, "misses", v->misses);
	llmsim_json_arr_begin(j, "steps");
	for (int i = 0; i < v->n; i++) {
		const struct llmsim_steps_train_row *r = &v->row[i];
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_int(j, "step_id", r->step_id);
		llmsim_json_str(j, "model", r->model);
		llmsim_json_int(j, "layers", r->layers);
		llmsim_json_int(j, "batch", r->batch);
		llmsim_json_int(j, "seq", r->seq);
		llmsim_json_str(j, "recompute", llmsim_recompute_name(r->recompute));
		for (int m = 0; m < LLMSIM_STEPS_METRIC_COUNT; m++) {
			llmsim_json_obj_begin(j, llmsim_steps_metric_name((enum llmsim_steps_metric)m));
			llmsim_json_num(j, "measured", r->measured[m]);
			llmsim_json_num(j, "predicted", r->predicted[m]);
			llmsim_json_num(j, "err_pct", r->err_pct[m]);
			llmsim_json_obj_end(j);
		}
		llmsim_json_num(j, "device_bytes", r->device_bytes);
		llmsim_json_num(j, "measured_sm_clock_hz", r->measured_clock_hz);
		llmsim_json_num(j, "predicted_sm_clock_hz", r->predicted_clock_hz);
		llmsim_json_str(j, "peak_at", r->peak_at);
		llmsim_json_obj_end(j);
	}
	llmsim_json_arr_end(j);
	llmsim_json_arr_begin(j, "groups");
	for (int g = 0; g <= v->ngroups; g++) {
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_str(j, "name", g < v->ngroups ? v->group[g].name : "torch_train");
		for (int m = 0; m < LLMSIM_STEPS_METRIC_COUNT; m++)
			json_stats(j, llmsim_steps_metric_name((enum llmsim_steps_metric)m),
				   g < v->ngroups ? &v->group[g].s[m] : &v->all[m]);
		llmsim_json_obj_end(j);
	}
	llmsim_json_arr_end(j);
	llmsim_json_obj_end(j);
}

int cli_steps_train_report(const char *cmd, struct llmsim_store *s, const struct llmsim_gpu *gpu,
			   struct llmsim_json *j, FILE *f)
{
	struct llmsim_steps_train *v = malloc(sizeof *v);
	struct llmsim_err err = {0};
	if (!v) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	int rc = llmsim_steps_train_validate(s, gpu, v, &err);
	if (rc == LLMSIM_ENOENT) {
		free(v);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "%s: steps (training): %s\n", cmd, err.msg);
		free(v);
		return 1;
	}
	if (j)
		print_json(j, v);
	else
		print_text(f, v);
	free(v);
	return 0;
}

int cli_steps_train_errors(const char *cmd, struct llmsim_store *s, const struct llmsim_gpu *gpu,
			   struct llmsim_step_err *out, int max)
{
	struct llmsim_steps_train *v = malloc(sizeof *v);
	struct llmsim_err err = {0};
	if (!v) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return -1;
	}
	int rc = llmsim_steps_train_validate(s, gpu, v, &err), n = 0;
	if (rc && rc != LLMSIM_ENOENT) {
		fprintf(stderr, "%s: steps (training): %s\n", cmd, err.msg);
		n = -1;
	} else if (!rc) {
		n = llmsim_steps_train_errors(v, out, max);
	}
	free(v);
	return n;
}
