/*
 * paths.h - where llmsim finds its data (hw/, models/) at run time.
 *
 * Order: $LLMSIM_DATA_DIR; the install tree (<exe>/../share/llmsim); the
 * source tree the binary was built from. The first that holds hw/ wins.
 */
#ifndef LLMSIM_PATHS_H
#define LLMSIM_PATHS_H

#include <stddef.h>

/* The data folder (no trailing slash), or NULL if none was found. The
 * string is static. */
const char *llmsim_data_dir(void);

/* Join data_dir/sub/name into buf; returns 0, or -1 if it does not fit or
 * there is no data folder. */
int llmsim_data_path(char *buf, size_t size, const char *sub, const char *name);

/* Version and git revision baked in at build time. */
const char *llmsim_version(void);
const char *llmsim_git_revision(void);

#endif
