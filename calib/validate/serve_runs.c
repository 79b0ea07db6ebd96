/*
 * serve_runs.c - the published serving results suite: loading and
 * predicting each entry (see serve_runs.h).
 */
#include "serve_runs.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bounds.h"
#include "base/enum.h"
#include "base/yaml.h"
#include "suite.h"

static const char *const modes[] = {"serve", "infer", NULL};
static const char *const wdts[] = {"bf16", "fp8", "int4", "fp4", NULL};
static const enum llmsim_dtype wdt_vals[] = {LLMSIM_DT_BF16, LLMSIM_DT_FP8, LLMSIM_DT_INT4,
					     LLMSIM_DT_FP4};
static const char *const kvdts[] = {"bf16", "fp8", NULL};
static const char *const scheds[] = {"vllm", "no-evict", NULL};
static const char *const allocs[] = {"paged", "contiguous", NULL};
/* the order of enum llmsim_engine */
static const char *const engines[] = {"fused", "torch", "hf", NULL};

static const char *const metric_names[LLMSIM_PUB_COUNT] = {
	[LLMSIM_PUB_TOKENS_PER_S] = "tokens_per_s",
	[LLMSIM_PUB_TOKENS_PER_S_PER_GPU] = "tokens_per_s_per_gpu",
	[LLMSIM_PUB_KV_WASTE] = "kv_waste_fraction",
};
_Static_assert(sizeof metric_names / sizeof metric_names[0] == LLMSIM_PUB_COUNT, "metrics");

const char *llmsim_pub_metric_name(enum llmsim_pub_metric m)
{
	return llmsim_enum_label(metric_names, LLMSIM_PUB_COUNT, (int)m);
}

struct raw {
	char name[64], source[256], model[64], gpu[64], prompt_dist[64], output_dist[64];
	int mode, engine, gpus, tp, pp, ep, wdt, kvdt, sched, alloc, chunked;
	double max_batch, max_tokens, requests, prompt, output, batch, rate_per_s, reserve;
	double published_tokens_per_s, published_tokens_per_s_per_gpu,
		published_kv_waste_fraction;
};

/* Counts take the bounds of the flags of the same name (base/bounds.h). */
#define S(k, size, req) {#k, LLMSIM_YF_STRING, offsetof(struct raw, k), size, req, LLMSIM_YR_ANY, NULL, 0}
#define I(k) {#k, LLMSIM_YF_INT, offsetof(struct raw, k), 0, 0, LLMSIM_YR_POSITIVE, NULL, LLMSIM_MAX_GPUS}
#define D(k, range, mx) {#k, LLMSIM_YF_DOUBLE, offsetof(struct raw, k), 0, 0, LLMSIM_YR_##range, NULL, mx}
#define E(k, key, names) {key, LLMSIM_YF_ENUM, offsetof(struct raw, k), 0, 0, LLMSIM_YR_ANY, names, 0}
static const struct llmsim_yfield fields[] = {
	S(name, 64, 1), S(source, 256, 1), S(model, 64, 1), S(gpu, 64, 0),
	S(prompt_dist, 64, 0), S(output_dist, 64, 0),
	{"mode", LLMSIM_YF_ENUM, offsetof(struct raw, mode), 0, 1, LLMSIM_YR_ANY, modes, 0},
	{"engine", LLMSIM_YF_ENUM, offsetof(struct raw, engine), 0, 0, LLMSIM_YR_ANY, engines, 0},
	I(gpus), I(tp), I(pp), I(ep),
	E(wdt, "weight_dtype", wdts), E(kvdt, "kv_dtype", kvdts), E(sched, "scheduler", scheds),
	E(alloc, "kv_alloc", allocs),
	{"chunked_prefill", LLMSIM_YF_BOOL, offsetof(struct raw, chunked), 0, 0, LLMSIM_YR_ANY, NULL,
	 0},
	D(max_batch, POSITIVE, LLMSIM_MAX_BATCH), D(max_tokens, POSITIVE, LLMSIM_MAX_TOKENS),
	D(requests, POSITIVE, LLMSIM_MAX_REQUESTS), D(prompt, POSITIVE, LLMSIM_MAX_TOKENS),
	D(output, POSITIVE, LLMSIM_MAX_TOKENS), D(batch, POSITIVE, LLMSIM_MAX_BATCH),
	D(rate_per_s, NONNEG, LLMSIM_MAX_RATE), D(reserve, POSITIVE, LLMSIM_MAX_TOKENS),
	D(published_tokens_per_s, POSITIVE, 0), D(published_tokens_per_s_per_gpu, POSITIVE, 0),
	D(published_kv_waste_fraction, FRACTION, 0),
};

/* The counts read as doubles, stored as int64_t: whole numbers, and small
 * enough to convert exactly. */
#define C(k) {#k, offsetof(struct raw, k)}
static const struct {
	const char *key;
	size_t off;
} counts[] = {C(max_batch), C(max_tokens), C(requests), C(prompt), C(output), C(batch), C(reserve)};
#undef C

static int one(const struct llmsim_ynode *map, const char *path, void *entry,
	       struct llmsim_err *err)
{
	struct llmsim_serve_pub *p = entry;
	struct raw r;
	memset(&r, 0, sizeof r);
	snprintf(r.gpu, sizeof r.gpu, "h200");
	r.tp = r.pp = r.ep = 1;
	r.max_batch = 256;
	r.max_tokens = 8192;
	r.requests = 1000;
	r.prompt = 1024;
	r.output = 256;
	r.batch = 1;
	if (map->kind != LLMSIM_Y_MAP)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "each run must be a mapping");
	int rc = llmsim_yaml_extract(map, fields, sizeof fields / sizeof fields[0], &r, path,
				     "run", err);
	if (!rc)
		rc = llmsim_ymap_check_unused(map, path, "run", err);
	if (rc)
		return rc;
	int nm = (r.published_tokens_per_s > 0) + (r.published_tokens_per_s_per_gpu > 0) +
		 (r.published_kv_waste_fraction > 0);
	if (nm != 1)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "run '%s' needs exactly one published_* figure", r.name);
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		double v = *(const double *)((const char *)&r + counts[i].off);
		if (v != floor(v) || v > 0x1p53) {
			const struct llmsim_ynode *n = llmsim_ymap_get(map, counts[i].key);
			return llmsim_err_setloc(err, LLMSIM_EPARSE, path, n->line, n->col,
						 "'%s' must be a whole number up to 2^53, got %g",
						 counts[i].key, v);
		}
	}
	if (!r.gpus && (long long)r.tp * r.pp > INT_MAX)
		return llmsim_err_setloc(err, LLMSIM_EPARSE, path, map->line, map->col,
					 "run '%s': tp x pp is too large", r.name);
	memset(p, 0, sizeof *p);
	snprintf(p->name, sizeof p->name, "%s", r.name);
	snprintf(p->source, sizeof p->source, "%s", r.source);
	snprintf(p->model, sizeof p->model, "%s", r.model);
	snprintf(p->gpu, sizeof p->gpu, "%s", r.gpu);
	snprintf(p->prompt_dist, sizeof p->prompt_dist, "%s", r.prompt_dist);
	snprintf(p->output_dist, sizeof p->output_dist, "%s", r.output_dist);
	p->infer = r.mode == 1;
	p->engine = (enum llmsim_engine)r.engine;
	p->tp = r.tp, p->pp = r.pp, p->ep = r.ep;
	p->gpus = r.gpus ? r.gpus : r.tp * r.pp;
	p->weight_dtype = wdt_vals[r.wdt];
	p->kv_dtype = r.kvdt ? LLMSIM_DT_FP8 : LLMSIM_DT_BF16;
	p->sched = (enum llmsim_sched)r.sched;
	p->kv_alloc = (enum llmsim_kv_alloc)r.alloc;
	p->chunked_prefill = r.chunked;
	p->max_batch = (int64_t)r.max_batch;
	p->max_tokens = (int64_t)r.max_tokens;
	p->requests = (int64_t)r.requests;
	p->prompt = (int64_t)r.prompt;
	p->output = (int64_t)r.output;
	p->batch = (int64_t)r.batch;
	p->reserve = (int64_t)r.reserve;
	p->rate_per_s = r.rate_per_s;
	if (r.published_tokens_per_s > 0) {
		p->metric = LLMSIM_PUB_TOKENS_PER_S;
		p->published = r.published_tokens_per_s;
	} else if (r.published_tokens_per_s_per_gpu > 0) {
		p->metric = LLMSIM_PUB_TOKENS_PER_S_PER_GPU;
		p->published = r.published_tokens_per_s_per_gpu;
	} else {
		p->metric = LLMSIM_PUB_KV_WASTE;
		p->published = r.published_kv_waste_fraction;
	}
	return 0;
}

int llmsim_serve_pubs_load(const char *path, struct llmsim_serve_pub **out, int *n,
			   struct llmsim_err *err)
{
	void *v;
	int rc = llmsim_suite_load(path, sizeof **out, one, &v, n, err);
	*out = v;
	return rc;
}

int llmsim_serve_pub_predict(const struct llmsim_serve_pub *p, double *predicted,
			     struct llmsim_err *err)
{
	static struct llmsim_model m;
	static struct llmsim_gpu g;
	int rc = llmsim_model_load(p->model, &m, err);
	if (!rc)
		rc = llmsim_gpu_load(p->gpu, &g, err);
	if (rc)
		return rc;
	int replicas = 1;
	if (p->infer) {
		struct llmsim_infer_cfg cfg;
		llmsim_infer_cfg_init(&cfg, &m, &g);
		llmsim_infer_cfg_engine(&cfg, p->engine);
		cfg.weight_dtype = p->weight_dtype;
		cfg.kv_dtype = p->kv_dtype;
		if ((rc = llmsim_infer_layout(&cfg, p->gpus, p->tp, p->pp, p->ep, &replicas, err)))
			return rc;
		struct llmsim_infer_req req = {.batch = p->batch, .prompt = p->prompt,
					       .output = p->output};
		struct llmsim_infer_result res;
		if ((rc = llmsim_infer_run(&cfg, &req, &res, err)))
			return rc;
		double tps = res.tokens_per_s * replicas;
		*predicted = p->metric == LLMSIM_PUB_TOKENS_PER_S_PER_GPU ? tps / p->gpus : tps;
		return 0;
	}
	struct llmsim_serve_cfg cfg;
	llmsim_serve_cfg_init(&cfg, &m, &g);
	llmsim_infer_cfg_engine(&cfg.infer, p->engine);
	cfg.infer.runtime = LLMSIM_RT_GRAPH;
	cfg.infer.weight_dtype = p->weight_dtype;
	cfg.infer.kv_dtype = p->kv_dtype;
	if (p->engine == LLMSIM_ENGINE_FUSED)
		cfg.infer.attn = p->kv_alloc == LLMSIM_KV_CONTIGUOUS ? LLMSIM_AC_FLASH2 : LLMSIM_AC_PAGED;
	if ((rc = llmsim_infer_layout(&cfg.infer, p->gpus, p->tp, p->pp, p->ep, &replicas, err)))
		return rc;
	cfg.kv_alloc = p->kv_alloc;
	cfg.reserve_tokens = p->reserve;
	cfg.sched = p->sched;
	cfg.chunked_prefill = p->chunked_prefill;
	cfg.max_batch = p->max_batch;
	cfg.max_tokens = p->max_tokens;
	cfg.requests = (p->requests + replicas - 1) / replicas;
	cfg.rate_per_s = p->rate_per_s / replicas;
	cfg.prompt.a = (double)p->prompt;
	cfg.output.a = (double)p->output;
	if (p->prompt_dist[0] && (rc = llmsim_dist_parse(p->prompt_dist, &cfg.prompt, err)))
		return rc;
	if (p->output_dist[0] && (rc = llmsim_dist_parse(p->output_dist, &cfg.output, err)))
		return rc;
	struct llmsim_serve_result res;
	if ((rc = llmsim_serve_run(&cfg, &res, err)))
		return rc;
	double tps = res.tokens_per_s * replicas;
	switch (p->metric) {
	case LLMSIM_PUB_TOKENS_PER_S: *predicted = tps; break;
	case LLMSIM_PUB_TOKENS_PER_S_PER_GPU: *predicted = tps / p->gpus; break;
	default: *predicted = res.kv_waste_fraction; break;
	}
	return 0;
}
