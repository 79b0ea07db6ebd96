/* report_names.c - short names of configurations, for tables and pictures. */
#include "report.h"

#include <stdio.h>

void llmsim_report_train_name(const struct llmsim_train_cfg *c, char *buf, size_t size)
{
	static const char *const rc[] = {"", " sel", " full"};
	char ep[16] = "", cp[16] = "", chunks[16] = "";
	if (c->ep > 1)
		snprintf(ep, sizeof ep, " ep%d", c->ep);
	if (c->cp > 1)
		snprintf(cp, sizeof cp, " cp%d", c->cp);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		snprintf(chunks, sizeof chunks, " v%d", c->chunks);
	snprintf(buf, size, "tp%d pp%d dp%d%s%s z%d mb%d%s%s", c->tp, c->pp, c->dp, cp, ep,
		 c->zero, c->micro_batch, chunks,
		 (unsigned)c->recompute < 3 ? rc[c->recompute] : "");
}

void llmsim_report_serve_name(const struct llmsim_plan_serve_row *r, char *buf, size_t size)
{
	char pp[16] = "", ep[16] = "";
	if (r->pp > 1)
		snprintf(pp, sizeof pp, " pp%d", r->pp);
	if (r->ep > 1)
		snprintf(ep, sizeof ep, " ep%d", r->ep);
	snprintf(buf, size, "%dx tp%d%s%s %s/%s b%lld", r->replicas, r->tp, pp, ep,
		 llmsim_dtype_name(r->weight_dtype), llmsim_dtype_name(r->kv_dtype),
		 (long long)r->batch);
}
