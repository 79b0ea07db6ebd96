/*
 * cmd_trace.c - `llmsim trace capture|show|compare|replay|import|export`:
 * trace-driven mode. capture runs an unmodified CUDA program under
 * libllmsim_inject.so; the other verbs need no GPU: they read the trace
 * (SQLite, or the text form, gzip-compressed or not), classify its kernels,
 * recover their shapes, compare them with the GPU model, and price the
 * same program on another GPU.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/fmt.h"
#include "../base/gzfile.h"
#include "../base/json.h"
#include "../base/paths.h"
#include "../calib/store.h"
#include "../calib/trace/trace.h"
#include "../calib/trace/trace_analyze.h"
#include "../hw/gpu.h"
#include "../models/model.h"
#include "args.h"
#include "commands.h"

static const char trace_about[] =
	"Trace-driven mode: capture any CUDA program's kernels, compare them with\n"
	"the GPU model, replay the program on another GPU.\n\n"
	"verbs:\n"
	"  capture   run a program under the injection library into --db (needs a GPU)\n"
	"  show      kernels by class, the heaviest kernels, NVTX ranges\n"
	"  compare   each kernel's op recovered and predicted, against its measured time\n"
	"  replay    the same program predicted on another GPU (--gpu)\n"
	"  import    load a text trace (the injection library's fallback) into --db\n"
	"  export    write a trace run as text\n"
	"  to-calib  add the recovered GEMM/attention kernels to a calibration store";

static int fail(const char *cmd, const struct llmsim_err *err)
{
	fprintf(stderr, "%s: %s\n", cmd, err->msg);
	return 1;
}

/* Load a trace; a relative path not found here is looked for in the data
 * folder (so calib/data/trace_llama.txt.gz reads from anywhere). */
static int load_trace(const char *cmd, const char *path, int64_t run, struct llmsim_trace *t)
{
	struct llmsim_err err = {0};
	char p[PATH_MAX];
	llmsim_trace_init(t);
	if (llmsim_trace_load(llmsim_data_input(path, p, sizeof p), run, t, &err))
		return fail(cmd, &err);
	return 0;
}

static double pct_err(double pred, double meas)
{
	return meas > 0 ? 100.0 * fabs(pred - meas) / meas : NAN;
}

static char *fmt_pct(char *buf, double pct)
{
	if (!isfinite(pct))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else
		snprintf(buf, LLMSIM_FMT_MAX, "%.1f%%", pct);
	return buf;
}

/* ---- show ---- */

static void print_run(FILE *f, const char *path, const struct llmsim_trace *t)
{
	const struct llmsim_trace_run *r = &t->run;
	fprintf(f, "trace %s, run %lld: %s (%d SMs), %s, %zu kernels, %zu copies, %zu NVTX ranges\n",
		path, (long long)r->id, r->device_name[0] ? r->device_name : "unknown GPU",
		r->device_sms, r->started_at[0] ? r->started_at : "?", t->nkernels, t->ncopies,
		t->nranges);
	if (r->command[0])
		fprintf(f, "command: %s\n", r->command);
	if (r->dropped_records)
		fprintf(f, "warning: CUPTI dropped %lld records: the trace is incomplete\n",
			(long long)r->dropped_records);
}

static void json_run(struct llmsim_json *j, const char *path, const struct llmsim_trace *t)
{
	const struct llmsim_trace_run *r = &t->run;
	llmsim_json_str(j, "db", path);
	llmsim_json_obj_begin(j, "run");
	llmsim_json_int(j, "id", r->id);
	llmsim_json_str(j, "started_at", r->started_at);
	llmsim_json_str(j, "host", r->host);
	llmsim_json_str(j, "command", r->command);
	llmsim_json_str(j, "device_name", r->device_name);
	llmsim_json_int(j, "device_sms", r->device_sms);
	llmsim_json_int(j, "device_count", r->device_count);
	llmsim_json_int(j, "cupti_version", r->cupti_version);
	llmsim_json_bool(j, "nvtx", r->nvtx);
	llmsim_json_int(j, "dropped_records", r->dropped_records);
	llmsim_json_int(j, "kernels", (int64_t)t->nkernels);
	llmsim_json_int(j, "copies", (int64_t)t->ncopies);
	llmsim_json_int(j, "ranges", (int64_t)t->nranges);
	llmsim_json_obj_end(j);
}

static int trace_show(int argc, char **argv)
{
	const char *cmd = "llmsim trace show", *db = NULL;
	int64_t run = 0, top = 15;
	int json = 0;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "trace (SQLite or text form)", 0, NULL, NULL},
		{"run", LLMSIM_ARG_I64, &run, "ID", "run to show (default: the last)", 0, NULL, NULL},
		{"top", LLMSIM_ARG_I64, &top, "N", "heaviest kernels and ranges to list (default 15)",
		 1, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE [--run ID] [--top N] [--json]",
				   "A trace's kernels by class, its heaviest kernels and its NVTX ranges.",
				   argc - 1, argv + 1, opts, 4, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	struct llmsim_trace t;
	if (load_trace(cmd, db, run, &t))
		return 1;

	struct llmsim_trace_summary sum;
	struct llmsim_err err = {0};
	if (llmsim_trace_summarize(&t, &sum, &err)) {
		llmsim_trace_release(&t);
		return fail(cmd, &err);
	}
	const double *cls_s = sum.cls_s, total = sum.total_s;
	const int64_t *cls_n = sum.cls_n;
	const struct llmsim_trace_name_sum *ks = sum.kernels, *rs = sum.ranges;
	size_t nk = sum.nkernels, nr = sum.nranges;
	char b1[LLMSIM_FMT_MAX], b2[LLMSIM_FMT_MAX], b3[LLMSIM_FMT_MAX], sn[160];
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		json_run(&j, db, &t);
		llmsim_json_num(&j, "total_s", total);
		llmsim_json_obj_begin(&j, "classes");
		for (int c = 0; c < LLMSIM_TC_COUNT; c++) {
			if (!cls_n[c])
				continue;
			llmsim_json_obj_begin(&j, llmsim_trace_class_name(c));
			llmsim_json_int(&j, "count", cls_n[c]);
			llmsim_json_num(&j, "time_s", cls_s[c]);
			llmsim_json_num(&j, "share", total > 0 ? cls_s[c] / total : 0);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_obj_end(&j);
		llmsim_json_arr_begin(&j, "kernels");
		for (size_t i = 0; i < nk; i++) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "name", ks[i].name);
			llmsim_json_str(&j, "short_name", llmsim_trace_short_name(ks[i].name, sn, sizeof sn));
			llmsim_json_str(&j, "class", llmsim_trace_class_name(llmsim_trace_classify(ks[i].name)));
			llmsim_json_int(&j, "count", ks[i].count);
			llmsim_json_num(&j, "time_s", ks[i].s);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_arr_begin(&j, "ranges");
		for (size_t i = 0; i < nr; i++) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "name", rs[i].name);
			llmsim_json_int(&j, "count", rs[i].count);
			llmsim_json_num(&j, "kernel_time_s", rs[i].s);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		print_run(stdout, db, &t);
		static const char *const h1[] = {"<class", "kernels", "time", "share"};
		struct llmsim_table tb;
		llmsim_table_init(&tb, 4, h1);
		for (int c = 0; c < LLMSIM_TC_COUNT; c++)
			if (cls_n[c])
				llmsim_table_rowf(&tb, "%s\t%lld\t%s\t%s", llmsim_trace_class_name(c),
						  (long long)cls_n[c], llmsim_fmt_time(b1, cls_s[c]),
						  llmsim_fmt_pct(b2, total > 0 ? cls_s[c] / total : 0));
		llmsim_table_rowf(&tb, "total\t%zu\t%s\t", t.nkernels + t.ncopies,
				  llmsim_fmt_time(b1, total));
		fputc('\n', stdout);
		llmsim_table_print(&tb, stdout);
		llmsim_table_release(&tb);

		static const char *const h2[] = {"<kernel", "<class", "count", "time", "mean", "share"};
		llmsim_table_init(&tb, 6, h2);
		for (size_t i = 0; i < nk && (int64_t)i < top; i++)
			llmsim_table_rowf(&tb, "%s\t%s\t%lld\t%s\t%s\t%s",
					  llmsim_trace_short_name(ks[i].name, sn, 72),
					  llmsim_trace_class_name(llmsim_trace_classify(ks[i].name)),
					  (long long)ks[i].count, llmsim_fmt_time(b1, ks[i].s),
					  llmsim_fmt_time(b2, ks[i].s / (double)ks[i].count),
					  llmsim_fmt_pct(b3, total > 0 ? ks[i].s / total : 0));
		printf("\nheaviest kernels (%zu distinct):\n", nk);
		llmsim_table_print(&tb, stdout);
		llmsim_table_release(&tb);

		if (nr) {
			static const char *const h3[] = {"<NVTX range", "count", "kernel time", "share"};
			llmsim_table_init(&tb, 4, h3);
			for (size_t i = 0; i < nr && (int64_t)i < top; i++)
				llmsim_table_rowf(&tb, "%s\t%lld\t%s\t%s", rs[i].name,
						  (long long)rs[i].count, llmsim_fmt_time(b1, rs[i].s),
						  llmsim_fmt_pct(b2, total > 0 ? rs[i].s / total : 0));
			printf("\nNVTX ranges by the kernel time launched inside (%zu names):\n", nr);
			llmsim_table_print(&tb, stdout);
			llmsim_table_release(&tb);
		} else {
			printf("\nno NVTX ranges (capture with --nvtx where the program sets them)\n");
		}
	}
	llmsim_trace_summary_release(&sum);
	llmsim_trace_release(&t);
	return 0;
}

/* ---- compare and replay ---- */

/* The llmsim GPU a CUPTI device name maps to, or NULL. */
static const char *gpu_of_device(const char *dev)
{
	static const struct {
		const char *pat, *gpu;
	} map[] = {
		{"H200", "h200"}, {"H100", "h100"}, {"B200", "b200"}, {"A100", "a100"},
		{"MI300X", "mi300x"},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strstr(dev, map[i].pat))
			return map[i].gpu;
	return NULL;
}

static int row_by_time(const void *a, const void *b)
{
	const struct llmsim_trace_row *x = a, *y = b;
	return (x->measured_s < y->measured_s) - (x->measured_s > y->measured_s);
}

static void json_sum(struct llmsim_json *j, const struct llmsim_trace_class_sum *s, int replay)
{
	llmsim_json_int(j, "kernels", s->kernels);
	llmsim_json_int(j, "unmatched_kernels", s->unmatched_kernels);
	llmsim_json_num(j, "measured_s", s->measured_s);
	llmsim_json_num(j, "predicted_s", s->predicted_s);
	llmsim_json_num(j, "unmatched_s", s->unmatched_s);
	llmsim_json_num(j, "abs_pct_err", pct_err(s->predicted_s, s->measured_s));
	llmsim_json_num(j, "matched_measured_s", s->matched_measured_s);
	llmsim_json_num(j, "matched_predicted_s", s->matched_predicted_s);
	llmsim_json_num(j, "matched_abs_pct_err",
			pct_err(s->matched_predicted_s, s->matched_measured_s));
	if (replay) {
		llmsim_json_num(j, "replay_s", s->replay_s);
		llmsim_json_num(j, "target_predicted_s", s->target_s);
	}
}

static void print_cmp(const char *db, const struct llmsim_trace *t,
		      const struct llmsim_trace_cmp *c, int all)
{
	char b1[LLMSIM_FMT_MAX], b2[LLMSIM_FMT_MAX], b3[LLMSIM_FMT_MAX], b4[LLMSIM_FMT_MAX],
		b5[LLMSIM_FMT_MAX];
	print_run(stdout, db, t);
	printf("model for shapes: %s; GPU model: %s%s%s\n", c->model[0] ? c->model : "none",
	       c->gpu, c->replay ? "; replayed on " : "", c->replay ? c->target : "");
	printf("%lld op ranges recovered (%lld compared as a whole); unmatched kernels count at "
	       "their measured time%s\n\n",
	       (long long)c->op_ranges, (long long)c->range_level,
	       c->replay ? " scaled by the class rule" : "");
	if (c->nonvec_kernels)
		printf("%lld kernels on PyTorch's non-vectorized elementwise path (strided operands):"
		       " measured %s, predicted %s with their scalar loads and index math\n",
		       (long long)c->nonvec_kernels, llmsim_fmt_time(b1, c->nonvec_measured_s),
		       llmsim_fmt_time(b2, c->nonvec_predicted_s));
	if (c->excluded_kernels)
		printf("left out (--phases-only): %lld kernels/copies outside prefill/decode ranges,"
		       " %s\n\n", (long long)c->excluded_kernels, llmsim_fmt_time(b1, c->excluded_s));
	struct llmsim_table tb;
	if (!c->replay) {
		static const char *const h[] = {"<class", "kernels", "unmatched", "measured",
						"predicted", "error", "matched error"};
		llmsim_table_init(&tb, 7, h);
	} else {
		static const char *const h[] = {"<class", "kernels", "unmatched", "measured",
						"replay", "target model", "rule (unmatched)"};
		llmsim_table_init(&tb, 7, h);
	}
	for (int k = 0; k <= LLMSIM_TC_COUNT; k++) {
		const struct llmsim_trace_class_sum *s = k < LLMSIM_TC_COUNT ? &c->cls[k] : &c->total;
		if (!s->kernels)
			continue;
		const char *name = k < LLMSIM_TC_COUNT ? llmsim_trace_class_name(k) : "total";
		if (!c->replay) {
			llmsim_table_rowf(&tb, "%s\t%lld\t%lld\t%s\t%s\t%s\t%s", name,
					  (long long)s->kernels, (long long)s->unmatched_kernels,
					  llmsim_fmt_time(b1, s->measured_s),
					  llmsim_fmt_time(b2, s->predicted_s),
					  fmt_pct(b3, pct_err(s->predicted_s, s->measured_s)),
					  fmt_pct(b4, pct_err(s->matched_predicted_s,
							      s->matched_measured_s)));
		} else {
			char rule[96] = "";
			if (k < LLMSIM_TC_COUNT && s->unmatched_kernels)
				snprintf(rule, sizeof rule, "time x%.3f (%s)", c->unmatched_ratio[k],
					 c->rule[k]);
			llmsim_table_rowf(&tb, "%s\t%lld\t%lld\t%s\t%s\t%s\t%s", name,
					  (long long)s->kernels, (long long)s->unmatched_kernels,
					  llmsim_fmt_time(b1, s->measured_s),
					  llmsim_fmt_time(b2, s->replay_s),
					  llmsim_fmt_time(b3, s->target_s), rule);
		}
	}
	llmsim_table_print(&tb, stdout);
	llmsim_table_release(&tb);

	if (c->nphases) {
		static const char *const h[] = {"<phase", "instances", "GPU span/inst", "measured/inst",
						"predicted/inst", "error", "replay/inst"};
		llmsim_table_init(&tb, c->replay ? 7 : 6, h);
		for (size_t i = 0; i < c->nphases; i++) {
			const struct llmsim_trace_phase_sum *p = &c->phases[i];
			double n = p->instances > 0 ? (double)p->instances : 1;
			llmsim_table_rowf(&tb, "%s\t%lld\t%s\t%s\t%s\t%s\t%s", p->name,
					  (long long)p->instances, llmsim_fmt_time(b5, p->span_s),
					  llmsim_fmt_time(b1, p->measured_s / n),
					  llmsim_fmt_time(b2, p->predicted_s / n),
					  fmt_pct(b3, pct_err(p->predicted_s, p->measured_s)),
					  llmsim_fmt_time(b4, p->replay_s / n));
		}
		printf("\nper phase (kernel time per instance; GPU span: median over instances of "
		       "first kernel start to last kernel end):\n");
		llmsim_table_print(&tb, stdout);
		llmsim_table_release(&tb);
	}

	struct llmsim_trace_row *rows = malloc((c->nrows ? c->nrows : 1) * sizeof *rows);
	if (!rows)
		return;
	memcpy(rows, c->rows, c->nrows * sizeof *rows);
	qsort(rows, c->nrows, sizeof *rows, row_by_time);
	size_t show = all ? c->nrows : (c->nrows < 25 ? c->nrows : 25);
	static const char *const h[] = {"<phase", "<range", "<kernel", "n", "measured",
					"predicted", "error", "<op / note"};
	static const char *const hr[] = {"<phase", "<range", "<kernel", "n", "measured",
					 "replay", "", "<op / note"};
	llmsim_table_init(&tb, 8, c->replay ? hr : h);
	for (size_t i = 0; i < show; i++) {
		const struct llmsim_trace_row *r = &rows[i];
		llmsim_table_rowf(&tb, "%s\t%s\t%.48s\t%lld\t%s\t%s\t%s\t%s", r->phase, r->range,
				  r->kernel, (long long)r->launches, llmsim_fmt_time(b1, r->measured_s),
				  r->matched ? llmsim_fmt_time(b2, c->replay ? r->replay_s
									   : r->predicted_s)
					     : "unmatched",
				  r->matched && !c->replay ? fmt_pct(b5, pct_err(r->predicted_s,
										 r->measured_s))
							  : "",
				  r->matched ? r->op_spec : r->note);
	}
	printf("\nheaviest rows (%zu of %zu%s):\n", show, c->nrows,
	       show < c->nrows ? "; --all for every row" : "");
	llmsim_table_print(&tb, stdout);
	llmsim_table_release(&tb);
	free(rows);
}

static void json_cmp(const char *db, const struct llmsim_trace *t,
		     const struct llmsim_trace_cmp *c)
{
	struct llmsim_json j;
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	json_run(&j, db, t);
	llmsim_json_str(&j, "gpu", c->gpu);
	if (c->replay)
		llmsim_json_str(&j, "target", c->target);
	llmsim_json_str(&j, "model", c->model);
	llmsim_json_int(&j, "op_ranges", c->op_ranges);
	llmsim_json_obj_begin(&j, "nonvectorized");
	llmsim_json_int(&j, "kernels", c->nonvec_kernels);
	llmsim_json_num(&j, "measured_s", c->nonvec_measured_s);
	llmsim_json_num(&j, "predicted_s", c->nonvec_predicted_s);
	llmsim_json_obj_end(&j);
	llmsim_json_int(&j, "excluded_kernels", c->excluded_kernels);
	llmsim_json_num(&j, "excluded_s", c->excluded_s);
	llmsim_json_int(&j, "range_level", c->range_level);
	llmsim_json_arr_begin(&j, "kernels");
	for (size_t i = 0; i < c->nrows; i++) {
		const struct llmsim_trace_row *r = &c->rows[i];
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "phase", r->phase);
		llmsim_json_str(&j, "range", r->range);
		llmsim_json_str(&j, "kernel", r->kernel);
		llmsim_json_str(&j, "class", llmsim_trace_class_name(r->cls));
		llmsim_json_bool(&j, "matched", r->matched);
		llmsim_json_str(&j, "op", r->op_spec);
		llmsim_json_str(&j, "note", r->note);
		llmsim_json_int(&j, "launches", r->launches);
		llmsim_json_num(&j, "measured_s", r->measured_s);
		llmsim_json_num(&j, "predicted_s", r->predicted_s);
		llmsim_json_num(&j, "abs_pct_err", pct_err(r->predicted_s, r->measured_s));
		if (c->replay) {
			llmsim_json_num(&j, "replay_s", r->replay_s);
			llmsim_json_num(&j, "target_predicted_s", r->target_s);
		}
		llmsim_json_obj_end(&j);
	}
	llmsim_json_arr_end(&j);
	llmsim_json_obj_begin(&j, "classes");
	for (int k = 0; k < LLMSIM_TC_COUNT; k++) {
		if (!c->cls[k].kernels)
			continue;
		llmsim_json_obj_begin(&j, llmsim_trace_class_name(k));
		json_sum(&j, &c->cls[k], c->replay);
		if (c->replay) {
			/* time on the target = time here x this, for unmatched kernels */
			llmsim_json_num(&j, "unmatched_time_factor", c->unmatched_ratio[k]);
			llmsim_json_str(&j, "unmatched_rule", c->rule[k]);
		}
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_arr_begin(&j, "phases");
	for (size_t i = 0; i < c->nphases; i++) {
		const struct llmsim_trace_phase_sum *p = &c->phases[i];
		double n = p->instances > 0 ? (double)p->instances : 1;
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "phase", p->name);
		llmsim_json_int(&j, "instances", p->instances);
		llmsim_json_num(&j, "span_s", p->span_s);
		llmsim_json_num(&j, "measured_s", p->measured_s / n);
		llmsim_json_num(&j, "predicted_s", p->predicted_s / n);
		llmsim_json_num(&j, "abs_pct_err", pct_err(p->predicted_s, p->measured_s));
		if (c->replay) {
			llmsim_json_num(&j, "replay_s", p->replay_s / n);
			llmsim_json_num(&j, "target_predicted_s", p->target_s / n);
		}
		llmsim_json_obj_end(&j);
	}
	llmsim_json_arr_end(&j);
	llmsim_json_obj_begin(&j, "total");
	json_sum(&j, &c->total, c->replay);
	llmsim_json_obj_end(&j);
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

static int cmp_or_replay(int argc, char **argv, int replay)
{
	const char *cmd = replay ? "llmsim trace replay" : "llmsim trace compare";
	const char *db = NULL, *gpu_name = NULL, *from = NULL, *model = NULL;
	int64_t run = 0;
	int json = 0, all = 0, phases_only = 0;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "trace (SQLite or text form)", 0, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "NAME",
		 replay ? "GPU to replay on (required)"
			: "GPU model to compare with (default: the traced device, else h200)",
		 0, NULL, NULL},
		{"model", LLMSIM_ARG_STRING, &model, "M",
		 "model the NVTX op ranges refer to (default: an NVTX range \"model NAME\")", 0,
		 NULL, NULL},
		{"run", LLMSIM_ARG_I64, &run, "ID", "run to use (default: the last)", 0, NULL, NULL},
		{"phases-only", LLMSIM_ARG_FLAG, &phases_only, NULL,
		 "only kernels launched inside prefill/decode ranges (leave set-up out)", 0, NULL,
		 NULL},
		{"all", LLMSIM_ARG_FLAG, &all, NULL, "list every row, not the heaviest 25", 0, NULL,
		 NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
		/* replay only */
		{"from", LLMSIM_ARG_STRING, &from, "NAME",
		 "GPU the trace was taken on (default: from its device name, else h200)", 0, NULL,
		 NULL},
	};
	int rc = llmsim_args_parse(cmd, replay ? "--db FILE --gpu TARGET [--from GPU] [--model M] "
						 "[--phases-only] [--all] [--json]"
					       : "--db FILE [--gpu NAME] [--model M] [--phases-only] "
						 "[--all] [--json]",
				   replay ? "The traced program predicted on another GPU: recovered ops "
					    "re-predicted there, the rest scaled by the resource their "
					    "class is bound by."
					  : "Each kernel's op recovered and predicted by the GPU model, "
					    "compared per kernel, per class and in total.",
				   argc - 1, argv + 1, opts, replay ? 8 : 7, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	if (replay && !gpu_name)
		return llmsim_args_error(cmd, "--gpu TARGET is required");
	struct llmsim_trace t;
	if (load_trace(cmd, db, run, &t))
		return 1;
	/* A program may name its model in an NVTX range "model NAME": a
	 * shipped model's name only, never a path. */
	char declared[64] = "";
	struct llmsim_err err = {0};
	if (!model && llmsim_trace_declared_model(&t, declared, sizeof declared, &err)) {
		llmsim_trace_release(&t);
		return fail(cmd, &err);
	}
	if (!model && declared[0])
		model = declared;
	const char *src_name = replay ? from : gpu_name;
	if (!src_name)
		src_name = gpu_of_device(t.run.device_name);
	if (!src_name)
		src_name = "h200";
	struct llmsim_gpu *g = calloc(2, sizeof *g);
	struct llmsim_model *m = model ? calloc(1, sizeof *m) : NULL;
	struct llmsim_trace_cmp c;
	rc = 1;
	if (!g || (model && !m)) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		goto out;
	}
	if (llmsim_gpu_load(src_name, &g[0], &err) ||
	    (replay && llmsim_gpu_load(gpu_name, &g[1], &err)) ||
	    (m && (model == declared ? llmsim_model_load_named(model, m, &err)
				     : llmsim_model_load(model, m, &err)))) {
		fail(cmd, &err);
		goto out;
	}
	if (llmsim_trace_compare(&t, &g[0], m, replay ? &g[1] : NULL,
				 phases_only ? LLMSIM_TRACE_PHASES_ONLY : 0, &c, &err)) {
		fail(cmd, &err);
		goto out;
	}
	if (json)
		json_cmp(db, &t, &c);
	else
		print_cmp(db, &t, &c, all);
	if (!m && !json)
		printf("\nno --model: shapes were not recovered (give the model the NVTX op ranges"
		       " refer to, e.g. --model 8b)\n");
	llmsim_trace_cmp_release(&c);
	rc = 0;
out:
	free(g);
	free(m);
	llmsim_trace_release(&t);
	return rc;
}

static int trace_compare(int argc, char **argv) { return cmp_or_replay(argc, argv, 0); }
static int trace_replay(int argc, char **argv) { return cmp_or_replay(argc, argv, 1); }

/* ---- capture ---- */

static int is_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The injection library: $LLMSIM_INJECT_LIB, next to us, in the build
 * tree, or in <prefix>/lib/llmsim. */
static int find_inject(char *out, size_t size)
{
	static const char name[] = "libllmsim_inject.so";
	const char *env = getenv("LLMSIM_INJECT_LIB");
	if (env && *env) {
		if (!realpath(env, out) || !is_file(out))
			return -1;
		return 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	static const char *const rel[] = {"", "/../calib/inject", "/../lib/llmsim",
					  "/../lib64/llmsim"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s%s/%s", exe, rel[i], name);
		if (is_file(p) && realpath(p, out) && strlen(out) < size)
			return 0;
	}
	return -1;
}

/* An absolute path for a file that may not exist yet. */
static int abs_path(const char *path, char *out, size_t size)
{
	if (path[0] == '/')
		return snprintf(out, size, "%s", path) < (int)size ? 0 : -1;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return -1;
	return snprintf(out, size, "%s/%s", cwd, path) < (int)size ? 0 : -1;
}

static int trace_capture(int argc, char **argv)
{
	const char *cmd = "llmsim trace capture", *db = NULL, *txt = NULL;
	int nvtx = 0, npos = 0;
	char *pos[256];
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "SQLite file to add the trace run to", 0, NULL,
		 NULL},
		{"txt", LLMSIM_ARG_STRING, &txt, "FILE", "also write the text form here", 0, NULL,
		 NULL},
		{"nvtx", LLMSIM_ARG_FLAG, &nvtx, NULL,
		 "record the program's NVTX ranges (sets NVTX_INJECTION64_PATH)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE [--txt FILE] [--nvtx] -- COMMAND [ARGS...]",
				   "Run an unmodified CUDA program under libllmsim_inject.so, recording\n"
				   "its kernels, copies and (--nvtx) NVTX ranges. Exits with the\n"
				   "program's status.",
				   argc - 1, argv + 1, opts, 3, pos, 255, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db && !txt)
		return llmsim_args_error(cmd, "--db FILE is required");
	if (npos < 1)
		return llmsim_args_error(cmd, "no command to run (put it after --)");
	char lib[PATH_MAX], dbp[PATH_MAX], txtp[PATH_MAX];
	if (find_inject(lib, sizeof lib)) {
		fprintf(stderr, "%s: the injection library libllmsim_inject.so was not built (it needs "
				"the CUDA toolkit at build time; or set LLMSIM_INJECT_LIB)\n", cmd);
		return 1;
	}
	if (access("/proc/driver/nvidia/version", F_OK) && access("/dev/nvidiactl", F_OK)) {
		fprintf(stderr, "%s: no NVIDIA GPU driver on this machine (no "
				"/proc/driver/nvidia/version): nothing to capture\n", cmd);
		return 1;
	}
	if ((db && abs_path(db, dbp, sizeof dbp)) || (txt && abs_path(txt, txtp, sizeof txtp))) {
		fprintf(stderr, "%s: path too long\n", cmd);
		return 1;
	}
	pos[npos] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", cmd, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		if (db)
			setenv("LLMSIM_TRACE_DB", dbp, 1);
		if (txt)
			setenv("LLMSIM_TRACE_TXT", txtp, 1);
		if (nvtx) {
			setenv("NVTX_INJECTION64_PATH", lib, 1);
			setenv("LLMSIM_TRACE_NVTX", "1", 1);
		}
		execvp(pos[0], pos);
		fprintf(stderr, "%s: cannot run %s: %s\n", cmd, pos[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", cmd, strerror(errno));
			return 1;
		}
	}
	if (db && !is_file(dbp) && !(txt && is_file(txtp)) &&
	    !(WIFEXITED(st) && WEXITSTATUS(st) == 127))
		fprintf(stderr, "%s: no trace was written (did the program use CUDA?)\n", cmd);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* ---- import / export ---- */

struct import_ctx {
	const char *db;
	int runs;
	struct llmsim_err *err;
};

static int import_one(struct llmsim_trace *t, void *ctx)
{
	struct import_ctx *ic = ctx;
	int64_t id;
	int rc = llmsim_trace_db_write(ic->db, t, &id, ic->err);
	if (!rc)
		ic->runs++;
	return rc;
}

static int trace_import(int argc, char **argv)
{
	const char *cmd = "llmsim trace import", *db = NULL, *in = NULL;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "SQLite file to add the runs to", 0, NULL, NULL},
		{"in", LLMSIM_ARG_STRING, &in, "FILE", "text trace (the injection library's fallback)",
		 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE --in FILE",
				   "Load every run of a text trace into an SQLite trace database.",
				   argc - 1, argv + 1, opts, 2, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db || !in)
		return llmsim_args_error(cmd, "--db FILE and --in FILE are required");
	char inp[PATH_MAX];
	in = llmsim_data_input(in, inp, sizeof inp);
	/* Check the whole file first, so a bad line leaves the database alone. */
	struct llmsim_trace t;
	if (load_trace(cmd, in, 0, &t))
		return 1;
	llmsim_trace_release(&t);
	struct llmsim_err err = {0}, zerr = {0};
	FILE *f = llmsim_gz_open(in, NULL, &err);
	if (!f)
		return fail(cmd, &err);
	struct import_ctx ic = {db, 0, &err};
	rc = llmsim_trace_text_read(f, in, import_one, &ic, &err);
	if (llmsim_gz_close(f, in, &zerr))
		return fail(cmd, &zerr);
	if (rc)
		return fail(cmd, &err);
	fprintf(stderr, "%s: %d run%s added to %s\n", cmd, ic.runs, ic.runs == 1 ? "" : "s", db);
	return 0;
}

static int trace_export(int argc, char **argv)
{
	const char *cmd = "llmsim trace export", *db = NULL, *out = NULL;
	int64_t run = 0;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "trace (SQLite or text form)", 0, NULL, NULL},
		{"run", LLMSIM_ARG_I64, &run, "ID", "run to write (default: the last)", 0, NULL, NULL},
		{"out", LLMSIM_ARG_STRING, &out, "FILE", "output file (default: stdout)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE [--run ID] [--out FILE]",
				   "Write one trace run in the text form.", argc - 1, argv + 1, opts, 3,
				   NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	struct stat st;
	if (out && !stat(out, &st) && !S_ISREG(st.st_mode)) {
		/* rename() would replace the device or pipe itself */
		fprintf(stderr, "%s: %s: not a regular file (omit --out for stdout)\n", cmd, out);
		return 1;
	}
	struct llmsim_trace t;
	if (load_trace(cmd, db, run, &t))
		return 1;
	/* Write to a temporary file and rename: no partial output on failure. */
	char tmp[PATH_MAX + 16];
	FILE *f = stdout;
	if (out) {
		snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", out);
		int fd = mkstemp(tmp);
		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", cmd, out, strerror(errno));
			llmsim_trace_release(&t);
			return 1;
		}
	}
	struct llmsim_err err = {0};
	rc = llmsim_trace_text_write(f, &t, &err);
	llmsim_trace_release(&t);
	if (out) {
		if (fclose(f) && !rc)
			rc = llmsim_err_set(&err, LLMSIM_EIO, "%s: %s", out, strerror(errno));
		if (!rc && rename(tmp, out))
			rc = llmsim_err_set(&err, LLMSIM_EIO, "%s: %s", out, strerror(errno));
		if (rc)
			unlink(tmp);
	}
	return rc ? fail(cmd, &err) : 0;
}

/* ---- to-calib ---- */

static int trace_to_calib(int argc, char **argv)
{
	const char *cmd = "llmsim trace to-calib", *db = NULL, *cdb = NULL, *gpu_name = NULL;
	const char *model = "8b", *split = "holdout";
	int64_t run = 0;
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "trace (SQLite or text form)", 0, NULL, NULL},
		{"calib-db", LLMSIM_ARG_STRING, &cdb, "FILE",
		 "calibration store to add a run to (created if absent)", 0, NULL, NULL},
		{"gpu", LLMSIM_ARG_STRING, &gpu_name, "NAME",
		 "llmsim GPU of the traced device (default: from its name)", 0, NULL, NULL},
		{"model", LLMSIM_ARG_STRING, &model, "M",
		 "model the NVTX op ranges refer to (default 8b)", 0, NULL, NULL},
		{"split", LLMSIM_ARG_STRING, &split, "fit|holdout",
		 "which set the cases join (default holdout)", 0, NULL, NULL},
		{"run", LLMSIM_ARG_I64, &run, "ID", "trace run (default: the last)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE --calib-db FILE [--gpu NAME] [--model M] "
					"[--split fit|holdout]",
				   "Add the trace's library GEMM and attention kernels, with their shapes\n"
				   "recovered, to a calibration store as measured cases.",
				   argc - 1, argv + 1, opts, 6, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db || !cdb)
		return llmsim_args_error(cmd, "--db FILE and --calib-db FILE are required");
	if (strcmp(split, "fit") && strcmp(split, "holdout"))
		return llmsim_args_error(cmd, "--split must be fit or holdout, not '%s'", split);
	struct llmsim_trace t;
	if (load_trace(cmd, db, run, &t))
		return 1;
	if (!gpu_name)
		gpu_name = gpu_of_device(t.run.device_name);
	struct llmsim_err err = {0};
	struct llmsim_gpu *g = calloc(1, sizeof *g);
	struct llmsim_model *m = calloc(1, sizeof *m);
	struct llmsim_store *s = NULL;
	int n = 0;
	rc = 1;
	if (!g || !m) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		goto out;
	}
	if (!gpu_name) {
		fprintf(stderr, "%s: cannot tell the llmsim GPU of '%s': give --gpu\n", cmd,
			t.run.device_name);
		goto out;
	}
	if (llmsim_gpu_load(gpu_name, g, &err) || llmsim_model_load(model, m, &err) ||
	    llmsim_store_open(cdb, LLMSIM_STORE_CREATE, &s, &err) ||
	    llmsim_trace_to_calib(&t, g, m, s, split, &n, &err)) {
		fail(cmd, &err);
		goto out;
	}
	fprintf(stderr, "%s: %d cases added to %s\n", cmd, n, cdb);
	rc = 0;
out:
	llmsim_store_close(s);
	free(g);
	free(m);
	llmsim_trace_release(&t);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} verbs[] = {
		{"capture", trace_capture}, {"show", trace_show},     {"compare", trace_compare},
		{"replay", trace_replay},   {"import", trace_import}, {"export", trace_export},
		{"to-calib", trace_to_calib},
	};
	if (argc < 2) /* one line, as every usage error */
		return llmsim_args_error("llmsim trace", "a verb is required (%s)",
					 "capture|show|compare|replay|import|export|to-calib");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		llmsim_args_usage(stdout, "llmsim trace",
				  "capture|show|compare|replay|import|export|to-calib [options]",
				  trace_about,
				  NULL, 0);
		return 0;
	}
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	return llmsim_args_error("llmsim trace",
				 "unknown verb '%s' (expected capture, show, compare, replay, import,"
				 " export or to-calib)", argv[1]);
}
