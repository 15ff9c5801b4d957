/* ph_fcgi_wire.c: FastCGI records written and simple requests split out
 * of a connection's bytes (ph_fcgi_wire.h). */
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

bool
ph_fcgi_request_split(unsigned char *b, size_t n, struct ph_fcgi_split *out)
{
	size_t off = 0, plen = 0, blen = 0, npairs = 0, w, need;
	size_t pfirst = 0, precs = 0; /* the first parameter record's content, and how many */
	size_t bfirst = 0, brecs = 0; /* the same of the body's */
	unsigned rid = 0;
	int stage = 0; /* 0: begin, 1: parameters, 2: body, 3: done */
	unsigned char *p, *end;
	int last[PH_FCGI_SPLIT_LENS]; /* the last of each length so far (by_len set) */
	out->rid = 0;
	out->n = 0;
	out->name = out->value = NULL;
	out->nlen = out->vlen = NULL;
	out->body = NULL;
	out->body_len = out->used = 0;
	/* the records: checked, and the sizes of the two streams summed */
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
			rid = id;
			stage = 1;
		} else if (id != rid) {
			return false;
		} else if (stage == 1 && type == PH_FCGI_PARAMS) {
			if (len == 0)
				stage = 2;
			else if (precs++ == 0)
				pfirst = off + 8;
			plen += len;
		} else if (stage == 2 && type == PH_FCGI_STDIN) {
			if (len == 0)
				stage = 3;
			else if (brecs++ == 0)
				bfirst = off + 8;
			blen += len;
		} else {
			return false;
		}
		off += rec;
	}
	if (stage != 3)
		return false;
	npairs = plen / 2; /* at most: each pair takes at least its two length bytes */
	/* one block, kept from request to request: the arrays, then what did
	 * not come in one record joined (the parameter block, the body), each
	 * with a byte more for its NUL */
	w = npairs * (2 * sizeof *out->name + 2 * sizeof *out->nlen + sizeof *out->next_len);
	need = w + (precs > 1 ? plen + 1 : 0) + (brecs != 1 ? blen + 1 : 0);
	split_room(out, need + 1); /* never empty: the arrays point into it */
	out->name = (const char **)(void *)out->mem;
	out->value = out->name + npairs;
	out->nlen = (unsigned *)(void *)(out->value + npairs);
	out->vlen = out->nlen + npairs;
	out->next_len = (int *)(out->vlen + npairs);
	for (size_t i = 0; i < PH_FCGI_SPLIT_LENS; i++)
		out->by_len[i] = -1;
	p = b + pfirst;
	if (precs > 1) {
		p = (unsigned char *)out->mem + w;
		w += plen + 1;
	}
	out->body = brecs == 1 ? (char *)b + bfirst : out->mem + w;
	if (precs > 1 || brecs > 1) {
		size_t pw = 0, bw = 0;
		for (size_t o = 0; o < off;) {
			size_t len = (size_t)b[o + 4] << 8 | b[o + 5];
			if (b[o + 1] == PH_FCGI_PARAMS && precs > 1) {
				memcpy(p + pw, b + o + 8, len);
				pw += len;
			} else if (b[o + 1] == PH_FCGI_STDIN && brecs > 1) {
				memcpy(out->body + bw, b + o + 8, len);
				bw += len;
			}
			o += 8 + len + b[o + 6];
		}
	}
	end = p + plen;
	npairs = 0;
	while (p < end) {
		size_t nl, vl, l;
		const unsigned char *q = p;
		if (!pair_len(&q, end, &nl) || !pair_len(&q, end, &vl) || nl > (size_t)(end - q) ||
		    vl > (size_t)(end - q) - nl) {
			out->name = out->value = NULL;
			out->nlen = out->vlen = NULL;
			out->body = NULL;
			return false;
		}
		p += q - p; /* past the two lengths (q: their reader's const view of p) */
		out->name[npairs] = (const char *)p;
		out->value[npairs] = (const char *)p + nl;
		out->nlen[npairs] = (unsigned)nl;
		out->vlen[npairs] = (unsigned)vl;
		l = nl < PH_FCGI_SPLIT_LENS ? nl : PH_FCGI_SPLIT_LENS - 1;
		out->next_len[npairs] = -1;
		if (out->by_len[l] < 0)
			out->by_len[l] = (int)npairs;
		else
			out->next_len[last[l]] = (int)npairs;
		last[l] = (int)npairs;
		npairs++;
		p += nl + vl;
	}
	/* every pair read: each value's NUL goes on the byte after it (the
	 * next pair's first length byte, or the first after the block) */
	for (size_t i = 0; i < npairs; i++)
		((char *)out->value[i])[out->vlen[i]] = '\0';
	out->body[blen] = '\0';
	out->n = npairs;
	out->body_len = blen;
	out->rid = rid;
	out->used = off;
	return true;
}

const char *
ph_fcgi_split_param(const struct ph_fcgi_split *s, const char *name)
{
	size_t n = strlen(name);
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
