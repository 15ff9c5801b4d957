/* ph_oauth.h: auth.mode oauth, Phantom as an OAuth 2.1 resource server
 * (docs/auth.md "OAuth access tokens"): the auth.oauth section, the check of
 * a request's access token (a JWT verified with the authorization server's
 * keys, or an opaque token through RFC 7662 introspection), and the keys'
 * life in the prefork model. ph_auth.c calls it; the master drives the
 * scheduled key fetches (ph_oauth_tick). */
#ifndef PH_OAUTH_H
#define PH_OAUTH_H
#include "first.h"
#include "ph_config.h"
#include "ph_err.h"
#include "ph_yread.h"
#include <json-c/json.h>
#include <sys/types.h>

struct ph_oauth_conf;
struct ph_access;

/* What a verified token grants: borrowed from the worker's token cache,
 * valid until the next check. */
struct ph_oauth_grant {
	const char *principal;
	struct json_object *scopes;  /* array of the granted scopes, implications added */
	struct json_object *assigns; /* object of the assigns_claims it has (maybe empty) */
	const struct ph_access *access; /* the scope_allow lists it gets, NULL: none */
	int retry_after; /* PH_E_BUSY: seconds for Retry-After (0: none) */
	bool cached;     /* the answer was remembered (no signature, no introspection) */
};

/* auth.oauth: o read through its rows, auth the auth section's node (for
 * lines), dir the configuration's directory, resource the RFC 9728
 * document's resource (the default audience; NULL when none). Problems go
 * to s. Returns the settings (caller frees with ph_oauth_conf_free) or NULL
 * after a report; a build without libcrypto and libcurl always reports. */
struct ph_oauth_conf *ph_oauth_conf_parse(struct ph_ysink *s, const struct ph_oauth_opts *o,
					  const struct ph_ynode *auth, const char *dir, const char *resource);
void ph_oauth_conf_free(struct ph_oauth_conf *c);

/* The scopes of auth.oauth for scopes_supported (required scopes, those of
 * scope_implies; never offline_access), as a new array; the allow-lists'
 * and items' are added by ph_auth_metadata_scopes. */
struct json_object *ph_oauth_scopes_supported(const struct ph_oauth_conf *c);
/* The issuer (borrowed). */
const char *ph_oauth_issuer(const struct ph_oauth_conf *c);
/* The scopes every request needs, space-separated (borrowed; "" when none). */
const char *ph_oauth_required(const struct ph_oauth_conf *c);

/* Checks the access token tok (n bytes, borrowed) of a request. Returns
 * PH_OK with *g, PH_E_UNAUTHORIZED (an invalid token: why says what is
 * wrong, for the log, never the token), PH_E_FORBIDDEN (a valid token
 * without the required scopes) or PH_E_BUSY (no key yet and the
 * authorization server cannot be reached: why is the log line). */
enum ph_err ph_oauth_check(struct ph_oauth_conf *c, const char *tok, size_t n, struct ph_oauth_grant *g,
			   const char **why);

/* True when scopes (an array) grants every scope of need (n entries). */
bool ph_oauth_has_scopes(struct json_object *scopes, char *const *need, size_t n);

/* ---- the keys in the prefork model ---- */
/* Called by the master before it forks workers: from now on the master
 * fetches the keys on schedule and when a worker asks (ph_oauth_tick);
 * workers never fetch. */
void ph_oauth_master_mode(void);
/* The master's tick: reads the key file of the configuration c (NULL: no
 * oauth) as a worker does, so that the workers it forks next start with
 * the keys parsed; when the key cache is due, a child process fetches it
 * (one at a time). Returns the
 * time (µs, ph_now_us) by which it wants to be called again. */
int64_t ph_oauth_tick(struct ph_oauth_conf *c, int64_t now);
/* The master reaped pid: true when it was the fetching child. */
bool ph_oauth_reaped(pid_t pid);
/* True while the master's fetching child runs (the master waits for it
 * before it exits: every process it starts is reaped). */
bool ph_oauth_fetching(void);
#endif
