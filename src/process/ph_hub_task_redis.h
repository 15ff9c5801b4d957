/* ph_hub_task_redis.h: with cluster:, the hub's pass over the task records
 * in Redis and the host's lease, both on the hub's asynchronous connection
 * (ph_hub_task_redis.c); the task table (ph_hub_task.c) owns a pass and
 * answers its questions through struct ph_htr_ops. */
#ifndef PH_HUB_TASK_REDIS_H
#define PH_HUB_TASK_REDIS_H
#include "first.h"
#include <json-c/json.h>
#include <stdbool.h>

struct ph_hcl;

/* ph_hub_task_redis.c (with cluster:): the pass over the records in Redis
 * on the hub's asynchronous connection, and the host's lease. */
struct ph_htr;
/* What the pass asks of the task table that owns it (ctx: its own). */
struct ph_htr_ops {
	/* Why the pass fails rec (borrowed), a record that has not ended: the
	 * message, or NULL to leave it. alive: whether the host named by its
	 * _host holds its lease (1, 0, -1 unknown). */
	const char *(*lost)(void *ctx, struct json_object *rec, int alive);
	/* Writes a failed end with message into rec (false: it had ended). */
	bool (*set_failed)(struct json_object *rec, const char *message);
	/* The record of id (borrowed) was marked failed by the pass: told. */
	void (*failed)(void *ctx, const char *id, struct json_object *rec);
	/* A pass over the whole store counted n records. */
	void (*passed)(void *ctx, long long n);
};
struct ph_htr *ph_htr_new(const struct ph_htr_ops *ops, void *ctx);
void ph_htr_free(struct ph_htr *r);
/* A step of the pass (one SCAN and what follows from its reply) when none
 * is awaited; a pass starts purge_interval_ms after the last ended. */
void ph_htr_tick(struct ph_htr *r, struct ph_hcl *conn, long long purge_interval_ms);
/* After a reload: the pass in progress is dropped, the next starts anew. */
void ph_htr_reset(struct ph_htr *r);
/* What became of an operation on the record of id: rec (borrowed) is
 * the record as read, or as written when written (the failed mark was
 * written); NULL when it is missing or Redis did not answer. */
typedef void (*ph_htr_rec_fn)(void *ctx, const char *id, struct json_object *rec, bool written, void *arg);
/* Reads the record of id on the connection of the last tick (waiting for
 * it while it is not up, at most cluster.timeout_ms) and calls fn once,
 * perhaps at once; operations on records are sent in order. */
void ph_htr_get(struct ph_htr *r, const char *id, ph_htr_rec_fn fn, void *arg);
/* Marks the record of id failed with message unless it has ended, by the
 * pass's script (never over an edit under its lock or a newer record; read
 * again then, a few times), and calls fn once. */
void ph_htr_fail(struct ph_htr *r, const char *id, const char *message, ph_htr_rec_fn fn, void *arg);
/* Renews this host's lease (cluster.lease_ms) on conn every third of it;
 * one SET at a time, never waited for. */
void ph_hub_lease_tick(struct ph_hcl *conn);
#endif
