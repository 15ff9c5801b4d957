/* ph_hub_cluster_session.c: with cluster:, the shared state of legacy
 * sessions (ph_hub_cluster_int.h). A session's record is a hash in Redis
 * (kind PH_CK_SESSION, named by the session id's keyed hash) whose fields
 * are sealed each for the key and the field: "d" it ended (its expiry),
 * "l" its log level, "u<hash>" a resource subscription; its last events
 * are a list (kind "e") for a GET stream resumed on another host. A
 * worker's question about a session (CHECK, END, LEVEL, SUB, UNSUB, OPEN)
 * is answered once Redis replied, or within DEFER_MAX_MS from what this
 * hub knows; other hubs hear of changes through the announcement channel
 * ("ss" subscriptions changed, "sh" a GET stream opened elsewhere). */
#include "first.h"
#ifdef PH_HAVE_HIREDIS
#include "ph_hub_cluster_int.h"
#include "ph_hub_cluster_conn.h"
#include "ph_hub_session.h"
#include "ph_hub_state.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_util.h"
#include <hiredis/hiredis.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A worker's session question, answered once Redis has replied (or at
 * deadline_us from what this hub knows: out). */
struct defer {
	struct ph_hub_cluster *c;
	int fd;                   /* the worker's reply socket, -1 once answered */
	enum ph_hubmsg_type type;
	unsigned char sid[PH_HUBMSG_SID_BYTES];
	int64_t exp, deadline_us;
	char key[PH_CLUSTER_KEY_MAX];
	char out[300];
	struct json_object *rec;  /* SESSION_OPEN: the record read, before its events */
};

/* The associated data of field f of the session record key. */
static void
field_ad(const char *key, const char *f, char *out, size_t n)
{
	snprintf(out, n, "%s#%s", key, f);
}

/* Answers d's worker with text (once) and forgets d when done (its
 * command's reply came). */
static void
defer_answer(struct defer *d, const char *text)
{
	if (d->fd < 0)
		return;
	ph_hub_sessions_answer(d->fd, text);
	d->fd = -1;
}

static void
defer_drop(struct defer *d)
{
	struct ph_hub_cluster *c = d->c;
	for (size_t i = 0; i < c->nd; i++)
		if (c->dv[i] == d) {
			c->dv[i] = c->dv[--c->nd];
			break;
		}
	defer_answer(d, d->out);
	free(d);
}

/* The reply to HGETALL of a session record: ended elsewhere, or the level
 * another host set. */
static void
checked(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	char ad[PH_CLUSTER_KEY_MAX + 4], out[300];
	(void)ctx;
	for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
		const char *f = r->element[i]->str;
		char *v;
		size_t vlen;
		if (r->element[i]->type != REDIS_REPLY_STRING || r->element[i + 1]->type != REDIS_REPLY_STRING ||
		    strlen(f) != 1)
			continue;
		field_ad(d->key, f, ad, sizeof ad);
		if ((v = ph_cluster_open(ad, r->element[i + 1]->str, r->element[i + 1]->len, &vlen)) == NULL)
			continue;
		if (*f == 'd') {
			ph_hub_sessions_ended_elsewhere(d->c->h->sessions, d->sid, strtoll(v, NULL, 10));
			snprintf(d->out, sizeof d->out, "ended");
		} else if (*f == 'l' && strncmp(d->out, "live", 4) == 0 && ph_log_level_parse(v) != PH_LOG_NONE) {
			snprintf(out, sizeof out, "live %s", v);
			memcpy(d->out, out, sizeof out);
		}
		free(v);
		if (strcmp(d->out, "ended") == 0)
			break;
	}
	defer_drop(d);
}

/* The reply to HSET of a session's field: the worker is told once it is
 * stored for every host (an END that Redis did not store is refused). */
static void
stored(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	bool ok = r != NULL && r->type != REDIS_REPLY_ERROR;
	(void)ctx;
	if (d->type == PH_HUBMSG_SESSION_END && ok) {
		struct json_object *doc = json_object_new_object();
		char hex[2 * PH_HUBMSG_SID_BYTES + 1];
		sodium_bin2hex(hex, sizeof hex, d->sid, sizeof d->sid);
		json_object_object_add(doc, "d", json_object_new_string(hex));
		json_object_object_add(doc, "e", json_object_new_int64(d->exp));
		ph_hcl_publish(d->c->conn, d->c->ann, doc, MSG_TTL_S);
	} else if (d->type == PH_HUBMSG_SESSION_END) {
		snprintf(d->out, sizeof d->out, "no the cluster's Redis did not record it within "
			 "cluster.timeout_ms, so the other hosts still take the session; try again");
	} else if (!ok) {
		ph_log("warning", "hub: cluster: a session's log level is kept on this host only (Redis "
		       "did not store it)");
	}
	defer_drop(d);
}

/* Sends HSET key field value(sealed) and PEXPIREAT at the session's
 * expiry; stored() answers d. */
static void
store_field(struct defer *d, const char *field, const char *value)
{
	char ad[PH_CLUSTER_KEY_MAX + 4], at[24], key[PH_CLUSTER_KEY_MAX];
	struct ph_hcl *conn = d->c->conn;
	size_t blen;
	unsigned char *box;
	/* d may be answered and freed within the first command (Redis down) */
	memcpy(key, d->key, sizeof key);
	field_ad(key, field, ad, sizeof ad);
	box = ph_cluster_seal(ad, value, strlen(value), &blen);
	snprintf(at, sizeof at, "%lld", (long long)(d->exp + 60) * 1000);
	{
		const char *hset[4] = {"HSET", key, field, (const char *)box};
		size_t hlen[4] = {4, strlen(key), strlen(field), blen};
		const char *exp[3] = {"PEXPIREAT", key, at};
		size_t elen[3] = {9, strlen(key), strlen(at)};
		/* one connection: PEXPIREAT runs after HSET made the key */
		ph_hcl_cmd(conn, 4, hset, hlen, stored, d->c, d);
		ph_hcl_cmd(conn, 3, exp, elen, NULL, NULL, NULL);
	}
	free(box);
}

/* The field of the subscription to uri: "u" and a keyed hash of it. */
static void
sub_field(const char *uri, char *out, size_t n)
{
	char k[PH_CLUSTER_KEY_MAX];
	const char *colon;
	ph_cluster_key("u", uri, strlen(uri), k);
	colon = strrchr(k, ':');
	colon = colon ? colon + 1 : k;
	if (n < 2)
		return;
	out[0] = 'u';
	memcpy(out + 1, colon, strlen(colon) + 1 < n - 1 ? strlen(colon) + 1 : n - 1);
	out[n - 1] = '\0';
}

/* What HGETALL r of the session record key holds: {"subs": [{u, p}...],
 * "level"}, its fields opened (caller puts). */
static struct json_object *
read_record(const char *key, struct redisReply *r)
{
	struct json_object *rec = json_object_new_object(), *subs = json_object_new_array();
	char ad[PH_CLUSTER_KEY_MAX + 40];
	json_object_object_add(rec, "subs", subs);
	for (size_t i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
		struct redisReply *f = r->element[i], *v = r->element[i + 1];
		char *plain;
		size_t plen;
		if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING || f->len > 40)
			continue;
		field_ad(key, f->str, ad, sizeof ad);
		if ((plain = ph_cluster_open(ad, v->str, v->len, &plen)) == NULL)
			continue;
		if (strcmp(f->str, "l") == 0) {
			json_object_object_add(rec, "level", json_object_new_string(plain));
		} else if (f->str[0] == 'u') {
			struct json_object *s = NULL;
			if (ph_json_parse(plain, plen, 4, &s) && json_object_is_type(s, json_type_object))
				json_object_array_add(subs, s);
			else
				json_object_put(s);
		}
		free(plain);
	}
	return rec;
}

/* The events key of the session record key. */
static void
events_key(const char *key, char *out)
{
	const char *colon = strrchr(key, ':');
	ph_cluster_key("e", colon ? colon + 1 : key, strlen(colon ? colon + 1 : key), out);
}

/* SESSION_OPEN, 1: the session's record. */
static void
open_record(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	(void)ctx;
	if (r != NULL)
		d->rec = read_record(d->key, r);
}

/* SESSION_OPEN, 2: its last events (oldest first); all of it merged into
 * this hub's state, which holds the session's GET stream from now on. */
static void
open_events(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	struct json_object *ev = NULL, *doc;
	char hex[2 * PH_HUBMSG_SID_BYTES + 1], ek[PH_CLUSTER_KEY_MAX];
	(void)ctx;
	sodium_bin2hex(hex, sizeof hex, d->sid, sizeof d->sid);
	events_key(d->key, ek);
	if (r != NULL && r->type == REDIS_REPLY_ARRAY) {
		ev = json_object_new_array();
		for (size_t i = 0; i < r->elements; i++) {
			char *plain;
			size_t plen;
			if (r->element[i]->type == REDIS_REPLY_STRING &&
			    (plain = ph_cluster_open(ek, r->element[i]->str, r->element[i]->len, &plen)) != NULL) {
				json_object_array_add(ev, json_object_new_string_len(plain, (int)plen));
				free(plain);
			}
		}
	}
	if (d->rec != NULL)
		ph_hub_states_merge(ph_hub_sessions_states(d->c->h->sessions), hex, ph_jget(d->rec, "subs"),
				    ph_jstr(d->rec, "level"), ev);
	json_object_put(ev);
	json_object_put(d->rec);
	d->rec = NULL;
	doc = json_object_new_object();
	json_object_object_add(doc, "sh", json_object_new_string(hex));
	ph_hcl_publish(d->c->conn, d->c->ann, doc, MSG_TTL_S); /* the other hubs stop recording its events */
	defer_drop(d);
}

/* A note from another host: the session hex's subscriptions changed
 * (sh: its GET stream opened there). */
static void
refreshed(void *ctx, void *priv, struct redisReply *r)
{
	struct ph_hub_cluster *c = ctx;
	char *hex = priv, key[PH_CLUSTER_KEY_MAX];
	struct json_object *rec;
	if (r != NULL) {
		ph_cluster_key(PH_CK_SESSION, hex, strlen(hex), key);
		rec = read_record(key, r);
		ph_hub_states_merge(ph_hub_sessions_states(c->h->sessions), hex, ph_jget(rec, "subs"),
				    ph_jstr(rec, "level"), NULL);
		json_object_put(rec);
	}
	free(hex);
}

void
ph_hub_cluster_session_note(struct ph_hub_cluster *c, struct json_object *doc)
{
	struct ph_hub_states *st = ph_hub_sessions_states(c->h->sessions);
	const char *ss = ph_jstr(doc, "ss"), *sh = ph_jstr(doc, "sh");
	char key[PH_CLUSTER_KEY_MAX];
	if (sh != NULL) {
		ph_hub_states_not_holder(st, sh);
	} else if (ss != NULL && strlen(ss) == 2 * PH_HUBMSG_SID_BYTES && ph_hub_states_has(st, ss)) {
		const char *argv[2] = {"HGETALL", key};
		size_t len[2] = {7, 0};
		ph_cluster_key(PH_CK_SESSION, ss, strlen(ss), key);
		len[1] = strlen(key);
		ph_hcl_cmd(c->conn, 2, argv, len, refreshed, c, ph_xstrdup(ss));
	}
}

void
ph_hub_cluster_on_event(void *ctx, const char *sid, int64_t exp, const char *text, size_t len)
{
	struct ph_hub_cluster *c = ctx;
	char key[PH_CLUSTER_KEY_MAX], ek[PH_CLUSTER_KEY_MAX], keep[24], at[24];
	unsigned char *box;
	size_t blen;
	ph_cluster_key(PH_CK_SESSION, sid, strlen(sid), key);
	events_key(key, ek);
	box = ph_cluster_seal(ek, text, len, &blen);
	snprintf(keep, sizeof keep, "-%lld", c->h->srv->conf->sessions.replay);
	snprintf(at, sizeof at, "%lld", (long long)(exp + 60) * 1000);
	{
		const char *push[3] = {"RPUSH", ek, (const char *)box};
		size_t plen[3] = {5, strlen(ek), blen};
		const char *trim[4] = {"LTRIM", ek, keep, "-1"};
		size_t tlen[4] = {5, strlen(ek), strlen(keep), 2};
		const char *exp_[3] = {"PEXPIREAT", ek, at};
		size_t elen[3] = {9, strlen(ek), strlen(at)};
		ph_hcl_cmd(c->conn, 3, push, plen, NULL, NULL, NULL);
		ph_hcl_cmd(c->conn, 4, trim, tlen, NULL, NULL, NULL);
		ph_hcl_cmd(c->conn, 3, exp_, elen, NULL, NULL, NULL);
	}
	free(box);
}

/* The reply to HSET or HDEL of a subscription: the hubs that hold state
 * for the session read its subscriptions again, then the worker is told. */
static void
subs_stored(void *ctx, void *priv, struct redisReply *r)
{
	struct defer *d = priv;
	(void)ctx;
	if (r != NULL && r->type != REDIS_REPLY_ERROR) {
		struct json_object *doc = json_object_new_object();
		char hex[2 * PH_HUBMSG_SID_BYTES + 1];
		sodium_bin2hex(hex, sizeof hex, d->sid, sizeof d->sid);
		json_object_object_add(doc, "ss", json_object_new_string(hex));
		ph_hcl_publish(d->c->conn, d->c->ann, doc, MSG_TTL_S);
	} else {
		ph_log("warning", "hub: cluster: a session's resource subscription is kept on this host only "
		       "(Redis did not store it)");
	}
	defer_drop(d);
}

/* Stores (add) or removes the subscription of d's session to uri (path:
 * its file, NULL: none); subs_stored answers d. */
static void
sub_subscription(struct defer *d, bool add, const char *uri, const char *path)
{
	char field[PH_CLUSTER_KEY_MAX], ad[PH_CLUSTER_KEY_MAX + 40], key[PH_CLUSTER_KEY_MAX], at[24];
	struct ph_hcl *conn = d->c->conn;
	memcpy(key, d->key, sizeof key);
	sub_field(uri, field, sizeof field);
	snprintf(at, sizeof at, "%lld", (long long)(d->exp + 60) * 1000);
	if (add) {
		struct json_object *v = json_object_new_object();
		const char *plain;
		unsigned char *box;
		size_t plen, blen;
		json_object_object_add(v, "u", json_object_new_string(uri));
		if (path)
			json_object_object_add(v, "p", json_object_new_string(path));
		plain = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &plen);
		field_ad(key, field, ad, sizeof ad);
		box = ph_cluster_seal(ad, plain, plen, &blen);
		json_object_put(v);
		{
			const char *hset[4] = {"HSET", key, field, (const char *)box};
			size_t hlen[4] = {4, strlen(key), strlen(field), blen};
			const char *exp[3] = {"PEXPIREAT", key, at};
			size_t elen[3] = {9, strlen(key), strlen(at)};
			ph_hcl_cmd(conn, 4, hset, hlen, subs_stored, d->c, d);
			ph_hcl_cmd(conn, 3, exp, elen, NULL, NULL, NULL);
		}
		free(box);
	} else {
		const char *hdel[3] = {"HDEL", key, field};
		size_t hlen[3] = {4, strlen(key), strlen(field)};
		ph_hcl_cmd(conn, 3, hdel, hlen, subs_stored, d->c, d);
	}
}

bool
ph_hub_cluster_defer_session(void *ctx, const struct ph_hubmsg *m, const char *out, int fd)
{
	struct ph_hub_cluster *c = ctx;
	const struct ph_hubmsg_session *s = &m->u.session;
	struct defer *d;
	char hex[2 * PH_HUBMSG_SID_BYTES + 1], num[24];
	bool check = m->type == PH_HUBMSG_SESSION_CHECK && strcmp(out, "ended") != 0;
	bool end = m->type == PH_HUBMSG_SESSION_END && strcmp(out, "ok") == 0 && s->has_exp;
	bool level = m->type == PH_HUBMSG_SESSION_LEVEL && strcmp(out, "ok") == 0 && s->has_exp && s->level;
	bool subs = (m->type == PH_HUBMSG_SESSION_SUB || m->type == PH_HUBMSG_SESSION_UNSUB) &&
		    strcmp(out, "ok") == 0 && s->has_exp && s->uri != NULL;
	bool open = m->type == PH_HUBMSG_SESSION_OPEN && strcmp(out, "ok") == 0;
	if (!check && !end && !level && !subs && !open)
		return false;
	d = ph_xcalloc(1, sizeof *d);
	d->c = c;
	d->fd = fd;
	d->type = m->type;
	memcpy(d->sid, s->sid, sizeof d->sid);
	d->exp = s->exp;
	d->deadline_us = ph_now_us() + (c->timeout_ms < DEFER_MAX_MS ? c->timeout_ms : DEFER_MAX_MS) * 1000;
	snprintf(d->out, sizeof d->out, "%s", out);
	sodium_bin2hex(hex, sizeof hex, s->sid, sizeof s->sid);
	ph_cluster_key(PH_CK_SESSION, hex, strlen(hex), d->key);
	c->dv = ph_xrealloc(c->dv, (c->nd + 1) * sizeof *c->dv);
	c->dv[c->nd++] = d;
	if (check) {
		const char *argv[2] = {"HGETALL", d->key};
		size_t len[2] = {7, strlen(d->key)};
		ph_hcl_cmd(c->conn, 2, argv, len, checked, c, d);
	} else if (end) {
		snprintf(num, sizeof num, "%lld", (long long)s->exp);
		store_field(d, "d", num);
	} else if (level) {
		store_field(d, "l", s->level);
	} else if (open) {
		char ek[PH_CLUSTER_KEY_MAX];
		const char *hget[2] = {"HGETALL", d->key}, *lr[4] = {"LRANGE", ek, "0", "-1"};
		size_t hlen[2] = {7, strlen(d->key)}, llen[4] = {6, 0, 1, 2};
		events_key(d->key, ek);
		llen[1] = strlen(ek);
		ph_hcl_cmd(c->conn, 2, hget, hlen, open_record, c, d);
		ph_hcl_cmd(c->conn, 4, lr, llen, open_events, c, d); /* answers d */
	} else {
		sub_subscription(d, m->type == PH_HUBMSG_SESSION_SUB, s->uri, s->path);
	}
	return true;
}

void
ph_hub_cluster_defer_tick(struct ph_hub_cluster *c)
{
	int64_t now = ph_now_us();
	for (size_t i = 0; i < c->nd; i++)
		if (c->dv[i]->fd >= 0 && now >= c->dv[i]->deadline_us) {
			if (c->dv[i]->type == PH_HUBMSG_SESSION_END)
				snprintf(c->dv[i]->out, sizeof c->dv[i]->out, "no the cluster's Redis did not "
					 "record it within cluster.timeout_ms, so the other hosts still take "
					 "the session; try again");
			defer_answer(c->dv[i], c->dv[i]->out);
		}
}
#else
/* ISO C wants something in a translation unit */
typedef int ph_hub_cluster_session_empty;
#endif
