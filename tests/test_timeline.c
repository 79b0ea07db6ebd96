/*
 * test_timeline.c - sim/timeline: tracks named once, events kept up to
 * their limit and counted past it, zero-length events dropped, arguments
 * bounded, the latest end.
 */
#include <string.h>

#include "sim/timeline.h"
#include "support.h"

Test(timeline, tracks_events_and_limits)
{
	struct llmsim_timeline tl = {.max_events = 3};
	int a = llmsim_tl_track(&tl, 4, "stage 1", 2, "kernels");
	int b = llmsim_tl_track(&tl, 4, "stage 1", 3, "TP comm");
	cr_expect_eq(llmsim_tl_track(&tl, 4, "renamed", 2, "again"), a, "one track per (pid, tid)");
	cr_expect_neq(a, b);
	cr_expect_str_eq(tl.track[a].thread, "kernels");
	struct llmsim_tl_event *e = llmsim_tl_add(&tl, a, "compute", 1.0, 0.5, "F%d", 3);
	cr_assert_not_null(e);
	cr_expect_str_eq(e->name, "F3");
	for (int i = 0; i < LLMSIM_TL_ARGS + 2; i++)
		llmsim_tl_arg(e, "k", i);
	cr_expect_eq(e->nargs, LLMSIM_TL_ARGS, "arguments stop at the limit");
	cr_expect_null(llmsim_tl_add(&tl, a, "compute", 2.0, 0, "empty"), "zero length: dropped");
	cr_expect_null(llmsim_tl_add(&tl, -1, "compute", 2.0, 1, "no track"));
	cr_expect_not_null(llmsim_tl_add(&tl, b, "comm", 0.25, 2.0, "TP"));
	cr_expect_not_null(llmsim_tl_add(&tl, b, "comm", 3.0, 0.125, "TP"));
	cr_expect_null(llmsim_tl_add(&tl, b, "comm", 4.0, 1.0, "past the limit"));
	cr_expect_eq(tl.nev, 3);
	cr_expect_eq(tl.dropped, 1);
	/* ends: 1.5, 2.25, 3.125 */
	cr_expect_eq(llmsim_tl_end(&tl), 3.125);
	llmsim_tl_figure(&tl, "step_time_s", 3.125);
	cr_expect_eq(tl.nfigures, 1);
	llmsim_tl_reset(&tl);
	cr_expect(tl.nev == 0 && tl.ntracks == 0 && tl.nfigures == 0 && tl.max_events == 3);
	llmsim_tl_release(&tl);
	llmsim_tl_release(NULL);
}
