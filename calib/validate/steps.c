/*
 * steps.c - the `steps` validation class (see steps.h): every measured step
 * of the store predicted through llmsim_infer_run (`llmsim infer`'s
 * function) in the engine that ran it, and the classes of their errors.
 */
#include "steps.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/stats.h"
#include "sim/infer/infer.h"

/* The inference programs' predictor (below). */
static int steps_predict_infer(const struct llmsim_gpu *gpu, const struct llmsim_model *m,
			       struct llmsim_steps_row *row, struct llmsim_err *err);

const struct llmsim_steps_program llmsim_steps_programs[] = {
	{"lean_graph", "torch", "wall", "a lean PyTorch engine, one CUDA graph a step",
	 steps_predict_infer},
	{"hf_sdpa", "hf", "kernels", "HF transformers prefill, eager (its host gaps beside)",
	 steps_predict_infer},
	{"hf_sdpa_eager", "hf", "wall", "HF transformers decode, eager (launch-bound)",
	 steps_predict_infer},
	{"torch_train", "torch", "wall", "a one-GPU PyTorch training step (steps_train.py)",
	 llmsim_steps_predict_train},
	{NULL, NULL, NULL, NULL, NULL},
};

static const struct llmsim_steps_program *steps_program_find(const char *program)
{
	for (const struct llmsim_steps_program *p = llmsim_steps_programs; p->program; p++)
		if (!strcmp(p->program, program))
			return p;
	return NULL;
}

/* "model=NAME layers=N": the model's name and the layers (0: absent). */
static int parse_spec(const char *spec, char *model, size_t size, int *layers,
		      struct llmsim_err *err)
{
	model[0] = 0;
	*layers = 0;
	const char *p = spec;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		if (!strncmp(p, "model=", 6) && e - p > 6) {
			snprintf(model, size, "%.*s", (int)(e - p - 6), p + 6);
		} else if (!strncmp(p, "layers=", 7)) {
			char *end;
			long v = strtol(p + 7, &end, 10);
			if (end != e || v < 1 || v > 100000)
				return llmsim_err_set(err, LLMSIM_EINVAL,
						      "model_spec '%s': bad layers", spec);
			*layers = (int)v;
		}
		p = e;
	}
	if (!model[0])
		return llmsim_err_set(err, LLMSIM_EINVAL, "model_spec '%s' names no model=", spec);
	return 0;
}

/* The store's operand data of a run, as the op model names it. */
static enum llmsim_operand_data run_data(const char *d)
{
	static const struct {
		const char *store;
		enum llmsim_operand_data opd;
	} map[] = {{"randn", LLMSIM_OPD_RANDOM}, {"grid", LLMSIM_OPD_GRID},
		   {"coarse", LLMSIM_OPD_COARSE}, {"zeros", LLMSIM_OPD_ZEROS}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(d, map[i].store))
			return map[i].opd;
	return LLMSIM_OPD_TRAINED; /* normal: trained-like */
}

int llmsim_steps_run_one(struct llmsim_infer_cfg *cfg, int decode, int64_t batch, int64_t len,
			 struct llmsim_infer_result *res, struct llmsim_err *err)
{
	struct llmsim_infer_req req = {.batch = batch, .prompt = len};
	if (decode) {
		/* a step at `len` cached tokens: the first decode step after a
		 * prompt of that length */
		req.output = 2;
	} else {
		/* the whole batch in one step, as the program runs it */
		req.output = 1;
		cfg->max_step_tokens = batch * len;
	}
	return llmsim_infer_run(cfg, &req, res, err);
}

static int steps_predict_infer(const struct llmsim_gpu *gpu, const struct llmsim_model *m,
			       struct llmsim_steps_row *row, struct llmsim_err *err)
{
	const struct llmsim_step_rec *st = &row->st;
	int decode = !strcmp(st->phase, "decode");
	if (!decode && strcmp(st->phase, "prefill"))
		return llmsim_err_set(err, LLMSIM_EINVAL, "phase '%s' is not an inference step",
				      st->phase);
	int engine = llmsim_engine_parse(row->engine);
	if (engine < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "unknown engine '%s'", row->engine);
	struct llmsim_infer_cfg cfg;
	llmsim_infer_cfg_init(&cfg, m, gpu);
	llmsim_infer_cfg_engine(&cfg, (enum llmsim_engine)engine);
	cfg.runtime = st->graph ? LLMSIM_RT_GRAPH : LLMSIM_RT_EAGER;
	cfg.operand_data = row->operand_data;
	/* the program allocates its own cache: no engine's reserve */
	cfg.params.mem_utilization = 1.0;
	struct llmsim_infer_result res;
	int rc = llmsim_steps_run_one(&cfg, decode, st->batch, decode ? st->context : st->tokens,
				      &res, err);
	if (rc)
		return rc;
	const struct llmsim_phase *ph = decode ? &res.decode : &res.prefill;
	row->wall_predicted_s = ph->time_s;
	row->kernel_predicted_s = ph->cost.gpu_s;
	row->sm_clock_predicted_hz = ph->cost.sm_clock_hz;
	row->load_duty = ph->cost.load_duty;
	row->load_rho = ph->cost.load_rho;
	row->predicted_s = !strcmp(row->basis, "kernels") ? row->kernel_predicted_s
							 : row->wall_predicted_s;
	return 0;
}

/* ---- the report ---- */

struct collect {
	const struct llmsim_gpu *gpu;
	const char *program;
	struct llmsim_steps_report *r;
	char (*started)[32];        /* each row's run start */
	int64_t *run;
	int cap;
	int unknown;
	int rc;
	struct llmsim_err *err;
};

static int add_row(const struct llmsim_store_step_row *sr, void *ctx)
{
	struct collect *c = ctx;
	if (c->program && strcmp(sr->st.program, c->program))
		return 0;
	if (!steps_program_find(sr->st.program)) {
		c->unknown++;
		return 0;
	}
	struct llmsim_steps_report *r = c->r;
	if (r->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		void *a = realloc(r->rows, (size_t)cap * sizeof *r->rows);
		void *b = a ? realloc(c->started, (size_t)cap * sizeof *c->started) : NULL;
		if (b)
			c->started = b;
		void *d = b ? realloc(c->run, (size_t)cap * sizeof *c->run) : NULL;
		if (a)
			r->rows = a;
		if (!d) {
			c->rc = llmsim_err_set(c->err, LLMSIM_ENOMEM, "out of memory");
			return 1;
		}
		c->run = d;
		c->cap = cap;
	}
	struct llmsim_steps_row *w = &r->rows[r->n];
	memset(w, 0, sizeof *w);
	w->step_id = sr->step_id;
	w->st = sr->st;
	snprintf(c->started[r->n], sizeof c->started[0], "%s", sr->run.started_at);
	c->run[r->n] = sr->run_id;
	w->operand_data = run_data(sr->run.operand_data);
	r->n++;
	return 0;
}

static int same_shape(const struct llmsim_step_rec *a, const struct llmsim_step_rec *b)
{
	return !strcmp(a->program, b->program) && !strcmp(a->model_spec, b->model_spec) &&
	       !strcmp(a->phase, b->phase) && a->batch == b->batch && a->tokens == b->tokens &&
	       a->context == b->context && !strcmp(a->recompute, b->recompute);
}

static double nan_or(double v)
{
	return isfinite(v) ? v : NAN;
}

/* Predict one row through its program's predictor. */
static void predict_row(const struct llmsim_gpu *gpu, struct llmsim_steps_row *w)
{
	const struct llmsim_steps_program *p = steps_program_find(w->st.program);
	struct llmsim_err err = {0};
	struct llmsim_model m;
	w->engine = p->engine;
	w->basis = p->basis;
	w->wall_measured_s = w->st.time_median_s;
	w->kernel_measured_s = nan_or(w->st.kernel_time_s);
	w->sm_clock_measured_hz = nan_or(w->st.sm_clock_hz);
	w->measured_s = !strcmp(w->basis, "kernels") ? w->kernel_measured_s : w->wall_measured_s;
	w->predicted_s = w->err_pct = NAN;
	w->mem_measured_bytes = nan_or(w->st.mem_peak_allocated_bytes);
	w->mem_reserved_measured_bytes = nan_or(w->st.mem_peak_reserved_bytes);
	w->mem_predicted_bytes = w->mem_err_pct = w->mem_reserved_predicted_bytes = NAN;
	w->kernel_predicted_s = w->wall_predicted_s = w->sm_clock_predicted_hz = NAN;
	int rc = parse_spec(w->st.model_spec, w->model, sizeof w->model, &w->layers, &err);
	if (!rc)
		rc = llmsim_model_load_named(w->model, &m, &err);
	if (!rc && w->layers > m.layers)
		rc = llmsim_err_set(&err, LLMSIM_EINVAL, "the program ran %d layers, %s has %d",
				    w->layers, m.name, m.layers);
	if (!rc && !(w->measured_s > 0))
		rc = llmsim_err_set(&err, LLMSIM_EINVAL, "no measured %s time",
				    !strcmp(w->basis, "kernels") ? "kernel" : "wall");
	if (!rc) {
		/* the model the program ran: its layers, and whatever context
		 * it ran them at (RoPE runs past a model's trained positions) */
		if (w->layers > 0)
			m.layers = w->layers;
		else
			w->layers = m.layers;
		m.max_seq = 0;
		rc = p->predict(gpu, &m, w, &err);
	}
	if (rc) {
		snprintf(w->error, sizeof w->error, "%s", err.msg[0] ? err.msg : "failed");
		return;
	}
	w->ok = 1;
	w->err_pct = 100.0 * (w->predicted_s - w->measured_s) / w->measured_s;
	if (isfinite(w->mem_measured_bytes) && w->mem_measured_bytes > 0 &&
	    isfinite(w->mem_predicted_bytes))
		w->mem_err_pct =
			100.0 * (w->mem_predicted_bytes - w->mem_measured_bytes) / w->mem_measured_bytes;
}

/* The statistics of one class over the rows `in` picks. */
static void class_stats(const struct llmsim_steps_report *r, struct llmsim_steps_class *k,
			const unsigned char *in, int memory, double *abs, double *sgn)
{
	int n = 0;
	double worst = -1;
	for (int i = 0; i < r->n; i++) {
		const struct llmsim_steps_row *w = &r->rows[i];
		if (!in[i])
			continue;
		double e = memory ? w->mem_err_pct : w->err_pct;
		if (!w->ok || !isfinite(e)) {
			k->failed++;
			continue;
		}
		abs[n] = fabs(e);
		sgn[n] = e;
		n++;
		if (fabs(e) <= LLMSIM_STEPS_TARGET_PCT)
			k->within_target++;
		if (fabs(e) > worst) {
			worst = fabs(e);
			k->worst_pct = e;
			k->worst_step_id = w->step_id;
		}
	}
	k->n = n;
	k->median_abs_pct = llmsim_quantile(abs, (size_t)n, 0.5);
	k->p80_abs_pct = llmsim_quantile_cover(abs, (size_t)n, 0.8); /* covers 80% */
	k->p90_abs_pct = llmsim_quantile(abs, (size_t)n, 0.9);
	k->median_signed_pct = llmsim_quantile(sgn, (size_t)n, 0.5);
	if (!n)
		k->worst_pct = NAN;
}

/* Whether row w belongs to class k. */
static int member(const struct llmsim_steps_row *w, const struct llmsim_steps_class *k)
{
	return !strcmp(w->st.program, k->program) && !strcmp(w->st.phase, k->phase) &&
	       !strcmp(w->st.recompute, k->recompute) &&
	       (strcmp(k->quantity, "memory") || isfinite(w->mem_measured_bytes));
}

/* Every class of r's rows, in the order they first appear: time, and for
 * rows that measured it, memory. */
static void classes(struct llmsim_steps_report *r, double *abs, double *sgn, unsigned char *in)
{
	static const char *const quantity[2] = {"time", "memory"};
	for (int i = 0; i < r->n; i++)
		for (int q = 0; q < 2; q++) {
			const struct llmsim_steps_row *w = &r->rows[i];
			if (q && !isfinite(w->mem_measured_bytes))
				continue;
			struct llmsim_steps_class k = {.quantity = quantity[q]};
			snprintf(k.program, sizeof k.program, "%s", w->st.program);
			snprintf(k.phase, sizeof k.phase, "%s", w->st.phase);
			snprintf(k.recompute, sizeof k.recompute, "%s", w->st.recompute);
			int seen = 0;
			for (int c = 0; c < r->nclasses && !seen; c++)
				seen = member(w, &r->classes[c]) && r->classes[c].quantity == k.quantity;
			if (seen || r->nclasses >= LLMSIM_STEPS_MAX_CLASSES)
				continue;
			k.engine = steps_program_find(k.program)->engine;
			for (int j = 0; j < r->n; j++)
				in[j] = (unsigned char)member(&r->rows[j], &k);
			class_stats(r, &k, in, q, abs, sgn);
			r->classes[r->nclasses++] = k;
		}
}

int llmsim_steps_validate(struct llmsim_store *s, const struct llmsim_gpu *gpu,
			  const char *program, struct llmsim_steps_report *out,
			  struct llmsim_err *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->gpu, sizeof out->gpu, "%s", gpu->name);
	struct collect c = {.gpu = gpu, .program = program, .r = out, .err = err};
	struct llmsim_store_step_filter f = {.hw_name = gpu->name};
	int rc = llmsim_store_steps(s, &f, add_row, &c, err);
	if (!rc)
		rc = c.rc;
	out->unknown_program = c.unknown;
	if (!rc && !out->n)
		rc = llmsim_err_set(err, LLMSIM_ENOENT, "no measured steps%s%s%s of GPU '%s'",
				    program ? " of program '" : "", program ? program : "",
				    program ? "'" : "", gpu->name);
	/* a later run of the same shape supersedes: keep the latest */
	unsigned char *keep = rc ? NULL : malloc((size_t)out->n);
	if (!rc && !keep)
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	if (rc) {
		free(c.started);
		free(c.run);
		llmsim_steps_report_free(out);
		return rc;
	}
	for (int i = 0; i < out->n; i++) {
		keep[i] = 1;
		for (int j = 0; j < out->n && keep[i]; j++) {
			if (j == i || c.run[j] == c.run[i] ||
			    !same_shape(&out->rows[i].st, &out->rows[j].st))
				continue;
			int later = strcmp(c.started[j], c.started[i]);
			if (later > 0 || (later == 0 && c.run[j] > c.run[i]))
				keep[i] = 0;
		}
	}
	int n = 0;
	for (int i = 0; i < out->n; i++)
		if (keep[i])
			out->rows[n++] = out->rows[i];
	out->superseded = out->n - n;
	out->n = n;
	free(c.started);
	free(c.run);
	for (int i = 0; i < out->n; i++)
		predict_row(gpu, &out->rows[i]);
	double *buf = malloc(2 * (size_t)(out->n ? out->n : 1) * sizeof *buf);
	if (!buf) {
		free(keep);
		llmsim_steps_report_free(out);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	classes(out, buf, buf + out->n, keep);
	free(buf);
	free(keep);
	return 0;
}

void llmsim_steps_report_free(struct llmsim_steps_report *r)
{
	if (!r)
		return;
	free(r->rows);
	r->rows = NULL;
	r->n = 0;
}

const struct llmsim_steps_class *llmsim_steps_class_find(const struct llmsim_steps_report *r,
							 const char *program, const char *phase,
							 const char *quantity)
{
	for (int c = 0; c < r->nclasses; c++) {
		const struct llmsim_steps_class *k = &r->classes[c];
		if (!strcmp(k->program, program) && !strcmp(k->phase, phase) &&
		    !strcmp(k->quantity, quantity))
			return k;
	}
	return NULL;
}

/* The profile block of r's inference time classes (the GPU's whole-step
 * expected errors, read back by the loader into gpu->step_errors):
 *   steps_errors:  # whole steps: ...
 *     torch/prefill: {p80: 6.1, median: 3.2, bias: -2.4, n: 40, program: lean_graph}
 * keyed engine/phase (the engine a user picks); written to f. Training's
 * are torch/train and torch/train_memory, over every torch_train step
 * whatever its recompute (steps_train.c). */
static void steps_write_profile(FILE *f, const struct llmsim_steps_report *r)
{
	int any = 0;
	for (int c = 0; c <= r->nclasses; c++) {
		const struct llmsim_steps_class *k = c < r->nclasses ? &r->classes[c] : NULL;
		if (k && (strcmp(k->quantity, "time") || k->recompute[0] || k->n < 1))
			continue;
		if (!k && !llmsim_steps_class_find(r, "torch_train", "train", "time"))
			break;
		if (!any++)
			fputs("steps_errors:  # whole steps, measured programs (llmsim calib validate): "
			      "|predicted - measured| / measured, %; p80 covers 80% of the class\n",
			      f);
		if (!k) { /* training (steps_train.c) */
			llmsim_steps_write_train_profile(f, r);
			break;
		}
		/* p80 rounded up: the printed bar still covers 80% */
		fprintf(f, "  %s/%s: {p80: %.2f, median: %.2f, bias: %+.2f, n: %d, program: %s}\n",
			k->engine, k->phase, ceil(k->p80_abs_pct * 100 - 1e-9) / 100,
			k->median_abs_pct, k->median_signed_pct, k->n, k->program);
	}
}

int llmsim_steps_update_profile(const char *path, const struct llmsim_steps_report *r,
				struct llmsim_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return llmsim_err_set(err, LLMSIM_EIO, "%s: %s", path, strerror(errno));
	char *text = NULL;
	size_t len = 0, cap = 0;
	char line[4096];
	int skip = 0;
	while (fgets(line, sizeof line, f)) {
		/* the old block: its key line and the indented lines under it */
		if (!strncmp(line, "steps_errors:", 13))
			skip = 1;
		else if (skip && line[0] != ' ' && line[0] != '\n')
			skip = 0;
		if (skip)
			continue;
		size_t n = strlen(line);
		if (len + n + 1 > cap) {
			cap = 2 * (len + n + 1);
			char *t = realloc(text, cap);
			if (!t) {
				free(text);
				fclose(f);
				return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
			}
			text = t;
		}
		memcpy(text + len, line, n + 1);
		len += n;
	}
	fclose(f);
	if (!(f = fopen(path, "w"))) {
		free(text);
		return llmsim_err_set(err, LLMSIM_EIO, "%s: %s", path, strerror(errno));
	}
	if (len)
		fwrite(text, 1, len, f);
	free(text);
	steps_write_profile(f, r);
	if (fclose(f))
		return llmsim_err_set(err, LLMSIM_EIO, "%s: %s", path, strerror(errno));
	return 0;
}
