/* ph_hub_stream.c: the hub's streams and their queues. Each stream is a
 * FastCGI connection a worker handed over, written without blocking from
 * a bounded queue (subscriptions.max_queue): the notifications it listens
 * for (list_changed, resources/updated, tasks), the events of its
 * session's state for a GET stream, and at the end the listen request's
 * result, FCGI_END_REQUEST and close. */
#include "first.h"
#include "ph_hub_int.h"
#include "ph_hub_authz.h"
#include "ph_core.h"
#include "ph_fcgi_wire.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_shared.h"
#include "ph_task.h"
#include "ph_watch.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define META_SUBID "io.modelcontextprotocol/subscriptionId"

static void
arm(struct hub *h, struct stream *s, bool out)
{
	struct epoll_event ev;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0);
	ev.data.ptr = s;
	if (epoll_ctl(h->ep, EPOLL_CTL_MOD, s->fd, &ev) == 0)
		s->want_out = out;
}

/* Removes s from the hub, logging how it ended; it is freed by
 * ph_hub_bury once the round of events that may still name it is over. */
void
ph_hub_drop(struct hub *h, struct stream *s, const char *why)
{
	struct stream *last;
	if (s->dropped)
		return;
	last = h->v[h->n - 1];
	ph_log("info", "hub: %s %s of %s ended (%s) after %lld ms, %lu events", s->get ? "session" : "listen",
	       json_object_get_string(s->id), s->principal ? s->principal : "-", why,
	       (long long)((ph_now_us() - s->opened_us) / 1000), s->events);
	epoll_ctl(h->ep, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	last->idx = s->idx;
	h->v[s->idx] = last;
	h->n--;
	ph_shared_listener_leave();
	if (s->counted) {
		struct json_object *n;
		int64_t left = json_object_object_get_ex(h->per_principal, s->principal, &n) ? json_object_get_int64(n) - 1 : 0;
		if (left > 0)
			json_object_object_add(h->per_principal, s->principal, json_object_new_int64(left));
		else
			json_object_object_del(h->per_principal, s->principal);
	}
	if (s->sess)
		ph_hub_states_detach(ph_hub_sessions_states(h->sessions), s->sess, s);
	ph_hub_unwatch(h, s);
	ph_hub_authz_forget(h->authz, s);
	for (size_t i = 0; i < s->nuris; i++)
		free(s->uris[i]);
	free(s->uris);
	json_object_put(s->id);
	json_object_put(s->tasks);
	free(s->principal);
	ph_access_free(s->own);
	json_object_put(s->assigns);
	ph_buf_free(&s->out);
	s->dropped = true;
	s->fd = -1;
	if (h->ndead == h->dead_cap) {
		h->dead_cap = h->dead_cap ? 2 * h->dead_cap : 16;
		h->dead = ph_xrealloc(h->dead, h->dead_cap * sizeof *h->dead);
	}
	h->dead[h->ndead++] = s;
}

void
ph_hub_bury(struct hub *h)
{
	for (size_t i = 0; i < h->ndead; i++)
		free(h->dead[i]);
	h->ndead = 0;
}

/* Writes what is queued. Returns false when s was dropped (the peer has
 * gone, or s had ended and is now written out). */
bool
ph_hub_flush(struct hub *h, struct stream *s)
{
	int rc = ph_buf_write(s->fd, &s->out, &s->off);
	if (rc == 0) {
		if (!s->want_out)
			arm(h, s, true);
		return true;
	}
	if (rc < 0) {
		ph_hub_drop(h, s, "the web server closed the connection");
		return false;
	}
	if (s->want_out)
		arm(h, s, false);
	if (s->ending) {
		ph_hub_drop(h, s, "done");
		return false;
	}
	return true;
}

/* Queues SSE text as PH_FCGI_STDOUT and writes what it can. A client that
 * does not read is dropped once its queue passes subscriptions.max_queue.
 * Returns false when s was dropped. */
bool
ph_hub_send_text(struct hub *h, struct stream *s, const char *text, size_t len)
{
	if (s->out.len - s->off + len > (size_t)h->srv->conf->subscriptions.max_queue) {
		ph_hub_drop(h, s, "the client does not read (subscriptions.max_queue)");
		return false;
	}
	ph_fcgi_records(&s->out, PH_FCGI_STDOUT, s->rid, text, len);
	return ph_hub_flush(h, s);
}

/* Sends one JSON-RPC message (taken) as an SSE event. */
static bool
send_event(struct hub *h, struct stream *s, struct json_object *msg)
{
	struct ph_buf b;
	size_t len;
	const char *j = ph_json_text(msg, &len);
	bool alive;
	ph_buf_init(&b);
	ph_sse_event(&b, 0, j, len);
	json_object_put(msg);
	s->events++;
	alive = ph_hub_send_text(h, s, b.data, b.len);
	ph_buf_free(&b);
	return alive;
}

/* {"_meta": {subscriptionId}}: the params of every notification and the
 * result of the stream (caller puts). */
static struct json_object *
tagged(const struct stream *s)
{
	struct json_object *p = json_object_new_object(), *m = json_object_new_object();
	json_object_object_add(m, META_SUBID, json_object_get(s->id));
	json_object_object_add(p, "_meta", m);
	return p;
}

bool
ph_hub_notify_stream(struct hub *h, struct stream *s, const char *method)
{
	struct json_object *n = json_object_new_object();
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(method));
	json_object_object_add(n, "params", tagged(s));
	return send_event(h, s, n);
}

/* True when s listens for the task id. */
static bool
wants_task(const struct stream *s, const char *id)
{
	for (size_t i = 0; s->tasks && i < json_object_array_length(s->tasks); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(s->tasks, i)), id) == 0)
			return true;
	return false;
}

/* A task's record changed (ph_hub_task.c): notifications/tasks with the
 * task as tasks/get shows it, to the streams that asked for its id and
 * whose principal owns it. */
void
ph_hub_task_changed(void *ctx, const char *id, struct json_object *rec)
{
	struct hub *h = ctx;
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		struct json_object *n, *p, *m;
		if (s->ending || !wants_task(s, id) || !ph_task_owned(rec, s->principal))
			continue;
		p = ph_task_view(rec);
		m = json_object_new_object();
		json_object_object_add(m, META_SUBID, json_object_get(s->id));
		json_object_object_add(p, "_meta", m);
		n = json_object_new_object();
		json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
		json_object_object_add(n, "method", json_object_new_string("notifications/tasks"));
		json_object_object_add(n, "params", p);
		send_event(h, s, n);
	}
}

/* Sends last (taken), the listen request's last message (NULL: none, a
 * GET stream), then the end of stdout and FCGI_END_REQUEST; s is closed
 * once they are written. */
void
ph_hub_finish(struct hub *h, struct stream *s, struct json_object *last)
{
	if (last != NULL && !send_event(h, s, last))
		return;
	s->ending = true;
	ph_fcgi_end(&s->out, s->rid);
	ph_hub_flush(h, s);
}

/* Ends s gracefully: the listen request's result (the client listens
 * again), the end of stdout, FCGI_END_REQUEST; closed once written. */
void
ph_hub_end(struct hub *h, struct stream *s)
{
	if (!s->ending)
		ph_hub_finish(h, s, s->get ? NULL : ph_core_final_result(h->srv, s->id, tagged(s)));
}

/* ph_hstate_send_fn: SSE text from a session's state to its GET stream. */
bool
ph_hub_state_send(void *ctx, void *stream, const char *text, size_t len)
{
	struct stream *s = stream;
	if (s->ending)
		return true;
	s->events++;
	return ph_hub_send_text(ctx, s, text, len);
}

/* ph_hstate_close_fn: the session's state is gone (DELETE, expiry). */
void
ph_hub_state_close(void *ctx, void *stream)
{
	struct stream *s = stream;
	s->sess = NULL;
	if (!s->ending)
		ph_hub_finish(ctx, s, NULL);
}

/* The web server wrote to a connection it handed us: only FCGI_ABORT_REQUEST
 * (ph_fcgi_aborted) or a close can come. Returns false when s was dropped. */
bool
ph_hub_readable(struct hub *h, struct stream *s)
{
	unsigned char buf[4096];
	for (;;) {
		ssize_t n = read(s->fd, buf, sizeof buf);
		if (n > 0) {
			if (ph_fcgi_aborted(buf, (size_t)n)) {
				ph_hub_drop(h, s, "the client went away (FCGI_ABORT_REQUEST)");
				return false;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		ph_hub_drop(h, s, "the client went away");
		return false;
	}
}

/* Ends s at once with a JSON-RPC error (code -32603, message msg) in place
 * of its result: a stream the hub acknowledged but cannot hold. */
void
ph_hub_refuse(struct hub *h, struct stream *s, const char *msg)
{
	struct json_object *e = json_object_new_object(), *err = json_object_new_object();
	json_object_object_add(err, "code", json_object_new_int(-32603));
	json_object_object_add(err, "message", json_object_new_string(msg));
	json_object_object_add(e, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(e, "id", json_object_get(s->id));
	json_object_object_add(e, "error", err);
	ph_hub_finish(h, s, e);
}

void
ph_hub_unwatch(struct hub *h, struct stream *s)
{
	for (size_t i = 0; i < s->nwsubs; i++)
		ph_watch_drop(h->watch, s->wsubs[i]);
	free(s->wsubs);
	s->wsubs = NULL;
	s->nwsubs = 0;
}

/* subscriptions.authorize allowed (an array of URIs) of what changed for
 * stream owner: notifications/resources/updated for each. */
static void
allowed_updates(void *ctx, void *owner, struct json_object *allowed)
{
	struct hub *h = ctx;
	struct stream *s = owner;
	for (size_t i = 0; i < json_object_array_length(allowed) && !s->ending; i++) {
		struct json_object *n = json_object_new_object(), *p = tagged(s);
		json_object_object_add(p, "uri", json_object_get(json_object_array_get_idx(allowed, i)));
		json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
		json_object_object_add(n, "method", json_object_new_string("notifications/resources/updated"));
		json_object_object_add(n, "params", p);
		if (!send_event(h, s, n))
			return;
	}
}

/* A change reached stream owner's subscription to uri: told once
 * subscriptions.authorize allows it (ph_hub_authz.c). */
void
ph_hub_updated(void *ctx, void *owner, const char *uri)
{
	struct hub *h = ctx;
	struct stream *s = owner;
	if (!s->ending)
		ph_hub_authz_updated(h->authz, s, s->principal, s->assigns, uri, allowed_updates, h);
}
