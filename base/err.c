/* err.c - status code names and error-record formatting. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *llmsim_strerror(int code)
{
	switch (code) {
	case LLMSIM_OK: return "ok";
	case LLMSIM_EINVAL: return "invalid argument";
	case LLMSIM_ENOENT: return "not found";
	case LLMSIM_EPARSE: return "parse error";
	case LLMSIM_ENOMEM: return "out of memory";
	case LLMSIM_EIO: return "i/o error";
	case LLMSIM_EUNSUPPORTED: return "unsupported";
	case LLMSIM_ENODEV: return "no device";
	case LLMSIM_ENOFIT: return "does not fit";
	case LLMSIM_EDB: return "database error";
	}
	return "unknown error";
}

int llmsim_err_set(struct llmsim_err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		e->code = code;
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

int llmsim_err_setloc(struct llmsim_err *e, int code, const char *path,
		      int line, int col, const char *fmt, ...)
{
	if (e) {
		int n;
		va_list ap;
		if (line > 0 && col > 0)
			n = snprintf(e->msg, sizeof e->msg, "%s:%d:%d: ", path, line, col);
		else if (line > 0)
			n = snprintf(e->msg, sizeof e->msg, "%s:%d: ", path, line);
		else
			n = snprintf(e->msg, sizeof e->msg, "%s: ", path);
		if (n < 0 || (size_t)n >= sizeof e->msg)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(e->msg + n, sizeof e->msg - (size_t)n, fmt, ap);
		va_end(ap);
		e->code = code;
	}
	return code;
}

_Noreturn void llmsim_assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "llmsim: internal error: assertion '%s' failed at %s:%d\n",
		what, file, line);
	abort();
}
