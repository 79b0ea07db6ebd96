/*
 * test_cli_conventions.c - the conventions every verb of the llmsim
 * executable keeps (issue 16, README "Conventions"): --json output that
 * parses, with one shape per key; the error object under --json; exit
 * status 2 for usage and range errors, 1 for a configuration that is
 * invalid or does not fit; default tables within 100 columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsonread.h"
#include "support.h"

static char out[1 << 21], errb[1 << 14];
static char dir[] = "/tmp/llmsim-conv-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

/* Parse out; NULL (with a failed expectation) when it is not JSON. */
static struct llmsim_jdoc *parse(const char *what)
{
	struct llmsim_jdoc *doc = NULL;
	struct llmsim_err err = {0};
	int rc = llmsim_json_parse(out, strlen(out), what, &doc, &err);
	cr_expect_eq(rc, 0, "%s: not JSON (%s):\n%.2000s", what, err.msg, out);
	return rc ? NULL : doc;
}

/* ---- one shape per key ---- */

/* Whether every leaf under n is a number or null. */
static int numeric(const struct llmsim_jnode *n)
{
	if (n->kind == LLMSIM_J_NUM || n->kind == LLMSIM_J_NULL)
		return 1;
	if (n->kind != LLMSIM_J_ARR && n->kind != LLMSIM_J_OBJ)
		return 0;
	for (size_t i = 0; i < n->n; i++)
		if (!numeric(n->vals[i]))
			return 0;
	return 1;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* A key that names a unit holds numbers in it (a number, or an array or
 * object of them); a latency is a number, its distribution an object of
 * mean/p50/p90/p99 under the key plus "_dist". */
static void check_shapes(const char *what, const struct llmsim_jnode *n)
{
	static const char *const units[] = {"_s", "_bytes", "_hz", "_pct", "_per_s", "_flops",
					    "_frac"};
	if (n->kind != LLMSIM_J_ARR && n->kind != LLMSIM_J_OBJ)
		return;
	for (size_t i = 0; i < n->n; i++) {
		const struct llmsim_jnode *v = n->vals[i];
		if (n->kind == LLMSIM_J_OBJ) {
			const char *k = n->keys[i];
			for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
				if (ends_with(k, units[u]))
					cr_expect(numeric(v), "%s: \"%s\" is %s, not numbers", what, k,
						  llmsim_jkind_name(v->kind));
			if (!strcmp(k, "ttft_s") || !strcmp(k, "tpot_s") || !strcmp(k, "e2e_s"))
				cr_expect(v->kind == LLMSIM_J_NUM || v->kind == LLMSIM_J_NULL,
					  "%s: \"%s\" is %s", what, k, llmsim_jkind_name(v->kind));
			if (ends_with(k, "_s_dist")) {
				cr_expect_eq(v->kind, LLMSIM_J_OBJ, "%s: \"%s\"", what, k);
				cr_expect(llmsim_jobj_get(v, "mean") && llmsim_jobj_get(v, "p50") &&
						  llmsim_jobj_get(v, "p90") && llmsim_jobj_get(v, "p99"),
					  "%s: \"%s\" lacks mean/p50/p90/p99", what, k);
			}
		}
		check_shapes(what, v);
	}
}

/* Every verb, with --json: exit 0, one JSON document, one shape per key.
 * Files go to the test's own folder. */
Test(cli_conventions, every_verb_json_parses, .init = setup, .fini = teardown)
{
	char hf[512];
	test_data(hf, sizeof hf, "hf/llama-3.1-8b.json");
	const char *const verbs[] = {
		"hw list",
		"hw show h200",
		"model list",
		"model show 70b --gpu h200",
		"model import %H",
		"op gemm --m 4096 --n 4096 --k 4096 --dtype bf16",
		"op attention --impl flash2 --batch 1 --heads 64 --kv-heads 8 --seq 8192 "
		"--head-dim 128 --causal",
		"op decode --impl paged --batch 32 --heads 64 --kv-heads 8 --kv-len 4096 "
		"--head-dim 128 --block-size 16",
		"op elementwise --kind rmsnorm --tokens 4096 --hidden 8192",
		"op collective --kind allreduce --bytes 64e6 --gpus 8",
		"roofline --gpu h200 --model 8b --seq 4096",
		"train --model 8b --gpus 8 --tp 2 --dp 4 --micro-batch 2 --global-batch 256",
		"train --model 8b --layers 4 --engine torch --micro-batch 2 --recompute full",
		"plan --model 8b --gpus 8 --seq 2048 --global-batch 64 --top 3",
		"plan --model 8b --gpus 2 --workload serve --requests 50",
		"validate --no-fail",
		"infer --model 8b --batch 4 --prompt 2048 --output 128",
		"serve --model 8b --requests 100 --rate 10 --seed 1",
		"serve --published",
		"spec --model 70b --draft llama-3.2-1b --gamma 4 --alpha 0.8 --gpus 2",
		"report --model 8b --out %D/report",
		"calib show",
		"calib validate --gpu h200",
		"calib fit --gpu h200 --out %D/profile.yaml",
		"calib export --out %D/calib.tsv",
		"calib import --db %D/calib.db --in %D/calib.tsv",
		"calib upgrade --db %D/calib.db",
		"trace show --db calib/data/trace_llama.txt.gz",
		"trace compare --db calib/data/trace_llama.txt.gz --gpu h200 --phases-only",
		"trace replay --db calib/data/trace_llama.txt.gz --gpu b200 --phases-only",
		"trace import --db %D/trace.db --in calib/data/trace_llama.txt.gz",
		"trace export --db %D/trace.db --out %D/trace.txt",
		"trace to-calib --db calib/data/trace_llama.txt.gz --calib-db %D/tc.db --gpu h200",
		"completion bash",
		"completion zsh",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		char args[1024], *o = args;
		for (const char *p = verbs[i]; *p && o < args + sizeof args - 600; p++) {
			if (p[0] == '%' && (p[1] == 'D' || p[1] == 'H')) {
				o += sprintf(o, "%s", p[1] == 'D' ? dir : hf);
				p++;
			} else {
				*o++ = *p;
			}
		}
		strcpy(o, " --json");
		int rc = run_llmsim(args, out, sizeof out, errb, sizeof errb);
		cr_expect_eq(rc, 0, "%s: exit %d: %s", args, rc, errb);
		struct llmsim_jdoc *doc = parse(args);
		if (!doc)
			continue;
		const struct llmsim_jnode *root = llmsim_jdoc_root(doc);
		cr_expect(root->kind == LLMSIM_J_OBJ || root->kind == LLMSIM_J_ARR, "%s", args);
		cr_expect_null(llmsim_jobj_get(root, "error"), "%s", args);
		check_shapes(args, root);
		llmsim_jdoc_free(doc);
	}
}

/* ---- the error object ---- */

/* Run args (with --json): exit status want, stdout one error object whose
 * message starts with "llmsim" (the verb follows) and whose file is `file` (NULL: null)
 * and line `line` (0: null). */
static void expect_error(const char *args, int want, const char *file, int line)
{
	int rc = run_llmsim(args, out, sizeof out, errb, sizeof errb);
	cr_expect_eq(rc, want, "%s: exit %d, expected %d: %s", args, rc, want, errb);
	struct llmsim_jdoc *doc = parse(args);
	if (!doc)
		return;
	const struct llmsim_jnode *e = llmsim_jobj_get(llmsim_jdoc_root(doc), "error");
	cr_assert_not_null(e, "%s: no \"error\": %s", args, out);
	const struct llmsim_jnode *m = llmsim_jobj_get(e, "message"),
				  *f = llmsim_jobj_get(e, "file"), *l = llmsim_jobj_get(e, "line");
	cr_assert(m && f && l, "%s: message, file and line are always there: %s", args, out);
	cr_expect_eq(m->kind, LLMSIM_J_STR);
	cr_expect(m->kind == LLMSIM_J_STR && !strncmp(m->str, "llmsim", 6), "%s: %s", args, out);
	/* the message is the line stderr gets too */
	cr_expect(m->kind == LLMSIM_J_STR && strstr(errb, m->str), "%s: stderr %s", args, errb);
	if (file) {
		cr_expect(f->kind == LLMSIM_J_STR && ends_with(f->str, file), "%s: %s", args, out);
		cr_expect(l->kind == LLMSIM_J_NUM && l->is_int && l->i == line, "%s: %s", args, out);
	} else {
		cr_expect_eq(f->kind, LLMSIM_J_NULL, "%s: %s", args, out);
		cr_expect_eq(l->kind, LLMSIM_J_NULL, "%s: %s", args, out);
	}
	llmsim_jdoc_free(doc);
}

/* Each verb's error form: a bad flag and a bad value (exit 2), and a
 * failure of its own (exit 1). */
Test(cli_conventions, every_verb_json_error)
{
	static const char *const verbs[] = {
		"hw list",	   "hw show h200",	"model list",	   "model show 8b",
		"model import x.json", "op gemm",	"op attention",	   "op decode",
		"op elementwise",  "op collective",	"roofline",	   "train --model 8b",
		"plan --model 8b --gpus 8", "plan --model 8b --gpus 8 --workload serve",
		"validate",	   "infer --model 8b",	"serve --model 8b", "spec --model 70b",
		"report --model 8b", "calib run",	"calib show",	   "calib fit",
		"calib validate",  "calib export",	"calib import",	   "calib upgrade",
		"trace capture",   "trace show",	"trace compare",   "trace replay",
		"trace import",	   "trace export",	"trace to-calib",  "completion bash",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		char args[512];
		snprintf(args, sizeof args, "%s --json --no-such-flag", verbs[i]);
		expect_error(args, 2, NULL, 0);
	}
	expect_error("no-such-command --json", 2, NULL, 0);
	/* bad values: out of range, not a number, not a choice */
	expect_error("op gemm --m 0 --n 1 --k 1 --json", 2, NULL, 0);
	expect_error("infer --model 8b --batch x --json", 2, NULL, 0);
	expect_error("train --model 8b --zero 5 --json", 2, NULL, 0);
	expect_error("plan --model 8b --gpus 8 --top 0 --json", 2, NULL, 0);
	expect_error("serve --model 8b --prompt-dist gamma:1:2 --json", 2, NULL, 0);
	expect_error("spec --model 70b --draft llama-3.2-1b --alpha 1.5 --json", 2, NULL, 0);
	expect_error("report --model 8b --out /tmp/x --top 9 --json", 2, NULL, 0);
	expect_error("trace show --db calib/data/trace_llama.txt.gz --top -1 --json", 2, NULL, 0);
	expect_error("completion fish --json", 2, NULL, 0);
	expect_error("calib export --json", 2, NULL, 0); /* JSON on stdout needs --out */
	/* failures of the configuration: exit 1 */
	expect_error("hw show nosuch --json", 1, NULL, 0);
	expect_error("train --model 405b --gpus 1 --json", 1, NULL, 0);
	expect_error("calib show --db /nonexistent.db --json", 1, NULL, 0);
	/* a file's error names it and its line: the fixture's second colon is
	 * on line 12, its bad mlp on line 13 */
	char args[600], path[512];
	snprintf(args, sizeof args, "model show %s --json",
		 test_data(path, sizeof path, "models/bad-syntax.yaml"));
	expect_error(args, 1, "models/bad-syntax.yaml", 12);
	snprintf(args, sizeof args, "infer --model %s --json",
		 test_data(path, sizeof path, "models/bad-wrong-type.yaml"));
	expect_error(args, 1, "models/bad-wrong-type.yaml", 13);
}

/* Without --json the error stays one line on stderr and stdout is empty. */
Test(cli_conventions, plain_error_is_one_line)
{
	int rc = run_llmsim("infer --model 8b --bogus", out, sizeof out, errb, sizeof errb);
	cr_expect_eq(rc, 2);
	cr_expect_eq(out[0], 0, "%s", out);
	cr_expect_eq(count_lines(errb), 1, "%s", errb);
}

/* ---- exit status ---- */

Test(cli_conventions, exit_status)
{
	static const struct {
		const char *args;
		int rc;
	} cases[] = {
		{"--no-such-command", 2},
		{"infer --model 8b --prompt 0", 2},           /* below the option's minimum */
		{"infer --model 8b --prompt 1e30", 2},        /* above its bound */
		{"plan --model 8b --gpus 2147483647", 2},
		{"serve --model 8b --load busy:2", 2},
		{"serve --model 8b --output-dist lognormal:x", 2},
		{"train --model 405b --gpus 1", 1},           /* does not fit */
		{"train --model 8b --gpus 8 --tp 3", 1},      /* a layout that cannot be */
		{"infer --model 8b --gpus 3", 1},             /* tp 3 does not divide 32 heads */
		{"spec --model 70b --draft llama-3.2-1b --alpha 0.8 --gpus 4 --tp 3", 1},
		/* the model's maximum context: GPT-3 and OPT hold 2048 tokens */
		{"train --model gpt-3-175b --gpus 64 --seq 4096", 1},
		{"plan --model opt-13b --gpus 8 --seq 4096", 1},
		{"plan --model opt-13b --gpus 8 --seq 2048 --top 1", 0},
		{"infer --model opt-13b --prompt 2000 --output 100", 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = run_llmsim(cases[i].args, out, sizeof out, errb, sizeof errb);
		cr_expect_eq(rc, cases[i].rc, "%s: exit %d, expected %d: %s", cases[i].args, rc,
			     cases[i].rc, errb);
		if (rc)
			cr_expect_eq(count_lines(errb), 1, "%s: %s", cases[i].args, errb);
	}
	cr_expect(strstr(errb, "2048-token context of opt-13b"), "%s", errb);
}

/* ---- tables within 100 columns ---- */

/* Whether line (len bytes) is a table's rule: dashes and blanks, "--" in it. */
static int is_rule(const char *line, size_t len)
{
	if (len < 2 || strspn(line, "- ") < len)
		return 0;
	for (size_t i = 0; i + 1 < len; i++)
		if (line[i] == '-' && line[i + 1] == '-')
			return 1;
	return 0;
}

/* The widest table in text: its rule line ("--  -----") spans the whole
 * table (llmsim_table_print pads every column but a left-aligned last one
 * to it), and its header line is as wide; how many tables there are. */
static size_t widest_table_line(const char *text, int *tables)
{
	size_t widest = 0, prev = 0;
	*tables = 0;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (is_rule(p, len)) {
			(*tables)++;
			widest = len > widest ? len : widest;
			widest = prev > widest ? prev : widest; /* the header */
		}
		prev = len;
		p = e ? e + 1 : p + len;
	}
	return widest;
}

/* Default output fits 100 columns: each table (leaving out or wrapping
 * columns) and each line of prose. */
Test(cli_conventions, default_tables_fit_100_columns)
{
	static const char *const verbs[] = {
		"hw list",
		"hw show h200",
		"model list",
		"model show 70b --gpu h200",
		"roofline --gpu h200 --model 8b --seq 4096",
		"train --model 8b --gpus 8 --tp 2 --dp 4 --micro-batch 2 --global-batch 256",
		"plan --model 70b --gpus 8",
		"plan --model 70b --gpus 8 --workload serve --prompt 2048 --output 256 --rate 4 "
		"--ttft-slo 2 --tpot-slo 0.05",
		"validate --no-fail",
		"infer --model 70b --gpus 4 --batch 32 --prompt 2048 --output 256",
		"infer --model 8b --batch 4 --prompt 2048 --output 128 --ops",
		"serve --model 8b --requests 200 --rate 30 --seed 1",
		"serve --published",
		"spec --model 70b --draft llama-3.2-1b --gamma 4 --alpha 0.8 --gpus 2",
		"calib show",
		"calib validate --gpu h200",
		"calib validate --gpu h200 --steps",
		"trace show --db calib/data/trace_llama.txt.gz",
		"trace compare --db calib/data/trace_llama.txt.gz --gpu h200 --phases-only",
		"trace replay --db calib/data/trace_llama.txt.gz --gpu b200 --phases-only",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		int rc = run_llmsim(verbs[i], out, sizeof out, errb, sizeof errb);
		cr_expect_eq(rc, 0, "%s: %s", verbs[i], errb);
		int tables;
		size_t w = widest_table_line(out, &tables);
		cr_expect_gt(tables, 0, "%s: no table", verbs[i]);
		cr_expect_leq(w, 100, "%s: a table %zu columns wide:\n%s", verbs[i], w, out);
		/* and the prose around it wraps within them too */
		for (const char *p = out; *p;) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			cr_expect_leq(len, 100, "%s: a line of %zu: %.*s", verbs[i], len, (int)len, p);
			p = e ? e + 1 : p + len;
		}
	}
	/* --wide shows every column: the plan's table is wider, and the
	 * default says what it left out */
	cr_assert_eq(run_llmsim("plan --model 70b --gpus 8", out, sizeof out, NULL, 0), 0);
	cr_expect(strstr(out, "more columns: --wide)"), "%s", out);
	cr_expect_null(strstr(out, "  equivalent\n")); /* the last column of the header */
	cr_assert_eq(run_llmsim("plan --model 70b --gpus 8 --wide", out, sizeof out, NULL, 0), 0);
	int tables;
	cr_expect_gt(widest_table_line(out, &tables), 100);
	cr_expect(strstr(out, "  equivalent\n") && !strstr(out, "--wide)"), "%s", out);
}

/* ---- reproducible stdout ---- */

/* The tool's own timing is no part of stdout: two runs are the same. */
Test(cli_conventions, plan_stdout_reproducible)
{
	static char first[1 << 16];
	cr_assert_eq(run_llmsim("plan --model 8b --gpus 8", first, sizeof first, NULL, 0), 0);
	cr_assert_eq(run_llmsim("plan --model 8b --gpus 8", out, sizeof out, NULL, 0), 0);
	cr_expect_str_eq(out, first);
	/* --verbose puts the search's wall time on stderr */
	cr_assert_eq(run_llmsim("plan --model 8b --gpus 8 --verbose", out, sizeof out, errb,
				sizeof errb), 0);
	cr_expect(strstr(errb, "llmsim plan: searched in "), "%s", errb);
	cr_expect_str_eq(out, first);
}

/* Counts and bytes never share the letter B. */
Test(cli_conventions, counts_are_not_bytes)
{
	cr_assert_eq(run_llmsim("model show 70b", out, sizeof out, errb, sizeof errb), 0, "%s",
		     errb);
	/* Llama 3.1 70B: 70.55 G parameters (70,553,706,496), 141.1 GB in bf16 */
	cr_expect(strstr(out, "70.55 G (70553706496)"), "%s", out);
	cr_expect(strstr(out, "141.1 GB"), "%s", out);
}
