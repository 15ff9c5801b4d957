/* ph_rawfcgi.c: FastCGI records written by hand on a connection libfcgi
 * does not know (it was accepted by another worker). The connection is
 * made blocking with a send timeout: a client that stops reading cannot
 * hold this worker for long. */
#include "first.h"
#include "ph_rawfcgi.h"
#include "ph_fcgi_wire.h"
#include "ph_hubmsg.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* The longest a write on the connection may block. */
#define SEND_TIMEOUT_S 5

struct raw {
	struct ph_exchange ex;
	int fd;
	unsigned rid;
	bool failed, handed_off;
};

/* Sends b whole, blocking (bounded by the send timeout); -1 once a send
 * failed (nothing more is sent then). */
static int
send_all(struct raw *w, const struct ph_buf *b)
{
	size_t off = 0;
	while (!w->failed && off < b->len) {
		ssize_t n = send(w->fd, b->data + off, b->len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->failed = true;
		else
			off += (size_t)n;
	}
	return w->failed ? -1 : 0;
}

static int
put(struct raw *w, int type, const char *data, size_t len)
{
	struct ph_buf b;
	int rc;
	ph_buf_init(&b);
	ph_fcgi_records(&b, type, w->rid, data, len);
	rc = send_all(w, &b);
	ph_buf_free(&b);
	return rc;
}

static const char *
raw_param(struct ph_exchange *ex, const char *name)
{
	(void)ex;
	(void)name;
	return NULL;
}

static long
raw_read(struct ph_exchange *ex, char *buf, size_t len)
{
	(void)ex;
	(void)buf;
	(void)len;
	return 0;
}

static int
raw_event(struct ph_exchange *ex, const char *json, size_t len)
{
	struct raw *w = (struct raw *)ex;
	struct ph_buf b;
	int rc;
	ph_buf_init(&b);
	ph_sse_event(&b, 0, json, len);
	rc = put(w, PH_FCGI_STDOUT, b.data, b.len);
	ph_buf_free(&b);
	return rc;
}

/* The stream's headers went out long ago: a complete response can only be
 * its last event. */
static int
raw_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	    const char *body, size_t len)
{
	(void)status;
	(void)ctype;
	(void)hdrs;
	return len ? raw_event(ex, body, len) : 0;
}

static int
raw_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	(void)ex;
	(void)hdrs;
	return 0;
}

static int
raw_ping(struct ph_exchange *ex)
{
	return put((struct raw *)ex, PH_FCGI_STDOUT, ": keepalive\n\n", 13);
}

static bool
raw_closed(struct ph_exchange *ex)
{
	struct raw *w = (struct raw *)ex;
	struct pollfd p = {w->fd, POLLIN | POLLRDHUP, 0};
	return w->failed ||
	       (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0);
}

/* Back to the hub (the handler asks again): desc plus the request id, the
 * connection attached, as the FastCGI front does. */
static int
raw_handoff(struct ph_exchange *ex, const char *desc, size_t len)
{
	struct raw *w = (struct raw *)ex;
	struct ph_buf msg;
	int rc;
	if (ph_hub_fd < 0 || w->failed)
		return -1;
	ph_buf_init(&msg);
	rc = ph_hubmsg_add_rid(&msg, desc, len, w->rid) ? ph_hub_send(msg.data, msg.len, w->fd, 200) : -1;
	ph_buf_free(&msg);
	if (rc != 0)
		return -1;
	w->handed_off = true;
	return 0;
}

static const struct ph_front_ops raw_ops = {
	.param = raw_param,
	.read = raw_read,
	.respond = raw_respond,
	.stream_start = raw_start,
	.stream_send = raw_event,
	.stream_ping = raw_ping,
	.closed = raw_closed,
	.handoff = raw_handoff,
};

/* An exchange writing on fd (taken) for FastCGI request rid. Caller frees
 * with ph_rawfcgi_end. */
static struct ph_exchange *
rawfcgi_new(int fd, unsigned rid)
{
	struct raw *w = ph_xcalloc(1, sizeof *w);
	struct timeval tv = {SEND_TIMEOUT_S, 0};
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	w->fd = fd;
	w->rid = rid;
	w->ex.ops = &raw_ops;
	w->ex.front = w;
	w->ex.http = true;
	return &w->ex;
}

struct ph_exchange *
ph_rawfcgi_resume(int fd, unsigned rid)
{
	return rawfcgi_new(fd, rid & 0xffff);
}

void
ph_rawfcgi_end(struct ph_exchange *ex)
{
	struct raw *w = (struct raw *)ex;
	if (!w->handed_off) {
		struct ph_buf b;
		ph_buf_init(&b);
		ph_fcgi_end(&b, w->rid);
		send_all(w, &b);
		ph_buf_free(&b);
	}
	close(w->fd);
	free(w);
}
