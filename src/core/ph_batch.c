/* ph_batch.c: JSON-RPC batches, which only the transports of 2025-03-26
 * and 2024-11-05 have: allowed by the client's version, authenticated
 * once, each message then served as its own request (the envelope and the
 * ladder) and the answers sent together as one array. */
#include "first.h"
#include "ph_otel.h"
#include "ph_core_int.h"
#include "ph_core.h"
#include "ph_mrtr.h"
#include "ph_util.h"
#include <stdio.h>
#include <string.h>

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
	ph_req_init(&r, top->srv, top->ex);
	r.legacy = true;
	r.resp.batch = out;
	r.who.principal = top->who.principal;
	r.who.assigns = top->who.assigns;
	r.who.access = top->who.access;
	r.who.restricted = top->who.restricted;
	r.hdr_version = top->hdr_version;
	r.hdr_method = top->hdr_method;
	r.msg = json_object_get(msg);
	if (ph_check_envelope(&r))
		ph_ladder(&r);
	ph_log_request(&r, r.method ? r.method : "-");
	if (ph_otel_on)
		ph_otel_req_end(&r);
	ph_mrtr_end(&r);
	json_object_put(r.msg);
}

/* A JSON array body (r->msg): -32600 unless the client's version has
 * batches (batch_allowed); else authenticated once, then each message in
 * order, answered with one array of the responses, or 202 when every
 * message was a notification. */
void
ph_serve_batch(struct ph_req *r)
{
	size_t n = json_object_array_length(r->msg);
	long long max = r->srv->conf->limits.batch_max;
	struct json_object *out;
	ph_req_set_method(r, "batch");
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
		r->resp.status = 499;
	} else if (json_object_array_length(out) == 0) {
		ph_send_accepted(r);
	} else {
		size_t len;
		const char *s = ph_json_text(out, &len);
		ph_respond(r, 200, "application/json", NULL, s, len);
	}
	json_object_put(out);
}
