/* paths.c - locating the data folder (see paths.h); version strings. */
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Both are set for this file alone (base/CMakeLists.txt): no other code
 * knows where the source tree or the install prefix is. */
#ifndef LLMSIM_SOURCE_DIR
#define LLMSIM_SOURCE_DIR ""
#endif
#ifndef LLMSIM_BUILD_DIR
#define LLMSIM_BUILD_DIR ""
#endif
#ifndef LLMSIM_INSTALL_DATA_DIR
#define LLMSIM_INSTALL_DATA_DIR ""
#endif
#ifndef LLMSIM_VERSION
#define LLMSIM_VERSION "0.0.0"
#endif
#ifndef LLMSIM_GIT_REV
#define LLMSIM_GIT_REV "unknown"
#endif

static char dir[PATH_MAX];
static const char *origin = "none";

static int has_hw(const char *d)
{
	char p[PATH_MAX];
	struct stat st;
	if (!*d || snprintf(p, sizeof p, "%s/hw", d) >= (int)sizeof p)
		return 0;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Take d (made absolute when possible) as the data folder. */
static int take(const char *d, const char *why)
{
	if (!has_hw(d))
		return 0;
	if (!realpath(d, dir))
		snprintf(dir, sizeof dir, "%s", d);
	origin = why;
	return 1;
}

static void find(void)
{
	const char *env = getenv("LLMSIM_DATA_DIR");
	if (env && *env) {
		/* An explicit override is taken as given, even if wrong: the
		 * error then names it instead of silently using another tree. */
		snprintf(dir, sizeof dir, "%s", env);
		origin = "LLMSIM_DATA_DIR";
		return;
	}
	char exe[PATH_MAX];
	int in_build = 0; /* the binary still sits in the build tree it was made in */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		size_t b = strlen(LLMSIM_BUILD_DIR);
		in_build = b && !strncmp(exe, LLMSIM_BUILD_DIR, b) && exe[b] == '/';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			char cand[PATH_MAX];
			if (snprintf(cand, sizeof cand, "%s/../share/llmsim", exe) < (int)sizeof cand &&
			    take(cand, "the install tree next to the binary"))
				return;
		}
	}
	/* asked for explicitly, the source tree comes before the install prefix:
	 * a build-tree binary then reads its own commit's data, not what an
	 * earlier `cmake --install` left under the prefix */
	const char *src = getenv("LLMSIM_SOURCE_DATA");
	if (src && !strcmp(src, "1") && take(LLMSIM_SOURCE_DIR, "the source tree, as LLMSIM_SOURCE_DATA=1 asks"))
		return;
	if (take(LLMSIM_INSTALL_DATA_DIR, "the install prefix"))
		return;
	/* nothing installed: a binary run from its build tree (the README's
	 * "Calibrating your own GPU" runs build/cli/llmsim) reads the source
	 * tree it was built from; an installed one never does */
	if (in_build &&
	    take(LLMSIM_SOURCE_DIR, "the source tree the binary was built from (nothing installed)"))
		return;
	dir[0] = 0;
	origin = "none";
}

const char *llmsim_data_dir(void)
{
	static int done;
	if (!done) {
		done = 1;
		find();
	}
	return dir[0] ? dir : NULL;
}

const char *llmsim_data_dir_origin(void)
{
	llmsim_data_dir();
	return origin;
}

const char *llmsim_data_dir_hint(void)
{
	return "run 'cmake --install', set LLMSIM_DATA_DIR to a folder holding hw/, or set "
	       "LLMSIM_SOURCE_DATA=1 to read the source tree the binary was built from";
}

int llmsim_data_path(char *buf, size_t size, const char *sub, const char *name)
{
	const char *d = llmsim_data_dir();
	if (!d)
		return -1;
	int n = snprintf(buf, size, "%s/%s/%s", d, sub, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

const char *llmsim_data_input(const char *path, char *buf, size_t size)
{
	const char *d;
	if (!path || !*path || path[0] == '/' || access(path, F_OK) == 0 ||
	    !(d = llmsim_data_dir()))
		return path;
	int n = snprintf(buf, size, "%s/%s", d, path);
	if (n < 0 || (size_t)n >= size || access(buf, F_OK) != 0)
		return path;
	return buf;
}

const char *llmsim_data_rel(const char *path)
{
	const char *d = path ? llmsim_data_dir() : NULL;
	size_t n = d ? strlen(d) : 0;
	if (n && !strncmp(path, d, n) && path[n] == '/' && path[n + 1])
		return path + n + 1;
	return path;
}

const char *llmsim_version(void) { return LLMSIM_VERSION; }
const char *llmsim_git_revision(void) { return LLMSIM_GIT_REV; }
