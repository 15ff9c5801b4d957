/* ph_param_header.h: the x-mcp-header annotations of a tool's input schema
 * (mcp-wire section 6.3): which arguments a client mirrors in
 * Mcp-Param-<name> headers, read and checked once when the tool is
 * registered, compared with the headers on each call (feature/ph_tools.c). */
#ifndef PH_PARAM_HEADER_H
#define PH_PARAM_HEADER_H
#include "first.h"
#include <stddef.h>

struct json_object;

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
#endif
