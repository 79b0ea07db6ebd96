/*
 * cases.c - the calibration case list: each case an llmsim op spec (sim/sim.h
 * grammar) for the simulator to price, and the kernel spec that measures it.
 *
 * Shapes: GEMMs at the Llama 3.1 8B projections (qkv 6144x4096, o 4096x4096,
 * gate+up 28672x4096, down 4096x14336, lm head 128256x4096) and the 70B ones
 * as 8-way tensor-parallel shards (qkv 1280x8192, o 8192x1024, gate+up
 * 7168x8192, down 8192x3584, lm head 16032x8192), for M = 1 (decode) to
 * 8192 tokens, plus squares in every data type. Every case is a fit case:
 * llmsim's held-out cases come from other programs (calib/torch/
 * heldout_ops.py and the whole-model steps), at other shapes.
 */
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "runner.h"

#define MAX_CASES 512

const char *const runner_classes[] = {"launch", "hbm", "smem", "elementwise",
				      "gemm", "attention", "decode"};
const int runner_nclasses = (int)(sizeof runner_classes / sizeof runner_classes[0]);

static struct rcase cases[MAX_CASES];
static int ncases;

static struct rcase *add(const char *cls, const struct llmsim_kspec *spec, int quick,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static struct rcase *add(const char *cls, const struct llmsim_kspec *spec, int quick,
			 const char *fmt, ...)
{
	if (ncases >= MAX_CASES)
		return NULL;
	struct rcase *c = &cases[ncases++];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->op_spec, sizeof c->op_spec, fmt, ap);
	va_end(ap);
	c->op_class = cls;
	c->spec = *spec;
	c->split = "fit";
	c->quick = quick;
	return c;
}

static const char *const gemm_dtype_name[LLMSIM_KDT_COUNT] = {
	[LLMSIM_KDT_FP32] = "fp32", [LLMSIM_KDT_TF32] = "tf32", [LLMSIM_KDT_BF16] = "bf16",
	[LLMSIM_KDT_FP16] = "fp16", [LLMSIM_KDT_FP8] = "fp8",
};
_Static_assert(sizeof gemm_dtype_name / sizeof gemm_dtype_name[0] == LLMSIM_KDT_COUNT,
	       "gemm dtype names");

static const char *const ew_kind_name[LLMSIM_KE_COUNT] = {
	[LLMSIM_KE_ADD] = "add", [LLMSIM_KE_MUL] = "mul", [LLMSIM_KE_SILU_MUL] = "silu_mul",
	[LLMSIM_KE_GELU] = "gelu", [LLMSIM_KE_RMSNORM] = "rmsnorm",
	[LLMSIM_KE_LAYERNORM] = "layernorm", [LLMSIM_KE_SOFTMAX] = "softmax",
	[LLMSIM_KE_ROPE] = "rope",
};
_Static_assert(sizeof ew_kind_name / sizeof ew_kind_name[0] == LLMSIM_KE_COUNT, "ew names");

static const char *const decode_impl_name[LLMSIM_KD_COUNT] = {
	[LLMSIM_KD_FLASH2] = "flash2", [LLMSIM_KD_SPLITKV] = "flashdecoding",
	[LLMSIM_KD_PAGED] = "paged",
};
_Static_assert(sizeof decode_impl_name / sizeof decode_impl_name[0] == LLMSIM_KD_COUNT,
	       "decode names");

static void gemm(int64_t m, int64_t n, int64_t k, enum llmsim_kdtype dt, int quick)
{
	struct llmsim_kspec s = {.fam = LLMSIM_KF_GEMM, .dtype = dt, .m = m, .n = n, .k = k};
	add("gemm", &s, quick, "gemm m=%lld n=%lld k=%lld dtype=%s", (long long)m, (long long)n,
	    (long long)k, gemm_dtype_name[dt]);
}

static void build_launch(void)
{
	static const int64_t launches[] = {1, 10, 100};
	for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++) {
		struct llmsim_kspec s = {.fam = LLMSIM_KF_EMPTY, .n = launches[i]};
		add("launch", &s, 1, "launch kind=empty launches=%lld grid=1 block=32",
		    (long long)launches[i]);
	}
}

static void build_hbm(void)
{
	/* bytes per array, L2-resident (4 MB) to far beyond (4 GB) */
	static const double mib[] = {4, 16, 64, 256, 1024, 4096};
	/* scale reads one array and writes one: priced as a copy (mul reads two) */
	static const struct {
		int variant;
		const char *ew;
	} kinds[] = {{LLMSIM_KS_COPY, "copy"}, {LLMSIM_KS_SCALE, "copy"}, {LLMSIM_KS_TRIAD, "add"}};
	for (size_t i = 0; i < sizeof mib / sizeof mib[0]; i++)
		for (size_t j = 0; j < 3; j++) {
			int64_t n = (int64_t)(mib[i] * 1024 * 1024 / 4);
			struct llmsim_kspec s = {.fam = LLMSIM_KF_STREAM, .variant = kinds[j].variant,
						 .n = n};
			add("hbm", &s, mib[i] == 64 || mib[i] == 1024, "ew kind=%s tokens=%lld hidden=4096 dtype=fp32",
			    kinds[j].ew, (long long)(n / 4096));
		}
}

static void build_smem(void)
{
	static const int64_t iters[] = {256, 1024, 4096};
	for (size_t i = 0; i < sizeof iters / sizeof iters[0]; i++) {
		struct llmsim_kspec s = {.fam = LLMSIM_KF_SMEM, .n = iters[i]};
		add("smem", &s, i == 1,
		    "smem kind=read_f4 blocks_per_sm=8 threads=256 tile_bytes=16384 iters=%lld",
		    (long long)iters[i]);
	}
}

/* kernels/ew.cu walks its operands in grid-stride loops of one vector per
 * thread and step: `serial=1` (sim/elementwise.c). It rotates over up to
 * LLMSIM_KE_MAX_SETS copies of its inputs (kernels.h): when all of them
 * take at most 16 MiB, well within half the L2 of any GPU calibrated (40
 * MB on an A100), the inputs stay in L2 between repetitions: `in_l2=1`. */
static void ew(int kind, int64_t t, int64_t h, int quick)
{
	struct llmsim_kspec s = {.fam = LLMSIM_KF_EW, .variant = kind, .m = t, .n = h};
	double in = (double)t * (double)h * 2 * (llmsim_ke_two_inputs(kind) ? 2 : 1);
	double sets = floor(LLMSIM_KE_ROTATE_BYTES / in) + 1;
	int in_l2 = (sets < LLMSIM_KE_MAX_SETS ? sets : LLMSIM_KE_MAX_SETS) * in <= 16.0 * 1048576;
	add("elementwise", &s, quick, "ew kind=%s tokens=%lld hidden=%lld dtype=bf16 serial=1%s",
	    ew_kind_name[kind], (long long)t, (long long)h, in_l2 ? " in_l2=1" : "");
}

static void build_ew(void)
{
	static const int64_t tok[] = {1, 64, 512, 4096, 16384};
	static const int kinds[] = {LLMSIM_KE_ADD, LLMSIM_KE_MUL, LLMSIM_KE_GELU,
				    LLMSIM_KE_RMSNORM, LLMSIM_KE_LAYERNORM, LLMSIM_KE_ROPE};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		for (size_t i = 0; i < sizeof tok / sizeof tok[0]; i++)
			ew(kinds[k], tok[i], 4096, i == 3);
		ew(kinds[k], 8192, 8192, 0);
	}
	static const int64_t silu_tok[] = {1, 64, 512, 4096, 8192};
	for (size_t i = 0; i < sizeof silu_tok / sizeof silu_tok[0]; i++)
		ew(LLMSIM_KE_SILU_MUL, silu_tok[i], 14336, i == 3);
	ew(LLMSIM_KE_SILU_MUL, 8192, 3584, 0);
	/* softmax rows: attention-score rows and vocabulary rows */
	ew(LLMSIM_KE_SOFTMAX, 4096, 4096, 1);
	ew(LLMSIM_KE_SOFTMAX, 32768, 1024, 0);
	ew(LLMSIM_KE_SOFTMAX, 1, 128256, 0);
	ew(LLMSIM_KE_SOFTMAX, 64, 128256, 0);
	ew(LLMSIM_KE_SOFTMAX, 2048, 128256, 0);
}

static void build_gemm(void)
{
	static const int64_t ms[] = {1, 16, 128, 512, 2048, 8192};
	static const int64_t nk[][2] = {
		{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}, {128256, 4096}, /* 8B */
		{1280, 8192}, {8192, 1024}, {7168, 8192}, {8192, 3584}, {16032, 8192},  /* 70B/8 */
	};
	for (size_t j = 0; j < sizeof nk / sizeof nk[0]; j++)
		for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
			gemm(ms[i], nk[j][0], nk[j][1], LLMSIM_KDT_BF16,
			     (ms[i] == 1 || ms[i] == 2048) && j % 3 == 0);
	static const int64_t sq[] = {1024, 2048, 4096, 8192};
	static const enum llmsim_kdtype dts[] = {LLMSIM_KDT_BF16, LLMSIM_KDT_FP16, LLMSIM_KDT_FP8,
						 LLMSIM_KDT_TF32, LLMSIM_KDT_FP32};
	for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
		for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++)
			gemm(sq[i], sq[i], sq[i], dts[d], sq[i] == 4096);
	/* fp8 and fp16 at 8B projections: decode (16: fp8 wants multiples of 16), prefill */
	static const int64_t ms8[] = {16, 2048};
	for (size_t j = 0; j < 2; j++)
		for (size_t i = 0; i < sizeof ms8 / sizeof ms8[0]; i++) {
			gemm(ms8[i], nk[j][0], nk[j][1], LLMSIM_KDT_FP8, 0);
			gemm(ms8[i], nk[j][0], nk[j][1], LLMSIM_KDT_FP16, 0);
		}
}

static void attn(int variant, int64_t b, int64_t h, int64_t hkv, int64_t s, int64_t d,
		 int causal, int quick)
{
	struct llmsim_kspec sp = {.fam = LLMSIM_KF_ATTN, .variant = variant, .batch = b,
				  .heads = h, .kv_heads = hkv, .seq = s, .head_dim = d,
				  .causal = causal};
	add("attention", &sp, quick,
	    "attention impl=%s batch=%lld heads=%lld kv_heads=%lld seq=%lld head_dim=%lld "
	    "causal=%d dtype=bf16",
	    variant == LLMSIM_KA_NAIVE ? "naive" : "flash2", (long long)b, (long long)h,
	    (long long)hkv, (long long)s, (long long)d, causal);
}

static void build_attn(void)
{
	static const int64_t seqs[] = {1024, 2048, 4096, 8192};
	for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++)
		for (int c = 0; c < 2; c++)
			attn(LLMSIM_KA_FLASH2, 1, 32, 8, seqs[i], 128, !c, i == 1 && c == 0);
	attn(LLMSIM_KA_FLASH2, 4, 32, 8, 2048, 128, 1, 0);
	attn(LLMSIM_KA_FLASH2, 8, 32, 8, 1024, 128, 1, 0);
	attn(LLMSIM_KA_FLASH2, 1, 8, 1, 4096, 128, 1, 0);   /* 70B, 8-way TP */
	attn(LLMSIM_KA_FLASH2, 4, 8, 1, 8192, 128, 1, 0);
	attn(LLMSIM_KA_FLASH2, 4, 16, 16, 2048, 64, 1, 1);
	attn(LLMSIM_KA_FLASH2, 4, 16, 16, 2048, 64, 0, 0);
	attn(LLMSIM_KA_FLASH2, 2, 32, 32, 4096, 64, 1, 0);
	attn(LLMSIM_KA_NAIVE, 1, 32, 8, 1024, 128, 0, 1);
	attn(LLMSIM_KA_NAIVE, 1, 32, 8, 1024, 128, 1, 0);
	attn(LLMSIM_KA_NAIVE, 1, 32, 8, 2048, 128, 1, 0);
	attn(LLMSIM_KA_NAIVE, 4, 32, 8, 2048, 128, 1, 0);
	attn(LLMSIM_KA_NAIVE, 1, 32, 8, 4096, 128, 1, 0);
	attn(LLMSIM_KA_NAIVE, 2, 16, 16, 2048, 64, 0, 0);
}

static void dec(int variant, int64_t b, int64_t h, int64_t hkv, int64_t len, int64_t d,
		int quick)
{
	struct llmsim_kspec s = {.fam = LLMSIM_KF_DECODE, .variant = variant, .batch = b,
				 .heads = h, .kv_heads = hkv, .seq = len, .head_dim = d,
				 .block_size = variant == LLMSIM_KD_PAGED ? 16 : 0};
	if (variant == LLMSIM_KD_PAGED)
		add("decode", &s, quick,
		    "decode impl=paged batch=%lld heads=%lld kv_heads=%lld kv_len=%lld "
		    "head_dim=%lld block_size=16 dtype=bf16",
		    (long long)b, (long long)h, (long long)hkv, (long long)len, (long long)d);
	else
		add("decode", &s, quick,
		    "decode impl=%s batch=%lld heads=%lld kv_heads=%lld kv_len=%lld "
		    "head_dim=%lld dtype=bf16",
		    decode_impl_name[variant], (long long)b, (long long)h, (long long)hkv,
		    (long long)len, (long long)d);
}

static void build_decode(void)
{
	dec(LLMSIM_KD_FLASH2, 1, 32, 8, 4096, 128, 0);
	dec(LLMSIM_KD_FLASH2, 8, 32, 8, 4096, 128, 1);
	dec(LLMSIM_KD_FLASH2, 32, 32, 8, 4096, 128, 0);
	dec(LLMSIM_KD_FLASH2, 64, 32, 8, 2048, 128, 0);
	dec(LLMSIM_KD_FLASH2, 16, 64, 8, 8192, 128, 0);
	dec(LLMSIM_KD_FLASH2, 1, 32, 8, 32768, 128, 0);
	dec(LLMSIM_KD_SPLITKV, 1, 32, 8, 4096, 128, 0);
	dec(LLMSIM_KD_SPLITKV, 1, 32, 8, 32768, 128, 1);
	dec(LLMSIM_KD_SPLITKV, 8, 32, 8, 8192, 128, 0);
	dec(LLMSIM_KD_SPLITKV, 32, 32, 8, 4096, 128, 0);
	dec(LLMSIM_KD_SPLITKV, 4, 64, 8, 16384, 128, 0);
	dec(LLMSIM_KD_SPLITKV, 1, 8, 1, 32768, 128, 0);
	dec(LLMSIM_KD_PAGED, 1, 32, 8, 4096, 128, 0);
	dec(LLMSIM_KD_PAGED, 8, 32, 8, 4096, 128, 0);
	dec(LLMSIM_KD_PAGED, 32, 32, 8, 4096, 128, 1);
	dec(LLMSIM_KD_PAGED, 64, 32, 8, 2048, 128, 0);
	dec(LLMSIM_KD_PAGED, 128, 32, 8, 1024, 128, 0);
	dec(LLMSIM_KD_PAGED, 256, 32, 8, 512, 128, 0);
	dec(LLMSIM_KD_PAGED, 16, 64, 8, 8192, 128, 0);
	dec(LLMSIM_KD_PAGED, 1, 32, 8, 32768, 128, 0);
	dec(LLMSIM_KD_PAGED, 4, 8, 1, 16384, 128, 0);
	dec(LLMSIM_KD_PAGED, 32, 32, 32, 2048, 64, 0);
}

int runner_cases(const struct rcase **out)
{
	if (!ncases) {
		static void (*const builders[])(void) = {build_launch, build_hbm, build_smem,
							 build_ew, build_gemm, build_attn,
							 build_decode};
		_Static_assert(sizeof builders / sizeof builders[0] ==
				       sizeof runner_classes / sizeof runner_classes[0],
			       "one builder per class");
		for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
			builders[i]();
	}
	*out = cases;
	return ncases;
}
