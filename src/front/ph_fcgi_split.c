/* ph_fcgi_split.c: the FastCGI front's own reader, beside libfcgi
 * (ph_fcgi.c). What waits on a connection is looked at without taking it
 * (ph_fcgi_waiting); a request that waits whole and simple
 * (ph_fcgi_request_split) is taken off the connection in one read and
 * answered with records written here, one write for a plain response:
 * libfcgi would allocate three 8 KiB streams and a string a parameter for
 * it. Everything else goes to libfcgi. A fast path: docs/internals.md says
 * what it saves and relies on; PHANTOM_FAST_PATHS=off turns it off, as
 * does PHANTOM_FCGI_READER=libfcgi (ph_fcgi_reader).
 *
 * The same exchange, with no request to read, writes a parked call the
 * hub handed back on its connection (ph_fcgi_resume_ops, the server's
 * resume hook): the web server's request on it is answered up to an open
 * SSE stream already, so a complete response is its last event. Its
 * connection is made blocking with a send timeout: a client that stops
 * reading cannot hold this worker for long. */
#include "first.h"
#include "ph_fcgi_split.h"
#include "ph_fcgi_conn.h"
#include "ph_front.h"
#include "ph_log.h"
#include "ph_shared.h"
#include "ph_util.h"
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* The longest a write on a resumed call's connection may block. */
#define RESUME_SEND_TIMEOUT_S 5

struct split_front {
	struct ph_exchange ex; /* a resumed call's (ph_fcgi_resume_ops) */
	const struct ph_fcgi_split *sp; /* NULL: a resumed call, nothing to read */
	unsigned rid;         /* the FastCGI request id answered */
	int fd;
	size_t body_off;      /* how much of the body the core has read */
	struct ph_buf out;    /* records not yet written */
	bool failed;          /* a write failed: the peer is gone */
	bool handed_off;
	bool ended;           /* ended early (split_finish): fd is closed */
	bool tcp;             /* a TCP connection, still with Nagle's algorithm */
	bool on_tcp;          /* a TCP connection */
};


static const char *
split_param(struct ph_exchange *ex, const char *name)
{
	struct split_front *f = ex->front;
	return name && f->sp ? ph_fcgi_split_param(f->sp, name) : NULL;
}

static long
split_read(struct ph_exchange *ex, char *buf, size_t len)
{
	struct split_front *f = ex->front;
	size_t left;
	if (f->sp == NULL)
		return 0; /* a resumed call: its request was read long ago */
	left = f->sp->body_len - f->body_off;
	if (len > left)
		len = left;
	memcpy(buf, f->sp->body + f->body_off, len);
	f->body_off += len;
	return (long)len;
}

/* The body as the split holds it, lent to the core instead of copied
 * (a fast path of docs/internals.md), unless some was read already or
 * ph_fast_paths is off: then NULL, and the core reads it (split_read). */
static const char *
split_held_body(struct ph_exchange *ex, size_t *len)
{
	struct split_front *f = ex->front;
	if (f->body_off != 0 || !ph_fast_paths)
		return NULL; /* the rest, or all of it, through split_read */
	*len = f->sp->body_len;
	return f->sp->body ? f->sp->body : "";
}

/* Writes what f->out holds (blocking, as libfcgi's writes are). */
static int
split_flush(struct split_front *f)
{
	if (f->ended)
		f->failed = true;
	else if (!f->failed && f->out.len > 0 && ph_write_all(f->fd, f->out.data, f->out.len) != 0)
		f->failed = true;
	ph_buf_reset(&f->out);
	return f->failed ? -1 : 0;
}

static void
split_stdout(struct split_front *f, const char *data, size_t len)
{
	if (len > 0)
		ph_fcgi_records(&f->out, PH_FCGI_STDOUT, f->rid, data, len);
}

static int
split_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
	      const char *body, size_t len)
{
	struct split_front *f = ex->front;
	size_t at;
	/* the head and the body go straight into f->out after room for their
	 * record's header, filled in once the length is known (with room for
	 * the end records, written with them) */
	ph_buf_reserve(&f->out, PH_FCGI_HEADER_LEN + 256 + len + PH_FCGI_END_ROOM);
	at = ph_fcgi_record_open(&f->out);
	ph_cgi_response_head(&f->out, status, ctype, hdrs, len);
	if (len && body) /* NULL: the answer to a HEAD */
		ph_buf_add(&f->out, body, len);
	ph_fcgi_record_close(&f->out, at, PH_FCGI_STDOUT, f->rid);
	return f->failed ? -1 : 0;
}

/* A stream writes a little at a time: on TCP those writes must not wait
 * for acknowledgements (a plain answer is one write and the shutdown that
 * follows sends it at once, so it does without). */
static void
split_nodelay(struct split_front *f)
{
	ph_fcgi_nodelay(f->fd, f->tcp);
	f->tcp = false;
}

static int
split_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	struct split_front *f = ex->front;
	struct ph_buf b;
	split_nodelay(f);
	ph_buf_init(&b);
	ph_cgi_head(&b, 200, "text/event-stream", hdrs);
	ph_buf_adds(&b, "\r\n");
	split_stdout(f, b.data, b.len);
	ph_buf_free(&b);
	return split_flush(f);
}

static int
split_stream_send(struct ph_exchange *ex, const char *json, size_t len)
{
	struct split_front *f = ex->front;
	struct ph_buf b;
	ph_buf_init(&b);
	ph_sse_event(&b, 0, json, len);
	split_stdout(f, b.data, b.len);
	ph_buf_free(&b);
	return split_flush(f);
}

static int
split_stream_ping(struct ph_exchange *ex)
{
	struct split_front *f = ex->front;
	split_stdout(f, ": keepalive\n\n", 13);
	return split_flush(f);
}

static bool
split_closed(struct ph_exchange *ex)
{
	struct split_front *f = ex->front;
	struct pollfd p = {f->fd, POLLIN | POLLRDHUP, 0};
	if (f->ended)
		return true;
	return f->failed ||
	       (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0);
}

static int
split_handoff(struct ph_exchange *ex, const char *desc, size_t len)
{
	struct split_front *f = ex->front;
	split_nodelay(f); /* the hub's writes are a stream's */
	if (ph_hub_fd < 0 || split_flush(f) != 0 || ph_fcgi_hand_to_hub(f->fd, f->rid, desc, len) != 0)
		return -1;
	f->handed_off = true;
	return 0;
}

/* The end records after what f->out holds, written; then the connection
 * closed as a request's end closes it (ph_fcgi_close_answered on TCP,
 * ph_fcgi_close_drain otherwise, a plain close when the write failed). */
static void
split_end(struct split_front *f)
{
	ph_fcgi_end(&f->out, f->sp->rid);
	if (split_flush(f) != 0)
		close(f->fd);
	else if (f->on_tcp)
		ph_fcgi_close_answered(f->fd);
	else
		ph_fcgi_close_drain(f->fd);
	f->ended = true;
	f->fd = -1;
}

/* ph_front_ops.finish: the request ended now rather than when the core
 * returns. */
static void
split_finish(struct ph_exchange *ex)
{
	struct split_front *f = ex->front;
	if (!f->ended && !f->handed_off)
		split_end(f);
}

static const struct ph_front_ops split_ops = {
	.param = split_param,
	.read = split_read,
	.held_body = split_held_body,
	.respond = split_respond,
	.stream_start = split_stream_start,
	.stream_send = split_stream_send,
	.stream_ping = split_stream_ping,
	.closed = split_closed,
	.handoff = split_handoff,
	.finish = split_finish,
};

/* A resumed call's stream's head went out in its first round: a complete
 * response can only be its last event. */
static int
resumed_respond(struct ph_exchange *ex, int status, const char *ctype, const struct ph_header *hdrs,
		const char *body, size_t len)
{
	(void)status;
	(void)ctype;
	(void)hdrs;
	return len ? split_stream_send(ex, body, len) : 0;
}

/* Its stream is open already. */
static int
resumed_stream_start(struct ph_exchange *ex, const struct ph_header *hdrs)
{
	(void)ex;
	(void)hdrs;
	return 0;
}

static const struct ph_front_ops resumed_ops = {
	.param = split_param,
	.read = split_read,
	.respond = resumed_respond,
	.stream_start = resumed_stream_start,
	.stream_send = split_stream_send,
	.stream_ping = split_stream_ping,
	.closed = split_closed,
	.handoff = split_handoff,
};

/* The exchange of a call the hub handed back on fd (taken) for request rid
 * (ph_resume_ops.open). Ended with resume_end. */
static struct ph_exchange *
resume_open(int fd, unsigned rid)
{
	struct split_front *f = ph_xcalloc(1, sizeof *f);
	struct timeval tv = {RESUME_SEND_TIMEOUT_S, 0};
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	f->fd = fd;
	f->rid = rid & PH_FCGI_ID_MASK;
	ph_buf_init(&f->out);
	f->ex.ops = &resumed_ops;
	f->ex.front = f;
	f->ex.http = true;
	return &f->ex;
}

/* Ends the resumed call's stream unless it went back to the hub, closes its
 * connection and frees ex (ph_resume_ops.end). */
static void
resume_end(struct ph_exchange *ex)
{
	struct split_front *f = ex->front;
	if (!f->handed_off) {
		ph_fcgi_end(&f->out, f->rid);
		split_flush(f);
	}
	close(f->fd);
	ph_buf_free(&f->out);
	free(f);
}

const struct ph_resume_ops ph_fcgi_resume_ops = {
	.open = resume_open,
	.end = resume_end,
};

/* The memory a response was gathered in is kept for the next one unless
 * it grew past this. */
#define KEPT_OUT_MAX 65536

/* Serves the simple request sp (taken) that was read off fd, then ends it:
 * the end records and ph_fcgi_close_answered (TCP) or ph_fcgi_close_drain,
 * or, when the
 * hub has taken the connection, only our copy closed. */
void
ph_fcgi_serve_split(struct ph_server *srv, int fd, const struct ph_fcgi_split *sp, bool tcp)
{
	/* what goes out is gathered in memory kept for the next request */
	static struct ph_kept kept_out;
	struct split_front f;
	bool kept;
	memset(&f, 0, sizeof f);
	f.sp = sp;
	f.rid = sp->rid;
	f.fd = fd;
	f.tcp = f.on_tcp = tcp;
	kept = ph_kept_take(&kept_out, &f.out);
	ph_fcgi_serve_exchange(srv, &split_ops, &f);
	if (f.handed_off)
		close(fd);
	else if (!f.ended)
		split_end(&f);
	ph_kept_give(&kept_out, &f.out, kept, KEPT_OUT_MAX);
}

/* The most of a connection ph_fcgi_waiting looks at: a larger request is
 * read under the deadlines. */
#define PEEK_MAX 16384

/* Whether a simple request waiting whole is split out of the connection
 * here (the default), or every request is read by libfcgi
 * (PHANTOM_FCGI_READER=libfcgi, or PHANTOM_FAST_PATHS=off without
 * PHANTOM_FCGI_READER=split: ph_fcgi_reader). */
static bool split_reader = true;

bool
ph_fcgi_reader(bool say, char *err, size_t errsz)
{
	const char *v = getenv("PHANTOM_FCGI_READER");
	if (v == NULL || *v == '\0') {
		/* the split reader is a fast path (docs/internals.md): off with the rest */
		split_reader = ph_fast_paths;
	} else if (strcmp(v, "split") == 0) {
		split_reader = true; /* even with the fast paths off: its plain by_len path */
	} else if (strcmp(v, "libfcgi") == 0) {
		split_reader = false;
		if (say)
			ph_log("notice", "PHANTOM_FCGI_READER=libfcgi: libfcgi reads every request");
	} else {
		snprintf(err, errsz, "PHANTOM_FCGI_READER is '%.64s': it is libfcgi or split", v);
		return false;
	}
	return true;
}

/* What of the next request waits on fd, looked at without taking it
 * (MSG_PEEK): part of it, all of it (libfcgi reads it without deadlines),
 * or all of a simple one on a fresh connection, then split into *sp and
 * taken off fd (PH_FCGI_WAIT_GONE: taking it failed). A fresh connection with
 * nothing on it yet (the web server connected and has not written: common
 * on TCP) is given params_ms for its first bytes, by poll, and looked at
 * again; PH_FCGI_WAIT_SILENT: none came. */
enum ph_fcgi_wait
ph_fcgi_waiting(int fd, bool fresh, long long params_ms, struct ph_fcgi_split *sp)
{
	static unsigned char buf[PEEK_MAX];
	ssize_t n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
	size_t got = 0;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && fresh) {
		struct pollfd p = {fd, POLLIN, 0};
		int rc;
		do
			rc = poll(&p, 1, params_ms > INT_MAX ? INT_MAX : (int)params_ms);
		while (rc < 0 && errno == EINTR);
		if (rc == 0)
			return PH_FCGI_WAIT_SILENT;
		n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
	}
	if (n <= 0 || !ph_fcgi_request_whole(buf, (size_t)n))
		return PH_FCGI_WAIT_PART;
	if (!fresh || !split_reader || !ph_fcgi_request_split(buf, (size_t)n, sp))
		return PH_FCGI_WAIT_WHOLE;
	/* the bytes are there: this read does not wait (they are taken off
	 * the connection into sink: buf holds the split now) */
	while (got < sp->used) {
		static unsigned char sink[PEEK_MAX];
		ssize_t r = read(fd, sink, sp->used - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return PH_FCGI_WAIT_GONE;
		got += (size_t)r;
	}
	return PH_FCGI_WAIT_SPLIT;
}
