/*
 * trace.c - the in-memory trace: growable record arrays and interned
 * strings (a program launches the same few hundred kernel names many
 * thousands of times, so each name is stored once).
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

void llmsim_trace_init(struct llmsim_trace *t)
{
	memset(t, 0, sizeof *t);
}

void llmsim_trace_release(struct llmsim_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->hslots);
	free(t->kernels);
	free(t->copies);
	free(t->ranges);
	memset(t, 0, sizeof *t);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int rehash(struct llmsim_trace *t, size_t nslots)
{
	uint32_t *h = calloc(nslots, sizeof *h);
	if (!h)
		return LLMSIM_ENOMEM;
	for (size_t i = 0; i < t->nstrs; i++) {
		size_t j = hash_str(t->strs[i]) & (nslots - 1);
		while (h[j])
			j = (j + 1) & (nslots - 1);
		h[j] = (uint32_t)(i + 1);
	}
	free(t->hslots);
	t->hslots = h;
	t->nslots = nslots;
	return 0;
}

/* The interned copy of s (NULL on allocation failure). */
static const char *intern(struct llmsim_trace *t, const char *s)
{
	if (!s)
		s = "";
	if (2 * (t->nstrs + 1) > t->nslots &&
	    rehash(t, t->nslots ? 2 * t->nslots : 256))
		return NULL;
	size_t j = hash_str(s) & (t->nslots - 1);
	while (t->hslots[j]) {
		const char *c = t->strs[t->hslots[j] - 1];
		if (!strcmp(c, s))
			return c;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->nstrs == t->capstrs) {
		size_t cap = t->capstrs ? 2 * t->capstrs : 64;
		char **n = realloc(t->strs, cap * sizeof *n);
		if (!n)
			return NULL;
		t->strs = n;
		t->capstrs = cap;
	}
	char *c = strdup(s);
	if (!c)
		return NULL;
	t->strs[t->nstrs++] = c;
	t->hslots[j] = (uint32_t)t->nstrs;
	return c;
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 256;
	void *p = realloc(*arr, c * elem);
	if (!p)
		return LLMSIM_ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

int llmsim_trace_add_kernel(struct llmsim_trace *t, const struct llmsim_trace_kernel *k)
{
	if (grow((void **)&t->kernels, &t->capkernels, t->nkernels, sizeof *k))
		return LLMSIM_ENOMEM;
	const char *name = intern(t, k->name);
	if (!name)
		return LLMSIM_ENOMEM;
	t->kernels[t->nkernels] = *k;
	t->kernels[t->nkernels++].name = name;
	return 0;
}

int llmsim_trace_add_copy(struct llmsim_trace *t, const struct llmsim_trace_copy *c)
{
	if (grow((void **)&t->copies, &t->capcopies, t->ncopies, sizeof *c))
		return LLMSIM_ENOMEM;
	t->copies[t->ncopies++] = *c;
	return 0;
}

int llmsim_trace_add_range(struct llmsim_trace *t, const struct llmsim_trace_range *r)
{
	if (grow((void **)&t->ranges, &t->capranges, t->nranges, sizeof *r))
		return LLMSIM_ENOMEM;
	const char *name = intern(t, r->name);
	if (!name)
		return LLMSIM_ENOMEM;
	t->ranges[t->nranges] = *r;
	t->ranges[t->nranges++].name = name;
	return 0;
}

const struct llmsim_trace_range *llmsim_trace_range(const struct llmsim_trace *t, int64_t id)
{
	size_t lo = 0, hi = t->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->ranges[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nranges && t->ranges[lo].id == id ? &t->ranges[lo] : NULL;
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct llmsim_trace_kernel *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->correlation_id > y->correlation_id) - (x->correlation_id < y->correlation_id);
}

static int cmp_copy(const void *a, const void *b)
{
	const struct llmsim_trace_copy *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_range(const void *a, const void *b)
{
	const struct llmsim_trace_range *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

void llmsim_trace_sort(struct llmsim_trace *t)
{
	if (t->nkernels)
		qsort(t->kernels, t->nkernels, sizeof *t->kernels, cmp_kernel);
	if (t->ncopies)
		qsort(t->copies, t->ncopies, sizeof *t->copies, cmp_copy);
	if (t->nranges)
		qsort(t->ranges, t->nranges, sizeof *t->ranges, cmp_range);
}
