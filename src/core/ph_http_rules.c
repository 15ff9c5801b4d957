/* ph_http_rules.c: step 1 of the validation ladder (mcp-wire §6.7): the
 * HTTP rules of an MCP POST (method, Origin and Host against DNS
 * rebinding, Content-Type, the body and its length) and the requests that
 * are not one: the OAuth metadata document, health, metrics, a CORS
 * preflight, and a legacy session's DELETE and GET (ph_session_routes.c).
 * Over stdio the line is the body. */
#include "first.h"
#include "ph_core_int.h"
#include "ph_auth.h"
#include "ph_cidr.h"
#include "ph_metrics.h"
#include "ph_util.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The OAuth protected-resource metadata (GET auth.metadata.path); to HEAD
 * the same head, without the document (RFC 9110 §9.3.2, RFC 3875 §4.3.2). */
static void
send_metadata(struct ph_req *r, const char *doc)
{
	static const struct ph_header hdrs[] = {
		/* public by design: browser-based clients fetch it cross-origin */
		{"Access-Control-Allow-Origin", "*"}, {"Cache-Control", "max-age=3600"}, {NULL, NULL}};
	const char *m = ph_param(r, "REQUEST_METHOD");
	ph_respond(r, 200, "application/json", hdrs, m && strcmp(m, "HEAD") == 0 ? NULL : doc, strlen(doc));
}

/* 405 to any other method on auth.metadata.path (an MCP POST sent there
 * too): the path is the document's alone, and Allow says so. */
static void
send_metadata_405(struct ph_req *r)
{
	static const struct ph_header allow[] = {{"Allow", "GET, HEAD"}, {NULL, NULL}};
	int code = ph_err_rpc_code(PH_E_HTTP_METHOD, r->legacy);
	r->resp.rpc_code = code;
	ph_send_final(r, 405, ph_rpc_error(NULL, code, "Method not allowed: this path (auth.metadata.path) "
					   "serves the protected-resource metadata document to GET and HEAD; "
					   "MCP requests are POSTed to the endpoint", NULL), allow);
}

/* What a request that is not an MCP POST asks for. */
enum route { R_MCP, R_METADATA, R_METADATA_405, R_PREFLIGHT, R_HEALTH, R_METRICS, R_SESSION_END,
	     R_SESSION_GET };

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

/* The request's path as its target in the log (r->path): what a client
 * probed (a well-known document, a health check) also when it gets 405. */
static void
path_target(struct ph_req *r)
{
	const char *uri = ph_param(r, "REQUEST_URI");
	size_t n;
	if (uri == NULL || (n = strcspn(uri, "?#")) == 0)
		return;
	if (n >= sizeof r->path)
		n = sizeof r->path - 1;
	memcpy(r->path, uri, n);
	r->path[n] = '\0';
	r->target = r->path;
}

/* The routes that are not an MCP POST: health and metrics (GET), a CORS
 * preflight (OPTIONS). Returns PH_OK with *route, or the error to send. */
static enum ph_err
other_route(struct ph_req *r, const char *m, const char *origin, enum route *route)
{
	const struct ph_config *c = r->srv->conf;
	path_target(r);
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
	/* auth.metadata.path is the document's alone: GET and HEAD get it, a
	 * CORS preflight is answered as on any path, and anything else (an MCP
	 * POST, a session's GET or DELETE sent there) gets 405 */
	if ((*doc = ph_auth_metadata(r)) != NULL &&
	    !(m != NULL && strcmp(m, "OPTIONS") == 0 && cors_on(c) && origin != NULL && *origin)) {
		*route = m != NULL && (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) ? R_METADATA
											 : R_METADATA_405;
		return PH_OK;
	}
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
		return other_route(r, m, origin, route);
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

/* Step 1 over HTTP (the HTTP rules and the body), or the stdio line.
 * Returns true with the body in *body (*own, when set, caller frees), false
 * after sending the response (an error, or the metadata document). */
bool
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
		case R_METADATA_405:
			send_metadata_405(r);
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
