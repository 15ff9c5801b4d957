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
 * resource again, which reads the second). */
#include "first.h"
#include "ph_hub_cluster.h"
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

/* How long a watcher's announcement from here keeps an echo of it from
 * another host's watcher (the same file seen on a shared disk) away. */
#define ECHO_MS 1000
#define ECHO_SLOTS 64
/* URIs one batch of watch events publishes at most (the rest are told
 * here only, and logged). */
#define BATCH_MAX 256
/* How long an announcement may take to arrive: an older one (replayed by
 * someone who can publish on the Redis) is dropped. */
#define MSG_TTL_S 60
/* The depth of an announcement's JSON. */
#define MSG_DEPTH PH_JSON_DEPTH_DOCUMENT
/* The announcement channel's kind (ph_cluster_key). */
#define PH_CK_ANNOUNCE "a"
/* A legacy session's shared record: a hash whose fields ("d" ended, "l"
 * its log level) are sealed each for the key and the field. */
#define PH_CK_SESSION "s"
/* How long a worker's session question waits for Redis at most before the
 * hub answers from what it knows itself (the worker waits 500 ms for the
 * hub: core/ph_session.c HUB_ASK_MS). */
#define DEFER_MAX_MS 300

struct ph_hub_cluster;

/* Which URIs a watcher told here, and when (milliseconds). */
struct echo {
	uint64_t hash;
	int64_t at_ms;
};

/* URIs changed in one batch of watch events, published once each. */
struct batch {
	char *uri[BATCH_MAX];
	size_t n;
	size_t dropped;
};

#ifdef PH_HAVE_HIREDIS
#include "ph_hub_cluster_conn.h"
#include <hiredis/hiredis.h>
#endif

struct ph_hub_cluster {
	struct hub *h;
	struct echo echo[ECHO_SLOTS];   /* URIs this hub's watchers told */
	struct echo remote[ECHO_SLOTS]; /* URIs another host's watcher told here */
	struct batch batch;
	char ann[PH_CLUSTER_KEY_MAX]; /* the announcement channel */
	char wake[PH_CLUSTER_KEY_MAX]; /* this host's wake-up channel */
	char mbox[PH_CLUSTER_KEY_MAX]; /* this host's mailbox of answers (ph_park.c) */
	bool draining, again;
	long long timeout_ms;
	struct defer **dv;            /* session answers waiting for Redis */
	size_t nd;
#ifdef PH_HAVE_HIREDIS
	struct ph_hcl *conn;
#endif
};

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

static void session_note(struct ph_hub_cluster *c, struct json_object *doc);

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
		session_note(c, doc);
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

/* Seals doc (taken) for the announcement channel and publishes it; while
 * Redis is unreachable it is told here only (the outage was logged). */
static void
publish(struct ph_hub_cluster *c, struct json_object *doc)
{
	unsigned char *box;
	const char *plain;
	size_t plen, blen;
	json_object_object_add(doc, "o", json_object_new_string(ph_shared_host_tag()));
	json_object_object_add(doc, "x", json_object_new_int64(ph_now_us() / 1000000 + MSG_TTL_S));
	plain = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &plen);
	box = ph_cluster_seal(c->ann, plain, plen, &blen);
	json_object_put(doc);
#ifdef PH_HAVE_HIREDIS
	{
		const char *argv[3] = {"PUBLISH", c->ann, (const char *)box};
		size_t len[3] = {7, strlen(c->ann), blen};
		ph_hcl_cmd(c->conn, 3, argv, len, NULL, NULL, NULL);
	}
#endif
	free(box);
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

/* ---- legacy sessions ----------------------------------------------------------- */

#ifdef PH_HAVE_HIREDIS
/* A worker's session question, answered once Redis has replied (or at
 * deadline_us from what this hub knows: out). */
struct defer {
	struct ph_hub_cluster *c;
	int fd;                   /* the worker's reply socket, -1 once answered */
	enum ph_hubmsg_type type;
	unsigned char sid[PH_HUBMSG_SID_BYTES];
	int64_t exp, deadline_us;
	char key[PH_CLUSTER_KEY_MAX];
	char out[300];
	struct json_object *rec;  /* SESSION_OPEN: the record read, before its events */
};

/* The associated data of field f of the session record key. */
static void
field_ad(const char *key, const char *f, char *out, size_t n)
{
	snprintf(out, n, "%s#%s", key, f);
}

/* Answers d's worker with text (once) and forgets d when done (its
 * command's reply came). */
static void
defer_answer(struct defer *d, const char *text)
{
	if (d->fd < 0)
		return;
	ph_hub_sessions_answer(d->fd, text);
	d->fd = -1;
}

static void
defer_drop(struct defer *d)
{
	struct ph_hub_cluster *c = d->c;
	for (size_t i = 0; i < c->nd; i++)
		if (c->dv[i] == d) {
			c->dv[i] = c->dv[--c->nd];
			break;
		}
	defer_answer(d, d->out);
	free(d);
}

/* The reply to HGETALL of a session record: ended elsewhere, or the level
 * another host set. */
static void
checked(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	char ad[PH_CLUSTER_KEY_MAX + 4], out[300];
	(void)ctx;
	for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
		const char *f = r->element[i]->str;
		char *v;
		size_t vlen;
		if (r->element[i]->type != REDIS_REPLY_STRING || r->element[i + 1]->type != REDIS_REPLY_STRING ||
		    strlen(f) != 1)
			continue;
		field_ad(d->key, f, ad, sizeof ad);
		if ((v = ph_cluster_open(ad, r->element[i + 1]->str, r->element[i + 1]->len, &vlen)) == NULL)
			continue;
		if (*f == 'd') {
			ph_hub_sessions_ended_elsewhere(d->c->h->sessions, d->sid, strtoll(v, NULL, 10));
			snprintf(d->out, sizeof d->out, "ended");
		} else if (*f == 'l' && strncmp(d->out, "live", 4) == 0 && ph_log_level_parse(v) != PH_LOG_NONE) {
			snprintf(out, sizeof out, "live %s", v);
			memcpy(d->out, out, sizeof out);
		}
		free(v);
		if (strcmp(d->out, "ended") == 0)
			break;
	}
	defer_drop(d);
}

/* The reply to HSET of a session's field: the worker is told once it is
 * stored for every host (an END that Redis did not store is refused). */
static void
stored(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	bool ok = r != NULL && r->type != REDIS_REPLY_ERROR;
	(void)ctx;
	if (d->type == PH_HUBMSG_SESSION_END && ok) {
		struct json_object *doc = json_object_new_object();
		char hex[2 * PH_HUBMSG_SID_BYTES + 1];
		sodium_bin2hex(hex, sizeof hex, d->sid, sizeof d->sid);
		json_object_object_add(doc, "d", json_object_new_string(hex));
		json_object_object_add(doc, "e", json_object_new_int64(d->exp));
		publish(d->c, doc);
	} else if (d->type == PH_HUBMSG_SESSION_END) {
		snprintf(d->out, sizeof d->out, "no the cluster's Redis did not record it within "
			 "cluster.timeout_ms, so the other hosts still take the session; try again");
	} else if (!ok) {
		ph_log("warning", "hub: cluster: a session's log level is kept on this host only (Redis "
		       "did not store it)");
	}
	defer_drop(d);
}

/* Sends HSET key field value(sealed) and PEXPIREAT at the session's
 * expiry; stored() answers d. */
static void
store_field(struct defer *d, const char *field, const char *value)
{
	char ad[PH_CLUSTER_KEY_MAX + 4], at[24], key[PH_CLUSTER_KEY_MAX];
	struct ph_hcl *conn = d->c->conn;
	size_t blen;
	unsigned char *box;
	/* d may be answered and freed within the first command (Redis down) */
	memcpy(key, d->key, sizeof key);
	field_ad(key, field, ad, sizeof ad);
	box = ph_cluster_seal(ad, value, strlen(value), &blen);
	snprintf(at, sizeof at, "%lld", (long long)(d->exp + 60) * 1000);
	{
		const char *hset[4] = {"HSET", key, field, (const char *)box};
		size_t hlen[4] = {4, strlen(key), strlen(field), blen};
		const char *exp[3] = {"PEXPIREAT", key, at};
		size_t elen[3] = {9, strlen(key), strlen(at)};
		/* one connection: PEXPIREAT runs after HSET made the key */
		ph_hcl_cmd(conn, 4, hset, hlen, stored, d->c, d);
		ph_hcl_cmd(conn, 3, exp, elen, NULL, NULL, NULL);
	}
	free(box);
}

/* The field of the subscription to uri: "u" and a keyed hash of it. */
static void
sub_field(const char *uri, char *out, size_t n)
{
	char k[PH_CLUSTER_KEY_MAX];
	const char *colon;
	ph_cluster_key("u", uri, strlen(uri), k);
	colon = strrchr(k, ':');
	colon = colon ? colon + 1 : k;
	if (n < 2)
		return;
	out[0] = 'u';
	memcpy(out + 1, colon, strlen(colon) + 1 < n - 1 ? strlen(colon) + 1 : n - 1);
	out[n - 1] = '\0';
}

/* What HGETALL r of the session record key holds: {"subs": [{u, p}...],
 * "level"}, its fields opened (caller puts). */
static struct json_object *
read_record(const char *key, struct redisReply *r)
{
	struct json_object *rec = json_object_new_object(), *subs = json_object_new_array();
	char ad[PH_CLUSTER_KEY_MAX + 40];
	json_object_object_add(rec, "subs", subs);
	for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
		struct redisReply *f = r->element[i], *v = r->element[i + 1];
		char *plain;
		size_t plen;
		if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING || f->len > 40)
			continue;
		field_ad(key, f->str, ad, sizeof ad);
		if ((plain = ph_cluster_open(ad, v->str, v->len, &plen)) == NULL)
			continue;
		if (strcmp(f->str, "l") == 0) {
			json_object_object_add(rec, "level", json_object_new_string(plain));
		} else if (f->str[0] == 'u') {
			struct json_object *s = NULL;
			if (ph_json_parse(plain, plen, 4, &s) && json_object_is_type(s, json_type_object))
				json_object_array_add(subs, s);
			else
				json_object_put(s);
		}
		free(plain);
	}
	return rec;
}

/* The events key of the session record key. */
static void
events_key(const char *key, char *out)
{
	const char *colon = strrchr(key, ':');
	ph_cluster_key("e", colon ? colon + 1 : key, strlen(colon ? colon + 1 : key), out);
}

/* SESSION_OPEN, 1: the session's record. */
static void
open_record(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	(void)ctx;
	if (r != NULL)
		d->rec = read_record(d->key, r);
}

/* SESSION_OPEN, 2: its last events (oldest first); all of it merged into
 * this hub's state, which holds the session's GET stream from now on. */
static void
open_events(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	struct json_object *ev = NULL, *doc;
	char hex[2 * PH_HUBMSG_SID_BYTES + 1], ek[PH_CLUSTER_KEY_MAX];
	(void)ctx;
	sodium_bin2hex(hex, sizeof hex, d->sid, sizeof d->sid);
	events_key(d->key, ek);
	if (r != NULL && r->type == REDIS_REPLY_ARRAY) {
		ev = json_object_new_array();
		for (size_t i = 0; i < r->elements; i++) {
			char *plain;
			size_t plen;
			if (r->element[i]->type == REDIS_REPLY_STRING &&
			    (plain = ph_cluster_open(ek, r->element[i]->str, r->element[i]->len, &plen)) != NULL) {
				json_object_array_add(ev, json_object_new_string_len(plain, (int)plen));
				free(plain);
			}
		}
	}
	if (d->rec != NULL)
		ph_hub_states_merge(ph_hub_sessions_states(d->c->h->sessions), hex, ph_jget(d->rec, "subs"),
				    ph_jstr(d->rec, "level"), ev);
	json_object_put(ev);
	json_object_put(d->rec);
	d->rec = NULL;
	doc = json_object_new_object();
	json_object_object_add(doc, "sh", json_object_new_string(hex));
	publish(d->c, doc); /* the other hubs stop recording its events */
	defer_drop(d);
}

/* A note from another host: the session hex's subscriptions changed
 * (sh: its GET stream opened there). */
static void
refreshed(void *ctx, void *priv, struct redisReply *r)
{
	struct ph_hub_cluster *c = ctx;
	char *hex = priv, key[PH_CLUSTER_KEY_MAX];
	struct json_object *rec;
	if (r != NULL) {
		ph_cluster_key(PH_CK_SESSION, hex, strlen(hex), key);
		rec = read_record(key, r);
		ph_hub_states_merge(ph_hub_sessions_states(c->h->sessions), hex, ph_jget(rec, "subs"),
				    ph_jstr(rec, "level"), NULL);
		json_object_put(rec);
	}
	free(hex);
}

static void
session_note(struct ph_hub_cluster *c, struct json_object *doc)
{
	struct ph_hub_states *st = ph_hub_sessions_states(c->h->sessions);
	const char *ss = ph_jstr(doc, "ss"), *sh = ph_jstr(doc, "sh");
	char key[PH_CLUSTER_KEY_MAX];
	if (sh != NULL) {
		ph_hub_states_not_holder(st, sh);
	} else if (ss != NULL && strlen(ss) == 2 * PH_HUBMSG_SID_BYTES && ph_hub_states_has(st, ss)) {
		const char *argv[2] = {"HGETALL", key};
		size_t len[2] = {7, 0};
		ph_cluster_key(PH_CK_SESSION, ss, strlen(ss), key);
		len[1] = strlen(key);
		ph_hcl_cmd(c->conn, 2, argv, len, refreshed, c, ph_xstrdup(ss));
	}
}

/* ph_hstate_event_fn: an event of a session whose GET stream is held
 * here, kept in Redis for a GET stream resumed on another host. */
static void
on_event(void *ctx, const char *sid, int64_t exp, const char *text, size_t len)
{
	struct ph_hub_cluster *c = ctx;
	char key[PH_CLUSTER_KEY_MAX], ek[PH_CLUSTER_KEY_MAX], keep[24], at[24];
	unsigned char *box;
	size_t blen;
	ph_cluster_key(PH_CK_SESSION, sid, strlen(sid), key);
	events_key(key, ek);
	box = ph_cluster_seal(ek, text, len, &blen);
	snprintf(keep, sizeof keep, "-%lld", c->h->srv->conf->sessions.replay);
	snprintf(at, sizeof at, "%lld", (long long)(exp + 60) * 1000);
	{
		const char *push[3] = {"RPUSH", ek, (const char *)box};
		size_t plen[3] = {5, strlen(ek), blen};
		const char *trim[4] = {"LTRIM", ek, keep, "-1"};
		size_t tlen[4] = {5, strlen(ek), strlen(keep), 2};
		const char *exp_[3] = {"PEXPIREAT", ek, at};
		size_t elen[3] = {9, strlen(ek), strlen(at)};
		ph_hcl_cmd(c->conn, 3, push, plen, NULL, NULL, NULL);
		ph_hcl_cmd(c->conn, 4, trim, tlen, NULL, NULL, NULL);
		ph_hcl_cmd(c->conn, 3, exp_, elen, NULL, NULL, NULL);
	}
	free(box);
}

/* The reply to HSET or HDEL of a subscription: the hubs that hold state
 * for the session read its subscriptions again, then the worker is told. */
static void
subs_stored(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	(void)ctx;
	if (r != NULL && r->type != REDIS_REPLY_ERROR) {
		struct json_object *doc = json_object_new_object();
		char hex[2 * PH_HUBMSG_SID_BYTES + 1];
		sodium_bin2hex(hex, sizeof hex, d->sid, sizeof d->sid);
		json_object_object_add(doc, "ss", json_object_new_string(hex));
		publish(d->c, doc);
	} else {
		ph_log("warning", "hub: cluster: a session's resource subscription is kept on this host only "
		       "(Redis did not store it)");
	}
	defer_drop(d);
}

/* Stores (add) or removes the subscription of d's session to uri (path:
 * its file, NULL: none); subs_stored answers d. */
static void
sub_subscription(struct defer *d, bool add, const char *uri, const char *path)
{
	char field[PH_CLUSTER_KEY_MAX], ad[PH_CLUSTER_KEY_MAX + 40], key[PH_CLUSTER_KEY_MAX], at[24];
	struct ph_hcl *conn = d->c->conn;
	memcpy(key, d->key, sizeof key);
	sub_field(uri, field, sizeof field);
	snprintf(at, sizeof at, "%lld", (long long)(d->exp + 60) * 1000);
	if (add) {
		struct json_object *v = json_object_new_object();
		const char *plain;
		unsigned char *box;
		size_t plen, blen;
		json_object_object_add(v, "u", json_object_new_string(uri));
		if (path)
			json_object_object_add(v, "p", json_object_new_string(path));
		plain = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &plen);
		field_ad(key, field, ad, sizeof ad);
		box = ph_cluster_seal(ad, plain, plen, &blen);
		json_object_put(v);
		{
			const char *hset[4] = {"HSET", key, field, (const char *)box};
			size_t hlen[4] = {4, strlen(key), strlen(field), blen};
			const char *exp[3] = {"PEXPIREAT", key, at};
			size_t elen[3] = {9, strlen(key), strlen(at)};
			ph_hcl_cmd(conn, 4, hset, hlen, subs_stored, d->c, d);
			ph_hcl_cmd(conn, 3, exp, elen, NULL, NULL, NULL);
		}
		free(box);
	} else {
		const char *hdel[3] = {"HDEL", key, field};
		size_t hlen[3] = {4, strlen(key), strlen(field)};
		ph_hcl_cmd(conn, 3, hdel, hlen, subs_stored, d->c, d);
	}
}

/* ph_hub_sessions_defer_fn: CHECK asks the session's record (unless this
 * hub knows it ended); END and LEVEL store theirs; the worker is answered
 * after Redis, within DEFER_MAX_MS. */
static bool
defer_session(void *ctx, const struct ph_hubmsg *m, const char *out, int fd)
{
	struct ph_hub_cluster *c = ctx;
	const struct ph_hubmsg_session *s = &m->u.session;
	struct defer *d;
	char hex[2 * PH_HUBMSG_SID_BYTES + 1], num[24];
	bool check = m->type == PH_HUBMSG_SESSION_CHECK && strcmp(out, "ended") != 0;
	bool end = m->type == PH_HUBMSG_SESSION_END && strcmp(out, "ok") == 0 && s->has_exp;
	bool level = m->type == PH_HUBMSG_SESSION_LEVEL && strcmp(out, "ok") == 0 && s->has_exp && s->level;
	bool subs = (m->type == PH_HUBMSG_SESSION_SUB || m->type == PH_HUBMSG_SESSION_UNSUB) &&
		    strcmp(out, "ok") == 0 && s->has_exp && s->uri != NULL;
	bool open = m->type == PH_HUBMSG_SESSION_OPEN && strcmp(out, "ok") == 0;
	if (!check && !end && !level && !subs && !open)
		return false;
	d = ph_xcalloc(1, sizeof *d);
	d->c = c;
	d->fd = fd;
	d->type = m->type;
	memcpy(d->sid, s->sid, sizeof d->sid);
	d->exp = s->exp;
	d->deadline_us = ph_now_us() + (c->timeout_ms < DEFER_MAX_MS ? c->timeout_ms : DEFER_MAX_MS) * 1000;
	snprintf(d->out, sizeof d->out, "%s", out);
	sodium_bin2hex(hex, sizeof hex, s->sid, sizeof s->sid);
	ph_cluster_key(PH_CK_SESSION, hex, strlen(hex), d->key);
	c->dv = ph_xrealloc(c->dv, (c->nd + 1) * sizeof *c->dv);
	c->dv[c->nd++] = d;
	if (check) {
		const char *argv[2] = {"HGETALL", d->key};
		size_t len[2] = {7, strlen(d->key)};
		ph_hcl_cmd(c->conn, 2, argv, len, checked, c, d);
	} else if (end) {
		snprintf(num, sizeof num, "%lld", (long long)s->exp);
		store_field(d, "d", num);
	} else if (level) {
		store_field(d, "l", s->level);
	} else if (open) {
		char ek[PH_CLUSTER_KEY_MAX];
		const char *hget[2] = {"HGETALL", d->key}, *lr[4] = {"LRANGE", ek, "0", "-1"};
		size_t hlen[2] = {7, strlen(d->key)}, llen[4] = {6, 0, 1, 2};
		events_key(d->key, ek);
		llen[1] = strlen(ek);
		ph_hcl_cmd(c->conn, 2, hget, hlen, open_record, c, d);
		ph_hcl_cmd(c->conn, 4, lr, llen, open_events, c, d); /* answers d */
	} else {
		sub_subscription(d, m->type == PH_HUBMSG_SESSION_SUB, s->uri, s->path);
	}
	return true;
}

/* Questions past their deadline are answered from what this hub knows
 * (their commands' replies, when they come, are dropped). */
static void
defer_tick(struct ph_hub_cluster *c)
{
	int64_t now = ph_now_us();
	for (size_t i = 0; i < c->nd; i++)
		if (c->dv[i]->fd >= 0 && now >= c->dv[i]->deadline_us) {
			if (c->dv[i]->type == PH_HUBMSG_SESSION_END)
				snprintf(c->dv[i]->out, sizeof c->dv[i]->out, "no the cluster's Redis did not "
					 "record it within cluster.timeout_ms, so the other hosts still take "
					 "the session; try again");
			defer_answer(c->dv[i], c->dv[i]->out);
		}
}
#endif

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
	ph_hub_sessions_defer(h->sessions, defer_session, c);
	ph_hub_states_on_event(ph_hub_sessions_states(h->sessions), on_event, c);
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
		defer_tick(c);
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
