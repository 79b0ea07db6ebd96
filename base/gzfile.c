/*
 * gzfile.c - plain or gzip input as one FILE (see gzfile.h). A gzip file
 * is wrapped with fopencookie around zlib's gzFile; a plain one is an
 * ordinary stream. The cookie keeps the first decompression error, which
 * its close function hands to llmsim_gz_close through a thread-local
 * buffer (fclose frees the cookie before returning).
 */
#include "gzfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

struct gz_cookie {
	gzFile gz;
	char why[256]; /* first error, "" while none */
};

static _Thread_local char close_why[256];

static ssize_t gz_cookie_read(void *c, char *buf, size_t size)
{
	struct gz_cookie *k = c;
	if (k->why[0])
		return -1;
	/* gzread counts in unsigned int */
	unsigned want = size > (1u << 30) ? 1u << 30 : (unsigned)size;
	int n = gzread(k->gz, buf, want);
	if (n >= 0)
		return n;
	int zerr;
	const char *msg = gzerror(k->gz, &zerr);
	snprintf(k->why, sizeof k->why, "%s",
		 zerr == Z_ERRNO ? strerror(errno) : msg && *msg ? msg : "decompression failed");
	errno = EIO;
	return -1;
}

static int gz_cookie_close(void *c)
{
	struct gz_cookie *k = c;
	int rc = k->why[0] ? -1 : 0;
	snprintf(close_why, sizeof close_why, "%s", k->why);
	int z = gzclose_r(k->gz);
	if (z != Z_OK && !rc) {
		/* Z_BUF_ERROR: the last read ended inside a gzip member */
		snprintf(close_why, sizeof close_why, "%s",
			 z == Z_BUF_ERROR ? "unexpected end of file" : "cannot close the stream");
		rc = -1;
	}
	free(k);
	return rc;
}

FILE *llmsim_gz_open(const char *path, int *gzipped, struct llmsim_err *err)
{
	if (gzipped)
		*gzipped = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		llmsim_err_set(err, errno == ENOENT ? LLMSIM_ENOENT : LLMSIM_EIO,
			       "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	unsigned char magic[2];
	ssize_t n = pread(fd, magic, sizeof magic, 0);
	if (n < 0) {
		llmsim_err_set(err, LLMSIM_EIO, "%s: cannot read: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (n < 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
		FILE *f = fdopen(fd, "rb");
		if (!f) {
			llmsim_err_set(err, LLMSIM_EIO, "%s: %s", path, strerror(errno));
			close(fd);
		}
		return f;
	}
	struct gz_cookie *k = calloc(1, sizeof *k);
	if (!k) {
		close(fd);
		llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		return NULL;
	}
	if (!(k->gz = gzdopen(fd, "rb"))) { /* gzdopen leaves fd open on failure */
		close(fd);
		free(k);
		llmsim_err_set(err, LLMSIM_ENOMEM, "%s: cannot start zlib", path);
		return NULL;
	}
	gzbuffer(k->gz, 1 << 16);
	static const cookie_io_functions_t io = {
		.read = gz_cookie_read, .write = NULL, .seek = NULL, .close = gz_cookie_close,
	};
	FILE *f = fopencookie(k, "rb", io);
	if (!f) {
		gzclose_r(k->gz);
		free(k);
		llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		return NULL;
	}
	if (gzipped)
		*gzipped = 1;
	return f;
}

int llmsim_gz_close(FILE *f, const char *path, struct llmsim_err *err)
{
	if (!f)
		return 0;
	int bad = ferror(f);
	int why = errno;
	close_why[0] = 0;
	int rc = fclose(f);
	if (close_why[0])
		return llmsim_err_set(err, LLMSIM_EPARSE,
				      "%s: gzip data is corrupt or truncated (zlib: %s)", path,
				      close_why);
	if (bad || rc)
		return llmsim_err_set(err, LLMSIM_EIO, "%s: cannot read: %s", path,
				      why ? strerror(why) : "read error");
	return 0;
}

int llmsim_gz_slurp(const char *path, size_t max, char **buf, size_t *len,
		    struct llmsim_err *err)
{
	*buf = NULL;
	*len = 0;
	FILE *f = llmsim_gz_open(path, NULL, err);
	if (!f)
		return err ? err->code : LLMSIM_EIO;
	size_t cap = 1 << 16, n = 0, k;
	char *b = malloc(cap);
	int rc = 0;
	while (b && n <= max) {
		if (n + 1 == cap) { /* full: grow, keeping room for the NUL */
			char *g = realloc(b, 2 * cap);
			if (!g) {
				free(b);
				b = NULL;
				break;
			}
			b = g;
			cap *= 2;
		}
		if (!(k = fread(b + n, 1, cap - n - 1, f)))
			break;
		n += k;
	}
	int zrc = llmsim_gz_close(f, path, err);
	if (!b)
		rc = llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	else if (zrc)
		rc = zrc;
	else if (n > max)
		rc = llmsim_err_set(err, LLMSIM_EINVAL, "%s: larger than %zu bytes", path, max);
	if (rc) {
		free(b);
		return rc;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}
