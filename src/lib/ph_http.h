/* ph_http.h: one HTTP request and its answer, for the few outgoing calls
 * Phantom makes (auth.oauth's discovery, key sets and introspection; any
 * other feature's GET or POST). Two engines, chosen by configure
 * (--with-http-client): libcurl in the dynamic build, OpenSSL's own HTTP
 * client (OSSL_HTTP_*) with names resolved by c-ares in the static one,
 * where both link statically and no NSS is needed. The callers see no
 * difference: one request at a time, bounded in time and size, https
 * verified against a CA bundle and the URL's host name, no redirect.
 * ph_http_do (an answer must be 200) serves the fetches; ph_http_send
 * hands back any status with its Retry-After (the OTLP exporter's retry
 * rules need both). ph_http_do, ph_http_send and ph_http_engine exist when
 * configure found an engine (PH_HAVE_HTTP); the rest always. */
#ifndef PH_HTTP_H
#define PH_HTTP_H
#include "first.h"
#include "ph_util.h"
#include <stddef.h>

struct ph_http_conn;

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
	const char *ca_from;      /* what named ca_file, for errors; NULL: auth.oauth.ca_file */
	struct ph_http_conn *keep; /* NULL: a connection of its own; see ph_http_conn_new */
};

/* An answer's status line and the headers the callers read. */
struct ph_http_ans {
	int status;              /* 100..599 */
	long long retry_after_s; /* Retry-After in seconds (0..86400); -1: none, or an HTTP-date */
};

/* Sends rq and takes its answer, which must be 200 OK: returns 0 with the
 * body in *out (NUL-ended, its length without the NUL; caller frees), or
 * -1 with the reason in err ("URL: why", no secret in it) and *out empty. */
int ph_http_do(const struct ph_http_req *rq, struct ph_buf *out, char *err, size_t esz);

/* Sends rq and takes its answer, whatever its status: returns 0 with the
 * status and Retry-After in *an and the body in *out (as ph_http_do), or
 * -1 when no whole answer came (name, connection, TLS, time, a body past
 * max_bytes: err says which, with libcurl's detail where ph_http_do keeps
 * its short words) with *out empty. Header values (rq->hdr, the
 * credentials) never appear in err: they may be secrets. */
int ph_http_send(const struct ph_http_req *rq, struct ph_http_ans *an, struct ph_buf *out, char *err, size_t esz);

/* A connection kept from one request to the next (HTTP keep-alive), for a
 * caller that posts again and again to one server (the OTLP exporter):
 * requests with the same keep use it while the server keeps it open, and
 * a new one is made when it has closed it. The libcurl engine keeps it;
 * the OpenSSL engine asks HTTP/1.0 and makes one a request whatever keep
 * says. One process's: a forked child makes its own. */
struct ph_http_conn *ph_http_conn_new(void);
void ph_http_conn_free(struct ph_http_conn *c);

/* The engine of this build, for -V: "libcurl" or "OpenSSL HTTP, c-ares". */
const char *ph_http_engine(void);

/* Where the CA certificates are when no ca_file is given: SSL_CERT_FILE,
 * else the first bundle that exists of those hosting systems keep
 * (Debian and Ubuntu, RHEL, CloudLinux and Alma, SUSE, Alpine); NULL when
 * none does (then SSL_CERT_DIR, if set, is a directory of hashed
 * certificates). *how says which rule found it. */
const char *ph_http_ca_default(const char **how);

/* The longest answer head (status line and headers) the OpenSSL engine reads. */
#define PH_HTTP_HEAD_MAX 16384

/* The head of an HTTP/1.x answer, as ph_http_head parses it. */
struct ph_http_head {
	struct ph_http_ans ans;
	size_t len;                /* of the head, its blank line included */
	long long content_length;  /* -1: none given */
	char reason[64];           /* the status line's reason phrase (cut) */
};

/* Parses the head at the start of buf[0, n): 1 when it is whole (h filled),
 * 0 when more bytes are needed, -1 when it is not an HTTP/1.x answer head
 * within PH_HTTP_HEAD_MAX bytes (status 100..599, one Content-Length of
 * digits, no Transfer-Encoding: the engine asks HTTP/1.0). Lines end in
 * CRLF or LF. The OpenSSL engine's parser (fuzz_http_head, fuzz_http). */
int ph_http_head(const char *buf, size_t n, struct ph_http_head *h);

/* s (n bytes) escaped for an application/x-www-form-urlencoded value
 * (RFC 3986 unreserved bytes kept, every other as %XX). Caller frees. */
char *ph_http_form_escape(const char *s, size_t n);
#endif
