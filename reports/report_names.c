/* report_names.c - short names of configurations, for tables and pictures. */
#include "report.h"

#include <stdio.h>

/* Every field that tells two configurations of one plan apart: the layout,
 * ZeRO, micro-batch, chunks, recomputation, attention, offload (+DPU) and
 * LoRA (the plan's batch, seq, dtype and recipe are the same for all). */
void llmsim_report_train_name(const struct llmsim_train_cfg *c, char *buf, size_t size)
{
	static const char *const rc[] = {"", " sel", " full"};
	static const char *const attn[] = {[LLMSIM_ATTN_NAIVE] = " naive",
					   [LLMSIM_ATTN_FLASH2] = " fa2",
					   [LLMSIM_ATTN_FLASH3] = " fa3"};
	static const char *const off[] = {"", " off-opt", " off-params"};
	char ep[16] = "", cp[16] = "", chunks[16] = "", lora[24] = "";
	if (c->ep > 1)
		snprintf(ep, sizeof ep, " ep%d", c->ep);
	if (c->cp > 1)
		snprintf(cp, sizeof cp, " cp%d", c->cp);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		snprintf(chunks, sizeof chunks, " v%d", c->chunks);
	if (c->lora_rank)
		snprintf(lora, sizeof lora, " lora%d", c->lora_rank);
	const char *at = (unsigned)c->attn < sizeof attn / sizeof attn[0] && attn[c->attn]
				 ? attn[c->attn] : "";
	snprintf(buf, size, "tp%d pp%d dp%d%s%s z%d mb%d%s%s%s%s%s%s", c->tp, c->pp, c->dp, cp,
		 ep, c->zero, c->micro_batch, chunks,
		 (unsigned)c->recompute < 3 ? rc[c->recompute] : "", at,
		 (unsigned)c->offload < 3 ? off[c->offload] : "", c->dpu ? "+dpu" : "", lora);
}

void llmsim_report_serve_name(const struct llmsim_plan_serve_row *r, char *buf, size_t size)
{
	char lay[64];
	llmsim_plan_serve_layout(r, lay, sizeof lay);
	snprintf(buf, size, "%s %s/%s s%lld", lay, llmsim_dtype_name(r->weight_dtype),
		 llmsim_dtype_name(r->kv_dtype), (long long)r->max_batch);
}
