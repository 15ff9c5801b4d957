/* ph_fcgi_wire.c: FastCGI records written (ph_fcgi_records, or one begun
 * before its length is known) and simple requests split out of a
 * connection's bytes (ph_fcgi_wire.h). */
#include "first.h"
#include "ph_fcgi_wire.h"
#include "ph_util.h"
#include <stdlib.h>
#include <string.h>

void
ph_fcgi_head(unsigned char h[8], int type, unsigned rid, size_t len)
{
	h[0] = 1; /* FCGI_VERSION_1 */
	h[1] = (unsigned char)type;
	h[2] = (unsigned char)(rid >> 8);
	h[3] = (unsigned char)(rid & 0xff);
	h[4] = (unsigned char)(len >> 8);
	h[5] = (unsigned char)(len & 0xff);
	h[6] = 0; /* no padding */
	h[7] = 0;
}

void
ph_fcgi_records(struct ph_buf *b, int type, unsigned rid, const char *data, size_t len)
{
	do {
		size_t n = len > PH_FCGI_RECORD_MAX ? PH_FCGI_RECORD_MAX : len;
		unsigned char h[8];
		ph_fcgi_head(h, type, rid, n);
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
	size_t at = b->len;
	ph_buf_add(b, "\0\0\0\0\0\0\0\0", 8);
	return at;
}

void
ph_fcgi_record_close(struct ph_buf *b, size_t at, int type, unsigned rid)
{
	size_t clen = b->len - at - 8;
	struct ph_buf c;
	if (clen <= PH_FCGI_RECORD_MAX) {
		ph_fcgi_head((unsigned char *)b->data + at, type, rid, clen);
		return;
	}
	/* more than one record holds: cut into records (with room for the end
	 * records that usually follow, 32 bytes) */
	ph_buf_init(&c);
	ph_buf_add(&c, b->data + at + 8, clen);
	b->len = at;
	ph_buf_reserve(b, clen + (clen / PH_FCGI_RECORD_MAX + 1) * 8 + 32);
	ph_fcgi_records(b, type, rid, c.data, c.len);
	ph_buf_free(&c);
}

bool
ph_fcgi_request_whole(const unsigned char *b, size_t n)
{
	unsigned rid = 0; /* the request's id, once its PH_FCGI_BEGIN_REQUEST came */
	bool params_end = false, stdin_end = false;
	size_t off = 0;
	while (n - off >= 8) {
		unsigned type = b[off + 1], id = (unsigned)b[off + 2] << 8 | b[off + 3];
		size_t len = (size_t)b[off + 4] << 8 | b[off + 5], rec = 8 + len + b[off + 6];
		if (b[off] != 1 || rec > n - off)
			return false; /* not version 1, or the record is not all here */
		if (rid == 0 && type == PH_FCGI_BEGIN_REQUEST && id != 0)
			rid = id;
		else if (rid != 0 && id == rid && type == PH_FCGI_PARAMS && len == 0)
			params_end = true;
		else if (rid != 0 && id == rid && type == PH_FCGI_STDIN && len == 0)
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
	memset(w, 0, sizeof *w);
	while (stage < 3 && n - off >= 8) {
		unsigned type = b[off + 1], id = (unsigned)b[off + 2] << 8 | b[off + 3];
		size_t len = (size_t)b[off + 4] << 8 | b[off + 5], rec = 8 + len + b[off + 6];
		const unsigned char *c = b + off + 8;
		if (b[off] != 1 || rec > n - off)
			return false;
		if (stage == 0) {
			/* role FCGI_RESPONDER (1), flags without FCGI_KEEP_CONN */
			if (type != PH_FCGI_BEGIN_REQUEST || id == 0 || len != 8 || c[0] != 0 || c[1] != 1 ||
			    (c[2] & 1) != 0)
				return false;
			w->rid = id;
			stage = 1;
		} else if (id != w->rid) {
			return false;
		} else if (stage == 1 && type == PH_FCGI_PARAMS) {
			if (len == 0)
				stage = 2;
			else if (w->precs++ == 0)
				w->pfirst = off + 8;
			w->plen += len;
		} else if (stage == 2 && type == PH_FCGI_STDIN) {
			if (len == 0)
				stage = 3;
			else if (w->brecs++ == 0)
				w->bfirst = off + 8;
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
	for (size_t o = 0; o < wk->used;) {
		size_t len = (size_t)b[o + 4] << 8 | b[o + 5];
		if (b[o + 1] == PH_FCGI_PARAMS && wk->precs > 1) {
			memcpy(p + pw, b + o + 8, len);
			pw += len;
		} else if (b[o + 1] == PH_FCGI_STDIN && wk->brecs > 1) {
			memcpy(body + bw, b + o + 8, len);
			bw += len;
		}
		o += 8 + len + b[o + 6];
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
	static const char complete[8] = {0}; /* appStatus 0, FCGI_REQUEST_COMPLETE */
	ph_fcgi_records(b, PH_FCGI_STDOUT, rid, NULL, 0);
	ph_fcgi_records(b, PH_FCGI_END_REQUEST, rid, complete, sizeof complete);
}
