/*
 * test_trace_out.c - `--trace-out FILE.json` of train, infer and serve as a
 * user runs them: the file loads with the project's JSON reader as a
 * Chrome/Perfetto trace (every event well-formed), no track holds two
 * events at once, and the timeline agrees with what the command printed:
 * a training step ends at its step time with m x v forward and backward
 * chunks on every stage, in the pipeline's (m v + p - 1) chunk slots; an
 * inference run's prefill ends at TTFT and its last decode step at the
 * end-to-end latency; a serving run's steps end at its makespan and carry
 * every prompt and decode token. Failures leave no file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsonread.h"
#include "support.h"

static char out[1 << 20], err[1 << 14];
static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/llmsim_trace_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* files in dir (a failed write leaves none, not even a temporary one) */
static int files_in_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

TestSuite(trace_out, .init = make_dir, .fini = remove_dir);

/* the first number named key anywhere in n (depth first) */
static int find_num(const struct llmsim_jnode *n, const char *key, double *v)
{
	if (!n || (n->kind != LLMSIM_J_OBJ && n->kind != LLMSIM_J_ARR))
		return 0;
	for (size_t i = 0; i < n->n; i++) {
		if (n->kind == LLMSIM_J_OBJ && !strcmp(n->keys[i], key) &&
		    n->vals[i]->kind == LLMSIM_J_NUM) {
			*v = n->vals[i]->num;
			return 1;
		}
		if (find_num(n->vals[i], key, v))
			return 1;
	}
	return 0;
}

/* a figure the command printed on stdout (--json) */
static double printed(const char *key)
{
	struct llmsim_jdoc *d;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_json_parse(out, strlen(out), "stdout", &d, &e), 0, "%s", e.msg);
	double v = -1;
	cr_assert(find_num(llmsim_jdoc_root(d), key, &v), "no %s in the output", key);
	llmsim_jdoc_free(d);
	return v;
}

struct ev {
	char name[48], cat[24];
	double ts, dur;       /* us */
	int64_t pid, tid;
	double a[4];          /* the args asked for (NAN: absent) */
};

struct trace {
	struct ev *e;
	int n;
	double end;           /* us: the latest end */
	double pipe_s, own_s; /* otherData: the pipeline as priced, and with each
			       * stage at its own time (train, pp > 1; else -1) */
	double tol;           /* us: the times' rounding (otherData's quantum) */
};

static const char *const arg_keys[4] = {"prefill_tokens", "decode_tokens", "microbatch",
					"chunk"};

static const struct llmsim_jnode *field(const struct llmsim_jnode *o, const char *k,
					enum llmsim_jkind kind)
{
	const struct llmsim_jnode *v = llmsim_jobj_get(o, k);
	cr_assert(v && v->kind == kind, "event field %s missing or %s", k,
		  v ? llmsim_jkind_name(v->kind) : "absent");
	return v;
}

/* Load path as a trace; every event must be well-formed. */
static void load(const char *path, struct trace *t)
{
	struct llmsim_jdoc *d;
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_json_load_file(path, &d, &e), 0, "%s", e.msg);
	const struct llmsim_jnode *root = llmsim_jdoc_root(d);
	cr_assert_eq(root->kind, LLMSIM_J_OBJ);
	cr_expect(llmsim_jobj_get(root, "displayTimeUnit") != NULL);
	const struct llmsim_jnode *evs = field(root, "traceEvents", LLMSIM_J_ARR);
	const struct llmsim_jnode *other = field(root, "otherData", LLMSIM_J_OBJ);
	t->pipe_s = t->own_s = -1;
	find_num(other, "pipeline_s", &t->pipe_s);
	find_num(other, "pipeline_own_stage_times_s", &t->own_s);
	double q = -1;
	cr_assert(find_num(other, "time_quantum_us", &q) && q > 0 && q <= 1e-3 * 100,
		  "quantum %g us", q);
	t->tol = q; /* start and end each rounded to half of it */
	t->e = calloc(evs->n + 1, sizeof *t->e);
	t->n = 0;
	t->end = 0;
	int named = 0;
	for (size_t i = 0; i < evs->n; i++) {
		const struct llmsim_jnode *o = evs->vals[i];
		cr_assert_eq(o->kind, LLMSIM_J_OBJ);
		const char *ph = field(o, "ph", LLMSIM_J_STR)->str;
		field(o, "pid", LLMSIM_J_NUM);
		const struct llmsim_jnode *args = field(o, "args", LLMSIM_J_OBJ);
		if (!strcmp(ph, "M")) {
			named += !strcmp(field(o, "name", LLMSIM_J_STR)->str, "thread_name");
			continue;
		}
		cr_assert_str_eq(ph, "X");
		struct ev *x = &t->e[t->n++];
		snprintf(x->name, sizeof x->name, "%s", field(o, "name", LLMSIM_J_STR)->str);
		snprintf(x->cat, sizeof x->cat, "%s", field(o, "cat", LLMSIM_J_STR)->str);
		x->ts = field(o, "ts", LLMSIM_J_NUM)->num;
		x->dur = field(o, "dur", LLMSIM_J_NUM)->num;
		x->pid = field(o, "pid", LLMSIM_J_NUM)->i;
		x->tid = field(o, "tid", LLMSIM_J_NUM)->i;
		cr_assert(x->ts >= 0 && x->dur > 0, "%s: ts %g dur %g", x->name, x->ts, x->dur);
		for (int k = 0; k < 4; k++) {
			const struct llmsim_jnode *a = llmsim_jobj_get(args, arg_keys[k]);
			x->a[k] = a && a->kind == LLMSIM_J_NUM ? a->num : NAN;
		}
		if (x->ts + x->dur > t->end)
			t->end = x->ts + x->dur;
	}
	cr_assert(t->n > 0 && named > 0, "%d events, %d named tracks", t->n, named);
	llmsim_jdoc_free(d);
}

static int by_track(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* No track holds two events at once (to the JSON numbers' precision). */
static void expect_no_overlap(struct trace *t)
{
	qsort(t->e, (size_t)t->n, sizeof *t->e, by_track);
	double tol = 1e-12 * t->end; /* reading the decimals back */
	for (int i = 0; i + 1 < t->n; i++) {
		const struct ev *a = &t->e[i], *b = &t->e[i + 1];
		if (a->pid == b->pid && a->tid == b->tid)
			cr_expect(b->ts >= a->ts + a->dur - tol,
				  "track %lld/%lld: %s [%.3f, %.3f] overlaps %s at %.3f",
				  (long long)a->pid, (long long)a->tid, a->name, a->ts,
				  a->ts + a->dur, b->name, b->ts);
	}
}

/* A time of the trace (us) against one printed (us): equal to the
 * trace's rounding. */
#define expect_time(t, got, want)                                                       \
	cr_expect(fabs((got) - (want)) <= (t)->tol + 1e-12 * fabs(want),                  \
		  "%s = %.6f us, printed %.6f us (to %g us)", #got, (double)(got), (double)(want), \
		  (t)->tol)

static void trace_release(struct trace *t)
{
	free(t->e);
}

/* Run `llmsim ARGS --json --trace-out DIR/FILE` and load its trace. */
static void run_traced(const char *args, const char *file, struct trace *t)
{
	char cmd[512], path[128];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	snprintf(cmd, sizeof cmd, "%s --json --trace-out %s", args, path);
	int rc = run_llmsim(cmd, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	load(path, t);
}

/* events of category cat */
static int count_cat(const struct trace *t, const char *cat)
{
	int n = 0;
	for (int i = 0; i < t->n; i++)
		n += !strcmp(t->e[i].cat, cat);
	return n;
}

/* m micro-batches of v chunks on each of p stages: every stage runs m v
 * forward and m v backward chunks, and a stage's first forward to its last
 * backward spans the pipeline's m v + p - 1 slots of a forward and a
 * backward chunk (Narayanan et al. 2021, Sec. 2.2: the 1F1B bubble is
 * (p - 1)(tf + tb), interleaving divides it by v). */
static void check_train(const char *args, int p, int m, int v)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "train %s", args);
	struct trace t;
	run_traced(cmd, "train.json", &t);
	double step_us = printed("step_time_s") * 1e6, bubble_us = printed("bubble") * 1e6;
	expect_no_overlap(&t);
	expect_time(&t, t.end, step_us);
	/* the stages: the pids with chunks, in order (the events are sorted) */
	int64_t pid[64];
	int np = 0;
	for (int i = 0; i < t.n; i++)
		if (!strcmp(t.e[i].cat, "forward") && (!np || pid[np - 1] != t.e[i].pid) && np < 64)
			pid[np++] = t.e[i].pid;
	cr_assert_eq(np, p, "%d stages with chunks, want %d", np, p);
	for (int s = 0; s < p; s++) {
		int nf = 0, nb = 0;
		double first = INFINITY, last = 0, f = 0, b = 0;
		for (int i = 0; i < t.n; i++) {
			const struct ev *e = &t.e[i];
			int fw = !strcmp(e->cat, "forward"), bw = !strcmp(e->cat, "backward");
			if ((!fw && !bw) || e->pid != pid[s])
				continue;
			nf += fw;
			nb += bw;
			if (fw) {
				first = fmin(first, e->ts);
				f = e->dur;
			} else {
				last = fmax(last, e->ts + e->dur);
				b = e->dur;
			}
			cr_expect(e->a[2] >= 0 && e->a[2] < m && e->a[3] >= 0 && e->a[3] < v,
				  "%s: micro-batch %g chunk %g", e->name, e->a[2], e->a[3]);
		}
		cr_expect_eq(nf, m * v, "stage %d: %d forward chunks, want %d", s, nf, m * v);
		cr_expect_eq(nb, m * v, "stage %d: %d backward chunks, want %d", s, nb, m * v);
		if (s == 0) { /* the first stage starts first and ends last */
			expect_close(last - first, (m * v + p - 1) * (f + b), 1e-6);
			/* the printed bubble is the schedule's */
			expect_close(bubble_us, (p - 1) * (f + b), 1e-6);
			expect_close(t.pipe_s * 1e6, (m * v + p - 1) * (f + b), 1e-6);
			/* no stage is slower than the slowest: its own times
			 * can only end the pipeline sooner */
			cr_expect(t.own_s > 0 && t.own_s <= t.pipe_s, "%g > %g", t.own_s, t.pipe_s);
		}
	}
	trace_release(&t);
}

Test(trace_out, train_1f1b_pp4_dp2)
{
	/* 16 GPUs = tp 2 x pp 4 x dp 2; 32 sequences / (1 x dp 2) = 16 micro-batches */
	check_train("--model 8b --gpus 16 --tp 2 --pp 4 --global-batch 32 --seq 2048 --zero 1", 4,
		    16, 1);
}

Test(trace_out, train_interleaved_pp4_dp2)
{
	/* 16 micro-batches, 2 chunks each, selective recompute and ZeRO-2 */
	check_train("--model 8b --gpus 16 --tp 2 --pp 4 --schedule interleaved --chunks 2 "
		    "--global-batch 32 --seq 2048 --zero 2 --recompute selective",
		    4, 16, 2);
}

Test(trace_out, train_1f1b_fewer_microbatches_than_stages)
{
	/* 2 micro-batches on 4 stages: the pipeline never fills */
	check_train("--model 8b --gpus 8 --pp 4 --dp 2 --global-batch 4 --seq 2048", 4, 2, 1);
}

/* The chunks of stage pid in time order, names joined by spaces. */
static void stage_names(const struct trace *t, int64_t pid, char *buf, size_t size)
{
	buf[0] = 0;
	for (int i = 0; i < t->n; i++) /* sorted by track, then time */
		if (t->e[i].pid == pid &&
		    (!strcmp(t->e[i].cat, "forward") || !strcmp(t->e[i].cat, "backward"))) {
			size_t n = strlen(buf);
			snprintf(buf + n, size - n, "%s%s", n ? " " : "", t->e[i].name);
		}
}

Test(trace_out, train_megatron_order)
{
	/* Megatron-LM's schedules.py, by hand: 1F1B on 2 stages, 4 micro-batches:
	 * stage 0 warms up with p - 1 = 1 forward, stage 1 with none */
	struct trace t;
	char got[512];
	run_traced("train --model llama-3.2-1b --gpus 2 --pp 2 --global-batch 4 --seq 1024",
		   "order.json", &t);
	expect_no_overlap(&t);
	stage_names(&t, 0, got, sizeof got);
	cr_expect_str_eq(got, "F0 F1 B0 F2 B1 F3 B2 B3");
	stage_names(&t, 1, got, sizeof got);
	cr_expect_str_eq(got, "F0 B0 F1 B1 F2 B2 F3 B3");
	trace_release(&t);
	/* interleaved, v = 2: stage 0 warms up with (p - 1) 2 + (v - 1) p = 4
	 * forwards, the k-th of chunk (k / p) % v and micro-batch
	 * (k / (p v)) p + k % p; backwards take the chunks in reverse */
	run_traced("train --model llama-3.2-1b --gpus 2 --pp 2 --global-batch 4 --seq 1024 "
		   "--schedule interleaved --chunks 2",
		   "order2.json", &t);
	expect_no_overlap(&t);
	stage_names(&t, 0, got, sizeof got);
	cr_expect_str_eq(got, "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 "
			      "B2.1 B3.1 B2.0 B3.0");
	trace_release(&t);
}

Test(trace_out, train_torch_one_stream)
{
	struct trace t;
	run_traced("train --model llama-3.2-1b --engine torch --micro-batch 2 --seq 1024",
		   "torch.json", &t);
	expect_no_overlap(&t);
	expect_time(&t, t.end, printed("step_time_s") * 1e6);
	int fwd = 0, bwd = 0, opt = 0;
	for (int i = 0; i < t.n; i++) {
		fwd += !strcmp(t.e[i].name, "forward 0");
		bwd += !strcmp(t.e[i].name, "backward 0");
		opt += !strcmp(t.e[i].name, "optimizer");
	}
	/* one micro-batch a step: its forward, its backward, one optimizer */
	cr_expect(fwd == 1 && bwd == 1 && opt == 1, "%d %d %d", fwd, bwd, opt);
	trace_release(&t);
}

Test(trace_out, train_torch_past_three_microbatches)
{
	/* 5 micro-batches: the step simulates 3 and extends by the third's
	 * time, so the trace shows 3 and one block of the other 2 */
	struct trace t;
	run_traced("train --model llama-3.2-1b --engine torch --micro-batch 1 --global-batch 5 "
		   "--seq 512",
		   "torch5.json", &t);
	expect_no_overlap(&t);
	expect_time(&t, t.end, printed("step_time_s") * 1e6);
	cr_expect_eq(count_cat(&t, "forward"), 3);
	cr_expect_eq(count_cat(&t, "extrapolated"), 1);
	trace_release(&t);
}

Test(trace_out, infer_prefill_then_decode)
{
	struct trace t;
	/* 16 prompts of 4096 in steps of 8192 tokens: 2 a step, 8 steps; 199 decode steps */
	run_traced("infer --model 8b --batch 16 --prompt 4096 --output 200 --max-tokens 8192",
		   "infer.json", &t);
	expect_no_overlap(&t);
	double pre_end = 0;
	for (int i = 0; i < t.n; i++)
		if (!strcmp(t.e[i].cat, "prefill"))
			pre_end = fmax(pre_end, t.e[i].ts + t.e[i].dur);
	cr_expect_eq(count_cat(&t, "prefill"), 8);
	cr_expect_eq(count_cat(&t, "decode"), 199);
	/* the first prefill step's kernels (its ops, on a track of their own)
	 * fill it: a CUDA graph's step is its kernels and the gaps between */
	double first_end = INFINITY, kernels_end = 0;
	for (int i = 0; i < t.n; i++)
		if (!strcmp(t.e[i].cat, "prefill"))
			first_end = fmin(first_end, t.e[i].ts + t.e[i].dur);
	for (int i = 0; i < t.n; i++)
		if (!strcmp(t.e[i].cat, "kernel") && t.e[i].ts < first_end)
			kernels_end = fmax(kernels_end, t.e[i].ts + t.e[i].dur);
	cr_expect(count_cat(&t, "kernel") > 2 * 32, "one layer's ops at least, 32 layers");
	expect_time(&t, kernels_end, first_end);
	expect_time(&t, pre_end, printed("ttft_s") * 1e6);
	expect_time(&t, t.end, printed("e2e_s") * 1e6);
	trace_release(&t);
}

Test(trace_out, infer_chunked_prompt)
{
	struct trace t;
	/* 2 prompts of 20000 tokens in 8192-token chunks: 3 each; 4 decode steps */
	run_traced("infer --model 8b --batch 2 --prompt 20000 --output 5 --max-tokens 8192",
		   "chunked.json", &t);
	cr_expect_eq(count_cat(&t, "prefill"), 6);
	cr_expect_eq(count_cat(&t, "decode"), 4);
	expect_time(&t, t.end, printed("e2e_s") * 1e6);
	trace_release(&t);
}

Test(trace_out, serve_steps_and_requests)
{
	struct trace t;
	run_traced("serve --model 8b --requests 300 --offline --prompt 512 --output 64",
		   "serve.json", &t);
	expect_no_overlap(&t);
	/* offline: everyone arrives at 0, so the steps end at the makespan */
	expect_time(&t, t.end, printed("duration_s") * 1e6);
	cr_assert_eq(printed("preemptions"), 0);
	double pre = 0, dec = 0;
	for (int i = 0; i < t.n; i++)
		if (!strcmp(t.e[i].cat, "step")) {
			pre += t.e[i].a[0];
			dec += t.e[i].a[1];
		}
	cr_expect_eq(count_cat(&t, "step"), (int)printed("steps"));
	/* every prompt token prefilled once (no preemption); the first output
	 * token comes with the prefill, the other 63 from decode steps */
	cr_expect_eq(pre, 300.0 * 512);
	cr_expect_eq(dec, 300.0 * 63);
	cr_expect_eq(count_cat(&t, "request"), 2 * 300);
	trace_release(&t);
}

Test(trace_out, serve_caps_the_requests_written)
{
	struct trace t;
	run_traced("serve --model 8b --requests 1500 --rate 50 --prompt 128 --output 8",
		   "capped.json", &t);
	cr_expect(strstr(err, "the first 1000 of 1500") != NULL, "%s", err);
	expect_no_overlap(&t);
	cr_expect_eq(count_cat(&t, "request"), 2 * 1000);
	trace_release(&t);
}

Test(trace_out, unwritable_path_fails_cleanly)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "train --model 8b --gpus 8 --trace-out %s/no/such/dir/t.json",
		 dir);
	cr_expect_eq(run_llmsim(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	cr_expect(strstr(err, "llmsim train: --trace-out ") == err, "%s", err);
	/* a folder is no file to write */
	snprintf(cmd, sizeof cmd, "infer --model 8b --batch 1 --trace-out %s", dir);
	cr_expect_eq(run_llmsim(cmd, out, sizeof out, err, sizeof err), 1);
	cr_expect(strstr(err, "not a regular file") != NULL, "%s", err);
	cr_expect_eq(files_in_dir(), 0, "a failed write left a file");
}
