/* setup.c - the model and GPU a command's table entry asks for (setup.h). */
#include "setup.h"

#include <stdio.h>
#include <string.h>

#include "args.h"

/* The value of --name in argv (--name V or --name=V; the last wins), or
 * NULL; *help set when --help or -h is there. */
static const char *option(int argc, char **argv, const char *name, int *help)
{
	const char *v = NULL;
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			*help = 1;
		if (strncmp(a, "--", 2) || strncmp(a + 2, name, n))
			continue;
		if (a[2 + n] == '=')
			v = a + 3 + n;
		else if (!a[2 + n] && i + 1 < argc)
			v = argv[++i];
	}
	return v;
}

int cli_setup(const char *cmd, unsigned flags, int argc, char **argv, struct cli_setup *s)
{
	static struct llmsim_model model;
	static struct llmsim_gpu gpu;
	char full[64];
	struct llmsim_err err = {0};
	int help = 0;
	s->model = NULL;
	s->gpu = NULL;
	const char *m = option(argc, argv, "model", &help);
	const char *g = option(argc, argv, "gpu", &help);
	if (help || !(flags & (CLI_NEED_MODEL | CLI_NEED_GPU | CLI_OPT_MODEL)))
		return 0;
	snprintf(full, sizeof full, "llmsim %s", cmd);
	if ((flags & CLI_NEED_MODEL) && !m)
		return llmsim_args_error(full, "--model is required (try '%s --help')", full);
	if ((flags & (CLI_NEED_MODEL | CLI_OPT_MODEL)) && m) {
		if (llmsim_model_load(m, &model, &err)) {
			fprintf(stderr, "%s: %s\n", full, err.msg);
			return 1;
		}
		s->model = &model;
	}
	if (flags & CLI_NEED_GPU) {
		if (llmsim_gpu_load(g ? g : "h200", &gpu, &err)) {
			fprintf(stderr, "%s: %s\n", full, err.msg);
			return 1;
		}
		s->gpu = &gpu;
	}
	return 0;
}
