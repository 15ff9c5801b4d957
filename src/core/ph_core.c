/* ph_core.c: one exchange from bytes to response, the entry of the MCP
 * core. ph_serve takes the body (step 1 of mcp-wire §6.7, ph_http_rules.c),
 * parses it and checks the JSON-RPC envelope (step 2, here), then hands a
 * batch to ph_batch.c and a message to the ladder (steps 3-11,
 * ph_ladder.c), which runs the method of the table (ph_methods.c,
 * ph_dispatch.c); every response goes out through ph_writer.c, and the log
 * line is written here once the exchange is over. */
#include "first.h"
#include "ph_core.h"
#include "ph_core_int.h"
#include "ph_auth.h"
#include "ph_mime.h"
#include "ph_metrics.h"
#include "ph_mrtr.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- envelope (steps 2-4) ----------------------------------------------- */

bool
ph_valid_id(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
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
bool
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
