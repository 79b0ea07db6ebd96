/*
 * store.c - the calibration store: opening, schema, migration, and the
 * writer (one transaction per run).
 *
 * Schema version 2 (version 1 lacked cases.check_rel_err and
 * devices.device_count; opening a v1 file adds them inside a transaction).
 * Devices are shared between runs: a run's device row is found by all of
 * its fields, so the GPU count of a multi-GPU run is part of its device.
 * Files are opened as calib/sqlite_open.h says: readers read-only (a v1
 * file is read as v1, never migrated: `llmsim calib upgrade` or the next
 * write does that), the rollback journal at rest (a writer killed before
 * run_commit leaves a journal the next open rolls back, so nothing of its
 * run is seen), every open after PRAGMA integrity_check and a check that
 * the store's tables are tables and no trigger exists.
 */
#include "store_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct store_col devices_cols[] = {
    {"id", COL_INT, 1, NULL},
    {"name", COL_TEXT, 1, NULL},
    {"hw_name", COL_TEXT, 1, NULL},
    {"uuid", COL_TEXT, 1, NULL},
    {"sms", COL_INT, 1, NULL},
    {"device_count", COL_INT, 2, "1"},
    {"hbm_bytes", COL_REAL, 1, NULL},
    {"l2_bytes", COL_REAL, 1, NULL},
    {"sm_clock_max_hz", COL_REAL, 1, NULL},
    {"mem_clock_hz", COL_REAL, 1, NULL},
    {"driver", COL_TEXT, 1, NULL},
    {"cuda_runtime", COL_TEXT, 1, NULL},
    {"cupti", COL_TEXT, 1, NULL},
    {"cublas", COL_TEXT, 1, NULL},
    {"nccl", COL_TEXT, 1, NULL},
};

static const struct store_col runs_cols[] = {
    {"id", COL_INT, 1, NULL},	       {"device_id", COL_INT, 1, NULL},
    {"started_at", COL_TEXT, 1, NULL}, {"host", COL_TEXT, 1, NULL},
    {"tool", COL_TEXT, 1, NULL},       {"quick", COL_INT, 1, NULL},
    {"notes", COL_TEXT, 1, NULL},      {"status", COL_TEXT, 1, NULL},
    {"operand_data", COL_TEXT, 3, "'unknown'"},
};

static const struct store_col cases_cols[] = {
    {"id", COL_INT, 1, NULL},
    {"run_id", COL_INT, 1, NULL},
    {"op_spec", COL_TEXT, 1, NULL},
    {"op_class", COL_TEXT, 1, NULL},
    {"impl", COL_TEXT, 1, NULL},
    {"split", COL_TEXT, 1, NULL},
    {"flops_declared", COL_REAL, 1, NULL},
    {"bytes_declared", COL_REAL, 1, NULL},
    {"reps", COL_INT, 1, NULL},
    {"time_median_s", COL_REAL, 1, NULL},
    {"time_min_s", COL_REAL, 1, NULL},
    {"time_p10_s", COL_REAL, 1, NULL},
    {"time_p90_s", COL_REAL, 1, NULL},
    {"sm_clock_hz", COL_REAL, 1, NULL},
    {"check_rel_err", COL_REAL, 2, "-1"},
    {"load_s", COL_REAL, 3, "0"},
};

static const struct store_col kernels_cols[] = {
    {"id", COL_INT, 1, NULL},
    {"case_id", COL_INT, 1, NULL},
    {"seq", COL_INT, 1, NULL},
    {"name", COL_TEXT, 1, NULL},
    {"grid_x", COL_INT, 1, NULL},
    {"grid_y", COL_INT, 1, NULL},
    {"grid_z", COL_INT, 1, NULL},
    {"block_x", COL_INT, 1, NULL},
    {"block_y", COL_INT, 1, NULL},
    {"block_z", COL_INT, 1, NULL},
    {"regs_per_thread", COL_INT, 1, NULL},
    {"static_smem_bytes", COL_INT, 1, NULL},
    {"dynamic_smem_bytes", COL_INT, 1, NULL},
    {"duration_median_s", COL_REAL, 1, NULL},
    {"launches_per_rep", COL_INT, 1, NULL},
};

static const struct store_col counters_cols[] = {
    {"case_id", COL_INT, 1, NULL},
    {"name", COL_TEXT, 1, NULL},
    {"value", COL_REAL, 1, NULL},
};

static const struct store_col steps_cols[] = {
    {"id", COL_INT, 3, NULL},
    {"run_id", COL_INT, 3, NULL},
    {"program", COL_TEXT, 3, NULL},
    {"model_spec", COL_TEXT, 3, NULL},
    {"phase", COL_TEXT, 3, NULL},
    {"batch", COL_INT, 3, NULL},
    {"tokens", COL_INT, 3, NULL},
    {"context", COL_INT, 3, NULL},
    {"recompute", COL_TEXT, 3, NULL},
    {"graph", COL_INT, 3, NULL},
    {"time_median_s", COL_REAL, 3, NULL},
    {"time_p10_s", COL_REAL, 3, NULL},
    {"time_p90_s", COL_REAL, 3, NULL},
    {"kernel_time_s", COL_REAL, 3, NULL},
    {"sm_clock_hz", COL_REAL, 3, NULL},
    {"power_w", COL_REAL, 3, NULL},
    {"mem_peak_allocated_bytes", COL_REAL, 3, NULL},
    {"mem_peak_reserved_bytes", COL_REAL, 3, NULL},
    {"mem_device_total_bytes", COL_REAL, 3, NULL},
    {"reps", COL_INT, 3, NULL},
    {"notes", COL_TEXT, 3, NULL},
};

static const struct store_col step_kernels_cols[] = {
    {"step_id", COL_INT, 3, NULL}, {"seq", COL_INT, 3, NULL},   {"op", COL_TEXT, 3, NULL},
    {"name", COL_TEXT, 3, NULL},   {"calls", COL_INT, 3, NULL}, {"time_s", COL_REAL, 3, NULL},
};

/* The schema-3 tables, in the current schema and, empty and TEMP, for an
 * older file read as it stands. */
#define STEPS_DDL(prefix)                                                                          \
	"CREATE " prefix "TABLE steps (\n"                                                         \
	"  id INTEGER PRIMARY KEY,\n"                                                              \
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"                       \
	"  program TEXT NOT NULL, model_spec TEXT NOT NULL, phase TEXT NOT NULL,\n"                \
	"  batch INTEGER NOT NULL, tokens INTEGER NOT NULL, context INTEGER NOT NULL,\n"           \
	"  recompute TEXT NOT NULL, graph INTEGER NOT NULL,\n"                                     \
	"  time_median_s REAL NOT NULL, time_p10_s REAL, time_p90_s REAL, kernel_time_s REAL,\n"   \
	"  sm_clock_hz REAL, power_w REAL, mem_peak_allocated_bytes REAL,\n"                       \
	"  mem_peak_reserved_bytes REAL, mem_device_total_bytes REAL, reps INTEGER,\n"            \
	"  notes TEXT NOT NULL);\n"
#define STEP_KERNELS_DDL(prefix)                                                                   \
	"CREATE " prefix "TABLE step_kernels (\n"                                                  \
	"  step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,\n"                     \
	"  seq INTEGER NOT NULL, op TEXT NOT NULL, name TEXT NOT NULL, calls INTEGER,\n"           \
	"  time_s REAL, PRIMARY KEY (step_id, seq));\n"

static const char *const operand_data_names[] = {"normal", "grid",  "coarse", "zeros",
						  "randn",  "mixed", "any",    "unknown"};

int llmsim_store_operand_data_known(const char *d)
{
	for (size_t i = 0; d && i < sizeof operand_data_names / sizeof operand_data_names[0]; i++)
		if (!strcmp(d, operand_data_names[i]))
			return 1;
	return 0;
}

int llmsim_store_fit_data(const char *d)
{
	return d && (!strcmp(d, "normal") || !strcmp(d, "any"));
}

#define NCOLS(a) ((int)(sizeof(a) / sizeof((a)[0])))

const struct store_table_info llmsim_sdb_tables[TBL_COUNT] = {
    [TBL_DEVICES] = {"devices", devices_cols, NCOLS(devices_cols), "id", 1, NULL},
    [TBL_RUNS] = {"runs", runs_cols, NCOLS(runs_cols), "id", 1, NULL},
    [TBL_CASES] = {"cases", cases_cols, NCOLS(cases_cols), "id", 1, NULL},
    [TBL_KERNELS] = {"kernels", kernels_cols, NCOLS(kernels_cols), "id", 1, NULL},
    [TBL_COUNTERS] = {"counters", counters_cols, NCOLS(counters_cols), "case_id, name", 1, NULL},
    [TBL_STEPS] = {"steps", steps_cols, NCOLS(steps_cols), "id", 3, STEPS_DDL("TEMP ")},
    [TBL_STEP_KERNELS] = {"step_kernels", step_kernels_cols, NCOLS(step_kernels_cols),
			  "step_id, seq", 3, STEP_KERNELS_DDL("TEMP ")},
};
_Static_assert(TBL_COUNT == 7, "llmsim_sdb_tables lists every table");

/* The current schema. Reals may be NULL (NaN in C); text is never NULL. */
static const char schema_v3[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE devices (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL, hw_name TEXT NOT NULL, uuid TEXT NOT NULL,\n"
    "  sms INTEGER NOT NULL,\n"
    "  device_count INTEGER NOT NULL DEFAULT 1 CHECK (device_count >= 1),\n"
    "  hbm_bytes REAL, l2_bytes REAL, sm_clock_max_hz REAL, mem_clock_hz REAL,\n"
    "  driver TEXT NOT NULL, cuda_runtime TEXT NOT NULL, cupti TEXT NOT NULL,\n"
    "  cublas TEXT NOT NULL, nccl TEXT NOT NULL);\n"
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  device_id INTEGER NOT NULL REFERENCES devices(id),\n"
    "  started_at TEXT NOT NULL, host TEXT NOT NULL, tool TEXT NOT NULL,\n"
    "  quick INTEGER NOT NULL, notes TEXT NOT NULL,\n"
    "  status TEXT NOT NULL CHECK (status IN ('running', 'complete')),\n"
    "  operand_data TEXT NOT NULL DEFAULT 'unknown');\n"
    "CREATE TABLE cases (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  op_spec TEXT NOT NULL, op_class TEXT NOT NULL, impl TEXT NOT NULL,\n"
    "  split TEXT NOT NULL CHECK (split IN ('fit', 'holdout', 'probe')),\n"
    "  flops_declared REAL, bytes_declared REAL, reps INTEGER NOT NULL,\n"
    "  time_median_s REAL NOT NULL, time_min_s REAL, time_p10_s REAL, time_p90_s REAL,\n"
    "  sm_clock_hz REAL,\n"
    "  check_rel_err REAL NOT NULL DEFAULT -1,\n"
    "  load_s REAL NOT NULL DEFAULT 0);\n"
    "CREATE TABLE kernels (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL, name TEXT NOT NULL,\n"
    "  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,\n"
    "  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,\n"
    "  regs_per_thread INTEGER NOT NULL, static_smem_bytes INTEGER NOT NULL,\n"
    "  dynamic_smem_bytes INTEGER NOT NULL, duration_median_s REAL,\n"
    "  launches_per_rep INTEGER NOT NULL);\n"
    "CREATE TABLE counters (\n"
    "  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,\n"
    "  name TEXT NOT NULL, value REAL,\n"
    "  PRIMARY KEY (case_id, name));\n"
    "CREATE INDEX runs_device ON runs(device_id);\n"
    "CREATE INDEX cases_run ON cases(run_id);\n"
    "CREATE INDEX cases_class ON cases(op_class, split);\n"
    "CREATE INDEX kernels_case ON kernels(case_id, seq);\n"
    "CREATE INDEX devices_hw ON devices(hw_name);\n"
    STEPS_DDL("") STEP_KERNELS_DDL("")
    "CREATE INDEX steps_run ON steps(run_id);\n"
    "INSERT INTO meta VALUES ('schema_version', '3');\n";

/* v1 -> v2: the two columns v1 lacked, with the values v1 data implies. */
static const char migrate_v1_v2[] =
    "ALTER TABLE cases ADD COLUMN check_rel_err REAL NOT NULL DEFAULT -1;\n"
    "ALTER TABLE devices ADD COLUMN device_count INTEGER NOT NULL DEFAULT 1"
    " CHECK (device_count >= 1);\n"
    "UPDATE meta SET value = '2' WHERE key = 'schema_version';\n";

/* v2 -> v3: runs say their operand data ('unknown' for what v2 holds: its
 * runs did not record it, and the runner filled grids then), and the
 * whole-program steps. A migrated store keeps v2's split constraint, so it
 * cannot hold 'probe' cases (a new store can). */
static const char migrate_v2_v3[] =
    "ALTER TABLE runs ADD COLUMN operand_data TEXT NOT NULL DEFAULT 'unknown';\n"
    "ALTER TABLE cases ADD COLUMN load_s REAL NOT NULL DEFAULT 0;\n"
    STEPS_DDL("") STEP_KERNELS_DDL("")
    "CREATE INDEX steps_run ON steps(run_id);\n"
    "UPDATE meta SET value = '3' WHERE key = 'schema_version';\n";

int llmsim_sdb_err(struct llmsim_store *s, struct llmsim_err *err, const char *what)
{
	return llmsim_err_set(err, LLMSIM_EDB, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int llmsim_sdb_prepare(struct llmsim_store *s, const char *sql, sqlite3_stmt **st,
		       struct llmsim_err *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return llmsim_sdb_err(s, err, "cannot read the database");
	}
	return 0;
}

int llmsim_sdb_exec(struct llmsim_store *s, const char *sql, struct llmsim_err *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		llmsim_err_set(err, LLMSIM_EDB, "%s: %s", s->path,
			       msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return LLMSIM_EDB;
	}
	return 0;
}

int llmsim_sdb_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_TRANSIENT);
}

void llmsim_sdb_col_text(sqlite3_stmt *st, int i, char *buf, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(buf, size, "%s", t ? (const char *)t : "");
}

double llmsim_sdb_col_real(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NAN;
	return sqlite3_column_double(st, i);
}

/* Read meta.schema_version: 0 for an empty database, -1 for a database
 * that is not a calibration store. */
static int read_version(struct llmsim_store *s, int *version, struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(s, "SELECT count(*), sum(name = 'meta') FROM sqlite_master",
				    &st, err);
	if (rc) {
		if (sqlite3_errcode(s->db) == SQLITE_NOTADB)
			return llmsim_err_set(err, LLMSIM_EDB,
					      "%s: not a calibration database (not an SQLite file)",
					      s->path);
		return rc;
	}
	int r = sqlite3_step(st);
	if (r != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (r == SQLITE_NOTADB || r == SQLITE_CORRUPT)
			return llmsim_err_set(err, LLMSIM_EDB,
					      "%s: not a calibration database (%s)", s->path,
					      sqlite3_errstr(r));
		return llmsim_sdb_err(s, err, "cannot read the database");
	}
	int64_t ntables = sqlite3_column_int64(st, 0), nmeta = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	if (ntables == 0) {
		*version = 0;
		return 0;
	}
	if (nmeta == 0) {
		*version = -1;
		return 0;
	}
	rc = llmsim_sdb_prepare(s, "SELECT value FROM meta WHERE key = 'schema_version'", &st, err);
	if (rc)
		return rc;
	*version = -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		char buf[32], *end;
		llmsim_sdb_col_text(st, 0, buf, sizeof buf);
		long v = strtol(buf, &end, 10);
		if (end != buf && !*end && v > 0 && v < 1000000)
			*version = (int)v;
	}
	sqlite3_finalize(st);
	return 0;
}

/* Create the schema in an empty file, or migrate an old one, inside one
 * write transaction (re-checking the version once the lock is held). */
static int version_ok(struct llmsim_store *s, int v, int create, struct llmsim_err *err)
{
	if (v < 0)
		return llmsim_err_set(
		    err, LLMSIM_EDB, "%s: not a calibration database (no schema version)", s->path);
	if (v > LLMSIM_STORE_SCHEMA_VERSION)
		return llmsim_err_set(
		    err, LLMSIM_EDB,
		    "%s: schema version %d is newer than this llmsim supports (%d)", s->path, v,
		    LLMSIM_STORE_SCHEMA_VERSION);
	if (v == 0 && !create)
		return llmsim_err_set(err, LLMSIM_EDB, "%s: empty file, not a calibration database",
				      s->path);
	return 0;
}

static int upgrade(struct llmsim_store *s, int create, struct llmsim_err *err)
{
	int v, rc = read_version(s, &v, err);
	if (rc)
		return rc;
	if (v == LLMSIM_STORE_SCHEMA_VERSION)
		return 0;
	if ((rc = version_ok(s, v, create, err)))
		return rc;
	if ((rc = llmsim_sdb_exec(s, "BEGIN IMMEDIATE", err)))
		return rc;
	if ((rc = read_version(s, &v, err)))
		goto fail;
	if (v == 0)
		rc = llmsim_sdb_exec(s, schema_v3, err);
	if (!rc && v == 1)
		rc = llmsim_sdb_exec(s, migrate_v1_v2, err);
	if (!rc && (v == 1 || v == 2))
		rc = llmsim_sdb_exec(s, migrate_v2_v3, err);
	if (rc)
		goto fail;
	if ((rc = llmsim_sdb_exec(s, "COMMIT", err)))
		goto fail;
	return 0;
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* An older file read as it stands: a TEMP view per table that lacks a
 * later version's columns, adding them with their defaults. Unqualified
 * names find TEMP objects first, so every reader (store_read.c, the
 * export) sees the current schema; the file itself is not touched. */
static int compat_views(struct llmsim_store *s, struct llmsim_err *err)
{
	for (int t = 0; t < TBL_COUNT; t++) {
		const struct store_table_info *ti = &llmsim_sdb_tables[t];
		if (ti->since > s->version) { /* a table the file lacks: empty */
			int rc = llmsim_sdb_exec(s, ti->temp_ddl, err);
			if (rc)
				return rc;
			continue;
		}
		char sql[1024];
		size_t n = (size_t)snprintf(sql, sizeof sql, "CREATE TEMP VIEW %s AS SELECT *", ti->name);
		int added = 0;
		for (int c = 0; c < ti->ncols; c++)
			if (ti->cols[c].since > s->version) {
				n += (size_t)snprintf(sql + n, sizeof sql - n, ", %s AS %s",
						      ti->cols[c].v1_default, ti->cols[c].name);
				added = 1;
			}
		n += (size_t)snprintf(sql + n, sizeof sql - n, " FROM main.%s", ti->name);
		LLMSIM_ASSERT(n < sizeof sql);
		int rc = added ? llmsim_sdb_exec(s, sql, err) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* Every reference (runs to devices, cases to runs, ...) finds its row: a
 * store whose references dangle is damaged (its export would not import),
 * refused before anything reads or writes it. */
static int check_references(struct llmsim_store *s, struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(s, "PRAGMA main.foreign_key_check", &st, err);
	if (rc)
		return rc;
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		char table[64], parent[64];
		llmsim_sdb_col_text(st, 0, table, sizeof table);
		llmsim_sdb_col_text(st, 2, parent, sizeof parent);
		rc = llmsim_err_set(err, LLMSIM_EDB,
				    "%s: database is damaged: row %lld of %s refers to a row of %s "
				    "that it does not hold",
				    s->path, (long long)sqlite3_column_int64(st, 1), table, parent);
	} else if (r != SQLITE_DONE) {
		rc = llmsim_sdb_err(s, err, "cannot read the database");
	}
	sqlite3_finalize(st);
	return rc;
}

int llmsim_store_open(const char *path, int flags, struct llmsim_store **out,
		      struct llmsim_err *err)
{
	*out = NULL;
	int create = flags & LLMSIM_STORE_CREATE, write = create || (flags & LLMSIM_STORE_WRITE);
	if (!create && access(path, F_OK) != 0)
		return llmsim_err_set(err, LLMSIM_ENOENT, "%s: no such database", path);
	struct llmsim_store *s = calloc(1, sizeof *s);
	if (!s)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	snprintf(s->path, sizeof s->path, "%s", path);
	s->read_only = !write;
	static const char *const tables[] = {"meta",	 "devices", "runs",	    "cases", "kernels",
					     "counters", "steps",   "step_kernels", NULL};
	_Static_assert(sizeof tables / sizeof tables[0] == TBL_COUNT + 2, "every table");
	int rc = llmsim_sqlite_open(path,
				    create  ? LLMSIM_SQLITE_CREATE
				    : write ? LLMSIM_SQLITE_WRITE
					    : LLMSIM_SQLITE_READ,
				    "a calibration database", tables, &s->db, err);
	if (rc)
		goto fail;
	if ((rc = llmsim_sdb_exec(s, "PRAGMA foreign_keys = ON", err)))
		goto fail;
	int v0;
	if ((rc = read_version(s, &v0, err)) || (v0 > 0 && (rc = check_references(s, err))))
		goto fail;
	if (write) {
		/* a writer brings the schema up to date (in one transaction) */
		if ((rc = upgrade(s, create, err)))
			goto fail;
		s->version = LLMSIM_STORE_SCHEMA_VERSION;
	} else {
		/* a reader reads whichever version it finds, changing nothing */
		int v;
		if ((rc = read_version(s, &v, err)))
			goto fail;
		if ((rc = version_ok(s, v, 0, err)))
			goto fail;
		s->version = v;
		if (v < LLMSIM_STORE_SCHEMA_VERSION && (rc = compat_views(s, err)))
			goto fail;
	}
	*out = s;
	return 0;
fail:
	llmsim_store_close(s);
	return rc;
}

int llmsim_store_upgrade(const char *path, int *from, struct llmsim_err *err)
{
	struct llmsim_store *s;
	int rc = llmsim_store_open(path, LLMSIM_STORE_READ, &s, err);
	if (rc)
		return rc;
	*from = s->version;
	llmsim_store_close(s);
	if (*from == LLMSIM_STORE_SCHEMA_VERSION)
		return 0;
	rc = llmsim_store_open(path, LLMSIM_STORE_WRITE, &s, err);
	llmsim_store_close(s);
	return rc;
}

void llmsim_store_close(struct llmsim_store *s)
{
	if (!s)
		return;
	if (s->active_run)
		llmsim_store_run_abort(s);
	sqlite3_finalize(s->ins_case);
	sqlite3_finalize(s->ins_kernel);
	sqlite3_finalize(s->ins_counter);
	sqlite3_finalize(s->sel_case_run);
	sqlite3_close(s->db);
	free(s);
}

int llmsim_store_schema_version(const struct llmsim_store *s)
{
	return s->version;
}

/* Find an identical device row or insert one; *id gets its id. Must be
 * called inside a transaction. */
static int sdb_device_id(struct llmsim_store *s, const struct llmsim_device_info *d, int64_t *id,
			 struct llmsim_err *err)
{
	/* "IS" so that NULL (NaN) reals compare equal to each other. */
	static const char find[] =
	    "SELECT id FROM devices WHERE name = ?1 AND hw_name = ?2 AND uuid = ?3"
	    " AND sms = ?4 AND device_count = ?5 AND hbm_bytes IS ?6 AND l2_bytes IS ?7"
	    " AND sm_clock_max_hz IS ?8 AND mem_clock_hz IS ?9 AND driver = ?10"
	    " AND cuda_runtime = ?11 AND cupti = ?12 AND cublas = ?13 AND nccl = ?14"
	    " ORDER BY id LIMIT 1";
	static const char ins[] =
	    "INSERT INTO devices (name, hw_name, uuid, sms, device_count, hbm_bytes,"
	    " l2_bytes, sm_clock_max_hz, mem_clock_hz, driver, cuda_runtime, cupti,"
	    " cublas, nccl) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
	    " ?13, ?14)";
	for (int pass = 0; pass < 2; pass++) {
		sqlite3_stmt *st;
		int rc = llmsim_sdb_prepare(s, pass ? ins : find, &st, err);
		if (rc)
			return rc;
		llmsim_sdb_bind_text(st, 1, d->name);
		llmsim_sdb_bind_text(st, 2, d->hw_name);
		llmsim_sdb_bind_text(st, 3, d->uuid);
		sqlite3_bind_int(st, 4, d->sms);
		sqlite3_bind_int(st, 5, d->device_count > 0 ? d->device_count : 1);
		sqlite3_bind_double(st, 6, d->hbm_bytes);
		sqlite3_bind_double(st, 7, d->l2_bytes);
		sqlite3_bind_double(st, 8, d->sm_clock_max_hz);
		sqlite3_bind_double(st, 9, d->mem_clock_hz);
		llmsim_sdb_bind_text(st, 10, d->driver);
		llmsim_sdb_bind_text(st, 11, d->cuda_runtime);
		llmsim_sdb_bind_text(st, 12, d->cupti);
		llmsim_sdb_bind_text(st, 13, d->cublas);
		llmsim_sdb_bind_text(st, 14, d->nccl);
		int r = sqlite3_step(st);
		if (!pass && r == SQLITE_ROW) {
			*id = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
			return 0;
		}
		sqlite3_finalize(st);
		if (pass && r == SQLITE_DONE) {
			*id = sqlite3_last_insert_rowid(s->db);
			return 0;
		}
		if (r != SQLITE_DONE && r != SQLITE_ROW)
			return llmsim_sdb_err(s, err, "cannot write the device");
	}
	return llmsim_sdb_err(s, err, "cannot write the device");
}

int llmsim_store_run_begin(struct llmsim_store *s, const struct llmsim_device_info *dev,
			   const struct llmsim_run_info *run, int64_t *run_id,
			   struct llmsim_err *err)
{
	if (s->read_only)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: opened read-only", s->path);
	if (s->active_run)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: run %lld is still open (commit or abort it first)",
				      s->path, (long long)s->active_run);
	if (!dev->sms || !dev->name[0])
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: the device needs a name and an SM count", s->path);
	const char *data = run->operand_data[0] ? run->operand_data : "unknown";
	if (!llmsim_store_operand_data_known(data))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: unknown operand data '%s' (normal, grid, coarse, zeros, "
				      "randn, mixed, any or unknown)", s->path, data);
	int rc = llmsim_sdb_exec(s, "BEGIN IMMEDIATE", err);
	if (rc)
		return rc;
	int64_t dev_id = 0; /* set by sdb_device_id when it returns 0 */
	if ((rc = sdb_device_id(s, dev, &dev_id, err)))
		goto fail;
	sqlite3_stmt *st;
	if ((rc = llmsim_sdb_prepare(
		 s,
		 "INSERT INTO runs (device_id, started_at, host, tool, quick, notes,"
		 " status, operand_data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7)",
		 &st, err)))
		goto fail;
	sqlite3_bind_int64(st, 1, dev_id);
	llmsim_sdb_bind_text(st, 2, run->started_at);
	llmsim_sdb_bind_text(st, 3, run->host);
	llmsim_sdb_bind_text(st, 4, run->tool);
	sqlite3_bind_int(st, 5, run->quick ? 1 : 0);
	llmsim_sdb_bind_text(st, 6, run->notes);
	llmsim_sdb_bind_text(st, 7, run->operand_data[0] ? run->operand_data : "unknown");
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		rc = llmsim_sdb_err(s, err, "cannot write the run");
		goto fail;
	}
	s->active_run = sqlite3_last_insert_rowid(s->db);
	s->active_fit_data = llmsim_store_fit_data(data);
	s->kernel_case = 0;
	*run_id = s->active_run;
	return 0;
fail:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int check_active(struct llmsim_store *s, int64_t run_id, struct llmsim_err *err)
{
	if (!s->active_run || run_id != s->active_run)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: run %lld is not open", s->path,
				      (long long)run_id);
	return 0;
}

/* Bind, step and reset a cached insert statement. */
static int step_reset(struct llmsim_store *s, sqlite3_stmt *st, const char *what,
		      struct llmsim_err *err)
{
	int r = sqlite3_step(st);
	int rc = r == SQLITE_DONE ? 0 : llmsim_sdb_err(s, err, what);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

int llmsim_store_add_case(struct llmsim_store *s, int64_t run_id, const struct llmsim_case *c,
			  int64_t *case_id, struct llmsim_err *err)
{
	int rc = check_active(s, run_id, err);
	if (rc)
		return rc;
	if (strcmp(c->split, "fit") && strcmp(c->split, "holdout") && strcmp(c->split, "probe"))
		return llmsim_err_set(
		    err, LLMSIM_EINVAL,
		    "%s: case '%s': split must be \"fit\", \"holdout\" or \"probe\", not \"%s\"",
		    s->path, c->op_spec, c->split);
	if (!strcmp(c->split, "fit") && !s->active_fit_data)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: case '%s': only a run on normal (or data-independent) "
				      "operands may hold fit cases; this one's are \"probe\" cases",
				      s->path, c->op_spec);
	if (!c->op_spec[0] || !c->op_class[0])
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: a case needs an op spec and a class",
				      s->path);
	if (!isfinite(c->time_median_s) || c->time_median_s < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: case '%s': median time must be finite and >= 0", s->path,
				      c->op_spec);
	if (!s->ins_case &&
	    (rc = llmsim_sdb_prepare(
		 s,
		 "INSERT INTO cases (run_id, op_spec, op_class, impl, split,"
		 " flops_declared, bytes_declared, reps, time_median_s, time_min_s,"
		 " time_p10_s, time_p90_s, sm_clock_hz, check_rel_err, load_s) VALUES (?1, ?2,"
		 " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
		 &s->ins_case, err)))
		return rc;
	sqlite3_stmt *st = s->ins_case;
	sqlite3_bind_int64(st, 1, run_id);
	llmsim_sdb_bind_text(st, 2, c->op_spec);
	llmsim_sdb_bind_text(st, 3, c->op_class);
	llmsim_sdb_bind_text(st, 4, c->impl);
	llmsim_sdb_bind_text(st, 5, c->split);
	sqlite3_bind_double(st, 6, c->flops_declared);
	sqlite3_bind_double(st, 7, c->bytes_declared);
	sqlite3_bind_int(st, 8, c->reps);
	sqlite3_bind_double(st, 9, c->time_median_s);
	sqlite3_bind_double(st, 10, c->time_min_s);
	sqlite3_bind_double(st, 11, c->time_p10_s);
	sqlite3_bind_double(st, 12, c->time_p90_s);
	sqlite3_bind_double(st, 13, c->sm_clock_hz);
	sqlite3_bind_double(st, 14, isnan(c->check_rel_err) ? -1.0 : c->check_rel_err);
	sqlite3_bind_double(st, 15, c->load_s > 0 ? c->load_s : 0);
	if ((rc = step_reset(s, st, "cannot write the case", err)))
		return rc;
	*case_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

/* The case must belong to the open run (the foreign key only checks that
 * it exists). */
static int check_case(struct llmsim_store *s, int64_t case_id, struct llmsim_err *err)
{
	if (!s->active_run)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: no run is open", s->path);
	int rc;
	if (!s->sel_case_run &&
	    (rc = llmsim_sdb_prepare(s, "SELECT run_id FROM cases WHERE id = ?1", &s->sel_case_run,
				     err)))
		return rc;
	sqlite3_stmt *st = s->sel_case_run;
	sqlite3_bind_int64(st, 1, case_id);
	int ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == s->active_run;
	sqlite3_reset(st);
	if (!ok)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: case %lld is not in the open run",
				      s->path, (long long)case_id);
	return 0;
}

int llmsim_store_add_kernel(struct llmsim_store *s, int64_t case_id,
			    const struct llmsim_kernel_rec *k, struct llmsim_err *err)
{
	int rc = check_case(s, case_id, err);
	if (rc)
		return rc;
	if (!s->ins_kernel &&
	    (rc = llmsim_sdb_prepare(
		 s,
		 "INSERT INTO kernels (case_id, seq, name, grid_x, grid_y, grid_z,"
		 " block_x, block_y, block_z, regs_per_thread, static_smem_bytes,"
		 " dynamic_smem_bytes, duration_median_s, launches_per_rep) VALUES"
		 " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
		 &s->ins_kernel, err)))
		return rc;
	if (s->kernel_case != case_id) {
		s->kernel_case = case_id;
		s->kernel_seq = 0;
	}
	sqlite3_stmt *st = s->ins_kernel;
	sqlite3_bind_int64(st, 1, case_id);
	sqlite3_bind_int(st, 2, s->kernel_seq);
	llmsim_sdb_bind_text(st, 3, k->name);
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_int(st, 4 + i, k->grid[i]);
		sqlite3_bind_int(st, 7 + i, k->block[i]);
	}
	sqlite3_bind_int(st, 10, k->regs_per_thread);
	sqlite3_bind_int(st, 11, k->static_smem_bytes);
	sqlite3_bind_int(st, 12, k->dynamic_smem_bytes);
	sqlite3_bind_double(st, 13, k->duration_median_s);
	sqlite3_bind_int(st, 14, k->launches_per_rep);
	if ((rc = step_reset(s, st, "cannot write the kernel", err)))
		return rc;
	s->kernel_seq++;
	return 0;
}

int llmsim_store_add_counter(struct llmsim_store *s, int64_t case_id, const char *name,
			     double value, struct llmsim_err *err)
{
	int rc = check_case(s, case_id, err);
	if (rc)
		return rc;
	if (!name || !*name)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: a counter needs a name", s->path);
	/* A counter measured twice (another pass) keeps the last value. */
	if (!s->ins_counter &&
	    (rc = llmsim_sdb_prepare(s,
				     "INSERT OR REPLACE INTO counters (case_id, name, value)"
				     " VALUES (?1, ?2, ?3)",
				     &s->ins_counter, err)))
		return rc;
	sqlite3_stmt *st = s->ins_counter;
	sqlite3_bind_int64(st, 1, case_id);
	llmsim_sdb_bind_text(st, 2, name);
	sqlite3_bind_double(st, 3, value);
	return step_reset(s, st, "cannot write the counter", err);
}

int llmsim_store_add_step(struct llmsim_store *s, int64_t run_id, const struct llmsim_step_rec *x,
			  int64_t *step_id, struct llmsim_err *err)
{
	int rc = check_active(s, run_id, err);
	if (rc)
		return rc;
	if (!x->program[0] || !x->model_spec[0] ||
	    (strcmp(x->phase, "prefill") && strcmp(x->phase, "decode") && strcmp(x->phase, "train")))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: a step needs a program, a model and a phase (prefill, "
				      "decode or train)", s->path);
	if (!isfinite(x->time_median_s) || x->time_median_s <= 0 || x->batch < 1 || x->tokens < 1 ||
	    x->context < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s: step of '%s': time, batch and tokens must be positive",
				      s->path, x->model_spec);
	sqlite3_stmt *st;
	if ((rc = llmsim_sdb_prepare(
		 s,
		 "INSERT INTO steps (run_id, program, model_spec, phase, batch, tokens, context,"
		 " recompute, graph, time_median_s, time_p10_s, time_p90_s, kernel_time_s,"
		 " sm_clock_hz, power_w, mem_peak_allocated_bytes, mem_peak_reserved_bytes,"
		 " mem_device_total_bytes, reps, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
		 " ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
		 &st, err)))
		return rc;
	sqlite3_bind_int64(st, 1, run_id);
	llmsim_sdb_bind_text(st, 2, x->program);
	llmsim_sdb_bind_text(st, 3, x->model_spec);
	llmsim_sdb_bind_text(st, 4, x->phase);
	sqlite3_bind_int64(st, 5, x->batch);
	sqlite3_bind_int64(st, 6, x->tokens);
	sqlite3_bind_int64(st, 7, x->context);
	llmsim_sdb_bind_text(st, 8, x->recompute);
	sqlite3_bind_int(st, 9, x->graph ? 1 : 0);
	const double r[] = {x->time_median_s,  x->time_p10_s,
			    x->time_p90_s,	    x->kernel_time_s,
			    x->sm_clock_hz,	    x->power_w,
			    x->mem_peak_allocated_bytes, x->mem_peak_reserved_bytes,
			    x->mem_device_total_bytes};
	for (int i = 0; i < (int)(sizeof r / sizeof r[0]); i++)
		sqlite3_bind_double(st, 10 + i, r[i]); /* NaN binds as NULL */
	if (x->reps > 0)
		sqlite3_bind_int(st, 19, x->reps);
	else
		sqlite3_bind_null(st, 19);
	llmsim_sdb_bind_text(st, 20, x->notes);
	rc = step_reset(s, st, "cannot write the step", err);
	sqlite3_finalize(st);
	if (!rc && step_id)
		*step_id = sqlite3_last_insert_rowid(s->db);
	return rc;
}

int llmsim_store_run_commit(struct llmsim_store *s, int64_t run_id, struct llmsim_err *err)
{
	int rc = check_active(s, run_id, err);
	if (rc)
		return rc;
	sqlite3_stmt *st;
	if ((rc = llmsim_sdb_prepare(s, "UPDATE runs SET status = 'complete' WHERE id = ?1", &st,
				     err)))
		goto fail;
	sqlite3_bind_int64(st, 1, run_id);
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		rc = llmsim_sdb_err(s, err, "cannot finish the run");
		goto fail;
	}
	if ((rc = llmsim_sdb_exec(s, "COMMIT", err)))
		goto fail;
	s->active_run = 0;
	return 0;
fail:
	llmsim_store_run_abort(s);
	return rc;
}

void llmsim_store_run_abort(struct llmsim_store *s)
{
	if (!s || !s->active_run)
		return;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->active_run = 0;
	s->kernel_case = 0;
}
