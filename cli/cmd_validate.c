/*
 * cmd_validate.c - `llmsim validate`: predict every run of the published
 * training-runs files and print predicted vs published (iteration time,
 * MFU, memory, activations per layer) with the % error, then per suite
 * (the runs of one paper's table or figure) the mean and the largest
 * |error| of each metric against the suite's targets, and the suites
 * judged as a whole (validate_dist.h). Exits 1 when a row or a suite
 * breaks its target (unless --no-fail). A held-back suite runs only when
 * --only names it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "base/paths.h"
#include "calib/validate/train_runs.h"
#include "sim/expected_error.h"
#include "args.h"
#include "commands.h"
#include "train_out.h"
#include "validate_dist.h"

static const char about[] =
	"Predict the published training runs of models/runs/train_published.yaml\n"
	"(Megatron-LM 2021, Korthikanti et al. 2022, Llama 3 2024, ZeRO 2020) and\n"
	"train_modern.yaml (Megatron-Core/NeMo performance tables on H100, B200 and\n"
	"GB200, BF16/FP8/MXFP8/NVFP4, dense and MoE) and compare: iteration time or\n"
	"throughput, MFU, memory and activations per layer per GPU, with the % error\n"
	"of each; then per suite (one paper's table or figure) the mean and largest\n"
	"|error| against the suite's targets, and the suites judged as a whole\n"
	"(median |error|, share within 15%, bias per GPU and precision, rows judged\n"
	"not to fit). train_modern_heldback.yaml is held back: it runs only when\n"
	"--only names it (modern-heldback). Exit status 1 when a row or a suite\n"
	"misses its target (--no-fail: 0). Nothing is fitted to these figures.";

/* The runs files of the data folder, read in this order. */
static const char *const default_files[] = {"train_published.yaml", "train_modern.yaml",
					    "train_modern_heldback.yaml"};

enum { M_STEP = LLMSIM_RUN_STEP_TIME, M_MFU = LLMSIM_RUN_MFU, M_MEM = LLMSIM_RUN_STATE_MEMORY,
       M_ACT = LLMSIM_RUN_ACT_LAYER, M_PEAK = LLMSIM_RUN_PEAK_MEMORY,
       M_FLOPS = LLMSIM_RUN_MODEL_FLOPS, M_COUNT = LLMSIM_RUN_METRIC_COUNT };

/* One suite's errors of one metric. */
struct tally {
	char suite[32];
	int metric;
	int n, over;             /* rows; rows over their target */
	double sum, sum_signed, max_abs;
	double target_pct, mean_target_pct; /* 0: none */
};

#define MAX_TALLIES 64

static struct tally *tally_of(struct tally *t, int *nt, const char *suite, int metric)
{
	for (int i = 0; i < *nt; i++)
		if (t[i].metric == metric && !strcmp(t[i].suite, suite))
			return &t[i];
	if (*nt >= MAX_TALLIES)
		return NULL;
	struct tally *x = &t[(*nt)++];
	memset(x, 0, sizeof *x);
	snprintf(x->suite, sizeof x->suite, "%s", suite);
	x->metric = metric;
	return x;
}

/* The suite misses a target: a row over its own, or the mean over the suite's. */
static int tally_fails(const struct tally *t)
{
	return t->over > 0 || (t->mean_target_pct > 0 && t->n && t->sum / t->n > t->mean_target_pct);
}

struct outcome {
	int ok;
	struct llmsim_expected_error expected; /* what llmsim claims for a step on its GPU */
	char error[LLMSIM_ERR_MSG_MAX];
	struct llmsim_run_outcome o;
};

static double err_pct(double pred, double pub)
{
	return 100.0 * (pred - pub) / pub;
}

static int run_one(const struct llmsim_run_entry *e, struct outcome *o)
{
	struct llmsim_err err = {0};
	memset(o, 0, sizeof *o);
	if (llmsim_run_predict(e, &o->o, &err)) {
		snprintf(o->error, sizeof o->error, "%s", err.msg);
		return -1;
	}
	o->ok = 1;
	llmsim_expected_error(&o->o.gpu, LLMSIM_PRED_TRAIN_STEP, &o->expected);
	return 0;
}

static void fmt_metric(char *buf, int k, double v)
{
	if (k == M_STEP)
		llmsim_fmt_time(buf, v);
	else if (k == M_MFU)
		llmsim_fmt_pct(buf, v);
	else if (k == M_FLOPS)
		llmsim_fmt_flops_rate(buf, v);
	else
		llmsim_fmt_bytes(buf, v);
}

static const char *unit_key(int k, int pub)
{
	if (k == M_STEP)
		return pub ? "published_s" : "predicted_s";
	if (k == M_MEM || k == M_ACT || k == M_PEAK)
		return pub ? "published_bytes" : "predicted_bytes";
	if (k == M_FLOPS)
		return pub ? "published_flops_per_s" : "predicted_flops_per_s";
	return pub ? "published" : "predicted";
}

/* The runs and suites of every file, appended to *all. */
static int load_file(const char *cmd, const char *path, struct llmsim_run_file *all)
{
	struct llmsim_err err = {0};
	struct llmsim_run_file f;
	if (llmsim_run_file_load(path, &f, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	struct llmsim_run_entry *r = realloc(all->runs, (size_t)(all->n + f.n) * sizeof *r);
	if (r)
		all->runs = r;
	struct llmsim_run_suite *t =
		realloc(all->suites, (size_t)(all->nsuites + f.nsuites + 1) * sizeof *t);
	if (t)
		all->suites = t;
	if (!r || !t) {
		llmsim_run_file_release(&f);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	memcpy(all->runs + all->n, f.runs, (size_t)f.n * sizeof *r);
	if (f.nsuites)
		memcpy(all->suites + all->nsuites, f.suites, (size_t)f.nsuites * sizeof *t);
	all->n += f.n;
	all->nsuites += f.nsuites;
	llmsim_run_file_release(&f);
	return 0;
}

/* The text line of a row that does not fit: its memory against the GPU's. */
static void not_fit_row(struct llmsim_table *t, const struct llmsim_run_entry *e,
			const struct outcome *o, int first, const char *gpus, const char *line)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX + 8];
	const struct llmsim_train_mem *m = &o->o.r.mem;
	int host = o->o.r.gpu_fits;
	llmsim_fmt_bytes(a, host ? m->host_per_node_bytes : m->total_bytes);
	llmsim_fmt_bytes(b, host ? m->host_bytes : m->hbm_bytes);
	snprintf(c, sizeof c, "%s %s", host ? "host" : "HBM", b);
	llmsim_table_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\tdoes not fit", first ? e->name : "",
			  first ? e->gpu : "", first ? gpus : "", first ? line : "",
			  host ? "host memory" : "memory", a, c);
}

static void run_json(struct llmsim_json *j, const struct llmsim_run_entry *e,
		     const struct outcome *o)
{
	llmsim_json_obj_begin(j, NULL);
	llmsim_json_str(j, "name", e->name);
	llmsim_json_str(j, "suite", e->suite);
	if (e->held_back)
		llmsim_json_bool(j, "held_back", 1);
	llmsim_json_str(j, "source", e->source);
	llmsim_json_str(j, "model", e->has_inline ? e->inline_model.name : e->model);
	llmsim_json_str(j, "gpu", e->gpu);
	llmsim_json_str(j, "stack", e->opts.stack >= 0 ? llmsim_run_stack_names[e->opts.stack]
						       : llmsim_stack_name(e->cfg.stack));
	llmsim_json_str(j, "precision", e->precision);
	if (e->not_modelled[0])
		llmsim_json_str(j, "not_modelled", e->not_modelled);
	if (e->target_pct > 0)
		llmsim_json_num(j, "target_pct", e->target_pct);
	if (o->ok && o->o.published[M_STEP] > 0) {
		llmsim_json_num(j, "expected_error_pct", 100 * o->expected.abs_frac);
		llmsim_json_str(j, "expected_error_source", o->expected.source);
	}
	if (!o->ok) {
		llmsim_json_str(j, "error", o->error);
		llmsim_json_obj_end(j);
		return;
	}
	llmsim_json_bool(j, "fits", o->o.r.fits);
	llmsim_json_num(j, "memory_bytes", o->o.r.mem.total_bytes);
	llmsim_json_num(j, "hbm_bytes", o->o.r.mem.hbm_bytes);
	if (e->published_tokens_per_gpu_s > 0) {
		llmsim_json_num(j, "published_tokens_per_s_per_gpu", e->published_tokens_per_gpu_s);
		llmsim_json_num(j, "predicted_tokens_per_s_per_gpu",
				o->o.r.tokens_per_s / e->cfg.gpus);
	}
	for (int k = 0; k < M_COUNT; k++) {
		if (o->o.published[k] <= 0)
			continue;
		llmsim_json_obj_begin(j, llmsim_run_metric_name(k));
		llmsim_json_num(j, unit_key(k, 0), o->o.predicted[k]);
		llmsim_json_num(j, unit_key(k, 1), o->o.published[k]);
		llmsim_json_num(j, "error_pct", err_pct(o->o.predicted[k], o->o.published[k]));
		llmsim_json_obj_end(j);
	}
	llmsim_json_obj_begin(j, "train");
	train_json_result(j, &o->o.r);
	llmsim_json_obj_end(j);
	llmsim_json_obj_end(j);
}

/* The suites with statistics targets among the n runs kept: each judged
 * as a whole into v (room for all->nsuites); returns how many. */
static int judge_suites(const struct llmsim_run_file *all, const struct outcome *out,
			struct validate_dist *v)
{
	int nv = 0;
	struct llmsim_run_point *pts = calloc(all->n ? all->n : 1, sizeof *pts);
	if (!pts)
		return 0;
	for (int s = 0; s < all->nsuites; s++) {
		const struct llmsim_run_suite *t = &all->suites[s];
		if (!llmsim_run_suite_has_targets(t))
			continue;
		int m = 0;
		for (int i = 0; i < all->n; i++) {
			if (strcmp(all->runs[i].suite, t->name))
				continue;
			struct llmsim_run_point *p = &pts[m++];
			p->gpu = all->runs[i].gpu;
			p->precision = all->runs[i].precision;
			p->ok = out[i].ok;
			p->fits = out[i].ok && out[i].o.r.fits;
			p->has_err = out[i].ok && !llmsim_run_time_error(&out[i].o, &p->err_pct);
		}
		if (!m)
			continue;
		v[nv].t = t;
		llmsim_run_dist_compute(t, pts, m, &v[nv].d);
		nv++;
	}
	free(pts);
	return nv;
}

int cmd_validate(int argc, char **argv, const struct cli_setup *s)
{
	(void)s; /* no model or GPU of its own: its verbs load theirs */
	const char *cmd = "llmsim validate";
	const char *suite = NULL, *only = NULL;
	int json = 0, no_fail = 0;
	const struct llmsim_opt opts[] = {
		{"suite", LLMSIM_ARG_STRING, &suite, "FILE", "runs file (default: <data>/models/runs/train_published.yaml, train_modern.yaml, train_modern_heldback.yaml)", 0, NULL, NULL},
		{"only", LLMSIM_ARG_STRING, &only, "NAME", "run one suite only (k22-table5, n21-table1, k22-figure1, l24, d24, r20, modern, modern-heldback)", 0, NULL, NULL},
		{"no-fail", LLMSIM_ARG_FLAG, &no_fail, NULL, "exit 0 even when a target is missed (exploring)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "[--suite FILE] [--only NAME] [--no-fail] [--json]", about,
				   argc - 1, argv + 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
	if (rc == LLMSIM_ARGS_HELP)
		return 0;
	if (rc)
		return 2;
	struct llmsim_run_file all = {0};
	char shown[3200] = ""; /* the files, for messages and JSON */
	if (suite) {
		if (load_file(cmd, suite, &all))
			return 1;
		snprintf(shown, sizeof shown, "%s", suite);
	} else {
		for (size_t i = 0; i < sizeof default_files / sizeof *default_files; i++) {
			char path[1024];
			if (llmsim_data_path(path, sizeof path, "models/runs", default_files[i])) {
				fprintf(stderr, "%s: no llmsim data folder: %s\n", cmd,
					llmsim_data_dir_hint());
				llmsim_run_file_release(&all);
				return 1;
			}
			if (load_file(cmd, path, &all)) {
				llmsim_run_file_release(&all);
				return 1;
			}
			size_t len = strlen(shown);
			snprintf(shown + len, sizeof shown - len, "%s%s", i ? ", " : "", path);
		}
	}
	struct llmsim_run_entry *runs = all.runs;
	int n = all.n;
	{ /* keep the runs of that suite; without --only, those not held back */
		int k = 0;
		for (int i = 0; i < n; i++)
			if (only ? !strcmp(runs[i].suite, only) : !runs[i].held_back)
				runs[k++] = runs[i];
		if (only && !k) {
			fprintf(stderr, "%s: --only '%s': no suite of that name in %s\n", cmd, only,
				shown);
			llmsim_run_file_release(&all);
			return 2;
		}
		n = all.n = k;
	}
	struct outcome *out = calloc(n ? n : 1, sizeof *out);
	struct tally *tl = calloc(MAX_TALLIES, sizeof *tl);
	struct validate_dist *dist = calloc(all.nsuites + 1, sizeof *dist);
	if (!out || !tl || !dist) {
		free(out);
		free(tl);
		free(dist);
		llmsim_run_file_release(&all);
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	int failed = 0, nt = 0;
	for (int i = 0; i < n; i++) {
		if (run_one(&runs[i], &out[i])) {
			failed++;
			continue;
		}
		for (int k = 0; k < M_COUNT; k++)
			if (out[i].o.published[k] > 0) {
				double e = err_pct(out[i].o.predicted[k], out[i].o.published[k]);
				struct tally *t = tally_of(tl, &nt, runs[i].suite, k);
				if (!t) {
					fprintf(stderr, "%s: more than %d suite metrics: row %s not "
						"tallied\n", cmd, MAX_TALLIES, runs[i].name);
					free(tl);
					free(out);
					free(dist);
					llmsim_run_file_release(&all);
					return 1;
				}
				t->n++;
				t->sum += fabs(e);
				t->sum_signed += e;
				t->max_abs = fmax(t->max_abs, fabs(e));
				/* the row's target covers its main metric: the first
				 * published (MFU follows from the step time) */
				int main_k = 0;
				while (main_k < M_COUNT && !(out[i].o.published[main_k] > 0))
					main_k++;
				if (k == main_k && runs[i].target_pct > 0) {
					t->target_pct = fmax(t->target_pct, runs[i].target_pct);
					t->over += fabs(e) > runs[i].target_pct;
				}
				if (k == main_k && runs[i].mean_target_pct > 0)
					t->mean_target_pct = runs[i].mean_target_pct;
			}
	}
	int missed = 0;
	for (int i = 0; i < nt; i++)
		missed += tally_fails(&tl[i]);
	int nd = judge_suites(&all, out, dist);
	for (int i = 0; i < nd; i++)
		missed += !dist[i].d.pass;

	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "suite", shown);
		llmsim_json_arr_begin(&j, "runs");
		for (int i = 0; i < n; i++)
			run_json(&j, &runs[i], &out[i]);
		llmsim_json_arr_end(&j);
		llmsim_json_arr_begin(&j, "suites");
		for (int i = 0; i < nt; i++) {
			const struct tally *t = &tl[i];
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "suite", t->suite);
			llmsim_json_str(&j, "metric", llmsim_run_metric_name(t->metric));
			llmsim_json_int(&j, "rows", t->n);
			llmsim_json_num(&j, "mean_abs_error_pct", t->sum / t->n);
			llmsim_json_num(&j, "mean_error_pct", t->sum_signed / t->n);
			llmsim_json_num(&j, "max_abs_error_pct", t->max_abs);
			if (t->target_pct > 0)
				llmsim_json_num(&j, "row_target_pct", t->target_pct);
			if (t->mean_target_pct > 0)
				llmsim_json_num(&j, "mean_target_pct", t->mean_target_pct);
			if (t->target_pct > 0 || t->mean_target_pct > 0)
				llmsim_json_bool(&j, "pass", !tally_fails(t));
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		validate_dist_json(&j, dist, nd);
		llmsim_json_int(&j, "failed", failed);
		llmsim_json_int(&j, "targets_missed", missed);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		static const char *const head[] = {"<run", "<gpu", "gpus", "<configuration",
						   "<metric", "predicted", "published", "error"};
		struct llmsim_table t;
		llmsim_table_init(&t, 8, head);
		for (int i = 0; i < n; i++) {
			char gpus[16], line[192];
			snprintf(gpus, sizeof gpus, "%d", runs[i].cfg.gpus);
			if (!out[i].ok) {
				llmsim_table_rowf(&t, "%s\t%s\t%s\terror: %s\t\t\t\t", runs[i].name,
						  runs[i].gpu, gpus, out[i].error);
				continue;
			}
			train_cfg_line(line, sizeof line, &runs[i].cfg);
			int first = 1;
			for (int k = 0; k < M_COUNT; k++) {
				if (out[i].o.published[k] <= 0)
					continue;
				char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
				fmt_metric(a, k, out[i].o.predicted[k]);
				fmt_metric(b, k, out[i].o.published[k]);
				llmsim_table_rowf(&t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%+.1f%%",
						  first ? runs[i].name : "", first ? runs[i].gpu : "",
						  first ? gpus : "", first ? line : "", llmsim_run_metric_name(k), a, b,
						  err_pct(out[i].o.predicted[k], out[i].o.published[k]));
				first = 0;
			}
			if (!out[i].o.r.fits)
				not_fit_row(&t, &runs[i], &out[i], first, gpus, line);
		}
		llmsim_table_print(&t, stdout);
		llmsim_table_release(&t);
		putchar('\n');
		static const char *const shead[] = {"<suite", "<metric", "rows", "mean |err|",
						    "mean signed", "max |err|", "<target", "<verdict"};
		struct llmsim_table st;
		llmsim_table_init(&st, 8, shead);
		for (int i = 0; i < nt; i++) {
			const struct tally *x = &tl[i];
			char tgt[64] = "";
			if (x->mean_target_pct > 0 && x->target_pct > 0)
				snprintf(tgt, sizeof tgt, "mean <= %.1f%%, each <= %.1f%%", x->mean_target_pct,
					 x->target_pct);
			else if (x->target_pct > 0)
				snprintf(tgt, sizeof tgt, "each <= %.1f%%", x->target_pct);
			else if (x->mean_target_pct > 0)
				snprintf(tgt, sizeof tgt, "mean <= %.1f%%", x->mean_target_pct);
			const char *verdict = !tgt[0] ? "" : tally_fails(x) ? "MISSED" : "met";
			llmsim_table_rowf(&st, "%s\t%s\t%d\t%.1f%%\t%+.1f%%\t%.1f%%\t%s\t%s", x->suite,
					  llmsim_run_metric_name(x->metric), x->n, x->sum / x->n,
					  x->sum_signed / x->n, x->max_abs, tgt, verdict);
		}
		llmsim_table_print(&st, stdout);
		llmsim_table_release(&st);
		validate_dist_print(dist, nd, stdout);
		int noted = 0;
		for (int i = 0; i < n; i++)
			noted += runs[i].not_modelled[0] != 0;
		if (noted)
			printf("%d row(s) name fields the simulator prices as something nearer it "
			       "(stack, precision recipe, recompute modules, offload, FSDP, MoE "
			       "dispatch, TP/CP overlap): --json 'not_modelled'\n", noted);
		/* what llmsim claims for a step on each GPU, to set beside the rows */
		for (int i = 0; i < n; i++) {
			int seen = !out[i].ok || !(out[i].o.published[M_STEP] > 0);
			for (int k = 0; k < i && !seen; k++)
				seen = out[k].ok && out[k].o.published[M_STEP] > 0 &&
				       !strcmp(runs[k].gpu, runs[i].gpu);
			if (!seen)
				printf("expected error of a step on %s: +/- %.1f%% (%s)\n", runs[i].gpu,
				       100 * out[i].expected.abs_frac, out[i].expected.source);
		}
		if (failed)
			printf("%d run(s) could not be simulated\n", failed);
		if (missed)
			printf("%d suite target(s) missed%s\n", missed, no_fail ? " (--no-fail)" : "");
	}
	free(tl);
	free(out);
	free(dist);
	llmsim_run_file_release(&all);
	return failed || (missed && !no_fail) ? 1 : 0;
}
