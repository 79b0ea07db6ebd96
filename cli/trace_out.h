/*
 * trace_out.h - `--trace-out FILE.json` of train, infer and serve: the
 * simulated timeline (sim/timeline.h) as a Chrome/Perfetto trace (the
 * Trace Event Format: complete "X" events in microseconds, process and
 * thread names as "M" metadata events), for ui.perfetto.dev or
 * chrome://tracing.
 */
#ifndef LLMSIM_CLI_TRACE_OUT_H
#define LLMSIM_CLI_TRACE_OUT_H

#include "sim/timeline.h"

/* Events a trace keeps at most (about 200 bytes each in the file); the
 * rest are counted and reported. */
#define CLI_TRACE_MAX_EVENTS 500000
/* Requests whose spans a serving trace shows (every engine step is kept,
 * up to CLI_TRACE_MAX_EVENTS). */
#define CLI_TRACE_MAX_REQUESTS 1000

/* The option, for a command's table: --trace-out FILE into *path. */
#define CLI_TRACE_OUT_OPT(path)                                                              \
	{"trace-out", LLMSIM_ARG_STRING, &(path), "FILE",                                    \
	 "write the simulated timeline as a Chrome/Perfetto trace (JSON; open it in "        \
	 "ui.perfetto.dev)", 0, NULL, NULL}

/* Whether path can be written (a temporary file beside it is made and
 * removed): 0, or 1 after one line "CMD: --trace-out PATH: why" on stderr.
 * Call before a long simulation so that it fails early. */
int cli_trace_check(const char *cmd, const char *path);

/* Write tl to path as a trace, through a temporary file renamed into
 * place (no partial file is left on failure). Its figures (the step time
 * it ends at, ...) and note go into "otherData"; the note and any events not
 * kept also go to stderr. 0, or 1 after one line on stderr. */
int cli_trace_write(const char *cmd, const char *path, const struct llmsim_timeline *tl);

#endif
