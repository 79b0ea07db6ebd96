/*
 * png.h - just enough PNG reading to check what gnuplot wrote: the
 * 8-byte signature and the IHDR chunk (width, height), so a report never
 * ships a picture that is empty, truncated or of the wrong size.
 */
#ifndef LLMSIM_REPORT_PNG_H
#define LLMSIM_REPORT_PNG_H

#include <stddef.h>
#include "base/err.h"

/* Check that buf[0..len) starts like a PNG (signature, then an IHDR chunk
 * of length 13) and read its size. Returns 0, or LLMSIM_EPARSE with a
 * message naming `name`. width/height may be NULL. */
int llmsim_png_info_buf(const unsigned char *buf, size_t len, const char *name,
			int *width, int *height, struct llmsim_err *err);

/* The same for a file (reads its first 33 bytes). LLMSIM_EIO when it
 * cannot be read. */
int llmsim_png_info(const char *path, int *width, int *height, struct llmsim_err *err);

#endif
