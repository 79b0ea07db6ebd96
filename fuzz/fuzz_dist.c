/*
 * fuzz_dist.c - libFuzzer target for the serving simulation's request
 * lengths: the input is read as a lengths file (llmsim_lengths_load), and
 * each of its first lines as a length distribution spec
 * (llmsim_dist_parse). A lengths file that loads must give n > 0 positive
 * pairs; a spec that parses must draw lengths in [1, 1e12] (the documented
 * clip) and have a mean that is a number; failures must leave a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/infer/dist.h"
#include "fuzz_input.h"

static void one_spec(const char *spec)
{
	struct llmsim_dist d;
	struct llmsim_err err = {0};
	struct llmsim_rng r;
	if (llmsim_dist_parse(spec, &d, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (!isfinite(d.a) || !isfinite(d.b) || isnan(llmsim_dist_mean(&d)))
		abort();
	llmsim_rng_seed(&r, 42);
	for (int i = 0; i < 64; i++) {
		int64_t x = llmsim_dist_sample(&d, &r);
		if (x < 1 || x > (int64_t)1e12)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llmsim_err err = {0};
	int64_t *prompt, *output, n;

	if (llmsim_lengths_load(fuzz_input_path(data, size), &prompt, &output, &n, &err) == 0) {
		if (n <= 0)
			abort();
		for (int64_t i = 0; i < n; i++)
			if (prompt[i] < 1 || output[i] < 1)
				abort();
		free(prompt);
		free(output);
	} else if (!err.msg[0] || prompt || output || n) {
		abort();
	}

	/* the first lines as distribution specs */
	char *text = fuzz_input_str(data, size), *save = NULL;
	int lines = 0;
	for (char *l = strtok_r(text, "\n", &save); l && lines < 16;
	     l = strtok_r(NULL, "\n", &save), lines++)
		one_spec(l);
	free(text);
	return 0;
}
