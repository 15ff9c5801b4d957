/* ph_rate.c: token buckets in the shared mapping. One lock guards the
 * table: a take is a hash, a short scan and a few additions, far shorter
 * than anything else a request does. */
#include "first.h"
#include "ph_rate.h"
#include "ph_cluster.h"
#include "ph_log.h"
#include "ph_shm.h"
#include "ph_util.h"
#include <sodium.h>
#include <string.h>

/* A BLAKE2b digest of the whole key (however long: principals that share
 * a prefix are different buckets) and, from its first bytes, the slot
 * hash, never 0 (0 marks an empty slot). */
static uint64_t
key_digest(const char *k, unsigned char d[PH_RATE_DIGEST])
{
	uint64_t h;
	crypto_generichash(d, PH_RATE_DIGEST, (const unsigned char *)k, strlen(k), NULL, 0);
	memcpy(&h, d, sizeof h);
	return h ? h : 1;
}

/* Takes the table's lock; a holder that died may have left a slot
 * half-written, so the buckets start full again. */
static void
lock(struct ph_shm_rate *t)
{
	if (ph_shm_lock_take(&t->lock)) {
		memset(t->slot, 0, sizeof t->slot);
		ph_log("warning", "a process died holding the lock of the rate buckets: they start full again");
	}
}

static void
unlock(struct ph_shm_rate *t)
{
	ph_shm_lock_give(&t->lock);
}

/* The slot of the key of digest d (hash h): its own, else an empty one,
 * else the least recently used, reset to a full bucket of cap micro-tokens. */
static struct ph_rate_slot *
find_slot(struct ph_shm_rate *t, const unsigned char *d, uint64_t h, int64_t cap, int64_t now)
{
	struct ph_rate_slot *lru = &t->slot[h % PH_RATE_SLOTS], *s;
	for (size_t i = 0; i < PH_RATE_SLOTS; i++) {
		s = &t->slot[(h + i) % PH_RATE_SLOTS];
		if (s->hash == h && memcmp(s->digest, d, PH_RATE_DIGEST) == 0)
			return s;
		if (s->hash == 0) {
			lru = s;
			break;
		}
		if (s->last_us < lru->last_us)
			lru = s;
	}
	lru->hash = h;
	memcpy(lru->digest, d, PH_RATE_DIGEST);
	lru->micro_tokens = cap;
	lru->last_us = now;
	return lru;
}

/* Refills key's bucket to now and, when take, spends a token. Returns 0
 * when a token was there, else the seconds until one is (at least 1). */
static long long
bucket(const char *key, const struct ph_rate_conf *rc, int64_t now, bool take)
{
	struct ph_shm_rate *t = ph_shm_rate();
	unsigned char d[PH_RATE_DIGEST];
	uint64_t h = key_digest(key, d);
	double per_us = (double)rc->requests / ((double)rc->per_seconds * 1e6); /* tokens per us */
	int64_t cap = (rc->burst > 0 ? rc->burst : rc->requests) * 1000000LL;
	long long wait = 0;
	struct ph_rate_slot *s;
	lock(t);
	s = find_slot(t, d, h, cap, now);
	if (now > s->last_us) {
		double add = (double)(now - s->last_us) * per_us * 1e6;
		s->micro_tokens = add >= (double)cap ? cap : s->micro_tokens + (int64_t)add;
		if (s->micro_tokens > cap)
			s->micro_tokens = cap;
		s->last_us = now;
	}
	if (s->micro_tokens >= 1000000) {
		if (take)
			s->micro_tokens -= 1000000;
	} else {
		double us = (double)(1000000 - s->micro_tokens) / (per_us * 1e6);
		wait = (long long)((us + 999999.0) / 1e6);
		if (wait < 1)
			wait = 1;
	}
	unlock(t);
	return wait;
}

/* With cluster:, the bucket in Redis that every host takes from; while
 * Redis is unreachable (ph_cluster.c logs that once and the backoff keeps
 * it from being waited on), this host's own. */
static long long
shared_or_local(const char *key, const struct ph_rate_conf *rc, int64_t now, bool take)
{
	long long wait;
	if (ph_cluster_on() && ph_cluster_rate(key, rc, ph_wall_ms(), take, &wait) == 0)
		return wait;
	return bucket(key, rc, now, take);
}

long long
ph_rate_take(const char *key, const struct ph_rate_conf *rc, int64_t now)
{
	return shared_or_local(key, rc, now, true);
}

long long
ph_rate_peek(const char *key, const struct ph_rate_conf *rc, int64_t now)
{
	return shared_or_local(key, rc, now, false);
}
