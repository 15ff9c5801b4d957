/* ph_mime.h: what a file is and how its bytes travel in JSON: the MIME type
 * guessed from the extension, whether bytes are text, and base64. */
#ifndef PH_MIME_H
#define PH_MIME_H
#include "first.h"

/* The MIME type for a file name by its extension (lowercased, after the last
 * '.'); "application/octet-stream" when unknown. Static string. */
const char *ph_mime_guess(const char *filename);
/* True for types whose content is text (text/..., JSON, XML, YAML,
 * JavaScript, shell, +json/+xml suffixes). Parameters (";charset=") ignored. */
bool ph_mime_textual(const char *mime);
/* True when the n bytes are well-formed UTF-8 without NUL. */
bool ph_utf8_valid(const char *s, size_t n);
/* Number of Unicode code points in a UTF-8 string (bytes that do not
 * continue a sequence). */
size_t ph_utf8_chars(const char *s, size_t len);
/* A copy of the C string s with every byte that does not belong to a
 * well-formed UTF-8 sequence replaced by '?' (for messages that quote what
 * a client sent, possibly cut mid-character). Caller frees. */
char *ph_utf8_repair(const char *s) PH_NONNULL_RET;
/* Base64 (standard alphabet, padded) of n bytes. Caller frees. */
char *ph_base64(const void *data, size_t n) PH_NONNULL_RET;
/* Decodes standard padded base64; returns 0 with *out (NUL-terminated,
 * caller frees) and *len, or -1 for anything not canonical base64. */
int ph_base64_decode(const char *s, size_t n, unsigned char **out, size_t *len);
/* The same in the URL-safe alphabet without padding (cursors, sealed
 * state). */
char *ph_base64url(const void *data, size_t n) PH_NONNULL_RET;
int ph_base64url_decode(const char *s, size_t n, unsigned char **out, size_t *len);
#endif
