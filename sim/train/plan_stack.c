/*
 * plan_stack.c - the planner's search as the chosen stack launches it
 * (plan.h, stack.h): the base configuration the stack runs, and the filter
 * that keeps only layouts it can launch. Kept apart from the search loops
 * (plan.c) so that the hot path changes in one place.
 */
#include <stdio.h>

#include "plan_int.h"

#define HAS(req, f) ((req)->stack->features & (1u << (f)))

void plan_stack_base(const struct llmsim_plan_req *req, struct llmsim_train_cfg *c)
{
	if (!req->stack)
		return;
	llmsim_stack_apply(req->stack, c);
	c->recipe = req->recipe; /* the request's: the CLI passes the stack's unless told */
	/* a stack without Megatron's sequence parallelism runs TP without it
	 * (DeepSpeed's AutoTP) */
	c->sequence_parallel = HAS(req, LLMSIM_FEAT_SP) ? 1 : 0;
}

int plan_stack_layout_ok(const struct llmsim_plan_req *req, const struct llmsim_train_cfg *c)
{
	if (!req->stack)
		return 1;
	return (c->tp == 1 || HAS(req, LLMSIM_FEAT_TP)) && (c->pp == 1 || HAS(req, LLMSIM_FEAT_PP)) &&
	       (c->cp == 1 || HAS(req, LLMSIM_FEAT_CP)) && (c->ep == 1 || HAS(req, LLMSIM_FEAT_EP));
}

int plan_stack_ok(const struct llmsim_plan_req *req, const struct llmsim_model *m,
		  const struct llmsim_train_cfg *c)
{
	return !req->stack || !llmsim_stack_launches(req->stack, m, c, NULL, 0, NULL);
}

int plan_stack_offloads(const struct llmsim_plan_req *req, char *note, size_t n)
{
	if (!req->stack || HAS(req, LLMSIM_FEAT_OFFLOAD_OPTIMIZER) ||
	    HAS(req, LLMSIM_FEAT_OFFLOAD_PARAMS))
		return LLMSIM_OFFLOAD_COUNT;
	snprintf(note, n, "the %s stack offloads no model state", req->stack->name);
	return 1;
}

int plan_stack_check_req(const struct llmsim_plan_req *req, struct llmsim_err *err)
{
	if (!req->stack)
		return 0;
	/* what the request pins, each a feature the stack must have */
	const struct {
		int on;
		enum llmsim_feature f;
	} pins[] = {
		{req->tp > 1, LLMSIM_FEAT_TP}, {req->pp > 1, LLMSIM_FEAT_PP},
		{req->cp > 1, LLMSIM_FEAT_CP}, {req->ep > 1, LLMSIM_FEAT_EP},
		{req->dtype == LLMSIM_DT_FP8, LLMSIM_FEAT_FP8}, {req->lora_rank > 0, LLMSIM_FEAT_LORA},
	};
	for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++)
		if (pins[i].on && !HAS(req, pins[i].f)) {
			char why[LLMSIM_ERR_MSG_MAX];
			llmsim_stack_lacks(req->stack, pins[i].f, why, sizeof why);
			return llmsim_err_set(err, LLMSIM_EINVAL, "%s", why);
		}
	return 0;
}

int plan_recompute_choices(const struct llmsim_plan_req *req, const struct llmsim_model *m,
			   const struct llmsim_gpu *gpu, struct plan_recompute *rec)
{
	int n = 0;
	rec[n++] = (struct plan_recompute){LLMSIM_RECOMP_NONE, 0, 0};
	rec[n++] = (struct plan_recompute){LLMSIM_RECOMP_SELECTIVE, 0, 0};
	rec[n++] = (struct plan_recompute){LLMSIM_RECOMP_FULL, 0, 0};
	if (req->stack && HAS(req, LLMSIM_FEAT_RECOMPUTE_MODULES) && m->has_moe &&
	    m->moe.experts > 1 && (req->stack->modules & 1u << LLMSIM_RM_MOE_ACT)) {
		unsigned mods = 1u << LLMSIM_RM_MOE_ACT;
		if (m->has_mla && (req->stack->modules & 1u << LLMSIM_RM_MLA_UP_PROJ))
			mods |= 1u << LLMSIM_RM_MLA_UP_PROJ;
		rec[n++] = (struct plan_recompute){LLMSIM_RECOMP_MODULES, mods, 0};
	}
	if (req->stack && HAS(req, LLMSIM_FEAT_OFFLOAD_ACTIVATIONS) && gpu->has_host &&
	    !req->no_offload)
		rec[n++] = (struct plan_recompute){LLMSIM_RECOMP_NONE, 0, 1.0};
	return n;
}
