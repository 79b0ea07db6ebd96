/*
 * test_fmt.c - the output writers of base/: the JSON number writer (one,
 * for every --json), counts and their letters, and the text table's width
 * limit and one unit per column.
 */
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "base/json.h"
#include "support.h"

/* What llmsim_json_num writes for v. */
static const char *num(double v)
{
	static char buf[64];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct llmsim_json j;
	llmsim_json_init(&j, f);
	llmsim_json_num(&j, NULL, v);
	fclose(f);
	snprintf(buf, sizeof buf, "%s", text);
	free(text);
	return buf;
}

Test(fmt, json_numbers)
{
	/* integers as integers: the H200's 150754820096 bytes, not 1.507548201e+11 */
	cr_expect_str_eq(num(150754820096.0), "150754820096");
	cr_expect_str_eq(num(-3), "-3");
	cr_expect_str_eq(num(0), "0");
	/* the shortest that reads back: 15 digits suffice for these */
	cr_expect_str_eq(num(0.1), "0.1");
	cr_expect_str_eq(num(2.5e-7), "2.5e-07");
	/* 0.1 + 0.2 needs 17 digits, 1/3 16 */
	cr_expect_str_eq(num(0.1 + 0.2), "0.30000000000000004");
	cr_expect_str_eq(num(1.0 / 3), "0.3333333333333333");
	/* every value reads back exactly */
	const double v[] = {1.0 / 7, 989.4e12 / 3, 6.02214076e23, 1e-300, 123456.789012345678};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		cr_expect_eq(strtod(num(v[i]), NULL), v[i], "%s", num(v[i]));
	cr_expect_str_eq(num(1.0 / 0.0), "null");
}

Test(fmt, counts_are_g_not_b)
{
	char b[LLMSIM_FMT_MAX];
	/* Llama 3.1 70B: 70,553,706,496 parameters */
	cr_expect_str_eq(llmsim_fmt_count(b, 70553706496.0), "70.55 G");
	cr_expect_str_eq(llmsim_fmt_count(b, 8.03e6), "8.03 M");
	cr_expect_str_eq(llmsim_fmt_bytes(b, 141e9), "141.0 GB");
}

/* The table's text into a malloc'd string. */
static char *print(struct llmsim_table *t)
{
	FILE *f = tmpfile();
	cr_assert_not_null(f);
	llmsim_table_print(t, f);
	long n = ftell(f);
	char *text = calloc((size_t)n + 1, 1);
	rewind(f);
	cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return text;
}

Test(fmt, one_unit_per_column)
{
	static const char *const head[] = {"<part", "time", "<note"};
	struct llmsim_table t;
	llmsim_table_init(&t, 3, head);
	/* 2347.02 s beside 1.17 h becomes 0.652 h (2347.02 / 3600, three significant digits) */
	llmsim_table_rowf(&t, "compute\t2347.02 s\tfwd 2 s + bwd 1 h");
	llmsim_table_rowf(&t, "step\t1.17 h\t");
	llmsim_table_rowf(&t, "bubble\t-\t");
	char *s = print(&t);
	cr_expect(strstr(s, "compute  0.652 h"), "%s", s);
	cr_expect(strstr(s, "step      1.17 h"), "%s", s);
	cr_expect(strstr(s, "fwd 2 s + bwd 1 h"), "notes are text, left alone: %s", s);
	free(s);
	llmsim_table_release(&t);
}

Test(fmt, width_limit_and_wide)
{
	/* 10 columns of 12 characters: 10 x 12 + 9 x 2 = 138 wide */
	const char *head[10] = {"<a", "b", "~c", "d", "e", "f", "g", "h", "~i", "j"};
	struct llmsim_table t;
	llmsim_table_init(&t, 10, head);
	llmsim_table_rowf(&t, "aaaaaaaaaaaa\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", "bbbbbbbbbbbb",
			  "cccccccccccc", "dddddddddddd", "eeeeeeeeeeee", "ffffffffffff",
			  "gggggggggggg", "hhhhhhhhhhhh", "iiiiiiiiiiii", "jjjjjjjjjjjj");
	char *s = print(&t);
	/* the two detail columns go first (138 - 28 = 110), then j, the last
	 * (110 - 14 = 96) */
	cr_expect_null(strstr(s, "ccc"), "%s", s);
	cr_expect_null(strstr(s, "iii"), "%s", s);
	cr_expect_null(strstr(s, "jjj"), "%s", s);
	cr_expect(strstr(s, "hhh") && strstr(s, "(3 more columns: --wide)\n"), "%s", s);
	const char *rule = strchr(s, '\n') + 1;
	cr_expect_eq(strchr(rule, '\n') - rule, 96, "%s", s);
	free(s);
	llmsim_table_set_width(0); /* --wide */
	s = print(&t);
	cr_expect(strstr(s, "ccc") && strstr(s, "jjj") && !strstr(s, "--wide"), "%s", s);
	free(s);
	llmsim_table_set_width(LLMSIM_TABLE_WIDTH);
	llmsim_table_release(&t);
}

/* A table whose rows are each one quantity keeps one unit per row. */
Test(fmt, one_unit_per_row)
{
	static const char *const head[] = {"<|latency", "mean", "p99"};
	struct llmsim_table t;
	llmsim_table_init(&t, 3, head);
	/* TTFT 337.6 ms and 1.02 s: one cell of each, so the larger unit: s */
	llmsim_table_rowf(&t, "TTFT\t337.6 ms\t1.02 s");
	llmsim_table_rowf(&t, "TPOT\t15.01 ms\t15.33 ms");
	char *s = print(&t);
	cr_expect(strstr(s, "TTFT      0.338 s    1.02 s\n"), "%s", s);
	cr_expect(strstr(s, "15.01 ms") && strstr(s, "15.33 ms"), "the TPOT row stays in ms: %s",
		  s);
	free(s);
	llmsim_table_release(&t);
}
