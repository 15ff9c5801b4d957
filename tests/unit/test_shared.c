/* test_shared.c: what the processes share (ipc/ph_shared.c,
 * ph_rate.c): the rate buckets, the verification slots and the cache of
 * verified tokens. */
#include "first.h"
#include "ph_rate.h"
#include "ph_shared.h"
#include "ph_shm.h"
#include "ph_util.h"
#include "tap.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ph_rate.c: a bucket of 2 refilling at 1 per second, on a fake clock. */
static void
test_rate(void)
{
	struct ph_rate_conf rc = {1, 1, 2};
	int64_t t = 1000000000;
	is_int(ph_rate_take("p:x", &rc, t), 0, "rate: first of the burst");
	is_int(ph_rate_take("p:x", &rc, t), 0, "rate: second of the burst");
	is_int(ph_rate_take("p:x", &rc, t), 1, "rate: the third waits one second");
	is_int(ph_rate_take("p:y", &rc, t), 0, "rate: another key has its own bucket");
	is_int(ph_rate_take("p:x", &rc, t + 500000), 1, "rate: half a second later: still waiting");
	is_int(ph_rate_take("p:x", &rc, t + 1000000), 0, "rate: a second later one token is back");
	is_int(ph_rate_take("p:x", &rc, t + 1000000), 1, "rate: and only one");
	is_int(ph_rate_take("p:x", &rc, t + 100000000), 0, "rate: after a long pause the bucket is full");
	is_int(ph_rate_take("p:x", &rc, t + 100000000), 0, "rate: (two tokens)");
	is_int(ph_rate_take("p:x", &rc, t + 100000000), 1, "rate: never more than burst");
	rc = (struct ph_rate_conf){1, 60, 0};
	is_int(ph_rate_take("p:slow", &rc, t), 0, "rate: 1 per 60 s, first");
	is_int(ph_rate_take("p:slow", &rc, t), 60, "rate: Retry-After 60");
	rc = (struct ph_rate_conf){2, 60, 2};
	is_int(ph_rate_peek("f:a", &rc, t), 0, "rate: peek at a full bucket: 0");
	is_int(ph_rate_peek("f:a", &rc, t), 0, "rate: peeking spends nothing");
	(void)ph_rate_take("f:a", &rc, t);
	(void)ph_rate_take("f:a", &rc, t);
	is_int(ph_rate_peek("f:a", &rc, t), 30, "rate: peek at an empty bucket: seconds to the next token");
}

/* ph_shared.c: auth.max_concurrent_verify's slots, taken over from a
 * holder that died; the host's cache of verified tokens. */
static void
test_shared(void)
{
	unsigned char d[PH_SHARED_DIGEST], e[PH_SHARED_DIGEST];
	int a, b, st;
	pid_t pid;
	a = ph_shared_verify_enter(2);
	b = ph_shared_verify_enter(2);
	ok(a == 0 && b == 1, "verify: two slots of two");
	is_int(ph_shared_verify_enter(2), -1, "verify: a third is refused");
	ph_shared_verify_leave(b);
	is_int(ph_shared_verify_enter(2), 1, "verify: a slot given back is taken again");
	ph_shared_verify_leave(0);
	ph_shared_verify_leave(1);
	if ((pid = fork()) == 0)
		_exit(ph_shared_verify_enter(1) == 0 ? 0 : 1); /* dies holding slot 0 */
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "verify: a child took slot 0 and died");
	is_int(ph_shared_verify_enter(1), 0, "verify: the dead child's slot is taken over");
	ph_shared_verify_leave(0);
	memset(d, 7, sizeof d);
	memcpy(e, d, sizeof e);
	e[31] ^= 1; /* same home slot, another digest */
	is_int(ph_shared_auth_get(d), -1, "auth cache: empty");
	ph_shared_auth_put(d, 3);
	ph_shared_auth_put(e, 5);
	is_int(ph_shared_auth_get(d), 3, "auth cache: a verified digest is found");
	is_int(ph_shared_auth_get(e), 5, "auth cache: its neighbour keeps its own entry");
	e[31] ^= 2;
	is_int(ph_shared_auth_get(e), -1, "auth cache: a digest never put is not");
	if ((pid = fork()) == 0)
		_exit(ph_shared_auth_get(d) == 3 ? 0 : 1);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "auth cache: another process sees it");
}

/* A child killed (SIGKILL) while it holds a table's lock: the next taker
 * is not stuck (before, it spun forever) and finds the table emptied,
 * since the dead holder may have left it half-written. alarm() turns a
 * hang into a failure. */
static void
test_dead_holder(void)
{
	struct ph_rate_conf rc = {1, 60, 1};
	unsigned char d[PH_SHARED_DIGEST];
	int64_t t = 1000000000;
	int st;
	pid_t pid;
	memset(d, 9, sizeof d);
	ph_shared_auth_put(d, 4);
	is_int(ph_rate_take("p:dead", &rc, t), 0, "dead holder: a bucket's one token is spent");
	is_int(ph_rate_take("p:dead", &rc, t), 60, "dead holder: ... then it waits");
	for (int which = 0; which < 2; which++) {
		struct ph_shm_lock *l = which ? &ph_shm_auth()->lock : &ph_shm_rate()->lock;
		if ((pid = fork()) == 0) {
			if (ph_shm_lock_take(l))
				_exit(2);
			raise(SIGKILL); /* dies holding it */
			_exit(1);
		}
		waitpid(pid, &st, 0);
		ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "dead holder: a child took the %s lock and was killed",
		   which ? "token cache's" : "rate buckets'");
	}
	alarm(10);
	is_int(ph_rate_take("p:dead", &rc, t), 0, "dead holder: the rate lock is taken over, the buckets start full");
	is_int(ph_rate_take("p:dead", &rc, t), 60, "dead holder: ... and count again");
	is_int(ph_shared_auth_get(d), -1, "dead holder: the token cache's lock is taken over, the cache emptied");
	ph_shared_auth_put(d, 4);
	is_int(ph_shared_auth_get(d), 4, "dead holder: ... and it caches again");
	alarm(0);
}

int
main(void)
{
	test_rate();
	test_shared();
	test_dead_holder();
	return tap_done();
}
