/* ph_ladder.c: steps 3 to 11 of the validation ladder (mcp-wire §6.7) for
 * a well-formed JSON-RPC message: its era, params._meta and the routing
 * headers of a 2026-07-28 request, authentication and the rate limit, a
 * 2025-11-25 request's session, the method, the scopes of the item it
 * names, and the trace context; then ph_dispatch. */
#include "first.h"
#include "ph_otel.h"
#include "ph_core_int.h"
#include "ph_auth.h"
#include "ph_features.h"
#include "ph_metrics.h"
#include "ph_park.h"
#include "ph_rate.h"
#include "ph_registry.h"
#include "ph_session.h"
#include "ph_util.h"
#include <sodium.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			if (names[i].prefixed == prefixed && strcmp(names[i].name, tail) == 0) {
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
		if (!ph_valid_id(tok)) {
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
		const char *nh = ph_param(r, "HTTP_MCP_NAME");
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
handle_notification(struct ph_req *r)
{
	/* notifications/initialized, notifications/cancelled and anything else:
	 * accepted and dropped; a front that can cancel does it before this. A
	 * cancelled that names a listen kept open on stdio ends it. */
	if (strcmp(r->method, "notifications/cancelled") == 0 && !r->ex->http)
		ph_subscriptions_cancel(ph_jget(r->params, "requestId"));
	ph_send_accepted(r);
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
	if (r->who.principal)
		key = ph_xasprintf("p:%s", r->who.principal);
	else
		key = ph_xasprintf("a:%s", (addr = ph_param(r, "REMOTE_ADDR")) ? addr : "-");
	wait = ph_rate_take(key, rc, ph_now_us());
	free(key);
	if (wait == 0)
		return true;
	ph_metrics_rate_limited();
	if (own)
		snprintf(limit, sizeof limit, "auth.allow.%s.rate", r->who.principal);
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
		r->resp.rpc_code = ph_err_rpc_code(PH_E_RATE_LIMITED, r->legacy);
		ph_send_final(r, ph_err_http_status(PH_E_RATE_LIMITED, r->legacy),
			      ph_rpc_error(r->id, r->resp.rpc_code, msg, d), hdrs);
	}
	return false;
}

/* Sends an authentication refusal e (401, 403, 503) with its message and
 * WWW-Authenticate header. */
static void
send_refusal(struct ph_req *r, enum ph_err e, const char *msg, const struct ph_header *hdrs)
{
	r->resp.rpc_code = ph_err_rpc_code(e, r->legacy);
	ph_send_final(r, r->ex->http ? ph_err_http_status(e, r->legacy) : 200,
		      ph_rpc_error(r->id, r->resp.rpc_code, msg[0] ? msg : ph_err_message(e), NULL), hdrs);
}

/* Runs authentication and the rate limit; sends the 401/403/429 and
 * returns false when one refuses. */
bool
ph_authenticate(struct ph_req *r)
{
	char msg[512] = "";
	const struct ph_header *hdrs = NULL;
	enum ph_err e;
	if (r->resp.batch != NULL)
		return true; /* the batch as a whole was authenticated (ph_serve_batch) */
	e = ph_auth_check(r, msg, sizeof msg, &hdrs);
	if (e == PH_OK)
		return rate_ok(r);
	send_refusal(r, e, msg, hdrs);
	return false;
}

/* The auth_scopes of the item a call names (tools/call, prompts/get,
 * resources/read and subscribe: a resource, else the template serving the
 * URI; skills/get and the resources/ methods of a skill:// URI: the
 * skill), when the principal may see it; NULL for anything else, so what is
 * hidden stays "unknown". */
static const struct ph_auth_scopes *
item_scopes(struct ph_req *r)
{
	const struct ph_registry *reg = r->srv->conf->registry;
	const char *name = ph_jstr(r->params, "name"), *uri = ph_jstr(r->params, "uri");
	const struct ph_resource *res;
	if (uri != NULL && strncmp(uri, "skill://", 8) == 0 &&
	    (ph_method_on_resources(r->mid) || r->mid == PH_METHOD_SKILLS_GET))
		return ph_skills_scopes(r, uri);
	if (reg == NULL)
		return NULL;
	if (r->mid == PH_METHOD_TOOLS_CALL && name != NULL) {
		const struct ph_tool *t = ph_registry_tool(reg, name);
		return t && ph_access_allowed(r, PH_KIND_TOOL, name) ? &t->auth_scopes : NULL;
	}
	if (r->mid == PH_METHOD_PROMPTS_GET && name != NULL) {
		const struct ph_prompt *p = ph_registry_prompt(reg, name);
		return p && ph_access_allowed(r, PH_KIND_PROMPT, name) ? &p->auth_scopes : NULL;
	}
	if (!ph_method_on_resources(r->mid) || uri == NULL)
		return NULL;
	if ((res = ph_registry_resource(reg, uri)) != NULL)
		return ph_access_allowed(r, PH_KIND_RESOURCE, res->uri) ? &res->auth_scopes : NULL;
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
		if (ph_is_modern_version(v) || (ph_looks_like_version(v) && strcmp(v, PH_MODERN_VERSION) > 0))
			r->legacy = false;
	}
	if (r->legacy && r->mid != PH_METHOD_INITIALIZE && mv->caps != NULL)
		r->legacy = false; /* a modern envelope without its version: step 4 reports it */
	if (r->resp.batch != NULL)
		r->legacy = true; /* only a legacy batch gets this far (ph_batch.c: batch_allowed) */
}

/* The Mcp-Session-Id of a 2025-11-25 request over HTTP (not initialize,
 * which starts a new one): opened into r->sess.session, whose capabilities
 * become the request's client capabilities. A request without one is
 * served statelessly. Returns false after sending 404. */
bool
ph_legacy_session(struct ph_req *r)
{
	const char *tok;
	char msg[256];
	if (!r->ex->http && r->resp.batch == NULL && r->mid != PH_METHOD_INITIALIZE)
		r->client_caps = ph_park_stdio_caps(); /* NULL before an initialize */
	if (!r->ex->http || r->resp.batch != NULL || r->mid == PH_METHOD_INITIALIZE ||
	    (tok = ph_param(r, "HTTP_MCP_SESSION_ID")) == NULL)
		return true;
	if ((r->sess.session = ph_session_open(r, tok, msg, sizeof msg)) == NULL) {
		ph_send_error(r, PH_E_SESSION, msg, NULL);
		return false;
	}
	r->client_caps = ph_jget(r->sess.session, "c");
	return true;
}

/* Sends -32601 for the request's method. */
static void
send_no_method(struct ph_req *r)
{
	char msg[512];
	snprintf(msg, sizeof msg, "Method not found: %s", r->method);
	ph_send_error(r, PH_E_NO_METHOD, msg, NULL);
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
		ph_send_error(r, PH_E_ENVELOPE, msg, NULL);
		return NULL;
	}
	m = ph_find_method(r->mid, false, r->srv);
	if (!ph_authenticate(r))
		return NULL;
	/* step 5: present headers must match */
	if (r->ex->http && !check_headers(r, NULL, false, msg, sizeof msg)) {
		ph_send_error(r, PH_E_HEADER, msg, NULL);
		return NULL;
	}
	/* step 6 */
	if (!ph_is_modern_version(r->version)) {
		struct json_object *d = json_object_new_object();
		ph_jset(d, "supported", ph_modern_versions());
		ph_jset(d, "requested", json_object_new_string(r->version));
		ph_send_error(r, PH_E_VERSION, "Unsupported protocol version", d);
		return NULL;
	}
	/* step 7 */
	if (r->ex->http && !check_headers(r, m, true, msg, sizeof msg)) {
		ph_send_error(r, PH_E_HEADER, msg, NULL);
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
	if (!ph_authenticate(r) || !ph_legacy_session(r))
		return NULL;
	m = ph_find_method(r->mid, true, r->srv);
	if (m == NULL) {
		send_no_method(r);
		return NULL;
	}
	if (r->params != NULL && !json_object_is_type(r->params, json_type_object)) {
		ph_send_error(r, PH_E_PARAMS, "Invalid params: params must be an object", NULL);
		return NULL;
	}
	if (mv->progress && ph_valid_id(mv->progress))
		r->progress_token = mv->progress;
	/* A 2025 client sets its level with logging/setLevel on a session (the
	 * hub keeps it, ph_session_open read it; over stdio the process);
	 * without one every level is sent, as to a session that never called
	 * setLevel. */
	r->log_level = r->ex->http ? ph_session_level(r->sess.session) : ph_subscriptions_stdio_log_level();
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
	memcpy(r->trace.trace_id, tp + 3, 32);
	r->trace.trace_id[32] = '\0';
	memcpy(r->trace.parent_span_id, tp + 36, 16);
	r->trace.parent_span_id[16] = '\0';
	do
		randombytes_buf(rnd, sizeof rnd);
	while (!all_hex(sodium_bin2hex(r->trace.span_id, sizeof r->trace.span_id, rnd, sizeof rnd), 16));
	snprintf(r->trace.child_traceparent, sizeof r->trace.child_traceparent, "00-%s-%s-%.2s", r->trace.trace_id,
		 r->trace.span_id, tp + 53);
}

/* W3C trace context from _meta, else the traceparent header. */
static void
read_trace(struct ph_req *r, const struct meta_view *mv)
{
	const char *other = NULL;
	if (json_object_is_type(mv->traceparent, json_type_string))
		r->trace.traceparent = json_object_get_string(mv->traceparent);
	if (json_object_is_type(mv->tracestate, json_type_string))
		r->trace.tracestate = json_object_get_string(mv->tracestate);
	if (json_object_is_type(mv->baggage, json_type_string))
		r->trace.baggage = json_object_get_string(mv->baggage);
	if (r->trace.traceparent != NULL && ph_otel_on && r->ex->http)
		other = ph_param(r, "HTTP_TRACEPARENT"); /* a link when both are there */
	if (r->trace.traceparent == NULL && r->ex->http)
		r->trace.traceparent = ph_param(r, "HTTP_TRACEPARENT");
	if (r->trace.tracestate == NULL && r->ex->http)
		r->trace.tracestate = ph_param(r, "HTTP_TRACESTATE");
	if (r->trace.baggage == NULL && r->ex->http)
		r->trace.baggage = ph_param(r, "HTTP_BAGGAGE");
	parse_traceparent(r, r->trace.traceparent);
	if (ph_otel_on)
		ph_otel_req_begin(r, other);
}

/* Steps 3-11 for a well-formed JSON-RPC message. */
void
ph_ladder(struct ph_req *r)
{
	struct meta_view mv;
	const struct method *m;
	view_meta(ph_jget(r->params, "_meta"), &mv);
	choose_era(r, &mv);
	read_trace(r, &mv);
	if (r->id == NULL) {
		/* a notification from someone unauthenticated is refused too,
		 * and one on a session that is gone */
		if (ph_authenticate(r) && (!r->legacy || ph_legacy_session(r)))
			handle_notification(r);
		return;
	}
	m = r->legacy ? legacy_steps(r, &mv) : modern_steps(r, &mv);
	if (m == NULL || !item_scopes_ok(r))
		return;
	ph_dispatch(r, m);
}
