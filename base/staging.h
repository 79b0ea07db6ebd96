/*
 * staging.h - temporary files and folders that a killed run can leave
 * behind, named so that the next run finds and removes them.
 *
 * A writer stages its output beside the target and renames it in (calib
 * export, trace export, --trace-out, report's folder). A kill -9 between
 * the two leaves the staged file; so its name carries the writer's pid and
 * host: "<target>.tmp-<pid>-<host>-XXXXXX" (host: 8 hex digits of a hash
 * of the host name, so that a folder shared between machines is judged
 * only by the machine that wrote it). The next writer of the same target
 * removes each such sibling whose pid is no longer alive on this host. A
 * live writer's file is never touched; a file of a pid since reused by
 * another process is left until that process ends.
 *
 *   char tmp[PATH_MAX + 64];
 *   llmsim_stage_sweep(out);                        // what killed runs left
 *   if (llmsim_stage_name(tmp, sizeof tmp, out)) ...   // too long
 *   int fd = mkstemp(tmp);  (or mkdtemp(tmp))
 */
#ifndef LLMSIM_STAGING_H
#define LLMSIM_STAGING_H

#include <stddef.h>

/* "<target>.tmp-<pid>-<host>-XXXXXX" into buf, for mkstemp or mkdtemp.
 * 0, or -1 when it does not fit (errno ENAMETOOLONG). */
int llmsim_stage_name(char *buf, size_t size, const char *target);

/* The same for a work folder of its own: "<dir>/<prefix>-<pid>-<host>-XXXXXX". */
int llmsim_stage_name_in(char *buf, size_t size, const char *dir, const char *prefix);

/* Remove (a file, or a folder and all it holds) every entry of target's
 * folder named "<basename of target>.tmp-<pid>-<host>-XXXXXX" by this host
 * whose pid is not alive. Returns how many were removed (errors are
 * ignored: a sweep never stops a run). */
int llmsim_stage_sweep(const char *target);

/* The same for entries "<prefix>-<pid>-<host>-XXXXXX" of dir. */
int llmsim_stage_sweep_in(const char *dir, const char *prefix);

/* Remove path: a file, or a folder and everything under it (links are
 * removed, never followed). 0, or -1 with errno. */
int llmsim_rmtree(const char *path);

#endif
