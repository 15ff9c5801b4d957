/* ph_envelope.c: step 2 of the validation ladder (mcp-wire §6.7) for one
 * message: a JSON-RPC request or notification (jsonrpc "2.0", a string
 * method, a string or integer id), or a response a legacy client posts on
 * its session (ph_session_routes.c); names the features read as C strings
 * hold no U+0000. */
#include "first.h"
#include "ph_core_int.h"
#include "ph_util.h"
#include <stdio.h>
#include <string.h>

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
			if (strcmp(k, name_paths[i][0]) != 0)
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
 * notification; sets r->id, r->method (with r->mid) and r->params. Returns false after
 * sending the error. A JSON null is as good as absent, but for id. */
bool
ph_check_envelope(struct ph_req *r)
{
	struct json_object *id, *method, *jsonrpc, *params;
	bool has_id, answer;
	if (!json_object_is_type(r->msg, json_type_object)) {
		ph_send_error(r, PH_E_INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object", NULL);
		return false;
	}
	has_id = ph_jget_ex(r->msg, "id", &id);
	method = ph_jget(r->msg, "method");
	jsonrpc = ph_jget(r->msg, "jsonrpc");
	params = ph_jget(r->msg, "params");
	answer = ph_jget(r->msg, "result") != NULL || ph_jget(r->msg, "error") != NULL;
	if (id != NULL && ph_valid_id(id))
		r->id = id;
	if (method == NULL && answer) {
		if (r->ex->http && r->resp.batch == NULL && ph_param(r, "HTTP_MCP_SESSION_ID") != NULL) {
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
	ph_req_set_method(r, json_object_get_string(method));
	if (has_id && !ph_valid_id(id)) {
		r->id = NULL;
		ph_send_error(r, PH_E_INVALID_REQUEST,
			      "Invalid Request: id must be a string or an integer", NULL);
		return false;
	}
	r->params = params;
	return names_nul_free(r);
}
