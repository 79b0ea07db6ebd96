/*
 * test_sim_attention.c - prefill/training attention: FLOP formulas
 * (4*B*H*S*L*D forward, causal about half, flash backward 2.5x, naive
 * backward 2x), FlashAttention-1 HBM traffic ~ N^2 d^2 / M, naive ~ N^2,
 * GQA reading K/V once per K/V head, and the shape and GPU errors.
 * Expected values are worked by hand in the comments.
 */
#include <string.h>

#include "support.h"
#include "test_sim_gpus.h"
#include "sim/sim.h"
#include "sim/sim_internal.h"

static struct llmsim_op attn(enum llmsim_attn_impl impl, int64_t b, int64_t h, int64_t g,
			     int64_t s, int64_t d, int causal, enum llmsim_pass pass)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_ATTENTION, .dtype = LLMSIM_DT_BF16};
	op.u.attn.impl = impl;
	op.u.attn.batch = b, op.u.attn.heads = h, op.u.attn.kv_heads = g;
	op.u.attn.seq = s, op.u.attn.kv_seq = s, op.u.attn.head_dim = d;
	op.u.attn.v_head_dim = d, op.u.attn.causal = causal, op.u.attn.pass = pass;
	return op;
}

static int fails(const struct llmsim_gpu *g, struct llmsim_op op, char *msg)
{
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	int rc = llmsim_predict(g, &op, &p, &err);
	strcpy(msg, err.msg);
	return rc;
}

Test(sim_attention, forward_flops)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	/* 4 * B*H*S*L*D = 4 * 2*16*2048*2048*128 */
	double full = 4.0 * 2 * 16 * 2048 * 2048 * 128;
	for (int i = LLMSIM_ATTN_NAIVE; i <= LLMSIM_ATTN_FLASH3; i++)
		expect_close(predict_ok(&g, attn(i, 2, 16, 16, 2048, 128, 0, LLMSIM_PASS_FWD)).flops, full,
			     1e-12);
	/* causal: S(S+1)/2 of the S^2 (query, key) pairs */
	expect_close(predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 2, 16, 16, 2048, 128, 1, LLMSIM_PASS_FWD)).flops,
		     full * 2049 / 4096, 1e-12);
	expect_close(predict_ok(&g, attn(LLMSIM_ATTN_NAIVE, 2, 16, 16, 2048, 128, 1, LLMSIM_PASS_FWD)).flops,
		     full * 2049 / 4096, 1e-12);
}

Test(sim_attention, backward_flops)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	double fwd = 4.0 * 1 * 8 * 1024 * 1024 * 64;
	/* flash recomputes P: 5 matmuls of the forward's 2 = 2.5x */
	for (int i = LLMSIM_ATTN_FLASH1; i <= LLMSIM_ATTN_FLASH3; i++) {
		expect_close(predict_ok(&g, attn(i, 1, 8, 8, 1024, 64, 0, LLMSIM_PASS_BWD)).flops, 2.5 * fwd,
			     1e-12);
		expect_close(predict_ok(&g, attn(i, 1, 8, 8, 1024, 64, 0, LLMSIM_PASS_FWDBWD)).flops,
			     3.5 * fwd, 1e-12);
	}
	/* naive reads the stored P: 4 matmuls = 2x */
	expect_close(predict_ok(&g, attn(LLMSIM_ATTN_NAIVE, 1, 8, 8, 1024, 64, 0, LLMSIM_PASS_BWD)).flops,
		     2 * fwd, 1e-12);
	cr_expect_eq(predict_ok(&g, attn(LLMSIM_ATTN_NAIVE, 1, 8, 8, 1024, 64, 0, LLMSIM_PASS_BWD)).kernels,
		     5);
}

/* FlashAttention-1 (Dao et al. 2022, Theorem 2): Theta(N^2 d^2 / M) HBM
 * accesses. With B*H = 128 heads, d = 64, N = 8192 -> 16384: ~4x; the
 * same N with twice the SRAM: ~half. (Tiles Bc = ceil(M/4d), Br = min(Bc,
 * d): M = 227 KB / 2 B = 116224 elements -> Bc = 454; doubled, 908. The
 * Q/O term counts ceil(N/64) * ceil(N/Bc) tile pairs: 128*19 -> 256*37
 * (3.9x) and 128*19 -> 128*10 (0.53x).) */
Test(sim_attention, flash1_traffic_scales_as_n2_d2_over_m)
{
	struct llmsim_gpu g, g2;
	test_gpu_h100(&g);
	double b1 = predict_ok(&g, attn(LLMSIM_ATTN_FLASH1, 1, 128, 128, 8192, 64, 0, LLMSIM_PASS_FWD)).hbm_bytes;
	double b2 = predict_ok(&g, attn(LLMSIM_ATTN_FLASH1, 1, 128, 128, 16384, 64, 0, LLMSIM_PASS_FWD)).hbm_bytes;
	expect_close(b2 / b1, 4.0, 0.1);
	g2 = g;
	g2.smem_bytes_per_block_max *= 2;
	g2.smem_bytes_per_sm *= 2;
	double b3 = predict_ok(&g2, attn(LLMSIM_ATTN_FLASH1, 1, 128, 128, 8192, 64, 0, LLMSIM_PASS_FWD)).hbm_bytes;
	expect_close(b3 / b1, 0.5, 0.1);
	/* doubling d at the same N: ~4x (d^2) */
	double b4 = predict_ok(&g, attn(LLMSIM_ATTN_FLASH1, 1, 128, 128, 8192, 128, 0, LLMSIM_PASS_FWD)).hbm_bytes;
	expect_close(b4 / b1, 4.0, 0.15);
	/* parallel over batch*heads only */
	cr_expect_eq(predict_ok(&g, attn(LLMSIM_ATTN_FLASH1, 1, 128, 128, 8192, 64, 0, LLMSIM_PASS_FWD)).blocks,
		     128);
}

/* naive: the S x L scores are written, read and written by the softmax,
 * and read by PV: ~4 S^2 bytes-per-element per head, so 2x S -> ~4x. */
Test(sim_attention, naive_traffic_scales_as_n2)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct llmsim_pred p1 = predict_ok(&g, attn(LLMSIM_ATTN_NAIVE, 1, 16, 16, 4096, 128, 0, LLMSIM_PASS_FWD));
	struct llmsim_pred p2 = predict_ok(&g, attn(LLMSIM_ATTN_NAIVE, 1, 16, 16, 8192, 128, 0, LLMSIM_PASS_FWD));
	expect_close(p2.hbm_bytes / p1.hbm_bytes, 4.0, 0.05);
	/* and at least those 4 passes over the 16 * 4096^2 * 2 B matrix */
	cr_expect(p1.hbm_bytes >= 4.0 * 16 * 4096 * 4096 * 2);
	/* the workspace is the N^2 matrix */
	expect_close(p1.workspace_bytes, 16.0 * 4096 * 4096 * 2, 1e-12);
	cr_expect_eq(p1.kernels, 3);
	/* flash2 moves far less */
	cr_expect(predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 16, 16, 4096, 128, 0, LLMSIM_PASS_FWD)).hbm_bytes <
		  p1.hbm_bytes / 10);
}

/* GQA: FlashAttention-2 reads K/V once per K/V head. B=1, H=32, S=L=4096,
 * D=128: 32 -> 4 K/V heads saves (32-4) * 4096 * (128+128) * 2 B. */
Test(sim_attention, gqa_reads_kv_once_per_group)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	double mha = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 32, 32, 4096, 128, 1, LLMSIM_PASS_FWD)).hbm_bytes;
	double gqa = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 32, 4, 4096, 128, 1, LLMSIM_PASS_FWD)).hbm_bytes;
	expect_close(mha - gqa, 28.0 * 4096 * 256 * 2, 1e-9);
}

Test(sim_attention, causal_about_halves_the_time)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	double t = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 4, 32, 32, 8192, 128, 0, LLMSIM_PASS_FWD)).time_s;
	double tc = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 4, 32, 32, 8192, 128, 1, LLMSIM_PASS_FWD)).time_s;
	cr_expect(tc / t > 0.45 && tc / t < 0.6, "ratio %g", tc / t);
	/* FA3 overlaps softmax with the matmuls: faster than FA2 on Hopper */
	double t3 = predict_ok(&g, attn(LLMSIM_ATTN_FLASH3, 4, 32, 32, 8192, 128, 1, LLMSIM_PASS_FWD)).time_s;
	cr_expect(t3 < tc, "fa3 %g fa2 %g", t3, tc);
	struct llmsim_pred p = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 4, 32, 32, 8192, 128, 1, LLMSIM_PASS_FWD));
	cr_expect_eq(p.bound, LLMSIM_BOUND_TENSOR, "bound %s", llmsim_bound_name(p.bound));
	/* FA2 grid: B*H*ceil(S/128) blocks */
	cr_expect_eq(p.blocks, 4 * 32 * 64);
}

Test(sim_attention, errors)
{
	struct llmsim_gpu g;
	char msg[LLMSIM_ERR_MSG_MAX];
	test_gpu_h100(&g);
	cr_expect_eq(fails(&g, attn(LLMSIM_ATTN_FLASH2, 1, 32, 5, 128, 128, 0, LLMSIM_PASS_FWD), msg),
		     LLMSIM_EINVAL);
	cr_expect_str_eq(msg, "heads (32) must be divisible by kv_heads (5)");
	cr_expect_eq(fails(&g, attn(LLMSIM_ATTN_FLASH2, 0, 32, 32, 128, 128, 0, LLMSIM_PASS_FWD), msg),
		     LLMSIM_EINVAL);
	struct llmsim_op op = attn(LLMSIM_ATTN_FLASH2, 1, 32, 32, 128, 128, 1, LLMSIM_PASS_FWD);
	op.u.attn.kv_seq = 64;
	cr_expect_eq(fails(&g, op, msg), LLMSIM_EINVAL);
	op = attn(LLMSIM_ATTN_FLASH2, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 128, 0, LLMSIM_PASS_FWD);
	cr_expect_eq(fails(&g, op, msg), LLMSIM_EINVAL);
	cr_expect(strstr(msg, "overflow"), "%s", msg);
	op = attn(LLMSIM_ATTN_FLASH2, 1, 32, 32, 128, 128, 0, LLMSIM_PASS_FWD);
	op.dtype = LLMSIM_DT_FP8;
	cr_expect_eq(fails(&g, op, msg), LLMSIM_EUNSUPPORTED);
	op.u.attn.impl = LLMSIM_ATTN_FLASH3;
	cr_expect_eq(fails(&g, op, msg), 0, "%s", msg);
	test_gpu_a100(&g);
	cr_expect_eq(fails(&g, attn(LLMSIM_ATTN_FLASH3, 1, 32, 32, 128, 128, 0, LLMSIM_PASS_FWD), msg),
		     LLMSIM_EUNSUPPORTED);
	cr_expect(strstr(msg, "flash3") && strstr(msg, "Hopper"), "%s", msg);
	cr_expect_eq(fails(&g, attn(LLMSIM_ATTN_FLASH2, 1, 32, 32, 128, 128, 0, LLMSIM_PASS_FWD), msg),
		     0, "%s", msg);
}

/* Wave quantization through a whole prediction: FlashAttention-1 runs one
 * block per (batch, head) and, its tiles filling the SRAM, one block per
 * SM. 132 heads on 132 SMs take one block time; 133 take two. */
Test(sim_attention, flash1_wave_quantization)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct llmsim_pred a = predict_ok(&g, attn(LLMSIM_ATTN_FLASH1, 1, 132, 132, 8192, 128, 0, LLMSIM_PASS_FWD));
	struct llmsim_pred b = predict_ok(&g, attn(LLMSIM_ATTN_FLASH1, 1, 133, 133, 8192, 128, 0, LLMSIM_PASS_FWD));
	cr_expect_eq(a.blocks_per_sm, 1);
	expect_close(a.waves, 1.0, 1e-12);
	expect_close(b.compute_s, 2 * a.compute_s, 1e-9);
	cr_expect(b.time_s > 1.8 * a.time_s, "132 heads %g s, 133 heads %g s", a.time_s, b.time_s);
}

/* FA3 runs the tiles the causal diagonal cuts outside its pipelined
 * mainloop: there the MMAs and the softmax do not overlap. One head of
 * 512 causal tokens, D = 128 on the test H200 (no burst clock given,
 * defaults of gpu_params.h): Br = Bc = 128, q tile i computes i+1 k/v
 * tiles, 1+2+3+4 = 10 pairs of which the 4 on the diagonal are cut:
 * serial share 0.4. Scores 10 * 128 * 128 = 163840; MMA 2 * (128+128)
 * FLOPs each at 989.4e12 * 0.75; vector 4 softmax ops plus Dv/Bc = 1
 * multiply rescaling O, at 67e12 / 2 * 0.80 per second, plus one exp at
 * 132 * 1.98e9 * 16 per second; 4 blocks on 132 SMs run
 * in one round (tail 4/132). compute = max(mm, vec) + 0.4 min(mm, vec)
 * per average block; one block per SM, the kernel waits for the longest,
 * the last q tile's 4 pairs against the average 10 / 4: 1.6 times. */
Test(sim_attention, flash3_causal_diagonal_tiles_run_unpipelined)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p =
		predict_ok(&g, attn(LLMSIM_ATTN_FLASH3, 1, 1, 1, 512, 128, 1, LLMSIM_PASS_FWD));
	double scores = 10.0 * 128 * 128, tail = 4.0 / 132;
	double mm = scores * 2 * 256 / (989.4e12 * 0.75) / tail;
	double vec = (5 * scores / (67e12 / 2 * 0.80) + scores / (132 * 1.98e9 * 16)) / tail;
	cr_assert_eq(p.kernels, 1);
	expect_close(p.compute_s, 1.6 * ((mm > vec ? mm : vec) + 0.4 * (mm < vec ? mm : vec)), 1e-9);
	/* non-causal: no tile is cut, 16 pairs, overlapped */
	p = predict_ok(&g, attn(LLMSIM_ATTN_FLASH3, 1, 1, 1, 512, 128, 0, LLMSIM_PASS_FWD));
	expect_close(p.compute_s, 1.6 * (mm > vec ? mm : vec), 1e-9);
}

/* A FlashAttention-2 backward block loads K, V tiles and writes dK, dV:
 * 2 * Bc * (D + Dv) * 2 B = 131072 B at Bc = 128, D = 128, and loads its
 * first Q, dO tiles with their LSE and Dvec rows: Br = 64 rows of
 * (D + Dv) * 2 + 8 = 520 B, 33280 B; 164352 B in all. Its block
 * (256 threads, 192 registers, 144 KB of shared memory) fits once per
 * SM, so each round of blocks exposes two DRAM latencies and those edge
 * bytes of all resident blocks at 4.8e12 * 0.90 B/s. 4096 tokens, one
 * head: 32 K/V tiles in one round: 2 * 0.5 us + 32 * 164352 B / 4.32e12.
 * The four kernels (PyTorch's dO copy, Dvec, main, dQ convert) each add
 * the default 3 us plus one DRAM latency of fill. */
Test(sim_attention, flash2_backward_block_edges_are_exposed)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p =
		predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 1, 1, 4096, 128, 0, LLMSIM_PASS_BWD));
	cr_assert_eq(p.kernels, 4);
	expect_close(p.overhead_s, 4 * 3.5e-6 + 2 * 5e-7 + 32 * 164352.0 / 4.32e12, 1e-9);
}

/* sfu_overlap: the exps run in the MUFU pipe beside the MMAs, so they
 * cost nothing while their time is below the matrix + FP32 time, and
 * only the excess beyond it when above: max(mm, sfu) instead of the sum */
Test(sim_attention, exps_overlap_the_mmas)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct kern k;
	struct ktime mm, small_ser, small_ov, big_ser, big_ov;
	memset(&k, 0, sizeof k);
	k.threads = 128;
	k.blocks = 132 * 8;
	k.mm_flops = 1e12;
	k.mm_rate_flops_per_s = 989.4e12;
	k.mm_eff = 0.5;
	k.mm_tensor = 1;
	sim_kern_time(&g, &k, &mm);
	/* 1e9 exps at 16 per clock per SM on 132 SMs: ~0.4 ms at most,
	 * below the ~2 ms of 1e12 FLOPs at half the tensor peak */
	k.sfu_ops = 1e9;
	sim_kern_time(&g, &k, &small_ser);
	k.sfu_overlap = 1;
	sim_kern_time(&g, &k, &small_ov);
	cr_assert(small_ser.compute_s > mm.compute_s * 1.05, "in series the exps add");
	expect_close(small_ov.compute_s, mm.compute_s, 1e-12);
	/* 1e11 exps: ~40 ms, far above the MMAs: overlapped, the kernel
	 * takes the exp time, the series sum less the matrix time */
	k.sfu_ops = 1e11;
	k.sfu_overlap = 0;
	sim_kern_time(&g, &k, &big_ser);
	k.sfu_overlap = 1;
	sim_kern_time(&g, &k, &big_ov);
	expect_close(big_ov.compute_s, big_ser.compute_s - mm.compute_s, 1e-9);
}

/* A causal FA2 forward of one block per SM: batch 1, 32 heads, 512
 * tokens, head dim 128: 128-row q tiles, 64-key K/V tiles, 4 q tiles
 * per head, 128 blocks on 132 SMs. Causal, the q tiles see 2, 4, 6 and
 * 8 K/V tiles (5 on average); the kernel waits for the longest, 8, as
 * long as every block of the non-causal kernel (8 tiles each): the same
 * compute time, though it does 5/8 of the work. */
Test(sim_attention, causal_grid_waits_for_its_longest_block)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred c = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 32, 8, 512, 128, 1, LLMSIM_PASS_FWD));
	struct llmsim_pred n = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 32, 8, 512, 128, 0, LLMSIM_PASS_FWD));
	cr_assert_eq(c.blocks, 128);
	expect_close(c.compute_s, n.compute_s, 1e-12);
	/* 64 heads: 256 blocks, two rounds. Non-causal, the busiest SM runs
	 * 2 blocks of 8 tiles: 16. Causal, the SMs share 256 * 5 = 1280
	 * tiles, 1280 / 132 each on average, and the last to finish ends
	 * half a longest block (8 / 2 tiles) after: (1280/132 + 4) / 16 */
	c = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 64, 8, 512, 128, 1, LLMSIM_PASS_FWD));
	n = predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 1, 64, 8, 512, 128, 0, LLMSIM_PASS_FWD));
	expect_close(c.compute_s / n.compute_s, (1280.0 / 132 + 4) / 16, 1e-9);
}

/* PyTorch's FA2 backward: dO made contiguous (a strided copy), dot(dO, O)
 * with the dQ accumulator zeroed, the main kernel, dQ to bf16: 4 kernels,
 * and with grouped K/V one more summing dK, dV per group. cuDNN's
 * backward (flash3) takes dO as it is: 3 kernels. */
Test(sim_attention, backward_kernels)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	cr_assert_eq(predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 4, 32, 32, 2048, 128, 1, LLMSIM_PASS_BWD)).kernels, 4);
	cr_assert_eq(predict_ok(&g, attn(LLMSIM_ATTN_FLASH2, 4, 32, 8, 2048, 128, 1, LLMSIM_PASS_BWD)).kernels, 5);
	cr_assert_eq(predict_ok(&g, attn(LLMSIM_ATTN_FLASH3, 4, 32, 32, 2048, 128, 1, LLMSIM_PASS_BWD)).kernels, 3);
}

/* The naive programs as PyTorch runs them, kernel by kernel (sim/attention.c).
 * Causal, B=1, H=32, G=8, S=L=1024, D=128:
 * - hf_eager: repeat_kv of K and V (2), QK^T, * scaling, + mask, softmax to
 *   fp32, .to(bf16), PV, transpose-contiguous: 9 kernels; the whole S x L is
 *   computed (4 * 32 * 1024^2 * 128 FLOPs), and its FP32 probabilities and
 *   their BF16 cast are the workspace (6 B a score);
 * - sdpa_math: Q, K, V to fp32 (3), Q scaled, the causal mask's 5 passes
 *   over S x L, K and V repeated (2), K^T scaled, QK^T, mask added, softmax,
 *   eq, all, where, PV, two casts back: 21 kernels; its FP32 matmuls run on
 *   the CUDA cores, so it takes over twice the BF16 program's time and over
 *   4x the naive op's (PyTorch measured 6-8x, issue 22);
 * - sdpa_math_bf16: no upcast and no casts back: 16 kernels, BF16 matmuls.
 * Forward only: a backward is refused. */
Test(sim_attention, naive_programs_as_pytorch_runs_them)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred e = predict_ok(&g, attn(LLMSIM_ATTN_HF_EAGER, 1, 32, 8, 1024, 128, 1,
						   LLMSIM_PASS_FWD));
	struct llmsim_pred m = predict_ok(&g, attn(LLMSIM_ATTN_SDPA_MATH, 1, 32, 8, 1024, 128, 1,
						   LLMSIM_PASS_FWD));
	struct llmsim_pred b = predict_ok(&g, attn(LLMSIM_ATTN_SDPA_MATH_BF16, 1, 32, 8, 1024, 128,
						   1, LLMSIM_PASS_FWD));
	struct llmsim_pred n = predict_ok(&g, attn(LLMSIM_ATTN_NAIVE, 1, 32, 8, 1024, 128, 1,
						   LLMSIM_PASS_FWD));
	cr_expect_eq(e.kernels, 9);
	cr_expect_eq(m.kernels, 21);
	cr_expect_eq(b.kernels, 16);
	expect_close(e.flops, 4.0 * 32 * 1024 * 1024 * 128, 1e-12);
	expect_close(m.flops, e.flops, 1e-12);
	expect_close(e.workspace_bytes, 32.0 * 1024 * 1024 * 6, 1e-12);
	/* FP32 SIMT matmuls: several times the BF16 programs, and the naive op */
	cr_expect(m.time_s > 2 * b.time_s, "%g vs %g", m.time_s, b.time_s);
	cr_expect(m.time_s > 4 * n.time_s, "%g vs %g", m.time_s, n.time_s);
	cr_expect(b.time_s > n.time_s && e.time_s > n.time_s);
	char msg[512];
	cr_expect_eq(fails(&g, attn(LLMSIM_ATTN_HF_EAGER, 1, 32, 8, 1024, 128, 1, LLMSIM_PASS_BWD),
			   msg), LLMSIM_EUNSUPPORTED);
	cr_expect(strstr(msg, "hf_eager is priced forward only"), "%s", msg);
}
