/* staging.c - named temporaries and the sweep of stale ones (staging.h). */
#include "staging.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"

/* 8 hex digits naming this host. */
static unsigned host_tag(void)
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1))
		host[0] = 0;
	return (unsigned)(llmsim_hash_str(LLMSIM_HASH_SEED, host) & 0xffffffffu);
}

int llmsim_stage_name_in(char *buf, size_t size, const char *dir, const char *prefix)
{
	int n = snprintf(buf, size, "%s%s%s-%ld-%08x-XXXXXX", dir ? dir : "", dir ? "/" : "",
			 prefix, (long)getpid(), host_tag());
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int llmsim_stage_name(char *buf, size_t size, const char *target)
{
	int n = snprintf(buf, size, "%s.tmp-%ld-%08x-XXXXXX", target, (long)getpid(), host_tag());
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int llmsim_rmtree(const char *path)
{
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The pid of a name "<prefix>-<pid>-<host>-XXXXXX" written on this host,
 * or 0 when the name is not one. */
static long stale_pid(const char *name, const char *prefix, unsigned host)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) || name[pl] != '-')
		return 0;
	const char *p = name + pl + 1;
	char *end;
	errno = 0;
	long pid = strtol(p, &end, 10);
	if (errno || end == p || pid <= 0 || *end != '-')
		return 0;
	unsigned long h = strtoul(end + 1, &end, 16);
	if (*end != '-' || h != host || strlen(end + 1) != 6)
		return 0;
	return pid;
}

int llmsim_stage_sweep_in(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir && *dir ? dir : ".");
	if (!d)
		return 0;
	unsigned host = host_tag();
	int removed = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid = stale_pid(e->d_name, prefix, host);
		/* alive, or someone else's (EPERM): leave it */
		if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char p[4400];
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir && *dir ? dir : ".", e->d_name) >=
		    sizeof p)
			continue;
		if (!llmsim_rmtree(p))
			removed++;
	}
	closedir(d);
	return removed;
}

int llmsim_stage_sweep(const char *target)
{
	char dir[4200], prefix[512];
	size_t len = strlen(target);
	while (len > 1 && target[len - 1] == '/')
		len--;
	if (!len || len >= sizeof dir)
		return 0;
	memcpy(dir, target, len);
	dir[len] = 0;
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	if ((size_t)snprintf(prefix, sizeof prefix, "%s.tmp", base) >= sizeof prefix)
		return 0;
	if (slash == dir)
		dir[1] = 0; /* "/x": the root */
	else if (slash)
		*slash = 0;
	else
		dir[0] = 0;
	return llmsim_stage_sweep_in(dir, prefix);
}
