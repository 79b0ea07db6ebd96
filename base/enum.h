/*
 * enum.h - names of enum values, read from the owning module's table: an
 * array of strings indexed by the enum, filled with designated
 * initializers and held to the enum's count by a _Static_assert. The
 * bounds check and the search live here once; each module's _name() and
 * _parse() is a line over its table.
 */
#ifndef LLMSIM_ENUM_H
#define LLMSIM_ENUM_H

/* The entries of a table (an array, not a pointer). */
#define LLMSIM_ENUM_N(tab) ((int)(sizeof(tab) / sizeof((tab)[0])))

/* names[v], or NULL when v is outside [0, n) or has no name. */
const char *llmsim_enum_name(const char *const *names, int n, int v);

/* llmsim_enum_name, or "?" for a value without a name (a table's cell). */
const char *llmsim_enum_label(const char *const *names, int n, int v);

/* The first value of [0, n) named s (exact match; NULL entries, a value
 * without a name or a terminator, match nothing), or -1 when s is NULL or
 * no value has that name. */
int llmsim_enum_parse(const char *const *names, int n, const char *s);
/* llmsim_enum_parse ignoring case ("BF16" is bf16). */
int llmsim_enum_parse_nocase(const char *const *names, int n, const char *s);

#endif
