/*
 * cmd_calib.c - `llmsim calib run|fit|validate|show|export|import`: the
 * calibration store on the command line. `run` hands over to the separate
 * GPU runner (built only with the CUDA toolkit); the other verbs need no
 * GPU: they read the store, fit the model's parameters into a profile, and
 * compare predictions with measurements.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/gzfile.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/staging.h"
#include "calib/fit.h"
#include "calib/shipped.h"
#include "calib/store.h"
#include "calib/validate.h"
#include "hw/gpu.h"
#include "args.h"
#include "calib_steps.h"
#include "common.h"
#include "commands.h"

static const char calib_about[] =
    "Calibration: measure kernels on a real GPU, store them, fit the model.\n\n"
    "verbs:\n"
    "  run       measure on this machine's GPU into --db (needs the CUDA runner)\n"
    "  fit       fit efficiencies on the \"fit\" cases, write a profile (--out)\n"
    "  validate  predicted against measured: per op class (held-out cases), whole steps\n"
    "  show      runs, devices, software versions and case counts of --db\n"
    "  export    the database as stable, tab-separated text\n"
    "  import    load such text into a (new or existing) database\n"
    "  upgrade   migrate a database of an older schema to the current one\n\n"
    "Verbs that only read (fit, validate, show, export) open the database read-only and\n"
    "read an older schema as it stands; import and upgrade migrate it.";

static int fail(const char *cmd, const struct llmsim_err *err)
{
	fprintf(stderr, "%s: %s\n", cmd, err->msg);
	return 1;
}

static int open_db(const char *cmd, const char *path, int flags, struct llmsim_store **s)
{
	struct llmsim_err err = {0};
	if (llmsim_store_open(path, flags, s, &err))
		return fail(cmd, &err);
	return 0;
}

/* What the measurements are: the database --db names, or the shipped
 * calibration (its dumps in `files`, "" for a database). */
struct input_name {
	char name[PATH_MAX + 64];
	char files[2048];
};

/* The measurements to read: the database --db names (a relative path not
 * found here is looked for in the data folder) or, without --db, the
 * shipped calibration. Prints one line and returns 1 on failure. */
static int open_input(const char *cmd, const char *db, struct llmsim_store **s,
		      struct input_name *in)
{
	in->files[0] = 0;
	if (db) {
		char p[PATH_MAX];
		snprintf(in->name, sizeof in->name, "%s", db);
		return open_db(cmd, llmsim_data_input(db, p, sizeof p), LLMSIM_STORE_READ, s);
	}
	struct llmsim_err err = {0};
	if (llmsim_store_open_shipped(s, in->files, sizeof in->files, NULL, 0, &err))
		return fail(cmd, &err);
	int n = 1;
	for (const char *c = in->files; (c = strchr(c, ',')); c++)
		n++;
	snprintf(in->name, sizeof in->name, "the shipped calibration (%d dump%s in calib/data/)", n,
		 n == 1 ? "" : "s");
	return 0;
}

/* ---- run ---- */

static int is_exe(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The runner next to us, in the build tree, in libexec, then on PATH. */
static int find_runner(char *out, size_t size)
{
	static const char name[] = "llmsim-calib-runner";
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			static const char *const rel[] = {"", "/../calib/runner",
							  "/../libexec/llmsim"};
			for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
				if (snprintf(out, size, "%s%s/%s", exe, rel[i], name) < (int)size &&
				    is_exe(out))
					return 0;
			}
		}
	}
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		if (len && snprintf(out, size, "%.*s/%s", (int)len, path, name) < (int)size &&
		    is_exe(out))
			return 0;
		path = end ? end + 1 : NULL;
	}
	return -1;
}

static int calib_run(int argc, char **argv)
{
	const char *cmd = "llmsim calib run", *db = NULL;
	int quick = 0, json = 0, npos = 0;
	char *pos[32];
	const struct llmsim_opt opts[] = {
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "database to add the run to (created if absent)",
	     0, NULL, NULL},
	    {"quick", LLMSIM_ARG_FLAG, &quick, NULL, "a short run: fewer shapes and repeats", 0,
	     NULL, NULL},
	    {"json", LLMSIM_ARG_FLAG, &json, NULL,
	     "JSON on stdout (the runner's own lines go to stderr)", 0, NULL, NULL},
	};
	int rc =
	    llmsim_args_parse(cmd, "--db FILE [--quick] [--json] [-- RUNNER-ARGS...]",
			      "Measure kernels on this machine's GPU with llmsim-calib-runner.",
			      argc - 1, argv + 1, opts, 3, pos, 30, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	char runner[PATH_MAX + 64];
	if (find_runner(runner, sizeof runner)) {
		fprintf(stderr,
			"%s: the GPU runner was not built (no CUDA toolkit at build time)\n", cmd);
		return 1;
	}
	char *rargv[40];
	int k = 0;
	rargv[k++] = "llmsim calib run"; /* how its messages name it */
	rargv[k++] = "--db";
	rargv[k++] = (char *)db;
	if (quick)
		rargv[k++] = "--quick";
	for (int i = 0; i < npos; i++)
		rargv[k++] = pos[i];
	rargv[k] = NULL;
	fflush(NULL);
	if (!json) {
		execv(runner, rargv); /* its exit status becomes ours */
		fprintf(stderr, "%s: cannot start %s: %s\n", cmd, runner, strerror(errno));
		return 1;
	}
	/* --json: the runner's output goes to stderr, its status is ours */
	int status = cli_run_child(cmd, runner, rargv);
	if (status)
		return status;
	struct llmsim_json j;
	cli_json_begin(&j);
	llmsim_json_str(&j, "db", db);
	llmsim_json_bool(&j, "quick", quick);
	llmsim_json_int(&j, "exit_status", 0);
	cli_json_end(&j);
	return 0;
}

/* ---- fit and validate: the GPU and the measured cases ---- */

/* The GPU as its hardware file states it (no profile; a shared die's
 * values from its calibration basis), or with the profile that applies
 * (or `profile`). */
static int load_gpu(const char *name, int with_profile, const char *profile, struct llmsim_gpu *gpu,
		    struct llmsim_err *err)
{
	int rc = llmsim_gpu_load(name, gpu, err);
	if (rc || (with_profile && !profile))
		return rc;
	char path[sizeof gpu->path];
	memcpy(path, gpu->path, sizeof path);
	if ((rc = llmsim_gpu_load_file(path, gpu, err)) || (rc = llmsim_gpu_apply_basis(gpu, err)))
		return rc;
	return profile ? llmsim_gpu_apply_profile(gpu, profile, err) : 0;
}

/* The GPU (load_gpu) and its measured cases in db; prints one line and
 * returns 1 on failure. */
static int load_inputs(const char *cmd, const char *db, const char *gpu_name, int with_profile,
		       const char *profile, struct llmsim_gpu *gpu, struct llmsim_calib_set *set,
		       struct input_name *name)
{
	struct llmsim_store *s;
	struct llmsim_err err = {0};
	if (load_gpu(gpu_name, with_profile, profile, gpu, &err))
		return fail(cmd, &err);
	if (open_input(cmd, db, &s, name))
		return 1;
	int rc = llmsim_calib_set_load(s, gpu->name, set, &err);
	llmsim_store_close(s);
	if (rc) {
		if (rc == LLMSIM_ENOENT && db)
			fprintf(stderr, "%s: %s: no calibration cases for GPU '%s'\n", cmd, db,
				gpu->name);
		else if (rc == LLMSIM_ENOENT)
			fprintf(stderr,
				"%s: no calibration of GPU '%s' is shipped (measure one: llmsim calib "
				"run --db FILE, then --db FILE)\n",
				cmd, gpu->name);
		else
			fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	return 0;
}

/* The GPU kinds (hw_name) of a store's runs, in the order first seen. */
#define MAX_KINDS 8
struct gpu_kinds {
	char name[MAX_KINDS][64];
	int n;
};

static int kind_row(const struct llmsim_store_run_row *r, void *ctx)
{
	struct gpu_kinds *k = ctx;
	for (int i = 0; i < k->n; i++)
		if (!strcmp(k->name[i], r->dev.hw_name))
			return 0;
	if (k->n < MAX_KINDS && r->dev.hw_name[0])
		snprintf(k->name[k->n++], sizeof k->name[0], "%s", r->dev.hw_name);
	return 0;
}

/* "h100 and h200", "a, b and c" */
static void kinds_list(const struct gpu_kinds *k, char *buf, size_t size)
{
	buf[0] = 0;
	for (int i = 0; i < k->n; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s'%s'",
			 !i ? "" : i == k->n - 1 ? " and " : ", ", k->name[i]);
}

/* The GPU kinds of db (or of the shipped calibration) into *k; prints one
 * line and returns 1 on failure. */
static int store_kinds(const char *cmd, const char *db, struct gpu_kinds *k)
{
	struct llmsim_store *s;
	struct input_name name;
	struct llmsim_err err = {0};
	k->n = 0;
	if (open_input(cmd, db, &s, &name))
		return 1;
	int rc = llmsim_store_runs(s, kind_row, k, &err);
	llmsim_store_close(s);
	return rc ? fail(cmd, &err) : 0;
}

/* The one GPU kind of db when --gpu names none (h200 for a store without
 * runs, whose cases load_inputs then finds missing); two or more: one line
 * naming them, and 1. */
static int one_kind(const char *cmd, const char *db, struct gpu_kinds *k, const char **gpu_name)
{
	if (store_kinds(cmd, db, k))
		return 1;
	if (k->n > 1) {
		char list[MAX_KINDS * 72];
		kinds_list(k, list, sizeof list);
		fprintf(stderr, "%s: %s holds cases of %d GPU kinds, %s: name one with --gpu\n",
			cmd, db ? db : "the shipped calibration", k->n, list);
		return 1;
	}
	*gpu_name = k->n ? k->name[0] : "h200";
	return 0;
}

static void json_stats(struct llmsim_json *j, const struct llmsim_err_stats *s)
{
	llmsim_json_obj_begin(j, NULL);
	llmsim_json_str(j, "name", s->name);
	llmsim_json_int(j, "n", s->n);
	llmsim_json_num(j, "median_abs_pct_err", s->median_abs_pct);
	llmsim_json_num(j, "p90_abs_pct_err", s->p90_abs_pct);
	llmsim_json_num(j, "median_signed_pct_err", s->median_signed_pct);
	llmsim_json_bool(j, "meets_target", s->meets_target);
	llmsim_json_obj_end(j);
}

static void pct(char *buf, double v, int sign)
{
	if (!isfinite(v))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else
		snprintf(buf, LLMSIM_FMT_MAX, sign ? "%+.1f%%" : "%.1f%%", v);
}

static void print_classes(FILE *f, const struct llmsim_validation *v)
{
	static const char *const head[] = {"<class",	"n",	       "median |err|",
					   "p90 |err|", "median bias", "<target"};
	struct llmsim_table t;
	llmsim_table_init(&t, 6, head);
	for (int c = 0; c <= v->nclasses; c++) {
		const struct llmsim_err_stats *s = c < v->nclasses ? &v->classes[c] : &v->all;
		if (c == v->nclasses && v->nclasses < 2)
			break;
		char n[16], a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
		snprintf(n, sizeof n, "%d", s->n);
		pct(a, s->median_abs_pct, 0);
		pct(b, s->p90_abs_pct, 0);
		pct(d, s->median_signed_pct, 1);
		size_t ln = strlen(s->name);
		int ref = ln > 4 && !strcmp(s->name + ln - 4, "_ref");
		const char *cells[] = {s->name, n, a, b, d,
				       c == v->nclasses ? ""
				       : ref		? "reference kernels: no target"
				       : s->meets_target ? "met"
							 : "MISSED"};
		llmsim_table_row(&t, cells);
	}
	llmsim_table_print(&t, f);
	llmsim_table_release(&t);
	fprintf(f, "targets per class: median |err| <= %g%%, p90 |err| <= %g%%, |median bias| <= %g%%\n",
		LLMSIM_CALIB_TARGET_MEDIAN_PCT, LLMSIM_CALIB_TARGET_P90_PCT,
		LLMSIM_CALIB_TARGET_BIAS_PCT);
}

static void print_worst(FILE *f, const struct llmsim_worst_case *rows, size_t nrows,
			const char *title)
{
	if (!nrows)
		return;
	static const char *const head[] = {"measured", "predicted", "error", "<class", "<op"};
	struct llmsim_table t;
	llmsim_table_init(&t, 5, head);
	for (size_t i = 0; i < nrows; i++) {
		const struct llmsim_worst_case *w = &rows[i];
		char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], e[LLMSIM_FMT_MAX];
		pct(e, w->err_pct, 1);
		const char *cells[] = {llmsim_fmt_time(a, w->measured_s),
				       llmsim_fmt_time(b, w->predicted_s), e, w->op_class,
				       w->op_spec};
		llmsim_table_row(&t, cells);
	}
	fprintf(f, "\n%s:\n", title);
	llmsim_table_print(&t, f);
	llmsim_table_release(&t);
}

/* The steps class of db (or the shipped steps) predicted with the GPU of
 * the profile at `profile`, written into that profile (steps_errors:).
 * Prints one line and returns 1 on failure; no measured steps: 0. */
static int steps_into_profile(const char *cmd, const char *db, const char *gpu_name,
			      const char *profile, int quiet)
{
	struct llmsim_gpu gpu;
	struct llmsim_err err = {0};
	struct llmsim_store *st;
	struct input_name name;
	static struct llmsim_steps_report sr;
	if (load_gpu(gpu_name, 1, profile, &gpu, &err))
		return fail(cmd, &err);
	if (open_input(cmd, db, &st, &name))
		return 1;
	int rc = llmsim_steps_validate(st, &gpu, NULL, &sr, &err);
	llmsim_store_close(st);
	if (rc == LLMSIM_ENOENT)
		return 0;
	if (rc || (rc = llmsim_steps_update_profile(profile, &sr, &err))) {
		llmsim_steps_report_free(&sr);
		return fail(cmd, &err);
	}
	if (!quiet) {
		printf("\nwhole steps (into %s, steps_errors:):\n", profile);
		calib_steps_print(stdout, &sr, 0);
	}
	llmsim_steps_report_free(&sr);
	return 0;
}

/* ---- fit ---- */

static int calib_fit(int argc, char **argv)
{
	const char *cmd = "llmsim calib fit", *db = NULL, *out = NULL, *gpu_name = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "calibration database (default: the shipped calibration)", 0, NULL, NULL},
	    {"out", LLMSIM_ARG_STRING, &out, "PROFILE.yaml",
	     "profile to write (hw/profiles/NAME.yaml to make it the default)", 0, NULL, NULL},
	    {"gpu", LLMSIM_ARG_STRING, &gpu_name, "NAME",
	     "GPU whose cases to fit (default: the one GPU kind the store holds)", 0, NULL, NULL},
	    {"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc =
	    llmsim_args_parse(cmd, "[--db FILE] --out PROFILE.yaml [--gpu NAME] [--json]",
			      "Fit the model's efficiencies and overheads on the \"fit\" cases,\n"
			      "starting from the hardware file's values (never an older profile),\n"
			      "and write a profile with the errors measured on the held-out cases.",
			      argc - 1, argv + 1, opts, 4, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!out)
		return llmsim_args_error(cmd, "--out PROFILE.yaml is required");
	struct gpu_kinds kinds;
	if (!gpu_name && one_kind(cmd, db, &kinds, &gpu_name))
		return 1;
	struct llmsim_gpu gpu;
	struct llmsim_err err = {0};
	struct llmsim_calib_set set;
	struct input_name name;
	if (load_inputs(cmd, db, gpu_name, 0, NULL, &gpu, &set, &name))
		return 1;
	struct llmsim_fit_result res;
	struct llmsim_validation ho = {0};
	struct llmsim_profile_info info = {.source = db ? db : "the shipped calibration"};
	if ((rc = llmsim_calib_fit(&gpu, &set, NULL, &res, &err)) ||
	    (rc = llmsim_calib_validate(&gpu, &set, "holdout", &ho, &err)) ||
	    (rc = llmsim_calib_write_profile(out, &gpu, &set, &res, &ho, &info, &err))) {
		llmsim_calib_set_release(&set);
		return fail(cmd, &err);
	}
	/* the whole steps with the fitted values: their classes into the
	 * profile beside the per-kernel ones */
	if (steps_into_profile(cmd, db, gpu_name, out, json)) {
		llmsim_calib_set_release(&set);
		return 1;
	}
	int not_modelled = 0;
	const char *why = "";
	for (size_t i = 0; i < set.n; i++)
		if (set.p[i].how == LLMSIM_CALIB_NOT_MODELLED && !not_modelled++)
			why = set.p[i].why;
	if (json) {
		struct llmsim_json j;
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_str(&j, "gpu", gpu.name);
		llmsim_json_str(&j, "profile", out);
		llmsim_json_int(&j, "not_modelled", not_modelled);
		llmsim_json_int(&j, "fit_cases", res.fit_cases);
		llmsim_json_int(&j, "held_out_cases", res.held_out_cases);
		llmsim_json_num(&j, "objective_start", res.objective_start);
		llmsim_json_num(&j, "objective_end", res.objective_end);
		llmsim_json_int(&j, "sweeps", res.sweeps);
		llmsim_json_arr_begin(&j, "parameters");
		for (int e = 0; e < LLMSIM_PARAM_COUNT; e++) {
			if (!res.fitted[e])
				continue;
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "key", llmsim_param_info[e].key);
			llmsim_json_num(&j, "start", res.start[e]);
			llmsim_json_num(&j, "fitted", res.param[e]);
			llmsim_json_int(&j, "cases", res.ncases[e]);
			llmsim_json_str(&j, "classes",
					llmsim_calib_fit_classes((enum llmsim_param)e));
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_arr_begin(&j, "held_out_classes");
		for (int c = 0; c < ho.nclasses; c++)
			json_stats(&j, &ho.classes[c]);
		llmsim_json_arr_end(&j);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else {
		static const char *const head[] = {"<parameter", "hardware file", "fitted",
						   "fit cases", "<note"};
		struct llmsim_table t;
		llmsim_table_init(&t, 5, head);
		for (int e = 0; e < LLMSIM_PARAM_COUNT; e++) {
			double lo, hi;
			if (!res.fitted[e] ||
			    !llmsim_calib_fit_bounds((enum llmsim_param)e, &lo, &hi))
				continue;
			/* a value at a bound is the data asking for more than the
			 * model allows: worth a look */
			const char *note = res.param[e] <= lo * (1 + 1e-6)   ? "at lower bound"
					   : res.param[e] >= hi * (1 - 1e-6) ? "at upper bound"
									   : "";
			llmsim_table_rowf(&t, "%s\t%.4g\t%.4g\t%d\t%s", llmsim_param_info[e].key,
					  res.start[e], res.param[e], res.ncases[e], note);
		}
		printf("fit %s on %d cases (%d held out) of %s: mean |ln(pred/meas)| summed over"
		       " classes %.4f -> %.4f in %d sweeps\n",
		       gpu.name, res.fit_cases, res.held_out_cases, name.name, res.objective_start,
		       res.objective_end, res.sweeps);
		llmsim_table_print(&t, stdout);
		llmsim_table_release(&t);
		if (not_modelled)
			printf("%d cases not modelled (first: %s)\n", not_modelled, why);
		if (ho.nclasses) {
			puts("\nheld-out error with the fitted values:");
			print_classes(stdout, &ho);
		} else {
			puts("\nno held-out cases: the profile states no expected error");
		}
		printf("\nwrote %s\n", out);
	}
	llmsim_calib_set_release(&set);
	return 0;
}

/* ---- validate ---- */

/* What a validation predicted with: the profile, or the hardware file and
 * the basis it takes its die's values from. */
static const char *predicted_with(const struct llmsim_gpu *g, char *buf, size_t size)
{
	if (g->profile_path[0])
		return llmsim_data_rel(g->profile_path);
	if (g->basis[0])
		snprintf(buf, size, "the hardware file and its calibration basis, %s (%s; no profile "
			 "of its own)", g->basis, llmsim_gpu_relation_name(g->relation));
	else
		snprintf(buf, size, "the hardware file's values");
	return buf;
}

struct validate_opts {
	const char *db, *profile, *transfer_out;
	int json, all, cases, steps, uncalibrated;
};

static int validate_one(const char *cmd, const struct validate_opts *o, const char *gpu_name,
			struct llmsim_json *jp);


static int calib_validate(int argc, char **argv)
{
	const char *cmd = "llmsim calib validate", *db = NULL, *gpu_name = NULL;
	const char *profile = NULL, *transfer_out = NULL;
	int json = 0, all = 0, cases = 0, steps = 0, update = 0, uncal = 0;
	const struct llmsim_opt opts[] = {
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "calibration database (default: the shipped calibration)", 0, NULL, NULL},
	    {"gpu", LLMSIM_ARG_STRING, &gpu_name, "NAME",
	     "GPU whose cases to check (default: every GPU kind the store holds, in turn)", 0,
	     NULL, NULL},
	    {"profile", LLMSIM_ARG_STRING, &profile, "FILE",
	     "apply this profile instead of the GPU's default one", 0, NULL, NULL},
	    {"all", LLMSIM_ARG_FLAG, &all, NULL, "every case, not only the held-out ones", 0, NULL,
	     NULL},
	    {"cases", LLMSIM_ARG_FLAG, &cases, NULL,
	     "list every case (largest error first), not only the worst 10", 0, NULL, NULL},
	    {"steps", LLMSIM_ARG_FLAG, &steps, NULL,
	     "the whole-step section alone, every step listed (largest |error| first)", 0, NULL,
	     NULL},
	    {"update-profile", LLMSIM_ARG_FLAG, &update, NULL,
	     "write the whole-step classes into the profile used (steps_errors:: the expected "
	     "errors infer, serve and plan print), nothing else changed", 0, NULL, NULL},
	    {"uncalibrated", LLMSIM_ARG_FLAG, &uncal, NULL,
	     "predict with the hardware file and its calibration basis alone, not the GPU's own "
	     "profile: the transfer experiment", 0, NULL, NULL},
	    {"transfer-out", LLMSIM_ARG_STRING, &transfer_out, "FILE",
	     "with --uncalibrated: write the held-out and whole-step errors as the basis's transfer "
	     "table (hw/transfer/BASIS.yaml: every uncalibrated GPU's expected errors)", 0, NULL,
	     NULL},
	    {"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc =
	    llmsim_args_parse(cmd, "[--db FILE] [--gpu NAME] [--profile FILE] [--all] [--cases] [--steps] [--update-profile] [--uncalibrated [--transfer-out FILE]] [--json]",
			      "Predict every measured kernel case and compare with its median\n"
			      "time, per op class; then every measured whole step of a program\n"
			      "(the store's steps: a lean PyTorch engine, HF transformers, a\n"
			      "training step) through the functions infer and train run, per\n"
			      "program and phase. Exits 0 whether or not the targets are met.",
			      argc - 1, argv + 1, opts, 10, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (transfer_out && (!uncal || all || steps || update || profile))
		return llmsim_args_error(cmd, "--transfer-out FILE goes with --uncalibrated alone "
					      "(not --all, --steps, --profile or --update-profile)");
	if (uncal && (profile || update))
		return llmsim_args_error(cmd, "--uncalibrated applies no profile: not with "
					      "--profile or --update-profile");
	struct gpu_kinds kinds = {.n = 0};
	/* a profile belongs to one GPU: with one, the store's GPU must be named */
	if (!gpu_name && (update || profile) && one_kind(cmd, db, &kinds, &gpu_name))
		return 1;
	if (update) {
		char path[1024];
		if (!profile) {
			struct llmsim_gpu g;
			struct llmsim_err e = {0};
			if (llmsim_gpu_load(gpu_name, &g, &e))
				return fail(cmd, &e);
			if (!g.profile_path[0]) {
				fprintf(stderr, "%s: GPU '%s' has no calibration profile to update "
						"(--profile FILE names one)\n", cmd, g.name);
				return 1;
			}
			snprintf(path, sizeof path, "%s", g.profile_path);
			profile = path;
		}
		return steps_into_profile(cmd, db, gpu_name, profile, json);
	}
	struct validate_opts vo = {db, profile, transfer_out, json, all, cases, steps, uncal};
	if (!gpu_name && store_kinds(cmd, db, &kinds))
		return 1;
	if (gpu_name || kinds.n <= 1)
		return validate_one(cmd, &vo,
				    gpu_name ? gpu_name : kinds.n ? kinds.name[0] : "h200", NULL);
	/* every GPU the store holds, one after another */
	struct llmsim_json j;
	if (json) {
		llmsim_json_init(&j, stdout);
		llmsim_json_obj_begin(&j, NULL);
		llmsim_json_arr_begin(&j, "gpus");
	}
	for (int i = 0; i < kinds.n; i++) {
		if (!json && i)
			putchar('\n');
		if (validate_one(cmd, &vo, kinds.name[i], json ? &j : NULL))
			return 1;
	}
	if (json) {
		llmsim_json_arr_end(&j);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	}
	return 0;
}

/* One GPU's validation (calib_validate): its kernel classes and steps,
 * or with `steps` its steps alone; JSON into jp when given (an element of
 * the "gpus" array), else a document of its own. */
static int validate_one(const char *cmd, const struct validate_opts *o, const char *gpu_name,
			struct llmsim_json *jp)
{
	const char *db = o->db, *profile = o->profile;
	int json = o->json, all = o->all, cases = o->cases, steps = o->steps, rc;
	struct llmsim_gpu gpu;
	struct llmsim_err err = {0};
	struct llmsim_calib_set set;
	struct input_name name;
	if (load_inputs(cmd, db, gpu_name, !o->uncalibrated, profile, &gpu, &set, &name))
		return 1;
	/* the whole steps: the same store, again */
	static struct llmsim_steps_report sr;
	int have_steps = 0;
	{
		struct llmsim_store *st;
		struct input_name sn;
		if (open_input(cmd, db, &st, &sn)) {
			llmsim_calib_set_release(&set);
			return 1;
		}
		rc = llmsim_steps_validate(st, &gpu, NULL, &sr, &err);
		llmsim_store_close(st);
		if (rc && rc != LLMSIM_ENOENT) {
			llmsim_calib_set_release(&set);
			return fail(cmd, &err);
		}
		have_steps = !rc;
	}
	if (steps) {
		llmsim_calib_set_release(&set);
		if (!have_steps) {
			fprintf(stderr, "%s: %s\n", cmd, err.msg);
			return 1;
		}
		if (json) {
			struct llmsim_json own, *j = jp ? jp : &own;
			if (!jp)
				llmsim_json_init(&own, stdout);
			llmsim_json_obj_begin(j, NULL);
			llmsim_json_str(j, "gpu", gpu.name);
			llmsim_json_str(j, "profile", gpu.profile_path);
			calib_steps_json(j, "steps", &sr);
			llmsim_json_obj_end(j);
			if (!jp)
			llmsim_json_finish(&own);
		} else {
			char with[700];
			printf("%s: whole steps of %s, predicted with %s\n", gpu.name, name.name,
			       predicted_with(&gpu, with, sizeof with));
			calib_steps_print(stdout, &sr, 1);
		}
		llmsim_steps_report_free(&sr);
		return 0;
	}
	struct llmsim_validation v;
	const char *split = all ? NULL : "holdout";
	struct llmsim_worst_case *every = NULL;
	size_t nevery = 0;
	if (cases && !(every = malloc((set.n ? set.n : 1) * sizeof *every))) {
		llmsim_calib_set_release(&set);
		llmsim_err_set(&err, LLMSIM_ENOMEM, "out of memory");
		return fail(cmd, &err);
	}
	if (llmsim_calib_validate_cases(&gpu, &set, split, &v, every, &nevery, &err)) {
		free(every);
		llmsim_calib_set_release(&set);
		return fail(cmd, &err);
	}
	if (o->transfer_out) {
		struct llmsim_profile_info info = {.source = db ? db : "the shipped calibration"};
		if (llmsim_calib_write_transfer(o->transfer_out, &gpu, &set, &v, &info, &err) ||
		    (have_steps && llmsim_steps_update_profile(o->transfer_out, &sr, &err))) {
			free(every);
			llmsim_steps_report_free(&sr);
			llmsim_calib_set_release(&set);
			return fail(cmd, &err);
		}
	}
	/* the worst cases, or with --cases every case */
	const struct llmsim_worst_case *rows = cases ? every : v.worst;
	size_t nrows = cases ? nevery : (size_t)v.nworst;
	if (json) {
		struct llmsim_json own, *j = jp ? jp : &own;
		if (!jp)
			llmsim_json_init(&own, stdout);
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_str(j, "gpu", gpu.name);
		llmsim_json_str(j, "profile", gpu.profile_path);
		llmsim_json_str(j, "split", split ? split : "all");
		llmsim_json_obj_begin(j, "targets");
		llmsim_json_num(j, "median_abs_pct_err", LLMSIM_CALIB_TARGET_MEDIAN_PCT);
		llmsim_json_num(j, "p90_abs_pct_err", LLMSIM_CALIB_TARGET_P90_PCT);
		llmsim_json_num(j, "abs_median_signed_pct_err", LLMSIM_CALIB_TARGET_BIAS_PCT);
		llmsim_json_obj_end(j);
		llmsim_json_arr_begin(j, "classes");
		for (int c = 0; c < v.nclasses; c++)
			json_stats(j, &v.classes[c]);
		llmsim_json_arr_end(j);
		llmsim_json_obj_begin(j, "all");
		llmsim_json_int(j, "n", v.all.n);
		llmsim_json_num(j, "median_abs_pct_err", v.all.median_abs_pct);
		llmsim_json_num(j, "p90_abs_pct_err", v.all.p90_abs_pct);
		llmsim_json_obj_end(j);
		llmsim_json_arr_begin(j, cases ? "cases" : "worst");
		for (size_t i = 0; i < nrows; i++) {
			llmsim_json_obj_begin(j, NULL);
			llmsim_json_str(j, "op_spec", rows[i].op_spec);
			llmsim_json_str(j, "class", rows[i].op_class);
			llmsim_json_num(j, "measured_s", rows[i].measured_s);
			llmsim_json_num(j, "predicted_s", rows[i].predicted_s);
			llmsim_json_num(j, "err_pct", rows[i].err_pct);
			llmsim_json_num(j, "predicted_sm_clock_hz", rows[i].predicted_clock_hz);
			if (rows[i].measured_clock_hz > 0)
				llmsim_json_num(j, "measured_sm_clock_hz", rows[i].measured_clock_hz);
			llmsim_json_obj_end(j);
		}
		llmsim_json_arr_end(j);
		llmsim_json_obj_begin(j, "hbm_bytes_check");
		llmsim_json_int(j, "n", v.hbm_n);
		llmsim_json_num(j, "median_abs_pct_err", v.hbm_median_abs_pct);
		llmsim_json_num(j, "median_signed_pct_err", v.hbm_median_signed_pct);
		llmsim_json_obj_end(j);
		llmsim_json_obj_begin(j, "sm_clock_under_load");
		llmsim_json_int(j, "n", v.clock_n);
		llmsim_json_num(j, "median_abs_pct_err", v.clock_median_abs_pct);
		llmsim_json_num(j, "median_signed_pct_err", v.clock_median_signed_pct);
		llmsim_json_obj_end(j);
		llmsim_json_int(j, "not_modelled", v.not_modelled);
		llmsim_json_int(j, "failed", v.failed);
		if (have_steps)
			calib_steps_json(j, "steps", &sr);
		llmsim_json_obj_end(j);
		if (!jp)
			llmsim_json_finish(&own);
	} else {
		char with[700];
		printf("%s: %s cases of %s, predicted with %s\n", gpu.name,
		       split ? "held-out" : "all", name.name,
		       predicted_with(&gpu, with, sizeof with));
		if (v.nclasses)
			print_classes(stdout, &v);
		else
			puts("no modelled cases in this split");
		print_worst(stdout, rows, nrows, cases ? "every case, largest |error| first" : "worst cases");
		if (v.hbm_n) {
			char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
			pct(a, v.hbm_median_abs_pct, 0);
			pct(b, v.hbm_median_signed_pct, 1);
			printf(
			    "\nHBM bytes, predicted vs dram__bytes_read.sum + dram__bytes_write.sum"
			    " (%d memory-bound cases): median |err| %s, bias %s\n",
			    v.hbm_n, a, b);
		}
		if (v.clock_n) {
			char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
			pct(a, v.clock_median_abs_pct, 0);
			pct(b, v.clock_median_signed_pct, 1);
			printf("SM clock, predicted vs read by NVML inside a sustained load, where the"
			       " power limit binds (%d cases): median |err| %s, bias %s\n",
			       v.clock_n, a, b);
		}
		if (v.not_modelled || v.failed)
			printf("\nnot predicted: %d cases not modelled, %d predictions failed\n",
			       v.not_modelled, v.failed);
		if (have_steps) {
			printf("\nwhole steps (--steps lists each):\n");
			calib_steps_print(stdout, &sr, 0);
		}
	}
	llmsim_steps_report_free(&sr);
	free(every);
	llmsim_calib_set_release(&set);
	return 0;
}

/* ---- show ---- */

struct show_ctx {
	struct llmsim_table runs;
	struct llmsim_json *j;
	struct {
		char hw[64], cls[32];
		int fit, holdout, probe;
	} counts[64];
	int ncounts;
};

static int show_run(const struct llmsim_store_run_row *r, void *vctx)
{
	struct show_ctx *c = vctx;
	char clock[LLMSIM_FMT_MAX];
	if (c->j) {
		struct llmsim_json *j = c->j;
		llmsim_json_obj_begin(j, NULL);
		llmsim_json_int(j, "id", r->run_id);
		llmsim_json_str(j, "started_at", r->run.started_at);
		llmsim_json_str(j, "host", r->run.host);
		llmsim_json_str(j, "tool", r->run.tool);
		llmsim_json_bool(j, "quick", r->run.quick);
		llmsim_json_str(j, "notes", r->run.notes);
		llmsim_json_int(j, "cases", r->ncases);
		llmsim_json_obj_begin(j, "device");
		llmsim_json_str(j, "name", r->dev.name);
		llmsim_json_str(j, "hw_name", r->dev.hw_name);
		llmsim_json_str(j, "uuid", r->dev.uuid);
		llmsim_json_int(j, "sms", r->dev.sms);
		llmsim_json_int(j, "device_count", r->dev.device_count);
		llmsim_json_num(j, "hbm_bytes", r->dev.hbm_bytes);
		llmsim_json_num(j, "l2_bytes", r->dev.l2_bytes);
		llmsim_json_num(j, "sm_clock_max_hz", r->dev.sm_clock_max_hz);
		llmsim_json_num(j, "mem_clock_hz", r->dev.mem_clock_hz);
		llmsim_json_str(j, "driver", r->dev.driver);
		llmsim_json_str(j, "cuda_runtime", r->dev.cuda_runtime);
		llmsim_json_str(j, "cupti", r->dev.cupti);
		llmsim_json_str(j, "cublas", r->dev.cublas);
		llmsim_json_str(j, "nccl", r->dev.nccl);
		llmsim_json_obj_end(j);
		llmsim_json_obj_end(j);
		return 0;
	}
	snprintf(clock, sizeof clock, "%.0f MHz", r->dev.sm_clock_max_hz / 1e6);
	llmsim_table_rowf(&c->runs, "%lld\t%s\t%s\t%s (%s) x%d\t%s\t%s\t%s\t%s\t%lld%s",
			  (long long)r->run_id, r->run.started_at, r->run.host, r->dev.name,
			  r->dev.hw_name, r->dev.device_count, r->dev.driver, r->dev.cuda_runtime,
			  r->dev.cublas[0] ? r->dev.cublas : "-", clock, (long long)r->ncases,
			  r->run.quick ? " (quick)" : "");
	return 0;
}

static int show_case(const struct llmsim_store_case_row *r, void *vctx)
{
	struct show_ctx *c = vctx;
	int i;
	for (i = 0; i < c->ncounts; i++)
		if (!strcmp(c->counts[i].hw, r->dev.hw_name) &&
		    !strcmp(c->counts[i].cls, r->c.op_class))
			break;
	if (i == c->ncounts) {
		if (c->ncounts == (int)(sizeof c->counts / sizeof c->counts[0]))
			return 0;
		snprintf(c->counts[i].hw, sizeof c->counts[i].hw, "%s", r->dev.hw_name);
		snprintf(c->counts[i].cls, sizeof c->counts[i].cls, "%s", r->c.op_class);
		c->ncounts++;
	}
	if (!strcmp(r->c.split, "fit"))
		c->counts[i].fit++;
	else if (!strcmp(r->c.split, "probe"))
		c->counts[i].probe++;
	else
		c->counts[i].holdout++;
	return 0;
}

static int calib_show(int argc, char **argv)
{
	const char *cmd = "llmsim calib show", *db = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "calibration database (default: the shipped calibration)", 0, NULL, NULL},
	    {"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "[--db FILE] [--json]",
				   "Runs, devices, software versions, clocks and case counts of --db,\n"
				   "or of the calibration llmsim ships (calib/data/) without it.",
				   argc - 1, argv + 1, opts, 2, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	struct llmsim_store *s;
	struct input_name name;
	if (open_input(cmd, db, &s, &name))
		return 1;
	struct show_ctx *c = calloc(1, sizeof *c);
	struct llmsim_err err = {0};
	struct llmsim_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len); /* nothing printed on failure */
	if (!c || !mem) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return 1;
	}
	static const char *const head[] = {"run",     "<started",     "<host",
					   "<device", "<driver",      "<CUDA",
					   "<cuBLAS", "max SM clock", "cases"};
	llmsim_table_init(&c->runs, 9, head);
	if (json) {
		llmsim_json_init(&j, mem);
		c->j = &j;
		llmsim_json_obj_begin(&j, NULL);
		if (db) {
			llmsim_json_str(&j, "db", db);
		} else { /* the shipped dumps, each by its path in the data folder */
			llmsim_json_null(&j, "db");
			llmsim_json_str_list(&j, "shipped", name.files);
		}
		llmsim_json_int(&j, "schema_version", llmsim_store_schema_version(s));
		llmsim_json_arr_begin(&j, "runs");
	}
	rc = llmsim_store_runs(s, show_run, c, &err);
	if (!rc)
		rc = llmsim_store_cases(s, NULL, show_case, c, &err);
	int version = llmsim_store_schema_version(s);
	llmsim_store_close(s);
	if (json) {
		llmsim_json_arr_end(&j);
		llmsim_json_arr_begin(&j, "cases");
		for (int i = 0; i < c->ncounts; i++) {
			llmsim_json_obj_begin(&j, NULL);
			llmsim_json_str(&j, "hw_name", c->counts[i].hw);
			llmsim_json_str(&j, "class", c->counts[i].cls);
			llmsim_json_int(&j, "fit", c->counts[i].fit);
			llmsim_json_int(&j, "holdout", c->counts[i].holdout);
			llmsim_json_int(&j, "probe", c->counts[i].probe);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_arr_end(&j);
		llmsim_json_obj_end(&j);
		llmsim_json_finish(&j);
	} else if (!rc) {
		fprintf(mem, "%s (schema version %d%s)\n", name.name, version,
			version < LLMSIM_STORE_SCHEMA_VERSION
				? ", read as it stands: 'llmsim calib upgrade' migrates it"
				: "");
		if (!db)
			fprintf(mem, "dumps: %s\n", name.files);
		if (c->runs.rows)
			llmsim_table_print(&c->runs, mem);
		else
			fputs("no runs\n", mem);
		static const char *const ch[] = {"<gpu", "<class", "fit", "holdout", "probe"};
		struct llmsim_table t;
		llmsim_table_init(&t, 5, ch);
		for (int i = 0; i < c->ncounts; i++)
			llmsim_table_rowf(&t, "%s\t%s\t%d\t%d\t%d", c->counts[i].hw, c->counts[i].cls,
					  c->counts[i].fit, c->counts[i].holdout, c->counts[i].probe);
		if (c->ncounts) {
			fputs("\ncases:\n", mem);
			llmsim_table_print(&t, mem);
		}
		llmsim_table_release(&t);
	}
	fclose(mem);
	llmsim_table_release(&c->runs);
	free(c);
	if (rc) {
		free(buf);
		return fail(cmd, &err);
	}
	fwrite(buf, 1, len, stdout);
	free(buf);
	return 0;
}

/* ---- export / import ---- */

static int calib_export(int argc, char **argv)
{
	const char *cmd = "llmsim calib export", *db = NULL, *out = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "calibration database (default: the shipped calibration)", 0, NULL, NULL},
	    {"out", LLMSIM_ARG_STRING, &out, "FILE.tsv", "write here (default: stdout)", 0, NULL,
	     NULL},
	    {"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout of what was written (needs --out)",
	     0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "[--db FILE] [--out FILE.tsv] [--json]",
				   "Write every committed run as stable, tab-separated text\n"
				   "(a header line, then per table a 'columns' line and its rows).",
				   argc - 1, argv + 1, opts, 3, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (json && !out)
		return llmsim_args_error(cmd, "--json needs --out FILE.tsv (stdout holds the JSON)");
	struct llmsim_store *s;
	struct input_name name;
	if (open_input(cmd, db, &s, &name))
		return 1;
	struct llmsim_err err = {0};
	char tmp[PATH_MAX + 64];
	FILE *f = stdout;
	struct stat st;
	if (out && !stat(out, &st) && !S_ISREG(st.st_mode)) {
		/* rename() would replace the device or pipe itself */
		fprintf(stderr, "%s: %s: not a regular file (omit --out for stdout)\n", cmd, out);
		llmsim_store_close(s);
		return 1;
	}
	if (out) {
		int fd = -1;
		llmsim_stage_sweep(out); /* what a killed export left */
		if (!llmsim_stage_name(tmp, sizeof tmp, out))
			fd = mkstemp(tmp);
		mode_t mask = umask(0);
		umask(mask);
		if (fd < 0 || fchmod(fd, 0666 & ~mask) || !(f = fdopen(fd, "w"))) {
			fprintf(stderr, "%s: %s: cannot write: %s\n", cmd, out, strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(tmp);
			}
			llmsim_store_close(s);
			return 1;
		}
	}
	rc = llmsim_store_export(s, f, &err);
	llmsim_store_close(s);
	if (out) {
		if ((fclose(f) || rc) && !rc)
			rc = llmsim_err_set(&err, LLMSIM_EIO, "%s: cannot write: %s", out,
					    strerror(errno));
		if (!rc && rename(tmp, out))
			rc = llmsim_err_set(&err, LLMSIM_EIO, "%s: cannot write: %s", out,
					    strerror(errno));
		if (rc)
			unlink(tmp);
	}
	if (rc)
		return fail(cmd, &err);
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "db", name.name);
		llmsim_json_str(&j, "out", out);
		cli_json_end(&j);
	}
	return 0;
}

static int calib_import(int argc, char **argv)
{
	const char *cmd = "llmsim calib import", *db = NULL, *in = NULL, *legacy = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
	    {"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "database to load into (created if absent)", 0,
	     NULL, NULL},
	    {"in", LLMSIM_ARG_STRING, &in, "FILE.tsv", "text written by 'llmsim calib export'", 0,
	     NULL, NULL},
	    {"legacy-operand-data", LLMSIM_ARG_STRING, &legacy, "DATA",
	     "a schema 1-2 dump: what its runs' operands held (grid, any, unknown, ...)", 0, NULL,
	     NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE --in FILE.tsv [--legacy-operand-data DATA] [--json]",
				   "Load exported text into a new or existing database, in one\n"
				   "transaction: a bad line leaves the database as it was. Every run\n"
				   "says what its operands held; only runs on normal (trained-like)\n"
				   "or data-independent operands may hold fit cases. A dump of schema\n"
				   "1 or 2 does not say: it is refused unless --legacy-operand-data\n"
				   "states it.",
				   argc - 1, argv + 1, opts, 4, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	if (!in)
		return llmsim_args_error(cmd, "--in FILE.tsv is required");
	struct llmsim_err err = {0}, zerr = {0};
	char inp[PATH_MAX];
	in = llmsim_data_input(in, inp, sizeof inp);
	FILE *f = llmsim_gz_open(in, NULL, &err);
	if (!f)
		return fail(cmd, &err);
	/* A new file is removed again when the import fails. */
	int existed = access(db, F_OK) == 0;
	struct llmsim_store *s;
	if (open_db(cmd, db, LLMSIM_STORE_CREATE, &s)) {
		fclose(f);
		return 1;
	}
	struct llmsim_store_import_opts io = {.legacy_operand_data = legacy};
	rc = llmsim_store_import_opts(s, f, in, &io, &err);
	/* a cut-off .gz explains the parse error it caused; the import is
	 * one transaction, so nothing of a bad stream was kept */
	if (llmsim_gz_close(f, in, &zerr) && !rc)
		rc = zerr.code;
	if (zerr.code)
		err = zerr;
	llmsim_store_close(s);
	if (rc) {
		if (!existed)
			unlink(db);
		return fail(cmd, &err);
	}
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "db", db);
		llmsim_json_str(&j, "in", in);
		llmsim_json_bool(&j, "created", !existed);
		cli_json_end(&j);
	}
	return 0;
}

static int calib_upgrade(int argc, char **argv)
{
	const char *cmd = "llmsim calib upgrade", *db = NULL;
	int json = 0;
	const struct llmsim_opt opts[] = {
	    {"db", LLMSIM_ARG_STRING, &db, "FILE", "calibration database", 0, NULL, NULL},
	    {"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON on stdout", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(cmd, "--db FILE [--json]",
				   "Migrate a database of an older schema version to the current one,\n"
				   "in one transaction (the reading verbs never do).",
				   argc - 1, argv + 1, opts, 2, NULL, 0, NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (!db)
		return llmsim_args_error(cmd, "--db FILE is required");
	struct llmsim_err err = {0};
	int from = 0;
	if (llmsim_store_upgrade(db, &from, &err))
		return fail(cmd, &err);
	if (json) {
		struct llmsim_json j;
		cli_json_begin(&j);
		llmsim_json_str(&j, "db", db);
		llmsim_json_int(&j, "from_version", from);
		llmsim_json_int(&j, "schema_version", LLMSIM_STORE_SCHEMA_VERSION);
		llmsim_json_bool(&j, "migrated", from != LLMSIM_STORE_SCHEMA_VERSION);
		cli_json_end(&j);
	} else if (from == LLMSIM_STORE_SCHEMA_VERSION) {
		printf("%s: already at schema version %d\n", db, from);
	} else {
		printf("%s: schema version %d -> %d\n", db, from, LLMSIM_STORE_SCHEMA_VERSION);
	}
	return 0;
}

int cmd_calib(int argc, char **argv, const struct cli_setup *s)
{
	(void)s; /* no model or GPU of its own: its verbs load theirs */
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} verbs[] = {
	    {"run", calib_run},	  {"fit", calib_fit},	    {"validate", calib_validate},
	    {"show", calib_show}, {"export", calib_export}, {"import", calib_import},
	    {"upgrade", calib_upgrade},
	};
	if (argc < 2) /* one line, as every usage error */
		return llmsim_args_error("llmsim calib", "a verb is required (%s)",
					 "run|fit|validate|show|export|import|upgrade");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		llmsim_args_usage(stdout, "llmsim calib",
				  "run|fit|validate|show|export|import|upgrade [options]", calib_about,
				  NULL, 0);
		return 0;
	}
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	return llmsim_args_error("llmsim calib",
				 "unknown verb '%s' (expected run, fit, validate, show, export,"
				 " import or upgrade)",
				 argv[1]);
}
