/*
 * wrap.h - human output within the table width (base/fmt.h: 100 columns
 * unless --wide): a stream that passes lines through and breaks a longer
 * one at its last blanks, continuing under its value column ("batch:  ",
 * "  offload      ", or four columns in). Tables already fit, so only
 * prose wraps. main puts a command's stdout through it when the command
 * prints for people (not --json, a generated script, YAML or TSV).
 */
#ifndef LLMSIM_CLI_WRAP_H
#define LLMSIM_CLI_WRAP_H

#include <stdio.h>

/* A stream onto real that wraps as above; NULL when none can be made
 * (then write to real as it is). Closing it flushes a last partial line
 * to real (not closed). */
FILE *cli_wrap_open(FILE *real);

/* Whether command argv (argv[0] the command name) prints for people:
 * everything but --json, completion, model import, plan --emit, calib
 * export and trace export without --out, and the programs calib run and
 * trace capture start. */
int cli_wrap_wanted(int argc, char **argv);

#endif
