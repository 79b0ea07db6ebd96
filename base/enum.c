/* enum.c - names of enum values from their tables (enum.h). */
#include "enum.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

const char *llmsim_enum_name(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : NULL;
}

int llmsim_enum_parse(const char *const *names, int n, const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

const char *llmsim_enum_label(const char *const *names, int n, int v)
{
	const char *s = llmsim_enum_name(names, n, v);
	return s ? s : "?";
}

int llmsim_enum_parse_nocase(const char *const *names, int n, const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < n; i++)
		if (names[i] && !strcasecmp(names[i], s))
			return i;
	return -1;
}
