/* ph_writer.c: the responses of the core. A JSON-RPC error, or a result
 * (written as text without building its message where it can), goes out as
 * one JSON response, as the last event of an open SSE stream, or into the
 * legacy batch being answered; 202 for a notification. ph_respond is the one
 * place a response leaves the core. */
#include "first.h"
#include "ph_otel.h"
#include "ph_core_int.h"
#include "ph_core.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct json_object *
ph_rpc_error(struct json_object *id, int code, const char *message, struct json_object *data)
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
void
ph_respond(struct ph_req *r, int status, const char *ctype, const struct ph_header *hdrs,
	   const char *body, size_t len)
{
	struct ph_header all[16];
	r->resp.status = status;
	ph_req_headers(r, hdrs, all, PH_ARRAY_LEN(all));
	if (r->ex->ops->respond(r->ex, status, ctype, all, body, len) != 0)
		r->ex->cancelled = 1;
}

/* The largest memory for an answer's text kept from one answer to the next. */
#define KEPT_TEXT_MAX 65536

/* _meta["io.modelcontextprotocol/serverInfo"] on a 2026-07-28 result. */
void
ph_add_server_info(const struct ph_server *srv, struct json_object *res)
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
 * ph_add_server_info would add it. */
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
void
ph_send_out(struct ph_req *r, int status, const struct ph_header *extra, struct json_object *msg,
	    struct json_object *res, bool info)
{
	struct ph_buf text;
	if (r->resp.batch != NULL) {
		/* one entry of a legacy batch: the batch is sent when all are done */
		if (msg == NULL) {
			if (info)
				ph_add_server_info(r->srv, res);
			msg = result_message(r->id, res);
		}
		json_object_array_add(r->resp.batch, msg);
		r->resp.status = 200;
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
	if (r->resp.streaming) {
		if (r->ex->ops->stream_send(r->ex, text.data, text.len) != 0)
			r->ex->cancelled = 1;
		r->resp.status = 200;
	} else {
		ph_respond(r, status, "application/json", extra, text.data, text.len);
	}
	ph_kept_give(&kept_text, &text, kept, KEPT_TEXT_MAX);
	json_object_put(msg ? msg : res);
}

void
ph_send_final(struct ph_req *r, int status, struct json_object *msg, const struct ph_header *extra)
{
	ph_send_out(r, status, extra, msg, NULL, false);
}

void
ph_send_error(struct ph_req *r, enum ph_err e, const char *message, struct json_object *data)
{
	int code = ph_err_rpc_code(e, r->legacy);
	int status = ph_err_http_status(e, r->legacy);
	static const struct ph_header allow[] = {{"Allow", "POST"}, {NULL, NULL}};
	if (!r->ex->http)
		status = 200;
	r->resp.rpc_code = code;
	if (ph_otel_on)
		snprintf(r->otel.message, sizeof r->otel.message, "%s", message ? message : ph_err_message(e));
	ph_send_final(r, status, ph_rpc_error(r->id, code, message ? message : ph_err_message(e), data),
		      e == PH_E_HTTP_METHOD ? allow : NULL);
}

void
ph_send_accepted(struct ph_req *r)
{
	if (r->ex->http && r->resp.batch == NULL)
		ph_respond(r, 202, NULL, NULL, NULL, 0);
	else
		r->resp.status = 202;
}

struct json_object *
ph_core_final_result(const struct ph_server *srv, struct json_object *id, struct json_object *res)
{
	if (ph_jget(res, "resultType") == NULL)
		ph_jset(res, "resultType", json_object_new_string("complete"));
	ph_add_server_info(srv, res);
	return result_message(id, res);
}
