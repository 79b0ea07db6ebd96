/*
 * common.h - pieces several subcommands share: the `list|show` verbs of
 * `hw` and `model`, the weight and KV data-type choices, and the options,
 * headline of a model placed on GPUs (`infer`, `serve`), and the JSON of
 * a latency distribution (`serve`, `plan --workload serve`).
 */
#ifndef LLMSIM_CLI_COMMON_H
#define LLMSIM_CLI_COMMON_H

#include "base/err.h"
#include "base/fmt.h"
#include "base/json.h"
#include "sim/expected_error.h"
#include "sim/infer/infer.h"
#include "sim/infer/serve.h"
#include "args.h"

/* `CMD list|show ...`: usage on no verb or --help, else the verb's
 * function with argv starting at the verb. */
int cli_list_show(const char *cmd, const char *about, int argc, char **argv,
		  int (*list)(int argc, char **argv), int (*show)(int argc, char **argv));

/* The state of a `list` verb, handed to its row function. */
struct cli_list {
	struct llmsim_table t;
	struct llmsim_json j;
	int json;
	struct llmsim_err err;
};

/* Run `CMD list [--json]` (argv[0] is "list"): each(fn, ctx, err) calls
 * fn(path, ctx) per description file; row(l, path) loads one and adds a
 * table row or, when l->json, a JSON object, returning nonzero with l->err
 * filled on failure (the files after it are skipped). Prints the table,
 * or the JSON array, only when every file loaded; else one error line.
 * Returns the exit status. */
int cli_list_verb(const char *cmd, const char *about, int argc, char **argv,
		  const char *const *head, int ncols,
		  int (*each)(void (*fn)(const char *path, void *ctx), void *ctx,
			      struct llmsim_err *err),
		  int (*row)(struct cli_list *l, const char *path));

/* --weight-dtype and --kv-dtype choices, and the types they stand for. */
extern const char *const cli_wdt_names[];     /* bf16, fp8, int4, fp4 */
extern const enum llmsim_dtype cli_wdt_vals[];
extern const char *const cli_kvdt_names[];    /* bf16, fp8 */
extern const enum llmsim_dtype cli_kvdt_vals[];

/* A model placed on GPUs: the options `infer` and `serve` share. */
struct cli_place {
	const char *model, *gpu;  /* --model (required), --gpu */
	int gpus, tp, pp, ep;     /* 0: left to llmsim_infer_layout */
	int wdt, kvdt;            /* indexes into cli_wdt_vals, cli_kvdt_vals */
};

/* Option-table entries for --model, --gpu, --gpus (its help text given),
 * --tp, --pp, --ep of a struct cli_place. */
#define CLI_PLACE_OPTS(p, gpus_help)                                                         \
	{"model", LLMSIM_ARG_STRING, &(p).model, "M", "model name, alias or YAML path (required)", \
	 0, NULL, NULL},                                                                       \
	{"gpu", LLMSIM_ARG_STRING, &(p).gpu, "G", "GPU name or YAML path (default h200)", 0,   \
	 NULL, NULL},                                                                          \
	{"gpus", LLMSIM_ARG_INT, &(p).gpus, "N", gpus_help, 1, NULL, NULL},                    \
	{"tp", LLMSIM_ARG_INT, &(p).tp, "T", "tensor-parallel GPUs per replica (default N/pp)", \
	 1, NULL, NULL},                                                                       \
	{"pp", LLMSIM_ARG_INT, &(p).pp, "P", "pipeline stages per replica (default 1)", 1,     \
	 NULL, NULL},                                                                          \
	{"ep", LLMSIM_ARG_INT, &(p).ep, "E", "expert-parallel ranks, dividing tp (default 1)", \
	 1, NULL, NULL}

/* Option-table entries for --weight-dtype and --kv-dtype of a struct
 * cli_place. */
#define CLI_DTYPE_OPTS(p)                                                                     \
	{"weight-dtype", LLMSIM_ARG_CHOICE, &(p).wdt, NULL, "weights (default bf16)", 0,       \
	 cli_wdt_names, NULL},                                                                 \
	{"kv-dtype", LLMSIM_ARG_CHOICE, &(p).kvdt, NULL, "KV cache (default bf16)", 0,         \
	 cli_kvdt_names, NULL}

/* How a program runs: the options infer, serve and plan share (and train
 * spells the same way), as `llmsim op` spells --load and --operand-data. */
struct cli_run {
	int engine;                  /* index into cli_engine_names (enum llmsim_engine);
				      * set to the command's default before parsing */
	const char *load;            /* --load: NULL, "busy", "busy:RHO", "lone" */
	const char *operand_data;    /* --operand-data: NULL or a name */
};

/* "fused", "torch", "hf" (the order of enum llmsim_engine). */
extern const char *const cli_engine_names[];

#define CLI_RUN_OPTS(r, engine_help)                                                          	{"engine", LLMSIM_ARG_CHOICE, &(r).engine, NULL, engine_help, 0, cli_engine_names, NULL}, 	{"load", LLMSIM_ARG_STRING, &(r).load, "L",                                            	 "busy (default: inside the program's own sustained load), busy:RHO or lone (an idle "  	 "GPU)", 0, NULL, NULL},                                                               	{"operand-data", LLMSIM_ARG_STRING, &(r).operand_data, "D",                            	 "trained (default), random, grid, coarse or zeros", 0, NULL, NULL}

/* --load's value (NULL: busy) into *load and, for busy:RHO, *rho (else 0);
 * 2 with one line naming the choices on a bad value. */
int cli_load_parse(const char *cmd, const char *s, enum llmsim_load *load, double *rho);
/* --operand-data's value (NULL: trained); 2 with one line naming the
 * choices on a bad value. */
int cli_operand_data_parse(const char *cmd, const char *s, enum llmsim_operand_data *d);
/* Apply r to cfg: the engine with its attention and runtime
 * (llmsim_infer_cfg_engine), the load and the operand data. 0, or 2 with
 * one line. */
int cli_run_apply(const char *cmd, const struct cli_run *r, struct llmsim_infer_cfg *cfg);
/* One line of what a run assumes: "engine torch (a lean PyTorch engine),
 * CUDA graphs; load busy (BUSY); operand data trained", BUSY saying what
 * the busy load is for the command. */
void cli_run_print(const struct llmsim_infer_cfg *cfg, const char *busy);
/* The same as JSON fields (engine, runtime, load, load_rho_given,
 * operand_data) inside an open object. */
void cli_run_json(struct llmsim_json *j, const struct llmsim_infer_cfg *cfg);

/* The whole-step expected error of engine and phase ("prefill",
 * "decode") from the GPU's profile (steps_errors:, written by `llmsim calib
 * fit` / `calib validate --update-profile` from the steps class), as one
 * line into buf; a step run other than as the engine's measured program
 * (llmsim_engine_runtime: the lean engine eager, say) is its own class,
 * "torch_eager" ("+/- 7.4% (whole step: p80 of 38 measured prefill steps
 * of lean_graph; bias -4.8%): predictions run low"), or the reason there is
 * none; NULL then. */
const struct llmsim_step_err_class *cli_step_err(const struct llmsim_gpu *gpu,
						 enum llmsim_engine engine, enum llmsim_runtime rt,
						 const char *phase, char *buf, size_t size);
/* The same as a JSON object under key: class ("whole step" or
 * "default"), calibrated, abs_pct, bias_pct, source, and the class's
 * name, program, median_abs_pct, median_signed_pct, n. */
void cli_step_err_json(struct llmsim_json *j, const char *key, const struct llmsim_gpu *gpu,
		       enum llmsim_engine engine, enum llmsim_runtime rt, const char *phase);

/* The summary object of a verb on stdout: _begin opens it, the verb adds
 * its fields, _end closes it with a newline. */
void cli_json_begin(struct llmsim_json *j);
void cli_json_end(struct llmsim_json *j);

/* Run path with argv (NULL-terminated) as a child whose stdout goes to our
 * stderr (under --json, stdout holds only the JSON) and wait for it: its
 * exit status, 1 with one line when it cannot start or dies of a
 * signal. */
int cli_run_child(const char *cmd, const char *path, char *const *argv);

/* One element of a plan's "rejected" array: {"reason": key, "why": text,
 * "configurations": n}. */
void cli_json_rejected(struct llmsim_json *j, const char *key, const char *why, int64_t n);

/* The model's maximum context against a sequence of tokens (train's and
 * plan's --seq; infer checks prompt + output itself): 0, or 1 with one
 * line (a configuration the model cannot run). */
int cli_check_context(const char *cmd, const struct llmsim_model *m, int64_t tokens);
/* A sequence length option with a default: given (*seq > 0), it is checked
 * against the model's context (1 and a line on stderr past it); not given
 * (0), it becomes dflt, or the model's context where that is shorter (m
 * may be NULL: dflt). */
int cli_context_seq(const char *cmd, const struct llmsim_model *m, int64_t *seq, int64_t dflt);

/* GPUs in all of a layout: replicas x tp x pp. */
int cli_place_gpus(const struct llmsim_infer_cfg *c, int replicas);

/* The layout's JSON fields (inside an open object): model, gpu, gpus, tp,
 * pp, ep, replicas. */
void cli_place_json(struct llmsim_json *j, const struct llmsim_infer_cfg *c, int replicas);

/* The headline's start, no newline: "M on N x G (tp T, pp P, ep E; R replicas)". */
void cli_place_print(const struct llmsim_infer_cfg *c, int replicas);

/* "key": {"mean", "p50", "p90", "p99", "max"} of p (inside an open object).
 * A distribution's key is its scalar's plus "_dist" (ttft_s_dist): a key
 * ending in a unit (ttft_s) is a number in every command. */
void cli_json_pcts(struct llmsim_json *j, const char *key, const struct llmsim_pcts *p);

#endif
