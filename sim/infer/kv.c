/*
 * kv.c - KV-cache slot accounting: contiguous max-length reservations or
 * paged blocks (see kv.h).
 */
#include "kv.h"

#include <string.h>
#include <strings.h>

#include "base/enum.h"

static const char *const alloc_names[LLMSIM_KV_ALLOC_COUNT] = {
	[LLMSIM_KV_PAGED] = "paged",
	[LLMSIM_KV_CONTIGUOUS] = "contiguous",
};
_Static_assert(sizeof alloc_names / sizeof alloc_names[0] == LLMSIM_KV_ALLOC_COUNT, "allocs");

const char *llmsim_kv_alloc_name(enum llmsim_kv_alloc k)
{
	return llmsim_enum_label(alloc_names, LLMSIM_KV_ALLOC_COUNT, (int)k);
}

int llmsim_kv_alloc_parse(const char *s)
{
	return llmsim_enum_parse_nocase(alloc_names, LLMSIM_KV_ALLOC_COUNT, s);
}

int llmsim_kv_init(struct llmsim_kv *kv, enum llmsim_kv_alloc kind, int64_t capacity_tokens,
		   int64_t block_size, struct llmsim_err *err)
{
	memset(kv, 0, sizeof *kv);
	if (kind == LLMSIM_KV_CONTIGUOUS)
		block_size = 1;
	if (block_size < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "KV block size must be at least 1");
	if (capacity_tokens < block_size)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "KV cache of %lld tokens holds no block of %lld",
				      (long long)capacity_tokens, (long long)block_size);
	kv->kind = kind;
	kv->block_size = block_size;
	kv->capacity_tokens = capacity_tokens / block_size * block_size;
	return 0;
}

static int64_t round_up(const struct llmsim_kv *kv, int64_t tokens)
{
	return (tokens + kv->block_size - 1) / kv->block_size * kv->block_size;
}

/* Slots free. */
static int64_t kv_free_tokens(const struct llmsim_kv *kv)
{
	return kv->capacity_tokens - kv->allocated_tokens;
}

int64_t llmsim_kv_waste_tokens(const struct llmsim_kv *kv)
{
	return kv->allocated_tokens - kv->used_tokens;
}

int llmsim_kv_admit(struct llmsim_kv *kv, struct llmsim_kv_seq *s, int64_t tokens,
		    int64_t max_tokens)
{
	LLMSIM_ASSERT(s->reserved_tokens == 0 && tokens >= 0 && max_tokens >= tokens);
	int64_t want = kv->kind == LLMSIM_KV_CONTIGUOUS ? max_tokens : round_up(kv, tokens);
	if (want > kv_free_tokens(kv))
		return LLMSIM_ENOFIT;
	kv->allocated_tokens += want;
	kv->used_tokens += tokens;
	s->reserved_tokens = want;
	s->used_tokens = tokens;
	return 0;
}

int llmsim_kv_grow(struct llmsim_kv *kv, struct llmsim_kv_seq *s, int64_t tokens)
{
	LLMSIM_ASSERT(tokens >= s->used_tokens);
	if (tokens > s->reserved_tokens) {
		if (kv->kind == LLMSIM_KV_CONTIGUOUS)
			return LLMSIM_ENOFIT;
		int64_t more = round_up(kv, tokens) - s->reserved_tokens;
		if (more > kv_free_tokens(kv))
			return LLMSIM_ENOFIT;
		kv->allocated_tokens += more;
		s->reserved_tokens += more;
	}
	kv->used_tokens += tokens - s->used_tokens;
	s->used_tokens = tokens;
	return 0;
}

void llmsim_kv_release(struct llmsim_kv *kv, struct llmsim_kv_seq *s)
{
	kv->allocated_tokens -= s->reserved_tokens;
	kv->used_tokens -= s->used_tokens;
	LLMSIM_ASSERT(kv->allocated_tokens >= 0 && kv->used_tokens >= 0);
	s->reserved_tokens = s->used_tokens = 0;
}
