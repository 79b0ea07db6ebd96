/*
 * cmd_plan_serve.c - `llmsim plan --workload serve`: every way to serve a
 * model on N GPUs (sim/infer/plan_serve.h), aggregated and disaggregated,
 * simulated with the serving engine under a load, ranked under per-request
 * TTFT and TPOT targets, with the Pareto front of tokens/s per GPU against
 * tokens/s per user. Shaped like the training plan: the request, the
 * search in numbers, the rows, the verdict between the kinds, #1 in
 * detail, the rejections. `llmsim plan` hands over its whole argv when it
 * sees --workload serve.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "sim/infer/plan_serve.h"
#include "args.h"
#include "commands.h"
#include "common.h"
#include "json_error.h"
#include "plan_emit.h"
#include "serve_eng.h"

static const char about[] =
	"Search replicas x tp x pp (x ep) and disaggregated prefill/decode pools,\n"
	"and the engine's running-sequence cap (max_num_seqs, powers of two), each\n"
	"simulated with the continuous-batching engine of `llmsim serve` under the\n"
	"load: --rate R requests/s (Poisson), --concurrency C users (closed loop) or,\n"
	"with neither, offline (every request at once). Targets are per-request\n"
	"TTFT and TPOT at a percentile (--slo-percentile, default p99); those that\n"
	"meet them rank first, by output tokens/s per GPU (under a rate, which fixes\n"
	"throughput: by tokens/s per user). Weights and KV stay bf16 unless\n"
	"--weight-dtype / --kv-dtype allow more. Exit status 1 when nothing fits or\n"
	"meets the targets (the closest configuration and the reason are shown).\n"
	"Without --gpus: the capacity question, the fewest GPUs that serve the load\n"
	"(--rate or --concurrency) within the targets, replica counts searched per\n"
	"layout with bounds (one request alone, a replica's saturated rate) and each\n"
	"engine run reused across GPU counts; the Pareto front at each GPU count.\n"
	"Cost per million output tokens from --gpu-hour-price or the GPU file's price.";

static const char *const pct_names[] = {"p50", "p90", "p99", NULL};
static const double pct_vals[] = {0.5, 0.9, 0.99};

static int parse_dtypes(const char *s, unsigned *mask)
{
	char buf[128];
	*mask = 0;
	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int d = llmsim_dtype_parse(t);
		if (d < 0)
			return -1;
		*mask |= 1u << d;
	}
	return *mask ? 0 : -1;
}


static const char *meets(const struct llmsim_plan_serve_out *o, const struct llmsim_plan_serve_row *x)
{
	return !o->targets ? "-" : x->feasible ? "yes" : "no";
}

static const char *meet_count(const struct llmsim_plan_serve_out *o, char *buf, size_t n)
{
	if (!o->targets)
		return "no targets to meet";
	snprintf(buf, n, "%lld meet the targets", (long long)o->feasible);
	return buf;
}

static void cost(char *buf, size_t n, const struct llmsim_plan_serve_row *x)
{
	if (x->usd_per_mtok > 0)
		snprintf(buf, n, "$%.3g", x->usd_per_mtok);
	else
		snprintf(buf, n, "-");
}

static void print_rows(const struct llmsim_plan_serve_out *o, int64_t shown, double err_frac)
{
	static const char *const head[] = {"#", "GPUs", "<layout", "<weights", "<kv", "max-seqs",
					   "~TTFT p50", "TTFT p99", "~TPOT p50", "TPOT p99", "~tok/s",
					   "tok/s/GPU", "tok/s/user", "$/Mtok", "~error", "<meets",
					   "~<front"};
	struct llmsim_table t;
	llmsim_table_init(&t, 17, head);
	for (int64_t i = 0; i < shown; i++) {
		const struct llmsim_plan_serve_row *x = &o->rows[i];
		char nm[64], a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX],
			d[LLMSIM_FMT_MAX], usd[32];
		llmsim_plan_serve_layout(x, nm, sizeof nm);
		cost(usd, sizeof usd, x);
		llmsim_table_rowf(&t, "%lld\t%d\t%s\t%s\t%s\t%lld\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.1f\t%s\t+/-%.0f%%\t%s\t%s",
				  (long long)(i + 1), x->gpus, nm, llmsim_dtype_name(x->weight_dtype),
				  llmsim_dtype_name(x->kv_dtype), (long long)x->max_batch,
				  llmsim_fmt_time(a, x->ttft_s.p50), llmsim_fmt_time(b, x->ttft_s.p99),
				  llmsim_fmt_time(c, x->tpot_s.p50), llmsim_fmt_time(d, x->tpot_s.p99),
				  x->tokens_per_s, x->tokens_per_s_per_gpu, x->tokens_per_s_per_user, usd,
				  100 * err_frac, meets(o, x), x->pareto ? "*" : "");
	}
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

static void print_front(const struct llmsim_plan_serve_out *o)
{
	int64_t *idx = malloc((size_t)(o->nrows ? o->nrows : 1) * sizeof *idx);
	if (!idx)
		return;
	int64_t n = llmsim_plan_serve_front(o, idx);
	printf("\nPareto front, tokens/s per GPU against tokens/s per user%s (%lld of %lld "
	       "configurations):\n", o->capacity ? ", at each GPU count" : "", (long long)n,
	       (long long)o->nrows);
	static const char *const head[] = {"GPUs", "<meets", "tok/s/GPU", "tok/s/user", "TTFT p99",
					   "TPOT p99", "$/Mtok", "<layout", "<types", "max-seqs"};
	struct llmsim_table t;
	llmsim_table_init(&t, 10, head);
	/* by GPU count, and within one the most per user first */
	for (int64_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo; hi < n && o->rows[idx[hi]].gpus == o->rows[idx[lo]].gpus;)
			hi++;
		for (int64_t i = hi - 1; i >= lo; i--) {
			const struct llmsim_plan_serve_row *x = &o->rows[idx[i]];
			char nm[64], a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], usd[32];
			llmsim_plan_serve_layout(x, nm, sizeof nm);
			cost(usd, sizeof usd, x);
			llmsim_table_rowf(&t, "%d\t%s\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s/%s\t%lld", x->gpus,
					  meets(o, x), x->tokens_per_s_per_gpu, x->tokens_per_s_per_user,
					  llmsim_fmt_time(a, x->ttft_s.p99), llmsim_fmt_time(b, x->tpot_s.p99),
					  usd, nm, llmsim_dtype_name(x->weight_dtype),
					  llmsim_dtype_name(x->kv_dtype), (long long)x->max_batch);
		}
	}
	free(idx);
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

static void print_detail(const struct llmsim_plan_serve_row *x,
			 const struct llmsim_plan_serve_cfg *pc, double err_frac)
{
	char nm[64], a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX],
		e[LLMSIM_FMT_MAX];
	llmsim_plan_serve_layout(x, nm, sizeof nm);
	printf("  layout       %s%s\n", nm,
	       x->disagg ? " (disaggregated: prefill pool P, decode pool D)" : " (aggregated)");
	printf("  quantization weights %s%s, KV cache %s%s\n", llmsim_dtype_name(x->weight_dtype),
	       x->weight_dtype == LLMSIM_DT_BF16 ? " (not quantized)" : "",
	       llmsim_dtype_name(x->kv_dtype), x->kv_dtype == LLMSIM_DT_BF16 ? " (not quantized)" : "");
	printf("  memory       %s of weights per GPU; KV cache of %lld tokens per %sreplica\n",
	       llmsim_fmt_bytes(a, x->weight_bytes_per_gpu), (long long)x->kv_capacity_tokens,
	       x->disagg ? "decode " : "");
	struct llmsim_serve_cfg sc;
	char eng[320];
	llmsim_serve_cfg_init(&sc, pc->model, pc->gpu);
	sc.chunked_prefill = 1;
	if (pc->engine.server != LLMSIM_SERVER_GENERIC)
		llmsim_serve_server(&sc, pc->engine.server);
	cli_serve_eng_describe(&pc->engine, eng, sizeof eng);
	printf("  engine       %s: max_num_seqs %lld, %lld tokens per step%s; mean batch %.1f, "
	       "%lld preemptions\n",
	       eng, (long long)x->max_batch, (long long)sc.max_tokens,
	       sc.chunked_prefill ? ", chunked prefill" : "", x->mean_batch,
	       (long long)x->preemptions);
	if (x->disagg)
		printf("  KV transfer  %s per request over %s (in TTFT)\n",
		       llmsim_fmt_time(a, x->kv_transfer_s), x->kv_over_network ? "the network" : "NVLink");
	printf("  throughput   %.0f output tokens/s (%.0f per GPU, %.1f per user), %.2f requests/s; "
	       "+/-%.0f%%\n",
	       x->tokens_per_s, x->tokens_per_s_per_gpu, x->tokens_per_s_per_user, x->requests_per_s,
	       100 * err_frac);
	if (x->usd_per_mtok > 0)
		printf("  cost         $%.3g per million output tokens (%d GPUs at $%.2f per GPU-hour)\n",
		       x->usd_per_mtok, x->gpus, pc->usd_per_gpu_hour);
	static const char *const head[] = {"<|per request", "mean", "p50", "p90", "p99", "<target"};
	struct llmsim_table t;
	llmsim_table_init(&t, 6, head);
	const struct {
		const char *name;
		const struct llmsim_pcts *p;
		double slo;
	} rows[] = {{"TTFT", &x->ttft_s, pc->ttft_slo_s}, {"TPOT", &x->tpot_s, pc->tpot_slo_s},
		    {"end to end", &x->e2e_s, 0}};
	for (int i = 0; i < 3; i++) {
		char tg[LLMSIM_FMT_MAX + 4] = "-";
		if (rows[i].slo > 0)
			snprintf(tg, sizeof tg, "<= %s", llmsim_fmt_time(e, rows[i].slo));
		llmsim_table_rowf(&t, "%s\t%s\t%s\t%s\t%s\t%s", rows[i].name,
				  llmsim_fmt_time(a, rows[i].p->mean), llmsim_fmt_time(b, rows[i].p->p50),
				  llmsim_fmt_time(c, rows[i].p->p90), llmsim_fmt_time(d, rows[i].p->p99),
				  tg);
	}
	putchar('\n');
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
}

/* Aggregated against disaggregated, on the ranking's key (a capacity
 * search: on the GPUs each needs). */
static void print_verdict(const struct llmsim_plan_serve_out *o, int by_user)
{
	if (o->capacity) {
		putchar('\n');
		for (int k = 0; k < 2; k++) {
			int64_t b = k ? o->best_disagg : o->best_agg;
			const char *what = k ? "disaggregated" : "aggregated";
			if (b >= 0 && o->rows[b].feasible)
				printf("%s: the fewest GPUs that meet the targets are %d (#%lld)\n", what,
				       o->rows[b].gpus, (long long)b + 1);
			else
				printf("%s: none meets the targets%s\n", what,
				       b < 0 ? " (not searched, or no layout fits)" : "");
		}
		return;
	}
	if (o->best_agg < 0 || o->best_disagg < 0) {
		printf("\n%s\n", o->best_disagg < 0 ? "disaggregated: not searched or nothing fits"
						   : "aggregated: nothing fits");
		return;
	}
	const struct llmsim_plan_serve_row *a = &o->rows[o->best_agg], *d = &o->rows[o->best_disagg];
	double ka = by_user ? a->tokens_per_s_per_user : a->tokens_per_s_per_gpu;
	double kd = by_user ? d->tokens_per_s_per_user : d->tokens_per_s_per_gpu;
	const char *key = by_user ? "tokens/s per user" : "tokens/s per GPU";
	int dwins = (d->feasible > a->feasible) || (d->feasible == a->feasible && kd > ka);
	double gain = dwins ? kd / ka - 1 : ka / kd - 1;
	printf("\naggregated (#%lld) against disaggregated (#%lld): %s wins", (long long)o->best_agg + 1,
	       (long long)o->best_disagg + 1, dwins ? "disaggregated" : "aggregated");
	if (d->feasible != a->feasible)
		printf(" (only it meets the targets)\n");
	else
		printf(" by %.1f%% in %s (%s the expected error)\n", 100 * gain, key,
		       gain > o->error.abs_frac ? "beyond" : "within");
}

static void print_rejected(const struct llmsim_plan_serve_out *o)
{
	static const char *const head[] = {"configurations", "<rejected because"};
	struct llmsim_table t;
	llmsim_table_init(&t, 2, head);
	for (int i = 0; i < LLMSIM_SERVE_WHY_COUNT; i++)
		if (o->why[i])
			llmsim_table_rowf(&t, "%lld\t%s", (long long)o->why[i], llmsim_serve_why_name(i));
	putchar('\n');
	if (t.rows)
		llmsim_table_print(&t, stdout);
	else
		fputs("rejected: none\n", stdout);
	llmsim_table_release(&t);
}

static void json_row(struct llmsim_json *j, const struct llmsim_plan_serve_row *x, double err_frac)
{
	llmsim_json_str(j, "layout", x->disagg ? "disaggregated" : "aggregated");
	llmsim_json_int(j, "gpus", x->gpus);
	llmsim_json_int(j, "replicas", x->replicas);
	llmsim_json_int(j, "tp", x->tp);
	llmsim_json_int(j, "pp", x->pp);
	llmsim_json_int(j, "ep", x->ep);
	if (x->disagg) {
		llmsim_json_int(j, "prefill_replicas", x->p_replicas);
		llmsim_json_int(j, "prefill_tp", x->p_tp);
		llmsim_json_num(j, "kv_transfer_s", x->kv_transfer_s);
		llmsim_json_str(j, "kv_link", x->kv_over_network ? "network" : "nvlink");
	}
	llmsim_json_str(j, "weight_dtype", llmsim_dtype_name(x->weight_dtype));
	llmsim_json_str(j, "kv_dtype", llmsim_dtype_name(x->kv_dtype));
	llmsim_json_int(j, "max_num_seqs", x->max_batch);
	cli_json_pcts(j, "ttft_s_dist", &x->ttft_s);
	cli_json_pcts(j, "tpot_s_dist", &x->tpot_s);
	cli_json_pcts(j, "e2e_s_dist", &x->e2e_s);
	llmsim_json_num(j, "tokens_per_s", x->tokens_per_s);
	llmsim_json_num(j, "tokens_per_s_per_gpu", x->tokens_per_s_per_gpu);
	llmsim_json_num(j, "tokens_per_s_per_user", x->tokens_per_s_per_user);
	llmsim_json_num(j, "requests_per_s", x->requests_per_s);
	llmsim_json_num(j, "mean_batch", x->mean_batch);
	llmsim_json_int(j, "preemptions", x->preemptions);
	llmsim_json_num(j, "weight_bytes_per_gpu", x->weight_bytes_per_gpu);
	llmsim_json_int(j, "kv_capacity_tokens", x->kv_capacity_tokens);
	if (x->usd_per_mtok > 0)
		llmsim_json_num(j, "usd_per_million_output_tokens", x->usd_per_mtok);
	else
		llmsim_json_null(j, "usd_per_million_output_tokens");
	llmsim_json_bool(j, "meets_targets", x->feasible);
	llmsim_json_bool(j, "pareto", x->pareto);
	llmsim_json_num(j, "expected_error_frac", err_frac);
}

static void print_json(const struct llmsim_plan_serve_out *o, const struct llmsim_plan_serve_cfg *pc,
		       int64_t shown, const char *emit_fw, const char *launch, const char *why,
		       const char *price_source)
{
	struct llmsim_json j;
	static const char *const loads[] = {"offline", "rate", "concurrency"};
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "workload", "serve");
	llmsim_json_str(&j, "model", pc->model->name);
	llmsim_json_str(&j, "gpu", pc->gpu->name);
	if (o->capacity) {
		llmsim_json_null(&j, "gpus");
		if (o->gpus_needed)
			llmsim_json_int(&j, "gpus_needed", o->gpus_needed);
		else
			llmsim_json_null(&j, "gpus_needed");
		llmsim_json_int(&j, "replica_layouts", o->units);
		llmsim_json_int(&j, "replica_layouts_pruned_by_bounds", o->units_pruned);
	} else {
		llmsim_json_int(&j, "gpus", pc->gpus);
	}
	if (pc->usd_per_gpu_hour > 0) {
		llmsim_json_num(&j, "usd_per_gpu_hour", pc->usd_per_gpu_hour);
		llmsim_json_str(&j, "price_source", price_source);
	} else {
		llmsim_json_null(&j, "usd_per_gpu_hour");
	}
	struct llmsim_serve_cfg sc;
	llmsim_serve_cfg_init(&sc, pc->model, pc->gpu);
	sc.chunked_prefill = 1;
	if (pc->engine.server != LLMSIM_SERVER_GENERIC)
		llmsim_serve_server(&sc, pc->engine.server);
	sc.eng = pc->engine;
	sc.max_batch = pc->max_batch > 0 ? pc->max_batch : 256;
	cli_serve_eng_json(&j, &sc); /* flat, as serve prints it: "engine" is the kernel set */
	llmsim_json_int(&j, "prompt", pc->prompt);
	llmsim_json_int(&j, "output", pc->output);
	llmsim_json_str(&j, "engine", llmsim_engine_name(LLMSIM_ENGINE_DEFAULT));
	llmsim_json_str(&j, "load", loads[pc->load]);
	if (pc->load == LLMSIM_LOAD_RATE)
		llmsim_json_num(&j, "rate_per_s", pc->rate_per_s);
	if (pc->load == LLMSIM_LOAD_CONCURRENCY)
		llmsim_json_int(&j, "concurrency", pc->concurrency);
	llmsim_json_int(&j, "requests_per_replica", o->requests_per_replica);
	llmsim_json_num(&j, "slo_quantile", o->quantile);
	if (pc->ttft_slo_s > 0) llmsim_json_num(&j, "ttft_slo_s", pc->ttft_slo_s); else llmsim_json_null(&j, "ttft_slo_s");
	if (pc->tpot_slo_s > 0) llmsim_json_num(&j, "tpot_slo_s", pc->tpot_slo_s); else llmsim_json_null(&j, "tpot_slo_s");
	llmsim_json_str(&j, "ranking", pc->ttft_slo_s > 0 || pc->tpot_slo_s > 0
					       ? (pc->load == LLMSIM_LOAD_RATE ? "targets, then tokens/s per user"
									  : "targets, then tokens/s per GPU")
					       : "throughput only");
	llmsim_json_int(&j, "configs_simulated", o->simulated);
	llmsim_json_int(&j, "configs_simulated_disaggregated", o->simulated_disagg);
	llmsim_json_int(&j, "configs_pruned", o->pruned);
	llmsim_json_int(&j, "configs_feasible", o->feasible);
	llmsim_json_obj_begin(&j, "expected_error");
	llmsim_json_num(&j, "abs_frac", o->error.abs_frac);
	llmsim_json_bool(&j, "calibrated", o->error.calibrated);
	llmsim_json_str(&j, "source", o->error.source);
	llmsim_json_obj_end(&j);
	llmsim_json_arr_begin(&j, "results");
	for (int64_t i = 0; i < shown; i++) {
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_int(&j, "rank", i + 1);
		json_row(&j, &o->rows[i], o->error.abs_frac);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_arr_end(&j);
	llmsim_json_arr_begin(&j, "pareto_front");
	for (int64_t i = 0; i < o->nrows; i++)
		if (o->rows[i].pareto) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_int(&j, "rank", i + 1);
			json_row(&j, &o->rows[i], o->error.abs_frac);
			llmsim_json_obj_end(&j);
		}
	llmsim_json_arr_end(&j);
	if (o->best_agg >= 0) llmsim_json_int(&j, "best_aggregated_rank", o->best_agg + 1); else llmsim_json_null(&j, "best_aggregated_rank");
	if (o->best_disagg >= 0) llmsim_json_int(&j, "best_disaggregated_rank", o->best_disagg + 1); else llmsim_json_null(&j, "best_disaggregated_rank");
	llmsim_json_arr_begin(&j, "rejected"); /* reason keys are values, not keys */
	for (int i = 0; i < LLMSIM_SERVE_WHY_COUNT; i++)
		cli_json_rejected(&j, llmsim_serve_why_key(i), llmsim_serve_why_name(i), o->why[i]);
	llmsim_json_arr_end(&j);
	if (o->reason[0])
		llmsim_json_str(&j, "reason", o->reason);
	if (!o->feasible && o->nrows) {
		llmsim_json_obj_begin(&j, "closest");
		json_row(&j, &o->rows[0], o->error.abs_frac);
		llmsim_json_obj_end(&j);
	}
	if (emit_fw) {
		llmsim_json_obj_begin(&j, "emit");
		llmsim_json_str(&j, "framework", emit_fw);
		if (launch && launch[0]) llmsim_json_str(&j, "launch", launch); else llmsim_json_null(&j, "launch");
		if (why && why[0])
			llmsim_json_str(&j, "cannot_express", why);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

static void plan_progress(void *ctx, int64_t simulated, int64_t pruned)
{
	(void)ctx;
	cli_progress("llmsim plan: %lld configurations simulated, %lld pruned", (long long)simulated,
		     (long long)pruned);
}

int cmd_plan_serve(int argc, char **argv, const struct cli_setup *setup)
{
	/* --model and --gpu: loaded by main (setup) */
	const char *cmd = "llmsim plan", *model_name = NULL, *gpu_name = "h200", *workload = NULL;
	const char *wdts = NULL, *kvdts = NULL;
	int gpus = 0, top = 5, json = 0, verbose = 0, pct = 2, no_disagg = 0, tp = 0, pp = 0, emit = -1;
	int seen_rate = 0, seen_conc = 0, seen_price = 0;
	int64_t prompt = 1024, output = 256, max_batch = 256, conc = 0, requests = 0;
	double ttft = 0, tpot = 0, rate = 0, price = 0;
	struct cli_serve_eng eng = {0};
	const struct llmsim_opt opts[] = {
		{"workload", LLMSIM_ARG_STRING, &workload, "serve", "serve (this search)", 0, NULL, NULL},
		{"model", LLMSIM_ARG_STRING, &model_name, "M", "model name, alias or YAML path (required)", 0, NULL, NULL},
		{"gpus", LLMSIM_ARG_INT, &gpus, "N", "GPUs to split into replicas or pools (default: the fewest that meet the targets)", 1, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "G", "GPU name or YAML path (default h200)", 0, NULL, NULL},
		{"prompt", LLMSIM_ARG_I64, &prompt, "P", "prompt tokens (default 1024)", 1, NULL, NULL},
		{"output", LLMSIM_ARG_I64, &output, "O", "output tokens (default 256)", 1, NULL, NULL},
		{"rate", LLMSIM_ARG_DOUBLE, &rate, "R", "Poisson arrivals, requests/s for the whole deployment", 0, NULL, &seen_rate},
		{"concurrency", LLMSIM_ARG_I64, &conc, "C", "users in a closed loop, for the whole deployment", 1, NULL, &seen_conc},
		{"requests", LLMSIM_ARG_I64, &requests, "N", "requests simulated per replica, at least (default 300)", 1, NULL, NULL},
		{"ttft-slo", LLMSIM_ARG_DOUBLE, &ttft, "S", "time-to-first-token target, seconds (default none)", 0, NULL, NULL},
		{"tpot-slo", LLMSIM_ARG_DOUBLE, &tpot, "S", "time-per-output-token target, seconds (default none)", 0, NULL, NULL},
		{"slo-percentile", LLMSIM_ARG_CHOICE, &pct, "Q", "percentile the targets hold at (default p99)", 0, pct_names, NULL},
		{"weight-dtype", LLMSIM_ARG_STRING, &wdts, "LIST", "weight types allowed (default bf16; e.g. bf16,fp8,int4)", 0, NULL, NULL},
		{"kv-dtype", LLMSIM_ARG_STRING, &kvdts, "LIST", "KV types allowed (default bf16; e.g. bf16,fp8)", 0, NULL, NULL},
		{"max-batch", LLMSIM_ARG_I64, &max_batch, "B", "largest max_num_seqs tried (default 256)", 1, NULL, NULL},
		{"gpu-hour-price", LLMSIM_ARG_DOUBLE, &price, "USD", "price of one GPU-hour, for the cost per million tokens (default: the GPU file's)", 0, NULL, &seen_price},
		CLI_SERVE_ENG_OPTS(eng),
		{"no-disagg", LLMSIM_ARG_FLAG, &no_disagg, NULL, "aggregated layouts only", 0, NULL, NULL},
		{"tp", LLMSIM_ARG_INT, &tp, "T", "aggregated replicas of this tp only", 1, NULL, NULL},
		{"pp", LLMSIM_ARG_INT, &pp, "P", "aggregated replicas of this pp only", 1, NULL, NULL},
		{"top", LLMSIM_ARG_INT, &top, "K", "configurations shown (default 5)", 1, NULL, NULL},
		{"emit", LLMSIM_ARG_CHOICE, &emit, "F", "print #1's launch arguments: vllm or trtllm", 0, plan_fw_names, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
		{"verbose", LLMSIM_ARG_FLAG, &verbose, NULL,
		 "the search's own wall time, on stderr (stdout stays reproducible)", 0, NULL, NULL},
	};
	int r = llmsim_args_parse(cmd, "--model M --workload serve [--gpus N] [--gpu G] [--prompt P --output O] [--rate R | --concurrency C] [--ttft-slo S --tpot-slo S] [options]",
				  about, argc - 1, argv + 1, opts, (int)(sizeof opts / sizeof opts[0]),
				  NULL, 0, NULL);
	if (r == LLMSIM_ARGS_HELP)
		return 0;
	if (r)
		return 2;
	if (workload && strcmp(workload, "serve"))
		return llmsim_args_error(cmd, "--workload '%s' is not handled here (serve)", workload);
	if (seen_rate && seen_conc)
		return llmsim_args_error(cmd, "--rate and --concurrency exclude each other");
	if (seen_rate && !(rate > 0 && isfinite(rate)))
		return llmsim_args_error(cmd, "--rate must be a positive number of requests/s, got %g", rate);
	if (seen_price && !(price > 0 && isfinite(price)))
		return llmsim_args_error(cmd, "--gpu-hour-price must be a positive number of dollars, got %g",
					 price);
	if (!(ttft >= 0 && isfinite(ttft)) || !(tpot >= 0 && isfinite(tpot)))
		return llmsim_args_error(cmd, "--ttft-slo and --tpot-slo take seconds, got %g and %g", ttft,
					 tpot);
	if (!gpus && !seen_rate && !seen_conc)
		return llmsim_args_error(cmd, "without --gpus, give the load to serve: --rate R or "
					 "--concurrency C (or --gpus N)");
	if (!gpus && !(ttft > 0) && !(tpot > 0))
		return llmsim_args_error(cmd, "without --gpus, give a target to meet: --ttft-slo S, "
					 "--tpot-slo S or both (or --gpus N)");
	struct llmsim_serve_engine feat;
	if ((r = cli_serve_eng_apply(cmd, &eng, &feat)))
		return r;
	if (emit >= 0 && plan_fw_trains(emit))
		return llmsim_args_error(cmd, "--emit %s is for training plans; serving plans emit "
					 "vllm or trtllm", plan_fw_names[emit]);
	if (emit >= 0 && feat.server != LLMSIM_SERVER_GENERIC &&
	    !(feat.server == LLMSIM_SERVER_VLLM && emit == PLAN_FW_VLLM) &&
	    !(feat.server == LLMSIM_SERVER_TRTLLM && emit == PLAN_FW_TRTLLM))
		return llmsim_args_error(cmd, "--emit %s launches another server than the --server "
					 "priced: emit the server you price", plan_fw_names[emit]);
	struct llmsim_plan_serve_cfg pc = {
		.model = setup->model, .gpu = setup->gpu, .gpus = gpus, .prompt = prompt,
		.output = output, .ttft_slo_s = ttft, .tpot_slo_s = tpot, .max_batch = max_batch,
		.load = seen_rate ? LLMSIM_LOAD_RATE : seen_conc ? LLMSIM_LOAD_CONCURRENCY
								 : LLMSIM_LOAD_OFFLINE,
		.rate_per_s = rate, .concurrency = conc, .requests = requests,
		.slo_quantile = pct_vals[pct], .no_disagg = no_disagg, .tp = tp, .pp = pp,
		.usd_per_gpu_hour = seen_price ? price : setup->gpu->price_usd_per_gpu_hour,
		.engine = feat, .progress = plan_progress,
	};
	char price_source[600] = "";
	if (seen_price)
		snprintf(price_source, sizeof price_source, "--gpu-hour-price");
	else if (pc.usd_per_gpu_hour > 0) {
		const char *base = strrchr(setup->gpu->path, '/');
		snprintf(price_source, sizeof price_source, "price_usd_per_gpu_hour of %s, which cites its source",
			 base ? base + 1 : setup->gpu->path);
	}
	if (wdts && parse_dtypes(wdts, &pc.weight_dtypes))
		return llmsim_args_error(cmd, "--weight-dtype: expected names like bf16,fp8,int4, got '%s'", wdts);
	if (kvdts && parse_dtypes(kvdts, &pc.kv_dtypes))
		return llmsim_args_error(cmd, "--kv-dtype: expected names like bf16,fp8, got '%s'", kvdts);

	struct llmsim_err err = {0};
	struct llmsim_plan_serve_out o;
	int prc = llmsim_plan_serve(&pc, &o, &err);
	cli_progress_done();
	if (prc) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	if (o.impossible) { /* one line: no count of GPUs helps */
		fprintf(stderr, "%s: %s\n", cmd, o.reason);
		llmsim_plan_serve_release(&o);
		return 1;
	}
	if (verbose) {
		char a[LLMSIM_FMT_MAX];
		fprintf(stderr, "%s: searched in %s (%.0f configurations/s)\n", cmd,
			llmsim_fmt_time(a, o.elapsed_s),
			o.elapsed_s > 0 ? o.simulated / o.elapsed_s : 0);
	}
	int targets = ttft > 0 || tpot > 0, by_user = pc.load == LLMSIM_LOAD_RATE;
	int64_t shown = o.nrows < top ? o.nrows : top;
	static char launch[8192];
	char why[320] = "";
	launch[0] = 0;
	if (emit >= 0 && o.nrows && (o.feasible || !o.targets))
		plan_emit_serve(emit, &o.rows[0], &pc, launch, sizeof launch, why, sizeof why);
	if (json) {
		print_json(&o, &pc, shown, emit >= 0 ? plan_fw_names[emit] : NULL, launch, why,
			   price_source);
	} else {
		char a[LLMSIM_FMT_MAX];
		if (gpus)
			printf("plan: %s serving on %d x %s; requests of %lld + %lld tokens; load: ",
			       pc.model->name, gpus, pc.gpu->name, (long long)prompt, (long long)output);
		else
			printf("plan: %s serving on the fewest %s GPUs; requests of %lld + %lld tokens; "
			       "load: ", pc.model->name, pc.gpu->name, (long long)prompt, (long long)output);
		if (pc.load == LLMSIM_LOAD_RATE)
			printf("%g requests/s, Poisson", rate);
		else if (pc.load == LLMSIM_LOAD_CONCURRENCY)
			printf("%lld users in a closed loop", (long long)conc);
		else
			printf("offline, every request at once (TTFT is queueing: --rate or "
			       "--concurrency for an online service)");
		printf(" (%lld requests simulated per replica)\n", (long long)o.requests_per_replica);
		if (targets) {
			printf("targets: ");
			if (ttft > 0)
				printf("TTFT %s <= %s", pct_names[pct], llmsim_fmt_time(a, ttft));
			if (ttft > 0 && tpot > 0)
				printf(", ");
			if (tpot > 0)
				printf("TPOT %s <= %s", pct_names[pct], llmsim_fmt_time(a, tpot));
			printf("; then ranked by %s\n", by_user ? "tokens/s per user (the rate fixes "
								 "throughput)" : "tokens/s per GPU");
		} else {
			printf("targets: none: ranked by throughput only (%s)\n",
			       by_user ? "the rate fixes it: then tokens/s per user" : "tokens/s per GPU");
		}
		printf("engine: %s (the default engine of infer, serve and spec), CUDA graphs\n",
		       llmsim_engine_name(LLMSIM_ENGINE_DEFAULT));
		printf("types:  weights %s, KV %s%s\n", wdts ? wdts : "bf16", kvdts ? kvdts : "bf16",
		       wdts || kvdts ? "" : " (--weight-dtype / --kv-dtype allow quantized ones)");
		char eb[320], nb[64];
		cli_serve_eng_describe(&pc.engine, eb, sizeof eb);
		printf("server: %s\n", eb);
		if (o.capacity)
			printf("search: %lld replica layouts, %lld dropped by a bound (one request alone "
			       "misses a target, or more GPUs than the best); %lld engine runs simulated "
			       "(%lld of disaggregated pools), each reused at every GPU count; %lld "
			       "deployments meet the targets\n",
			       (long long)o.units, (long long)o.units_pruned, (long long)o.simulated,
			       (long long)o.simulated_disagg, (long long)o.feasible);
		else
			printf("search: %lld configurations simulated (%lld disaggregated); "
			       "%lld pruned before simulating; %s\n",
			       (long long)o.simulated, (long long)o.simulated_disagg,
			       (long long)o.pruned, meet_count(&o, nb, sizeof nb));
		if (pc.usd_per_gpu_hour > 0)
			printf("price:  $%.2f per GPU-hour (%s)\n", pc.usd_per_gpu_hour, price_source);
		else
			printf("price:  none (--gpu-hour-price, or price_usd_per_gpu_hour in the GPU file)\n");
		if (o.capacity && o.gpus_needed) {
			char nm[64];
			llmsim_plan_serve_layout(&o.rows[0], nm, sizeof nm);
			printf("answer: %d x %s: %s", o.gpus_needed, pc.gpu->name, nm);
			if (o.rows[0].usd_per_mtok > 0)
				printf(", $%.3g per million output tokens", o.rows[0].usd_per_mtok);
			putchar('\n');
		}
		printf("error:  +/-%.0f%% per step (%s)\n\n", 100 * o.error.abs_frac, o.error.source);
		if (shown) {
			printf("%s %lld of %lld:\n", o.feasible ? "best"
						      : o.targets ? "closest (none meets the targets)"
								  : "best (no targets)",
			       (long long)shown, (long long)o.nrows);
			print_rows(&o, shown, o.error.abs_frac);
			print_verdict(&o, by_user);
			print_front(&o);
			printf("\n#1 in detail%s:\n", o.feasible || !o.targets ? "" : " (the closest)");
			print_detail(&o.rows[0], &pc, o.error.abs_frac);
		} else {
			printf("no configuration fits\n");
		}
		print_rejected(&o);
		if (o.reason[0])
			printf("hint: %s\n", o.reason);
		if (launch[0])
			printf("\nlaunch #1 with %s:\n%s", plan_fw_source(emit), launch);
	}
	int status = 0;
	if (o.reason[0] && (!o.feasible || !o.nrows)) {
		fprintf(stderr, "%s: %s\n", cmd, o.reason);
		status = 1;
	} else if (why[0]) {
		fprintf(stderr, "%s: --emit %s: %s\n", cmd, plan_fw_names[emit], why);
		status = 1;
	}
	llmsim_plan_serve_release(&o);
	return status;
}
