/*
 * test_plan_serve.c - the serving planner (sim/infer/plan_serve.h): a TTFT
 * target rejects what misses it (and only that), a target no layout can
 * meet leaves the closest, quantized types only when allowed, the
 * disaggregated pools and their KV transfer, the Pareto front, the load
 * split over replicas. Expected numbers are derived by hand.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"
#include "sim/infer/plan_serve.h"
#include "support.h"

static struct llmsim_model m8b;
static struct llmsim_gpu h200;

static void cfg(struct llmsim_plan_serve_cfg *pc, int gpus)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load("8b", &m8b, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &e), 0, "%s", e.msg);
	memset(pc, 0, sizeof *pc);
	pc->model = &m8b;
	pc->gpu = &h200;
	pc->gpus = gpus;
	pc->prompt = 2048;
	pc->output = 64;
	pc->requests = 100;
	pc->max_batch = 64;
}

static void run(const struct llmsim_plan_serve_cfg *pc, struct llmsim_plan_serve_out *o)
{
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_plan_serve(pc, o, &e), 0, "%s", e.msg);
}

/* Under a rate of 4 requests/s and a TTFT target of 0.5 s at p99: a row
 * meets it exactly when its p99 TTFT is at most 0.5 s and its TPOT (no
 * target) is free; rows that miss are counted under TTFT, rank after every
 * one that meets it. */
Test(plan_serve, ttft_target_rejects_what_misses_it)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 2);
	pc.load = LLMSIM_LOAD_RATE;
	pc.rate_per_s = 4;
	pc.ttft_slo_s = 0.5;
	run(&pc, &o);
	cr_assert_gt(o.nrows, 2);
	int64_t met = 0, missed = 0;
	for (int64_t i = 0; i < o.nrows; i++) {
		const struct llmsim_plan_serve_row *r = &o.rows[i];
		cr_expect_eq(r->feasible, r->ttft_s.p99 <= 0.5, "row %lld: p99 %g", (long long)i,
			     r->ttft_s.p99);
		met += r->feasible;
		missed += !r->feasible;
		if (i)
			cr_expect_geq(o.rows[i - 1].feasible, r->feasible);
	}
	cr_expect_gt(met, 0);
	cr_expect_gt(missed, 0, "a target between the fastest and the slowest");
	cr_expect_eq(o.feasible, met);
	cr_expect_eq(o.why[LLMSIM_SERVE_TTFT], missed);
	cr_expect_eq(o.why[LLMSIM_SERVE_TPOT], 0);
	llmsim_plan_serve_release(&o);
}

/* A TTFT no layout of 2 H200s can reach: a 2048-token prompt of 8B is
 * 2 x 8.03e9 x 2048 = 32.9 TFLOP of prefill, and two GPUs at their 989
 * TFLOP/s bf16 peak need 16.6 ms for it; a 10 ms target is met by none.
 * The closest ranks first, and the reason names TTFT. */
Test(plan_serve, unreachable_target_leaves_the_closest)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 2);
	pc.ttft_slo_s = 0.010;
	run(&pc, &o);
	cr_assert_gt(o.nrows, 0);
	cr_expect_eq(o.feasible, 0);
	for (int64_t i = 1; i < o.nrows; i++)
		cr_expect_leq(o.rows[i - 1].miss, o.rows[i].miss);
	cr_expect_gt(o.rows[0].ttft_q_s, 0.0166 * 0.99);
	cr_expect(strstr(o.reason, "misses TTFT p99") != NULL, "%s", o.reason);
	llmsim_plan_serve_release(&o);
}

/* Weights and KV stay bf16 unless allowed; allowing fp8 weights brings fp8
 * rows. */
Test(plan_serve, quantization_only_when_allowed)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 1);
	pc.no_disagg = 1;
	run(&pc, &o);
	cr_assert_gt(o.nrows, 0);
	for (int64_t i = 0; i < o.nrows; i++) {
		cr_expect_eq(o.rows[i].weight_dtype, LLMSIM_DT_BF16);
		cr_expect_eq(o.rows[i].kv_dtype, LLMSIM_DT_BF16);
	}
	llmsim_plan_serve_release(&o);
	pc.weight_dtypes = 1u << LLMSIM_DT_BF16 | 1u << LLMSIM_DT_FP8;
	run(&pc, &o);
	int fp8 = 0;
	for (int64_t i = 0; i < o.nrows; i++)
		fp8 |= o.rows[i].weight_dtype == LLMSIM_DT_FP8;
	cr_expect(fp8);
	llmsim_plan_serve_release(&o);
}

/* 2 GPUs: aggregated 2 x tp1, 1 x tp2, 1 x pp2 and one disaggregated split,
 * a prefill and a decode replica of tp 1. Its KV transfer moves the
 * prompt's cache, 2048 tokens x 131,072 B (32 layers x 8 kv heads x 128 x
 * k and v x 2 B) = 268 MB, over NVLink (2 GPUs in one node): no faster than
 * the link's peak, 268 MB / 450 GB/s = 0.60 ms. */
Test(plan_serve, disaggregated_pools_and_kv_transfer)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 2);
	pc.load = LLMSIM_LOAD_RATE;
	pc.rate_per_s = 2;
	run(&pc, &o);
	cr_assert_geq(o.best_disagg, 0);
	cr_assert_geq(o.best_agg, 0);
	const struct llmsim_plan_serve_row *d = &o.rows[o.best_disagg];
	cr_expect_eq(d->p_replicas, 1);
	cr_expect_eq(d->p_tp, 1);
	cr_expect_eq(d->replicas, 1);
	cr_expect_eq(d->tp, 1);
	cr_expect_eq(d->kv_over_network, 0);
	double bytes = 2048.0 * 32 * 8 * 128 * 2 * 2;
	cr_expect_geq(d->kv_transfer_s, bytes / h200.intra_node_bytes_per_s);
	cr_expect_lt(d->kv_transfer_s, 10 * bytes / h200.intra_node_bytes_per_s);
	cr_expect_geq(d->ttft_s.p50, d->kv_transfer_s); /* the transfer is in TTFT */
	cr_expect_gt(o.simulated_disagg, 0);
	llmsim_plan_serve_release(&o);
}

/* The front: no row beats a front row on both tokens/s per GPU and per
 * user; every other row is matched or beaten on both by some row. */
Test(plan_serve, pareto_front)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 2);
	run(&pc, &o);
	int64_t front = 0;
	for (int64_t i = 0; i < o.nrows; i++) {
		const struct llmsim_plan_serve_row *a = &o.rows[i];
		int beaten = 0;
		for (int64_t j = 0; j < o.nrows; j++) {
			const struct llmsim_plan_serve_row *b = &o.rows[j];
			if (j != i && b->tokens_per_s_per_gpu >= a->tokens_per_s_per_gpu &&
			    b->tokens_per_s_per_user >= a->tokens_per_s_per_user &&
			    (b->tokens_per_s_per_gpu > a->tokens_per_s_per_gpu ||
			     b->tokens_per_s_per_user > a->tokens_per_s_per_user || j < i))
				beaten = 1;
		}
		cr_expect_eq(a->pareto, !beaten, "row %lld", (long long)i);
		front += a->pareto;
	}
	cr_expect_gt(front, 1);
	llmsim_plan_serve_release(&o);
}

/* A closed loop of 40 users over 2 replicas: 20 users each, so each
 * replica simulates at least 8 x 20 = 160 requests, and runs no more than
 * 20 sequences (max_num_seqs tried up to 20). */
Test(plan_serve, concurrency_split_over_replicas)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 2);
	pc.load = LLMSIM_LOAD_CONCURRENCY;
	pc.concurrency = 40;
	pc.tp = 1, pc.pp = 1; /* aggregated replicas of one GPU only */
	run(&pc, &o);
	cr_assert_gt(o.nrows, 0);
	cr_expect_geq(o.requests_per_replica, 160);
	for (int64_t i = 0; i < o.nrows; i++) {
		cr_expect_eq(o.rows[i].replicas, 2);
		cr_expect_leq(o.rows[i].max_batch, 20);
		cr_expect_leq(o.rows[i].mean_batch, 20);
	}
	llmsim_plan_serve_release(&o);
}

/* What the planner refuses, one line each. */
Test(plan_serve, bad_requests)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	struct llmsim_err e = {0};
	cfg(&pc, 2);
	pc.load = LLMSIM_LOAD_RATE;
	cr_expect_eq(llmsim_plan_serve(&pc, &o, &e), LLMSIM_EINVAL);
	cr_expect_str_eq(e.msg, "an arrival rate must be positive");
	pc.load = LLMSIM_LOAD_OFFLINE;
	pc.slo_quantile = 0.95;
	cr_expect_eq(llmsim_plan_serve(&pc, &o, &e), LLMSIM_EINVAL);
	cr_expect_str_eq(e.msg, "the target quantile is p50, p90 or p99");
}

struct seen {
	int calls;
	int64_t last;
	int monotone;
};

static void count_progress(void *ctx, int64_t simulated, int64_t pruned)
{
	struct seen *s = ctx;
	(void)pruned;
	s->monotone &= simulated >= s->last;
	s->last = simulated;
	s->calls++;
}

/* The progress callback comes after each row is judged, with the counts
 * so far: one call per row of an aggregated search, counts that only
 * grow, the last no more than the runs simulated. */
Test(plan_serve, progress_after_each_row)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	struct seen s = {.monotone = 1};
	cfg(&pc, 2);
	pc.no_disagg = 1;
	pc.progress = count_progress;
	pc.progress_ctx = &s;
	run(&pc, &o);
	cr_expect_gt(s.calls, 0);
	cr_expect_eq(s.calls, o.nrows, "%d calls, %lld rows", s.calls, (long long)o.nrows);
	cr_expect(s.monotone);
	cr_expect_leq(s.last, o.simulated);
	llmsim_plan_serve_release(&o);
}

/* ---- the capacity question (gpus = 0) ---- */

/* 8B, 2048 + 64 tokens at a rate, no GPU count: the capacity question. */
static void capacity(struct llmsim_plan_serve_cfg *pc, double rate, double ttft, double tpot)
{
	cfg(pc, 0);
	pc->load = LLMSIM_LOAD_RATE;
	pc->rate_per_s = rate;
	pc->ttft_slo_s = ttft;
	pc->tpot_slo_s = tpot;
}

/* 8B, 2048 + 64 tokens, 40 requests/s, TTFT p99 <= 0.5 s, TPOT p99 <=
 * 20 ms, aggregated only: #1 meets both targets with the fewest GPUs of
 * any row that does; the search tried fewer GPUs (rows below the answer,
 * all missing); every row's count is its replicas x tp x pp. */
Test(plan_serve, capacity_fewest_gpus)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	capacity(&pc, 40, 0.5, 0.02);
	pc.no_disagg = 1;
	run(&pc, &o);
	cr_assert(o.capacity);
	cr_assert_gt(o.gpus_needed, 0);
	cr_assert(o.rows[0].feasible);
	cr_expect_eq(o.rows[0].gpus, o.gpus_needed);
	int below = 0;
	for (int64_t i = 0; i < o.nrows; i++) {
		const struct llmsim_plan_serve_row *r = &o.rows[i];
		cr_expect_eq(r->gpus, r->replicas * r->tp * r->pp);
		if (r->feasible) {
			cr_expect_geq(r->gpus, o.gpus_needed);
			cr_expect_leq(r->ttft_s.p99, 0.5);
			cr_expect_leq(r->tpot_s.p99, 0.02);
		}
		if (r->gpus < o.gpus_needed) {
			below++;
			cr_expect(!r->feasible);
		}
	}
	cr_expect_gt(below, 0, "the answer is not the first count tried");
	/* against the exhaustive search of one GPU fewer (every layout, every
	 * cap): none meets */
	int need = o.gpus_needed;
	llmsim_plan_serve_release(&o);
	pc.gpus = need - 1;
	run(&pc, &o);
	cr_expect_eq(o.feasible, 0, "%d GPUs meet too", need - 1);
	llmsim_plan_serve_release(&o);
}

/* Each engine run is simulated once, whatever GPU count it serves: no two
 * aggregated rows share layout, types, replicas and cap. */
Test(plan_serve, capacity_runs_once_each)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	capacity(&pc, 40, 0.5, 0.02);
	run(&pc, &o);
	for (int64_t i = 0; i < o.nrows; i++)
		for (int64_t j = i + 1; j < o.nrows; j++) {
			const struct llmsim_plan_serve_row *a = &o.rows[i], *b = &o.rows[j];
			if (a->disagg || b->disagg)
				continue;
			cr_expect(!(a->tp == b->tp && a->pp == b->pp && a->ep == b->ep &&
				    a->replicas == b->replicas && a->max_batch == b->max_batch &&
				    a->weight_dtype == b->weight_dtype && a->kv_dtype == b->kv_dtype),
				  "rows %lld and %lld: the same run twice", (long long)i, (long long)j);
		}
	cr_expect_gt(o.simulated_disagg, 0);
	cr_expect_gt(o.best_disagg, -1);
	llmsim_plan_serve_release(&o);
}

/* A TPOT of 0.1 ms: one 8B decode step reads its 16 GB of bf16 weights,
 * and even 8 H200s at 4.8 TB/s each take 0.42 ms for that: no count of
 * GPUs meets it. The plan says so with the fastest figure, and simulates
 * no load. */
Test(plan_serve, capacity_impossible_target)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	capacity(&pc, 10, 0, 1e-4);
	run(&pc, &o);
	cr_expect(o.impossible);
	cr_expect_eq(o.nrows, 0);
	cr_expect_gt(o.fastest_tpot_s, 16.06e9 / 8 / h200.hbm_bytes_per_s);
	cr_expect(strstr(o.reason, "TPOT p99") && strstr(o.reason, "fastest layout"), "%s", o.reason);
	llmsim_plan_serve_release(&o);
}

/* A TPOT target between tp 1's batch-1 step and tp 8's drops the small
 * layouts by the bound before any load runs on them. */
Test(plan_serve, capacity_bound_prunes)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	capacity(&pc, 10, 0, 1); /* first, the batch-1 figures: nothing is pruned */
	pc.no_disagg = 1;
	run(&pc, &o);
	cr_assert(!o.impossible);
	cr_expect_eq(o.why[LLMSIM_SERVE_BOUND], 0);
	double fast = o.fastest_tpot_s;
	llmsim_plan_serve_release(&o);
	pc.tpot_slo_s = 1.02 * fast;
	run(&pc, &o);
	cr_expect_gt(o.why[LLMSIM_SERVE_BOUND], 0);
	cr_expect_gt(o.units_pruned, 0);
	for (int64_t i = 0; i < o.nrows; i++)
		cr_expect_gt(o.rows[i].tp, 1, "tp 1 decodes slower than the fastest layout");
	llmsim_plan_serve_release(&o);
}

/* The cost of a row: GPUs x price per hour over its output tokens per
 * hour, per million. A capacity search needs a load and a target; a price
 * must be a number. */
Test(plan_serve, cost_and_bad_requests)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	struct llmsim_err e = {0};
	cfg(&pc, 2);
	pc.usd_per_gpu_hour = 3.6;
	run(&pc, &o);
	const struct llmsim_plan_serve_row *r = &o.rows[0];
	expect_close(r->usd_per_mtok, 2 * 3.6 / 3600 / r->tokens_per_s * 1e6, 1e-9);
	llmsim_plan_serve_release(&o);
	pc.usd_per_gpu_hour = NAN;
	cr_expect_eq(llmsim_plan_serve(&pc, &o, &e), LLMSIM_EINVAL);
	pc.usd_per_gpu_hour = 0;
	pc.gpus = 0; /* offline, no target */
	cr_expect_eq(llmsim_plan_serve(&pc, &o, &e), LLMSIM_EINVAL);
	pc.load = LLMSIM_LOAD_RATE;
	pc.rate_per_s = 10;
	cr_expect_eq(llmsim_plan_serve(&pc, &o, &e), LLMSIM_EINVAL, "no target");
	pc.ttft_slo_s = 1;
	pc.rate_per_s = 0;
	cr_expect_eq(llmsim_plan_serve(&pc, &o, &e), LLMSIM_EINVAL, "rate 0");
}

/* Without a target nothing "meets": an offline plan ranks by throughput
 * and calls no row feasible, however long its TTFT. */
Test(plan_serve, no_target_meets_nothing)
{
	struct llmsim_plan_serve_cfg pc;
	struct llmsim_plan_serve_out o;
	cfg(&pc, 2);
	run(&pc, &o);
	cr_assert_gt(o.nrows, 0);
	cr_expect_eq(o.feasible, 0);
	cr_expect(!o.targets);
	cr_expect_eq(o.reason[0], 0);
	for (int64_t i = 0; i < o.nrows; i++)
		cr_expect(!o.rows[i].feasible);
	for (int64_t i = 1; i < o.nrows; i++)
		cr_expect_geq(o.rows[i - 1].tokens_per_s_per_gpu, o.rows[i].tokens_per_s_per_gpu);
	llmsim_plan_serve_release(&o);
}

/* Two rows equal on the ranking's keys: the tighter TTFT at the target
 * quantile first, then the tighter TPOT. */
Test(plan_serve, ties_break_on_the_tighter_latency)
{
	struct llmsim_plan_serve_row a = {.gpus = 8, .tp = 8, .replicas = 1, .tokens_per_s_per_gpu = 500,
					  .tokens_per_s_per_user = 40, .ttft_q_s = 2.0,
					  .tpot_q_s = 0.030, .max_batch = 64};
	struct llmsim_plan_serve_row b = a;
	b.ttft_q_s = 1.0;
	cr_expect_gt(llmsim_plan_serve_cmp(&a, &b, 1), 0);
	cr_expect_lt(llmsim_plan_serve_cmp(&b, &a, 0), 0);
	b.ttft_q_s = a.ttft_q_s;
	b.tpot_q_s = 0.020;
	cr_expect_gt(llmsim_plan_serve_cmp(&a, &b, 1), 0);
	/* fewer GPUs first, whatever the rates, among rows that meet */
	a.feasible = b.feasible = 1;
	b.gpus = 16;
	b.tokens_per_s_per_user = 80;
	cr_expect_lt(llmsim_plan_serve_cmp(&a, &b, 1), 0);
}
