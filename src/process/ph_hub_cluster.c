/* ph_hub_cluster.c: the hub's asynchronous Redis connections (cluster:).
 *
 * Two connections, both in the hub's epoll loop through the small hiredis
 * adapter below (never a worker's): one subscribed to the announcement
 * channel, one for commands (PUBLISH, and a PING heartbeat). hiredis 0.14
 * has no timeouts of its own in its asynchronous API, so the loop keeps
 * them: a connection that does not connect, or a command that gets no
 * reply, within cluster.timeout_ms ends both connections (a stopped Redis
 * still accepts connections into its backlog); they are made again after
 * a backoff that doubles from BACKOFF_MIN_MS to BACKOFF_MAX_MS, and the
 * subscription with them. Each change between reachable and unreachable
 * is logged once.
 *
 * An announcement is one sealed document (ph_state_seal_doc, purpose
 * "cluster", under the request_state secret every host shares) published
 * on "<prefix>a": {"o": the origin host's tag, "x": expiry, "k": list kind
 * | "u": [URIs], "w": from a watched file}. Nothing of it is readable on
 * the wire or forgeable without the secret; a hub drops its own (its
 * streams were told when it happened), expired ones and those it cannot
 * open, and tells its streams the rest through the same paths as
 * --notify, so each stream's filter and subscriptions.authorize apply.
 *
 * A watched file's change is published too: an NFS or similar volume tells
 * only the host that wrote it. When the hosts share one disk each hub's
 * own watcher also sees it, so it is told once: a remote announcement from
 * a watcher is dropped when this hub's watcher told the same URI within
 * ECHO_MS, and this hub's watcher keeps quiet about a URI another host's
 * watcher told here within ECHO_MS (two changes of one file within ECHO_MS
 * may then be told as one: resources/updated asks the client to read the
 * resource again, which reads the second).
 *
 * Legacy sessions' shared state (DELETE, levels, subscriptions, replay
 * events) is in ph_hub_cluster_session.c. */
#include "first.h"
#include "ph_hub_cluster.h"
#include "ph_hub_cluster_int.h"
#include "ph_hub_int.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_shared.h"
#include "ph_cluster.h"
#include "ph_park.h"
#include "ph_watch.h"
#include "ph_json.h"
#include "ph_util.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t
uri_hash(const char *s)
{
	uint64_t x = 1469598103934665603ULL;
	for (; *s; s++)
		x = (x ^ (unsigned char)*s) * 1099511628211ULL;
	return x;
}

/* Notes that uri was told now in tab (ECHO_SLOTS, the oldest replaced). */
static void
echo_note(struct echo *tab, const char *uri)
{
	struct echo *oldest = &tab[0];
	uint64_t x = uri_hash(uri);
	int64_t now = ph_now_us() / 1000;
	for (size_t i = 0; i < ECHO_SLOTS; i++) {
		if (tab[i].hash == x) {
			tab[i].at_ms = now;
			return;
		}
		if (tab[i].at_ms < oldest->at_ms)
			oldest = &tab[i];
	}
	oldest->hash = x;
	oldest->at_ms = now;
}

/* True when tab says uri was told within ECHO_MS. */
static bool
echo_recent(const struct echo *tab, const char *uri)
{
	uint64_t x = uri_hash(uri);
	int64_t now = ph_now_us() / 1000;
	for (size_t i = 0; i < ECHO_SLOTS; i++)
		if (tab[i].hash == x && tab[i].at_ms > 0 && now - tab[i].at_ms < ECHO_MS)
			return true;
	return false;
}

/* ---- telling this host's streams ------------------------------------------- */

#ifdef PH_HAVE_HIREDIS /* (what comes from the other hosts: none without hiredis) */

/* list_changed of kind k to this hub's streams and sessions that asked for
 * it. Returns how many were told. */
static long
tell_list(struct hub *h, size_t k)
{
	long told = 0;
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		if (s->on[k] && !s->ending && ph_hub_notify_stream(h, s, ph_hub_kinds[k].method))
			told++;
	}
	told += (long)ph_hub_states_list_changed(ph_hub_sessions_states(h->sessions), k, NULL, NULL);
	return told;
}

/* resources/updated for uri to this hub's subscribers. Returns how many. */
static long
tell_updated(struct hub *h, const char *uri)
{
	return (long)ph_watch_announce(h->watch, uri, ph_hub_updated, h) +
	       (long)ph_hub_states_announce(ph_hub_sessions_states(h->sessions), uri);
}

/* An announcement from another host (doc, borrowed, opened). */
static void
received(struct ph_hub_cluster *c, struct json_object *doc)
{
	struct json_object *k = ph_jget(doc, "k"), *u = ph_jget(doc, "u"), *w = ph_jget(doc, "w");
	const char *origin = ph_jstr(doc, "o");
	bool watched = json_object_is_type(w, json_type_boolean) && json_object_get_boolean(w);
	long told = 0;
	if (origin == NULL || strcmp(origin, ph_shared_host_tag()) == 0)
		return; /* ours: told when it happened */
	if (!json_object_is_type(ph_jget(doc, "x"), json_type_int) ||
	    json_object_get_int64(ph_jget(doc, "x")) < ph_now_us() / 1000000) {
		ph_log("warning", "hub: cluster: an expired announcement (replayed?) was dropped");
		return;
	}
	if (json_object_is_type(ph_jget(doc, "t"), json_type_string) &&
	    json_object_is_type(ph_jget(doc, "r"), json_type_object)) {
		ph_hub_task_changed(c->h, ph_jstr(doc, "t"), ph_jget(doc, "r"));
		return;
	}
	if (ph_jget(doc, "ss") != NULL || ph_jget(doc, "sh") != NULL) {
		ph_hub_cluster_session_note(c, doc);
		return;
	}
	if (json_object_is_type(ph_jget(doc, "d"), json_type_string)) {
		unsigned char sid[PH_HUBMSG_SID_BYTES];
		const char *hex = ph_jstr(doc, "d");
		if (strlen(hex) == 2 * sizeof sid &&
		    sodium_hex2bin(sid, sizeof sid, hex, strlen(hex), NULL, NULL, NULL) == 0)
			ph_hub_sessions_ended_elsewhere(c->h->sessions, sid,
							json_object_get_int64(ph_jget(doc, "e")));
		return;
	}
	if (json_object_is_type(k, json_type_int)) {
		int64_t kind = json_object_get_int64(k);
		if (kind < 0 || kind >= NKINDS)
			return;
		told = tell_list(c->h, (size_t)kind);
		ph_log("info", "hub: cluster: %s from another host told %ld streams",
		       ph_hub_kinds[kind].method + strlen("notifications/"), told);
		return;
	}
	if (!json_object_is_type(u, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(u); i++) {
		const char *uri = json_object_get_string(json_object_array_get_idx(u, i));
		if (!json_object_is_type(json_object_array_get_idx(u, i), json_type_string) ||
		    (watched && echo_recent(c->echo, uri)))
			continue;
		if (watched)
			echo_note(c->remote, uri);
		told += tell_updated(c->h, uri);
	}
	ph_log("info", "hub: cluster: resources/updated from another host told %ld streams", told);
}
#endif

/* Seals doc (taken) for the announcement channel and publishes it. */
static void
publish(struct ph_hub_cluster *c, struct json_object *doc)
{
#ifdef PH_HAVE_HIREDIS
	ph_hcl_publish(c->conn, c->ann, doc, MSG_TTL_S);
#else
	(void)c;
	json_object_put(doc);
#endif
}

void
ph_hub_cluster_list_changed(struct ph_hub_cluster *c, size_t k)
{
	struct json_object *doc;
	if (c == NULL || k >= NKINDS)
		return;
	doc = json_object_new_object();
	json_object_object_add(doc, "k", json_object_new_int64((int64_t)k));
	publish(c, doc);
}

void
ph_hub_cluster_updated(struct ph_hub_cluster *c, const char *uri, bool watched)
{
	struct json_object *doc, *u;
	if (c == NULL)
		return;
	doc = json_object_new_object();
	u = json_object_new_array();
	json_object_array_add(u, json_object_new_string(uri));
	json_object_object_add(doc, "u", u);
	if (watched)
		json_object_object_add(doc, "w", json_object_new_boolean(true));
	publish(c, doc);
}

/* The largest task record an announcement carries: the others' streams
 * hear of a larger one's change only through tasks/get. */
#define TASK_MSG_MAX (256 * 1024)

void
ph_hub_cluster_task_changed(void *ctx, const char *id, struct json_object *rec)
{
	struct hub *h = ctx;
	struct json_object *doc;
	size_t len = 0;
	ph_hub_task_changed(h, id, rec);
	if (h->cluster == NULL || rec == NULL)
		return;
	json_object_to_json_string_length(rec, JSON_C_TO_STRING_PLAIN, &len);
	if (len > TASK_MSG_MAX) {
		ph_log("info", "hub: cluster: task %.8s... changed; its record (%zu bytes) is too large to "
		       "announce to the other hosts' streams", id, len);
		return;
	}
	doc = json_object_new_object();
	json_object_object_add(doc, "t", json_object_new_string(id));
	json_object_object_add(doc, "r", json_object_get(rec));
	publish(h->cluster, doc);
}

/* ---- the watchers ------------------------------------------------------------ */

/* Notes uri in the batch being read (once). */
static void
batch_note(struct ph_hub_cluster *c, const char *uri)
{
	struct batch *b = &c->batch;
	echo_note(c->echo, uri);
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->uri[i], uri) == 0)
			return;
	if (b->n == BATCH_MAX) {
		b->dropped++;
		return;
	}
	b->uri[b->n++] = ph_xstrdup(uri);
}

/* Publishes the batch's URIs, one message, and empties it. */
static void
batch_flush(struct ph_hub_cluster *c)
{
	struct batch *b = &c->batch;
	struct json_object *doc, *u;
	if (b->n == 0)
		return;
	doc = json_object_new_object();
	u = json_object_new_array();
	for (size_t i = 0; i < b->n; i++) {
		json_object_array_add(u, json_object_new_string(b->uri[i]));
		free(b->uri[i]);
	}
	json_object_object_add(doc, "u", u);
	json_object_object_add(doc, "w", json_object_new_boolean(true));
	publish(c, doc);
	if (b->dropped > 0)
		ph_log("warning", "hub: cluster: %zu changed resources were told on this host only "
		       "(more than %d in one batch)", b->dropped, BATCH_MAX);
	b->n = b->dropped = 0;
}

/* ph_watch_fn for the streams' watcher: tells the stream and notes the
 * URI, unless another host's watcher told it here within ECHO_MS (the
 * same change of a file on a disk both see, announced there first). */
static void
watched(void *ctx, void *owner, const char *uri)
{
	struct hub *h = ctx;
	if (h->cluster != NULL && echo_recent(h->cluster->remote, uri))
		return;
	ph_hub_updated(h, owner, uri);
	if (h->cluster != NULL)
		batch_note(h->cluster, uri);
}

/* The sessions' watcher saw uri change: the same, for sessions. Returns
 * whether to tell them. */
static bool
states_noted(void *ctx, const char *uri)
{
	struct hub *h = ctx;
	if (h->cluster == NULL)
		return true;
	if (echo_recent(h->cluster->remote, uri))
		return false;
	batch_note(h->cluster, uri);
	return true;
}

void
ph_hub_cluster_watch_read(struct hub *h)
{
	ph_watch_read(h->watch, watched, h);
	if (h->cluster != NULL)
		batch_flush(h->cluster);
}

void
ph_hub_cluster_states_watch_read(struct hub *h)
{
	ph_hub_states_watch_read(ph_hub_sessions_states(h->sessions), states_noted, h);
	if (h->cluster != NULL)
		batch_flush(h->cluster);
}

/* ---- the connections ---------------------------------------------------------- */

#ifdef PH_HAVE_HIREDIS
static void drain(struct ph_hub_cluster *c);

/* ph_hcl_reply_fn of LPOP on the mailbox: an answer another host took for
 * a call parked here, opened and given to the sessions; then the next. */
static void
popped(void *ctx, void *priv, struct redisReply *r)
{
	struct ph_hub_cluster *c = ctx;
	char *plain;
	size_t plen;
	(void)priv;
	if (r == NULL || r->type != REDIS_REPLY_STRING) {
		c->draining = false;
		if (r != NULL && c->again) {
			c->again = false;
			drain(c);
		}
		return;
	}
	if ((plain = ph_cluster_open(c->mbox, r->str, r->len, &plen)) == NULL)
		ph_log("warning", "hub: cluster: an answer in this host's mailbox does not open with this "
		       "server's request_state secret; dropped");
	else
		ph_hub_sessions_remote_answer(c->h->sessions, plain, plen);
	free(plain);
	c->draining = false;
	drain(c);
}

/* Takes the answers in this host's mailbox, one LPOP at a time. */
static void
drain(struct ph_hub_cluster *c)
{
	const char *argv[2] = {"LPOP", c->mbox};
	size_t len[2] = {4, strlen(c->mbox)};
	if (c->draining) {
		c->again = true;
		return;
	}
	c->draining = true;
	ph_hcl_cmd(c->conn, 2, argv, len, popped, c, NULL);
}

/* Connected again: what came in the mailbox meanwhile. */
static void
on_up(void *ctx)
{
	drain(ctx);
}

void
ph_hub_cluster_message(void *ctx, const char *channel, const char *text, size_t len)
{
	struct ph_hub_cluster *c = ctx;
	struct json_object *doc;
	if (strcmp(channel, c->wake) == 0) {
		drain(c);
		return;
	}
	if (strcmp(channel, c->ann) != 0)
		return;
	doc = len <= PH_HCL_MSG_MAX ? ph_cluster_open_json(c->ann, text, len, MSG_DEPTH) : NULL;
	if (doc == NULL)
		ph_log("warning", "hub: cluster: a message that does not open with this server's "
		       "request_state secret was dropped (another server on the same prefix?)");
	else
		received(c, doc);
	json_object_put(doc);
}
#endif

struct ph_hub_cluster *
ph_hub_cluster_new(struct hub *h)
{
#ifdef PH_HAVE_HIREDIS
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	struct ph_hub_cluster *c;
	const char *chan[2];
	if (cc == NULL)
		return NULL;
	c = ph_xcalloc(1, sizeof *c);
	c->h = h;
	ph_cluster_key(PH_CK_ANNOUNCE, "announce", 8, c->ann);
	ph_park_mailbox(PH_PARK_WAKE, ph_shared_host_tag(), c->wake);
	ph_park_mailbox(PH_PARK_MAILBOX, ph_shared_host_tag(), c->mbox);
	chan[0] = c->ann;
	chan[1] = c->wake;
	c->conn = ph_hcl_new(h->ep, chan, 2, ph_hub_cluster_message, c);
	if (c->conn == NULL) {
		free(c);
		return NULL;
	}
	ph_hcl_on_up(c->conn, on_up);
	c->timeout_ms = cc->timeout_ms;
	ph_hub_sessions_defer(h->sessions, ph_hub_cluster_defer_session, c);
	ph_hub_states_on_event(ph_hub_sessions_states(h->sessions), ph_hub_cluster_on_event, c);
	return c;
#else
	(void)h;
	return NULL;
#endif
}

void
ph_hub_cluster_free(struct ph_hub_cluster *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->batch.n; i++)
		free(c->batch.uri[i]);
#ifdef PH_HAVE_HIREDIS
	ph_hub_sessions_defer(c->h->sessions, NULL, NULL);
	ph_hub_states_on_event(ph_hub_sessions_states(c->h->sessions), NULL, NULL);
	ph_hcl_free(c->conn); /* the questions' replies come (NULL): each answered, freed */
	free(c->dv);
#endif
	free(c);
}

void
ph_hub_cluster_reconf(struct hub *h)
{
#ifdef PH_HAVE_HIREDIS
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	struct ph_hub_cluster *c = h->cluster;
	char ann[PH_CLUSTER_KEY_MAX], mbox[PH_CLUSTER_KEY_MAX];
	if (cc != NULL && c != NULL) {
		/* the names follow the prefix and the secret */
		ph_cluster_key(PH_CK_ANNOUNCE, "announce", 8, ann);
		ph_park_mailbox(PH_PARK_MAILBOX, ph_shared_host_tag(), mbox);
		if (strcmp(ann, c->ann) == 0 && strcmp(mbox, c->mbox) == 0) {
			ph_hcl_reconf(c->conn);
			return;
		}
	}
	if (c != NULL) {
		ph_log("notice", "hub: cluster: %s", cc ? "the prefix or the secret changed: connecting again"
			: "no cluster: section any more; announcements stay on this host");
		ph_hub_cluster_free(c);
		h->cluster = NULL;
	}
	if (cc != NULL)
		h->cluster = ph_hub_cluster_new(h);
#else
	(void)h;
#endif
}

bool
ph_hub_cluster_event(struct ph_hub_cluster *c, void *tag, uint32_t events)
{
#ifdef PH_HAVE_HIREDIS
	return c != NULL && ph_hcl_event(c->conn, tag, events);
#else
	(void)c, (void)tag, (void)events;
	return false;
#endif
}

void
ph_hub_cluster_tick(struct ph_hub_cluster *c)
{
#ifdef PH_HAVE_HIREDIS
	if (c != NULL) {
		ph_hcl_tick(c->conn);
		ph_hub_cluster_defer_tick(c);
	}
#else
	(void)c;
#endif
}

bool
ph_hub_cluster_up(const struct ph_hub_cluster *c)
{
#ifdef PH_HAVE_HIREDIS
	return c != NULL && ph_hcl_up(c->conn);
#else
	(void)c;
	return false;
#endif
}

struct ph_hcl *
ph_hub_cluster_conn(const struct ph_hub_cluster *c)
{
#ifdef PH_HAVE_HIREDIS
	return c != NULL ? c->conn : NULL;
#else
	(void)c;
	return NULL;
#endif
}
