/*
 * cmd_trace_to_calib.c - `llmsim trace to-calib`: add a trace's recovered
 * GEMM and attention kernels to a calibration store as cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/store.h"
#include "hw/gpu.h"
#include "models/model.h"

#include "common.h"
#include "trace_common.h"


int trace_to_calib(int argc, char **argv)
{
	const char *cmd = "llmsim trace to-calib", *db = NULL, *cdb = NULL, *gpu_name = NULL;
	const char *model = "8b", *split = "holdout";
	int64_t run = 0;
	int json = 0;
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
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE --calib-db FILE [--gpu NAME] [--model M] "
					"[--split fit|holdout] [--json]",
				   "Add the trace's library GEMM and attention kernels, with their shapes\n"
				   "recovered, to a calibration store as measured cases.",
				   argc - 1, argv + 1, opts, 7, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db || !cdb)
		return llmsim_args_error(cmd, "--db FILE and --calib-db FILE are required");
	if (strcmp(split, "fit") && strcmp(split, "holdout"))
		return llmsim_args_error(cmd, "--split must be fit or holdout, not '%s'", split);
	struct llmsim_trace t;
	if (trace_load_trace(cmd, db, run, &t))
		return 1;
	if (!gpu_name)
		gpu_name = trace_gpu_of_device(t.run.device_name);
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
		trace_fail(cmd, &err);
		goto out;
	}
	fprintf(stderr, "%s: %d cases added to %s\n", cmd, n, cdb);
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "db", db);
		llmsim_json_str(&j, "calib_db", cdb);
		llmsim_json_str(&j, "gpu", g->name);
		llmsim_json_str(&j, "split", split);
		llmsim_json_int(&j, "cases_added", n);
		cli_json_end(&j);
	}
	rc = 0;
out:
	llmsim_store_close(s);
	free(g);
	free(m);
	llmsim_trace_release(&t);
	return rc;
}
