/*
 * profile.c - writing a calibration profile (hw/profiles/NAME.yaml): the
 * fitted parameters and the held-out expected errors per class, in the
 * format the hardware loader applies (hw/gpu.h). Written to a temporary
 * file in the same folder, read back by the loader, then renamed over the
 * target, so a reader never sees half a profile.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/paths.h"
#include "validate.h"

/* A YAML double-quoted scalar. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* A name that YAML reads as the same plain string ("h200", "mi300x"). */
static int plain(const char *s)
{
	if (!*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
			    *s))
			return 0;
	return 1;
}

static void write_classes(FILE *f, const struct llmsim_validation *ho);

static void write_body(FILE *f, const struct llmsim_gpu *gpu, const struct llmsim_calib_set *set,
		       const struct llmsim_fit_result *res, const struct llmsim_validation *ho,
		       const char *date, const char *source)
{
	fprintf(f,
		"# Calibration profile for %s, written by `llmsim calib fit`: do not edit,\n"
		"# refit. Efficiencies fitted on the \"fit\" cases; expected errors measured\n"
		"# on the held-out cases with these values. LLMSIM_NO_PROFILE=1 ignores it.\n",
		gpu->name);
	fputs("gpu: ", f);
	if (plain(gpu->name))
		fputs(gpu->name, f);
	else
		put_quoted(f, gpu->name);
	fputs("\ncalibration:\n  date: ", f);
	put_quoted(f, date);
	fputs("\n  device: ", f);
	put_quoted(f, set->device);
	fputs("\n  driver: ", f);
	put_quoted(f, set->driver);
	fputs("\n  cuda: ", f);
	put_quoted(f, set->cuda);
	fprintf(f, "\n  sm_clock_hz: %.4g\n", isfinite(set->sm_clock_hz) ? set->sm_clock_hz : 0.0);
	fprintf(f, "  fit_cases: %d\n  held_out_cases: %d\n", res->fit_cases, res->held_out_cases);
	if (source) {
		fputs("  source: ", f);
		put_quoted(f, source);
		fputc('\n', f);
	}
	char tool[96];
	snprintf(tool, sizeof tool, "llmsim %s (git %s)", llmsim_version(), llmsim_git_revision());
	fputs("  tool: ", f);
	put_quoted(f, tool);
	fputc('\n', f);

	int any = 0;
	for (int e = 0; e < LLMSIM_PARAM_COUNT; e++)
		any |= res->fitted[e];
	if (any)
		fputs("efficiency:\n", f);
	for (int e = 0; e < LLMSIM_PARAM_COUNT; e++)
		if (res->fitted[e])
			fprintf(f, "  %s: %.6g  # hardware file: %.6g; %d fit cases depend on it\n",
				llmsim_param_info[e].key, gpu->param[e], res->start[e],
				res->ncases[e]);

	write_classes(f, ho);
}

/* expected_error_pct: the held-out classes, as the loader reads them */
static void write_classes(FILE *f, const struct llmsim_validation *ho)
{
	int nclasses = 0;
	for (int c = 0; ho && c < ho->nclasses; c++)
		nclasses += ho->classes[c].n > 0;
	if (nclasses)
		fputs("expected_error_pct:  # held-out |predicted - measured| / measured, %;"
		      " bias: median signed (> 0: predicted times too long); p80 is the printed error bar\n",
		      f);
	for (int c = 0; ho && c < ho->nclasses; c++) {
		const struct llmsim_err_stats *s = &ho->classes[c];
		if (s->n > 0)
			/* p80 rounded up, so the bar as written still covers */
			fprintf(f, "  %s: {median: %.2f, p80: %.2f, p90: %.2f, bias: %+.2f, n: %d}\n",
				s->name, s->median_abs_pct, ceil(s->p80_abs_pct * 100 - 1e-9) / 100,
				s->p90_abs_pct, s->median_signed_pct, s->n);
	}
}

static void today(char *date, size_t size, const struct llmsim_profile_info *info)
{
	if (info && info->date) {
		snprintf(date, size, "%s", info->date);
	} else {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(date, size, "%Y-%m-%d", &tm);
	}
}

int llmsim_calib_write_transfer(const char *path, const struct llmsim_gpu *gpu,
				const struct llmsim_calib_set *set,
				const struct llmsim_validation *held_out,
				const struct llmsim_profile_info *info, struct llmsim_err *err)
{
	if (!gpu->basis[0])
		return llmsim_err_set(err, LLMSIM_EINVAL,
				      "%s names no calibration basis: there is no transfer to measure",
				      gpu->name);
	char date[32], tmp[4096];
	today(date, sizeof date, info);
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: path too long", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: %s", path,
				      strerror(errno));
	fprintf(f,
		"# The transfer experiment: %s predicted from %s's calibration and its own\n"
		"# hardware file alone, against measurements of it (written by `llmsim calib\n"
		"# validate --gpu %s --uncalibrated --transfer-out`): the measured cost of\n"
		"# predicting an uncalibrated GPU from %s. Every GPU file that names %s as its\n"
		"# calibration_basis takes these as its expected errors until its own profile\n"
		"# exists, widened in quadrature by its uncalibrated_step_error_fraction.\n",
		gpu->name, gpu->basis, gpu->name, gpu->basis, gpu->basis);
	fprintf(f, "basis: %s\nmeasured_on: %s\nrelation: %s\ndate: ", gpu->basis, gpu->name,
		llmsim_gpu_relation_name(gpu->relation));
	put_quoted(f, date);
	fputs("\nsource: ", f);
	char src[512];
	snprintf(src, sizeof src, "%s (%s)", info && info->source ? info->source : "?",
		 set->device);
	put_quoted(f, src);
	fputc('\n', f);
	write_classes(f, held_out);
	if (fclose(f) || rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: %s", path, strerror(e));
	}
	return 0;
}

int llmsim_calib_write_profile(const char *path, const struct llmsim_gpu *gpu,
			       const struct llmsim_calib_set *set,
			       const struct llmsim_fit_result *res,
			       const struct llmsim_validation *held_out,
			       const struct llmsim_profile_info *info, struct llmsim_err *err)
{
	char date[32];
	today(date, sizeof date, info);
	struct stat st; /* rename() would replace a device or pipe itself */
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: not a regular file", path);
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: path too long", path);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: %s", path,
				      strerror(errno));
	mode_t mask = umask(0);
	umask(mask);
	FILE *f = fchmod(fd, 0666 & ~mask) ? NULL : fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: %s", path,
				      strerror(errno));
	}
	write_body(f, gpu, set, res, held_out, date, info ? info->source : NULL);
	int bad = fflush(f) || ferror(f) || fsync(fileno(f));
	int saved = errno;
	if (fclose(f) || bad) {
		unlink(tmp);
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: %s", path,
				      strerror(bad ? saved : errno));
	}
	/* The hardware loader must accept what we wrote, values included. */
	struct llmsim_gpu check = *gpu;
	struct llmsim_err lerr = {0};
	int rc = llmsim_gpu_apply_profile(&check, tmp, &lerr);
	for (int e = 0; !rc && e < LLMSIM_PARAM_COUNT; e++)
		if (res->fitted[e] &&
		    fabs(check.param[e] - gpu->param[e]) > 1e-5 * fabs(gpu->param[e]))
			rc = llmsim_err_set(&lerr, LLMSIM_EINVAL, "'%s' read back as %g, not %g",
					    llmsim_param_info[e].key, check.param[e],
					    gpu->param[e]);
	if (rc) {
		unlink(tmp);
		return llmsim_err_set(err, rc, "%s: the written profile does not load: %s", path,
				      lerr.msg);
	}
	if (rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot write: %s", path, strerror(e));
	}
	return 0;
}
