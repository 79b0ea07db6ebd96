/* report.c - `llmsim report`: draw, write, then move into place. */
#include "report_int.h"

#include "base/bounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outdir.h"

void llmsim_report_cfg_init(struct llmsim_report_cfg *c)
{
	memset(c, 0, sizeof *c);
	llmsim_layer_cfg_init(&c->layer);
	c->width = 1280;
	c->height = 800;
	llmsim_train_cfg_init(&c->train);
	c->plan_gpus = 8;
	c->top = 5;
	c->tp = c->pp = c->ep = 1;
	c->weight_dtype = LLMSIM_DT_BF16;
	c->kv_dtype = LLMSIM_DT_BF16;
	c->attn = LLMSIM_AC_SDPA; /* the default engine's (LLMSIM_ENGINE_DEFAULT: torch) */
	c->prompt = 0; /* 0: the layer's seq */
	c->output = 256;
}

static void add_file(struct llmsim_report_result *res, const char *name)
{
	if (res->nfiles < LLMSIM_REPORT_MAX_FILES)
		snprintf(res->files[res->nfiles++], sizeof res->files[0], "%s", name);
}

static void fill_result(const struct report_data *d, const struct report_pics *pics,
			struct llmsim_report_result *res)
{
	res->ops = d->in->nops;
	for (int i = 0; i < d->in->nops; i++) {
		res->phase_time_s[d->in->ops[i].phase] += d->in->ops[i].pred.time_s;
		res->phase_flops[d->in->ops[i].phase] += d->in->ops[i].pred.flops;
	}
	res->measured_points = d->in->meas.n;
	res->step_s = res->tokens_per_s = res->mfu = res->mem_per_gpu_bytes = NAN;
	res->ttft_s = res->tpot_s = res->serve_tokens_per_s = NAN;
	if (d->in->have_train) {
		res->step_s = d->in->chosen.time.step_s;
		res->tokens_per_s = d->in->chosen.tokens_per_s;
		res->mfu = d->in->chosen.mfu;
		res->mem_per_gpu_bytes = d->in->chosen.mem.total_bytes;
		llmsim_report_train_name(&d->in->chosen.cfg, res->train_config,
					 sizeof res->train_config);
	}
	if (d->in->have_serve) {
		res->ttft_s = d->in->req.ttft_s;
		res->tpot_s = d->in->req.tpot_s;
		res->serve_tokens_per_s = d->in->req.tokens_per_s;
		res->max_batch = d->in->req.max_batch;
	}
	add_file(res, "index.html");
	for (int i = 0; i < PIC_COUNT; i++)
		if (pics->path[i][0])
			add_file(res, pics->name[i]);
	if (d->in->cfg->layer.workload == LLMSIM_WORKLOAD_TRAIN && !d->in->have_train)
		snprintf(res->unavailable, sizeof res->unavailable, "training: %.200s",
			 d->in->train_note);
	if (d->in->cfg->layer.workload == LLMSIM_WORKLOAD_SERVE && !d->in->have_serve)
		snprintf(res->unavailable, sizeof res->unavailable, "serving: %.200s",
			 d->in->serve_note);
}

int llmsim_report_check(const struct llmsim_report_cfg *cfg, struct llmsim_err *err)
{
	struct llmsim_gnuplot gp;
	struct llmsim_outdir out;
	if (cfg->width < 320 || cfg->height < 240 || cfg->width > LLMSIM_MAX_PIXELS ||
	    cfg->height > LLMSIM_MAX_PIXELS)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "picture size %dx%d is out of range (320x240 to %dx%d)",
				      cfg->width, cfg->height, LLMSIM_MAX_PIXELS, LLMSIM_MAX_PIXELS);
	int rc = llmsim_gnuplot_open(&gp, err);
	if (!rc && !(rc = llmsim_outdir_begin(&out, cfg->out_dir, cfg->force, err)))
		llmsim_outdir_abort(&out);
	return rc;
}

int llmsim_report_write(const struct llmsim_report_data *in, struct llmsim_report_result *res,
			struct llmsim_err *err)
{
	struct llmsim_gnuplot gp;
	struct llmsim_outdir out;
	const struct llmsim_report_cfg *cfg = in->cfg;
	struct report_data *d;
	struct report_pics *pics;
	char work[4096], index[4096];
	int rc;

	memset(res, 0, sizeof *res);
	if ((rc = llmsim_report_check(cfg, err)))
		return rc;
	/* Everything that can refuse without writing comes first. */
	rc = llmsim_gnuplot_open(&gp, err);
	if (rc)
		return rc;
	rc = llmsim_outdir_begin(&out, cfg->out_dir, cfg->force, err);
	if (rc)
		return rc;
	const char *tmpdir = getenv("TMPDIR");
	tmpdir = tmpdir && *tmpdir ? tmpdir : "/tmp";
	/* the work folder is named for its run, so the next run removes it
	 * when a kill left it */
	llmsim_stage_sweep_in(tmpdir, "llmsim-report");
	if (llmsim_stage_name_in(work, sizeof work, tmpdir, "llmsim-report") || !mkdtemp(work)) {
		llmsim_outdir_abort(&out);
		return llmsim_err_set(err, LLMSIM_EIO, "cannot create a work folder in '%s'",
				      tmpdir);
	}

	/* Both are large (every op's prediction, every picture's path). */
	d = calloc(1, sizeof *d);
	pics = calloc(1, sizeof *pics);
	if (!d || !pics) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	d->in = in;
	rc = llmsim_roofline_init(in->gpu, &d->roof, err);
	for (int i = 0; !rc && i < in->nops; i++)
		llmsim_roofline_point(&d->roof, &in->ops[i].op, &in->ops[i].pred, &d->pts[i]);
	if (!rc)
		rc = report_draw(d, &gp, work, out.tmp, pics, err);
	if (!rc && llmsim_outdir_path(&out, "index.html", index, sizeof index))
		rc = llmsim_err_set(err, LLMSIM_EINVAL, "output path too long");
	if (!rc)
		rc = report_html(d, pics, index, err);
	if (!rc) {
		fill_result(d, pics, res);
		rc = llmsim_outdir_commit(&out, err);
	}
	if (!rc)
		snprintf(res->dir, sizeof res->dir, "%s", out.dir);
out:
	if (rc)
		llmsim_outdir_abort(&out);
	free(d);
	free(pics);
	llmsim_rmtree(work);
	return rc;
}
