/*
 * args.h - table-driven option parsing shared by every subcommand, so that
 * flags, --help text and error lines look the same everywhere.
 *
 * Options are "--name VALUE" or "--name=VALUE"; flags take no value.
 * Numbers are checked (integers integral, at least the option's min, at
 * most the bound args.c keeps for its name: base/bounds.h); an unknown
 * option, a missing value or a malformed number prints one line to stderr:
 *   llmsim op gemm: unknown option '--mm' (try 'llmsim op gemm --help')
 *   llmsim plan: --gpus: at most 1048576 GPUs, got '2147483647'
 */
#ifndef LLMSIM_ARGS_H
#define LLMSIM_ARGS_H

#include <stdint.h>
#include <stdio.h>

enum llmsim_argtype {
	LLMSIM_ARG_FLAG,    /* int, set to 1 */
	LLMSIM_ARG_INT,     /* int, >= min */
	LLMSIM_ARG_I64,     /* int64_t, >= min */
	LLMSIM_ARG_DOUBLE,  /* double, >= min */
	LLMSIM_ARG_STRING,  /* const char * (points into argv) */
	LLMSIM_ARG_CHOICE,  /* int index into choices (NULL-terminated) */
};

struct llmsim_opt {
	const char *name;          /* without the dashes: "batch" */
	enum llmsim_argtype type;
	void *ptr;
	const char *metavar;       /* "N", "FILE"; NULL for flags */
	const char *help;          /* one line; mention the default */
	double min;                /* smallest accepted value (numbers) */
	const char *const *choices;/* CHOICE */
	int *seen;                 /* optional: set to 1 when given */
};

enum { LLMSIM_ARGS_OK = 0, LLMSIM_ARGS_HELP = 1, LLMSIM_ARGS_ERROR = -1 };

/* Parse argv[0..argc) (argv[0] is NOT the command name). Positional
 * arguments are stored in pos[] up to max_pos (more is an error) and
 * counted in *npos (may be NULL when max_pos is 0). "--help"/"-h" prints
 * usage to stdout and returns LLMSIM_ARGS_HELP. A bare "--" ends options;
 * everything after it is positional (for `trace capture -- CMD...`).
 * `cmd` is the full command for messages ("llmsim op gemm"). */
int llmsim_args_parse(const char *cmd, const char *synopsis, const char *about,
		      int argc, char **argv, const struct llmsim_opt *opts, int nopts,
		      char **pos, int max_pos, int *npos);

/* The largest value the numeric option --name of command cmd accepts
 * (NaN when args.c has no bound for it). */
double llmsim_args_max(const char *cmd, const char *name);

/* Print usage: synopsis, about text, and one line per option. */
void llmsim_args_usage(FILE *f, const char *cmd, const char *synopsis,
		       const char *about, const struct llmsim_opt *opts, int nopts);

/* An option-table probe, through which shell completion (cli/completion.c)
 * reads every command's options without running it: while one is set,
 * llmsim_args_parse hands it the command's table and returns
 * LLMSIM_ARGS_HELP without parsing, and llmsim_args_usage hands it the
 * usage (a verb dispatcher's "verbs:" text) instead of printing. A command
 * called with "--help" under a probe so reports its options and returns. */
struct llmsim_args_probe {
	/* parsing: 1 from llmsim_args_parse (opts is the command's table), 0
	 * from llmsim_args_usage */
	void (*fn)(void *ctx, int parsing, const char *cmd, const char *synopsis,
		   const char *about, const struct llmsim_opt *opts, int nopts);
	void *ctx;
};
void llmsim_args_set_probe(const struct llmsim_args_probe *p); /* NULL: none */

/* Print "cmd: message" to stderr; returns 2 (the usage-error exit status). */
int llmsim_args_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
