/*
 * test_sim_coll.c - collectives: ring and tree all-reduce times from the
 * formula worked by hand, auto choosing the faster, hierarchical
 * multi-node all-reduce, and errors. Test H100: NVLink 450 GB/s each way,
 * 3 us link latency; network 50 GB/s, 5 us; defaults: Simple protocol
 * 0.80 of link bandwidth and 8 us per step, LL protocol 0.35 and 1.5 us
 * per step, 5 us fixed per collective, 16 channels at most
 * (hw/eff_params.h). Auto takes the cheapest of ring/tree x Simple/LL.
 * NCCL gives a channel at least 512 threads x 8 B (LL) or x 64 B (Simple)
 * of each rank's share, and a channel carries 1/16 of the bandwidth.
 */
#include <string.h>

#include "support.h"
#include "test_sim_gpus.h"
#include "../sim/sim.h"

static struct llmsim_op coll(enum llmsim_coll_kind k, double bytes, int gpus, int nodes,
			     enum llmsim_coll_algo algo)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_COLLECTIVE, .dtype = LLMSIM_DT_BF16};
	op.u.coll.kind = k, op.u.coll.bytes = bytes, op.u.coll.gpus = gpus;
	op.u.coll.nodes = nodes, op.u.coll.algo = algo;
	return op;
}

static struct llmsim_pred ok(const struct llmsim_gpu *g, struct llmsim_op op)
{
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_predict(g, &op, &p, &err), 0, "predict: %s", err.msg);
	return p;
}

#define BW (450e9 * 0.80)
#define STEP (3e-6 + 8e-6)
#define BW_LL (450e9 * 0.35)
#define STEP_LL (3e-6 + 1.5e-6)
#define FIXED 5e-6
#define CHANNELS 16.0

Test(sim_coll, ring_allreduce)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	/* 8 ranks, 1 GB: 2*7 steps, each rank sends 2*7/8 GB */
	struct llmsim_pred p = ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 8, 1, LLMSIM_ALGO_RING));
	expect_close(p.link_bytes, 1.75e9, 1e-12);
	expect_close(p.time_s, 1.75e9 / BW + 14 * STEP + FIXED, 1e-9);
	cr_expect_eq(p.bound, LLMSIM_BOUND_LINK);
	/* tree: 2*log2(8) = 6 steps, 2 GB sent per rank */
	p = ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 8, 1, LLMSIM_ALGO_TREE));
	expect_close(p.time_s, 2e9 / BW + 6 * STEP + FIXED, 1e-9);
	/* auto: ring for the large buffer */
	expect_close(ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e9, 8, 1, LLMSIM_ALGO_AUTO)).time_s,
		     1.75e9 / BW + 14 * STEP + FIXED, 1e-9);
	/* auto: tree with the LL protocol for 1 KB, latency bound: 6 LL steps
	 * (27 us) beat 6 Simple steps (66 us) and 14 LL ring steps (63 us);
	 * each rank's 125 B share is one LL channel of 16 */
	p = ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1e3, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, 2e3 / (BW_LL / CHANNELS) + 6 * STEP_LL + FIXED, 1e-9);
	cr_expect_eq(p.bound, LLMSIM_BOUND_LATENCY);
}

/* Mid-size collectives run on fewer channels: 2 ranks, ring all-reduce
 * (2 steps, each rank sends the whole buffer). 64 KiB: each rank's 32 KiB
 * share is 8 LL channels (4 KiB each) of 16, so LL moves it at half its
 * bandwidth: 9 us of steps + 0.83 us beats Simple's 22 us of steps. 1 MiB:
 * 512 KiB shares fill all 16 channels; 16x the bytes, 8x the transfer. */
Test(sim_coll, channels_ramp_with_size)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct llmsim_pred p = ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 65536, 2, 1, LLMSIM_ALGO_RING));
	expect_close(p.time_s, 65536 / (BW_LL * 8 / CHANNELS) + 2 * STEP_LL + FIXED, 1e-9);
	p = ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1048576, 2, 1, LLMSIM_ALGO_RING));
	expect_close(p.time_s, 1048576 / BW_LL + 2 * STEP_LL + FIXED, 1e-9);
}

Test(sim_coll, gather_scatter_alltoall_sendrecv)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	/* all-gather of an 800 MB output over 8 ranks: 7 steps, 7/8 sent */
	struct llmsim_pred p = ok(&g, coll(LLMSIM_COLL_ALLGATHER, 8e8, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.link_bytes, 7e8, 1e-12);
	expect_close(p.time_s, 7e8 / BW + 7 * STEP + FIXED, 1e-9);
	p = ok(&g, coll(LLMSIM_COLL_REDUCESCATTER, 8e8, 8, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, 7e8 / BW + 7 * STEP + FIXED, 1e-9);
	p = ok(&g, coll(LLMSIM_COLL_SENDRECV, 1e8, 2, 1, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, 1e8 / BW + STEP + FIXED, 1e-9);
	/* across nodes: the network */
	p = ok(&g, coll(LLMSIM_COLL_SENDRECV, 1e8, 2, 2, LLMSIM_ALGO_AUTO));
	expect_close(p.time_s, 1e8 / (50e9 * 0.8) + (5e-6 + 8e-6) + FIXED, 1e-9);
}

/* 16 ranks on 2 nodes, 1.6 GB, ring: reduce-scatter in the node (7 steps,
 * 7/8 * 1.6 GB), all-reduce of 1.6/8 = 0.2 GB between the 2 nodes (2
 * steps, 2 * 1/2 * 0.2 GB at 50 GB/s * 0.8), all-gather in the node. */
Test(sim_coll, hierarchical_allreduce)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct llmsim_pred p = ok(&g, coll(LLMSIM_COLL_ALLREDUCE, 1.6e9, 16, 2, LLMSIM_ALGO_RING));
	double bw = 2 * 1.4e9 / BW + 2e8 / (50e9 * 0.8);
	double lat = 14 * STEP + 2 * (5e-6 + 8e-6);
	expect_close(p.time_s, bw + lat + FIXED, 1e-9);
	expect_close(p.link_bytes, 2 * 1.4e9 + 2e8, 1e-12);
}

Test(sim_coll, errors)
{
	struct llmsim_gpu g;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	test_gpu_h100(&g);
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
	/* one rank: nothing moves */
	op = coll(LLMSIM_COLL_ALLREDUCE, 1e6, 1, 1, LLMSIM_ALGO_AUTO);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), 0);
	cr_expect_eq(p.time_s, 0);
}
