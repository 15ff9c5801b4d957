/* ph_hub_task_redis.c: with cluster:, the hub's pass over the task records
 * in Redis and the renewal of its host's lease (ph_hub_task.h), both on
 * the hub's asynchronous command connection (ph_hub_cluster_conn.h): the
 * hub's loop never waits for Redis, so a stalled Redis cannot stall the
 * host's streams. A step of a pass is a chain of replies: SCAN (a few
 * hundred keys), one MGET of their records, one MGET of the leases of the
 * other hosts they name; a working record whose host lost its lease, or
 * this host's record without a supervisor, is then failed by one script
 * that writes it only when nobody holds its lock and it is still what the
 * pass read. A record it could not fail is tried again by the next pass.
 * The hub's task messages read a record, and the reap marks the task of a
 * supervisor that died failed (the same script), on that connection too. */
#include "first.h"
#include "ph_hub_task_redis.h"
#include "ph_hub_cluster_conn.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_task.h"
#include "ph_util.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pass; without hiredis only its owner, to answer "no record". */
struct ph_htr {
	const struct ph_htr_ops *ops; /* its owner's */
	void *ctx;                    /* its owner */
#ifdef PH_HAVE_HIREDIS
	struct ph_hcl *conn;    /* borrowed, as of the last tick (NULL: none) */
	unsigned gen;           /* a reply of an older generation is dropped */
	bool scanning, busy;    /* a pass in progress; a reply of it awaited */
	char cursor[32];        /* its SCAN cursor */
	long long count;        /* the records it counted */
	int64_t next_pass_us;
	long long purge_ms;
	struct op *queue, *tail; /* operations on one record waiting for conn */
#endif
};

#ifdef PH_HAVE_HIREDIS
#include <hiredis/hiredis.h>

/* Keys a SCAN asks for at a time. */
#define SCAN_COUNT "200"
/* The other hosts whose lease one step looks up; records of more hosts
 * wait for a later pass. */
#define STEP_HOSTS 64
/* A lease that could not be sent is tried again this soon. */
#define LEASE_RETRY_US 100000
/* How often a failed mark reads the record again when it was locked or
 * changed under it; after that the next pass fails it. */
#define FAIL_TRIES 5
/* How often a failed mark is sent again after no reply came. */
#define LOST_MAX 20

/* A step's records: keys[i]'s sealed value box[i] (blen[i] bytes),
 * opened as rec[i] (NULL: it did not open). */
struct step {
	struct ph_htr *r;
	unsigned gen;
	size_t n;
	char **keys;
	struct json_object **rec;
	char **box;
	size_t *blen;
	const char *host[STEP_HOSTS]; /* borrowed from rec */
	int alive[STEP_HOSTS];
	size_t nhosts;
};

static void
step_free(struct step *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->keys[i]);
		json_object_put(s->rec[i]);
		free(s->box[i]);
	}
	free(s->keys);
	free(s->rec);
	free(s->box);
	free(s->blen);
	free(s);
}

/* The pass ended (complete: every key was seen); the next starts
 * tasks.purge_interval_ms later. */
static void
pass_over(struct ph_htr *r, bool complete)
{
	r->scanning = false;
	r->busy = false;
	r->next_pass_us = ph_now_us() + r->purge_ms * 1000;
	if (complete)
		r->ops->passed(r->ctx, r->count);
}

/* A step is done: the pass goes on at the next tick, or ends. */
static void
step_done(struct ph_htr *r)
{
	r->busy = false;
	if (strcmp(r->cursor, "0") == 0)
		pass_over(r, true);
}

/* ---- failing a record ------------------------------------------------------------- */

/* Writes ARGV[2] (PX ARGV[3] ms, 0: none) to the record KEYS[1] only when
 * its lock KEYS[2] is free and it still holds ARGV[1]: an edit under the
 * lock (ph_task_redis_lock) is never overwritten, and one that starts
 * after this sees the failed record. Returns 1 when written. */
static const char fail_script[] =
	"if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
	"if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2])\n"
	"else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end\n"
	"return 1";

/* ph_hcl_reply_fn of the script: the record (priv, owned) was failed. */
static void
failed(void *ctx, void *priv, struct redisReply *rep)
{
	struct ph_htr *r = ctx;
	struct json_object *rec = priv;
	if (rep != NULL && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1)
		r->ops->failed(r->ctx, ph_jstr(rec, "taskId"), rec);
	else if (rep != NULL && rep->type == REDIS_REPLY_ERROR)
		ph_log("error", "hub: task %s: Redis refused to mark it failed: %.200s", ph_jstr(rec, "taskId"),
		       rep->str);
	json_object_put(rec);
}

/* Fails record i of s (key s->keys[i]) with message why. */
static void
fail(struct step *s, size_t i, const char *why)
{
	struct ph_htr *r = s->r;
	const char *id = ph_jstr(s->rec[i], "taskId");
	struct json_object *rec = json_object_get(s->rec[i]);
	char lock[PH_CLUSTER_KEY_MAX], px[24];
	const char *plain;
	unsigned char *box;
	size_t plen, blen;
	r->ops->set_failed(rec, why);
	plain = json_object_to_json_string_length(rec, JSON_C_TO_STRING_PLAIN, &plen);
	box = ph_cluster_seal(s->keys[i], plain, plen, &blen);
	ph_cluster_key(PH_CK_LOCK, id, strlen(id), lock);
	{
		const char *argv[8] = {"EVAL", fail_script, "2", s->keys[i], lock, s->box[i], (const char *)box, px};
		size_t len[8] = {4, sizeof fail_script - 1, 1, strlen(s->keys[i]), strlen(lock), s->blen[i], blen, 0};
		len[7] = (size_t)snprintf(px, sizeof px, "%lld", (long long)ph_task_redis_px(rec, ph_task_ended_ms(rec)));
		ph_hcl_cmd(r->conn, 8, argv, len, failed, r, rec);
	}
	free(box);
}

/* The step's records judged, now that the leases are known. */
static void
judge(struct step *s)
{
	struct ph_htr *r = s->r;
	for (size_t i = 0; i < s->n; i++) {
		const char *id, *host, *why;
		int alive = -1;
		if (s->rec[i] == NULL || (id = ph_jstr(s->rec[i], "taskId")) == NULL || !ph_task_id_ok(id))
			continue;
		r->count++;
		host = ph_jstr(s->rec[i], "_host");
		for (size_t h = 0; host != NULL && h < s->nhosts; h++)
			if (strcmp(s->host[h], host) == 0)
				alive = s->alive[h];
		if ((why = r->ops->lost(r->ctx, s->rec[i], alive)) != NULL)
			fail(s, i, why);
	}
	step_free(s);
	step_done(r);
}

/* ---- one record -------------------------------------------------------------------- */

/* A read of a record, or a failed mark (fail != NULL), that waits for the
 * connection, or for its replies. */
struct op {
	struct ph_htr *r;
	char id[PH_TASK_ID_MAX];
	char key[PH_CLUSTER_KEY_MAX];
	char *fail;              /* the failed mark's message (owned), NULL: a read */
	int tries;               /* compare-and-set attempts so far */
	int lost;                /* replies that did not come */
	int64_t until_us;        /* given up after this while Redis does not answer */
	ph_htr_rec_fn fn;
	void *arg;
	struct json_object *rec; /* the failed record being written (owned) */
	struct op *next;         /* in the queue */
};

static void
op_done(struct op *o, struct json_object *rec, bool written)
{
	o->fn(o->r->ctx, o->id, rec, written, o->arg);
	json_object_put(o->rec);
	free(o->fail);
	free(o);
}

static void op_send(struct op *o);

/* Queues o to be sent once the connection is up, in order. */
static void
enqueue(struct op *o)
{
	struct ph_htr *r = o->r;
	o->next = NULL;
	if (r->tail)
		r->tail->next = o;
	else
		r->queue = o;
	r->tail = o;
}

/* No reply came for o: a failed mark is queued again while its time
 * lasts (cluster.lease_ms), so that it is written once Redis is back.
 * Returns false when o is to be given up. */
static bool
again(struct op *o)
{
	if (o->fail == NULL || ++o->lost > LOST_MAX || ph_now_us() > o->until_us)
		return false;
	json_object_put(o->rec);
	o->rec = NULL;
	enqueue(o);
	return true;
}

/* ph_hcl_reply_fn of the script that writes o's failed record. */
static void
on_cas(void *ctx, void *priv, struct redisReply *rep)
{
	struct op *o = priv;
	(void)ctx;
	if (rep == NULL && again(o))
		return;
	if (rep != NULL && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1) {
		op_done(o, o->rec, true);
	} else if (rep != NULL && rep->type == REDIS_REPLY_INTEGER && ++o->tries < FAIL_TRIES) {
		json_object_put(o->rec); /* locked or changed since it was read: read it again */
		o->rec = NULL;
		op_send(o);
	} else {
		/* the next pass over the records fails it */
		ph_log("warning", "hub: task %s could not be marked failed now: %.200s", o->id,
		       rep == NULL ? "Redis is unreachable" : rep->type == REDIS_REPLY_ERROR ? rep->str : "it stays locked");
		op_done(o, NULL, false);
	}
}

/* Writes rec (o's record, read as box) failed when it has not ended, with
 * the pass's script: never over an edit under the record's lock nor over a
 * record that changed since. Returns false when it had ended. */
static bool
cas_failed(struct op *o, struct json_object *rec, const char *box, size_t blen)
{
	char lock[PH_CLUSTER_KEY_MAX], px[24];
	const char *plain;
	unsigned char *sealed;
	size_t plen, slen;
	o->rec = json_object_get(rec);
	if (!o->r->ops->set_failed(o->rec, o->fail))
		return false;
	plain = json_object_to_json_string_length(o->rec, JSON_C_TO_STRING_PLAIN, &plen);
	sealed = ph_cluster_seal(o->key, plain, plen, &slen);
	ph_cluster_key(PH_CK_LOCK, o->id, strlen(o->id), lock);
	{
		const char *argv[8] = {"EVAL", fail_script, "2", o->key, lock, box, (const char *)sealed, px};
		size_t len[8] = {4, sizeof fail_script - 1, 1, strlen(o->key), strlen(lock), blen, slen, 0};
		len[7] = (size_t)snprintf(px, sizeof px, "%lld", (long long)ph_task_redis_px(o->rec, ph_task_ended_ms(o->rec)));
		ph_hcl_cmd(o->r->conn, 8, argv, len, on_cas, NULL, o);
	}
	free(sealed);
	return true;
}

/* ph_hcl_reply_fn of the GET of o's record. */
static void
on_get(void *ctx, void *priv, struct redisReply *rep)
{
	struct op *o = priv;
	struct json_object *rec = NULL;
	(void)ctx;
	if (rep == NULL && again(o))
		return;
	if (rep != NULL && rep->type == REDIS_REPLY_STRING)
		rec = ph_cluster_open_json(o->key, rep->str, rep->len, PH_JSON_DEPTH_DOCUMENT * 2);
	/* a record under another id's key would be a forgery that opened */
	if (rec && (ph_jstr(rec, "taskId") == NULL || strcmp(ph_jstr(rec, "taskId"), o->id) != 0)) {
		json_object_put(rec);
		rec = NULL;
	}
	if (rec == NULL || o->fail == NULL || !cas_failed(o, rec, rep->str, rep->len))
		op_done(o, rec, false);
	json_object_put(rec);
}

static void
op_send(struct op *o)
{
	const char *argv[2] = {"GET", o->key};
	size_t len[2] = {3, strlen(o->key)};
	ph_hcl_cmd(o->r->conn, 2, argv, len, on_get, NULL, o);
}

/* Sends the queued operations once the connection is up; gives up on
 * those that waited too long (all of them: now < 0). */
static void
flush(struct ph_htr *r, int64_t now)
{
	struct op *q = r->queue, *o;
	bool up = now >= 0 && ph_hcl_up(r->conn);
	r->queue = r->tail = NULL;
	while ((o = q) != NULL) {
		q = o->next;
		o->next = NULL;
		if (up)
			op_send(o); /* one that fails at once may queue itself again */
		else if (now < 0 || now > o->until_us)
			op_done(o, NULL, false);
		else
			enqueue(o);
	}
}

static void
op_start(struct ph_htr *r, const char *id, const char *fail, ph_htr_rec_fn fn, void *arg)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	struct op *o = ph_xcalloc(1, sizeof *o);
	o->r = r;
	snprintf(o->id, sizeof o->id, "%s", id);
	ph_cluster_key(PH_CK_TASK, id, strlen(id), o->key);
	o->fail = fail ? ph_xstrdup(fail) : NULL;
	o->fn = fn;
	o->arg = arg;
	/* a read waits for the connection as long as a command may take; a
	 * failed mark as long as the host's lease lasts */
	o->until_us = ph_now_us() + (cc ? fail ? cc->lease_ms : cc->timeout_ms : 0) * 1000;
	if (r->queue == NULL && ph_hcl_up(r->conn))
		op_send(o);
	else
		enqueue(o); /* the connection is not up (yet, or again) */
}

void
ph_htr_get(struct ph_htr *r, const char *id, ph_htr_rec_fn fn, void *arg)
{
	op_start(r, id, NULL, fn, arg);
}

void
ph_htr_fail(struct ph_htr *r, const char *id, const char *message, ph_htr_rec_fn fn, void *arg)
{
	op_start(r, id, message, fn, arg);
}

/* ---- a step ---------------------------------------------------------------------- */

/* ph_hcl_reply_fn of the MGET of the leases of s (priv). */
static void
on_leases(void *ctx, void *priv, struct redisReply *rep)
{
	struct ph_htr *r = ctx;
	struct step *s = priv;
	if (s->gen != r->gen) {
		step_free(s);
		return;
	}
	if (rep == NULL || rep->type != REDIS_REPLY_ARRAY || rep->elements != s->nhosts) {
		step_free(s);
		pass_over(r, false); /* Redis went away: the next pass starts again */
		return;
	}
	for (size_t h = 0; h < s->nhosts; h++)
		s->alive[h] = rep->element[h]->type != REDIS_REPLY_NIL;
	judge(s);
}

/* Notes the hosts other than this one that s's working records name, and
 * asks for their leases; judges s at once when there are none. */
static void
ask_leases(struct step *s)
{
	const char *argv[1 + STEP_HOSTS];
	size_t len[1 + STEP_HOSTS];
	char keys[STEP_HOSTS][PH_CLUSTER_KEY_MAX];
	for (size_t i = 0; i < s->n; i++) {
		const char *host = s->rec[i] ? ph_jstr(s->rec[i], "_host") : NULL;
		bool known = false;
		if (host == NULL || ph_task_ended_ms(s->rec[i]) > 0 || strcmp(host, ph_cluster_host()) == 0)
			continue;
		for (size_t h = 0; h < s->nhosts && !known; h++)
			known = strcmp(s->host[h], host) == 0;
		if (!known && s->nhosts < STEP_HOSTS)
			s->host[s->nhosts++] = host;
	}
	if (s->nhosts == 0) {
		judge(s);
		return;
	}
	argv[0] = "MGET";
	len[0] = 4;
	for (size_t h = 0; h < s->nhosts; h++) {
		s->alive[h] = -1;
		ph_cluster_key(PH_CK_LEASE, s->host[h], strlen(s->host[h]), keys[h]);
		argv[1 + h] = keys[h];
		len[1 + h] = strlen(keys[h]);
	}
	s->r->busy = true;
	ph_hcl_cmd(s->r->conn, 1 + (int)s->nhosts, argv, len, on_leases, s->r, s);
}

/* ph_hcl_reply_fn of the MGET of s's records (priv). */
static void
on_records(void *ctx, void *priv, struct redisReply *rep)
{
	struct ph_htr *r = ctx;
	struct step *s = priv;
	if (s->gen != r->gen) {
		step_free(s);
		return;
	}
	r->busy = false;
	if (rep == NULL || rep->type != REDIS_REPLY_ARRAY || rep->elements != s->n) {
		step_free(s);
		pass_over(r, false);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct redisReply *v = rep->element[i];
		if (v->type != REDIS_REPLY_STRING)
			continue;
		s->rec[i] = ph_cluster_open_json(s->keys[i], v->str, v->len, PH_JSON_DEPTH_DOCUMENT * 2);
		if (s->rec[i] == NULL)
			continue;
		/* the script compares the value the pass read with what is there */
		s->box[i] = ph_xmalloc(v->len + 1);
		memcpy(s->box[i], v->str, v->len);
		s->blen[i] = v->len;
	}
	ask_leases(s);
}

/* ph_hcl_reply_fn of a SCAN (priv: the pass's generation): the next
 * cursor and the keys, whose records are asked for with one MGET. */
static void
on_scan(void *ctx, void *priv, struct redisReply *rep)
{
	struct ph_htr *r = ctx;
	struct redisReply *ks;
	struct step *s;
	const char **argv;
	size_t *len;
	if ((unsigned)(uintptr_t)priv != r->gen)
		return;
	r->busy = false;
	if (rep == NULL || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
	    rep->element[0]->type != REDIS_REPLY_STRING || rep->element[1]->type != REDIS_REPLY_ARRAY ||
	    rep->element[0]->len >= sizeof r->cursor) {
		pass_over(r, false);
		return;
	}
	snprintf(r->cursor, sizeof r->cursor, "%.*s", (int)rep->element[0]->len, rep->element[0]->str);
	ks = rep->element[1];
	s = ph_xcalloc(1, sizeof *s);
	s->r = r;
	s->gen = r->gen;
	s->keys = ph_xcalloc(ks->elements + 1, sizeof *s->keys);
	s->rec = ph_xcalloc(ks->elements + 1, sizeof *s->rec);
	s->box = ph_xcalloc(ks->elements + 1, sizeof *s->box);
	s->blen = ph_xcalloc(ks->elements + 1, sizeof *s->blen);
	for (size_t i = 0; i < ks->elements; i++)
		if (ks->element[i]->type == REDIS_REPLY_STRING && ks->element[i]->len < PH_CLUSTER_KEY_MAX)
			s->keys[s->n++] = ph_xstrndup(ks->element[i]->str, ks->element[i]->len);
	if (s->n == 0) {
		step_free(s);
		step_done(r);
		return;
	}
	argv = ph_xcalloc(s->n + 1, sizeof *argv);
	len = ph_xcalloc(s->n + 1, sizeof *len);
	argv[0] = "MGET";
	len[0] = 4;
	for (size_t i = 0; i < s->n; i++) {
		argv[i + 1] = s->keys[i];
		len[i + 1] = strlen(s->keys[i]);
	}
	r->busy = true;
	ph_hcl_cmd(r->conn, (int)s->n + 1, argv, len, on_records, r, s);
	free(argv);
	free(len);
}

void
ph_htr_tick(struct ph_htr *r, struct ph_hcl *conn, long long purge_interval_ms)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	char match[PH_CLUSTER_KEY_MAX + 8];
	const char *argv[6] = {"SCAN", r->cursor, "MATCH", match, "COUNT", SCAN_COUNT};
	size_t len[6] = {4, 0, 5, 0, 5, sizeof SCAN_COUNT - 1};
	r->conn = conn;
	r->purge_ms = purge_interval_ms;
	flush(r, ph_now_us());
	if (r->busy || cc == NULL)
		return;
	if (!r->scanning) {
		if (ph_now_us() < r->next_pass_us)
			return;
		snprintf(r->cursor, sizeof r->cursor, "0");
		r->scanning = true;
		r->count = 0;
	}
	len[1] = strlen(r->cursor);
	/* a prefix holding glob characters matches more: each key's value then
	 * fails to open and is skipped */
	len[3] = (size_t)snprintf(match, sizeof match, "%s%s:*", cc->prefix, PH_CK_TASK);
	r->busy = true;
	ph_hcl_cmd(conn, 6, argv, len, on_scan, r, (void *)(uintptr_t)r->gen);
}

void
ph_htr_reset(struct ph_htr *r)
{
	r->gen++; /* the replies of the pass in progress are dropped */
	r->scanning = false;
	r->busy = false;
}

/* ---- the lease --------------------------------------------------------------------- */

static struct {
	int64_t next_us;
	bool busy;
} lease;

/* ph_hcl_reply_fn of the lease's SET. */
static void
leased(void *ctx, void *priv, struct redisReply *rep)
{
	(void)ctx, (void)priv;
	lease.busy = false;
	if (rep == NULL)
		lease.next_us = ph_now_us() + LEASE_RETRY_US; /* once the connection is back */
	else if (rep->type == REDIS_REPLY_ERROR)
		ph_log("error", "cluster: the lease of host %s was refused: %.200s", ph_cluster_host(), rep->str);
}

void
ph_hub_lease_tick(struct ph_hcl *conn)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	char key[PH_CLUSTER_KEY_MAX], ms[24];
	const char *argv[5] = {"SET", key, "1", "PX", ms};
	size_t len[5] = {3, 0, 1, 2, 0};
	int64_t now = ph_now_us();
	if (cc == NULL || conn == NULL || lease.busy || now < lease.next_us)
		return;
	ph_cluster_key(PH_CK_LEASE, cc->host, strlen(cc->host), key);
	len[1] = strlen(key);
	len[4] = (size_t)snprintf(ms, sizeof ms, "%lld", cc->lease_ms);
	lease.busy = true;
	lease.next_us = now + cc->lease_ms * 1000 / 3;
	ph_hcl_cmd(conn, 5, argv, len, leased, NULL, NULL);
}
#else
void
ph_htr_tick(struct ph_htr *r, struct ph_hcl *conn, long long purge_interval_ms)
{
	(void)r, (void)conn, (void)purge_interval_ms;
}

void
ph_htr_reset(struct ph_htr *r)
{
	(void)r;
}

void
ph_hub_lease_tick(struct ph_hcl *conn)
{
	(void)conn;
}

void
ph_htr_get(struct ph_htr *r, const char *id, ph_htr_rec_fn fn, void *arg)
{
	fn(r->ctx, id, NULL, false, arg);
}

void
ph_htr_fail(struct ph_htr *r, const char *id, const char *message, ph_htr_rec_fn fn, void *arg)
{
	(void)message;
	fn(r->ctx, id, NULL, false, arg);
}
#endif

struct ph_htr *
ph_htr_new(const struct ph_htr_ops *ops, void *ctx)
{
	struct ph_htr *r = ph_xcalloc(1, sizeof *r);
	r->ops = ops;
	r->ctx = ctx;
	return r;
}

void
ph_htr_free(struct ph_htr *r)
{
	if (r == NULL)
		return;
#ifdef PH_HAVE_HIREDIS
	flush(r, -1); /* the operations waiting are told */
#endif
	free(r);
}
