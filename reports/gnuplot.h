/*
 * gnuplot.h - run the real gnuplot program on a script and check what it
 * wrote. Pictures are PNG through the pngcairo terminal, or the libgd png
 * terminal where gnuplot was built without cairo.
 */
#ifndef LLMSIM_REPORT_GNUPLOT_H
#define LLMSIM_REPORT_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>
#include "base/err.h"

/* The one line the report prints when gnuplot is missing. */
#define LLMSIM_GNUPLOT_MISSING "gnuplot not found in PATH (apt-get install gnuplot-nox)"

struct llmsim_gnuplot {
	char path[4096];        /* absolute path of the gnuplot executable */
	int cairo;              /* 1: pngcairo terminal works; 0: use png (gd) */
};

/* Find gnuplot in $PATH (an executable regular file) and probe its PNG
 * terminal. Returns 0, or LLMSIM_ENOENT with LLMSIM_GNUPLOT_MISSING as the
 * message, or LLMSIM_EUNSUPPORTED when it has neither PNG terminal. */
int llmsim_gnuplot_open(struct llmsim_gnuplot *gp, struct llmsim_err *err);

/* The `set terminal ...` line for a picture of width x height pixels,
 * written to f (with the font and the options both terminals share). */
void llmsim_gnuplot_terminal(const struct llmsim_gnuplot *gp, FILE *f, int width, int height);

/* Write s to f as a gnuplot single-quoted string ('' stands for '). */
void llmsim_gnuplot_quote(FILE *f, const char *s);

/* Run gnuplot on script (stderr kept in log_path), wait, and check that it
 * exited 0 and that png_path is a PNG of exactly width x height. On
 * failure the message carries gnuplot's first error line. */
int llmsim_gnuplot_run(const struct llmsim_gnuplot *gp, const char *script,
		       const char *log_path, const char *png_path, int width, int height,
		       struct llmsim_err *err);

#endif
