/* ph_oauth_keys.h: the authorization server's keys in the prefork model, and
 * their fetches and the introspection of opaque tokens (through ph_http.h).
 * Internal to ph_oauth.c; ph_oauth.c's head comment says who fetches when. */
#ifndef PH_OAUTH_KEYS_H
#define PH_OAUTH_KEYS_H
#include "first.h"
#include "ph_config.h"
#include "ph_jwt.h"
#include "ph_yread.h"
#include <json-c/json.h>
#include <sys/types.h>

struct ph_oauth_keys {
	char *issuer, *jwks_uri;
	char *path;      /* the key file every worker reads: jwks_file or the cache file */
	char *lock_path; /* the cache's lock and last-attempt stamp; NULL with jwks_file */
	char *want_path; /* a worker's request for a fetch, to the master */
	char *wait_path; /* held by the one process waiting for min_refresh_s to end */
	char *cache_dir;
	char *ca_file; /* auth.oauth.ca_file, or NULL: the system's CA certificates */
	long long refresh_s, min_refresh_s, fetch_timeout_ms, max_fetch, wait_ms;
	/* per process */
	struct ph_jwks set;
	bool loaded;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int64_t checked_us;
	unsigned generation; /* bumped each time another key set is loaded */
	int retry_s;         /* PH_KEYS_LATER: the seconds to say in Retry-After */
	const char *last_error;
	char errbuf[320];
};

/* The keys' settings of auth.oauth (issuer, jwks_uri, jwks_file, cache_dir,
 * refresh_s, min_refresh_s, fetch_timeout_ms, max_fetch_bytes, ca_file)
 * into k;
 * problems go to s (lines of on, the auth.oauth node, may be NULL). A
 * jwks_file is read once here, so -t reports a bad one; with
 * s->probs->host (-t), a cache_dir that is not Phantom's own or that this
 * user could not create is a problem too (it is not created). */
void ph_oauth_keys_parse(struct ph_ysink *s, struct ph_oauth_keys *k, const struct ph_oauth_opts *o,
			 const struct ph_ynode *on, const char *dir);
void ph_oauth_keys_free(struct ph_oauth_keys *k);

/* The key set this process has (borrowed until the next call), re-read when
 * the file changed; without a master also fetched first when there is none
 * yet or it is stale (subject to min_refresh_s for the host). NULL when
 * there is no key set at all; k->last_error then says why. now: seconds. */
const struct ph_jwks *ph_oauth_keys_get(struct ph_oauth_keys *k, long long now);

/* Reads the key file again now (not a second later): true when it held
 * another key set, which may have the kid a token named. */
bool ph_oauth_keys_reread(struct ph_oauth_keys *k);

/* A token named a kid the keys lack: asks for a fetch (of the master, or
 * makes it without one) and waits at most refresh_wait_ms for it. When a
 * fetch ended within min_refresh_s, a token issued (issued: its iat in
 * seconds, 0 when it has none) after that fetch started, give or take
 * skew_s, may be of a key published since: it waits for the interval to
 * end when that fits in refresh_wait_ms, then for a fetch; else it is told
 * to come back (PH_KEYS_LATER, k->retry_s the seconds left). A token
 * issued before that fetch names a kid the authorization server did not
 * publish then, and is unknown at once. PH_KEYS_AGAIN: the keys were
 * re-read: verify again, a kid still missing is unknown. PH_KEYS_WAIT:
 * the fetch has not ended yet. */
enum ph_keys_next { PH_KEYS_AGAIN, PH_KEYS_WAIT, PH_KEYS_LATER };
enum ph_keys_next ph_oauth_keys_unknown(struct ph_oauth_keys *k, long long issued, long long skew_s);

/* An https URL, or http to a loopback address (tests, a local AS). */
bool ph_oauth_url_ok(const char *url);

/* RFC 7662: POSTs token (n bytes) to endpoint with the client's
 * credentials (HTTP Basic). Returns 0 with the answer object in *ans
 * (caller puts), or -1 with why (the endpoint could not be asked). */
int ph_oauth_introspect(const struct ph_oauth_keys *k, const char *endpoint, const char *client,
			const char *secret, const char *tok, size_t n, struct json_object **ans,
			const char **why);

void ph_oauth_keys_master_mode(void);
int64_t ph_oauth_keys_tick(struct ph_oauth_keys *k, int64_t now);
bool ph_oauth_keys_reaped(pid_t pid);
bool ph_oauth_keys_fetching(void);
#endif
