/* ph_oauth.c: auth.mode oauth (ph_oauth.h; docs/auth.md "OAuth access
 * tokens").
 *
 * A worker verifies a JWT access token itself (ph_jwt.c) with the
 * authorization server's keys and remembers it by a keyed digest until it
 * expires, so a client pays the signature once per worker. The keys live in
 * one file every worker stats (at most once a second) and re-reads when it
 * changed: auth.oauth.jwks_file as the user keeps it, or a cache file in
 * auth.oauth.cache_dir that is replaced atomically (rename) by whoever
 * fetched the keys:
 *   - with a master, the master starts a child process that fetches them
 *     when the file is older than refresh_s (ph_oauth_tick) or a worker
 *     asked for it; workers never fetch;
 *   - without one (CGI, mod_fcgid, a single process), the worker that finds
 *     the file stale fetches it, holding the lock file's flock;
 *   - a token naming a kid the keys lack asks for a fetch at once: of the
 *     master (a request file and SIGURG; the worker waits for it at most
 *     refresh_wait_ms, then answers 503 with Retry-After: 1), or made by
 *     its own worker.
 * Every fetch, whoever makes it, first takes the lock file (flock, never
 * waiting) and reads the time of the last attempt written in it: at most one
 * attempt per min_refresh_s for the whole host, whatever the number of
 * unknown kids. A failed fetch leaves the last good file in place. A cold
 * start with no key and no reachable issuer answers 503 and logs why.
 *
 * Opaque tokens (not three segments) go to the RFC 7662 introspection
 * endpoint when one is configured; answers are cached like verified JWTs,
 * until exp and at most introspection.cache_s, and an answer of active
 * false for introspection.negative_cache_s. The token is never logged,
 * kept or passed on: only its keyed digest is. */
#include "first.h"
#include "ph_oauth.h"
#include "ph_json.h"
#include "ph_jwt.h"
#include "ph_log.h"
#include "ph_server.h"
#include "ph_util.h"
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef PH_HAVE_OAUTH
#include "ph_oauth_keys.h"

/* Scopes the implications may add to a token's, at most: a bound on a
 * configuration that implies in circles. */
#define IMPLIED_MAX 256
#define SCOPE_MAX 256 /* longest scope name kept */

struct implies {
	char *scope;
	char **implied; /* NULL-terminated */
};

/* A remembered token is known by its SipHash-2-4 with a 128-bit output
 * (libsodium's siphashx24) under a key drawn at each load, never by its
 * bytes. A keyed PRF is what the look-up needs: to be taken for a token
 * remembered, another token would need the same 128 bits under a key that
 * never leaves the worker, and no output of it leaves either. It costs
 * 0.35 us on a 716-byte JWT, where BLAKE2b cost 1.15 us, on every request. */
#define TOKEN_DIGEST_BYTES crypto_shorthash_siphashx24_BYTES
#define TOKEN_KEY_BYTES crypto_shorthash_siphashx24_KEYBYTES

/* One verified token this worker remembers: its keyed digest, until when,
 * and what it grants; or an opaque token the introspection endpoint said
 * is not active (inactive, no grant). */
struct tok_entry {
	unsigned char digest[TOKEN_DIGEST_BYTES];
	long long until;
	bool inactive;
	bool jwt; /* verified with the keys: forgotten when they change */
	char *principal;
	struct json_object *scopes, *assigns;
};

struct ph_oauth_conf {
	struct ph_oauth_keys keys;
	char **audiences;
	size_t naudiences;
	bool aud_slash, typ_at, aud_client_id;
	unsigned algs;
	long long skew, max_token, token_cache;
	char **scope_claims, **assigns_claims, **required;
	size_t nscope_claims, nassigns_claims, nrequired;
	char *required_text; /* space-separated, for the 403 challenge */
	char *principal_claim;
	struct implies *implies;
	size_t nimplies;
	/* introspection */
	char *intro_endpoint, *intro_client, *intro_secret;
	long long intro_cache_s, intro_neg_s;
	/* per worker (each has its copy after fork) */
	struct tok_entry *cache;
	unsigned keys_gen; /* the key set the remembered JWTs were verified with */
	unsigned char cache_key[TOKEN_KEY_BYTES];
};

/* ---- configuration ------------------------------------------------------------ */

/* A list of strings at key of the section (n may be NULL: the default def,
 * NULL-terminated, is copied). Returns the copied list (NULL-terminated,
 * count in *cnt) or NULL after a report. */
static char **
str_list(struct ph_ysink *s, const struct ph_ynode *n, const char *key, const char *const *def, size_t *cnt)
{
	char name[96];
	char **v;
	*cnt = 0;
	if (n == NULL) {
		size_t k = 0;
		while (def && def[k])
			k++;
		v = ph_xcalloc(k + 1, sizeof *v);
		for (size_t i = 0; i < k; i++)
			v[i] = ph_xstrdup(def[i]);
		*cnt = k;
		return v;
	}
	snprintf(name, sizeof name, "auth.oauth.%s", key);
	if (ph_yaml_is_null(n)) {
		*cnt = 0;
		return ph_xcalloc(1, sizeof(char *));
	}
	return ph_yread_strlist(s, n, name, 0, 256, SCOPE_MAX, cnt);
}

/* A scope: 1..SCOPE_MAX printable ASCII bytes other than space, '"' and
 * '\' (RFC 6749 section 3.3 scope-token), so it can stand in a challenge. */
static bool
scope_ok(const char *sc)
{
	size_t n = 0;
	for (; sc[n]; n++)
		if (sc[n] <= 0x20 || sc[n] >= 0x7f || sc[n] == '"' || sc[n] == '\\')
			return false;
	return n > 0 && n <= SCOPE_MAX;
}

static void
check_scopes(struct ph_ysink *s, const struct ph_ynode *n, const char *key, char **v, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		if (!scope_ok(v[i]) || strcmp(v[i], "offline_access") == 0)
			ph_yread_problem(s, n->vals[i]->line, "auth.oauth.%s[%zu]: a scope is printable ASCII "
					 "without spaces, '\"' or '\\', and not offline_access", key, i);
}

static void
parse_algorithms(struct ph_ysink *s, struct ph_oauth_conf *c, const struct ph_ynode *n)
{
	size_t cnt = 0;
	char **v;
	c->algs = (1u << PH_JWT_NALG) - 1;
	if (n == NULL)
		return;
	if ((v = ph_yread_strlist(s, n, "auth.oauth.algorithms", 1, 16, 16, &cnt)) == NULL)
		return;
	c->algs = 0;
	for (size_t i = 0; i < cnt; i++) {
		int a = ph_jwt_alg_parse(v[i]);
		if (a < 0)
			ph_yread_problem(s, n->vals[i]->line, "auth.oauth.algorithms[%zu]: '%s' is not one of RS256, "
					 "PS256, ES256, EdDSA (none and HS* are never accepted)", i, v[i]);
		else
			c->algs |= 1u << a;
	}
	ph_yread_strv_free(v);
}

/* auth.oauth.scope_implies: {scope: [scopes it implies]}. */
static void
parse_implies(struct ph_ysink *s, struct ph_oauth_conf *c, const struct ph_ynode *n)
{
	if (n == NULL || ph_yaml_is_null(n))
		return;
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(s, n->line, "auth.oauth.scope_implies: expected a mapping of scope: [scopes]");
		return;
	}
	c->implies = ph_xcalloc(n->n ? n->n : 1, sizeof *c->implies);
	for (size_t i = 0; i < n->n; i++) {
		char name[SCOPE_MAX + 64];
		size_t cnt = 0;
		char **v;
		snprintf(name, sizeof name, "auth.oauth.scope_implies.%s", n->keys[i]);
		if (!scope_ok(n->keys[i])) {
			ph_yread_problem(s, n->key_lines[i], "auth.oauth.scope_implies: '%s' is not a scope",
					 n->keys[i]);
			continue;
		}
		if ((v = ph_yread_strlist(s, n->vals[i], name, 1, 256, SCOPE_MAX, &cnt)) == NULL)
			continue;
		for (size_t j = 0; j < cnt; j++)
			if (!scope_ok(v[j]))
				ph_yread_problem(s, n->vals[i]->vals[j]->line, "%s[%zu]: not a scope", name, j);
		c->implies[c->nimplies].scope = ph_xstrdup(n->keys[i]);
		c->implies[c->nimplies++].implied = v;
	}
}

/* The client secret of the introspection endpoint: the file's first line. */
static void
parse_introspection(struct ph_ysink *s, struct ph_oauth_conf *c, const struct ph_oauth_opts *o,
		    const struct ph_ynode *on, const char *dir)
{
	const struct ph_ynode *in = on ? ph_yaml_get(on, "introspection") : NULL;
	int line = in ? in->line : 0;
	char *path, *buf = NULL;
	size_t len = 0;
	c->intro_cache_s = o->introspection.cache_s;
	c->intro_neg_s = o->introspection.negative_cache_s;
	if (o->introspection.endpoint == NULL) {
		if (o->introspection.client_id || o->introspection.secret_file)
			ph_yread_problem(s, line, "auth.oauth.introspection: endpoint is required with client_id "
					 "and secret_file");
		return;
	}
	if (!ph_oauth_url_ok(o->introspection.endpoint))
		ph_yread_problem(s, line, "auth.oauth.introspection.endpoint: an https URL (http only to a "
				 "loopback address)");
	if (o->introspection.client_id == NULL || o->introspection.secret_file == NULL) {
		ph_yread_problem(s, line, "auth.oauth.introspection: client_id and secret_file are required");
		return;
	}
	path = ph_path_join(dir, o->introspection.secret_file);
	if (ph_read_file(path, 4096, &buf, &len) != 0) {
		ph_yread_problem(s, line, "auth.oauth.introspection.secret_file: cannot read %s: %s", path,
				 errno == EFBIG ? "larger than 4 KiB" : ph_strerror(errno));
	} else {
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			len--;
		if (len == 0 || memchr(buf, '\0', len) != NULL || memchr(buf, '\n', len) != NULL)
			ph_yread_problem(s, line, "auth.oauth.introspection.secret_file: %s must hold one line", path);
		else
			c->intro_secret = ph_xstrndup(buf, len);
		sodium_memzero(buf, len);
	}
	free(buf);
	free(path);
	c->intro_endpoint = ph_xstrdup(o->introspection.endpoint);
	c->intro_client = ph_xstrdup(o->introspection.client_id);
}

/* The accepted audiences: auth.oauth.audiences, else the RFC 9728
 * resource. */
static void
parse_audiences(struct ph_ysink *s, struct ph_oauth_conf *c, const struct ph_oauth_opts *o,
		const struct ph_ynode *on, const char *resource)
{
	const char *def[] = {resource, NULL};
	c->audiences = str_list(s, o->audiences, "audiences", def, &c->naudiences);
	c->aud_slash = strcmp(o->audience_match, "slash") == 0;
	c->aud_client_id = o->client_id_audience;
	if (c->audiences != NULL && c->naudiences == 0)
		ph_yread_problem(s, on ? on->line : 0, "auth.oauth: no audience: set auth.oauth.audiences or "
				 "the resource of the RFC 9728 document (auth.metadata.document.resource)");
}

static void
parse_claims(struct ph_ysink *s, struct ph_oauth_conf *c, const struct ph_oauth_opts *o)
{
	static const char *const scope_def[] = {"scope", "scp", NULL};
	struct ph_buf b;
	c->scope_claims = str_list(s, o->scope_claims, "scope_claims", scope_def, &c->nscope_claims);
	c->assigns_claims = str_list(s, o->assigns_claims, "assigns_claims", NULL, &c->nassigns_claims);
	c->required = str_list(s, o->required_scopes, "required_scopes", NULL, &c->nrequired);
	if (c->required && o->required_scopes)
		check_scopes(s, o->required_scopes, "required_scopes", c->required, c->nrequired);
	c->principal_claim = ph_xstrdup(o->principal_claim);
	ph_buf_init(&b);
	for (size_t i = 0; c->required && i < c->nrequired; i++)
		ph_buf_printf(&b, "%s%s", i ? " " : "", c->required[i]);
	ph_buf_addc(&b, '\0');
	c->required_text = ph_buf_steal(&b);
}

struct ph_oauth_conf *
ph_oauth_conf_parse(struct ph_ysink *s, const struct ph_oauth_opts *o, const struct ph_ynode *auth,
		    const char *dir, const char *resource)
{
	const struct ph_ynode *on = ph_yaml_get(auth, "oauth");
	struct ph_oauth_conf *c = ph_xcalloc(1, sizeof *c);
	bool bad = s->bad;
	s->bad = false;
	if (o->issuer == NULL)
		ph_yread_problem(s, ph_yread_key_line(auth, on ? "oauth" : "mode"),
				 "auth.mode oauth: auth.oauth.issuer is required");
	ph_oauth_keys_parse(s, &c->keys, o, on, dir);
	parse_audiences(s, c, o, on, resource);
	parse_algorithms(s, c, o->algorithms);
	parse_claims(s, c, o);
	parse_implies(s, c, o->scope_implies);
	parse_introspection(s, c, o, on, dir);
	c->skew = o->clock_skew_s;
	c->typ_at = strcmp(o->typ, "at+jwt") == 0;
	c->max_token = o->max_token_bytes;
	c->token_cache = o->token_cache;
	if (s->bad) {
		ph_oauth_conf_free(c);
		return NULL;
	}
	s->bad = bad;
	if (c->token_cache > 0)
		c->cache = ph_xcalloc((size_t)c->token_cache, sizeof *c->cache);
	randombytes_buf(c->cache_key, sizeof c->cache_key);
	return c;
}

static void
entry_clear(struct tok_entry *e)
{
	free(e->principal);
	json_object_put(e->scopes);
	json_object_put(e->assigns);
	memset(e, 0, sizeof *e);
}

void
ph_oauth_conf_free(struct ph_oauth_conf *c)
{
	if (c == NULL)
		return;
	ph_oauth_keys_free(&c->keys);
	ph_yread_strv_free(c->audiences);
	ph_yread_strv_free(c->scope_claims);
	ph_yread_strv_free(c->assigns_claims);
	ph_yread_strv_free(c->required);
	free(c->required_text);
	free(c->principal_claim);
	for (size_t i = 0; i < c->nimplies; i++) {
		free(c->implies[i].scope);
		ph_yread_strv_free(c->implies[i].implied);
	}
	free(c->implies);
	free(c->intro_endpoint);
	free(c->intro_client);
	if (c->intro_secret)
		sodium_memzero(c->intro_secret, strlen(c->intro_secret));
	free(c->intro_secret);
	for (long long i = 0; c->cache && i < c->token_cache; i++)
		entry_clear(&c->cache[i]);
	free(c->cache);
	sodium_memzero(c->cache_key, sizeof c->cache_key);
	free(c);
}

static void
add_scope(struct json_object *arr, const char *sc)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), sc) == 0)
			return;
	json_object_array_add(arr, json_object_new_string(sc));
}

struct json_object *
ph_oauth_scopes_supported(const struct ph_oauth_conf *c)
{
	struct json_object *a = json_object_new_array();
	for (size_t i = 0; i < c->nrequired; i++)
		add_scope(a, c->required[i]);
	for (size_t i = 0; i < c->nimplies; i++) {
		add_scope(a, c->implies[i].scope);
		for (size_t j = 0; c->implies[i].implied[j]; j++)
			add_scope(a, c->implies[i].implied[j]);
	}
	/* a refresh-token scope: no operation needs it, a client asking for
	 * it because it is listed would get refresh tokens it does not need */
	for (size_t i = json_object_array_length(a); i-- > 0;)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), "offline_access") == 0)
			json_object_array_del_idx(a, i, 1);
	return a;
}

const char *
ph_oauth_issuer(const struct ph_oauth_conf *c)
{
	return c->keys.issuer;
}

const char *
ph_oauth_required(const struct ph_oauth_conf *c)
{
	return c->required_text;
}

/* ---- scopes ----------------------------------------------------------------------- */

static bool
has_scope(struct json_object *scopes, const char *sc)
{
	for (size_t i = 0; i < json_object_array_length(scopes); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(scopes, i)), sc) == 0)
			return true;
	return false;
}

bool
ph_oauth_has_scopes(struct json_object *scopes, char *const *need, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (scopes == NULL || !has_scope(scopes, need[i]))
			return false;
	return true;
}

/* Adds the space-separated scopes of text to arr. */
static void
add_words(struct json_object *arr, const char *text)
{
	char word[SCOPE_MAX + 1];
	while (*text) {
		size_t n = strcspn(text, " ");
		if (n > 0 && n <= SCOPE_MAX) {
			memcpy(word, text, n);
			word[n] = '\0';
			if (scope_ok(word))
				add_scope(arr, word);
		}
		text += n;
		while (*text == ' ')
			text++;
	}
}

/* The granted scopes: every scope claim (a space-separated string or an
 * array of strings), then what scope_implies adds, to a fixed point. */
static struct json_object *
token_scopes(const struct ph_oauth_conf *c, struct json_object *claims)
{
	struct json_object *arr = json_object_new_array();
	bool grew = true;
	for (size_t i = 0; i < c->nscope_claims; i++) {
		struct json_object *v = ph_jget(claims, c->scope_claims[i]);
		if (ph_jtext(claims, c->scope_claims[i]) != NULL) /* a NUL would hide the words after it */
			add_words(arr, json_object_get_string(v));
		for (size_t j = 0; json_object_is_type(v, json_type_array) && j < json_object_array_length(v); j++) {
			struct json_object *e = json_object_array_get_idx(v, j);
			if (json_object_is_type(e, json_type_string) &&
			    ph_text_plain(json_object_get_string(e), (size_t)json_object_get_string_len(e)) &&
			    scope_ok(json_object_get_string(e)))
				add_scope(arr, json_object_get_string(e));
		}
	}
	while (grew && json_object_array_length(arr) < IMPLIED_MAX) {
		size_t before = json_object_array_length(arr);
		for (size_t i = 0; i < c->nimplies; i++)
			if (has_scope(arr, c->implies[i].scope))
				for (size_t j = 0; c->implies[i].implied[j]; j++)
					add_scope(arr, c->implies[i].implied[j]);
		grew = json_object_array_length(arr) != before;
	}
	return arr;
}

/* The assigns: the configured claims the token has, as they are. */
static struct json_object *
token_assigns(const struct ph_oauth_conf *c, struct json_object *claims)
{
	struct json_object *as = json_object_new_object();
	for (size_t i = 0; i < c->nassigns_claims; i++) {
		struct json_object *v;
		if (ph_jget_ex(claims, c->assigns_claims[i], &v))
			ph_jset(as, c->assigns_claims[i], json_object_get(v));
	}
	return as;
}

/* ---- the token cache ----------------------------------------------------------- */

static struct tok_entry *
cache_slot(struct ph_oauth_conf *c, const unsigned char *digest)
{
	uint64_t h;
	if (c->token_cache <= 0)
		return NULL;
	memcpy(&h, digest, sizeof h);
	return &c->cache[h % (uint64_t)c->token_cache];
}

/* The remembered grant of the token with this digest, still valid at now. */
static struct tok_entry *
cache_find(struct ph_oauth_conf *c, const unsigned char *digest, long long now)
{
	struct tok_entry *e = cache_slot(c, digest);
	if (e == NULL || (e->principal == NULL && !e->inactive) ||
	    sodium_memcmp(e->digest, digest, sizeof e->digest) != 0)
		return NULL;
	if (now >= e->until) {
		entry_clear(e);
		return NULL;
	}
	return e;
}

/* Remembers a grant (principal, scopes and assigns are taken). With no
 * cache, a one-entry scratch holds it for the request. */
static struct tok_entry *
cache_put(struct ph_oauth_conf *c, const unsigned char *digest, long long until, const char *principal,
	  struct json_object *scopes, struct json_object *assigns)
{
	static struct tok_entry scratch;
	struct tok_entry *e = cache_slot(c, digest);
	if (e == NULL)
		e = &scratch;
	entry_clear(e);
	memcpy(e->digest, digest, sizeof e->digest);
	e->until = until;
	e->principal = ph_xstrdup(principal);
	e->scopes = scopes;
	e->assigns = assigns;
	return e;
}

/* Remembers that the introspection endpoint said the token with this
 * digest is not active, for introspection.negative_cache_s: a flood of bad
 * opaque tokens asks it once each, not once per request. It never takes
 * the slot of a grant still valid (the flood must not evict good tokens). */
static void
cache_put_inactive(struct ph_oauth_conf *c, const unsigned char *digest, long long now)
{
	struct tok_entry *e = cache_slot(c, digest);
	if (e == NULL || c->intro_neg_s <= 0 || (e->principal != NULL && now < e->until))
		return;
	entry_clear(e);
	memcpy(e->digest, digest, sizeof e->digest);
	e->until = now + c->intro_neg_s;
	e->inactive = true;
}

/* ---- checks ------------------------------------------------------------------------- */

/* A verified token's claims into a grant kept in the cache. Returns
 * PH_OK, or PH_E_UNAUTHORIZED when it names no principal (ph_auth.c
 * checks that the name is usable). */
static enum ph_err
grant_claims(struct ph_oauth_conf *c, const unsigned char *digest, struct json_object *claims,
	     long long until, bool jwt, struct ph_oauth_grant *g, const char **why)
{
	const char *p = ph_jtext(claims, c->principal_claim);
	struct tok_entry *e;
	if (p == NULL || *p == '\0' || strlen(p) > 4096) {
		/* "alice\u0000-attacker" must not pass for alice */
		*why = ph_jhas(claims, c->principal_claim) ? "the token's principal claim is not a string of 1 to 4096 "
							     "bytes without control characters"
							   : "the token has no principal claim";
		return PH_E_UNAUTHORIZED;
	}
	e = cache_put(c, digest, until, p, token_scopes(c, claims), token_assigns(c, claims));
	e->jwt = jwt;
	g->principal = e->principal;
	g->scopes = e->scopes;
	g->assigns = e->assigns;
	return PH_OK;
}

/* The token's iat (unverified: it only chooses between 401 and 503 for a
 * kid the keys lack), 0 when it has none. */
static long long
issued_at(const struct ph_jwt *t)
{
	struct json_object *v = ph_jget(t->claims, "iat");
	if (json_object_is_type(v, json_type_int))
		return (long long)json_object_get_int64(v);
	if (json_object_is_type(v, json_type_double) && json_object_get_double(v) > 0 &&
	    json_object_get_double(v) < 9.0e15)
		return (long long)json_object_get_double(v);
	return 0;
}

/* What verify_with_keys found of a token's signature. */
enum key_verdict {
	KEY_REFUSED,  /* it does not verify with the keys (401) */
	KEY_VERIFIED,
	KEY_NONE,     /* there are no keys at all (503) */
	KEY_PENDING,  /* a refresh of the keys is under way or may bring its key:
		       * 503 with Retry-After, the token may be good */
};

/* The keys this worker has, refreshed as ph_oauth_keys.c decides; a token
 * naming a kid they lack asks for a refresh. Returns the verdict on t's
 * signature, with *retry (seconds) for KEY_PENDING. */
static enum key_verdict
verify_with_keys(struct ph_oauth_conf *c, const struct ph_jwt *t, long long now, int *retry, const char **why)
{
	static char later[200];
	enum ph_keys_next next;
	const struct ph_jwks *ks = ph_oauth_keys_get(&c->keys, now);
	int v;
	if (ks == NULL || ks->n == 0) {
		*why = c->keys.last_error;
		return KEY_NONE;
	}
	if ((v = ph_jwt_verify_set(t, ks, why)) >= 0)
		return v > 0 ? KEY_VERIFIED : KEY_REFUSED;
	/* a fetch may have published the kid since this worker last looked */
	if (ph_oauth_keys_reread(&c->keys) && (v = ph_jwt_verify_set(t, &c->keys.set, why)) >= 0)
		return v > 0 ? KEY_VERIFIED : KEY_REFUSED;
	next = ph_oauth_keys_unknown(&c->keys, issued_at(t), c->skew);
	if (next == PH_KEYS_WAIT) {
		*why = "a token names a kid the keys lack: waiting for a refresh of the key set";
		*retry = 1;
		return KEY_PENDING;
	}
	if (next == PH_KEYS_LATER) {
		snprintf(later, sizeof later, "a token issued after the last fetch of the key set names a kid it "
			 "lacks: the next fetch is allowed in %d s (auth.oauth.min_refresh_s is %lld)",
			 c->keys.retry_s, c->keys.min_refresh_s);
		*why = later;
		*retry = c->keys.retry_s;
		return KEY_PENDING;
	}
	if ((ks = ph_oauth_keys_get(&c->keys, now)) != NULL)
		v = ph_jwt_verify_set(t, ks, why); /* after the refresh the unknown kid asked for */
	return v > 0 ? KEY_VERIFIED : KEY_REFUSED;
}

static enum ph_err
check_jwt(struct ph_oauth_conf *c, const char *tok, size_t n, const unsigned char *digest, long long now,
	  struct ph_oauth_grant *g, const char **why)
{
	struct ph_jwt t;
	struct ph_jwt_rules rules = {c->keys.issuer, c->audiences, c->naudiences, c->aud_slash, c->typ_at,
				     c->skew, now, c->aud_client_id};
	long long exp = 0;
	enum ph_err e = PH_E_UNAUTHORIZED;
	enum key_verdict v;
	int retry = 0;
	if (ph_jwt_decode(tok, n, (size_t)c->max_token, c->algs, &t, why) != 0)
		return PH_E_UNAUTHORIZED;
	v = verify_with_keys(c, &t, now, &retry, why);
	if (v == KEY_NONE || v == KEY_PENDING)
		e = PH_E_BUSY;
	if (v == KEY_PENDING)
		g->retry_after = retry;
	else if (v == KEY_VERIFIED && ph_jwt_claims_ok(&t, &rules, &exp, why))
		e = grant_claims(c, digest, t.claims, exp, true, g, why);
	ph_jwt_free(&t);
	return e;
}

/* An opaque token: the introspection endpoint's answer (RFC 7662). */
static enum ph_err
check_opaque(struct ph_oauth_conf *c, const char *tok, size_t n, const unsigned char *digest, long long now,
	     struct ph_oauth_grant *g, const char **why)
{
	struct json_object *ans = NULL;
	struct json_object *act;
	const char *iss;
	long long exp = 0, until;
	enum ph_err e = PH_E_UNAUTHORIZED;
	struct ph_jwt_rules rules = {c->keys.issuer, c->audiences, c->naudiences, c->aud_slash, false, c->skew, now};
	struct ph_jwt fake;
	static char iss_why[600]; /* one request at a time in a process */
	if (c->intro_endpoint == NULL) {
		*why = "the token is not a JWT (and no introspection endpoint is configured)";
		return PH_E_UNAUTHORIZED;
	}
	if (ph_oauth_introspect(&c->keys, c->intro_endpoint, c->intro_client, c->intro_secret, tok, n, &ans,
				why) != 0)
		return PH_E_BUSY;
	act = ph_jget(ans, "active");
	iss = ph_jtext(ans, "iss");
	if (!json_object_is_type(act, json_type_boolean) || !json_object_get_boolean(act)) {
		*why = "the introspection endpoint says the token is not active";
		cache_put_inactive(c, digest, now);
	} else if (ph_jhas(ans, "iss") && (iss == NULL || strcmp(iss, c->keys.issuer) != 0)) {
		*why = ph_jwt_iss_why(iss_why, sizeof iss_why, "the introspected token's iss", iss, c->keys.issuer);
	} else {
		/* exp and aud are checked as a JWT's would be, when present */
		memset(&fake, 0, sizeof fake);
		fake.claims = ans;
		if (!ph_jhas(ans, "exp"))
			ph_jset(ans, "exp", json_object_new_int64(now + c->intro_cache_s + 1));
		if (!ph_jhas(ans, "aud") && c->naudiences > 0)
			ph_jset(ans, "aud", json_object_new_string(c->audiences[0]));
		if (ph_jwt_claims_ok(&fake, &rules, &exp, why)) {
			until = exp < now + c->intro_cache_s ? exp : now + c->intro_cache_s;
			e = grant_claims(c, digest, ans, until, false, g, why);
		}
	}
	json_object_put(ans);
	return e;
}

/* When this worker has read another key set than the one its remembered
 * JWTs were verified with, it forgets them: a token whose key left the set
 * is refused once the new set is read (a second after a fetch publishes
 * it; fetches come at least every refresh_s). Opaque tokens' answers
 * stay. */
static void
keys_changed(struct ph_oauth_conf *c, long long now)
{
	(void)ph_oauth_keys_get(&c->keys, now); /* a stat at most once a second */
	if (c->keys.generation == c->keys_gen)
		return;
	c->keys_gen = c->keys.generation;
	for (long long i = 0; c->cache && i < c->token_cache; i++)
		if (c->cache[i].jwt)
			entry_clear(&c->cache[i]);
}

/* A JWS compact token has exactly two dots. */
static bool
looks_like_jwt(const char *tok, size_t n)
{
	size_t dots = 0;
	for (size_t i = 0; i < n; i++)
		dots += tok[i] == '.';
	return dots >= 2;
}

enum ph_err
ph_oauth_check(struct ph_oauth_conf *c, const char *tok, size_t n, struct ph_oauth_grant *g, const char **why)
{
	unsigned char digest[TOKEN_DIGEST_BYTES];
	long long now = (long long)(ph_wall_ms() / 1000);
	struct tok_entry *e;
	enum ph_err err;
	memset(g, 0, sizeof *g);
	if (n > (size_t)c->max_token) {
		*why = "the token is larger than auth.oauth.max_token_bytes";
		return PH_E_UNAUTHORIZED;
	}
	crypto_shorthash_siphashx24(digest, (const unsigned char *)tok, n, c->cache_key);
	keys_changed(c, now);
	if ((e = cache_find(c, digest, now)) == NULL && !ph_token68(tok, n)) {
		/* checked here rather than before the digest: a token remembered
		 * is one whose bytes were checked, and this check costs more than
		 * the look-up (some 6 instructions a byte of a 700-byte JWT) */
		*why = "the token is not an RFC 6750 b64token (A-Z a-z 0-9 - . _ ~ + / and '=' at the end)";
		err = PH_E_UNAUTHORIZED;
	} else if (e != NULL && e->inactive) {
		*why = "the introspection endpoint said the token is not active (a remembered answer)";
		err = PH_E_UNAUTHORIZED;
	} else if (e != NULL) {
		g->principal = e->principal;
		g->scopes = e->scopes;
		g->assigns = e->assigns;
		g->cached = true;
		err = PH_OK;
	} else if (looks_like_jwt(tok, n)) {
		err = check_jwt(c, tok, n, digest, now, g, why);
	} else {
		err = check_opaque(c, tok, n, digest, now, g, why);
	}
	sodium_memzero(digest, sizeof digest);
	if (err == PH_OK && !ph_oauth_has_scopes(g->scopes, c->required, c->nrequired)) {
		*why = "the token lacks a scope auth.oauth.required_scopes names";
		return PH_E_FORBIDDEN;
	}
	return err;
}

void
ph_oauth_master_mode(void)
{
	ph_oauth_keys_master_mode();
}

int64_t
ph_oauth_tick(struct ph_oauth_conf *c, int64_t now)
{
	return ph_oauth_keys_tick(c ? &c->keys : NULL, now);
}

bool
ph_oauth_reaped(pid_t pid)
{
	return ph_oauth_keys_reaped(pid);
}

bool
ph_oauth_fetching(void)
{
	return ph_oauth_keys_fetching();
}
#else /* no OAuth in this build: the mode is refused at -t */
struct ph_oauth_conf {
	int unused;
};

struct ph_oauth_conf *
ph_oauth_conf_parse(struct ph_ysink *s, const struct ph_oauth_opts *o, const struct ph_ynode *auth,
		    const char *dir, const char *resource)
{
	const struct ph_ynode *m = ph_yaml_get(auth, "mode");
	(void)o, (void)dir, (void)resource;
	ph_yread_problem(s, m ? m->line : auth->line, "auth.mode oauth: this phantom-fcgi was built without "
			 "OAuth support (configure found no OpenSSL 3 libcrypto or no HTTP client: install "
			 "libssl-dev and libcurl4-openssl-dev, or libssl-dev and libc-ares-dev, and build again; "
			 "the static release archive has OAuth in)");
	return NULL;
}

void
ph_oauth_conf_free(struct ph_oauth_conf *c)
{
	free(c);
}

struct json_object *
ph_oauth_scopes_supported(const struct ph_oauth_conf *c)
{
	(void)c;
	return json_object_new_array();
}

const char *
ph_oauth_issuer(const struct ph_oauth_conf *c)
{
	(void)c;
	return "";
}

const char *
ph_oauth_required(const struct ph_oauth_conf *c)
{
	(void)c;
	return "";
}

enum ph_err
ph_oauth_check(struct ph_oauth_conf *c, const char *tok, size_t n, struct ph_oauth_grant *g, const char **why)
{
	(void)c, (void)tok, (void)n, (void)g;
	*why = "this build has no OAuth support";
	return PH_E_INTERNAL;
}

bool
ph_oauth_has_scopes(struct json_object *scopes, char *const *need, size_t n)
{
	(void)scopes, (void)need;
	return n == 0;
}

void
ph_oauth_master_mode(void)
{
}

int64_t
ph_oauth_tick(struct ph_oauth_conf *c, int64_t now)
{
	(void)c;
	return now + 3600 * (int64_t)1000000;
}

bool
ph_oauth_reaped(pid_t pid)
{
	(void)pid;
	return false;
}

bool
ph_oauth_fetching(void)
{
	return false;
}
#endif
