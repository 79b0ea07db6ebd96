/* args.c - option parsing and usage text for the subcommands. */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
		if (o->type == LLMSIM_ARG_INT) {
			if (d > 2147483647.0) {
				llmsim_args_error(cmd, "--%s: too large: '%s'", o->name, v);
				return -1;
			}
			*(int *)o->ptr = (int)d;
		} else if (o->type == LLMSIM_ARG_I64) {
			if (d > 9.2e18) {
				llmsim_args_error(cmd, "--%s: too large: '%s'", o->name, v);
				return -1;
			}
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
