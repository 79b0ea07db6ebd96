/*
 * cmd_trace_capture.c - `llmsim trace capture`: run an unmodified CUDA
 * program under libllmsim_inject.so into a trace.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "trace_common.h"


static int is_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The injection library: $LLMSIM_INJECT_LIB, next to us, in the build
 * tree, or in <prefix>/lib/llmsim. */
static int find_inject(char *out, size_t size)
{
	static const char name[] = "libllmsim_inject.so";
	const char *env = getenv("LLMSIM_INJECT_LIB");
	if (env && *env) {
		if (!realpath(env, out) || !is_file(out))
			return -1;
		return 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	static const char *const rel[] = {"", "/../calib/inject", "/../lib/llmsim",
					  "/../lib64/llmsim"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s%s/%s", exe, rel[i], name);
		if (is_file(p) && realpath(p, out) && strlen(out) < size)
			return 0;
	}
	return -1;
}

/* An absolute path for a file that may not exist yet. */
static int abs_path(const char *path, char *out, size_t size)
{
	if (path[0] == '/')
		return snprintf(out, size, "%s", path) < (int)size ? 0 : -1;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return -1;
	return snprintf(out, size, "%s/%s", cwd, path) < (int)size ? 0 : -1;
}

int trace_capture(int argc, char **argv)
{
	const char *cmd = "llmsim trace capture", *db = NULL, *txt = NULL;
	int nvtx = 0, json = 0, npos = 0;
	char *pos[256];
	const struct llmsim_opt opts[] = {
		{"db", LLMSIM_ARG_STRING, &db, "FILE", "SQLite file to add the trace run to", 0, NULL,
		 NULL},
		{"txt", LLMSIM_ARG_STRING, &txt, "FILE", "also write the text form here", 0, NULL,
		 NULL},
		{"nvtx", LLMSIM_ARG_FLAG, &nvtx, NULL,
		 "record the program's NVTX ranges (sets NVTX_INJECTION64_PATH)", 0, NULL, NULL},
		{"json", LLMSIM_ARG_FLAG, &json, NULL,
		 "JSON on stdout (the program's own stdout goes to stderr)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd,
				   "--db FILE [--txt FILE] [--nvtx] [--json] -- COMMAND [ARGS...]",
				   "Run an unmodified CUDA program under libllmsim_inject.so, recording\n"
				   "its kernels, copies and (--nvtx) NVTX ranges. Exits with the\n"
				   "program's status.",
				   argc - 1, argv + 1, opts, 4, pos, 255, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db && !txt)
		return llmsim_args_error(cmd, "--db FILE is required");
	if (npos < 1)
		return llmsim_args_error(cmd, "no command to run (put it after --)");
	char lib[PATH_MAX], dbp[PATH_MAX], txtp[PATH_MAX];
	if (find_inject(lib, sizeof lib)) {
		fprintf(stderr, "%s: the injection library libllmsim_inject.so was not built (it needs "
				"the CUDA toolkit at build time; or set LLMSIM_INJECT_LIB)\n", cmd);
		return 1;
	}
	if (access("/proc/driver/nvidia/version", F_OK) && access("/dev/nvidiactl", F_OK)) {
		fprintf(stderr, "%s: no NVIDIA GPU driver on this machine (no "
				"/proc/driver/nvidia/version): nothing to capture\n", cmd);
		return 1;
	}
	if ((db && abs_path(db, dbp, sizeof dbp)) || (txt && abs_path(txt, txtp, sizeof txtp))) {
		fprintf(stderr, "%s: path too long\n", cmd);
		return 1;
	}
	pos[npos] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", cmd, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (json)
			dup2(2, 1);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		if (db)
			setenv("LLMSIM_TRACE_DB", dbp, 1);
		if (txt)
			setenv("LLMSIM_TRACE_TXT", txtp, 1);
		if (nvtx) {
			setenv("NVTX_INJECTION64_PATH", lib, 1);
			setenv("LLMSIM_TRACE_NVTX", "1", 1);
		}
		execvp(pos[0], pos);
		fprintf(stderr, "%s: cannot run %s: %s\n", cmd, pos[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", cmd, strerror(errno));
			return 1;
		}
	}
	if (db && !is_file(dbp) && !(txt && is_file(txtp)) &&
	    !(WIFEXITED(st) && WEXITSTATUS(st) == 127))
		fprintf(stderr, "%s: no trace was written (did the program use CUDA?)\n", cmd);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	if (!rc && json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		if (db)
			llmsim_json_str(&j, "db", dbp);
		else
			llmsim_json_null(&j, "db");
		if (txt)
			llmsim_json_str(&j, "txt", txtp);
		else
			llmsim_json_null(&j, "txt");
		llmsim_json_int(&j, "exit_status", 0);
		cli_json_end(&j);
	}
	return rc;
}
