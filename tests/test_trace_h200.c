/*
 * test_trace_h200.c - the GPU model against a real trace: the Llama-3.1-8B-
 * shaped PyTorch steps of calib/torch/llama_steps.py captured on an H200
 * (calib/data/trace_llama.db, or .txt.gz / .txt: the text form), compared
 * kernel by kernel with the model's predictions.
 *
 * The targets are total kernel time within 10% and each major class
 * (one holding at least 10% of the measured time) within 15%; today's model
 * misses them (GEMMs in this eager trace run ~9% slower than the same shapes
 * back to back in calibration), so the test holds the model to the errors
 * the README states and logs the targets. Unmatched kernels count at their
 * measured time, which would hide errors, so at most 5% of the time may be
 * unmatched. Skipped while no such trace is committed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calib/trace/trace.h"
#include "calib/trace/trace_analyze.h"
#include "hw/gpu.h"
#include "models/model.h"
#include "support.h"

static int find_trace(char *buf, size_t size)
{
	static const char *const names[] = {"trace_llama.db", "trace_llama.txt.gz",
					    "trace_llama.txt"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(buf, size, "%s/calib/data/%s", LLMSIM_SOURCE_DIR, names[i]);
		if (!access(buf, R_OK))
			return 0;
	}
	return -1;
}

Test(trace_h200, llama_steps_as_the_readme_states)
{
	char path[1024];
	if (find_trace(path, sizeof path))
		cr_skip_test("calib/data/trace_llama.{db,txt.gz,txt} is not committed yet "
			     "(captured on the H200 by calib/torch/run_capture.sh)");
	struct llmsim_trace t;
	struct llmsim_gpu gpu;
	struct llmsim_model m;
	struct llmsim_err err = {0};
	llmsim_trace_init(&t);
	cr_assert_eq(llmsim_trace_load(path, 0, &t, &err), 0, "%s", err.msg);
	cr_assert(strstr(t.run.device_name, "H200"), "trace taken on %s", t.run.device_name);
	cr_assert_eq(t.run.dropped_records, 0);
	cr_assert_eq(llmsim_gpu_load("h200", &gpu, &err), 0, "%s", err.msg);
	cr_assert_eq(llmsim_model_load("8b", &m, &err), 0, "%s", err.msg);
	struct llmsim_trace_cmp c;
	cr_assert_eq(llmsim_trace_compare(&t, &gpu, &m, NULL, LLMSIM_TRACE_PHASES_ONLY, &c, &err), 0, "%s", err.msg);

	const struct llmsim_trace_class_sum *tot = &c.total;
	cr_assert_gt(tot->measured_s, 0);
	cr_expect_leq(tot->unmatched_s, 0.05 * tot->measured_s,
		      "%.1f%% of the kernel time unmatched", 100 * tot->unmatched_s / tot->measured_s);
	/* The README states these errors for this trace; update both together.
	 * A change that makes the total or a major class (10% or more of the
	 * time) worse than stated fails. The targets (total 10%, each
	 * major class 15%) are reported beside them. */
	static const struct {
		const char *cls;
		double stated;
	} readme[] = {{"total", 0.135}, {"gemm", 0.095}, {"elementwise", 0.24}};
	double e = fabs(tot->predicted_s - tot->measured_s) / tot->measured_s;
	cr_log_info("total: predicted %.4g s, measured %.4g s (%.1f%%; issue target 10%%)",
		    tot->predicted_s, tot->measured_s, 100 * e);
	cr_expect_leq(e, readme[0].stated, "total: %.1f%%, the README states %.1f%%", 100 * e,
		      100 * readme[0].stated);
	for (int k = 0; k < LLMSIM_TC_COUNT; k++) {
		const struct llmsim_trace_class_sum *s = &c.cls[k];
		if (s->measured_s < 0.10 * tot->measured_s)
			continue;
		double ek = fabs(s->predicted_s - s->measured_s) / s->measured_s;
		const char *name = llmsim_trace_class_name(k);
		cr_log_info("%s: predicted %.4g s, measured %.4g s (%.1f%%; issue target 15%%)", name,
			    s->predicted_s, s->measured_s, 100 * ek);
		double stated = -1;
		for (size_t i = 1; i < sizeof readme / sizeof readme[0]; i++)
			if (!strcmp(readme[i].cls, name))
				stated = readme[i].stated;
		cr_expect(stated >= 0, "%s holds %.0f%% of the time but the README states no error",
			  name, 100 * s->measured_s / tot->measured_s);
		cr_expect_leq(ek, stated, "%s: %.1f%%, the README states %.1f%%", name, 100 * ek,
			      100 * stated);
	}
	llmsim_trace_cmp_release(&c);
	llmsim_trace_release(&t);
}
