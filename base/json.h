/*
 * json.h - a streaming JSON writer for --json output.
 *
 * Keys are given with each value; inside arrays pass NULL. Numbers are
 * written in SI base units as the caller holds them: a double that holds
 * an integer (below 2^53) as an integer, any other as the shortest of
 * %.15g, %.16g and %.17g that reads back as the same double (so every
 * value round-trips exactly); a non-finite double becomes null. This is
 * the one JSON number writer of the project. Nesting depth is bounded (LLMSIM_JSON_MAX_DEPTH).
 */
#ifndef LLMSIM_JSON_H
#define LLMSIM_JSON_H

#include <stdint.h>
#include <stdio.h>

#define LLMSIM_JSON_MAX_DEPTH 32

struct llmsim_json {
	FILE *f;
	int depth;
	int count[LLMSIM_JSON_MAX_DEPTH]; /* items written at each level */
};

void llmsim_json_init(struct llmsim_json *j, FILE *f);
void llmsim_json_obj_begin(struct llmsim_json *j, const char *key);
void llmsim_json_obj_end(struct llmsim_json *j);
void llmsim_json_arr_begin(struct llmsim_json *j, const char *key);
void llmsim_json_arr_end(struct llmsim_json *j);
void llmsim_json_num(struct llmsim_json *j, const char *key, double v);
void llmsim_json_int(struct llmsim_json *j, const char *key, int64_t v);
void llmsim_json_str(struct llmsim_json *j, const char *key, const char *v);
void llmsim_json_bool(struct llmsim_json *j, const char *key, int v);
void llmsim_json_null(struct llmsim_json *j, const char *key);
/* A ", "-separated list ("a, b, c") as an array of its strings; "" is []. */
void llmsim_json_str_list(struct llmsim_json *j, const char *key, const char *list);
/* Ends the document with a newline (call after the outermost _end). */
void llmsim_json_finish(struct llmsim_json *j);

#endif
