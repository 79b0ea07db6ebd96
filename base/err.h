/*
 * err.h - status codes and the error record every llmsim function fills.
 *
 * Functions return 0 on success or a negative LLMSIM_E* code, and, when the
 * caller passes a non-NULL struct llmsim_err, write one human line into it.
 * For input files the line starts "path:line:col: " (1-based), the way
 * compilers do, so the CLI can print it as it stands.
 */
#ifndef LLMSIM_ERR_H
#define LLMSIM_ERR_H

#include <stddef.h>

enum {
	LLMSIM_OK = 0,
	LLMSIM_EINVAL = -1,      /* bad argument or configuration */
	LLMSIM_ENOENT = -2,      /* no such file, name or key */
	LLMSIM_EPARSE = -3,      /* malformed input file */
	LLMSIM_ENOMEM = -4,      /* allocation failed */
	LLMSIM_EIO = -5,         /* read or write failed */
	LLMSIM_EUNSUPPORTED = -6,/* the GPU or model lacks what was asked */
	LLMSIM_ENODEV = -7,      /* no GPU, or no CUDA, where one is needed */
	LLMSIM_ENOFIT = -8,      /* does not fit in memory */
	LLMSIM_EDB = -9,         /* database error */
};

#define LLMSIM_ERR_MSG_MAX 1024

struct llmsim_err {
	int code;
	char msg[LLMSIM_ERR_MSG_MAX];
};

/* Human name of a status code ("invalid argument"); never NULL. */
const char *llmsim_strerror(int code);

/* Fill e (if non-NULL) with code and a printf-style message; returns code. */
int llmsim_err_set(struct llmsim_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As llmsim_err_set, with a "path:line:col: " prefix (line/col 1-based;
 * a zero line or col is left out). Returns code. */
int llmsim_err_setloc(struct llmsim_err *e, int code, const char *path,
		      int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Internal contract breaks (never user input) abort with file:line. */
#define LLMSIM_ASSERT(c)                                                     \
	do {                                                                 \
		if (!(c))                                                    \
			llmsim_assert_fail(#c, __FILE__, __LINE__);          \
	} while (0)
_Noreturn void llmsim_assert_fail(const char *what, const char *file, int line);

#endif
