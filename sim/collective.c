/*
 * collective.c - the cost description of NCCL-style collectives over the
 * links of the hardware file.
 *
 * `bytes` is the collective's buffer as nccl-tests counts it: the
 * all-reduce buffer, the all-gather output, the reduce-scatter input, the
 * all-to-all send buffer, the sendrecv message. One level of p ranks costs,
 * for each of NCCL's two protocol regimes,
 *   steps * (link latency + the protocol's step latency)
 *   + bytes each rank sends / (link bandwidth * the protocol's fraction)
 * and NCCL's choice is modelled as the cheaper of the two: LL (flags in
 * every 8-byte store: short steps, about half the bandwidth) for small
 * buffers, Simple (bulk copies behind a handshake: long steps, most of the
 * bandwidth) for large ones. Measured on 2 H200s, the switch shows as a
 * knee near 1-2 MB (calib/data/multi_gpu/nccl_tuning.txt lists NCCL's choices).
 * Below a few hundred KB NCCL also runs on fewer channels (channel_share),
 * so the bandwidth term ramps up with the size.
 * with ring (all-reduce 2(p-1) steps sending 2(p-1)/p of the buffer;
 * all-gather, reduce-scatter, all-to-all p-1 steps and (p-1)/p) or tree
 * (all-reduce only: 2 log2 p steps, about 2x the buffer sent per rank, as
 * NCCL's double binary tree). Several nodes: hierarchical, the intra-node
 * part on NVLink and the inter-node part on the network at the per-GPU
 * network rate (all-reduce: reduce-scatter in the node, all-reduce of
 * bytes/g across nodes, all-gather in the node).
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

struct level {
	double bw, lat;  /* per-direction bandwidth, link latency */
};

struct cost {
	double bw_s, lat_s, sent;
	int ll;  /* price with the LL protocol's figures */
};

/* NCCL runs a collective on up to collective_max_channels channels (one
 * block, one ring, each), but gives a channel no less than one pass of its
 * threads over their per-thread minimum (enqueue.cc: while nBytes <
 * nc * nthreads * threadThreshold, nc--): NCCL_MAX_NTHREADS 512 threads x
 * NCCL_LL_THREAD_THRESHOLD 8 B (LL) or NCCL_SIMPLE_THREAD_THRESHOLD 64 B
 * (Simple) of each rank's share. Measured on 2 H200s (nccl_tuning.txt):
 * LL all-reduce on 1 channel at 4-8 KB, 2 at 16 KB, 4 at 32 KB, ... 24
 * from 512 KB: one channel per 4 KiB of each rank's half. A channel moves
 * data at 1 / max_channels of the protocol's bandwidth, so mid-size
 * collectives ramp up with their channel count. */
enum { NCCL_THREADS = 512, NCCL_LL_THREAD_BYTES = 8, NCCL_SIMPLE_THREAD_BYTES = 64 };

static double channel_share(const struct llmsim_gpu *gpu, int ll, double share)
{
	/* clamped before rounding: sim_floor and sim_ceil go through int64_t */
	double maxc = sim_max(1, sim_floor(sim_min(gpu->eff[LLMSIM_EFF_COLL_CHANNELS], 1 << 20)));
	double per = NCCL_THREADS * (double)(ll ? NCCL_LL_THREAD_BYTES : NCCL_SIMPLE_THREAD_BYTES);
	return sim_max(1, sim_ceil(sim_min(share / per, maxc))) / maxc;
}

/* steps ring steps sending `bytes` per rank in all; `share` is each rank's
 * share of the buffer, which sets the channels NCCL uses */
static void add(const struct llmsim_gpu *gpu, struct cost *c, const struct level *l,
		double steps, double bytes, double share)
{
	double step = c->ll ? gpu->eff[LLMSIM_EFF_COLL_LL_LATENCY] : gpu->eff[LLMSIM_EFF_COLL_LATENCY];
	double frac = c->ll ? gpu->eff[LLMSIM_EFF_COLL_LL_BW] : gpu->eff[LLMSIM_EFF_COLL_BW];
	c->lat_s += steps * (l->lat + step);
	c->bw_s += bytes / (l->bw * frac * channel_share(gpu, c->ll, share));
	c->sent += bytes;
}

/* one collective over p ranks of one level */
static void flat(const struct llmsim_gpu *gpu, enum llmsim_coll_kind kind, int tree, double p,
		 double S, const struct level *l, struct cost *c)
{
	if (p <= 1)
		return;
	switch (kind) {
	case LLMSIM_COLL_ALLREDUCE:
		if (tree)
			add(gpu, c, l, 2 * ceil(log2(p)), 2 * S, S / p);
		else
			add(gpu, c, l, 2 * (p - 1), 2 * (p - 1) / p * S, S / p);
		break;
	case LLMSIM_COLL_ALLGATHER:
	case LLMSIM_COLL_REDUCESCATTER:
	case LLMSIM_COLL_ALLTOALL:
		add(gpu, c, l, p - 1, (p - 1) / p * S, S / p);
		break;
	case LLMSIM_COLL_SENDRECV:
		add(gpu, c, l, 1, S, S);
		break;
	default:
		break;
	}
}

static void hier(const struct llmsim_gpu *gpu, enum llmsim_coll_kind kind, int tree, double P,
		 double n, double S, const struct level *in, const struct level *out, struct cost *c)
{
	double g = P / n;
	switch (kind) {
	case LLMSIM_COLL_ALLREDUCE:
		flat(gpu, LLMSIM_COLL_REDUCESCATTER, 0, g, S, in, c);
		flat(gpu, LLMSIM_COLL_ALLREDUCE, tree, n, S / g, out, c);
		flat(gpu, LLMSIM_COLL_ALLGATHER, 0, g, S, in, c);
		break;
	case LLMSIM_COLL_ALLGATHER:
		flat(gpu, LLMSIM_COLL_ALLGATHER, 0, n, S / g, out, c);
		flat(gpu, LLMSIM_COLL_ALLGATHER, 0, g, S, in, c);
		break;
	case LLMSIM_COLL_REDUCESCATTER:
		flat(gpu, LLMSIM_COLL_REDUCESCATTER, 0, g, S, in, c);
		flat(gpu, LLMSIM_COLL_REDUCESCATTER, 0, n, S / g, out, c);
		break;
	case LLMSIM_COLL_ALLTOALL: {
		/* both parts at once: the slower sets the time */
		struct cost a = {.ll = c->ll}, b = {.ll = c->ll};
		add(gpu, &a, in, g - 1, (g - 1) / P * S, S / P);
		add(gpu, &b, out, P - g, (P - g) / P * S, S / P);
		c->bw_s += fmax(a.bw_s, b.bw_s);
		c->lat_s += fmax(a.lat_s, b.lat_s);
		c->sent += a.sent + b.sent;
		break;
	}
	case LLMSIM_COLL_SENDRECV:
		add(gpu, c, out, 1, S, S);
		break;
	default:
		break;
	}
}

int sim_collective(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		   struct llmsim_pred *p, struct llmsim_err *err)
{
	const __typeof__(op->u.coll) *k = &op->u.coll;
	int nodes = k->nodes ? k->nodes : 1;
	if ((unsigned)k->kind >= LLMSIM_COLL_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "collective: unknown kind (%d)",
				      (int)k->kind);
	if ((unsigned)k->algo > LLMSIM_ALGO_TREE)
		return llmsim_err_set(err, LLMSIM_EINVAL, "collective: unknown algo (%d)",
				      (int)k->algo);
	if (!(k->bytes > 0) || !isfinite(k->bytes) || k->gpus <= 0 || nodes <= 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "collective sizes must be positive (bytes=%g gpus=%d nodes=%d)",
				      k->bytes, k->gpus, nodes);
	if (k->bytes > 0x1p63)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "collective bytes (%g) overflow a 64-bit count: too large",
				      k->bytes);
	if (k->gpus % nodes)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "gpus (%d) must be divisible by nodes (%d)", k->gpus, nodes);
	if (gpu->gpus_per_node > 0 && k->gpus / nodes > gpu->gpus_per_node)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%d gpus per node exceed the %d of a %s node",
				      k->gpus / nodes, gpu->gpus_per_node, gpu->name);
	if (k->algo == LLMSIM_ALGO_TREE && k->kind != LLMSIM_COLL_ALLREDUCE)
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "collective: the tree algorithm is for allreduce only, not %s",
				      llmsim_coll_kind_name(k->kind));
	struct level in = {gpu->intra_node_bytes_per_s, gpu->intra_node_latency_s};
	struct level out = {gpu->inter_node_bytes_per_s, gpu->inter_node_latency_s};
	double P = k->gpus, S = k->bytes;
	int multi = nodes > 1, intra = k->gpus / nodes > 1;
	if (P > 1 && ((intra || (!multi && k->kind == LLMSIM_COLL_SENDRECV)) && !(in.bw > 0)))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED, "collective: %s has no intra-node link",
				      gpu->name);
	if (multi && !(out.bw > 0))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "collective: %s has no inter-node network rate", gpu->name);

	struct cost best = {0};
	int tried = 0;
	for (int v = 0; v < 4; v++) {
		int tree = v & 1;
		if ((tree && k->algo == LLMSIM_ALGO_RING) || (!tree && k->algo == LLMSIM_ALGO_TREE) ||
		    (tree && k->kind != LLMSIM_COLL_ALLREDUCE))
			continue;
		struct cost c = {.ll = v >> 1};
		if (k->kind == LLMSIM_COLL_SENDRECV && !multi)
			add(gpu, &c, &in, 1, S, S);
		else if (!multi)
			flat(gpu, k->kind, tree, P, S, &in, &c);
		else
			hier(gpu, k->kind, tree, P, nodes, S, &in, &out, &c);
		if (!tried || c.bw_s + c.lat_s < best.bw_s + best.lat_s)
			best = c;
		tried = 1;
	}
	double e = llmsim_dtype_bytes(op->dtype) > 0 ? llmsim_dtype_bytes(op->dtype) : 2;
	if (k->kind == LLMSIM_COLL_ALLREDUCE || k->kind == LLMSIM_COLL_REDUCESCATTER)
		p->flops = (P - 1) / P * S / e; /* one add per element received */
	p->link_bytes = best.sent;
	p->hbm_read_bytes = S;
	p->hbm_write_bytes = S;
	p->hbm_bytes = 2 * S;
	p->intensity_flops_per_byte = p->flops / p->hbm_bytes;
	if (P <= 1 && k->kind != LLMSIM_COLL_SENDRECV) {
		/* a group of one: nothing to do, no kernel */
		p->hbm_read_bytes = p->hbm_write_bytes = p->hbm_bytes = 0;
		p->flops = 0;
		p->intensity_flops_per_byte = 0;
		p->bound = LLMSIM_BOUND_LAUNCH;
		return 0;
	}
	p->kernels = 1;
	p->memory_s = best.bw_s;  /* link transfer time */
	p->latency_s = best.lat_s;
	/* every NCCL kernel pays a fixed start (launch, proxy, handshake with
	 * the peers) whatever the size and step count: on 2 H200s all five
	 * collectives bottom out at the same ~9-10 us */
	p->overhead_s = gpu->eff[LLMSIM_EFF_COLL_FIXED];
	p->time_s = best.bw_s + best.lat_s + p->overhead_s;
	p->bound = best.bw_s >= best.lat_s ? LLMSIM_BOUND_LINK : LLMSIM_BOUND_LATENCY;
	if (p->overhead_s > best.bw_s && p->overhead_s > best.lat_s)
		p->bound = LLMSIM_BOUND_LAUNCH;
	p->kernel_time_s[0] = p->time_s;
	p->kernel_bound[0] = p->bound;
	return 0;
}
