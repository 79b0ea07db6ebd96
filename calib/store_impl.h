/*
 * store_impl.h - private to the calibration store (store*.c): the SQLite
 * handle, the table layout shared by the writer, the reader and the text
 * form, and small statement helpers. Nothing outside calib/store*.c
 * includes this file (it is the one place sqlite3.h enters llmsim_calib).
 */
#ifndef LLMSIM_STORE_IMPL_H
#define LLMSIM_STORE_IMPL_H

#include "sqlite_open.h"
#include "store.h"

struct llmsim_store {
	sqlite3 *db;
	char path[512];
	int version;	    /* schema version: the file's when read-only, else the current */
	int read_only;	    /* opened LLMSIM_STORE_READ */
	int64_t active_run; /* run inside an open transaction, 0 if none */
	int active_fit_data; /* the open run's operand data may enter a fit */
	int kernel_seq;	    /* order of kernels within the active case */
	int64_t kernel_case;
	sqlite3_stmt *ins_case, *ins_kernel, *ins_counter, *sel_case_run; /* cached */
};

/* Column types of the text form: integer, real, text. */
enum store_coltype { COL_INT, COL_REAL, COL_TEXT };

struct store_col {
	const char *name;
	enum store_coltype type;
	int since;		/* schema version that added the column */
	const char *v1_default; /* text-form value when an older dump lacks it */
};

enum store_table {
	TBL_DEVICES, TBL_RUNS, TBL_CASES, TBL_KERNELS, TBL_COUNTERS, TBL_STEPS, TBL_STEP_KERNELS,
	TBL_COUNT
};

struct store_table_info {
	const char *name;
	const struct store_col *cols;
	int ncols;
	const char *order_by; /* export order */
	int since;	      /* schema version that added the table */
	const char *temp_ddl; /* since > 1: an empty TEMP table standing in for it
			       * when an older file is read as it stands */
};

extern const struct store_table_info llmsim_sdb_tables[TBL_COUNT];

/* "path: <sqlite message>" into err; returns LLMSIM_EDB. */
int llmsim_sdb_err(struct llmsim_store *s, struct llmsim_err *err, const char *what);

/* Prepare sql or fail with a message. */
int llmsim_sdb_prepare(struct llmsim_store *s, const char *sql, sqlite3_stmt **st,
		       struct llmsim_err *err);

/* Run one or more statements without results. */
int llmsim_sdb_exec(struct llmsim_store *s, const char *sql, struct llmsim_err *err);

/* Bind a C string as text (never NULL). */
int llmsim_sdb_bind_text(sqlite3_stmt *st, int i, const char *v);

/* Copy column i of the current row into a fixed buffer ("" for NULL). */
void llmsim_sdb_col_text(sqlite3_stmt *st, int i, char *buf, size_t size);

/* Column i as a double, NaN for NULL. */
double llmsim_sdb_col_real(sqlite3_stmt *st, int i);

#endif
