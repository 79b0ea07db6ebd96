/*
 * kernel.c - the timing model of one kernel, shared by every op kind.
 *
 * A kernel is priced from its launch shape and its work:
 *  - occupancy: resident blocks per SM from the hardware limits;
 *  - math: matrix FLOPs at the tensor (or CUDA-core) rate times an
 *    efficiency, element-wise FP32 ops and exp (special-function unit),
 *    quantized by SM: an SM runs sim_ceil(blocks / SMs) blocks one after the
 *    other, so one block more than a full round costs a whole block time;
 *  - memory: HBM bytes at the sustained bandwidth, L2 and shared memory at
 *    theirs, and Little's law: the resident blocks' outstanding loads over
 *    the DRAM latency cap the bandwidth a small grid can draw (loads from
 *    HBM and L2 alike, taken at the DRAM latency: conservative for hits);
 *  - a fixed overhead per kernel plus the op's pipeline fill, and, for
 *    blocks that sit alone on their SM, their exposed loads and stores
 *    at the start and end of each round.
 * The kernel takes the largest of the throughput limits plus the fixed
 * part; the bound is the limit that set it. Streaming kernels add their
 * CUDA-core work to their memory time (each thread loads, computes and
 * stores in turn). Tensor math runs at the burst clock, the one the SMs
 * hold under a tensor-bound kernel (the hardware file's burst_clock_hz),
 * and so do the CUDA-core and exp work of a kernel that keeps the tensor
 * cores busy.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "sim_internal.h"

static int imin(int a, int b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

int sim_blocks_per_sm(const struct llmsim_gpu *gpu, int threads, int regs, double smem_bytes)
{
	int ws = gpu->warp_size > 0 ? gpu->warp_size : 32;
	if (threads <= 0 || threads > gpu->threads_per_block_max)
		return 0;
	int warps = (threads + ws - 1) / ws;
	int n = gpu->blocks_per_sm_max;
	n = imin(n, gpu->warps_per_sm_max / warps);
	n = imin(n, gpu->threads_per_sm_max / (warps * ws));
	if (regs > 0) {
		if (gpu->registers_per_thread_max > 0 && regs > gpu->registers_per_thread_max)
			return 0;
		/* registers are allocated per warp in units of register_alloc_unit */
		int unit = gpu->register_alloc_unit > 0 ? gpu->register_alloc_unit : 1;
		int per_warp = (regs * ws + unit - 1) / unit * unit;
		if (gpu->registers_per_block_max > 0 &&
		    (long)per_warp * warps > gpu->registers_per_block_max)
			return 0;
		n = imin(n, gpu->registers_per_sm / per_warp / warps);
	}
	if (smem_bytes > 0) {
		if (smem_bytes > gpu->smem_bytes_per_block_max)
			return 0;
		double unit = gpu->smem_alloc_unit_bytes > 0 ? gpu->smem_alloc_unit_bytes : 1;
		double per_block = sim_ceil((smem_bytes + gpu->smem_reserved_bytes_per_block) / unit) * unit;
		n = imin(n, (int)sim_floor(gpu->smem_bytes_per_sm / per_block));
	}
	return n > 0 ? n : 0;
}

/* Burst over quoted tensor clock (hardware file's burst_clock_hz /
 * tensor_clock_hz, at most 1; 1 when either is absent): the factor on
 * every tensor peak. */
static double sim_tensor_clock_ratio(const struct llmsim_gpu *gpu)
{
	/* a tensor-heavy kernel draws the board to its power limit and the
	 * SM clock settles below the one the datasheet's tensor peaks assume
	 * (H200: 1830 MHz quoted, ~1650 MHz held): the MMAs issue per clock */
	if (gpu->tensor_clock_hz > 0 && gpu->burst_clock_hz > 0 &&
	    gpu->burst_clock_hz < gpu->tensor_clock_hz)
		return gpu->burst_clock_hz / gpu->tensor_clock_hz;
	return 1;
}

double sim_mm_rate(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, int *tensor)
{
	if ((unsigned)dt >= LLMSIM_DT_COUNT)
		return 0;
	if (gpu->tensor_flops_per_s[dt] > 0) {
		*tensor = 1;
		return gpu->tensor_flops_per_s[dt] * sim_tensor_clock_ratio(gpu);
	}
	*tensor = 0;
	return gpu->vector_flops_per_s[dt];
}

double sim_vec_rate(const struct llmsim_gpu *gpu)
{
	return gpu->vector_flops_per_s[LLMSIM_DT_FP32];
}

double sim_sfu_rate(const struct llmsim_gpu *gpu)
{
	return gpu->sms * gpu->boost_clock_hz * gpu->param[LLMSIM_PARAM_SFU_OPS_PER_CLOCK_PER_SM];
}

int sim_is_hopper(const struct llmsim_gpu *gpu)
{
	return !strcasecmp(gpu->arch, "hopper");
}

int sim_is_sm90_plus(const struct llmsim_gpu *gpu)
{
	return sim_is_hopper(gpu) || !strcasecmp(gpu->arch, "blackwell");
}

double sim_l2_reuse_bytes(const struct llmsim_gpu *gpu)
{
	return gpu->l2_bytes * gpu->param[LLMSIM_PARAM_L2_REUSE_FRACTION];
}

double sim_l2_resident_share(const struct llmsim_gpu *gpu, double bytes)
{
	double cap = sim_l2_reuse_bytes(gpu);
	return bytes > cap ? cap / bytes : 1;
}

double sim_l2_filter(const struct llmsim_gpu *gpu, double unique, double traffic,
		     double working_set)
{
	double cap = sim_l2_reuse_bytes(gpu);
	if (traffic <= unique || working_set <= cap)
		return unique;
	/* the share of the working set L2 keeps hits; the rest is re-read */
	return unique + (traffic - unique) * (1.0 - cap / working_set);
}

double sim_stream_inflight(const struct llmsim_gpu *gpu, int threads)
{
	return threads * gpu->param[LLMSIM_PARAM_BYTES_IN_FLIGHT_PER_THREAD];
}

void sim_stream_kern(const struct llmsim_gpu *gpu, struct kern *k, double elems,
		     double elem_bytes, double read_bytes, double write_bytes, double vec_flops)
{
	/* PyTorch/Triton style: 256 threads, each a 16-byte vector, unrolled 4 */
	memset(k, 0, sizeof *k);
	double per_thread = 4 * 16 / (elem_bytes > 0 ? elem_bytes : 1);
	k->threads = 256;
	k->regs = 32;
	k->blocks = (int64_t)sim_max(1, sim_ceil(elems / (k->threads * per_thread)));
	k->hbm_read_bytes = read_bytes;
	k->hbm_write_bytes = write_bytes;
	k->vec_flops = vec_flops;
	k->inflight_bytes_per_block = sim_stream_inflight(gpu, k->threads);
	k->fill_s = gpu->hbm_latency_s;
	k->serial_math = 1;
}

void sim_reduce_kern(const struct llmsim_gpu *gpu, struct kern *k, double out_elems,
		     double splits, double part_bytes, int l2, double out_bytes)
{
	memset(k, 0, sizeof *k);
	k->threads = 256;
	k->regs = 32;
	k->blocks = (int64_t)sim_max(1, sim_ceil(out_elems / (k->threads * 4.0)));
	k->hbm_read_bytes = l2 ? 0 : part_bytes;
	k->l2_bytes = l2 ? part_bytes : 0;
	k->hbm_write_bytes = out_bytes;
	k->vec_flops = (splits - 1) * out_elems;
	k->inflight_bytes_per_block = sim_stream_inflight(gpu, k->threads) * sim_min(splits, 4);
	k->fill_s = gpu->hbm_latency_s;
}

void sim_kern_time(const struct llmsim_gpu *gpu, const struct kern *k, struct ktime *t)
{
	memset(t, 0, sizeof *t);
	int64_t blocks = k->blocks > 0 ? k->blocks : 1;
	int bps = k->bps > 0 ? k->bps :
		  sim_blocks_per_sm(gpu, k->threads, k->regs, k->smem_per_block_bytes);
	/* the op descriptions pick shapes that fit; should one not, price it
	 * as one block per SM rather than fail on a user's shape */
	if (bps <= 0)
		bps = 1;
	int ws = gpu->warp_size > 0 ? gpu->warp_size : 32;
	int warps = (k->threads + ws - 1) / ws;
	double sms = gpu->sms;
	t->blocks_per_sm = bps;
	/* resident warps of a busy SM */
	double resident = sim_min((double)bps, sim_ceil(blocks / sms));
	t->occupancy = resident * warps / gpu->warps_per_sm_max;
	t->waves = blocks / (sms * bps);
	double rounds = sim_ceil(blocks / sms); /* blocks the busiest SM runs */
	t->tail = blocks / (sms * rounds);

	/* math, quantized to the busiest SM */
	if (k->mm_flops > 0 && k->mm_rate_flops_per_s > 0)
		t->mm_s = k->mm_flops / (k->mm_rate_flops_per_s * k->mm_eff) / t->tail;
	/* a kernel that keeps the tensor cores busy holds the whole SM at
	 * the burst clock: its CUDA-core and exp work (softmax, masks)
	 * slow down with it (the tensor rates carry the factor already) */
	double clk = 1;
	if (k->mm_tensor && k->mm_flops > 0 && gpu->burst_clock_hz > 0 &&
	    gpu->burst_clock_hz < gpu->boost_clock_hz)
		clk = gpu->burst_clock_hz / gpu->boost_clock_hz;
	/* vec_flops are FP32 operations (max, add, multiply, compare,
	 * convert): one per lane per clock, half the FP32 FLOP rate, which
	 * counts a fused multiply-add as two */
	double vrate = sim_vec_rate(gpu) / 2 * gpu->param[LLMSIM_PARAM_VECTOR_FRACTION] * clk;
	double srate = sim_sfu_rate(gpu) * clk;
	double sfu_s = 0;
	if (k->vec_flops > 0 && vrate > 0)
		t->vec_s += k->vec_flops / vrate / t->tail;
	if (k->sfu_ops > 0 && srate > 0)
		sfu_s = k->sfu_ops / srate / t->tail;
	if (k->sfu_overlap && !k->overlap_math) {
		/* the MUFU pipe works beside the tensor and FP32 pipes: its
		 * exps cost time only beyond the work issued around them */
		t->compute_s = dmax(t->mm_s + t->vec_s, sfu_s);
		t->vec_s = dmax(t->vec_s, sfu_s);
	} else {
		t->vec_s += sfu_s;
		t->compute_s = k->overlap_math ? dmax(t->mm_s, t->vec_s) +
						 k->serial_frac * sim_min(t->mm_s, t->vec_s) :
						 t->mm_s + t->vec_s;
	}

	/* memory */
	double hbm = k->hbm_read_bytes + k->hbm_write_bytes;
	double hbm_eff = k->hbm_eff > 0 ? k->hbm_eff : gpu->param[LLMSIM_PARAM_HBM_FRACTION];
	t->memory_s = hbm / (gpu->hbm_bytes_per_s * hbm_eff);
	/* every load a block waits on (HBM misses and L2 hits alike) passes
	 * through its window of outstanding bytes; stores do not wait */
	double loads = k->hbm_read_bytes + k->l2_bytes;
	double inflight = sim_min((double)blocks, sms * bps) * k->inflight_bytes_per_block;
	if (k->lat_rounds > 0)
		t->latency_s = sim_ceil(t->waves) * k->lat_rounds * gpu->hbm_latency_s;
	else if (loads > 0 && inflight > 0 && gpu->hbm_latency_s > 0)
		/* the first round trip is the kernel's fill (fill_s) */
		t->latency_s = sim_max(0, loads / inflight - (k->fill_s >= gpu->hbm_latency_s)) *
			       gpu->hbm_latency_s;
	if (gpu->l2_bytes_per_s > 0)
		t->l2_s = (k->l2_bytes + k->l2_store_bytes + hbm) /
			  (gpu->l2_bytes_per_s * gpu->param[LLMSIM_PARAM_L2_FRACTION]);
	/* atomics serialize in the L2 slices that own their lines */
	if (k->atomic_ops > 0)
		t->l2_s = dmax(t->l2_s, k->atomic_ops / gpu->param[LLMSIM_PARAM_L2_ATOMIC_OPS_PER_S]);
	if (k->smem_bytes > 0 && gpu->smem_bytes_per_s_per_sm > 0)
		t->smem_s = k->smem_bytes / (sms * gpu->smem_bytes_per_s_per_sm *
					     gpu->param[LLMSIM_PARAM_SMEM_FRACTION]) / t->tail;

	t->overhead_s = gpu->param[LLMSIM_PARAM_KERNEL_OVERHEAD_S] + k->fill_s;
	if (k->block_edge_bytes > 0) {
		/* with one resident block per SM (the limit, or a grid of at
		 * most one block per SM), every round of blocks starts with a
		 * DRAM round trip and its edge loads and ends with its edge
		 * stores, with no other block on the SM to overlap them. Two
		 * or more resident blocks cover each other's edges (H200 FA2
		 * forward, 2 per SM, shows no per-block cost) but for the
		 * first loads and the last stores of the kernel, which all
		 * blocks wait for at once. */
		double resident_blocks = sim_min((double)blocks, sms * bps);
		double bw = gpu->hbm_bytes_per_s * hbm_eff;
		double exposed = resident <= 1 ? sim_ceil(t->waves) : 1;
		t->overhead_s += exposed * (2 * gpu->hbm_latency_s +
					    resident_blocks * k->block_edge_bytes / bw);
	}

	/* A kernel whose window of outstanding loads nearly draws the HBM
	 * bandwidth meets it in a queue: near the knee each load waits
	 * longer than the unloaded round trip, so the two limits (memory_s,
	 * latency_s, reported as they are) combine smoothly, as
	 * (memory^q + latency^q)^(1/q), rather than as the larger of them (a
	 * closed loop of a fixed window of loads through one server:
	 * mean-value analysis gives such a curve between the window's rate
	 * and the server's). H200 GEMVs: 32 SMs draw 70 GB/s each, 96 SMs
	 * 39 GB/s each, the whole at ~3.8 TB/s. */
	double mem_s = sim_max(t->memory_s, t->latency_s);
	if (t->latency_s > 0 && t->memory_s > 0) {
		double q = gpu->param[LLMSIM_PARAM_HBM_QUEUE_EXPONENT];
		double r = sim_min(t->memory_s, t->latency_s) / mem_s;
		mem_s *= q == 2 ? sqrt(1 + r * r) : pow(1 + pow(r, q), 1 / q);
	}
	double best = t->compute_s;
	t->bound = k->mm_tensor && t->mm_s >= t->vec_s ? LLMSIM_BOUND_TENSOR : LLMSIM_BOUND_VECTOR;
	if (mem_s > best) {
		best = mem_s;
		t->bound = t->latency_s > t->memory_s ? LLMSIM_BOUND_LATENCY : LLMSIM_BOUND_HBM;
	}
	if (t->l2_s > best) {
		best = t->l2_s;
		t->bound = LLMSIM_BOUND_L2;
	}
	if (t->smem_s > best) {
		best = t->smem_s;
		t->bound = LLMSIM_BOUND_SMEM;
	}
	if (k->serial_math && best > t->compute_s) {
		/* H200 element-wise kernels: GELU, SiLU-mul and the norms
		 * take longer than their bytes at the bandwidth of a plain add
		 * of the same size by about their FP32 and exp time */
		best += t->compute_s;
		if (t->compute_s > best - t->compute_s)
			t->bound = LLMSIM_BOUND_VECTOR;
	}
	if (t->overhead_s > best)
		t->bound = LLMSIM_BOUND_LAUNCH;
	t->time_s = best + t->overhead_s;
}

void sim_acc_init(struct sim_acc *a, struct llmsim_pred *p)
{
	memset(a, 0, sizeof *a);
	a->p = p;
}

void sim_acc_kern(struct sim_acc *a, const struct llmsim_gpu *gpu, const struct kern *k,
		  int main)
{
	struct ktime t;
	struct llmsim_pred *p = a->p;
	sim_kern_time(gpu, k, &t);
	if (p->kernels < LLMSIM_PRED_MAX_KERNELS) {
		p->kernel_time_s[p->kernels] = t.time_s;
		p->kernel_bound[p->kernels] = t.bound;
	}
	p->kernels++;
	p->hbm_read_bytes += k->hbm_read_bytes;
	p->hbm_write_bytes += k->hbm_write_bytes;
	p->l2_bytes += k->l2_bytes + k->l2_store_bytes;
	p->smem_bytes += k->smem_bytes;
	p->compute_s += t.compute_s;
	p->memory_s += t.memory_s;
	p->latency_s += t.latency_s;
	p->overhead_s += t.overhead_s;
	p->time_s += t.time_s;
	/* the time a kernel spends is charged to its bound; its fixed part
	 * to launch/overhead */
	a->bound_s[t.bound] += t.time_s - (t.bound == LLMSIM_BOUND_LAUNCH ? 0 : t.overhead_s);
	if (t.bound != LLMSIM_BOUND_LAUNCH)
		a->bound_s[LLMSIM_BOUND_LAUNCH] += t.overhead_s;
	if ((main && !a->have_main) || p->kernels == 1) {
		a->have_main |= main;
		p->blocks = k->blocks;
		p->threads_per_block = k->threads;
		p->regs_per_thread = k->regs;
		p->smem_bytes_per_block = k->smem_per_block_bytes;
		p->blocks_per_sm = t.blocks_per_sm;
		p->occupancy = t.occupancy;
		p->waves = t.waves;
		p->tail_efficiency = t.tail;
	}
}

void sim_acc_finish(struct sim_acc *a)
{
	struct llmsim_pred *p = a->p;
	p->hbm_bytes = p->hbm_read_bytes + p->hbm_write_bytes;
	p->intensity_flops_per_byte = p->hbm_bytes > 0 ? p->flops / p->hbm_bytes : INFINITY;
	int b = 0;
	for (int i = 1; i < LLMSIM_BOUND_COUNT; i++)
		if (a->bound_s[i] > a->bound_s[b])
			b = i;
	p->bound = (enum llmsim_bound)b;
}

/* A checked product: 0 on success, LLMSIM_EINVAL on overflow. */
static int sim_mul(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

int sim_mul_chk(struct llmsim_err *err, const char *what, int n, const int64_t *f,
		int64_t *out)
{
	int64_t v = 1;
	for (int i = 0; i < n; i++)
		if (sim_mul(v, f[i], &v))
			return llmsim_err_set(err, LLMSIM_EINVAL,
					      "%s overflows a 64-bit count: shape too large", what);
	*out = v;
	return 0;
}

int sim_check_dtype(const struct llmsim_gpu *gpu, enum llmsim_dtype dt, const char *what,
		    struct llmsim_err *err)
{
	if ((unsigned)dt >= LLMSIM_DT_COUNT)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: unknown data type (%d)", what,
				      (int)dt);
	int tensor;
	if (sim_mm_rate(gpu, dt, &tensor) <= 0)
		return llmsim_err_set(err, LLMSIM_EUNSUPPORTED,
				      "%s: %s is not supported on %s (no tensor or vector rate)",
				      what, llmsim_dtype_name(dt), gpu->name);
	return 0;
}
