/*
 * serve_eng.h - the serving engine's options that `serve` and `plan
 * --workload serve` share (sim/infer/serve.h, struct llmsim_serve_engine):
 * whose engine (--server), the prefix cache (--prefix-share) and
 * speculative decoding, named as `spec` names them.
 */
#ifndef LLMSIM_CLI_SERVE_ENG_H
#define LLMSIM_CLI_SERVE_ENG_H

#include "base/json.h"
#include "sim/infer/serve.h"
#include "args.h"

extern const char *const cli_server_names[]; /* NULL-terminated, in enum order */

struct cli_serve_eng {
	int server;                 /* enum llmsim_server */
	double prefix_share;
	const char *draft, *alphas;
	int gamma, heads, mtp, tree, seen_gamma, seen_alpha;
	double alpha;
};

#define CLI_SERVE_ENG_OPTS(e)                                                                    \
	{"server", LLMSIM_ARG_CHOICE, &(e).server, NULL,                                        \
	 "the serving engine: generic (default: as the options say), vllm (V1), sglang or "     \
	 "trtllm, each with its scheduler, token budget and CUDA graphs", 0, cli_server_names,  \
	 NULL},                                                                                 \
	{"prefix-share", LLMSIM_ARG_DOUBLE, &(e).prefix_share, "F",                             \
	 "fraction of each prompt already in the prefix cache, in [0, 1) (default 0)", 0, NULL, \
	 NULL},                                                                                 \
	{"draft", LLMSIM_ARG_STRING, &(e).draft, "MODEL", "speculate with this draft model",   \
	 0, NULL, NULL},                                                                        \
	{"gamma", LLMSIM_ARG_INT, &(e).gamma, "K", "draft tokens per step (default 4)", 1,      \
	 NULL, &(e).seen_gamma},                                                                \
	{"medusa-heads", LLMSIM_ARG_INT, &(e).heads, "K", "speculate with Medusa heads", 1,     \
	 NULL, NULL},                                                                           \
	{"tree", LLMSIM_ARG_INT, &(e).tree, "N",                                                \
	 "Medusa candidate tokens verified per step (default heads+1)", 1, NULL, NULL},         \
	{"mtp", LLMSIM_ARG_INT, &(e).mtp, "D", "speculate with multi-token-prediction modules", \
	 1, NULL, NULL},                                                                        \
	{"alpha", LLMSIM_ARG_DOUBLE, &(e).alpha, "A",                                           \
	 "speculation: acceptance rate of every position, in [0, 1]", 0, NULL,                 \
	 &(e).seen_alpha},                                                                      \
	{"alphas", LLMSIM_ARG_STRING, &(e).alphas, "A1,A2,..",                                  \
	 "speculation: acceptance per position (conditional on the previous)", 0, NULL, NULL}

/* "0.8,0.6,0.4" into a (at most LLMSIM_SPEC_MAX); 0, or -1 when malformed. */
int cli_parse_alphas(const char *s, double *a, int *n);

/* e into out: 0, or 2 with one line on a usage error (a share outside
 * [0, 1), two kinds of speculation, acceptance rates missing or given
 * twice), or 1 when the draft model does not load. The draft model is
 * kept in storage that stays valid until the next call. */
int cli_serve_eng_apply(const char *cmd, const struct cli_serve_eng *e,
			struct llmsim_serve_engine *out);

/* "vllm engine, prefix cache 50% of each prompt, MTP depth 1 (alpha 0.8)". */
void cli_serve_eng_describe(const struct llmsim_serve_engine *e, char *buf, size_t n);

/* The engine's keys in a JSON object: server, the budget and cap, the
 * prefix share and the speculation (null when none). */
void cli_serve_eng_json(struct llmsim_json *j, const struct llmsim_serve_cfg *cfg);

#endif
