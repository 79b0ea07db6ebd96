/*
 * trace_recipe.c - the ops behind each NVTX op range of a decoder step,
 * as op spec templates (sim/sim.h grammar) over the model's dimensions and
 * the step's shape.
 *
 * Variables: T new tokens in the step (B sequences x S each), CTX keys each
 * new token attends to, H hidden, NH/NKV heads/KV heads, HD head_dim, I
 * FFN width, V vocab; derived: Q = NH*HD, KV = NKV*HD, QK = Q+KV,
 * QKH = QK/2, QKV = Q+2*KV, I2 = 2*I; FA/FD the attention implementations
 * seen in the kernel names.
 *
 * `fused` is what a fused implementation launches (one kernel per op, the
 * llmsim view of the op); `eager` is what calib/torch/llama_steps.py's
 * plain-PyTorch code launches for ops PyTorch does not fuse (RoPE as
 * mul/mul/sub/mul/mul/add/cat over the two halves; SiLU then mul). A
 * broadcast multiply by the cos/sin table reads one full tensor and writes
 * one, so it is priced as a copy; SiLU alone as `silu` (one read, one write,
 * a transcendental per element). The LM head and the final norm run on the
 * last position of each sequence only (B rows), as inference does.
 */
#include "trace_analyze.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { ANY, PREFILL, DECODE };

struct recipe {
	const char *name;
	int phase;
	const char *fused;        /* ';'-separated op templates */
	const char *eager;        /* NULL: same as fused */
};

static const struct recipe recipes[] = {
	{"embedding", ANY, "ew kind=embedding tokens={T} hidden={H}", NULL},
	{"attn_norm", ANY, "ew kind=rmsnorm tokens={T} hidden={H}", NULL},
	{"mlp_norm", ANY, "ew kind=rmsnorm tokens={T} hidden={H}", NULL},
	{"final_norm", ANY, "ew kind=rmsnorm tokens={B} hidden={H}", NULL},
	{"qkv_proj", ANY, "gemm m={T} n={QKV} k={H}", NULL},
	{"q_proj", ANY, "gemm m={T} n={Q} k={H}", NULL},
	{"k_proj", ANY, "gemm m={T} n={KV} k={H}", NULL},
	{"v_proj", ANY, "gemm m={T} n={KV} k={H}", NULL},
	{"rope", ANY, "ew kind=rope tokens={T} hidden={QK}",
	 "ew kind=copy tokens={T} hidden={QKH};ew kind=copy tokens={T} hidden={QKH};"
	 "ew kind=add tokens={T} hidden={QKH};ew kind=copy tokens={T} hidden={QKH};"
	 "ew kind=copy tokens={T} hidden={QKH};ew kind=add tokens={T} hidden={QKH};"
	 "ew kind=copy tokens={T} hidden={QK}"},
	{"kv_write", ANY, "ew kind=copy tokens={T} hidden={KV};ew kind=copy tokens={T} hidden={KV}",
	 NULL},
	{"kv_expand", ANY, "ew kind=copy tokens={T} hidden={Q};ew kind=copy tokens={T} hidden={Q}",
	 NULL},
	{"attention", PREFILL,
	 "attention impl={FA} batch={B} heads={NH} kv_heads={NKV} seq={S} kv_seq={CTX} "
	 "head_dim={HD} causal=1", NULL},
	{"attention", DECODE,
	 "decode impl={FD} batch={B} heads={NH} kv_heads={NKV} kv_len={CTX} head_dim={HD} q_len={S}",
	 NULL},
	{"o_proj", ANY, "gemm m={T} n={H} k={Q}", NULL},
	{"residual", ANY, "ew kind=add tokens={T} hidden={H}", NULL},
	{"gate_up_proj", ANY, "gemm m={T} n={I2} k={H}", NULL},
	{"gate_proj", ANY, "gemm m={T} n={I} k={H}", NULL},
	{"up_proj", ANY, "gemm m={T} n={I} k={H}", NULL},
	{"silu_mul", ANY, "ew kind=silu_mul tokens={T} hidden={I}",
	 "ew kind=silu tokens={T} hidden={I};ew kind=mul tokens={T} hidden={I}"},
	{"down_proj", ANY, "gemm m={T} n={H} k={I}", NULL},
	{"lm_head", ANY, "gemm m={B} n={V} k={H}", NULL},
};

int llmsim_trace_recipe_known(const char *name)
{
	for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
		if (!strcasecmp(recipes[i].name, name))
			return 1;
	return 0;
}

static int count_ops(const char *s)
{
	int n = 1;
	for (; *s; s++)
		n += *s == ';';
	return n;
}

/* Look up a variable; 0 and *num or *str, -1 if unknown. */
static int var(const struct llmsim_trace_vars *v, const char *name, size_t len, long long *num,
	       const char **str)
{
	static const char *const names[] = {"T", "B", "S", "CTX", "H", "NH", "NKV", "HD", "I",
					    "V", "Q", "KV", "QK", "QKH", "QKV", "I2", NULL};
	const long long vals[] = {
		v->T, v->B, v->S, v->CTX, v->H, v->NH, v->NKV, v->HD, v->I, v->V,
		v->NH * v->HD, v->NKV * v->HD, (v->NH + v->NKV) * v->HD,
		(v->NH + v->NKV) * v->HD / 2, (v->NH + 2 * v->NKV) * v->HD, 2 * v->I,
	};
	*str = NULL;
	if (len == 2 && !strncmp(name, "FA", 2)) {
		*str = v->attn_impl ? v->attn_impl : "flash2";
		return 0;
	}
	if (len == 2 && !strncmp(name, "FD", 2)) {
		*str = v->dec_impl ? v->dec_impl : "flashdecoding";
		return 0;
	}
	for (int i = 0; names[i]; i++) {
		if (strlen(names[i]) == len && !strncmp(names[i], name, len)) {
			*num = vals[i];
			return 0;
		}
	}
	return -1;
}

/* Expand one template (up to ';' or NUL) into out; -1 on an unknown
 * variable or overflow. */
static int expand(const char *t, size_t tlen, const struct llmsim_trace_vars *v, char *out,
		  size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < tlen;) {
		if (t[i] == '{') {
			const char *end = memchr(t + i, '}', tlen - i);
			if (!end)
				return -1;
			long long num = 0;
			const char *str = NULL;
			if (var(v, t + i + 1, (size_t)(end - t - i - 1), &num, &str))
				return -1;
			int n = str ? snprintf(out + o, size - o, "%s", str)
				    : snprintf(out + o, size - o, "%lld", num);
			if (n < 0 || (size_t)n >= size - o)
				return -1;
			o += (size_t)n;
			i = (size_t)(end - t) + 1;
		} else {
			if (o + 1 >= size)
				return -1;
			out[o++] = t[i++];
		}
	}
	out[o] = 0;
	return 0;
}

static int expand_all(const char *list, const struct llmsim_trace_vars *v,
		      char (*specs)[LLMSIM_TRACE_SPEC_MAX], int max)
{
	int n = 0;
	const char *p = list;
	while (*p) {
		size_t len = strcspn(p, ";");
		if (n == max || expand(p, len, v, specs[n], LLMSIM_TRACE_SPEC_MAX))
			return -1;
		n++;
		p += len;
		if (*p == ';')
			p++;
	}
	return n;
}

int llmsim_trace_recipe(const char *name, const struct llmsim_trace_phase *ph,
			const struct llmsim_trace_vars *v, int nkernels,
			char (*specs)[LLMSIM_TRACE_SPEC_MAX], int max, int *per_kernel)
{
	const struct recipe *r = NULL;
	int want = ph->decode ? DECODE : PREFILL;
	for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++) {
		if (strcasecmp(recipes[i].name, name))
			continue;
		if (recipes[i].phase == ANY || recipes[i].phase == want) {
			r = &recipes[i];
			break;
		}
	}
	if (!r)
		return -1;
	const char *list = r->fused;
	*per_kernel = 0;
	if (r->eager && count_ops(r->eager) == nkernels) {
		list = r->eager;
		*per_kernel = 1;
	} else if (count_ops(r->fused) == nkernels) {
		*per_kernel = 1;
	}
	return expand_all(list, v, specs, max);
}
