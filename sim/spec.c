/*
 * spec.c - op specs: one line of text naming an op ("gemm m=1 n=8192
 * k=8192"), parsed into struct llmsim_op and written back canonically with
 * every key, so a spec read and written again is the same op.
 *
 * Keys are the struct field names; each kind has a table of its keys
 * (offset, type, required or default), so parsing, defaults and the
 * checks for unknown and missing keys are the same for every kind.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

enum ktype {
	K_I64, K_INT, K_BOOL, K_DBL, K_DTYPE, K_EW, K_ATTN, K_DEC, K_COLL, K_PASS, K_ALGO,
	K_STREAM, K_OPD
};

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	int required;
};

#define F(f) offsetof(struct llmsim_op, f)

static const struct key gemm_keys[] = {
	{"m", K_I64, F(u.gemm.m), 1}, {"n", K_I64, F(u.gemm.n), 1},
	{"k", K_I64, F(u.gemm.k), 1}, {"batch", K_I64, F(u.gemm.batch), 0},
	{"dtype", K_DTYPE, F(dtype), 0}, {"b_dtype", K_DTYPE, F(u.gemm.b_dtype), 0},
	{"groups", K_I64, F(u.gemm.groups), 0}, {"operand_data", K_OPD, F(operand_data), 0},
};
static const struct key ew_keys[] = {
	{"kind", K_EW, F(u.ew.kind), 1}, {"tokens", K_I64, F(u.ew.tokens), 1},
	{"hidden", K_I64, F(u.ew.hidden), 1}, {"pass", K_PASS, F(u.ew.pass), 0},
	{"dtype", K_DTYPE, F(dtype), 0}, {"strided", K_BOOL, F(u.ew.strided), 0},
	{"serial", K_BOOL, F(u.ew.serial), 0}, {"in_l2", K_BOOL, F(u.ew.in_l2), 0},
	{"bcast", K_BOOL, F(u.ew.bcast), 0}, {"out_dtype", K_DTYPE, F(u.ew.out_dtype), 0},
	{"out", K_DTYPE, F(u.ew.out_dtype), 0}, /* calib/torch's spelling of out_dtype */
	{"k", K_I64, F(u.ew.k), 0},
};
static const struct key attn_keys[] = {
	{"impl", K_ATTN, F(u.attn.impl), 1}, {"batch", K_I64, F(u.attn.batch), 1},
	{"heads", K_I64, F(u.attn.heads), 1}, {"kv_heads", K_I64, F(u.attn.kv_heads), 0},
	{"seq", K_I64, F(u.attn.seq), 1}, {"kv_seq", K_I64, F(u.attn.kv_seq), 0},
	{"head_dim", K_I64, F(u.attn.head_dim), 1},
	{"v_head_dim", K_I64, F(u.attn.v_head_dim), 0},
	{"causal", K_BOOL, F(u.attn.causal), 0}, {"pass", K_PASS, F(u.attn.pass), 0},
	{"dtype", K_DTYPE, F(dtype), 0}, {"operand_data", K_OPD, F(operand_data), 0},
};
static const struct key dec_keys[] = {
	{"impl", K_DEC, F(u.dec.impl), 1}, {"batch", K_I64, F(u.dec.batch), 1},
	{"heads", K_I64, F(u.dec.heads), 1}, {"kv_heads", K_I64, F(u.dec.kv_heads), 0},
	{"kv_len", K_I64, F(u.dec.kv_len), 1}, {"head_dim", K_I64, F(u.dec.head_dim), 1},
	{"q_len", K_I64, F(u.dec.q_len), 0}, {"block_size", K_I64, F(u.dec.block_size), 0},
	{"kv_lora_rank", K_I64, F(u.dec.kv_lora_rank), 0},
	{"rope_dim", K_I64, F(u.dec.rope_dim), 0},
	{"mla_absorbed", K_BOOL, F(u.dec.mla_absorbed), 0},
	{"dtype", K_DTYPE, F(dtype), 0}, {"kv_dtype", K_DTYPE, F(u.dec.kv_dtype), 0},
	{"operand_data", K_OPD, F(operand_data), 0},
};
static const struct key coll_keys[] = {
	{"kind", K_COLL, F(u.coll.kind), 1}, {"bytes", K_DBL, F(u.coll.bytes), 1},
	{"gpus", K_INT, F(u.coll.gpus), 1}, {"nodes", K_INT, F(u.coll.nodes), 0},
	{"algo", K_ALGO, F(u.coll.algo), 0}, {"dtype", K_DTYPE, F(dtype), 0},
};

static const struct key stream_keys[] = {
	{"kind", K_STREAM, F(u.stream.kind), 1}, {"bytes", K_DBL, F(u.stream.bytes), 0},
	{"dtype", K_DTYPE, F(dtype), 0},
};

static const struct {
	const struct key *keys;
	int n;
} kinds[] = {
	[LLMSIM_OP_GEMM] = {gemm_keys, sizeof gemm_keys / sizeof gemm_keys[0]},
	[LLMSIM_OP_ELEMENTWISE] = {ew_keys, sizeof ew_keys / sizeof ew_keys[0]},
	[LLMSIM_OP_ATTENTION] = {attn_keys, sizeof attn_keys / sizeof attn_keys[0]},
	[LLMSIM_OP_DECODE] = {dec_keys, sizeof dec_keys / sizeof dec_keys[0]},
	[LLMSIM_OP_COLLECTIVE] = {coll_keys, sizeof coll_keys / sizeof coll_keys[0]},
	[LLMSIM_OP_STREAM] = {stream_keys, sizeof stream_keys / sizeof stream_keys[0]},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == LLMSIM_OP_COUNT, "spec kinds");

static const char *const algo_names[] = {"auto", "ring", "tree"};

static int parse_enum(enum ktype t, const char *v)
{
	switch (t) {
	case K_DTYPE: return llmsim_dtype_parse(v);
	case K_EW: return llmsim_ew_kind_parse(v);
	case K_ATTN: return llmsim_attn_impl_parse(v);
	case K_DEC: return llmsim_decode_impl_parse(v);
	case K_COLL: return llmsim_coll_kind_parse(v);
	case K_PASS: return llmsim_pass_parse(v);
	case K_STREAM: return llmsim_stream_kind_parse(v);
	case K_OPD: return llmsim_operand_data_parse(v);
	case K_ALGO:
		for (int i = 0; i < 3; i++)
			if (!strcmp(v, algo_names[i]))
				return i;
		return -1;
	default: return -1;
	}
}

static int set(struct llmsim_op *op, const struct key *k, const char *v, const char *kind,
	       struct llmsim_err *err)
{
	char *p = (char *)op + k->off, *end;
	errno = 0;
	switch (k->type) {
	case K_I64: {
		long long x = strtoll(v, &end, 10);
		if (end == v || *end || errno == ERANGE)
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "%s: bad value '%s' for %s (expected an integer)",
					      kind, v, k->name);
		*(int64_t *)p = x;
		return 0;
	}
	case K_INT:
	case K_BOOL: {
		long x = strtol(v, &end, 10);
		if (end == v || *end || errno == ERANGE || x < -2147483647L || x > 2147483647L ||
		    (k->type == K_BOOL && x != 0 && x != 1))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "%s: bad value '%s' for %s (expected %s)", kind, v,
					      k->name, k->type == K_BOOL ? "0 or 1" : "an integer");
		*(int *)p = (int)x;
		return 0;
	}
	case K_DBL: {
		double x = strtod(v, &end);
		if (end == v || *end || errno == ERANGE || !isfinite(x))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "%s: bad value '%s' for %s (expected a number)", kind,
					      v, k->name);
		*(double *)p = x;
		return 0;
	}
	default: {
		int x = parse_enum(k->type, v);
		if (x < 0)
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s: unknown %s '%s'", kind,
					      k->name, v);
		*(int *)p = x;
		return 0;
	}
	}
}

static int key_seen(const struct key *keys, int n, unsigned seen, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(keys[i].name, name))
			return !!(seen & (1u << i));
	return 0;
}

static int kind_parse(const char *s)
{
	if (!strcmp(s, "elementwise"))
		return LLMSIM_OP_ELEMENTWISE;
	for (int i = 0; i < LLMSIM_OP_COUNT; i++)
		if (!strcmp(s, llmsim_op_kind_name(i)))
			return i;
	return -1;
}

int llmsim_op_parse(const char *spec, struct llmsim_op *op, struct llmsim_err *err)
{
	char buf[1024], *save = NULL;
	if (!spec || !op)
		return llmsim_err_set(err, LLMSIM_EINVAL, "op spec: NULL argument");
	if (strlen(spec) >= sizeof buf)
		return llmsim_err_set(err, LLMSIM_EINVAL, "op spec: longer than %zu characters",
				      sizeof buf - 1);
	strcpy(buf, spec);
	char *tok = strtok_r(buf, " \t\r\n", &save);
	if (!tok)
		return llmsim_err_set(err, LLMSIM_EINVAL, "op spec: empty");
	int kind = kind_parse(tok);
	if (kind < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "op spec: unknown op kind '%s' (gemm, ew, attention, "
				      "decode, collective, stream)", tok);
	struct llmsim_op o;
	memset(&o, 0, sizeof o);
	o.kind = kind;
	o.dtype = LLMSIM_DT_BF16;
	const struct key *keys = kinds[kind].keys;
	const char *kname = llmsim_op_kind_name(kind);
	unsigned seen = 0;
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok || !eq[1])
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "%s: expected key=value, got '%s'", kname, tok);
		*eq = 0;
		int i;
		for (i = 0; i < kinds[kind].n; i++)
			if (!strcmp(keys[i].name, tok))
				break;
		if (i == kinds[kind].n)
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s: unknown key '%s'", kname,
					      tok);
		if (seen & (1u << i))
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s: duplicate key '%s'", kname,
					      tok);
		seen |= 1u << i;
		int rc = set(&o, &keys[i], eq + 1, kname, err);
		if (rc)
			return rc;
	}
	for (int i = 0; i < kinds[kind].n; i++)
		if (keys[i].required && !(seen & (1u << i)))
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s: missing %s", kname,
					      keys[i].name);
	/* defaults that depend on other keys */
#define SEEN(name) key_seen(keys, kinds[kind].n, seen, name)
	switch (kind) {
	case LLMSIM_OP_GEMM:
		if (!SEEN("batch"))
			o.u.gemm.batch = 1;
		if (!SEEN("b_dtype"))
			o.u.gemm.b_dtype = o.dtype;
		break;
	case LLMSIM_OP_ATTENTION:
		if (!SEEN("kv_heads"))
			o.u.attn.kv_heads = o.u.attn.heads;
		if (!SEEN("kv_seq"))
			o.u.attn.kv_seq = o.u.attn.seq;
		if (!SEEN("v_head_dim"))
			o.u.attn.v_head_dim = o.u.attn.head_dim;
		if (!SEEN("causal"))
			o.u.attn.causal = 1;
		break;
	case LLMSIM_OP_DECODE:
		if (!SEEN("kv_heads"))
			o.u.dec.kv_heads = o.u.dec.heads;
		if (!SEEN("q_len"))
			o.u.dec.q_len = 1;
		if (!SEEN("block_size"))
			o.u.dec.block_size = 16;
		if (!SEEN("mla_absorbed"))
			o.u.dec.mla_absorbed = 1;
		if (!SEEN("kv_dtype"))
			o.u.dec.kv_dtype = o.dtype;
		break;
	case LLMSIM_OP_COLLECTIVE:
		if (!SEEN("nodes"))
			o.u.coll.nodes = 1;
		break;
	case LLMSIM_OP_STREAM:
		if (!SEEN("dtype"))
			o.dtype = LLMSIM_DT_FP32;
		break;
	case LLMSIM_OP_ELEMENTWISE:
		if (!SEEN("out_dtype") && !SEEN("out"))
			o.u.ew.out_dtype = o.dtype;
		if (!SEEN("k"))
			o.u.ew.k = 1;
		break;
	default:
		break;
	}
#undef SEEN
	*op = o;
	return 0;
}

#define DT(x) llmsim_dtype_name(x) ? llmsim_dtype_name(x) : "?"
#define NM(x) ((x) ? (x) : "?")

static int format_kind(const struct llmsim_op *op, char *buf, size_t size);

/* The canonical spec: every key of the kind, then operand_data when it is
 * not the default (so specs of trained data read as they always have). */
int llmsim_op_format(const struct llmsim_op *op, char *buf, size_t size)
{
	int n = format_kind(op, buf, size);
	if (n < 0 || op->operand_data == LLMSIM_OPD_TRAINED ||
	    (op->kind != LLMSIM_OP_GEMM && op->kind != LLMSIM_OP_ATTENTION &&
	     op->kind != LLMSIM_OP_DECODE))
		return n;
	const char *nm = llmsim_operand_data_name(op->operand_data);
	size_t used = (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
	int m = snprintf(buf + used, size > used ? size - used : 0, " operand_data=%s",
			 nm ? nm : "?");
	return m < 0 ? m : n + m;
}

static int format_kind(const struct llmsim_op *op, char *buf, size_t size)
{
	const char *dt = DT(op->dtype);
	switch (op->kind) {
	case LLMSIM_OP_GEMM: {
		enum llmsim_dtype b = op->u.gemm.b_dtype;
		if (b == LLMSIM_DT_FP64 && op->dtype != LLMSIM_DT_FP64)
			b = op->dtype;
		char grp[32] = "";
		if (op->u.gemm.groups > 1)
			snprintf(grp, sizeof grp, " groups=%lld", (long long)op->u.gemm.groups);
		return snprintf(buf, size, "gemm m=%lld n=%lld k=%lld batch=%lld dtype=%s b_dtype=%s%s",
				(long long)op->u.gemm.m, (long long)op->u.gemm.n,
				(long long)op->u.gemm.k,
				(long long)(op->u.gemm.batch ? op->u.gemm.batch : 1), dt, DT(b), grp);
	}
	case LLMSIM_OP_ELEMENTWISE: {
		/* the layout keys and kind-specific keys only where they matter,
		 * so older specs read as they were written */
		const __typeof__(op->u.ew) *w = &op->u.ew;
		char extra[96] = "";
		size_t n = 0;
		if (w->out_dtype != op->dtype && w->out_dtype != LLMSIM_DT_FP64)
			n += (size_t)snprintf(extra + n, sizeof extra - n, " out_dtype=%s",
					      DT(w->out_dtype));
		if ((w->kind == LLMSIM_EW_TOPK || (w->kind == LLMSIM_EW_QUANTIZE && w->k > 1)) &&
		    n < sizeof extra)
			n += (size_t)snprintf(extra + n, sizeof extra - n, " k=%lld", (long long)w->k);
		if (w->bcast && n < sizeof extra)
			snprintf(extra + n, sizeof extra - n, " bcast=1");
		return snprintf(buf, size, "ew kind=%s tokens=%lld hidden=%lld pass=%s dtype=%s%s%s%s%s",
				NM(llmsim_ew_kind_name(w->kind)), (long long)w->tokens,
				(long long)w->hidden, NM(llmsim_pass_name(w->pass)), dt,
				w->strided ? " strided=1" : "", w->serial ? " serial=1" : "",
				w->in_l2 ? " in_l2=1" : "", extra);
	}
	case LLMSIM_OP_ATTENTION: {
		const __typeof__(op->u.attn) *a = &op->u.attn;
		return snprintf(buf, size,
				"attention impl=%s batch=%lld heads=%lld kv_heads=%lld seq=%lld "
				"kv_seq=%lld head_dim=%lld v_head_dim=%lld causal=%d pass=%s dtype=%s",
				NM(llmsim_attn_impl_name(a->impl)), (long long)a->batch,
				(long long)a->heads, (long long)(a->kv_heads ? a->kv_heads : a->heads),
				(long long)a->seq, (long long)(a->kv_seq ? a->kv_seq : a->seq),
				(long long)a->head_dim,
				(long long)(a->v_head_dim ? a->v_head_dim : a->head_dim), !!a->causal,
				NM(llmsim_pass_name(a->pass)), dt);
	}
	case LLMSIM_OP_DECODE: {
		const __typeof__(op->u.dec) *d = &op->u.dec;
		enum llmsim_dtype kv = d->kv_dtype;
		if (kv == LLMSIM_DT_FP64 && op->dtype != LLMSIM_DT_FP64)
			kv = op->dtype;
		return snprintf(buf, size,
				"decode impl=%s batch=%lld heads=%lld kv_heads=%lld kv_len=%lld "
				"head_dim=%lld q_len=%lld block_size=%lld kv_lora_rank=%lld "
				"rope_dim=%lld mla_absorbed=%d dtype=%s kv_dtype=%s",
				NM(llmsim_decode_impl_name(d->impl)), (long long)d->batch,
				(long long)d->heads, (long long)(d->kv_heads ? d->kv_heads : d->heads),
				(long long)d->kv_len, (long long)d->head_dim,
				(long long)(d->q_len ? d->q_len : 1),
				(long long)(d->block_size ? d->block_size : 16),
				(long long)d->kv_lora_rank, (long long)d->rope_dim, !!d->mla_absorbed,
				dt, DT(kv));
	}
	case LLMSIM_OP_COLLECTIVE: {
		const __typeof__(op->u.coll) *c = &op->u.coll;
		return snprintf(buf, size,
				"collective kind=%s bytes=%.17g gpus=%d nodes=%d algo=%s dtype=%s",
				NM(llmsim_coll_kind_name(c->kind)), c->bytes, c->gpus,
				c->nodes ? c->nodes : 1,
				(unsigned)c->algo < 3 ? algo_names[c->algo] : "?", dt);
	}
	case LLMSIM_OP_STREAM:
		return snprintf(buf, size, "stream kind=%s bytes=%.17g dtype=%s",
				NM(llmsim_stream_kind_name(op->u.stream.kind)), op->u.stream.bytes,
				dt);
	default:
		return snprintf(buf, size, "unknown");
	}
}

int llmsim_op_format_short(const struct llmsim_op *op, char *buf, size_t size)
{
	/* drop each key in turn whose absence parses to the same op */
	char full[1024], cand[1024], want[1024], got[1024];
	struct llmsim_op back;
	if (!size)
		return 0;
	llmsim_op_format(op, want, sizeof want);
	snprintf(full, sizeof full, "%s", want);
	char *p = strchr(full, ' ');
	while (p && *p) {
		char *tok = p + 1, *end = strchr(tok, ' ');
		size_t keep = (size_t)(p - full), tail = end ? strlen(end) : 0;
		snprintf(cand, sizeof cand, "%.*s%s", (int)keep, full, end ? end : "");
		if (!llmsim_op_parse(cand, &back, NULL)) {
			llmsim_op_format(&back, got, sizeof got);
			if (!strcmp(got, want)) {
				memmove(p, p + (strlen(p) - tail), tail + 1);
				continue; /* the next key now starts at p */
			}
		}
		p = end;
	}
	return snprintf(buf, size, "%s", full);
}
