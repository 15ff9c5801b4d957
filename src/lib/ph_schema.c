/* ph_schema.c: compiled JSON Schema, defaults, validation with readable
 * messages, the field DSL and x-mcp-header extraction. */
#include "first.h"
#include "ph_schema.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_pattern.h"
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
			if (ph_pattern_compile(k, &n->pprops[n->npprops].re, &why) != 0) {
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
	if (ph_pattern_compile(n->pattern_src, n->pattern, &why) != 0) {
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
	size_t chars = ph_utf8_chars(str, bytes);
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
