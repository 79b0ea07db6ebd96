/*
 * test_hostile_store.c - SQLite files in real folders and in bad shape
 * (issue 25): a store llmsim wrote is in rollback-journal mode at rest; a
 * store left in WAL mode is read without writing anything next to it and
 * switched back by the next writer; a damaged index, a table replaced by a
 * view of an endless recursive query, a trigger, and references that
 * dangle are each refused in one line by every verb, and nothing is
 * written into such a file. No test asserts a time: the suite's .timeout
 * only catches a hang.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

static char dir[64];
static char out[1 << 16], err[8192];

static void setup(void)
{
	test_tmpdir_make(dir, sizeof dir, "hstore");
}

static void teardown(void)
{
	test_tmpdir_remove(dir);
}

TestSuite(hostile_store, .init = setup, .fini = teardown, .timeout = 120);

static const char *in_dir(const char *name)
{
	return test_path_in(dir, name);
}

/* A store holding the small fixture dump, as `calib import` writes it. */
static void make_store(const char *path)
{
	char fx[512], args[1024];
	snprintf(args, sizeof args, "calib import --db %s --in %s", path,
		 test_data(fx, sizeof fx, "calib/small_h200.tsv"));
	cr_assert_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
}

/* sql applied to the file with SQLite itself (a crafted or damaged file). */
static void apply_sql(const char *path, const char *sql)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
	sqlite3_close(db);
}

static char *file_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	char *buf = malloc(1 << 22);
	cr_assert_not_null(buf);
	*len = fread(buf, 1, 1 << 22, f);
	fclose(f);
	return buf;
}

/* Nothing beside path: no -wal, -shm or -journal. */
static void expect_alone(const char *path)
{
	static const char *const tails[] = {"-wal", "-shm", "-journal"};
	for (int i = 0; i < 3; i++) {
		char p[300];
		snprintf(p, sizeof p, "%s%s", path, tails[i]);
		cr_expect_neq(access(p, F_OK), 0, "%s was left beside the store", p);
	}
}

static void journal_mode(const char *path, char *mode, size_t size)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(mode, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Each read verb of the store, and an import into it: exit 1, one line
 * holding `has`, and the file's bytes as they were. */
static void every_verb_refuses(const char *db, const char *has)
{
	char args[1024], fx[512];
	size_t n0, n1;
	char *before = file_bytes(db, &n0);
	const char *verbs[] = {"calib show --db %1$s", "calib export --db %1$s",
			       "calib validate --db %1$s --gpu h200",
			       "calib fit --db %1$s --gpu h200 --out %1$s.yaml",
			       "calib import --db %1$s --in %2$s"};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		snprintf(args, sizeof args, verbs[i], db,
			 test_data(fx, sizeof fx, "calib/small_h200.tsv"));
		int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
		cr_expect_eq(rc, 1, "llmsim %s: exit %d: %s", args, rc, err);
		cr_expect_eq(count_lines(err), 1, "llmsim %s: one line: %s", args, err);
		cr_expect(strstr(err, has) != NULL, "llmsim %s: expected '%s' in: %s", args, has,
			  err);
	}
	char *after = file_bytes(db, &n1);
	cr_expect(n0 == n1 && !memcmp(before, after, n0), "%s: a verb wrote into it", db);
	expect_alone(db);
	free(before);
	free(after);
}

Test(hostile_store, written_stores_rest_in_rollback_journal_mode)
{
	char mode[32];
	make_store(in_dir("s.db"));
	journal_mode(in_dir("s.db"), mode, sizeof mode);
	cr_expect_str_eq(mode, "delete");
	expect_alone(in_dir("s.db"));
}

Test(hostile_store, wal_store_is_read_without_writing_beside_it)
{
	/* a store an older llmsim left in WAL mode, at rest (no -wal file) */
	make_store(in_dir("w.db"));
	apply_sql(in_dir("w.db"), "PRAGMA journal_mode=WAL");
	expect_alone(in_dir("w.db"));
	size_t n0, n1;
	char *before = file_bytes(in_dir("w.db"), &n0), args[512];
	const char *verbs[] = {"calib show --db %s", "calib export --db %s",
			       "calib validate --db %s --gpu h200"};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		snprintf(args, sizeof args, verbs[i], in_dir("w.db"));
		cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s: %s", args,
			     err);
		/* the -wal and -shm a WAL reader makes, and leaves when it may
		 * not checkpoint, stopped a shared folder's next writer */
		expect_alone(in_dir("w.db"));
	}
	char *after = file_bytes(in_dir("w.db"), &n1);
	cr_expect(n0 == n1 && !memcmp(before, after, n0), "a reader wrote into the store");
	free(before);
	free(after);
	/* the next writer (a run from another host) leaves it in rollback-
	 * journal mode */
	char fx[512], mode[32];
	snprintf(args, sizeof args, "sed s/calib-host/other-host/ %s > %s",
		 test_data(fx, sizeof fx, "calib/small_h200.tsv"), in_dir("other.tsv"));
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof args, "calib import --db %s --in %s", in_dir("w.db"),
		 in_dir("other.tsv"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	journal_mode(in_dir("w.db"), mode, sizeof mode);
	cr_expect_str_eq(mode, "delete");
	expect_alone(in_dir("w.db"));
}

Test(hostile_store, damaged_index_is_refused_by_every_verb)
{
	/* the index's entries no longer match its definition: every page is
	 * sound, so quick_check passed it; integrity_check does not */
	make_store(in_dir("i.db"));
	apply_sql(in_dir("i.db"), "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql ="
				  " 'CREATE INDEX cases_class ON cases(impl, split)'"
				  " WHERE name = 'cases_class'");
	every_verb_refuses(in_dir("i.db"), "database is corrupt or truncated (row ");
}

Test(hostile_store, view_of_an_endless_query_is_refused)
{
	/* this hung `calib show` and `calib import` */
	make_store(in_dir("v.db"));
	apply_sql(in_dir("v.db"), "ALTER TABLE runs RENAME TO runs0; CREATE VIEW runs AS"
				  " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
				  " SELECT runs0.* FROM runs0, c");
	every_verb_refuses(in_dir("v.db"), "'runs' is a view, not a table");
}

Test(hostile_store, trigger_is_refused)
{
	make_store(in_dir("t.db"));
	apply_sql(in_dir("t.db"), "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM cases;"
				  " END");
	every_verb_refuses(in_dir("t.db"), "holds a trigger ('t')");
}

Test(hostile_store, dangling_reference_is_refused)
{
	/* its export would not import */
	make_store(in_dir("d.db"));
	apply_sql(in_dir("d.db"), "DELETE FROM devices");
	every_verb_refuses(in_dir("d.db"), "database is damaged: row 1 of runs refers to a row of"
					   " devices");
}

Test(hostile_store, trace_file_with_a_trigger_takes_no_import)
{
	char fx[512], args[1024];
	snprintf(args, sizeof args, "trace import --db %s --in %s", in_dir("tr.db"),
		 test_data(fx, sizeof fx, "trace/llama_tiny.trace"));
	cr_assert_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
	apply_sql(in_dir("tr.db"), "CREATE TRIGGER t BEFORE INSERT ON trace_kernels BEGIN"
				   " SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION"
				   " ALL SELECT x + 1 FROM c) SELECT x FROM c); END");
	size_t n0, n1;
	char *before = file_bytes(in_dir("tr.db"), &n0);
	int rc = run_llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1, "%s", err);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	cr_expect(strstr(err, "holds a trigger ('t')") != NULL, "%s", err);
	char *after = file_bytes(in_dir("tr.db"), &n1);
	cr_expect(n0 == n1 && !memcmp(before, after, n0), "the import wrote into the file");
	free(before);
	free(after);
	snprintf(args, sizeof args, "trace show --db %s", in_dir("tr.db"));
	cr_expect_eq(run_llmsim(args, out, sizeof out, err, sizeof err), 1, "%s", err);
}
