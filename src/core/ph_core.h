/* ph_core.h: the MCP core's entry point for the fronts: one exchange in,
 * one response out. */
#ifndef PH_CORE_H
#define PH_CORE_H
#include "first.h"
#include "ph_server.h"

/* Serves one exchange from start to end: HTTP rules, envelope, era, dispatch,
 * response and the log line. Never fails; every problem becomes a response. */
void ph_serve(struct ph_server *srv, struct ph_exchange *ex);

/* Answers one exchange with HTTP 500 and a JSON-RPC error that points at
 * the log: what a CGI or FastCGI process whose configuration did not load
 * serves instead of nothing. */
void ph_serve_unconfigured(struct ph_exchange *ex);

/* Answers one exchange with the transport error e (its HTTP status and a
 * JSON-RPC error with id null): a request the front had to give up on
 * before it could be served (a read deadline). Logs it. */
void ph_serve_refused(struct ph_exchange *ex, enum ph_err e);

/* The request log line (ph_reqlog.c). */
void ph_log_request(const struct ph_req *r, const char *method);
/* The final response of a 2026-07-28 request answered outside a worker
 * (the hub ending a listen stream): res (taken) completed as the core
 * completes every result (resultType, serverInfo) in a JSON-RPC response
 * for id (borrowed). Caller puts. */
struct json_object *ph_core_final_result(const struct ph_server *srv, struct json_object *id,
					 struct json_object *res);
#endif
