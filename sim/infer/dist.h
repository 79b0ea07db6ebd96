/*
 * dist.h - seeded random numbers and request-length distributions for the
 * serving simulation: a fixed length, uniform:LO:HI, normal:MEAN:SD or
 * lognormal:MU:SIGMA (MU, SIGMA of the natural log of the length), each
 * drawn value rounded and clipped to at least 1; and a lengths file of
 * "prompt output" lines.
 */
#ifndef LLMSIM_DIST_H
#define LLMSIM_DIST_H

#include <stdint.h>
#include "base/err.h"

/* xoshiro256** seeded through splitmix64: the same seed gives the same
 * stream on every platform. */
struct llmsim_rng {
	uint64_t s[4];
};
void llmsim_rng_seed(struct llmsim_rng *r, uint64_t seed);
uint64_t llmsim_rng_u64(struct llmsim_rng *r);
double llmsim_rng_uniform(struct llmsim_rng *r);     /* [0, 1) */
double llmsim_rng_exponential(struct llmsim_rng *r, double rate); /* mean 1/rate */

enum llmsim_dist_kind {
	LLMSIM_DIST_FIXED, LLMSIM_DIST_UNIFORM, LLMSIM_DIST_NORMAL, LLMSIM_DIST_LOGNORMAL
};

struct llmsim_dist {
	enum llmsim_dist_kind kind;
	double a, b;  /* fixed: a; uniform: lo, hi (inclusive); normal: mean, sd;
		       * lognormal: mu, sigma */
};

/* Parse "N", "uniform:LO:HI", "normal:MEAN:SD" or "lognormal:MU:SIGMA".
 * Fails with a message naming the spec. */
int llmsim_dist_parse(const char *spec, struct llmsim_dist *d, struct llmsim_err *err);

/* One length from d: rounded to an integer, at least 1. */
int64_t llmsim_dist_sample(const struct llmsim_dist *d, struct llmsim_rng *r);

/* The mean of the distribution before rounding and clipping. */
double llmsim_dist_mean(const struct llmsim_dist *d);

/* Read a lengths file: one request per line, "PROMPT OUTPUT" (integers
 * from 1 to LLMSIM_MAX_TOKENS, spaces or tabs between), '#' starts a
 * comment, blank lines are skipped; lines of at most LLMSIM_MAX_LINE bytes,
 * files of at most LLMSIM_MAX_LENGTHS_BYTES (base/bounds.h). On success
 * *prompt and *output are malloc'd arrays of *n entries (free them). A
 * malformed line fails with "path:line: message". */
int llmsim_lengths_load(const char *path, int64_t **prompt, int64_t **output, int64_t *n,
			struct llmsim_err *err);

#endif
