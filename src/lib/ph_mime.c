/* ph_mime.c: MIME types by extension, text detection, base64. */
#include "first.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *ext, *mime;
} types[] = {
	{"txt", "text/plain"}, {"text", "text/plain"}, {"md", "text/markdown"},
	{"markdown", "text/markdown"}, {"html", "text/html"}, {"htm", "text/html"},
	{"css", "text/css"}, {"csv", "text/csv"}, {"tsv", "text/tab-separated-values"},
	{"xml", "text/xml"}, {"js", "text/javascript"}, {"mjs", "text/javascript"},
	{"json", "application/json"}, {"yaml", "application/yaml"}, {"yml", "application/yaml"},
	{"toml", "application/toml"}, {"sh", "application/x-sh"}, {"c", "text/x-c"},
	{"h", "text/x-c"}, {"py", "text/x-python"}, {"rs", "text/x-rust"},
	{"sql", "application/sql"}, {"svg", "image/svg+xml"}, {"png", "image/png"},
	{"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
	{"webp", "image/webp"}, {"ico", "image/vnd.microsoft.icon"}, {"pdf", "application/pdf"},
	{"zip", "application/zip"}, {"gz", "application/gzip"}, {"wav", "audio/wav"},
	{"mp3", "audio/mpeg"}, {"ogg", "audio/ogg"}, {"mp4", "video/mp4"},
};

const char *
ph_mime_guess(const char *filename)
{
	const char *slash = strrchr(filename, '/');
	const char *base = slash ? slash + 1 : filename;
	const char *dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		return "application/octet-stream";
	for (size_t i = 0; i < PH_ARRAY_LEN(types); i++)
		if (strcasecmp(types[i].ext, dot + 1) == 0)
			return types[i].mime;
	return "application/octet-stream";
}

bool
ph_mime_textual(const char *mime)
{
	static const char *const textual[] = {
		"application/json", "application/xml", "application/yaml", "application/x-yaml",
		"application/javascript", "application/x-sh", "application/toml", "application/sql",
		"image/svg+xml",
	};
	size_t n = strcspn(mime, "; ");
	if (n >= 5 && strncasecmp(mime, "text/", 5) == 0)
		return true;
	for (size_t i = 0; i < PH_ARRAY_LEN(textual); i++)
		if (strlen(textual[i]) == n && strncasecmp(mime, textual[i], n) == 0)
			return true;
	if (n > 5 && (strncasecmp(mime + n - 5, "+json", 5) == 0 || strncasecmp(mime + n - 4, "+xml", 4) == 0))
		return true;
	return false;
}

bool
ph_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t need;
		unsigned cp;
		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + need >= n)
			return false;
		for (size_t k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		/* overlong forms, surrogates and values past U+10FFFF */
		if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

size_t
ph_utf8_chars(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

char *
ph_utf8_repair(const char *s)
{
	size_t n = strlen(s);
	char *out = ph_xstrndup(s, n);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		if (len <= n - i && ph_utf8_valid(s + i, len)) {
			i += len;
		} else {
			out[i++] = '?';
		}
	}
	return out;
}

/* Base64 of n bytes in a libsodium variant. Caller frees. */
static char *
encode(const void *data, size_t n, int variant)
{
	size_t sz = sodium_base64_encoded_len(n, variant);
	char *out = ph_xmalloc(sz);
	sodium_bin2base64(out, sz, data, n, variant);
	return out;
}

/* Decodes the whole of s in a libsodium variant (canonical only: no
 * characters outside the alphabet, no stray bits). Returns 0 with *out
 * (NUL-terminated, caller frees) and *len, or -1. */
static int
decode(const char *s, size_t n, int variant, unsigned char **out, size_t *len)
{
	size_t cap = n / 4 * 3 + 3;
	unsigned char *buf = ph_xmalloc(cap + 1);
	if (sodium_base642bin(buf, cap, s, n, NULL, len, NULL, variant) != 0) {
		free(buf);
		return -1;
	}
	buf[*len] = '\0';
	*out = buf;
	return 0;
}

char *
ph_base64(const void *data, size_t n)
{
	return encode(data, n, sodium_base64_VARIANT_ORIGINAL);
}

int
ph_base64_decode(const char *s, size_t n, unsigned char **out, size_t *len)
{
	return decode(s, n, sodium_base64_VARIANT_ORIGINAL, out, len);
}

char *
ph_base64url(const void *data, size_t n)
{
	return encode(data, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

int
ph_base64url_decode(const char *s, size_t n, unsigned char **out, size_t *len)
{
	return decode(s, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING, out, len);
}
