/* ph_core.h: helpers of the MCP core shared with unit tests and fuzzers. */
#ifndef PH_CORE_H
#define PH_CORE_H
#include "first.h"
/* Decodes an MCP header value written as =?base64?...?=. Returns 0 with *out
 * (caller frees), 1 when the value is a literal, -1 on bad base64. */
int ph_header_decode(const char *v, size_t n, char **out);
#endif
