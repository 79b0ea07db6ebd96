/*
 * test_jsonread.c - base/jsonread: every kind of value with its position;
 * integers exact to 64 bits; escapes and surrogate pairs to UTF-8; and the
 * strictness: each malformed document fails with one "name:line:col:"
 * message at the offending character, nesting and size bounded. (The
 * fuzz target, fuzz_json, replays its corpus as the CTest test
 * fuzz_corpus_json.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonread.h"
#include "support.h"

static struct llmsim_jdoc *parse_ok(const char *text)
{
	struct llmsim_jdoc *d;
	struct llmsim_err err = {0};
	cr_assert_eq(llmsim_json_parse(text, strlen(text), "t.json", &d, &err), 0, "%s: %s", text,
		     err.msg);
	return d;
}

static void expect_fail(const char *text, const char *want)
{
	struct llmsim_jdoc *d = NULL;
	struct llmsim_err err = {0};
	int rc = llmsim_json_parse(text, strlen(text), "t.json", &d, &err);
	cr_expect_neq(rc, 0, "%s parsed", text);
	cr_expect_null(d);
	char full[256];
	snprintf(full, sizeof full, "t.json:%s", want);
	cr_expect_str_eq(err.msg, full, "for %s", text);
}

Test(jsonread, kinds_positions_and_lookup)
{
	struct llmsim_jdoc *d = parse_ok("{\n  \"a\": [1, -2.5e3, true, false, null],\n"
					 "  \"b\": {\"c\": \"x\"}\n}\n");
	const struct llmsim_jnode *r = llmsim_jdoc_root(d);
	cr_assert_eq(r->kind, LLMSIM_J_OBJ);
	cr_expect_eq(r->n, 2);
	cr_expect_str_eq(r->keys[0], "a");
	const struct llmsim_jnode *a = llmsim_jobj_get(r, "a");
	cr_assert_not_null(a);
	cr_expect_eq(a->kind, LLMSIM_J_ARR);
	cr_expect_eq(a->n, 5);
	/* "[" is line 2, column 8 */
	cr_expect_eq(a->line, 2);
	cr_expect_eq(a->col, 8);
	cr_expect(a->vals[0]->is_int && a->vals[0]->i == 1);
	cr_expect(!a->vals[1]->is_int);
	expect_close(a->vals[1]->num, -2500, 0);
	cr_expect_str_eq(a->vals[1]->str, "-2.5e3");
	cr_expect(a->vals[2]->kind == LLMSIM_J_BOOL && a->vals[2]->boolean == 1);
	cr_expect(a->vals[3]->kind == LLMSIM_J_BOOL && a->vals[3]->boolean == 0);
	cr_expect_eq(a->vals[4]->kind, LLMSIM_J_NULL);
	const struct llmsim_jnode *c = llmsim_jobj_get(llmsim_jobj_get(r, "b"), "c");
	cr_assert_not_null(c);
	cr_expect_str_eq(c->str, "x");
	cr_expect_eq(c->line, 3);
	cr_expect_eq(c->col, 14);
	cr_expect_null(llmsim_jobj_get(r, "z"));
	cr_expect_null(llmsim_jobj_get(a, "a"), "an array has no keys");
	llmsim_jdoc_free(d);
	llmsim_jdoc_free(NULL);
}

Test(jsonread, integers_exact_and_doubles_nearest)
{
	/* 2^53 + 1 has no double; as an integer it stays exact */
	struct llmsim_jdoc *d = parse_ok("[9007199254740993, 9223372036854775807, "
					 "9223372036854775808, -0, 0.1, 1E2]");
	const struct llmsim_jnode *r = llmsim_jdoc_root(d);
	cr_expect(r->vals[0]->is_int && r->vals[0]->i == 9007199254740993LL);
	cr_expect(r->vals[1]->is_int && r->vals[1]->i == INT64_MAX);
	cr_expect(!r->vals[2]->is_int, "past int64: a double only");
	expect_close(r->vals[2]->num, 9223372036854775808.0, 0);
	cr_expect(r->vals[3]->is_int && r->vals[3]->i == 0);
	cr_expect(!r->vals[4]->is_int && r->vals[4]->num == 0.1);
	cr_expect(!r->vals[5]->is_int && r->vals[5]->num == 100);
	llmsim_jdoc_free(d);
}

Test(jsonread, escapes_and_utf8)
{
	struct llmsim_jdoc *d = parse_ok("\xef\xbb\xbf[\"a\\\"b\\\\c\\/d\\n\\t\", \"\\u00e9\\ud83d\\ude00\", "
					 "\"\xc3\xa9\"]");
	const struct llmsim_jnode *r = llmsim_jdoc_root(d);
	cr_expect_str_eq(r->vals[0]->str, "a\"b\\c/d\n\t");
	cr_expect_str_eq(r->vals[1]->str, "\xc3\xa9\xf0\x9f\x98\x80", "U+00E9, U+1F600");
	cr_expect_str_eq(r->vals[2]->str, "\xc3\xa9");
	llmsim_jdoc_free(d);
}

Test(jsonread, malformed_documents_name_the_place)
{
	expect_fail("", "1:1: expected a value, got end of file");
	expect_fail("   \n ", "2:2: expected a value, got end of file");
	expect_fail("{\"a\": 1,}", "1:9: expected a key (a string; no trailing comma), got '}'");
	expect_fail("[1, 2,]", "1:7: expected a value (no trailing comma), got ']'");
	expect_fail("{\"a\" 1}", "1:6: expected ':' after the key, got '1'");
	expect_fail("{\"a\": 1 \"b\": 2}", "1:9: expected ',' or '}', got '\"'");
	expect_fail("[1 2]", "1:4: expected ',' or ']', got '2'");
	expect_fail("{\"a\": 1,\n \"a\": 2}", "2:2: duplicate key 'a'");
	expect_fail("[NaN]", "1:2: expected a value, got 'N'");
	expect_fail("[Infinity]", "1:2: expected a value, got 'I'");
	expect_fail("[tru]", "1:2: expected a value, got 't'");
	expect_fail("// c\n1", "1:1: expected a value, got '/'");
	expect_fail("{} x", "1:4: expected the end of the document, got 'x'");
	expect_fail("01", "1:2: expected the end of the document, got '1'");
	expect_fail("[1.]", "1:2: malformed number (digits must follow '.')");
	expect_fail("[1e]", "1:2: malformed number (digits must follow the exponent)");
	expect_fail("[-]", "1:2: malformed number");
	expect_fail("[1e400]", "1:2: number out of range of a double");
	expect_fail("[\"abc", "1:2: unterminated string");
	expect_fail("[\"a\nb\"]", "1:4: newline in a string (write \\n)");
	expect_fail("[\"a\tb\"]", "1:4: control character in a string");
	expect_fail("[\"\\x\"]", "1:3: unknown escape in a string");
	expect_fail("[\"\\u12\"]", "1:3: \\u needs 4 hex digits");
	expect_fail("[\"\\ud800\"]", "1:3: unpaired UTF-16 surrogate in \\u escape");
	expect_fail("[\"\\udc00\"]", "1:3: unpaired UTF-16 surrogate in \\u escape");
	expect_fail("[\"\\u0000\"]", "1:3: \\u0000 (NUL) in a string");
	expect_fail("[\"\xff\"]", "1:3: invalid UTF-8 in a string");
	expect_fail("[\"\xc0\xaf\"]", "1:3: invalid UTF-8 in a string"); /* overlong '/' */
	expect_fail("[\"\xed\xa0\x80\"]", "1:3: invalid UTF-8 in a string"); /* a surrogate */
}

Test(jsonread, nesting_and_size_are_bounded)
{
	char deep[2 * LLMSIM_JSON_MAX_NEST + 8];
	/* 64 levels parse, 65 do not */
	for (int levels = LLMSIM_JSON_MAX_NEST; levels <= LLMSIM_JSON_MAX_NEST + 1; levels++) {
		int n = 0;
		for (int i = 0; i < levels; i++)
			deep[n++] = '[';
		for (int i = 0; i < levels; i++)
			deep[n++] = ']';
		deep[n] = 0;
		struct llmsim_jdoc *d = NULL;
		struct llmsim_err err = {0};
		int rc = llmsim_json_parse(deep, (size_t)n, "t.json", &d, &err);
		if (levels == LLMSIM_JSON_MAX_NEST) {
			cr_expect_eq(rc, 0, "%s", err.msg);
		} else {
			cr_expect_eq(rc, LLMSIM_EPARSE);
			cr_expect_str_eq(err.msg, "t.json:1:65: nested deeper than 64 levels");
		}
		llmsim_jdoc_free(d);
	}
	size_t big = (size_t)LLMSIM_JSON_MAX_BYTES + 1;
	char *buf = malloc(big);
	cr_assert_not_null(buf);
	memset(buf, ' ', big);
	buf[0] = '0';
	struct llmsim_jdoc *d = NULL;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_json_parse(buf, big, "big.json", &d, &err), LLMSIM_EINVAL);
	cr_expect_str_eq(err.msg, "big.json: larger than 16777216 bytes");
	free(buf);
}

Test(jsonread, many_keys_check_duplicates_fast)
{
	/* 20000 distinct keys, then one repeated: found by sorting */
	size_t cap = 20001 * 16 + 16, n = 0;
	char *s = malloc(cap);
	s[n++] = '{';
	for (int i = 0; i < 20000; i++)
		n += (size_t)snprintf(s + n, cap - n, "\"k%d\":%d,", i, i);
	n += (size_t)snprintf(s + n, cap - n, "\"k77\":0}");
	struct llmsim_jdoc *d = NULL;
	struct llmsim_err err = {0};
	cr_expect_eq(llmsim_json_parse(s, n, "t.json", &d, &err), LLMSIM_EPARSE);
	cr_expect(strstr(err.msg, "duplicate key 'k77'"), "%s", err.msg);
	free(s);
}
