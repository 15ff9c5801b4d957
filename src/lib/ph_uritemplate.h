/* ph_uritemplate.h: RFC 6570 level-1 URI templates ("notes://{name}",
 * "db://{table}/{id}.json") parsed once and matched against request URIs.
 *
 * A variable matches one or more characters that level-1 expansion can
 * produce: unreserved characters and %XX escapes. So a variable never spans
 * '/', ':', '?' or '#', and the decoded values a caller gets are checked
 * again by whoever maps them to files (ph_uritemplate_safe_segment). */
#ifndef PH_URITEMPLATE_H
#define PH_URITEMPLATE_H
#include "first.h"

#define PH_URITEMPLATE_MAX_VARS 16
#define PH_URI_MAX 4096

struct ph_uritemplate;

/* Parses a template. Returns NULL with a message in err (operators such as
 * {+x} {?x} and {x*} are refused: level 1 only). */
struct ph_uritemplate *ph_uritemplate_parse(const char *tmpl, char *err, size_t errsz);
void ph_uritemplate_free(struct ph_uritemplate *t);
/* Number and names of the variables, in template order. */
size_t ph_uritemplate_nvars(const struct ph_uritemplate *t);
const char *ph_uritemplate_var(const struct ph_uritemplate *t, size_t i);
/* Index of a variable by name, or -1. */
int ph_uritemplate_find(const struct ph_uritemplate *t, const char *name);

/* Matches uri. Returns true and stores the percent-decoded value of each
 * variable in vals[i] (caller frees each), or false. A value that decodes
 * to a NUL byte does not match. */
bool ph_uritemplate_match(const struct ph_uritemplate *t, const char *uri, char **vals);
/* Frees the values of a successful match. */
void ph_uritemplate_vals_free(const struct ph_uritemplate *t, char **vals);

/* True when a decoded value is usable as one file name below a directory:
 * not empty, not "." or "..", no '/', '\\' or NUL, not starting with '.'. */
bool ph_uritemplate_safe_segment(const char *v);
/* True for a URI Phantom accepts for a resource: a scheme before a ':', no
 * blanks or control characters, at most PH_URI_MAX bytes (NULL: false). */
bool ph_uri_ok(const char *uri);
#endif
