/*
 * steps_train.c - the training rows of the steps class (see
 * steps_train.h): the store's torch_train steps against `llmsim train
 * --engine torch`'s prediction of each.
 */
#include "steps_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/stats.h"

static const char *const metric_names[LLMSIM_STEPS_METRIC_COUNT] = {
	[LLMSIM_STEPS_TIME] = "time", [LLMSIM_STEPS_PEAK] = "peak_memory",
	[LLMSIM_STEPS_RESERVED] = "reserved_memory",
};

const char *llmsim_steps_metric_name(enum llmsim_steps_metric m)
{
	return (unsigned)m < LLMSIM_STEPS_METRIC_COUNT ? metric_names[m] : "?";
}

struct walk {
	const struct llmsim_gpu *gpu;
	struct llmsim_steps_train *out;
	struct llmsim_err *err;
	int rc;
};

/* "model=NAME layers=L" */
static int parse_spec(const char *spec, char *model, size_t size, int *layers)
{
	const char *m = strstr(spec, "model="), *l = strstr(spec, "layers=");
	if (!m || !l)
		return -1;
	m += 6;
	size_t n = strcspn(m, " \t");
	if (!n || n >= size)
		return -1;
	memcpy(model, m, n);
	model[n] = 0;
	char *end;
	long v = strtol(l + 7, &end, 10);
	if (end == l + 7 || v < 1 || v > 100000)
		return -1;
	*layers = (int)v;
	return 0;
}

/* The run's operand data as the model names it ("normal" is what trained
 * data looks like). */
static enum llmsim_operand_data run_data(const char *s)
{
	if (!strcmp(s, "randn"))
		return LLMSIM_OPD_RANDOM;
	int d = llmsim_operand_data_parse(s);
	return d >= 0 ? (enum llmsim_operand_data)d : LLMSIM_OPD_TRAINED;
}

static double err_pct(double pred, double meas)
{
	return isfinite(meas) && meas > 0 ? 100.0 * (pred - meas) / meas : NAN;
}

/* One step: the prediction `llmsim train --engine torch --model M --layers
 * L --micro-batch B --seq S --recompute R` makes. */
static int predict(const struct llmsim_gpu *gpu, const struct llmsim_store_step_row *x,
		   struct llmsim_steps_train_row *row, struct llmsim_err *err)
{
	const struct llmsim_step_rec *st = &x->st;
	if (parse_spec(st->model_spec, row->model, sizeof row->model, &row->layers))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "step %lld: model spec '%s' is not \"model=NAME layers=L\"",
				      (long long)x->step_id, st->model_spec);
	struct llmsim_model m;
	int rc = llmsim_model_load_named(row->model, &m, err);
	if (rc)
		return llmsim_err_set(err, rc, "step %lld: %s", (long long)x->step_id, err->msg);
	if (row->layers > m.layers)
		return llmsim_err_set(err, LLMSIM_EINVAL, "step %lld: %d layers, %s has %d",
				      (long long)x->step_id, row->layers, m.name, m.layers);
	m.layers = row->layers;
	int full = !strcmp(st->recompute, "full");
	if (!full && strcmp(st->recompute, "none"))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "step %lld: recompute '%s' (expected none or full)",
				      (long long)x->step_id, st->recompute);
	if (st->batch < 1 || st->batch > LLMSIM_MAX_BATCH || st->tokens < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "step %lld: batch %lld x %lld tokens",
				      (long long)x->step_id, (long long)st->batch,
				      (long long)st->tokens);
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.micro_batch = (int)st->batch;
	c.seq = st->tokens;
	c.recompute = full ? LLMSIM_RECOMP_FULL : LLMSIM_RECOMP_NONE;
	llmsim_train_cfg_torch(&c, gpu);
	c.operand_data = run_data(x->run.operand_data);
	struct llmsim_train_ctx *ctx;
	struct llmsim_train_result *r = malloc(sizeof *r);
	if (!r)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	if ((rc = llmsim_train_ctx_new(&m, gpu, &ctx, err)) ||
	    (rc = llmsim_train_simulate(ctx, &c, r, err))) {
		llmsim_train_ctx_free(ctx);
		free(r);
		return rc;
	}
	llmsim_train_ctx_free(ctx);
	snprintf(row->program, sizeof row->program, "%s", st->program);
	row->step_id = x->step_id;
	row->batch = st->batch;
	row->seq = st->tokens;
	row->recompute = c.recompute;
	row->measured[LLMSIM_STEPS_TIME] = st->time_median_s;
	row->measured[LLMSIM_STEPS_PEAK] = st->mem_peak_allocated_bytes;
	row->measured[LLMSIM_STEPS_RESERVED] = st->mem_peak_reserved_bytes;
	row->predicted[LLMSIM_STEPS_TIME] = r->time.step_s;
	row->predicted[LLMSIM_STEPS_PEAK] = r->torch.peak_allocated_bytes;
	row->predicted[LLMSIM_STEPS_RESERVED] = r->torch.reserved_bytes;
	for (int k = 0; k < LLMSIM_STEPS_METRIC_COUNT; k++)
		row->err_pct[k] = err_pct(row->predicted[k], row->measured[k]);
	row->device_bytes = st->mem_device_total_bytes;
	row->measured_clock_hz = st->sm_clock_hz;
	row->predicted_clock_hz = r->sm_clock_hz;
	snprintf(row->peak_at, sizeof row->peak_at, "%s", r->torch.peak_at);
	free(r);
	return 0;
}

static int each(const struct llmsim_store_step_row *x, void *arg)
{
	struct walk *w = arg;
	struct llmsim_steps_train *o = w->out;
	if (o->n >= LLMSIM_STEPS_TRAIN_MAX) {
		w->rc = llmsim_err_set(w->err, LLMSIM_EINVAL, "more than %d training steps",
				       LLMSIM_STEPS_TRAIN_MAX);
		return 1;
	}
	struct llmsim_steps_train_row *row = &o->row[o->n];
	memset(row, 0, sizeof *row);
	if ((w->rc = predict(w->gpu, x, row, w->err)))
		return 1;
	o->n++;
	return 0;
}

static void stats(const double *e, int n, struct llmsim_steps_stats *s)
{
	double a[LLMSIM_STEPS_TRAIN_MAX], v[LLMSIM_STEPS_TRAIN_MAX];
	int k = 0;
	memset(s, 0, sizeof *s);
	s->median_abs_pct = s->p80_abs_pct = s->p90_abs_pct = s->median_pct = s->worst_pct = NAN;
	for (int i = 0; i < n; i++) {
		if (!isfinite(e[i]))
			continue;
		if (!k || fabs(e[i]) > fabs(s->worst_pct))
			s->worst_pct = e[i];
		a[k] = fabs(e[i]);
		v[k++] = e[i];
	}
	s->n = k;
	if (!k)
		return;
	s->median_pct = llmsim_quantile(v, (size_t)k, 0.5);
	llmsim_sort_doubles(a, (size_t)k);
	s->median_abs_pct = llmsim_quantile_sorted(a, (size_t)k, 0.5);
	/* the error bar: the nearest-rank 80th percentile, the smallest |error|
	 * that at least 80% of the steps do not exceed (an interpolated one
	 * can cover fewer) */
	s->p80_abs_pct = a[(int)ceil(0.8 * k - 1e-9) - 1];
	s->p90_abs_pct = llmsim_quantile_sorted(a, (size_t)k, 0.9);
}

static void summarize(struct llmsim_steps_train *o)
{
	double e[LLMSIM_STEPS_TRAIN_MAX];
	for (int k = 0; k < LLMSIM_STEPS_METRIC_COUNT; k++) {
		for (int i = 0; i < o->n; i++)
			e[i] = o->row[i].err_pct[k];
		stats(e, o->n, &o->all[k]);
	}
	/* groups: program, recompute, model and its layers, in order of
	 * appearance */
	o->ngroups = 0;
	int gi[LLMSIM_STEPS_TRAIN_MAX];
	for (int i = 0; i < o->n; i++) {
		const struct llmsim_steps_train_row *r = &o->row[i];
		char name[96];
		snprintf(name, sizeof name, "%s %s %s (%d layers)", r->program,
			 llmsim_recompute_name(r->recompute), r->model, r->layers);
		int g = 0;
		while (g < o->ngroups && strcmp(o->group[g].name, name))
			g++;
		if (g == o->ngroups && g < LLMSIM_STEPS_TRAIN_GROUPS)
			snprintf(o->group[o->ngroups++].name, sizeof o->group[g].name, "%s", name);
		gi[i] = g < o->ngroups ? g : -1;
	}
	for (int g = 0; g < o->ngroups; g++)
		for (int k = 0; k < LLMSIM_STEPS_METRIC_COUNT; k++) {
			int n = 0;
			for (int i = 0; i < o->n; i++)
				if (gi[i] == g)
					e[n++] = o->row[i].err_pct[k];
			stats(e, n, &o->group[g].s[k]);
		}
	o->misses = 0;
	for (int i = 0; i < o->n; i++) {
		const double *x = o->row[i].err_pct;
		o->misses += !(fabs(x[LLMSIM_STEPS_TIME]) <= LLMSIM_STEPS_TRAIN_TIME_TARGET_PCT) ||
			     (isfinite(x[LLMSIM_STEPS_PEAK]) &&
			      !(fabs(x[LLMSIM_STEPS_PEAK]) <= LLMSIM_STEPS_TRAIN_MEM_TARGET_PCT));
	}
}

int llmsim_steps_train_validate(struct llmsim_store *s, const struct llmsim_gpu *gpu,
				struct llmsim_steps_train *out, struct llmsim_err *err)
{
	memset(out, 0, sizeof *out);
	struct llmsim_store_step_filter f = {.hw_name = gpu->name, .program = "torch_train",
					     .phase = "train"};
	struct walk w = {.gpu = gpu, .out = out, .err = err};
	int rc = llmsim_store_steps(s, &f, each, &w, err);
	if (!rc)
		rc = w.rc;
	if (rc)
		return rc;
	if (!out->n)
		return llmsim_err_set(err, LLMSIM_ENOENT, "no torch_train steps of %s", gpu->name);
	summarize(out);
	return 0;
}

int llmsim_steps_train_errors(const struct llmsim_steps_train *v, struct llmsim_step_err *out,
			      int max)
{
	static const struct {
		const char *name;
		enum llmsim_steps_metric m;
	} cls[] = {{"torch_train.time", LLMSIM_STEPS_TIME},
		   {"torch_train.peak_memory", LLMSIM_STEPS_PEAK}};
	int n = 0;
	for (size_t i = 0; i < sizeof cls / sizeof cls[0] && n < max; i++) {
		const struct llmsim_steps_stats *s = &v->all[cls[i].m];
		if (s->n < 1)
			continue;
		memset(&out[n], 0, sizeof out[n]);
		snprintf(out[n].name, sizeof out[n].name, "%s", cls[i].name);
		out[n].p80_abs_pct = s->p80_abs_pct;
		out[n].median_pct = s->median_pct;
		out[n].n = s->n;
		n++;
	}
	return n;
}
