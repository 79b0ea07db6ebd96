/*
 * test_published_expect.c - the published serving suite's predictions
 * held where they were (tests/data/published_expect.tsv): every row of
 * models/runs/serve_published.yaml is predicted as `serve --published`
 * predicts it, and a row whose prediction moved by more than its line's
 * tolerance fails, named, with both figures. A suite row without a line,
 * or a line without a row, fails too, so the file cannot fall behind the
 * suite. The published figures stay in the suite: this file holds what
 * llmsim said, so that a change which moves a figure the README shows is
 * seen and its line rewritten on purpose.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/validate/serve_runs.h"
#include "support.h"

struct expect {
	char run[64], metric[64];
	double predicted, tol_pct;
	int seen;
};

/* The lines of the expectations file (comments and blank lines skipped);
 * a malformed line fails the test, named. */
static int read_expect(const char *path, struct expect *x, int max)
{
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot open %s", path);
	char line[512];
	int n = 0, ln = 0;
	while (fgets(line, sizeof line, f)) {
		ln++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		cr_assert_lt(n, max, "%s: more than %d lines", path, max);
		struct expect *e = &x[n];
		memset(e, 0, sizeof *e);
		if (sscanf(line, "%63[^\t]\t%63[^\t]\t%lf\t%lf", e->run, e->metric, &e->predicted,
			   &e->tol_pct) != 4 || !(e->tol_pct > 0)) {
			fclose(f);
			cr_assert_fail("%s:%d: expected 'run<TAB>metric<TAB>predicted<TAB>tolerance_pct'",
				       path, ln);
		}
		n++;
	}
	fclose(f);
	return n;
}

Test(published_expect, every_row_where_it_was)
{
	char suite[1024], path[1024];
	snprintf(suite, sizeof suite, "%s/models/runs/serve_published.yaml", LLMSIM_SOURCE_DIR);
	snprintf(path, sizeof path, "%s/published_expect.tsv", LLMSIM_TEST_DATA);
	struct llmsim_serve_pub *v;
	int n;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_serve_pubs_load(suite, &v, &n, &err), 0, "%s", err.msg);
	static struct expect x[256];
	int nx = read_expect(path, x, 256);
	cr_assert_gt(nx, 0, "%s holds no line", path);
	for (int i = 0; i < n; i++) {
		struct expect *e = NULL;
		for (int k = 0; k < nx && !e; k++)
			if (!strcmp(x[k].run, v[i].name))
				e = &x[k];
		if (!e) {
			cr_expect_fail("%s: no line in %s (add what llmsim serve --published "
				       "--json predicts)", v[i].name, path);
			continue;
		}
		e->seen = 1;
		cr_expect_str_eq(e->metric, llmsim_pub_metric_name(v[i].metric), "%s: metric",
				 v[i].name);
		double pred = 0;
		cr_assert_eq(llmsim_serve_pub_predict(&v[i], &pred, &err), 0, "%s: %s", v[i].name,
			     err.msg);
		double moved_pct = 100 * (pred / e->predicted - 1);
		cr_expect(fabs(moved_pct) <= e->tol_pct,
			  "%s: predicted %.6g, was %.6g (%+.1f%%, tolerance %g%%; published %.6g): "
			  "a change moved this row; if on purpose, rewrite its line in %s and the "
			  "README (scripts/readme-tour.sh --update)",
			  v[i].name, pred, e->predicted, moved_pct, e->tol_pct, v[i].published, path);
	}
	for (int k = 0; k < nx; k++)
		cr_expect(x[k].seen, "%s: a line of %s names no row of the suite", x[k].run, path);
	free(v);
}
