/*
 * cmd_train.c - `llmsim train`: one training configuration of a model on
 * N GPUs: memory per GPU, step time with its breakdown, tokens/s, MFU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/train/train.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "trace_out.h"
#include "train_out.h"

static const char about[] =
	"Simulate one training step: every op of forward, backward (with the chosen\n"
	"recomputation) and the optimizer priced by the GPU model, plus the\n"
	"communication of each parallelism: TP (+sequence parallel, on with TP),\n"
	"PP (1F1B, interleaved, or DeepSeek-V3's DualPipe), DP with ZeRO 0-3, CP\n"
	"(ring attention), EP\n"
	"(all-to-all). gpus = tp*pp*dp*cp; ep divides dp*cp. --dp defaults to\n"
	"gpus/(tp*pp*cp), --gpus to tp*pp*dp*cp.\n\n"
	"Recipes (bytes per trained parameter, ZeRO-0): megatron = bf16 weights 2 +\n"
	"fp32 grads 4 + fp32 master/m/v 12 = 18; amp = fp32 weights 4 + fp32 grads 4\n"
	"+ m/v 8 = 16 (+ a bf16 autocast copy); zero = the ZeRO paper's 2 + 2 + 12;\n"
	"llama3 = Meta's Llama 3 stack (Dubey et al. 2024, Sec. 3.3): megatron's\n"
	"bytes, --zero 2 as FSDP, the embedding and the loss one layer slot each\n"
	"of the pipeline split, memory of the fullest pipeline rank, the FP32\n"
	"gradient reduce-scatter beside the pipeline's compute, all-gather CP.\n"
	"The software stack (--stack, hw/stacks/NAME.yaml; default mcore-te) says\n"
	"which layouts it can launch, its program and recipe, and its memory\n"
	"allowances (context, NCCL buffers per communicator, CUDA graphs,\n"
	"fragmentation, the memory model's error); a layout it cannot launch is\n"
	"refused with the feature and the stacks that have it.\n\n"
	"--offload optimizer (ZeRO-Offload): fp32 master, Adam m, v and an fp32\n"
	"gradient copy (16 B/param) in host memory, 16-bit weights and gradients on\n"
	"the GPU; gradients go down PCIe during backward, CPU Adam runs on the host,\n"
	"the updated 16-bit shard comes back up. --offload params (ZeRO-Infinity,\n"
	"--zero 3): the 16-bit weights live on the host too, each layer fetched over\n"
	"PCIe and all-gathered, forward and backward, every micro-batch. Host memory\n"
	"per node (the GPU file's host: section) is checked like HBM.\n"
	"--engine torch predicts a plain PyTorch step on one GPU instead, as\n"
	"calib/torch/steps_train.py writes it: fp32 parameters under bf16 autocast,\n"
	"SDPA, loss.backward(), fused AdamW, zero_grad(set_to_none=True), every op\n"
	"launched from Python; its memory is the caching allocator's peak over the\n"
	"step (torch.cuda.max_memory_allocated) beside the segments it reserves. It\n"
	"takes the amp recipe, sdpa attention and one micro-batch a step unless told.\n\n"
	"Every op runs at the clock the step's own load allows under the power limit\n"
	"(--load busy), or a given load (busy:RHO), or as lone kernels at the burst\n"
	"clock (--load lone), on the operand data --operand-data names.\n"
	"--trace-out FILE.json writes the step's simulated timeline as a Chrome/Perfetto\n"
	"trace (ui.perfetto.dev, chrome://tracing): each pipeline stage's forward and\n"
	"backward micro-batches in the schedule priced, the communication of each\n"
	"parallelism (exposed and hidden), recompute and the optimizer; torch: the\n"
	"kernels in launch order on one stream.\n"
	"Exit status 1 when the configuration is invalid or does not fit.";

int cmd_train(int argc, char **argv, const struct cli_setup *setup)
{
	const char *cmd = "llmsim train";
	const char *model_name = NULL, *gpu_name = "h200"; /* loaded by main (setup) */
	const char *trace_out = NULL;
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	int gpus = 0, dp = 0, json = 0, no_sp = 0, uneven = 0, offload = 0, dpu = 0;
	int recompute = LLMSIM_RECOMP_NONE, sched = LLMSIM_SCHED_1F1B, dtype = 0,
	    recipe = LLMSIM_RECIPE_MEGATRON, attn = 1, chunks_seen = 0;
	int layers = 0, recipe_seen = 0, attn_seen = 0, gb_seen = 0, ddp = LLMSIM_DDP_STACK;
	int stack_seen = 0, fsdp = 0, fsdp_seen = 0, rmethod = LLMSIM_RECOMP_UNIFORM;
	const char *stack_name = "mcore-te", *modules = NULL;
	struct cli_run run = {.engine = LLMSIM_ENGINE_FUSED};
	int64_t gb = c.global_batch, seq = c.seq;
	const struct llmsim_opt opts[] = {
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "model name, alias or file (required)", 0, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU (default h200)", 0, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "GPU count (default tp*pp*dp*cp)", 1, NULL, NULL},
		{"tp", LLMSIM_ARG_INT, &c.tp, "T", "tensor parallel (default 1)", 1, NULL, NULL},
		{"pp", LLMSIM_ARG_INT, &c.pp, "P", "pipeline stages (default 1)", 1, NULL, NULL},
		{"dp", LLMSIM_ARG_INT, &dp, "D", "data parallel (default gpus/(tp*pp*cp))", 1, NULL, NULL},
		{"cp", LLMSIM_ARG_INT, &c.cp, "C", "context parallel (default 1)", 1, NULL, NULL},
		{"ep", LLMSIM_ARG_INT, &c.ep, "E", "expert parallel, divides dp*cp (default 1)", 1, NULL, NULL},
		{"zero", LLMSIM_ARG_INT, &c.zero, "Z", "ZeRO stage 0-3 (default 0)", 0, NULL, NULL},
		{"micro-batch", LLMSIM_ARG_INT, &c.micro_batch, "B", "sequences per micro-batch (default 1)", 1, NULL, NULL},
		{"global-batch", LLMSIM_ARG_I64, &gb, "B", "sequences per step (default 1024; torch: the micro-batch)", 1, NULL, &gb_seen},
		{"seq", LLMSIM_ARG_I64, &seq, "S", "tokens per sequence (default 4096)", 1, NULL, NULL},
		{"recompute", LLMSIM_ARG_CHOICE, &recompute, "R", "activation recomputation (default none)", 0, llmsim_recompute_names, NULL},
		{"schedule", LLMSIM_ARG_CHOICE, &sched, "S", "pipeline schedule (default 1f1b)", 0, llmsim_pp_sched_names, NULL},
		{"chunks", LLMSIM_ARG_INT, &c.chunks, "V", "model chunks per stage, interleaved (default 2)", 1, NULL, &chunks_seen},
		{"dtype", LLMSIM_ARG_CHOICE, &dtype, "T", "matmul type (default bf16)", 0, train_dtype_choices, NULL},
		{"recipe", LLMSIM_ARG_CHOICE, &recipe, "R", "optimizer-state recipe (default megatron; torch: amp)", 0, llmsim_recipe_names, &recipe_seen},
		{"attention", LLMSIM_ARG_CHOICE, &attn, "A", "attention kernels; sdpa: PyTorch's on this GPU (default flash2, or what the stack runs: naive for megatron-2021/2022; torch: sdpa)", 0, train_attn_choices, &attn_seen},
		{"layers", LLMSIM_ARG_INT, &layers, "L", "run the model's first L layers (default all)", 1, NULL, NULL},
		CLI_RUN_OPTS(run, "the program: fused (Megatron-LM's kernels, default) or torch (plain PyTorch on one GPU)"),
		{"lora-rank", LLMSIM_ARG_INT, &c.lora_rank, "R", "LoRA on q,k,v,o with frozen bf16 base (default 0: off)", 0, NULL, NULL},
		{"moe-imbalance", LLMSIM_ARG_DOUBLE, &c.moe_imbalance, "F", "busiest expert's load / mean, >= 1 (default 1)", 1, NULL, NULL},
		{"no-sp", LLMSIM_ARG_FLAG, &no_sp, NULL, "turn sequence parallelism off (default on with tp > 1)", 0, NULL, NULL},
		{"uneven-pp", LLMSIM_ARG_FLAG, &uneven, NULL, "allow layers not divisible by pp*chunks (busiest stage: ceil)", 0, NULL, NULL},
		{"offload", LLMSIM_ARG_CHOICE, &offload, "O", "model states in host memory: optimizer (ZeRO-Offload, zero >= 1) or params (ZeRO-Infinity, zero 3) (default none)", 0, llmsim_offload_names, NULL},
		{"dpu", LLMSIM_ARG_FLAG, &dpu, NULL, "offload: one-step delayed parameter update (CPU Adam overlaps the next step)", 0, NULL, NULL},
		{"stack", LLMSIM_ARG_STRING, &stack_name, "S", "the software stack, a name in hw/stacks or a file: mcore-te (Megatron-Core with Transformer Engine, default), torchtitan, deepspeed, llama3, core, megatron-2021 (Narayanan et al.), megatron-2022 (Korthikanti et al.)", 0, NULL, &stack_seen},
		{"recompute-modules", LLMSIM_ARG_STRING, &modules, "M,...", "recompute these modules (Megatron's names: core_attn, mlp, moe_act, mla_up_proj, layernorm, moe, shared_experts); implies --recompute modules", 0, NULL, NULL},
		{"recompute-method", LLMSIM_ARG_CHOICE, &rmethod, "M", "full recompute: uniform (groups of --recompute-num-layers, default) or block (that many layers of each stage)", 0, llmsim_recompute_method_names, NULL},
		{"recompute-num-layers", LLMSIM_ARG_INT, &c.recompute_layers, "N", "full recompute: layers a group (uniform) or recomputed per stage (block) (default 1 a group)", 1, NULL, NULL},
		{"offload-activations", LLMSIM_ARG_DOUBLE, &c.offload_activations, "F", "fraction 0-1 of the saved activations kept in host memory (default 0)", 0, NULL, NULL},
		{"fsdp", LLMSIM_ARG_CHOICE, &fsdp, "K", "what --zero 2/3 runs as: none (DeepSpeed ZeRO), megatron (Megatron-FSDP) or fsdp2 (default: the stack's)", 0, llmsim_fsdp_names, &fsdp_seen},
		{"ddp", LLMSIM_ARG_CHOICE, &ddp, "D", "the gradient all-reduce: stack (the --stack's, default), torch (PyTorch DDP, overlapped) or local (Megatron's LocalDDP, after the backward)", 0, llmsim_ddp_names, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
		CLI_TRACE_OUT_OPT(trace_out),
	};
	int rc = llmsim_args_parse(cmd, "--model M [--gpu G] --gpus N --tp T --pp P --dp D [options]",
				   about, argc - 1, argv + 1, opts, sizeof opts / sizeof opts[0], NULL,
				   0, NULL);
	if (rc == LLMSIM_ARGS_HELP)
		return 0;
	if (rc)
		return 2;
	if ((rc = cli_load_parse(cmd, run.load, &c.load, &c.load_rho)) ||
	    (rc = cli_operand_data_parse(cmd, run.operand_data, &c.operand_data)))
		return rc;
	if (run.engine == LLMSIM_ENGINE_HF)
		return llmsim_args_error(cmd, "--engine hf: training runs as fused (Megatron-LM) or "
					 "torch (plain PyTorch); HF transformers' training is not "
					 "modelled");
	c.engine = (enum llmsim_engine)run.engine;
	const struct llmsim_gpu gpu = *setup->gpu;
	struct llmsim_model m = *setup->model;
	if (layers > m.layers)
		return llmsim_args_error(cmd, "--layers %d: %s has %d layers", layers, m.name,
					 m.layers);
	if (layers)
		m.layers = layers;
	c.recompute = recompute;
	c.schedule = sched;
	if (c.schedule == LLMSIM_SCHED_INTERLEAVED && !chunks_seen)
		c.chunks = 2;
	c.dtype = dtype == 1 ? LLMSIM_DT_FP8 : LLMSIM_DT_BF16;
	c.recipe = recipe;
	c.attn = train_attn_from_choice(attn, &gpu);
	c.global_batch = gb;
	if (c.engine == LLMSIM_ENGINE_TORCH) {
		llmsim_train_cfg_torch(&c, &gpu);
		if (recipe_seen)
			c.recipe = recipe;
		if (attn_seen)
			c.attn = train_attn_from_choice(attn, &gpu);
		c.global_batch = gb_seen ? gb : c.micro_batch;
	}
	c.seq = seq;
	if (cli_check_context(cmd, &m, seq))
		return 1;
	c.sequence_parallel = !no_sp;
	c.uneven_pp = uneven;
	c.recompute_method = rmethod;
	if (modules && (rc = train_modules_parse(cmd, modules, &c.recompute_modules)))
		return rc;
	if (modules && (c.recompute == LLMSIM_RECOMP_NONE || c.recompute == LLMSIM_RECOMP_SELECTIVE))
		c.recompute = LLMSIM_RECOMP_MODULES; /* Megatron: selective granularity with modules */
	if (fsdp_seen && fsdp != LLMSIM_FSDP_NONE && c.zero < 2)
		return llmsim_args_error(cmd, "--fsdp %s shards gradients and optimizer states: "
					 "--zero 2 or 3", llmsim_fsdp_names[fsdp]);
	struct llmsim_stack_def sd;
	int use_stack = c.engine != LLMSIM_ENGINE_TORCH;
	if (!use_stack && stack_seen)
		return llmsim_args_error(cmd, "--stack: the torch engine is its own program (plain "
					 "PyTorch); stacks describe the fused one");
	if (use_stack) {
		if (train_stack_load(cmd, stack_name, &sd))
			return 1;
		llmsim_stack_apply(&sd, &c);
		if (recipe_seen)
			c.recipe = recipe;
		if (!(sd.features & 1u << LLMSIM_FEAT_SP))
			c.sequence_parallel = 0; /* e.g. DeepSpeed's AutoTP */
		/* attention not chosen: the default if the stack runs it, else the
		 * kernels of its time (naive for the 2021/2022 releases) */
		static const enum llmsim_feature kern[] = {LLMSIM_FEAT_ATTN_FLASH2,
							   LLMSIM_FEAT_ATTN_FLASH3,
							   LLMSIM_FEAT_ATTN_NAIVE};
		static const enum llmsim_attn_impl impl[] = {LLMSIM_ATTN_FLASH2, LLMSIM_ATTN_FLASH3,
							     LLMSIM_ATTN_NAIVE};
		for (size_t k = 0; !attn_seen && k < sizeof kern / sizeof kern[0]; k++)
			if (sd.features & 1u << kern[k]) {
				c.attn = impl[k];
				break;
			}
	}
	if (fsdp_seen)
		c.fsdp = fsdp;
	c.ddp = (enum llmsim_ddp)ddp;
	c.offload = offload;
	c.dpu = dpu;
	int64_t inner = (int64_t)c.tp * c.pp * c.cp;
	if (!dp) {
		if (gpus && gpus % inner) {
			fprintf(stderr, "%s: --gpus %d not divisible by tp*pp*cp = %lld\n", cmd, gpus,
				(long long)inner);
			return 1;
		}
		dp = gpus ? (int)(gpus / inner) : 1;
	}
	c.dp = dp;
	c.gpus = gpus ? gpus : (int)(inner * dp);

	struct llmsim_err err = {0};
	char why[512]; /* what the stack cannot launch, before what llmsim cannot price */
	if (use_stack && llmsim_stack_check(&sd, &m, &c, why, sizeof why)) {
		fprintf(stderr, "%s: %s\n", cmd, why);
		return 1;
	}
	if (llmsim_train_check(&m, &c, &err) != LLMSIM_REJ_NONE) {
		char *s = err.msg, *sep;
		while ((sep = strstr(s, "; "))) {
			*sep = 0;
			fprintf(stderr, "%s: %s\n", cmd, s);
			s = sep + 2;
		}
		fprintf(stderr, "%s: %s\n", cmd, s);
		return 1;
	}
	if (trace_out && c.schedule == LLMSIM_SCHED_DUALPIPE)
		return llmsim_args_error(cmd, "--trace-out: the DualPipe schedule's two-way order is "
					 "not drawn; use --schedule 1f1b or interleaved for a timeline");
	if (trace_out && cli_trace_check(cmd, trace_out))
		return 1;
	struct llmsim_train_ctx *ctx;
	struct llmsim_train_result r;
	struct llmsim_timeline tl = {.max_events = CLI_TRACE_MAX_EVENTS};
	if (llmsim_train_ctx_new(&m, &gpu, &ctx, &err) ||
	    llmsim_train_simulate(ctx, &c, &r, &err) ||
	    (trace_out && llmsim_train_timeline(ctx, &c, &r, &tl, &err))) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		llmsim_train_ctx_free(ctx);
		llmsim_tl_release(&tl);
		return 1;
	}
	llmsim_train_ctx_free(ctx);
	int trace_rc = trace_out ? cli_trace_write(cmd, trace_out, &tl) : 0;
	llmsim_tl_release(&tl);
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "model", m.name);
		llmsim_json_str(&j, "gpu", gpu.name);
		llmsim_json_int(&j, "layers", m.layers);
		train_json_result(&j, &r);
		if (c.engine == LLMSIM_ENGINE_TORCH)
			train_json_torch(&j, &r, &gpu);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		train_print_result(stdout, &r, &m, &gpu);
	}
	if (!r.gpu_fits) {
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
		fprintf(stderr, "%s: does not fit: needs %s per GPU, %s more than the %s of HBM\n",
			cmd, llmsim_fmt_bytes(a, r.mem.total_bytes),
			llmsim_fmt_bytes(b, r.mem.total_bytes - r.mem.hbm_bytes), gpu.name);
		return 1;
	}
	if (!r.host_fits) {
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
		fprintf(stderr, "%s: host out of memory: offloaded states need %s per node, %s more "
			"than the %s of host memory\n", cmd,
			llmsim_fmt_bytes(a, r.mem.host_per_node_bytes),
			llmsim_fmt_bytes(b, r.mem.host_per_node_bytes - r.mem.host_bytes),
			llmsim_fmt_bytes(d, r.mem.host_bytes));
		return 1;
	}
	return trace_rc;
}
