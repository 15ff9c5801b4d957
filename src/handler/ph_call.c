/* ph_call.c: handler invocation (exec and C), the call context of
 * phantom.h, and content block checks. The results a C handler builds, and
 * what they become, are in ph_result.c. */
#include "first.h"
#include "ph_otel.h"
#include "ph_call.h"
#include "ph_result.h"
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
_Static_assert(PH_ARRAY_LEN(kind_words) == PH_CALL_KINDS, "a word for every kind");

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
	return c->r->who.principal;
}

const char *
phantom_call_trace(const phantom_call *c, const char *field)
{
	if (field == NULL)
		return NULL;
	if (strcmp(field, "traceparent") == 0)
		return c->r->trace.child_traceparent[0] ? c->r->trace.child_traceparent : NULL;
	if (strcmp(field, "tracestate") == 0)
		return c->r->trace.tracestate;
	if (strcmp(field, "baggage") == 0)
		return c->r->trace.baggage;
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
	return c->r->who.assigns ? c->r->who.assigns : empty_object(c);
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
	const char *v = name ? ph_assign_text(c->r->who.assigns, name, strlen(name)) : NULL;
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
	return c->r->sess.resumed && !c->inv->embedded;
}

struct json_object *
phantom_call_state(const phantom_call *c)
{
	return phantom_call_resumed(c) ? c->r->sess.mrtr_state : NULL;
}

struct json_object *
phantom_call_input_responses(const phantom_call *c)
{
	return c->inv->embedded ? NULL : c->r->sess.input_responses;
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
	if (r->sess.resumed && !inv->embedded)
		ph_jset(in, "state", r->sess.mrtr_state ? json_object_get(r->sess.mrtr_state) : NULL);
	/* 2025-11-25 without a session that takes pushed requests: no second
	 * round */
	if (ph_mrtr_no_rounds(r))
		ph_jset(in, "legacy", json_object_new_boolean(1));
	ph_jset(in, "arguments", json_object_get(inv->arguments));
	ph_jset(in, "principal", r->who.principal ? json_object_new_string(r->who.principal) : NULL);
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
	if (r->sess.input_responses && !inv->embedded)
		ph_jset(in, "inputResponses", json_object_get(r->sess.input_responses));
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

/* A persistent process is started once, its environment without the
 * call's trace variables: each call line carries the handler span's context
 * instead, in meta (the request's _meta, where the MCP conventions carry
 * it) as traceparent and tracestate, replacing the client's (the parent of
 * the request's span, so nothing is lost). A new meta: _meta is the
 * request's. */
static void
meta_trace(struct ph_req *r, struct json_object *in)
{
	struct json_object *old = ph_jget(in, "meta"), *m;
	bool tp = false, ts = false;
	if (!json_object_is_type(old, json_type_object))
		return;
	m = json_object_new_object();
	json_object_object_foreach(old, k, v) {
		if (strcmp(k, "traceparent") == 0) {
			ph_jset(m, k, json_object_new_string(r->trace.child_traceparent));
			tp = true;
		} else if (strcmp(k, "tracestate") == 0) {
			if (r->trace.tracestate)
				ph_jset(m, k, json_object_new_string(r->trace.tracestate));
			ts = true;
		} else {
			ph_jset(m, k, json_object_get(v));
		}
	}
	if (!tp)
		ph_jset(m, "traceparent", json_object_new_string(r->trace.child_traceparent));
	if (!ts && r->trace.tracestate)
		ph_jset(m, "tracestate", json_object_new_string(r->trace.tracestate));
	ph_jset(in, "meta", m);
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
	if (r->trace.child_traceparent[0])
		env[ne++] = ph_xasprintf("TRACEPARENT=%s", r->trace.child_traceparent);
	if (r->trace.tracestate)
		env[ne++] = ph_xasprintf("TRACESTATE=%s", r->trace.tracestate);
	if (r->trace.baggage)
		env[ne++] = ph_xasprintf("BAGGAGE=%s", r->trace.baggage);
	hooks.env = env;
	ph_call_exec_limits(r, &lim);
	if (h->exec.persist.on) {
		enum ph_persist_how how;
		if (ph_otel_on && r->trace.child_traceparent[0])
			meta_trace(r, in);
		out = ph_persist_call(&h->exec, &lim, in, &hooks, (int)r->srv->conf->limits.json_depth, &how);
		fd3_done(&ec);
		for (size_t i = 0; i < ne; i++)
			free(env[i]);
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
	out = res->bad_text ? NULL : ph_result_to_json(res, inv);
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
	ph_otel_join(name, sizeof name, "handler", " ", inv->label ? inv->label : kind);
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
