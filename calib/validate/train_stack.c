/*
 * train_stack.c - the fields of a run that say how its software stack ran
 * it (issue 21's shared names: stack, precision recipe, recompute modules,
 * method and layers, activation offload, FSDP, MoE dispatch and overlap,
 * TP and CP communication). Each is kept as given (e->opts) and priced
 * with the simulator's own feature: the stack's file (hw/stacks) sets what
 * the stack runs by default (llmsim_stack_apply), and the row's fields
 * override it as the run's command line did.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/precision.h"
#include "sim/train/stack.h"
#include "train_runs_int.h"

/* The names issue 21's branches share (notes/NAMES.md): a row may name them
 * before the simulator prices them. */
const char *const llmsim_run_stack_names[] = {"core", "megatron-2021", "megatron-2022", "llama3",
					      "mcore-te", "torchtitan", "deepspeed", NULL};
const char *const llmsim_run_precision_names[] = {
	[LLMSIM_RUN_PREC_BF16] = "bf16", [LLMSIM_RUN_PREC_FP8_DELAYED] = "fp8-delayed",
	[LLMSIM_RUN_PREC_FP8_CURRENT] = "fp8-current", [LLMSIM_RUN_PREC_MXFP8] = "mxfp8",
	[LLMSIM_RUN_PREC_NVFP4] = "nvfp4", [LLMSIM_RUN_PREC_COUNT] = NULL};
_Static_assert(LLMSIM_RUN_PREC_COUNT == 5, "precision names");
const char *const llmsim_run_recompute_module_names[] = {
	"core_attn", "mlp", "moe_act", "mla_up_proj", "layernorm", "moe", "shared_experts", NULL};
const char *const llmsim_run_recompute_method_names[] = {"uniform", "block", NULL};
const char *const llmsim_run_fsdp_names[] = {"none", "megatron", "fsdp2", NULL};
const char *const llmsim_run_moe_dispatch_names[] = {"allgather", "alltoall", "deepep", NULL};
const char *const llmsim_run_tp_overlap_names[] = {"none", "bulk", "userbuffers", NULL};
const char *const llmsim_run_cp_comm_names[] = {"p2p", "a2a", "a2a+p2p", NULL};
/* recompute: the simulator's three, and modules (recompute_modules) */
const char *const llmsim_run_recompute_kind_names[] = {"none", "selective", "full", "modules",
						     NULL};
static int name_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

int llmsim_run_err_at(struct llmsim_err *err, const char *path, const struct llmsim_ynode *map,
		      const char *key, const char *fmt, ...)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	char msg[LLMSIM_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v ? v->line : map->line,
				 v ? v->col : map->col, "%s", msg);
}

/* recompute_modules: a list of Megatron's names, or one "a,b" string. */
static int recompute_modules(const struct llmsim_ynode *v, const char *path, int *mask,
			     struct llmsim_err *err)
{
	*mask = 0;
	size_t n = v->kind == LLMSIM_Y_SEQ ? v->n : 1;
	for (size_t i = 0; i < n; i++) {
		const struct llmsim_ynode *x = v->kind == LLMSIM_Y_SEQ ? v->vals[i] : v;
		if (x->kind != LLMSIM_Y_SCALAR)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, x->line, x->col,
						 "'recompute_modules' must be a list of names");
		for (const char *p = x->scalar; *p;) {
			size_t len = strcspn(p, ",");
			char name[32];
			snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : 0), p);
			int k = name_index(llmsim_run_recompute_module_names, name);
			if (k < 0)
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, x->line, x->col,
							 "'recompute_modules': unknown module '%.*s' "
							 "(core_attn, mlp, moe_act, mla_up_proj, layernorm, "
							 "moe, shared_experts)", (int)len, p);
			*mask |= 1 << k;
			p += len + (p[len] == ',');
		}
	}
	return 0;
}

int llmsim_run_stack_opts(const struct llmsim_ynode *map, const char *path,
			  const struct raw_run *r, struct llmsim_run_entry *e,
			  struct llmsim_err *err)
{
	struct llmsim_train_cfg *c = &e->cfg;
	struct llmsim_run_stack_opts *o = &e->opts;
	o->stack = r->stack, o->precision = r->precision, o->recompute_method = r->recompute_method;
	o->recompute_num_layers = r->recompute_num_layers, o->offload_activations = r->offload_activations;
	o->fsdp = r->fsdp, o->moe_dispatch = r->moe_dispatch, o->moe_overlap = r->moe_overlap;
	o->tp_overlap = r->tp_overlap, o->cp_comm = r->cp_comm, o->recompute_modules = -1;

	/* the stack's file (hw/stacks): its program, recipe, FSDP kind,
	 * allowances and communication (llmsim_stack_apply); the row's own
	 * fields below override it as the run's command line did */
	c->sequence_parallel = r->sequence_parallel;
	if (r->stack >= 0) {
		struct llmsim_stack_def sd;
		struct llmsim_err se = {0};
		if (llmsim_stack_load(llmsim_run_stack_names[r->stack], &sd, &se))
			return llmsim_run_err_at(err, path, map, "stack", "stack %s: %s",
						 llmsim_run_stack_names[r->stack], se.msg);
		llmsim_stack_apply(&sd, c);
	}
	if (r->recipe >= 0)
		c->recipe = r->recipe;

	/* fp8 is Megatron's and TE's default recipe, delayed scaling */
	llmsim_train_cfg_precision(c, r->dtype == 1 ? LLMSIM_PREC_FP8_DELAYED : LLMSIM_PREC_BF16);
	if (r->precision >= 0) {
		int bf16 = r->precision == LLMSIM_RUN_PREC_BF16;
		if (r->dtype >= 0 && bf16 != (r->dtype == 0))
			return llmsim_run_err_at(err, path, map, "precision", "'precision' %s disagrees with 'dtype' %s",
				  llmsim_run_precision_names[r->precision], llmsim_run_dtype_names[r->dtype]);
		llmsim_train_cfg_precision(c, (enum llmsim_precision_recipe)llmsim_precision_parse(
						      llmsim_run_precision_names[r->precision]));
		snprintf(e->precision, sizeof e->precision, "%s",
			 llmsim_run_precision_names[r->precision]);
	} else {
		snprintf(e->precision, sizeof e->precision, "%s", r->dtype == 1 ? "fp8" : "bf16");
	}

	int kind = r->recompute >= 0 ? r->recompute : 0;
	const struct llmsim_ynode *mods = llmsim_ymap_get(map, "recompute_modules");
	if (mods) {
		int rc = recompute_modules(mods, path, &o->recompute_modules, err);
		if (rc)
			return rc;
		if (r->recompute < 0)
			kind = LLMSIM_RUN_RECOMP_MODULES;
		else if (kind != LLMSIM_RUN_RECOMP_MODULES)
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, mods->line, mods->col,
						 "'recompute_modules' needs 'recompute: modules'");
	} else if (kind == LLMSIM_RUN_RECOMP_MODULES) {
		return llmsim_run_err_at(err, path, map, "recompute", "'recompute: modules' needs 'recompute_modules'");
	}
	c->recompute = (enum llmsim_recompute)name_index(llmsim_recompute_names,
							 llmsim_run_recompute_kind_names[kind]);
	if (kind == LLMSIM_RUN_RECOMP_MODULES) /* the names are Megatron's, in its order */
		c->recompute_modules = (unsigned)o->recompute_modules;
	if (kind == LLMSIM_RUN_RECOMP_MODULES && o->recompute_modules == 1 << LLMSIM_RM_CORE_ATTN)
		c->recompute = LLMSIM_RECOMP_SELECTIVE; /* the same thing, as the 2022 stack names it */
	if ((r->recompute_method >= 0 || r->recompute_num_layers >= 0) &&
	    c->recompute != LLMSIM_RECOMP_FULL)
		return llmsim_run_err_at(err, path, map, r->recompute_method >= 0 ? "recompute_method"
								  : "recompute_num_layers",
			  "'%s' needs 'recompute: full'",
			  r->recompute_method >= 0 ? "recompute_method" : "recompute_num_layers");
	if (r->recompute_method >= 0)
		c->recompute_method = (enum llmsim_recompute_method)name_index(
			llmsim_recompute_method_names, llmsim_run_recompute_method_names[r->recompute_method]);
	if (r->recompute_num_layers >= 0)
		c->recompute_layers = r->recompute_num_layers;

	if (r->offload_activations > 1)
		return llmsim_run_err_at(err, path, map, "offload_activations",
			  "'offload_activations' must be a share from 0 to 1, got %g",
			  r->offload_activations);
	if (r->offload_activations > 0)
		c->offload_activations = r->offload_activations;

	c->zero = r->zero >= 0 ? r->zero : 0;
	if (r->fsdp >= 0)
		c->fsdp = (enum llmsim_fsdp)name_index(llmsim_fsdp_names, llmsim_run_fsdp_names[r->fsdp]);
	if (r->fsdp > 0 && r->zero < 0)
		/* parameters, gradients and optimizer sharded; under a pipeline the
		 * parameters stay gathered from forward to backward (torchtitan does
		 * not reshard after forward with PP, as Meta's FSDP of suite l24):
		 * zero 2 */
		c->zero = c->pp > 1 ? 2 : 3;
	if (r->moe_dispatch >= 0)
		c->moe_dispatch = (enum llmsim_moe_dispatch)name_index(
			llmsim_moe_dispatch_names, llmsim_run_moe_dispatch_names[r->moe_dispatch]);
	if (r->moe_overlap >= 0)
		c->moe_overlap = r->moe_overlap;
	if (r->tp_overlap > 0 && c->tp == 1)
		return llmsim_run_err_at(err, path, map, "tp_overlap", "'tp_overlap: %s' needs tp > 1",
			  llmsim_run_tp_overlap_names[r->tp_overlap]);
	if (r->tp_overlap >= 0)
		c->tp_overlap = (enum llmsim_tp_overlap)r->tp_overlap; /* the same order */
	if (r->cp_comm >= 0 && c->cp == 1)
		return llmsim_run_err_at(err, path, map, "cp_comm", "'cp_comm: %s' needs cp > 1",
			  llmsim_run_cp_comm_names[r->cp_comm]);
	if (r->cp_comm >= 0)
		c->cp_comm = (enum llmsim_cp_comm)r->cp_comm; /* the same order */
	return 0;
}
