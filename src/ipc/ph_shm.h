/* ph_shm.h: the layout of the metrics, the rate buckets and the cache of
 * verified bearer tokens inside the shared mapping (ph_shared.c owns it;
 * ph_metrics.c and ph_rate.c use it). Everything is changed with atomic
 * operations, the tables under a lock each that survives its holder. */
#ifndef PH_SHM_H
#define PH_SHM_H
#include "first.h"
#include "ph_method.h"
#include "ph_metrics.h"
#include "ph_rate.h"
#include "ph_shared.h"
#include <pthread.h>

/* A lock in the shared mapping that survives the death of its holder: a
 * robust, process-shared mutex. A worker killed while it holds one (the
 * OOM killer, SIGKILL, a crashing module) hands it to the next taker, who
 * is told so and resets what it guards, which may be half-written: every
 * table under one is a cache or a count that may start again. */
struct ph_shm_lock {
	pthread_mutex_t m;
};
/* Sets up l in memory shared before the fork (or private to a process). */
void ph_shm_lock_init(struct ph_shm_lock *l);
/* Takes l. Returns true when its last holder died holding it: the caller
 * resets what l guards before using it. */
bool ph_shm_lock_take(struct ph_shm_lock *l) PH_WUR;
void ph_shm_lock_give(struct ph_shm_lock *l);

#define PH_M_METHODS (PH_METHOD__COUNT + 3) /* known methods, then "notification", "other", "none" */
#define PH_M_STATUSES 16
#define PH_M_BUCKETS 13 /* 12 bounds and +Inf */

struct ph_shm_metrics {
	uint64_t requests[PH_M_METHODS][PH_M_STATUSES];
	uint64_t buckets[PH_M_METHODS][PH_M_BUCKETS]; /* not cumulative */
	uint64_t sum_us[PH_M_METHODS];
	uint64_t exec[PH_MX__COUNT];
	uint64_t rate_limited, reloads;
	uint64_t otel[PH_MO__COUNT];  /* telemetry hand-over and export (ph_otel.c) */
	int64_t busy, workers, generation;
	int64_t pool_max, pool_full; /* the master's maximum, and times it was reached */
	int stopping;
};

struct ph_rate_slot {
	uint64_t hash;               /* 0: empty */
	unsigned char digest[PH_RATE_DIGEST]; /* of the whole key */
	int64_t micro_tokens;        /* tokens x 1e6 */
	int64_t last_us;
};

struct ph_shm_rate {
	struct ph_shm_lock lock;
	struct ph_rate_slot slot[PH_RATE_SLOTS];
};

/* The cache of verified bearer tokens (ph_shared_auth_put/get). */
struct ph_shm_auth {
	struct ph_shm_lock lock;
	struct ph_shm_auth_slot {
		unsigned char digest[PH_SHARED_DIGEST];
		long token; /* the entry of the configuration that keyed digest */
		bool used;  /* false: empty (the mapping starts zeroed) */
	} slot[PH_SHARED_AUTH_SLOTS];
};

struct ph_shm_metrics *ph_shm_metrics(void);
struct ph_shm_rate *ph_shm_rate(void);
struct ph_shm_auth *ph_shm_auth(void);
#endif
