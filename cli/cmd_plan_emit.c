/*
 * cmd_plan_emit.c - launch arguments of a planned configuration (see
 * plan_emit.h). Flag names were read from each framework's source at the
 * version named:
 *   Megatron-LM core_v0.15.3, megatron/training/arguments.py (and
 *     megatron/core/transformer/pipeline_parallel_layer_layout.py for the
 *     layout string, transformer_block.py for the uneven first/last stage);
 *   DeepSpeed v0.19.5, deepspeed/runtime/constants.py, zero/config.py,
 *     zero/offload_config.py, tensor_parallel/config.py (AutoTP training),
 *     config.py (the pipeline section), pipe/engine.py ("ZeRO-2 and ZeRO-3
 *     are incompatible with pipeline parallelism");
 *   vLLM 0.14, vllm/engine/arg_utils.py (EngineArgs) and the NixlConnector
 *     guide for --kv-transfer-config;
 *   TensorRT-LLM 1.x, tensorrt_llm/commands/serve.py (trtllm-serve).
 */
#include "plan_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const plan_fw_names[] = {"megatron", "deepspeed", "vllm", "trtllm", "torchtitan",
				     "stack", NULL};
_Static_assert(sizeof plan_fw_names / sizeof *plan_fw_names == PLAN_FW_COUNT + 1, "fw names");

const char *plan_fw_source(enum plan_fw fw)
{
	static const char *const s[PLAN_FW_COUNT] = {
		[PLAN_FW_MEGATRON] = "Megatron-LM core_v0.15.3 (megatron/training/arguments.py)",
		[PLAN_FW_DEEPSPEED] = "DeepSpeed v0.19.5 (config JSON)",
		[PLAN_FW_VLLM] = "vLLM 0.14 (vllm serve engine arguments)",
		[PLAN_FW_TRTLLM] = "TensorRT-LLM 1.x (trtllm-serve, PyTorch backend)",
		[PLAN_FW_TORCHTITAN] = "TorchTitan (torchtitan/config/job_config.py overrides of "
				       "run_train.sh)",
		[PLAN_FW_STACK] = "the stack's launcher",
	};
	return (unsigned)fw < PLAN_FW_COUNT ? s[fw] : "?";
}

int plan_fw_trains(enum plan_fw fw)
{
	return fw == PLAN_FW_MEGATRON || fw == PLAN_FW_DEEPSPEED || fw == PLAN_FW_TORCHTITAN ||
	       fw == PLAN_FW_STACK;
}

enum plan_fw plan_fw_of_stack(const struct llmsim_stack_def *s)
{
	switch (s->emit) {
	case LLMSIM_EMIT_DEEPSPEED: return PLAN_FW_DEEPSPEED;
	case LLMSIM_EMIT_TORCHTITAN: return PLAN_FW_TORCHTITAN;
	default: return PLAN_FW_MEGATRON;
	}
}

/* An appending buffer. */
struct sbuf {
	char *p;
	size_t n, len;
};

static void put(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct sbuf *b, const char *fmt, ...)
{
	if (b->len >= b->n)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->p + b->len, b->n - b->len, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->len += (size_t)k < b->n - b->len ? (size_t)k : b->n - b->len - 1;
}

static int refuse(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Layers per virtual stage, in Megatron's layer order (index vpp * pp +
 * pp_rank): every slot holds ceil(L / S) but for the deficit, taken one
 * layer at a time from the first and the last slot inwards (Llama 3: the
 * first and the last stage one layer short). */
static void stage_layers(int layers, int slots, int *out)
{
	int q = (layers + slots - 1) / slots, deficit = q * slots - layers;
	for (int i = 0; i < slots; i++)
		out[i] = q;
	for (int k = 0; k < deficit; k++) {
		int i = k % 2 ? slots - 1 - k / 2 : k / 2;
		out[i]--;
	}
}

/* --pipeline-model-parallel-layout: "E" on the first slot, "L" on the
 * last, runs of equal middle slots as "(t*k|)*n". */
static void layout_string(struct sbuf *b, const int *s, int slots)
{
	put(b, "\"E");
	for (int i = 0; i < slots;) {
		int j = i + 1;
		if (i > 0 && i < slots - 1)
			while (j < slots - 1 && s[j] == s[i])
				j++;
		if (j - i > 1)
			put(b, "(t*%d|)*%d", s[i], j - i);
		else /* an end with no layer (the llama3 split): "E|" or "|L" */
			put(b, s[i] ? "t*%d%s" : "%.0d%s", s[i], i < slots - 1 ? "|" : "");
		i = j;
	}
	put(b, "L\"");
}

static int megatron(const struct llmsim_train_result *r, const struct llmsim_model *m,
		    double tokens, struct sbuf *b, char *why, size_t nwhy)
{
	const struct llmsim_train_cfg *c = &r->cfg;
	if (c->lora_rank)
		return refuse(why, nwhy, "Megatron-LM has no LoRA fine-tuning (NeMo adds it on top)");
	if (c->offload == LLMSIM_OFFLOAD_PARAMS)
		return refuse(why, nwhy, "Megatron-LM cannot keep parameters in host memory "
			      "(ZeRO-Infinity); its --optimizer-cpu-offload moves the optimizer only");
	if (c->offload == LLMSIM_OFFLOAD_OPTIMIZER && c->zero != 1)
		return refuse(why, nwhy, "Megatron-LM's --optimizer-cpu-offload offloads its "
			      "distributed optimizer (ZeRO-1), not ZeRO-%d", c->zero);
	if (c->dpu)
		return refuse(why, nwhy, "Megatron-LM has no delayed parameter update (DPU)");
	int v = c->schedule == LLMSIM_SCHED_INTERLEAVED ? c->chunks : 1;
	put(b, "torchrun --nnodes $NNODES --nproc-per-node $GPUS_PER_NODE pretrain_gpt.py \\\n");
	put(b, "  --num-layers %d --hidden-size %d --ffn-hidden-size %d --num-attention-heads %d \\\n",
	    m->layers, m->hidden, m->has_moe ? m->moe.expert_intermediate : m->intermediate,
	    m->heads);
	if (m->kv_heads != m->heads && !m->has_mla)
		put(b, "  --group-query-attention --num-query-groups %d \\\n", m->kv_heads);
	if (m->head_dim && m->head_dim * m->heads != m->hidden)
		put(b, "  --kv-channels %d \\\n", m->head_dim);
	put(b, "  --seq-length %lld --max-position-embeddings %lld \\\n", (long long)c->seq,
	    (long long)(m->max_seq > c->seq ? m->max_seq : c->seq));
	put(b, "  --normalization %s%s --position-embedding-type %s%s%s \\\n",
	    m->norm == LLMSIM_NORM_RMS ? "RMSNorm" : "LayerNorm",
	    m->mlp == LLMSIM_MLP_GATED ? " --swiglu" : "",
	    m->position == LLMSIM_POS_ROPE ? "rope" : "learned_absolute",
	    m->tied_embeddings ? "" : " --untie-embeddings-and-output-weights",
	    m->linear_bias ? "" : " --disable-bias-linear");
	put(b, "  --tensor-model-parallel-size %d%s --pipeline-model-parallel-size %d "
	    "--context-parallel-size %d \\\n",
	    c->tp, c->tp > 1 && c->sequence_parallel ? " --sequence-parallel" : "", c->pp, c->cp);
	int slots = c->pp * v, s[8 * 64];
	int uneven = c->pp > 1 && m->layers % slots;
	if (llmsim_train_pp_ends_in_slots(c) && slots <= (int)(sizeof s / sizeof s[0])) {
		/* the embedding and the loss in a layer's slot each: virtual
		 * stage i is chunk i / pp of rank i % pp */
		for (int i = 0; i < slots; i++)
			s[i] = llmsim_train_pp_chunk_layers(m, c, i % c->pp, i / c->pp, NULL, NULL);
		put(b, "  --pipeline-model-parallel-layout ");
		layout_string(b, s, slots);
		put(b, " \\\n");
	} else if (uneven && slots <= (int)(sizeof s / sizeof s[0])) {
		stage_layers(m->layers, slots, s);
		int mid = slots > 2 ? s[1] : 0, even_mid = 1;
		for (int i = 1; i < slots - 1; i++)
			even_mid &= s[i] == mid;
		if (v == 1 && even_mid && c->pp > 2)
			put(b, "  --decoder-first-pipeline-num-layers %d "
			    "--decoder-last-pipeline-num-layers %d \\\n", s[0], s[slots - 1]);
		else {
			put(b, "  --pipeline-model-parallel-layout ");
			layout_string(b, s, slots);
			put(b, " \\\n");
		}
	} else if (v > 1) {
		put(b, "  --num-virtual-stages-per-pipeline-rank %d \\\n", v);
	}
	if (m->has_moe && m->moe.experts > 1)
		put(b, "  --num-experts %d --moe-router-topk %d --expert-model-parallel-size %d "
		    "--expert-tensor-parallel-size %d --moe-grouped-gemm \\\n",
		    m->moe.experts, m->moe.top_k, c->ep, c->tp);
	put(b, "  --micro-batch-size %d --global-batch-size %lld \\\n", c->micro_batch,
	    (long long)c->global_batch);
	put(b, "  --bf16%s", c->dtype == LLMSIM_DT_FP8 ? " --fp8-format hybrid" : "");
	if (c->zero == 1)
		put(b, " --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather");
	else if (c->zero >= 2 && c->fsdp == LLMSIM_FSDP_FSDP2)
		put(b, " --use-torch-fsdp2 --data-parallel-sharding-strategy %s "
		    "--no-gradient-accumulation-fusion --ckpt-format torch_dist",
		    c->zero == 2 ? "optim_grads" : "optim_grads_params");
	else if (c->zero >= 2)
		put(b, " --use-megatron-fsdp --data-parallel-sharding-strategy %s "
		    "--ckpt-format fsdp_dtensor --overlap-grad-reduce",
		    c->zero == 2 ? "optim_grads" : "optim_grads_params");
	else
		put(b, " --overlap-grad-reduce");
	put(b, " \\\n");
	if (c->offload == LLMSIM_OFFLOAD_OPTIMIZER)
		put(b, "  --optimizer-cpu-offload --use-precision-aware-optimizer \\\n");
	if (c->offload_activations > 0) /* every module it offloads (its docs' choices) */
		put(b, "  --fine-grained-activation-offloading --offload-modules attn_norm core_attn "
		    "attn_proj mlp_norm%s \\\n", m->has_moe ? " expert_fc1 moe_act" : "");
	if (c->recompute == LLMSIM_RECOMP_SELECTIVE)
		put(b, "  --recompute-granularity selective \\\n");
	else if (c->recompute == LLMSIM_RECOMP_MODULES) {
		put(b, "  --recompute-granularity selective --recompute-modules");
		for (int k = 0; k < LLMSIM_RM_COUNT; k++)
			if (c->recompute_modules & 1u << k)
				put(b, " %s", llmsim_recompute_module_names[k]);
		put(b, " \\\n");
	} else if (c->recompute == LLMSIM_RECOMP_FULL)
		put(b, "  --recompute-granularity full --recompute-method %s "
		    "--recompute-num-layers %d \\\n",
		    llmsim_recompute_method_names[c->recompute_method],
		    c->recompute_layers > 0 ? c->recompute_layers : 1);
	if (tokens > 0)
		put(b, "  --train-samples %.0f \\\n", tokens / (double)c->seq);
	put(b, "  --attention-backend %s\n", c->attn == LLMSIM_ATTN_NAIVE ? "unfused" : "flash");
	if (c->zero >= 2)
		put(b, "# Megatron FSDP needs CUDA_DEVICE_MAX_CONNECTIONS > 1\n");
	if (c->recipe != LLMSIM_RECIPE_MEGATRON)
		put(b, "# note: Megatron-LM runs the megatron recipe (bf16 weights, fp32 main "
		    "grads), not %s\n", llmsim_recipe_name(c->recipe));
	return 0;
}

static int deepspeed(const struct llmsim_train_result *r, double tokens, struct sbuf *b,
		     char *why, size_t nwhy)
{
	const struct llmsim_train_cfg *c = &r->cfg;
	(void)tokens;
	if (c->cp > 1)
		return refuse(why, nwhy, "DeepSpeed has no ring-attention context parallelism "
			      "(cp %d); its Ulysses sequence parallelism is another scheme", c->cp);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		return refuse(why, nwhy, "DeepSpeed's pipeline engine runs 1F1B only, not an "
			      "interleaved schedule with %d chunks", c->chunks);
	if (c->pp > 1 && c->zero >= 2)
		return refuse(why, nwhy, "DeepSpeed: ZeRO-2 and ZeRO-3 are incompatible with "
			      "pipeline parallelism (pp %d, ZeRO-%d)", c->pp, c->zero);
	if (c->dpu)
		return refuse(why, nwhy, "DeepSpeed's config has no delayed parameter update (DPU)");
	if (c->zero >= 2 && c->fsdp != LLMSIM_FSDP_NONE)
		return refuse(why, nwhy, "DeepSpeed shards with its own ZeRO, not %s",
			      c->fsdp == LLMSIM_FSDP_FSDP2 ? "FSDP2" : "Megatron-FSDP");
	if (c->recompute == LLMSIM_RECOMP_MODULES || c->offload_activations > 0)
		return refuse(why, nwhy, "DeepSpeed's activation checkpointing has no recompute "
			      "modules or activation offload of this kind");
	int64_t gas = r->microbatches;
	put(b, "{\n");
	put(b, "  \"train_batch_size\": %lld,\n", (long long)c->global_batch);
	put(b, "  \"train_micro_batch_size_per_gpu\": %d,\n", c->micro_batch);
	put(b, "  \"gradient_accumulation_steps\": %lld,\n", (long long)gas);
	put(b, "  \"bf16\": {\"enabled\": true},\n");
	put(b, "  \"zero_optimization\": {\n    \"stage\": %d", c->zero);
	if (c->zero >= 1)
		put(b, ",\n    \"overlap_comm\": true,\n    \"contiguous_gradients\": true");
	if (c->offload != LLMSIM_OFFLOAD_NONE)
		put(b, ",\n    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true}");
	if (c->offload == LLMSIM_OFFLOAD_PARAMS)
		put(b, ",\n    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}");
	put(b, "\n  }");
	if (c->tp > 1)
		put(b, ",\n  \"tensor_parallel\": {\"autotp_size\": %d}", c->tp);
	if (c->pp > 1)
		put(b, ",\n  \"pipeline\": {\"stages\": %d, \"partition\": \"uniform\"}", c->pp);
	if (c->recompute != LLMSIM_RECOMP_NONE)
		put(b, ",\n  \"activation_checkpointing\": {\"partition_activations\": %s, "
		    "\"contiguous_memory_optimization\": true}",
		    c->tp > 1 ? "true" : "false");
	put(b, "\n}\n");
	if (c->pp > 1)
		put(b, "# the model must be a deepspeed.pipe.PipelineModule(num_stages=%d)\n", c->pp);
	if (c->ep > 1)
		put(b, "# experts: deepspeed.moe.layer.MoE(..., ep_size=%d) in the model code\n", c->ep);
	if (c->recompute == LLMSIM_RECOMP_SELECTIVE)
		put(b, "# selective recompute: checkpoint only the attention core "
		    "(deepspeed.checkpointing.checkpoint around it)\n");
	if (c->tp > 1)
		put(b, "# note: AutoTP training has no Megatron-style sequence parallelism; llmsim "
		    "priced tp %d with it\n", c->tp);
	if (c->lora_rank)
		put(b, "# LoRA rank %d: adapters on q, k, v, o from the model code (e.g. PEFT)\n",
		    c->lora_rank);
	if (c->dtype == LLMSIM_DT_FP8)
		put(b, "# FP8 matmuls: Transformer Engine layers in the model code\n");
	return 0;
}

/* TorchTitan: run_train.sh with the model's train config and overrides of
 * its job config (torchtitan/config/job_config.py: parallelism, training,
 * activation_checkpoint). FSDP2 shards over dp_shard (x cp); ZeRO-0 is
 * dp_replicate (DDP). */
static int torchtitan(const struct llmsim_train_result *r, const struct llmsim_model *m,
		      double tokens, struct sbuf *b, char *why, size_t nwhy)
{
	const struct llmsim_train_cfg *c = &r->cfg;
	if (c->zero == 1)
		return refuse(why, nwhy, "TorchTitan has no distributed optimizer apart from FSDP2 "
			      "(ZeRO-1)");
	if (c->offload != LLMSIM_OFFLOAD_NONE || c->offload_activations > 0)
		return refuse(why, nwhy, "TorchTitan's launch keeps model states and activations "
			      "on the GPU here (no ZeRO-Offload)");
	if (c->lora_rank)
		return refuse(why, nwhy, "TorchTitan is a pre-training stack: no LoRA");
	if (c->recompute == LLMSIM_RECOMP_MODULES ||
	    (c->recompute == LLMSIM_RECOMP_FULL && c->recompute_layers > 1))
		return refuse(why, nwhy, "TorchTitan's activation checkpointing is per layer "
			      "(selective or full), not by module or layer group");
	if (c->schedule == LLMSIM_SCHED_DUALPIPE)
		return refuse(why, nwhy, "TorchTitan has no DualPipe schedule");
	int v = c->schedule == LLMSIM_SCHED_INTERLEAVED ? c->chunks : 1;
	put(b, "# model: a torchtitan train config of %s (model.name, model.flavor)\n", m->name);
	put(b, "CONFIG_FILE=$TRAIN_CONFIG NGPU=$GPUS_PER_NODE ./run_train.sh \\\n");
	put(b, "  --parallelism.tensor_parallel_degree %d --parallelism.context_parallel_degree %d "
	    "\\\n", c->tp, c->cp);
	if (c->zero >= 2)
		put(b, "  --parallelism.data_parallel_shard_degree %d "
		    "--parallelism.data_parallel_replicate_degree 1 "
		    "--parallelism.fsdp_reshard_after_forward %s \\\n",
		    c->dp, c->zero == 3 ? "always" : "never");
	else
		put(b, "  --parallelism.data_parallel_replicate_degree %d "
		    "--parallelism.data_parallel_shard_degree 1 \\\n", c->dp);
	if (c->pp > 1)
		put(b, "  --parallelism.pipeline_parallel_degree %d "
		    "--parallelism.pipeline_parallel_schedule %s "
		    "--parallelism.pipeline_parallel_microbatch_size %d \\\n",
		    c->pp, v > 1 ? "Interleaved1F1B" : "1F1B", c->micro_batch);
	if (c->ep > 1)
		put(b, "  --parallelism.expert_parallel_degree %d \\\n", c->ep);
	put(b, "  --training.local_batch_size %lld --training.global_batch_size %lld "
	    "--training.seq_len %lld \\\n",
	    (long long)(c->pp > 1 ? c->global_batch / c->dp : c->micro_batch),
	    (long long)c->global_batch, (long long)c->seq);
	if (tokens > 0)
		put(b, "  --training.steps %.0f \\\n", tokens / ((double)c->global_batch * c->seq));
	put(b, "  --activation_checkpoint.mode %s",
	    c->recompute == LLMSIM_RECOMP_FULL	    ? "full"
	    : c->recompute == LLMSIM_RECOMP_SELECTIVE ? "selective"
						      : "none");
	if (c->recompute == LLMSIM_RECOMP_SELECTIVE)
		put(b, " --activation_checkpoint.selective_ac_option op");
	if (c->dtype == LLMSIM_DT_FP8)
		put(b, " \\n  --model.converters float8");
	put(b, "\n");
	if (v > 2)
		put(b, "# %d model chunks per stage: pipeline_parallel_layers_per_stage = layers / "
		    "(pp x %d)\n", v, v);
	return 0;
}

int plan_emit_train(enum plan_fw fw, const struct llmsim_train_result *r,
		    const struct llmsim_model *m, double tokens, char *out, size_t n, char *why,
		    size_t nwhy)
{
	struct sbuf b = {out, n, 0};
	out[0] = why[0] = 0;
	if (fw == PLAN_FW_MEGATRON)
		return megatron(r, m, tokens, &b, why, nwhy);
	if (fw == PLAN_FW_DEEPSPEED)
		return deepspeed(r, tokens, &b, why, nwhy);
	if (fw == PLAN_FW_TORCHTITAN)
		return torchtitan(r, m, tokens, &b, why, nwhy);
	return refuse(why, nwhy, "--emit %s is for serving plans (--workload serve)",
		      plan_fw_names[fw]);
}

/* --quantization and --kv-cache-dtype of vLLM, or why not. */
static int vllm_types(const struct llmsim_plan_serve_row *row, struct sbuf *b)
{
	if (row->weight_dtype == LLMSIM_DT_FP8)
		put(b, " --quantization fp8");
	if (row->kv_dtype == LLMSIM_DT_FP8)
		put(b, " --kv-cache-dtype fp8");
	return 0;
}

static void vllm_instance(struct sbuf *b, const struct llmsim_plan_serve_row *row, int tp,
			  int pp, int dp, const struct llmsim_plan_serve_cfg *pc, const char *kv)
{
	put(b, "vllm serve $MODEL --tensor-parallel-size %d", tp);
	if (pp > 1)
		put(b, " --pipeline-parallel-size %d", pp);
	if (dp > 1)
		put(b, " --data-parallel-size %d", dp);
	if (row->ep > 1)
		put(b, " --enable-expert-parallel");
	put(b, " \\\n  --max-num-seqs %lld --max-num-batched-tokens 8192 --enable-chunked-prefill "
	    "--max-model-len %lld --gpu-memory-utilization 0.9",
	    (long long)row->max_batch, (long long)(pc->prompt + pc->output));
	vllm_types(row, b);
	if (kv)
		put(b, " \\\n  --kv-transfer-config '%s'", kv);
	put(b, "\n");
}

int plan_emit_serve(enum plan_fw fw, const struct llmsim_plan_serve_row *row,
		    const struct llmsim_plan_serve_cfg *pc, char *out, size_t n, char *why,
		    size_t nwhy)
{
	struct sbuf b = {out, n, 0};
	out[0] = why[0] = 0;
	if (plan_fw_trains(fw))
		return refuse(why, nwhy, "--emit %s is for training plans", plan_fw_names[fw]);
	if (row->weight_dtype == LLMSIM_DT_INT4 || row->weight_dtype == LLMSIM_DT_FP4)
		put(&b, "# %s weights: serve a checkpoint quantized to %s (AWQ/GPTQ int4, NVFP4); "
		    "the engine reads the method from it\n",
		    llmsim_dtype_name(row->weight_dtype), llmsim_dtype_name(row->weight_dtype));
	if (fw == PLAN_FW_VLLM) {
		if (row->ep > 1 && row->ep != row->tp)
			return refuse(why, nwhy, "vLLM's expert parallelism spans the whole tp x dp "
				      "group: it cannot run ep %d inside tp %d", row->ep, row->tp);
		put(&b, "# MODEL: the Hugging Face checkpoint of %s\n", pc->model->name);
		if (!row->disagg) {
			vllm_instance(&b, row, row->tp, row->pp, row->replicas, pc, NULL);
			return 0;
		}
		static const char kv[] = "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}";
		put(&b, "# prefill pool: %d instance%s of tp %d\n", row->p_replicas,
		    row->p_replicas == 1 ? "" : "s", row->p_tp);
		struct llmsim_plan_serve_row p = *row;
		p.ep = row->ep > 1 ? row->p_tp : 1;
		vllm_instance(&b, &p, row->p_tp, 1, 1, pc, kv);
		put(&b, "# decode pool: %d instance%s of tp %d\n", row->replicas,
		    row->replicas == 1 ? "" : "s", row->tp);
		vllm_instance(&b, row, row->tp, 1, 1, pc, kv);
		put(&b, "# route each request to a prefill and a decode instance (vLLM's "
		    "disaggregated-prefill proxy)\n");
		return 0;
	}
	/* TensorRT-LLM */
	int pools = row->disagg ? 2 : 1;
	for (int k = 0; k < pools; k++) {
		int tp = row->disagg && k == 0 ? row->p_tp : row->tp;
		int pp = row->disagg ? 1 : row->pp;
		int inst = row->disagg ? (k == 0 ? row->p_replicas : row->replicas) : row->replicas;
		if (row->disagg)
			put(&b, "# %s pool: %d instance%s\n", k == 0 ? "context (prefill)" : "generation",
			    inst, inst == 1 ? "" : "s");
		else if (inst > 1)
			put(&b, "# %d instances (one per replica) behind a load balancer\n", inst);
		put(&b, "trtllm-serve $MODEL --backend pytorch --tp_size %d --pp_size %d", tp, pp);
		if (row->ep > 1)
			put(&b, " --ep_size %d", row->ep);
		put(&b, " \\\n  --max_batch_size %lld --max_num_tokens 8192 --max_seq_len %lld "
		    "--kv_cache_free_gpu_memory_fraction 0.9 --enable_chunked_prefill",
		    (long long)row->max_batch, (long long)(pc->prompt + pc->output));
		if (row->disagg)
			put(&b, " --server_role %s", k == 0 ? "CONTEXT" : "GENERATION");
		if (row->kv_dtype == LLMSIM_DT_FP8)
			put(&b, " \\\n  --extra_llm_api_options kv_fp8.yaml   # kv_cache_config: {dtype: fp8}");
		put(&b, "\n");
	}
	if (row->weight_dtype == LLMSIM_DT_FP8)
		put(&b, "# fp8 weights: serve an FP8 checkpoint (e.g. quantized with NVIDIA ModelOpt)\n");
	if (row->disagg)
		put(&b, "# join the pools with `trtllm-serve disaggregated -c CONFIG` (context and "
		    "generation servers)\n");
	return 0;
}
