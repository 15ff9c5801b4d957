/* ph_schema.h: JSON Schema for tool arguments and tool output.
 *
 * Schemas are compiled once at load (regular expressions compiled, local
 * $refs resolved, bounds checked) and then applied per call: defaults first,
 * then validation with messages a model can act on
 * ("Missing required field: study_id", "Field tags[1]: expected string,
 * got 42", "Field limit: must be <= 100"). The subset of 2020-12 covered is
 * listed in phantom.yaml(5); unknown keywords are annotations and ignored.
 *
 * The field DSL of phantom.yaml (`input:`) becomes a JSON Schema in
 * conf/ph_fields.c; the x-mcp-header annotations of a schema are read in
 * request/ph_param_header.c. */
#ifndef PH_SCHEMA_H
#define PH_SCHEMA_H
#include "first.h"
#include "ph_util.h"

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

/* True when d is a finite number without fractional part. */
bool ph_integral(double d);
/* JSON equality as JSON Schema defines it (1 == 1.0, objects unordered). */
bool ph_json_equal(struct json_object *a, struct json_object *b);
/* Appends a short rendering of v (compact JSON, cut at max bytes with "..."). */
void ph_json_brief(struct ph_buf *b, struct json_object *v, size_t max);
#endif
