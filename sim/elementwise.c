/*
 * elementwise.c - the cost descriptions of memory-bound ops over a
 * [tokens, hidden] activation: bytes each kernel really reads and writes
 * per element, its FP32 and exp work, and its launch shape.
 *
 * Point-wise ops run as a grid of 256-thread blocks with 16-byte vector
 * loads. Row reductions (norms, softmax, cross-entropy) run one block per
 * row, the row held in registers so it is read from HBM once; few rows
 * then mean few blocks, few bytes in flight and a latency-bound kernel.
 * Element counts are N = tokens * hidden, e the bytes of dtype.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* What one pass of one kind reads and writes. */
struct ew_cost {
	double read, write;     /* HBM bytes */
	double l2;              /* bytes served by L2 (small shared tables) */
	double vec, sfu;        /* FP32 ops, exp/tanh/sqrt */
	int rowwise;            /* one block per token row */
	double atomics;         /* L2 read-modify-write atomics */
	double rounds;          /* > 0: dependent DRAM round trips per block (a
				 * radix select or sort's passes), not a stream */
};

/* The parts of an op beyond its kind and shape that its bytes depend on. */
struct ew_shape {
	double e_out;           /* bytes of the written type */
	int bcast;              /* second operand broadcast */
	double k;               /* topk: kept per row */
	double rereads;         /* a row kernel's further reads of its row (row_rereads) */
};

/* blocks that keep partial weight gradients in a norm's backward */
enum { NPART = 128 };

static void cost(enum llmsim_ew_kind kind, int bwd, double T, double H, double e, double sms,
		 const struct ew_shape *sh, struct ew_cost *c)
{
	double N = T * H;
	double rereads = sh->rereads;
	memset(c, 0, sizeof *c);
	switch (kind) {
	case LLMSIM_EW_ADD:
		/* fwd: a + b; bwd: the sum of two gradient branches (the
		 * identity itself needs no kernel); a broadcast second operand
		 * (a bias, a per-row scale) is an L1/L2 hit */
		c->read = (sh->bcast ? 1 : 2) * N * e, c->write = N * e, c->vec = N;
		break;
	case LLMSIM_EW_MUL:
		if (!bwd)
			c->read = (sh->bcast ? 1 : 2) * N * e, c->write = N * e, c->vec = N;
		else /* da = dy*b, db = dy*a */
			c->read = 3 * N * e, c->write = 2 * N * e, c->vec = 2 * N;
		break;
	case LLMSIM_EW_SILU_MUL:
		/* SwiGLU: hidden is the intermediate size; gate and up in */
		/* x / (1 + exp(-x)): an exp and the IEEE division's reciprocal */
		if (!bwd)
			c->read = 2 * N * e, c->write = N * e, c->vec = 4 * N, c->sfu = 2 * N;
		else /* reads dy, gate, up; writes dgate, dup; the sigmoid again */
			c->read = 3 * N * e, c->write = 2 * N * e, c->vec = 8 * N, c->sfu = 2 * N;
		break;
	case LLMSIM_EW_SILU:
		/* x / (1 + exp(-x)): an exp and the division's reciprocal, a
		 * few FP32 ops; bwd: dy * s * (1 + x * (1 - s)) from x */
		if (!bwd)
			c->read = N * e, c->write = N * e, c->vec = 4 * N, c->sfu = 2 * N;
		else
			c->read = 2 * N * e, c->write = N * e, c->vec = 8 * N, c->sfu = 2 * N;
		break;
	case LLMSIM_EW_RELU:
		/* max(x, 0): one op; bwd: dy where x > 0, from x */
		if (!bwd)
			c->read = N * e, c->write = N * e, c->vec = N;
		else
			c->read = 2 * N * e, c->write = N * e, c->vec = N;
		break;
	case LLMSIM_EW_GELU:
		if (!bwd) /* tanh approximation: ~8 ops and one tanh */
			c->read = N * e, c->write = N * e, c->vec = 8 * N, c->sfu = N;
		else
			c->read = 2 * N * e, c->write = N * e, c->vec = 12 * N, c->sfu = N;
		break;
	case LLMSIM_EW_RMSNORM:
	case LLMSIM_EW_LAYERNORM: {
		/* every row's block reads the weight (and bias): from HBM once,
		 * into each SM's L1 from L2 once, from L1 after; backward
		 * writes fp32 partial weight (and bias) gradients, one row of
		 * them per block that keeps partials */
		double np = kind == LLMSIM_EW_RMSNORM ? 1 : 2; /* weight (bias) */
		double stats = kind == LLMSIM_EW_RMSNORM ? 1 : 2; /* rstd (mean) */
		c->rowwise = 1;
		c->l2 = ((T < sms ? T : sms) - 1) * np * H * e;
		if (!bwd) /* x (and its re-reads) and the weight in; y and fp32 row
			   statistics out */
			c->read = (1 + rereads) * N * e + np * H * e,
			c->write = N * e + stats * T * 4,
			c->vec = (kind == LLMSIM_EW_RMSNORM ? 4 : 7) * N, c->sfu = T;
		else /* dy, x, weight, statistics in; dx and partial dweight out */
			c->read = 2 * N * e + np * H * e + stats * T * 4,
			c->write = N * e + np * H * 4 * (T < NPART ? T : NPART),
			c->vec = (kind == LLMSIM_EW_RMSNORM ? 6 : 10) * N;
		break;
	}
	case LLMSIM_EW_SOFTMAX:
		c->rowwise = 1;
		if (!bwd) /* max, exp and sum, then exp again and scale as
			   the row is written (the exps are not kept); the output
			   may be wider (softmax(x, dtype=torch.float32)) */
			c->read = (1 + rereads) * N * e, c->write = N * sh->e_out, c->vec = 4 * N,
			c->sfu = 2 * N;
		else /* dx = y * (dy - sum(dy*y)) */
			c->read = 2 * N * e, c->write = N * e, c->vec = 3 * N;
		break;
	case LLMSIM_EW_ROPE:
		/* rotate pairs: 2 mul + 1 add per element; each token's row
		 * of the cos/sin table (head_dim 128: 512 B, against the
		 * token's hidden * e) is an L1/L2 hit shared by its heads,
		 * left out */
		c->read = N * e, c->write = N * e, c->vec = 3 * N;
		break;
	case LLMSIM_EW_EMBEDDING:
		/* one block per token: its id, then its row (two round trips) */
		c->rowwise = 1;
		if (!bwd) /* gather rows: int64 ids, rows of the table */
			c->read = T * 8 + N * e, c->write = N * e;
		else /* scatter-add dy into an fp32 table gradient */
			c->read = T * 8 + N * e + N * 4, c->write = N * 4, c->vec = N;
		break;
	case LLMSIM_EW_CROSS_ENTROPY:
		/* fused: logits [tokens, vocab=hidden] in, loss and lse out */
		c->rowwise = 1;
		if (!bwd)
			/* loss and lse only: one online (running max) pass */
			c->read = N * e + T * 8, c->write = 2 * T * 4, c->vec = 4 * N, c->sfu = N;
		else /* dlogits = softmax - onehot, recomputed from lse */
			c->read = N * e + T * 8 + T * 4, c->write = N * e, c->vec = 3 * N,
			c->sfu = N;
		break;
	case LLMSIM_EW_COPY:
		/* a plain copy, or a cast: e bytes in, e_out out */
		c->read = N * e, c->write = N * sh->e_out, c->vec = sh->e_out != e ? N : 0;
		break;
	case LLMSIM_EW_GATHER:
		/* index_select of rows: the ids, then each row (vectorized) */
		c->read = T * 8 + N * e, c->write = N * e;
		break;
	case LLMSIM_EW_SCATTER_ADD:
		/* index_add_: the ids and the source rows stream in; every
		 * element is an atomic add in L2 into its destination row, which
		 * reaches HBM once (H200: 16384 x 4096 bf16 rows into 8192 rows,
		 * 572 us: 1.2e11 adds/s, 0.45 TB/s of source) */
		c->read = T * 8 + N * e, c->write = N * e, c->atomics = N, c->vec = N;
		break;
	case LLMSIM_EW_TOPK:
		/* PyTorch's radix select (sbtopk), one block per row: 2 key bits
		 * per pass, each pass a block-wide count that waits on its loads
		 * (8 passes for 16-bit keys, 16 for 32-bit), then a pass that
		 * writes the k values and their int64 indices (H200: 1-128 rows
		 * of 8 or 128 logits take 8.6-10.8 us) */
		c->rowwise = 1;
		c->rounds = e * 8 / 2 + 1;
		c->read = N * e, c->write = T * sh->k * (e + 8), c->vec = 4 * N;
		break;
	case LLMSIM_EW_SORT:
		/* a stable sort of T int64 keys carrying int64 values, as
		 * PyTorch dispatches it: up to 4096 keys in one block (a block
		 * radix sort, 4 key bits a pass: 16 passes of a count, a scan
		 * and a scatter, each a barrier-separated round in shared memory,
		 * and fewer key bits to go over when the keys are few: 4 passes
		 * under 64); beyond, CUB's onesweep over the GPU (a histogram,
		 * then 8 passes of 8 bits reading and writing keys and values;
		 * H200: 10.6 us for 2-64 keys, 30 us for 192-1024, 37 us for
		 * 4096, 70-80 us for 12288-65536) */
		if (T <= 4096) {
			c->rounds = T <= 64 ? 4 * 3 : 16 * 3;
			c->read = T * 16, c->write = T * 16, c->vec = 16 * 8 * T;
		} else {
			c->rounds = 9 * 2;
			c->read = 9 * T * 16, c->write = 8 * T * 16, c->vec = 8 * 8 * T;
		}
		break;
	case LLMSIM_EW_REDUCE:
		/* a row mean or sum: the row in, one value out */
		c->rowwise = 1;
		c->read = N * e, c->write = T * e, c->vec = N;
		break;
	case LLMSIM_EW_QUANTIZE:
		/* the tensor in once; each copy out with its scales (in e_out);
		 * per element and copy a scale multiply, a block max and the
		 * conversion. The columnwise copy goes through shared memory
		 * (a tile transpose), as the rowwise one does not. */
		c->read = N * e, c->write = N * sh->e_out * sh->k, c->vec = 3 * N * sh->k;
		break;
	case LLMSIM_EW_ADAMW:
		/* per parameter: read fp32 master (4), m (4), v (4) and the
		 * gradient (e); write master, m, v (12) and the e-byte working
		 * copy of the weight: (12 + e) each way, 28 B for bf16. About 15
		 * FP32 ops and one sqrt per parameter. */
		c->read = N * (12 + e), c->write = N * (12 + e), c->vec = 15 * N, c->sfu = N;
		break;
	default:
		break;
	}
}

/* fp32 row elements one block keeps in registers: half of the SM's
 * register file (the rest holds addresses, indices and partial sums) */
static double row_max(const struct llmsim_gpu *gpu)
{
	return gpu->registers_per_sm > 0 ? gpu->registers_per_sm / 2.0 : 32768;
}

/* PyTorch's shared memory per block without opting in (what its softmax
 * sizes its row buffer by: cudaDeviceProp::sharedMemPerBlock, 48 KiB on
 * every NVIDIA GPU since Kepler) */
#define TORCH_SMEM_PER_BLOCK_BYTES 49152.0

/* The threads of PyTorch's softmax block for a row of H (SoftMax.cu,
 * SoftMaxForward_getBlockSize): the power of two at or above H / ILP,
 * 16-byte vectors of e-byte elements, at least a warp, at most 1024. */
static int torch_softmax_threads(double H, double e, int ws)
{
	double want = sim_min(H / (16 / e), 1024);
	int b = 1;
	while (b < want)
		b *= 2;
	return b < ws ? ws : b;
}

/* How many more times than once a row kernel reads its row (fwd):
 * - llmsim's own kernels (serial=1): a row longer than one block's
 *   registers hold (in fp32) cannot stay on chip between the reduction
 *   and the normalization and is read again (H200: softmax over a
 *   128,256-entry row reads 2.0x the logits, dram__bytes_read.sum);
 * - PyTorch's softmax (SoftMax.cu host_softmax, dim -1): a warp per row up
 *   to 1024 elements, else a block whose row fits its registers (fewer
 *   than 10 elements a thread: cunn_SoftMaxForwardReg) or its 48 KiB of
 *   shared memory (cunn_SoftMaxForwardSmem) reads it once; a wider row
 *   (cunn_SoftMaxForward) is read three times: its max, its sum of exps,
 *   then the normalized write;
 * - PyTorch's layer and RMS norms (layer_norm_kernel.cu,
 *   vectorized_layer_norm_kernel): the statistics loop reads the row, the
 *   normalizing loop reads it again.
 * PyTorch's re-reads hit L2 as far as the rows in flight fit it (add_pass);
 * llmsim's own kernel is priced as fitted, its re-read from DRAM. */
static double row_rereads(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, double H,
			  double e, unsigned layout);

/* The FP32 and special-function (MUFU) pipes issue side by side: an
 * element-wise kernel's math takes the longer of the two, not their sum
 * (H200: GELU's tanh and 8 FP32 ops per element cost what one exp per
 * element does, about half of the sum). Expressed as FP32 ops at the
 * vector rate the kernel model prices. */
static void overlap_pipes(const struct llmsim_gpu *gpu, struct kern *k, double vec, double sfu)
{
	double vrate = sim_vec_rate(gpu) / 2 * gpu->param[LLMSIM_PARAM_VECTOR_FRACTION];
	double srate = sim_sfu_rate(gpu);
	k->sfu_ops = 0;
	k->vec_flops = srate > 0 ? sim_max(vec, sfu * vrate / srate) : vec;
}

/* how the kernel walks its operands (op.u.ew.strided, .serial) */
enum { EW_STRIDED = 1, EW_SERIAL = 2, EW_IN_L2 = 4 };

static double row_rereads(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, double H,
			  double e, unsigned layout)
{
	int norm = kind == LLMSIM_EW_RMSNORM || kind == LLMSIM_EW_LAYERNORM;
	if (kind != LLMSIM_EW_SOFTMAX && !norm)
		return 0;
	if (layout & EW_SERIAL)
		return kind == LLMSIM_EW_SOFTMAX && H > row_max(gpu) ? 1 : 0;
	if (norm)
		return 1;
	int ws = gpu->warp_size > 0 ? gpu->warp_size : 32;
	double th = torch_softmax_threads(H, e, ws);
	double reserve = th / ws * 4; /* a float per warp for the block reduction */
	if ((H <= 1024 && H * e <= 4096) || sim_ceil(H / th) < 10 ||
	    H < (TORCH_SMEM_PER_BLOCK_BYTES - reserve) / e)
		return 0;
	return 2;
}

static void add_pass(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, int bwd, double T,
		     double H, double e, const struct ew_shape *sh, unsigned layout,
		     struct sim_acc *a, int main)
{
	struct ew_cost c;
	struct kern k;
	cost(kind, bwd, T, H, e, gpu->sms, sh, &c);
	double reread_l2 = 0;
	if (c.rowwise && !bwd && sh->rereads > 0 && !(layout & EW_SERIAL)) {
		/* a row read again by the block that just read it: an L2 hit
		 * while the rows of the blocks in flight fit the L2 */
		int ws = gpu->warp_size > 0 ? gpu->warp_size : 32;
		int norm = kind == LLMSIM_EW_RMSNORM || kind == LLMSIM_EW_LAYERNORM;
		int th = norm ? 4 * ws : torch_softmax_threads(H, e, ws);
		double bps = sim_max(1, sim_blocks_per_sm(gpu, th, 40, 0));
		double rows = sim_min(T, gpu->sms * bps);
		double unique = T * H * e, traffic = (1 + sh->rereads) * unique;
		double hbm = sim_l2_filter(gpu, unique, traffic, rows * H * e);
		reread_l2 = traffic - hbm;
		c.read -= reread_l2;
	}
	/* a gather or scatter also loads one int64 id per row: its grid
	 * covers those loads too (rows of a few elements are id-bound) */
	double elems = T * H;
	if (kind == LLMSIM_EW_GATHER || kind == LLMSIM_EW_SCATTER_ADD)
		elems += T * 8 / e;
	sim_stream_kern(gpu, &k, elems, e, c.read, c.write, c.vec);
	double vec = c.vec;
	k.l2_bytes = c.l2 + reread_l2;
	k.atomic_ops = c.atomics;
	if (c.atomics > 0)
		k.l2_store_bytes += c.atomics * e;
	if (c.rounds > 0 && !c.rowwise) {
		/* a sort: one block while the keys fit a block's shared
		 * memory (4096 int64 pairs), else a grid of passes (its nine
		 * kernels' fixed costs: see ew_add); every pass a dependent
		 * round trip */
		k.blocks = T <= 4096 ? 1 : (int64_t)sim_max(1, sim_ceil(T / 4096));
		k.threads = 1024;
		k.lat_rounds = c.rounds;
		if (T > 4096)
			k.fill_s += 8 * (gpu->param[LLMSIM_PARAM_KERNEL_OVERHEAD_S] + gpu->hbm_latency_s);
	}
	/* A framework's kernel loads four vectors per operand and thread
	 * before it computes, so other warps' loads hide its math; a
	 * grid-stride loop over one vector per step has a quarter of those
	 * bytes in flight and its math between each load and its store. A
	 * row kernel's math sits between its reduction and its write either
	 * way. (H200: PyTorch's F.silu streams at 4.0 TB/s with its math
	 * hidden; kernels/ew.cu's GELU and SiLU-mul take their math's time
	 * beyond their bytes.) */
	k.serial_math = c.rowwise || (layout & EW_SERIAL);
	if ((layout & EW_SERIAL) && !c.rowwise)
		k.inflight_bytes_per_block /= 4;
	if ((layout & EW_STRIDED) && !c.rowwise) {
		/* a framework's non-vectorized path for strided views (PyTorch's
		 * elementwise_kernel): 4 scalar elements per thread, so the
		 * same loads in flight carry e bytes instead of 16, and every
		 * element pays its offset arithmetic in int32 instructions,
		 * which run on half as many lanes as FP32 (2 "vec" ops each) */
		k.blocks = (int64_t)sim_max(1, sim_ceil(T * H / (k.threads * 4.0)));
		k.inflight_bytes_per_block *= e / 16;
		/* the exps issue beside this integer work too (H200: a strided
		 * SiLU runs as fast as a strided multiply) */
		vec += 2 * T * H * gpu->param[LLMSIM_PARAM_STRIDED_INDEX_OPS_PER_ELEMENT];
	}
	overlap_pipes(gpu, &k, vec, c.sfu);
	if (c.rowwise) {
		/* one block per row: 16-byte vectors, up to 1024 threads */
		int ws = gpu->warp_size > 0 ? gpu->warp_size : 32;
		double per_thread = 16 / e;
		/* capped before the conversion: a huge row overflows an int */
		int th = (int)sim_min(1024, sim_ceil(H / per_thread / ws) * ws);
		/* PyTorch's layer/RMS norm (vectorized_layer_norm_kernel) runs
		 * 4 warps per row whatever its length (calib/data/torch_kernels:
		 * block 32 x 4); llmsim's own (serial=1) one vector per thread */
		int norm = kind == LLMSIM_EW_RMSNORM || kind == LLMSIM_EW_LAYERNORM;
		if (norm && !(layout & EW_SERIAL))
			th = 4 * ws;
		if (th > gpu->threads_per_block_max)
			th = gpu->threads_per_block_max;
		if (th < ws)
			th = ws;
		k.threads = th;
		k.regs = 40;
		k.blocks = (int64_t)T;
		k.inflight_bytes_per_block = sim_stream_inflight(gpu, th);
		/* PyTorch's statistics loop updates its running sums from each
		 * step's load before it issues the next: a DRAM round trip per
		 * step over the row, per wave of rows (H200: its RMS norm of one
		 * 4096-wide row, 4 steps of 128 threads x 8, takes 4.0 us;
		 * llmsim's, one step of 512 threads, 2.0 us) */
		if (norm && !(layout & EW_SERIAL))
			k.lat_rounds = sim_ceil(H / (th * per_thread));
		if (c.rounds > 0) /* a radix select: its passes */
			k.lat_rounds = c.rounds;
		/* two dependent phases: load and reduce, then write */
		k.fill_s = 2 * gpu->hbm_latency_s;
	}
	if (layout & EW_IN_L2) {
		/* operands already in L2, as far as its reusable part holds
		 * them (l2_reuse_fraction of the L2; the rest still streams
		 * from HBM): its bandwidth, and where everything is in L2 an
		 * L2 hit's round trip where a DRAM one was (H200: an add of 64
		 * x 4096 bf16 rows in L2 takes 1.3 us, launch and drain
		 * included). A row kernel's two phases wait on its block
		 * reduction as much as on its loads: its fill stays. */
		double hit = sim_l2_resident_share(gpu, k.hbm_read_bytes + k.hbm_write_bytes);
		k.l2_bytes += hit * k.hbm_read_bytes;
		k.l2_store_bytes += hit * k.hbm_write_bytes;
		k.hbm_read_bytes *= 1 - hit;
		k.hbm_write_bytes *= 1 - hit;
		double l2_per_hbm =
			gpu->hbm_latency_s > 0
				? gpu->param[LLMSIM_PARAM_L2_HIT_ROUND_TRIP_S] / gpu->hbm_latency_s
				: 1;
		if (hit >= 1 && !c.rowwise)
			k.fill_s *= l2_per_hbm;
		if (hit >= 1)
			k.lat_rounds *= l2_per_hbm;
	}
	sim_acc_kern(a, gpu, &k, main);
}

static void ew_add(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, enum llmsim_pass pass,
		   int64_t tokens, int64_t hidden, enum llmsim_dtype dt, const struct ew_shape *sh,
		   unsigned layout, struct sim_acc *a, int main);

static struct ew_shape plain_shape(enum llmsim_dtype dt)
{
	return (struct ew_shape){.e_out = llmsim_dtype_bytes(dt), .k = 1};
}

void sim_ew_strided_copy(const struct llmsim_gpu *gpu, int64_t elems, enum llmsim_dtype dt,
			 struct sim_acc *a)
{
	struct ew_shape sh = plain_shape(dt);
	ew_add(gpu, LLMSIM_EW_COPY, LLMSIM_PASS_FWD, 1, elems, dt, &sh, EW_STRIDED, a, 0);
}

void sim_ew_add(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, enum llmsim_pass pass,
		int64_t tokens, int64_t hidden, enum llmsim_dtype dt, struct sim_acc *a, int main)
{
	struct ew_shape sh = plain_shape(dt);
	ew_add(gpu, kind, pass, tokens, hidden, dt, &sh, 0, a, main);
}

void sim_ew_add_as(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, int64_t tokens,
		   int64_t hidden, enum llmsim_dtype dt, enum llmsim_dtype out, int bcast,
		   struct sim_acc *a)
{
	struct ew_shape sh = {.e_out = llmsim_dtype_bytes(out), .bcast = bcast, .k = 1};
	double f = a->p->flops; /* a program's glue: its element-wise work is not counted */
	ew_add(gpu, kind, LLMSIM_PASS_FWD, tokens, hidden, dt, &sh, 0, a, 0);
	a->p->flops = f;
}

static void ew_add(const struct llmsim_gpu *gpu, enum llmsim_ew_kind kind, enum llmsim_pass pass,
		   int64_t tokens, int64_t hidden, enum llmsim_dtype dt, const struct ew_shape *sh,
		   unsigned layout, struct sim_acc *a, int main)
{
	double e = llmsim_dtype_bytes(dt), T = (double)tokens, H = (double)hidden;
	struct ew_cost c;
	struct ew_shape rsh = *sh;
	rsh.rereads = row_rereads(gpu, kind, H, e, layout);
	sh = &rsh;
	if (pass != LLMSIM_PASS_BWD) {
		cost(kind, 0, T, H, e, gpu->sms, sh, &c);
		a->p->flops += c.vec + c.sfu;
		add_pass(gpu, kind, 0, T, H, e, sh, layout, a, main);
		if (kind == LLMSIM_EW_TOPK) {
			/* torch.topk's results come sorted: a bitonic sort of each
			 * row's k values and indices in shared memory, a second
			 * kernel of a block per row (H200, in an MoE step:
			 * gatherTopK 5.2 us, then bitonicSortKVInPlace 4.6 us) */
			struct ew_shape ksh = *sh;
			ew_add(gpu, LLMSIM_EW_REDUCE, LLMSIM_PASS_FWD, tokens,
			       (int64_t)sh->k, dt, &ksh, layout, a, 0);
		}
	}
	if (pass != LLMSIM_PASS_FWD && kind != LLMSIM_EW_ADAMW) {
		cost(kind, 1, T, H, e, gpu->sms, sh, &c);
		a->p->flops += c.vec + c.sfu;
		add_pass(gpu, kind, 1, T, H, e, sh, layout, a, main && pass == LLMSIM_PASS_BWD);
	}
}

int sim_elementwise(const struct llmsim_gpu *gpu, const struct llmsim_op *op,
		    struct llmsim_pred *p, struct llmsim_err *err)
{
	const __typeof__(op->u.ew) *w = &op->u.ew;
	int64_t v;
	int rc;
	if ((unsigned)w->kind >= LLMSIM_EW_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "ew: unknown kind (%d)", (int)w->kind);
	if ((unsigned)w->pass > LLMSIM_PASS_FWDBWD)
		return llmsim_err_set(err, LLMSIM_EINVAL, "ew: unknown pass (%d)", (int)w->pass);
	if (w->tokens <= 0 || w->hidden <= 0)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "ew %s: tokens (%lld) and hidden (%lld) must be positive",
				      llmsim_ew_kind_name(w->kind), (long long)w->tokens,
				      (long long)w->hidden);
	if ((unsigned)op->dtype >= LLMSIM_DT_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "ew: unknown data type (%d)",
				      (int)op->dtype);
	/* 64 bytes per element (adamw state, both ways) must still count */
	if ((rc = sim_mul_chk(err, "ew tokens*hidden*64", 3,
			      (int64_t[]){w->tokens, w->hidden, 64}, &v)))
		return rc;
	if (sim_vec_rate(gpu) <= 0)
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED, "ew: %s has no FP32 vector rate",
				      gpu->name);
	if (w->kind == LLMSIM_EW_TOPK && (w->k < 1 || w->k > w->hidden))
		return llmsim_err_set(err, LLMSIM_EINVAL, "ew topk: k (%lld) must be in 1..hidden (%lld)",
				      (long long)w->k, (long long)w->hidden);
	if (w->bcast && w->kind != LLMSIM_EW_ADD && w->kind != LLMSIM_EW_MUL)
		return llmsim_err_set(err, LLMSIM_EINVAL, "ew %s: bcast=1 applies to add and mul only",
				      llmsim_ew_kind_name(w->kind));
	enum llmsim_dtype out = w->out_dtype;
	if ((unsigned)out >= LLMSIM_DT_COUNT || out == LLMSIM_DT_FP64)
		out = op->dtype;
	if (out != op->dtype && w->kind != LLMSIM_EW_COPY && w->kind != LLMSIM_EW_QUANTIZE &&
	    w->kind != LLMSIM_EW_SOFTMAX)
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "ew %s: out_dtype applies to copy (a cast), quantize and softmax only",
				      llmsim_ew_kind_name(w->kind));
	struct ew_shape sh = {.e_out = llmsim_dtype_bytes(out), .bcast = w->bcast,
			      .k = (double)(w->k > 0 ? w->k : 1)};
	struct sim_acc a;
	sim_acc_init(&a, p);
	ew_add(gpu, w->kind, w->pass, w->tokens, w->hidden, op->dtype, &sh,
	       (w->strided ? EW_STRIDED : 0) | (w->serial ? EW_SERIAL : 0) |
		       (w->in_l2 ? EW_IN_L2 : 0),
	       &a, 1);
	sim_acc_finish(&a);
	return 0;
}
