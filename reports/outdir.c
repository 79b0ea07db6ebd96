/* outdir.c - stage a result folder next to its target, then rename it in. */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 when the folder has entries besides . and .., 0 when empty, -1 on error. */
static int not_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int any = 0;
	if (!d)
		return -1;
	while (!any && (e = readdir(d)))
		any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return any;
}

/* Whether dir holds the marker, as a regular file (a link to one elsewhere
 * does not count). */
static int has_marker(const char *dir)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, LLMSIM_OUTDIR_MARKER);
	return !lstat(p, &st) && S_ISREG(st.st_mode);
}

static int write_marker(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, LLMSIM_OUTDIR_MARKER);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	fputs("This folder was written by llmsim (llmsim report). `llmsim report --force`\n"
	      "replaces only folders holding this file.\n", f);
	return fclose(f) ? -1 : 0;
}

int llmsim_outdir_begin(struct llmsim_outdir *o, const char *dir, int force,
			struct llmsim_err *err)
{
	struct stat st;
	memset(o, 0, sizeof *o);
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 0 || len + 16 >= sizeof o->dir)
		return llmsim_err_set(err, LLMSIM_EINVAL, "bad output folder '%s'", dir);
	memcpy(o->dir, dir, len);
	o->dir[len] = 0;
	const char *base = strrchr(o->dir, '/');
	base = base ? base + 1 : o->dir;
	if (!strcmp(base, ".") || !strcmp(base, ".."))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "output folder '%s' must name a folder, not '.' or '..'",
				      o->dir);

	if (stat(o->dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "'%s' exists and is not a folder", o->dir);
		if (access(o->dir, W_OK | X_OK))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "output folder '%s' is not writable", o->dir);
		int ne = not_empty(o->dir);
		if (ne < 0)
			return llmsim_err_set(err, LLMSIM_EIO, "cannot read folder '%s': %s",
					      o->dir, strerror(errno));
		if (ne && !force)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "output folder '%s' exists and is not empty "
					      "(use --force to replace it)", o->dir);
		if (ne && !has_marker(o->dir))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "output folder '%s' holds no earlier llmsim report (no %s"
					      " file): --force replaces only such a folder; remove it "
					      "yourself or choose another --out", o->dir,
					      LLMSIM_OUTDIR_MARKER);
		o->replace = ne;
	} else if (errno != ENOENT) {
		return llmsim_err_set(err, LLMSIM_EIO, "cannot use output folder '%s': %s",
				      o->dir, strerror(errno));
	}

	/* a staging folder a killed report left goes first; this one is
	 * named so that the next run can tell when it is stale */
	llmsim_stage_sweep(o->dir);
	if (llmsim_stage_name(o->tmp, sizeof o->tmp, o->dir) || !mkdtemp(o->tmp)) {
		int e = errno;
		o->tmp[0] = 0;
		return llmsim_err_set(err, LLMSIM_EIO, "cannot create output folder '%s': %s",
				      o->dir, strerror(e));
	}
	return 0;
}

int llmsim_outdir_path(const struct llmsim_outdir *o, const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", o->tmp, name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

int llmsim_outdir_commit(struct llmsim_outdir *o, struct llmsim_err *err)
{
	int rc;
	if (!o->tmp[0])
		return llmsim_err_set(err, LLMSIM_EINVAL, "no staging folder to commit");
	/* Group and others get the usual folder permissions (mkdtemp made it 0700). */
	if (write_marker(o->tmp)) {
		int e = errno;
		llmsim_outdir_abort(o);
		return llmsim_err_set(err, LLMSIM_EIO, "cannot write into '%s': %s", o->dir,
				      strerror(e));
	}
	mode_t mask = umask(0);
	umask(mask);
	chmod(o->tmp, 0777 & ~mask);
	if (o->replace) {
		/* Swap the new folder with the old one in one step, then delete
		 * the old contents, which now sit under the staging name. */
		rc = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->dir, RENAME_EXCHANGE);
		if (rc == 0) {
			llmsim_rmtree(o->tmp);
			o->tmp[0] = 0;
			return 0;
		}
	} else {
		/* rename(2) replaces a missing or empty folder. */
		rc = rename(o->tmp, o->dir);
		if (rc == 0) {
			o->tmp[0] = 0;
			return 0;
		}
	}
	int e = errno;
	llmsim_outdir_abort(o);
	return llmsim_err_set(err, LLMSIM_EIO, "cannot move the report into '%s': %s", o->dir,
			      strerror(e));
}

void llmsim_outdir_abort(struct llmsim_outdir *o)
{
	if (o->tmp[0])
		llmsim_rmtree(o->tmp);
	o->tmp[0] = 0;
}
