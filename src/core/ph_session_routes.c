/* ph_session_routes.c: the requests on a legacy 2025-11-25 session that
 * are not calls: DELETE ending it, the GET that opens its stream (handed to
 * the hub), and a POSTed JSON-RPC response, the client's answer to a
 * request the server pushed mid-call, which may resume the parked call
 * here. Each is authenticated and opens its session as any request does
 * (ph_ladder.c); the session itself is ph_session.c, the parking ph_park.c. */
#include "first.h"
#include "ph_otel.h"
#include "ph_core_int.h"
#include "ph_core.h"
#include "ph_auth.h"
#include "ph_features.h"
#include "ph_mrtr.h"
#include "ph_park.h"
#include "ph_session.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DELETE with Mcp-Session-Id: authenticated, the session opened as for any
 * request (404 when it does not), then ended on this host: 204. */
void
ph_serve_session_end(struct ph_req *r)
{
	char msg[256];
	enum ph_err e;
	r->legacy = true;
	ph_req_set_method(r, "DELETE");
	if (!ph_authenticate(r) || !ph_legacy_session(r))
		return;
	e = ph_session_end(r, msg, sizeof msg);
	if (e != PH_OK) {
		ph_send_error(r, e, msg, NULL);
		return;
	}
	ph_log("info", "session %.8s... ended by DELETE", ph_jstr(r->sess.session, "sid"));
	if (ph_otel_on)
		ph_otel_session_ended(r);
	ph_respond(r, 204, NULL, NULL, NULL, 0);
}

/* GET with Mcp-Session-Id and Accept: text/event-stream: authenticated,
 * the session opened as for any request (404 when it does not), then its
 * stream: the SSE head is written here and the connection handed to the
 * hub, which holds it with the session's state (Last-Event-ID names the
 * last event the client saw). 405 where there is no hub, 503 when the
 * hub holds sessions.max_state sessions already or the streams are at
 * subscriptions.max_streams. */
void
ph_serve_session_stream(struct ph_req *r)
{
	struct json_object *d;
	const char *last = ph_param(r, "HTTP_LAST_EVENT_ID"), *text;
	char msg[400];
	enum ph_err e;
	size_t len;
	bool done;
	r->legacy = true;
	ph_req_set_method(r, "GET");
	if (!ph_authenticate(r) || !ph_legacy_session(r))
		return;
	if (!ph_session_has_state(r)) {
		ph_send_error(r, PH_E_HTTP_METHOD, "Method not allowed: a session's GET stream needs the hub "
			      "(it runs only under a master)", NULL);
		return;
	}
	if ((e = ph_session_tell(r, PH_HUBMSG_SESSION_OPEN, NULL, msg, sizeof msg)) != PH_OK) {
		ph_send_error(r, e == PH_E_HANDLER ? PH_E_BUSY : e, msg, NULL);
		return;
	}
	if (!ph_shared_listener_enter(ph_subscriptions_max(r->srv->conf))) {
		snprintf(msg, sizeof msg, "Too many open streams (subscriptions.max_streams is %lld)",
			 ph_subscriptions_max(r->srv->conf));
		ph_send_error(r, PH_E_BUSY, msg, NULL);
		return;
	}
	if (ph_req_stream(r) != 0) {
		ph_shared_listener_leave();
		r->resp.status = 499;
		return;
	}
	r->resp.status = 200;
	d = ph_hubmsg_get(r, last);
	text = ph_json_text(d, &len);
	done = r->ex->ops->handoff(r->ex, text, len) == 0;
	json_object_put(d);
	if (done) {
		ph_shared_listener_give();
		r->resp.detached = true;
	} else {
		/* the head is out: the stream ends empty, the client opens another */
		ph_shared_listener_leave();
	}
}

/* A call the hub handed back with the client's answers (pr, its members
 * taken), resumed on its connection as the retry of a multi-round request:
 * the handler gets state and inputResponses as under 2026-07-28; what it
 * answers (a result, an error, the next round) goes out on the parked
 * stream. top is the request that brought the last answer (or, when that
 * reached another host, one made for it from the parked call's own): same
 * session, same principal (the hub checked), so its authentication is
 * reused. */
static void
resume_parked(struct ph_req *top, struct ph_park_resume *pr)
{
	struct ph_req r;
	const struct method *m;
	struct json_object *tok;
	ph_req_init(&r, top->srv, pr->ex);
	r.log_level = ph_session_level(top->sess.session);
	r.legacy = true;
	r.resp.streaming = true; /* the stream's headers went out in the first round */
	r.who = top->who;
	r.counted = true;    /* an MCP operation (ph_core.c's metrics do not see it) */
	r.msg = pr->msg;
	r.id = ph_jget(r.msg, "id");
	ph_req_set_method(&r, ph_jstr(r.msg, "method"));
	r.params = ph_jget(r.msg, "params");
	r.sess.session = json_object_get(top->sess.session);
	r.client_caps = ph_jget(r.sess.session, "c");
	r.sess.mrtr_state = pr->state;
	r.sess.input_responses = pr->answers;
	r.sess.resumed = true;
	if (ph_otel_on)
		ph_otel_park_resumed(&r); /* the wait's span; the run joins the first one's trace */
	if ((tok = ph_jget(ph_jget(r.params, "_meta"), "progressToken")) && ph_valid_id(tok))
		r.progress_token = tok;
	m = r.method ? ph_find_method(r.mid, true, r.srv) : NULL;
	if (m == NULL || r.id == NULL)
		ph_send_error(&r, PH_E_INTERNAL, "Internal error: the parked call cannot be resumed", NULL);
	else
		ph_dispatch(&r, m);
	ph_log_request(&r, r.method ? r.method : "-");
	if (ph_otel_on)
		ph_otel_req_end(&r);
	r.srv->resume->end(r.ex);
	ph_mrtr_end(&r);
	json_object_put(r.sess.park);
	json_object_put(r.sess.session);
	json_object_put(r.msg);
	json_object_put(pr->answers);
}

void
ph_park_resume_held(struct ph_server *srv, int fd, unsigned rid, struct json_object *msg,
		    struct json_object *state, struct json_object *answers, struct json_object *auth)
{
	struct ph_park_resume pr;
	struct ph_access *own = ph_access_read(ph_jget(auth, "access"));
	struct json_object *restricted = ph_jget(auth, "restricted");
	struct ph_req top;
	bool denied = false;
	if (srv->resume == NULL) {
		ph_log("error", "hub: a parked call cannot be resumed here: this front cannot resume a call");
		close(fd);
		ph_access_free(own);
		return;
	}
	ph_req_init(&top, srv, NULL);
	top.who.principal = ph_jstr(auth, "principal");
	top.who.assigns = ph_jget(auth, "assigns");
	top.who.access_own = own != NULL;
	top.who.access = own ? own : ph_auth_configured_access(srv, top.who.principal, &denied);
	top.who.restricted = json_object_is_type(restricted, json_type_boolean) && json_object_get_boolean(restricted);
	top.sess.session = ph_jget(auth, "session");
	pr.ex = srv->resume->open(fd, rid);
	pr.msg = json_object_get(msg);
	pr.state = json_object_get(state);
	pr.answers = json_object_get(answers);
	resume_parked(&top, &pr);
	ph_access_free(own);
}

/* A JSON-RPC response POSTed on a legacy session: the client's answer to a
 * request the server pushed mid-call. Authenticated and its session opened
 * like any request, then given to the hub: 202, or 400 -32600 naming why
 * it is refused (no call waits for this id, another session's, answered
 * twice). The answer that completes a round resumes the call here, once
 * its own request has ended with the 202. */
void
ph_serve_response(struct ph_req *r)
{
	struct ph_park_resume pr;
	char why[320];
	int rc;
	r->legacy = true;
	ph_req_set_method(r, "(response)");
	r->id = NULL; /* a refusal answers no request */
	if (!ph_authenticate(r) || !ph_legacy_session(r))
		return;
	rc = ph_park_answer(r, &pr, why, sizeof why);
	if (rc < 0) {
		ph_send_error(r, rc == -2 ? PH_E_TOO_LARGE : strncmp(why, "Internal", 8) == 0 ? PH_E_INTERNAL
			      : PH_E_INVALID_REQUEST, why, NULL);
		return;
	}
	ph_send_accepted(r);
	if (rc > 0) {
		/* the 202 goes out, and the POST ends, before the call runs on:
		 * held back until the call's end, it would keep a client that
		 * waits for it from reading the call's stream, and a result
		 * larger than what the sockets hold would stall behind it until
		 * the write on the stream gave up (the call then lost) */
		if (r->ex->ops->finish)
			r->ex->ops->finish(r->ex);
		resume_parked(r, &pr);
	}
}
