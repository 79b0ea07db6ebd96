/*
 * test_sim_gemm.c - the GEMM cost description and the kernel timing model
 * it shares: FLOPs, weight-bandwidth bound of small m, tensor bound of
 * large m, split-K, weight-only quantization, dtype support, shape
 * errors, the occupancy calculator and wave quantization. Expected values
 * are derived by hand in the comments from the test GPUs' published
 * figures (test_sim_gpus.h) and the gpu_params.h defaults.
 */
#include <string.h>

#include "support.h"
#include "test_sim_gpus.h"
#include "sim/sim.h"
#include "sim/sim_internal.h"

static struct llmsim_op gemm(int64_t m, int64_t n, int64_t k, enum llmsim_dtype dt)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = dt};
	op.u.gemm.m = m, op.u.gemm.n = n, op.u.gemm.k = k, op.u.gemm.batch = 1;
	op.u.gemm.b_dtype = dt;
	return op;
}

Test(sim_gemm, flops_are_2mnk)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	/* 2 * 4096^3 */
	expect_close(predict_ok(&g, gemm(4096, 4096, 4096, LLMSIM_DT_BF16)).flops,
		     137438953472.0, 1e-12);
	/* batched: 2 * 128 * 256 * 512 * 3 */
	struct llmsim_op op = gemm(128, 256, 512, LLMSIM_DT_BF16);
	op.u.gemm.batch = 3;
	expect_close(predict_ok(&g, op).flops, 100663296.0, 1e-12);
}

Test(sim_gemm, decode_gemm_reads_the_weights_once_and_is_hbm_bound)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(1, 8192, 8192, LLMSIM_DT_BF16));
	/* weights 8192*8192*2 B, A 8192*2 B, C 8192*2 B */
	expect_close(p.hbm_bytes, 134217728.0 + 16384 + 16384, 0.01);
	cr_expect_eq(p.bound, LLMSIM_BOUND_HBM, "bound %s", llmsim_bound_name(p.bound));
	/* no faster than the weights at peak HBM bandwidth: 134 MB / 4.8 TB/s */
	cr_expect(p.time_s > 134217728.0 / 4.8e12);
	cr_expect(p.intensity_flops_per_byte < 2);
}

Test(sim_gemm, large_gemm_is_tensor_bound)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_BF16));
	cr_expect_eq(p.bound, LLMSIM_BOUND_TENSOR, "bound %s", llmsim_bound_name(p.bound));
	/* at best the sustained tensor rate: 2*8192^3 / (989.4e12 * 0.80) */
	cr_expect(p.time_s >= 1099511627776.0 / (989.4e12 * 0.80));
	cr_expect(p.time_s < 1.3 * 1099511627776.0 / (989.4e12 * 0.80));
	cr_expect(p.tile_m >= 128 && p.tile_n >= 128, "tile %dx%d", p.tile_m, p.tile_n);
	cr_expect_eq(p.split_k, 1);
}

/* Under a tensor-bound kernel the H200 holds ~1670 MHz (its burst clock)
 * against the 1830 MHz its tensor peaks are quoted at: the tensor-bound part of a large
 * GEMM, compute_s = padded FLOPs / (peak * fraction) / tail, grows by
 * exactly 1830 / 1670 when the clocks are given (nothing else in the
 * 8192^3 GEMM depends on the tensor rate but the fill, a few us of ~1.4
 * ms, so time_s grows by about that factor too). */
Test(sim_gemm, tensor_peak_at_the_burst_clock)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred a = predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_BF16));
	g.tensor_clock_hz = 1.83e9;
	g.burst_clock_hz = 1.67e9;
	struct llmsim_pred b = predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_BF16));
	cr_expect_eq(a.tile_m * 1000 + a.tile_n, b.tile_m * 1000 + b.tile_n);
	expect_close(b.compute_s / a.compute_s, 1.83 / 1.67, 1e-9);
	expect_close(b.time_s / a.time_s, 1.83 / 1.67, 0.01);
	/* a burst clock above the quoted one does not raise the peak */
	g.burst_clock_hz = 1.98e9;
	expect_close(predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_BF16)).compute_s,
		     a.compute_s, 1e-12);
}

/* FP8 on Hopper: cuBLAS without fast accumulation adds the tensor cores'
 * partial sums into FP32 registers every 128 of k (CUTLASS 2xAcc,
 * promotion every 4 wgmma k-steps of 32), while the other consumer
 * warpgroup's MMAs keep the tensor pipe busy. 8192^3 fp8 on the H100 runs
 * 128 x 192 tiles: 64 x 43 = 2752 tiles, 21 rounds on 132 SMs, 2772 tile
 * slots, each 2 * 128 * 192 * 8192 FLOPs at 1978.9e12 * 0.80 per second
 * (0.7050 ms), and 128 * 192 * 8192 / 128 FP32 adds at 67e12 / 2 * 0.80 per
 * second (0.1627 ms) hidden under them: the compute time is the MMAs'. On
 * an Ampere-style part without warp specialization (sm_80) they would add.
 * INT8 accumulates in int32 exactly: no promotion, the same tiles. */
Test(sim_gemm, fp8_promotes_its_accumulators)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_FP8));
	cr_assert(p.tile_m == 128 && p.tile_n == 192 && p.split_k == 1, "tile %dx%d split %d",
		  p.tile_m, p.tile_n, p.split_k);
	double mm = 2772 * 2.0 * 128 * 192 * 8192 / (1978.9e12 * 0.80);
	double vec = 2772 * 128.0 * 192 * 64 / (67e12 / 2 * 0.80);
	expect_close(mm, 0.7050e-3, 1e-4);
	expect_close(vec, 0.1627e-3, 1e-3);
	expect_close(p.compute_s, mm, 1e-9);
	p = predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_INT8));
	cr_assert(p.tile_m == 128 && p.tile_n == 192, "tile %dx%d", p.tile_m, p.tile_n);
	expect_close(p.compute_s, mm, 1e-9);
}

Test(sim_gemm, bound_moves_from_hbm_to_tensor_as_m_grows)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	cr_expect_eq(predict_ok(&g, gemm(1, 8192, 8192, LLMSIM_DT_BF16)).bound, LLMSIM_BOUND_HBM);
	cr_expect_eq(predict_ok(&g, gemm(8192, 8192, 8192, LLMSIM_DT_BF16)).bound,
		     LLMSIM_BOUND_TENSOR);
	/* the weight read is shared: 1..16 rows cost about the same */
	double t1 = predict_ok(&g, gemm(1, 8192, 8192, LLMSIM_DT_BF16)).time_s;
	double t16 = predict_ok(&g, gemm(16, 8192, 8192, LLMSIM_DT_BF16)).time_s;
	cr_expect(t16 < 1.2 * t1, "t1 %g t16 %g", t1, t16);
}

Test(sim_gemm, small_mn_splits_k_with_a_reduction)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	/* 64 x 1024 gives at most 16 tiles of 64x64 on 132 SMs: split 8 ways
	 * they fill 128 SMs in one round (9 ways would take two) */
	struct llmsim_pred p = predict_ok(&g, gemm(64, 1024, 16384, LLMSIM_DT_BF16));
	cr_expect_eq(p.split_k, 8);
	cr_expect_eq(p.kernels, 2);
	/* fp32 partials: 8 * 64 * 1024 * 4 bytes, 2 MiB */
	expect_close(p.workspace_bytes, 2097152.0, 1e-12);
}

Test(sim_gemm, int4_weights_read_a_quarter_of_bf16)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_op op = gemm(1, 8192, 8192, LLMSIM_DT_BF16);
	op.u.gemm.b_dtype = LLMSIM_DT_INT4;
	struct llmsim_pred q = predict_ok(&g, op);
	struct llmsim_pred b = predict_ok(&g, gemm(1, 8192, 8192, LLMSIM_DT_BF16));
	/* 8192*8192*0.5 B of weights, plus A and C (16 KB each) */
	expect_close(q.hbm_bytes, 33554432.0 + 32768, 0.02);
	cr_expect(q.time_s < b.time_s / 2, "int4 %g bf16 %g", q.time_s, b.time_s);
	/* math at bf16: same FLOPs */
	expect_close(q.flops, b.flops, 1e-12);
}

Test(sim_gemm, fp32_runs_on_cuda_cores)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(4096, 4096, 4096, LLMSIM_DT_FP32));
	cr_expect_eq(p.bound, LLMSIM_BOUND_VECTOR, "bound %s", llmsim_bound_name(p.bound));
	/* at least 2*4096^3 / (67e12 * 0.80) */
	cr_expect(p.time_s >= 137438953472.0 / (67e12 * 0.80));
	/* tf32 on tensor cores is faster */
	cr_expect(predict_ok(&g, gemm(4096, 4096, 4096, LLMSIM_DT_TF32)).time_s < p.time_s);
}

Test(sim_gemm, errors)
{
	struct llmsim_gpu g;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	test_gpu_a100(&g);
	struct llmsim_op op = gemm(1024, 1024, 1024, LLMSIM_DT_FP8);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EUNSUPPORTED);
	cr_expect(strstr(err.msg, "fp8") && strstr(err.msg, "a100"), "msg: %s", err.msg);
	op = gemm(0, 1024, 1024, LLMSIM_DT_BF16);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "m=0"), "msg: %s", err.msg);
	op = gemm(-5, 1024, 1024, LLMSIM_DT_BF16);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	/* 2^40 cubed overflows int64 */
	op = gemm(1LL << 40, 1LL << 40, 1LL << 40, LLMSIM_DT_BF16);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "overflow"), "msg: %s", err.msg);
	/* 2*m*n*k: 2 * 2^21 * 2^21 * 2^21 = 2^64 overflows, m*k = 2^42 does not */
	op = gemm(1LL << 21, 1LL << 21, 1LL << 21, LLMSIM_DT_BF16);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
}

/* Occupancy, worked by hand from the CUDA limits of compute capability
 * 9.0: 64 K registers allocated per warp in units of 256, 228 KB shared
 * memory per SM with 1 KB reserved per block and 128-byte granularity, 64
 * warps, 2048 threads, 32 blocks per SM. */
Test(sim_occupancy, worked_cases)
{
	struct llmsim_gpu g;
	test_gpu_h100(&g);
	/* 256 threads, 64 regs, 48 KB: warps 64/8 = 8 blocks; registers
	 * 64*32 = 2048 per warp, 8 warps = 16384 per block, 65536/16384 = 4;
	 * smem (49152 + 1024) = 50176 B, 233472 / 50176 = 4.65 -> 4. So 4
	 * blocks, 32 warps of 64: occupancy 0.5. */
	cr_expect_eq(sim_blocks_per_sm(&g, 256, 64, 48 * 1024), 4);
	/* 128 threads, 255 regs: 255*32 = 8160 -> 8192 per warp, 4 warps =
	 * 32768 per block -> 2 blocks */
	cr_expect_eq(sim_blocks_per_sm(&g, 128, 255, 0), 2);
	/* 1024 threads, 32 regs: 32 warps -> 2 by warps; 32768 regs -> 2 */
	cr_expect_eq(sim_blocks_per_sm(&g, 1024, 32, 0), 2);
	/* 256 threads, 32 regs, 100 KB: (102400+1024) = 103424, 233472/103424
	 * = 2.26 -> 2 */
	cr_expect_eq(sim_blocks_per_sm(&g, 256, 32, 100 * 1024), 2);
	/* 64 threads, 16 regs: 2 warps -> 32 by warps, 2048/64 = 32 by
	 * threads, 32 by the block limit */
	cr_expect_eq(sim_blocks_per_sm(&g, 64, 16, 0), 32);
	/* 96 threads = 3 warps: 64/3 = 21 by warps; 40 regs: 1280 per warp,
	 * 3840 per block, 65536/3840 = 17.07 -> 17 */
	cr_expect_eq(sim_blocks_per_sm(&g, 96, 40, 0), 17);
	/* more shared memory than a block may have, or too many threads */
	cr_expect_eq(sim_blocks_per_sm(&g, 128, 32, 228 * 1024), 0);
	cr_expect_eq(sim_blocks_per_sm(&g, 2048, 32, 0), 0);
	/* A100: 164 KB/SM, 48 KB + 1 KB -> 167936 / 50176 = 3.35 -> 3 */
	test_gpu_a100(&g);
	cr_expect_eq(sim_blocks_per_sm(&g, 256, 32, 48 * 1024), 3);
}

/* One block more than a full wave costs a whole extra block time: with one
 * resident block per SM, 133 tile blocks on 132 SMs take twice as long as
 * 132. */
Test(sim_occupancy, wave_quantization)
{
	struct llmsim_gpu g;
	struct ktime t1, t2;
	test_gpu_h100(&g);
	struct kern k;
	memset(&k, 0, sizeof k);
	k.threads = 384;
	k.regs = 168;
	k.smem_per_block_bytes = 200 * 1024; /* one block per SM */
	double per_block = 2.0 * 128 * 256 * 8192;
	k.mm_rate_flops_per_s = 989.4e12;
	k.mm_eff = 0.8;
	k.mm_tensor = 1;
	k.blocks = 132;
	k.mm_flops = per_block * 132;
	sim_kern_time(&g, &k, &t1);
	cr_expect_eq(t1.blocks_per_sm, 1);
	/* one block on each SM at the SM's share of peak: */
	expect_close(t1.mm_s, per_block / (989.4e12 / 132 * 0.8), 1e-9);
	k.blocks = 133;
	k.mm_flops = per_block * 133;
	sim_kern_time(&g, &k, &t2);
	expect_close(t2.mm_s, 2 * t1.mm_s, 1e-9);
	expect_close(t2.waves, 133.0 / 132, 1e-12);
	cr_expect(t2.time_s > 1.9 * t1.time_s - 2 * t1.overhead_s);
}

/* Re-reads of A (once per column of tiles) and B (once per row of tiles)
 * come from L2 while the operands fit in it, from HBM when they do not. */
Test(sim_gemm, rereads_filtered_by_l2)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	/* 2048^3 bf16: A and B are 8 MB each, together under the 31 MB of L2
	 * kept for re-reads (60 MiB * 0.5): HBM reads are A + B once */
	struct llmsim_pred p = predict_ok(&g, gemm(2048, 2048, 2048, LLMSIM_DT_BF16));
	expect_close(p.hbm_read_bytes, 2.0 * 2048 * 2048 * 2, 1e-12);
	cr_expect(p.l2_bytes > p.hbm_read_bytes, "l2 %g", p.l2_bytes);
	/* 16384^3: 512 MB each, far over L2: the panels are re-read from HBM */
	p = predict_ok(&g, gemm(16384, 16384, 16384, LLMSIM_DT_BF16));
	cr_expect(p.hbm_read_bytes > 1.5 * 2.0 * 16384 * 16384 * 2, "read %g", p.hbm_read_bytes);
	/* but far less than every tile reading its panels from HBM */
	cr_expect(p.hbm_read_bytes < p.l2_bytes);
}

Test(sim_gemm, expected_error_when_calibrated)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(512, 512, 512, LLMSIM_DT_BF16));
	cr_expect(isnan(p.time_err_pct));
	cr_expect_str_eq(p.op_class, "gemm");
	strcpy(g.err_classes[0].name, "attention");
	g.err_classes[0].median_abs_pct = 9.0;
	g.err_classes[0].p80_abs_pct = 12.0;
	strcpy(g.err_classes[1].name, "gemm");
	g.err_classes[1].median_abs_pct = 4.0;
	g.err_classes[1].p80_abs_pct = 7.5;
	g.err_classes[1].bias_pct = 0.5; /* under 1%: not biased */
	g.err_classes[1].n = 40;
	g.nerr_classes = 2;
	/* the error bar is the class's p80, which covers 80% of its held-out kernels */
	p = predict_ok(&g, gemm(512, 512, 512, LLMSIM_DT_BF16));
	expect_close(p.time_err_pct, 7.5, 1e-12);
	cr_expect_eq(p.time_err_n, 40);
	cr_expect(isnan(p.time_bias_pct));
	/* a bias of 2.5% against a median |error| of 4%: at least half of it, so biased */
	g.err_classes[1].bias_pct = -2.5;
	expect_close(predict_ok(&g, gemm(512, 512, 512, LLMSIM_DT_BF16)).time_bias_pct, -2.5, 1e-12);
	/* 1.5% against a median of 4%: under half, so not */
	g.err_classes[1].bias_pct = 1.5;
	cr_expect(isnan(predict_ok(&g, gemm(512, 512, 512, LLMSIM_DT_BF16)).time_bias_pct));
}

/* The search prunes tile candidates with lower bounds of their time and
 * skips a candidate whose kernels equal the best's: neither may change
 * the choice. The reference below is this same gemm.c built with
 * SIM_GEMM_PRUNE 0, which prices every candidate; on every shape (sizes
 * from 1 to 2^17 and tile-aligned ones, batches, dtypes, weight-only
 * quantization, each test GPU) both must pick the same tile, k-step and
 * split and predict the same time to the bit. */
#define SIM_GEMM_PRUNE 0
#define sim_gemm_add ref_gemm_add
#define sim_gemm ref_gemm
#include "sim/gemm.c"
#undef sim_gemm_add
#undef sim_gemm

static uint64_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static int64_t test_dim(uint64_t *s)
{
	uint64_t r = lcg_next(s);
	switch (r % 4) {
	case 0: return 1 + (int64_t)(lcg_next(s) % 160);           /* small: narrow tiles, split K */
	case 1: return 64 * (1 + (int64_t)(lcg_next(s) % 256));    /* tile-aligned */
	default: return 1 + (int64_t)(lcg_next(s) % (1u << (1 + lcg_next(s) % 17)));
	}
}

Test(sim_gemm, pruned_search_matches_pricing_every_tile)
{
	static void (*const gpus[])(struct llmsim_gpu *) = {test_gpu_h100, test_gpu_h200,
							     test_gpu_a100};
	static const enum llmsim_dtype dts[][2] = {
		{LLMSIM_DT_BF16, LLMSIM_DT_BF16}, {LLMSIM_DT_FP8, LLMSIM_DT_FP8},
		{LLMSIM_DT_FP32, LLMSIM_DT_FP32}, {LLMSIM_DT_TF32, LLMSIM_DT_TF32},
		{LLMSIM_DT_INT8, LLMSIM_DT_INT8}, {LLMSIM_DT_BF16, LLMSIM_DT_INT4},
		{LLMSIM_DT_FP16, LLMSIM_DT_INT8},
	};
	uint64_t seed = 12345;
	int compared = 0;
	for (size_t gi = 0; gi < sizeof gpus / sizeof gpus[0]; gi++) {
		struct llmsim_gpu g;
		gpus[gi](&g);
		for (int i = 0; i < 3000; i++) {
			int64_t m = test_dim(&seed), n = test_dim(&seed), k = test_dim(&seed);
			int64_t batch = lcg_next(&seed) % 3 ? 1 : 1 + (int64_t)(lcg_next(&seed) % 64);
			const enum llmsim_dtype *dt = dts[lcg_next(&seed) % (sizeof dts / sizeof dts[0])];
			int tensor;
			if (sim_mm_rate(&g, dt[0], &tensor) <= 0)
				continue; /* fp8 on the A100 */
			struct llmsim_pred p, r;
			struct sim_acc a, b;
			memset(&p, 0, sizeof p);
			memset(&r, 0, sizeof r);
			sim_acc_init(&a, &p);
			sim_acc_init(&b, &r);
			int rc = sim_gemm_add(&g, m, n, k, batch, dt[0], dt[1], -1, &a, 1);
			int rrc = ref_gemm_add(&g, m, n, k, batch, dt[0], dt[1], -1, &b, 1);
			cr_assert_eq(rc, rrc);
			if (rc)
				continue;
			cr_assert(p.tile_m == r.tile_m && p.tile_n == r.tile_n && p.tile_k == r.tile_k &&
					  p.split_k == r.split_k && p.time_s == r.time_s &&
					  p.kernels == r.kernels,
				  "gpu %s m=%lld n=%lld k=%lld batch=%lld %s/%s: %dx%dx%d split %d %.17g s, "
				  "every tile: %dx%dx%d split %d %.17g s",
				  g.name, (long long)m, (long long)n, (long long)k, (long long)batch,
				  llmsim_dtype_name(dt[0]), llmsim_dtype_name(dt[1]), p.tile_m, p.tile_n,
				  p.tile_k, p.split_k, p.time_s, r.tile_m, r.tile_n, r.tile_k, r.split_k,
				  r.time_s);
			compared++;
		}
	}
	cr_expect(compared > 6000, "only %d shapes compared", compared);
}

/* Inside a sustained load (op.load_duty) tensor work runs at the clock the
 * power limit allows: power ~ rho * duty * f^3 (sim/predict.c), so with the
 * capped clock f_c stated for rho = duty = 1, an op keeping the tensor pipes
 * rho busy runs at f = f_c / cbrt(rho * duty), never above its burst clock.
 * rho is the lone prediction's FLOP rate over the tensor peak scaled to
 * the burst clock, 989.4e12 * 1.67 / 1.83 = 902.9e12 for bf16 here. Hand
 * check: 8192^3 bf16 runs 128 x 192 tiles, 2772 tile slots (see
 * fp8_promotes_its_accumulators) of 2 * 128 * 192 * 8192 FLOPs at 902.9e12
 * * 0.80: compute 1.5452 ms. Its fixed part: 3 us of kernel overhead, two
 * round trips (1 us) for the first TMA load, the first k-step's MMAs (2 *
 * 128 * 192 * 64 at one SM's 902.9e12 * 0.80 / 132: 0.57 us), and the
 * epilogue's round trip (0.5 us) plus the last wave's 112 tiles of C (5.5
 * MB at the L2's 5120 B x 1.98 GHz x 0.80: 0.68 us), 5.75 us: alone 1.551
 * ms, so rho = 2 * 8192^3 / (1.551 ms * 902.9e12) = 0.785; at duty 1 it runs
 * at 1.41 / cbrt(0.785) = 1.528 GHz, 1.67 / 1.528 = 1.093x slower in its
 * math; at duty 0.25 the law gives 1.41 / cbrt(0.196) = 2.43 GHz, above
 * the burst clock: no slowdown. A lone kernel (load_duty 0) is priced as
 * before. */
Test(sim_gemm, power_limit_slows_sustained_tensor_work)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.tensor_clock_hz = 1.83e9;
	g.burst_clock_hz = 1.67e9;
	g.param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ] = 1.41e9;
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = LLMSIM_DT_BF16};
	op.u.gemm.m = op.u.gemm.n = op.u.gemm.k = 8192;
	struct llmsim_pred lone, loaded, light;
	cr_assert_eq(llmsim_predict(&g, &op, &lone, NULL), 0);
	op.load_duty = 1;
	cr_assert_eq(llmsim_predict(&g, &op, &loaded, NULL), 0);
	op.load_duty = 0.25;
	cr_assert_eq(llmsim_predict(&g, &op, &light, NULL), 0);
	cr_expect_eq(lone.bound, LLMSIM_BOUND_TENSOR);
	expect_close(lone.compute_s, 1.5452e-3, 1e-4);
	expect_close(lone.time_s, 1.551e-3, 1e-3);
	expect_close(loaded.compute_s / lone.compute_s, 1.093, 1e-3);
	cr_expect_gt(loaded.time_s, lone.time_s);
	cr_expect_leq(loaded.time_s, lone.time_s * 1.093 * (1 + 1e-3));
	expect_close(light.time_s, lone.time_s, 1e-12);
}

/* An SM keeps at most sm_inflight_bytes of HBM loads in flight, whatever
 * its pipeline depth: a GEMV whose tiles cover few SMs streams at
 * (SMs used) x sm_inflight / latency. m=1 n=8448 k=4096 bf16 on the H200
 * test GPU runs 8448 / 64 = 132 tiles of 8x64, one per SM (no split: the
 * tiles fill the SMs). Each tile reads its 64 x 4096 x 2 B weight panel
 * plus a share of A (8 KB, read once): (69,206,016 + 8,192) / 132 =
 * 524,350 B. With 4096 B in flight per SM that is 128.02 round trips of
 * 0.5 us: 64.0 us, far above the HBM time (69.2 MB / (4.8 TB/s x 0.9) =
 * 16.0 us) and the pipeline's own round trips (32 k-steps of 128 over 6
 * stages in flight: 2.7 us). */
Test(sim_gemm, sm_inflight_bytes_cap_the_stream_of_each_sm)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.param[LLMSIM_PARAM_SM_INFLIGHT_BYTES] = 4096;
	struct llmsim_pred p = predict_ok(&g, gemm(1, 8448, 4096, LLMSIM_DT_BF16));
	cr_expect_eq(p.blocks, 132);
	cr_expect_eq(p.split_k, 1);
	expect_close(p.latency_s, 128.02 * 0.5e-6, 0.002);
	cr_expect_eq(p.bound, LLMSIM_BOUND_LATENCY, "bound %s", llmsim_bound_name(p.bound));
}

/* With the default 20480 B per SM (41 GB/s at 0.5 us), m=1 n=6144 k=4096
 * runs 96 tiles of 8x64 on 96 of 132 SMs: each streams (50,331,648 +
 * 8,192) / 96 = 524,373 B in 25.60 round trips, 12.80 us, more than the
 * whole GPU's HBM time (50.34 MB / 4.32 TB/s = 11.65 us): 96 SMs cannot
 * draw the bandwidth 132 can. Splitting K 2 ways would put 192 tiles on
 * 132 SMs (2 rounds, the same bytes on the busiest SM) and add a
 * reduction: not taken. */
Test(sim_gemm, a_gemv_on_few_sms_is_bound_by_their_in_flight_bytes)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(1, 6144, 4096, LLMSIM_DT_BF16));
	cr_expect_eq(p.blocks, 96);
	expect_close(p.latency_s, 25.60 * 0.5e-6, 0.002);
	expect_close(p.memory_s, 50352128.0 / (4.8e12 * 0.90), 0.01);
	cr_expect(p.latency_s > p.memory_s);
	/* The two limits meet in a queue (sim/kernel.c): with the default
	 * exponent 2 they add in quadrature, sqrt(12.80^2 + 11.65^2) =
	 * 17.31 us of streaming beside the fixed parts (overhead_s); with a
	 * sharp knee (q = 64) the latency alone, 12.80 us. */
	double lat = 25.60 * 0.5e-6, mem = 50352128.0 / (4.8e12 * 0.90);
	expect_close(p.time_s - p.overhead_s, sqrt(lat * lat + mem * mem), 0.005);
	g.param[LLMSIM_PARAM_HBM_QUEUE_EXPONENT] = 64;
	p = predict_ok(&g, gemm(1, 6144, 4096, LLMSIM_DT_BF16));
	expect_close(p.time_s - p.overhead_s, lat, 0.005);
}

/* A GEMM's HBM traffic (operand reads, few writes) streams at
 * gemm_hbm_fraction of the peak, not the copies' hbm_fraction: m=1
 * n=32768 k=8192 (512 tiles, all SMs busy) moves its 537.0 MB
 * in memory_s = bytes / (4.8 TB/s x fraction); 0.9 -> 0.6 makes it 1.5x. */
Test(sim_gemm, gemm_hbm_fraction_sets_the_operand_stream_rate)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.param[LLMSIM_PARAM_HBM_FRACTION] = 0.5; /* copies: not what a GEMM streams at */
	struct llmsim_pred a = predict_ok(&g, gemm(1, 32768, 8192, LLMSIM_DT_BF16));
	/* 536,870,912 B of weights, A 16 KB, C 64 KB */
	expect_close(a.hbm_bytes, 536952832.0, 1e-12);
	expect_close(a.memory_s, 536952832.0 / (4.8e12 * 0.90), 1e-9);
	g.param[LLMSIM_PARAM_GEMM_HBM_FRACTION] = 0.6;
	struct llmsim_pred b = predict_ok(&g, gemm(1, 32768, 8192, LLMSIM_DT_BF16));
	expect_close(b.memory_s, 1.5 * a.memory_s, 1e-9);
}

/* On sm_90 a CTA fetches its TMA descriptors before its first load: the
 * fixed part of a one-tile GEMM (64^3 bf16 on the H200 test GPU) is the
 * kernel overhead (3 us default) + two round trips before the first
 * k-step + its MMAs (2 x 64 x 64 x 64 / (989.4e12 x 0.8 / 132) =
 * 87.4 ns) + the epilogue's round trip and its 8 KB store (~1 ns):
 * 4.588 us. */
Test(sim_gemm, tma_descriptor_fetch_adds_a_round_trip_on_sm90)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(64, 64, 64, LLMSIM_DT_BF16));
	expect_close(p.overhead_s, 3e-6 + 3 * 0.5e-6 + 87.4e-9 + 1e-9, 0.002);
}

/* Split K is tried on every tile that leaves SMs idle, not only on the
 * best unsplit one: m=128 n=4096 k=14336 (cuBLAS on the H200: 128x64
 * tiles split 2 ways, 128 CTAs) is best as one row of tiles, B read
 * once, split over the SMs, rather than as 64x64 tiles that read B twice. */
Test(sim_gemm, split_k_on_a_tile_that_covers_m)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, gemm(128, 4096, 14336, LLMSIM_DT_BF16));
	cr_expect_eq(p.tile_m, 128, "tile %dx%d split %d", p.tile_m, p.tile_n, p.split_k);
	cr_expect(p.split_k >= 2, "split %d", p.split_k);
}

/* An FP8 GEMM's load on the power limit is its rate in 16-bit work, each
 * 8-bit FLOP weighted by narrow_tensor_energy_relative: rho = w * flops /
 * (time * BF16 peak at the burst clock), so at duty 1 it runs at
 * 1.41 GHz / cbrt(rho) (hand law of sim/predict.c; rho may pass 1). 8192^3
 * fp8 alone: the 2772 tile slots' math at 1978.9e12 * 1.67 / 1.83 * 0.80
 * (0.7726 ms), their FP32 promotion adds (0.1929 ms at the CUDA cores'
 * rate) hidden under it, 0.7783 ms with the fixed parts (5.75 us, as
 * power_limit_slows_sustained_tensor_work's: a k-step of 128 fp8 at twice
 * the rate takes as long): 2 x 8192^3 / (989.4e12 x 1.67 / 1.83) = 1.2177 ms
 * of BF16-peak work, 1.5646 times its time. With w = 0.66, rho = 1.0326
 * and the clock 1.41 / cbrt(1.0326) = 1.3953 GHz, 1.67 / 1.3953 = 1.1969x
 * slower; with w = 0.3, rho = 0.4694 and the law's 1.81 GHz is above the
 * burst clock: no slowdown. */
Test(sim_gemm, narrow_flops_weigh_on_the_power_limit_by_their_energy)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	g.tensor_clock_hz = 1.83e9;
	g.burst_clock_hz = 1.67e9;
	g.param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ] = 1.41e9;
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = LLMSIM_DT_FP8};
	op.u.gemm.m = op.u.gemm.n = op.u.gemm.k = 8192;
	static const double w[2] = {0.66, 0.3}, slower[2] = {1.1969, 1};
	for (int i = 0; i < 2; i++) {
		g.param[LLMSIM_PARAM_NARROW_TENSOR_ENERGY_RELATIVE] = w[i];
		struct llmsim_pred lone, loaded;
		op.load_duty = 0;
		cr_assert_eq(llmsim_predict(&g, &op, &lone, NULL), 0);
		op.load_duty = 1;
		cr_assert_eq(llmsim_predict(&g, &op, &loaded, NULL), 0);
		expect_close(lone.compute_s, 0.7726e-3, 1e-3);
		expect_close(lone.time_s, 0.7783e-3, 1e-3);
		expect_close(loaded.compute_s / lone.compute_s, slower[i], 1e-3);
	}
}

/* A grouped GEMM (MoE experts): 16 rows routed uniformly over 8 experts
 * reach 8 (1 - (7/8)^16) = 7.06 of them on average: priced as 8 experts
 * of ceil(16 / 8) = 2 rows, each reading its own [28672, 4096] bf16
 * weights (234.9 MB), so at least 8 x 234.9 MB = 1.879 GB from HBM; the
 * FLOPs counted are the useful 2 x 16 x 28672 x 4096 = 3.758 GFLOP, and
 * the grouped kernel's fixed setup adds to a batched GEMM's time. */
Test(sim_gemm, grouped_experts_price_their_active_weights)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_op op = {.kind = LLMSIM_OP_GEMM, .dtype = LLMSIM_DT_BF16};
	op.u.gemm.m = 16, op.u.gemm.n = 28672, op.u.gemm.k = 4096, op.u.gemm.batch = 1;
	op.u.gemm.b_dtype = LLMSIM_DT_BF16;
	op.u.gemm.groups = 8;
	struct llmsim_pred p = predict_ok(&g, op);
	expect_close(p.flops, 2.0 * 16 * 28672 * 4096, 1e-12);
	cr_expect_geq(p.hbm_read_bytes, 8.0 * 28672 * 4096 * 2);
	cr_expect_lt(p.hbm_read_bytes, 8.0 * 28672 * 4096 * 2 * 1.01);
	struct llmsim_op b = op;
	b.u.gemm.groups = 0, b.u.gemm.m = 2, b.u.gemm.batch = 8;
	g.param[LLMSIM_PARAM_GROUPED_GEMM_TENSOR_FRACTION] = g.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION];
	g.param[LLMSIM_PARAM_GROUPED_GEMM_HBM_FRACTION] = g.param[LLMSIM_PARAM_GEMM_HBM_FRACTION];
	expect_close(predict_ok(&g, op).time_s,
		     predict_ok(&g, b).time_s + g.param[LLMSIM_PARAM_GROUPED_GEMM_FIXED_S], 1e-9);
	/* one token's two rows over 8 experts: 8 (1 - (7/8)^2) = 1.875 -> 2 */
	op.u.gemm.m = 2;
	p = predict_ok(&g, op);
	cr_expect_lt(p.hbm_read_bytes, 3.0 * 28672 * 4096 * 2);
	cr_expect_geq(p.hbm_read_bytes, 2.0 * 28672 * 4096 * 2);
}
