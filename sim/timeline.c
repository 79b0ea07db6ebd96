/*
 * timeline.c - the events of a simulated run (timeline.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/timeline.h"

void llmsim_tl_reset(struct llmsim_timeline *tl)
{
	tl->ntracks = 0;
	tl->nev = 0;
	tl->dropped = 0;
	tl->oom = 0;
	tl->now_s = 0;
	tl->nfigures = 0;
	tl->note[0] = 0;
}

void llmsim_tl_release(struct llmsim_timeline *tl)
{
	if (!tl)
		return;
	free(tl->track);
	free(tl->ev);
	memset(tl, 0, sizeof *tl);
}

/* Double *p's room (first: `first` elements); 1 and tl->oom when out of
 * memory, *p and *cap then as they were. */
static int grow(struct llmsim_timeline *tl, void **p, int64_t *cap, int64_t first, size_t elem)
{
	int64_t n = *cap ? 2 * *cap : first;
	void *q = realloc(*p, elem * (size_t)n);
	if (!q) {
		tl->oom = 1;
		return 1;
	}
	*p = q;
	*cap = n;
	return 0;
}

int llmsim_tl_track(struct llmsim_timeline *tl, int pid, const char *process, int tid,
		    const char *thread)
{
	for (int i = 0; i < tl->ntracks; i++)
		if (tl->track[i].pid == pid && tl->track[i].tid == tid)
			return i;
	int64_t cap = tl->cap_tracks;
	if (tl->ntracks == cap && grow(tl, (void **)&tl->track, &cap, 16, sizeof *tl->track))
		return -1;
	tl->cap_tracks = (int)cap;
	struct llmsim_tl_track *t = &tl->track[tl->ntracks];
	t->pid = pid;
	t->tid = tid;
	snprintf(t->process, sizeof t->process, "%s", process);
	snprintf(t->thread, sizeof t->thread, "%s", thread);
	return tl->ntracks++;
}

struct llmsim_tl_event *llmsim_tl_add(struct llmsim_timeline *tl, int track, const char *cat,
				      double start_s, double dur_s, const char *fmt, ...)
{
	if (!(dur_s > 0) || track < 0)
		return NULL;
	if (tl->max_events > 0 && tl->nev >= tl->max_events) {
		tl->dropped++;
		return NULL;
	}
	if (tl->nev == tl->cap_ev && grow(tl, (void **)&tl->ev, &tl->cap_ev, 1024, sizeof *tl->ev))
		return NULL;
	struct llmsim_tl_event *e = &tl->ev[tl->nev++];
	memset(e, 0, sizeof *e);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->name, sizeof e->name, fmt, ap);
	va_end(ap);
	e->cat = cat;
	e->track = track;
	e->start_s = start_s;
	e->dur_s = dur_s;
	return e;
}

void llmsim_tl_arg(struct llmsim_tl_event *ev, const char *key, double value)
{
	if (!ev || ev->nargs >= LLMSIM_TL_ARGS)
		return;
	ev->arg[ev->nargs].key = key;
	ev->arg[ev->nargs].value = value;
	ev->nargs++;
}

void llmsim_tl_figure(struct llmsim_timeline *tl, const char *key, double value)
{
	if (tl->nfigures >= LLMSIM_TL_ARGS)
		return;
	tl->figure[tl->nfigures].key = key;
	tl->figure[tl->nfigures].value = value;
	tl->nfigures++;
}

double llmsim_tl_end(const struct llmsim_timeline *tl)
{
	double end = 0;
	for (int64_t i = 0; i < tl->nev; i++) {
		double e = tl->ev[i].start_s + tl->ev[i].dur_s;
		if (e > end)
			end = e;
	}
	return end;
}
