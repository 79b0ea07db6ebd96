/*
 * json_error.h - the --json convention of every verb, kept in one place:
 * main runs a verb given --json with its stdout and stderr held in
 * temporary files; on success both are passed on as they were, on failure
 * the verb's partial stdout is dropped and stdout gets one object
 *   {"error": {"message": "...", "file": "x.yaml" | null, "line": 3 | null}}
 * built from the verb's last stderr line (which is also passed on to
 * stderr), and the exit status is kept. file and line are always present,
 * null when the message names no "path:line[:col]:".
 */
#ifndef LLMSIM_CLI_JSON_ERROR_H
#define LLMSIM_CLI_JSON_ERROR_H

#include <stdio.h>

/* Whether argv[0..argc) asks for --json (before a bare "--"). */
int cli_wants_json(int argc, char **argv);

/* Run fn(argc, argv, ctx) under the convention above; returns its status. */
int cli_json_run(int (*fn)(int argc, char **argv, void *ctx), int argc, char **argv, void *ctx);

/* Write the error object of one stderr line (msg, without its newline) to
 * f: the file and line parsed from its first "path:line[:col]:" when it
 * has one (path a run of non-blank characters with a '.' or '/', not
 * starting with a digit). */
void cli_json_error_print(FILE *f, const char *msg);

/* One progress line on the terminal ("\r" and the text, cleared by
 * cli_progress_done), once the run has taken a second, then at most every
 * 0.2 s; nothing when stderr is not a terminal, so that logs and pipes
 * stay reproducible. */
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_done(void);

#endif
