/*
 * jsonread.c - a strict, bounded JSON reader (see jsonread.h): recursive
 * descent over the bytes, at most LLMSIM_JSON_MAX_NEST levels deep, every
 * node and string in one arena freed with the document. Object keys are
 * checked for duplicates by sorting, so a hostile object of many keys
 * costs n log n, not n^2.
 */
#include "jsonread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gzfile.h"

/* ---- the arena ---- */

struct block {
	struct block *next;
	size_t used, size;
	_Alignas(16) unsigned char mem[];
};

struct llmsim_jdoc {
	struct block *blocks;
	const struct llmsim_jnode *root;
};

static void *arena_alloc(struct llmsim_jdoc *d, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct block *b = d->blocks;
	if (!b || b->size - b->used < n) {
		size_t size = n > 65536 ? n : 65536;
		b = malloc(sizeof *b + size);
		if (!b)
			return NULL;
		b->next = d->blocks;
		b->used = 0;
		b->size = size;
		d->blocks = b;
	}
	void *p = b->mem + b->used;
	b->used += n;
	return p;
}

void llmsim_jdoc_free(struct llmsim_jdoc *doc)
{
	if (!doc)
		return;
	for (struct block *b = doc->blocks, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(doc);
}

const struct llmsim_jnode *llmsim_jdoc_root(const struct llmsim_jdoc *doc)
{
	return doc->root;
}

const struct llmsim_jnode *llmsim_jobj_get(const struct llmsim_jnode *obj, const char *key)
{
	if (!obj || obj->kind != LLMSIM_J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->vals[i];
	return NULL;
}

const char *llmsim_jkind_name(enum llmsim_jkind k)
{
	static const char *const names[] = {
		[LLMSIM_J_NULL] = "null",	 [LLMSIM_J_BOOL] = "a boolean",
		[LLMSIM_J_NUM] = "a number",	 [LLMSIM_J_STR] = "a string",
		[LLMSIM_J_ARR] = "an array",	 [LLMSIM_J_OBJ] = "an object",
	};
	_Static_assert(sizeof names / sizeof names[0] == LLMSIM_J_OBJ + 1, "kind names");
	return (unsigned)k <= LLMSIM_J_OBJ ? names[k] : "?";
}

/* ---- the parser ---- */

struct parser {
	const char *s, *end, *p;
	const char *line_start;
	int line;
	const char *name;
	struct llmsim_jdoc *doc;
	struct llmsim_err *err;
};

static int col(const struct parser *P, const char *at)
{
	return (int)(at - P->line_start) + 1;
}

static int fail_at(struct parser *P, const char *at, const char *fmt, const char *what)
{
	char msg[160];
	snprintf(msg, sizeof msg, fmt, what);
	return llmsim_err_setloc(P->err, LLMSIM_EPARSE, P->name, P->line, col(P, at), "%s", msg);
}

/* "'x'", "end of file" or a byte's code, for messages */
static const char *shown(const struct parser *P, const char *at, char *buf, size_t size)
{
	if (at >= P->end)
		snprintf(buf, size, "end of file");
	else if (*at >= 0x21 && *at < 0x7f)
		snprintf(buf, size, "'%c'", *at);
	else
		snprintf(buf, size, "byte 0x%02x", (unsigned char)*at);
	return buf;
}

static int unexpected(struct parser *P, const char *expected)
{
	char got[32], msg[128];
	snprintf(msg, sizeof msg, "expected %s, got %s", expected, shown(P, P->p, got, sizeof got));
	return fail_at(P, P->p, "%s", msg);
}

static int oom(struct parser *P)
{
	return llmsim_err_set(P->err, LLMSIM_ENOMEM, "out of memory");
}

static void skip_ws(struct parser *P)
{
	while (P->p < P->end) {
		char c = *P->p;
		if (c == '\n') {
			P->line++;
			P->line_start = ++P->p;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			P->p++;
		} else {
			break;
		}
	}
}

static struct llmsim_jnode *node(struct parser *P, enum llmsim_jkind k, const char *at)
{
	struct llmsim_jnode *n = arena_alloc(P->doc, sizeof *n);
	if (n) {
		memset(n, 0, sizeof *n);
		n->kind = k;
		n->line = P->line;
		n->col = col(P, at);
	}
	return n;
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
		: c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!n || end - p < n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at P->p (the opening quote) into *out (arena, NUL-terminated).
 * Escapes never grow the text, so the raw length bounds the result. */
static int string(struct parser *P, const char **out)
{
	const char *start = P->p++;
	const char *q = P->p;
	while (q < P->end && *q != '"') /* first pass: the raw length */
		q += *q == '\\' && q + 1 < P->end ? 2 : 1;
	if (q >= P->end)
		return fail_at(P, start, "%s", "unterminated string");
	char *o = arena_alloc(P->doc, (size_t)(q - P->p) + 1), *w = o;
	if (!o)
		return oom(P);
	while (*P->p != '"') {
		const unsigned char c = (unsigned char)*P->p;
		if (c < 0x20)
			return fail_at(P, P->p, "%s", c == '\n' ? "newline in a string (write \\n)"
							       : "control character in a string");
		if (c != '\\') {
			int n = utf8_len((const unsigned char *)P->p, (const unsigned char *)P->end);
			if (!n)
				return fail_at(P, P->p, "%s", "invalid UTF-8 in a string");
			memcpy(w, P->p, (size_t)n);
			w += n;
			P->p += n;
			continue;
		}
		const char *esc = P->p++;
		unsigned cp;
		switch (*P->p) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '/': *w++ = '/'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 't': *w++ = '\t'; break;
		case 'u':
			if (P->end - P->p < 5 || hex4(P->p + 1, &cp))
				return fail_at(P, esc, "%s", "\\u needs 4 hex digits");
			P->p += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) { /* a high surrogate: its pair */
				unsigned lo;
				if (P->end - P->p < 7 || P->p[1] != '\\' || P->p[2] != 'u' ||
				    hex4(P->p + 3, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return fail_at(P, esc, "%s", "unpaired UTF-16 surrogate in \\u escape");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				P->p += 6;
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				return fail_at(P, esc, "%s", "unpaired UTF-16 surrogate in \\u escape");
			}
			if (!cp)
				return fail_at(P, esc, "%s", "\\u0000 (NUL) in a string");
			w += put_utf8(w, cp);
			break;
		default:
			return fail_at(P, esc, "%s", "unknown escape in a string");
		}
		P->p++;
	}
	P->p++; /* the closing quote */
	*w = 0;
	*out = o;
	return 0;
}

static int number(struct parser *P, struct llmsim_jnode *n)
{
	const char *s = P->p, *q = s;
	int frac = 0;
	if (q < P->end && *q == '-')
		q++;
	if (q < P->end && *q == '0')
		q++;
	else if (q < P->end && *q >= '1' && *q <= '9')
		while (q < P->end && *q >= '0' && *q <= '9')
			q++;
	else
		return fail_at(P, s, "%s", "malformed number");
	if (q < P->end && *q == '.') {
		frac = 1;
		if (++q >= P->end || *q < '0' || *q > '9')
			return fail_at(P, s, "%s", "malformed number (digits must follow '.')");
		while (q < P->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < P->end && (*q == 'e' || *q == 'E')) {
		frac = 1;
		q++;
		if (q < P->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= P->end || *q < '0' || *q > '9')
			return fail_at(P, s, "%s", "malformed number (digits must follow the exponent)");
		while (q < P->end && *q >= '0' && *q <= '9')
			q++;
	}
	size_t len = (size_t)(q - s);
	char *text = arena_alloc(P->doc, len + 1);
	if (!text)
		return oom(P);
	memcpy(text, s, len);
	text[len] = 0;
	errno = 0;
	n->num = strtod(text, NULL);
	if (errno == ERANGE && (n->num > 1 || n->num < -1))
		return fail_at(P, s, "%s", "number out of range of a double");
	if (!frac) {
		errno = 0;
		long long v = strtoll(text, NULL, 10);
		if (!errno) {
			n->is_int = 1;
			n->i = v;
		}
	}
	n->str = text;
	P->p = q;
	return 0;
}

static int literal(struct parser *P, const char *word, struct llmsim_jnode *n)
{
	size_t len = strlen(word);
	if ((size_t)(P->end - P->p) < len || memcmp(P->p, word, len))
		return unexpected(P, "a value");
	P->p += len;
	if (word[0] == 't')
		n->boolean = 1;
	return 0;
}

struct member {
	const char *key;
	const struct llmsim_jnode *val;
	int line, col; /* of the key */
	size_t index;
};

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int value(struct parser *P, const struct llmsim_jnode **out, int depth);

/* An array or object at P->p: items into a growing scratch vector, then
 * copied into the arena. */
static int container(struct parser *P, struct llmsim_jnode *n, int depth)
{
	int obj = *P->p == '{';
	char close = obj ? '}' : ']';
	struct member *m = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;
	P->p++;
	skip_ws(P);
	if (P->p < P->end && *P->p == close) {
		P->p++;
		return 0;
	}
	for (;;) {
		skip_ws(P);
		if (cnt == cap) {
			cap = cap ? 2 * cap : 8;
			struct member *g = realloc(m, cap * sizeof *m);
			if (!g) {
				rc = oom(P);
				break;
			}
			m = g;
		}
		struct member *it = &m[cnt];
		memset(it, 0, sizeof *it);
		it->index = cnt;
		if (obj) {
			if (P->p >= P->end || *P->p != '"') {
				rc = unexpected(P, cnt ? "a key (a string; no trailing comma)" : "a key (a string) or '}'");
				break;
			}
			it->line = P->line;
			it->col = col(P, P->p);
			if ((rc = string(P, &it->key)))
				break;
			skip_ws(P);
			if (P->p >= P->end || *P->p != ':') {
				rc = unexpected(P, "':' after the key");
				break;
			}
			P->p++;
			skip_ws(P);
		}
		if ((rc = value(P, &it->val, depth + 1)))
			break;
		cnt++;
		skip_ws(P);
		if (P->p < P->end && *P->p == ',') {
			P->p++;
			skip_ws(P);
			if (!obj && P->p < P->end && *P->p == ']') {
				rc = unexpected(P, "a value (no trailing comma)");
				break;
			}
			continue;
		}
		if (P->p < P->end && *P->p == close) {
			P->p++;
			break;
		}
		rc = unexpected(P, obj ? "',' or '}'" : "',' or ']'");
		break;
	}
	if (!rc) {
		n->n = cnt;
		n->vals = arena_alloc(P->doc, cnt * sizeof *n->vals);
		if (obj)
			n->keys = arena_alloc(P->doc, cnt * sizeof *n->keys);
		if (!n->vals || (obj && !n->keys))
			rc = oom(P);
		for (size_t i = 0; !rc && i < cnt; i++) {
			n->vals[i] = m[i].val;
			if (obj)
				n->keys[i] = m[i].key;
		}
	}
	if (!rc && obj && cnt > 1) {
		qsort(m, cnt, sizeof *m, cmp_member);
		for (size_t i = 1; i < cnt; i++)
			if (!strcmp(m[i].key, m[i - 1].key)) {
				rc = llmsim_err_setloc(P->err, LLMSIM_EPARSE, P->name, m[i].line,
						       m[i].col, "duplicate key '%.200s'", m[i].key);
				break;
			}
	}
	free(m);
	return rc;
}

static int value(struct parser *P, const struct llmsim_jnode **out, int depth)
{
	if (depth > LLMSIM_JSON_MAX_NEST)
		return fail_at(P, P->p, "nested deeper than %s levels", "64");
	if (P->p >= P->end)
		return unexpected(P, "a value");
	const char *at = P->p;
	enum llmsim_jkind k;
	switch (*at) {
	case '{': k = LLMSIM_J_OBJ; break;
	case '[': k = LLMSIM_J_ARR; break;
	case '"': k = LLMSIM_J_STR; break;
	case 't': case 'f': k = LLMSIM_J_BOOL; break;
	case 'n': k = LLMSIM_J_NULL; break;
	default:
		if (*at == '-' || (*at >= '0' && *at <= '9')) {
			k = LLMSIM_J_NUM;
			break;
		}
		return unexpected(P, "a value");
	}
	struct llmsim_jnode *n = node(P, k, at);
	if (!n)
		return oom(P);
	int rc;
	switch (k) {
	case LLMSIM_J_OBJ:
	case LLMSIM_J_ARR: rc = container(P, n, depth); break;
	case LLMSIM_J_STR: rc = string(P, &n->str); break;
	case LLMSIM_J_NUM: rc = number(P, n); break;
	case LLMSIM_J_BOOL: rc = literal(P, *at == 't' ? "true" : "false", n); break;
	default: rc = literal(P, "null", n); break;
	}
	*out = n;
	return rc;
}

int llmsim_json_parse(const char *buf, size_t len, const char *name, struct llmsim_jdoc **doc,
		      struct llmsim_err *err)
{
	*doc = NULL;
	if (len > LLMSIM_JSON_MAX_BYTES)
		return llmsim_err_set(err, LLMSIM_EINVAL, "%s: larger than %u bytes", name,
				      LLMSIM_JSON_MAX_BYTES);
	struct llmsim_jdoc *d = calloc(1, sizeof *d);
	if (!d)
		return llmsim_err_set(err, LLMSIM_ENOMEM, "out of memory");
	struct parser P = {.s = buf, .end = buf + len, .p = buf, .line_start = buf, .line = 1,
			   .name = name, .doc = d, .err = err};
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
		P.p = P.line_start = buf + 3;
	skip_ws(&P);
	int rc = value(&P, &d->root, 1);
	if (!rc) {
		skip_ws(&P);
		if (P.p < P.end)
			rc = unexpected(&P, "the end of the document");
	}
	if (rc) {
		llmsim_jdoc_free(d);
		return rc;
	}
	*doc = d;
	return 0;
}

int llmsim_json_load_file(const char *path, struct llmsim_jdoc **doc, struct llmsim_err *err)
{
	char *buf;
	size_t len;
	*doc = NULL;
	int rc = llmsim_gz_slurp(path, LLMSIM_JSON_MAX_BYTES, &buf, &len, err);
	if (!rc)
		rc = llmsim_json_parse(buf, len, path, doc, err);
	free(buf);
	return rc;
}
