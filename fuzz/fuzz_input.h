/*
 * fuzz_input.h - helpers shared by the fuzz targets whose parser reads a
 * path or a stream rather than a buffer: the input is written to one
 * anonymous memory file (memfd), rewritten for every input, and handed out
 * by path (/proc/self/fd/N) or as a fresh FILE. Header-only, so each
 * target stays one .c file (the CMake glob builds fuzz_*.c).
 */
#ifndef LLMSIM_FUZZ_INPUT_H
#define LLMSIM_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a file holding exactly data[0..size). */
static inline const char *fuzz_input_path(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("llmsim-fuzz", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

/* The input as a stream positioned at its start (fclose it). */
static inline FILE *fuzz_input_file(const uint8_t *data, size_t size)
{
	FILE *f = fopen(fuzz_input_path(data, size), "rb");
	if (!f)
		abort();
	return f;
}

/* The input as a NUL-terminated string (it ends at its first NUL byte);
 * malloc'd: free it. */
static inline char *fuzz_input_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Write size bytes of data to the file p (created or truncated). */
static inline void fuzz_write_file(const char *p, const void *data, size_t size)
{
	FILE *f = fopen(p, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
}

/* The suffixes of what SQLite keeps beside a database file. */
static const char *const fuzz_sqlite_tails[] __attribute__((unused)) = {"-journal", "-wal", "-shm"};

/* Remove the database file p and what SQLite keeps beside it. */
static inline void fuzz_remove_db(const char *p)
{
	unlink(p);
	for (int i = 0; i < 3; i++) {
		char q[300];
		snprintf(q, sizeof q, "%s%s", p, fuzz_sqlite_tails[i]);
		unlink(q);
	}
}

#endif
