/* test_core.c: the MCP core driven through ph_serve() with the fake front
 * (fake_front.c), which records what the core sends (status, content type,
 * headers, body) and counts body reads. Covers the HTTP rules and the
 * validation ladder of mcp-wire §6.7 step by step with their HTTP status and
 * JSON-RPC code, the echoed id, both eras, stdio mode, the notification
 * helpers and pagination. After each error the next request is checked to be
 * served normally. The requests and answers of the golden files are not
 * repeated here: test_golden runs those. */
#include "first.h"
#include "fake_front.h"
#include "ph_core.h"
#include "ph_build.h"
#include "ph_server.h"
#include "ph_util.h"
#include "tap.h"
#include <stdarg.h>
#include <stdlib.h>

#define V "2026-07-28"
#define PV "io.modelcontextprotocol/protocolVersion"
#define CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_OK "\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":{}}"
#define DISCOVER "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META_OK "}}"
#define MODERN_HDRS(m) "HTTP_MCP_PROTOCOL_VERSION", V, "HTTP_MCP_METHOD", m

/* ---- the fake front (tests/unit/fake_front.c) ------------------------------ */

static struct fake_front F; /* the exchange of the last request */
/* a response carried Mcp-Session-Id that was no successful legacy
 * initialize over HTTP, or such an initialize came without one */
static bool session_id_wrong;
static struct ph_server *srv;

/* Empties F for the next exchange (stdio until told otherwise), noting
 * whether the last one sent an Mcp-Session-Id where it should not, or
 * none where it should (the answer to a legacy initialize over HTTP). */
static void
fake_reset(void)
{
	struct json_object *res = NULL, *pv = NULL;
	bool init_ok = F.ex.http && json_object_is_type(F.json, json_type_object) &&
		       json_object_object_get_ex(F.json, "result", &res) &&
		       json_object_object_get_ex(res, "protocolVersion", &pv) &&
		       json_object_object_get_ex(res, "serverInfo", NULL);
	if (F.session_id != init_ok)
		session_id_wrong = true;
	fake_free(&F);
}

/* Serves body as an HTTP POST from localhost with Content-Type
 * application/json; kv (NAME, VALUE, ..., NULL) overrides or, with a NULL
 * value, removes request variables. */
static void
serve_http_kv(const char *body, const char *const *kv)
{
	fake_reset();
	F.ex.http = true;
	fake_post(&F, body, strlen(body));
	for (; kv && kv[0]; kv += 2)
		fake_param(&F, kv[0], kv[1]);
	fake_serve(&F, srv);
	fake_json(&F);
}

/* serve_http(body, NAME, VALUE, ...): the variables end at END, so a NULL
 * value can remove one. */
static const char end_marker[1];
#define END ((const char *)end_marker)

static void
serve_http_v(const char *body, ...)
{
	const char *kv[2 * FAKE_MAX_PARAMS + 1];
	size_t n = 0;
	va_list ap;
	va_start(ap, body);
	for (;;) {
		const char *name = va_arg(ap, const char *);
		if (name == END || n + 2 >= PH_ARRAY_LEN(kv))
			break;
		kv[n++] = name;
		kv[n++] = va_arg(ap, const char *);
	}
	va_end(ap);
	kv[n] = NULL;
	serve_http_kv(body, kv);
}
#define serve_http(...) serve_http_v(__VA_ARGS__, END)

/* Serves one stdio line. */
static void
serve_stdio(const char *line)
{
	fake_reset();
	F.ex.http = false;
	fake_body(&F, line, strlen(line)); /* fake_serve marks it too large */
	/* headers that would fail every check if stdio looked at them */
	fake_param(&F, "HTTP_MCP_METHOD", "wrong");
	fake_param(&F, "HTTP_MCP_PROTOCOL_VERSION", "1900-01-01");
	fake_param(&F, "REQUEST_METHOD", "GET");
	fake_serve(&F, srv);
	fake_json(&F);
}

/* A member of the response by path (NULL-terminated keys); borrowed. */
static struct json_object *
jpath(struct json_object *o, ...)
{
	va_list ap;
	const char *k;
	va_start(ap, o);
	while (o && (k = va_arg(ap, const char *)) != NULL)
		o = ph_jget(o, k);
	va_end(ap);
	return o;
}

static const char *
jpath_str(struct json_object *o, const char *a, const char *b, const char *c)
{
	struct json_object *v = jpath(o, a, b, c, (const char *)NULL);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int
resp_code(void)
{
	struct json_object *c = jpath(F.json, "error", "code", (const char *)NULL);
	return c ? json_object_get_int(c) : 0;
}

static const char *
resp_message(void)
{
	return jpath_str(F.json, "error", "message", NULL);
}

/* The id of the response as JSON text ("1", "\"a\"", "null"), "(none)"
 * without a response. */
static const char *
resp_id(void)
{
	struct json_object *id;
	if (F.json == NULL)
		return "(none)";
	if (!json_object_object_get_ex(F.json, "id", &id))
		return "(absent)";
	return id ? json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN) : "null";
}

static bool
has_header(const char *line)
{
	return fake_has_header(&F, line);
}

/* The next request after an error is served normally: a plain discover
 * (no Host, no Origin, so any allow-list lets it through). */
static void
still_serves(const char *desc, bool http)
{
	if (http) {
		serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", NULL);
		ok(F.status == 200 && resp_code() == 0 &&
		   jpath_str(F.json, "result", "resultType", NULL) != NULL,
		   "%s: the next request is served", desc);
	} else {
		/* small enough for any http.max_body */
		serve_stdio("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
		ok(resp_code() == 0 && jpath(F.json, "result", (const char *)NULL) != NULL,
		   "%s: the next request is served", desc);
	}
}

/* Checks the HTTP status (ignored for stdio), the JSON-RPC error code (0 for
 * a result) and the echoed id of the response just served; after an error,
 * that the next request is still served. */
static void
expect(int status, int code, const char *id, const char *desc)
{
	bool http = F.ex.http;
	if (http)
		is_int(F.status, status, "%s: HTTP %d", desc, status);
	is_int(resp_code(), code, "%s: code %d", desc, code);
	is_str(resp_id(), id, "%s: id %s", desc, id);
	if (code != 0)
		still_serves(desc, http);
}

static void
message_has(const char *what, const char *desc)
{
	const char *m = resp_message();
	ok(m && strstr(m, what), "%s: message mentions '%s' (%s)", desc, what, m ? m : "no message");
}

static struct ph_server *
make_server(const char *yaml)
{
	struct ph_conf_problems p = {0};
	struct ph_config *c = ph_conf_load_buf("t.yaml", ".", yaml, strlen(yaml), &p);
	struct ph_server *s = c ? ph_server_new(c, &p) : NULL;
	for (size_t i = 0; i < p.n; i++)
		printf("# %s\n", p.v[i]);
	ph_conf_problems_free(&p);
	if (s == NULL) {
		printf("Bail out! cannot build a server from: %s\n", yaml);
		exit(1);
	}
	return s;
}

/* Frees the strings built with B() at exit. */
static char *garbage[512];
static size_t ngarbage;

static char *PH_PRINTF(1, 2)
B(const char *fmt, ...)
{
	va_list ap;
	struct ph_buf b;
	char tmp[8192];
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	ph_buf_init(&b);
	ph_buf_adds(&b, tmp);
	if (ngarbage == PH_ARRAY_LEN(garbage)) {
		printf("Bail out! too many test strings\n");
		exit(1);
	}
	return garbage[ngarbage++] = ph_buf_steal(&b);
}

/* A modern request: method, id text, extra params members (may be "") and
 * the _meta object text. */
static char *
req(const char *method, const char *id, const char *extra, const char *meta)
{
	return B("{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s\"_meta\":%s}}", id,
		 method, extra, extra[0] ? "," : "", meta);
}

static const char *const meta_ok = "{\"" PV "\":\"" V "\",\"" CAPS "\":{}}";

/* ---- step 1: HTTP rules ---------------------------------------------------- */

static void
test_http_method(void)
{
	serve_http(DISCOVER, "REQUEST_METHOD", "GET");
	ok(has_header("Allow: POST\n"), "GET: Allow: POST");
	is_int(F.reads, 0, "GET: the body is not read");
	ok(F.ctype && strcmp(F.ctype, "application/json") == 0, "GET: the body is JSON");
	serve_http(DISCOVER, "REQUEST_METHOD", "DELETE");
	ok(has_header("Allow: POST\n"), "DELETE: Allow: POST");
	expect(405, -32000, "null", "DELETE");
	serve_http(DISCOVER, "REQUEST_METHOD", "post");
	expect(405, -32000, "null", "lowercase post is not POST");
	serve_http(DISCOVER, "REQUEST_METHOD", NULL);
	expect(405, -32000, "null", "no REQUEST_METHOD");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"));
	ok(!has_header("Allow:"), "POST: no Allow header on success");
}

static void
test_origin_host(void)
{
	struct ph_server *def = srv;

	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://evil.example.com");
	is_int(F.reads, 0, "bad Origin: the body is not read");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "null");
	expect(403, -32000, "null", "Origin 'null'");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://localhost.evil.com");
	expect(403, -32000, "null", "Origin whose host only starts with localhost");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"));
	expect(200, 0, "1", "no Origin is allowed");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "");
	expect(200, 0, "1", "an empty Origin counts as none");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://localhost:3000");
	expect(200, 0, "1", "no origins configured: Origin on localhost (any port) is allowed");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "https://127.0.0.1");
	expect(200, 0, "1", "no origins configured: Origin on 127.0.0.1 is allowed");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://[::1]:8080/x");
	expect(200, 0, "1", "no origins configured: Origin on [::1] is allowed");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://LocalHost");
	expect(200, 0, "1", "host names compare case-insensitively");

	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "evil.example.com");
	message_has("Host", "bad Host");
	expect(403, -32000, "null", "Host of another name (DNS rebinding)");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "evil.example.com:8080");
	expect(403, -32000, "null", "Host of another name with a port");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "localhost");
	expect(200, 0, "1", "Host localhost");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "127.0.0.1:1");
	expect(200, 0, "1", "Host 127.0.0.1 with a port");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "[::1]:8080");
	expect(200, 0, "1", "Host [::1] with a port");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "LOCALHOST:80");
	expect(200, 0, "1", "Host names compare case-insensitively");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", NULL);
	expect(200, 0, "1", "no Host header is allowed");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://evil.example.com",
		   "HTTP_HOST", "evil.example.com");
	message_has("Origin", "Origin is checked before Host");
	expect(403, -32000, "null", "bad Origin and bad Host");
	serve_http(DISCOVER, "REQUEST_METHOD", "GET", "HTTP_ORIGIN", "http://evil.example.com");
	expect(405, -32000, "null", "the method is checked before Origin");

	/* configured origins: only those, the host rule no longer applies */
	srv = make_server("http:\n  origins: [\"https://app.example.com\"]\n");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "https://app.example.com");
	expect(200, 0, "1", "configured Origin is allowed");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "HTTPS://APP.EXAMPLE.COM");
	expect(200, 0, "1", "configured Origin compares case-insensitively");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "http://localhost:3000");
	expect(403, -32000, "null", "with origins configured a localhost Origin is not implied");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_ORIGIN", "https://app.example.com:8443");
	expect(403, -32000, "null", "configured Origin must match with its port");
	ph_server_free(srv);

	/* configured hosts */
	srv = make_server("http:\n  hosts: [api.example.com]\n");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "api.example.com:443");
	expect(200, 0, "1", "configured Host is allowed with any port");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"));
	expect(403, -32000, "null", "localhost is refused when not configured");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "api.example.com",
		   "HTTP_ORIGIN", "https://api.example.com");
	expect(200, 0, "1", "Origin on a configured host is allowed");
	ph_server_free(srv);

	/* "*" for both */
	srv = make_server("http:\n  origins: '*'\n  hosts: '*'\n");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "HTTP_HOST", "anything.example",
		   "HTTP_ORIGIN", "https://else.example");
	expect(200, 0, "1", "\"*\" allows any Origin and Host");
	ph_server_free(srv);
	srv = def;
}

static void
test_content_type(void)
{
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", NULL);
	is_int(F.reads, 0, "no Content-Type: the body is not read");
	expect(415, -32000, "null", "no Content-Type");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", "application/jsonx");
	expect(415, -32000, "null", "application/jsonx");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", "application/json-rpc");
	expect(415, -32000, "null", "application/json-rpc");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", "");
	expect(415, -32000, "null", "empty Content-Type");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", "application/json; charset=utf-8");
	expect(200, 0, "1", "application/json with a charset");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", "Application/JSON");
	expect(200, 0, "1", "media types compare case-insensitively");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_TYPE", " application/json ;charset=utf-8");
	expect(200, 0, "1", "blanks around the media type");
	serve_http(DISCOVER, "HTTP_HOST", "evil.example.com", "CONTENT_TYPE", "text/plain");
	expect(403, -32000, "null", "Host is checked before Content-Type");
}

static void
test_body_size(void)
{
	struct ph_server *def = srv;
	char big[400];
	srv = make_server("http:\n  max_body: 256\n");

	memset(big, ' ', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	memcpy(big, DISCOVER, strlen(DISCOVER));
	serve_http(big, MODERN_HDRS("server/discover"));
	is_int(F.reads, 0, "Content-Length over the limit: the body is never read");

	serve_http(big, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", NULL);
	ok(F.reads > 0, "without Content-Length the body is read up to the limit");
	expect(413, -32000, "null", "a body over the limit without Content-Length");

	serve_http(big, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "10");
	expect(413, -32000, "null", "a body longer than its Content-Length is still bounded");

	big[256] = '\0';
	serve_http(big, MODERN_HDRS("server/discover"));
	expect(200, 0, "1", "a body of exactly http.max_body");

	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "257");
	is_int(F.reads, 0, "Content-Length one over: not read");
	expect(413, -32000, "null", "Content-Length one over the limit");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "99999999999999999999");
	expect(400, -32600, "null", "Content-Length beyond 64 bits");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "abc");
	is_int(F.reads, 0, "bad Content-Length: not read");
	expect(400, -32600, "null", "Content-Length that is not a number");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "-1");
	expect(400, -32600, "null", "negative Content-Length");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "");
	expect(200, 0, "1", "empty Content-Length counts as none");
	serve_http(DISCOVER, "CONTENT_TYPE", "text/plain", "CONTENT_LENGTH", "100000");
	expect(415, -32000, "null", "Content-Type is checked before the size");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "200");
	ok(memmem(F.out.data, F.out.len, "Content-Length", 14) != NULL,
	   "the 400 says the body is not Content-Length long");
	expect(400, -32600, "null", "a body shorter than its Content-Length");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"), "CONTENT_LENGTH", "20");
	expect(400, -32600, "null", "a body longer than its Content-Length");

	/* reading */
	fake_reset();
	serve_http(DISCOVER, MODERN_HDRS("server/discover"));
	is_int(F.reads, 2, "a small body takes one read and one at the end");
	{
		/* a front that hands out 7 bytes at a time */
		fake_reset();
		F.ex.http = true;
		fake_body(&F, DISCOVER, strlen(DISCOVER));
		F.chunk = 7;
		fake_param(&F, "REQUEST_METHOD", "POST");
		fake_param(&F, "CONTENT_TYPE", "application/json");
		fake_param(&F, "HTTP_MCP_PROTOCOL_VERSION", V);
		fake_param(&F, "HTTP_MCP_METHOD", "server/discover");
		fake_serve(&F, srv);
		fake_json(&F);
		ok(F.reads > 20, "the body arrives in small pieces (%d reads)", F.reads);
		expect(200, 0, "1", "a body read in pieces");
	}
	{
		fake_reset();
		F.ex.http = true;
		fake_body(&F, DISCOVER, strlen(DISCOVER));
		F.read_fail = true;
		fake_param(&F, "REQUEST_METHOD", "POST");
		fake_param(&F, "CONTENT_TYPE", "application/json");
		fake_serve(&F, srv);
		fake_json(&F);
		expect(400, -32600, "null", "a failed body read");
		fake_reset();
		F.ex.http = true;
		fake_body(&F, DISCOVER, strlen(DISCOVER));
		F.read_late = true;
		fake_param(&F, "REQUEST_METHOD", "POST");
		fake_param(&F, "CONTENT_TYPE", "application/json");
		fake_serve(&F, srv);
		fake_json(&F);
		is_int(F.reads, 1, "a read past the deadline is the last");
		expect(408, -32000, "null", "a body past the front's deadline");
	}
	ph_server_free(srv);
	srv = def;
}

/* ---- step 2: JSON and the message shape ----------------------------------- */

static void
test_parse(void)
{
	static const char *const bad[] = {
		"", "   ", "{", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", "not json",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}{}",
		"{'jsonrpc':'2.0'}", "{\"a\":1,}", "{\"a\":01}", "{\"s\":\"\xff\xfe\"}", "{\"s\":\"\xc3\"}",
		"1 2", "-", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\x01", "[1,]", "nul",
	};
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		char desc[64];
		snprintf(desc, sizeof desc, "invalid JSON #%zu", i);
		serve_http(bad[i]);
		expect(400, -32700, "null", desc);
	}
	/* json-c's strict mode lets these through; the core refuses them */
	{
		static const char *const notjson[] = {"\"a\tb\"", "\"a\nb\"", "\"\x1f\"", "NaN",
						      "Infinity", "-Infinity", "[1,NaN]"};
		for (size_t i = 0; i < PH_ARRAY_LEN(notjson); i++) {
			char desc[64];
			snprintf(desc, sizeof desc, "not JSON for json-c strict mode #%zu", i);
			serve_http(B("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"v\":%s}}",
				     notjson[i]));
			expect(400, -32700, "null", desc);
		}
		serve_http("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"v\":[true,false,"
			   "null,1E5,-2e-3,\"NaN \\\" Infinity\\\\\",\"\\t\"]}}");
		expect(200, 0, "1", "every JSON literal, and NaN or tabs inside strings, are fine");
	}
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\t ");
	expect(200, 0, "1", "trailing whitespace is fine");

	/* depth: limits.json_depth is 64 by default */
	{
		struct ph_buf b;
		ph_buf_init(&b);
		ph_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":");
		for (int i = 0; i < 70; i++)
			ph_buf_addc(&b, '[');
		for (int i = 0; i < 70; i++)
			ph_buf_addc(&b, ']');
		ph_buf_adds(&b, "}}");
		serve_http(b.data);
		expect(400, -32700, "null", "nesting over limits.json_depth");
		ph_buf_reset(&b);
		ph_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":");
		for (int i = 0; i < 50; i++)
			ph_buf_addc(&b, '[');
		for (int i = 0; i < 50; i++)
			ph_buf_addc(&b, ']');
		ph_buf_adds(&b, "}}");
		serve_http(b.data);
		expect(200, 0, "1", "nesting under limits.json_depth");
		ph_buf_free(&b);
	}
}

static void
test_shape(void)
{
	/* a batch, a posted result, jsonrpc 1.0, a number as method, ids null
	 * and 1.5: tests/golden/04 to 09 */
	serve_http("[]");
	expect(400, -32600, "null", "an empty batch");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"error\":{\"code\":1,\"message\":\"x\"}}");
	expect(400, -32600, "\"e\"", "a posted error echoes its id");
	serve_http("{\"id\":2,\"method\":\"ping\"}");
	expect(400, -32600, "2", "no jsonrpc member");
	serve_http("{\"jsonrpc\":2.0,\"id\":3,\"method\":\"ping\"}");
	expect(400, -32600, "3", "jsonrpc as a number");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":\"x\"}");
	expect(400, -32600, "\"x\"", "neither method nor result");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}");
	expect(400, -32600, "null", "id true");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}");
	expect(400, -32600, "null", "id object");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}");
	expect(400, -32600, "null", "id array");
	serve_http("\"hello\"");
	expect(400, -32600, "null", "a string");
	serve_http("1");
	expect(400, -32600, "null", "a number");
	serve_http("null");
	expect(400, -32600, "null", "null");
	serve_http("true");
	expect(400, -32600, "null", "true");

	/* ids come back exactly as sent */
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}");
	expect(200, 0, "\"abc\"", "a string id is echoed");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"ping\"}");
	expect(200, 0, "\"1\"", "the string id \"1\" stays a string");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
	expect(200, 0, "0", "id 0");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":-7,\"method\":\"ping\"}");
	expect(200, 0, "-7", "a negative id");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"ping\"}");
	expect(200, 0, "9007199254740993", "an id beyond 2^53 is echoed exactly");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":\"é\\u00e9\",\"method\":\"ping\"}");
	expect(200, 0, "\"éé\"", "a non-ASCII string id");
}

static void
test_notifications(void)
{
	serve_http("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	is_int(F.responds, 1, "legacy notification: one response");
	ok(F.ctype == NULL, "legacy notification: no Content-Type");
	serve_http(B("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,%s}}",
		     META_OK),
		   "HTTP_MCP_PROTOCOL_VERSION", V);
	ok(F.status == 202 && F.out.len == 0, "modern notification: 202, no body");
	serve_http("{\"jsonrpc\":\"2.0\",\"method\":\"no/such/thing\",\"params\":\"odd\"}");
	ok(F.status == 202 && F.out.len == 0, "unknown notification with odd params: 202, no body");
	serve_http("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", "REQUEST_METHOD", "GET");
	is_int(F.status, 405, "a notification is still subject to the HTTP rules");
	still_serves("after notifications", true);
}

/* ---- steps 3-4: era and _meta ---------------------------------------------- */

static void
meta_bad(const char *params, const char *what, const char *desc)
{
	serve_http(B("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"server/discover\"%s%s}", params[0] ? ",\"params\":" : "",
		     params),
		   MODERN_HDRS("server/discover"));
	message_has(what, desc);
	expect(400, -32602, "9", desc);
}

static void
meta_good(const char *meta, const char *desc)
{
	serve_http(req("server/discover", "9", "", meta), MODERN_HDRS("server/discover"));
	expect(200, 0, "9", desc);
}

static void
test_meta(void)
{
	/* missing params, _meta or its members, and the first bad value of
	 * each: tests/golden/10 to 16 */
	meta_bad("[]", "params", "params as an array");
	meta_bad("\"x\"", "params", "params as a string");
	meta_bad("{\"_meta\":\"x\"}", "_meta", "_meta as a string");
	meta_bad("{\"_meta\":[]}", "_meta", "_meta as an array");
	meta_bad("{\"_meta\":{\"" PV "\":20260728,\"" CAPS "\":{}}}", PV, "protocolVersion as a number");
	meta_bad("{\"_meta\":{\"" PV "\":null,\"" CAPS "\":{}}}", PV, "protocolVersion null");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":null}}", CAPS, "clientCapabilities null");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":true}}", CAPS, "clientCapabilities true");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"io.modelcontextprotocol/clientInfo\":\"me\"}}",
		 "clientInfo", "clientInfo as a string");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"io.modelcontextprotocol/logLevel\":\"INFO\"}}",
		 "logLevel", "logLevel in capitals");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"io.modelcontextprotocol/logLevel\":3}}",
		 "logLevel", "logLevel as a number");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"progressToken\":1.5}}", "progressToken",
		 "progressToken 1.5");
	meta_bad("{\"_meta\":{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"progressToken\":{}}}", "progressToken",
		 "progressToken object");

	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{\"elicitation\":{}},"
		  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}",
		  "clientInfo as an object");
	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"io.modelcontextprotocol/logLevel\":\"debug\"}",
		  "logLevel debug");
	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"io.modelcontextprotocol/logLevel\":\"emergency\"}",
		  "logLevel emergency");
	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"progressToken\":\"abc\"}", "progressToken string");
	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"progressToken\":42}", "progressToken integer");
	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-"
		  "00f067aa0ba902b7-01\",\"tracestate\":\"a=b\",\"baggage\":7}",
		  "trace keys are passed through, not validated");
	meta_good("{\"" PV "\":\"" V "\",\"" CAPS "\":{},\"x.example/anything\":[1]}", "unknown _meta keys");

	/* era selection */
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":{\"" CAPS
		   "\":{}}}}");
	expect(400, -32602, "1", "clientCapabilities without a version and without headers is modern");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}",
		   MODERN_HDRS("tools/list"));
	expect(400, -32602, "1", "a modern header with a body lacking the envelope is -32602, not -32020");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", "HTTP_MCP_PROTOCOL_VERSION",
		   "2099-01-01");
	expect(400, -32602, "1", "a future version header makes the request modern");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "HTTP_MCP_PROTOCOL_VERSION", "garbage");
	expect(200, 0, "1", "a garbage version header without a body claim is legacy");
}

/* ---- steps 5-8: headers, version, method ------------------------------------ */

static void
test_headers(void)
{
	const char *v999 = req("server/discover", "3", "", "{\"" PV "\":\"v999.0.0\",\"" CAPS "\":{}}");

	serve_http(v999);
	expect(400, -32022, "3", "body v999 without headers: the version check comes before presence");
	serve_http(v999, "HTTP_MCP_PROTOCOL_VERSION", "v999.0.0", "HTTP_MCP_METHOD", "tools/list");
	message_has("Mcp-Method", "v999 and a wrong Mcp-Method");
	expect(400, -32020, "3", "Mcp-Method mismatch is checked before the version");

	serve_http(DISCOVER);
	expect(400, -32020, "1", "both headers missing");
	serve_http(DISCOVER, "HTTP_MCP_PROTOCOL_VERSION", "2025-11-25", "HTTP_MCP_METHOD", "server/discover");
	expect(400, -32020, "1", "MCP-Protocol-Version different from the body");
	serve_http(DISCOVER, "HTTP_MCP_PROTOCOL_VERSION", "", "HTTP_MCP_METHOD", "server/discover");
	expect(400, -32020, "1", "empty MCP-Protocol-Version");
	serve_http(DISCOVER, "HTTP_MCP_PROTOCOL_VERSION", " \t" V " ", "HTTP_MCP_METHOD", "  server/discover\t");
	expect(200, 0, "1", "blanks around header values are trimmed");
	serve_http(DISCOVER, "HTTP_MCP_PROTOCOL_VERSION", V, "HTTP_MCP_METHOD", "=?base64?c2VydmVyL2Rpc2NvdmVy?=");
	expect(200, 0, "1", "a base64 sentinel header is decoded");
	serve_http(DISCOVER, "HTTP_MCP_PROTOCOL_VERSION", V, "HTTP_MCP_METHOD", "=?base64?c2VydmVyL2Rpc2NvdmVy");
	expect(400, -32020, "1", "a sentinel without its suffix is a literal");

	/* unknown and removed methods are 404 once the headers are right
	 * (the golden files); without Mcp-Method the headers fail first */
	serve_http(req("no/such/method", "1", "", meta_ok), "HTTP_MCP_PROTOCOL_VERSION", V);
	expect(400, -32020, "1", "an unknown method without Mcp-Method: headers come first");
}

static void
test_mcp_name(void)
{
	const char *rr = req("resources/read", "4", "\"uri\":\"file:///x\"", meta_ok);
	struct ph_server *saved = srv;

	/* resources/read exists only where something serves resources */
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "file:///x");
	expect(404, -32601, "4", "resources/read without any resource configured");
	srv = make_server("resources:\n  - { uri: \"test://one\", name: one, text: hi }\n");

	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "FILE:///X");
	expect(400, -32020, "4", "Mcp-Name values are case-sensitive");
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "file:///x");
	is_str(jpath_str(F.json, "error", "data", "uri"), "file:///x", "not found carries data.uri");
	expect(200, -32602, "4", "matching Mcp-Name reaches the handler: resource not found is -32602");
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "  file:///x \t");
	expect(200, -32602, "4", "Mcp-Name is trimmed");
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "=?base64?ZmlsZTovLy94?=");
	expect(200, -32602, "4", "Mcp-Name in the base64 sentinel is decoded");
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "=?base64?ZmlsZTovLy9!?=");
	message_has("base64", "bad base64 in Mcp-Name");
	expect(400, -32020, "4", "invalid base64 in the sentinel");
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "=?base64?ZmlsZTovLy9?=");
	expect(400, -32020, "4", "base64 of the wrong length");
	serve_http(rr, MODERN_HDRS("resources/read"), "HTTP_MCP_NAME", "=?BASE64?ZmlsZTovLy94?=");
	expect(400, -32020, "4", "an upper-case sentinel is a literal, and differs");
	serve_http(req("resources/read", "4", "", meta_ok), MODERN_HDRS("resources/read"));
	message_has("uri", "resources/read without a uri");
	expect(200, -32602, "4", "without params.uri there is nothing to match; the handler says -32602");
	ph_server_free(srv);
	srv = saved;
}

static void
test_decode(void)
{
	char *out = NULL;
	static const struct {
		const char *in;
		int rc;
		const char *out;
	} cases[] = {
		{"plain", 1, NULL},
		{"=?base64?aGk=?=", 0, "hi"},
		{"=?base64?aGVsbG8=?=", 0, "hello"},
		{"=?base64?aGVsbA==?=", 0, "hell"},
		{"=?base64?" "?=", 0, ""}, /* split: no trigraph */
		{"=?base64?77+/wr8=?=", 0, "\xef\xbf\xbf\xc2\xbf"}, /* '+' and '/' */
		{"=?base64?+/+/?=", -1, NULL}, /* decodes to bytes that are not UTF-8 */
		{"=?base64?wK4=?=", -1, NULL}, /* an overlong '.' (C0 AE) */
		{"=?base64?aGk?=", -1, NULL},
		{"=?base64?a=Gk?=", -1, NULL},
		{"=?base64?aG=k?=", -1, NULL},
		{"=?base64?a-_k?=", -1, NULL},
		{"=?base64?AA==?=", -1, NULL}, /* decodes to a NUL byte */
		{"=?base64?=?=", -1, NULL},
		{"=?base64?", 1, NULL},
		{"=?Base64?aGk=?=", 1, NULL},
	};
	for (size_t i = 0; i < PH_ARRAY_LEN(cases); i++) {
		int rc = ph_header_decode(cases[i].in, strlen(cases[i].in), &out);
		is_int(rc, cases[i].rc, "decode '%s' returns %d", cases[i].in, cases[i].rc);
		if (rc == 0) {
			is_str(out, cases[i].out, "decode '%s'", cases[i].in);
			free(out);
		}
		out = NULL;
	}
}

/* ---- results ---------------------------------------------------------------- */

static void
test_results(void)
{
	struct ph_server *def = srv;
	struct json_object *si;

	serve_http(DISCOVER, MODERN_HDRS("server/discover"));
	ok(F.ctype && strcmp(F.ctype, "application/json") == 0, "discover: application/json");
	si = jpath(F.json, "result", "_meta", "io.modelcontextprotocol/serverInfo", (const char *)NULL);
	is_str(jpath_str(si, "name", NULL, NULL), "phantom", "discover: _meta serverInfo.name");
	is_str(jpath_str(si, "version", NULL, NULL), PACKAGE_VERSION, "discover: _meta serverInfo.version");
	ok(jpath(F.json, "result", "instructions", (const char *)NULL) == NULL, "no instructions unless configured");

	srv = make_server("server:\n  name: demo\n  title: Demo\n  instructions: Be nice.\n"
			  "  ttl_ms: 5000\n  scope: public\n");
	serve_http(DISCOVER, MODERN_HDRS("server/discover"));
	is_int(json_object_get_int(jpath(F.json, "result", "ttlMs", (const char *)NULL)), 5000,
	       "discover: configured ttlMs");
	is_str(jpath_str(F.json, "result", "cacheScope", NULL), "public", "discover: configured cacheScope");
	is_str(jpath_str(F.json, "result", "instructions", NULL), "Be nice.", "discover: instructions");
	si = jpath(F.json, "result", "_meta", "io.modelcontextprotocol/serverInfo", (const char *)NULL);
	is_str(jpath_str(si, "name", NULL, NULL), "demo", "discover: configured name");
	is_str(jpath_str(si, "title", NULL, NULL), "Demo", "discover: configured title");
	ph_server_free(srv);
	srv = def;
}

static void
test_legacy(void)
{
	static const char *const echoed[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
	static const char *const dates[] = {"2030-01-01", "1999-12-31", "2026-07-28", "2025-11-26"};
	for (size_t i = 0; i < PH_ARRAY_LEN(echoed); i++) {
		serve_http(B("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
			     "\"%s\",\"capabilities\":{}}}", echoed[i]));
		is_str(jpath_str(F.json, "result", "protocolVersion", NULL), echoed[i], "initialize echoes %s",
		       echoed[i]);
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(dates); i++) {
		serve_http(B("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
			     "\"%s\",\"capabilities\":{}}}", dates[i]));
		is_str(jpath_str(F.json, "result", "protocolVersion", NULL), "2025-11-25",
		       "initialize with unknown date %s answers 2025-11-25", dates[i]);
	}
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"capabilities\":{}}}");
	expect(200, -32602, "2", "initialize without protocolVersion");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}");
	expect(200, -32602, "2", "initialize without params");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":20251125}}");
	expect(200, -32602, "2", "initialize with a numeric version");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":[\"2025-11-25\"]}");
	message_has("params", "initialize with array params");
	expect(200, -32602, "2", "initialize with params that are not an object");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		   "\"2025-11-25\"}}", "HTTP_MCP_PROTOCOL_VERSION", V);
	expect(400, -32602, "2", "initialize with a modern header is a malformed modern request");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		   "\"2025-11-25\",\"_meta\":{\"" CAPS "\":{}}}}");
	expect(200, 0, "2", "initialize with only clientCapabilities in _meta stays legacy");

	serve_http("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	ok(F.json && json_object_object_length(jpath(F.json, "result", (const char *)NULL)) == 0,
	   "legacy ping answers {}");
	expect(200, 0, "3", "legacy ping");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"_meta\":{\"progressToken\":\"t\"}}}");
	expect(200, 0, "3", "legacy ping with a progressToken");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{}}");
	expect(200, -32601, "3", "server/discover without envelope or header is legacy and unknown there");
	serve_http("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///x\"}}");
	expect(200, -32601, "3", "legacy resources/read without resources configured is -32601");
}

/* ---- stdio ---------------------------------------------------------------- */

static void
test_stdio(void)
{
	struct ph_server *def = srv;

	serve_stdio(DISCOVER);
	is_str(jpath_str(F.json, "result", "resultType", NULL), "complete", "stdio: discover without headers");
	is_int(F.reads, 0, "stdio: the body is never read through the front");
	is_int(F.responds, 1, "stdio: one response");
	expect(0, 0, "1", "stdio discover");
	serve_stdio("{");
	expect(0, -32700, "null", "stdio: parse error");
	serve_stdio("[]");
	expect(0, -32600, "null", "stdio: batch");
	serve_stdio("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	ok(F.responds == 0 && F.out.len == 0, "stdio: a notification gets no answer at all");
	serve_stdio("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{}}");
	expect(0, -32601, "1", "stdio: discover without _meta is legacy (unknown there)");
	serve_stdio("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		    "\"2025-11-25\",\"capabilities\":{}}}");
	is_str(jpath_str(F.json, "result", "protocolVersion", NULL), "2025-11-25", "stdio: legacy initialize");
	expect(0, 0, "1", "stdio: initialize");

	srv = make_server("http:\n  max_body: 64\n");
	serve_stdio(DISCOVER);
	ok(F.json != NULL && F.status == 200, "stdio: a line over http.max_body is answered as a normal line");
	ph_server_free(srv);
	srv = def;
}

/* ---- a client that went away ----------------------------------------------- */

static void
test_gone(void)
{
	fake_reset();
	F.ex.http = true;
	F.gone = true; /* the write of the answer fails */
	fake_param(&F, "REQUEST_METHOD", "GET");
	fake_serve(&F, srv);
	ok(F.ex.cancelled, "a failed write marks the exchange cancelled");
	still_serves("after a client went away", true);
}

/* ---- notifications from handlers ------------------------------------------ */

static void
req_init(struct ph_req *r, bool http)
{
	fake_reset();
	F.ex.http = http;
	memset(r, 0, sizeof *r);
	r->srv = srv;
	r->ex = &F.ex;
	r->log_level = PH_LOG_NONE;
	r->resp.last_progress = -1;
}

static void
test_notify(void)
{
	struct ph_req r;
	struct json_object *tok = json_object_new_string("tok");

	req_init(&r, true);
	is_int(ph_req_progress(&r, 1, 10, "x"), 0, "progress without a token: nothing to do");
	is_int(F.stream_starts + F.stream_sends, 0, "progress without a token sends nothing");
	r.progress_token = tok;
	is_int(ph_req_progress(&r, 1, 10, "one"), 0, "progress with a token");
	is_int(F.stream_starts, 1, "the first notification starts an SSE stream");
	ok(r.resp.streaming, "the request is streaming");
	ok(has_header("X-Accel-Buffering: no\n"), "SSE: X-Accel-Buffering: no");
	ok(has_header("Cache-Control: no-cache"), "SSE: Cache-Control: no-cache");
	ok(!has_header("Mcp-Session-Id"), "SSE: no Mcp-Session-Id");
	ok(F.out.data && strstr(F.out.data, "\"method\":\"notifications/progress\"") &&
	   strstr(F.out.data, "\"progressToken\":\"tok\"") && strstr(F.out.data, "\"total\":10") &&
	   strstr(F.out.data, "\"message\":\"one\""), "progress notification content");
	ph_req_progress(&r, 1, 10, "again");
	is_int(F.stream_sends, 1, "progress that does not increase is dropped");
	ph_req_progress(&r, 0.5, 10, NULL);
	is_int(F.stream_sends, 1, "progress that decreases is dropped");
	ph_req_progress(&r, 2, 0, NULL);
	is_int(F.stream_sends, 2, "increasing progress is sent");
	is_int(F.stream_starts, 1, "the stream starts once");

	is_int(ph_req_log(&r, PH_LOG_ERROR, "l", json_object_new_string("d")), 0, "log without a level");
	is_int(F.stream_sends, 2, "no logLevel: no notifications/message");
	r.log_level = PH_LOG_WARNING;
	ph_req_log(&r, PH_LOG_INFO, "l", json_object_new_string("quiet"));
	is_int(F.stream_sends, 2, "a message below the level is dropped");
	ph_req_log(&r, PH_LOG_ERROR, "lg", json_object_new_string("loud"));
	is_int(F.stream_sends, 3, "a message at or above the level is sent");
	ok(strstr(F.out.data, "\"method\":\"notifications/message\"") && strstr(F.out.data, "\"level\":\"error\"") &&
	   strstr(F.out.data, "\"logger\":\"lg\"") && strstr(F.out.data, "\"data\":\"loud\""),
	   "message notification content");

	F.gone = true;
	is_int(ph_req_notify(&r, "notifications/x", NULL), -1, "a failed send reports the client gone");
	ok(F.ex.cancelled, "and cancels the request");
	F.gone = false;
	is_int(ph_req_notify(&r, "notifications/x", json_object_new_object()), -1,
	       "nothing more is sent for a cancelled request");
	is_int(F.stream_sends, 4, "(the failed send was the last)");

	/* stdio: messages go out as lines, no stream to start */
	req_init(&r, false);
	r.progress_token = tok;
	ph_req_progress(&r, 1, 0, NULL);
	ok(F.stream_starts == 0 && F.stream_sends == 1, "stdio: progress is one line, no stream start");
	json_object_put(tok);

	for (int l = PH_LOG_DEBUG; l <= PH_LOG_EMERGENCY; l++)
		is_int(ph_log_level_parse(ph_log_level_name((enum ph_log_level)l)), l, "log level %s round trip",
		       ph_log_level_name((enum ph_log_level)l));
	is_int(ph_log_level_parse("verbose"), PH_LOG_NONE, "unknown level");
	is_str(ph_log_level_name(PH_LOG_NONE), "none", "name of no level");
	is_str(ph_log_level_name((enum ph_log_level)99), "none", "name of an out-of-range level");
}

/* ---- pagination ------------------------------------------------------------- */

/* Runs ph_page_begin with params (JSON text, may be NULL). Returns its rc. */
static int
page_begin(struct ph_req *r, const char *params, size_t total, size_t *off, struct ph_outcome *o)
{
	struct json_object *p = params ? json_tokener_parse(params) : NULL;
	int rc;
	r->params = p;
	rc = ph_page_begin(r, total, off, o);
	r->params = NULL;
	json_object_put(p);
	return rc;
}

static void
bad_cursor(struct ph_req *r, const char *params, size_t total, const char *desc)
{
	struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
	size_t off = 99;
	int rc = page_begin(r, params, total, &off, &o);
	ok(rc == -1 && o.err == PH_E_PARAMS && ph_err_rpc_code(o.err, false) == -32602 && o.result == NULL,
	   "%s: -32602", desc);
	is_str(o.message, "Invalid cursor", "%s: message", desc);
	free(o.message);
	json_object_put(o.data);
}

static void
test_pagination(void)
{
	struct ph_server *def = srv;
	struct ph_req r;
	char *cursor = NULL, *far = NULL;
	size_t total = 5, seen = 0, pages = 0;

	srv = make_server("server:\n  page_size: 2\n");
	req_init(&r, true);
	for (;;) {
		struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
		struct json_object *res = json_object_new_object();
		size_t off = 99, n;
		const char *next;
		char *params = cursor ? ph_xasprintf("{\"cursor\":\"%s\"}", cursor) : NULL;
		int rc = page_begin(&r, params, total, &off, &o);
		free(params);
		if (rc != 0) {
			ok(0, "page %zu: cursor accepted", pages + 1);
			json_object_put(res);
			break;
		}
		is_int(off, seen, "page %zu starts where the last ended", pages + 1);
		n = ph_page_count(&r, total, off);
		ph_page_end(&r, res, off, n, total);
		seen += n;
		pages++;
		next = ph_jstr(res, "nextCursor");
		free(cursor);
		cursor = next ? ph_xstrdup(next) : NULL;
		json_object_put(res);
		if (cursor == NULL || pages > 10)
			break;
		ok(strspn(cursor, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
		   strlen(cursor), "cursor '%s' is base64url", cursor);
	}
	is_int(pages, 3, "5 items at 2 per page are 3 pages");
	is_int(seen, 5, "every item is seen once");
	free(cursor);

	{
		struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
		size_t off = 99;
		ok(page_begin(&r, NULL, 5, &off, &o) == 0 && off == 0, "no params: the first page");
		ok(page_begin(&r, "{}", 5, &off, &o) == 0 && off == 0, "no cursor: the first page");
		is_int(ph_page_count(&r, 5, 5), 0, "a page at the end is empty");
		is_int(ph_page_count(&r, 0, 0), 0, "an empty list has an empty page");
		is_int(ph_page_count(&r, 1, 0), 1, "a short last page");
	}
	{
		struct json_object *res = json_object_new_object();
		ph_page_end(&r, res, 0, 2, 2);
		ok(ph_jget(res, "nextCursor") == NULL, "no nextCursor when nothing remains");
		ph_page_end(&r, res, 96, 2, 100);
		far = ph_xstrdup(ph_jstr(res, "nextCursor"));
		json_object_put(res);
	}
	bad_cursor(&r, "{\"cursor\":\"!!!\"}", 5, "cursor with characters outside base64url");
	bad_cursor(&r, "{\"cursor\":\"\"}", 5, "empty cursor");
	bad_cursor(&r, "{\"cursor\":42}", 5, "cursor that is a number");
	bad_cursor(&r, "{\"cursor\":\"cDI6MQ\"}", 5, "cursor of another format (p2:1)");
	bad_cursor(&r, "{\"cursor\":\"cDE6LTE\"}", 5, "cursor with a negative offset");
	bad_cursor(&r, "{\"cursor\":\"cDE6MXg\"}", 5, "cursor with junk after the offset");
	bad_cursor(&r, "{\"cursor\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}", 5, "cursor too long");
	{
		char *p = ph_xasprintf("{\"cursor\":\"%s\"}", far);
		bad_cursor(&r, p, 5, "cursor past the end of a shorter list");
		free(p);
	}
	{
		struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
		size_t off = 0;
		ok(page_begin(&r, "{\"cursor\":\"cDE6NQ\"}", 5, &off, &o) == 0 && off == 5,
		   "a cursor at the very end is valid (empty page)");
	}
	free(far);
	ph_server_free(srv);
	srv = def;
}

/* Keys of a list for ph_page_resume: ctx is a NULL-ended array of names. */
static void
names_key(const void *ctx, size_t i, struct ph_buf *b)
{
	ph_buf_adds(b, ((const char *const *)ctx)[i]);
}

/* Where the page after a cursor made on list before starts in list after
 * (-1: refused). */
static long
resume_in(struct ph_req *r, const char *const *before, size_t nb, size_t off, size_t cnt,
	  const char *const *after, size_t na)
{
	struct ph_page_keys kb = {names_key, before}, ka = {names_key, after};
	struct json_object *res = json_object_new_object(), *p = json_object_new_object();
	struct ph_outcome o = {NULL, PH_OK, NULL, NULL};
	size_t at = 0;
	long rc;
	ph_page_mark(r, res, off, cnt, nb, &kb);
	json_object_object_add(p, "cursor", json_object_get(ph_jget(res, "nextCursor")));
	r->params = p;
	rc = ph_page_resume(r, na, &ka, &at, &o) == 0 ? (long)at : -1;
	r->params = NULL;
	free(o.message);
	json_object_put(p);
	json_object_put(res);
	return rc;
}

/* Keyed cursors: the next page starts after the last entry seen, whatever
 * a reload added or removed before it. */
static void
test_pagination_keys(void)
{
	static const char *const five[] = {"a", "b", "c", "d", "e", NULL};
	static const char *const no_a[] = {"b", "c", "d", "e", NULL};
	static const char *const no_b[] = {"a", "c", "d", "e", NULL};
	static const char *const no_ab[] = {"c", "d", "e", NULL};
	static const char *const x_first[] = {"x", "a", "b", "c", "d", "e", NULL};
	struct ph_req r;
	req_init(&r, true);
	is_int(resume_in(&r, five, 5, 0, 2, five, 5), 2, "unchanged list: the page after a, b starts at c");
	is_int(resume_in(&r, five, 5, 0, 2, no_a, 4), 1, "a removed: it starts at c, not d");
	is_int(resume_in(&r, five, 5, 0, 2, no_b, 4), 1, "b (the last seen) removed: after a, at c");
	is_int(resume_in(&r, five, 5, 0, 2, no_ab, 3), 0, "the whole page removed: at c, nothing skipped");
	is_int(resume_in(&r, five, 5, 0, 2, x_first, 6), 3, "x added before: c, not b again");
	is_int(resume_in(&r, five, 5, 2, 2, no_ab, 3), 2, "the second page, a and b removed: at e");
}

static void
test_jget(void)
{
	struct json_object *o = json_tokener_parse("{\"s\":\"x\",\"n\":1,\"z\":null}");
	is_str(ph_jstr(o, "s"), "x", "ph_jstr of a string");
	ok(ph_jstr(o, "n") == NULL, "ph_jstr of a number is NULL");
	ok(ph_jget(o, "n") != NULL, "ph_jget of a number");
	ok(ph_jget(o, "z") == NULL, "ph_jget of null is NULL");
	ok(ph_jget(o, "missing") == NULL, "ph_jget of a missing key");
	ok(ph_jget(ph_jget(o, "s"), "x") == NULL, "ph_jget on a string");
	ok(ph_jget(NULL, "x") == NULL, "ph_jget on NULL");
	json_object_put(o);
}

/* Legacy batches: served for 2025-03-26 and 2024-11-05 (the header, an
 * initialize in the batch, or neither), refused for later versions. */
static void
test_batch(void)
{
	static const char mixed[] =
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
		"{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"no/such\"},7]";
	static const char pings[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]";
	static const char notes[] = "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]";
	static const char init06[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		"\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}]";
	char big[8192];
	size_t at = 0;

	serve_http(mixed, "HTTP_MCP_PROTOCOL_VERSION", "2025-03-26");
	is_int(F.status, 200, "batch 2025-03-26: HTTP 200");
	ok(json_object_is_type(F.json, json_type_array) && json_object_array_length(F.json) == 3,
	   "batch: one answer per request, none for the notification");
	if (json_object_is_type(F.json, json_type_array) && json_object_array_length(F.json) == 3) {
		struct json_object *a = json_object_array_get_idx(F.json, 0);
		struct json_object *b = json_object_array_get_idx(F.json, 1);
		struct json_object *c = json_object_array_get_idx(F.json, 2);
		ok(jpath(a, "result", (const char *)NULL) != NULL, "batch: the ping answered first");
		is_int(json_object_get_int(jpath(b, "error", "code", (const char *)NULL)), -32601,
		       "batch: unknown method -32601 in its place");
		is_str(json_object_get_string(jpath(b, "id", (const char *)NULL)), "b", "batch: with its id");
		is_int(json_object_get_int(jpath(c, "error", "code", (const char *)NULL)), -32600,
		       "batch: a non-object entry is -32600");
	}
	serve_http(pings, "HTTP_MCP_PROTOCOL_VERSION", "2024-11-05");
	ok(json_object_is_type(F.json, json_type_array), "batch 2024-11-05 served");
	serve_http(pings);
	ok(json_object_is_type(F.json, json_type_array), "batch without the header: 2025-03-26");
	serve_http(notes);
	is_int(F.status, 202, "batch of notifications only: 202");
	serve_http(pings, "HTTP_MCP_PROTOCOL_VERSION", "2025-06-18");
	expect(400, -32600, "null", "batch from 2025-06-18");
	serve_http(pings, "HTTP_MCP_PROTOCOL_VERSION", "2025-11-25");
	expect(400, -32600, "null", "batch from 2025-11-25");
	serve_http(pings, MODERN_HDRS("ping"));
	expect(400, -32600, "null", "batch with the 2026-07-28 header");
	serve_http(init06);
	expect(400, -32600, "null", "batch whose initialize asks for 2025-06-18");
	serve_http("[" DISCOVER "]");
	expect(400, -32600, "null", "batch holding a 2026-07-28 request");
	serve_stdio(pings);
	ok(json_object_is_type(F.json, json_type_array), "stdio: a batch is 2025-03-26");
	serve_stdio("[" DISCOVER "]");
	expect(0, -32600, "null", "stdio: a modern batch");
	/* limits.batch_max (100 by default) */
	big[at++] = '[';
	for (int i = 0; i < 101; i++)
		at += (size_t)snprintf(big + at, sizeof big - at, "%s{\"jsonrpc\":\"2.0\",\"id\":%d,"
				       "\"method\":\"ping\"}", i ? "," : "", i);
	snprintf(big + at, sizeof big - at, "]");
	serve_http(big);
	expect(400, -32600, "null", "a batch over limits.batch_max");
}

int
main(void)
{
	srv = make_server("");
	test_http_method();
	test_origin_host();
	test_content_type();
	test_body_size();
	test_parse();
	test_shape();
	test_batch();
	test_notifications();
	test_meta();
	test_headers();
	test_mcp_name();
	test_decode();
	test_results();
	test_legacy();
	test_stdio();
	test_gone();
	test_notify();
	test_pagination();
	test_pagination_keys();
	test_jget();
	fake_reset();
	ok(!session_id_wrong, "only the answers to a legacy initialize over HTTP carried Mcp-Session-Id, "
	   "and each did");
	ph_server_free(srv);
	for (size_t i = 0; i < ngarbage; i++)
		free(garbage[i]);
	return tap_done();
}
