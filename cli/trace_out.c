/*
 * trace_out.c - the simulated timeline as a Chrome/Perfetto trace
 * (trace_out.h). The format is Google's "Trace Event Format": an object
 * with "traceEvents", each a complete event {"name", "cat", "ph": "X",
 * "ts", "dur", "pid", "tid", "args"} with times in microseconds, and the
 * tracks' names as "process_name" / "thread_name" metadata ("ph": "M").
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/staging.h"
#include "trace_out.h"

static int fail(const char *cmd, const char *path, const char *why)
{
	fprintf(stderr, "%s: --trace-out %s: %s\n", cmd, path, why);
	return 1;
}

/* A temporary file beside path, open for writing with the mode a new file
 * gets; NULL with errno. */
static FILE *open_tmp(const char *path, char *tmp, size_t size)
{
	llmsim_stage_sweep(path); /* what a killed run left */
	if (llmsim_stage_name(tmp, size, path))
		return NULL;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return NULL;
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask)) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
	}
	return f;
}

int cli_trace_check(const char *cmd, const char *path)
{
	struct stat st;
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return fail(cmd, path, "not a regular file");
	char tmp[PATH_MAX + 64];
	FILE *f = open_tmp(path, tmp, sizeof tmp);
	if (!f)
		return fail(cmd, path, strerror(errno));
	fclose(f);
	unlink(tmp);
	return 0;
}

static void meta(struct llmsim_json *j, const char *what, int pid, int tid, const char *key,
		 const char *name, int sort)
{
	llmsim_json_obj_begin(j, NULL);
	llmsim_json_str(j, "name", what);
	llmsim_json_str(j, "ph", "M");
	llmsim_json_int(j, "pid", pid);
	llmsim_json_int(j, "tid", tid);
	llmsim_json_obj_begin(j, "args");
	if (name)
		llmsim_json_str(j, key, name);
	else
		llmsim_json_int(j, key, sort);
	llmsim_json_obj_end(j);
	llmsim_json_obj_end(j);
}

/* The times are written in whole quanta of `q` nanoseconds, the finest
 * power of ten that keeps every timestamp within 10 significant digits:
 * start and end of each event rounded alike, so that events that follow
 * each other on a track stay apart in any reader (a viewer nests events
 * that overlap by a rounding error). */
static double quantum_ns(const struct llmsim_timeline *tl)
{
	double end_ns = llmsim_tl_end(tl) * 1e9, q = 1;
	while (end_ns / q >= 1e10)
		q *= 10;
	return q;
}

static void write_trace(FILE *f, const char *cmd, const struct llmsim_timeline *tl)
{
	struct llmsim_json j;
	double q = quantum_ns(tl);
	int64_t below = 0; /* events shorter than the quantum */
	for (int64_t i = 0; i < tl->nev; i++) {
		const struct llmsim_tl_event *e = &tl->ev[i];
		below += round((e->start_s + e->dur_s) * 1e9 / q) <= round(e->start_s * 1e9 / q);
	}
	llmsim_json_init(&j, f);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "displayTimeUnit", "ms");
	llmsim_json_obj_begin(&j, "otherData");
	llmsim_json_str(&j, "generator", cmd);
	llmsim_json_str(&j, "time_unit", "us");
	for (int i = 0; i < tl->nfigures; i++)
		llmsim_json_num(&j, tl->figure[i].key, tl->figure[i].value);
	if (tl->note[0])
		llmsim_json_str(&j, "note", tl->note);
	llmsim_json_num(&j, "time_quantum_us", q / 1000);
	llmsim_json_int(&j, "events", tl->nev - below);
	llmsim_json_int(&j, "events_dropped", tl->dropped);
	llmsim_json_int(&j, "events_below_quantum", below);
	llmsim_json_obj_end(&j);
	llmsim_json_arr_begin(&j, "traceEvents");
	/* name the tracks that hold events, each process once */
	char *used = calloc((size_t)tl->ntracks + 1, 1);
	for (int64_t i = 0; used && i < tl->nev; i++)
		used[tl->ev[i].track] = 1;
	for (int i = 0; i < tl->ntracks; i++) {
		const struct llmsim_tl_track *t = &tl->track[i];
		if (used && !used[i])
			continue;
		int first = 1;
		for (int k = 0; k < i; k++)
			first &= tl->track[k].pid != t->pid || (used && !used[k]);
		if (first) {
			meta(&j, "process_name", t->pid, 0, "name", t->process, 0);
			meta(&j, "process_sort_index", t->pid, 0, "sort_index", NULL, i);
		}
		meta(&j, "thread_name", t->pid, t->tid, "name", t->thread, 0);
		meta(&j, "thread_sort_index", t->pid, t->tid, "sort_index", NULL, t->tid);
	}
	free(used);
	for (int64_t i = 0; i < tl->nev; i++) {
		const struct llmsim_tl_event *e = &tl->ev[i];
		const struct llmsim_tl_track *t = &tl->track[e->track];
		double a = round(e->start_s * 1e9 / q), b = round((e->start_s + e->dur_s) * 1e9 / q);
		if (b <= a)
			continue;
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "name", e->name);
		llmsim_json_str(&j, "cat", e->cat ? e->cat : "sim");
		llmsim_json_str(&j, "ph", "X");
		llmsim_json_num(&j, "ts", a * q / 1000);
		llmsim_json_num(&j, "dur", (b - a) * q / 1000);
		llmsim_json_int(&j, "pid", t->pid);
		llmsim_json_int(&j, "tid", t->tid);
		llmsim_json_obj_begin(&j, "args");
		llmsim_json_num(&j, "dur_s", e->dur_s);
		for (int a = 0; a < e->nargs; a++)
			llmsim_json_num(&j, e->arg[a].key, e->arg[a].value);
		llmsim_json_obj_end(&j);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_arr_end(&j);
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

int cli_trace_write(const char *cmd, const char *path, const struct llmsim_timeline *tl)
{
	if (tl->oom) /* an event the timeline had no memory for: not a trace to write */
		return fail(cmd, path, "out of memory for the timeline");
	char tmp[PATH_MAX + 64];
	FILE *f = open_tmp(path, tmp, sizeof tmp);
	if (!f)
		return fail(cmd, path, strerror(errno));
	write_trace(f, cmd, tl);
	int bad = ferror(f);
	if (fclose(f))
		bad = 1;
	if (bad || rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		return fail(cmd, path, e ? strerror(e) : "write error");
	}
	if (tl->note[0])
		fprintf(stderr, "%s: --trace-out %s: %s\n", cmd, path, tl->note);
	if (tl->dropped)
		fprintf(stderr, "%s: --trace-out %s: %lld events past the first %lld not written\n",
			cmd, path, (long long)tl->dropped, (long long)tl->nev);
	return 0;
}
