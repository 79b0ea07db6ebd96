/*
 * pp_layout.c - the pipeline split of the llama3 recipe and the
 * activations each pipeline rank holds under Megatron's schedules.
 *
 * Llama 3 405B (Dubey et al. 2024, "The Llama 3 Herd of Models", Sec.
 * 3.3.2): 126 layers over 16 stages; "we reduce one Transformer layer each
 * from the first and the last stages. This means that the first model
 * chunk on the first stage has only the embedding, and the last model
 * chunk on the last stage has only output projection and loss
 * calculation." The embedding and the head are then one slot each of
 * L + 2 = 128, which over 16 stages is 8 chunks of one slot per stage:
 * rank 0 holds the embedding and 7 layers, ranks 1-14 8 layers, rank 15 7
 * layers and the head. The ranks differ in what they hold and in how many
 * chunk forwards their schedule keeps in flight (Megatron's interleaved
 * warm-up, (pp-rank-1)*2 + (v-1)*pp chunk forwards, falls with the rank),
 * so the memory is taken per rank (memory_rank.c).
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

int llmsim_train_pp_ends_in_slots(const struct llmsim_train_cfg *c)
{
	return c->recipe == LLMSIM_RECIPE_LLAMA3 && c->pp > 1;
}

int64_t llmsim_train_pp_slots(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	return (int64_t)m->layers + (llmsim_train_pp_ends_in_slots(c) ? 2 : 0);
}

int train_pp_chunks(const struct llmsim_train_cfg *c)
{
	return c->schedule == LLMSIM_SCHED_INTERLEAVED && c->chunks > 1 ? c->chunks : 1;
}

int llmsim_train_pp_chunk_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
				 int rank, int chunk, int *emb, int *head)
{
	int64_t pv = (int64_t)c->pp * train_pp_chunks(c);
	int64_t slots = (int64_t)m->layers + 2;
	int64_t k = (slots + pv - 1) / pv; /* slots per chunk */
	int64_t s0 = ((int64_t)chunk * c->pp + rank) * k, s1 = s0 + k;
	int64_t lo = s0 > 1 ? s0 : 1, hi = s1 < m->layers + 1 ? s1 : m->layers + 1;
	if (emb)
		*emb = s0 == 0;
	if (head)
		*head = s0 <= m->layers + 1 && m->layers + 1 < s1;
	return hi > lo ? (int)(hi - lo) : 0;
}

int train_pp_rank_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			 int rank, int *emb, int *head)
{
	/* the rank's slots less the ends and the empty slots past the head,
	 * which sit in the last virtual stages */
	int v = train_pp_chunks(c);
	int64_t pv = (int64_t)c->pp * v, slots = (int64_t)m->layers + 2;
	int64_t k = (slots + pv - 1) / pv;
	int e = rank == 0, h = (int)(((slots - 1) / k) % c->pp) == rank;
	int64_t n = v * k - e - h;
	for (int j = v - 1; j >= 0; j--) {
		int64_t s0 = ((int64_t)j * c->pp + rank) * k;
		if (s0 + k <= slots)
			break;
		n -= s0 >= slots ? k : s0 + k - slots;
	}
	if (emb)
		*emb = e;
	if (head)
		*head = h;
	return (int)n;
}

int train_pp_rank_reps(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
		       int reps[TRAIN_PP_REPS])
{
	/* virtual stage u = j*pp + r holds slots [u k, (u+1) k): the first
	 * F = S / k are full, stage F holds S % k (if any), the rest none. So
	 * rank r has q + 1 full chunks for r < F % pp and q past it, the
	 * partial chunk on rank F % pp, the embedding on rank 0, the head on
	 * the rank of stage (S-1) / k: what a rank holds changes only at ranks
	 * 1, F % pp, F % pp + 1, that head rank and the next. */
	int64_t pv = (int64_t)c->pp * train_pp_chunks(c), slots = (int64_t)m->layers + 2;
	int64_t k = (slots + pv - 1) / pv;
	int rem = (int)((slots / k) % c->pp), hr = (int)(((slots - 1) / k) % c->pp);
	const int cand[TRAIN_PP_REPS] = {0, 1, rem, rem + 1, hr, hr + 1};
	int n = 0;
	for (int i = 0; i < TRAIN_PP_REPS; i++) { /* insert in rank order, each once */
		int r = cand[i], at = n;
		if (r >= c->pp)
			continue;
		while (at > 0 && reps[at - 1] > r)
			at--;
		if (at > 0 && reps[at - 1] == r)
			continue;
		memmove(reps + at + 1, reps + at, (size_t)(n - at) * sizeof *reps);
		reps[at] = r;
		n++;
	}
	return n;
}

double train_pp_max_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	int most = 0, reps[TRAIN_PP_REPS], nr = train_pp_rank_reps(m, c, reps);
	for (int i = 0; i < nr; i++) {
		int n = train_pp_rank_layers(m, c, reps[i], NULL, NULL);
		most = n > most ? n : most;
	}
	return most;
}

double llmsim_train_pp_peak_inflight(int pp, int chunks, int64_t m, int rank,
				     const double *weight)
{
	int v = chunks > 1 ? chunks : 1;
	int64_t group = (int64_t)pp * v, total = m * v;
	int64_t warm = v > 1 ? (int64_t)(pp - rank - 1) * 2 + (int64_t)(v - 1) * pp
			     : pp - rank - 1;
	if (warm > total)
		warm = total;
	if (warm < 0)
		warm = 0;
	if (!weight) /* one a chunk: the warm-up, then one forward before each backward */
		return (double)(warm < total ? warm + 1 : warm);
	/* past the warm-up, forwards and backwards each go round the pp*chunks
	 * (micro-batch, chunk) pattern in step, so what is in flight repeats
	 * with that period: one period after the warm-up holds the peak (the
	 * cool-down only frees). Both walk in runs of pp of one chunk: taken a
	 * run at a time (where neither the forward's nor the backward's chunk
	 * changes), the warm-up only adds, and a steady run of n forward +
	 * backward pairs of weights dF, dB peaks after its first forward or
	 * its last. */
	int64_t last = warm + group < total ? warm + group : total;
	double cur = 0, peak = 0;
	/* f: forwards run; fo, bo: the forward's and the backward's place in
	 * their run of pp (f % pp); fj, bj: their run's turn in the chunk
	 * order ((f % group) / pp) */
	int64_t f = 0;
	int fo = 0, bo = 0, fj = 0, bj = 0;
#define MAX(a, b) ((a) > (b) ? (a) : (b)) /* fmax, inlined: no NaN here */
	while (f < warm) {
		int64_t n = pp - fo < warm - f ? pp - fo : warm - f;
		cur += n * weight[fj];
		peak = MAX(peak, cur);
		f += n;
		if ((fo += (int)n) == pp)
			fo = 0, fj = fj + 1 == v ? 0 : fj + 1;
	}
	while (f < last) {
		int64_t n = pp - fo;
		n = pp - bo < n ? pp - bo : n;
		n = last - f < n ? last - f : n;
		double dF = weight[fj], dB = weight[v - 1 - bj];
		double up = (n - 1) * (dF - dB);
		peak = MAX(peak, cur + dF + MAX(0, up));
		cur += n * (dF - dB);
		f += n;
		if ((fo += (int)n) == pp)
			fo = 0, fj = fj + 1 == v ? 0 : fj + 1;
		if ((bo += (int)n) == pp)
			bo = 0, bj = bj + 1 == v ? 0 : bj + 1;
	}
#undef MAX
	return peak;
}

/* One section's time per micro-batch: kernels and exposed TP. */
static double sec_s(const struct layer_cost *x)
{
	return x->fwd_s + x->bwd_s + x->tp_fwd_s + x->tp_bwd_s;
}

double train_pp_slowest(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			const struct shape_cost *sc, double moe_frac, struct layer_cost *none,
			const struct layer_cost **end)
{
	double layer = (1 - moe_frac) * sec_s(&sc->dense) + moe_frac * sec_s(&sc->moe);
	double best = -1, best_layers = 0;
	memset(none, 0, sizeof *none);
	*end = none;
	int reps[TRAIN_PP_REPS], nr = train_pp_rank_reps(m, c, reps);
	for (int i = 0; i < nr; i++) { /* the first slowest rank is a representative */
		int e, h;
		int n = train_pp_rank_layers(m, c, reps[i], &e, &h);
		const struct layer_cost *x = e ? &sc->emb : h ? &sc->head : none;
		double t = n * layer + sec_s(x);
		if (t > best) {
			best = t;
			best_layers = n;
			*end = x;
		}
	}
	return best_layers;
}
