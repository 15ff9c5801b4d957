/* ph_mrtr.h: multi-round requests (mcp-wire §5): a tool, prompt or resource
 * handler asks the client for input (elicitation in form or URL mode,
 * sampling, roots) and is called again on the client's retry.
 *
 * Nothing survives in the worker between the rounds. The handler's state
 * travels to the client sealed in requestState (ph_state.c), bound to the
 * principal, the method, the target and the arguments; any worker with the
 * same secret opens it on the retry. */
#ifndef PH_MRTR_H
#define PH_MRTR_H
#include "first.h"
#include "ph_server.h"

/* Reads params.requestState and params.inputResponses of a tools/call,
 * prompts/get or resources/read before it is dispatched; target is the
 * params member naming what is called ("name" or "uri"). A requestState is
 * opened and checked against this request: on success r->sess.mrtr_state holds
 * the handler's state (owned by r, released by ph_mrtr_end) and r->sess.resumed
 * is set. inputResponses must be an object of objects; r->sess.input_responses
 * borrows it. Legacy requests have no multi-round requests: both members
 * are ignored. Returns true, or false after setting o to -32602. */
bool ph_mrtr_begin(struct ph_req *r, const char *target, struct ph_outcome *o);
/* True when a handler called for r cannot ask the client in a second
 * round: a 2025-11-25 request, unless its session's client declared
 * elicitation, sampling or roots and the call can wait in a hub for the
 * answers (then handlers ask as under 2026-07-28). */
bool ph_mrtr_no_rounds(const struct ph_req *r);
/* Releases what ph_mrtr_begin kept. */
void ph_mrtr_end(struct ph_req *r);

/* Answers a handler's {inputRequests, state} (ir, borrowed): checks the
 * requests, checks them against the client's capabilities (-32021), seals
 * the state and sets o->result to the input_required result. A legacy
 * request gets -32042 for URL-mode elicitations and -32021 for anything
 * else, unless the request belongs to a session whose client declares
 * what the requests need and a hub can hold the call: then r->sess.park takes
 * ir and o is left empty (the core pushes the requests to the client). A
 * malformed answer is a handler failure (-32603, details in the server log
 * under label). Otherwise always sets o. */
void ph_mrtr_answer(struct ph_req *r, struct json_object *ir, const char *label,
		    struct ph_outcome *o);
/* A random version 4 UUID (the elicitationId a 2025-11-25 URL elicitation
 * must carry when the handler gave none). */
void ph_uuid4(char out[37]);
#endif
