/*
 * fmt.h - human units for tables, and an aligned text table.
 *
 * Values are held in SI base units everywhere; these helpers scale them
 * only when printing: bytes in decimal units (GB = 1e9 B, as GPU datasheets
 * print them), times from ns to s, rates as TFLOP/s or TB/s.
 */
#ifndef LLMSIM_FMT_H
#define LLMSIM_FMT_H

#include <stddef.h>
#include <stdio.h>

#define LLMSIM_FMT_MAX 48

/* Each writes into buf (LLMSIM_FMT_MAX bytes) and returns buf. */
char *llmsim_fmt_bytes(char *buf, double bytes);        /* "141.0 GB" */
char *llmsim_fmt_time(char *buf, double s);             /* "3.21 ms" */
char *llmsim_fmt_flops(char *buf, double flops);        /* "1.23 TFLOP" */
char *llmsim_fmt_flops_rate(char *buf, double flops_per_s); /* "989.4 TFLOP/s" */
char *llmsim_fmt_bytes_rate(char *buf, double bytes_per_s);  /* "4.80 TB/s" */
char *llmsim_fmt_hz(char *buf, double hz);              /* "1.55 GHz" */
char *llmsim_fmt_count(char *buf, double n);            /* "70.55 G", "8.03 M" (G: 1e9, never B) */
char *llmsim_fmt_pct(char *buf, double fraction);       /* "41.2%" */

/* An aligned table: columns are right-aligned unless flagged left. */
#define LLMSIM_TABLE_MAX_COLS 24
struct llmsim_table {
	int ncols;
	const char *head[LLMSIM_TABLE_MAX_COLS];
	int left[LLMSIM_TABLE_MAX_COLS];
	int detail[LLMSIM_TABLE_MAX_COLS];
	int by_row;   /* each row one quantity: one unit per row, not per column */
	char **cells; /* rows * ncols strings, owned */
	size_t rows, cap;
};

/* Header names; a leading '<' in a name makes the column left-aligned, a
 * leading '~' (before or after '<') marks a detail column, the first left
 * out when the table is wider than the width limit; a '|' marks a table
 * whose rows are each one quantity (TTFT, TPOT across mean, p50, ...): one
 * unit per row then, not per column. */
void llmsim_table_init(struct llmsim_table *t, int ncols, const char *const *head);
/* Add one row of ncols cells (copied). */
void llmsim_table_row(struct llmsim_table *t, const char *const *cells);
/* Printf-style convenience: cells separated by '\t' in the formatted text. */
void llmsim_table_rowf(struct llmsim_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print the table. A column whose cells are "NUMBER UNIT" of one family
 * (bytes, times, rates: the formatters above) in more than one unit is
 * first rewritten in the unit most of its cells have (the larger on a
 * tie): one unit per column.
 * Wider than the width limit (llmsim_table_set_width), a left-aligned
 * last column (a note) wraps its text in the room the others leave it (24
 * columns or more); else,
 * it leaves out detail columns from the right, then other columns from the
 * right (never the first), until it fits, and ends with one line saying
 * how many it left out ("(2 more columns: --wide)"). */
void llmsim_table_print(struct llmsim_table *t, FILE *f);
/* The width limit of every table printed after it, in characters; 0: no
 * limit (--wide). The default is LLMSIM_TABLE_WIDTH. */
#define LLMSIM_TABLE_WIDTH 100
void llmsim_table_set_width(int cols);
int llmsim_table_width(void); /* the limit in force (0: none) */
void llmsim_table_release(struct llmsim_table *t);

#endif
