/* upward_include.c - a file of the sim layer that includes a part above
 * it (sim/train/): compiled with llmsim_sim's include path, it must fail
 * (tests/layering/CMakeLists.txt). */
#include "sim/train/train.h"

int layering_upward_include(void);
int layering_upward_include(void)
{
	return (int)sizeof(struct llmsim_train_cfg);
}
