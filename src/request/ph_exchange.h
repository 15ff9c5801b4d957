/* ph_exchange.h: the boundary between a front (FastCGI, CGI, stdio) and the
 * MCP core. A front turns bytes into an exchange and implements these few
 * operations; the core never sees a socket, and a front never sees JSON-RPC. */
#ifndef PH_EXCHANGE_H
#define PH_EXCHANGE_H
#include "first.h"

struct ph_exchange;

struct ph_header {
	const char *name;
	const char *value;
};

/* ph_front_ops.read: the deadline for the body passed. */
#define PH_READ_TIMEOUT (-2L)

struct ph_front_ops {
	/* A request variable by its CGI name ("REQUEST_METHOD", "CONTENT_TYPE",
	 * "HTTP_ORIGIN"); borrowed until the exchange ends, or NULL. */
	const char *(*param)(struct ph_exchange *ex, const char *name);
	/* Reads up to len body bytes: returns the count, 0 at the end, -1 on
	 * error (the body was cut short), PH_READ_TIMEOUT when the body did not
	 * arrive by the front's deadline (http.body_timeout_ms). */
	long (*read)(struct ph_exchange *ex, char *buf, size_t len);
	/* Sends a complete response. body may be NULL (len 0) for 202; NULL
	 * with len > 0 answers a HEAD: the head says Content-Length len and no
	 * body follows. hdrs ends with a {NULL, NULL} entry. Returns -1 when
	 * the client is gone. */
	int (*respond)(struct ph_exchange *ex, int status, const char *content_type,
		       const struct ph_header *hdrs, const char *body, size_t len);
	/* Starts a streamed (SSE) response with status 200. */
	int (*stream_start)(struct ph_exchange *ex, const struct ph_header *hdrs);
	/* Sends one JSON-RPC message on the stream and flushes it. */
	int (*stream_send)(struct ph_exchange *ex, const char *json, size_t len);
	/* Sends an SSE comment (keep-alive) and flushes; -1 when the client is gone. */
	int (*stream_ping)(struct ph_exchange *ex);
	/* True when the peer has closed the connection (checked without
	 * writing or blocking). May be NULL when the front cannot tell. */
	bool (*closed)(struct ph_exchange *ex);
	/* The messages the client sent after this one and the front has read
	 * ahead (stdio), oldest first: line i (borrowed until the next call
	 * of any op, its length in *len), or NULL past the last. The core
	 * looks for a notifications/cancelled naming the running request.
	 * NULL when the front reads nothing ahead. */
	const char *(*queued)(struct ph_exchange *ex, size_t i, size_t *len);
	/* Drops queued line i: the core has consumed it. */
	void (*dequeue)(struct ph_exchange *ex, size_t i);
	/* Hands the connection, with what has been written so far flushed, to
	 * the hub together with desc (len bytes: the JSON the hub needs to
	 * carry the stream on). Returns 0 when the hub has it: the front then
	 * lets the request go without ending it, and nothing more may be
	 * written. -1 (nothing handed over) when there is no hub or it
	 * cannot take it. NULL when the front cannot hand over. */
	int (*handoff)(struct ph_exchange *ex, const char *desc, size_t len);
	/* Waits at most ms for more of the client's messages to be read ahead
	 * (stdio: a call waiting for the answers to the requests it sent).
	 * Returns 0, or -1 once the input has ended. NULL when the front
	 * reads nothing ahead. */
	int (*wait)(struct ph_exchange *ex, int ms);
	/* The whole body, when the front holds all of it in memory already
	 * (borrowed until the exchange ends), its length in *len; the core
	 * then reads nothing. May be NULL, or return NULL: read it is. */
	const char *(*held_body)(struct ph_exchange *ex, size_t *len);
	/* Ends the response now, as the front ends one once the core returns:
	 * what was written goes out with the end of the request and the
	 * connection is let go; nothing more may be written to ex. The core
	 * calls it before work the response must not wait for (the call an
	 * answer resumed). NULL: the front ends it when the core returns. */
	void (*finish)(struct ph_exchange *ex);
};

struct ph_exchange {
	const struct ph_front_ops *ops;
	void *front;              /* the front's own state */
	bool http;                /* false on stdio: no HTTP rules, no headers */
	const char *body;         /* stdio: the line; HTTP: NULL, read through ops->read */
	size_t body_len;
	bool too_large;           /* stdio: the line was over the body limit */
	volatile int cancelled;   /* set when the client went away or cancelled */
};
#endif
