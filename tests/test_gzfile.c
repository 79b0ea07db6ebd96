/*
 * test_gzfile.c - base/gzfile: a plain file and its gzip form read back the
 * same bytes through one FILE; several gzip members read as one stream; a
 * cut-off or corrupted stream fails at close with one line naming the
 * file, and a missing file says so. The gzip files are written here with
 * zlib itself, so nothing runs through a shell.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/gzfile.h"
#include "support.h"

static char dir[] = "/tmp/llmsim-gz-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/* Some text of n lines, each distinct, so a lost or doubled block shows. */
static char *text(int n, size_t *len)
{
	char *s = malloc((size_t)n * 64 + 1);
	cr_assert_not_null(s);
	size_t o = 0;
	for (int i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "line %d\tvalue %d\n", i, i * 7919 % 10007);
	*len = o;
	return s;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

/* gzip members of buf[0..len) split at the given offsets (append mode
 * starts a new member each time) */
static void write_gz(const char *path, const char *buf, size_t len, int members)
{
	unlink(path);
	for (int m = 0; m < members; m++) {
		size_t a = len * (size_t)m / (size_t)members, b = len * (size_t)(m + 1) / (size_t)members;
		gzFile g = gzopen(path, "ab");
		cr_assert_not_null(g);
		cr_assert_eq(gzwrite(g, buf + a, (unsigned)(b - a)), (int)(b - a));
		cr_assert_eq(gzclose(g), Z_OK);
	}
}

/* Everything the stream of path gives, and its gzip flag and close status. */
static char *read_all(const char *path, size_t *len, int *gz, int *close_rc,
		      struct llmsim_err *err)
{
	FILE *f = llmsim_gz_open(path, gz, err);
	cr_assert_not_null(f, "%s", err->msg);
	size_t cap = 1 << 16, n = 0, k;
	char *buf = malloc(cap);
	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	*close_rc = llmsim_gz_close(f, path, err);
	*len = n;
	return buf;
}

Test(gzfile, plain_and_gzip_read_the_same_bytes, .init = setup, .fini = teardown)
{
	size_t len;
	char *s = text(20000, &len), plain[256], gz[256];
	snprintf(plain, sizeof plain, "%s/a.txt", dir);
	snprintf(gz, sizeof gz, "%s/a.txt.gz", dir);
	write_file(plain, s, len);
	write_gz(gz, s, len, 1);
	for (int i = 0; i < 2; i++) {
		struct llmsim_err err = {0};
		size_t n;
		int isgz = -1, rc;
		char *got = read_all(i ? gz : plain, &n, &isgz, &rc, &err);
		cr_expect_eq(rc, 0, "%s", err.msg);
		cr_expect_eq(isgz, i);
		cr_expect_eq(n, len);
		cr_expect(n == len && !memcmp(got, s, len), "%s: bytes differ", i ? gz : plain);
		free(got);
	}
	/* line by line as the readers do, through getline */
	struct llmsim_err err = {0};
	FILE *f = llmsim_gz_open(gz, NULL, &err);
	cr_assert_not_null(f);
	char *line = NULL;
	size_t cap = 0;
	int lines = 0;
	while (getline(&line, &cap, f) >= 0)
		lines++;
	free(line);
	cr_expect_eq(lines, 20000);
	cr_expect_eq(llmsim_gz_close(f, gz, &err), 0, "%s", err.msg);
	free(s);
}

Test(gzfile, several_members_read_as_one_stream, .init = setup, .fini = teardown)
{
	size_t len, n;
	char *s = text(3000, &len), gz[256];
	snprintf(gz, sizeof gz, "%s/m.gz", dir);
	write_gz(gz, s, len, 3);
	struct llmsim_err err = {0};
	int isgz, rc;
	char *got = read_all(gz, &n, &isgz, &rc, &err);
	cr_expect_eq(rc, 0, "%s", err.msg);
	cr_expect(n == len && !memcmp(got, s, len), "3 members: %zu of %zu bytes", n, len);
	free(got);
	free(s);
}

Test(gzfile, cut_off_and_corrupt_streams_fail_at_close, .init = setup, .fini = teardown)
{
	size_t len;
	char *s = text(20000, &len), gz[256], cut[256], bad[256];
	snprintf(gz, sizeof gz, "%s/a.gz", dir);
	snprintf(cut, sizeof cut, "%s/cut.gz", dir);
	snprintf(bad, sizeof bad, "%s/bad.gz", dir);
	write_gz(gz, s, len, 1);
	FILE *f = fopen(gz, "rb");
	char *z = malloc(len);
	size_t zlen = fread(z, 1, len, f);
	fclose(f);
	cr_assert_gt(zlen, 1000);

	/* the first half of the compressed bytes */
	write_file(cut, z, zlen / 2);
	struct llmsim_err err = {0};
	size_t n;
	int isgz, rc;
	free(read_all(cut, &n, &isgz, &rc, &err));
	cr_expect_eq(rc, LLMSIM_EPARSE);
	char want[512];
	snprintf(want, sizeof want, "%s: gzip data is corrupt or truncated (zlib: unexpected end of file)",
		 cut);
	cr_expect_str_eq(err.msg, want);
	cr_expect_lt(n, len, "a cut stream cannot give the whole text");

	/* a flipped byte in the deflate data (past the 10-byte header) */
	z[zlen / 2] ^= 0x55;
	write_file(bad, z, zlen);
	memset(&err, 0, sizeof err);
	free(read_all(bad, &n, &isgz, &rc, &err));
	cr_expect_eq(rc, LLMSIM_EPARSE, "a corrupted stream must not read as good: %s", err.msg);
	snprintf(want, sizeof want, "%s: gzip data is corrupt or truncated (zlib: ", bad);
	cr_expect(!strncmp(err.msg, want, strlen(want)), "%s", err.msg);
	free(z);
	free(s);
}

Test(gzfile, missing_and_empty_files, .init = setup, .fini = teardown)
{
	char p[256];
	snprintf(p, sizeof p, "%s/none.gz", dir);
	struct llmsim_err err = {0};
	cr_expect_null(llmsim_gz_open(p, NULL, &err));
	cr_expect_eq(err.code, LLMSIM_ENOENT);
	char want[512];
	snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
	cr_expect_str_eq(err.msg, want);

	/* an empty file and a one-byte file are plain text, not gzip */
	snprintf(p, sizeof p, "%s/empty", dir);
	write_file(p, "", 0);
	size_t n;
	int isgz, rc;
	free(read_all(p, &n, &isgz, &rc, &err));
	cr_expect_eq(rc, 0);
	cr_expect_eq(n, 0);
	cr_expect_eq(isgz, 0);
	write_file(p, "\x1f", 1);
	free(read_all(p, &n, &isgz, &rc, &err));
	cr_expect_eq(n, 1);
	cr_expect_eq(isgz, 0);
	cr_expect_eq(llmsim_gz_close(NULL, p, &err), 0);
}
