/* ph_schema.h: JSON Schema for tool arguments and tool output.
 *
 * Schemas are compiled once at load (regular expressions compiled, local
 * $refs resolved, bounds checked) and then applied per call: defaults first,
 * then validation with messages a model can act on
 * ("Missing required field: study_id", "Field tags[1]: expected string,
 * got 42", "Field limit: must be <= 100"). The subset of 2020-12 covered is
 * listed in phantom.yaml(5); unknown keywords are annotations and ignored.
 *
 * The field DSL of phantom.yaml (`input:`) is turned into a JSON Schema here
 * too, and the x-mcp-header annotations of a schema are extracted and checked
 * (mcp-wire §6.3). */
#ifndef PH_SCHEMA_H
#define PH_SCHEMA_H
#include "first.h"
#include "ph_util.h"
#include "ph_yaml.h"

struct json_object;
struct ph_schema;

/* Bounds that keep a hostile or careless schema cheap. */
#define PH_SCHEMA_MAX_NODES 4096
#define PH_SCHEMA_MAX_BRANCHES 64 /* anyOf/oneOf/allOf entries */
#define PH_SCHEMA_MAX_DEPTH 64    /* nesting while validating */

/* Compiles schema (borrowed; the compiled form keeps a reference). Returns
 * the compiled schema (free with ph_schema_free) or NULL with a message in
 * err naming the keyword and its JSON pointer. */
struct ph_schema *ph_schema_compile(struct json_object *schema, char *err, size_t errsz);
void ph_schema_free(struct ph_schema *s);
/* The JSON the schema was compiled from (borrowed). */
struct json_object *ph_schema_json(const struct ph_schema *s);

/* Inserts a copy of each "default" for an absent property, in inst and in
 * the objects and array items it contains. Values present are never touched. */
void ph_schema_defaults(const struct ph_schema *s, struct json_object *inst);
/* True when the schema has a default anywhere (ph_schema_defaults may then
 * add to an instance; else it never changes one). */
bool ph_schema_has_defaults(const struct ph_schema *s);
/* Validates inst. Appends at most max messages to errs, separated by "; ".
 * Returns the number of problems found (0: valid). */
int ph_schema_validate(const struct ph_schema *s, struct json_object *inst, struct ph_buf *errs,
		       int max);

/* Turns the field DSL (a YAML map of name -> field spec) into a JSON Schema
 * object (caller puts). On error returns NULL, err names the field and *line
 * its line. */
struct json_object *ph_schema_from_fields(const struct ph_ynode *fields, char *err, size_t errsz,
					  int *line);

/* One x-mcp-header declaration: the argument at path (object keys from the
 * root) is mirrored in the header Mcp-Param-<name>. */
enum ph_header_type { PH_HT_STRING, PH_HT_INTEGER, PH_HT_BOOLEAN };
struct ph_param_header {
	char *name;   /* as declared ("Region") */
	char *cgi;    /* CGI variable: "HTTP_MCP_PARAM_REGION" */
	char **path;  /* property names from the root */
	size_t depth;
	char *dotted; /* "location.region", for messages */
	enum ph_header_type type;
};
/* Finds and checks every x-mcp-header of an input schema: a non-empty name
 * of letters, digits and '-', unique ignoring case, on a string, integer or
 * boolean property reached from the root through "properties" only. Returns
 * 0 with the list (caller frees with ph_param_headers_free; NULL/0 when
 * none), or -1 with a message in err. */
int ph_schema_headers(struct json_object *schema, struct ph_param_header **out, size_t *n,
		      char *err, size_t errsz);
void ph_param_headers_free(struct ph_param_header *h, size_t n);

/* True when d is a finite number without fractional part. */
bool ph_integral(double d);
/* JSON equality as JSON Schema defines it (1 == 1.0, objects unordered). */
bool ph_json_equal(struct json_object *a, struct json_object *b);
/* Appends a short rendering of v (compact JSON, cut at max bytes with "..."). */
void ph_json_brief(struct ph_buf *b, struct json_object *v, size_t max);
#endif
