/* stats.c - quantiles by linear interpolation (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void llmsim_sort_doubles(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_double);
}

double llmsim_quantile_sorted(const double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double r = q * (double)(n - 1);
	size_t i = (size_t)floor(r);
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (r - (double)i) * (v[i + 1] - v[i]);
}

double llmsim_quantile(double *v, size_t n, double q)
{
	llmsim_sort_doubles(v, n);
	return llmsim_quantile_sorted(v, n, q);
}

double llmsim_quantile_cover(double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	llmsim_sort_doubles(v, n);
	double r = ceil(q * (double)n - 1e-9); /* 0.8 x 10 is 8, not 8.000000001 */
	size_t i = r < 1 ? 0 : (size_t)r - 1;
	return v[i < n ? i : n - 1];
}
