/* ph_rate.h: token buckets shared by all processes of one server
 * (limits.rate, auth.allow.<principal>.rate), one per key (a principal, or
 * a client address), in the shared mapping of ph_shared.c. */
#ifndef PH_RATE_H
#define PH_RATE_H
#include "first.h"
#include "ph_config.h"

/* Buckets kept at once; past that the least recently used is reused (its
 * key starts again with a full bucket). */
#define PH_RATE_SLOTS 1024
/* Bytes of the digest of a whole key that tell buckets apart. */
#define PH_RATE_DIGEST 16
/* Room for a key made of a client address (the principal keys of
 * ph_ladder.c are as long as the principal). */
#define PH_RATE_KEY_MAX 63

/* Takes one token from the bucket of key (any length, all of it counts) sized by rc (borrowed; requests > 0)
 * at time now_us. Returns 0 when allowed, else the seconds until a token
 * is there (at least 1), for Retry-After. */
long long ph_rate_take(const char *key, const struct ph_rate_conf *rc, int64_t now_us);
/* The same without spending the token: 0 while key's bucket holds one,
 * else the seconds until it does (auth.fail_limit takes on each failure and
 * peeks before the costly check). */
long long ph_rate_peek(const char *key, const struct ph_rate_conf *rc, int64_t now_us);
#endif
