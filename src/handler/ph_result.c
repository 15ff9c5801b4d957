/* ph_result.c: the results of phantom.h a C handler builds (content
 * blocks, prompt roles, completion values, input requests and state, an
 * authenticator's decision) and one builder a kind turning them into the
 * exec protocol's shapes (ph_result.h). */
#include "first.h"
#include "ph_result.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- results ------------------------------------------------------------------------ */

phantom_result *
phantom_result_new(void)
{
	phantom_result *res = ph_xcalloc(1, sizeof *res);
	res->content = json_object_new_array();
	res->total = -1;
	res->ttl_ms = -1;
	return res;
}

void
phantom_result_free(phantom_result *res)
{
	if (res == NULL)
		return;
	json_object_put(res->content);
	json_object_put(res->roles);
	json_object_put(res->structured);
	json_object_put(res->values);
	json_object_put(res->requests);
	json_object_put(res->state);
	free(res->role);
	free(res->description);
	free(res);
}

static int
add_block(phantom_result *res, struct json_object *b)
{
	/* the roles are kept once one is not "user" (the blocks before it were) */
	if (res->roles == NULL && res->role != NULL && strcmp(res->role, "user") != 0) {
		res->roles = json_object_new_array();
		for (size_t i = json_object_array_length(res->content); i > 0; i--)
			json_object_array_add(res->roles, json_object_new_string("user"));
	}
	json_object_array_add(res->content, b);
	if (res->roles)
		json_object_array_add(res->roles, json_object_new_string(res->role ? res->role : "user"));
	return 0;
}

static struct json_object *
block(const char *type)
{
	struct json_object *b = json_object_new_object();
	ph_jset(b, "type", json_object_new_string(type));
	return b;
}

int
phantom_result_text(phantom_result *res, const char *text)
{
	struct json_object *b;
	if (res == NULL || text == NULL)
		return -1;
	if (!ph_utf8_valid(text, strlen(text))) {
		res->bad_text = true;
		return -1;
	}
	b = block("text");
	ph_jset(b, "text", json_object_new_string(text));
	res->texts++;
	return add_block(res, b);
}

static int
binary(phantom_result *res, const char *type, const void *data, size_t len, const char *mime)
{
	struct json_object *b;
	char *enc;
	if (res == NULL || (data == NULL && len > 0) || mime == NULL)
		return -1;
	enc = ph_base64(data ? data : "", len);
	b = block(type);
	ph_jset(b, "data", json_object_new_string(enc));
	ph_jset(b, "mimeType", json_object_new_string(mime));
	free(enc);
	return add_block(res, b);
}

int
phantom_result_image(phantom_result *res, const void *data, size_t len, const char *mime_type)
{
	return binary(res, "image", data, len, mime_type);
}

int
phantom_result_audio(phantom_result *res, const void *data, size_t len, const char *mime_type)
{
	return binary(res, "audio", data, len, mime_type);
}

int
phantom_result_resource_link(phantom_result *res, const char *uri, const char *name,
			     const char *description, const char *mime_type)
{
	struct json_object *b;
	if (res == NULL || uri == NULL || name == NULL)
		return -1;
	b = block("resource_link");
	ph_jset(b, "uri", json_object_new_string(uri));
	ph_jset(b, "name", json_object_new_string(name));
	if (description)
		ph_jset(b, "description", json_object_new_string(description));
	if (mime_type)
		ph_jset(b, "mimeType", json_object_new_string(mime_type));
	return add_block(res, b);
}

int
phantom_result_embedded(phantom_result *res, const char *uri, const char *mime_type, const char *text,
			const void *blob, size_t blob_len)
{
	struct json_object *b, *in;
	if (res == NULL || uri == NULL || (text == NULL && blob == NULL && blob_len > 0))
		return -1;
	if (text && !ph_utf8_valid(text, strlen(text))) {
		res->bad_text = true;
		return -1;
	}
	in = json_object_new_object();
	ph_jset(in, "uri", json_object_new_string(uri));
	if (mime_type)
		ph_jset(in, "mimeType", json_object_new_string(mime_type));
	if (text) {
		ph_jset(in, "text", json_object_new_string(text));
	} else {
		char *enc = ph_base64(blob ? blob : "", blob_len);
		ph_jset(in, "blob", json_object_new_string(enc));
		free(enc);
	}
	b = block("resource");
	ph_jset(b, "resource", in);
	return add_block(res, b);
}

int
phantom_result_structured_take(phantom_result *res, struct json_object *value)
{
	if (res == NULL) {
		json_object_put(value);
		return -1;
	}
	json_object_put(res->structured);
	res->structured = value;
	return 0;
}

int
phantom_result_structured_json(phantom_result *res, const char *json)
{
	struct json_object *v;
	if (json == NULL || !ph_json_parse(json, strlen(json), PH_JSON_DEPTH_DOCUMENT, &v) || v == NULL)
		return -1;
	return phantom_result_structured_take(res, v);
}

int
phantom_result_error(phantom_result *res, const char *message)
{
	if (res == NULL)
		return -1;
	res->is_error = true;
	return message ? phantom_result_text(res, message) : 0;
}

int
phantom_result_role(phantom_result *res, const char *role)
{
	if (res == NULL || role == NULL || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
		return -1;
	free(res->role);
	res->role = ph_xstrdup(role);
	return 0;
}

int
phantom_result_description(phantom_result *res, const char *description)
{
	if (res == NULL)
		return -1;
	free(res->description);
	res->description = description ? ph_xstrdup(description) : NULL;
	return 0;
}

int
phantom_result_cache(phantom_result *res, long long ttl_ms, const char *scope)
{
	if (res == NULL || ttl_ms > PH_CACHE_TTL_MAX ||
	    (scope != NULL && strcmp(scope, "public") != 0 && strcmp(scope, "private") != 0))
		return -1;
	res->ttl_ms = ttl_ms < 0 ? -1 : ttl_ms;
	res->scope = scope == NULL ? NULL : scope[1] == 'u' ? "public" : "private";
	return 0;
}

int
phantom_result_not_found(phantom_result *res)
{
	if (res == NULL)
		return -1;
	res->not_found = true;
	return 0;
}

int
phantom_result_value(phantom_result *res, const char *value)
{
	if (res == NULL || value == NULL)
		return -1;
	if (res->values == NULL)
		res->values = json_object_new_array();
	json_object_array_add(res->values, json_object_new_string(value));
	return 0;
}

int
phantom_result_total(phantom_result *res, long long total)
{
	if (res == NULL)
		return -1;
	res->total = total;
	return 0;
}

/* ---- input required ----------------------------------------------------------------- */

int
phantom_result_input_request_take(phantom_result *res, const char *key, struct json_object *request)
{
	if (res == NULL || key == NULL || !json_object_is_type(request, json_type_object) ||
	    ph_jstr(request, "method") == NULL) {
		json_object_put(request);
		return -1;
	}
	if (res->requests == NULL)
		res->requests = json_object_new_object();
	ph_jset(res->requests, key, request);
	return 0;
}

int
phantom_result_input_request_json(phantom_result *res, const char *key, const char *json)
{
	struct json_object *v;
	if (json == NULL || !ph_json_parse(json, strlen(json), PH_JSON_DEPTH_DOCUMENT, &v) || v == NULL)
		return -1;
	return phantom_result_input_request_take(res, key, v);
}

/* {"method": "elicitation/create", "params": {"mode": mode, "message": message}} */
static struct json_object *
elicitation(const char *mode, const char *message)
{
	struct json_object *req = json_object_new_object(), *p = json_object_new_object();
	ph_jset(req, "method", json_object_new_string("elicitation/create"));
	ph_jset(p, "mode", json_object_new_string(mode));
	ph_jset(p, "message", json_object_new_string(message));
	ph_jset(req, "params", p);
	return req;
}

int
phantom_result_elicit(phantom_result *res, const char *key, const char *message, const char *schema_json)
{
	struct json_object *schema, *req;
	if (message == NULL || schema_json == NULL ||
	    !ph_json_parse(schema_json, strlen(schema_json), PH_JSON_DEPTH_DOCUMENT, &schema))
		return -1;
	if (!json_object_is_type(schema, json_type_object)) {
		json_object_put(schema);
		return -1;
	}
	req = elicitation("form", message);
	ph_jset(ph_jget(req, "params"), "requestedSchema", schema);
	return phantom_result_input_request_take(res, key, req);
}

int
phantom_result_elicit_url(phantom_result *res, const char *key, const char *message, const char *url)
{
	struct json_object *req;
	if (message == NULL || url == NULL)
		return -1;
	req = elicitation("url", message);
	ph_jset(ph_jget(req, "params"), "url", json_object_new_string(url));
	return phantom_result_input_request_take(res, key, req);
}

int
phantom_result_state_take(phantom_result *res, struct json_object *state)
{
	if (res == NULL) {
		json_object_put(state);
		return -1;
	}
	json_object_put(res->state);
	res->state = state;
	res->has_state = true;
	return 0;
}

int
phantom_result_state_json(phantom_result *res, const char *json)
{
	struct json_object *v;
	if (json == NULL || !ph_json_parse(json, strlen(json), PH_JSON_DEPTH_DOCUMENT, &v))
		return -1;
	return phantom_result_state_take(res, v);
}

phantom_result *
phantom_text(const char *text)
{
	phantom_result *res = phantom_result_new();
	phantom_result_text(res, text ? text : "");
	return res;
}

phantom_result *
phantom_error(const char *message)
{
	phantom_result *res = phantom_result_new();
	phantom_result_error(res, message ? message : "error");
	return res;
}

/* A result whose structuredContent is {"decision": decision} plus key:
 * value when value is not NULL. */
static phantom_result *
decision(const char *dec, const char *key, const char *value)
{
	phantom_result *res = phantom_result_new();
	struct json_object *o = json_object_new_object();
	ph_jset(o, "decision", json_object_new_string(dec));
	if (value != NULL)
		ph_jset(o, key, json_object_new_string(value));
	res->structured = o;
	return res;
}

phantom_result *
phantom_auth_allow(const char *principal)
{
	return decision("allow", "principal", principal);
}

phantom_result *
phantom_auth_deny(int status, const char *message)
{
	return decision(status == 403 ? "forbidden" : "unauthorized", "message", message);
}

int
phantom_result_assigns_take(phantom_result *res, struct json_object *assigns)
{
	if (!json_object_is_type(assigns, json_type_object) ||
	    !json_object_is_type(res->structured, json_type_object) ||
	    strcmp(ph_jstr(res->structured, "decision") ? ph_jstr(res->structured, "decision") : "", "allow") != 0) {
		json_object_put(assigns);
		return -1;
	}
	ph_jset(res->structured, "assigns", assigns);
	return 0;
}

/* The contents of a resources/read answered by a C handler: its blocks as
 * the exec protocol's contents (a link is not content). Caller puts. */
static struct json_object *
resource_contents(const phantom_result *res, const struct ph_invocation *inv)
{
	struct json_object *contents = json_object_new_array();
	size_t n = json_object_array_length(res->content);
	for (size_t i = 0; i < n && !res->not_found; i++) {
		struct json_object *b = json_object_array_get_idx(res->content, i), *c;
		const char *type = ph_jstr(b, "type");
		if (strcmp(type, "resource") == 0) {
			json_object_array_add(contents, json_object_get(ph_jget(b, "resource")));
			continue;
		}
		c = json_object_new_object();
		ph_jset(c, "uri", json_object_new_string(inv->uri));
		if (strcmp(type, "text") == 0) {
			ph_jset(c, "mimeType", json_object_new_string(inv->default_mime ? inv->default_mime : "text/plain"));
			ph_jset(c, "text", json_object_get(ph_jget(b, "text")));
		} else if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0) {
			ph_jset(c, "mimeType", json_object_get(ph_jget(b, "mimeType")));
			ph_jset(c, "blob", json_object_get(ph_jget(b, "data")));
		} else {
			json_object_put(c);
			continue; /* a link is not content */
		}
		json_object_array_add(contents, c);
	}
	return contents;
}

/* One builder a kind: a C handler's result (res) in the exec protocol's
 * shape for that kind. Caller puts what it returns. */
typedef struct json_object *(*result_builder)(const phantom_result *res, const struct ph_invocation *inv);

/* A page of resource_lists, an authenticator's or subscriptions.authorize's
 * answer: the structuredContent object itself. */
static struct json_object *
result_structured(const phantom_result *res, const struct ph_invocation *inv)
{
	(void)inv;
	return json_object_is_type(res->structured, json_type_object) ? json_object_get(res->structured)
								       : json_object_new_object();
}

/* A tool's: content, structuredContent, isError. */
static struct json_object *
result_tool(const phantom_result *res, const struct ph_invocation *inv)
{
	struct json_object *o = json_object_new_object();
	(void)inv;
	ph_jset(o, "content", json_object_get(res->content));
	if (res->structured)
		ph_jset(o, "structuredContent", json_object_get(res->structured));
	if (res->is_error)
		ph_jset(o, "isError", json_object_new_boolean(true));
	return o;
}

/* A prompt's: its blocks as messages (each with its role, "user" unless
 * set), and its description. */
static struct json_object *
result_prompt(const phantom_result *res, const struct ph_invocation *inv)
{
	struct json_object *o = json_object_new_object(), *msgs = json_object_new_array();
	(void)inv;
	for (size_t i = 0; i < json_object_array_length(res->content); i++) {
		struct json_object *m = json_object_new_object();
		ph_jset(m, "role", res->roles ? json_object_get(json_object_array_get_idx(res->roles, i))
					      : json_object_new_string("user"));
		ph_jset(m, "content", json_object_get(json_object_array_get_idx(res->content, i)));
		json_object_array_add(msgs, m);
	}
	ph_jset(o, "messages", msgs);
	if (res->description)
		ph_jset(o, "description", json_object_new_string(res->description));
	return o;
}

/* A resource's: its contents. */
static struct json_object *
result_resource(const phantom_result *res, const struct ph_invocation *inv)
{
	struct json_object *o = json_object_new_object();
	ph_jset(o, "contents", resource_contents(res, inv));
	return o;
}

/* A completion's: values and total (a skill's handlers are exec only;
 * sessions.on_end's answer is not read). */
static struct json_object *
result_values(const phantom_result *res, const struct ph_invocation *inv)
{
	struct json_object *o = json_object_new_object();
	(void)inv;
	ph_jset(o, "values", res->values ? json_object_get(res->values) : json_object_new_array());
	if (res->total >= 0)
		ph_jset(o, "total", json_object_new_int64(res->total));
	return o;
}

static const result_builder builders[] = {
	[PHANTOM_KIND_TOOL] = result_tool,
	[PHANTOM_KIND_PROMPT] = result_prompt,
	[PHANTOM_KIND_RESOURCE] = result_resource,
	[PHANTOM_KIND_COMPLETION] = result_values,
	[PHANTOM_KIND_AUTH] = result_structured,
	[PHANTOM_KIND_RESOURCE_LIST] = result_structured,
	[PHANTOM_KIND_SKILL] = result_values,
	[PHANTOM_KIND_SKILL_LIST] = result_values,
	[PHANTOM_KIND_SUBSCRIPTION] = result_structured,
	[PHANTOM_KIND_SESSION_END] = result_values,
};
_Static_assert(PH_ARRAY_LEN(builders) == PH_CALL_KINDS, "a result builder for every kind");

/* A C handler's result in the exec protocol's shape for the kind: its
 * inputRequired, else what the kind's builder makes, with
 * phantom_result_cache's members unless the answer is a structured one. */
struct json_object *
ph_result_to_json(phantom_result *res, const struct ph_invocation *inv)
{
	result_builder b = (size_t)inv->kind < PH_ARRAY_LEN(builders) && builders[inv->kind] ? builders[inv->kind]
											   : result_values;
	struct json_object *o;
	if (res->requests || res->has_state) {
		/* the exec protocol's shape: ph_call_input_required takes it from here */
		struct json_object *ir = json_object_new_object();
		o = json_object_new_object();
		if (res->requests)
			ph_jset(ir, "inputRequests", json_object_get(res->requests));
		if (res->has_state)
			ph_jset(ir, "state", json_object_get(res->state));
		ph_jset(o, "inputRequired", ir);
		return o;
	}
	o = b(res, inv);
	if (b == result_structured)
		return o;
	/* phantom_result_cache: the exec protocol's members */
	if (res->ttl_ms >= 0)
		ph_jset(o, "ttlMs", json_object_new_int64(res->ttl_ms));
	if (res->scope != NULL)
		ph_jset(o, "cacheScope", json_object_new_string(res->scope));
	return o;
}

struct json_object *
ph_tool_error_result(const char *text)
{
	struct json_object *o = json_object_new_object(), *c = json_object_new_array(), *b = block("text");
	ph_jset(b, "text", json_object_new_string(text));
	json_object_array_add(c, b);
	ph_jset(o, "content", c);
	ph_jset(o, "isError", json_object_new_boolean(true));
	return o;
}
