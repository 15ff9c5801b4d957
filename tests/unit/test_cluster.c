/* test_cluster.c: the cluster section's checks, the Redis address parser,
 * opaque key names and sealed values (ipc/ph_cluster.c), and the
 * client's behaviour when Redis is not there: it fails at once and waits
 * out its backoff without trying again. */
#include "first.h"
#include "ph_cluster.h"
#include "ph_conf.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "tap.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct ph_config *
load(const char *yaml, const char *dir, struct ph_conf_problems *p)
{
	return ph_conf_load_buf("t.yaml", dir, yaml, strlen(yaml), p);
}

static void
write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	fputs(s, f);
	fclose(f);
}

/* True when one of the problems of p holds needle. */
static bool
said(const struct ph_conf_problems *p, const char *needle)
{
	for (size_t i = 0; i < p->n; i++)
		if (strstr(p->v[i], needle))
			return true;
	return false;
}

static void
addresses(void)
{
	struct ph_redis_addr a;
	char err[300], name[300];
	ok(ph_redis_addr_parse("redis://10.0.0.5:6380/2", &a, err, sizeof err) == 0 &&
	   strcmp(a.host, "10.0.0.5") == 0 && a.port == 6380 && a.db == 2, "redis://HOST:PORT/DB");
	ok(ph_redis_addr_parse("redis://cache", &a, err, sizeof err) == 0 && a.port == 6379 && a.db == 0,
	   "redis://HOST: port 6379, db 0");
	ok(ph_redis_addr_parse("redis://[::1]:7000", &a, err, sizeof err) == 0 && strcmp(a.host, "::1") == 0 &&
	   a.port == 7000, "redis://[IPv6]:PORT");
	ok(ph_redis_addr_parse("unix:/run/redis.sock?db=3", &a, err, sizeof err) == 0 &&
	   strcmp(a.path, "/run/redis.sock") == 0 && a.db == 3, "unix:PATH?db=N");
	ph_redis_addr_name(&a, name, sizeof name);
	is_str(name, "unix:/run/redis.sock", "its name for messages");
	ok(ph_redis_addr_parse("redis://h:0", &a, err, sizeof err) != 0 && strstr(err, "port"), "port 0 refused");
	ok(ph_redis_addr_parse("redis://h:70000", &a, err, sizeof err) != 0, "port 70000 refused");
	ok(ph_redis_addr_parse("redis://h/x", &a, err, sizeof err) != 0 && strstr(err, "database"),
	   "a database that is not a number refused");
	ok(ph_redis_addr_parse("redis://user:pw@h:1", &a, err, sizeof err) != 0 && strstr(err, "password_file") &&
	   !strstr(err, "pw"), "a password in the URL refused, and not repeated");
	ok(ph_redis_addr_parse("rediss://h", &a, err, sizeof err) != 0, "rediss:// refused");
	ok(ph_redis_addr_parse("unix:relative.sock", &a, err, sizeof err) != 0, "a relative unix path refused");
	ok(ph_redis_addr_parse("redis://", &a, err, sizeof err) != 0, "no host refused");
	ok(ph_redis_addr_parse("redis://[::1", &a, err, sizeof err) != 0, "an unclosed [ refused");
}

static void
section(const char *dir)
{
	struct ph_conf_problems p = {0};
	struct ph_config *c;
	char y[1024];
	c = load("cluster: { redis: \"redis://127.0.0.1:6379\" }\n", dir, &p);
#ifndef PH_HAVE_HIREDIS
	ok(c == NULL && said(&p, "built without hiredis"), "without hiredis cluster: is refused, saying why");
	ph_conf_free(c);
	ph_conf_problems_free(&p);
	return;
#endif
	ok(c == NULL && said(&p, "request_state"), "cluster: without request_state's secret is refused");
	ph_conf_problems_free(&p);
	snprintf(y, sizeof y, "request_state: { secret_file: %s/secret }\ncluster: { redis: \"redis://h\", "
		 "timeout_ms: 500, lease_ms: 1000 }\n", dir);
	c = load(y, dir, &p);
	ok(c == NULL && said(&p, "lease_ms"), "a lease shorter than three timeouts is refused");
	ph_conf_problems_free(&p);
	c = load("request_state: { secret_file: secret }\ncluster: { host: x }\n", dir, &p);
	ok(c == NULL && said(&p, "cluster.redis: missing"), "cluster: without redis is refused");
	ph_conf_problems_free(&p);
	c = load("request_state: { secret_file: secret }\ncluster: { redis: \"redis://h\", password_file: nope }\n",
		 dir, &p);
	ok(c == NULL && said(&p, "password_file"), "a password_file that cannot be read is refused");
	ph_conf_problems_free(&p);
	c = load("request_state: { secret_file: secret }\ncluster: { redis: \"redis://h\", prefix: \"p:\", "
		 "password_file: pw, host: alpha }\n", dir, &p);
	ok(c != NULL && c->cluster && strcmp(c->cluster->password, "s3cret-pw") == 0 &&
	   strcmp(c->cluster->host, "alpha") == 0 && c->cluster->timeout_ms == 500 &&
	   c->cluster->lease_ms == 15000, "a good section: password read, host, defaults");
	ph_conf_free(c);
	ph_conf_problems_free(&p);
	c = load("request_state: { secret_file: secret }\ncluster: { redis: \"unix:/x\" }\n", dir, &p);
	ok(c != NULL && c->cluster->host[0] != '\0' && strcmp(c->cluster->prefix, "phantom:") == 0,
	   "host defaults to the system's name, prefix to phantom:");
	ph_conf_free(c);
	ph_conf_problems_free(&p);
}

#ifdef PH_HAVE_HIREDIS
/* A configuration with a cluster at unix:/nonexistent, secret file name. */
static struct ph_config *
cluster_conf(const char *dir, const char *secret, const char *prev)
{
	struct ph_conf_problems p = {0};
	char y[1024];
	struct ph_config *c;
	snprintf(y, sizeof y, "request_state: { secret_file: %s%s%s%s }\ncluster: { redis: \"unix:%s/no.sock\", "
		 "prefix: \"pfx:\", timeout_ms: 100, lease_ms: 1000, backoff_max_ms: 60000 }\n", secret,
		 prev ? ", previous_secret_files: [" : "", prev ? prev : "", prev ? "]" : "", dir);
	c = load(y, dir, &p);
	if (c == NULL)
		for (size_t i = 0; i < p.n; i++)
			printf("# %s\n", p.v[i]);
	ph_conf_problems_free(&p);
	return c;
}

static void
keys_and_seals(const char *dir)
{
	struct ph_config *c = cluster_conf(dir, "secret", NULL), *c2;
	char k1[PH_CLUSTER_KEY_MAX], k2[PH_CLUSTER_KEY_MAX], k3[PH_CLUSTER_KEY_MAX], k4[PH_CLUSTER_KEY_MAX];
	unsigned char *box;
	size_t blen, plen;
	char *plain;
	struct json_object *doc, *got;
	if (c == NULL) {
		ok(0, "the cluster configuration loads");
		return;
	}
	ph_cluster_configure(c);
	ok(ph_cluster_on() && strcmp(ph_cluster_host(), c->cluster->host) == 0, "configured");
	ph_cluster_key(PH_CK_TASK, "alice", 5, k1);
	ph_cluster_key(PH_CK_TASK, "alice", 5, k2);
	ph_cluster_key(PH_CK_RATE, "alice", 5, k3);
	ph_cluster_key(PH_CK_TASK, "alicf", 5, k4);
	is_int(strlen(k1), 4 + 1 + 1 + 32, "a key: prefix, kind, ':' and 32 hex digits");
	ok(strncmp(k1, "pfx:t:", 6) == 0 && strspn(k1 + 6, "0123456789abcdef") == 32, "its form: %s", k1);
	ok(strcmp(k1, k2) == 0, "the same name, the same key");
	ok(strcmp(k1 + 6, k3 + 6) != 0, "another kind, another hash");
	ok(strcmp(k1, k4) != 0, "another name, another key");
	ok(strstr(k1, "alice") == NULL, "the name is not in the key");

	box = ph_cluster_seal(k1, "{\"owner\":\"alice\"}", 17, &blen);
	ok(memmem(box, blen, "alice", 5) == NULL, "the sealed value does not hold the plaintext");
	plain = ph_cluster_open(k1, box, blen, &plen);
	ok(plain && plen == 17 && memcmp(plain, "{\"owner\":\"alice\"}", 17) == 0, "it opens under its key");
	free(plain);
	ok(ph_cluster_open(k4, box, blen, &plen) == NULL, "not under another key (moved values do not open)");
	box[blen - 1] ^= 1;
	ok(ph_cluster_open(k1, box, blen, &plen) == NULL, "an altered value does not open");
	box[blen - 1] ^= 1;
	ok(ph_cluster_open(k1, box, blen - 1, &plen) == NULL, "nor a truncated one");
	ok(ph_cluster_open(k1, box, 10, &plen) == NULL, "nor a short one");
	box[0] = 2;
	ok(ph_cluster_open(k1, box, blen, &plen) == NULL, "nor one of another format");
	box[0] = 1;
	free(box);
	box = ph_cluster_seal(k1, "[1,2]", 5, &blen);
	ok(ph_cluster_open_json(k1, box, blen, 8) == NULL, "a value that is not an object is no JSON document");
	free(box);
	doc = json_tokener_parse("{\"a\":[1,2,{\"b\":\"c\"}]}");
	{
		const char *t = json_object_to_json_string(doc);
		box = ph_cluster_seal(k1, t, strlen(t), &blen);
		got = ph_cluster_open_json(k1, box, blen, 8);
		ok(got && json_object_equal(got, doc), "a JSON document round-trips");
		json_object_put(got);
		ok(ph_cluster_open_json(k1, box, blen, 2) == NULL, "deeper than asked: refused");
	}

	/* another secret: other keys, and its values do not open here; with
	 * the first as a previous secret, they open again */
	c2 = cluster_conf(dir, "secret2", NULL);
	ph_cluster_configure(c2);
	ph_cluster_key(PH_CK_TASK, "alice", 5, k2);
	ok(strcmp(k1, k2) != 0, "another secret, other key names");
	ok(ph_cluster_open(k1, box, blen, &plen) == NULL, "another secret does not open the values");
	ph_conf_free(c2);
	c2 = cluster_conf(dir, "secret2", "secret");
	ph_cluster_configure(c2);
	plain = ph_cluster_open(k1, box, blen, &plen);
	ok(plain != NULL, "a previous secret still opens them");
	free(plain);
	free(box);
	json_object_put(doc);
	ph_conf_free(c2);
	ph_conf_free(c);
}

static void
unreachable(const char *dir)
{
	struct ph_config *c = cluster_conf(dir, "secret", NULL);
	const char *argv[1] = {"PING"};
	size_t len[1] = {4};
	int64_t t0;
	ph_shared_init();
	ph_cluster_configure(c);
	t0 = ph_now_us();
	ok(ph_cluster_cmd(1, argv, len) == NULL && ph_cluster_down(), "no Redis: a command fails");
	ok(ph_shared_cluster_retry_at() > t0, "and the host backs off");
	ok(ph_cluster_cmd(1, argv, len) == NULL, "in the backoff, at once");
	{
		struct ph_rate_conf rc = {10, 1, 0};
		long long wait = -1;
		ok(ph_cluster_rate("k", &rc, 1000, true, &wait) == -1 && wait == -1,
		   "a shared bucket says Redis failed (the caller counts on this host)");
	}
	ph_conf_free(c);
	{
		struct ph_conf_problems p = {0};
		c = load("server: { name: x }\n", dir, &p);
		ph_conf_problems_free(&p);
	}
	ph_cluster_configure(c);
	ok(!ph_cluster_on() && ph_cluster_cmd(1, argv, len) == NULL, "without cluster: nothing is tried");
	ph_conf_free(c);
}
#endif

int
main(void)
{
	char dir[] = "/tmp/phantom-cluster-XXXXXX", path[300];
	if (sodium_init() < 0 || mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof path, "%s/secret", dir);
	write_file(path, "0123456789abcdef0123456789abcdef-first\n");
	snprintf(path, sizeof path, "%s/secret2", dir);
	write_file(path, "0123456789abcdef0123456789abcdef-second\n");
	snprintf(path, sizeof path, "%s/pw", dir);
	write_file(path, "s3cret-pw\n");
	addresses();
	section(dir);
#ifdef PH_HAVE_HIREDIS
	keys_and_seals(dir);
	unreachable(dir);
#endif
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		return 1;
	return tap_done();
}
