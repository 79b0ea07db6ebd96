/*
 * shipped.h - the calibration measurements llmsim ships: every
 * `llmsim calib export` text dump (`.tsv`, or `.tsv.gz`) in
 * <data>/calib/data/ and one folder below it, recognised by its header
 * line, loaded into one in-memory store. This is what every command that
 * takes --db reads when none is given, so a build-tree binary and an
 * installed one (cmake --install ships calib/data/) see the same cases.
 */
#ifndef LLMSIM_SHIPPED_H
#define LLMSIM_SHIPPED_H

#include <stddef.h>
#include "base/err.h"
#include "store.h"

/* Open a new in-memory store holding every shipped dump, imported in
 * sorted path order. `source` (size bytes, may be NULL) receives the dumps'
 * paths relative to the data folder, separated by ", " ("calib/data/a.tsv,
 * calib/data/multi_gpu/b.tsv"). A broken dump fails the whole call with the
 * import's error (naming the file), unless `skipped` (skipped_size bytes)
 * is given: then it is left out, named there with its error ("a.tsv
 * (a.tsv:3: ...)", "; "-separated), and the others load. Fails with
 * LLMSIM_ENOENT when there is no data folder or no dump loads. Close the
 * store with llmsim_store_close. */
int llmsim_store_open_shipped(struct llmsim_store **out, char *source, size_t size,
			      char *skipped, size_t skipped_size, struct llmsim_err *err);

#endif
