/*
 * commands.h - the subcommands of the llmsim executable, one file each
 * (cli/cmd_NAME.c). Each takes argv with argv[0] the subcommand name, and
 * what its command-table entry had loaded (setup.h: the model and the GPU
 * of the commands that need them), and returns the process exit status: 0
 * ok, 1 failure (a one-line message on stderr), 2 usage error.
 */
#ifndef LLMSIM_COMMANDS_H
#define LLMSIM_COMMANDS_H

#include "setup.h"

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

#endif
