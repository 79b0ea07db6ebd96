/*
 * trace_summary.c - what `llmsim trace show` prints of a trace: time per
 * kernel class, per distinct kernel name and per NVTX range name (the
 * kernel time launched inside ranges of that name).
 *
 * Linear in the trace: kernel and range names are interned by the trace
 * (one pointer per distinct string), so they are grouped by pointer in a
 * hash index; each distinct kernel name is classified once; and the time
 * under each range name comes from passes over the range tree, not a walk
 * up from every kernel. The tree is acyclic with parents before children
 * (llmsim_trace_check), so subtree sums accumulate in one pass from the
 * last range to the first, and a depth-first walk marks the ranges that
 * have an ancestor of the same name: a kernel counts once under each name
 * that encloses it, so a name's time is the sum over its outermost ranges.
 */
#include "trace_analyze.h"

#include <stdlib.h>
#include <string.h>

#include "base/datafind.h"
#include "base/hash.h"

void llmsim_trace_summary_release(struct llmsim_trace_summary *s)
{
	if (!s)
		return;
	free(s->kernels);
	free(s->ranges);
	memset(s, 0, sizeof *s);
}

/* Names grouped by their interned pointer. */
struct group {
	struct llmsim_trace_name_sum *v;
	size_t n, cap;
	struct llmsim_hindex ix;
};

static int same_ptr(size_t pos, const void *key)
{
	const struct group *g = ((const void *const *)key)[0];
	return g->v[pos].name == ((const void *const *)key)[1];
}

static uint64_t ptr_hash(const char *p)
{
	uintptr_t u = (uintptr_t)p;
	return llmsim_hash_bytes(LLMSIM_HASH_SEED, &u, sizeof u);
}

/* The index of name in g (added with zero sums when new), or -1. */
static long group_of(struct group *g, const char *name)
{
	const void *key[2] = {g, name};
	uint64_t h = ptr_hash(name);
	long i = llmsim_hindex_find(&g->ix, h, same_ptr, key);
	if (i >= 0)
		return i;
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		void *p = realloc(g->v, cap * sizeof *g->v);
		if (!p)
			return -1;
		g->v = p;
		g->cap = cap;
	}
	if (llmsim_hindex_add(&g->ix, h, g->n))
		return -1;
	g->v[g->n] = (struct llmsim_trace_name_sum){.name = name};
	return (long)g->n++;
}

static int by_time(const void *a, const void *b)
{
	const struct llmsim_trace_name_sum *x = a, *y = b;
	if (x->s != y->s)
		return (x->s < y->s) - (x->s > y->s);
	return strcmp(x->name, y->name); /* a stable order for equal times */
}

static long range_index(const struct llmsim_trace *t, int64_t id)
{
	const struct llmsim_trace_range *r = id > 0 ? llmsim_trace_range(t, id) : NULL;
	return r ? (long)(r - t->ranges) : -1;
}

static double dur_s(uint64_t start_ns, uint64_t end_ns)
{
	return (double)(end_ns - start_ns) * 1e-9;
}

int llmsim_trace_summarize(const struct llmsim_trace *t, struct llmsim_trace_summary *s,
			   struct llmsim_err *err)
{
	memset(s, 0, sizeof *s);
	struct group ks = {0}, rs = {0};
	size_t nr = t->nranges;
	double *own = calloc(nr ? nr : 1, sizeof *own);        /* kernel time launched in r */
	long *name_of = malloc((nr ? nr : 1) * sizeof *name_of); /* r's name in rs */
	unsigned char *shadowed = calloc(nr ? nr : 1, 1);       /* an ancestor has r's name */
	long *parent_of = malloc((nr ? nr : 1) * sizeof *parent_of); /* index, -1 none */
	int64_t *open = NULL;                                    /* per name: enclosing ranges */
	size_t *stack = malloc((nr ? nr : 1) * sizeof *stack);
	size_t *first = NULL, *kids = NULL, *next = NULL;        /* children, CSR */
	int rc = LLMSIM_ENOMEM;
	if (!own || !name_of || !shadowed || !stack || !parent_of)
		goto out;

	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		long g = group_of(&ks, k->name);
		if (g < 0)
			goto out;
		double d = dur_s(k->start_ns, k->end_ns);
		ks.v[g].count++;
		ks.v[g].s += d;
		s->total_s += d;
		const struct llmsim_trace_range *r = llmsim_trace_range(t, k->range_id);
		if (r)
			own[r - t->ranges] += d;
	}
	for (size_t g = 0; g < ks.n; g++) { /* one classification per distinct name */
		enum llmsim_trace_class c = llmsim_trace_classify(ks.v[g].name);
		s->cls_n[c] += ks.v[g].count;
		s->cls_s[c] += ks.v[g].s;
	}
	for (size_t i = 0; i < t->ncopies; i++) {
		double d = dur_s(t->copies[i].start_ns, t->copies[i].end_ns);
		s->cls_s[LLMSIM_TC_COPIES] += d;
		s->cls_n[LLMSIM_TC_COPIES]++;
		s->total_s += d;
	}

	for (size_t i = 0; i < nr; i++) {
		if ((name_of[i] = group_of(&rs, t->ranges[i].name)) < 0)
			goto out;
		rs.v[name_of[i]].count++;
	}
	/* which ranges sit inside a range of their own name: a depth-first
	 * walk of the tree (children lists built in one pass; ranges of
	 * several threads interleave in id order, so id order alone is no
	 * preorder), counting per name the open ancestors */
	open = calloc(rs.n ? rs.n : 1, sizeof *open);
	first = calloc(nr + 1, sizeof *first);
	kids = malloc((nr ? nr : 1) * sizeof *kids);
	next = malloc((nr ? nr : 1) * sizeof *next);
	if (!open || !first || !kids || !next)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		parent_of[i] = range_index(t, t->ranges[i].parent_id);
		if (parent_of[i] >= 0)
			first[parent_of[i] + 1]++;
	}
	for (size_t i = 0; i < nr; i++)
		first[i + 1] += first[i];
	memcpy(next, first, nr * sizeof *next);
	for (size_t i = 0; i < nr; i++)
		if (parent_of[i] >= 0)
			kids[next[parent_of[i]]++] = i;
	for (size_t root = 0; root < nr; root++) {
		if (parent_of[root] >= 0)
			continue;
		size_t depth = 0;
		stack[depth++] = root;
		next[root] = first[root];
		shadowed[root] = 0;
		open[name_of[root]]++;
		while (depth) {
			size_t u = stack[depth - 1];
			if (next[u] < first[u + 1]) {
				size_t v = kids[next[u]++];
				shadowed[v] = open[name_of[v]] > 0;
				open[name_of[v]]++;
				next[v] = first[v];
				stack[depth++] = v;
			} else {
				open[name_of[u]]--;
				depth--;
			}
		}
	}
	/* subtree sums, children before parents (a parent's index is smaller) */
	for (size_t i = nr; i-- > 0;) {
		if (!shadowed[i])
			rs.v[name_of[i]].s += own[i];
		if (parent_of[i] >= 0)
			own[parent_of[i]] += own[i];
	}
	if (ks.n)
		qsort(ks.v, ks.n, sizeof *ks.v, by_time);
	if (rs.n)
		qsort(rs.v, rs.n, sizeof *rs.v, by_time);
	s->kernels = ks.v, s->nkernels = ks.n;
	s->ranges = rs.v, s->nranges = rs.n;
	ks.v = rs.v = NULL;
	rc = 0;
out:
	free(ks.v);
	free(rs.v);
	llmsim_hindex_release(&ks.ix);
	llmsim_hindex_release(&rs.ix);
	free(own);
	free(name_of);
	free(shadowed);
	free(open);
	free(stack);
	free(parent_of);
	free(first);
	free(kids);
	free(next);
	return rc ? llmsim_err_set(err, rc, "out of memory") : 0;
}

int llmsim_trace_declared_model(const struct llmsim_trace *t, char *buf, size_t size,
				struct llmsim_err *err)
{
	buf[0] = 0;
	for (size_t i = 0; i < t->nranges; i++) {
		const char *n = t->ranges[i].name;
		if (strncmp(n, "model ", 6))
			continue;
		int len = (int)strcspn(n + 6, " ");
		snprintf(buf, size, "%.*s", len, n + 6);
		if ((size_t)len >= size || !llmsim_data_name_ok(buf) || llmsim_data_is_path(buf)) {
			llmsim_err_set(err, LLMSIM_EINVAL,
				       "the trace names its model '%.*s' (NVTX range %lld), which is "
				       "not a model name: give --model", len > 64 ? 64 : len, n + 6,
				       (long long)t->ranges[i].id);
			buf[0] = 0;
			return LLMSIM_EINVAL;
		}
		return 0;
	}
	return 0;
}
