/*
 * test_completion.c - `llmsim completion bash|zsh`: the bash script parses
 * and, run the way bash runs it (COMP_WORDS, COMP_CWORD, then _llmsim),
 * completes commands, verbs, options, choice values and the shipped GPU
 * and model names; every option a command's --help lists is offered; the
 * zsh script parses (when zsh is installed) and lists the same options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

static char script[] = "/tmp/llmsim-compl-XXXXXX";
static char out[1 << 18], errb[4096];

static void make_script(void)
{
	int fd = mkstemp(script);
	cr_assert(fd >= 0);
	cr_assert_eq(run_llmsim("completion bash", out, sizeof out, errb, sizeof errb), 0, "%s",
		     errb);
	cr_assert_eq(write(fd, out, strlen(out)), (ssize_t)strlen(out));
	close(fd);
}

static void drop_script(void)
{
	unlink(script);
}

TestSuite(completion, .init = make_script, .fini = drop_script);

/* What bash offers for the words of line, the cursor on the last one (""
 * for a fresh word): one candidate a line, sorted. */
static const char *complete(const char *line)
{
	char cmd[2048];
	const char *trail = line[strlen(line) - 1] == ' ' ? " \"\"" : "";
	snprintf(cmd, sizeof cmd,
		 "bash -c 'source %s; COMP_WORDS=(%s%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));"
		 " _llmsim; printf \"%%s\\n\" \"${COMPREPLY[@]}\"' | sort",
		 script, line, trail);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	pclose(p);
	return out;
}

/* Whether word is one of the lines of list. */
static int has(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *l = list; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (len == n && !strncmp(l, word, n))
			return 1;
		l = e ? e + 1 : l + len;
	}
	return 0;
}

Test(completion, bash_script_parses)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "bash -n %s", script);
	cr_expect_eq(system(cmd), 0);
}

Test(completion, commands_verbs_and_choices)
{
	cr_expect_str_eq(complete("llmsim pl"), "plan\n");
	cr_expect_str_eq(complete("llmsim calib "), "export\nfit\nimport\nrun\nshow\nupgrade\nvalidate\n");
	cr_expect_str_eq(complete("llmsim model "), "import\nlist\nshow\n");
	cr_expect_str_eq(complete("llmsim plan --workload "), "serve\ntrain\n");
	cr_expect_str_eq(complete("llmsim op attention --impl flash"), "flash1\nflash2\nflash3\n");
	cr_expect_str_eq(complete("llmsim completion "), "bash\nzsh\n");
	/* --opt=value: bash splits the word at '=' */
	cr_expect_str_eq(complete("llmsim plan --workload = s"), "serve\n");
	/* a number: nothing to offer, not the options (printf of no words
	 * prints one empty line) */
	cr_expect_str_eq(complete("llmsim op gemm --m "), "\n");
}

Test(completion, options_of_a_table_a_choice_switches_in)
{
	/* plan --workload serve has its own table (cmd_plan_serve.c): its
	 * options complete under plan as well */
	cr_expect_str_eq(complete("llmsim plan --tpot"), "--tpot-slo\n");
	cr_expect(has(complete("llmsim plan --"), "--global-batch"), "%s", out);
}

Test(completion, gpu_and_model_names)
{
	const char *c = complete("llmsim hw show h2");
	cr_expect(has(c, "h200") && has(c, "h200-sxm"), "%s", c);
	c = complete("llmsim train --gpu mi3");
	cr_expect(has(c, "mi300x"), "%s", c);
	c = complete("llmsim infer --model llama-3.1-7");
	cr_expect(has(c, "llama-3.1-70b"), "%s", c);
	c = complete("llmsim spec --draft llama-3.2-");
	cr_expect(has(c, "llama-3.2-1b"), "%s", c);
}

/* Every "--name" that `llmsim ARGS --help` prints, against what
 * completing "llmsim ARGS --" offers. */
static void every_help_option_offered(const char *args)
{
	char help[1 << 14], line[512];
	snprintf(line, sizeof line, "%s --help", args);
	cr_assert_eq(run_llmsim(line, help, sizeof help, NULL, 0), 0, "%s", line);
	snprintf(line, sizeof line, "llmsim %s --", args);
	const char *offered = complete(line);
	int n = 0;
	for (const char *p = help; (p = strstr(p, "\n  --")); p++) {
		char name[64];
		if (sscanf(p + 5, "%63[a-z0-9-]", name) != 1)
			continue;
		char opt[70];
		snprintf(opt, sizeof opt, "--%s", name);
		cr_expect(has(offered, opt), "%s: %s is not offered", args, opt);
		n++;
	}
	cr_expect_gt(n, 1, "%s: no options read from --help", args);
}

Test(completion, every_option_of_help_offered)
{
	static const char *const cmds[] = {"plan",	   "train",	   "infer",
					   "serve",	   "spec",	   "report",
					   "roofline",	   "validate",	   "calib validate",
					   "calib fit",	   "trace compare", "trace capture",
					   "model show",   "model import", "hw list",
					   "op gemm",	   "op collective"};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		every_help_option_offered(cmds[i]);
}

Test(completion, zsh_script)
{
	char zsh[1 << 18];
	cr_assert_eq(run_llmsim("completion zsh", zsh, sizeof zsh, errb, sizeof errb), 0, "%s", errb);
	cr_expect(!strncmp(zsh, "#compdef llmsim\n", 16), "first line names the command");
	cr_expect(strstr(zsh, "'--tpot-slo["), "plan serve's options are listed");
	cr_expect(strstr(zsh, "'--workload[") && strstr(zsh, ":(train serve)"), "choices");
	if (system("command -v zsh >/dev/null 2>&1") != 0)
		cr_skip_test("zsh is not installed: the script's syntax is not checked");
	char path[] = "/tmp/llmsim-zsh-XXXXXX", cmd[256];
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, zsh, strlen(zsh)), (ssize_t)strlen(zsh));
	close(fd);
	snprintf(cmd, sizeof cmd, "zsh -n %s", path);
	cr_expect_eq(system(cmd), 0, "zsh -n");
	unlink(path);
}
