/*
 * fuzz_serve_runs.c - libFuzzer target for the published serving-results
 * suite (llmsim_serve_pubs_load, the format of
 * models/runs/serve_published.yaml, what `llmsim serve --published --suite
 * FILE` reads). A suite that loads must hold n > 0 entries whose values keep
 * the ranges the loader enforces; a failure must leave a message and no
 * entries.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "calib/validate/serve_runs.h"
#include "fuzz_input.h"

static void check_serve(const struct llmsim_serve_pub *p)
{
	if (p->gpus <= 0 || p->tp <= 0 || p->pp <= 0 || p->ep <= 0 ||
	    p->max_batch < 0 || p->max_tokens < 0 || p->requests < 0 || p->prompt < 0 ||
	    p->output < 0 || p->batch < 0 || p->reserve < 0 || !(p->rate_per_s >= 0) ||
	    !isfinite(p->rate_per_s) || !(p->published > 0) ||
	    (unsigned)p->metric >= LLMSIM_PUB_COUNT)
		abort();
	(void)llmsim_pub_metric_name(p->metric);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llmsim_err err = {0};
	struct llmsim_serve_pub *pubs;
	int n;

	if (llmsim_serve_pubs_load(fuzz_input_path(data, size), &pubs, &n, &err) == 0) {
		if (n <= 0)
			abort();
		for (int i = 0; i < n; i++)
			check_serve(&pubs[i]);
		free(pubs);
	} else if (!err.msg[0] || pubs || n) {
		abort();
	}
	return 0;
}
