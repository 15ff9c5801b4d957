/* ph_mrtr.c: multi-round requests. The retry side (opening requestState,
 * checking inputResponses) and the answer side (checking what a handler
 * asks for, the client capabilities it needs, sealing its state). */
#include "first.h"
#include "ph_mrtr.h"
#include "ph_state.h"
#include "ph_util.h"
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Longest inputResponses key quoted back in an error message. */
#define MAX_KEY_SHOWN 64

/* The arguments the state is bound to: params.arguments as the client sent
 * them, absent and null counting as {} (a client may omit an empty object on
 * the retry). *tmp is what the caller puts. */
static struct json_object *
bound_args(struct ph_req *r, struct json_object **tmp)
{
	struct json_object *a = ph_jget(r->params, "arguments");
	*tmp = NULL;
	if (a == NULL)
		a = *tmp = json_object_new_object();
	return a;
}

bool
ph_mrtr_begin(struct ph_req *r, const char *target_key, struct ph_outcome *o)
{
	struct json_object *ir, *rs, *args, *tmp, *state = NULL;
	const char *target;
	enum ph_state_err e;
	char *who;
	if (r->legacy || r->params == NULL)
		return true;
	if (ph_jget_ex(r->params, "inputResponses", &ir)) {
		if (!json_object_is_type(ir, json_type_object)) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: inputResponses must be an object");
			return false;
		}
		json_object_object_foreach(ir, k, v) {
			if (json_object_is_type(v, json_type_object))
				continue;
			if (strlen(k) <= MAX_KEY_SHOWN) /* the parser checked its UTF-8 */
				ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: inputResponses[\"%s\"] must "
						 "be an object (an elicitation, sampling or roots result)", k);
			else
				ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: every value of "
						 "inputResponses must be an object");
			return false;
		}
		r->sess.input_responses = ir;
	}
	if (!ph_jget_ex(r->params, "requestState", &rs))
		return true;
	if (!json_object_is_type(rs, json_type_string)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: requestState must be a string");
		return false;
	}
	target = ph_jstr(r->params, target_key);
	if (target == NULL)
		return true; /* the method itself reports the missing name or uri */
	r->target = target; /* for the log line, also when refused */
	args = bound_args(r, &tmp);
	who = ph_req_binding(r);
	e = ph_state_open(r->srv->conf->request_state, json_object_get_string(rs), who, r->method,
			  target, args, &state, (int64_t)time(NULL));
	free(who);
	json_object_put(tmp);
	if (e != PH_STATE_OK) {
		/* which check failed, nothing that helps forging one */
		ph_outcome_error(o, PH_E_PARAMS, NULL, "%s", ph_state_message(e));
		return false;
	}
	r->sess.mrtr_state = state;
	r->sess.resumed = true;
	return true;
}

/* A legacy session that requests can be pushed to: over HTTP, not in a
 * batch, a front that can hand the connection over, and a hub; or stdio,
 * where the process reads the client's answers itself (its initialize
 * gave the capabilities). */
static bool
push_possible(const struct ph_req *r)
{
	if (r->resp.batch != NULL)
		return false;
	if (!r->ex->http)
		return r->client_caps != NULL && r->ex->ops->wait != NULL && r->ex->ops->queued != NULL;
	return r->sess.session != NULL && r->ex->ops->handoff != NULL && ph_hub_fd >= 0;
}

bool
ph_mrtr_no_rounds(const struct ph_req *r)
{
	struct json_object *c = r->client_caps;
	if (!r->legacy)
		return false;
	return !push_possible(r) || !(ph_jget(c, "elicitation") || ph_jget(c, "sampling") ||
				      ph_jget(c, "roots"));
}

void
ph_mrtr_end(struct ph_req *r)
{
	json_object_put(r->sess.mrtr_state);
	r->sess.mrtr_state = NULL;
}

/* ---- the answer ------------------------------------------------------------ */

/* What the requests of one answer need from the client. */
struct need {
	bool form, url, sampling, roots;
};

/* Checks one input request {method, params}. Returns NULL when it is well
 * formed (and notes what it needs), else a reason for the log. */
static const char *
check_request(struct json_object *req, struct need *need)
{
	struct json_object *p = ph_jget(req, "params");
	const char *m = ph_jstr(req, "method");
	if (!json_object_is_type(req, json_type_object))
		return "is not an object {method, params}";
	if (m == NULL)
		return "has no method";
	if (p != NULL && !json_object_is_type(p, json_type_object))
		return "has params that are not an object";
	if (strcmp(m, "elicitation/create") == 0) {
		const char *mode = ph_jstr(p, "mode");
		if (p == NULL || ph_jstr(p, "message") == NULL)
			return "is an elicitation without a message";
		if (ph_jget(p, "mode") != NULL && mode == NULL)
			return "has a mode that is not a string";
		if (mode == NULL || strcmp(mode, "form") == 0) {
			if (!json_object_is_type(ph_jget(p, "requestedSchema"), json_type_object))
				return "is a form elicitation without a requestedSchema object";
			need->form = true;
		} else if (strcmp(mode, "url") == 0) {
			if (ph_jstr(p, "url") == NULL)
				return "is a URL elicitation without a url";
			need->url = true;
		} else {
			return "has a mode other than form or url";
		}
	} else if (strcmp(m, "sampling/createMessage") == 0) {
		if (!json_object_is_type(ph_jget(p, "messages"), json_type_array) ||
		    !json_object_is_type(ph_jget(p, "maxTokens"), json_type_int))
			return "is a sampling request without messages and an integer maxTokens";
		need->sampling = true;
	} else if (strcmp(m, "roots/list") == 0) {
		need->roots = true;
	} else {
		return "asks for a method other than elicitation/create, sampling/createMessage or roots/list";
	}
	return NULL;
}

/* The capabilities need asks for that caps (the request's declaration,
 * may be NULL) lacks, as a requiredCapabilities object, or NULL when none
 * is missing. "elicitation": {} declares form mode only; URL mode needs
 * elicitation.url (mcp-wire §5.5). Caller puts. */
static struct json_object *
missing_caps(struct json_object *caps, const struct need *need)
{
	struct json_object *el = ph_jget(caps, "elicitation"), *miss = NULL, *m_el = NULL;
	bool el_obj = json_object_is_type(el, json_type_object);
	bool form_ok = el_obj && (ph_jget(el, "form") != NULL || ph_jget(el, "url") == NULL);
	bool url_ok = el_obj && ph_jget(el, "url") != NULL;
	bool no_form = need->form && !form_ok, no_url = need->url && !url_ok;
	if (no_form || no_url) {
		m_el = json_object_new_object();
		/* {} alone would mean form mode: name form when it cannot */
		if (no_form && (el_obj || no_url))
			json_object_object_add(m_el, "form", json_object_new_object());
		if (no_url)
			json_object_object_add(m_el, "url", json_object_new_object());
		miss = json_object_new_object();
		json_object_object_add(miss, "elicitation", m_el);
	}
	if (need->sampling && !json_object_is_type(ph_jget(caps, "sampling"), json_type_object)) {
		if (miss == NULL)
			miss = json_object_new_object();
		json_object_object_add(miss, "sampling", json_object_new_object());
	}
	if (need->roots && !json_object_is_type(ph_jget(caps, "roots"), json_type_object)) {
		if (miss == NULL)
			miss = json_object_new_object();
		json_object_object_add(miss, "roots", json_object_new_object());
	}
	return miss;
}

/* "elicitation, sampling": the names of a requiredCapabilities object, for
 * the error message. Caller frees. */
static char *
cap_names(struct json_object *miss)
{
	struct ph_buf b;
	ph_buf_init(&b);
	json_object_object_foreach(miss, k, v) {
		ph_buf_printf(&b, "%s%s", b.len ? ", " : "", k);
		if (ph_jget(v, "url") != NULL)
			ph_buf_adds(&b, " (URL mode)");
	}
	return ph_buf_steal(&b);
}

void
ph_uuid4(char out[37])
{
	unsigned char b[16];
	randombytes_buf(b, sizeof b);
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

static void
handler_failed(struct ph_outcome *o)
{
	ph_outcome_error(o, PH_E_HANDLER, NULL, "Internal error: the handler failed");
}

/* A 2025-11-25 request cannot carry a second round: URL elicitations become
 * the URLElicitationRequiredError -32042 (the client opens them and calls
 * again), anything else -32021. */
static void
answer_legacy(struct json_object *reqs, const struct need *need, const char *label, struct ph_outcome *o)
{
	struct json_object *list = json_object_new_array(), *miss;
	char *names;
	json_object_object_foreach(reqs, k, req) {
		struct json_object *p = ph_jget(req, "params"), *e;
		const char *id = ph_jstr(p, "elicitationId");
		char gen[37];
		(void)k;
		if (strcmp(ph_jstr(req, "method"), "elicitation/create") != 0 || ph_jstr(p, "mode") == NULL ||
		    strcmp(ph_jstr(p, "mode"), "url") != 0)
			continue;
		if (id == NULL) {
			ph_uuid4(gen);
			id = gen;
		}
		e = json_object_new_object();
		json_object_object_add(e, "mode", json_object_new_string("url"));
		json_object_object_add(e, "elicitationId", json_object_new_string(id));
		json_object_object_add(e, "url", json_object_get(ph_jget(p, "url")));
		json_object_object_add(e, "message", json_object_get(ph_jget(p, "message")));
		json_object_array_add(list, e);
	}
	if (json_object_array_length(list) > 0) {
		struct json_object *d = json_object_new_object();
		json_object_object_add(d, "elicitations", list);
		ph_outcome_error(o, PH_E_URL_ELICITATION, d, "This request requires more information.");
		return;
	}
	json_object_put(list);
	miss = missing_caps(NULL, need);
	names = cap_names(miss);
	{
		struct json_object *d = json_object_new_object();
		json_object_object_add(d, "requiredCapabilities", miss);
		ph_outcome_error(o, PH_E_CAPABILITY, d, "Missing required client capability: %s asks the "
				 "client for input (%s), which needs protocol version 2026-07-28", label, names);
	}
	free(names);
}

/* Checks an inputRequired answer ir {inputRequests?, state?}: an object
 * whose every input request is well formed, with at least one request or
 * a state. Notes what the requests need in *need and their number in *n.
 * Returns false after logging why (label names the handler). */
static bool
check_input_required(struct json_object *ir, const char *label, struct need *need, size_t *n)
{
	struct json_object *reqs = ph_jget(ir, "inputRequests");
	if (!json_object_is_type(ir, json_type_object)) {
		ph_log("warning", "%s: inputRequired must be an object {inputRequests, state}", label);
		return false;
	}
	if (reqs != NULL) {
		if (!json_object_is_type(reqs, json_type_object)) {
			ph_log("warning", "%s: inputRequired.inputRequests must be an object", label);
			return false;
		}
		json_object_object_foreach(reqs, k, req) {
			const char *why = check_request(req, need);
			if (why != NULL) {
				ph_log("warning", "%s: inputRequests[\"%.80s\"] %s", label, k, why);
				return false;
			}
			(*n)++;
		}
	}
	if (*n == 0 && !json_object_object_get_ex(ir, "state", NULL)) {
		ph_log("warning", "%s: inputRequired has neither inputRequests nor a state", label);
		return false;
	}
	return true;
}

/* The client capabilities need asks for that the request does not
 * declare: true after setting the -32021 error in o, naming them. */
static bool
refuse_missing_caps(struct ph_req *r, const struct need *need, const char *label, struct ph_outcome *o)
{
	struct json_object *miss = missing_caps(r->client_caps, need), *d;
	char *names;
	if (miss == NULL)
		return false;
	names = cap_names(miss);
	d = json_object_new_object();
	json_object_object_add(d, "requiredCapabilities", miss);
	ph_outcome_error(o, PH_E_CAPABILITY, d, "Missing required client capability: %s asks for %s, "
			 "which the request does not declare", label, names);
	free(names);
	return true;
}

/* The input_required result for ir: its n input requests and its state
 * sealed to this request (principal, method, target, arguments). A sealed
 * state over request_state.max_size is a handler failure instead. */
static void
answer_sealed(struct ph_req *r, struct json_object *ir, size_t n, const char *label, struct ph_outcome *o)
{
	const struct ph_state_conf *sc = r->srv->conf->request_state;
	struct json_object *args, *tmp, *res;
	char *tok;
	char *who = ph_req_binding(r);
	args = bound_args(r, &tmp);
	tok = ph_state_seal(sc, who, r->method, r->target, args, ph_jget(ir, "state"),
			    (int64_t)time(NULL));
	free(who);
	json_object_put(tmp);
	if ((long long)strlen(tok) > sc->max_size) {
		/* the client could never bring it back */
		ph_log("warning", "%s: the sealed state is %zu bytes, over request_state.max_size (%lld)",
		       label, strlen(tok), sc->max_size);
		free(tok);
		handler_failed(o);
		return;
	}
	res = json_object_new_object();
	json_object_object_add(res, "resultType", json_object_new_string("input_required"));
	if (n > 0)
		json_object_object_add(res, "inputRequests", json_object_get(ph_jget(ir, "inputRequests")));
	json_object_object_add(res, "requestState", json_object_new_string(tok));
	free(tok);
	json_object_put(o->result);
	o->result = res;
}

/* True when the requests need can be pushed to r's client mid-call: a
 * legacy session over HTTP whose capabilities declare them, a front that
 * can hand the connection to a hub, and a hub. */
static bool
can_push(struct ph_req *r, const struct need *need)
{
	struct json_object *miss;
	if (!push_possible(r))
		return false;
	miss = missing_caps(r->client_caps, need);
	json_object_put(miss);
	return miss == NULL;
}

void
ph_mrtr_answer(struct ph_req *r, struct json_object *ir, const char *label, struct ph_outcome *o)
{
	struct need need = {false, false, false, false};
	size_t n = 0;
	if (!check_input_required(ir, label, &need, &n)) {
		handler_failed(o);
		return;
	}
	if (r->legacy) {
		if (n == 0) {
			/* "call again later" has no 2025-11-25 form */
			ph_log("warning", "%s: a state-only inputRequired cannot be answered to a 2025-11-25 "
			       "request", label);
			handler_failed(o);
			return;
		}
		if (can_push(r, &need)) {
			json_object_put(r->sess.park);
			r->sess.park = json_object_get(ir);
			return;
		}
		answer_legacy(ph_jget(ir, "inputRequests"), &need, label, o);
		return;
	}
	if (refuse_missing_caps(r, &need, label, o))
		return;
	answer_sealed(r, ir, n, label, o);
}
