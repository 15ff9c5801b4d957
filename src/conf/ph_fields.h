/* ph_fields.h: the field DSL of phantom.yaml (a tool's `input:`, the
 * short way to write its arguments' JSON Schema; phantom.yaml(5), FIELDS). */
#ifndef PH_FIELDS_H
#define PH_FIELDS_H
#include "first.h"
#include "ph_yaml.h"

struct json_object;

/* Turns the field DSL (a YAML map of name -> field spec) into a JSON Schema
 * object (caller puts). On error returns NULL, err names the field and *line
 * its line. */
struct json_object *ph_schema_from_fields(const struct ph_ynode *fields, char *err, size_t errsz,
					  int *line);
#endif
