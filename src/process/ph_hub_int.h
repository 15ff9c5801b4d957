/* ph_hub_int.h: what the files of the hub share (ph_hub.c the loop,
 * signals and reload; ph_hub_stream.c the streams and their queues;
 * ph_hub_receive.c the channel's messages; ph_hub_subs.c the resource
 * subscriptions; ph_hub_ctl.c the control socket). Not for use outside
 * process/ph_hub*.c. */
#ifndef PH_HUB_INT_H
#define PH_HUB_INT_H
#include "first.h"
#include "ph_hubmsg.h"
#include "ph_server.h"
#include "ph_util.h"

struct ph_run;

/* The list kinds a stream may ask to hear about, in the order of the
 * hand-over message's "on" array (ph_hub.c). */
#define NKINDS PH_HUBMSG_KINDS
struct ph_hub_kind {
	enum ph_kind kind;
	const char *method;
};
extern const struct ph_hub_kind ph_hub_kinds[NKINDS];

struct stream {
	int fd;
	unsigned rid;             /* the FastCGI request id */
	struct json_object *id;   /* the listen request's id: the subscription id */
	char *principal;          /* NULL when anonymous */
	struct ph_access *own;    /* allow-lists its authenticator gave, NULL: the configured ones */
	struct json_object *assigns; /* its principal's assigns, NULL: none */
	bool on[NKINDS];
	int64_t opened_us, ping_us;
	unsigned long events;
	struct ph_buf out;        /* records not yet written, from off */
	size_t off;
	bool want_out;            /* EPOLLOUT armed */
	bool ending;              /* the final result is queued: close once written */
	size_t idx;               /* in hub.v */
	char **uris;              /* resourceSubscriptions granted by the worker */
	size_t nuris;
	struct ph_wsub **wsubs;   /* the subscriptions of those this principal may read now */
	size_t nwsubs;
	struct json_object *tasks; /* taskIds granted by the worker (an array), or NULL */
	bool get;                 /* a legacy session's GET stream */
	bool counted;             /* in per_principal (a listen stream with a principal) */
	struct ph_hstate *sess;   /* its session's state, NULL once that is gone */
	bool dropped;             /* out of the hub, freed after this round of events */
};

struct hub {
	struct ph_server *srv;    /* owned */
	const struct ph_run *run;
	int chan, ep, sig;
	int ctl;                  /* the control socket, -1 when none */
	char *ctl_path;           /* its path, unlinked at exit (owned) */
	int ctl_ep;               /* the control connections being read */
	struct ctl_conn **cc;     /* those connections (CTL_CONNS_MAX slots) */
	size_t ncc;
	struct stream **v;
	size_t n, cap;
	/* streams dropped in this round of events: an event of the same
	 * epoll_wait may still name one, so they are freed after it */
	struct stream **dead;
	size_t ndead, dead_cap;
	struct json_object *per_principal; /* listen streams held, by principal (a hash) */
	struct ph_watch *watch;   /* resource subscriptions, NULL without inotify */
	bool stopping, want_stop, want_reload;
	int64_t stop_deadline_us;
	struct ph_hub_tasks *tasks; /* the task processes (ph_hub_task.c) */
	struct ph_hub_sessions *sessions; /* legacy sessions (ph_hub_session.c) */
	struct ph_hub_authz *authz; /* subscriptions.authorize before resources/updated */
	struct ph_hub_cluster *cluster; /* cluster: announcements shared (NULL: none) */
};

/* ---- ph_hub_stream.c: streams and their queues ----------------------------- */

/* Removes s from the hub and frees it, logging why it ended. */
void ph_hub_drop(struct hub *h, struct stream *s, const char *why);
/* Frees the streams dropped since the last call (after a round of events). */
void ph_hub_bury(struct hub *h);
/* Writes what s has queued. Returns false when s was dropped. */
bool ph_hub_flush(struct hub *h, struct stream *s);
/* Queues SSE text on s and writes what it can. Returns false when s was
 * dropped (its queue passed subscriptions.max_queue, or the peer went). */
bool ph_hub_send_text(struct hub *h, struct stream *s, const char *text, size_t len);
/* Sends the notification method (a list kind's list_changed) on s.
 * Returns false when s was dropped. */
bool ph_hub_notify_stream(struct hub *h, struct stream *s, const char *method);
/* ph_hub_task_fn: a task's record changed; notifications/tasks to the
 * streams that asked for it. */
void ph_hub_task_changed(void *ctx, const char *id, struct json_object *rec);
/* Sends last (taken; NULL: none) and ends s; closed once written. */
void ph_hub_finish(struct hub *h, struct stream *s, struct json_object *last);
/* Ends s gracefully with its final result (none for a GET stream). */
void ph_hub_end(struct hub *h, struct stream *s);
/* ph_hstate_send_fn and ph_hstate_close_fn for the GET streams. */
bool ph_hub_state_send(void *ctx, void *stream, const char *text, size_t len);
void ph_hub_state_close(void *ctx, void *stream);
/* The web server wrote to s or closed it. Returns false when s was dropped. */
bool ph_hub_readable(struct hub *h, struct stream *s);
/* Ends s at once with a JSON-RPC error saying msg. */
void ph_hub_refuse(struct hub *h, struct stream *s, const char *msg);
/* Drops s's subscriptions from the table. */
void ph_hub_unwatch(struct hub *h, struct stream *s);
/* ph_watch_fn: a change reached stream owner's subscription to uri. */
void ph_hub_updated(void *ctx, void *owner, const char *uri);

/* ---- ph_hub_receive.c: the channel ---------------------------------------------- */

/* Reads every message pending on the channel and hands each to the
 * handler of its type. */
void ph_hub_receive(struct hub *h);

/* ---- ph_hub_subs.c: resource subscriptions ---------------------------------- */

/* Takes the resourceSubscriptions granted to s (uris, borrowed) and
 * watches them. */
void ph_hub_watch_start(struct hub *h, struct stream *s, struct json_object *uris);
/* After a reload: every stream's subscriptions again. */
void ph_hub_rewatch(struct hub *h);
/* resources/updated for uri to its subscribers, streams and sessions. */
void ph_hub_announce(struct hub *h, const char *uri);

/* ---- ph_hub_ctl.c: the control socket (phantom-fcgi --notify) ------------------ */

/* Listens on subscriptions.control_socket; h->ctl stays -1 when it cannot. */
void ph_hub_ctl_open(struct hub *h);
/* The control socket is readable: new clients. */
void ph_hub_ctl_accept(struct hub *h);
/* The clients' epoll set is readable: what they sent. */
void ph_hub_ctl_events(struct hub *h);
/* Called every loop while clients are being read: the slow ones end. */
void ph_hub_ctl_tick(struct hub *h);
/* At exit: the clients are told, the socket closed and its file removed. */
void ph_hub_ctl_close(struct hub *h);
#endif
