/*
 * trace_db.c - the trace tables of an llmsim SQLite file: trace_meta,
 * trace_runs, trace_kernels, trace_memcpys, trace_ranges.
 *
 * The calibration store (calib/store.c) owns the measurement tables of the
 * same file format; these tables are separate and versioned on their own
 * (trace_meta.trace_schema_version). A run is written in one transaction,
 * so a writer killed half-way leaves the file as it was; files are opened
 * as calib/sqlite_open.h says (readers read-only and writing nothing,
 * the rollback journal at rest, every open checked: integrity, and the
 * trace tables are tables, no trigger). Every row read is checked like a line of the text
 * form (trace_check.c): the integers in range of their fields, then the
 * record and the run as a whole. Compiled into the injection library too:
 * it depends on base/ and calib/sqlite_open.c only.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bounds.h"
#include "calib/sqlite_open.h"

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS trace_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"INSERT OR IGNORE INTO trace_meta VALUES('trace_schema_version','1');"
	"CREATE TABLE IF NOT EXISTS trace_runs(id INTEGER PRIMARY KEY, started_at TEXT,"
	" host TEXT, command TEXT, device_name TEXT, device_sms INTEGER,"
	" device_count INTEGER, cupti_version INTEGER, nvtx INTEGER,"
	" dropped_records INTEGER, tool TEXT);"
	"CREATE TABLE IF NOT EXISTS trace_kernels(id INTEGER PRIMARY KEY,"
	" run_id INTEGER NOT NULL REFERENCES trace_runs(id), name TEXT NOT NULL,"
	" grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,"
	" block_x INTEGER, block_y INTEGER, block_z INTEGER,"
	" cluster_x INTEGER, cluster_y INTEGER, cluster_z INTEGER,"
	" regs_per_thread INTEGER, static_smem_bytes INTEGER, dynamic_smem_bytes INTEGER,"
	" start_ns INTEGER, end_ns INTEGER, stream INTEGER, device INTEGER,"
	" correlation_id INTEGER, range_id INTEGER);"
	"CREATE TABLE IF NOT EXISTS trace_memcpys(id INTEGER PRIMARY KEY,"
	" run_id INTEGER NOT NULL REFERENCES trace_runs(id), kind TEXT NOT NULL,"
	" dir TEXT, bytes INTEGER, start_ns INTEGER, end_ns INTEGER, stream INTEGER,"
	" device INTEGER, correlation_id INTEGER, range_id INTEGER);"
	"CREATE TABLE IF NOT EXISTS trace_ranges(id INTEGER PRIMARY KEY,"
	" run_id INTEGER NOT NULL REFERENCES trace_runs(id), range_id INTEGER,"
	" parent_id INTEGER, name TEXT, start_ns INTEGER, end_ns INTEGER,"
	" thread INTEGER, depth INTEGER);"
	"CREATE INDEX IF NOT EXISTS trace_kernels_run ON trace_kernels(run_id);"
	"CREATE INDEX IF NOT EXISTS trace_memcpys_run ON trace_memcpys(run_id);"
	"CREATE INDEX IF NOT EXISTS trace_ranges_run ON trace_ranges(run_id);";

static const char *const trace_tables[] = {"trace_meta", "trace_runs", "trace_kernels",
					   "trace_memcpys", "trace_ranges", NULL};

static int db_fail(struct llmsim_err *err, sqlite3 *db, const char *path, const char *what)
{
	return llmsim_err_set(err, LLMSIM_EDB, "%s: %s: %s", path, what,
			      db ? sqlite3_errmsg(db) : "out of memory");
}

/* ---- writing ---------------------------------------------------------- */

static int check_version(sqlite3 *db, const char *path, struct llmsim_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db,
		"SELECT value FROM trace_meta WHERE key='trace_schema_version'", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "reading trace_meta");
	int ver = 0;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		ver = atoi((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (ver < 1)
		return llmsim_err_set(err, LLMSIM_EDB, "%s: trace_meta has no schema version", path);
	if (ver > LLMSIM_TRACE_SCHEMA_VERSION)
		return llmsim_err_set(err, LLMSIM_EDB,
				      "%s: trace schema version %d is newer than this llmsim (%d)",
				      path, ver, LLMSIM_TRACE_SCHEMA_VERSION);
	return 0;
}

static int write_all(sqlite3 *db, const char *path, const struct llmsim_trace *t,
		     int64_t *run_id, struct llmsim_err *err)
{
	const struct llmsim_trace_run *r = &t->run;
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db,
		"INSERT INTO trace_runs(started_at,host,command,device_name,device_sms,"
		"device_count,cupti_version,nvtx,dropped_records,tool)"
		" VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "preparing trace_runs");
	sqlite3_bind_text(st, 1, r->started_at, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->command, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, r->device_name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, r->device_sms);
	sqlite3_bind_int(st, 6, r->device_count);
	sqlite3_bind_int(st, 7, r->cupti_version);
	sqlite3_bind_int(st, 8, r->nvtx);
	sqlite3_bind_int64(st, 9, r->dropped_records);
	sqlite3_bind_text(st, 10, r->tool, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(err, db, path, "inserting the run");
	int64_t id = sqlite3_last_insert_rowid(db);

	rc = sqlite3_prepare_v2(db,
		"INSERT INTO trace_kernels(run_id,name,grid_x,grid_y,grid_z,block_x,block_y,"
		"block_z,cluster_x,cluster_y,cluster_z,regs_per_thread,static_smem_bytes,"
		"dynamic_smem_bytes,start_ns,end_ns,stream,device,correlation_id,range_id)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "preparing trace_kernels");
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		int c = 1;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, c++, id);
		sqlite3_bind_text(st, c++, k->name ? k->name : "", -1, SQLITE_STATIC);
		for (int d = 0; d < 3; d++)
			sqlite3_bind_int(st, c++, k->grid[d]);
		for (int d = 0; d < 3; d++)
			sqlite3_bind_int(st, c++, k->block[d]);
		for (int d = 0; d < 3; d++)
			sqlite3_bind_int(st, c++, k->cluster[d]);
		sqlite3_bind_int(st, c++, k->regs_per_thread);
		sqlite3_bind_int(st, c++, k->static_smem_bytes);
		sqlite3_bind_int(st, c++, k->dynamic_smem_bytes);
		sqlite3_bind_int64(st, c++, (int64_t)k->start_ns);
		sqlite3_bind_int64(st, c++, (int64_t)k->end_ns);
		sqlite3_bind_int64(st, c++, k->stream);
		sqlite3_bind_int64(st, c++, k->device);
		sqlite3_bind_int64(st, c++, k->correlation_id);
		sqlite3_bind_int64(st, c++, k->range_id);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_fail(err, db, path, "inserting a kernel");
		}
	}
	sqlite3_finalize(st);

	rc = sqlite3_prepare_v2(db,
		"INSERT INTO trace_memcpys(run_id,kind,dir,bytes,start_ns,end_ns,stream,device,"
		"correlation_id,range_id) VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "preparing trace_memcpys");
	for (size_t i = 0; i < t->ncopies; i++) {
		const struct llmsim_trace_copy *m = &t->copies[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, m->kind == LLMSIM_TRACE_MEMSET ? "memset" : "memcpy", -1,
				  SQLITE_STATIC);
		sqlite3_bind_text(st, 3, m->dir, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)m->bytes);
		sqlite3_bind_int64(st, 5, (int64_t)m->start_ns);
		sqlite3_bind_int64(st, 6, (int64_t)m->end_ns);
		sqlite3_bind_int64(st, 7, m->stream);
		sqlite3_bind_int64(st, 8, m->device);
		sqlite3_bind_int64(st, 9, m->correlation_id);
		sqlite3_bind_int64(st, 10, m->range_id);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_fail(err, db, path, "inserting a copy");
		}
	}
	sqlite3_finalize(st);

	rc = sqlite3_prepare_v2(db,
		"INSERT INTO trace_ranges(run_id,range_id,parent_id,name,start_ns,end_ns,thread,"
		"depth) VALUES(?,?,?,?,?,?,?,?)", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "preparing trace_ranges");
	for (size_t i = 0; i < t->nranges; i++) {
		const struct llmsim_trace_range *g = &t->ranges[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, g->id);
		sqlite3_bind_int64(st, 3, g->parent_id);
		sqlite3_bind_text(st, 4, g->name ? g->name : "", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (int64_t)g->start_ns);
		sqlite3_bind_int64(st, 6, (int64_t)g->end_ns);
		sqlite3_bind_int64(st, 7, g->thread);
		sqlite3_bind_int(st, 8, g->depth);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_fail(err, db, path, "inserting a range");
		}
	}
	sqlite3_finalize(st);
	if (run_id)
		*run_id = id;
	return 0;
}

int llmsim_trace_db_write(const char *path, const struct llmsim_trace *t,
			  int64_t *run_id, struct llmsim_err *err)
{
	sqlite3 *db = NULL;
	if (llmsim_sqlite_open(path, LLMSIM_SQLITE_CREATE, "an llmsim trace", trace_tables, &db, err))
		return LLMSIM_EDB;
	sqlite3_busy_timeout(db, 30000);
	int rc = 0;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = db_fail(err, db, path, "cannot start a transaction");
		sqlite3_close(db);
		return rc;
	}
	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK)
		rc = db_fail(err, db, path, "creating the trace tables");
	if (!rc)
		rc = check_version(db, path, err);
	if (!rc)
		rc = write_all(db, path, t, run_id, err);
	if (!rc && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = db_fail(err, db, path, "commit failed");
	if (rc)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

/* ---- reading ---------------------------------------------------------- */

/* Open read-only and make sure it is a sound database with trace tables. */
static int open_read(const char *path, sqlite3 **out, struct llmsim_err *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = llmsim_sqlite_open(path, LLMSIM_SQLITE_READ, "an llmsim trace", trace_tables, &db, err);
	if (rc)
		return rc;
	rc = sqlite3_prepare_v2(db,
		"SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN"
		" ('trace_meta','trace_runs','trace_kernels','trace_memcpys','trace_ranges')",
		-1, &st, NULL);
	int n = 0;
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (n != 5) {
		sqlite3_close(db);
		return llmsim_err_set(err, LLMSIM_EDB, "%s: no trace tables (not an llmsim trace)",
				      path);
	}
	rc = check_version(db, path, err);
	if (rc) {
		sqlite3_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/* One row being read: the first column that is not what the schema
 * promises (an integer in range, a text) is remembered, so that a crafted
 * file gets one message naming its table, row and column. */
struct row {
	sqlite3_stmt *st;
	const char *bad;  /* "is not an integer", ... or NULL */
	int col;
};

static int64_t get_int(struct row *r, int i, int64_t lo, int64_t hi)
{
	if (r->bad)
		return 0;
	if (sqlite3_column_type(r->st, i) != SQLITE_INTEGER) {
		r->bad = "is not an integer", r->col = i;
		return 0;
	}
	int64_t v = sqlite3_column_int64(r->st, i);
	if (v < lo || v > hi) {
		r->bad = "is out of range", r->col = i;
		return 0;
	}
	return v;
}

static const char *get_str(struct row *r, int i)
{
	int type = sqlite3_column_type(r->st, i);
	if (r->bad || type == SQLITE_NULL)
		return "";
	if (type != SQLITE_TEXT) {
		r->bad = "is not text", r->col = i;
		return "";
	}
	if (sqlite3_column_bytes(r->st, i) > LLMSIM_MAX_LINE) {
		r->bad = "is longer than 1 MiB", r->col = i;
		return "";
	}
	const char *s = (const char *)sqlite3_column_text(r->st, i);
	if (s && (int)strlen(s) != sqlite3_column_bytes(r->st, i)) {
		r->bad = "holds a NUL byte", r->col = i;
		return "";
	}
	return s ? s : "";
}

/* "path: TABLE row ID: column C is not an integer", or the record's own
 * check (trace_check.c). */
static int row_fail(struct llmsim_err *err, const char *path, const char *table, int64_t id,
		    const struct row *r, const char *why)
{
	if (r->bad)
		return llmsim_err_set(err, LLMSIM_EPARSE, "%s: %s row %lld: column %s %s", path,
				      table, (long long)id, sqlite3_column_name(r->st, r->col),
				      r->bad);
	return llmsim_err_set(err, LLMSIM_EPARSE, "%s: %s row %lld: %s", path, table,
			      (long long)id, why);
}

/* s into dst, cut to size - 1 bytes (a trace's text columns are bounded
 * by their fields; memcpy rather than snprintf, whose cut -O3 warns of). */
static void copy_str(char *dst, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);
	memcpy(dst, s, n);
	dst[n] = 0;
}

/* A trace_runs row (RUN_COLS); 0 or an error. */
static int read_run_row(sqlite3_stmt *st, const char *path, struct llmsim_trace_run *r,
			struct llmsim_err *err)
{
	struct row w = {st, NULL, 0};
	memset(r, 0, sizeof *r);
	r->id = get_int(&w, 0, 1, INT64_MAX);
	copy_str(r->started_at, sizeof r->started_at, get_str(&w, 1));
	copy_str(r->host, sizeof r->host, get_str(&w, 2));
	copy_str(r->command, sizeof r->command, get_str(&w, 3));
	copy_str(r->device_name, sizeof r->device_name, get_str(&w, 4));
	r->device_sms = (int)get_int(&w, 5, 0, INT32_MAX);
	r->device_count = (int)get_int(&w, 6, 0, INT32_MAX);
	r->cupti_version = (int)get_int(&w, 7, 0, INT32_MAX);
	r->nvtx = (int)get_int(&w, 8, 0, 1);
	r->dropped_records = get_int(&w, 9, 0, INT64_MAX);
	copy_str(r->tool, sizeof r->tool, get_str(&w, 10));
	const char *why = w.bad ? NULL : llmsim_trace_run_bad(r);
	return w.bad || why ? row_fail(err, path, "trace_runs", sqlite3_column_int64(st, 0), &w, why)
			    : 0;
}

#define RUN_COLS "id,started_at,host,command,device_name,device_sms,device_count," \
		 "cupti_version,nvtx,dropped_records,tool"

static int full(const struct llmsim_trace *t, const char *path, struct llmsim_err *err)
{
	if (t->nkernels + t->ncopies + t->nranges < LLMSIM_MAX_TRACE_RECORDS)
		return 0;
	return llmsim_err_set(err, LLMSIM_EINVAL, "%s: run %lld: more than %d records (the limit)",
			      path, (long long)t->run.id, LLMSIM_MAX_TRACE_RECORDS);
}

static int read_rows(sqlite3 *db, const char *path, struct llmsim_trace *t, int64_t id,
		     struct llmsim_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db,
		"SELECT id,name,grid_x,grid_y,grid_z,block_x,block_y,block_z,cluster_x,cluster_y,"
		"cluster_z,regs_per_thread,static_smem_bytes,dynamic_smem_bytes,start_ns,end_ns,"
		"stream,device,correlation_id,range_id FROM trace_kernels WHERE run_id=? ORDER BY id",
		-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "reading trace_kernels");
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct llmsim_trace_kernel k = {0};
		struct row w = {st, NULL, 0};
		int c = 1;
		k.name = get_str(&w, c++);
		for (int d = 0; d < 3; d++)
			k.grid[d] = (int)get_int(&w, c++, INT32_MIN, INT32_MAX);
		for (int d = 0; d < 3; d++)
			k.block[d] = (int)get_int(&w, c++, INT32_MIN, INT32_MAX);
		for (int d = 0; d < 3; d++)
			k.cluster[d] = (int)get_int(&w, c++, INT32_MIN, INT32_MAX);
		k.regs_per_thread = (int)get_int(&w, c++, INT32_MIN, INT32_MAX);
		k.static_smem_bytes = (int)get_int(&w, c++, INT32_MIN, INT32_MAX);
		k.dynamic_smem_bytes = (int)get_int(&w, c++, INT32_MIN, INT32_MAX);
		k.start_ns = (uint64_t)get_int(&w, c++, 0, INT64_MAX);
		k.end_ns = (uint64_t)get_int(&w, c++, 0, INT64_MAX);
		k.stream = (uint32_t)get_int(&w, c++, 0, UINT32_MAX);
		k.device = (uint32_t)get_int(&w, c++, 0, UINT32_MAX);
		k.correlation_id = (uint32_t)get_int(&w, c++, 0, UINT32_MAX);
		k.range_id = get_int(&w, c++, 0, INT64_MAX);
		const char *why = w.bad ? NULL : llmsim_trace_kernel_bad(&k);
		if (w.bad || why || full(t, path, err)) {
			rc = w.bad || why ? row_fail(err, path, "trace_kernels",
						     sqlite3_column_int64(st, 0), &w, why)
					  : LLMSIM_EINVAL;
			sqlite3_finalize(st);
			return rc;
		}
		if (llmsim_trace_add_kernel(t, &k)) {
			sqlite3_finalize(st);
			return llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", path);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(err, db, path, "reading trace_kernels");

	rc = sqlite3_prepare_v2(db,
		"SELECT id,kind,dir,bytes,start_ns,end_ns,stream,device,correlation_id,range_id"
		" FROM trace_memcpys WHERE run_id=? ORDER BY id", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "reading trace_memcpys");
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct llmsim_trace_copy m = {0};
		struct row w = {st, NULL, 0};
		const char *kind = get_str(&w, 1);
		m.kind = !strcmp(kind, "memset") ? LLMSIM_TRACE_MEMSET : LLMSIM_TRACE_MEMCPY;
		const char *dir = get_str(&w, 2);
		if (!w.bad && strlen(dir) >= sizeof m.dir)
			w.bad = "is not a copy direction", w.col = 2;
		copy_str(m.dir, sizeof m.dir, dir);
		m.bytes = (uint64_t)get_int(&w, 3, 0, INT64_MAX);
		m.start_ns = (uint64_t)get_int(&w, 4, 0, INT64_MAX);
		m.end_ns = (uint64_t)get_int(&w, 5, 0, INT64_MAX);
		m.stream = (uint32_t)get_int(&w, 6, 0, UINT32_MAX);
		m.device = (uint32_t)get_int(&w, 7, 0, UINT32_MAX);
		m.correlation_id = (uint32_t)get_int(&w, 8, 0, UINT32_MAX);
		m.range_id = get_int(&w, 9, 0, INT64_MAX);
		const char *why = w.bad ? NULL
				: strcmp(kind, "memset") && strcmp(kind, "memcpy")
					? "kind is neither memcpy nor memset"
					: llmsim_trace_copy_bad(&m);
		if (w.bad || why || full(t, path, err)) {
			rc = w.bad || why ? row_fail(err, path, "trace_memcpys",
						     sqlite3_column_int64(st, 0), &w, why)
					  : LLMSIM_EINVAL;
			sqlite3_finalize(st);
			return rc;
		}
		if (llmsim_trace_add_copy(t, &m)) {
			sqlite3_finalize(st);
			return llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", path);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(err, db, path, "reading trace_memcpys");

	rc = sqlite3_prepare_v2(db,
		"SELECT id,range_id,parent_id,name,start_ns,end_ns,thread,depth FROM trace_ranges"
		" WHERE run_id=? ORDER BY range_id", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, db, path, "reading trace_ranges");
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct llmsim_trace_range g = {0};
		struct row w = {st, NULL, 0};
		g.id = get_int(&w, 1, INT64_MIN, INT64_MAX);
		g.parent_id = get_int(&w, 2, INT64_MIN, INT64_MAX);
		g.name = get_str(&w, 3);
		g.start_ns = (uint64_t)get_int(&w, 4, 0, INT64_MAX);
		g.end_ns = (uint64_t)get_int(&w, 5, 0, INT64_MAX);
		g.thread = (uint32_t)get_int(&w, 6, 0, UINT32_MAX);
		g.depth = (int)get_int(&w, 7, INT32_MIN, INT32_MAX);
		const char *why = w.bad ? NULL : llmsim_trace_range_bad(&g);
		if (w.bad || why || full(t, path, err)) {
			rc = w.bad || why ? row_fail(err, path, "trace_ranges",
						     sqlite3_column_int64(st, 0), &w, why)
					  : LLMSIM_EINVAL;
			sqlite3_finalize(st);
			return rc;
		}
		if (llmsim_trace_add_range(t, &g)) {
			sqlite3_finalize(st);
			return llmsim_err_set(err, LLMSIM_ENOMEM, "%s: out of memory", path);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(err, db, path, "reading trace_ranges");
	return 0;
}

int llmsim_trace_db_read(const char *path, int64_t run_id, struct llmsim_trace *t,
			 struct llmsim_err *err)
{
	sqlite3 *db = NULL;
	int rc = open_read(path, &db, err);
	if (rc)
		return rc;
	sqlite3_stmt *st = NULL;
	const char *q = run_id > 0 ? "SELECT " RUN_COLS " FROM trace_runs WHERE id=?"
				   : "SELECT " RUN_COLS " FROM trace_runs ORDER BY id DESC LIMIT 1";
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, db, path, "reading trace_runs");
		sqlite3_close(db);
		return rc;
	}
	if (run_id > 0)
		sqlite3_bind_int64(st, 1, run_id);
	int s = sqlite3_step(st);
	if (s == SQLITE_ROW) {
		rc = read_run_row(st, path, &t->run, err);
	} else if (s == SQLITE_DONE) {
		rc = run_id > 0 ? llmsim_err_set(err, LLMSIM_ENOENT, "%s: no trace run %lld", path,
						 (long long)run_id)
				: llmsim_err_set(err, LLMSIM_ENOENT, "%s: holds no trace runs", path);
	} else {
		rc = db_fail(err, db, path, "reading trace_runs");
	}
	sqlite3_finalize(st);
	if (!rc)
		rc = read_rows(db, path, t, t->run.id, err);
	sqlite3_close(db);
	if (!rc) {
		llmsim_trace_sort(t);
		rc = llmsim_trace_check(t, path, err);
	}
	if (rc) { /* nothing half-read is handed out */
		llmsim_trace_release(t);
		llmsim_trace_init(t);
	}
	return rc;
}

int llmsim_trace_db_runs(const char *path,
			 int (*fn)(const struct llmsim_trace_run *run, int64_t nkernels,
				   void *ctx),
			 void *ctx, struct llmsim_err *err)
{
	sqlite3 *db = NULL;
	int rc = open_read(path, &db, err);
	if (rc)
		return rc;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT " RUN_COLS ", (SELECT count(*) FROM trace_kernels k"
				   " WHERE k.run_id=r.id) FROM trace_runs r ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_fail(err, db, path, "reading trace_runs");
		sqlite3_close(db);
		return rc;
	}
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct llmsim_trace_run r;
		rc = read_run_row(st, path, &r, err);
		if (!rc)
			rc = fn(&r, sqlite3_column_int64(st, 11), ctx);
		if (rc)
			break;
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_fail(err, db, path, "reading trace_runs");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}
