/* report_html.c - the report page: one HTML file, no external resources. */
#include "report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "base/fmt.h"
#include "base/paths.h"
#include "html.h"

static const char css[] =
	"body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:0;color:#1d2330;"
	"background:#f6f7f9;line-height:1.45}\n"
	"header{background:#1d2b45;color:#fff;padding:22px 36px}\n"
	"header h1{margin:0 0 6px 0;font-size:26px;font-weight:600}\n"
	"header p{margin:0;color:#c9d3e6;font-size:14px}\n"
	"nav{background:#fff;border-bottom:1px solid #dde1e8;padding:8px 36px;font-size:14px}\n"
	"nav a{color:#1d5fbf;text-decoration:none;margin-right:18px}\n"
	"main{max-width:1320px;margin:0 auto;padding:12px 36px 40px}\n"
	"section{background:#fff;border:1px solid #dde1e8;border-radius:6px;"
	"padding:6px 22px 18px;margin:18px 0}\n"
	"h2{font-size:20px;font-weight:600;border-bottom:2px solid #e8ebf0;padding-bottom:6px}\n"
	"h3{font-size:16px;font-weight:600;margin:18px 0 8px}\n"
	/* no table overflows the page (1280 px and narrower): each scrolls on
	 * its own, and text cells wrap */
	"table{border-collapse:collapse;font-size:13px;margin:6px 0 10px;display:block;"
	"max-width:100%;overflow-x:auto}\n"
	"th,td{padding:4px 10px;border-bottom:1px solid #e8ebf0;text-align:right;"
	"white-space:nowrap}\n"
	"th{background:#f0f2f6;font-weight:600}\n"
	"td.l,th.l{text-align:left}\ntd.l{white-space:normal;min-width:6em}\n"
	"tr.total td{font-weight:600;border-top:2px solid #c8cdd6}\n"
	"code{font-family:'DejaVu Sans Mono',monospace;font-size:12px;color:#3a4252}\n"
	".cards{display:flex;flex-wrap:wrap;gap:12px;margin:10px 0}\n"
	".card{background:#f0f4fb;border:1px solid #d6e0f0;border-radius:6px;padding:10px 16px;"
	"min-width:150px}\n"
	".card .v{font-size:20px;font-weight:600;color:#1d2b45}\n"
	".card .k{font-size:12px;color:#56607a}\n"
	".two{display:flex;flex-wrap:wrap;gap:36px}\n"
	"img.plot{max-width:100%;height:auto;border:1px solid #e3e6ec}\n"
	"figure{margin:10px 0}\nfigcaption{font-size:13px;color:#56607a;margin-top:4px}\n"
	".na{color:#8a6d00;background:#fff8e1;border:1px solid #f1dca0;border-radius:4px;"
	"padding:8px 12px}\n"
	".scroll{overflow-x:auto}\n"
	"ul{font-size:14px}\nfooter{color:#8a91a3;font-size:12px;text-align:center;padding:10px}\n";

/* Table cells: th/td with optional left alignment, text escaped. */
static void cell(FILE *f, const char *tag, int left, const char *text)
{
	fprintf(f, "<%s%s>", tag, left ? " class=\"l\"" : "");
	llmsim_html_text(f, text);
	fprintf(f, "</%s>", tag);
}

static void head_row(FILE *f, const char *const *names, int n)
{
	fputs("<tr>", f);
	for (int i = 0; i < n; i++)
		cell(f, "th", names[i][0] == '<', names[i] + (names[i][0] == '<'));
	fputs("</tr>\n", f);
}

/* A two-column key/value row. */
static void kv(FILE *f, const char *k, const char *v)
{
	fputs("<tr>", f);
	cell(f, "th", 1, k);
	cell(f, "td", 1, v);
	fputs("</tr>\n", f);
}

static void card(FILE *f, const char *k, const char *v)
{
	fputs("<div class=\"card\"><div class=\"v\">", f);
	llmsim_html_text(f, v);
	fputs("</div><div class=\"k\">", f);
	llmsim_html_text(f, k);
	fputs("</div></div>\n", f);
}

static void not_available(FILE *f, const char *why)
{
	fputs("<p class=\"na\">", f);
	llmsim_html_text(f, why);
	fputs("</p>\n", f);
}

static int picture(FILE *f, const struct report_pics *p, enum report_pic which,
		   const char *alt, const char *caption, struct llmsim_err *err)
{
	if (!p->path[which][0])
		return 0;
	fputs("<figure>", f);
	int rc = llmsim_html_img_png(f, p->path[which], alt, err);
	if (rc)
		return rc;
	fputs("<figcaption>", f);
	llmsim_html_text(f, caption);
	fputs(" (also saved as ", f);
	llmsim_html_text(f, p->name[which]);
	fputs(")</figcaption></figure>\n", f);
	return 0;
}

static void summary(FILE *f, const struct report_data *d)
{
	const struct llmsim_gpu *g = d->in->gpu;
	const struct llmsim_model *m = d->in->model;
	char a[LLMSIM_FMT_MAX], b[256];

	fputs("<section id=\"summary\"><h2>Summary</h2>\n<div class=\"cards\">\n", f);
	double t0 = 0, t1 = 0;
	for (int i = 0; i < d->in->nops; i++)
		*(d->in->ops[i].phase ? &t1 : &t0) += d->pts[i].pred.time_s;
	enum llmsim_workload w = d->in->cfg->layer.workload;
	snprintf(b, sizeof b, "one layer, %s", llmsim_phase_name(w, 0));
	card(f, b, llmsim_fmt_time(a, t0));
	snprintf(b, sizeof b, "one layer, %s", llmsim_phase_name(w, 1));
	card(f, b, llmsim_fmt_time(a, t1));
	if (d->in->have_train) {
		card(f, "time per step", llmsim_fmt_time(a, d->in->chosen.time.step_s));
		snprintf(b, sizeof b, "%.0f", d->in->chosen.tokens_per_s);
		card(f, "tokens/s", b);
		card(f, "MFU", llmsim_fmt_pct(a, d->in->chosen.mfu));
		card(f, "memory per GPU", llmsim_fmt_bytes(a, d->in->chosen.mem.total_bytes));
	}
	if (d->in->have_serve) {
		card(f, "time to first token", llmsim_fmt_time(a, d->in->req.ttft_s));
		card(f, "time per output token", llmsim_fmt_time(a, d->in->req.tpot_s));
		snprintf(b, sizeof b, "%.0f", d->in->req.tokens_per_s);
		card(f, "output tokens/s", b);
		snprintf(b, sizeof b, "%lld", (long long)d->in->req.max_batch);
		card(f, "largest batch that fits", b);
	}
	fputs("</div>\n<div class=\"two\">\n<div><h3>GPU</h3><table>\n", f);
	kv(f, "name", g->full_name[0] ? g->full_name : g->name);
	kv(f, "architecture", g->arch);
	snprintf(b, sizeof b, "%d", g->sms);
	kv(f, "SMs", b);
	snprintf(b, sizeof b, "%.0f MHz", g->boost_clock_hz / 1e6);
	kv(f, "boost clock", b);
	kv(f, "HBM capacity", llmsim_fmt_bytes(a, g->hbm_bytes));
	kv(f, "HBM bandwidth", llmsim_fmt_bytes_rate(a, g->hbm_bytes_per_s));
	kv(f, "L2", llmsim_fmt_bytes(a, g->l2_bytes));
	for (int dt = 0; dt < LLMSIM_DT_COUNT; dt++)
		if (g->tensor_flops_per_s[dt] > 0) {
			snprintf(b, sizeof b, "%s tensor (dense)",
				 llmsim_dtype_name((enum llmsim_dtype)dt));
			kv(f, b, llmsim_fmt_flops_rate(a, g->tensor_flops_per_s[dt]));
		}
	kv(f, "hardware file", llmsim_data_rel(g->path)); /* as the data folder names it */
	fputs("</table></div>\n<div><h3>Model</h3><table>\n", f);
	kv(f, "name", m->full_name[0] ? m->full_name : m->name);
	snprintf(b, sizeof b, "%d layers, hidden %d, FFN %d", m->layers, m->hidden,
		 m->intermediate);
	kv(f, "shape", b);
	snprintf(b, sizeof b, "%s, %d heads, %d KV heads, head dim %d",
		 llmsim_attn_kind_name(m->attention), m->heads, m->kv_heads, m->head_dim);
	kv(f, "attention", b);
	if (m->has_moe) {
		snprintf(b, sizeof b, "%d experts, top %d, %d shared, width %d", m->moe.experts,
			 m->moe.top_k, m->moe.shared_experts, m->moe.expert_intermediate);
		kv(f, "mixture of experts", b);
	}
	kv(f, "parameters", llmsim_fmt_count(a, d->in->params.total));
	if (d->in->params.active != d->in->params.total)
		kv(f, "active parameters", llmsim_fmt_count(a, d->in->params.active));
	snprintf(b, sizeof b, "%s per token (%s)",
		 llmsim_fmt_bytes(a, llmsim_model_kv_bytes_per_token(m, d->in->cfg->kv_dtype)),
		 llmsim_dtype_name(d->in->cfg->kv_dtype));
	kv(f, "KV cache", b);
	kv(f, "model file", llmsim_data_rel(m->path));
	fputs("</table></div>\n<div><h3>Workload</h3><table>\n", f);
	const struct llmsim_report_cfg *c = d->in->cfg;
	kv(f, "workload", w == LLMSIM_WORKLOAD_TRAIN ? "training" : "serving");
	kv(f, "data type", llmsim_dtype_name(c->layer.dtype));
	snprintf(b, sizeof b, "%lld", (long long)c->layer.batch);
	kv(f, "batch (sequences)", b);
	snprintf(b, sizeof b, "%lld", (long long)c->layer.seq);
	kv(f, w == LLMSIM_WORKLOAD_TRAIN ? "sequence length" : "prompt / KV length", b);
	if (d->in->have_train) {
		char nm[96];
		llmsim_report_train_name(&d->in->chosen.cfg, nm, sizeof nm);
		kv(f, d->in->chosen_given ? "configuration (given)" : "configuration (plan's best)",
		   nm);
		snprintf(b, sizeof b, "%d", d->in->chosen.cfg.gpus);
		kv(f, "GPUs", b);
		snprintf(b, sizeof b, "%lld", (long long)d->in->chosen.cfg.global_batch);
		kv(f, "global batch (sequences)", b);
		kv(f, "optimizer recipe", llmsim_recipe_name(d->in->chosen.cfg.recipe));
	}
	if (w == LLMSIM_WORKLOAD_SERVE) {
		snprintf(b, sizeof b, "tp=%d pp=%d ep=%d", c->tp, c->pp, c->ep);
		kv(f, "replica", b);
		snprintf(b, sizeof b, "%lld prompt + %lld output tokens", (long long)c->prompt,
			 (long long)c->output);
		kv(f, "request", b);
		snprintf(b, sizeof b, "weights %s, KV cache %s, attention %s",
			 llmsim_dtype_name(c->weight_dtype), llmsim_dtype_name(c->kv_dtype),
			 llmsim_attn_choice_name(c->attn));
		kv(f, "inference", b);
	}
	fputs("</table></div>\n</div></section>\n", f);
}

static void ceilings(FILE *f, const struct report_data *d)
{
	static const char *const h[] = {"<ceiling", "<kind", "peak", "ridge point (with HBM)"};
	char a[LLMSIM_FMT_MAX], b[64];
	fputs("<h3>Ceilings</h3><table>\n", f);
	head_row(f, h, 4);
	for (int i = 0; i < d->roof.n; i++) {
		const struct llmsim_ceiling *c = &d->roof.ceil[i];
		fputs("<tr>", f);
		cell(f, "td", 1, c->name);
		cell(f, "td", 1, c->bytes_per_s > 0 ? "bandwidth" : c->kind == LLMSIM_CEIL_TENSOR
									? "tensor cores"
									: "CUDA cores");
		cell(f, "td", 0, c->bytes_per_s > 0 ? llmsim_fmt_bytes_rate(a, c->bytes_per_s)
						    : llmsim_fmt_flops_rate(a, c->flops_per_s));
		if (c->flops_per_s > 0)
			snprintf(b, sizeof b, "%.1f FLOP/byte", c->ridge_flops_per_byte);
		else
			snprintf(b, sizeof b, "-");
		cell(f, "td", 0, b);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void op_table(FILE *f, const struct report_data *d)
{
	static const char *const h[] = {"<phase", "<op", "FLOPs", "HBM bytes", "intensity",
					"attainable", "predicted time", "measured", "achieved",
					"of roof", "<bound", "<spec"};
	char a[LLMSIM_FMT_MAX], spec[512];
	enum llmsim_workload w = d->in->cfg->layer.workload;
	fputs("<section id=\"ops\"><h2>Ops of one layer</h2>\n<div class=\"scroll\"><table>\n",
	      f);
	head_row(f, h, 12);
	for (int ph = 0; ph < 2; ph++) {
		double fl = 0, by = 0, t = 0;
		for (int i = 0; i < d->in->nops; i++) {
			const struct llmsim_roof_point *p = &d->pts[i];
			if (d->in->ops[i].phase != ph)
				continue;
			fl += p->pred.flops;
			by += p->pred.hbm_bytes;
			t += p->pred.time_s;
			fputs("<tr>", f);
			cell(f, "td", 1, llmsim_phase_name(w, ph));
			cell(f, "td", 1, d->in->ops[i].name);
			cell(f, "td", 0, llmsim_fmt_flops(a, p->pred.flops));
			cell(f, "td", 0, llmsim_fmt_bytes(a, p->pred.hbm_bytes));
			snprintf(a, sizeof a, "%.2f", p->pred.intensity_flops_per_byte);
			cell(f, "td", 0, a);
			cell(f, "td", 0, llmsim_fmt_flops_rate(a, p->attainable_flops_per_s));
			cell(f, "td", 0, llmsim_fmt_time(a, p->pred.time_s));
			/* A calibration case of exactly this op, if one was run. */
			llmsim_op_format(&p->op, spec, sizeof spec);
			const struct llmsim_measured_pt *mp = llmsim_measured_find(&d->in->meas, spec);
			cell(f, "td", 0, mp ? llmsim_fmt_time(a, mp->measured_s) : "-");
			cell(f, "td", 0, llmsim_fmt_flops_rate(a, p->achieved_flops_per_s));
			cell(f, "td", 0, llmsim_fmt_pct(a, p->attainable_flops_per_s > 0
							   ? p->achieved_flops_per_s /
								     p->attainable_flops_per_s
							   : NAN));
			cell(f, "td", 1, llmsim_bound_name(p->pred.bound));
			fputs("<td class=\"l\"><code>", f);
			llmsim_html_text(f, spec);
			fputs("</code></td></tr>\n", f);
		}
		fputs("<tr class=\"total\">", f);
		cell(f, "td", 1, llmsim_phase_name(w, ph));
		cell(f, "td", 1, "one layer");
		cell(f, "td", 0, llmsim_fmt_flops(a, fl));
		cell(f, "td", 0, llmsim_fmt_bytes(a, by));
		snprintf(a, sizeof a, "%.2f", by > 0 ? fl / by : 0);
		cell(f, "td", 0, a);
		cell(f, "td", 0, "");
		cell(f, "td", 0, llmsim_fmt_time(a, t));
		cell(f, "td", 0, "");
		cell(f, "td", 0, llmsim_fmt_flops_rate(a, t > 0 ? fl / t : 0));
		fputs("<td></td><td></td><td></td></tr>\n", f);
	}
	fputs("</table></div>\n<p>Intensity is FLOPs per byte of HBM traffic; attainable is "
	      "the roofline's min(roof, intensity &times; HBM bandwidth) at datasheet peaks; "
	      "achieved is the op's FLOPs over its predicted time; measured is the median time "
	      "of a calibration case of exactly this op, where one was run; the bound is the "
	      "simulator's verdict. Times are for one layer of one GPU.</p></section>\n", f);
}

static int train_sections(FILE *f, const struct report_data *d, const struct report_pics *p,
			  struct llmsim_err *err)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX], nm[96];
	int rc;
	fputs("<section id=\"memory\"><h2>Memory per GPU</h2>\n", f);
	if (!d->in->have_train) {
		not_available(f, d->in->train_note[0] ? d->in->train_note : "no training result");
		fputs("</section>\n", f);
		return 0;
	}
	rc = picture(f, p, PIC_MEMORY, "memory per GPU, stacked",
		     "Weights, gradients, optimizer state, activations and other buffers of "
		     "the most loaded GPU, against the HBM capacity.", err);
	if (rc)
		return rc;
	fputs("</section>\n<section id=\"time\"><h2>Time per step</h2>\n", f);
	rc = picture(f, p, PIC_TIME, "time per step, stacked",
		     "Compute on the critical path, communication not hidden behind it, the "
		     "pipeline bubble, the optimizer step and, with offload, the PCIe traffic "
		     "and CPU Adam time not hidden behind the GPU's work: the parts add up to "
		     "the step time of the table.", err);
	if (rc)
		return rc;
	fputs("</section>\n<section id=\"configs\"><h2>Configurations compared</h2>\n", f);
	rc = picture(f, p, PIC_CONFIGS, "throughput of the best configurations",
		     "Training throughput of the plan's best configurations.", err);
	if (rc)
		return rc;
	static const char *const h[] = {"<configuration", "GPUs", "step time", "tokens/s", "MFU",
					"memory per GPU", "compute", "exposed comm", "bubble",
					"optimizer", "<offload", "offload time", "host memory per node"};
	fputs("<div class=\"scroll\"><table>\n", f);
	head_row(f, h, 13);
	for (int i = -1; i < d->in->ntop; i++) {
		const struct llmsim_train_result *r = i < 0 ? &d->in->chosen : &d->in->top[i];
		if (i < 0 && !d->in->chosen_given)
			continue;
		llmsim_report_train_name(&r->cfg, nm, sizeof nm);
		if (i < 0)
			strncat(nm, " (given)", sizeof nm - strlen(nm) - 1);
		char tps[32], gp[16];
		snprintf(tps, sizeof tps, "%.0f", r->tokens_per_s);
		snprintf(gp, sizeof gp, "%d", r->cfg.gpus);
		const char *row[] = {nm, gp, llmsim_fmt_time(a, r->time.step_s), tps,
				     llmsim_fmt_pct(b, r->mfu),
				     llmsim_fmt_bytes(c, r->mem.total_bytes)};
		fputs("<tr>", f);
		for (int k = 0; k < 6; k++)
			cell(f, "td", k == 0, row[k]);
		cell(f, "td", 0, llmsim_fmt_time(a, r->time.compute_s));
		cell(f, "td", 0, llmsim_fmt_time(a, r->time.comm_exposed_s));
		cell(f, "td", 0, llmsim_fmt_time(a, r->time.bubble_s));
		cell(f, "td", 0, llmsim_fmt_time(a, r->time.optimizer_s));
		int off = r->cfg.offload != LLMSIM_OFFLOAD_NONE;
		char on[48];
		snprintf(on, sizeof on, "%s%s", llmsim_offload_name(r->cfg.offload),
			 r->cfg.dpu ? " (DPU)" : "");
		cell(f, "td", 1, on);
		cell(f, "td", 0, off ? llmsim_fmt_time(a, r->time.offload_s) : "-");
		cell(f, "td", 0, off ? llmsim_fmt_bytes(a, r->mem.host_per_node_bytes) : "-");
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
	if (d->in->chosen.cfg.offload != LLMSIM_OFFLOAD_NONE)
		fprintf(f, "<p>The configuration shown offloads model states to host memory "
			   "(%s): %s of its step is PCIe transfers and CPU Adam time not hidden "
			   "behind the GPU's work; the node holds %s of host memory for it.</p>\n",
			d->in->chosen.cfg.offload == LLMSIM_OFFLOAD_PARAMS
				? "ZeRO-Infinity: 16-bit weights, fp32 master, Adam m, v and gradients"
				: "ZeRO-Offload: fp32 master, Adam m, v and gradients",
			llmsim_fmt_time(a, d->in->chosen.time.offload_s),
			llmsim_fmt_bytes(b, d->in->chosen.mem.host_per_node_bytes));
	if (d->in->plan_evaluated)
		fprintf(f, "<p>The plan priced %lld configurations (pruned %lld more before "
			   "pricing), %lld valid and fitting, in %.2f s; configurations within the "
			   "expected error (+/-%.0f%%) of a row are counted as its equivalents.</p>\n",
			(long long)d->in->plan_evaluated, (long long)d->in->plan_pruned,
			(long long)d->in->plan_feasible, d->in->plan_elapsed_s,
			100 * d->in->plan_error_frac);
	if (d->in->train_note[0])
		not_available(f, d->in->train_note);
	fputs("</section>\n", f);
	return 0;
}

/* The serving plan's best configurations (table) and its Pareto front
 * (picture). */
static int serve_plan(FILE *f, const struct report_data *d, const struct report_pics *p,
		      struct llmsim_err *err)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], nm[80], n1[32], n2[32], n3[32], n4[32];
	if (!d->in->nsplan) {
		not_available(f, d->in->splan_note[0] ? d->in->splan_note
						  : "the serving plan found no configuration "
						    "that fits");
		return 0;
	}
	int rc = picture(f, p, PIC_CONFIGS, "the serving plan's Pareto front: tokens/s per GPU "
					    "against tokens/s per user",
			 "Every configuration on the front of the serving plan: none of the others "
			 "gives more tokens/s per GPU and more per user. Labels: the layout, "
			 "weight/KV types and max_num_seqs.", err);
	if (rc)
		return rc;
	static const char *const h[] = {"<configuration", "TTFT p50", "TTFT p99", "TPOT p50",
					"TPOT p99", "tokens/s", "tokens/s per GPU",
					"tokens/s per user", "front"};
	fputs("<table>\n", f);
	head_row(f, h, 9);
	for (int i = 0; i < d->in->nsplan; i++) {
		const struct llmsim_plan_serve_row *w = &d->in->splan[i];
		char c1[LLMSIM_FMT_MAX], c2[LLMSIM_FMT_MAX];
		llmsim_report_serve_name(w, nm, sizeof nm);
		snprintf(n1, sizeof n1, "%.0f", w->tokens_per_s);
		snprintf(n2, sizeof n2, "%.0f", w->tokens_per_s_per_gpu);
		snprintf(n4, sizeof n4, "%.1f", w->tokens_per_s_per_user);
		const char *row[] = {nm, llmsim_fmt_time(a, w->ttft_s.p50),
				     llmsim_fmt_time(b, w->ttft_s.p99), llmsim_fmt_time(c1, w->tpot_s.p50),
				     llmsim_fmt_time(c2, w->tpot_s.p99), n1, n2, n4,
				     w->pareto ? "yes" : ""};
		fputs("<tr>", f);
		for (int k = 0; k < 9; k++)
			cell(f, "td", k == 0, row[k]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	snprintf(n3, sizeof n3, "%d", d->in->cfg->plan_gpus);
	fprintf(f, "<p>The plan tried %lld configurations of %s GPUs (aggregated and "
		   "disaggregated) for requests of %lld + %lld tokens, offline (every request "
		   "at once), with no latency targets: ranked by throughput only.</p>\n",
		(long long)d->in->splan_evaluated, n3, (long long)d->in->cfg->prompt,
		(long long)d->in->cfg->output);
	return 0;
}

static int serve_sections(FILE *f, const struct report_data *d, const struct report_pics *p,
			  struct llmsim_err *err)
{
	char a[LLMSIM_FMT_MAX], b[LLMSIM_FMT_MAX], c[LLMSIM_FMT_MAX];
	const char *why = d->in->serve_note[0] ? d->in->serve_note : "no serving result";
	int curve = d->in->have_serve && d->in->ncurve, rc = 0;
	fputs("<section id=\"memory\"><h2>Memory per GPU</h2>\n", f);
	if (curve)
		rc = picture(f, p, PIC_MEMORY, "memory per GPU by batch size, stacked",
			     "Weights, peak activations and workspace, and the batch's KV cache "
			     "at the end of the request, on one GPU of the replica.", err);
	else
		not_available(f, why);
	fputs("</section>\n<section id=\"time\"><h2>Time per decode step</h2>\n", f);
	if (curve && !rc)
		rc = picture(f, p, PIC_TIME, "decode step time split by bound",
			     "The mean decode step (TPOT) split by what bounds each kernel, plus "
			     "the gaps between kernels.", err);
	else
		not_available(f, why);
	fputs("</section>\n<section id=\"configs\"><h2>Configurations compared</h2>\n", f);
	if (!rc)
		rc = serve_plan(f, d, p, err);
	fputs("</section>\n<section id=\"serving\"><h2>Latency and throughput</h2>\n", f);
	if (!curve) {
		not_available(f, why);
		fputs("</section>\n", f);
		return rc;
	}
	if (!rc)
		rc = picture(f, p, PIC_SERVE, "time per output token against throughput",
			     "Each point is one batch size (labelled); the curve ends at the "
			     "largest power-of-two batch whose KV cache fits.", err);
	if (rc)
		return rc;
	static const char *const h[] = {"batch", "TTFT", "TPOT", "output tokens/s",
					"KV cache per GPU", "decode bound"};
	fputs("<table>\n", f);
	head_row(f, h, 6);
	for (int i = 0; i < d->in->ncurve; i++) {
		const struct llmsim_infer_result *r = &d->in->curve[i].r;
		char bs[24], tps[32];
		snprintf(bs, sizeof bs, "%lld", (long long)d->in->curve[i].batch);
		snprintf(tps, sizeof tps, "%.0f", r->tokens_per_s);
		const char *row[] = {bs, llmsim_fmt_time(a, r->ttft_s), llmsim_fmt_time(b, r->tpot_s),
				     tps, llmsim_fmt_bytes(c, r->kv_bytes),
				     llmsim_bound_name(r->decode.bound)};
		fputs("<tr>", f);
		for (int k = 0; k < 6; k++)
			cell(f, "td", 0, row[k]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	fputs("</section>\n", f);
	return 0;
}

static void calibration(FILE *f, const struct report_data *d)
{
	const struct llmsim_gpu *g = d->in->gpu;
	char b[64];
	fputs("<section id=\"calibration\"><h2>Calibration</h2>\n<table>\n", f);
	kv(f, "profile", g->profile_path[0] ? llmsim_data_rel(g->profile_path)
					    : "none: efficiencies from the hardware file");
	fputs("</table>\n", f);
	if (g->nerr_classes) {
		static const char *const h[] = {"<op class", "median |error|", "p80 |error|",
						"p90 |error|", "bias", "held-out kernels"};
		fputs("<h3>Expected error (held-out calibration kernels)</h3><table>\n", f);
		head_row(f, h, 6);
		for (int i = 0; i < g->nerr_classes; i++) {
			const struct llmsim_err_class *e = &g->err_classes[i];
			fputs("<tr>", f);
			cell(f, "td", 1, e->name);
			snprintf(b, sizeof b, "%.1f%%", e->median_abs_pct);
			cell(f, "td", 0, b);
			snprintf(b, sizeof b, "%.1f%%", e->p80_abs_pct);
			cell(f, "td", 0, b);
			snprintf(b, sizeof b, "%.1f%%", e->p90_abs_pct);
			cell(f, "td", 0, b);
			snprintf(b, sizeof b, "%+.1f%%%s", e->bias_pct,
				 llmsim_err_class_biased(e) ? " (biased)" : "");
			cell(f, "td", 0, b);
			snprintf(b, sizeof b, "%d", e->n);
			cell(f, "td", 0, b);
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
	} else {
		not_available(f, "No expected-error figures: this GPU has no calibration profile, "
				 "so predictions carry the hardware file's efficiencies only.");
	}
	fputs("<h3>Measurements on this GPU</h3>\n<p>", f);
	if (d->in->meas.n) {
		llmsim_html_textf(f, "%d kernels measured on %s (of %d cases stored; %d skipped) "
				     "are drawn on the roofline beside their predictions. Source: %s.",
				  d->in->meas.n, g->name, d->in->meas.cases, d->in->meas.skipped,
				  d->in->meas.source);
	} else {
		llmsim_html_textf(f, "No calibration measurements of %s were found (%s).", g->name,
				  d->in->meas.source[0] ? d->in->meas.source
						    : "no --db and no dumps in calib/data");
	}
	fputs("</p>\n", f);
	if (d->in->meas.all.nclasses) {
		static const char *const h[] = {"<op class", "kernels", "median |error|",
						"p90 |error|"};
		fputs("<table>\n", f);
		head_row(f, h, 4);
		for (int i = 0; i < d->in->meas.all.nclasses; i++) {
			const struct llmsim_err_stats *c = &d->in->meas.all.classes[i];
			fputs("<tr>", f);
			cell(f, "td", 1, c->name);
			snprintf(b, sizeof b, "%d", c->n);
			cell(f, "td", 0, b);
			snprintf(b, sizeof b, "%.1f%%", c->median_abs_pct);
			cell(f, "td", 0, b);
			snprintf(b, sizeof b, "%.1f%%", c->p90_abs_pct);
			cell(f, "td", 0, b);
			fputs("</tr>\n", f);
		}
		fputs("</table>\n<p>Error of the predicted time against the measured median, over "
		      "all measured cases of this GPU (fit and held-out), as <code>llmsim calib "
		      "validate --all</code> scores them.</p>\n", f);
	}
	if (d->in->meas.note[0])
		not_available(f, d->in->meas.note);
	fputs("</section>\n", f);
}

static void assumptions(FILE *f, const struct report_data *d)
{
	const struct llmsim_layer_cfg *l = &d->in->layer;
	fputs("<section id=\"assumptions\"><h2>Assumptions</h2>\n<ul>\n", f);
	fputs("<li>Ceilings are the hardware file's datasheet peaks (dense); predicted points "
	      "include the GPU model's efficiencies, launch and latency floors.</li>\n", f);
	fputs("<li>Arithmetic intensity counts HBM traffic only; L2 and shared-memory ceilings "
	      "are drawn for reference against the same axis.</li>\n", f);
	fputs("<li>GEMM, attention and decode sit under the tensor roof of their data type; "
	      "element-wise ops under the CUDA-core FP32 roof.</li>\n", f);
	fputs("<li>The ops of one layer are those the simulator walks for this workload "
	      "(the op graph, sim/graph.c, as <code>llmsim ", f);
	fputs(l->workload == LLMSIM_WORKLOAD_SERVE ? "infer" : "train", f);
	fputs("</code> prices it): norm, QKV, RoPE, attention, O, residual, norm, MLP "
	      "up/gate, activation, down, residual", f);
	if (l->workload == LLMSIM_WORKLOAD_SERVE)
		fputs(", and the step's K and V written into the cache", f);
	if (d->in->model->has_moe)
		fputs("; a MoE layer's router and its softmax, and the experts the tokens touch "
		      "as one grouped GEMM", f);
	if (d->in->model->has_mla)
		fputs("; MLA's low-rank projections and latent norms, and absorbed MLA decode", f);
	fputs(". Communication is left out; every FLOP and byte comes from the simulator "
	      "(llmsim_predict), lone kernels at the burst clock.</li>\n<li>", f);
	if (l->workload == LLMSIM_WORKLOAD_SERVE)
		llmsim_html_textf(f, "Prefill runs %lld x %lld tokens; decode runs %lld tokens "
				     "against a %s KV cache of %lld tokens (%s attention).",
				  (long long)l->batch, (long long)l->seq, (long long)l->batch,
				  llmsim_dtype_name(l->kv_dtype), (long long)l->seq,
				  llmsim_attn_choice_name(l->attn));
	else
		llmsim_html_textf(f, "Forward and backward of %lld x %lld tokens (the batch and "
				     "sequence given, not the micro-batch or a context-parallel "
				     "slice); backward GEMMs are the data and weight gradients.",
				  (long long)l->batch, (long long)l->seq);
	fputs("</li>\n<li>", f);
	if (l->tp > 1)
		llmsim_html_textf(f, "The ops are those of one of %d tensor-parallel GPUs: heads "
				     "and MLP widths split %d ways, KV heads split or replicated%s. "
				     "Communication is not on the roofline: it is bound by links, "
				     "not by HBM.", l->tp, l->tp,
				  l->workload == LLMSIM_WORKLOAD_TRAIN
					  ? ", norms and residuals over 1/tp of the tokens "
					    "(sequence parallelism)"
					  : "");
	else
		fputs("The ops are those of one GPU holding the whole layer (tp 1).", f);
	fputs("</li>\n", f);
	if (l->workload == LLMSIM_WORKLOAD_SERVE)
		fputs("<li>Serving figures come from the inference library (sim/infer): one "
		      "replica, TTFT from chunked prefill, TPOT the mean decode step; the curve "
		      "doubles the batch from 1 until the KV cache no longer fits.</li>\n", f);
	else
		fputs("<li>Training figures come from the training library (sim/train): the "
		      "plan searches every parallel layout, ZeRO stage, micro-batch and "
		      "recomputation for the GPUs given and keeps the fastest that fit.</li>\n", f);
	fputs("</ul></section>\n", f);
}

int report_html(const struct report_data *d, const struct report_pics *pics, const char *path,
		struct llmsim_err *err)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return llmsim_err_set(err, LLMSIM_EIO, "cannot write '%s': %s", path,
				      strerror(errno));
	const char *gname = d->in->gpu->full_name[0] ? d->in->gpu->full_name : d->in->gpu->name;
	const char *mname = d->in->model->full_name[0] ? d->in->model->full_name : d->in->model->name;
	int train = d->in->cfg->layer.workload == LLMSIM_WORKLOAD_TRAIN;
	char when[64] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>", f);
	llmsim_html_textf(f, "llmsim report: %s on %s", mname, gname);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>", css);
	llmsim_html_textf(f, "%s on %s", mname, gname);
	fputs("</h1><p>", f);
	llmsim_html_textf(f, "%s, %s - llmsim %s (git %s), %s", train ? "training" : "serving",
			  llmsim_dtype_name(d->in->cfg->layer.dtype), llmsim_version(),
			  llmsim_git_revision(), when);
	fputs("</p></header>\n<nav><a href=\"#summary\">Summary</a><a href=\"#roofline\">"
	      "Roofline</a><a href=\"#ops\">Ops</a><a href=\"#memory\">Memory</a>"
	      "<a href=\"#time\">Time</a><a href=\"#configs\">Configurations</a>", f);
	if (!train)
		fputs("<a href=\"#serving\">Latency/throughput</a>", f);
	fputs("<a href=\"#calibration\">Calibration</a><a href=\"#assumptions\">Assumptions</a>"
	      "</nav>\n<main>\n", f);
	summary(f, d);
	fputs("<section id=\"roofline\"><h2>Roofline</h2>\n", f);
	int rc = picture(f, pics, PIC_ROOFLINE, "roofline with the ops of one layer",
			 train ? "Forward (circles) and backward (triangles) ops of one layer "
				 "at their predicted rates, under the GPU's ceilings."
			       : "Prefill (circles) and decode (triangles) ops of one layer at "
				 "their predicted rates, under the GPU's ceilings.",
			 err);
	if (rc == 0) {
		ceilings(f, d);
		fputs("</section>\n", f);
		op_table(f, d);
		rc = train ? train_sections(f, d, pics, err) : serve_sections(f, d, pics, err);
	}
	if (rc == 0) {
		calibration(f, d);
		assumptions(f, d);
		fputs("</main>\n<footer>Generated by llmsim report. Self-contained: pictures are "
		      "embedded; no network needed.</footer>\n</body>\n</html>\n", f);
	}
	int bad = ferror(f);
	bad |= fclose(f) != 0;
	if (rc)
		return rc;
	if (bad)
		return llmsim_err_set(err, LLMSIM_EIO, "cannot write '%s'", path);
	return 0;
}
