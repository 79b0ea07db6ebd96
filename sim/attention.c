/*
 * attention.c - the cost descriptions of prefill/training attention:
 * naive (QK^T, softmax, PV as separate kernels, the N^2 scores in HBM),
 * FlashAttention-1, -2 and -3, forward and backward, causal or not, with
 * grouped K/V heads; and the "naive" programs users actually run, kernel
 * for kernel as PyTorch launches them: its math SDPA backend (with and
 * without the FP32 upcast) and HF transformers' eager attention.
 *
 * Shapes: B batch, H query heads, G K/V heads, S query length, L key
 * length, D the QK head dim, Dv the V head dim, e the bytes of dtype.
 * Causal masks are bottom-right aligned (query i sees keys up to
 * L - S + i), so "pairs" (the (query, key) products not masked) is
 * S*(L-S) + S(S+1)/2 per head; flash kernels skip K/V tiles entirely above
 * the diagonal and compute the diagonal tiles whole.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

struct attn {
	double B, H, G, S, L, D, Dv, e;
	int causal;
	enum llmsim_dtype dt;
};

/* sum_{i=0}^{n-1} sim_floor((a*i + b) / m), a, b >= 0, m > 0 */
static int64_t floor_sum(int64_t n, int64_t m, int64_t a, int64_t b)
{
	int64_t ans = 0;
	while (n > 0) {
		if (a >= m) {
			ans += (n - 1) * n / 2 * (a / m);
			a %= m;
		}
		if (b >= m) {
			ans += n * (b / m);
			b %= m;
		}
		int64_t y = a * n + b;
		if (y < m)
			break;
		n = y / m;
		b = y % m;
		int64_t t = m;
		m = a;
		a = t;
	}
	return ans;
}

/* (q tile, k/v tile) pairs computed per head with Br x Bc tiles. */
static double tile_pairs(const struct attn *x, int64_t br, int64_t bc)
{
	int64_t S = (int64_t)x->S, L = (int64_t)x->L;
	int64_t tr = sim_cdiv(S, br), tc = sim_cdiv(L, bc);
	if (!x->causal)
		return (double)tr * tc;
	/* q tile i sees sim_floor((br*i + L-S + br + bc-1) / bc) k/v tiles, at most tc */
	int64_t b = L - S + br + bc - 1;
	int64_t i0 = tc * bc - b <= 0 ? 0 : sim_cdiv(tc * bc - b, br);
	if (i0 > tr)
		i0 = tr;
	return (double)floor_sum(i0, bc, br, b) + (double)(tr - i0) * tc;
}

/* Of the tile pairs computed, those the causal diagonal cuts (some
 * elements masked) per head: computed minus wholly visible, where q tile
 * i sees floor((br*i + L-S + 1) / bc) k/v tiles whole, at most tc. */
static double masked_pairs(const struct attn *x, int64_t br, int64_t bc)
{
	if (!x->causal)
		return 0;
	int64_t S = (int64_t)x->S, L = (int64_t)x->L;
	int64_t tr = sim_cdiv(S, br), tc = sim_cdiv(L, bc);
	int64_t b = L - S + 1;
	int64_t i1 = tc * bc - b <= 0 ? 0 : sim_cdiv(tc * bc - b, br);
	if (i1 > tr)
		i1 = tr;
	double whole = (double)floor_sum(i1, bc, br, b) + (double)(tr - i1) * tc;
	return tile_pairs(x, br, bc) - whole;
}

/* Unmasked (query, key) pairs per head. */
static double useful_pairs(const struct attn *x)
{
	if (!x->causal)
		return x->S * x->L;
	return x->S * (x->L - x->S) + x->S * (x->S + 1) / 2;
}

static double fwd_flops(const struct attn *x)
{
	return x->B * x->H * useful_pairs(x) * 2 * (x->D + x->Dv);
}

/* flash backward: recompute S=QK^T, then dV, dP, dQ, dK */
static double bwd_flops(const struct attn *x)
{
	return x->B * x->H * useful_pairs(x) * 2 * (3 * x->D + 2 * x->Dv);
}

/* Heads whose blocks run in one wave, when `per_head` consecutive blocks
 * belong to one head; and the K/V heads they share. */
static double wave_heads(const struct llmsim_gpu *gpu, int bps, double per_head, double heads)
{
	return sim_min(heads, sim_ceil(gpu->sms * (double)bps / per_head));
}

/* ---- naive ---- */

static int naive(const struct llmsim_gpu *gpu, const struct attn *x, int bwd, struct sim_acc *a,
		 int main)
{
	int64_t BH = (int64_t)(x->B * x->H), S = (int64_t)x->S, L = (int64_t)x->L;
	int64_t D = (int64_t)x->D, Dv = (int64_t)x->Dv;
	double frac = useful_pairs(x) / (x->S * x->L);
	struct llmsim_pred *p = a->p;
	double f;
	int rc = 0;
	if (x->G < x->H && !bwd) {
		/* repeat_kv: K and V expanded to every query head */
		f = p->flops;
		sim_ew_add(gpu, LLMSIM_EW_COPY, LLMSIM_PASS_FWD, BH * L, D + Dv, x->dt, a, 0);
		p->flops = f;
	}
	if (!bwd) {
		rc |= sim_gemm_add(gpu, S, L, D, BH, x->dt, x->dt, 2.0 * BH * S * L * D * frac, a,
				   main);
		f = p->flops; /* the softmax's element-wise work is not counted as FLOPs */
		sim_ew_add(gpu, LLMSIM_EW_SOFTMAX, LLMSIM_PASS_FWD, BH * S, L, x->dt, a, 0);
		p->flops = f;
		rc |= sim_gemm_add(gpu, S, Dv, L, BH, x->dt, x->dt, 2.0 * BH * S * L * Dv * frac,
				   a, 0);
	} else {
		/* P was stored by the forward: no recomputation */
		rc |= sim_gemm_add(gpu, L, Dv, S, BH, x->dt, x->dt, 2.0 * BH * S * L * Dv * frac,
				   a, main); /* dV = P^T dO */
		rc |= sim_gemm_add(gpu, S, L, Dv, BH, x->dt, x->dt, 2.0 * BH * S * L * Dv * frac,
				   a, 0); /* dP = dO V^T */
		f = p->flops;
		sim_ew_add(gpu, LLMSIM_EW_SOFTMAX, LLMSIM_PASS_BWD, BH * S, L, x->dt, a, 0);
		p->flops = f;
		rc |= sim_gemm_add(gpu, S, D, L, BH, x->dt, x->dt, 2.0 * BH * S * L * D * frac, a,
				   0); /* dQ = dS K */
		rc |= sim_gemm_add(gpu, L, D, S, BH, x->dt, x->dt, 2.0 * BH * S * L * D * frac, a,
				   0); /* dK = dS^T Q */
	}
	/* the scores (then probabilities, in place) or dP/dS: one N^2 matrix */
	p->workspace_bytes = sim_max(p->workspace_bytes, x->B * x->H * x->S * x->L * x->e);
	return rc;
}

/* ---- the naive programs as PyTorch runs them (forward) ----
 *
 * PyTorch's math backend (aten/src/ATen/native/transformers/attention.cpp,
 * _scaled_dot_product_attention_math): BF16/FP16 Q, K and V upcast to FP32
 * unless allow_fp16_bf16_reduction_math_sdp(True); Q scaled by sqrt(scale);
 * a causal mask built as ones(S, L).tril(), then zeros_like and
 * masked_fill_(logical_not) into the score type; K repeated per query head
 * (enable_gqa); K^T scaled by sqrt(scale) (a copy); the scores QK^T (FP32:
 * cuBLAS's SIMT SGEMM, TF32 being off for matmuls by default); the mask
 * added in place; _safe_softmax: softmax, eq(-inf), all over the row and
 * a where(); P V; the output and the probabilities cast back.
 *
 * HF transformers' eager_attention_forward: repeat_kv copies of K and V,
 * BF16 QK^T, * scaling, + the causal mask (built once per forward: not
 * here), softmax(dtype=float32) writing FP32, .to(bf16), BF16 P V, then
 * transpose(1, 2).contiguous(). */

static int program(const struct llmsim_gpu *gpu, const struct attn *x, enum llmsim_attn_impl impl,
		   struct sim_acc *a, int main)
{
	int64_t B = (int64_t)x->B, H = (int64_t)x->H, G = (int64_t)x->G, S = (int64_t)x->S;
	int64_t L = (int64_t)x->L, D = (int64_t)x->D, Dv = (int64_t)x->Dv, BH = B * H;
	enum llmsim_dtype in = x->dt, f32 = LLMSIM_DT_FP32, i8 = LLMSIM_DT_INT8;
	/* the whole S x L is computed, masked or not: every FLOP counts */
	double frac = 1;
	int rc = 0;
	if (impl == LLMSIM_ATTN_HF_EAGER) {
		if (G < H) { /* repeat_kv: expand + reshape, a copy each */
			sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * L, D, in, in, 0, a);
			sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * L, Dv, in, in, 0, a);
		}
		rc |= sim_gemm_add(gpu, S, L, D, BH, in, in, 2.0 * BH * S * L * D * frac, a, main);
		sim_ew_add_as(gpu, LLMSIM_EW_MUL, BH * S, L, in, in, 1, a); /* * scaling */
		sim_ew_add_as(gpu, LLMSIM_EW_ADD, BH * S, L, in, in, 1, a); /* + mask */
		sim_ew_add_as(gpu, LLMSIM_EW_SOFTMAX, BH * S, L, in, f32, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * S, L, f32, in, 0, a); /* .to(bf16) */
		rc |= sim_gemm_add(gpu, S, Dv, L, BH, in, in, 2.0 * BH * S * L * Dv * frac, a, 0);
		sim_ew_strided_copy(gpu, BH * S * Dv, in, a); /* transpose(1, 2).contiguous() */
		a->p->workspace_bytes = sim_max(a->p->workspace_bytes, x->B * x->H * x->S * x->L * 6);
		return rc;
	}
	int up = impl == LLMSIM_ATTN_SDPA_MATH && (in == LLMSIM_DT_BF16 || in == LLMSIM_DT_FP16);
	enum llmsim_dtype t = up ? f32 : in;
	if (up) { /* .to(float) of Q, K and V */
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * S, D, in, f32, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, B * G * L, D, in, f32, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, B * G * L, Dv, in, f32, 0, a);
	}
	sim_ew_add_as(gpu, LLMSIM_EW_MUL, BH * S, D, t, t, 1, a); /* Q * sqrt(scale) */
	if (x->causal) { /* ones().tril(), zeros_like, logical_not, masked_fill_ */
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, S, L, i8, i8, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, S, L, i8, i8, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, S, L, t, t, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, S, L, i8, i8, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, S, L, t, t, 0, a);
	}
	if (G < H) { /* enable_gqa: K and V repeated per query head */
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * L, D, t, t, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * L, Dv, t, t, 0, a);
	}
	sim_ew_add_as(gpu, LLMSIM_EW_MUL, BH * L, D, t, t, 1, a); /* K^T * sqrt(scale) */
	rc |= sim_gemm_add(gpu, S, L, D, BH, t, t, 2.0 * BH * S * L * D * frac, a, main);
	if (x->causal)
		sim_ew_add_as(gpu, LLMSIM_EW_ADD, BH * S, L, t, t, 1, a); /* += mask */
	/* _safe_softmax */
	sim_ew_add_as(gpu, LLMSIM_EW_SOFTMAX, BH * S, L, t, t, 0, a);
	sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * S, L, t, i8, 0, a);   /* eq(-inf) */
	sim_ew_add_as(gpu, LLMSIM_EW_REDUCE, BH * S, L, i8, i8, 0, a); /* all(dim) */
	sim_ew_add_as(gpu, LLMSIM_EW_MUL, BH * S, L, t, t, 1, a);     /* where(rows, 0, p) */
	rc |= sim_gemm_add(gpu, S, Dv, L, BH, t, t, 2.0 * BH * S * L * Dv * frac, a, 0);
	if (up) { /* the output and the probabilities .to(bf16) */
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * S, Dv, f32, in, 0, a);
		sim_ew_add_as(gpu, LLMSIM_EW_COPY, BH * S, L, f32, in, 0, a);
	}
	a->p->workspace_bytes =
		sim_max(a->p->workspace_bytes, x->B * x->H * x->S * x->L * 2 * llmsim_dtype_bytes(t));
	return rc;
}

/* ---- FlashAttention-1: outer loop over K/V blocks, inner over Q blocks,
 * one block per (batch, head); O, l, m read and written per K/V block ---- */

static void fa1_tiles(const struct llmsim_gpu *gpu, const struct attn *x, int *br, int *bc)
{
	double M = gpu->smem_bytes_per_block_max / x->e; /* SRAM in elements */
	*bc = (int)sim_ceil(M / (4 * x->D));
	*br = (int)sim_min(*bc, x->D);
	if (*bc > x->L)
		*bc = (int)x->L;
	if (*br > x->S)
		*br = (int)x->S;
}

static void fa1(const struct llmsim_gpu *gpu, const struct attn *x, int bwd, struct sim_acc *a,
		int main)
{
	int br, bc, tensor;
	fa1_tiles(gpu, x, &br, &bc);
	double rate = sim_mm_rate(gpu, x->dt, &tensor);
	double pairs = tile_pairs(x, br, bc), BH = x->B * x->H, e = x->e;
	double D = x->D, Dv = x->Dv, grp = x->H / x->G;
	struct kern k;
	memset(&k, 0, sizeof k);
	k.threads = 128;
	k.regs = (int)sim_min(gpu->registers_per_thread_max > 0 ? gpu->registers_per_thread_max : 255,
			   (double)br * bc / k.threads + 40);
	k.smem_per_block_bytes = (br * (D + Dv) + bc * (D + Dv)) * e;
	int bps = sim_blocks_per_sm(gpu, k.threads, k.regs, k.smem_per_block_bytes);
	if (bps <= 0)
		k.smem_per_block_bytes = gpu->smem_bytes_per_block_max, bps = 1;
	k.blocks = (int64_t)BH;
	k.mm_rate_flops_per_s = rate;
	k.mm_tensor = tensor;
	double scores = BH * pairs * br * bc;
	double resident = sim_min(BH, (double)gpu->sms * bps);
	/* K, V: read once per query head, shared by a group through L2 */
	double kv_u = x->B * x->G * x->L * (D + Dv) * e, kv_tr = BH * x->L * (D + Dv) * e;
	double kv_h = sim_l2_filter(gpu, kv_u, kv_tr, sim_ceil(resident / grp) * x->L * (D + Dv) * e);
	/* per (K/V block, Q block): the Q block (and dO, dQ) and the running
	 * O and statistics go through HBM */
	double q_row = bwd ? (2 * D + 2 * Dv) * e + 8 : (D + Dv) * e + 8;
	double w_row = bwd ? D * e : Dv * e + 8;
	double r_u = BH * x->S * q_row, w_u = BH * x->S * w_row;
	double r_tr = BH * pairs * br * q_row, w_tr = BH * pairs * br * w_row;
	double ws = resident * x->S * (q_row + w_row);
	double r_h = sim_l2_filter(gpu, r_u, r_tr, ws), w_h = sim_l2_filter(gpu, w_u, w_tr, ws);
	k.hbm_read_bytes = kv_h + r_h;
	k.hbm_write_bytes = w_h + (bwd ? x->B * x->H * x->L * (D + Dv) * e : 0);
	k.l2_bytes = kv_tr - kv_h + r_tr - r_h;
	k.l2_store_bytes = w_tr - w_h;
	if (!bwd) {
		k.mm_flops = scores * 2 * (D + Dv);
		k.mm_eff = gpu->param[LLMSIM_PARAM_ATTENTION_TENSOR_FRACTION];
		/* softmax plus the rescale of O after every K/V block */
		k.vec_flops = scores * (4 + 2 * Dv / bc);
		k.sfu_ops = scores;
	} else {
		k.mm_flops = scores * 2 * (3 * D + 2 * Dv);
		k.mm_eff = gpu->param[LLMSIM_PARAM_ATTENTION_TENSOR_FRACTION] *
			   gpu->param[LLMSIM_PARAM_ATTENTION_BWD_RELATIVE];
		k.vec_flops = scores * 6;
		k.sfu_ops = scores;
	}
	k.smem_bytes = BH * pairs * (bc * (D + Dv) * e * 5 + br * (D + Dv) * e * 2);
	k.inflight_bytes_per_block = br * q_row;
	k.fill_s = gpu->hbm_latency_s;
	if (main || !a->p->tile_m) {
		a->p->tile_m = br;
		a->p->tile_n = bc;
	}
	sim_acc_kern(a, gpu, &k, main);
}

/* ---- FlashAttention-2 and -3 ---- */

/* The work of the busiest SM over what kernel.c gives it (the average
 * work per block times its rounds of blocks), when the blocks of a
 * causal grid differ in length: `longest` tiles for the last q tile (or
 * the first K/V tile of a backward), `tiles` in all.
 *  - A grid of at most one block per SM takes as long as its longest
 *    block: the last q tile sees every K/V tile, the average about half.
 *  - A larger grid is handed out in grid order as SMs free up (FA2 has
 *    no tile scheduler): the SMs run out of blocks at different times,
 *    spread over about one block, and the kernel ends with the last:
 *    the average work per SM plus half the longest block (greedy list
 *    scheduling; Graham's bound is the average plus the longest).
 *    A persistent kernel that hands out the longest tiles first (FA3's
 *    causal tile scheduler) leaves no such tail: lpt = 1. */
static double critical_path(const struct llmsim_gpu *gpu, const struct attn *x, double longest,
			    int64_t blocks, double tiles, int lpt)
{
	double sms = gpu->sms, n = (double)blocks;
	if (!x->causal || tiles <= 0 || n <= 0)
		return 1;
	double rounds = sim_ceil(n / sms), avg = tiles / sms;
	double priced = tiles / n * rounds; /* kernel.c: the busiest SM's blocks, average ones */
	double busiest = n <= sms ? longest : lpt ? sim_max(longest, avg) : avg + longest / 2;
	return sim_max(1, busiest / priced);
}

static void flash_fwd(const struct llmsim_gpu *gpu, const struct attn *x, int v3,
		      struct sim_acc *a, int main)
{
	int br = 128, bc, warps, tensor;
	double D = x->D, Dv = x->Dv, e = x->e, BH = x->B * x->H, grp = x->H / x->G;
	struct kern k;
	memset(&k, 0, sizeof k);
	if (!v3) {
		bc = D <= 64 ? 128 : 64;
		warps = D <= 128 ? 4 : 8;
		k.threads = warps * 32;
		k.regs = (int)((br * Dv + br * bc) / k.threads) + 40;
		k.smem_per_block_bytes = (br * D + bc * (D + Dv)) * e;
	} else {
		/* producer warpgroup + 2 consumer warpgroups, 2-stage K/V ring */
		bc = D <= 64 ? 192 : D <= 128 ? 128 : 80;
		warps = 12;
		k.threads = 384;
		k.regs = 168;
		k.smem_per_block_bytes = (br * D + 2.0 * bc * (D + Dv)) * e;
		k.overlap_math = 1;
	}
	if (gpu->registers_per_thread_max > 0 && k.regs > gpu->registers_per_thread_max)
		k.regs = gpu->registers_per_thread_max;
	if (br > x->S)
		br = (int)sim_max(64, sim_ceil(x->S / 64) * 64);
	int bps = sim_blocks_per_sm(gpu, k.threads, k.regs, k.smem_per_block_bytes);
	if (bps <= 0)
		k.smem_per_block_bytes = gpu->smem_bytes_per_block_max, bps = 1;
	double tr = sim_ceil(x->S / br), pairs = tile_pairs(x, br, bc), scores = BH * pairs * br * bc;
	k.blocks = (int64_t)(BH * tr);
	k.mm_rate_flops_per_s = sim_mm_rate(gpu, x->dt, &tensor);
	k.mm_tensor = tensor;
	k.mm_flops = scores * 2 * (D + Dv);
	k.mm_eff = gpu->param[v3 ? LLMSIM_PARAM_ATTENTION3_TENSOR_FRACTION :
				   LLMSIM_PARAM_ATTENTION_TENSOR_FRACTION];
	/* softmax (max, scale, sum, convert) and the rescale of the O
	 * accumulators after every K/V tile: Dv / Bc multiplies per score */
	k.vec_flops = scores * (4 + Dv / bc);
	k.sfu_ops = scores;
	/* FA2: with two blocks of 4 warps per SM, two warps per scheduler,
	 * one warp's exps run in the MUFU pipe while the other issues its
	 * MMAs; a grid of at most one block per SM has one warp per
	 * scheduler and runs them in turn */
	k.sfu_overlap = !v3 && sim_min(bps, sim_ceil(k.blocks / (double)gpu->sms)) >= 2;
	/* causal blocks differ in length: the busiest SM's work */
	double busiest = critical_path(gpu, x, sim_ceil(x->L / bc), k.blocks, pairs * BH, v3);
	k.mm_flops *= busiest;
	k.vec_flops *= busiest;
	k.sfu_ops *= busiest;
	/* FA3 peels the tiles the causal diagonal cuts out of its pipelined
	 * mainloop: there softmax and MMAs run one after the other (H200
	 * cuDNN causal forward at 512 tokens, 40% of its tiles cut: 25%
	 * slower than the pipelined rate) */
	if (v3)
		k.serial_frac = masked_pairs(x, br, bc) / pairs;
	/* Q read and O (+ fp32 LSE) written once; K/V re-read per q block,
	 * from L2 when the heads in flight keep them there */
	double kv_u = x->B * x->G * x->L * (D + Dv) * e;
	double kv_tr = BH * pairs * bc * (D + Dv) * e;
	double ws = sim_ceil(wave_heads(gpu, bps, tr, BH) / grp) * x->L * (D + Dv) * e;
	double kv_h = sim_l2_filter(gpu, kv_u, kv_tr, ws);
	k.hbm_read_bytes = BH * x->S * D * e + kv_h;
	k.hbm_write_bytes = BH * x->S * (Dv * e + 4);
	k.l2_bytes = kv_tr - kv_h;
	/* K/V tiles written to smem once and read by each consumer warp
	 * (FA2) or warpgroup's wgmma (FA3) */
	k.smem_bytes = BH * pairs * bc * (D + Dv) * e * (1 + (v3 ? 2 : warps)) +
		       k.blocks * br * D * e * 2;
	k.inflight_bytes_per_block = (v3 ? 2 : 1) * bc * (D + Dv) * e;
	k.fill_s = gpu->hbm_latency_s;
	/* FA2 starts each q tile's block by loading Q and ends it storing O
	 * (exposed per round of blocks); FA3's forward is persistent, its
	 * producer loading the next tile's Q under the current mainloop and
	 * its epilogue overlapped with the next tile (FA3 paper, sec. 3) */
	k.block_edge_bytes = v3 ? 0 : br * (D + Dv) * e;
	/* ... but its first tiles' Q and its last tiles' O are exposed once
	 * per kernel: a DRAM round trip more than the fill and those bytes
	 * of the blocks in flight at the HBM bandwidth */
	if (v3)
		k.fill_s += gpu->hbm_latency_s +
			    sim_min((double)k.blocks, (double)gpu->sms * bps) * br * (D + Dv) * e /
				    (gpu->hbm_bytes_per_s * gpu->param[LLMSIM_PARAM_HBM_FRACTION]);
	if (main || !a->p->tile_m) {
		a->p->tile_m = br;
		a->p->tile_n = bc;
	}
	sim_acc_kern(a, gpu, &k, main);
}

static void flash_bwd(const struct llmsim_gpu *gpu, const struct attn *x, int v3,
		      struct sim_acc *a, int main)
{
	double D = x->D, Dv = x->Dv, e = x->e, BH = x->B * x->H, grp = x->H / x->G;
	int br = D <= 64 ? 128 : 64, bc = D <= 128 ? 128 : 64, tensor;
	struct kern k;

	/* 0: PyTorch's SDPA hands FA2 dO as the (B, S, H, D) view of a
	 * (B, H, S, D) tensor and makes it contiguous first
	 * (_flash_attention_backward: grad_out.contiguous()): a strided copy */
	if (!v3)
		sim_ew_strided_copy(gpu, (int64_t)(BH * x->S * Dv), x->dt, a);

	/* 1: Dvec = rowsum(dO * O) (fp32), and dQ accumulator zeroed */
	sim_stream_kern(gpu, &k, BH * x->S * Dv, e, 2 * BH * x->S * Dv * e,
			BH * x->S * (4 + D * 4), 2 * BH * x->S * Dv);
	sim_acc_kern(a, gpu, &k, 0);

	/* 2: one block per (batch, head, K/V tile), looping over q tiles */
	memset(&k, 0, sizeof k);
	k.threads = v3 ? 384 : 256;
	k.regs = (int)sim_min(gpu->registers_per_thread_max > 0 ? gpu->registers_per_thread_max : 255,
			   bc * (D + Dv) / (v3 ? 256 : k.threads) + 64);
	k.smem_per_block_bytes = (bc * (D + Dv) + 2.0 * br * (D + Dv) + br * bc) * e;
	int bps = sim_blocks_per_sm(gpu, k.threads, k.regs, k.smem_per_block_bytes);
	if (bps <= 0) {
		k.regs = 128;
		k.smem_per_block_bytes = gpu->smem_bytes_per_block_max;
		bps = 1;
	}
	double tc = sim_ceil(x->L / bc), pairs = tile_pairs(x, br, bc), scores = BH * pairs * br * bc;
	k.blocks = (int64_t)(BH * tc);
	k.mm_rate_flops_per_s = sim_mm_rate(gpu, x->dt, &tensor);
	k.mm_tensor = tensor;
	k.mm_flops = scores * 2 * (3 * D + 2 * Dv);
	/* FA3's backward is its own design (producer warp, two consumer
	 * warpgroups, dQ accumulated by TMA reduce-adds): its ratio to the
	 * forward is its own parameter */
	k.mm_eff = v3 ? gpu->param[LLMSIM_PARAM_ATTENTION3_TENSOR_FRACTION] *
			     gpu->param[LLMSIM_PARAM_ATTENTION3_BWD_RELATIVE] :
			gpu->param[LLMSIM_PARAM_ATTENTION_TENSOR_FRACTION] *
			     gpu->param[LLMSIM_PARAM_ATTENTION_BWD_RELATIVE];
	k.vec_flops = scores * 6;
	k.sfu_ops = scores;
	/* both run 8 MMA warps per SM (FA2: one block of 8; FA3: two
	 * consumer warpgroups), two per scheduler: the exps overlap the
	 * other warp's MMAs. Neither backward overlaps its softmax with its
	 * own GEMMs (no ping-pong: S, P, dP, dS, then dV, dK, dQ in turn per
	 * tile), so the FP32 work adds to the matrix time (H200, cuDNN:
	 * the 64 -> 128 head-dim step costs one matrix time more and the
	 * same softmax time, 0.97 ps vs 0.47 ps per score, per long case) */
	k.sfu_overlap = 1;
	/* causal: the first K/V tile's block sees every q tile */
	double busiest = critical_path(gpu, x, sim_ceil(x->S / br), k.blocks, pairs * BH, v3);
	k.mm_flops *= busiest;
	k.vec_flops *= busiest;
	k.sfu_ops *= busiest;
	/* K, V read once per query head (shared by the group through L2);
	 * Q, dO, LSE, Dvec re-read per K/V tile; dK, dV written per query
	 * head; dQ accumulated with fp32 atomics in L2 */
	double kv_u = x->B * x->G * x->L * (D + Dv) * e, kv_tr = BH * x->L * (D + Dv) * e;
	double heads = wave_heads(gpu, bps, tc, BH);
	double kv_h = sim_l2_filter(gpu, kv_u, kv_tr, sim_ceil(heads / grp) * x->L * (D + Dv) * e);
	double row = (D + Dv) * e + 8;
	double q_u = BH * x->S * row, q_tr = BH * pairs * br * row;
	double q_h = sim_l2_filter(gpu, q_u, q_tr, heads * x->S * row);
	double dq_atomic = 2 * BH * pairs * br * D * 4;
	k.hbm_read_bytes = kv_h + q_h;
	k.hbm_write_bytes = BH * x->L * (D + Dv) * e + BH * x->S * D * 4;
	k.l2_bytes = kv_tr - kv_h + q_tr - q_h;
	k.l2_store_bytes = dq_atomic;
	k.smem_bytes = BH * pairs * (br * row * 2 * 4 + br * bc * e * 4);
	k.inflight_bytes_per_block = 2 * br * row;
	k.fill_s = gpu->hbm_latency_s;
	/* each block loads its K, V tiles and its first Q, dO tiles (with
	 * their LSE and Dvec rows) before its loop and stores dK, dV after
	 * it (H200: at a fixed 16K tokens x 32 heads, FA2's backward takes
	 * 0.43-0.91 ms beyond its work's share; these per-round edges of its
	 * one block per SM, and the dO copy, explain most of it) */
	k.block_edge_bytes = 2 * bc * (D + Dv) * e + br * row;
	if (main || !a->p->tile_m) {
		a->p->tile_m = br;
		a->p->tile_n = bc;
	}
	sim_acc_kern(a, gpu, &k, main);

	/* 3: dQ fp32 accumulator to dtype */
	sim_stream_kern(gpu, &k, BH * x->S * D, 4, BH * x->S * D * 4, BH * x->S * D * e,
			BH * x->S * D);
	sim_acc_kern(a, gpu, &k, 0);

	/* 4: with grouped K/V, the per-query-head dK, dV summed per group */
	if (grp > 1) {
		double n = BH * x->L * (D + Dv);
		sim_stream_kern(gpu, &k, n, e, n * e, n / grp * e, n);
		sim_acc_kern(a, gpu, &k, 0);
	}
}

static int check(const struct llmsim_gpu *gpu, const struct llmsim_op *op, struct attn *x,
		 struct llmsim_err *err)
{
	const __typeof__(op->u.attn) *t = &op->u.attn;
	int64_t G = t->kv_heads ? t->kv_heads : t->heads;
	int64_t L = t->kv_seq ? t->kv_seq : t->seq;
	int64_t Dv = t->v_head_dim ? t->v_head_dim : t->head_dim;
	int64_t v;
	int rc;
	if ((unsigned)t->impl >= LLMSIM_ATTN_IMPL_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "attention: unknown impl (%d)",
				      (int)t->impl);
	if ((unsigned)t->pass > LLMSIM_PASS_FWDBWD)
		return llmsim_err_set(err, LLMSIM_EINVAL, "attention: unknown pass (%d)",
				      (int)t->pass);
	if (t->batch <= 0 || t->heads <= 0 || G <= 0 || t->seq <= 0 || L <= 0 ||
	    t->head_dim <= 0 || Dv <= 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "attention sizes must be positive (batch=%lld heads=%lld "
				      "kv_heads=%lld seq=%lld kv_seq=%lld head_dim=%lld)",
				      (long long)t->batch, (long long)t->heads, (long long)G,
				      (long long)t->seq, (long long)L, (long long)t->head_dim);
	if (t->heads % G)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "heads (%lld) must be divisible by kv_heads (%lld)",
				      (long long)t->heads, (long long)G);
	if (t->causal && L < t->seq)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "causal attention needs kv_seq (%lld) >= seq (%lld)",
				      (long long)L, (long long)t->seq);
	if ((rc = sim_mul_chk(err, "attention FLOPs (batch*heads*seq*kv_seq*head_dim*12)", 6,
			      (int64_t[]){t->batch, t->heads, t->seq, L,
					  t->head_dim > Dv ? t->head_dim : Dv, 12},
			      &v)))
		return rc;
	if ((rc = sim_check_dtype(gpu, op->dtype, "attention", err)))
		return rc;
	int tensor;
	sim_mm_rate(gpu, op->dtype, &tensor);
	const char *impl = llmsim_attn_impl_name(t->impl);
	if (t->impl == LLMSIM_ATTN_FLASH3 && !sim_is_hopper(gpu))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "flash3 needs a Hopper (sm_90) GPU; %s is %s", gpu->name,
				      gpu->arch[0] ? gpu->arch : "not one");
	int prog = t->impl == LLMSIM_ATTN_SDPA_MATH || t->impl == LLMSIM_ATTN_SDPA_MATH_BF16 ||
		   t->impl == LLMSIM_ATTN_HF_EAGER;
	if (prog && t->pass != LLMSIM_PASS_FWD)
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "%s is priced forward only (its backward is autograd's "
				      "kernels, not modelled)", impl);
	if (prog && t->impl != LLMSIM_ATTN_SDPA_MATH && !tensor)
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED, "%s has no %s matmul on %s", impl,
				      llmsim_dtype_name(op->dtype), gpu->name);
	if (t->impl != LLMSIM_ATTN_NAIVE && !prog) {
		int ok = op->dtype == LLMSIM_DT_BF16 || op->dtype == LLMSIM_DT_FP16 ||
			 (t->impl == LLMSIM_ATTN_FLASH3 && op->dtype == LLMSIM_DT_FP8 &&
			  t->pass == LLMSIM_PASS_FWD);
		if (!ok || !tensor)
			return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
					      "%s has no %s %s kernel (bf16/fp16%s)", impl,
					      llmsim_dtype_name(op->dtype),
					      llmsim_pass_name(t->pass),
					      t->impl == LLMSIM_ATTN_FLASH3 ? ", fp8 forward" : "");
		if (t->head_dim > 256 || Dv > 256)
			return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
					      "%s supports head dims up to 256 (got %lld)", impl,
					      (long long)(t->head_dim > Dv ? t->head_dim : Dv));
	}
	x->B = (double)t->batch;
	x->H = (double)t->heads;
	x->G = (double)G;
	x->S = (double)t->seq;
	x->L = (double)L;
	x->D = (double)t->head_dim;
	x->Dv = (double)Dv;
	x->e = llmsim_dtype_bytes(op->dtype);
	x->causal = !!t->causal;
	x->dt = op->dtype;
	return 0;
}

int sim_attention(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		  struct llmsim_pred *p, struct llmsim_err *err)
{
	struct attn x;
	int rc = check(gpu, op, &x, err);
	if (rc)
		return rc;
	struct sim_acc a;
	sim_acc_init(&a, p);
	enum llmsim_pass pass = op->u.attn.pass;
	for (int bwd = 0; bwd < 2; bwd++) {
		if ((bwd && pass == LLMSIM_PASS_FWD) || (!bwd && pass == LLMSIM_PASS_BWD))
			continue;
		int main = bwd ? pass == LLMSIM_PASS_BWD : 1;
		switch (op->u.attn.impl) {
		case LLMSIM_ATTN_NAIVE:
			if (naive(gpu, &x, bwd, &a, main))
				return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
						      "attention: no GEMM tile fits on %s", gpu->name);
			break;
		case LLMSIM_ATTN_SDPA_MATH:
		case LLMSIM_ATTN_SDPA_MATH_BF16:
		case LLMSIM_ATTN_HF_EAGER:
			if (program(gpu, &x, op->u.attn.impl, &a, main))
				return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
						      "attention: no GEMM tile fits on %s", gpu->name);
			break;
		case LLMSIM_ATTN_FLASH1:
			p->flops += bwd ? bwd_flops(&x) : fwd_flops(&x);
			fa1(gpu, &x, bwd, &a, main);
			break;
		default:
			p->flops += bwd ? bwd_flops(&x) : fwd_flops(&x);
			if (bwd)
				flash_bwd(gpu, &x, op->u.attn.impl == LLMSIM_ATTN_FLASH3, &a, main);
			else
				flash_fwd(gpu, &x, op->u.attn.impl == LLMSIM_ATTN_FLASH3, &a, main);
			break;
		}
	}
	sim_acc_finish(&a);
	return 0;
}
