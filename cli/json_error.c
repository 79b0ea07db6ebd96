/*
 * json_error.c - the error form of --json and the terminal progress line
 * (json_error.h).
 */
#include "json_error.h"

#include <ctype.h>
#include <pthread.h>
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

/* stderr under --json goes through a pipe: a thread passes it on to the
 * real stderr as it comes (so a crash or a signal loses nothing already
 * said, and a child program's output shows live) and keeps its last
 * non-empty line, the error, bounded. */
struct err_tee {
	int in, out;              /* the pipe's read end; the real stderr */
	char last[2048], cur[2048]; /* the last complete non-empty line; the one being read */
	size_t ncur;
};

static void *tee_main(void *arg)
{
	struct err_tee *t = arg;
	char buf[4096];
	ssize_t n;
	while ((n = read(t->in, buf, sizeof buf)) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(t->out, buf + off, (size_t)(n - off));
			if (w <= 0)
				break;
			off += w;
		}
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			if (c == '\n' || c == '\r') {
				if (t->ncur) {
					memcpy(t->last, t->cur, t->ncur);
					t->last[t->ncur] = 0;
				}
				t->ncur = 0;
			} else if (t->ncur < sizeof t->cur - 1) {
				t->cur[t->ncur++] = c;
			}
		}
	}
	if (t->ncur) { /* a last line without its newline */
		memcpy(t->last, t->cur, t->ncur);
		t->last[t->ncur] = 0;
	}
	return NULL;
}

/* The rest of f, from its start, onto stdout in pieces. */
static void copy_out(FILE *f)
{
	char buf[8192];
	size_t n;
	rewind(f);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, stdout);
}

int cli_json_run(int (*fn)(int argc, char **argv, void *ctx), int argc, char **argv, void *ctx)
{
	static struct err_tee tee;
	int pfd[2] = {-1, -1};
	FILE *o = tmpfile();
	int out_fd = dup(1), err_fd = dup(2);
	pthread_t th;
	if (!o || out_fd < 0 || err_fd < 0 || pipe(pfd)) {
		/* no room to hold the output: say so in the convention's form */
		if (o)
			fclose(o);
		if (out_fd >= 0)
			close(out_fd);
		if (err_fd >= 0)
			close(err_fd);
		cli_json_error_print(stdout, "--json: no temporary file or pipe to hold the output");
		return 1;
	}
	memset(&tee, 0, sizeof tee);
	tee.in = pfd[0], tee.out = err_fd;
	if (pthread_create(&th, NULL, tee_main, &tee)) {
		fclose(o);
		close(pfd[0]), close(pfd[1]), close(out_fd), close(err_fd);
		cli_json_error_print(stdout, "--json: no thread to pass stderr on");
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	progress_fd = isatty(err_fd) ? err_fd : -1;
	dup2(fileno(o), 1);
	dup2(pfd[1], 2);
	close(pfd[1]);
	int rc = fn(argc, argv, ctx);
	fflush(stdout);
	fflush(stderr);
	dup2(out_fd, 1);
	dup2(err_fd, 2); /* the pipe's last write end closes: the thread reads its end */
	pthread_join(th, NULL);
	close(pfd[0]);
	close(out_fd);
	close(err_fd);
	progress_fd = -2;
	if (rc == 0) {
		copy_out(o);
	} else {
		char fallback[64];
		const char *msg = tee.last;
		if (!*msg) {
			snprintf(fallback, sizeof fallback, "failed with exit status %d", rc);
			msg = fallback;
		}
		cli_json_error_print(stdout, msg);
	}
	fclose(o);
	return rc;
}

/* The terminal progress lines go to: the process's stderr as it was
 * before cli_json_run held it, when that is a terminal; else -1. */
static int cli_progress_fd(void)
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
