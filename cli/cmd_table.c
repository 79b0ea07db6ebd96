/*
 * cmd_table.c - the table of llmsim's subcommands (commands.h), in its own
 * file so that programs other than the executable (the CLI argument fuzz
 * target, fuzz/fuzz_args.c) can reach every command without main.c.
 */
#include "commands.h"

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
