/* bounds.c - checked products and divisors for bounds.h. */
#include "bounds.h"

int llmsim_mul_i64(int64_t a, int64_t b, int64_t *out)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r))
		return -1;
	*out = r;
	return 0;
}

int llmsim_divisors(int n, int *out, int max)
{
	/* the small divisors ascending, their partners n/d descending after */
	int lo[2048], nlo = 0, k = 0;
	for (int64_t d = 1; d * d <= n && nlo < (int)(sizeof lo / sizeof lo[0]); d++)
		if (n % d == 0)
			lo[nlo++] = (int)d;
	for (int i = 0; i < nlo && k < max; i++)
		out[k++] = lo[i];
	for (int i = nlo; i-- > 0 && k < max;) {
		int hi = n / lo[i];
		if (hi != lo[i])
			out[k++] = hi;
	}
	return k;
}
