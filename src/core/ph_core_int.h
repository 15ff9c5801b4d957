/* ph_core_int.h: what the files of the core's one exchange share, in the
 * order a request meets them: the entry (ph_core.c), step 1
 * (ph_http_rules.c), the JSON-RPC envelope (ph_envelope.c), legacy batches
 * (ph_batch.c), the ladder (ph_ladder.c), a legacy session's requests that
 * are not calls (ph_session_routes.c), the method table (ph_methods.c),
 * running a method (ph_dispatch.c) and the responses (ph_writer.c).
 * Private to core/: what the fronts use is ph_core.h. */
#ifndef PH_CORE_INT_H
#define PH_CORE_INT_H
#include "first.h"
#include "ph_server.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* The members of params._meta the protocol names. */
#define META_PREFIX "io.modelcontextprotocol/"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_INFO "io.modelcontextprotocol/clientInfo"
#define META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVERINFO "io.modelcontextprotocol/serverInfo"

/* A request variable by its CGI name ("REQUEST_METHOD", "HTTP_ORIGIN"):
 * borrowed from the front, or NULL. */
static inline const char *
ph_param(struct ph_req *r, const char *name)
{
	return r->ex->ops->param(r->ex, name);
}

/* ---- step 1 (ph_http_rules.c) ------------------------------------------- */

/* Step 1 over HTTP (the HTTP rules and the body), or the stdio line.
 * Returns true with the body in *body (*own, when set, caller frees), false
 * after sending the response (an error, or what a request that is not an
 * MCP POST asks for). */
bool ph_take_body(struct ph_req *r, const char **body, size_t *blen, char **own);

/* ---- the envelope (ph_envelope.c) ---------------------------------------- */

/* True when id is a JSON-RPC id this server takes: a string or an integer. */
static inline bool
ph_valid_id(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}
/* Step 2 for one message (r->msg, owned by r): one JSON-RPC request or
 * notification; sets r->id, r->method (with r->mid) and r->params. Returns false after
 * sending the error (or serving a posted response). */
bool ph_check_envelope(struct ph_req *r);

/* ---- legacy batches (ph_batch.c) ----------------------------------------- */

/* A JSON array body (r->msg): refused unless the client's version has
 * batches; else authenticated once, each message served in order, and one
 * array of the responses sent (202 when all were notifications). */
void ph_serve_batch(struct ph_req *r);

/* ---- the ladder (ph_ladder.c) -------------------------------------------- */

/* Steps 3-11 for a well-formed JSON-RPC message (r->msg, with r->id,
 * r->method and r->params set): era, _meta, headers, authentication,
 * session, method, scopes, trace; then the method runs. Every refusal is
 * sent. */
void ph_ladder(struct ph_req *r);
/* Runs authentication and the rate limit; sends the 401/403/429 and
 * returns false when one refuses. A batch entry passes: its batch was
 * authenticated as a whole. */
bool ph_authenticate(struct ph_req *r);
/* The Mcp-Session-Id of a 2025-11-25 request over HTTP (not initialize)
 * opened into r->sess.session, whose capabilities become the request's client
 * capabilities; over stdio the client's of its initialize. Returns false
 * after sending 404 for a session that is gone. */
bool ph_legacy_session(struct ph_req *r);

/* ---- a legacy session's other requests (ph_session_routes.c) ------------ */

/* DELETE with Mcp-Session-Id: the session ended on this host, 204. */
void ph_serve_session_end(struct ph_req *r);
/* GET with Mcp-Session-Id and Accept: text/event-stream: the session's
 * stream, its head written here and the connection handed to the hub. */
void ph_serve_session_stream(struct ph_req *r);
/* A JSON-RPC response POSTed on a legacy session (r->msg): given to the
 * hub, 202 or a refusal; the answer that completes a round resumes the
 * parked call on its connection. */
void ph_serve_response(struct ph_req *r);

/* ---- the method table (ph_methods.c) ------------------------------------ */

enum {
	M_MODERN = 1 << 0,    /* served in 2026-07-28 */
	M_LEGACY = 1 << 1,    /* served in 2025-11-25 */
	M_NAME = 1 << 2,      /* Mcp-Name carries params.name */
	M_URI = 1 << 3,       /* Mcp-Name carries params.uri */
	M_CACHEABLE = 1 << 4, /* ttlMs/cacheScope on a complete result */
	M_MRTR = 1 << 5,      /* may answer input_required (mcp-wire §5.2) */
	M_TASK = 1 << 6,      /* Mcp-Name carries params.taskId (the tasks extension) */
};

/* A row of the method table, indexed by enum ph_method (ph_method.h). */
struct method {
	unsigned flags; /* M_*: 0 for no row */
	void (*fn)(struct ph_req *r, struct ph_outcome *o);
	bool (*available)(const struct ph_server *s);
};

/* The row of method i as the era (legacy: 2025-11-25) serves it on server
 * s, or NULL: PH_METHOD__COUNT, not a method of that era, or not offered
 * there (its available hook says no). */
const struct method *ph_find_method(enum ph_method i, bool legacy, const struct ph_server *s);
/* Whether the core's table has a row for method i (a handler and an era):
 * tests/unit/test_method asks it of every enum ph_method. */
bool ph_method_has_row(enum ph_method i);
/* True when v is a 2026-07-28 version this server speaks. */
bool ph_is_modern_version(const char *v);
/* True when v has the form of a protocol version, YYYY-MM-DD. */
bool ph_looks_like_version(const char *v);
/* The 2026-07-28 versions this server speaks, as a JSON array (what an
 * error about an unsupported version lists). Caller puts. */
struct json_object *ph_modern_versions(void);

/* ---- dispatch (ph_dispatch.c) ------------------------------------------- */

/* Runs the method m for r and sends what it answers: a result completed
 * for its era, an error, or nothing when the client has gone, the call is
 * parked or the handler answered itself. */
void ph_dispatch(struct ph_req *r, const struct method *m);

/* ---- the writer (ph_writer.c) -------------------------------------------- */

/* A JSON-RPC error response for id (borrowed; NULL: null) with code,
 * message (repaired when it is not UTF-8) and data (taken, or NULL).
 * Caller puts. */
struct json_object *ph_rpc_error(struct json_object *id, int code, const char *message,
				 struct json_object *data);
/* The one place a complete response leaves the core: status, content
 * type, headers (NULL: none) and body go to the front, and the request
 * remembers the status for its log line. */
void ph_respond(struct ph_req *r, int status, const char *ctype, const struct ph_header *hdrs,
		const char *body, size_t len);
/* _meta["io.modelcontextprotocol/serverInfo"] on a 2026-07-28 result. */
void ph_add_server_info(const struct ph_server *srv, struct json_object *res);
/* Sends the final message: msg (consumed), or else the response carrying
 * res (consumed) for the request's id, with the server's serverInfo added
 * when info. It is the last event of an open SSE stream, else a JSON
 * response with the given status (or an entry of the legacy batch). */
void ph_send_out(struct ph_req *r, int status, const struct ph_header *extra,
		 struct json_object *msg, struct json_object *res, bool info);
/* ph_send_out of the message msg (consumed) with the headers extra. */
void ph_send_final(struct ph_req *r, int status, struct json_object *msg,
		   const struct ph_header *extra);
/* Sends the error e of the request's era: its HTTP status (200 off HTTP)
 * and a JSON-RPC error with message (NULL: the table's) and data (taken). */
void ph_send_error(struct ph_req *r, enum ph_err e, const char *message, struct json_object *data);
/* 202 with no body for a notification (or a batch entry's nothing). */
void ph_send_accepted(struct ph_req *r);
#endif
