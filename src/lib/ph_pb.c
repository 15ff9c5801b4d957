/* ph_pb.c: the protocol buffers writer of ph_pb.h. */
#include "first.h"
#include "ph_pb.h"
#include <string.h>

/* The fast path of the short fields (ph_fast_paths; docs/internals.md): a
 * field whose tag and length take one byte each (field under 16, length
 * under 128: every id, name and attribute of a span as a rule) is written
 * in one reserve, its bytes in place, instead of a call to ph_buf_add for
 * each tag, length and content. The bytes are the same. */
static bool
short_field(unsigned field, size_t n)
{
	return ph_fast_paths && field < 16 && n < 128;
}

/* room for n more bytes of b, where they go */
static unsigned char *
room(struct ph_buf *b, size_t n)
{
	if (b->len + n >= b->cap)
		ph_buf_reserve(b, n);
	return (unsigned char *)b->data + b->len;
}

static void
wrote(struct ph_buf *b, size_t n)
{
	b->len += n;
	b->data[b->len] = '\0';
}

void
ph_pb_varint(struct ph_buf *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;
	if (v < 0x80) {
		ph_buf_addc(b, (char)v);
		return;
	}
	while (v >= 0x80) {
		t[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (unsigned char)v;
	ph_buf_add(b, t, n);
}

void
ph_pb_tag(struct ph_buf *b, unsigned field, unsigned wire)
{
	ph_pb_varint(b, ((uint64_t)field << 3) | wire);
}

void
ph_pb_uint(struct ph_buf *b, unsigned field, uint64_t v)
{
	ph_pb_tag(b, field, PH_PB_VARINT);
	ph_pb_varint(b, v);
}

/* little-endian, whatever the host */
static void
le(struct ph_buf *b, uint64_t v, size_t n)
{
	unsigned char t[8];
	for (size_t i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	ph_buf_add(b, t, n);
}

void
ph_pb_fixed64(struct ph_buf *b, unsigned field, uint64_t v)
{
	ph_pb_tag(b, field, PH_PB_I64);
	le(b, v, 8);
}

void
ph_pb_fixed32(struct ph_buf *b, unsigned field, uint32_t v)
{
	ph_pb_tag(b, field, PH_PB_I32);
	le(b, v, 4);
}

void
ph_pb_double(struct ph_buf *b, unsigned field, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	ph_pb_fixed64(b, field, u);
}

void
ph_pb_bytes(struct ph_buf *b, unsigned field, const void *p, size_t n)
{
	if (short_field(field, n)) {
		unsigned char *d = room(b, 2 + n);
		d[0] = (unsigned char)(field << 3 | PH_PB_LEN);
		d[1] = (unsigned char)n;
		memcpy(d + 2, p, n);
		wrote(b, 2 + n);
		return;
	}
	ph_pb_tag(b, field, PH_PB_LEN);
	ph_pb_varint(b, n);
	ph_buf_add(b, p, n);
}

void
ph_pb_str(struct ph_buf *b, unsigned field, const char *s)
{
	ph_pb_bytes(b, field, s, strlen(s));
}

size_t
ph_pb_open(struct ph_buf *b, unsigned field)
{
	ph_pb_tag(b, field, PH_PB_LEN);
	ph_buf_addc(b, 0); /* room for a length under 128, the usual case */
	return b->len;
}

void
ph_pb_close(struct ph_buf *b, size_t at)
{
	size_t n = b->len - at, extra = 0;
	for (uint64_t v = n; v >= 0x80; v >>= 7)
		extra++;
	if (extra > 0) {
		ph_buf_reserve(b, extra);
		memmove(b->data + at + extra, b->data + at, n);
		b->len += extra;
	}
	{
		/* the length, written over the byte kept and the room made */
		uint64_t v = n;
		size_t i = at - 1;
		while (v >= 0x80) {
			b->data[i++] = (char)(v | 0x80);
			v >>= 7;
		}
		b->data[i] = (char)v;
	}
}

/* KeyValue {key = 1, value = 2}; AnyValue {string_value = 1, bool_value = 2,
 * int_value = 3, double_value = 4} */
void
ph_pb_kv_strn(struct ph_buf *b, unsigned field, const char *key, const char *v, size_t n)
{
	size_t k = strlen(key), kv, av = 2 + n; /* AnyValue: tag, length, the string */
	if (short_field(field, (kv = 2 + k + 2 + av))) {
		unsigned char *d = room(b, 2 + kv), *e = d + 4 + k;
		d[0] = (unsigned char)(field << 3 | PH_PB_LEN);
		d[1] = (unsigned char)kv;
		d[2] = 1 << 3 | PH_PB_LEN; /* key */
		d[3] = (unsigned char)k;
		memcpy(d + 4, key, k);
		e[0] = 2 << 3 | PH_PB_LEN; /* value */
		e[1] = (unsigned char)av;
		e[2] = 1 << 3 | PH_PB_LEN; /* string_value */
		e[3] = (unsigned char)n;
		memcpy(e + 4, v, n);
		wrote(b, 2 + kv);
		return;
	}
	kv = ph_pb_open(b, field);
	ph_pb_str(b, 1, key);
	av = ph_pb_open(b, 2);
	ph_pb_bytes(b, 1, v, n);
	ph_pb_close(b, av);
	ph_pb_close(b, kv);
}

void
ph_pb_kv_str(struct ph_buf *b, unsigned field, const char *key, const char *v)
{
	ph_pb_kv_strn(b, field, key, v, strlen(v));
}

void
ph_pb_kv_int(struct ph_buf *b, unsigned field, const char *key, int64_t v)
{
	size_t kv = ph_pb_open(b, field), av;
	ph_pb_str(b, 1, key);
	av = ph_pb_open(b, 2);
	ph_pb_uint(b, 3, (uint64_t)v);
	ph_pb_close(b, av);
	ph_pb_close(b, kv);
}

void
ph_pb_kv_bool(struct ph_buf *b, unsigned field, const char *key, bool v)
{
	size_t kv = ph_pb_open(b, field), av;
	ph_pb_str(b, 1, key);
	av = ph_pb_open(b, 2);
	ph_pb_uint(b, 2, v ? 1 : 0);
	ph_pb_close(b, av);
	ph_pb_close(b, kv);
}
