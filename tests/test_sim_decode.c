/*
 * test_sim_decode.c - decode attention: the bytes are the KV cache read
 * plus Q, O and the page table; GQA divides the cache by the group; paged
 * caches read the last, partly filled page whole; MLA reads one latent
 * per token; split-KV fills the SMs at small batch. Expected values are
 * worked by hand in the comments (bf16 = 2 B, fp8 = 1 B).
 */
#include <string.h>

#include "support.h"
#include "test_sim_gpus.h"
#include "sim/sim.h"

static struct llmsim_op dec(enum llmsim_decode_impl impl, int64_t b, int64_t h, int64_t g,
			    int64_t l, int64_t d)
{
	struct llmsim_op op = {.kind = LLMSIM_OP_DECODE, .dtype = LLMSIM_DT_BF16};
	op.u.dec.impl = impl;
	op.u.dec.batch = b, op.u.dec.heads = h, op.u.dec.kv_heads = g;
	op.u.dec.kv_len = l, op.u.dec.head_dim = d, op.u.dec.q_len = 1;
	op.u.dec.block_size = 16, op.u.dec.mla_absorbed = 1;
	op.u.dec.kv_dtype = LLMSIM_DT_BF16;
	return op;
}

Test(sim_decode, bytes_are_the_kv_cache_read)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, dec(LLMSIM_DEC_FLASH2, 4, 32, 8, 4096, 128));
	/* cache 4 * 8 * 4096 * (128 K + 128 V) * 2 B = 67108864; Q 4*32*128*2 */
	expect_close(p.hbm_read_bytes, 67108864.0 + 32768, 1e-12);
	/* O 4*32*128*2 */
	expect_close(p.hbm_write_bytes, 32768, 1e-12);
	/* flops 4 * B*H*L*D */
	expect_close(p.flops, 4.0 * 4 * 32 * 4096 * 128, 1e-12);
	/* fp8 cache: half the cache bytes */
	struct llmsim_op op = dec(LLMSIM_DEC_FLASH2, 4, 32, 8, 4096, 128);
	op.u.dec.kv_dtype = LLMSIM_DT_FP8;
	expect_close(predict_ok(&g, op).hbm_read_bytes, 67108864.0 / 2 + 32768, 1e-12);
}

Test(sim_decode, gqa_divides_the_cache)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	double q = 4.0 * 32 * 128 * 2;
	double mha = predict_ok(&g, dec(LLMSIM_DEC_FLASH2, 4, 32, 32, 4096, 128)).hbm_read_bytes - q;
	double gqa = predict_ok(&g, dec(LLMSIM_DEC_FLASH2, 4, 32, 8, 4096, 128)).hbm_read_bytes - q;
	expect_close(mha / gqa, 4.0, 1e-12);
}

/* paged, B=1, 8 K/V heads, 4097 tokens in 16-token pages: 257 pages read
 * whole = 1*8*257*16*256*2 = 16842752 B; table 257 * 4 B; Q 32*128*2; the
 * 9 partitions' fp32 partials (32*9*129*4 = 148608 B) stay in L2. */
Test(sim_decode, paged_reads_whole_pages_and_the_table)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, dec(LLMSIM_DEC_PAGED, 1, 32, 8, 4097, 128));
	expect_close(p.hbm_read_bytes, 16842752.0 + 1028 + 8192, 1e-12);
	expect_close(p.hbm_write_bytes, 8192, 1e-12);
	cr_expect_eq(p.kernels, 2); /* attention + partition reduction */
	/* 4096 tokens fill their pages exactly: 256 pages, 2 fewer KB per head */
	struct llmsim_pred q = predict_ok(&g, dec(LLMSIM_DEC_PAGED, 1, 32, 8, 4096, 128));
	expect_close(q.hbm_read_bytes, 1 * 8 * 256 * 16 * 256 * 2.0 + 1024 + 8192, 1e-12);
}

/* MLA absorbed (DeepSeek-V3 shapes: R=512, P=64, 128 heads): one latent of
 * 576 values per token: cache 2*1024*576*2 = 2359296 B; Q in latent space
 * 2*128*576*2 = 294912 B; O 2*128*512*2; FLOPs 2*B*H*L*(576 + 512). */
Test(sim_decode, mla_reads_the_latent_cache)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_op op = dec(LLMSIM_DEC_FLASH2, 2, 128, 128, 1024, 128);
	op.u.dec.kv_lora_rank = 512;
	op.u.dec.rope_dim = 64;
	struct llmsim_pred p = predict_ok(&g, op);
	expect_close(p.hbm_read_bytes, 2359296.0 + 294912, 1e-12);
	expect_close(p.hbm_write_bytes, 262144, 1e-12);
	expect_close(p.flops, 2.0 * 2 * 128 * 1024 * (576 + 512), 1e-12);
	/* versus an MHA cache of 128 heads x 256 values x 2 B per token: 57x */
	expect_close(2.0 * 1024 * 128 * 256 * 2 / 2359296.0, 56.89, 1e-3);
	/* materialized: the up-projection GEMM [B*L, R] x [R, H*2*D] plus
	 * MHA attention with QK dim D+P=192 and V dim D=128 */
	op.u.dec.mla_absorbed = 0;
	struct llmsim_pred m = predict_ok(&g, op);
	double gemm = 2.0 * 2048 * (128 * 256) * 512;
	double att = 2.0 * 2 * 128 * 1024 * (192 + 128);
	expect_close(m.flops, gemm + att, 1e-12);
	cr_expect(m.hbm_bytes > 10 * p.hbm_bytes);
	cr_expect(m.time_s > p.time_s);
}

Test(sim_decode, split_kv_fills_the_sms_at_small_batch)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred f2 = predict_ok(&g, dec(LLMSIM_DEC_FLASH2, 1, 32, 8, 32768, 128));
	struct llmsim_pred fd = predict_ok(&g, dec(LLMSIM_DEC_FLASHDECODING, 1, 32, 8, 32768, 128));
	/* flash2: one block per (sequence, K/V head) = 8 blocks on 132 SMs */
	cr_expect_eq(f2.blocks, 8);
	cr_expect(f2.bound != LLMSIM_BOUND_HBM, "flash2 bound %s", llmsim_bound_name(f2.bound));
	cr_expect(fd.blocks >= 132, "blocks %lld", (long long)fd.blocks);
	cr_expect(fd.split_k > 1);
	/* 8 latency-bound blocks against ~256 streaming ones: the split
	 * kernel's edges and its combine kernel's serial loads keep the gap
	 * below the 16x of the block counts */
	cr_expect(fd.time_s < f2.time_s / 2.5, "fd %g f2 %g", fd.time_s, f2.time_s);
	/* the same cache read */
	expect_close(fd.hbm_read_bytes, f2.hbm_read_bytes, 1e-9);
	/* large batch: both stream the cache near HBM speed */
	struct llmsim_pred big = predict_ok(&g, dec(LLMSIM_DEC_FLASH2, 128, 32, 8, 4096, 128));
	cr_expect_eq(big.bound, LLMSIM_BOUND_HBM, "bound %s", llmsim_bound_name(big.bound));
	/* naive materializes the scores */
	struct llmsim_pred nv = predict_ok(&g, dec(LLMSIM_DEC_NAIVE, 1, 32, 8, 4096, 128));
	expect_close(nv.workspace_bytes, 32.0 * 4096 * 2, 1e-12);
	cr_expect(nv.kernels >= 3);
}

Test(sim_decode, speculative_verify_multiplies_flops_not_bytes)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_op op = dec(LLMSIM_DEC_FLASHDECODING, 8, 32, 8, 4096, 128);
	struct llmsim_pred p1 = predict_ok(&g, op);
	op.u.dec.q_len = 4;
	struct llmsim_pred p4 = predict_ok(&g, op);
	expect_close(p4.flops, 4 * p1.flops, 1e-12);
	/* the cache (8*8*4096*512 B = 134 MB) dominates; Q/O grow by 3 * 2 * 8*32*128*2 B */
	cr_expect(p4.hbm_read_bytes < 1.01 * p1.hbm_read_bytes);
}

Test(sim_decode, errors)
{
	struct llmsim_gpu g;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	test_gpu_h200(&g);
	struct llmsim_op op = dec(LLMSIM_DEC_PAGED, 0, 32, 8, 4096, 128);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	op = dec(LLMSIM_DEC_PAGED, 1, 32, 6, 4096, 128);
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	cr_expect_str_eq(err.msg, "heads (32) must be divisible by kv_heads (6)");
	op = dec(LLMSIM_DEC_PAGED, 1, 32, 8, 4096, 128);
	op.u.dec.kv_len = -1;
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EINVAL);
	test_gpu_a100(&g);
	op = dec(LLMSIM_DEC_PAGED, 1, 32, 8, 4096, 128);
	op.dtype = LLMSIM_DT_FP8;
	cr_expect_eq(llmsim_predict(&g, &op, &p, &err), LLMSIM_EUNSUPPORTED);
}

/* FlashDecoding as FlashAttention-2 runs it (flash_api.cpp): the 4 query
 * heads of a K/V group are the rows of one block; 132 SMs x 2 = 264 slots;
 * KV tiles of 128 tokens at head dim 128. Worked by hand:
 *  - batch 1, 8 K/V heads, 32768 tokens: 8 row blocks, 256 tiles; the
 *    efficiency 8n/264 (one wave) is 1.0 at 33 splits (ineligible: 8 tiles
 *    per split as at 32; best eligible 32: 0.97); the first n with
 *    8n/264 >= 0.85 * 0.97 = 0.824 is 28 (0.848), ineligible (ceil(256/28)
 *    = ceil(256/27) = 10); 29: 0.879, ceil(256/29) = 9: 29 splits,
 *    8 x 29 = 232 blocks of 64 rows;
 *  - batch 4, 8192 tokens: 32 row blocks, 64 tiles; eligible n (the tiles
 *    per split change): 1..8, 10, 11, 13, 16, 22, 32, 64; best efficiency
 *    256/264 = 0.97 (n = 8); first >= 0.824: n = 7 (224/264 = 0.848);
 *  - batch 64, 8192 tokens: 512 row blocks >= 0.8 x 264: no split, the
 *    plain forward kernel with 128-row tiles, one kernel. */
Test(sim_decode, flashdecoding_splits_as_flash_attention_2)
{
	struct llmsim_gpu g;
	test_gpu_h200(&g);
	struct llmsim_pred p = predict_ok(&g, dec(LLMSIM_DEC_FLASHDECODING, 1, 32, 8, 32768, 128));
	cr_expect_eq(p.split_k, 29);
	cr_expect_eq(p.blocks, 232);
	cr_expect_eq(p.kernels, 2); /* split kernel + combine */
	cr_expect_eq(p.tile_m, 64);
	p = predict_ok(&g, dec(LLMSIM_DEC_FLASHDECODING, 4, 32, 8, 8192, 128));
	cr_expect_eq(p.split_k, 7);
	cr_expect_eq(p.blocks, 224);
	p = predict_ok(&g, dec(LLMSIM_DEC_FLASHDECODING, 64, 32, 8, 8192, 128));
	cr_expect_eq(p.split_k, 1);
	cr_expect_eq(p.kernels, 1);
	cr_expect_eq(p.tile_m, 128);
	cr_expect_eq(p.blocks, 512);
}

/* FA2's combine kernel walks the splits' partials one dependent L2 load
 * after another. Batch 1, 32 heads over 8 K/V heads, 2048 tokens, head
 * dim 128: 8 row blocks against 2 x 132 slots over 16 KV tiles of 128
 * pick 16 splits (the efficiency 8n/264 grows up to n = 16, the first
 * within 85% of the best), so the combine waits 1 (LSE) + 16 round trips:
 * raising l2_hit_round_trip_s by 1e-7 s lengthens it by 17e-7 s and
 * leaves the split kernel as it was. */
Test(sim_decode, flashdecoding_combine_waits_one_l2_trip_per_split)
{
	struct llmsim_gpu g, h;
	test_gpu_h200(&g);
	h = g;
	h.param[LLMSIM_PARAM_L2_HIT_ROUND_TRIP_S] += 1e-7;
	struct llmsim_op op = dec(LLMSIM_DEC_FLASHDECODING, 1, 32, 8, 2048, 128);
	struct llmsim_pred a = predict_ok(&g, op), b = predict_ok(&h, op);
	cr_assert_eq(a.split_k, 16);
	cr_assert_eq(a.kernels, 2);
	expect_close(b.kernel_time_s[0], a.kernel_time_s[0], 1e-12);
	expect_close(b.kernel_time_s[1] - a.kernel_time_s[1], 17e-7, 1e-6);
}

/* The split kernel's exposed DRAM trips: the first K tile (the kernel's
 * fill), the first V tile (FA2 issues V once K has landed) and the last
 * partial-O stores. Batch 1, 32/8 heads, 2048 tokens: 16 splits of one
 * 128-token tile, 128 blocks whose math (not their 2 round trips of
 * Little's law) bounds the loop, so 0.1 us more DRAM latency lengthens the
 * split kernel by 3 x 0.1 us and the combine kernel (one fill) by 0.1 us. */
Test(sim_decode, flashdecoding_split_kernel_waits_three_dram_trips)
{
	struct llmsim_gpu g, h;
	test_gpu_h200(&g);
	/* a sharp knee: the loop's window-of-loads time (which also grows
	 * with the latency) does not blend into its bound */
	g.param[LLMSIM_PARAM_HBM_QUEUE_EXPONENT] = 64;
	h = g;
	h.hbm_latency_s += 1e-7;
	struct llmsim_op op = dec(LLMSIM_DEC_FLASHDECODING, 1, 32, 8, 2048, 128);
	struct llmsim_pred a = predict_ok(&g, op), b = predict_ok(&h, op);
	cr_assert_eq(a.split_k, 16);
	cr_assert_eq(a.blocks, 128);
	expect_close(b.kernel_time_s[0] - a.kernel_time_s[0], 3e-7, 1e-6);
	expect_close(b.kernel_time_s[1] - a.kernel_time_s[1], 1e-7, 1e-6);
}
