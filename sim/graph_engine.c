/*
 * graph_engine.c - how an engine runs the ops a model fixes (struct
 * llmsim_lowering, sim/graph.h): a norm, RoPE, the per-head q/k norms, the
 * KV write, a gated MLP's activation, as one kernel (fused) or as the
 * PyTorch ops a program calls (torch, hf).
 *
 * What each PyTorch op launches is read off the measured kernel lists
 * (calib/data/h200-2026-12-01, step_kernels): a slice of a fused GEMM's
 * output ([T, 2I][..., :I], the halves of a head) is a strided view, and
 * TensorIterator runs an op on one (or with a broadcast operand: a
 * [T, 1] scale, a cos/sin table) through its non-vectorized
 * elementwise_kernel (`strided`); contiguous operands take the vectorized
 * kernel; a cast is a copy with another written type (`out_dtype`).
 */
#include <string.h>
#include <strings.h>

#include "base/enum.h"
#include "graph_bld.h"

static const char *const engine_names[LLMSIM_ENGINE_COUNT] = {
	[LLMSIM_ENGINE_FUSED] = "fused",
	[LLMSIM_ENGINE_TORCH] = "torch",
	[LLMSIM_ENGINE_HF] = "hf",
};

const char *llmsim_engine_name(enum llmsim_engine e)
{
	return llmsim_enum_label(engine_names, LLMSIM_ENGINE_COUNT, (int)e);
}

int llmsim_engine_parse(const char *s)
{
	return llmsim_enum_parse_nocase(engine_names, LLMSIM_ENGINE_COUNT, s);
}

const char *llmsim_engine_choices(void)
{
	return "fused, torch or hf";
}

const char *llmsim_load_name(enum llmsim_load l)
{
	return l == LLMSIM_LOAD_BUSY ? "busy" : l == LLMSIM_LOAD_LONE ? "lone" : "?";
}

int gb_pytorch(const struct bld *b)
{
	return b->engine == LLMSIM_ENGINE_TORCH || b->engine == LLMSIM_ENGINE_HF;
}

/* An element-wise node of the forward pass, in type dt, written as out
 * (a cast when it differs), a broadcast second operand when bcast. */
static struct llmsim_gnode *pt(struct bld *b, const char *name, enum llmsim_ew_kind kind,
			       int64_t tokens, int64_t hidden, enum llmsim_dtype dt,
			       enum llmsim_dtype out, int strided, int bcast,
			       enum llmsim_byte_cat cat, unsigned role)
{
	struct llmsim_gnode *x =
		gb_ew1(b, name, LLMSIM_PH_FWD, kind, tokens, hidden, cat, strided, role);
	if (!x)
		return NULL;
	x->op.dtype = dt;
	x->op.u.ew.out_dtype = out != dt ? out : 0;
	x->op.u.ew.bcast = bcast;
	return x;
}

void gb_norm(struct bld *b, const char *name, int64_t T, int64_t H)
{
	if (b->engine != LLMSIM_ENGINE_HF || b->norm != LLMSIM_EW_RMSNORM || b->train) {
		gb_ew(b, name, b->norm, T, H, LLMSIM_BYTES_ACT, 0, 0);
		return;
	}
	/* LlamaRMSNorm: x.to(float32); pow(2); mean(-1, keepdim); + eps;
	 * rsqrt; x * rsqrt (a [T, 1] broadcast: the non-vectorized kernel);
	 * .to(bf16); weight * x (a [H] broadcast, vectorized) */
	enum llmsim_dtype a = b->c->act, f = LLMSIM_DT_FP32;
	pt(b, name, LLMSIM_EW_COPY, T, H, a, f, 0, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_COPY, T, H, f, f, 0, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_REDUCE, T, H, f, f, 0, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_COPY, T, 1, f, f, 0, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_COPY, T, 1, f, f, 0, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_MUL, T, H, f, f, 1, 1, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_COPY, T, H, f, a, 0, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, name, LLMSIM_EW_MUL, T, H, a, a, 0, 1, LLMSIM_BYTES_ACT, 0);
}

/* RoPE as steps_lean.py writes it, over a tensor of `w` per token: x1*cos
 * and x2*sin on the strided halves (the table broadcast), their
 * difference; x2*cos, x1*sin, their sum; the concatenation of the two
 * contiguous halves. */
static void rope_torch(struct bld *b, int64_t w)
{
	enum llmsim_dtype a = b->c->act;
	int64_t T = b->T, h = w / 2;
	for (int i = 0; i < 2; i++) {
		pt(b, "rope", LLMSIM_EW_MUL, T, h, a, a, 1, 1, LLMSIM_BYTES_ACT, 0);
		pt(b, "rope", LLMSIM_EW_MUL, T, h, a, a, 1, 1, LLMSIM_BYTES_ACT, 0);
		pt(b, "rope", LLMSIM_EW_ADD, T, h, a, a, 0, 0, LLMSIM_BYTES_ACT, 0);
	}
	pt(b, "rope", LLMSIM_EW_COPY, T, w, a, a, 0, 0, LLMSIM_BYTES_ACT, 0);
}

/* HF's apply_rotary_pos_emb over a [b, h, s, d] view (a transposed view of
 * the projection): x * cos; rotate_half: -x2 (a strided half), cat(-x2,
 * x1) (x1 strided: the non-vectorized cat); * sin (a broadcast); the sum
 * (operands of two layouts). */
static void rope_hf(struct bld *b, int64_t w)
{
	enum llmsim_dtype a = b->c->act;
	int64_t T = b->T;
	pt(b, "rope", LLMSIM_EW_MUL, T, w, a, a, 1, 1, LLMSIM_BYTES_ACT, 0);
	pt(b, "rope", LLMSIM_EW_COPY, T, w / 2, a, a, 1, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, "rope", LLMSIM_EW_COPY, T, w, a, a, 1, 0, LLMSIM_BYTES_ACT, 0);
	pt(b, "rope", LLMSIM_EW_MUL, T, w, a, a, 1, 1, LLMSIM_BYTES_ACT, 0);
	pt(b, "rope", LLMSIM_EW_ADD, T, w, a, a, 1, 0, LLMSIM_BYTES_ACT, 0);
}

void gb_rope(struct bld *b, int64_t qw, int64_t kw)
{
	if (b->m->position != LLMSIM_POS_ROPE)
		return;
	int64_t w = qw + kw;
	if (!gb_pytorch(b) || qw % 2 || kw % 2) {
		gb_ew(b, "rope", LLMSIM_EW_ROPE, b->T, w, LLMSIM_BYTES_ACT, 0, 0);
		return;
	}
	if (b->train) {
		/* training's PyTorch RoPE (both passes): the seven kernels
		 * over q and k as one tensor, a broadcast multiply priced as
		 * a copy (what it reads and writes) */
		static const struct {
			enum llmsim_ew_kind kind;
			int half, strided;
		} k[7] = {{LLMSIM_EW_COPY, 1, 1}, {LLMSIM_EW_COPY, 1, 1}, {LLMSIM_EW_ADD, 1, 0},
			  {LLMSIM_EW_COPY, 1, 1}, {LLMSIM_EW_COPY, 1, 1}, {LLMSIM_EW_ADD, 1, 0},
			  {LLMSIM_EW_COPY, 0, 0}};
		for (int i = 0; i < 7; i++)
			gb_ew(b, "rope", k[i].kind, b->T, k[i].half ? w / 2 : w, LLMSIM_BYTES_ACT,
			      k[i].strided, 0);
		return;
	}
	if (b->engine == LLMSIM_ENGINE_HF) {
		rope_hf(b, qw);
		rope_hf(b, kw);
	} else if (b->c->lower.rope_joint) {
		rope_torch(b, w);
	} else {
		rope_torch(b, qw);
		rope_torch(b, kw);
	}
}

void gb_qk_norm(struct bld *b, int64_t qw, int64_t kw)
{
	int64_t d = b->m->head_dim;
	if (!b->m->qk_norm || d < 1)
		return;
	for (int i = 0; i < 2; i++) {
		int64_t w = i ? kw : qw;
		const char *name = i ? "k_norm" : "q_norm";
		/* F.rms_norm of a head view of the fused projection: made
		 * contiguous first (a strided copy), then one row per head */
		if (b->engine == LLMSIM_ENGINE_TORCH && !b->train && !b->c->lower.split_qkv)
			pt(b, name, LLMSIM_EW_COPY, b->T, w, b->c->act, b->c->act, 1, 0,
			   LLMSIM_BYTES_ACT, 0);
		gb_norm(b, name, b->T * (w / d), d);
	}
}

/* Rows of the whole cache of the step's sequences, its new tokens in. */
static int64_t cache_rows(const struct llmsim_graph_cfg *c)
{
	int64_t r = c->decode_seqs * (int64_t)(c->decode_kv_len > 1 ? c->decode_kv_len : 1);
	for (int i = 0; i < c->nprefill; i++)
		r += c->prefill[i].count * (c->prefill[i].context + c->prefill[i].tokens);
	return r;
}

void gb_kv_write(struct bld *b, int64_t width, int separate)
{
	if (b->train)
		return;
	if (b->engine == LLMSIM_ENGINE_HF && separate) {
		/* DynamicCache.update: torch.cat of the cache and the step's
		 * K (then V): every sequence's whole cache rewritten (an empty
		 * cache at prefill: the new rows alone), the non-vectorized
		 * cat */
		int64_t rows = cache_rows(b->c);
		for (int i = 0; i < 2; i++)
			gb_ew(b, "kv_write", LLMSIM_EW_COPY, rows, width, LLMSIM_BYTES_KV, 1,
			      LLMSIM_GN_KV_WRITE);
		return;
	}
	if (b->engine == LLMSIM_ENGINE_TORCH && separate) {
		/* cache[:b, :, pos:pos + s] = k.transpose(1, 2), then v: two
		 * copies of strided views into [b, kv_heads, ctx, d] */
		for (int i = 0; i < 2; i++)
			gb_ew(b, "kv_write", LLMSIM_EW_COPY, b->T, width, LLMSIM_BYTES_KV, 1,
			      LLMSIM_GN_KV_WRITE);
		return;
	}
	/* vLLM's reshape_and_cache: K and V (or the latent) in one kernel */
	gb_ew(b, "kv_write", LLMSIM_EW_COPY, b->T, separate ? 2 * width : width, LLMSIM_BYTES_KV,
	      0, LLMSIM_GN_KV_WRITE);
}

void gb_activation(struct bld *b, int64_t T, int64_t w, int64_t batch, int halves,
		   unsigned role)
{
	const struct llmsim_model *m = b->m;
	int64_t rows = T * batch;
	role &= ~LLMSIM_GN_LINEAR;
	if (m->mlp == LLMSIM_MLP_GATED && gb_pytorch(b)) {
		/* F.silu, then the product: on the strided halves of the
		 * fused gate-up output (one row of it is contiguous), or on
		 * two contiguous outputs */
		int strided = halves && rows > 1;
		gb_ew(b, "silu_mul", LLMSIM_EW_SILU, rows, w, LLMSIM_BYTES_ACT, strided, role);
		gb_ew(b, "silu_mul", LLMSIM_EW_MUL, rows, w, LLMSIM_BYTES_ACT, strided, role);
		return;
	}
	/* a gated MLP's activation and product in one kernel (priced as
	 * SwiGLU's whatever the activation); a plain one's activation */
	enum llmsim_ew_kind act = m->mlp == LLMSIM_MLP_GATED     ? LLMSIM_EW_SILU_MUL
				  : m->activation == LLMSIM_ACT_SILU ? LLMSIM_EW_SILU
				  : m->activation == LLMSIM_ACT_RELU ? LLMSIM_EW_RELU
								     : LLMSIM_EW_GELU;
	gb_ew(b, llmsim_ew_kind_name(act), act, rows, w, LLMSIM_BYTES_ACT, 0, role);
}
