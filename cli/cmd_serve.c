/* cmd_serve.c - placeholder until this subcommand lands. */
#include <stdio.h>
#include "commands.h"

int cmd_serve(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "llmsim %s: not available in this build yet\n", argv[0]);
	return 1;
}
