/* test_json.c: Phantom's JSON parser and printer (lib/ph_json.c) against
 * RFC 8259 and json-c's values, the kept parse of params._meta (the memo),
 * U+0000 in member names, and the member lookups. */
#include "first.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>

/* The text ph_json_parse makes of lit (depth 8) and prints back with
 * ph_json_write, or "refused". Caller frees. */
static char *
reprint(const char *lit, size_t len)
{
	struct json_object *o = NULL;
	struct ph_buf b;
	if (!ph_json_parse(lit, len, 8, &o))
		return strdup("refused");
	ph_buf_init(&b);
	ph_json_write(&b, o);
	ph_buf_addc(&b, '\0');
	json_object_put(o);
	return b.data;
}

/* ph_json.c: the parser, on what RFC 8259 says and where json-c's values
 * have their own ways, and the printer against json-c's. */
static void
test_json_parser(void)
{
	static const struct {
		const char *in, *out, *what;
	} cases[] = {
		{" {\"a\" : [1, -0, 1.50, 1E5] } ", "{\"a\":[1,0,1.50,1E5]}", "numbers print as written"},
		{"99999999999999999999", "18446744073709551615", "an integer past uint64 clamps as json-c's did"},
		{"-99999999999999999999", "-9223372036854775808", "and below int64"},
		{"9223372036854775808", "9223372036854775808", "past INT64_MAX: uint64"},
		{"\"\\ud83d\\ude00\\ud800x\\udc00\"", "\"\xf0\x9f\x98\x80\xef\xbf\xbdx\xef\xbf\xbd\"",
		 "a surrogate pair combines, a lone surrogate is U+FFFD"},
		{"\"\\u0000\\u001f\\/\\b\x7f\"", "\"\\u0000\\u001f/\\b\x7f\"", "control characters print escaped"},
		{"{\"b\":1,\"a\":2,\"b\":3}", "{\"b\":3,\"a\":2}", "a repeated name: the last value, at the first place"},
		{"[[1],[],{}]", "[[1],[],{}]", "nested and empty containers"},
		{"1.", "refused", "\"1.\" is not a number"},
		{"-01", "refused", "nor is \"-01\""},
		{"01", "refused", "nor \"01\""},
		{"[1,]", "refused", "a trailing comma"},
		{"NaN", "refused", "NaN"},
		{"\"\t\"", "refused", "a raw tab in a string"},
		{"\"\xc0\xae\"", "refused", "overlong UTF-8 in a string"},
		{"\"\xed\xa0\x80\"", "refused", "a surrogate written as UTF-8"},
		{"1 2", "refused", "two values"},
		{"{'a':1}", "refused", "a member name in single quotes"},
		{"{\"id\":1,\"x\":2,\"id\":3}", "{\"id\":3,\"x\":2}", "a repeated common name, too"},
		{"{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"a\":0,\"i\":1}",
		 "{\"a\":0,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":1}",
		 "and in an object past eight members"},
		{"\f1", "refused", "a form feed is not whitespace"},
		{"\"\\x\"", "refused", "an unknown escape"},
		{"\"ab", "refused", "a string cut short"},
		{"[[[[[[[[1]]]]]]]]", "refused", "a value inside 8 containers, at depth 8"},
		{"[[[[[[[1]]]]]]]", "[[[[[[[1]]]]]]]", "inside 7: the deepest allowed"},
	};
	struct json_object *o = NULL;
	struct ph_buf b;
	bool knul = true;
	for (size_t i = 0; i < PH_ARRAY_LEN(cases); i++) {
		char *got = reprint(cases[i].in, strlen(cases[i].in));
		is_str(got, cases[i].out, "json parse: %s", cases[i].what);
		free(got);
	}
	ok(!ph_json_parse("1\0", 2, 8, &o) && o == NULL, "json parse: a NUL after the value is refused");
	ok(ph_json_parse_ex("{\"a\\u0000b\":1}", 14, 8, &o, &knul) && knul && ph_jget(o, "a") != NULL,
	   "json parse: a name holding U+0000 is said, and cut there as json-c did");
	json_object_put(o);
	ok(ph_json_parse_ex("{\"a\":\"\\u0000\"}", 14, 8, &o, &knul) && !knul, "json parse: not in a value");
	json_object_put(o);
	/* values built in C, printed by both printers */
	o = json_object_new_object();
	json_object_object_add(o, "d", json_object_new_double(0.1));
	json_object_object_add(o, "e", json_object_new_double(1e300));
	json_object_object_add(o, "u", json_object_new_uint64(UINT64_MAX));
	json_object_object_add(o, "i", json_object_new_int64(INT64_MIN));
	json_object_object_add(o, "s", json_object_new_string_len("a\0\"\\\n/\x01", 8));
	json_object_object_add(o, "k\n\"", json_object_new_boolean(0));
	json_object_object_add(o, "n", NULL);
	ph_buf_init(&b);
	ph_json_write(&b, o);
	ph_buf_addc(&b, '\0');
	is_str(b.data, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	       "json write: values built in C print as json-c prints them");
	ph_buf_free(&b);
	json_object_put(o);
}

/* ph_json.c: a kept value changed in place, each way its print could
 * change, is not used again: the next parse reads the text itself. */
static void
test_json_memo_changed(void)
{
	static const char r[] = "{\"params\":{\"_meta\":{\"s\":\"abc\",\"n\":5,\"d\":1.5,\"t\":true,"
				"\"a\":[1,{\"k\":null}],\"o\":{\"x\":\"y\"}}}}";
	static const char *what[] = {"a string",	   "an integer",      "a double",
				     "a boolean",	   "an array element", "a name (one gone, another come)",
				     "a member's value", "a nested null",   "nothing"};
	struct ph_json_memo m = {.key = "_meta", .level = 2};
	struct json_object *plain = NULL;
	bool knul;
	ok(ph_json_parse(r, sizeof r - 1, 8, &plain), "json memo: the document reads");
	for (int w = 0; w < 9; w++) {
		struct json_object *c = NULL, *kept, *o, *got;
		unsigned long hits;
		bool read = ph_json_parse_memo(r, sizeof r - 1, 8, &c, &knul, &m);
		json_object_put(c);
		kept = m.obj;
		hits = m.hits;
		o = ph_jget(kept, "o");
		switch (w) {
		case 0: json_object_set_string(ph_jget(kept, "s"), "abd"); break;
		case 1: json_object_set_int(ph_jget(kept, "n"), 6); break;
		case 2: json_object_set_double(ph_jget(kept, "d"), 2.5); break;
		case 3: json_object_set_boolean(ph_jget(kept, "t"), 0); break;
		case 4: json_object_array_put_idx(ph_jget(kept, "a"), 0, json_object_new_int(2)); break;
		case 5:
			json_object_object_del(o, "x");
			ph_jset(o, "z", json_object_new_string("y"));
			break;
		case 6: ph_jset(o, "x", json_object_new_string("q")); break;
		case 7: ph_jset(json_object_array_get_idx(ph_jget(kept, "a"), 1), "k", json_object_new_int(0)); break;
		default: break;
		}
		c = NULL;
		read = read && kept != NULL && ph_json_parse_memo(r, sizeof r - 1, 8, &c, &knul, &m);
		got = ph_jget(ph_jget(c, "params"), "_meta");
		if (w == 8)
			ok(read && got == kept && m.hits == hits + 1, "json memo: %s changed: the kept value is used",
			   what[w]);
		else
			ok(read && got != kept && m.hits == hits &&
				   json_object_equal(got, ph_jget(ph_jget(plain, "params"), "_meta")),
			   "json memo: %s changed in the kept value: the text is read again", what[w]);
		json_object_put(c);
	}
	json_object_put(plain);
	ph_json_memo_free(&m);
}

/* ph_json.c: the memo of a member's value from one parse to the next. */
static void
test_json_memo(void)
{
	struct ph_json_memo m = {.key = "_meta", .level = 2};
	static const char r1[] = "{\"id\":1,\"params\":{\"name\":\"x\",\"_meta\":{\"v\":\"1\",\"c\":{}}}}";
	static const char r2[] = "{\"id\":2,\"params\":{\"_meta\":{\"v\":\"1\",\"c\":{}},\"name\":\"y\"}}";
	static const char r3[] = "{\"id\":3,\"params\":{\"_meta\":{\"v\":\"2\",\"c\":{}}}}";
	static const char bad[] = "{\"params\":{\"_meta\":{\"v\":\"2\",\"c\":{}}x}}";
	static const char nul[] = "{\"params\":{\"_meta\":{\"a\\u0000b\":1}}}";
	struct json_object *a = NULL, *b = NULL, *c = NULL, *meta;
	bool knul = true;
	char *txt;
	ok(ph_json_parse_memo(r1, sizeof r1 - 1, 8, &a, &knul, &m) && !knul && m.hits == 0 && m.obj != NULL,
	   "json memo: the first _meta is read and kept");
	ok(ph_json_parse_memo(r2, sizeof r2 - 1, 8, &b, &knul, &m) && m.hits == 1 &&
		   ph_jget(ph_jget(b, "params"), "_meta") == ph_jget(ph_jget(a, "params"), "_meta") &&
		   strcmp(ph_jstr(ph_jget(b, "params"), "name"), "y") == 0 &&
		   json_object_get_int(ph_jget(b, "id")) == 2,
	   "json memo: the same _meta text again is the kept value, the rest read as it is");
	json_object_put(a);
	json_object_put(b);
	/* the kept value changed by someone who held it: read again */
	meta = m.obj;
	ph_jset(meta, "x", json_object_new_int(7));
	ok(ph_json_parse_memo(r2, sizeof r2 - 1, 8, &b, &knul, &m) && m.hits == 1 &&
		   ph_jget(ph_jget(ph_jget(b, "params"), "_meta"), "x") == NULL,
	   "json memo: a kept value that was changed since is not used");
	json_object_put(b);
	ok(ph_json_parse_memo(r3, sizeof r3 - 1, 8, &c, &knul, &m) && m.hits == 1 &&
		   strcmp(ph_jstr(ph_jget(ph_jget(c, "params"), "_meta"), "v"), "2") == 0,
	   "json memo: another _meta is read (and kept in its place)");
	json_object_put(c);
	/* what follows the kept text is still read and checked */
	ok(!ph_json_parse_memo(bad, strlen(bad), 8, &c, &knul, &m) &&
		   c == NULL && m.hits == 2,
	   "json memo: bytes after a kept _meta that are not JSON are refused");
	/* the depth limit of the parse holds */
	ok(!ph_json_parse_memo(r3, sizeof r3 - 1, 3, &c, &knul, &m) && c == NULL,
	   "json memo: a kept value too deep for this parse is refused");
	ok(ph_json_parse_memo(nul, strlen(nul), 8, &c, &knul, &m) && knul,
	   "json memo: a name holding U+0000 is said when read");
	json_object_put(c);
	knul = false;
	ok(ph_json_parse_memo(nul, strlen(nul), 8, &c, &knul, &m) && knul &&
		   m.hits == 3,
	   "json memo: and when taken from the memo");
	json_object_put(c);
	/* only the member at its level, only objects */
	ok(ph_json_parse_memo("{\"_meta\":{\"v\":1}}", strlen("{\"_meta\":{\"v\":1}}"), 8, &c, &knul, &m) &&
		   m.hits == 3 &&
		   json_object_get_int(ph_jget(ph_jget(c, "_meta"), "v")) == 1,
	   "json memo: a member of that name at another level is read as any other");
	json_object_put(c);
	txt = ph_xasprintf("{\"params\":{\"_meta\":{\"v\":\"%0*d\"}}}", PH_JSON_MEMO_MAX, 0);
	ok(ph_json_parse_memo(txt, strlen(txt), 8, &c, &knul, &m) && m.obj != ph_jget(ph_jget(c, "params"), "_meta"),
	   "json memo: a value longer than PH_JSON_MEMO_MAX is not kept");
	json_object_put(c);
	free(txt);
	ph_json_memo_free(&m);
}

/* ph_json.c: U+0000 in keys and strings (json-c cuts keys at the NUL);
 * ph_mime.c: RFC 3629 as request bodies are held to it. */
static void
test_json_nul(void)
{
#define KN(lit) ph_json_key_nul(lit, sizeof lit - 1)
	struct json_object *o = NULL;
	char *p;
	ok(KN("{\"a\\u0000b\":1}"), "key NUL: an escaped U+0000 in a key");
	ok(KN("[{\"x\":{\"\\u0000\" \n : 1}}]"), "key NUL: nested, whitespace before the colon");
	ok(!KN("{\"a\":\"b\\u0000c\"}"), "key NUL: not in a value");
	ok(!KN("{\"a\\\\u0000\":1}"), "key NUL: an escaped backslash followed by u0000 is not one");
	ok(KN("{\"a\\u00001\":1}"), "key NUL: \\u0000 followed by more text still counts");
	ok(!KN("{\"\\u0000"), "key NUL: text cut short is read safely");
	ok(ph_json_parse("\"a\\u0000b\"", 10, 4, &o) && ph_jstr_nul(o), "jstr NUL: a value holding U+0000");
	json_object_put(o);
	ok(ph_json_parse("\"ab\"", 4, 4, &o) && !ph_jstr_nul(o), "jstr NUL: one without");
	json_object_put(o);
	ok(!ph_jstr_nul(NULL), "jstr NUL: no value");
	{
		static const char doc[] = "{\"a\":\"x\\u0000y\",\"b\":\"x\\ty\",\"c\":\"x\x7fy\",\"d\":\"caf\xc3\xa9\",\"e\":1}";
		ok(ph_json_parse(doc, sizeof doc - 1, 4, &o), "jtext: an object parses");
	}
	ok(ph_jtext(o, "a") == NULL, "jtext: a value holding U+0000 is no text");
	ok(ph_jtext(o, "b") == NULL && ph_jtext(o, "c") == NULL, "jtext: nor one holding a tab or DEL");
	is_str(ph_jtext(o, "d"), "caf\xc3\xa9", "jtext: UTF-8 text is text");
	ok(ph_jtext(o, "e") == NULL && ph_jtext(o, "f") == NULL, "jtext: a number or no member is no text");
	json_object_put(o);
	ok(!ph_utf8_valid("\xc0\xae", 2) && !ph_utf8_valid("\xe0\x80\xaf", 3), "utf8: overlong forms refused");
	ok(!ph_utf8_valid("\xed\xa0\x80", 3) && !ph_utf8_valid("\xf4\x90\x80\x80", 4),
	   "utf8: surrogates and code points past U+10FFFF refused");
	ok(ph_utf8_valid("\xf4\x8f\xbf\xbf\xc3\xa9", 6), "utf8: U+10FFFF and U+00E9 accepted");
	p = ph_utf8_repair("a\xc0\xae\xc3\xa9\xe2\x82");
	is_str(p, "a??\xc3\xa9??", "utf8 repair: bad bytes become '?', a character cut short too");
	free(p);
#undef KN
}

/* ph_base64url_decode of the C string s into buf (16 bytes): the decoded
 * length, or -1. */
static long
b64url(const char *s, unsigned char buf[16])
{
	unsigned char *out;
	size_t len;
	if (ph_base64url_decode(s, strlen(s), &out, &len) != 0)
		return -1;
	memcpy(buf, out, len < 16 ? len : 16);
	free(out);
	return (long)len;
}

/* ph_mime.c: base64url as RFC 7515 section 2 has it (cursors, sealed
 * state, JWS segments): no padding, and one spelling per byte string. */
static void
test_base64url(void)
{
	unsigned char buf[16];
	char *enc;
	is_int(b64url("aGk", buf), 2, "base64url without padding decodes");
	ok(memcmp(buf, "hi", 2) == 0, "... to the right bytes");
	is_int(b64url("-_8", buf), 2, "'-' and '_' are 62 and 63");
	ok(memcmp(buf, "\xfb\xff", 2) == 0, "... to the right bytes");
	is_int(b64url("aGk=", buf), -1, "padding is refused");
	is_int(b64url("a+k", buf), -1, "'+' (base64, not base64url) is refused");
	is_int(b64url("aGk ", buf), -1, "a byte outside the alphabet at the end is refused");
	is_int(b64url("aGkha", buf), -1, "a length of 4k+1 is refused");
	is_int(b64url("aGl", buf), -1, "non-zero unused bits (a second spelling) are refused");
	is_int(b64url("", buf), 0, "empty is empty");
	enc = ph_base64url("\xfb\xff", 2);
	is_str(enc, "-_8", "encoding: the URL-safe alphabet, no padding");
	free(enc);
}

/* ph_jset and ph_jget: json-c's add and lookup, for small objects without
 * hashing and for larger ones with it. */
static void
test_json_members(void)
{
	struct json_object *o = json_object_new_object();
	char name[16];
	bool all = true;
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof name, "m%d", i);
		ph_jset(o, name, json_object_new_int(i));
		for (int j = 0; j <= i; j++) {
			snprintf(name, sizeof name, "m%d", j);
			all = all && json_object_get_int(ph_jget(o, name)) == j;
		}
		all = all && ph_jget(o, "m") == NULL && ph_jget(o, "m12") == NULL && ph_jget(o, "") == NULL;
	}
	ok(all, "json members: each found by name, at every size, and no other");
	{
		/* ph_jget_ex says a member is there, null or not, small or large */
		struct json_object *small = json_object_new_object(), *v = o;
		ph_jset(small, "n", NULL);
		ok(ph_jget_ex(small, "n", &v) && v == NULL, "json members: a null member is there, its value NULL");
		v = o;
		ok(!ph_jget_ex(small, "x", &v) && v == NULL, "json members: an absent one is not, its value NULL");
		ph_jset(o, "nul", NULL);
		ok(ph_jget_ex(o, "nul", NULL) && !ph_jget_ex(o, "none", NULL) && ph_jhas(o, "nul"),
		   "json members: the same in an object of 13 members");
		struct json_object *one = json_object_new_int(1);
		v = o;
		ok(!ph_jget_ex(one, "n", &v) && v == NULL && !ph_jget_ex(NULL, "n", NULL),
		   "json members: not an object: nothing is there");
		json_object_object_del(o, "nul");
		json_object_put(small);
		json_object_put(one);
	}
	ph_jset(o, "m3", json_object_new_int(30));
	ph_jset(o, "text", json_object_new_string("t"));
	ph_jset(o, "text", json_object_new_string("u"));
	is_str(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	       "{\"m0\":0,\"m1\":1,\"m2\":2,\"m3\":30,\"m4\":4,\"m5\":5,\"m6\":6,\"m7\":7,\"m8\":8,"
	       "\"m9\":9,\"m10\":10,\"m11\":11,\"text\":\"u\"}",
	       "json members: set again, a member keeps its place");
	json_object_put(o);
}

/* The params._meta of a parsed request (NULL: none). */
static struct json_object *
meta_of(struct json_object *doc)
{
	return ph_jget(ph_jget(doc, "params"), "_meta");
}

/* PHANTOM_FAST_PATHS=off (ph_fast_paths false): the memo is left aside and
 * each _meta parsed anew; members added without the kept hashes are found
 * by json-c's own lookup, by their hash; back on, the memo is used again. */
static void
test_json_plain(void)
{
	static const char r[] = "{\"id\":1,\"params\":{\"_meta\":{\"progressToken\":\"t\",\"clientInfo\":{}}}}";
	static const char *const names[] = {"content", "isError", "_meta", "structuredContent", "other"};
	struct ph_json_memo m = {.key = "_meta", .level = 2};
	struct json_object *a = NULL, *b = NULL, *o, *v;
	bool knul, found = true;
	ph_fast_paths = false;
	ok(ph_json_parse_memo(r, sizeof r - 1, 8, &a, &knul, &m) &&
		   ph_json_parse_memo(r, sizeof r - 1, 8, &b, &knul, &m) && m.hits == 0 && m.obj == NULL &&
		   meta_of(a) != NULL && meta_of(a) != meta_of(b) &&
		   strcmp(json_object_to_json_string(meta_of(a)), json_object_to_json_string(meta_of(b))) == 0,
	   "json plain: the memo off, the same _meta is parsed anew, not kept");
	found = json_object_object_get_ex(a, "params", &v) && json_object_object_get_ex(v, "_meta", &v) &&
		json_object_object_get_ex(v, "progressToken", &v) && strcmp(json_object_get_string(v), "t") == 0;
	json_object_put(a);
	json_object_put(b);
	o = json_object_new_object();
	for (size_t i = 0; i < PH_ARRAY_LEN(names); i++)
		ph_jset(o, names[i], json_object_new_int((int)i));
	for (size_t i = 0; i < PH_ARRAY_LEN(names); i++)
		found = found && json_object_object_get_ex(o, names[i], &v) && json_object_get_int(v) == (int)i &&
			ph_jget(o, names[i]) == v;
	ok(found && json_object_object_length(o) == 5,
	   "json plain: the kept hashes off, json-c finds every member, parsed or set, by its hash");
	json_object_put(o);
	ph_fast_paths = true;
	ok(ph_json_parse_memo(r, sizeof r - 1, 8, &a, &knul, &m) &&
		   ph_json_parse_memo(r, sizeof r - 1, 8, &b, &knul, &m) && m.hits == 1 && meta_of(a) == meta_of(b),
	   "json plain: back on, the memo keeps the _meta again");
	json_object_put(a);
	json_object_put(b);
	ph_json_memo_free(&m);
}

int
main(void)
{
	test_json_parser();
	test_json_memo();
	test_json_memo_changed();
	test_json_members();
	test_json_nul();
	test_base64url();
	test_json_plain();
	return tap_done();
}
