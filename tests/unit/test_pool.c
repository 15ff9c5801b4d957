/* test_pool.c: the pool policy (process/ph_pool.c) without processes: the
 * forks it asks for (the min_idle deficit, one per waiting connection, none
 * past max, none in a static pool), the fork rate (spawn_rate in the first
 * second, doubling each second that used it all, capped at max_spawn_rate,
 * back to spawn_rate after a quiet second), when workers wake the master,
 * the idle workers it ends (past idle_timeout_ms down to min_idle, one a
 * second above max_idle), and "pool reached its maximum" counted each time
 * and logged once per interval. */
#include "first.h"
#include "ph_metrics.h"
#include "ph_pool.h"
#include "tap.h"
#include <string.h>

#define S 1000000LL

static struct ph_pool_conf
dynamic(void)
{
	struct ph_pool_conf c = {PH_POOL_DYNAMIC, 32, 4, 2, 4, 1000, 4, 16, 0, 60};
	return c;
}

static void
test_forks(void)
{
	struct ph_pool p;
	struct ph_pool_conf c = dynamic();
	struct ph_pool_view v = {4, 3, 1, 0, false};
	int64_t wake = 100 * S;
	ph_pool_init(&p, &c, 0, 0);
	is_int(ph_pool_forks(&p, &v, 10, &wake), 1, "one idle of min_idle 2: one fork");
	v = (struct ph_pool_view){4, 4, 0, 3, true};
	is_int(ph_pool_forks(&p, &v, 10, &wake), 4, "none idle, 3 waiting: 3 + min_idle 2, held to spawn_rate 4");
	is_int(wake, S, "the rate holds some back: wake when the second ends");
	ph_pool_forked(&p, 4);
	wake = 100 * S;
	is_int(ph_pool_forks(&p, &v, 20, &wake), 0, "the second's allowance is used up");
	is_int(ph_pool_wake_below(&p, &v, 20), 0, "workers do not wake the master meanwhile");
	is_int(ph_pool_forks(&p, &v, S + 20, &wake), 5, "the next second allows twice as many (8)");
	ph_pool_forked(&p, 8);
	v.waiting = false, v.idle = 0, v.queue = 0;
	is_int(ph_pool_forks(&p, &v, 2 * S + 30, &wake), 2, "after a second that used all 8: 16 allowed");
	ph_pool_forked(&p, 16);
	v.waiting = true, v.queue = 40;
	is_int(ph_pool_forks(&p, &v, 3 * S + 40, &wake), 16, "doubling stops at max_spawn_rate 16");
	ph_pool_forks(&p, &v, 5 * S, &wake); /* a second without a fork in between */
	is_int(p.rate, 4, "after a quiet second the rate is spawn_rate again");
	v = (struct ph_pool_view){30, 30, 0, 10, true};
	is_int(ph_pool_forks(&p, &v, 5 * S, &wake), 2, "room for 2 below max 32");
	v.total = 32;
	is_int(ph_pool_forks(&p, &v, 5 * S, &wake), 0, "at max: none");
	is_int(ph_pool_wake_below(&p, &v, 5 * S), 0, "at max workers do not wake the master");
	v.total = 10;
	is_int(ph_pool_wake_below(&p, &v, 5 * S), 2, "below max: woken under min_idle idle");

	c.mode = PH_POOL_ONDEMAND;
	c.min_idle = 0;
	ph_pool_init(&p, &c, 0, 0);
	v = (struct ph_pool_view){0, 0, 0, 0, false};
	is_int(ph_pool_forks(&p, &v, 10, &wake), 0, "ondemand: none while nothing waits");
	v.waiting = true, v.queue = 1;
	is_int(ph_pool_forks(&p, &v, 10, &wake), 1, "ondemand: one per connection waiting");
	is_int(ph_pool_wake_below(&p, &v, 10), 1, "ondemand: woken when the last idle one is taken");

	ph_pool_init(&p, &c, 3, 0);
	is_int(p.c.mode, PH_POOL_STATIC, "--workers 3: a static pool");
	is_int(p.c.start, 3, "static: 3 at start");
	v = (struct ph_pool_view){3, 3, 0, 5, true};
	is_int(ph_pool_forks(&p, &v, 10, &wake), 0, "static: no fork by demand");
	is_int(ph_pool_wake_below(&p, &v, 10), 0, "static: workers never wake the master");
}

static void
test_trim(void)
{
	struct ph_pool p;
	struct ph_pool_conf c = dynamic();
	int64_t since[6] = {0, 0, 0, 0, 0, 0}, wake = 100 * S;
	ph_pool_init(&p, &c, 0, 0);
	is_int(ph_pool_trim(&p, since, 2, 20 * S, &wake), 0, "min_idle 2 idle: none ends");
	for (int i = 0; i < 6; i++)
		since[i] = 10 * S + i * 100000;
	wake = 100 * S;
	is_int(ph_pool_trim(&p, since, 6, 10 * S + 600000, &wake), 1,
	       "6 idle, max_idle 4: the one idle longest ends, before the timeout");
	wake = 100 * S;
	is_int(ph_pool_trim(&p, since + 1, 5, 10 * S + 700000, &wake), 0, "only one a second");
	is_int(wake, 11 * S + 100000, "the next one when the longest idle reaches the timeout");
	wake = 100 * S;
	is_int(ph_pool_trim(&p, since + 1, 5, 12 * S, &wake), 3,
	       "past the timeout every idle worker ends but min_idle");
	c.mode = PH_POOL_ONDEMAND;
	c.min_idle = 0;
	ph_pool_init(&p, &c, 0, 0);
	wake = 100 * S;
	is_int(ph_pool_trim(&p, since, 2, 10 * S + 500000, &wake), 0, "ondemand: not yet idle 1 s");
	is_int(wake, 11 * S, "wake when the first one's timeout comes");
	is_int(ph_pool_trim(&p, since, 2, 12 * S, &wake), 2, "ondemand: all end after the timeout");
}

static void
test_full(void)
{
	struct ph_pool p;
	struct ph_pool_conf c = dynamic();
	struct ph_pool_view full = {32, 32, 0, 3, true}, room = {32, 31, 1, 0, false};
	struct ph_pool_status st;
	long long before;
	ph_pool_init(&p, &c, 0, 0);
	ph_metrics_pool(&st);
	before = st.full;
	ph_pool_note_full(&p, &full, 1 * S);
	ph_pool_note_full(&p, &full, 2 * S);
	ph_metrics_pool(&st);
	is_int(st.full - before, 1, "full at two looks in a row: one time");
	is_int(p.full_logged_us, 1 * S, "logged");
	ph_pool_note_full(&p, &room, 3 * S);
	ph_pool_note_full(&p, &full, 4 * S);
	ph_metrics_pool(&st);
	is_int(st.full - before, 2, "full again after a look with an idle worker: counted again");
	is_int(p.full_logged_us, 1 * S, "not logged again within full_log_interval_s");
	is_int(p.full_quiet, 1, "the time not logged is remembered for the next line");
	ph_pool_note_full(&p, &room, 5 * S);
	ph_pool_note_full(&p, &full, 70 * S);
	is_int(p.full_logged_us, 70 * S, "logged again after the interval");
	is_int(p.full_quiet, 0, "with the times in between");
}

int
main(void)
{
	test_forks();
	test_trim();
	test_full();
	return tap_done();
}
