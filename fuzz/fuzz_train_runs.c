/*
 * fuzz_train_runs.c - libFuzzer target for the published training-runs
 * suite (llmsim_runs_load, the format of models/runs/train_published.yaml,
 * what `llmsim validate --suite FILE` reads). A suite that loads must hold
 * n > 0 entries whose values keep the ranges the loader enforces; a failure
 * must leave a message and no entries. (The serving suite has its own
 * target, fuzz_serve_runs.c.)
 */
#include <stdint.h>
#include <stdlib.h>

#include "calib/validate/train_runs.h"
#include "fuzz_input.h"

static void check_train(const struct llmsim_run_entry *e)
{
	const struct llmsim_train_cfg *c = &e->cfg;
	if (e->has_inline && (e->inline_model.layers <= 0 || e->inline_model.hidden <= 0 ||
			      e->inline_model.heads <= 0 || e->inline_model.kv_heads <= 0 ||
			      e->inline_model.head_dim <= 0 || e->inline_model.intermediate <= 0))
		abort();
	if (c->gpus <= 0 || c->tp <= 0 || c->pp <= 0 || c->cp <= 0 || c->ep <= 0 || c->dp < 0 ||
	    c->micro_batch <= 0 || c->global_batch <= 0 || c->seq <= 0 || c->chunks <= 0 ||
	    !(c->moe_imbalance > 0) || e->published_step_s < 0 || e->published_mfu < 0 ||
	    e->published_mfu > 1 || e->published_mem_bytes < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llmsim_err err = {0};
	struct llmsim_run_entry *runs;
	int n;

	if (llmsim_runs_load(fuzz_input_path(data, size), &runs, &n, &err) == 0) {
		if (n <= 0)
			abort();
		for (int i = 0; i < n; i++)
			check_train(&runs[i]);
		free(runs);
	} else if (!err.msg[0] || runs || n) {
		abort();
	}
	return 0;
}
