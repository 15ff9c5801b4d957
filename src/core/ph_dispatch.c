/* ph_dispatch.c: a method run, once the ladder has let its request
 * through. The handler answers; a multi-round call waits for the stdio
 * client's answers or is parked with the hub; a result is completed as its
 * era wants (resultType, the cache hints, serverInfo) before the writer
 * sends it. */
#include "first.h"
#include "ph_otel.h"
#include "ph_core_int.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_mrtr.h"
#include "ph_park.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

static void
finish_result(struct ph_req *r, const struct method *m, struct json_object *res)
{
	if (ph_otel_on) /* a tool's error result is an error of the span */
		r->otel.tool_error = json_object_get_boolean(ph_jget(res, "isError"));
	if (!r->legacy) {
		struct json_object *rt = ph_jget(res, "resultType");
		const struct ph_config *c = r->srv->conf;
		if (rt == NULL)
			ph_jset(res, "resultType", json_object_new_string("complete"));
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
		ph_add_server_info(r->srv, res);
	ph_send_out(r, 200, NULL, NULL, res, info);
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


/* ph_park_stdio, the wait a span of the request when telemetry is on. */
static bool
park_stdio(struct ph_req *r, struct json_object **answers, char *why, size_t n)
{
	struct ph_otel_child c;
	bool ok;
	if (!ph_otel_on)
		return ph_park_stdio(r, answers, why, n);
	ph_otel_child_begin(r, &c);
	ok = ph_park_stdio(r, answers, why, n);
	ph_otel_child_end(r, &c, "parked: waiting for the client", NULL, 0, !ok);
	return ok;
}

/* Runs the method's handler (steps 9-11 happen there: it knows its
 * capabilities and schema; a retry of a multi-round request first opens its
 * requestState) and sends what it returns, unless the client has gone or
 * the handler answers later itself. */
void
ph_dispatch(struct ph_req *r, const struct method *m)
{
	struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
	struct json_object *answers = NULL;
	if (!(m->flags & M_MRTR) || ph_mrtr_begin(r, (m->flags & M_NAME) ? "name" : "uri", &o))
		m->fn(r, &o);
	while (r->sess.park != NULL && !r->ex->cancelled && !r->ex->http) {
		/* stdio: the client is asked on stdout and answers on stdin while
		 * the call waits; the handler is then called again with state and
		 * inputResponses, as a parked call resumed over HTTP */
		char why[320];
		outcome_free(&o);
		memset(&o, 0, sizeof o);
		r->sess.input_responses = NULL; /* the last round's, about to go */
		json_object_put(answers);
		if (!park_stdio(r, &answers, why, sizeof why)) {
			json_object_put(r->sess.park);
			r->sess.park = NULL;
			if (!r->ex->cancelled)
				fail_waiting(r, m, why);
			else
				r->resp.status = 499;
			return;
		}
		ph_mrtr_end(r);
		r->sess.mrtr_state = json_object_get(ph_jget(r->sess.park, "state"));
		r->sess.input_responses = answers;
		r->sess.resumed = true;
		json_object_put(r->sess.park);
		r->sess.park = NULL;
		m->fn(r, &o);
	}
	/* (the outcome may hold parts of the answers: sent before they go) */
	dispatch_outcome(r, m, &o);
	if (answers != NULL) {
		r->sess.input_responses = NULL;
		json_object_put(answers);
	}
}

/* The end of a call that waited for the stdio client's answers in vain:
 * why as a tool's error result (tools/call), else as error -32603, as the
 * hub ends a parked call. */
static void
fail_waiting(struct ph_req *r, const struct method *m, const char *why)
{
	if (r->mid == PH_METHOD_TOOLS_CALL) {
		finish_result(r, m, ph_tool_error_result(why));
		return;
	}
	ph_send_error(r, PH_E_HANDLER, why, NULL);
}

/* Sends what the handler answered (o, freed), or parks the call. */
static void
dispatch_outcome(struct ph_req *r, const struct method *m, struct ph_outcome *op)
{
	struct ph_outcome o = *op;
	if (r->sess.park != NULL && !r->ex->cancelled) {
		/* a legacy session's client is asked mid-call (ph_park.c) */
		char why[256];
		outcome_free(&o);
		if (ph_park_call(r, why, sizeof why))
			r->resp.status = 200;
		else
			ph_send_error(r, PH_E_HANDLER, why, NULL);
		return;
	}
	if (r->ex->cancelled) {
		/* the client is gone: nothing more may be sent for this request */
		outcome_free(&o);
		r->resp.status = 499;
	} else if (r->resp.detached) {
		outcome_free(&o);
	} else if (o.result != NULL) {
		finish_result(r, m, o.result);
	} else {
		ph_send_error(r, o.err ? o.err : PH_E_INTERNAL, o.message, o.data);
		free(o.message);
	}
}
