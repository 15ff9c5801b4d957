/* ph_park.h: server-to-client requests in the middle of a legacy call
 * (ph_park.c). A handler's inputRequired on a session whose client declares
 * what it needs becomes JSON-RPC requests pushed on the call's SSE stream;
 * the call then waits in the hub (parked) and this worker returns to accept.
 * The client's answers are POSTed as JSON-RPC responses to any worker of
 * the host, which passes them to the hub; the worker whose answer completes
 * the round gets the connection back and calls the handler again with
 * state and inputResponses, as a 2026-07-28 retry would. */
#ifndef PH_PARK_H
#define PH_PARK_H
#include "first.h"
#include "ph_server.h"

/* The longest park message (the original request, the handler's state,
 * the requests to push and their ids): what the hub's channel carries in
 * one datagram. */
#define PH_PARK_DESC_MAX 60000
/* Room for what the hub hands a call back with beside its answers (which
 * are bounded by sessions.max_answer): its request and state. */
#define PH_PARK_REPLY_MAX 196608

/* A call the hub handed back: the exchange on its connection (made by the
 * front, srv->resume->open; the caller ends it with srv->resume->end), the
 * original request, the handler's state and the
 * client's answers (all owned by the caller). */
struct ph_park_resume {
	struct ph_exchange *ex;
	struct json_object *msg, *state, *answers;
};

/* Starts r's stream if need be and hands the connection to the hub with
 * the continuation and the requests of r->sess.park under ids of the server's
 * making; the hub writes them once it holds the call (so an answer never
 * reaches the hub before the call it answers). Returns true when the hub has the call (nothing more
 * may be written), else false with the reason in why (the caller answers
 * with it, on the stream when one was started). */
bool ph_park_call(struct ph_req *r, char *why, size_t n);
/* Why the JSON-RPC response msg cannot be the answer to a request this
 * server pushed (jsonrpc "2.0", exactly one of an object result and a
 * JSON-RPC error, an id of the form ph-HOST-CALL-N), or NULL with *host
 * pointing at the id's eight hex digits naming the host that sent it. */
const char *ph_park_check(struct json_object *msg, const char **host);
/* Passes the JSON-RPC response r->msg of r's session (r->sess.session) to the
 * hub. Returns 0 when it is taken and more answers are awaited, 1 when it
 * completed a round (*out then holds the call to resume), -1 when refused
 * (the reason for the client in why), -2 when the answers are over
 * sessions.max_answer (the call was ended; why says so). */
int ph_park_answer(struct ph_req *r, struct ph_park_resume *out, char *why, size_t n);
/* With cluster:, the Redis names of a host's mailbox (a list of sealed
 * answers that host's hub takes) and of the channel that wakes its hub,
 * for the host whose tag (8 hex digits) is tag, in out
 * (PH_CLUSTER_KEY_MAX). */
#define PH_PARK_MAILBOX "q"
#define PH_PARK_WAKE "w"
void ph_park_mailbox(const char *kind, const char *tag, char *out);
/* In a process of the hub's: resumes the call parked on the FastCGI
 * connection fd (request rid) with the answers of its round, as a worker
 * does when the answer that completes it reaches it, for whom auth (the
 * PARK_CALL's: principal, allow-lists, assigns, session) names. All
 * borrowed; fd is ended. */
void ph_park_resume_held(struct ph_server *srv, int fd, unsigned rid, struct json_object *msg,
			 struct json_object *state, struct json_object *answers, struct json_object *auth);
/* stdio, where the one process talks to one client: the requests of
 * r->sess.park go out on stdout under ids of the server's making (as
 * ph_park_call builds them) and the client's responses are taken from the
 * lines read ahead, for at most sessions.park_timeout_ms. Returns true with
 * *answers (request key -> the client's result; caller puts) once every
 * request is answered; else false, with the reason in why, or with
 * r->ex->cancelled set when the client cancelled the call or went away.
 * Other lines stay queued (a response to no request of this call is
 * answered later as any stray response is). */
bool ph_park_stdio(struct ph_req *r, struct json_object **answers, char *why, size_t n);
/* The capabilities of the stdio client's last initialize (copied), and
 * the same back (borrowed; NULL before an initialize): they decide what may
 * be pushed to it, as a session's do over HTTP. */
void ph_park_stdio_client(struct json_object *caps);
struct json_object *ph_park_stdio_caps(void);
/* How many times ph_park_stdio_client was called: a process forked before
 * the last change holds the capabilities of an earlier initialize. */
unsigned ph_park_stdio_gen(void);
#endif
