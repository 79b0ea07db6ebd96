/* hash.c - the open-addressing position index of hash.h. */
#include "hash.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

uint64_t llmsim_hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull; /* a string end: "ab"+"c" != "a"+"bc" */
}

uint64_t llmsim_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Slots are probed from the hash's high bits mixed down (FNV's low bits of
 * similar keys are well spread; this keeps it so for any caller's hash). */
static size_t home(uint64_t h, size_t nslots)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (size_t)h & (nslots - 1);
}

long llmsim_hindex_find(const struct llmsim_hindex *ix, uint64_t h,
			int (*same)(size_t pos, const void *key), const void *key)
{
	if (!ix->nslots)
		return -1;
	for (size_t j = home(h, ix->nslots);; j = (j + 1) & (ix->nslots - 1)) {
		if (!ix->pos[j])
			return -1;
		if (ix->hash[j] == h && same(ix->pos[j] - 1, key))
			return (long)(ix->pos[j] - 1);
	}
}

static void put(uint64_t *hash, size_t *pos, size_t nslots, uint64_t h, size_t p)
{
	size_t j = home(h, nslots);
	while (pos[j])
		j = (j + 1) & (nslots - 1);
	hash[j] = h;
	pos[j] = p + 1;
}

int llmsim_hindex_add(struct llmsim_hindex *ix, uint64_t h, size_t pos)
{
	if (2 * (ix->n + 1) > ix->nslots) {
		size_t ns = ix->nslots ? 2 * ix->nslots : 64;
		uint64_t *hash = malloc(ns * sizeof *hash);
		size_t *p = calloc(ns, sizeof *p);
		if (!hash || !p) {
			free(hash);
			free(p);
			return LLMSIM_ENOMEM;
		}
		for (size_t j = 0; j < ix->nslots; j++)
			if (ix->pos[j])
				put(hash, p, ns, ix->hash[j], ix->pos[j] - 1);
		free(ix->hash);
		free(ix->pos);
		ix->hash = hash;
		ix->pos = p;
		ix->nslots = ns;
	}
	put(ix->hash, ix->pos, ix->nslots, h, pos);
	ix->n++;
	return 0;
}

void llmsim_hindex_release(struct llmsim_hindex *ix)
{
	free(ix->hash);
	free(ix->pos);
	memset(ix, 0, sizeof *ix);
}
