/* sqlite_open.c - opening llmsim's SQLite files (see sqlite_open.h). */
#include "sqlite_open.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* One line for a failed open or check. */
static int fail(struct llmsim_err *err, const char *path, const char *noun, sqlite3 *db, int rc,
		const char *detail)
{
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
		return llmsim_err_set(err, LLMSIM_EDB, "%s: not %s (not an SQLite file)", path, noun);
	case SQLITE_CORRUPT:
		return llmsim_err_set(err, LLMSIM_EDB, "%s: database is corrupt or truncated%s%s%s",
				      path, detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
	default:
		return llmsim_err_set(err, LLMSIM_EDB, "%s: cannot open: %s", path,
				      db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	}
}

/* PRAGMA quick_check: SQLITE_OK, or the failing status (msg filled with
 * the first problem it names when the check itself ran). */
static int quick_check(sqlite3 *db, char *msg, size_t size)
{
	sqlite3_stmt *st = NULL;
	msg[0] = 0;
	int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const char *r = (const char *)sqlite3_column_text(st, 0);
			if (r && !strcmp(r, "ok")) {
				rc = SQLITE_OK;
			} else {
				/* the first problem, on one line */
				snprintf(msg, size, "%s", r ? r : "?");
				if (!strncmp(msg, "*** in database main ***", 24))
					memmove(msg, msg + 24, strlen(msg + 24) + 1);
				for (char *c = msg; *c; c++)
					if (*c == '\n' || *c == '\r')
						*c = ' ';
				memmove(msg, msg + strspn(msg, " "), strlen(msg + strspn(msg, " ")) + 1);
				rc = SQLITE_CORRUPT;
			}
		} else if (rc == SQLITE_DONE) {
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

static int open_one(const char *path, int flags, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, flags, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_extended_result_codes(*db, 1);
		sqlite3_busy_timeout(*db, 10000);
	}
	return rc;
}

/* A killed writer's hot rollback journal: roll it back, the one write a
 * reader of such a file needs (SQLite does it on the first read of a
 * read-write connection). 0 when done. */
static int roll_back_journal(const char *path)
{
	sqlite3 *w = NULL;
	int rc = open_one(path, SQLITE_OPEN_READWRITE, &w);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(w, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	sqlite3_close(w);
	return rc;
}

int llmsim_sqlite_open(const char *path, enum llmsim_sqlite_mode mode, const char *noun,
		       sqlite3 **out, struct llmsim_err *err)
{
	struct stat sb;
	*out = NULL;
	if (mode != LLMSIM_SQLITE_CREATE && stat(path, &sb) != 0)
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s: no such file", path);
	int flags = mode == LLMSIM_SQLITE_READ ? SQLITE_OPEN_READONLY
		    : mode == LLMSIM_SQLITE_WRITE ? SQLITE_OPEN_READWRITE
						  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	char msg[200] = "";
	sqlite3 *db = NULL;
	int rc = open_one(path, flags, &db);
	if (rc == SQLITE_OK)
		rc = quick_check(db, msg, sizeof msg);
	if ((rc & 0xff) == SQLITE_READONLY && mode == LLMSIM_SQLITE_READ) {
		/* a hot journal: roll it back and look again */
		sqlite3_close(db);
		db = NULL;
		if (roll_back_journal(path) != SQLITE_OK)
			return llmsim_err_set(err, LLMSIM_EDB,
					      "%s: a writer was killed half-way and left its journal "
					      "(%s-journal), which only a writable file can roll back",
					      path, path);
		rc = open_one(path, flags, &db);
		if (rc == SQLITE_OK)
			rc = quick_check(db, msg, sizeof msg);
	}
	if (rc != SQLITE_OK) {
		fail(err, path, noun, db, rc, msg);
		sqlite3_close(db);
		return LLMSIM_EDB;
	}
	if (mode != LLMSIM_SQLITE_READ) {
		/* WAL for writers; where the file system cannot share memory (some
		 * network file systems) SQLite keeps the rollback journal, which is
		 * atomic too, so the answer is not an error */
		sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
	}
	sqlite3_extended_result_codes(db, 0); /* callers compare primary codes */
	*out = db;
	return 0;
}
