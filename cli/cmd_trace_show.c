/*
 * cmd_trace_show.c - `llmsim trace show`: a trace's kernels by class, its
 * heaviest kernels and its NVTX ranges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_common.h"

int trace_show(int argc, char **argv)
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
	if (trace_load_trace(cmd, db, run, &t))
		return 1;

	struct llmsim_trace_summary sum;
	struct llmsim_err err = {0};
	if (llmsim_trace_summarize(&t, &sum, &err)) {
		llmsim_trace_release(&t);
		return trace_fail(cmd, &err);
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
		trace_json_run(&j, db, &t);
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
		trace_print_run(stdout, db, &t);
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
