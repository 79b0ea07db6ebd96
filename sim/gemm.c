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
 *
 * Weights stream at a GEMM's own HBM fraction (reads only), and no faster
 * than the SMs running tiles can draw them: an SM keeps at most
 * sm_inflight_bytes of HBM loads in flight, whatever its pipeline depth,
 * so a GEMV whose tiles cover few SMs streams below the HBM rate and split
 * K pays off (tried on the best tile and on the smallest tile covering m,
 * which reads B once). On sm_90+ a CTA fetches its TMA descriptors before
 * its first load.
 *
 * The search is the hot path of every planner (a prediction should take
 * well under a microsecond), so a candidate is priced in full only when
 * cheap lower bounds of its time (its padded math, operand bytes, fixed
 * parts) leave it a chance to beat the best so far; the bounds are rounded
 * down so that skipping never changes the choice (tests/test_sim_gemm.c
 * checks that against pricing every candidate).
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
struct tile {
	int m, n;
	unsigned flags; /* TILE_*: what rules the tile out, computed from m, n */
};
enum { TILE_WIDE_M = 1, TILE_WIDE_N = 2, TILE_SMALL = 4 };
#define TILE(m_, n_)                                                                 \
	{ m_, n_, ((m_) > 64 ? TILE_WIDE_M : 0) | ((n_) > 64 ? TILE_WIDE_N : 0) |         \
		  ((m_) * (n_) < 128 * 128 ? TILE_SMALL : 0) }
static const struct tile tiles[] = {
	TILE(128, 256), TILE(256, 128), TILE(128, 128), TILE(64, 256), TILE(128, 64),
	TILE(64, 128), TILE(64, 64),
};
static const struct tile tiles_sm90[] = {
	TILE(128, 256), TILE(256, 128), TILE(128, 128), TILE(64, 256), TILE(128, 64),
	TILE(64, 128), TILE(64, 64), TILE(128, 96), TILE(96, 128), TILE(128, 160),
	TILE(160, 128), TILE(128, 192), TILE(192, 128), TILE(192, 192), TILE(128, 320),
	TILE(320, 128),
};
#undef TILE
/* 0: price every candidate (the exhaustive search the bounds must agree
 * with: tests/test_sim_gemm.c builds this file so) */
#ifndef SIM_GEMM_PRUNE
#define SIM_GEMM_PRUNE 1
#endif

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

/* What every candidate of one GEMM shares, computed once per GEMM rather
 * than once per candidate. Each value is the expression the candidates
 * would compute themselves, so the prices come out the same to the bit. */
struct gemm_ctx {
	const struct llmsim_gpu *gpu;
	double m, n, k, batch;
	double a_b, b_b, c_b;     /* bytes per element of A, B, C */
	double rate, mm_eff;      /* peak of the unit doing the math; fraction sustained */
	double rate_eff;          /* rate * mm_eff */
	double sm_rate_eff;       /* one SM's share: rate / SMs * mm_eff */
	int tensor, sm90, fp8acc;
	int tm_narrow;            /* tile_m for m < 64: the MMA's narrow side */
	double tk0;               /* k-step before small tiles go deeper */
	double kt1[3];            /* split 1: k-tiles with the k-step doubled i times */
	double kovh, lat;         /* fixed overhead per kernel; DRAM round trip */
	double hbm_rate, l2_rate, smem_rate; /* sustained (smem: whole GPU; 0: none) */
	double sm_hbm_bytes;      /* HBM bytes one SM fetches per DRAM round trip */
	double cap;               /* L2 kept for re-reads */
	double a_u, b_u, cout;    /* bytes of A, B (each read once) and C */
	/* factors of the lower bounds of a candidate (bound()) */
	double lo_q;              /* padded math: 2 / rate_eff per FLOP-volume unit */
	double lo_fill;           /* the first k-step's MMAs: per unit of tile volume */
	double lo_smem;           /* smem stores (and reads): per unit of stage x rounds */
	double lo_hbm1, lo_hbmk;  /* operands (and C, split 1) at the HBM rate */
	double lo_fixed;          /* kernel overhead + fill and epilogue round trips */
	double vrate_hi;          /* CUDA-core rate of the kernel model at the boost clock */
};

/* Tile sides of the tables: multiples of SIDE_UNIT below SIDES * SIDE_UNIT. */
enum { SIDE_UNIT = 32, SIDES = 320 / SIDE_UNIT + 1 };

static void ctx_init(struct gemm_ctx *x, const struct llmsim_gpu *gpu, int64_t m, int64_t n,
		     int64_t k, int64_t batch, enum llmsim_dtype dt, enum llmsim_dtype b_dt)
{
	x->gpu = gpu;
	x->m = m, x->n = n, x->k = k, x->batch = batch;
	x->rate = sim_mm_rate(gpu, dt, &x->tensor);
	x->a_b = llmsim_dtype_bytes(dt), x->b_b = llmsim_dtype_bytes(b_dt), x->c_b = out_bytes(dt);
	x->sm90 = sim_is_sm90_plus(gpu);
	/* FP8 accumulation promoted to FP32 registers (Hopper, not Blackwell's
	 * tcgen05, which accumulates in tensor memory at full precision) */
	x->fp8acc = x->tensor && dt == LLMSIM_DT_FP8 && sim_is_hopper(gpu);
	x->mm_eff = gpu->param[x->tensor ? LLMSIM_PARAM_GEMM_TENSOR_FRACTION :
					   LLMSIM_PARAM_VECTOR_FRACTION];
	x->rate_eff = x->rate * x->mm_eff;
	x->sm_rate_eff = x->rate / gpu->sms * x->mm_eff;
	/* few rows: the library swaps A and B so that m becomes the MMA's
	 * narrow side (multiples of 8) instead of padding it to 64 */
	x->tm_narrow = x->m < 64 ? (int)sim_max(8, sim_ceil(x->m / 8) * 8) : 64;
	x->tk0 = sim_max(8, sim_floor(K_TILE_BYTES / x->a_b));
	x->kt1[0] = x->kt1[1] = x->kt1[2] = 0;
	x->kovh = gpu->param[LLMSIM_PARAM_KERNEL_OVERHEAD_S];
	x->lat = gpu->hbm_latency_s;
	/* the operands stream at a GEMM's (read-only) HBM fraction */
	x->hbm_rate = gpu->hbm_bytes_per_s * gpu->param[LLMSIM_PARAM_GEMM_HBM_FRACTION];
	x->sm_hbm_bytes = gpu->param[LLMSIM_PARAM_SM_INFLIGHT_BYTES];
	x->l2_rate = gpu->l2_bytes_per_s * gpu->param[LLMSIM_PARAM_L2_FRACTION];
	x->smem_rate = gpu->smem_bytes_per_s_per_sm > 0 ?
		       gpu->sms * gpu->smem_bytes_per_s_per_sm *
			       gpu->param[LLMSIM_PARAM_SMEM_FRACTION] :
		       0;
	x->cap = sim_l2_reuse_bytes(gpu);
	x->a_u = x->batch * x->m * x->k * x->a_b;
	x->b_u = x->batch * x->k * x->n * x->b_b;
	x->cout = x->batch * x->m * x->n * x->c_b;
	x->lo_q = 2.0 / x->rate_eff;
	x->lo_fill = 2.0 / x->sm_rate_eff;
	x->lo_smem = x->smem_rate > 0 ? gpu->sms * (x->sm90 ? 1.0 : 2.0) / x->smem_rate : 0;
	x->lo_hbm1 = (x->a_u + x->b_u + x->cout) / x->hbm_rate;
	x->lo_hbmk = (x->a_u + x->b_u) / x->hbm_rate;
	x->lo_fixed = x->kovh + 2 * x->lat;
	/* sim_kern_time runs vec_flops at the FP32 rate / 2 x vector_fraction,
	 * times a clock ratio <= 1 under tensor load: this is its fastest */
	x->vrate_hi = sim_vec_rate(gpu) / 2 * gpu->param[LLMSIM_PARAM_VECTOR_FRACTION];
}

/* One candidate's geometry. */
struct shape {
	int tm, tn, split;
	double tk, kt;            /* k-step; k-tiles of one split */
	double stage;             /* bytes of one pipeline stage: A and B tiles */
	double TM, TN;            /* tiles along m and n */
	double ntiles, rounds;    /* tiles in all; tiles the busiest SM runs */
	double q;                 /* padded output area of the rounds: rounds*SMs*tm*tn */
};

/* sim_ceil(v / t), remembered in memo[t / SIDE_UNIT] (when given) for the
 * tables' tile sides */
static inline double tiles_along(double v, int t, double *memo)
{
	unsigned u = (unsigned)t / SIDE_UNIT;
	if (!memo || (unsigned)t % SIDE_UNIT || u >= SIDES)
		return sim_ceil(v / t);
	double *c = &memo[u];
	if (!*c)
		*c = sim_ceil(v / t);
	return *c;
}

/* Tiles along m, n and the rounds of them per SM for tile tm x tn and
 * split `split` (tiles along the sides remembered in TMs, TNs). */
static inline void shape_tiles(const struct gemm_ctx *x, int tm, int tn, int split, double *TMs,
			       double *TNs, struct shape *s)
{
	s->tm = tm, s->tn = tn, s->split = split;
	s->TM = tiles_along(x->m, tm, TMs);
	s->TN = tiles_along(x->n, tn, TNs);
	s->ntiles = s->TM * s->TN * x->batch * split;
	s->rounds = sim_ceil(s->ntiles / x->gpu->sms);
	s->q = s->rounds * x->gpu->sms * tm * tn;
}

/* The rest of the geometry: the narrow tile_m of few rows, the k-step
 * and the stage; 0 if K cannot be split s->split ways. */
static int shape_k(struct gemm_ctx *x, struct shape *s)
{
	double k = x->k, a_b = x->a_b, b_b = x->b_b;
	int tm = s->tm == 64 ? x->tm_narrow : s->tm, tn = s->tn, split = s->split;
	double tk = x->tk0;
	double ksplit = split == 1 ? k : sim_ceil(k / split);
	if (split > 1 && (ksplit < tk || (split - 1) * ksplit >= k))
		return 0;
	/* small tiles go deeper in k so a stage stays a worthwhile load */
	int deeper = 0;
	for (; deeper < 2 && (tm * a_b + tn * b_b) * tk < MIN_STAGE_BYTES && 2 * tk <= ksplit;
	     deeper++)
		tk *= 2;
	if (split == 1) {
		/* tk is tk0 * 2^deeper exactly: one division per depth */
		if (!x->kt1[deeper])
			x->kt1[deeper] = sim_ceil(ksplit / tk);
		s->kt = x->kt1[deeper];
	} else {
		s->kt = sim_ceil(ksplit / tk);
	}
	s->tm = tm, s->tk = tk;
	s->stage = tm * tk * a_b + tk * tn * b_b;
	return 1;
}

/* Operand traffic requested by the tiles: A once per column of tiles, B
 * once per row; on sm_90+ clusters of 2 CTAs multicast the tile they share
 * (TMA): along m they share B, along n they share A. */
static void operand_traffic(const struct gemm_ctx *x, const struct shape *s, double *a_tr,
			    double *b_tr)
{
	*a_tr = x->a_u * s->TN, *b_tr = x->b_u * s->TM;
	if (x->sm90) {
		if (s->TM >= 2 && (*b_tr >= *a_tr || s->TN < 2))
			*b_tr /= CLUSTER;
		else if (s->TN >= 2)
			*a_tr /= CLUSTER;
	}
}

/* FP32 partial tiles of a split K, in bytes. */
static double partials(const struct gemm_ctx *x, int split)
{
	return split * x->batch * x->m * x->n * 4;
}

/* Lower bounds of a candidate's time that need no occupancy: eval()
 * prices it at the largest of its limits (math, memory, latency, L2,
 * shared memory), or more, plus parts nothing overlaps (the overhead, the
 * first k-step, the epilogue's round trip; a split's reduction kernel),
 * or more. Each bound is rounded down by 1e-12 so that the few roundings
 * between it and the price cannot put it above the price: skipping a
 * candidate on one never changes the choice.
 * bound_fast: the padded math of the busiest SM's rounds of tiles at its
 * share of the sustained rate (the kernel model's quantization), and the
 * fixed parts. */
static double bound_fast(const struct gemm_ctx *x, const struct shape *s)
{
	double tile = (double)s->tm * s->tn * s->tk;
	double lo = x->lo_q * x->gpu->sms * s->rounds * tile * s->kt + x->lo_fixed +
		    x->lo_fill * tile;
	if (s->split > 1) /* the reduction kernel's overhead and fill */
		lo += x->kovh + x->lat;
	return lo * (1 - 1e-12);
}

/* Whether an FP8 GEMM's FP32 promotion overlaps the MMAs (sm_90+). The
 * promotion adds run on the FP32 pipes while another consumer warpgroup's
 * MMAs keep the tensor pipe busy: CUTLASS's warp-specialized ping-pong
 * schedule gives each consumer warpgroup its own output tile, so it needs
 * a second tile on every SM (tiles >= 2 x SMs); with fewer, the SM's one
 * tile waits for its promotion. H200, the held-out _scaled_mm calls
 * (heldout_ops.tsv): at m >= 4096 (many tiles per SM) overlapped
 * promotion fits (-1 to -10%); at m = 256 with one tile per SM or less
 * the overlap left them 9-23% fast, the serial promotion within 6%; the
 * fit cases' m = 512 x 4096 x 14336 likewise (-22% overlapped). */
static int fp8_promotion_overlaps(const struct gemm_ctx *x, const struct shape *s)
{
	return x->sm90 && s->ntiles >= 2.0 * x->gpu->sms;
}

/* bound_pre: bound_fast before the k-step is known: the k-tiles cover
 * K, and the k-step is tk0 at least. */
static double bound_pre(const struct gemm_ctx *x, const struct shape *s)
{
	double tile = (double)(s->tm == 64 ? x->tm_narrow : s->tm) * s->tn;
	return (x->lo_q * x->gpu->sms * s->rounds * tile * x->k + x->lo_fixed +
		x->lo_fill * tile * x->tk0) * (1 - 1e-12);
}

/* bound: also the CUDA-core work and the shared-memory stores quantized
 * as the math, the operands (and C) at the HBM rate, all traffic at the L2 rate, and the
 * k-loop's DRAM round trips (at most MAX_STAGES - 1 loads in flight). */
static double bound(const struct gemm_ctx *x, const struct shape *s)
{
	double a_tr, b_tr;
	operand_traffic(x, s, &a_tr, &b_tr);
	double tile = (double)s->tm * s->tn * s->tk;
	double lo = x->lo_q * x->gpu->sms * s->rounds * tile * s->kt;
	if ((x->b_b != x->a_b || x->fp8acc) && x->vrate_hi > 0) {
		/* CUDA-core work per tile (as eval() counts it), quantized
		 * as the math: added to it, or overlapped on sm_90+ */
		double v = 0;
		if (x->b_b != x->a_b)
			v = s->kt * s->tk * s->tn * DEQUANT_OPS;
		if (x->fp8acc)
			v += (double)s->tm * s->tn * sim_ceil(s->kt * s->tk / FP8_PROMOTE_K);
		v *= x->gpu->sms * s->rounds / x->vrate_hi;
		int overlap = x->fp8acc ? fp8_promotion_overlaps(x, s) : x->sm90;
		lo = overlap ? sim_max(lo, v) : lo + v;
	}
	lo = sim_max(lo, x->lo_smem * s->stage * s->kt * s->rounds);
	lo = sim_max(lo, s->split == 1 ? x->lo_hbm1 : x->lo_hbmk);
	lo = sim_max(lo, sim_max(1, s->kt * (1.0 / (MAX_STAGES - 1))) * x->lat);
	if (x->l2_rate > 0)
		lo = sim_max(lo, (a_tr + b_tr + (s->split == 1 ? x->cout : partials(x, s->split))) /
					 x->l2_rate);
	lo += x->lo_fixed + x->lo_fill * tile;
	if (s->split > 1)
		lo += x->kovh + x->lat;
	return lo * (1 - 1e-12);
}

/* The pipeline depth and launch shape of candidate c's main kernel g,
 * and its occupancy (the best's when the shape is the same); 0 if the
 * stages do not fit in shared memory or no block fits on an SM. */
static int launch_shape(const struct gemm_ctx *x, const struct shape *s, const struct cand *best,
			struct kern *g, int *stages_out)
{
	const struct llmsim_gpu *gpu = x->gpu;
	int tm = s->tm, tn = s->tn;
	int stages = (int)sim_min(MAX_STAGES, sim_floor(gpu->smem_bytes_per_block_max / s->stage));
	if (stages < 2)
		return 0;
	stages = (int)sim_min(stages, s->kt + 1);
	if (stages < 2)
		stages = 2;
	if (x->sm90) {
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
	g->smem_per_block_bytes = stages * s->stage;
	/* the occupancy of the best's launch shape is known */
	const struct kern *bg = isfinite(best->time_s) ? &best->main : NULL;
	int bps = bg && bg->threads == g->threads && bg->regs == g->regs &&
			  bg->smem_per_block_bytes == g->smem_per_block_bytes ?
		  bg->bps :
		  sim_blocks_per_sm(gpu, g->threads, g->regs, g->smem_per_block_bytes);
	if (bps <= 0)
		return 0;
	g->bps = bps;
	*stages_out = stages;
	return 1;
}

/* Where the main kernel's bytes go: A is read once per column of tiles,
 * B once per row of tiles; a wave of resident tiles covers a patch of
 * r x c tiles (swizzled raster) whose panels are shared through L2.
 * Operands that fit in L2 are read from HBM once. C is written once, or,
 * split K ways, FP32 partial tiles go to a workspace that the reduction
 * kernel c->red sums. */
static void traffic(const struct gemm_ctx *x, const struct shape *s, double wave, struct cand *c)
{
	struct kern *g = &c->main;
	double a_u = x->a_u, b_u = x->b_u, cap = x->cap, batch = x->batch, a_tr, b_tr;
	double TM = s->TM, TN = s->TN;
	operand_traffic(x, s, &a_tr, &b_tr);
	double pc = sim_min(TN, sim_ceil(sqrt(wave))), pr = sim_min(TM, sim_ceil(wave / pc));
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
	double cout = x->cout;
	if (s->split == 1) {
		g->hbm_write_bytes = cout;
	} else {
		double part = partials(x, s->split);
		c->workspace_bytes = part;
		if (part <= cap)
			g->l2_store_bytes = part;
		else
			g->hbm_write_bytes = part;
		sim_reduce_kern(x->gpu, &c->red, batch * x->m * x->n, s->split, part, part <= cap,
				cout);
	}
}

/* The main kernel's CUDA-core work: weights of another type converted,
 * FP8 partial sums promoted. */
static void cuda_core_work(const struct gemm_ctx *x, const struct shape *s, struct kern *g)
{
	double ntiles = s->ntiles, kt = s->kt, tk = s->tk;
	if (x->b_b != x->a_b) {
		/* weight-only quantization: every B tile a block loads is
		 * converted and scaled to the math type on the CUDA cores
		 * (DEQUANT_OPS per element), overlapped with the MMAs by the
		 * warp-specialized kernels of sm_90+ */
		g->vec_flops = ntiles * kt * tk * s->tn * DEQUANT_OPS;
		g->overlap_math = x->sm90;
	}
	if (x->fp8acc) {
		/* FP8 on Hopper: the tensor cores accumulate at reduced
		 * precision, so cuBLAS (without fast accumulation, PyTorch's
		 * _scaled_mm default) adds the partial sums into FP32
		 * registers every 4 wgmma k-steps of 32 (CUTLASS's 2xAcc,
		 * mma_promotion_interval 4): one FP32 add per accumulator per
		 * 128 k. With a second tile on every SM they overlap the math
		 * (fp8_promotion_overlaps): large FP8 GEMMs through _scaled_mm
		 * reach the same share of their clock's tensor peak as bf16
		 * ones (H200, heldout_ops.tsv: 0.84 and 0.83 at the clocks NVML
		 * read under load); with fewer tiles they add to it */
		g->vec_flops += ntiles * s->tm * s->tn * sim_ceil(kt * tk / FP8_PROMOTE_K);
		g->overlap_math = fp8_promotion_overlaps(x, s);
	}
}

/* The main kernel's k-loop: shared-memory traffic, loads in flight and
 * the DRAM round trips they wait, and what no pipelining overlaps. */
static void pipeline(const struct gemm_ctx *x, const struct shape *s, int stages, double wave,
		     struct kern *g)
{
	const struct llmsim_gpu *gpu = x->gpu;
	double m = x->m, n = x->n;
	int tm = s->tm, tn = s->tn;
	double tk = s->tk, kt = s->kt, ntiles = s->ntiles;
	/* each stage is written into shared memory and read back by the
	 * MMAs. On sm_90+ TMA writes it and wgmma reads its operands straight
	 * from shared memory, not through the 128 B/clk load path: only the
	 * writes count (H200: 128x128-tile kernels reach 0.93 of the clock-
	 * scaled tensor peak, which write + read at 128 B/clk would cap at
	 * smem_fraction) */
	g->smem_bytes = ntiles * kt * s->stage * (x->sm90 ? 1 : 2);
	g->inflight_bytes_per_block =
		(stages - 1) * (sim_min(tm, m) * tk * x->a_b + tk * sim_min(tn, n) * x->b_b);
	/* the k-loop keeps stages-1 loads in flight: each wave of tiles
	 * waits kt/(stages-1) DRAM round trips at least */
	g->lat_rounds = kt / (stages - 1);
	g->hbm_eff = gpu->param[LLMSIM_PARAM_GEMM_HBM_FRACTION];
	if (x->sm_hbm_bytes > 0 && g->hbm_read_bytes > 0) {
		/* however deep the pipeline, an SM keeps at most sm_inflight
		 * bytes of HBM loads in flight: in a wave its resident tiles
		 * wait (their HBM bytes) / sm_inflight round trips. A GEMV on
		 * 96 of 132 SMs streams its weights at 96/132 of what all the
		 * SMs draw; split-K pays off by putting more SMs on them. */
		double waves = sim_ceil(ntiles / ((double)gpu->sms * g->bps));
		double tile_hbm = g->hbm_read_bytes / ntiles;
		double sm_rounds = s->rounds / waves * tile_hbm / x->sm_hbm_bytes;
		g->lat_rounds = sim_max(g->lat_rounds, sm_rounds);
	}
	/* not overlapped: the first k-step's load and MMAs, and after the
	 * last one the epilogue: the accumulators of the last wave's tiles
	 * stored (through shared memory) into L2, a DRAM round trip plus
	 * the tiles at the L2 rate (8.6 MB for a wave of 256x128 bf16 tiles
	 * on 132 SMs) */
	double last = ntiles - (sim_ceil(ntiles / wave) - 1) * wave;
	double epilogue = x->lat;
	if (x->l2_rate > 0 && s->split == 1)
		epilogue += last * sim_min(tm, m) * sim_min(tn, n) * x->c_b / x->l2_rate;
	/* on sm_90+ a CTA's first TMA load needs its tensor map (the
	 * descriptor in the kernel's parameters) fetched from memory first:
	 * two round trips before the first k-step's data */
	double first_load = x->sm90 ? 2 * x->lat : x->lat;
	g->fill_s = first_load + 2.0 * tm * tn * tk / x->sm_rate_eff + epilogue;
}

/* A bound on the built candidate's price that no quantization or latency
 * can lower: its math, HBM, shared-memory and L2 traffic at their rates,
 * plus its kernels' fixed parts. */
static double built_bound(const struct gemm_ctx *x, const struct cand *c)
{
	const struct kern *g = &c->main;
	double hbm = g->hbm_read_bytes + g->hbm_write_bytes;
	double lb = sim_max(sim_max(g->mm_flops / x->rate_eff, hbm / x->hbm_rate),
			    x->smem_rate > 0 ? g->smem_bytes / x->smem_rate : 0);
	if (x->l2_rate > 0)
		lb = sim_max(lb, (g->l2_bytes + g->l2_store_bytes + hbm) / x->l2_rate);
	lb += g->fill_s + x->kovh;
	if (c->split > 1) /* the reduction kernel's fixed part */
		lb += c->red.fill_s + x->kovh;
	return lb;
}

/* Build and price candidate c; 0 if it does not fit or cannot beat the
 * best so far (best->time_s, INFINITY if none). Each step that can rule
 * the candidate out comes before the dearer ones: the padded math alone,
 * the fit of its stages and blocks, the bound of the built kernels, the
 * same kernels as the best's; the kernel model prices what is left. */
static int eval(const struct gemm_ctx *x, const struct shape *s, const struct cand *best,
		struct cand *c)
{
	const struct llmsim_gpu *gpu = x->gpu;
	double mm_flops = s->ntiles * 2.0 * s->tm * s->tn * s->kt * s->tk;
	/* the padded math alone, quantized to whole rounds of tiles per SM
	 * as the kernel model does, cannot beat the best so far */
	double rounds_share = gpu->sms * s->rounds / s->ntiles;
	if (SIM_GEMM_PRUNE &&
	    mm_flops / x->rate_eff * rounds_share + (x->kovh + x->lat) >= best->time_s)
		return 0;
	struct kern *g = &c->main;
	memset(g, 0, sizeof *g);
	int stages;
	if (!launch_shape(x, s, best, g, &stages))
		return 0;
	c->workspace_bytes = 0;
	c->tm = s->tm, c->tn = s->tn, c->tk = (int)s->tk, c->split = s->split;
	g->blocks = (int64_t)s->ntiles;
	g->mm_flops = mm_flops;
	g->mm_rate_flops_per_s = x->rate;
	g->mm_tensor = x->tensor;
	g->mm_eff = x->mm_eff;
	double wave = sim_min(s->ntiles, (double)gpu->sms * g->bps);
	traffic(x, s, wave, c);
	cuda_core_work(x, s, g);
	pipeline(x, s, stages, wave, g);
	if (SIM_GEMM_PRUNE && built_bound(x, c) >= best->time_s)
		return 0;
	/* the same kernel(s) as the best's (a transposed tile of a square
	 * GEMM) price the same: not strictly faster. Both were zeroed before
	 * their fields were set, so their bytes compare. */
	if (SIM_GEMM_PRUNE && isfinite(best->time_s) && best->split == s->split &&
	    !memcmp(g, &best->main, sizeof *g) &&
	    (s->split == 1 || !memcmp(&c->red, &best->red, sizeof c->red)))
		return 0;
	struct ktime t;
	sim_kern_time(gpu, g, &t);
	c->time_s = t.time_s;
	if (s->split > 1) {
		sim_kern_time(gpu, &c->red, &t);
		c->time_s += t.time_s;
	}
	return 1;
}

int sim_gemm_add(const struct llmsim_gpu *gpu, int64_t m, int64_t n, int64_t k, int64_t batch,
		 enum llmsim_dtype dt, enum llmsim_dtype b_dt, double useful_flops,
		 struct sim_acc *a, int main)
{
	struct gemm_ctx x;
	ctx_init(&x, gpu, m, n, k, batch, dt, b_dt);
	struct cand buf[2], *best = &buf[0], *c = &buf[1], *tmp;
	best->time_s = INFINITY;
	/* price a candidate unless its cheap bound shows it cannot win (ties
	 * keep the earlier one) */
#define TRY(s_)                                                                        \
	do {                                                                           \
		if ((!SIM_GEMM_PRUNE || !isfinite(best->time_s) ||                     \
		     bound(&x, s_) < best->time_s) &&                                  \
		    eval(&x, s_, best, c) && c->time_s < best->time_s) {               \
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
	const struct tile *tl = x.sm90 ? tiles_sm90 : tiles;
	size_t nt = x.sm90 ? NT : sizeof tiles / sizeof tiles[0], nc = 0;
	/* a tile wider than 64 over a side of 64 or less is padding */
	unsigned out = (m <= 64 ? TILE_WIDE_M : 0) | (n <= 64 ? TILE_WIDE_N : 0) |
		       (big ? TILE_SMALL : 0);
	struct shape sh[NT];
	double q[NT];
	unsigned char order[NT], tix[NT]; /* tix: each candidate's tile */
	/* tiles along m and n by tile side / SIDE_UNIT, 0 until needed */
	double TMs[SIDES] = {0}, TNs[SIDES] = {0};
	for (size_t i = 0; i < nt; i++) {
		if (tl[i].flags & out)
			continue;
		/* try first the tiles whose padded, wave-quantized output area
		 * is least: the likely best, so that the bounds prune the rest
		 * early (the choice itself does not depend on it) */
		size_t j = nc++;
		tix[j] = (unsigned char)i;
		shape_tiles(&x, tl[i].m, tl[i].n, 1, TMs, TNs, &sh[j]);
		double qj = q[j] = sh[j].q;
		for (; j > 0 && q[order[j - 1]] > qj; j--)
			order[j] = order[j - 1];
		order[j] = (unsigned char)(nc - 1);
	}
	for (size_t i = 0; i < nc; i++) {
		struct shape *s = &sh[order[i]];
		if (SIM_GEMM_PRUNE && bound_pre(&x, s) >= best->time_s)
			continue;
		if (shape_k(&x, s) && (!SIM_GEMM_PRUNE || bound_fast(&x, s) < best->time_s))
			TRY(s);
	}
	/* a tile that leaves SMs idle may split K: the splits just under and
	 * over one tile per SM. The best unsplit tile, and the smallest tile
	 * that covers all of m: it reads B once, and split K puts it on the
	 * SMs a shorter tile would have filled by re-reading B (cuBLAS: m=128
	 * n=4096 k=14336 runs 128x64 tiles split 2 ways) */
	double most = sim_floor(k / x.tk0); /* at least one k-tile per split */
	int best_tm = isfinite(best->time_s) ? best->tm : 0;
	int best_tn = isfinite(best->time_s) ? best->tn : 0;
	for (size_t i = 0; i < nc && most >= 2; i++) {
		const struct tile *t = &tl[tix[i]];
		double TM = tiles_along(m, t->m, TMs);
		double base = TM * tiles_along(n, t->n, TNs) * batch;
		int is_best = t->n == best_tn &&
			      (t->m == best_tm || (t->m == 64 && best_tm == x.tm_narrow));
		if (base >= gpu->sms || (TM > 1 && !is_best))
			continue;
		/* of the tiles covering m, the narrowest and shortest: most
		 * tiles, least split and reduction; a taller one only pads m */
		int other = 0;
		for (size_t j = 0; j < nc && !is_best; j++) {
			const struct tile *u = &tl[tix[j]];
			other |= u->m >= m && (u->n < t->n || (u->n == t->n && u->m < t->m));
		}
		if (other)
			continue;

		int lo = (int)sim_min(most, sim_floor(gpu->sms / base));
		int hi = (int)sim_min(most, sim_ceil(gpu->sms / base));
		int splits[2] = {lo < MAX_SPLIT ? lo : MAX_SPLIT, hi != lo && hi <= MAX_SPLIT ? hi : 0};
		for (int j = 0; j < 2; j++) {
			struct shape s;
			if (splits[j] < 2)
				continue;
			/* bound_fast before the k-step is known: the split's
			 * tiles are k / split deep at least, and it streams the
			 * operands from HBM and pays a reduction kernel */
			double tmn = (double)(t->m == 64 ? x.tm_narrow : t->m) * t->n;
			double pre = sim_max(x.lo_q * gpu->sms * sim_ceil(base * splits[j] / gpu->sms) *
						     tmn * (k / splits[j]),
					     x.lo_hbmk) + x.lo_fixed + x.kovh + x.lat;
			if (SIM_GEMM_PRUNE && pre * (1 - 1e-12) >= best->time_s)
				continue;
			shape_tiles(&x, t->m, t->n, splits[j], NULL, NULL, &s);
			if (shape_k(&x, &s) &&
			    (!SIM_GEMM_PRUNE || bound_fast(&x, &s) < best->time_s))
				TRY(&s);
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

/* 1 if the product of f[0..n) overflows int64, multiplied in order as
 * sim_mul_chk does (inline: the checks run on every prediction). */
static int mul_overflows(int n, const int64_t *f)
{
	int64_t v = 1;
	for (int i = 0; i < n; i++)
		if (__builtin_mul_overflow(v, f[i], &v))
			return 1;
	return 0;
}

/* Experts a grouped GEMM of `rows` rows routed uniformly over `groups`
 * reaches on average: groups * (1 - (1 - 1/groups)^rows), at least 1. */
static double active_groups(double rows, double groups)
{
	if (groups <= 1)
		return 1;
	double a = groups * -expm1(rows * log1p(-1 / groups));
	return a < 1 ? 1 : a > groups ? groups : a;
}

/* A grouped GEMM (CUTLASS's sm90 grouped kernel, what torch._grouped_mm
 * and MoE engines run): m rows routed uniformly over `groups` experts
 * reach, on average, a = G (1 - (1 - 1/G)^m) of them with m / a rows each;
 * the kernel tiles each expert's rows against its own [n, k] weights, so
 * it prices as a batched GEMM over the active experts, at the grouped
 * kernel's own tensor and weight-streaming efficiencies. The FLOPs counted
 * are the useful 2 m n k. */
static int grouped(const struct llmsim_gpu *gpu, int64_t m, int64_t n, int64_t k, int64_t groups,
		   enum llmsim_dtype dt, enum llmsim_dtype b_dt, struct sim_acc *a,
		   struct llmsim_err *err)
{
	double act = active_groups((double)m, (double)groups);
	int64_t batch = (int64_t)sim_ceil(act - 1e-9);
	int64_t rows = (int64_t)sim_ceil((double)m / (double)batch);
	struct llmsim_gpu g = *gpu;
	g.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION] = gpu->param[LLMSIM_PARAM_GROUPED_GEMM_TENSOR_FRACTION];
	g.param[LLMSIM_PARAM_GEMM_HBM_FRACTION] = gpu->param[LLMSIM_PARAM_GROUPED_GEMM_HBM_FRACTION];
	if (sim_gemm_add(&g, rows, n, k, batch, dt, b_dt, 2.0 * (double)m * n * k, a, 1))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "gemm: no tile fits the shared memory of %s", gpu->name);
	sim_acc_finish(a);
	double fixed = gpu->param[LLMSIM_PARAM_GROUPED_GEMM_FIXED_S];
	a->p->overhead_s += fixed;
	a->p->time_s += fixed;
	a->p->kernel_time_s[0] += fixed;
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
	if (mul_overflows(5, (int64_t[]){2, m, n, k, batch}) ||
	    mul_overflows(3, (int64_t[]){m, k, batch}) || mul_overflows(3, (int64_t[]){k, n, batch}) ||
	    mul_overflows(3, (int64_t[]){m, n, batch})) {
		if ((rc = sim_mul_chk(err, "gemm m*k*batch", 3, (int64_t[]){m, k, batch}, &v)) ||
		    (rc = sim_mul_chk(err, "gemm k*n*batch", 3, (int64_t[]){k, n, batch}, &v)) ||
		    (rc = sim_mul_chk(err, "gemm m*n*batch", 3, (int64_t[]){m, n, batch}, &v)) ||
		    (rc = sim_mul_chk(err, "gemm FLOPs (2*m*n*k*batch)", 5,
				      (int64_t[]){2, m, n, k, batch}, &v)))
			return rc;
	}
	struct sim_acc a;
	sim_acc_init(&a, p);
	int64_t groups = op->u.gemm.groups;
	if (groups > 1) {
		if (batch != 1)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "gemm: groups=%lld takes batch=1 (got %lld)",
					      (long long)groups, (long long)batch);
		return grouped(gpu, m, n, k, groups, op->dtype, b_dt, &a, err);
	}
	if (sim_gemm_add(gpu, m, n, k, batch, op->dtype, b_dt, -1, &a, 1))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "gemm: no tile fits the shared memory of %s", gpu->name);
	sim_acc_finish(&a);
	return 0;
}
