/* downward_call.c - the control of upward_call.c: the same program
 * calling the sim layer itself (llmsim_predict) links with its link line. */
#include "sim/sim.h"

int main(void)
{
	struct llmsim_pred p;
	return llmsim_predict(0, 0, &p, 0) == 0;
}
