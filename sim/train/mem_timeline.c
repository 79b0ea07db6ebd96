/*
 * mem_timeline.c - the torch engine's memory as PyTorch's caching
 * allocator sees it: every tensor of the step (sim/graph_mem.h) allocated
 * and freed in program order (train_torch_walk), through a model of
 * c10/cuda/CUDACachingAllocator.cpp, for torch.cuda.max_memory_allocated
 * (the peak of the allocated blocks) and max_memory_reserved (the
 * segments it took from cudaMalloc).
 *
 * What lives when:
 *  - the parameters (P), from the model's construction on the GPU, in
 *    module order, with the RoPE cos/sin buffers; the batch's ids and
 *    labels (int64);
 *  - Adam's exp_avg and exp_avg_sq (zeros_like of each parameter) and its
 *    step counter (a float32 scalar with fused=True), created by the first
 *    optimizer step: present in every timed step;
 *  - two cuBLAS workspaces taken from the allocator at the first GEMM of
 *    each thread that runs GEMMs (the forward's, and autograd's backward
 *    thread: a handle per thread, a workspace per handle and stream), 32
 *    MiB each on Hopper and later, 8.125 MiB before
 *    (CublasHandlePool.cpp: ":4096:8" / ":4096:2:16:8"); cuBLASLt shares
 *    them;
 *  - the tensors of each layer as graph_mem.h describes them; under
 *    torch.utils.checkpoint a layer's forward keeps only its input (and
 *    autocast's cache its weight copies, until the forward leaves
 *    autocast), its recompute allocates them again before its backward;
 *  - gradients (set_to_none: none exist before backward) from their
 *    weight gradient to zero_grad after the optimizer step.
 *
 * The allocator (defaults: no expandable segments, no max_split_size):
 * sizes rounded up to 512 B; requests up to 1 MiB from the small pool,
 * whose segments are 2 MiB; larger ones from the large pool, segments of
 * 20 MiB for requests under 10 MiB, else the request rounded up to 2 MiB;
 * the best fit (smallest free block that holds it, then the lowest
 * address) from the pool's free blocks, else a new segment; a block is
 * split when what remains is at least 512 B (small pool) or more than 1
 * MiB (large), the rest counted as allocated with it; freed blocks merge
 * with free neighbours of their segment; segments are never returned
 * (no empty_cache). The step is run three times (the measurement's warm-up
 * steps, then a timed one): the peak of the third's allocated bytes, and
 * the segments then held.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "train_int.h"

#define MIB (1024.0 * 1024.0)
enum { MIN_BLOCK = 512 };
#define SMALL_SIZE (1.0 * MIB)
#define SMALL_BUFFER (2.0 * MIB)
#define LARGE_BUFFER (20.0 * MIB)
#define MIN_LARGE_ALLOC (10.0 * MIB)
#define ROUND_LARGE (2.0 * MIB)

/* ---- the caching allocator ---- */

static int fl_less(const struct train_alloc *a, int x, int y)
{
	const struct train_alloc_blk *p = &a->b[x], *q = &a->b[y];
	return p->size < q->size || (p->size == q->size && p->addr < q->addr);
}

static int fl_find(const struct train_alloc *a, int pool, int x)
{
	int lo = 0, hi = a->nfl[pool];
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (fl_less(a, a->fl[pool][mid], x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int fl_insert(struct train_alloc *a, int x)
{
	int pool = a->b[x].small;
	if (a->nfl[pool] == a->capfl[pool]) {
		int cap = a->capfl[pool] ? 2 * a->capfl[pool] : 256;
		int *p = realloc(a->fl[pool], sizeof *p * (size_t)cap);
		if (!p)
			return a->oom = 1, -1;
		a->fl[pool] = p;
		a->capfl[pool] = cap;
	}
	int at = fl_find(a, pool, x);
	memmove(a->fl[pool] + at + 1, a->fl[pool] + at, sizeof(int) * (size_t)(a->nfl[pool] - at));
	a->fl[pool][at] = x;
	a->nfl[pool]++;
	a->b[x].free = 1;
	return 0;
}

static void fl_remove(struct train_alloc *a, int x)
{
	int pool = a->b[x].small, at = fl_find(a, pool, x);
	LLMSIM_ASSERT(at < a->nfl[pool] && a->fl[pool][at] == x);
	memmove(a->fl[pool] + at, a->fl[pool] + at + 1,
		sizeof(int) * (size_t)(a->nfl[pool] - at - 1));
	a->nfl[pool]--;
	a->b[x].free = 0;
}

static int new_blk(struct train_alloc *a)
{
	if (a->nspare)
		return a->spare[--a->nspare];
	if (a->n == a->cap) {
		int cap = a->cap ? 2 * a->cap : 1024;
		struct train_alloc_blk *p = realloc(a->b, sizeof *p * (size_t)cap);
		int *s = realloc(a->spare, sizeof *s * (size_t)cap);
		if (p)
			a->b = p;
		if (s)
			a->spare = s;
		if (!p || !s)
			return a->oom = 1, -1;
		a->cap = cap;
	}
	return a->n++;
}

int train_alloc_malloc(struct train_alloc *a, double bytes)
{
	double size = bytes < MIN_BLOCK ? MIN_BLOCK : ceil(bytes / MIN_BLOCK) * MIN_BLOCK;
	int small = size <= SMALL_SIZE;
	/* best fit: the first free block of the pool not smaller than size */
	int x = -1, lo = 0, hi = a->nfl[small];
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (a->b[a->fl[small][mid]].size < size)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < a->nfl[small]) {
		x = a->fl[small][lo];
		fl_remove(a, x);
	} else {
		double seg = small ? SMALL_BUFFER
			     : size < MIN_LARGE_ALLOC ? LARGE_BUFFER
						      : ceil(size / ROUND_LARGE) * ROUND_LARGE;
		if ((x = new_blk(a)) < 0)
			return -1;
		a->b[x] = (struct train_alloc_blk){.size = seg, .addr = a->top, .prev = -1, .next = -1,
				       .small = small};
		a->top += seg;
		a->reserved += seg;
	}
	double rest = a->b[x].size - size;
	if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) {
		int y = new_blk(a);
		if (y < 0)
			return -1;
		struct train_alloc_blk *p = &a->b[x];
		a->b[y] = (struct train_alloc_blk){.size = rest, .addr = p->addr + size, .prev = x,
				       .next = p->next, .small = small};
		if (p->next >= 0)
			a->b[p->next].prev = y;
		p->next = y;
		p->size = size;
		if (fl_insert(a, y))
			return -1;
	}
	a->allocated += a->b[x].size;
	if (a->allocated > a->peak)
		a->peak = a->allocated;
	return x;
}

/* x takes in y, the block after it in its segment (neither free) */
static void absorb(struct train_alloc *a, int x, int y)
{
	a->b[x].size += a->b[y].size;
	a->b[x].next = a->b[y].next;
	if (a->b[y].next >= 0)
		a->b[a->b[y].next].prev = x;
	a->b[y].dead = 1;
	a->spare[a->nspare++] = y;
}

void train_alloc_free(struct train_alloc *a, int x)
{
	if (x < 0)
		return;
	a->allocated -= a->b[x].size;
	int n = a->b[x].next, p = a->b[x].prev;
	if (n >= 0 && a->b[n].free) {
		fl_remove(a, n);
		absorb(a, x, n);
	}
	if (p >= 0 && a->b[p].free) {
		fl_remove(a, p);
		absorb(a, p, x);
		x = p;
	}
	fl_insert(a, x);
}

void train_alloc_release(struct train_alloc *a)
{
	free(a->b);
	free(a->spare);
	free(a->fl[0]);
	free(a->fl[1]);
}

/* ---- the step's tensors ---- */

struct tl {
	const struct llmsim_graph *g;
	const struct llmsim_graph_mem *mem;
	const struct llmsim_model *m;
	int layers, full, step;   /* step: 0, 1, 2 (the timed one) */
	double eP;
	int *h;                   /* live tensors' blocks: [instance][tensor], -1 none;
				   * instance 0 PRE, 1..layers the layers, layers+1 POST */
	int *stream;              /* blocks of the stream into instance i (1..layers+1) */
	int grad_stream;
	int ws[2];                /* the cuBLAS workspaces */
	double ws_bytes;
	int *grads;               /* GRAD tensors' blocks, in creation order */
	int ngrads, capgrads;
	double *grad_bytes;
	int *state;               /* the optimizer's blocks (3 per parameter) */
	int nstate;
	double *pnumel;
	int np;
	/* tensor bytes live, by category, and their value at the allocator's peak */
	double live[LLMSIM_TORCH_MEM_COUNT], at_peak[LLMSIM_TORCH_MEM_COUNT];
	double peak;              /* the allocator's peak in the timed step */
	char peak_at[64];
	int peak_layer, peak_recompute;
	struct train_alloc a;
};

static int inst(const struct tl *t, const struct train_torch_at *at)
{
	return at->sec == LLMSIM_SEC_PRE ? 0 : at->sec == LLMSIM_SEC_POST ? t->layers + 1
									   : at->layer + 1;
}

static int *slot(struct tl *t, int instance, int k)
{
	return &t->h[(size_t)instance * LLMSIM_GRAPH_MAX_TENSORS + k];
}

static void note_peak(struct tl *t, const struct train_torch_at *at)
{
	if (t->step != 2 || !(t->a.allocated > t->peak))
		return;
	t->peak = t->a.allocated;
	memcpy(t->at_peak, t->live, sizeof t->live);
	if (at && at->node >= 0) {
		const struct llmsim_gnode *n = &t->g->node[at->node];
		size_t len = strlen(n->name);
		if (len >= sizeof t->peak_at)
			len = sizeof t->peak_at - 1;
		memcpy(t->peak_at, n->name, len);
		t->peak_at[len] = 0;
		t->peak_layer = at->sec == LLMSIM_SEC_DENSE ? at->layer : -1;
		t->peak_recompute = at->recompute;
	} else {
		strcpy(t->peak_at, "optimizer.step");
		t->peak_layer = -1;
		t->peak_recompute = 0;
	}
}

static int take(struct tl *t, double bytes, int cat)
{
	int x = train_alloc_malloc(&t->a, bytes);
	t->live[cat] += bytes;
	return x;
}

static void give(struct tl *t, int *x, double bytes, int cat)
{
	if (*x < 0)
		return;
	train_alloc_free(&t->a, *x);
	*x = -1;
	t->live[cat] -= bytes;
}

static int tensor_cat(const struct llmsim_gtensor *x)
{
	return x->kind == LLMSIM_GT_GRAD ? LLMSIM_TORCH_MEM_GRADS
	       : x->kind == LLMSIM_GT_WORK ? LLMSIM_TORCH_MEM_WORKSPACE
					   : LLMSIM_TORCH_MEM_ACTIVATIONS;
}

static void grad_keep(struct tl *t, int x, double bytes)
{
	if (t->ngrads == t->capgrads) {
		int cap = t->capgrads ? 2 * t->capgrads : 256;
		int *p = realloc(t->grads, sizeof *p * (size_t)cap);
		double *q = realloc(t->grad_bytes, sizeof *q * (size_t)cap);
		if (p)
			t->grads = p;
		if (q)
			t->grad_bytes = q;
		if (!p || !q) {
			t->a.oom = 1;
			return;
		}
		t->capgrads = cap;
	}
	t->grads[t->ngrads] = x;
	t->grad_bytes[t->ngrads++] = bytes;
}

/* whether tensor x lives past the forward (its death a backward node) */
static int saved(const struct tl *t, const struct llmsim_gtensor *x)
{
	return x->dies >= 0 && t->g->node[x->dies].phase != LLMSIM_PH_FWD;
}

static void node_at(struct tl *t, const struct train_torch_at *at)
{
	const struct llmsim_graph_mem *mem = t->mem;
	const struct llmsim_gsec_io *io = &mem->io[at->sec];
	const struct llmsim_gnode *n = &t->g->node[at->node];
	int i = inst(t, at);
	/* the first GEMM of each thread takes its cuBLAS workspace */
	int bwd = n->phase != LLMSIM_PH_FWD;
	if (n->op.kind == LLMSIM_OP_GEMM && t->ws[bwd] < 0)
		t->ws[bwd] = take(t, t->ws_bytes, LLMSIM_TORCH_MEM_WORKSPACE);
	/* what the node allocates */
	for (int k = 0; k < mem->n; k++) {
		const struct llmsim_gtensor *x = &mem->t[k];
		if (mem->t[k].born != at->node || !(x->bytes > 0))
			continue;
		*slot(t, i, k) = take(t, x->bytes, tensor_cat(x));
	}
	if (at->node == io->out_born && !at->recompute)
		t->stream[i + 1] = take(t, mem->stream_bytes, LLMSIM_TORCH_MEM_ACTIVATIONS);
	if (at->node == io->grad_in_born)
		t->grad_stream = take(t, mem->stream_bytes, LLMSIM_TORCH_MEM_ACTIVATIONS);
	note_peak(t, at);
	/* what it frees */
	for (int k = 0; k < mem->n; k++) {
		const struct llmsim_gtensor *x = &mem->t[k];
		int *h = slot(t, i, k);
		if (*h < 0)
			continue;
		int cat = tensor_cat(x);
		if (x->kind == LLMSIM_GT_WORK && x->born == at->node) {
			give(t, h, x->bytes, cat);
		} else if (x->kind == LLMSIM_GT_GRAD && x->born == at->node) {
			/* a first micro-batch's gradient is the .grad; a later
			 * one's is added into it and goes */
			if (at->microbatch == 0) {
				grad_keep(t, *h, x->bytes);
				*h = -1;
			} else {
				give(t, h, x->bytes, cat);
			}
		} else if (x->dies == at->node) {
			give(t, h, x->bytes, cat);
		}
	}
	if (at->node == io->in_dies)
		give(t, &t->stream[i], mem->stream_bytes, LLMSIM_TORCH_MEM_ACTIVATIONS);
	if (at->node == io->grad_out_dies)
		give(t, &t->grad_stream, mem->stream_bytes, LLMSIM_TORCH_MEM_ACTIVATIONS);
}

static void optimizer_at(struct tl *t)
{
	/* the first step creates Adam's state, parameter by parameter */
	if (!t->nstate) {
		for (int p = 0; p < t->np; p++) {
			t->state[t->nstate++] = take(t, 4, LLMSIM_TORCH_MEM_OPTIMIZER);
			for (int k = 0; k < 2; k++)
				t->state[t->nstate++] =
					take(t, t->pnumel[p] * t->eP, LLMSIM_TORCH_MEM_OPTIMIZER);
		}
	}
	note_peak(t, NULL);
	/* zero_grad(set_to_none=True): parameter order (the reverse of
	 * backward's) */
	for (int k = t->ngrads - 1; k >= 0; k--)
		give(t, &t->grads[k], t->grad_bytes[k], LLMSIM_TORCH_MEM_GRADS);
	t->ngrads = 0;
}

static void tl_at(const struct train_torch_at *at, void *arg)
{
	struct tl *t = arg;
	const struct llmsim_graph_mem *mem = t->mem;
	switch (at->ev) {
	case TRAIN_AT_NODE:
		node_at(t, at);
		break;
	case TRAIN_AT_LAYER_FWD_END:
	case TRAIN_AT_RECOMPUTE_END:
		/* checkpoint: a layer's forward keeps nothing it saved but its
		 * weight copies (autocast's cache); its recompute frees what
		 * the forward nodes it skipped would have */
		for (int k = 0; k < mem->n; k++) {
			const struct llmsim_gtensor *x = &mem->t[k];
			int *h = slot(t, at->layer + 1, k);
			if (*h < 0 || !t->full)
				continue;
			if (at->ev == TRAIN_AT_LAYER_FWD_END ? saved(t, x) && x->kind != LLMSIM_GT_WCAST
							     : !saved(t, x))
				give(t, h, x->bytes, tensor_cat(x));
		}
		break;
	case TRAIN_AT_FWD_END:
		/* autocast's cache goes: weight copies nothing saved */
		for (int l = 1; t->full && l <= t->layers; l++)
			for (int k = 0; k < mem->n; k++)
				if (mem->t[k].kind == LLMSIM_GT_WCAST)
					give(t, slot(t, l, k), mem->t[k].bytes,
					     LLMSIM_TORCH_MEM_ACTIVATIONS);
		break;
	case TRAIN_AT_BWD_END:
		break;
	case TRAIN_AT_STEP_END:
		optimizer_at(t);
		break;
	}
}

int train_torch_memory(struct llmsim_train_ctx *ctx, const struct llmsim_train_cfg *c,
		       int64_t microbatches, struct llmsim_train_result *r,
		       struct llmsim_err *err)
{
	const struct llmsim_model *m = &ctx->model;
	const struct llmsim_gpu *gpu = &ctx->gpu;
	struct tl t = {.g = &ctx->graph, .mem = &ctx->mem, .m = m, .layers = m->layers,
		       .full = c->recompute == LLMSIM_RECOMP_FULL, .eP = 4, .grad_stream = -1,
		       .ws = {-1, -1}, .peak_layer = -1};
	int ninst = t.layers + 2, rc = 0;
	t.np = train_torch_params(m, NULL, 0);
	t.h = malloc(sizeof *t.h * (size_t)ninst * LLMSIM_GRAPH_MAX_TENSORS);
	t.stream = malloc(sizeof *t.stream * (size_t)(ninst + 1));
	t.pnumel = malloc(sizeof *t.pnumel * (size_t)(t.np + 1));
	t.state = malloc(sizeof *t.state * (size_t)(3 * t.np + 1));
	if (!t.h || !t.stream || !t.pnumel || !t.state) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < (size_t)ninst * LLMSIM_GRAPH_MAX_TENSORS; k++)
		t.h[k] = -1;
	for (int k = 0; k <= ninst; k++)
		t.stream[k] = -1;
	train_torch_params(m, t.pnumel, t.np);
	/* Hopper and later: 32 MiB (by the arch names the hardware files use) */
	int big = !strcmp(gpu->arch, "hopper") || !strcmp(gpu->arch, "blackwell");
	t.ws_bytes = big ? 32 * MIB : 4096 * 1024.0 * 2 + 16 * 1024.0 * 8;

	/* the model built on the GPU: its parameters (the RoPE buffers after
	 * the embedding), then the batch */
	double params = 0;
	for (int p = 0; p < t.np; p++) {
		take(&t, t.pnumel[p] * t.eP, LLMSIM_TORCH_MEM_PARAMS);
		params += t.pnumel[p] * t.eP;
		if (p == 0 && m->position == LLMSIM_POS_ROPE)
			for (int k = 0; k < 2; k++)
				take(&t, (double)c->seq * (m->head_dim / 2) * 4,
				     LLMSIM_TORCH_MEM_PARAMS);
	}
	for (int k = 0; k < 2; k++)
		take(&t, (double)c->micro_batch * c->seq * 8, LLMSIM_TORCH_MEM_PARAMS);
	for (t.step = 0; t.step < 3 && !t.a.oom; t.step++) {
		if (t.step == 2) { /* reset_peak_memory_stats(): the peak from here */
			t.peak = t.a.allocated;
			memcpy(t.at_peak, t.live, sizeof t.live);
		}
		train_torch_walk(&ctx->graph, &ctx->mem, t.layers, microbatches, t.full, tl_at, &t);
	}
	if (t.a.oom) {
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		goto out;
	}
	struct llmsim_train_torch *o = &r->torch;
	o->peak_allocated_bytes = t.peak;
	o->reserved_bytes = t.a.reserved;
	o->device_bytes = gpu->hbm_bytes;
	memcpy(o->at_peak_bytes, t.at_peak, sizeof t.at_peak);
	memcpy(o->peak_at, t.peak_at, sizeof o->peak_at);
	o->peak_layer = t.peak_layer;
	o->peak_recompute = t.peak_recompute;

	struct llmsim_train_mem *mm = &r->mem;
	double trained = 0;
	for (int p = 0; p < t.np; p++)
		trained += t.pnumel[p];
	mm->params_per_gpu = mm->trained_params_per_gpu = trained;
	mm->weights_bytes = t.at_peak[LLMSIM_TORCH_MEM_PARAMS];
	mm->optimizer_bytes = t.at_peak[LLMSIM_TORCH_MEM_OPTIMIZER];
	mm->grads_bytes = t.at_peak[LLMSIM_TORCH_MEM_GRADS];
	mm->activations_bytes = t.at_peak[LLMSIM_TORCH_MEM_ACTIVATIONS];
	mm->other_bytes = t.at_peak[LLMSIM_TORCH_MEM_WORKSPACE];
	/* what the GPU must hold: the allocator's segments and the CUDA
	 * context beside them */
	mm->fragmentation_bytes = t.a.reserved - t.peak;
	mm->total_bytes = t.a.reserved + TRAIN_CONTEXT_BYTES;
	mm->hbm_bytes = gpu->hbm_bytes;
	mm->act_in_flight_layers = t.full ? 1 : t.layers;
	(void)params;
out:
	train_alloc_release(&t.a);
	free(t.h);
	free(t.stream);
	free(t.pnumel);
	free(t.state);
	free(t.grads);
	free(t.grad_bytes);
	return rc;
}
