/*
 * test_sim_spec.c - op specs (parse, defaults, canonical format, round
 * trip, errors), names, op classes, and the `llmsim op` command's JSON
 * and error lines.
 */
#include <string.h>

#include "support.h"
#include "sim/sim.h"

static struct llmsim_op parse_ok(const char *s)
{
	struct llmsim_op op;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_op_parse(s, &op, &err), 0, "parse '%s': %s", s, err.msg);
	return op;
}

Test(sim_spec, defaults_and_canonical_form)
{
	char buf[512];
	struct llmsim_op op = parse_ok("gemm m=1 n=8192 k=8192");
	cr_expect_eq(op.kind, LLMSIM_OP_GEMM);
	cr_expect_eq(op.u.gemm.m, 1);
	cr_expect_eq(op.u.gemm.batch, 1);
	cr_expect_eq(op.dtype, LLMSIM_DT_BF16);
	cr_expect_eq(op.u.gemm.b_dtype, LLMSIM_DT_BF16);
	llmsim_op_format(&op, buf, sizeof buf);
	cr_expect_str_eq(buf, "gemm m=1 n=8192 k=8192 batch=1 dtype=bf16 b_dtype=bf16");

	op = parse_ok("attention impl=flash2 batch=1 heads=32 seq=4096 head_dim=128");
	cr_expect_eq(op.u.attn.kv_heads, 32);
	cr_expect_eq(op.u.attn.kv_seq, 4096);
	cr_expect_eq(op.u.attn.v_head_dim, 128);
	cr_expect_eq(op.u.attn.causal, 1);
	cr_expect_eq(op.u.attn.pass, LLMSIM_PASS_FWD);

	op = parse_ok("decode impl=paged batch=8 heads=32 kv_heads=8 kv_len=4096 head_dim=128 "
		      "dtype=fp16");
	cr_expect_eq(op.u.dec.q_len, 1);
	cr_expect_eq(op.u.dec.block_size, 16);
	cr_expect_eq(op.u.dec.kv_dtype, LLMSIM_DT_FP16);
	cr_expect_eq(op.u.dec.mla_absorbed, 1);

	op = parse_ok("collective kind=allreduce bytes=1e9 gpus=8");
	cr_expect_eq(op.u.coll.bytes, 1e9);
	cr_expect_eq(op.u.coll.nodes, 1);
	cr_expect_eq(op.u.coll.algo, LLMSIM_ALGO_AUTO);
	llmsim_op_format(&op, buf, sizeof buf);
	cr_expect_str_eq(buf, "collective kind=allreduce bytes=1000000000 gpus=8 nodes=1 algo=auto "
			      "dtype=bf16");
	op = parse_ok("elementwise kind=rmsnorm tokens=8192 hidden=8192");
	cr_expect_eq(op.kind, LLMSIM_OP_ELEMENTWISE);
	cr_expect_str_eq(llmsim_op_class(&op), "elementwise");
}

Test(sim_spec, round_trip)
{
	static const char *const specs[] = {
		"gemm m=4096 n=4096 k=4096",
		"gemm m=1 n=8192 k=8192 batch=4 dtype=bf16 b_dtype=int4",
		"gemm m=77 n=3 k=5 dtype=fp8",
		"ew kind=rmsnorm tokens=8192 hidden=8192 pass=bwd dtype=fp32",
		"ew kind=adamw tokens=1 hidden=70000000000",
		"attention impl=flash3 batch=2 heads=64 kv_heads=8 seq=8192 kv_seq=16384 "
		"head_dim=192 v_head_dim=128 causal=0 pass=fwdbwd dtype=fp16",
		"decode impl=flashdecoding batch=8 heads=128 kv_heads=1 kv_len=32768 head_dim=128 "
		"q_len=4 block_size=64 kv_lora_rank=512 rope_dim=64 mla_absorbed=0 dtype=bf16 "
		"kv_dtype=fp8",
		"collective kind=alltoall bytes=123456789.5 gpus=64 nodes=8 algo=ring",
	};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		char b1[512], b2[512];
		struct llmsim_op a = parse_ok(specs[i]);
		int n = llmsim_op_format(&a, b1, sizeof b1);
		cr_expect(n > 0 && (size_t)n < sizeof b1);
		struct llmsim_op b = parse_ok(b1);
		cr_expect(!memcmp(&a, &b, sizeof a), "round trip of '%s' via '%s'", specs[i], b1);
		llmsim_op_format(&b, b2, sizeof b2);
		cr_expect_str_eq(b1, b2);
	}
	/* the format reports the length it needs */
	struct llmsim_op op = parse_ok("gemm m=1 n=2 k=3");
	char tiny[8];
	cr_expect_eq(llmsim_op_format(&op, tiny, sizeof tiny),
		     (int)strlen("gemm m=1 n=2 k=3 batch=1 dtype=bf16 b_dtype=bf16"));
}

static void parse_fails(const char *s, const char *want)
{
	struct llmsim_op op;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_op_parse(s, &op, &err), LLMSIM_EINVAL, "'%s' parsed", s);
	cr_expect(strstr(err.msg, want), "'%s': message '%s' lacks '%s'", s, err.msg, want);
	cr_expect(!strchr(err.msg, '\n'));
}

Test(sim_spec, errors)
{
	parse_fails("", "empty");
	parse_fails("gemx m=1", "unknown op kind 'gemx'");
	parse_fails("gemm m=1 n=2", "missing k");
	parse_fails("gemm m=1 n=2 k=3 q=4", "unknown key 'q'");
	parse_fails("gemm m=x n=2 k=3", "bad value 'x' for m");
	parse_fails("gemm m=1 n=2 k=3 m=4", "duplicate key 'm'");
	parse_fails("gemm m=1 n=2 k=3 dtype=fp7", "unknown dtype 'fp7'");
	parse_fails("gemm m=1 n=2 k", "expected key=value");
	parse_fails("attention impl=flash9 batch=1 heads=1 seq=1 head_dim=1", "unknown impl");
	parse_fails("attention impl=flash2 batch=1 heads=1 seq=1 head_dim=1 causal=2", "0 or 1");
	parse_fails("collective kind=allreduce bytes=lots gpus=8", "bad value 'lots'");
}

Test(sim_spec, names)
{
	for (int i = 0; i < LLMSIM_EW_COUNT; i++)
		cr_expect_eq(llmsim_ew_kind_parse(llmsim_ew_kind_name(i)), i);
	for (int i = 0; i < LLMSIM_ATTN_IMPL_COUNT; i++)
		cr_expect_eq(llmsim_attn_impl_parse(llmsim_attn_impl_name(i)), i);
	for (int i = 0; i < LLMSIM_DEC_IMPL_COUNT; i++)
		cr_expect_eq(llmsim_decode_impl_parse(llmsim_decode_impl_name(i)), i);
	for (int i = 0; i < LLMSIM_COLL_COUNT; i++)
		cr_expect_eq(llmsim_coll_kind_parse(llmsim_coll_kind_name(i)), i);
	cr_expect_eq(llmsim_ew_kind_parse("nope"), -1);
	cr_expect_str_eq(llmsim_bound_name(LLMSIM_BOUND_HBM), "hbm");
	cr_expect_null(llmsim_bound_name(LLMSIM_BOUND_COUNT));
}

Test(sim_cli, op_gemm_json)
{
	static char out[16384], err[4096];
	int rc = run_llmsim("op gemm --m 1 --n 8192 --k 8192 --json", out, sizeof out, err,
			    sizeof err);
	cr_assert_eq(rc, 0, "rc %d, stderr: %s", rc, err);
	static const char *const keys[] = {
		"\"flops\": ", "\"hbm_bytes\": ", "\"hbm_read_bytes\": ", "\"hbm_write_bytes\": ",
		"\"time_s\": ", "\"bound\": \"hbm\"", "\"intensity_flops_per_byte\": ",
		"\"blocks\": ", "\"waves\": ", "\"occupancy\": ", "\"tile_m\": ", "\"tile_n\": ",
		"\"tile_k\": ", "\"split_k\": ", "\"time_err_pct\": ", "\"op_class\": \"gemm\"",
		"\"spec\": \"gemm m=1 n=8192 k=8192 batch=1 dtype=bf16 b_dtype=bf16\"",
		/* 2 * 1 * 8192 * 8192 */
		"\"flops\": 134217728",
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		cr_expect(strstr(out, keys[i]), "no %s in %s", keys[i], out);
	cr_expect(out[0] == '{');
}

Test(sim_cli, op_kinds_and_errors)
{
	static char out[16384], err[4096];
	cr_expect_eq(run_llmsim("op spec \"ew kind=rmsnorm tokens=8 hidden=4096\" --json", out,
				sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "\"op_class\": \"elementwise\""), "%s", out);
	cr_expect_eq(run_llmsim("op attention --impl flash2 --batch 1 --heads 32 --kv-heads 8 "
				"--seq 2048 --head-dim 128 --causal", out, sizeof out, err,
				sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "bound"), "%s", out);
	cr_expect_eq(run_llmsim("op decode --impl paged --batch 8 --heads 32 --kv-heads 8 "
				"--kv-len 4096 --head-dim 128 --json", out, sizeof out, err,
				sizeof err), 0, "%s", err);
	cr_expect_eq(run_llmsim("op collective --kind allreduce --bytes 1e9 --gpus 8 --json", out,
				sizeof out, err, sizeof err), 0, "%s", err);
	cr_expect(strstr(out, "\"bound\": \"link\""), "%s", out);
	/* a bad shape: exit 1, one line */
	cr_expect_eq(run_llmsim("op attention --batch 1 --heads 32 --kv-heads 5 --seq 128 "
				"--head-dim 128", out, sizeof out, err, sizeof err), 1);
	cr_expect_str_eq(err, "llmsim op attention: heads (32) must be divisible by kv_heads (5)\n");
	/* fp8 on an A100 */
	cr_expect_eq(run_llmsim("op gemm --m 8 --n 8 --k 8 --dtype fp8 --gpu a100", out, sizeof out,
				err, sizeof err), 1);
	cr_expect(strstr(err, "fp8"), "%s", err);
	/* usage errors exit 2 */
	cr_expect_eq(run_llmsim("op gemm --m 1 --n 1", out, sizeof out, err, sizeof err), 2);
	cr_expect_eq(run_llmsim("op gemmx", out, sizeof out, err, sizeof err), 2);
	cr_expect_eq(run_llmsim("op spec \"gemm m=1\"", out, sizeof out, err, sizeof err), 1);
}
