/* ph_hub_authz.c: subscriptions.authorize asked by the hub before
 * notifications/resources/updated (ph_hub_authz.h). The hub serves every
 * stream of the host from one loop, so it never waits for a handler:
 *   - exec: the program is started with its pipes armed in this module's
 *     epoll set (registered in the hub's loop) and fed the invocation the
 *     worker-side check sends (ph_subscriptions_authorize_input); its
 *     timeout_ms and max_output hold, it is killed and reaped on timeout.
 *   - persistent: run the same way as a one-shot, the invocation as one
 *     line with "id": 1 and then end of file; the answer is that line.
 *   - module: called in the hub itself, at once (it runs in-process
 *     already; it must answer without waiting).
 * One check per owner (a listen stream, a legacy session) at a time; URIs
 * that change meanwhile wait in pending and go together into the next. A
 * check that fails, times out or answers badly allows nothing of its
 * batch, with one log line saying why. */
#include "first.h"
#include "ph_hub_authz.h"
#include "ph_exec.h"
#include "ph_exec_conf.h"
#include "ph_call.h"
#include "ph_features.h"
#include "ph_log.h"
#include "ph_persist.h"
#include "ph_registry.h"
#include "ph_util.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define LABEL "subscriptions.authorize"
/* The call id a persistent handler gets in its one line. */
#define ONE_SHOT_ID 1

struct owner;

/* Owners in the order they wait in: a doubly linked list, so that taking
 * one out anywhere costs nothing. */
struct queue {
	struct owner *head, *tail;
	size_t n;
};

struct owner {
	void *owner;
	uint64_t serial;              /* names its check in epoll events */
	char *principal;              /* NULL: anonymous */
	struct json_object *assigns;  /* NULL: none */
	ph_hub_authz_fn fn;
	void *ctx;
	struct json_object *pending;  /* URIs for the next check, each once */
	struct json_object *batch;    /* URIs of the check in flight, NULL: none */
	struct ph_exec_nb *run;       /* that check's process, NULL: none */
	struct owner *next_owner;     /* the next in its by_owner bucket */
	struct owner *next_serial;    /* the next in its by_serial bucket */
	struct queue *in;             /* &waiting, &running, or NULL: neither */
	struct owner *prev, *next;    /* in that queue */
	uint64_t queued;              /* the tick it joined waiting in */
};

/* Every owner is in both indexes (chained hash tables of nb buckets, a
 * power of two, at least as many as owners), by the pointer the hub names
 * it with and by the serial its process's events carry: an update that
 * reaches every stream costs one lookup each, not a scan of all owners
 * (10,000 streams made that 10^8 comparisons). Between ticks an owner
 * waits (pending URIs and no check) or runs (its handler's process). */
struct ph_hub_authz {
	struct ph_server *srv;
	int ep;
	struct owner **by_owner, **by_serial;
	size_t nb, n;
	struct queue waiting;         /* who waited longest first */
	struct queue running;
	uint64_t next_serial, ticks;
	/* owners looked at by lookups and removals, for the tests: what one
	 * update costs (tests/unit/test_hub_authz.c) */
	unsigned long long compared;
};

struct ph_hub_authz *
ph_hub_authz_new(struct ph_server *srv)
{
	struct ph_hub_authz *a = ph_xcalloc(1, sizeof *a);
	a->srv = srv;
	/* without it no check is ever stepped: each ends at its timeout,
	 * allowing nothing; say so once rather than fail unseen */
	if ((a->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		ph_log("error", "hub: cannot watch subscriptions.authorize checks (epoll: %s): each times out "
		       "and allows nothing", strerror(errno));
	a->next_serial = 1;
	return a;
}

int
ph_hub_authz_fd(const struct ph_hub_authz *a)
{
	return a->ep;
}

static const struct ph_catalog *
handler(const struct ph_hub_authz *a)
{
	return a->srv->conf->registry ? a->srv->conf->registry->sub_authorize : NULL;
}

/* ---- the indexes ------------------------------------------------------------ */

/* The bucket of key k among nb (a power of two): Fibonacci hashing, which
 * spreads aligned pointers and consecutive serials alike. */
static size_t
bucket(uint64_t k, size_t nb)
{
	return (size_t)((k * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (nb - 1);
}

static uint64_t
key_of(const void *owner)
{
	return (uint64_t)(uintptr_t)owner;
}

/* Doubles the buckets (64 at first) and files every owner again. */
static void
grow(struct ph_hub_authz *a)
{
	size_t nb = a->nb ? a->nb * 2 : 64;
	struct owner **bo = ph_xcalloc(nb, sizeof *bo), **bs = ph_xcalloc(nb, sizeof *bs);
	for (size_t i = 0; i < a->nb; i++) {
		struct owner *o, *next;
		for (o = a->by_owner[i]; o != NULL; o = next) {
			size_t b = bucket(key_of(o->owner), nb);
			next = o->next_owner;
			o->next_owner = bo[b];
			bo[b] = o;
		}
		for (o = a->by_serial[i]; o != NULL; o = next) {
			size_t b = bucket(o->serial, nb);
			next = o->next_serial;
			o->next_serial = bs[b];
			bs[b] = o;
		}
	}
	free(a->by_owner);
	free(a->by_serial);
	a->by_owner = bo;
	a->by_serial = bs;
	a->nb = nb;
}

static void
index_add(struct ph_hub_authz *a, struct owner *o)
{
	size_t b;
	if (a->n >= a->nb)
		grow(a);
	b = bucket(key_of(o->owner), a->nb);
	o->next_owner = a->by_owner[b];
	a->by_owner[b] = o;
	b = bucket(o->serial, a->nb);
	o->next_serial = a->by_serial[b];
	a->by_serial[b] = o;
	a->n++;
}

static void
index_del(struct ph_hub_authz *a, struct owner *o)
{
	struct owner **p;
	for (p = &a->by_owner[bucket(key_of(o->owner), a->nb)]; *p != o; p = &(*p)->next_owner)
		a->compared++;
	*p = o->next_owner;
	for (p = &a->by_serial[bucket(o->serial, a->nb)]; *p != o; p = &(*p)->next_serial)
		a->compared++;
	*p = o->next_serial;
	a->n--;
}

/* The owner the hub names owner, or NULL. */
static struct owner *
find(struct ph_hub_authz *a, void *owner)
{
	if (a->n == 0)
		return NULL;
	for (struct owner *o = a->by_owner[bucket(key_of(owner), a->nb)]; o != NULL; o = o->next_owner) {
		a->compared++;
		if (o->owner == owner)
			return o;
	}
	return NULL;
}

/* The owner whose check is named serial, or NULL when it is gone. */
static struct owner *
by_serial(struct ph_hub_authz *a, uint64_t serial)
{
	if (a->n == 0)
		return NULL;
	for (struct owner *o = a->by_serial[bucket(serial, a->nb)]; o != NULL; o = o->next_serial) {
		a->compared++;
		if (o->serial == serial)
			return o;
	}
	return NULL;
}

/* ---- the queues ------------------------------------------------------------- */

/* Takes o out of the queue it is in, if any. */
static void
dequeue(struct owner *o)
{
	struct queue *q = o->in;
	if (q == NULL)
		return;
	if (o->prev)
		o->prev->next = o->next;
	else
		q->head = o->next;
	if (o->next)
		o->next->prev = o->prev;
	else
		q->tail = o->prev;
	o->prev = o->next = NULL;
	o->in = NULL;
	q->n--;
}

/* Puts o at the end of q, or at its front (out of the queue it was in). */
static void
enqueue(struct queue *q, struct owner *o, bool front)
{
	dequeue(o);
	if (front) {
		o->next = q->head;
		if (q->head)
			q->head->prev = o;
		else
			q->tail = o;
		q->head = o;
	} else {
		o->prev = q->tail;
		if (q->tail)
			q->tail->next = o;
		else
			q->head = o;
		q->tail = o;
	}
	o->in = q;
	q->n++;
}

/* o waits for a check from now, behind those that wait already, or before
 * them (front). */
static void
wait_turn(struct ph_hub_authz *a, struct owner *o, bool front)
{
	enqueue(&a->waiting, o, front);
	o->queued = a->ticks;
}

/* ---- owners ------------------------------------------------------------------ */

/* Stops o's check, if any (killed, its answer dropped; reaped without
 * waiting). */
static void
stop_run(struct owner *o)
{
	struct ph_exec_result res;
	if (o->run == NULL)
		return;
	ph_exec_nb_finish(o->run, &res);
	ph_exec_result_free(&res);
	o->run = NULL;
}

/* Takes o out of a and frees it. */
static void
remove_owner(struct ph_hub_authz *a, struct owner *o)
{
	dequeue(o);
	index_del(a, o);
	stop_run(o);
	json_object_put(o->pending);
	json_object_put(o->batch);
	json_object_put(o->assigns);
	free(o->principal);
	free(o);
}

void
ph_hub_authz_free(struct ph_hub_authz *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->nb; i++)
		while (a->by_owner[i] != NULL)
			remove_owner(a, a->by_owner[i]);
	free(a->by_owner);
	free(a->by_serial);
	if (a->ep >= 0)
		close(a->ep);
	free(a);
}

/* Appends uri to the array *list (made when NULL) unless it is there. */
static void
add_once(struct json_object **list, const char *uri)
{
	if (*list == NULL)
		*list = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(*list); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(*list, i)), uri) == 0)
			return;
	json_object_array_add(*list, json_object_new_string(uri));
}

void
ph_hub_authz_updated(struct ph_hub_authz *a, void *owner, const char *principal,
		     struct json_object *assigns, const char *uri, ph_hub_authz_fn fn, void *ctx)
{
	struct owner *o;
	if (handler(a) == NULL) {
		struct json_object *one = json_object_new_array();
		json_object_array_add(one, json_object_new_string(uri));
		fn(ctx, owner, one);
		json_object_put(one);
		return;
	}
	if ((o = find(a, owner)) == NULL) {
		o = ph_xcalloc(1, sizeof *o);
		o->owner = owner;
		o->serial = a->next_serial++;
		o->principal = principal ? ph_xstrdup(principal) : NULL;
		o->assigns = json_object_get(assigns);
		o->fn = fn;
		o->ctx = ctx;
		index_add(a, o);
		wait_turn(a, o, false);
	}
	add_once(&o->pending, uri);
}

void
ph_hub_authz_forget(struct ph_hub_authz *a, void *owner)
{
	struct owner *o = find(a, owner);
	if (o != NULL)
		remove_owner(a, o);
}

/* o's check is over with allowed (taken): o is forgotten when nothing is
 * pending for it, else it waits its turn behind those that waited for a
 * free slot (max_authorize); then its owner is told (which may end the
 * owner, and so forget o: o is not used after fn). */
static void
deliver(struct ph_hub_authz *a, struct owner *o, struct json_object *allowed)
{
	ph_hub_authz_fn fn = o->fn;
	void *ctx = o->ctx, *owner = o->owner;
	json_object_put(o->batch);
	o->batch = NULL;
	if (o->pending == NULL)
		remove_owner(a, o);
	else
		wait_turn(a, o, false);
	fn(ctx, owner, allowed);
	json_object_put(allowed);
}

/* The handler's answer in the exec protocol (persistent: one line with the
 * call's id), or NULL after logging why. */
static struct json_object *
answer(const struct ph_hub_authz *a, const struct ph_handler *h, const struct ph_exec_result *res)
{
	int depth = (int)a->srv->conf->limits.json_depth;
	size_t len = res->out_len;
	if (!h->exec.persist.on)
		return ph_call_exec_answer(LABEL, h->exec.argv[0], res->out, len, depth);
	while (len > 0 && (res->out[len - 1] == '\n' || res->out[len - 1] == '\r'))
		len--;
	return ph_persist_answer(LABEL, res->out, len, ONE_SHOT_ID, depth);
}

/* o's process has ended: what it allows of the batch goes to the owner. */
static void
complete(struct ph_hub_authz *a, struct owner *o)
{
	const struct ph_catalog *c = handler(a);
	struct ph_exec_result res;
	struct json_object *out = NULL, *allowed;
	char why[200];
	bool ran = ph_exec_nb_finish(o->run, &res) == 0;
	o->run = NULL;
	dequeue(o); /* from running */
	if (!ran) {
		ph_exec_describe(&res, why, sizeof why);
		allowed = ph_subscriptions_allowed_in(NULL, o->batch, o->principal, why);
	} else {
		out = c ? answer(a, &c->h, &res) : NULL;
		allowed = ph_subscriptions_allowed_in(out, o->batch, o->principal, NULL);
	}
	json_object_put(out);
	ph_exec_result_free(&res);
	deliver(a, o, allowed);
}

/* Starts o's check of its pending URIs (o leaves waiting): a module
 * answers at once; an exec or persistent handler is started, o runs, and
 * it answers later (ph_hub_authz_events). */
static void
start(struct ph_hub_authz *a, struct owner *o)
{
	const struct ph_catalog *c = handler(a);
	struct ph_exec_limits lim;
	struct json_object *in;
	const char *text;
	struct ph_buf line;
	size_t len;
	dequeue(o);
	o->batch = o->pending;
	o->pending = NULL;
	if (c == NULL || c->h.kind != PH_HANDLER_EXEC) {
		/* no handler any more (a reload), or a module: in the hub, now */
		struct ph_viewer who = {o->principal, o->assigns, NULL, false, false};
		deliver(a, o, ph_subscriptions_authorize(a->srv, &who, o->batch));
		return;
	}
	in = ph_subscriptions_authorize_input(a->srv, o->principal, o->assigns, o->batch);
	if (c->h.exec.persist.on)
		json_object_object_add(in, "id", json_object_new_int64(ONE_SHOT_ID));
	text = json_object_to_json_string_length(in, JSON_C_TO_STRING_PLAIN, &len);
	ph_buf_init(&line);
	ph_buf_add(&line, text, len);
	if (c->h.exec.persist.on)
		ph_buf_addc(&line, '\n');
	ph_exec_limits_of(a->srv->conf, &lim);
	o->run = ph_exec_nb_start(&c->h.exec, &lim, line.data, line.len, LABEL, a->ep, o->serial);
	enqueue(&a->running, o, false);
	ph_buf_free(&line);
	json_object_put(in);
}

/* Steps the check named serial, if it is still there; completes it when
 * it is over. */
static void
step(struct ph_hub_authz *a, uint64_t serial)
{
	struct owner *o = by_serial(a, serial);
	if (o != NULL && o->run != NULL && ph_exec_nb_step(o->run))
		complete(a, o);
}

/* The serials of the owners whose handler runs (caller frees): a
 * completion may end owners, so loops go by serial, not by link. */
static uint64_t *
running(const struct ph_hub_authz *a, size_t *n)
{
	uint64_t *s = ph_xcalloc(a->running.n ? a->running.n : 1, sizeof *s);
	*n = 0;
	for (const struct owner *o = a->running.head; o != NULL; o = o->next)
		s[(*n)++] = o->serial;
	return s;
}

void
ph_hub_authz_events(struct ph_hub_authz *a)
{
	struct epoll_event evs[64];
	int n = epoll_wait(a->ep, evs, 64, 0);
	for (int i = 0; i < n; i++)
		step(a, evs[i].data.u64);
}

void
ph_hub_authz_tick(struct ph_hub_authz *a)
{
	size_t n, max = (size_t)a->srv->conf->subscriptions.max_authorize;
	uint64_t *s = running(a, &n);
	struct owner *o;
	/* a killed handler that died late when no SIGCHLD said so */
	ph_exec_reap_dying();
	/* deadlines, and exits where there is no pidfd to tell them */
	for (size_t i = 0; i < n; i++)
		step(a, s[i]);
	free(s);
	/* the owners that wait, who waited longest first, while fewer than
	 * subscriptions.max_authorize run; a module's answer is delivered at
	 * once, and an owner that waits again since (more came meanwhile)
	 * waits for the next tick */
	a->ticks++;
	while ((o = a->waiting.head) != NULL && o->queued < a->ticks && a->running.n < max)
		start(a, o);
}

void
ph_hub_authz_reap(struct ph_hub_authz *a)
{
	for (struct owner *o = a->running.head; o != NULL; o = o->next)
		ph_exec_nb_reap(o->run);
	ph_exec_reap_dying(); /* handlers killed that were not dead at once */
}

void
ph_hub_authz_reconf(struct ph_hub_authz *a, struct ph_server *srv)
{
	struct owner *o;
	a->srv = srv;
	/* from the last: each goes before the others, so they keep their order */
	while ((o = a->running.tail) != NULL) {
		stop_run(o);
		/* asked again, under the new configuration, with what came since */
		for (size_t j = 0; j < json_object_array_length(o->batch); j++)
			add_once(&o->pending, json_object_get_string(json_object_array_get_idx(o->batch, j)));
		json_object_put(o->batch);
		o->batch = NULL;
		/* they had their turn before those that wait: first again */
		wait_turn(a, o, true);
	}
}
