/* ph_shm.h: the layout of the metrics and the rate buckets inside the
 * shared mapping (ph_shared.c owns it; ph_metrics.c and ph_rate.c use it).
 * Everything is changed with atomic operations, the buckets under one
 * spin lock. */
#ifndef PH_SHM_H
#define PH_SHM_H
#include "first.h"
#include "ph_method.h"
#include "ph_metrics.h"
#include "ph_rate.h"

#define PH_M_METHODS (PH_METHOD__COUNT + 3) /* known methods, then "notification", "other", "none" */
#define PH_M_STATUSES 16
#define PH_M_BUCKETS 13 /* 12 bounds and +Inf */

struct ph_shm_metrics {
	uint64_t requests[PH_M_METHODS][PH_M_STATUSES];
	uint64_t buckets[PH_M_METHODS][PH_M_BUCKETS]; /* not cumulative */
	uint64_t sum_us[PH_M_METHODS];
	uint64_t exec[PH_MX__COUNT];
	uint64_t rate_limited, reloads;
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
	char lock;
	struct ph_rate_slot slot[PH_RATE_SLOTS];
};

struct ph_shm_metrics *ph_shm_metrics(void);
struct ph_shm_rate *ph_shm_rate(void);
#endif
