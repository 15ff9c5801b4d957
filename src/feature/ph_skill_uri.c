/* ph_skill_uri.c: skill:// URIs in their one canonical spelling.
 *
 * A skill URI is never mapped to a disk path: its decoded segments are
 * looked up among the files enumerated at load. The canonical check makes
 * sure one file has exactly one URI (no trailing slash, no case games, no
 * needless or lowercase escapes, no query), as phantom-behaviour §1.3. */
#include "first.h"
#include "ph_skills.h"
#include <stdlib.h>
#include <string.h>

static bool
unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

static int
hexval(unsigned char c)
{
	/* uppercase only: lowercase escapes are not canonical */
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void
ph_skill_uri_encode(struct ph_buf *b, const char *seg, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)seg[i];
		if (unreserved(c)) {
			ph_buf_addc(b, (char)c);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			ph_buf_add(b, e, 3);
		}
	}
}

void
ph_skill_uri_encode_path(struct ph_buf *b, const char *rel)
{
	for (;;) {
		const char *slash = strchr(rel, '/');
		size_t n = slash ? (size_t)(slash - rel) : strlen(rel);
		ph_skill_uri_encode(b, rel, n);
		if (slash == NULL)
			break;
		ph_buf_addc(b, '/');
		rel = slash + 1;
	}
}

void
ph_skill_segs_free(char **segs, size_t n)
{
	if (segs == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(segs[i]);
	free(segs);
}

/* Decodes one segment [s, s+n). Returns it (caller frees) or NULL when the
 * segment is not in canonical form or decodes to something unservable. */
static char *
decode_seg(const char *s, size_t n)
{
	char *out;
	size_t o = 0;
	if (n == 0)
		return NULL;
	out = ph_xmalloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= n)
				goto bad;
			hi = hexval((unsigned char)s[i + 1]);
			lo = hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				goto bad;
			c = (unsigned char)(hi << 4 | lo);
			/* an escape of an unreserved byte is needless; of NUL or
			 * '/' it would smuggle a separator in */
			if (unreserved(c) || c == '\0' || c == '/')
				goto bad;
			out[o++] = (char)c;
			i += 2;
		} else if (unreserved(c)) {
			out[o++] = (char)c;
		} else {
			goto bad;
		}
	}
	out[o] = '\0';
	if (strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		goto bad;
	return out;
bad:
	free(out);
	return NULL;
}

int
ph_skill_uri_split(const char *uri, size_t len, char ***segs)
{
	static const char scheme[] = "skill://";
	const size_t sl = sizeof scheme - 1;
	char **v = NULL;
	size_t n = 0;
	const char *p, *end = uri + len;
	*segs = NULL;
	if (len <= sl || memcmp(uri, scheme, sl) != 0 || memchr(uri, '\0', len) != NULL)
		return -1;
	p = uri + sl;
	for (;;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t sn = slash ? (size_t)(slash - p) : (size_t)(end - p);
		char *d;
		if (n == PH_SKILL_MAX_SEGS)
			goto bad;
		d = decode_seg(p, sn);
		if (d == NULL)
			goto bad;
		v = ph_xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = d;
		if (slash == NULL)
			break;
		p = slash + 1; /* a trailing slash leaves an empty segment: refused */
	}
	*segs = v;
	return (int)n;
bad:
	ph_skill_segs_free(v, n);
	return -1;
}
