/*
 * lines.h - a line reader with limits, for every text input llmsim reads
 * (calibration dumps, text traces, request-length files): a line longer
 * than the limit, or a file larger than its kind's limit, stops the read
 * with one located message instead of growing memory until the process
 * dies (`calib import --in /dev/zero`).
 *
 *   struct llmsim_lines r;
 *   llmsim_lines_init(&r, f, "x.tsv", LLMSIM_MAX_LINE, LLMSIM_MAX_CALIB_TEXT_BYTES,
 *                     "a calibration dump");
 *   while ((rc = llmsim_lines_next(&r, &line, &len, err)) > 0)
 *           ... r.line is the 1-based number of `line` ...
 *   llmsim_lines_release(&r);
 */
#ifndef LLMSIM_LINES_H
#define LLMSIM_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "err.h"

/* Lines of one input, any kind: line numbers are ints. */
#define LLMSIM_LINES_MAX_COUNT 2147483646

struct llmsim_lines {
	FILE *f;
	const char *name;       /* for messages */
	const char *what;       /* the kind of file: "a text trace" */
	int line;               /* number of the line last returned (1-based) */
	size_t max_line;        /* bytes of one line, without its end */
	uint64_t max_bytes;     /* bytes of the whole input */
	uint64_t nbytes;        /* read so far */
	char *buf;
	size_t cap;
};

/* Read f (not owned) line by line. */
void llmsim_lines_init(struct llmsim_lines *r, FILE *f, const char *name, size_t max_line,
		       uint64_t max_bytes, const char *what);

/* The next line into *line (NUL-terminated, owned by r, valid until the
 * next call) without its trailing LF/CR characters, its length into *len
 * (which counts any NUL bytes inside, so len != strlen(line) tells of
 * one). Returns 1, or 0 at the end of the input, or an error:
 * LLMSIM_EPARSE "name:N: line longer than M bytes (not WHAT?)",
 * LLMSIM_EPARSE "name: larger than M bytes, the limit for WHAT",
 * LLMSIM_EPARSE "name: more than N lines, the limit for WHAT",
 * LLMSIM_EIO on a read error, LLMSIM_ENOMEM. */
int llmsim_lines_next(struct llmsim_lines *r, char **line, size_t *len, struct llmsim_err *err);

/* Free the buffer (the FILE stays open). */
void llmsim_lines_release(struct llmsim_lines *r);

#endif
