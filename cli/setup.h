/*
 * setup.h - what the command table (main.c) loads before a command runs,
 * git's RUN_SETUP for llmsim: the model (--model) and the GPU (--gpu,
 * default h200) of the commands whose table entry asks for them
 * (CLI_NEED_MODEL, CLI_NEED_GPU, CLI_OPT_MODEL), so that no command loads
 * them itself. The options stay in each command's table (its --help lists
 * them and its parser accepts them); their values are main's.
 */
#ifndef LLMSIM_CLI_SETUP_H
#define LLMSIM_CLI_SETUP_H

#include "hw/gpu.h"
#include "models/model.h"

enum {
	CLI_NEED_MODEL = 1u << 0, /* --model M is required, loaded */
	CLI_NEED_GPU = 1u << 1,   /* --gpu G (default h200), loaded */
	CLI_OPT_MODEL = 1u << 2,  /* --model M loaded when given */
};

struct cli_setup {
	const struct llmsim_model *model; /* NULL: not asked for, or not given (OPT) */
	const struct llmsim_gpu *gpu;     /* NULL: not asked for */
};

/* Load what flags ask for from argv (argv[0] is the command; the options
 * end at "--"), into s, backed by static storage. With --help or -h
 * nothing is loaded (the command prints its usage). Returns 0; 2 after
 * "llmsim CMD: --model is required (try 'llmsim CMD --help')"; 1 after the
 * loader's error line. */
int cli_setup(const char *cmd, unsigned flags, int argc, char **argv, struct cli_setup *s);

#endif
