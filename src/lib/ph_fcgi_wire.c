/* ph_fcgi_wire.c: FastCGI records written (ph_fcgi_records, or one begun
 * before its length is known) and simple requests split out of a
 * connection's bytes (ph_fcgi_wire.h). */
#include "first.h"
#include "ph_fcgi_wire.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ph_fcgi_hdr
ph_fcgi_header_decode(const unsigned char *b, size_t n, struct ph_fcgi_header *h)
{
	if (n < PH_FCGI_HEADER_LEN)
		return PH_FCGI_HDR_SHORT;
	h->version = b[0];
	h->type = b[1];
	h->rid = (unsigned)b[2] << 8 | b[3];
	h->clen = (size_t)b[4] << 8 | b[5];
	h->plen = b[6];
	return h->version == PH_FCGI_VERSION_1 ? PH_FCGI_HDR_OK : PH_FCGI_HDR_VERSION;
}

const char *
ph_fcgi_header_error(enum ph_fcgi_hdr e, const struct ph_fcgi_header *h, char *err, size_t errsz)
{
	switch (e) {
	case PH_FCGI_HDR_OK:
		snprintf(err, errsz, "a good header");
		break;
	case PH_FCGI_HDR_SHORT:
		snprintf(err, errsz, "short header: fewer than %d bytes", PH_FCGI_HEADER_LEN);
		break;
	case PH_FCGI_HDR_VERSION:
		snprintf(err, errsz, "bad header version: %u (want %d)", h->version, PH_FCGI_VERSION_1);
		break;
	}
	return err;
}

/* A caller's bug (a field that does not fit its bytes): stop here, as
 * lighttpd's force_assert does, rather than write a record the peer
 * misreads. */
#define FCGI_MUST(cond) \
	do { \
		if (!(cond)) \
			abort(); \
	} while (0)

void
ph_fcgi_header_encode(const struct ph_fcgi_header *h, unsigned char out[PH_FCGI_HEADER_LEN])
{
	FCGI_MUST(h->version == PH_FCGI_VERSION_1 && h->type <= 0xff);
	FCGI_MUST(h->rid <= PH_FCGI_ID_MASK && h->clen <= PH_FCGI_RECORD_MAX && h->plen <= 0xff);
	out[0] = (unsigned char)h->version;
	out[1] = (unsigned char)h->type;
	out[2] = (unsigned char)(h->rid >> 8);
	out[3] = (unsigned char)(h->rid & 0xff);
	out[4] = (unsigned char)(h->clen >> 8);
	out[5] = (unsigned char)(h->clen & 0xff);
	out[6] = (unsigned char)h->plen;
	out[7] = 0; /* reserved */
}

bool
ph_fcgi_aborted(const unsigned char *b, size_t n)
{
	struct ph_fcgi_header h;
	size_t off = 0;
	while (ph_fcgi_header_decode(b + off, n - off, &h) == PH_FCGI_HDR_OK) {
		if (h.type == PH_FCGI_ABORT_REQUEST)
			return true;
		if (ph_fcgi_record_len(&h) > n - off)
			break; /* the rest of it comes in a later read */
		off += ph_fcgi_record_len(&h);
	}
	return false;
}

/* The header of a record of type for request rid carrying len bytes,
 * without padding. */
static inline struct ph_fcgi_header
fcgi_header(int type, unsigned rid, size_t len)
{
	struct ph_fcgi_header h = {PH_FCGI_VERSION_1, (unsigned)type, rid, len, 0};
	return h;
}

void
ph_fcgi_records(struct ph_buf *b, int type, unsigned rid, const char *data, size_t len)
{
	do {
		size_t n = len > PH_FCGI_RECORD_MAX ? PH_FCGI_RECORD_MAX : len;
		unsigned char h[PH_FCGI_HEADER_LEN];
		struct ph_fcgi_header hd = fcgi_header(type, rid, n);
		ph_fcgi_header_encode(&hd, h);
		ph_buf_add(b, h, sizeof h);
		if (n > 0) { /* NULL + 0 is undefined: the empty record has no data */
			ph_buf_add(b, data, n);
			data += n;
		}
		len -= n;
	} while (len > 0);
}

size_t
ph_fcgi_record_open(struct ph_buf *b)
{
	static const char room[PH_FCGI_HEADER_LEN];
	size_t at = b->len;
	ph_buf_add(b, room, sizeof room);
	return at;
}

void
ph_fcgi_record_close(struct ph_buf *b, size_t at, int type, unsigned rid)
{
	size_t clen = b->len - at - PH_FCGI_HEADER_LEN;
	struct ph_buf c;
	if (clen <= PH_FCGI_RECORD_MAX) {
		struct ph_fcgi_header h = fcgi_header(type, rid, clen);
		ph_fcgi_header_encode(&h, (unsigned char *)b->data + at);
		return;
	}
	/* more than one record holds: cut into records (with room for the end
	 * records that usually follow) */
	ph_buf_init(&c);
	ph_buf_add(&c, b->data + at + PH_FCGI_HEADER_LEN, clen);
	b->len = at;
	ph_buf_reserve(b, clen + (clen / PH_FCGI_RECORD_MAX + 1) * PH_FCGI_HEADER_LEN + PH_FCGI_END_ROOM);
	ph_fcgi_records(b, type, rid, c.data, c.len);
	ph_buf_free(&c);
}

bool
ph_fcgi_request_whole(const unsigned char *b, size_t n)
{
	unsigned rid = 0; /* the request's id, once its PH_FCGI_BEGIN_REQUEST came */
	bool params_end = false, stdin_end = false;
	size_t off = 0;
	struct ph_fcgi_header h;
	enum ph_fcgi_hdr e;
	while ((e = ph_fcgi_header_decode(b + off, n - off, &h)) != PH_FCGI_HDR_SHORT) {
		size_t rec = ph_fcgi_record_len(&h);
		if (e != PH_FCGI_HDR_OK || rec > n - off)
			return false; /* not version 1, or the record is not all here */
		if (rid == 0 && h.type == PH_FCGI_BEGIN_REQUEST && h.rid != 0)
			rid = h.rid;
		else if (rid != 0 && h.rid == rid && h.type == PH_FCGI_PARAMS && h.clen == 0)
			params_end = true;
		else if (rid != 0 && h.rid == rid && h.type == PH_FCGI_STDIN && h.clen == 0)
			stdin_end = true;
		off += rec;
		if (params_end && stdin_end)
			return true;
	}
	return false;
}

/* Reads a FastCGI name or value length at p (1 byte, or 4 with the high
 * bit set) within end. Returns false when it runs past end. */
static inline bool
pair_len(const unsigned char **p, const unsigned char *end, size_t *len)
{
	if (*p >= end)
		return false;
	if (**p < 0x80) {
		*len = *(*p)++;
		return true;
	}
	if (end - *p < 4)
		return false;
	*len = (size_t)((*p)[0] & 0x7f) << 24 | (size_t)(*p)[1] << 16 | (size_t)(*p)[2] << 8 | (*p)[3];
	*p += 4;
	return true;
}

/* Makes s->mem hold at least n bytes (what it held is not kept). */
static void
split_room(struct ph_fcgi_split *s, size_t n)
{
	if (n <= s->cap)
		return;
	free(s->mem);
	s->mem = ph_xmalloc(n);
	s->cap = n;
}

/* What the records of a simple request hold (split_records). */
struct split_walk {
	unsigned rid;         /* its request id */
	size_t used;          /* its bytes, through the body's empty record */
	size_t plen, blen;    /* the bytes of its parameters and of its body */
	size_t pfirst, precs; /* the first parameter record's content, and how many */
	size_t bfirst, brecs; /* the same of the body's */
};

/* Walks the records of the n bytes at b: checked (a simple request, as
 * ph_fcgi_request_split says), and the sizes of the two streams summed
 * into *w. Returns false for anything else. */
static bool
split_records(const unsigned char *b, size_t n, struct split_walk *w)
{
	size_t off = 0;
	int stage = 0; /* 0: begin, 1: parameters, 2: body, 3: done */
	struct ph_fcgi_header h;
	enum ph_fcgi_hdr e;
	memset(w, 0, sizeof *w);
	while (stage < 3 && (e = ph_fcgi_header_decode(b + off, n - off, &h)) != PH_FCGI_HDR_SHORT) {
		size_t rec = ph_fcgi_record_len(&h), len = h.clen;
		const unsigned char *c = b + off + PH_FCGI_HEADER_LEN;
		if (e != PH_FCGI_HDR_OK || rec > n - off)
			return false;
		if (stage == 0) {
			/* FCGI_BeginRequestBody: role (2 bytes) FCGI_RESPONDER, flags
			 * without FCGI_KEEP_CONN */
			if (h.type != PH_FCGI_BEGIN_REQUEST || h.rid == 0 || len != PH_FCGI_BEGIN_BODY_LEN ||
			    ((unsigned)c[0] << 8 | c[1]) != PH_FCGI_RESPONDER || (c[2] & PH_FCGI_KEEP_CONN) != 0)
				return false;
			w->rid = h.rid;
			stage = 1;
		} else if (h.rid != w->rid) {
			return false;
		} else if (stage == 1 && h.type == PH_FCGI_PARAMS) {
			if (len == 0)
				stage = 2;
			else if (w->precs++ == 0)
				w->pfirst = off + PH_FCGI_HEADER_LEN;
			w->plen += len;
		} else if (stage == 2 && h.type == PH_FCGI_STDIN) {
			if (len == 0)
				stage = 3;
			else if (w->brecs++ == 0)
				w->bfirst = off + PH_FCGI_HEADER_LEN;
			w->blen += len;
		} else {
			return false;
		}
		off += rec;
	}
	w->used = off;
	return stage == 3;
}

/* Joins what came in several records: the contents of the parameter
 * records of the walked request at b into p when they were more than one,
 * and those of its body records into body when more than one. */
static void
split_join(const unsigned char *b, const struct split_walk *wk, unsigned char *p, char *body)
{
	size_t pw = 0, bw = 0;
	struct ph_fcgi_header h = {0};
	/* the walk checked every header up to wk->used (split_records) */
	for (size_t o = 0; o < wk->used; o += ph_fcgi_record_len(&h)) {
		(void)ph_fcgi_header_decode(b + o, wk->used - o, &h);
		if (h.type == PH_FCGI_PARAMS && wk->precs > 1) {
			memcpy(p + pw, b + o + PH_FCGI_HEADER_LEN, h.clen);
			pw += h.clen;
		} else if (h.type == PH_FCGI_STDIN && wk->brecs > 1) {
			memcpy(body + bw, b + o + PH_FCGI_HEADER_LEN, h.clen);
			bw += h.clen;
		}
	}
}

/* Lays out out->mem for the walked request at b: the arrays, with room
 * for as many pairs as its parameters can hold, then what did not come in
 * one record joined (split_join). Sets out->body; returns where the
 * parameter block starts (in b, or joined in out->mem). */
static unsigned char *
split_lay_out(unsigned char *b, const struct split_walk *wk, struct ph_fcgi_split *out)
{
	/* at most: each pair takes at least its two length bytes */
	size_t npairs = wk->plen / 2, w, need;
	unsigned char *p;
	/* one block, kept from request to request: the arrays, then what did
	 * not come in one record joined (the parameter block, the body), each
	 * with a byte more for its NUL */
	w = npairs * (2 * sizeof *out->name + 2 * sizeof *out->nlen + sizeof *out->next_len);
	need = w + (wk->precs > 1 ? wk->plen + 1 : 0) + (wk->brecs != 1 ? wk->blen + 1 : 0);
	split_room(out, need + 1); /* never empty: the arrays point into it */
	out->name = (const char **)(void *)out->mem;
	out->value = out->name + npairs;
	out->nlen = (unsigned *)(void *)(out->value + npairs);
	out->vlen = out->nlen + npairs;
	out->next_len = (int *)(out->vlen + npairs);
	p = b + wk->pfirst;
	if (wk->precs > 1) {
		p = (unsigned char *)out->mem + w;
		w += wk->plen + 1;
	}
	out->body = wk->brecs == 1 ? (char *)b + wk->bfirst : out->mem + w;
	if (wk->precs > 1 || wk->brecs > 1)
		split_join(b, wk, p, out->body);
	return p;
}

/* Files pair i in the lists by the length of its name that
 * ph_fcgi_split_param walks (by_len, next_len), at the end of its list so
 * that a list runs in the order of the pairs; last[l] is the last pair
 * filed under l so far (read only once by_len[l] is set). */
static inline void
by_len_add(struct ph_fcgi_split *out, int last[PH_FCGI_SPLIT_LENS], size_t i)
{
	size_t l = out->nlen[i] < PH_FCGI_SPLIT_LENS ? out->nlen[i] : PH_FCGI_SPLIT_LENS - 1;
	out->next_len[i] = -1;
	if (out->by_len[l] < 0)
		out->by_len[l] = (int)i;
	else
		out->next_len[last[l]] = (int)i;
	last[l] = (int)i;
}

/* Reads the pairs of the parameter block p..end into out's arrays, each
 * filed by the length of its name (by_len_add). Returns false when a
 * pair's lengths run past the block; else true, their count in *count. */
static bool
split_pairs(unsigned char *p, const unsigned char *end, struct ph_fcgi_split *out, size_t *count)
{
	int last[PH_FCGI_SPLIT_LENS]; /* the last of each length so far (by_len set) */
	size_t npairs = 0;
	for (size_t i = 0; i < PH_FCGI_SPLIT_LENS; i++)
		out->by_len[i] = -1;
	while (p < end) {
		size_t nl, vl;
		const unsigned char *q = p;
		if (!pair_len(&q, end, &nl) || !pair_len(&q, end, &vl) || nl > (size_t)(end - q) ||
		    vl > (size_t)(end - q) - nl)
			return false;
		p += q - p; /* past the two lengths (q: their reader's const view of p) */
		out->name[npairs] = (const char *)p;
		out->value[npairs] = (const char *)p + nl;
		out->nlen[npairs] = (unsigned)nl;
		out->vlen[npairs] = (unsigned)vl;
		if (ph_fast_paths)
			by_len_add(out, last, npairs);
		npairs++;
		p += nl + vl;
	}
	*count = npairs;
	return true;
}

bool
ph_fcgi_request_split(unsigned char *b, size_t n, struct ph_fcgi_split *out)
{
	struct split_walk wk;
	unsigned char *p;
	size_t npairs;
	out->rid = 0;
	out->n = 0;
	out->name = out->value = NULL;
	out->nlen = out->vlen = NULL;
	out->body = NULL;
	out->body_len = out->used = 0;
	if (!split_records(b, n, &wk))
		return false;
	p = split_lay_out(b, &wk, out);
	if (!split_pairs(p, p + wk.plen, out, &npairs)) {
		out->name = out->value = NULL;
		out->nlen = out->vlen = NULL;
		out->body = NULL;
		return false;
	}
	/* every pair read: each value's NUL goes on the byte after it (the
	 * next pair's first length byte, or the first after the block) */
	for (size_t i = 0; i < npairs; i++)
		((char *)out->value[i])[out->vlen[i]] = '\0';
	out->body[wk.blen] = '\0';
	out->n = npairs;
	out->body_len = wk.blen;
	out->rid = wk.rid;
	out->used = wk.used;
	return true;
}

const char *
ph_fcgi_split_param(const struct ph_fcgi_split *s, const char *name)
{
	size_t n = strlen(name);
	if (!ph_fast_paths) {
		/* the plain path (PHANTOM_FAST_PATHS=off, no by_len index): every
		 * pair in order, the first of the name wins */
		for (size_t i = 0; i < s->n; i++)
			if (s->nlen[i] == n && memcmp(s->name[i], name, n) == 0)
				return s->value[i];
		return NULL;
	}
	/* the list of a length runs in the order of the pairs: the first wins */
	for (int i = s->by_len[n < PH_FCGI_SPLIT_LENS ? n : PH_FCGI_SPLIT_LENS - 1]; i >= 0; i = s->next_len[i])
		if (s->nlen[i] == n && (n == 0 || s->name[i][n - 1] == name[n - 1]) &&
		    memcmp(s->name[i], name, n) == 0)
			return s->value[i];
	return NULL;
}

void
ph_fcgi_split_free(struct ph_fcgi_split *s)
{
	free(s->mem);
	memset(s, 0, sizeof *s);
}

void
ph_fcgi_end(struct ph_buf *b, unsigned rid)
{
	/* FCGI_EndRequestBody: appStatus 0 (4 bytes), protocolStatus, 3 reserved */
	static const char complete[PH_FCGI_END_BODY_LEN] = {0, 0, 0, 0, PH_FCGI_REQUEST_COMPLETE};
	ph_fcgi_records(b, PH_FCGI_STDOUT, rid, NULL, 0);
	ph_fcgi_records(b, PH_FCGI_END_REQUEST, rid, complete, sizeof complete);
}
