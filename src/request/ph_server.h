/* ph_server.h: the request layer's view of one request: the loaded server
 * it runs in, the per-request context the core passes to features and
 * handlers, what a handler returns, and the handler-facing request API
 * (ph_req.c, ph_access.c). */
#ifndef PH_SERVER_H
#define PH_SERVER_H
#include "first.h"
#include "ph_config.h"
#include "ph_err.h"
#include "ph_exchange.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_method.h"
#include <json-c/json.h>

#define PH_MODERN_VERSION "2026-07-28"
#define PH_LEGACY_LATEST "2025-11-25"

/* The workers' end of the channel to the hub (-1 without a master, and so
 * without a hub): streams that stay open are handed over on it (sent by
 * ipc/ph_shared.c); a request can be parked or handed over only with it. */
extern int ph_hub_fd;

/* A call's connection the hub handed back (a parked call resumed,
 * core/ph_park.c), as an exchange: its framing is the front's, so the
 * front makes it (the FastCGI front installs these on the server it
 * serves, front/ph_fcgi_split.c) and the core never names the wire. */
struct ph_resume_ops {
	/* The exchange of the call on connection fd (taken), for the front's
	 * request id rid on it (the one it added when it handed the stream to
	 * the hub). Its stream's head went out long ago. Caller ends it with
	 * end. */
	struct ph_exchange *(*open)(int fd, unsigned rid);
	/* Ends the stream (unless it went back to the hub), closes fd, frees ex. */
	void (*end)(struct ph_exchange *ex);
};

struct ph_server {
	struct ph_config *conf; /* owned */
	/* borrowed, static: how the front resumes a call; NULL: it cannot */
	const struct ph_resume_ops *resume;
	struct json_object *server_info; /* Implementation object, built once */
	/* the member "_meta": {"io.modelcontextprotocol/serverInfo": ...} of a
	 * 2026-07-28 result as text, written once */
	char *server_info_meta;
	size_t server_info_meta_len;
};


enum ph_log_level {
	PH_LOG_NONE = -1,
	PH_LOG_DEBUG, PH_LOG_INFO, PH_LOG_NOTICE, PH_LOG_WARNING,
	PH_LOG_ERROR, PH_LOG_CRITICAL, PH_LOG_ALERT, PH_LOG_EMERGENCY
};

struct ph_access;

/* Who asks, as the access checks see it (ph_access.c): a request carries
 * one (ph_req.who); a process that holds streams for others (the hub)
 * makes one of what a worker told it, without a request around it. */
struct ph_viewer {
	const char *principal;          /* authenticated principal, NULL when none */
	struct json_object *assigns;    /* borrowed: the authenticator's attributes of the
					 * principal (an object), NULL when none (ph_auth.c) */
	const struct ph_access *access; /* allow-lists, NULL: none (ph_auth.c) */
	bool access_own;                /* access came from the authenticator, not auth.allow */
	bool restricted;                /* allow-lists exist for someone (ph_auth.c) */
};

/* A request's W3C trace context: the headers as they came, and from a
 * valid traceparent its trace and span (our parent), a span id made for
 * this request, and the traceparent handlers continue from
 * ("00-trace-span-flags"); empty strings when there was none. */
struct ph_req_trace {
	const char *traceparent, *tracestate, *baggage;
	char trace_id[33], parent_span_id[17], span_id[17], child_traceparent[56];
};

/* Telemetry per request (ipc/ph_otel_req.c): whether its trace is
 * sampled, the other trace context (a link), and what the result said.
 * Zeroed with the request. */
struct ph_otel_req {
	bool started, sampled, tool_error;
	char link_trace[33], link_span[17];
	char message[128];   /* the JSON-RPC error's message, cut */
};

/* What a request carries across rounds and sessions. */
struct ph_req_session {
	/* multi-round requests (ph_mrtr.c): the state opened from a verified
	 * requestState (owned, may be NULL), the client's inputResponses
	 * (borrowed, NULL when absent) and whether a requestState was verified */
	struct json_object *mrtr_state;
	struct json_object *input_responses;
	bool resumed;
	/* legacy sessions (core/ph_session.c): the opened Mcp-Session-Id of
	 * this request (owned, NULL: none) and the id an initialize issues
	 * (owned, sent as Mcp-Session-Id, NULL: none) */
	struct json_object *session;
	char *session_issued;
	/* a handler's inputRequired {inputRequests, state} that this legacy
	 * session's client gets as pushed requests (owned; core/ph_park.c
	 * sends them and parks the call in the hub); NULL: none */
	struct json_object *park;
};

/* What of a request's response has been sent. */
struct ph_req_resp {
	int status;                     /* HTTP status sent */
	int rpc_code;                   /* JSON-RPC error code sent, 0 for success */
	bool streaming;                 /* an SSE stream was started */
	bool detached;                  /* the handler answers later or never (stdio listen) */
	/* borrowed: inside a legacy batch, the array its responses are
	 * collected in (the core sends it once); NULL otherwise */
	struct json_object *batch;
	double last_progress;           /* the last progress sent, -1: none */
};

/* One request as the core sees it after the envelope is parsed. Made by
 * ph_req_init; features and handlers get it borrowed. */
struct ph_req {
	struct ph_server *srv;          /* borrowed */
	struct ph_exchange *ex;         /* borrowed */
	struct json_object *msg;        /* owned: the parsed request */
	struct json_object *id;         /* borrowed from msg; NULL for notifications */
	const char *method;             /* borrowed from msg (ph_req_set_method) */
	/* the method, PH_METHOD__COUNT for one Phantom does not serve (and
	 * for the names of requests that are not JSON-RPC: "GET", "batch");
	 * set with method, meaningless while method is NULL */
	enum ph_method mid;
	struct json_object *params;     /* borrowed from msg, may be NULL */
	bool legacy;                    /* 2025-11-25 semantics */
	const char *version;            /* the version claimed in _meta (modern) */
	struct json_object *client_caps;/* borrowed; NULL on legacy HTTP */
	struct json_object *progress_token; /* borrowed, may be NULL */
	enum ph_log_level log_level;
	struct ph_req_trace trace;      /* W3C trace context (core/ph_ladder.c) */
	const char *cors_origin;        /* an Origin http.cors allows: CORS headers go out */
	/* HTTP: the MCP-Protocol-Version and Mcp-Method headers, read once by
	 * the HTTP rules; NULL when absent or not over HTTP */
	const char *hdr_version, *hdr_method;
	bool counted;                   /* an MCP request for the metrics (not health, scrapes) */
	const char *target;             /* tool name, prompt name or uri, for the log */
	/* a request that is not an MCP POST: its path, REQUEST_URI without the
	 * query (which may carry a token), cut at 200 bytes, as its target */
	char path[201];
	struct ph_viewer who;           /* who asks: set by authentication */
	struct json_object *scopes;     /* borrowed: the OAuth scopes the token grants (an
					 * array), NULL when not auth.mode oauth (ph_oauth.c) */
	void *auth_state;               /* owned by ph_auth.c, released by ph_auth_end */
	struct ph_req_session sess;     /* rounds, the legacy session, a parked call */
	struct ph_req_resp resp;        /* what has been sent */
	int64_t t0;
	const char *exec_how;           /* "warm" or "fresh": a persistent exec served it (log line) */
	struct ph_otel_req otel;        /* telemetry (ph_otel_req.c); untouched when off */
};

/* What a method handler returns: a result object (transferred to the core) or
 * an error with a message and optional data (both transferred). */
struct ph_outcome {
	struct json_object *result;
	enum ph_err err;
	char *message;
	struct json_object *data;
};

void ph_outcome_error(struct ph_outcome *o, enum ph_err e, struct json_object *data,
		      const char *fmt, ...) PH_PRINTF(4, 5);

/* Makes r an empty request of srv (may be NULL: the configuration did not
 * load) on ex (may be NULL: a hook run with nobody to answer), both
 * borrowed: no method (mid PH_METHOD__COUNT), no log level, no progress
 * sent, started now. The one way a struct ph_req is made. */
void ph_req_init(struct ph_req *r, struct ph_server *srv, struct ph_exchange *ex);

/* Sets the request's method: its name (borrowed: from r->msg, or static)
 * and which of enum ph_method it is, found once here. */
void ph_req_set_method(struct ph_req *r, const char *name);

/* Copies the headers hdrs (ends with {NULL, NULL}) into out (room for max
 * entries) and adds what every response of this request carries (CORS).
 * The values are borrowed from hdrs and r. */
void ph_req_headers(const struct ph_req *r, const struct ph_header *hdrs, struct ph_header *out,
		    size_t max);

/* Sends a notification related to the request (progress, message). On HTTP
 * the first one turns the response into an SSE stream. Takes ownership of
 * params. Returns -1 when the client has gone (the request is cancelled).
 * A request inside a batch sends none (the batch is one JSON answer). */
int ph_req_notify(struct ph_req *r, const char *method, struct json_object *params);
/* Starts the response's SSE stream (its head) if it has not started.
 * Returns -1 when the client has gone. */
int ph_req_stream(struct ph_req *r);
/* Sends msg (borrowed, any JSON-RPC message: a request the server makes)
 * on the request's SSE stream, starting it as ph_req_notify does. Returns
 * -1 when the client has gone. */
int ph_req_send(struct ph_req *r, struct json_object *msg);
/* Long-running handlers call this about once a second: on an SSE stream it
 * sends a keep-alive comment, which is how a closed client is noticed.
 * Returns false when the request is cancelled (client gone, or
 * notifications/cancelled on stdio); the handler must stop its work. */
bool ph_req_alive(struct ph_req *r);
/* True when the request is cancelled or the peer has closed the connection;
 * cheap (no write), for loops that check often. */
bool ph_req_gone(struct ph_req *r);
/* Emits notifications/progress if the request carries a progressToken and
 * progress increases. */
int ph_req_progress(struct ph_req *r, double progress, double total, const char *message);
/* Emits notifications/message if the request asked for this level or lower. */
int ph_req_log(struct ph_req *r, enum ph_log_level level, const char *logger,
	       struct json_object *data);


/* ---- helpers for method handlers (ph_req.c) ---- */

/* The request's assigns as a new reference (caller puts): the object the
 * authenticator returned next to the principal, or an empty object. */
struct json_object *ph_req_assigns(const struct ph_req *r);
/* Who a sealed token (requestState, a list cursor) is bound to: the
 * principal, and with assigns also a SHA-256 of their canonical JSON, so a
 * retry by another principal, or by the same one with other assigns, is
 * refused. NULL when there is neither. Caller frees. */
char *ph_req_binding(const struct ph_req *r);
/* The text of assigns member name (len bytes) for a {{assigns.NAME}}
 * placeholder: a string as it is, a number or boolean as JSON; NULL for an
 * object, array, null or a missing member (assigns may be NULL). Borrowed
 * from assigns. */
const char *ph_assign_text(struct json_object *assigns, const char *name, size_t len);

/* Sets o to "resource not found" for uri: -32602 with data.uri (modern) or
 * -32002 (legacy). */
void ph_outcome_not_found(struct ph_req *r, struct ph_outcome *o, const char *uri);
/* Decodes an MCP header value written as =?base64?...?=. Returns 0 with *out
 * (caller frees), 1 when the value is a literal, -1 on bad base64 or when the
 * decoded bytes are not valid UTF-8 (RFC 3629) or hold a NUL. */
int ph_header_decode(const char *v, size_t n, char **out);

/* Pagination (mcp-wire §11): reads params.cursor. Returns 0 with *offset, or
 * -1 after setting o to -32602 "Invalid cursor". */
int ph_page_begin(struct ph_req *r, size_t total, size_t *offset, struct ph_outcome *o);
/* The number of items on a page starting at offset. */
size_t ph_page_count(const struct ph_req *r, size_t total, size_t offset);
/* Adds nextCursor to result when items remain after offset+count. */
void ph_page_end(struct ph_req *r, struct json_object *result, size_t offset, size_t count,
		 size_t total);
/* The same for a list whose entries have keys (a name, a URI): the cursor
 * remembers the keys of the last entries of the page, and the next page
 * starts after the last of them still in the list, so a reload between two
 * pages skips nothing. key appends the key of entry i (0 to total-1) of the
 * list as it is on this request to b. */
struct ph_buf;
struct ph_page_keys {
	void (*key)(const void *ctx, size_t i, struct ph_buf *b);
	const void *ctx;
};
int ph_page_resume(struct ph_req *r, size_t total, const struct ph_page_keys *k, size_t *offset,
		   struct ph_outcome *o);
void ph_page_mark(struct ph_req *r, struct json_object *result, size_t offset, size_t count,
		  size_t total, const struct ph_page_keys *k);

/* ---- access control (ph_access.c, docs/auth.md) ---- */
enum ph_kind { PH_KIND_TOOL, PH_KIND_PROMPT, PH_KIND_RESOURCE, PH_KIND_SKILL };
/* True when the viewer may see and use this item (ph_access_allowed). */
bool ph_viewer_allowed(const struct ph_viewer *v, enum ph_kind kind, const char *name);
/* Who sees a stream's lists, for a process that holds the stream and
 * recomputes them at a reload (the hub): adds to d "access" (the
 * allow-lists, when the authenticator gave them: configured ones are
 * looked up again in each configuration) and "assigns", when v has them. */
void ph_viewer_describe(const struct ph_viewer *v, struct json_object *d);
/* True when the request's principal may see and use this item. Anything not
 * allowed must be indistinguishable from absent. name is:
 *  - PH_KIND_TOOL, PH_KIND_PROMPT: the tool or prompt name;
 *  - PH_KIND_RESOURCE: a static resource's uri, or a resource template's
 *    uri_template, compared exactly (names are not identifiers: a resource
 *    and a template may share one). A resources/read or completion of a
 *    concrete uri is allowed when the resource or template serving it is;
 *  - PH_KIND_SKILL: the skill path as written in the manifest
 *    ("acme/billing/refunds", "studies/:study_id/study-review"); an entry
 *    grants that skill and every skill nested below it ("acme/billing"
 *    grants "acme/billing/refunds", not "acme/billing-old").
 * NULL name: false when the kind is restricted. */
static inline bool
ph_access_allowed(const struct ph_req *r, enum ph_kind kind, const char *name)
{
	return ph_viewer_allowed(&r->who, kind, name);
}
/* True when what this request sees may depend on who asks: allow-lists are
 * configured for some principal, or an exec authenticator may send them.
 * Results that list or serve items must then be cacheScope "private" (a
 * public copy of one principal's view could be reused for another). */
bool ph_access_restricted(const struct ph_req *r);
/* ph_viewer_describe of the request's viewer. */
static inline void
ph_access_describe(const struct ph_req *r, struct json_object *d)
{
	ph_viewer_describe(&r->who, d);
}
/* The allow-lists of an "access" member ph_access_describe wrote (NULL or
 * not an object of arrays of strings: NULL). Caller frees with
 * ph_access_free. */
struct ph_access *ph_access_read(struct json_object *o);
void ph_access_free(struct ph_access *a);

/* Parses a level name; returns PH_LOG_NONE when unknown. */
enum ph_log_level ph_log_level_parse(const char *s);
const char *ph_log_level_name(enum ph_log_level l);
#endif
