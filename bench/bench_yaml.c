/*
 * bench_yaml.c - time to parse a YAML mapping of N keys (what a hostile or
 * generated description file can hold): the loader checks every key for a
 * duplicate, so a per-key scan of the keys before it is quadratic.
 * Doubling N must double the time.
 *
 *   llmsim-bench-yaml [N...]   (default 50000 100000 200000 400000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/yaml.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static const long def[] = {50000, 100000, 200000, 400000};
	int nn = argc > 1 ? argc - 1 : 4;
	for (int a = 0; a < nn; a++) {
		long n = argc > 1 ? atol(argv[a + 1]) : def[a];
		size_t cap = (size_t)n * 24 + 16, len = 0;
		char *buf = malloc(cap);
		if (!buf || n < 1)
			return 1;
		for (long i = 0; i < n; i++)
			len += (size_t)snprintf(buf + len, cap - len, "key_%ld: %ld\n", i, i);
		struct llmsim_ynode *root = NULL;
		struct llmsim_err err = {0};
		double t0 = now_s();
		int rc = llmsim_yaml_load_buf(buf, len, "bench.yaml", &root, &err);
		double t = now_s() - t0;
		printf("%7ld keys (%6.2f MB): %9.1f ms%s%s\n", n, len / 1e6, t * 1e3,
		       rc ? "  error: " : "", rc ? err.msg : "");
		llmsim_ynode_free(root);
		free(buf);
	}
	return 0;
}
