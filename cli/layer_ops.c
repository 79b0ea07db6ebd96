/* layer_ops.c - one layer's ops of a workload, from its walker (see layer_ops.h). */
#include "layer_ops.h"

#include <stdio.h>
#include <string.h>

#include "sim/train/train.h"

/* Large: kept off the stack. */
static struct llmsim_graph graph;
static struct llmsim_pred pred[LLMSIM_GRAPH_MAX];

static enum llmsim_gsec layer_sec(const struct llmsim_model *m)
{
	return llmsim_model_moe_layers(m, 0, m->layers) > 0 ? LLMSIM_SEC_MOE : LLMSIM_SEC_DENSE;
}

/* The layer's ops of a walked graph, phase by node phase (training) or
 * the step (serving). */
static void take(const struct llmsim_model *m, int step_phase, struct llmsim_layer_op *ops,
		 int *n)
{
	enum llmsim_gsec sec = layer_sec(m);
	for (int i = 0; i < graph.n && *n < LLMSIM_LAYER_OPS_MAX; i++) {
		const struct llmsim_gnode *x = &graph.node[i];
		if (x->sec != sec || (x->role & LLMSIM_GN_COMM))
			continue;
		struct llmsim_layer_op *o = &ops[(*n)++];
		snprintf(o->name, sizeof o->name, "%s", x->name);
		o->phase = step_phase >= 0 ? step_phase : x->phase == LLMSIM_PH_BWD;
		o->op = x->op;
		o->pred = pred[i];
	}
}

static int serve_ops(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
		     const struct llmsim_layer_cfg *c, struct llmsim_layer_op *ops, int *n,
		     struct llmsim_err *err)
{
	struct llmsim_infer_cfg ic;
	llmsim_infer_cfg_init(&ic, m, gpu);
	ic.tp = c->tp;
	ic.act_dtype = llmsim_graph_act_dtype(c->dtype);
	ic.weight_dtype = c->dtype;
	ic.kv_dtype = c->kv_dtype;
	ic.attn = c->attn;
	struct llmsim_prefill_chunk ch = {.tokens = c->seq, .context = 0, .count = c->batch};
	struct llmsim_step prefill = {.prefill = &ch, .nprefill = 1, .q_len = 1,
				      .logits = c->batch};
	struct llmsim_step decode = {.decode_seqs = c->batch, .q_len = 1,
				     .decode_kv_len = (double)c->seq, .logits = c->batch};
	struct llmsim_step_cost cost;
	double mult[LLMSIM_SEC_COUNT];
	int rc = llmsim_infer_step_ops(&ic, &prefill, &graph, pred, mult, &cost, err);
	if (!rc)
		take(m, 0, ops, n);
	if (!rc)
		rc = llmsim_infer_step_ops(&ic, &decode, &graph, pred, mult, &cost, err);
	if (!rc)
		take(m, 1, ops, n);
	return rc;
}

static int train_ops(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
		     const struct llmsim_layer_cfg *c, struct llmsim_layer_op *ops, int *n,
		     struct llmsim_err *err)
{
	struct llmsim_train_ctx *ctx;
	struct llmsim_train_cfg tc;
	llmsim_train_cfg_init(&tc);
	tc.tp = c->tp;
	tc.gpus = c->tp;
	tc.sequence_parallel = c->tp > 1;
	tc.micro_batch = (int)c->batch;
	tc.seq = c->seq;
	tc.dtype = c->dtype;
	tc.attn = c->train_attn;
	int rc = llmsim_train_ctx_new(m, gpu, &ctx, err);
	if (!rc)
		rc = llmsim_train_step_ops(ctx, &tc, 0, &graph, pred, err);
	llmsim_train_ctx_free(ctx);
	if (!rc)
		take(m, -1, ops, n);
	return rc;
}

int cli_layer_ops(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
		  const struct llmsim_layer_cfg *c, struct llmsim_layer_op *ops, int *n,
		  struct llmsim_err *err)
{
	*n = 0;
	if (c->batch < 1 || c->seq < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "batch and seq must be at least 1");
	if (c->batch > (int64_t)1 << 30 || c->seq > (int64_t)1 << 30 ||
	    c->batch * c->seq > (int64_t)1 << 40)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "batch %lld x seq %lld is too large for one layer",
				      (long long)c->batch, (long long)c->seq);
	int rc = c->workload == LLMSIM_WORKLOAD_TRAIN ? train_ops(m, gpu, c, ops, n, err)
						       : serve_ops(m, gpu, c, ops, n, err);
	if (rc)
		*n = 0;
	return rc;
}
