/*
 * bounds.h - the largest counts and sizes llmsim accepts, each with the
 * reason it is that large, and the integer helpers that keep arithmetic on
 * them exact: checked products and divisors in O(sqrt n).
 *
 * One place for every bound, so that an option (cli/args.c), a key of a
 * YAML file and a field of a library request all refuse the same value
 * with the same number. A bound is far above anything real (so no honest
 * input meets it) and low enough that the products llmsim forms from
 * bounded values (GPUs x batch x tokens x widths) stay exact in 64 bits
 * and the searches over them stay short. Input files have size limits of
 * their own, listed with the line length here too (README, "Limits").
 */
#ifndef LLMSIM_BOUNDS_H
#define LLMSIM_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

/* GPUs in one job, and every parallel degree (tp, pp, dp, cp, ep, nodes):
 * 2^20, ten times the largest clusters built (100,000 H100s in 2024). */
#define LLMSIM_MAX_GPUS (1 << 20)

/* Tokens of one sequence (prompt, output, context, KV length, sequence
 * length): 2^24, above the longest context window published (10 M tokens,
 * Llama 4 Scout, 2025). */
#define LLMSIM_MAX_TOKENS (1 << 24)

/* Sequences in one batch, micro-batch or training step: 2^24. With
 * LLMSIM_MAX_TOKENS a step holds at most 2^48 tokens, so token counts times
 * a model width (< 2^31) stay below 2^79: exact enough as doubles, and
 * token counts themselves never overflow an int64. */
#define LLMSIM_MAX_BATCH (1 << 24)

/* Requests one serving simulation runs: 10^7, about 100 bytes of state
 * and 15 us of simulation each (bench/bench_serve.c: 65,000 requests/s),
 * so a couple of minutes. */
#define LLMSIM_MAX_REQUESTS 10000000

/* A width of a model (hidden size, a LoRA rank): 2^20, 64 times the
 * widest published (Llama 3.1 405B: 16,384). */
#define LLMSIM_MAX_WIDTH (1 << 20)

/* Rows of a model's vocabulary: 2^24, 64 times the largest published
 * (Gemma 3: 262,144). */
#define LLMSIM_MAX_VOCAB (1 << 24)

/* Parameters of one model: 1e15, 1000 times the largest published, which
 * keeps every count formed from them exact in 64 bits. */
#define LLMSIM_MAX_PARAMS 1e15

/* Layers of a model, and model chunks per pipeline stage: 2^16, 500
 * times the deepest published (Llama 3.1 405B: 126). */
#define LLMSIM_MAX_LAYERS (1 << 16)

/* Draft tokens per speculative step (--gamma), Medusa heads, MTP depth:
 * 32. Position k is accepted with probability alpha^k, so the gain past a
 * few tens is nil; published setups use at most 8 (Medusa: 5 heads,
 * EAGLE-2: 6, DeepSeek-V3: 1 MTP module). */
#define LLMSIM_MAX_DRAFT 32

/* Candidate tokens of a Medusa tree verified per step: 4096; published
 * trees hold tens of candidates (Medusa's default: 64). */
#define LLMSIM_MAX_TREE 4096

/* Routed experts, and so the MoE imbalance (the busiest expert's load over
 * the mean, at most experts / top_k): 2^16; the largest MoE published has
 * 384 (Kimi K2, 2025). */
#define LLMSIM_MAX_EXPERTS (1 << 16)

/* One dimension of a single op (GEMM m, n, k; heads; head and hidden
 * widths; tokens of one kernel): 2^40. A matrix that long in one dimension
 * is 2 TB in bf16, more than a node's memory; op shapes are further
 * checked for 64-bit overflow of their products (sim/spec.c). */
#define LLMSIM_MAX_DIM (1ll << 40)

/* Bytes of one buffer (a collective's message): 2^50 = 1 PiB, the HBM of
 * 7,000 H200s. */
#define LLMSIM_MAX_BYTES (1ll << 50)

/* Rows a command lists (--top): 100,000. */
#define LLMSIM_MAX_ROWS 100000

/* Pixels of a picture side (report --width, --height): 8,000; a picture
 * of 64 M pixels is beyond any screen and still quick for gnuplot. */
#define LLMSIM_MAX_PIXELS 8000

/* Seconds of a latency target (--ttft-slo, --tpot-slo): a day. */
#define LLMSIM_MAX_SLO_S 86400.0

/* Requests per second of an arrival process (--rate): 10^9. */
#define LLMSIM_MAX_RATE 1e9

/* ---- Inputs -------------------------------------------------------------
 * Every text line any reader accepts is at most LLMSIM_MAX_LINE bytes
 * (base/lines.h): a mangled kernel name of a template-heavy library is a
 * few kilobytes. Each kind of input file has a size limit besides. */
#define LLMSIM_MAX_LINE (1 << 20)

/* A YAML file (GPU, model, profile, runs suite): 1 MiB, 80 times the
 * largest shipped (hw/h200-sxm-141gb.yaml, 13 KB). */
#define LLMSIM_MAX_YAML_BYTES (1u << 20)

/* A calibration dump (`calib import`): 4 GiB, 20,000 times the shipped
 * calib/data/h200_kernels.tsv. */
#define LLMSIM_MAX_CALIB_TEXT_BYTES (4ull << 30)

/* A text trace (`trace import`, --db of a text trace), uncompressed: 16
 * GiB; and records (kernels + copies + NVTX ranges) of one trace run in
 * memory, in either form: 2^26, 67 M, about 8 GB of memory. A kernel line
 * is 100-300 bytes. */
#define LLMSIM_MAX_TRACE_TEXT_BYTES (16ull << 30)
#define LLMSIM_MAX_TRACE_RECORDS (1 << 26)

/* A file of request lengths (`serve --lengths`): 256 MiB, 20 M lines. */
#define LLMSIM_MAX_LENGTHS_BYTES (256ull << 20)

/* a * b into *out; 0, or -1 (and *out untouched) when it overflows. */
int llmsim_mul_i64(int64_t a, int64_t b, int64_t *out);

/* The divisors of n (1 <= n <= LLMSIM_MAX_GPUS), ascending, into out[0..max);
 * returns how many (at most max). O(sqrt n). An int up to 2^20 has at most
 * 240 divisors. */
int llmsim_divisors(int n, int *out, int max);

#endif
