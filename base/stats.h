/*
 * stats.h - order statistics of a list of numbers, the one way llmsim
 * computes them (medians and percentiles of measured times, of errors, of
 * simulated latencies).
 *
 * Quantiles interpolate linearly between order statistics: the q-quantile
 * of n sorted values is the value at rank q (n - 1), between its two
 * neighbours (numpy's default), so the median of an even count is the mean
 * of the two middle values.
 */
#ifndef LLMSIM_STATS_H
#define LLMSIM_STATS_H

#include <stddef.h>

/* The q-quantile (0 <= q <= 1) of v[0..n); sorts v in place. NaN if n == 0. */
double llmsim_quantile(double *v, size_t n, double q);

/* The same of v[0..n) already sorted ascending (not modified). */
double llmsim_quantile_sorted(const double *v, size_t n, double q);

/* The smallest of v[0..n) that at least a share q (0 < q <= 1) of the
 * values do not exceed (the nearest-rank quantile, v[ceil(q n) - 1] once
 * sorted): an error bar that covers q of its cases, whatever n. Sorts v in
 * place. NaN if n == 0. */
double llmsim_quantile_cover(double *v, size_t n, double q);

/* Sort v[0..n) ascending. */
void llmsim_sort_doubles(double *v, size_t n);

#endif
