/*
 * decode.c - the cost descriptions of decode attention: q_len query
 * tokens per sequence (1, or k+1 to verify k drafted tokens) against a KV
 * cache of kv_len tokens.
 *
 * The work is small and the KV cache read dominates: batch * kv_heads *
 * kv_len * (K + V bytes per token) plus Q, O and, for paged caches, the
 * block table. What differs between implementations is how many blocks
 * stream the cache (flash2: one per (sequence, K/V head), few at small
 * batch, latency bound; flashdecoding: FlashAttention-2's split-KV
 * kernel with the split count its num_splits heuristic picks, then its
 * combine kernel, or its plain forward kernel when the row blocks already
 * fill the SMs; paged: vLLM-style partitions of 512
 * tokens over block_size-token pages, the last page read whole) and what
 * naive materializes (repeat_kv copies, scores in HBM).
 *
 * MLA (kv_lora_rank R > 0, rope_dim P): one latent of R + P values per
 * token shared by all heads. Absorbed: attention runs in the latent space
 * (QK dim R+P, V dim R, one K/V head: MQA-like). Materialized: every step
 * up-projects the latent cache to per-head K (head_dim + P) and V
 * (head_dim) with a GEMM, writes them, and runs multi-head attention.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

struct dec {
	double B, H, G, L, Q, Dqk, Dv;
	double tok_bytes;   /* cache bytes per token per K/V head (K and V) */
	double e;           /* dtype bytes (Q, O, scores) */
	double bs;          /* paged block size */
	enum llmsim_dtype dt;
};

static double useful_flops(const struct dec *x)
{
	return x->B * x->H * x->Q * x->L * 2 * (x->Dqk + x->Dv);
}

/* the attention block: one (sequence, K/V head, KV chunk, group of up to
 * 64 query rows), 4 warps, streaming bc-token tiles double-buffered
 * through shared memory (bc halved until the tiles fit) */
enum { DEC_BC = 64, DEC_ROWS = 64, DEC_THREADS = 128, DEC_REGS = 96, PAGED_PART = 512 };

/* How a decode kernel tiles its work: rows (query rows of one K/V head)
 * per block and how many such row groups each (sequence, K/V head) has,
 * the rows the MMA computes (padded), the KV tile and its buffering. */
struct dshape {
	double rows, groups;  /* query rows per block; row blocks per K/V head */
	double mma_rows;      /* rows the tensor-core MMA runs (padding) */
	double bc;            /* KV tokens per tile */
	double stages;        /* KV tiles buffered in shared memory */
	int regs;
};

/* llmsim's own decode block (flash2, paged): up to 64 query rows of one
 * K/V head, 4 warps, bc-token tiles double-buffered (bc halved until the
 * tiles fit), the MMA at least 16 rows */
static struct dshape own_shape(const struct llmsim_gpu *gpu, const struct dec *x)
{
	double rows_all = x->H / x->G * x->Q;
	struct dshape s = {.rows = sim_min(rows_all, DEC_ROWS),
			   .groups = sim_ceil(rows_all / DEC_ROWS),
			   .bc = DEC_BC, .stages = 2, .regs = DEC_REGS};
	s.mma_rows = sim_max(16, s.rows);
	while (s.bc > 16 && s.stages * s.bc * x->tok_bytes + s.rows * x->Dqk * x->e >
				    gpu->smem_bytes_per_block_max)
		s.bc /= 2;
	return s;
}

static void dec_kern(const struct llmsim_gpu *gpu, const struct dec *x, const struct dshape *s,
		     double blocks_per_head, double kv_bytes, struct kern *k)
{
	int tensor;
	memset(k, 0, sizeof *k);
	k->threads = DEC_THREADS;
	k->regs = s->regs;
	k->smem_per_block_bytes = sim_min(s->stages * s->bc * x->tok_bytes +
						  s->rows * x->Dqk * x->e,
					  gpu->smem_bytes_per_block_max);
	k->blocks = (int64_t)(x->B * x->G * blocks_per_head * s->groups);
	k->mm_rate_flops_per_s = sim_mm_rate(gpu, x->dt, &tensor);
	k->mm_tensor = tensor;
	k->mm_eff = gpu->param[LLMSIM_PARAM_ATTENTION_TENSOR_FRACTION];
	k->mm_flops = x->B * x->G * s->groups * s->mma_rows * x->L * 2 * (x->Dqk + x->Dv);
	/* the padded rows run the softmax too */
	double scores = x->B * x->G * s->groups * s->mma_rows * x->L;
	k->vec_flops = 4 * scores;
	k->sfu_ops = scores;
	/* mm_eff is the MMA-only fraction of FA2's prefill kernel
	 * (attention.c), whose exps run in the MUFU pipe beside the MMAs
	 * of the other warps; FA2's split-KV decode kernel is the same
	 * code with a short query tile */
	k->sfu_overlap = 1;
	/* each row group streams the cache: once from HBM, again from L2 */
	k->hbm_read_bytes = kv_bytes + x->B * x->H * x->Q * x->Dqk * x->e;
	k->l2_bytes = (s->groups - 1) * kv_bytes;
	k->smem_bytes = 2 * kv_bytes * s->groups;
	k->inflight_bytes_per_block = s->stages * s->bc * x->tok_bytes;
	k->fill_s = gpu->hbm_latency_s;
	k->hbm_eff = gpu->param[LLMSIM_PARAM_DECODE_HBM_FRACTION];
}

/* One way to run the attention kernel: the cache split into `splits`
 * chunks per (sequence, K/V head), each writing fp32 partial O and LSE
 * that a second kernel reduces (none when splits is 1). Fills k and r and
 * returns the time of both. */
static double build(const struct llmsim_gpu *gpu, const struct dec *x, const struct dshape *s,
		    double splits, double kv_bytes, double table, struct kern *k, struct kern *r)
{
	struct ktime t;
	double rows = x->B * x->H * x->Q;
	double out = rows * x->Dv * x->e;
	dec_kern(gpu, x, s, splits, kv_bytes, k);
	/* block table: one int32 per page, read by every block of a sequence */
	k->hbm_read_bytes += table;
	k->l2_bytes += table * (x->G * splits - 1);
	if (splits <= 1) {
		k->hbm_write_bytes = out;
		sim_kern_time(gpu, k, &t);
		return t.time_s;
	}
	double part = rows * splits * (x->Dv + 1) * 4;
	int fits = part <= sim_l2_reuse_bytes(gpu);
	if (fits)
		k->l2_store_bytes = part;
	else
		k->hbm_write_bytes += part;
	sim_reduce_kern(gpu, r, rows * x->Dv, splits, part, fits, out);
	r->vec_flops *= 3; /* rescale by exp(lse_i - lse) and sum */
	r->sfu_ops = rows * splits;
	double time = 0;
	sim_kern_time(gpu, k, &t);
	time += t.time_s;
	sim_kern_time(gpu, r, &t);
	return time + t.time_s;
}

/* Run the cache split in `splits` chunks or whole, whichever is faster (as
 * a tuned split heuristic chooses), and add the kernels. */
static void add_best(const struct llmsim_gpu *gpu, const struct dec *x, double splits,
		     double kv_bytes, double table, int tile_n, struct sim_acc *a)
{
	struct kern k1, r1, ks, rs;
	struct dshape s = own_shape(gpu, x);
	double t1 = build(gpu, x, &s, 1, kv_bytes, table, &k1, &r1);
	double ts = splits > 1 ? build(gpu, x, &s, splits, kv_bytes, table, &ks, &rs) : INFINITY;
	struct llmsim_pred *p = a->p;
	p->tile_m = (int)sim_min(DEC_ROWS, sim_max(16, x->H / x->G * x->Q));
	p->tile_n = tile_n;
	if (t1 <= ts) {
		p->split_k = 1;
		sim_acc_kern(a, gpu, &k1, 1);
		return;
	}
	p->split_k = (int)splits;
	p->workspace_bytes = sim_max(p->workspace_bytes, x->B * x->H * x->Q * splits * (x->Dv + 1) * 4);
	sim_acc_kern(a, gpu, &ks, 1);
	sim_acc_kern(a, gpu, &rs, 0);
}

/* FlashAttention-2's choice of KV splits (flash_api.cpp,
 * num_splits_heuristic): none when the row blocks nearly fill the slots;
 * else, among the split counts that change the tiles per split, the
 * smallest whose wave efficiency (blocks / slots over its whole waves) is
 * within 85% of the best. */
enum { FA2_MAX_SPLITS = 128 };

static int fa2_num_splits(double row_blocks, double slots, double n_blocks)
{
	if (row_blocks >= 0.8 * slots)
		return 1;
	int max = (int)sim_min(FA2_MAX_SPLITS, sim_min(slots, n_blocks));
	double eff[FA2_MAX_SPLITS + 1], best = 0;
	for (int n = 1; n <= max; n++) {
		eff[n] = 0;
		if (n > 1 && sim_ceil(n_blocks / n) == sim_ceil(n_blocks / (n - 1)))
			continue; /* not eligible: the same tiles per split as n - 1 */
		double waves = row_blocks * n / slots;
		eff[n] = waves / sim_ceil(waves);
		best = sim_max(best, eff[n]);
	}
	for (int n = 1; n <= max; n++)
		if (eff[n] > 0 && eff[n] >= 0.85 * best)
			return n;
	return 1;
}

/* A block streams its tiles through a one-stage pipeline (FA2: the next
 * tile's K under this tile's softmax and PV, V under QK^T): the first
 * tile's loads and the last tile's math are not overlapped. With one tile
 * per block (few sequences, many splits) load and math run in turn; with
 * many the edge fades. Priced once to learn both, then added to the fill. */
static void pipeline_edges(const struct llmsim_gpu *gpu, struct kern *k, double tiles)
{
	struct ktime t;
	sim_kern_time(gpu, k, &t);
	k->fill_s += sim_min(t.compute_s, t.memory_s) / sim_max(1, tiles);
}

/* FlashAttention-2's combine kernel (flash_fwd_splitkv_combine_kernel):
 * 128 threads per 4 rows (head dim a multiple of 128; 8 of 64, else 16),
 * each block reading the LSE of every split, then its rows' fp32 partial O
 * split after split in a loop whose every load the next one waits on (the
 * partials were just written: L2 hits while they fit, else DRAM trips). */
static void fa2_combine(const struct llmsim_gpu *gpu, const struct dec *x, double splits,
			double part, int fits, struct kern *r)
{
	double rows = x->B * x->H * x->Q;
	double rows_per_block = (int64_t)x->Dv % 128 == 0 ? 4 : (int64_t)x->Dv % 64 == 0 ? 8 : 16;
	sim_reduce_kern(gpu, r, rows * x->Dv, splits, part, fits, rows * x->Dv * x->e);
	r->vec_flops *= 3; /* rescale by exp(lse_i - lse) and sum */
	r->sfu_ops = rows * splits;
	r->threads = 128;
	r->blocks = (int64_t)sim_ceil(rows / rows_per_block);
	r->fill_s += (1 + splits) *
		     (fits ? gpu->param[LLMSIM_PARAM_L2_HIT_ROUND_TRIP_S] : gpu->hbm_latency_s);
}

/* FlashDecoding as FlashAttention-2 runs it (flash_api.cpp, what PyTorch's
 * SDPA calls for one query token): with one query token and grouped K/V,
 * the query heads of a group become the rows of one K/V head
 * (seqlenq_ngroups_swapped). Row blocks of 64 against the slots of two
 * blocks per SM pick the splits (fa2_num_splits, over KV tiles of 128 tokens
 * at head dim 128); with one split the plain forward kernel runs instead:
 * 128-row tiles (the MMA pads the few real rows to 128) over 64-token KV
 * tiles. Both keep one K and one V tile in shared memory and use all 255
 * registers (2 blocks per SM); splits leave fp32 partial O and LSE for the
 * combine kernel. The softmax rescales the O accumulators after every KV
 * tile (Dv / bc multiplies per score, as the prefill forward), and a block
 * waits on one tile of K or of V at a time (V is issued once K has landed). */
static void flashdecoding(const struct llmsim_gpu *gpu, const struct dec *x, double kv_bytes,
			  struct sim_acc *a)
{
	int swapped = x->Q == 1;
	double rows = swapped ? x->H / x->G : x->Q;     /* rows per K/V or query head */
	double heads = swapped ? 1 : x->H / x->G;       /* heads per K/V head */
	double bn = x->Dqk <= 64 ? 256 : x->Dqk <= 128 ? 128 : 64;
	double mblocks = sim_ceil(rows / 64);
	double nblocks = sim_ceil(x->L / bn);
	int splits = fa2_num_splits(x->B * x->G * heads * mblocks, 2.0 * gpu->sms, nblocks);
	double bm = splits > 1 ? 64 : 128;
	/* the forward kernel's KV tile: 128 tokens at head dim 64, else 64
	 * (Flash_fwd_kernel_traits of run_mha_fwd_hdim64 / hdim128) */
	double bn_fwd = x->Dqk <= 64 ? 128 : 64;
	struct dshape s = {.rows = sim_min(rows, bm), .groups = heads * sim_ceil(rows / bm),
			   .mma_rows = bm, .bc = splits > 1 ? bn : bn_fwd, .stages = 1, .regs = 255};
	struct kern k, r;
	struct llmsim_pred *p = a->p;
	double out = x->B * x->H * x->Q * x->Dv * x->e;
	double part = x->B * x->H * x->Q * splits * (x->Dv + 1) * 4;
	int fits = part <= sim_l2_reuse_bytes(gpu);
	dec_kern(gpu, x, &s, splits, kv_bytes, &k);
	double scores = k.sfu_ops;
	k.vec_flops = scores * (4 + x->Dv / s.bc);
	k.inflight_bytes_per_block = s.bc * x->Dqk * (x->tok_bytes / (x->Dqk + x->Dv));
	if (splits <= 1) {
		k.hbm_write_bytes = out;
	} else if (fits) {
		k.l2_store_bytes = part;
	} else {
		k.hbm_write_bytes += part;
	}
	/* KV tiles each block streams: its split's share of the cache */
	pipeline_edges(gpu, &k, sim_ceil(nblocks / splits) * bn / s.bc);
	/* Beyond the first K tile's trip (the fill), the first blocks wait
	 * once more for their first V tile (issued only when K has landed)
	 * and the last ones for their O (or partial O and LSE) stores to land
	 * before the kernel ends; in between, the other resident block covers
	 * these edges */
	k.fill_s += 2 * gpu->hbm_latency_s;
	p->tile_m = (int)bm;
	p->tile_n = (int)s.bc;
	p->split_k = splits;
	sim_acc_kern(a, gpu, &k, 1);
	if (splits > 1) {
		fa2_combine(gpu, x, splits, part, fits, &r);
		p->workspace_bytes = sim_max(p->workspace_bytes, part);
		sim_acc_kern(a, gpu, &r, 0);
	}
}

static int attend(const struct llmsim_gpu *gpu, const struct dec *x, enum llmsim_decode_impl impl,
		  struct sim_acc *a)
{
	struct llmsim_pred *p = a->p;
	double cache = x->B * x->G * x->L * x->tok_bytes;
	double f;
	int rc = 0;
	p->flops += useful_flops(x);
	switch (impl) {
	case LLMSIM_DEC_NAIVE: {
		int64_t BH = (int64_t)(x->B * x->H), Q = (int64_t)x->Q, L = (int64_t)x->L;
		f = p->flops;
		if (x->G < x->H) /* repeat_kv: the cache copied to every query head */
			sim_ew_add(gpu, LLMSIM_EW_COPY, LLMSIM_PASS_FWD, BH * L,
				   (int64_t)(x->tok_bytes / x->e), x->dt, a, 0);
		rc |= sim_gemm_add(gpu, Q, L, (int64_t)x->Dqk, BH, x->dt, x->dt, 0, a, 1);
		sim_ew_add(gpu, LLMSIM_EW_SOFTMAX, LLMSIM_PASS_FWD, BH * Q, L, x->dt, a, 0);
		rc |= sim_gemm_add(gpu, Q, (int64_t)x->Dv, L, BH, x->dt, x->dt, 0, a, 0);
		p->flops = f;
		p->workspace_bytes = sim_max(p->workspace_bytes, x->B * x->H * x->Q * x->L * x->e);
		break;
	}
	case LLMSIM_DEC_FLASH2:
		/* one block per (sequence, K/V head): never split */
		add_best(gpu, x, 1, cache, 0, DEC_BC, a);
		break;
	case LLMSIM_DEC_FLASHDECODING:
		flashdecoding(gpu, x, cache, a);
		break;
	case LLMSIM_DEC_PAGED: {
		/* whole pages, the last, partly filled one too; vLLM's v2
		 * kernel partitions the sequence in 512 tokens, v1 does not */
		double pages = sim_ceil(x->L / x->bs);
		double paged = x->B * x->G * pages * x->bs * x->tok_bytes;
		add_best(gpu, x, sim_ceil(x->L / PAGED_PART), paged, x->B * pages * 4,
			 (int)sim_min(x->bs, PAGED_PART), a);
		break;
	}
	default:
		break;
	}
	return rc;
}

int sim_decode(const struct llmsim_gpu *gpu, const struct llmsim_op *op, struct llmsim_pred *p,
	       struct llmsim_err *err)
{
	const __typeof__(op->u.dec) *d = &op->u.dec;
	int mla = d->kv_lora_rank > 0;
	int64_t G = mla ? 1 : (d->kv_heads ? d->kv_heads : d->heads);
	int64_t Q = d->q_len ? d->q_len : 1;
	int64_t bs = d->block_size ? d->block_size : 16;
	enum llmsim_dtype kvdt = d->kv_dtype;
	int64_t v;
	int rc;
	if (kvdt == LLMSIM_DT_FP64 && op->dtype != LLMSIM_DT_FP64)
		kvdt = op->dtype; /* a zeroed op: same as dtype */
	if ((unsigned)d->impl >= LLMSIM_DEC_IMPL_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "decode: unknown impl (%d)", (int)d->impl);
	if (d->batch <= 0 || d->heads <= 0 || G <= 0 || d->kv_len <= 0 || d->head_dim <= 0 ||
	    Q <= 0 || bs <= 0 || d->kv_lora_rank < 0 || d->rope_dim < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "decode sizes must be positive (batch=%lld heads=%lld "
				      "kv_heads=%lld kv_len=%lld head_dim=%lld q_len=%lld "
				      "block_size=%lld)",
				      (long long)d->batch, (long long)d->heads, (long long)G,
				      (long long)d->kv_len, (long long)d->head_dim, (long long)Q,
				      (long long)bs);
	if (!mla && d->heads % G)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "heads (%lld) must be divisible by kv_heads (%lld)",
				      (long long)d->heads, (long long)G);
	int64_t dmax = d->head_dim + d->rope_dim + d->kv_lora_rank;
	if ((rc = sim_mul_chk(err, "decode FLOPs (batch*heads*q_len*kv_len*head dims*8)", 6,
			      (int64_t[]){d->batch, d->heads, Q, d->kv_len, dmax, 8}, &v)))
		return rc;
	if ((rc = sim_check_dtype(gpu, op->dtype, "decode", err)))
		return rc;
	if ((unsigned)kvdt >= LLMSIM_DT_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "decode: unknown kv_dtype (%d)", (int)kvdt);

	struct dec x = {
		.B = (double)d->batch, .H = (double)d->heads, .G = (double)G,
		.L = (double)d->kv_len, .Q = (double)Q, .bs = (double)bs,
		.e = llmsim_dtype_bytes(op->dtype), .dt = op->dtype,
	};
	double kv_b = llmsim_dtype_bytes(kvdt);
	struct sim_acc a;
	sim_acc_init(&a, p);
	if (!mla) {
		x.Dqk = x.Dv = (double)d->head_dim;
		x.tok_bytes = 2 * d->head_dim * kv_b;
	} else if (d->mla_absorbed) {
		x.Dqk = (double)(d->kv_lora_rank + d->rope_dim);
		x.Dv = (double)d->kv_lora_rank;
		x.tok_bytes = (d->kv_lora_rank + d->rope_dim) * kv_b; /* V is part of the latent */
	} else {
		/* up-project the latent (R) to per-head K_nope and V, written
		 * to HBM (the GEMM reads the latent at dtype); the rope part
		 * (P) is taken as materialized with each head's K */
		int64_t BL, n2;
		if ((rc = sim_mul_chk(err, "decode MLA batch*kv_len", 2,
				      (int64_t[]){d->batch, d->kv_len}, &BL)) ||
		    (rc = sim_mul_chk(err, "decode MLA heads*2*head_dim", 3,
				      (int64_t[]){d->heads, 2, d->head_dim}, &n2)))
			return rc;
		if (sim_gemm_add(gpu, BL, n2, d->kv_lora_rank, 1, op->dtype, op->dtype, -1, &a, 0))
			return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
					      "decode: no GEMM tile fits on %s", gpu->name);
		x.G = x.H;
		x.Dqk = (double)(d->head_dim + d->rope_dim);
		x.Dv = (double)d->head_dim;
		x.tok_bytes = (2 * d->head_dim + d->rope_dim) * x.e;
	}
	if (attend(gpu, &x, d->impl, &a))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED, "decode: no GEMM tile fits on %s",
				      gpu->name);
	sim_acc_finish(&a);
	return 0;
}
