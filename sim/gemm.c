/*
 * gemm.c - the cost description of a (batched) GEMM, C = A[m,k] B[k,n],
 * as a tuned library runs it.
 *
 * The library picks an output tile (tile_m x tile_n, k-step tile_k) and a
 * number of shared-memory pipeline stages that fit the SM's SRAM, and for
 * small m*n (fewer tiles than SMs) splits K over several blocks, adding a
 * reduction kernel. We enumerate the candidate tiles and splits the way
 * cuBLAS's Hopper kernels come (nvjet_sm90_*_128x256_64x4, 256x128,
 * 128x128, 64x128 ...), price each with the kernel model and keep the
 * fastest, so wave quantization, tile padding, the re-reads of A (once per
 * column of tiles) and B (once per row of tiles) filtered by L2, and the
 * weight-bandwidth bound of small-m GEMMs all follow from the tile and the
 * hardware sizes. On sm_90+ thread-block clusters of two multicast the
 * operand tile they share, halving its L2 reads.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* Output tiles the library has (tile_m, tile_n). Before sm_90: CUTLASS's
 * power-of-two tiles. On sm_90+ cuBLAS's nvjet kernels also come with one
 * side any multiple of 16 up to 320 (wgmma's n is a multiple of 8 up to
 * 256, two of them per warpgroup): the calibration H200 ran 80x128,
 * 112x128, 128x160, 176x128, 192x128, 192x192, 320x128 and 448x64 tiles
 * (kernel names nvjet_sm90_tst_MxN_...), chosen so the tiles fill the 132
 * SMs in whole waves. */
static const struct { int m, n; } tiles[] = {
	{128, 256}, {256, 128}, {128, 128}, {64, 256}, {128, 64}, {64, 128}, {64, 64},
};
static const struct { int m, n; } tiles_sm90[] = {
	{128, 256}, {256, 128}, {128, 128}, {64, 256}, {128, 64}, {64, 128}, {64, 64},
	{128, 96}, {96, 128}, {128, 160}, {160, 128}, {128, 192}, {192, 128},
	{192, 192}, {128, 320}, {320, 128},
};
/* deepest pipeline the library builds (cuBLAS/CUTLASS: 3 to 7 stages) */
enum { MAX_STAGES = 7, K_TILE_BYTES = 128, BASE_REGS = 40, CLUSTER = 2, MAX_SPLIT = 32,
	DEQUANT_OPS = 2, MIN_STAGE_BYTES = 16384, FP8_PROMOTE_K = 128 };

/* One candidate: the main kernel, and the split-K reduction if any. */
struct cand {
	int tm, tn, tk, split;
	struct kern main, red;
	double time_s, workspace_bytes;
};

static double out_bytes(enum llmsim_dtype dt)
{
	/* low-precision GEMMs write bf16 outputs */
	if (dt == LLMSIM_DT_FP8 || dt == LLMSIM_DT_FP4 || dt == LLMSIM_DT_INT8 ||
	    dt == LLMSIM_DT_INT4)
		return 2;
	return llmsim_dtype_bytes(dt);
}

/* Build and price one candidate; 0 if it does not fit or cannot beat
 * best_s. */
static int eval(const struct llmsim_gpu *gpu, double m, double n, double k, double batch,
		double a_b, double b_b, double c_b, double rate, int tensor, int sm90, int fp8acc,
		int tm, int tn, int split, double best_s, struct cand *c)
{
	/* few rows: the library swaps A and B so that m becomes the MMA's
	 * narrow side (multiples of 8) instead of padding it to 64 */
	if (tm == 64 && m < 64)
		tm = (int)sim_max(8, sim_ceil(m / 8) * 8);
	double tk = sim_max(8, sim_floor(K_TILE_BYTES / a_b));
	double ksplit = sim_ceil(k / split);
	if (split > 1 && (ksplit < tk || (split - 1) * ksplit >= k))
		return 0;
	/* small tiles go deeper in k so a stage stays a worthwhile load */
	for (int deeper = 0; deeper < 2 && (tm * a_b + tn * b_b) * tk < MIN_STAGE_BYTES &&
			     2 * tk <= ksplit; deeper++)
		tk *= 2;
	double kt = sim_ceil(ksplit / tk);
	double stage = tm * tk * a_b + tk * tn * b_b;
	int stages = (int)sim_min(MAX_STAGES, sim_floor(gpu->smem_bytes_per_block_max / stage));
	if (stages < 2)
		return 0;
	stages = (int)sim_min(stages, kt + 1);
	if (stages < 2)
		stages = 2;
	double TM = sim_ceil(m / tm), TN = sim_ceil(n / tn);
	double ntiles = TM * TN * batch * split;
	double mm_flops = ntiles * 2.0 * tm * tn * kt * tk;
	double mm_eff = gpu->eff[tensor ? LLMSIM_EFF_GEMM_TENSOR : LLMSIM_EFF_GEMM_VECTOR];
	double overhead = gpu->eff[LLMSIM_EFF_KERNEL_OVERHEAD] + gpu->hbm_latency_s;
	/* the padded math alone, quantized to whole rounds of tiles per SM
	 * as the kernel model does, cannot beat the best so far */
	double rounds = sim_ceil(ntiles / gpu->sms);
	if (mm_flops / (rate * mm_eff) * (gpu->sms * rounds / ntiles) + overhead >= best_s)
		return 0;

	struct kern *g = &c->main;
	memset(g, 0, sizeof *g);
	c->workspace_bytes = 0;
	c->tm = tm;
	c->tn = tn;
	c->tk = (int)tk;
	c->split = split;
	if (sm90) {
		/* warp-specialized: one producer warpgroup, 1-2 consumer warpgroups */
		int cw = tm >= 128 ? 2 : 1;
		g->threads = 128 * (cw + 1);
		g->regs = (int)(tm * tn / (128.0 * cw)) + BASE_REGS;
	} else {
		g->threads = tm * tn >= 128 * 256 ? 256 : 128;
		g->regs = tm * tn / g->threads + BASE_REGS;
	}
	if (gpu->registers_per_thread_max > 0 && g->regs > gpu->registers_per_thread_max)
		g->regs = gpu->registers_per_thread_max;
	g->smem_per_block_bytes = stages * stage;
	int bps = sim_blocks_per_sm(gpu, g->threads, g->regs, g->smem_per_block_bytes);
	if (bps <= 0)
		return 0;
	g->bps = bps;

	g->blocks = (int64_t)ntiles;
	g->mm_flops = mm_flops;
	g->mm_rate_flops_per_s = rate;
	g->mm_tensor = tensor;
	g->mm_eff = mm_eff;

	/* A is read once per column of tiles, B once per row of tiles; a wave
	 * of resident tiles covers a patch of r x c tiles (swizzled raster)
	 * whose panels are shared through L2. Operands that fit in L2 are
	 * read from HBM once. */
	double a_u = batch * m * k * a_b, b_u = batch * k * n * b_b;
	double a_tr = a_u * TN, b_tr = b_u * TM;
	if (sm90) {
		/* clusters of 2 CTAs multicast the tile they share (TMA):
		 * along m they share B, along n they share A */
		if (TM >= 2 && (b_tr >= a_tr || TN < 2))
			b_tr /= CLUSTER;
		else if (TN >= 2)
			a_tr /= CLUSTER;
	}
	double wave = sim_min(ntiles, (double)gpu->sms * bps);
	double pc = sim_min(TN, sim_ceil(sqrt(wave))), pr = sim_min(TM, sim_ceil(wave / pc));
	double cap = sim_l2_reuse_bytes(gpu);
	double a_h = a_u, b_h = b_u;
	a_h = sim_min(a_h, a_tr), b_h = sim_min(b_h, b_tr);
	if ((a_u + b_u) / batch > cap) {
		if (a_u / batch > cap / 2)
			a_h = sim_min(a_tr, a_u * sim_ceil(TN / pc));
		if (b_u / batch > cap / 2)
			b_h = sim_min(b_tr, b_u * sim_ceil(TM / pr));
	}
	g->hbm_read_bytes = a_h + b_h;
	g->l2_bytes = a_tr + b_tr - a_h - b_h;
	double cout = batch * m * n * c_b;
	if (split == 1) {
		g->hbm_write_bytes = cout;
	} else {
		/* FP32 partial tiles to a workspace, summed by a second kernel */
		double part = split * batch * m * n * 4;
		c->workspace_bytes = part;
		if (part <= cap)
			g->l2_store_bytes = part;
		else
			g->hbm_write_bytes = part;
		sim_reduce_kern(gpu, &c->red, batch * m * n, split, part, part <= cap, cout);
	}
	if (b_b != a_b) {
		/* weight-only quantization: every B tile a block loads is
		 * converted and scaled to the math type on the CUDA cores
		 * (DEQUANT_OPS per element), overlapped with the MMAs by the
		 * warp-specialized kernels of sm_90+ */
		g->vec_flops = ntiles * kt * tk * tn * DEQUANT_OPS;
		g->overlap_math = sm90;
	}
	if (fp8acc) {
		/* FP8 on Hopper: the tensor cores accumulate at reduced
		 * precision, so cuBLAS (without fast accumulation, PyTorch's
		 * _scaled_mm default) adds the partial sums into FP32
		 * registers every 4 wgmma k-steps of 32 (CUTLASS's 2xAcc,
		 * mma_promotion_interval 4): one FP32 add per accumulator per
		 * 128 k, between the MMAs of the cooperative warpgroups */
		g->vec_flops += ntiles * tm * tn * sim_ceil(kt * tk / FP8_PROMOTE_K);
	}
	/* each stage is written into shared memory and read back by the
	 * MMAs. On sm_90+ TMA writes it and wgmma reads its operands straight
	 * from shared memory, not through the 128 B/clk load path: only the
	 * writes count (H200: 128x128-tile kernels reach 0.93 of the clock-
	 * scaled tensor peak, which write + read at 128 B/clk would cap at
	 * smem_fraction) */
	g->smem_bytes = ntiles * kt * stage * (sm90 ? 1 : 2);
	g->inflight_bytes_per_block =
		(stages - 1) * (sim_min(tm, m) * tk * a_b + tk * sim_min(tn, n) * b_b);
	/* the k-loop keeps stages-1 loads in flight: each wave of tiles
	 * waits kt/(stages-1) DRAM round trips at least */
	g->lat_rounds = kt / (stages - 1);
	/* not overlapped: the first k-step's load and MMAs, and after the
	 * last one the epilogue: the accumulators of the last wave's tiles
	 * stored (through shared memory) into L2, a DRAM round trip plus
	 * the tiles at the L2 rate (8.6 MB for a wave of 256x128 bf16 tiles
	 * on 132 SMs) */
	double last = ntiles - (sim_ceil(ntiles / wave) - 1) * wave;
	double l2_rate = gpu->l2_bytes_per_s * gpu->eff[LLMSIM_EFF_L2];
	double epilogue = gpu->hbm_latency_s;
	if (l2_rate > 0 && split == 1)
		epilogue += last * sim_min(tm, m) * sim_min(tn, n) * c_b / l2_rate;
	g->fill_s = gpu->hbm_latency_s + 2.0 * tm * tn * tk / (rate / gpu->sms * g->mm_eff) +
		    epilogue;

	/* a bound no quantization or latency can lower: skip the full
	 * pricing of a candidate that cannot beat the best so far */
	double hbm = g->hbm_read_bytes + g->hbm_write_bytes;
	double lb = sim_max(sim_max(g->mm_flops / (rate * g->mm_eff),
				    hbm / (gpu->hbm_bytes_per_s * gpu->eff[LLMSIM_EFF_HBM])),
			    gpu->smem_bytes_per_s_per_sm > 0 ?
			    g->smem_bytes / (gpu->sms * gpu->smem_bytes_per_s_per_sm *
					     gpu->eff[LLMSIM_EFF_SMEM]) : 0);
	if (gpu->l2_bytes_per_s > 0)
		lb = sim_max(lb, (g->l2_bytes + g->l2_store_bytes + hbm) /
				 (gpu->l2_bytes_per_s * gpu->eff[LLMSIM_EFF_L2]));
	lb += g->fill_s + gpu->eff[LLMSIM_EFF_KERNEL_OVERHEAD];
	if (split > 1) /* the reduction kernel's fixed part */
		lb += c->red.fill_s + gpu->eff[LLMSIM_EFF_KERNEL_OVERHEAD];
	if (lb >= best_s)
		return 0;
	struct ktime t;
	sim_kern_time(gpu, g, &t);
	c->time_s = t.time_s;
	if (split > 1) {
		sim_kern_time(gpu, &c->red, &t);
		c->time_s += t.time_s;
	}
	return 1;
}

int sim_gemm_add(const struct llmsim_gpu *gpu, int64_t m, int64_t n, int64_t k, int64_t batch,
		 enum llmsim_dtype dt, enum llmsim_dtype b_dt, double useful_flops,
		 struct sim_acc *a, int main)
{
	int tensor;
	double rate = sim_mm_rate(gpu, dt, &tensor);
	double a_b = llmsim_dtype_bytes(dt), b_b = llmsim_dtype_bytes(b_dt), c_b = out_bytes(dt);
	struct cand buf[2], *best = &buf[0], *c = &buf[1], *tmp;
	best->time_s = INFINITY;
	int sm90 = sim_is_sm90_plus(gpu);
	/* FP8 accumulation promoted to FP32 registers (Hopper, not Blackwell's
	 * tcgen05, which accumulates in tensor memory at full precision) */
	int fp8acc = tensor && sim_is_hopper(gpu) && dt == LLMSIM_DT_FP8;
#define TRY(tm_, tn_, split_)                                                           \
	do {                                                                           \
		if (eval(gpu, m, n, k, batch, a_b, b_b, c_b, rate, tensor, sm90, fp8acc, tm_, tn_, \
			 split_, best->time_s, c) && c->time_s < best->time_s) {       \
			tmp = best;                                                    \
			best = c;                                                      \
			c = tmp;                                                       \
		}                                                                      \
	} while (0)
	/* with four or more waves of 128x128 tiles, tiles smaller than that
	 * only add operand traffic: their better wave fit is worth < 25% */
	int big = sim_ceil(m / 128.0) * sim_ceil(n / 128.0) * batch >= 4.0 * gpu->sms;
	enum { NT = sizeof tiles_sm90 / sizeof tiles_sm90[0] };
	_Static_assert(sizeof tiles / sizeof tiles[0] <= NT, "tile lists");
	size_t nt = sm90 ? NT : sizeof tiles / sizeof tiles[0], nc = 0;
	struct { int m, n; double q; } order[NT];
	for (size_t i = 0; i < nt; i++) {
		int tm = sm90 ? tiles_sm90[i].m : tiles[i].m, tn = sm90 ? tiles_sm90[i].n : tiles[i].n;
		/* a tile wider than 64 over a side of 64 or less is padding */
		if ((tm > 64 && m <= 64) || (tn > 64 && n <= 64) || (big && tm * tn < 128 * 128))
			continue;
		/* try first the tiles whose padded, wave-quantized output area
		 * is least: the likely best, so that the bounds in eval prune
		 * the rest early (the choice itself does not depend on it) */
		double T = sim_ceil(m / (double)tm) * sim_ceil(n / (double)tn) * batch;
		double q = sim_ceil(T / gpu->sms) * gpu->sms * tm * tn;
		size_t j = nc++;
		for (; j > 0 && order[j - 1].q > q; j--)
			order[j] = order[j - 1];
		order[j].m = tm, order[j].n = tn, order[j].q = q;
	}
	for (size_t i = 0; i < nc; i++)
		TRY(order[i].m, order[i].n, 1);
	/* when the best tile leaves SMs idle, split K: the splits just under
	 * and over one tile per SM */
	if (isfinite(best->time_s)) {
		int tm = best->tm, tn = best->tn;
		double base = sim_ceil((double)m / tm) * sim_ceil((double)n / tn) * batch;
		if (base < gpu->sms) {
			/* at least one k-tile per split */
			double most = sim_floor(k / sim_max(8, sim_floor(K_TILE_BYTES / a_b)));
			int lo = (int)sim_min(most, sim_floor(gpu->sms / base));
			int hi = (int)sim_min(most, sim_ceil(gpu->sms / base));
			if (lo >= 2)
				TRY(tm, tn, lo < MAX_SPLIT ? lo : MAX_SPLIT);
			if (hi != lo && hi >= 2 && hi <= MAX_SPLIT)
				TRY(tm, tn, hi);
		}
	}
#undef TRY
	if (!isfinite(best->time_s))
		return LLMSIM_EINVAL;
	struct llmsim_pred *p = a->p;
	p->flops += useful_flops >= 0 ? useful_flops : 2.0 * m * n * k * batch;
	if (main || !p->tile_m) {
		p->tile_m = best->tm;
		p->tile_n = best->tn;
		p->tile_k = best->tk;
		p->split_k = best->split;
	}
	p->workspace_bytes = sim_max(p->workspace_bytes, best->workspace_bytes);
	sim_acc_kern(a, gpu, &best->main, main);
	if (best->split > 1)
		sim_acc_kern(a, gpu, &best->red, 0);
	return 0;
}

int sim_gemm(const struct llmsim_gpu *gpu, const struct llmsim_op *op, struct llmsim_pred *p,
	     struct llmsim_err *err)
{
	int64_t m = op->u.gemm.m, n = op->u.gemm.n, k = op->u.gemm.k;
	int64_t batch = op->u.gemm.batch ? op->u.gemm.batch : 1;
	enum llmsim_dtype b_dt = op->u.gemm.b_dtype;
	int rc;
	/* a zeroed op leaves b_dtype at fp64: take it as "same as dtype" */
	if (b_dt == LLMSIM_DT_FP64 && op->dtype != LLMSIM_DT_FP64)
		b_dt = op->dtype;
	if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "gemm sizes must be positive (m=%lld n=%lld k=%lld batch=%lld)",
				      (long long)m, (long long)n, (long long)k, (long long)batch);
	if ((rc = sim_check_dtype(gpu, op->dtype, "gemm", err)))
		return rc;
	if ((unsigned)b_dt >= LLMSIM_DT_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "gemm: unknown b_dtype (%d)", (int)b_dt);
	int64_t v;
	if ((rc = sim_mul_chk(err, "gemm m*k*batch", 3, (int64_t[]){m, k, batch}, &v)) ||
	    (rc = sim_mul_chk(err, "gemm k*n*batch", 3, (int64_t[]){k, n, batch}, &v)) ||
	    (rc = sim_mul_chk(err, "gemm m*n*batch", 3, (int64_t[]){m, n, batch}, &v)) ||
	    (rc = sim_mul_chk(err, "gemm FLOPs (2*m*n*k*batch)", 5,
			      (int64_t[]){2, m, n, k, batch}, &v)))
		return rc;
	struct sim_acc a;
	sim_acc_init(&a, p);
	if (sim_gemm_add(gpu, m, n, k, batch, op->dtype, b_dt, -1, &a, 1))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "gemm: no tile fits the shared memory of %s", gpu->name);
	sim_acc_finish(&a);
	return 0;
}
