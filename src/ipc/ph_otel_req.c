/* ph_otel_req.c: a request's SERVER span and metric point, and the child
 * spans of what it runs, under the OpenTelemetry MCP conventions
 * (semantic-conventions-genai model/mcp, status Development). */
#include "first.h"
#include "ph_otel.h"
#include "ph_server.h"
#include "ph_exchange.h"
#include "ph_json.h"
#include "ph_util.h"
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a valid "00-<32>-<16>-<2>" whose ids are not ours already */
static bool
split_tp(const char *tp, char *trace, char *span)
{
	if (tp == NULL || strlen(tp) < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-')
		return false;
	for (int i = 3; i < 52; i++)
		if (i != 35 && !((tp[i] >= '0' && tp[i] <= '9') || (tp[i] >= 'a' && tp[i] <= 'f')))
			return false;
	memcpy(trace, tp + 3, 32);
	trace[32] = '\0';
	memcpy(span, tp + 36, 16);
	span[16] = '\0';
	return strspn(trace, "0") != 32 && strspn(span, "0") != 16;
}

void
ph_otel_req_begin(struct ph_req *r, const char *other)
{
	bool parent = r->trace.trace_id[0] != '\0', parent_sampled = false;
	char lt[33], ls[17];
	r->otel.started = true;
	ph_otel_hold(true);
	if (parent) {
		char f[3] = {r->trace.child_traceparent[53], r->trace.child_traceparent[54], 0};
		parent_sampled = (strtol(f, NULL, 16) & 1) != 0;
	} else {
		ph_otel_new_id(r->trace.trace_id, 32);
		ph_otel_new_id(r->trace.span_id, 16);
	}
	r->otel.sampled = ph_otel_sample(r->trace.trace_id, parent, parent_sampled);
	ph_otel_traceparent(r->trace.child_traceparent, r->trace.trace_id, r->trace.span_id,
			    r->otel.sampled ? "01" : "00");
	/* the trace context of the other carrier (the HTTP header when _meta's
	 * is the parent) is linked, as the conventions say */
	if (other != NULL && split_tp(other, lt, ls) &&
	    (strcmp(lt, r->trace.trace_id) != 0 || strcmp(ls, r->trace.parent_span_id) != 0)) {
		memcpy(r->otel.link_trace, lt, sizeof lt);
		memcpy(r->otel.link_span, ls, sizeof ls);
	}
}

/* JSON-RPC errors the conventions do not count as span errors: a client's
 * mistake, not the server's (parse, invalid request, method not found,
 * invalid params, resource not found). */
static bool
client_mistake(int code)
{
	return code == -32700 || code == -32600 || code == -32601 || code == -32602 || code == -32002;
}

struct attrs {
	struct ph_otel_attr a[16];
	size_t n;
};

static void
put(struct attrs *x, const char *k, const char *v)
{
	if (v != NULL && *v != '\0' && x->n < PH_ARRAY_LEN(x->a))
		x->a[x->n++] = (struct ph_otel_attr){k, v, 0};
}

static const char *
version(const struct ph_req *r)
{
	if (!r->legacy && r->version)
		return r->version;
	return r->hdr_version;
}

/* Whether r's method is one of resources/... (its target a URI). */
static bool
on_resource(const struct ph_req *r)
{
	switch (r->mid) {
	case PH_METHOD_RESOURCES_READ:
	case PH_METHOD_SUBSCRIBE:
	case PH_METHOD_UNSUBSCRIBE:
	case PH_METHOD_RESOURCES_LIST:
	case PH_METHOD_TEMPLATES_LIST:
		return true;
	default:
		return false;
	}
}

/* The attributes the span and the metric point share; code and et are the
 * caller's buffers. */
static void
common(const struct ph_req *r, struct attrs *x, char *code, size_t csz, const char **et)
{
	*et = NULL;
	put(x, "mcp.method.name", r->method);
	if (r->target && r->mid == PH_METHOD_TOOLS_CALL) {
		put(x, "gen_ai.tool.name", r->target);
		put(x, "gen_ai.operation.name", "execute_tool");
	} else if (r->target && r->mid == PH_METHOD_PROMPTS_GET) {
		put(x, "gen_ai.prompt.name", r->target);
	}
	put(x, "mcp.protocol.version", version(r));
	put(x, "network.transport", r->ex->http ? "tcp" : "pipe");
	if (r->ex->http)
		put(x, "network.protocol.name", "http");
	if (r->resp.rpc_code) {
		snprintf(code, csz, "%d", r->resp.rpc_code);
		put(x, "rpc.response.status_code", code);
		*et = code;
	} else if (r->otel.tool_error) {
		*et = "tool_error";
	} else if (r->resp.status >= 500) {
		snprintf(code, csz, "%d", r->resp.status);
		*et = code;
	}
	put(x, "error.type", *et);
}

/* The id as the conventions' string: an integer in decimal without json-c's
 * printf (buf: 24 bytes; some 650 instructions a request), any other as
 * json-c prints it. */
static const char *
id_text(struct json_object *id, char *buf)
{
	char t[24];
	size_t n = 0, i = 0;
	int64_t v;
	uint64_t u;
	if (!json_object_is_type(id, json_type_int) || (v = json_object_get_int64(id)) == INT64_MAX)
		return json_object_get_string(id); /* INT64_MAX: maybe a larger unsigned one */
	u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do
		t[n++] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (v < 0)
		buf[i++] = '-';
	while (n > 0)
		buf[i++] = t[--n];
	buf[i] = '\0';
	return buf;
}

static void
server_span(struct ph_req *r, struct attrs *x, int64_t start, int64_t end)
{
	char name[256], idbuf[24];
	const char *tgt = NULL;
	struct ph_otel_span sp;
	if (r->target && (r->mid == PH_METHOD_TOOLS_CALL || r->mid == PH_METHOD_PROMPTS_GET ||
			  (ph_otel.uri_in_name && on_resource(r))))
		tgt = r->target;
	ph_otel_join(name, sizeof name, r->method ? r->method : "mcp", tgt ? " " : "", tgt ? tgt : "");
	if (r->target && on_resource(r))
		put(x, "mcp.resource.uri", r->target);
	if (r->id)
		put(x, "jsonrpc.request.id", id_text(r->id, idbuf));
	if (r->legacy && r->ex->http)
		put(x, "mcp.session.id", r->ex->ops->param(r->ex, "HTTP_MCP_SESSION_ID"));
	if (r->ex->http)
		put(x, "client.address", r->ex->ops->param(r->ex, "REMOTE_ADDR"));
	put(x, "phantom.principal", r->who.principal);
	memset(&sp, 0, sizeof sp);
	sp.trace = r->trace.trace_id;
	sp.span = r->trace.span_id;
	sp.parent = r->trace.parent_span_id;
	sp.link_trace = r->otel.link_trace;
	sp.link_span = r->otel.link_span;
	sp.name = name;
	sp.kind = PH_OTEL_SERVER;
	sp.start_ns = start;
	sp.end_ns = end;
	sp.attrs = x->a;
	sp.nattrs = x->n;
	sp.error = r->otel.tool_error || (r->resp.rpc_code != 0 && !client_mistake(r->resp.rpc_code)) ||
		   (r->resp.rpc_code == 0 && r->resp.status >= 500);
	sp.message = r->otel.message[0] ? r->otel.message : NULL;
	ph_otel_send_span(&sp);
}

/* A request that did not pass the ladder's trace step (refused before it,
 * or a parked call resumed): its _meta trace context, if any, is the
 * parent. */
static void
late_begin(struct ph_req *r)
{
	struct json_object *meta, *tp;
	if (r->trace.trace_id[0] == '\0' && json_object_object_get_ex(r->params, "_meta", &meta) &&
	    json_object_object_get_ex(meta, "traceparent", &tp) &&
	    json_object_is_type(tp, json_type_string)) {
		const char *s = json_object_get_string(tp);
		if (split_tp(s, r->trace.trace_id, r->trace.parent_span_id)) {
			ph_otel_new_id(r->trace.span_id, 16);
			ph_otel_traceparent(r->trace.child_traceparent, r->trace.trace_id, r->trace.span_id, s + 53);
		} else {
			r->trace.trace_id[0] = r->trace.parent_span_id[0] = '\0';
		}
	}
	ph_otel_req_begin(r, NULL);
}

void
ph_otel_req_end(struct ph_req *r)
{
	struct attrs x = {.n = 0};
	char code[16];
	const char *et;
	int64_t end = ph_otel_now_ns();
	int64_t dur = (ph_now_us() - r->t0) * 1000;
	if (!r->counted || json_object_is_type(r->msg, json_type_array)) {
		ph_otel_hold(false); /* what is held goes (nothing, as a rule) */
		return; /* health checks and scrapes are not MCP operations; a batch's
			 * messages have a span each */
	}
	if (!r->otel.started)
		late_begin(r);
	common(r, &x, code, sizeof code, &et);
	ph_otel_send_point(0, dur, x.a, x.n);
	if (r->otel.sampled)
		server_span(r, &x, end - dur, end);
	ph_otel_hold(false);
}

void
ph_otel_child_begin(struct ph_req *r, struct ph_otel_child *c)
{
	c->live = r->otel.started && r->otel.sampled;
	if (!c->live)
		return;
	ph_otel_new_id(c->span, 16);
	memcpy(c->saved, r->trace.child_traceparent, sizeof c->saved);
	ph_otel_traceparent(r->trace.child_traceparent, r->trace.trace_id, c->span, "01");
	c->start_ns = ph_otel_now_ns();
}

void
ph_otel_child_end(struct ph_req *r, struct ph_otel_child *c, const char *name,
		  const struct ph_otel_attr *attrs, size_t n, bool error)
{
	struct ph_otel_span sp;
	if (!c->live)
		return;
	c->live = false;
	memcpy(r->trace.child_traceparent, c->saved, sizeof c->saved);
	memset(&sp, 0, sizeof sp);
	sp.trace = r->trace.trace_id;
	sp.span = c->span;
	sp.parent = r->trace.span_id;
	sp.name = name;
	sp.kind = PH_OTEL_INTERNAL;
	sp.start_ns = c->start_ns;
	sp.end_ns = ph_otel_now_ns();
	sp.attrs = attrs;
	sp.nattrs = n;
	sp.error = error;
	ph_otel_send_span(&sp);
}

void
ph_otel_child_drop(struct ph_req *r, struct ph_otel_child *c)
{
	if (!c->live)
		return;
	c->live = false;
	memcpy(r->trace.child_traceparent, c->saved, sizeof c->saved);
}

#define PARK_KEY "_phantom_otel" /* a member of the parked message, ours */

void
ph_otel_park_mark(struct ph_req *r)
{
	char v[96];
	if (!r->otel.started || !r->otel.sampled || !json_object_is_type(r->msg, json_type_object))
		return;
	snprintf(v, sizeof v, "%s %s %lld", r->trace.trace_id, r->trace.span_id, (long long)ph_otel_now_ns());
	json_object_object_add(r->msg, PARK_KEY, json_object_new_string(v));
}

/* The wait of the parked message msg as a span under its call's (trace and
 * span, 33 and 17 bytes, get that call's ids), ended now; error with its
 * message when the call was given up. The mark is taken out of msg. False
 * when msg has no (good) mark. */
static bool
wait_span(struct json_object *msg, bool error, const char *message, char *trace, char *span)
{
	struct json_object *m;
	char wait_id[17];
	long long t0;
	struct ph_otel_span sp;
	const char *method = ph_jstr(msg, "method");
	struct ph_otel_attr a[] = {{"mcp.method.name", method, 0}};
	bool good;
	if (!json_object_object_get_ex(msg, PARK_KEY, &m))
		return false;
	good = sscanf(json_object_get_string(m), "%32[0-9a-f] %16[0-9a-f] %lld", trace, span, &t0) == 3 &&
	       strlen(trace) == 32 && strlen(span) == 16;
	json_object_object_del(msg, PARK_KEY);
	if (!good)
		return false;
	ph_otel_new_id(wait_id, 16);
	memset(&sp, 0, sizeof sp);
	sp.trace = trace;
	sp.span = wait_id;
	sp.parent = span;
	sp.name = "parked: waiting for the client";
	sp.kind = PH_OTEL_INTERNAL;
	sp.start_ns = t0;
	sp.end_ns = ph_otel_now_ns();
	sp.attrs = a;
	sp.nattrs = method ? 1 : 0;
	sp.error = error;
	sp.message = message;
	ph_otel_send_span(&sp);
	return true;
}

void
ph_otel_park_failed(struct json_object *msg, const char *why)
{
	char trace[33], span[17];
	if (ph_otel_on)
		wait_span(msg, true, why, trace, span);
}

void
ph_otel_park_resumed(struct ph_req *r)
{
	char trace[33], span[17];
	if (!wait_span(r->msg, false, NULL, trace, span))
		return;
	/* the resumed run continues the first request's trace, sampled as it was */
	memcpy(r->trace.trace_id, trace, sizeof trace);
	memcpy(r->trace.parent_span_id, span, sizeof span);
	ph_otel_new_id(r->trace.span_id, 16);
	ph_otel_traceparent(r->trace.child_traceparent, trace, r->trace.span_id, "01");
	ph_otel_req_begin(r, NULL);
}

#define TASK_KEY "_otel" /* a member of a task record, ours */

void
ph_otel_task_mark(const struct ph_req *r, struct json_object *rec)
{
	char v[64];
	if (!r->otel.started || !r->otel.sampled)
		return;
	snprintf(v, sizeof v, "%s %s", r->trace.trace_id, r->trace.span_id);
	json_object_object_add(rec, TASK_KEY, json_object_new_string(v));
}

void
ph_otel_task_ended(struct json_object *rec)
{
	struct json_object *m, *c, *e;
	char trace[33], span[17], own_trace[33], own_span[17];
	const char *status;
	struct ph_otel_span sp;
	struct attrs x = {.n = 0};
	if (!json_object_object_get_ex(rec, TASK_KEY, &m) ||
	    sscanf(json_object_get_string(m), "%32[0-9a-f] %16[0-9a-f]", trace, span) != 2 ||
	    strlen(trace) != 32 || strlen(span) != 16 || !json_object_object_get_ex(rec, "_created_ms", &c))
		return;
	status = json_object_get_string(ph_jget(rec, "status"));
	put(&x, "gen_ai.tool.name", json_object_get_string(ph_jget(rec, "_tool")));
	put(&x, "gen_ai.operation.name", "execute_tool");
	put(&x, "phantom.task.id", json_object_get_string(ph_jget(rec, "taskId")));
	put(&x, "phantom.task.status", status);
	ph_otel_new_id(own_trace, 32);
	ph_otel_new_id(own_span, 16);
	memset(&sp, 0, sizeof sp);
	sp.trace = own_trace;
	sp.span = own_span;
	sp.link_trace = trace;
	sp.link_span = span;
	sp.name = "task run";
	sp.kind = PH_OTEL_INTERNAL;
	sp.start_ns = json_object_get_int64(c) * 1000000;
	sp.end_ns = json_object_object_get_ex(rec, "_ended_ms", &e) ? json_object_get_int64(e) * 1000000
								   : ph_otel_now_ns();
	sp.attrs = x.a;
	sp.nattrs = x.n;
	sp.error = status != NULL && strcmp(status, "completed") != 0 && strcmp(status, "cancelled") != 0;
	sp.message = json_object_get_string(ph_jget(rec, "statusMessage"));
	ph_otel_send_span(&sp);
}

void
ph_otel_session_ended(struct ph_req *r)
{
	struct attrs x = {.n = 0};
	struct json_object *iat;
	int64_t now_ms = ph_wall_ms();
	if (!json_object_object_get_ex(r->sess.session, "iat", &iat))
		return;
	put(&x, "mcp.protocol.version", json_object_get_string(ph_jget(r->sess.session, "v")));
	put(&x, "network.protocol.name", "http");
	ph_otel_send_point(1, (now_ms - json_object_get_int64(iat) * 1000) * 1000000, x.a, x.n);
}
