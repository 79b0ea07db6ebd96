/*
 * store_read.c - the calibration store's read API: committed runs, cases
 * with their run and device (filtered), and a case's kernels and counters.
 */
#include "store_impl.h"

#include <string.h>

#define DEVICE_COLS                                                                                \
	"d.id, d.name, d.hw_name, d.uuid, d.sms, d.device_count, d.hbm_bytes,"                     \
	" d.l2_bytes, d.sm_clock_max_hz, d.mem_clock_hz, d.driver, d.cuda_runtime,"                \
	" d.cupti, d.cublas, d.nccl"
#define NDEVICE_COLS 15
#define RUN_COLS     "r.id, r.started_at, r.host, r.tool, r.quick, r.notes, r.status, r.operand_data"
#define NRUN_COLS    8

static int read_device(sqlite3_stmt *st, int i, struct llmsim_device_info *d)
{
	memset(d, 0, sizeof *d);
	llmsim_sdb_col_text(st, i + 1, d->name, sizeof d->name);
	llmsim_sdb_col_text(st, i + 2, d->hw_name, sizeof d->hw_name);
	llmsim_sdb_col_text(st, i + 3, d->uuid, sizeof d->uuid);
	d->sms = sqlite3_column_int(st, i + 4);
	d->device_count = sqlite3_column_int(st, i + 5);
	d->hbm_bytes = llmsim_sdb_col_real(st, i + 6);
	d->l2_bytes = llmsim_sdb_col_real(st, i + 7);
	d->sm_clock_max_hz = llmsim_sdb_col_real(st, i + 8);
	d->mem_clock_hz = llmsim_sdb_col_real(st, i + 9);
	llmsim_sdb_col_text(st, i + 10, d->driver, sizeof d->driver);
	llmsim_sdb_col_text(st, i + 11, d->cuda_runtime, sizeof d->cuda_runtime);
	llmsim_sdb_col_text(st, i + 12, d->cupti, sizeof d->cupti);
	llmsim_sdb_col_text(st, i + 13, d->cublas, sizeof d->cublas);
	llmsim_sdb_col_text(st, i + 14, d->nccl, sizeof d->nccl);
	return i + NDEVICE_COLS;
}

static int read_run(sqlite3_stmt *st, int i, struct llmsim_run_info *r, char *status,
		    size_t status_size)
{
	memset(r, 0, sizeof *r);
	llmsim_sdb_col_text(st, i + 1, r->started_at, sizeof r->started_at);
	llmsim_sdb_col_text(st, i + 2, r->host, sizeof r->host);
	llmsim_sdb_col_text(st, i + 3, r->tool, sizeof r->tool);
	r->quick = sqlite3_column_int(st, i + 4);
	llmsim_sdb_col_text(st, i + 5, r->notes, sizeof r->notes);
	if (status)
		llmsim_sdb_col_text(st, i + 6, status, status_size);
	llmsim_sdb_col_text(st, i + 7, r->operand_data, sizeof r->operand_data);
	return i + NRUN_COLS;
}

/* The caller's callback, whichever kind it is. */
struct cb {
	union {
		int (*run)(const struct llmsim_store_run_row *row, void *ctx);
		int (*cas)(const struct llmsim_store_case_row *row, void *ctx);
		int (*kernel)(const struct llmsim_kernel_rec *k, void *ctx);
		int (*step)(const struct llmsim_store_step_row *row, void *ctx);
	} fn;
	void *ctx;
};

typedef int (*row_fn)(sqlite3_stmt *st, const struct cb *cb);

/* Step st to the end, turning each row into a callback; finalizes st. */
static int each_row(struct llmsim_store *s, sqlite3_stmt *st, row_fn rf, const struct cb *cb,
		    struct llmsim_err *err)
{
	int r, rc = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = rf(st, cb)))
			break;
	if (!rc && r != SQLITE_DONE)
		rc = llmsim_sdb_err(s, err, "cannot read the database");
	sqlite3_finalize(st);
	return rc;
}

static int runs_row(sqlite3_stmt *st, const struct cb *cb)
{
	struct llmsim_store_run_row row;
	int i = read_run(st, 0, &row.run, row.status, sizeof row.status);
	row.run_id = sqlite3_column_int64(st, 0);
	row.device_id = sqlite3_column_int64(st, i);
	i = read_device(st, i, &row.dev);
	row.ncases = sqlite3_column_int64(st, i);
	return cb->fn.run(&row, cb->ctx);
}

int llmsim_store_runs(struct llmsim_store *s,
		      int (*fn)(const struct llmsim_store_run_row *row, void *ctx), void *ctx,
		      struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(s,
				    "SELECT " RUN_COLS ", " DEVICE_COLS ","
				    " (SELECT count(*) FROM cases c WHERE c.run_id = r.id)"
				    " FROM runs r JOIN devices d ON d.id = r.device_id"
				    " WHERE r.status = 'complete' ORDER BY r.id",
				    &st, err);
	if (rc)
		return rc;
	struct cb cb = {.fn.run = fn, .ctx = ctx};
	return each_row(s, st, runs_row, &cb, err);
}

static int cases_row(sqlite3_stmt *st, const struct cb *cb)
{
	struct llmsim_store_case_row row;
	struct llmsim_case *c = &row.c;
	memset(c, 0, sizeof *c);
	row.case_id = sqlite3_column_int64(st, 0);
	llmsim_sdb_col_text(st, 1, c->op_spec, sizeof c->op_spec);
	llmsim_sdb_col_text(st, 2, c->op_class, sizeof c->op_class);
	llmsim_sdb_col_text(st, 3, c->impl, sizeof c->impl);
	llmsim_sdb_col_text(st, 4, c->split, sizeof c->split);
	c->flops_declared = llmsim_sdb_col_real(st, 5);
	c->bytes_declared = llmsim_sdb_col_real(st, 6);
	c->reps = sqlite3_column_int(st, 7);
	c->time_median_s = llmsim_sdb_col_real(st, 8);
	c->time_min_s = llmsim_sdb_col_real(st, 9);
	c->time_p10_s = llmsim_sdb_col_real(st, 10);
	c->time_p90_s = llmsim_sdb_col_real(st, 11);
	c->sm_clock_hz = llmsim_sdb_col_real(st, 12);
	c->check_rel_err = llmsim_sdb_col_real(st, 13);
	c->load_s = llmsim_sdb_col_real(st, 14);
	if (!(c->load_s > 0))
		c->load_s = 0;
	int i = read_run(st, 15, &row.run, NULL, 0);
	row.run_id = sqlite3_column_int64(st, 15);
	row.device_id = sqlite3_column_int64(st, i);
	read_device(st, i, &row.dev);
	return cb->fn.cas(&row, cb->ctx);
}

int llmsim_store_cases(struct llmsim_store *s, const struct llmsim_store_filter *f,
		       int (*fn)(const struct llmsim_store_case_row *row, void *ctx), void *ctx,
		       struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(s,
				    "SELECT c.id, c.op_spec, c.op_class, c.impl, c.split,"
				    " c.flops_declared, c.bytes_declared, c.reps, c.time_median_s,"
				    " c.time_min_s, c.time_p10_s, c.time_p90_s, c.sm_clock_hz,"
				    " c.check_rel_err, c.load_s, " RUN_COLS ", " DEVICE_COLS
				    " FROM cases c JOIN runs r ON r.id = c.run_id"
				    " JOIN devices d ON d.id = r.device_id"
				    " WHERE r.status = 'complete'"
				    " AND (?1 IS NULL OR d.hw_name = ?1)"
				    " AND (?2 IS NULL OR c.op_class = ?2)"
				    " AND (?3 IS NULL OR c.split = ?3)"
				    " AND (?4 IS NULL OR r.operand_data IN ('normal', 'any'))"
				    " ORDER BY r.id, c.id",
				    &st, err);
	if (rc)
		return rc;
	const char *v[3] = {f ? f->hw_name : NULL, f ? f->op_class : NULL, f ? f->split : NULL};
	for (int i = 0; i < 3; i++)
		if (v[i] && *v[i])
			llmsim_sdb_bind_text(st, i + 1, v[i]);
	if (f && f->fit_data)
		sqlite3_bind_int(st, 4, 1);
	struct cb cb = {.fn.cas = fn, .ctx = ctx};
	return each_row(s, st, cases_row, &cb, err);
}

int llmsim_store_counter(struct llmsim_store *s, int64_t case_id, const char *name, double *value,
			 struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(
	    s, "SELECT value FROM counters WHERE case_id = ?1 AND name = ?2", &st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, case_id);
	llmsim_sdb_bind_text(st, 2, name);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*value = llmsim_sdb_col_real(st, 0);
	else if (r == SQLITE_DONE)
		rc = llmsim_err_set(err, LLMSIM_ENOENT, "case %lld has no counter '%s'",
				    (long long)case_id, name);
	else
		rc = llmsim_sdb_err(s, err, "cannot read the database");
	sqlite3_finalize(st);
	return rc;
}

static int kernels_row(sqlite3_stmt *st, const struct cb *cb)
{
	struct llmsim_kernel_rec k;
	memset(&k, 0, sizeof k);
	llmsim_sdb_col_text(st, 0, k.name, sizeof k.name);
	for (int i = 0; i < 3; i++) {
		k.grid[i] = sqlite3_column_int(st, 1 + i);
		k.block[i] = sqlite3_column_int(st, 4 + i);
	}
	k.regs_per_thread = sqlite3_column_int(st, 7);
	k.static_smem_bytes = sqlite3_column_int(st, 8);
	k.dynamic_smem_bytes = sqlite3_column_int(st, 9);
	k.duration_median_s = llmsim_sdb_col_real(st, 10);
	k.launches_per_rep = sqlite3_column_int(st, 11);
	return cb->fn.kernel(&k, cb->ctx);
}

int llmsim_store_kernels(struct llmsim_store *s, int64_t case_id,
			 int (*fn)(const struct llmsim_kernel_rec *k, void *ctx), void *ctx,
			 struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc =
	    llmsim_sdb_prepare(s,
			       "SELECT name, grid_x, grid_y, grid_z, block_x, block_y, block_z,"
			       " regs_per_thread, static_smem_bytes, dynamic_smem_bytes,"
			       " duration_median_s, launches_per_rep FROM kernels"
			       " WHERE case_id = ?1 ORDER BY seq, id",
			       &st, err);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, case_id);
	struct cb cb = {.fn.kernel = fn, .ctx = ctx};
	return each_row(s, st, kernels_row, &cb, err);
}

static int steps_row(sqlite3_stmt *st, const struct cb *cb)
{
	struct llmsim_store_step_row row;
	struct llmsim_step_rec *x = &row.st;
	memset(x, 0, sizeof *x);
	row.step_id = sqlite3_column_int64(st, 0);
	llmsim_sdb_col_text(st, 1, x->program, sizeof x->program);
	llmsim_sdb_col_text(st, 2, x->model_spec, sizeof x->model_spec);
	llmsim_sdb_col_text(st, 3, x->phase, sizeof x->phase);
	x->batch = sqlite3_column_int64(st, 4);
	x->tokens = sqlite3_column_int64(st, 5);
	x->context = sqlite3_column_int64(st, 6);
	llmsim_sdb_col_text(st, 7, x->recompute, sizeof x->recompute);
	x->graph = sqlite3_column_int(st, 8);
	double *r[] = {&x->time_median_s, &x->time_p10_s, &x->time_p90_s, &x->kernel_time_s,
		       &x->sm_clock_hz, &x->power_w, &x->mem_peak_allocated_bytes,
		       &x->mem_peak_reserved_bytes, &x->mem_device_total_bytes};
	for (int i = 0; i < (int)(sizeof r / sizeof r[0]); i++)
		*r[i] = llmsim_sdb_col_real(st, 9 + i);
	x->reps = sqlite3_column_int(st, 18);
	llmsim_sdb_col_text(st, 19, x->notes, sizeof x->notes);
	int i = read_run(st, 20, &row.run, NULL, 0);
	row.run_id = sqlite3_column_int64(st, 20);
	row.device_id = sqlite3_column_int64(st, i);
	read_device(st, i, &row.dev);
	return cb->fn.step(&row, cb->ctx);
}

int llmsim_store_steps(struct llmsim_store *s, const struct llmsim_store_step_filter *f,
		       int (*fn)(const struct llmsim_store_step_row *row, void *ctx), void *ctx,
		       struct llmsim_err *err)
{
	sqlite3_stmt *st;
	int rc = llmsim_sdb_prepare(s,
				    "SELECT x.id, x.program, x.model_spec, x.phase, x.batch, x.tokens,"
				    " x.context, x.recompute, x.graph, x.time_median_s, x.time_p10_s,"
				    " x.time_p90_s, x.kernel_time_s, x.sm_clock_hz, x.power_w,"
				    " x.mem_peak_allocated_bytes, x.mem_peak_reserved_bytes,"
				    " x.mem_device_total_bytes, x.reps, x.notes, " RUN_COLS
				    ", " DEVICE_COLS " FROM steps x JOIN runs r ON r.id = x.run_id"
				    " JOIN devices d ON d.id = r.device_id"
				    " WHERE r.status = 'complete'"
				    " AND (?1 IS NULL OR d.hw_name = ?1)"
				    " AND (?2 IS NULL OR x.program = ?2)"
				    " AND (?3 IS NULL OR x.phase = ?3)"
				    " ORDER BY r.id, x.id",
				    &st, err);
	if (rc)
		return rc;
	const char *v[3] = {f ? f->hw_name : NULL, f ? f->program : NULL, f ? f->phase : NULL};
	for (int i = 0; i < 3; i++)
		if (v[i] && *v[i])
			llmsim_sdb_bind_text(st, i + 1, v[i]);
	struct cb cb = {.fn.step = fn, .ctx = ctx};
	return each_row(s, st, steps_row, &cb, err);
}

