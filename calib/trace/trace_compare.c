/*
 * trace_compare.c - a captured trace against the GPU model: each kernel's
 * op recovered (trace_analyze.h explains how), predicted with
 * llmsim_predict, and summed per row, class, phase and in total; with a
 * target GPU, the same program replayed there. Rows and phases are found
 * by hash (base/hash.h), so the time is linear in the trace however many
 * distinct kernels and phases it holds (bench/bench_trace.c).
 */
#include "trace_analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "base/stats.h"

#define MAX_SPECS 8

void llmsim_trace_cmp_release(struct llmsim_trace_cmp *c)
{
	if (!c)
		return;
	free(c->rows);
	free(c->phases);
	memset(c, 0, sizeof *c);
}

/* How an unmatched kernel of class c scales from gpu to target: the ratio
 * of the resource the class is bound by (source / target), and its name:
 * gemm and attention by the bf16 dense peak, elementwise, normalization,
 * other and device copies by HBM bandwidth, host copies by PCIe, and
 * communication by NVLink bandwidth. dir is a copy's direction or NULL. */
static double trace_replay_ratio(enum llmsim_trace_class c, const char *dir,
				 const struct llmsim_gpu *gpu, const struct llmsim_gpu *target,
				 const char **rule)
{
	double a = 0, b = 0;
	const char *r;
	if (c == LLMSIM_TC_GEMM || c == LLMSIM_TC_ATTENTION) {
		a = llmsim_gpu_peak_flops(gpu, LLMSIM_DT_BF16);
		b = llmsim_gpu_peak_flops(target, LLMSIM_DT_BF16);
		r = "bf16 dense peak ratio";
	} else if (c == LLMSIM_TC_COMMUNICATION) {
		a = gpu->intra_node_bytes_per_s, b = target->intra_node_bytes_per_s;
		r = "NVLink bandwidth ratio";
	} else if (c == LLMSIM_TC_COPIES && dir && (!strcmp(dir, "HtoD") || !strcmp(dir, "DtoH"))) {
		a = gpu->pcie_bytes_per_s, b = target->pcie_bytes_per_s;
		r = "PCIe bandwidth ratio";
	} else {
		a = gpu->hbm_bytes_per_s, b = target->hbm_bytes_per_s;
		r = "HBM bandwidth ratio";
	}
	if (rule)
		*rule = r;
	return a > 0 && b > 0 ? a / b : 1.0;
}

static int range_index(const struct llmsim_trace *t, int64_t id)
{
	const struct llmsim_trace_range *r = id > 0 ? llmsim_trace_range(t, id) : NULL;
	return r ? (int)(r - t->ranges) : -1;
}

struct ctx {
	const struct llmsim_trace *t;
	const struct llmsim_gpu *gpu, *target;
	struct llmsim_trace_cmp *out;
	int *op_of, *phase_of;    /* per range index: innermost op / phase range, -1 */
	double *load_of;          /* per phase range index: the op's load_duty */
	double load;              /* load_duty of the ops being priced */
	int cur_ph;               /* phase range index of the ops being priced */
	const double *rho_of;     /* per phase range index: its load's rho (2nd pass) */
	double *rho_t, *busy_t;   /* per phase range index: sum rho*t, t (1st pass) */
	int phases_only;
	struct llmsim_trace_graphs *tg; /* the model's graphs (NULL: no model) */
	int (*fn)(const struct llmsim_trace_instance *in, void *ctx);
	void *fnctx;
	int cur_range;            /* the op range of the ops being compared (-1: by order) */
	struct llmsim_hindex row_ix, phase_ix; /* rows by key, phases by name */
};

/* Whether a record launched in range id is left out (PHASES_ONLY). */
static int excluded(struct ctx *c, int64_t range_id, double s)
{
	if (!c->phases_only)
		return 0;
	int ri = range_index(c->t, range_id);
	if (ri >= 0 && c->phase_of[ri] >= 0)
		return 0;
	c->out->excluded_kernels++;
	c->out->excluded_s += s;
	return 1;
}

struct phase_key {
	const struct llmsim_trace_cmp *o;
	const char *name;
};

static int same_phase(size_t pos, const void *key)
{
	const struct phase_key *k = key;
	return !strcmp(k->o->phases[pos].name, k->name);
}

/* The phase sum of this range name (created when new), or NULL. */
static struct llmsim_trace_phase_sum *phase_sum(struct ctx *c, const char *name)
{
	struct llmsim_trace_cmp *o = c->out;
	char key[sizeof o->phases[0].name];
	snprintf(key, sizeof key, "%s", name); /* the name as the phase keeps it */
	struct phase_key k = {o, key};
	uint64_t h = llmsim_hash_str(LLMSIM_HASH_SEED, key);
	long i = llmsim_hindex_find(&c->phase_ix, h, same_phase, &k);
	if (i >= 0)
		return &o->phases[i];
	if (o->nphases == o->capphases) {
		size_t cap = o->capphases ? 2 * o->capphases : 16;
		void *p = realloc(o->phases, cap * sizeof *o->phases);
		if (!p)
			return NULL;
		o->phases = p;
		o->capphases = cap;
	}
	if (llmsim_hindex_add(&c->phase_ix, h, o->nphases))
		return NULL;
	struct llmsim_trace_phase_sum *s = &o->phases[o->nphases++];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", key);
	return s;
}

static uint64_t row_hash(const struct llmsim_trace_row *r)
{
	uint64_t h = llmsim_hash_bytes(LLMSIM_HASH_SEED, &r->matched, sizeof r->matched);
	h = llmsim_hash_str(h, r->phase);
	h = llmsim_hash_str(h, r->range);
	h = llmsim_hash_str(h, r->kernel);
	h = llmsim_hash_str(h, r->op_spec);
	return llmsim_hash_str(h, r->note);
}

struct row_key {
	const struct llmsim_trace_cmp *o;
	const struct llmsim_trace_row *r;
};

static int same_row(size_t pos, const void *key)
{
	const struct row_key *k = key;
	const struct llmsim_trace_row *x = &k->o->rows[pos], *r = k->r;
	return x->matched == r->matched && !strcmp(x->phase, r->phase) &&
	       !strcmp(x->range, r->range) && !strcmp(x->kernel, r->kernel) &&
	       !strcmp(x->op_spec, r->op_spec) && !strcmp(x->note, r->note);
}

/* Add to the row with this key (creating it). */
static int add_row(struct ctx *c, const struct llmsim_trace_row *r)
{
	struct llmsim_trace_cmp *o = c->out;
	struct llmsim_trace_row *row = NULL;
	struct row_key key = {o, r};
	uint64_t h = row_hash(r);
	long at = llmsim_hindex_find(&c->row_ix, h, same_row, &key);
	if (at >= 0)
		row = &o->rows[at];
	if (!row) {
		if (o->nrows == o->caprows) {
			size_t cap = o->caprows ? 2 * o->caprows : 64;
			void *p = realloc(o->rows, cap * sizeof *o->rows);
			if (!p)
				return LLMSIM_ENOMEM;
			o->rows = p;
			o->caprows = cap;
		}
		if (llmsim_hindex_add(&c->row_ix, h, o->nrows))
			return LLMSIM_ENOMEM;
		row = &o->rows[o->nrows++];
		*row = *r;
		row->launches = 0;
		row->measured_s = row->predicted_s = row->target_s = row->replay_s = 0;
	}
	row->launches += r->launches;
	row->measured_s += r->measured_s;
	row->predicted_s += r->predicted_s;
	row->target_s += r->target_s;
	row->replay_s += r->replay_s;

	struct llmsim_trace_class_sum *cs[2] = {&o->cls[r->cls], &o->total};
	for (int i = 0; i < 2; i++) {
		cs[i]->kernels += r->launches;
		cs[i]->measured_s += r->measured_s;
		cs[i]->predicted_s += r->predicted_s;
		cs[i]->target_s += r->target_s;
		cs[i]->replay_s += r->replay_s;
		if (r->matched) {
			cs[i]->matched_measured_s += r->measured_s;
			cs[i]->matched_predicted_s += r->predicted_s;
		} else {
			cs[i]->unmatched_kernels += r->launches;
			cs[i]->unmatched_s += r->measured_s;
		}
	}
	if (r->phase[0]) {
		struct llmsim_trace_phase_sum *ps = phase_sum(c, r->phase);
		if (!ps)
			return LLMSIM_ENOMEM;
		ps->measured_s += r->measured_s;
		ps->predicted_s += r->predicted_s;
		ps->target_s += r->target_s;
		ps->replay_s += r->replay_s;
	}
	return 0;
}

static void set_names(struct ctx *c, int ri, struct llmsim_trace_row *r)
{
	int op = ri >= 0 ? c->op_of[ri] : -1, ph = ri >= 0 ? c->phase_of[ri] : -1;
	snprintf(r->range, sizeof r->range, "%s", op >= 0 ? c->t->ranges[op].name : "");
	snprintf(r->phase, sizeof r->phase, "%s", ph >= 0 ? c->t->ranges[ph].name : "");
}

static void fill_unmatched(struct ctx *c, struct llmsim_trace_row *r, const char *dir)
{
	r->matched = 0;
	r->predicted_s = r->measured_s;
	r->target_s = r->replay_s = r->measured_s;
	if (c->target) {
		double k = trace_replay_ratio(r->cls, dir, c->gpu, c->target, NULL);
		r->target_s = r->replay_s = r->measured_s * k;
	}
}

static int unmatched_kernel(struct ctx *c, const struct llmsim_trace_kernel *k, const char *why)
{
	struct llmsim_trace_row r = {0};
	set_names(c, range_index(c->t, k->range_id), &r);
	llmsim_trace_short_name(k->name, r.kernel, sizeof r.kernel);
	snprintf(r.note, sizeof r.note, "%s", why);
	r.cls = llmsim_trace_classify(k->name);
	r.launches = 1;
	r.measured_s = (double)(k->end_ns - k->start_ns) * 1e-9;
	fill_unmatched(c, &r, NULL);
	return add_row(c, &r);
}

static const char *attn_impl_of(const struct llmsim_trace *t, const int *idx, int n)
{
	for (int i = 0; i < n; i++) {
		const char *s = t->kernels[idx[i]].name;
		if (strcasestr(s, "flash3") || strcasestr(s, "fa3") || strcasestr(s, "hopper") ||
		    strcasestr(s, "cudnn"))
			return "flash3";
	}
	return "flash2";
}

/* PyTorch's FlashAttention-2 decides per call between its split-KV pair and
 * its plain forward kernel (num_splits_heuristic): `flashdecoding` models
 * that choice, so either kernel of PyTorch's FA2 means it. */
static const char *dec_impl_of(const struct llmsim_trace *t, const int *idx, int n)
{
	for (int i = 0; i < n; i++)
		if (strcasestr(t->kernels[idx[i]].name, "splitkv") ||
		    strcasestr(t->kernels[idx[i]].name, "combine") ||
		    strcasestr(t->kernels[idx[i]].name, "pytorch_flash"))
			return "flashdecoding";
	return "flash2";
}

/* Predict op on gpu (and target) at the current phase's load; 0 or an
 * error with a message. */
static int price(struct ctx *c, struct llmsim_op *op, struct llmsim_pred *p, double *dst_s,
		 struct llmsim_err *e)
{
	/* the first pass prices lone kernels to learn each phase's load; the
	 * second prices every op of a phase at the one clock of that load */
	int ph = c->cur_ph;
	op->load_duty = c->rho_of ? c->load : 0;
	op->load_rho = c->rho_of && ph >= 0 ? c->rho_of[ph] : 0;
	int rc = llmsim_predict(c->gpu, op, p, e);
	if (rc)
		return rc;
	if (c->rho_t && ph >= 0) {
		c->rho_t[ph] += llmsim_op_rho(c->gpu, op, p) * p->time_s;
		c->busy_t[ph] += p->time_s;
	}
	*dst_s = 0;
	if (c->target) {
		struct llmsim_pred q;
		rc = llmsim_predict(c->target, op, &q, e);
		if (rc)
			return rc;
		*dst_s = q.time_s;
	}
	return 0;
}

static int instance(struct ctx *c, const struct llmsim_trace_row *r, const char *spec,
		    const struct llmsim_op *op, const struct llmsim_pred *p, const int *idx, int n,
		    double measured_s)
{
	if (!c->fn)
		return 0;
	struct llmsim_trace_instance in = {
		.phase = r->phase,
		.range = r->range,
		.op_spec = spec, .op = op, .pred = p, .kernels = idx, .nkernels = n,
		.measured_s = measured_s, .op_range = c->cur_range,
	};
	return c->fn(&in, c->fnctx);
}

/* One op invocation: kernels idx[0..n) of op range `op` (a graph node
 * name) in the step range ph_ri; `label` names it in the rows (the op
 * range's name, or how it was recovered). */
static int do_group(struct ctx *c, const char *op, int ph_ri, const char *label,
		    const int *idx, int n)
{
	const struct llmsim_trace *t = c->t;
	struct llmsim_trace_phase ph;
	llmsim_trace_phase_parse(t->ranges[ph_ri].name, &ph);
	c->load = c->load_of ? c->load_of[ph_ri] : 0;
	c->cur_ph = ph_ri;
	const struct llmsim_gnode *nodes[MAX_SPECS];
	char specs[MAX_SPECS][LLMSIM_TRACE_SPEC_MAX];
	int per_kernel = 0;
	struct llmsim_err e = {0};
	int ns = llmsim_trace_ops(c->tg, t->ranges[ph_ri].name, &ph, attn_impl_of(t, idx, n),
				  dec_impl_of(t, idx, n), op, n, nodes, MAX_SPECS, &per_kernel, &e);
	double src[MAX_SPECS], dst[MAX_SPECS];
	enum llmsim_trace_class cls[MAX_SPECS];
	struct llmsim_op ops[MAX_SPECS];
	struct llmsim_pred preds[MAX_SPECS];
	int bad = ns <= 0;
	if (bad && !e.msg[0])
		snprintf(e.msg, sizeof e.msg, "no such op in this phase's graph");
	for (int i = 0; i < ns && !bad; i++) {
		ops[i] = nodes[i]->op;
		/* a kernel on PyTorch's non-vectorized path runs the op on
		 * strided views, a vectorized one on contiguous tensors: its
		 * name says which path to price (sim/elementwise.c) */
		if (per_kernel && ops[i].kind == LLMSIM_OP_ELEMENTWISE)
			ops[i].u.ew.strided = llmsim_trace_nonvectorized(t->kernels[idx[i]].name);
		bad = price(c, &ops[i], &preds[i], &dst[i], &e) != 0;
		if (!bad) {
			llmsim_op_format_short(&ops[i], specs[i], sizeof specs[i]);
			cls[i] = llmsim_trace_op_class(&ops[i]);
			src[i] = preds[i].time_s;
		}
	}
	c->out->op_ranges++;
	if (bad) {
		for (int i = 0; i < n; i++) {
			int rc = unmatched_kernel(c, &t->kernels[idx[i]], e.msg);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (per_kernel) {
		for (int i = 0; i < n; i++) {
			const struct llmsim_trace_kernel *k = &t->kernels[idx[i]];
			struct llmsim_trace_row r = {0};
			snprintf(r.phase, sizeof r.phase, "%s", t->ranges[ph_ri].name);
			snprintf(r.range, sizeof r.range, "%s", label);
			llmsim_trace_short_name(k->name, r.kernel, sizeof r.kernel);
			snprintf(r.op_spec, sizeof r.op_spec, "%s", specs[i]);
			r.cls = cls[i];
			r.matched = 1;
			r.launches = 1;
			r.measured_s = (double)(k->end_ns - k->start_ns) * 1e-9;
			r.predicted_s = src[i];
			r.target_s = c->target ? dst[i] : src[i];
			r.replay_s = src[i] > 0 ? r.measured_s * r.target_s / src[i] : r.measured_s;
			if (llmsim_trace_nonvectorized(k->name)) {
				snprintf(r.note, sizeof r.note, "non-vectorized (strided) PyTorch path");
				c->out->nonvec_kernels++;
				c->out->nonvec_measured_s += r.measured_s;
				c->out->nonvec_predicted_s += r.predicted_s;
			}
			int rc = add_row(c, &r);
			if (!rc)
				rc = instance(c, &r, specs[i], &ops[i], &preds[i], &idx[i], 1,
					      r.measured_s);
			if (rc)
				return rc;
		}
		return 0;
	}
	/* Range-level: the kernels as a whole against the recipe's ops. */
	c->out->range_level++;
	struct llmsim_trace_row r = {0};
	snprintf(r.phase, sizeof r.phase, "%s", t->ranges[ph_ri].name);
	snprintf(r.range, sizeof r.range, "%s", label);
	snprintf(r.kernel, sizeof r.kernel, "(%d kernels)", n);
	snprintf(r.note, sizeof r.note, "range-level");
	size_t o = 0;
	for (int i = 0; i < ns; i++) {
		int w = snprintf(r.op_spec + o, sizeof r.op_spec - o, "%s%s", i ? "; " : "",
				 specs[i]);
		if (w < 0 || (size_t)w >= sizeof r.op_spec - o)
			break;
		o += (size_t)w;
		r.predicted_s += src[i];
		r.target_s += c->target ? dst[i] : src[i];
	}
	r.cls = cls[0];
	r.matched = 1;
	r.launches = n;
	for (int i = 0; i < n; i++)
		r.measured_s += (double)(t->kernels[idx[i]].end_ns - t->kernels[idx[i]].start_ns) *
				1e-9;
	r.replay_s = r.predicted_s > 0 ? r.measured_s * r.target_s / r.predicted_s : r.measured_s;
	int rc = add_row(c, &r);
	if (!rc && ns == 1)
		rc = instance(c, &r, specs[0], &ops[0], &preds[0], idx, n, r.measured_s);
	return rc;
}

/* A GEMM-class kernel that finishes another's work (split-K reduction). */
static int is_reduce(const char *name)
{
	return llmsim_trace_classify(name) == LLMSIM_TC_GEMM &&
	       (strcasestr(name, "reduce") || strcasestr(name, "reduction"));
}

/* A step range without op ranges: its GEMMs are, in launch order, QKV, O,
 * gate/up and down of each layer (fused projections), then the LM head when
 * their count leaves one over; a split-K reduction joins the GEMM before
 * it; consecutive attention kernels are one attention. The rest stays
 * unmatched. */
static int do_by_order(struct ctx *c, int ph_ri, const int *idx, int n)
{
	static const char *const roles[4] = {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"};
	const struct llmsim_trace *t = c->t;
	int g = 0;
	for (int i = 0; i < n; i++) {
		const char *name = t->kernels[idx[i]].name;
		g += llmsim_trace_classify(name) == LLMSIM_TC_GEMM && !is_reduce(name);
	}
	int fits = g % 4 == 0 || g % 4 == 1, lm = g % 4 == 1;
	for (int i = 0, gi = 0; i < n;) {
		const char *name = t->kernels[idx[i]].name;
		enum llmsim_trace_class cls = llmsim_trace_classify(name);
		int j = i + 1, rc;
		char label[64];
		if (cls == LLMSIM_TC_GEMM && !is_reduce(name) && fits) {
			while (j < n && is_reduce(t->kernels[idx[j]].name))
				j++;
			const char *role = lm && gi == g - 1 ? "lm_head" : roles[gi % 4];
			snprintf(label, sizeof label, "%s (by order)", role);
			rc = do_group(c, role, ph_ri, label, idx + i, j - i);
			gi++;
		} else if (cls == LLMSIM_TC_ATTENTION) {
			while (j < n && llmsim_trace_classify(t->kernels[idx[j]].name) ==
						LLMSIM_TC_ATTENTION)
				j++;
			rc = do_group(c, "attention", ph_ri, "attention (by order)", idx + i, j - i);
		} else {
			rc = unmatched_kernel(c, &t->kernels[idx[i]],
					      cls == LLMSIM_TC_GEMM
						      ? "GEMM count does not fit 4 per layer (+ LM head)"
						      : "no op range (step range only)");
		}
		if (rc)
			return rc;
		i = j;
	}
	return 0;
}

struct pair {
	int op_ri, k;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->op_ri != y->op_ri)
		return x->op_ri < y->op_ri ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

static int copies(struct ctx *c)
{
	for (size_t i = 0; i < c->t->ncopies; i++) {
		const struct llmsim_trace_copy *m = &c->t->copies[i];
		if (excluded(c, m->range_id, (double)(m->end_ns - m->start_ns) * 1e-9))
			continue;
		struct llmsim_trace_row r = {0};
		set_names(c, range_index(c->t, m->range_id), &r);
		if (m->kind == LLMSIM_TRACE_MEMSET)
			snprintf(r.kernel, sizeof r.kernel, "memset");
		else
			snprintf(r.kernel, sizeof r.kernel, "memcpy %s", m->dir);
		snprintf(r.note, sizeof r.note, "copies are not modelled");
		r.cls = LLMSIM_TC_COPIES;
		r.launches = 1;
		r.measured_s = (double)(m->end_ns - m->start_ns) * 1e-9;
		fill_unmatched(c, &r, m->kind == LLMSIM_TRACE_MEMSET ? NULL : m->dir);
		int rc = add_row(c, &r);
		if (rc)
			return rc;
	}
	return 0;
}

/* The load each phase instance's ops run in, for the power limit
 * (sim/predict.c): the share of its GPU span its kernels keep the GPU busy,
 * times how much of the power controller's window the repeated phase has
 * filled by its middle instance (instances of one phase run back to back:
 * half their summed spans, over the window). */
static void phase_loads(struct ctx *c, const uint64_t *first, const uint64_t *last,
			const double *busy, const int *pidx, double *total)
{
	const struct llmsim_trace *t = c->t;
	for (size_t p = 0; p < c->out->nphases; p++)
		total[p] = 0;
	for (size_t i = 0; i < t->nranges; i++)
		if (pidx[i] >= 0 && last[i] > first[i])
			total[pidx[i]] += (double)(last[i] - first[i]) * 1e-9;
	for (size_t i = 0; i < t->nranges; i++) {
		if (pidx[i] < 0 || !(last[i] > first[i]))
			continue;
		double span = (double)(last[i] - first[i]) * 1e-9;
		c->load_of[i] = llmsim_power_load(c->gpu, busy[i] / span, total[pidx[i]]);
	}
}

/* What a comparison is asked for, the same in both of its passes. */
struct request {
	const struct llmsim_trace *t;
	const struct llmsim_gpu *gpu, *target; /* target: replay there (NULL: no) */
	const struct llmsim_model *m;          /* NULL: nothing is recovered */
	struct llmsim_trace_graphs *tg;        /* m's graphs */
	unsigned flags;
	int (*fn)(const struct llmsim_trace_instance *in, void *ctx);
	void *fnctx;
};

/* The power limit's load in a pass (see run): the first learns each
 * phase's rho (rho_t and busy_t accumulate rho x time and time), the
 * second prices at it (rho_of); both NULL without a power-capped clock. */
struct pass_load {
	const double *rho_of;
	double *rho_t, *busy_t;
};

/* Per range and per kernel: what a pass works on. */
struct pass_arrays {
	struct pair *pairs, *ppairs;   /* (op range, kernel), (step range, kernel) */
	size_t np, nq;
	int *idx;                      /* one group's kernels */
	char *has_ops;                 /* per step range: some kernel in an op range */
	uint64_t *first, *last;        /* per step range: its kernels' first start, last end */
	double *busy;                  /* per step range: its kernels' time */
	int *pidx;                     /* per step range: its phase sum */
	double *total;                 /* per phase sum: its instances' summed spans */
	size_t *at;                    /* per phase sum: its spans' offset (nr + 1) */
	double *spans;                 /* the spans bucketed by phase */
};

static int pass_alloc(struct ctx *c, struct pass_arrays *a)
{
	const struct llmsim_trace *t = c->t;
	size_t nr = t->nranges ? t->nranges : 1, nk = t->nkernels ? t->nkernels : 1;
	memset(a, 0, sizeof *a);
	c->op_of = malloc(nr * sizeof *c->op_of);
	c->phase_of = malloc(nr * sizeof *c->phase_of);
	c->load_of = calloc(nr, sizeof *c->load_of);
	a->pairs = malloc(nk * sizeof *a->pairs);
	a->ppairs = malloc(nk * sizeof *a->ppairs);
	a->idx = malloc(nk * sizeof *a->idx);
	a->has_ops = calloc(nr, 1);
	a->first = calloc(nr, sizeof *a->first);
	a->last = calloc(nr, sizeof *a->last);
	a->busy = calloc(nr, sizeof *a->busy);
	a->pidx = malloc(nr * sizeof *a->pidx);
	a->total = malloc(nr * sizeof *a->total);
	a->at = calloc(nr + 1, sizeof *a->at);
	a->spans = malloc(nr * sizeof *a->spans);
	return c->op_of && c->phase_of && c->load_of && a->pairs && a->ppairs && a->idx &&
		       a->has_ops && a->first && a->last && a->busy && a->pidx && a->total &&
		       a->at && a->spans
		       ? 0
		       : LLMSIM_ENOMEM;
}

static void pass_free(struct ctx *c, struct pass_arrays *a)
{
	free(c->op_of);
	free(c->phase_of);
	free(c->load_of);
	free(a->pairs);
	free(a->ppairs);
	free(a->idx);
	free(a->has_ops);
	free(a->first);
	free(a->last);
	free(a->busy);
	free(a->pidx);
	free(a->total);
	free(a->at);
	free(a->spans);
	llmsim_hindex_release(&c->row_ix);
	llmsim_hindex_release(&c->phase_ix);
}

/* Each range's op range and step range (ranges are sorted by id and a
 * parent is older than its children), and each step name's instances. */
static int index_ranges(struct ctx *c, int *pidx)
{
	const struct llmsim_trace *t = c->t;
	for (size_t i = 0; i < t->nranges; i++) {
		const struct llmsim_trace_range *r = &t->ranges[i];
		int p = range_index(t, r->parent_id);
		if (p >= (int)i)
			p = -1; /* malformed: parent must come first */
		struct llmsim_trace_phase ph;
		c->op_of[i] = llmsim_trace_op_known(c->tg, r->name) ? (int)i
			      : p >= 0				  ? c->op_of[p]
								  : -1;
		c->phase_of[i] = !llmsim_trace_phase_parse(r->name, &ph) ? (int)i
				 : p >= 0				 ? c->phase_of[p]
									 : -1;
		pidx[i] = -1;
		if (c->phase_of[i] == (int)i) {
			struct llmsim_trace_phase_sum *ps = phase_sum(c, r->name);
			if (!ps)
				return LLMSIM_ENOMEM;
			ps->instances++;
			pidx[i] = (int)(ps - c->out->phases);
		}
	}
	return 0;
}

/* Sort the kernels out: into their op ranges (pairs), into step ranges
 * without op ranges (ppairs, recovered by order), or unmatched; and each
 * step range's span and busy time. */
static int sort_kernels(struct ctx *c, const struct llmsim_model *m, struct pass_arrays *a)
{
	const struct llmsim_trace *t = c->t;
	for (size_t i = 0; i < t->nkernels; i++) {
		int ri = range_index(t, t->kernels[i].range_id);
		int op = ri >= 0 ? c->op_of[ri] : -1;
		if (op >= 0 && c->phase_of[op] >= 0)
			a->has_ops[c->phase_of[op]] = 1;
	}
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct llmsim_trace_kernel *k = &t->kernels[i];
		if (excluded(c, k->range_id, (double)(k->end_ns - k->start_ns) * 1e-9))
			continue;
		int ri = range_index(t, k->range_id);
		int op = ri >= 0 ? c->op_of[ri] : -1, ph = ri >= 0 ? c->phase_of[ri] : -1;
		if (ph >= 0) {
			if (!a->first[ph] || k->start_ns < a->first[ph])
				a->first[ph] = k->start_ns;
			if (k->end_ns > a->last[ph])
				a->last[ph] = k->end_ns;
			a->busy[ph] += (double)(k->end_ns - k->start_ns) * 1e-9;
		}
		int rc = 0;
		if (m && op >= 0 && c->phase_of[op] >= 0)
			a->pairs[a->np++] = (struct pair){op, (int)i};
		else if (m && op < 0 && ph >= 0 && !a->has_ops[ph])
			a->ppairs[a->nq++] = (struct pair){ph, (int)i};
		else
			rc = unmatched_kernel(c, k,
					      !m ? "no model given (--model)"
					      : !t->run.nvtx && !t->nranges ? "no NVTX ranges in the trace"
					      : op < 0 ? "not inside a known op range"
					      : "op range outside a prefill/decode range");
		if (rc)
			return rc;
	}
	return 0;
}

/* Compare each group of pairs (kernels of one range) with its ops. */
static int compare_groups(struct ctx *c, struct pass_arrays *a)
{
	const struct llmsim_trace *t = c->t;
	int rc = 0;
	qsort(a->pairs, a->np, sizeof *a->pairs, cmp_pair);
	for (size_t i = 0; i < a->np && !rc;) {
		size_t j = i;
		int n = 0, op_ri = a->pairs[i].op_ri;
		while (j < a->np && a->pairs[j].op_ri == op_ri)
			a->idx[n++] = a->pairs[j++].k;
		c->cur_range = op_ri;
		rc = do_group(c, t->ranges[op_ri].name, c->phase_of[op_ri], t->ranges[op_ri].name,
			      a->idx, n);
		i = j;
	}
	qsort(a->ppairs, a->nq, sizeof *a->ppairs, cmp_pair);
	for (size_t i = 0; i < a->nq && !rc;) {
		size_t j = i;
		int n = 0;
		while (j < a->nq && a->ppairs[j].op_ri == a->ppairs[i].op_ri)
			a->idx[n++] = a->ppairs[j++].k;
		c->cur_range = -1;
		rc = do_by_order(c, a->ppairs[i].op_ri, a->idx, n);
		i = j;
	}
	return rc;
}

/* The median span of each phase's instances (the first instances of a
 * program pay its warm-up: module loading, library heuristics): the spans
 * bucketed by phase in one pass, each bucket's median. */
static int phase_spans(struct ctx *c, struct pass_arrays *a)
{
	const struct llmsim_trace *t = c->t;
	size_t *at = a->at;
	for (size_t i = 0; i < t->nranges; i++)
		if (a->pidx[i] >= 0 && a->last[i] > a->first[i])
			at[a->pidx[i] + 1]++;
	for (size_t p = 0; p < c->out->nphases; p++)
		at[p + 1] += at[p];
	for (size_t i = 0; i < t->nranges; i++)
		if (a->pidx[i] >= 0 && a->last[i] > a->first[i])
			a->spans[at[a->pidx[i]]++] = (double)(a->last[i] - a->first[i]) * 1e-9;
	for (size_t p = 0, lo = 0; p < c->out->nphases; p++) {
		size_t ns = at[p] - lo; /* at[p] now ends bucket p */
		if (ns)
			c->out->phases[p].span_s = llmsim_quantile(a->spans + lo, ns, 0.5);
		lo = at[p];
	}
	return 0;
}

/* One pass over the trace into out. */
static int run_pass(const struct request *q, const struct pass_load *ld,
		    struct llmsim_trace_cmp *out, struct llmsim_err *err)
{
	memset(out, 0, sizeof *out);
	struct ctx c = {.t = q->t, .gpu = q->gpu, .target = q->target, .out = out,
			.phases_only = (q->flags & LLMSIM_TRACE_PHASES_ONLY) != 0, .tg = q->tg,
			.fn = q->fn, .fnctx = q->fnctx, .cur_ph = -1, .rho_of = ld->rho_of,
			.rho_t = ld->rho_t, .busy_t = ld->busy_t};
	out->replay = q->target != NULL;
	snprintf(out->gpu, sizeof out->gpu, "%s", q->gpu->name);
	if (q->target) {
		snprintf(out->target, sizeof out->target, "%s", q->target->name);
		for (int k = 0; k < LLMSIM_TC_COUNT; k++)
			out->unmatched_ratio[k] =
				trace_replay_ratio(k, NULL, q->gpu, q->target, &out->rule[k]);
	}
	if (q->m)
		snprintf(out->model, sizeof out->model, "%s", q->m->name);
	struct pass_arrays a;
	int rc = pass_alloc(&c, &a);
	if (!rc)
		rc = index_ranges(&c, a.pidx);
	if (!rc)
		rc = sort_kernels(&c, q->m, &a);
	if (!rc) {
		phase_loads(&c, a.first, a.last, a.busy, a.pidx, a.total);
		rc = compare_groups(&c, &a);
	}
	if (!rc)
		rc = copies(&c);
	if (!rc)
		rc = phase_spans(&c, &a);
	if (rc == LLMSIM_ENOMEM)
		llmsim_err_set(err, rc, "out of memory");
	else if (rc && err && !err->msg[0])
		llmsim_err_set(err, rc, "trace comparison failed");
	pass_free(&c, &a);
	if (rc)
		llmsim_trace_cmp_release(out);
	return rc;
}

/* Two passes: lone kernels to learn each phase's tensor intensity, then
 * every op of a phase at the one clock its load allows (sim/predict.c). */
static int run(struct request *q, struct llmsim_trace_cmp *out, struct llmsim_err *err)
{
	struct pass_load ld = {0};
	int rc = q->m ? llmsim_trace_graphs_new(q->m, &q->tg) : 0;
	if (rc)
		return llmsim_err_set(err, rc, "out of memory");
	if (!(llmsim_gpu_power_cap_hz(q->gpu) > 0)) {
		rc = run_pass(q, &ld, out, err);
		llmsim_trace_graphs_free(q->tg);
		return rc;
	}
	const struct llmsim_trace *t = q->t;
	size_t nr = t->nranges ? t->nranges : 1;
	double *acc = calloc(3 * nr, sizeof *acc);
	if (!acc) {
		llmsim_trace_graphs_free(q->tg);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	double *rho_of = acc + 2 * nr;
	struct request first = *q;
	first.target = NULL, first.fn = NULL, first.fnctx = NULL;
	ld.rho_t = acc, ld.busy_t = acc + nr;
	rc = run_pass(&first, &ld, out, err);
	if (!rc) {
		llmsim_trace_cmp_release(out);
		for (size_t i = 0; i < nr; i++)
			rho_of[i] = ld.busy_t[i] > 0 ? fmin(1, ld.rho_t[i] / ld.busy_t[i]) : 0;
		struct pass_load second = {.rho_of = rho_of};
		rc = run_pass(q, &second, out, err);
	}
	free(acc);
	llmsim_trace_graphs_free(q->tg);
	return rc;
}

int llmsim_trace_compare(const struct llmsim_trace *t, const struct llmsim_gpu *gpu,
			 const struct llmsim_model *m, const struct llmsim_gpu *target,
			 unsigned flags, struct llmsim_trace_cmp *out, struct llmsim_err *err)
{
	struct request q = {.t = t, .gpu = gpu, .target = target, .m = m, .flags = flags};
	return run(&q, out, err);
}

int llmsim_trace_instances(const struct llmsim_trace *t, const struct llmsim_gpu *gpu,
			   const struct llmsim_model *m, unsigned flags,
			   int (*fn)(const struct llmsim_trace_instance *in, void *ctx), void *ctx,
			   struct llmsim_err *err)
{
	struct llmsim_trace_cmp c;
	struct request q = {.t = t, .gpu = gpu, .m = m, .flags = flags, .fn = fn, .fnctx = ctx};
	int rc = run(&q, &c, err);
	llmsim_trace_cmp_release(&c);
	return rc;
}
