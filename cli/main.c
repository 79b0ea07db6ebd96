/*
 * main.c - the llmsim executable: a git-style table of subcommands.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../base/paths.h"
#include "commands.h"

static const struct cli_command commands[] = {
	{"hw", cmd_hw, "list GPUs, show one GPU's description"},
	{"model", cmd_model, "list models, show one model's sizes, KV cache and FLOPs"},
	{"op", cmd_op, "predict one kernel: gemm, attention, decode, elementwise, collective"},
	{"roofline", cmd_roofline, "a GPU's roofline, with a model's ops placed on it"},
	{"train", cmd_train, "one training configuration: memory per GPU, step time, MFU"},
	{"plan", cmd_plan, "search every parallel configuration for training or serving"},
	{"validate", cmd_validate, "compare predictions with published training runs"},
	{"infer", cmd_infer, "one request shape: TTFT, TPOT, KV cache, largest batch"},
	{"serve", cmd_serve, "simulate a serving engine with continuous batching"},
	{"spec", cmd_spec, "speculative decoding: draft model, Medusa heads, MTP"},
	{"report", cmd_report, "write an HTML report with roofline and capacity plots"},
	{"calib", cmd_calib, "run, store, fit and validate GPU calibration measurements"},
	{"trace", cmd_trace, "capture a CUDA program's kernels, compare, replay on another GPU"},
	{"completion", cmd_completion, "print the bash or zsh completion script"},
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
	      "Every command takes --json for machine-readable output.\n", f);
}

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
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
		return c->fn(2, hargv);
	}
	const struct cli_command *c = find(name);
	if (!c) {
		fprintf(stderr, "llmsim: unknown command '%s' (see 'llmsim help')\n", name);
		return 2;
	}
	int rc = c->fn(argc - 1, argv + 1);
	/* A full disk or closed pipe must not pass for success. */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "llmsim %s: cannot write the output: %s\n", name, strerror(errno));
		return rc ? rc : 1;
	}
	return rc;
}
