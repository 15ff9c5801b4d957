/* test_util.c: bounded number parsing, buffers, paths, trimming, address
 * networks, the shared rate buckets, verification slots and the shared
 * cache of verified tokens. */
#include "first.h"
#include "ph_cidr.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_mime.h"
#include "ph_rate.h"
#include "ph_fcgi_wire.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Appends a FastCGI record (version 1) of type for request id with len
 * bytes of content (zeros) and pad bytes of padding. */
static void
rec(struct ph_buf *b, int type, unsigned id, size_t len, unsigned pad)
{
	unsigned char h[8] = {1, (unsigned char)type, (unsigned char)(id >> 8), (unsigned char)id,
			      (unsigned char)(len >> 8), (unsigned char)len, (unsigned char)pad, 0};
	ph_buf_add(b, h, sizeof h);
	for (size_t i = 0; i < len + pad; i++)
		ph_buf_addc(b, 'x');
}

/* ph_rawfcgi.c: when a request waits whole on its connection (the front
 * then reads it without deadlines). */
static void
test_fcgi_whole(void)
{
	struct ph_buf b;
	const unsigned char *u;
	size_t full;
	bool every_prefix_short = true;
	ph_buf_init(&b);
	rec(&b, 1, 1, 8, 0);      /* FCGI_BEGIN_REQUEST */
	rec(&b, 4, 1, 300, 4);    /* parameters, padded */
	rec(&b, 4, 1, 0, 0);      /* their end */
	rec(&b, 5, 1, 250, 6);    /* body */
	rec(&b, 5, 1, 0, 0);      /* its end */
	full = b.len;
	u = (const unsigned char *)b.data;
	ok(ph_fcgi_request_whole(u, full), "fcgi whole: begin, parameters, body and both ends");
	for (size_t n = 0; n < full; n++)
		if (ph_fcgi_request_whole(u, n))
			every_prefix_short = false;
	ok(every_prefix_short, "fcgi whole: no shorter prefix counts as whole");
	rec(&b, 1, 2, 8, 0); /* the next request's start after it changes nothing */
	ok(ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: bytes after the request");
	ph_buf_reset(&b);
	rec(&b, 9, 0, 20, 0); /* FCGI_GET_VALUES first */
	rec(&b, 1, 7, 8, 0);
	rec(&b, 4, 7, 0, 0);
	rec(&b, 5, 3, 0, 0); /* another request's end of body does not end this one */
	ok(!ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: another id's end of body");
	rec(&b, 5, 7, 0, 0);
	ok(ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: management records before it");
	ph_buf_reset(&b);
	rec(&b, 4, 1, 0, 0); /* ends before any FCGI_BEGIN_REQUEST */
	rec(&b, 5, 1, 0, 0);
	ok(!ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: no FCGI_BEGIN_REQUEST");
	ph_buf_reset(&b);
	rec(&b, 1, 1, 8, 0);
	rec(&b, 4, 1, 0, 0);
	rec(&b, 5, 1, 0, 0);
	b.data[8 + 8] = 2; /* version 2 */
	ok(!ph_fcgi_request_whole((const unsigned char *)b.data, b.len), "fcgi whole: a record not of version 1");
	ph_buf_free(&b);
}

/* Appends a record of type for request 1 carrying len bytes of data. */
static void
rec_data(struct ph_buf *b, int type, const char *data, size_t len)
{
	unsigned char h[8] = {1, (unsigned char)type, 0, 1, (unsigned char)(len >> 8), (unsigned char)len, 0, 0};
	ph_buf_add(b, h, sizeof h);
	ph_buf_add(b, data, len);
}

/* ph_rawfcgi.c: a simple request split out of its records. */
static void
test_fcgi_split(void)
{
	static const char begin[8] = {0, 1, 0, 0, 0, 0, 0, 0}, keep[8] = {0, 1, 1, 0, 0, 0, 0, 0},
			  auth[8] = {0, 2, 0, 0, 0, 0, 0, 0};
	/* REQUEST_METHOD=POST, then a value of 200 bytes (a 4-byte length) */
	char pairs[300], big[200];
	size_t np = 0;
	struct ph_buf b;
	struct ph_fcgi_split sp = {0};
	memset(big, 'v', sizeof big);
	pairs[np++] = 14;
	pairs[np++] = 4;
	memcpy(pairs + np, "REQUEST_METHODPOST", 18);
	np += 18;
	pairs[np++] = 1;
	memcpy(pairs + np, "\x80\x00\x00\xc8", 4);
	np += 4;
	pairs[np++] = 'X';
	memcpy(pairs + np, big, sizeof big);
	np += sizeof big;
	ph_buf_init(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 4, pairs, 10); /* the block cut across two records */
	rec_data(&b, 4, pairs + 10, np - 10);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, "{\"a\":", 5);
	rec_data(&b, 5, "1}", 2);
	rec_data(&b, 5, NULL, 0);
	rec_data(&b, 1, begin, 8); /* the next request's start is not taken */
	{
		/* split in place: a copy, the split's from then on */
		char *copy = ph_xmalloc(b.len), *mem;
		memcpy(copy, b.data, b.len);
		ok(ph_fcgi_request_split((unsigned char *)copy, b.len, &sp), "fcgi split: a simple request");
		ok(sp.n == 2 && sp.nlen[0] == 14 && memcmp(sp.name[0], "REQUEST_METHOD", 14) == 0 &&
			   strcmp(sp.value[0], "POST") == 0 && sp.vlen[0] == 4,
		   "fcgi split: the first parameter, joined across records");
		ok(sp.nlen[1] == 1 && sp.name[1][0] == 'X' && sp.vlen[1] == 200 && strlen(sp.value[1]) == 200 &&
			   strspn(sp.value[1], "v") == 200,
		   "fcgi split: a value with a four-byte length");
		is_str(sp.body, "{\"a\":1}", "fcgi split: the body, joined");
		is_int(sp.used, b.len - 16, "fcgi split: takes the request's bytes only");
		is_str(ph_fcgi_split_param(&sp, "REQUEST_METHOD"), "POST", "fcgi split: a parameter by name");
		ok(ph_fcgi_split_param(&sp, "X") == sp.value[1] && ph_fcgi_split_param(&sp, "REQUEST_METHO") == NULL &&
			   ph_fcgi_split_param(&sp, "Y") == NULL && ph_fcgi_split_param(&sp, "") == NULL,
		   "fcgi split: only a whole name is found");
		mem = sp.mem;
		memcpy(copy, b.data, b.len);
		ok(ph_fcgi_request_split((unsigned char *)copy, b.len, &sp) && sp.mem == mem && sp.n == 2 &&
			   strcmp(sp.value[0], "POST") == 0 && strcmp(sp.body, "{\"a\":1}") == 0,
		   "fcgi split: the next request reuses the memory");
		free(copy);
	}
	{
		/* each block in one record: the values and the body lie in the
		 * request's bytes, NUL-ended there */
		struct ph_buf one;
		unsigned char *u;
		ph_buf_init(&one);
		rec_data(&one, 1, begin, 8);
		rec_data(&one, 4, pairs, np);
		rec_data(&one, 4, NULL, 0);
		rec_data(&one, 5, "{}", 2);
		rec_data(&one, 5, NULL, 0);
		u = (unsigned char *)one.data;
		ok(ph_fcgi_request_split(u, one.len, &sp) && sp.n == 2 && sp.name[0] == (char *)u + 8 + 8 + 8 + 2 &&
			   sp.value[0] == sp.name[0] + 14 && strcmp(sp.value[0], "POST") == 0 &&
			   sp.body == (char *)u + one.len - 8 - 2 && strcmp(sp.body, "{}") == 0 &&
			   strlen(sp.value[1]) == 200,
		   "fcgi split: a block in one record is split where it lies");
		ph_buf_free(&one);
	}
	ph_fcgi_split_free(&sp);
	ph_buf_reset(&b);
	rec_data(&b, 1, keep, 8);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp) && sp.name == NULL,
	   "fcgi split: FCGI_KEEP_CONN is left to libfcgi");
	ph_buf_reset(&b);
	rec_data(&b, 1, auth, 8);
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp), "fcgi split: so is another role");
	ph_buf_reset(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 4, pairs, 23); /* the second pair's four-byte length is cut */
	rec_data(&b, 4, NULL, 0);
	rec_data(&b, 5, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp), "fcgi split: a pair past its block");
	ph_buf_reset(&b);
	rec_data(&b, 1, begin, 8);
	rec_data(&b, 5, NULL, 0); /* the body before the parameters' end */
	rec_data(&b, 4, NULL, 0);
	ok(!ph_fcgi_request_split((unsigned char *)b.data, b.len, &sp), "fcgi split: records out of order");
	ph_fcgi_split_free(&sp); /* what the refused ones kept for the next */
	ph_buf_free(&b);
}

/* ph_cidr.c: what http.metrics.allow accepts and matches. */
static void
test_cidr(void)
{
	struct ph_cidr n;
	ok(ph_cidr_parse("127.0.0.0/8", &n) == 0 && n.bits == 8, "cidr: 127.0.0.0/8");
	ok(ph_cidr_contains(&n, "127.1.2.3"), "cidr: 127.1.2.3 is inside /8");
	ok(!ph_cidr_contains(&n, "128.0.0.1"), "cidr: 128.0.0.1 is not");
	ok(ph_cidr_contains(&n, "::ffff:127.0.0.9"), "cidr: an IPv4-mapped address counts as IPv4");
	ok(!ph_cidr_contains(&n, "not an address"), "cidr: garbage is never inside");
	ok(!ph_cidr_contains(&n, NULL), "cidr: no REMOTE_ADDR is never inside");
	ok(ph_cidr_parse("::1/128", &n) == 0 && ph_cidr_contains(&n, "::1") && !ph_cidr_contains(&n, "::2"),
	   "cidr: ::1/128");
	ok(ph_cidr_parse("10.1.2.3", &n) == 0 && n.bits == 32, "cidr: a bare address is /32");
	ok(ph_cidr_parse("10.0.0.0/20", &n) == 0 && ph_cidr_contains(&n, "10.0.15.255") &&
	   !ph_cidr_contains(&n, "10.0.16.0"), "cidr: a prefix that is not a whole byte");
	ok(ph_cidr_parse("10.0.0.0/33", &n) != 0, "cidr: /33 is refused");
	ok(ph_cidr_parse("10.0.0/8", &n) != 0, "cidr: a short address is refused");
	ok(ph_cidr_parse("", &n) != 0, "cidr: empty is refused");
	ok(ph_cidr_parse("::/-1", &n) != 0, "cidr: a negative prefix is refused");
}

/* ph_rate.c: a bucket of 2 refilling at 1 per second, on a fake clock. */
static void
test_rate(void)
{
	struct ph_rate_conf rc = {1, 1, 2};
	int64_t t = 1000000000;
	is_int(ph_rate_take("p:x", &rc, t), 0, "rate: first of the burst");
	is_int(ph_rate_take("p:x", &rc, t), 0, "rate: second of the burst");
	is_int(ph_rate_take("p:x", &rc, t), 1, "rate: the third waits one second");
	is_int(ph_rate_take("p:y", &rc, t), 0, "rate: another key has its own bucket");
	is_int(ph_rate_take("p:x", &rc, t + 500000), 1, "rate: half a second later: still waiting");
	is_int(ph_rate_take("p:x", &rc, t + 1000000), 0, "rate: a second later one token is back");
	is_int(ph_rate_take("p:x", &rc, t + 1000000), 1, "rate: and only one");
	is_int(ph_rate_take("p:x", &rc, t + 100000000), 0, "rate: after a long pause the bucket is full");
	is_int(ph_rate_take("p:x", &rc, t + 100000000), 0, "rate: (two tokens)");
	is_int(ph_rate_take("p:x", &rc, t + 100000000), 1, "rate: never more than burst");
	rc = (struct ph_rate_conf){1, 60, 0};
	is_int(ph_rate_take("p:slow", &rc, t), 0, "rate: 1 per 60 s, first");
	is_int(ph_rate_take("p:slow", &rc, t), 60, "rate: Retry-After 60");
	rc = (struct ph_rate_conf){2, 60, 2};
	is_int(ph_rate_peek("f:a", &rc, t), 0, "rate: peek at a full bucket: 0");
	is_int(ph_rate_peek("f:a", &rc, t), 0, "rate: peeking spends nothing");
	(void)ph_rate_take("f:a", &rc, t);
	(void)ph_rate_take("f:a", &rc, t);
	is_int(ph_rate_peek("f:a", &rc, t), 30, "rate: peek at an empty bucket: seconds to the next token");
}

/* ph_shared.c: auth.max_concurrent_verify's slots, taken over from a
 * holder that died; the host's cache of verified tokens. */
static void
test_shared(void)
{
	unsigned char d[PH_SHARED_DIGEST], e[PH_SHARED_DIGEST];
	int a, b, st;
	pid_t pid;
	a = ph_shared_verify_enter(2);
	b = ph_shared_verify_enter(2);
	ok(a == 0 && b == 1, "verify: two slots of two");
	is_int(ph_shared_verify_enter(2), -1, "verify: a third is refused");
	ph_shared_verify_leave(b);
	is_int(ph_shared_verify_enter(2), 1, "verify: a slot given back is taken again");
	ph_shared_verify_leave(0);
	ph_shared_verify_leave(1);
	if ((pid = fork()) == 0)
		_exit(ph_shared_verify_enter(1) == 0 ? 0 : 1); /* dies holding slot 0 */
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "verify: a child took slot 0 and died");
	is_int(ph_shared_verify_enter(1), 0, "verify: the dead child's slot is taken over");
	ph_shared_verify_leave(0);
	memset(d, 7, sizeof d);
	memcpy(e, d, sizeof e);
	e[31] ^= 1; /* same home slot, another digest */
	is_int(ph_shared_auth_get(d), -1, "auth cache: empty");
	ph_shared_auth_put(d, 3);
	ph_shared_auth_put(e, 5);
	is_int(ph_shared_auth_get(d), 3, "auth cache: a verified digest is found");
	is_int(ph_shared_auth_get(e), 5, "auth cache: its neighbour keeps its own entry");
	e[31] ^= 2;
	is_int(ph_shared_auth_get(e), -1, "auth cache: a digest never put is not");
	if ((pid = fork()) == 0)
		_exit(ph_shared_auth_get(d) == 3 ? 0 : 1);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "auth cache: another process sees it");
}

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
	ok(!ph_utf8_valid("\xc0\xae", 2) && !ph_utf8_valid("\xe0\x80\xaf", 3), "utf8: overlong forms refused");
	ok(!ph_utf8_valid("\xed\xa0\x80", 3) && !ph_utf8_valid("\xf4\x90\x80\x80", 4),
	   "utf8: surrogates and code points past U+10FFFF refused");
	ok(ph_utf8_valid("\xf4\x8f\xbf\xbf\xc3\xa9", 6), "utf8: U+10FFFF and U+00E9 accepted");
	p = ph_utf8_repair("a\xc0\xae\xc3\xa9\xe2\x82");
	is_str(p, "a??\xc3\xa9??", "utf8 repair: bad bytes become '?', a character cut short too");
	free(p);
#undef KN
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

/* ph_kept: the memory of one use is handed to the next, a use within a use
 * gets its own, and memory grown past the limit is not kept. */
static void
test_kept(void)
{
	struct ph_kept k = {{NULL, 0, 0}, false};
	struct ph_buf a, b;
	bool ka, kb;
	char *first;
	ka = ph_kept_take(&k, &a);
	ph_buf_adds(&a, "first use");
	first = a.data;
	ph_kept_give(&k, &a, ka, 4096);
	ka = ph_kept_take(&k, &a);
	ok(ka && a.data == first && a.len == 0 && a.data[0] == '\0', "kept: the next use gets the memory, emptied");
	kb = ph_kept_take(&k, &b);
	ok(!kb && b.data == NULL, "kept: a use within a use gets a buffer of its own");
	ph_buf_adds(&b, "inner");
	ph_kept_give(&k, &b, kb, 4096);
	ok(b.data == NULL && k.busy, "kept: the inner buffer is freed, the kept one still in use");
	ph_buf_reserve(&a, 8192);
	ph_kept_give(&k, &a, ka, 4096);
	ka = ph_kept_take(&k, &a);
	ok(ka && a.cap == 0, "kept: memory grown past the limit is not kept");
	ph_buf_adds(&a, "x");
	ph_kept_give(&k, &a, ka, 4096);
	ph_buf_free(&k.b);
}

int
main(void)
{
	long long v = 0;
	const char *err = NULL;
	struct ph_buf b;
	size_t n;
	const char *t;
	char *p;

	ok(ph_strtonum("42", 0, 100, &v, &err) == 0 && v == 42, "strtonum parses 42");
	ok(ph_strtonum("101", 0, 100, &v, &err) != 0, "strtonum refuses above max");
	is_str(err, "is too large", "strtonum says why");
	ok(ph_strtonum("-1", 0, 100, &v, &err) != 0, "strtonum refuses below min");
	ok(ph_strtonum("12x", 0, 100, &v, &err) != 0, "strtonum refuses trailing junk");
	ok(ph_strtonum("", 0, 100, &v, &err) != 0, "strtonum refuses empty");
	ok(ph_strtonum("99999999999999999999", 0, INT64_MAX, &v, &err) != 0, "strtonum refuses overflow");

	ph_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		ph_buf_printf(&b, "%d,", i);
	ok(b.len > 2000 && b.data[b.len] == '\0', "buffer grows and stays terminated");
	p = ph_buf_steal(&b);
	ok(strncmp(p, "0,1,2,", 6) == 0 && b.data == NULL, "steal hands over the data");
	free(p);
	{
		/* formatted into the room left, and again when it did not fit */
		char big[300], want[400];
		memset(big, 'x', sizeof big - 1);
		big[sizeof big - 1] = '\0';
		ph_buf_init(&b);
		ph_buf_adds(&b, "head:");
		ph_buf_printf(&b, "%d", 42);
		ph_buf_printf(&b, "[%s]", big);
		ph_buf_printf(&b, "%s", "");
		ph_buf_printf(&b, "-%05d", 7);
		snprintf(want, sizeof want, "head:42[%s]-00007", big);
		is_str(b.data, want, "printf appends whether or not the text fits the room left");
		ok(b.len == strlen(want), "... and counts what it appended");
		ph_buf_free(&b);
	}
	{
		/* the log timestamp: UTC to the millisecond, its date kept a second */
		char ts[96], a[32], c[32];
		time_t t0, t1;
		struct tm tm;
		bool same = false;
		for (int i = 0; i < 3 && !same; i++) {
			/* the clock the timestamp reads: time() lags it by up to a tick */
			struct timeval tv;
			gettimeofday(&tv, NULL);
			t0 = tv.tv_sec;
			ph_log_timestamp(ts, sizeof ts);
			ph_log_timestamp(ts, sizeof ts); /* the second one from the kept date */
			gettimeofday(&tv, NULL);
			t1 = tv.tv_sec;
			gmtime_r(&t0, &tm);
			strftime(a, sizeof a, "%Y-%m-%dT%H:%M:%S.", &tm);
			gmtime_r(&t1, &tm);
			strftime(c, sizeof c, "%Y-%m-%dT%H:%M:%S.", &tm);
			same = strcmp(a, c) == 0;
		}
		ok(strlen(ts) == 24 && strncmp(ts, a, 20) == 0 && ts[20] >= '0' && ts[20] <= '9' &&
			   ts[21] >= '0' && ts[21] <= '9' && ts[22] >= '0' && ts[22] <= '9' && ts[23] == 'Z',
		   "log timestamps read YYYY-MM-DDTHH:MM:SS.mmmZ in UTC (%s)", ts);
	}

	t = ph_trim("  \tvalue \t ", &n);
	ok(n == 5 && strncmp(t, "value", 5) == 0, "trim removes OWS on both sides");
	ok(ph_strcaseeq("Mcp-Method", "mcp-method"), "header names compare case-insensitively");
	ok(!ph_strcaseeq("Mcp-Method", "Mcp-Metho"), "different lengths differ");

	p = ph_path_join("/etc/phantom", "skills/manifest.yaml");
	is_str(p, "/etc/phantom/skills/manifest.yaml", "relative paths join the directory");
	free(p);
	p = ph_path_join("/etc/phantom", "/abs/x");
	is_str(p, "/abs/x", "absolute paths stay");
	free(p);
	p = ph_dirname("conf/phantom.yaml");
	is_str(p, "conf", "dirname");
	free(p);
	p = ph_dirname("phantom.yaml");
	is_str(p, ".", "dirname without a slash");
	free(p);
	test_cidr();
	ph_buf_init(&b);
	ph_buf_addint(&b, 0);
	ph_buf_addc(&b, ' ');
	ph_buf_addint(&b, -42);
	ph_buf_addc(&b, ' ');
	ph_buf_addint(&b, INT64_MIN);
	ph_buf_addc(&b, ' ');
	ph_buf_addint(&b, INT64_MAX);
	is_str(b.data, "0 -42 -9223372036854775808 9223372036854775807", "buf addint: as %%lld prints");
	ph_buf_free(&b);
	{
		char lab[8];
		ph_label(lab, sizeof lab, "tool", "echo");
		is_str(lab, "tool ec", "label: cut as snprintf cuts");
		ph_label(lab, sizeof lab, "ab", "c");
		is_str(lab, "ab c", "label: kind, a space, the name");
		ph_label(lab, 3, "tool", "x");
		is_str(lab, "to", "label: cut inside the kind");
	}
	test_fcgi_whole();
	test_fcgi_split();
	test_json_parser();
	test_json_memo();
	test_json_memo_changed();
	test_json_members();
	test_kept();
	test_rate();
	test_json_nul();
	test_shared();
	return tap_done();
}
