/*
 * test_precision.c - issue 21's precision recipes and communication
 * overlaps (sim/precision.h, sim/graph.c, sim/train/walk.c, step.c): the
 * bytes of the quantized formats, which GPUs have their tensor cores, the
 * quantize and amax kernels the graph adds per recipe, what the backward
 * saves, the userbuffers overlap, the MoE dispatchers and the overlap of
 * MoE, node-limited routing. Every expected value is derived by hand in
 * the comment beside it.
 */
#include <stdlib.h>
#include <string.h>

#include "models/model_load.h"
#include "sim/precision.h"
#include "sim/train/train_int.h"
#include "support.h"

static void init(void)
{
	setenv("LLMSIM_NO_PROFILE", "1", 1);
}

TestSuite(precision, .init = init);

static struct llmsim_gpu gpu(const char *name)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load(name, &g, &err), 0, "%s", err.msg);
	return g;
}

static struct llmsim_model model(const char *name)
{
	struct llmsim_model m;
	cr_assert_eq(llmsim_model_load(name, &m, NULL), 0);
	return m;
}

Test(precision, names_and_bytes)
{
	for (int i = 0; i < LLMSIM_PREC_COUNT; i++)
		cr_expect_eq(llmsim_precision_parse(llmsim_precision_name(i)), i);
	cr_expect_eq(llmsim_precision_parse("fp8"), -1);
	cr_expect_eq(llmsim_precision_of_dtype(LLMSIM_DT_FP8), LLMSIM_PREC_FP8_DELAYED);
	cr_expect_eq(llmsim_precision_of_dtype(LLMSIM_DT_MXFP8), LLMSIM_PREC_MXFP8);
	cr_expect_eq(llmsim_precision_of_dtype(LLMSIM_DT_INT8), -1);
	/* OCP MX: an E8M0 byte per 32 elements: 1 + 1/32; NVFP4: half a
	 * byte and an E4M3 byte per 16: 0.5 + 1/16 */
	expect_close(llmsim_dtype_bytes(LLMSIM_DT_MXFP8), 1.03125, 0);
	expect_close(llmsim_dtype_bytes(LLMSIM_DT_NVFP4), 0.5625, 0);
	/* saved GEMM input: bf16 2 B, fp8 1 B, the block formats their bytes */
	expect_close(llmsim_precision_saved_bytes(LLMSIM_PREC_BF16), 2, 0);
	expect_close(llmsim_precision_saved_bytes(LLMSIM_PREC_FP8_CURRENT), 1, 0);
	expect_close(llmsim_precision_saved_bytes(LLMSIM_PREC_NVFP4), 0.5625, 0);
	/* weight copies: per-tensor FP8 on a TN-only GPU (Hopper) keeps the
	 * weight and its transpose (2 x 1 B), on Blackwell one copy (1 B);
	 * MXFP8 always two differently scaled copies: 2 x 1.03125 */
	expect_close(llmsim_precision_weight_bytes(LLMSIM_PREC_FP8_DELAYED, 1), 2, 0);
	expect_close(llmsim_precision_weight_bytes(LLMSIM_PREC_FP8_DELAYED, 0), 1, 0);
	expect_close(llmsim_precision_weight_bytes(LLMSIM_PREC_MXFP8, 0), 2.0625, 0);
	expect_close(llmsim_precision_weight_bytes(LLMSIM_PREC_BF16, 1), 0, 0);
}

Test(precision, tensor_cores_of_the_gpu)
{
	struct llmsim_gpu h100 = gpu("h100"), b200 = gpu("b200"), gb200 = gpu("gb200");
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_precision_check(&h100, LLMSIM_PREC_FP8_CURRENT, &err), 0);
	cr_expect_eq(llmsim_precision_check(&b200, LLMSIM_PREC_MXFP8, &err), 0);
	cr_expect_eq(llmsim_precision_check(&gb200, LLMSIM_PREC_NVFP4, &err), 0);
	cr_expect_eq(llmsim_precision_check(&h100, LLMSIM_PREC_MXFP8, &err), LLMSIM_EUNSUPPORTED);
	/* one line naming the GPU and the formats it has */
	cr_expect(strstr(err.msg, "h100") && strstr(err.msg, "no mxfp8") &&
			  strstr(err.msg, "bf16, fp16, fp8, int8") && !strchr(err.msg, '\n'),
		  "%s", err.msg);
	cr_expect(llmsim_precision_tn_only(&h100));
	cr_expect(!llmsim_precision_tn_only(&b200));
	/* MXFP8 issues at the FP8 rate, NVFP4 at the FP4 rate: [HGX] 9 and
	 * 18 PFLOP/s sparse, halved */
	expect_close(b200.tensor_flops_per_s[LLMSIM_DT_MXFP8], 4.5e15, 0);
	expect_close(b200.tensor_flops_per_s[LLMSIM_DT_NVFP4], 9.0e15, 0);
}

Test(precision, quantize_kernel_bytes)
{
	struct llmsim_gpu g = gpu("b200");
	struct llmsim_op op;
	memset(&op, 0, sizeof op);
	op.kind = LLMSIM_OP_ELEMENTWISE;
	op.dtype = LLMSIM_DT_BF16;
	op.u.ew.kind = LLMSIM_EW_QUANTIZE;
	op.u.ew.tokens = 4096;
	op.u.ew.hidden = 8192;
	op.u.ew.out_dtype = LLMSIM_DT_MXFP8;
	op.u.ew.k = 2;
	struct llmsim_pred p = predict_ok(&g, op);
	/* in: 4096 x 8192 x 2 B = 67,108,864; out: two copies of 33,554,432
	 * elements at 1.03125 B = 69,206,016 */
	expect_close(p.hbm_read_bytes, 67108864.0, 1e-9);
	expect_close(p.hbm_write_bytes, 69206016.0, 1e-9);
}

static int count_role(const struct llmsim_graph *g, enum llmsim_gsec sec, unsigned role)
{
	int k = 0;
	for (int i = 0; i < g->n; i++)
		k += g->node[i].sec == sec && (g->node[i].role & role) == role;
	return k;
}

static const struct llmsim_gnode *find(const struct llmsim_graph *g, enum llmsim_gphase ph,
				       const char *name)
{
	for (int i = 0; i < g->n; i++)
		if (g->node[i].phase == ph && !strcmp(g->node[i].name, name))
			return &g->node[i];
	return NULL;
}

static void train_cfg(struct llmsim_graph_cfg *c, enum llmsim_precision_recipe p, int copies)
{
	llmsim_graph_cfg_init(c);
	c->work = LLMSIM_WORK_TRAIN;
	c->seq = 2048;
	c->precision = p;
	c->math = c->weights = llmsim_precision_desc(p)->gemm;
	c->quant_copies = copies;
	c->sections = 1u << LLMSIM_SEC_DENSE;
}

Test(precision, quantize_nodes_per_recipe)
{
	struct llmsim_model m = model("8b");
	struct llmsim_graph g;
	struct llmsim_graph_cfg c;
	/* bf16: none */
	train_cfg(&c, LLMSIM_PREC_BF16, 0);
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	cr_expect_eq(count_role(&g, LLMSIM_SEC_DENSE, LLMSIM_GN_QUANT), 0);
	/* delayed scaling: QKV and gate-up read a norm's output (quantized in
	 * the norm, then transposed for the weight gradient on a TN-only
	 * GPU): the transpose, their weight and output gradient, 3 each; O and
	 * down their input, weight and output gradient: 3 each. 4 x 3 = 12, of
	 * which the 4 weights' once a step */
	train_cfg(&c, LLMSIM_PREC_FP8_DELAYED, 2);
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	cr_expect_eq(count_role(&g, LLMSIM_SEC_DENSE, LLMSIM_GN_QUANT), 12);
	const struct llmsim_gnode *t = find(&g, LLMSIM_PH_FWD, "qkv_proj.transpose");
	cr_assert_not_null(t);
	cr_expect_eq(t->op.dtype, LLMSIM_DT_FP8);
	/* one copy (Blackwell): no transpose, 10 */
	train_cfg(&c, LLMSIM_PREC_FP8_DELAYED, 1);
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	cr_expect_eq(count_role(&g, LLMSIM_SEC_DENSE, LLMSIM_GN_QUANT), 10);
	train_cfg(&c, LLMSIM_PREC_FP8_DELAYED, 2);
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	cr_expect_eq(count_role(&g, LLMSIM_SEC_DENSE, LLMSIM_GN_QUANT | LLMSIM_GN_PER_STEP), 4);
	cr_expect_null(find(&g, LLMSIM_PH_FWD, "qkv_proj.quantize"));
	const struct llmsim_gnode *q = find(&g, LLMSIM_PH_FWD, "o_proj.quantize");
	cr_assert_not_null(q);
	/* O's input: 2048 tokens x 32 heads x 128, two copies (Hopper) */
	cr_expect_eq(q->op.u.ew.tokens, 2048);
	cr_expect_eq(q->op.u.ew.hidden, 4096);
	cr_expect_eq(q->op.u.ew.k, 2);
	cr_expect_eq(q->op.u.ew.out_dtype, LLMSIM_DT_FP8);
	/* current scaling: nothing fused, every quantize with an amax pass:
	 * 4 linears x 3 tensors x 2 kernels = 24, 8 of them once a step */
	train_cfg(&c, LLMSIM_PREC_FP8_CURRENT, 1);
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	cr_expect_eq(count_role(&g, LLMSIM_SEC_DENSE, LLMSIM_GN_QUANT), 24);
	cr_expect_eq(count_role(&g, LLMSIM_SEC_DENSE, LLMSIM_GN_QUANT | LLMSIM_GN_PER_STEP), 8);
	q = find(&g, LLMSIM_PH_BWD, "down_proj.gquantize");
	cr_assert_not_null(q);
	/* the output gradient of down: 2048 x hidden 4096, one copy */
	cr_expect_eq(q->op.u.ew.hidden, 4096);
	cr_expect_eq(q->op.u.ew.k, 1);
	/* the GEMMs in the recipe's format, the LM head stays bf16 */
	const struct llmsim_gnode *x = find(&g, LLMSIM_PH_BWD, "gate_up_proj.wgrad");
	cr_assert_not_null(x);
	cr_expect_eq(x->op.dtype, LLMSIM_DT_FP8);
}

Test(precision, fp8_sequence_parallel_allgather)
{
	struct llmsim_model m = model("8b");
	struct llmsim_graph g;
	struct llmsim_graph_cfg c;
	/* tp 8 with SP: a column point's forward all-gather of 2048 x 4096
	 * activations: 16,777,216 B in bf16, half that quantized before the
	 * gather in FP8; the backward reduce-scatter stays bf16 */
	for (int p = 0; p < 2; p++) {
		train_cfg(&c, p ? LLMSIM_PREC_FP8_DELAYED : LLMSIM_PREC_BF16, p ? 2 : 0);
		c.tp = 8, c.sp = 1;
		cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
		const struct llmsim_gnode *ag = find(&g, LLMSIM_PH_FWD, "tp_allgather");
		const struct llmsim_gnode *rs = find(&g, LLMSIM_PH_BWD, "tp_reducescatter");
		cr_assert(ag && rs);
		expect_close(ag->op.u.coll.bytes, p ? 8388608.0 : 16777216.0, 0);
		expect_close(rs->op.u.coll.bytes, 16777216.0, 0);
	}
}

Test(precision, userbuffers_pairs_each_collective_with_its_gemm)
{
	struct llmsim_model m = model("8b");
	struct llmsim_graph g;
	struct llmsim_graph_cfg c;
	train_cfg(&c, LLMSIM_PREC_BF16, 0);
	c.tp = 8, c.sp = 1;
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	int ag = -1, rs = -1, bag = -1;
	for (int i = 0; i < g.n; i++) {
		const struct llmsim_gnode *n = &g.node[i];
		if (!(n->role & LLMSIM_GN_TP))
			continue;
		if (n->phase == LLMSIM_PH_FWD && n->op.u.coll.kind == LLMSIM_COLL_ALLGATHER && ag < 0)
			ag = n->ub;
		if (n->phase == LLMSIM_PH_FWD && n->op.u.coll.kind == LLMSIM_COLL_REDUCESCATTER &&
		    rs < 0)
			rs = n->ub;
		if (n->phase == LLMSIM_PH_BWD && n->op.u.coll.kind == LLMSIM_COLL_ALLGATHER &&
		    n->tp == LLMSIM_TP_ROW && bag < 0)
			bag = n->ub;
	}
	/* TE's qkv_fprop, proj_fprop and proj_dgrad overlaps */
	cr_assert(ag >= 0 && rs >= 0 && bag >= 0);
	cr_expect_str_eq(g.node[ag].name, "qkv_proj");
	cr_expect_str_eq(g.node[rs].name, "o_proj");
	cr_expect_eq(g.node[rs].phase, LLMSIM_PH_FWD);
	cr_expect_str_eq(g.node[bag].name, "o_proj.dgrad");
}

Test(precision, userbuffers_exposure)
{
	/* ring exchange, 4 steps: 3 transfers of t/3 beside GEMM chunks of
	 * gemm/4. t 3, gemm 4: transfers of 1 beside chunks of 1: hidden.
	 * t 6: transfers of 2 beside 1: 3 x (2 - 1) = 3 exposed */
	expect_close(train_ub_exposed_s(3, 4, 4, 1), 0, 1e-12);
	expect_close(train_ub_exposed_s(6, 4, 4, 1), 3, 1e-12);
	/* pipelined, 4 chunks: g/4 + 3 max(g/4, t/4) + t/4 - g. t 4, g 4:
	 * 1 + 3 + 1 - 4 = 1 (the last chunk's reduce-scatter); t 8: 1 + 6 +
	 * 2 - 4 = 5 */
	expect_close(train_ub_exposed_s(4, 4, 4, 0), 1, 1e-12);
	expect_close(train_ub_exposed_s(8, 4, 4, 0), 5, 1e-12);
	/* nothing to hide behind */
	expect_close(train_ub_exposed_s(2, 0, 4, 1), 2, 0);
}

Test(precision, node_limited_routing_expected_nodes)
{
	/* DeepSeek-V3: top 8 of 256 experts over 8 nodes (32 each), at most
	 * M = 4 nodes: a chosen node is missed by all 8 experts drawn from the
	 * 128 of the 4 with probability prod_{i<8} (96 - i) / (128 - i) =
	 * 0.0927473; 4 x (1 - 0.0927473) = 3.629011 nodes, not the bound 4 */
	expect_close(llmsim_graph_nodes_touched(8, 256, 8, 4), 3.629011, 1e-6);
	/* no limit, top 2 of 4 experts on 2 nodes (2 each): missed with
	 * (2/4)(1/3) = 1/6: 2 x 5/6 = 1.666667 */
	expect_close(llmsim_graph_nodes_touched(2, 4, 2, 0), 5.0 / 3, 1e-9);
	expect_close(llmsim_graph_nodes_touched(8, 256, 1, 4), 1, 0);
}

Test(precision, moe_dispatchers)
{
	struct llmsim_model m = model("mixtral-8x7b");
	struct llmsim_graph g;
	struct llmsim_graph_cfg c;
	train_cfg(&c, LLMSIM_PREC_BF16, 0);
	c.sections = 1u << LLMSIM_SEC_MOE;
	c.ep = 4;
	/* all-gather: every rank ends with the group's 4 x 2048 tokens of
	 * 4096 bf16: 67,108,864 B; the combine a reduce-scatter of as much */
	c.moe_dispatch = LLMSIM_MOE_ALLGATHER;
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	const struct llmsim_gnode *d = find(&g, LLMSIM_PH_FWD, "ep_dispatch");
	const struct llmsim_gnode *k = find(&g, LLMSIM_PH_FWD, "ep_combine");
	cr_assert(d && k);
	cr_expect_eq(d->op.u.coll.kind, LLMSIM_COLL_ALLGATHER);
	cr_expect_eq(k->op.u.coll.kind, LLMSIM_COLL_REDUCESCATTER);
	expect_close(d->op.u.coll.bytes, 67108864.0, 0);
	/* DeepEP: the top-2 slots of 2048 tokens in FP8 with a scale per 128:
	 * 2048 x 2 x 4096 x 1.03125 = 17,301,504 B; the combine in bf16:
	 * 33,554,432 B */
	c.moe_dispatch = LLMSIM_MOE_DEEPEP;
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	d = find(&g, LLMSIM_PH_FWD, "ep_dispatch");
	k = find(&g, LLMSIM_PH_FWD, "ep_combine");
	cr_assert(d && k);
	cr_expect_eq(d->op.u.coll.kind, LLMSIM_COLL_ALLTOALL);
	expect_close(d->op.u.coll.bytes, 17301504.0, 0);
	expect_close(k->op.u.coll.bytes, 33554432.0, 0);
	/* the permute and unpermute of the 4096 slots, forward and backward */
	cr_assert_not_null(find(&g, LLMSIM_PH_FWD, "moe_permute"));
	cr_assert_not_null(find(&g, LLMSIM_PH_BWD, "moe_unpermute"));
}

Test(precision, moe_overlap_of_one_microbatch)
{
	struct llmsim_model m = model("mixtral-8x7b");
	struct llmsim_gpu g = gpu("h100");
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &ctx, NULL), 0);
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.moe_overlap = 1;
	c.moe_dispatch = LLMSIM_MOE_DEEPEP;
	struct shape_cost sc;
	struct dp_cost dc;
	memset(&sc, 0, sizeof sc);
	memset(&dc, 0, sizeof dc);
	sc.moe.fwd_s = 1e-3, sc.moe.bwd_s = 2e-3;
	sc.moe.ep_fwd_s = sc.moe.ep_bwd_s = 2e-3;
	struct train_mb mb;
	train_mb_parts(ctx, &c, &sc, &dc, &mb);
	/* 32 MoE layers: exchanges 32 x 4 ms = 128 ms beside compute 32 x 3 ms
	 * = 96 ms: 32 ms uncovered, and the 96 ms overlapped run on the SMs
	 * DeepEP's 20 leave of 132: + 96 x 20/132 = 14.545 ms; 46.545 ms
	 * exposed, half in each direction */
	expect_close(mb.ep_fwd_s + mb.ep_bwd_s, 0.032 + 0.096 * 20 / 132, 1e-9);
	expect_close(mb.ep_fwd_s, mb.ep_bwd_s, 1e-12);
	c.moe_overlap = 0;
	train_mb_parts(ctx, &c, &sc, &dc, &mb);
	expect_close(mb.ep_fwd_s + mb.ep_bwd_s, 0.128, 1e-12);
	llmsim_train_ctx_free(ctx);
}

Test(precision, saved_activations)
{
	struct llmsim_model m = model("8b");
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	double bf16 = llmsim_train_act_layer_bytes(&m, &c, 0, 0);
	llmsim_train_cfg_precision(&c, LLMSIM_PREC_FP8_CURRENT);
	double fp8 = llmsim_train_act_layer_bytes(&m, &c, 0, 0);
	/* 4096 tokens on one GPU: the inputs of QKV (4096), O (32 x 128),
	 * gate-up (4096) and down (14336) saved in 1 B instead of 2: 4096 x
	 * (4096 + 4096 + 4096 + 14336) = 109,051,904 B less */
	expect_close(bf16 - fp8, 109051904.0, 1e-12);
}

Test(precision, mxfp8_on_hopper_is_one_line)
{
	char out[4096], err[4096];
	int rc = run_llmsim("train --model 8b --gpu h100 --gpus 8 --dtype mxfp8", out, sizeof out,
			    err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	cr_expect(strstr(err, "h100") && strstr(err, "fp8, int8"), "%s", err);
	rc = run_llmsim("plan --model 8b --gpu a100 --gpus 8 --dtype nvfp4", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "a100") && strstr(err, "no nvfp4"), "%s", err);
	/* a recipe and a type that disagree: a usage error */
	rc = run_llmsim("train --model 8b --gpu b200 --gpus 8 --dtype nvfp4 --precision mxfp8", out,
			sizeof out, err, sizeof err);
	cr_expect_eq(rc, 2, "%s", err);
}

Test(precision, context_parallel_comm)
{
	struct llmsim_model m = model("8b");
	struct llmsim_graph g;
	struct llmsim_graph_cfg c;
	train_cfg(&c, LLMSIM_PREC_BF16, 0);
	c.cp = 4;
	/* all-to-all: each rank's 2048/4 = 512 tokens of Q (32 heads) and K,
	 * V (8 heads each) of 128: 512 x (4096 + 2048) x 2 B = 6,291,456 B,
	 * the output 512 x 4096 x 2 = 4,194,304 B; no ring */
	c.cp_comm = LLMSIM_CP_A2A, c.cp_a2a = 4;
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	const struct llmsim_gnode *q = find(&g, LLMSIM_PH_FWD, "cp_a2a_qkv");
	const struct llmsim_gnode *o = find(&g, LLMSIM_PH_BWD, "cp_a2a_out");
	cr_assert(q && o);
	cr_expect_eq(q->op.u.coll.kind, LLMSIM_COLL_ALLTOALL);
	cr_expect_eq(q->op.u.coll.gpus, 4);
	expect_close(q->op.u.coll.bytes, 6291456.0, 0);
	expect_close(o->op.u.coll.bytes, 4194304.0, 0);
	cr_expect_null(find(&g, LLMSIM_PH_FWD, "cp_ring"));
	/* a2a+p2p, 2 ranks in each all-to-all: a ring of 4/2 - 1 = 1 step of
	 * one rank's K and V block, 512 x 2048 x 2 = 2,097,152 B */
	c.cp_comm = LLMSIM_CP_A2A_P2P, c.cp_a2a = 2;
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	const struct llmsim_gnode *r = find(&g, LLMSIM_PH_FWD, "cp_ring");
	q = find(&g, LLMSIM_PH_FWD, "cp_a2a_qkv");
	cr_assert(r && q);
	cr_expect_eq(q->op.u.coll.gpus, 2);
	expect_close(r->count, 1, 0);
	expect_close(r->op.u.coll.bytes, 2097152.0, 0);
	/* p2p: the ring of 3 steps */
	c.cp_comm = LLMSIM_CP_P2P;
	cr_assert_eq(llmsim_graph_build(&m, &c, &g, NULL), 0);
	r = find(&g, LLMSIM_PH_FWD, "cp_ring");
	cr_assert_not_null(r);
	expect_close(r->count, 3, 0);
	/* the group of a2a+p2p: the most CP ranks, tp apart, in one NVLink
	 * domain: tp 2, cp 8 on 8-GPU nodes: 4 */
	struct llmsim_train_cfg t;
	llmsim_train_cfg_init(&t);
	t.tp = 2, t.cp = 8, t.cp_comm = LLMSIM_CP_A2A_P2P;
	cr_expect_eq(train_cp_a2a_size(8, &t), 4);
	t.cp_comm = LLMSIM_CP_A2A;
	cr_expect_eq(train_cp_a2a_size(8, &t), 8);
}

Test(precision, blackwell_power_limit)
{
	struct llmsim_gpu b = gpu("b200"), g = gpu("gb200");
	double fb = llmsim_gpu_power_cap_hz(&b), fg = llmsim_gpu_power_cap_hz(&g);
	/* the quoted tensor clocks x the calibration H200's 1.41/1.83: B200
	 * 1.856 GHz x 0.7705 = 1.430 GHz */
	expect_close(fb, 1.856e9 * 1.41 / 1.83, 2e-3);
	/* the same GPU at 1200 W instead of 1000 W: the f^3 law's cube root
	 * of the power, 1.2^(1/3) = 1.0627 more clock, not the quoted clocks'
	 * 2.062 / 1.856 = 1.111 */
	expect_close(fg / fb, cbrt(g.tdp_w / b.tdp_w), 2e-3);
	cr_expect(fg < b.burst_clock_hz && b.burst_clock_hz < b.tensor_clock_hz);
}

/* The largest training steps fit the graph: every shipped MoE and MLA
 * model under NVFP4 (amax, quantize and transposed copies everywhere), SP,
 * hierarchical CP, EP with an imbalance (the busiest expert apart) and
 * the SP re-all-gather. */
Test(precision, largest_graphs_fit)
{
	static const char *const names[] = {"deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b"};
	static struct llmsim_graph g;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct llmsim_model m = model(names[i]);
		struct llmsim_graph_cfg c;
		for (int p = LLMSIM_PREC_FP8_CURRENT; p <= LLMSIM_PREC_NVFP4; p++) {
			train_cfg(&c, p, 2);
			c.sections = 0;
			c.tp = 2, c.sp = 1, c.sp_regather = 1, c.cp = 2, c.ep = 2;
			c.cp_comm = LLMSIM_CP_A2A_P2P, c.cp_a2a = 2, c.moe_imbalance = 1.5;
			cr_expect_eq(llmsim_graph_build(&m, &c, &g, NULL), 0, "%s", names[i]);
			cr_log_info("%s %s: %d nodes", names[i], llmsim_precision_name(p), g.n);
		}
	}
}

Test(precision, interleaved_sends_beside_the_next_chunk)
{
	struct llmsim_model m = model("8b");
	struct llmsim_gpu g = gpu("h100");
	struct llmsim_train_ctx *ctx;
	cr_assert_eq(llmsim_train_ctx_new(&m, &g, &ctx, NULL), 0);
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.pp = 4, c.gpus = 4, c.schedule = LLMSIM_SCHED_INTERLEAVED, c.chunks = 2;
	struct shape_cost sc;
	struct dp_cost dc;
	memset(&sc, 0, sizeof sc);
	memset(&dc, 0, sizeof dc);
	sc.dense.fwd_s = 1e-3, sc.dense.bwd_s = 2e-3, sc.p2p_s = 5e-3;
	struct train_mb mb;
	train_mb_parts(ctx, &c, &sc, &dc, &mb);
	/* 32 layers over 4 stages: 8 a stage, 4 a chunk: a chunk's forward
	 * 4 ms, its backward 8 ms. A 5 ms send beside the next forward chunk
	 * shows 1 ms, beside a backward one nothing: per direction and
	 * micro-batch (2 chunks) 0.5 x 2 x (1 + 0) = 1 ms, not 2 x 5 = 10 */
	expect_close(mb.p2p_s, 1e-3, 1e-9);
	c.stack = LLMSIM_STACK_MEGATRON_2022; /* Megatron-LM v3: no asynchronous sends */
	train_mb_parts(ctx, &c, &sc, &dc, &mb);
	expect_close(mb.p2p_s, 10e-3, 1e-9);
	llmsim_train_ctx_free(ctx);
}
