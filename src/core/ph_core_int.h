/* ph_core_int.h: what the files of the core's one exchange share: the
 * entry and the envelope (ph_core.c) and the responses (ph_writer.c).
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
