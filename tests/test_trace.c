/*
 * test_trace.c - trace analysis (calib/trace/) on the hand-made fixture
 * tests/data/trace/llama_tiny.trace (written by make_fixture.py next to
 * it): one prefill (b=1 s=512) and one decode step (b=8 ctx=2048) of one
 * Llama-3.1-8B layer each, every kernel in an op range 10 us; outside op
 * ranges a 4 us fill kernel, a 5 us all-reduce, a 3 us HtoD memcpy and a
 * 2 us memset. Expected counts and sums below follow from that layout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/store.h"
#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/sim.h"
#include "support.h"

static struct llmsim_trace tr;
static struct llmsim_gpu h200, b200;
static struct llmsim_model m8b;

static void setup(void)
{
	char path[512];
	struct llmsim_err err = {0};
	llmsim_trace_init(&tr);
	cr_assert_eq(llmsim_trace_load(test_data(path, sizeof path, "trace/llama_tiny.trace"), 0,
				       &tr, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("b200", &b200, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_model_load("8b", &m8b, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
	llmsim_trace_release(&tr);
}

TestSuite(trace, .init = setup, .fini = teardown);

/* Per step: 4 GEMM ranges + LM head, 12 op ranges in the layer, 3 outside
 * it; decode's QKV GEMM adds a split-K reduction and its attention a
 * combine kernel. Ranges: phase, embedding, layer, 12 ops, final norm, LM
 * head = 17 per step. */
Test(trace, fixture_loads)
{
	cr_expect_eq(tr.nkernels, 50);
	cr_expect_eq(tr.ncopies, 2);
	cr_expect_eq(tr.nranges, 34);
	cr_expect_str_eq(tr.run.device_name, "NVIDIA H200");
	cr_expect_eq(tr.run.nvtx, 1);
	const struct llmsim_trace_range *r = llmsim_trace_range(&tr, 1);
	cr_assert_not_null(r);
	cr_expect_str_eq(r->name, "prefill b=1 s=512");
}

Test(trace, classifies_fixture)
{
	int n[LLMSIM_TC_COUNT] = {0};
	for (size_t i = 0; i < tr.nkernels; i++)
		n[llmsim_trace_classify(tr.kernels[i].name)]++;
	/* gemm: 5 prefill + 6 decode (split-K reduce); attention: flash +
	 * split-KV + combine; norms: 3 per step; elementwise: embedding,
	 * 7 RoPE, 2 KV writes, 2 residuals, SiLU and mul per step, + fill */
	cr_expect_eq(n[LLMSIM_TC_GEMM], 11);
	cr_expect_eq(n[LLMSIM_TC_ATTENTION], 3);
	cr_expect_eq(n[LLMSIM_TC_NORMALIZATION], 6);
	cr_expect_eq(n[LLMSIM_TC_ELEMENTWISE], 29);
	cr_expect_eq(n[LLMSIM_TC_COMMUNICATION], 1);
	cr_expect_eq(n[LLMSIM_TC_OTHER], 0);
}

Test(trace, classifies_library_names)
{
	static const struct {
		const char *name;
		enum llmsim_trace_class cls;
	} cases[] = {
		{"nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopB_TNN", LLMSIM_TC_GEMM},
		{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
		 "execute_segment_k_off_kernel__5x_cublas", LLMSIM_TC_GEMM},
		{"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", LLMSIM_TC_GEMM},
		{"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn"
		 "_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::"
		 "Params)", LLMSIM_TC_GEMM},
		{"fmha_cutlassF_bf16_aligned_64x128_rf_sm80", LLMSIM_TC_ATTENTION},
		{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1"
		 "_kernel0_0", LLMSIM_TC_ATTENTION},
		{"_ZN13pytorch_flash16flash_fwd_kernelILi128ELb1EEEvNS_16Flash_fwd_paramsE",
		 LLMSIM_TC_ATTENTION},
		{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float,"
		 " at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*,"
		 " int)", LLMSIM_TC_NORMALIZATION},
		{"ncclKernel_AllReduce_RING_LL_Sum_float", LLMSIM_TC_COMMUNICATION},
		{"triton_poi_fused_add_mul_0", LLMSIM_TC_ELEMENTWISE},
		{"some_custom_kernel", LLMSIM_TC_OTHER},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(llmsim_trace_classify(cases[i].name), cases[i].cls, "%s -> %s",
			     cases[i].name, llmsim_trace_class_name(llmsim_trace_classify(cases[i].name)));
}

Test(trace, short_names_and_tiles)
{
	char b[160];
	/* demangled, namespaces and parameters dropped, the functor kept */
	cr_expect_str_eq(llmsim_trace_short_name("_ZN2at6native29vectorized_elementwise_kernelILi4E"
						 "NS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
						 b, sizeof b),
			 "vectorized_elementwise_kernel<FillFunctor>");
	cr_expect_str_eq(llmsim_trace_short_name("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT", b,
						 sizeof b),
			 "nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT");
	int tm = 0, tn = 0, tk = 0;
	cr_expect_eq(llmsim_trace_gemm_tile("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT", &tm,
					    &tn, &tk), 0);
	cr_expect_eq(tm, 128);
	cr_expect_eq(tn, 256);
	cr_expect_eq(tk, 64);
	cr_expect_eq(llmsim_trace_gemm_tile("elementwise_kernel", &tm, &tn, &tk), -1);
	cr_expect(llmsim_trace_nonvectorized("_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22"
					     "gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cuda"));
	cr_expect(!llmsim_trace_nonvectorized("_ZN2at6native29vectorized_elementwise_kernelILi4E"
					      "NS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"));
	cr_expect(!llmsim_trace_nonvectorized("nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT"));
}

Test(trace, phase_names)
{
	struct llmsim_trace_phase p;
	cr_assert_eq(llmsim_trace_phase_parse("prefill b=4 s=2048", &p), 0);
	cr_expect(!p.decode && p.batch == 4 && p.new_tokens == 2048 && p.context == 2048);
	/* decode: the new token attends to the 2048 cached ones and itself */
	cr_assert_eq(llmsim_trace_phase_parse("decode b=8 ctx=2048", &p), 0);
	cr_expect(p.decode && p.batch == 8 && p.new_tokens == 1 && p.context == 2049);
	cr_expect_eq(llmsim_trace_phase_parse("layer 0", &p), -1);
	cr_expect_eq(llmsim_trace_phase_parse("decode b=8", &p), -1);
	cr_expect_eq(llmsim_trace_phase_parse("prefill b=x s=1", &p), -1);
}

static const struct llmsim_trace_row *row(const struct llmsim_trace_cmp *c, const char *phase,
					  const char *range, const char *kernel_prefix)
{
	for (size_t i = 0; i < c->nrows; i++)
		if (!strcmp(c->rows[i].phase, phase) && !strcmp(c->rows[i].range, range) &&
		    !strncmp(c->rows[i].kernel, kernel_prefix, strlen(kernel_prefix)))
			return &c->rows[i];
	return NULL;
}

static double predict(const struct llmsim_gpu *g, const char *spec)
{
	struct llmsim_op op;
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_op_parse(spec, &op, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_predict(g, &op, &p, &err), 0, "%s", err.msg);
	return p.time_s;
}

Test(trace, compare_recovers_shapes)
{
	struct llmsim_trace_cmp c;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_trace_compare(&tr, &h200, &m8b, NULL, 0, &c, &err), 0, "%s", err.msg);
	/* 15 op ranges per step; decode's QKV (GEMM + split-K reduce) and
	 * attention (split-KV + combine) hold more kernels than ops */
	cr_expect_eq(c.op_ranges, 30);
	cr_expect_eq(c.range_level, 2);
	cr_expect_eq(c.total.kernels, 52);
	cr_expect_eq(c.total.unmatched_kernels, 4);
	expect_close(c.total.measured_s, 48 * 10e-6 + 14e-6, 1e-9);
	expect_close(c.total.unmatched_s, 14e-6, 1e-9);
	/* unmatched kernels count at their measured time */
	expect_close(c.total.predicted_s - c.total.matched_predicted_s, 14e-6, 1e-6);
	cr_expect_eq(c.cls[LLMSIM_TC_OTHER].kernels, 0);
	/* the KV writes (2 per step) copy into a strided cache slice: PyTorch's
	 * non-vectorized elementwise_kernel, flagged */
	cr_expect_eq(c.nonvec_kernels, 4);
	expect_close(c.nonvec_measured_s, 40e-6, 1e-9);

	/* QKV of prefill b=1 s=512: m = 512 tokens, n = (32 + 2*8) * 128,
	 * k = hidden 4096 (Llama 3.1 8B) */
	const struct llmsim_trace_row *r = row(&c, "prefill b=1 s=512", "qkv_proj", "nvjet");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "gemm m=512 n=6144 k=4096");
	expect_close(r->predicted_s, predict(&h200, "gemm m=512 n=6144 k=4096"), 1e-12);
	expect_close(r->measured_s, 10e-6, 1e-9);
	/* the LM head runs on the last position of the one sequence */
	r = row(&c, "prefill b=1 s=512", "lm_head", "nvjet");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "gemm m=1 n=128256 k=4096");
	/* prefill attention: causal, 32 query heads on 8 KV heads (the short
	 * spec leaves out what defaults: kv_seq = seq, causal) */
	r = row(&c, "prefill b=1 s=512", "attention", "flash_fwd_kernel");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "attention impl=flash2 batch=1 heads=32 kv_heads=8 seq=512 "
				     "head_dim=128");
	/* decode attention: split-KV kernels, compared as a whole */
	r = row(&c, "decode b=8 ctx=2048", "attention", "(2 kernels)");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "decode impl=flashdecoding batch=8 heads=32 kv_heads=8 "
				     "kv_len=2049 head_dim=128");
	expect_close(r->measured_s, 20e-6, 1e-9);
	cr_expect_eq(r->launches, 2);
	/* RoPE as the eager code launches it: 4 broadcast multiplies (by
	 * the cos/sin table) over half of the 40 q+k heads (40 * 64 = 2560
	 * per token) */
	r = row(&c, "prefill b=1 s=512", "rope", "vectorized_elementwise_kernel<BinaryFunctor>");
	cr_assert_not_null(r);
	cr_expect_eq(r->launches, 4);
	cr_expect_str_eq(r->op_spec, "ew kind=mul tokens=512 hidden=2560 bcast=1");
	/* per phase: 23 kernels x 10 us in prefill, 25 in decode; launched
	 * back to back 1 us apart, so they span 23 x 10 + 22 x 1 us and
	 * 25 x 10 + 24 x 1 us */
	cr_assert_geq(c.nphases, 2);
	for (size_t i = 0; i < c.nphases; i++) {
		int pre = strstr(c.phases[i].name, "prefill") != NULL;
		cr_expect_eq(c.phases[i].instances, 1);
		expect_close(c.phases[i].measured_s, pre ? 230e-6 : 250e-6, 1e-9);
		expect_close(c.phases[i].span_s, pre ? 252e-6 : 274e-6, 1e-9);
	}
	llmsim_trace_cmp_release(&c);
}

Test(trace, compare_without_model_is_all_unmatched)
{
	struct llmsim_trace_cmp c;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_trace_compare(&tr, &h200, NULL, NULL, 0, &c, &err), 0, "%s", err.msg);
	cr_expect_eq(c.total.unmatched_kernels, c.total.kernels);
	expect_close(c.total.predicted_s, c.total.measured_s, 1e-12);
	llmsim_trace_cmp_release(&c);
}

Test(trace, replay_scales_by_rule)
{
	struct llmsim_trace_cmp c;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_trace_compare(&tr, &h200, &m8b, &b200, 0, &c, &err), 0, "%s", err.msg);
	cr_expect(c.replay);
	/* unmatched: time x (H200 rate / B200 rate) of the bound resource */
	const struct llmsim_trace_row *r = row(&c, "", "", "vectorized_elementwise_kernel<Fill");
	cr_assert_not_null(r);
	expect_close(r->replay_s, 4e-6 * h200.hbm_bytes_per_s / b200.hbm_bytes_per_s, 1e-9);
	r = row(&c, "", "", "ncclDevKernel");
	cr_assert_not_null(r);
	expect_close(r->replay_s,
		     5e-6 * h200.intra_node_bytes_per_s / b200.intra_node_bytes_per_s, 1e-9);
	r = row(&c, "", "", "memcpy HtoD");
	cr_assert_not_null(r);
	expect_close(r->replay_s, 3e-6 * h200.pcie_bytes_per_s / b200.pcie_bytes_per_s, 1e-9);
	/* recovered: measured x (B200 model / H200 model) */
	r = row(&c, "prefill b=1 s=512", "down_proj", "nvjet");
	cr_assert_not_null(r);
	const char *spec = "gemm m=512 n=4096 k=14336";
	cr_expect_str_eq(r->op_spec, spec);
	expect_close(r->target_s, predict(&b200, spec), 1e-12);
	expect_close(r->replay_s, 10e-6 * predict(&b200, spec) / predict(&h200, spec), 1e-9);
	llmsim_trace_cmp_release(&c);
}

Test(trace, db_round_trip)
{
	char db[] = "/tmp/llmsim-trace-XXXXXX";
	int fd = mkstemp(db);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(db);
	struct llmsim_err err = {0};
	int64_t id = 0;
	cr_assert_eq(llmsim_trace_db_write(db, &tr, &id, &err), 0, "%s", err.msg);
	cr_expect_eq(id, 1);
	cr_assert_eq(llmsim_trace_db_write(db, &tr, &id, &err), 0, "%s", err.msg);
	cr_expect_eq(id, 2);
	struct llmsim_trace t2;
	llmsim_trace_init(&t2);
	cr_assert_eq(llmsim_trace_load(db, 1, &t2, &err), 0, "%s", err.msg);
	cr_expect_eq(t2.nkernels, tr.nkernels);
	cr_expect_eq(t2.ncopies, tr.ncopies);
	cr_expect_eq(t2.nranges, tr.nranges);
	for (size_t i = 0; i < tr.nkernels && i < t2.nkernels; i++) {
		cr_expect_str_eq(t2.kernels[i].name, tr.kernels[i].name);
		cr_expect_eq(t2.kernels[i].start_ns, tr.kernels[i].start_ns);
		cr_expect_eq(t2.kernels[i].range_id, tr.kernels[i].range_id);
		cr_expect_eq(t2.kernels[i].grid[0], tr.kernels[i].grid[0]);
	}
	cr_expect_str_eq(t2.copies[1].dir, tr.copies[1].dir);
	cr_expect_str_eq(t2.ranges[5].name, tr.ranges[5].name);
	llmsim_trace_release(&t2);
	cr_expect_eq(llmsim_trace_load(db, 3, &t2, &err), LLMSIM_ENOENT);
	llmsim_trace_release(&t2);
	unlink(db);
}

Test(trace, text_round_trip)
{
	char path[] = "/tmp/llmsim-trace-txt-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_trace_text_write(f, &tr, &err), 0, "%s", err.msg);
	fclose(f);
	struct llmsim_trace t2;
	llmsim_trace_init(&t2);
	cr_assert_eq(llmsim_trace_load(path, 0, &t2, &err), 0, "%s", err.msg);
	cr_expect_eq(t2.nkernels, tr.nkernels);
	cr_expect_str_eq(t2.kernels[7].name, tr.kernels[7].name);
	cr_expect_eq(t2.kernels[7].end_ns, tr.kernels[7].end_ns);
	llmsim_trace_release(&t2);
	unlink(path);
}

Test(trace, phases_only_leaves_set_up_out)
{
	struct llmsim_trace_cmp c;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_trace_compare(&tr, &h200, &m8b, NULL, LLMSIM_TRACE_PHASES_ONLY, &c,
					  &err), 0, "%s", err.msg);
	/* the fill and the all-reduce kernels, the memcpy and the memset are
	 * outside both steps: 4 records, 4 + 5 + 3 + 2 us */
	cr_expect_eq(c.excluded_kernels, 4);
	expect_close(c.excluded_s, 14e-6, 1e-9);
	cr_expect_eq(c.total.kernels, 48);
	cr_expect_eq(c.total.unmatched_kernels, 0);
	expect_close(c.total.measured_s, 480e-6, 1e-9);
	llmsim_trace_cmp_release(&c);
}

struct cases_seen {
	int n, gemm, attention, decode;
	int64_t qkv_decode_case;
	double qkv_decode_s, qkv_decode_flops;
};

static int count_case(const struct llmsim_store_case_row *row, void *ctx)
{
	struct cases_seen *c = ctx;
	c->n++;
	c->gemm += !strcmp(row->c.op_class, "gemm");
	c->attention += !strcmp(row->c.op_class, "attention");
	c->decode += !strcmp(row->c.op_class, "decode");
	cr_expect_str_eq(row->c.split, "holdout");
	cr_expect_str_eq(row->dev.hw_name, "h200");
	if (!strcmp(row->c.op_spec, "gemm m=8 n=6144 k=4096")) {
		c->qkv_decode_case = row->case_id;
		c->qkv_decode_s = row->c.time_median_s;
		c->qkv_decode_flops = row->c.flops_declared;
	}
	return 0;
}

static int count_kernel(const struct llmsim_kernel_rec *k, void *ctx)
{
	(void)k;
	++*(int *)ctx;
	return 0;
}

/* The fixture's clock slowed 100 times about its first timestamp: every
 * kernel lasts 1 ms instead of 10 us, so that each recovered GEMM is slower
 * than the H200's dense peak allows (the largest, prefill's LM head, is
 * 2 x 512 x 128256 x 4096 = 5.4e11 FLOPs: 0.54 ms at 989 TFLOP/s). */
static void slow_clock(struct llmsim_trace *t, uint64_t k)
{
	uint64_t t0 = t->kernels[0].start_ns;
#define SLOW(x) ((x) = (x) ? t0 + ((x) - t0) * k : 0)
	for (size_t i = 0; i < t->nkernels; i++) {
		SLOW(t->kernels[i].start_ns);
		SLOW(t->kernels[i].end_ns);
	}
	for (size_t i = 0; i < t->ncopies; i++) {
		SLOW(t->copies[i].start_ns);
		SLOW(t->copies[i].end_ns);
	}
	for (size_t i = 0; i < t->nranges; i++) {
		SLOW(t->ranges[i].start_ns);
		SLOW(t->ranges[i].end_ns);
	}
#undef SLOW
}

static int count_run(const struct llmsim_store_run_row *row, void *ctx)
{
	(void)row;
	++*(int *)ctx;
	return 0;
}

Test(trace, to_calib_adds_library_kernels)
{
	char db[] = "/tmp/llmsim-trace-calib-XXXXXX";
	int fd = mkstemp(db);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(db);
	struct llmsim_store *s = NULL;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_store_open(db, LLMSIM_STORE_CREATE, &s, &err), 0, "%s", err.msg);
	int n = 0;
	/* at the fixture's own clock, 10 us GEMMs of 8B's prefill shapes are
	 * faster than the H200's peak: impossible, so nothing is added */
	cr_assert_eq(llmsim_trace_to_calib(&tr, &h200, &m8b, s, "holdout", &n, &err),
		     LLMSIM_EINVAL);
	cr_expect(strstr(err.msg, "faster than the h200's peak allows") != NULL, "%s", err.msg);
	int runs = 0;
	cr_assert_eq(llmsim_store_runs(s, count_run, &runs, &err), 0, "%s", err.msg);
	cr_expect_eq(runs, 0);
	slow_clock(&tr, 100);
	cr_assert_eq(llmsim_trace_to_calib(&tr, &h200, &m8b, s, "holdout", &n, &err), 0, "%s",
		     err.msg);
	/* distinct ops: 5 GEMMs (QKV, O, gate/up, down, LM head) in each step
	 * and one attention per step: 12 */
	cr_expect_eq(n, 12);
	struct cases_seen c = {0};
	cr_assert_eq(llmsim_store_cases(s, NULL, count_case, &c, &err), 0, "%s", err.msg);
	cr_expect_eq(c.n, 12);
	cr_expect_eq(c.gemm, 10);
	cr_expect_eq(c.attention, 1);
	cr_expect_eq(c.decode, 1);
	/* decode QKV: GEMM + split-K reduction, 1 ms each (10 us slowed 100
	 * times); 2 m n k FLOPs */
	expect_close(c.qkv_decode_s, 2e-3, 1e-9);
	expect_close(c.qkv_decode_flops, 2.0 * 8 * 6144 * 4096, 1e-12);
	int nk = 0;
	cr_assert_eq(llmsim_store_kernels(s, c.qkv_decode_case, count_kernel, &nk, &err), 0);
	cr_expect_eq(nk, 2);
	llmsim_store_close(s);
	unlink(db);
}

/* A program that marks only its steps: the same fixture with every kernel
 * moved to its step range. GEMMs are recovered by launch order (QKV, O,
 * gate/up, down, then the LM head), attention by class; the elementwise
 * kernels stay unmatched. */
Test(trace, steps_only_recovered_by_order)
{
	for (size_t i = 0; i < tr.nkernels; i++) {
		const struct llmsim_trace_range *r = llmsim_trace_range(&tr, tr.kernels[i].range_id);
		struct llmsim_trace_phase ph;
		while (r && llmsim_trace_phase_parse(r->name, &ph))
			r = llmsim_trace_range(&tr, r->parent_id);
		tr.kernels[i].range_id = r ? r->id : 0;
	}
	struct llmsim_trace_cmp c;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_trace_compare(&tr, &h200, &m8b, NULL, 0, &c, &err), 0, "%s", err.msg);
	const struct llmsim_trace_row *r = row(&c, "prefill b=1 s=512", "qkv_proj (by order)", "nvjet");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "gemm m=512 n=6144 k=4096");
	r = row(&c, "prefill b=1 s=512", "down_proj (by order)", "nvjet");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "gemm m=512 n=4096 k=14336");
	r = row(&c, "prefill b=1 s=512", "lm_head (by order)", "nvjet");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "gemm m=1 n=128256 k=4096");
	/* decode QKV: the GEMM and its split-K reduction together */
	r = row(&c, "decode b=8 ctx=2048", "qkv_proj (by order)", "(2 kernels)");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->op_spec, "gemm m=8 n=6144 k=4096");
	r = row(&c, "decode b=8 ctx=2048", "attention (by order)", "(2 kernels)");
	cr_assert_not_null(r);
	/* all 11 GEMM and 3 attention kernels recovered; the 14 elementwise
	 * and 3 norm kernels per step (34 in all) are not, nor the 4 records
	 * outside the steps */
	cr_expect_eq(c.cls[LLMSIM_TC_GEMM].unmatched_kernels, 0);
	cr_expect_eq(c.cls[LLMSIM_TC_ATTENTION].unmatched_kernels, 0);
	cr_expect_eq(c.total.unmatched_kernels, 34 + 4);
	llmsim_trace_cmp_release(&c);
}
