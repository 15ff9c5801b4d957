/* ph_task.h: the task store (io.modelcontextprotocol/tasks, DESIGN.md
 * §4b). One JSON file per task in tasks.dir, replaced atomically (written
 * aside, then renamed), so a reader on any worker sees either the old
 * record or the new one, never half of one. A change that reads, edits and
 * writes a record (an answer, a cancel, the end of the process) holds the
 * store's lock file meanwhile. With cluster: the records are in the
 * cluster's Redis instead, sealed, each with a lock of its own, so that
 * every host reads and changes every task (ph_task_redis.c).
 *
 * A record is the task as tasks/get shows it (taskId, status, createdAt,
 * lastUpdatedAt, ttlMs, pollIntervalMs, statusMessage, result, error,
 * inputRequests) plus members whose names start with '_' that only the
 * server reads: the owner, the tool and the exec input, the answers given
 * so far, the keys ever asked, the supervisor's pid, a cancel request. */
#ifndef PH_TASK_H
#define PH_TASK_H
#include "first.h"
#include "ph_task_redis.h"
#include <json-c/json.h>

#define PH_TASK_EXT "io.modelcontextprotocol/tasks"
/* The longest task id: a host tag (tasks.host, up to 32 characters), a
 * dot and 32 hex digits of libsodium randomness. */
#define PH_TASK_ID_MAX 72

/* A fresh unguessable id, named after host when host is not empty. */
void ph_task_id_new(const char *host, char out[PH_TASK_ID_MAX]);
/* True when id has the shape ph_task_id_new makes (so it can name a file). */
bool ph_task_id_ok(const char *id);
/* The host tag of id ("" when it has none), into out. */
void ph_task_id_host(const char *id, char *out, size_t n);

/* Creates dir (mode 0700) when it is missing and checks that it is
 * Phantom's own: a directory, no link, of this user, writable by nobody
 * else. Returns 0, or -1 with why. */
int ph_task_dir_ready(const char *dir, const char **why);
/* The record of id, or NULL when there is none (or it does not parse).
 * Caller puts. */
struct json_object *ph_task_load(const char *dir, const char *id);
/* Writes rec (which holds its taskId) in place of the old record. Returns
 * 0, or -1 with errno. */
int ph_task_save(const char *dir, struct json_object *rec);
/* Removes the record of id. Returns 0, or -1 with errno. */
int ph_task_remove(const char *dir, const char *id);
/* Takes the lock for an edit of the record of id (blocking; in tasks.dir
 * one lock for the store, in Redis one per record, waited for at most
 * cluster.timeout_ms). Returns what to pass to ph_task_unlock, or -1 with
 * errno. */
int ph_task_lock(const char *dir, const char *id);
void ph_task_unlock(int lk);

/* True for the statuses no task leaves: completed, failed, cancelled. */
bool ph_task_status_final(const char *status);
/* A new record for id in status "working", owned by principal (NULL:
 * anonymous), with ttl_ms and poll_ms. Caller puts. */
struct json_object *ph_task_record_new(const char *id, const char *principal, long long ttl_ms,
				       long long poll_ms);
/* Moves rec to status (with message, NULL: none) and stamps
 * lastUpdatedAt; a final status also notes when it ended. */
void ph_task_set_status(struct json_object *rec, const char *status, const char *message);
/* When rec reached its final status (ms since the epoch), 0 while it runs. */
int64_t ph_task_ended_ms(struct json_object *rec);
/* True when rec belongs to principal (compared in constant time). */
bool ph_task_owned(struct json_object *rec, const char *principal);
/* The task as tasks/get shows it (the members not starting with '_').
 * Caller puts. */
struct json_object *ph_task_view(struct json_object *rec);
#endif
