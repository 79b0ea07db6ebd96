/*
 * infer_ops.c - `llmsim infer --ops` (see infer_ops.h).
 */
#include "infer_ops.h"

#include <stdio.h>
#include <string.h>

#include "base/fmt.h"

static struct llmsim_graph G;
static struct llmsim_pred P[LLMSIM_GRAPH_MAX];

static void list(const char *title, const struct llmsim_step_cost *cost,
		 const double mult[LLMSIM_SEC_COUNT], struct llmsim_json *j, const char *key)
{
	if (j) {
		llmsim_json_arr_begin(j, key);
	} else {
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX];
		printf("\n%s: %lld kernels, %s of kernels, %s wall, SM clock %s\n", title,
		       (long long)cost->kernels, llmsim_fmt_time(a, cost->gpu_s),
		       llmsim_fmt_time(b, cost->time_s), llmsim_fmt_hz(c, cost->sm_clock_hz));
	}
	static const char *const head[] = {"<section", "<op", "runs", "kernels", "each",
					   "total", "share", "<bound", "<spec"};
	struct llmsim_table t;
	if (!j)
		llmsim_table_init(&t, 9, head);
	for (int i = 0; i < G.n; i++) {
		const struct llmsim_gnode *n = &G.node[i];
		double k = mult[n->sec] * n->count;
		if (!(k > 0))
			continue;
		char spec[256];
		llmsim_op_format_short(&n->op, spec, sizeof spec);
		int kern = P[i].kernels > 0 ? P[i].kernels : 1;
		if (j) {
			llmsim_json_obj_begin(j, NULL);
			llmsim_json_str(j, "section", llmsim_gsec_name(n->sec));
			llmsim_json_str(j, "name", n->name);
			llmsim_json_num(j, "runs", k);
			llmsim_json_int(j, "kernels", kern);
			llmsim_json_str(j, "spec", spec);
			llmsim_json_num(j, "time_s", P[i].time_s);
			llmsim_json_num(j, "total_s", k * P[i].time_s);
			llmsim_json_str(j, "bound", llmsim_bound_name(P[i].bound));
			llmsim_json_num(j, "sm_clock_hz", P[i].sm_clock_hz);
			llmsim_json_obj_end(j);
			continue;
		}
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], runs[32];
		snprintf(runs, sizeof runs, "%g", k);
		llmsim_table_rowf(&t, "%s\t%s\t%s\t%d\t%s\t%s\t%.1f%%\t%s\t%s",
				  llmsim_gsec_name(n->sec), n->name, runs, kern,
				  llmsim_fmt_time(a, P[i].time_s), llmsim_fmt_time(b, k * P[i].time_s),
				  cost->gpu_s > 0 ? 100 * k * P[i].time_s / cost->gpu_s : 0,
				  llmsim_bound_name(P[i].bound), spec);
	}
	if (j) {
		llmsim_json_arr_end(j);
		return;
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

int cli_infer_ops(const struct llmsim_infer_cfg *cfg, const struct llmsim_infer_req *req,
		  const struct llmsim_infer_result *res, struct llmsim_json *j,
		  struct llmsim_err *err)
{
	struct llmsim_infer_cfg c = *cfg;
	double mult[LLMSIM_SEC_COUNT];
	struct llmsim_step_cost cost;
	/* the first prefill step, as infer_run chunks the batch */
	int64_t budget = cfg->max_step_tokens ? cfg->max_step_tokens : cfg->params.max_step_tokens;
	struct llmsim_prefill_chunk ch = {.tokens = req->prompt, .context = 0, .count = 1};
	struct llmsim_step s = {.prefill = &ch, .nprefill = 1, .q_len = 1, .logits = 1};
	if (req->prompt <= budget) {
		ch.count = budget / req->prompt < req->batch ? budget / req->prompt : req->batch;
		s.logits = ch.count;
	} else {
		ch.tokens = budget;
		s.logits = 0;
	}
	c.load_duty = res->prefill.cost.load_duty;
	c.load_rho = res->prefill.cost.load_rho;
	int rc = llmsim_infer_step_ops(&c, &s, &G, P, mult, &cost, err);
	if (rc)
		return rc;
	char title[160];
	snprintf(title, sizeof title, "prefill step: %lld x %lld tokens", (long long)ch.count,
		 (long long)ch.tokens);
	list(title, &cost, mult, j, "prefill_ops");
	if (req->output < 2)
		return 0;
	/* the decode step at the middle of the output */
	double kv = (double)req->prompt + (double)(req->output) / 2;
	struct llmsim_step d = {.decode_seqs = req->batch, .q_len = 1, .decode_kv_len = kv,
				.logits = req->batch};
	c.load_duty = res->decode.cost.load_duty;
	c.load_rho = res->decode.cost.load_rho;
	if ((rc = llmsim_infer_step_ops(&c, &d, &G, P, mult, &cost, err)))
		return rc;
	snprintf(title, sizeof title, "decode step: %lld sequences at %.0f tokens of context",
		 (long long)req->batch, kv);
	list(title, &cost, mult, j, "decode_ops");
	return 0;
}
