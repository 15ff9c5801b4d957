/* ph_fields.c: the field DSL turned into a JSON Schema (ph_fields.h).
 * Each field is a type name, or a map of a type and keywords (required,
 * description, default, enum, bounds, lengths, pattern, nested fields,
 * items, x-mcp-header); the schema it makes is compiled and checked by
 * lib/ph_schema.c like any other. */
#include "first.h"
#include "ph_fields.h"
#include "ph_json.h"
#include "ph_schema.h"
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	bool number = json_object_is_type(j, json_type_int) || json_object_is_type(j, json_type_double);
	/* json_object_get_double reads an integer as well */
	if (!number || (integer && (!ph_integral(json_object_get_double(j)) || json_object_get_double(j) < 0))) {
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

