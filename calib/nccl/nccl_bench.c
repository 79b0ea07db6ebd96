/*
 * nccl_bench.c - NCCL collectives on the GPUs of one host, one process per
 * GPU, timed as the collective itself (CUDA events around each call on the
 * rank's stream, warm-up, median over repeats), for llmsim's collective
 * model. Results go to a TSV file and, with --db, into the calibration
 * store (one run, device_count = GPUs, op class "collective").
 *
 * Build: part of the CMake build when CUDA and NCCL are found
 *   (calib/nccl/CMakeLists.txt); it links the CUDA runtime statically so
 *   it starts, and says "no CUDA GPU found", on a machine with no driver.
 * Run:   llmsim-nccl-bench --gpus 2 --db calib.db --tsv out.tsv
 *        llmsim-nccl-bench --self-test         (one GPU: correctness + a few sizes)
 *
 * No CUDA or NCCL call is made in the parent: a process that has touched the
 * driver cannot fork usable children. Rank 0 creates the NCCL unique id and
 * publishes it through shared memory; ranks report medians the same way.
 * NVLink multicast (NVLS) is always switched off: NCCL_NVLS_ENABLE=0.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "calib/store.h"
#include "nccl_stats.h"

#define MAX_RANKS 16
#define MAX_SIZES 40
#define MAX_ITERS 200

struct shared {
	volatile int id_ready;
	ncclUniqueId id;
	volatile int failed;
	char msg[MAX_RANKS][256];
	/* per rank, op, size: the median of that rank's timed iterations */
	double med_s[MAX_RANKS][NB_OP_COUNT][MAX_SIZES];
	double p10_s[MAX_RANKS][NB_OP_COUNT][MAX_SIZES];
	double p90_s[MAX_RANKS][NB_OP_COUNT][MAX_SIZES];
	double check_err[NB_OP_COUNT];
	/* device facts, from rank 0 */
	char dev_name[256];
	int sms, driver_version, runtime_version, nccl_version;
	double hbm_bytes, l2_bytes, clock_hz;
};

struct opts {
	int gpus, iters, warmup, quick, self_test, ops_mask, timeout_s;
	double min_bytes, max_bytes, factor;
	const char *db, *tsv;
};

static double sizes[MAX_SIZES];
static int nsizes;

#define CK(call)                                                                    \
	do {                                                                        \
		cudaError_t e_ = (call);                                            \
		if (e_ != cudaSuccess) {                                            \
			snprintf(sh->msg[rank], sizeof sh->msg[rank], "%s: %s", #call, \
				 cudaGetErrorString(e_));                           \
			return 1;                                                   \
		}                                                                   \
	} while (0)
#define NK(call)                                                                    \
	do {                                                                        \
		ncclResult_t r_ = (call);                                           \
		if (r_ != ncclSuccess) {                                            \
			snprintf(sh->msg[rank], sizeof sh->msg[rank], "%s: %s", #call, \
				 ncclGetErrorString(r_));                           \
			return 1;                                                   \
		}                                                                   \
	} while (0)

/* Launch one collective of `size` bytes (nccl-tests' size convention). */
static ncclResult_t launch(enum nccl_op op, float *send, float *recv, double size, int n,
			   int rank, ncclComm_t comm, cudaStream_t s)
{
	size_t count = (size_t)(size / sizeof(float));
	switch (op) {
	case NB_ALLREDUCE:
		return ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, s);
	case NB_ALLGATHER:
		return ncclAllGather(send, recv, count / (size_t)n, ncclFloat, comm, s);
	case NB_REDUCESCATTER:
		return ncclReduceScatter(send, recv, count / (size_t)n, ncclFloat, ncclSum, comm, s);
	case NB_ALLTOALL: {
		size_t c = count / (size_t)n;
		ncclResult_t r = ncclGroupStart();
		for (int p = 0; p < n && r == ncclSuccess; p++) {
			r = ncclSend(send + (size_t)p * c, c, ncclFloat, p, comm, s);
			if (r == ncclSuccess)
				r = ncclRecv(recv + (size_t)p * c, c, ncclFloat, p, comm, s);
		}
		ncclResult_t e = ncclGroupEnd();
		return r != ncclSuccess ? r : e;
	}
	case NB_SENDRECV: {
		ncclResult_t r = ncclGroupStart();
		if (r == ncclSuccess)
			r = ncclSend(send, count, ncclFloat, (rank + 1) % n, comm, s);
		if (r == ncclSuccess)
			r = ncclRecv(recv, count, ncclFloat, (rank + n - 1) % n, comm, s);
		ncclResult_t e = ncclGroupEnd();
		return r != ncclSuccess ? r : e;
	}
	case NB_OP_COUNT:
		break;
	}
	return ncclInvalidArgument;
}

/* Value rank r puts at element i of its send buffer: never zero, varies. */
static float val(int r, size_t i) { return (float)(r + 1) + (float)(i % 7) * 0.25f; }

/* Check each op once at a moderate size against the host's expectation. */
static double check_op(enum nccl_op op, float *send, float *recv, float *host, size_t count,
		       int n, int rank, ncclComm_t comm, cudaStream_t s, int *bad)
{
	size_t c = count / (size_t)n;
	for (size_t i = 0; i < count; i++)
		host[i] = val(rank, i);
	*bad = cudaMemcpy(send, host, count * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess;
	*bad |= cudaMemset(recv, 0xff, count * sizeof(float)) != cudaSuccess; /* poison: NaN */
	*bad |= launch(op, send, recv, (double)count * sizeof(float), n, rank, comm, s) != ncclSuccess;
	*bad |= cudaStreamSynchronize(s) != cudaSuccess;
	*bad |= cudaMemcpy(host, recv, count * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess;
	if (*bad)
		return INFINITY;
	double err = 0, ref = 0;
	size_t m = op == NB_REDUCESCATTER ? c : count;
	for (size_t i = 0; i < m; i++) {
		double want;
		switch (op) {
		case NB_ALLREDUCE: want = 0; for (int r = 0; r < n; r++) want += val(r, i); break;
		case NB_REDUCESCATTER: want = 0; for (int r = 0; r < n; r++) want += val(r, (size_t)rank * c + i); break;
		case NB_ALLGATHER: want = val((int)(i / c), i % c); break;
		case NB_ALLTOALL: want = val((int)(i / c), (size_t)rank * c + i % c); break;
		default: want = val((rank + n - 1) % n, i); break;
		}
		if (i / c >= (size_t)n && op != NB_SENDRECV && op != NB_ALLREDUCE)
			continue; /* remainder past n*c is not written */
		double d = (double)host[i] - want;
		err += isfinite(d) ? d * d : 1e30;
		ref += want * want;
	}
	return sqrt(err / ref);
}

static int rank_main(int rank, const struct opts *o, struct shared *sh)
{
	int n = o->gpus;
	CK(cudaSetDevice(rank));
	if (rank == 0) {
		struct cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, 0));
		snprintf(sh->dev_name, sizeof sh->dev_name, "%s", p.name);
		sh->sms = p.multiProcessorCount;
		sh->hbm_bytes = (double)p.totalGlobalMem;
		sh->l2_bytes = p.l2CacheSize;
		int khz = 0;
		cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
		sh->clock_hz = khz * 1e3;
		CK(cudaDriverGetVersion(&sh->driver_version));
		CK(cudaRuntimeGetVersion(&sh->runtime_version));
		NK(ncclGetVersion(&sh->nccl_version));
		NK(ncclGetUniqueId(&sh->id));
		__sync_synchronize();
		sh->id_ready = 1;
	} else {
		for (int t = 0; !sh->id_ready; t++) {
			if (sh->failed || t > 120000) {
				snprintf(sh->msg[rank], sizeof sh->msg[rank], "no NCCL id from rank 0");
				return 1;
			}
			usleep(1000);
		}
		__sync_synchronize();
	}
	ncclComm_t comm;
	cudaStream_t s;
	NK(ncclCommInitRank(&comm, n, sh->id, rank));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	size_t maxb = (size_t)o->max_bytes;
	float *send, *recv;
	CK(cudaMalloc((void **)&send, maxb));
	CK(cudaMalloc((void **)&recv, maxb));
	/* timing data: fill once with non-zero values */
	{
		size_t cnt = maxb / sizeof(float), chunk = 1 << 22;
		float *h = malloc(chunk * sizeof(float));
		if (!h) { snprintf(sh->msg[rank], 256, "out of host memory"); return 1; }
		for (size_t off = 0; off < cnt; off += chunk) {
			size_t m = cnt - off < chunk ? cnt - off : chunk;
			for (size_t i = 0; i < m; i++) h[i] = val(rank, off + i);
			CK(cudaMemcpy(send + off, h, m * sizeof(float), cudaMemcpyHostToDevice));
		}
		free(h);
	}
	cudaEvent_t ev[2 * MAX_ITERS];
	for (int i = 0; i < 2 * o->iters; i++)
		CK(cudaEventCreate(&ev[i]));
	size_t ccount = (size_t)n * 4096;
	float *host = malloc(ccount * sizeof(float));
	if (!host) { snprintf(sh->msg[rank], 256, "out of host memory"); return 1; }
	for (int op = 0; op < NB_OP_COUNT; op++) {
		if (!(o->ops_mask & (1 << op)))
			continue;
		int bad = 0;
		double e = check_op(op, send, recv, host, ccount, n, rank, comm, s, &bad);
		if (bad || !(e < 1e-6)) {
			snprintf(sh->msg[rank], sizeof sh->msg[rank], "%s: wrong result (rel err %g)",
				 nccl_op_name(op), e);
			return 1;
		}
		if (rank == 0)
			sh->check_err[op] = e;
		for (int si = 0; si < nsizes; si++) {
			double sz = sizes[si];
			for (int w = 0; w < o->warmup; w++)
				NK(launch(op, send, recv, sz, n, rank, comm, s));
			for (int it = 0; it < o->iters; it++) {
				CK(cudaEventRecord(ev[2 * it], s));
				NK(launch(op, send, recv, sz, n, rank, comm, s));
				CK(cudaEventRecord(ev[2 * it + 1], s));
			}
			CK(cudaStreamSynchronize(s));
			double t[MAX_ITERS];
			for (int it = 0; it < o->iters; it++) {
				float ms;
				CK(cudaEventElapsedTime(&ms, ev[2 * it], ev[2 * it + 1]));
				t[it] = ms * 1e-3;
			}
			nccl_stats(t, (size_t)o->iters, &sh->med_s[rank][op][si],
				   &sh->p10_s[rank][op][si], &sh->p90_s[rank][op][si]);
		}
	}
	free(host);
	ncclCommDestroy(comm);
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: llmsim-nccl-bench [--gpus N] [--ops allreduce,allgather,reducescatter,alltoall,sendrecv]\n"
	      "         [--min-bytes B] [--max-bytes B] [--factor F] [--iters N] [--warmup N]\n"
	      "         [--tsv FILE] [--db FILE] [--quick] [--self-test] [--timeout-s S]\n"
	      "NCCL collectives over the GPUs of one host, one process per GPU (NVLS off).\n", f);
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.gpus = 0, .iters = 20, .warmup = 5, .min_bytes = 4096,
			   .max_bytes = 4e9, .factor = 4, .ops_mask = (1 << NB_OP_COUNT) - 1,
			   .timeout_s = 540};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help")) { usage(stdout); exit(0); }
		else if (!strcmp(a, "--quick")) o->quick = 1;
		else if (!strcmp(a, "--self-test")) o->self_test = 1;
		else if (!v) { fprintf(stderr, "llmsim-nccl-bench: unknown or incomplete option '%s'\n", a); return 2; }
		else if (!strcmp(a, "--gpus")) { o->gpus = atoi(v); i++; }
		else if (!strcmp(a, "--iters")) { o->iters = atoi(v); i++; }
		else if (!strcmp(a, "--warmup")) { o->warmup = atoi(v); i++; }
		else if (!strcmp(a, "--timeout-s")) { o->timeout_s = atoi(v); i++; }
		else if (!strcmp(a, "--min-bytes")) { o->min_bytes = atof(v); i++; }
		else if (!strcmp(a, "--max-bytes")) { o->max_bytes = atof(v); i++; }
		else if (!strcmp(a, "--factor")) { o->factor = atof(v); i++; }
		else if (!strcmp(a, "--tsv")) { o->tsv = v; i++; }
		else if (!strcmp(a, "--db")) { o->db = v; i++; }
		else if (!strcmp(a, "--ops")) {
			o->ops_mask = 0;
			char buf[256];
			snprintf(buf, sizeof buf, "%s", v);
			for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
				int op = nccl_op_parse(t);
				if (op < 0) { fprintf(stderr, "llmsim-nccl-bench: unknown op '%s'\n", t); return 2; }
				o->ops_mask |= 1 << op;
			}
			i++;
		} else { fprintf(stderr, "llmsim-nccl-bench: unknown option '%s'\n", a); return 2; }
	}
	if (o->self_test) {
		o->gpus = 1;
		o->quick = 1;
	}
	if (o->quick) {
		o->max_bytes = o->max_bytes < 64e6 ? o->max_bytes : 64e6;
		o->iters = 10;
		o->warmup = 2;
	}
	if (o->iters < 3 || o->iters > MAX_ITERS || o->warmup < 0 || o->min_bytes < 4 ||
	    o->max_bytes < o->min_bytes || o->factor <= 1 || o->gpus < 0 || o->gpus > MAX_RANKS) {
		fprintf(stderr, "llmsim-nccl-bench: bad option values (iters 3..%d, gpus 1..%d, factor > 1)\n",
			MAX_ITERS, MAX_RANKS);
		return 2;
	}
	return 0;
}

/* Count GPUs in a throw-away child so the parent never touches CUDA. */
static int count_gpus(char *why, size_t whylen)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		int n = 0;
		cudaError_t e = cudaGetDeviceCount(&n);
		char msg[200];
		int len = snprintf(msg, sizeof msg, "%d %s", e == cudaSuccess ? n : 0,
				   e == cudaSuccess ? "ok" : cudaGetErrorString(e));
		if (write(fd[1], msg, (size_t)len) < 0)
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	char buf[256] = "";
	ssize_t r = read(fd[0], buf, sizeof buf - 1);
	close(fd[0]);
	waitpid(pid, NULL, 0);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	int n = atoi(buf);
	const char *sp = strchr(buf, ' ');
	snprintf(why, whylen, "%s", sp ? sp + 1 : "");
	return n;
}

static void now_iso(char *buf, size_t n)
{
	time_t t = time(NULL);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
}

static int store_results(const struct opts *o, const struct shared *sh,
			 double res[NB_OP_COUNT][MAX_SIZES][3])
{
	struct llmsim_store *st;
	struct llmsim_err err;
	if (llmsim_store_open(o->db, LLMSIM_STORE_CREATE, &st, &err)) {
		fprintf(stderr, "llmsim-nccl-bench: %s\n", err.msg);
		return 1;
	}
	struct llmsim_device_info dev = {0};
	struct llmsim_run_info run = {0};
	/* collectives move bytes: what the buffers hold does not matter */
	snprintf(run.operand_data, sizeof run.operand_data, "any");
	snprintf(dev.name, sizeof dev.name, "%.127s", sh->dev_name);
	snprintf(dev.hw_name, sizeof dev.hw_name, "%s", strstr(sh->dev_name, "H200") ? "h200" :
		 strstr(sh->dev_name, "H100") ? "h100" : strstr(sh->dev_name, "A100") ? "a100" : "");
	dev.sms = sh->sms;
	dev.device_count = o->gpus;
	dev.hbm_bytes = sh->hbm_bytes;
	dev.l2_bytes = sh->l2_bytes;
	dev.sm_clock_max_hz = sh->clock_hz;
	snprintf(dev.driver, sizeof dev.driver, "cuda-driver-api %d", sh->driver_version);
	snprintf(dev.cuda_runtime, sizeof dev.cuda_runtime, "%d.%d", sh->runtime_version / 1000,
		 (sh->runtime_version % 1000) / 10);
	snprintf(dev.nccl, sizeof dev.nccl, "%d", sh->nccl_version);
	now_iso(run.started_at, sizeof run.started_at);
	gethostname(run.host, sizeof run.host);
	snprintf(run.tool, sizeof run.tool, "llmsim-nccl-bench");
	run.quick = o->quick;
	snprintf(run.notes, sizeof run.notes, "NCCL_NVLS_ENABLE=0; one process per GPU; events per call");
	int64_t run_id, case_id;
	if (llmsim_store_run_begin(st, &dev, &run, &run_id, &err))
		goto fail;
	int k = 0;
	for (int op = 0; op < NB_OP_COUNT; op++) {
		if (!(o->ops_mask & (1 << op)))
			continue;
		for (int si = 0; si < nsizes; si++, k++) {
			struct llmsim_case c = {0};
			snprintf(c.op_spec, sizeof c.op_spec,
				 "collective kind=%s bytes=%.0f gpus=%d nodes=1 dtype=fp32",
				 nccl_op_name(op), sizes[si], o->gpus);
			snprintf(c.op_class, sizeof c.op_class, "collective");
			snprintf(c.impl, sizeof c.impl, "nccl");
			/* every third size is held out of the fit */
			snprintf(c.split, sizeof c.split, "%s", si % 3 == 1 ? "holdout" : "fit");
			c.bytes_declared = sizes[si];
			c.reps = o->iters;
			c.time_median_s = res[op][si][0];
			c.time_p10_s = res[op][si][1];
			c.time_p90_s = res[op][si][2];
			c.time_min_s = res[op][si][1];
			c.check_rel_err = sh->check_err[op];
			if (llmsim_store_add_case(st, run_id, &c, &case_id, &err))
				goto fail;
		}
	}
	if (llmsim_store_run_commit(st, run_id, &err))
		goto fail;
	llmsim_store_close(st);
	return 0;
fail:
	fprintf(stderr, "llmsim-nccl-bench: %s\n", err.msg);
	llmsim_store_run_abort(st);
	llmsim_store_close(st);
	return 1;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	setenv("NCCL_NVLS_ENABLE", "0", 1); /* never NVLink multicast */
	char why[200];
	int have = count_gpus(why, sizeof why);
	if (have <= 0) {
		fprintf(stderr, "llmsim-nccl-bench: no CUDA GPU found (%s)\n",
			have < 0 ? "probe failed" : why);
		return 1;
	}
	if (!o.gpus)
		o.gpus = have;
	if (o.gpus > have) {
		fprintf(stderr, "llmsim-nccl-bench: --gpus %d but only %d GPU(s) present\n", o.gpus, have);
		return 1;
	}
	for (double s = o.min_bytes; s <= o.max_bytes * 1.0000001 && nsizes < MAX_SIZES; s *= o.factor) {
		/* multiple of 4 bytes and of 4*gpus elements so every rank's share is whole */
		double q = 4.0 * o.gpus * 4;
		sizes[nsizes++] = fmax(q, floor(s / q) * q);
	}
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("llmsim-nccl-bench: mmap");
		return 1;
	}
	memset(sh, 0, sizeof *sh);
	pid_t pids[MAX_RANKS];
	for (int r = 0; r < o.gpus; r++) {
		pids[r] = fork();
		if (pids[r] == 0)
			_exit(rank_main(r, &o, sh));
		if (pids[r] < 0) {
			perror("llmsim-nccl-bench: fork");
			return 1;
		}
	}
	int failed = 0, left = o.gpus;
	time_t t0 = time(NULL);
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p > 0) {
			left--;
			if (!WIFEXITED(st) || WEXITSTATUS(st)) {
				failed = 1;
				sh->failed = 1;
			}
		} else if (time(NULL) - t0 > o.timeout_s) {
			fprintf(stderr, "llmsim-nccl-bench: timed out after %d s; stopping ranks\n", o.timeout_s);
			for (int r = 0; r < o.gpus; r++)
				kill(pids[r], SIGKILL);
			failed = 1;
		} else {
			usleep(20000);
		}
	}
	for (int r = 0; r < o.gpus; r++)
		if (sh->msg[r][0])
			fprintf(stderr, "llmsim-nccl-bench: rank %d: %s\n", r, sh->msg[r]);
	if (failed)
		return 1;

	/* the collective's time: the slowest rank's median */
	static double res[NB_OP_COUNT][MAX_SIZES][3];
	FILE *tsv = o.tsv ? fopen(o.tsv, "w") : NULL;
	if (o.tsv && !tsv) {
		fprintf(stderr, "llmsim-nccl-bench: cannot write %s: %s\n", o.tsv, strerror(errno));
		return 1;
	}
	if (tsv)
		fprintf(tsv, "op\tgpus\tbytes\ttime_median_s\ttime_p10_s\ttime_p90_s\tbusbw_bytes_per_s\n");
	printf("%-14s %5s %14s %12s %12s %14s\n", "op", "gpus", "bytes", "median_us", "p90_us", "busbw_GB/s");
	for (int op = 0; op < NB_OP_COUNT; op++) {
		if (!(o.ops_mask & (1 << op)))
			continue;
		for (int si = 0; si < nsizes; si++) {
			double m = 0, lo = 0, hi = 0;
			for (int r = 0; r < o.gpus; r++) {
				m = fmax(m, sh->med_s[r][op][si]);
				lo = fmax(lo, sh->p10_s[r][op][si]);
				hi = fmax(hi, sh->p90_s[r][op][si]);
			}
			res[op][si][0] = m;
			res[op][si][1] = lo;
			res[op][si][2] = hi;
			double bus = sizes[si] / m * nccl_busbw_factor(op, o.gpus);
			printf("%-14s %5d %14.0f %12.2f %12.2f %14.2f\n", nccl_op_name(op), o.gpus, sizes[si],
			       m * 1e6, hi * 1e6, bus / 1e9);
			if (tsv)
				fprintf(tsv, "%s\t%d\t%.0f\t%.9g\t%.9g\t%.9g\t%.6g\n", nccl_op_name(op), o.gpus,
					sizes[si], m, lo, hi, bus);
		}
	}
	if (tsv)
		fclose(tsv);
	printf("device: %s, %d GPU(s), NCCL %d, CUDA runtime %d, driver %d\n", sh->dev_name, o.gpus,
	       sh->nccl_version, sh->runtime_version, sh->driver_version);
	if (o.db && store_results(&o, sh, res))
		return 1;
	return 0;
}
