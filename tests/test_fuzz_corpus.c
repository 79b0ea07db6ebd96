/*
 * test_fuzz_corpus.c - every fuzz target of the parsers of user input
 * replays its seed corpus (tests/data/fuzz/<name>/: valid files taken from
 * the shipped data, broken ones, and each input a fuzzing run once crashed
 * on) through the non-libFuzzer build of the target, build/fuzz/fuzz_<name>.
 * A target aborts on any input that breaks its parser's promises, so a
 * regression of a fix shows here. (fuzz_hw and fuzz_model replay theirs in
 * test_hw.c and test_model.c.)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support.h"

/* Files in the corpus folder of a target (at least one is expected). */
static int corpus_size(const char *name)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/fuzz/%s", LLMSIM_TEST_DATA, name);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void replay(const char *name)
{
	char cmd[2048], out[256] = "";
	int n = corpus_size(name);
	cr_assert_gt(n, 0, "no seed corpus in %s/fuzz/%s", LLMSIM_TEST_DATA, name);
	snprintf(cmd, sizeof cmd, "%s/fuzz/fuzz_%s %s/fuzz/%s/* 2>&1", LLMSIM_BUILD_DIR, name,
		 LLMSIM_TEST_DATA, name);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	char line[256];
	while (fgets(line, sizeof line, p))
		snprintf(out, sizeof out, "%s", line); /* keep the last line */
	int st = pclose(p);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d, last output: %s", cmd,
		  st, out);
	/* every file ran: the replay program counts them */
	char want[64];
	snprintf(want, sizeof want, "replayed %d inputs\n", n);
	cr_expect_str_eq(out, want, "%s", cmd);
}

Test(fuzz_corpus, json_and_hf_config)
{
	replay("json");
}

Test(fuzz_corpus, store_import)
{
	replay("store");
}

Test(fuzz_corpus, op_spec_and_predict)
{
	replay("op");
}

Test(fuzz_corpus, lengths_and_dist)
{
	replay("dist");
}

Test(fuzz_corpus, train_runs_suite)
{
	replay("train_runs");
}

Test(fuzz_corpus, serve_runs_suite)
{
	replay("serve_runs");
}

Test(fuzz_corpus, calibration_profile)
{
	replay("profile");
}

Test(fuzz_corpus, trace_text)
{
	replay("trace");
}
