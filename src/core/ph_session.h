/* ph_session.h: legacy 2025-11-25 sessions over HTTP (ph_session.c). A
 * session id is a token sealed with the request_state key for the purpose
 * "session": the negotiated version, the client's capabilities and info,
 * the principal it was issued to, its issue time and expiry
 * (sessions.max_age) and a random id. Any worker on any host sharing the
 * secret opens it; only an ended session needs the host's hub, which
 * remembers the ids ended with DELETE. */
#ifndef PH_SESSION_H
#define PH_SESSION_H
#include "first.h"
#include "ph_server.h"
#include "ph_hubmsg.h"

struct ph_buf;

/* The longest Mcp-Session-Id header looked at. */
#define PH_SESSION_TOKEN_MAX 16384

/* Issues a session id for the initialize r answers: version (borrowed),
 * params.capabilities and params.clientInfo of the request. Returns the
 * token; caller frees. */
char *ph_session_issue(struct ph_req *r, const char *version);
/* Opens the Mcp-Session-Id token for r: it must open, not be expired, be
 * bound to r's principal and not be ended (asked of the hub when there is
 * one). Returns the session document (caller puts: {"sid", "v", "c", "i",
 * "p", "iat", "exp"}), or NULL with the reason for the client in msg. */
struct json_object *ph_session_open(struct ph_req *r, const char *token, char *msg, size_t n);
/* Sends text to the hub with a reply socket and reads its one answer into
 * out (n bytes, NUL-terminated). A connection the hub attaches is put in
 * *fd (caller closes; -1 when none; fd may be NULL). Returns the answer's
 * length, or -1 (no hub, or no answer in time). */
long ph_session_hub_ask(const char *text, char *out, size_t n, int *fd);
/* The same for a message of len bytes and an answer of up to max bytes
 * (into out, NUL-terminated; a large one travels in a memfd), waiting up
 * to wait_ms. A worker that gives up waiting shuts its reply socket for
 * reading first: an answer the hub sends after that fails to go, so the
 * hub can tell that it was not received. */
long ph_session_hub_ask_buf(const char *text, size_t len, struct ph_buf *out, size_t max, int wait_ms, int *fd);
/* Ends r's session (r->sess.session, from ph_session_open) on this host: the
 * hub remembers its id until it would expire, and calls sessions.on_end
 * with r's principal and assigns. Returns PH_OK, or the error to answer
 * with its reason in msg (no hub: PH_E_HTTP_METHOD). */
enum ph_err ph_session_end(struct ph_req *r, char *msg, size_t n);
/* The log level of the session doc (borrowed, may be NULL) as the hub
 * said when it was opened: the one logging/setLevel set, else debug. */
enum ph_log_level ph_session_level(struct json_object *doc);
/* True when r's session can keep state in the hub: a session over HTTP
 * (not in a batch) on a FastCGI front that hands connections to a hub. */
bool ph_session_has_state(const struct ph_req *r);
/* Tells the hub about r's session (ph_hub_state.c): what
 * (PH_HUBMSG_SESSION_LEVEL, _SUB, _UNSUB or _OPEN) with the members of extra (taken; NULL: none) plus the
 * session's id, expiry, binding and principal. Returns PH_OK, or the error
 * to answer with the hub's reason in msg (a limit: PH_E_HANDLER; no
 * answer: PH_E_INTERNAL). */
enum ph_err ph_session_tell(struct ph_req *r, enum ph_hubmsg_type what, struct json_object *extra, char *msg,
			    size_t n);
#endif
