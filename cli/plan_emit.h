/*
 * plan_emit.h - `llmsim plan --emit FRAMEWORK`: the launch arguments of a
 * planned configuration in the flag names of the framework that runs it,
 * so that the answer can be run:
 *   megatron   Megatron-LM (core_v0.15.3) pretrain_gpt.py arguments
 *   deepspeed  a DeepSpeed (v0.19.5) config JSON
 *   vllm       `vllm serve` engine arguments (vLLM 0.14)
 *   trtllm     `trtllm-serve` options (TensorRT-LLM 1.x, PyTorch backend)
 *   torchtitan TorchTitan's run_train.sh with job-config overrides
 *   stack      the launcher of the plan's stack (its file's `emit:`)
 * Training plans take stack, megatron, deepspeed or torchtitan, serving
 * plans vllm or trtllm.
 * What a framework cannot express (ring context parallelism in DeepSpeed,
 * ZeRO-Infinity in Megatron-LM, ...) is refused with the reason.
 */
#ifndef LLMSIM_CLI_PLAN_EMIT_H
#define LLMSIM_CLI_PLAN_EMIT_H

#include <stddef.h>
#include "sim/infer/plan_serve.h"
#include "sim/train/plan.h"

enum plan_fw { PLAN_FW_MEGATRON, PLAN_FW_DEEPSPEED, PLAN_FW_VLLM, PLAN_FW_TRTLLM,
	       PLAN_FW_TORCHTITAN, PLAN_FW_STACK, PLAN_FW_COUNT };
extern const char *const plan_fw_names[];  /* NULL-terminated, in enum order */

/* "Megatron-LM core_v0.15.3 (megatron/training/arguments.py)", ... */
const char *plan_fw_source(enum plan_fw fw);
/* 1 for the training frameworks, 0 for the serving ones. */
int plan_fw_trains(enum plan_fw fw);
/* The launcher a stack's rows are emitted for (its `emit:`). */
enum plan_fw plan_fw_of_stack(const struct llmsim_stack_def *s);

/* The launch text of r (tokens > 0: the run's length in samples). Returns
 * 0, or -1 with one line in why when fw cannot express r. */
int plan_emit_train(enum plan_fw fw, const struct llmsim_train_result *r,
		    const struct llmsim_model *m, double tokens, char *out, size_t n, char *why,
		    size_t nwhy);

/* The same for a serving row of the plan pc searched. */
int plan_emit_serve(enum plan_fw fw, const struct llmsim_plan_serve_row *row,
		    const struct llmsim_plan_serve_cfg *pc, char *out, size_t n, char *why,
		    size_t nwhy);

#endif
