/* json.c - streaming JSON writer with two-space indentation. */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "err.h"

void llmsim_json_init(struct llmsim_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->count[0] = 0;
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void prefix(struct llmsim_json *j, const char *key)
{
	if (j->depth > 0) {
		fputs(j->count[j->depth] ? ",\n" : "\n", j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	j->count[j->depth]++;
	if (key && j->depth > 0) {
		put_str(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(struct llmsim_json *j, const char *key, char c)
{
	prefix(j, key);
	fputc(c, j->f);
	LLMSIM_ASSERT(j->depth + 1 < LLMSIM_JSON_MAX_DEPTH);
	j->count[++j->depth] = 0;
}

static void close_(struct llmsim_json *j, char c)
{
	LLMSIM_ASSERT(j->depth > 0);
	int had = j->count[j->depth];
	j->depth--;
	if (had) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
}

void llmsim_json_obj_begin(struct llmsim_json *j, const char *key) { open_(j, key, '{'); }
void llmsim_json_obj_end(struct llmsim_json *j) { close_(j, '}'); }
void llmsim_json_arr_begin(struct llmsim_json *j, const char *key) { open_(j, key, '['); }
void llmsim_json_arr_end(struct llmsim_json *j) { close_(j, ']'); }

#define JSON_NUM_MAX 32 /* bytes of a number json_fmt_num writes */

/* The shortest of 15, 16 and 17 significant digits that reads back as v:
 * 15 digits print every double of up to 15 digits as written (0.1, not
 * 0.10000000000000001), and 17 always round-trip. */
static char *json_fmt_num(char *buf, double v)
{
	for (int p = 15; p <= 17; p++) {
		snprintf(buf, JSON_NUM_MAX, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void llmsim_json_num(struct llmsim_json *j, const char *key, double v)
{
	char buf[JSON_NUM_MAX];
	prefix(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else if (v == floor(v) && fabs(v) < 1e21)
		fprintf(j->f, "%.0f", v); /* an integer prints as one (past 2^53 its
					   * exact decimal value, which reads back as v) */
	else
		fputs(json_fmt_num(buf, v), j->f);
}


void llmsim_json_int(struct llmsim_json *j, const char *key, int64_t v)
{
	prefix(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void llmsim_json_str(struct llmsim_json *j, const char *key, const char *v)
{
	prefix(j, key);
	if (v)
		put_str(j->f, v);
	else
		fputs("null", j->f);
}

void llmsim_json_bool(struct llmsim_json *j, const char *key, int v)
{
	prefix(j, key);
	fputs(v ? "true" : "false", j->f);
}

void llmsim_json_null(struct llmsim_json *j, const char *key)
{
	prefix(j, key);
	fputs("null", j->f);
}

void llmsim_json_finish(struct llmsim_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}

void llmsim_json_str_list(struct llmsim_json *j, const char *key, const char *list)
{
	llmsim_json_arr_begin(j, key);
	while (*list) {
		const char *e = strstr(list, ", ");
		size_t n = e ? (size_t)(e - list) : strlen(list);
		char item[512];
		snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), list);
		llmsim_json_str(j, NULL, item);
		list += n + (e ? 2 : 0);
	}
	llmsim_json_arr_end(j);
}
