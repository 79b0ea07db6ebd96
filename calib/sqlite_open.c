/* sqlite_open.c - opening llmsim's SQLite files (see sqlite_open.h). */
#include "sqlite_open.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* PRAGMA integrity_check: every page, and every index entry against its
 * table's row (quick_check, which llmsim ran before, skips the latter and
 * so passed damaged indexes). SQLITE_OK, or the failing status (msg
 * filled with the first problem it names when the check itself ran). */
static int integrity_check(sqlite3 *db, char *msg, size_t size)
{
	sqlite3_stmt *st = NULL;
	msg[0] = 0;
	int rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &st, NULL);
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

/* The schema's shape: each name of `tables` the file holds is an ordinary
 * table, and no trigger exists. 0, or LLMSIM_EDB with the message. */
static int check_shape(sqlite3 *db, const char *path, const char *noun,
		       const char *const *tables, struct llmsim_err *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT type, name, coalesce(sql, '') FROM main.sqlite_master",
			       -1, &st, NULL) != SQLITE_OK)
		return llmsim_err_set(err, LLMSIM_EDB, "%s: cannot read the schema: %s", path,
				      sqlite3_errmsg(db));
	int rc = 0, r;
	while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *sql = (const char *)sqlite3_column_text(st, 2);
		type = type ? type : "";
		name = name ? name : "";
		if (!strcmp(type, "trigger")) {
			rc = llmsim_err_set(err, LLMSIM_EDB,
					    "%s: holds a trigger ('%.64s'), which llmsim never makes "
					    "(not %s?): refused, a trigger runs on every write",
					    path, name, noun);
			break;
		}
		int ours = 0;
		for (int i = 0; tables && tables[i] && !ours; i++)
			ours = !sqlite3_stricmp(name, tables[i]);
		if (!ours)
			continue;
		if (strcmp(type, "table"))
			rc = llmsim_err_set(err, LLMSIM_EDB, "%s: '%s' is a %.16s, not a table (not %s?)",
					    path, name, type, noun);
		else if (sql && !sqlite3_strnicmp(sql, "CREATE VIRTUAL", 14))
			rc = llmsim_err_set(err, LLMSIM_EDB,
					    "%s: '%s' is a virtual table, not a table (not %s?)", path,
					    name, noun);
	}
	if (!rc && r != SQLITE_DONE)
		rc = llmsim_err_set(err, LLMSIM_EDB, "%s: cannot read the schema: %s", path,
				    sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc;
}

static int open_one(const char *path, int flags, sqlite3 **db)
{
	int rc = sqlite3_open_v2(path, db, flags, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_extended_result_codes(*db, 1);
		sqlite3_busy_timeout(*db, 10000);
		/* the schema's SQL runs no function with side effects, and SQL
		 * cannot rewrite the schema table behind SQLite's back */
		sqlite3_db_config(*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
		sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
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

/* Whether path is an SQLite file in WAL mode with no -wal beside it (or
 * an empty one): everything committed is in the file itself, and it can
 * be read as an immutable file, which needs no -shm and writes nothing. */
static int wal_at_rest(const char *path)
{
	unsigned char h[20];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n = fread(h, 1, sizeof h, f);
	fclose(f);
	/* either version byte of 2 makes SQLite open the file in WAL mode,
	 * which would leave a -wal and -shm beside it */
	if (n < sizeof h || memcmp(h, "SQLite format 3", 16) || (h[18] != 2 && h[19] != 2))
		return 0;
	char wal[4200];
	struct stat sb;
	if ((size_t)snprintf(wal, sizeof wal, "%s-wal", path) >= sizeof wal)
		return 0;
	return stat(wal, &sb) != 0 || sb.st_size == 0;
}

/* "file:PATH?immutable=1" with PATH percent-encoded; 0, or -1 when it
 * does not fit. */
static int immutable_uri(const char *path, char *buf, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = (size_t)snprintf(buf, size, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (n + 4 >= size)
			return -1;
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    strchr("/-_.~", *c)) {
			buf[n++] = (char)*c;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[*c >> 4];
			buf[n++] = hex[*c & 15];
		}
	}
	return (size_t)snprintf(buf + n, size - n, "?immutable=1") < size - n ? 0 : -1;
}

/* A writer killed before its journal was whole leaves one that is not hot
 * (SQLite ignores it, and it stays beside the file). Under the write lock
 * (BEGIN IMMEDIATE rolls back a hot journal before it is granted, and no
 * other writer holds one), any journal there is such a leftover: remove it.
 * Where the lock is not granted, another writer is at work: leave it. */
static void remove_stale_journal(sqlite3 *db, const char *path)
{
	char j[4200];
	struct stat sb;
	if ((size_t)snprintf(j, sizeof j, "%s-journal", path) >= sizeof j || stat(j, &sb))
		return;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return;
	if (!stat(j, &sb))
		unlink(j);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

int llmsim_sqlite_open(const char *path, enum llmsim_sqlite_mode mode, const char *noun,
		       const char *const *tables, sqlite3 **out, struct llmsim_err *err)
{
	struct stat sb;
	*out = NULL;
	if (mode != LLMSIM_SQLITE_CREATE && stat(path, &sb) != 0)
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s: no such file", path);
	int flags = mode == LLMSIM_SQLITE_READ ? SQLITE_OPEN_READONLY
		    : mode == LLMSIM_SQLITE_WRITE ? SQLITE_OPEN_READWRITE
						  : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	const char *name = path;
	char uri[4400];
	if (mode == LLMSIM_SQLITE_READ && wal_at_rest(path) &&
	    !immutable_uri(path, uri, sizeof uri)) {
		name = uri;
		flags |= SQLITE_OPEN_URI;
	}
	char msg[200] = "";
	sqlite3 *db = NULL;
	int rc = open_one(name, flags, &db);
	if (rc == SQLITE_OK)
		rc = integrity_check(db, msg, sizeof msg);
	if ((rc & 0xff) == SQLITE_READONLY && mode == LLMSIM_SQLITE_READ) {
		/* a hot journal: roll it back and look again */
		sqlite3_close(db);
		db = NULL;
		if (roll_back_journal(path) != SQLITE_OK)
			return llmsim_err_set(err, LLMSIM_EDB,
					      "%s: a writer was killed half-way and left its journal "
					      "(%s-journal), which only a writable file can roll back",
					      path, path);
		rc = open_one(name, flags, &db);
		if (rc == SQLITE_OK)
			rc = integrity_check(db, msg, sizeof msg);
	}
	if (rc != SQLITE_OK) {
		fail(err, path, noun, db, rc, msg);
		sqlite3_close(db);
		return LLMSIM_EDB;
	}
	if ((rc = check_shape(db, path, noun, tables, err))) {
		sqlite3_close(db);
		return rc;
	}
	if (mode != LLMSIM_SQLITE_READ) {
		/* the rollback journal at rest (a WAL-mode file is switched back):
		 * SQLite keeps WAL only while another connection has the file
		 * open, and the next writer switches it then */
		sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
		remove_stale_journal(db, path);
	}
	sqlite3_extended_result_codes(db, 0); /* callers compare primary codes */
	*out = db;
	return 0;
}
