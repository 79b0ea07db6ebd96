/*
 * main.c - the llmsim executable: a git-style table of subcommands, each
 * with the setup it needs (the model and GPU it runs on: setup.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/paths.h"
#include "commands.h"
#include "json_error.h"
#include "wrap.h"

#define MODEL_GPU (CLI_NEED_MODEL | CLI_NEED_GPU)
static const struct cli_command commands[] = {
	{"hw", cmd_hw, 0, "list GPUs, show one GPU's description"},
	{"model", cmd_model, 0, "list models, show one model's sizes, KV cache and FLOPs"},
	{"op", cmd_op, CLI_NEED_GPU,
	 "predict one kernel: gemm, attention, decode, elementwise, collective"},
	{"roofline", cmd_roofline, CLI_NEED_GPU | CLI_OPT_MODEL,
	 "a GPU's roofline, with a model's ops placed on it"},
	{"train", cmd_train, MODEL_GPU, "one training configuration: memory per GPU, step time, MFU"},
	{"plan", cmd_plan, MODEL_GPU, "search every parallel configuration for training or serving"},
	{"validate", cmd_validate, 0, "compare predictions with published training runs"},
	{"infer", cmd_infer, MODEL_GPU, "one request shape: TTFT, TPOT, KV cache, largest batch"},
	{"serve", cmd_serve, CLI_NEED_GPU | CLI_OPT_MODEL,
	 "simulate a serving engine with continuous batching"},
	{"spec", cmd_spec, MODEL_GPU, "speculative decoding: draft model, Medusa heads, MTP"},
	{"report", cmd_report, MODEL_GPU, "write an HTML report with roofline and capacity plots"},
	{"calib", cmd_calib, 0, "run, store, fit and validate GPU calibration measurements"},
	{"trace", cmd_trace, 0, "capture a CUDA program's kernels, compare, replay on another GPU"},
	{"completion", cmd_completion, 0, "print the bash or zsh completion script"},
};

const struct cli_command *cli_commands(size_t *n)
{
	*n = sizeof commands / sizeof commands[0];
	return commands;
}

static void usage(FILE *f)
{
	fputs("usage: llmsim [--version] [--help] <command> [options]\n\n"
	      "llmsim predicts FLOPs, bytes, memory and time of LLM training and\n"
	      "inference on GPUs, from a GPU model calibrated on real kernels.\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'llmsim help <command>' or 'llmsim <command> --help' for a command's options.\n"
	      "Every command takes --json for machine-readable output (a failure, too:\n"
	      "{\"error\": {\"message\", \"file\", \"line\"}}), and --wide for every table column.\n", f);
}

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* Load what the command needs (setup.h), then run it. */
static int run_command(int argc, char **argv, void *ctx)
{
	const struct cli_command *c = ctx;
	struct cli_setup s;
	int rc = cli_setup(c->name, c->flags, argc, argv, &s);
	if (rc)
		return rc;
	/* prose for people within the table width too (wrap.h) */
	FILE *real = stdout, *w = cli_wrap_wanted(argc, argv) ? cli_wrap_open(real) : NULL;
	if (w)
		stdout = w;
	rc = c->fn(argc, argv, &s);
	if (w) {
		stdout = real;
		if (fclose(w) && !rc)
			rc = 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("llmsim %s (git %s)\n", llmsim_version(), llmsim_git_revision());
		const char *d = llmsim_data_dir();
		printf("data: %s (%s)\n", d ? d : "none found", d ? llmsim_data_dir_origin() : llmsim_data_dir_hint());
		return 0;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		const struct cli_command *c = find(argv[2]);
		if (!c) {
			fprintf(stderr, "llmsim: unknown command '%s' (see 'llmsim help')\n", argv[2]);
			return 2;
		}
		char *hargv[] = {argv[2], "--help", NULL};
		struct cli_setup none = {0};
		return c->fn(2, hargv, &none);
	}
	const struct cli_command *c = find(name);
	if (!c) {
		char msg[256];
		snprintf(msg, sizeof msg, "llmsim: unknown command '%.64s' (see 'llmsim help')", name);
		fprintf(stderr, "%s\n", msg);
		if (cli_wants_json(argc - 2, argv + 2))
			cli_json_error_print(stdout, msg);
		return 2;
	}
	/* Under --json a failure too answers in JSON on stdout (json_error.h). */
	int rc = cli_wants_json(argc - 2, argv + 2)
			 ? cli_json_run(run_command, argc - 1, argv + 1, (void *)c)
			 : run_command(argc - 1, argv + 1, (void *)c);
	/* A full disk or closed pipe must not pass for success. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "llmsim %s: cannot write the output: %s\n", name, strerror(errno));
		return rc ? rc : 1;
	}
	return rc;
}
