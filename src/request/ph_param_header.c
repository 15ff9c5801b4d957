/* ph_param_header.c: x-mcp-header declarations found in an input schema
 * and checked (ph_param_header.h). */
#include "first.h"
#include "ph_param_header.h"
#include "ph_json.h"
#include "ph_util.h"
#include <ctype.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
