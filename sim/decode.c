/*
 * decode.c - the cost descriptions of decode attention: q_len query
 * tokens per sequence (1, or k+1 to verify k drafted tokens) against a KV
 * cache of kv_len tokens.
 *
 * The work is small and the KV cache read dominates: batch * kv_heads *
 * kv_len * (K + V bytes per token) plus Q, O and, for paged caches, the
 * block table. What differs between implementations is how many blocks
 * stream the cache (flash2: one per (sequence, K/V head), few at small
 * batch, latency bound; flashdecoding: the cache split over enough blocks
 * to fill the SMs, then a reduction; paged: vLLM-style partitions of 512
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

static double dec_smem(const struct dec *x, double bc, double rows)
{
	return 2 * bc * x->tok_bytes + rows * x->Dqk * x->e;
}

static void dec_kern(const struct llmsim_gpu *gpu, const struct dec *x, double blocks_per_head,
		     double kv_bytes, struct kern *k)
{
	int tensor;
	double rows_all = x->H / x->G * x->Q, groups = sim_ceil(rows_all / DEC_ROWS);
	double rows = sim_min(rows_all, DEC_ROWS), bc = DEC_BC;
	while (bc > 16 && dec_smem(x, bc, rows) > gpu->smem_bytes_per_block_max)
		bc /= 2;
	memset(k, 0, sizeof *k);
	k->threads = DEC_THREADS;
	k->regs = DEC_REGS;
	k->smem_per_block_bytes = sim_min(dec_smem(x, bc, rows), gpu->smem_bytes_per_block_max);
	k->blocks = (int64_t)(x->B * x->G * blocks_per_head * groups);
	k->mm_rate_flops_per_s = sim_mm_rate(gpu, x->dt, &tensor);
	k->mm_tensor = tensor;
	k->mm_eff = gpu->eff[LLMSIM_EFF_ATTN_TENSOR];
	/* the MMA runs at least 16 rows */
	k->mm_flops = x->B * x->G * groups * sim_max(16, rows) * x->L * 2 * (x->Dqk + x->Dv);
	double scores = x->B * x->H * x->Q * x->L;
	k->vec_flops = 4 * scores;
	k->sfu_ops = scores;
	/* each row group streams the cache: once from HBM, again from L2 */
	k->hbm_read_bytes = kv_bytes + x->B * x->H * x->Q * x->Dqk * x->e;
	k->l2_bytes = (groups - 1) * kv_bytes;
	k->smem_bytes = 2 * kv_bytes * groups;
	k->inflight_bytes_per_block = 2 * bc * x->tok_bytes;
	k->fill_s = gpu->hbm_latency_s;
	k->hbm_eff = gpu->eff[LLMSIM_EFF_DECODE_HBM];
}

/* One way to run the attention kernel: the cache split into `splits`
 * chunks per (sequence, K/V head), each writing fp32 partial O and LSE
 * that a second kernel reduces (none when splits is 1). Fills k and r and
 * returns the time of both. */
static double build(const struct llmsim_gpu *gpu, const struct dec *x, double splits,
		    double kv_bytes, double table, struct kern *k, struct kern *r)
{
	struct ktime t;
	double rows = x->B * x->H * x->Q;
	double out = rows * x->Dv * x->e;
	dec_kern(gpu, x, splits, kv_bytes, k);
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
	double t1 = build(gpu, x, 1, kv_bytes, table, &k1, &r1);
	double ts = splits > 1 ? build(gpu, x, splits, kv_bytes, table, &ks, &rs) : INFINITY;
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

static int attend(const struct llmsim_gpu *gpu, const struct dec *x, enum llmsim_decode_impl impl,
		  struct sim_acc *a)
{
	struct llmsim_pred *p = a->p;
	double cache = x->B * x->G * x->L * x->tok_bytes;
	struct kern k;
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
	case LLMSIM_DEC_FLASHDECODING: {
		dec_kern(gpu, x, 1, cache, &k);
		int bps = sim_blocks_per_sm(gpu, k.threads, k.regs, k.smem_per_block_bytes);
		double slots = (double)gpu->sms * (bps > 0 ? bps : 1);
		/* as many splits as fill the resident slots without spilling
		 * into a second wave */
		double splits = sim_min(sim_floor(slots / k.blocks),
					sim_min(sim_ceil(x->L / DEC_BC), 128));
		add_best(gpu, x, splits, cache, 0, DEC_BC, a);
		break;
	}
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
