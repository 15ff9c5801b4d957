/* ph_task.c: the task store (ph_task.h). */
#include "first.h"
#include "ph_task.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A record is small: the exec input and the result are the big parts,
 * each bounded by the limits of the call (tasks.max_result). */
#define RECORD_MAX (64u << 20)

void
ph_task_id_new(const char *host, char out[PH_TASK_ID_MAX])
{
	unsigned char rnd[16];
	char hex[sizeof rnd * 2 + 1];
	randombytes_buf(rnd, sizeof rnd);
	sodium_bin2hex(hex, sizeof hex, rnd, sizeof rnd);
	if (host && *host)
		snprintf(out, PH_TASK_ID_MAX, "%.32s.%s", host, hex);
	else
		snprintf(out, PH_TASK_ID_MAX, "%s", hex);
}

static bool
host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

bool
ph_task_id_ok(const char *id)
{
	const char *dot = id ? strchr(id, '.') : NULL, *hex = dot ? dot + 1 : id;
	if (id == NULL)
		return false;
	if (dot) {
		if (dot == id || dot - id > 32)
			return false;
		for (const char *p = id; p < dot; p++)
			if (!host_char(*p))
				return false;
	}
	if (strlen(hex) != 32)
		return false;
	for (const char *p = hex; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

void
ph_task_id_host(const char *id, char *out, size_t n)
{
	const char *dot = strchr(id, '.');
	size_t len = dot ? (size_t)(dot - id) : 0;
	snprintf(out, n, "%.*s", (int)len, id);
}

int
ph_task_dir_ready(const char *dir, const char **why)
{
	struct stat st;
	*why = NULL;
	if (ph_cluster_on())
		return 0; /* the records are in Redis */
	if ((mkdir(dir, 0700) != 0 && errno != EEXIST) || lstat(dir, &st) != 0) {
		*why = strerror(errno);
		return -1;
	}
	/* records carry owners, principals and inputs a task runs with:
	 * another user who could write or replace them could run a tool as
	 * anyone, or hold the lock and stop every worker */
	if (!S_ISDIR(st.st_mode))
		*why = "not a directory (a symbolic link is not followed)";
	else if (st.st_uid != geteuid())
		*why = "it belongs to another user; give a directory of Phantom's own";
	else if ((st.st_mode & 022) != 0)
		*why = "it is writable by its group or by every user; give a directory of Phantom's own, mode 0700";
	return *why ? -1 : 0;
}

static char *
record_path(const char *dir, const char *id)
{
	return ph_xasprintf("%s/%s.json", dir, id);
}

struct json_object *
ph_task_load(const char *dir, const char *id)
{
	char *path, *text = NULL;
	size_t len;
	struct json_object *rec = NULL;
	if (!ph_task_id_ok(id))
		return NULL;
	if (ph_cluster_on())
		return ph_task_redis_load(id);
	path = record_path(dir, id);
	if (ph_read_file_flags(path, O_NOFOLLOW, RECORD_MAX, &text, &len) == 0 &&
	    (!ph_json_parse(text, len, PH_JSON_DEPTH_DOCUMENT * 2, &rec) ||
	     !json_object_is_type(rec, json_type_object))) {
		json_object_put(rec);
		rec = NULL;
	}
	free(text);
	free(path);
	return rec;
}

int
ph_task_save(const char *dir, struct json_object *rec)
{
	const char *id = ph_jstr(rec, "taskId");
	size_t len;
	const char *text;
	char *path, *tmp;
	int fd, rc = -1, e;
	if (!ph_task_id_ok(id)) {
		errno = EINVAL;
		return -1;
	}
	if (ph_cluster_on())
		return ph_task_redis_save(rec, ph_task_ended_ms(rec));
	text = json_object_to_json_string_length(rec, JSON_C_TO_STRING_PLAIN, &len);
	path = record_path(dir, id);
	tmp = ph_xasprintf("%s/.%s.%d.tmp", dir, id, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		rc = ph_write_all(fd, text, len);
		e = errno;
		if (close(fd) != 0 && rc == 0) {
			rc = -1;
			e = errno;
		}
		if (rc == 0 && rename(tmp, path) != 0) {
			rc = -1;
			e = errno;
		}
		if (rc != 0)
			unlink(tmp);
		errno = e;
	}
	free(tmp);
	free(path);
	return rc;
}

int
ph_task_remove(const char *dir, const char *id)
{
	char *path;
	int rc;
	if (!ph_task_id_ok(id)) {
		errno = EINVAL;
		return -1;
	}
	if (ph_cluster_on())
		return ph_task_redis_remove(id);
	path = record_path(dir, id);
	rc = unlink(path);
	free(path);
	return rc;
}

int
ph_task_lock(const char *dir, const char *id)
{
	char *path;
	int fd;
	if (ph_cluster_on())
		return ph_task_redis_lock(id);
	path = ph_xasprintf("%s/.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	free(path);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
	}
	return fd;
}

void
ph_task_unlock(int fd)
{
	if (fd == PH_TASK_LOCK_REDIS)
		ph_task_redis_unlock();
	else if (fd >= 0)
		close(fd); /* releases the lock */
}

bool
ph_task_status_final(const char *status)
{
	return status && (strcmp(status, "completed") == 0 || strcmp(status, "failed") == 0 ||
			  strcmp(status, "cancelled") == 0);
}

/* The wall clock as ISO 8601 with milliseconds, UTC. */
static struct json_object *
iso_now(void)
{
	int64_t ms = ph_wall_ms();
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[80];
	gmtime_r(&s, &tm);
	snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	return json_object_new_string(buf);
}

struct json_object *
ph_task_record_new(const char *id, const char *principal, long long ttl_ms, long long poll_ms)
{
	struct json_object *rec = json_object_new_object();
	json_object_object_add(rec, "taskId", json_object_new_string(id));
	json_object_object_add(rec, "status", json_object_new_string("working"));
	json_object_object_add(rec, "createdAt", iso_now());
	json_object_object_add(rec, "lastUpdatedAt", iso_now());
	json_object_object_add(rec, "ttlMs", json_object_new_int64(ttl_ms));
	if (poll_ms > 0)
		json_object_object_add(rec, "pollIntervalMs", json_object_new_int64(poll_ms));
	json_object_object_add(rec, "_owner", principal ? json_object_new_string(principal) : NULL);
	json_object_object_add(rec, "_created_ms", json_object_new_int64(ph_wall_ms()));
	if (ph_cluster_on()) /* whose hub runs it: the others fail it when that host's lease lapses */
		json_object_object_add(rec, "_host", json_object_new_string(ph_cluster_host()));
	return rec;
}

void
ph_task_set_status(struct json_object *rec, const char *status, const char *message)
{
	json_object_object_add(rec, "status", json_object_new_string(status));
	json_object_object_add(rec, "lastUpdatedAt", iso_now());
	if (message)
		json_object_object_add(rec, "statusMessage", json_object_new_string(message));
	else
		json_object_object_del(rec, "statusMessage");
	if (strcmp(status, "input_required") != 0)
		json_object_object_del(rec, "inputRequests");
	if (ph_task_status_final(status))
		json_object_object_add(rec, "_ended_ms", json_object_new_int64(ph_wall_ms()));
}

int64_t
ph_task_ended_ms(struct json_object *rec)
{
	struct json_object *e = ph_jget(rec, "_ended_ms");
	return e && json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : 0;
}

/* Hashes s (NULL as the empty principal, apart from any name) for a
 * comparison whose time does not depend on where the two differ. */
static void
owner_hash(const char *s, unsigned char out[crypto_generichash_BYTES])
{
	static const unsigned char anon = 0;
	if (s)
		crypto_generichash(out, crypto_generichash_BYTES, (const unsigned char *)s, strlen(s) + 1,
				   NULL, 0);
	else
		crypto_generichash(out, crypto_generichash_BYTES, &anon, 0, NULL, 0);
}

bool
ph_task_owned(struct json_object *rec, const char *principal)
{
	unsigned char a[crypto_generichash_BYTES], b[crypto_generichash_BYTES];
	owner_hash(ph_jstr(rec, "_owner"), a);
	owner_hash(principal, b);
	return sodium_memcmp(a, b, sizeof a) == 0;
}

struct json_object *
ph_task_view(struct json_object *rec)
{
	struct json_object *v = json_object_new_object();
	json_object_object_foreach(rec, k, val) {
		if (k[0] != '_')
			json_object_object_add(v, k, json_object_get(val));
	}
	return v;
}
