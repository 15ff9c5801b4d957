/* ph_hub_receive.c: the hub's channel. Workers send their messages
 * (ipc/ph_hubmsg.h) on it; each is read once and handed to the handler
 * of its type: a stream handed over is adopted here, an announcement goes
 * to the resource subscriptions, the tasks' and the sessions' messages to
 * ph_hub_task.c and ph_hub_session.c. */
#include "first.h"
#include "ph_hub_int.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_hub_task.h"
#include "ph_shared.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Counts s among its principal's listen streams (GET streams do not
 * count) and returns how many that principal holds now: a hashed count,
 * not a scan of every stream at each hand-over (10,000 streams cost 10^8
 * comparisons that way). ph_hub_drop takes it out. */
static size_t
count_principal(struct hub *h, struct stream *s)
{
	struct json_object *n;
	int64_t held;
	if (h->per_principal == NULL)
		h->per_principal = json_object_new_object();
	held = json_object_object_get_ex(h->per_principal, s->principal, &n) ? json_object_get_int64(n) + 1 : 1;
	json_object_object_add(h->per_principal, s->principal, json_object_new_int64(held));
	s->counted = true;
	return (size_t)held;
}

/* Joins the GET stream s to its session's state (d, borrowed: the
 * hand-over's sid, who and last): the events it missed after
 * Last-Event-ID first. One the state refuses ends at once after an SSE
 * comment saying why. */
static void
attach_get(struct hub *h, struct stream *s, const struct ph_hubmsg_stream *d)
{
	struct ph_buf replay;
	char why[200];
	ph_buf_init(&replay);
	s->sess = ph_hub_states_attach(ph_hub_sessions_states(h->sessions), d->sid, d->who, s, d->last, &replay,
				       why, sizeof why);
	if (s->sess == NULL) {
		ph_buf_printf(&replay, ": refused: %s\n\n", why);
		if (ph_hub_send_text(h, s, replay.data, replay.len))
			ph_hub_finish(h, s, NULL);
	} else if (replay.len > 0) {
		ph_hub_send_text(h, s, replay.data, replay.len);
	}
	ph_buf_free(&replay);
}

/* Takes the stream m (LISTEN or GET, borrowed) describes on fd. Returns
 * false (fd closed) when the hub cannot watch it. */
static bool
adopt(struct hub *h, int fd, const struct ph_hubmsg *m)
{
	const struct ph_hubmsg_stream *d = &m->u.stream;
	struct stream *s;
	struct epoll_event ev;
	long long per = h->srv->conf->subscriptions.max_per_principal;
	bool get = m->type == PH_HUBMSG_GET;
	s = ph_xcalloc(1, sizeof *s);
	s->fd = fd;
	s->rid = d->rid;
	/* a GET stream listens to no list of its own, its session tells it */
	s->id = get ? json_object_new_string("GET") : json_object_get(d->id);
	if (d->principal)
		s->principal = ph_xstrdup(d->principal);
	s->own = ph_access_read(d->access);
	s->assigns = json_object_get(d->assigns);
	for (size_t i = 0; i < NKINDS; i++)
		s->on[i] = d->on[i];
	s->tasks = json_object_get(d->tasks);
	s->opened_us = s->ping_us = ph_now_us();
	ph_buf_init(&s->out);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 64;
		h->v = ph_xrealloc(h->v, h->cap * sizeof *h->v);
	}
	s->idx = h->n;
	h->v[h->n++] = s;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLRDHUP;
	ev.data.ptr = s;
	if (epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		ph_log("error", "hub: epoll: %s", strerror(errno));
		ph_hub_drop(h, s, "the hub cannot watch it");
		return false;
	}
	s->get = get;
	if (get) {
		attach_get(h, s, d);
	} else if (s->principal && count_principal(h, s) > (size_t)per && per > 0) {
		char msg[160];
		snprintf(msg, sizeof msg, "Too many open subscriptions for this principal "
			 "(subscriptions.max_per_principal is %lld)", per);
		ph_hub_refuse(h, s, msg);
	} else {
		ph_hub_watch_start(h, s, d->uris);
	}
	return true;
}

/* The longest message the hub takes from a worker: a listen's
 * description (its resourceSubscriptions came in one body) or a client's
 * answer to a pushed request, with room for their JSON escapes. */
static size_t
msg_max(const struct hub *h)
{
	const struct ph_config *c = h->srv->conf;
	long long big = c->http.max_body > c->sessions.max_answer ? c->http.max_body : c->sessions.max_answer;
	return 2 * (size_t)big + 65536;
}

/* LISTEN, GET: a stream handed over with its connection fd. */
static void
on_stream(struct hub *h, const struct ph_hubmsg *m, int fd)
{
	if (fd < 0) {
		ph_log("error", "hub: a worker handed over a stream without its connection");
		return;
	}
	ph_shared_listener_take(); /* the stream's slot is the hub's now */
	adopt(h, fd, m);
}

/* UPDATED: a resource changed. */
static void
on_updated(struct hub *h, const struct ph_hubmsg *m, int fd)
{
	if (fd >= 0)
		close(fd);
	ph_hub_announce(h, m->u.uri);
}

/* TASK_*: the task processes' (ph_hub_task.c). */
static void
on_task(struct hub *h, const struct ph_hubmsg *m, int fd)
{
	ph_hub_tasks_message(h->tasks, m, fd);
}

/* SESSION_*, PARK_*: the legacy sessions' (ph_hub_session.c). */
static void
on_session(struct hub *h, const struct ph_hubmsg *m, int fd)
{
	ph_hub_sessions_message(h->sessions, m, fd);
}

/* Who handles each message; each takes the descriptor that came with it. */
static void (*const handlers[PH_HUBMSG__COUNT])(struct hub *h, const struct ph_hubmsg *m, int fd) = {
	[PH_HUBMSG_LISTEN] = on_stream,
	[PH_HUBMSG_GET] = on_stream,
	[PH_HUBMSG_UPDATED] = on_updated,
	[PH_HUBMSG_TASK_START] = on_task,
	[PH_HUBMSG_TASK_CHANGED] = on_task,
	[PH_HUBMSG_TASK_CANCEL] = on_task,
	[PH_HUBMSG_SESSION_CHECK] = on_session,
	[PH_HUBMSG_SESSION_ISSUED] = on_session,
	[PH_HUBMSG_SESSION_END] = on_session,
	[PH_HUBMSG_SESSION_LEVEL] = on_session,
	[PH_HUBMSG_SESSION_SUB] = on_session,
	[PH_HUBMSG_SESSION_UNSUB] = on_session,
	[PH_HUBMSG_SESSION_OPEN] = on_session,
	[PH_HUBMSG_PARK_CALL] = on_session,
	[PH_HUBMSG_PARK_ANSWER] = on_session,
};

/* A message the hub cannot read (m->type: the type it names, if any),
 * with fd (-1: none): a worker waiting for an answer is told so; a
 * connection is closed, and a stream's slot given back. */
static void
unreadable(const struct ph_hubmsg *m, int fd)
{
	static const char no[] = "no unreadable message";
	ph_log("error", "hub: a %s message from a worker it cannot read; %s", ph_hubmsg_name(m->type),
	       fd >= 0 ? "closed" : "ignored");
	if (fd < 0)
		return;
	switch (m->type) {
	case PH_HUBMSG_SESSION_CHECK:
	case PH_HUBMSG_SESSION_ISSUED:
	case PH_HUBMSG_SESSION_END:
	case PH_HUBMSG_SESSION_LEVEL:
	case PH_HUBMSG_SESSION_SUB:
	case PH_HUBMSG_SESSION_UNSUB:
	case PH_HUBMSG_SESSION_OPEN:
	case PH_HUBMSG_PARK_ANSWER:
		if (ph_send_fd(fd, no, sizeof no - 1, -1, 0) != 0)
			ph_log("warning", "hub: a worker did not wait for the session answer: %s", strerror(errno));
		break;
	case PH_HUBMSG_TASK_START:
	case PH_HUBMSG_PARK_CALL:
		break;
	default: /* a stream's, or one that names no type */
		ph_shared_listener_take();
		close(fd);
		ph_shared_listener_leave();
		return;
	}
	close(fd);
}

/* Receives every pending message on the channel and hands each to its
 * handler by its type. */
void
ph_hub_receive(struct hub *h)
{
	static struct ph_buf text;
	for (;;) {
		struct ph_hubmsg m;
		int fd = -1;
		ssize_t n = ph_recv_msg(h->chan, &text, msg_max(h), &fd, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EMSGSIZE || fd >= 0)) { /* a message came, unusable */
			if (errno == EMSGSIZE)
				ph_log("error", "hub: a message from a worker longer than %zu bytes; %s", msg_max(h),
				       fd >= 0 ? "its connection closed" : "ignored");
			else
				ph_log("error", "hub: a message from a worker could not be read: %s", strerror(errno));
			if (fd >= 0) {
				ph_shared_listener_take();
				close(fd);
				ph_shared_listener_leave();
			}
			continue;
		}
		if (n <= 0) {
			if (fd >= 0)
				close(fd);
			return;
		}
		if (ph_hubmsg_parse(text.data, (size_t)n, ph_hubmsg_depth(h->srv->conf->limits.json_depth), &m))
			handlers[m.type](h, &m, fd);
		else
			unreadable(&m, fd);
		ph_hubmsg_free(&m);
	}
}
