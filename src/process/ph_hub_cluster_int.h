/* ph_hub_cluster_int.h: what ph_hub_cluster.c (announcements, the
 * watchers, the connections) and ph_hub_cluster_session.c (legacy
 * sessions' shared state) share. Not for use outside them. */
#ifndef PH_HUB_CLUSTER_INT_H
#define PH_HUB_CLUSTER_INT_H
#include "first.h"
#include "ph_hub_int.h"
#include "ph_hubmsg.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

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


/* ---- ph_hub_cluster_session.c (only with hiredis) ---- */
/* An announcement about a session (doc, borrowed): "ss" its subscriptions
 * changed (read again when it holds state here), "sh" its GET stream
 * opened on another host. */
void ph_hub_cluster_session_note(struct ph_hub_cluster *c, struct json_object *doc);
/* ph_hstate_event_fn: an event of a session whose GET stream is held
 * here, kept in Redis for a GET stream resumed on another host. */
void ph_hub_cluster_on_event(void *ctx, const char *sid, int64_t exp, const char *text, size_t len);
/* ph_hub_sessions_defer_fn: CHECK asks the session's record (unless this
 * hub knows it ended); END and LEVEL store theirs; the worker is answered
 * after Redis, within DEFER_MAX_MS. */
bool ph_hub_cluster_defer_session(void *ctx, const struct ph_hubmsg *m, const char *out, int fd);
/* Questions past their deadline are answered from what this hub knows
 * (their commands' replies, when they come, are dropped). */
void ph_hub_cluster_defer_tick(struct ph_hub_cluster *c);
#endif
