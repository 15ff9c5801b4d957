/* ph_core.c: one exchange from bytes to response. The HTTP rules, the
 * JSON-RPC envelope, era selection and the validation ladder of mcp-wire
 * §6.7, dispatch to the method table, result normalisation and the writer
 * (JSON, or SSE once a notification precedes the result). */
#include "first.h"
#include "ph_core.h"
#include "ph_auth.h"
#include "ph_features.h"
#include "ph_registry.h"
#include "ph_util.h"
#include "ph_mrtr.h"
#include "ph_cidr.h"
#include "ph_mime.h"
#include "ph_method.h"
#include "ph_metrics.h"
#include "ph_rate.h"
#include "ph_session.h"
#include "ph_call.h"
#include "ph_park.h"
#include "ph_rawfcgi.h"
#include "ph_shared.h"
#include <sodium.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const modern_versions[] = {PH_MODERN_VERSION};
static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

#define META_PREFIX "io.modelcontextprotocol/"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_INFO "io.modelcontextprotocol/clientInfo"
#define META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVERINFO "io.modelcontextprotocol/serverInfo"

/* ---- output ------------------------------------------------------------- */

static struct json_object *
rpc_error(struct json_object *id, int code, const char *message, struct json_object *data)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();
	ph_jset(o, "jsonrpc", json_object_new_string("2.0"));
	ph_jset(o, "id", id ? json_object_get(id) : NULL);
	ph_jset(e, "code", json_object_new_int(code));
	if (ph_utf8_valid(message, strlen(message))) {
		ph_jset(e, "message", json_object_new_string(message));
	} else { /* it quotes a header, or was cut mid-character */
		char *fixed = ph_utf8_repair(message);
		ph_jset(e, "message", json_object_new_string(fixed));
		free(fixed);
	}
	if (data)
		ph_jset(e, "data", data);
	ph_jset(o, "error", e);
	return o;
}

/* The one place a complete response leaves the core: status, content
 * type, headers (NULL: none) and body go to the front, and the request
 * remembers the status for its log line. */
static void
respond(struct ph_req *r, int status, const char *ctype, const struct ph_header *hdrs,
	const char *body, size_t len)
{
	struct ph_header all[16];
	r->status = status;
	ph_req_headers(r, hdrs, all, PH_ARRAY_LEN(all));
	if (r->ex->ops->respond(r->ex, status, ctype, all, body, len) != 0)
		r->ex->cancelled = 1;
}

/* The largest memory for an answer's text kept from one answer to the next. */
#define KEPT_TEXT_MAX 65536

/* _meta["io.modelcontextprotocol/serverInfo"] on a 2026-07-28 result. */
static void
add_server_info(const struct ph_server *srv, struct json_object *res)
{
	struct json_object *meta = ph_jget(res, "_meta");
	if (meta == NULL) {
		meta = json_object_new_object();
		ph_jset(res, "_meta", meta);
	}
	ph_jset(meta, META_SERVERINFO, json_object_get(srv->server_info));
}

/* The JSON-RPC response carrying res (taken) for id (borrowed). */
static struct json_object *
result_message(struct json_object *id, struct json_object *res)
{
	struct json_object *msg = json_object_new_object();
	/* three names new to a new object, kept by the program: json-c
	 * neither looks them up nor copies them */
	const unsigned f = JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY;
	json_object_object_add_ex(msg, "jsonrpc", json_object_new_string("2.0"), f);
	json_object_object_add_ex(msg, "id", json_object_get(id), f);
	json_object_object_add_ex(msg, "result", res, f);
	return msg;
}

/* The text of result_message(id, res), written without building it; with
 * srv, res (an object with no _meta) also gets the member
 * "_meta": {"io.modelcontextprotocol/serverInfo": ...} at its end, as
 * add_server_info would add it. */
static void
write_result(struct ph_buf *b, struct json_object *id, struct json_object *res,
	     const struct ph_server *srv)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":", mid[] = ",\"result\":";
	size_t at;
	ph_buf_add(b, head, sizeof head - 1);
	ph_json_write(b, id);
	ph_buf_add(b, mid, sizeof mid - 1);
	at = b->len;
	ph_json_write(b, res);
	if (srv) {
		b->len--; /* res's closing brace */
		if (b->len > at + 1)
			ph_buf_addc(b, ',');
		ph_buf_add(b, srv->server_info_meta, srv->server_info_meta_len);
		ph_buf_addc(b, '}');
	}
	ph_buf_addc(b, '}');
}

/* Sends the final message: msg (consumed), or else the response carrying
 * res (consumed) for the request's id, with the server's serverInfo added
 * when info (write_result). It is the last event of an open SSE stream,
 * else a JSON response with the given status. */
static void
send_out(struct ph_req *r, int status, const struct ph_header *extra, struct json_object *msg,
	 struct json_object *res, bool info)
{
	struct ph_buf text;
	if (r->batch != NULL) {
		/* one entry of a legacy batch: the batch is sent when all are done */
		if (msg == NULL) {
			if (info)
				add_server_info(r->srv, res);
			msg = result_message(r->id, res);
		}
		json_object_array_add(r->batch, msg);
		r->status = 200;
		return;
	}
	/* the text of one answer at a time goes into memory kept for the next
	 * (unless it grew large); an answer sent while one is being sent gets
	 * its own */
	static struct ph_kept kept_text;
	bool kept = ph_kept_take(&kept_text, &text);
	ph_buf_reserve(&text, 1024); /* most answers fit: no growing on the way */
	if (msg)
		ph_json_write(&text, msg);
	else
		write_result(&text, r->id, res, info ? r->srv : NULL);
	if (r->streaming) {
		if (r->ex->ops->stream_send(r->ex, text.data, text.len) != 0)
			r->ex->cancelled = 1;
		r->status = 200;
	} else {
		respond(r, status, "application/json", extra, text.data, text.len);
	}
	ph_kept_give(&kept_text, &text, kept, KEPT_TEXT_MAX);
	json_object_put(msg ? msg : res);
}

static void
send_final(struct ph_req *r, int status, struct json_object *msg, const struct ph_header *extra)
{
	send_out(r, status, extra, msg, NULL, false);
}

static void
send_error(struct ph_req *r, enum ph_err e, const char *message, struct json_object *data)
{
	int code = ph_err_rpc_code(e, r->legacy);
	int status = ph_err_http_status(e, r->legacy);
	static const struct ph_header allow[] = {{"Allow", "POST"}, {NULL, NULL}};
	if (!r->ex->http)
		status = 200;
	r->rpc_code = code;
	send_final(r, status, rpc_error(r->id, code, message ? message : ph_err_message(e), data),
		   e == PH_E_HTTP_METHOD ? allow : NULL);
}

static void
send_accepted(struct ph_req *r)
{
	if (r->ex->http && r->batch == NULL)
		respond(r, 202, NULL, NULL, NULL, 0);
	else
		r->status = 202;
}

/* The OAuth protected-resource metadata (GET auth.metadata.path). */
static void
send_metadata(struct ph_req *r, const char *doc)
{
	static const struct ph_header hdrs[] = {
		/* public by design: browser-based clients fetch it cross-origin */
		{"Access-Control-Allow-Origin", "*"}, {"Cache-Control", "max-age=3600"}, {NULL, NULL}};
	respond(r, 200, "application/json", hdrs, doc, strlen(doc));
}

/* ---- HTTP rules (mcp-wire §6.7 step 1) ---------------------------------- */

static const char *
param(struct ph_req *r, const char *name)
{
	return r->ex->ops->param(r->ex, name);
}

/* What a request that is not an MCP POST asks for. */
enum route { R_MCP, R_METADATA, R_PREFLIGHT, R_HEALTH, R_METRICS, R_SESSION_END, R_SESSION_GET };

/* True when the request's path (REQUEST_URI without the query) is path. */
static bool
path_is(struct ph_req *r, const char *path)
{
	const char *uri = param(r, "REQUEST_URI");
	size_t n;
	if (uri == NULL || path == NULL)
		return false;
	n = strcspn(uri, "?#");
	return n == strlen(path) && memcmp(uri, path, n) == 0;
}

/* True when http.cors lets this Origin read responses. */
static bool
cors_allowed(const struct ph_config *c, const char *origin)
{
	const struct ph_strlist *o = &c->http.cors.origins;
	if (o->any)
		return true;
	for (size_t i = 0; i < o->n; i++)
		if (ph_strcaseeq(o->v[i], origin))
			return true;
	return false;
}

static bool
cors_on(const struct ph_config *c)
{
	return c->http.cors.origins.any || c->http.cors.origins.n > 0;
}

/* Longest Access-Control-Request-Headers list looked at. */
#define CORS_REQUEST_HEADERS_MAX 2048

/* Answers an OPTIONS preflight from an allowed origin: 204 with the
 * methods and every header an MCP client sends, including the Mcp-Param-*
 * names the browser asks for (they follow the tools' input schemas). */
static void
send_preflight(struct ph_req *r)
{
	static const char fixed[] = "Content-Type, Authorization, MCP-Protocol-Version, Mcp-Method, "
				    "Mcp-Name, Mcp-Session-Id, Last-Event-ID, traceparent, tracestate, baggage";
	const char *asked = param(r, "HTTP_ACCESS_CONTROL_REQUEST_HEADERS");
	char age[32];
	struct ph_buf allow;
	ph_buf_init(&allow);
	ph_buf_adds(&allow, fixed);
	if (asked != NULL && strlen(asked) <= CORS_REQUEST_HEADERS_MAX) {
		char *copy = ph_xstrdup(asked), *save = NULL;
		for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
			bool token = true;
			for (const char *q = t; *q; q++)
				if (!(isalnum((unsigned char)*q) || *q == '-' || *q == '_'))
					token = false;
			if (token && strncasecmp(t, "mcp-param-", 10) == 0 && t[10] != '\0') {
				ph_buf_adds(&allow, ", ");
				ph_buf_adds(&allow, t);
			}
		}
		free(copy);
	}
	snprintf(age, sizeof age, "%lld", r->srv->conf->http.cors.max_age);
	{
		const struct ph_header hdrs[] = {
			{"Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS"},
			{"Access-Control-Allow-Headers", allow.data},
			{"Access-Control-Max-Age", age},
			{NULL, NULL}};
		respond(r, 204, NULL, hdrs, NULL, 0);
	}
	ph_buf_free(&allow);
}

/* GET http.health: 200 while serving, 503 once stopping, with the
 * configuration generation and the workers. No authentication: a load
 * balancer asks. */
static void
send_health(struct ph_req *r)
{
	static const struct ph_header hdrs[] = {{"Cache-Control", "no-store"}, {NULL, NULL}};
	bool stopping = ph_metrics_stopping();
	struct ph_pool_status st;
	struct json_object *o = json_object_new_object(), *w = json_object_new_object();
	size_t len;
	const char *s;
	ph_metrics_pool(&st);
	ph_jset(o, "status", json_object_new_string(stopping ? "stopping" : "ok"));
	ph_jset(o, "generation", json_object_new_int64(ph_metrics_generation()));
	ph_jset(w, "busy", json_object_new_int64(st.busy));
	ph_jset(w, "idle", json_object_new_int64(st.idle));
	ph_jset(w, "total", json_object_new_int64(st.total));
	ph_jset(w, "max", json_object_new_int64(st.max));
	ph_jset(w, "max_reached", json_object_new_int64(st.full));
	ph_jset(o, "workers", w);
	/* null where the kernel does not tell */
	ph_jset(o, "listen_queue", st.queue >= 0 ? json_object_new_int64(st.queue) : NULL);
	s = ph_json_text(o, &len);
	respond(r, stopping ? 503 : 200, "application/json", hdrs, s, len);
	json_object_put(o);
}

/* True when REMOTE_ADDR is inside one of http.metrics.allow. */
static bool
metrics_client_allowed(struct ph_req *r)
{
	const struct ph_strlist *a = &r->srv->conf->http.metrics.allow;
	const char *addr = param(r, "REMOTE_ADDR");
	struct ph_cidr n;
	for (size_t i = 0; i < a->n; i++)
		if (ph_cidr_parse(a->v[i], &n) == 0 && ph_cidr_contains(&n, addr))
			return true;
	return false;
}

/* GET http.metrics.path: the Prometheus text format, to allowed addresses. */
static void
send_metrics(struct ph_req *r)
{
	struct ph_buf b;
	if (!metrics_client_allowed(r)) {
		static const char msg[] = "Forbidden: this address may not read the metrics\n";
		respond(r, 403, "text/plain; charset=utf-8", NULL, msg, sizeof msg - 1);
		return;
	}
	ph_buf_init(&b);
	ph_metrics_render(&b);
	respond(r, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, b.data, b.len);
	ph_buf_free(&b);
}

/* True when s[0..n) is an optional port: empty, or ':' and at most five
 * digits (RFC 3986 port = *DIGIT). */
static bool
port_ok(const char *s, size_t n)
{
	if (n == 0)
		return true;
	if (s[0] != ':' || n > 6)
		return false;
	for (size_t i = 1; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Host part of "host", "host:port", "[v6]", "[v6]:port", copied into out.
 * Returns false for anything else: a bracket not closed, anything but hex
 * digits, ':' and '.' inside the brackets, anything but a port after the
 * host ("[::1]evil", "[::1].evil.com"), or a host longer than out. */
static bool
host_part(const char *hp, size_t n, char *out, size_t outsz)
{
	size_t l;
	if (n > 0 && hp[0] == '[') {
		const char *close = memchr(hp, ']', n);
		if (close == NULL || close == hp + 1)
			return false;
		l = (size_t)(close - hp) + 1;
		if (strspn(hp + 1, "0123456789abcdefABCDEF:.") != l - 2)
			return false;
	} else {
		const char *colon = memchr(hp, ':', n);
		l = colon ? (size_t)(colon - hp) : n;
	}
	if (!port_ok(hp + l, n - l) || l >= outsz)
		return false;
	memcpy(out, hp, l);
	out[l] = '\0';
	return true;
}

static bool
host_allowed(const struct ph_strlist *hosts, const char *host)
{
	if (hosts->any)
		return true;
	for (size_t i = 0; i < hosts->n; i++)
		if (ph_strcaseeq(hosts->v[i], host))
			return true;
	return false;
}

static bool
origin_allowed(const struct ph_config *c, const char *origin)
{
	const struct ph_strlist *o = &c->http.origins;
	if (o->any || cors_allowed(c, origin))
		return true;
	for (size_t i = 0; i < o->n; i++)
		if (ph_strcaseeq(o->v[i], origin))
			return true;
	if (o->n == 0) {
		/* No list configured: an Origin on an allowed host (any port) is
		 * same-site for a local server; anything else is DNS rebinding. */
		const char *p = strstr(origin, "://");
		char host[256];
		if (p == NULL)
			return false;
		p += 3;
		return host_part(p, strcspn(p, "/"), host, sizeof host) &&
		       host_allowed(&c->http.hosts, host);
	}
	return false;
}

static bool
content_type_json(const char *ct)
{
	static const char want[] = "application/json";
	size_t n = sizeof want - 1;
	if (ct == NULL)
		return false;
	while (*ct == ' ')
		ct++;
	if (strncasecmp(ct, want, n) != 0)
		return false;
	ct += n;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return *ct == '\0' || *ct == ';';
}

/* True when an Accept header lists text/event-stream, or a range of all
 * text types or of every type, among its media ranges. */
static bool
accepts_sse(const char *accept)
{
	if (accept == NULL)
		return false;
	while (*accept) {
		size_t n;
		while (*accept == ' ' || *accept == '\t' || *accept == ',')
			accept++;
		n = strcspn(accept, ",; \t");
		if ((n == 17 && strncasecmp(accept, "text/event-stream", 17) == 0) ||
		    (n == 6 && strncasecmp(accept, "text/*", 6) == 0) || (n == 3 && strncmp(accept, "*/*", 3) == 0))
			return true;
		accept += strcspn(accept, ",");
	}
	return false;
}

/* The routes that are not an MCP POST: the metadata document, health and
 * metrics (GET), a CORS preflight (OPTIONS). Returns PH_OK with *route (and
 * *doc for the metadata), or the error to send. */
static enum ph_err
other_route(struct ph_req *r, const char *m, const char *origin, enum route *route, const char **doc)
{
	const struct ph_config *c = r->srv->conf;
	if (m != NULL && strcmp(m, "OPTIONS") == 0 && cors_on(c) && origin != NULL && *origin) {
		if (!cors_allowed(c, origin))
			return PH_E_ORIGIN;
		*route = R_PREFLIGHT;
		return PH_OK;
	}
	if (m != NULL && strcmp(m, "GET") == 0) {
		if (c->http.health && path_is(r, c->http.health)) {
			r->target = c->http.health;
			*route = R_HEALTH;
			return PH_OK;
		}
		if (c->http.metrics.path && path_is(r, c->http.metrics.path)) {
			r->target = c->http.metrics.path;
			*route = R_METRICS;
			return PH_OK;
		}
		/* OAuth protected-resource metadata at auth.metadata.path */
		if ((*doc = ph_auth_metadata(r)) != NULL) {
			*route = R_METADATA;
			return PH_OK;
		}
	}
	return PH_E_HTTP_METHOD;
}

/* The message of a 405 to OPTIONS with an Origin while http.cors is off: a
 * browser's preflight, which only the configuration can let through, so it
 * says what to set. NULL for any other error (the table's message). */
static const char *
preflight_hint(struct ph_req *r, enum ph_err e)
{
	const char *m = param(r, "REQUEST_METHOD"), *origin = param(r, "HTTP_ORIGIN");
	if (e != PH_E_HTTP_METHOD || m == NULL || strcmp(m, "OPTIONS") != 0 || origin == NULL ||
	    *origin == '\0' || cors_on(r->srv->conf))
		return NULL;
	return "Method not allowed: this OPTIONS is a browser's CORS preflight and http.cors is not "
	       "set; to let pages of that origin call, set http.cors.origins in phantom.yaml "
	       "(phantom.yaml(5)); MCP requests use POST";
}

/* Reads the body, at most max bytes; declared is CONTENT_LENGTH (-1: none
 * given), which the body must match exactly. Returns PH_OK with the body in
 * *body: the front's own when it holds the whole body already, else read
 * into *own (caller frees); or the error to send: a body over max, not the
 * declared length, cut short, or not in by the front's deadline. */
static enum ph_err
read_body(struct ph_req *r, long long declared, long long max, const char **body, size_t *blen,
	  char **own)
{
	enum ph_err e = PH_OK;
	struct ph_buf b;
	const char *held = r->ex->ops->held_body ? r->ex->ops->held_body(r->ex, blen) : NULL;
	if (held != NULL) {
		if ((long long)*blen > max)
			return PH_E_TOO_LARGE;
		if (declared >= 0 && (long long)*blen != declared)
			return PH_E_BODY_LENGTH;
		*body = held;
		return PH_OK;
	}
	ph_buf_init(&b);
	for (;;) {
		char chunk[8192];
		long got = r->ex->ops->read(r->ex, chunk, sizeof chunk);
		if (got == 0)
			break;
		if (got < 0) {
			e = got == PH_READ_TIMEOUT ? PH_E_TIMEOUT
			    : declared >= 0      ? PH_E_BODY_LENGTH
						 : PH_E_INVALID_REQUEST;
			break;
		}
		if ((long long)(b.len + (size_t)got) > max) {
			e = PH_E_TOO_LARGE;
			break;
		}
		ph_buf_add(&b, chunk, (size_t)got);
		if (declared >= 0 && (long long)b.len > declared) {
			e = PH_E_BODY_LENGTH; /* more than declared: stop reading */
			break;
		}
	}
	if (e == PH_OK && declared >= 0 && (long long)b.len != declared)
		e = PH_E_BODY_LENGTH;
	if (e != PH_OK) {
		ph_buf_free(&b);
		return e;
	}
	*blen = b.len;
	*body = *own = ph_buf_steal(&b);
	return PH_OK;
}

/* Applies the HTTP rules and reads the body. Returns PH_OK with the body in
 * *body (as read_body gives it: *own, when set, caller frees) and *route
 * R_MCP, or with another *route (*doc set, borrowed, for the metadata
 * document), or the error to send. */
static enum ph_err
http_rules(struct ph_req *r, const char **body, size_t *blen, char **own, enum route *route,
	   const char **doc)
{
	const struct ph_config *c = r->srv->conf;
	const char *m = param(r, "REQUEST_METHOD");
	const char *origin = param(r, "HTTP_ORIGIN");
	const char *host = param(r, "HTTP_HOST");
	const char *cl = param(r, "CONTENT_LENGTH");
	long long max = c->http.max_body, n = 0;
	r->hdr_method = param(r, "HTTP_MCP_METHOD");

	*route = R_MCP;
	if (origin != NULL && *origin != '\0' && cors_allowed(c, origin))
		r->cors_origin = origin; /* errors too: the page can read them */
	/* DELETE with Mcp-Session-Id ends a legacy session; it passes the
	 * Origin and Host checks like a POST */
	bool end = m != NULL && strcmp(m, "DELETE") == 0 && param(r, "HTTP_MCP_SESSION_ID") != NULL;
	/* GET with the header and Accept: text/event-stream opens the
	 * session's stream, unless it names the health or metrics path or
	 * says it is a 2026-07-28 request (which never sees a session) */
	const char *pv = r->hdr_version = param(r, "HTTP_MCP_PROTOCOL_VERSION");
	bool get = m != NULL && strcmp(m, "GET") == 0 && param(r, "HTTP_MCP_SESSION_ID") != NULL &&
		   (pv == NULL || strcmp(pv, PH_LEGACY_LATEST) <= 0) &&
		   accepts_sse(param(r, "HTTP_ACCEPT")) && !(c->http.health && path_is(r, c->http.health)) &&
		   !(c->http.metrics.path && path_is(r, c->http.metrics.path));
	if (m == NULL || (strcmp(m, "POST") != 0 && !end && !get))
		return other_route(r, m, origin, route, doc);
	if (origin != NULL && *origin != '\0' && !origin_allowed(c, origin))
		return PH_E_ORIGIN;
	if (host != NULL && *host != '\0') {
		char h[256];
		if (!host_part(host, strlen(host), h, sizeof h) || !host_allowed(&c->http.hosts, h))
			return PH_E_HOST;
	}
	if (end || get) {
		*route = end ? R_SESSION_END : R_SESSION_GET;
		return PH_OK;
	}
	if (!content_type_json(param(r, "CONTENT_TYPE")))
		return PH_E_CONTENT_TYPE;
	if (cl != NULL && *cl != '\0') {
		const char *err;
		if (ph_strtonum(cl, 0, INT64_MAX, &n, &err) != 0)
			return PH_E_INVALID_REQUEST;
		if (n > max)
			return PH_E_TOO_LARGE;
	}
	return read_body(r, cl != NULL && *cl != '\0' ? n : -1, max, body, blen, own);
}

/* ---- envelope (steps 2-4) ----------------------------------------------- */

static bool
valid_id(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

/* ---- method table -------------------------------------------------------- */

enum {
	M_MODERN = 1 << 0,    /* served in 2026-07-28 */
	M_LEGACY = 1 << 1,    /* served in 2025-11-25 */
	M_NAME = 1 << 2,      /* Mcp-Name carries params.name */
	M_URI = 1 << 3,       /* Mcp-Name carries params.uri */
	M_CACHEABLE = 1 << 4, /* ttlMs/cacheScope on a complete result */
	M_MRTR = 1 << 5,      /* may answer input_required (mcp-wire §5.2) */
	M_TASK = 1 << 6,      /* Mcp-Name carries params.taskId (the tasks extension) */
};

struct method {
	unsigned flags; /* M_*: 0 for no row */
	void (*fn)(struct ph_req *r, struct ph_outcome *o);
	bool (*available)(const struct ph_server *s);
};

/* The resources capability: configured resources, templates or resource
 * lists, or skills (whose files are resources). Without any, the methods
 * are -32601. */
static bool
has_resources(const struct ph_server *s)
{
	const struct ph_registry *reg = s->conf->registry;
	return (reg && (reg->nresources > 0 || reg->ntemplates > 0 || reg->ncatalogs > 0)) ||
	       ph_skills_configured(s);
}

/* resources/read: skill:// uris belong to the skills extension, the rest to
 * configured resources and templates. */
static void
m_resources_read(struct ph_req *r, struct ph_outcome *o)
{
	const char *uri = ph_jstr(r->params, "uri");
	if (uri == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: uri must be a string");
		return;
	}
	r->target = uri;
	if (strncmp(uri, "skill://", 8) == 0)
		ph_skills_read(r, uri, o);
	else
		ph_resources_read(r, uri, o);
}

static struct json_object *
version_list(const char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static void
m_discover(struct ph_req *r, struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	o->result = json_object_new_object();
	ph_jset(o->result, "supportedVersions",
			       version_list(modern_versions, PH_ARRAY_LEN(modern_versions)));
	ph_jset(o->result, "capabilities", ph_capabilities(r));
	if (c->server.instructions)
		ph_jset(o->result, "instructions",
				       json_object_new_string(c->server.instructions));
}

static bool
looks_like_version(const char *v)
{
	/* YYYY-MM-DD */
	if (strlen(v) != 10)
		return false;
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (v[i] != '-')
				return false;
		} else if (v[i] < '0' || v[i] > '9') {
			return false;
		}
	}
	return true;
}

static void
m_initialize(struct ph_req *r, struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	struct json_object *pv = ph_jget(r->params, "protocolVersion");
	const char *want, *chosen = PH_LEGACY_LATEST;
	if (pv == NULL || !json_object_is_type(pv, json_type_string)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: protocolVersion must be a string");
		return;
	}
	want = json_object_get_string(pv);
	if (!looks_like_version(want)) {
		struct json_object *d = json_object_new_object();
		ph_jset(d, "supported",
				       version_list(legacy_versions, PH_ARRAY_LEN(legacy_versions)));
		ph_jset(d, "requested", json_object_new_string(want));
		ph_outcome_error(o, PH_E_PARAMS, d, "Unsupported protocol version: %s", want);
		return;
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(legacy_versions); i++)
		if (strcmp(want, legacy_versions[i]) == 0)
			chosen = legacy_versions[i];
	/* over HTTP the answer opens a session (not inside a batch: a batch
	 * has one set of headers for all its answers) */
	if (r->ex->http && r->batch == NULL) {
		free(r->session_issued);
		r->session_issued = ph_session_issue(r, chosen);
	}
	/* over stdio the process is the session: what it may push, from now on */
	if (!r->ex->http && r->batch == NULL) {
		ph_park_stdio_client(ph_jget(r->params, "capabilities"));
		ph_subscriptions_stdio_session(r);
	}
	o->result = json_object_new_object();
	ph_jset(o->result, "protocolVersion", json_object_new_string(chosen));
	ph_jset(o->result, "capabilities", ph_capabilities(r));
	ph_jset(o->result, "serverInfo", json_object_get(r->srv->server_info));
	if (c->server.instructions)
		ph_jset(o->result, "instructions",
				       json_object_new_string(c->server.instructions));
}

static void
m_ping(struct ph_req *r, struct ph_outcome *o)
{
	(void)r;
	o->result = json_object_new_object();
}

static void
m_set_level(struct ph_req *r, struct ph_outcome *o)
{
	struct json_object *l = ph_jget(r->params, "level");
	if (l == NULL || !json_object_is_type(l, json_type_string) ||
	    ph_log_level_parse(json_object_get_string(l)) == PH_LOG_NONE) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: level must be one of debug, info, "
				 "notice, warning, error, critical, alert, emergency");
		return;
	}
	/* a session behind a hub keeps it there for its later requests on any
	 * worker; over stdio the process is the session and keeps it; without
	 * either the level applies to nothing later */
	if (!r->ex->http && r->batch == NULL)
		ph_subscriptions_stdio_level(ph_log_level_parse(json_object_get_string(l)));
	if (ph_session_has_state(r)) {
		struct json_object *x = json_object_new_object();
		char msg[400];
		enum ph_err e;
		ph_jset(x, "level", json_object_get(l));
		if ((e = ph_session_tell(r, PH_HUBMSG_SESSION_LEVEL, x, msg, sizeof msg)) != PH_OK) {
			ph_outcome_error(o, e, NULL, "%s", msg);
			return;
		}
	}
	o->result = json_object_new_object();
}

/* 2025 resources/subscribe and resources/unsubscribe: {} for a uri. On a
 * session behind a hub the hub keeps the subscription and sends
 * notifications/resources/updated on the session's GET streams, over stdio
 * the process itself on stdout (ph_subscribe.c); a resource
 * this principal may not read (or that does not exist) gets -32002, as
 * resources/read would. Without a session there is no stream to send them
 * on, so a subscription is accepted and nothing more happens (2026 clients
 * use subscriptions/listen). */
static void
m_resources_subscription(struct ph_req *r, struct ph_outcome *o)
{
	const char *uri = ph_jstr(r->params, "uri");
	bool sub = strcmp(r->method, "resources/subscribe") == 0;
	if (uri == NULL) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: uri must be a string");
		return;
	}
	r->target = uri;
	if (!r->ex->http) { /* stdio: the process watches them itself */
		ph_subscriptions_stdio_subscribe(r, uri, sub, o);
		return;
	}
	if (ph_session_has_state(r)) {
		struct json_object *x = json_object_new_object();
		char *path = NULL, msg[400];
		enum ph_err e;
		if (sub && (ph_resources_watch(r, uri, &path) == PH_SUB_NONE || !ph_subscriptions_allowed(r, uri))) {
			json_object_put(x);
			free(path);
			ph_outcome_not_found(r, o, uri);
			return;
		}
		ph_jset(x, "uri", json_object_new_string(uri));
		if (path)
			ph_jset(x, "path", json_object_new_string(path));
		free(path);
		if ((e = ph_session_tell(r, sub ? PH_HUBMSG_SESSION_SUB : PH_HUBMSG_SESSION_UNSUB, x, msg, sizeof msg)) != PH_OK) {
			ph_outcome_error(o, e, NULL, "%s", msg);
			return;
		}
	}
	o->result = json_object_new_object();
}

static const struct method methods[PH_METHOD__COUNT] = {
	[PH_METHOD_DISCOVER] = {M_MODERN | M_CACHEABLE, m_discover, NULL},
	[PH_METHOD_INITIALIZE] = {M_LEGACY, m_initialize, NULL},
	[PH_METHOD_PING] = {M_LEGACY, m_ping, NULL},
	[PH_METHOD_SET_LEVEL] = {M_LEGACY, m_set_level, NULL},
	[PH_METHOD_SUBSCRIBE] = {M_LEGACY, m_resources_subscription, NULL},
	[PH_METHOD_UNSUBSCRIBE] = {M_LEGACY, m_resources_subscription, NULL},
	[PH_METHOD_RESOURCES_READ] = {M_MODERN | M_LEGACY | M_URI | M_CACHEABLE | M_MRTR, m_resources_read, has_resources},
	[PH_METHOD_LISTEN] = {M_MODERN, ph_m_subscriptions_listen, NULL},
	[PH_METHOD_TOOLS_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_tools_list, ph_tools_available},
	[PH_METHOD_TOOLS_CALL] = {M_MODERN | M_LEGACY | M_NAME | M_MRTR, ph_tools_call, ph_tools_available},
	[PH_METHOD_PROMPTS_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_prompts_list, ph_prompts_available},
	[PH_METHOD_PROMPTS_GET] = {M_MODERN | M_LEGACY | M_NAME | M_MRTR, ph_prompts_get, ph_prompts_available},
	[PH_METHOD_RESOURCES_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_resources_list, has_resources},
	[PH_METHOD_TEMPLATES_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_templates_list, has_resources},
	[PH_METHOD_COMPLETE] = {M_MODERN | M_LEGACY, ph_complete, ph_complete_available},
	[PH_METHOD_TASKS_GET] = {M_MODERN | M_TASK, ph_tasks_get, ph_tasks_available},
	[PH_METHOD_TASKS_UPDATE] = {M_MODERN | M_TASK, ph_tasks_update, ph_tasks_available},
	[PH_METHOD_TASKS_CANCEL] = {M_MODERN | M_TASK, ph_tasks_cancel, ph_tasks_available},
	[PH_METHOD_SKILLS_LIST] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_skills_list, ph_skills_configured},
	[PH_METHOD_SKILLS_GET] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_skills_get, ph_skills_configured},
	/* cacheable too: the SDK client (2.4.0) requires ttlMs/cacheScope here */
	[PH_METHOD_DIRECTORY_READ] = {M_MODERN | M_LEGACY | M_CACHEABLE, ph_skills_directory_read,
	 ph_skills_configured},
};

static const struct method *
find_method(const char *name, bool legacy, const struct ph_server *s)
{
	enum ph_method i = ph_method_find(name);
	const struct method *m;
	if (i == PH_METHOD__COUNT)
		return NULL;
	m = &methods[i];
	if (!(m->flags & (legacy ? M_LEGACY : M_MODERN)))
		return NULL;
	if (m->available && !m->available(s))
		return NULL;
	return m;
}

/* ---- the ladder (steps 3-11) --------------------------------------------- */

static bool
is_modern_version(const char *v)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(modern_versions); i++)
		if (strcmp(v, modern_versions[i]) == 0)
			return true;
	return false;
}

/* The members of params._meta the steps read (NULL: absent), found in one
 * walk of its members: looking each name up on its own walked them once a
 * name, and the protocol's names share a long prefix. */
struct meta_view {
	struct json_object *meta; /* params._meta itself, maybe not an object */
	struct json_object *version, *caps, *info, *loglevel;
	struct json_object *progress, *traceparent, *tracestate, *baggage;
};

static void
view_meta(struct json_object *meta, struct meta_view *mv)
{
	static const struct {
		bool prefixed; /* the name is META_PREFIX and this */
		const char *name;
		size_t at;
	} names[] = {
		{true, "protocolVersion", offsetof(struct meta_view, version)},
		{true, "clientCapabilities", offsetof(struct meta_view, caps)},
		{true, "clientInfo", offsetof(struct meta_view, info)},
		{true, "logLevel", offsetof(struct meta_view, loglevel)},
		{false, "progressToken", offsetof(struct meta_view, progress)},
		{false, "traceparent", offsetof(struct meta_view, traceparent)},
		{false, "tracestate", offsetof(struct meta_view, tracestate)},
		{false, "baggage", offsetof(struct meta_view, baggage)},
	};
	memset(mv, 0, sizeof *mv);
	mv->meta = meta;
	if (!json_object_is_type(meta, json_type_object))
		return;
	json_object_object_foreach(meta, k, v) {
		bool prefixed = strncmp(k, META_PREFIX, sizeof META_PREFIX - 1) == 0;
		const char *tail = prefixed ? k + sizeof META_PREFIX - 1 : k;
		for (size_t i = 0; i < PH_ARRAY_LEN(names); i++) {
			if (names[i].prefixed == prefixed && names[i].name[0] == tail[0] &&
			    strcmp(names[i].name, tail) == 0) {
				*(struct json_object **)(void *)((char *)mv + names[i].at) = v;
				break;
			}
		}
	}
}

/* Checks the request _meta (step 4). Returns false after setting *e and msg. */
static bool
check_meta(struct ph_req *r, const struct meta_view *mv, char *msg, size_t msz)
{
	struct json_object *meta = mv->meta, *v, *caps, *info, *lvl, *tok;
	if (r->params == NULL || !json_object_is_type(r->params, json_type_object)) {
		snprintf(msg, msz, "Invalid params: params with _meta is required");
		return false;
	}
	if (meta == NULL || !json_object_is_type(meta, json_type_object)) {
		snprintf(msg, msz, "Invalid params: params._meta is required");
		return false;
	}
	v = mv->version;
	if (ph_jstr_nul(v)) {
		snprintf(msg, msz, "Invalid params: _meta[\"%s\"] contains U+0000", META_VERSION);
		return false;
	}
	if (v == NULL || !json_object_is_type(v, json_type_string)) {
		snprintf(msg, msz, "Invalid params: _meta[\"%s\"] is required and must be a string",
			 META_VERSION);
		return false;
	}
	caps = mv->caps;
	if (caps == NULL || !json_object_is_type(caps, json_type_object)) {
		snprintf(msg, msz, "Invalid params: _meta[\"%s\"] is required and must be an object",
			 META_CAPS);
		return false;
	}
	info = mv->info;
	if (info != NULL && !json_object_is_type(info, json_type_object)) {
		snprintf(msg, msz, "Invalid params: _meta[\"%s\"] must be an object", META_INFO);
		return false;
	}
	lvl = mv->loglevel;
	if (lvl != NULL) {
		if (!json_object_is_type(lvl, json_type_string) ||
		    ph_log_level_parse(json_object_get_string(lvl)) == PH_LOG_NONE) {
			snprintf(msg, msz, "Invalid params: _meta[\"%s\"] must be a logging level",
				 META_LOGLEVEL);
			return false;
		}
		r->log_level = ph_log_level_parse(json_object_get_string(lvl));
	}
	tok = mv->progress;
	if (tok != NULL) {
		if (!valid_id(tok)) {
			snprintf(msg, msz, "Invalid params: _meta.progressToken must be a string or integer");
			return false;
		}
		r->progress_token = tok;
	}
	r->version = json_object_get_string(v);
	r->client_caps = caps;
	return true;
}

/* Compares a header against the body value after trimming and decoding.
 * Returns 0 when equal, 1 when different, -1 when malformed. */
static int
header_cmp(const char *hv, const char *body, size_t blen)
{
	size_t n;
	const char *t = ph_trim(hv, &n);
	char *dec = NULL;
	int rc = ph_header_decode(t, n, &dec);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		int d = strlen(dec) != blen || memcmp(dec, body, blen) != 0;
		free(dec);
		return d;
	}
	return (blen == n && memcmp(t, body, n) == 0) ? 0 : 1;
}

/* Modern step 5 and 7: the standard routing headers. Step 5 compares
 * the ones present with the body; step 7 (presence), which only follows
 * it, requires them, and Mcp-Name, without comparing again. */
static bool
check_headers(struct ph_req *r, const struct method *m, bool presence, char *msg, size_t msz)
{
	const char *pv = r->hdr_version, *mm = r->hdr_method;
	if (pv != NULL) {
		if (!presence && header_cmp(pv, r->version, strlen(r->version)) != 0) {
			snprintf(msg, msz, "Header mismatch: MCP-Protocol-Version header value '%s' does not "
				 "match body value '%s'", pv, r->version);
			return false;
		}
	} else if (presence) {
		snprintf(msg, msz, "Header mismatch: required MCP-Protocol-Version header is missing");
		return false;
	}
	if (mm != NULL) {
		if (!presence && header_cmp(mm, r->method, strlen(r->method)) != 0) {
			snprintf(msg, msz, "Header mismatch: Mcp-Method header value '%s' does not match "
				 "body value '%s'", mm, r->method);
			return false;
		}
	} else if (presence) {
		snprintf(msg, msz, "Header mismatch: required Mcp-Method header is missing");
		return false;
	}
	if (presence && m != NULL && (m->flags & (M_NAME | M_URI | M_TASK))) {
		const char *nh = param(r, "HTTP_MCP_NAME");
		struct json_object *bv = ph_jget(r->params, (m->flags & M_NAME)  ? "name"
							    : (m->flags & M_URI) ? "uri"
										 : "taskId");
		const char *body = bv && json_object_is_type(bv, json_type_string)
					   ? json_object_get_string(bv) : NULL;
		size_t blen = body ? (size_t)json_object_get_string_len(bv) : 0;
		if (body != NULL) {
			int rc;
			if (nh == NULL) {
				snprintf(msg, msz, "Header mismatch: required Mcp-Name header is missing");
				return false;
			}
			rc = header_cmp(nh, body, blen);
			if (rc < 0) {
				snprintf(msg, msz, "Header mismatch: Mcp-Name header has invalid base64 encoding");
				return false;
			}
			if (rc > 0) {
				snprintf(msg, msz, "Header mismatch: Mcp-Name header value '%s' does not match "
					 "body value '%s'", nh, body);
				return false;
			}
		}
	}
	return true;
}

static void
finish_result(struct ph_req *r, const struct method *m, struct json_object *res)
{
	if (!r->legacy) {
		struct json_object *rt = ph_jget(res, "resultType");
		const struct ph_config *c = r->srv->conf;
		if (rt == NULL)
			ph_jset(res, "resultType", ph_jshared_str("complete"));
		bool complete = rt == NULL || strcmp(json_object_get_string(rt), "complete") == 0;
		/* results of retries (MRTR) are never cached (mcp-wire §5.4, §10) */
		bool retry = ph_jget(r->params, "requestState") || ph_jget(r->params, "inputResponses");
		if ((m->flags & M_CACHEABLE) && complete && !retry) {
			if (ph_jget(res, "ttlMs") == NULL)
				ph_jset(res, "ttlMs", json_object_new_int64(c->server.ttl_ms));
			if (ph_jget(res, "cacheScope") == NULL)
				ph_jset(res, "cacheScope", json_object_new_string(c->server.scope));
			if (ph_access_restricted(r))
				ph_jset(res, "cacheScope", json_object_new_string("private"));
		} else if ((m->flags & M_CACHEABLE) && complete) {
			/* a complete result of a retry still carries the required
			 * hints, saying "do not reuse" (not the handler's own) */
			ph_jset(res, "ttlMs", json_object_new_int64(0));
			ph_jset(res, "cacheScope", json_object_new_string("private"));
		} else if (!complete && strcmp(json_object_get_string(rt), "input_required") == 0) {
			/* an InputRequiredResult has no caching fields (a task's
			 * ttlMs is its own: how long it is kept) */
			json_object_object_del(res, "ttlMs");
			json_object_object_del(res, "cacheScope");
		}
	}
	/* a result without _meta has its serverInfo _meta written, not built */
	bool info = !r->legacy && json_object_is_type(res, json_type_object) && !ph_jhas(res, "_meta");
	if (!r->legacy && !info)
		add_server_info(r->srv, res);
	send_out(r, 200, NULL, NULL, res, info);
}

struct json_object *
ph_core_final_result(const struct ph_server *srv, struct json_object *id, struct json_object *res)
{
	if (ph_jget(res, "resultType") == NULL)
		ph_jset(res, "resultType", json_object_new_string("complete"));
	add_server_info(srv, res);
	return result_message(id, res);
}

static void
handle_notification(struct ph_req *r)
{
	/* notifications/initialized, notifications/cancelled and anything else:
	 * accepted and dropped; a front that can cancel does it before this. A
	 * cancelled that names a listen kept open on stdio ends it. */
	if (strcmp(r->method, "notifications/cancelled") == 0 && !r->ex->http)
		ph_subscriptions_cancel(ph_jget(r->params, "requestId"));
	send_accepted(r);
}

/* Takes a token from the bucket of the request's principal (else its
 * client address) over HTTP; stdio is exempt. Returns false after sending
 * 429 with Retry-After and a JSON-RPC error naming the limit. */
static bool
rate_ok(struct ph_req *r)
{
	const struct ph_rate_conf *own = ph_auth_rate(r), *rc = own ? own : &r->srv->conf->limits.rate;
	const char *addr;
	char *key, limit[PH_AUTH_PRINCIPAL_MAX + 32], msg[PH_AUTH_PRINCIPAL_MAX + 160];
	char after[32];
	long long wait;
	if (!r->ex->http || rc->requests <= 0)
		return true;
	/* the whole principal: a key cut short let principals sharing a prefix
	 * throttle each other */
	if (r->principal)
		key = ph_xasprintf("p:%s", r->principal);
	else
		key = ph_xasprintf("a:%s", (addr = param(r, "REMOTE_ADDR")) ? addr : "-");
	wait = ph_rate_take(key, rc, ph_now_us());
	free(key);
	if (wait == 0)
		return true;
	ph_metrics_rate_limited();
	if (own)
		snprintf(limit, sizeof limit, "auth.allow.%s.rate", r->principal);
	else
		snprintf(limit, sizeof limit, "limits.rate");
	snprintf(msg, sizeof msg, "Too Many Requests: over %s (%lld requests per %lld s); retry after %lld s",
		 limit, rc->requests, rc->per_seconds, wait);
	snprintf(after, sizeof after, "%lld", wait);
	{
		const struct ph_header hdrs[] = {{"Retry-After", after}, {NULL, NULL}};
		struct json_object *d = json_object_new_object();
		ph_jset(d, "limit", json_object_new_string(limit));
		ph_jset(d, "requests", json_object_new_int64(rc->requests));
		ph_jset(d, "perSeconds", json_object_new_int64(rc->per_seconds));
		ph_jset(d, "retryAfter", json_object_new_int64(wait));
		r->rpc_code = ph_err_rpc_code(PH_E_RATE_LIMITED, r->legacy);
		send_final(r, ph_err_http_status(PH_E_RATE_LIMITED, r->legacy),
			   rpc_error(r->id, r->rpc_code, msg, d), hdrs);
	}
	return false;
}

/* Sends an authentication refusal e (401, 403, 503) with its message and
 * WWW-Authenticate header. */
static void
send_refusal(struct ph_req *r, enum ph_err e, const char *msg, const struct ph_header *hdrs)
{
	r->rpc_code = ph_err_rpc_code(e, r->legacy);
	send_final(r, r->ex->http ? ph_err_http_status(e, r->legacy) : 200,
		   rpc_error(r->id, r->rpc_code, msg[0] ? msg : ph_err_message(e), NULL), hdrs);
}

/* Runs authentication and the rate limit; sends the 401/403/429 and
 * returns false when one refuses. */
static bool
authenticate(struct ph_req *r)
{
	char msg[512] = "";
	const struct ph_header *hdrs = NULL;
	enum ph_err e;
	if (r->batch != NULL)
		return true; /* the batch as a whole was authenticated (serve_batch) */
	e = ph_auth_check(r, msg, sizeof msg, &hdrs);
	if (e == PH_OK)
		return rate_ok(r);
	send_refusal(r, e, msg, hdrs);
	return false;
}

/* The auth_scopes of the item a call names (tools/call, prompts/get,
 * resources/read and subscribe: a resource, else the template serving the
 * URI), when the principal may see it; NULL for anything else, so what is
 * hidden stays "unknown". */
static const struct ph_auth_scopes *
item_scopes(struct ph_req *r)
{
	const struct ph_registry *reg = r->srv->conf->registry;
	const char *name = ph_jstr(r->params, "name"), *uri = ph_jstr(r->params, "uri");
	if (reg == NULL)
		return NULL;
	if (strcmp(r->method, "tools/call") == 0 && name != NULL) {
		const struct ph_tool *t = ph_registry_tool(reg, name);
		return t && ph_access_allowed(r, PH_KIND_TOOL, name) ? &t->auth_scopes : NULL;
	}
	if (strcmp(r->method, "prompts/get") == 0 && name != NULL) {
		const struct ph_prompt *p = ph_registry_prompt(reg, name);
		return p && ph_access_allowed(r, PH_KIND_PROMPT, name) ? &p->auth_scopes : NULL;
	}
	if (strncmp(r->method, "resources/", 10) != 0 || uri == NULL)
		return NULL;
	if (ph_registry_resource(reg, uri) != NULL) {
		const struct ph_resource *res = ph_registry_resource(reg, uri);
		return ph_access_allowed(r, PH_KIND_RESOURCE, res->uri) ? &res->auth_scopes : NULL;
	}
	for (size_t i = 0; i < reg->ntemplates; i++) {
		const struct ph_template *t = reg->templates[i];
		char *vals[PH_URITEMPLATE_MAX_VARS];
		if (!ph_uritemplate_match(t->ut, uri, vals))
			continue;
		ph_uritemplate_vals_free(t->ut, vals);
		if (ph_access_allowed(r, PH_KIND_RESOURCE, t->uri_template))
			return &t->auth_scopes;
	}
	return NULL;
}

/* auth.mode oauth: a call of an item whose auth_scopes the token lacks is
 * 403 insufficient_scope naming every scope it needs; the item stays
 * listed. Returns false after sending it. */
static bool
item_scopes_ok(struct ph_req *r)
{
	const struct ph_auth_scopes *need;
	const struct ph_header *hdrs = NULL;
	char msg[512] = "";
	if (r->scopes == NULL || r->params == NULL || (need = item_scopes(r)) == NULL || need->n == 0 ||
	    ph_auth_scopes_ok(r, need->v, need->n, msg, sizeof msg, &hdrs))
		return true;
	/* the log line names the item refused, as it names the one served */
	r->target = ph_jstr(r->params, "name") ? ph_jstr(r->params, "name") : ph_jstr(r->params, "uri");
	send_refusal(r, PH_E_FORBIDDEN, msg, hdrs);
	return false;
}

/* Step 3: the era of the request. A modern envelope (_meta with the
 * protocol version, or a modern MCP-Protocol-Version header) is 2026-07-28,
 * anything else 2025-11-25. */
static void
choose_era(struct ph_req *r, const struct meta_view *mv)
{
	const char *hdr_version = r->hdr_version;
	r->legacy = true;
	if (mv->version != NULL) {
		r->legacy = false;
	} else if (hdr_version != NULL) {
		size_t n;
		const char *t = ph_trim(hdr_version, &n);
		char v[32];
		snprintf(v, sizeof v, "%.*s", (int)(n < 31 ? n : 31), t);
		if (is_modern_version(v) || (looks_like_version(v) && strcmp(v, PH_MODERN_VERSION) > 0))
			r->legacy = false;
	}
	if (r->legacy && strcmp(r->method, "initialize") != 0 && mv->caps != NULL)
		r->legacy = false; /* a modern envelope without its version: step 4 reports it */
	if (r->batch != NULL)
		r->legacy = true; /* only a legacy batch gets this far (batch_allowed) */
}

/* The Mcp-Session-Id of a 2025-11-25 request over HTTP (not initialize,
 * which starts a new one): opened into r->session, whose capabilities
 * become the request's client capabilities. A request without one is
 * served statelessly. Returns false after sending 404. */
static bool
legacy_session(struct ph_req *r)
{
	const char *tok;
	char msg[256];
	if (!r->ex->http && r->batch == NULL && strcmp(r->method, "initialize") != 0)
		r->client_caps = ph_park_stdio_caps(); /* NULL before an initialize */
	if (!r->ex->http || r->batch != NULL || strcmp(r->method, "initialize") == 0 ||
	    (tok = param(r, "HTTP_MCP_SESSION_ID")) == NULL)
		return true;
	if ((r->session = ph_session_open(r, tok, msg, sizeof msg)) == NULL) {
		send_error(r, PH_E_SESSION, msg, NULL);
		return false;
	}
	r->client_caps = ph_jget(r->session, "c");
	return true;
}

/* DELETE with Mcp-Session-Id: authenticated, the session opened as for any
 * request (404 when it does not), then ended on this host: 204. */
static void
end_session(struct ph_req *r)
{
	char msg[256];
	enum ph_err e;
	r->legacy = true;
	r->method = "DELETE";
	if (!authenticate(r) || !legacy_session(r))
		return;
	e = ph_session_end(r, msg, sizeof msg);
	if (e != PH_OK) {
		send_error(r, e, msg, NULL);
		return;
	}
	ph_log("info", "session %.8s... ended by DELETE", ph_jstr(r->session, "sid"));
	respond(r, 204, NULL, NULL, NULL, 0);
}

/* GET with Mcp-Session-Id and Accept: text/event-stream: authenticated,
 * the session opened as for any request (404 when it does not), then its
 * stream: the SSE head is written here and the connection handed to the
 * hub, which holds it with the session's state (Last-Event-ID names the
 * last event the client saw). 405 where there is no hub, 503 when the
 * hub holds sessions.max_state sessions already or the streams are at
 * subscriptions.max_streams. */
static void
session_stream(struct ph_req *r)
{
	struct json_object *d;
	const char *last = param(r, "HTTP_LAST_EVENT_ID"), *text;
	char msg[400];
	enum ph_err e;
	size_t len;
	bool done;
	r->legacy = true;
	r->method = "GET";
	if (!authenticate(r) || !legacy_session(r))
		return;
	if (!ph_session_has_state(r)) {
		send_error(r, PH_E_HTTP_METHOD, "Method not allowed: a session's GET stream needs the hub "
			   "(it runs only under a master)", NULL);
		return;
	}
	if ((e = ph_session_tell(r, PH_HUBMSG_SESSION_OPEN, NULL, msg, sizeof msg)) != PH_OK) {
		send_error(r, e == PH_E_HANDLER ? PH_E_BUSY : e, msg, NULL);
		return;
	}
	if (!ph_shared_listener_enter(ph_subscriptions_max(r->srv->conf))) {
		snprintf(msg, sizeof msg, "Too many open streams (subscriptions.max_streams is %lld)",
			 ph_subscriptions_max(r->srv->conf));
		send_error(r, PH_E_BUSY, msg, NULL);
		return;
	}
	if (ph_req_stream(r) != 0) {
		ph_shared_listener_leave();
		r->status = 499;
		return;
	}
	r->status = 200;
	d = ph_hubmsg_get(r, last);
	text = ph_json_text(d, &len);
	done = r->ex->ops->handoff(r->ex, text, len) == 0;
	json_object_put(d);
	if (done) {
		ph_shared_listener_give();
		r->detached = true;
	} else {
		/* the head is out: the stream ends empty, the client opens another */
		ph_shared_listener_leave();
	}
}

/* Sends -32601 for the request's method. */
static void
send_no_method(struct ph_req *r)
{
	char msg[512];
	snprintf(msg, sizeof msg, "Method not found: %s", r->method);
	send_error(r, PH_E_NO_METHOD, msg, NULL);
}

/* Steps 4-8 of a 2026-07-28 request: _meta, authentication, the routing
 * headers, the version and the method. Returns the method, or NULL after
 * sending the error. */
static const struct method *
modern_steps(struct ph_req *r, const struct meta_view *mv)
{
	char msg[512];
	const struct method *m;
	if (!check_meta(r, mv, msg, sizeof msg)) {
		send_error(r, PH_E_ENVELOPE, msg, NULL);
		return NULL;
	}
	m = find_method(r->method, false, r->srv);
	if (!authenticate(r))
		return NULL;
	/* step 5: present headers must match */
	if (r->ex->http && !check_headers(r, NULL, false, msg, sizeof msg)) {
		send_error(r, PH_E_HEADER, msg, NULL);
		return NULL;
	}
	/* step 6 */
	if (!is_modern_version(r->version)) {
		struct json_object *d = json_object_new_object();
		ph_jset(d, "supported",
				       version_list(modern_versions, PH_ARRAY_LEN(modern_versions)));
		ph_jset(d, "requested", json_object_new_string(r->version));
		send_error(r, PH_E_VERSION, "Unsupported protocol version", d);
		return NULL;
	}
	/* step 7 */
	if (r->ex->http && !check_headers(r, m, true, msg, sizeof msg)) {
		send_error(r, PH_E_HEADER, msg, NULL);
		return NULL;
	}
	/* step 8 */
	if (m == NULL)
		send_no_method(r);
	return m;
}

/* A 2025-11-25 request: authentication, the method and params. Returns the
 * method, or NULL after sending the error. */
static const struct method *
legacy_steps(struct ph_req *r, const struct meta_view *mv)
{
	const struct method *m;
	if (!authenticate(r) || !legacy_session(r))
		return NULL;
	m = find_method(r->method, true, r->srv);
	if (m == NULL) {
		send_no_method(r);
		return NULL;
	}
	if (r->params != NULL && !json_object_is_type(r->params, json_type_object)) {
		send_error(r, PH_E_PARAMS, "Invalid params: params must be an object", NULL);
		return NULL;
	}
	if (mv->progress && valid_id(mv->progress))
		r->progress_token = mv->progress;
	/* A 2025 client sets its level with logging/setLevel on a session (the
	 * hub keeps it, ph_session_open read it; over stdio the process);
	 * without one every level is sent, as to a session that never called
	 * setLevel. */
	r->log_level = r->ex->http ? ph_session_level(r->session) : ph_subscriptions_stdio_log_level();
	return m;
}

static bool
all_hex(const char *s, size_t n)
{
	bool nonzero = false;
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
		if (s[i] != '0')
			nonzero = true;
	}
	return nonzero;
}

/* Splits a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>") into the
 * request's trace and parent span, makes this request's span id and the
 * traceparent handlers continue from. An invalid one is ignored. */
static void
parse_traceparent(struct ph_req *r, const char *tp)
{
	unsigned char rnd[8];
	if (tp == NULL || strlen(tp) < 55 || (tp[55] != '\0' && tp[55] != '-') || tp[2] != '-' ||
	    tp[35] != '-' || tp[52] != '-' || !isxdigit((unsigned char)tp[0]) ||
	    !isxdigit((unsigned char)tp[1]) || strncmp(tp, "ff", 2) == 0 ||
	    !all_hex(tp + 3, 32) || !all_hex(tp + 36, 16) || !isxdigit((unsigned char)tp[53]) ||
	    !isxdigit((unsigned char)tp[54]))
		return;
	memcpy(r->trace_id, tp + 3, 32);
	r->trace_id[32] = '\0';
	memcpy(r->parent_span_id, tp + 36, 16);
	r->parent_span_id[16] = '\0';
	do
		randombytes_buf(rnd, sizeof rnd);
	while (!all_hex(sodium_bin2hex(r->span_id, sizeof r->span_id, rnd, sizeof rnd), 16));
	snprintf(r->child_traceparent, sizeof r->child_traceparent, "00-%s-%s-%.2s", r->trace_id,
		 r->span_id, tp + 53);
}

/* W3C trace context from _meta, else the traceparent header. */
static void
read_trace(struct ph_req *r, const struct meta_view *mv)
{
	if (json_object_is_type(mv->traceparent, json_type_string))
		r->traceparent = json_object_get_string(mv->traceparent);
	if (json_object_is_type(mv->tracestate, json_type_string))
		r->tracestate = json_object_get_string(mv->tracestate);
	if (json_object_is_type(mv->baggage, json_type_string))
		r->baggage = json_object_get_string(mv->baggage);
	if (r->traceparent == NULL && r->ex->http)
		r->traceparent = param(r, "HTTP_TRACEPARENT");
	if (r->tracestate == NULL && r->ex->http)
		r->tracestate = param(r, "HTTP_TRACESTATE");
	if (r->baggage == NULL && r->ex->http)
		r->baggage = param(r, "HTTP_BAGGAGE");
	parse_traceparent(r, r->traceparent);
}

static void
outcome_free(struct ph_outcome *o)
{
	json_object_put(o->result);
	free(o->message);
	json_object_put(o->data);
}

static void fail_waiting(struct ph_req *r, const struct method *m, const char *why);
static void dispatch_outcome(struct ph_req *r, const struct method *m, struct ph_outcome *op);

/* Runs the method's handler (steps 9-11 happen there: it knows its
 * capabilities and schema; a retry of a multi-round request first opens its
 * requestState) and sends what it returns, unless the client has gone or
 * the handler answers later itself. */
static void
dispatch(struct ph_req *r, const struct method *m)
{
	struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
	struct json_object *answers = NULL;
	if (!(m->flags & M_MRTR) || ph_mrtr_begin(r, (m->flags & M_NAME) ? "name" : "uri", &o))
		m->fn(r, &o);
	while (r->park != NULL && !r->ex->cancelled && !r->ex->http) {
		/* stdio: the client is asked on stdout and answers on stdin while
		 * the call waits; the handler is then called again with state and
		 * inputResponses, as a parked call resumed over HTTP */
		char why[320];
		outcome_free(&o);
		memset(&o, 0, sizeof o);
		r->input_responses = NULL; /* the last round's, about to go */
		json_object_put(answers);
		if (!ph_park_stdio(r, &answers, why, sizeof why)) {
			json_object_put(r->park);
			r->park = NULL;
			if (!r->ex->cancelled)
				fail_waiting(r, m, why);
			else
				r->status = 499;
			return;
		}
		ph_mrtr_end(r);
		r->mrtr_state = json_object_get(ph_jget(r->park, "state"));
		r->input_responses = answers;
		r->resumed = true;
		json_object_put(r->park);
		r->park = NULL;
		m->fn(r, &o);
	}
	/* (the outcome may hold parts of the answers: sent before they go) */
	dispatch_outcome(r, m, &o);
	if (answers != NULL) {
		r->input_responses = NULL;
		json_object_put(answers);
	}
}

/* The end of a call that waited for the stdio client's answers in vain:
 * why as a tool's error result (tools/call), else as error -32603, as the
 * hub ends a parked call. */
static void
fail_waiting(struct ph_req *r, const struct method *m, const char *why)
{
	if (strcmp(r->method, "tools/call") == 0) {
		finish_result(r, m, ph_tool_error_result(why));
		return;
	}
	send_error(r, PH_E_HANDLER, why, NULL);
}

/* Sends what the handler answered (o, freed), or parks the call. */
static void
dispatch_outcome(struct ph_req *r, const struct method *m, struct ph_outcome *op)
{
	struct ph_outcome o = *op;
	if (r->park != NULL && !r->ex->cancelled) {
		/* a legacy session's client is asked mid-call (ph_park.c) */
		char why[256];
		outcome_free(&o);
		if (ph_park_call(r, why, sizeof why))
			r->status = 200;
		else
			send_error(r, PH_E_HANDLER, why, NULL);
		return;
	}
	if (r->ex->cancelled) {
		/* the client is gone: nothing more may be sent for this request */
		outcome_free(&o);
		r->status = 499;
	} else if (r->detached) {
		outcome_free(&o);
	} else if (o.result != NULL) {
		finish_result(r, m, o.result);
	} else {
		send_error(r, o.err ? o.err : PH_E_INTERNAL, o.message, o.data);
		free(o.message);
	}
}

/* A call the hub handed back with the client's answers (pr, its members
 * taken), resumed on its connection as the retry of a multi-round request:
 * the handler gets state and inputResponses as under 2026-07-28; what it
 * answers (a result, an error, the next round) goes out on the parked
 * stream. top is the request that brought the last answer: same session,
 * same principal (the hub checked), so its authentication is reused. */
static void
resume_parked(struct ph_req *top, struct ph_park_resume *pr)
{
	struct ph_req r;
	const struct method *m;
	struct json_object *tok;
	memset(&r, 0, sizeof r);
	r.srv = top->srv;
	r.ex = ph_rawfcgi_new(pr->fd, pr->rid);
	r.t0 = ph_now_us();
	r.log_level = ph_session_level(top->session);
	r.last_progress = -1;
	r.legacy = true;
	r.streaming = true; /* the stream's headers went out in the first round */
	r.principal = top->principal;
	r.assigns = top->assigns;
	r.access = top->access;
	r.restricted = top->restricted;
	r.msg = pr->msg;
	r.id = ph_jget(r.msg, "id");
	r.method = ph_jstr(r.msg, "method");
	r.params = ph_jget(r.msg, "params");
	r.session = json_object_get(top->session);
	r.client_caps = ph_jget(r.session, "c");
	r.mrtr_state = pr->state;
	r.input_responses = pr->answers;
	r.resumed = true;
	if ((tok = ph_jget(ph_jget(r.params, "_meta"), "progressToken")) && valid_id(tok))
		r.progress_token = tok;
	m = r.method ? find_method(r.method, true, r.srv) : NULL;
	if (m == NULL || r.id == NULL)
		send_error(&r, PH_E_INTERNAL, "Internal error: the parked call cannot be resumed", NULL);
	else
		dispatch(&r, m);
	ph_log_request(&r, r.method ? r.method : "-");
	ph_rawfcgi_end(r.ex);
	ph_mrtr_end(&r);
	json_object_put(r.park);
	json_object_put(r.session);
	json_object_put(r.msg);
	json_object_put(pr->answers);
}

/* A JSON-RPC response POSTed on a legacy session: the client's answer to a
 * request the server pushed mid-call. Authenticated and its session opened
 * like any request, then given to the hub: 202, or 400 -32600 naming why
 * it is refused (no call waits for this id, another session's, answered
 * twice). The answer that completes a round resumes the call here. */
static void
serve_response(struct ph_req *r)
{
	struct ph_park_resume pr;
	char why[320];
	int rc;
	r->legacy = true;
	r->method = "(response)";
	r->id = NULL; /* a refusal answers no request */
	if (!authenticate(r) || !legacy_session(r))
		return;
	rc = ph_park_answer(r, &pr, why, sizeof why);
	if (rc < 0) {
		send_error(r, rc == -2 ? PH_E_TOO_LARGE : strncmp(why, "Internal", 8) == 0 ? PH_E_INTERNAL
			   : PH_E_INVALID_REQUEST, why, NULL);
		return;
	}
	send_accepted(r);
	if (rc > 0)
		resume_parked(r, &pr);
}

/* Steps 3-11 for a well-formed JSON-RPC message. */
static void
ladder(struct ph_req *r)
{
	struct meta_view mv;
	const struct method *m;
	view_meta(ph_jget(r->params, "_meta"), &mv);
	choose_era(r, &mv);
	read_trace(r, &mv);
	if (r->id == NULL) {
		/* a notification from someone unauthenticated is refused too,
		 * and one on a session that is gone */
		if (authenticate(r) && (!r->legacy || legacy_session(r)))
			handle_notification(r);
		return;
	}
	m = r->legacy ? legacy_steps(r, &mv) : modern_steps(r, &mv);
	if (m == NULL || !item_scopes_ok(r))
		return;
	dispatch(r, m);
}

/* Step 1 over HTTP (the HTTP rules and the body), or the stdio line.
 * Returns true with the body in *body (*own, when set, caller frees), false
 * after sending the response (an error, or the metadata document). */
static bool
take_body(struct ph_req *r, const char **body, size_t *blen, char **own)
{
	struct ph_exchange *ex = r->ex;
	if (ex->http) {
		const char *doc = NULL;
		enum route route = R_MCP;
		enum ph_err e = http_rules(r, body, blen, own, &route, &doc);
		if (e != PH_OK) {
			send_error(r, e, preflight_hint(r, e), NULL);
			return false;
		}
		r->counted = route == R_MCP;
		switch (route) {
		case R_MCP:
			return true;
		case R_METADATA:
			send_metadata(r, doc);
			break;
		case R_PREFLIGHT:
			send_preflight(r);
			break;
		case R_HEALTH:
			send_health(r);
			break;
		case R_METRICS:
			send_metrics(r);
			break;
		case R_SESSION_END:
			end_session(r);
			break;
		case R_SESSION_GET:
			session_stream(r);
			break;
		}
		return false;
	}
	if (ex->too_large) {
		send_error(r, PH_E_TOO_LARGE, NULL, NULL);
		return false;
	}
	*body = *own = ph_xstrndup(ex->body, ex->body_len);
	*blen = ex->body_len;
	return true;
}

/* The params members that name what a request acts on: the features read
 * them as C strings, so one holding U+0000 would be served as its prefix. */
static const char *const name_paths[][2] = {
	{"name", NULL}, {"uri", NULL}, {"cursor", NULL},
	{"ref", "name"}, {"ref", "uri"}, {"argument", "name"},
};

/* Returns true when no name in r->params holds U+0000, else false after
 * sending -32602 for the first of name_paths that does. One pass over the
 * members. */
static bool
names_nul_free(struct ph_req *r)
{
	unsigned bad = 0;
	if (!json_object_is_type(r->params, json_type_object))
		return true;
	json_object_object_foreach(r->params, k, v) {
		for (size_t i = 0; i < PH_ARRAY_LEN(name_paths); i++) {
			if (k[0] != name_paths[i][0][0] || strcmp(k, name_paths[i][0]) != 0)
				continue;
			if (ph_jstr_nul(name_paths[i][1] ? ph_jget(v, name_paths[i][1]) : v))
				bad |= 1u << i;
		}
	}
	for (size_t i = 0; bad != 0 && i < PH_ARRAY_LEN(name_paths); i++) {
		char msg[96];
		if (!(bad & 1u << i))
			continue;
		snprintf(msg, sizeof msg, "Invalid params: %s%s%s contains U+0000", name_paths[i][0],
			 name_paths[i][1] ? "." : "", name_paths[i][1] ? name_paths[i][1] : "");
		send_error(r, PH_E_PARAMS, msg, NULL);
		return false;
	}
	return true;
}

/* Step 2 for one message (r->msg, owned by r): one JSON-RPC request or
 * notification; sets r->id, r->method and r->params. Returns false after
 * sending the error. The members are looked at in one pass (a JSON null is
 * as good as absent, but for id). */
static bool
check_envelope(struct ph_req *r)
{
	/* the members looked at, by slot: id, method, jsonrpc, params, an answer's */
	static const struct {
		const char *name;
		int slot;
	} members[] = {{"id", 0}, {"method", 1}, {"jsonrpc", 2}, {"params", 3}, {"result", 4}, {"error", 4}};
	struct json_object *slot[4] = {NULL, NULL, NULL, NULL}, *id, *method, *jsonrpc, *params;
	bool has_id = false, answer = false;
	if (!json_object_is_type(r->msg, json_type_object)) {
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object", NULL);
		return false;
	}
	json_object_object_foreach(r->msg, k, v) {
		for (size_t i = 0; i < PH_ARRAY_LEN(members); i++) {
			if (k[0] != members[i].name[0] || strcmp(k, members[i].name) != 0)
				continue;
			if (members[i].slot == 4)
				answer |= v != NULL;
			else
				slot[members[i].slot] = v;
			has_id |= members[i].slot == 0;
			break;
		}
	}
	id = slot[0];
	method = slot[1];
	jsonrpc = slot[2];
	params = slot[3];
	if (id != NULL && valid_id(id))
		r->id = id;
	if (method == NULL && answer) {
		if (r->ex->http && r->batch == NULL && param(r, "HTTP_MCP_SESSION_ID") != NULL) {
			serve_response(r);
			return false;
		}
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: a server does not accept responses",
			   NULL);
		return false;
	}
	if (jsonrpc == NULL || !json_object_is_type(jsonrpc, json_type_string) ||
	    strcmp(json_object_get_string(jsonrpc), "2.0") != 0) {
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"", NULL);
		return false;
	}
	if (method == NULL || !json_object_is_type(method, json_type_string)) {
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: method must be a string", NULL);
		return false;
	}
	if (ph_jstr_nul(method)) {
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: method contains U+0000", NULL);
		return false;
	}
	r->method = json_object_get_string(method);
	if (has_id && !valid_id(id)) {
		r->id = NULL;
		send_error(r, PH_E_INVALID_REQUEST,
			   "Invalid Request: id must be a string or an integer", NULL);
		return false;
	}
	r->params = params;
	return names_nul_free(r);
}

/* ---- legacy batches (2025-03-26, 2024-11-05) ------------------------------ */

/* The revisions whose transport has JSON-RPC batches; 2025-06-18 removed them. */
static bool
batch_version(const char *v)
{
	return strcmp(v, "2025-03-26") == 0 || strcmp(v, "2024-11-05") == 0;
}

/* True when this batch (r->msg, an array) comes from a client whose
 * negotiated version has batches. A request carries no session here, so
 * the version is, in order: the MCP-Protocol-Version header (every client
 * of 2025-06-18 and later sends it after initialize); else the
 * protocolVersion of an initialize in the batch; else 2025-03-26, the
 * transport's rule for a request without the header (stdio has no headers,
 * and a client of a later revision never sends a batch). A batch holding a
 * 2026-07-28 request (its _meta names a version) is never one. */
static bool
batch_allowed(struct ph_req *r)
{
	const char *hv = r->hdr_version;
	const char *init = NULL;
	size_t n = json_object_array_length(r->msg);
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(r->msg, i);
		struct json_object *p = ph_jget(e, "params");
		const char *m = ph_jstr(e, "method");
		if (ph_jget(ph_jget(p, "_meta"), META_VERSION) != NULL)
			return false;
		if (m != NULL && strcmp(m, "initialize") == 0 && ph_jstr(p, "protocolVersion") != NULL)
			init = ph_jstr(p, "protocolVersion");
	}
	if (hv != NULL) {
		size_t tl;
		const char *t = ph_trim(hv, &tl);
		char v[32];
		snprintf(v, sizeof v, "%.*s", (int)(tl < 31 ? tl : 31), t);
		return batch_version(v);
	}
	return batch_version(init ? init : "2025-03-26");
}

/* One message of a batch, as its own request: same ladder, its response
 * appended to out. The batch's authentication (top) is shared. */
static void
serve_batch_entry(struct ph_req *top, struct json_object *msg, struct json_object *out)
{
	struct ph_req r;
	memset(&r, 0, sizeof r);
	r.srv = top->srv;
	r.ex = top->ex;
	r.t0 = ph_now_us();
	r.log_level = PH_LOG_NONE;
	r.last_progress = -1;
	r.legacy = true;
	r.batch = out;
	r.principal = top->principal;
	r.assigns = top->assigns;
	r.access = top->access;
	r.restricted = top->restricted;
	r.hdr_version = top->hdr_version;
	r.hdr_method = top->hdr_method;
	r.msg = json_object_get(msg);
	if (check_envelope(&r))
		ladder(&r);
	ph_log_request(&r, r.method ? r.method : "-");
	ph_mrtr_end(&r);
	json_object_put(r.msg);
}

/* A JSON array body (r->msg): -32600 unless the client's version has
 * batches (batch_allowed); else authenticated once, then each message in
 * order, answered with one array of the responses, or 202 when every
 * message was a notification. */
static void
serve_batch(struct ph_req *r)
{
	size_t n = json_object_array_length(r->msg);
	long long max = r->srv->conf->limits.batch_max;
	struct json_object *out;
	r->method = "batch";
	if (n == 0) {
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: an empty batch", NULL);
		return;
	}
	if (!batch_allowed(r)) {
		send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: batches are not supported "
			   "after protocol version 2025-03-26", NULL);
		return;
	}
	r->legacy = true;
	if ((long long)n > max) {
		char msg[128];
		snprintf(msg, sizeof msg, "Invalid Request: a batch holds at most %lld messages", max);
		send_error(r, PH_E_INVALID_REQUEST, msg, NULL);
		return;
	}
	if (!authenticate(r))
		return;
	out = json_object_new_array();
	for (size_t i = 0; i < n && !r->ex->cancelled; i++)
		serve_batch_entry(r, json_object_array_get_idx(r->msg, i), out);
	if (r->ex->cancelled) {
		r->status = 499;
	} else if (json_object_array_length(out) == 0) {
		send_accepted(r);
	} else {
		size_t len;
		const char *s = ph_json_text(out, &len);
		respond(r, 200, "application/json", NULL, s, len);
	}
	json_object_put(out);
}

/* An object key holding U+0000 anywhere in the body: json-c has cut it at
 * the NUL, so what the handler would see is not what was sent. Refused
 * with -32602 (and the message's id when it has one). */
static void
refuse_key_nul(struct ph_req *r)
{
	struct json_object *id = ph_jget(r->msg, "id");
	if (id != NULL && valid_id(id))
		r->id = id;
	send_error(r, PH_E_PARAMS, "Invalid params: an object key contains U+0000", NULL);
}

/* Step 2: the body is JSON (r->msg, owned by r): a batch, or one message
 * (check_envelope), served; errors are sent. */
static void
serve_body(struct ph_req *r, const char *body, size_t blen)
{
	/* a client sends the same params._meta (version, capabilities, info)
	 * with every request: the last one read is kept for the next */
	static struct ph_json_memo meta_memo = {.key = "_meta", .level = 2};
	bool key_nul;
	/* the parser checks UTF-8 (RFC 3629) as it goes; a body it refuses is
	 * looked at again to say which of the two it is not */
	if (!ph_json_parse_memo(body, blen, (int)r->srv->conf->limits.json_depth, &r->msg, &key_nul,
				&meta_memo)) {
		send_error(r, PH_E_PARSE,
			   ph_utf8_valid(body, blen) ? "Parse error: the body is not valid JSON"
						     : "Parse error: the body is not valid UTF-8",
			   NULL);
		return;
	}
	if (key_nul) {
		refuse_key_nul(r);
		return;
	}
	if (json_object_is_type(r->msg, json_type_array)) {
		serve_batch(r);
		return;
	}
	if (check_envelope(r))
		ladder(r);
}

void
ph_serve(struct ph_server *srv, struct ph_exchange *ex)
{
	struct ph_req r;
	const char *body = NULL;
	char *own = NULL;
	size_t blen = 0;

	memset(&r, 0, sizeof r);
	r.srv = srv;
	r.ex = ex;
	r.t0 = ph_now_us();
	r.log_level = PH_LOG_NONE;
	r.last_progress = -1;
	r.legacy = false;
	r.counted = true;
	if (take_body(&r, &body, &blen, &own))
		serve_body(&r, body, blen);
	ph_log_request(&r, r.method ? r.method : "-");
	/* what an MCP client sent, not the health checks and scrapes */
	if (r.counted && r.ex->http)
		ph_metrics_request(r.method, r.status, (int64_t)(ph_now_us() - r.t0));
	ph_auth_end(&r);
	ph_mrtr_end(&r);
	json_object_put(r.session);
	free(r.session_issued);
	json_object_put(r.park);
	json_object_put(r.msg);
	free(own);
}

void
ph_serve_unconfigured(struct ph_exchange *ex)
{
	struct ph_req r;
	memset(&r, 0, sizeof r);
	r.ex = ex;
	r.t0 = ph_now_us();
	send_error(&r, PH_E_UNCONFIGURED, NULL, NULL);
	ph_log("error", "answered %d: the configuration did not load (check with phantom-fcgi -t)",
	       r.status);
}

void
ph_serve_refused(struct ph_exchange *ex, enum ph_err e)
{
	struct ph_req r;
	memset(&r, 0, sizeof r);
	r.ex = ex;
	r.t0 = ph_now_us();
	send_error(&r, e, NULL, NULL);
	ph_log("warning", "answered %d: %s", r.status, ph_err_message(e));
}
