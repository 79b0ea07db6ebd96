/*
 * gzfile.c - plain or gzip input as one FILE (see gzfile.h). A gzip file
 * is wrapped with fopencookie around zlib's inflate, and so is a pipe
 * (whose first bytes, read to tell gzip from text, are handed out again);
 * a plain file is an ordinary stream. The cookie keeps the first
 * decompression error, which its close function hands to llmsim_gz_close
 * through a thread-local buffer (fclose frees the cookie before
 * returning).
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

/* A stream read through a cookie: a pipe (whose first bytes were read to
 * tell gzip from text, and are handed out first) or any gzip input,
 * inflated here with zlib's inflate (gzdopen would read the fd from where
 * it stands, past bytes a pipe cannot give back). */
struct gz_cookie {
	int fd;
	unsigned char pre[2]; /* bytes read before the stream began */
	int npre;
	int gz;		      /* inflate what is read */
	int ended;	      /* the last gzip member ended */
	int eof;	      /* the fd is at its end */
	z_stream z;
	char why[256]; /* first error, "" while none */
	unsigned char in[1 << 16];
};

static _Thread_local char close_why[256];

/* Raw bytes: what was read before, then the fd. */
static ssize_t raw_read(struct gz_cookie *k, void *buf, size_t size)
{
	if (k->npre) {
		size_t n = (size_t)k->npre < size ? (size_t)k->npre : size;
		memcpy(buf, k->pre, n);
		memmove(k->pre, k->pre + n, (size_t)k->npre - n);
		k->npre -= (int)n;
		return (ssize_t)n;
	}
	ssize_t n;
	do
		n = read(k->fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

static ssize_t gz_cookie_read(void *c, char *buf, size_t size)
{
	struct gz_cookie *k = c;
	if (k->why[0])
		return -1;
	if (!k->gz)
		return raw_read(k, buf, size);
	if (size > (1u << 30)) /* zlib counts in unsigned int */
		size = 1u << 30;
	for (;;) {
		if (!k->z.avail_in && !k->eof) {
			ssize_t n = raw_read(k, k->in, sizeof k->in);
			if (n < 0) {
				snprintf(k->why, sizeof k->why, "%s", strerror(errno));
				errno = EIO;
				return -1;
			}
			k->eof = n == 0;
			k->z.next_in = k->in;
			k->z.avail_in = (uInt)n;
		}
		if (k->ended) {
			/* another member, or the end (what follows a member that
			 * does not start like one is ignored, as gzread does) */
			if (!k->z.avail_in || k->z.next_in[0] != 0x1f)
				return 0;
			if (inflateReset(&k->z) != Z_OK)
				break;
			k->ended = 0;
		}
		k->z.next_out = (Bytef *)buf;
		k->z.avail_out = (uInt)size;
		int r = inflate(&k->z, Z_NO_FLUSH);
		size_t got = size - k->z.avail_out;
		if (r == Z_STREAM_END)
			k->ended = 1;
		else if (r == Z_BUF_ERROR && k->eof && !got)
			break; /* no input left inside a member */
		else if (r != Z_OK && r != Z_BUF_ERROR)
			break;
		if (got)
			return (ssize_t)got;
	}
	snprintf(k->why, sizeof k->why, "%s",
		 !k->ended && k->eof ? "unexpected end of file"
		 : k->z.msg	     ? k->z.msg
				     : "decompression failed");
	errno = EIO;
	return -1;
}

static int gz_cookie_close(void *c)
{
	struct gz_cookie *k = c;
	int rc = k->why[0] ? -1 : 0;
	snprintf(close_why, sizeof close_why, "%s", k->why);
	if (k->gz)
		inflateEnd(&k->z);
	close(k->fd);
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
	int pipe = 0;
	ssize_t n = pread(fd, magic, sizeof magic, 0);
	if (n < 0 && errno == ESPIPE) {
		/* a pipe or a terminal: its first bytes, read, are handed out
		 * again by the cookie */
		pipe = 1;
		n = 0;
		while (n < 2) {
			ssize_t r = read(fd, magic + n, (size_t)(2 - n));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (r < 0)
					n = -1;
				break;
			}
			n += r;
		}
	}
	if (n < 0) {
		llmsim_err_set(err, LLMSIM_EIO, "%s: cannot read: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	int gz = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (!gz && !pipe) {
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
	k->fd = fd;
	k->gz = gz;
	if (pipe) {
		memcpy(k->pre, magic, (size_t)n);
		k->npre = (int)n;
	}
	if (gz && inflateInit2(&k->z, 15 + 16) != Z_OK) { /* gzip wrapping only */
		close(fd);
		free(k);
		llmsim_err_set(err, LLMSIM_ENOMEM, "%s: cannot start zlib", path);
		return NULL;
	}
	static const cookie_io_functions_t io = {
		.read = gz_cookie_read, .write = NULL, .seek = NULL, .close = gz_cookie_close,
	};
	FILE *f = fopencookie(k, "rb", io);
	if (!f) {
		if (gz)
			inflateEnd(&k->z);
		close(fd);
		free(k);
		llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
		return NULL;
	}
	if (gzipped)
		*gzipped = gz;
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
