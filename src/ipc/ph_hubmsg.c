/* ph_hubmsg.c: the hub's messages, built and read (ph_hubmsg.h). */
#include "first.h"
#include "ph_hubmsg.h"
#include "ph_fcgi_wire.h"
#include "ph_json.h"
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static bool read_stream(struct ph_hubmsg *m);
static bool read_updated(struct ph_hubmsg *m);
static bool read_task(struct ph_hubmsg *m);
static bool read_session(struct ph_hubmsg *m);
static bool read_call(struct ph_hubmsg *m);
static bool read_answer(struct ph_hubmsg *m);

/* Each type's wire name and the reader of its members. */
static const struct {
	const char *name;
	bool (*read)(struct ph_hubmsg *m);
} types[PH_HUBMSG__COUNT] = {
	[PH_HUBMSG_LISTEN] = {"listen", read_stream},
	[PH_HUBMSG_GET] = {"get", read_stream},
	[PH_HUBMSG_UPDATED] = {"updated", read_updated},
	[PH_HUBMSG_TASK_START] = {"task.start", read_task},
	[PH_HUBMSG_TASK_CHANGED] = {"task.changed", read_task},
	[PH_HUBMSG_TASK_CANCEL] = {"task.cancel", read_task},
	[PH_HUBMSG_SESSION_CHECK] = {"session.check", read_session},
	[PH_HUBMSG_SESSION_ISSUED] = {"session.issued", read_session},
	[PH_HUBMSG_SESSION_END] = {"session.end", read_session},
	[PH_HUBMSG_SESSION_LEVEL] = {"session.level", read_session},
	[PH_HUBMSG_SESSION_SUB] = {"session.sub", read_session},
	[PH_HUBMSG_SESSION_UNSUB] = {"session.unsub", read_session},
	[PH_HUBMSG_SESSION_OPEN] = {"session.open", read_session},
	[PH_HUBMSG_PARK_CALL] = {"park.call", read_call},
	[PH_HUBMSG_PARK_ANSWER] = {"park.answer", read_answer},
};

const char *
ph_hubmsg_name(enum ph_hubmsg_type t)
{
	return (unsigned)t < PH_HUBMSG__COUNT ? types[t].name : "(none)";
}

/* ---- builders ------------------------------------------------------------- */

/* A new message of type t: {"hub": its name} (caller puts). */
static struct json_object *
message(enum ph_hubmsg_type t)
{
	struct json_object *m = json_object_new_object();
	json_object_object_add(m, "hub", json_object_new_string(types[t].name));
	return m;
}

/* Adds what sessions.on_end is told of a session: r's principal and
 * assigns. */
static void
end_hook_members(const struct ph_req *r, struct json_object *q)
{
	if (r->who.principal)
		json_object_object_add(q, "principal", json_object_new_string(r->who.principal));
	if (r->who.assigns)
		json_object_object_add(q, "assigns", json_object_get(r->who.assigns));
}

struct json_object *
ph_hubmsg_listen(const struct ph_req *r, const bool on[PH_HUBMSG_KINDS], struct json_object *uris,
		 struct json_object *tasks)
{
	struct json_object *d = message(PH_HUBMSG_LISTEN), *a = json_object_new_array();
	json_object_object_add(d, "id", json_object_get(r->id));
	for (size_t i = 0; i < PH_HUBMSG_KINDS; i++)
		json_object_array_add(a, json_object_new_boolean(on[i]));
	json_object_object_add(d, "on", a);
	if (json_object_array_length(uris) > 0)
		json_object_object_add(d, "uris", json_object_get(uris));
	if (tasks)
		json_object_object_add(d, "tasks", json_object_get(tasks));
	if (r->who.principal)
		json_object_object_add(d, "principal", json_object_new_string(r->who.principal));
	ph_access_describe(r, d); /* what its list_changed is computed on */
	return d;
}

struct json_object *
ph_hubmsg_get(const struct ph_req *r, const char *last)
{
	struct json_object *d = message(PH_HUBMSG_GET);
	char *who = ph_req_binding(r);
	ph_jset(d, "sid", json_object_new_string(ph_jstr(r->sess.session, "sid")));
	if (who)
		ph_jset(d, "who", json_object_new_string(who));
	free(who);
	if (r->who.principal)
		ph_jset(d, "principal", json_object_new_string(r->who.principal));
	ph_access_describe(r, d);
	if (last && strlen(last) < 64)
		ph_jset(d, "last", json_object_new_string(last));
	return d;
}

/* A message of type t with the one string member key (caller puts). */
static struct json_object *
with_string(enum ph_hubmsg_type t, const char *key, const char *v)
{
	struct json_object *m = message(t);
	json_object_object_add(m, key, json_object_new_string(v));
	return m;
}

struct json_object *
ph_hubmsg_updated(const char *uri)
{
	return with_string(PH_HUBMSG_UPDATED, "uri", uri);
}

struct json_object *
ph_hubmsg_task(enum ph_hubmsg_type t, const char *id)
{
	return with_string(t, "id", id);
}

struct json_object *
ph_hubmsg_session_check(const char *sid)
{
	return with_string(PH_HUBMSG_SESSION_CHECK, "sid", sid);
}

struct json_object *
ph_hubmsg_session_hook(enum ph_hubmsg_type t, const struct ph_req *r, struct json_object *doc)
{
	struct json_object *q = message(t);
	json_object_object_add(q, "sid", json_object_get(ph_jget(doc, "sid")));
	json_object_object_add(q, "iat", json_object_new_int64(json_object_get_int64(ph_jget(doc, "iat"))));
	json_object_object_add(q, "exp", json_object_new_int64(json_object_get_int64(ph_jget(doc, "exp"))));
	end_hook_members(r, q);
	return q;
}

struct json_object *
ph_hubmsg_session_state(enum ph_hubmsg_type t, const struct ph_req *r, struct json_object *extra)
{
	struct json_object *q = message(t);
	char *who = ph_req_binding(r);
	json_object_object_add(q, "sid", json_object_new_string(ph_jstr(r->sess.session, "sid")));
	json_object_object_add(q, "exp", json_object_new_int64(json_object_get_int64(ph_jget(r->sess.session, "exp"))));
	if (who)
		json_object_object_add(q, "who", json_object_new_string(who));
	if (r->who.principal)
		json_object_object_add(q, "principal", json_object_new_string(r->who.principal));
	ph_access_describe(r, q); /* the session's list_changed is computed on it */
	free(who);
	if (extra) {
		json_object_object_foreach(extra, k, v)
			json_object_object_add(q, k, json_object_get(v));
		json_object_put(extra);
	}
	return q;
}

struct json_object *
ph_hubmsg_park_call(const struct ph_req *r, struct json_object *state, struct json_object *ids,
		    struct json_object *push, bool with_auth)
{
	struct json_object *d = message(PH_HUBMSG_PARK_CALL);
	char *who = ph_req_binding(r);
	json_object_object_add(d, "sid", json_object_get(ph_jget(r->sess.session, "sid")));
	json_object_object_add(d, "who", who ? json_object_new_string(who) : NULL);
	json_object_object_add(d, "msg", json_object_get(r->msg));
	json_object_object_add(d, "state", json_object_get(state));
	json_object_object_add(d, "ids", ids);
	json_object_object_add(d, "push", push);
	free(who);
	if (with_auth) {
		/* what another host's answer cannot say: who the call runs for,
		 * for the hub that resumes it itself (ph_park_resume_held) */
		struct json_object *a = json_object_new_object();
		if (r->who.principal)
			json_object_object_add(a, "principal", json_object_new_string(r->who.principal));
		ph_access_describe(r, a);
		json_object_object_add(a, "restricted", json_object_new_boolean(r->who.restricted));
		json_object_object_add(a, "session", json_object_get(r->sess.session));
		json_object_object_add(d, "auth", a);
	}
	return d;
}

struct json_object *
ph_hubmsg_park_answer(const struct ph_req *r, long long max)
{
	struct json_object *q = message(PH_HUBMSG_PARK_ANSWER), *ans;
	char *who = ph_req_binding(r);
	size_t alen;
	json_object_object_add(q, "sid", json_object_get(ph_jget(r->sess.session, "sid")));
	json_object_object_add(q, "who", who ? json_object_new_string(who) : NULL);
	json_object_object_add(q, "id", json_object_get(ph_jget(r->msg, "id")));
	ans = ph_jget(r->msg, "error") != NULL ? ph_jget(r->msg, "error") : ph_jget(r->msg, "result");
	json_object_to_json_string_length(ans, JSON_C_TO_STRING_PLAIN, &alen);
	if ((long long)alen > max)
		/* the hub ends the call at once: it would never get its answer */
		json_object_object_add(q, "too_large", json_object_new_int64((int64_t)alen));
	else
		json_object_object_add(q, ph_jget(r->msg, "error") != NULL ? "error" : "result", json_object_get(ans));
	free(who);
	return q;
}

bool
ph_hubmsg_add_rid(struct ph_buf *out, const char *desc, size_t len, unsigned rid)
{
	if (len < 2 || desc[len - 1] != '}')
		return false;
	ph_buf_add(out, desc, len - 1);
	ph_buf_printf(out, ",\"rid\":%u}", rid);
	return true;
}

void
ph_hubmsg_take(struct ph_buf *out, const struct ph_hubmsg_take *t)
{
	struct json_object *o = json_object_new_object();
	size_t len;
	const char *j;
	json_object_object_add(o, "rid", json_object_new_int((int)t->rid));
	json_object_object_add(o, "msg", json_object_get(t->msg));
	json_object_object_add(o, "state", json_object_get(t->state));
	json_object_object_add(o, "answers", json_object_get(t->answers));
	j = ph_json_text(o, &len);
	ph_buf_adds(out, "take ");
	ph_buf_add(out, j, len);
	json_object_put(o);
}

/* ---- parsers -------------------------------------------------------------- */

/* The FastCGI request id a front added, in *rid. Returns false when none. */
static bool
read_rid(struct json_object *d, unsigned *rid)
{
	struct json_object *v = ph_jget(d, "rid");
	if (!json_object_is_type(v, json_type_int))
		return false;
	*rid = (unsigned)json_object_get_int(v) & PH_FCGI_ID_MASK;
	return true;
}

/* Who a stream or a session's state is computed for: "principal",
 * "access" (what ph_access_describe wrote) and "assigns" (an object, else
 * none), borrowed from d. */
static void
read_viewer(struct json_object *d, const char **principal, struct json_object **access,
	    struct json_object **assigns)
{
	*principal = ph_jstr(d, "principal");
	*access = ph_jget(d, "access");
	*assigns = json_object_is_type(ph_jget(d, "assigns"), json_type_object) ? ph_jget(d, "assigns") : NULL;
}

/* LISTEN: "rid", "id", "on" (PH_HUBMSG_KINDS booleans), and "uris",
 * "tasks"; GET: "rid" and "sid". Both: the viewer. */
static bool
read_stream(struct ph_hubmsg *m)
{
	struct ph_hubmsg_stream *s = &m->u.stream;
	struct json_object *d = m->doc, *on = ph_jget(d, "on");
	read_viewer(d, &s->principal, &s->access, &s->assigns);
	if (!read_rid(d, &s->rid))
		return false;
	if (m->type == PH_HUBMSG_GET) {
		s->sid = ph_jstr(d, "sid");
		s->who = ph_jstr(d, "who");
		s->last = ph_jstr(d, "last");
		return s->sid != NULL;
	}
	if ((s->id = ph_jget(d, "id")) == NULL || !json_object_is_type(on, json_type_array) ||
	    json_object_array_length(on) != PH_HUBMSG_KINDS)
		return false;
	for (size_t i = 0; i < PH_HUBMSG_KINDS; i++)
		s->on[i] = json_object_get_boolean(json_object_array_get_idx(on, i));
	s->uris = ph_jget(d, "uris");
	if (json_object_is_type(ph_jget(d, "tasks"), json_type_array))
		s->tasks = ph_jget(d, "tasks");
	return true;
}

static bool
read_updated(struct ph_hubmsg *m)
{
	return (m->u.uri = ph_jstr(m->doc, "uri")) != NULL;
}

static bool
read_task(struct ph_hubmsg *m)
{
	return (m->u.task = ph_jstr(m->doc, "id")) != NULL;
}

/* SESSION_*: "sid" (32 hex digits) and what may come with it. */
static bool
read_session(struct ph_hubmsg *m)
{
	struct ph_hubmsg_session *s = &m->u.session;
	struct json_object *d = m->doc, *exp = ph_jget(d, "exp");
	const char *hex = ph_jstr(d, "sid");
	size_t got = 0;
	if (hex == NULL || strlen(hex) != 2 * PH_HUBMSG_SID_BYTES ||
	    sodium_hex2bin(s->sid, sizeof s->sid, hex, strlen(hex), NULL, &got, NULL) != 0 ||
	    got != PH_HUBMSG_SID_BYTES)
		return false;
	sodium_bin2hex(s->hex, sizeof s->hex, s->sid, sizeof s->sid);
	s->has_exp = json_object_is_type(exp, json_type_int);
	s->exp = s->has_exp ? json_object_get_int64(exp) : 0;
	s->iat = json_object_get_int64(ph_jget(d, "iat"));
	s->who = ph_jstr(d, "who");
	read_viewer(d, &s->principal, &s->access, &s->assigns);
	s->level = ph_jstr(d, "level");
	s->uri = ph_jstr(d, "uri");
	s->path = ph_jstr(d, "path");
	return true;
}

/* PARK_CALL: as many requests in "push" as ids in "ids", the original
 * request, the session and the request id. */
static bool
read_call(struct ph_hubmsg *m)
{
	struct ph_hubmsg_call *c = &m->u.call;
	struct json_object *d = m->doc;
	c->ids = ph_jget(d, "ids");
	c->push = ph_jget(d, "push");
	c->msg = ph_jget(d, "msg");
	c->state = ph_jget(d, "state");
	c->sid = ph_jstr(d, "sid");
	c->who = ph_jstr(d, "who");
	c->auth = ph_jget(d, "auth");
	return json_object_is_type(c->ids, json_type_object) && json_object_object_length(c->ids) > 0 &&
	       json_object_is_type(c->push, json_type_array) &&
	       json_object_array_length(c->push) == (size_t)json_object_object_length(c->ids) &&
	       read_rid(d, &c->rid) && json_object_is_type(c->msg, json_type_object) && c->sid != NULL &&
	       strlen(c->sid) == 2 * PH_HUBMSG_SID_BYTES;
}

/* PARK_ANSWER: what the hub checks of it, it checks against its call. */
static bool
read_answer(struct ph_hubmsg *m)
{
	struct ph_hubmsg_answer *a = &m->u.answer;
	struct json_object *d = m->doc, *big = ph_jget(d, "too_large");
	a->sid = ph_jstr(d, "sid");
	a->who = ph_jstr(d, "who");
	a->id = ph_jstr(d, "id");
	a->result = ph_jget(d, "result");
	a->error = ph_jget(d, "error");
	a->too_large = big != NULL;
	a->size = big ? json_object_get_int64(big) : 0;
	return true;
}

/* The type whose name is name (len bytes), or PH_HUBMSG__COUNT. */
static enum ph_hubmsg_type
type_named(const char *name, size_t len)
{
	for (size_t t = 0; t < PH_HUBMSG__COUNT; t++)
		if (strlen(types[t].name) == len && memcmp(name, types[t].name, len) == 0)
			return (enum ph_hubmsg_type)t;
	return PH_HUBMSG__COUNT;
}

/* The type a message that does not parse names, from its head: the
 * builders write "hub" first (PH_HUBMSG__COUNT when it is not there). The
 * hub answers by it: a worker waiting for an answer is told that the
 * message was unreadable (too deep, say) rather than left to time out. */
static enum ph_hubmsg_type
type_of_head(const char *text, size_t len)
{
	static const char head[] = "{\"hub\":\"";
	const char *name = text + sizeof head - 1, *q;
	if (len < sizeof head || memcmp(text, head, sizeof head - 1) != 0 ||
	    (q = memchr(name, '"', len - (sizeof head - 1))) == NULL)
		return PH_HUBMSG__COUNT;
	return type_named(name, (size_t)(q - name));
}

int
ph_hubmsg_depth(long long json_depth)
{
	return json_depth + 1 > PH_JSON_DEPTH_DOCUMENT ? (int)json_depth + 1 : PH_JSON_DEPTH_DOCUMENT;
}

bool
ph_hubmsg_parse(const char *text, size_t len, int depth, struct ph_hubmsg *m)
{
	const char *name;
	memset(m, 0, sizeof *m);
	m->type = PH_HUBMSG__COUNT;
	if (!ph_json_parse(text, len, depth, &m->doc)) {
		m->type = type_of_head(text, len);
		return false;
	}
	if (!json_object_is_type(m->doc, json_type_object) || (name = ph_jstr(m->doc, "hub")) == NULL)
		return false;
	m->type = type_named(name, strlen(name));
	return m->type != PH_HUBMSG__COUNT && types[m->type].read(m);
}

void
ph_hubmsg_free(struct ph_hubmsg *m)
{
	json_object_put(m->doc);
	m->doc = NULL;
}

bool
ph_hubmsg_take_read(const char *text, size_t len, int depth, struct ph_hubmsg_take *t)
{
	struct json_object *take = NULL;
	memset(t, 0, sizeof *t);
	if (ph_json_parse(text, len, depth, &take) && json_object_is_type(take, json_type_object)) {
		t->rid = (unsigned)json_object_get_int(ph_jget(take, "rid")) & PH_FCGI_ID_MASK;
		t->msg = json_object_get(ph_jget(take, "msg"));
		t->state = json_object_get(ph_jget(take, "state"));
		t->answers = json_object_get(ph_jget(take, "answers"));
	}
	json_object_put(take);
	if (t->msg && t->answers)
		return true;
	json_object_put(t->msg);
	json_object_put(t->state);
	json_object_put(t->answers);
	memset(t, 0, sizeof *t);
	return false;
}
