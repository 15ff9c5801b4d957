/* ph_err.h: the one error enum. Every failure the server reports to a client
 * is one of these; ph_err_rpc_code() and ph_err_http_status() map it to the
 * wire at the response boundary only (mcp-wire §2.1, §6.6). */
#ifndef PH_ERR_H
#define PH_ERR_H
#include "first.h"

enum ph_err {
	PH_OK = 0,
	PH_E_HTTP_METHOD,      /* 405: not POST */
	PH_E_ORIGIN,           /* 403: Origin not allowed */
	PH_E_HOST,             /* 403: Host not allowed */
	PH_E_CONTENT_TYPE,     /* 415 */
	PH_E_TOO_LARGE,        /* 413: body over http.max_body */
	PH_E_PARSE,            /* 400 -32700 */
	PH_E_INVALID_REQUEST,  /* 400 -32600: batch, response, not an object */
	PH_E_ENVELOPE,         /* 400 -32602: _meta missing or malformed */
	PH_E_HEADER,           /* 400 -32020 */
	PH_E_VERSION,          /* 400 -32022 */
	PH_E_NO_METHOD,        /* 404 -32601 */
	PH_E_CAPABILITY,       /* 400 -32021 */
	PH_E_PARAMS,           /* 200 -32602: in-band parameter error */
	PH_E_NOT_FOUND,        /* 200 -32602 (modern) / -32002 (legacy): resource not found */
	PH_E_URL_ELICITATION,  /* 200 -32042, 2025-11-25 only (never emitted under 2026-07-28) */
	PH_E_UNAUTHORIZED,     /* 401 -32000 + WWW-Authenticate */
	PH_E_FORBIDDEN,        /* 403 -32000 */
	PH_E_INTERNAL,         /* 500 -32603 */
	PH_E_HANDLER,          /* 200 -32603: a handler failed after dispatch */
	PH_E_RATE_LIMITED,     /* 429 -32000 + Retry-After: over limits.rate */
	PH_E_UNCONFIGURED,     /* 500 -32603: the configuration did not load */
	PH_E_BODY_LENGTH,      /* 400 -32600: the body is not CONTENT_LENGTH bytes */
	PH_E_TIMEOUT,          /* 408 -32000: the request did not arrive in time */
	PH_E_SESSION,          /* 404 -32001: a legacy Mcp-Session-Id that does not open, expired,
				* of another principal or ended (2025-11-25 only) */
	PH_E_BUSY,             /* 503 -32000: a host limit on state or streams is reached */
	PH_E__COUNT
};

/* The JSON-RPC error code; legacy selects the 2025-11-25 code where it differs. */
int ph_err_rpc_code(enum ph_err e, bool legacy);
/* The HTTP status; legacy requests get 200 for in-band protocol errors. */
int ph_err_http_status(enum ph_err e, bool legacy);
/* A short default message ("Parse error"). Never NULL. */
const char *ph_err_message(enum ph_err e);
/* The symbolic name ("PH_E_PARSE"), for logs and tests. */
const char *ph_err_name(enum ph_err e);
/* The reason phrase for an HTTP status ("Bad Request"). */
const char *ph_http_reason(int status);
#endif
