/*
 * timeline.h - the simulated timeline of a run, as events on tracks: what
 * `--trace-out` writes as a Chrome/Perfetto trace (cli/trace_out.c).
 *
 * The simulator fills it (sim/train/schedule.c for a training step,
 * sim/infer/infer_run.c for a request shape, sim/infer/serve.c for a
 * serving run) with the very times it priced: a timeline never prices
 * anything of its own. A track is one row of the viewer, named by a
 * process (a pipeline stage, "engine", "requests") and a thread in it
 * ("compute", "TP comm"); times are seconds from the start of the run.
 */
#ifndef LLMSIM_TIMELINE_H
#define LLMSIM_TIMELINE_H

#include <stdint.h>

#define LLMSIM_TL_ARGS 8      /* numeric arguments one event carries at most */

struct llmsim_tl_track {
	int pid, tid;             /* the viewer's process and thread ids */
	char process[64];         /* "stage 0 (ranks 0-3)" */
	char thread[48];          /* "compute" */
};

struct llmsim_tl_arg {
	const char *key;          /* a static string: "tokens", "exposed_s" */
	double value;
};

struct llmsim_tl_event {
	char name[48];            /* "F mb 3 chunk 1", "decode" */
	const char *cat;          /* a static string: "compute", "comm", "step" */
	int track;                /* index into timeline.track */
	double start_s, dur_s;
	int nargs;
	struct llmsim_tl_arg arg[LLMSIM_TL_ARGS];
};

struct llmsim_timeline {
	struct llmsim_tl_track *track;
	int ntracks, cap_tracks;
	struct llmsim_tl_event *ev;
	int64_t nev, cap_ev;
	int64_t max_events;       /* 0: no limit; else events past it are counted, not kept */
	int64_t dropped;          /* events not kept (max_events) */
	int oom;                  /* an allocation failed: events are missing */
	double now_s;             /* the producer's own cursor (where its next step goes) */
	/* the figures the timeline must agree with, as the run printed them
	 * ("step_time_s", "ttft_s", "e2e_s", "makespan_s": key a static string) */
	struct llmsim_tl_arg figure[LLMSIM_TL_ARGS];
	int nfigures;
	char note[160];           /* what a reader should know ("requests: 1000 of 5000
				   * written"); "" */
};

/* Zero-initialize a timeline (or memset it to 0); release with
 * llmsim_tl_release. Resetting drops the events and tracks but keeps
 * max_events. */
void llmsim_tl_reset(struct llmsim_timeline *tl);
void llmsim_tl_release(struct llmsim_timeline *tl); /* NULL: no-op */

/* The index of the track (pid, tid), added with its names when new;
 * -1 when out of memory (tl->oom set). */
int llmsim_tl_track(struct llmsim_timeline *tl, int pid, const char *process, int tid,
		    const char *thread);

/* Add an event of dur_s > 0 at start_s on track (printf-style name).
 * Returns it for llmsim_tl_arg, valid until the next llmsim_tl_add (which
 * may move the events), or NULL when it was not kept: zero duration, past
 * max_events, or out of memory (each recorded in tl). */
struct llmsim_tl_event *llmsim_tl_add(struct llmsim_timeline *tl, int track, const char *cat,
				      double start_s, double dur_s, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Attach a numeric argument (key a static string) to ev; NULL ev or a
 * full event is a no-op. */
void llmsim_tl_arg(struct llmsim_tl_event *ev, const char *key, double value);

/* Record a figure (llmsim_tl_arg's rules: a full list ignores it). */
void llmsim_tl_figure(struct llmsim_timeline *tl, const char *key, double value);

/* The latest end of an event (0 when empty). */
double llmsim_tl_end(const struct llmsim_timeline *tl);

#endif
