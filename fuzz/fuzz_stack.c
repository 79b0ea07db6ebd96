/*
 * fuzz_stack.c - libFuzzer target for the stack loader (sim/train/stack.h):
 * the input is read as a stack file (llmsim_stack_load_buf, the code path of
 * llmsim_stack_load). A load that succeeds must keep the loader's promises
 * (a name, enums in range, fractions below 1, no TP overlap without TP and
 * sequence parallelism, known modules only) and apply to a configuration;
 * a failure must leave a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/train/stack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct llmsim_stack_def s;
	struct llmsim_err err = {0};
	if (llmsim_stack_load_buf((const char *)data, size, "fuzz.yaml", &s, &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	if (!s.name[0] || (unsigned)s.program >= LLMSIM_STACK_COUNT ||
	    (unsigned)s.recipe >= LLMSIM_RECIPE_COUNT || (unsigned)s.fsdp >= LLMSIM_FSDP_COUNT ||
	    (unsigned)s.emit >= LLMSIM_EMIT_COUNT || s.tp_overlap < 0 || s.tp_overlap > 2 ||
	    s.modules >> LLMSIM_RM_COUNT || s.features >> LLMSIM_FEAT_COUNT ||
	    s.nrefuse < 0 || s.nrefuse > LLMSIM_STACK_MAX_REFUSE || !(s.allow.error_frac < 1) ||
	    !(s.allow.fragmentation_frac < 1) || !(s.allow.context_bytes >= 0))
		abort();
	if (s.tp_overlap && !(s.features & 1u << LLMSIM_FEAT_TP && s.features & 1u << LLMSIM_FEAT_SP))
		abort();
	struct llmsim_train_cfg c;
	llmsim_train_cfg_init(&c);
	llmsim_stack_apply(&s, &c);
	if (strcmp(c.stack_name, s.name))
		abort();
	return 0;
}
