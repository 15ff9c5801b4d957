/* ph_hub_cluster_conn.c: the hub's asynchronous Redis connections
 * (ph_hub_cluster_conn.h). hiredis's asynchronous API asks an event
 * library to watch its socket (the ev hooks); the adapter here is the
 * hub's own epoll set, so the connections live in the hub's one loop and
 * nothing in it ever blocks on Redis. hiredis 0.14 keeps no time in that
 * API: the timeouts are kept here (see ph_hub_cluster.c). */
#include "first.h"
#ifdef PH_HAVE_HIREDIS
#include "ph_hub_cluster_conn.h"
#include "ph_cluster.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

/* The first wait before connecting again; it doubles up to
 * cluster.backoff_max_ms. */
#define BACKOFF_MIN_MS 100
/* A PING on the command connection this often while nothing else is
 * pending: a stopped Redis is noticed within cluster.timeout_ms of it. */
#define HEARTBEAT_MS 1000
#define CHAN_MAX 4

enum { ST_NONE, ST_UP, ST_DOWN };

struct aconn {
	struct ph_hcl *o;
	redisAsyncContext *ac;    /* NULL: not connected */
	int fd;
	uint32_t mask;            /* the events hiredis wants */
	bool in_ep;
	bool ready;               /* AUTH, SELECT and PING (or SUBSCRIBE) answered */
	size_t pending;           /* commands sent, not yet answered */
	int64_t wait_since_us;    /* since when something is pending (0: nothing) */
	int64_t opened_us;
};

struct ph_hcl {
	int ep;
	struct aconn cmd, sub;
	char *chan[CHAN_MAX];
	size_t chanlen[CHAN_MAX], nchan;
	ph_hcl_msg_fn fn;
	void *ctx;
	void (*up)(void *ctx);
	struct ph_redis_addr addr;
	char addr_name[300];
	char *password;
	long long timeout_ms, backoff_max_ms, backoff_ms;
	int64_t next_try_us, next_ping_us;
	int state;                /* ST_*: what was logged last */
	bool want_reset;
	char why[200];
};

/* Frees a secret string after wiping it. */
static void
wipe_free(char *s)
{
	sodium_memzero(s, strlen(s));
	free(s);
}

/* A command's caller, kept until its reply. */
struct pending {
	ph_hcl_reply_fn fn;
	void *ctx, *priv;
};

/* ---- the event adapter ------------------------------------------------------------ */

static void
ev_update(struct aconn *a)
{
	struct epoll_event ev;
	if (a->mask == 0) {
		if (a->in_ep)
			epoll_ctl(a->o->ep, EPOLL_CTL_DEL, a->fd, NULL);
		a->in_ep = false;
		return;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = a->mask;
	ev.data.ptr = a;
	if (epoll_ctl(a->o->ep, a->in_ep ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, a->fd, &ev) == 0)
		a->in_ep = true;
	else
		ph_log("error", "hub: cluster: epoll: %s", strerror(errno));
}

static void
ev_add_read(void *p)
{
	struct aconn *a = p;
	a->mask |= EPOLLIN;
	ev_update(a);
}

static void
ev_del_read(void *p)
{
	struct aconn *a = p;
	a->mask &= ~(uint32_t)EPOLLIN;
	ev_update(a);
}

static void
ev_add_write(void *p)
{
	struct aconn *a = p;
	a->mask |= EPOLLOUT;
	ev_update(a);
}

static void
ev_del_write(void *p)
{
	struct aconn *a = p;
	a->mask &= ~(uint32_t)EPOLLOUT;
	ev_update(a);
}

/* hiredis is freeing the context: its socket leaves the epoll set before
 * it is closed. */
static void
ev_cleanup(void *p)
{
	struct aconn *a = p;
	a->mask = 0;
	ev_update(a);
}

bool
ph_hcl_event(struct ph_hcl *o, void *tag, uint32_t events)
{
	struct aconn *a = tag;
	if (o == NULL || (a != &o->cmd && a != &o->sub))
		return false;
	if (a->ac != NULL && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		redisAsyncHandleRead(a->ac);
	if (a->ac != NULL && (events & EPOLLOUT))
		redisAsyncHandleWrite(a->ac);
	return true;
}

/* ---- state --------------------------------------------------------------------------- */

/* Something failed (why): both connections are made again from the loop
 * (never from inside a hiredis callback, which may not free). */
static void
failed(struct ph_hcl *o, const char *why)
{
	if (!o->want_reset)
		snprintf(o->why, sizeof o->why, "%s", why);
	o->want_reset = true;
}

/* Both connections answered: logged once, the backoff starts again. */
static void
maybe_up(struct ph_hcl *o)
{
	if (!o->cmd.ready || !o->sub.ready)
		return;
	o->backoff_ms = BACKOFF_MIN_MS;
	if (o->state != ST_UP)
		ph_log("notice", "hub: cluster: Redis at %s reachable; announcements shared", o->addr_name);
	o->state = ST_UP;
	if (o->up != NULL)
		o->up(o->ctx);
}

/* A reply came on a (or the connection went: r NULL). */
static void
answered(struct aconn *a, bool live)
{
	if (!live || a->pending == 0)
		return;
	a->pending--;
	a->wait_since_us = a->pending > 0 ? ph_now_us() : 0;
}

static void
sent(struct aconn *a)
{
	if (a->pending++ == 0)
		a->wait_since_us = ph_now_us();
}

static struct aconn *
conn_of(const redisAsyncContext *ac)
{
	return ac->data;
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
	struct aconn *a = conn_of(ac);
	char why[160];
	if (status == REDIS_OK)
		return;
	snprintf(why, sizeof why, "cannot connect: %s", ac->errstr ? ac->errstr : "error");
	if (a->ac == ac) { /* hiredis frees it after this */
		a->ac = NULL;
		a->ready = false;
	}
	failed(a->o, why);
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	struct aconn *a = conn_of(ac);
	char why[160];
	(void)status;
	if (a->ac != ac)
		return; /* ours, freed on purpose */
	a->ac = NULL;
	a->ready = false;
	snprintf(why, sizeof why, "connection lost: %s", ac->errstr && *ac->errstr ? ac->errstr : "closed");
	failed(a->o, why);
}

/* The reply to AUTH or SELECT: an error means the settings are wrong. */
static void
on_setup(redisAsyncContext *ac, void *reply, void *priv)
{
	struct aconn *a = conn_of(ac);
	redisReply *r = reply;
	char why[200];
	(void)priv;
	answered(a, a->ac == ac);
	if (r == NULL || a->ac != ac)
		return;
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(why, sizeof why, "Redis refused %s: %.120s", (const char *)priv, r->str);
		failed(a->o, why);
	}
}

/* The PING of a new command connection, or the heartbeat's. */
static void
on_pong(redisAsyncContext *ac, void *reply, void *priv)
{
	struct aconn *a = conn_of(ac);
	redisReply *r = reply;
	(void)priv;
	answered(a, a->ac == ac);
	if (r == NULL || a->ac != ac)
		return;
	if (r->type == REDIS_REPLY_ERROR) {
		failed(a->o, "Redis answered PING with an error");
		return;
	}
	if (!a->ready) {
		a->ready = true;
		maybe_up(a->o);
	}
}

/* A reply on the subscribed connection: the subscription's confirmation
 * ("subscribe", channel, count) or a message ("message", channel, text). */
static void
on_sub(redisAsyncContext *ac, void *reply, void *priv)
{
	struct aconn *a = conn_of(ac);
	redisReply *r = reply;
	(void)priv;
	if (r == NULL || a->ac != ac || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(r->element[0]->str, "subscribe") == 0) {
		answered(a, true);
		if (a->pending == 0 && !a->ready) {
			a->ready = true;
			maybe_up(a->o);
		}
	} else if (strcmp(r->element[0]->str, "message") == 0 && r->element[1]->type == REDIS_REPLY_STRING &&
		   r->element[2]->type == REDIS_REPLY_STRING) {
		a->o->fn(a->o->ctx, r->element[1]->str, r->element[2]->str, r->element[2]->len);
	}
}

/* ---- connecting ------------------------------------------------------------------------ */

/* Opens a; AUTH and SELECT (the command connection) or SUBSCRIBE (the
 * other) are queued at once. Returns false after noting why. */
static bool
open_conn(struct ph_hcl *o, struct aconn *a, bool subscriber)
{
	redisAsyncContext *ac = o->addr.path[0] ? redisAsyncConnectUnix(o->addr.path)
				: redisAsyncConnect(o->addr.host, o->addr.port);
	char why[200];
	if (ac == NULL || ac->err) {
		snprintf(why, sizeof why, "cannot connect: %s", ac ? ac->errstr : "out of memory");
		if (ac)
			redisAsyncFree(ac);
		failed(o, why);
		return false;
	}
	memset(a, 0, sizeof *a);
	a->o = o;
	a->ac = ac;
	a->fd = ac->c.fd;
	a->opened_us = ph_now_us();
	fcntl(a->fd, F_SETFD, FD_CLOEXEC); /* not into the handlers the hub's children run */
	ac->data = a;
	ac->ev.data = a;
	ac->ev.addRead = ev_add_read;
	ac->ev.delRead = ev_del_read;
	ac->ev.addWrite = ev_add_write;
	ac->ev.delWrite = ev_del_write;
	ac->ev.cleanup = ev_cleanup;
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	ev_add_read(a);
	if (o->password != NULL) {
		const char *argv[2] = {"AUTH", o->password};
		size_t len[2] = {4, strlen(o->password)};
		redisAsyncCommandArgv(ac, on_setup, (void *)"the password", 2, argv, len);
		sent(a);
	}
	/* named, so that CLIENT LIST tells the hub's two from the others */
	redisAsyncCommand(ac, on_setup, (void *)"CLIENT SETNAME", "CLIENT SETNAME %s",
			  subscriber ? "phantom-hub-sub" : "phantom-hub-cmd");
	sent(a);
	if (subscriber) {
		const char *argv[1 + CHAN_MAX];
		size_t len[1 + CHAN_MAX];
		argv[0] = "SUBSCRIBE";
		len[0] = 9;
		for (size_t i = 0; i < o->nchan; i++) {
			argv[1 + i] = o->chan[i];
			len[1 + i] = o->chanlen[i];
		}
		redisAsyncCommandArgv(ac, on_sub, NULL, 1 + (int)o->nchan, argv, len);
		for (size_t i = 0; i < o->nchan; i++)
			sent(a);
		return true;
	}
	if (o->addr.db != 0) {
		redisAsyncCommand(ac, on_setup, (void *)"SELECT", "SELECT %d", o->addr.db);
		sent(a);
	}
	redisAsyncCommand(ac, on_pong, NULL, "PING");
	sent(a);
	return true;
}

/* Frees a's context (its pending callbacks get NULL). */
static void
close_conn(struct aconn *a)
{
	redisAsyncContext *ac = a->ac;
	a->ac = NULL;
	a->ready = false;
	a->pending = 0;
	a->wait_since_us = 0;
	if (ac != NULL)
		redisAsyncFree(ac);
}

/* Ends both connections after a failure (logged once) and waits the
 * backoff before the next try. */
static void
reset(struct ph_hcl *o)
{
	close_conn(&o->cmd);
	close_conn(&o->sub);
	o->want_reset = false;
	if (o->state != ST_DOWN)
		ph_log("warning", "hub: cluster: Redis at %s unreachable (%s); announcements reach this "
		       "host's streams only until it is back (trying again, at most every %lld ms)",
		       o->addr_name, o->why, o->backoff_max_ms);
	o->state = ST_DOWN;
	o->next_try_us = ph_now_us() + o->backoff_ms * 1000;
	o->backoff_ms = o->backoff_ms * 2 > o->backoff_max_ms ? o->backoff_max_ms : o->backoff_ms * 2;
}

/* True when a has waited past cluster.timeout_ms to connect or for a reply. */
static bool
late(const struct ph_hcl *o, const struct aconn *a, int64_t now)
{
	int64_t limit = o->timeout_ms * 1000;
	if (a->ac == NULL)
		return false;
	if (!(a->ac->c.flags & REDIS_CONNECTED) && now - a->opened_us > limit)
		return true;
	return a->pending > 0 && a->wait_since_us > 0 && now - a->wait_since_us > limit;
}

void
ph_hcl_tick(struct ph_hcl *o)
{
	int64_t now = ph_now_us();
	if (o == NULL)
		return;
	if (!o->want_reset && (late(o, &o->cmd, now) || late(o, &o->sub, now))) {
		char why[120];
		snprintf(why, sizeof why, "no answer within cluster.timeout_ms (%lld ms)", o->timeout_ms);
		failed(o, why);
	}
	if (o->want_reset)
		reset(o);
	if (o->cmd.ac == NULL && o->sub.ac == NULL && now >= o->next_try_us) {
		if (!open_conn(o, &o->cmd, false) || !open_conn(o, &o->sub, true))
			reset(o);
		o->next_ping_us = now + HEARTBEAT_MS * 1000;
		return;
	}
	if (o->cmd.ready && o->cmd.pending == 0 && now >= o->next_ping_us) {
		redisAsyncCommand(o->cmd.ac, on_pong, NULL, "PING");
		sent(&o->cmd);
		o->next_ping_us = now + HEARTBEAT_MS * 1000;
	}
}

bool
ph_hcl_up(const struct ph_hcl *o)
{
	return o != NULL && o->cmd.ready && o->sub.ready;
}

/* ---- commands ----------------------------------------------------------------------- */

static void
on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct aconn *a = conn_of(ac);
	struct pending *p = priv;
	bool live = a->ac == ac;
	answered(a, live);
	if (p->fn != NULL)
		p->fn(p->ctx, p->priv, live ? reply : NULL);
	free(p);
}

void
ph_hcl_cmd(struct ph_hcl *o, int argc, const char **argv, const size_t *len, ph_hcl_reply_fn fn, void *ctx,
	   void *priv)
{
	struct pending *p;
	if (o == NULL || !o->cmd.ready || o->want_reset) {
		if (fn != NULL)
			fn(ctx, priv, NULL);
		return;
	}
	p = ph_xcalloc(1, sizeof *p);
	p->fn = fn;
	p->ctx = ctx;
	p->priv = priv;
	if (redisAsyncCommandArgv(o->cmd.ac, on_reply, p, argc, argv, len) != REDIS_OK) {
		free(p);
		if (fn != NULL)
			fn(ctx, priv, NULL);
		return;
	}
	sent(&o->cmd);
}

/* ---- life ---------------------------------------------------------------------------- */

/* Takes the configured address, password and limits. Returns true when
 * the address or password differs from what o had. */
static bool
take_conf(struct ph_hcl *o, const struct ph_cluster_conf *cc)
{
	bool changed = memcmp(&o->addr, &cc->addr, sizeof o->addr) != 0 ||
		       (o->password == NULL) != (cc->password == NULL) ||
		       (o->password != NULL && strcmp(o->password, cc->password) != 0);
	o->addr = cc->addr;
	snprintf(o->addr_name, sizeof o->addr_name, "%s", cc->addr_name);
	if (o->password != NULL)
		wipe_free(o->password);
	o->password = cc->password ? ph_xstrdup(cc->password) : NULL;
	o->timeout_ms = cc->timeout_ms > 0 ? cc->timeout_ms : 1000;
	o->backoff_max_ms = cc->backoff_max_ms > BACKOFF_MIN_MS ? cc->backoff_max_ms : BACKOFF_MIN_MS;
	return changed;
}

struct ph_hcl *
ph_hcl_new(int ep, const char *const *chan, size_t nchan, ph_hcl_msg_fn fn, void *ctx)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	struct ph_hcl *o;
	if (cc == NULL || nchan > CHAN_MAX)
		return NULL;
	o = ph_xcalloc(1, sizeof *o);
	o->ep = ep;
	o->fn = fn;
	o->ctx = ctx;
	for (size_t i = 0; i < nchan; i++) {
		o->chan[i] = ph_xstrdup(chan[i]);
		o->chanlen[i] = strlen(chan[i]);
	}
	o->nchan = nchan;
	take_conf(o, cc);
	o->backoff_ms = BACKOFF_MIN_MS;
	return o;
}

void
ph_hcl_on_up(struct ph_hcl *o, void (*up)(void *ctx))
{
	o->up = up;
}

void
ph_hcl_reconf(struct ph_hcl *o)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	if (o == NULL || cc == NULL)
		return;
	if (take_conf(o, cc)) {
		close_conn(&o->cmd);
		close_conn(&o->sub);
		o->next_try_us = 0;
		o->backoff_ms = BACKOFF_MIN_MS;
		o->state = ST_NONE;
	}
}

void
ph_hcl_free(struct ph_hcl *o)
{
	if (o == NULL)
		return;
	close_conn(&o->cmd);
	close_conn(&o->sub);
	for (size_t i = 0; i < o->nchan; i++)
		free(o->chan[i]);
	if (o->password != NULL)
		wipe_free(o->password);
	free(o);
}

void
ph_hcl_publish(struct ph_hcl *o, const char *channel, struct json_object *doc, int ttl_s)
{
	const char *plain, *argv[3];
	unsigned char *box;
	size_t plen, blen, len[3];
	json_object_object_add(doc, "o", json_object_new_string(ph_shared_host_tag()));
	json_object_object_add(doc, "x", json_object_new_int64(ph_now_us() / 1000000 + ttl_s));
	plain = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &plen);
	box = ph_cluster_seal(channel, plain, plen, &blen);
	json_object_put(doc);
	argv[0] = "PUBLISH";
	argv[1] = channel;
	argv[2] = (const char *)box;
	len[0] = 7;
	len[1] = strlen(channel);
	len[2] = blen;
	ph_hcl_cmd(o, 3, argv, len, NULL, NULL, NULL);
	free(box);
}
#else
/* ISO C wants something in a translation unit */
typedef int ph_hub_cluster_conn_empty;
#endif
