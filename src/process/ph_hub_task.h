/* ph_hub_task.h: the hub's task processes (ph_hub_task.c). Each task runs
 * under a supervisor the hub forks: it runs the tool's exec handler with
 * the one process runner, round after round while the handler asks for
 * input, and writes what happened into the task's record. The hub counts
 * them against the limits, reaps them, purges expired records and marks
 * the tasks of a server that stopped as failed. */
#ifndef PH_HUB_TASK_H
#define PH_HUB_TASK_H
#include "first.h"
#include "ph_server.h"
#include "ph_hubmsg.h"

struct ph_hub_tasks;
struct ph_hcl;

/* Called when a task's record changed (its status, its input requests):
 * rec is the record, borrowed. */
typedef void (*ph_hub_task_fn)(void *ctx, const char *id, struct json_object *rec);

/* The tasks of a hub serving srv (borrowed; see ph_hub_tasks_reconf).
 * Starts a pass over the store that marks tasks whose process is gone as
 * failed. */
struct ph_hub_tasks *ph_hub_tasks_new(struct ph_server *srv, ph_hub_task_fn changed, void *ctx);
void ph_hub_tasks_free(struct ph_hub_tasks *t);
/* After a reload: later tasks use srv; running ones keep their handler. */
void ph_hub_tasks_reconf(struct ph_hub_tasks *t, struct ph_server *srv);
/* Handles the task message m (TASK_START, TASK_CHANGED, TASK_CANCEL; borrowed);
 * fd (-1: none came) is taken. */
void ph_hub_tasks_message(struct ph_hub_tasks *t, const struct ph_hubmsg *m, int fd);
/* SIGCHLD: reaps the supervisors that ended. */
void ph_hub_tasks_reap(struct ph_hub_tasks *t);
/* Called every loop: a bounded step of the pass over the store; with
 * cluster:, the pass over Redis goes on conn (the hub's asynchronous
 * command connection, borrowed; NULL: none) and never waits. */
void ph_hub_tasks_tick(struct ph_hub_tasks *t, struct ph_hcl *conn);
/* SIGTERM: every supervisor stops its process and marks the task failed. */
void ph_hub_tasks_stop(struct ph_hub_tasks *t);
size_t ph_hub_tasks_running(const struct ph_hub_tasks *t);

/* For ph_hub_task_redis.c. Why the pass fails rec (borrowed), a record
 * that has not ended: the message, or NULL to leave it. alive: whether the
 * host named by its _host holds its lease (1, 0, -1 unknown). */
const char *ph_hub_tasks_lost(struct ph_hub_tasks *t, struct json_object *rec, int alive);
/* Writes a failed end with message into rec (false: it had ended). */
bool ph_hub_task_set_failed(struct json_object *rec, const char *message);
/* The record of id (borrowed) was marked failed by the pass: told. */
void ph_hub_tasks_failed(struct ph_hub_tasks *t, const char *id, struct json_object *rec);
/* A pass over the whole store counted n records. */
void ph_hub_tasks_passed(struct ph_hub_tasks *t, long long n);

/* ph_hub_task_redis.c (with cluster:): the pass over the records in Redis
 * on the hub's asynchronous connection, and the host's lease. */
struct ph_htr;
struct ph_htr *ph_htr_new(struct ph_hub_tasks *t);
void ph_htr_free(struct ph_htr *r);
/* A step of the pass (one SCAN and what follows from its reply) when none
 * is awaited; a pass starts purge_interval_ms after the last ended. */
void ph_htr_tick(struct ph_htr *r, struct ph_hcl *conn, long long purge_interval_ms);
/* After a reload: the pass in progress is dropped, the next starts anew. */
void ph_htr_reset(struct ph_htr *r);
/* What became of an operation on the record of id: rec (borrowed) is
 * the record as read, or as written when written (the failed mark was
 * written); NULL when it is missing or Redis did not answer. */
typedef void (*ph_htr_rec_fn)(struct ph_hub_tasks *t, const char *id, struct json_object *rec, bool written,
			      void *arg);
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
