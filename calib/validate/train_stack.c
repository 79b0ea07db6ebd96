/*
 * train_stack.c - the fields of a run that say how its software stack ran
 * it (issue 21's shared names: stack, precision recipe, recompute modules,
 * method and layers, activation offload, FSDP, MoE dispatch and overlap,
 * TP and CP communication). Each is kept as given (e->opts) and priced as
 * the nearest thing the simulator has; what it does not price yet is said
 * in e->not_modelled, so that a validation row shows what it stands on.
 * As the simulator learns a field, its line here turns from a note into a
 * setting of e->cfg.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
/* Appends "; what" to e->not_modelled. */
static void note(struct llmsim_run_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct llmsim_run_entry *e, const char *fmt, ...)
{
	size_t len = strlen(e->not_modelled);
	if (len && len + 2 < sizeof e->not_modelled) {
		strcpy(e->not_modelled + len, "; ");
		len += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->not_modelled + len, sizeof e->not_modelled - len, fmt, ap);
	va_end(ap);
}

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

static void modules_str(char *buf, size_t n, int mask)
{
	buf[0] = 0;
	for (int k = 0; llmsim_run_recompute_module_names[k]; k++)
		if (mask & 1 << k)
			snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? "," : "",
				 llmsim_run_recompute_module_names[k]);
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

	c->recipe = r->recipe >= 0 ? r->recipe : LLMSIM_RECIPE_MEGATRON;
	if (r->stack >= 0) {
		const char *name = llmsim_run_stack_names[r->stack];
		int k = name_index(llmsim_stack_names, name);
		if (k >= 0) {
			c->stack = (enum llmsim_stack)k;
		} else if (!strcmp(name, "llama3")) { /* today the llama3 recipe */
			if (r->recipe < 0)
				c->recipe = LLMSIM_RECIPE_LLAMA3;
		} else {
			note(e, "stack %s (priced as core)", name);
		}
	}

	c->dtype = r->dtype == 1 ? LLMSIM_DT_FP8 : LLMSIM_DT_BF16;
	if (r->precision >= 0) {
		int bf16 = r->precision == LLMSIM_RUN_PREC_BF16;
		if (r->dtype >= 0 && bf16 != (r->dtype == 0))
			return llmsim_run_err_at(err, path, map, "precision", "'precision' %s disagrees with 'dtype' %s",
				  llmsim_run_precision_names[r->precision], llmsim_run_dtype_names[r->dtype]);
		c->dtype = bf16 ? LLMSIM_DT_BF16 : LLMSIM_DT_FP8;
		if (!bf16) /* one fp8 GEMM type: no scaling recipe, casts or fp8 copies */
			note(e, "precision %s (priced as fp8 GEMMs)",
			     llmsim_run_precision_names[r->precision]);
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
	if (kind == LLMSIM_RUN_RECOMP_MODULES) {
		/* the simulator's selective is Megatron's core_attn module */
		int core = o->recompute_modules & 1;
		c->recompute = core ? LLMSIM_RECOMP_SELECTIVE : LLMSIM_RECOMP_NONE;
		if (o->recompute_modules != 1) {
			char m[128];
			modules_str(m, sizeof m, o->recompute_modules);
			note(e, "recompute_modules %s (priced as %s)", m, core ? "selective" : "none");
		}
	} else {
		c->recompute = (enum llmsim_recompute)name_index(
			llmsim_recompute_names, llmsim_run_recompute_kind_names[kind]);
	}
	if ((r->recompute_method >= 0 || r->recompute_num_layers >= 0) &&
	    c->recompute != LLMSIM_RECOMP_FULL)
		return llmsim_run_err_at(err, path, map, r->recompute_method >= 0 ? "recompute_method"
								  : "recompute_num_layers",
			  "'%s' needs 'recompute: full'",
			  r->recompute_method >= 0 ? "recompute_method" : "recompute_num_layers");
	/* uniform over groups of N layers still recomputes every layer; block
	 * recomputes N layers a stage */
	if (r->recompute_method == 1 && r->recompute_num_layers >= 0)
		note(e, "recompute_method block, %d layers (priced as every layer)",
		     r->recompute_num_layers);

	if (r->offload_activations > 1)
		return llmsim_run_err_at(err, path, map, "offload_activations",
			  "'offload_activations' must be a share from 0 to 1, got %g",
			  r->offload_activations);
	if (r->offload_activations > 0)
		note(e, "offload_activations %.3g (not priced)", r->offload_activations);

	c->zero = r->zero >= 0 ? r->zero : 0;
	if (r->fsdp > 0) {
		/* parameters, gradients and optimizer sharded; under a pipeline the
		 * parameters stay gathered from forward to backward (torchtitan does
		 * not reshard after forward with PP, as Meta's FSDP of suite l24),
		 * which is zero 2 here (the simulator has no ZeRO-3 with PP) */
		if (r->zero < 0)
			c->zero = c->pp > 1 ? 2 : 3;
		note(e, "fsdp %s (priced as zero %d)", llmsim_run_fsdp_names[r->fsdp], c->zero);
	}
	if (r->moe_dispatch >= 0)
		note(e, "moe_dispatch %s (not priced)", llmsim_run_moe_dispatch_names[r->moe_dispatch]);
	if (r->moe_overlap > 0)
		note(e, "moe_overlap on (not priced)");
	if (r->tp_overlap > 0 && c->tp == 1)
		return llmsim_run_err_at(err, path, map, "tp_overlap", "'tp_overlap: %s' needs tp > 1",
			  llmsim_run_tp_overlap_names[r->tp_overlap]);
	if (r->tp_overlap > 0)
		note(e, "tp_overlap %s (not priced)", llmsim_run_tp_overlap_names[r->tp_overlap]);
	if (r->cp_comm >= 0 && c->cp == 1)
		return llmsim_run_err_at(err, path, map, "cp_comm", "'cp_comm: %s' needs cp > 1",
			  llmsim_run_cp_comm_names[r->cp_comm]);
	if (r->cp_comm >= 0)
		note(e, "cp_comm %s (not priced)", llmsim_run_cp_comm_names[r->cp_comm]);
	return 0;
}

