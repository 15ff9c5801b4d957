/* ph_pb.h: a protocol buffers writer, just what OTLP needs (varints,
 * fixed-width numbers, length-delimited fields and nested messages),
 * appending to a ph_buf. There is no reader: Phantom only sends protobuf. */
#ifndef PH_PB_H
#define PH_PB_H
#include "first.h"
#include "ph_util.h"

/* wire types */
enum { PH_PB_VARINT = 0, PH_PB_I64 = 1, PH_PB_LEN = 2, PH_PB_I32 = 5 };

void ph_pb_varint(struct ph_buf *b, uint64_t v);
void ph_pb_tag(struct ph_buf *b, unsigned field, unsigned wire);
/* A varint field; 0 is written too (callers skip defaults themselves). */
void ph_pb_uint(struct ph_buf *b, unsigned field, uint64_t v);
void ph_pb_fixed64(struct ph_buf *b, unsigned field, uint64_t v);
void ph_pb_fixed32(struct ph_buf *b, unsigned field, uint32_t v);
void ph_pb_double(struct ph_buf *b, unsigned field, double v);
/* A length-delimited field: n bytes of p (bytes, a string or a message
 * encoded elsewhere). */
void ph_pb_bytes(struct ph_buf *b, unsigned field, const void *p, size_t n);
void ph_pb_str(struct ph_buf *b, unsigned field, const char *s);
/* A nested message: ph_pb_open writes its tag and returns where its
 * content starts; ph_pb_close puts the length in front of it (moving the
 * content when the length takes more than one byte). */
size_t ph_pb_open(struct ph_buf *b, unsigned field);
void ph_pb_close(struct ph_buf *b, size_t at);

/* OTLP's common.proto KeyValue {key = 1, value = 2: AnyValue}, as a field
 * of the message being written: a string, an int64, a bool or a double. */
void ph_pb_kv_str(struct ph_buf *b, unsigned field, const char *key, const char *v);
void ph_pb_kv_strn(struct ph_buf *b, unsigned field, const char *key, const char *v, size_t n);
void ph_pb_kv_int(struct ph_buf *b, unsigned field, const char *key, int64_t v);
void ph_pb_kv_bool(struct ph_buf *b, unsigned field, const char *key, bool v);
#endif
