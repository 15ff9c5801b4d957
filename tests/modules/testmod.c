/* testmod.c: handlers for the integration tests: every content type, every
 * way a module handler can fail, a slow handler that watches the cancelled
 * flag, prompt, resource and completion handlers, the hooks
 * subscriptions.authorize and sessions.on_end, and one that leaks (for
 * the test that a worker's leaks are reported, tests/integration/worker_leaks.sh)
 * and one that crashes its process (tests/integration/request_log.sh). */
#include <phantom.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

PHANTOM_MODULE();

phantom_result *all_content(phantom_call *c, void *u);
phantom_result *fail_null(phantom_call *c, void *u);
phantom_result *tool_error(phantom_call *c, void *u);
phantom_result *bad_output(phantom_call *c, void *u);
phantom_result *good_output(phantom_call *c, void *u);
phantom_result *whoami(phantom_call *c, void *u);
phantom_result *slow(phantom_call *c, void *u);
phantom_result *prompt(phantom_call *c, void *u);
phantom_result *resource(phantom_call *c, void *u);
phantom_result *many_values(phantom_call *c, void *u);
phantom_result *args_echo(phantom_call *c, void *u);
phantom_result *catalog(phantom_call *c, void *u);
phantom_result *even_items(phantom_call *c, void *u);
phantom_result *session_ended(phantom_call *c, void *u);
phantom_result *bad_utf8(phantom_call *c, void *u);
phantom_result *leak(phantom_call *c, void *u);
phantom_result *authenticate(phantom_call *c, void *u);
phantom_result *cached(phantom_call *c, void *u);
phantom_result *crash(phantom_call *c, void *u);

static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

phantom_result *
all_content(phantom_call *c, void *u)
{
	phantom_result *r = phantom_result_new();
	(void)c;
	(void)u;
	phantom_result_text(r, "text block");
	phantom_result_image(r, png, sizeof png, "image/png");
	phantom_result_audio(r, "RIFF", 4, "audio/wav");
	phantom_result_resource_link(r, "test://linked", "linked", "a link", "text/plain");
	phantom_result_embedded(r, "test://embedded", "text/plain", "embedded text", NULL, 0);
	phantom_result_embedded(r, "test://blob", "application/octet-stream", NULL, "\0\1\2", 3);
	return r;
}

phantom_result *
fail_null(phantom_call *c, void *u)
{
	(void)c;
	(void)u;
	return NULL;
}

phantom_result *
tool_error(phantom_call *c, void *u)
{
	(void)c;
	(void)u;
	return phantom_error("the date must be in the future");
}

phantom_result *
bad_output(phantom_call *c, void *u)
{
	phantom_result *r = phantom_result_new();
	(void)c;
	(void)u;
	phantom_result_structured_json(r, "{\"count\":\"many\"}");
	return r;
}

phantom_result *
good_output(phantom_call *c, void *u)
{
	phantom_result *r = phantom_result_new();
	(void)u;
	phantom_result_structured_json(r, phantom_arg_int(c, "n", 1) > 0 ? "{\"count\":2}" : "{\"count\":0}");
	return r;
}

phantom_result *
whoami(phantom_call *c, void *u)
{
	char buf[512];
	const char *p = phantom_call_principal(c);
	(void)u;
	snprintf(buf, sizeof buf, "principal=%s elicitation=%d caps=%s kind=%s/%d", p ? p : "none",
		 phantom_call_has_capability(c, "elicitation"),
		 json_object_to_json_string_ext(phantom_call_client_capabilities(c), JSON_C_TO_STRING_PLAIN),
		 phantom_call_kind(c), (int)phantom_call_kind_id(c));
	return phantom_text(buf);
}

/* Runs for up to 10 s; when it sees the cancelled flag it writes the file
 * named by its "marker" argument, so a test can tell it noticed. */
phantom_result *
slow(phantom_call *c, void *u)
{
	const char *marker = phantom_arg_string(c, "marker", NULL);
	(void)u;
	phantom_progress(c, 1, 0, "started");
	for (int i = 0; i < 100; i++) {
		struct timespec ts = {0, 100000000L};
		nanosleep(&ts, NULL);
		if (phantom_call_cancelled(c)) {
			if (marker) {
				FILE *f = fopen(marker, "w");
				if (f)
					fclose(f);
			}
			return NULL;
		}
	}
	return phantom_text("finished");
}

phantom_result *
prompt(phantom_call *c, void *u)
{
	phantom_result *r = phantom_result_new();
	char buf[256];
	(void)u;
	snprintf(buf, sizeof buf, "Topic: %s", phantom_arg_string(c, "topic", "none"));
	phantom_result_description(r, "from the module");
	phantom_result_text(r, buf);
	phantom_result_role(r, "assistant");
	phantom_result_text(r, "Understood.");
	return r;
}

phantom_result *
resource(phantom_call *c, void *u)
{
	const char *id = phantom_arg_string(c, "id", NULL);
	phantom_result *r = phantom_result_new();
	char buf[256];
	(void)u;
	if (id && strcmp(id, "missing") == 0) {
		phantom_result_not_found(r);
		return r;
	}
	if (id && strcmp(id, "fail") == 0) {
		phantom_result_free(r);
		return NULL;
	}
	snprintf(buf, sizeof buf, "item %s at %s", id ? id : "-", phantom_call_uri(c));
	phantom_result_text(r, buf);
	return r;
}

phantom_result *
many_values(phantom_call *c, void *u)
{
	phantom_result *r = phantom_result_new();
	char buf[32];
	(void)u;
	for (int i = 0; i < 150; i++) {
		snprintf(buf, sizeof buf, "%s%03d", phantom_complete_value(c), i);
		phantom_result_value(r, buf);
	}
	phantom_result_total(r, 150);
	return r;
}

phantom_result *
args_echo(phantom_call *c, void *u)
{
	(void)u;
	return phantom_text(json_object_to_json_string_ext(phantom_call_arguments(c), JSON_C_TO_STRING_PLAIN));
}

/* A resource list (resource_lists:): CATALOG_SIZE studies (default 1000),
 * study://N, paged by its own cursor, the next offset in decimal; the
 * principal and the assigns' plan go into each description. */
phantom_result *
catalog(phantom_call *c, void *u)
{
	const char *cur = phantom_call_cursor(c), *env = getenv("CATALOG_SIZE");
	long long size = env ? atoll(env) : 1000, lim = phantom_call_limit(c);
	long long off = cur ? atoll(cur) : 0, end = off + lim < size ? off + lim : size;
	const char *who = phantom_call_principal(c), *plan = phantom_call_assign(c, "plan", "none");
	struct json_object *page = json_object_new_object(), *arr = json_object_new_array();
	phantom_result *res = phantom_result_new();
	char buf[128];
	(void)u;
	if (phantom_call_kind_id(c) != PHANTOM_KIND_RESOURCE_LIST) {
		phantom_result_free(res);
		json_object_put(arr);
		json_object_put(page);
		return NULL;
	}
	for (long long i = off; i < end; i++) {
		struct json_object *e = json_object_new_object();
		snprintf(buf, sizeof buf, "study://%lld", i);
		json_object_object_add(e, "uri", json_object_new_string(buf));
		snprintf(buf, sizeof buf, "study-%lld", i);
		json_object_object_add(e, "name", json_object_new_string(buf));
		snprintf(buf, sizeof buf, "for %s on %s", who ? who : "anyone", plan);
		json_object_object_add(e, "description", json_object_new_string(buf));
		json_object_object_add(e, "mimeType", json_object_new_string("application/json"));
		json_object_array_add(arr, e);
	}
	json_object_object_add(page, "resources", arr);
	if (end < size) {
		snprintf(buf, sizeof buf, "%lld", end);
		json_object_object_add(page, "nextCursor", json_object_new_string(buf));
	}
	phantom_result_structured_take(res, page);
	return res;
}

/* subscriptions.authorize: of the URIs asked about, those item://N with N
 * even. Another kind than subscription fails, as phantom.h says. */
phantom_result *
even_items(phantom_call *c, void *u)
{
	struct json_object *uris = NULL, *ok, *out;
	phantom_result *res;
	(void)u;
	if (phantom_call_kind_id(c) != PHANTOM_KIND_SUBSCRIPTION)
		return NULL;
	ok = json_object_new_array();
	out = json_object_new_object();
	res = phantom_result_new();
	json_object_object_get_ex(phantom_call_arguments(c), "uris", &uris);
	for (size_t i = 0; i < json_object_array_length(uris); i++) {
		struct json_object *e = json_object_array_get_idx(uris, i), *uri = NULL;
		const char *s;
		if (!json_object_object_get_ex(e, "uri", &uri) || (s = json_object_get_string(uri)) == NULL)
			continue;
		if (strncmp(s, "item://", 7) == 0 && atoll(s + 7) % 2 == 0)
			json_object_array_add(ok, json_object_new_string(s));
	}
	json_object_object_add(out, "allowed", ok);
	phantom_result_structured_take(res, out);
	return res;
}

/* sessions.on_end: appends "KIND/ID PRINCIPAL REASON" to the file
 * ENDED_FILE names. Another kind than session_end fails, as phantom.h
 * says. */
phantom_result *
session_ended(phantom_call *c, void *u)
{
	const char *path = getenv("ENDED_FILE"), *who = phantom_call_principal(c);
	FILE *f;
	(void)u;
	if (phantom_call_kind_id(c) != PHANTOM_KIND_SESSION_END || path == NULL || (f = fopen(path, "a")) == NULL)
		return NULL;
	fprintf(f, "%s/%d %s %s\n", phantom_call_kind(c), (int)phantom_call_kind_id(c), who ? who : "none",
		phantom_arg_string(c, "reason", "none"));
	fclose(f);
	return phantom_result_new();
}

/* Output that is not UTF-8, chosen by the "how" argument: an overlong '.'
 * in a text block, a surrogate in structuredContent, a code point past
 * U+10FFFF in a resource link's name. */
phantom_result *
bad_utf8(phantom_call *c, void *u)
{
	const char *how = phantom_arg_string(c, "how", "text");
	phantom_result *r;
	(void)u;
	if (strcmp(how, "text") == 0)
		return phantom_text("over\xc0\xaelong");
	r = phantom_text("fine");
	if (strcmp(how, "structured") == 0)
		phantom_result_structured_take(r, json_object_new_string("sur\xed\xa0\x80rogate"));
	else
		phantom_result_resource_link(r, "test://x", "big\xf4\x90\x80\x80", NULL, NULL);
	return r;
}

/* The last allocation of leak(), through a volatile so the compiler keeps it. */
static void *volatile leak_sink;

/* Loses 4242 bytes on purpose: a sanitizer build must say so when the
 * worker that ran it leaves. */
phantom_result *
leak(phantom_call *c, void *u)
{
	phantom_result *r = phantom_result_new();
	(void)c;
	(void)u;
	leak_sink = malloc(4242);
	if (leak_sink != NULL)
		memset(leak_sink, 'x', 4242);
	leak_sink = NULL;
	phantom_result_text(r, "leaked");
	return r;
}

/* An authenticator (auth.mode module) keyed by the bearer token:
 *   alice-pro / alice-free  alice with assigns {plan, team, seats}
 *   bob                     bob with alice-pro's assigns
 *   plain                   carol, no assigns
 *   deep / big / list       assigns too deep, too large, not an object
 *   forbid                  403 with a message
 *   null                    the function fails (NULL)
 *   anything else           401 */
phantom_result *
authenticate(phantom_call *c, void *u)
{
	const char *h = phantom_call_header(c, "Authorization");
	const char *tok = h && strncmp(h, "Bearer ", 7) == 0 ? h + 7 : "";
	phantom_result *r;
	char big[6000];
	(void)u;
	if (phantom_call_kind_id(c) != PHANTOM_KIND_AUTH) /* what phantom.h says it is */
		return NULL;
	if (strcmp(tok, "null") == 0)
		return NULL;
	if (strcmp(tok, "forbid") == 0)
		return phantom_auth_deny(403, "not on a weekday");
	if (strcmp(tok, "alice-pro") == 0 || strcmp(tok, "alice-free") == 0 || strcmp(tok, "bob") == 0) {
		r = phantom_auth_allow(strcmp(tok, "bob") == 0 ? "bob" : "alice");
		phantom_result_assigns_take(r, json_tokener_parse(strcmp(tok, "alice-free") == 0
			? "{\"plan\":\"free\",\"team\":\"red\",\"seats\":5}"
			: "{\"plan\":\"pro\",\"team\":\"red\",\"seats\":5}"));
		return r;
	}
	if (strcmp(tok, "plain") == 0)
		return phantom_auth_allow("carol");
	if (strcmp(tok, "deep") == 0) {
		r = phantom_auth_allow("d");
		phantom_result_assigns_take(r, json_tokener_parse("{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":1}}}}}"));
		return r;
	}
	if (strcmp(tok, "big") == 0) {
		struct json_object *o = json_object_new_object();
		memset(big, 'x', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		json_object_object_add(o, "x", json_object_new_string(big));
		r = phantom_auth_allow("b");
		phantom_result_assigns_take(r, o);
		return r;
	}
	if (strcmp(tok, "list") == 0) {
		/* the builder refuses an array: the answer is built by hand */
		r = phantom_result_new();
		phantom_result_structured_json(r, "{\"decision\":\"allow\",\"principal\":\"l\",\"assigns\":[\"pro\"]}");
		return r;
	}
	return phantom_auth_deny(401, NULL);
}

/* A tool or a resource with the cache hints its arguments (or template
 * parameters) "ttl" and "scope" ask for ("-": none), through
 * phantom_result_cache (tests/integration/cache_hints.sh). */
phantom_result *
cached(phantom_call *c, void *u)
{
	const char *ttl = phantom_arg_string(c, "ttl", "-"), *scope = phantom_arg_string(c, "scope", "-");
	phantom_result *r = phantom_result_new();
	(void)u;
	phantom_result_text(r, "cached by the module");
	if (phantom_result_cache(r, strcmp(ttl, "-") == 0 ? -1 : atoll(ttl),
				 strcmp(scope, "-") == 0 ? NULL : scope) != 0)
		phantom_log_server("warning", "phantom_result_cache refused %s %s", ttl, scope);
	return r;
}

/* Crashes the worker: a NULL dereference ("how": "segv"), else abort().
 * Not instrumented by UBSan: a sanitizer build must crash the same way. */
__attribute__((no_sanitize("undefined"))) phantom_result *
crash(phantom_call *c, void *u)
{
	const char *how = phantom_arg_string(c, "how", "abort");
	(void)u;
	if (strcmp(how, "segv") == 0) {
		volatile int *volatile p = NULL;
		*p = 1;
	}
	abort();
}
