/*
 * store_text.c - the calibration store as text: export every committed
 * run to a stable, tab-separated, diff-friendly file, and import such a
 * file (one transaction, renumbering ids) into a new or existing store.
 *
 * The format is described in store.h. Columns are named in a `columns`
 * line per table, so a dump of an older schema (missing the columns a later
 * version added) still loads, with those columns' defaults.
 */
#include "store_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/lines.h"

#define MAX_COLS 32
#define HEADER	 "llmsim-calib"

/* ---- export ------------------------------------------------------------ */

static void put_text(FILE *f, const unsigned char *t)
{
	for (; t && *t; t++) {
		switch (*t) {
		case '\\':
			fputs("\\\\", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			fputc(*t, f);
		}
	}
}

/* Integers as integers (byte counts, clocks in Hz), anything else with
 * the fewest significant digits that read back as exactly v. */
static void put_real(FILE *f, double v)
{
	char buf[40];
	if (v == floor(v) && fabs(v) < 1e15) {
		fprintf(f, "%.0f", v);
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

/* Rows of committed runs only (a run being written elsewhere is skipped). */
static const char *const export_where[TBL_COUNT] = {
    [TBL_DEVICES] = "id IN (SELECT device_id FROM runs WHERE status = 'complete')",
    [TBL_RUNS] = "status = 'complete'",
    [TBL_CASES] = "run_id IN (SELECT id FROM runs WHERE status = 'complete')",
    [TBL_KERNELS] = "case_id IN (SELECT c.id FROM cases c JOIN runs r ON r.id = c.run_id"
		    " WHERE r.status = 'complete')",
    [TBL_STEPS] = "run_id IN (SELECT id FROM runs WHERE status = 'complete')",
    [TBL_STEP_KERNELS] = "step_id IN (SELECT x.id FROM steps x JOIN runs r ON r.id = x.run_id"
			 " WHERE r.status = 'complete')",
    [TBL_COUNTERS] = "case_id IN (SELECT c.id FROM cases c JOIN runs r ON r.id = c.run_id"
		     " WHERE r.status = 'complete')",
};

static int export_table(struct llmsim_store *s, FILE *f, const struct store_table_info *t,
			const char *where, struct llmsim_err *err)
{
	char sql[1024];
	size_t n = 0;
	n += (size_t)snprintf(sql + n, sizeof sql - n, "SELECT ");
	fprintf(f, "columns\t%s", t->name);
	for (int i = 0; i < t->ncols; i++) {
		n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%s", i ? ", " : "",
				      t->cols[i].name);
		fprintf(f, "\t%s", t->cols[i].name);
	}
	fputc('\n', f);
	n += (size_t)snprintf(sql + n, sizeof sql - n, " FROM %s WHERE %s ORDER BY %s", t->name,
			      where, t->order_by);
	LLMSIM_ASSERT(n < sizeof sql);
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(s, sql, &st, err), r;
	if (rc)
		return rc;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		fputs(t->name, f);
		for (int i = 0; i < t->ncols; i++) {
			fputc('\t', f);
			if (sqlite3_column_type(st, i) == SQLITE_NULL) {
				if (t->cols[i].type == COL_TEXT) {
					/* the schema forbids it: a damaged store, whose
					 * dump would not import */
					sqlite3_finalize(st);
					return llmsim_err_set(err, LLMSIM_EDB,
							      "%s: table %s: column '%s' is NULL "
							      "(a damaged store)",
							      s->path, t->name, t->cols[i].name);
				}
				fputs("\\N", f);
				continue;
			}
			switch (t->cols[i].type) {
			case COL_INT:
				fprintf(f, "%lld", (long long)sqlite3_column_int64(st, i));
				break;
			case COL_REAL:
				put_real(f, sqlite3_column_double(st, i));
				break;
			case COL_TEXT:
				put_text(f, sqlite3_column_text(st, i));
				break;
			}
		}
		fputc('\n', f);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return llmsim_sdb_err(s, err, "cannot read the database");
	return 0;
}

int llmsim_store_export(struct llmsim_store *s, FILE *f, struct llmsim_err *err)
{
	/* One read transaction: a consistent snapshot across the tables. */
	int rc = llmsim_sdb_exec(s, s->active_run ? "SAVEPOINT export" : "BEGIN", err);
	if (rc)
		return rc;
	fprintf(f, "%s\tschema_version\t%d\n", HEADER, LLMSIM_STORE_SCHEMA_VERSION);
	for (int t = 0; t < TBL_COUNT && !rc; t++)
		rc = export_table(s, f, &llmsim_sdb_tables[t], export_where[t], err);
	sqlite3_exec(s->db, s->active_run ? "RELEASE export" : "COMMIT", NULL, NULL, NULL);
	if (!rc && (fflush(f) || ferror(f)))
		rc =
		    llmsim_err_set(err, LLMSIM_EIO, "cannot write the export: %s", strerror(errno));
	return rc;
}

/* ---- import ------------------------------------------------------------ */

/* Old id -> new id of one table; old ids arrive in increasing order. */
struct idmap {
	int64_t *old, *new_;
	size_t n, cap;
};

static int idmap_add(struct idmap *m, int64_t old, int64_t new_)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		int64_t *o = realloc(m->old, cap * sizeof *o);
		if (!o)
			return -1;
		m->old = o;
		int64_t *nw = realloc(m->new_, cap * sizeof *nw);
		if (!nw)
			return -1;
		m->new_ = nw;
		m->cap = cap;
	}
	m->old[m->n] = old;
	m->new_[m->n++] = new_;
	return 0;
}

static int idmap_find(const struct idmap *m, int64_t old, int64_t *new_)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->old[mid] < old)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->old[lo] == old) {
		*new_ = m->new_[lo];
		return 0;
	}
	return -1;
}

/* The column of each table that refers to another table, if any. */
static const struct {
	const char *col;
	enum store_table to;
} foreign[TBL_COUNT] = {
    [TBL_DEVICES] = {NULL, TBL_DEVICES},     [TBL_RUNS] = {"device_id", TBL_DEVICES},
    [TBL_CASES] = {"run_id", TBL_RUNS},	     [TBL_KERNELS] = {"case_id", TBL_CASES},
    [TBL_COUNTERS] = {"case_id", TBL_CASES}, [TBL_STEPS] = {"run_id", TBL_RUNS},
    [TBL_STEP_KERNELS] = {"step_id", TBL_STEPS},
};

struct value {
	int null;
	int64_t i;
	double r;
	char *t; /* points into the line buffer (unescaped in place) */
};

struct importer {
	struct llmsim_store *s;
	const char *name;
	int line;
	struct llmsim_err *err;
	int version;	       /* of the file */
	int table;	       /* current table, -1 before the first */
	int ncols;	       /* columns in the file's `columns` line */
	int colmap[MAX_COLS];  /* file column -> schema column */
	int present[MAX_COLS]; /* schema column given by the file */
	struct idmap map[TBL_COUNT];
	int64_t last_id[TBL_COUNT];
	int nrows[TBL_COUNT];
	sqlite3_stmt *ins[TBL_COUNT], *find_device, *find_run;
	const char *legacy;    /* schema 1-2: the operand data its runs held */
	int64_t *fit_runs;     /* file ids of runs whose operands may enter a fit */
	size_t nfit_runs, cap_fit_runs;
};

static int fit_run_add(struct importer *im, int64_t id)
{
	if (im->nfit_runs == im->cap_fit_runs) {
		size_t cap = im->cap_fit_runs ? 2 * im->cap_fit_runs : 16;
		int64_t *p = realloc(im->fit_runs, cap * sizeof *p);
		if (!p)
			return -1;
		im->fit_runs = p, im->cap_fit_runs = cap;
	}
	im->fit_runs[im->nfit_runs++] = id;
	return 0;
}

static int fit_run(const struct importer *im, int64_t id)
{
	/* runs come in increasing id order, cases after them: a short list */
	for (size_t i = im->nfit_runs; i-- > 0;)
		if (im->fit_runs[i] == id)
			return 1;
	return 0;
}

#define BAD(im, ...)                                                                               \
	llmsim_err_setloc((im)->err, LLMSIM_EPARSE, (im)->name, (im)->line, 0, __VA_ARGS__)

static int table_index(const char *name)
{
	for (int t = 0; t < TBL_COUNT; t++)
		if (!strcmp(llmsim_sdb_tables[t].name, name))
			return t;
	return -1;
}

static int col_index(const struct store_table_info *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return i;
	return -1;
}

/* Split a line on tabs in place; returns the field count (at most max). */
static int split_tabs(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line;;) {
		if (n == max)
			return max + 1;
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			return n;
		*tab = 0;
		p = tab + 1;
	}
}

static int unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r != '\\') {
			*w++ = *r;
			continue;
		}
		switch (*++r) {
		case '\\':
			*w++ = '\\';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 'r':
			*w++ = '\r';
			break;
		default:
			return -1;
		}
	}
	*w = 0;
	return 0;
}

static int parse_value(struct importer *im, const struct store_col *c, char *text, struct value *v)
{
	char *end;
	memset(v, 0, sizeof *v);
	if (!strcmp(text, "\\N")) {
		v->null = 1;
		return 0;
	}
	switch (c->type) {
	case COL_INT:
		errno = 0;
		v->i = strtoll(text, &end, 10);
		if (end == text || *end || errno)
			return BAD(im, "column '%s': expected an integer, got '%s'", c->name, text);
		return 0;
	case COL_REAL:
		errno = 0;
		v->r = strtod(text, &end);
		if (end == text || *end || errno == ERANGE || !isfinite(v->r))
			return BAD(im, "column '%s': expected a finite number, got '%s'", c->name,
				   text);
		return 0;
	case COL_TEXT:
		if (unescape(text))
			return BAD(im, "column '%s': bad escape (only \\\\ \\t \\n \\r \\N)",
				   c->name);
		v->t = text;
		return 0;
	}
	return 0;
}

static int columns_line(struct importer *im, char **f, int n)
{
	if (n < 2)
		return BAD(im, "'columns' needs a table name");
	int t = table_index(f[1]);
	if (t < 0)
		return BAD(im, "unknown table '%s'", f[1]);
	if (t <= im->table)
		return BAD(im,
			   "table '%s' out of order (expected devices, runs, cases, kernels,"
			   " counters, steps, step_kernels, each once)",
			   f[1]);
	const struct store_table_info *ti = &llmsim_sdb_tables[t];
	im->table = t;
	im->ncols = n - 2;
	memset(im->present, 0, sizeof im->present);
	for (int i = 2; i < n; i++) {
		int c = col_index(ti, f[i]);
		if (c < 0)
			return BAD(im, "unknown column '%s' in table '%s'", f[i], ti->name);
		if (im->present[c])
			return BAD(im, "column '%s' given twice", f[i]);
		im->present[c] = 1;
		im->colmap[i - 2] = c;
	}
	for (int c = 0; c < ti->ncols; c++)
		if (!im->present[c] &&
		    (!ti->cols[c].v1_default || (ti->cols[c].type == COL_TEXT && im->version >= 3)))
			return BAD(im, "table '%s' lacks column '%s'", ti->name, ti->cols[c].name);
	if (ti->since > im->version)
		return BAD(im, "table '%s' in a schema-%d dump (it came with schema %d)", ti->name,
			   im->version, ti->since);
	return 0;
}

/* "INSERT INTO t (every column but id) VALUES (?1, ...)", binding order
 * = schema order without id. */
static int prepare_insert(struct importer *im, int t)
{
	const struct store_table_info *ti = &llmsim_sdb_tables[t];
	char sql[1024];
	size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s (", ti->name);
	int k = 0;
	for (int c = 0; c < ti->ncols; c++)
		if (strcmp(ti->cols[c].name, "id"))
			n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%s", k++ ? ", " : "",
					      ti->cols[c].name);
	n += (size_t)snprintf(sql + n, sizeof sql - n, ") VALUES (");
	for (int i = 0; i < k; i++)
		n += (size_t)snprintf(sql + n, sizeof sql - n, "%s?%d", i ? ", " : "", i + 1);
	n += (size_t)snprintf(sql + n, sizeof sql - n, ")");
	LLMSIM_ASSERT(n < sizeof sql);
	return llmsim_sdb_prepare(im->s, sql, &im->ins[t], im->err);
}

/* Bind every non-id column of a row (schema order) to st from ?1. */
static void bind_row(sqlite3_stmt *st, const struct store_table_info *ti, const struct value *v)
{
	int k = 1;
	for (int c = 0; c < ti->ncols; c++) {
		if (!strcmp(ti->cols[c].name, "id"))
			continue;
		if (v[c].null)
			sqlite3_bind_null(st, k);
		else if (ti->cols[c].type == COL_INT)
			sqlite3_bind_int64(st, k, v[c].i);
		else if (ti->cols[c].type == COL_REAL)
			sqlite3_bind_double(st, k, v[c].r);
		else
			llmsim_sdb_bind_text(st, k, v[c].t);
		k++;
	}
}

static int db_bad(struct importer *im)
{
	return llmsim_err_setloc(im->err, LLMSIM_EPARSE, im->name, im->line, 0, "%s",
				 sqlite3_errmsg(im->s->db));
}

/* An identical device already in the store, or 0. */
static int existing_device(struct importer *im, const struct value *v, int64_t *id)
{
	const struct store_table_info *ti = &llmsim_sdb_tables[TBL_DEVICES];
	if (!im->find_device) {
		char sql[1024];
		size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT id FROM devices WHERE 1");
		int k = 0;
		for (int c = 0; c < ti->ncols; c++)
			if (strcmp(ti->cols[c].name, "id"))
				n += (size_t)snprintf(sql + n, sizeof sql - n, " AND %s IS ?%d",
						      ti->cols[c].name, ++k);
		n += (size_t)snprintf(sql + n, sizeof sql - n, " ORDER BY id LIMIT 1");
		LLMSIM_ASSERT(n < sizeof sql);
		int rc = llmsim_sdb_prepare(im->s, sql, &im->find_device, im->err);
		if (rc)
			return rc;
	}
	sqlite3_stmt *st = im->find_device;
	bind_row(st, ti, v);
	int r = sqlite3_step(st);
	*id = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : db_bad(im);
}

/* A run already present: same device, start, host, tool and notes (a
 * runner's classes may start within one second). */
static int check_new_run(struct importer *im, const struct value *v)
{
	if (!im->find_run) {
		int rc = llmsim_sdb_prepare(
		    im->s,
		    "SELECT id FROM runs WHERE device_id = ?1 AND started_at = ?2"
		    " AND host = ?3 AND tool = ?4 AND notes = ?5",
		    &im->find_run, im->err);
		if (rc)
			return rc;
	}
	/* schema order: id, device_id, started_at, host, tool, quick, notes, status */
	sqlite3_stmt *st = im->find_run;
	sqlite3_bind_int64(st, 1, v[1].i);
	llmsim_sdb_bind_text(st, 2, v[2].t);
	llmsim_sdb_bind_text(st, 3, v[3].t);
	llmsim_sdb_bind_text(st, 4, v[4].t);
	llmsim_sdb_bind_text(st, 5, v[6].t);
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (r == SQLITE_ROW)
		return BAD(im, "the run started %s on '%s' is already in the database",
			   v[2].t ? v[2].t : "", v[3].t ? v[3].t : "");
	return r == SQLITE_DONE ? 0 : db_bad(im);
}

static int row_line(struct importer *im, int t, char **f, int n)
{
	const struct store_table_info *ti = &llmsim_sdb_tables[t];
	struct value v[MAX_COLS];
	if (t != im->table)
		return BAD(im, "'%s' row outside its table (no 'columns' line for it before)",
			   ti->name);
	if (n - 1 != im->ncols)
		return BAD(im, "%d fields, expected %d", n - 1, im->ncols);
	for (int c = 0; c < ti->ncols; c++) {
		if (im->present[c])
			continue;
		/* A column the file's schema lacked: its (numeric) default, or
		 * for the runs' operand data what the caller said they held */
		memset(&v[c], 0, sizeof v[c]);
		if (ti->cols[c].type == COL_TEXT) {
			LLMSIM_ASSERT(t == TBL_RUNS && im->legacy);
			v[c].t = (char *)im->legacy;
			continue;
		}
		v[c].i = strtoll(ti->cols[c].v1_default, NULL, 10);
		v[c].r = strtod(ti->cols[c].v1_default, NULL);
	}
	for (int i = 0; i < im->ncols; i++) {
		int c = im->colmap[i];
		int rc = parse_value(im, &ti->cols[c], f[i + 1], &v[c]);
		if (rc)
			return rc;
		if (ti->cols[c].type == COL_TEXT && v[c].null)
			return BAD(im, "column '%s' may not be \\N", ti->cols[c].name);
	}
	int idc = col_index(ti, "id");
	if (idc >= 0) {
		if (v[idc].null)
			return BAD(im, "a %s row needs an id", ti->name);
		if (im->nrows[t] && v[idc].i <= im->last_id[t])
			return BAD(im, "%s ids must increase (%lld after %lld)", ti->name,
				   (long long)v[idc].i, (long long)im->last_id[t]);
		im->last_id[t] = v[idc].i;
	}
	/* the file's own run id (before it is renumbered below) */
	if (t == TBL_CASES && !v[1].null && !strcmp(v[5].t, "fit") && !fit_run(im, v[1].i))
		return BAD(im, "case '%s' is a fit case of run %lld, whose operands were not "
			   "normal: the grid data of earlier calibrations is retired from fits "
			   "(mark such cases 'probe', or re-measure on normal operands)",
			   v[2].t, (long long)v[1].i);
	if (foreign[t].col) {
		int fc = col_index(ti, foreign[t].col);
		int64_t to;
		if (v[fc].null || idmap_find(&im->map[foreign[t].to], v[fc].i, &to))
			return BAD(im, "%s refers to %s id %lld, which the file does not hold",
				   foreign[t].col, llmsim_sdb_tables[foreign[t].to].name,
				   v[fc].null ? -1LL : (long long)v[fc].i);
		v[fc].i = to;
	}
	im->nrows[t]++;
	int64_t new_id = 0;
	if (t == TBL_RUNS) {
		if (strcmp(v[7].t, "complete"))
			return BAD(im, "run status '%s': only complete runs can be imported",
				   v[7].t);
		if (!llmsim_store_operand_data_known(v[8].t))
			return BAD(im, "run %lld: unknown operand data '%s' (normal, grid, coarse, "
				   "zeros, randn, mixed, any or unknown)", (long long)v[0].i, v[8].t);
		if (llmsim_store_fit_data(v[8].t) && fit_run_add(im, v[0].i))
			return llmsim_err_set(im->err, LLMSIM_ENOMEM, "out of memory");
		int rc = check_new_run(im, v);
		if (rc)
			return rc;
	}
	if (t == TBL_CASES && strcmp(v[5].t, "fit") && strcmp(v[5].t, "holdout") &&
	    strcmp(v[5].t, "probe"))
		return BAD(im, "case '%s': split '%s' (fit, holdout or probe)", v[2].t, v[5].t);
	if (t == TBL_DEVICES) {
		int rc = existing_device(im, v, &new_id);
		if (rc)
			return rc;
	}
	if (!new_id) {
		if (!im->ins[t]) {
			int rc = prepare_insert(im, t);
			if (rc)
				return rc;
		}
		bind_row(im->ins[t], ti, v);
		int r = sqlite3_step(im->ins[t]);
		sqlite3_reset(im->ins[t]);
		sqlite3_clear_bindings(im->ins[t]);
		if (r != SQLITE_DONE)
			return db_bad(im);
		new_id = sqlite3_last_insert_rowid(im->s->db);
	}
	if (idc >= 0 && idmap_add(&im->map[t], v[idc].i, new_id))
		return llmsim_err_set(im->err, LLMSIM_ENOMEM, "out of memory");
	return 0;
}

static int header_line(struct importer *im, char **f, int n)
{
	char *end;
	long v = n == 3 ? strtol(f[2], &end, 10) : 0;
	if (n != 3 || strcmp(f[0], HEADER) || strcmp(f[1], "schema_version") || end == f[2] || *end)
		return BAD(im,
			   "not an llmsim calibration dump (expected '%s<TAB>schema_version"
			   "<TAB>N' as the first line)",
			   HEADER);
	if (v < 1 || v > LLMSIM_STORE_SCHEMA_VERSION)
		return BAD(im, "schema version %ld is not supported (this llmsim reads 1 to %d)", v,
			   LLMSIM_STORE_SCHEMA_VERSION);
	if (v < 3 && !im->legacy)
		return BAD(im,
			   "a schema-%ld dump: its runs do not say what their operands held (schema 3"
			   " records it; the grid-filled cases of earlier calibrations are retired from"
			   " fits): re-measure, or import with --legacy-operand-data DATA",
			   v);
	im->version = (int)v;
	return 0;
}

static int import_lines(struct importer *im, FILE *in)
{
	char *line, *f[MAX_COLS + 2];
	size_t len;
	int rc;
	struct llmsim_lines lr;
	llmsim_lines_init(&lr, in, im->name, LLMSIM_MAX_LINE, LLMSIM_MAX_CALIB_TEXT_BYTES,
			  "a calibration dump");
	while ((rc = llmsim_lines_next(&lr, &line, &len, im->err)) > 0) {
		rc = 0;
		im->line = lr.line;
		if (!len || line[0] == '#')
			continue;
		if (len != strlen(line)) {
			rc = BAD(im, "NUL byte in the line");
			break;
		}
		int n = split_tabs(line, f, MAX_COLS + 1);
		if (n > MAX_COLS) {
			rc = BAD(im, "too many fields");
			break;
		}
		if (!im->version)
			rc = header_line(im, f, n);
		else if (!strcmp(f[0], "columns"))
			rc = columns_line(im, f, n);
		else if (table_index(f[0]) >= 0)
			rc = row_line(im, table_index(f[0]), f, n);
		else
			rc = BAD(im, "unknown record type '%s'", f[0]);
		if (rc)
			break;
	}
	if (!rc && !im->version)
		rc = llmsim_err_set(im->err, LLMSIM_EPARSE,
				    "%s: empty file, not an llmsim calibration dump", im->name);
	llmsim_lines_release(&lr);
	return rc;
}

int llmsim_store_import(struct llmsim_store *s, FILE *in, const char *name, struct llmsim_err *err)
{
	return llmsim_store_import_opts(s, in, name, NULL, err);
}

int llmsim_store_import_opts(struct llmsim_store *s, FILE *in, const char *name,
			     const struct llmsim_store_import_opts *opts, struct llmsim_err *err)
{
	const char *legacy = opts ? opts->legacy_operand_data : NULL;
	if (legacy && !llmsim_store_operand_data_known(legacy))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "unknown operand data '%s' (normal, grid, coarse, zeros, randn,"
				      " mixed, any or unknown)", legacy);
	if (s->read_only)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: opened read-only", s->path);
	if (s->active_run)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: a run is open; commit it first",
				      s->path);
	struct importer im = {.s = s, .name = name, .err = err, .table = -1, .legacy = legacy};
	int rc = llmsim_sdb_exec(s, "BEGIN IMMEDIATE", err);
	if (rc)
		return rc;
	rc = import_lines(&im, in);
	for (int t = 0; t < TBL_COUNT; t++) {
		sqlite3_finalize(im.ins[t]);
		free(im.map[t].old);
		free(im.map[t].new_);
	}
	sqlite3_finalize(im.find_device);
	sqlite3_finalize(im.find_run);
	free(im.fit_runs);
	if (!rc)
		rc = llmsim_sdb_exec(s, "COMMIT", err);
	if (rc)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
