/*
 * test_published_expect.c - the published suites' predictions held where
 * they were (tests/data/published_expect.tsv): every row of
 * models/runs/serve_published.yaml is predicted as `serve --published`
 * predicts it, every metric of models/runs/train_published.yaml as
 * `validate` does, and a row whose prediction moved by more than its
 * line's tolerance fails, named, with both figures. A suite row without a
 * line, or a line without a row, fails too, so the file cannot fall
 * behind the suites. The published figures stay in the suites: this file
 * holds what llmsim said, so that a change which moves a figure the
 * README shows is seen and its line rewritten on purpose.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/validate/serve_runs.h"
#include "calib/validate/train_runs.h"
#include "support.h"

struct expect {
	char suite[16], run[64], metric[64];
	double predicted, tol_pct;
	int seen;
};

static struct expect x[512];
static int nx;

/* The lines of the expectations file (comments and blank lines skipped);
 * a malformed line fails the test, named. */
static void read_expect(void)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/published_expect.tsv", LLMSIM_TEST_DATA);
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	char line[512];
	int ln = 0;
	nx = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert_lt(nx, 512, "%s: more than 512 lines", path);
		struct expect *e = &x[nx++];
		memset(e, 0, sizeof *e);
		if (sscanf(line, "%15[^\t]\t%63[^\t]\t%63[^\t]\t%lf\t%lf", e->suite, e->run,
			   e->metric, &e->predicted, &e->tol_pct) != 5 || !(e->tol_pct > 0)) {
			fclose(f);
			cr_assert_fail("%s:%d: expected 'suite<TAB>run<TAB>metric<TAB>predicted<TAB>"
				       "tolerance_pct'", path, ln);
		}
	}
	fclose(f);
	cr_assert_gt(nx, 0, "%s holds no line", path);
}

static struct expect *find(const char *suite, const char *run, const char *metric)
{
	for (int k = 0; k < nx; k++)
		if (!strcmp(x[k].suite, suite) && !strcmp(x[k].run, run) &&
		    !strcmp(x[k].metric, metric))
			return &x[k];
	return NULL;
}

/* One prediction against its line: present, and where it was. */
static void check(const char *suite, const char *run, const char *metric, double pred,
		  double published)
{
	struct expect *e = find(suite, run, metric);
	if (!e) {
		cr_expect_fail("%s %s: no line in tests/data/published_expect.tsv (add what llmsim "
			       "predicts: %.6g)", run, metric, pred);
		return;
	}
	e->seen = 1;
	double moved_pct = 100 * (pred / e->predicted - 1);
	cr_expect(fabs(moved_pct) <= e->tol_pct,
		  "%s %s: predicted %.6g, was %.6g (%+.1f%%, tolerance %g%%; published %.6g): a "
		  "change moved this row; if on purpose, rewrite its line in "
		  "tests/data/published_expect.tsv and the README (scripts/readme-tour.sh "
		  "--update)", run, metric, pred, e->predicted, moved_pct, e->tol_pct, published);
}

static void no_stray_lines(const char *suite)
{
	for (int k = 0; k < nx; k++)
		cr_expect(x[k].seen || strcmp(x[k].suite, suite),
			  "%s %s: a line of tests/data/published_expect.tsv names no row of the "
			  "%s suite", x[k].run, x[k].metric, suite);
}

Test(published_expect, every_serving_row_where_it_was)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/models/runs/serve_published.yaml", LLMSIM_SOURCE_DIR);
	struct llmsim_serve_pub *v;
	int n;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_serve_pubs_load(path, &v, &n, &err), 0, "%s", err.msg);
	read_expect();
	for (int i = 0; i < n; i++) {
		double pred = 0;
		cr_assert_eq(llmsim_serve_pub_predict(&v[i], &pred, &err), 0, "%s: %s", v[i].name,
			     err.msg);
		check("serve", v[i].name, llmsim_pub_metric_name(v[i].metric), pred,
		      v[i].published);
	}
	no_stray_lines("serve");
	free(v);
}

Test(published_expect, every_training_row_where_it_was)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/models/runs/train_published.yaml", LLMSIM_SOURCE_DIR);
	struct llmsim_run_entry *v;
	int n;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_runs_load(path, &v, &n, &err), 0, "%s", err.msg);
	read_expect();
	static struct llmsim_run_outcome o;
	for (int i = 0; i < n; i++) {
		cr_assert_eq(llmsim_run_predict(&v[i], &o, &err), 0, "%s: %s", v[i].name, err.msg);
		for (int m = 0; m < LLMSIM_RUN_METRIC_COUNT; m++)
			if (o.published[m] > 0)
				check("train", v[i].name, llmsim_run_metric_name(m), o.predicted[m],
				      o.published[m]);
	}
	no_stray_lines("train");
	free(v);
}
