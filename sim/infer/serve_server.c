/*
 * serve_server.c - the serving engines as they run today (serve.h, enum
 * llmsim_server): each one's defaults, with where they come from, and the
 * batch sizes its CUDA graphs are captured for.
 *
 * Sources (read 2026-12):
 *   [VA] vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults: on GPUs
 *        of >= 70 GiB other than the A100 the API server's
 *        max_num_batched_tokens is 8192 and max_num_seqs 1024; else 2048
 *        and 256. V1 always chunks prefills and mixes them with decodes.
 *   [VG] vllm/config/compilation.py (set_cudagraph_sizes) and
 *        docs/design/cuda_graphs.md: captured sizes 1, 2, 4, then 8 to 248
 *        by 8, then 256 to min(2 x max_num_seqs, 512) by 16; a batch pads
 *        its token count to the next captured size, and one past the
 *        largest runs without a graph.
 *   [SA] sglang python/sglang/srt/server_args.py: chunked_prefill_size
 *        2048 below 35 GB of GPU memory, 8192 below 160 GB, else 16384;
 *        cuda_graph_max_bs 256 at tp < 4 and 512 from tp 4 (H100/H200
 *        class), 512 at >= 160 GB; captured sizes 1, 2, 4, 8, 12, 16 to 256
 *        by 8, 272 to 496 by 16, 512 up by 32, and the largest
 *        (_generate_cuda_graph_batch_sizes). docs/advanced_features/
 *        cuda_graphs.md: decode batches larger than the largest run
 *        without a graph. The scheduler runs a prefill (extend) batch
 *        whenever one can be formed and decodes otherwise, unless
 *        --enable-mixed-chunk (off by default) mixes them.
 *   [TA] TensorRT-LLM docs (trtllm-serve, "The Batch Manager"): in-flight
 *        batching puts context and generation requests in one step, the
 *        capacity scheduler's default GUARANTEED_NO_EVICT admits a request
 *        only when it can run to its end, max_num_tokens 8192, chunked
 *        context off unless enabled.
 */
#include "serve.h"

#include <string.h>

static const char *const names[LLMSIM_SERVER_COUNT] = {
	[LLMSIM_SERVER_GENERIC] = "generic",
	[LLMSIM_SERVER_VLLM] = "vllm",
	[LLMSIM_SERVER_SGLANG] = "sglang",
	[LLMSIM_SERVER_TRTLLM] = "trtllm",
};
_Static_assert(sizeof names / sizeof names[0] == LLMSIM_SERVER_COUNT, "server names");

const char *llmsim_server_name(enum llmsim_server s)
{
	return (unsigned)s < LLMSIM_SERVER_COUNT ? names[s] : "?";
}

int llmsim_server_parse(const char *s)
{
	for (int i = 0; i < LLMSIM_SERVER_COUNT; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int big_gpu(const struct llmsim_gpu *g)
{
	return g->hbm_bytes >= 70.0 * (1 << 30) && strcmp(g->arch, "ampere") != 0; /* [VA] */
}

void llmsim_serve_server(struct llmsim_serve_cfg *cfg, enum llmsim_server s)
{
	const struct llmsim_gpu *g = cfg->infer.gpu;
	cfg->eng.server = s;
	switch (s) {
	case LLMSIM_SERVER_VLLM: /* [VA] */
		cfg->sched = LLMSIM_SCHED_VLLM;
		cfg->chunked_prefill = 1;
		cfg->max_tokens = big_gpu(g) ? 8192 : 2048;
		cfg->max_batch = big_gpu(g) ? 1024 : 256;
		break;
	case LLMSIM_SERVER_SGLANG: /* [SA] */
		cfg->sched = LLMSIM_SCHED_VLLM;
		cfg->chunked_prefill = 1;
		cfg->max_tokens = g->hbm_bytes < 35e9 ? 2048 : g->hbm_bytes < 160e9 ? 8192 : 16384;
		break;
	case LLMSIM_SERVER_TRTLLM: /* [TA] */
		cfg->sched = LLMSIM_SCHED_NO_EVICT;
		cfg->chunked_prefill = 0;
		cfg->max_tokens = 8192;
		break;
	default:
		break;
	}
}

/* The largest captured size, and the next captured size at or above n
 * below it (0 when n is past the largest). */
static int64_t vllm_next(int64_t n, int64_t max_seqs, int64_t *largest)
{
	int64_t top = 2 * max_seqs < 512 ? 2 * max_seqs : 512; /* [VG] */
	*largest = top;
	if (n > top)
		return 0;
	if (n <= 4)
		return n <= 1 ? 1 : n <= 2 ? 2 : 4;
	if (n < 256)
		return (n + 7) / 8 * 8;
	int64_t k = 256 + (n - 256 + 15) / 16 * 16;
	return k < top ? k : top;
}

static int64_t sglang_next(int64_t n, int64_t max_bs)
{
	static const int64_t small[] = {1, 2, 4, 8, 12}; /* [SA] */
	if (n > max_bs)
		return 0;
	int64_t k;
	if (n <= 12) {
		int i = 0;
		while (small[i] < n)
			i++;
		k = small[i];
	} else if (n <= 256) {
		k = (n + 7) / 8 * 8;
	} else if (n <= 496) {
		k = 256 + (n - 256 + 15) / 16 * 16;
	} else {
		k = 512 + (n - 512 + 31) / 32 * 32;
	}
	return k < max_bs ? k : max_bs;
}

int64_t llmsim_serve_graph_size(const struct llmsim_serve_cfg *cfg, int64_t n, int *graph)
{
	int64_t largest, k;
	*graph = 1;
	switch (cfg->eng.server) {
	case LLMSIM_SERVER_VLLM:
		k = vllm_next(n, cfg->max_batch, &largest);
		break;
	case LLMSIM_SERVER_SGLANG:
		k = sglang_next(n, cfg->infer.tp < 4 && cfg->infer.gpu->hbm_bytes < 160e9 ? 256 : 512);
		break;
	default:
		return n;
	}
	if (!k)
		*graph = 0;
	return k ? k : n;
}
