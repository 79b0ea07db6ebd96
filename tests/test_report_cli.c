/*
 * test_report_cli.c - `llmsim report` and `llmsim roofline` end to end:
 * the pictures are PNGs of the size asked for, the page is well formed and
 * embeds every picture, it loads in headless Chromium, failures leave the
 * file system as it was, the op table agrees with `llmsim op`, and
 * calibration measurements appear beside the predictions.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fmt.h"
#include "calib/store.h"
#include "hw/gpu.h"
#include "reports/html.h"
#include "reports/outdir.h"
#include "reports/png.h"
#include "reports/report.h"
#include "sim/sim.h"
#include "support.h"

static char root[64];

static void make_root(void)
{
	snprintf(root, sizeof root, "/tmp/llmsim-test-rcli-XXXXXX");
	cr_assert(mkdtemp(root));
}

static void drop_root(void)
{
	llmsim_rmtree(root);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = (size_t)n;
	}
	return buf;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* ---- a small HTML well-formedness check --------------------------------
 * Every element the report emits is either void (meta, img, br) or closed
 * in order; <style> content is skipped; attribute values are quoted. */
static int html_check(const char *s, char *why, size_t size)
{
	static const char *const void_tags[] = {"meta", "img", "br", "hr", "link", "input", NULL};
	char stack[64][16];
	int depth = 0, saw_body = 0;
	const char *p = s;
	while ((p = strchr(p, '<'))) {
		if (!strncmp(p, "<!--", 4)) {
			p = strstr(p, "-->");
			if (!p)
				return snprintf(why, size, "unterminated comment"), -1;
			p += 3;
			continue;
		}
		if (!strncmp(p, "<!DOCTYPE", 9)) {
			p = strchr(p, '>');
			if (!p)
				return snprintf(why, size, "bad doctype"), -1;
			continue;
		}
		int close = p[1] == '/';
		const char *q = p + 1 + close;
		char name[16];
		size_t n = 0;
		while (isalnum((unsigned char)q[n]) && n < sizeof name - 1) {
			name[n] = (char)tolower((unsigned char)q[n]);
			n++;
		}
		name[n] = 0;
		if (!n)
			return snprintf(why, size, "stray '<' at offset %ld", (long)(p - s)), -1;
		/* Find the end of the tag outside quoted attribute values. */
		const char *e = q + n;
		char quote = 0;
		for (; *e && (quote || *e != '>'); e++)
			if (*e == '"' || *e == '\'')
				quote = quote == *e ? 0 : quote ? quote : *e;
		if (!*e)
			return snprintf(why, size, "unterminated <%s>", name), -1;
		if (close) {
			if (!depth || strcmp(stack[depth - 1], name))
				return snprintf(why, size, "</%s> closes <%s>", name,
						depth ? stack[depth - 1] : "nothing"), -1;
			depth--;
		} else {
			int is_void = 0;
			for (int i = 0; void_tags[i]; i++)
				is_void |= !strcmp(void_tags[i], name);
			saw_body |= !strcmp(name, "body");
			if (!is_void) {
				if (depth == 64)
					return snprintf(why, size, "too deep"), -1;
				snprintf(stack[depth++], sizeof stack[0], "%s", name);
			}
			if (!strcmp(name, "style")) {
				e = strstr(e, "</style>");
				if (!e)
					return snprintf(why, size, "unterminated <style>"), -1;
				e--; /* p = e + 1 lands on "</style>" */
			}
		}
		p = e + 1;
	}
	if (depth)
		return snprintf(why, size, "<%s> never closed", stack[depth - 1]), -1;
	if (!saw_body)
		return snprintf(why, size, "no <body>"), -1;
	return 0;
}

Test(report_cli, html_checker_catches_mistakes)
{
	char why[128];
	cr_expect_eq(html_check("<!DOCTYPE html><html><body><p>a<br>b</p><img src=\"x>y\"></body></html>",
				why, sizeof why), 0, "%s", why);
	cr_expect_eq(html_check("<html><body><p>a</body></html>", why, sizeof why), -1);
	cr_expect_eq(html_check("<html><body><p>a</p>", why, sizeof why), -1);
	cr_expect_eq(html_check("<html><body>1 < 2</body></html>", why, sizeof why), -1);
}

/* ---- running the report ---------------------------------------------------- */

static int llmsim(const char *args, char *out, size_t n, char *err, size_t en)
{
	return run_llmsim(args, out, n, err, en);
}

/* Check a PNG file and return 0 when it is width x height. */
static void expect_png(const char *path, int width, int height)
{
	int w = 0, h = 0;
	struct llmsim_err e = {0};
	cr_expect_eq(llmsim_png_info(path, &w, &h, &e), 0, "%s: %s", path, e.msg);
	cr_expect_eq(w, width, "%s width %d, asked %d", path, w, width);
	cr_expect_eq(h, height, "%s height %d, asked %d", path, h, height);
}

/* Every <img src="data:image/png;base64,..."> decodes to a PNG equal to
 * one of the PNG files in dir, and every PNG file is shown. Returns the
 * number of pictures. */
static int check_pictures(const char *html, const char *dir)
{
	static const char *const files[] = {"roofline.png", "memory.png", "step_time.png",
					    "configs.png", "latency_throughput.png"};
	int shown[5] = {0}, n = 0;
	const char *p = html, *tag = "src=\"data:image/png;base64,";
	while ((p = strstr(p, tag))) {
		p += strlen(tag);
		const char *e = strchr(p, '"');
		cr_assert(e);
		unsigned char *buf = malloc((size_t)(e - p));
		long len = llmsim_base64_decode(p, (size_t)(e - p), buf);
		cr_assert(len > 0, "picture %d is not valid base64", n);
		cr_expect_eq(llmsim_png_info_buf(buf, (size_t)len, "data uri", NULL, NULL, NULL), 0);
		int match = 0;
		for (int i = 0; i < 5; i++) {
			char path[256];
			size_t flen = 0;
			snprintf(path, sizeof path, "%s/%s", dir, files[i]);
			char *f = slurp(path, &flen);
			if (f && flen == (size_t)len && !memcmp(f, buf, flen)) {
				shown[i] = match = 1;
			}
			free(f);
		}
		cr_expect(match, "embedded picture %d matches no file in %s", n, dir);
		free(buf);
		n++;
		p = e;
	}
	for (int i = 0; i < 5; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		if (access(path, F_OK) == 0)
			cr_expect(shown[i], "%s is not shown in the page", files[i]);
	}
	return n;
}

Test(report_cli, serving_report_is_complete, .init = make_root, .fini = drop_root, .timeout = 180)
{
	char args[512], out[8192], err[1024], dir[128], path[256], why[160];
	snprintf(dir, sizeof dir, "%s/serve", root);
	snprintf(args, sizeof args,
		 "report --workload serve --model 8b --gpu h200 --batch 4 --seq 2048 --output 128 "
		 "--width 1000 --height 700 --out %s --json", dir);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	/* --json lists every file written, and each exists. */
	static const char *const names[] = {"index.html", "roofline.png", "memory.png",
					    "step_time.png", "configs.png",
					    "latency_throughput.png"};
	for (int i = 0; i < 6; i++) {
		snprintf(path, sizeof path, "\"%s/%s\"", dir, names[i]);
		cr_expect(strstr(out, path), "--json lacks %s:\n%s", path, out);
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		cr_expect_eq(access(path, F_OK), 0, "%s missing", path);
	}
	cr_expect(strstr(out, "\"tpot_s\": "), "%s", out);
	/* the six, and the marker that lets --force replace the folder */
	snprintf(path, sizeof path, "%s/%s", dir, LLMSIM_OUTDIR_MARKER);
	cr_expect_eq(access(path, F_OK), 0, "%s missing", path);
	cr_expect_eq(count_entries(dir), 7);
	cr_expect_eq(count_entries(root), 1, "no staging folder left beside it");

	/* Pictures: PNG of exactly the size gnuplot was asked for. */
	snprintf(path, sizeof path, "%s/roofline.png", dir);
	expect_png(path, 1000, 700);
	for (int i = 2; i < 6; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		expect_png(path, LLMSIM_REPORT_BAR_WIDTH, LLMSIM_REPORT_BAR_HEIGHT);
	}

	/* The page: well formed, self-contained, every picture embedded. */
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	cr_expect_eq(html_check(html, why, sizeof why), 0, "index.html: %s", why);
	cr_expect_eq(check_pictures(html, dir), 5);
	cr_expect_null(strstr(html, "http://"), "no external resource");
	cr_expect_null(strstr(html, "https://"), "no external resource");
	cr_expect_null(strstr(html, "<script"), "no scripts");
	cr_expect_null(strstr(html, "<link"), "no external stylesheets");
	/* The summary and the sections the task asks for. */
	cr_expect(strstr(html, "NVIDIA H200"));
	cr_expect(strstr(html, "Llama 3.1 8B"));
	cr_expect(strstr(html, "id=\"ops\""));
	cr_expect(strstr(html, "id=\"calibration\""));
	cr_expect(strstr(html, "id=\"assumptions\""));
	cr_expect(strstr(html, "id=\"serving\""));
	cr_expect(strstr(html, "The plan tried "), "the serving plan's table");
	cr_expect_null(strstr(html, "class=\"na\">no serving"), "serving is available");
	free(html);
}

Test(report_cli, training_report, .init = make_root, .fini = drop_root, .timeout = 180)
{
	char args[512], out[8192], err[1024], dir[128], path[256], why[160];
	snprintf(dir, sizeof dir, "%s/train", root);
	snprintf(args, sizeof args,
		 "report --model 8b --gpu h200 --workload train --seq 2048 --global-batch 256 "
		 "--gpus 8 --top 3 --out %s", dir);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(strstr(out, "training ("), "%s", out);
	static const char *const names[] = {"memory.png", "step_time.png", "configs.png"};
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		expect_png(path, LLMSIM_REPORT_BAR_WIDTH, LLMSIM_REPORT_BAR_HEIGHT);
	}
	snprintf(path, sizeof path, "%s/latency_throughput.png", dir);
	cr_expect_neq(access(path, F_OK), 0, "no serving curve for training");
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	cr_expect_eq(html_check(html, why, sizeof why), 0, "index.html: %s", why);
	cr_expect_eq(check_pictures(html, dir), 4);
	cr_expect(strstr(html, ">forward<"));
	cr_expect(strstr(html, ">backward<"));
	cr_expect(strstr(html, "qkv_proj.wgrad"));
	free(html);
}

/* 70B on 8 H200s trains only with offload (18 B x 70.6 B > 8 x 141 GB): the
 * report's table shows the offload and its time and host memory, its text
 * says what is offloaded, and its names tell configurations apart (the
 * offload mode is part of them). */
Test(report_cli, training_report_offload, .init = make_root, .fini = drop_root, .timeout = 180)
{
	char args[512], out[8192], err[1024], dir[128], path[256];
	snprintf(dir, sizeof dir, "%s/train70", root);
	snprintf(args, sizeof args, "report --model 70b --gpu h200 --workload train --gpus 8 "
		 "--top 3 --out %s", dir);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	cr_expect(strstr(html, ">offload time<") && strstr(html, ">host memory per node<"));
	cr_expect(strstr(html, "ZeRO-Offload") || strstr(html, "ZeRO-Infinity"));
	cr_expect(strstr(html, " off-opt") || strstr(html, " off-params"));
	cr_expect(strstr(html, "pruned") != NULL);
	free(html);
}

/* A model whose weights do not fit one GPU still gets its roofline; the
 * serving sections say why they are missing. */
Test(report_cli, missing_section_is_marked, .init = make_root, .fini = drop_root, .timeout = 180)
{
	char args[512], out[8192], err[1024], dir[128], path[256], why[160];
	snprintf(dir, sizeof dir, "%s/big", root);
	/* Llama 3.1 405B in bf16: 2 x 405e9 B = 810 GB > 141 GB of one H200. */
	snprintf(args, sizeof args, "report --workload serve --model 405b --gpu h200 --out %s", dir);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(strstr(out, "not available: serving"), "%s", out);
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	cr_expect_eq(html_check(html, why, sizeof why), 0, "index.html: %s", why);
	cr_expect(strstr(html, "<p class=\"na\">"));
	/* The roofline, and the serving plan over 8 GPUs (where it fits). */
	cr_expect_eq(check_pictures(html, dir), 2);
	cr_expect(strstr(html, "The plan tried "), "the serving plan's table");
	free(html);
}

Test(report_cli, page_loads_in_headless_chromium, .init = make_root, .fini = drop_root,
     .timeout = 240)
{
	char args[512], err[1024], dir[128], cmd[1024], shot[160];
	const char *browser = NULL;
	static const char *const names[] = {"chromium", "chromium-browser", NULL};
	for (int i = 0; names[i] && !browser; i++) {
		snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", names[i]);
		if (system(cmd) == 0)
			browser = names[i];
	}
	if (!browser)
		cr_skip_test("chromium is not installed (apt-get install chromium): "
			     "the page was not rendered");
	snprintf(dir, sizeof dir, "%s/page", root);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s", dir);
	int rc = llmsim(args, NULL, 0, err, sizeof err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	snprintf(shot, sizeof shot, "%s/shot.png", root);
	/* Its own HOME and profile: CI may have neither writable. */
	snprintf(cmd, sizeof cmd,
		 "HOME=%s timeout 180 %s --headless --no-sandbox --disable-gpu "
		 "--user-data-dir=%s/profile --screenshot=%s --window-size=1280,2000 "
		 "file://%s/index.html >/dev/null 2>&1",
		 root, browser, root, shot, dir);
	rc = system(cmd);
	cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "chromium failed (status %d)", rc);
	expect_png(shot, 1280, 2000);
	size_t len = 0;
	char *png = slurp(shot, &len);
	/* A rendered page with pictures compresses far worse than a blank one. */
	cr_expect(len > 50000, "screenshot is only %zu bytes: blank page?", len);
	free(png);
}

/* ---- failures leave everything as it was ------------------------------------ */

Test(report_cli, refuses_a_non_empty_folder, .init = make_root, .fini = drop_root)
{
	char args[512], out[1024], err[1024], dir[128], keep[160];
	snprintf(dir, sizeof dir, "%s/full", root);
	snprintf(keep, sizeof keep, "%s/keep.txt", dir);
	mkdir(dir, 0755);
	FILE *f = fopen(keep, "w");
	fputs("mine\n", f);
	fclose(f);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s", dir);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "one line: %s", err);
	cr_expect(strncmp(err, "llmsim report: ", 15) == 0, "%s", err);
	cr_expect(strstr(err, "not empty"), "%s", err);
	cr_expect_eq(out[0], 0, "nothing on stdout");
	cr_expect_eq(count_entries(dir), 1);
	cr_expect_eq(count_entries(root), 1, "no staging folder left");
	char *s = slurp(keep, NULL);
	cr_expect_str_eq(s, "mine\n");
	free(s);

	/* --force does not replace it either: it holds no earlier report */
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s --force", dir);
	rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "one line: %s", err);
	cr_expect(strstr(err, "holds no earlier llmsim report"), "%s", err);
	s = slurp(keep, NULL);
	cr_expect_str_eq(s, "mine\n");
	free(s);
	cr_expect_eq(count_entries(dir), 1);
	cr_expect_eq(count_entries(root), 1, "no staging folder left");

	/* a folder an earlier report wrote: --force replaces it */
	char rep[128];
	snprintf(rep, sizeof rep, "%s/rep", root);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s", rep);
	rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	snprintf(keep, sizeof keep, "%s/old.txt", rep);
	f = fopen(keep, "w");
	fclose(f);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s --force", rep);
	rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 0, "%s", err);
	cr_expect_neq(access(keep, F_OK), 0, "the old report's contents are gone");
	cr_expect_eq(count_entries(root), 2, "no staging folder left");
}

Test(report_cli, refuses_an_unwritable_place, .init = make_root, .fini = drop_root)
{
	char args[512], out[1024], err[1024], file[128];
	/* procfs takes no new folders, even from root. */
	int rc = llmsim("report --workload serve --model 8b --gpu h200 --out /proc/llmsim-report-test",
			out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "one line: %s", err);
	cr_expect(strstr(err, "llmsim report: cannot create output folder"), "%s", err);
	/* Under a regular file. */
	snprintf(file, sizeof file, "%s/file", root);
	FILE *f = fopen(file, "w");
	fclose(f);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s/sub", file);
	rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "one line: %s", err);
	cr_expect_eq(count_entries(root), 1);
	if (geteuid() != 0) {
		/* A read-only parent (root ignores permissions, so only then). */
		char ro[128];
		snprintf(ro, sizeof ro, "%s/ro", root);
		mkdir(ro, 0555);
		snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --out %s/x", ro);
		rc = llmsim(args, out, sizeof out, err, sizeof err);
		cr_expect_eq(rc, 1);
		cr_expect_eq(count_entries(ro), 0);
		chmod(ro, 0755);
	}
}

Test(report_cli, no_gnuplot_in_path, .init = make_root, .fini = drop_root)
{
	char cmd[1024], dir[128], errf[160];
	snprintf(dir, sizeof dir, "%s/nognuplot", root);
	snprintf(errf, sizeof errf, "%s/err.txt", root);
	snprintf(cmd, sizeof cmd,
		 "env PATH=%s %s/cli/llmsim report --workload serve --model 8b --gpu h200 --out %s "
		 ">/dev/null 2>%s", root, LLMSIM_BUILD_DIR, dir, errf);
	int rc = system(cmd);
	cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "status %d", rc);
	char *err = slurp(errf, NULL);
	cr_assert(err);
	cr_expect_str_eq(err, "llmsim report: gnuplot not found in PATH "
			      "(apt-get install gnuplot-nox)\n");
	free(err);
	cr_expect_neq(access(dir, F_OK), 0, "nothing written");
	cr_expect_eq(count_entries(root), 1, "only err.txt");
}

Test(report_cli, usage_errors)
{
	char err[1024];
	cr_expect_eq(llmsim("report --workload serve --model 8b", NULL, 0, err, sizeof err), 2);
	cr_expect(strstr(err, "--out is required"), "%s", err);
	cr_expect_eq(llmsim("report --workload serve --model 8b --out /tmp/x --dtype bf17", NULL, 0, err,
			    sizeof err), 2);
	cr_expect_eq(llmsim("roofline --workload serve --gpu h200 --batch 0", NULL, 0, err, sizeof err), 2);
	cr_expect_eq(llmsim("roofline --workload serve --gpu nosuchgpu", NULL, 0, err, sizeof err), 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
}

/* ---- the numbers agree with `llmsim op` --------------------------------------- */

static double json_num(const char *json, const char *key)
{
	char k[80];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *p = strstr(json, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* The text of the n-th <td> (0-based) after `from`, tags stripped. */
static void td(const char *from, int n, char *out, size_t size)
{
	const char *p = from;
	out[0] = 0;
	for (int i = 0; i <= n; i++) {
		p = strstr(p, "<td");
		if (!p)
			return;
		p = strchr(p, '>') + 1;
	}
	size_t k = 0;
	for (int in_tag = 0; *p && strncmp(p, "</td>", 5) && k + 1 < size; p++) {
		if (*p == '<')
			in_tag = 1;
		else if (*p == '>')
			in_tag = 0;
		else if (!in_tag)
			out[k++] = *p;
	}
	out[k] = 0;
}

/* Compare the page's row for (phase, op) with `llmsim op spec` of the spec
 * the row shows: FLOPs and time must print the same. */
static void row_agrees(const char *html, const char *phase, const char *op, double *flops)
{
	char key[128], spec[512], fl[64], tm[64], args[700], out[8192], err[1024];
	char a[LLMSIM_FMT_MAX];
	snprintf(key, sizeof key, "<td class=\"l\">%s</td><td class=\"l\">%s</td>", phase, op);
	const char *row = strstr(html, key);
	cr_assert(row, "no row %s/%s in the page", phase, op);
	/* phase, op, FLOPs, bytes, intensity, attainable, time, measured,
	 * achieved, of roof, bound, spec */
	td(row, 2, fl, sizeof fl);
	td(row, 6, tm, sizeof tm);
	td(row, 11, spec, sizeof spec);
	cr_assert(spec[0], "no spec in the %s/%s row", phase, op);
	snprintf(args, sizeof args, "op spec \"%s\" --gpu h200 --load lone --json", spec);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s: %s", args, err);
	double f = json_num(out, "flops"), t = json_num(out, "time_s");
	cr_expect_str_eq(fl, llmsim_fmt_flops(a, f), "%s %s FLOPs", phase, op);
	cr_expect_str_eq(tm, llmsim_fmt_time(a, t), "%s %s time", phase, op);
	if (flops)
		*flops = f;
}

Test(report_cli, op_table_agrees_with_llmsim_op, .init = make_root, .fini = drop_root,
     .timeout = 120)
{
	char args[512], err[1024], dir[128], path[256];
	snprintf(dir, sizeof dir, "%s/ops", root);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --seq 4096 --out %s", dir);
	cr_assert_eq(llmsim(args, NULL, 0, err, sizeof err), 0, "%s", err);
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	double f = 0;
	row_agrees(html, "prefill", "qkv_proj", &f);
	/* Llama 3.1 8B QKV over 4096 tokens: 2 x 4096 x 6144 x 4096 FLOPs. */
	expect_close(f, 2.0 * 4096 * 6144 * 4096, 1e-9);
	row_agrees(html, "prefill", "attention", NULL);
	row_agrees(html, "decode", "attention", NULL);
	row_agrees(html, "decode", "down_proj", &f);
	expect_close(f, 2.0 * 1 * 4096 * 14336, 1e-9); /* one token through down */
	row_agrees(html, "prefill", "attn_norm", NULL);
	free(html);
}

Test(report_cli, roofline_json_agrees_with_llmsim_op)
{
	static char out[65536], op[8192];
	char err[1024];
	int rc = llmsim("roofline --workload serve --gpu h200 --model 8b --seq 4096 --json", out, sizeof out, err,
			sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	/* BF16 ridge point from the datasheet: 989.4 TFLOP/s / 4.8 TB/s. */
	const char *bf = strstr(out, "\"name\": \"BF16 tensor\"");
	cr_assert(bf);
	expect_close(json_num(bf, "ridge_flops_per_byte"), 989.4 / 4.8, 1e-3);
	const char *qkv = strstr(out, "\"name\": \"qkv_proj\"");
	cr_assert(qkv, "%s", out);
	rc = llmsim("op gemm --m 4096 --n 6144 --k 4096 --gpu h200 --load lone --json", op, sizeof op, err,
		    sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	expect_close(json_num(qkv, "flops"), json_num(op, "flops"), 1e-9);
	expect_close(json_num(qkv, "time_s"), json_num(op, "time_s"), 1e-9);
	expect_close(json_num(qkv, "flops"), 2.0 * 4096 * 6144 * 4096, 1e-9);
	/* Human output: the table of ceilings and of ops. */
	rc = llmsim("roofline --workload serve --gpu h200 --model 8b", out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect(strstr(out, "FP32 CUDA core"), "%s", out);
	cr_expect(strstr(out, "(layer total)"), "%s", out);
}

/* ---- calibration measurements beside the predictions ----------------------- */

/* A store with three measured H200 cases, each measured 25% slower than
 * predicted, plus a copy kernel (no FLOPs: not on the roofline). The
 * absolute error |pred - meas| / meas is then 0.25 / 1.25 = 20.0%. */
static void make_db(const char *path)
{
	static const char *const specs[] = {"gemm m=4096 n=4096 k=4096",
					    "gemm m=16 n=8192 k=8192",
					    "ew kind=rmsnorm tokens=4096 hidden=4096",
					    "ew kind=copy tokens=65536 hidden=8192"};
	static const char *const cls[] = {"gemm", "gemm", "elementwise", "hbm"};
	struct llmsim_store *s;
	struct llmsim_device_info dev = {0};
	struct llmsim_run_info run = {.operand_data = "normal"};
	struct llmsim_gpu g;
	int64_t run_id, case_id;
	cr_assert_eq(llmsim_gpu_load("h200", &g, NULL), 0);
	cr_assert_eq(llmsim_store_open(path, LLMSIM_STORE_CREATE, &s, NULL), 0);
	snprintf(dev.name, sizeof dev.name, "NVIDIA H200");
	snprintf(dev.hw_name, sizeof dev.hw_name, "h200");
	dev.sms = 132;
	dev.device_count = 1;
	snprintf(run.started_at, sizeof run.started_at, "2026-01-01T00:00:00Z");
	snprintf(run.host, sizeof run.host, "test");
	snprintf(run.tool, sizeof run.tool, "test_report_cli");
	struct llmsim_err e = {0};
	cr_assert_eq(llmsim_store_run_begin(s, &dev, &run, &run_id, &e), 0, "%s", e.msg);
	for (int i = 0; i < 4; i++) {
		struct llmsim_case c = {0};
		struct llmsim_op op;
		struct llmsim_pred p;
		cr_assert_eq(llmsim_op_parse(specs[i], &op, NULL), 0);
		cr_assert_eq(llmsim_predict(&g, &op, &p, NULL), 0);
		snprintf(c.op_spec, sizeof c.op_spec, "%s", specs[i]);
		snprintf(c.op_class, sizeof c.op_class, "%s", cls[i]);
		snprintf(c.impl, sizeof c.impl, "test");
		snprintf(c.split, sizeof c.split, "%s", i % 2 ? "holdout" : "fit");
		c.flops_declared = p.flops;
		c.bytes_declared = p.hbm_bytes;
		c.reps = 10;
		c.time_median_s = c.time_min_s = c.time_p10_s = c.time_p90_s = 1.25 * p.time_s;
		c.check_rel_err = -1;
		cr_assert_eq(llmsim_store_add_case(s, run_id, &c, &case_id, &e), 0, "%s", e.msg);
	}
	cr_assert_eq(llmsim_store_run_commit(s, run_id, &e), 0, "%s", e.msg);
	llmsim_store_close(s);
}

Test(report_cli, measured_points_from_a_database, .init = make_root, .fini = drop_root,
     .timeout = 120)
{
	char args[512], out[8192], err[1024], dir[128], db[128], path[256];
	snprintf(db, sizeof db, "%s/calib.sqlite", root);
	make_db(db);
	snprintf(dir, sizeof dir, "%s/meas", root);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --db %s --out %s --json", db,
		 dir);
	int rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_eq(json_num(out, "measured_points"), 3, "%s", out);
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	cr_expect(strstr(html, "3 kernels measured on h200 (of 4 cases stored"), "calibration text");
	/* per-class rows: gemm 2 kernels, elementwise 1, each 20.0% off */
	cr_expect(strstr(html, "<td class=\"l\">gemm</td><td>2</td><td>20.0%</td><td>20.0%</td>"));
	cr_expect(strstr(html, "<td class=\"l\">elementwise</td><td>1</td><td>20.0%</td>"));
	/* The rmsnorm case is exactly Llama 3.1 8B's prefill norm (4096 tokens
	 * of 4096): its measured time, 1.25 x predicted, shows in the op table. */
	const char *row =
		strstr(html, "<td class=\"l\">prefill</td><td class=\"l\">attn_norm</td>");
	cr_assert(row);
	struct llmsim_gpu g;
	struct llmsim_op op;
	struct llmsim_pred p;
	char meas[64], want[LLMSIM_FMT_MAX];
	cr_assert_eq(llmsim_gpu_load("h200", &g, NULL), 0);
	cr_assert_eq(llmsim_op_parse("ew kind=rmsnorm tokens=4096 hidden=4096", &op, NULL), 0);
	cr_assert_eq(llmsim_predict(&g, &op, &p, NULL), 0);
	td(row, 7, meas, sizeof meas);
	cr_expect_str_eq(meas, llmsim_fmt_time(want, 1.25 * p.time_s));
	row = strstr(html, "<td class=\"l\">prefill</td><td class=\"l\">qkv_proj</td>");
	cr_assert(row);
	td(row, 7, meas, sizeof meas);
	cr_expect_str_eq(meas, "-", "no calibration case of the QKV GEMM");
	free(html);

	/* The same GPU's roofline without measurements for another GPU. */
	snprintf(dir, sizeof dir, "%s/meas-a100", root);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu a100 --db %s --out %s --json", db,
		 dir);
	rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_expect_eq(json_num(out, "measured_points"), 0, "%s", out);

	/* A database that is not one fails cleanly. */
	snprintf(dir, sizeof dir, "%s/meas-bad", root);
	snprintf(args, sizeof args, "report --workload serve --model 8b --gpu h200 --db %s/nonexistent.db --out %s",
		 root, dir);
	rc = llmsim(args, out, sizeof out, err, sizeof err);
	cr_expect_eq(rc, 1);
	cr_expect_eq(count_lines(err), 1, "%s", err);
	cr_expect_neq(access(dir, F_OK), 0);
}

/* Without --db, the dumps shipped in <data>/calib/data are imported into a
 * temporary database; a file that fails to import is noted, not fatal. */
Test(report_cli, measured_points_from_shipped_dumps, .init = make_root, .fini = drop_root,
     .timeout = 120)
{
	char db[128], data[128], path[256], cmd[1024], dir[128], outf[160];
	struct llmsim_store *s;
	snprintf(db, sizeof db, "%s/calib.sqlite", root);
	make_db(db);
	/* A data folder with the source tree's hw/ and models/, and a dump. */
	snprintf(data, sizeof data, "%s/data", root);
	snprintf(cmd, sizeof cmd, "mkdir -p %s/calib/data && ln -s %s/hw %s/models %s/",
		 data, LLMSIM_SOURCE_DIR, LLMSIM_SOURCE_DIR, data);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/calib/data/h200-test.tsv", data);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	cr_assert_eq(llmsim_store_open(db, LLMSIM_STORE_READ, &s, NULL), 0);
	cr_assert_eq(llmsim_store_export(s, f, NULL), 0);
	llmsim_store_close(s);
	fclose(f);
	snprintf(path, sizeof path, "%s/calib/data/broken.tsv", data);
	f = fopen(path, "w");
	fputs("llmsim-calib\tschema_version\t2\nthis line is not a record\n", f);
	fclose(f);
	/* a tab-separated file that is no dump (nccl-tests tables live there) */
	snprintf(path, sizeof path, "%s/calib/data/table.tsv", data);
	f = fopen(path, "w");
	fputs("op\tgpus\tbytes\n", f);
	fclose(f);

	snprintf(dir, sizeof dir, "%s/shipped", root);
	snprintf(outf, sizeof outf, "%s/out.json", root);
	snprintf(cmd, sizeof cmd,
		 "LLMSIM_DATA_DIR=%s %s/cli/llmsim report --workload serve --model 8b --gpu h200 --out %s --json "
		 ">%s 2>&1", data, LLMSIM_BUILD_DIR, dir, outf);
	int rc = system(cmd);
	char *out = slurp(outf, NULL);
	cr_assert(out);
	cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %d: %s", rc, out);
	cr_expect_eq(json_num(out, "measured_points"), 3, "%s", out);
	free(out);
	snprintf(path, sizeof path, "%s/index.html", dir);
	char *html = slurp(path, NULL);
	cr_assert(html);
	cr_expect(strstr(html, "Source: calib/data/h200-test.tsv."), "source named");
	cr_expect(strstr(html, "not imported: calib/data/broken.tsv ("), "import problem noted");
	cr_expect(!strstr(html, "table.tsv"), "a file that is no dump is not one to note");
	free(html);
}

/* A gnuplot built without cairo: the report falls back to the libgd png
 * terminal, with the same picture sizes. The stand-in fails the probe for
 * pngcairo and hands everything else to the real gnuplot. */
Test(report_cli, falls_back_to_the_gd_png_terminal, .init = make_root, .fini = drop_root,
     .timeout = 120)
{
	char cmd[2048], bin[128], path[256], dir[128], outf[160], real[256] = "";
	FILE *p = popen("command -v gnuplot", "r");
	if (p) {
		if (fgets(real, sizeof real, p))
			real[strcspn(real, "\n")] = 0;
		pclose(p);
	}
	if (!real[0])
		cr_skip_test("gnuplot is not installed");
	snprintf(bin, sizeof bin, "%s/bin", root);
	mkdir(bin, 0755);
	snprintf(path, sizeof path, "%s/gnuplot", bin);
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "#!/bin/sh\n[ \"$2\" = \"set terminal pngcairo\" ] && exit 1\n"
		   "grep -q pngcairo \"$1\" 2>/dev/null && exit 3\nexec %s \"$@\"\n", real);
	fclose(f);
	chmod(path, 0755);
	snprintf(dir, sizeof dir, "%s/gd", root);
	snprintf(outf, sizeof outf, "%s/out.txt", root);
	snprintf(cmd, sizeof cmd,
		 "PATH=%s:/usr/bin:/bin %s/cli/llmsim report --workload serve --model 8b --gpu h200 "
		 "--width 900 --height 600 --out %s >%s 2>&1",
		 bin, LLMSIM_BUILD_DIR, dir, outf);
	int rc = system(cmd);
	char *out = slurp(outf, NULL);
	cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %d: %s", rc, out ? out : "");
	free(out);
	snprintf(path, sizeof path, "%s/roofline.png", dir);
	expect_png(path, 900, 600);
	snprintf(path, sizeof path, "%s/memory.png", dir);
	expect_png(path, LLMSIM_REPORT_BAR_WIDTH, LLMSIM_REPORT_BAR_HEIGHT);
}
