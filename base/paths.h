/*
 * paths.h - where llmsim finds its data (hw/, models/, calib/data/) at run
 * time, the same way for an installed binary and one in a build tree.
 *
 * Order: $LLMSIM_DATA_DIR, taken as given; the install tree next to the
 * binary (<exe>/../share/llmsim, so a copied or relocated prefix works);
 * the install prefix the binary was configured with
 * (CMAKE_INSTALL_FULL_DATADIR/llmsim). The source tree the binary was
 * built from comes first when $LLMSIM_SOURCE_DATA=1 asks for it: otherwise
 * a binary in a build tree reads what `cmake --install` put in place,
 * exactly as the installed one does, and its source tree only when nothing
 * is installed (a fresh clone built and run in place, as the README's
 * calibration section does). The first that holds hw/ wins.
 */
#ifndef LLMSIM_PATHS_H
#define LLMSIM_PATHS_H

#include <stddef.h>

/* The data folder (no trailing slash), or NULL if none was found. The
 * string is static. */
const char *llmsim_data_dir(void);

/* How llmsim_data_dir was found, for --version: "LLMSIM_DATA_DIR", "the
 * install tree next to the binary", "the install prefix", "the source tree,
 * as LLMSIM_SOURCE_DATA=1 asks", "the source tree the binary was built from
 * (nothing installed)", or "none" when there is no data folder. */
const char *llmsim_data_dir_origin(void);

/* One sentence on how to make data available, for messages when there is
 * no data folder. */
const char *llmsim_data_dir_hint(void);

/* Join data_dir/sub/name into buf; returns 0, or -1 if it does not fit or
 * there is no data folder. */
int llmsim_data_path(char *buf, size_t size, const char *sub, const char *name);

/* The file an input path names: `path` itself when it exists, is absolute
 * or there is no data folder; else, for a relative path, <data>/path when
 * that exists (so `--db calib/data/trace_llama.txt.gz` names the shipped
 * trace from any folder). Returns path or buf (size bytes). */
const char *llmsim_data_input(const char *path, char *buf, size_t size);

/* A path as pages and tables name it: relative to the data folder when it
 * lies inside it ("hw/profiles/h200.yaml"), else path itself. Points into
 * path. */
const char *llmsim_data_rel(const char *path);

/* Version and git revision baked in at build time. */
const char *llmsim_version(void);
const char *llmsim_git_revision(void);

#endif
