/* ph_call.c: handler invocation (exec and C), the call context and result
 * builders of phantom.h, and content block checks. */
#include "first.h"
#include "ph_call.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_mime.h"
#include "ph_mrtr.h"
#include "ph_exec_conf.h"
#include "ph_persist.h"
#include "ph_schema.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

struct phantom_call {
	struct ph_req *r;
	const struct ph_invocation *inv;
	struct json_object *empty_caps; /* owned: {} when the request declared none, made when asked */
};

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

/* ---- the call context --------------------------------------------------------- */

/* The kinds as words (phantom.yaml(5)), the one place the code spells them. */
static const char *const kind_words[] = {
	[PHANTOM_KIND_TOOL] = "tool",
	[PHANTOM_KIND_PROMPT] = "prompt",
	[PHANTOM_KIND_RESOURCE] = "resource",
	[PHANTOM_KIND_COMPLETION] = "completion",
	[PHANTOM_KIND_AUTH] = "auth",
	[PHANTOM_KIND_RESOURCE_LIST] = "resource_list",
	[PHANTOM_KIND_SKILL] = "skill",
	[PHANTOM_KIND_SKILL_LIST] = "skill_list",
	[PHANTOM_KIND_SUBSCRIPTION] = "subscription",
	[PHANTOM_KIND_SESSION_END] = "session_end",
};

const char *
ph_call_kind_name(enum phantom_kind kind)
{
	const char *w = (size_t)kind < PH_ARRAY_LEN(kind_words) ? kind_words[kind] : NULL;
	return w ? w : "";
}

const char *
phantom_call_kind(const phantom_call *c)
{
	return ph_call_kind_name(c->inv->kind);
}

enum phantom_kind
phantom_call_kind_id(const phantom_call *c)
{
	return c->inv->kind;
}

const char *
phantom_call_name(const phantom_call *c)
{
	return c->inv->name;
}

const char *
phantom_call_uri(const phantom_call *c)
{
	return c->inv->uri;
}

struct json_object *
phantom_call_arguments(const phantom_call *c)
{
	return c->inv->arguments;
}

const char *
phantom_arg_string(const phantom_call *c, const char *name, const char *def)
{
	const char *s = ph_jstr(c->inv->arguments, name);
	return s ? s : def;
}

long long
phantom_arg_int(const phantom_call *c, const char *name, long long def)
{
	struct json_object *v = ph_jget(c->inv->arguments, name);
	if (json_object_is_type(v, json_type_int))
		return json_object_get_int64(v);
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		if (ph_integral(d) && fabs(d) < 9.2e18)
			return (long long)d;
	}
	return def;
}

double
phantom_arg_double(const phantom_call *c, const char *name, double def)
{
	struct json_object *v = ph_jget(c->inv->arguments, name);
	if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
		return json_object_get_double(v);
	return def;
}

int
phantom_arg_bool(const phantom_call *c, const char *name, int def)
{
	struct json_object *v = ph_jget(c->inv->arguments, name);
	if (json_object_is_type(v, json_type_boolean))
		return json_object_get_boolean(v);
	return def;
}

const char *
phantom_complete_argument(const phantom_call *c)
{
	return c->inv->comp_arg;
}

const char *
phantom_complete_value(const phantom_call *c)
{
	return c->inv->comp_value;
}

const char *
phantom_call_principal(const phantom_call *c)
{
	return c->r->principal;
}

const char *
phantom_call_trace(const phantom_call *c, const char *field)
{
	if (field == NULL)
		return NULL;
	if (strcmp(field, "traceparent") == 0)
		return c->r->child_traceparent[0] ? c->r->child_traceparent : NULL;
	if (strcmp(field, "tracestate") == 0)
		return c->r->tracestate;
	if (strcmp(field, "baggage") == 0)
		return c->r->baggage;
	return NULL;
}

/* The {} a handler reads for what the request did not give, made the first
 * time one asks (the call itself is ours: const only for the handler). */
static struct json_object *
empty_object(const phantom_call *c)
{
	struct phantom_call *own = (struct phantom_call *)(uintptr_t)c;
	if (own->empty_caps == NULL)
		own->empty_caps = json_object_new_object();
	return own->empty_caps;
}

struct json_object *
phantom_call_assigns(const phantom_call *c)
{
	return c->r->assigns ? c->r->assigns : empty_object(c);
}

struct json_object *
phantom_call_scopes(const phantom_call *c)
{
	if (c->r->scopes == NULL) {
		static struct json_object *none;
		if (none == NULL)
			none = json_object_new_array();
		return none;
	}
	return c->r->scopes;
}

const char *
phantom_call_assign(const phantom_call *c, const char *name, const char *def)
{
	const char *v = name ? ph_assign_text(c->r->assigns, name, strlen(name)) : NULL;
	return v ? v : def;
}

const char *
phantom_call_cursor(const phantom_call *c)
{
	return ph_jstr(c->inv->extra, "cursor");
}

long long
phantom_call_limit(const phantom_call *c)
{
	struct json_object *v = ph_jget(c->inv->extra, "limit");
	return v ? json_object_get_int64(v) : 0;
}

struct json_object *
phantom_call_client_capabilities(const phantom_call *c)
{
	return c->r->client_caps ? c->r->client_caps : empty_object(c);
}

int
phantom_call_has_capability(const phantom_call *c, const char *capability)
{
	return ph_jget(c->r->client_caps, capability) != NULL;
}

int
phantom_call_resumed(const phantom_call *c)
{
	return c->r->resumed && !c->inv->embedded;
}

struct json_object *
phantom_call_state(const phantom_call *c)
{
	return phantom_call_resumed(c) ? c->r->mrtr_state : NULL;
}

struct json_object *
phantom_call_input_responses(const phantom_call *c)
{
	return c->inv->embedded ? NULL : c->r->input_responses;
}

struct json_object *
phantom_call_input_response(const phantom_call *c, const char *key)
{
	return key ? ph_jget(phantom_call_input_responses(c), key) : NULL;
}

struct json_object *
phantom_call_accepted(const phantom_call *c, const char *key)
{
	struct json_object *r = phantom_call_input_response(c, key);
	const char *action = ph_jstr(r, "action");
	if (action == NULL || strcmp(action, "accept") != 0)
		return NULL;
	return ph_jget(r, "content");
}

int
phantom_call_legacy(const phantom_call *c)
{
	return ph_mrtr_no_rounds(c->r);
}

int
phantom_call_cancelled(phantom_call *c)
{
	return !ph_req_alive(c->r);
}

int
phantom_progress(phantom_call *c, double progress, double total, const char *message)
{
	if (c->r->ex->cancelled)
		return -1;
	return ph_req_progress(c->r, progress, total, message) != 0 ? -1 : 0;
}

int
phantom_log(phantom_call *c, const char *level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	enum ph_log_level l = ph_log_level_parse(level ? level : "");
	if (c->r->ex->cancelled)
		return -1;
	if (l == PH_LOG_NONE)
		l = PH_LOG_INFO;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ph_req_log(c->r, l, c->inv->name, json_object_new_string(msg)) != 0 ? -1 : 0;
}

void
phantom_log_server(const char *level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ph_log(level ? level : "info", "%s", msg);
}

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

/* ---- authenticators (auth.mode module) --------------------------------------------- */

const char *
phantom_call_header(const phantom_call *c, const char *name)
{
	char low[128];
	size_t n = strlen(name);
	if (c->inv->kind != PHANTOM_KIND_AUTH || n >= sizeof low)
		return NULL;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
	return ph_jstr(ph_jget(c->inv->arguments, "headers"), low);
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

/* A C handler's result in the exec protocol's shape for the kind. */
static struct json_object *
result_to_json(phantom_result *res, const struct ph_invocation *inv)
{
	struct json_object *o = json_object_new_object(), *msgs;
	if (res->requests || res->has_state) {
		/* the exec protocol's shape: ph_call_input_required takes it from here */
		struct json_object *ir = json_object_new_object();
		if (res->requests)
			ph_jset(ir, "inputRequests", json_object_get(res->requests));
		if (res->has_state)
			ph_jset(ir, "state", json_object_get(res->state));
		ph_jset(o, "inputRequired", ir);
		return o;
	}
	switch (inv->kind) {
	case PHANTOM_KIND_RESOURCE_LIST:
	case PHANTOM_KIND_AUTH:
	case PHANTOM_KIND_SUBSCRIPTION:
		/* a page, an authenticator's or subscriptions.authorize's answer,
		 * is the structuredContent object itself */
		json_object_put(o);
		return json_object_is_type(res->structured, json_type_object) ? json_object_get(res->structured)
									       : json_object_new_object();
	case PHANTOM_KIND_TOOL:
		ph_jset(o, "content", json_object_get(res->content));
		if (res->structured)
			ph_jset(o, "structuredContent", json_object_get(res->structured));
		if (res->is_error)
			ph_jset(o, "isError", json_object_new_boolean(true));
		break;
	case PHANTOM_KIND_PROMPT:
		msgs = json_object_new_array();
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
		break;
	case PHANTOM_KIND_RESOURCE:
		ph_jset(o, "contents", resource_contents(res, inv));
		break;
	default:
		/* a completion (a skill's handlers are exec only; sessions.on_end's
		 * answer is not read) */
		ph_jset(o, "values", res->values ? json_object_get(res->values) : json_object_new_array());
		if (res->total >= 0)
			ph_jset(o, "total", json_object_new_int64(res->total));
		break;
	}
	/* phantom_result_cache: the exec protocol's members */
	if (res->ttl_ms >= 0)
		ph_jset(o, "ttlMs", json_object_new_int64(res->ttl_ms));
	if (res->scope != NULL)
		ph_jset(o, "cacheScope", json_object_new_string(res->scope));
	return o;
}

/* ---- running handlers ------------------------------------------------------------------ */

void
ph_call_exec_limits(const struct ph_req *r, struct ph_exec_limits *lim)
{
	ph_exec_limits_of(r->srv->conf, lim);
}


struct exec_ctx {
	struct ph_req *r;
	const char *label;
	size_t logged, dropped; /* bytes of fd 3 lines logged and not */
};

/* Logs an fd 3 line that is no notification, as what ("not a JSON
 * object"), up to limits.exec_log_max bytes of lines per call; the rest is
 * counted. A line that is not UTF-8 is not quoted. */
static void
fd3_note(struct exec_ctx *e, const char *what, const char *line, size_t len)
{
	if (e->logged >= (size_t)e->r->srv->conf->limits.exec_log_max) {
		e->dropped += len;
		return;
	}
	e->logged += len;
	if (ph_utf8_valid(line, len))
		ph_log("info", "%s: fd 3: %s: %.200s", e->label, what, line);
	else
		ph_log("info", "%s: fd 3: %s (%zu bytes)", e->label, what, len);
}

/* After the call: how much of fd 3 went unlogged. */
static void
fd3_done(const struct exec_ctx *e)
{
	if (e->dropped)
		ph_log("info", "%s: fd 3: %zu more bytes not logged", e->label, e->dropped);
}

/* A line on fd 3: {progress, total?, message?} becomes notifications/progress,
 * {level, data, logger?} notifications/message; anything else is logged. */
static void
on_fd3(void *ctx, const char *line, size_t len)
{
	struct exec_ctx *e = ctx;
	struct json_object *o, *p, *lvl;
	if (!ph_utf8_valid(line, len)) {
		fd3_note(e, "not valid UTF-8", line, len);
		return;
	}
	if (!ph_json_parse(line, len, (int)e->r->srv->conf->limits.json_depth, &o) ||
	    !json_object_is_type(o, json_type_object)) {
		fd3_note(e, "not a JSON object", line, len);
		json_object_put(o);
		return;
	}
	p = ph_jget(o, "progress");
	lvl = ph_jget(o, "level");
	if (p && (json_object_is_type(p, json_type_int) || json_object_is_type(p, json_type_double))) {
		struct json_object *t = ph_jget(o, "total");
		double total = t && (json_object_is_type(t, json_type_int) || json_object_is_type(t, json_type_double))
				       ? json_object_get_double(t) : 0;
		ph_req_progress(e->r, json_object_get_double(p), total, ph_jstr(o, "message"));
	} else if (lvl && json_object_is_type(lvl, json_type_string) &&
		   ph_log_level_parse(json_object_get_string(lvl)) != PH_LOG_NONE) {
		struct json_object *d = ph_jget(o, "data");
		ph_req_log(e->r, ph_log_level_parse(json_object_get_string(lvl)), ph_jstr(o, "logger"),
			   d ? json_object_get(d) : json_object_new_string(""));
	} else {
		fd3_note(e, "neither progress nor log", line, len);
	}
	json_object_put(o);
}

static bool
exec_alive(void *ctx)
{
	return ph_req_alive(((struct exec_ctx *)ctx)->r);
}

/* The stdin document of the exec protocol. Caller puts. The members the
 * server vouches for come first and the ones the client supplied last, in
 * a fixed order (kind, name or uri, state, legacy, arguments, principal,
 * assigns, clientCapabilities, meta, inputResponses): a script without a JSON parser
 * may match a prefix such as {"kind":"tool","name":"x","state": and know
 * that no client wrote it (phantom.yaml(5), MULTI-ROUND REQUESTS). */
struct json_object *
ph_call_exec_input(struct ph_req *r, const struct ph_invocation *inv)
{
	struct json_object *in = json_object_new_object(), *meta;
	ph_jset(in, "kind", json_object_new_string(ph_call_kind_name(inv->kind)));
	if (inv->name)
		ph_jset(in, "name", json_object_new_string(inv->name));
	if (inv->uri)
		ph_jset(in, "uri", json_object_new_string(inv->uri));
	/* a verified retry: the state sealed in the last round (null for none) */
	if (r->resumed && !inv->embedded)
		ph_jset(in, "state", r->mrtr_state ? json_object_get(r->mrtr_state) : NULL);
	/* 2025-11-25 without a session that takes pushed requests: no second
	 * round */
	if (ph_mrtr_no_rounds(r))
		ph_jset(in, "legacy", json_object_new_boolean(1));
	ph_jset(in, "arguments", json_object_get(inv->arguments));
	ph_jset(in, "principal", r->principal ? json_object_new_string(r->principal) : NULL);
	/* what the authenticator said about the principal ({} when nothing) */
	ph_jset(in, "assigns", ph_req_assigns(r));
	/* auth.mode oauth: the scopes the access token grants (never the token) */
	if (r->scopes != NULL)
		ph_jset(in, "scopes", json_object_get(r->scopes));
	ph_jset(in, "clientCapabilities",
			       r->client_caps ? json_object_get(r->client_caps) : json_object_new_object());
	meta = ph_jget(r->params, "_meta");
	ph_jset(in, "meta", meta ? json_object_get(meta) : json_object_new_object());
	if (inv->extra) {
		json_object_object_foreach(inv->extra, k, v)
			ph_jset(in, k, json_object_get(v));
	}
	if (r->input_responses && !inv->embedded)
		ph_jset(in, "inputResponses", json_object_get(r->input_responses));
	return in;
}

/* Counts a run of an exec handler and, when it gave no result, why. */
static void
count_exec(const struct ph_exec_result *res)
{
	static const enum ph_metric_exec why[] = {
		[PH_EXEC_SPAWN] = PH_MX_SPAWN, [PH_EXEC_EXIT] = PH_MX_EXIT, [PH_EXEC_SIGNAL] = PH_MX_SIGNAL,
		[PH_EXEC_TIMEOUT] = PH_MX_TIMEOUT, [PH_EXEC_OVERFLOW] = PH_MX_OUTPUT_CAP,
		[PH_EXEC_CANCELLED] = PH_MX_CANCELLED,
	};
	ph_metrics_exec(PH_MX_START);
	if (res->status != PH_EXEC_OK && (size_t)res->status < PH_ARRAY_LEN(why))
		ph_metrics_exec(why[res->status]);
}

static struct json_object *
run_exec(struct ph_req *r, const struct ph_handler *h, const struct ph_invocation *inv)
{
	struct ph_exec_limits lim;
	struct exec_ctx ec = {r, inv->label, 0, 0};
	struct ph_exec_hooks hooks = {on_fd3, exec_alive, &ec, inv->label, NULL};
	struct ph_exec_result res;
	struct json_object *in = ph_call_exec_input(r, inv), *out = NULL;
	size_t len;
	const char *s = json_object_to_json_string_length(in, JSON_C_TO_STRING_PLAIN, &len);
	char why[200];
	char *env[4] = {NULL, NULL, NULL, NULL};
	size_t ne = 0;
	/* the handler continues the trace: its parent is this request's span */
	if (r->child_traceparent[0])
		env[ne++] = ph_xasprintf("TRACEPARENT=%s", r->child_traceparent);
	if (r->tracestate)
		env[ne++] = ph_xasprintf("TRACESTATE=%s", r->tracestate);
	if (r->baggage)
		env[ne++] = ph_xasprintf("BAGGAGE=%s", r->baggage);
	hooks.env = env;
	ph_call_exec_limits(r, &lim);
	if (h->exec.persist.on) {
		enum ph_persist_how how;
		out = ph_persist_call(&h->exec, &lim, in, &hooks, (int)r->srv->conf->limits.json_depth, &how);
		fd3_done(&ec);
		json_object_put(in);
		/* the log line says fresh when any process of the request was */
		if (r->exec_how == NULL || how == PH_PERSIST_FRESH)
			r->exec_how = how == PH_PERSIST_WARM ? "warm" : "fresh";
		return out;
	}
	ph_exec_run(&h->exec, &lim, s, len, &hooks, &res);
	fd3_done(&ec);
	count_exec(&res);
	for (size_t i = 0; i < ne; i++)
		free(env[i]);
	json_object_put(in);
	if (res.status != PH_EXEC_OK) {
		ph_log("warning", "%s: %s failed: %s", inv->label, h->exec.argv[0],
		       ph_exec_describe(&res, why, sizeof why));
		ph_exec_result_free(&res);
		return NULL;
	}
	out = ph_call_exec_answer(inv->label, h->exec.argv[0], res.out, res.out_len,
				  (int)r->srv->conf->limits.json_depth);
	ph_exec_result_free(&res);
	return out;
}

struct json_object *
ph_call_exec_answer(const char *label, const char *prog, const char *text, size_t len, int depth)
{
	struct json_object *out;
	if (!ph_utf8_valid(text, len)) {
		/* json-c would take overlong forms and surrogates, and the
		 * client would get them back as invalid JSON */
		ph_log("warning", "%s: %s wrote %zu bytes on stdout that are not valid UTF-8", label, prog, len);
		return NULL;
	}
	if (!ph_json_parse(text, len, depth, &out))
		out = NULL;
	if (out == NULL || !json_object_is_type(out, json_type_object)) {
		ph_log("warning", "%s: %s did not write one JSON object on stdout (%zu bytes: %.120s)", label,
		       prog, len, text);
		json_object_put(out);
		out = NULL;
	}
	return out;
}

static struct json_object *
run_c(struct ph_req *r, const struct ph_handler *h, const struct ph_invocation *inv)
{
	struct phantom_call c = {r, inv, NULL};
	phantom_result *res;
	struct json_object *out;
	bool checked;
	res = h->fn(&c, h->udata);
	json_object_put(c.empty_caps);
	if (res == NULL) {
		ph_log("warning", "%s: handler %s failed (returned NULL)", inv->label,
		       h->symbol ? h->symbol : "(C function)");
		return NULL;
	}
	out = res->bad_text ? NULL : result_to_json(res, inv);
	/* a tool's result of text blocks alone holds no string but those
	 * phantom_result_text checked (and the words it sets itself) */
	checked = inv->kind == PHANTOM_KIND_TOOL && res->texts == json_object_array_length(res->content) &&
		  res->structured == NULL && res->requests == NULL && !res->has_state;
	phantom_result_free(res);
	if (out == NULL || (!checked && !ph_json_utf8_valid(out))) {
		ph_log("warning", "%s: handler %s gave a string that is not valid UTF-8", inv->label,
		       h->symbol ? h->symbol : "(C function)");
		json_object_put(out);
		return NULL;
	}
	return out;
}

/* An exec handler's "resourcesUpdated": [URI, ...] announces that those
 * resources changed (to the listen streams subscribed to them, through the
 * hub); the member is taken out of the result. */
static void
take_updates(struct json_object *out, const char *label)
{
	struct json_object *u;
	if (out == NULL || !json_object_object_get_ex(out, "resourcesUpdated", &u))
		return;
	if (!json_object_is_type(u, json_type_array))
		ph_log("warning", "%s: resourcesUpdated must be an array of URIs; ignored", label);
	for (size_t i = 0; json_object_is_type(u, json_type_array) && i < json_object_array_length(u); i++) {
		const char *uri = json_object_get_string(json_object_array_get_idx(u, i));
		if (!json_object_is_type(json_object_array_get_idx(u, i), json_type_string))
			ph_log("warning", "%s: resourcesUpdated[%zu] is not a string; ignored", label, i);
		else if (ph_shared_announce_updated(uri) != 0)
			ph_log("info", "%s: resourcesUpdated %s: no hub to announce it to", label, uri);
	}
	json_object_object_del(out, "resourcesUpdated");
}

int
phantom_resource_updated(phantom_call *c, const char *uri)
{
	(void)c;
	return ph_shared_announce_updated(uri);
}

static struct json_object *handler_run(struct ph_req *r, const struct ph_handler *h,
				       const struct ph_invocation *inv);

/* The handler's run as a child span of the request: the kind that ran and
 * the item it ran for (an exec handler continues from this span). */
static void
run_span_end(struct ph_req *r, struct ph_otel_child *c, const struct ph_handler *h,
	     const struct ph_invocation *inv, const struct json_object *out)
{
	const char *kind = h->kind == PH_HANDLER_C ? "module"
			   : h->exec.persist.on    ? "persistent"
						   : "exec";
	struct ph_otel_attr a[] = {
		{"phantom.handler.kind", kind, 0},
		{"phantom.handler.item", inv->label ? inv->label : "", 0},
	};
	char name[160];
	snprintf(name, sizeof name, "handler %s", inv->label ? inv->label : kind);
	ph_otel_child_end(r, c, name, a, PH_ARRAY_LEN(a), out == NULL);
}

struct json_object *
ph_call_handler(struct ph_req *r, const struct ph_handler *h, const struct ph_invocation *inv)
{
	struct json_object *out;
	if (ph_otel_on && h->kind != PH_HANDLER_NONE) {
		struct ph_otel_child c;
		ph_otel_child_begin(r, &c);
		out = handler_run(r, h, inv);
		run_span_end(r, &c, h, inv, out);
		return out;
	}
	return handler_run(r, h, inv);
}

/* ph_call_handler without its span: what the handler answered (caller
 * puts), NULL when it gave nothing usable. */
static struct json_object *
handler_run(struct ph_req *r, const struct ph_handler *h, const struct ph_invocation *inv)
{
	struct json_object *out;
	switch (h->kind) {
	case PH_HANDLER_EXEC:
		ph_log_flush(); /* a program may take long: the request lines held go out first */
		out = run_exec(r, h, inv);
		take_updates(out, inv->label);
		return out;
	case PH_HANDLER_C:
		return run_c(r, h, inv);
	case PH_HANDLER_NONE:
		break;
	}
	return NULL;
}

bool
ph_call_input_required(struct ph_req *r, struct json_object *res, const char *label, struct ph_outcome *o)
{
	struct json_object *ir;
	if (!ph_jget_ex(res, "inputRequired", &ir))
		return false;
	ph_mrtr_answer(r, ir, label, o);
	return true;
}

bool
ph_content_valid(struct json_object *b, char *why, size_t n)
{
	const char *type = ph_jstr(b, "type");
	if (!json_object_is_type(b, json_type_object) || type == NULL) {
		snprintf(why, n, "a content block must be an object with a type");
		return false;
	}
	if (strcmp(type, "text") == 0) {
		if (ph_jstr(b, "text") == NULL) {
			snprintf(why, n, "a text block needs a string 'text'");
			return false;
		}
	} else if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0) {
		if (ph_jstr(b, "data") == NULL || ph_jstr(b, "mimeType") == NULL) {
			snprintf(why, n, "an %s block needs 'data' (base64) and 'mimeType'", type);
			return false;
		}
	} else if (strcmp(type, "resource_link") == 0) {
		if (ph_jstr(b, "uri") == NULL || ph_jstr(b, "name") == NULL) {
			snprintf(why, n, "a resource_link block needs 'uri' and 'name'");
			return false;
		}
	} else if (strcmp(type, "resource") == 0) {
		struct json_object *in = ph_jget(b, "resource");
		if (ph_jstr(in, "uri") == NULL || (ph_jstr(in, "text") == NULL && ph_jstr(in, "blob") == NULL)) {
			snprintf(why, n, "a resource block needs 'resource' with 'uri' and 'text' or 'blob'");
			return false;
		}
	} else {
		snprintf(why, n, "unknown content type '%s'", type);
		return false;
	}
	return true;
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
