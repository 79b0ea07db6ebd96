/*
 * test_stack.c - software stacks as data (sim/train/stack.h): every shipped
 * stack loads and says what it launches; broken files fail at their
 * file:line:col with exit 1; a layout a stack cannot launch names the
 * feature and the stacks that have it; a user's edited copy is used as
 * written (issue 21, item 1 and its bad input).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"
#include "sim/train/stack.h"
#include "support.h"

static char out[1 << 20], err[1 << 14];

static struct llmsim_stack_def load_ok(const char *name)
{
	struct llmsim_stack_def s;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_stack_load(name, &s, &e), 0, "%s: %s", name, e.msg);
	return s;
}

static int has(const struct llmsim_stack_def *s, enum llmsim_feature f)
{
	return (s->features & 1u << f) != 0;
}

/* The shipped stacks, with what distinguishes them: the old behaviours keep
 * their program (Megatron-LM v2/v3's collectives) and recipe; mcore-te has
 * TE's userbuffer overlap and recompute modules; DeepSpeed has ZeRO-3 and
 * offload but no CP; TorchTitan shards with FSDP2. */
Test(stack, shipped_stacks_load)
{
	struct llmsim_stack_def s = load_ok("megatron-2021");
	cr_expect_eq(s.program, LLMSIM_STACK_MEGATRON_2021);
	cr_expect(!has(&s, LLMSIM_FEAT_SP) && !has(&s, LLMSIM_FEAT_CP) && !has(&s, LLMSIM_FEAT_ZERO1));
	s = load_ok("megatron-2022");
	cr_expect_eq(s.program, LLMSIM_STACK_MEGATRON_2022);
	cr_expect(has(&s, LLMSIM_FEAT_SP) && has(&s, LLMSIM_FEAT_RECOMPUTE_SELECTIVE));
	s = load_ok("core");
	cr_expect_eq(s.program, LLMSIM_STACK_CORE);
	/* the allowances llmsim used before stacks were data */
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	cr_expect_eq(s.allow.context_bytes, c.allow.context_bytes);
	cr_expect_eq(s.allow.fragmentation_frac, c.allow.fragmentation_frac);
	s = load_ok("llama3");
	cr_expect_eq(s.recipe, LLMSIM_RECIPE_LLAMA3);
	cr_expect_eq(s.allow.fragmentation_frac, 0);
	s = load_ok("mcore-te");
	cr_expect_eq(s.emit, LLMSIM_EMIT_MEGATRON);
	cr_expect_eq(s.fsdp, LLMSIM_FSDP_MEGATRON);
	cr_expect_eq(s.tp_overlap, 2); /* userbuffers */
	cr_expect(has(&s, LLMSIM_FEAT_RECOMPUTE_MODULES));
	cr_expect_eq(s.modules, (1u << LLMSIM_RM_COUNT) - 1);
	cr_expect(!has(&s, LLMSIM_FEAT_ZERO3) && !has(&s, LLMSIM_FEAT_OFFLOAD_PARAMS));
	cr_expect(s.allow.nccl_bytes_per_group > 0 && s.allow.error_frac > 0);
	s = load_ok("deepspeed");
	cr_expect(has(&s, LLMSIM_FEAT_ZERO3) && has(&s, LLMSIM_FEAT_OFFLOAD_PARAMS));
	cr_expect(!has(&s, LLMSIM_FEAT_CP) && !has(&s, LLMSIM_FEAT_SP));
	cr_expect_eq(s.emit, LLMSIM_EMIT_DEEPSPEED);
	s = load_ok("torchtitan");
	cr_expect_eq(s.fsdp, LLMSIM_FSDP_FSDP2);
	cr_expect(has(&s, LLMSIM_FEAT_CP) && !has(&s, LLMSIM_FEAT_ZERO1));
	cr_expect_eq(s.emit, LLMSIM_EMIT_TORCHTITAN);
}

/* What a configuration needs, and what launches it: DeepSpeed refuses
 * ZeRO-2 with PP (its pipeline engine), mcore-te ZeRO-3 as DeepSpeed runs
 * it (Megatron shards with Megatron-FSDP). */
Test(stack, launches)
{
	struct llmsim_model m;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_model_load("8b", &m, &e), 0, "%s", e.msg);
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	c.gpus = 8, c.pp = 2, c.dp = 4, c.zero = 2;
	struct llmsim_stack_def ds = load_ok("deepspeed"), te = load_ok("mcore-te");
	c.fsdp = ds.fsdp;
	c.sequence_parallel = 0;
	uint32_t need = llmsim_stack_needs(&m, &c);
	cr_expect(need & 1u << LLMSIM_FEAT_PP && need & 1u << LLMSIM_FEAT_ZERO2);
	char why[512];
	cr_expect_eq(llmsim_stack_launches(&ds, &m, &c, why, sizeof why, NULL), -1);
	cr_expect(strstr(why, "refuses") && strstr(why, "pipeline parallelism with ZeRO-2"), "%s",
		  why);
	c.pp = 1, c.dp = 8;
	cr_expect_eq(llmsim_stack_launches(&ds, &m, &c, why, sizeof why, NULL), 0, "%s", why);
	/* ZeRO-3 as DeepSpeed: not mcore-te's; as Megatron-FSDP: yes */
	c.zero = 3;
	int missing;
	cr_expect_eq(llmsim_stack_launches(&te, &m, &c, why, sizeof why, &missing), -1);
	cr_expect_eq(missing, LLMSIM_FEAT_ZERO3);
	cr_expect_eq(llmsim_stack_check(&te, &m, &c, why, sizeof why), -1);
	cr_expect(strstr(why, "ZeRO-3") && strstr(why, "stacks with it: deepspeed"), "%s", why);
	c.fsdp = te.fsdp;
	cr_expect_eq(llmsim_stack_launches(&te, &m, &c, why, sizeof why, NULL), 0, "%s", why);
	/* a module the stack does not know */
	struct llmsim_stack_def core = load_ok("core");
	c.zero = 0, c.fsdp = LLMSIM_FSDP_NONE;
	c.recompute = LLMSIM_RECOMP_MODULES, c.recompute_modules = 1u << LLMSIM_RM_MLP;
	cr_expect_eq(llmsim_stack_check(&core, &m, &c, why, sizeof why), -1);
	cr_expect(strstr(why, "recomputation by module") && strstr(why, "mcore-te"), "%s", why);
}

/* Broken files: one line with file:line:col and exit 1 from the CLI. */
static void broken(const char *file, int line, int col, const char *what)
{
	char path[512], args[1024], want[600];
	test_data(path, sizeof path, file);
	snprintf(args, sizeof args, "train --model 8b --gpus 8 --stack %s", path);
	int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1, "%s: exit %d", file, rc);
	snprintf(want, sizeof want, "%s:%d:%d: ", path, line, col);
	cr_expect(strstr(err, want) != NULL, "%s: want '%s' in: %s", file, want, err);
	cr_expect(strstr(err, what) != NULL, "%s: want '%s' in: %s", file, what, err);
	cr_expect_eq(count_lines(err), 1, "%s: one line: %s", file, err);
}

Test(stack, bad_files)
{
	broken("stacks/unknown_key.yaml", 10, 3, "unknown key 'fragmentation'");
	broken("stacks/tp_overlap_no_tp.yaml", 12, 7, "TP overlap 'userbuffers' without tensor "
	       "parallelism");
	broken("stacks/tp_overlap_no_sp.yaml", 11, 7, "TP overlap 'bulk' without sequence "
	       "parallelism");
	broken("stacks/bad_module.yaml", 10, 34, "unknown recompute module 'attention_softmax'");
	broken("stacks/bad_feature.yaml", 9, 18, "unknown feature 'zero4'");
}

/* A layout the stack lacks a feature for: exit 1, the feature named, the
 * stacks that have it; an unknown stack name lists the known ones. */
Test(stack, cli_missing_feature)
{
	int rc = run_llmsim("train --model 8b --gpus 8 --cp 2 --stack deepspeed", out, sizeof out,
			    err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "the deepspeed stack cannot launch context parallelism ('cp')") &&
		  strstr(err, "stacks with it: core, llama3, mcore-te, torchtitan"), "%s", err);
	rc = run_llmsim("train --model 8b --gpus 8 --stack nosuch", out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "unknown stack 'nosuch'") && strstr(err, "mcore-te"), "%s", err);
	rc = run_llmsim("plan --model 8b --gpus 8 --cp 2 --stack deepspeed", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 1, "a pinned cp the stack cannot launch");
	cr_expect(strstr(err, "the deepspeed stack cannot launch context parallelism ('cp'); "
			 "stacks with it: core, llama3, mcore-te, torchtitan") != NULL, "%s", err);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	rc = run_llmsim("plan --model 8b --gpus 8 --dtype fp8 --stack deepspeed", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "FP8 matmuls ('fp8'); stacks with it: core, mcore-te, torchtitan") !=
		  NULL, "%s", err);
}

/* A user's copy edited: no CP in it, so the planner never tries cp > 1,
 * and its 3% fragmentation is the one a row holds. */
Test(stack, user_copy)
{
	char path[512], args[1024];
	test_data(path, sizeof path, "stacks/no_cp.yaml");
	snprintf(args, sizeof args, "plan --model 8b --gpus 8 --stack %s --top 8 --json", path);
	int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"cp\": 2") == NULL && strstr(out, "\"cp\": 4") == NULL);
	cr_expect(strstr(out, "\"stack\": \"my-stack\"") != NULL);
	snprintf(args, sizeof args, "train --model 8b --gpus 8 --tp 2 --stack %s --json", path);
	rc = run_llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	const char *f = strstr(out, "\"fragmentation\": ");
	const char *t = strstr(out, "\"total\": ");
	cr_assert(f && t);
	double frag = atof(f + 17), total = atof(t + 9);
	/* 3% of everything but the fragmentation: frag / (total - frag) */
	expect_close(frag / (total - frag), 0.03, 1e-9);
}

/* What train leaves unsaid comes from the stack: megatron-2022 runs naive
 * attention (no FlashAttention in Korthikanti et al.) with sequence
 * parallelism; megatron-2021 has no sequence parallelism; deepspeed's
 * AutoTP none either; an attention kernel asked for the stack lacks is
 * refused with the stacks that have it. */
Test(stack, train_defaults_from_the_stack)
{
	int rc = run_llmsim("train --model gpt-22b --gpu a100 --gpus 8 --tp 8 --global-batch 8 "
			    "--seq 2048 --stack megatron-2022 --json", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"attention\": \"naive\"") && strstr(out, "\"sequence_parallel\": true"),
		  "%.400s", out);
	cr_expect(strstr(out, "\"stack\": \"megatron-2022\"") && strstr(out, "\"program\": "
									  "\"megatron-2022\""));
	rc = run_llmsim("train --model gpt-22b --gpu a100 --gpus 8 --tp 8 --global-batch 8 "
			"--seq 2048 --stack megatron-2021 --json", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "\"sequence_parallel\": false") != NULL);
	rc = run_llmsim("train --model gpt-22b --gpu a100 --gpus 8 --tp 8 --global-batch 8 "
			"--seq 2048 --stack megatron-2021 --attention flash2", out, sizeof out, err,
			sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(err, "cannot launch FlashAttention-2 ('attention_flash2'); stacks with it:") !=
		  NULL, "%s", err);
}
