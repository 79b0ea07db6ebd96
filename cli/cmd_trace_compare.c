/*
 * cmd_trace_compare.c - `llmsim trace compare` and `replay`: each kernel's op
 * recovered and predicted against its measured time, per class, phase and
 * in total; replayed, the same program priced on another GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/gpu.h"
#include "models/model.h"

#include "trace_common.h"


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
	llmsim_json_num(j, "abs_pct_err", trace_pct_err(s->predicted_s, s->measured_s));
	llmsim_json_num(j, "matched_measured_s", s->matched_measured_s);
	llmsim_json_num(j, "matched_predicted_s", s->matched_predicted_s);
	llmsim_json_num(j, "matched_abs_pct_err",
			trace_pct_err(s->matched_predicted_s, s->matched_measured_s));
	if (replay) {
		llmsim_json_num(j, "replay_s", s->replay_s);
		llmsim_json_num(j, "target_predicted_s", s->target_s);
	}
}

/* What a trace measured on one GPU says about another: one paragraph, or
 * "" when the model is the traced device's and nothing is replayed. */
static void devices_note(char *buf, size_t size, const struct llmsim_trace *t,
			 const struct llmsim_gpu *src, const struct llmsim_gpu *target)
{
	const char *dev = t->run.device_name;
	buf[0] = 0;
	if (!llmsim_gpu_device_is(src, dev))
		snprintf(buf, size,
			 "devices differ: the trace ran on %s, the GPU model is %s (%s). The ops, "
			 "shapes and kernel counts recovered transfer; the measured times, GPU "
			 "spans and the errors below are the %s's, not a check of the %s model "
			 "(trace replay --gpu %s prices the program there)\n",
			 dev, src->name, src->full_name, dev, src->name, src->name);
	else if (target)
		snprintf(buf, size,
			 "replayed from %s to %s (%s): the ops, shapes and kernel counts transfer "
			 "and are priced on %s by its model (the replay column); the measured "
			 "times and GPU spans are the %s's, and unmatched kernels move by their "
			 "class's rule alone\n",
			 dev, target->name, target->full_name, target->name, src->name);
}

static void print_cmp(const char *db, const struct llmsim_trace *t,
		      const struct llmsim_trace_cmp *c, int all, const char *note)
{
	char b1[LLMSIM_FMT_MAX], b2[LLMSIM_FMT_MAX], b3[LLMSIM_FMT_MAX], b4[LLMSIM_FMT_MAX],
		b5[LLMSIM_FMT_MAX];
	trace_print_run(stdout, db, t);
	printf("model for shapes: %s; GPU model: %s%s%s\n", c->model[0] ? c->model : "none",
	       c->gpu, c->replay ? "; replayed on " : "", c->replay ? c->target : "");
	if (note[0])
		fputs(note, stdout);
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
					  trace_fmt_pct(b3, trace_pct_err(s->predicted_s, s->measured_s)),
					  trace_fmt_pct(b4, trace_pct_err(s->matched_predicted_s,
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
					  trace_fmt_pct(b3, trace_pct_err(p->predicted_s, p->measured_s)),
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
				  r->matched && !c->replay ? trace_fmt_pct(b5, trace_pct_err(r->predicted_s,
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
		     const struct llmsim_trace_cmp *c, const struct llmsim_gpu *src,
		     const char *note)
{
	struct llmsim_json j;
	llmsim_json_init(&j, stdout);
	llmsim_json_obj_begin(&j, NULL);
	trace_json_run(&j, db, t);
	llmsim_json_str(&j, "gpu", c->gpu);
	llmsim_json_bool(&j, "gpu_is_traced_device", llmsim_gpu_device_is(src, t->run.device_name));
	if (note[0]) {
		char n[1024];
		snprintf(n, sizeof n, "%.*s", (int)strcspn(note, "\n"), note);
		llmsim_json_str(&j, "devices_note", n);
	}
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
		llmsim_json_num(&j, "abs_pct_err", trace_pct_err(r->predicted_s, r->measured_s));
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
		llmsim_json_num(&j, "abs_pct_err", trace_pct_err(p->predicted_s, p->measured_s));
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
	if (trace_load_trace(cmd, db, run, &t))
		return 1;
	/* A program may name its model in an NVTX range "model NAME": a
	 * shipped model's name only, never a path. */
	char declared[64] = "";
	struct llmsim_err err = {0};
	if (!model && llmsim_trace_declared_model(&t, declared, sizeof declared, &err)) {
		llmsim_trace_release(&t);
		return trace_fail(cmd, &err);
	}
	if (!model && declared[0])
		model = declared;
	const char *src_name = replay ? from : gpu_name;
	if (!src_name)
		src_name = trace_gpu_of_device(t.run.device_name);
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
		trace_fail(cmd, &err);
		goto out;
	}
	if (llmsim_trace_compare(&t, &g[0], m, replay ? &g[1] : NULL,
				 phases_only ? LLMSIM_TRACE_PHASES_ONLY : 0, &c, &err)) {
		trace_fail(cmd, &err);
		goto out;
	}
	char note[1024];
	devices_note(note, sizeof note, &t, &g[0], replay ? &g[1] : NULL);
	if (json)
		json_cmp(db, &t, &c, &g[0], note);
	else
		print_cmp(db, &t, &c, all, note);
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

int trace_compare(int argc, char **argv) { return cmp_or_replay(argc, argv, 0); }
int trace_replay(int argc, char **argv) { return cmp_or_replay(argc, argv, 1); }
