/*
 * report_gather.h - the results `llmsim report` draws, computed (reports/
 * simulate nothing: see reports/report.h).
 */
#ifndef LLMSIM_CLI_REPORT_GATHER_H
#define LLMSIM_CLI_REPORT_GATHER_H

#include "reports/report.h"

/* Fill d (its gpu, model and cfg set by the caller): the measured cases,
 * the training or serving results, the roofline's layer ops. Returns 0, or
 * an error of the simulators or the store (a configuration the user named
 * that is invalid; a plan or a request that does not fit is noted, not an
 * error). Release with cli_report_data_release. */
int cli_report_gather(struct llmsim_report_data *d, struct llmsim_err *err);
void cli_report_data_release(struct llmsim_report_data *d);

#endif
