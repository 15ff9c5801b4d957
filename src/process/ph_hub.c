/* ph_hub.c: the hub. A worker that has acknowledged a subscriptions/listen
 * hands the FastCGI connection over (its fd, with SCM_RIGHTS, and a small
 * JSON description of the stream) and goes back to accept; the hub writes
 * the FastCGI records from then on: the notifications the stream asked for,
 * keep-alive comments, and at the end the listen request's result,
 * FCGI_END_REQUEST and close. One epoll loop, non-blocking sockets, one
 * output queue per stream, bounded. A legacy session's GET stream is one
 * of these streams too: it belongs to the session's state
 * (ph_hub_state.c), which gives it the session's events, and it ends
 * without a result (the client opens another, with Last-Event-ID).
 *
 * This file is the loop, its signals, reloads and time; the streams and
 * their queues are ph_hub_stream.c's, the channel's messages
 * ph_hub_receive.c's, the resource subscriptions ph_hub_subs.c's, the
 * control socket ph_hub_ctl.c's (what they share: ph_hub_int.h). */
#include "first.h"
#include "ph_hub.h"
#include "ph_cluster.h"
#include "ph_hub_int.h"
#include "ph_hub_authz.h"
#include "ph_hub_cluster.h"
#include "ph_hub_task.h"
#include "ph_watch.h"
#include "ph_auth.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_registry.h"
#include "ph_core.h"
#include "ph_features.h"
#include "ph_fcgi_split.h"
#include "ph_util.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

const struct ph_hub_kind ph_hub_kinds[NKINDS] = {
	{PH_KIND_TOOL, "notifications/tools/list_changed"},
	{PH_KIND_PROMPT, "notifications/prompts/list_changed"},
	{PH_KIND_RESOURCE, "notifications/resources/list_changed"},
};

/* Sentinels telling the channel and the signal fd apart in epoll events. */
static char chan_tag, sig_tag, ctl_tag, ctlc_tag, watch_tag, park_tag, state_tag, authz_tag;

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
		struct ph_viewer who = {NULL, assigns, own, own != NULL, false};
		ph_viewer_describe(&who, d);
		json_object_array_add(key, d);
	}
	k = json_object_to_json_string_ext(key, JSON_C_TO_STRING_PLAIN);
	if (!json_object_object_get_ex(cache, k, &c)) {
		c = json_object_new_array();
		for (size_t i = 0; i < NKINDS; i++)
			json_object_array_add(c, json_object_new_boolean(ph_catalog_changed_seen(
				old, h->srv, ph_auth_configured_access, principal, own, assigns, ph_hub_kinds[i].kind)));
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
		changed[k] = ph_catalog_changed(old, n, ph_hub_kinds[k].kind);
	n->resume = old->resume;
	h->srv = n;
	ph_hub_tasks_reconf(h->tasks, n);
	ph_hub_authz_reconf(h->authz, n);
	ph_hub_cluster_reconf(h);
	ph_hub_rewatch(h);
	cache = json_object_new_object();
	ph_hub_sessions_reconf(h->sessions, n);
	for (size_t i = h->n; i-- > 0;) {
		struct stream *s = h->v[i];
		bool mine[NKINDS];
		changed_for(h, old, changed, s->principal, s->own, s->assigns, cache, mine);
		for (size_t k = 0; k < NKINDS && !s->ending; k++)
			if (mine[k] && s->on[k] && (told++, !ph_hub_notify_stream(h, s, ph_hub_kinds[k].method)))
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
			ph_hub_end(h, s);
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
		else if (si.ssi_signo == SIGCHLD) {
			ph_hub_authz_reap(h->authz); /* first: the tasks reap any child */
			ph_hub_tasks_reap(h->tasks);
		}
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
		ph_hub_end(h, h->v[i]);
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
	/* the streams and parked calls the hub holds are the FastCGI front's
	 * connections: a call whose answer another host took (cluster:) is
	 * resumed here on its connection, as a worker would */
	srv->resume = &ph_fcgi_resume_ops;
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
	h->tasks = ph_hub_tasks_new(srv, ph_hub_cluster_task_changed, h);
	h->sessions = ph_hub_sessions_new(srv);
	ev.data.ptr = &park_tag;
	epoll_ctl(h->ep, EPOLL_CTL_ADD, ph_hub_sessions_fd(h->sessions), &ev);
	ph_hub_states_streams(ph_hub_sessions_states(h->sessions), ph_hub_state_send, ph_hub_state_close, h);
	h->authz = ph_hub_authz_new(srv);
	ph_hub_states_authz(ph_hub_sessions_states(h->sessions), h->authz);
	ev.data.ptr = &authz_tag;
	epoll_ctl(h->ep, EPOLL_CTL_ADD, ph_hub_authz_fd(h->authz), &ev);
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
	h->cluster = ph_hub_cluster_new(h);
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
				ph_hub_cluster_watch_read(&h);
			else if (p == &park_tag)
				ph_hub_sessions_events(h.sessions);
			else if (p == &state_tag)
				ph_hub_cluster_states_watch_read(&h);
			else if (p == &authz_tag)
				ph_hub_authz_events(h.authz);
			else if (ph_hub_cluster_event(h.cluster, p, evs[i].events))
				;
			else if (((struct stream *)p)->dropped)
				; /* dropped by an earlier event of this round */
			else if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
				if (ph_hub_readable(&h, p) && (evs[i].events & EPOLLOUT))
					ph_hub_flush(&h, p);
			} else if (evs[i].events & EPOLLOUT)
				ph_hub_flush(&h, p);
		}
		ph_hub_bury(&h);
		if (h.want_reload && !h.stopping)
			reload(&h);
		h.want_reload = false;
		if (h.want_stop && !h.stopping)
			stop(&h);
		tick(&h);
		if (h.ncc > 0)
			ph_hub_ctl_tick(&h);
		/* with cluster: this host's lease and the pass over the task
		 * records, on the hub's asynchronous connection (never waited for) */
		ph_hub_lease_tick(ph_hub_cluster_conn(h.cluster));
		ph_hub_tasks_tick(h.tasks, ph_hub_cluster_conn(h.cluster));
		ph_hub_sessions_tick(h.sessions);
		ph_hub_authz_tick(h.authz);
		ph_hub_cluster_tick(h.cluster);
	}
	ph_log("notice", "hub %d exiting with %zu streams open", (int)getpid(), h.n);
	while (h.n > 0)
		ph_hub_drop(&h, h.v[h.n - 1], "the hub stopped");
	ph_hub_bury(&h);
	free(h.dead);
	ph_hub_ctl_close(&h);
	ph_hub_cluster_free(h.cluster); /* before the sessions it answers for */
	free(h.v);
	json_object_put(h.per_principal);
	ph_hub_tasks_free(h.tasks);
	ph_watch_free(h.watch);
	ph_hub_sessions_free(h.sessions);
	ph_hub_authz_free(h.authz);
	ph_server_free(h.srv);
	return 0;
}
