/* ph_task_redis.c: the task store in the cluster's Redis (ph_task.h), used
 * in place of tasks.dir when cluster: is configured, so that any host reads
 * any task. A record is one key (kind PH_CK_TASK, named by the keyed hash
 * of its id) holding it sealed; a finished record expires with its ttlMs.
 * The lock of a record is a key of its own taken with SET NX PX
 * (cluster.lock_ms: a holder that died frees it then) and given back only
 * by its holder. */
#include "first.h"
#include "ph_task_redis.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_util.h"
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef PH_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

/* The longest a lock is waited for, in steps of LOCK_STEP_MS. */
#define LOCK_STEP_MS 5

static bool store_down;

bool
ph_task_store_down(void)
{
	return store_down;
}

static void
key_of(const char *id, char key[PH_CLUSTER_KEY_MAX])
{
	ph_cluster_key(PH_CK_TASK, id, strlen(id), key);
}

struct json_object *
ph_task_redis_load(const char *id)
{
	char key[PH_CLUSTER_KEY_MAX];
	struct json_object *rec;
	key_of(id, key);
	rec = ph_cluster_get_json(key, PH_JSON_DEPTH_DOCUMENT * 2, &store_down);
	errno = store_down ? EAGAIN : rec ? 0 : ENOENT;
	/* a record under another id's key would be a forgery that opened */
	if (rec && (ph_jstr(rec, "taskId") == NULL || strcmp(ph_jstr(rec, "taskId"), id) != 0)) {
		json_object_put(rec);
		rec = NULL;
	}
	return rec;
}

int64_t
ph_task_redis_px(struct json_object *rec, int64_t ended)
{
	int64_t px = 0;
	struct json_object *ttl = ph_jget(rec, "ttlMs");
	if (ended > 0 && ttl && json_object_is_type(ttl, json_type_int)) {
		/* Redis forgets it when tasks/get would call it unknown, and a
		 * little later: the hosts' clocks differ a little */
		px = ended + json_object_get_int64(ttl) - ph_wall_ms() + 5000;
		if (px < 1000)
			px = 1000;
	}
	return px;
}

int
ph_task_redis_save(struct json_object *rec, int64_t ended_ms)
{
	char key[PH_CLUSTER_KEY_MAX];
	key_of(ph_jstr(rec, "taskId"), key);
	if (ph_cluster_put_json(key, rec, ph_task_redis_px(rec, ended_ms)) != 0) {
		store_down = true;
		errno = EAGAIN;
		return -1;
	}
	store_down = false;
	return 0;
}

int
ph_task_redis_remove(const char *id)
{
	char key[PH_CLUSTER_KEY_MAX];
	key_of(id, key);
	return ph_cluster_del(key);
}

#ifdef PH_HAVE_HIREDIS
/* The lock this process holds (one at a time: edits do not nest). */
static struct {
	char key[PH_CLUSTER_KEY_MAX];
	char token[33];
	bool held;
} lk;

int
ph_task_redis_lock(const char *id)
{
	const struct ph_cluster_conf *cc = ph_cluster_conf();
	unsigned char rnd[16];
	char ms[24];
	const char *argv[6] = {"SET", lk.key, lk.token, "NX", "PX", ms};
	size_t len[6] = {3, 0, 32, 2, 2, 0};
	int64_t until = ph_now_us() + cc->timeout_ms * 1000;
	if (lk.held) {
		errno = EDEADLK;
		return -1;
	}
	ph_cluster_key(PH_CK_LOCK, id, strlen(id), lk.key);
	randombytes_buf(rnd, sizeof rnd);
	sodium_bin2hex(lk.token, sizeof lk.token, rnd, sizeof rnd);
	len[1] = strlen(lk.key);
	len[5] = (size_t)snprintf(ms, sizeof ms, "%lld", cc->lock_ms);
	for (;;) {
		struct redisReply *rep = ph_cluster_cmd(6, argv, len);
		bool got = rep && rep->type == REDIS_REPLY_STATUS;
		ph_redis_reply_free(rep);
		if (rep == NULL) {
			store_down = true;
			errno = EAGAIN;
			return -1;
		}
		if (got)
			break;
		if (ph_now_us() > until) {
			/* held by another host for longer than a command may take */
			errno = EBUSY;
			return -1;
		}
		nanosleep(&(struct timespec){0, LOCK_STEP_MS * 1000000L}, NULL);
	}
	lk.held = true;
	return PH_TASK_LOCK_REDIS;
}

/* DEL the lock only when it is still ours (it may have expired and been
 * taken by another). */
static const char unlock_script[] =
	"if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

void
ph_task_redis_unlock(void)
{
	const char *argv[5] = {"EVAL", unlock_script, "1", lk.key, lk.token};
	size_t len[5] = {4, sizeof unlock_script - 1, 1, strlen(lk.key), strlen(lk.token)};
	if (!lk.held)
		return;
	lk.held = false;
	/* a lock left behind expires after cluster.lock_ms */
	ph_redis_reply_free(ph_cluster_cmd(5, argv, len));
}
#else
int
ph_task_redis_lock(const char *id)
{
	(void)id;
	errno = EAGAIN;
	return -1;
}

void
ph_task_redis_unlock(void)
{
}
#endif
