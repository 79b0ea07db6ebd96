/*
 * test_trace_inject.c - libllmsim_inject.so end to end without a GPU:
 * llmsim-inject-selftest (calib/inject/selftest/) drives the library over
 * a fake CUPTI the way the driver and a program would, and the trace it
 * writes at exit is checked here: records, NVTX ranges, and kernels tied
 * to the range they were launched in. Skipped when the library was not
 * built (no CUDA toolkit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/trace/trace.h"
#include "support.h"

static char dir[64], lib[512], selftest[512];

static void setup(void)
{
	snprintf(lib, sizeof lib, "%s/calib/inject/libllmsim_inject.so", LLMSIM_BUILD_DIR);
	snprintf(selftest, sizeof selftest, "%s/calib/inject/llmsim-inject-selftest",
		 LLMSIM_BUILD_DIR);
	if (access(lib, F_OK) || access(selftest, X_OK))
		cr_skip_test("libllmsim_inject.so not built (no CUDA toolkit at build time)");
	snprintf(dir, sizeof dir, "/tmp/llmsim-inject-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	if (dir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		cr_expect_eq(system(cmd), 0);
	}
}

TestSuite(trace_inject, .init = setup, .fini = teardown);

static int run_n(const char *env, int n)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "env %s '%s' '%s' %d >'%s/out' 2>&1", env, selftest, lib, n, dir);
	return system(cmd);
}

static int run(const char *env)
{
	return run_n(env, 0);
}

static void check(const struct llmsim_trace *t)
{
	cr_expect_str_eq(t->run.device_name, "NVIDIA H200");
	cr_expect_eq(t->run.device_sms, 132);
	cr_expect_eq(t->run.cupti_version, 130001);
	cr_expect_eq(t->run.nvtx, 1);
	cr_assert_eq(t->nkernels, 2);
	cr_assert_eq(t->ncopies, 1);
	cr_assert_eq(t->nranges, 3);
	/* ranges in push order; the inner one's parent is the outer one */
	cr_expect_str_eq(t->ranges[0].name, "prefill b=1 s=16");
	cr_expect_str_eq(t->ranges[1].name, "qkv_proj");
	cr_expect_eq(t->ranges[1].parent_id, t->ranges[0].id);
	cr_expect_eq(t->ranges[1].depth, 1);
	cr_expect_str_eq(t->ranges[2].name, "startend");
	cr_expect_geq(t->ranges[1].end_ns, t->ranges[1].start_ns);
	/* kernels sorted by start: the one outside any range, then the GEMM
	 * launched inside "qkv_proj"; the copy inside the outer range */
	cr_expect_str_eq(t->kernels[0].name, "outside_kernel");
	cr_expect_eq(t->kernels[0].range_id, 0);
	cr_expect_str_eq(t->kernels[1].name, "nvjet_sm90_tst_128x256_64x4_1x2_h_bz_coopA_NNT");
	cr_expect_eq(t->kernels[1].range_id, t->ranges[1].id);
	cr_expect_eq(t->kernels[1].grid[0], 48);
	cr_expect_eq(t->kernels[1].block[0], 384);
	cr_expect_eq(t->kernels[1].cluster[0], 2);
	cr_expect_eq(t->kernels[1].regs_per_thread, 168);
	cr_expect_eq(t->kernels[1].dynamic_smem_bytes, 200000);
	cr_expect_eq(t->kernels[1].end_ns - t->kernels[1].start_ns, 10000);
	cr_expect_eq(t->copies[0].range_id, t->ranges[0].id);
	cr_expect_str_eq(t->copies[0].dir, "HtoD");
	cr_expect_eq(t->copies[0].bytes, 4096);
}

Test(trace_inject, writes_database_and_text)
{
	char env[1024], db[128], txt[128];
	snprintf(db, sizeof db, "%s/t.db", dir);
	snprintf(txt, sizeof txt, "%s/t.txt", dir);
	snprintf(env, sizeof env,
		 "LLMSIM_TRACE_DB='%s' LLMSIM_TRACE_TXT='%s' NVTX_INJECTION64_PATH='%s'"
		 " LLMSIM_TRACE_NVTX=1", db, txt, lib);
	cr_assert_eq(run(env), 0);
	struct llmsim_trace t;
	struct llmsim_err err = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(db, 0, &t, &err), 0, "%s", err.msg);
	check(&t);
	llmsim_trace_release(&t);
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(txt, 0, &t, &err), 0, "%s", err.msg);
	check(&t);
	llmsim_trace_release(&t);
	/* a second traced process adds a second run */
	cr_assert_eq(run(env), 0);
	llmsim_trace_init(&t);
	cr_expect_eq(llmsim_trace_load(db, 2, &t, &err), 0, "%s", err.msg);
	llmsim_trace_release(&t);
}

Test(trace_inject, nvtx_off_unless_asked)
{
	char env[1024], db[128];
	snprintf(db, sizeof db, "%s/n.db", dir);
	snprintf(env, sizeof env, "LLMSIM_TRACE_DB='%s' NVTX_INJECTION64_PATH='%s'", db, lib);
	cr_assert_eq(run(env), 0);
	struct llmsim_trace t;
	struct llmsim_err err = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(db, 0, &t, &err), 0, "%s", err.msg);
	cr_expect_eq(t.nkernels, 2);
	cr_expect_eq(t.nranges, 0);
	cr_expect_eq(t.run.nvtx, 0);
	cr_expect_eq(t.kernels[1].range_id, 0);
	llmsim_trace_release(&t);
}

Test(trace_inject, no_destination_no_trace)
{
	cr_assert_eq(run("LLMSIM_TRACE_NVTX=1"), 0);
	char out[128];
	snprintf(out, sizeof out, "grep -q 'not tracing' '%s/out'", dir);
	cr_expect_eq(system(out), 0);
}

/* Many kernels: records cross several buffers, handed to the library's
 * worker thread while the program runs; none may be lost. */
Test(trace_inject, many_buffers)
{
	char env[1024], db[128];
	snprintf(db, sizeof db, "%s/m.db", dir);
	snprintf(env, sizeof env, "LLMSIM_TRACE_DB='%s' NVTX_INJECTION64_PATH='%s'"
		 " LLMSIM_TRACE_NVTX=1", db, lib);
	cr_assert_eq(run_n(env, 5000), 0);
	struct llmsim_trace t;
	struct llmsim_err err = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(db, 0, &t, &err), 0, "%s", err.msg);
	cr_expect_eq(t.nkernels, 5002);
	cr_assert_eq(t.nranges, 4);
	cr_expect_str_eq(t.ranges[3].name, "decode b=1 ctx=8");
	size_t in_range = 0;
	for (size_t i = 0; i < t.nkernels; i++)
		in_range += t.kernels[i].range_id == t.ranges[3].id;
	cr_expect_eq(in_range, 5000);
	llmsim_trace_release(&t);
}
