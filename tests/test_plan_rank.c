/*
 * test_plan_rank.c - the planner's ranking by selection (plan_select,
 * sim/train/plan_int.h) against the ranking it replaced: sort every
 * configuration that fits by the ranking's order (plan_rank_tps first),
 * then walk the sorted list for the rows (the first of each layout, its
 * later configurations within the error folded in) and the best of each
 * kind. Random entries with many ties, offload and tight memory ranked
 * the error slower, every error width and row count: the two agree on
 * the fastest, every row (its shown entry, its count, its best and worst)
 * and every kind's best.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/train/plan_int.h"
#include "support.h"

/* The ranking's order (plan_entry_cmp) for qsort. */
static int ref_cmp(const void *a, const void *b)
{
	return plan_entry_cmp(a, b);
}

static int ref_of_kind(const struct plan_entry *e, int k, int gpn)
{
	switch (k) {
	case LLMSIM_PLAN_KIND_HBM: return e->offload == LLMSIM_OFFLOAD_NONE;
	case LLMSIM_PLAN_KIND_OFFLOAD: return e->offload != LLMSIM_OFFLOAD_NONE;
	case LLMSIM_PLAN_KIND_TP_NODE: return e->tp <= gpn;
	case LLMSIM_PLAN_KIND_FULL: return !e->lora;
	default: return e->lora;
	}
}

static int ref_same_layout(const struct plan_entry *a, const struct plan_entry *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->ep == b->ep &&
	       a->zero == b->zero && a->offload == b->offload && a->lora == b->lora;
}

/* The sort and the walks of the ranking before plan_select. */
static void reference(const struct plan_entry *in, int64_t n, double e, int top,
		      unsigned searched, int gpn, struct plan_selection *sel)
{
	struct plan_entry *v = malloc((size_t)n * sizeof *v);
	int64_t *first = malloc((size_t)top * sizeof *first);
	cr_assert(v && first);
	memcpy(v, in, (size_t)n * sizeof *v);
	qsort(v, (size_t)n, sizeof *v, ref_cmp);
	int64_t fastest = 0;
	for (int64_t i = 1; i < n; i++)
		if (v[i].tokens_per_s > v[fastest].tokens_per_s)
			fastest = i;
	sel->fastest = v[fastest];
	sel->nrows = 0;
	for (int64_t i = 0; i < n; i++) {
		int k = 0;
		while (k < sel->nrows && !ref_same_layout(&v[first[k]], &v[i]))
			k++;
		struct plan_group *g = &sel->rows[k];
		if (k < sel->nrows) {
			if (v[i].tokens_per_s * (1 + e) >= v[first[k]].tokens_per_s) {
				g->n++;
				g->best_tps = fmax(g->best_tps, v[i].tokens_per_s);
				g->worst_tps = fmin(g->worst_tps, v[i].tokens_per_s);
			}
			continue;
		}
		if (sel->nrows == top)
			continue;
		first[sel->nrows++] = i;
		g->shown = v[i];
		g->n = 1;
		g->best_tps = g->worst_tps = v[i].tokens_per_s;
	}
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++) {
		int64_t first_i = -1, pick = -1;
		sel->have_kind[k] = 0;
		if (!(searched >> k & 1))
			continue;
		for (int64_t i = 0; i < n && pick < 0; i++) {
			if (!ref_of_kind(&v[i], k, gpn))
				continue;
			if (first_i < 0)
				first_i = i;
			if (v[i].tokens_per_s * (1 + e) < v[first_i].tokens_per_s)
				break;
			if (v[i].offload == LLMSIM_OFFLOAD_NONE || k == LLMSIM_PLAN_KIND_OFFLOAD)
				pick = i;
		}
		if (pick < 0)
			pick = first_i;
		if (pick >= 0) {
			sel->have_kind[k] = 1;
			sel->kind[k] = v[pick];
		}
	}
	free(first);
	free(v);
}

/* n distinct configurations (their options spell i), tokens/s drawn from
 * `levels` values so that many tie; some tight in memory, ranked (as
 * offload is) the error e slower. */
static struct plan_entry *entries(int64_t n, int levels, double e, unsigned seed)
{
	struct plan_entry *v = calloc((size_t)n, sizeof *v);
	cr_assert(v);
	srand(seed);
	for (int64_t i = 0; i < n; i++) {
		int64_t x = i;
		v[i].zero = (uint8_t)(x % 4), x /= 4;
		v[i].micro_batch = (uint8_t)(1 << (x % 5)), x /= 5;
		v[i].recompute = (uint8_t)(x % 3), x /= 3;
		v[i].offload = (uint8_t)(x % 3), x /= 3;
		v[i].lora = (uint8_t)(x % 2), x /= 2;
		v[i].tp = 1 << (x % 5), x /= 5;
		v[i].chunks = (uint8_t)(1 + x % 4), x /= 4;
		v[i].pp = (int32_t)(1 + x % 8), x /= 8;
		v[i].modules = (uint8_t)(x % 2), x /= 2;
		v[i].act_offload = (uint8_t)(100 * (x % 2)), x /= 2;
		v[i].cp = v[i].ep = 1;
		v[i].tokens_per_s = 1000.0 + 37.5 * (rand() % levels);
		v[i].tight = (uint8_t)(rand() % 4 == 0);
		v[i].rank_tps = plan_rank_tps(v[i].tokens_per_s, v[i].offload, v[i].tight, e);
	}
	return v;
}

static void same_entry(const struct plan_entry *a, const struct plan_entry *b, const char *what)
{
	cr_expect(ref_cmp(a, b) == 0, "%s: %g tp %d pp %d zero %d offload %d against %g tp %d "
		  "pp %d zero %d offload %d", what, a->tokens_per_s, a->tp, a->pp, a->zero,
		  a->offload, b->tokens_per_s, b->tp, b->pp, b->zero, b->offload);
}

static void agree(int64_t n, int levels, double e, int top, unsigned searched, unsigned seed)
{
	struct plan_entry *v = entries(n, levels, e, seed);
	struct plan_selection want = {.rows = calloc((size_t)top, sizeof(struct plan_group))};
	struct plan_selection got = {.rows = calloc((size_t)top, sizeof(struct plan_group))};
	cr_assert(want.rows && got.rows);
	reference(v, n, e, top, searched, 8, &want);
	struct plan_entries es = {.v = v, .n = n};
	cr_assert_eq(plan_select(&es, e, top, searched, 8, &got), 0);
	same_entry(&got.fastest, &want.fastest, "fastest");
	cr_expect_eq(got.nrows, want.nrows, "n %lld e %g top %d: rows", (long long)n, e, top);
	for (int i = 0; i < want.nrows && i < got.nrows; i++) {
		same_entry(&got.rows[i].shown, &want.rows[i].shown, "row shown");
		cr_expect_eq(got.rows[i].n, want.rows[i].n, "e %g top %d row %d: count", e, top, i);
		cr_expect(got.rows[i].best_tps == want.rows[i].best_tps, "row %d best", i);
		cr_expect(got.rows[i].worst_tps == want.rows[i].worst_tps, "row %d worst", i);
	}
	for (int k = 0; k < LLMSIM_PLAN_KIND_COUNT; k++) {
		cr_expect_eq(got.have_kind[k], want.have_kind[k], "kind %d found", k);
		if (got.have_kind[k] && want.have_kind[k])
			same_entry(&got.kind[k], &want.kind[k], "kind");
	}
	free(want.rows);
	free(got.rows);
	free(v);
}

Test(plan_rank, selection_gives_what_the_sort_gave)
{
	const double widths[] = {0, 0.02, 0.1, 0.35, 3};
	const int tops[] = {1, 3, 5, 40};
	const unsigned all = (1u << LLMSIM_PLAN_KIND_COUNT) - 1;
	const unsigned no_lora = all & ~(1u << LLMSIM_PLAN_KIND_FULL | 1u << LLMSIM_PLAN_KIND_LORA);
	unsigned seed = 1;
	for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
		for (size_t t = 0; t < sizeof tops / sizeof tops[0]; t++) {
			agree(5000, 40, widths[w], tops[t], all, seed++);      /* many ties */
			agree(5000, 100000, widths[w], tops[t], no_lora, seed++); /* few */
			agree(7, 3, widths[w], tops[t], all, seed++);         /* fewer than rows */
		}
}

Test(plan_rank, one_entry)
{
	agree(1, 1, 0.1, 5, (1u << LLMSIM_PLAN_KIND_COUNT) - 1, 7);
}
