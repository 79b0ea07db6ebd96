/*
 * serve_eng.c - the serving engine's shared options (serve_eng.h).
 */
#include "serve_eng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"

const char *const cli_server_names[] = {"generic", "vllm", "sglang", "trtllm", NULL};
_Static_assert(sizeof cli_server_names / sizeof cli_server_names[0] == LLMSIM_SERVER_COUNT + 1,
	       "server names");

int cli_parse_alphas(const char *s, double *a, int *n)
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *e;
		double v = strtod(p, &e);
		if (e == p || *n >= LLMSIM_SPEC_MAX)
			return -1;
		a[(*n)++] = v;
		if (*e == ',')
			e++;
		else if (*e)
			return -1;
		p = e;
	}
	return *n ? 0 : -1;
}

int cli_serve_eng_apply(const char *cmd, const struct cli_serve_eng *e,
			struct llmsim_serve_engine *out)
{
	static struct llmsim_model draft;
	memset(out, 0, sizeof *out);
	out->server = (enum llmsim_server)e->server;
	if (!(e->prefix_share >= 0 && e->prefix_share < 1))
		return llmsim_args_error(cmd, "--prefix-share must be in [0, 1), got %g", e->prefix_share);
	out->prefix_share = e->prefix_share;
	int kinds = !!e->draft + !!e->heads + !!e->mtp;
	if (!kinds) {
		if (e->seen_gamma || e->seen_alpha || e->alphas || e->tree)
			return llmsim_args_error(cmd, "--gamma, --alpha(s) and --tree go with --draft, "
						 "--medusa-heads or --mtp");
		return 0;
	}
	if (kinds > 1)
		return llmsim_args_error(cmd, "give one of --draft, --medusa-heads and --mtp");
	if ((e->heads || e->mtp) && e->seen_gamma)
		return llmsim_args_error(cmd, "--gamma is for a draft model; Medusa and MTP take their "
					 "depth from --medusa-heads / --mtp");
	if (e->tree && !e->heads)
		return llmsim_args_error(cmd, "--tree goes with --medusa-heads");
	if (!e->seen_alpha == !e->alphas)
		return llmsim_args_error(cmd, "speculation needs one of --alpha and --alphas");
	struct llmsim_serve_spec *sp = &out->spec;
	sp->kind = e->heads ? LLMSIM_SPEC_MEDUSA : e->mtp ? LLMSIM_SPEC_MTP : LLMSIM_SPEC_DRAFT;
	sp->gamma = e->heads ? e->heads : e->mtp ? e->mtp : e->seen_gamma ? e->gamma : 4;
	sp->tree = e->tree;
	if (e->alphas) {
		if (cli_parse_alphas(e->alphas, sp->alpha, &sp->nalpha))
			return llmsim_args_error(cmd, "--alphas: expected numbers separated by commas, "
						 "got '%s'", e->alphas);
	} else {
		sp->alpha[0] = e->alpha;
		sp->nalpha = 1;
	}
	for (int i = 0; i < sp->nalpha; i++)
		if (!(sp->alpha[i] >= 0 && sp->alpha[i] <= 1))
			return llmsim_args_error(cmd, "acceptance rates are in [0, 1], got %g", sp->alpha[i]);
	if (e->draft) {
		struct llmsim_err err = {0};
		if (llmsim_model_load(e->draft, &draft, &err)) {
			fprintf(stderr, "%s: --draft: %s\n", cmd, err.msg);
			return 1;
		}
		sp->draft = &draft;
	}
	return 0;
}

void cli_serve_eng_describe(const struct llmsim_serve_engine *e, char *buf, size_t n)
{
	static const char *const kinds[] = {"draft model", "Medusa heads", "MTP depth"};
	int k = snprintf(buf, n, "%s engine", cli_server_names[e->server]);
	if (e->prefix_share > 0 && k >= 0 && (size_t)k < n)
		k += snprintf(buf + k, n - (size_t)k, ", %.0f%% of each prompt in the prefix cache",
			      100 * e->prefix_share);
	const struct llmsim_serve_spec *sp = &e->spec;
	if (sp->gamma > 0 && k >= 0 && (size_t)k < n) {
		k += snprintf(buf + k, n - (size_t)k, ", speculation: %s %s%s%d, acceptance %g%s",
			      kinds[sp->kind], sp->kind == LLMSIM_SPEC_DRAFT ? sp->draft->name : "",
			      sp->kind == LLMSIM_SPEC_DRAFT ? " gamma " : "", sp->gamma, sp->alpha[0],
			      sp->nalpha > 1 ? ",.. per position" : "");
	}
}

void cli_serve_eng_json(struct llmsim_json *j, const struct llmsim_serve_cfg *cfg)
{
	static const char *const kinds[] = {"draft", "medusa", "mtp"};
	const struct llmsim_serve_spec *sp = &cfg->eng.spec;
	llmsim_json_str(j, "server", cli_server_names[cfg->eng.server]);
	llmsim_json_int(j, "max_num_seqs", cfg->max_batch);
	llmsim_json_int(j, "max_step_tokens", cfg->max_tokens);
	llmsim_json_bool(j, "chunked_prefill", cfg->chunked_prefill);
	llmsim_json_num(j, "prefix_share", cfg->eng.prefix_share);
	if (sp->gamma <= 0) {
		llmsim_json_null(j, "speculation");
		return;
	}
	llmsim_json_obj_begin(j, "speculation");
	llmsim_json_str(j, "kind", kinds[sp->kind]);
	llmsim_json_int(j, "depth", sp->gamma);
	if (sp->kind == LLMSIM_SPEC_DRAFT)
		llmsim_json_str(j, "draft", sp->draft->name);
	llmsim_json_arr_begin(j, "alpha");
	for (int i = 0; i < sp->nalpha; i++)
		llmsim_json_num(j, NULL, sp->alpha[i]);
	llmsim_json_arr_end(j);
	llmsim_json_obj_end(j);
}
