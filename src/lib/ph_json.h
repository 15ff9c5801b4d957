/* ph_json.h: the one way Phantom reads JSON text (strict, bounded, whole
 * document) and the borrowed member accessors every layer uses. */
#ifndef PH_JSON_H
#define PH_JSON_H
#include "first.h"
#include "ph_util.h"
#include <json-c/json.h>

/* Nesting limits of the JSON documents Phantom parses. Request bodies and
 * handler output use limits.json_depth from the configuration; these name
 * the fixed ones. */
#define PH_JSON_DEPTH_CANCEL 8       /* a stdio line checked for notifications/cancelled */
#define PH_JSON_DEPTH_AUTH_ANSWER 16 /* an exec authenticator's answer */
#define PH_JSON_DEPTH_METADATA 32    /* an auth.metadata document from a file */
#define PH_JSON_DEPTH_DOCUMENT 64    /* schemas, embedded JSON, sealed state, module results */

/* Parses exactly one JSON document of len bytes: RFC 8259 strict (UTF-8
 * validated, no NaN or Infinity, no raw control characters in strings),
 * nested at most depth deep, nothing but whitespace after it. Returns true
 * with the value in *out (caller puts; NULL for the document "null"), false
 * for anything else (*out NULL). */
bool ph_json_parse(const char *s, size_t len, int depth, struct json_object **out) PH_WUR;
/* ph_json_parse, also telling whether a member name held an escaped U+0000
 * (*key_nul, when not NULL): json-c keys are C strings, so the parsed object
 * has the name cut at the NUL (see ph_json_key_nul). */
bool ph_json_parse_ex(const char *s, size_t len, int depth, struct json_object **out, bool *key_nul) PH_WUR;

/* The value of one member kept from one parse to the next: when the next
 * document has the same bytes there, the kept value is put in its tree
 * (shared: one more reference) instead of a new one, provided the kept value
 * still holds what it held when it was kept (nobody changed it: it is
 * compared with a snapshot taken then, every name, string and number). For what
 * every request repeats (a client's params._meta). key: the member's name;
 * level: the depth of its value (1: a member of the document). Only objects
 * of at most PH_JSON_MEMO_MAX bytes of text are kept.
 * A fast path (docs/internals.md): for the _meta of tests/bench/mcp.lua it
 * saves 5,569 of 37,106 instructions a module tools/call (tests/bench/ab.sh).
 * It relies on the snapshot seeing every change made to the kept value
 * since it was kept (json-c has no read-only values: whoever holds a tree
 * may change it), which holds while what a value means is its print, and
 * on one thread a memo. A meaning the print misses (userdata, a serializer
 * of one's own, set on a value of the tree) would reach the next request;
 * a memo shared by threads would race. */
#define PH_JSON_MEMO_MAX 2048
struct ph_json_memo {
	const char *key;
	int level;
	/* the value kept, the text it was read from, its snapshot then */
	struct json_object *obj;
	struct ph_buf text, snap;
	int depth;    /* the depth limit of the parse it came from */
	bool key_nul; /* a member name inside it held U+0000 */
	unsigned long hits; /* times it was put in a tree */
};
/* ph_json_parse_ex with the memo m (NULL: none; not used either while
 * ph_fast_paths is off: PHANTOM_FAST_PATHS=off, the plain parse). */
bool ph_json_parse_memo(const char *s, size_t len, int depth, struct json_object **out, bool *key_nul,
			struct ph_json_memo *m) PH_WUR;
void ph_json_memo_free(struct ph_json_memo *m);

/* True when the len bytes at s are UTF-8 as RFC 3629 has it, U+0000
 * allowed (as ph_utf8_valid over each NUL-free stretch). */
bool ph_utf8_valid_nul(const char *s, size_t len) PH_WUR;

/* True when every string and member name in o is valid UTF-8 (RFC 3629:
 * no overlong forms, surrogates or code points past U+10FFFF; U+0000 is
 * allowed). For values built in C (module results), which no parser has
 * checked. NULL is valid. */
bool ph_json_utf8_valid(struct json_object *o) PH_WUR;

/* The compact text of o (no slash escaping), borrowed from o until it
 * changes or is put; *len its length. */
const char *ph_json_text(struct json_object *o, size_t *len);

/* Appends the compact text of o to b: the bytes ph_json_text gives (json-c's
 * printer, no slash escaping), without keeping a copy in o. */
struct ph_buf;
void ph_json_write(struct ph_buf *b, struct json_object *o);

/* json_object_object_add(o, key, v) (v taken; a name already there keeps
 * its place and takes v), at less cost: a common member name is not copied
 * and a small object is searched without hashing. */
void ph_jset(struct json_object *o, const char *key, struct json_object *v);
/* Borrowed member of an object, or NULL (also when o is not an object). */
struct json_object *ph_jget(struct json_object *o, const char *key);
/* Whether the object o has a member named key (its value may be null). */
bool ph_jhas(struct json_object *o, const char *key);
/* json_object_object_get_ex(o, key, v) at less cost (a small object is
 * searched without hashing): whether o is an object with a member named
 * key, and in *v (when v is not NULL) its value, NULL when absent. */
bool ph_jget_ex(struct json_object *o, const char *key, struct json_object **v);
/* Borrowed string member, or NULL when absent or not a string. */
const char *ph_jstr(struct json_object *o, const char *key);

/* The string member key of o when it holds no control character (C0 or
 * DEL, U+0000 among them), else NULL (also when absent or not a string).
 * For a value that is compared or used as a name: a C string reading cannot
 * cut it short, nor can it carry a line into a log. */
const char *ph_jtext(struct json_object *o, const char *key);
/* True when v is a string of n bytes without a control character. */
bool ph_text_plain(const char *v, size_t n);
/* True when v is a string holding U+0000 (json-c keeps the length, but a
 * C string reading of it stops at the NUL). */
bool ph_jstr_nul(struct json_object *v);
/* True when an object key of the JSON text s (already parsed) holds an
 * escaped U+0000: json-c cuts keys at the NUL, so the parsed object cannot
 * tell "a\u0000b" from "a". */
bool ph_json_key_nul(const char *s, size_t len);
#endif
