/* measured.c - the calibration cases of one GPU, scored beside their
 * measurements (see measured.h). */
#include "measured.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/paths.h"
#include "calib/shipped.h"
#include "fit.h"

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

static void score(const struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
		  struct llmsim_measured *m)
{
	m->cases = (int)set->n;
	for (size_t i = 0; i < set->n; i++) {
		const struct llmsim_calib_point *pt = &set->p[i];
		struct llmsim_pred p;
		double t;
		if (pt->how == LLMSIM_CALIB_NOT_MODELLED ||
		    llmsim_calib_predict(gpu, pt, &t, &p, NULL) || !(t > 0)) {
			m->skipped++;
			continue;
		}
		/* Only kernels with math have a place on a roofline; a
		 * collective's time is the links', which no roofline of one
		 * GPU shows. */
		if (!(p.flops > 0 && p.hbm_bytes > 0) || pt->op.kind == LLMSIM_OP_COLLECTIVE ||
		    m->n >= LLMSIM_MEASURED_MAX)
			continue;
		struct llmsim_measured_pt *q = &m->pts[m->n++];
		snprintf(q->op_class, sizeof q->op_class, "%s", pt->op_class);
		snprintf(q->spec, sizeof q->spec, "%s", pt->op_spec);
		llmsim_op_format(&pt->op, q->canon, sizeof q->canon);
		q->flops = p.flops;
		q->intensity_flops_per_byte = p.intensity_flops_per_byte;
		q->measured_s = pt->measured_s;
		q->predicted_s = t;
		q->measured_flops_per_s = p.flops / pt->measured_s;
		q->predicted_flops_per_s = p.flops / t;
	}
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
	struct llmsim_calib_set set;
	struct llmsim_err e = {0};
	rc = llmsim_calib_set_load(s, gpu->name, &set, &e);
	llmsim_store_close(s);
	if (rc == LLMSIM_ENOENT) /* no cases of this GPU */
		return 0;
	if (rc) {
		llmsim_measured_release(m);
		return llmsim_err_set(err, rc, "%s", e.msg);
	}
	score(gpu, &set, m);
	rc = llmsim_calib_validate(gpu, &set, NULL, &m->all, err);
	llmsim_calib_set_release(&set);
	if (rc)
		llmsim_measured_release(m);
	return rc;
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
