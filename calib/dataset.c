/*
 * dataset.c - measured cases as the fit and the validation see them: read
 * from the store for one GPU, each classified as predicted by the
 * simulator, measuring one parameter directly, or not modelled (fit.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "fit.h"

/* A copy must be this many L2 sizes to be at the HBM plateau (smaller
 * copies are partly served by L2 or dominated by the fixed overhead). */
#define HBM_PLATEAU_L2_MULTIPLE 4.0

/* Stored classes whose cases measure one parameter each: priced as the
 * stream op of that kind (sim/stream.c). */
static const struct {
	const char *cls;
	enum llmsim_stream_kind kind;
} direct[] = {
    {"launch", LLMSIM_STREAM_LAUNCH},
    {"hbm", LLMSIM_STREAM_HBM},
    {"l2", LLMSIM_STREAM_L2},
    {"smem", LLMSIM_STREAM_SMEM},
};

/* The integer value of " key=" in a spec, or def when absent. */
static long spec_long(const char *spec, const char *key, long def)
{
	size_t n = strlen(key);
	for (const char *p = spec; (p = strstr(p, key)); p += n)
		if ((p == spec || p[-1] == ' ') && p[n] == '=')
			return strtol(p + n + 1, NULL, 10);
	return def;
}

/* Our own correct-first kernels of algorithms that production libraries
 * run far faster (kernels/attn.cu's WMMA FlashAttention-2, kernels/
 * decode.cu's decode kernels, the naive attention with its fp32 scores and
 * our own softmax) are scored in a class of their own,
 * "<class>_ref": the model prices the production kernels users run
 * (cuBLAS, PyTorch's FlashAttention-2, cuDNN), so these cases check the
 * model's structure (bytes, grids) but never move a fitted parameter and
 * are reported apart from the targets. */
static int is_reference_impl(const char *impl)
{
	static const char *const ref[] = {"llmsim_flash2", "llmsim_decode_flash2",
					  "llmsim_flashdecoding", "llmsim_paged",
					  "llmsim_naive_attention"};
	for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++)
		if (!strcmp(impl, ref[i]))
			return 1;
	return 0;
}

int llmsim_calib_set_add(struct llmsim_calib_set *set, int64_t case_id, const struct llmsim_case *c,
			 double dram_bytes, struct llmsim_err *err)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		struct llmsim_calib_point *p = realloc(set->p, cap * sizeof *p);
		if (!p)
			return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		set->p = p;
		set->cap = cap;
	}
	struct llmsim_calib_point *pt = &set->p[set->n];
	memset(pt, 0, sizeof *pt);
	pt->case_id = case_id;
	snprintf(pt->op_spec, sizeof pt->op_spec, "%s", c->op_spec);
	snprintf(pt->op_class, sizeof pt->op_class, "%s", c->op_class);
	if (is_reference_impl(c->impl))
		snprintf(pt->op_class, sizeof pt->op_class, "%.20s_ref", c->op_class);
	snprintf(pt->split, sizeof pt->split, "%s", c->split);
	pt->measured_s = c->time_median_s;
	pt->bytes_declared = c->bytes_declared;
	pt->dram_bytes = dram_bytes;
	pt->per_call = !strncmp(c->impl, "torch_", 6);
	pt->loop_s = c->reps > 0 && c->time_median_s > 0 ? 0.5 * c->reps * c->time_median_s : 0;
	pt->loop_s += c->load_s; /* busy before the timing began */
	pt->loaded_clock_hz = c->load_s > 0 && c->sm_clock_hz > 0 ? c->sm_clock_hz : 0;
	pt->how = LLMSIM_CALIB_NOT_MODELLED;
	set->n++;

	if (!(pt->measured_s > 0) || !isfinite(pt->measured_s)) {
		snprintf(pt->why, sizeof pt->why, "no positive measured time");
		return 0;
	}
	struct llmsim_err perr = {0};
	/* A case stored as "l2" streams a working set that stays in L2
	 * between repetitions (a STREAM kernel re-run on arrays smaller than
	 * the L2): it measures the L2, whatever op its spec names, so it is
	 * priced directly, not by the op model, which prices an op's first
	 * touch of its operands from HBM. */
	int l2_case = !strcmp(c->op_class, "l2");
	if (!l2_case && llmsim_op_parse(c->op_spec, &pt->op, &perr) == 0) {
		pt->how = LLMSIM_CALIB_SIM;
		if (!pt->op_class[0])
			snprintf(pt->op_class, sizeof pt->op_class, "%s", llmsim_op_class(&pt->op));
		return 0;
	}
	for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++) {
		if (strcmp(c->op_class, direct[i].cls))
			continue;
		enum llmsim_stream_kind kind = direct[i].kind;
		if (kind != LLMSIM_STREAM_LAUNCH && !(c->bytes_declared > 0)) {
			snprintf(pt->why, sizeof pt->why, "%s case without declared bytes",
				 direct[i].cls);
			return 0;
		}
		/* Back-to-back launches time the host's launch rate, not what
		 * one kernel costs on the GPU. */
		long launches = spec_long(c->op_spec, "launches", 1);
		if (kind == LLMSIM_STREAM_LAUNCH && launches != 1) {
			snprintf(pt->why, sizeof pt->why,
				 "%ld back-to-back launches time the host launch rate, not the"
				 " per-kernel overhead",
				 launches);
			return 0;
		}
		double l2 = isfinite(set->l2_bytes) ? set->l2_bytes : 0;
		if (kind == LLMSIM_STREAM_HBM && c->bytes_declared < HBM_PLATEAU_L2_MULTIPLE * l2) {
			snprintf(pt->why, sizeof pt->why,
				 "copy below the HBM plateau (< %g x the L2 size)",
				 HBM_PLATEAU_L2_MULTIPLE);
			return 0;
		}
		pt->how = LLMSIM_CALIB_SIM;
		memset(&pt->op, 0, sizeof pt->op);
		pt->op.kind = LLMSIM_OP_STREAM;
		pt->op.dtype = LLMSIM_DT_FP32;
		pt->op.u.stream.kind = kind;
		pt->op.u.stream.bytes = kind == LLMSIM_STREAM_LAUNCH ? 0 : c->bytes_declared;
		return 0;
	}
	snprintf(pt->why, sizeof pt->why, "%.*s", (int)sizeof pt->why - 1, perr.msg);
	return 0;
}

void llmsim_calib_set_release(struct llmsim_calib_set *set)
{
	free(set->p);
	memset(set, 0, sizeof *set);
}

struct load_ctx {
	struct llmsim_store *s;
	struct llmsim_calib_set *set;
	struct llmsim_err *err;
	double *clocks;
	size_t nclocks;
};

static int load_case(const struct llmsim_store_case_row *row, void *ctx)
{
	struct load_ctx *lc = ctx;
	struct llmsim_calib_set *set = lc->set;
	double rd, wr, dram = NAN;
	if (!llmsim_store_counter(lc->s, row->case_id, "dram__bytes_read.sum", &rd, NULL) &&
	    !llmsim_store_counter(lc->s, row->case_id, "dram__bytes_write.sum", &wr, NULL))
		dram = rd + wr;
	/* provenance: the newest run's device (rows come oldest first) */
	snprintf(set->device, sizeof set->device, "%s", row->dev.name);
	snprintf(set->driver, sizeof set->driver, "%s", row->dev.driver);
	snprintf(set->cuda, sizeof set->cuda, "%s", row->dev.cuda_runtime);
	if (!(set->sm_clock_hz > 0))
		set->sm_clock_hz = row->dev.sm_clock_max_hz;
	if (row->c.sm_clock_hz > 0) {
		double *c = realloc(lc->clocks, (lc->nclocks + 1) * sizeof *c);
		if (!c)
			return llmsim_err_set(lc->err, LLMSIM_ENOMEM, "out of memory");
		lc->clocks = c;
		c[lc->nclocks++] = row->c.sm_clock_hz;
	}
	return llmsim_calib_set_add(set, row->case_id, &row->c, dram, lc->err);
}

/* The newest run's device of hw_name gives the L2 size (the plateau
 * threshold needs it before cases are classified). */
static int newest_l2(const struct llmsim_store_run_row *row, void *ctx)
{
	struct llmsim_calib_set *set = ctx;
	if (!strcmp(row->dev.hw_name, set->hw_name))
		set->l2_bytes = row->dev.l2_bytes;
	return 0;
}

int llmsim_calib_set_load(struct llmsim_store *s, const char *hw_name, struct llmsim_calib_set *set,
			  struct llmsim_err *err)
{
	memset(set, 0, sizeof *set);
	snprintf(set->hw_name, sizeof set->hw_name, "%s", hw_name);
	set->l2_bytes = NAN;
	struct llmsim_store_filter f = {.hw_name = hw_name};
	struct load_ctx lc = {.s = s, .set = set, .err = err};
	int rc = llmsim_store_runs(s, newest_l2, set, err);
	if (!rc)
		rc = llmsim_store_cases(s, &f, load_case, &lc, err);
	if (!rc && lc.nclocks) {
		set->sm_clock_hz = llmsim_quantile(lc.clocks, lc.nclocks, 0.5);
	}
	free(lc.clocks);
	if (!rc && !set->n)
		rc = llmsim_err_set(err, LLMSIM_ENOENT, "no calibration cases for GPU '%s'",
				    hw_name);
	if (rc)
		llmsim_calib_set_release(set);
	return rc;
}

int llmsim_calib_predict(const struct llmsim_gpu *gpu, const struct llmsim_calib_point *pt,
			 double *time_s, struct llmsim_pred *pred, struct llmsim_err *err)
{
	struct llmsim_pred p;
	if (pt->how == LLMSIM_CALIB_NOT_MODELLED)
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED, "%s: not modelled: %s", pt->op_spec,
				      pt->why);
	/* Repetitions back to back are a sustained load once they fill the
	 * power controller's window (sim/predict.c). */
	struct llmsim_op op = pt->op;
	if (gpu->power_window_s > 0 && pt->loop_s > 0)
		op.load_duty = llmsim_power_load(gpu, 1, 2 * pt->loop_s);
	struct llmsim_err e = {0};
	int rc = llmsim_predict(gpu, &op, &p, &e);
	if (rc)
		return llmsim_err_set(err, rc, "%s: %s", pt->op_spec, e.msg);
	if (pt->per_call && p.kernels > 1) /* each later kernel waits for the one
					    * before it to drain */
		p.time_s += (p.kernels - 1) * gpu->param[LLMSIM_PARAM_GRAPH_KERNEL_GAP_S];
	*time_s = p.time_s;
	if (pred)
		*pred = p;
	return 0;
}
