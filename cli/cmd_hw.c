/*
 * cmd_hw.c - `llmsim hw list` and `llmsim hw show NAME|PATH`: the shipped
 * GPU descriptions as a table, and one GPU in full (with the calibration
 * profile that applies to it, if any).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "base/paths.h"
#include "hw/gpu.h"
#include "hw/gpu_load.h"
#include "args.h"
#include "commands.h"
#include "common.h"

static const char hw_about[] =
	"Hardware descriptions: hw/*.yaml in the data folder.\n\n"
	"verbs:\n"
	"  list            every shipped GPU with its headline figures\n"
	"  show NAME|PATH  one GPU in full: limits, memory, peaks, interconnect,\n"
	"                  efficiencies and calibration profile\n\n"
	"NAME is a short name or alias (a100, h100, h200, b200, mi300x) or a file stem;\n"
	"a name containing '/' or ending in .yaml is a file. LLMSIM_NO_PROFILE=1 ignores\n"
	"calibration profiles (hw/profiles/NAME.yaml).";

/* ---- list ---- */

static int list_row(struct cli_list *c, const char *path)
{
	struct llmsim_gpu g;
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX], e[LLMSIM_FMT_MAX],
		f[LLMSIM_FMT_MAX];
	if (llmsim_gpu_load_file(path, &g, &c->err))
		return -1;
	double fp8 = llmsim_gpu_peak_flops(&g, LLMSIM_DT_FP8);
	if (c->json) {
		llmsim_json_obj_begin(&c->j, NULL);
		llmsim_json_str(&c->j, "name", g.name);
		llmsim_json_str(&c->j, "full_name", g.full_name);
		llmsim_json_str(&c->j, "path", g.path);
		llmsim_json_int(&c->j, "sms", g.sms);
		llmsim_json_num(&c->j, "hbm_bytes", g.hbm_bytes);
		llmsim_json_num(&c->j, "hbm_bytes_per_s", g.hbm_bytes_per_s);
		llmsim_json_num(&c->j, "bf16_flops_per_s", llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16));
		llmsim_json_num(&c->j, "fp8_flops_per_s", fp8);
		llmsim_json_num(&c->j, "l2_bytes", g.l2_bytes);
		llmsim_json_obj_end(&c->j);
		return 0;
	}
	char sms[16];
	snprintf(sms, sizeof sms, "%d", g.sms);
	const char *cells[] = {
		g.name, g.full_name, sms, llmsim_fmt_bytes(a, g.hbm_bytes),
		llmsim_fmt_bytes_rate(b, g.hbm_bytes_per_s),
		llmsim_fmt_flops_rate(d, llmsim_gpu_peak_flops(&g, LLMSIM_DT_BF16)),
		fp8 > 0 ? llmsim_fmt_flops_rate(e, fp8) : "-", llmsim_fmt_bytes(f, g.l2_bytes),
	};
	llmsim_table_row(&c->t, cells);
	return 0;
}

static int hw_list(int argc, char **argv)
{
	static const char *const head[] = {"<name", "<full name", "SMs", "HBM", "HBM B/W",
					   "BF16 dense", "FP8 dense", "L2"};
	return cli_list_verb("llmsim hw", "List the shipped GPU descriptions (dense peak rates).",
			     argc, argv, head, 8, llmsim_gpu_list, list_row);
}

/* ---- show ---- */

struct kv {
	struct llmsim_table t;
};

static void kv_init(struct kv *k)
{
	static const char *const head[] = {"<", "<"};
	llmsim_table_init(&k->t, 2, head);
}

static void kv_row(struct kv *k, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kv_row(struct kv *k, const char *key, const char *fmt, ...)
{
	char v[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof v, fmt, ap);
	va_end(ap);
	const char *cells[] = {key, v};
	llmsim_table_row(&k->t, cells);
}

/* Print a titled group of key/value rows without the table's header. */
static void kv_print(struct kv *k, const char *title)
{
	printf("%s\n", title);
	size_t w = 0;
	for (size_t r = 0; r < k->t.rows; r++) {
		size_t n = strlen(k->t.cells[r * 2]);
		if (n > w)
			w = n;
	}
	for (size_t r = 0; r < k->t.rows; r++)
		printf("  %-*s  %s\n", (int)w, k->t.cells[r * 2], k->t.cells[r * 2 + 1]);
	printf("\n");
	llmsim_table_release(&k->t);
}

struct cal_ctx {
	struct llmsim_json *j;
	struct kv *k;
};

static void cal_one(const char *key, const char *value, void *vctx)
{
	struct cal_ctx *c = vctx;
	char *end;
	double v = strtod(value, &end);
	if (c->j && end != value && !*end) /* a number stays one (--json: one shape per key) */
		llmsim_json_num(c->j, key, v);
	else if (c->j)
		llmsim_json_str(c->j, key, value);
	else
		kv_row(c->k, key, "%s", value);
}

static void show_json(const struct llmsim_gpu *g, FILE *out)
{
	struct llmsim_json j;
	llmsim_json_init(&j, out);
	llmsim_json_obj_begin(&j, NULL);
	llmsim_json_str(&j, "name", g->name);
	llmsim_json_str(&j, "full_name", g->full_name);
	llmsim_json_str(&j, "vendor", g->vendor);
	llmsim_json_str(&j, "arch", g->arch);
	llmsim_json_str(&j, "path", g->path);
	llmsim_json_arr_begin(&j, "aliases");
	for (int i = 0; i < g->naliases; i++)
		llmsim_json_str(&j, NULL, g->aliases[i]);
	llmsim_json_arr_end(&j);
	llmsim_json_int(&j, "sms", g->sms);
	llmsim_json_int(&j, "warp_size", g->warp_size);
	llmsim_json_num(&j, "boost_clock_hz", g->boost_clock_hz);
	llmsim_json_num(&j, "base_clock_hz", g->base_clock_hz);
	if (g->tensor_clock_hz > 0)
		llmsim_json_num(&j, "tensor_clock_hz", g->tensor_clock_hz);
	if (g->burst_clock_hz > 0)
		llmsim_json_num(&j, "burst_clock_hz", g->burst_clock_hz);
	if (llmsim_gpu_power_cap_hz(g) > 0)
		llmsim_json_num(&j, "power_capped_clock_hz", llmsim_gpu_power_cap_hz(g));
	if (g->power_window_s > 0)
		llmsim_json_num(&j, "power_window_s", g->power_window_s);
	llmsim_json_num(&j, "hbm_bytes", g->hbm_bytes);
	llmsim_json_num(&j, "hbm_bytes_per_s", g->hbm_bytes_per_s);
	llmsim_json_num(&j, "hbm_latency_s", g->hbm_latency_s);
	llmsim_json_num(&j, "l2_bytes", g->l2_bytes);
	llmsim_json_num(&j, "l2_bytes_per_s", g->l2_bytes_per_s);
	llmsim_json_num(&j, "smem_bytes_per_sm", g->smem_bytes_per_sm);
	llmsim_json_num(&j, "smem_bytes_per_s_per_sm", g->smem_bytes_per_s_per_sm);
	llmsim_json_obj_begin(&j, "sm_limits");
	llmsim_json_int(&j, "registers_per_sm", g->registers_per_sm);
	llmsim_json_int(&j, "registers_per_block_max", g->registers_per_block_max);
	llmsim_json_int(&j, "registers_per_thread_max", g->registers_per_thread_max);
	llmsim_json_int(&j, "register_alloc_unit", g->register_alloc_unit);
	llmsim_json_num(&j, "smem_bytes_per_sm", g->smem_bytes_per_sm);
	llmsim_json_num(&j, "smem_bytes_per_block_max", g->smem_bytes_per_block_max);
	llmsim_json_num(&j, "smem_reserved_bytes_per_block", g->smem_reserved_bytes_per_block);
	llmsim_json_num(&j, "smem_alloc_unit_bytes", g->smem_alloc_unit_bytes);
	llmsim_json_int(&j, "threads_per_sm_max", g->threads_per_sm_max);
	llmsim_json_int(&j, "threads_per_block_max", g->threads_per_block_max);
	llmsim_json_int(&j, "warps_per_sm_max", g->warps_per_sm_max);
	llmsim_json_int(&j, "blocks_per_sm_max", g->blocks_per_sm_max);
	llmsim_json_obj_end(&j);
	/* objects by data type: "_by_dtype", as a unit-named key is a number */
	const char *keys[] = {"peak_flops_per_s_by_dtype", "tensor_flops_per_s_by_dtype",
			      "vector_flops_per_s_by_dtype"};
	for (int s = 0; s < 3; s++) {
		llmsim_json_obj_begin(&j, keys[s]);
		for (int d = 0; d < LLMSIM_DT_COUNT; d++) {
			double v = s == 0 ? llmsim_gpu_peak_flops(g, (enum llmsim_dtype)d)
				 : s == 1 ? g->tensor_flops_per_s[d]
					  : g->vector_flops_per_s[d];
			if (v > 0)
				llmsim_json_num(&j, llmsim_dtype_name((enum llmsim_dtype)d), v);
		}
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_begin(&j, "interconnect");
	llmsim_json_int(&j, "gpus_per_node", g->gpus_per_node);
	llmsim_json_int(&j, "nvlink_domain_gpus", g->nvlink_domain_gpus);
	llmsim_json_num(&j, "intra_node_bytes_per_s", g->intra_node_bytes_per_s);
	llmsim_json_num(&j, "intra_node_latency_s", g->intra_node_latency_s);
	llmsim_json_num(&j, "inter_node_bytes_per_s", g->inter_node_bytes_per_s);
	llmsim_json_num(&j, "inter_node_latency_s", g->inter_node_latency_s);
	llmsim_json_num(&j, "pcie_bytes_per_s", g->pcie_bytes_per_s);
	llmsim_json_obj_end(&j);
	if (g->has_host) {
		llmsim_json_obj_begin(&j, "host");
		llmsim_json_num(&j, "host_memory_bytes", g->host_memory_bytes);
		llmsim_json_num(&j, "host_memory_bytes_per_s", g->host_memory_bytes_per_s);
		llmsim_json_int(&j, "cpu_cores", g->cpu_cores);
		llmsim_json_num(&j, "cpu_adam_params_per_s_per_core", g->cpu_adam_params_per_s_per_core);
		llmsim_json_int(&j, "gpus_per_host_link", g->gpus_per_host_link);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_num(&j, "tdp_w", g->tdp_w);
	llmsim_json_obj_begin(&j, "efficiency");
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		llmsim_json_num(&j, llmsim_param_info[i].key, g->param[i]);
	llmsim_json_obj_end(&j);
	if (g->basis[0]) {
		llmsim_json_obj_begin(&j, "calibration_basis");
		llmsim_json_str(&j, "gpu", g->basis);
		llmsim_json_str(&j, "relation", llmsim_gpu_relation_name(g->relation));
		llmsim_json_arr_begin(&j, "efficiencies_from_basis");
		for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
			if (g->param_from_basis[i])
				llmsim_json_str(&j, NULL, llmsim_param_info[i].key);
		llmsim_json_arr_end(&j);
		if (g->transfer_path[0])
			llmsim_json_str(&j, "transfer_path", g->transfer_path);
		llmsim_json_obj_end(&j);
	}
	if (g->profile_path[0]) {
		llmsim_json_obj_begin(&j, "calibration");
		llmsim_json_str(&j, "profile_path", g->profile_path);
		struct cal_ctx c = {.j = &j};
		llmsim_gpu_profile_calibration(g->profile_path, cal_one, &c, NULL);
		llmsim_json_obj_begin(&j, "expected_error_by_class");
		for (int i = 0; i < g->nerr_classes; i++) {
			const struct llmsim_err_class *e = &g->err_classes[i];
			llmsim_json_obj_begin(&j, e->name);
			llmsim_json_num(&j, "median", e->median_abs_pct);
			llmsim_json_num(&j, "p80", e->p80_abs_pct);
			llmsim_json_num(&j, "p90", e->p90_abs_pct);
			llmsim_json_num(&j, "bias", e->bias_pct);
			llmsim_json_bool(&j, "biased", llmsim_err_class_biased(e));
			llmsim_json_int(&j, "n", e->n);
			llmsim_json_obj_end(&j);
		}
		llmsim_json_obj_end(&j);
		llmsim_json_obj_end(&j);
	}
	llmsim_json_obj_end(&j);
	llmsim_json_finish(&j);
}

static void show_human(const struct llmsim_gpu *g)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
	struct kv k;

	printf("%s (%s, %s %s)\n", g->full_name, g->name, g->vendor, g->arch);
	printf("file: %s\n", llmsim_data_rel(g->path));
	if (g->naliases) {
		printf("aliases:");
		for (int i = 0; i < g->naliases; i++)
			printf("%s %s", i ? "," : "", g->aliases[i]);
		printf("\n");
	}
	printf("\n");

	kv_init(&k);
	kv_row(&k, !strcmp(g->vendor, "amd") ? "CUs" : "SMs", "%d", g->sms);
	kv_row(&k, "warp size", "%d", g->warp_size);
	kv_row(&k, "boost clock", "%.0f MHz", g->boost_clock_hz / 1e6);
	kv_row(&k, "base clock", "%.0f MHz", g->base_clock_hz / 1e6);
	if (g->tensor_clock_hz > 0)
		kv_row(&k, "tensor clock", "%.0f MHz (the tensor peaks' clock)", g->tensor_clock_hz / 1e6);
	if (g->burst_clock_hz > 0)
		kv_row(&k, "burst clock", "%.0f MHz (one kernel under tensor load)",
		       g->burst_clock_hz / 1e6);
	if (llmsim_gpu_power_cap_hz(g) > 0)
		kv_row(&k, "power-capped clock", "%.0f MHz (tensor pipes busy without a break)",
		       llmsim_gpu_power_cap_hz(g) / 1e6);
	if (g->power_window_s > 0)
		kv_row(&k, "power window", "%.0f ms (a load slows once it fills it)",
		       g->power_window_s * 1e3);
	kv_row(&k, "TDP", "%.0f W", g->tdp_w);
	kv_print(&k, "compute");

	kv_init(&k);
	kv_row(&k, "registers per SM", "%d x 32-bit", g->registers_per_sm);
	kv_row(&k, "registers per block, max", "%d", g->registers_per_block_max);
	kv_row(&k, "registers per thread, max", "%d", g->registers_per_thread_max);
	kv_row(&k, "register allocation unit", "%d per warp", g->register_alloc_unit);
	kv_row(&k, "shared memory per SM", "%.0f B (%s)", g->smem_bytes_per_sm,
	       llmsim_fmt_bytes(a, g->smem_bytes_per_sm));
	kv_row(&k, "shared memory per block, max", "%.0f B", g->smem_bytes_per_block_max);
	kv_row(&k, "shared memory reserved per block", "%.0f B", g->smem_reserved_bytes_per_block);
	kv_row(&k, "shared memory allocation unit", "%.0f B", g->smem_alloc_unit_bytes);
	kv_row(&k, "threads per SM / block, max", "%d / %d", g->threads_per_sm_max,
	       g->threads_per_block_max);
	kv_row(&k, "warps per SM, max", "%d", g->warps_per_sm_max);
	kv_row(&k, "blocks per SM, max", "%d", g->blocks_per_sm_max);
	kv_print(&k, "per-SM limits");

	kv_init(&k);
	kv_row(&k, "HBM", "%s (%.0f B)", llmsim_fmt_bytes(a, g->hbm_bytes), g->hbm_bytes);
	kv_row(&k, "HBM bandwidth", "%s", llmsim_fmt_bytes_rate(a, g->hbm_bytes_per_s));
	kv_row(&k, "HBM latency", "%s", llmsim_fmt_time(a, g->hbm_latency_s));
	kv_row(&k, "L2", "%s (%.0f B)", llmsim_fmt_bytes(a, g->l2_bytes), g->l2_bytes);
	kv_row(&k, "L2 bandwidth", "%s", llmsim_fmt_bytes_rate(a, g->l2_bytes_per_s));
	kv_row(&k, "shared memory bandwidth", "%s per SM, %s total",
	       llmsim_fmt_bytes_rate(a, g->smem_bytes_per_s_per_sm),
	       llmsim_fmt_bytes_rate(b, g->smem_bytes_per_s_per_sm * g->sms));
	kv_print(&k, "memory");

	static const char *const head[] = {"<dense peak", "tensor", "vector", "FLOP/B (HBM)"};
	struct llmsim_table t;
	llmsim_table_init(&t, 4, head);
	for (int d = 0; d < LLMSIM_DT_COUNT; d++) {
		double tp = g->tensor_flops_per_s[d], vp = g->vector_flops_per_s[d];
		if (tp <= 0 && vp <= 0)
			continue;
		char r[32];
		snprintf(r, sizeof r, "%.0f", llmsim_gpu_peak_flops(g, (enum llmsim_dtype)d) /
						 g->hbm_bytes_per_s);
		const char *cells[] = {llmsim_dtype_name((enum llmsim_dtype)d),
				       tp > 0 ? llmsim_fmt_flops_rate(a, tp) : "-",
				       vp > 0 ? llmsim_fmt_flops_rate(b, vp) : "-", r};
		llmsim_table_row(&t, cells);
	}
	printf("peak rates (dense)\n");
	llmsim_table_print(&t, stdout);
	llmsim_table_release(&t);
	printf("\n");

	kv_init(&k);
	kv_row(&k, "GPUs per node", "%d", g->gpus_per_node);
	if (llmsim_gpu_nvlink_domain(g) != g->gpus_per_node)
		kv_row(&k, "NVLink domain", "%d GPUs (%d nodes), at the intra-node rate",
		       g->nvlink_domain_gpus, g->nvlink_domain_gpus / g->gpus_per_node);
	kv_row(&k, "intra-node", "%s per direction, %s latency",
	       llmsim_fmt_bytes_rate(a, g->intra_node_bytes_per_s),
	       llmsim_fmt_time(b, g->intra_node_latency_s));
	kv_row(&k, "inter-node", "%s per direction, %s latency",
	       llmsim_fmt_bytes_rate(a, g->inter_node_bytes_per_s),
	       llmsim_fmt_time(b, g->inter_node_latency_s));
	kv_row(&k, "PCIe", "%s per direction", llmsim_fmt_bytes_rate(a, g->pcie_bytes_per_s));
	if (g->has_host) {
		kv_row(&k, "host memory", "%s per node, %s", llmsim_fmt_bytes(a, g->host_memory_bytes),
		       llmsim_fmt_bytes_rate(b, g->host_memory_bytes_per_s));
		kv_row(&k, "host CPU", "%d cores; CPU Adam %.3g params/s per core", g->cpu_cores,
		       g->cpu_adam_params_per_s_per_core);
	}
	kv_print(&k, "interconnect and host");

	kv_init(&k);
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++) {
		const char *key = llmsim_param_info[i].key;
		size_t n = strlen(key);
		if (n > 2 && !strcmp(key + n - 2, "_s"))
			kv_row(&k, key, "%s", llmsim_fmt_time(a, g->param[i]));
		else if (strstr(key, "_fraction") || strstr(key, "_relative"))
			kv_row(&k, key, "%.3f", g->param[i]);
		else
			kv_row(&k, key, "%g", g->param[i]);
	}
	char title[160];
	int from_basis = 0;
	for (int i = 0; i < LLMSIM_PARAM_COUNT; i++)
		from_basis += g->param_from_basis[i];
	if (g->profile_path[0])
		snprintf(title, sizeof title, "efficiencies (from the calibration profile)");
	else if (from_basis)
		snprintf(title, sizeof title,
			 "efficiencies (no profile: %d of them the calibrated %s's, the same die)",
			 from_basis, g->basis);
	else
		snprintf(title, sizeof title, "efficiencies (assumed: no calibration profile)");
	kv_print(&k, title);
	if (g->basis[0])
		printf("calibration basis: %s (%s)%s%s\n", g->basis,
		       llmsim_gpu_relation_name(g->relation),
		       g->transfer_path[0] ? "; expected errors: the measured transfer, " : "",
		       g->transfer_path[0] ? llmsim_data_rel(g->transfer_path) : "");

	if (g->profile_path[0]) {
		kv_init(&k);
		kv_row(&k, "profile", "%s", llmsim_data_rel(g->profile_path));
		struct cal_ctx c = {.k = &k};
		llmsim_gpu_profile_calibration(g->profile_path, cal_one, &c, NULL);
		kv_print(&k, "calibration");
		if (g->nerr_classes) {
			static const char *const eh[] = {"<op class", "median |err|", "p80 |err|",
							 "p90 |err|", "bias", "held-out n"};
			llmsim_table_init(&t, 6, eh);
			for (int i = 0; i < g->nerr_classes; i++) {
				const struct llmsim_err_class *e = &g->err_classes[i];
				llmsim_table_rowf(&t, "%s\t%.1f%%\t%.1f%%\t%.1f%%\t%+.1f%%%s\t%d",
						  e->name, e->median_abs_pct, e->p80_abs_pct,
						  e->p90_abs_pct, e->bias_pct,
						  llmsim_err_class_biased(e) ? " (biased)" : "", e->n);
			}
			printf("expected prediction error, one kernel, on held-out kernels"
			       " (bias > 0: predicted times too long; p80 is the error bar printed)\n");
			llmsim_table_print(&t, stdout);
			llmsim_table_release(&t);
		}
	}
}

static int hw_show(int argc, char **argv)
{
	int json = 0, npos = 0;
	char *pos[1];
	const struct llmsim_opt opts[] = {
		{"json", LLMSIM_ARG_FLAG, &json, NULL, "JSON output (SI units)", 0, NULL, NULL},
	};
	int rc = llmsim_args_parse("llmsim hw show", "NAME|PATH [--json]",
				   "Show one GPU description in full.", argc - 1, argv + 1, opts,
				   1, pos, 1, &npos);
	if (rc)
		return rc == LLMSIM_ARGS_HELP ? 0 : 2;
	if (npos != 1)
		return llmsim_args_error("llmsim hw show", "expected a GPU name or file (try 'llmsim hw list')");
	struct llmsim_gpu g;
	struct llmsim_err err = {0};
	if (llmsim_gpu_load(pos[0], &g, &err)) {
		fprintf(stderr, "llmsim hw show: %s\n", err.msg);
		return 1;
	}
	if (json)
		show_json(&g, stdout);
	else
		show_human(&g);
	return 0;
}

int cmd_hw(int argc, char **argv, const struct cli_setup *s)
{
	(void)s; /* no model or GPU of its own: its verbs load theirs */
	return cli_list_show("llmsim hw", hw_about, argc, argv, hw_list, hw_show);
}
