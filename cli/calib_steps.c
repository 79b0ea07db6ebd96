/*
 * calib_steps.c - the `steps` section of `llmsim calib validate` (see
 * calib_steps.h).
 */
#include "calib_steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"

static void pct(char *buf, double v, int sign)
{
	if (!isfinite(v))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else
		snprintf(buf, LLMSIM_FMT_MAX, sign ? "%+.1f%%" : "%.1f%%", v);
}

static const struct llmsim_steps_row *row_of(const struct llmsim_steps_report *r, int64_t id)
{
	for (int i = 0; i < r->n; i++)
		if (r->rows[i].step_id == id)
			return &r->rows[i];
	return NULL;
}

/* "llama-3.1-8b/32 prefill 4x2048" */
static void shape(char *buf, size_t size, const struct llmsim_steps_row *w)
{
	if (!strcmp(w->st.phase, "decode"))
		snprintf(buf, size, "%s/%d decode b%lld ctx %lld", w->model, w->layers,
			 (long long)w->st.batch, (long long)w->st.context);
	else
		snprintf(buf, size, "%s/%d %s %lldx%lld%s%s", w->model, w->layers, w->st.phase,
			 (long long)w->st.batch, (long long)w->st.tokens,
			 w->st.recompute[0] ? " recompute " : "", w->st.recompute);
}

static int by_abs_err(const void *a, const void *b)
{
	const struct llmsim_steps_row *x = *(const struct llmsim_steps_row *const *)a;
	const struct llmsim_steps_row *y = *(const struct llmsim_steps_row *const *)b;
	double ex = x->ok ? fabs(x->err_pct) : INFINITY, ey = y->ok ? fabs(y->err_pct) : INFINITY;
	return ex < ey ? 1 : ex > ey ? -1 : 0;
}

void calib_steps_print(FILE *f, const struct llmsim_steps_report *r, int rows)
{
	static const char *const head[] = {"<program",  "<engine", "<phase",  "<of",
					   "n",	 "median |err|", "p80 |err|", "p90 |err|",
					   "median bias", "within 10%", "<worst"};
	struct llmsim_table t;
	llmsim_table_init(&t, 11, head);
	for (int c = 0; c < r->nclasses; c++) {
		const struct llmsim_steps_class *k = &r->classes[c];
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX], e[LLMSIM_FMT_MAX];
		char phase[40], within[32], worst[160] = "", sh[120];
		pct(a, k->median_abs_pct, 0);
		pct(b, k->p80_abs_pct, 0);
		pct(d, k->p90_abs_pct, 0);
		pct(e, k->median_signed_pct, 1);
		snprintf(phase, sizeof phase, "%s%s%s", k->phase, k->recompute[0] ? "/" : "",
			 k->recompute);
		snprintf(within, sizeof within, "%d of %d", k->within_target, k->n + k->failed);
		const struct llmsim_steps_row *w = row_of(r, k->worst_step_id);
		if (w && k->n) {
			shape(sh, sizeof sh, w);
			snprintf(worst, sizeof worst, "%+.1f%% %s", k->worst_pct, sh);
		}
		llmsim_table_rowf(&t, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", k->program,
				  k->engine, phase, k->quantity, k->n, a, b, d, e, within, worst);
	}
	llmsim_table_print(&t, f);
	llmsim_table_release(&t);
	fprintf(f, "target: every step within %g%%; a later measurement of the same step supersedes"
		   " (%d left out)\n", LLMSIM_STEPS_TARGET_PCT, r->superseded);
	int failed = 0;
	for (int i = 0; i < r->n; i++)
		failed += !r->rows[i].ok;
	if (failed) {
		fprintf(f, "%d step%s not predicted:\n", failed, failed == 1 ? "" : "s");
		for (int i = 0; i < r->n; i++)
			if (!r->rows[i].ok) {
				char sh[120];
				shape(sh, sizeof sh, &r->rows[i]);
				fprintf(f, "  %s %s: %s\n", r->rows[i].st.program, sh, r->rows[i].error);
			}
	}
	if (!rows || !r->n)
		return;
	const struct llmsim_steps_row **order = malloc((size_t)r->n * sizeof *order);
	if (!order)
		return;
	for (int i = 0; i < r->n; i++)
		order[i] = &r->rows[i];
	qsort(order, (size_t)r->n, sizeof *order, by_abs_err);
	static const char *const h2[] = {"<program", "<step",	  "<of",     "measured",
					 "llmsim",   "error",	  "wall",    "llmsim wall",
					 "clock",    "llmsim clock", "memory", "llmsim memory"};
	llmsim_table_init(&t, 12, h2);
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_steps_row *w = order[i];
		char sh[120], m[LLMSIM_FMT_MAX], p[LLMSIM_FMT_MAX], e[LLMSIM_FMT_MAX];
		char wm[LLMSIM_FMT_MAX], wp[LLMSIM_FMT_MAX], cm[LLMSIM_FMT_MAX], cp[LLMSIM_FMT_MAX];
		char mm[LLMSIM_FMT_MAX] = "", mp[LLMSIM_FMT_MAX] = "";
		shape(sh, sizeof sh, w);
		llmsim_fmt_time(m, w->measured_s);
		if (w->ok) {
			llmsim_fmt_time(p, w->predicted_s);
			pct(e, w->err_pct, 1);
			llmsim_fmt_time(wp, w->wall_predicted_s);
			llmsim_fmt_hz(cp, w->sm_clock_predicted_hz);
		} else {
			snprintf(p, sizeof p, "-");
			snprintf(e, sizeof e, "failed");
			snprintf(wp, sizeof wp, "-");
			snprintf(cp, sizeof cp, "-");
		}
		llmsim_fmt_time(wm, w->wall_measured_s);
		if (isfinite(w->sm_clock_measured_hz))
			llmsim_fmt_hz(cm, w->sm_clock_measured_hz);
		else
			snprintf(cm, sizeof cm, "-");
		if (isfinite(w->mem_measured_bytes)) {
			llmsim_fmt_bytes(mm, w->mem_measured_bytes);
			if (isfinite(w->mem_predicted_bytes))
				llmsim_fmt_bytes(mp, w->mem_predicted_bytes);
		}
		llmsim_table_rowf(&t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", w->st.program,
				  sh, w->basis ? w->basis : "", m, p, e, wm, wp, cm, cp, mm, mp);
	}
	fputc('\n', f);
	llmsim_table_print(&t, f);
	llmsim_table_release(&t);
	free(order);
}

void calib_steps_json(struct llmsim_json *j, const char *key, const struct llmsim_steps_report *r)
{
	llmsim_json_obj_begin(j, key);
	llmsim_json_num(j, "target_abs_pct_err", LLMSIM_STEPS_TARGET_PCT);
	llmsim_json_int(j, "superseded", r->superseded);
	llmsim_json_arr_begin(j, "classes");
	for (int c = 0; c < r->nclasses; c++) {
		const struct llmsim_steps_class *k = &r->classes[c];
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_str(j, "program", k->program);
		llmsim_json_str(j, "engine", k->engine);
		llmsim_json_str(j, "phase", k->phase);
		llmsim_json_str(j, "recompute", k->recompute);
		llmsim_json_str(j, "quantity", k->quantity);
		llmsim_json_int(j, "n", k->n);
		llmsim_json_int(j, "failed", k->failed);
		llmsim_json_int(j, "within_target", k->within_target);
		llmsim_json_num(j, "median_abs_pct_err", k->median_abs_pct);
		llmsim_json_num(j, "p80_abs_pct_err", k->p80_abs_pct);
		llmsim_json_num(j, "p90_abs_pct_err", k->p90_abs_pct);
		llmsim_json_num(j, "median_signed_pct_err", k->median_signed_pct);
		llmsim_json_num(j, "worst_pct_err", k->worst_pct);
		llmsim_json_int(j, "worst_step_id", k->worst_step_id);
		llmsim_json_bool(j, "meets_target", k->failed == 0 && k->within_target == k->n);
		llmsim_json_obj_end(j);
	}
	llmsim_json_arr_end(j);
	llmsim_json_arr_begin(j, "steps");
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_steps_row *w = &r->rows[i];
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_int(j, "step_id", w->step_id);
		llmsim_json_str(j, "program", w->st.program);
		llmsim_json_str(j, "model", w->model);
		llmsim_json_int(j, "layers", w->layers);
		llmsim_json_str(j, "phase", w->st.phase);
		llmsim_json_int(j, "batch", w->st.batch);
		llmsim_json_int(j, "tokens", w->st.tokens);
		llmsim_json_int(j, "context", w->st.context);
		llmsim_json_str(j, "recompute", w->st.recompute);
		llmsim_json_str(j, "engine", w->engine ? w->engine : "");
		llmsim_json_str(j, "basis", w->basis ? w->basis : "");
		llmsim_json_num(j, "measured_s", w->measured_s);
		if (!w->ok) {
			llmsim_json_str(j, "error", w->error);
			llmsim_json_obj_end(j);
			continue;
		}
		llmsim_json_num(j, "predicted_s", w->predicted_s);
		llmsim_json_num(j, "error_pct", w->err_pct);
		llmsim_json_num(j, "wall_measured_s", w->wall_measured_s);
		llmsim_json_num(j, "wall_predicted_s", w->wall_predicted_s);
		llmsim_json_num(j, "kernel_measured_s", w->kernel_measured_s);
		llmsim_json_num(j, "kernel_predicted_s", w->kernel_predicted_s);
		llmsim_json_num(j, "sm_clock_measured_hz", w->sm_clock_measured_hz);
		llmsim_json_num(j, "sm_clock_predicted_hz", w->sm_clock_predicted_hz);
		llmsim_json_num(j, "load_duty", w->load_duty);
		llmsim_json_num(j, "load_rho", w->load_rho);
		if (isfinite(w->mem_measured_bytes)) {
			llmsim_json_num(j, "mem_peak_measured_bytes", w->mem_measured_bytes);
			llmsim_json_num(j, "mem_peak_predicted_bytes", w->mem_predicted_bytes);
			llmsim_json_num(j, "mem_error_pct", w->mem_err_pct);
			llmsim_json_num(j, "mem_reserved_measured_bytes", w->mem_reserved_measured_bytes);
			llmsim_json_num(j, "mem_reserved_predicted_bytes",
					w->mem_reserved_predicted_bytes);
		}
		llmsim_json_obj_end(j);
	}
	llmsim_json_arr_end(j);
	llmsim_json_obj_end(j);
}
