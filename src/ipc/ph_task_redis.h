/* ph_task_redis.h: the task store in the cluster's Redis (ph_task_redis.c),
 * which the task store's functions (ph_task.h) use instead of tasks.dir
 * when cluster: is configured. Records are sealed JSON under opaque keys
 * (ph_cluster.h). */
#ifndef PH_TASK_REDIS_H
#define PH_TASK_REDIS_H
#include "first.h"
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* True when the last load, save or lock of this process failed because
 * the cluster's Redis is unreachable (a missing record is not that). */
bool ph_task_store_down(void);

/* What ph_task_redis_lock returns in place of a descriptor. */
#define PH_TASK_LOCK_REDIS 0x7ffffff0
struct json_object *ph_task_redis_load(const char *id);
/* ended_ms: when the record's task ended (ph_task_ended_ms), 0 while it runs. */
int ph_task_redis_save(struct json_object *rec, int64_t ended_ms);
int ph_task_redis_remove(const char *id);
int ph_task_redis_lock(const char *id);
void ph_task_redis_unlock(void);
/* The PX (ms) a record is written with: 0 (none) while it runs (ended_ms
 * 0), then until its ttlMs has passed, a little longer. */
int64_t ph_task_redis_px(struct json_object *rec, int64_t ended_ms);
#endif
