/* ph_core.c: one exchange from bytes to response, the entry of the MCP
 * core. ph_serve takes the body (step 1 of mcp-wire §6.7, ph_http_rules.c),
 * parses it, then hands a batch to ph_batch.c and a message to the
 * envelope check (step 2, ph_envelope.c) and the ladder (steps 3-11,
 * ph_ladder.c), which runs the method of the table (ph_methods.c,
 * ph_dispatch.c); every response goes out through ph_writer.c, and the log
 * line is written here once the exchange is over. */
#include "first.h"
#include "ph_otel.h"
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
	 * with every request: the last one read is kept for the next (a
	 * fast path: what it relies on is in ph_json.h) */
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

	ph_req_init(&r, srv, ex);
	r.counted = true;
	if (ph_take_body(&r, &body, &blen, &own))
		serve_body(&r, body, blen);
	ph_log_request(&r, r.method ? r.method : "-");
	if (ph_otel_on)
		ph_otel_req_end(&r);
	/* what an MCP client sent, not the health checks and scrapes */
	if (r.counted && r.ex->http)
		ph_metrics_request(r.mid, r.method, r.resp.status, (int64_t)(ph_now_us() - r.t0));
	ph_auth_end(&r);
	ph_mrtr_end(&r);
	json_object_put(r.sess.session);
	free(r.sess.session_issued);
	json_object_put(r.sess.park);
	json_object_put(r.msg);
	free(own);
}

void
ph_serve_unconfigured(struct ph_exchange *ex)
{
	struct ph_req r;
	ph_req_init(&r, NULL, ex);
	ph_send_error(&r, PH_E_UNCONFIGURED, NULL, NULL);
	ph_log("error", "answered %d: the configuration did not load (check with phantom-fcgi -t)",
	       r.resp.status);
}

void
ph_serve_refused(struct ph_exchange *ex, enum ph_err e)
{
	struct ph_req r;
	ph_req_init(&r, NULL, ex);
	ph_send_error(&r, e, NULL, NULL);
	ph_log("warning", "answered %d: %s", r.resp.status, ph_err_message(e));
}
