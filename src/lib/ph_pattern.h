/* ph_pattern.h: the regular expressions of JSON Schema ("pattern",
 * "patternProperties"): ECMA-262 syntax, translated to a POSIX extended
 * expression (the escapes \d \w \s and their negations, inside and outside
 * brackets; what has no POSIX form is refused with the reason) and compiled
 * with regcomp. */
#ifndef PH_PATTERN_H
#define PH_PATTERN_H
#include "first.h"
#include <regex.h>

/* Compiles the ECMA-262 pattern src into re (the caller regfrees it after
 * a success). Returns 0, or -1 with a reason in *why, left NULL when it is
 * regcomp that refused the translation. */
int ph_pattern_compile(const char *src, regex_t *re, const char **why);
#endif
