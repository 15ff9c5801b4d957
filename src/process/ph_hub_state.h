/* ph_hub_state.h: the mutable state of legacy 2025-11-25 sessions, kept by
 * the host's hub (ph_hub_state.c) keyed by the session's id: the level set
 * with logging/setLevel, the resources/subscribe subscriptions, the GET
 * streams open on the session and the last events sent on them (for
 * Last-Event-ID). Bounded: sessions.max_state sessions, sessions.max_subscriptions
 * subscriptions each, sessions.replay events each; a session's state is
 * forgotten after sessions.state_idle seconds without a request or a
 * stream, at its expiry, or when it is ended with DELETE. */
#ifndef PH_HUB_STATE_H
#define PH_HUB_STATE_H
#include "first.h"
#include "ph_server.h"
#include "ph_hubmsg.h"
#include "ph_util.h"

struct ph_hub_states;
struct ph_hstate;

/* Queues text (len bytes of SSE) on stream. Returns false when the
 * stream was dropped by it (and so detached). */
typedef bool (*ph_hstate_send_fn)(void *ctx, void *stream, const char *text, size_t len);
/* Ends stream gracefully: its session's state is gone (the stream is
 * already detached). */
typedef void (*ph_hstate_close_fn)(void *ctx, void *stream);
/* True when what principal (NULL: anonymous) sees of list kind k (0 tools,
 * 1 prompts, 2 resources) changed in the reload being announced; own: the
 * allow-lists its authenticator gave (NULL: the configured ones), assigns
 * its assigns (NULL: none), both from the session's latest request. */
typedef bool (*ph_hstate_changed_fn)(void *ctx, const char *principal, const struct ph_access *own,
				     struct json_object *assigns, size_t k);

/* The states of a hub serving srv (borrowed; see ph_hub_states_reconf). */
struct ph_hub_states *ph_hub_states_new(struct ph_server *srv);
/* Frees every state; streams must have been detached (or are dropped
 * without being told). */
void ph_hub_states_free(struct ph_hub_states *t);
/* How the hub's GET streams are written to and ended. */
void ph_hub_states_streams(struct ph_hub_states *t, ph_hstate_send_fn send, ph_hstate_close_fn close,
			   void *ctx);
/* The hub's subscriptions.authorize checks (borrowed; outlives t's
 * states), asked before each session's resources/updated. */
struct ph_hub_authz;
void ph_hub_states_authz(struct ph_hub_states *t, struct ph_hub_authz *authz);
/* After a reload: the limits of srv apply and every subscription is
 * checked again against its principal's access (one it lost is dropped). */
void ph_hub_states_reconf(struct ph_hub_states *t, struct ph_server *srv);
/* A session message m (borrowed) that is about state: SESSION_LEVEL,
 * SESSION_SUB, SESSION_UNSUB, SESSION_OPEN. Writes the answer for the
 * worker in out and returns true; false when m is none of those. */
bool ph_hub_states_message(struct ph_hub_states *t, const struct ph_hubmsg *m, char *out, size_t n);
/* The answer to "check" for a live session: "live", or "live LEVEL" once
 * logging/setLevel set one. The state, if any, counts as used now. */
void ph_hub_states_check(struct ph_hub_states *t, const unsigned char *sid, char *out, size_t n);
/* The session sid was ended: its streams close, its state goes. */
void ph_hub_states_end(struct ph_hub_states *t, const unsigned char *sid);
/* Opens a GET stream on the session sid (hex; who: its binding, borrowed)
 * for stream: the events after Last-Event-ID last (NULL: none) still held
 * are appended to replay (SSE text). Returns the state the stream belongs
 * to (pass to ph_hub_states_detach), or NULL with the reason in why. */
struct ph_hstate *ph_hub_states_attach(struct ph_hub_states *t, const char *sid, const char *who,
				       void *stream, const char *last, struct ph_buf *replay,
				       char *why, size_t n);
void ph_hub_states_detach(struct ph_hub_states *t, struct ph_hstate *st, void *stream);
/* The inotify descriptor of the subscribed files (-1: none); when it is
 * readable ph_hub_states_watch_read sends what changed, asking note (NULL:
 * none) first of each URI it would tell a session of (false: not told). */
int ph_hub_states_watch_fd(const struct ph_hub_states *t);
void ph_hub_states_watch_read(struct ph_hub_states *t, bool (*note)(void *ctx, const char *uri), void *ctx);
/* resources/updated for uri to the sessions subscribed to it (an
 * application's announcement). Returns how many. */
size_t ph_hub_states_announce(struct ph_hub_states *t, const char *uri);
/* After a reload: list_changed of kind k to every session whose view of
 * it changed (changed may be NULL: all of them). Returns how many sessions
 * were told. */
size_t ph_hub_states_list_changed(struct ph_hub_states *t, size_t k, ph_hstate_changed_fn changed,
				  void *ctx);
/* ---- cluster: (process/ph_hub_cluster.c) ---- */
/* An event (len bytes of SSE, "id: N\n...") of the session sid (hex),
 * expiring at exp (seconds), emitted while a GET stream of it was opened
 * here last. */
typedef void (*ph_hstate_event_fn)(void *ctx, const char *sid, int64_t exp, const char *text, size_t len);
void ph_hub_states_on_event(struct ph_hub_states *t, ph_hstate_event_fn fn, void *ctx);
/* A GET stream of sid was opened on another host since. */
void ph_hub_states_not_holder(struct ph_hub_states *t, const char *sid);
/* True when the session sid (hex) holds state here. */
bool ph_hub_states_has(struct ph_hub_states *t, const char *sid);
/* What the other hosts know of sid (hex): its subscriptions (subs, an
 * array of {"u": uri, "p": path}; NULL: leave them), its level (NULL:
 * none) and its last events (an array of SSE texts, oldest first; NULL:
 * none), taken into its state here when it has one. All borrowed. */
void ph_hub_states_merge(struct ph_hub_states *t, const char *sid, struct json_object *subs, const char *level,
			 struct json_object *events);
/* Called every loop: forgets idle and expired states now and then. */
void ph_hub_states_tick(struct ph_hub_states *t);
/* Sessions holding state now. */
size_t ph_hub_states_count(const struct ph_hub_states *t);
#endif
