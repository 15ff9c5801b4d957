/* ph_cluster.h: several hosts sharing state through one Redis (cluster:,
 * DESIGN.md §2 and §4e). This process's connection to it, opaque key
 * names, sealed values, the host's lease, and the shared counters.
 *
 * Keys: cluster.prefix, a kind, ':' and 32 hex digits of a keyed BLAKE2b
 * of the name (a task id, a host name, a rate key): nothing in a key says
 * whose it is or what it names. Values: XChaCha20-Poly1305 under a key
 * derived from request_state's (the same on every host), with the kind and
 * the key's name as associated data, so a value copied under another key
 * does not open. Nothing here runs unless cluster: is configured and a
 * caller asks: a stateless call never reaches Redis.
 *
 * Connection: one per process, made at its first command (after a fork,
 * anew), each command bounded by cluster.timeout_ms. After a failure no
 * process of the host tries again before a backoff (100 ms doubling to
 * cluster.backoff_max_ms) and every command fails at once meanwhile; each
 * change between reachable and unreachable is logged once a host. */
#ifndef PH_CLUSTER_H
#define PH_CLUSTER_H
#include "first.h"
#include "ph_config.h"
#include "ph_redis.h"
#include <json-c/json.h>

/* Key kinds (the letters after the prefix). */
#define PH_CK_TASK "t"   /* a task record (ph_task.c) */
#define PH_CK_LOCK "k"   /* the lock of a task record */
#define PH_CK_LEASE "l"  /* a host's lease */
#define PH_CK_RATE "r"   /* a rate bucket (limits.rate, auth.fail_limit) */
/* The longest key: prefix (64), kind (2), ':' and 32 hex digits. */
#define PH_CLUSTER_KEY_MAX 112

struct ph_cluster_conf {
	struct ph_redis_addr addr;
	char addr_name[300];   /* for messages */
	char *host;            /* this host's name */
	char *prefix;
	char *password;        /* NULL: no AUTH; wiped when freed */
	long long timeout_ms, lease_ms, backoff_max_ms, lock_ms;
};

/* Makes this process use c's cluster (none when c->cluster is NULL) from
 * now on: the keys are derived from c->request_state; a connection to
 * another address or with other credentials is dropped. Called where a
 * server is built (start, reload). */
void ph_cluster_configure(const struct ph_config *c);
/* True when a cluster is configured (Redis may still be unreachable). */
bool ph_cluster_on(void);
/* This host's name (cluster.host), "" without a cluster. */
const char *ph_cluster_host(void);
/* The configured values, NULL without a cluster (borrowed). */
const struct ph_cluster_conf *ph_cluster_conf(void);

/* Runs one command (see ph_redis_cmd), connecting first when needed.
 * Returns the reply (caller frees with ph_redis_reply_free), or NULL when
 * Redis is unreachable, in its backoff, or did not answer in time; the
 * failure is then recorded for the whole host. */
struct redisReply *ph_cluster_cmd(int argc, const char **argv, const size_t *len);
/* True when the last command of this process failed for want of Redis. */
bool ph_cluster_down(void);

/* The key of name (len bytes) of kind into out (PH_CLUSTER_KEY_MAX). */
void ph_cluster_key(const char *kind, const void *name, size_t len, char out[PH_CLUSTER_KEY_MAX]);
/* Seals plen bytes of plain for key (its associated data). Returns the
 * box (caller frees) of *blen bytes. */
unsigned char *ph_cluster_seal(const char *key, const void *plain, size_t plen, size_t *blen);
/* Opens a box sealed for key with the current or a previous key. Returns
 * the plaintext, NUL-terminated (caller frees), of *plen bytes, or NULL
 * when the box is short, altered, of another key or another secret. */
char *ph_cluster_open(const char *key, const void *box, size_t blen, size_t *plen) PH_WUR;
/* Opens a box as ph_cluster_open and parses one JSON object of at most
 * depth levels. Returns it (caller puts) or NULL. */
struct json_object *ph_cluster_open_json(const char *key, const void *box, size_t blen, int depth) PH_WUR;

/* GET key and open it as JSON. Returns the object (caller puts), or NULL:
 * then *down says whether Redis failed (true) or the key is missing or
 * does not open (false). */
struct json_object *ph_cluster_get_json(const char *key, int depth, bool *down);
/* SET key to doc (borrowed) sealed, expiring in px_ms (0: never).
 * Returns 0, or -1 when Redis failed or refused (errno EAGAIN). */
int ph_cluster_put_json(const char *key, struct json_object *doc, long long px_ms);
/* DEL key. Returns 0, or -1 (errno EAGAIN). */
int ph_cluster_del(const char *key);

/* One token from the shared bucket of key sized by rc at wall time now_ms
 * (take false: only looks). Returns 0 with *wait_s set (0: allowed, else
 * seconds until a token), or -1 when Redis failed: the caller counts on
 * this host then. */
int ph_cluster_rate(const char *key, const struct ph_rate_conf *rc, int64_t now_ms, bool take,
		    long long *wait_s);
#endif
