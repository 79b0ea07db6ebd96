/* args.c - option parsing and usage text for the subcommands. */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/err.h"
#include "base/fmt.h"

/* The largest value of every numeric option of every verb, and what it
 * counts, in one table: an option's name means the same thing in every
 * verb (--gpus is GPUs everywhere), except the dimensions of a single op
 * (`llmsim op ...`), listed first. The numbers and their reasons are in
 * base/bounds.h; the simulators check the same bounds on their inputs.
 * Every numeric option must have an entry (llmsim_args_parse asserts it,
 * and the man page build runs every verb's --help). */
struct bound {
	const char *cmd_prefix; /* NULL: every command */
	const char *name;
	double max;
	const char *what;       /* "GPUs": the message says "at most N GPUs" */
};

#define OP "llmsim op "
static const struct bound bounds[] = {
	{OP, "m", LLMSIM_MAX_DIM, "rows"},
	{OP, "n", LLMSIM_MAX_DIM, "columns"},
	{OP, "k", LLMSIM_MAX_DIM, "elements of the inner dimension"},
	{OP, "batch", LLMSIM_MAX_DIM, "in the batch"},
	{OP, "heads", LLMSIM_MAX_DIM, "heads"},
	{OP, "kv-heads", LLMSIM_MAX_DIM, "heads"},
	{OP, "seq", LLMSIM_MAX_DIM, "tokens"},
	{OP, "kv-seq", LLMSIM_MAX_DIM, "tokens"},
	{OP, "kv-len", LLMSIM_MAX_DIM, "tokens"},
	{OP, "q-len", LLMSIM_MAX_DIM, "tokens"},
	{OP, "block-size", LLMSIM_MAX_DIM, "tokens"},
	{OP, "head-dim", LLMSIM_MAX_DIM, "elements"},
	{OP, "v-head-dim", LLMSIM_MAX_DIM, "elements"},
	{OP, "kv-lora-rank", LLMSIM_MAX_DIM, "elements"},
	{OP, "rope-dim", LLMSIM_MAX_DIM, "elements"},
	{OP, "tokens", LLMSIM_MAX_DIM, "rows"},
	{OP, "hidden", LLMSIM_MAX_DIM, "elements"},
	{"llmsim plan", "top", 1000, "rows (the search keeps them sorted as it goes)"},
	{"llmsim plan", "tokens", 1e18, "tokens (a training budget)"},
	{NULL, "max-chunks", 64, "chunks per stage"},
	{NULL, "concurrency", LLMSIM_MAX_REQUESTS / 8, "users"},
	{"llmsim report", "top", 8, "configurations (a report compares 1 to 8)"},
	{NULL, "gpus", LLMSIM_MAX_GPUS, "GPUs"},
	{NULL, "tp", LLMSIM_MAX_GPUS, "GPUs"},
	{NULL, "pp", LLMSIM_MAX_GPUS, "stages"},
	{NULL, "dp", LLMSIM_MAX_GPUS, "replicas"},
	{NULL, "cp", LLMSIM_MAX_GPUS, "GPUs"},
	{NULL, "ep", LLMSIM_MAX_GPUS, "GPUs"},
	{NULL, "nodes", LLMSIM_MAX_GPUS, "nodes"},
	{NULL, "batch", LLMSIM_MAX_BATCH, "sequences"},
	{NULL, "global-batch", LLMSIM_MAX_BATCH, "sequences"},
	{NULL, "micro-batch", LLMSIM_MAX_BATCH, "sequences"},
	{NULL, "max-batch", LLMSIM_MAX_BATCH, "sequences"},
	{NULL, "seq", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "prompt", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "output", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "context", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "ctx", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "reserve", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "block-size", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "max-tokens", LLMSIM_MAX_TOKENS, "tokens"},
	{NULL, "requests", LLMSIM_MAX_REQUESTS, "requests"},
	{NULL, "gamma", LLMSIM_MAX_DRAFT, "draft tokens"},
	{NULL, "medusa-heads", LLMSIM_MAX_DRAFT, "heads"},
	{NULL, "mtp", LLMSIM_MAX_DRAFT, "MTP modules"},
	{NULL, "tree", LLMSIM_MAX_TREE, "candidate tokens"},
	{NULL, "moe-imbalance", LLMSIM_MAX_EXPERTS, "times the mean load"},
	{NULL, "lora-rank", LLMSIM_MAX_WIDTH, "(a model width)"},
	{NULL, "chunks", LLMSIM_MAX_LAYERS, "chunks"},
	{NULL, "layers", LLMSIM_MAX_LAYERS, "layers"},
	{NULL, "recompute-num-layers", LLMSIM_MAX_LAYERS, "layers"},
	{NULL, "offload-activations", 1, "(a fraction of the saved activations)"},
	{NULL, "zero", 3, "(ZeRO stages are 0 to 3)"},
	{NULL, "top", LLMSIM_MAX_ROWS, "rows"},
	{NULL, "width", LLMSIM_MAX_PIXELS, "pixels"},
	{NULL, "height", LLMSIM_MAX_PIXELS, "pixels"},
	{NULL, "ttft-slo", LLMSIM_MAX_SLO_S, "seconds"},
	{NULL, "tpot-slo", LLMSIM_MAX_SLO_S, "seconds"},
	{NULL, "rate", LLMSIM_MAX_RATE, "requests per second"},
	{NULL, "mem-util", 1, "(a fraction of HBM)"},
	{NULL, "prefix-share", 1, "(a fraction of a prompt)"},
	{NULL, "gpu-hour-price", 1e6, "dollars"},
	{NULL, "alpha", 1, "(a probability)"},
	{NULL, "bytes", (double)LLMSIM_MAX_BYTES, "bytes"},
	{NULL, "run", 4611686018427387904.0, "(a run id)"},
	{NULL, "seed", 4611686018427387904.0, "(a seed)"},
};
#undef OP

static const struct bound *bound_of(const char *cmd, const char *name)
{
	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		const struct bound *b = &bounds[i];
		if (!strcmp(b->name, name) &&
		    (!b->cmd_prefix || !strncmp(cmd, b->cmd_prefix, strlen(b->cmd_prefix))))
			return b;
	}
	return NULL;
}

double llmsim_args_max(const char *cmd, const char *name)
{
	const struct bound *b = bound_of(cmd, name);
	return b ? b->max : NAN;
}

int llmsim_args_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

static const struct llmsim_args_probe *probe;

void llmsim_args_set_probe(const struct llmsim_args_probe *p)
{
	probe = p;
}

void llmsim_args_usage(FILE *f, const char *cmd, const char *synopsis,
		       const char *about, const struct llmsim_opt *opts, int nopts)
{
	if (probe) {
		probe->fn(probe->ctx, 0, cmd, synopsis, about, opts, nopts);
		return;
	}
	fprintf(f, "usage: %s %s\n", cmd, synopsis ? synopsis : "[options]");
	if (about && *about)
		fprintf(f, "\n%s\n", about);
	if (nopts)
		fputs("\noptions:\n", f);
	for (int i = 0; i < nopts; i++) {
		char left[96];
		const struct llmsim_opt *o = &opts[i];
		if (o->type == LLMSIM_ARG_CHOICE && o->choices) {
			char ch[64] = "";
			for (int j = 0; o->choices[j]; j++) {
				strncat(ch, j ? "|" : "", sizeof ch - strlen(ch) - 1);
				strncat(ch, o->choices[j], sizeof ch - strlen(ch) - 1);
			}
			snprintf(left, sizeof left, "--%s %s", o->name, ch);
		} else if (o->metavar) {
			snprintf(left, sizeof left, "--%s %s", o->name, o->metavar);
		} else {
			snprintf(left, sizeof left, "--%s", o->name);
		}
		fprintf(f, "  %-30s %s\n", left, o->help ? o->help : "");
	}
	fprintf(f, "  %-30s %s\n", "--wide", "tables show every column (default: they fit in 100)");
	fprintf(f, "  %-30s %s\n", "--help", "show this help");
}

static int set_value(const char *cmd, const struct llmsim_opt *o, const char *v)
{
	char *end;
	switch (o->type) {
	case LLMSIM_ARG_FLAG:
		*(int *)o->ptr = 1;
		return 0;
	case LLMSIM_ARG_STRING:
		*(const char **)o->ptr = v;
		return 0;
	case LLMSIM_ARG_CHOICE:
		for (int j = 0; o->choices[j]; j++)
			if (!strcmp(o->choices[j], v)) {
				*(int *)o->ptr = j;
				return 0;
			}
		{
			char ch[160] = "";
			for (int j = 0; o->choices[j]; j++) {
				strncat(ch, j ? ", " : "", sizeof ch - strlen(ch) - 1);
				strncat(ch, o->choices[j], sizeof ch - strlen(ch) - 1);
			}
			llmsim_args_error(cmd, "--%s: expected one of %s, got '%s'", o->name, ch, v);
		}
		return -1;
	case LLMSIM_ARG_INT:
	case LLMSIM_ARG_I64:
	case LLMSIM_ARG_DOUBLE: {
		errno = 0;
		double d = strtod(v, &end);
		if (end == v || *end || errno == ERANGE || !isfinite(d)) {
			llmsim_args_error(cmd, "--%s: expected a number, got '%s'", o->name, v);
			return -1;
		}
		if (o->type != LLMSIM_ARG_DOUBLE && d != floor(d)) {
			llmsim_args_error(cmd, "--%s: expected an integer, got '%s'", o->name, v);
			return -1;
		}
		if (d < o->min) {
			llmsim_args_error(cmd, "--%s: must be at least %g, got '%s'", o->name, o->min, v);
			return -1;
		}
		const struct bound *b = bound_of(cmd, o->name);
		LLMSIM_ASSERT(b);
		if (d > b->max) {
			llmsim_args_error(cmd, "--%s: at most %.15g %s, got '%s'", o->name, b->max,
					  b->what, v);
			return -1;
		}
		/* every bound fits the option's type (asserted when parsing starts) */
		if (o->type == LLMSIM_ARG_INT) {
			*(int *)o->ptr = (int)d;
		} else if (o->type == LLMSIM_ARG_I64) {
			*(int64_t *)o->ptr = (int64_t)d;
		} else {
			*(double *)o->ptr = d;
		}
		return 0;
	}
	}
	return -1;
}

int llmsim_args_parse(const char *cmd, const char *synopsis, const char *about,
		      int argc, char **argv, const struct llmsim_opt *opts, int nopts,
		      char **pos, int max_pos, int *npos)
{
	int np = 0, only_pos = 0;
	/* a numeric option without a bound, or with one its type cannot hold,
	 * is a bug of the verb's table */
	for (int j = 0; j < nopts; j++) {
		enum llmsim_argtype t = opts[j].type;
		if (t != LLMSIM_ARG_INT && t != LLMSIM_ARG_I64 && t != LLMSIM_ARG_DOUBLE)
			continue;
		const struct bound *b = bound_of(cmd, opts[j].name);
		LLMSIM_ASSERT(b && b->max >= opts[j].min);
		LLMSIM_ASSERT(t != LLMSIM_ARG_INT || b->max <= 2147483647.0);
		LLMSIM_ASSERT(t != LLMSIM_ARG_I64 || b->max <= 9.2e18);
	}
	if (probe) {
		probe->fn(probe->ctx, 1, cmd, synopsis, about, opts, nopts);
		return LLMSIM_ARGS_HELP;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			if (np >= max_pos) {
				llmsim_args_error(cmd, "unexpected argument '%s' (try '%s --help')", a, cmd);
				return LLMSIM_ARGS_ERROR;
			}
			pos[np++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			llmsim_args_usage(stdout, cmd, synopsis, about, opts, nopts);
			return LLMSIM_ARGS_HELP;
		}
		if (!strcmp(a, "--wide")) { /* every verb's: tables show every column */
			llmsim_table_set_width(0);
			continue;
		}
		if (a[1] != '-') {
			llmsim_args_error(cmd, "unknown option '%s' (try '%s --help')", a, cmd);
			return LLMSIM_ARGS_ERROR;
		}
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct llmsim_opt *o = NULL;
		for (int j = 0; j < nopts; j++)
			if (strlen(opts[j].name) == len && !strncmp(opts[j].name, name, len))
				o = &opts[j];
		if (!o) {
			llmsim_args_error(cmd, "unknown option '--%.*s' (try '%s --help')", (int)len,
					  name, cmd);
			return LLMSIM_ARGS_ERROR;
		}
		const char *v = NULL;
		if (o->type == LLMSIM_ARG_FLAG) {
			if (eq) {
				llmsim_args_error(cmd, "--%s takes no value", o->name);
				return LLMSIM_ARGS_ERROR;
			}
		} else if (eq) {
			v = eq + 1;
		} else if (i + 1 < argc) {
			v = argv[++i];
		} else {
			llmsim_args_error(cmd, "--%s needs a value (%s)", o->name,
					  o->metavar ? o->metavar : "see --help");
			return LLMSIM_ARGS_ERROR;
		}
		if (set_value(cmd, o, v))
			return LLMSIM_ARGS_ERROR;
		if (o->seen)
			*o->seen = 1;
	}
	if (npos)
		*npos = np;
	return LLMSIM_ARGS_OK;
}
