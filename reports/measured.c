/* measured.c - calibration cases of one GPU, measured beside predicted. */
#include "measured.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../base/paths.h"
#include "../calib/shipped.h"
#include "../calib/store.h"
#include "../sim/sim.h"

struct collect {
	const struct llmsim_gpu *gpu;
	struct llmsim_measured *m;
};

static int on_case(const struct llmsim_store_case_row *row, void *ctx)
{
	struct collect *c = ctx;
	struct llmsim_measured *m = c->m;
	struct llmsim_op op;
	struct llmsim_pred p;

	m->cases++;
	if (!(row->c.time_median_s > 0) || m->n >= LLMSIM_MEASURED_MAX)
		return 0;
	if (llmsim_op_parse(row->c.op_spec, &op, NULL) ||
	    llmsim_predict(c->gpu, &op, &p, NULL)) {
		m->skipped++;
		return 0;
	}
	/* Only kernels with math have a place on a roofline; a collective's
	 * time is the links', which no roofline of one GPU shows. */
	if (!(p.flops > 0 && p.hbm_bytes > 0 && p.time_s > 0) || op.kind == LLMSIM_OP_COLLECTIVE)
		return 0;
	struct llmsim_measured_pt *pt = &m->pts[m->n++];
	snprintf(pt->op_class, sizeof pt->op_class, "%s",
		 row->c.op_class[0] ? row->c.op_class : p.op_class);
	snprintf(pt->spec, sizeof pt->spec, "%s", row->c.op_spec);
	llmsim_op_format(&op, pt->canon, sizeof pt->canon);
	pt->flops = p.flops;
	pt->intensity_flops_per_byte = p.intensity_flops_per_byte;
	pt->measured_s = row->c.time_median_s;
	pt->predicted_s = p.time_s;
	pt->measured_flops_per_s = p.flops / pt->measured_s;
	pt->predicted_flops_per_s = p.flops / p.time_s;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Percentile q of sorted v[0..n) by linear interpolation. */
static double percentile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)floor(pos);
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

static void class_errors(struct llmsim_measured *m)
{
	double *e = malloc(sizeof *e * (size_t)(m->n ? m->n : 1));
	if (!e)
		return;
	for (int i = 0; i < m->n && m->ncls < LLMSIM_MEASURED_CLASSES; i++) {
		const char *name = m->pts[i].op_class;
		int seen = 0, k = 0;
		for (int j = 0; j < m->ncls; j++)
			seen |= !strcmp(m->cls[j].name, name);
		if (seen)
			continue;
		for (int j = i; j < m->n; j++)
			if (!strcmp(m->pts[j].op_class, name))
				e[k++] = 100 * fabs(m->pts[j].predicted_s - m->pts[j].measured_s) /
					 m->pts[j].measured_s;
		qsort(e, (size_t)k, sizeof *e, cmp_double);
		struct llmsim_measured_class *c = &m->cls[m->ncls++];
		snprintf(c->name, sizeof c->name, "%s", name);
		c->n = k;
		c->median_abs_pct = percentile(e, k, 0.5);
		c->p90_abs_pct = percentile(e, k, 0.9);
	}
	free(e);
}

static void note(struct llmsim_measured *m, const char *msg)
{
	size_t l = strlen(m->note);
	if (l + 3 >= sizeof m->note)
		return;
	/* Long messages are cut: the note is one line of the page. */
	snprintf(m->note + l, sizeof m->note - l, "%s%.200s", l ? "; " : "", msg);
}

/* The shipped calibration (calib/shipped.h); a broken dump is noted on
 * the page, and the page is made without measurements. */
static int open_shipped(struct llmsim_measured *m, struct llmsim_store **out)
{
	struct llmsim_err e = {0};
	char src[sizeof m->source], skipped[sizeof m->note];
	int rc = llmsim_store_open_shipped(out, src, sizeof src, skipped, sizeof skipped, &e);
	if (skipped[0]) {
		char msg[sizeof m->note + 32];
		snprintf(msg, sizeof msg, "not imported: %s", skipped);
		note(m, msg);
	}
	if (rc) {
		char msg[400];
		snprintf(msg, sizeof msg, "shipped calibration not read (%.300s)", e.msg);
		note(m, msg);
		return 0;
	}
	snprintf(m->source, sizeof m->source, "%s", src);
	return 0;
}

int llmsim_measured_load(const struct llmsim_gpu *gpu, const char *db_path,
			 struct llmsim_measured *m, struct llmsim_err *err)
{
	struct llmsim_store *s = NULL;
	int rc;
	memset(m, 0, sizeof *m);
	m->pts = calloc(LLMSIM_MEASURED_MAX, sizeof *m->pts);
	if (!m->pts)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	if (db_path) {
		char p[4096];
		snprintf(m->source, sizeof m->source, "%s", db_path);
		rc = llmsim_store_open(llmsim_data_input(db_path, p, sizeof p), LLMSIM_STORE_READ,
				       &s, err);
	} else {
		rc = open_shipped(m, &s);
	}
	if (rc || !s) {
		if (rc)
			llmsim_measured_release(m);
		return rc;
	}
	struct collect c = {gpu, m};
	struct llmsim_store_filter f = {.hw_name = gpu->name};
	rc = llmsim_store_cases(s, &f, on_case, &c, err);
	llmsim_store_close(s);
	if (rc) {
		llmsim_measured_release(m);
		return rc;
	}
	class_errors(m);
	return 0;
}

void llmsim_measured_release(struct llmsim_measured *m)
{
	if (!m)
		return;
	free(m->pts);
	m->pts = NULL;
	m->n = 0;
}

const struct llmsim_measured_pt *llmsim_measured_find(const struct llmsim_measured *m,
						      const char *canon_spec)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->pts[i].canon, canon_spec))
			return &m->pts[i];
	return NULL;
}
