/* ph_http.c: what both HTTP engines share (ph_http.h): where the CA
 * certificates are, form escaping, and the answer head parser (the OpenSSL
 * engine's). The engines are ph_http_curl.c and
 * ph_http_ossl.c. */
#include "first.h"
#include "ph_http.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
ph_http_ca_default(const char **how)
{
	/* where the distributions a hoster runs keep one bundle of every
	 * trusted CA: Debian and Ubuntu; RHEL, CloudLinux, Alma and Rocky
	 * (both names); SUSE; Alpine and the BSDs */
	static const char *const known[] = {
		"/etc/ssl/certs/ca-certificates.crt",
		"/etc/pki/tls/certs/ca-bundle.crt",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
		"/etc/ssl/ca-bundle.pem",
		"/etc/ssl/cert.pem",
	};
	const char *env = getenv("SSL_CERT_FILE");
	struct stat st;
	if (env != NULL && env[0] != '\0') {
		*how = "SSL_CERT_FILE";
		return env;
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(known); i++)
		if (stat(known[i], &st) == 0 && S_ISREG(st.st_mode)) {
			*how = "the system's bundle";
			return known[i];
		}
	*how = getenv("SSL_CERT_DIR") ? "SSL_CERT_DIR" : "no CA bundle found";
	return NULL;
}

char *
ph_http_form_escape(const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = ph_xmalloc(3 * n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		    c == '.' || c == '_' || c == '~') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

/* The value of the header line p[0, n) when it is name's (lowercase, with
 * its ':'), blanks trimmed; NULL when it is another header. */
static const char *
header_value(const char *p, size_t n, const char *name, size_t *vl)
{
	size_t nl = strlen(name);
	if (n < nl || strncasecmp(p, name, nl) != 0)
		return NULL;
	p += nl;
	n -= nl;
	while (n > 0 && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	*vl = n;
	return p;
}

/* p[0, n) as a number of at most maxd digits and nothing else; else -1. */
static long long
digits(const char *p, size_t n, size_t maxd)
{
	long long v = 0;
	if (n == 0 || n > maxd)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* The status line's reason phrase r[0, n) into h, bytes outside printable
 * ASCII as '?' (it goes into error messages). */
static void
take_reason(struct ph_http_head *h, const char *r, size_t n)
{
	size_t i;
	while (n > 0 && (r[n - 1] == '\r' || r[n - 1] == ' '))
		n--;
	for (i = 0; i < n && i + 1 < sizeof h->reason; i++)
		h->reason[i] = r[i] >= 0x20 && r[i] < 0x7f ? r[i] : '?';
	h->reason[i] = '\0';
}

/* One header line p[0, n) into h: -1 when it makes the head unusable. */
static int
take_header(struct ph_http_head *h, const char *p, size_t n)
{
	const char *v;
	size_t vl;
	long long x;
	if ((v = header_value(p, n, "content-length:", &vl)) != NULL) {
		x = digits(v, vl, 15);
		if (x < 0 || (h->content_length >= 0 && h->content_length != x))
			return -1;
		h->content_length = x;
	} else if (header_value(p, n, "transfer-encoding:", &vl) != NULL) {
		return -1; /* never sent to HTTP/1.0; a chunked body is not read */
	} else if ((v = header_value(p, n, "retry-after:", &vl)) != NULL) {
		x = digits(v, vl, 6); /* seconds; the HTTP-date form counts as absent */
		if (x >= 0 && x <= 86400)
			h->ans.retry_after_s = x;
	}
	return 0;
}

int
ph_http_head(const char *buf, size_t n, struct ph_http_head *h)
{
	const char *end = NULL, *p, *eol;
	size_t lim = n < PH_HTTP_HEAD_MAX ? n : PH_HTTP_HEAD_MAX;
	memset(h, 0, sizeof *h);
	h->ans.retry_after_s = -1;
	h->content_length = -1;
	/* the blank line ending it: a line end, then CR LF or LF */
	for (size_t i = 0; i + 1 < lim && end == NULL; i++)
		if (buf[i] == '\n' && buf[i + 1] == '\n')
			end = buf + i + 2;
		else if (buf[i] == '\n' && buf[i + 1] == '\r' && i + 2 < lim && buf[i + 2] == '\n')
			end = buf + i + 3;
	if (end == NULL)
		return n >= PH_HTTP_HEAD_MAX ? -1 : 0;
	/* "HTTP/1.x NNN[ reason]" */
	if (end - buf < 13 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[7] < '0' || buf[7] > '9' || buf[8] != ' ' ||
	    buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9' ||
	    (buf[12] != ' ' && buf[12] != '\r' && buf[12] != '\n'))
		return -1;
	h->ans.status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	eol = memchr(buf, '\n', (size_t)(end - buf));
	take_reason(h, buf + 13, buf[12] == ' ' ? (size_t)(eol - buf - 13) : 0);
	for (p = eol + 1; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL || eol == p || (eol == p + 1 && *p == '\r'))
			break; /* the blank line */
		if (take_header(h, p, (size_t)(eol - p)) != 0)
			return -1;
	}
	h->len = (size_t)(end - buf);
	return 1;
}
