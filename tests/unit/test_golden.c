/* test_golden.c: every golden case (each .json file in tests/golden) served
 * through ph_serve() by the fake front, without a web server, one TAP line
 * per case.
 *
 * It follows tests/integration/golden.sh, which sends the same cases through
 * nginx and phantom-fcgi --stdio: the same configuration
 * (tests/golden/phantom.yaml), the same request bytes (raw, or the body with
 * a "pad" member of pad x's, else the body as compact JSON), the request
 * headers as the CGI variables a web server passes, and the same checks: the
 * HTTP status; the response compared as JSON (key order and number spelling
 * do not matter, as with jq -S) or, for "response": null, no body at all; no
 * Mcp-Session-Id header but on the result of a legacy initialize (which
 * opens a session); and, for "stdio": true, the same response to the
 * same body as a stdio line. */
#include "first.h"
#include "fake_front.h"
#include "ph_build.h"
#include "ph_conf.h"
#include "ph_core.h"
#include "ph_features.h"
#include "ph_schema.h"
#include "ph_server.h"
#include "ph_util.h"
#include "tap.h"
#include <ctype.h>
#include <glob.h>
#include <stdarg.h>
#include <stdlib.h>

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

/* the largest golden file read */
#define GOLDEN_MAX_FILE (1 << 20)
/* a request header name, as its CGI variable HTTP_NAME */
#define CGI_NAME_MAX 128
/* what the web server of golden.sh (nginx on 127.0.0.1) passes as Host */
#define GOLDEN_HOST "127.0.0.1:8080"

static struct ph_server *srv;
/* why the case being run failed, printed after its TAP line */
static struct ph_buf why;

static void PH_PRINTF(1, 2)
note(const char *fmt, ...)
{
	va_list ap, ap2;
	int n;
	char *line;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	line = ph_xmalloc((size_t)(n > 0 ? n : 0) + 1);
	vsnprintf(line, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
	va_end(ap);
	ph_buf_printf(&why, "#   %s\n", line);
	free(line);
}


static const char *
text_of(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* The request bytes of a case, as golden.sh's body_of builds them: the raw
 * string, or the body (with "pad": pad x's when the case has pad) as compact
 * JSON. Returns them (caller frees) with their length in *len, or NULL when
 * the case has neither raw nor body. */
static char *
request_of(struct json_object *c, size_t *len)
{
	struct json_object *raw, *body, *pad, *copy = NULL;
	char *out;
	if (json_object_object_get_ex(c, "raw", &raw)) {
		*len = (size_t)json_object_get_string_len(raw);
		return ph_xstrndup(json_object_get_string(raw), *len);
	}
	if (!json_object_object_get_ex(c, "body", &body))
		return NULL;
	if (json_object_object_get_ex(c, "pad", &pad) && json_object_is_type(body, json_type_object)) {
		int n = json_object_get_int(pad);
		char *xs = ph_xmalloc((size_t)(n > 0 ? n : 0) + 1);
		memset(xs, 'x', (size_t)(n > 0 ? n : 0));
		xs[n > 0 ? n : 0] = '\0';
		if (json_object_deep_copy(body, &copy, NULL) != 0) {
			free(xs);
			return NULL;
		}
		json_object_object_add(copy, "pad", json_object_new_string(xs));
		free(xs);
		body = copy;
	}
	out = ph_xstrdup(text_of(body));
	*len = strlen(out);
	json_object_put(copy);
	return out;
}

/* Sets each member of headers ({"Mcp-Method": "ping"}) as the CGI variable
 * a web server makes of it (HTTP_MCP_METHOD). Values go as written: trimming
 * them is the core's business. */
static void
set_headers(struct fake_front *f, struct json_object *headers)
{
	if (!json_object_is_type(headers, json_type_object))
		return;
	json_object_object_foreach(headers, name, value) {
		char cgi[CGI_NAME_MAX];
		size_t n = (size_t)snprintf(cgi, sizeof cgi, "HTTP_%s", name);
		if (n >= sizeof cgi)
			continue;
		for (size_t i = 0; i < n; i++)
			cgi[i] = cgi[i] == '-' ? '_' : (char)toupper((unsigned char)cgi[i]);
		fake_param(f, cgi, json_object_get_string(value));
	}
}

/* Compares what f received with the expected response (JSON null: none).
 * Returns true when they match; otherwise prints why, tagged with front. */
static bool
same_response(struct fake_front *f, struct json_object *want, const char *front)
{
	struct json_object *got;
	if (want == NULL) {
		if (f->out.len == 0)
			return true;
		note("%s: expected no body, got '%s'", front, f->out.data);
		return false;
	}
	if (f->stream_starts > 0 || f->stream_sends > 0) {
		note("%s: expected one JSON response, got a stream of %d messages: %s", front,
		       f->stream_sends, f->out.data ? f->out.data : "");
		return false;
	}
	got = fake_json(f);
	if (got != NULL && ph_json_equal(got, want) /* as jq compares: members in any order, numbers by value */)
		return true;
	note("%s: got      %s", front, got ? text_of(got) : f->out.data ? f->out.data : "(nothing)");
	note("%s: expected %s", front, text_of(want));
	return false;
}

/* True when case c is a legacy initialize answered with a result: over HTTP
 * that answer opens a session (Mcp-Session-Id). */
static bool
opens_session(struct json_object *c)
{
	struct json_object *b = NULL, *m = NULL, *resp = NULL;
	return json_object_object_get_ex(c, "body", &b) && json_object_object_get_ex(b, "method", &m) &&
	       json_object_is_type(m, json_type_string) &&
	       strcmp(json_object_get_string(m), "initialize") == 0 &&
	       json_object_object_get_ex(c, "response", &resp) &&
	       json_object_object_get_ex(resp, "result", NULL);
}

/* Serves the case over HTTP as golden.sh's curl and nginx would send it.
 * Returns true when status, response and headers are as expected. */
static bool
run_http(struct json_object *c, const char *body, size_t len)
{
	struct fake_front f;
	struct json_object *v, *want = NULL;
	const char *method = "POST";
	int want_status = 0;
	bool pass = true;

	if (json_object_object_get_ex(c, "http_method", &v) && json_object_is_type(v, json_type_string))
		method = json_object_get_string(v);
	if (json_object_object_get_ex(c, "status", &v))
		want_status = json_object_get_int(v);
	json_object_object_get_ex(c, "response", &want);

	fake_init(&f, true);
	if (strcmp(method, "GET") == 0) {
		/* curl's GET: no body, no Content-Type */
		fake_param(&f, "REQUEST_METHOD", "GET");
	} else {
		fake_post(&f, body, len);
		fake_param(&f, "REQUEST_METHOD", method);
		if (json_object_object_get_ex(c, "content_type", &v))
			fake_param(&f, "CONTENT_TYPE", json_object_get_string(v));
		fake_param(&f, "HTTP_ACCEPT", "application/json, text/event-stream");
	}
	fake_param(&f, "HTTP_HOST", GOLDEN_HOST);
	set_headers(&f, json_object_object_get_ex(c, "headers", &v) ? v : NULL);
	fake_serve(&f, srv);

	if (f.status != want_status) {
		note("http: status %d, expected %d", f.status, want_status);
		pass = false;
	}
	if (!same_response(&f, want, "http"))
		pass = false;
	if (f.session_id != opens_session(c)) {
		note(f.session_id ? "http: the response carried Mcp-Session-Id"
				  : "http: the initialize result carried no Mcp-Session-Id");
		pass = false;
	}
	fake_free(&f);
	return pass;
}

/* Serves the case's body as one stdio line. Returns true when the answer is
 * the expected response (or, for null, nothing). */
static bool
run_stdio(struct json_object *c, const char *body, size_t len)
{
	struct fake_front f;
	struct json_object *want = NULL;
	bool pass;
	/* stdio may answer otherwise than HTTP without a hub (it watches the
	 * files of resource subscriptions itself): stdio_response then */
	if (!json_object_object_get_ex(c, "stdio_response", &want))
		json_object_object_get_ex(c, "response", &want);
	/* golden.sh writes the body and a newline: one line, or the stdio
	 * front would see several requests */
	if (memchr(body, '\n', len) != NULL) {
		note("stdio: the request holds a newline; a stdio case must be one line");
		return false;
	}
	fake_init(&f, false);
	fake_body(&f, body, len);
	if (len > 0) /* the stdio front skips empty lines */
		fake_serve(&f, srv);
	/* each case is a stdio process of its own, as golden.sh runs it: no
	 * session (initialize) is left for the next */
	ph_subscriptions_forget();
	pass = same_response(&f, want, "stdio");
	fake_free(&f);
	return pass;
}

/* Runs one golden file. Returns true when every check of it passes. */
static bool
run_case(const char *path, struct json_object *c)
{
	struct json_object *v;
	char *body;
	size_t len = 0;
	bool pass;
	if (!json_object_is_type(c, json_type_object) || !json_object_object_get_ex(c, "status", NULL) ||
	    !json_object_object_get_ex(c, "response", NULL)) {
		note("%s: not a golden case (an object with status and response)", path);
		return false;
	}
	body = request_of(c, &len);
	if (body == NULL) {
		note("%s: neither raw nor body", path);
		return false;
	}
	pass = run_http(c, body, len);
	if (json_object_object_get_ex(c, "stdio", &v) && json_object_get_boolean(v))
		pass = run_stdio(c, body, len) && pass;
	free(body);
	return pass;
}

static void
test_cases(const char *top)
{
	char *pattern = ph_xasprintf("%s/tests/golden/*.json", top);
	glob_t g;
	int rc = glob(pattern, 0, NULL, &g);
	if (!ok(rc == 0 && g.gl_pathc > 0, "golden cases found in %s", pattern)) {
		free(pattern);
		if (rc == 0)
			globfree(&g);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i], *slash = strrchr(path, '/');
		char *text = NULL, *name = ph_xstrdup(slash ? slash + 1 : path);
		struct json_object *c = NULL, *desc;
		size_t len;
		name[strcspn(name, ".")] = '\0';
		if (ph_read_file(path, GOLDEN_MAX_FILE, &text, &len) == 0)
			c = json_tokener_parse(text);
		if (c == NULL)
			note("%s: not readable as JSON", path);
		ok(c != NULL && run_case(path, c), "%s: %s", name,
		   c && json_object_object_get_ex(c, "description", &desc) ? json_object_get_string(desc)
									 : "(unreadable golden file)");
		if (why.len > 0)
			fputs(why.data, stdout);
		ph_buf_reset(&why);
		json_object_put(c);
		free(text);
		free(name);
	}
	globfree(&g);
	free(pattern);
	ph_buf_free(&why);
}

/* After every case the server still answers a plain discover. */
static void
test_still_serving(void)
{
	static const char discover[] =
		"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"server/discover\",\"params\":{\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"" PH_MODERN_VERSION "\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	struct fake_front f;
	struct json_object *res;
	fake_init(&f, true);
	fake_post(&f, discover, strlen(discover));
	fake_param(&f, "HTTP_MCP_PROTOCOL_VERSION", PH_MODERN_VERSION);
	fake_param(&f, "HTTP_MCP_METHOD", "server/discover");
	fake_serve(&f, srv);
	res = fake_json(&f);
	ok(f.status == 200 && ph_jget(res, "result") != NULL, "the server still serves after every golden case");
	fake_free(&f);
}

int
main(void)
{
	const char *env = getenv("top_srcdir");
	const char *top = env && *env ? env : TOP_SRCDIR;
	char *conf_path = ph_xasprintf("%s/tests/golden/phantom.yaml", top);
	struct ph_conf_problems p = {0};
	struct ph_config *c = ph_conf_load(conf_path, &p);
	srv = c ? ph_server_new(c, &p) : NULL;
	for (size_t i = 0; i < p.n; i++)
		printf("# %s\n", p.v[i]);
	ph_conf_problems_free(&p);
	if (srv == NULL) {
		printf("Bail out! cannot build the golden server from %s\n", conf_path);
		free(conf_path);
		return 1;
	}
	free(conf_path);
	test_cases(top);
	test_still_serving();
	ph_server_free(srv);
	return tap_done();
}
