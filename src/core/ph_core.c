/* ph_core.c: one exchange from bytes to response. The HTTP rules, the
 * JSON-RPC envelope, era selection and the validation ladder of mcp-wire
 * §6.7, dispatch to the method table, result normalisation and the writer
 * (JSON, or SSE once a notification precedes the result). */
#include "first.h"
#include "ph_core.h"
#include "ph_core_int.h"
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

/* The OAuth protected-resource metadata (GET auth.metadata.path). */
static void
send_metadata(struct ph_req *r, const char *doc)
{
	static const struct ph_header hdrs[] = {
		/* public by design: browser-based clients fetch it cross-origin */
		{"Access-Control-Allow-Origin", "*"}, {"Cache-Control", "max-age=3600"}, {NULL, NULL}};
	ph_respond(r, 200, "application/json", hdrs, doc, strlen(doc));
}

/* ---- HTTP rules (mcp-wire §6.7 step 1) ---------------------------------- */

/* What a request that is not an MCP POST asks for. */
enum route { R_MCP, R_METADATA, R_PREFLIGHT, R_HEALTH, R_METRICS, R_SESSION_END, R_SESSION_GET };

/* True when the request's path (REQUEST_URI without the query) is path. */
static bool
path_is(struct ph_req *r, const char *path)
{
	const char *uri = ph_param(r, "REQUEST_URI");
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
	const char *asked = ph_param(r, "HTTP_ACCESS_CONTROL_REQUEST_HEADERS");
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
		ph_respond(r, 204, NULL, hdrs, NULL, 0);
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
	ph_respond(r, stopping ? 503 : 200, "application/json", hdrs, s, len);
	json_object_put(o);
}

/* True when REMOTE_ADDR is inside one of http.metrics.allow. */
static bool
metrics_client_allowed(struct ph_req *r)
{
	const struct ph_strlist *a = &r->srv->conf->http.metrics.allow;
	const char *addr = ph_param(r, "REMOTE_ADDR");
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
		ph_respond(r, 403, "text/plain; charset=utf-8", NULL, msg, sizeof msg - 1);
		return;
	}
	ph_buf_init(&b);
	ph_metrics_render(&b);
	ph_respond(r, 200, "text/plain; version=0.0.4; charset=utf-8", NULL, b.data, b.len);
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
	const char *m = ph_param(r, "REQUEST_METHOD"), *origin = ph_param(r, "HTTP_ORIGIN");
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
	const char *m = ph_param(r, "REQUEST_METHOD");
	const char *origin = ph_param(r, "HTTP_ORIGIN");
	const char *host = ph_param(r, "HTTP_HOST");
	const char *cl = ph_param(r, "CONTENT_LENGTH");
	long long max = c->http.max_body, n = 0;
	r->hdr_method = ph_param(r, "HTTP_MCP_METHOD");

	*route = R_MCP;
	if (origin != NULL && *origin != '\0' && cors_allowed(c, origin))
		r->cors_origin = origin; /* errors too: the page can read them */
	/* DELETE with Mcp-Session-Id ends a legacy session; it passes the
	 * Origin and Host checks like a POST */
	bool end = m != NULL && strcmp(m, "DELETE") == 0 && ph_param(r, "HTTP_MCP_SESSION_ID") != NULL;
	/* GET with the header and Accept: text/event-stream opens the
	 * session's stream, unless it names the health or metrics path or
	 * says it is a 2026-07-28 request (which never sees a session) */
	const char *pv = r->hdr_version = ph_param(r, "HTTP_MCP_PROTOCOL_VERSION");
	bool get = m != NULL && strcmp(m, "GET") == 0 && ph_param(r, "HTTP_MCP_SESSION_ID") != NULL &&
		   (pv == NULL || strcmp(pv, PH_LEGACY_LATEST) <= 0) &&
		   accepts_sse(ph_param(r, "HTTP_ACCEPT")) && !(c->http.health && path_is(r, c->http.health)) &&
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
	if (!content_type_json(ph_param(r, "CONTENT_TYPE")))
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

bool
ph_valid_id(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

/* Step 1 over HTTP (the HTTP rules and the body), or the stdio line.
 * Returns true with the body in *body (*own, when set, caller frees), false
 * after sending the response (an error, or the metadata document). */
static bool
ph_take_body(struct ph_req *r, const char **body, size_t *blen, char **own)
{
	struct ph_exchange *ex = r->ex;
	if (ex->http) {
		const char *doc = NULL;
		enum route route = R_MCP;
		enum ph_err e = http_rules(r, body, blen, own, &route, &doc);
		if (e != PH_OK) {
			ph_send_error(r, e, preflight_hint(r, e), NULL);
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
			ph_serve_session_end(r);
			break;
		case R_SESSION_GET:
			ph_serve_session_stream(r);
			break;
		}
		return false;
	}
	if (ex->too_large) {
		ph_send_error(r, PH_E_TOO_LARGE, NULL, NULL);
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
		ph_send_error(r, PH_E_PARAMS, msg, NULL);
		return false;
	}
	return true;
}

/* Step 2 for one message (r->msg, owned by r): one JSON-RPC request or
 * notification; sets r->id, r->method and r->params. Returns false after
 * sending the error. The members are looked at in one pass (a JSON null is
 * as good as absent, but for id). */
static bool
ph_check_envelope(struct ph_req *r)
{
	/* the members looked at, by slot: id, method, jsonrpc, params, an answer's */
	static const struct {
		const char *name;
		int slot;
	} members[] = {{"id", 0}, {"method", 1}, {"jsonrpc", 2}, {"params", 3}, {"result", 4}, {"error", 4}};
	struct json_object *slot[4] = {NULL, NULL, NULL, NULL}, *id, *method, *jsonrpc, *params;
	bool has_id = false, answer = false;
	if (!json_object_is_type(r->msg, json_type_object)) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object", NULL);
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
	if (id != NULL && ph_valid_id(id))
		r->id = id;
	if (method == NULL && answer) {
		if (r->ex->http && r->batch == NULL && ph_param(r, "HTTP_MCP_SESSION_ID") != NULL) {
			ph_serve_response(r);
			return false;
		}
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: a server does not accept responses",
			      NULL);
		return false;
	}
	if (jsonrpc == NULL || !json_object_is_type(jsonrpc, json_type_string) ||
	    strcmp(json_object_get_string(jsonrpc), "2.0") != 0) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"", NULL);
		return false;
	}
	if (method == NULL || !json_object_is_type(method, json_type_string)) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: method must be a string", NULL);
		return false;
	}
	if (ph_jstr_nul(method)) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: method contains U+0000", NULL);
		return false;
	}
	r->method = json_object_get_string(method);
	if (has_id && !ph_valid_id(id)) {
		r->id = NULL;
		ph_send_error(r, PH_E_INVALID_REQUEST,
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
	if (ph_check_envelope(&r))
		ph_ladder(&r);
	ph_log_request(&r, r.method ? r.method : "-");
	ph_mrtr_end(&r);
	json_object_put(r.msg);
}

/* A JSON array body (r->msg): -32600 unless the client's version has
 * batches (batch_allowed); else authenticated once, then each message in
 * order, answered with one array of the responses, or 202 when every
 * message was a notification. */
static void
ph_serve_batch(struct ph_req *r)
{
	size_t n = json_object_array_length(r->msg);
	long long max = r->srv->conf->limits.batch_max;
	struct json_object *out;
	r->method = "batch";
	if (n == 0) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: an empty batch", NULL);
		return;
	}
	if (!batch_allowed(r)) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: batches are not supported "
			      "after protocol version 2025-03-26", NULL);
		return;
	}
	r->legacy = true;
	if ((long long)n > max) {
		char msg[128];
		snprintf(msg, sizeof msg, "Invalid Request: a batch holds at most %lld messages", max);
		ph_send_error(r, PH_E_INVALID_REQUEST, msg, NULL);
		return;
	}
	if (!ph_authenticate(r))
		return;
	out = json_object_new_array();
	for (size_t i = 0; i < n && !r->ex->cancelled; i++)
		serve_batch_entry(r, json_object_array_get_idx(r->msg, i), out);
	if (r->ex->cancelled) {
		r->status = 499;
	} else if (json_object_array_length(out) == 0) {
		ph_send_accepted(r);
	} else {
		size_t len;
		const char *s = ph_json_text(out, &len);
		ph_respond(r, 200, "application/json", NULL, s, len);
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
	if (id != NULL && ph_valid_id(id))
		r->id = id;
	ph_send_error(r, PH_E_PARAMS, "Invalid params: an object key contains U+0000", NULL);
}

/* Step 2: the body is JSON (r->msg, owned by r): a batch, or one message
 * (ph_check_envelope), served; errors are sent. */
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
		ph_send_error(r, PH_E_PARSE,
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
		ph_serve_batch(r);
		return;
	}
	if (ph_check_envelope(r))
		ph_ladder(r);
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
	if (ph_take_body(&r, &body, &blen, &own))
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
	ph_send_error(&r, PH_E_UNCONFIGURED, NULL, NULL);
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
	ph_send_error(&r, e, NULL, NULL);
	ph_log("warning", "answered %d: %s", r.status, ph_err_message(e));
}
