/*
 * test_walkers_agree.c - one op graph, one set of ops: for the same step,
 * `llmsim infer`'s walk, the ops the trace comparison recovers from a
 * captured run of that step, and the roofline of the report list the same
 * ops (name, spec) with the same predicted times at the same load.
 *
 * The captured run is calib/data/trace_llama.txt.gz: calib/torch/
 * llama_steps.py's plain PyTorch Llama 3.1 8B (4 layers, embedding, final
 * norm and LM head on the last positions) on an H200; infer prices that
 * program's kernels (torch lowering, SDPA) at the load the trace
 * comparison found for the phase. No figure here is copied from output:
 * every one is two paths of llmsim required to agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"
#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"
#include "sim/graph.h"
#include "sim/infer/infer.h"

#define MAX_OPS 128

/* The ops of one phase, each op range's name once (its first instance). */
struct recovered {
	const char *phase;
	int n;
	struct {
		char name[64];
		char spec[256];
		double time_s;
		int range;
	} op[MAX_OPS];
	double load_duty, load_rho;
	int loads;
};

static int seen_range(const struct recovered *r, const char *name, int range)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->op[i].name, name) && r->op[i].range != range)
			return 1; /* an earlier op range of this name */
	return 0;
}

static int collect(const struct llmsim_trace_instance *in, void *ctx)
{
	struct recovered *r = ctx;
	if (strcmp(in->phase, r->phase) || seen_range(r, in->range, in->op_range))
		return 0;
	cr_assert_lt(r->n, MAX_OPS);
	snprintf(r->op[r->n].name, sizeof r->op[0].name, "%s", in->range);
	llmsim_op_format(in->op, r->op[r->n].spec, sizeof r->op[0].spec);
	r->op[r->n].time_s = in->pred->time_s;
	r->op[r->n].range = in->op_range;
	r->n++;
	/* one load for every op of a phase */
	if (!r->loads++) {
		r->load_duty = in->op->load_duty;
		r->load_rho = in->op->load_rho;
	} else {
		cr_expect_eq(in->op->load_duty, r->load_duty, "%s", in->range);
		cr_expect_eq(in->op->load_rho, r->load_rho, "%s", in->range);
	}
	return 0;
}

static struct llmsim_graph G;
static struct llmsim_pred P[LLMSIM_GRAPH_MAX];

/* infer's ops of the step, in the program's kernels, at the trace's load,
 * against the recovered ones: name for name, spec for spec, time for time. */
static void agree(const struct llmsim_model *m, const struct llmsim_gpu *gpu,
		  const struct recovered *r, const struct llmsim_step *step)
{
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, m, gpu);
	cfg.attn = LLMSIM_AC_SDPA;
	cfg.runtime = LLMSIM_RT_EAGER;
	cfg.lower.engine = LLMSIM_ENGINE_TORCH;
	cfg.lower.rope_joint = 1; /* llama_steps.py ropes q and k as one tensor */
	cfg.load_duty = r->load_duty;
	cfg.load_rho = r->load_rho;
	double mult[LLMSIM_SEC_COUNT];
	struct llmsim_step_cost cost;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_infer_step_ops(&cfg, step, &G, P, mult, &cost, &e), 0, "%s", e.msg);
	int matched = 0;
	for (int i = 0; i < G.n; i++) {
		const struct llmsim_gnode *n = &G.node[i];
		if ((n->role & LLMSIM_GN_COMM) || !(mult[n->sec] > 0))
			continue;
		/* the k-th node of a name is the k-th op of its range */
		int k = 0;
		for (int j = 0; j < i; j++)
			k += G.node[j].sec == n->sec && !strcmp(G.node[j].name, n->name);
		if (k && n->sec == LLMSIM_SEC_DENSE && strcmp(G.node[i - 1].name, n->name))
			continue; /* a layer's second residual: the same op as its first */
		int found = -1;
		for (int j = 0, c = 0; j < r->n; j++)
			if (!strcmp(r->op[j].name, n->name) && c++ == k)
				found = j;
		cr_assert(found >= 0, "%s: infer's op %s #%d is not among the trace's", r->phase,
			  n->name, k);
		char spec[256];
		llmsim_op_format(&n->op, spec, sizeof spec);
		cr_expect_str_eq(spec, r->op[found].spec, "%s %s #%d", r->phase, n->name, k);
		expect_close(P[i].time_s, r->op[found].time_s, 1e-12);
		matched++;
	}
	cr_expect_eq(matched, r->n, "%s: infer lists %d ops, the trace %d", r->phase, matched,
		     r->n);
}

Test(agree, trace_and_infer_price_the_same_ops)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/calib/data/trace_llama.txt.gz", LLMSIM_SOURCE_DIR);
	if (access(path, R_OK))
		cr_skip_test("calib/data/trace_llama.txt.gz is absent");
	static struct llmsim_trace t;
	static struct llmsim_model m;
	static struct llmsim_gpu gpu;
	struct llmsim_err e = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(path, 0, &t, &e), 0, "%s", e.msg);
	cr_assert_eq(llmsim_model_load("llama-3.1-8b", &m, NULL), 0);
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, NULL), 0);

	/* the step the issue names: prefill of 4 sequences of 2048 tokens */
	static struct recovered pre = {.phase = "prefill b=4 s=2048"};
	cr_assert_eq(llmsim_trace_instances(&t, &gpu, &m, LLMSIM_TRACE_PHASES_ONLY, collect, &pre,
					    &e), 0, "%s", e.msg);
	cr_assert_gt(pre.n, 10);
	cr_expect_gt(pre.load_duty, 0, "the phase ran under the power limit");
	struct llmsim_prefill_chunk ch = {.tokens = 2048, .context = 0, .count = 4};
	struct llmsim_step s = {.prefill = &ch, .nprefill = 1, .q_len = 1, .logits = 4,
				.layers = 4, .ends = 1};
	agree(&m, &gpu, &pre, &s);

	/* a decode step: 8 sequences, 2048 cached tokens and the new one */
	static struct recovered dec = {.phase = "decode b=8 ctx=2048"};
	cr_assert_eq(llmsim_trace_instances(&t, &gpu, &m, LLMSIM_TRACE_PHASES_ONLY, collect, &dec,
					    &e), 0, "%s", e.msg);
	struct llmsim_step d = {.decode_seqs = 8, .q_len = 1, .decode_kv_len = 2049, .logits = 8,
				.layers = 4, .ends = 1};
	agree(&m, &gpu, &dec, &d);
	llmsim_trace_release(&t);
}

/* The value of "key": after p in JSON text, or NaN. */
static double json_after(const char *p, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *q = strstr(p, k);
	return q ? strtod(q + strlen(k), NULL) : NAN;
}

static int json_str_after(const char *p, const char *key, char *out, size_t size)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": \"", key);
	const char *q = strstr(p, k);
	if (!q)
		return -1;
	q += strlen(k);
	size_t n = strcspn(q, "\"");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), q);
	return 0;
}

/* The roofline (and the report, which draws the same list) shows one
 * layer's ops as infer walks them, lone kernels: the same names, specs and
 * times as the walk of a prefill and of a decode step. */
Test(agree, roofline_lists_infers_ops)
{
	static char out[1 << 17];
	char err[1024];
	int rc = run_llmsim("roofline --workload serve --gpu h200 --model 8b --batch 4 --seq 2048 --json", out,
			    sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	static struct llmsim_model m;
	static struct llmsim_gpu gpu;
	cr_assert_eq(llmsim_model_load("8b", &m, NULL), 0);
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, NULL), 0);
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, &m, &gpu);
	struct llmsim_prefill_chunk ch = {.tokens = 2048, .context = 0, .count = 4};
	struct llmsim_step steps[2] = {
		{.prefill = &ch, .nprefill = 1, .q_len = 1, .logits = 4},
		{.decode_seqs = 4, .q_len = 1, .decode_kv_len = 2048, .logits = 4},
	};
	const char *p = strstr(out, "\"ops\"");
	cr_assert(p, "%s", out);
	int listed = 0;
	for (int ph = 0; ph < 2; ph++) {
		double mult[LLMSIM_SEC_COUNT];
		struct llmsim_step_cost cost;
		cr_assert_eq(llmsim_infer_step_ops(&cfg, &steps[ph], &G, P, mult, &cost, NULL), 0);
		for (int i = 0; i < G.n; i++) {
			const struct llmsim_gnode *n = &G.node[i];
			if (n->sec != LLMSIM_SEC_DENSE || (n->role & LLMSIM_GN_COMM))
				continue;
			/* the next op object of the JSON list */
			p = strstr(p + 1, "\"phase\": ");
			cr_assert(p, "the roofline lists fewer ops than infer (%s)", n->name);
			char phase[32], name[64], spec[256], want[256];
			json_str_after(p, "phase", phase, sizeof phase);
			json_str_after(p, "name", name, sizeof name);
			json_str_after(p, "spec", spec, sizeof spec);
			llmsim_op_format(&n->op, want, sizeof want);
			cr_expect_str_eq(phase, ph ? "decode" : "prefill");
			cr_expect_str_eq(name, n->name);
			cr_expect_str_eq(spec, want, "%s", n->name);
			expect_close(json_after(p, "time_s"), P[i].time_s, 1e-9);
			listed++;
		}
	}
	cr_expect_null(strstr(p + 1, "\"phase\": "), "the roofline lists more ops than infer");
	cr_expect_gt(listed, 20);
}
