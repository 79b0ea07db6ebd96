/*
 * trace_common.c - what the verbs of `llmsim trace` share (trace_common.h).
 */
#include "trace_common.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/paths.h"

int trace_fail(const char *cmd, const struct llmsim_err *err)
{
	fprintf(stderr, "%s: %s\n", cmd, err->msg);
	return 1;
}

/* A relative path not found here is looked for in the data folder (so
 * calib/data/trace_llama.txt.gz reads from anywhere). */
int trace_load_trace(const char *cmd, const char *path, int64_t run, struct llmsim_trace *t)
{
	struct llmsim_err err = {0};
	char p[PATH_MAX];
	llmsim_trace_init(t);
	if (llmsim_trace_load(llmsim_data_input(path, p, sizeof p), run, t, &err))
		return trace_fail(cmd, &err);
	return 0;
}

double trace_pct_err(double pred, double meas)
{
	return meas > 0 ? 100.0 * fabs(pred - meas) / meas : NAN;
}

char *trace_fmt_pct(char *buf, double pct)
{
	if (!isfinite(pct))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else
		snprintf(buf, LLMSIM_FMT_MAX, "%.1f%%", pct);
	return buf;
}

void trace_print_run(FILE *f, const char *path, const struct llmsim_trace *t)
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

void trace_json_run(struct llmsim_json *j, const char *path, const struct llmsim_trace *t)
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

/* The llmsim GPU a CUPTI device name maps to, or NULL. */
const char *trace_gpu_of_device(const char *dev)
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
