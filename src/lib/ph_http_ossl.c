/* ph_http_ossl.c: the engine of ph_http.h that links statically (the static
 * build): OpenSSL's TLS and URL parsing, c-ares, and the HTTP exchange here.
 *
 * One deadline bounds the whole exchange (the request's timeout_ms), so
 * every step runs on a non-blocking socket and waits in poll(): the name,
 * resolved by c-ares (a static glibc has no NSS; c-ares reads
 * /etc/resolv.conf and /etc/hosts itself), to its addresses tried in turn;
 * then for https a TLS handshake (TLS 1.2 or later) that sends the host
 * name (SNI) and verifies the server's certificate against the CA bundle
 * and that name (or the URL's IP address); then the request goes out
 * (HTTP/1.0, so the answer is never chunked) and the answer's head is read
 * and parsed (ph_http_head: the status, Retry-After, a Content-Length
 * within max_bytes when it gives one; OpenSSL's OSSL_HTTP_REQ_CTX takes 200
 * only and hides the rest, which the OTLP exporter needs); the body ends at
 * that length or when the server closes, and is cut off at max_bytes.
 * ph_http_do asks for 200 as OpenSSL's client did. Errors name the
 * URL and what failed, never a credential. SIGPIPE is blocked meanwhile
 * (a process without a master, under mod_fcgid or CGI, does not ignore
 * it, and OpenSSL writes to the socket with write()); one raised is taken
 * back before the mask is restored. */
#include "first.h"
#include "ph_http.h"
#include <stdio.h>

#if defined(PH_HTTP_OSSL) || defined(PH_HTTP_OSSL_TOOL)
#include "ph_http_ossl.h"
#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/http.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_ADDRS 8

#ifdef PH_HTTP_OSSL
const char *
ph_http_engine(void)
{
	return "OpenSSL HTTP, c-ares";
}

/* HTTP/1.0: a connection a request, so nothing is kept */
struct ph_http_conn {
	char unused;
};

struct ph_http_conn *
ph_http_conn_new(void)
{
	return ph_xcalloc(1, sizeof(struct ph_http_conn));
}

void
ph_http_conn_free(struct ph_http_conn *c)
{
	free(c);
}
#endif

/* ---- waiting -------------------------------------------------------------------- */

/* Waits for ev on fd until (monotonic us). 1: ready, 0: the deadline. */
static int
wait_fd(int fd, short ev, int64_t until)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = ev};
		int64_t left = until - ph_now_us();
		int r;
		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)((left + 999) / 1000));
		if (r > 0 || (r < 0 && errno != EINTR))
			return 1; /* an error shows in the next read or write */
	}
}

/* The first error OpenSSL queued, with its detail ("reason (detail)"); the
 * queue is emptied. */
static void
ossl_why(char *buf, size_t n, const char *none)
{
	const char *data = NULL;
	int flags = 0;
	unsigned long e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
	if (e == 0) {
		snprintf(buf, n, "%s", none);
	} else {
		const char *r = ERR_reason_error_string(e);
		snprintf(buf, n, "%s%s%s%s", r ? r : "error", (flags & ERR_TXT_STRING) && data && *data ? " (" : "",
			 (flags & ERR_TXT_STRING) && data ? data : "", (flags & ERR_TXT_STRING) && data && *data ? ")" : "");
	}
	ERR_clear_error();
}

/* ---- the name ------------------------------------------------------------------- */

struct addrs {
	struct sockaddr_storage a[MAX_ADDRS];
	socklen_t len[MAX_ADDRS];
	int n, status;
	bool done;
};

static void
on_addrinfo(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct addrs *f = arg;
	(void)timeouts;
	f->done = true;
	f->status = status;
	for (struct ares_addrinfo_node *p = res ? res->nodes : NULL; p != NULL && f->n < MAX_ADDRS; p = p->ai_next)
		if (p->ai_addrlen <= (socklen_t)sizeof f->a[0]) {
			memcpy(&f->a[f->n], p->ai_addr, p->ai_addrlen);
			f->len[f->n++] = p->ai_addrlen;
		}
	if (res != NULL)
		ares_freeaddrinfo(res);
}

/* host as a numeric address into f: true when it is one. */
static bool
numeric(const char *host, int port, struct addrs *f)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)&f->a[0];
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&f->a[0];
	memset(&f->a[0], 0, sizeof f->a[0]);
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		f->len[0] = sizeof *v4;
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		f->len[0] = sizeof *v6;
	} else {
		return false;
	}
	f->n = 1;
	return true;
}

/* Runs c-ares's sockets until the lookup ends or the deadline. */
static void
ares_run(ares_channel ch, struct addrs *f, int64_t until)
{
	while (!f->done) {
		ares_socket_t s[ARES_GETSOCK_MAXNUM];
		struct pollfd p[ARES_GETSOCK_MAXNUM];
		/* the bits as c-ares's ARES_GETSOCK_* macros read them, unsigned:
		 * theirs shift an int into its sign bit */
		unsigned bits = (unsigned)ares_getsock(ch, s, ARES_GETSOCK_MAXNUM);
		int n = 0, r;
		struct timeval max, tv, *t;
		int64_t left = until - ph_now_us();
		if (left <= 0)
			return;
		max.tv_sec = (time_t)(left / 1000000);
		max.tv_usec = (suseconds_t)(left % 1000000);
		t = ares_timeout(ch, &max, &tv);
		for (int i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
			short ev = (short)(((bits >> i) & 1u ? POLLIN : 0) |
					   ((bits >> (i + ARES_GETSOCK_MAXNUM)) & 1u ? POLLOUT : 0));
			if (ev != 0)
				p[n++] = (struct pollfd){.fd = s[i], .events = ev};
		}
		r = poll(p, (nfds_t)n, (int)(t->tv_sec * 1000 + (t->tv_usec + 999) / 1000));
		if (r < 0 && errno != EINTR)
			return;
		if (r <= 0) {
			ares_process_fd(ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* its timeouts */
			continue;
		}
		for (int i = 0; i < n; i++)
			if (p[i].revents)
				ares_process_fd(ch, p[i].revents & (POLLIN | POLLERR | POLLHUP) ? p[i].fd : ARES_SOCKET_BAD,
						p[i].revents & POLLOUT ? p[i].fd : ARES_SOCKET_BAD);
	}
}

/* The addresses of host (a name or a numeric address), port set. */
static int
resolve(const char *host, int port, struct addrs *f, int64_t until, char *err, size_t esz)
{
	static bool inited;
	struct ares_addrinfo_hints hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	ares_channel ch;
	int rc;
	memset(f, 0, sizeof *f);
	if (numeric(host, port, f))
		return 0;
	if (!inited && ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS)
		inited = true;
	if ((rc = ares_init(&ch)) != ARES_SUCCESS) {
		snprintf(err, esz, "cannot look up %s: %s", host, ares_strerror(rc));
		return -1;
	}
	ares_getaddrinfo(ch, host, NULL, &hints, on_addrinfo, f);
	ares_run(ch, f, until);
	ares_destroy(ch); /* a lookup still running ends here, in on_addrinfo */
	if (f->n == 0) {
		snprintf(err, esz, "cannot look up %s: %s", host,
			 f->status == ARES_EDESTRUCTION ? "no answer in time"
			 : f->status == ARES_SUCCESS ? "no address"
						     : ares_strerror(f->status));
		return -1;
	}
	for (int i = 0; i < f->n; i++) {
		if (f->a[i].ss_family == AF_INET)
			((struct sockaddr_in *)&f->a[i])->sin_port = htons((uint16_t)port);
		else
			((struct sockaddr_in6 *)&f->a[i])->sin6_port = htons((uint16_t)port);
	}
	return 0;
}

/* ---- the connection ------------------------------------------------------------- */

/* A connected non-blocking socket to the first address that answers. */
static int
connect_any(const struct addrs *f, int64_t until, char *err, size_t esz)
{
	int fd = -1, e = ETIMEDOUT;
	for (int i = 0; i < f->n; i++) {
		socklen_t el = sizeof e;
		fd = socket(f->a[i].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, (const struct sockaddr *)&f->a[i], f->len[i]) == 0)
			return fd;
		e = errno;
		if (e == EINPROGRESS) {
			e = ETIMEDOUT;
			if (wait_fd(fd, POLLOUT, until) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 &&
			    e == 0)
				return fd;
		}
		close(fd);
		fd = -1;
		if (ph_now_us() >= until)
			break;
	}
	snprintf(err, esz, "cannot connect: %s", strerror(e));
	return -1;
}

/* The CA certificates into ctx: ca_file, else the system's. */
static int
load_cas(SSL_CTX *ctx, const struct ph_http_req *rq, char *err, size_t esz)
{
	const char *how = rq->ca_from ? rq->ca_from : "auth.oauth.ca_file", *dir = NULL;
	const char *file = rq->ca_file ? rq->ca_file : ph_http_ca_default(&how);
	char why[200];
	if (file == NULL && (dir = getenv("SSL_CERT_DIR")) == NULL) {
		snprintf(err, esz, "no CA certificates: none of the system's bundles exists (set %s or SSL_CERT_FILE)",
			 rq->ca_from ? rq->ca_from : "auth.oauth.ca_file");
		return -1;
	}
	if (SSL_CTX_load_verify_locations(ctx, file, file ? NULL : dir) != 1) {
		ossl_why(why, sizeof why, "no certificate in it");
		snprintf(err, esz, "cannot load the CA certificates of %s (%s, %s)", file ? file : dir, how, why);
		return -1;
	}
	return 0;
}

/* The TLS session on fd for host, handshake done and the certificate
 * verified; NULL with err. */
static SSL *
tls_start(int fd, const char *host, const struct ph_http_req *rq, int64_t until, char *err, size_t esz)
{
	const char *ca_file = rq->ca_file;
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = NULL;
	unsigned char ip[16];
	bool is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
	if (ctx == NULL || load_cas(ctx, rq, err, esz) != 0)
		goto fail;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF); /* the body's end is checked here */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if ((ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1 ||
	    (!is_ip && (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1)) ||
	    (is_ip && X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) != 1)) {
		ossl_why(err, esz, "cannot start TLS");
		goto fail;
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	for (;;) {
		int r = SSL_connect(ssl), e = SSL_get_error(ssl, r);
		long v;
		if (r == 1)
			break;
		if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) &&
		    wait_fd(fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, until) == 1)
			continue;
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			snprintf(err, esz, "TLS handshake: no answer in time");
		else if ((v = SSL_get_verify_result(ssl)) != X509_V_OK)
			snprintf(err, esz, "TLS: the server's certificate is not trusted: %s (CA certificates: %s)",
				 X509_verify_cert_error_string(v), ca_file ? ca_file : "the system's");
		else
			ossl_why(err, esz, e == SSL_ERROR_SYSCALL ? "TLS handshake: the connection failed" : "TLS handshake failed");
		goto fail;
	}
	SSL_CTX_free(ctx); /* the session holds its own reference */
	return ssl;
fail:
	ERR_clear_error();
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	return NULL;
}

/* ---- the exchange ---------------------------------------------------------------- */

/* The request's bytes into b: its line, headers and body (HTTP/1.0: the
 * answer is never chunked, and the server closes after it). */
static void
request_bytes(const struct ph_http_req *rq, const char *hostport, const char *path, struct ph_buf *b)
{
	size_t need = 512 + strlen(path) + strlen(hostport) + (rq->body ? rq->body_len : 0) +
		      (rq->content_type ? strlen(rq->content_type) : 0) +
		      (rq->user ? 2 * (strlen(rq->user) + (rq->pass ? strlen(rq->pass) : 0)) : 0);
	for (size_t i = 0; rq->hdr != NULL && rq->hdr[i] != NULL && rq->hdr[i + 1] != NULL; i += 2)
		need += strlen(rq->hdr[i]) + strlen(rq->hdr[i + 1]) + 4;
	ph_buf_reserve(b, need); /* one allocation: no copy of a secret left in a freed one */
	ph_buf_printf(b, "%s %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: phantom/" PACKAGE_VERSION "\r\n",
		      rq->body ? "POST" : "GET", path, hostport);
	for (size_t i = 0; rq->hdr != NULL && rq->hdr[i] != NULL && rq->hdr[i + 1] != NULL; i += 2)
		ph_buf_printf(b, "%s: %s\r\n", rq->hdr[i], rq->hdr[i + 1]);
	if (rq->user != NULL) {
		char *up = ph_xasprintf("%s:%s", rq->user, rq->pass ? rq->pass : "");
		size_t n = strlen(up);
		unsigned char *b64 = ph_xmalloc(4 * (n / 3 + 1) + 8);
		EVP_EncodeBlock(b64, (const unsigned char *)up, (int)n);
		ph_buf_printf(b, "Authorization: Basic %s\r\n", (char *)b64);
		OPENSSL_cleanse(up, n);
		OPENSSL_cleanse(b64, strlen((char *)b64));
		free(up);
		free(b64);
	}
	if (rq->body != NULL) {
		if (rq->content_type != NULL)
			ph_buf_printf(b, "Content-Type: %s\r\n", rq->content_type);
		ph_buf_printf(b, "Content-Length: %zu\r\n", rq->body_len);
	}
	ph_buf_adds(b, "\r\n");
	if (rq->body != NULL)
		ph_buf_add(b, rq->body, rq->body_len);
}

/* Waits for what io (over fd) should retry. 1: ready, 0: the deadline. */
static int
wait_io(BIO *io, int fd, int64_t until)
{
	return wait_fd(fd, BIO_should_write(io) ? POLLOUT : POLLIN, until);
}

/* Writes b[0, n) through w by until. */
static int
send_all(BIO *w, int fd, const char *b, size_t n, int64_t until, char *err, size_t esz)
{
	size_t off = 0;
	while (off < n) {
		int k = BIO_write(w, b + off, n - off > INT_MAX ? INT_MAX : (int)(n - off));
		if (k > 0) {
			off += (size_t)k;
		} else if (!BIO_should_retry(w)) {
			ossl_why(err, esz, "the connection ended while the request was sent");
			return -1;
		} else if (wait_io(w, fd, until) == 0) {
			snprintf(err, esz, "no answer in time");
			return -1;
		}
	}
	(void)BIO_flush(w);
	return 0;
}

/* Reads the answer's head (ph_http_head) into h; what came after it, the
 * body's start, into out. */
static int
read_head(BIO *r, int fd, int64_t until, struct ph_http_head *h, struct ph_buf *out, char *err, size_t esz)
{
	char buf[PH_HTTP_HEAD_MAX];
	size_t len = 0;
	for (;;) {
		int n = BIO_read(r, buf + len, (int)(sizeof buf - len)), rc;
		if (n > 0) {
			len += (size_t)n;
			if ((rc = ph_http_head(buf, len, h)) < 0) {
				snprintf(err, esz, "the answer is not HTTP/1.x (or its head is over %d bytes, or chunked)",
					 PH_HTTP_HEAD_MAX);
				return -1;
			}
			if (rc == 1) {
				ph_buf_add(out, buf + h->len, len - h->len);
				return 0;
			}
		} else if (!BIO_should_retry(r)) {
			ossl_why(err, esz, len ? "the connection ended in the answer's head"
					       : "the connection ended without an answer");
			return -1;
		} else if (wait_io(r, fd, until) == 0) {
			snprintf(err, esz, "no answer in time");
			return -1;
		}
	}
}

/* The body after the head: to the Content-Length (resp_len, -1: none
 * given) or the end of the connection, at most max bytes; out may hold
 * its start already. */
static int
read_body(BIO *io, int fd, long long resp_len, size_t max, int64_t until, struct ph_buf *out, char *err, size_t esz)
{
	char tmp[16384];
	for (;;) {
		int n;
		if (out->len > max) {
			snprintf(err, esz, "more than %zu bytes", max);
			return -1;
		}
		if (resp_len >= 0 && out->len >= (size_t)resp_len)
			break;
		n = BIO_read(io, tmp, sizeof tmp);
		if (n > 0) {
			ph_buf_add(out, tmp, (size_t)n);
			continue;
		}
		if (!BIO_should_retry(io))
			break; /* the end of the connection */
		if (wait_io(io, fd, until) == 0) {
			snprintf(err, esz, "no whole answer in time");
			return -1;
		}
	}
	if (resp_len >= 0 && out->len > (size_t)resp_len)
		out->len = (size_t)resp_len; /* past the Content-Length: not the answer's */
	if (resp_len >= 0 && out->len != (size_t)resp_len) {
		snprintf(err, esz, "the answer ended after %zu of its %lld bytes", out->len, resp_len);
		return -1;
	}
	return 0;
}

int
ph_http_ossl_exchange(BIO *w, BIO *r, int fd, const struct ph_http_req *rq, const char *hostport, const char *path,
		      int64_t until, struct ph_http_head *h, struct ph_buf *out, char *err, size_t esz)
{
	struct ph_buf req;
	int rc = -1;
	ph_buf_init(&req);
	request_bytes(rq, hostport, path, &req);
	if (send_all(w, fd, req.data, req.len, until, err, esz) == 0 && read_head(r, fd, until, h, out, err, esz) == 0) {
		int st = h->ans.status;
		if (st < 200)
			snprintf(err, esz, "an interim answer (%d) to an HTTP/1.0 request", st);
		else if (h->content_length >= 0 && (unsigned long long)h->content_length > rq->max_bytes)
			snprintf(err, esz, "more than %zu bytes", rq->max_bytes);
		else if (st == 204 || st == 304)
			out->len = 0, rc = 0; /* no body, whatever follows */
		else
			rc = read_body(r, fd, h->content_length, rq->max_bytes, until, out, err, esz);
	}
	OPENSSL_cleanse(req.data, req.len); /* the credentials and headers */
	ph_buf_free(&req);
	ERR_clear_error();
	return rc;
}

/* ---- one request ----------------------------------------------------------------- */

struct url {
	int tls, port;
	char *host, *portstr, *path, *query;
};

static void
url_free(struct url *u)
{
	OPENSSL_free(u->host);
	OPENSSL_free(u->portstr);
	OPENSSL_free(u->path);
	OPENSSL_free(u->query);
}

/* The connection for u: socket, then TLS for https; *io the BIO to talk
 * through. Returns the socket, or -1 with err. */
static int
open_conn(const struct url *u, const struct ph_http_req *rq, int64_t until, SSL **ssl, BIO **io, char *err, size_t esz)
{
	struct addrs f;
	int fd;
	*ssl = NULL;
	*io = NULL;
	if (resolve(u->host, u->port, &f, until, err, esz) != 0 || (fd = connect_any(&f, until, err, esz)) < 0)
		return -1;
	if (u->tls && (*ssl = tls_start(fd, u->host, rq, until, err, esz)) == NULL) {
		close(fd);
		return -1;
	}
	if (u->tls && (*io = BIO_new(BIO_f_ssl())) != NULL)
		BIO_set_ssl(*io, *ssl, BIO_NOCLOSE);
	else if (!u->tls)
		*io = BIO_new_socket(fd, BIO_NOCLOSE);
	if (*io == NULL) {
		snprintf(err, esz, "out of memory");
		SSL_free(*ssl);
		close(fd);
		return -1;
	}
	return fd;
}

#ifdef PH_HTTP_OSSL
#define OSSL_SEND ph_http_send
#define OSSL_DO ph_http_do
#else
#define OSSL_SEND ph_http_ossl_send
#define OSSL_DO ph_http_ossl_do
#endif

/* The request rq, SIGPIPE blocked (ph_http_ossl_send); h its answer's head. */
static int
request(const struct ph_http_req *rq, int64_t until, struct ph_http_head *h, struct ph_buf *out, char *err, size_t esz)
{
	struct url u = {0};
	char why[300], *path = NULL, *hostport = NULL;
	SSL *ssl = NULL;
	BIO *io = NULL;
	int fd = -1, rc = -1;
	if (OSSL_HTTP_parse_url(rq->url, &u.tls, NULL, &u.host, &u.portstr, &u.port, &u.path, &u.query, NULL) != 1) {
		ERR_clear_error();
		snprintf(err, esz, "%s: not an http or https URL", rq->url);
		return -1;
	}
	path = u.query && *u.query ? ph_xasprintf("%s?%s", u.path, u.query) : ph_xstrdup(u.path);
	hostport = ph_xasprintf(strchr(u.host, ':') ? "[%s]:%s" : "%s:%s", u.host, u.portstr);
	if ((fd = open_conn(&u, rq, until, &ssl, &io, why, sizeof why)) >= 0 &&
	    ph_http_ossl_exchange(io, io, fd, rq, hostport, path, until, h, out, why, sizeof why) == 0)
		rc = 0;
	if (ssl != NULL && rc == 0)
		(void)SSL_shutdown(ssl); /* one try: the answer is in */
	BIO_free_all(io); /* drops the reference the TLS BIO took on the socket BIO */
	SSL_free(ssl);
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		snprintf(err, esz, "%s: %s", rq->url, why);
		ph_buf_free(out);
	} else {
		ph_buf_addc(out, '\0'); /* an empty body too has its NUL */
		out->len--;
	}
	url_free(&u);
	free(path);
	free(hostport);
	ERR_clear_error();
	return rc;
}

/* ph_http_send with the whole head (the reason phrase for ph_http_do). */
static int
send_head(const struct ph_http_req *rq, struct ph_http_head *h, struct ph_buf *out, char *err, size_t esz)
{
	int64_t until = ph_now_us() + rq->timeout_ms * 1000;
	int rc;
	sigset_t pipe_set, old_mask;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	memset(h, 0, sizeof *h);
	h->ans.retry_after_s = -1;
	ph_buf_init(out);
	rc = request(rq, until, h, out, err, esz);
	if (!sigismember(&old_mask, SIGPIPE)) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
			; /* ours: taken back */
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}

int
OSSL_SEND(const struct ph_http_req *rq, struct ph_http_ans *an, struct ph_buf *out, char *err, size_t esz)
{
	struct ph_http_head h;
	int rc = send_head(rq, &h, out, err, esz);
	*an = h.ans;
	return rc;
}

int
OSSL_DO(const struct ph_http_req *rq, struct ph_buf *out, char *err, size_t esz)
{
	struct ph_http_head h;
	if (send_head(rq, &h, out, err, esz) != 0)
		return -1;
	if (h.ans.status == 200)
		return 0;
	/* in the words OpenSSL's own client used */
	snprintf(err, esz, "%s: %s (code=%d%s%s)", rq->url,
		 h.ans.status < 400 ? "status code not supported" : "received error", h.ans.status,
		 h.reason[0] ? ", reason=" : "", h.reason);
	ph_buf_free(out);
	return -1;
}
#endif
