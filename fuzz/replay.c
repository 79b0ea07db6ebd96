/*
 * replay.c - run files through a fuzz target without libFuzzer (for CI):
 * each argument is a file, or a folder whose files (not its subfolders)
 * are run in name order. Each input is read into a buffer of exactly its
 * size, as libFuzzer hands it, so ASan sees a read past its end. Prints
 * "replayed N inputs"; exits 1 when an input cannot be read or there is
 * none (an empty corpus is a mistake), and aborts where the target does.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run one file; 0, or -1 when it cannot be read. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			uint8_t *p = realloc(buf, cap *= 2);
			if (!p)
				free(buf);
			buf = p;
		}
	}
	int bad = !buf || ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "%s: cannot read it\n", path);
		free(buf);
		return -1;
	}
	/* exactly n bytes: a copy of that size */
	uint8_t *in = malloc(n ? n : 1);
	if (!in)
		abort();
	memcpy(in, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(in, n);
	free(in);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every file of folder dir; the number run, or -1. */
static int run_dir(const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, NULL), ran = 0;
	if (n < 0) {
		perror(dir);
		return -1;
	}
	char **names = malloc((size_t)(n ? n : 1) * sizeof *names);
	int nn = 0;
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && names)
			names[nn++] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	if (!names)
		return -1;
	qsort(names, (size_t)nn, sizeof *names, by_name);
	for (int i = 0; i < nn; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path))
				ran = -1;
			else if (ran >= 0)
				ran++;
		}
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	int total = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? run_dir(argv[i])
								       : run_file(argv[i]) ? -1 : 1;
		if (n < 0)
			return 1;
		total += n;
	}
	printf("replayed %d inputs\n", total);
	return total ? 0 : 1;
}
