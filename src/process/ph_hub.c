/* ph_hub.c: the hub. A worker that has acknowledged a subscriptions/listen
 * hands the FastCGI connection over (its fd, with SCM_RIGHTS, and a small
 * JSON description of the stream) and goes back to accept; the hub writes
 * the FastCGI records from then on: the notifications the stream asked for,
 * keep-alive comments, and at the end the listen request's result,
 * FCGI_END_REQUEST and close. One epoll loop, non-blocking sockets, one
 * output queue per stream, bounded. A legacy session's GET stream is one
 * of these streams too: it belongs to the session's state
 * (ph_hub_state.c), which gives it the session's events, and it ends
 * without a result (the client opens another, with Last-Event-ID). */
#include "first.h"
#include "ph_hub.h"
#include "ph_hub_int.h"
#include "ph_hub_task.h"
#include "ph_hubmsg.h"
#include "ph_fcgi_wire.h"
#include "ph_task.h"
#include "ph_watch.h"
#include "ph_auth.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_registry.h"
#include "ph_core.h"
#include "ph_features.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define META_SUBID "io.modelcontextprotocol/subscriptionId"

/* Sentinels telling the channel and the signal fd apart in epoll events. */
static char chan_tag, sig_tag, ctl_tag, ctlc_tag, watch_tag, park_tag, state_tag;

/* ---- FastCGI records ------------------------------------------------------ */


/* ---- streams -------------------------------------------------------------- */

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

/* Removes s from the hub and frees it, logging how it ended. */
void
ph_hub_drop(struct hub *h, struct stream *s, const char *why)
{
	struct stream *last = h->v[h->n - 1];
	ph_log("info", "hub: %s %s of %s ended (%s) after %lld ms, %lu events", s->get ? "session" : "listen",
	       json_object_get_string(s->id), s->principal ? s->principal : "-", why,
	       (long long)((ph_now_us() - s->opened_us) / 1000), s->events);
	epoll_ctl(h->ep, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	last->idx = s->idx;
	h->v[s->idx] = last;
	h->n--;
	ph_shared_listener_leave();
	if (s->sess)
		ph_hub_states_detach(ph_hub_sessions_states(h->sessions), s->sess, s);
	ph_hub_unwatch(h, s);
	for (size_t i = 0; i < s->nuris; i++)
		free(s->uris[i]);
	free(s->uris);
	json_object_put(s->id);
	json_object_put(s->tasks);
	free(s->principal);
	ph_access_free(s->own);
	json_object_put(s->assigns);
	ph_buf_free(&s->out);
	free(s);
}

/* Writes what is queued. Returns false when s was dropped (the peer has
 * gone, or s had ended and is now written out). */
static bool
flush(struct hub *h, struct stream *s)
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
	return flush(h, s);
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
	ph_buf_adds(&b, "event: message\ndata: ");
	ph_buf_add(&b, j, len);
	ph_buf_adds(&b, "\n\n");
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
static void
task_changed(void *ctx, const char *id, struct json_object *rec)
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

/* Ends s gracefully: the listen request's result (the client listens
 * again), the end of stdout, FCGI_END_REQUEST; closed once written. */
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
	flush(h, s);
}

static void
end(struct hub *h, struct stream *s)
{
	if (!s->ending)
		ph_hub_finish(h, s, s->get ? NULL : ph_core_final_result(h->srv, s->id, tagged(s)));
}

/* ph_hstate_send_fn: SSE text from a session's state to its GET stream. */
static bool
state_send(void *ctx, void *stream, const char *text, size_t len)
{
	struct stream *s = stream;
	if (s->ending)
		return true;
	s->events++;
	return ph_hub_send_text(ctx, s, text, len);
}

/* ph_hstate_close_fn: the session's state is gone (DELETE, expiry). */
static void
state_close(void *ctx, void *stream)
{
	struct stream *s = stream;
	s->sess = NULL;
	if (!s->ending)
		ph_hub_finish(ctx, s, NULL);
}

/* The web server wrote to a connection it handed us: only PH_FCGI_ABORT_REQUEST
 * or a close can come. Returns false when s was dropped. */
static bool
readable(struct hub *h, struct stream *s)
{
	unsigned char buf[4096];
	for (;;) {
		ssize_t n = read(s->fd, buf, sizeof buf);
		if (n > 0) {
			if (n >= 2 && buf[1] == PH_FCGI_ABORT_REQUEST) {
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

/* A change reached stream owner's subscription to uri:
 * notifications/resources/updated. */
void
ph_hub_updated(void *ctx, void *owner, const char *uri)
{
	struct hub *h = ctx;
	struct stream *s = owner;
	struct json_object *n, *p;
	if (s->ending)
		return;
	n = json_object_new_object();
	p = tagged(s);
	json_object_object_add(p, "uri", json_object_new_string(uri));
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string("notifications/resources/updated"));
	json_object_object_add(n, "params", p);
	send_event(h, s, n);
}

/* ---- changes, time, signals ------------------------------------------------ */

/* True when what a viewer sees may differ from what everyone sees beyond
 * its allow-lists: an application's resource_lists answer each principal. */
static bool
per_viewer(const struct ph_server *s)
{
	return s->conf->registry != NULL && s->conf->registry->ncatalogs > 0;
}

/* What a viewer sees of each kind changed between old and h->srv: its
 * principal (NULL: anonymous), the allow-lists its authenticator gave (own;
 * NULL: the configured ones, looked up in each configuration, so a change
 * to them alone counts) and its assigns. The answer for everyone (all)
 * when nothing of that can make its view differ; else its own catalogues
 * compared (ph_catalog_changed_seen), kept in cache (an object of arrays,
 * one per viewer) for its other streams and sessions. */
static void
changed_for(struct hub *h, struct ph_server *old, const bool all[], const char *principal,
	    const struct ph_access *own, struct json_object *assigns, struct json_object *cache, bool out[])
{
	bool was_denied, is_denied;
	struct json_object *c, *key;
	const char *k;
	memcpy(out, all, NKINDS * sizeof *out);
	if (principal == NULL)
		return;
	if (own == NULL && assigns == NULL && !per_viewer(old) && !per_viewer(h->srv) &&
	    ph_auth_configured_access(old, principal, &was_denied) == NULL &&
	    ph_auth_configured_access(h->srv, principal, &is_denied) == NULL && !was_denied && !is_denied)
		return;
	key = json_object_new_array();
	json_object_array_add(key, json_object_new_string(principal));
	if (own != NULL || assigns != NULL) {
		struct json_object *d = json_object_new_object();
		struct ph_req who;
		memset(&who, 0, sizeof who);
		who.access = own;
		who.access_own = own != NULL;
		who.assigns = assigns;
		ph_access_describe(&who, d);
		json_object_array_add(key, d);
	}
	k = json_object_to_json_string_ext(key, JSON_C_TO_STRING_PLAIN);
	if (!json_object_object_get_ex(cache, k, &c)) {
		c = json_object_new_array();
		for (size_t i = 0; i < NKINDS; i++)
			json_object_array_add(c, json_object_new_boolean(ph_catalog_changed_seen(
				old, h->srv, ph_auth_configured_access, principal, own, assigns, kinds[i].kind)));
		json_object_object_add(cache, k, c);
	}
	json_object_put(key);
	for (size_t i = 0; i < NKINDS; i++)
		out[i] = json_object_get_boolean(json_object_array_get_idx(c, i));
}

struct changed_ctx {
	struct hub *h;
	struct ph_server *old;
	const bool *all;
	struct json_object *cache;
};

/* ph_hstate_changed_fn for a reload: what changed_for says. */
static bool
session_changed(void *ctx, const char *principal, const struct ph_access *own, struct json_object *assigns,
		size_t k)
{
	struct changed_ctx *c = ctx;
	bool mine[NKINDS];
	changed_for(c->h, c->old, c->all, principal, own, assigns, c->cache, mine);
	return mine[k];
}

/* SIGHUP: the new configuration (the running one stays when it does not
 * load), and list_changed for each kind whose catalogue changed as the
 * stream's principal sees it, to the streams that asked for that kind. */
static void
reload(struct hub *h)
{
	struct ph_server *old = h->srv, *n = ph_server_load(h->run->conf_path);
	struct json_object *cache;
	bool changed[NKINDS];
	size_t told = 0;
	if (n == NULL) {
		ph_log("error", "hub: reload failed: the running configuration stays");
		return;
	}
	for (size_t k = 0; k < NKINDS; k++)
		changed[k] = ph_catalog_changed(old, n, kinds[k].kind);
	h->srv = n;
	ph_hub_tasks_reconf(h->tasks, n);
	ph_hub_rewatch(h);
	cache = json_object_new_object();
	ph_hub_sessions_reconf(h->sessions, n);
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		bool mine[NKINDS];
		changed_for(h, old, changed, s->principal, s->own, s->assigns, cache, mine);
		for (size_t k = 0; k < NKINDS && !s->ending; k++)
			if (mine[k] && s->on[k] && (told++, !ph_hub_notify_stream(h, s, kinds[k].method)))
				break;
	}
	{
		/* every kind: a session's view may change with its allow-list
		 * alone, the catalogue for everyone staying the same */
		struct changed_ctx cc = {h, old, changed, cache};
		for (size_t k = 0; k < NKINDS; k++)
			told += ph_hub_states_list_changed(ph_hub_sessions_states(h->sessions), k,
							   session_changed, &cc);
	}
	json_object_put(cache);
	ph_server_free(old);
	ph_log("notice", "hub: configuration reloaded; lists changed:%s%s%s%s; %zu streams, %zu told",
	       changed[0] ? " tools" : "", changed[1] ? " prompts" : "", changed[2] ? " resources" : "",
	       changed[0] || changed[1] || changed[2] ? "" : " none", h->n, told);
}

/* Keep-alive comments and the end of streams past subscriptions.max_ms. */
static void
tick(struct hub *h)
{
	const struct ph_config *c = h->srv->conf;
	int64_t now = ph_now_us();
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		if (s->ending)
			continue;
		if (now - s->opened_us >= c->subscriptions.max_ms * 1000)
			end(h, s);
		else if (now - s->ping_us >= c->subscriptions.keepalive_ms * 1000) {
			s->ping_us = now;
			ph_hub_send_text(h, s, ": keepalive\n\n", 13);
		}
	}
}

/* Notes the signals that arrived; they are acted on between batches of
 * events (acting on them can end streams that later events name). */
static void
on_signal(struct hub *h)
{
	struct signalfd_siginfo si;
	while (read(h->sig, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGHUP)
			h->want_reload = true;
		else if (si.ssi_signo == SIGCHLD)
			ph_hub_tasks_reap(h->tasks);
		else if (si.ssi_signo == SIGUSR2)
			ph_log("notice", "hub %d: %zu streams, %zu resource subscriptions, %zu watched "
			       "directories, %zu sessions with state", (int)getpid(), h->n, ph_watch_subs(h->watch),
			       ph_watch_dirs(h->watch), ph_hub_states_count(ph_hub_sessions_states(h->sessions)));
		else
			h->want_stop = true; /* SIGTERM, SIGINT, SIGUSR1 */
	}
}

/* SIGTERM: every stream gets its result, then the hub exits (bounded by
 * shutdown_timeout). */
static void
stop(struct hub *h)
{
	h->stopping = true;
	h->stop_deadline_us = ph_now_us() + h->srv->conf->shutdown_timeout * 1000000;
	for (size_t i = h->n; i-- > 0;)
		end(h, h->v[i]);
	ph_hub_tasks_stop(h->tasks);
	ph_hub_sessions_stop(h->sessions);
}

/* The hub's own signals through a signalfd, the channel and the epoll set.
 * Returns 0, or -1 after logging. */
static int
hub_init(struct hub *h, struct ph_server *srv, const struct ph_run *run, int chan)
{
	sigset_t set;
	struct epoll_event ev;
	memset(h, 0, sizeof *h);
	h->srv = srv;
	h->run = run;
	h->chan = chan;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD); /* task supervisors ending */
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	h->sig = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	if (h->sig < 0 || h->ep < 0) {
		ph_log("error", "hub: %s", strerror(errno));
		return -1;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = &chan_tag;
	epoll_ctl(h->ep, EPOLL_CTL_ADD, chan, &ev);
	ev.data.ptr = &sig_tag;
	epoll_ctl(h->ep, EPOLL_CTL_ADD, h->sig, &ev);
	if ((h->watch = ph_watch_new()) != NULL) {
		ev.data.ptr = &watch_tag;
		epoll_ctl(h->ep, EPOLL_CTL_ADD, ph_watch_fd(h->watch), &ev);
	}
	ph_hub_ctl_open(h);
	h->tasks = ph_hub_tasks_new(srv, task_changed, h);
	h->sessions = ph_hub_sessions_new(srv);
	ev.data.ptr = &park_tag;
	epoll_ctl(h->ep, EPOLL_CTL_ADD, ph_hub_sessions_fd(h->sessions), &ev);
	ph_hub_states_streams(ph_hub_sessions_states(h->sessions), state_send, state_close, h);
	if (ph_hub_states_watch_fd(ph_hub_sessions_states(h->sessions)) >= 0) {
		ev.data.ptr = &state_tag;
		epoll_ctl(h->ep, EPOLL_CTL_ADD, ph_hub_states_watch_fd(ph_hub_sessions_states(h->sessions)), &ev);
	}
	if (h->ctl >= 0) {
		ev.data.ptr = &ctl_tag;
		epoll_ctl(h->ep, EPOLL_CTL_ADD, h->ctl, &ev);
		ev.data.ptr = &ctlc_tag;
		epoll_ctl(h->ep, EPOLL_CTL_ADD, h->ctl_ep, &ev);
	}
	return 0;
}

int
ph_hub_run(struct ph_server *srv, const struct ph_run *run, int chan)
{
	struct hub h;
	if (hub_init(&h, srv, run, chan) != 0)
		return 1;
	ph_log("notice", "hub %d started", (int)getpid());
	while (!h.stopping ||
	       ((h.n > 0 || ph_hub_tasks_running(h.tasks) > 0) && ph_now_us() < h.stop_deadline_us)) {
		struct epoll_event evs[256];
		long long ka = h.srv->conf->subscriptions.keepalive_ms;
		int n = epoll_wait(h.ep, evs, 256, ka < 250 ? (int)ka : 250);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &chan_tag)
				ph_hub_receive(&h);
			else if (p == &sig_tag)
				on_signal(&h);
			else if (p == &ctl_tag)
				ph_hub_ctl_accept(&h);
			else if (p == &ctlc_tag)
				ph_hub_ctl_events(&h);
			else if (p == &watch_tag)
				ph_watch_read(h.watch, ph_hub_updated, &h);
			else if (p == &park_tag)
				ph_hub_sessions_events(h.sessions);
			else if (p == &state_tag)
				ph_hub_states_watch_read(ph_hub_sessions_states(h.sessions));
			else if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
				if (readable(&h, p) && (evs[i].events & EPOLLOUT))
					flush(&h, p);
			} else if (evs[i].events & EPOLLOUT)
				flush(&h, p);
		}
		if (h.want_reload && !h.stopping)
			reload(&h);
		h.want_reload = false;
		if (h.want_stop && !h.stopping)
			stop(&h);
		tick(&h);
		if (h.ncc > 0)
			ph_hub_ctl_tick(&h);
		ph_hub_tasks_tick(h.tasks);
		ph_hub_sessions_tick(h.sessions);
	}
	ph_log("notice", "hub %d exiting with %zu streams open", (int)getpid(), h.n);
	while (h.n > 0)
		ph_hub_drop(&h, h.v[h.n - 1], "the hub stopped");
	ph_hub_ctl_close(&h);
	free(h.v);
	ph_hub_tasks_free(h.tasks);
	ph_watch_free(h.watch);
	ph_hub_sessions_free(h.sessions);
	ph_server_free(h.srv);
	return 0;
}
