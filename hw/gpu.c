/*
 * gpu.c - reading one hardware file (hw/NAME.yaml) into struct llmsim_gpu.
 *
 * The schema is a set of sections (compute, sm_limits, memory,
 * peak_flops_per_s, interconnect (with an optional nvlink_domain_gpus
 * when NVLink spans several nodes), host (optional), efficiency), each extracted with a
 * field table; every key carries its unit, every value is checked (sizes
 * positive, counts integral, fractions in (0, 1]) and every complaint
 * names the file, line and column. Name resolution and profiles live in
 * gpu_find.c.
 */
#include "gpu.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/datafind.h"
#include "base/enum.h"
#include "base/yaml.h"
#include "gpu_load.h"

const struct llmsim_param_info llmsim_param_info[LLMSIM_PARAM_COUNT] = {
#define LLMSIM_PARAM(e, k, d, text) [LLMSIM_PARAM_##e] = {.key = k, .def = d, .doc = text},
#include "gpu_params.h"
#undef LLMSIM_PARAM
};

#define G(f) offsetof(struct llmsim_gpu, f)
#define FLD(k, t, f, req, rng) {.key = k, .type = t, .offset = G(f), .size = sizeof(((struct llmsim_gpu *)0)->f), .required = req, .range = rng}
#define REQ_POS_INT(k) FLD(#k, LLMSIM_YF_INT, k, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE)
#define REQ_POS_DBL(k) FLD(#k, LLMSIM_YF_DOUBLE, k, LLMSIM_YF_REQUIRED, LLMSIM_YR_POSITIVE)

static const struct llmsim_yfield top_fields[] = {
	FLD("name", LLMSIM_YF_STRING, name, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	FLD("full_name", LLMSIM_YF_STRING, full_name, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	FLD("vendor", LLMSIM_YF_STRING, vendor, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	FLD("arch", LLMSIM_YF_STRING, arch, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
	REQ_POS_DBL(tdp_w),
	FLD("uncalibrated_step_error_fraction", LLMSIM_YF_DOUBLE, uncalibrated_step_error_fraction,
	    LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG),
	FLD("price_usd_per_gpu_hour", LLMSIM_YF_DOUBLE, price_usd_per_gpu_hour, LLMSIM_YF_OPTIONAL,
	    LLMSIM_YR_POSITIVE),
};

static const struct llmsim_yfield compute_fields[] = {
	REQ_POS_INT(sms),
	REQ_POS_INT(warp_size),
	REQ_POS_DBL(boost_clock_hz),
	REQ_POS_DBL(base_clock_hz),
	FLD("tensor_clock_hz", LLMSIM_YF_DOUBLE, tensor_clock_hz, LLMSIM_YF_OPTIONAL,
	    LLMSIM_YR_POSITIVE),
	FLD("burst_clock_hz", LLMSIM_YF_DOUBLE, burst_clock_hz, LLMSIM_YF_OPTIONAL,
	    LLMSIM_YR_POSITIVE),
	FLD("power_window_s", LLMSIM_YF_DOUBLE, power_window_s, LLMSIM_YF_OPTIONAL,
	    LLMSIM_YR_POSITIVE),
	FLD("burst_activity_exponent", LLMSIM_YF_DOUBLE, burst_activity_exponent,
	    LLMSIM_YF_OPTIONAL, LLMSIM_YR_NONNEG),
};

static const char *const operand_data_names[LLMSIM_OPD_COUNT] = {
	[LLMSIM_OPD_TRAINED] = "trained", [LLMSIM_OPD_RANDOM] = "random",
	[LLMSIM_OPD_GRID] = "grid", [LLMSIM_OPD_COARSE] = "coarse", [LLMSIM_OPD_ZEROS] = "zeros",
};
_Static_assert(sizeof operand_data_names / sizeof operand_data_names[0] == LLMSIM_OPD_COUNT,
	       "operand data names");

const char *llmsim_operand_data_name(enum llmsim_operand_data d)
{
	return llmsim_enum_name(operand_data_names, LLMSIM_OPD_COUNT, (int)d);
}

int llmsim_operand_data_parse(const char *s)
{
	return llmsim_enum_parse(operand_data_names, LLMSIM_OPD_COUNT, s);
}

const char *llmsim_operand_data_choices(void)
{
	return "trained, random, grid, coarse or zeros";
}

/* compute.operand_activity: {trained: 1, random: .., ...}, each positive;
 * trained must be 1 (the reference). Absent: all 1. */
static int load_activity(const struct llmsim_ynode *compute, struct llmsim_gpu *gpu,
			 const char *path, struct llmsim_err *err)
{
	for (int i = 0; i < LLMSIM_OPD_COUNT; i++)
		gpu->operand_activity[i] = 1;
	const struct llmsim_ynode *m = llmsim_ymap_get(compute, "operand_activity");
	if (!m)
		return 0;
	if (m->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->line, m->col,
					 "'compute.operand_activity' must be a mapping of %s",
					 llmsim_operand_data_choices());
	struct llmsim_yfield f[LLMSIM_OPD_COUNT];
	for (int i = 0; i < LLMSIM_OPD_COUNT; i++)
		f[i] = (struct llmsim_yfield){
			.key = operand_data_names[i],
			.type = LLMSIM_YF_DOUBLE,
			.offset = G(operand_activity) + (size_t)i * sizeof(double),
			.required = LLMSIM_YF_OPTIONAL,
			.range = LLMSIM_YR_POSITIVE,
		};
	int rc = llmsim_yaml_extract(m, f, LLMSIM_OPD_COUNT, gpu, path, "compute.operand_activity",
				     err);
	if (!rc)
		rc = llmsim_ymap_check_unused(m, path, "compute.operand_activity", err);
	if (!rc && gpu->operand_activity[LLMSIM_OPD_TRAINED] != 1) {
		const struct llmsim_ynode *v = llmsim_ymap_get(m, "trained");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'trained' is the reference of "
					 "'compute.operand_activity': it must be 1");
	}
	return rc;
}

static const struct llmsim_yfield sm_fields[] = {
	REQ_POS_INT(registers_per_sm),
	REQ_POS_INT(registers_per_block_max),
	REQ_POS_INT(registers_per_thread_max),
	REQ_POS_INT(register_alloc_unit),
	REQ_POS_DBL(smem_bytes_per_sm),
	REQ_POS_DBL(smem_bytes_per_block_max),
	FLD("smem_reserved_bytes_per_block", LLMSIM_YF_DOUBLE, smem_reserved_bytes_per_block,
	    LLMSIM_YF_REQUIRED, LLMSIM_YR_NONNEG),
	REQ_POS_DBL(smem_alloc_unit_bytes),
	REQ_POS_INT(threads_per_sm_max),
	REQ_POS_INT(threads_per_block_max),
	REQ_POS_INT(warps_per_sm_max),
	REQ_POS_INT(blocks_per_sm_max),
};

static const struct llmsim_yfield memory_fields[] = {
	REQ_POS_DBL(hbm_bytes),
	REQ_POS_DBL(hbm_bytes_per_s),
	REQ_POS_DBL(hbm_latency_s),
	REQ_POS_DBL(l2_bytes),
	REQ_POS_DBL(l2_bytes_per_s),
	REQ_POS_DBL(smem_bytes_per_s_per_sm),
};

static const struct llmsim_yfield ic_fields[] = {
	REQ_POS_INT(gpus_per_node),
	FLD("nvlink_domain_gpus", LLMSIM_YF_INT, nvlink_domain_gpus, LLMSIM_YF_OPTIONAL,
	    LLMSIM_YR_POSITIVE),
	REQ_POS_DBL(intra_node_bytes_per_s),
	REQ_POS_DBL(intra_node_latency_s),
	REQ_POS_DBL(inter_node_bytes_per_s),
	REQ_POS_DBL(inter_node_latency_s),
	REQ_POS_DBL(pcie_bytes_per_s),
};

/* host: per node; read only when present (has_host). */
static const struct llmsim_yfield host_fields[] = {
	REQ_POS_DBL(host_memory_bytes),
	REQ_POS_DBL(host_memory_bytes_per_s),
	REQ_POS_INT(cpu_cores),
	REQ_POS_DBL(cpu_adam_params_per_s_per_core),
	REQ_POS_INT(gpus_per_host_link),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The value node of `key` (already known to be present). */
static const struct llmsim_ynode *at(const struct llmsim_ynode *map, const char *key)
{
	const struct llmsim_ynode *v = llmsim_ymap_get(map, key);
	LLMSIM_ASSERT(v);
	return v;
}

/* A required (or optional) mapping section of the top level. */
static int section(const struct llmsim_ynode *root, const char *key, int required,
		   const char *path, const struct llmsim_ynode **out, struct llmsim_err *err)
{
	const struct llmsim_ynode *s = llmsim_ymap_get(root, key);
	*out = s;
	if (!s) {
		if (!required)
			return 0;
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "missing key '%s'", key);
	}
	if (s->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, s->line, s->col,
					 "'%s' must be a mapping", key);
	return 0;
}

static int extract(const struct llmsim_ynode *map, const struct llmsim_yfield *f, size_t n,
		   struct llmsim_gpu *gpu, const char *path, const char *where,
		   struct llmsim_err *err)
{
	int rc = llmsim_yaml_extract(map, f, n, gpu, path, where, err);
	if (!rc)
		rc = llmsim_ymap_check_unused(map, path, where, err);
	return rc;
}

/* peak_flops_per_s: {tensor: {dtype: rate}, vector: {dtype: rate}}. */
static int load_peaks(const struct llmsim_ynode *root, struct llmsim_gpu *gpu,
		      const char *path, struct llmsim_err *err)
{
	const struct llmsim_ynode *pk, *t, *v;
	int rc;
	if ((rc = section(root, "peak_flops_per_s", 1, path, &pk, err)))
		return rc;
	if ((rc = section(pk, "tensor", 0, path, &t, err)) ||
	    (rc = section(pk, "vector", 1, path, &v, err)))
		return rc;
	struct llmsim_yfield f[LLMSIM_DT_COUNT];
	for (int pass = 0; pass < 2; pass++) {
		const struct llmsim_ynode *m = pass ? v : t;
		if (!m)
			continue;
		size_t base = pass ? G(vector_flops_per_s) : G(tensor_flops_per_s);
		for (int d = 0; d < LLMSIM_DT_COUNT; d++)
			f[d] = (struct llmsim_yfield){
				.key = llmsim_dtype_name((enum llmsim_dtype)d),
				.type = LLMSIM_YF_DOUBLE,
				.offset = base + (size_t)d * sizeof(double),
				.required = LLMSIM_YF_OPTIONAL,
				.range = LLMSIM_YR_POSITIVE,
			};
		if ((rc = extract(m, f, LLMSIM_DT_COUNT, gpu, path,
				  pass ? "peak_flops_per_s.vector" : "peak_flops_per_s.tensor", err)))
			return rc;
	}
	if (gpu->vector_flops_per_s[LLMSIM_DT_FP32] <= 0)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "missing key 'fp32' in 'peak_flops_per_s.vector'");
	return llmsim_ymap_check_unused(pk, path, "peak_flops_per_s", err);
}

/* The efficiency-section field of one parameter, its range read off the
 * unit in its name: fractions in (0, 1], anything else (times, rates,
 * ratios) positive, as llmsim_predict requires of every parameter. */
static struct llmsim_yfield param_field(int i, size_t base)
{
	const char *k = llmsim_param_info[i].key;
	size_t n = strlen(k);
	enum llmsim_yrange r = LLMSIM_YR_POSITIVE;
	if (n > 9 && !strcmp(k + n - 9, "_fraction"))
		r = LLMSIM_YR_FRACTION;
	return (struct llmsim_yfield){
		.key = k,
		.type = LLMSIM_YF_DOUBLE,
		.offset = base + (size_t)i * sizeof(double),
		.required = LLMSIM_YF_OPTIONAL,
		.range = r,
	};
}

int llmsim_gpu_extract_params(const struct llmsim_ynode *map, double *param, const char *path,
			      struct llmsim_err *err)
{
	struct llmsim_yfield f[LLMSIM_PARAM_COUNT];
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		f[i] = param_field(i, 0);
	int rc = llmsim_yaml_extract(map, f, LLMSIM_PARAM_COUNT, param, path, "efficiency", err);
	if (!rc)
		rc = llmsim_ymap_check_unused(map, path, "efficiency", err);
	return rc;
}

static const char *const relation_names[LLMSIM_REL_COUNT + 1] = {
	[LLMSIM_REL_NONE] = "none",
	[LLMSIM_REL_SAME_DIE] = "same_die",
	[LLMSIM_REL_NEW_MEMORY] = "new_memory",
	[LLMSIM_REL_NEW_ARCHITECTURE] = "new_architecture",
	[LLMSIM_REL_OTHER_VENDOR] = "other_vendor",
};
_Static_assert(sizeof relation_names / sizeof relation_names[0] == LLMSIM_REL_COUNT + 1,
	       "relation names, NULL-terminated");

const char *llmsim_gpu_relation_name(enum llmsim_gpu_relation r)
{
	return (unsigned)r < LLMSIM_REL_COUNT ? relation_names[r] : NULL;
}

/* calibration_basis: {gpu: NAME, relation: same_die|new_memory|
 * new_architecture|other_vendor}: the calibrated GPU this file is priced
 * from and how it differs from it. */
static int load_basis(const struct llmsim_ynode *root, struct llmsim_gpu *gpu, const char *path,
		      struct llmsim_err *err)
{
	const struct llmsim_ynode *b;
	int rc = section(root, "calibration_basis", 0, path, &b, err);
	if (rc || !b)
		return rc;
	int rel = -1;
	const struct llmsim_yfield f[] = {
		FLD("gpu", LLMSIM_YF_STRING, basis, LLMSIM_YF_REQUIRED, LLMSIM_YR_ANY),
		{.key = "relation", .type = LLMSIM_YF_ENUM, .required = LLMSIM_YF_REQUIRED,
		 .range = LLMSIM_YR_ANY, .names = relation_names + 1},
	};
	/* the basis into the GPU, the relation into a local */
	if ((rc = llmsim_yaml_extract(b, f, 1, gpu, path, "calibration_basis", err)) ||
	    (rc = llmsim_yaml_extract(b, f + 1, 1, &rel, path, "calibration_basis", err)) ||
	    (rc = llmsim_ymap_check_unused(b, path, "calibration_basis", err)))
		return rc;
	gpu->relation = (enum llmsim_gpu_relation)(rel + 1);
	if (!llmsim_data_name_ok(gpu->basis) || !strcmp(gpu->basis, gpu->name)) {
		const struct llmsim_ynode *v = at(b, "gpu");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'gpu' of 'calibration_basis' must name another GPU");
	}
	return 0;
}

/* Relations between values that each passed its own range check. */
static int cross_check(const struct llmsim_ynode *root, const struct llmsim_gpu *g,
		       const char *path, struct llmsim_err *err)
{
	const struct llmsim_ynode *c = llmsim_ymap_get(root, "compute");
	const struct llmsim_ynode *s = llmsim_ymap_get(root, "sm_limits");
	const struct llmsim_ynode *v;
	if (g->base_clock_hz > g->boost_clock_hz) {
		v = at(c, "base_clock_hz");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'base_clock_hz' must not exceed 'boost_clock_hz'");
	}
	if (g->smem_bytes_per_block_max > g->smem_bytes_per_sm) {
		v = at(s, "smem_bytes_per_block_max");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'smem_bytes_per_block_max' must not exceed 'smem_bytes_per_sm'");
	}
	if (g->registers_per_block_max > g->registers_per_sm) {
		v = at(s, "registers_per_block_max");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'registers_per_block_max' must not exceed 'registers_per_sm'");
	}
	if (g->threads_per_block_max > g->threads_per_sm_max) {
		v = at(s, "threads_per_block_max");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'threads_per_block_max' must not exceed 'threads_per_sm_max'");
	}
	if (g->hbm_bytes > 0x1p53) { /* 9 PB: token counts derived from it stay exact */
		v = at(llmsim_ymap_get(root, "memory"), "hbm_bytes");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'hbm_bytes' must be at most 2^53");
	}
	if ((double)g->warps_per_sm_max * g->warp_size < g->threads_per_sm_max) {
		v = at(s, "warps_per_sm_max");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'warps_per_sm_max' times 'warp_size' is below 'threads_per_sm_max'");
	}
	return 0;
}

/* Keys the hardware files once had (until 2026-12): a file that still
 * has one is told, where the key stands, what became of it. */
static const struct {
	const char *section; /* NULL: the top level */
	const char *key, *now;
} retired[] = {
	{NULL, "kernel_launch_s",
	 "is no longer read (nothing used it; PyTorch eager's host time per kernel is "
	 "infer's eager_host_s): delete it"},
	{"compute", "sustained_clock_hz",
	 "is now 'burst_clock_hz' (the clock a tensor-bound kernel holds in a burst)"},
};

static int retired_keys(const struct llmsim_ynode *root, const char *path, struct llmsim_err *err)
{
	for (size_t i = 0; i < N(retired); i++) {
		const struct llmsim_ynode *m =
			retired[i].section ? llmsim_ymap_get(root, retired[i].section) : root;
		for (size_t k = 0; m && m->kind == LLMSIM_Y_MAP && k < m->n; k++)
			if (!strcmp(m->keys[k], retired[i].key))
				return llmsim_err_setloc(err, LLMSIM_EPARSE, path, m->key_line[k],
							 m->key_col[k], "'%s' %s", retired[i].key,
							 retired[i].now);
	}
	return 0;
}

static int load_tree(const struct llmsim_ynode *root, void *obj, const char *path,
		     struct llmsim_err *err)
{
	struct llmsim_gpu *gpu = obj;
	const struct llmsim_ynode *sec;
	int rc;

	memset(gpu, 0, sizeof *gpu);
	snprintf(gpu->path, sizeof gpu->path, "%s", path);
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		gpu->param[i] = llmsim_param_info[i].def;
	if (root->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, root->line, root->col,
					 "a hardware file must be a mapping of keys");
	if ((rc = retired_keys(root, path, err)) ||
	    (rc = llmsim_yaml_extract(root, top_fields, N(top_fields), gpu, path, NULL, err)))
		return rc;
	if (!llmsim_data_name_ok(gpu->name)) {
		const struct llmsim_ynode *v = at(root, "name");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'name' must be letters, digits, '.', '_' or '-'");
	}
	if ((rc = llmsim_data_read_aliases(root, path, gpu->aliases, sizeof gpu->aliases[0],
					   LLMSIM_GPU_MAX_ALIASES, &gpu->naliases, err)))
		return rc;
	if ((rc = section(root, "compute", 1, path, &sec, err)) ||
	    (rc = load_activity(sec, gpu, path, err)) ||
	    (rc = extract(sec, compute_fields, N(compute_fields), gpu, path, "compute", err)))
		return rc;
	if ((rc = section(root, "sm_limits", 1, path, &sec, err)) ||
	    (rc = extract(sec, sm_fields, N(sm_fields), gpu, path, "sm_limits", err)))
		return rc;
	if ((rc = section(root, "memory", 1, path, &sec, err)) ||
	    (rc = extract(sec, memory_fields, N(memory_fields), gpu, path, "memory", err)))
		return rc;
	if ((rc = load_peaks(root, gpu, path, err)))
		return rc;
	if ((rc = section(root, "interconnect", 1, path, &sec, err)) ||
	    (rc = extract(sec, ic_fields, N(ic_fields), gpu, path, "interconnect", err)))
		return rc;
	if (!gpu->nvlink_domain_gpus) {
		gpu->nvlink_domain_gpus = gpu->gpus_per_node;
	} else if (gpu->nvlink_domain_gpus < gpu->gpus_per_node ||
		   gpu->nvlink_domain_gpus % gpu->gpus_per_node) {
		const struct llmsim_ynode *v = at(sec, "nvlink_domain_gpus");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'nvlink_domain_gpus' must be a multiple of 'gpus_per_node' "
					 "(whole nodes share one NVLink domain)");
	}
	if ((rc = section(root, "host", 0, path, &sec, err)) ||
	    (sec && (rc = extract(sec, host_fields, N(host_fields), gpu, path, "host", err))))
		return rc;
	gpu->has_host = sec != NULL;
	if (sec && gpu->gpus_per_host_link > gpu->gpus_per_node) {
		const struct llmsim_ynode *v = at(sec, "gpus_per_host_link");
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, v->line, v->col,
					 "'gpus_per_host_link' must not exceed 'gpus_per_node'");
	}
	if ((rc = section(root, "efficiency", 0, path, &sec, err)))
		return rc;
	if (sec && (rc = llmsim_gpu_extract_params(sec, gpu->param, path, err)))
		return rc;
	for (int i = 0; sec && i < LLMSIM_PARAM_COUNT; i++)
		gpu->param_stated[i] = llmsim_ymap_get(sec, llmsim_param_info[i].key) != NULL;
	if ((rc = load_basis(root, gpu, path, err)))
		return rc;
	if ((rc = llmsim_ymap_check_unused(root, path, NULL, err)))
		return rc;
	return cross_check(root, gpu, path, err);
}

static const char *name_at(const void *obj, int i)
{
	const struct llmsim_gpu *g = obj;
	return i == 0 ? g->name : i <= g->naliases ? g->aliases[i - 1] : NULL;
}

const struct llmsim_data_kind llmsim_gpu_kind = {
	.sub = "hw", .what = "GPU", .parse = load_tree, .name = name_at,
};

int llmsim_gpu_load_buf(const char *buf, size_t len, const char *name,
			struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	return llmsim_data_read_buf(buf, len, name, load_tree, gpu, err);
}

int llmsim_gpu_load_file(const char *path, struct llmsim_gpu *gpu, struct llmsim_err *err)
{
	return llmsim_data_read_file(path, load_tree, gpu, err);
}

double llmsim_gpu_peak_flops(const struct llmsim_gpu *gpu, enum llmsim_dtype dt)
{
	if ((unsigned)dt >= LLMSIM_DT_COUNT)
		return 0;
	if (gpu->tensor_flops_per_s[dt] > 0)
		return gpu->tensor_flops_per_s[dt];
	return gpu->vector_flops_per_s[dt];
}
