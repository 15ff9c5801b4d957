/* fuzz_otel_ring.c: libFuzzer harness for ph_otel_ring_read, the exporter's
 * reader of a worker's ring of telemetry records (ipc/ph_otel_ring.c): the
 * bytes come from shared memory a worker (and any module it loaded) could
 * have written anything into. Input: 8 bytes of tail and 8 of head (little
 * endian, any values), then the ring's 4096 bytes (the rest zero). Aborts
 * when the reader hands out a record that is empty or too long, takes more
 * bytes than were published, or leaves its tail anywhere but at head. */
#include "first.h"
#include "ph_otel.h"
#include "ph_otel_ring.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RING 4096

struct seen {
	size_t records, bytes;
};

static void
take(void *arg, const unsigned char *p, size_t n)
{
	struct seen *s = arg;
	if (n == 0 || n > PH_OTEL_RECORD_MAX)
		abort();
	(void)p[n - 1]; /* the whole record is readable */
	s->records++;
	s->bytes += 4 + ((n + 3) & ~(size_t)3);
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *ring;
	_Atomic uint64_t tail;
	uint64_t t0, head;
	struct seen s = {0, 0};
	bool bad;
	size_t k;
	if (size < 16)
		return 0;
	t0 = le64(data);
	head = le64(data + 8);
	ring = calloc(1, RING); /* its own allocation: ASan sees a read past it */
	memcpy(ring, data + 16, size - 16 < RING ? size - 16 : RING);
	atomic_store(&tail, t0);
	k = ph_otel_ring_read(ring, RING, &tail, head, take, &s, &bad);
	if (k != s.records || atomic_load(&tail) != head)
		abort();
	if (!bad && s.bytes != head - t0)
		abort(); /* a clean read takes exactly what was published */
	free(ring);
	return 0;
}
