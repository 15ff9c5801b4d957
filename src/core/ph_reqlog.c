/* ph_reqlog.c: the one-line-per-request log on stderr. */
#include "first.h"
#include "ph_core.h"
#include "ph_log.h"
#include "ph_server.h"
#include "ph_util.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Appends s to b with control characters, spaces, quotes and backslashes
 * escaped, so one request is always one line, and one value one field,
 * whatever the client sent (a user name "mallory principal=root" must not
 * read as a second principal). */
static void
add_safe(struct ph_buf *b, const char *s)
{
	while (*s) {
		size_t n = 0;
		unsigned char c;
		/* the run of characters that go as they are, at once */
		while ((c = (unsigned char)s[n]) > 0x20 && c != 0x7f && c != '"' && c != '\\')
			n++;
		ph_buf_add(b, s, n);
		s += n;
		if (*s) {
			ph_buf_printf(b, "\\x%02x", c);
			s++;
		}
	}
}

static void
add_str(struct json_object *o, const char *k, const char *v)
{
	if (v != NULL && *v != '\0')
		ph_jset(o, k, json_object_new_string(v));
}

/* The protocol version of the request: the one in _meta (2026-07-28), else
 * the MCP-Protocol-Version header a legacy client sends after initialize. */
static const char *
log_version(const struct ph_req *r)
{
	if (!r->legacy && r->version)
		return r->version;
	if (r->ex->http)
		return r->ex->ops->param(r->ex, "HTTP_MCP_PROTOCOL_VERSION");
	return NULL;
}

/* The JSON form of the line: OpenTelemetry MCP semantic-convention names
 * where one exists, and the members of the older log.json form. */
static struct json_object *
json_line(const struct ph_req *r, const char *method, const char *ts, long long us)
{
	struct json_object *o = json_object_new_object();
	ph_jset(o, "time", json_object_new_string(ts));
	ph_jset(o, "pid", json_object_new_int(ph_pid()));
	ph_jset(o, "method", json_object_new_string(method));
	add_str(o, "mcp.method.name", r->method);
	if (r->target && r->method) {
		if (r->mid == PH_METHOD_TOOLS_CALL)
			add_str(o, "gen_ai.tool.name", r->target);
		else if (r->mid == PH_METHOD_PROMPTS_GET)
			add_str(o, "gen_ai.prompt.name", r->target);
		else if (ph_method_on_resources(r->mid))
			add_str(o, "mcp.resource.uri", r->target);
	}
	if (r->target)
		ph_jset(o, "target", json_object_new_string(r->target));
	if (r->id)
		ph_jset(o, "jsonrpc.request.id",
				       json_object_new_string(json_object_get_string(r->id)));
	add_str(o, "mcp.protocol.version", log_version(r));
	if (r->legacy && r->ex->http)
		add_str(o, "mcp.session.id", r->ex->ops->param(r->ex, "HTTP_MCP_SESSION_ID"));
	ph_jset(o, "network.transport", json_object_new_string(r->ex->http ? "tcp" : "pipe"));
	ph_jset(o, "status", json_object_new_int(r->resp.status));
	if (r->resp.rpc_code) {
		char e[16];
		snprintf(e, sizeof e, "%d", r->resp.rpc_code);
		ph_jset(o, "error.type", json_object_new_string(e));
		ph_jset(o, "code", json_object_new_int(r->resp.rpc_code));
	} else if (r->resp.status >= 400) {
		char e[16];
		snprintf(e, sizeof e, "%d", r->resp.status);
		ph_jset(o, "error.type", json_object_new_string(e));
	}
	{
		/* written as its microseconds allow (25.839), never as the
		 * nearest double (25.838999999999999) */
		char ms[32];
		snprintf(ms, sizeof ms, "%lld.%03lld", us / 1000, us % 1000);
		ph_jset(o, "duration_ms", json_object_new_double_s((double)us / 1000.0, ms));
	}
	ph_jset(o, "us", json_object_new_int64(us));
	add_str(o, "principal", r->who.principal);
	add_str(o, "exec", r->exec_how); /* warm or fresh: a persistent handler */
	add_str(o, "trace_id", r->trace.trace_id);
	add_str(o, "span_id", r->trace.span_id);
	add_str(o, "parent_span_id", r->trace.parent_span_id);
	add_str(o, "traceparent", r->trace.traceparent);
	return o;
}

void
ph_log_request(const struct ph_req *r, const char *method)
{
	/* the line is made in memory kept for the next request's */
	static struct ph_kept kept_line;
	char ts[96];
	struct ph_buf b;
	long long us = (long long)(ph_now_us() - r->t0);
	bool kept = ph_kept_take(&kept_line, &b);
	ph_log_timestamp(ts, sizeof ts);
	if (r->srv && (r->srv->conf->log.json || strcmp(r->srv->conf->log.format, "json") == 0)) {
		struct json_object *o = json_line(r, method, ts, us);
		ph_buf_adds(&b, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		/* a line a request: appended piece by piece, no printf */
		ph_buf_adds(&b, ts);
		ph_buf_adds(&b, " phantom[");
		ph_buf_addint(&b, ph_pid());
		ph_buf_adds(&b, "] method=");
		add_safe(&b, method);
		ph_buf_adds(&b, " target=");
		add_safe(&b, r->target ? r->target : "-");
		ph_buf_adds(&b, " status=");
		ph_buf_addint(&b, r->resp.status);
		ph_buf_adds(&b, " code=");
		if (r->resp.rpc_code)
			ph_buf_addint(&b, r->resp.rpc_code);
		else
			ph_buf_addc(&b, '-');
		ph_buf_adds(&b, " us=");
		ph_buf_addint(&b, us);
		if (r->who.principal) {
			ph_buf_adds(&b, " principal=");
			add_safe(&b, r->who.principal);
		}
		if (r->trace.traceparent) {
			ph_buf_adds(&b, " traceparent=");
			add_safe(&b, r->trace.traceparent);
		}
		if (r->exec_how)
			ph_buf_printf(&b, " exec=%s", r->exec_how);
	}
	ph_buf_addc(&b, '\n');
	/* whole lines, in one write or several gathered (ph_log_buffer), keep
	 * lines whole when workers share stderr */
	ph_log_line(b.data, b.len);
	ph_kept_give(&kept_line, &b, kept, 4096);
}
