/* ph_hubmsg.h: every message a worker (or a task supervisor) sends the hub
 * on its channel (ph_hub_send), with its builder and its parser
 * (ph_hubmsg.c). The hub (process/ph_hub.c) reads a message with
 * ph_hubmsg_parse and dispatches on its type.
 *
 * On the wire a message is one JSON object whose first member "hub" names
 * its type (the names are ph_hubmsg_name's); the same binary is on both
 * ends, so the format may change with the code. ph_hub_send_json
 * (ph_shared.h) sends one. A message longer than
 * PH_HUB_MSG_MAX travels in a memfd (ph_shared.c), as any other does.
 *
 * Descriptors attached (SCM_RIGHTS), per type:
 *   LISTEN, GET, PARK_CALL   the FastCGI connection, taken by the hub; the
 *                            front adds "rid" (ph_hubmsg_add_rid)
 *   TASK_START, SESSION_*,   a reply socket: the hub answers one line,
 *   PARK_ANSWER              "ok", "no REASON" or the type's own answer
 *                            (SESSION_CHECK: "live", "live LEVEL", "ended";
 *                            PARK_ANSWER: "take ..." with the connection,
 *                            ph_hubmsg_take)
 *   UPDATED, TASK_CHANGED,   none
 *   TASK_CANCEL */
#ifndef PH_HUBMSG_H
#define PH_HUBMSG_H
#include "first.h"
#include "ph_server.h"
#include "ph_util.h"

enum ph_hubmsg_type {
	PH_HUBMSG_LISTEN,         /* an acknowledged subscriptions/listen stream */
	PH_HUBMSG_GET,            /* a legacy session's GET stream */
	PH_HUBMSG_UPDATED,        /* a resource changed (phantom_resource_updated) */
	PH_HUBMSG_TASK_START,     /* run a task's process */
	PH_HUBMSG_TASK_CHANGED,   /* a task's record changed */
	PH_HUBMSG_TASK_CANCEL,    /* stop a task whose cancel the store could not record */
	PH_HUBMSG_SESSION_CHECK,  /* was a session ended? its log level */
	PH_HUBMSG_SESSION_ISSUED, /* a new session, for sessions.on_end */
	PH_HUBMSG_SESSION_END,    /* DELETE of a session */
	PH_HUBMSG_SESSION_LEVEL,  /* logging/setLevel */
	PH_HUBMSG_SESSION_SUB,    /* resources/subscribe */
	PH_HUBMSG_SESSION_UNSUB,  /* resources/unsubscribe */
	PH_HUBMSG_SESSION_OPEN,   /* a GET stream is about to be handed over */
	PH_HUBMSG_PARK_CALL,      /* a call waiting for a legacy client's answers */
	PH_HUBMSG_PARK_ANSWER,    /* one of those answers */
	PH_HUBMSG__COUNT
};

/* The list kinds of a LISTEN's "on", in order: tools, prompts, resources. */
#define PH_HUBMSG_KINDS 3
/* The bytes of a session's id (32 hex digits on the wire). */
#define PH_HUBMSG_SID_BYTES 16

/* LISTEN and GET: the stream handed over. Pointers borrow from the message. */
struct ph_hubmsg_stream {
	unsigned rid;                 /* the FastCGI request id */
	struct json_object *id;       /* LISTEN: the listen request's id; GET: NULL */
	bool on[PH_HUBMSG_KINDS];     /* LISTEN: the kinds it listens to */
	struct json_object *uris;     /* LISTEN: resourceSubscriptions granted, NULL: none */
	struct json_object *tasks;    /* LISTEN: taskIds granted (an array), NULL: none */
	const char *principal;        /* NULL: anonymous */
	struct json_object *access;   /* what ph_access_describe wrote, NULL: none */
	struct json_object *assigns;  /* an object, NULL: none */
	const char *sid, *who, *last; /* GET: the session, its binding, Last-Event-ID */
};

/* SESSION_*: the session named and what the worker said of it. */
struct ph_hubmsg_session {
	unsigned char sid[PH_HUBMSG_SID_BYTES];
	char hex[2 * PH_HUBMSG_SID_BYTES + 1];
	bool has_exp;                 /* exp came (an integer) */
	int64_t exp, iat;             /* seconds; iat 0 when absent */
	const char *who, *principal;  /* binding and principal, NULL: anonymous */
	struct json_object *access;   /* NULL: none */
	struct json_object *assigns;  /* an object, NULL: none */
	const char *level;            /* SESSION_LEVEL */
	const char *uri, *path;       /* SESSION_SUB, SESSION_UNSUB */
};

/* PARK_CALL: the call, the requests to push and their ids. */
struct ph_hubmsg_call {
	unsigned rid;
	const char *sid, *who;
	struct json_object *msg;      /* the original request */
	struct json_object *state;    /* the handler's state, may be NULL */
	struct json_object *ids;      /* pushed request id -> inputRequests key */
	struct json_object *push;     /* the requests, as many as ids */
	struct json_object *auth;     /* with cluster: its principal, allow-lists, assigns, session */
};

/* PARK_ANSWER: one answer to a pushed request. */
struct ph_hubmsg_answer {
	const char *sid, *who, *id;
	struct json_object *result, *error; /* one of them, unless too_large */
	bool too_large;               /* the worker found it over sessions.max_answer */
	int64_t size;                 /* then: its size */
};

/* A message read (ph_hubmsg_parse); doc is owned, the rest borrows from it. */
struct ph_hubmsg {
	enum ph_hubmsg_type type;
	struct json_object *doc;
	union {
		struct ph_hubmsg_stream stream;   /* LISTEN, GET */
		const char *uri;                  /* UPDATED */
		const char *task;                 /* TASK_*: the task id (ph_task_id_ok it) */
		struct ph_hubmsg_session session; /* SESSION_* */
		struct ph_hubmsg_call call;       /* PARK_CALL */
		struct ph_hubmsg_answer answer;   /* PARK_ANSWER */
	} u;
};

/* The wire name of type t ("listen", "task.start", ...). */
const char *ph_hubmsg_name(enum ph_hubmsg_type t);

/* ---- builders: each returns the message (caller puts) -------------------- */

/* LISTEN for r (its id, principal and allow-lists): the kinds granted (on,
 * in the order above), the resource URIs granted (uris, borrowed; left out
 * when empty) and the task ids (tasks, borrowed; NULL: none). */
struct json_object *ph_hubmsg_listen(const struct ph_req *r, const bool on[PH_HUBMSG_KINDS],
				     struct json_object *uris, struct json_object *tasks);
/* GET for r's session (r->sess.session), with Last-Event-ID last (NULL: none;
 * left out when 64 bytes or longer). */
struct json_object *ph_hubmsg_get(const struct ph_req *r, const char *last);
struct json_object *ph_hubmsg_updated(const char *uri);
/* TASK_START, TASK_CHANGED or TASK_CANCEL for the task id. */
struct json_object *ph_hubmsg_task(enum ph_hubmsg_type t, const char *id);
/* SESSION_CHECK for the session sid (hex). */
struct json_object *ph_hubmsg_session_check(const char *sid);
/* SESSION_ISSUED or SESSION_END for the session doc (its sid, iat and exp)
 * of r (its principal and assigns: what sessions.on_end is told). */
struct json_object *ph_hubmsg_session_hook(enum ph_hubmsg_type t, const struct ph_req *r,
					   struct json_object *doc);
/* SESSION_LEVEL, SESSION_SUB, SESSION_UNSUB or SESSION_OPEN on r's session,
 * with its binding, principal and allow-lists, and the members of extra
 * (taken; NULL: none): "level", or "uri" and "path". */
struct json_object *ph_hubmsg_session_state(enum ph_hubmsg_type t, const struct ph_req *r,
					    struct json_object *extra);
/* PARK_CALL of r (its session, binding and request), with the handler's
 * state (borrowed), the pushed requests push and their ids (both taken);
 * with_auth (cluster:): also who the call runs for, for a hub that resumes
 * it itself when its answer reached another host. */
struct json_object *ph_hubmsg_park_call(const struct ph_req *r, struct json_object *state,
					struct json_object *ids, struct json_object *push,
					bool with_auth);
/* PARK_ANSWER: r's JSON-RPC response r->msg on its session; only its size
 * when that is over max bytes. */
struct json_object *ph_hubmsg_park_answer(const struct ph_req *r, long long max);
/* The text a front sends: desc (len bytes, a message built above, ending
 * in '}') with "rid" (the FastCGI request id) added, in out (initialised).
 * Returns false when desc is not such a text. */
bool ph_hubmsg_add_rid(struct ph_buf *out, const char *desc, size_t len, unsigned rid);

/* ---- parsers ----------------------------------------------------------- */

/* The nesting a message on the hub's channel is read with: what a worker
 * took from a client (a request, an answer, at most json_depth deep:
 * limits.json_depth) sits one level down in it (park.call's msg,
 * park.answer's result, the take's answers), and never less than
 * PH_JSON_DEPTH_DOCUMENT. */
int ph_hubmsg_depth(long long json_depth);
/* Reads text (len bytes) into m, nested at most depth deep
 * (ph_hubmsg_depth). Returns true when it is a message of a
 * known type whose members are as that type has them; false otherwise,
 * with m->type the type it names (PH_HUBMSG__COUNT: none). Either way
 * ph_hubmsg_free(m) after. */
bool ph_hubmsg_parse(const char *text, size_t len, int depth, struct ph_hubmsg *m);
void ph_hubmsg_free(struct ph_hubmsg *m);

/* ---- the hand-back of a parked call (the hub's answer to PARK_ANSWER) --- */

/* What the hub hands back with the connection: the FastCGI request id, the
 * original request, the handler's state and the client's answers. */
struct ph_hubmsg_take {
	unsigned rid;
	struct json_object *msg, *state, *answers;
};
/* "take " and the JSON of t (borrowed), in out (initialised). */
void ph_hubmsg_take(struct ph_buf *out, const struct ph_hubmsg_take *t);
/* Reads the JSON after "take " (text, len bytes, at most depth deep:
 * ph_hubmsg_depth) into t (its members the caller's to put). Returns false
 * when it is not one (t then empty). */
bool ph_hubmsg_take_read(const char *text, size_t len, int depth, struct ph_hubmsg_take *t);
#endif
