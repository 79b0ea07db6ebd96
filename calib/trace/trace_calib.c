/*
 * trace_calib.c - library kernels caught in a trace (cuBLAS GEMMs,
 * PyTorch's flash attention) as calibration cases: every recovered GEMM,
 * attention or decode-attention invocation, grouped by op spec, goes into
 * the calibration store (calib/store.h) like a measured case, so the fit
 * and validation can use real library kernels next to llmsim's own.
 */
#include "trace_analyze.h"

#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "calib/store.h"

#define MAX_K 8

struct inst {
	char spec[LLMSIM_TRACE_SPEC_MAX];
	const char *op_class;     /* static, from llmsim_op_class */
	enum llmsim_dtype dtype;
	double s, flops, bytes;
	int k[MAX_K], nk;
};

struct coll {
	struct inst *v;
	size_t n, cap;
};

static int collect(const struct llmsim_trace_instance *in, void *ctx)
{
	struct coll *c = ctx;
	enum llmsim_op_kind kind = in->op->kind;
	if (kind != LLMSIM_OP_GEMM && kind != LLMSIM_OP_ATTENTION && kind != LLMSIM_OP_DECODE)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		void *p = realloc(c->v, cap * sizeof *c->v);
		if (!p)
			return LLMSIM_ENOMEM;
		c->v = p;
		c->cap = cap;
	}
	struct inst *x = &c->v[c->n++];
	snprintf(x->spec, sizeof x->spec, "%s", in->op_spec);
	x->op_class = llmsim_op_class(in->op);
	x->dtype = in->op->dtype;
	x->s = in->measured_s;
	x->flops = in->pred->flops;
	x->bytes = in->pred->hbm_bytes;
	x->nk = in->nkernels < MAX_K ? in->nkernels : MAX_K;
	memcpy(x->k, in->kernels, (size_t)x->nk * sizeof x->k[0]);
	return 0;
}

static int cmp_inst(const void *a, const void *b)
{
	const struct inst *x = a, *y = b;
	return strcmp(x->spec, y->spec);
}

/* A case no real kernel can give: one that took no time, or one faster
 * than the GPU's dense peak allows for the FLOPs its recovered shape does
 * (the shape cannot be this kernel's: a wrong --model). The store would
 * take it, and the fit would follow it. */
static int impossible(const struct llmsim_case *cs, const struct llmsim_gpu *gpu,
		      enum llmsim_dtype dt, struct llmsim_err *err)
{
	if (!(cs->time_min_s > 0))
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "case '%s': an invocation took no time (not a real "
				      "kernel): nothing was added", cs->op_spec);
	double peak = llmsim_gpu_peak_flops(gpu, dt), floor_s = peak > 0 ? cs->flops_declared / peak : 0;
	if (cs->time_min_s < floor_s)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "case '%s': measured %.3g s, faster than the %s's peak allows "
				      "(%.3g s for %.3g FLOPs): the shape recovered does not fit the "
				      "kernel (wrong --model?); nothing was added",
				      cs->op_spec, cs->time_min_s, gpu->name, floor_s,
				      cs->flops_declared);
	return 0;
}

static int add_group(struct llmsim_store *store, int64_t run_id, const struct llmsim_trace *t,
		     const struct llmsim_gpu *gpu, const struct inst *g, size_t n, const char *split,
		     double *tmp, struct llmsim_err *err)
{
	struct llmsim_case cs = {0};
	char sn[160];
	snprintf(cs.op_spec, sizeof cs.op_spec, "%s", g[0].spec);
	snprintf(cs.op_class, sizeof cs.op_class, "%s", g[0].op_class);
	snprintf(cs.impl, sizeof cs.impl, "traced:%s",
		 llmsim_trace_short_name(t->kernels[g[0].k[0]].name, sn, sizeof sn));
	snprintf(cs.split, sizeof cs.split, "%s", split);
	cs.flops_declared = g[0].flops;
	cs.bytes_declared = g[0].bytes;
	cs.reps = (int)n;
	for (size_t i = 0; i < n; i++)
		tmp[i] = g[i].s;
	llmsim_sort_doubles(tmp, n);
	cs.time_median_s = llmsim_quantile_sorted(tmp, n, 0.5);
	cs.time_min_s = tmp[0];
	cs.time_p10_s = llmsim_quantile_sorted(tmp, n, 0.1);
	cs.time_p90_s = llmsim_quantile_sorted(tmp, n, 0.9);
	cs.check_rel_err = -1;
	int64_t case_id;
	int rc = impossible(&cs, gpu, g[0].dtype, err);
	if (!rc)
		rc = llmsim_store_add_case(store, run_id, &cs, &case_id, err);
	/* its kernels: position j of the invocations that have the first's
	 * kernel count */
	for (int j = 0; j < g[0].nk && !rc; j++) {
		const struct llmsim_trace_kernel *k = &t->kernels[g[0].k[j]];
		struct llmsim_kernel_rec kr = {0};
		llmsim_trace_short_name(k->name, kr.name, sizeof kr.name);
		memcpy(kr.grid, k->grid, sizeof kr.grid);
		memcpy(kr.block, k->block, sizeof kr.block);
		kr.regs_per_thread = k->regs_per_thread;
		kr.static_smem_bytes = k->static_smem_bytes;
		kr.dynamic_smem_bytes = k->dynamic_smem_bytes;
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (g[i].nk != g[0].nk)
				continue;
			const struct llmsim_trace_kernel *ki = &t->kernels[g[i].k[j]];
			tmp[m++] = (double)(ki->end_ns - ki->start_ns) * 1e-9;
		}
		kr.duration_median_s = llmsim_quantile(tmp, m, 0.5);
		kr.launches_per_rep = 1;
		rc = llmsim_store_add_kernel(store, case_id, &kr, err);
	}
	return rc;
}

int llmsim_trace_to_calib(const struct llmsim_trace *t, const struct llmsim_gpu *gpu,
			  const struct llmsim_model *m, struct llmsim_store *store,
			  const char *split, int *ncases, struct llmsim_err *err)
{
	struct coll c = {0};
	int rc = llmsim_trace_instances(t, gpu, m, 0, collect, &c, err);
	if (rc == LLMSIM_ENOMEM)
		llmsim_err_set(err, rc, "out of memory");
	if (rc) {
		free(c.v);
		return rc;
	}
	if (!c.n) {
		free(c.v);
		return llmsim_err_set(err, LLMSIM_ENOENT,
				      "no GEMM or attention kernels with recovered shapes in the trace");
	}
	qsort(c.v, c.n, sizeof *c.v, cmp_inst);
	double *tmp = malloc(c.n * sizeof *tmp);
	if (!tmp) {
		free(c.v);
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	}
	const struct llmsim_trace_run *r = &t->run;
	struct llmsim_device_info dev = {0};
	/* a trace without device records: the GPU it is compared with */
	snprintf(dev.name, sizeof dev.name, "%s", r->device_name[0] ? r->device_name
									: gpu->full_name);
	snprintf(dev.hw_name, sizeof dev.hw_name, "%s", gpu->name);
	dev.sms = r->device_sms > 0 ? r->device_sms : gpu->sms;
	dev.device_count = r->device_count > 0 ? r->device_count : 1;
	snprintf(dev.cupti, sizeof dev.cupti, "%d", r->cupti_version);
	struct llmsim_run_info ri = {0};
	snprintf(ri.started_at, sizeof ri.started_at, "%s", r->started_at);
	snprintf(ri.host, sizeof ri.host, "%s", r->host);
	snprintf(ri.tool, sizeof ri.tool, "llmsim trace to-calib (%.38s)", r->tool);
	snprintf(ri.notes, sizeof ri.notes, "trace run %lld: %.200s", (long long)r->id,
		 r->command);
	int64_t run_id;
	int n = 0;
	rc = llmsim_store_run_begin(store, &dev, &ri, &run_id, err);
	for (size_t i = 0; i < c.n && !rc;) {
		size_t j = i;
		while (j < c.n && !strcmp(c.v[j].spec, c.v[i].spec))
			j++;
		rc = add_group(store, run_id, t, gpu, &c.v[i], j - i, split, tmp, err);
		n++;
		i = j;
	}
	if (!rc)
		rc = llmsim_store_run_commit(store, run_id, err);
	else
		llmsim_store_run_abort(store);
	free(tmp);
	free(c.v);
	if (!rc && ncases)
		*ncases = n;
	return rc;
}
