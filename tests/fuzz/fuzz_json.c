/* fuzz_json.c: libFuzzer harness for ph_json_parse (lib/ph_json.c), the
 * parser every JSON text Phantom reads goes through, against json-c's own
 * tokener in the strict mode Phantom used before it (with the checks it
 * needed around it).
 *
 * Invariants checked: what the tokener refuses, ph_json_parse refuses too;
 * what both take prints back the same (json-c's printer), with the same
 * answer about member names holding U+0000 as ph_json_key_nul; what only
 * the tokener takes is outside RFC 8259 or RFC 3629 (a number like "1." or
 * "-01", or bytes that are not UTF-8); and the depth limit is json-c's. The
 * first byte of the input picks the depth (1 to 16). ph_json_write prints
 * every value taken as json-c's printer does.
 *
 *   make -C build fuzz && build/tests/fuzz/fuzz_json tests/fuzz/corpus/json
 */
#include "first.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The former ph_json_parse: no raw control character in a string, no
 * letter outside strings but those of true, false, null and exponents,
 * json-c's strict tokener, nothing but whitespace after the value. */
static bool
old_parse(const char *s, size_t len, int depth, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error e;
	size_t end;
	bool in_str = false, esc = false;
	*out = NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			else if (c < 0x20)
				return false;
		} else if (c == '"') {
			in_str = true;
		} else if (((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && strchr("truefalsnE", c) == NULL) {
			return false;
		}
	}
	tok = json_tokener_new_ex(depth);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, s, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (o == NULL && e == json_tokener_continue) {
		o = json_tokener_parse_ex(tok, "", 1);
		e = json_tokener_get_error(tok);
		end = len;
	}
	json_tokener_free(tok);
	if (e != json_tokener_success) {
		json_object_put(o);
		return false;
	}
	for (; end < len; end++)
		if (s[end] != ' ' && s[end] != '\t' && s[end] != '\r' && s[end] != '\n') {
			json_object_put(o);
			return false;
		}
	*out = o;
	return true;
}

/* What RFC 8259 does not allow but json-c takes: a number with a fraction
 * without a digit ("1.", "2.e3"), a leading zero ("-01", "0000") or a
 * minus not before a digit ("-.1"); a member name in single quotes (its
 * strict mode refuses them for values only). */
static bool
json_c_lax(const char *s, size_t len)
{
	bool in_str = false, esc = false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '\'') {
			return true;
		} else if (c == '.' && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9' &&
			   (i + 1 == len || s[i + 1] < '0' || s[i + 1] > '9')) {
			return true;
		} else if (c == '-' && (i + 1 == len || s[i + 1] < '0' || s[i + 1] > '9') &&
			   (i == 0 || (s[i - 1] != 'e' && s[i - 1] != 'E'))) {
			return true;
		} else if (c == '-' && i + 2 < len && s[i + 1] == '0' && s[i + 2] >= '0' && s[i + 2] <= '9') {
			return true;
		} else if (c == '0' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9' &&
			   (i == 0 || strchr("0123456789.eE+-", s[i - 1]) == NULL)) {
			return true;
		}
	}
	return false;
}

/* A parse with a memo (the member "a" at level 1 and, in another memo,
 * "_meta" at level 2, kept from the inputs before) gives what the plain
 * parse gave (ra, a, knul), taken from the memo or not; and the same again
 * right after, when the memo holds this input's value. */
static void
memo_check(const char *s, size_t size, int depth, bool ra, struct json_object *a, bool knul)
{
	static struct ph_json_memo memos[2] = {{.key = "a", .level = 1}, {.key = "_meta", .level = 2}};
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < 2; i++) {
			struct json_object *m = NULL;
			bool mnul = false, rm = ph_json_parse_memo(s, size, depth, &m, &mnul, &memos[i]);
			if (rm != ra || (rm && (mnul != knul || !json_object_equal(m, a))))
				abort();
			if (!rm && m != NULL)
				abort();
			json_object_put(m);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *a = NULL, *b = NULL;
	bool ra, rb, knul = false;
	const char *s;
	char *copy;
	int depth;
	if (size < 1)
		return 0;
	depth = 1 + data[0] % 16;
	size--;
	copy = malloc(size ? size : 1); /* exactly the text: a read past it is caught */
	memcpy(copy, data + 1, size);
	s = copy;
	ra = ph_json_parse_ex(s, size, depth, &a, &knul);
	rb = old_parse(s, size, depth, &b);
	if (ra && !rb)
		abort(); /* taken, though json-c's tokener refuses it */
	if (!ra && rb && !json_c_lax(s, size) && ph_utf8_valid_nul(s, size))
		abort(); /* refused, though it is JSON */
	if (ra) {
		const char *ta = json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
		const char *tb = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
		if (strcmp(ta, tb) != 0 || json_object_get_type(a) != json_object_get_type(b))
			abort(); /* not the value the tokener built */
		if (knul != ph_json_key_nul(s, size))
			abort();
		/* the printer of our own prints what json-c's prints */
		struct ph_buf w;
		ph_buf_init(&w);
		ph_json_write(&w, a);
		ta = json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		if (w.len != strlen(ta) || memcmp(w.data, ta, w.len) != 0)
			abort();
		ph_buf_free(&w);
	}
	if (!ra && a != NULL)
		abort();
	memo_check(s, size, depth, ra, a, knul);
	json_object_put(a);
	json_object_put(b);
	free(copy);
	return 0;
}
