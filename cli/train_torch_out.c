/*
 * train_torch_out.c - `llmsim train --engine torch`'s result: the memory
 * the caching allocator sees (its peak, where, what is live then, the
 * segments it reserves, the device), the step's time as PyTorch runs it,
 * the load and clock it assumes, and the expected error of the whole-step
 * class from the GPU's profile; text and JSON.
 */
#include <math.h>
#include <string.h>

#include "base/fmt.h"
#include "sim/expected_error.h"
#include "common.h"
#include "train_out.h"

static const char *const cat_names[LLMSIM_TORCH_MEM_COUNT] = {
	[LLMSIM_TORCH_MEM_PARAMS] = "parameters", [LLMSIM_TORCH_MEM_OPTIMIZER] = "optimizer",
	[LLMSIM_TORCH_MEM_GRADS] = "gradients", [LLMSIM_TORCH_MEM_ACTIVATIONS] = "activations",
	[LLMSIM_TORCH_MEM_WORKSPACE] = "workspace",
};

void train_load_line(char *buf, size_t size, const struct llmsim_train_result *r,
		     const struct llmsim_gpu *gpu)
{
	const struct llmsim_train_cfg *c = &r->cfg;
	char a[LLMSIM_FMT_MAX];
	llmsim_fmt_hz(a, r->sm_clock_hz);
	(void)gpu;
	if (c->load == LLMSIM_LOAD_LONE)
		snprintf(buf, size, "lone: kernels on an idle GPU at their burst clock, %s", a);
	else if (c->load_rho > 0)
		snprintf(buf, size, "busy:%.2f: SM clock %s under the power limit", c->load_rho, a);
	else
		snprintf(buf, size, "busy: the step's own, tensor intensity %.2f: SM clock %s under "
			 "the power limit", r->load_rho, a);
}

/* "expected error  step time +/- 9.6%, biased low (median -8.2%)" and
 * where that comes from (sim/expected_error.h: the profile's whole-step
 * class torch/PHASE, or the stated default), on two lines */
static void expected(FILE *f, const struct llmsim_gpu *gpu, const char *what, const char *phase)
{
	struct llmsim_expected_error x;
	const struct llmsim_step_err_class *e;
	llmsim_expected_step_error(gpu, "torch", phase, &x, &e);
	if (!x.calibrated || !e) {
		fprintf(f, "expected error  %s +/- %.0f%%: the stated default (no torch/%s class in "
			"%s's profile)\n", what, 100 * x.abs_frac, phase, gpu->name);
		return;
	}
	if (x.bias_frac)
		fprintf(f, "expected error  %s +/- %.1f%%, biased %s (median %+.1f%%)\n", what,
			100 * x.abs_frac, x.bias_frac < 0 ? "low" : "high", e->bias_pct);
	else
		fprintf(f, "expected error  %s +/- %.1f%%, unbiased (median %+.1f%%)\n", what,
			100 * x.abs_frac, e->bias_pct);
	fprintf(f, "                (whole step: p80 of |error| over %d measured steps of %s, "
		"torch/%s)\n", e->n, e->program, phase);
}

static void row(struct llmsim_table *t, const char *name, const char *v, const char *note)
{
	llmsim_table_rowf(t, "%s\t%s\t%s", name, v, note);
}

void train_print_torch(FILE *f, const struct llmsim_train_result *r, const struct llmsim_model *m,
		       const struct llmsim_gpu *gpu)
{
	const struct llmsim_train_cfg *c = &r->cfg;
	const struct llmsim_train_torch *x = &r->torch;
	const struct llmsim_train_time *t = &r->time;
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], note[256];

	fprintf(f, "%s, %d layers, on 1 x %s\n", m->full_name[0] ? m->full_name : m->name,
		m->layers, gpu->full_name[0] ? gpu->full_name : gpu->name);
	fputs("  engine       torch: plain PyTorch eager, fp32 parameters under bf16 autocast,\n"
	      "               loss.backward(), fused AdamW, zero_grad(set_to_none=True)\n", f);
	fprintf(f, "  batch        %lld sequences x %lld tokens = %s tokens; micro-batch %d, "
		"%lld micro-batch%s\n", (long long)c->global_batch, (long long)c->seq,
		llmsim_fmt_count(a, r->tokens_per_step), c->micro_batch,
		(long long)r->microbatches, r->microbatches == 1 ? "" : "es");
	fprintf(f, "  kernels      attention %s%s, recompute %s%s\n", llmsim_attn_impl_name(c->attn),
		c->attn == llmsim_train_sdpa(gpu) ? " (SDPA on this GPU)" : "",
		llmsim_recompute_name(c->recompute),
		c->recompute == LLMSIM_RECOMP_FULL ? " (checkpoint per layer)" : "");
	train_load_line(note, sizeof note, r, gpu);
	fprintf(f, "  load         %s\n", note);
	fprintf(f, "  operand data %s\n", llmsim_operand_data_name(c->operand_data));

	fputs("\nmemory (PyTorch's caching allocator over the step)\n", f);
	static const char *const mh[] = {"<part", "bytes", "<note"};
	struct llmsim_table mt;
	llmsim_table_init(&mt, 3, mh);
	if (x->peak_layer >= 0)
		snprintf(note, sizeof note, "torch.cuda.max_memory_allocated: at %s%s, layer %d",
			 x->peak_at, x->peak_recompute ? " (recomputed)" : "", x->peak_layer);
	else
		snprintf(note, sizeof note, "torch.cuda.max_memory_allocated: at %s", x->peak_at);
	row(&mt, "peak allocated", llmsim_fmt_bytes(a, x->peak_allocated_bytes), note);
	static const char *const cn[LLMSIM_TORCH_MEM_COUNT] = {
		[LLMSIM_TORCH_MEM_PARAMS] = "fp32 parameters (and the batch, RoPE tables)",
		[LLMSIM_TORCH_MEM_OPTIMIZER] = "Adam's exp_avg, exp_avg_sq and step, fp32",
		[LLMSIM_TORCH_MEM_GRADS] = ".grad live at the peak (none before backward)",
		[LLMSIM_TORCH_MEM_ACTIVATIONS] = "saved tensors, autocast copies, logits, gradients",
		[LLMSIM_TORCH_MEM_WORKSPACE] = "cuBLAS workspaces, kernel workspaces",
	};
	for (int k = 0; k < LLMSIM_TORCH_MEM_COUNT; k++) {
		char name[32];
		snprintf(name, sizeof name, "  %s", cat_names[k]);
		row(&mt, name, llmsim_fmt_bytes(a, x->at_peak_bytes[k]), cn[k]);
	}
	snprintf(note, sizeof note, "max_memory_reserved: its segments, %s over the peak",
		 llmsim_fmt_bytes(b, x->reserved_bytes - x->peak_allocated_bytes));
	row(&mt, "reserved", llmsim_fmt_bytes(a, x->reserved_bytes), note);
	snprintf(note, sizeof note, "%s: the reserved segments and ~1 GB of CUDA context",
		 r->gpu_fits ? "fits" : "DOES NOT FIT");
	row(&mt, "device", llmsim_fmt_bytes(a, x->device_bytes), note);
	llmsim_table_print(&mt, f);
	llmsim_table_release(&mt);
	expected(f, gpu, "peak allocated", "train_memory");

	fputs("\ntime per step\n", f);
	static const char *const th[] = {"<part", "time", "share", "<note"};
	struct llmsim_table tt;
	llmsim_table_init(&tt, 4, th);
	double step = t->step_s;
#define TROW(name, s, nt)                                                                      \
	llmsim_table_rowf(&tt, "%s\t%s\t%s\t%s", name, llmsim_fmt_time(a, s),                    \
			  step > 0 ? llmsim_fmt_pct(b, (s) / step) : "", nt)
	snprintf(note, sizeof note, "%lld micro-batch%s", (long long)r->microbatches,
		 r->microbatches == 1 ? "" : "es, gradients accumulated");
	TROW("forward", r->microbatches * t->fwd_mb_s, note);
	TROW("backward", t->compute_s - r->microbatches * t->fwd_mb_s,
	     c->recompute == LLMSIM_RECOMP_FULL ? "with each layer's forward recomputed" : "");
	snprintf(note, sizeof note, "fused AdamW: %.0f multi_tensor_apply launches",
		 x->optimizer_launches);
	TROW("optimizer", t->optimizer_s, note);
	snprintf(note, sizeof note, "GPU waits: %.0f kernels launched (%s of host), gaps, syncs",
		 x->kernels, llmsim_fmt_time(b, x->host_s));
	TROW("idle", x->idle_s, note);
	TROW("step", step, "");
#undef TROW
	llmsim_table_print(&tt, f);
	llmsim_table_release(&tt);
	expected(f, gpu, "step time", "train");
	fprintf(f, "\nthroughput   %s tokens/s\n", llmsim_fmt_count(a, r->tokens_per_s));
	fprintf(f, "utilization  MFU %s, HFU %s of %s (%s)\n", llmsim_fmt_pct(a, r->mfu),
		llmsim_fmt_pct(b, r->hfu), llmsim_fmt_flops_rate(note, r->peak_flops_per_s),
		llmsim_dtype_name(c->dtype));
}

void train_json_torch(struct llmsim_json *j, const struct llmsim_train_result *r,
		      const struct llmsim_gpu *gpu)
{
	const struct llmsim_train_torch *x = &r->torch;
	llmsim_json_obj_begin(j, "torch");
	llmsim_json_num(j, "peak_allocated_bytes", x->peak_allocated_bytes);
	llmsim_json_num(j, "reserved_bytes", x->reserved_bytes);
	llmsim_json_num(j, "device_bytes", x->device_bytes);
	llmsim_json_str(j, "peak_at", x->peak_at);
	llmsim_json_int(j, "peak_layer", x->peak_layer);
	llmsim_json_bool(j, "peak_recompute", x->peak_recompute);
	llmsim_json_obj_begin(j, "at_peak_bytes");
	for (int k = 0; k < LLMSIM_TORCH_MEM_COUNT; k++)
		llmsim_json_num(j, cat_names[k], x->at_peak_bytes[k]);
	llmsim_json_obj_end(j);
	llmsim_json_num(j, "gpu_s", x->gpu_s);
	llmsim_json_num(j, "host_s", x->host_s);
	llmsim_json_num(j, "idle_s", x->idle_s);
	llmsim_json_num(j, "kernels", x->kernels);
	llmsim_json_num(j, "optimizer_launches", x->optimizer_launches);
	llmsim_json_obj_begin(j, "expected_error");
	cli_step_err_json(j, "step_time", gpu, LLMSIM_ENGINE_TORCH,
			  llmsim_engine_runtime(LLMSIM_ENGINE_TORCH), "train");
	cli_step_err_json(j, "peak_allocated", gpu, LLMSIM_ENGINE_TORCH,
			  llmsim_engine_runtime(LLMSIM_ENGINE_TORCH), "train_memory");
	llmsim_json_obj_end(j);
	llmsim_json_obj_end(j);
}
