/* ph_fcgi_wire.h: the FastCGI wire (FastCGI 1.0), known here and only
 * here: the spec's constants, the record header's one decoder and one
 * encoder, the abort test of the hub, the one record writer every process uses (the
 * workers' own reader, the hub's streams, a connection handed back), and
 * the reader that splits a simple request out of the bytes a connection
 * holds. libfcgi reads what the split declines. */
#ifndef PH_FCGI_WIRE_H
#define PH_FCGI_WIRE_H
#include "first.h"
#include <stdbool.h>
#include <stddef.h>

/* The spec's constants (FastCGI 1.0, sections 3.3, 5.1, 5.5 and 8), named
 * here once. */
#define PH_FCGI_VERSION_1 1       /* the only version there is */
#define PH_FCGI_HEADER_LEN 8      /* a record's header */
#define PH_FCGI_RECORD_MAX 65535  /* the most a record's content holds */
#define PH_FCGI_ID_MASK 0xffffu   /* a request id is 16 bits */
#define PH_FCGI_BEGIN_BODY_LEN 8  /* FCGI_BeginRequestBody */
#define PH_FCGI_END_BODY_LEN 8    /* FCGI_EndRequestBody */
#define PH_FCGI_RESPONDER 1       /* the role of FCGI_BeginRequestBody */
#define PH_FCGI_KEEP_CONN 1       /* its flag: the connection outlives the request */
#define PH_FCGI_REQUEST_COMPLETE 0 /* protocolStatus of FCGI_EndRequestBody */
/* What ends an answer (ph_fcgi_end): the empty FCGI_STDOUT record, then
 * FCGI_END_REQUEST with its body. */
#define PH_FCGI_END_ROOM (2 * PH_FCGI_HEADER_LEN + PH_FCGI_END_BODY_LEN)

/* Record types (FastCGI 1.0 section 8). */
enum {
	PH_FCGI_BEGIN_REQUEST = 1,
	PH_FCGI_ABORT_REQUEST = 2,
	PH_FCGI_END_REQUEST = 3,
	PH_FCGI_PARAMS = 4,
	PH_FCGI_STDIN = 5,
	PH_FCGI_STDOUT = 6,
};

/* A record's header (FCGI_Header), decoded. */
struct ph_fcgi_header {
	unsigned version; /* PH_FCGI_VERSION_1 */
	unsigned type;    /* PH_FCGI_BEGIN_REQUEST ... */
	unsigned rid;     /* request id, 0 for a management record */
	size_t clen;      /* content length, at most PH_FCGI_RECORD_MAX */
	size_t plen;      /* padding length, at most 255 */
};

/* What ph_fcgi_header_decode found. */
enum ph_fcgi_hdr {
	PH_FCGI_HDR_OK,
	PH_FCGI_HDR_SHORT,   /* fewer than PH_FCGI_HEADER_LEN bytes */
	PH_FCGI_HDR_VERSION, /* not PH_FCGI_VERSION_1 */
};

/* Decodes the record header at the start of the n bytes at b into *h.
 * Returns PH_FCGI_HDR_OK; PH_FCGI_HDR_SHORT with *h untouched; or
 * PH_FCGI_HDR_VERSION with *h filled (its version says which). */
enum ph_fcgi_hdr ph_fcgi_header_decode(const unsigned char *b, size_t n, struct ph_fcgi_header *h);
/* Why a header did not decode, for a log line ("bad header version: 2
 * (want 1)"): written into err (errsz bytes) and returned. */
const char *ph_fcgi_header_error(enum ph_fcgi_hdr e, const struct ph_fcgi_header *h, char *err,
				 size_t errsz);
/* Encodes *h into out. A length over its field (clen over
 * PH_FCGI_RECORD_MAX, rid over PH_FCGI_ID_MASK, plen over 255) is the
 * caller's bug and aborts, as lighttpd's force_assert does. */
void ph_fcgi_header_encode(const struct ph_fcgi_header *h, unsigned char out[PH_FCGI_HEADER_LEN]);
/* The bytes a whole record with this header takes: header, content and
 * padding. */
static inline size_t
ph_fcgi_record_len(const struct ph_fcgi_header *h)
{
	return PH_FCGI_HEADER_LEN + h->clen + h->plen;
}
/* Whether the n bytes at b, what the web server wrote on a connection it
 * handed over (the hub's streams and parked calls), hold an
 * FCGI_ABORT_REQUEST: the records read whole from b's start. */
bool ph_fcgi_aborted(const unsigned char *b, size_t n);

struct ph_buf;
/* Appends FastCGI records of type for request rid carrying len bytes of
 * data (at least one record, so len 0 writes the empty record that ends a
 * stream), each at most 65535 bytes. The hub writes its streams with it. */
void ph_fcgi_records(struct ph_buf *b, int type, unsigned rid, const char *data, size_t len);
/* Begins in b a record whose content is appended next, before its length
 * is known: room for its header. Returns where it starts, for
 * ph_fcgi_record_close. */
size_t ph_fcgi_record_open(struct ph_buf *b);
/* Ends the record begun at at in b (ph_fcgi_record_open), of type for
 * request rid, once its content is all appended: its header filled in, or,
 * content over PH_FCGI_RECORD_MAX, cut into records as ph_fcgi_records
 * writes them. */
void ph_fcgi_record_close(struct ph_buf *b, size_t at, int type, unsigned rid);
/* Whether the n bytes at b, the start of what a connection holds, carry a
 * whole request: FCGI_BEGIN_REQUEST, then its parameters and its body each
 * up to the empty record that ends them (other requests' records and
 * management records may come between). The FastCGI front reads a request
 * that already waits whole without deadlines. */
bool ph_fcgi_request_whole(const unsigned char *b, size_t n);
/* A simple request split out of the bytes holding it, in place: its
 * parameters as names (nlen bytes, not NUL-ended) and values, and its
 * body, each NUL-ended where it lies (a parameter block or a body that came
 * in several records is joined in a block of memory, mem, that the next
 * split reuses); zero the struct before the first and release the block
 * with ph_fcgi_split_free. */
#define PH_FCGI_SPLIT_LENS 32 /* names this long or longer share the last list */
struct ph_fcgi_split {
	unsigned rid;     /* its request id */
	size_t n;         /* parameters */
	const char **name; /* name[i]: the i-th parameter's name, nlen[i] bytes */
	const char **value; /* value[i]: its value, NUL-ended (right after its name) */
	unsigned *nlen, *vlen; /* the lengths of each (a value may hold a NUL) */
	/* the parameters by the length of their name (ph_fcgi_split_param): a
	 * fast path (docs/internals.md) saving 985 to 2,005 of some 34,000
	 * instructions a module tools/call against a scan of every pair
	 * (tests/bench/ab.sh). It relies on each list running in the order of
	 * the pairs (the first of a name wins, as in libfcgi) and on the
	 * block of ph_fcgi_request_split having room for next_len; a list
	 * built in another order, or a block sized without it, would break
	 * it. Neither built nor used while ph_fast_paths is off
	 * (PHANTOM_FAST_PATHS=off: a scan of every pair). */
	int by_len[PH_FCGI_SPLIT_LENS]; /* the first of each length, -1: none */
	int *next_len;    /* next_len[i]: the one after i of its length, or -1 */
	char *body;       /* NUL-ended */
	size_t body_len;
	size_t used;      /* bytes it takes of the connection, through its last record */
	char *mem;        /* the arrays, and what was joined */
	size_t cap;
};
/* Splits the n bytes at b when they start with a whole simple request:
 * FCGI_BEGIN_REQUEST for the responder role without FCGI_KEEP_CONN, then
 * only that request's parameters up to their empty record and its body up
 * to its empty record. Returns false, name and body NULL and b untouched,
 * for anything else (other records, other roles, a kept connection, a pair
 * whose lengths run past its block): libfcgi reads those. On success b
 * holds the NULs that end the values and the body (each on a byte the split
 * has read by then: the next pair's first length byte, or the first after
 * a block, a record's version or padding), so the bytes are the split's,
 * no longer the request's, and must stay while it is used. */
bool ph_fcgi_request_split(unsigned char *b, size_t n, struct ph_fcgi_split *out);
/* The value of the split request's parameter name, or NULL: the first of
 * that name, as libfcgi's FCGX_GetParam finds it. */
const char *ph_fcgi_split_param(const struct ph_fcgi_split *s, const char *name);
void ph_fcgi_split_free(struct ph_fcgi_split *s);
/* Appends the end of request rid's answer: the empty FCGI_STDOUT record
 * and FCGI_END_REQUEST with appStatus 0 and FCGI_REQUEST_COMPLETE. */
void ph_fcgi_end(struct ph_buf *b, unsigned rid);
#endif
