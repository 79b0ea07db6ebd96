/*
 * json_error.c - the error form of --json and the terminal progress line
 * (json_error.h).
 */
#include "json_error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"

static int progress_fd = -2; /* -2: not decided yet (stderr itself) */

int cli_wants_json(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "--json"))
			return 1;
	}
	return 0;
}

/* The first "path:line:" of msg: the path's start and length, the line. */
static int locate(const char *msg, const char **path, size_t *plen, long *line)
{
	for (const char *p = msg; *p; p++) {
		if (*p != ':' || !isdigit((unsigned char)p[1]))
			continue;
		char *end;
		long l = strtol(p + 1, &end, 10);
		if (*end != ':' || l <= 0)
			continue;
		const char *s = p;
		while (s > msg && !isspace((unsigned char)s[-1]) && s[-1] != '\'' && s[-1] != '"')
			s--;
		/* a file's name: not a number, with a '.' or '/' ("gamma:1:2" is
		 * a distribution, not a place) */
		if (s == p || isdigit((unsigned char)*s) || (!memchr(s, '.', (size_t)(p - s)) &&
							     !memchr(s, '/', (size_t)(p - s))))
			continue;
		*path = s;
		*plen = (size_t)(p - s);
		*line = l;
		return 1;
	}
	return 0;
}

void cli_json_error_print(FILE *f, const char *msg)
{
	struct llmsim_json j;
	const char *path;
	size_t plen;
	long line;
	llmsim_json_init(&j, f);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_obj_begin(&j, "error");
	llmsim_json_str(&j, "message", msg);
	if (locate(msg, &path, &plen, &line)) {
		char *file = strndup(path, plen);
		llmsim_json_str(&j, "file", file);
		llmsim_json_int(&j, "line", line);
		free(file);
	} else {
		llmsim_json_null(&j, "file");
		llmsim_json_null(&j, "line");
	}
	llmsim_json_obj_end(&j);
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

/* All of f (rewound) into a malloc'd, NUL-terminated string. */
static char *slurp(FILE *f, size_t *n)
{
	long len = ftell(f);
	char *s = malloc(len > 0 ? (size_t)len + 1 : 1);
	*n = 0;
	if (!s)
		return NULL;
	rewind(f);
	if (len > 0)
		*n = fread(s, 1, (size_t)len, f);
	s[*n] = 0;
	return s;
}

int cli_json_run(int (*fn)(int argc, char **argv, void *ctx), int argc, char **argv, void *ctx)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int out_fd = dup(1), err_fd = dup(2);
	if (!o || !e || out_fd < 0 || err_fd < 0) { /* no room to hold it: run as is */
		if (o)
			fclose(o);
		if (e)
			fclose(e);
		return fn(argc, argv, ctx);
	}
	fflush(stdout);
	fflush(stderr);
	progress_fd = isatty(err_fd) ? err_fd : -1;
	dup2(fileno(o), 1);
	dup2(fileno(e), 2);
	int rc = fn(argc, argv, ctx);
	fflush(stdout);
	fflush(stderr);
	dup2(out_fd, 1);
	dup2(err_fd, 2);
	close(out_fd);
	close(err_fd);
	progress_fd = -2;
	fseek(o, 0, SEEK_END);
	fseek(e, 0, SEEK_END);
	size_t no, ne;
	char *out = slurp(o, &no), *err = slurp(e, &ne);
	fclose(o);
	fclose(e);
	if (err)
		fwrite(err, 1, ne, stderr);
	if (rc == 0) {
		if (out)
			fwrite(out, 1, no, stdout);
	} else {
		/* the last non-empty line of stderr is the error */
		char *msg = err ? err : "";
		size_t n = ne;
		while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
			msg[--n] = 0;
		char *nl = strrchr(msg, '\n');
		if (nl)
			msg = nl + 1;
		char fallback[64];
		if (!*msg) {
			snprintf(fallback, sizeof fallback, "failed with exit status %d", rc);
			msg = fallback;
		}
		cli_json_error_print(stdout, msg);
	}
	free(out);
	free(err);
	return rc;
}

int cli_progress_fd(void)
{
	if (progress_fd == -2)
		return isatty(2) ? 2 : -1;
	return progress_fd;
}

static int progress_shown;

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

void cli_progress(const char *fmt, ...)
{
	static struct timespec start, last;
	static int started;
	int fd = cli_progress_fd();
	if (fd < 0)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!started) {
		start = now;
		started = 1;
	}
	/* a run shorter than a second shows nothing; then 5 lines a second */
	if (since(&start, &now) < 1 || (progress_shown && since(&last, &now) < 0.2))
		return;
	last = now;
	char line[160] = "\r";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + 1, sizeof line - 5, fmt, ap);
	va_end(ap);
	strcat(line, "\033[K"); /* clear the rest of the old line */
	if (write(fd, line, strlen(line)) < 0)
		return;
	progress_shown = 1;
}

void cli_progress_done(void)
{
	int fd = cli_progress_fd();
	if (fd < 0 || !progress_shown)
		return;
	progress_shown = 0;
	if (write(fd, "\r\033[K", 4) < 0)
		return;
}
