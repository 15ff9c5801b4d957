/* test_hubmsg.c: the hub's messages (ipc/ph_hubmsg.c): each builder's
 * message read back by the parser the hub uses, with the members the hub
 * reads; the request id a front adds; what the parser refuses (a stream
 * without its request id, a session id that is not 32 hex digits, a
 * parked call whose ids and requests differ in number, an unknown type,
 * no JSON) and the type it still names for a message too deep to parse;
 * the parked call's hand-back and back. */
#include "first.h"
#include "ph_hubmsg.h"
#include "ph_json.h"
#include "ph_util.h"
#include "tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SID "00112233445566778899aabbccddeeff"
/* the depth the hub reads with under the default limits.json_depth */
#define DEPTH ph_hubmsg_depth(64)

/* Parses the text of m (taken), with the request id rid added when rid
 * is not 0, into out. Returns what ph_hubmsg_parse returned. */
static bool
round_trip(struct json_object *m, unsigned rid, struct ph_hubmsg *out)
{
	struct ph_buf b;
	size_t len;
	const char *text = ph_json_text(m, &len);
	bool got;
	ph_buf_init(&b);
	if (rid != 0 && ph_hubmsg_add_rid(&b, text, len, rid))
		got = ph_hubmsg_parse(b.data, b.len, DEPTH, out);
	else
		got = ph_hubmsg_parse(text, len, DEPTH, out);
	ph_buf_free(&b);
	json_object_put(m);
	return got;
}

static struct json_object *
json(const char *text)
{
	struct json_object *o = NULL;
	if (!ph_json_parse(text, strlen(text), PH_JSON_DEPTH_DOCUMENT, &o))
		abort();
	return o;
}

static void
streams(struct ph_req *r)
{
	struct ph_hubmsg m;
	struct json_object *uris = json("[\"file:///a\"]"), *tasks = json("[\"t1\",\"t2\"]");
	bool on[PH_HUBMSG_KINDS] = {true, false, true};
	struct ph_buf b;
	char last[80];

	ok(round_trip(ph_hubmsg_listen(r, on, uris, tasks), 513, &m), "a listen with its request id is read");
	is_str(ph_hubmsg_name(m.type), "listen", "as a listen");
	is_int(m.u.stream.rid, 513, "its request id");
	is_int(json_object_get_int(m.u.stream.id), 7, "the listen request's id");
	ok(m.u.stream.on[0] && !m.u.stream.on[1] && m.u.stream.on[2], "the kinds it listens to, in order");
	is_int(json_object_array_length(m.u.stream.uris), 1, "its resourceSubscriptions");
	is_int(json_object_array_length(m.u.stream.tasks), 2, "its task ids");
	is_str(m.u.stream.principal, "alice", "its principal");
	is_str(ph_jstr(m.u.stream.assigns, "team"), "a", "its assigns");
	ph_hubmsg_free(&m);

	ok(!round_trip(ph_hubmsg_listen(r, on, uris, tasks), 0, &m) && m.type == PH_HUBMSG_LISTEN,
	   "a listen without the front's request id is refused, as a listen");
	ph_hubmsg_free(&m);
	ph_buf_init(&b);
	ok(!ph_hubmsg_add_rid(&b, "{\"hub\":\"listen\"", 15, 1), "a request id is added only to a whole object");
	ph_buf_free(&b);

	ok(round_trip(ph_hubmsg_get(r, "41"), 9, &m) && m.type == PH_HUBMSG_GET, "a GET stream is read");
	is_str(m.u.stream.sid, SID, "with its session");
	is_str(m.u.stream.last, "41", "and Last-Event-ID");
	ok(m.u.stream.who != NULL && strncmp(m.u.stream.who, "alice\x1f", 6) == 0, "and its binding");
	ph_hubmsg_free(&m);
	memset(last, '9', 64);
	last[64] = '\0';
	ok(round_trip(ph_hubmsg_get(r, last), 9, &m) && m.u.stream.last == NULL,
	   "a Last-Event-ID of 64 bytes is left out");
	ph_hubmsg_free(&m);
	json_object_put(uris);
	json_object_put(tasks);
}

static void
small(void)
{
	struct ph_hubmsg m;
	ok(round_trip(ph_hubmsg_updated("file:///data/a.txt"), 0, &m) && m.type == PH_HUBMSG_UPDATED,
	   "an announcement is read");
	is_str(m.u.uri, "file:///data/a.txt", "with its URI");
	ph_hubmsg_free(&m);
	ok(round_trip(ph_hubmsg_task(PH_HUBMSG_TASK_CANCEL, "h-1"), 0, &m) && m.type == PH_HUBMSG_TASK_CANCEL,
	   "a task's cancel is read");
	is_str(m.u.task, "h-1", "with its task id");
	ph_hubmsg_free(&m);
	ok(!round_trip(ph_hubmsg_session_check("0011"), 0, &m) && m.type == PH_HUBMSG_SESSION_CHECK,
	   "a session id that is not 32 hex digits is refused, as a check");
	ph_hubmsg_free(&m);
	ok(!ph_hubmsg_parse("{\"hub\":\"nope\"}", 14, DEPTH, &m) && m.type == PH_HUBMSG__COUNT, "an unknown type is refused");
	ph_hubmsg_free(&m);
	ok(!ph_hubmsg_parse("not json", 8, DEPTH, &m) && m.type == PH_HUBMSG__COUNT, "so is what is not JSON");
	ph_hubmsg_free(&m);
}

static void
sessions(struct ph_req *r)
{
	struct ph_hubmsg m;
	struct json_object *doc = json("{\"sid\":\"" SID "\",\"iat\":1000,\"exp\":5000}");
	struct ph_buf deep;

	ok(round_trip(ph_hubmsg_session_hook(PH_HUBMSG_SESSION_END, r, doc), 0, &m) &&
	   m.type == PH_HUBMSG_SESSION_END, "a session's end is read");
	ok(m.u.session.sid[0] == 0x00 && m.u.session.sid[15] == 0xff, "its id, as bytes");
	is_str(m.u.session.hex, SID, "and as hex");
	ok(m.u.session.has_exp && m.u.session.exp == 5000 && m.u.session.iat == 1000, "its issue and expiry");
	is_str(m.u.session.principal, "alice", "the principal sessions.on_end is told of");
	ph_hubmsg_free(&m);

	ok(round_trip(ph_hubmsg_session_state(PH_HUBMSG_SESSION_LEVEL, r, json("{\"level\":\"error\"}")), 0, &m) &&
	   m.type == PH_HUBMSG_SESSION_LEVEL, "a session's log level is read");
	is_str(m.u.session.level, "error", "with the level");
	ok(m.u.session.has_exp && m.u.session.exp == 5000, "and the session's expiry");
	ok(m.u.session.who != NULL && m.u.session.assigns != NULL, "and who it is for");
	ph_hubmsg_free(&m);

	/* too deep to parse: the type still tells the hub to answer the worker */
	ph_buf_init(&deep);
	ph_buf_adds(&deep, "{\"hub\":\"park.answer\",\"result\":");
	for (int i = 0; i < 100; i++)
		ph_buf_addc(&deep, '[');
	for (int i = 0; i < 100; i++)
		ph_buf_addc(&deep, ']');
	ph_buf_addc(&deep, '}');
	ok(!ph_hubmsg_parse(deep.data, deep.len, DEPTH, &m) && m.type == PH_HUBMSG_PARK_ANSWER,
	   "a message too deep to parse is refused, as the type its head names");
	ph_hubmsg_free(&m);
	ph_buf_free(&deep);
	json_object_put(doc);
}

static void
park(struct ph_req *r)
{
	struct ph_hubmsg m;
	struct ph_hubmsg_take t = {0}, back;
	struct json_object *state = json("{\"a\":1}");
	struct ph_buf b;

	ok(round_trip(ph_hubmsg_park_call(r, state, json("{\"ph-x-0\":\"k\"}"),
					  json("[{\"method\":\"roots/list\"}]"), false), 77, &m) &&
	   m.type == PH_HUBMSG_PARK_CALL, "a parked call is read");
	is_int(m.u.call.rid, 77, "with its request id");
	is_str(m.u.call.sid, SID, "its session");
	is_str(ph_jstr(m.u.call.msg, "method"), "tools/call", "its request");
	is_int(json_object_get_int(ph_jget(m.u.call.state, "a")), 1, "the handler's state");
	ph_hubmsg_free(&m);
	ok(!round_trip(ph_hubmsg_park_call(r, NULL, json("{\"ph-x-0\":\"k\",\"ph-x-1\":\"l\"}"),
					   json("[{\"method\":\"roots/list\"}]"), false), 77, &m),
	   "a call whose ids and requests differ in number is refused");
	ph_hubmsg_free(&m);

	json_object_put(r->msg);
	r->msg = json("{\"jsonrpc\":\"2.0\",\"id\":\"ph-x-0\",\"result\":{\"roots\":[]}}");
	ok(round_trip(ph_hubmsg_park_answer(r, 1000), 0, &m) && m.type == PH_HUBMSG_PARK_ANSWER,
	   "an answer is read");
	ok(m.u.answer.result != NULL && m.u.answer.error == NULL && !m.u.answer.too_large, "with its result");
	is_str(m.u.answer.id, "ph-x-0", "and the id it answers");
	ph_hubmsg_free(&m);
	ok(round_trip(ph_hubmsg_park_answer(r, 5), 0, &m) && m.u.answer.too_large && m.u.answer.result == NULL,
	   "an answer over its limit carries only its size");
	is_int(m.u.answer.size, strlen("{\"roots\":[]}"), "which is the result's");
	ph_hubmsg_free(&m);

	t.rid = 12;
	t.msg = r->msg;
	t.answers = json("{\"k\":{\"roots\":[]}}");
	ph_buf_init(&b);
	ph_hubmsg_take(&b, &t);
	ok(strncmp(b.data, "take {", 6) == 0, "a call is handed back as take {...}");
	ok(ph_hubmsg_take_read(b.data + 5, b.len - 5, DEPTH, &back), "which is read back");
	ok(back.rid == 12 && back.msg != NULL && back.state == NULL && ph_jget(back.answers, "k") != NULL,
	   "with its request id, request and answers");
	json_object_put(back.msg);
	json_object_put(back.answers);
	ok(!ph_hubmsg_take_read("{}", 2, DEPTH, &back) && back.msg == NULL, "a hand-back without its request is refused");
	ph_buf_free(&b);

	/* what a body may nest (limits.json_depth) sits one level deeper in
	 * the hub's messages: read with ph_hubmsg_depth, not the default */
	ok(ph_hubmsg_depth(64) == 65 && ph_hubmsg_depth(8) == PH_JSON_DEPTH_DOCUMENT && ph_hubmsg_depth(300) == 301,
	   "messages are read one level deeper than limits.json_depth, at least PH_JSON_DEPTH_DOCUMENT");
	ph_buf_init(&b);
	ph_buf_adds(&b, "{\"rid\":1,\"msg\":{},\"answers\":{\"k\":");
	for (int i = 0; i < 62; i++) /* 64 levels: a body of 63 (the most at 64) puts an answer so */
		ph_buf_addc(&b, '[');
	ph_buf_addc(&b, '1');
	for (int i = 0; i < 62; i++)
		ph_buf_addc(&b, ']');
	ph_buf_adds(&b, "}}");
	ok(!ph_hubmsg_take_read(b.data, b.len, PH_JSON_DEPTH_DOCUMENT, &back), "(a take of 64 levels is too deep for 64)");
	ok(ph_hubmsg_take_read(b.data, b.len, ph_hubmsg_depth(PH_JSON_DEPTH_DOCUMENT), &back),
	   "a take nesting an answer as deep as a body may be is read back");
	json_object_put(back.msg);
	json_object_put(back.answers);
	ph_buf_free(&b);
	json_object_put(t.answers);
	json_object_put(state);
}

int
main(void)
{
	struct ph_req r;
	memset(&r, 0, sizeof r);
	r.who.principal = "alice";
	r.who.assigns = json("{\"team\":\"a\"}");
	r.id = json_object_new_int(7);
	r.sess.session = json("{\"sid\":\"" SID "\",\"iat\":1000,\"exp\":5000}");
	r.msg = json("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\"}");
	streams(&r);
	small();
	sessions(&r);
	park(&r);
	json_object_put(r.who.assigns);
	json_object_put(r.id);
	json_object_put(r.sess.session);
	json_object_put(r.msg);
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}
