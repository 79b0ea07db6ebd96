/*
 * train_out.c - human tables and JSON for training results (train, plan,
 * validate print the same figures the same way).
 */
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"
#include "args.h"
#include "sim/expected_error.h"
#include "train_out.h"

const char *const train_dtype_choices[] = {"bf16", "fp8", "mxfp8", "nvfp4", NULL};
const char *const train_on_off[] = {"off", "on", NULL};

int train_precision_args(const char *cmd, int dtype, int precision, const struct llmsim_gpu *gpu,
			 enum llmsim_precision_recipe *out)
{
	static const enum llmsim_dtype dts[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8, LLMSIM_DT_MXFP8,
						LLMSIM_DT_NVFP4};
	int p = llmsim_precision_of_dtype(dts[dtype >= 0 && dtype < 4 ? dtype : 0]);
	if (precision >= 0) {
		if (dtype > 0 && llmsim_precision_desc(precision)->gemm != dts[dtype]) {
			fprintf(stderr, "%s: --precision %s runs its GEMMs in %s, not --dtype %s\n",
				cmd, llmsim_precision_name(precision),
				llmsim_dtype_name(llmsim_precision_desc(precision)->gemm),
				train_dtype_choices[dtype]);
			return 2;
		}
		p = precision;
	}
	struct llmsim_err err = {0};
	if (llmsim_precision_check(gpu, p, &err)) {
		fprintf(stderr, "%s: %s\n", cmd, err.msg);
		return 1;
	}
	*out = p;
	return 0;
}
enum llmsim_precision_recipe train_stack_fp8(const struct llmsim_stack_def *sd, int precision,
					     enum llmsim_precision_recipe p)
{
	if (precision < 0 && p == LLMSIM_PREC_FP8_DELAYED && !(sd->precisions & 1u << p) &&
	    (sd->precisions & 1u << LLMSIM_PREC_FP8_CURRENT))
		return LLMSIM_PREC_FP8_CURRENT;
	return p;
}

const char *const train_attn_choices[] = {"naive", "flash2", "flash3", "sdpa", NULL};

enum llmsim_attn_impl train_attn_from_choice(int i, const struct llmsim_gpu *gpu)
{
	static const enum llmsim_attn_impl map[] = {LLMSIM_ATTN_NAIVE, LLMSIM_ATTN_FLASH2,
						    LLMSIM_ATTN_FLASH3};
	return i == 3 ? llmsim_train_sdpa(gpu) : map[i];
}

char *train_cfg_line(char *buf, size_t size, const struct llmsim_train_cfg *c)
{
	char sched[32];
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		snprintf(sched, sizeof sched, "interleaved v=%d", c->chunks);
	else
		snprintf(sched, sizeof sched, "%s", llmsim_pp_sched_name(c->schedule));
	int n = snprintf(buf, size, "tp %d  pp %d  dp %d  cp %d  ep %d  zero %d  mb %d  %s  %s  %s",
			 c->tp, c->pp, c->dp, c->cp, c->ep, c->zero, c->micro_batch,
			 llmsim_recompute_name(c->recompute), sched, llmsim_attn_impl_name(c->attn));
	if (c->offload != LLMSIM_OFFLOAD_NONE && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, "  offload %s%s", llmsim_offload_name(c->offload),
			      c->dpu ? "+dpu" : "");
	if (c->recompute == LLMSIM_RECOMP_MODULES && n > 0 && (size_t)n < size) {
		char mods[128];
		n += snprintf(buf + n, size - n, " (%s)", train_modules_str(mods, sizeof mods, c));
	}
	if (c->offload_activations > 0 && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, "  act-offload %.2g", c->offload_activations);
	if (c->zero >= 2 && c->fsdp != LLMSIM_FSDP_NONE && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, "  fsdp %s", llmsim_fsdp_names[c->fsdp]);
	if ((c->stack_name[0] || c->stack != LLMSIM_STACK_CORE) && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - n, "  %s", train_stack_str(c));
	return buf;
}

const char *train_stack_str(const struct llmsim_train_cfg *c)
{
	return c->stack_name[0] ? c->stack_name : llmsim_stack_name(c->stack);
}

char *train_modules_str(char *buf, size_t size, const struct llmsim_train_cfg *c)
{
	size_t len = 0;
	buf[0] = 0;
	for (int k = 0; k < LLMSIM_RM_COUNT && len < size; k++)
		if (c->recompute_modules & 1u << k) {
			int w = snprintf(buf + len, size - len, "%s%s", len ? "," : "",
					 llmsim_recompute_module_names[k]);
			if (w > 0)
				len += (size_t)w;
		}
	return buf;
}

static void mem_row(struct llmsim_table *t, const char *name, double bytes, double total,
		    const char *note)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
	llmsim_table_rowf(t, "%s\t%s\t%s\t%s", name, llmsim_fmt_bytes(a, bytes),
			  total > 0 ? llmsim_fmt_pct(b, bytes / total) : "", note);
}

static void time_row(struct llmsim_table *t, const char *name, double s, double step,
		     const char *note)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX];
	llmsim_table_rowf(t, "%s\t%s\t%s\t%s", name, llmsim_fmt_time(a, s),
			  step > 0 ? llmsim_fmt_pct(b, s / step) : "", note);
}

/* Host memory of one node (offload). */
static void print_host(FILE *f, const struct llmsim_train_result *r, const struct llmsim_gpu *gpu)
{
	const struct llmsim_train_mem *mm = &r->mem;
	const struct llmsim_train_cfg *c = &r->cfg;
	char a[LLMSIM_FMT_MAX], note[160];
	int ranks = c->gpus < gpu->gpus_per_node ? c->gpus : gpu->gpus_per_node;
	fputs("\nhost memory per node\n", f);
	static const char *const hh[] = {"<part", "bytes", "share", "<note"};
	struct llmsim_table ht;
	llmsim_table_init(&ht, 4, hh);
	snprintf(note, sizeof note, "%s of %s params + 4 GB process",
		 c->offload == LLMSIM_OFFLOAD_PARAMS ? "fp32 master, m, v, grads 16 B + weights 2 B"
						     : "fp32 master, m, v, grads 16 B",
		 llmsim_fmt_count(a, mm->host_params_per_gpu));
	mem_row(&ht, "per GPU", mm->host_per_gpu_bytes, mm->host_per_node_bytes, note);
	snprintf(note, sizeof note, "%d ranks", ranks);
	mem_row(&ht, "node", mm->host_per_node_bytes, mm->host_per_node_bytes, note);
	snprintf(note, sizeof note, "%d CPU cores, %s DRAM", gpu->cpu_cores,
		 llmsim_fmt_bytes_rate(a, gpu->host_memory_bytes_per_s));
	mem_row(&ht, "host", mm->host_bytes, 0, note);
	if (r->host_fits)
		mem_row(&ht, "headroom", mm->host_bytes - mm->host_per_node_bytes, 0, "fits");
	else
		mem_row(&ht, "shortfall", mm->host_per_node_bytes - mm->host_bytes, 0,
			"DOES NOT FIT");
	llmsim_table_print(&ht, f);
	llmsim_table_release(&ht);
}

void train_print_result(FILE *f, const struct llmsim_train_result *r,
			const struct llmsim_model *m, const struct llmsim_gpu *gpu)
{
	const struct llmsim_train_cfg *c = &r->cfg;
	const struct llmsim_train_mem *mm = &r->mem;
	const struct llmsim_train_time *t = &r->time;
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], d[LLMSIM_FMT_MAX];
	char g[LLMSIM_FMT_MAX], note[256];

	if (c->engine == LLMSIM_ENGINE_TORCH) {
		train_print_torch(f, r, m, gpu);
		return;
	}
	fprintf(f, "%s on %d x %s\n", m->full_name[0] ? m->full_name : m->name, c->gpus,
		gpu->full_name[0] ? gpu->full_name : gpu->name);
	fprintf(f, "  parallel     tp %d x pp %d x dp %d x cp %d = %d GPUs, ep %d, ZeRO-%d%s\n",
		c->tp, c->pp, c->dp, c->cp, c->gpus, c->ep, c->zero,
		c->tp > 1 ? (c->sequence_parallel ? ", sequence parallel" : ", no SP") : "");
	if (c->offload != LLMSIM_OFFLOAD_NONE)
		fprintf(f, "  offload      %s: %s in host memory%s\n",
			c->offload == LLMSIM_OFFLOAD_PARAMS ? "ZeRO-Infinity (params)"
							    : "ZeRO-Offload (optimizer)",
			c->offload == LLMSIM_OFFLOAD_PARAMS
				? "16-bit weights, fp32 master, Adam m, v and gradients"
				: "fp32 master, Adam m, v and gradients",
			c->dpu ? "; CPU Adam with one-step delayed update (DPU)"
			       : "; CPU Adam after backward");
	fprintf(f, "  batch        %lld sequences x %lld tokens = %s tokens; micro-batch %d, "
		"%lld micro-batches\n",
		(long long)c->global_batch, (long long)c->seq, llmsim_fmt_count(a, r->tokens_per_step),
		c->micro_batch, (long long)r->microbatches);
	if (c->schedule == LLMSIM_SCHED_INTERLEAVED)
		snprintf(note, sizeof note, "interleaved, %d chunks", c->chunks);
	else if (c->schedule == LLMSIM_SCHED_DUALPIPE)
		snprintf(note, sizeof note, "DualPipe");
	else
		snprintf(note, sizeof note, "1F1B");
	fprintf(f, "  recipe       %s, %s matmuls, recompute %s, attention %s, schedule %s",
		llmsim_recipe_name(c->recipe), llmsim_dtype_name(c->dtype),
		llmsim_recompute_name(c->recompute), llmsim_attn_impl_name(c->attn), note);
	if (c->lora_rank)
		fprintf(f, ", LoRA rank %d", c->lora_rank);
	if (m->has_moe && c->moe_imbalance > 1)
		fprintf(f, ", MoE imbalance %.2f", c->moe_imbalance);
	if (c->recompute == LLMSIM_RECOMP_MODULES)
		fprintf(f, " (%s)", train_modules_str(note, sizeof note, c));
	if (c->recompute == LLMSIM_RECOMP_FULL && c->recompute_layers)
		fprintf(f, " (%s, %d layers)", llmsim_recompute_method_names[c->recompute_method],
			c->recompute_layers);
	if (c->offload_activations > 0)
		fprintf(f, ", %.0f%% of activations offloaded", 100 * c->offload_activations);
	if (c->zero >= 2 && c->fsdp != LLMSIM_FSDP_NONE)
		fprintf(f, ", FSDP %s", llmsim_fsdp_names[c->fsdp]);
	if (c->stack_name[0] || c->stack != LLMSIM_STACK_CORE)
		fprintf(f, ", stack %s", train_stack_str(c));
	if ((int)c->precision != llmsim_precision_of_dtype(c->dtype))
		fprintf(f, ", precision %s", llmsim_precision_name(c->precision));
	if (c->tp_overlap != LLMSIM_TP_OVERLAP_NONE)
		fprintf(f, ", TP overlap %s", llmsim_tp_overlap_name(c->tp_overlap));
	if (c->cp_comm != LLMSIM_CP_P2P)
		fprintf(f, ", CP %s", llmsim_cp_comm_name(c->cp_comm));
	if (m->has_moe && (c->moe_dispatch != LLMSIM_MOE_ALLTOALL || c->moe_overlap))
		fprintf(f, ", MoE dispatch %s%s", llmsim_moe_dispatch_name(c->moe_dispatch),
			c->moe_overlap ? " overlapped" : "");
	fputc('\n', f);
	train_load_line(note, sizeof note, r, gpu);
	fprintf(f, "  load         %s\n", note);
	fprintf(f, "  operand data %s\n", llmsim_operand_data_name(c->operand_data));

	fputs("\nmemory per GPU\n", f);
	static const char *const mh[] = {"<part", "bytes", "share", "<note"};
	struct llmsim_table mt;
	llmsim_table_init(&mt, 4, mh);
	int offp = c->offload == LLMSIM_OFFLOAD_PARAMS;
	if (offp)
		snprintf(note, sizeof note, "none held: the 16-bit weights are in host memory; a "
			 "layer at a time gathered into `other`");
	else if (c->zero >= 3) /* the shard: weight bytes over bytes per 16-bit (amp: 32-bit) weight */
		snprintf(note, sizeof note, "%s params held (ZeRO-3 shard of %s; the layer in use "
			 "gathered into `other`)",
			 llmsim_fmt_count(a, mm->weights_bytes /
						     (c->recipe == LLMSIM_RECIPE_AMP && !c->lora_rank ? 4 : 2)),
			 llmsim_fmt_count(b, mm->params_per_gpu));
	else
		snprintf(note, sizeof note, "%s params held", llmsim_fmt_count(a, mm->params_per_gpu));
	mem_row(&mt, "weights", mm->weights_bytes, mm->total_bytes, note);
	snprintf(note, sizeof note, "%s params trained%s",
		 llmsim_fmt_count(a, mm->trained_params_per_gpu),
		 offp ? "; streamed to host memory per layer"
		 : c->zero >= 2 ? (c->zero == 2 ? "; ZeRO-2 keeps a 1/dp x cp shard of their gradients"
						: "; ZeRO-3 keeps a 1/dp x cp shard of their gradients")
				: "");
	if (mm->grad_transient_bytes > 0) {
		size_t n = strlen(note);
		snprintf(note + n, sizeof note - n, ", + %s of one chunk's in their reduce-scatter",
			 llmsim_fmt_bytes(b, mm->grad_transient_bytes));
	}
	mem_row(&mt, "gradients", mm->grads_bytes, mm->total_bytes, note);
	mem_row(&mt, "optimizer", mm->optimizer_bytes, mm->total_bytes,
		c->offload != LLMSIM_OFFLOAD_NONE ? "in host memory (below)"
						  : "fp32 master, Adam m and v");
	snprintf(note, sizeof note, "%s per layer x %.1f layers in flight",
		 llmsim_fmt_bytes(a, mm->act_per_layer_bytes), mm->act_in_flight_layers);
	if (mm->pp_rank >= 0) {
		size_t n = strlen(note);
		snprintf(note + n, sizeof note - n, " (pipeline rank %d, the fullest)",
			 mm->pp_rank);
	}
	mem_row(&mt, "activations", mm->activations_bytes, mm->total_bytes, note);
	{
		char d[LLMSIM_FMT_MAX];
		int k = snprintf(note, sizeof note, "context %s, NCCL %s, buffers",
				 llmsim_fmt_bytes(a, c->allow.context_bytes + c->allow.cuda_graph_bytes),
				 llmsim_fmt_bytes(d, llmsim_train_nccl_bytes(c)));
		if (k > 0 && (size_t)k < sizeof note && c->recipe == LLMSIM_RECIPE_LLAMA3)
			snprintf(note + k, sizeof note - k, "; no fragmentation allowance (llama3: "
				 "p2p buffers freed at once)");
		else if (k > 0 && (size_t)k < sizeof note)
			snprintf(note + k, sizeof note - k, ", %s fragmentation (%.0f%%)",
				 llmsim_fmt_bytes(b, mm->fragmentation_bytes),
				 100 * c->allow.fragmentation_frac);
	}
	if (mm->quant_weights_bytes > 0) {
		size_t n = strlen(note);
		snprintf(note + n, sizeof note - n, ", %s %s weights",
			 llmsim_fmt_bytes(a, mm->quant_weights_bytes),
			 llmsim_precision_name(c->precision));
	}
	mem_row(&mt, "other", mm->other_bytes, mm->total_bytes, note);
	if (mm->act_offloaded_bytes > 0)
		mem_row(&mt, "offloaded", mm->act_offloaded_bytes, 0,
			"activations in host memory (not in the total)");
	mem_row(&mt, "total", mm->total_bytes, mm->total_bytes, "");
	mem_row(&mt, "HBM", mm->hbm_bytes, 0, "");
	if (r->gpu_fits && r->mem_tight)
		mem_row(&mt, "headroom", mm->hbm_bytes - mm->total_bytes, 0,
			(snprintf(note, sizeof note, "within the memory model's error of the limit "
				  "(+/-%s, %.0f%% of the total)", llmsim_fmt_bytes(a, r->mem_error_bytes),
				  100 * c->allow.error_frac), note));
	else if (r->gpu_fits && r->mem_error_bytes > 0)
		mem_row(&mt, "headroom", mm->hbm_bytes - mm->total_bytes, 0,
			(snprintf(note, sizeof note, "fits (+/-%s, the memory model's error)",
				  llmsim_fmt_bytes(a, r->mem_error_bytes)), note));
	else if (r->gpu_fits)
		mem_row(&mt, "headroom", mm->hbm_bytes - mm->total_bytes, 0, "fits");
	else
		mem_row(&mt, "shortfall", mm->total_bytes - mm->hbm_bytes, 0, "DOES NOT FIT");
	llmsim_table_print(&mt, f);
	llmsim_table_release(&mt);
	if (c->offload != LLMSIM_OFFLOAD_NONE)
		print_host(f, r, gpu);

	fputs("\ntime per step\n", f);
	static const char *const th[] = {"<part", "time", "share", "<note"};
	struct llmsim_table tt;
	llmsim_table_init(&tt, 4, th);
	snprintf(note, sizeof note, "fwd %s + bwd %s per micro-batch (slowest stage)",
		 llmsim_fmt_time(a, t->fwd_mb_s), llmsim_fmt_time(b, t->bwd_mb_s));
	if (t->quantize_s > 0) {
		size_t qn = strlen(note);
		snprintf(note + qn, sizeof note - qn, "; %s quantizing",
			 llmsim_fmt_time(a, t->quantize_s));
	}
	time_row(&tt, "compute", t->compute_s, t->step_s, note);
	note[0] = 0;
	size_t n = 0;
	const struct {
		const char *name;
		double s;
	} parts[] = {{"tp", t->tp_exposed_s}, {"cp", t->cp_exposed_s}, {"ep", t->ep_exposed_s},
		     {"pp", t->pp_exposed_s}, {"dp", t->dp_exposed_s}, {"zero3", t->zero3_exposed_s}};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (parts[i].s > 0 && n < sizeof note)
			n += snprintf(note + n, sizeof note - n, "%s%s %s", n ? ", " : "",
				      parts[i].name, llmsim_fmt_time(d, parts[i].s));
	time_row(&tt, "exposed comm", t->comm_exposed_s, t->step_s, note);
	snprintf(note, sizeof note, "%.1f%% of compute",
		 t->compute_s > 0 ? 100 * t->bubble_s / t->compute_s : 0);
	time_row(&tt, "bubble", t->bubble_s, t->step_s, c->pp > 1 ? note : "");
	if (c->offload != LLMSIM_OFFLOAD_NONE) {
		time_row(&tt, "optimizer", t->optimizer_s, t->step_s, "on the CPU (offload)");
		time_row(&tt, "offload", t->offload_s, t->step_s,
			 "what the GPU waits for of the three below");
		time_row(&tt, "  CPU Adam", t->cpu_adam_s, 0,
			 c->dpu ? "the node's, under the next step (DPU)"
				: "the node's, after the last backward");
		snprintf(note, sizeof note, "%s of 16-bit gradients per GPU, during backward",
			 llmsim_fmt_bytes(d, r->comm.pcie_down_bytes));
		time_row(&tt, "  GPU->host", t->pcie_down_s, 0, note);
		snprintf(note, sizeof note, "%s of 16-bit weights per GPU, %s",
			 llmsim_fmt_bytes(g, r->comm.pcie_up_bytes),
			 c->offload == LLMSIM_OFFLOAD_PARAMS ? "a layer ahead of its use"
							     : "after CPU Adam");
		time_row(&tt, "  host->GPU", t->pcie_up_s, 0, note);
	} else {
		time_row(&tt, "optimizer", t->optimizer_s, t->step_s, "fused AdamW, fp32");
	}
	time_row(&tt, "step", t->step_s, t->step_s, "");
	llmsim_table_print(&tt, f);
	llmsim_table_release(&tt);

	fprintf(f, "\nthroughput   %s tokens/s (%s tokens/s per GPU)\n",
		llmsim_fmt_count(a, r->tokens_per_s), llmsim_fmt_count(b, r->tokens_per_s / c->gpus));
	fprintf(f, "utilization  MFU %s, HFU %s of %s per GPU (%s)\n", llmsim_fmt_pct(a, r->mfu),
		llmsim_fmt_pct(b, r->hfu), llmsim_fmt_flops_rate(d, r->peak_flops_per_s),
		llmsim_dtype_name(c->dtype));
	struct llmsim_expected_error x;
	llmsim_expected_error(gpu, LLMSIM_PRED_TRAIN_STEP, &x);
	fprintf(f, "expected     step time +/- %.1f%% (%s)\n", 100 * x.abs_frac, x.source);
}

/* JSON fields of a configuration (inside an open object). */
static void train_json_cfg(struct llmsim_json *j, const struct llmsim_train_cfg *c)
{
	llmsim_json_int(j, "gpus", c->gpus);
	llmsim_json_int(j, "tp", c->tp);
	llmsim_json_int(j, "pp", c->pp);
	llmsim_json_int(j, "dp", c->dp);
	llmsim_json_int(j, "cp", c->cp);
	llmsim_json_int(j, "ep", c->ep);
	llmsim_json_int(j, "zero", c->zero);
	llmsim_json_int(j, "micro_batch", c->micro_batch);
	llmsim_json_int(j, "global_batch", c->global_batch);
	llmsim_json_int(j, "seq", c->seq);
	llmsim_json_str(j, "recompute", llmsim_recompute_name(c->recompute));
	llmsim_json_str(j, "schedule", llmsim_pp_sched_name(c->schedule));
	llmsim_json_int(j, "chunks", c->chunks);
	llmsim_json_str(j, "dtype", llmsim_dtype_name(c->dtype));
	llmsim_json_str(j, "precision", llmsim_precision_name(c->precision));
	llmsim_json_str(j, "tp_overlap", llmsim_tp_overlap_name(c->tp_overlap));
	llmsim_json_str(j, "moe_dispatch", llmsim_moe_dispatch_name(c->moe_dispatch));
	llmsim_json_bool(j, "moe_overlap", c->moe_overlap);
	llmsim_json_str(j, "cp_comm", llmsim_cp_comm_name(c->cp_comm));
	llmsim_json_str(j, "recipe", llmsim_recipe_name(c->recipe));
	llmsim_json_str(j, "attention", llmsim_attn_impl_name(c->attn));
	llmsim_json_int(j, "lora_rank", c->lora_rank);
	llmsim_json_bool(j, "sequence_parallel", c->tp > 1 && c->sequence_parallel);
	llmsim_json_num(j, "moe_imbalance", c->moe_imbalance);
	llmsim_json_str(j, "offload", llmsim_offload_name(c->offload));
	llmsim_json_bool(j, "dpu", c->dpu);
	llmsim_json_str(j, "engine", llmsim_engine_name(c->engine));
	llmsim_json_str(j, "stack", train_stack_str(c));
	llmsim_json_str(j, "program", llmsim_stack_name(c->stack));
	llmsim_json_str(j, "fsdp", c->zero >= 2 ? llmsim_fsdp_names[c->fsdp] : "none");
	{
		char mods[128];
		llmsim_json_str(j, "recompute_modules", train_modules_str(mods, sizeof mods, c));
	}
	llmsim_json_str(j, "recompute_method", llmsim_recompute_method_names[c->recompute_method]);
	llmsim_json_int(j, "recompute_layers", c->recompute_layers);
	llmsim_json_num(j, "offload_activations", c->offload_activations);
	llmsim_json_str(j, "ddp", (unsigned)c->ddp < LLMSIM_DDP_COUNT ? llmsim_ddp_names[c->ddp] : "?");
	llmsim_json_str(j, "load", llmsim_load_name(c->load));
	llmsim_json_num(j, "load_rho_given", c->load_rho);
	llmsim_json_str(j, "operand_data", llmsim_operand_data_name(c->operand_data));
}

void train_json_result(struct llmsim_json *j, const struct llmsim_train_result *r)
{
	const struct llmsim_train_mem *m = &r->mem;
	const struct llmsim_train_time *t = &r->time;
	llmsim_json_obj_begin(j, "config");
	train_json_cfg(j, &r->cfg);
	llmsim_json_obj_end(j);
	llmsim_json_obj_begin(j, "memory_bytes_per_gpu");
	llmsim_json_num(j, "weights", m->weights_bytes);
	llmsim_json_num(j, "grads", m->grads_bytes);
	llmsim_json_num(j, "optimizer", m->optimizer_bytes);
	llmsim_json_num(j, "activations", m->activations_bytes);
	llmsim_json_num(j, "other", m->other_bytes);
	llmsim_json_num(j, "total", m->total_bytes);
	llmsim_json_num(j, "hbm", m->hbm_bytes);
	llmsim_json_num(j, "fragmentation", m->fragmentation_bytes);
	llmsim_json_num(j, "grad_transient", m->grad_transient_bytes);
	llmsim_json_num(j, "quant_weights", m->quant_weights_bytes);
	llmsim_json_num(j, "activations_offloaded", m->act_offloaded_bytes);
	llmsim_json_obj_end(j);
	llmsim_json_num(j, "memory_error_bytes", r->mem_error_bytes);
	llmsim_json_bool(j, "within_memory_error", r->mem_tight);
	llmsim_json_num(j, "params_per_gpu", m->params_per_gpu);
	llmsim_json_num(j, "activation_bytes_per_layer", m->act_per_layer_bytes);
	llmsim_json_num(j, "activation_layers_in_flight", m->act_in_flight_layers);
	llmsim_json_int(j, "pipeline_rank", m->pp_rank);
	llmsim_json_str(j, "offload", llmsim_offload_name(r->cfg.offload));
	llmsim_json_obj_begin(j, "host_memory_bytes_per_node");
	llmsim_json_num(j, "per_gpu", m->host_per_gpu_bytes);
	llmsim_json_num(j, "total", m->host_per_node_bytes);
	llmsim_json_num(j, "capacity", m->host_bytes);
	llmsim_json_obj_end(j);
	llmsim_json_bool(j, "fits", r->fits);
	llmsim_json_bool(j, "gpu_fits", r->gpu_fits);
	llmsim_json_bool(j, "host_fits", r->host_fits);
	llmsim_json_num(j, r->gpu_fits ? "headroom_bytes" : "shortfall_bytes",
			r->gpu_fits ? m->hbm_bytes - m->total_bytes
				    : m->total_bytes - m->hbm_bytes);
	if (r->cfg.offload != LLMSIM_OFFLOAD_NONE)
		llmsim_json_num(j, r->host_fits ? "host_headroom_bytes" : "host_shortfall_bytes",
				r->host_fits ? m->host_bytes - m->host_per_node_bytes
					     : m->host_per_node_bytes - m->host_bytes);
	llmsim_json_num(j, "step_time_s", t->step_s);
	llmsim_json_obj_begin(j, "breakdown_s");
	llmsim_json_num(j, "compute", t->compute_s);
	llmsim_json_num(j, "comm_exposed", t->comm_exposed_s);
	llmsim_json_num(j, "bubble", t->bubble_s);
	llmsim_json_num(j, "optimizer", t->optimizer_s);
	llmsim_json_num(j, "quantize", t->quantize_s);
	llmsim_json_num(j, "offload", t->offload_s);
	llmsim_json_num(j, "tp_exposed", t->tp_exposed_s);
	llmsim_json_num(j, "cp_exposed", t->cp_exposed_s);
	llmsim_json_num(j, "ep_exposed", t->ep_exposed_s);
	llmsim_json_num(j, "pp_exposed", t->pp_exposed_s);
	llmsim_json_num(j, "dp_exposed", t->dp_exposed_s);
	llmsim_json_num(j, "zero3_exposed", t->zero3_exposed_s);
	llmsim_json_num(j, "dp_comm_total", t->dp_comm_s);
	llmsim_json_num(j, "cpu_adam", t->cpu_adam_s);
	llmsim_json_num(j, "pcie_down_total", t->pcie_down_s);
	llmsim_json_num(j, "pcie_up_total", t->pcie_up_s);
	llmsim_json_obj_end(j);
	llmsim_json_obj_begin(j, "comm_bytes_per_gpu");
	llmsim_json_num(j, "tp", r->comm.tp_bytes);
	llmsim_json_num(j, "dp", r->comm.dp_bytes);
	llmsim_json_num(j, "zero3", r->comm.zero3_bytes);
	llmsim_json_num(j, "pp", r->comm.pp_bytes);
	llmsim_json_num(j, "cp", r->comm.cp_bytes);
	llmsim_json_num(j, "ep", r->comm.ep_bytes);
	llmsim_json_num(j, "pcie_down", r->comm.pcie_down_bytes);
	llmsim_json_num(j, "pcie_up", r->comm.pcie_up_bytes);
	llmsim_json_obj_end(j);
	llmsim_json_int(j, "microbatches", r->microbatches);
	llmsim_json_num(j, "tokens_per_step", r->tokens_per_step);
	llmsim_json_num(j, "tokens_per_s", r->tokens_per_s);
	llmsim_json_num(j, "model_flops", r->model_flops);
	llmsim_json_num(j, "hw_flops", r->hw_flops);
	llmsim_json_num(j, "peak_flops_per_s", r->peak_flops_per_s);
	llmsim_json_num(j, "mfu", r->mfu);
	llmsim_json_num(j, "hfu", r->hfu);
	llmsim_json_num(j, "load_rho", r->load_rho);
	llmsim_json_num(j, "sm_clock_hz", r->sm_clock_hz);
}

int train_stack_load(const char *cmd, const char *name, struct llmsim_stack_def *s)
{
	struct llmsim_err err = {0};
	if (!llmsim_stack_load(name, s, &err))
		return 0;
	fprintf(stderr, "%s: --stack: %s\n", cmd, err.msg);
	return 1;
}

int train_modules_parse(const char *cmd, const char *list, unsigned *mask)
{
	*mask = 0;
	const char *p = list;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int k = 0;
		while (k < LLMSIM_RM_COUNT && (strlen(llmsim_recompute_module_names[k]) != n ||
					       strncmp(llmsim_recompute_module_names[k], p, n)))
			k++;
		if (k == LLMSIM_RM_COUNT)
			return llmsim_args_error(cmd, "--recompute-modules: unknown module '%.*s' "
						 "(known: core_attn, mlp, moe_act, mla_up_proj, "
						 "layernorm, moe, shared_experts)", (int)n, p);
		*mask |= 1u << k;
		p = e ? e + 1 : NULL;
	}
	return 0;
}
