/*
 * price.c - the evaluation context and its op-price cache: every op of a
 * training step is priced by llmsim_predict exactly once per distinct
 * shape, however many configurations of a search share it.
 */
#include <stdlib.h>
#include <string.h>

#include "train_int.h"

int llmsim_train_ctx_new(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
			 struct llmsim_train_ctx **out, struct llmsim_err *err)
{
	*out = NULL;
	if (m->layers < 1 || m->hidden < 1 || m->heads < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "model '%s' has no layers", m->name);
	struct llmsim_train_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	c->model = *m;
	c->gpu = *gpu;
	train_geom_init(&c->model, &c->geom);
	c->nslots = 4096;
	c->slots = calloc(c->nslots, sizeof *c->slots);
	if (!c->slots) {
		free(c);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	*out = c;
	return 0;
}

void llmsim_train_ctx_free(struct llmsim_train_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->slots);
	free(ctx);
}

static uint64_t hash_op(const struct llmsim_op *op)
{
	/* ops are zeroed before they are filled: hash whole words */
	const unsigned char *p = (const unsigned char *)op;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i = 0;
	for (; i + 8 <= sizeof *op; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < sizeof *op; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int grow(struct llmsim_train_ctx *ctx)
{
	size_t n = ctx->nslots * 2;
	struct price_slot *s = calloc(n, sizeof *s);
	if (!s)
		return LLMSIM_ENOMEM;
	for (size_t i = 0; i < ctx->nslots; i++) {
		if (!ctx->slots[i].used)
			continue;
		size_t j = hash_op(&ctx->slots[i].op) & (n - 1);
		while (s[j].used)
			j = (j + 1) & (n - 1);
		s[j] = ctx->slots[i];
	}
	free(ctx->slots);
	ctx->slots = s;
	ctx->nslots = n;
	return 0;
}

int train_price(struct llmsim_train_ctx *ctx, const struct llmsim_op *in, struct price *out,
		struct llmsim_err *err)
{
	/* A training step keeps the GPU busy for seconds: every op runs at
	 * the one clock the power limit allows the step's load (sim/predict.c,
	 * llmsim_train_simulate); the load is part of the cache key. */
	struct llmsim_op loaded = *in;
	loaded.load_duty = ctx->load_rho > 0 ? 1 : 0;
	loaded.load_rho = ctx->load_rho;
	loaded.operand_data = ctx->operand_data;
	const struct llmsim_op *op = &loaded;
	size_t j = hash_op(op) & (ctx->nslots - 1);
	while (ctx->slots[j].used) {
		if (!memcmp(&ctx->slots[j].op, op, sizeof *op)) {
			ctx->hits++;
			out->time_s = ctx->slots[j].time_s;
			out->flops = ctx->slots[j].flops;
			out->link_bytes = ctx->slots[j].link_bytes;
			out->kernels = ctx->slots[j].kernels;
			return 0;
		}
		j = (j + 1) & (ctx->nslots - 1);
	}
	struct llmsim_pred pr;
	int rc = llmsim_predict(&ctx->gpu, op, &pr, err);
	if (rc)
		return rc;
	ctx->predicts++;
	if (2 * (ctx->nused + 1) > ctx->nslots) {
		if (grow(ctx))
			return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		j = hash_op(op) & (ctx->nslots - 1);
		while (ctx->slots[j].used)
			j = (j + 1) & (ctx->nslots - 1);
	}
	ctx->slots[j].used = 1;
	ctx->slots[j].op = *op;
	ctx->slots[j].time_s = pr.time_s;
	ctx->slots[j].flops = pr.flops;
	ctx->slots[j].link_bytes = pr.link_bytes;
	ctx->slots[j].kernels = pr.kernels > 0 ? pr.kernels : 1;
	ctx->nused++;
	out->time_s = pr.time_s;
	out->flops = pr.flops;
	out->link_bytes = pr.link_bytes;
	out->kernels = ctx->slots[j].kernels;
	return 0;
}
