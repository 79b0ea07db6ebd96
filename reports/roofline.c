/* roofline.c - ceilings, ridge points, op placement, the layer workload. */
#include "roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static struct llmsim_ceiling *push(struct llmsim_roofline *r, enum llmsim_ceil_kind kind,
				   const char *name)
{
	LLMSIM_ASSERT(r->n < LLMSIM_ROOF_MAX);
	struct llmsim_ceiling *c = &r->ceil[r->n++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	snprintf(c->name, sizeof c->name, "%s", name);
	return c;
}

static void upper(char *dst, size_t size, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < size; i++)
		dst[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
	dst[i] = 0;
}

int llmsim_roofline_init(const struct llmsim_gpu *gpu, struct llmsim_roofline *r,
			 struct llmsim_err *err)
{
	memset(r, 0, sizeof *r);
	if (!(gpu->hbm_bytes_per_s > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL, "GPU '%s' has no HBM bandwidth",
				      gpu->name);
	r->hbm_bytes_per_s = gpu->hbm_bytes_per_s;
	push(r, LLMSIM_CEIL_HBM, "HBM")->bytes_per_s = gpu->hbm_bytes_per_s;
	if (gpu->l2_bytes_per_s > 0)
		push(r, LLMSIM_CEIL_L2, "L2")->bytes_per_s = gpu->l2_bytes_per_s;
	if (gpu->smem_bytes_per_s_per_sm > 0 && gpu->sms > 0)
		push(r, LLMSIM_CEIL_SMEM, "shared memory")->bytes_per_s =
			gpu->smem_bytes_per_s_per_sm * gpu->sms;
	for (int dt = 0; dt < LLMSIM_DT_COUNT; dt++) {
		if (!(gpu->tensor_flops_per_s[dt] > 0))
			continue;
		char nm[40], up[16];
		upper(up, sizeof up, llmsim_dtype_name((enum llmsim_dtype)dt));
		snprintf(nm, sizeof nm, "%s tensor", up);
		struct llmsim_ceiling *c = push(r, LLMSIM_CEIL_TENSOR, nm);
		c->dtype = (enum llmsim_dtype)dt;
		c->flops_per_s = gpu->tensor_flops_per_s[dt];
	}
	if (gpu->vector_flops_per_s[LLMSIM_DT_FP32] > 0) {
		struct llmsim_ceiling *c = push(r, LLMSIM_CEIL_VECTOR, "FP32 CUDA core");
		c->dtype = LLMSIM_DT_FP32;
		c->flops_per_s = gpu->vector_flops_per_s[LLMSIM_DT_FP32];
	}
	for (int i = 0; i < r->n; i++)
		if (r->ceil[i].flops_per_s > 0)
			r->ceil[i].ridge_flops_per_byte = r->ceil[i].flops_per_s / r->hbm_bytes_per_s;
	return 0;
}

const struct llmsim_ceiling *llmsim_roofline_find(const struct llmsim_roofline *r,
						  enum llmsim_ceil_kind kind,
						  enum llmsim_dtype dt)
{
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_ceiling *c = &r->ceil[i];
		if (c->kind == kind && (kind < LLMSIM_CEIL_TENSOR || c->dtype == dt))
			return c;
	}
	return NULL;
}

static const struct llmsim_ceiling *roof_of(const struct llmsim_roofline *r,
					    const struct llmsim_op *op)
{
	const struct llmsim_ceiling *c = NULL;
	switch (op->kind) {
	case LLMSIM_OP_GEMM:
	case LLMSIM_OP_ATTENTION:
	case LLMSIM_OP_DECODE:
		c = llmsim_roofline_find(r, LLMSIM_CEIL_TENSOR, op->dtype);
		break;
	default:
		break;
	}
	/* Element-wise math runs on CUDA cores in FP32, as do matrix ops in
	 * a type without tensor support. */
	if (!c && op->kind != LLMSIM_OP_COLLECTIVE)
		c = llmsim_roofline_find(r, LLMSIM_CEIL_VECTOR, LLMSIM_DT_FP32);
	return c;
}

void llmsim_roofline_point(const struct llmsim_roofline *r, const struct llmsim_op *op,
			   const struct llmsim_pred *pred, struct llmsim_roof_point *pt)
{
	memset(pt, 0, sizeof *pt);
	pt->op = *op;
	pt->pred = *pred;
	pt->roof = roof_of(r, op);
	double mem = pt->pred.intensity_flops_per_byte * r->hbm_bytes_per_s;
	if (!(pt->pred.hbm_bytes > 0))
		mem = INFINITY;
	pt->attainable_flops_per_s = pt->roof ? fmin(pt->roof->flops_per_s, mem) : mem;
	pt->achieved_flops_per_s = pt->pred.time_s > 0 ? pt->pred.flops / pt->pred.time_s : 0;
}

const char *llmsim_phase_name(enum llmsim_workload w, int phase)
{
	if (w == LLMSIM_WORKLOAD_TRAIN)
		return phase ? "backward" : "forward";
	return phase ? "decode" : "prefill";
}

void llmsim_layer_cfg_init(struct llmsim_layer_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->workload = LLMSIM_WORKLOAD_SERVE;
	c->dtype = LLMSIM_DT_BF16;
	c->kv_dtype = LLMSIM_DT_BF16;
	c->batch = 1;
	c->seq = 4096;
	c->attn = LLMSIM_AC_SDPA; /* the default engine's (LLMSIM_ENGINE_DEFAULT: torch) */
	c->train_attn = LLMSIM_ATTN_FLASH2;
	c->tp = 1;
}
