/*
 * test_train_cli.c - `llmsim train`, `plan` and `validate` as a user runs
 * them: JSON keys, exit statuses, one error line per violation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

static char out[1 << 20], err[1 << 14];

Test(train_cli, json_keys)
{
	int rc = run_llmsim("train --model 8b --gpus 8 --tp 2 --zero 1 --recompute selective "
			    "--global-batch 64 --seq 2048 --json",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *keys[] = {"\"memory_bytes_per_gpu\"", "\"weights\"", "\"grads\"",
			      "\"optimizer\"", "\"activations\"", "\"other\"", "\"total\"",
			      "\"step_time_s\"", "\"tokens_per_s\"", "\"mfu\"", "\"hfu\"",
			      "\"breakdown_s\"", "\"compute\"", "\"comm_exposed\"", "\"bubble\"",
			      "\"fits\": true"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		cr_expect(strstr(out, keys[i]) != NULL, "missing %s", keys[i]);
}

Test(train_cli, single_gpu_human)
{
	int rc = run_llmsim("train --model llama-3.2-1b --gpus 1 --global-batch 8 --seq 2048 "
			    "--recompute full",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "memory per GPU") && strstr(out, "time per step") &&
		  strstr(out, "MFU"));
}

Test(train_cli, violations_one_line_each)
{
	/* 64 heads / tp 3, 80 layers / pp 3, 3*3*1 != 8 GPUs */
	int rc = run_llmsim("train --model 70b --gpus 8 --tp 3 --pp 3 --dp 1", out, sizeof out,
			    err, sizeof err);
	cr_expect_eq(rc, 1);
	int lines = 0;
	for (const char *p = err; *p; p++)
		lines += *p == '\n';
	cr_expect_eq(lines, 3, "%s", err);
	cr_expect(strstr(err, "llmsim train: ") == err, "%s", err);
}

Test(train_cli, out_of_memory_says_by_how_much)
{
	/* 70B with 18 B/param on one GPU cannot fit */
	int rc = run_llmsim("train --model 70b --gpus 1 --global-batch 8", out, sizeof out, err,
			    sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "does not fit") && strstr(err, "more than"), "%s", err);
	cr_expect(strstr(out, "shortfall") != NULL);
}

Test(train_cli, usage_errors)
{
	cr_expect_eq(run_llmsim("train --model 8b --tpp 2", out, sizeof out, err, sizeof err), 2);
	cr_expect_eq(run_llmsim("train --model 8b --recompute some", out, sizeof out, err,
				sizeof err), 2);
	cr_expect_eq(run_llmsim("train --gpus 8", out, sizeof out, err, sizeof err), 2);
	cr_expect_eq(run_llmsim("plan --model 8b", out, sizeof out, err, sizeof err), 2);
	/* a huge --top once tried to allocate the whole list up front */
	cr_expect_eq(run_llmsim("plan --model 8b --gpus 8 --top 1000000000", out, sizeof out, err,
				sizeof err), 2);
	cr_expect_str_eq(err, "llmsim plan: --top: at most 1000 rows (the search keeps them sorted as it goes), got '1000000000'\n");
}

Test(train_cli, plan_json)
{
	int rc = run_llmsim("plan --model 8b --gpus 8 --seq 2048 --global-batch 64 --top 3 --json",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"configs_priced\"") && strstr(out, "\"configs_pruned\"") && strstr(out, "\"configs_feasible\"") &&
		  strstr(out, "\"results\"") && strstr(out, "\"rejected\""));
	cr_expect(!strstr(out, "\"elapsed_s\"")); /* stdout is reproducible */
	cr_expect(strstr(out, "\"rank\": 3") != NULL);
}

Test(train_cli, plan_nothing_fits)
{
	/* 405B on 8 GPUs: 18 B/param x 406B > 8 x 141 GB */
	int rc = run_llmsim("plan --model 405b --gpus 8", out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(out, "closest") && strstr(out, "shortfall"), "%s", out);
	cr_expect(strstr(err, "no configuration fits") != NULL, "%s", err);
}

Test(train_cli, validate_runs)
{
	int rc = run_llmsim("validate --json --no-fail", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"mean_abs_error_pct\"") && strstr(out, "\"step_time\"") &&
		  strstr(out, "\"error_pct\"") && strstr(out, "\"max_abs_error_pct\"") &&
		  strstr(out, "\"suite\": \"k22-table5\"") &&
		  strstr(out, "\"suite\": \"n21-table1\"") &&
		  strstr(out, "\"suite\": \"k22-figure1\"") &&
		  strstr(out, "\"activations_per_layer\""));
	rc = run_llmsim("validate --only k22-figure1", out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 0, "%s%s", out, err);
	cr_expect(strstr(out, "k22-act-1t-sp-sel") && !strstr(out, "k22-22b-full"), "%s", out);
}

/* The shipped suites against their targets, without --no-fail: Megatron's
 * (Korthikanti Table 5, Narayanan Table 1), the activation closed forms and
 * Llama 3 (10% of Meta's MFU) meet theirs. Llama 3 missed (16K GPUs and
 * 131K context just past it) while the H100 file carried assumed GEMM and
 * attention efficiencies and the interleaved schedule's sends were exposed;
 * it takes the calibrated H200's efficiencies now (the same GH100 die:
 * hw/h100-sxm5-80gb.yaml's calibration_basis) and the sends overlap the next
 * chunk's compute (README "Published training runs"). */
Test(train_cli, validate_shipped_targets)
{
	static const char *const met[] = {"k22-table5", "n21-table1", "k22-figure1", "l24"};
	char args[128];
	for (size_t i = 0; i < sizeof met / sizeof met[0]; i++) {
		snprintf(args, sizeof args, "validate --only %s --wide", met[i]);
		int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
		cr_expect_eq(rc, 0, "%s: %s%s", met[i], out, err);
		cr_expect(strstr(out, " met") && !strstr(out, "MISSED"), "%s: %s", met[i], out);
	}
}

/* A row over its target makes validate exit 1, unless --no-fail; --only
 * runs one suite; an unknown suite is a usage error. */
Test(train_cli, validate_targets)
{
	const char *f = LLMSIM_TEST_DATA "/runs/targets.yaml";
	char args[512];
	snprintf(args, sizeof args, "validate --suite %s", f);
	int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1, "%s%s", out, err);
	cr_expect(strstr(out, "MISSED") && strstr(out, "1 suite target(s) missed"), "%s", out);
	snprintf(args, sizeof args, "validate --suite %s --no-fail", f);
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
	snprintf(args, sizeof args, "validate --suite %s --only loose", f);
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
	cr_expect(!strstr(out, "tight-22b"), "%s", out);
	snprintf(args, sizeof args, "validate --suite %s --only nosuch", f);
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 2, "%s%s", out, err);
	cr_expect(strstr(err, "nosuch"), "%s", err);
}

/* The README's job: 70B on one 8-GPU H200 node does not fit in HBM alone
 * (18 B/param x 70.6 B = 1.27 TB > 8 x 141 GB) but does with offload. */
Test(train_cli, plan_70b_on_8_fits_with_offload)
{
	int rc = run_llmsim("plan --model 70b --gpus 8 --json", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *p = strstr(out, "\"configs_feasible\": ");
	cr_assert(p != NULL, "%s", out);
	cr_expect_gt(atoll(p + strlen("\"configs_feasible\": ")), 0);
	cr_expect(strstr(out, "\"offload\": \"optimizer\"") || strstr(out, "\"offload\": \"params\""));
	cr_expect(strstr(out, "\"host_memory_bytes_per_node\"") != NULL);
	/* the winner's breakdown carries the offload part */
	cr_expect(strstr(out, "\"offload\": ") != NULL);
	rc = run_llmsim("plan --model 70b --gpus 8 --no-offload", out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1, "%s", out);
	rc = run_llmsim("plan --model 70b --gpus 8 --top 3", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "host memory per node") && strstr(out, "offload") &&
		  strstr(out, "search: "), "%s", out);
}

Test(train_cli, host_out_of_memory_says_by_how_much)
{
	int rc = run_llmsim("train --model 405b --gpus 8 --zero 3 --offload params "
			    "--recompute full --global-batch 64 --stack deepspeed",
			    out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "host out of memory") && strstr(err, "more than"), "%s", err);
}
