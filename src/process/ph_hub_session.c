/* ph_hub_session.c: the hub's part of legacy sessions. A session id is a
 * sealed token any worker can open (core/ph_session.c); what a token cannot
 * say is that it was ended, so the ids ended with DELETE are kept here,
 * each until the expiry its token carries, at most sessions.max_terminated
 * of them. Workers ask over the master's channel with a reply socket:
 *   {"session":"check","sid":HEX}           -> "live" | "ended"
 *   {"session":"end","sid":HEX,"exp":SECS}  -> "ok" | "no <reason>" */
#include "first.h"
#include "ph_hub_session.h"
#include "ph_json.h"
#include "ph_util.h"
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The bytes of a session's id (its "sid", 32 hex digits in the token). */
#define SID_BYTES 16
/* How often expired ids are forgotten. */
#define PURGE_EVERY_US 10000000

struct ended {
	unsigned char sid[SID_BYTES];
	int64_t exp; /* seconds; 0: the slot is free */
};

struct ph_hub_sessions {
	struct ph_server *srv; /* borrowed: the hub's */
	struct ended *tab;     /* open addressing, linear probing; cap a power of two */
	size_t n, cap;
	int64_t next_purge_us;
};

struct ph_hub_sessions *
ph_hub_sessions_new(struct ph_server *srv)
{
	struct ph_hub_sessions *t = ph_xcalloc(1, sizeof *t);
	t->srv = srv;
	t->next_purge_us = ph_now_us() + PURGE_EVERY_US;
	return t;
}

void
ph_hub_sessions_free(struct ph_hub_sessions *t)
{
	if (t == NULL)
		return;
	free(t->tab);
	free(t);
}

void
ph_hub_sessions_reconf(struct ph_hub_sessions *t, struct ph_server *srv)
{
	t->srv = srv;
}

size_t
ph_hub_sessions_ended(const struct ph_hub_sessions *t)
{
	return t->n;
}

/* The slot of sid in tab (cap entries): where it is, or the free slot
 * where it would go. The ids are random, so their first bytes hash well. */
static size_t
slot(const struct ended *tab, size_t cap, const unsigned char *sid)
{
	uint64_t hv;
	size_t i;
	memcpy(&hv, sid, sizeof hv);
	for (i = (size_t)hv & (cap - 1); tab[i].exp != 0; i = (i + 1) & (cap - 1))
		if (memcmp(tab[i].sid, sid, SID_BYTES) == 0)
			break;
	return i;
}

/* Rebuilds the table with room for at least want entries, dropping the
 * ids that have expired by now_s. */
static void
rebuild(struct ph_hub_sessions *t, size_t want, int64_t now_s)
{
	size_t cap = 64;
	struct ended *tab;
	while (cap < 2 * want)
		cap *= 2;
	tab = ph_xcalloc(cap, sizeof *tab);
	t->n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->tab[i].exp == 0 || t->tab[i].exp < now_s)
			continue;
		tab[slot(tab, cap, t->tab[i].sid)] = t->tab[i];
		t->n++;
	}
	free(t->tab);
	t->tab = tab;
	t->cap = cap;
}

static bool
is_ended(const struct ph_hub_sessions *t, const unsigned char *sid, int64_t now_s)
{
	size_t i;
	if (t->cap == 0)
		return false;
	i = slot(t->tab, t->cap, sid);
	return t->tab[i].exp != 0 && t->tab[i].exp >= now_s;
}

/* Remembers sid until exp. Returns NULL, or why it cannot. */
static const char *
remember(struct ph_hub_sessions *t, const unsigned char *sid, int64_t exp, int64_t now_s)
{
	long long max = t->srv->conf->sessions.max_terminated;
	size_t i;
	if (exp < now_s)
		return NULL; /* expired anyway: nothing to remember */
	if (is_ended(t, sid, now_s))
		return NULL;
	if ((long long)t->n >= max)
		rebuild(t, t->n, now_s); /* make room from the expired ones */
	if ((long long)t->n >= max)
		return "too many ended sessions are remembered (sessions.max_terminated)";
	if (2 * (t->n + 1) > t->cap)
		rebuild(t, t->n + 1, now_s);
	i = slot(t->tab, t->cap, sid);
	memcpy(t->tab[i].sid, sid, SID_BYTES);
	t->tab[i].exp = exp;
	t->n++;
	return NULL;
}

void
ph_hub_sessions_tick(struct ph_hub_sessions *t)
{
	int64_t now = ph_now_us();
	if (now < t->next_purge_us)
		return;
	t->next_purge_us = now + PURGE_EVERY_US;
	if (t->n > 0)
		rebuild(t, t->n, (int64_t)time(NULL));
}

static void
reply(int fd, const char *text)
{
	if (fd >= 0 && send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		ph_log("warning", "hub: a worker did not wait for the session answer: %s", strerror(errno));
}

bool
ph_hub_sessions_message(struct ph_hub_sessions *t, const char *text, size_t len, int fd)
{
	static const char tag[] = "{\"session\":";
	struct json_object *m = NULL, *exp;
	const char *what, *hex;
	unsigned char sid[SID_BYTES];
	size_t got = 0;
	int64_t now_s = (int64_t)time(NULL);
	if (len < sizeof tag || memcmp(text, tag, sizeof tag - 1) != 0)
		return false;
	if (!ph_json_parse(text, len, 4, &m) || (what = ph_jstr(m, "session")) == NULL ||
	    (hex = ph_jstr(m, "sid")) == NULL || strlen(hex) != 2 * SID_BYTES ||
	    sodium_hex2bin(sid, sizeof sid, hex, strlen(hex), NULL, &got, NULL) != 0 ||
	    got != SID_BYTES) {
		ph_log("error", "hub: a session message it cannot read; ignored");
		reply(fd, "no unreadable message");
	} else if (strcmp(what, "check") == 0) {
		reply(fd, is_ended(t, sid, now_s) ? "ended" : "live");
	} else if (strcmp(what, "end") == 0 && (exp = ph_jget(m, "exp")) != NULL &&
		   json_object_is_type(exp, json_type_int)) {
		const char *why = remember(t, sid, json_object_get_int64(exp), now_s);
		char out[160];
		if (why != NULL)
			ph_log("warning", "hub: a session cannot be ended: %s", why);
		snprintf(out, sizeof out, "%s%s", why ? "no " : "ok", why ? why : "");
		reply(fd, out);
	} else {
		reply(fd, "no unknown session message");
	}
	if (fd >= 0)
		close(fd);
	json_object_put(m);
	return true;
}
