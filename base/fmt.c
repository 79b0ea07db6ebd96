/* fmt.c - unit scaling and aligned tables for human output. */
#include "fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"

static char *scaled(char *buf, double v, const char *unit, const char *const *pre,
		    int npre, double step)
{
	int i = 0;
	double a = fabs(v);
	while (i + 1 < npre && a >= step * 0.9995) {
		a /= step;
		v /= step;
		i++;
	}
	if (!isfinite(v))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else if (fabs(v) >= 1e6) /* beyond the largest prefix */
		snprintf(buf, LLMSIM_FMT_MAX, "%.3g %s%s", v, pre[i], unit);
	else if (fabs(v) >= 100 || (i == 0 && v == floor(v)))
		snprintf(buf, LLMSIM_FMT_MAX, "%.1f %s%s", v, pre[i], unit);
	else
		snprintf(buf, LLMSIM_FMT_MAX, "%.2f %s%s", v, pre[i], unit);
	return buf;
}

static const char *const si[] = {"", "K", "M", "G", "T", "P", "E"};

char *llmsim_fmt_bytes(char *buf, double b) { return scaled(buf, b, "B", si, 7, 1000.0); }
char *llmsim_fmt_flops(char *buf, double f) { return scaled(buf, f, "FLOP", si, 7, 1000.0); }
char *llmsim_fmt_flops_rate(char *buf, double f) { return scaled(buf, f, "FLOP/s", si, 7, 1000.0); }
char *llmsim_fmt_bytes_rate(char *buf, double b) { return scaled(buf, b, "B/s", si, 7, 1000.0); }
char *llmsim_fmt_hz(char *buf, double hz) { return scaled(buf, hz, "Hz", si, 7, 1000.0); }

char *llmsim_fmt_count(char *buf, double n)
{
	/* G, not B: a count never shares the letter of bytes */
	static const char *const c[] = {"", "K", "M", "G", "T"};
	scaled(buf, n, "", c, 5, 1000.0);
	size_t l = strlen(buf);
	if (l && buf[l - 1] == ' ')
		buf[l - 1] = 0;
	return buf;
}

char *llmsim_fmt_time(char *buf, double s)
{
	double a = fabs(s);
	if (!isfinite(s))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else if (a == 0)
		snprintf(buf, LLMSIM_FMT_MAX, "0 s");
	else if (a < 1e-6)
		snprintf(buf, LLMSIM_FMT_MAX, "%.1f ns", s * 1e9);
	else if (a < 1e-3)
		snprintf(buf, LLMSIM_FMT_MAX, "%.2f us", s * 1e6);
	else if (a < 1)
		snprintf(buf, LLMSIM_FMT_MAX, "%.2f ms", s * 1e3);
	else if (a < 3600)
		snprintf(buf, LLMSIM_FMT_MAX, "%.2f s", s);
	else if (a < 3600e6)
		snprintf(buf, LLMSIM_FMT_MAX, "%.2f h", s / 3600);
	else
		snprintf(buf, LLMSIM_FMT_MAX, "%.3g h", s / 3600);
	return buf;
}

char *llmsim_fmt_pct(char *buf, double x)
{
	if (!isfinite(x))
		snprintf(buf, LLMSIM_FMT_MAX, "-");
	else
		snprintf(buf, LLMSIM_FMT_MAX, "%.1f%%", x * 100);
	return buf;
}

void llmsim_table_init(struct llmsim_table *t, int ncols, const char *const *head)
{
	LLMSIM_ASSERT(ncols > 0 && ncols <= LLMSIM_TABLE_MAX_COLS);
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
	for (int i = 0; i < ncols; i++) {
		const char *h = head[i];
		for (; *h == '<' || *h == '~' || *h == '|'; h++) {
			t->left[i] |= *h == '<';
			t->detail[i] |= *h == '~';
			t->by_row |= *h == '|';
		}
		t->head[i] = h;
	}
}

void llmsim_table_row(struct llmsim_table *t, const char *const *cells)
{
	if (t->rows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = realloc(t->cells, t->cap * (size_t)t->ncols * sizeof *t->cells);
		LLMSIM_ASSERT(t->cells);
	}
	for (int i = 0; i < t->ncols; i++) {
		char *c = strdup(cells[i] ? cells[i] : "");
		LLMSIM_ASSERT(c);
		t->cells[t->rows * (size_t)t->ncols + (size_t)i] = c;
	}
	t->rows++;
}

void llmsim_table_rowf(struct llmsim_table *t, const char *fmt, ...)
{
	char line[2048];
	const char *cells[LLMSIM_TABLE_MAX_COLS] = {0};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	char *p = line;
	for (int i = 0; i < t->ncols; i++) {
		cells[i] = p ? p : "";
		if (p) {
			char *tab = strchr(p, '\t');
			if (tab) {
				*tab = 0;
				p = tab + 1;
			} else {
				p = NULL;
			}
		}
	}
	llmsim_table_row(t, cells);
}

static int table_width = LLMSIM_TABLE_WIDTH;

/* Display width of UTF-8 text (code points, not bytes). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

/* ---- one unit per column ---- */

/* The units a cell may carry, each with its factor to the family's base;
 * the families are the formatters above (bytes, times, rates, FLOPs). */
struct unit {
	const char *name;
	int family;
	double scale;
};
#define PREFIXED(base, fam)                                                              \
	{base, fam, 1}, {"K" base, fam, 1e3}, {"M" base, fam, 1e6}, {"G" base, fam, 1e9}, \
	    {"T" base, fam, 1e12}, {"P" base, fam, 1e15}, {"E" base, fam, 1e18}
static const struct unit units[] = {
	PREFIXED("B", 0),      PREFIXED("B/s", 1), PREFIXED("FLOP", 2), PREFIXED("FLOP/s", 3),
	PREFIXED("Hz", 4),     {"ns", 5, 1e-9},    {"us", 5, 1e-6},     {"ms", 5, 1e-3},
	{"s", 5, 1},           {"h", 5, 3600},
};

/* A cell that is exactly "NUMBER UNIT": its value in the family's base
 * unit and the unit; NULL for any other cell. */
static const struct unit *cell_unit(const char *c, double *v)
{
	char *end;
	double x = strtod(c, &end);
	if (end == c || *end != ' ' || !isfinite(x))
		return NULL;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcmp(end + 1, units[i].name)) {
			*v = x * units[i].scale;
			return &units[i];
		}
	return NULL;
}

/* Where a column's cells carry units of one family but not one unit, all
 * of them in the unit most of them have, the larger on a tie ("0.65 h"
 * beside "1.17 h", never "2347.02 s" beside "1.17 h"; "2250.0 TFLOP/s"
 * among TFLOP/s). */
static void one_unit(char **cell[], size_t n)
{
	enum { NU = sizeof units / sizeof units[0] };
	const struct unit *big = NULL, *first = NULL;
	int count[NU] = {0}, mixed = 0;
	for (size_t r = 0; r < n; r++) {
		double v;
		const struct unit *u = cell_unit(*cell[r], &v);
		if (!u)
			continue;
		if (first && u->family != first->family)
			return;
		if (first && u != first)
			mixed = 1;
		if (!first)
			first = u;
		count[u - units]++;
	}
	if (!mixed)
		return;
	for (int i = 0; i < NU; i++)
		if (count[i] && (!big || count[i] > count[big - units] ||
				 (count[i] == count[big - units] && units[i].scale > big->scale)))
			big = &units[i];
	for (size_t r = 0; r < n; r++) {
		char **c = cell[r], buf[LLMSIM_FMT_MAX];
		double v;
		if (!cell_unit(*c, &v))
			continue;
		double x = v / big->scale;
		if (x == 0)
			snprintf(buf, sizeof buf, "0 %s", big->name);
		else if (fabs(x) >= 100)
			snprintf(buf, sizeof buf, "%.1f %s", x, big->name);
		else if (fabs(x) >= 1)
			snprintf(buf, sizeof buf, "%.2f %s", x, big->name);
		else
			snprintf(buf, sizeof buf, "%.3g %s", x, big->name);
		char *dup = strdup(buf);
		LLMSIM_ASSERT(dup);
		free(*c);
		*c = dup;
	}
}

/* Text s within width columns a line, broken at blanks, each further line
 * starting indent columns in (a word longer than width stands whole). */
static void wrapped(FILE *f, const char *s, size_t wid, size_t indent)
{
	for (int first = 1; *s; first = 0) {
		if (!first)
			fprintf(f, "\n%*s", (int)indent, "");
		size_t n = strlen(s), cut = n, c = 0;
		if (width(s) > wid) {
			cut = 0;
			for (size_t i = 0; i < n && c <= wid; i++) {
				if (s[i] == ' ')
					cut = i;
				c += ((unsigned char)s[i] & 0xC0) != 0x80;
			}
			if (!cut) /* one long word: up to its end */
				cut = strcspn(s, " ");
		}
		fwrite(s, 1, cut, f);
		s += cut;
		while (*s == ' ')
			s++;
	}
}

void llmsim_table_print(struct llmsim_table *t, FILE *f)
{
	size_t w[LLMSIM_TABLE_MAX_COLS];
	/* one unit per column, or per row where each row is a quantity */
	char **line[LLMSIM_TABLE_MAX_COLS];
	if (t->by_row) {
		for (size_t r = 0; r < t->rows; r++) {
			for (int c = 0; c < t->ncols; c++)
				line[c] = &t->cells[r * (size_t)t->ncols + (size_t)c];
			one_unit(line, (size_t)t->ncols);
		}
	} else {
		char ***col = malloc((t->rows ? t->rows : 1) * sizeof *col);
		LLMSIM_ASSERT(col);
		for (int c = 0; c < t->ncols; c++) {
			for (size_t r = 0; r < t->rows; r++)
				col[r] = &t->cells[r * (size_t)t->ncols + (size_t)c];
			one_unit(col, t->rows);
		}
		free(col);
	}
	for (int c = 0; c < t->ncols; c++) {
		w[c] = width(t->head[c]);
		for (size_t r = 0; r < t->rows; r++) {
			size_t x = width(t->cells[r * (size_t)t->ncols + (size_t)c]);
			if (x > w[c])
				w[c] = x;
		}
	}
	/* which columns fit the width limit: detail ones go first, then the
	 * others, right to left */
	int shown[LLMSIM_TABLE_MAX_COLS], last = 0, hidden = 0;
	size_t total = 0;
	for (int c = 0; c < t->ncols; c++) {
		shown[c] = 1;
		total += w[c] + (c ? 2 : 0);
	}
	/* a left-aligned last column of text (a note) wraps within what the
	 * others leave it, when that is 24 columns or more */
	int lc = t->ncols - 1, wrap = 0;
	if (table_width && total > (size_t)table_width && lc > 0 && t->left[lc] &&
	    total - w[lc] + 24 <= (size_t)table_width) {
		w[lc] = (size_t)table_width - (total - w[lc]);
		total = (size_t)table_width;
		wrap = 1;
	}
	for (int pass = 0; pass < 2 && table_width && total > (size_t)table_width; pass++)
		for (int c = t->ncols - 1; c > 0 && total > (size_t)table_width; c--)
			if (shown[c] && (pass || t->detail[c])) {
				shown[c] = 0;
				total -= w[c] + 2;
				hidden++;
			}
	for (int c = 0; c < t->ncols; c++)
		if (shown[c])
			last = c;
	size_t indent = total - (wrap ? w[lc] : 0); /* where a wrapped note continues */
	for (size_t r = 0; r <= t->rows + 1; r++) {
		int first = 1;
		for (int c = 0; c < t->ncols; c++) {
			if (!shown[c])
				continue;
			if (wrap && c == lc && r > 1) {
				if (!first)
					fputs("  ", f);
				wrapped(f, t->cells[(r - 2) * (size_t)t->ncols + (size_t)c], w[c], indent);
				continue;
			}
			const char *s;
			char rule[256];
			if (r == 0) {
				s = t->head[c];
			} else if (r == 1) {
				size_t n = w[c] < sizeof rule - 1 ? w[c] : sizeof rule - 1;
				memset(rule, '-', n);
				rule[n] = 0;
				s = rule;
			} else {
				s = t->cells[(r - 2) * (size_t)t->ncols + (size_t)c];
			}
			int pad = (int)(w[c] - width(s));
			if (!first)
				fputs("  ", f);
			first = 0;
			if (t->left[c])
				fprintf(f, "%s%*s", s, c < last ? pad : 0, "");
			else
				fprintf(f, "%*s%s", pad, "", s);
		}
		fputc('\n', f);
	}
	if (hidden)
		fprintf(f, "(%d more column%s: --wide)\n", hidden, hidden > 1 ? "s" : "");
}

void llmsim_table_set_width(int cols)
{
	table_width = cols;
}

int llmsim_table_width(void)
{
	return table_width;
}

void llmsim_table_release(struct llmsim_table *t)
{
	for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->rows = t->cap = 0;
}
