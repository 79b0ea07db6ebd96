/*
 * test_train_pp_fast.c - the llama3 recipe's fast pipeline paths (sim/
 * train/pp_layout.c) against a plain simulation, over a grid (issue 14,
 * the plan's speed): the chunk forwards in flight walked a run of pp at a
 * time (and in closed form when each chunk counts 1) against Megatron's
 * interleaved schedule played one forward and one backward at a time, and
 * the split's closed forms and representative ranks against the slots
 * counted one by one and every rank.
 *
 * The reference schedule is Megatron-LM's
 * forward_backward_pipelining_with_interleaving (Narayanan et al. 2021,
 * Sec. 2.2.2): rank r of pp with v chunks runs min((pp-r-1)*2 + (v-1)*pp,
 * m*v) warm-up forwards (1F1B, v 1: min(pp-r-1, m)), then forward k and
 * backward k - warm-up alternately, then the cool-down backwards; the
 * forward k runs chunk (k % (pp*v)) / pp, the backward k chunk v-1 minus
 * that. What is in flight peaks after a forward, before the backward that
 * follows it.
 */
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "sim/train/train_int.h"
#include "support.h"

#define MAX_M 256
#define MAX_V 8

static int fwd_chunk(int pp, int v, int64_t k)
{
	return (int)((k % ((int64_t)pp * v)) / pp);
}

/* Peaks of the schedule for every m in 1..MAX_M on one rank: the first
 * forwards and the steady steps do not depend on m (only where the
 * warm-up and the steady state stop), so one play of MAX_M * v forwards
 * gives each m's peak: peak[m]. */
static void play(int pp, int v, int rank, const double *w, double *peak)
{
	static double fsum[MAX_M * MAX_V + 1], steady[MAX_M * MAX_V + 1];
	int64_t total = (int64_t)MAX_M * v;
	int64_t w0 = v > 1 ? (int64_t)(pp - rank - 1) * 2 + (int64_t)(v - 1) * pp : pp - rank - 1;
	/* fsum[k]: the first k forwards held (no backward yet) */
	fsum[0] = 0;
	for (int64_t k = 0; k < total; k++)
		fsum[k + 1] = fsum[k] + (w ? w[fwd_chunk(pp, v, k)] : 1);
	/* steady[i]: the most held after the forward of steady steps 0..i-1
	 * (i steps played after a full warm-up) */
	double held = fsum[w0 < total ? w0 : total], most = 0;
	steady[0] = 0;
	for (int64_t i = 0; w0 + i < total; i++) {
		held += w ? w[fwd_chunk(pp, v, w0 + i)] : 1; /* forward w0 + i */
		most = held > most ? held : most;
		held -= w ? w[v - 1 - fwd_chunk(pp, v, i)] : 1; /* backward i */
		steady[i + 1] = most;
	}
	for (int m = 1; m <= MAX_M; m++) {
		int64_t t = (int64_t)m * v, warm = w0 < t ? w0 : t;
		if (v > 1 && m == pp) /* schedules.py: every forward a warm-up one */
			warm = t;
		double p = fsum[warm]; /* the warm-up only adds */
		if (t > warm && steady[t - warm] > p)
			p = steady[t - warm];
		peak[m] = p;
	}
}

static void check_rank(int pp, int v, int rank, const double *w, const char *what)
{
	double peak[MAX_M + 1];
	play(pp, v, rank, w, peak);
	for (int m = 1; m <= MAX_M; m++) {
		double got = llmsim_train_pp_peak_inflight(pp, v, m, rank, w);
		if (got != peak[m])
			cr_assert_fail("%s: pp %d v %d m %d rank %d: %.17g, the schedule %.17g", what, pp,
				 v, m, rank, got, peak[m]);
	}
}

static void layout_cfg(struct llmsim_model *m, struct llmsim_train_cfg *c, int layers, int pp,
		       int v)
{
	memset(m, 0, sizeof *m);
	m->layers = layers;
	llmsim_train_cfg_init(c);
	c->recipe = LLMSIM_RECIPE_LLAMA3;
	c->pp = pp;
	c->schedule = v > 1 ? LLMSIM_SCHED_INTERLEAVED : LLMSIM_SCHED_1F1B;
	c->chunks = v;
}

/* pp 2-32, v 1-8, m 1-256, every rank: one a chunk (the chunk instances,
 * fsdp_rs_exposed's), the layers of each chunk of the llama3 split of
 * Llama 3 405B (126 layers) and of an 80-layer model (memory_rank.c's),
 * and uneven whole weights 0-3 that change from chunk to chunk. */
Test(train_pp_fast, inflight_equals_the_schedule)
{
	for (int pp = 2; pp <= 32; pp++)
		for (int v = 1; v <= MAX_V; v++)
			for (int r = 0; r < pp; r++) {
				double w[MAX_V];
				check_rank(pp, v, r, NULL, "one a chunk");
				for (int j = 0; j < v; j++)
					w[j] = (j * 5 + r * 3) % 4;
				check_rank(pp, v, r, w, "uneven");
				const int layers[] = {126, 80};
				for (int i = 0; i < 2; i++) {
					struct llmsim_model m;
					struct llmsim_train_cfg c;
					layout_cfg(&m, &c, layers[i], pp, v);
					for (int j = 0; j < v; j++)
						w[j] = llmsim_train_pp_chunk_layers(&m, &c, r, j,
										    NULL, NULL);
					check_rank(pp, v, r, w, "llama3 split");
				}
			}
}

/* The split slot by slot, as train.h describes it: L + 2 slots in stages
 * of k = ceil((L+2) / (pp v)), slot s in stage s / k, stage u chunk u / pp
 * of rank u % pp; slot 0 the embedding, slot L+1 the head, the rest a
 * layer each. layers[r][j], emb[r][j], head[r][j]. */
#define MAX_PP 32
static void slot_by_slot(int L, int pp, int v, int layers[MAX_PP][MAX_V], int emb[MAX_PP][MAX_V],
			 int head[MAX_PP][MAX_V])
{
	int k = (L + 2 + pp * v - 1) / (pp * v);
	memset(layers, 0, sizeof(int[MAX_PP][MAX_V]));
	memset(emb, 0, sizeof(int[MAX_PP][MAX_V]));
	memset(head, 0, sizeof(int[MAX_PP][MAX_V]));
	for (int s = 0; s < L + 2; s++) {
		int u = s / k, r = u % pp, j = u / pp;
		if (s == 0)
			emb[r][j] = 1;
		else if (s == L + 1)
			head[r][j] = 1;
		else
			layers[r][j]++;
	}
}

/* Every chunk's and rank's layers, embedding and head as the slots give
 * them; every rank holds what the last representative at or before it
 * holds; the fullest rank's layers the most of any: 1-160 layers, pp
 * 2-32, v 1-8. */
Test(train_pp_fast, split_and_representative_ranks)
{
	static int ly[MAX_PP][MAX_V], em[MAX_PP][MAX_V], hd[MAX_PP][MAX_V];
	for (int L = 1; L <= 160; L++)
		for (int pp = 2; pp <= MAX_PP; pp++)
			for (int v = 1; v <= MAX_V; v++) {
				struct llmsim_model m;
				struct llmsim_train_cfg c;
				struct train_pp_split s;
				int most = 0;
				layout_cfg(&m, &c, L, pp, v);
				slot_by_slot(L, pp, v, ly, em, hd);
				train_pp_split(&m, &c, &s);
				cr_assert(s.nreps >= 1 && s.reps[0] == 0, "L %d pp %d v %d", L, pp, v);
				for (int i = 1; i < s.nreps; i++)
					cr_assert(s.reps[i] > s.reps[i - 1] && s.reps[i] < pp);
				for (int r = 0, i = 0; r < pp; r++) {
					int e, h, n = 0, ne = 0, nh = 0;
					for (int j = 0; j < v; j++) {
						int got = llmsim_train_pp_chunk_layers(&m, &c, r, j, &e,
										       &h);
						if (got != ly[r][j] || e != em[r][j] || h != hd[r][j])
							cr_assert_fail("L %d pp %d v %d rank %d chunk %d: "
								       "%d (%d %d), the slots %d (%d %d)",
								       L, pp, v, r, j, got, e, h,
								       ly[r][j], em[r][j], hd[r][j]);
						n += ly[r][j], ne |= em[r][j], nh |= hd[r][j];
					}
					int got = train_pp_rank_layers(&m, &c, r, &e, &h);
					if (got != n || e != ne || h != nh)
						cr_assert_fail("L %d pp %d v %d rank %d: %d (%d %d), "
							       "the slots %d (%d %d)",
							       L, pp, v, r, got, e, h, n, ne, nh);
					while (i + 1 < s.nreps && s.reps[i + 1] <= r)
						i++;
					int re, rh, rep = train_pp_split_rank(&s, s.reps[i], &re, &rh);
					if (n != rep || ne != re || nh != rh)
						cr_assert_fail("L %d pp %d v %d: rank %d holds %d (%d %d), "
							       "its representative %d %d (%d %d)",
							       L, pp, v, r, n, ne, nh, s.reps[i], rep, re,
							       rh);
					most = n > most ? n : most;
				}
				cr_assert_eq(train_pp_max_layers(&m, &c), most, "L %d pp %d v %d",
					     L, pp, v);
			}
}

/* The per-rank terms kept in the ctx (train_pp_memo) hand each
 * configuration what it would get alone: Llama 3 405B on 8,192 H100s over
 * pp 2-16, 1-8 chunks and pp, pp + 64 and pp + 128 micro-batches a step
 * (64 apart: one slot of the table for a pipeline shape), simulated in one order on
 * one ctx and in the reverse order on another, gives the same memory, byte
 * for byte, for each. */
Test(train_pp_fast, memo_keeps_each_configuration_its_own)
{
	enum { N = 4 * 4 * 3 };
	static struct llmsim_train_result fwd[N], rev[N];
	struct llmsim_train_cfg cfg[N];
	struct llmsim_model m;
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	struct llmsim_train_ctx *a = NULL, *b = NULL;
	cr_assert_eq(llmsim_model_load("405b", &m, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h100", &g, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &a, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &b, &err), 0, "%s", err.msg);
	int n = 0;
	for (int pp = 2; pp <= 16; pp *= 2)
		for (int v = 1; v <= 8; v *= 2)
			for (int k = 0; k < 3; k++) {
				struct llmsim_train_cfg *c = &cfg[n++];
				llmsim_train_cfg_init(c);
				c->gpus = 8192, c->tp = 8, c->pp = pp, c->cp = 1;
				c->dp = 8192 / (8 * pp);
				c->zero = 2;
				c->recipe = LLMSIM_RECIPE_LLAMA3;
				c->schedule = v > 1 ? LLMSIM_SCHED_INTERLEAVED : LLMSIM_SCHED_1F1B;
				c->chunks = v;
				c->uneven_pp = 1;
				c->micro_batch = 1;
				c->global_batch = (int64_t)c->dp * (pp + 64 * k);
				c->seq = 8192;
				c->attn = LLMSIM_ATTN_FLASH2;
			}
	int ok[N];
	for (int i = 0; i < N; i++)
		ok[i] = llmsim_train_simulate(a, &cfg[i], &fwd[i], &err) == 0;
	for (int i = N - 1; i >= 0; i--)
		cr_assert_eq(llmsim_train_simulate(b, &cfg[i], &rev[i], &err) == 0, ok[i]);
	int priced = 0;
	for (int i = 0; i < N; i++) {
		if (!ok[i])
			continue;
		priced++;
		const struct llmsim_train_mem *x = &fwd[i].mem, *y = &rev[i].mem;
		cr_expect(x->pp_rank == y->pp_rank && x->total_bytes == y->total_bytes &&
				  x->act_in_flight_layers == y->act_in_flight_layers &&
				  x->activations_bytes == y->activations_bytes &&
				  x->grads_bytes == y->grads_bytes,
			  "pp %d chunks %d batch %lld: rank %d %.17g B, reversed rank %d %.17g B",
			  cfg[i].pp, cfg[i].chunks, (long long)cfg[i].global_batch, x->pp_rank,
			  x->total_bytes,
			  y->pp_rank, y->total_bytes);
	}
	cr_expect_geq(priced, N / 2, "%d of %d configurations priced", priced, N);
	llmsim_train_ctx_free(a);
	llmsim_train_ctx_free(b);
}
