/*
 * commands.h - the subcommands of the llmsim executable, one file each
 * (cli/cmd_NAME.c). Each takes argv with argv[0] the subcommand name, and
 * what its command-table entry had loaded (setup.h: the model and the GPU
 * of the commands that need them), and returns the process exit status: 0
 * ok, 1 failure (a one-line message on stderr), 2 usage error.
 */
#ifndef LLMSIM_COMMANDS_H
#define LLMSIM_COMMANDS_H

#include <stddef.h>

#include "setup.h"

/* One row of the command table (cli/main.c): a subcommand, and what main
 * loads for it before it runs (setup.h). */
struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv, const struct cli_setup *s);
	unsigned flags; /* CLI_NEED_MODEL, CLI_NEED_GPU, CLI_OPT_MODEL */
	const char *summary;
};

/* The command table, in the order `llmsim --help` lists it; *n rows. */
const struct cli_command *cli_commands(size_t *n);

int cmd_hw(int argc, char **argv, const struct cli_setup *s);
int cmd_model(int argc, char **argv, const struct cli_setup *s);
int cmd_op(int argc, char **argv, const struct cli_setup *s);
int cmd_roofline(int argc, char **argv, const struct cli_setup *s);
int cmd_train(int argc, char **argv, const struct cli_setup *s);
int cmd_plan(int argc, char **argv, const struct cli_setup *s);
int cmd_plan_serve(int argc, char **argv, const struct cli_setup *s); /* `plan --workload serve` */
int cmd_validate(int argc, char **argv, const struct cli_setup *s);
int cmd_infer(int argc, char **argv, const struct cli_setup *s);
int cmd_serve(int argc, char **argv, const struct cli_setup *s);
int cmd_spec(int argc, char **argv, const struct cli_setup *s);
int cmd_report(int argc, char **argv, const struct cli_setup *s);
int cmd_calib(int argc, char **argv, const struct cli_setup *s);
int cmd_trace(int argc, char **argv, const struct cli_setup *s);
int cmd_completion(int argc, char **argv, const struct cli_setup *s); /* cli/completion.c */

#endif
