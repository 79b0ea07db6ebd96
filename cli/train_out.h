/*
 * train_out.h - printing training results, shared by `llmsim train`,
 * `llmsim plan` and `llmsim validate`: human tables and JSON objects.
 */
#ifndef LLMSIM_CLI_TRAIN_OUT_H
#define LLMSIM_CLI_TRAIN_OUT_H

#include <stdio.h>
#include "base/json.h"
#include "sim/train/stack.h"
#include "sim/train/train.h"

/* One line: "tp 8  pp 1  dp 1  cp 1  ep 1  zero 1  mb 1  selective  1f1b  flash2". */
char *train_cfg_line(char *buf, size_t size, const struct llmsim_train_cfg *c);

/* The configuration, memory table, time table and throughput of one run. */
void train_print_result(FILE *f, const struct llmsim_train_result *r,
			const struct llmsim_model *m, const struct llmsim_gpu *gpu);

/* The torch engine's result (train_torch_out.c): train_print_result
 * calls it for engine torch. */
void train_print_torch(FILE *f, const struct llmsim_train_result *r, const struct llmsim_model *m,
		       const struct llmsim_gpu *gpu);
/* Its JSON member "torch" (inside an open object), with the expected
 * errors of gpu's profile. */
void train_json_torch(struct llmsim_json *j, const struct llmsim_train_result *r,
		      const struct llmsim_gpu *gpu);
/* One line: the load and the clock the step's ops run at. */
void train_load_line(char *buf, size_t size, const struct llmsim_train_result *r,
		     const struct llmsim_gpu *gpu);

/* JSON fields of a result (inside an open object): config, memory,
 * times, throughput. */
void train_json_result(struct llmsim_json *j, const struct llmsim_train_result *r);

/* The stack's name as rows show it: its file's, or (none applied) its
 * program's. */
const char *train_stack_str(const struct llmsim_train_cfg *c);
/* "core_attn,mlp": the recompute modules of c. */
char *train_modules_str(char *buf, size_t size, const struct llmsim_train_cfg *c);
/* Load --stack NAME|FILE; on failure one line on stderr (file:line:col
 * where there is one) and 1. */
int train_stack_load(const char *cmd, const char *name, struct llmsim_stack_def *s);
/* --dtype fp8 without --precision (precision < 0) under stack sd: delayed
 * scaling where the stack runs it (TE's default), else current scaling
 * (TorchTitan's tensorwise float8); p otherwise. */
enum llmsim_precision_recipe train_stack_fp8(const struct llmsim_stack_def *sd, int precision,
					     enum llmsim_precision_recipe p);
/* --recompute-modules a,b,... into a mask; 2 (usage, said) on an unknown
 * name. */
int train_modules_parse(const char *cmd, const char *list, unsigned *mask);

/* Shared option values of train and plan. */
extern const char *const train_dtype_choices[];   /* bf16, fp8, mxfp8, nvfp4 */
extern const char *const train_on_off[];          /* off, on */
/* The precision recipe of --dtype (a train_dtype_choices index) and
 * --precision (an llmsim_precision_names index, -1 not given): the given
 * recipe, else the one the type implies (fp8: fp8-delayed). Prints one
 * line and returns 2 when the two disagree, 1 when gpu has no tensor
 * cores for the recipe's format (naming the formats it has); else 0. */
int train_precision_args(const char *cmd, int dtype, int precision, const struct llmsim_gpu *gpu,
			 enum llmsim_precision_recipe *out);
extern const char *const train_attn_choices[];    /* naive, flash2, flash3, sdpa */
/* sdpa: PyTorch's, as it dispatches on gpu (llmsim_train_sdpa) */
enum llmsim_attn_impl train_attn_from_choice(int i, const struct llmsim_gpu *gpu);

#endif
