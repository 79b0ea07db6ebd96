/*
 * serve.c - the serving simulation (see serve.h).
 *
 * Time advances one engine step at a time. Each sequence holds
 * prompt + generated tokens, `cached` of them in the KV cache; a step
 * processes some of the rest (a decoding sequence exactly one), and when it
 * processes the last of them the sequence emits a token. A preempted
 * sequence drops its cache and, readmitted, prefills prompt + generated
 * tokens again (vLLM's recompute preemption).
 *
 * Step prices come in three additive parts (graph runtime): the per-token
 * body by token count, the head by logit rows, and attention by decode
 * batch and mean context or by prefill chunk and context; contexts are
 * priced on a grid eight points per octave and interpolated linearly, and
 * every price is cached, so thousands of requests take milliseconds.
 *
 * The engines of today (serve.h, serve_server.c) change three things here:
 * the scheduler (SGLang's prefill-first steps: sched_running skips the
 * decodes while a prefill step can be formed), the body's price (padded
 * to the captured CUDA-graph size, or without a graph past the largest),
 * and what a decoding sequence does: with a prefix cache its first `hit`
 * prompt tokens are cached before it runs (one shared copy, not in its own
 * KV slots); with speculation it verifies qlen tokens a step after the
 * draft proposes them, and keeps 1 + the accepted ones.
 */
#include "base/bounds.h"
#include "serve.h"

#include "base/stats.h"
#include "sim/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- price cache: open addressing, (tag, a, b, c) -> seconds, FLOPs ---- */

struct pkey {
	int64_t tag, a, b, c;
};

/* A step part's price: its wall time and the FLOPs its kernels do. */
struct pval {
	double time_s, flops;
};

struct pcache {
	struct pkey *keys;
	struct pval *vals;
	unsigned char *used;
	size_t cap, n;
};

static size_t pc_slot(const struct pcache *c, const struct pkey *k)
{
	uint64_t h = (uint64_t)k->tag * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uint64_t)k->a) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (uint64_t)k->b) * 0x94d049bb133111ebULL;
	h = (h ^ (uint64_t)k->c) * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 17) & (c->cap - 1);
	while (c->used[i] && memcmp(&c->keys[i], k, sizeof *k))
		i = (i + 1) & (c->cap - 1);
	return i;
}

static struct pval *pc_find(struct pcache *c, const struct pkey *k)
{
	if (!c->cap)
		return NULL;
	size_t i = pc_slot(c, k);
	return c->used[i] ? &c->vals[i] : NULL;
}

static int pc_put(struct pcache *c, const struct pkey *k, struct pval v)
{
	if (2 * (c->n + 1) > c->cap) {
		struct pcache g = {.cap = c->cap ? 2 * c->cap : 1024};
		g.keys = calloc(g.cap, sizeof *g.keys);
		g.vals = calloc(g.cap, sizeof *g.vals);
		g.used = calloc(g.cap, 1);
		if (!g.keys || !g.vals || !g.used) {
			free(g.keys);
			free(g.vals);
			free(g.used);
			return LLMSIM_ENOMEM;
		}
		for (size_t i = 0; i < c->cap; i++)
			if (c->used[i])
				pc_put(&g, &c->keys[i], c->vals[i]);
		free(c->keys);
		free(c->vals);
		free(c->used);
		*c = g;
	}
	size_t i = pc_slot(c, k);
	if (!c->used[i])
		c->n++;
	c->used[i] = 1;
	c->keys[i] = *k;
	c->vals[i] = v;
	return 0;
}

static void pc_release(struct pcache *c)
{
	free(c->keys);
	free(c->vals);
	free(c->used);
}

enum { TAG_BODY = 1, TAG_HEAD, TAG_DEC, TAG_PRE, TAG_BODY_EAGER, TAG_DRAFT };

struct sim {
	struct llmsim_infer_cfg icfg;
	struct llmsim_spec_cfg spec;    /* speculation's draft, when the engine speculates */
	struct pcache pc;
	int64_t priced;
	struct llmsim_err *err;
	int rc;
};

/* The price of one part of a step, cached: body (a tokens; eager: outside
 * a CUDA graph), head (a logit rows), decode attention (a sequences at mean
 * context b, c query tokens each: 1, or a speculative verify), prefill
 * attention (c sequences of a new tokens after b cached ones), a
 * speculative draft (a sequences at context b). */
static struct pval part(struct sim *s, int tag, int64_t a, int64_t b, int64_t c)
{
	struct pval none = {0, 0};
	if (s->rc)
		return none;
	struct pkey k = {.tag = tag, .a = a, .b = b, .c = c};
	struct pval *v = pc_find(&s->pc, &k);
	if (v)
		return *v;
	struct llmsim_prefill_chunk ch = {.tokens = a, .context = b, .count = c};
	struct llmsim_step st = {.q_len = 1};
	switch (tag) {
	case TAG_BODY: st.decode_seqs = a; st.decode_kv_len = 1; st.parts = LLMSIM_PART_BODY; break;
	case TAG_HEAD: st.decode_seqs = a; st.logits = a; st.parts = LLMSIM_PART_HEAD; break;
	case TAG_DEC: st.decode_seqs = a; st.decode_kv_len = (double)b; st.parts = LLMSIM_PART_ATTN; break;
	default: st.prefill = &ch; st.nprefill = 1; st.parts = LLMSIM_PART_ATTN; break;
	}
	struct llmsim_step_cost cost = {0};
	struct llmsim_infer_cfg eager;
	int rc;
	if (tag == TAG_DEC && c > 1)
		st.q_len = c;
	if (tag == TAG_BODY_EAGER) {
		eager = s->icfg;
		eager.runtime = LLMSIM_RT_EAGER;
		st.decode_seqs = a;
		st.decode_kv_len = 1;
		st.parts = LLMSIM_PART_BODY;
		rc = llmsim_infer_step(&eager, &st, &cost, s->err);
	} else if (tag == TAG_DRAFT) {
		rc = llmsim_spec_draft(&s->spec, a, b, &cost.time_s, s->err);
	} else {
		rc = llmsim_infer_step(&s->icfg, &st, &cost, s->err);
	}
	struct pval p = {cost.time_s, cost.flops};
	if (!rc)
		rc = pc_put(&s->pc, &k, p);
	if (rc) {
		if (rc == LLMSIM_ENOMEM)
			llmsim_err_set(s->err, rc, "out of memory for the step-price cache");
		s->rc = rc;
		return none;
	}
	s->priced++;
	return p;
}

/* Grid spacing for contexts: exact up to 64, then 8 points per octave. */
static int64_t grid(int64_t x)
{
	if (x <= 64)
		return 1;
	int64_t p = 1;
	while (p * 2 <= x)
		p *= 2;
	return p / 8;
}

/* A part at context `ctx`, linear between grid points. */
static struct pval part_ctx(struct sim *s, int tag, int64_t a, double ctx, int64_t c)
{
	int64_t x = (int64_t)llround(ctx);
	if ((tag == TAG_DEC || tag == TAG_DRAFT) && x < 1)
		x = 1;
	int64_t w = grid(x), x0 = x / w * w;
	if (x0 == x)
		return part(s, tag, a, x, c);
	struct pval f0 = part(s, tag, a, x0, c), f1 = part(s, tag, a, x0 + w, c);
	double u = (double)(x - x0) / (double)w;
	return (struct pval){f0.time_s + (f1.time_s - f0.time_s) * u,
			     f0.flops + (f1.flops - f0.flops) * u};
}

/* Add a part's price to a step's. */
static void add(struct pval *sum, struct pval p)
{
	sum->time_s += p.time_s;
	sum->flops += p.flops;
}

/* ---- the engine ---- */

enum rstate { R_FUTURE, R_WAITING, R_RUNNING, R_DONE };

struct req {
	double arrival_s, first_s, finish_s;
	int64_t prompt, output, generated, cached;
	int64_t chunk;              /* tokens scheduled this step */
	int64_t hit;                /* prompt tokens found in the prefix cache (shared,
				     * not held by the sequence) */
	int kv_arrives;             /* prefilled: its prompt's cache is yet to be placed */
	struct llmsim_kv_seq kv;
	enum rstate state;
};

/* Waiting queue: a ring of request indices; preempted ones go in front. */
struct ring {
	int64_t *v, cap, head, n;
};

static void ring_push_back(struct ring *r, int64_t x)
{
	LLMSIM_ASSERT(r->n < r->cap);
	r->v[(r->head + r->n) % r->cap] = x;
	r->n++;
}

static void ring_push_front(struct ring *r, int64_t x)
{
	LLMSIM_ASSERT(r->n < r->cap);
	r->head = (r->head + r->cap - 1) % r->cap;
	r->v[r->head] = x;
	r->n++;
}

static int64_t ring_front(const struct ring *r)
{
	return r->v[r->head];
}

static void ring_pop_front(struct ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

void llmsim_serve_cfg_init(struct llmsim_serve_cfg *cfg, const struct llmsim_model *model,
			   const struct llmsim_gpu *gpu)
{
	memset(cfg, 0, sizeof *cfg);
	llmsim_infer_cfg_init(&cfg->infer, model, gpu);
	cfg->requests = 1000;
	cfg->prompt.kind = cfg->output.kind = LLMSIM_DIST_FIXED;
	cfg->prompt.a = 1024;
	cfg->output.a = 256;
	cfg->kv_alloc = LLMSIM_KV_PAGED;
	cfg->max_batch = 256;
	cfg->max_tokens = 8192;
	cfg->seed = 1;
}

void llmsim_pcts_compute(double *v, int64_t n, struct llmsim_pcts *o)
{
	memset(o, 0, sizeof *o);
	if (n <= 0)
		return;
	llmsim_sort_doubles(v, (size_t)n);
	double sum = 0;
	for (int64_t i = 0; i < n; i++)
		sum += v[i];
	o->mean = sum / (double)n;
	o->p50 = llmsim_quantile_sorted(v, (size_t)n, 0.50);
	o->p90 = llmsim_quantile_sorted(v, (size_t)n, 0.90);
	o->p99 = llmsim_quantile_sorted(v, (size_t)n, 0.99);
	o->max = v[n - 1];
}

static int make_requests(const struct llmsim_serve_cfg *cfg, struct req *r, int64_t n)
{
	struct llmsim_rng rng;
	llmsim_rng_seed(&rng, cfg->seed);
	double t = 0;
	for (int64_t i = 0; i < n; i++) {
		if (cfg->concurrency > 0) /* closed loop: later ones arrive as others finish */
			t = i < cfg->concurrency ? 0 : INFINITY;
		else if (cfg->rate_per_s > 0)
			t += llmsim_rng_exponential(&rng, cfg->rate_per_s);
		r[i].arrival_s = t;
		if (cfg->nlist > 0) {
			r[i].prompt = cfg->prompt_list[i % cfg->nlist];
			r[i].output = cfg->output_list[i % cfg->nlist];
		} else {
			r[i].prompt = llmsim_dist_sample(&cfg->prompt, &rng);
			r[i].output = llmsim_dist_sample(&cfg->output, &rng);
		}
		r[i].state = R_FUTURE;
		if (cfg->prefilled) {
			r[i].generated = 1;
			r[i].kv_arrives = 1;
		}
	}
	return 0;
}

struct engine {
	const struct llmsim_serve_cfg *cfg;
	struct sim sim;
	struct req *r;
	int64_t n;
	struct ring wait;
	int64_t *run, nrun;         /* running, in admission order */
	struct llmsim_prefill_chunk *chunks; /* this step's prefill shapes */
	struct llmsim_kv kv;
	int64_t max_output, budget;
	int64_t final_tokens;       /* slots the running sequences hold at their full length */
	int64_t next_user;          /* closed loop: the next request to arrive */
	int64_t qlen;               /* query tokens of a decoding sequence: 1, or a
				     * speculative verify's */
	struct llmsim_rng accept;   /* speculation's acceptances */
	struct llmsim_serve_result *res;
};

/* A contiguous reservation: the configured length, or the prompt plus the
 * longest output the workload may produce (the engine does not know when a
 * sequence will stop, only its cap). */
static int64_t reserve(const struct engine *e, const struct req *q)
{
	return e->cfg->reserve_tokens > 0 ? e->cfg->reserve_tokens : q->prompt + e->max_output;
}

/* Slots a sequence holds once it reaches its full length. */
static int64_t final_slots(const struct engine *e, const struct req *q)
{
	int64_t n = (e->cfg->kv_alloc == LLMSIM_KV_CONTIGUOUS ? reserve(e, q) : q->prompt + q->output) -
		    q->hit;
	return (n + e->kv.block_size - 1) / e->kv.block_size * e->kv.block_size;
}

static const char *const sched_names[LLMSIM_SERVE_SCHED_COUNT] = {
	[LLMSIM_SCHED_VLLM] = "vllm",
	[LLMSIM_SCHED_NO_EVICT] = "no-evict",
};
_Static_assert(sizeof sched_names / sizeof sched_names[0] == LLMSIM_SERVE_SCHED_COUNT, "scheds");

const char *llmsim_sched_name(enum llmsim_sched s)
{
	return (unsigned)s < LLMSIM_SERVE_SCHED_COUNT ? sched_names[s] : "?";
}

int llmsim_sched_parse(const char *s)
{
	for (int i = 0; i < LLMSIM_SERVE_SCHED_COUNT; i++)
		if (!strcmp(s, sched_names[i]))
			return i;
	return -1;
}

static void preempt(struct engine *e, int64_t pos)
{
	int64_t id = e->run[pos];
	struct req *q = &e->r[id];
	llmsim_kv_release(&e->kv, &q->kv);
	e->final_tokens -= final_slots(e, q);
	q->cached = 0;
	q->chunk = 0;
	q->state = R_WAITING;
	memmove(&e->run[pos], &e->run[pos + 1], (size_t)(e->nrun - pos - 1) * sizeof *e->run);
	e->nrun--;
	ring_push_front(&e->wait, id);
	e->res->preemptions++;
}

/* The running sequences' work, oldest first (a prefill-first step skips
 * the decoding ones); the newest gives way when the cache runs out. A
 * decoding sequence takes qlen slots and budget (its speculative verify). */
static void sched_running(struct engine *e, int64_t *budget, int skip_decode)
{
	for (int64_t i = 0; i < e->nrun && *budget > 0; i++) {
		struct req *q = &e->r[e->run[i]];
		int64_t pending = q->prompt + q->generated - q->cached;
		if (skip_decode && pending == 1)
			continue;
		int64_t chunk = pending < *budget ? pending : *budget;
		int64_t need = pending == 1 ? e->qlen : chunk, top = q->prompt + q->output;
		int64_t upto = q->cached + need < top ? q->cached + need : top;
		while (llmsim_kv_grow(&e->kv, &q->kv, upto - q->hit)) {
			int64_t victim = e->nrun - 1;
			int self = victim == i;
			preempt(e, victim);
			if (self) {
				chunk = 0;
				break;
			}
		}
		if (chunk <= 0)
			break;
		q->chunk = chunk;
		*budget -= pending == 1 ? e->qlen : chunk;
	}
}

/* Then waiting ones, first come first served; as vLLM's scheduler, none
 * while this step had to preempt (there is no room for them). */
static void sched_waiting(struct engine *e, int64_t *budget, int64_t before)
{
	while (e->res->preemptions == before && e->wait.n > 0 && e->nrun < e->cfg->max_batch && *budget > 0) {
		int64_t id = ring_front(&e->wait);
		struct req *q = &e->r[id];
		int64_t pending = q->prompt + q->generated - q->hit;
		int64_t chunk = pending;
		if (q->kv_arrives) { /* the prompt's cache arrives: decode its next token */
			int64_t most = e->cfg->kv_alloc == LLMSIM_KV_CONTIGUOUS ? reserve(e, q)
									     : q->prompt + q->output;
			if (e->cfg->sched == LLMSIM_SCHED_NO_EVICT &&
			    e->final_tokens + final_slots(e, q) > e->kv.capacity_tokens)
				break;
			if (llmsim_kv_admit(&e->kv, &q->kv, pending, most))
				break;
			e->final_tokens += final_slots(e, q);
			ring_pop_front(&e->wait);
			q->kv_arrives = 0;
			q->state = R_RUNNING;
			q->cached = pending - 1;
			q->chunk = 1;
			e->run[e->nrun++] = id;
			*budget -= 1;
			continue;
		}
		if (chunk > *budget) {
			if (!e->cfg->chunked_prefill)
				break;
			chunk = *budget;
		}
		int64_t most = (e->cfg->kv_alloc == LLMSIM_KV_CONTIGUOUS ? reserve(e, q)
									 : q->prompt + q->output) -
			       q->hit;
		if (e->cfg->sched == LLMSIM_SCHED_NO_EVICT &&
		    e->final_tokens + final_slots(e, q) > e->kv.capacity_tokens)
			break;
		if (llmsim_kv_admit(&e->kv, &q->kv, chunk, most))
			break;
		e->final_tokens += final_slots(e, q);
		ring_pop_front(&e->wait);
		q->state = R_RUNNING;
		q->chunk = chunk;
		q->cached = q->hit; /* the shared prefix stays cached through preemption */
		e->run[e->nrun++] = id;
		*budget -= chunk;
	}
}

/* Choose this step's work; returns the tokens scheduled. SGLang runs a
 * prefill step whenever it can form one (its decodes wait), else decodes. */
static int64_t schedule(struct engine *e)
{
	int64_t budget = e->budget, before = e->res->preemptions;
	if (e->cfg->eng.server == LLMSIM_SERVER_SGLANG) {
		sched_running(e, &budget, 1);
		sched_waiting(e, &budget, before);
		if (budget < e->budget)
			return e->budget - budget;
		before = e->res->preemptions;
	}
	sched_running(e, &budget, 0);
	sched_waiting(e, &budget, before);
	return e->budget - budget;
}

static int cmp_chunk(const void *x, const void *y)
{
	const struct llmsim_prefill_chunk *a = x, *b = y;
	if (a->tokens != b->tokens)
		return a->tokens < b->tokens ? -1 : 1;
	return (a->context > b->context) - (a->context < b->context);
}

/* Price the scheduled step: prefill chunks of one shape run as one
 * attention call (as a varlen kernel batches them). A decoding sequence
 * verifies qlen tokens (1 without speculation) after its draft. The body
 * runs as the engine's CUDA graphs do: padded to the next captured size
 * (vLLM: of the step's tokens; SGLang: of a decode-only step's
 * sequences), or without a graph past the largest. */
static struct pval price_step(struct engine *e, int64_t *prefill_tokens, int64_t *decode_tokens)
{
	struct sim *s = &e->sim;
	int64_t n = 0, dec = 0, logits = 0, np = 0;
	double kv = 0;
	struct pval t = {0, 0};
	for (int64_t i = 0; i < e->nrun; i++) {
		const struct req *q = &e->r[e->run[i]];
		if (!q->chunk)
			continue;
		int64_t pending = q->prompt + q->generated - q->cached;
		n += pending == 1 ? e->qlen : q->chunk;
		if (q->chunk == pending)
			logits += pending == 1 ? e->qlen : 1;
		if (pending == 1) {
			dec++;
			kv += (double)(q->cached + 1);
		} else {
			e->chunks[np++] = (struct llmsim_prefill_chunk){
				.tokens = q->chunk, .context = q->cached, .count = 1};
		}
	}
	if (np > 1)
		qsort(e->chunks, (size_t)np, sizeof *e->chunks, cmp_chunk);
	for (int64_t i = 0; i < np;) {
		int64_t j = i + 1;
		while (j < np && !cmp_chunk(&e->chunks[i], &e->chunks[j]))
			j++;
		add(&t, part_ctx(s, TAG_PRE, e->chunks[i].tokens, (double)e->chunks[i].context,
				 j - i));
		i = j;
	}
	int graph = 1;
	int64_t body = n, rows = dec; /* as the captured graph runs them */
	if (e->cfg->eng.server == LLMSIM_SERVER_VLLM) {
		body = llmsim_serve_graph_size(e->cfg, n, &graph);
	} else if (e->cfg->eng.server == LLMSIM_SERVER_SGLANG && dec && !np) {
		rows = llmsim_serve_graph_size(e->cfg, dec, &graph);
		body = rows * e->qlen;
		logits += (rows - dec) * e->qlen;
	}
	if (dec) {
		add(&t, part_ctx(s, TAG_DEC, rows, kv / (double)dec, e->qlen));
		if (e->qlen > 1)
			add(&t, part_ctx(s, TAG_DRAFT, rows, kv / (double)dec, 0));
	}
	add(&t, part(s, graph ? TAG_BODY : TAG_BODY_EAGER, body, 0, 0));
	if (logits)
		add(&t, part(s, TAG_HEAD, logits, 0, 0));
	*prefill_tokens = n - dec * e->qlen;
	*decode_tokens = dec;
	return t;
}

/* The engine steps' track of the timeline. */
static int steps_track(struct llmsim_timeline *tl, const struct llmsim_infer_cfg *c)
{
	char proc[64];
	snprintf(proc, sizeof proc, "engine (tp %d x pp %d)", c->tp, c->pp);
	return llmsim_tl_track(tl, 0, proc, 1, "steps");
}

/* Each of the first cfg->timeline_requests requests as two spans, waiting
 * and prefill (arrival to first token), then decode (to its last), on
 * lanes of a "requests" process: a request takes the first lane free at
 * its arrival, so no lane holds two at once. */
static void tl_requests(struct engine *e)
{
	struct llmsim_timeline *tl = e->cfg->timeline;
	int64_t n = e->cfg->timeline_requests < e->n ? e->cfg->timeline_requests : e->n;
	double *lane = malloc((size_t)(n > 0 ? n : 1) * sizeof *lane);
	if (!lane) {
		tl->oom = 1;
		return;
	}
	int nl = 0;
	for (int64_t i = 0; i < n; i++) {
		const struct req *q = &e->r[i];
		int k = 0;
		while (k < nl && lane[k] > q->arrival_s)
			k++;
		if (k == nl)
			nl++;
		lane[k] = q->finish_s;
		char name[32];
		snprintf(name, sizeof name, "lane %d", k);
		int tr = llmsim_tl_track(tl, 1, "requests", k + 1, name);
		for (int j = 0; j < 2; j++) {
			struct llmsim_tl_event *ev =
				j ? llmsim_tl_add(tl, tr, "request", q->first_s, q->finish_s - q->first_s,
						  "req %lld: decode", (long long)i)
				  : llmsim_tl_add(tl, tr, "request", q->arrival_s,
						  q->first_s - q->arrival_s, "req %lld: to first token",
						  (long long)i);
			llmsim_tl_arg(ev, "request", (double)i);
			llmsim_tl_arg(ev, "prompt", (double)q->prompt);
			llmsim_tl_arg(ev, "output", (double)q->output);
			llmsim_tl_arg(ev, "ttft_s", q->first_s - q->arrival_s);
			llmsim_tl_arg(ev, "e2e_s", q->finish_s - q->arrival_s);
		}
	}
	free(lane);
	if (n < e->n)
		snprintf(tl->note, sizeof tl->note,
			 "requests: the first %lld of %lld written",
			 (long long)n, (long long)e->n);
}

/* Tokens one decoding sequence keeps this step: 1, plus each draft
 * position accepted (alpha of position i given all before it were). */
static int64_t accepted(struct engine *e)
{
	const struct llmsim_serve_spec *sp = &e->cfg->eng.spec;
	int64_t n = 1;
	if (e->qlen <= 1)
		return 1;
	for (int i = 0; i < sp->gamma; i++) {
		double a = sp->alpha[sp->nalpha == 1 ? 0 : i];
		if (llmsim_rng_uniform(&e->accept) >= a)
			break;
		n++;
	}
	return n;
}

static void finish_step(struct engine *e, double now)
{
	int64_t k = 0;
	for (int64_t i = 0; i < e->nrun; i++) {
		int64_t id = e->run[i];
		struct req *q = &e->r[id];
		if (q->chunk) {
			int64_t pending = q->prompt + q->generated - q->cached;
			/* a decode keeps its token and the drafts accepted before
			 * the first one rejected */
			int64_t emit = pending == 1 ? accepted(e) : 1;
			if (emit > q->output - q->generated)
				emit = q->output - q->generated > 1 ? q->output - q->generated : 1;
			q->cached += q->chunk + (pending == 1 ? emit - 1 : 0);
			if (q->chunk == pending) {
				q->generated += emit;
				e->res->generated_tokens += emit;
				if (q->generated == emit)
					q->first_s = now;
			}
			q->chunk = 0;
		}
		if (q->generated >= q->output) {
			q->finish_s = now;
			q->state = R_DONE;
			llmsim_kv_release(&e->kv, &q->kv);
			e->final_tokens -= final_slots(e, q);
			e->res->requests_done++;
			if (e->cfg->concurrency > 0 && e->next_user < e->n) /* its user asks again */
				e->r[e->next_user++].arrival_s = now;
			continue;
		}
		e->run[k++] = id;
	}
	e->nrun = k;
}

/* The engine's prefix cache and speculation: each request's cached prefix
 * (whole blocks, at least one token left to compute), the verify length,
 * the draft's pricing, and the KV room speculation's weights and draft
 * cache take (res->mem adjusted). */
static int engine_features(struct engine *e, struct llmsim_err *err)
{
	const struct llmsim_serve_cfg *cfg = e->cfg;
	const struct llmsim_serve_spec *sp = &cfg->eng.spec;
	struct llmsim_infer_mem *mem = &e->res->mem;
	double f = cfg->eng.prefix_share;
	if (!(f >= 0 && f < 1))
		return llmsim_err_set(err, LLMSIM_EINVAL, "the prefix share must be in [0, 1), not %g", f);
	int64_t blk = cfg->infer.block_size > 0 ? cfg->infer.block_size : 1;
	for (int64_t i = 0; i < e->n && f > 0 && !cfg->prefilled; i++) {
		struct req *q = &e->r[i];
		int64_t hit = (int64_t)(f * (double)q->prompt) / blk * blk;
		q->hit = hit < q->prompt ? hit : (q->prompt - 1) / blk * blk;
	}
	e->qlen = 1;
	if (sp->gamma <= 0)
		return 0;
	struct llmsim_spec_cfg *sc = &e->sim.spec;
	memset(sc, 0, sizeof *sc);
	sc->kind = sp->kind;
	sc->gamma = sp->gamma;
	sc->nalpha = sp->nalpha;
	memcpy(sc->alpha, sp->alpha, sizeof sc->alpha);
	sc->tree = sp->tree > 0 ? sp->tree : sp->gamma + 1;
	sc->target = e->sim.icfg;
	if (sp->kind == LLMSIM_SPEC_DRAFT) {
		if (!sp->draft)
			return llmsim_err_set(err, LLMSIM_EINVAL, "draft-model speculation needs a draft model");
		llmsim_infer_cfg_init(&sc->draft, sp->draft, cfg->infer.gpu);
		sc->draft.weight_dtype = cfg->infer.weight_dtype;
		sc->draft.kv_dtype = cfg->infer.kv_dtype;
		sc->draft.runtime = LLMSIM_RT_GRAPH;
		/* the draft runs on the target's GPUs: same tp if its heads allow */
		if (llmsim_infer_layout(&sc->draft, cfg->infer.tp, cfg->infer.tp, 1, 0, NULL, NULL) &&
		    llmsim_infer_layout(&sc->draft, 1, 1, 1, 0, NULL, err))
			return LLMSIM_EINVAL;
	}
	double extra, draft_kv;
	int rc = llmsim_spec_check(sc, err);
	if (!rc)
		rc = llmsim_spec_extra(sc, &extra, &draft_kv, err);
	if (rc)
		return rc;
	e->qlen = sp->kind == LLMSIM_SPEC_MEDUSA ? sc->tree : sp->gamma + 1;
	llmsim_rng_seed(&e->accept, cfg->seed ^ 0x5851f42d4c957f2dULL);
	/* the heads', modules' or draft's weights take KV room; a draft
	 * model caches its own KV beside the target's for every token */
	mem->kv_capacity_bytes -= extra;
	mem->kv_capacity_tokens = mem->kv_capacity_bytes > 0
					  ? (int64_t)(mem->kv_capacity_bytes /
						      (mem->kv_bytes_per_token + draft_kv))
					  : 0;
	if (mem->kv_capacity_tokens < 1)
		return llmsim_err_set(err, LLMSIM_ENOFIT,
				      "no KV cache is left beside the target's and the speculation's "
				      "weights (%.1f GB of them per GPU)", extra / 1e9);
	return 0;
}

static int engine_init(struct engine *e, const struct llmsim_serve_cfg *cfg,
		       struct llmsim_serve_result *res, struct llmsim_err *err)
{
	memset(e, 0, sizeof *e);
	e->cfg = cfg;
	e->res = res;
	e->n = cfg->requests;
	e->sim.icfg = cfg->infer;
	e->sim.icfg.runtime = LLMSIM_RT_GRAPH;
	e->sim.err = err;
	if (cfg->requests < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "need at least one request");
	if (cfg->requests > LLMSIM_MAX_REQUESTS)
		return llmsim_err_set(err, LLMSIM_EINVAL, "at most %d requests, not %lld",
				      LLMSIM_MAX_REQUESTS, (long long)cfg->requests);
	if (cfg->max_batch < 1 || cfg->max_tokens < 1)
		return llmsim_err_set(err, LLMSIM_EINVAL, "max batch and max tokens must be positive");
	e->r = calloc((size_t)e->n, sizeof *e->r);
	e->wait.v = calloc((size_t)e->n, sizeof *e->wait.v);
	e->run = calloc((size_t)e->n, sizeof *e->run);
	e->chunks = calloc((size_t)e->n, sizeof *e->chunks);
	if (!e->r || !e->wait.v || !e->run || !e->chunks)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory for %lld requests",
				      (long long)e->n);
	e->wait.cap = e->n;
	if (cfg->concurrency < 0)
		return llmsim_err_set(err, LLMSIM_EINVAL, "concurrency must be positive");
	make_requests(cfg, e->r, e->n);
	e->next_user = cfg->concurrency > 0 && cfg->concurrency < e->n ? cfg->concurrency : e->n;
	if (cfg->prefilled)
		for (int64_t i = 0; i < e->n; i++)
			if (e->r[i].output < 2)
				return llmsim_err_set(err, LLMSIM_EINVAL,
						      "a prefilled (decode-only) request needs at least 2 output tokens");
	int64_t longest = 0, max_prompt = 0;
	for (int64_t i = 0; i < e->n; i++) {
		e->max_output = e->r[i].output > e->max_output ? e->r[i].output : e->max_output;
		max_prompt = e->r[i].prompt > max_prompt ? e->r[i].prompt : max_prompt;
		int64_t len = e->r[i].prompt + e->r[i].output;
		longest = len > longest ? len : longest;
	}
	const struct llmsim_model *m = cfg->infer.model;
	if (m->max_seq > 0 && longest > m->max_seq)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "a request of %lld tokens exceeds the %d-token context of %s",
				      (long long)longest, m->max_seq, m->name);
	/* Without chunked prefill a whole prompt (or a recomputed prompt plus
	 * output) must fit one step, as vLLM requires of max_num_batched_tokens. */
	e->budget = cfg->max_tokens;
	if (!cfg->chunked_prefill && e->budget < longest)
		e->budget = longest;
	if (e->budget >= (1 << 30) || cfg->max_batch >= (1 << 30))
		return llmsim_err_set(err, LLMSIM_EINVAL, "step budget and batch must be below 2^30");
	e->sim.icfg.max_step_tokens = e->budget;
	int rc = llmsim_infer_memory(&e->sim.icfg, &res->mem, err);
	if (rc)
		return rc;
	if ((rc = engine_features(e, err)))
		return rc;
	int64_t max_hit = 0;
	for (int64_t i = 0; i < e->n; i++)
		max_hit = e->r[i].hit > max_hit ? e->r[i].hit : max_hit;
	/* one shared prefix, held once (its blocks pinned by the cache) */
	if ((rc = llmsim_kv_init(&e->kv, cfg->kv_alloc, res->mem.kv_capacity_tokens - max_hit,
				 cfg->infer.block_size, err)))
		return rc;
	res->kv_capacity_tokens = e->kv.capacity_tokens;
	if (cfg->kv_alloc == LLMSIM_KV_CONTIGUOUS && cfg->reserve_tokens > 0 &&
	    cfg->reserve_tokens < longest)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "a reservation of %lld tokens is shorter than the longest request (%lld)",
				      (long long)cfg->reserve_tokens, (long long)longest);
	res->reserve_tokens = cfg->kv_alloc != LLMSIM_KV_CONTIGUOUS ? 0
			      : cfg->reserve_tokens > 0 ? cfg->reserve_tokens
							: max_prompt + e->max_output;
	int64_t need = cfg->kv_alloc == LLMSIM_KV_CONTIGUOUS ? res->reserve_tokens : longest;
	need = (need + e->kv.block_size - 1) / e->kv.block_size * e->kv.block_size;
	if (need > e->kv.capacity_tokens)
		return llmsim_err_set(err, LLMSIM_ENOFIT,
				      "a request needs %lld KV tokens but the cache holds %lld per replica",
				      (long long)need, (long long)e->kv.capacity_tokens);
	return 0;
}

static void engine_release(struct engine *e)
{
	free(e->r);
	free(e->wait.v);
	free(e->run);
	free(e->chunks);
	pc_release(&e->sim.pc);
}

static int collect(struct engine *e)
{
	struct llmsim_serve_result *res = e->res;
	double *v = malloc((size_t)e->n * sizeof *v);
	if (!v)
		return LLMSIM_ENOMEM;
	double first = e->r[0].arrival_s, last = 0;
	for (int64_t i = 0; i < e->n; i++) {
		res->prompt_tokens += e->r[i].prompt;
		res->output_tokens += e->r[i].output;
		last = fmax(last, e->r[i].finish_s);
	}
	res->duration_s = last - first;
	if (res->duration_s > 0) {
		res->tokens_per_s = (double)res->output_tokens / res->duration_s;
		res->requests_per_s = (double)e->n / res->duration_s;
	}
	for (int64_t i = 0; i < e->n; i++)
		v[i] = e->r[i].first_s - e->r[i].arrival_s;
	llmsim_pcts_compute(v, e->n, &res->ttft_s);
	int64_t k = 0;
	for (int64_t i = 0; i < e->n; i++)
		if (e->r[i].output > 1)
			v[k++] = (e->r[i].finish_s - e->r[i].first_s) / (double)(e->r[i].output - 1);
	llmsim_pcts_compute(v, k, &res->tpot_s);
	for (int64_t i = 0; i < e->n; i++)
		v[i] = e->r[i].finish_s - e->r[i].arrival_s;
	llmsim_pcts_compute(v, e->n, &res->e2e_s);
	free(v);
	return 0;
}

/* One run of the engine. burst (may be NULL): where its step prices go
 * (its configuration and price cache, the caller's to release), for
 * same_prices. */
static int serve_once(const struct llmsim_serve_cfg *cfg, struct llmsim_serve_result *res,
		      struct sim *burst, struct llmsim_err *err)
{
	struct engine e;
	memset(res, 0, sizeof *res);
	if (cfg->timeline)
		llmsim_tl_reset(cfg->timeline); /* a run priced again starts over */
	int rc = engine_init(&e, cfg, res, err);
	double now = 0, waste_int = 0, alloc_int = 0, used_int = 0, batch_sum = 0;
	int64_t next = 0, steps = 0; /* next request not yet arrived */
	while (!rc && res->requests_done < e.n) {
		if (cfg->progress && !(++steps & 4095))
			cfg->progress(cfg->progress_ctx, res->requests_done, e.n);
		while (next < e.n && e.r[next].arrival_s <= now) {
			e.r[next].state = R_WAITING;
			if (cfg->prefilled) /* its first token came with it */
				e.r[next].first_s = e.r[next].arrival_s;
			ring_push_back(&e.wait, next++);
		}
		int64_t tokens = schedule(&e);
		if (!tokens) {
			if (e.nrun == 0 && e.wait.n == 0 && next < e.n) {
				now = e.r[next].arrival_s; /* idle until the next arrival */
				continue;
			}
			/* cannot happen: engine_init checked that any one request fits */
			rc = llmsim_err_set(err, LLMSIM_ENOFIT,
					    "the scheduler is stuck with %lld waiting and %lld running sequences",
					    (long long)e.wait.n, (long long)e.nrun);
			break;
		}
		int64_t pre_tok, dec_tok;
		struct pval step = price_step(&e, &pre_tok, &dec_tok);
		double t = step.time_s;
		if ((rc = e.sim.rc))
			break;
		/* steps up to the event limit, less the room the requests' spans take */
		struct llmsim_timeline *tl = cfg->timeline;
		if (tl && tl->max_events && tl->nev >= tl->max_events - 2 * cfg->timeline_requests) {
			tl->dropped++;
		} else if (tl) {
			struct llmsim_tl_event *ev =
				llmsim_tl_add(tl, steps_track(tl, &cfg->infer), "step", now, t,
					      "step %lld", (long long)res->steps);
			llmsim_tl_arg(ev, "prefill_tokens", (double)pre_tok);
			llmsim_tl_arg(ev, "decode_tokens", (double)dec_tok);
			llmsim_tl_arg(ev, "running", (double)e.nrun);
			llmsim_tl_arg(ev, "waiting", (double)e.wait.n);
			llmsim_tl_arg(ev, "kv_used_tokens", (double)e.kv.used_tokens);
		}
		res->flops += step.flops;
		res->steps++;
		batch_sum += (double)e.nrun;
		if (e.nrun > res->max_concurrent)
			res->max_concurrent = e.nrun;
		waste_int += t * (double)llmsim_kv_waste_tokens(&e.kv);
		alloc_int += t * (double)e.kv.allocated_tokens;
		used_int += t * (double)e.kv.used_tokens;
		res->busy_s += t;
		now += t;
		finish_step(&e, now);
	}
	if (!rc) {
		res->kv_waste_fraction = alloc_int > 0 ? waste_int / alloc_int : 0;
		res->kv_used_fraction = res->busy_s > 0 ? used_int / res->busy_s / (double)e.kv.capacity_tokens : 0;
		res->mean_batch = res->steps ? batch_sum / (double)res->steps : 0;
		res->priced = e.sim.priced;
		if (collect(&e))
			rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		if (cfg->timeline && !rc) {
			tl_requests(&e);
			llmsim_tl_figure(cfg->timeline, "first_arrival_s", e.r[0].arrival_s);
			llmsim_tl_figure(cfg->timeline, "makespan_s", res->duration_s);
		}
	}
	if (burst && !rc) {
		*burst = e.sim;
		memset(&e.sim.pc, 0, sizeof e.sim.pc); /* handed over */
	}
	engine_release(&e);
	return rc;
}

/* Whether every step part a run priced (burst: its configuration and
 * prices) costs the same in the load (duty, rho): then a run in that load
 * takes every step as that one did (the engine is deterministic in its
 * step prices) and is that run, not to be simulated again. Sets *same. */
static int same_prices(const struct sim *burst, double duty, double rho, int *same,
		       struct llmsim_err *err)
{
	struct sim s = {.icfg = burst->icfg, .err = err};
	s.icfg.load_duty = duty;
	s.icfg.load_rho = rho;
	*same = 1;
	for (size_t i = 0; i < burst->pc.cap && *same && !s.rc; i++) {
		if (!burst->pc.used[i])
			continue;
		const struct pkey *k = &burst->pc.keys[i];
		struct pval p = part(&s, (int)k->tag, k->a, k->b, k->c);
		*same = p.time_s == burst->pc.vals[i].time_s && p.flops == burst->pc.vals[i].flops;
	}
	pc_release(&s.pc);
	return s.rc;
}

int llmsim_serve_run(const struct llmsim_serve_cfg *cfg, struct llmsim_serve_result *res,
		     struct llmsim_err *err)
{
	int rc;
	if (cfg->infer.load == LLMSIM_LOAD_LONE) {
		/* every op a lone kernel at its burst clock */
		struct llmsim_serve_cfg lone = *cfg;
		lone.infer.load_duty = lone.infer.load_rho = 0;
		return serve_once(&lone, res, NULL, err);
	}
	if (cfg->infer.load_duty > 0)
		return serve_once(cfg, res, NULL, err);
	/* at the burst clock first: the load that run puts on the GPU sets
	 * the clock of the run that counts */
	struct sim burst;
	memset(&burst, 0, sizeof burst);
	rc = serve_once(cfg, res, &burst, err);
	double load = rc ? 0 : llmsim_infer_load(cfg->infer.gpu, res->busy_s, res->duration_s);
	struct llmsim_serve_cfg loaded = *cfg;
	loaded.infer.load_duty = load;
	/* one clock for the run: the FLOP rate of the steps it priced, one GPU
	 * (the steps walk every stage of a pipeline in turn: each GPU does 1/pp
	 * of their work) */
	if (load > 0)
		loaded.infer.load_rho =
			llmsim_infer_rho(&cfg->infer, res->flops / cfg->infer.pp, res->busy_s);
	int same = 1;
	if (load > 0 && loaded.infer.load_rho > 0)
		rc = same_prices(&burst, load, loaded.infer.load_rho, &same, err);
	pc_release(&burst.pc);
	if (rc || !(load > 0) || !(loaded.infer.load_rho > 0))
		return rc;
	/* a load under the power limit leaves every price as it was: the run
	 * at the burst clock is the run in the load */
	if (!same && (rc = serve_once(&loaded, res, NULL, err)))
		return rc;
	res->load_duty = load;
	return 0;
}
