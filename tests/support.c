/* support.c - helpers shared by the Criterion tests, and their main. */
#include "support.h"

#include <criterion/hooks.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *test_data(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", LLMSIM_TEST_DATA, name);
	return buf;
}

static void slurp(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;
	if (f) {
		n = fread(out, 1, size - 1, f);
		fclose(f);
	}
	out[n] = 0;
}

int run_llmsim(const char *args, char *out, size_t size, char *err_out, size_t err_size)
{
	char o[] = "/tmp/llmsim-test-outXXXXXX", e[] = "/tmp/llmsim-test-errXXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e);
	if (fo < 0 || fe < 0)
		return -1;
	close(fo);
	close(fe);
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "%s/cli/llmsim %s >%s 2>%s </dev/null", LLMSIM_BUILD_DIR,
		 args, o, e);
	int st = system(cmd);
	if (out && size)
		slurp(o, out, size);
	if (err_out && err_size)
		slurp(e, err_out, err_size);
	unlink(o);
	unlink(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int json_parses(const char *text)
{
	char path[] = "/tmp/llmsim-test-jsonXXXXXX", cmd[256];
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return 0;
	}
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "python3 -m json.tool %s >/dev/null 2>&1", path);
	int rc = system(cmd);
	unlink(path);
	return rc == 0;
}

struct llmsim_pred predict_ok(const struct llmsim_gpu *g, struct llmsim_op op)
{
	struct llmsim_pred p;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_predict(g, &op, &p, &err), 0, "predict: %s", err.msg);
	return p;
}

/* ---- main: a program whose every test skipped says so to CTest ----
 * Criterion counts a skipped test as passed in its exit status, so CTest
 * would show a GPU test that had no GPU as "Passed". This main exits with
 * TEST_SKIP_STATUS instead when no test ran (each skipped, or filtered
 * out), and tests/CMakeLists.txt gives CTest that SKIP_RETURN_CODE. */
static size_t ran;

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	ran = stats->tests_passed + stats->tests_failed + stats->tests_crashed;
}

int main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	int rc = 0, run = criterion_handle_args(argc, argv, true);
	if (run)
		rc = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return run && rc == 0 && ran == 0 ? TEST_SKIP_STATUS : rc;
}

void test_tmpdir_make(char *dir, size_t size, const char *tag)
{
	snprintf(dir, size, "/tmp/llmsim-%s-XXXXXX", tag);
	cr_assert_not_null(mkdtemp(dir), "mkdtemp %s", dir);
}

void test_tmpdir_remove(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

const char *test_path_in(const char *dir, const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

void test_write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

void test_expect_one_line(const char *args, int want, const char *has, char *out,
			  size_t out_size, char *err, size_t err_size)
{
	int rc = run_llmsim(args, out, out_size, err, err_size);
	cr_expect_eq(rc, want, "llmsim %s: exit %d, stderr: %s", args, rc, err);
	cr_expect_eq(count_lines(err), 1, "llmsim %s: one line, got: %s", args, err);
	cr_expect(strstr(err, has) != NULL, "llmsim %s: expected '%s' in: %s", args, has, err);
}
