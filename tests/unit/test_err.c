/* test_err.c: the error table. Every enum value has a name, a message, a
 * JSON-RPC code and an HTTP status in both eras, matching mcp-wire §2.1 and
 * §6.6; out-of-range values fall back to an internal error. */
#include "first.h"
#include "ph_err.h"
#include "tap.h"

/* The expected wire mapping, written out from the reference rather than
 * copied from ph_err.c, so a change to the table must change this too. */
static const struct {
	enum ph_err e;
	const char *name;
	int code, legacy_code, status, legacy_status;
} want[] = {
	{PH_OK, "PH_OK", 0, 0, 200, 200},
	{PH_E_HTTP_METHOD, "PH_E_HTTP_METHOD", -32000, -32000, 405, 405},
	{PH_E_ORIGIN, "PH_E_ORIGIN", -32000, -32000, 403, 403},
	{PH_E_HOST, "PH_E_HOST", -32000, -32000, 403, 403},
	{PH_E_CONTENT_TYPE, "PH_E_CONTENT_TYPE", -32000, -32000, 415, 415},
	{PH_E_TOO_LARGE, "PH_E_TOO_LARGE", -32000, -32000, 413, 413},
	{PH_E_PARSE, "PH_E_PARSE", -32700, -32700, 400, 400},
	{PH_E_INVALID_REQUEST, "PH_E_INVALID_REQUEST", -32600, -32600, 400, 400},
	{PH_E_ENVELOPE, "PH_E_ENVELOPE", -32602, -32602, 400, 400},
	{PH_E_HEADER, "PH_E_HEADER", -32020, -32020, 400, 400},
	{PH_E_VERSION, "PH_E_VERSION", -32022, -32602, 400, 400},
	{PH_E_NO_METHOD, "PH_E_NO_METHOD", -32601, -32601, 404, 200},
	{PH_E_CAPABILITY, "PH_E_CAPABILITY", -32021, -32021, 400, 200},
	{PH_E_PARAMS, "PH_E_PARAMS", -32602, -32602, 200, 200},
	{PH_E_NOT_FOUND, "PH_E_NOT_FOUND", -32602, -32002, 200, 200},
	{PH_E_URL_ELICITATION, "PH_E_URL_ELICITATION", -32603, -32042, 200, 200}, /* -32042 never under 2026-07-28 */
	{PH_E_UNAUTHORIZED, "PH_E_UNAUTHORIZED", -32000, -32000, 401, 401},
	{PH_E_FORBIDDEN, "PH_E_FORBIDDEN", -32000, -32000, 403, 403},
	{PH_E_INTERNAL, "PH_E_INTERNAL", -32603, -32603, 500, 500},
	{PH_E_HANDLER, "PH_E_HANDLER", -32603, -32603, 200, 200},
	{PH_E_RATE_LIMITED, "PH_E_RATE_LIMITED", -32000, -32000, 429, 429},
	{PH_E_UNCONFIGURED, "PH_E_UNCONFIGURED", -32603, -32603, 500, 500},
	{PH_E_BODY_LENGTH, "PH_E_BODY_LENGTH", -32600, -32600, 400, 400},
	{PH_E_TIMEOUT, "PH_E_TIMEOUT", -32000, -32000, 408, 408},
	{PH_E_SESSION, "PH_E_SESSION", -32001, -32001, 404, 404},
	{PH_E_BUSY, "PH_E_BUSY", -32000, -32000, 503, 503},
};

int
main(void)
{
	is_int(PH_ARRAY_LEN(want), PH_E__COUNT, "this test lists every enum value");

	for (size_t i = 0; i < PH_ARRAY_LEN(want); i++) {
		enum ph_err e = want[i].e;
		const char *m = ph_err_message(e);
		is_int(e, (int)i, "%s is enum value %zu", want[i].name, i);
		is_str(ph_err_name(e), want[i].name, "%s has its name", want[i].name);
		ok(m != NULL && m[0] != '\0', "%s has a message (%s)", want[i].name, m ? m : "NULL");
		is_int(ph_err_rpc_code(e, false), want[i].code, "%s JSON-RPC code (2026-07-28)", want[i].name);
		is_int(ph_err_rpc_code(e, true), want[i].legacy_code, "%s JSON-RPC code (legacy)", want[i].name);
		is_int(ph_err_http_status(e, false), want[i].status, "%s HTTP status (2026-07-28)", want[i].name);
		is_int(ph_err_http_status(e, true), want[i].legacy_status, "%s HTTP status (legacy)",
		       want[i].name);
		ok(strcmp(ph_http_reason(ph_err_http_status(e, false)), "Unknown") != 0 &&
		   strcmp(ph_http_reason(ph_err_http_status(e, true)), "Unknown") != 0,
		   "%s statuses have reason phrases", want[i].name);
		for (size_t j = 0; j < i; j++)
			if (strcmp(ph_err_name(e), ph_err_name(want[j].e)) == 0)
				ok(0, "%s: name is unique", want[i].name);
	}

	/* what the reference singles out */
	is_int(ph_err_rpc_code(PH_E_NOT_FOUND, true), -32002, "legacy resource not found is -32002");
	is_int(ph_err_rpc_code(PH_E_NOT_FOUND, false), -32602, "modern resource not found is -32602");
	for (int e = 0; e < PH_E__COUNT; e++)
		if (ph_err_rpc_code((enum ph_err)e, false) == -32002)
			ok(0, "%s must not emit -32002 under 2026-07-28", ph_err_name((enum ph_err)e));
	ok(1, "no error emits the reserved -32002 under 2026-07-28");
	is_str(ph_err_message(PH_E_PARSE), "Parse error", "message of -32700");
	is_str(ph_err_message(PH_E_VERSION), "Unsupported protocol version", "message of -32022");

	/* values outside the enum are an internal error, never a crash */
	is_str(ph_err_name(PH_E__COUNT), "PH_E_UNKNOWN", "out-of-range name");
	is_str(ph_err_name((enum ph_err)-1), "PH_E_UNKNOWN", "negative name");
	is_int(ph_err_rpc_code(PH_E__COUNT, false), -32603, "out-of-range code is -32603");
	is_int(ph_err_http_status((enum ph_err)1000, true), 500, "out-of-range status is 500");
	is_str(ph_err_message(PH_E__COUNT), "Internal error", "out-of-range message");

	/* reason phrases */
	is_str(ph_http_reason(202), "Accepted", "202 reason");
	is_str(ph_http_reason(413), "Content Too Large", "413 reason (RFC 9110)");
	is_str(ph_http_reason(405), "Method Not Allowed", "405 reason");
	is_str(ph_http_reason(503), "Service Unavailable", "503 reason");
	is_str(ph_http_reason(299), "Unknown", "unknown status");
	return tap_done();
}
