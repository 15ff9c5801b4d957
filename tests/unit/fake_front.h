/* fake_front.h: a front for the tests that plays the web server in memory, so
 * that the C unit tests and the fuzzers drive ph_serve() (or any function
 * that takes an exchange) without a socket. The test sets CGI request
 * variables and a body; the fake records what the core sends back: the
 * status, the content type, the headers, the body or each SSE message. It
 * can also hand the body out in small pieces, fail a read, or play a client
 * that went away.
 *
 * Use: fake_init(), fake_param() and fake_body(), fake_serve() (or pass
 * &f.ex yourself), read the fields below, then fake_free(). The struct may
 * live anywhere; it holds its own copies of everything it was given. */
#ifndef PH_FAKE_FRONT_H
#define PH_FAKE_FRONT_H
#include "first.h"
#include "ph_exchange.h"
#include "ph_core.h"
#include "ph_server.h"
#include "ph_util.h"
#include <json-c/json.h>

/* request variables one exchange may carry */
#define FAKE_MAX_PARAMS 32

struct fake_front {
	struct ph_exchange ex; /* hand &ex to the core; ex.front points back here */

	/* the request, set through fake_param and fake_body (owned) */
	char *pn[FAKE_MAX_PARAMS], *pv[FAKE_MAX_PARAMS];
	size_t np;
	char *body;
	size_t len, pos;

	/* how the client and the connection behave */
	size_t chunk;   /* at most this many bytes per read; 0: as many as asked */
	bool read_fail; /* every read fails (-1) */
	bool read_late; /* every read misses the front's deadline (PH_READ_TIMEOUT) */
	bool gone;      /* the peer closed: closed() says so, every write fails */

	/* what the core did */
	int reads, responds, stream_starts, stream_sends, pings;
	int status;          /* of the last respond, 200 for a stream, 0 before */
	char *ctype;         /* the last respond's content type (owned), or NULL */
	struct ph_buf hdrs;  /* every header sent, "Name: value\n" each */
	struct ph_buf out;   /* the body, or each streamed message and "\n" */
	bool session_id;     /* some header was Mcp-Session-Id */
	bool null_header;    /* some header had a NULL value */
	struct json_object *json; /* fake_json's parse of out (owned), or NULL */
};

/* Sets f up as an empty exchange, HTTP or stdio; f's old contents are not
 * freed (call fake_free first when reusing one). */
void fake_init(struct fake_front *f, bool http);
/* Frees what f owns and leaves it as fake_init(f, false) would. */
void fake_free(struct fake_front *f);

/* Sets request variable name to value (both copied); a NULL value removes it.
 * Variables past FAKE_MAX_PARAMS are dropped. */
void fake_param(struct fake_front *f, const char *name, const char *value);
/* The same with counted strings, for inputs that are not NUL-terminated. */
void fake_param_n(struct fake_front *f, const char *name, size_t nl, const char *value, size_t vl);
/* The value of request variable name (borrowed from f), or NULL. */
const char *fake_get(const struct fake_front *f, const char *name);

/* Sets the body (copied): over HTTP what read() hands out, on stdio the line
 * (ex.body); which of the two follows ex.http at the time of the call. */
void fake_body(struct fake_front *f, const char *body, size_t len);
/* An HTTP POST of body from localhost: REQUEST_METHOD, CONTENT_TYPE
 * application/json, HTTP_HOST and CONTENT_LENGTH, then the body. */
void fake_post(struct fake_front *f, const char *body, size_t len);

/* Runs ph_serve(srv, &f->ex). A stdio line over http.max_body is marked
 * too large, as the stdio front marks it. */
void fake_serve(struct fake_front *f, struct ph_server *srv);

/* The response as parsed JSON (borrowed from f), or NULL when nothing was
 * sent, when it was streamed, or when out is not exactly one JSON document. */
struct json_object *fake_json(struct fake_front *f);
/* True when the headers sent include text (e.g. "Allow: POST\n"). */
bool fake_has_header(const struct fake_front *f, const char *text);
#endif
