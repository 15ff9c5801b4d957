/* ph_otel_ring.h: how a worker hands its telemetry records to the exporter
 * without a system call: a ring in memory shared by the master's children,
 * one per worker slot, with one writer (the worker in the slot) and one
 * reader (the exporter).
 *
 * A writer copies a request's records in and then publishes them by
 * moving the ring's head; the reader takes what lies between its tail and
 * the head. A worker that dies in the middle of a write has published
 * nothing, and the next worker in its slot writes over it. What does not
 * fit is not waited for: the writer drops it and counts it. The reader
 * looks every few milliseconds while records come; when it finds none it
 * says it is going to sleep, and the first writer after that wakes it
 * (ph_otel_ring_put says when: the caller sends one byte on the channel).
 * The other processes that make records (the hub, stdio, CGI) keep the
 * channel of ph_otel.h. */
#ifndef PH_OTEL_RING_H
#define PH_OTEL_RING_H
#include "first.h"
#include <stdatomic.h>
#include <stdint.h>

/* The master, before it forks: a ring of bytes (a power of two, rounded
 * up) for each of nslots worker slots. Returns 0, or -1 (logged: the
 * workers then use the channel). */
int ph_otel_rings_create(size_t nslots, size_t bytes);
/* A worker, as it starts in slot: its records go to that ring from now on. */
void ph_otel_ring_attach(size_t slot);

enum ph_ring_put {
	PH_RING_NONE,   /* this process has no ring: use the channel */
	PH_RING_PUT,    /* taken */
	PH_RING_WAKE,   /* taken, and the reader sleeps: wake it */
	PH_RING_FULL,   /* not taken: the ring is full (drop and count) */
};
/* Puts a record of n bytes (at most PH_OTEL_RECORD_MAX) into this
 * worker's ring, never waiting. */
enum ph_ring_put ph_otel_ring_put(const void *p, size_t n);

/* The reader: calls take(arg, p, n) for each record waiting, ring by
 * ring, and returns how many there were. A ring whose bytes make no sense
 * (a length past what was published) is emptied and counted as dropped. */
size_t ph_otel_rings_take(void (*take)(void *arg, const unsigned char *p, size_t n), void *arg);
/* The parser under ph_otel_rings_take, for one ring's bytes data (bytes of
 * them, a power of two) with its tail at *tail_at and what was published
 * up to head: calls take for each whole record and moves the tail past
 * it. A length that cannot be (zero, past PH_OTEL_RECORD_MAX or head, a
 * tail not on a multiple of 4, more waiting than the ring holds) sets *bad
 * and moves the tail to head. Returns how many records were taken. */
size_t ph_otel_ring_read(const unsigned char *data, size_t bytes, _Atomic uint64_t *tail_at, uint64_t head,
			 void (*take)(void *arg, const unsigned char *p, size_t n), void *arg, bool *bad);
/* The reader is about to sleep: marks it so, then looks once more.
 * Returns false when a record came meanwhile (the mark is taken back:
 * look again instead of sleeping). True without rings. */
bool ph_otel_rings_arm(void);
/* The reader is awake again (woken or its wait ended). */
void ph_otel_rings_disarm(void);
#endif
