/*
 * test_infer_dist.c - seeded random numbers, length distributions and
 * lengths files for the serving simulation.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sim/infer/dist.h"
#include "support.h"

Test(infer_dist, seeded_streams_repeat)
{
	struct llmsim_rng a, b, c;
	llmsim_rng_seed(&a, 42);
	llmsim_rng_seed(&b, 42);
	llmsim_rng_seed(&c, 43);
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = llmsim_rng_u64(&a), y = llmsim_rng_u64(&b), z = llmsim_rng_u64(&c);
		cr_assert_eq(x, y);
		differ += x != z;
	}
	cr_expect_gt(differ, 990);
	struct llmsim_dist d;
	cr_assert_eq(llmsim_dist_parse("lognormal:6:0.5", &d, NULL), 0);
	llmsim_rng_seed(&a, 7);
	llmsim_rng_seed(&b, 7);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(llmsim_dist_sample(&d, &a), llmsim_dist_sample(&d, &b));
}

Test(infer_dist, parse_specs)
{
	struct llmsim_dist d;
	cr_assert_eq(llmsim_dist_parse("512", &d, NULL), 0);
	cr_expect_eq(d.kind, LLMSIM_DIST_FIXED);
	cr_expect_eq(d.a, 512);
	cr_assert_eq(llmsim_dist_parse("uniform:10:20", &d, NULL), 0);
	cr_expect_eq(d.kind, LLMSIM_DIST_UNIFORM);
	cr_assert_eq(llmsim_dist_parse("normal:100:30", &d, NULL), 0);
	cr_expect_eq(d.kind, LLMSIM_DIST_NORMAL);
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_dist_parse("gamma:1:2", &d, &e), LLMSIM_EINVAL);
	cr_expect(strstr(e.msg, "gamma:1:2") != NULL);
	cr_expect_eq(llmsim_dist_parse("uniform:20:10", &d, NULL), LLMSIM_EINVAL);
	cr_expect_eq(llmsim_dist_parse("uniform:10", &d, NULL), LLMSIM_EINVAL);
	cr_expect_eq(llmsim_dist_parse("0", &d, NULL), LLMSIM_EINVAL);
	cr_expect_eq(llmsim_dist_parse("12x", &d, NULL), LLMSIM_EINVAL);
}

Test(infer_dist, samples_respect_bounds_and_means)
{
	struct llmsim_rng r;
	llmsim_rng_seed(&r, 1);
	struct llmsim_dist u, n, ln, clip;
	llmsim_dist_parse("uniform:10:20", &u, NULL);
	llmsim_dist_parse("normal:1000:100", &n, NULL);
	llmsim_dist_parse("lognormal:5:0.5", &ln, NULL);
	llmsim_dist_parse("normal:0:10", &clip, NULL);
	double su = 0, sn = 0, sl = 0;
	int seen[11] = {0};
	const int N = 200000;
	for (int i = 0; i < N; i++) {
		int64_t x = llmsim_dist_sample(&u, &r);
		cr_assert(x >= 10 && x <= 20);
		seen[x - 10] = 1;
		su += (double)x;
		sn += (double)llmsim_dist_sample(&n, &r);
		sl += (double)llmsim_dist_sample(&ln, &r);
		cr_assert_geq(llmsim_dist_sample(&clip, &r), 1); /* clipped to >= 1 */
	}
	for (int i = 0; i <= 10; i++)
		cr_expect(seen[i], "uniform never drew %d", 10 + i);
	/* means: (10 + 20) / 2 = 15; 1000; exp(5 + 0.25 / 2) = 168.2 (the
	 * rounding to integers moves a lognormal mean by well under 0.5) */
	expect_close(su / N, 15.0, 0.01);
	expect_close(sn / N, 1000.0, 0.005);
	expect_close(sl / N, 168.17, 0.01);
}

Test(infer_dist, lengths_file)
{
	char path[512];
	int64_t *p, *o, n;
	cr_assert_eq(llmsim_lengths_load(test_data(path, sizeof path, "infer/lengths.txt"), &p, &o, &n, NULL), 0);
	/* the fixture: 4 requests, a comment line and a blank line */
	cr_assert_eq(n, 4);
	cr_expect_eq(p[0], 128);
	cr_expect_eq(o[0], 64);
	cr_expect_eq(p[3], 2048);
	cr_expect_eq(o[3], 1);
	free(p);
	free(o);
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_lengths_load(test_data(path, sizeof path, "infer/bad_lengths.txt"), &p, &o, &n, &e),
		     LLMSIM_EPARSE);
	cr_expect(strstr(e.msg, "bad_lengths.txt:3:") != NULL, "message: %s", e.msg);
	cr_expect_null(p);
}
