/* ph_otel_ring.c: the workers' rings of telemetry records (ph_otel_ring.h).
 *
 * A record in a ring is a 4-byte length (host order: writer and reader are
 * the same machine) and its bytes, padded to 4, so a length never wraps
 * around the ring's end while the bytes may. head and tail count bytes
 * ever put and taken; head - tail is what waits. */
#include "first.h"
#include "ph_otel_ring.h"
#include "ph_log.h"
#include "ph_metrics.h"
#include "ph_otel.h"
#include "ph_util.h"
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

/* The writer's and the reader's counters on lines of their own. */
struct ring {
	_Atomic uint64_t head;
	char pad1[56];
	_Atomic uint64_t tail;
	char pad2[56];
};

struct rings {
	_Atomic int sleeping; /* the reader sleeps: the next writer wakes it */
	char pad[60];
};

static struct rings *shm;
static size_t nrings, ring_bytes;
static struct ring *mine; /* this worker's, NULL in any other process */
static int mine_pid;      /* the worker's: a child it forks has no ring */

static struct ring *
ring_at(size_t i)
{
	return (struct ring *)((char *)shm + sizeof *shm + i * (sizeof(struct ring) + ring_bytes));
}

static unsigned char *
data_of(struct ring *r)
{
	return (unsigned char *)(r + 1);
}

int
ph_otel_rings_create(size_t nslots, size_t bytes)
{
	size_t b = 4096, len;
	void *m;
	while (b < bytes)
		b <<= 1;
	len = sizeof *shm + nslots * (sizeof(struct ring) + b);
	/* pages are only backed as rings fill: a slot never used costs nothing */
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		ph_log("warning", "telemetry: the workers' rings (%zu of %zu bytes): %s; they use the channel",
		       nslots, b, strerror(errno));
		return -1;
	}
	shm = m;
	nrings = nslots;
	ring_bytes = b;
	return 0;
}

void
ph_otel_ring_attach(size_t slot)
{
	mine = shm != NULL && slot < nrings ? ring_at(slot) : NULL;
	mine_pid = ph_pid();
}

/* n bytes at position pos of r's data, which may wrap, copied in */
static void
copy_in(struct ring *r, uint64_t pos, const void *p, size_t n)
{
	size_t at = (size_t)(pos & (ring_bytes - 1)), first = ring_bytes - at < n ? ring_bytes - at : n;
	memcpy(data_of(r) + at, p, first);
	memcpy(data_of(r), (const char *)p + first, n - first);
}

static uint64_t
padded(size_t n)
{
	return 4 + (((uint64_t)n + 3) & ~(uint64_t)3);
}

enum ph_ring_put
ph_otel_ring_put(const void *p, size_t n)
{
	uint64_t head, tail;
	uint32_t len = (uint32_t)n;
	if (mine == NULL || mine_pid != ph_pid())
		return PH_RING_NONE; /* one writer a ring: a worker's child uses the channel */
	head = atomic_load_explicit(&mine->head, memory_order_relaxed);
	tail = atomic_load_explicit(&mine->tail, memory_order_acquire);
	/* a head off its 4-byte boundary or past the tail by more than the
	 * ring was scribbled on: nothing is written past the ring for it */
	if (n == 0 || n > PH_OTEL_RECORD_MAX || (head & 3) != 0 || head - tail > ring_bytes ||
	    padded(n) > ring_bytes - (head - tail))
		return PH_RING_FULL;
	memcpy(data_of(mine) + (head & (ring_bytes - 1)), &len, 4);
	copy_in(mine, head + 4, p, n);
	/* published only now, whole; and ordered before the look at sleeping
	 * (the reader marks sleeping, then looks at the heads) */
	atomic_store_explicit(&mine->head, head + padded(n), memory_order_seq_cst);
	if (atomic_load_explicit(&shm->sleeping, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&shm->sleeping, 0, memory_order_seq_cst))
		return PH_RING_WAKE;
	return PH_RING_PUT;
}

size_t
ph_otel_ring_read(const unsigned char *data, size_t bytes, _Atomic uint64_t *tail_at, uint64_t head,
		  void (*take)(void *arg, const unsigned char *p, size_t n), void *arg, bool *bad)
{
	static unsigned char buf[PH_OTEL_RECORD_MAX];
	uint64_t tail = atomic_load_explicit(tail_at, memory_order_relaxed);
	size_t k = 0;
	*bad = false;
	while (tail != head) {
		uint32_t n;
		size_t at, first;
		if (head - tail > bytes || head - tail < 4 || (tail & 3) != 0)
			n = 0; /* no length word can be read there */
		else
			memcpy(&n, data + (tail & (bytes - 1)), 4);
		if (n == 0 || n > PH_OTEL_RECORD_MAX || padded(n) > head - tail) {
			/* not what a writer of ours writes: start again from its head */
			*bad = true;
			atomic_store_explicit(tail_at, head, memory_order_release);
			return k;
		}
		at = (size_t)((tail + 4) & (bytes - 1));
		first = bytes - at < n ? bytes - at : n;
		memcpy(buf, data + at, first);
		memcpy(buf + first, data, n - first);
		tail += padded(n);
		atomic_store_explicit(tail_at, tail, memory_order_release); /* its room is free again */
		take(arg, buf, n);
		k++;
	}
	return k;
}

/* Takes what waits in r; returns how many records. */
static size_t
take_ring(struct ring *r, void (*take)(void *, const unsigned char *, size_t), void *arg)
{
	bool bad;
	size_t k = ph_otel_ring_read(data_of(r), ring_bytes, &r->tail,
				     atomic_load_explicit(&r->head, memory_order_acquire), take, arg, &bad);
	if (bad)
		ph_metrics_otel(PH_MO_DROP_CHANNEL, 1);
	return k;
}

size_t
ph_otel_rings_take(void (*take)(void *arg, const unsigned char *p, size_t n), void *arg)
{
	size_t k = 0;
	for (size_t i = 0; i < nrings; i++)
		k += take_ring(ring_at(i), take, arg);
	return k;
}

bool
ph_otel_rings_arm(void)
{
	if (shm == NULL)
		return true;
	atomic_store_explicit(&shm->sleeping, 1, memory_order_seq_cst);
	for (size_t i = 0; i < nrings; i++) {
		struct ring *r = ring_at(i);
		if (atomic_load_explicit(&r->head, memory_order_seq_cst) !=
		    atomic_load_explicit(&r->tail, memory_order_relaxed)) {
			atomic_store_explicit(&shm->sleeping, 0, memory_order_seq_cst);
			return false;
		}
	}
	return true;
}

void
ph_otel_rings_disarm(void)
{
	if (shm != NULL)
		atomic_store_explicit(&shm->sleeping, 0, memory_order_seq_cst);
}
