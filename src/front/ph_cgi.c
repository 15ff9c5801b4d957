/* ph_cgi.c: the plain CGI front (RFC 3875): one request from the
 * environment and stdin, its response on stdout. The head of a CGI response
 * is written here for the FastCGI front too: a FastCGI responder answers in
 * the same form. */
#include "first.h"
#include "ph_front.h"
#include "ph_exec.h"
#include "ph_util.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- the head of a CGI response ------------------------------------------ */

void
ph_cgi_head(struct ph_buf *b, int status, const char *ctype, const struct ph_header *hdrs)
{
	ph_buf_adds(b, "Status: ");
	ph_buf_addint(b, status);
	ph_buf_addc(b, ' ');
	ph_buf_adds(b, ph_http_reason(status));
	ph_buf_adds(b, "\r\n");
	if (ctype) {
		ph_buf_adds(b, "Content-Type: ");
		ph_buf_adds(b, ctype);
		ph_buf_adds(b, "\r\n");
	}
	for (; hdrs && hdrs->name; hdrs++) {
		ph_buf_adds(b, hdrs->name);
		ph_buf_adds(b, ": ");
		ph_buf_adds(b, hdrs->value);
		ph_buf_adds(b, "\r\n");
	}
}

void
ph_cgi_response_head(struct ph_buf *b, int status, const char *ctype, const struct ph_header *hdrs,
		     size_t len)
{
	ph_cgi_head(b, status, ctype, hdrs);
	ph_buf_adds(b, "Content-Length: ");
	ph_buf_addint(b, (long long)len);
	ph_buf_adds(b, "\r\n\r\n");
}

/* ---- CGI ------------------------------------------------------------------ */

static const char *
cgi_param(struct ph_exchange *ex, const char *name)
{
	(void)ex;
	return getenv(name);
}

static long
cgi_read(struct ph_exchange *ex, char *buf, size_t len)
{
	(void)ex;
	for (;;) {
		ssize_t n = read(0, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		return (long)n;
	}
}


static int
cgi_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	    const char *body, size_t len)
{
	struct ph_buf b;
	int rc;
	(void)ex;
	ph_buf_init(&b);
	ph_cgi_response_head(&b, status, ctype, hdrs, len);
	if (body) /* NULL: the answer to a HEAD, or none (202) */
		ph_buf_add(&b, body, len);
	rc = ph_write_all(1, b.data, b.len);
	ph_buf_free(&b);
	return rc;
}

static int
cgi_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	struct ph_buf b;
	int rc;
	(void)ex;
	ph_buf_init(&b);
	ph_cgi_head(&b, 200, "text/event-stream", hdrs);
	ph_buf_adds(&b, "\r\n");
	rc = ph_write_all(1, b.data, b.len);
	ph_buf_free(&b);
	return rc;
}

static int
cgi_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	struct ph_buf b;
	int rc;
	(void)ex;
	ph_buf_init(&b);
	ph_sse_event(&b, 0, json, len);
	rc = ph_write_all(1, b.data, b.len);
	ph_buf_free(&b);
	return rc;
}

static int
cgi_stream_ping(struct ph_exchange *ex)
{
	(void)ex;
	return ph_write_all(1, ": keepalive\n\n", 13);
}

static const struct ph_front_ops cgi_ops = {
	cgi_param, cgi_read, cgi_respond, cgi_stream_start, cgi_stream_send, cgi_stream_ping,
};

/* How long a CGI request's unread input is drained after the response, as
 * libfcgi does on close (LIBFCGI_OS_CLOSE_POLL_TIMEOUT). */
#define CGI_DRAIN_MS 2000

/* Ends the response and reads what is left of the request body (an answer
 * given before reading it: 405, 413, ...), for at most CGI_DRAIN_MS. A CGI
 * program exiting with unread input on a socket (Apache mod_cgid) makes the
 * kernel reset the connection: the web server then loses the response or
 * holds the client until its own timeout. */
static void
cgi_drain(void)
{
	char buf[8192];
	int64_t end = ph_now_us() + (int64_t)CGI_DRAIN_MS * 1000;
	/* the response is complete: a pipe ends with close, a socket shared
	 * with stdin (mod_cgid) also needs the shutdown */
	if (ph_fd_is_socket(1))
		shutdown(1, SHUT_WR);
	close(1);
	for (;;) {
		int64_t left = end - ph_now_us();
		struct pollfd p = {0, POLLIN, 0};
		ssize_t n;
		if (left <= 0 || poll(&p, 1, (int)(left / 1000) + 1) <= 0)
			return;
		n = read(0, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return;
	}
}

void
ph_front_alone(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	ph_exec_subreaper();
}

int
ph_cgi_once(struct ph_server *srv)
{
	struct ph_exchange ex;
	ph_front_alone();
	memset(&ex, 0, sizeof ex);
	ex.ops = &cgi_ops;
	ex.http = true;
	if (srv)
		ph_serve(srv, &ex);
	else
		ph_serve_unconfigured(&ex);
	cgi_drain();
	return 0;
}
