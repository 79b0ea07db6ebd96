/*
 * test_plan_cli.c - `llmsim plan` as a user runs it: the honest counts in
 * text and JSON, the batch rule printed, a 7-GPU plan, the one line of an
 * impossible batch, --tokens, --emit (flags that match the configuration,
 * layouts a framework cannot express), the serving plan's shape, exit
 * status and closest configuration, and `spec`'s memory check. Expected
 * numbers are derived by hand in the comments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

static char out[1 << 21], err[1 << 14];

/* The integer after `"key": ` at or after p (its first occurrence). */
static long long json_int(const char *p, const char *key)
{
	char k[96];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *q = strstr(p, k);
	cr_assert(q != NULL, "no %s in %.300s", key, p);
	return atoll(q + strlen(k));
}

static double json_num(const char *p, const char *key)
{
	char k[96];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *q = strstr(p, k);
	cr_assert(q != NULL, "no %s", key);
	return atof(q + strlen(k));
}

/* 70B on 8 GPUs: 20 factorizations x 4320 = 86,400 configurations (see
 * test_plan.c) without a stack; under mcore-te (the default) 4 ways of
 * holding activations rather than 3 (activation offload to the H200's
 * host too): 115,200, priced and pruned given apart, with their rates. */
Test(plan_cli, honest_counts)
{
	int rc = run_llmsim("plan --model 70b --gpus 8 --json", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(json_parses(out));
	long long priced = json_int(out, "configs_priced"), pruned = json_int(out, "configs_pruned");
	cr_expect_eq(priced + pruned, 115200);
	cr_expect_eq(json_int(out, "configs_total"), 115200);
	/* the tool's own timing is not output (--verbose puts it on stderr) */
	cr_expect(!strstr(out, "priced_per_s") && !strstr(out, "elapsed_s"));
	cr_expect(strstr(out, "\"expected_error\"") && strstr(out, "\"equivalent\"") &&
		  strstr(out, "\"kinds\"") && strstr(out, "\"expected_error_frac\""));
	/* 4 Mi tokens of 4096 = 1024 sequences, from the rule */
	cr_expect_eq(json_int(out, "global_batch"), 1024);
	cr_expect(strstr(out, "\"global_batch_from_rule\": true") != NULL);
	/* --wide: the memory table's notes are a detail column */
	rc = run_llmsim("plan --model 70b --gpus 8 --wide", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "search: 115.2 K configurations") != NULL, "%.400s", out);
	cr_expect(strstr(out, "priced, ") && strstr(out, "pruned before pricing;"));
	cr_expect(strstr(out, "batch:  1024 sequences x 4096 tokens") != NULL);
	cr_expect(strstr(out, "(the batch rule: max(4 Mi, 1024 x 8 GPUs)") != NULL);
	cr_expect(strstr(out, "error:  +/-10% per step") != NULL);
	cr_expect(strstr(out, "best in HBM alone") && strstr(out, "best with offload"));
	/* under ZeRO-3 (DeepSpeed's, the optimizer offloaded) a GPU holds its
	 * shard: 70.55 G / 8 = 8.82 G */
	rc = run_llmsim("train --model 70b --gpus 8 --zero 3 --offload optimizer --stack deepspeed",
			out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "8.82 G params held (ZeRO-3 shard of 70.55 G") != NULL);
}

/* 8B on 7 GPUs plans: the rule's batch is 7 x 128 = 896 sequences. */
Test(plan_cli, seven_gpus)
{
	int rc = run_llmsim("plan --model 8b --gpus 7", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "batch:  896 sequences x 4096 tokens") != NULL, "%.300s", out);
}

/* An impossible batch: 1024 sequences over dp 7 (tp = pp = cp = 1 pinned)
 * divide by no micro-batch: one line naming the divisibility, exit 1. */
Test(plan_cli, impossible_batch_one_line)
{
	int rc = run_llmsim("plan --model 8b --gpus 7 --global-batch 1024 --tp 1 --pp 1 --cp 1",
			    out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	cr_expect(strstr(err, "llmsim plan: no configuration fits: batch: global batch 1024 is "
			      "not divisible by micro-batch (1-16) x dp") == err, "%s", err);
	/* the next multiple of 7 after 1024: 147 x 7 = 1029 */
	cr_expect(strstr(err, "use a multiple of 7 (e.g. --global-batch 1029)") != NULL, "%s", err);
	cr_expect(strstr(out, "hint: batch:") != NULL);
}

/* --tokens: time = tokens / (tokens/s), GPU-hours = time x GPUs / 3600. */
Test(plan_cli, token_budget)
{
	int rc = run_llmsim("plan --model 8b --gpus 8 --tokens 1e12 --top 1 --json", out,
			    sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *r = strstr(out, "\"results\"");
	cr_assert(r != NULL);
	double tps = json_num(r, "tokens_per_s"), t = json_num(r, "time_s");
	expect_close(t, 1e12 / tps, 1e-6);
	expect_close(json_num(r, "gpu_hours"), t * 8 / 3600, 1e-6);
	cr_expect_gt(json_num(r, "energy_j"), 0);
	rc = run_llmsim("plan --model 8b --gpus 8 --tokens 1e12 --top 1", out, sizeof out, err,
			sizeof err);
	cr_expect(strstr(out, "to train 1.00 T tokens with #1:") != NULL);
}

/* --emit megatron of Llama 3's layout (tp 8, pp 16, one chunk per stage):
 * 126 layers = 16 x 8 - 2, the first and the last stage one layer short:
 * 7 and 7; and the flags carry the configuration the JSON describes. */
Test(plan_cli, emit_megatron_matches)
{
	int rc = run_llmsim("plan --model 405b --gpu h100 --gpus 8192 --seq 8192 --global-batch "
			    "2048 --tp 8 --pp 16 --cp 1 --max-chunks 1 --top 1 --emit megatron --json",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *e = strstr(out, "\"launch\": ");
	cr_assert(e != NULL, "%.500s", out);
	static const char *const want[] = {
		"--num-layers 126", "--num-query-groups 8", "--seq-length 8192",
		"--tensor-model-parallel-size 8 --sequence-parallel",
		"--pipeline-model-parallel-size 16 --context-parallel-size 1",
		"--decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 7",
		"--global-batch-size 2048"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_expect(strstr(e, want[i]) != NULL, "missing %s in %.1200s", want[i], e);
	char mb[64];
	snprintf(mb, sizeof mb, "--micro-batch-size %lld", json_int(out, "micro_batch"));
	cr_expect(strstr(e, mb) != NULL, "%s", mb);
	long long z = json_int(out, "zero");
	cr_expect(z != 1 || strstr(e, "--use-distributed-optimizer") != NULL);
	cr_expect(z != 2 || strstr(e, "--data-parallel-sharding-strategy optim_grads ") != NULL);
}

/* --emit deepspeed: the batch (the rule's 1024 on 8 GPUs), micro-batch,
 * accumulation (1024 / (micro-batch x dp)) and ZeRO stage of #1. */
Test(plan_cli, emit_deepspeed_matches)
{
	int rc = run_llmsim("plan --model 8b --gpus 8 --cp 1 --pp 1 --top 1 --stack deepspeed "
			    "--emit deepspeed --json", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *c = strstr(out, "\"config\"");
	cr_assert(c != NULL);
	long long mb = json_int(c, "micro_batch"), dp = json_int(c, "dp"), z = json_int(c, "zero");
	const char *e = strstr(out, "\"launch\": ");
	cr_assert(e != NULL);
	char want[3][96];
	snprintf(want[0], sizeof want[0], "\\\"train_micro_batch_size_per_gpu\\\": %lld", mb);
	snprintf(want[1], sizeof want[1], "\\\"gradient_accumulation_steps\\\": %lld",
		 1024 / (mb * dp));
	snprintf(want[2], sizeof want[2], "\\\"stage\\\": %lld", z);
	cr_expect(strstr(e, "\\\"train_batch_size\\\": 1024") != NULL, "%.600s", e);
	for (int i = 0; i < 3; i++)
		cr_expect(strstr(e, want[i]) != NULL, "missing %s in %.600s", want[i], e);
}

/* A layout the framework cannot express says so: DeepSpeed has no ring
 * context parallelism (every row has cp 2 here), Megatron-LM no LoRA. */
Test(plan_cli, emit_cannot_express)
{
	int rc = run_llmsim("plan --model 8b --gpus 8 --cp 2 --emit deepspeed", out, sizeof out,
			    err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "llmsim plan: --emit deepspeed: DeepSpeed has no ring-attention "
			      "context parallelism (cp 2)") == err, "%s", err);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	rc = run_llmsim("plan --model 8b --gpus 8 --lora-rank 16 --emit megatron --top 1", out,
			sizeof out, err, sizeof err);
	/* #1 (LoRA) cannot be expressed; the first full-training row is */
	if (strstr(out, "lora r16"))
		cr_expect(strstr(err, "Megatron-LM has no LoRA") != NULL, "%s", err);
	rc = run_llmsim("plan --model 8b --gpus 8 --emit vllm", out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 2);
	cr_expect(strstr(err, "--emit vllm is for serving plans") != NULL, "%s", err);
}

/* The serving plan: the same shape as training's (#, #1 in detail, the
 * rejections), the front, and exit 1 with the closest when a target is
 * out of reach (a 10 ms TTFT for 2048 prompt tokens of 8B on 2 GPUs: see
 * test_plan_serve.c). */
Test(plan_cli, serve_shape_and_unreachable_target)
{
	int rc = run_llmsim("plan --workload serve --model 8b --gpus 2 --prompt 2048 --output 64 "
			    "--requests 60 --max-batch 16 --rate 2 --tpot-slo 0.05",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "#1 in detail:") && strstr(out, "\nrejected") &&
		  strstr(out, "Pareto front") && strstr(out, "search: ") &&
		  strstr(out, "aggregated (#") && strstr(out, "quantization weights bf16"),
		  "%.2000s", out);
	rc = run_llmsim("plan --workload serve --model 8b --gpus 2 --prompt 2048 --output 64 "
			"--requests 60 --max-batch 16", out, sizeof out, err, sizeof err);
	cr_expect(strstr(out, "targets: none: ranked by throughput only") != NULL);
	rc = run_llmsim("plan --workload serve --model 8b --gpus 2 --prompt 2048 --output 64 "
			"--requests 60 --max-batch 16 --ttft-slo 0.01",
			out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(out, "closest (none meets the targets)") != NULL);
	cr_expect(strstr(err, "the closest misses TTFT p99") != NULL, "%s", err);
	cr_expect_eq(count_lines(err), 1, "%s", err);
}

/* --emit vllm: tensor parallelism and max_num_seqs of #1. */
Test(plan_cli, emit_vllm_matches)
{
	int rc = run_llmsim("plan --workload serve --model 8b --gpus 2 --prompt 1024 --output 64 "
			    "--requests 60 --max-batch 16 --no-disagg --top 1 --emit vllm --json",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *r = strstr(out, "\"results\"");
	cr_assert(r != NULL);
	char tp[64], seqs[64];
	snprintf(tp, sizeof tp, "--tensor-parallel-size %lld", json_int(r, "tp"));
	snprintf(seqs, sizeof seqs, "--max-num-seqs %lld", json_int(r, "max_num_seqs"));
	const char *e = strstr(out, "\"launch\": ");
	cr_assert(e != NULL);
	cr_expect(strstr(e, tp) && strstr(e, seqs), "%.600s", e);
	if (json_int(r, "replicas") > 1) {
		char dp[64];
		snprintf(dp, sizeof dp, "--data-parallel-size %lld", json_int(r, "replicas"));
		cr_expect(strstr(e, dp) != NULL, "%.600s", e);
	}
	rc = run_llmsim("plan --workload serve --model 8b --gpus 2 --emit megatron", out,
			sizeof out, err, sizeof err);
	cr_expect_eq(rc, 2);
}

/* `spec` checks memory as `infer` does: 405B's 811 GB of bf16 weights
 * (405.9 B x 2 B) cannot sit on one 141 GB H200. */
Test(plan_cli, spec_checks_memory)
{
	int rc = run_llmsim("spec --model 405b --draft 8b --alpha 0.8", out, sizeof out, err,
			    sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "does not fit") != NULL, "%s", err);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	rc = run_llmsim("spec --model 70b --draft llama-3.2-1b --alpha 0.8 --gpus 2", out,
			sizeof out, err, sizeof err);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "memory per GPU") != NULL);
}

/* Without --gpus: the capacity question's answer line, the price and its
 * source, the front at each GPU count; JSON names the count needed. */
Test(plan_cli, serve_capacity)
{
	int rc = run_llmsim("plan --workload serve --model 8b --prompt 2048 --output 64 --requests 60 "
			    "--rate 20 --ttft-slo 0.5 --tpot-slo 0.02 --gpu-hour-price 2",
			    out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "serving on the fewest h200 GPUs") && strstr(out, "\nanswer: ") &&
		  strstr(out, "price:  $2.00 per GPU-hour (--gpu-hour-price)") &&
		  strstr(out, "at each GPU count") && strstr(out, "per million output tokens"),
		  "%.3000s", out);
	rc = run_llmsim("plan --workload serve --model 8b --prompt 2048 --output 64 --requests 60 "
			"--rate 20 --ttft-slo 0.5 --tpot-slo 0.02 --json",
			out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(json_parses(out));
	long long need = json_int(out, "gpus_needed");
	cr_expect_gt(need, 0);
	cr_expect_eq(json_int(strstr(out, "\"results\""), "gpus"), need);
	cr_expect(strstr(out, "\"price_source\": \"price_usd_per_gpu_hour of h200-sxm-141gb.yaml") != NULL);
	cr_expect_gt(json_num(out, "usd_per_million_output_tokens"), 0);
}

/* A TPOT no count of GPUs meets: one line naming the fastest figure,
 * exit 1. A rate of 0, a negative one or a NaN price: one line, exit 2;
 * so is a capacity question without a load or a target. */
Test(plan_cli, serve_capacity_bad_input)
{
	int rc = run_llmsim("plan --workload serve --model 8b --rate 10 --tpot-slo 0.0001", out,
			    sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	cr_expect(strstr(err, "no number of h200 GPUs meets TPOT p99 <= 0.0001 s") &&
		  strstr(err, "a token on the fastest layout"), "%s", err);
	cr_expect_eq(out[0], 0, "%s", out);
	static const char *const bad[] = {
		"--rate 0 --ttft-slo 1", "--rate -2 --ttft-slo 1", "--rate 5 --ttft-slo 1 --gpu-hour-price nan",
		"--rate nan --ttft-slo 1", "--ttft-slo 1", "--rate 5", "--gpus 2 --gpu-hour-price -1",
		"--rate 5 --ttft-slo 1 --prefix-share 1",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "plan --workload serve --model 8b %s", bad[i]);
		rc = run_llmsim(cmd, out, sizeof out, err, sizeof err);
		cr_expect_eq(rc, 2, "%s: %s", bad[i], err);
		cr_expect_eq(count_lines(err), 1, "%s: %s", bad[i], err);
	}
}

/* An offline plan with no target calls nothing met: the meets column says
 * "-", the plan exits 0 with nothing on stderr. */
Test(plan_cli, serve_offline_meets_nothing)
{
	int rc = run_llmsim("plan --workload serve --model 8b --gpus 2 --prompt 2048 --output 64 "
			    "--requests 60 --max-batch 16 --wide",
			    out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "best (no targets)") != NULL, "%.1500s", out);
	cr_expect(strstr(out, " yes ") == NULL, "%.3000s", out);
	cr_expect_eq(err[0], 0, "%s", err);
}
