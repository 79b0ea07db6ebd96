/*
 * sqlite_open.h - how llmsim opens its SQLite files (the calibration store,
 * calib/store.c, and trace tables, calib/trace/trace_db.c), in one place:
 *
 *  - A reader opens read-only: it never creates, migrates or otherwise
 *    writes the file, so a read-only file (or one on a read-only disk)
 *    can be read.
 *  - A writer switches the file to SQLite's write-ahead log (WAL), so
 *    readers are not blocked while it writes, and a writer killed half-way
 *    leaves only uncommitted frames that every later reader ignores.
 *  - A file in the older rollback-journal mode that a killed writer left
 *    with a hot journal is rolled back once (that needs write access, as it
 *    did for SQLite itself); a reader that cannot is told so in one line.
 *  - Every open runs PRAGMA quick_check: a corrupted file is reported in
 *    one line ("x.db: database is corrupt (...)") before anything reads
 *    from or writes into it.
 *
 * Only calib/ includes this (it brings sqlite3.h).
 */
#ifndef LLMSIM_SQLITE_OPEN_H
#define LLMSIM_SQLITE_OPEN_H

#include <sqlite3.h>
#include "base/err.h"

enum llmsim_sqlite_mode {
	LLMSIM_SQLITE_READ,   /* existing file, read-only */
	LLMSIM_SQLITE_WRITE,  /* existing file, read-write */
	LLMSIM_SQLITE_CREATE, /* read-write, created when absent (":memory:" too) */
};

/* Open path in mode into *db (close it with sqlite3_close). `noun` names
 * what the file should be, for "x.db: not a calibration database (not an
 * SQLite file)". Errors, each one line naming the file, come back as
 * LLMSIM_ENOENT (no such file) or LLMSIM_EDB (not SQLite, corrupt, a
 * journal that cannot be rolled back, cannot open); *db is NULL then. */
int llmsim_sqlite_open(const char *path, enum llmsim_sqlite_mode mode, const char *noun,
		       sqlite3 **db, struct llmsim_err *err);

#endif
