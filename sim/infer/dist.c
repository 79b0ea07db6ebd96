/*
 * dist.c - seeded random numbers, length distributions and lengths files
 * for the serving simulation (see dist.h).
 */
#include "dist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/gzfile.h"
#include "base/lines.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void llmsim_rng_seed(struct llmsim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t llmsim_rng_u64(struct llmsim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double llmsim_rng_uniform(struct llmsim_rng *r)
{
	return (double)(llmsim_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* mean 0, sd 1 */
static double rng_normal(struct llmsim_rng *r)
{
	/* Box-Muller; 1 - u keeps the log's argument in (0, 1] */
	double u = 1.0 - llmsim_rng_uniform(r), v = llmsim_rng_uniform(r);
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

double llmsim_rng_exponential(struct llmsim_rng *r, double rate)
{
	return -log(1.0 - llmsim_rng_uniform(r)) / rate;
}

static int parse_num(const char *s, const char *end, double *out)
{
	char buf[64];
	size_t len = (size_t)(end - s);
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *e;
	errno = 0;
	*out = strtod(buf, &e);
	return *e || errno || !isfinite(*out) ? -1 : 0;
}

int llmsim_dist_parse(const char *spec, struct llmsim_dist *d, struct llmsim_err *err)
{
	static const struct { const char *name; enum llmsim_dist_kind kind; } kinds[] = {
		{"uniform", LLMSIM_DIST_UNIFORM},
		{"normal", LLMSIM_DIST_NORMAL},
		{"lognormal", LLMSIM_DIST_LOGNORMAL},
	};
	memset(d, 0, sizeof *d);
	const char *c1 = strchr(spec, ':');
	if (!c1) {
		if (parse_num(spec, spec + strlen(spec), &d->a) || d->a < 1 || d->a != floor(d->a) ||
		    d->a > LLMSIM_MAX_TOKENS)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "length '%s': expected an integer from 1 to %d or uniform:LO:HI, normal:MEAN:SD, lognormal:MU:SIGMA",
					      spec, LLMSIM_MAX_TOKENS);
		d->kind = LLMSIM_DIST_FIXED;
		return 0;
	}
	size_t nlen = (size_t)(c1 - spec);
	int found = 0;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strlen(kinds[i].name) == nlen && !strncmp(spec, kinds[i].name, nlen)) {
			d->kind = kinds[i].kind;
			found = 1;
		}
	const char *c2 = strchr(c1 + 1, ':');
	if (!found || !c2 || parse_num(c1 + 1, c2, &d->a) ||
	    parse_num(c2 + 1, c2 + 1 + strlen(c2 + 1), &d->b))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "length distribution '%s': expected uniform:LO:HI, normal:MEAN:SD or lognormal:MU:SIGMA",
				      spec);
	if (d->kind == LLMSIM_DIST_UNIFORM && (d->a < 1 || d->b < d->a || d->b > LLMSIM_MAX_TOKENS))
		return llmsim_err_set(err, LLMSIM_EINVAL, "'%s': need 1 <= LO <= HI <= %d", spec,
				      LLMSIM_MAX_TOKENS);
	if (d->kind != LLMSIM_DIST_UNIFORM && d->b < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "'%s': the spread must not be negative",
				      spec);
	return 0;
}

int64_t llmsim_dist_sample(const struct llmsim_dist *d, struct llmsim_rng *r)
{
	double x = d->a;
	switch (d->kind) {
	case LLMSIM_DIST_FIXED:
		break;
	case LLMSIM_DIST_UNIFORM:
		/* integers LO..HI, each equally likely */
		x = floor(d->a) + floor(llmsim_rng_uniform(r) * (floor(d->b) - floor(d->a) + 1));
		break;
	case LLMSIM_DIST_NORMAL:
		x = d->a + d->b * rng_normal(r);
		break;
	case LLMSIM_DIST_LOGNORMAL:
		x = exp(d->a + d->b * rng_normal(r));
		break;
	}
	x = nearbyint(x);
	if (!(x >= 1))
		x = 1;
	if (x > LLMSIM_MAX_TOKENS) /* a tail past any context window */
		x = LLMSIM_MAX_TOKENS;
	return (int64_t)x;
}

double llmsim_dist_mean(const struct llmsim_dist *d)
{
	switch (d->kind) {
	case LLMSIM_DIST_UNIFORM: return (floor(d->a) + floor(d->b)) / 2;
	case LLMSIM_DIST_LOGNORMAL: return exp(d->a + d->b * d->b / 2);
	default: return d->a;
	}
}

static int parse_count(const char **p, int64_t *out)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (errno || v < 1 || v > LLMSIM_MAX_TOKENS ||
	    (*e && *e != ' ' && *e != '\t' && *e != '#' && *e != '\n' && *e != '\r'))
		return -1;
	*out = v;
	*p = e;
	return 0;
}

int llmsim_lengths_load(const char *path, int64_t **prompt, int64_t **output, int64_t *n,
			struct llmsim_err *err)
{
	*prompt = *output = NULL;
	*n = 0;
	FILE *f = llmsim_gz_open(path, NULL, err); /* plain or .gz */
	if (!f)
		return err ? err->code : LLMSIM_EIO;
	char *line;
	size_t len, alloc = 0;
	int lineno = 0, rc;
	struct llmsim_lines lr;
	llmsim_lines_init(&lr, f, path, LLMSIM_MAX_LINE, LLMSIM_MAX_LENGTHS_BYTES,
			  "a file of request lengths");
	while ((rc = llmsim_lines_next(&lr, &line, &len, err)) > 0) {
		rc = 0;
		lineno = lr.line;
		if (len != strlen(line)) {
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, lineno, 0, "NUL byte in the line");
			break;
		}
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		int64_t a, b;
		if (parse_count(&p, &a) || parse_count(&p, &b)) {
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, lineno, 0,
					       "expected two integers from 1 to %d: prompt and output tokens",
					       LLMSIM_MAX_TOKENS);
			break;
		}
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p && *p != '#') {
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, lineno, 0,
					       "unexpected text after the output length");
			break;
		}
		if (*n >= LLMSIM_MAX_REQUESTS) {
			/* what one simulation runs, and a bound on memory however
			 * small the (gzip) file is */
			rc = llmsim_err_setloc(err, LLMSIM_EPARSE, path, lineno, 0,
					       "more than %d requests, the most llmsim simulates",
					       LLMSIM_MAX_REQUESTS);
			break;
		}
		if ((size_t)*n == alloc) {
			alloc = alloc ? 2 * alloc : 256;
			int64_t *np = realloc(*prompt, alloc * sizeof *np);
			int64_t *no = np ? realloc(*output, alloc * sizeof *no) : NULL;
			if (np)
				*prompt = np;
			if (no)
				*output = no;
			if (!np || !no) {
				rc = llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", path);
				break;
			}
		}
		(*prompt)[*n] = a;
		(*output)[*n] = b;
		(*n)++;
	}
	if (!rc && *n == 0)
		rc = llmsim_err_set(err, LLMSIM_EPARSE, "%s: no requests in the file", path);
	llmsim_lines_release(&lr);
	struct llmsim_err zerr = {0};
	if (llmsim_gz_close(f, path, &zerr)) { /* a cut-off stream wins */
		rc = zerr.code;
		if (err)
			*err = zerr;
	}
	if (rc) {
		free(*prompt);
		free(*output);
		*prompt = *output = NULL;
		*n = 0;
	}
	return rc;
}
