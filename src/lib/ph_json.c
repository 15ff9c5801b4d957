/* ph_json.c: strict JSON parsing and member access (ph_json.h). */
#include "first.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parser: recursive descent over the whole text at once, building
 * json-c values directly. It replaced json-c's tokener, which read a byte at
 * a time through a state machine, switched the locale on every parse and
 * needed three passes of its own around it (control characters, NaN,
 * Infinity and trailing bytes it let through). What it builds is what the
 * tokener built, so every layer above sees the same values:
 *   - integers as int64 (past INT64_MAX: uint64; beyond either end clamped,
 *     as strtoll/strtoull do), other numbers as doubles that print back as
 *     their source text (json_object_new_double_s);
 *   - \u escapes decoded to UTF-8, a surrogate pair combined, a lone
 *     surrogate replaced by U+FFFD; U+0000 kept in string values; an object
 *     key ends at a U+0000 (json-c keys are C strings: *key_nul says so);
 *   - a repeated member name: the last value, at the first one's place;
 *   - depth as json_tokener_new_ex(depth): a value inside `depth - 1`
 *     containers is the deepest allowed.
 * Stricter than the tokener on what RFC 8259 and RFC 3629 forbid: "1.",
 * "-01", overlong UTF-8, surrogates and code points past U+10FFFF written
 * as bytes. */

struct jp {
	const unsigned char *p, *end;
	int depth;       /* the deepest container count a value may have */
	bool key_nul;    /* a member name held U+0000 */
	struct ph_buf s; /* a string with escapes or a long number, decoded */
	struct ph_json_memo *memo; /* or NULL */
};

static void
jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

/* The bytes a string's text may hold as they are, in the parser (printable
 * ASCII but the quote and the backslash) and in the printer (the same: what
 * it escapes is the quote, the backslash and control characters). */
#define PLAIN_ROW(a) a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a
static const unsigned char plain_byte[256] = {
	PLAIN_ROW(0), PLAIN_ROW(0),                                                          /* 0x00-0x1f */
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                                        /* 0x20-0x2f: '"' */
	PLAIN_ROW(1), PLAIN_ROW(1),                                                          /* 0x30-0x4f */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,                                        /* 0x50-0x5f: '\\' */
	PLAIN_ROW(1), PLAIN_ROW(1),                                                          /* 0x60-0x7f */
	PLAIN_ROW(0), PLAIN_ROW(0), PLAIN_ROW(0), PLAIN_ROW(0),                              /* 0x80-0xbf */
	PLAIN_ROW(0), PLAIN_ROW(0), PLAIN_ROW(0), PLAIN_ROW(0),                              /* 0xc0-0xff */
};
#undef PLAIN_ROW

/* Length of the RFC 3629 UTF-8 sequence at p (its lead byte >= 0x80), or 0. */
static size_t
utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t need, left = (size_t)(end - p);
	unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
	if (c >= 0xc2 && c <= 0xdf)
		need = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else
		return 0;
	if (left < need || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t k = 2; k < need; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return need;
}

static int
hex4(const unsigned char *p)
{
	int v = 0;
	for (int k = 0; k < 4; k++) {
		int c = p[k], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static void
put_utf8(struct ph_buf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	ph_buf_add(b, u, n);
}

/* Reads the string whose opening quote j->p is at. Returns its bytes: in
 * the text itself when it has no escape (*len of them, not NUL-ended), or in
 * j->s (NUL-ended); NULL when it is not a valid string. */
static const char *
jp_string(struct jp *j, size_t *len)
{
	const unsigned char *p = ++j->p, *run;
	/* the common case: no escape, so the text is the value */
	for (;;) {
		while (j->end - p >= 4 && plain_byte[p[0]] & plain_byte[p[1]] & plain_byte[p[2]] & plain_byte[p[3]])
			p += 4;
		while (p < j->end && plain_byte[*p])
			p++;
		if (p >= j->end || *p == '"' || *p == '\\')
			break;
		if (*p < 0x20)
			return NULL;
		size_t n = utf8_seq(p, j->end);
		if (n == 0)
			return NULL;
		p += n;
	}
	if (p >= j->end)
		return NULL;
	if (*p == '"') {
		*len = (size_t)(p - j->p);
		run = j->p;
		j->p = p + 1;
		return (const char *)run;
	}
	ph_buf_reset(&j->s);
	ph_buf_add(&j->s, j->p, (size_t)(p - j->p));
	while (p < j->end && *p != '"') {
		unsigned c = *p;
		if (c == '\\') {
			if (j->end - p < 2)
				return NULL;
			switch (p[1]) {
			case '"': case '\\': case '/':
				ph_buf_addc(&j->s, (char)p[1]);
				break;
			case 'b': ph_buf_addc(&j->s, '\b'); break;
			case 'f': ph_buf_addc(&j->s, '\f'); break;
			case 'n': ph_buf_addc(&j->s, '\n'); break;
			case 'r': ph_buf_addc(&j->s, '\r'); break;
			case 't': ph_buf_addc(&j->s, '\t'); break;
			case 'u': {
				int cp = j->end - p >= 6 ? hex4(p + 2) : -1;
				if (cp < 0)
					return NULL;
				p += 6;
				if (cp >= 0xd800 && cp <= 0xdbff && j->end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
					int lo = hex4(p + 2);
					if (lo >= 0xdc00 && lo <= 0xdfff) {
						put_utf8(&j->s, 0x10000 + (((unsigned)cp - 0xd800) << 10) +
									((unsigned)lo - 0xdc00));
						p += 6;
						continue;
					}
				}
				/* a lone surrogate: U+FFFD, as json-c decodes it */
				put_utf8(&j->s, cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : (unsigned)cp);
				continue;
			}
			default:
				return NULL;
			}
			p += 2;
		} else if (c < 0x20) {
			return NULL;
		} else if (c < 0x80) {
			ph_buf_addc(&j->s, (char)c);
			p++;
		} else {
			size_t n = utf8_seq(p, j->end);
			if (n == 0)
				return NULL;
			ph_buf_add(&j->s, p, n);
			p += n;
		}
	}
	if (p >= j->end)
		return NULL;
	j->p = p + 1;
	*len = j->s.len;
	ph_buf_addc(&j->s, '\0');
	return j->s.data;
}

static bool
digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/* Reads the number at j->p into *out. Returns false when it is not one. */
static bool
jp_number(struct jp *j, struct json_object **out)
{
	const unsigned char *start = j->p, *p = j->p;
	bool neg = false, real = false;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!digit(p, j->end))
		return false;
	if (*p == '0')
		p++;
	else
		while (digit(p, j->end))
			p++;
	if (p < j->end && *p == '.') {
		p++;
		if (!digit(p, j->end))
			return false;
		while (digit(p, j->end))
			p++;
		real = true;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (!digit(p, j->end))
			return false;
		while (digit(p, j->end))
			p++;
		real = true;
	}
	j->p = p;
	if (!real) {
		uint64_t v = 0;
		bool over = false;
		for (const unsigned char *q = start + neg; q < p; q++) {
			unsigned d = (unsigned)(*q - '0');
			if (v > (UINT64_MAX - d) / 10)
				over = true;
			else
				v = v * 10 + d;
		}
		if (neg) /* from -2^63 on, INT64_MIN */
			*out = json_object_new_int64(over || v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v);
		else if (over)
			*out = json_object_new_uint64(UINT64_MAX);
		else if (v > (uint64_t)INT64_MAX)
			*out = json_object_new_uint64(v);
		else
			*out = json_object_new_int64((int64_t)v);
	} else {
		ph_buf_reset(&j->s);
		ph_buf_add(&j->s, start, (size_t)(p - start));
		ph_buf_addc(&j->s, '\0');
		*out = json_object_new_double_s(strtod(j->s.data, NULL), j->s.data);
	}
	return *out != NULL;
}

static bool jp_value(struct jp *j, int level, struct json_object **out);

static bool
jp_array(struct jp *j, int level, struct json_object **out)
{
	struct json_object *a = json_object_new_array_ext(4), *v;
	j->p++;
	jp_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		*out = a;
		return true;
	}
	for (;;) {
		if (level + 1 >= j->depth || !jp_value(j, level + 1, &v))
			break;
		json_object_array_add(a, v);
		jp_ws(j);
		if (j->p >= j->end)
			break;
		if (*j->p == ']') {
			j->p++;
			*out = a;
			return true;
		}
		if (*j->p != ',')
			break;
		j->p++;
		jp_ws(j);
	}
	json_object_put(a);
	return false;
}

/* Member names up to this long are copied on the stack while their value
 * is read (the scratch buffer holds the value's strings then). */
#define KEY_STACK 96

/* Objects up to this many members are searched member by member, which
 * costs less than hashing the name (json-c hashes every name it looks up
 * or adds). */
#define SMALL_OBJECT 8

/* Member names that requests and answers use all the time: a name read or
 * added that equals one of them goes in as this constant string, neither
 * copied nor freed (json-c's JSON_C_OBJECT_ADD_CONSTANT_KEY). */
static const char *const common_keys[] = {
	"_meta", "annotations", "arguments", "blob", "cacheScope", "capabilities", "clientInfo", "code",
	"content", "contents", "cursor", "data", "description", "error", "id", "inputResponses",
	"inputSchema", "instructions", "io.modelcontextprotocol/clientCapabilities",
	"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel",
	"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/serverInfo", "isError",
	"jsonrpc", "level", "logger", "message", "messages", "method", "mimeType", "name", "nextCursor",
	"outputSchema", "params", "progress", "progressToken", "prompts", "protocolVersion",
	"requestState", "resources", "result", "resultType", "role", "serverInfo", "status",
	"structuredContent", "task", "taskId", "text", "title", "tools", "total", "ttlMs", "type", "uri",
	"version",
};

/* common_keys by a hash of their length and ends, open addressing, each
 * with json-c's hash of it (so that adding one to an object hashes
 * nothing: lh_table_insert_w_hash); filled at the first use (each process
 * is one thread) */
#define COMMON_SLOTS 256
static const char *common_slot[COMMON_SLOTS];
static unsigned char common_len[COMMON_SLOTS];
static unsigned long common_lh[COMMON_SLOTS];
static lh_hash_fn *common_lh_fn; /* the function common_lh holds the hashes of */

static unsigned
common_hash(const char *k, size_t n)
{
	return ((unsigned)n * 31u + (unsigned char)k[0] * 7u + (unsigned char)k[n - 1]) % COMMON_SLOTS;
}

static void
common_fill(void)
{
	struct json_object *probe = json_object_new_object();
	common_lh_fn = json_object_get_object(probe)->hash_fn;
	json_object_put(probe);
	for (size_t i = 0; i < sizeof common_keys / sizeof common_keys[0]; i++) {
		size_t l = strlen(common_keys[i]);
		unsigned h;
		for (h = common_hash(common_keys[i], l); common_slot[h]; h = (h + 1) % COMMON_SLOTS)
			;
		common_slot[h] = common_keys[i];
		common_len[h] = (unsigned char)l;
		common_lh[h] = common_lh_fn(common_keys[i]);
	}
}

/* The slot of the common key k (n bytes), or -1. */
static int
common_key(const char *k, size_t n)
{
	unsigned h;
	if (common_lh_fn == NULL)
		common_fill();
	if (n == 0 || n > 64)
		return -1;
	for (h = common_hash(k, n); common_slot[h]; h = (h + 1) % COMMON_SLOTS)
		if (common_len[h] == n && memcmp(common_slot[h], k, n) == 0)
			return (int)h;
	return -1;
}

/* The entry named key among the first SMALL_OBJECT members of the
 * object's table t, or NULL; *seen is how many members were looked at, and
 * *more says t has members past those (not looked at). */
static struct lh_entry *
small_entry(struct lh_table *t, const char *key, size_t *seen, bool *more)
{
	struct lh_entry *e = lh_table_head(t);
	size_t i = 0;
	for (; e != NULL && i < SMALL_OBJECT; e = lh_entry_next(e), i++) {
		const char *k = lh_entry_k(e);
		if (strcmp(k, key) == 0) {
			*seen = i + 1;
			*more = false;
			return e;
		}
	}
	*seen = i;
	*more = e != NULL;
	return NULL;
}

/* Adds key: v to o as json_object_object_add does (a repeated name keeps
 * its place and takes the new value). A name of common_keys goes in as the
 * constant, neither copied nor freed, and when it is new to a small object
 * with the hash kept for it: nothing is hashed; other names are copied and
 * hashed once.
 * The kept hash is a fast path (docs/internals.md): it saves 1,527 to 1,761
 * of some 34,500 instructions a module tools/call (tests/bench/ab.sh). It
 * relies on json-c: that a table hashes a name with the function common_lh
 * was filled with (checked: t->hash_fn), whose seed is set once a process;
 * that a name is new (small_entry looked at every member); and that
 * json_object_object_add_ex, for a new name, does no more than
 * lh_table_insert_w_hash. A json-c that seeds each table, or does more on
 * an add, would break it. ph_fast_paths off (PHANTOM_FAST_PATHS=off):
 * json_object_object_add_ex hashes every name. */
static void
object_add(struct json_object *o, const char *key, size_t klen, struct json_object *v)
{
	int c = common_key(key, klen);
	unsigned opts = c >= 0 ? JSON_C_OBJECT_ADD_CONSTANT_KEY : 0;
	struct lh_table *t = json_object_get_object(o);
	size_t seen;
	bool more;
	if (small_entry(t, key, &seen, &more) == NULL && !more && seen < SMALL_OBJECT) {
		if (c >= 0 && ph_fast_paths && t->hash_fn == common_lh_fn && o != v) {
			lh_table_insert_w_hash(t, common_slot[c], v, common_lh[c], JSON_C_OBJECT_ADD_CONSTANT_KEY);
			return;
		}
		opts |= JSON_C_OBJECT_ADD_KEY_IS_NEW;
	}
	json_object_object_add_ex(o, c >= 0 ? common_slot[c] : key, v, opts);
}

static bool jp_value(struct jp *j, int level, struct json_object **out);

/* ---- the memo's snapshot ----------------------------------------------------
 * What a kept value held when it was kept, written as a walk of it: a tag
 * byte a value, then for an object its member count and each member's name
 * (length, bytes) and value, for an array its length and elements, for a
 * string its length and bytes, for a number the text it prints as, for a
 * boolean its byte. Comparing the value with it at each use is a walk that
 * prints nothing but its numbers (which a _meta seldom holds). */

static void
snap_len(struct ph_buf *b, size_t n)
{
	ph_buf_add(b, &n, sizeof n);
}

static void
snap_write(struct ph_buf *b, struct json_object *o)
{
	enum json_type t = json_object_get_type(o);
	size_t len;
	ph_buf_addc(b, (char)('0' + t));
	switch (t) {
	case json_type_null:
		return;
	case json_type_boolean:
		ph_buf_addc(b, (char)json_object_get_boolean(o));
		return;
	case json_type_string:
		len = (size_t)json_object_get_string_len(o);
		snap_len(b, len);
		ph_buf_add(b, json_object_get_string(o), len);
		return;
	case json_type_array:
		len = json_object_array_length(o);
		snap_len(b, len);
		for (size_t i = 0; i < len; i++)
			snap_write(b, json_object_array_get_idx(o, i));
		return;
	case json_type_object:
		snap_len(b, (size_t)json_object_object_length(o));
		json_object_object_foreach(o, k, v) {
			len = strlen(k);
			snap_len(b, len);
			ph_buf_add(b, k, len);
			snap_write(b, v);
		}
		return;
	case json_type_int:
	case json_type_double:
	default: {
		struct ph_buf num;
		ph_buf_init(&num);
		ph_json_write(&num, o);
		snap_len(b, num.len);
		ph_buf_add(b, num.data ? num.data : "", num.len);
		ph_buf_free(&num);
		return;
	}
	}
}

/* Whether the snapshot at *p (up to end) is o's; *p moves past it. */
static bool
snap_same(const char **p, const char *end, struct json_object *o)
{
	enum json_type t = json_object_get_type(o);
	size_t n, len;
	if (*p >= end || **p != (char)('0' + t))
		return false;
	(*p)++;
	if (t == json_type_null)
		return true;
	if (t == json_type_boolean) {
		if (*p >= end || **p != (char)json_object_get_boolean(o))
			return false;
		(*p)++;
		return true;
	}
	if ((size_t)(end - *p) < sizeof n)
		return false;
	memcpy(&n, *p, sizeof n);
	*p += sizeof n;
	switch (t) {
	case json_type_string:
		if ((size_t)json_object_get_string_len(o) != n || (size_t)(end - *p) < n ||
		    memcmp(*p, json_object_get_string(o), n) != 0)
			return false;
		*p += n;
		return true;
	case json_type_array:
		if (json_object_array_length(o) != n)
			return false;
		for (size_t i = 0; i < n; i++)
			if (!snap_same(p, end, json_object_array_get_idx(o, i)))
				return false;
		return true;
	case json_type_object:
		if ((size_t)json_object_object_length(o) != n)
			return false;
		json_object_object_foreach(o, k, v) {
			if ((size_t)(end - *p) < sizeof len)
				return false;
			memcpy(&len, *p, sizeof len);
			*p += sizeof len;
			if ((size_t)(end - *p) < len || strncmp(k, *p, len) != 0 || k[len] != '\0')
				return false;
			*p += len;
			if (!snap_same(p, end, v))
				return false;
		}
		return true;
	default: {
		/* a number: the text it prints as */
		struct ph_buf num;
		bool same;
		ph_buf_init(&num);
		ph_json_write(&num, o);
		same = num.len == n && (size_t)(end - *p) >= n && memcmp(*p, num.data ? num.data : "", n) == 0;
		ph_buf_free(&num);
		*p += same ? n : 0;
		return same;
	}
	}
}

/* Whether the memo's kept value still holds what it held when kept (it
 * prints as it did then). */
static bool
memo_intact(struct ph_json_memo *m)
{
	const char *p = m->snap.data, *end = p + m->snap.len;
	return p != NULL && snap_same(&p, end, m->obj) && p == end;
}

static void
memo_drop(struct ph_json_memo *m)
{
	json_object_put(m->obj);
	m->obj = NULL;
}

/* Reads the value (at j->p) of the member key (klen bytes) of an object
 * level containers deep: from the memo when it is the memo's member with
 * the text kept, else parsed (and then kept when it is an object small
 * enough). */
static bool
jp_member_value(struct jp *j, int level, const char *key, size_t klen, struct json_object **v)
{
	struct ph_json_memo *m = j->memo;
	const unsigned char *start = j->p;
	bool nul_before;
	if (m == NULL || level + 1 != m->level || *j->p != '{' || strlen(m->key) != klen ||
	    memcmp(m->key, key, klen) != 0)
		return level + 1 < j->depth && jp_value(j, level + 1, v);
	if (m->obj && m->depth == j->depth && (size_t)(j->end - j->p) >= m->text.len &&
	    memcmp(j->p, m->text.data, m->text.len) == 0) {
		if (memo_intact(m)) {
			/* an object's text ends at its brace: these bytes are
			 * the value, whatever follows */
			*v = json_object_get(m->obj);
			j->p += m->text.len;
			j->key_nul |= m->key_nul;
			m->hits++;
			return true;
		}
		memo_drop(m); /* changed since: read again */
	}
	nul_before = j->key_nul;
	j->key_nul = false;
	if (level + 1 >= j->depth || !jp_value(j, level + 1, v)) {
		j->key_nul |= nul_before;
		return false;
	}
	if ((size_t)(j->p - start) <= PH_JSON_MEMO_MAX) {
		memo_drop(m);
		ph_buf_reset(&m->text);
		ph_buf_add(&m->text, start, (size_t)(j->p - start));
		ph_buf_reset(&m->snap);
		snap_write(&m->snap, *v);
		m->obj = json_object_get(*v);
		m->depth = j->depth;
		m->key_nul = j->key_nul;
	}
	j->key_nul |= nul_before;
	return true;
}

static bool
jp_object(struct jp *j, int level, struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *v;
	char kbuf[KEY_STACK], *key;
	const char *k;
	size_t klen;
	j->p++;
	jp_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		*out = o;
		return true;
	}
	for (;;) {
		if (j->p >= j->end || *j->p != '"' || (k = jp_string(j, &klen)) == NULL)
			break;
		if (memchr(k, '\0', klen) != NULL) {
			j->key_nul = true;
			klen = strlen(k); /* json-c's key: up to the NUL */
		}
		key = klen < sizeof kbuf ? kbuf : ph_xmalloc(klen + 1);
		memcpy(key, k, klen);
		key[klen] = '\0';
		jp_ws(j);
		if (j->p >= j->end || *j->p != ':') {
			if (key != kbuf)
				free(key);
			break;
		}
		j->p++;
		jp_ws(j);
		if (j->p >= j->end || !jp_member_value(j, level, key, klen, &v)) {
			if (key != kbuf)
				free(key);
			break;
		}
		object_add(o, key, klen, v);
		if (key != kbuf)
			free(key);
		jp_ws(j);
		if (j->p >= j->end)
			break;
		if (*j->p == '}') {
			j->p++;
			*out = o;
			return true;
		}
		if (*j->p != ',')
			break;
		j->p++;
		jp_ws(j);
	}
	json_object_put(o);
	return false;
}

static bool
jp_word(struct jp *j, const char *w, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return false;
	j->p += n;
	return true;
}

/* Reads the value at j->p (no whitespace before it), level containers deep. */
static bool
jp_value(struct jp *j, int level, struct json_object **out)
{
	const char *str;
	size_t len;
	*out = NULL;
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
		return jp_object(j, level, out);
	case '[':
		return jp_array(j, level, out);
	case '"':
		if ((str = jp_string(j, &len)) == NULL)
			return false;
		*out = json_object_new_string_len(str, (int)len);
		return *out != NULL;
	case 't':
		return jp_word(j, "true", 4) && (*out = json_object_new_boolean(1)) != NULL;
	case 'f':
		return jp_word(j, "false", 5) && (*out = json_object_new_boolean(0)) != NULL;
	case 'n':
		return jp_word(j, "null", 4);
	default:
		return (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) && jp_number(j, out);
	}
}

/* The scratch buffer of the last parse, kept for the next (unless a large
 * document made it large). */
static struct ph_kept kept_scratch;

bool
ph_json_parse_ex(const char *s, size_t len, int depth, struct json_object **out, bool *key_nul)
{
	return ph_json_parse_memo(s, len, depth, out, key_nul, NULL);
}

void
ph_json_memo_free(struct ph_json_memo *m)
{
	memo_drop(m);
	ph_buf_free(&m->text);
	ph_buf_free(&m->snap);
}

bool
ph_json_parse_memo(const char *s, size_t len, int depth, struct json_object **out, bool *key_nul,
		   struct ph_json_memo *m)
{
	struct jp j;
	struct json_object *o = NULL;
	bool ok, kept;
	*out = NULL;
	if (key_nul)
		*key_nul = false;
	if (s == NULL || len > INT32_MAX || depth < 1)
		return false;
	j.p = (const unsigned char *)s;
	j.end = j.p + len;
	j.depth = depth;
	j.key_nul = false;
	j.memo = ph_fast_paths ? m : NULL; /* off: the plain parse */
	kept = ph_kept_take(&kept_scratch, &j.s);
	jp_ws(&j);
	ok = jp_value(&j, 0, &o);
	if (ok) {
		jp_ws(&j);
		ok = j.p == j.end;
	}
	ph_kept_give(&kept_scratch, &j.s, kept, 65536);
	if (!ok) {
		json_object_put(o);
		return false;
	}
	if (key_nul)
		*key_nul = j.key_nul;
	*out = o;
	return true;
}

bool
ph_json_parse(const char *s, size_t len, int depth, struct json_object **out)
{
	return ph_json_parse_ex(s, len, depth, out, NULL);
}

/* ---- the printer ---------------------------------------------------------- */

/* Appends the JSON string of the len bytes at str, escaped as json-c's
 * printer escapes with JSON_C_TO_STRING_NOSLASHESCAPE: the two-letter
 * escapes, other control characters as \u00xx (lowercase), the rest as
 * it is. */
static void
write_str(struct ph_buf *b, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;
	ph_buf_reserve(b, len + 2);
	ph_buf_addc(b, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)str[i];
		char esc[6];
		size_t n = 2;
		if (plain_byte[c] || c >= 0x80)
			continue;
		ph_buf_add(b, str + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		case '\f': esc[1] = 'f'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			n = 6;
		}
		ph_buf_add(b, esc, n);
	}
	ph_buf_add(b, str + run, len - run);
	ph_buf_addc(b, '"');
}

void
ph_json_write(struct ph_buf *b, struct json_object *o)
{
	char num[24];
	int n;
	switch (json_object_get_type(o)) {
	case json_type_null:
		ph_buf_add(b, "null", 4);
		return;
	case json_type_boolean:
		if (json_object_get_boolean(o))
			ph_buf_add(b, "true", 4);
		else
			ph_buf_add(b, "false", 5);
		return;
	case json_type_int:
		/* json-c keeps an integer as int64 or, past INT64_MAX, uint64 */
		if (json_object_get_int64(o) == INT64_MAX && json_object_get_uint64(o) > (uint64_t)INT64_MAX) {
			n = snprintf(num, sizeof num, "%" PRIu64, json_object_get_uint64(o));
			ph_buf_add(b, num, (size_t)n);
		} else {
			ph_buf_addint(b, json_object_get_int64(o));
		}
		return;
	case json_type_string:
		write_str(b, json_object_get_string(o), (size_t)json_object_get_string_len(o));
		return;
	case json_type_array: {
		size_t len = json_object_array_length(o);
		ph_buf_addc(b, '[');
		for (size_t i = 0; i < len; i++) {
			if (i > 0)
				ph_buf_addc(b, ',');
			ph_json_write(b, json_object_array_get_idx(o, i));
		}
		ph_buf_addc(b, ']');
		return;
	}
	case json_type_object: {
		bool first = true;
		ph_buf_addc(b, '{');
		json_object_object_foreach(o, k, v) {
			if (!first)
				ph_buf_addc(b, ',');
			first = false;
			write_str(b, k, strlen(k));
			ph_buf_addc(b, ':');
			ph_json_write(b, v);
		}
		ph_buf_addc(b, '}');
		return;
	}
	case json_type_double:
	default: {
		/* json-c's own text: a parsed number prints as it was written,
		 * a computed one in json-c's format */
		size_t len;
		const char *t = ph_json_text(o, &len);
		ph_buf_add(b, t, len);
		return;
	}
	}
}

const char *
ph_json_text(struct json_object *o, size_t *len)
{
	return json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
						 len);
}

void
ph_jset(struct json_object *o, const char *key, struct json_object *v)
{
	object_add(o, key, strlen(key), v);
}

bool
ph_jget_ex(struct json_object *o, const char *key, struct json_object **v)
{
	struct lh_table *t = json_object_get_object(o); /* NULL: not an object */
	struct lh_entry *e;
	size_t seen;
	bool more;
	if (t == NULL) {
		if (v)
			*v = NULL;
		return false;
	}
	e = small_entry(t, key, &seen, &more);
	if (more)
		return json_object_object_get_ex(o, key, v); /* a large object: by the hash */
	if (v)
		*v = e ? lh_entry_v(e) : NULL;
	return e != NULL;
}

struct json_object *
ph_jget(struct json_object *o, const char *key)
{
	struct json_object *v;
	ph_jget_ex(o, key, &v);
	return v;
}

bool
ph_jhas(struct json_object *o, const char *key)
{
	return ph_jget_ex(o, key, NULL);
}

const char *
ph_jstr(struct json_object *o, const char *key)
{
	struct json_object *v = ph_jget(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool
ph_text_plain(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	return true;
}

const char *
ph_jtext(struct json_object *o, const char *key)
{
	struct json_object *v = ph_jget(o, key);
	if (v == NULL || !json_object_is_type(v, json_type_string) ||
	    !ph_text_plain(json_object_get_string(v), (size_t)json_object_get_string_len(v)))
		return NULL;
	return json_object_get_string(v);
}

bool
ph_jstr_nul(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       memchr(json_object_get_string(v), '\0', (size_t)json_object_get_string_len(v)) != NULL;
}

/* Skips the string whose body starts at s[*i] (after the opening quote),
 * leaving *i after the closing quote. Returns true when it holds \u0000. */
static bool
skip_string(const char *s, size_t len, size_t *i)
{
	bool nul = false;
	while (*i < len && s[*i] != '"') {
		if (s[*i] == '\\') {
			if (len - *i > 5 && memcmp(s + *i + 1, "u0000", 5) == 0)
				nul = true;
			(*i)++;
		}
		(*i)++;
	}
	(*i)++;
	return nul;
}

bool
ph_json_key_nul(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t j;
		if (s[i++] != '"' || !skip_string(s, len, &i))
			continue;
		for (j = i; j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n'); j++)
			;
		if (j < len && s[j] == ':')
			return true;
	}
	return false;
}

/* ph_utf8_valid over s, which may hold U+0000: each NUL-free stretch on
 * its own. */
bool
ph_utf8_valid_nul(const char *s, size_t len)
{
	while (len > 0) {
		const char *nul = memchr(s, '\0', len);
		size_t n = nul ? (size_t)(nul - s) : len;
		if (!ph_utf8_valid(s, n))
			return false;
		if (nul == NULL)
			break;
		s += n + 1;
		len -= n + 1;
	}
	return true;
}

bool
ph_json_utf8_valid(struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_string:
		return ph_utf8_valid_nul(json_object_get_string(o), (size_t)json_object_get_string_len(o));
	case json_type_array:
		for (size_t i = 0, n = json_object_array_length(o); i < n; i++)
			if (!ph_json_utf8_valid(json_object_array_get_idx(o, i)))
				return false;
		return true;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			if (!ph_utf8_valid(k, strlen(k)) || !ph_json_utf8_valid(v))
				return false;
		}
		return true;
	}
	default:
		return true;
	}
}
