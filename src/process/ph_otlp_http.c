/* ph_otlp_http.c: OTLP/HTTP posts (ph_otlp_http.h): through libcurl when
 * the build has it; else a plain http:// client of its own (one POST per
 * connection, Connection: close), which is what a build without libcurl
 * (the static one) needs to reach a collector on the host or the network. */
#include "first.h"
#include "ph_otlp_http.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef PH_HTTP_CURL
#include <curl/curl.h>
#endif

int
ph_otlp_http_head(const char *buf, size_t len, int *status, long long *retry_after_ms)
{
	const char *end = NULL, *p, *eol;
	*status = 0;
	*retry_after_ms = -1;
	for (size_t i = 3; i < len; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' && buf[i] == '\n') {
			end = buf + i + 1;
			break;
		}
	if (end == NULL)
		return len > PH_OTLP_HEAD_MAX ? -1 : 0;
	/* "HTTP/1.x NNN ..." */
	if (end - buf < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ' || buf[9] < '1' ||
	    buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9' ||
	    (buf[12] != ' ' && buf[12] != '\r'))
		return -1;
	*status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	for (p = (const char *)memchr(buf, '\n', (size_t)(end - buf)) + 1; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			break;
		if (eol - p > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
			long long v = 0;
			const char *q = p + 12;
			int digits = 0;
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			while (q < eol && *q >= '0' && *q <= '9' && digits < 6) {
				v = v * 10 + (*q++ - '0');
				digits++;
			}
			while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
				q++;
			/* seconds only; the HTTP-date form counts as absent */
			if (digits > 0 && q == eol && v <= 86400)
				*retry_after_ms = v * 1000;
		}
	}
	return 1;
}

#ifndef PH_HTTP_CURL
/* http://HOST[:PORT][/PATH] into its parts; false when it is not one */
static bool
split_url(const char *url, char *host, size_t hn, char *port, size_t pn, const char **path)
{
	const char *h = url + 7, *e, *colon;
	size_t len;
	if (strncmp(url, "http://", 7) != 0)
		return false;
	e = h + strcspn(h, "/?#");
	*path = *e == '/' ? e : "/";
	if (*h == '[') { /* [v6]:port */
		const char *rb = memchr(h, ']', (size_t)(e - h));
		if (rb == NULL)
			return false;
		len = (size_t)(rb - h - 1);
		if (len == 0 || len >= hn)
			return false;
		memcpy(host, h + 1, len);
		host[len] = '\0';
		colon = rb + 1 < e && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(e - h));
		len = (size_t)((colon ? colon : e) - h);
		if (len == 0 || len >= hn)
			return false;
		memcpy(host, h, len);
		host[len] = '\0';
	}
	len = colon ? (size_t)(e - colon - 1) : 2;
	if (len == 0 || len >= pn)
		return false;
	if (colon) {
		memcpy(port, colon + 1, len);
		port[len] = '\0';
	} else {
		memcpy(port, "80", 3);
	}
	return true;
}

#endif

const char *
ph_otlp_http_missing(const char *url)
{
	if (url == NULL)
		return NULL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return "the OTLP endpoint is not an http:// or https:// URL";
#ifdef PH_HTTP_CURL
	return NULL;
#else
	if (strncmp(url, "https://", 8) == 0)
		return "https:// needs libcurl, which this build leaves out (--with-http-client=libcurl; "
		       "the static build posts to http:// only: a collector on the host or the network)";
#ifdef PH_STATIC_BUILD
	{
		/* a static glibc cannot look names up (NSS) */
		char host[256], port[8];
		const char *path;
		unsigned char addr[16];
		if (!split_url(url, host, sizeof host, port, sizeof port, &path))
			return "the OTLP endpoint is not an http://HOST[:PORT]/ URL";
		if (inet_pton(AF_INET, host, addr) != 1 && inet_pton(AF_INET6, host, addr) != 1)
			return "the static build posts to numeric addresses only (http://127.0.0.1:4318, "
			       "http://[::1]:4318): it cannot look names up";
	}
#endif
	return NULL;
#endif
}

#ifdef PH_HTTP_CURL
/* The answer's body is not needed: read and dropped. */
static size_t
drop_body(char *p, size_t sz, size_t n, void *u)
{
	(void)p;
	(void)u;
	return sz * n;
}

/* Retry-After in seconds (the HTTP-date form is taken as absent). */
static size_t
on_header(char *p, size_t sz, size_t n, void *u)
{
	struct ph_otlp_answer *a = u;
	size_t len = sz * n;
	if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
		char v[32];
		size_t vl;
		const char *t = ph_trim(p + 12, &vl);
		long long s;
		while (vl > 0 && (t[vl - 1] == '\r' || t[vl - 1] == '\n'))
			vl--;
		if (vl < sizeof v) {
			memcpy(v, t, vl);
			v[vl] = '\0';
			const char *why;
			if (ph_strtonum(v, 0, 86400, &s, &why) == 0)
				a->retry_after_ms = s * 1000;
		}
	}
	return len;
}

void
ph_otlp_http_post(const struct ph_otlp_post *p, struct ph_otlp_answer *a)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	CURLcode rc;
	long st = 0;
	memset(a, 0, sizeof *a);
	a->retry_after_ms = -1;
	if (c == NULL) {
		snprintf(a->err, sizeof a->err, "libcurl could not start");
		return;
	}
	{
		char *ct = ph_xasprintf("Content-Type: %s", p->content_type);
		h = curl_slist_append(h, ct);
		free(ct);
	}
	if (p->gzip)
		h = curl_slist_append(h, "Content-Encoding: gzip");
	h = curl_slist_append(h, "Expect:");
	for (size_t i = 0; i < p->nheaders; i++) {
		char *line = ph_xasprintf("%s: %s", p->headers[i].name, p->headers[i].value);
		h = curl_slist_append(h, line);
		memset(line, 0, strlen(line));
		free(line);
	}
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "phantom-otlp/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, drop_body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		snprintf(a->err, sizeof a->err, "%s", curl_easy_strerror(rc));
	else if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st) == CURLE_OK)
		a->status = (int)st;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}
#else
/* ms left until deadline (monotonic us), at least 0 */
static int
left_ms(int64_t deadline)
{
	int64_t l = (deadline - ph_now_us()) / 1000;
	return l > 0 ? (int)l : 0;
}

/* A nonblocking connection to host:port within the deadline, or -1 (why in a). */
static int
dial(const char *host, const char *port, int64_t deadline, struct ph_otlp_answer *a)
{
	struct addrinfo hints, *res = NULL;
	int fd = -1, rc;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
#ifdef PH_STATIC_BUILD
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV; /* no NSS (ph_otlp_http_missing) */
#endif
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(a->err, sizeof a->err, "%.100s: %s", host, gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		struct pollfd pf;
		int err = 0;
		socklen_t el = sizeof err;
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS)
			err = errno;
		pf.fd = fd;
		pf.events = POLLOUT;
		if (err == 0 && (poll(&pf, 1, left_ms(deadline)) != 1 ||
				 getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0))
			err = ETIMEDOUT;
		if (err != 0) {
			snprintf(a->err, sizeof a->err, "connect to %.100s:%s: %s", host, port, strerror(err));
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* Writes all of p within the deadline. */
static int
send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		struct pollfd pf = {fd, POLLOUT, 0};
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		} else if (poll(&pf, 1, left_ms(deadline)) != 1) {
			return -1;
		}
	}
	return 0;
}

/* Reads the answer's head (ph_otlp_http_head) within the deadline. */
static void
read_head(int fd, int64_t deadline, struct ph_otlp_answer *a)
{
	char buf[PH_OTLP_HEAD_MAX + 1];
	size_t len = 0;
	for (;;) {
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t r;
		int rc;
		if (poll(&pf, 1, left_ms(deadline)) != 1) {
			snprintf(a->err, sizeof a->err, "no answer within the timeout");
			return;
		}
		r = recv(fd, buf + len, sizeof buf - len, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0) {
			snprintf(a->err, sizeof a->err, "the collector closed the connection without an answer");
			return;
		}
		len += (size_t)r;
		rc = ph_otlp_http_head(buf, len, &a->status, &a->retry_after_ms);
		if (rc != 0) {
			if (rc < 0) {
				a->status = 0;
				snprintf(a->err, sizeof a->err, "the collector's answer is not HTTP/1.x");
			}
			return;
		}
	}
}

void
ph_otlp_http_post(const struct ph_otlp_post *p, struct ph_otlp_answer *a)
{
	char host[256], port[8];
	const char *path;
	int64_t deadline = ph_now_us() + p->timeout_ms * 1000;
	struct ph_buf h;
	int fd;
	memset(a, 0, sizeof *a);
	a->retry_after_ms = -1;
	if (!split_url(p->url, host, sizeof host, port, sizeof port, &path)) {
		snprintf(a->err, sizeof a->err, "%s", ph_otlp_http_missing(p->url) ? ph_otlp_http_missing(p->url)
										   : "not an http:// URL");
		return;
	}
	if ((fd = dial(host, port, deadline, a)) < 0)
		return;
	ph_buf_init(&h);
	ph_buf_printf(&h, "POST %s HTTP/1.1\r\nHost: %s%s%s%s%s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n",
		      path, strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
		      strcmp(port, "80") ? ":" : "", strcmp(port, "80") ? port : "", p->content_type, p->len);
	if (p->gzip)
		ph_buf_adds(&h, "Content-Encoding: gzip\r\n");
	for (size_t i = 0; i < p->nheaders; i++)
		ph_buf_printf(&h, "%s: %s\r\n", p->headers[i].name, p->headers[i].value);
	ph_buf_adds(&h, "User-Agent: phantom-otlp/" PACKAGE_VERSION "\r\nConnection: close\r\n\r\n");
	if (send_all(fd, h.data, h.len, deadline) != 0 || send_all(fd, p->body, p->len, deadline) != 0)
		snprintf(a->err, sizeof a->err, "sending to %.100s:%s: %s", host, port,
			 errno ? strerror(errno) : "timed out");
	else
		read_head(fd, deadline, a);
	memset(h.data, 0, h.len); /* the headers' secrets */
	ph_buf_free(&h);
	close(fd);
}
#endif
