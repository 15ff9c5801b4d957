/* test_hub_state.c: the legacy sessions' state in the hub (ph_hub_state.c)
 * without a hub: logging/setLevel's level and what "check" answers, event
 * ids and the replay after Last-Event-ID (newer than the oldest held,
 * older, unknown, sessions.replay 0), every stream of a session getting
 * every event, a stream dropped while it is written to, the limits
 * (sessions.max_state, sessions.max_subscriptions) with their messages, a
 * stream of another principal refused, DELETE and idle expiry
 * (sessions.state_idle) ending the state and closing its streams. */
#include "first.h"
#include "ph_hub_state.h"
#include "ph_json.h"
#include "ph_util.h"
#include "tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fake {
	char text[4096];
	size_t len;
	bool closed, drop_on_send;
	struct ph_hub_states *t;
	struct ph_hstate *st;
};

static bool
fake_send(void *ctx, void *stream, const char *text, size_t len)
{
	struct fake *f = stream;
	(void)ctx;
	if (f->drop_on_send) {
		ph_hub_states_detach(f->t, f->st, f);
		return false;
	}
	if (f->len + len < sizeof f->text) {
		memcpy(f->text + f->len, text, len);
		f->len += len;
		f->text[f->len] = '\0';
	}
	return true;
}

static void
fake_close(void *ctx, void *stream)
{
	(void)ctx;
	((struct fake *)stream)->closed = true;
}

static unsigned char sid_a[16] = {1}, sid_b[16] = {2}, sid_c[16] = {3};

static char *
hex(const unsigned char *sid)
{
	static char h[33];
	for (int i = 0; i < 16; i++)
		snprintf(h + 2 * i, 3, "%02x", sid[i]);
	return h;
}

/* Sends the state message what for sid (with "who":"alice" and the JSON
 * members more) and returns the answer. */
static const char *
say(struct ph_hub_states *t, const char *what, const unsigned char *sid, const char *more)
{
	static char out[400];
	struct ph_hubmsg m;
	char text[512];
	snprintf(text, sizeof text, "{\"hub\":\"session.%s\",\"sid\":\"%s\",\"exp\":99999999999,\"who\":\"alice\"%s%s}",
		 what, hex(sid), more ? "," : "", more ? more : "");
	if (!ph_hubmsg_parse(text, strlen(text), ph_hubmsg_depth(64), &m)) {
		ph_hubmsg_free(&m);
		return "(bad test message)";
	}
	if (!ph_hub_states_message(t, &m, out, sizeof out))
		snprintf(out, sizeof out, "(not a state message)");
	ph_hubmsg_free(&m);
	return out;
}

/* The ids of the events in text, space separated. */
static const char *
ids(const char *text)
{
	static char out[256];
	size_t n = 0;
	out[0] = '\0';
	for (const char *p = text; (p = strstr(p, "id: ")) != NULL; p += 4) {
		if (p != text && p[-1] != '\n')
			continue;
		n += (size_t)snprintf(out + n, sizeof out - n, "%s%.*s", n ? " " : "", (int)strcspn(p + 4, "\n"), p + 4);
	}
	return out;
}

static void
announce(struct ph_hub_states *t, int times)
{
	for (int i = 0; i < times; i++)
		ph_hub_states_list_changed(t, 0, NULL, NULL);
}

int
main(void)
{
	static struct ph_config conf;
	static struct ph_server srv;
	struct ph_hub_states *t;
	struct fake f1, f2, f3;
	struct ph_buf replay;
	char why[200], out[64];

	conf.sessions.max_state = 2;
	conf.sessions.max_subscriptions = 1;
	conf.sessions.state_idle = 3600;
	conf.sessions.replay = 3;
	conf.subscriptions.max_watches = 16;
	srv.conf = &conf;
	t = ph_hub_states_new(&srv);
	ph_hub_states_streams(t, fake_send, fake_close, NULL);

	/* the level */
	ph_hub_states_check(t, sid_a, out, sizeof out);
	is_str(out, "live", "check before any state: live");
	is_str(say(t, "level", sid_a, "\"level\":\"loud\""), "no not a log level", "an unknown level is refused");
	is_str(say(t, "level", sid_a, "\"level\":\"warning\""), "ok", "level warning: ok");
	ph_hub_states_check(t, sid_a, out, sizeof out);
	is_str(out, "live warning", "check then says the level");
	is_int(ph_hub_states_count(t), 1, "one session holds state");
	is_str(say(t, "level", sid_b, "\"level\":\"error\""), "ok", "a second session: ok");
	ok(strncmp(say(t, "level", sid_c, "\"level\":\"error\""), "no too many sessions hold state on this host "
		   "(sessions.max_state is 2)", 60) == 0, "a third session is over sessions.max_state 2");
	is_str(say(t, "unsub", sid_c, "\"uri\":\"x://a\""), "ok", "unsubscribe without state is ok (and makes none)");
	is_int(ph_hub_states_count(t), 2, "still two sessions");

	/* subscriptions: the limit per session */
	is_str(say(t, "sub", sid_a, "\"uri\":\"x://a\""), "ok", "a subscription: ok");
	is_str(say(t, "sub", sid_a, "\"uri\":\"x://a\""), "ok", "the same one again: ok");
	ok(strncmp(say(t, "sub", sid_a, "\"uri\":\"x://b\""), "no this session holds sessions.max_subscriptions (1)",
		   50) == 0, "a second one is over sessions.max_subscriptions 1");
	is_str(say(t, "sub", sid_a, "\"path\":\"/x\""), "no the message names no uri", "a subscription without uri");

	/* streams, event ids and replay */
	memset(&f1, 0, sizeof f1);
	memset(&f2, 0, sizeof f2);
	memset(&f3, 0, sizeof f3);
	ph_buf_init(&replay);
	ok(ph_hub_states_attach(t, hex(sid_c), "alice", &f1, NULL, &replay, why, sizeof why) == NULL,
	   "a stream on a session without state is refused");
	ok(ph_hub_states_attach(t, hex(sid_a), "bob", &f1, NULL, &replay, why, sizeof why) == NULL,
	   "a stream of another principal is refused");
	is_str(why, "the session belongs to another principal", "and says so");
	f1.st = ph_hub_states_attach(t, hex(sid_a), "alice", &f1, NULL, &replay, why, sizeof why);
	f2.st = ph_hub_states_attach(t, hex(sid_a), "alice", &f2, "7", &replay, why, sizeof why);
	ok(f1.st && f2.st, "two streams on one session");
	is_int(replay.len, 0, "nothing to replay yet");
	ph_hub_states_announce(t, "x://a");
	announce(t, 1);
	is_str(ids(f1.text), "1 2", "the first stream: events 1 and 2");
	is_str(ids(f2.text), "1 2", "the second stream too");
	ok(strstr(f1.text, "\"method\":\"notifications\\/resources\\/updated\"") ||
	   strstr(f1.text, "\"method\":\"notifications/resources/updated\""), "resources/updated for the subscription");
	ok(strstr(f1.text, "tools") != NULL, "and the list_changed");
	ph_hub_states_detach(t, f1.st, &f1);
	ph_hub_states_detach(t, f2.st, &f2);
	announce(t, 3); /* 3, 4, 5; 3 are held: 3 4 5 */
	f3.t = t;
	f3.st = ph_hub_states_attach(t, hex(sid_a), "alice", &f3, "4", &replay, why, sizeof why);
	is_str(ids(replay.data ? replay.data : ""), "5", "Last-Event-ID 4: event 5 replayed");
	ph_buf_reset(&replay);
	ph_hub_states_detach(t, f3.st, &f3);
	f3.st = ph_hub_states_attach(t, hex(sid_a), "alice", &f3, "1", &replay, why, sizeof why);
	is_str(ids(replay.data), "3 4 5", "Last-Event-ID 1 (older than the three held): all held");
	ok(strstr(replay.data, ": events 2 to 2 are no longer held (sessions.replay is 3)\n\n") == replay.data,
	   "after a comment naming what was lost");
	ph_buf_reset(&replay);
	ph_hub_states_detach(t, f3.st, &f3);
	f3.st = ph_hub_states_attach(t, hex(sid_a), "alice", &f3, "6", &replay, why, sizeof why);
	is_int(replay.len, 0, "an id not sent yet: nothing replayed");
	f3.st = (ph_hub_states_detach(t, f3.st, &f3),
		 ph_hub_states_attach(t, hex(sid_a), "alice", &f3, "x1", &replay, why, sizeof why));
	is_int(replay.len, 0, "an id that is not a number: nothing replayed");

	/* a stream dropped by its own write leaves the others their events */
	memset(&f1, 0, sizeof f1);
	f1.t = t;
	f1.st = ph_hub_states_attach(t, hex(sid_a), "alice", &f1, NULL, &replay, why, sizeof why);
	f3.len = 0;
	f3.text[0] = '\0';
	f3.drop_on_send = true;
	announce(t, 1);
	is_str(ids(f1.text), "6", "a stream dropped while written to: the other still gets event 6");

	/* DELETE closes the streams and forgets the state */
	ph_hub_states_end(t, sid_a);
	ok(f1.closed, "DELETE closes the session's stream");
	ph_hub_states_check(t, sid_a, out, sizeof out);
	is_str(out, "live", "and its level is forgotten");
	is_int(ph_hub_states_count(t), 1, "one session left");

	/* idle expiry */
	conf.sessions.state_idle = 1;
	sleep(2); /* past state_idle and the purge interval */
	ph_hub_states_tick(t);
	is_int(ph_hub_states_count(t), 0, "after sessions.state_idle an idle state is forgotten");

	/* sessions.replay 0: nothing held */
	conf.sessions.replay = 0;
	is_str(say(t, "open", sid_b, NULL), "ok", "open makes a state");
	memset(&f1, 0, sizeof f1);
	f1.st = ph_hub_states_attach(t, hex(sid_b), "alice", &f1, NULL, &replay, why, sizeof why);
	announce(t, 2);
	is_str(ids(f1.text), "1 2", "with sessions.replay 0 events still go out");
	ph_hub_states_detach(t, f1.st, &f1);
	ph_buf_reset(&replay);
	f1.st = ph_hub_states_attach(t, hex(sid_b), "alice", &f1, "0", &replay, why, sizeof why);
	is_int(replay.len, 0, "but none is replayed");
	ph_hub_states_detach(t, f1.st, &f1);
	ph_buf_free(&replay);
	ph_hub_states_free(t);
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}
