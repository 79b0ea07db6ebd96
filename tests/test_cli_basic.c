/*
 * test_cli_basic.c - the llmsim executable's own surface: --version, help,
 * help for a command, an unknown command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support.h"

static char out[1 << 16], errb[4096];

Test(cli_basic, version)
{
	cr_assert_eq(run_llmsim("--version", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	/* "llmsim VERSION (git REV)": the version from CMake's project() */
	cr_expect_eq(strncmp(out, "llmsim " LLMSIM_VERSION " (git ", 7 + strlen(LLMSIM_VERSION) + 6),
		     0, "%s", out);
	cr_expect_eq(out[strlen(out) - 1], '\n');
}

Test(cli_basic, help_lists_commands)
{
	cr_assert_eq(run_llmsim("help", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect_not_null(strstr(out, "usage: llmsim"), "%s", out);
	cr_expect_not_null(strstr(out, "\n  hw "), "%s", out);
	cr_expect_not_null(strstr(out, "\n  model "), "%s", out);
	cr_assert_eq(run_llmsim("--help", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect_not_null(strstr(out, "commands:"), "%s", out);
}

Test(cli_basic, help_for_a_command)
{
	cr_assert_eq(run_llmsim("help hw", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect_not_null(strstr(out, "usage: llmsim hw list|show"), "%s", out);
	cr_assert_eq(run_llmsim("help model", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect_not_null(strstr(out, "usage: llmsim model list|show"), "%s", out);
	cr_assert_eq(run_llmsim("model show --help", out, sizeof out, errb, sizeof errb), 0, "%s",
		     errb);
	cr_expect_not_null(strstr(out, "--kv-dtype bf16|fp8"), "%s", out);
}

Test(cli_basic, unknown_command)
{
	cr_expect_eq(run_llmsim("frobnicate", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_str_eq(errb, "llmsim: unknown command 'frobnicate' (see 'llmsim help')\n");
	cr_expect_eq(out[0], 0);
	cr_expect_eq(run_llmsim("help frobnicate", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_str_eq(errb, "llmsim: unknown command 'frobnicate' (see 'llmsim help')\n");
}

Test(cli_basic, write_error_is_a_failure)
{
	/* stdout on a full device: exit 1 with one line, not a silent success */
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "%s/cli/llmsim hw list >/dev/full 2>/dev/null", LLMSIM_BUILD_DIR);
	int st = system(cmd);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
}

Test(cli_basic, no_arguments_is_a_usage_error)
{
	cr_expect_eq(run_llmsim("", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_not_null(strstr(errb, "usage: llmsim"), "%s", errb);
}
