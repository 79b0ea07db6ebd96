/*
 * test_hw.c - the hardware loader: every shipped file loads and every name
 * resolves; published figures come back as stored; broken files fail with
 * the exact path:line:col message; profiles apply; `llmsim hw` works. (The
 * fuzz target, fuzz_hw, replays its corpus as the CTest test fuzz_corpus_hw.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/gpu.h"
#include "hw/gpu_load.h"
#include "support.h"

#define FIX(buf, name) test_data(buf, sizeof buf, name)

static void init(void)
{
	setenv("LLMSIM_NO_PROFILE", "1", 1);
}

/* ---- shipped files ---- */

static void count_one(const char *path, void *ctx)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	int rc = llmsim_gpu_load_file(path, &g, &err);
	cr_expect_eq(rc, 0, "%s: %s", path, err.msg);
	/* its name and every alias resolve back to it */
	for (int i = -1; !rc && i < g.naliases; i++) {
		struct llmsim_gpu r;
		const char *n = i < 0 ? g.name : g.aliases[i];
		cr_expect_eq(llmsim_gpu_load(n, &r, &err), 0, "%s: %s", n, err.msg);
		cr_expect_str_eq(r.name, g.name, "%s", n);
	}
	(*(int *)ctx)++;
}

Test(hw, every_shipped_file_loads, .init = init)
{
	int n = 0;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_list(count_one, &n, &err), 0, "%s", err.msg);
	cr_expect_geq(n, 10, "expected at least the 10 shipped GPUs, listed %d", n);
}

Test(hw, names_aliases_stems_and_paths_resolve, .init = init)
{
	const struct {
		const char *name, *want;
	} cases[] = {
		{"a100", "a100"}, {"h100", "h100"}, {"h200", "h200"}, {"b200", "b200"},
		{"mi300x", "mi300x"}, {"H200", "h200"}, {"MI300X", "mi300x"},
		{"h200-sxm-141gb", "h200"}, {"a100-sxm4-80gb", "a100"}, {"h100-sxm5-80gb", "h100"},
		{"b200-sxm-180gb", "b200"}, {"h200-sxm", "h200"}, {"h800", "h800"}, {"h20", "h20"},
		{"gb200", "gb200"}, {"nvl72", "gb200"}, {"l40s", "l40s"}, {"mi325x", "mi325x"},
		{"h800-sxm5-80gb", "h800"}, {"l40s-48gb", "l40s"},
		{LLMSIM_SOURCE_DIR "/hw/h100-sxm5-80gb.yaml", "h100"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct llmsim_gpu g;
		struct llmsim_err err = {0};
		int rc = llmsim_gpu_load(cases[i].name, &g, &err);
		cr_expect_eq(rc, 0, "%s: %s", cases[i].name, err.msg);
		if (!rc)
			cr_expect_str_eq(g.name, cases[i].want, "%s", cases[i].name);
	}
}

Test(hw, unknown_name_lists_the_known_ones, .init = init)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h300", &g, &err), LLMSIM_ENOENT);
	cr_expect_str_eq(err.msg, "unknown GPU 'h300' (known: a100, b200, gb200, h100, h20, h200, "
				  "h800, l40s, mi300x, mi325x)");
}

Test(hw, h200_published_and_observed_figures, .init = init)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &g, &err), 0, "%s", err.msg);
	cr_expect_eq(g.sms, 132);
	/* nvidia-smi on the calibration H200: 143771 MiB = 143771 * 2^20 B */
	expect_close(g.hbm_bytes, 143771.0 * 1048576.0, 0);
	/* PyTorch on the calibration H200: L2 = 60 MiB */
	expect_close(g.l2_bytes, 60.0 * 1048576.0, 0);
	/* whitepaper: 132 SMs x 4096 dense FP16 FLOP/clk x 1.83 GHz */
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 132.0 * 4096 * 1.83e9, 1e-3);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP8), 2 * 132.0 * 4096 * 1.83e9, 1e-3);
	expect_close(g.hbm_bytes_per_s, 4.8e12, 0);
	/* NVLink 4: 900 GB/s both directions = 450 GB/s each way */
	expect_close(g.intra_node_bytes_per_s, 900e9 / 2, 0);
	/* no FP4 tensor cores on Hopper */
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP4), 0, 0);
	/* FP32 has no tensor path here: the vector rate (66.9 TFLOP/s) */
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP32), 66.9e12, 1e-9);
}

Test(hw, other_gpus_headline_figures, .init = init)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("b200", &g, &err), 0, "%s", err.msg);
	cr_expect_eq(g.sms, 148); /* 2 dies x 74 SMs */
	expect_close(g.hbm_bytes_per_s, 7.7e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP4), 18e15 / 2, 0); /* 18 PF sparse */
	expect_close(g.intra_node_bytes_per_s, 1.8e12 / 2, 0);

	cr_assert_eq(llmsim_gpu_load("mi300x", &g, &err), 0, "%s", err.msg);
	cr_expect_eq(g.warp_size, 64);
	cr_expect_eq(g.sms, 8 * 38);
	expect_close(g.smem_bytes_per_sm, 64 * 1024, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 1307.4e12, 0);

	cr_assert_eq(llmsim_gpu_load("a100", &g, &err), 0, "%s", err.msg);
	cr_expect_eq(g.sms, 108);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 312e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP8), 0, 0);
	expect_close(g.smem_bytes_per_sm, 164 * 1024, 0);
}

/* The added GPUs against their datasheets (dense = the sparse figure / 2). */
Test(hw, added_gpus_datasheet_figures, .init = init)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	/* H800: the H100 SXM5 with NVLink at 400 GB/s both ways and FP64 at 1 TF */
	cr_assert_eq(llmsim_gpu_load("h800", &g, &err), 0, "%s", err.msg);
	expect_close(g.intra_node_bytes_per_s, 400e9 / 2, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP64), 1e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 1979e12 / 2, 1e-3);
	expect_close(g.hbm_bytes_per_s, 3.35e12, 0);
	/* H20: 96 GB at 4.0 TB/s, 148 BF16 / 296 FP8 TFLOP/s, 400 W, NVLink 900 GB/s */
	cr_assert_eq(llmsim_gpu_load("h20", &g, &err), 0, "%s", err.msg);
	expect_close(g.hbm_bytes, 96e9, 0);
	expect_close(g.hbm_bytes_per_s, 4.0e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 148e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP8), 296e12, 0);
	expect_close(g.tdp_w, 400, 0);
	expect_close(g.intra_node_bytes_per_s, 900e9 / 2, 0);
	/* GB200 NVL72, per GPU of the rack: BF16 360 PF / 72 sparse, FP4 1440 PF /
	 * 72 sparse, 576 TB/s / 72 of HBM3e, NVLink 130 TB/s / 72 both ways, one
	 * NVLink domain of 72 over trays of 4 */
	cr_assert_eq(llmsim_gpu_load("gb200", &g, &err), 0, "%s", err.msg);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 360e15 / 72 / 2, 1e-9);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP4), 1440e15 / 72 / 2, 1e-9);
	expect_close(g.hbm_bytes_per_s, 576e12 / 72, 1e-9);
	expect_close(g.intra_node_bytes_per_s, 130e12 / 72 / 2, 0.01);
	cr_expect_eq(g.gpus_per_node, 4);
	cr_expect_eq(g.nvlink_domain_gpus, 72);
	cr_expect_eq(llmsim_gpu_nvlink_domain(&g), 72);
	cr_expect_eq(g.cpu_cores, 2592 / 36 * 2);
	/* L40S: 18,176 CUDA cores at 128 a SM, 864 GB/s, BF16 362.05 TF, 350 W */
	cr_assert_eq(llmsim_gpu_load("l40s", &g, &err), 0, "%s", err.msg);
	cr_expect_eq(g.sms, 18176 / 128);
	expect_close(g.hbm_bytes_per_s, 864e9, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 362.05e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP8), 1466e12 / 2, 0);
	cr_expect_eq(g.nvlink_domain_gpus, g.gpus_per_node, "no NVLink: the node is the domain");
	/* MI325X: the MI300X's rates, 256 GB HBM3E at 6 TB/s, 1000 W */
	cr_assert_eq(llmsim_gpu_load("mi325x", &g, &err), 0, "%s", err.msg);
	expect_close(g.hbm_bytes, 256e9, 0);
	expect_close(g.hbm_bytes_per_s, 6e12, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 1307.4e12, 0);
	expect_close(g.tdp_w, 1000, 0);
}

/* interconnect.nvlink_domain_gpus: whole nodes, at least one */
Test(hw, nvlink_domain_is_whole_nodes)
{
	char p[512];
	FIX(p, "hw/tiny-gpu.yaml");
	FILE *f = fopen(p, "r");
	cr_assert_not_null(f);
	char text[8192];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	const char *at = strstr(text, "  gpus_per_node: 8\n");
	cr_assert_not_null(at);
	size_t head = (size_t)(at - text) + strlen("  gpus_per_node: 8\n");
	static const struct {
		const char *line;
		int ok, domain;
	} cases[] = {
		{"  nvlink_domain_gpus: 72\n", 1, 72},
		{"", 1, 8},
		{"  nvlink_domain_gpus: 12\n", 0, 0},
		{"  nvlink_domain_gpus: 4\n", 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char buf[8400];
		snprintf(buf, sizeof buf, "%.*s%s%s", (int)head, text, cases[i].line, text + head);
		struct llmsim_gpu g;
		struct llmsim_err err = {0};
		int rc = llmsim_gpu_load_buf(buf, strlen(buf), "t.yaml", &g, &err);
		if (cases[i].ok) {
			cr_expect_eq(rc, 0, "%s", err.msg);
			cr_expect_eq(g.nvlink_domain_gpus, cases[i].domain);
		} else {
			/* the key sits on line 39, after gpus_per_node (line 38) */
			cr_expect_str_eq(err.msg, "t.yaml:39:23: 'nvlink_domain_gpus' must be a multiple of "
						  "'gpus_per_node' (whole nodes share one NVLink domain)");
		}
	}
}

/* ---- a valid fixture: defaults, peaks ---- */

Test(hw, fixture_fills_defaults_for_missing_efficiencies, .init = init)
{
	char p[512];
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(FIX(p, "hw/tiny-gpu.yaml"), &g, &err), 0, "%s", err.msg);
	cr_expect_str_eq(g.name, "tiny");
	cr_expect_eq(g.naliases, 1);
	cr_expect_str_eq(g.aliases[0], "tiny-alias");
	expect_close(g.param[LLMSIM_PARAM_HBM_FRACTION], 0.5, 0); /* set in the file */
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		if (i != LLMSIM_PARAM_HBM_FRACTION)
			expect_close(g.param[i], llmsim_param_info[i].def, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16), 1e14, 0);
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP32), 1e13, 0); /* vector only */
	expect_close(llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP8), 0, 0);
	cr_expect_eq(g.profile_path[0], 0);
	cr_expect_null(llmsim_gpu_err_class(&g, "gemm"));
}

Test(hw, param_info_table_is_complete)
{
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++) {
		cr_expect_not_null(llmsim_param_info[i].key);
		cr_expect_not_null(llmsim_param_info[i].doc);
		cr_expect_gt(llmsim_param_info[i].def, 0, "%s", llmsim_param_info[i].key);
	}
	cr_expect_str_eq(llmsim_param_info[LLMSIM_PARAM_GEMM_TENSOR_FRACTION].key,
			 "gemm_tensor_fraction");
}

/* Each parameter's name in the code is its key in capitals, and the key
 * ends in its unit: _s, _bytes, a _fraction or a ratio (_relative), or
 * what it counts per what (_per_...), or a count (max_channels). */
Test(hw, param_names_are_their_keys_with_units)
{
	static const char *const names[LLMSIM_PARAM_COUNT] = {
#define LLMSIM_PARAM(e, key, d, doc) [LLMSIM_PARAM_##e] = #e,
#include "hw/gpu_params.h"
#undef LLMSIM_PARAM
	};
	static const char *const units[] = {"_s", "_bytes", "_fraction", "_relative",
					    "_per_s", "_per_thread", "_per_sm", "_per_element",
					    "_channels", "_hz", "_exponent"};
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++) {
		const char *k = llmsim_param_info[i].key;
		char upper[64];
		size_t n = strlen(k);
		cr_assert_lt(n, sizeof upper);
		for (size_t c = 0; c <= n; c++)
			upper[c] = (char)(k[c] >= 'a' && k[c] <= 'z' ? k[c] - 'a' + 'A' : k[c]);
		cr_expect_str_eq(names[i], upper);
		int unit = 0;
		for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
			size_t m = strlen(units[u]);
			unit |= n > m && !strcmp(k + n - m, units[u]);
		}
		cr_expect(unit, "'%s' does not end in a unit", k);
	}
}

/* ---- broken files: exact messages (positions counted by hand in each fixture) ---- */

static void expect_fail(const char *name, const char *msg)
{
	char p[512], want[1024];
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	FIX(p, name);
	cr_expect_neq(llmsim_gpu_load_file(p, &g, &err), 0, "%s loaded", name);
	snprintf(want, sizeof want, "%s:%s", p, msg);
	cr_expect_str_eq(err.msg, want);
}

Test(hw, broken_fixtures_fail_with_position)
{
	expect_fail("hw/bad-unknown-key.yaml", "18:3: unknown key 'smem_per_sm' in 'sm_limits'");
	/* a required key spelt wrong: the wrong spelling is named where it
	 * stands (line 18 of the fixture), with the key it stands for */
	expect_fail("hw/bad-misspelt-key.yaml", "18:3: unknown key 'smem_per_sm' in 'sm_limits' "
						"(did you mean 'smem_bytes_per_sm'?)");
	/* a missing key is reported at its mapping: sm_limits' first key, line 13 */
	expect_fail("hw/bad-missing-key.yaml", "13:3: missing key 'warps_per_sm_max' in 'sm_limits'");
	expect_fail("hw/bad-wrong-type.yaml", "8:8: 'sms' must be a finite number, got 'many'");
	expect_fail("hw/bad-zero-size.yaml", "26:14: 'hbm_bytes' must be positive, got 0");
	expect_fail("hw/bad-negative-size.yaml", "29:13: 'l2_bytes' must be positive, got -5");
	expect_fail("hw/bad-fraction.yaml", "46:17: 'hbm_fraction' must be in (0, 1], got 1.5");
	expect_fail("hw/bad-duplicate-key.yaml", "10:3: duplicate key 'sms'");
	expect_fail("hw/bad-syntax.yaml", "8:10: mapping values are not allowed in this context");
	expect_fail("hw/bad-tab.yaml",
		    "9:1: found a tab character that violates indentation while scanning a plain scalar");
	expect_fail("hw/bad-empty.yaml", "1:1: empty document");
	expect_fail("hw/bad-not-integer.yaml", "9:14: 'warp_size' must be an integer, got 32.5");
	expect_fail("hw/bad-clocks.yaml", "11:18: 'base_clock_hz' must not exceed 'boost_clock_hz'");
	expect_fail("hw/bad-not-mapping.yaml", "7:10: 'compute' must be a mapping");
	/* keys the files once had: each is named where it stands, with what
	 * became of it */
	expect_fail("hw/bad-retired-clock.yaml",
		    "12:3: 'sustained_clock_hz' is now 'burst_clock_hz' (the clock a tensor-bound "
		    "kernel holds in a burst)");
	expect_fail("hw/bad-retired-launch.yaml",
		    "45:1: 'kernel_launch_s' is no longer read (nothing used it; PyTorch eager's "
		    "host time per kernel is infer's eager_host_s): delete it");
	expect_fail("hw/bad-relation.yaml",
		    "49:13: 'relation' must be one of same_die, new_memory, new_architecture, "
		    "other_vendor, got 'cousin'");
	expect_fail("hw/bad-self-basis.yaml",
		    "48:8: 'gpu' of 'calibration_basis' must name another GPU");
}

/* ---- the calibrated basis of an uncalibrated GPU ---- */

/* The H100 and H800 (the H200's GH100 die on HBM3) take the H200's
 * efficiencies, its profile's fitted ones included, for every key their
 * files do not state; the H20 keeps the one it states (no power limit
 * modelled); a new architecture (B200) takes none of them. */
Test(hw, shared_die_takes_the_basis_values)
{
	unsetenv("LLMSIM_NO_PROFILE");
	struct llmsim_gpu h200, h100, h800, h20, b200;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h100", &h100, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h800", &h800, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h20", &h20, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("b200", &b200, &err), 0, "%s", err.msg);
	cr_expect_str_eq(h100.basis, "h200");
	cr_expect_eq(h100.relation, LLMSIM_REL_NEW_MEMORY);
	cr_expect_eq(b200.relation, LLMSIM_REL_NEW_ARCHITECTURE);
	static const enum llmsim_param die[] = {
		LLMSIM_PARAM_GEMM_TENSOR_FRACTION, LLMSIM_PARAM_ATTENTION3_TENSOR_FRACTION,
		LLMSIM_PARAM_KERNEL_OVERHEAD_S, LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ};
	for (size_t i = 0; i < sizeof die / sizeof die[0]; i++) {
		const char *k = llmsim_param_info[die[i]].key;
		expect_close(h100.param[die[i]], h200.param[die[i]], 0);
		cr_expect(h100.param_from_basis[die[i]], "%s", k);
		expect_close(h800.param[die[i]], h200.param[die[i]], 0);
		cr_expect_not(b200.param_from_basis[die[i]], "%s", k);
	}
	/* stated in its own file: kept */
	expect_close(h20.param[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ], 1e12, 0);
	cr_expect_not(h20.param_from_basis[LLMSIM_PARAM_POWER_CAPPED_CLOCK_HZ]);
	expect_close(h800.param[LLMSIM_PARAM_COLLECTIVE_MAX_CHANNELS], 16, 0);
	expect_close(h20.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION],
		     h200.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION], 0);
}

/* A measurement's device name is a GPU's when its name or an alias stands
 * in it as a word: the H100's NVML name is not the H200's, the H200's is
 * not the H20's, the GB200's not the B200's. */
Test(hw, device_names_match_by_word, .init = init)
{
	struct llmsim_gpu h100, h200, h20, b200;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load("h100", &h100, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h200", &h200, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("h20", &h20, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_load("b200", &b200, &err), 0, "%s", err.msg);
	cr_expect(llmsim_gpu_device_is(&h100, "NVIDIA H100 80GB HBM3"));
	cr_expect_not(llmsim_gpu_device_is(&h200, "NVIDIA H100 80GB HBM3"));
	cr_expect(llmsim_gpu_device_is(&h200, "NVIDIA H200"));
	cr_expect_not(llmsim_gpu_device_is(&h20, "NVIDIA H200"));
	cr_expect_not(llmsim_gpu_device_is(&b200, "NVIDIA GB200"));
	cr_expect(llmsim_gpu_device_is(&b200, "NVIDIA B200"));
}

Test(hw, missing_file_is_enoent)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_gpu_load("/nonexistent/x.yaml", &g, &err), LLMSIM_ENOENT);
}

/* ---- profiles ---- */

Test(hw, profile_replaces_efficiency_and_attaches_errors, .init = init)
{
	char p[512], q[512];
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(FIX(p, "hw/tiny-gpu.yaml"), &g, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_gpu_apply_profile(&g, FIX(q, "hw/profiles/tiny.yaml"), &err), 0, "%s",
		     err.msg);
	expect_close(g.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION], 0.7, 0);
	/* untouched: the hardware file's */
	expect_close(g.param[LLMSIM_PARAM_HBM_FRACTION], 0.5, 0);
	cr_expect_str_eq(g.profile_path, q);
	const struct llmsim_err_class *c = llmsim_gpu_err_class(&g, "gemm");
	cr_assert_not_null(c);
	expect_close(c->median_abs_pct, 2.1, 0);
	expect_close(c->p80_abs_pct, 4.5, 0);
	expect_close(c->p90_abs_pct, 7.5, 0);
	expect_close(c->bias_pct, -1.5, 0);
	cr_expect(llmsim_err_class_biased(c)); /* 1.5 >= 1 and >= 2.1 / 2 */
	cr_expect_eq(c->n, 40);
	/* a class written before p80 was: its p90 stands for it; no bias given: 0 */
	const struct llmsim_err_class *e = llmsim_gpu_err_class(&g, "elementwise");
	cr_assert_not_null(e);
	expect_close(e->p80_abs_pct, 3.0, 0);
	cr_expect_not(llmsim_err_class_biased(e));
	cr_expect_null(llmsim_gpu_err_class(&g, "attention"));
}

static void expect_profile_fail(const char *name, const char *msg)
{
	char p[512], q[512], want[1024];
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(FIX(p, "hw/tiny-gpu.yaml"), &g, &err), 0, "%s", err.msg);
	FIX(q, name);
	cr_expect_neq(llmsim_gpu_apply_profile(&g, q, &err), 0, "%s applied", name);
	snprintf(want, sizeof want, "%s:%s", q, msg);
	cr_expect_str_eq(err.msg, want);
	/* a failed profile leaves the GPU as it was */
	expect_close(g.param[LLMSIM_PARAM_GEMM_TENSOR_FRACTION],
		     llmsim_param_info[LLMSIM_PARAM_GEMM_TENSOR_FRACTION].def, 0);
	cr_expect_eq(g.profile_path[0], 0);
}

Test(hw, broken_profiles_fail_with_position)
{
	expect_profile_fail("hw/profiles/bad-key.yaml", "3:3: unknown key 'gemm_fraction' in 'efficiency'");
	expect_profile_fail("hw/profiles/wrong-gpu.yaml", "1:6: profile is for GPU 'h300', not 'tiny'");
	expect_profile_fail("hw/profiles/bad-top-key.yaml", "2:1: unknown key 'calibraton'");
	expect_profile_fail("hw/profiles/bad-fraction.yaml", "3:17: 'hbm_fraction' must be in (0, 1], got 0");
	expect_profile_fail("hw/profiles/bad-class.yaml", "3:9: missing key 'n' in 'gemm'");
	expect_profile_fail("hw/profiles/bad-p80.yaml", "3:28: 'p80' must not be below 'median'");
	/* measured on another GPU than the hardware file it is loaded with */
	expect_profile_fail("hw/profiles/wrong-device.yaml",
			    "3:11: profile measured on 'NVIDIA H200', loaded with the hardware file "
			    "of 'Tiny Test GPU' (tiny)");
	char p[512], q[512];
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(FIX(p, "hw/tiny-gpu.yaml"), &g, &err), 0, "%s", err.msg);
	cr_expect_eq(llmsim_gpu_apply_profile(&g, FIX(q, "hw/profiles/right-device.yaml"), &err), 0,
		     "%s", err.msg);
}

Test(hw, profile_buffer_entry_point)
{
	char p[512];
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_gpu_load_file(FIX(p, "hw/tiny-gpu.yaml"), &g, &err), 0, "%s", err.msg);
	const char prof[] = "gpu: TINY-ALIAS\nefficiency: {hbm_fraction: 0.25}\n";
	cr_assert_eq(llmsim_gpu_apply_profile_buf(&g, prof, sizeof prof - 1, "mem", &err), 0, "%s",
		     err.msg);
	expect_close(g.param[LLMSIM_PARAM_HBM_FRACTION], 0.25, 0);
}

/* ---- the CLI ---- */

static char out[1 << 16], errb[4096];

Test(hw_cli, show_json_parses, .init = init)
{
	cr_assert_eq(run_llmsim("hw show h200 --json", out, sizeof out, errb, sizeof errb), 0, "%s",
		     errb);
	cr_expect(json_parses(out), "not JSON:\n%s", out);
	cr_expect_not_null(strstr(out, "\"hbm_bytes\": 150754820096"), "%s", out);
	cr_expect_not_null(strstr(out, "\"sms\": 132"));
	cr_expect_not_null(strstr(out, "\"peak_flops_per_s_by_dtype\": {"));
	cr_expect_not_null(strstr(out, "\"efficiency\": {"));
}

Test(hw_cli, list_json_and_table, .init = init)
{
	cr_assert_eq(run_llmsim("hw list --json", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect(json_parses(out), "not JSON:\n%s", out);
	cr_assert_eq(run_llmsim("hw list", out, sizeof out, errb, sizeof errb), 0, "%s", errb);
	cr_expect_not_null(strstr(out, "mi300x"));
	cr_expect_geq(count_lines(out), 2 + 10, "header, rule and the 10 shipped GPUs:\n%s", out);
}

Test(hw_cli, errors_are_one_line, .init = init)
{
	cr_expect_eq(run_llmsim("hw show h200 --bogus", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_eq(count_lines(errb), 1, "%s", errb);
	cr_expect_eq(run_llmsim("hw show h300", out, sizeof out, errb, sizeof errb), 1);
	cr_expect_str_eq(errb, "llmsim hw show: unknown GPU 'h300' (known: a100, b200, gb200, h100, "
			       "h20, h200, h800, l40s, mi300x, mi325x)\n");
	cr_expect_eq(out[0], 0);
	cr_expect_eq(run_llmsim("hw frob", out, sizeof out, errb, sizeof errb), 2);
	cr_expect_eq(count_lines(errb), 1, "%s", errb);
}

Test(hw_cli, profile_found_in_data_dir_and_disabled_by_env)
{
	char d[512];
	setenv("LLMSIM_DATA_DIR", FIX(d, ""), 1);
	unsetenv("LLMSIM_NO_PROFILE");
	cr_assert_eq(run_llmsim("hw show tiny-gpu --json", out, sizeof out, errb, sizeof errb), 0,
		     "%s", errb);
	cr_expect(json_parses(out), "not JSON:\n%s", out);
	cr_expect_not_null(strstr(out, "\"gemm_tensor_fraction\": 0.7"), "%s", out);
	cr_expect_not_null(strstr(out, "\"calibration\": {"), "%s", out);
	cr_expect_not_null(strstr(out, "\"fit_cases\": 12"), "%s", out);
	setenv("LLMSIM_NO_PROFILE", "1", 1);
	cr_assert_eq(run_llmsim("hw show tiny-gpu --json", out, sizeof out, errb, sizeof errb), 0,
		     "%s", errb);
	cr_expect_null(strstr(out, "\"calibration\""), "%s", out);
	cr_expect_not_null(strstr(out, "\"gemm_tensor_fraction\": 0.8"), "%s", out);
}

/* ---- the host section (offload) ---- */

Test(hw, host_section_loads_and_is_checked, .init = init)
{
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	/* DGX H200: 2 TB, 2x Xeon 8480C = 112 cores, 2 x 8 x DDR5-4800 x 8 B */
	cr_assert_eq(llmsim_gpu_load("h200", &g, &err), 0, "%s", err.msg);
	cr_expect(g.has_host);
	expect_close(g.host_memory_bytes, 2e12, 1e-12);
	expect_close(g.host_memory_bytes_per_s, 2.0 * 8 * 4800e6 * 8, 1e-12);
	cr_expect_eq(g.cpu_cores, 112);
	cr_expect_eq(g.gpus_per_host_link, 1);
	/* a file without the section loads, with no host to offload to */
	char p[4096];
	FIX(p, "hw/tiny-gpu.yaml");
	cr_assert_eq(llmsim_gpu_load_file(p, &g, &err), 0, "%s", err.msg);
	cr_expect_not(g.has_host);
	expect_fail("hw/bad-host-cores.yaml", "47:14: 'cpu_cores' must be positive, got 0");
}
