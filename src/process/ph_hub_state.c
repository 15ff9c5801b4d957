/* ph_hub_state.c: what the hub keeps for each legacy session that has
 * state. Workers stay stateless: they send the session messages of
 * ipc/ph_hubmsg.h over the master's channel with a reply socket, each
 * naming the session (its sid, expiry, binding, principal, allow-lists and
 * assigns: ph_hubmsg_session_state), and ph_hub_session.c passes those of
 * a session not ended to ph_hub_states_message, whose one line answers:
 *   SESSION_LEVEL (level)          -> "ok" | "no <reason>"
 *   SESSION_SUB (uri, path: the file behind uri, or none)
 *                                  -> "ok" | "no <reason>"
 *   SESSION_UNSUB (uri)            -> "ok" | "no <reason>"
 *   SESSION_OPEN (a GET stream is coming) -> "ok" | "no <reason>"
 * Every request of a session sends SESSION_CHECK, whose answer carries the
 * level ("live LEVEL": ph_hub_states_check). The events of a session
 * (resources/updated, list_changed) get ids 1, 2, 3... in the session; the
 * last sessions.replay of them are held, sent to every GET stream open on
 * the session, and replayed to a GET stream that names the last one it saw
 * in Last-Event-ID. */
#include "first.h"
#include "ph_hub_state.h"
#include "ph_hub_authz.h"
#include "ph_json.h"
#include "ph_watch.h"
#include "ph_auth.h"
#include "ph_features.h"
#include <json-c/linkhash.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SID_HEX 32
/* How often idle and expired states are looked for. */
#define PURGE_EVERY_US 1000000

static const char *const list_methods[] = {
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
};

struct event {
	unsigned long long id;
	char *text; /* the whole SSE event, "id: N\n..." */
	size_t len;
};

struct sub {
	char *uri, *path;     /* path NULL: not a file */
	struct ph_wsub *w;    /* NULL when it is not watched now (a reload narrowed access) */
};

struct ph_hstate {
	char sid[SID_HEX + 1];  /* the key */
	char *who;              /* the binding it was issued to; NULL: anonymous */
	char *principal;        /* for access checks; NULL: anonymous */
	struct ph_access *own;  /* allow-lists its authenticator gave (NULL: configured ones) */
	struct json_object *assigns; /* its principal's assigns, NULL: none */
	int64_t exp_s;          /* the token's expiry */
	int64_t used_us;        /* the last request or stream */
	int level;              /* enum ph_log_level; PH_LOG_NONE: never set */
	struct sub *subs;
	size_t nsubs;
	struct event *ev;       /* the last events, oldest first */
	size_t nev;
	unsigned long long next_id;
	void **streams;
	size_t nstreams, capstreams;
	bool holder;            /* a GET stream of it was opened here last (cluster:) */
};

struct ph_hub_states {
	struct ph_server *srv;
	struct lh_table *tab;   /* sid -> struct ph_hstate */
	struct ph_watch *watch; /* NULL without inotify */
	ph_hstate_send_fn send;
	ph_hstate_close_fn close;
	void *ctx;
	int64_t next_purge_us;
	struct ph_hub_authz *authz; /* asked before resources/updated; NULL: none */
	bool (*note)(void *, const char *); /* asked of each URI the watcher saw change */
	void *note_ctx;
	ph_hstate_event_fn on_event;  /* cluster: the events of the sessions held here */
	void *event_ctx;
};

struct ph_hub_states *
ph_hub_states_new(struct ph_server *srv)
{
	struct ph_hub_states *t = ph_xcalloc(1, sizeof *t);
	t->srv = srv;
	t->tab = lh_kchar_table_new(64, NULL);
	t->watch = ph_watch_new();
	t->next_purge_us = ph_now_us() + PURGE_EVERY_US;
	return t;
}

void
ph_hub_states_authz(struct ph_hub_states *t, struct ph_hub_authz *authz)
{
	t->authz = authz;
}

void
ph_hub_states_streams(struct ph_hub_states *t, ph_hstate_send_fn send, ph_hstate_close_fn close, void *ctx)
{
	t->send = send;
	t->close = close;
	t->ctx = ctx;
}

size_t
ph_hub_states_count(const struct ph_hub_states *t)
{
	return (size_t)lh_table_length(t->tab);
}

int
ph_hub_states_watch_fd(const struct ph_hub_states *t)
{
	return t->watch ? ph_watch_fd(t->watch) : -1;
}

static struct ph_hstate *
find(struct ph_hub_states *t, const char *sid)
{
	void *v = NULL;
	return lh_table_lookup_ex(t->tab, sid, &v) ? v : NULL;
}

static void
drop_sub(struct ph_hub_states *t, struct sub *s)
{
	if (s->w)
		ph_watch_drop(t->watch, s->w);
	free(s->uri);
	free(s->path);
}

/* Forgets st: its streams are ended (told first, so none writes to it
 * again), its subscriptions dropped; why is logged (NULL: not). */
static void
forget(struct ph_hub_states *t, struct ph_hstate *st, const char *why)
{
	if (why != NULL)
		ph_log("info", "hub: state of session %.8s... forgotten (%s)", st->sid, why);
	while (st->nstreams > 0) {
		void *s = st->streams[--st->nstreams];
		if (t->close)
			t->close(t->ctx, s);
	}
	lh_table_delete(t->tab, st->sid);
	if (t->authz)
		ph_hub_authz_forget(t->authz, st);
	for (size_t i = 0; i < st->nsubs; i++)
		drop_sub(t, &st->subs[i]);
	free(st->subs);
	for (size_t i = 0; i < st->nev; i++)
		free(st->ev[i].text);
	free(st->ev);
	free(st->streams);
	free(st->who);
	free(st->principal);
	ph_access_free(st->own);
	json_object_put(st->assigns);
	free(st);
}

void
ph_hub_states_free(struct ph_hub_states *t)
{
	struct lh_entry *e, *tmp;
	if (t == NULL)
		return;
	t->close = NULL; /* the hub's streams are gone by now */
	lh_foreach_safe(t->tab, e, tmp)
		forget(t, (struct ph_hstate *)lh_entry_v(e), NULL);
	lh_table_free(t->tab);
	ph_watch_free(t->watch);
	free(t);
}

/* Drops the states whose session expired, and those without a stream
 * unused for sessions.state_idle seconds. */
static void
purge(struct ph_hub_states *t, int64_t now_us)
{
	struct lh_entry *e, *tmp;
	int64_t idle_us = t->srv->conf->sessions.state_idle * 1000000, now_s = now_us / 1000000;
	lh_foreach_safe(t->tab, e, tmp) {
		struct ph_hstate *st = (struct ph_hstate *)lh_entry_v(e);
		if (st->exp_s < now_s)
			forget(t, st, "the session expired");
		else if (st->nstreams == 0 && now_us - st->used_us >= idle_us)
			forget(t, st, "idle for sessions.state_idle");
	}
}

void
ph_hub_states_tick(struct ph_hub_states *t)
{
	int64_t now = ph_now_us();
	if (now < t->next_purge_us)
		return;
	t->next_purge_us = now + PURGE_EVERY_US;
	purge(t, now);
}

/* Takes what the session's lists are computed on from m (the latest
 * request's: an authenticator may answer otherwise as time goes by). */
static void
take_viewer(struct ph_hstate *st, const struct ph_hubmsg_session *m)
{
	ph_access_free(st->own);
	st->own = ph_access_read(m->access);
	json_object_put(st->assigns);
	st->assigns = json_object_get(m->assigns);
}

/* The state of the session m names (sid hex), made when it has none and
 * make is set. Returns NULL with the reason in out: over
 * sessions.max_state, or the message does not say whose session it is. */
static struct ph_hstate *
state_for(struct ph_hub_states *t, const char *sid, const struct ph_hubmsg_session *m, bool make, char *out,
	  size_t n)
{
	struct ph_hstate *st = find(t, sid);
	const char *who = m->who;
	long long max = t->srv->conf->sessions.max_state;
	if (st != NULL) {
		if (who == NULL ? st->who != NULL : (st->who == NULL || strcmp(st->who, who) != 0)) {
			snprintf(out, n, "no the session belongs to another principal");
			return NULL;
		}
		st->used_us = ph_now_us();
		take_viewer(st, m);
		return st;
	}
	if (!make) {
		snprintf(out, n, "ok");
		return NULL;
	}
	if (!m->has_exp) {
		snprintf(out, n, "no the message does not carry the session's expiry");
		return NULL;
	}
	if ((long long)lh_table_length(t->tab) >= max)
		purge(t, ph_now_us());
	if ((long long)lh_table_length(t->tab) >= max) {
		snprintf(out, n, "no too many sessions hold state on this host (sessions.max_state is %lld); "
			 "end unused sessions with DELETE or try again later", max);
		return NULL;
	}
	st = ph_xcalloc(1, sizeof *st);
	memcpy(st->sid, sid, SID_HEX);
	st->who = who ? ph_xstrdup(who) : NULL;
	st->principal = m->principal ? ph_xstrdup(m->principal) : NULL;
	st->exp_s = m->exp;
	st->used_us = ph_now_us();
	st->level = PH_LOG_NONE;
	st->next_id = 1;
	take_viewer(st, m);
	lh_table_insert(t->tab, st->sid, st);
	return st;
}

/* Sends notification method with params (taken, may be NULL) to st: the
 * next event id, held for replay, written on each of its streams. */
static void
emit(struct ph_hub_states *t, struct ph_hstate *st, const char *method, struct json_object *params)
{
	struct json_object *n = json_object_new_object();
	long long keep = t->srv->conf->sessions.replay;
	struct ph_buf b;
	struct event ev;
	size_t len;
	const char *j;
	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(n, "params", params);
	j = ph_json_text(n, &len);
	ph_buf_init(&b);
	ev.id = st->next_id++;
	ph_sse_event(&b, ev.id, j, len);
	json_object_put(n);
	ev.len = b.len;
	ev.text = ph_buf_steal(&b);
	if (st->holder && t->on_event != NULL)
		t->on_event(t->event_ctx, st->sid, st->exp_s, ev.text, ev.len);
	/* streams last to first: one that is dropped by the write leaves its
	 * slot to the last, already written to */
	for (size_t i = st->nstreams; i-- > 0;)
		if (t->send && i < st->nstreams)
			t->send(t->ctx, st->streams[i], ev.text, ev.len);
	while (st->nev > 0 && (long long)st->nev >= keep) {
		free(st->ev[0].text);
		memmove(st->ev, st->ev + 1, --st->nev * sizeof *st->ev);
	}
	if (keep <= 0) {
		free(ev.text);
		return;
	}
	st->ev = ph_xrealloc(st->ev, (st->nev + 1) * sizeof *st->ev);
	st->ev[st->nev++] = ev;
}

/* True when st holds a watched subscription to uri now (not unsubscribed
 * nor narrowed by a reload while its check ran). */
static bool
holds(const struct ph_hstate *st, const char *uri)
{
	for (size_t i = 0; i < st->nsubs; i++)
		if (st->subs[i].w != NULL && strcmp(st->subs[i].uri, uri) == 0)
			return true;
	return false;
}

/* What subscriptions.authorize allowed of what changed for session owner
 * (an array of URIs): a resources/updated event for each it still holds. */
static void
allowed_updates(void *ctx, void *owner, struct json_object *allowed)
{
	for (size_t i = 0; i < json_object_array_length(allowed); i++) {
		struct json_object *p, *u = json_object_array_get_idx(allowed, i);
		if (!holds(owner, json_object_get_string(u)))
			continue;
		p = json_object_new_object();
		json_object_object_add(p, "uri", json_object_get(u));
		emit(ctx, owner, "notifications/resources/updated", p);
	}
}

/* A change reached the subscription of session owner to uri: told once
 * subscriptions.authorize allows it (ph_hub_authz.c; at once without a
 * hub's checks). */
static void
updated(void *ctx, void *owner, const char *uri)
{
	struct ph_hub_states *t = ctx;
	struct ph_hstate *st = owner;
	struct json_object *one;
	if (t->note != NULL && !t->note(t->note_ctx, uri))
		return;
	if (t->authz != NULL) {
		ph_hub_authz_updated(t->authz, st, st->principal, st->assigns, uri, allowed_updates, t);
		return;
	}
	one = json_object_new_array();
	json_object_array_add(one, json_object_new_string(uri));
	allowed_updates(t, st, one);
	json_object_put(one);
}

void
ph_hub_states_watch_read(struct ph_hub_states *t, bool (*note)(void *ctx, const char *uri), void *ctx)
{
	t->note = note;
	t->note_ctx = ctx;
	if (t->watch)
		ph_watch_read(t->watch, updated, t);
	t->note = NULL;
}

size_t
ph_hub_states_announce(struct ph_hub_states *t, const char *uri)
{
	return t->watch ? ph_watch_announce(t->watch, uri, updated, t) : 0;
}

size_t
ph_hub_states_list_changed(struct ph_hub_states *t, size_t k, ph_hstate_changed_fn changed, void *ctx)
{
	struct lh_entry *e, *tmp;
	size_t told = 0;
	if (k >= PH_ARRAY_LEN(list_methods))
		return 0;
	lh_foreach_safe(t->tab, e, tmp) {
		struct ph_hstate *st = (struct ph_hstate *)lh_entry_v(e);
		if (changed == NULL || changed(ctx, st->principal, st->own, st->assigns, k)) {
			emit(t, st, list_methods[k], NULL);
			told++;
		}
	}
	return told;
}

/* Subscribes st to uri (path: its file, borrowed, may be NULL). */
static void
subscribe(struct ph_hub_states *t, struct ph_hstate *st, const char *uri, const char *path, char *out,
	  size_t n)
{
	long long max = t->srv->conf->sessions.max_subscriptions;
	struct sub *s;
	for (size_t i = 0; i < st->nsubs; i++)
		if (strcmp(st->subs[i].uri, uri) == 0) {
			snprintf(out, n, "ok");
			return;
		}
	if ((long long)st->nsubs >= max) {
		snprintf(out, n, "no this session holds sessions.max_subscriptions (%lld) resource "
			 "subscriptions; unsubscribe from one first", max);
		return;
	}
	if (t->watch == NULL) {
		snprintf(out, n, "no the hub cannot watch files here (no inotify)");
		return;
	}
	st->subs = ph_xrealloc(st->subs, (st->nsubs + 1) * sizeof *st->subs);
	s = &st->subs[st->nsubs];
	s->w = ph_watch_add(t->watch, st, uri, path, t->srv->conf->subscriptions.max_watches);
	if (s->w == NULL) {
		snprintf(out, n, "no too many watched resources (subscriptions.max_watches is %lld)",
			 t->srv->conf->subscriptions.max_watches);
		return;
	}
	s->uri = ph_xstrdup(uri);
	s->path = path ? ph_xstrdup(path) : NULL;
	st->nsubs++;
	snprintf(out, n, "ok");
}

static void
unsubscribe(struct ph_hub_states *t, struct ph_hstate *st, const char *uri)
{
	for (size_t i = 0; i < st->nsubs; i++)
		if (strcmp(st->subs[i].uri, uri) == 0) {
			drop_sub(t, &st->subs[i]);
			st->subs[i] = st->subs[--st->nsubs];
			return;
		}
}

bool
ph_hub_states_message(struct ph_hub_states *t, const struct ph_hubmsg *msg, char *out, size_t n)
{
	const struct ph_hubmsg_session *m = &msg->u.session;
	const char *hex = m->hex, *uri = m->uri;
	struct ph_hstate *st;
	switch (msg->type) {
	case PH_HUBMSG_SESSION_LEVEL: {
		int level = m->level ? ph_log_level_parse(m->level) : PH_LOG_NONE;
		if (level == PH_LOG_NONE)
			snprintf(out, n, "no not a log level");
		else if ((st = state_for(t, hex, m, true, out, n)) != NULL) {
			st->level = level;
			snprintf(out, n, "ok");
		}
		return true;
	}
	case PH_HUBMSG_SESSION_OPEN:
		if (state_for(t, hex, m, true, out, n) != NULL)
			snprintf(out, n, "ok");
		return true;
	case PH_HUBMSG_SESSION_SUB:
	case PH_HUBMSG_SESSION_UNSUB:
		if (uri == NULL)
			snprintf(out, n, "no the message names no uri");
		else if ((st = state_for(t, hex, m, msg->type == PH_HUBMSG_SESSION_SUB, out, n)) == NULL)
			; /* out says why */
		else if (msg->type == PH_HUBMSG_SESSION_UNSUB) {
			unsubscribe(t, st, uri);
			snprintf(out, n, "ok");
		} else {
			subscribe(t, st, uri, m->path, out, n);
		}
		return true;
	default:
		return false;
	}
}

void
ph_hub_states_check(struct ph_hub_states *t, const unsigned char *sid, char *out, size_t n)
{
	char hex[SID_HEX + 1];
	struct ph_hstate *st;
	sodium_bin2hex(hex, sizeof hex, sid, SID_HEX / 2);
	st = find(t, hex);
	if (st != NULL)
		st->used_us = ph_now_us();
	if (st != NULL && st->level != PH_LOG_NONE)
		snprintf(out, n, "live %s", ph_log_level_name(st->level));
	else
		snprintf(out, n, "live");
}

void
ph_hub_states_end(struct ph_hub_states *t, const unsigned char *sid)
{
	char hex[SID_HEX + 1];
	struct ph_hstate *st;
	sodium_bin2hex(hex, sizeof hex, sid, SID_HEX / 2);
	if ((st = find(t, hex)) != NULL)
		forget(t, st, "ended with DELETE");
}

/* Appends to replay the events of st after the one last names: all those
 * held when last is older than the oldest held (after a comment saying
 * events were lost), none when it is not an event id of this session. */
static void
replay_after(const struct ph_hub_states *t, const struct ph_hstate *st, const char *last,
	     struct ph_buf *replay)
{
	long long after;
	const char *err;
	if (last == NULL || st->nev == 0 || ph_strtonum(last, 0, (long long)st->next_id - 1, &after, &err) != 0)
		return;
	if ((unsigned long long)after + 1 < st->ev[0].id)
		ph_buf_printf(replay, ": events %lld to %llu are no longer held (sessions.replay is %lld)\n\n",
			      after + 1, st->ev[0].id - 1, t->srv->conf->sessions.replay);
	for (size_t i = 0; i < st->nev; i++)
		if (st->ev[i].id > (unsigned long long)after)
			ph_buf_add(replay, st->ev[i].text, st->ev[i].len);
}

struct ph_hstate *
ph_hub_states_attach(struct ph_hub_states *t, const char *sid, const char *who, void *stream,
		     const char *last, struct ph_buf *replay, char *why, size_t n)
{
	struct ph_hstate *st = find(t, sid);
	if (st == NULL) {
		snprintf(why, n, "the session holds no state on this host (forgotten, or ended)");
		return NULL;
	}
	if (who == NULL ? st->who != NULL : (st->who == NULL || strcmp(st->who, who) != 0)) {
		snprintf(why, n, "the session belongs to another principal");
		return NULL;
	}
	if (st->nstreams == st->capstreams) {
		st->capstreams = st->capstreams ? 2 * st->capstreams : 2;
		st->streams = ph_xrealloc(st->streams, st->capstreams * sizeof *st->streams);
	}
	st->streams[st->nstreams++] = stream;
	st->used_us = ph_now_us();
	st->holder = true;
	replay_after(t, st, last, replay);
	return st;
}

void
ph_hub_states_on_event(struct ph_hub_states *t, ph_hstate_event_fn fn, void *ctx)
{
	t->on_event = fn;
	t->event_ctx = ctx;
}

void
ph_hub_states_not_holder(struct ph_hub_states *t, const char *sid)
{
	struct ph_hstate *st = find(t, sid);
	if (st != NULL)
		st->holder = false;
}

bool
ph_hub_states_has(struct ph_hub_states *t, const char *sid)
{
	return find(t, sid) != NULL;
}

/* Takes the events of texts (SSE events "id: N\n...", oldest first) as
 * st's replay when they go further than its own. */
static void
merge_events(struct ph_hub_states *t, struct ph_hstate *st, struct json_object *texts)
{
	size_t n = json_object_array_length(texts);
	unsigned long long last;
	const char *lt;
	if (n == 0 || (lt = json_object_get_string(json_object_array_get_idx(texts, n - 1))) == NULL ||
	    strncmp(lt, "id: ", 4) != 0 || (last = strtoull(lt + 4, NULL, 10)) + 1 <= st->next_id)
		return;
	for (size_t i = 0; i < st->nev; i++)
		free(st->ev[i].text);
	st->nev = 0;
	st->ev = ph_xrealloc(st->ev, n * sizeof *st->ev);
	for (size_t i = 0; i < n && (long long)st->nev < t->srv->conf->sessions.replay; i++) {
		const char *e = json_object_get_string(json_object_array_get_idx(texts, i));
		if (e == NULL || strncmp(e, "id: ", 4) != 0)
			continue;
		st->ev[st->nev].id = strtoull(e + 4, NULL, 10);
		st->ev[st->nev].text = ph_xstrdup(e);
		st->ev[st->nev].len = strlen(e);
		st->nev++;
	}
	st->next_id = last + 1;
}

void
ph_hub_states_merge(struct ph_hub_states *t, const char *sid, struct json_object *subs, const char *level,
		    struct json_object *events)
{
	struct ph_hstate *st = find(t, sid);
	char out[200];
	if (st == NULL)
		return;
	if (level != NULL && ph_log_level_parse(level) != PH_LOG_NONE)
		st->level = ph_log_level_parse(level);
	for (size_t i = st->nsubs; subs != NULL && i-- > 0;) {
		bool kept = false;
		for (size_t k = 0; k < json_object_array_length(subs) && !kept; k++) {
			const char *u = ph_jstr(json_object_array_get_idx(subs, k), "u");
			kept = u != NULL && strcmp(u, st->subs[i].uri) == 0;
		}
		if (!kept) {
			drop_sub(t, &st->subs[i]);
			st->subs[i] = st->subs[--st->nsubs];
		}
	}
	for (size_t k = 0; subs != NULL && k < json_object_array_length(subs); k++) {
		struct json_object *s = json_object_array_get_idx(subs, k);
		if (ph_jstr(s, "u") != NULL)
			subscribe(t, st, ph_jstr(s, "u"), ph_jstr(s, "p"), out, sizeof out);
	}
	if (events != NULL)
		merge_events(t, st, events);
}

void
ph_hub_states_detach(struct ph_hub_states *t, struct ph_hstate *st, void *stream)
{
	(void)t;
	for (size_t i = 0; i < st->nstreams; i++)
		if (st->streams[i] == stream) {
			st->streams[i] = st->streams[--st->nstreams];
			break;
		}
	st->used_us = ph_now_us(); /* idle from now */
}

void
ph_hub_states_reconf(struct ph_hub_states *t, struct ph_server *srv)
{
	struct lh_entry *e, *tmp;
	t->srv = srv;
	lh_foreach_safe(t->tab, e, tmp) {
		struct ph_hstate *st = (struct ph_hstate *)lh_entry_v(e);
		bool denied = false;
		const struct ph_access *acc = st->own ? st->own : ph_auth_configured_access(srv, st->principal, &denied);
		for (size_t i = 0; i < st->nsubs; i++) {
			struct sub *s = &st->subs[i];
			char *path = NULL;
			if (s->w)
				ph_watch_drop(t->watch, s->w);
			s->w = NULL;
			if (denied || ph_catalog_watch(srv, st->principal, acc, s->uri, &path) == PH_SUB_NONE) {
				free(path);
				continue; /* kept: a later reload may give it back */
			}
			free(s->path);
			s->path = path;
			s->w = ph_watch_add(t->watch, st, s->uri, path, srv->conf->subscriptions.max_watches);
		}
	}
}
