/*
 * gzfile.h - opening an input file that may be gzip-compressed.
 *
 * llmsim_gz_open hands out an ordinary read-only FILE for a plain file and
 * for a gzip stream alike (told apart by the gzip magic bytes, whatever the
 * name), decompressing through zlib as it is read: no shell, no gzip
 * binary, and every reader that takes a FILE (text dumps, traces, length
 * files, YAML) reads `.gz` inputs as they stand. The only module that
 * includes zlib.h.
 *
 * A stream whose compressed data is corrupt or cut short makes a read fail
 * (ferror) rather than end quietly; llmsim_gz_close then says so. Readers
 * should call llmsim_gz_close after parsing and let its error win over
 * their own, since a cut-off stream explains any parse error that follows.
 */
#ifndef LLMSIM_GZFILE_H
#define LLMSIM_GZFILE_H

#include <stdio.h>
#include "err.h"

/* Open path for reading. Returns the stream, or NULL with err set
 * ("PATH: cannot open: No such file or directory": LLMSIM_ENOENT, other failures
 * LLMSIM_EIO). *gzipped (may be NULL) is set to 1 when the file is a gzip
 * stream. path may name a pipe (/dev/stdin, a FIFO, <(...)): nothing is
 * read twice. The stream cannot seek. How much the stream may inflate to
 * is each reader's limit (base/lines.h, llmsim_gz_slurp's max). */
FILE *llmsim_gz_open(const char *path, int *gzipped, struct llmsim_err *err);

/* Close a stream of llmsim_gz_open (NULL is a no-op returning 0). Returns
 * 0, or LLMSIM_EPARSE "PATH: gzip data is corrupt or truncated (zlib:
 * WHY)" when decompression failed, LLMSIM_EIO "PATH: cannot read: WHY" on
 * a read error of the file itself. `path` is for the message. */
int llmsim_gz_close(FILE *f, const char *path, struct llmsim_err *err);

/* Read the whole of path (plain or gzip) into *buf (malloc'd, NUL-
 * terminated, *len bytes without the NUL). A file of more than max bytes
 * fails with LLMSIM_EINVAL "PATH: larger than MAX bytes"; a cut-off or
 * corrupt gzip stream as llmsim_gz_close says. */
int llmsim_gz_slurp(const char *path, size_t max, char **buf, size_t *len,
		    struct llmsim_err *err);

#endif
