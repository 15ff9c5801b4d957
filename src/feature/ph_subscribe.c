/* ph_subscribe.c: subscriptions/listen (mcp-wire §8). The response is an SSE
 * stream that starts with the acknowledgement, carries list_changed
 * notifications tagged with the subscription id, keep-alive comments, and
 * ends with a result when the server stops, reloads or the stream reaches
 * subscriptions.max_ms. Where a master runs, the worker hands the stream to
 * the hub right after the acknowledgement (process/ph_hub.c) and is free
 * again; otherwise the stream pins the worker, so the number of streams is
 * bounded by subscriptions.max_streams and the stream's lifetime by max_ms;
 * clients listen again. */
#include "first.h"
#include "ph_features.h"
#include "ph_hubmsg.h"
#include "ph_registry.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "ph_watch.h"
#include <poll.h>
#include <sys/resource.h>
#include <stdlib.h>
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
_Static_assert(PH_ARRAY_LEN(kinds) == PH_HUBMSG_KINDS, "a listen's \"on\" names these kinds");

/* {"_meta": {subscriptionId: id}}: the params of a notification on the
 * stream of listen id, {} for the legacy session (id NULL) (caller puts). */
static struct json_object *
tagged_id(struct json_object *id)
{
	struct json_object *p = json_object_new_object(), *m;
	if (id == NULL) /* the legacy session: no subscription to name */
		return p;
	m = json_object_new_object();
	json_object_object_add(m, META_SUBID, json_object_get(id));
	json_object_object_add(p, "_meta", m);
	return p;
}

static struct json_object *
tagged(struct ph_req *r)
{
	return tagged_id(r->id);
}

/* ---- subscriptions.authorize ------------------------------------------------------ */

/* The arguments of a subscriptions.authorize call for uris (borrowed):
 * {"uris": [{uri, params}, ...]}. Caller puts. */
static struct json_object *
authorize_args(struct ph_server *srv, struct json_object *uris)
{
	struct json_object *args = json_object_new_object(), *list = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(uris); i++) {
		struct json_object *e = json_object_new_object();
		const char *uri = json_object_get_string(json_object_array_get_idx(uris, i));
		json_object_object_add(e, "uri", json_object_new_string(uri));
		json_object_object_add(e, "params", ph_resources_params(srv, uri));
		json_object_array_add(list, e);
	}
	json_object_object_add(args, "uris", list);
	return args;
}

struct json_object *
ph_subscriptions_allowed_in(struct json_object *res, struct json_object *uris, const char *principal,
			    const char *why)
{
	struct json_object *allowed = ph_jget(res, "allowed"), *out = json_object_new_array();
	size_t n = json_object_array_length(uris);
	if (!json_object_is_type(allowed, json_type_array)) {
		if (res == NULL && why != NULL)
			ph_log("warning", "subscriptions.authorize for %s: %s; nothing is allowed",
			       principal ? principal : "(anonymous)", why);
		else
			ph_log("warning", "subscriptions.authorize %s for %s: nothing is allowed",
			       res ? "answered without an \"allowed\" array" : "failed (see above)",
			       principal ? principal : "(anonymous)");
		return out;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *u = json_object_array_get_idx(uris, i);
		for (size_t j = 0; j < json_object_array_length(allowed); j++)
			if (json_object_is_type(json_object_array_get_idx(allowed, j), json_type_string) &&
			    strcmp(json_object_get_string(json_object_array_get_idx(allowed, j)),
				   json_object_get_string(u)) == 0) {
				json_object_array_add(out, json_object_get(u));
				break;
			}
	}
	return out;
}

struct json_object *
ph_subscriptions_authorize_input(struct ph_server *srv, const char *principal, struct json_object *assigns,
				 struct json_object *uris)
{
	struct json_object *args, *in;
	args = authorize_args(srv, uris);
	in = ph_catalog_hook_input(srv, PHANTOM_KIND_SUBSCRIPTION, "subscriptions.authorize", principal, assigns,
				   args);
	json_object_put(args);
	return in;
}

struct json_object *
ph_subscriptions_authorize(struct ph_server *srv, const struct ph_viewer *who, struct json_object *uris)
{
	const struct ph_registry *reg = srv->conf->registry;
	struct json_object *args, *res, *out;
	size_t n = json_object_array_length(uris);
	if (reg == NULL || reg->sub_authorize == NULL || n == 0) {
		out = json_object_new_array();
		for (size_t i = 0; i < n; i++)
			json_object_array_add(out, json_object_get(json_object_array_get_idx(uris, i)));
		return out;
	}
	args = authorize_args(srv, uris);
	res = ph_catalog_hook(srv, &reg->sub_authorize->h, PHANTOM_KIND_SUBSCRIPTION,
			      "subscriptions.authorize", who->principal, who->assigns, args);
	json_object_put(args);
	out = ph_subscriptions_allowed_in(res, uris, who->principal, NULL);
	json_object_put(res);
	return out;
}

bool
ph_subscriptions_allowed(struct ph_req *r, const char *uri)
{
	struct json_object *one = json_object_new_array(), *ok;
	bool yes;
	json_object_array_add(one, json_object_new_string(uri));
	ok = ph_subscriptions_authorize(r->srv, &r->who, one);
	yes = json_object_array_length(ok) == 1;
	json_object_put(ok);
	json_object_put(one);
	return yes;
}

/* ---- listens kept open on stdio (no hub: this process tells them) ---- */

/* A stdio listen: its id, the kinds granted, and the resource URIs granted
 * with the watches behind those that are files (in swatch). The legacy
 * 2025-11-25 session of the stdio client (after its initialize) is one too,
 * without an id: its resources/subscribe URIs, every list kind, and its
 * notifications carry no subscription id. */
struct kept {
	struct json_object *id;
	bool on[PH_ARRAY_LEN(kinds)];
	char *principal;
	struct json_object *uris; /* array, may be empty */
	struct ph_wsub **subs;
	size_t nsubs;
	struct json_object *pending; /* URIs changed, to ask subscriptions.authorize about */
};
static struct kept **kept;
static size_t nkept;
static struct ph_watch *swatch; /* made at the first listen with URIs */
static struct kept *legacy;     /* the stdio client's legacy session, in kept[] */
static enum ph_log_level legacy_level = PH_LOG_DEBUG; /* its logging/setLevel */
static struct ph_server *kept_srv; /* the configuration the kept entries were resolved in */
static unsigned legacy_gen;     /* changes of legacy_level and of the session */

/* Watches the URIs of k that are files (resolved as by ph_catalog_watch
 * for k's principal with access acc), at most max_dirs directories, and
 * keeps those a handler serves for announcements. */
static void
watch_kept(struct kept *k, struct ph_server *srv, const struct ph_access *acc)
{
	size_t n = json_object_array_length(k->uris);
	if (n == 0 || (swatch == NULL && (swatch = ph_watch_new()) == NULL))
		return;
	k->subs = ph_xcalloc(n, sizeof *k->subs);
	for (size_t i = 0; i < n; i++) {
		const char *uri = json_object_get_string(json_object_array_get_idx(k->uris, i));
		char *path = NULL;
		struct ph_wsub *w;
		/* a URI a handler serves is kept too (no path): a handler's
		 * announcement reaches it (ph_subscriptions_announce) */
		if (ph_catalog_watch(srv, k->principal, acc, uri, &path) == PH_SUB_NONE) {
			free(path);
			continue;
		}
		w = ph_watch_add(swatch, k, uri, path, srv->conf->subscriptions.max_watches);
		free(path);
		if (w == NULL) {
			ph_log("warning", "listen %s: %s is not watched (subscriptions.max_watches is %lld)",
			       json_object_get_string(k->id), uri, srv->conf->subscriptions.max_watches);
			continue;
		}
		k->subs[k->nsubs++] = w;
	}
}

static void
unwatch_kept(struct kept *k)
{
	for (size_t i = 0; i < k->nsubs; i++)
		ph_watch_drop(swatch, k->subs[i]);
	free(k->subs);
	k->subs = NULL;
	k->nsubs = 0;
}

static void
kept_free(struct kept *k)
{
	unwatch_kept(k);
	json_object_put(k->id);
	json_object_put(k->uris);
	json_object_put(k->pending);
	free(k->principal);
	free(k);
}

/* Keeps the stdio listen r (granted kinds on[], resource URIs uris) so a
 * reload and file changes can tell it, at most
 * subscriptions.max_per_principal of them (stdio is one client). Returns
 * false when full. */
static bool
keep_listen(struct ph_req *r, const bool on[], struct json_object *uris)
{
	long long max = r->srv->conf->subscriptions.max_per_principal;
	struct kept *k;
	if (max > 0 && (long long)nkept >= max)
		return false;
	k = ph_xcalloc(1, sizeof *k);
	k->id = json_object_get(r->id);
	memcpy(k->on, on, sizeof k->on);
	k->principal = r->who.principal ? ph_xstrdup(r->who.principal) : NULL;
	k->uris = json_object_get(uris);
	kept_srv = r->srv;
	watch_kept(k, r->srv, r->who.access);
	kept = ph_xrealloc(kept, (nkept + 1) * sizeof *kept);
	kept[nkept++] = k;
	return true;
}

/* True when the two JSON-RPC ids are the same (type and value). */
static bool
same_id(struct json_object *a, struct json_object *b)
{
	if (json_object_get_type(a) != json_object_get_type(b))
		return false;
	if (json_object_is_type(a, json_type_int))
		return json_object_get_int64(a) == json_object_get_int64(b);
	return json_object_is_type(a, json_type_string) && strcmp(json_object_get_string(a),
								   json_object_get_string(b)) == 0;
}

void
ph_subscriptions_cancel(struct json_object *request_id)
{
	for (size_t i = 0; request_id && i < nkept; i++)
		if (kept[i]->id != NULL && same_id(kept[i]->id, request_id)) {
			kept_free(kept[i]);
			kept[i] = kept[--nkept];
			return;
		}
}

size_t
ph_subscriptions_kept(void)
{
	return nkept;
}

/* Sends method with params (taken) as a notification line. */
static void
send_note(int (*send)(void *ctx, const char *json, size_t len), void *ctx, const char *method,
	  struct json_object *params)
{
	struct json_object *n = json_object_new_object();
	size_t len;
	const char *text;
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(method));
	json_object_object_add(n, "params", params);
	text = ph_json_text(n, &len);
	send(ctx, text, len);
	json_object_put(n);
}

void
ph_subscriptions_reloaded(struct ph_server *old, struct ph_server *now, ph_access_of_fn access_of,
			  int (*send)(void *ctx, const char *json, size_t len), void *ctx)
{
	for (size_t i = 0; i < nkept; i++)
		for (size_t k = 0; k < PH_ARRAY_LEN(kinds); k++)
			if (kept[i]->on[k] &&
			    ph_catalog_changed_seen(old, now, access_of, kept[i]->principal, NULL, NULL,
						    kinds[k].kind))
				send_note(send, ctx, kinds[k].method, tagged_id(kept[i]->id));
}

void
ph_subscriptions_rewatch(struct ph_server *now, ph_access_of_fn access_of)
{
	kept_srv = now;
	for (size_t i = 0; i < nkept; i++) {
		bool denied = false;
		const struct ph_access *acc = access_of(now, kept[i]->principal, &denied);
		unwatch_kept(kept[i]);
		if (!denied)
			watch_kept(kept[i], now, acc);
	}
}

int
ph_subscriptions_watch_fd(void)
{
	return swatch ? ph_watch_fd(swatch) : -1;
}

struct note_to {
	int (*send)(void *ctx, const char *json, size_t len);
	void *ctx;
};

/* A watched file changed, or an announcement: noted for the listen (or
 * session) that owns the subscription; flush_updates tells it. */
static void
updated(void *ctx, void *owner, const char *uri)
{
	struct kept *k = owner;
	(void)ctx;
	if (k->pending == NULL)
		k->pending = json_object_new_array();
	json_object_array_add(k->pending, json_object_new_string(uri));
}

/* resources/updated for what each entry noted, asking
 * subscriptions.authorize first, one call per entry for all its URIs. */
static void
flush_updates(struct note_to *to)
{
	for (size_t i = 0; i < nkept; i++) {
		struct kept *k = kept[i];
		struct json_object *ok;
		struct ph_viewer who = {k->principal, NULL, NULL, false, false};
		if (k->pending == NULL)
			continue;
		ok = kept_srv ? ph_subscriptions_authorize(kept_srv, &who, k->pending) : json_object_get(k->pending);
		for (size_t j = 0; j < json_object_array_length(ok); j++) {
			struct json_object *p = tagged_id(k->id);
			json_object_object_add(p, "uri", json_object_get(json_object_array_get_idx(ok, j)));
			send_note(to->send, to->ctx, "notifications/resources/updated", p);
		}
		json_object_put(ok);
		json_object_put(k->pending);
		k->pending = NULL;
	}
}

void
ph_subscriptions_watch_read(int (*send)(void *ctx, const char *json, size_t len), void *ctx)
{
	struct note_to to = {send, ctx};
	if (swatch) {
		ph_watch_read(swatch, updated, &to);
		flush_updates(&to);
	}
}

size_t
ph_subscriptions_announce(const char *uri, int (*send)(void *ctx, const char *json, size_t len), void *ctx)
{
	struct note_to to = {send, ctx};
	size_t n = swatch ? ph_watch_announce(swatch, uri, updated, &to) : 0;
	flush_updates(&to);
	return n;
}

void
ph_subscriptions_forget(void)
{
	for (size_t i = 0; i < nkept; i++)
		kept_free(kept[i]);
	free(kept);
	kept = NULL;
	nkept = 0;
	legacy = NULL;
	kept_srv = NULL;
	ph_watch_free(swatch);
	swatch = NULL;
}

/* ---- the legacy session of the stdio client ------------------------------------ */

/* Drops the legacy session's entry (its subscriptions), if any. */
static void
legacy_drop(void)
{
	for (size_t i = 0; legacy != NULL && i < nkept; i++)
		if (kept[i] == legacy) {
			kept_free(legacy);
			kept[i] = kept[--nkept];
			legacy = NULL;
		}
}

void
ph_subscriptions_stdio_session(struct ph_req *r)
{
	struct json_object *caps = ph_capabilities(r);
	legacy_drop();
	legacy = ph_xcalloc(1, sizeof *legacy);
	/* list changes may be sent without a subscription (mcp-wire §13.3):
	 * those of the kinds this client was told of */
	for (size_t i = 0; i < PH_ARRAY_LEN(kinds); i++)
		legacy->on[i] = ph_jget(caps, kinds[i].cap) != NULL;
	json_object_put(caps);
	legacy->principal = r->who.principal ? ph_xstrdup(r->who.principal) : NULL;
	legacy->uris = json_object_new_array();
	kept_srv = r->srv;
	kept = ph_xrealloc(kept, (nkept + 1) * sizeof *kept);
	kept[nkept++] = legacy;
	legacy_level = PH_LOG_DEBUG;
	legacy_gen++;
}

void
ph_subscriptions_stdio_level(enum ph_log_level level)
{
	legacy_level = level;
	legacy_gen++;
}

enum ph_log_level
ph_subscriptions_stdio_log_level(void)
{
	return legacy_level;
}

unsigned
ph_subscriptions_stdio_gen(void)
{
	return legacy_gen;
}

/* The index of uri in a (an array of strings), or -1. */
static long
uri_at(struct json_object *a, const char *uri)
{
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), uri) == 0)
			return (long)i;
	return -1;
}

void
ph_subscriptions_stdio_subscribe(struct ph_req *r, const char *uri, bool sub, struct ph_outcome *o)
{
	long long max = r->srv->conf->sessions.max_subscriptions;
	long at;
	char *path = NULL;
	if (legacy == NULL) { /* no initialize yet: nothing to send them on later */
		o->result = json_object_new_object();
		return;
	}
	at = uri_at(legacy->uris, uri);
	if (sub && (ph_resources_watch(r, uri, &path) == PH_SUB_NONE || !ph_subscriptions_allowed(r, uri))) {
		free(path);
		ph_outcome_not_found(r, o, uri);
		return;
	}
	free(path);
	if (sub && at < 0 && (long long)json_object_array_length(legacy->uris) >= max) {
		ph_outcome_error(o, PH_E_HANDLER, NULL, "This session holds sessions.max_subscriptions (%lld) "
				 "resource subscriptions; unsubscribe from one first", max);
		return;
	}
	if (sub && at < 0)
		json_object_array_add(legacy->uris, json_object_new_string(uri));
	else if (!sub && at >= 0)
		json_object_array_del_idx(legacy->uris, (size_t)at, 1);
	/* the watches follow the URIs held now */
	unwatch_kept(legacy);
	watch_kept(legacy, r->srv, r->who.access);
	o->result = json_object_new_object();
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

/* Holds the HTTP stream open in this process (there is no hub to take
 * it): a list_changed notification for each granted kind whose counter
 * moves past seen[], a liveness check every keepalive_ms, until the server
 * stops or max_ms, or the shorter alone_max_ms, has passed since t0 (when
 * the request began, in microseconds): the stream holds one of the few
 * processes a host such as mod_fcgid allows, and a web server that buffers
 * the answer never lets a keep-alive fail when the client has gone.
 * Returns true for that graceful end, false when the client went away. */
static bool
hold_open(struct ph_req *r, const bool on[], uint64_t seen[], int64_t t0)
{
	const struct ph_config *c = r->srv->conf;
	int64_t last_ping = t0;
	long long bound_ms = c->subscriptions.max_ms < c->subscriptions.alone_max_ms ? c->subscriptions.max_ms
										       : c->subscriptions.alone_max_ms;
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
		if (now - t0 >= bound_ms * 1000)
			return true;
		if (now - last_ping >= c->subscriptions.keepalive_ms * 1000 || !r->ex->http) {
			last_ping = now;
			if (!ph_req_alive(r))
				return false;
		}
	}
}

/* True when resourceSubscriptions work for this request: the hub takes
 * the stream and watches them (resources.subscribe is advertised). */
static bool
hub_watches(struct ph_req *r)
{
	return r->ex->http && r->ex->ops->handoff != NULL && ph_hub_fd >= 0;
}

/* The URIs of want's resourceSubscriptions this principal may read, each
 * once, in the order asked; empty when resource subscriptions do not work
 * here. Returns the array (caller puts). */
static struct json_object *
grant_uris(struct ph_req *r, struct json_object *want)
{
	struct json_object *rs = ph_jget(want, "resourceSubscriptions"), *seen, *out;
	out = json_object_new_array();
	if (rs == NULL || !(hub_watches(r) || !r->ex->http))
		return out;
	seen = json_object_new_object();
	for (size_t i = 0; i < json_object_array_length(rs); i++) {
		const char *uri = json_object_get_string(json_object_array_get_idx(rs, i));
		char *path = NULL;
		if (json_object_object_get_ex(seen, uri, NULL))
			continue;
		json_object_object_add(seen, uri, NULL);
		if (ph_resources_watch(r, uri, &path) != PH_SUB_NONE)
			json_object_array_add(out, json_object_new_string(uri));
		free(path);
	}
	json_object_put(seen);
	/* the application's word, one call for them all */
	seen = ph_subscriptions_authorize(r->srv, &r->who, out);
	json_object_put(out);
	return seen;
}

/* resourceSubscriptions within subscriptions.max_resource_subscriptions
 * (however long: the hand-over to the hub carries what one body holds).
 * Returns false after setting o. */
static bool
uris_ok(struct ph_req *r, struct json_object *rs, struct ph_outcome *o)
{
	long long max = r->srv->conf->subscriptions.max_resource_subscriptions;
	size_t n = json_object_array_length(rs);
	if ((long long)n > max) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications.resourceSubscriptions "
				 "names %zu URIs, more than subscriptions.max_resource_subscriptions (%lld)", n, max);
		return false;
	}
	return true;
}

/* The filter's known members have their SubscriptionFilter types: the
 * list flags booleans, resourceSubscriptions an array of strings, at most
 * subscriptions.max_resource_subscriptions of them (those this principal
 * may read are acknowledged where the hub watches them). Returns false
 * after setting o to -32602. */
static bool
filter_ok(struct ph_req *r, struct json_object *want, struct ph_outcome *o)
{
	struct json_object *rs = ph_jget(want, "resourceSubscriptions");
	for (size_t i = 0; i < PH_ARRAY_LEN(kinds); i++) {
		struct json_object *v = ph_jget(want, kinds[i].filter);
		if (v != NULL && !json_object_is_type(v, json_type_boolean)) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications.%s must be a boolean",
					 kinds[i].filter);
			return false;
		}
	}
	if (rs == NULL)
		return true;
	if (!json_object_is_type(rs, json_type_array)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL,
				 "Invalid params: notifications.resourceSubscriptions must be an array of URIs");
		return false;
	}
	for (size_t i = 0; i < json_object_array_length(rs); i++)
		if (!json_object_is_type(json_object_array_get_idx(rs, i), json_type_string)) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: "
					 "notifications.resourceSubscriptions[%zu] must be a string", i);
			return false;
		}
	return uris_ok(r, rs, o);
}

/* taskIds (the tasks extension): an array of strings, at most
 * subscriptions.max_task_ids, and only from a request that declares the
 * extension (-32021 otherwise). Returns false after setting o. */
static bool
task_ids_ok(struct ph_req *r, struct json_object *want, struct ph_outcome *o)
{
	struct json_object *ids = ph_jget(want, "taskIds");
	long long max = r->srv->conf->subscriptions.max_task_ids;
	if (ids == NULL)
		return true;
	if (ph_tasks_refuse_listen(r, o))
		return false;
	if (!json_object_is_type(ids, json_type_array)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications.taskIds must be an array of task ids");
		return false;
	}
	if ((long long)json_object_array_length(ids) > max) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications.taskIds names %zu tasks, more "
				 "than subscriptions.max_task_ids (%lld)", json_object_array_length(ids), max);
		return false;
	}
	for (size_t i = 0; i < json_object_array_length(ids); i++)
		if (!json_object_is_type(json_object_array_get_idx(ids, i), json_type_string)) {
			ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications.taskIds[%zu] must be a string", i);
			return false;
		}
	return true;
}

/* subscriptions.max_streams 0: with a hub, HUB_STREAMS bounded by the
 * open-file limit (less room for the hub's own files); without one, each
 * stream holds a worker, so half of them. */
#define HUB_STREAMS 10000
#define HUB_SPARE_FDS 64
static long long
default_max(const struct ph_config *c)
{
	struct rlimit rl;
	long long n = HUB_STREAMS;
	if (ph_hub_fd < 0)
		return c->workers > 1 ? c->workers / 2 : 1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (long long)rl.rlim_cur - HUB_SPARE_FDS < n)
		n = (long long)rl.rlim_cur - HUB_SPARE_FDS;
	return n > 1 ? n : 1;
}

long long
ph_subscriptions_max(const struct ph_config *c)
{
	return c->subscriptions.max_streams != 0 ? c->subscriptions.max_streams : default_max(c);
}

/* Hands the acknowledged stream to the hub: its id, the kinds granted (in
 * the order of kinds[]), the resource URIs granted (uris, borrowed) and
 * the principal. Returns true when the hub has it. */
static bool
hand_over(struct ph_req *r, const bool on[], struct json_object *uris, struct json_object *tasks)
{
	struct json_object *d;
	const char *text;
	size_t len;
	bool done;
	if (r->ex->ops->handoff == NULL || ph_hub_fd < 0)
		return false;
	d = ph_hubmsg_listen(r, on, uris, tasks);
	text = ph_json_text(d, &len);
	done = r->ex->ops->handoff(r->ex, text, len) == 0;
	json_object_put(d);
	return done;
}

void
ph_m_subscriptions_listen(struct ph_req *r, struct ph_outcome *o)
{
	const struct ph_config *c = r->srv->conf;
	struct json_object *want = ph_jget(r->params, "notifications"), *ack, *uris, *tasks;
	bool kept_ok;
	bool on[PH_ARRAY_LEN(kinds)];
	uint64_t seen[PH_ARRAY_LEN(kinds)];
	int64_t t0 = ph_now_us();
	long long max = c->subscriptions.max_streams;

	if (want == NULL || !json_object_is_type(want, json_type_object)) {
		ph_outcome_error(o, PH_E_PARAMS, NULL, "Invalid params: notifications must be an object");
		return;
	}
	if (!filter_ok(r, want, o) || !task_ids_ok(r, want, o))
		return;
	max = ph_subscriptions_max(c);
	if (!ph_shared_listener_enter(max)) {
		ph_outcome_error(o, PH_E_HANDLER, NULL,
				 "Too many open subscriptions (subscriptions.max_streams is %lld)", max);
		return;
	}
	/* honour only what this server advertises (the ack narrows the filter) */
	ack = tagged(r);
	json_object_object_add(ack, "notifications", grant_filter(r, want, on, seen));
	uris = grant_uris(r, want);
	if (json_object_array_length(uris) > 0)
		json_object_object_add(ph_jget(ack, "notifications"), "resourceSubscriptions",
				       json_object_get(uris));
	/* the tasks of this principal, where the hub can tell the stream */
	tasks = hub_watches(r) && ph_jget(want, "taskIds") ? ph_tasks_grant(r, ph_jget(want, "taskIds")) : NULL;
	if (tasks)
		json_object_object_add(ph_jget(ack, "notifications"), "taskIds", json_object_get(tasks));
	if (ph_req_notify(r, "notifications/subscriptions/acknowledged", ack) != 0) {
		json_object_put(uris);
		json_object_put(tasks);
		goto gone;
	}
	if (r->ex->http && hand_over(r, on, uris, tasks)) {
		/* the hub holds the stream and its slot from here on */
		ph_shared_listener_give();
		json_object_put(uris);
		json_object_put(tasks);
		r->resp.detached = true;
		return;
	}
	json_object_put(tasks);
	if (!r->ex->http) {
		/* stdio: other requests interleave with the subscription, so it
		 * stays open without holding the process; it ends with
		 * notifications/cancelled or EOF, and a reload (SIGHUP) tells it
		 * what changed (ph_subscriptions_reloaded). */
		ph_shared_listener_leave();
		kept_ok = keep_listen(r, on, uris);
		json_object_put(uris);
		if (!kept_ok) {
			ph_outcome_error(o, PH_E_HANDLER, NULL, "Too many open subscriptions "
					 "(subscriptions.max_per_principal is %lld)",
					 c->subscriptions.max_per_principal);
			return;
		}
		r->resp.detached = true;
		return;
	}
	json_object_put(uris);
	if (!hold_open(r, on, seen, t0))
		goto gone;
	/* a graceful end: the result closes the stream; the client listens again */
	o->result = tagged(r);
	ph_shared_listener_leave();
	return;
gone:
	ph_shared_listener_leave();
	ph_outcome_error(o, PH_E_HANDLER, NULL, "client went away");
}
