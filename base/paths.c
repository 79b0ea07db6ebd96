/* paths.c - locating the data folder; version strings. */
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LLMSIM_SOURCE_DIR
#define LLMSIM_SOURCE_DIR "."
#endif
#ifndef LLMSIM_VERSION
#define LLMSIM_VERSION "0.0.0"
#endif
#ifndef LLMSIM_GIT_REV
#define LLMSIM_GIT_REV "unknown"
#endif

static int has_hw(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;
	if (snprintf(p, sizeof p, "%s/hw", dir) >= (int)sizeof p)
		return 0;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *llmsim_data_dir(void)
{
	static char dir[PATH_MAX];
	static int done;
	if (done)
		return dir[0] ? dir : NULL;
	done = 1;
	const char *env = getenv("LLMSIM_DATA_DIR");
	if (env && *env) {
		/* An explicit override is taken as given, even if wrong: the
		 * error then names it instead of silently using another tree. */
		snprintf(dir, sizeof dir, "%s", env);
		return dir;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			char cand[PATH_MAX];
			if (snprintf(cand, sizeof cand, "%s/../share/llmsim", exe) < (int)sizeof cand &&
			    has_hw(cand) && realpath(cand, dir))
				return dir;
		}
	}
	if (has_hw(LLMSIM_SOURCE_DIR)) {
		snprintf(dir, sizeof dir, "%s", LLMSIM_SOURCE_DIR);
		return dir;
	}
	dir[0] = 0;
	return NULL;
}

int llmsim_data_path(char *buf, size_t size, const char *sub, const char *name)
{
	const char *d = llmsim_data_dir();
	if (!d)
		return -1;
	int n = snprintf(buf, size, "%s/%s/%s", d, sub, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

const char *llmsim_version(void) { return LLMSIM_VERSION; }
const char *llmsim_git_revision(void) { return LLMSIM_GIT_REV; }
