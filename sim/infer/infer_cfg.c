/*
 * infer_cfg.c - the inference configuration: defaults and their reasons,
 * checks of a parallel layout against a model and a GPU, the data types
 * the linear layers run in, and the memory of one GPU of a replica.
 */
#include "infer.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "base/bounds.h"
#include "base/enum.h"

/*
 * Assumptions, not GPU efficiencies (those live in hw/gpu_params.h):
 * (The GPU idles between two dependent kernels, in a CUDA graph or not:
 * that gap is the GPU's, graph_kernel_gap_s of its hardware file and
 * calibration profile.)
 * - eager_host_s: 16.8 us of host time per kernel launched from PyTorch
 *   eager (Python, the ATen dispatcher, cudaLaunchKernel), measured on the
 *   calibration machine's host: the host-bound HF-transformers step of
 *   calib/data/h200-2026-12-01/steps_hf.tsv (Llama-3.2-1B, prefill 1x512:
 *   11.38 ms of wall time for 678 launches, its kernels 3.83 ms). Other
 *   eager programs on that host spend more, never less: the plain-PyTorch
 *   decode steps of calib/data/torch_steps.json ~23 us per launch (2.54 ms
 *   for the ~110 launches infer counts), HF's decode steps (torch_ops.tsv's hf_sdpa_eager)
 *   30-32 us (HF's per-step Python around the cache). A web-quoted "5-25 us
 *   per op" low end of 8 us, used before, was under every one of them.
 *   The figure is the host's, not the GPU's: a faster CPU launches faster.
 * - mem_utilization 0.9: vLLM's default gpu_memory_utilization; the other
 *   10% covers the CUDA context, NCCL buffers, CUDA graphs and fragmentation.
 * - max_step_tokens 8192: vLLM V1's default max_num_batched_tokens for
 *   online serving with chunked prefill; activations are sized for it.
 */
const struct llmsim_infer_params llmsim_infer_params_default = {
	.eager_host_s = 16.8e-6,
	.mem_utilization = 0.90,
	.max_step_tokens = 8192,
};

static const char *const runtime_names[LLMSIM_RT_COUNT] = {
	[LLMSIM_RT_GRAPH] = "graph",
	[LLMSIM_RT_EAGER] = "eager",
};
_Static_assert(sizeof runtime_names / sizeof runtime_names[0] == LLMSIM_RT_COUNT, "runtimes");

static const char *const attn_names[LLMSIM_AC_COUNT] = {
	[LLMSIM_AC_NAIVE] = "naive",
	[LLMSIM_AC_FLASH2] = "flash2",
	[LLMSIM_AC_FLASH3] = "flash3",
	[LLMSIM_AC_PAGED] = "paged",
	[LLMSIM_AC_SDPA] = "sdpa",
	[LLMSIM_AC_CUDNN] = "cudnn",
	[LLMSIM_AC_SDPA_MATH] = "sdpa_math",
	[LLMSIM_AC_HF_EAGER] = "hf_eager",
};
_Static_assert(sizeof attn_names / sizeof attn_names[0] == LLMSIM_AC_COUNT, "attention");


const char *llmsim_runtime_name(enum llmsim_runtime r)
{
	return llmsim_enum_label(runtime_names, LLMSIM_RT_COUNT, (int)r);
}

const char *llmsim_attn_choice_name(enum llmsim_attn_choice a)
{
	return llmsim_enum_label(attn_names, LLMSIM_AC_COUNT, (int)a);
}

int llmsim_attn_choice_parse(const char *s)
{
	return llmsim_enum_parse_nocase(attn_names, LLMSIM_AC_COUNT, s);
}


void llmsim_infer_cfg_init(struct llmsim_infer_cfg *cfg, const struct llmsim_model *model,
			   const struct llmsim_gpu *gpu)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->model = model;
	cfg->gpu = gpu;
	cfg->tp = cfg->pp = cfg->ep = 1;
	cfg->act_dtype = LLMSIM_DT_BF16;
	cfg->weight_dtype = LLMSIM_DT_BF16;
	cfg->kv_dtype = LLMSIM_DT_BF16;
	cfg->block_size = 16;
	cfg->params = llmsim_infer_params_default;
	llmsim_infer_cfg_engine(cfg, LLMSIM_ENGINE_DEFAULT);
}

enum llmsim_runtime llmsim_engine_runtime(enum llmsim_engine e)
{
	return e == LLMSIM_ENGINE_HF ? LLMSIM_RT_EAGER : LLMSIM_RT_GRAPH;
}

void llmsim_infer_cfg_engine(struct llmsim_infer_cfg *cfg, enum llmsim_engine e)
{
	cfg->lower.engine = e;
	cfg->runtime = llmsim_engine_runtime(e);
	/* SDPA's backend choice (torch.nn.attention): cuDNN's fused attention
	 * ranks first on Hopper and later GPUs (the kernels of
	 * calib/data/h200-2026-12-01/steps_hf.tsv), FlashAttention-2 before;
	 * a lean engine names the FLASH backend (steps_lean.py) */
	int hopper = !strcasecmp(cfg->gpu->arch, "hopper") || !strcasecmp(cfg->gpu->arch, "blackwell");
	cfg->attn = e == LLMSIM_ENGINE_FUSED ? LLMSIM_AC_PAGED
		    : e == LLMSIM_ENGINE_HF && hopper ? LLMSIM_AC_CUDNN
						      : LLMSIM_AC_SDPA;
}

int llmsim_infer_cfg_check(const struct llmsim_infer_cfg *cfg, struct llmsim_err *err)
{
	const struct llmsim_model *m = cfg->model;
	if (cfg->tp < 1 || cfg->pp < 1 || cfg->ep < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "tp, pp and ep must be at least 1");
	if ((int64_t)cfg->tp * cfg->pp > LLMSIM_MAX_GPUS || cfg->ep > LLMSIM_MAX_GPUS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "tp x pp and ep must be at most %d GPUs",
				      LLMSIM_MAX_GPUS);
	if (m->layers > LLMSIM_MAX_LAYERS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: %d layers, more than %d", m->name,
				      m->layers, LLMSIM_MAX_LAYERS);
	if (m->heads % cfg->tp)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "tp %d does not divide the %d attention heads of %s",
				      cfg->tp, m->heads, m->name);
	if (!m->has_mla && m->kv_heads > cfg->tp && m->kv_heads % cfg->tp)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "tp %d does not divide the %d KV heads of %s", cfg->tp,
				      m->kv_heads, m->name);
	if (!m->has_mla && m->kv_heads < cfg->tp && cfg->tp % m->kv_heads)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "the %d KV heads of %s cannot be replicated evenly over tp %d",
				      m->kv_heads, m->name, cfg->tp);
	if (cfg->pp > m->layers)
		return llmsim_err_set(err, LLMSIM_EINVAL, "pp %d exceeds the %d layers of %s",
				      cfg->pp, m->layers, m->name);
	if (cfg->ep > 1) {
		if (!m->has_moe)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "ep %d needs a mixture-of-experts model; %s is dense",
					      cfg->ep, m->name);
		if (cfg->tp % cfg->ep)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "ep %d must divide tp %d (experts are spread over the tensor-parallel ranks)",
					      cfg->ep, cfg->tp);
		if (m->moe.experts % cfg->ep)
			return llmsim_err_set(err, LLMSIM_EINVAL, "ep %d does not divide the %d experts",
					      cfg->ep, m->moe.experts);
	}
	if (m->has_moe) {
		int shard = cfg->tp / cfg->ep;
		if (m->moe.expert_intermediate % shard)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "tp/ep = %d does not divide the expert width %d", shard,
					      m->moe.expert_intermediate);
	}
	if (m->intermediate % cfg->tp && (!m->has_moe || m->moe.dense_layers > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "tp %d does not divide the MLP width %d",
				      cfg->tp, m->intermediate);
	switch (cfg->weight_dtype) {
	case LLMSIM_DT_BF16: case LLMSIM_DT_FP16: case LLMSIM_DT_FP8:
	case LLMSIM_DT_INT4: case LLMSIM_DT_FP4: case LLMSIM_DT_INT8:
		break;
	default:
		return llmsim_err_set(err, LLMSIM_EINVAL, "weight dtype %s is not an inference format",
				      llmsim_dtype_name(cfg->weight_dtype));
	}
	if (cfg->kv_dtype != LLMSIM_DT_BF16 && cfg->kv_dtype != LLMSIM_DT_FP16 &&
	    cfg->kv_dtype != LLMSIM_DT_FP8)
		return llmsim_err_set(err, LLMSIM_EINVAL, "KV cache dtype %s: use bf16 or fp8",
				      llmsim_dtype_name(cfg->kv_dtype));
	if (cfg->block_size < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "block size must be at least 1");
	return 0;
}

int llmsim_infer_layout(struct llmsim_infer_cfg *cfg, int gpus, int tp, int pp, int ep,
			int *replicas, struct llmsim_err *err)
{
	if (gpus < 0 || tp < 0 || pp < 0 || ep < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "GPU counts must not be negative");
	cfg->pp = pp ? pp : 1;
	if (tp)
		cfg->tp = tp;
	else if (gpus)
		cfg->tp = gpus % cfg->pp ? 0 : gpus / cfg->pp;
	else
		cfg->tp = 1;
	if (cfg->tp < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "--pp %d does not divide --gpus %d", cfg->pp, gpus);
	cfg->ep = ep ? ep : 1;
	if ((int64_t)cfg->tp * cfg->pp > LLMSIM_MAX_GPUS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "tp %d x pp %d: more than %d GPUs", cfg->tp,
				      cfg->pp, LLMSIM_MAX_GPUS);
	int replica = cfg->tp * cfg->pp;
	if (!gpus)
		gpus = replica;
	if (gpus % replica)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "--gpus %d is not a multiple of tp x pp = %d", gpus, replica);
	if (replicas)
		*replicas = gpus / replica;
	return llmsim_infer_cfg_check(cfg, err);
}

void llmsim_infer_gemm_dtypes(const struct llmsim_infer_cfg *cfg, enum llmsim_dtype *math,
			      enum llmsim_dtype *weights)
{
	enum llmsim_dtype w = cfg->weight_dtype;
	*weights = w;
	*math = cfg->act_dtype;
	/* Formats with native tensor-core math run weights and activations in
	 * that format (W8A8 FP8, W4A4 NVFP4); otherwise weight-only: the GEMM
	 * dequantizes B and multiplies in the activation type. */
	if ((w == LLMSIM_DT_FP8 || w == LLMSIM_DT_FP4 || w == LLMSIM_DT_INT8) &&
	    cfg->gpu->tensor_flops_per_s[w] > 0)
		*math = w;
	if (w == LLMSIM_DT_BF16 || w == LLMSIM_DT_FP16)
		*math = w;
}

int64_t llmsim_infer_kv_tokens(const struct llmsim_infer_cfg *cfg, int64_t len)
{
	if (cfg->attn != LLMSIM_AC_PAGED || cfg->block_size <= 1)
		return len;
	return (len + cfg->block_size - 1) / cfg->block_size * cfg->block_size;
}

/* Layers of the busiest pipeline stage. */
static int stage_layers(const struct llmsim_infer_cfg *cfg)
{
	/* ceil(layers / pp) without forming layers + pp - 1, which overflows
	 * an int for a layer count near INT_MAX */
	int l = cfg->model->layers;
	return l / cfg->pp + (l % cfg->pp != 0);
}

int llmsim_infer_memory(const struct llmsim_infer_cfg *cfg, struct llmsim_infer_mem *mem,
			struct llmsim_err *err)
{
	const struct llmsim_model *m = cfg->model;
	const struct llmsim_gpu *g = cfg->gpu;
	int rc = llmsim_infer_cfg_check(cfg, err);
	if (rc)
		return rc;
	memset(mem, 0, sizeof *mem);
	struct llmsim_params p;
	llmsim_model_params(m, &p);
	double wb = llmsim_dtype_bytes(cfg->weight_dtype);
	double ab = llmsim_dtype_bytes(cfg->act_dtype);
	double frac = (double)stage_layers(cfg) / m->layers;

	/* Linear layers are quantized and sharded over tp; the embedding,
	 * the LM head, norms and routers stay in the activation type (AWQ,
	 * GPTQ and vLLM's FP8 keep them unquantized). With pp > 1 the first
	 * stage holds the embedding and the last the head: take the larger. */
	double linear = (p.attention + p.mlp_dense + p.mlp_experts + p.mlp_shared) * frac;
	double ends = cfg->pp > 1 ? fmax(p.embedding, p.lm_head) : p.embedding + p.lm_head;
	mem->weight_bytes = linear / cfg->tp * wb + ends / cfg->tp * ab +
			    (p.router + p.norms) * frac * ab;

	/* KV per GPU: heads sharded over tp, replicated when kv_heads < tp;
	 * the MLA latent is shared by all heads, so every rank holds it. */
	double kv_all = llmsim_model_kv_bytes_per_token(m, cfg->kv_dtype);
	double share = 1.0;
	if (!m->has_mla)
		share = m->kv_heads >= cfg->tp ? 1.0 / cfg->tp : 1.0 / m->kv_heads;
	mem->kv_bytes_per_token = kv_all * frac * share;

	/* Activations of the largest step (max_step_tokens tokens): the
	 * residual stream and its normed copy, the q/k/v projections, the MLP's
	 * gate+up and activated outputs, kept in the activation type; the
	 * logits of every sequence of the step in fp32 (plus a softmax copy). */
	int64_t n = cfg->max_step_tokens ? cfg->max_step_tokens : cfg->params.max_step_tokens;
	double width = m->intermediate;
	if (m->has_moe)
		width = fmax(m->moe.dense_layers ? m->intermediate : 0,
			     (double)m->moe.expert_intermediate *
				     (m->moe.top_k + m->moe.shared_experts));
	double qkv = m->has_mla ? (double)m->heads * (m->mla.qk_nope_head_dim +
						      m->mla.qk_rope_head_dim + m->mla.v_head_dim)
				: (double)(m->heads + 2 * m->kv_heads) * m->head_dim;
	double per_token = 2.0 * m->hidden + (qkv + 3.0 * width) / cfg->tp;
	double logits_rows = fmin((double)n, 1024.0);
	mem->activation_bytes = (double)n * per_token * ab +
				logits_rows * (double)m->vocab / cfg->tp * 4.0 * 2.0;
	mem->reserve_bytes = g->hbm_bytes * (1.0 - cfg->params.mem_utilization);
	mem->kv_capacity_bytes = g->hbm_bytes - mem->reserve_bytes - mem->weight_bytes -
				 mem->activation_bytes;
	if (mem->kv_capacity_bytes <= 0) {
		return llmsim_err_set(err, LLMSIM_ENOFIT,
				      "%s does not fit on %d x %s (tp %d, pp %d) in %s: %.1f GB of weights and %.1f GB of activations per GPU, %.1f GB usable (%.0f%% of %.1f GB)",
				      m->name, cfg->tp * cfg->pp, g->name, cfg->tp, cfg->pp,
				      llmsim_dtype_name(cfg->weight_dtype), mem->weight_bytes / 1e9,
				      mem->activation_bytes / 1e9,
				      g->hbm_bytes * cfg->params.mem_utilization / 1e9,
				      cfg->params.mem_utilization * 100, g->hbm_bytes / 1e9);
	}
	mem->kv_capacity_tokens = mem->kv_bytes_per_token > 0
					  ? (int64_t)floor(mem->kv_capacity_bytes / mem->kv_bytes_per_token)
					  : INT64_MAX;
	return 0;
}
