/*
 * sqlite_open.h - how llmsim opens its SQLite files (the calibration store,
 * calib/store.c, and trace tables, calib/trace/trace_db.c), in one place:
 *
 *  - At rest a file llmsim wrote is in SQLite's rollback-journal mode
 *    (journal_mode=DELETE): a writer switches a file it finds in
 *    write-ahead-log (WAL) mode back. Reading such a file needs nothing
 *    beside it, so a read-only file, a folder the reader cannot write, a
 *    read-only disk and a folder shared between users all work. A writer
 *    killed half-way leaves a hot journal; the next open rolls it back,
 *    so the file holds what it held before that write. A journal killed
 *    before it was whole (not hot: SQLite ignores it) is removed by the
 *    next writer.
 *  - A reader opens read-only and writes nothing next to the file: no
 *    -wal, -shm or -journal is left behind. A WAL-mode file (an older
 *    llmsim wrote them) with no -wal beside it is read as an immutable
 *    file; the one write a reader may need is rolling back a hot journal
 *    (SQLite does that on a read-write connection), and a reader that
 *    cannot is told so in one line.
 *  - Every open checks, before anything reads from or writes into the
 *    file: PRAGMA integrity_check (every page, every index against its
 *    table), then the schema's shape: the tables the caller names, where
 *    present, are ordinary tables (not views, not virtual tables), and
 *    the file holds no trigger (llmsim makes none). A crafted view (an
 *    endless recursive query) or trigger never runs. Each failure is one
 *    line naming the file, and nothing is written.
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
 * SQLite file)"; `tables` (NULL-terminated, or NULL) names the tables that
 * must be ordinary tables where the file has them. Errors, each one line
 * naming the file, come back as LLMSIM_ENOENT (no such file) or LLMSIM_EDB
 * (not SQLite, corrupt, a view or trigger where none belongs, a journal
 * that cannot be rolled back, cannot open); *db is NULL then. */
int llmsim_sqlite_open(const char *path, enum llmsim_sqlite_mode mode, const char *noun,
		       const char *const *tables, sqlite3 **db, struct llmsim_err *err);

#endif
