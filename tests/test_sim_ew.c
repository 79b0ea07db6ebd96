/*
 * test_sim_ew.c - element-wise ops: bytes per element of what each kernel
 * reads and writes, the HBM-bound time of a large copy, launch/latency
 * bound tiny ops, and shape errors. Worked by hand in the comments
 * (N = tokens * hidden, bf16 = 2 B).
 */
#include <string.h>

#include "support.h"
#include "test_sim_gpus.h"
#include "sim/sim.h"

static struct llmsim_op ew(enum llmsim_ew_kind k, int64_t t, int64_t h, enum llmsim_pass pass)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_ELEMENTWISE, .dtype = LLMSIM_DT_BF16};
	op.u.ew.kind = k, op.u.ew.tokens = t, op.u.ew.hidden = h, op.u.ew.pass = pass;
	return op;
}

/* A copy of 8192 x 8192 bf16 reads and writes 134217728 B each. It is HBM
 * bound: 268435456 B at 4.8 TB/s * 0.90, plus the fixed 3 us per kernel
 * and one DRAM latency (0.5 us) of pipeline fill. (A sharp knee, q = 64,
 * keeps its window-of-loads time, far below, from adding to it: the knee
 * has its own test.) */
Test(sim_ew, large_copy_is_hbm_bound)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.param[LLMSIM_PARAM_HBM_QUEUE_EXPONENT] = 64;
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_COPY, 8192, 8192, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, 134217728.0, 1e-12);
	expect_close(p.hbm_write_bytes, 134217728.0, 1e-12);
	cr_expect_eq(p.bound, LLMSIM_BOUND_HBM);
	expect_close(p.time_s, 268435456.0 / (4.8e12 * 0.90) + 3e-6 + 5e-7, 1e-9);
}

Test(sim_ew, bytes_per_element)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	double T = 4096, H = 8192, N = T * H;
	/* rmsnorm fwd: x and the weight in; y and one fp32 rstd per row out */
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_RMSNORM, 4096, 8192, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, N * 2 + H * 2, 1e-12);
	expect_close(p.hbm_write_bytes, N * 2 + T * 4, 1e-12);
	cr_expect_eq(p.blocks, 4096); /* one block per row */
	/* mul bwd: dy, a, b in; da, db out */
	p = predict_ok(&g, ew(LLMSIM_EW_MUL, 4096, 8192, LLMSIM_PASS_BWD));
	expect_close(p.hbm_read_bytes, 3 * N * 2, 1e-12);
	expect_close(p.hbm_write_bytes, 2 * N * 2, 1e-12);
	/* silu_mul fwd: gate and up in, one out */
	p = predict_ok(&g, ew(LLMSIM_EW_SILU_MUL, 4096, 8192, LLMSIM_PASS_FWD));
	expect_close(p.hbm_bytes, 3 * N * 2, 1e-12);
	/* fused cross-entropy reads the logits once: [4096, 128256] bf16 and
	 * int64 targets; writes fp32 loss and lse per row */
	p = predict_ok(&g, ew(LLMSIM_EW_CROSS_ENTROPY, 4096, 128256, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, 4096.0 * 128256 * 2 + 4096 * 8, 1e-12);
	expect_close(p.hbm_write_bytes, 4096.0 * 8, 1e-12);
	/* fwd + bwd = two kernels and the sum of their bytes */
	double f = predict_ok(&g, ew(LLMSIM_EW_LAYERNORM, 4096, 8192, LLMSIM_PASS_FWD)).hbm_bytes;
	double b = predict_ok(&g, ew(LLMSIM_EW_LAYERNORM, 4096, 8192, LLMSIM_PASS_BWD)).hbm_bytes;
	p = predict_ok(&g, ew(LLMSIM_EW_LAYERNORM, 4096, 8192, LLMSIM_PASS_FWDBWD));
	expect_close(p.hbm_bytes, f + b, 1e-12);
	cr_expect_eq(p.kernels, 2);
}

/* AdamW on 1e6 bf16 parameters: per parameter read fp32 master, m, v (12
 * B) and the bf16 grad (2 B); write master, m, v and the bf16 weight: 28
 * B per parameter. */
Test(sim_ew, adamw_bytes_per_param)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_ADAMW, 1, 1000000, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, 14e6, 1e-12);
	expect_close(p.hbm_write_bytes, 14e6, 1e-12);
	/* fp32 grads and weights: 32 B per parameter */
	struct llmsim_op op = ew(LLMSIM_EW_ADAMW, 1, 1000000, LLMSIM_PASS_FWD);
	op.dtype = LLMSIM_DT_FP32;
	expect_close(predict_ok(&g, op).hbm_bytes, 32e6, 1e-12);
}

Test(sim_ew, tiny_ops_are_launch_or_latency_bound)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	/* one row of 4096: 16 KB in, far below a microsecond of bandwidth */
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_RMSNORM, 1, 4096, LLMSIM_PASS_FWD));
	cr_expect(p.bound == LLMSIM_BOUND_LAUNCH || p.bound == LLMSIM_BOUND_LATENCY, "bound %s",
		  llmsim_bound_name(p.bound));
	cr_expect(p.time_s >= 3e-6 && p.time_s < 10e-6, "time %g", p.time_s);
	cr_expect_eq(p.blocks, 1);
	/* a few long rows: 8 rows of 2 M -> 8 blocks of 1024 threads with 64
	 * B in flight each: 512 KB per 0.5 us = 1 TB/s, below HBM's 4.3:
	 * latency bound (the FP32 work, 4 ops per element on 8 of 132 SMs,
	 * takes 2/3 of that) */
	p = predict_ok(&g, ew(LLMSIM_EW_RMSNORM, 8, 1 << 21, LLMSIM_PASS_FWD));
	cr_expect_eq(p.bound, LLMSIM_BOUND_LATENCY, "bound %s", llmsim_bound_name(p.bound));
	/* the same rows' cross-entropy needs one exp per element on those 8
	 * SMs' special-function units (16 per clock each): vector bound */
	p = predict_ok(&g, ew(LLMSIM_EW_CROSS_ENTROPY, 8, 1 << 21, LLMSIM_PASS_FWD));
	cr_expect_eq(p.bound, LLMSIM_BOUND_VECTOR, "bound %s", llmsim_bound_name(p.bound));
}

Test(sim_ew, errors)
{
	struct llmsim_gpu g;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	test_gpu_h200(&g);
	struct llmsim_op op = ew(LLMSIM_EW_ADD, 0, 8192, LLMSIM_PASS_FWD);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "tokens (0)"), "%s", err.msg);
	op = ew(LLMSIM_EW_ADD, 1LL << 40, 1LL << 30, LLMSIM_PASS_FWD);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	op = ew(LLMSIM_EW_COUNT, 1, 1, LLMSIM_PASS_FWD);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
}

/* A softmax row longer than half an SM's register file in fp32 (65536
 * registers / 2 = 32768 elements) cannot stay on chip in llmsim's own
 * kernel (serial=1): the row is read a second time to write the
 * normalized output, priced from DRAM as fitted. PyTorch's softmax reads a
 * row once when a warp, its registers (under 10 elements a thread) or 48
 * KiB of shared memory hold it, else three times (max, sum of exps,
 * write); the re-reads come from L2 as far as the rows in flight (one a
 * block of 1024 threads at 40 registers: 1 block an SM) fit its reusable part, and from
 * DRAM past that (the calibration H200 read the logits once from DRAM for
 * 64 rows of 128,256 bf16 (16 MB), but 3x for 2048 rows:
 * calib/data/h200-2026-12-01/runner_counters.tsv). A fused cross-entropy
 * forward writes no normalized row: one online pass. */
static struct llmsim_op serial(struct llmsim_op op)
{
	op.u.ew.serial = 1;
	return op;
}

Test(sim_ew, long_softmax_rows_are_read_again)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.registers_per_sm = 65536;
	double N = 2048.0 * 128256, N64 = 64.0 * 128256;
	struct llmsim_pred p =
		predict_ok(&g, serial(ew(LLMSIM_EW_SOFTMAX, 2048, 128256, LLMSIM_PASS_FWD)));
	expect_close(p.hbm_read_bytes, 2 * N * 2, 1e-12);
	expect_close(p.hbm_write_bytes, N * 2, 1e-12);
	p = predict_ok(&g, serial(ew(LLMSIM_EW_SOFTMAX, 64, 4096, LLMSIM_PASS_FWD)));
	expect_close(p.hbm_read_bytes, 64.0 * 4096 * 2, 1e-12);
	/* PyTorch's (serial=0): three reads of a row no buffer holds */
	double cap = g.l2_bytes * g.param[LLMSIM_PARAM_L2_REUSE_FRACTION];
	double ws = g.sms * 1 * 128256.0 * 2;
	p = predict_ok(&g, ew(LLMSIM_EW_SOFTMAX, 2048, 128256, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, N * 2 + 2 * N * 2 * (1 - cap / ws), 1e-12);
	p = predict_ok(&g, ew(LLMSIM_EW_SOFTMAX, 64, 128256, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, N64 * 2, 1e-12); /* 64 rows fit: L2 hits */
	/* 16384 bf16 (32 KiB) fits its shared memory, 4096 its registers */
	p = predict_ok(&g, ew(LLMSIM_EW_SOFTMAX, 2048, 16384, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, 2048.0 * 16384 * 2, 1e-12);
	p = predict_ok(&g, ew(LLMSIM_EW_SOFTMAX, 2048, 4096, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, 2048.0 * 4096 * 2, 1e-12);
	p = predict_ok(&g, ew(LLMSIM_EW_CROSS_ENTROPY, 64, 128256, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, N64 * 2 + 64 * 8, 1e-12);
}

/* PyTorch's layer and RMS norms read a row twice (statistics, then the
 * normalizing loop): from L2 while the rows of the blocks in flight fit
 * it, from DRAM past that. 4096 rows of 128,256 bf16 (4 warps a block,
 * 12 blocks an SM at 40 registers a thread: 1584 rows of 256 KB in
 * flight, against the L2's
 * reusable part); softmax(dtype=float32) writes fp32. */
Test(sim_ew, torch_norms_read_wide_rows_twice)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	double N = 4096.0 * 128256, H = 128256;
	double cap = g.l2_bytes * g.param[LLMSIM_PARAM_L2_REUSE_FRACTION];
	double ws = g.sms * 12 * H * 2;
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_RMSNORM, 4096, 128256, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, N * 2 * (2 - cap / ws) + H * 2, 1e-12);
	struct llmsim_op op = ew(LLMSIM_EW_SOFTMAX, 64, 4096, LLMSIM_PASS_FWD);
	op.u.ew.out_dtype = LLMSIM_DT_FP32;
	p = predict_ok(&g, op);
	expect_close(p.hbm_write_bytes, 64.0 * 4096 * 4, 1e-12);
}

/* A grid-stride kernel of one vector per thread and step (serial=1, as
 * kernels/ew.cu) loads, computes and stores in turn: its CUDA-core and exp
 * time adds to its memory time. GELU over 8192 x 8192 bf16 (N = 67108864):
 * 2N * 2 B at 4.8e12 * 0.90 B/s; 8 FP32 ops per element at one per lane
 * per clock (67e12 / 2) * 0.80 and one tanh at 132 SMs * 1.98e9 * 16 per
 * second issue on separate pipes, so the longer of the two counts (8 N /
 * 26.8e12 = 20.0 us against N / 4.18e12 = 16.1 us: the FP32 ops), over
 * 8192 blocks in ceil(8192/132) = 63 rounds (tail 8192 / (132 * 63)); the
 * default 3 us plus one DRAM latency of fill. A framework's kernel (four
 * vectors loaded before any math, serial=0) hides the math under the
 * other warps' loads: the memory time alone. */
Test(sim_ew, streaming_math_adds_to_memory_time)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.param[LLMSIM_PARAM_HBM_QUEUE_EXPONENT] = 64; /* as large_copy_is_hbm_bound */
	double N = 8192.0 * 8192, tail = 8192.0 / (132 * 63);
	struct llmsim_op op = ew(LLMSIM_EW_GELU, 8192, 8192, LLMSIM_PASS_FWD);
	op.u.ew.serial = 1;
	struct llmsim_pred p = predict_ok(&g, op);
	double mem = 2 * N * 2 / (4.8e12 * 0.90);
	double math = 8 * N / (67e12 / 2 * 0.80) / tail;
	cr_expect_eq(p.blocks, 8192);
	expect_close(p.time_s, mem + math + 3e-6 + 5e-7, 1e-9);
	cr_expect_eq(p.bound, LLMSIM_BOUND_HBM, "bound %s", llmsim_bound_name(p.bound));
	p = predict_ok(&g, ew(LLMSIM_EW_GELU, 8192, 8192, LLMSIM_PASS_FWD));
	expect_close(p.time_s, mem + 3e-6 + 5e-7, 1e-9);
}

/* The non-vectorized path of strided views: same bytes as the vectorized
 * kernel, plus 24 int32 index instructions per element (the default of
 * strided_index_ops_per_element), which run on half the FP32 lanes: 48
 * "vec" ops per element at one op per lane per clock, i.e. at half the
 * FP32 FLOP rate times vector_fraction. For 8192 x 8192 bf16 multiplies
 * that is 67108864 * 48 / (67e12 / 2 * vector_fraction) on the test GPU, above the
 * 402653184 B of HBM traffic, so the kernel turns compute-bound. */
Test(sim_ew, strided_views_pay_index_math)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_op op = ew(LLMSIM_EW_MUL, 8192, 8192, LLMSIM_PASS_FWD);
	struct llmsim_pred v = predict_ok(&g, op);
	op.u.ew.strided = 1;
	struct llmsim_pred s = predict_ok(&g, op);
	expect_close(s.hbm_bytes, v.hbm_bytes, 1e-12);
	double idx_s = 67108864.0 * 48 / (g.vector_flops_per_s[LLMSIM_DT_FP32] / 2 *
					   g.param[LLMSIM_PARAM_VECTOR_FRACTION]);
	cr_expect_geq(s.compute_s, idx_s * (1 - 1e-9), "compute %g s, index math alone %g s",
		      s.compute_s, idx_s);
	cr_expect_gt(s.time_s, v.time_s);
	cr_expect_eq(s.bound, LLMSIM_BOUND_VECTOR);
	/* the spec carries it, and reads back */
	char spec[256];
	llmsim_op_format(&op, spec, sizeof spec);
	cr_expect(strstr(spec, " strided=1") != NULL, "%s", spec);
	struct llmsim_op back;
	cr_assert_eq(llmsim_op_parse(spec, &back, NULL), 0);
	cr_expect_eq(back.u.ew.strided, 1);
}

/* The calibration streams (sim/stream.c), by hand on the test H100 (50 MB
 * L2, l2_reuse_fraction 0.5: 25 MB keep a re-run's arrays): a 100 MB
 * working set re-run "in L2" finds a quarter of it there; the first DRAM
 * round trip, the other 75 MB from HBM at hbm_fraction and the 25 MB at
 * the L2's rate x l2_fraction add to the kernel overhead. A launch is the
 * overhead alone; shared memory streams over all SMs. */
Test(sim_stream, microbenchmarks_by_hand)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	const double *e = g.param;
	struct llmsim_op op = {.kind = LLMSIM_OP_STREAM, .dtype = LLMSIM_DT_FP32};
	op.u.stream.kind = LLMSIM_STREAM_L2;
	op.u.stream.bytes = 100e6;
	struct llmsim_pred p = predict_ok(&g, op);
	double want = e[LLMSIM_PARAM_KERNEL_OVERHEAD_S] + g.hbm_latency_s +
		      75e6 / (g.hbm_bytes_per_s * e[LLMSIM_PARAM_HBM_FRACTION]) +
		      25e6 / (g.l2_bytes_per_s * e[LLMSIM_PARAM_L2_FRACTION]);
	expect_close(p.time_s, want, 1e-12);
	expect_close(p.hbm_bytes, 75e6, 1e-12);
	expect_close(p.l2_bytes, 25e6, 1e-12);
	cr_expect_str_eq(p.op_class, "l2");
	op.u.stream.kind = LLMSIM_STREAM_LAUNCH;
	p = predict_ok(&g, op);
	expect_close(p.time_s, e[LLMSIM_PARAM_KERNEL_OVERHEAD_S], 1e-12);
	cr_expect_str_eq(p.op_class, "launch");
	op.u.stream.kind = LLMSIM_STREAM_SMEM;
	op.u.stream.bytes = 1e9;
	p = predict_ok(&g, op);
	expect_close(p.time_s,
		     e[LLMSIM_PARAM_KERNEL_OVERHEAD_S] +
			     1e9 / (g.sms * g.smem_bytes_per_s_per_sm *
				    e[LLMSIM_PARAM_SMEM_FRACTION]),
		     1e-12);
	/* its spec reads back */
	char spec[128];
	llmsim_op_format(&op, spec, sizeof spec);
	cr_expect_str_eq(spec, "stream kind=smem bytes=1000000000 dtype=fp32");
	struct llmsim_op back;
	cr_assert_eq(llmsim_op_parse(spec, &back, NULL), 0);
	cr_expect(back.kind == LLMSIM_OP_STREAM && back.u.stream.kind == LLMSIM_STREAM_SMEM &&
		  back.u.stream.bytes == 1e9);
}

/* The ops of a PyTorch MoE layer and of HF's norms, by hand
 * (N = tokens * hidden, bf16 = 2 B, int64 ids 8 B). */
Test(sim_ew, routing_and_cast_bytes)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	double T = 16384, H = 4096, N = T * H;
	/* index_select of 16384 rows: the ids and the rows in, the rows out */
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_GATHER, 16384, 4096, LLMSIM_PASS_FWD));
	expect_close(p.hbm_read_bytes, T * 8 + N * 2, 1e-12);
	expect_close(p.hbm_write_bytes, N * 2, 1e-12);
	/* a cast bf16 -> fp32 reads 2 B and writes 4 B per element */
	struct llmsim_op c = ew(LLMSIM_EW_COPY, 16384, 4096, LLMSIM_PASS_FWD);
	c.u.ew.out_dtype = LLMSIM_DT_FP32;
	p = predict_ok(&g, c);
	expect_close(p.hbm_read_bytes, N * 2, 1e-12);
	expect_close(p.hbm_write_bytes, N * 4, 1e-12);
	/* a multiply by a broadcast [tokens, 1] scale reads one operand */
	struct llmsim_op m = ew(LLMSIM_EW_MUL, 16384, 4096, LLMSIM_PASS_FWD);
	m.u.ew.bcast = 1;
	expect_close(predict_ok(&g, m).hbm_read_bytes, N * 2, 1e-12);
	/* a row mean: the row in, one value out per row, a block per row */
	p = predict_ok(&g, ew(LLMSIM_EW_REDUCE, 16384, 4096, LLMSIM_PASS_FWD));
	expect_close(p.hbm_write_bytes, T * 2, 1e-12);
	cr_expect_eq(p.blocks, 16384);
	/* topk: a select kernel, then a sort of each row's k results */
	struct llmsim_op k = ew(LLMSIM_EW_TOPK, 512, 128, LLMSIM_PASS_FWD);
	k.u.ew.k = 8;
	p = predict_ok(&g, k);
	cr_expect_eq(p.kernels, 2);
	expect_close(p.hbm_read_bytes, 512.0 * 128 * 2 + 512.0 * 8 * 2, 1e-12);
}

/* index_add_ of 16384 x 4096 rows: 67108864 atomic adds at the file's
 * default 1.2e11 per second take 559.2 us, more than its 0.27 GB of bytes
 * (57 us at 4.8 TB/s): the L2's atomics bound it. */
Test(sim_ew, scatter_add_is_bound_by_l2_atomics)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, ew(LLMSIM_EW_SCATTER_ADD, 16384, 4096, LLMSIM_PASS_FWD));
	cr_expect_eq(p.bound, LLMSIM_BOUND_L2);
	cr_expect_geq(p.time_s, 16384.0 * 4096 / 1.2e11);
	cr_expect_lt(p.time_s, 16384.0 * 4096 / 1.2e11 * 1.05);
}

/* Bad shapes of the new kinds get one line each. */
Test(sim_ew, routing_shape_errors)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	struct llmsim_op k = ew(LLMSIM_EW_TOPK, 4, 8, LLMSIM_PASS_FWD);
	k.u.ew.k = 9;
	cr_expect_neq(llmsim_predict(&g, &k, &p, &err), 0);
	cr_expect(strstr(err.msg, "k (9)") != NULL, "%s", err.msg);
	struct llmsim_op b = ew(LLMSIM_EW_SILU, 4, 8, LLMSIM_PASS_FWD);
	b.u.ew.bcast = 1;
	cr_expect_neq(llmsim_predict(&g, &b, &p, &err), 0);
	struct llmsim_op c = ew(LLMSIM_EW_ADD, 4, 8, LLMSIM_PASS_FWD);
	c.u.ew.out_dtype = LLMSIM_DT_FP32;
	cr_expect_neq(llmsim_predict(&g, &c, &p, &err), 0);
	cr_expect(strstr(err.msg, "out_dtype") != NULL, "%s", err.msg);
}
