/*
 * kv.h - the KV-cache allocator of a serving engine, counted in token
 * slots: contiguous reservations of a sequence's maximum length (as
 * FasterTransformer and Orca do), or PagedAttention blocks allocated as the
 * sequence grows (vLLM). It tracks what is reserved and what holds KV, so
 * the simulator can report the memory wasted.
 */
#ifndef LLMSIM_KV_H
#define LLMSIM_KV_H

#include <stdint.h>
#include "base/err.h"

enum llmsim_kv_alloc { LLMSIM_KV_PAGED, LLMSIM_KV_CONTIGUOUS, LLMSIM_KV_ALLOC_COUNT };

struct llmsim_kv {
	enum llmsim_kv_alloc kind;
	int64_t block_size;         /* tokens per block (paged); 1 for contiguous */
	int64_t capacity_tokens;    /* slots in the pool (whole blocks when paged) */
	int64_t allocated_tokens;   /* slots handed to sequences */
	int64_t used_tokens;        /* slots that hold a token's KV */
};

/* One sequence's share of the pool; zero-initialize before admitting. */
struct llmsim_kv_seq {
	int64_t reserved_tokens;    /* slots held */
	int64_t used_tokens;        /* tokens cached */
};

/* A pool of capacity_tokens slots (rounded down to whole blocks when
 * paged). Fails with LLMSIM_EINVAL on a non-positive size. */
int llmsim_kv_init(struct llmsim_kv *kv, enum llmsim_kv_alloc kind, int64_t capacity_tokens,
		   int64_t block_size, struct llmsim_err *err);

/* Admit a sequence that caches `tokens` now and may grow to `max_tokens`:
 * contiguous reserves max_tokens at once, paged the blocks for `tokens`.
 * Returns 0, or LLMSIM_ENOFIT (pool unchanged) when the slots are not free. */
int llmsim_kv_admit(struct llmsim_kv *kv, struct llmsim_kv_seq *s, int64_t tokens,
		    int64_t max_tokens);

/* Grow a sequence's cache to `tokens`: paged takes new blocks as needed;
 * contiguous must stay within its reservation. LLMSIM_ENOFIT (unchanged)
 * when no block is free or the reservation is exceeded. */
int llmsim_kv_grow(struct llmsim_kv *kv, struct llmsim_kv_seq *s, int64_t tokens);

/* Return a sequence's slots to the pool (a zeroed sequence is a no-op). */
void llmsim_kv_release(struct llmsim_kv *kv, struct llmsim_kv_seq *s);

/* Slots reserved but holding no KV. */
int64_t llmsim_kv_waste_tokens(const struct llmsim_kv *kv);

const char *llmsim_kv_alloc_name(enum llmsim_kv_alloc k);
int llmsim_kv_alloc_parse(const char *s);

#endif
