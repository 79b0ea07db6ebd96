/*
 * hash.h - an index from hashes to positions in an array the caller owns,
 * for grouping by name in linear time (YAML duplicate keys, trace rows and
 * names). Open addressing; the caller hashes its keys (llmsim_hash_*) and
 * says when two are equal, so one index serves any key type.
 *
 *   struct llmsim_hindex ix = {0};
 *   long i = llmsim_hindex_find(&ix, h, same, &key);   // -1: absent
 *   if (i < 0) { i = n++; ...; llmsim_hindex_add(&ix, h, i); }
 *   llmsim_hindex_release(&ix);
 */
#ifndef LLMSIM_HASH_H
#define LLMSIM_HASH_H

#include <stddef.h>
#include <stdint.h>

struct llmsim_hindex {
	uint64_t *hash;  /* per slot: the hash of the entry */
	size_t *pos;     /* per slot: position + 1, 0 for an empty slot */
	size_t nslots, n;
};

#define LLMSIM_HASH_SEED 1469598103934665603ull

/* FNV-1a of a string, or of n bytes, continuing from h (start with
 * LLMSIM_HASH_SEED). */
uint64_t llmsim_hash_str(uint64_t h, const char *s);
uint64_t llmsim_hash_bytes(uint64_t h, const void *p, size_t n);

/* The position stored under hash h for which same(pos, key) is true, or
 * -1. */
long llmsim_hindex_find(const struct llmsim_hindex *ix, uint64_t h,
			int (*same)(size_t pos, const void *key), const void *key);

/* Store pos under hash h (it need not be new). 0 or LLMSIM_ENOMEM. */
int llmsim_hindex_add(struct llmsim_hindex *ix, uint64_t h, size_t pos);

void llmsim_hindex_release(struct llmsim_hindex *ix);

#endif
