/* gnuplot.c - find gnuplot, probe its PNG terminal, run it, check the PNG. */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "png.h"

extern char **environ;

static int find_in_path(const char *prog, char *out, size_t size)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		return -1;
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		struct stat st;
		/* An empty PATH element means the current folder. */
		int n = len ? snprintf(out, size, "%.*s/%s", (int)len, path, prog)
			    : snprintf(out, size, "./%s", prog);
		if (n > 0 && (size_t)n < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		path += len + (colon != NULL);
	}
	return -1;
}

/* Spawn gnuplot with argv; stdout to /dev/null, stderr to log (or
 * /dev/null). Returns the exit status, or -1 when it could not run. */
static int spawn_wait(const char *exe, char *const argv[], const char *log)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rc;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, log ? log : "/dev/null",
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int llmsim_gnuplot_open(struct llmsim_gnuplot *gp, struct llmsim_err *err)
{
	memset(gp, 0, sizeof *gp);
	if (find_in_path("gnuplot", gp->path, sizeof gp->path))
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s", LLMSIM_GNUPLOT_MISSING);
	char *cairo[] = {"gnuplot", "-e", "set terminal pngcairo", NULL};
	char *gd[] = {"gnuplot", "-e", "set terminal png", NULL};
	if (spawn_wait(gp->path, cairo, NULL) == 0) {
		gp->cairo = 1;
		return 0;
	}
	if (spawn_wait(gp->path, gd, NULL) == 0)
		return 0;
	return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
			      "gnuplot at '%s' has neither the pngcairo nor the png terminal",
			      gp->path);
}

void llmsim_gnuplot_terminal(const struct llmsim_gnuplot *gp, FILE *f, int width, int height)
{
	if (gp->cairo)
		fprintf(f, "set terminal pngcairo size %d,%d enhanced font 'DejaVu Sans,11' "
			   "linewidth 1.2 background rgb 'white'\n", width, height);
	else
		fprintf(f, "set terminal png size %d,%d enhanced font 'DejaVuSans,10' "
			   "background rgb 'white'\n", width, height);
}

void llmsim_gnuplot_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* First line of the log that looks like an error, for the message. */
static void first_error(const char *log, char *out, size_t size)
{
	char line[512];
	FILE *f = fopen(log, "r");
	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		const char *p = line + strspn(line, " \t^");
		if (*p && (!out[0] || strstr(p, "line ") == p)) {
			snprintf(out, size, "%s", p);
			if (strstr(p, "line ") == p)
				break;
		}
	}
	fclose(f);
}

int llmsim_gnuplot_run(const struct llmsim_gnuplot *gp, const char *script,
		       const char *log_path, const char *png_path, int width, int height,
		       struct llmsim_err *err)
{
	char *argv[] = {"gnuplot", (char *)script, NULL};
	int rc = spawn_wait(gp->path, argv, log_path);
	if (rc < 0)
		return llmsim_err_set(err, LLMSIM_EIO, "cannot run '%s': %s", gp->path,
				      strerror(errno));
	if (rc) {
		char why[300];
		first_error(log_path, why, sizeof why);
		return llmsim_err_set(err, LLMSIM_EIO, "gnuplot failed on '%s' (exit %d)%s%s",
				      script, rc, why[0] ? ": " : "", why);
	}
	int w = 0, h = 0;
	rc = llmsim_png_info(png_path, &w, &h, err);
	if (rc)
		return rc;
	if (w != width || h != height)
		return llmsim_err_set(err, LLMSIM_EIO, "gnuplot wrote '%s' as %dx%d, not %dx%d",
				      png_path, w, h, width, height);
	return 0;
}
