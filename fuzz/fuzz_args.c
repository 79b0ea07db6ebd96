/*
 * fuzz_args.c - libFuzzer target for the CLI argument parser
 * (cli/args.c) against the option table of every command and verb. The
 * input is an argument vector, one argument per line (a NUL byte also ends
 * one); its first argument names a command of the table (cli_commands),
 * and the command runs with the args probe set (args.h), so that where it
 * would parse, with its own option table, the probe parses instead the
 * arguments after the command's words ("trace show": the two first), into
 * the command's own variables, and the command then returns without
 * running. Nothing is simulated, loaded or written.
 *
 * A parse must end in ok, help or a usage error, and one that succeeds
 * must leave every option it set within what the table promises: numbers
 * at least their minimum and at most their bound (llmsim_args_max), an
 * integer option integral, a choice one of its choices, a flag 1, a
 * string one of the arguments (or the part after "=" of one).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"

#define MAX_ARGS 64
#define MAX_OPTS 64

static char *args[MAX_ARGS + 1];
static int nargs;

/* An option's value, as bytes (the largest of the types it can have). */
union value {
	int i;
	int64_t l;
	double d;
	const char *s;
};

static union value get(const struct llmsim_opt *o)
{
	union value v;
	memset(&v, 0, sizeof v);
	switch (o->type) {
	case LLMSIM_ARG_FLAG:
	case LLMSIM_ARG_INT:
	case LLMSIM_ARG_CHOICE:
		v.i = *(int *)o->ptr;
		break;
	case LLMSIM_ARG_I64:
		v.l = *(int64_t *)o->ptr;
		break;
	case LLMSIM_ARG_DOUBLE:
		v.d = *(double *)o->ptr;
		break;
	case LLMSIM_ARG_STRING:
		v.s = *(const char **)o->ptr;
		break;
	}
	return v;
}

static int in_args(const char *s, int from)
{
	for (int i = from; i < nargs; i++)
		if (s >= args[i] && s <= args[i] + strlen(args[i]))
			return 1;
	return 0;
}

/* Abort unless o's value v, set by a parse, keeps the table's promises. */
static void check(const char *cmd, const struct llmsim_opt *o, union value v, int from)
{
	double x, max = llmsim_args_max(cmd, o->name);
	switch (o->type) {
	case LLMSIM_ARG_FLAG:
		if (v.i != 1)
			abort();
		return;
	case LLMSIM_ARG_CHOICE: {
		int n = 0;
		while (o->choices[n])
			n++;
		if (v.i < 0 || v.i >= n)
			abort();
		return;
	}
	case LLMSIM_ARG_STRING:
		if (!v.s || !in_args(v.s, from))
			abort();
		return;
	case LLMSIM_ARG_INT:
		x = v.i;
		break;
	case LLMSIM_ARG_I64:
		x = (double)v.l;
		break;
	case LLMSIM_ARG_DOUBLE:
		x = v.d;
		break;
	default:
		abort();
	}
	if (!isfinite(x) || x < o->min || !(x <= max))
		abort();
}

static void probe_fn(void *ctx, int parsing, const char *cmd, const char *synopsis,
		     const char *about, const struct llmsim_opt *opts, int nopts)
{
	(void)ctx;
	if (!parsing || nopts > MAX_OPTS)
		return;
	/* skip the arguments that are the command's words */
	int from = 0;
	const char *w = strchr(cmd, ' ');
	while (w && from < nargs) {
		w++;
		size_t len = strcspn(w, " ");
		if (strlen(args[from]) != len || strncmp(args[from], w, len))
			break;
		from++;
		w = strchr(w, ' ');
	}
	union value before[MAX_OPTS];
	for (int j = 0; j < nopts; j++)
		before[j] = get(&opts[j]);
	char *pos[8];
	int npos = -1;
	llmsim_args_set_probe(NULL);
	int rc = llmsim_args_parse(cmd, synopsis, about, nargs - from, args + from, opts, nopts,
				   pos, 8, &npos);
	if (rc == LLMSIM_ARGS_OK) {
		if (npos < 0 || npos > 8)
			abort();
		for (int i = 0; i < npos; i++)
			if (!in_args(pos[i], from))
				abort();
		for (int j = 0; j < nopts; j++) {
			union value v = get(&opts[j]);
			if (memcmp(&v, &before[j], sizeof v))
				check(cmd, &opts[j], v, from);
		}
	} else if (rc != LLMSIM_ARGS_HELP && rc != LLMSIM_ARGS_ERROR) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (size > 4096)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	nargs = 0;
	for (char *p = text, *end = text + size; p <= end && nargs < MAX_ARGS;) {
		size_t len = strcspn(p, "\n");
		args[nargs++] = p;
		p[len] = 0;
		p += len + 1;
		if (p > end)
			break;
	}
	args[nargs] = NULL;

	size_t n;
	const struct cli_command *c = cli_commands(&n), *hit = NULL;
	for (size_t i = 0; i < n; i++)
		if (nargs && !strcmp(c[i].name, args[0]))
			hit = &c[i];
	/* completion runs every command under a probe of its own */
	if (hit && strcmp(hit->name, "completion")) {
		const struct llmsim_args_probe p = {probe_fn, NULL};
		struct cli_setup none;
		memset(&none, 0, sizeof none);
		FILE *out = stdout, *err = stderr;
		stdout = stderr = null; /* usage and error lines, by the thousand */
		llmsim_args_set_probe(&p);
		hit->fn(nargs, args, &none);
		llmsim_args_set_probe(NULL);
		stdout = out, stderr = err;
	}
	free(text);
	return 0;
}
