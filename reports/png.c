/* png.c - PNG signature and IHDR check for the pictures gnuplot writes. */
#include "png.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Signature (8) + IHDR length (4) + "IHDR" (4) + width (4) + height (4)
 * + bit depth, colour type, compression, filter, interlace (5) + CRC (4). */
#define PNG_HEAD_BYTES 33

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int llmsim_png_info_buf(const unsigned char *buf, size_t len, const char *name,
			int *width, int *height, struct llmsim_err *err)
{
	if (len < PNG_HEAD_BYTES || memcmp(buf, png_sig, sizeof png_sig))
		return llmsim_err_set(err, LLMSIM_EPARSE, "'%s' is not a PNG file (bad signature)",
				      name);
	if (be32(buf + 8) != 13 || memcmp(buf + 12, "IHDR", 4))
		return llmsim_err_set(err, LLMSIM_EPARSE, "'%s': PNG without an IHDR chunk first",
				      name);
	uint32_t w = be32(buf + 16), h = be32(buf + 20);
	/* The PNG spec limits each dimension to 2^31 - 1 and forbids 0. */
	if (w == 0 || h == 0 || w > 0x7fffffffu || h > 0x7fffffffu)
		return llmsim_err_set(err, LLMSIM_EPARSE, "'%s': PNG with invalid size %ux%u",
				      name, w, h);
	if (width)
		*width = (int)w;
	if (height)
		*height = (int)h;
	return 0;
}

int llmsim_png_info(const char *path, int *width, int *height, struct llmsim_err *err)
{
	unsigned char head[PNG_HEAD_BYTES];
	FILE *f = fopen(path, "rb");
	if (!f)
		return llmsim_err_set(err, LLMSIM_EIO, "cannot open '%s': %s", path, strerror(errno));
	size_t n = fread(head, 1, sizeof head, f);
	fclose(f);
	return llmsim_png_info_buf(head, n, path, width, height, err);
}
