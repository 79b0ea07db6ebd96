/*
 * outdir.h - write a folder of results all at once: everything goes into
 * DIR.tmp-<pid>-<host>-XXXXXX next to DIR (base/staging.h), and only a
 * finished folder is renamed into place, so a failure at any step leaves
 * the file system as it was; a staging folder a killed run left is removed
 * by the next one. A
 * committed folder holds a marker file, LLMSIM_OUTDIR_MARKER, and only a
 * folder holding one is ever replaced (--force): nothing else a user keeps
 * is deleted.
 */
#ifndef LLMSIM_REPORT_OUTDIR_H
#define LLMSIM_REPORT_OUTDIR_H

#include <stddef.h>
#include "base/err.h"

/* The file every folder llmsim writes holds (its contents say what it is). */
#define LLMSIM_OUTDIR_MARKER ".llmsim-report"

struct llmsim_outdir {
	char dir[4000];         /* the folder asked for, trailing '/' removed */
	char tmp[4096];         /* the staging folder; "" when none */
	int replace;            /* dir exists and is not empty (with force) */
};

/* Check dir and create the staging folder. Refuses (LLMSIM_EINVAL) a dir
 * that exists and is not a folder, or is not writable, or is not empty
 * unless force, and with force one that holds no LLMSIM_OUTDIR_MARKER (it
 * is not an earlier llmsim folder); LLMSIM_EIO when the staging folder
 * cannot be created. The message is one line naming the folder. Nothing
 * is created on failure. */
int llmsim_outdir_begin(struct llmsim_outdir *o, const char *dir, int force,
			struct llmsim_err *err);

/* Path of `name` inside the staging folder into buf; -1 if it does not fit. */
int llmsim_outdir_path(const struct llmsim_outdir *o, const char *name, char *buf,
		       size_t size);

/* Write the marker into the staging folder and move it into place
 * (replacing dir's old contents when forced). On failure the staging
 * folder is removed and dir is unchanged. */
int llmsim_outdir_commit(struct llmsim_outdir *o, struct llmsim_err *err);

/* Remove the staging folder and all in it (no-op when none). */
void llmsim_outdir_abort(struct llmsim_outdir *o);

/* llmsim_rmtree, llmsim_stage_name and the sweep of stale staging folders */
#include "base/staging.h"

#endif
