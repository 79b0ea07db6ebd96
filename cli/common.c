/*
 * common.c - pieces several subcommands share (see common.h): the
 * list|show verbs over data-folder descriptions and a model placed on GPUs.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- list|show ---- */

int cli_list_show(const char *cmd, const char *about, int argc, char **argv,
		  int (*list)(int argc, char **argv), int (*show)(int argc, char **argv))
{
	if (argc < 2) /* one line, as every usage error */
		return llmsim_args_error(cmd, "a verb is required (%s)", "list|show");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		llmsim_args_usage(stdout, cmd, "list|show [options]", about,
				  NULL, 0);
		return 0;
	}
	if (!strcmp(argv[1], "list"))
		return list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return show(argc - 1, argv + 1);
	return llmsim_args_error(cmd, "unknown verb '%s' (expected list or show)", argv[1]);
}

struct list_run {
	struct cli_list l;
	int (*row)(struct cli_list *l, const char *path);
	int failed;
};

static void list_one(const char *path, void *ctx)
{
	struct list_run *r = ctx;
	if (!r->failed && r->row(&r->l, path))
		r->failed = 1;
}

int cli_list_verb(const char *cmd, const char *about, int argc, char **argv,
		  const char *const *head, int ncols,
		  int (*each)(void (*fn)(const char *path, void *ctx), void *ctx,
			      struct llmsim_err *err),
		  int (*row)(struct cli_list *l, const char *path))
{
	struct list_run r = {.row = row};
	struct cli_list *l = &r.l;
	char verb[64];
	snprintf(verb, sizeof verb, "%s list", cmd);
	const struct llmsim_opt opts[] = {
		{"json", LLMSIM_ARG_FLAG, &l->json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse(verb, "[--json]", about, argc - 1, argv + 1, opts, 1, NULL, 0,
				   NULL);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	llmsim_table_init(&l->t, ncols, head);
	/* JSON goes to a buffer first so that a failure leaves no partial output. */
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = l->json ? open_memstream(&buf, &len) : NULL;
	if (l->json) {
		llmsim_json_init(&l->j, mem);
		llmsim_json_arr_begin(&l->j, NULL);
	}
	rc = each(list_one, &r, &l->err);
	if (l->json) {
		llmsim_json_arr_end(&l->j);
		llmsim_json_finish(&l->j);
		fclose(mem);
	}
	if (rc || r.failed) {
		fprintf(stderr, "%s: %s\n", verb, l->err.msg);
		llmsim_table_release(&l->t);
		free(buf);
		return 1;
	}
	if (l->json)
		fwrite(buf, 1, len, stdout);
	else
		llmsim_table_print(&l->t, stdout);
	free(buf);
	llmsim_table_release(&l->t);
	return 0;
}

/* ---- a model placed on GPUs ---- */

const char *const cli_wdt_names[] = {"bf16", "fp8", "int4", "fp4", NULL};
const enum llmsim_dtype cli_wdt_vals[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8, LLMSIM_DT_INT4,
					  LLMSIM_DT_FP4};
const char *const cli_kvdt_names[] = {"bf16", "fp8", NULL};
const enum llmsim_dtype cli_kvdt_vals[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8};
_Static_assert(sizeof cli_wdt_names / sizeof cli_wdt_names[0] ==
		       sizeof cli_wdt_vals / sizeof cli_wdt_vals[0] + 1,
	       "a weight type per choice");
_Static_assert(sizeof cli_kvdt_names / sizeof cli_kvdt_names[0] ==
		       sizeof cli_kvdt_vals / sizeof cli_kvdt_vals[0] + 1,
	       "a KV type per choice");

int cli_place_gpus(const struct llmsim_infer_cfg *c, int replicas)
{
	return replicas * c->tp * c->pp;
}

void cli_place_json(struct llmsim_json *j, const struct llmsim_infer_cfg *c, int replicas)
{
	llmsim_json_str(j, "model", c->model->name);
	llmsim_json_str(j, "gpu", c->gpu->name);
	llmsim_json_int(j, "gpus", cli_place_gpus(c, replicas));
	llmsim_json_int(j, "tp", c->tp);
	llmsim_json_int(j, "pp", c->pp);
	llmsim_json_int(j, "ep", c->ep);
	llmsim_json_int(j, "replicas", replicas);
}

void cli_place_print(const struct llmsim_infer_cfg *c, int replicas)
{
	printf("%s on %d x %s (tp %d, pp %d, ep %d; %d replica%s)", c->model->name,
	       cli_place_gpus(c, replicas), c->gpu->name, c->tp, c->pp, c->ep, replicas,
	       replicas > 1 ? "s" : "");
}

/* ---- how a program runs ---- */

const char *const cli_engine_names[] = {"fused", "torch", "hf", NULL};
_Static_assert(sizeof cli_engine_names / sizeof cli_engine_names[0] == LLMSIM_ENGINE_COUNT + 1,
	       "an engine per choice");

int cli_load_parse(const char *cmd, const char *s, enum llmsim_load *load, double *rho)
{
	*load = LLMSIM_LOAD_BUSY;
	*rho = 0;
	if (!s || !strcmp(s, "busy"))
		return 0;
	if (!strcmp(s, "lone")) {
		*load = LLMSIM_LOAD_LONE;
		return 0;
	}
	char *end = NULL;
	double r = strncmp(s, "busy:", 5) ? -1 : strtod(s + 5, &end);
	if (!(r > 0 && r <= 1) || !end || *end)
		return llmsim_args_error(cmd, "--load: expected lone, busy or busy:RHO with RHO in "
					 "(0, 1], got '%s'", s);
	*rho = r;
	return 0;
}

int cli_operand_data_parse(const char *cmd, const char *s, enum llmsim_operand_data *d)
{
	*d = LLMSIM_OPD_TRAINED;
	if (!s)
		return 0;
	int v = llmsim_operand_data_parse(s);
	if (v < 0)
		return llmsim_args_error(cmd, "--operand-data: unknown '%s' (%s)", s,
					 llmsim_operand_data_choices());
	*d = (enum llmsim_operand_data)v;
	return 0;
}

int cli_run_apply(const char *cmd, const struct cli_run *r, struct llmsim_infer_cfg *cfg)
{
	double rho;
	int rc;
	if ((rc = cli_load_parse(cmd, r->load, &cfg->load, &rho)) ||
	    (rc = cli_operand_data_parse(cmd, r->operand_data, &cfg->operand_data)))
		return rc;
	llmsim_infer_cfg_engine(cfg, (enum llmsim_engine)r->engine);
	cfg->load_rho = rho;
	return 0;
}

static const char *engine_about(enum llmsim_engine e)
{
	switch (e) {
	case LLMSIM_ENGINE_TORCH: return "a lean PyTorch engine";
	case LLMSIM_ENGINE_HF: return "HF transformers";
	default: return "a serving engine's fused kernels";
	}
}

void cli_run_print(const struct llmsim_infer_cfg *cfg, const char *busy)
{
	printf("engine %s (%s), %s; load %s", llmsim_engine_name(cfg->lower.engine),
	       engine_about(cfg->lower.engine),
	       cfg->runtime == LLMSIM_RT_GRAPH ? "CUDA graphs" : "eager launches",
	       llmsim_load_name(cfg->load));
	if (cfg->load == LLMSIM_LOAD_LONE)
		printf(" (every op a lone kernel at its burst clock)");
	else if (cfg->load_rho > 0)
		printf(" (a sustained load of tensor intensity %.2f)", cfg->load_rho);
	else
		printf(" (%s)", busy);
	printf("; operand data %s\n", llmsim_operand_data_name(cfg->operand_data));
}

void cli_run_json(struct llmsim_json *j, const struct llmsim_infer_cfg *cfg)
{
	llmsim_json_str(j, "engine", llmsim_engine_name(cfg->lower.engine));
	llmsim_json_str(j, "runtime", llmsim_runtime_name(cfg->runtime));
	llmsim_json_str(j, "load", llmsim_load_name(cfg->load));
	llmsim_json_num(j, "load_rho_given", cfg->load_rho);
	llmsim_json_str(j, "operand_data", llmsim_operand_data_name(cfg->operand_data));
}

/* The whole-step expected error of the engine and phase, from the GPU's
 * profile (steps_errors: written by `llmsim calib fit`), into buf. */
/* The steps class's engine key: the engine's name, with the runtime when
 * it is not the one the engine's program was measured in. */
static const char *step_class(enum llmsim_engine engine, enum llmsim_runtime rt, char *buf,
			      size_t size)
{
	if (rt == llmsim_engine_runtime(engine))
		return llmsim_engine_name(engine);
	snprintf(buf, size, "%s_%s", llmsim_engine_name(engine), llmsim_runtime_name(rt));
	return buf;
}

const struct llmsim_step_err_class *cli_step_err(const struct llmsim_gpu *gpu, enum llmsim_engine engine,
						 enum llmsim_runtime rt, const char *phase,
						 char *buf, size_t size)
{
	struct llmsim_expected_error x;
	const struct llmsim_step_err_class *e;
	char k[64];
	const char *key = step_class(engine, rt, k, sizeof k);
	llmsim_expected_step_error(gpu, key, phase, &x, &e);
	if (!x.calibrated && gpu->transfer_path[0]) {
		snprintf(buf, size, "+/- %.0f%% (uncalibrated: %s)", 100 * x.abs_frac, x.source);
		return NULL;
	}
	if (!x.calibrated) {
		snprintf(buf, size, "+/- %.0f%% (the stated default: no measured %s steps of the %s "
			 "engine%s%s; llmsim calib validate --steps)", 100 * x.abs_frac, phase,
			 llmsim_engine_name(engine), key == k ? " run " : "",
			 key == k ? llmsim_runtime_name(rt) : "");
		return NULL;
	}
	if (gpu->transfer_path[0] && !gpu->profile_path[0])
		/* an uncalibrated GPU: the transfer experiment's class, widened */
		snprintf(buf, size, "+/- %.1f%% (uncalibrated: p80 of %d %s steps of %s on the %s "
			 "predicted from the %s's calibration, %s; %s %+.1f%%)",
			 100 * x.abs_frac, e->n, phase, e->program, gpu->transfer_measured_on,
			 gpu->basis, gpu->uncalibrated_step_error_fraction > 0
					     ? "widened by its file's uncalibrated values"
					     : "the same die",
			 x.bias_frac ? "bias" : "median bias", e->bias_pct);
	else
		snprintf(buf, size,
			 "+/- %.1f%% (whole step: p80 of %d measured %s steps of %s; %s %+.1f%%)",
			 100 * x.abs_frac, e->n, phase, e->program,
			 x.bias_frac ? "bias" : "median bias", e->bias_pct);
	if (x.bias_frac) /* the sign: llmsim is fast (-) or slow (+) */
		snprintf(buf + strlen(buf), size - strlen(buf), ": predictions run %s",
			 x.bias_frac < 0 ? "low" : "high");
	return e;
}

void cli_step_err_json(struct llmsim_json *j, const char *key, const struct llmsim_gpu *gpu,
		       enum llmsim_engine engine, enum llmsim_runtime rt, const char *phase)
{
	struct llmsim_expected_error x;
	const struct llmsim_step_err_class *e;
	char k[64];
	llmsim_expected_step_error(gpu, step_class(engine, rt, k, sizeof k), phase, &x, &e);
	llmsim_json_obj_begin(j, key);
	llmsim_json_str(j, "class", e ? "whole step" : "default");
	llmsim_json_bool(j, "calibrated", x.calibrated);
	llmsim_json_num(j, "abs_pct", 100 * x.abs_frac);
	llmsim_json_num(j, "bias_pct", 100 * x.bias_frac);
	llmsim_json_str(j, "source", x.source);
	if (e) {
		llmsim_json_str(j, "name", e->name);
		llmsim_json_str(j, "program", e->program);
		llmsim_json_num(j, "median_abs_pct", e->median_abs_pct);
		llmsim_json_num(j, "median_signed_pct", e->bias_pct);
		llmsim_json_int(j, "n", e->n);
	}
	llmsim_json_obj_end(j);
}


void cli_json_pcts(struct llmsim_json *j, const char *key, const struct llmsim_pcts *p)
{
	llmsim_json_obj_begin(j, key);
	llmsim_json_num(j, "mean", p->mean);
	llmsim_json_num(j, "p50", p->p50);
	llmsim_json_num(j, "p90", p->p90);
	llmsim_json_num(j, "p99", p->p99);
	llmsim_json_num(j, "max", p->max);
	llmsim_json_obj_end(j);
}

/* ---- JSON summaries and children ---- */

void cli_json_begin(struct llmsim_json *j)
{
	llmsim_json_init(j, stdout);
	llmsim_json_obj_begin(j, NULL);
}

void cli_json_end(struct llmsim_json *j)
{
	llmsim_json_obj_end(j);
	llmsim_json_finish(j);
}

int cli_run_child(const char *cmd, const char *path, char *const *argv)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: cannot start %s: %s\n", cmd, path, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		dup2(2, 1);
		execv(path, argv);
		fprintf(stderr, "%s: cannot start %s: %s\n", cmd, path, strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "%s: %s: %s\n", cmd, path, strerror(errno));
			return 1;
		}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "%s: %s died of signal %d\n", cmd, path, WTERMSIG(st));
	return 1;
}

int cli_check_context(const char *cmd, const struct llmsim_model *m, int64_t tokens)
{
	if (m->max_seq <= 0 || tokens <= m->max_seq)
		return 0;
	fprintf(stderr, "%s: --seq %lld tokens exceeds the %d-token context of %s\n", cmd,
		(long long)tokens, m->max_seq, m->name);
	return 1;
}

int cli_context_seq(const char *cmd, const struct llmsim_model *m, int64_t *seq, int64_t dflt)
{
	if (*seq > 0)
		return cli_check_context(cmd, m, *seq);
	*seq = m && m->max_seq > 0 && m->max_seq < dflt ? m->max_seq : dflt;
	return 0;
}

void cli_json_rejected(struct llmsim_json *j, const char *key, const char *why, int64_t n)
{
	llmsim_json_obj_begin(j, NULL);
	llmsim_json_str(j, "reason", key);
	llmsim_json_str(j, "why", why);
	llmsim_json_int(j, "configurations", n);
	llmsim_json_obj_end(j);
}
