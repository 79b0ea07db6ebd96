/*
 * test_sim_coll.c - collectives, each expected time worked by hand from
 * the model's formulas (sim/collective.c) and the defaults of
 * hw/gpu_params.h, on the test H100: NVLink 450 GB/s each way, 3.35 TB/s
 * HBM; the tests set the link hop to NCCL's 0.6 us (tuning.cc hwLat).
 *
 * Defaults: Simple 0.80 of the link, 8 us a step; LL 0.35, 1.5 us; LL128
 * 0.80 x 120/128, 3 us; 5 us fixed; 16 channels at most; local copy-out
 * at 0.40 x 3.35 TB/s / 2 = 670 GB/s; straggle 0.30; NCCL's own figures:
 * 0.82 of the link (369 GB/s) and LL capped at 141 GB/s.
 */
#include <math.h>
#include <string.h>

#include "support.h"
#include "test_sim_gpus.h"
#include "sim/sim.h"

static struct llmsim_op coll(enum llmsim_coll_kind k, double bytes, int gpus, int nodes,
			     enum llmsim_coll_algo algo)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_COLLECTIVE, .dtype = LLMSIM_DT_BF16};
	op.u.coll.kind = k, op.u.coll.bytes = bytes, op.u.coll.gpus = gpus;
	op.u.coll.nodes = nodes, op.u.coll.algo = algo;
	return op;
}

static void gpu(struct llmsim_gpu *g)
{
	test_gpu_h100(g);
	g->intra_node_latency_s = 0.6e-6;
}

#define HOP	 0.6e-6
#define BW	 (450e9 * 0.80)
#define STEP	 8e-6
#define BW_LL	 (450e9 * 0.35)
#define STEP_LL	 1.5e-6
#define BW_128	 (450e9 * 0.80 * 120 / 128)
#define STEP_128 3e-6
#define FIXED	 5e-6
#define LOCAL	 (3.35e12 * 0.40 / 2)
/* the slowest of 16 channels: sqrt(2 ln 16) = 2.35482 deviations */
#define Z16	   2.354820045
#define STEP_BYTES 524288.0

/* lag of the slowest of nc channels, each moving x bytes at r each:
 * z * 0.30 * sqrt(x / 512 KiB) steps of 512 KiB / r */
static double lag(double z, double x, double r)
{
	return z * 0.30 * sqrt(x / STEP_BYTES) * STEP_BYTES / r;
}

/* 8 ranks, 1 GB, ring. NCCL's model: bus 369 GB/s, 14 steps, algorithm
 * bandwidth x 8/14: LL 15 + 1e9 / 80.6e3 = 12426 us, LL128 40.6 + 5155
 * = 5196 us, Simple 56 + 4743 = 4799 us: Simple. Physics: 14 steps of
 * 8.6 us, 1.75 GB sent at 360 GB/s, the 125 MB copy-out at 670 GB/s, and
 * the lag of the slowest of 16 channels, each sending 109.4 MB at 22.5
 * GB/s. (One channel's block, 544 threads x 64 B in flight over 0.6 us,
 * pushes 58 GB/s: 16 of them do not bind.) */
Test(sim_coll, ring_allreduce_simple)
{
	struct llmsim_gpu g;
	gpu(&g);
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 8, 1, LLMSIM_ALGO_RING));
	double t = FIXED + 14 * (HOP + STEP) + 1.75e9 / BW + 1.25e8 / LOCAL +
		   lag(Z16, 1.75e9 / 16, BW / 16);
	expect_close(p.link_bytes, 1.75e9, 1e-12);
	expect_close(p.time_s, t, 1e-9);
	cr_expect_eq(p.bound, LLMSIM_BOUND_LINK);
	/* tree: NCCL rates it 8.4 + 14 x 4 + 1e9 / (369 x 0.92 x 0.5 e3) =
	 * 5956 us, slower than the ring's 4799: auto takes the ring */
	expect_close(predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 8, 1, LLMSIM_ALGO_AUTO)).time_s, t,
		     1e-9);
	/* forced tree, Simple: 2 log2 8 = 6 steps, 2 GB sent, no copy-out */
	p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 8, 1, LLMSIM_ALGO_TREE));
	expect_close(p.time_s, FIXED + 6 * (HOP + STEP) + 2e9 / BW + lag(Z16, 2e9 / 16, BW / 16),
		     1e-9);
}

/* NCCL picks with its own model, not by the real times. 2 ranks,
 * all-reduce (2 steps). 1 MiB: LL 7.8 + 1048576 / 141e3 = 15.2 us beats
 * Simple 15.2 + 2.8 = 18.0 us: LL, all 16 channels (each rank's 512 KiB
 * share / 4 KiB), sending 1 MiB and copying 512 KiB out at LL's rate.
 * 4 MiB: LL 37.5 us, LL128 17.8 + 12.4 = 30.2 us, Simple 15.2 + 11.4 =
 * 26.6 us: Simple. */
Test(sim_coll, nccl_picks_the_protocol)
{
	struct llmsim_gpu g;
	gpu(&g);
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1048576, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + 2 * (HOP + STEP_LL) + 1.5 * 1048576 / BW_LL, 1e-9);
	double S = 4194304;
	p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, S, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s,
		     FIXED + 2 * (HOP + STEP) + S / BW + S / 2 / LOCAL + lag(Z16, S / 16, BW / 16),
		     1e-9);
}

/* 8 ranks, 16 MiB all-reduce: NCCL's LL128 (40.6 + 16777216 / 194.0e3 =
 * 127.1 us) beats Simple (56 + 79.6 = 135.6 us) and LL (223 us). LL128:
 * 14 steps of 3.6 us, 1.75 x 16 MiB sent at 337.5 GB/s, 2 MiB copied out,
 * 16 channels lagging. */
Test(sim_coll, ll128_for_mid_sizes_on_8_gpus)
{
	struct llmsim_gpu g;
	gpu(&g);
	double S = 16777216;
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, S, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s,
		     FIXED + 14 * (HOP + STEP_128) + 1.75 * S / BW_128 + S / 8 / LOCAL +
			 lag(Z16, 1.75 * S / 16, BW_128 / 16),
		     1e-9);
}

/* LL runs on one channel per 4 KiB: all-reduce 64 KiB on 2 ranks, each
 * rank's 32 KiB share, 8 channels of 16: half of LL's rate. All-gather of
 * 64 KiB is sized on its whole buffer: 16 channels, 1 step, 32 KiB sent
 * and 32 KiB copied out. */
Test(sim_coll, ll_channels_ramp_with_size)
{
	struct llmsim_gpu g;
	gpu(&g);
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 65536, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + 2 * (HOP + STEP_LL) + 1.5 * 65536 / (BW_LL * 8 / 16), 1e-9);
	p = predict_ok(&g, coll(LLMSIM_COLL_ALLGATHER, 65536, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + (HOP + STEP_LL) + 65536 / BW_LL, 1e-9);
}

/* Ring all-gather and reduce-scatter of 800 MB over 8 ranks: NCCL's
 * Simple (8.4 + 7 x 3.4 + 8e8 / (369 x 8/7 e3) = 1929 us, LL128 2089).
 * 7 steps, 700 MB sent, 100 MB copied out. */
Test(sim_coll, gather_scatter)
{
	struct llmsim_gpu g;
	gpu(&g);
	double t = FIXED + 7 * (HOP + STEP) + 7e8 / BW + 1e8 / LOCAL + lag(Z16, 7e8 / 16, BW / 16);
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLGATHER, 8e8, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.link_bytes, 7e8, 1e-12);
	expect_close(p.time_s, t, 1e-9);
	p = predict_ok(&g, coll(LLMSIM_COLL_REDUCESCATTER, 8e8, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, t, 1e-9);
}

/* Point-to-point: LL up to 16 KiB, Simple above, one exchange whose step
 * costs LL's; receives run beside the sends (no copy-out term). 16 KiB:
 * 4 LL channels of 16. 1 MiB: two 512 KiB chunks on 2 channels, whose
 * blocks push 544 x 64 B / 0.6 us = 58.03 GB/s each, 116.1 GB/s in all,
 * below the link's 360; the slower of 2 (sqrt(2 ln 2) = 1.17741) lags
 * one step's deviation. 100 MB: 16 channels, link-bound. */
Test(sim_coll, sendrecv_and_alltoall)
{
	struct llmsim_gpu g;
	gpu(&g);
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_SENDRECV, 16384, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + HOP + STEP_LL + 16384 / (BW_LL * 4 / 16), 1e-9);
	double cta = 544 * 64 / 0.6e-6, S = 1048576;
	p = predict_ok(&g, coll(LLMSIM_COLL_SENDRECV, S, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + HOP + STEP_LL + S / (2 * cta) + lag(1.177410023, S / 2, cta),
		     1e-9);
	p = predict_ok(&g, coll(LLMSIM_COLL_SENDRECV, 1e8, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + HOP + STEP_LL + 1e8 / BW + lag(Z16, 1e8 / 16, BW / 16),
		     1e-9);
	/* all-to-all of 800 MB on 8 ranks: 7 exchanges, 700 MB sent, each
	 * peer's 100 MB on 16 channels */
	p = predict_ok(&g, coll(LLMSIM_COLL_ALLTOALL, 8e8, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, FIXED + 7 * (HOP + STEP_LL) + 7e8 / BW + lag(Z16, 7e8 / 16, BW / 16),
		     1e-9);
	/* across nodes: the network, no per-block bound, 16 channels */
	p = predict_ok(&g, coll(LLMSIM_COLL_SENDRECV, 1e8, 2, 2, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s,
		     FIXED + 5e-6 + STEP_LL + 1e8 / (50e9 * 0.8) +
			 lag(Z16, 1e8 / 16, 50e9 * 0.8 / 16),
		     1e-9);
}

/* 16 ranks on 2 nodes, 1.6 GB, ring, no straggle (1e-12): reduce-scatter in the
 * node (7 steps, 1.4 GB sent, 200 MB copied out), all-reduce of 200 MB
 * between the 2 nodes (2 steps, 200 MB sent at 40 GB/s, 100 MB copied
 * out), all-gather in the node. Simple is the cheapest: LL128 saves 5 us
 * on each of 16 steps (80 us) but loses 0.5 ms on the 2.8 GB over NVLink. */
Test(sim_coll, hierarchical_allreduce)
{
	struct llmsim_gpu g;
	gpu(&g);
	/* parameters must be positive */
	g.param[LLMSIM_PARAM_COLLECTIVE_STRAGGLE_FRACTION] = 1e-12;
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1.6e9, 16, 2, LLMSIM_ALGO_RING));
	double bw = 2.8e9 / BW + 2e8 / (50e9 * 0.8) + 5e8 / LOCAL;
	double lat = 14 * (HOP + STEP) + 2 * (5e-6 + STEP);
	expect_close(p.time_s, bw + lat + FIXED, 1e-9);
	expect_close(p.link_bytes, 2.8e9 + 2e8, 1e-12);
}

/* One rank: NCCL copies the send buffer into the receive buffer: kernel
 * overhead (3 us; GPU time, the host's launch is not in any op's time) +
 * 1 MB read and written at 0.9 x 3.35 TB/s. */
Test(sim_coll, one_rank_is_a_copy)
{
	struct llmsim_gpu g;
	gpu(&g);
	struct llmsim_pred p = predict_ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e6, 1, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, 3e-6 + 2e6 / (3.35e12 * 0.9), 1e-9);
	cr_expect_eq(p.link_bytes, 0);
	cr_expect_eq(p.bound, LLMSIM_BOUND_LAUNCH);
}

Test(sim_coll, errors)
{
	struct llmsim_gpu g;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	gpu(&g);
	struct llmsim_op op = coll(LLMSIM_COLL_ALLREDUCE, 1e6, 6, 4, LLMSIM_ALGO_AUTO);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	cr_expect_str_eq(err.msg, "gpus (6) must be divisible by nodes (4)");
	op = coll(LLMSIM_COLL_ALLGATHER, 1e6, 8, 1, LLMSIM_ALGO_TREE);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EUNSUPPORTED);
	op = coll(LLMSIM_COLL_ALLREDUCE, 0, 8, 1, LLMSIM_ALGO_AUTO);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	op = coll(LLMSIM_COLL_ALLREDUCE, 1e300, 8, 1, LLMSIM_ALGO_AUTO); /* > 2^63 bytes */
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	op = coll(LLMSIM_COLL_ALLREDUCE, 1e6, 16, 1, LLMSIM_ALGO_AUTO);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL); /* 16 > 8 per node */
}

/* A multi-node NVLink domain (GB200 NVL72: 72 GPUs over trays of 4) is one
 * level of the network: a collective of 16 GPUs inside it costs what it
 * would in one 16-GPU node, on NVLink; without the domain the same 16
 * GPUs exceed a node; two domains of 8 go through the network. */
Test(coll, nvlink_domain_is_one_level)
{
	struct llmsim_gpu dom, node16, node8;
	gpu(&dom);
	dom.gpus_per_node = 4;
	dom.nvlink_domain_gpus = 72;
	gpu(&node16);
	node16.gpus_per_node = 16;
	node16.nvlink_domain_gpus = 0; /* a struct filled without it: the node */
	gpu(&node8);
	struct llmsim_op ar = coll(LLMSIM_COLL_ALLREDUCE, 1e9, 16, 1, LLMSIM_ALGO_AUTO);
	struct llmsim_pred a = predict_ok(&dom, ar), b = predict_ok(&node16, ar);
	expect_close(a.time_s, b.time_s, 1e-12);
	/* on NVLink: no faster than 2(p-1)/p of the buffer at the full link
	 * rate, and within the Simple protocol's 0.80 of it plus latencies */
	double wire = 2.0 * 15 / 16 * 1e9 / 450e9;
	cr_expect_gt(a.time_s, wire);
	cr_expect_lt(a.time_s, 1.5 * wire / 0.80, "%g s: not on the 50 GB/s network", a.time_s);
	/* the same 16 GPUs in one plain 8-GPU node cannot be */
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	cr_expect_neq(llmsim_predict(&node8, &ar, &p, &err), 0);
	cr_expect_str_eq(err.msg, "16 gpus per node exceed the 8 of a h100 NVLink domain");
	/* two domains of 8: reduce-scatter and all-gather inside each (7/8 of
	 * the buffer each way, about the flat ring's 2 x 15/16), and between
	 * them an all-reduce of 1 GB / 8 that sends 2 x 1/2 of it, 125 MB, at
	 * no more than the 50 GB/s network: 2.5 ms on top */
	struct llmsim_pred two = predict_ok(&node8, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 16, 2,
							  LLMSIM_ALGO_AUTO));
	cr_expect_gt(two.time_s, a.time_s + 125e6 / 50e9, "network %g s vs NVLink %g s", two.time_s,
		     a.time_s);
	/* all 72 of the rack in one domain */
	predict_ok(&dom, coll(LLMSIM_COLL_ALLGATHER, 1e9, 72, 1, LLMSIM_ALGO_AUTO));
}
