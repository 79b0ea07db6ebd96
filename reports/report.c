/* report.c - `llmsim report`: gather, draw, write, then move into place. */
#include "../base/bounds.h"
#include "report_int.h"

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
	c->attn = LLMSIM_AC_PAGED;
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
	res->ops = d->nops;
	for (int i = 0; i < d->nops; i++) {
		res->phase_time_s[d->ops[i].phase] += d->pts[i].pred.time_s;
		res->phase_flops[d->ops[i].phase] += d->pts[i].pred.flops;
	}
	res->measured_points = d->meas.n;
	res->step_s = res->tokens_per_s = res->mfu = res->mem_per_gpu_bytes = NAN;
	res->ttft_s = res->tpot_s = res->serve_tokens_per_s = NAN;
	if (d->have_train) {
		res->step_s = d->chosen.time.step_s;
		res->tokens_per_s = d->chosen.tokens_per_s;
		res->mfu = d->chosen.mfu;
		res->mem_per_gpu_bytes = d->chosen.mem.total;
		report_train_name(&d->chosen.cfg, res->train_config, sizeof res->train_config);
	}
	if (d->have_serve) {
		res->ttft_s = d->req.ttft_s;
		res->tpot_s = d->req.tpot_s;
		res->serve_tokens_per_s = d->req.tokens_per_s;
		res->max_batch = d->req.max_batch;
	}
	add_file(res, "index.html");
	for (int i = 0; i < PIC_COUNT; i++)
		if (pics->path[i][0])
			add_file(res, pics->name[i]);
	if (d->cfg->layer.workload == LLMSIM_WORKLOAD_TRAIN && !d->have_train)
		snprintf(res->unavailable, sizeof res->unavailable, "training: %.200s",
			 d->train_note);
	if (d->cfg->layer.workload == LLMSIM_WORKLOAD_SERVE && !d->have_serve)
		snprintf(res->unavailable, sizeof res->unavailable, "serving: %.200s",
			 d->serve_note);
}

int llmsim_report_write(const struct llmsim_gpu *gpu, const struct llmsim_model *model,
			const struct llmsim_report_cfg *cfg_in, struct llmsim_report_result *res,
			struct llmsim_err *err)
{
	struct llmsim_gnuplot gp;
	struct llmsim_outdir out;
	struct llmsim_report_cfg cfg = *cfg_in;
	struct report_data *d;
	struct report_pics *pics;
	char work[4096], index[4096];
	int rc;

	memset(res, 0, sizeof *res);
	d = NULL;
	pics = NULL;
	if (cfg.prompt <= 0)
		cfg.prompt = cfg.layer.seq;
	if (cfg.width < 320 || cfg.height < 240 || cfg.width > LLMSIM_MAX_PIXELS ||
	    cfg.height > LLMSIM_MAX_PIXELS)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "picture size %dx%d is out of range (320x240 to %dx%d)",
				      cfg.width, cfg.height, LLMSIM_MAX_PIXELS, LLMSIM_MAX_PIXELS);

	/* Everything that can refuse without writing comes first. */
	rc = llmsim_gnuplot_open(&gp, err);
	if (rc)
		return rc;
	rc = llmsim_outdir_begin(&out, cfg.out_dir, cfg.force, err);
	if (rc)
		return rc;
	const char *tmpdir = getenv("TMPDIR");
	snprintf(work, sizeof work, "%s/llmsim-report-XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(work)) {
		llmsim_outdir_abort(&out);
		return llmsim_err_set(err, LLMSIM_EIO, "cannot create a work folder in '%s'",
				      tmpdir && *tmpdir ? tmpdir : "/tmp");
	}

	/* Both are large (every op's prediction, every picture's path). */
	d = calloc(1, sizeof *d);
	pics = calloc(1, sizeof *pics);
	if (!d || !pics) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	d->gpu = gpu;
	d->model = model;
	d->cfg = &cfg;
	rc = report_gather(d, err);
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
	report_data_release(d);
out:
	if (rc)
		llmsim_outdir_abort(&out);
	free(d);
	free(pics);
	llmsim_rmtree(work);
	return rc;
}
