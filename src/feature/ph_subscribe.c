/* ph_subscribe.c: subscriptions/listen (mcp-wire §8). The response is an SSE
 * stream that starts with the acknowledgement, carries list_changed
 * notifications tagged with the subscription id, keep-alive comments, and
 * ends with a result when the server stops, reloads or the stream reaches
 * subscriptions.max_ms. A stream pins a worker, so the number of streams is
 * bounded by subscriptions.max_streams and the stream's lifetime by max_ms;
 * clients listen again. */
#include "first.h"
#include "ph_features.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <poll.h>
#include <string.h>

#define META_SUBID "io.modelcontextprotocol/subscriptionId"

static const struct {
	const char *filter;  /* SubscriptionFilter key */
	const char *cap;     /* capability that must be advertised */
	enum ph_kind kind;
	const char *method;
} kinds[] = {
	{"toolsListChanged", "tools", PH_KIND_TOOL, "notifications/tools/list_changed"},
	{"promptsListChanged", "prompts", PH_KIND_PROMPT, "notifications/prompts/list_changed"},
	{"resourcesListChanged", "resources", PH_KIND_RESOURCE, "notifications/resources/list_changed"},
};

static struct json_object *
tagged(struct ph_req *r)
{
	struct json_object *p = json_object_new_object(), *m = json_object_new_object();
	json_object_object_add(m, META_SUBID, json_object_get(r->id));
	json_object_object_add(p, "_meta", m);
	return p;
}

/* The filter granted for want: the kinds asked for that this server
 * advertises, marked in on[], with the change counter of every kind in
 * seen[]. Returns the granted filter object (caller puts). */
static struct json_object *
grant_filter(struct ph_req *r, struct json_object *want, bool on[], uint64_t seen[])
{
	struct json_object *caps = ph_capabilities(r), *granted = json_object_new_object();
	for (size_t i = 0; i < PH_ARRAY_LEN(kinds); i++) {
		struct json_object *v = ph_jget(want, kinds[i].filter);
		on[i] = v && json_object_get_boolean(v) && ph_jget(caps, kinds[i].cap) != NULL;
		if (on[i])
			json_object_object_add(granted, kinds[i].filter, json_object_new_boolean(1));
		seen[i] = ph_shared_changes(kinds[i].kind);
	}
	json_object_put(caps);
	return granted;
}

/* Holds the HTTP stream open: a list_changed notification for each granted
 * kind whose counter moves past seen[], a liveness check every
 * keepalive_ms, until the server stops or max_ms has passed since t0 (when
 * the request began, in microseconds). Returns true for that graceful end,
 * false when the client went away. */
static bool
stream(struct ph_req *r, const bool on[], uint64_t seen[], int64_t t0)
{
	const struct ph_config *c = r->srv->conf;
	int64_t last_ping = t0;
	for (;;) {
		int64_t now;
		poll(NULL, 0, 200);
		for (size_t i = 0; i < PH_ARRAY_LEN(kinds); i++) {
			uint64_t n = ph_shared_changes(kinds[i].kind);
			if (n == seen[i])
				continue;
			seen[i] = n;
			if (on[i] && ph_req_notify(r, kinds[i].method, tagged(r)) != 0)
				return false;
		}
		if (ph_req_gone(r))
			return false;
		if (ph_stop_pending())
			return true;
		now = ph_now_us();
		if (now - t0 >= c->subscriptions.max_ms * 1000)
			return true;
		if (now - last_ping >= c->subscriptions.keepalive_ms * 1000 || !r->ex->http) {
			last_ping = now;
			if (!ph_req_alive(r))
				return false;
		}
	}
}

void
ph_m_subscriptions_listen(struct ph_req *r, struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	struct json_object *want = ph_jget(r->params, "notifications"), *ack;
	bool on[PH_ARRAY_LEN(kinds)];
	uint64_t seen[PH_ARRAY_LEN(kinds)];
	int64_t t0 = ph_now_us();
	long long max = c->subscriptions.max_streams;

	if (want == NULL || !json_object_is_type(want, json_type_object)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications must be an object");
		return;
	}
	if (max == 0)
		max = c->workers > 1 ? c->workers / 2 : 1;
	if (!ph_shared_listener_enter(max)) {
		ph_outcome_error(o, PH_E_HANDLER, NULL,
				 "Too many open subscriptions (subscriptions.max_streams is %lld)", max);
		return;
	}
	/* honour only what this server advertises (the ack narrows the filter) */
	ack = tagged(r);
	json_object_object_add(ack, "notifications", grant_filter(r, want, on, seen));
	if (ph_req_notify(r, "notifications/subscriptions/acknowledged", ack) != 0)
		goto gone;
	if (!r->ex->http) {
		/* stdio: other requests interleave with the subscription, so it
		 * stays open without holding the process; it ends with
		 * notifications/cancelled or EOF. The configuration of a stdio
		 * server does not change while it runs, so nothing more is sent. */
		ph_shared_listener_leave();
		r->detached = true;
		return;
	}
	if (!stream(r, on, seen, t0))
		goto gone;
	/* a graceful end: the result closes the stream; the client listens again */
	o->result = tagged(r);
	ph_shared_listener_leave();
	return;
gone:
	ph_shared_listener_leave();
	ph_outcome_error(o, PH_E_HANDLER, NULL, "client went away");
}
