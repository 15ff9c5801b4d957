/* test_apps.c: the apps: section (ph_app_conf.c). The origin rule of the
 * csp lists, the scan of the HTML for relative references, and what a
 * loaded configuration makes of an app: its resource (uri, versioned uri,
 * MIME type, _meta.ui) and its tools' _meta. */
#include "first.h"
#include "ph_app_conf.c" /* its static functions */
#include "ph_build.h"
#include "tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define LABEL63 "abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abc"

static void
origins(void)
{
	static const char *const good[] = {"https://api.example.com", "http://localhost:8080", "wss://live.example.com:8443",
					   "ws://127.0.0.1", "https://*.cdn.example.com", "HTTPS://Example.COM",
					   "https://xn--bcher-kva.example", "http://a-1.b2:1", "https://x.example:65535",
					   "https://" LABEL63 ".example"};
	static const struct { const char *o, *why; } bad[] = {
		{"api.example.com", "starts with"}, {"ftp://x.example", "starts with"}, {"https://", "names a host"},
		{"https://:443", "names a host"}, {"https://x.example/", "no path"}, {"https://x.example?q=1", "no path"},
		{"https://x.example#f", "no path"}, {"'self'", "starts with"}, {"https://x.example'", "no quote"},
		{"https://\"x\"", "no quote"}, {"https://a.example b.example", "no space"},
		{"https://a.example;", "no space, ';'"}, {"https://a.example,https://b", "no space"},
		{"https://a*.example", "first label"}, {"https://*", "first label"},
		{"https://x.example\t", "no control character"}, {"https://x.example\x7f", "no control"},
		{"https://a\xe2\x80\xa8" "b.example", "punycode A-label"}, {"https://b\xc3\xbc" "cher.example", "punycode"},
		{"https://a\\b.example", "labels of letters"}, {"https://a%0ab.example", "labels of letters"},
		{"https://a<b>.example", "labels of letters"}, {"https://[::1]:80", "labels of letters"},
		{"https://user@x.example", "no user name"}, {"https://user:pw@x.example", "no user name"},
		{"https://x.example:99999", "1 to 65535"}, {"https://x.example:0", "1 to 65535"},
		{"https://x.example:", "1 to 65535"}, {"https://x.example:8o", "1 to 65535"},
		{"https://x.example:+80", "1 to 65535"}, {"https://x.example:*", "1 to 65535"},
		{"https://a..b", "no empty label"}, {"https://.a.example", "no empty label"},
		{"https://a.example.", "no empty label"}, {"https://*..a", "no empty label"},
		{"https://-a.example", "start or end with '-'"}, {"https://a-.example", "start or end with '-'"},
		{"https://" LABEL63 "x.example", "at most 63"}, {"https://*.:443", "names a host"}};
	for (size_t i = 0; i < PH_ARRAY_LEN(good); i++)
		ok(origin_problem(good[i]) == NULL, "origin %s is allowed", good[i]);
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		const char *why = origin_problem(bad[i].o);
		ok(why != NULL && strstr(why, bad[i].why) != NULL, "origin %s is refused (%s)", bad[i].o,
		   why ? why : "allowed");
	}
	{
		char o[8 + 4 * 64 + 1] = "https://";
		for (int i = 0; i < 4; i++)
			strcat(o, i ? "." LABEL63 : LABEL63);
		ok(origin_problem(o) != NULL && strstr(origin_problem(o), "at most 253") != NULL,
		   "a host of 255 characters is refused");
	}
}

/* The line and what of ph_app_relative_ref on html. */
static void
scan_is(const char *html, int line, const char *what, const char *desc)
{
	char got[300] = "";
	int at = ph_app_relative_ref(html, strlen(html), got, sizeof got);
	is_int(at, line, "%s: line", desc);
	if (line != 0)
		is_str(got, what, "%s: what", desc);
}

static void
scans(void)
{
	ok(absolute_ref("https://x", 9) && absolute_ref("data:,", 6) && absolute_ref("blob:x", 6),
	   "https:, data: and blob: references are absolute");
	ok(!absolute_ref("x.js", 4) && !absolute_ref("//cdn.example/x.js", 18) && !absolute_ref("", 0) &&
	   !absolute_ref("/a:b", 4) && !absolute_ref("1x:y", 4), "paths and //host references are not");
	scan_is("<!doctype html><script>let a = 1;</script><link rel=icon href=\"data:,\">", 0, NULL,
		"inline script, data: icon");
	scan_is("<html>\n<head>\n<link rel=\"stylesheet\" href=\"app.css\">", 3, "<link href=\"app.css\">",
		"a relative stylesheet on line 3");
	scan_is("<SCRIPT type=module SRC=app.js></SCRIPT>", 1, "<script src=\"app.js\">",
		"upper case, unquoted");
	scan_is("<script src = 'https://x.example/a.js'></script>\n<script\nsrc=\"//cdn/b.js\">", 2,
		"<script src=\"//cdn/b.js\">", "a protocol-relative reference after an absolute one");
	scan_is("<!-- <script src=\"a.js\"></script>\n -->\n<p>", 0, NULL, "a commented-out script");
	scan_is("<!--\n\n-->\n<script src=b.js>", 4, "<script src=\"b.js\">", "lines counted through a comment");
	scan_is("<scripts src=a.js><linked href=b.css><script data-src=c.js></script>", 0, NULL,
		"other tags and attributes");
	scan_is("<link href=\"x.css", 1, "<link href=\"x.css\">", "an unterminated tag at the end");
	scan_is("<!-- never closed <script src=a.js>", 0, NULL, "an unterminated comment");
}

/* Writes text to dir/name. */
static void
put(const char *dir, const char *name, const char *text)
{
	char *p = ph_path_join(dir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	free(p);
}

static void
loaded(void)
{
	static const char *const files[] = {"a.html", "b.html", "t.sh", "p.yaml"};
	char tmpl[] = "/tmp/test_apps.XXXXXX", *dir = mkdtemp(tmpl), *conf, *sh;
	struct ph_conf_problems probs = {0};
	struct ph_server *s;
	struct ph_registry *reg;
	struct ph_resource *v;
	const char *uri;
	put(dir, "a.html", "<!doctype html><p>a</p>\n");
	put(dir, "b.html", "<!doctype html><p>b</p>\n");
	put(dir, "t.sh", "#!/bin/sh\n");
	sh = ph_path_join(dir, "t.sh");
	chmod(sh, 0755);
	put(dir, "p.yaml", "server: { name: \"My Server/1\" }\n"
			   "apps:\n"
			   "  a: { file: a.html, permissions: [camera], prefers_border: false }\n"
			   "  b: { file: b.html, uri: \"ui://x/b?lang=en\", versioned: true }\n"
			   "  c: { file: b.html, uri: \"ui://x/c\", versioned: true }\n"
			   "tools:\n"
			   "  - { name: t, exec: [./t.sh], app: a, visibility: app, _meta: { k: 1 } }\n");
	conf = ph_path_join(dir, "p.yaml");
	s = ph_server_build(conf, NULL, &probs);
	ok(s != NULL && probs.n == 0, "a configuration with two apps loads (%s)", probs.n ? probs.v[0] : "");
	if (s == NULL)
		goto out;
	reg = s->conf->registry;
	is_int(reg->nresources, 3, "each app is a resource");
	is_str(reg->resources[0]->uri, "ui://My-Server-1/a", "the default uri: ui://<server.name>/<app>, made a host");
	is_str(reg->resources[0]->mime, APP_MIME, "its MIME type");
	is_str(json_object_to_json_string_ext(reg->resources[0]->meta, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	       "{\"ui\":{\"csp\":{},\"permissions\":{\"camera\":{}},\"prefersBorder\":false}}", "its _meta");
	uri = reg->resources[1]->uri;
	ok(strncmp(uri, "ui://x/b?lang=en&v=", 19) == 0 && strlen(uri) == 35, "a versioned uri with a query gets &v=: %s",
	   uri);
	is_str(reg->resources[1]->app_base, "ui://x/b?lang=en", "and remembers the uri before it");
	v = ph_registry_app_version(reg, "ui://x/b?lang=en&v=0123456789abcdef");
	ok(v == reg->resources[1], "another digest of that form finds the app");
	ok(ph_registry_app_version(reg, "ui://x/b?lang=en&v=0123456789abcde") == NULL &&
	   ph_registry_app_version(reg, "ui://x/b?lang=en&v=0123456789abcdef0") == NULL &&
	   ph_registry_app_version(reg, "ui://x/b?lang=en&v=0123456789ABCDEF") == NULL &&
	   ph_registry_app_version(reg, "ui://My-Server-1/a?v=0123456789abcdef") == NULL,
	   "a digest of another length or case, or an app that is not versioned, finds nothing");
	ok(ph_registry_app_version(reg, "ui://x/c?v=0123456789abcdef") == reg->resources[2],
	   "without a query, ?v= and another digest finds the app");
	ok(ph_registry_app_version(reg, "ui://x/c&v=0123456789abcdef") == NULL &&
	   ph_registry_app_version(reg, "ui://x/b?lang=en?v=0123456789abcdef") == NULL,
	   "only the separator its own uri has: no &v= without a query, no ?v= after one");
	is_str(json_object_to_json_string_ext(reg->tools[0]->ui_meta, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	       "{\"k\":1,\"ui\":{\"resourceUri\":\"ui://My-Server-1/a\",\"visibility\":[\"app\"]},"
	       "\"ui/resourceUri\":\"ui://My-Server-1/a\"}", "the tool's _meta: its own, ui and the flat key");
	is_str(json_object_to_json_string_ext(reg->tools[0]->meta, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), "{\"k\":1}",
	       "its own _meta stays as it was, for clients that do not get the apps' metadata");
	ph_server_free(s);
out:
	ph_conf_problems_free(&probs);
	free(conf);
	free(sh);
	for (size_t i = 0; i < PH_ARRAY_LEN(files); i++) {
		char *p = ph_path_join(dir, files[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
}

int
main(void)
{
	origins();
	scans();
	loaded();
	return tap_done();
}
