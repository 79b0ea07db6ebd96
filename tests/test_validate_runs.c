/*
 * test_validate_runs.c - the runs files of `llmsim validate` as issue 21
 * extends them (calib/validate/train_runs.c, train_dist.c): the stack
 * fields a row may name and what each is priced as, published throughput,
 * the `suites:` targets, bad values named at file:line:col, the suites
 * judged as a whole, and the modern suites' rows, each of which prices or
 * says it does not fit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/validate/train_dist.h"
#include "calib/validate/train_runs.h"
#include "support.h"

static char out[1 << 20], err_out[1 << 14];

/* A runs file of text in a temporary file (path into path, 64 bytes). */
static void write_tmp(char *path, const char *text)
{
	snprintf(path, 64, "/tmp/llmsim_runs_XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	size_t n = strlen(text);
	cr_assert_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
}

/* Load text; returns the loader's status, the message in err. */
static int load_text(const char *text, struct llmsim_run_file *f, struct llmsim_err *err,
		     char *path)
{
	write_tmp(path, text);
	int rc = llmsim_run_file_load(path, f, err);
	unlink(path);
	return rc;
}

/* A row of Llama 3.1 70B on 64 GPUs at 256 x 8192 (7 lines). */
#define ROW(name, gpu)                                                        \
	"  - name: " name "\n"                                                  \
	"    source: \"test\"\n"                                              \
	"    model: llama-3.1-70b\n"                                          \
	"    gpu: " gpu "\n"                                                  \
	"    gpus: 64\n"                                                      \
	"    global_batch: 256\n"                                             \
	"    seq: 8192\n"
#define ROW_HEAD "runs:\n" ROW("x-70b", "gb200")

Test(validate_runs, stack_fields_pass_on)
{
	const char *text =
		"suites:\n"
		"  x: {median_abs_target_pct: 8, within_share_target: 0.9, bias_target_pct: 5,\n"
		"      not_fit_max: 0}\n" ROW_HEAD
		"    tp: 2\n"
		"    pp: 4\n"
		"    cp: 2\n"
		"    stack: mcore-te\n"
		"    precision: mxfp8\n"
		"    recompute_modules: [core_attn, mla_up_proj]\n"
		"    offload_activations: 0.25\n"
		"    fsdp: megatron\n"
		"    moe_dispatch: deepep\n"
		"    moe_overlap: true\n"
		"    tp_overlap: userbuffers\n"
		"    cp_comm: a2a+p2p\n"
		"    published_tokens_per_s_per_gpu: 4000\n"
		"    published_model_flops_per_s_per_gpu: 1.8e15\n"
		"    published_peak_memory_bytes: 1.5e11\n";
	struct llmsim_run_file f;
	struct llmsim_err err = {0};
	char path[64];
	cr_assert_eq(load_text(text, &f, &err, path), 0, "%s", err.msg);
	cr_assert_eq(f.n, 1);
	const struct llmsim_run_entry *e = &f.runs[0];
	/* what the row says, kept */
	cr_expect_str_eq(llmsim_run_stack_names[e->opts.stack], "mcore-te");
	cr_expect_eq(e->opts.precision, LLMSIM_RUN_PREC_MXFP8);
	cr_expect_eq(e->opts.recompute_modules, 1 << 0 | 1 << 3); /* core_attn, mla_up_proj */
	cr_expect_eq(e->opts.offload_activations, 0.25);
	cr_expect_str_eq(llmsim_run_fsdp_names[e->opts.fsdp], "megatron");
	cr_expect_str_eq(llmsim_run_moe_dispatch_names[e->opts.moe_dispatch], "deepep");
	cr_expect_eq(e->opts.moe_overlap, 1);
	cr_expect_str_eq(llmsim_run_tp_overlap_names[e->opts.tp_overlap], "userbuffers");
	cr_expect_str_eq(llmsim_run_cp_comm_names[e->opts.cp_comm], "a2a+p2p");
	cr_expect_str_eq(e->precision, "mxfp8");
	/* what is priced: fp8 GEMMs, Megatron's selective (core_attn), FSDP
	 * under a pipeline as zero 2 (parameters kept from forward to backward) */
	cr_expect_eq(e->cfg.dtype, LLMSIM_DT_FP8);
	cr_expect_eq(e->cfg.recompute, LLMSIM_RECOMP_SELECTIVE);
	cr_expect_eq(e->cfg.zero, 2);
	cr_expect_eq(e->cfg.dp, 64 / (2 * 4 * 2));
	/* and every substitution said */
	static const char *const said[] = {"stack mcore-te", "precision mxfp8",
					   "recompute_modules core_attn,mla_up_proj (priced as selective)",
					   "offload_activations 0.25", "fsdp megatron (priced as zero 2)",
					   "moe_dispatch deepep", "moe_overlap on",
					   "tp_overlap userbuffers", "cp_comm a2a+p2p"};
	for (size_t i = 0; i < sizeof said / sizeof *said; i++)
		cr_expect(strstr(e->not_modelled, said[i]), "'%s' not in '%s'", said[i],
			  e->not_modelled);
	/* 256 x 8192 tokens at 4000 tokens/s on each of 64 GPUs: 8.192 s */
	expect_close(e->published_step_s, 256.0 * 8192 / (4000.0 * 64), 1e-12);
	cr_expect_eq(e->published_tokens_per_gpu_s, 4000);
	cr_expect_eq(e->published_model_flops_per_gpu_s, 1.8e15);
	cr_expect_eq(e->published_peak_mem_bytes, 1.5e11);
	/* the suite's targets; within_pct defaults to 15 */
	cr_assert_eq(f.nsuites, 1);
	cr_expect_str_eq(f.suites[0].name, "x");
	cr_expect_eq(f.suites[0].median_abs_target_pct, 8);
	cr_expect_eq(f.suites[0].within_pct, 15);
	cr_expect_eq(f.suites[0].within_share_target, 0.9);
	cr_expect_eq(f.suites[0].bias_target_pct, 5);
	cr_expect_eq(f.suites[0].not_fit_max, 0);
	cr_expect_eq(e->held_back, 0);
	llmsim_run_file_release(&f);
}

/* Names the simulator has are priced as they are, with nothing noted; FSDP
 * without a pipeline is priced as zero 3. */
Test(validate_runs, known_names_priced_exactly)
{
	const char *text = ROW_HEAD "    tp: 8\n"
				    "    stack: megatron-2022\n"
				    "    precision: bf16\n"
				    "    recompute_modules: core_attn\n" ROW("y-70b", "h100")
				    "    tp: 8\n"
				    "    stack: llama3\n"
				    "    recompute: full\n"
				    "    recompute_method: uniform\n"
				    "    recompute_num_layers: 1\n"
				    "    fsdp: none\n" ROW("z-70b", "h100")
				    "    fsdp: fsdp2\n";
	struct llmsim_run_file f;
	struct llmsim_err err = {0};
	char path[64];
	cr_assert_eq(load_text(text, &f, &err, path), 0, "%s", err.msg);
	cr_assert_eq(f.n, 3);
	cr_expect_eq(f.runs[0].cfg.stack, LLMSIM_STACK_MEGATRON_2022);
	cr_expect_eq(f.runs[0].cfg.recompute, LLMSIM_RECOMP_SELECTIVE);
	cr_expect_eq(f.runs[0].cfg.dtype, LLMSIM_DT_BF16);
	cr_expect_str_eq(f.runs[0].not_modelled, "");
	/* llama3 is today the llama3 recipe; uniform groups recompute every layer */
	cr_expect_eq(f.runs[1].cfg.recipe, LLMSIM_RECIPE_LLAMA3);
	cr_expect_eq(f.runs[1].cfg.recompute, LLMSIM_RECOMP_FULL);
	cr_expect_eq(f.runs[1].cfg.zero, 0);
	cr_expect_str_eq(f.runs[1].not_modelled, "");
	cr_expect_str_eq(f.runs[1].precision, "bf16");
	/* FSDP without a pipeline: parameters sharded too */
	cr_expect_eq(f.runs[2].cfg.zero, 3);
	cr_expect(strstr(f.runs[2].not_modelled, "fsdp fsdp2 (priced as zero 3)"));
	llmsim_run_file_release(&f);
}

struct bad {
	const char *tail;  /* appended to ROW_HEAD (or the whole file when it starts "suites") */
	int line, col;     /* where the message must point */
	const char *says;
};

static const struct bad bad_cases[] = {
	{"    recompute_modules: [core_attn, attn]\n", 9, 36, "unknown module 'attn'"},
	{"    precision: fp6\n", 9, 16, "'precision' must be one of"},
	{"    stack: megatron-lm\n", 9, 12, "'stack' must be one of"},
	{"    tp_overlap: userbuffers\n", 9, 17, "needs tp > 1"},
	{"    cp_comm: p2p\n", 9, 14, "needs cp > 1"},
	{"    offload_activations: 1.5\n", 9, 26, "share from 0 to 1"},
	{"    fsdp: zero3\n", 9, 11, "'fsdp' must be one of"},
	{"    moe_dispatch: deepep2\n", 9, 19, "'moe_dispatch' must be one of"},
	{"    recompute: full\n    recompute_modules: [mlp]\n", 10, 24, "needs 'recompute: modules'"},
	{"    recompute: modules\n", 9, 16, "needs 'recompute_modules'"},
	{"    recompute_num_layers: 4\n", 9, 27, "needs 'recompute: full'"},
	{"    dtype: fp8\n    precision: bf16\n", 10, 16, "disagrees with 'dtype'"},
	{"    published_step_time_s: 2\n    published_tokens_per_s_per_gpu: 4000\n", 10, 37,
	 "give one of"},
	{"    recompute_modules: {a: 1}\n", 9, 24, "must be a list of names"},
};

Test(validate_runs, bad_values_located)
{
	for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
		char text[2048], path[64], where[96];
		snprintf(text, sizeof text, "%s%s", ROW_HEAD, bad_cases[i].tail);
		struct llmsim_run_file f;
		struct llmsim_err err = {0};
		int rc = load_text(text, &f, &err, path);
		cr_expect_neq(rc, 0, "case %zu loaded", i);
		snprintf(where, sizeof where, "%s:%d:%d:", path, bad_cases[i].line, bad_cases[i].col);
		cr_expect(strstr(err.msg, where) && strstr(err.msg, bad_cases[i].says),
			  "case %zu: '%s' wants %s ... %s", i, err.msg, where, bad_cases[i].says);
		cr_expect_null(f.runs);
	}
}

Test(validate_runs, bad_suites_located)
{
	static const struct bad cases[] = {
		{"suites:\n  x: {median_abs_target: 8}\n", 2, 7, "unknown key 'median_abs_target'"},
		{"suites:\n  nosuch: {not_fit_max: 0}\n", 2, 3, "suite 'nosuch' has no runs"},
		{"suites:\n  x: {within_share_target: 1.5}\n", 2, 28, "within_share_target"},
		{"suites: [x]\n", 1, 9, "'suites' must map"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[2048], path[64], where[96];
		snprintf(text, sizeof text, "%s%s    suite: x\n", cases[i].tail, ROW_HEAD);
		struct llmsim_run_file f;
		struct llmsim_err err = {0};
		cr_expect_neq(load_text(text, &f, &err, path), 0, "case %zu loaded", i);
		snprintf(where, sizeof where, "%s:%d:%d:", path, cases[i].line, cases[i].col);
		cr_expect(strstr(err.msg, where) && strstr(err.msg, cases[i].says),
			  "case %zu: '%s' wants %s ... %s", i, err.msg, where, cases[i].says);
	}
}

/* Rows of hand-picked errors: the statistics follow from them. */
Test(validate_runs, dist_statistics)
{
	struct llmsim_run_suite t = {.median_abs_target_pct = 8, .within_pct = 15,
				     .within_share_target = 0.9, .bias_target_pct = 5,
				     .not_fit_max = 0};
	struct llmsim_run_point p[] = {
		{"h100", "bf16", 1, 1, 1, -4},  {"h100", "fp8-current", 1, 1, 1, 6},
		{"b200", "mxfp8", 1, 1, 1, -20}, {"b200", "mxfp8", 1, 1, 1, -10},
		{"gb200", "mxfp8", 1, 0, 1, 3}, /* does not fit: counted apart */
		{"gb200", "bf16", 1, 1, 0, 0},  /* a memory row: no error */
		{"h100", "bf16", 0, 0, 0, 0},   /* failed */
	};
	struct llmsim_run_dist d;
	llmsim_run_dist_compute(&t, p, sizeof p / sizeof *p, &d);
	cr_expect_eq(d.rows, 7);
	cr_expect_eq(d.priced, 4);
	cr_expect_eq(d.not_fit, 1);
	cr_expect_eq(d.failed, 1);
	/* |err| 4, 6, 10, 20: median 8; signed -20, -10, -4, 6: median -7 */
	expect_close(d.median_abs_pct, 8, 1e-12);
	expect_close(d.median_signed_pct, -7, 1e-12);
	expect_close(d.within_share, 0.75, 1e-12); /* 20 is out of 15 */
	cr_expect(d.pass_median);
	cr_expect(!d.pass_within);
	cr_expect(!d.pass_fit);
	cr_assert_eq(d.ngpu, 3);
	cr_expect_str_eq(d.gpu[0].name, "b200"); /* sorted */
	expect_close(d.gpu[0].median_signed_pct, -15, 1e-12);
	cr_expect(!d.gpu[0].pass);
	cr_expect_str_eq(d.gpu[1].name, "gb200");
	cr_expect_eq(d.gpu[1].n, 0);
	cr_expect(d.gpu[1].pass); /* nothing priced: no bias to judge */
	expect_close(d.gpu[2].median_signed_pct, 1, 1e-12); /* h100: -4, 6 */
	cr_expect(d.gpu[2].pass);
	cr_assert_eq(d.nprecision, 3);
	cr_expect_str_eq(d.precision[2].name, "mxfp8");
	expect_close(d.precision[2].median_signed_pct, -15, 1e-12);
	cr_expect(!d.pass_bias);
	cr_expect(!d.pass);
	/* without targets nothing is judged */
	struct llmsim_run_suite none = {.within_pct = 15, .not_fit_max = -1};
	cr_expect(!llmsim_run_suite_has_targets(&none));
	llmsim_run_dist_compute(&none, p, 4, &d);
	cr_expect(d.pass);
}

/* Every row of the modern suites loads, and prices or says it does not fit;
 * each is a throughput row with a step-time error. */
Test(validate_runs, modern_rows_price_or_do_not_fit)
{
	static const char *const files[] = {"train_modern.yaml", "train_modern_heldback.yaml"};
	int rows = 0, held = 0;
	for (size_t fi = 0; fi < 2; fi++) {
		char path[512];
		snprintf(path, sizeof path, "%s/models/runs/%s", LLMSIM_SOURCE_DIR, files[fi]);
		struct llmsim_run_file f;
		struct llmsim_err err = {0};
		cr_assert_eq(llmsim_run_file_load(path, &f, &err), 0, "%s", err.msg);
		cr_assert_eq(f.nsuites, 1);
		cr_expect(llmsim_run_suite_has_targets(&f.suites[0]));
		for (int i = 0; i < f.n; i++) {
			const struct llmsim_run_entry *e = &f.runs[i];
			struct llmsim_run_outcome o;
			cr_assert_eq(llmsim_run_predict(e, &o, &err), 0, "%s: %s", e->name, err.msg);
			double pct;
			cr_expect_eq(llmsim_run_time_error(&o, &pct), 0, "%s: no throughput", e->name);
			cr_expect(isfinite(pct), "%s", e->name);
			cr_expect(o.r.fits || o.r.mem.total_bytes > o.r.mem.hbm_bytes ||
					  o.r.mem.host_per_node_bytes > o.r.mem.host_bytes,
				  "%s: not fitting without a reason", e->name);
			cr_expect(e->precision[0], "%s", e->name);
			held += e->held_back;
			rows++;
		}
		llmsim_run_file_release(&f);
	}
	cr_expect_geq(rows, 30);
	cr_expect_eq(held, 15);
}

/* The CLI: --only runs each modern suite, the held-back one only when
 * named; every row says whether it fits; the targets make it exit 1. */
Test(validate_runs, cli_modern_suites)
{
	int rc = run_llmsim("validate --only modern --json --no-fail", out, sizeof out, err_out,
			    sizeof err_out);
	cr_assert_eq(rc, 0, "%s", err_out);
	cr_expect(json_parses(out));
	cr_expect(strstr(out, "\"distributions\"") && strstr(out, "\"by_precision\"") &&
		  strstr(out, "\"by_gpu\"") && strstr(out, "\"not_fit\"") &&
		  strstr(out, "\"fits\"") && strstr(out, "\"not_modelled\""), "%s", out);
	cr_expect(!strstr(out, "\"suite\": \"modern-heldback\""));
	rc = run_llmsim("validate --only modern-heldback", out, sizeof out, err_out, sizeof err_out);
	cr_expect_neq(rc, 2, "%s", err_out);
	cr_expect(strstr(out, "modern-heldback") && strstr(out, "judged not to fit"), "%s", out);
	rc = run_llmsim("validate --json --no-fail", out, sizeof out, err_out, sizeof err_out);
	cr_assert_eq(rc, 0, "%s", err_out);
	cr_expect(strstr(out, "\"suite\": \"modern\"") && !strstr(out, "modern-heldback"),
		  "held-back rows ran without being named");
}
