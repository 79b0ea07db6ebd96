/*
 * collective.c - the cost description of NCCL-style collectives over the
 * links of the hardware file.
 *
 * `bytes` is the collective's buffer as nccl-tests counts it: the
 * all-reduce buffer, the all-gather output, the reduce-scatter input, the
 * all-to-all send buffer, the sendrecv message. Within a node the model
 * follows NCCL (2.28) in two separate parts:
 *
 * 1. Which protocol runs is NCCL's decision, made with NCCL's own cost
 *    model (src/graph/tuning.cc), not with the real times: for each of
 *    ring/tree x LL/LL128/Simple, baseLat + steps x hwLat (NVLink) +
 *    bytes / bus bandwidth, the bus bandwidth being NCCL's figure of the
 *    link (collective_nccl_link_fraction) capped per protocol (LL at
 *    llMaxBw = collective_ll_max_bytes_per_s, LL128 at 0.92). NCCL's
 *    model is off where it matters: on 2 H200s it picks Simple from 2 MB
 *    although LL would still be faster there (31 us against ~24).
 *    Point-to-point (sendrecv, all-to-all) uses LL up to 16 KiB per peer
 *    (NCCL_P2P_LL_THRESHOLD), Simple above.
 * 2. What that choice costs, from physical parameters:
 *      fixed start + steps x (link latency + the protocol's step latency)
 *      + remote bytes / (link rate x the protocol's fraction, or fewer
 *        channels' worth)
 *      + local bytes / (HBM rate x collective_local_bw_fraction / 2)
 *      + the lag of the slowest channel (Simple, LL128).
 *    A ring collective's channel runs its primitives one after the other
 *    on the same threads: for each block, the sends (remote writes over
 *    the link) and, at the end of the ring, the copy of the received
 *    block out of NCCL's staging buffer into the output (a local copy).
 *    All-reduce sends 2(p-1)/p of the buffer and copies 1/p; all-gather
 *    and reduce-scatter send (p-1)/p and copy 1/p, so per byte sent they
 *    are slower than all-reduce (measured on 2 H200s: 287 against 345
 *    GB/s); the copy fades with more ranks. Point-to-point runs its
 *    receives on their own warps, beside the sends: no local term, and
 *    its step costs LL's whatever the protocol. LL polls a flag in every 8-byte store,
 *    and its channels are bound by that, 1/max of LL's rate each, local
 *    copies included. A Simple or LL128 channel's block pushes at most
 *    its Little's-law rate, which binds when few channels run (a 1 MB
 *    sendrecv on 2).
 *    A large Simple collective ends with its slowest channel: a channel's
 *    progress through NCCL's 512 KiB steps (4 MiB Simple buffer / 8
 *    steps) scatters (collective_straggle_fraction) like a random walk,
 *    its lag growing as the square root of its steps, and the slowest of
 *    n channels is sqrt(2 ln n) deviations late. This is what makes the
 *    bus bandwidth keep rising from 4 MB to 2 GB on 2 H200s (all-gather
 *    218 -> 284 GB/s) where a latency would have faded.
 *
 * Ring: all-reduce 2(p-1) steps, all-gather and reduce-scatter p-1; tree
 * (all-reduce only) 2 log2 p steps sending 2x the buffer per rank, as
 * NCCL's double binary tree. Point-to-point: one exchange per peer. Small
 * collectives run on fewer channels (channels(), bulk_channels()), so the
 * bandwidth ramps up with the size. A "node" here is one NVLink domain
 * (the hardware file's nvlink_domain_gpus: a node, or all 72 GPUs of a
 * GB200 NVL72 rack, whose NVLink switches join 18 nodes at the same
 * per-GPU rate), so a group inside one domain is one level of NVLink
 * whatever nodes it crosses. Several domains: hierarchical, the
 * intra-domain part on NVLink and the rest on the network at the
 * per-GPU network rate (all-reduce: reduce-scatter in the domain,
 * all-reduce of bytes/g across domains, all-gather in the domain); the protocol is then
 * the cheapest of the modelled ones (NCCL's network terms are not
 * mirrored). One rank: NCCL copies the send buffer to the receive buffer
 * (out of place, as nccl-tests and the calibration run it).
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

enum proto { PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_COUNT };

struct level {
	double bytes_per_s, lat_s; /* per-direction bandwidth, link latency */
	double cta_bytes_per_s;	   /* what one channel's block can push on its own */
};

struct cost {
	double bw_s, lat_s, sent;
	enum proto proto;
	int p2p; /* point-to-point: one exchange per peer, no ring handshake */
};

/* NCCL runs a collective on up to collective_max_channels channels (one
 * block, one ring, each), but gives a channel no less than one pass of its
 * threads over their per-thread minimum (enqueue.cc: while nBytes <
 * nc * nthreads * threadThreshold, nc--): NCCL_MAX_NTHREADS 512 threads x
 * NCCL_LL_THREAD_THRESHOLD 8 B (LL) or NCCL_SIMPLE_THREAD_THRESHOLD 64 B
 * (Simple, LL128) of each rank's share. Measured on 2 H200s (nccl_tuning.txt):
 * LL all-reduce on 1 channel at 4-8 KB, 2 at 16 KB, 4 at 32 KB, ... 24
 * from 512 KB: one channel per 4 KiB of each rank's half. (LL128's own
 * threshold and 640 threads are taken as Simple's.) */
enum { NCCL_THREADS = 512, NCCL_LL_THREAD_BYTES = 8, NCCL_SIMPLE_THREAD_BYTES = 64 };

/* NCCL's Simple pipeline step: NCCL_BUFFSIZE 4 MiB per channel / NCCL_STEPS 8 */
#define NCCL_STEP_BYTES 524288.0
/* NCCL_P2P_LL_THRESHOLD: point-to-point messages up to this use LL */
#define NCCL_P2P_LL_BYTES 16384.0
/* LL128 lines: 128 bytes of which 120 carry data (NCCL_LL128_DATAELEMS) */
#define LL128_DATA_FRACTION (120.0 / 128.0)

static double max_channels(const struct llmsim_gpu *gpu)
{
	/* clamped before rounding: sim_floor and sim_ceil go through int64_t */
	return sim_max(1, sim_floor(sim_min(gpu->param[LLMSIM_PARAM_COLLECTIVE_MAX_CHANNELS],
					    1 << 20)));
}

/* channels NCCL runs a rank's `share` on */
static double channels(const struct llmsim_gpu *gpu, enum proto pr, double share)
{
	double per = NCCL_THREADS *
		     (double)(pr == PROTO_LL ? NCCL_LL_THREAD_BYTES : NCCL_SIMPLE_THREAD_BYTES);
	return sim_max(1, sim_ceil(sim_min(share / per, max_channels(gpu))));
}

static double step_latency(const struct llmsim_gpu *gpu, enum proto pr)
{
	return pr == PROTO_LL	   ? gpu->param[LLMSIM_PARAM_COLLECTIVE_LL_STEP_LATENCY_S]
	       : pr == PROTO_LL128 ? gpu->param[LLMSIM_PARAM_COLLECTIVE_LL128_STEP_LATENCY_S]
				   : gpu->param[LLMSIM_PARAM_COLLECTIVE_STEP_LATENCY_S];
}

static double link_fraction(const struct llmsim_gpu *gpu, enum proto pr)
{
	double bw = gpu->param[LLMSIM_PARAM_COLLECTIVE_BW_FRACTION];
	return pr == PROTO_LL	   ? gpu->param[LLMSIM_PARAM_COLLECTIVE_LL_BW_FRACTION]
	       : pr == PROTO_LL128 ? bw * LL128_DATA_FRACTION
				   : bw;
}

/* How late the slowest of nc channels ends, each moving x bytes at rate
 * r: a channel's progress is a random walk, its lag after x bytes
 * scattering by the straggle fraction x sqrt(x / 512 KiB) times one step's
 * time (x / r for a part of a step is too short: NCCL shrinks its chunks
 * with the size, so a small collective's channel still runs several
 * synchronised steps); the expected maximum of nc normal deviates is
 * about sqrt(2 ln nc). */
static double straggle_s(const struct llmsim_gpu *gpu, double nc, double x, double r)
{
	if (nc < 2 || !(x > 0) || !(r > 0))
		return 0;
	double steps = sqrt(x / NCCL_STEP_BYTES);
	return sqrt(2 * log(nc)) * gpu->param[LLMSIM_PARAM_COLLECTIVE_STRAGGLE_FRACTION] * steps *
	       NCCL_STEP_BYTES / r;
}

/* Channels of a Simple or LL128 transfer: a ring collective's follow
 * NCCL's thread threshold; point-to-point splits a message into chunks of
 * NCCL_P2P_NVL_CHUNKSIZE (512 KiB), one channel each, so a 1 MB sendrecv
 * runs on 2 channels */
static double bulk_channels(const struct llmsim_gpu *gpu, const struct cost *c, double share)
{
	if (!c->p2p)
		return channels(gpu, c->proto, share);
	return sim_max(1, sim_ceil(sim_min(share / NCCL_STEP_BYTES, max_channels(gpu))));
}

/* `steps` algorithm steps; `bytes` sent over the link by each rank, in all;
 * `local` bytes each rank copies out of the staging buffer on the same
 * threads; `share` is each rank's share of the buffer, which sets the
 * channels NCCL uses */
static void add(const struct llmsim_gpu *gpu, struct cost *c, const struct level *l, double steps,
		double bytes, double local, double share)
{
	double maxc = max_channels(gpu);
	/* Point-to-point posts whole slots to its peer without the ring's
	 * per-step slice handshake: its step costs LL's whatever the protocol
	 * (2 H200s: no knee at the 16 KiB LL -> Simple switch, 10.5 us at 16
	 * and at 32 KB, where ring collectives pay ~5 us more with Simple) */
	c->lat_s += steps * (l->lat_s + step_latency(gpu, c->p2p ? PROTO_LL : c->proto));
	c->sent += bytes;
	if (c->proto == PROTO_LL) {
		/* flag polling binds LL's threads, each channel to its 1/max
		 * share of LL's rate, local copies too */
		double nc = channels(gpu, c->proto, share);
		c->bw_s += (bytes + local) / (l->bytes_per_s * link_fraction(gpu, c->proto) * nc / maxc);
		return;
	}
	/* bulk copies: the link, or the channels' blocks when few run */
	double nc = bulk_channels(gpu, c, share);
	double r = fmin(l->bytes_per_s * link_fraction(gpu, c->proto), nc * l->cta_bytes_per_s);
	double loc =
		gpu->hbm_bytes_per_s * gpu->param[LLMSIM_PARAM_COLLECTIVE_LOCAL_BW_FRACTION] / 2;
	c->bw_s += bytes / r + (local > 0 && loc > 0 ? local / loc : 0);
	c->bw_s += straggle_s(gpu, nc, bytes / nc, r / nc);
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
			add(gpu, c, l, 2 * ceil(log2(p)), 2 * S, 0, S / p);
		else
			add(gpu, c, l, 2 * (p - 1), 2 * (p - 1) / p * S, S / p, S / p);
		break;
	case LLMSIM_COLL_ALLGATHER:
	case LLMSIM_COLL_REDUCESCATTER:
		/* NCCL sizes these by their whole buffer, p times a rank's
		 * share (nccl_tuning.txt, 2 H200s: all-gather 2 LL channels at
		 * 8 KB, 16 at 64 KB, twice all-reduce's at the same size) */
		add(gpu, c, l, p - 1, (p - 1) / p * S, S / p, S);
		break;
	case LLMSIM_COLL_ALLTOALL:
		/* p - 1 exchanges; receives run on their own warps */
		c->p2p = 1;
		add(gpu, c, l, p - 1, (p - 1) / p * S, 0, S / p);
		break;
	case LLMSIM_COLL_SENDRECV:
		c->p2p = 1;
		add(gpu, c, l, 1, S, 0, S);
		break;
	default:
		break;
	}
}

static void hier(const struct llmsim_gpu *gpu, enum llmsim_coll_kind kind, int tree, double P,
		 double n, double S, const struct level *in, const struct level *out,
		 struct cost *c)
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
		struct cost a = {.proto = c->proto, .p2p = 1}, b = {.proto = c->proto, .p2p = 1};
		add(gpu, &a, in, g - 1, (g - 1) / P * S, 0, S / P);
		add(gpu, &b, out, P - g, (P - g) / P * S, 0, S / P);
		c->bw_s += fmax(a.bw_s, b.bw_s);
		c->lat_s += fmax(a.lat_s, b.lat_s);
		c->sent += a.sent + b.sent;
		break;
	}
	case LLMSIM_COLL_SENDRECV:
		c->p2p = 1;
		add(gpu, c, out, 1, S, 0, S);
		break;
	default:
		break;
	}
}

/* NCCL's tuning constants (src/graph/tuning.cc, 2.28), in us: base
 * latency per algorithm (tree, ring) and protocol (LL, LL128, Simple),
 * and the NVLink latency per step */
static const double nccl_base_lat_us[2][PROTO_COUNT] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
static const double nccl_nvl_lat_us[2][PROTO_COUNT] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}};

/* NCCL's estimate (us) of one node's ring or tree collective with a
 * protocol: ncclTopoTuneModel's bandwidth and latency, then
 * ncclTopoGetAlgoTime's lat + bytes / bw */
static double nccl_estimate_us(const struct llmsim_gpu *gpu, enum llmsim_coll_kind kind, int tree,
			       enum proto pr, double p, double S)
{
	double bus = gpu->intra_node_bytes_per_s *
		     gpu->param[LLMSIM_PARAM_COLLECTIVE_NCCL_LINK_FRACTION] / 1e9;
	double llmax = gpu->param[LLMSIM_PARAM_COLLECTIVE_LL_MAX_BYTES_PER_S] / 1e9;
	double nsteps = kind == LLMSIM_COLL_ALLREDUCE ? 2 * (p - 1) : p - 1;
	double bw, lat = nccl_base_lat_us[!tree][pr];
	if (!tree) {
		bw = pr == PROTO_LL ? fmin(llmax, bus * 0.5) : pr == PROTO_LL128 ? bus * 0.92 : bus;
		bw *= p / nsteps;
		lat += nsteps * nccl_nvl_lat_us[1][pr];
	} else {
		bw = bus * 0.92;
		bw = pr == PROTO_LL	 ? fmin(bw / 3.8, llmax)
		     : pr == PROTO_LL128 ? bw * 7.0 / 9.0
					 : bw;
		bw *= 0.5;
		lat += 2 * (p - 1) * nccl_nvl_lat_us[0][pr];
	}
	return lat + S / (1e3 * bw);
}

/* NCCL's pick within one node: the protocol and algorithm its own model
 * rates fastest (ring and tree for all-reduce, ring otherwise); for
 * point-to-point kinds, LL up to NCCL_P2P_LL_THRESHOLD per peer */
static void nccl_pick(const struct llmsim_gpu *gpu, enum llmsim_coll_kind kind,
		      enum llmsim_coll_algo algo, double p, double S, int *tree, enum proto *pr)
{
	*tree = 0;
	if (kind == LLMSIM_COLL_SENDRECV || kind == LLMSIM_COLL_ALLTOALL) {
		double peer = kind == LLMSIM_COLL_SENDRECV ? S : S / p;
		*pr = peer <= NCCL_P2P_LL_BYTES ? PROTO_LL : PROTO_SIMPLE;
		return;
	}
	double best = INFINITY;
	*pr = PROTO_SIMPLE;
	for (int t = 0; t < 2; t++) {
		if ((t && (kind != LLMSIM_COLL_ALLREDUCE || algo == LLMSIM_ALGO_RING)) ||
		    (!t && algo == LLMSIM_ALGO_TREE))
			continue;
		for (int q = 0; q < PROTO_COUNT; q++) {
			double us = nccl_estimate_us(gpu, kind, t, (enum proto)q, p, S);
			if (us < best) {
				best = us;
				*tree = t;
				*pr = (enum proto)q;
			}
		}
	}
}

/* One rank: NCCL copies the send buffer into the receive buffer (a
 * device-to-device copy, read and write at the HBM rate), behind the
 * launch */
static int one_rank(const struct llmsim_gpu *gpu, double S, struct llmsim_pred *p)
{
	double hbm = gpu->hbm_bytes_per_s * gpu->param[LLMSIM_PARAM_HBM_FRACTION];
	p->flops = 0;
	p->intensity_flops_per_byte = 0;
	p->link_bytes = 0;
	p->kernels = 1;
	p->memory_s = hbm > 0 ? 2 * S / hbm : 0;
	p->overhead_s = gpu->param[LLMSIM_PARAM_KERNEL_OVERHEAD_S]; /* GPU time, as every op */
	p->time_s = p->memory_s + p->overhead_s;
	p->bound = p->memory_s > p->overhead_s ? LLMSIM_BOUND_HBM : LLMSIM_BOUND_LAUNCH;
	p->kernel_time_s[0] = p->time_s;
	p->kernel_bound[0] = p->bound;
	return 0;
}

int sim_collective(const struct llmsim_gpu *gpu, const struct llmsim_op *op, struct llmsim_pred *p,
		   struct llmsim_err *err)
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
		return llmsim_err_set(
		    err, LLMSIM_EINVAL,
		    "collective sizes must be positive (bytes=%g gpus=%d nodes=%d)", k->bytes,
		    k->gpus, nodes);
	if (k->bytes > 0x1p63)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "collective bytes (%g) overflow a 64-bit count: too large",
				      k->bytes);
	if (k->gpus % nodes)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "gpus (%d) must be divisible by nodes (%d)", k->gpus, nodes);
	int domain = llmsim_gpu_nvlink_domain(gpu);
	if (domain > 0 && k->gpus / nodes > domain)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%d gpus per node exceed the %d of a %s NVLink domain",
				      k->gpus / nodes, domain, gpu->name);
	if (k->algo == LLMSIM_ALGO_TREE && k->kind != LLMSIM_COLL_ALLREDUCE)
		return llmsim_err_set(
		    err, LLMSIM_EUNSUPPORTED,
		    "collective: the tree algorithm is for allreduce only, not %s",
		    llmsim_coll_kind_name(k->kind));
	/* One channel's block keeps NCCL_SIMPLE_MAX_NTHREADS 512 threads and
	 * a sync warp x NCCL's unrolled 16-byte copies (COLL_UNROLL 4: 64 B
	 * per thread) of stores in flight over the link's latency (Little's
	 * law): on H200 544 x 64 B / 0.6 us = 58 GB/s, so a 1 MB sendrecv on 2
	 * channels runs below the link. Across nodes the proxy and the NIC
	 * move the data: no such bound. (NCCL's own constant, not the
	 * streaming kernels' fitted bytes_in_flight_per_thread.) */
	double cta_bytes_per_s = gpu->intra_node_latency_s > 0
			     ? (NCCL_THREADS + 32) * NCCL_SIMPLE_THREAD_BYTES / gpu->intra_node_latency_s
			     : INFINITY;
	struct level in = {gpu->intra_node_bytes_per_s, gpu->intra_node_latency_s, cta_bytes_per_s};
	struct level out = {gpu->inter_node_bytes_per_s, gpu->inter_node_latency_s, INFINITY};
	double P = k->gpus, S = k->bytes;
	int multi = nodes > 1, intra = k->gpus / nodes > 1;
	if (P > 1 && ((intra || (!multi && k->kind == LLMSIM_COLL_SENDRECV)) && !(in.bytes_per_s > 0)))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "collective: %s has no intra-node link", gpu->name);
	if (multi && !(out.bytes_per_s > 0))
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "collective: %s has no inter-node network rate", gpu->name);

	struct cost best = {0};
	if (!multi && P > 1) {
		/* one node: NCCL's own model picks, the physics prices */
		int tree;
		enum proto pr;
		nccl_pick(gpu, k->kind, k->algo, P, S, &tree, &pr);
		best.proto = pr;
		flat(gpu, k->kind, tree, P, S, &in, &best);
	} else if (multi) {
		int tried = 0;
		for (int v = 0; v < 2 * PROTO_COUNT; v++) {
			int tree = v & 1;
			if ((tree && k->algo == LLMSIM_ALGO_RING) ||
			    (!tree && k->algo == LLMSIM_ALGO_TREE) ||
			    (tree && k->kind != LLMSIM_COLL_ALLREDUCE))
				continue;
			struct cost c = {.proto = (enum proto)(v >> 1)};
			hier(gpu, k->kind, tree, P, nodes, S, &in, &out, &c);
			if (!tried || c.bw_s + c.lat_s < best.bw_s + best.lat_s)
				best = c;
			tried = 1;
		}
	}
	double e = llmsim_dtype_bytes(op->dtype) > 0 ? llmsim_dtype_bytes(op->dtype) : 2;
	p->hbm_read_bytes = S;
	p->hbm_write_bytes = S;
	p->hbm_bytes = 2 * S;
	if (P <= 1)
		return one_rank(gpu, S, p);
	if (k->kind == LLMSIM_COLL_ALLREDUCE || k->kind == LLMSIM_COLL_REDUCESCATTER)
		p->flops = (P - 1) / P * S / e; /* one add per element received */
	p->link_bytes = best.sent;
	p->intensity_flops_per_byte = p->flops / p->hbm_bytes;
	p->kernels = 1;
	p->memory_s = best.bw_s; /* link transfer time */
	p->latency_s = best.lat_s;
	/* every NCCL kernel pays a fixed start (launch, proxy, handshake with
	 * the peers) whatever the size and step count: on 2 H200s all five
	 * collectives bottom out at the same ~9-10 us */
	p->overhead_s = gpu->param[LLMSIM_PARAM_COLLECTIVE_FIXED_S];
	p->time_s = best.bw_s + best.lat_s + p->overhead_s;
	p->bound = best.bw_s >= best.lat_s ? LLMSIM_BOUND_LINK : LLMSIM_BOUND_LATENCY;
	if (p->overhead_s > best.bw_s && p->overhead_s > best.lat_s)
		p->bound = LLMSIM_BOUND_LAUNCH;
	p->kernel_time_s[0] = p->time_s;
	p->kernel_bound[0] = p->bound;
	return 0;
}
