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
 *
 * The planner prices thousands of configurations a second, so each rank's
 * and chunk's layers come in closed form from the split (train_pp_split),
 * the loops over ranks visit only the ranks where what a rank holds
 * changes, and the schedule is walked a run of pp at a time;
 * test_train_pp_fast checks each against the slots counted one by one and
 * the schedule played step by step.
 */
#include <math.h>
#include <string.h>

#include "train_int.h"

int llmsim_train_pp_ends_in_slots(const struct llmsim_train_cfg *c)
{
	return train_ends_in_slots(c); /* train_int.h */
}

int64_t llmsim_train_pp_slots(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	return (int64_t)m->layers + (llmsim_train_pp_ends_in_slots(c) ? 2 : 0);
}

int llmsim_train_pp_empty_chunks(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	if (!llmsim_train_pp_ends_in_slots(c))
		return 0;
	int64_t pv = (int64_t)c->pp * train_pp_chunks(c), sl = llmsim_train_pp_slots(m, c);
	if (pv < 1 || pv > sl)
		return 0; /* more chunks than slots: the caller's other check */
	int64_t k = (sl + pv - 1) / pv; /* slots a chunk, as train_pp_split takes them */
	return (pv - 1) * k >= sl;
}

int train_pp_chunks(const struct llmsim_train_cfg *c)
{
	return c->schedule == LLMSIM_SCHED_INTERLEAVED && c->chunks > 1 ? c->chunks : 1;
}

void train_pp_split(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
		    struct train_pp_split *s)
{
	/* virtual stage u = j*pp + r holds slots [u k, (u+1) k): the first
	 * full = S / k are full, stage `full` holds S % k (if any), the rest
	 * none. So rank r has q + 1 full chunks for r < rem = full % pp and q
	 * past it, the partial chunk on rank rem, the embedding on rank 0, the
	 * head on the rank of stage (S-1) / k: what a rank holds changes only
	 * at ranks 1, rem, rem + 1, that head rank and the next. */
	/* in int (32-bit divisions are the cheaper): the slots are at most
	 * LLMSIM_MAX_LAYERS + 2, and pp x chunks past them leaves one slot a
	 * stage */
	int pp = c->pp, v = train_pp_chunks(c), slots = m->layers + 2;
	int64_t pv = (int64_t)pp * v;
	int k = pv >= slots ? 1 : (slots + (int)pv - 1) / (int)pv;
	int full = slots / k, head_stage = (slots - 1) / k;
	s->pp = pp, s->v = v;
	s->slots = slots, s->k = k;
	s->full = full, s->part = slots - full * k;
	s->head_stage = head_stage;
	s->q = full / pp;
	s->rem = full - s->q * pp;
	s->head_rank = head_stage - head_stage / pp * pp;
	const int cand[TRAIN_PP_REPS] = {0, 1, s->rem, s->rem + 1, s->head_rank,
					 s->head_rank + 1};
	s->nreps = 0;
	for (int i = 0; i < TRAIN_PP_REPS; i++) { /* insert in rank order, each once */
		int r = cand[i], at = s->nreps;
		if (r >= s->pp)
			continue;
		while (at > 0 && s->reps[at - 1] > r)
			at--;
		if (at > 0 && s->reps[at - 1] == r)
			continue;
		for (int x = s->nreps++; x > at; x--)
			s->reps[x] = s->reps[x - 1];
		s->reps[at] = r;
	}
}

int train_pp_split_chunk(const struct train_pp_split *s, int rank, int chunk, int *emb,
			 int *head)
{
	int64_t u = (int64_t)chunk * s->pp + rank;
	int64_t n = u < s->full ? s->k : u == s->full ? s->part : 0;
	int e = u == 0, h = u == s->head_stage;
	if (emb)
		*emb = e;
	if (head)
		*head = h;
	n -= e + h;
	return n > 0 ? (int)n : 0;
}

int train_pp_split_rank(const struct train_pp_split *s, int rank, int *emb, int *head)
{
	int e = rank == 0, h = rank == s->head_rank;
	int64_t n = (s->q + (rank < s->rem)) * s->k + (rank == s->rem ? s->part : 0) - e - h;
	if (emb)
		*emb = e;
	if (head)
		*head = h;
	return (int)n;
}

int llmsim_train_pp_chunk_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
				 int rank, int chunk, int *emb, int *head)
{
	struct train_pp_split s;
	train_pp_split(m, c, &s);
	return train_pp_split_chunk(&s, rank, chunk, emb, head);
}

int train_pp_rank_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c,
			 int rank, int *emb, int *head)
{
	struct train_pp_split s;
	train_pp_split(m, c, &s);
	return train_pp_split_rank(&s, rank, emb, head);
}

double train_pp_max_layers(const struct llmsim_model *m, const struct llmsim_train_cfg *c)
{
	struct train_pp_split s;
	train_pp_split(m, c, &s);
	int most = 0;
	for (int i = 0; i < s.nreps; i++) {
		int n = train_pp_split_rank(&s, s.reps[i], NULL, NULL);
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
	if (v > 1 && m == pp) /* Megatron's schedules.py: all_warmup_microbatches */
		warm = total;
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
	struct train_pp_split s;
	train_pp_split(m, c, &s);
	for (int i = 0; i < s.nreps; i++) { /* the first slowest rank is a representative */
		int e, h;
		int n = train_pp_split_rank(&s, s.reps[i], &e, &h);
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
