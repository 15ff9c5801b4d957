/* ph_result.h: what a C handler's result holds (ph_result.c builds it
 * through phantom.h's phantom_result_* and turns it into the exec
 * protocol's shape; ph_call.c runs the handler). */
#ifndef PH_RESULT_H
#define PH_RESULT_H
#include "first.h"
#include "ph_call.h"

struct phantom_result {
	struct json_object *content;    /* array of blocks */
	struct json_object *roles;      /* array: the role of each block (prompts); NULL: all "user" */
	struct json_object *structured;
	struct json_object *values;     /* completion */
	struct json_object *requests;   /* inputRequests, NULL when none */
	struct json_object *state;      /* the state to seal (has_state) */
	bool has_state;
	char *role, *description;
	long long total;
	bool is_error, not_found;
	bool bad_text; /* a builder was given text that is not UTF-8: the call fails */
	long long ttl_ms;    /* phantom_result_cache: -1 none */
	const char *scope;   /* phantom_result_cache: "public", "private" or NULL */
	size_t texts;  /* blocks phantom_result_text made (their text checked there) */
};

/* A C handler's result in the exec protocol's shape for inv's kind (one
 * builder a kind): its inputRequired, else the kind's members, with
 * phantom_result_cache's unless the answer is a structured one. Caller
 * puts. */
struct json_object *ph_result_to_json(phantom_result *res, const struct ph_invocation *inv);
#endif
