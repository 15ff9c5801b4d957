/* ph_err.c: the table mapping Phantom errors to JSON-RPC codes and HTTP statuses. */
#include "first.h"
#include "ph_err.h"

static const struct {
	const char *name;
	int code;          /* JSON-RPC code, 2026-07-28 */
	int legacy_code;   /* JSON-RPC code, 2025-11-25 */
	int status;        /* HTTP status, 2026-07-28 */
	int legacy_status; /* HTTP status, 2025-11-25 */
	const char *message;
} errs[PH_E__COUNT] = {
	[PH_OK] = {"PH_OK", 0, 0, 200, 200, "OK"},
	[PH_E_HTTP_METHOD] = {"PH_E_HTTP_METHOD", -32000, -32000, 405, 405, "Method not allowed: use POST"},
	[PH_E_ORIGIN] = {"PH_E_ORIGIN", -32000, -32000, 403, 403, "Forbidden: Origin not allowed"},
	[PH_E_HOST] = {"PH_E_HOST", -32000, -32000, 403, 403, "Forbidden: Host not allowed"},
	[PH_E_CONTENT_TYPE] = {"PH_E_CONTENT_TYPE", -32000, -32000, 415, 415,
			       "Unsupported Media Type: Content-Type must be application/json"},
	[PH_E_TOO_LARGE] = {"PH_E_TOO_LARGE", -32000, -32000, 413, 413, "Request body too large"},
	[PH_E_PARSE] = {"PH_E_PARSE", -32700, -32700, 400, 400, "Parse error"},
	[PH_E_INVALID_REQUEST] = {"PH_E_INVALID_REQUEST", -32600, -32600, 400, 400, "Invalid Request"},
	[PH_E_ENVELOPE] = {"PH_E_ENVELOPE", -32602, -32602, 400, 400, "Invalid params"},
	[PH_E_HEADER] = {"PH_E_HEADER", -32020, -32020, 400, 400, "Header mismatch"},
	[PH_E_VERSION] = {"PH_E_VERSION", -32022, -32602, 400, 400, "Unsupported protocol version"},
	[PH_E_NO_METHOD] = {"PH_E_NO_METHOD", -32601, -32601, 404, 200, "Method not found"},
	[PH_E_CAPABILITY] = {"PH_E_CAPABILITY", -32021, -32021, 400, 200,
			     "Missing required client capability"},
	[PH_E_PARAMS] = {"PH_E_PARAMS", -32602, -32602, 200, 200, "Invalid params"},
	[PH_E_NOT_FOUND] = {"PH_E_NOT_FOUND", -32602, -32002, 200, 200, "Resource not found"},
	/* URLElicitationRequiredError exists in 2025-11-25 only; -32042 is
	 * reserved and MUST NOT be emitted under 2026-07-28 (mcp-wire §2.1), where
	 * URL elicitation is an input_required result. Should the modern column
	 * ever be reached it reads as an internal error. */
	[PH_E_URL_ELICITATION] = {"PH_E_URL_ELICITATION", -32603, -32042, 200, 200,
				  "This request requires more information."},
	/* 401/403 from authentication: the meaning is in the HTTP status and
	 * WWW-Authenticate; the body only has to be a JSON-RPC error. -32000,
	 * like the other transport refusals above (Origin, Host, 405, 415) and
	 * like Phantom MCP and the TypeScript SDK's transport errors: MCP
	 * assigns no code to authentication, -32020..-32099 are reserved for
	 * MCP, and receivers give -32000..-32019 no meaning, which is right for
	 * a refusal that HTTP already explains. */
	[PH_E_UNAUTHORIZED] = {"PH_E_UNAUTHORIZED", -32000, -32000, 401, 401, "Unauthorized"},
	[PH_E_FORBIDDEN] = {"PH_E_FORBIDDEN", -32000, -32000, 403, 403, "Forbidden"},
	[PH_E_INTERNAL] = {"PH_E_INTERNAL", -32603, -32603, 500, 500, "Internal error"},
	[PH_E_HANDLER] = {"PH_E_HANDLER", -32603, -32603, 200, 200, "Internal error"},
	/* a transport refusal like 401/403: -32000, the meaning in the status */
	[PH_E_RATE_LIMITED] = {"PH_E_RATE_LIMITED", -32000, -32000, 429, 429, "Too Many Requests"},
	[PH_E_UNCONFIGURED] = {"PH_E_UNCONFIGURED", -32603, -32603, 500, 500,
			       "Internal error: the server could not load its configuration; see the "
			       "server log"},
	[PH_E_BODY_LENGTH] = {"PH_E_BODY_LENGTH", -32600, -32600, 400, 400,
			      "Invalid Request: the body length differs from Content-Length"},
	/* a transport refusal: http.params_timeout_ms or http.body_timeout_ms
	 * passed before the request was in */
	[PH_E_TIMEOUT] = {"PH_E_TIMEOUT", -32000, -32000, 408, 408,
			  "Request Timeout: the request did not arrive in time"},
	/* the Streamable HTTP rule: the client initializes again on 404 */
	[PH_E_SESSION] = {"PH_E_SESSION", -32001, -32001, 404, 404,
			  "Session not found: initialize again"},
	/* a transport refusal: the hub holds as many sessions or streams as
	 * configured (sessions.max_state, subscriptions.max_streams) */
	[PH_E_BUSY] = {"PH_E_BUSY", -32000, -32000, 503, 503, "Service Unavailable"},
};

int
ph_err_rpc_code(enum ph_err e, bool legacy)
{
	if ((unsigned)e >= PH_E__COUNT)
		e = PH_E_INTERNAL;
	return legacy ? errs[e].legacy_code : errs[e].code;
}

int
ph_err_http_status(enum ph_err e, bool legacy)
{
	if ((unsigned)e >= PH_E__COUNT)
		e = PH_E_INTERNAL;
	return legacy ? errs[e].legacy_status : errs[e].status;
}

const char *
ph_err_message(enum ph_err e)
{
	if ((unsigned)e >= PH_E__COUNT)
		e = PH_E_INTERNAL;
	return errs[e].message;
}

const char *
ph_err_name(enum ph_err e)
{
	if ((unsigned)e >= PH_E__COUNT)
		return "PH_E_UNKNOWN";
	return errs[e].name;
}

const char *
ph_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}
