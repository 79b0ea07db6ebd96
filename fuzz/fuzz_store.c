/*
 * fuzz_store.c - libFuzzer target for the calibration store's text import
 * (llmsim_store_import): the input is imported into a fresh in-memory
 * store. A failed import must leave a message and write nothing (the store
 * exports exactly as an empty one); an import that succeeds must export a
 * dump that imports into another fresh store and exports again unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/store.h"
#include "fuzz_input.h"

static struct llmsim_store *fresh(void)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	if (llmsim_store_open(":memory:", LLMSIM_STORE_CREATE, &s, &err))
		abort();
	return s;
}

/* The export of s, malloc'd (free it). */
static char *dump(struct llmsim_store *s, size_t *len)
{
	char *buf = NULL;
	struct llmsim_err err = {0};
	FILE *f = open_memstream(&buf, len);
	if (!f || llmsim_store_export(s, f, &err))
		abort();
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *empty;
	static size_t nempty;
	struct llmsim_err err = {0};

	if (!empty) {
		struct llmsim_store *s = fresh();
		empty = dump(s, &nempty);
		llmsim_store_close(s);
	}
	struct llmsim_store *s = fresh();
	FILE *f = fuzz_input_file(data, size);
	int rc = llmsim_store_import(s, f, "fuzz.tsv", &err);
	fclose(f);
	size_t n1, n2;
	char *d1 = dump(s, &n1);
	llmsim_store_close(s);
	if (rc) {
		if (!err.msg[0] || n1 != nempty || memcmp(d1, empty, n1))
			abort(); /* a failed import must write nothing */
		free(d1);
		return 0;
	}
	/* the export of what was imported reads back as the same data */
	s = fresh();
	f = fmemopen(d1, n1, "r");
	if (!f || llmsim_store_import(s, f, "export.tsv", &err))
		abort();
	fclose(f);
	char *d2 = dump(s, &n2);
	llmsim_store_close(s);
	if (n1 != n2 || memcmp(d1, d2, n1))
		abort();
	free(d1);
	free(d2);
	return 0;
}
