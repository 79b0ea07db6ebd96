/* downward_include.c - the control of upward_include.c: a file of the sim
 * layer including parts below it and its own compiles. */
#include "hw/gpu.h"
#include "models/model.h"
#include "sim/graph.h"

int layering_downward_include(void);
int layering_downward_include(void)
{
	return (int)sizeof(struct llmsim_graph_cfg) + (int)sizeof(struct llmsim_gpu);
}
