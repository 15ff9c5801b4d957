/* ph_hub_task.h: the hub's task processes (ph_hub_task.c). Each task runs
 * under a supervisor the hub forks: it runs the tool's exec handler with
 * the one process runner, round after round while the handler asks for
 * input, and writes what happened into the task's record. The hub counts
 * them against the limits, reaps them, purges expired records and marks
 * the tasks of a server that stopped as failed. */
#ifndef PH_HUB_TASK_H
#define PH_HUB_TASK_H
#include "first.h"
#include "ph_hub_task_redis.h"
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


#endif
