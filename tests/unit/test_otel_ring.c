/* test_otel_ring.c: the workers' rings of telemetry records
 * (ipc/ph_otel_ring.c): records come out whole and in order across the
 * ring's end, a full ring refuses rather than overwrites, the sleeping
 * reader is woken by the first writer only, and a slot's next worker
 * (another process) goes on where the one before it stopped. */
#include "first.h"
#include "ph_otel.h"
#include "ph_otel_ring.h"
#include "tap.h"
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct got {
	size_t n;
	unsigned char last[PH_OTEL_RECORD_MAX];
	size_t last_len;
	bool order_ok;
	unsigned next; /* the sequence number the next record should carry */
};

/* a record: its sequence number in its first 4 bytes, then bytes that
 * follow from it */
static size_t
make(unsigned char *p, unsigned seq, size_t n)
{
	memcpy(p, &seq, 4);
	for (size_t i = 4; i < n; i++)
		p[i] = (unsigned char)(seq * 31 + i);
	return n;
}

static void
take(void *arg, const unsigned char *p, size_t n)
{
	struct got *g = arg;
	unsigned seq;
	unsigned char want[PH_OTEL_RECORD_MAX];
	g->n++;
	memcpy(g->last, p, n);
	g->last_len = n;
	if (n < 4)
		return;
	memcpy(&seq, p, 4);
	if (seq != g->next || memcmp(p, want, make(want, seq, n)) != 0)
		g->order_ok = false;
	g->next = seq + 1;
}

int
main(void)
{
	unsigned char rec[PH_OTEL_RECORD_MAX];
	struct got g = {.order_ok = true};
	int full = 0, st;
	unsigned seq = 0, taken_to;
	pid_t pid;

	is_int(ph_otel_ring_put("abc", 3), PH_RING_NONE, "no ring yet: the channel is used");
	ok(ph_otel_rings_create(2, 3000) == 0, "two rings of 3000 bytes (4096: a power of two)");
	is_int(ph_otel_ring_put("abc", 3), PH_RING_NONE, "a process not attached has no ring");
	ph_otel_ring_attach(5);
	is_int(ph_otel_ring_put("abc", 3), PH_RING_NONE, "a slot past the rings has none");
	ph_otel_ring_attach(0);
	is_int(ph_otel_rings_take(take, &g), 0, "nothing waits at first");

	/* full: 1000-byte records take 1004 bytes each, four fit in 4096 */
	for (int i = 0; i < 6; i++)
		if (ph_otel_ring_put(rec, make(rec, seq, 1000)) == PH_RING_FULL)
			full++;
		else
			seq++;
	is_int(seq, 4, "four 1000-byte records fit in a ring of 4096");
	is_int(full, 2, "the rest are refused, not written over");
	is_int(ph_otel_ring_put(rec, 0), PH_RING_FULL, "an empty record is refused");
	is_int(ph_otel_rings_take(take, &g), 4, "the four are taken");
	ok(g.order_ok && g.next == 4 && g.last_len == 1000, "whole and in order");
	is_int(ph_otel_ring_put(rec, make(rec, seq, 4093)), PH_RING_FULL,
	       "a record larger than the ring's room is refused");

	/* across the end, many times, sizes that are not multiples of 4 */
	for (int round = 0; round < 2000; round++) {
		size_t n = 4 + (size_t)(round * 37 % 1500);
		if (ph_otel_ring_put(rec, make(rec, seq, n)) != PH_RING_PUT) {
			(void)ph_otel_rings_take(take, &g);
			if (ph_otel_ring_put(rec, make(rec, seq, n)) != PH_RING_PUT)
				break;
		}
		seq++;
	}
	(void)ph_otel_rings_take(take, &g);
	ok(g.order_ok, "2000 records of 4 to 1503 bytes came out whole and in order");
	is_int(g.next, seq, "and every one of them came out");
	is_int(seq, 4 + 2000, "none was refused with the reader keeping up");

	/* the reader's sleep */
	ok(ph_otel_rings_arm(), "an empty ring lets the reader sleep");
	is_int(ph_otel_ring_put(rec, make(rec, seq++, 10)), PH_RING_WAKE, "the first writer after it wakes it");
	is_int(ph_otel_ring_put(rec, make(rec, seq++, 10)), PH_RING_PUT, "the next one does not");
	ok(!ph_otel_rings_arm(), "a reader with records waiting does not sleep");
	is_int(ph_otel_ring_put(rec, make(rec, seq++, 10)), PH_RING_PUT, "and nobody is told to wake it");
	ph_otel_rings_disarm();
	is_int(ph_otel_rings_take(take, &g), 3, "the three are taken");

	/* a child of the worker (a handler it forked) has no ring */
	pid = fork();
	if (pid == 0)
		_exit(ph_otel_ring_put(rec, make(rec, seq, 10)) == PH_RING_NONE ? 0 : 1);
	waitpid(pid, &st, 0);
	is_int(st, 0, "a process the worker forks does not write into its ring");
	is_int(ph_otel_rings_take(take, &g), 0, "and nothing came from it");

	/* slot 1: one worker puts three and exits, the next in the slot two */
	taken_to = g.next;
	for (int w = 0; w < 2; w++) {
		pid = fork();
		if (pid == 0) {
			ph_otel_ring_attach(1);
			for (int i = 0; i < 3 - w; i++)
				if (ph_otel_ring_put(rec, make(rec, taken_to + (unsigned)(w * 3 + i), 200)) != PH_RING_PUT)
					_exit(1);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		is_int(st, 0, "worker %d of slot 1 put its records", w + 1);
	}
	is_int(ph_otel_rings_take(take, &g), 5, "the reader gets both workers' records");
	ok(g.order_ok && g.next == taken_to + 5, "in the order they were put");
	return tap_done();
}
