/* ph_schema.c: compiled JSON Schema, defaults, validation with readable
 * messages, the field DSL and x-mcp-header extraction. */
#include "first.h"
#include "ph_schema.h"
#include "ph_json.h"
#include <json-c/json.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	T_NULL = 1 << 0,
	T_BOOLEAN = 1 << 1,
	T_OBJECT = 1 << 2,
	T_ARRAY = 1 << 3,
	T_NUMBER = 1 << 4,
	T_STRING = 1 << 5,
	T_INTEGER = 1 << 6,
};

static const struct {
	const char *name;
	unsigned bit;
} type_names[] = {
	{"null", T_NULL}, {"boolean", T_BOOLEAN}, {"object", T_OBJECT}, {"array", T_ARRAY},
	{"number", T_NUMBER}, {"string", T_STRING}, {"integer", T_INTEGER},
};

struct prop {
	const char *name; /* borrowed from the schema JSON */
	struct node *s;
};

struct pattern_prop {
	regex_t re;
	struct node *s;
};

/* One compiled schema object. Children are not owned: every node belongs to
 * the ph_schema that compiled it, so $ref cycles cost nothing to free. */
struct node {
	struct json_object *src; /* borrowed */
	bool never;              /* the schema `false` */
	unsigned types;          /* 0: any */
	struct node *ref;
	struct json_object *enum_, *const_, *def;
	bool has_min, has_max, has_xmin, has_xmax;
	double min, max, xmin, xmax, multiple;
	long long min_len, max_len, min_items, max_items, min_props, max_props; /* -1: none */
	bool unique;
	regex_t *pattern;
	const char *pattern_src;
	struct prop *props;
	size_t nprops;
	struct pattern_prop *pprops;
	size_t npprops;
	const char **required;
	size_t nrequired;
	int addl; /* 0: any, 1: forbidden, 2: schema */
	struct node *addl_s;
	struct node *items;
	struct node **prefix;
	size_t nprefix;
	struct node *contains;
	struct node **all_of, **any_of, **one_of;
	size_t nall, nany, none;
	struct node *not_, *if_, *then_, *else_;
};

struct ph_schema {
	struct json_object *json;
	struct node **nodes;
	size_t n;
	struct node *root;
	bool has_defaults; /* a node has a "default" */
};

/* ---- JSON helpers ---------------------------------------------------------- */

static bool
is_number(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

bool
ph_integral(double d)
{
	if (!isfinite(d))
		return false;
	if (fabs(d) >= 9.0e18)
		return true; /* past 2^63 every double is an integer */
	return d == (double)(long long)d;
}

/* The nearest integer, for |q| < 9e18 (no libm: one library less mapped in
 * every worker). */
static double
nearest(double q)
{
	return (double)(long long)(q < 0 ? q - 0.5 : q + 0.5);
}

static bool
is_integer(struct json_object *v)
{
	if (json_object_is_type(v, json_type_int))
		return true;
	if (json_object_is_type(v, json_type_double))
		return ph_integral(json_object_get_double(v));
	return false;
}

static double
num(struct json_object *v)
{
	if (json_object_is_type(v, json_type_int))
		return (double)json_object_get_int64(v);
	return json_object_get_double(v);
}

bool
ph_json_equal(struct json_object *a, struct json_object *b)
{
	enum json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
	if (is_number(a) && is_number(b)) {
		if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
			return json_object_get_int64(a) == json_object_get_int64(b);
		return num(a) == num(b);
	}
	if (ta != tb)
		return false;
	switch (ta) {
	case json_type_null:
		return true;
	case json_type_boolean:
		return json_object_get_boolean(a) == json_object_get_boolean(b);
	case json_type_string:
		return json_object_get_string_len(a) == json_object_get_string_len(b) &&
		       memcmp(json_object_get_string(a), json_object_get_string(b),
			      (size_t)json_object_get_string_len(a)) == 0;
	case json_type_array: {
		size_t n = json_object_array_length(a);
		if (n != json_object_array_length(b))
			return false;
		for (size_t i = 0; i < n; i++)
			if (!ph_json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
				return false;
		return true;
	}
	case json_type_object: {
		if (json_object_object_length(a) != json_object_object_length(b))
			return false;
		json_object_object_foreach(a, k, va) {
			struct json_object *vb;
			if (!json_object_object_get_ex(b, k, &vb) || !ph_json_equal(va, vb))
				return false;
		}
		return true;
	}
	default:
		return false;
	}
}

void
ph_json_brief(struct ph_buf *b, struct json_object *v, size_t max)
{
	size_t len;
	const char *s = json_object_to_json_string_length(
		v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (v == NULL) {
		ph_buf_adds(b, "null");
		return;
	}
	if (len <= max) {
		ph_buf_add(b, s, len);
		return;
	}
	/* cut on a UTF-8 boundary */
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	ph_buf_add(b, s, max);
	ph_buf_adds(b, "...");
}

static size_t
utf8_length(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

/* ---- compiling ------------------------------------------------------------- */

struct cctx {
	struct ph_schema *s;
	char *err;
	size_t errsz;
	bool failed;
	int depth;
};

static void PH_PRINTF(3, 4)
cfail(struct cctx *c, const char *where, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (c->failed)
		return;
	c->failed = true;
	n = snprintf(c->err, c->errsz, "%s: ", where[0] ? where : "(root)");
	if (n < 0 || (size_t)n >= c->errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errsz - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Writes the POSIX form of the escape "\e" met outside a bracket
 * expression. Returns 0, or -1 with a reason in *why. */
static int
pattern_escape(char e, struct ph_buf *out, const char **why)
{
	switch (e) {
	case 'd': ph_buf_adds(out, "[0-9]"); break;
	case 'D': ph_buf_adds(out, "[^0-9]"); break;
	case 'w': ph_buf_adds(out, "[A-Za-z0-9_]"); break;
	case 'W': ph_buf_adds(out, "[^A-Za-z0-9_]"); break;
	case 's': ph_buf_adds(out, "[[:space:]]"); break;
	case 'S': ph_buf_adds(out, "[^[:space:]]"); break;
	case 't': ph_buf_addc(out, '\t'); break;
	case 'n': ph_buf_addc(out, '\n'); break;
	case 'r': ph_buf_addc(out, '\r'); break;
	case '\0': *why = "ends with a backslash"; return -1;
	default:
		if (strchr(".\\/-[](){}*+?|^$", e) == NULL) {
			*why = "uses an escape POSIX regular expressions do not have";
			return -1;
		}
		if (e == '/' || e == '-')
			ph_buf_addc(out, e);
		else {
			ph_buf_addc(out, '\\');
			ph_buf_addc(out, e);
		}
	}
	return 0;
}

/* A bracket expression being collected: its members in set (owned), and
 * the characters POSIX wants in fixed places kept aside as flags. */
struct bracket {
	struct ph_buf set;
	bool neg, rbr, dash, caret;
};

/* Adds the escape "\e" met inside a bracket expression to b. Returns 0, or
 * -1 with a reason in *why. */
static int
bracket_escape(struct bracket *b, char e, const char **why)
{
	switch (e) {
	case 'd': ph_buf_adds(&b->set, "0-9"); break;
	case 'w': ph_buf_adds(&b->set, "A-Za-z0-9_"); break;
	case 's': ph_buf_adds(&b->set, "[:space:]"); break;
	case 't': ph_buf_addc(&b->set, '\t'); break;
	case 'n': ph_buf_addc(&b->set, '\n'); break;
	case 'r': ph_buf_addc(&b->set, '\r'); break;
	case ']': b->rbr = true; break;
	case '-': b->dash = true; break;
	case '^': b->caret = true; break;
	case '\\': ph_buf_addc(&b->set, '\\'); break;
	case '\0': *why = "ends with a backslash"; return -1;
	default:
		if (strchr("./[(){}*+?|$", e) == NULL) {
			*why = "uses an escape POSIX bracket expressions do not have";
			return -1;
		}
		ph_buf_addc(&b->set, e);
	}
	return 0;
}

/* Collects into b the bracket expression that opens at p[i]. Returns 0
 * with *end the index of its closing ']', or -1 with a reason in *why. */
static int
bracket_collect(const char *p, size_t i, struct bracket *b, size_t *end, const char **why)
{
	size_t j = i + 1, first;
	if (p[j] == '^') {
		b->neg = true;
		j++;
	}
	first = j; /* a '-' here is a member, as is one before the ']' */
	if (p[j] == ']') {
		b->rbr = true;
		j++;
	}
	for (; p[j] && p[j] != ']'; j++) {
		char c = p[j];
		if (c == '[' && p[j + 1] == ':') {
			const char *tail = strstr(p + j, ":]");
			if (tail == NULL) {
				*why = "has an unterminated character class";
				return -1;
			}
			ph_buf_add(&b->set, p + j, (size_t)(tail + 2 - (p + j)));
			j = (size_t)(tail + 1 - p);
		} else if (c == '\\') {
			if (bracket_escape(b, p[++j], why) != 0)
				return -1;
		} else if (c == '-' && (p[j + 1] == ']' || j == first)) {
			b->dash = true;
		} else if (c == '^') {
			b->caret = true;
		} else {
			ph_buf_addc(&b->set, c);
		}
	}
	if (p[j] != ']') {
		*why = "has an unterminated bracket expression";
		return -1;
	}
	*end = j;
	return 0;
}

/* Writes the collected b the way POSIX wants it: ']' first, '-' last, '^'
 * not first; a set of a lone '^' becomes an escaped '^'. */
static void
bracket_write(const struct bracket *b, struct ph_buf *out)
{
	if (!b->neg && !b->rbr && !b->dash && b->set.len == 0 && b->caret) {
		ph_buf_adds(out, "\\^");
		return;
	}
	ph_buf_addc(out, '[');
	if (b->neg)
		ph_buf_addc(out, '^');
	if (b->rbr)
		ph_buf_addc(out, ']');
	if (b->set.len)
		ph_buf_add(out, b->set.data, b->set.len);
	if (b->caret)
		ph_buf_addc(out, '^');
	if (b->dash)
		ph_buf_addc(out, '-');
	ph_buf_addc(out, ']');
}

/* Translates the bracket expression that opens at p[i]. Returns 0 with *end
 * the index of its closing ']', or -1 with a reason in *why. */
static int
pattern_bracket(const char *p, size_t i, struct ph_buf *out, size_t *end, const char **why)
{
	struct bracket b = {.neg = false};
	int rc;
	ph_buf_init(&b.set);
	rc = bracket_collect(p, i, &b, end, why);
	if (rc == 0)
		bracket_write(&b, out);
	ph_buf_free(&b.set);
	return rc;
}

/* ECMA-262 patterns (what JSON Schema uses) are turned into POSIX extended
 * regular expressions: \d \w \s and their negations, \t \n \r, escaped
 * punctuation and bracket expressions are translated; anything POSIX cannot
 * express (lookaround, backreferences, lazy quantifiers) is refused. Returns
 * 0 with the translation in out, or -1 with a reason in *why. */
static int
translate_pattern(const char *p, struct ph_buf *out, const char **why)
{
	for (size_t i = 0; p[i]; i++) {
		char ch = p[i];
		if (ch == '\\') {
			if (pattern_escape(p[++i], out, why) != 0)
				return -1;
		} else if (ch == '[') {
			if (pattern_bracket(p, i, out, &i, why) != 0)
				return -1;
		} else if (ch == '(' && p[i + 1] == '?') {
			*why = "uses a group construct POSIX regular expressions do not have";
			return -1;
		} else if ((ch == '*' || ch == '+' || ch == '?' || ch == '}') && p[i + 1] == '?') {
			*why = "uses a lazy quantifier POSIX regular expressions do not have";
			return -1;
		} else {
			ph_buf_addc(out, ch);
		}
	}
	return 0;
}

/* Compiles the ECMA-262 pattern src into re (the caller regfrees it after
 * a success). Returns 0, or -1 with a reason in *why, left NULL when it is
 * regcomp that refused the translation. */
static int
compile_regex(const char *src, regex_t *re, const char **why)
{
	struct ph_buf b;
	int rc = 0;
	ph_buf_init(&b);
	if (translate_pattern(src, &b, why) != 0 ||
	    regcomp(re, b.data ? b.data : "", REG_EXTENDED | REG_NOSUB) != 0)
		rc = -1;
	ph_buf_free(&b);
	return rc;
}

static struct node *compile_node(struct cctx *c, struct json_object *j, const char *where);

static struct node *
node_new(struct cctx *c, struct json_object *src)
{
	struct node *n;
	if (c->s->n >= PH_SCHEMA_MAX_NODES) {
		cfail(c, "", "more than %d schema objects", PH_SCHEMA_MAX_NODES);
		return NULL;
	}
	n = ph_xcalloc(1, sizeof *n);
	n->src = src;
	n->min_len = n->max_len = n->min_items = n->max_items = n->min_props = n->max_props = -1;
	c->s->nodes = ph_xrealloc(c->s->nodes, (c->s->n + 1) * sizeof *c->s->nodes);
	c->s->nodes[c->s->n++] = n;
	return n;
}

static struct node *
find_compiled(struct cctx *c, struct json_object *j)
{
	for (size_t i = 0; i < c->s->n; i++)
		if (c->s->nodes[i]->src == j)
			return c->s->nodes[i];
	return NULL;
}

/* Resolves "#", "#/a/b" (JSON pointer) or "#anchor" inside the root. */
static struct json_object *
find_anchor(struct json_object *j, const char *name, int depth)
{
	if (depth > 64)
		return NULL;
	if (json_object_is_type(j, json_type_object)) {
		struct json_object *a;
		if (json_object_object_get_ex(j, "$anchor", &a) && json_object_is_type(a, json_type_string) &&
		    strcmp(json_object_get_string(a), name) == 0)
			return j;
		json_object_object_foreach(j, k, v) {
			struct json_object *f;
			(void)k;
			if ((f = find_anchor(v, name, depth + 1)) != NULL)
				return f;
		}
	} else if (json_object_is_type(j, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(j); i++) {
			struct json_object *f = find_anchor(json_object_array_get_idx(j, i), name, depth + 1);
			if (f)
				return f;
		}
	}
	return NULL;
}

static struct json_object *
resolve_ref(struct json_object *root, const char *ref)
{
	struct json_object *cur = root;
	const char *p;
	if (strcmp(ref, "#") == 0)
		return root;
	if (strncmp(ref, "#/", 2) != 0)
		return ref[0] == '#' && ref[1] ? find_anchor(root, ref + 1, 0) : NULL;
	p = ref + 2;
	while (cur != NULL) {
		size_t l = strcspn(p, "/");
		char tok[256];
		size_t o = 0;
		for (size_t i = 0; i < l && o < sizeof tok - 1; i++) {
			if (p[i] == '~' && p[i + 1] == '1') {
				tok[o++] = '/';
				i++;
			} else if (p[i] == '~' && p[i + 1] == '0') {
				tok[o++] = '~';
				i++;
			} else {
				tok[o++] = p[i];
			}
		}
		tok[o] = '\0';
		if (json_object_is_type(cur, json_type_object)) {
			struct json_object *nx;
			if (!json_object_object_get_ex(cur, tok, &nx))
				return NULL;
			cur = nx;
		} else if (json_object_is_type(cur, json_type_array)) {
			long long idx;
			const char *e;
			if (ph_strtonum(tok, 0, INT32_MAX, &idx, &e) != 0 ||
			    (size_t)idx >= json_object_array_length(cur))
				return NULL;
			cur = json_object_array_get_idx(cur, (size_t)idx);
		} else {
			return NULL;
		}
		if (p[l] == '\0')
			return cur;
		p += l + 1;
	}
	return NULL;
}

static bool
get_number(struct cctx *c, struct json_object *j, const char *kw, const char *where, bool *has,
	   double *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(j, kw, &v))
		return true;
	if (!is_number(v)) {
		cfail(c, where, "%s must be a number", kw);
		return false;
	}
	*has = true;
	*out = num(v);
	return true;
}

static bool
get_count(struct cctx *c, struct json_object *j, const char *kw, const char *where, long long *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(j, kw, &v))
		return true;
	if (!is_integer(v) || num(v) < 0) {
		cfail(c, where, "%s must be a non-negative integer", kw);
		return false;
	}
	*out = (long long)num(v);
	return true;
}

static struct node **
compile_list(struct cctx *c, struct json_object *j, const char *kw, const char *where, size_t *n)
{
	struct json_object *v;
	struct node **list;
	char sub[512];
	*n = 0;
	if (!json_object_object_get_ex(j, kw, &v))
		return NULL;
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0) {
		cfail(c, where, "%s must be a non-empty array of schemas", kw);
		return NULL;
	}
	if (json_object_array_length(v) > PH_SCHEMA_MAX_BRANCHES) {
		cfail(c, where, "%s has more than %d entries", kw, PH_SCHEMA_MAX_BRANCHES);
		return NULL;
	}
	*n = json_object_array_length(v);
	list = ph_xcalloc(*n, sizeof *list);
	for (size_t i = 0; i < *n; i++) {
		snprintf(sub, sizeof sub, "%s/%s/%zu", where, kw, i);
		list[i] = compile_node(c, json_object_array_get_idx(v, i), sub);
	}
	return list;
}

static struct node *
compile_sub(struct cctx *c, struct json_object *j, const char *kw, const char *where)
{
	struct json_object *v;
	char sub[512];
	if (!json_object_object_get_ex(j, kw, &v))
		return NULL;
	snprintf(sub, sizeof sub, "%s/%s", where, kw);
	return compile_node(c, v, sub);
}

static unsigned
type_bit(const char *name)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(type_names); i++)
		if (strcmp(type_names[i].name, name) == 0)
			return type_names[i].bit;
	return 0;
}

static void
compile_types(struct cctx *c, struct node *n, struct json_object *t, const char *where)
{
	if (json_object_is_type(t, json_type_string)) {
		n->types = type_bit(json_object_get_string(t));
		if (n->types == 0)
			cfail(c, where, "unknown type '%s'", json_object_get_string(t));
		return;
	}
	if (json_object_is_type(t, json_type_array) && json_object_array_length(t) > 0) {
		for (size_t i = 0; i < json_object_array_length(t); i++) {
			struct json_object *e = json_object_array_get_idx(t, i);
			unsigned b = json_object_is_type(e, json_type_string) ? type_bit(json_object_get_string(e)) : 0;
			if (b == 0) {
				cfail(c, where, "type must name JSON types");
				return;
			}
			n->types |= b;
		}
		return;
	}
	cfail(c, where, "type must be a string or an array of strings");
}

static void
compile_object_keywords(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	struct json_object *v;
	char sub[512];
	if (json_object_object_get_ex(j, "properties", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			cfail(c, where, "properties must be an object");
			return;
		}
		n->props = ph_xcalloc((size_t)json_object_object_length(v) + 1, sizeof *n->props);
		json_object_object_foreach(v, k, pv) {
			snprintf(sub, sizeof sub, "%s/properties/%s", where, k);
			n->props[n->nprops].name = k;
			n->props[n->nprops++].s = compile_node(c, pv, sub);
		}
	}
	if (json_object_object_get_ex(j, "patternProperties", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			cfail(c, where, "patternProperties must be an object");
			return;
		}
		n->pprops = ph_xcalloc((size_t)json_object_object_length(v) + 1, sizeof *n->pprops);
		json_object_object_foreach(v, k, pv) {
			const char *why = NULL;
			if (compile_regex(k, &n->pprops[n->npprops].re, &why) != 0) {
				cfail(c, where, "patternProperties key '%s' %s", k, why ? why : "is not a valid regular expression");
				return;
			}
			snprintf(sub, sizeof sub, "%s/patternProperties/%s", where, k);
			n->pprops[n->npprops++].s = compile_node(c, pv, sub);
		}
	}
	if (json_object_object_get_ex(j, "required", &v)) {
		if (!json_object_is_type(v, json_type_array)) {
			cfail(c, where, "required must be an array of strings");
			return;
		}
		n->required = ph_xcalloc(json_object_array_length(v) + 1, sizeof *n->required);
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *e = json_object_array_get_idx(v, i);
			if (!json_object_is_type(e, json_type_string)) {
				cfail(c, where, "required must be an array of strings");
				return;
			}
			n->required[n->nrequired++] = json_object_get_string(e);
		}
	}
	if (json_object_object_get_ex(j, "additionalProperties", &v)) {
		if (json_object_is_type(v, json_type_boolean)) {
			n->addl = json_object_get_boolean(v) ? 0 : 1;
		} else {
			n->addl = 2;
			n->addl_s = compile_sub(c, j, "additionalProperties", where);
		}
	}
	get_count(c, j, "minProperties", where, &n->min_props);
	get_count(c, j, "maxProperties", where, &n->max_props);
}

static void
compile_array_keywords(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	struct json_object *v;
	if (json_object_object_get_ex(j, "prefixItems", &v))
		n->prefix = compile_list(c, j, "prefixItems", where, &n->nprefix);
	if (json_object_object_get_ex(j, "items", &v)) {
		if (json_object_is_type(v, json_type_array)) /* draft 2019 and older */
			n->prefix = compile_list(c, j, "items", where, &n->nprefix);
		else
			n->items = compile_sub(c, j, "items", where);
	}
	n->contains = compile_sub(c, j, "contains", where);
	get_count(c, j, "minItems", where, &n->min_items);
	get_count(c, j, "maxItems", where, &n->max_items);
	if (json_object_object_get_ex(j, "uniqueItems", &v))
		n->unique = json_object_get_boolean(v);
}

/* A boolean schema: true accepts anything, false nothing. Returns the node
 * (owned by the schema), or NULL when there are too many. */
static struct node *
compile_bool(struct cctx *c, struct json_object *j)
{
	struct node *n = node_new(c, j);
	if (n)
		n->never = !json_object_get_boolean(j);
	return n;
}

/* $ref: a reference inside the schema is resolved and compiled; a network
 * $ref is never dereferenced (it stays an annotation). Returns false when
 * the schema fails here. */
static bool
compile_ref(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	struct json_object *v, *t;
	const char *ref;
	if (!json_object_object_get_ex(j, "$ref", &v))
		return true;
	ref = json_object_get_string(v);
	if (!json_object_is_type(v, json_type_string)) {
		cfail(c, where, "$ref must be a string");
		return false;
	}
	if (ref[0] != '#')
		return true;
	t = resolve_ref(c->s->json, ref);
	if (t == NULL) {
		cfail(c, where, "$ref '%s' does not resolve inside the schema", ref);
		return false;
	}
	n->ref = compile_node(c, t, ref);
	return true;
}

/* type, enum, const and default (the last three borrowed from the schema
 * JSON). Returns false when the schema fails here. */
static bool
compile_value_keywords(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	struct json_object *v;
	if (json_object_object_get_ex(j, "type", &v))
		compile_types(c, n, v, where);
	if (json_object_object_get_ex(j, "enum", &v)) {
		if (!json_object_is_type(v, json_type_array)) {
			cfail(c, where, "enum must be an array");
			return false;
		}
		n->enum_ = v;
	}
	if (json_object_object_get_ex(j, "const", &v))
		n->const_ = v;
	if (json_object_object_get_ex(j, "default", &v))
		n->def = v;
	return true;
}

/* exclusiveMinimum or exclusiveMaximum (kw): a number, or in draft 4 a flag
 * that makes the inclusive bound (*has, *bound) exclusive (*has_x, *x). */
static void
compile_exclusive(struct cctx *c, struct json_object *j, const char *kw, const char *where,
		  bool *has, const double *bound, bool *has_x, double *x)
{
	struct json_object *v;
	if (json_object_object_get_ex(j, kw, &v) && json_object_is_type(v, json_type_boolean)) {
		if (json_object_get_boolean(v) && *has) {
			*has_x = true;
			*x = *bound;
			*has = false;
		}
	} else {
		get_number(c, j, kw, where, has_x, x);
	}
}

/* minimum, maximum, their exclusive forms and multipleOf. Returns false
 * when the schema fails here. */
static bool
compile_number_keywords(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	bool has = false;
	get_number(c, j, "minimum", where, &n->has_min, &n->min);
	get_number(c, j, "maximum", where, &n->has_max, &n->max);
	compile_exclusive(c, j, "exclusiveMinimum", where, &n->has_min, &n->min, &n->has_xmin, &n->xmin);
	compile_exclusive(c, j, "exclusiveMaximum", where, &n->has_max, &n->max, &n->has_xmax, &n->xmax);
	get_number(c, j, "multipleOf", where, &has, &n->multiple);
	if (has && !(n->multiple > 0)) {
		cfail(c, where, "multipleOf must be greater than 0");
		return false;
	}
	return true;
}

/* minLength, maxLength and pattern (compiled into n->pattern, owned by n).
 * Returns false when the schema fails here. */
static bool
compile_string_keywords(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	struct json_object *v;
	const char *why = NULL;
	get_count(c, j, "minLength", where, &n->min_len);
	get_count(c, j, "maxLength", where, &n->max_len);
	if (!json_object_object_get_ex(j, "pattern", &v))
		return true;
	if (!json_object_is_type(v, json_type_string)) {
		cfail(c, where, "pattern must be a string");
		return false;
	}
	n->pattern_src = json_object_get_string(v);
	n->pattern = ph_xmalloc(sizeof *n->pattern);
	if (compile_regex(n->pattern_src, n->pattern, &why) != 0) {
		free(n->pattern);
		n->pattern = NULL;
		cfail(c, where, "pattern '%s' %s", n->pattern_src,
		      why ? why : "is not a valid regular expression");
		return false;
	}
	return true;
}

/* allOf, anyOf, oneOf, not and if/then/else. */
static void
compile_logic_keywords(struct cctx *c, struct node *n, struct json_object *j, const char *where)
{
	n->all_of = compile_list(c, j, "allOf", where, &n->nall);
	n->any_of = compile_list(c, j, "anyOf", where, &n->nany);
	n->one_of = compile_list(c, j, "oneOf", where, &n->none);
	n->not_ = compile_sub(c, j, "not", where);
	n->if_ = compile_sub(c, j, "if", where);
	n->then_ = compile_sub(c, j, "then", where);
	n->else_ = compile_sub(c, j, "else", where);
}

/* Compiles the schema j found at where (a JSON pointer for messages), once:
 * a schema object reached again (a $ref cycle) gives the node compiled
 * before. Returns the node (owned by c->s), or NULL after cfail. The
 * keywords are read group by group; the groups after a failed one are
 * skipped. */
static struct node *
compile_node(struct cctx *c, struct json_object *j, const char *where)
{
	struct node *n;
	if (c->failed)
		return NULL;
	if ((n = find_compiled(c, j)) != NULL)
		return n;
	if (json_object_is_type(j, json_type_boolean))
		return compile_bool(c, j);
	if (!json_object_is_type(j, json_type_object)) {
		cfail(c, where, "a schema must be an object or a boolean");
		return NULL;
	}
	if (++c->depth > PH_SCHEMA_MAX_DEPTH) {
		cfail(c, where, "schema nested more than %d levels", PH_SCHEMA_MAX_DEPTH);
		return NULL;
	}
	n = node_new(c, j);
	if (n != NULL && compile_ref(c, n, j, where) && compile_value_keywords(c, n, j, where) &&
	    compile_number_keywords(c, n, j, where) && compile_string_keywords(c, n, j, where)) {
		compile_object_keywords(c, n, j, where);
		compile_array_keywords(c, n, j, where);
		compile_logic_keywords(c, n, j, where);
	}
	c->depth--;
	return n;
}

static void
node_free(struct node *n)
{
	if (n->pattern) {
		regfree(n->pattern);
		free(n->pattern);
	}
	for (size_t i = 0; i < n->npprops; i++)
		regfree(&n->pprops[i].re);
	free(n->pprops);
	free(n->props);
	free(n->required);
	free(n->prefix);
	free(n->all_of);
	free(n->any_of);
	free(n->one_of);
	free(n);
}

void
ph_schema_free(struct ph_schema *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		node_free(s->nodes[i]);
	free(s->nodes);
	json_object_put(s->json);
	free(s);
}

struct ph_schema *
ph_schema_compile(struct json_object *schema, char *err, size_t errsz)
{
	struct ph_schema *s = ph_xcalloc(1, sizeof *s);
	struct cctx c = {s, err, errsz, false, 0};
	s->json = json_object_get(schema);
	s->root = compile_node(&c, schema, "");
	if (c.failed || s->root == NULL) {
		if (!c.failed)
			snprintf(err, errsz, "(root): not a schema");
		ph_schema_free(s);
		return NULL;
	}
	for (size_t i = 0; i < s->n; i++)
		s->has_defaults = s->has_defaults || s->nodes[i]->def != NULL;
	return s;
}

struct json_object *
ph_schema_json(const struct ph_schema *s)
{
	return s->json;
}

/* ---- defaults ---------------------------------------------------------------- */

static struct node *
deref(struct node *n)
{
	for (int i = 0; n && n->ref && i < 16; i++)
		n = n->ref;
	return n;
}

static void
defaults_node(struct node *n, struct json_object *inst, int depth)
{
	n = deref(n);
	if (n == NULL || depth > PH_SCHEMA_MAX_DEPTH)
		return;
	if (json_object_is_type(inst, json_type_object)) {
		for (size_t i = 0; i < n->nprops; i++) {
			struct node *p = deref(n->props[i].s);
			struct json_object *v;
			if (p == NULL)
				continue;
			if (!ph_jget_ex(inst, n->props[i].name, &v) && p->def != NULL) {
				struct json_object *copy = NULL;
				if (json_object_deep_copy(p->def, &copy, NULL) == 0)
					json_object_object_add(inst, n->props[i].name, copy);
				v = copy;
			}
			if (v != NULL)
				defaults_node(p, v, depth + 1);
		}
		for (size_t i = 0; i < n->nall; i++)
			defaults_node(n->all_of[i], inst, depth + 1);
	} else if (json_object_is_type(inst, json_type_array) && n->items) {
		for (size_t i = 0; i < json_object_array_length(inst); i++)
			defaults_node(n->items, json_object_array_get_idx(inst, i), depth + 1);
	}
}

bool
ph_schema_has_defaults(const struct ph_schema *s)
{
	return s != NULL && s->has_defaults;
}

void
ph_schema_defaults(const struct ph_schema *s, struct json_object *inst)
{
	defaults_node(s->root, inst, 0);
}

/* ---- validation -------------------------------------------------------------- */

struct vctx {
	struct ph_buf *errs; /* NULL: only count (the trial runs of anyOf & co) */
	int count, max, depth;
};

static void PH_PRINTF(3, 4)
verr(struct vctx *v, const struct ph_buf *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	v->count++;
	if (v->errs == NULL || v->count > v->max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (v->errs->len)
		ph_buf_adds(v->errs, "; ");
	if (path->len)
		ph_buf_printf(v->errs, "Field %s: %s", path->data, msg);
	else
		ph_buf_printf(v->errs, "Arguments: %s", msg);
}

/* "Missing required field: a.b" and "Unknown field: a.b" name the field in
 * the message itself. */
static void
verr_field(struct vctx *v, const struct ph_buf *path, const char *what, const char *name)
{
	v->count++;
	if (v->errs == NULL || v->count > v->max)
		return;
	if (v->errs->len)
		ph_buf_adds(v->errs, "; ");
	ph_buf_printf(v->errs, "%s: %s%s%s", what, path->len ? path->data : "", path->len ? "." : "", name);
}

static bool
type_ok(unsigned types, struct json_object *i)
{
	switch (json_object_get_type(i)) {
	case json_type_null: return types & T_NULL;
	case json_type_boolean: return types & T_BOOLEAN;
	case json_type_object: return types & T_OBJECT;
	case json_type_array: return types & T_ARRAY;
	case json_type_string: return types & T_STRING;
	case json_type_int:
	case json_type_double:
		if (types & T_NUMBER)
			return true;
		return (types & T_INTEGER) && is_integer(i);
	}
	return false;
}

static void
fmt_num(char *buf, size_t n, double d)
{
	if (fabs(d) < 1e15 && ph_integral(d))
		snprintf(buf, n, "%.0f", d);
	else
		snprintf(buf, n, "%.17g", d);
}

static void v_node(struct vctx *v, const struct node *s, struct json_object *inst, struct ph_buf *path);

/* True when inst is valid against s; nothing is reported. */
static bool
v_match(struct vctx *parent, const struct node *s, struct json_object *inst, struct ph_buf *path)
{
	struct vctx t = {NULL, 0, 1, parent->depth};
	v_node(&t, s, inst, path);
	return t.count == 0;
}

static void
v_type(struct vctx *v, const struct node *s, struct json_object *inst, const struct ph_buf *path)
{
	struct ph_buf want, got;
	bool first = true;
	ph_buf_init(&want);
	ph_buf_init(&got);
	for (size_t k = 0; k < PH_ARRAY_LEN(type_names); k++) {
		if (!(s->types & type_names[k].bit))
			continue;
		if (!first)
			ph_buf_adds(&want, " or ");
		ph_buf_adds(&want, type_names[k].name);
		first = false;
	}
	ph_json_brief(&got, inst, 60);
	verr(v, path, "expected %s, got %s", want.data, got.data);
	ph_buf_free(&want);
	ph_buf_free(&got);
}

static void
v_number(struct vctx *v, const struct node *s, struct json_object *inst, const struct ph_buf *path)
{
	double d = num(inst);
	char b[64];
	if (s->has_min && d < s->min) {
		fmt_num(b, sizeof b, s->min);
		verr(v, path, "must be >= %s", b);
	}
	if (s->has_max && d > s->max) {
		fmt_num(b, sizeof b, s->max);
		verr(v, path, "must be <= %s", b);
	}
	if (s->has_xmin && d <= s->xmin) {
		fmt_num(b, sizeof b, s->xmin);
		verr(v, path, "must be > %s", b);
	}
	if (s->has_xmax && d >= s->xmax) {
		fmt_num(b, sizeof b, s->xmax);
		verr(v, path, "must be < %s", b);
	}
	if (s->multiple > 0) {
		double q = d / s->multiple;
		if (!isfinite(q) || (fabs(q) < 9.0e18 && fabs(q - nearest(q)) > 1e-9)) {
			fmt_num(b, sizeof b, s->multiple);
			verr(v, path, "must be a multiple of %s", b);
		}
	}
}

static void
v_string(struct vctx *v, const struct node *s, struct json_object *inst, const struct ph_buf *path)
{
	const char *str = json_object_get_string(inst);
	size_t bytes = (size_t)json_object_get_string_len(inst);
	size_t chars = utf8_length(str, bytes);
	if (s->min_len >= 0 && chars < (size_t)s->min_len)
		verr(v, path, "must be at least %lld characters long", s->min_len);
	if (s->max_len >= 0 && chars > (size_t)s->max_len)
		verr(v, path, "must be at most %lld characters long", s->max_len);
	if (s->pattern && (memchr(str, '\0', bytes) != NULL || regexec(s->pattern, str, 0, NULL, 0) != 0))
		verr(v, path, "must match the pattern %s", s->pattern_src);
}

static void
v_array(struct vctx *v, const struct node *s, struct json_object *inst, struct ph_buf *path)
{
	size_t n = json_object_array_length(inst), save = path->len;
	if (s->min_items >= 0 && n < (size_t)s->min_items)
		verr(v, path, "must have at least %lld item%s", s->min_items, s->min_items == 1 ? "" : "s");
	if (s->max_items >= 0 && n > (size_t)s->max_items)
		verr(v, path, "must have at most %lld item%s", s->max_items, s->max_items == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct node *is = i < s->nprefix ? s->prefix[i] : s->items;
		if (is == NULL)
			continue;
		ph_buf_printf(path, "[%zu]", i);
		v_node(v, is, json_object_array_get_idx(inst, i), path);
		path->len = save;
		path->data[save] = '\0';
	}
	if (s->unique) {
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (ph_json_equal(json_object_array_get_idx(inst, i), json_object_array_get_idx(inst, j))) {
					verr(v, path, "items must be unique (items %zu and %zu are equal)", i, j);
					i = j = n;
				}
	}
	if (s->contains) {
		bool any = false;
		for (size_t i = 0; i < n && !any; i++)
			any = v_match(v, s->contains, json_object_array_get_idx(inst, i), path);
		if (!any)
			verr(v, path, "must contain an item matching the given schema");
	}
}

static void
push_key(struct ph_buf *path, const char *k)
{
	if (path->len)
		ph_buf_addc(path, '.');
	ph_buf_adds(path, k);
}

static void
v_object(struct vctx *v, const struct node *s, struct json_object *inst, struct ph_buf *path)
{
	size_t save = path->len;
	size_t np = (size_t)json_object_object_length(inst);
	for (size_t i = 0; i < s->nrequired; i++) {
		struct json_object *x;
		if (!ph_jget_ex(inst, s->required[i], &x))
			verr_field(v, path, "Missing required field", s->required[i]);
	}
	if (s->min_props >= 0 && np < (size_t)s->min_props)
		verr(v, path, "must have at least %lld properties", s->min_props);
	if (s->max_props >= 0 && np > (size_t)s->max_props)
		verr(v, path, "must have at most %lld properties", s->max_props);
	json_object_object_foreach(inst, k, val) {
		bool known = false;
		for (size_t i = 0; i < s->nprops; i++) {
			if (strcmp(s->props[i].name, k) == 0) {
				known = true;
				if (s->props[i].s) {
					push_key(path, k);
					v_node(v, s->props[i].s, val, path);
					path->len = save;
					if (path->data)
						path->data[save] = '\0';
				}
				break;
			}
		}
		for (size_t i = 0; i < s->npprops; i++) {
			if (regexec(&s->pprops[i].re, k, 0, NULL, 0) == 0) {
				known = true;
				push_key(path, k);
				v_node(v, s->pprops[i].s, val, path);
				path->len = save;
				if (path->data)
					path->data[save] = '\0';
			}
		}
		if (known)
			continue;
		if (s->addl == 1) {
			verr_field(v, path, "Unknown field", k);
		} else if (s->addl == 2 && s->addl_s) {
			push_key(path, k);
			v_node(v, s->addl_s, val, path);
			path->len = save;
			if (path->data)
				path->data[save] = '\0';
		}
	}
}

/* enum and const: inst must equal one of the values, or the value. */
static void
v_enum_const(struct vctx *v, const struct node *s, struct json_object *inst, const struct ph_buf *path)
{
	if (s->enum_) {
		bool found = false;
		for (size_t i = 0; i < json_object_array_length(s->enum_) && !found; i++)
			found = ph_json_equal(json_object_array_get_idx(s->enum_, i), inst);
		if (!found) {
			struct ph_buf a, g;
			ph_buf_init(&a);
			ph_buf_init(&g);
			ph_json_brief(&a, s->enum_, 200);
			ph_json_brief(&g, inst, 60);
			verr(v, path, "must be one of %s, got %s", a.data, g.data);
			ph_buf_free(&a);
			ph_buf_free(&g);
		}
	}
	if (s->const_ && !ph_json_equal(s->const_, inst)) {
		struct ph_buf a;
		ph_buf_init(&a);
		ph_json_brief(&a, s->const_, 200);
		verr(v, path, "must be %s", a.data);
		ph_buf_free(&a);
	}
}

/* The keywords for inst's own JSON type (number, string, array, object). */
static void
v_kind(struct vctx *v, const struct node *s, struct json_object *inst, struct ph_buf *path)
{
	if (is_number(inst))
		v_number(v, s, inst, path);
	else if (json_object_is_type(inst, json_type_string))
		v_string(v, s, inst, path);
	else if (json_object_is_type(inst, json_type_array))
		v_array(v, s, inst, path);
	else if (json_object_is_type(inst, json_type_object))
		v_object(v, s, inst, path);
}

/* allOf, anyOf, oneOf, not and if/then/else; only allOf and the chosen
 * then/else branch report their own problems, the rest are trial runs. */
static void
v_logic(struct vctx *v, const struct node *s, struct json_object *inst, struct ph_buf *path)
{
	for (size_t i = 0; i < s->nall; i++)
		v_node(v, s->all_of[i], inst, path);
	if (s->nany) {
		bool any = false;
		for (size_t i = 0; i < s->nany && !any; i++)
			any = v_match(v, s->any_of[i], inst, path);
		if (!any)
			verr(v, path, "must match at least one of the allowed schemas (anyOf)");
	}
	if (s->none) {
		size_t m = 0;
		for (size_t i = 0; i < s->none; i++)
			m += v_match(v, s->one_of[i], inst, path);
		if (m != 1)
			verr(v, path, "must match exactly one of the allowed schemas (oneOf), matched %zu", m);
	}
	if (s->not_ && v_match(v, s->not_, inst, path))
		verr(v, path, "must not match the excluded schema (not)");
	if (s->if_) {
		if (v_match(v, s->if_, inst, path)) {
			if (s->then_)
				v_node(v, s->then_, inst, path);
		} else if (s->else_) {
			v_node(v, s->else_, inst, path);
		}
	}
}

/* Validates inst against s, adding a message for each problem at path (the
 * dotted place of inst, restored before returning). */
static void
v_node(struct vctx *v, const struct node *s, struct json_object *inst, struct ph_buf *path)
{
	if (s == NULL)
		return;
	if (v->errs == NULL && v->count > 0)
		return; /* a trial run stops at the first problem */
	if (++v->depth > PH_SCHEMA_MAX_DEPTH) {
		verr(v, path, "is nested too deeply to validate");
		v->depth--;
		return;
	}
	if (s->never) {
		verr(v, path, "is not allowed");
		goto out;
	}
	if (s->ref)
		v_node(v, s->ref, inst, path);
	if (s->types && !type_ok(s->types, inst)) {
		v_type(v, s, inst, path);
		goto out; /* nothing else is meaningful once the type is wrong */
	}
	v_enum_const(v, s, inst, path);
	v_kind(v, s, inst, path);
	v_logic(v, s, inst, path);
out:
	v->depth--;
}

int
ph_schema_validate(const struct ph_schema *s, struct json_object *inst, struct ph_buf *errs, int max)
{
	/* the path of the value looked at, in memory kept for the next call */
	static struct ph_kept kept_path;
	struct vctx v = {errs, 0, max, 0};
	struct ph_buf path;
	bool kept = ph_kept_take(&kept_path, &path);
	ph_buf_adds(&path, "");
	v_node(&v, s->root, inst, &path);
	ph_kept_give(&kept_path, &path, kept, 4096);
	return v.count;
}

/* ---- the field DSL ------------------------------------------------------------ */

struct dsl {
	char *err;
	size_t errsz;
	int *line;
	bool failed;
};

static void PH_PRINTF(4, 5)
dfail(struct dsl *d, const char *field, int line, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (d->failed)
		return;
	d->failed = true;
	*d->line = line;
	n = snprintf(d->err, d->errsz, "field '%s': ", field);
	if (n < 0 || (size_t)n >= d->errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(d->err + n, d->errsz - (size_t)n, fmt, ap);
	va_end(ap);
}

static const char *const dsl_types[] = {"string", "integer", "number", "boolean", "array", "object"};

static bool
dsl_type_ok(const char *t)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(dsl_types); i++)
		if (strcmp(t, dsl_types[i]) == 0)
			return true;
	return false;
}

/* A YAML value for a field of type t: plain scalars keep their text for
 * string fields (so `default: 007` stays "007"). */
static struct json_object *
dsl_value(const struct ph_ynode *n, const char *t)
{
	if (n->kind == PH_Y_SCALAR && strcmp(t, "string") == 0 && !ph_yaml_is_null(n))
		return json_object_new_string_len(n->str, (int)n->len);
	return ph_yaml_to_json(n);
}

static struct json_object *dsl_field(struct dsl *d, const char *name, const struct ph_ynode *n,
				     bool *required, bool in_items);

static struct json_object *
dsl_fields(struct dsl *d, const char *prefix, const struct ph_ynode *fields)
{
	struct json_object *o = json_object_new_object(), *props = json_object_new_object(),
			   *req = json_object_new_array();
	if (fields->kind != PH_Y_MAP) {
		dfail(d, prefix[0] ? prefix : "input", fields->line, "fields must be a mapping of name to field");
		goto done;
	}
	for (size_t i = 0; i < fields->n && !d->failed; i++) {
		bool required = false;
		char *full = prefix[0] ? ph_xasprintf("%s.%s", prefix, fields->keys[i])
				       : ph_xstrdup(fields->keys[i]);
		struct json_object *f = dsl_field(d, full, fields->vals[i], &required, false);
		free(full);
		if (f == NULL)
			break;
		json_object_object_add(props, fields->keys[i], f);
		if (required)
			json_object_array_add(req, json_object_new_string(fields->keys[i]));
	}
done:
	json_object_object_add(o, "type", json_object_new_string("object"));
	json_object_object_add(o, "properties", props);
	if (json_object_array_length(req))
		json_object_object_add(o, "required", req);
	else
		json_object_put(req);
	return o;
}

static bool
dsl_number(struct dsl *d, const char *field, const struct ph_ynode *v, const char *key,
	   struct json_object *out, const char *as, bool integer)
{
	struct json_object *j = ph_yaml_to_json(v);
	if (!is_number(j) || (integer && (!is_integer(j) || num(j) < 0))) {
		dfail(d, field, v->line, "%s must be %s", key, integer ? "a non-negative integer" : "a number");
		json_object_put(j);
		return false;
	}
	json_object_object_add(out, as, j);
	return true;
}

/* One field mapping being read: what its keys share. */
struct fld {
	struct dsl *d;
	const char *name;      /* the dotted field name, for messages */
	const char *t;         /* the field's type, one of dsl_types */
	struct json_object *o; /* the schema being built (owned by dsl_field) */
	bool *required;        /* where `required:` goes */
	bool in_items;         /* the field is the items of an array */
};

/* `name: integer`: the shorthand for a field of that type. Returns its
 * schema (caller owns it), or NULL after dfail. */
static struct json_object *
dsl_shorthand(struct dsl *d, const char *name, const struct ph_ynode *n)
{
	struct json_object *o;
	if (!dsl_type_ok(n->str)) {
		dfail(d, name, n->line, "unknown type '%s' (string, integer, number, boolean, array, object)", n->str);
		return NULL;
	}
	o = json_object_new_object();
	json_object_object_add(o, "type", json_object_new_string(n->str));
	if (strcmp(n->str, "object") == 0)
		json_object_object_add(o, "properties", json_object_new_object());
	return o;
}

/* The `type:` of the field mapping n, "string" when absent, into *t
 * (borrowed from n). Returns false after dfail. */
static bool
dsl_type(struct dsl *d, const char *name, const struct ph_ynode *n, const char **t)
{
	const struct ph_ynode *tn = ph_yaml_get(n, "type");
	*t = "string";
	if (tn == NULL)
		return true;
	if (tn->kind != PH_Y_SCALAR || !dsl_type_ok(tn->str)) {
		dfail(d, name, tn->line, "type must be one of string, integer, number, boolean, array, object");
		return false;
	}
	*t = tn->str;
	return true;
}

/* The readers of a field's keys: each takes the key k, its value v and the
 * line of the key, and adds to f->o or reports through dfail. */

static void
key_required(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	bool b;
	if (f->in_items)
		dfail(f->d, f->name, line, "required has no meaning for array items");
	else if (ph_yaml_bool(v, &b) != 0)
		dfail(f->d, f->name, line, "required must be true or false");
	else
		*f->required = b;
}

/* description, title and format */
static void
key_text(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	if (v->kind != PH_Y_SCALAR)
		dfail(f->d, f->name, line, "%s must be a string", k);
	else
		json_object_object_add(f->o, k, json_object_new_string(v->str));
}

static void
key_default(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	json_object_object_add(f->o, "default", dsl_value(v, f->t));
}

/* in and enum: the allowed values */
static void
key_enum(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	struct json_object *e;
	if (v->kind != PH_Y_SEQ || v->n == 0) {
		dfail(f->d, f->name, line, "%s must be a non-empty list of allowed values", k);
		return;
	}
	e = json_object_new_array();
	for (size_t j = 0; j < v->n; j++)
		json_object_array_add(e, dsl_value(v->vals[j], f->t));
	json_object_object_add(f->o, "enum", e);
}

/* minimum and maximum */
static void
key_bound(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	if (strcmp(f->t, "integer") != 0 && strcmp(f->t, "number") != 0)
		dfail(f->d, f->name, line, "%s applies to integer and number fields", k);
	else
		dsl_number(f->d, f->name, v, k, f->o, k, false);
}

/* min_length and max_length: characters of a string, items of an array */
static void
key_length(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	bool min = k[1] == 'i';
	if (strcmp(f->t, "string") == 0)
		dsl_number(f->d, f->name, v, k, f->o, min ? "minLength" : "maxLength", true);
	else if (strcmp(f->t, "array") == 0)
		dsl_number(f->d, f->name, v, k, f->o, min ? "minItems" : "maxItems", true);
	else
		dfail(f->d, f->name, line, "%s applies to string and array fields", k);
}

static void
key_pattern(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	if (strcmp(f->t, "string") != 0 || v->kind != PH_Y_SCALAR)
		dfail(f->d, f->name, line, "pattern applies to string fields and must be a string");
	else
		json_object_object_add(f->o, "pattern", json_object_new_string(v->str));
}

/* fields: the members of an object field, merged into f->o */
static void
key_fields(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	struct json_object *sub;
	if (strcmp(f->t, "object") != 0) {
		dfail(f->d, f->name, line, "fields applies to object fields");
		return;
	}
	sub = dsl_fields(f->d, f->name, v);
	json_object_object_foreach(sub, sk, sv) {
		if (strcmp(sk, "type") != 0)
			json_object_object_add(f->o, sk, json_object_get(sv));
	}
	json_object_put(sub);
}

/* items: the field every item of an array field is, named "NAME[]" */
static void
key_items(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	bool dummy = false;
	char *iname;
	struct json_object *it;
	if (strcmp(f->t, "array") != 0) {
		dfail(f->d, f->name, line, "items applies to array fields");
		return;
	}
	iname = ph_xasprintf("%s[]", f->name);
	it = dsl_field(f->d, iname, v, &dummy, true);
	free(iname);
	if (it)
		json_object_object_add(f->o, "items", it);
}

static void
key_header(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	if (v->kind != PH_Y_SCALAR || f->in_items)
		dfail(f->d, f->name, line, "x-mcp-header must be a header name on a top-level or nested field");
	else
		json_object_object_add(f->o, "x-mcp-header", json_object_new_string(v->str));
}

static const struct {
	const char *key;
	void (*read)(struct fld *f, const char *k, const struct ph_ynode *v, int line);
} dsl_keys[] = {
	{"required", key_required}, {"description", key_text}, {"title", key_text},
	{"format", key_text}, {"default", key_default}, {"in", key_enum}, {"enum", key_enum},
	{"minimum", key_bound}, {"maximum", key_bound}, {"min_length", key_length},
	{"max_length", key_length}, {"pattern", key_pattern}, {"fields", key_fields},
	{"items", key_items}, {"x-mcp-header", key_header},
};

/* Reads the key k of the field mapping (type was read before). */
static void
dsl_key(struct fld *f, const char *k, const struct ph_ynode *v, int line)
{
	if (strcmp(k, "type") == 0)
		return;
	for (size_t i = 0; i < PH_ARRAY_LEN(dsl_keys); i++) {
		if (strcmp(k, dsl_keys[i].key) == 0) {
			dsl_keys[i].read(f, k, v, line);
			return;
		}
	}
	dfail(f->d, f->name, line, "unknown key '%s'", k);
}

/* The finished field o (borrowed) must compile (its pattern) and its
 * default fit it. Returns false after dfail at the field's line. */
static bool
dsl_check(struct dsl *d, const char *name, const struct ph_ynode *n, struct json_object *o)
{
	struct json_object *def;
	char cerr[256];
	struct ph_buf e;
	struct ph_schema *s = ph_schema_compile(o, cerr, sizeof cerr);
	ph_buf_init(&e);
	if (s == NULL)
		dfail(d, name, n->line, "%s", cerr);
	else if (json_object_object_get_ex(o, "default", &def) && ph_schema_validate(s, def, &e, 1) != 0)
		dfail(d, name, n->line, "default does not fit the field (%s)", e.data);
	ph_buf_free(&e);
	ph_schema_free(s);
	return !d->failed;
}

/* The JSON Schema of the field `name` declared by n: a type name or a
 * mapping of keys. *required is set from its `required:` key; in_items:
 * the field is the items of an array. Returns the schema (caller owns it),
 * or NULL after dfail. */
static struct json_object *
dsl_field(struct dsl *d, const char *name, const struct ph_ynode *n, bool *required, bool in_items)
{
	struct fld f = {d, name, NULL, NULL, required, in_items};
	if (n->kind == PH_Y_SCALAR)
		return dsl_shorthand(d, name, n);
	if (n->kind != PH_Y_MAP) {
		dfail(d, name, n->line, "expected a type name or a mapping");
		return NULL;
	}
	if (!dsl_type(d, name, n, &f.t))
		return NULL;
	f.o = json_object_new_object();
	json_object_object_add(f.o, "type", json_object_new_string(f.t));
	for (size_t i = 0; i < n->n && !d->failed; i++)
		dsl_key(&f, n->keys[i], n->vals[i], n->key_lines[i]);
	if (!json_object_object_get_ex(f.o, "properties", NULL) && strcmp(f.t, "object") == 0)
		json_object_object_add(f.o, "properties", json_object_new_object());
	if (d->failed || !dsl_check(d, name, n, f.o)) {
		json_object_put(f.o);
		return NULL;
	}
	return f.o;
}

struct json_object *
ph_schema_from_fields(const struct ph_ynode *fields, char *err, size_t errsz, int *line)
{
	struct dsl d = {err, errsz, line, false};
	struct json_object *o = dsl_fields(&d, "", fields);
	if (d.failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---- x-mcp-header ---------------------------------------------------------------- */

void
ph_param_headers_free(struct ph_param_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].cgi);
		for (size_t j = 0; j < h[i].depth; j++)
			free(h[i].path[j]);
		free(h[i].path);
		free(h[i].dotted);
	}
	free(h);
}

struct hctx {
	struct ph_param_header *v;
	size_t n;
	char *err;
	size_t errsz;
	bool failed;
};

static bool
header_name_ok(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
	}
	return true;
}

static void headers_walk(struct hctx *h, struct json_object *j, bool props_only, const char **path,
			 size_t depth, int level);

/* The dotted name of the property at path[0..depth) ("a.b"), into where. */
static void
header_where(const char **path, size_t depth, char *where, size_t size)
{
	where[0] = '\0';
	for (size_t i = 0; i < depth; i++) {
		size_t l = strlen(where);
		snprintf(where + l, size - l, "%s%s", i ? "." : "", path[i]);
	}
}

/* Whether the annotation x of the property at where may stand: reached
 * through "properties" only, a header name, not declared before. Returns
 * false after failing h. */
static bool
header_allowed(struct hctx *h, struct json_object *x, bool props_only, size_t depth, const char *where)
{
	const char *name = json_object_get_string(x);
	if (!props_only || depth == 0) {
		snprintf(h->err, h->errsz, "x-mcp-header '%s' may only annotate a property reached "
			 "through \"properties\" (not items, anyOf/oneOf/allOf/not, if/then/else or $ref)",
			 json_object_is_type(x, json_type_string) ? name : "?");
		h->failed = true;
		return false;
	}
	if (!json_object_is_type(x, json_type_string) || !header_name_ok(name)) {
		snprintf(h->err, h->errsz, "property %s: x-mcp-header must be a non-empty header name "
			 "of letters, digits and '-'", where);
		h->failed = true;
		return false;
	}
	for (size_t i = 0; i < h->n; i++) {
		if (ph_strcaseeq(h->v[i].name, name)) {
			snprintf(h->err, h->errsz, "property %s: x-mcp-header '%s' is also declared by %s "
				 "(names are compared ignoring case)", where, name, h->v[i].dotted);
			h->failed = true;
			return false;
		}
	}
	return true;
}

/* The header type from the "type" of the property schema j, into *type.
 * Returns false after failing h when it is not string, integer or boolean. */
static bool
header_type(struct hctx *h, struct json_object *j, const char *name, const char *where,
	    enum ph_header_type *type)
{
	struct json_object *t = NULL;
	const char *tn;
	json_object_object_get_ex(j, "type", &t);
	tn = t && json_object_is_type(t, json_type_string) ? json_object_get_string(t) : "";
	if (strcmp(tn, "string") == 0)
		*type = PH_HT_STRING;
	else if (strcmp(tn, "integer") == 0)
		*type = PH_HT_INTEGER;
	else if (strcmp(tn, "boolean") == 0)
		*type = PH_HT_BOOLEAN;
	else {
		snprintf(h->err, h->errsz, "property %s: x-mcp-header '%s' needs \"type\" string, "
			 "integer or boolean (not %s)", where, name, tn[0] ? tn : "a missing type");
		h->failed = true;
		return false;
	}
	return true;
}

/* The CGI variable a web server passes the header name in:
 * HTTP_MCP_PARAM_ and the name upper-cased, '-' as '_'. Caller frees. */
static char *
header_cgi(const char *name)
{
	struct ph_buf c;
	ph_buf_init(&c);
	ph_buf_adds(&c, "HTTP_MCP_PARAM_");
	for (const char *p = name; *p; p++)
		ph_buf_addc(&c, *p == '-' ? '_' : (*p >= 'a' && *p <= 'z') ? (char)(*p - 32) : *p);
	return ph_buf_steal(&c);
}

/* Records the x-mcp-header annotation x of the property schema j found at
 * path[0..depth) (strings borrowed, copied into the new entry of h). */
static void
header_add(struct hctx *h, struct json_object *j, struct json_object *x, bool props_only,
	   const char **path, size_t depth)
{
	char where[512];
	const char *name = json_object_get_string(x);
	enum ph_header_type type;
	struct ph_param_header *ph;
	header_where(path, depth, where, sizeof where);
	if (!header_allowed(h, x, props_only, depth, where) || !header_type(h, j, name, where, &type))
		return;
	h->v = ph_xrealloc(h->v, (h->n + 1) * sizeof *h->v);
	ph = &h->v[h->n];
	memset(ph, 0, sizeof *ph);
	ph->type = type;
	ph->name = ph_xstrdup(name);
	ph->cgi = header_cgi(name);
	ph->depth = depth;
	ph->path = ph_xcalloc(depth, sizeof *ph->path);
	for (size_t i = 0; i < depth; i++)
		ph->path[i] = ph_xstrdup(path[i]);
	ph->dotted = ph_xstrdup(where);
	h->n++;
}

/* Keywords whose values are data, not schemas: never walked into. */
static bool
header_data_key(const char *k)
{
	return strcmp(k, "x-mcp-header") == 0 || strcmp(k, "enum") == 0 || strcmp(k, "const") == 0 ||
	       strcmp(k, "default") == 0 || strcmp(k, "examples") == 0;
}

/* Walks on from j into what it holds: each schema under "properties" with
 * its name added to the path, everything else as not properties-only. */
static void
headers_descend(struct hctx *h, struct json_object *j, bool props_only, const char **path,
		size_t depth, int level)
{
	json_object_object_foreach(j, k, v) {
		if (strcmp(k, "properties") == 0 && json_object_is_type(v, json_type_object)) {
			json_object_object_foreach(v, pk, pv) {
				const char *np[66];
				if (depth >= 64)
					break;
				memcpy(np, path, depth * sizeof *np);
				np[depth] = pk;
				headers_walk(h, pv, props_only, np, depth + 1, level + 1);
			}
		} else if (!header_data_key(k)) {
			/* any other way down is not a properties-only path */
			if (json_object_is_type(v, json_type_object)) {
				headers_walk(h, v, false, path, depth, level + 1);
			} else if (json_object_is_type(v, json_type_array)) {
				for (size_t i = 0; i < json_object_array_length(v); i++)
					headers_walk(h, json_object_array_get_idx(v, i), false, path, depth, level + 1);
			}
		}
		if (h->failed)
			return;
	}
}

/* Walks the schema. props_only: every step from the root so far went
 * through "properties". path/depth: the property names on that way. */
static void
headers_walk(struct hctx *h, struct json_object *j, bool props_only, const char **path, size_t depth,
	     int level)
{
	struct json_object *x;
	if (h->failed || level > 64 || !json_object_is_type(j, json_type_object))
		return;
	if (json_object_object_get_ex(j, "x-mcp-header", &x)) {
		header_add(h, j, x, props_only, path, depth);
		if (h->failed)
			return;
	}
	headers_descend(h, j, props_only, path, depth, level);
}

int
ph_schema_headers(struct json_object *schema, struct ph_param_header **out, size_t *n, char *err,
		  size_t errsz)
{
	struct hctx h = {NULL, 0, err, errsz, false};
	const char *path[1] = {NULL};
	headers_walk(&h, schema, true, path, 0, 0);
	if (h.failed) {
		ph_param_headers_free(h.v, h.n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	*out = h.v;
	*n = h.n;
	return 0;
}
