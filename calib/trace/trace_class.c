/*
 * trace_class.c - what a kernel is, from its name: the class its time
 * belongs to, a readable short name, GEMM tile shapes from cuBLAS names,
 * and step ranges ("prefill b=1 s=2048") parsed.
 *
 * Names come mangled from CUPTI; the patterns below are identifiers that
 * survive mangling (nvjet and other extern "C" names are not mangled).
 */
#include "trace_analyze.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/enum.h"

/* From the C++ runtime (libstdc++), declared here to stay in C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static const char *const class_names[LLMSIM_TC_COUNT] = {
	[LLMSIM_TC_GEMM] = "gemm",
	[LLMSIM_TC_ATTENTION] = "attention",
	[LLMSIM_TC_ELEMENTWISE] = "elementwise",
	[LLMSIM_TC_NORMALIZATION] = "normalization",
	[LLMSIM_TC_COMMUNICATION] = "communication",
	[LLMSIM_TC_COPIES] = "copies",
	[LLMSIM_TC_OTHER] = "other",
};
_Static_assert(sizeof class_names / sizeof class_names[0] == LLMSIM_TC_COUNT, "class names");

const char *llmsim_trace_class_name(enum llmsim_trace_class c)
{
	return llmsim_enum_label(class_names, LLMSIM_TC_COUNT, (int)c);
}

/* Substrings (lowercase) naming each class, tried in this order: attention
 * before gemm (flash kernels are built from cutlass), normalization before
 * elementwise (PyTorch's norms are "..._kernel" too). */
static const struct {
	enum llmsim_trace_class cls;
	const char *pat;
} patterns[] = {
	{LLMSIM_TC_COMMUNICATION, "nccl"},
	{LLMSIM_TC_ATTENTION, "flash_fwd"},
	{LLMSIM_TC_ATTENTION, "flash_bwd"},
	{LLMSIM_TC_ATTENTION, "pytorch_flash"},
	{LLMSIM_TC_ATTENTION, "flash_attn"},
	{LLMSIM_TC_ATTENTION, "flashattn"},
	{LLMSIM_TC_ATTENTION, "fmha"},
	{LLMSIM_TC_ATTENTION, "sdpa"},
	{LLMSIM_TC_ATTENTION, "attention"},
	{LLMSIM_TC_ATTENTION, "_attn_"},
	{LLMSIM_TC_ATTENTION, "mha_"},
	{LLMSIM_TC_ATTENTION, "flashdecoding"},
	{LLMSIM_TC_GEMM, "nvjet"},
	{LLMSIM_TC_GEMM, "xmma"},
	{LLMSIM_TC_GEMM, "gemm"},
	{LLMSIM_TC_GEMM, "gemv"},
	{LLMSIM_TC_GEMM, "cutlass"},
	{LLMSIM_TC_GEMM, "splitkreduce"},
	{LLMSIM_TC_GEMM, "matmul"},
	{LLMSIM_TC_GEMM, "s16816"},
	{LLMSIM_TC_GEMM, "s1688"},
	{LLMSIM_TC_NORMALIZATION, "rms_norm"},
	{LLMSIM_TC_NORMALIZATION, "rmsnorm"},
	{LLMSIM_TC_NORMALIZATION, "layer_norm"},
	{LLMSIM_TC_NORMALIZATION, "layernorm"},
	{LLMSIM_TC_NORMALIZATION, "group_norm"},
	{LLMSIM_TC_NORMALIZATION, "batch_norm"},
	{LLMSIM_TC_NORMALIZATION, "softmax"},
	{LLMSIM_TC_ELEMENTWISE, "elementwise"},
	{LLMSIM_TC_ELEMENTWISE, "catarraybatchedcopy"},
	{LLMSIM_TC_ELEMENTWISE, "indexselect"},
	{LLMSIM_TC_ELEMENTWISE, "index_select"},
	{LLMSIM_TC_ELEMENTWISE, "embedding"},
	{LLMSIM_TC_ELEMENTWISE, "reduce_kernel"},
	{LLMSIM_TC_ELEMENTWISE, "copy"},
	{LLMSIM_TC_ELEMENTWISE, "fill"},
	{LLMSIM_TC_ELEMENTWISE, "rotary"},
	{LLMSIM_TC_ELEMENTWISE, "rope"},
	{LLMSIM_TC_ELEMENTWISE, "silu"},
	{LLMSIM_TC_ELEMENTWISE, "gelu"},
	{LLMSIM_TC_ELEMENTWISE, "act_and_mul"},
	{LLMSIM_TC_ELEMENTWISE, "triton_poi"},
	{LLMSIM_TC_ELEMENTWISE, "distribution"},
	{LLMSIM_TC_ELEMENTWISE, "randint"},
};

/* A kernel name in lower case, for the (lowercase) patterns: in buf when
 * it fits, else malloc'd (*heap set: free it); NULL when out of memory.
 * One pass over the name, then strstr per pattern: linear in the name's
 * length for any name (a trace's names can be up to a line long). */
static char *lower(const char *s, char *buf, size_t size, char **heap)
{
	size_t n = strlen(s);
	char *d = buf;
	*heap = NULL;
	if (n >= size) {
		d = *heap = malloc(n + 1);
		if (!d)
			return NULL;
	}
	for (size_t i = 0; i <= n; i++)
		d[i] = (char)tolower((unsigned char)s[i]);
	return d;
}

enum llmsim_trace_class llmsim_trace_classify(const char *name)
{
	char buf[1024], *heap = NULL, *l = name ? lower(name, buf, sizeof buf, &heap) : NULL;
	enum llmsim_trace_class c = LLMSIM_TC_OTHER;
	for (size_t i = 0; l && i < sizeof patterns / sizeof patterns[0]; i++)
		if (strstr(l, patterns[i].pat)) {
			c = patterns[i].cls;
			break;
		}
	free(heap);
	return c;
}

int llmsim_trace_nonvectorized(const char *name)
{
	char buf[1024], *heap = NULL, *l = name ? lower(name, buf, sizeof buf, &heap) : NULL;
	int r = l && strstr(l, "elementwise_kernel") && !strstr(l, "vectorized_elementwise");
	free(heap);
	return r;
}

enum llmsim_trace_class llmsim_trace_op_class(const struct llmsim_op *op)
{
	switch (op->kind) {
	case LLMSIM_OP_GEMM:
		return LLMSIM_TC_GEMM;
	case LLMSIM_OP_ATTENTION:
	case LLMSIM_OP_DECODE:
		return LLMSIM_TC_ATTENTION;
	case LLMSIM_OP_COLLECTIVE:
		return LLMSIM_TC_COMMUNICATION;
	case LLMSIM_OP_ELEMENTWISE:
		switch (op->u.ew.kind) {
		case LLMSIM_EW_RMSNORM:
		case LLMSIM_EW_LAYERNORM:
		case LLMSIM_EW_SOFTMAX:
			return LLMSIM_TC_NORMALIZATION;
		default:
			return LLMSIM_TC_ELEMENTWISE;
		}
	default:
		return LLMSIM_TC_OTHER;
	}
}

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);
	return n >= m && !strncmp(s + n - m, suf, m);
}

/* In the template arguments text, the identifier that says what the kernel
 * computes: a functor ("CUDAFunctor_add"), or the function a lambda came
 * from ("direct_copy_kernel_cuda", "silu_kernel"). */
static void hint_of(const char *args, const char *base, size_t blen, char *out, size_t size)
{
	out[0] = 0;
	for (const char *p = args; *p;) {
		if (!(isalpha((unsigned char)*p) || *p == '_')) {
			p++;
			continue;
		}
		const char *q = p;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		size_t n = (size_t)(q - p);
		int good = (strstr(p, "Functor") && strstr(p, "Functor") < q) ||
			   ends_with(p, n, "_cuda") || ends_with(p, n, "_kernel");
		if (good && !(n == blen && !strncmp(p, base, n))) {
			snprintf(out, size, "%.*s", (int)n, p);
			return;
		}
		p = q;
	}
}

char *llmsim_trace_short_name(const char *name, char *buf, size_t size)
{
	if (!size)
		return buf;
	int st = -1;
	char *dm = name && name[0] == '_' && name[1] == 'Z' ? __cxa_demangle(name, NULL, NULL, &st)
							      : NULL;
	const char *s = st == 0 && dm ? dm : (name ? name : "");
	if (dm && st == 0) {
		/* "(anonymous namespace)::" would end the name at its '(' */
		static const char anon[] = "(anonymous namespace)::";
		char *a;
		while ((a = strstr(dm, anon)))
			memmove(a, a + sizeof anon - 1, strlen(a + sizeof anon - 1) + 1);
	}
	if (!strncmp(s, "void ", 5))
		s += 5;
	/* base name: up to the first '<' or '(' at depth 0, without namespaces */
	size_t blen = strcspn(s, "<(");
	const char *base = s;
	for (size_t i = 0; i + 1 < blen; i++)
		if (s[i] == ':' && s[i + 1] == ':')
			base = s + i + 2;
	blen -= (size_t)(base - s);
	char hint[96] = "";
	if (s[(size_t)(base - s) + blen] == '<')
		hint_of(base + blen, base, blen, hint, sizeof hint);
	if (hint[0])
		snprintf(buf, size, "%.*s<%s>", (int)blen, base, hint);
	else
		snprintf(buf, size, "%.*s", (int)blen, base);
	free(dm);
	return buf;
}

int llmsim_trace_gemm_tile(const char *name, int *tm, int *tn, int *tk)
{
	if (!name)
		return -1;
	for (const char *p = name; *p; p++) {
		if (!isdigit((unsigned char)*p) || (p > name && isdigit((unsigned char)p[-1])))
			continue;
		int a, b, c, d, n = 0;
		if (sscanf(p, "%dx%d_%dx%d%n", &a, &b, &c, &d, &n) == 4 && n > 0 && a >= 8 &&
		    b >= 8 && c >= 8) {
			*tm = a;
			*tn = b;
			*tk = c;
			return 0;
		}
	}
	return -1;
}

static int kv_num(const char *tok, const char *const *keys, int64_t *out)
{
	for (int i = 0; keys[i]; i++) {
		size_t n = strlen(keys[i]);
		if (!strncasecmp(tok, keys[i], n) && tok[n] == '=') {
			char *end;
			long long v = strtoll(tok + n + 1, &end, 10);
			/* bounded, so batch x tokens and context + tokens fit */
			if (end == tok + n + 1 || v < 0 || v > INT32_MAX)
				return -1;
			*out = v;
			return 1;
		}
	}
	return 0;
}

int llmsim_trace_phase_parse(const char *name, struct llmsim_trace_phase *p)
{
	static const char *const kb[] = {"b", "batch", "bs", NULL};
	static const char *const ks[] = {"s", "seq", "prompt", "q", "q_len", NULL};
	static const char *const kc[] = {"ctx", "context", "kv", "kv_len", NULL};
	memset(p, 0, sizeof *p);
	if (!strncasecmp(name, "prefill", 7))
		p->decode = 0;
	else if (!strncasecmp(name, "decode", 6))
		p->decode = 1;
	else
		return -1;
	int64_t b = -1, s = -1, c = -1;
	char tok[64];
	const char *q = name;
	while (*q) {
		while (*q == ' ' || *q == ',')
			q++;
		size_t n = strcspn(q, " ,");
		if (!n)
			break;
		snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), q);
		q += n;
		if (kv_num(tok, kb, &b) < 0 || kv_num(tok, ks, &s) < 0 || kv_num(tok, kc, &c) < 0)
			return -1;
	}
	if (b < 1)
		return -1;
	p->batch = b;
	if (!p->decode) {
		if (s < 1)
			return -1;
		p->new_tokens = s;
		p->context = (c > 0 ? c : 0) + s;
	} else {
		if (c < 1)
			return -1;
		p->new_tokens = s > 0 ? s : 1;
		p->context = c + p->new_tokens;
	}
	return 0;
}
