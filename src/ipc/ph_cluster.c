/* ph_cluster.c: the cluster section, this process's connection to Redis,
 * key names and sealing (ph_cluster.h). The lease and the shared counters
 * are in ph_cluster_ops.c. */
#include "first.h"
#include "ph_cluster.h"
#include "ph_json.h"
#include "ph_log.h"
#include "ph_sections.h"
#include "ph_shared.h"
#include "ph_state.h"
#include "ph_util.h"
#include "ph_yread.h"
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef PH_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#define MAX_PASSWORD 4096
#define BOX_VERSION 1
#define NONCE_LEN crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define MAC_LEN crypto_aead_xchacha20poly1305_ietf_ABYTES
#define NAME_HASH 16 /* bytes of a name's keyed hash in its key (32 hex digits) */

/* ---- the section ---------------------------------------------------------- */

static void
conf_free(struct ph_cluster_conf *cc)
{
	if (cc == NULL)
		return;
	free(cc->host);
	free(cc->prefix);
	if (cc->password) {
		sodium_memzero(cc->password, strlen(cc->password));
		free(cc->password);
	}
	free(cc);
}

void
ph_cluster_conf_free(struct ph_config *c)
{
	conf_free(c->cluster);
	c->cluster = NULL;
}

/* The password of cluster.password_file (trailing newlines dropped), or
 * NULL after a problem. */
static char *
read_password(struct ph_conf_ctx *x, const struct ph_ynode *n, const char *path)
{
	char *full = ph_path_join(x->c->dir, path), *buf = NULL;
	const struct ph_ynode *k = ph_yaml_get(n, "password_file");
	size_t len = 0;
	if (ph_read_file(full, MAX_PASSWORD, &buf, &len) != 0) {
		ph_conf_problem(x->probs, x->file, k ? k->line : n->line,
				"cluster.password_file: cannot read %s: %s", full, ph_strerror(errno));
		free(full);
		return NULL;
	}
	free(full);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	if (len == 0 || memchr(buf, '\0', len) != NULL) {
		ph_conf_problem(x->probs, x->file, k ? k->line : n->line, "cluster.password_file: the "
				"password is empty or holds a NUL byte");
		sodium_memzero(buf, len);
		free(buf);
		return NULL;
	}
	return buf;
}

/* The system's host name, or "phantom" when it has none. */
static char *
system_host(void)
{
	char name[256];
	if (gethostname(name, sizeof name) != 0 || name[0] == '\0')
		return ph_xstrdup("phantom");
	name[sizeof name - 1] = '\0';
	return ph_xstrdup(name);
}

int
ph_cluster_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_cluster_opts *o = x->opts;
	struct ph_cluster_conf *cc;
	const struct ph_ynode *r;
	char err[300];
	(void)key;
#ifndef PH_HAVE_HIREDIS
	ph_conf_problem(x->probs, x->file, n->line, "cluster: this phantom-fcgi was built without "
			"hiredis (configure found no libhiredis-dev: install it and build again, or remove "
			"the cluster section to run as one host)");
	return -1;
#endif
	if (o == NULL) {
		ph_conf_problem(x->probs, x->file, n->line, "cluster: expected a mapping");
		return -1;
	}
	if (x->probs->n != x->before)
		return -1; /* a key did not fit its row */
	r = ph_yaml_get(n, "redis");
	if (o->redis == NULL) {
		ph_conf_problem(x->probs, x->file, n->line, "cluster.redis: missing (redis://HOST:PORT/DB "
				"or unix:PATH: the one Redis all hosts share)");
		return -1;
	}
	cc = ph_xcalloc(1, sizeof *cc);
	if (ph_redis_addr_parse(o->redis, &cc->addr, err, sizeof err) != 0) {
		ph_conf_problem(x->probs, x->file, r ? r->line : n->line, "cluster.redis: %s", err);
		conf_free(cc);
		return -1;
	}
	ph_redis_addr_name(&cc->addr, cc->addr_name, sizeof cc->addr_name);
	if (o->password_file && (cc->password = read_password(x, n, o->password_file)) == NULL) {
		conf_free(cc);
		return -1;
	}
	cc->host = o->host && o->host[0] ? ph_xstrdup(o->host) : system_host();
	cc->prefix = ph_xstrdup(o->prefix ? o->prefix : "");
	cc->timeout_ms = o->timeout_ms;
	cc->lease_ms = o->lease_ms;
	cc->backoff_max_ms = o->backoff_max_ms;
	cc->lock_ms = o->lock_ms;
	ph_cluster_conf_free(x->c);
	x->c->cluster = cc;
	return 0;
}

void
ph_cluster_conf_check(struct ph_config *c, struct ph_conf_problems *probs, const char *name)
{
	const struct ph_cluster_conf *cc = c->cluster;
	if (cc == NULL)
		return;
	if (c->request_state == NULL || c->request_state->ephemeral)
		ph_conf_problem(probs, name, 0, "cluster: the hosts seal what they share with "
				"request_state's key: set request_state.secret_file or secret_env, the same "
				"secret and salt on every host");
	if (cc->lease_ms < 3 * cc->timeout_ms)
		ph_conf_problem(probs, name, 0, "cluster.lease_ms (%lld) must be at least three times "
				"cluster.timeout_ms (%lld): a lease renewed every third of it must not lapse "
				"while one renewal waits", cc->lease_ms, cc->timeout_ms);
}

/* ---- this process's cluster --------------------------------------------------- */

static struct {
	struct ph_cluster_conf *cc; /* a copy: the configuration may be freed by a reload */
	unsigned char seal[1 + PH_STATE_MAX_KEYS][32]; /* current, then previous keys */
	size_t nseal;
	unsigned char names[32];
	struct ph_redis *r;
	pid_t pid; /* the process r was made in */
	bool down; /* the last command failed for want of Redis */
} cl;

/* key = BLAKE2b-256(key = request_state's key, label): a key for each use,
 * none of which opens a requestState or a session id. */
static void
subkey(unsigned char out[32], const unsigned char key[32], const char *label)
{
	crypto_generichash(out, 32, (const unsigned char *)label, strlen(label), key, 32);
}

static void
drop_connection(void)
{
	if (cl.r && cl.pid == getpid())
		ph_redis_free(cl.r);
	/* made before a fork: the parent's; this process only forgets it */
	cl.r = NULL;
}

static bool
same_endpoint(const struct ph_cluster_conf *a, const struct ph_cluster_conf *b)
{
	return a && b && strcmp(a->addr_name, b->addr_name) == 0 &&
	       ((a->password == NULL && b->password == NULL) ||
		(a->password && b->password && strcmp(a->password, b->password) == 0)) &&
	       a->timeout_ms == b->timeout_ms;
}

static struct ph_cluster_conf *
conf_copy(const struct ph_cluster_conf *s)
{
	struct ph_cluster_conf *d = ph_xmalloc(sizeof *d);
	*d = *s;
	d->host = ph_xstrdup(s->host);
	d->prefix = ph_xstrdup(s->prefix);
	d->password = s->password ? ph_xstrdup(s->password) : NULL;
	return d;
}

void
ph_cluster_configure(const struct ph_config *c)
{
	const struct ph_state_conf *sc = c->request_state;
	if (!same_endpoint(cl.cc, c->cluster))
		drop_connection();
	conf_free(cl.cc);
	cl.cc = NULL;
	sodium_memzero(cl.seal, sizeof cl.seal);
	sodium_memzero(cl.names, sizeof cl.names);
	cl.nseal = 0;
	if (c->cluster == NULL || sc == NULL)
		return;
	cl.cc = conf_copy(c->cluster);
	subkey(cl.seal[0], sc->key, "phantom cluster seal v1");
	for (size_t i = 0; i < sc->nprev; i++)
		subkey(cl.seal[i + 1], sc->prev[i], "phantom cluster seal v1");
	cl.nseal = 1 + sc->nprev;
	/* names hash under the current key only: a rotated secret starts a
	 * new set of keys (phantom.yaml(5) says so) */
	subkey(cl.names, sc->key, "phantom cluster names v1");
}

bool
ph_cluster_on(void)
{
	return cl.cc != NULL;
}

const char *
ph_cluster_host(void)
{
	return cl.cc ? cl.cc->host : "";
}

const struct ph_cluster_conf *
ph_cluster_conf(void)
{
	return cl.cc;
}

bool
ph_cluster_down(void)
{
	return cl.down;
}

/* Redis failed (why): no process of this host tries before the backoff;
 * the first to see the change logs it. */
static void
failed(const char *why)
{
	drop_connection();
	cl.down = true;
	ph_shared_cluster_failed(cl.cc->backoff_max_ms);
	if (ph_shared_cluster_state(PH_SHARED_CLUSTER_DOWN))
		ph_log("error", "cluster: Redis at %s is unreachable (%s): what needs it fails at once "
		       "(tasks -32603; rate and auth failure limits count on this host) and it is tried "
		       "again with backoff", cl.cc->addr_name, why);
}

static void
succeeded(void)
{
	cl.down = false;
	if (ph_shared_cluster_retry_at() != 0)
		ph_shared_cluster_ok();
	if (ph_shared_cluster_state(PH_SHARED_CLUSTER_UP))
		ph_log("notice", "cluster: Redis at %s is reachable; host %s shares tasks and counters "
		       "through it", cl.cc->addr_name, cl.cc->host);
}

/* A new connection into cl.r, unless the host is in its backoff. Returns
 * 0, or -1 with errno EAGAIN (the failure recorded). */
static int
connect_now(char *err, size_t n)
{
	int64_t at = ph_shared_cluster_retry_at();
	if (at != 0 && ph_now_us() < at) {
		cl.down = true;
		errno = EAGAIN;
		return -1;
	}
	if ((cl.r = ph_redis_connect(&cl.cc->addr, cl.cc->password, cl.cc->timeout_ms, err, n)) == NULL) {
		failed(err);
		errno = EAGAIN;
		return -1;
	}
	cl.pid = getpid();
	return 0;
}

struct redisReply *
ph_cluster_cmd(int argc, const char **argv, const size_t *len)
{
	char err[300];
	struct redisReply *rep;
	if (cl.cc == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (cl.r && cl.pid != getpid())
		drop_connection();
	if (cl.r == NULL && connect_now(err, sizeof err) != 0)
		return NULL;
	if ((rep = ph_redis_cmd(cl.r, argc, argv, len, err, sizeof err)) == NULL && errno != ETIMEDOUT) {
		/* a connection kept from before: Redis may have restarted since
		 * (the command is tried once on a new one; never after a timeout,
		 * so no command waits longer than timeout_ms twice) */
		drop_connection();
		if (connect_now(err, sizeof err) != 0)
			return NULL;
		rep = ph_redis_cmd(cl.r, argc, argv, len, err, sizeof err);
	}
	if (rep == NULL) {
		failed(err);
		errno = EAGAIN;
		return NULL;
	}
	succeeded();
	return rep;
}

/* ---- keys and sealing --------------------------------------------------------- */

void
ph_cluster_key(const char *kind, const void *name, size_t len, char out[PH_CLUSTER_KEY_MAX])
{
	unsigned char h[NAME_HASH];
	char hex[2 * NAME_HASH + 1];
	crypto_generichash_state st;
	crypto_generichash_init(&st, cl.names, sizeof cl.names, sizeof h);
	/* the kind and a 0 byte first: a name of one kind never hashes as another's */
	crypto_generichash_update(&st, (const unsigned char *)kind, strlen(kind) + 1);
	crypto_generichash_update(&st, name, len);
	crypto_generichash_final(&st, h, sizeof h);
	sodium_bin2hex(hex, sizeof hex, h, sizeof h);
	snprintf(out, PH_CLUSTER_KEY_MAX, "%.64s%.2s:%s", cl.cc ? cl.cc->prefix : "", kind, hex);
}

/* The associated data of key's value: "phantom cluster v1 " and the key. */
static void
value_ad(const char *key, char *ad, size_t n)
{
	snprintf(ad, n, "phantom cluster v1 %s", key);
}

unsigned char *
ph_cluster_seal(const char *key, const void *plain, size_t plen, size_t *blen)
{
	char ad[PH_CLUSTER_KEY_MAX + 32];
	unsigned char *box;
	*blen = 1 + NONCE_LEN + plen + MAC_LEN;
	box = ph_xmalloc(*blen);
	value_ad(key, ad, sizeof ad);
	box[0] = BOX_VERSION;
	randombytes_buf(box + 1, NONCE_LEN);
	crypto_aead_xchacha20poly1305_ietf_encrypt(box + 1 + NONCE_LEN, NULL, plain, plen,
						   (const unsigned char *)ad, strlen(ad), NULL, box + 1,
						   cl.seal[0]);
	return box;
}

char *
ph_cluster_open(const char *key, const void *box_, size_t blen, size_t *plen)
{
	const unsigned char *box = box_;
	char ad[PH_CLUSTER_KEY_MAX + 32];
	unsigned long long got = 0;
	unsigned char *plain;
	bool opened = false;
	if (blen < 1 + NONCE_LEN + MAC_LEN || box[0] != BOX_VERSION)
		return NULL;
	value_ad(key, ad, sizeof ad);
	plain = ph_xmalloc(blen - 1 - NONCE_LEN - MAC_LEN + 1);
	for (size_t i = 0; !opened && i < cl.nseal; i++)
		opened = crypto_aead_xchacha20poly1305_ietf_decrypt(
				 plain, &got, NULL, box + 1 + NONCE_LEN, blen - 1 - NONCE_LEN,
				 (const unsigned char *)ad, strlen(ad), box + 1, cl.seal[i]) == 0;
	if (!opened) {
		free(plain);
		return NULL;
	}
	plain[got] = '\0';
	*plen = (size_t)got;
	return (char *)plain;
}

struct json_object *
ph_cluster_open_json(const char *key, const void *box, size_t blen, int depth)
{
	size_t plen;
	char *plain = ph_cluster_open(key, box, blen, &plen);
	struct json_object *doc = NULL;
	if (plain == NULL)
		return NULL;
	if (!ph_json_parse(plain, plen, depth, &doc) || !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		doc = NULL;
	}
	sodium_memzero(plain, plen);
	free(plain);
	return doc;
}

#ifdef PH_HAVE_HIREDIS
struct json_object *
ph_cluster_get_json(const char *key, int depth, bool *down)
{
	const char *argv[2] = {"GET", key};
	size_t len[2] = {3, strlen(key)};
	struct redisReply *rep = ph_cluster_cmd(2, argv, len);
	struct json_object *doc = NULL;
	*down = rep == NULL;
	if (rep && rep->type == REDIS_REPLY_STRING)
		doc = ph_cluster_open_json(key, rep->str, rep->len, depth);
	else if (rep && rep->type == REDIS_REPLY_ERROR)
		ph_log("error", "cluster: GET refused: %.200s", rep->str);
	ph_redis_reply_free(rep);
	return doc;
}

int
ph_cluster_put_json(const char *key, struct json_object *doc, long long px_ms)
{
	size_t plen, blen;
	const char *plain = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &plen);
	unsigned char *box = ph_cluster_seal(key, plain, plen, &blen);
	char px[24];
	const char *argv[5] = {"SET", key, (const char *)box, "PX", px};
	size_t len[5] = {3, strlen(key), blen, 2, 0};
	struct redisReply *rep;
	int rc = -1;
	len[4] = (size_t)snprintf(px, sizeof px, "%lld", px_ms > 0 ? px_ms : 1);
	rep = ph_cluster_cmd(px_ms > 0 ? 5 : 3, argv, len);
	free(box);
	if (rep && rep->type == REDIS_REPLY_STATUS)
		rc = 0;
	else if (rep)
		ph_log("error", "cluster: SET refused: %.200s", rep->type == REDIS_REPLY_ERROR ? rep->str : "?");
	ph_redis_reply_free(rep);
	if (rc != 0)
		errno = EAGAIN;
	return rc;
}

int
ph_cluster_del(const char *key)
{
	const char *argv[2] = {"DEL", key};
	size_t len[2] = {3, strlen(key)};
	struct redisReply *rep = ph_cluster_cmd(2, argv, len);
	int rc = rep && rep->type == REDIS_REPLY_INTEGER ? 0 : -1;
	ph_redis_reply_free(rep);
	if (rc != 0)
		errno = EAGAIN;
	return rc;
}
#else
struct json_object *
ph_cluster_get_json(const char *key, int depth, bool *down)
{
	(void)key, (void)depth;
	*down = true;
	return NULL;
}

int
ph_cluster_put_json(const char *key, struct json_object *doc, long long px_ms)
{
	(void)key, (void)doc, (void)px_ms;
	errno = EAGAIN;
	return -1;
}

int
ph_cluster_del(const char *key)
{
	(void)key;
	errno = EAGAIN;
	return -1;
}
#endif
