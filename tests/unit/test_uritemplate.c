/* test_uritemplate.c: level-1 URI templates: parsing, matching, decoding,
 * and the values that must never reach the file system. */
#include "first.h"
#include "ph_uritemplate.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>

static struct ph_uritemplate *
parse(const char *t)
{
	char err[200];
	return ph_uritemplate_parse(t, err, sizeof err);
}

/* Matches and returns the values joined with '|' (caller frees), or NULL. */
static char *
match(const char *tmpl, const char *uri)
{
	struct ph_uritemplate *t = parse(tmpl);
	char *vals[PH_URITEMPLATE_MAX_VARS];
	struct ph_buf b;
	if (t == NULL)
		return strdup("PARSE");
	if (!ph_uritemplate_match(t, uri, vals)) {
		ph_uritemplate_free(t);
		return NULL;
	}
	ph_buf_init(&b);
	ph_buf_adds(&b, "");
	for (size_t i = 0; i < ph_uritemplate_nvars(t); i++)
		ph_buf_printf(&b, "%s%s", i ? "|" : "", vals[i]);
	ph_uritemplate_vals_free(t, vals);
	ph_uritemplate_free(t);
	return ph_buf_steal(&b);
}

static void
expect(const char *tmpl, const char *uri, const char *want, const char *what)
{
	char *got = match(tmpl, uri);
	is_str(got, want, "%s: %s ~ %s", what, tmpl, uri);
	free(got);
}

int
main(void)
{
	struct ph_uritemplate *t;
	char err[200];

	t = parse("db://{table}/{id}.json");
	ok(t && ph_uritemplate_nvars(t) == 2, "two variables");
	is_str(ph_uritemplate_var(t, 1), "id", "variable names in order");
	ok(ph_uritemplate_find(t, "table") == 0 && ph_uritemplate_find(t, "x") == -1, "find by name");
	ph_uritemplate_free(t);

	ok(ph_uritemplate_parse("x://{+path}", err, sizeof err) == NULL && strstr(err, "level-1"), "{+x} refused: %s", err);
	ok(ph_uritemplate_parse("x://{?q}", err, sizeof err) == NULL, "{?x} refused");
	ok(ph_uritemplate_parse("x://{a*}", err, sizeof err) == NULL, "explode refused");
	ok(ph_uritemplate_parse("x://{a", err, sizeof err) == NULL, "unterminated refused");
	ok(ph_uritemplate_parse("x://a}", err, sizeof err) == NULL, "stray } refused");
	ok(ph_uritemplate_parse("x://{}", err, sizeof err) == NULL, "empty expression refused");
	ok(ph_uritemplate_parse("x://{a}{b}", err, sizeof err) == NULL, "adjacent variables refused (ambiguous)");
	ok(ph_uritemplate_parse("x://{a}/{a}", err, sizeof err) == NULL, "repeated variable refused");

	expect("notes://{name}", "notes://todo", "todo", "simple");
	expect("notes://{name}", "notes://", NULL, "a variable is never empty");
	expect("notes://{name}", "notes://a/b", NULL, "a variable never spans '/'");
	expect("notes://{name}", "other://todo", NULL, "literal prefix must match");
	expect("notes://{name}", "notes://todo?x=1", NULL, "no trailing junk");
	expect("db://{table}/{id}.json", "db://users/42.json", "users|42", "two variables");
	expect("db://{table}/{id}.json", "db://users/a.b.json", "users|a.b", "dots inside a value, longest first");
	expect("db://{table}/{id}.json", "db://users/42.txt", NULL, "suffix must match");
	expect("x://{v}", "x://hello%20world", "hello world", "percent-decoding");
	expect("x://{v}", "x://caf%C3%A9", "caf\xc3\xa9", "UTF-8 escapes");
	expect("x://{v}", "x://a%00b", NULL, "an encoded NUL never matches");
	expect("x://{v}", "x://a%2", NULL, "a broken escape does not match");
	expect("x://{a}-{b}", "x://1-2-3", "1-2|3", "backtracking over a literal that is also a value character");

	/* traversal attempts: what the matcher lets through must still be refused
	 * as a file name */
	{
		char *v = match("files://{name}", "files://..");
		ok(v && !ph_uritemplate_safe_segment(v), "'..' matches but is not a safe file name");
		free(v);
		v = match("files://{name}", "files://..%2F..%2Fetc%2Fpasswd");
		ok(v && strchr(v, '/') && !ph_uritemplate_safe_segment(v), "encoded '/' decodes and is refused");
		free(v);
		v = match("files://{name}", "files://%2Fetc%2Fpasswd");
		ok(v && !ph_uritemplate_safe_segment(v), "an absolute path is refused");
		free(v);
		v = match("files://{name}", "files://a%5Cb");
		ok(v && !ph_uritemplate_safe_segment(v), "encoded backslash is refused");
		free(v);
		v = match("files://{name}", "files://.htaccess");
		ok(v && !ph_uritemplate_safe_segment(v), "hidden files are refused");
		free(v);
		expect("files://{name}", "files://../etc/passwd", NULL, "raw '/' never matches");
		ok(ph_uritemplate_safe_segment("report-2024.txt"), "an ordinary name is safe");
		ok(!ph_uritemplate_safe_segment(""), "an empty name is not");
	}
	{
		/* worst case stays cheap: many variables separated by a character
		 * that values may also contain */
		char uri[PH_URI_MAX + 1];
		int64_t t0 = ph_now_us();
		char *v;
		memset(uri, 'a', sizeof uri - 1);
		memcpy(uri, "x://", 4);
		uri[PH_URI_MAX - 2] = '\0';
		v = match("x://{a}.{b}.{c}.{d}.{e}.{f}.{g}.{h}!", uri);
		ok(v == NULL && ph_now_us() - t0 < 2000000, "pathological match fails fast");
		free(v);
	}
	return tap_done();
}
