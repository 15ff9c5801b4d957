/* ph_http.h: one HTTP request and its answer, for the few outgoing calls
 * Phantom makes (auth.oauth's discovery, key sets and introspection; any
 * other feature's GET or POST). Two engines, chosen by configure
 * (--with-http-client): libcurl in the dynamic build, OpenSSL's own HTTP
 * client (OSSL_HTTP_*) with names resolved by c-ares in the static one,
 * where both link statically and no NSS is needed. The callers see no
 * difference: one request at a time, bounded in time and size, https
 * verified against a CA bundle and the URL's host name, no redirect.
 * ph_http_do and ph_http_engine exist when configure found an engine
 * (PH_HAVE_HTTP); the rest always. */
#ifndef PH_HTTP_H
#define PH_HTTP_H
#include "first.h"
#include "ph_util.h"
#include <stddef.h>

struct ph_http_req {
	const char *url;        /* http:// or https://; the caller vets it */
	const char *const *hdr; /* NULL, or name, value, name, value..., NULL */
	const char *body;       /* NULL: GET; else POST of body_len bytes */
	size_t body_len;
	const char *content_type; /* of the body */
	const char *user, *pass;  /* HTTP Basic credentials, or NULL */
	long long timeout_ms;     /* the whole exchange: name, connection, TLS, answer */
	size_t max_bytes;         /* of the answer's body; past it the answer is refused */
	const char *ca_file;      /* PEM bundle, or NULL: ph_http_ca_default() */
};

/* Sends rq and takes its answer, which must be 200 OK: returns 0 with the
 * body in *out (NUL-ended, its length without the NUL; caller frees), or
 * -1 with the reason in err ("URL: why", no secret in it) and *out empty. */
int ph_http_do(const struct ph_http_req *rq, struct ph_buf *out, char *err, size_t esz);

/* The engine of this build, for -V: "libcurl" or "OpenSSL HTTP, c-ares". */
const char *ph_http_engine(void);

/* Where the CA certificates are when no ca_file is given: SSL_CERT_FILE,
 * else the first bundle that exists of those hosting systems keep
 * (Debian and Ubuntu, RHEL, CloudLinux and Alma, SUSE, Alpine); NULL when
 * none does (then SSL_CERT_DIR, if set, is a directory of hashed
 * certificates). *how says which rule found it. */
const char *ph_http_ca_default(const char **how);

/* s (n bytes) escaped for an application/x-www-form-urlencoded value
 * (RFC 3986 unreserved bytes kept, every other as %XX). Caller frees. */
char *ph_http_form_escape(const char *s, size_t n);
#endif
