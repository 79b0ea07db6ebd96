/*
 * test_hostile_input.c - numbers and streams at the edge (issue 25): model
 * files take the bounds of the flags (2^31-1 layers is refused at its line
 * and column, dense or MoE, and so is a config.json of that depth); `op
 * spec` values take the bounds of the options of the same name; every
 * input reader takes a pipe, gzip or not; a gzip file of request lengths
 * is bounded by the requests llmsim simulates; a dump of blank lines
 * ends at once; and the temporaries a killed writer left beside its
 * target are removed by the next run, while a live writer's are kept. No
 * test asserts a time: the suite's .timeout only catches a hang.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "base/staging.h"
#include "support.h"

static char dir[64];
static char out[1 << 16], err[8192];

static void setup(void)
{
	test_tmpdir_make(dir, sizeof dir, "hinput");
}

static void teardown(void)
{
	test_tmpdir_remove(dir);
}

TestSuite(hostile_input, .init = setup, .fini = teardown, .timeout = 240);

static const char *in_dir(const char *name)
{
	return test_path_in(dir, name);
}

/* Run llmsim; expect exit status want and exactly one line on stderr
 * holding `has`. */
static void expect_one_line(const char *args, int want, const char *has)
{
	test_expect_one_line(args, want, has, out, sizeof out, err, sizeof err);
}

/* ---- model files take the flags' bounds ------------------------------- */

static const char model_head[] = "name: deep\nfull_name: Deep\nsource: s\n";
static const char model_tail[] = "hidden: 64\nheads: 4\nkv_heads: 2\nhead_dim: 16\nvocab: 10\n"
				 "intermediate: 128\nmax_seq: 8\nmlp: gated\nactivation: silu\n"
				 "norm: rms\nposition: rope\n";

Test(hostile_input, model_file_of_2_to_the_31_layers)
{
	/* it loaded, and `infer` printed negative terabytes (a signed
	 * overflow in infer_cfg.c) with exit 0 */
	char y[1024], args[512];
	snprintf(y, sizeof y, "%slayers: 2147483647\n%s", model_head, model_tail);
	test_write_text(in_dir("deep.yaml"), y);
	char want[300];
	snprintf(want, sizeof want, "%s:4:9: 'layers' must be at most 65536, got 2147483647",
		 in_dir("deep.yaml"));
	snprintf(args, sizeof args, "infer --model %s --gpu h200", in_dir("deep.yaml"));
	expect_one_line(args, 1, want);
	snprintf(args, sizeof args, "model show %s", in_dir("deep.yaml"));
	expect_one_line(args, 1, want);
	/* the bound itself loads */
	snprintf(y, sizeof y, "%slayers: 65536\n%s", model_head, model_tail);
	test_write_text(in_dir("ok.yaml"), y);
	snprintf(args, sizeof args, "model show %s", in_dir("ok.yaml"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
}

Test(hostile_input, moe_model_of_huge_depth_is_refused_at_once)
{
	/* this took 18-23 s to be refused */
	char y[1024], args[512];
	snprintf(y, sizeof y,
		 "%slayers: 2147483647\n%smoe:\n  experts: 8\n  top_k: 2\n"
		 "  expert_intermediate: 64\n",
		 model_head, model_tail);
	test_write_text(in_dir("moe.yaml"), y);
	snprintf(args, sizeof args, "infer --model %s --gpu h200", in_dir("moe.yaml"));
	expect_one_line(args, 1, ":4:9: 'layers' must be at most 65536");
	/* and each count of its moe section */
	snprintf(y, sizeof y,
		 "%slayers: 4\n%smoe:\n  experts: 2147483647\n  top_k: 2\n"
		 "  expert_intermediate: 64\n",
		 model_head, model_tail);
	test_write_text(in_dir("moe2.yaml"), y);
	snprintf(args, sizeof args, "infer --model %s --gpu h200", in_dir("moe2.yaml"));
	expect_one_line(args, 1, ":17:12: 'experts' must be at most 65536");
}

Test(hostile_input, config_json_of_2_to_the_31_layers)
{
	char fx[512], args[1024];
	snprintf(args, sizeof args, "sed 's/\"num_hidden_layers\": 28/\"num_hidden_layers\": "
				    "2147483647/' %s > %s",
		 test_data(fx, sizeof fx, "hf/gemma-7b.json"), in_dir("config.json"));
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof args, "model show %s", in_dir("config.json"));
	expect_one_line(args, 1, "'layers' must be at most 65536, got 2147483647");
}

Test(hostile_input, layouts_past_the_gpu_bound)
{
	/* tp and pp each within --tp's and --pp's bound, their product not */
	expect_one_line("infer --model 8b --tp 1048576 --pp 1048576", 1,
			"tp 1048576 x pp 1048576: more than 1048576 GPUs");
}

Test(hostile_input, op_spec_values_take_the_option_bounds)
{
	/* "stream bytes=1e308" printed 6.97e+291 h */
	expect_one_line("op spec 'collective kind=allreduce bytes=1e308 gpus=8'", 1,
			"bytes=1e308: must be 0 to 1.12589990684262e+15");
	expect_one_line("op spec 'collective kind=allreduce bytes=1e9 gpus=2147483647'", 1,
			"gpus=2147483647: must be 0 to 1048576");
	expect_one_line("op spec 'gemm m=4096 n=-4096 k=4096'", 1, "n=-4096: must be 0 to");
	expect_one_line("op spec 'gemm m=2199023255553 n=1 k=1'", 1, "m=2199023255553: must be");
	cr_expect_eq(run_llmsim("op spec 'gemm m=4096 n=4096 k=4096'", out, sizeof out, err,
				sizeof err),
		     0, "%s", err);
}

/* ---- pipes ---------------------------------------------------------------- */

/* A FIFO at path that a child fills with data[0..len) (gzip-compressed
 * when gz); returns the child's pid (wait for it). */
static pid_t fifo_of(const char *path, const char *data, size_t len, int gz)
{
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		if (gz) {
			gzFile g = gzopen(path, "wb");
			_exit(g && gzwrite(g, data, (unsigned)len) == (int)len && gzclose(g) == Z_OK
				      ? 0
				      : 3);
		}
		FILE *f = fopen(path, "wb");
		_exit(f && fwrite(data, 1, len, f) == len && !fclose(f) ? 0 : 3);
	}
	return pid;
}

static char *slurp_fixture(const char *name, size_t *len)
{
	char fx[512];
	FILE *f = fopen(test_data(fx, sizeof fx, name), "rb");
	cr_assert_not_null(f, "%s", fx);
	char *buf = malloc(1 << 20);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* A command reading the FIFO in_dir(fifo) fed with data: exit 0. */
static void reads_a_pipe(const char *args, const char *fifo, const char *data, size_t len,
			 int gz)
{
	pid_t pid = fifo_of(in_dir(fifo), data, len, gz);
	int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 0, "llmsim %s (gzip %d): %s", args, gz, err);
	cr_expect(!strstr(err, "Illegal seek"), "%s", err);
	kill(pid, SIGKILL); /* a reader that stopped early leaves it blocked */
	waitpid(pid, NULL, 0);
}

Test(hostile_input, every_reader_takes_a_pipe)
{
	/* every input reader said "Illegal seek" */
	char args[512];
	size_t len;
	char *dump = slurp_fixture("calib/small_h200.tsv", &len);
	for (int gz = 0; gz < 2; gz++) {
		snprintf(args, sizeof args, "calib import --db %s/c%d.db --in %s", dir, gz,
			 in_dir("dump.fifo"));
		reads_a_pipe(args, "dump.fifo", dump, len, gz);
	}
	free(dump);
	char *trace = slurp_fixture("trace/llama_tiny.trace", &len);
	for (int gz = 0; gz < 2; gz++) {
		snprintf(args, sizeof args, "trace import --db %s/t%d.db --in %s", dir, gz,
			 in_dir("trace.fifo"));
		reads_a_pipe(args, "trace.fifo", trace, len, gz);
	}
	free(trace);
	static const char lengths[] = "# prompt output\n512 128\n1024 64\n";
	for (int gz = 0; gz < 2; gz++) {
		snprintf(args, sizeof args, "serve --model 8b --requests 20 --lengths %s",
			 in_dir("len.fifo"));
		reads_a_pipe(args, "len.fifo", lengths, sizeof lengths - 1, gz);
	}
}

/* ---- bounded inputs ------------------------------------------------------- */

Test(hostile_input, gzip_lengths_are_bounded_by_requests)
{
	/* 457 KB of gzip took 605 MB of memory: the file now stops at the
	 * requests one simulation runs, with its line */
	gzFile g = gzopen(in_dir("many.gz"), "wb");
	cr_assert_not_null(g);
	static char block[4 * 100000];
	for (int i = 0; i < 100000; i++)
		memcpy(block + 4 * i, "1 1\n", 4);
	for (int i = 0; i < 101; i++)
		cr_assert_eq(gzwrite(g, block, sizeof block), (int)sizeof block);
	cr_assert_eq(gzclose(g), Z_OK);
	char args[512];
	snprintf(args, sizeof args, "serve --model 8b --lengths %s", in_dir("many.gz"));
	expect_one_line(args, 1, "many.gz:10000001: more than 10000000 requests");
}

Test(hostile_input, dump_of_blank_lines_ends_at_once)
{
	/* 1 MB of blank lines ran for 32 s */
	static char blank[1 << 20];
	memset(blank, '\n', sizeof blank);
	FILE *f = fopen(in_dir("blank.tsv"), "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(blank, 1, sizeof blank, f), sizeof blank);
	cr_assert_eq(fclose(f), 0);
	char args[512];
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("b.db"),
		 in_dir("blank.tsv"));
	expect_one_line(args, 1, "empty file, not an llmsim calibration dump");
	/* after a header they are nothing: an empty dump imports */
	f = fopen(in_dir("head.tsv"), "wb");
	cr_assert_not_null(f);
	fputs("llmsim-calib\tschema_version\t3\n", f);
	cr_assert_eq(fwrite(blank, 1, sizeof blank, f), sizeof blank);
	cr_assert_eq(fclose(f), 0);
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("h.db"),
		 in_dir("head.tsv"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
}

/* ---- temporaries a kill left ---------------------------------------------- */

/* A staged file (or folder) beside target named for a process that has
 * ended, as a killed writer leaves it; its path into buf. */
static void dead_litter(const char *target, int folder, char *buf, size_t size)
{
	char *shared = malloc(size);
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (llmsim_stage_name(shared, size, target) ||
		    (folder ? !mkdtemp(shared) : mkstemp(shared) < 0))
			_exit(3);
		if (write(fds[1], shared, strlen(shared) + 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	ssize_t n = read(fds[0], buf, size - 1);
	close(fds[0]);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0 && n > 0);
	buf[n] = 0;
	cr_assert_eq(access(buf, F_OK), 0, "%s", buf);
	free(shared);
}

/* One of this (live) process: kept. */
static void live_litter(const char *target, char *buf, size_t size)
{
	cr_assert_eq(llmsim_stage_name(buf, size, target), 0);
	int fd = mkstemp(buf);
	cr_assert_geq(fd, 0);
	close(fd);
}

/* Run the writer; the dead one's litter is gone, the live one's kept. */
static void next_run_sweeps(const char *args, const char *target, int folder)
{
	char dead[512], live[512];
	dead_litter(target, folder, dead, sizeof dead);
	live_litter(target, live, sizeof live);
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s: %s", args, err);
	cr_expect_eq(access(target, F_OK), 0, "%s was not written", target);
	cr_expect_neq(access(dead, F_OK), 0, "%s: a killed run's %s is still there", args, dead);
	cr_expect_eq(access(live, F_OK), 0, "%s: a live writer's %s was removed", args, live);
	unlink(live);
}

Test(hostile_input, next_writer_removes_what_a_killed_one_left)
{
	/* killed runs left 10-37 MB export temporaries and report staging
	 * folders that nothing cleaned up */
	char args[1024], fx[512];
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("s.db"),
		 test_data(fx, sizeof fx, "calib/small_h200.tsv"));
	cr_assert_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	snprintf(args, sizeof args, "calib export --db %s --out %s", in_dir("s.db"),
		 in_dir("e.tsv"));
	next_run_sweeps(args, in_dir("e.tsv"), 0);

	snprintf(args, sizeof args, "trace import --db %s --in %s", in_dir("t.db"),
		 test_data(fx, sizeof fx, "trace/llama_tiny.trace"));
	cr_assert_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	snprintf(args, sizeof args, "trace export --db %s --out %s", in_dir("t.db"),
		 in_dir("t.txt"));
	next_run_sweeps(args, in_dir("t.txt"), 0);

	snprintf(args, sizeof args, "infer --model 8b --gpu h200 --trace-out %s",
		 in_dir("tl.json"));
	next_run_sweeps(args, in_dir("tl.json"), 0);

	snprintf(args, sizeof args, "report --model 8b --gpu h200 --out %s", in_dir("rep"));
	next_run_sweeps(args, in_dir("rep"), 1);
}
