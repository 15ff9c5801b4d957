/* ph_auth.c: authentication and per-principal access.
 *
 * The `auth` section is loaded once (start, SIGHUP) into struct
 * ph_auth_conf; a request then only hashes and compares. Modes:
 *   none         no principal on HTTP (stdio: auth.stdio_principal)
 *   bearer       Authorization: Bearer TOKEN checked against SHA-256 or
 *                argon2 hashes from auth.tokens and auth.tokens_file
 *   remote_user  the web server authenticated the user (REMOTE_USER)
 *   exec         a command gets the request headers as JSON on stdin and
 *                answers allow / unauthorized / forbidden
 *   module       the same document and answer through a function of a
 *                loaded module (phantom.h, AUTHENTICATORS), in the worker
 * Failures become 401 with WWW-Authenticate or 403, both JSON-RPC error
 * bodies sent by the core (ph_authenticate() in ph_ladder.c). The token is never
 * logged, copied or kept: only a keyed digest lives on, in the argon2
 * verification cache. docs/auth.md is the user-facing description.
 *
 * An argon2 check costs ~70 ms and 64 MiB, so wrong tokens are kept from
 * spending it: a token is looked up cheaply first (the SHA-256 entries and
 * the cache of tokens already verified), a client address that sent more
 * than auth.fail_limit invalid tokens per auth.fail_window_s gets 429
 * without any hashing, and at most auth.max_concurrent_verify checks run at
 * once on the host (shared slots; past that 429 at once rather than a
 * worker waiting). Verified tokens are remembered per worker and for the
 * host (ph_shared_auth_*: a recycled worker does not verify them again,
 * which past auth.fail_limit it could not). A fast keyed lookup before
 * argon2 is not possible for a token never seen: the configuration holds
 * only the salted argon2 string, and a fast digest kept beside it would
 * hand an offline attacker that digest to brute-force instead. The caches
 * are that lookup for tokens once verified.
 *
 * The section is read by ph_auth_conf.c; phantom-fcgi --hash-token, which
 * makes the token entries, is src/cli/ph_hash_token.c. */
#include "first.h"
#include "ph_otel.h"
#include "ph_auth.h"
#include "ph_auth_int.h"
#include "ph_call.h"
#include "ph_exec.h"
#include "ph_exec_conf.h"
#include "ph_features.h"
#include "ph_metrics.h"
#include "ph_oauth.h"
#include "ph_rate.h"
#include "ph_sections.h"
#include "ph_shared.h"
#include "ph_util.h"
#include "ph_yaml.h"
#include "ph_yread.h"
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

_Static_assert(PH_SHARED_DIGEST == crypto_generichash_BYTES, "the shared cache holds keyed digests");

#define EXEC_MESSAGE_MAX 256
#define EXEC_GRACE_MS 100        /* between SIGTERM and SIGKILL */

/* ---- the compare helpers ----------------------------------------------------- */

long
ph_auth_sha256_find(const struct ph_auth_conf *a, const unsigned char *digest)
{
	long found = -1;
	for (size_t i = 0; i < a->ntokens; i++) {
		/* sodium_memcmp is 0 or -1 whatever the bytes: eq is 1 or 0, mask
		 * all ones or zero, and the index is selected without a branch.
		 * Which entries are argon2 is configuration, not secret. */
		long eq = (long)(sodium_memcmp(a->tokens[i].sha256, digest, crypto_hash_sha256_BYTES) + 1);
		long mask = -(eq & (long)!a->tokens[i].argon2);
		found = (found & ~mask) | ((long)i & mask);
	}
	return found;
}

/* The token entry a remembered argon2 verification points to, or -1; same
 * constant-time shape as ph_auth_sha256_find. */
static long
cache_find(const struct ph_auth_conf *a, const unsigned char *digest)
{
	long found = -1;
	for (size_t i = 0; i < a->ncache; i++) {
		long eq = (long)(sodium_memcmp(a->cache[i].digest, digest, crypto_generichash_BYTES) + 1);
		long mask = -eq;
		found = (found & ~mask) | ((long)a->cache[i].token & mask);
	}
	return found;
}

static void
cache_add(struct ph_auth_conf *a, const unsigned char *digest, size_t token)
{
	struct ph_auth_cached *c;
	if (a->argon2_cache <= 0)
		return;
	c = &a->cache[a->cache_next];
	memcpy(c->digest, digest, crypto_generichash_BYTES);
	c->token = token;
	a->cache_next = (a->cache_next + 1) % (size_t)a->argon2_cache;
	if (a->ncache < (size_t)a->argon2_cache)
		a->ncache++;
}

/* ---- per request -------------------------------------------------------------- */

/* What a request keeps until ph_auth_end: only the exec mode needs it. */
struct auth_state {
	char *principal;
	struct json_object *assigns; /* the exec authenticator's, NULL when none */
	struct ph_access access;
	char *challenge;
	struct ph_header hdrs[2];
};

static const char *
param(struct ph_req *r, const char *name)
{
	return r->ex->ops->param(r->ex, name);
}

/* The principal is known: applies its allow-lists (own, from an exec
 * authenticator, or the configured ones) or refuses it when it has none
 * and default_access is none. */
static enum ph_err
grant(struct ph_req *r, const struct ph_auth_conf *a, const char *principal,
      const struct ph_access *own, char *msg, size_t msz)
{
	const struct ph_allow_entry *e;
	r->who.principal = principal;
	if (own != NULL) {
		r->who.access = own;
		r->who.access_own = true;
		return PH_OK;
	}
	e = ph_auth_find_allow(a, principal);
	if (e != NULL) {
		r->who.access = &e->access;
		return PH_OK;
	}
	if (a->default_deny) {
		snprintf(msg, msz, "Forbidden: no access for this principal");
		return PH_E_FORBIDDEN;
	}
	return PH_OK;
}

const struct ph_access *
ph_auth_configured_access(const struct ph_server *srv, const char *principal, bool *denied)
{
	const struct ph_auth_conf *a = srv->conf->auth;
	const struct ph_allow_entry *e;
	*denied = false;
	if (a == NULL || principal == NULL)
		return NULL;
	if ((e = ph_auth_find_allow(a, principal)) != NULL)
		return &e->access;
	*denied = a->default_deny;
	return NULL;
}

const struct ph_rate_conf *
ph_auth_rate(const struct ph_req *r)
{
	const struct ph_auth_conf *a = r->srv->conf->auth;
	const struct ph_allow_entry *e;
	if (a == NULL || r->who.principal == NULL || (e = ph_auth_find_allow(a, r->who.principal)) == NULL ||
	    e->rate.requests == 0)
		return NULL;
	return &e->rate;
}

static enum ph_err
unauthorized(const struct ph_auth_conf *a, bool invalid, const char *why, char *msg, size_t msz,
	     const struct ph_header **hdrs)
{
	snprintf(msg, msz, "%s", why);
	*hdrs = invalid ? a->hdr_invalid : a->hdr_missing;
	return PH_E_UNAUTHORIZED;
}

/* The token of an "Authorization: Bearer TOKEN" header (borrowed from the
 * request, *n bytes), or NULL with *why set to the 401 message and *invalid
 * saying whether it gets the invalid_token challenge. syntax: its bytes
 * checked here (auth.mode oauth checks them itself, once a token: a token
 * it remembers by digest is bytes it checked). */
static const char *
bearer_token(struct ph_req *r, size_t max, bool syntax, size_t *n, const char **why, bool *invalid)
{
	const char *h = param(r, "HTTP_AUTHORIZATION"), *tok;
	*invalid = false;
	/* Apache hands the header over as REDIRECT_HTTP_AUTHORIZATION after an
	 * internal rewrite (SetEnvIf/RewriteRule recipes on shared hosting) */
	if (h == NULL || *h == '\0')
		h = param(r, "REDIRECT_HTTP_AUTHORIZATION");
	*why = "Unauthorized";
	if (h == NULL || *h == '\0')
		return NULL;
	tok = ph_trim(h, n);
	*why = "Unauthorized: a Bearer token is required";
	if (*n < 6 || strncasecmp(tok, "Bearer", 6) != 0 || (*n > 6 && tok[6] != ' ' && tok[6] != '\t'))
		return NULL;
	tok += 6;
	*n -= 6;
	while (*n > 0 && (*tok == ' ' || *tok == '\t')) {
		tok++;
		(*n)--;
	}
	*why = "Unauthorized: invalid token";
	*invalid = true;
	if (*n == 0 || *n > max || (syntax && !ph_token68(tok, *n)))
		return NULL;
	return tok;
}

/* 429 with Retry-After: wait seconds (the header lives until the next
 * refusal; a worker serves one request at a time). */
static enum ph_err
too_many(long long wait, char *msg, size_t msz, const struct ph_header **hdrs, const char *fmt, ...)
	PH_PRINTF(5, 6);
static enum ph_err
too_many(long long wait, char *msg, size_t msz, const struct ph_header **hdrs, const char *fmt, ...)
{
	static char after[24];
	static const struct ph_header h[] = {{"Retry-After", after}, {NULL, NULL}};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, msz, fmt, ap);
	va_end(ap);
	snprintf(after, sizeof after, "%lld", wait);
	*hdrs = h;
	ph_metrics_rate_limited();
	return PH_E_RATE_LIMITED;
}

/* The bucket of auth.fail_limit for the request's client address. */
static void
fail_key(struct ph_req *r, char *key, size_t ksz)
{
	const char *addr = param(r, "REMOTE_ADDR");
	snprintf(key, ksz, "f:%s", addr ? addr : "-");
}

/* Runs the argon2 entries against tok while holding a verification slot.
 * Returns PH_OK with *idx the entry matched (or -1), or 429 when every slot
 * of auth.max_concurrent_verify is taken. */
static enum ph_err
verify_argon2(struct ph_auth_conf *a, const char *tok, size_t n, const unsigned char *kd, long *idx,
	      char *msg, size_t msz, const struct ph_header **hdrs)
{
	bool any = false;
	int slot;
	for (size_t i = 0; i < a->ntokens; i++)
		any = any || a->tokens[i].argon2;
	if (!any)
		return PH_OK;
	if ((slot = ph_shared_verify_enter(a->max_verify)) < 0)
		return too_many(1, msg, msz, hdrs, "Too Many Requests: %lld token verifications are "
				"running (auth.max_concurrent_verify); retry after 1 s", a->max_verify);
	for (size_t i = 0; *idx < 0 && i < a->ntokens; i++) {
		/* ~70 ms and 64 MiB each with the --hash-token parameters: a
		 * success is remembered, so a client pays it once per worker */
		if (a->tokens[i].argon2 && crypto_pwhash_str_verify(a->tokens[i].argon2_str, tok, n) == 0) {
			*idx = (long)i;
			cache_add(a, kd, i);
			ph_shared_auth_put(kd, i);
		}
	}
	ph_shared_verify_leave(slot);
	return PH_OK;
}

/* A token the cheap lookups do not know: refused with 429 when its client
 * address is past auth.fail_limit, else checked against the argon2
 * entries; a failure counts against the address. Returns PH_OK with *idx
 * (-1: no entry matched) or the 429. */
static enum ph_err
check_unknown(struct ph_req *r, struct ph_auth_conf *a, const char *tok, size_t n,
	      const unsigned char *kd, long *idx, char *msg, size_t msz, const struct ph_header **hdrs)
{
	char key[PH_RATE_KEY_MAX + 1];
	long long wait;
	enum ph_err e;
	fail_key(r, key, sizeof key);
	if (a->fail.requests > 0 && (wait = ph_rate_peek(key, &a->fail, ph_now_us())) > 0)
		return too_many(wait, msg, msz, hdrs, "Too Many Requests: over auth.fail_limit (%lld "
				"invalid tokens per %lld s from this address); retry after %lld s",
				a->fail.requests, a->fail.per_seconds, wait);
	e = verify_argon2(a, tok, n, kd, idx, msg, msz, hdrs);
	if (e == PH_OK && *idx < 0 && a->fail.requests > 0)
		(void)ph_rate_take(key, &a->fail, ph_now_us());
	return e;
}

static enum ph_err
check_bearer(struct ph_req *r, struct ph_auth_conf *a, char *msg, size_t msz,
	     const struct ph_header **hdrs)
{
	unsigned char digest[crypto_hash_sha256_BYTES], kd[crypto_generichash_BYTES];
	const char *tok, *why;
	size_t n = 0;
	long idx;
	bool invalid;
	enum ph_err e = PH_OK;
	if ((tok = bearer_token(r, PH_AUTH_TOKEN_MAX, true, &n, &why, &invalid)) == NULL)
		return unauthorized(a, invalid, why, msg, msz, hdrs);
	crypto_hash_sha256(digest, (const unsigned char *)tok, n);
	crypto_generichash(kd, sizeof kd, (const unsigned char *)tok, n, a->cache_key, sizeof a->cache_key);
	idx = ph_auth_sha256_find(a, digest);
	if (idx < 0)
		idx = cache_find(a, kd);
	if (idx < 0 && (idx = ph_shared_auth_get(kd)) >= 0) {
		if (idx >= (long)a->ntokens)
			idx = -1; /* cannot be: digests are keyed per configuration */
		else
			cache_add(a, kd, (size_t)idx);
	}
	if (idx < 0)
		e = check_unknown(r, a, tok, n, kd, &idx, msg, msz, hdrs);
	sodium_memzero(digest, sizeof digest);
	sodium_memzero(kd, sizeof kd);
	if (e != PH_OK)
		return e;
	if (idx < 0)
		return unauthorized(a, true, why, msg, msz, hdrs);
	return grant(r, a, a->tokens[idx].principal, NULL, msg, msz);
}

static enum ph_err
check_remote_user(struct ph_req *r, const struct ph_auth_conf *a, char *msg, size_t msz,
		  const struct ph_header **hdrs)
{
	const char *u = param(r, "REMOTE_USER");
	if (u == NULL || *u == '\0')
		u = param(r, "REDIRECT_REMOTE_USER");
	if (u == NULL || *u == '\0')
		return unauthorized(a, false, "Unauthorized", msg, msz, hdrs);
	if (!ph_auth_principal_ok(u))
		return unauthorized(a, true, "Unauthorized: unusable REMOTE_USER", msg, msz, hdrs);
	return grant(r, a, u, NULL, msg, msz);
}

/* auth.mode oauth, a principal without an auth.allow entry of its own: the
 * allow-lists its scopes grant, from the entries "scope:NAME" of
 * auth.allow (so one token set serves several plans). Several such scopes
 * grant the union of their lists; a kind one of them leaves unlisted is
 * not restricted. NULL when no scope has an entry. The union is kept in
 * r->auth_state. */
static const struct ph_access *
scope_access(struct ph_req *r, const struct ph_auth_conf *a, struct json_object *scopes)
{
	const struct ph_allow_entry *one = NULL;
	struct auth_state *st = NULL;
	bool open[PH_ACCESS_KINDS] = {false};
	for (size_t i = 0; scopes != NULL && i < json_object_array_length(scopes); i++) {
		char key[PH_AUTH_PRINCIPAL_MAX + 1];
		const struct ph_allow_entry *e;
		/* a scope too long for the key is no entry's, not a shorter one's */
		if ((size_t)snprintf(key, sizeof key, "scope:%s",
				     json_object_get_string(json_object_array_get_idx(scopes, i))) >= sizeof key ||
		    (e = ph_auth_find_allow(a, key)) == NULL)
			continue;
		if (one == NULL) {
			one = e;
			continue;
		}
		if (st == NULL) {
			r->auth_state = st = r->auth_state ? r->auth_state : ph_xcalloc(1, sizeof *st);
			for (int k = 0; k < PH_ACCESS_KINDS; k++) {
				open[k] = !one->access.kind[k].set;
				st->access.kind[k].set = one->access.kind[k].set;
				for (size_t j = 0; j < one->access.kind[k].n; j++)
					ph_auth_list_push(&st->access.kind[k], ph_xstrdup(one->access.kind[k].v[j]));
			}
		}
		for (int k = 0; k < PH_ACCESS_KINDS; k++) {
			open[k] = open[k] || !e->access.kind[k].set;
			st->access.kind[k].set = !open[k];
			for (size_t j = 0; j < e->access.kind[k].n; j++)
				ph_auth_list_push(&st->access.kind[k], ph_xstrdup(e->access.kind[k].v[j]));
		}
	}
	return st != NULL ? &st->access : one ? &one->access : NULL;
}

/* auth.mode oauth, a token naming a kid the keys lack while they are
 * refreshed: 503 with Retry-After (the header lives until the next
 * refusal, like too_many's). */
static enum ph_err
refresh_wait(int wait, const char *why, char *msg, size_t msz, const struct ph_header **hdrs)
{
	static char after[24];
	static const struct ph_header h[] = {{"Retry-After", after}, {NULL, NULL}};
	ph_log("notice", "auth: %s", why);
	snprintf(msg, msz, "Service Unavailable: the authorization server's keys are being refreshed");
	snprintf(after, sizeof after, "%d", wait);
	*hdrs = h;
	return PH_E_BUSY;
}

/* auth.mode oauth: the access token checked by ph_oauth.c. An invalid
 * token is logged with what is wrong with it (never the token); a cold
 * start without keys is 503 with the reason in the log. */
static enum ph_err
check_oauth(struct ph_req *r, struct ph_auth_conf *a, char *msg, size_t msz, const struct ph_header **hdrs)
{
	struct ph_oauth_grant g;
	const char *tok, *why = "Unauthorized";
	size_t n = 0;
	bool invalid;
	enum ph_err e;
	/* longer than any max_token_bytes: the size is ph_oauth.c's check */
	if ((tok = bearer_token(r, 65536 + 1, false, &n, &why, &invalid)) == NULL)
		return unauthorized(a, invalid, why, msg, msz, hdrs);
	if (ph_otel_on) {
		/* a token check that was not remembered is a span of its own */
		struct ph_otel_child sp;
		ph_otel_child_begin(r, &sp);
		e = ph_oauth_check(a->oauth, tok, n, &g, &why);
		if (!g.cached) {
			struct ph_otel_attr at[] = {{"phantom.auth.mode", "oauth", 0},
						    {"phantom.auth.outcome", ph_err_message(e), 0}};
			ph_otel_child_end(r, &sp, "auth token check", at, PH_ARRAY_LEN(at),
					  e != PH_OK && e != PH_E_FORBIDDEN);
		} else {
			ph_otel_child_drop(r, &sp);
		}
	} else {
		e = ph_oauth_check(a->oauth, tok, n, &g, &why);
	}
	if ((e == PH_OK || e == PH_E_FORBIDDEN) && !ph_auth_principal_ok(g.principal)) {
		e = PH_E_UNAUTHORIZED;
		why = "the token's principal claim is not a usable name (1 to 256 bytes, no control characters)";
	}
	if (e == PH_OK || e == PH_E_FORBIDDEN) {
		const struct ph_access *own = ph_auth_find_allow(a, g.principal) ? NULL : scope_access(r, a, g.scopes);
		r->who.assigns = g.assigns;
		r->scopes = g.scopes;
		e = grant(r, a, g.principal, own, msg, msz) == PH_OK ? e : PH_E_FORBIDDEN;
	}
	switch (e) {
	case PH_OK:
		return PH_OK;
	case PH_E_FORBIDDEN:
		if (*msg == '\0') {
			snprintf(msg, msz, "Forbidden: the token lacks a required scope");
			*hdrs = a->hdr_scope;
		}
		return e;
	case PH_E_BUSY:
		if (g.retry_after > 0) /* a key refresh, asked for by a flood of kids maybe: not an error */
			return refresh_wait(g.retry_after, why, msg, msz, hdrs);
		ph_log("error", "auth: cannot check OAuth tokens: %s", why);
		snprintf(msg, msz, "Service Unavailable: the authorization server's keys are not available");
		return e;
	default:
		ph_log("notice", "auth: invalid OAuth token: %s", why);
		return unauthorized(a, true, "Unauthorized: invalid token", msg, msz, hdrs);
	}
}

/* Adds scope to the space-separated list b unless it is there, or is
 * offline_access (a refresh-token scope, never asked for in a challenge). */
static void
scope_add(struct ph_buf *b, const char *scope)
{
	size_t n = strlen(scope);
	for (const char *p = b->data; p != NULL && *p;) {
		size_t l = strcspn(p, " ");
		if (l == n && memcmp(p, scope, n) == 0)
			return;
		p += l + (p[l] == ' ');
	}
	if (strcmp(scope, "offline_access") == 0)
		return;
	if (b->len > 0)
		ph_buf_addc(b, ' ');
	ph_buf_adds(b, scope);
	ph_buf_addc(b, '\0');
	b->len--;
}

bool
ph_auth_scopes_ok(struct ph_req *r, char *const *need, size_t n, char *msg, size_t msz,
		  const struct ph_header **hdrs)
{
	const struct ph_auth_conf *a = r->srv->conf->auth;
	const char *req;
	struct auth_state *st;
	struct ph_buf b;
	if (a == NULL || a->mode != PH_AUTH_OAUTH || r->scopes == NULL || ph_oauth_has_scopes(r->scopes, need, n))
		return true;
	/* 2026-07-28: every scope the operation needs, in one challenge */
	ph_buf_init(&b);
	for (req = ph_oauth_required(a->oauth); *req;) {
		size_t l = strcspn(req, " ");
		char *one = ph_xstrndup(req, l);
		scope_add(&b, one);
		free(one);
		req += l + (req[l] == ' ');
	}
	for (size_t i = 0; i < n; i++)
		scope_add(&b, need[i]);
	ph_buf_addc(&b, '\0');
	if ((st = r->auth_state) == NULL)
		r->auth_state = st = ph_xcalloc(1, sizeof *st);
	free(st->challenge);
	st->challenge = ph_auth_challenge(a, "insufficient_scope", b.data);
	st->hdrs[0] = (struct ph_header){"WWW-Authenticate", st->challenge};
	*hdrs = st->hdrs;
	snprintf(msg, msz, "Forbidden: the token lacks a scope this needs (%s)", b.data);
	ph_buf_free(&b);
	return false;
}

struct ph_oauth_conf *
ph_auth_oauth(const struct ph_server *srv)
{
	const struct ph_auth_conf *a = srv && srv->conf ? srv->conf->auth : NULL;
	return a != NULL && a->mode == PH_AUTH_OAUTH ? a->oauth : NULL;
}

/* ---- exec: the authenticator is run by the exec runner (ph_exec.c) ---------------- */

/* Runs the authenticator with in on stdin: no shell, its own process group,
 * only PATH and LC_ALL=C in its environment, no core dump, auth.timeout_ms
 * for the whole run (SIGTERM, EXEC_GRACE_MS, then SIGKILL for the group),
 * auth.max_output bytes of stdout; its stderr goes to the server log.
 * Always fills res (caller wipes res->out and frees with
 * ph_exec_result_free); returns 0 when the command exited 0 in time, or -1
 * with the reason in err. */
static int
run_command(const struct ph_auth_conf *a, const char *in, size_t inlen, struct ph_exec_result *res,
	    char *err, size_t errsz)
{
	static char lc_all[] = "LC_ALL=C";
	char *env[] = {lc_all, NULL};
	struct ph_exec_spec spec = {.argv = a->command, .env = env, .timeout_ms = a->timeout_ms,
				    .max_output = a->max_output, .no_core = true};
	struct ph_exec_limits lim = {.timeout_ms = a->timeout_ms, .grace_ms = EXEC_GRACE_MS,
				     .max_output = a->max_output};
	struct ph_exec_hooks hooks = {.label = "auth: authenticator"};
	struct sigaction dfl, old_chld;

	/* waiting needs SIGCHLD not ignored (a CGI parent may pass SIG_IGN on) */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl, &old_chld);
	ph_exec_run(&spec, &lim, in, inlen, &hooks, res);
	sigaction(SIGCHLD, &old_chld, NULL);
	switch (res->status) {
	case PH_EXEC_OK:
		return 0;
	case PH_EXEC_TIMEOUT:
		snprintf(err, errsz, "no answer within %lld ms", a->timeout_ms);
		break;
	case PH_EXEC_OVERFLOW:
		snprintf(err, errsz, "more than %lld bytes of output (auth.max_output)", a->max_output);
		break;
	case PH_EXEC_SIGNAL:
		snprintf(err, errsz, "killed by signal %d", res->code);
		break;
	case PH_EXEC_EXIT:
		snprintf(err, errsz, "exited with status %d", res->code);
		break;
	default:
		ph_exec_describe(res, err, errsz);
		break;
	}
	return -1;
}

/* The authenticator's input: the configured request headers (lower-case
 * names), the client address, REMOTE_USER when the web server set one, the
 * request URI and the JSON-RPC method. Caller puts. */
static struct json_object *
exec_input(struct ph_req *r, const struct ph_auth_conf *a)
{
	struct json_object *in = json_object_new_object(), *h = json_object_new_object();
	static const struct {
		const char *key, *param;
	} extra[] = {{"remote_addr", "REMOTE_ADDR"}, {"remote_user", "REMOTE_USER"},
		     {"request_uri", "REQUEST_URI"}};
	for (size_t i = 0; i < a->nheaders; i++) {
		const char *v = param(r, a->header_params[i]);
		if ((v == NULL || *v == '\0') && strcmp(a->headers[i], "authorization") == 0)
			v = param(r, "REDIRECT_HTTP_AUTHORIZATION");
		if (v != NULL)
			json_object_object_add(h, a->headers[i], json_object_new_string(v));
	}
	json_object_object_add(in, "headers", h);
	for (size_t i = 0; i < PH_ARRAY_LEN(extra); i++) {
		const char *v = param(r, extra[i].param);
		if (v != NULL && *v != '\0')
			json_object_object_add(in, extra[i].key, json_object_new_string(v));
	}
	if (r->method)
		json_object_object_add(in, "method", json_object_new_string(r->method));
	return in;
}

/* Reads the "allow" object of an allow answer into acc. Returns NULL or
 * what is wrong with it (a typo must not silently grant everything). */
static const char *
exec_access(struct json_object *o, struct ph_access *acc)
{
	if (!json_object_is_type(o, json_type_object))
		return "\"allow\" is not an object";
	json_object_object_foreach(o, k, v) {
		int kind = ph_auth_kind_index(k);
		size_t n;
		if (kind < 0)
			return "\"allow\" has a key other than tools, prompts, resources, skills";
		if (!json_object_is_type(v, json_type_array))
			return "an allow-list is not an array";
		acc->kind[kind].set = true;
		n = json_object_array_length(v);
		for (size_t i = 0; i < n; i++) {
			struct json_object *it = json_object_array_get_idx(v, i);
			const char *why;
			if (!json_object_is_type(it, json_type_string) ||
			    strlen(json_object_get_string(it)) != (size_t)json_object_get_string_len(it))
				return "an allow-list entry is not a string";
			why = ph_auth_access_add(acc, kind, json_object_get_string(it));
			if (why != NULL)
				return why;
		}
	}
	return NULL;
}

/* An optional string member of at most max bytes, usable in a header when
 * quotable is set. Returns 0 (value or NULL in *out) or -1. */
static int
opt_string(struct json_object *o, const char *key, size_t max, bool quotable, const char **out)
{
	struct json_object *v = ph_jget(o, key);
	*out = NULL;
	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_string) || (size_t)json_object_get_string_len(v) > max ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return -1;
	*out = json_object_get_string(v);
	if (quotable && (**out == '\0' || !ph_auth_quotable(*out)))
		return -1;
	return 0;
}

/* The depth of v: 0 for a scalar, 1 for an object or array of scalars... */
static long long
json_depth(struct json_object *v)
{
	long long d = 0;
	if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, k, x) {
			long long c = json_depth(x);
			(void)k;
			if (c > d)
				d = c;
		}
		return d + 1;
	}
	if (json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			long long c = json_depth(json_object_array_get_idx(v, i));
			if (c > d)
				d = c;
		}
		return d + 1;
	}
	return 0;
}

/* Checks "assigns" of an allow answer: an object of at most
 * auth.max_assigns bytes (as JSON) nested no deeper than auth.assigns_depth
 * (the object itself is depth 1). Returns NULL or what is wrong. */
static const char *
exec_assigns(const struct ph_auth_conf *a, struct json_object *v)
{
	size_t len;
	if (!json_object_is_type(v, json_type_object))
		return "\"assigns\" is not an object";
	json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &len);
	if ((long long)len > a->max_assigns)
		return "\"assigns\" is larger than auth.max_assigns";
	if (json_depth(v) > a->assigns_depth)
		return "\"assigns\" is nested deeper than auth.assigns_depth";
	return NULL;
}

/* An allow answer: its principal and, when it sends "allow", its own
 * allow-lists, and its "assigns", kept in st (owned by r->auth_state); *e
 * is what grant says. Returns NULL or what is wrong with the answer. */
static const char *
exec_allow(struct ph_req *r, struct ph_auth_conf *a, struct json_object *ans, struct auth_state *st,
	   char *msg, size_t msz, enum ph_err *e)
{
	const char *p = ph_jtext(ans, "principal"), *why; /* not cut at a NUL */
	struct json_object *al = ph_jget(ans, "allow"), *as = ph_jget(ans, "assigns");
	if (p == NULL || !ph_auth_principal_ok(p))
		return "allow without a usable \"principal\"";
	st->principal = ph_xstrdup(p);
	if (al != NULL && (why = exec_access(al, &st->access)) != NULL)
		return why;
	if (as != NULL) {
		if ((why = exec_assigns(a, as)) != NULL)
			return why;
		st->assigns = json_object_get(as);
		r->who.assigns = st->assigns;
	}
	*e = grant(r, a, st->principal, al ? &st->access : NULL, msg, msz);
	return NULL;
}

/* An unauthorized answer: its message, and a challenge naming its "error"
 * (kept in st) instead of the configured one. Returns NULL or what is
 * wrong with the answer. */
static const char *
exec_unauthorized(struct ph_auth_conf *a, struct json_object *ans, struct auth_state *st, char *msg,
		  size_t msz, const struct ph_header **hdrs)
{
	const char *m, *error;
	if (opt_string(ans, "message", EXEC_MESSAGE_MAX, false, &m) != 0 ||
	    opt_string(ans, "error", 64, true, &error) != 0)
		return "unauthorized with a bad \"message\" or \"error\"";
	snprintf(msg, msz, "%s", m ? m : "Unauthorized");
	*hdrs = a->hdr_missing;
	if (error != NULL) {
		st->challenge = ph_auth_challenge(a, error, a->scope);
		st->hdrs[0] = (struct ph_header){"WWW-Authenticate", st->challenge};
		*hdrs = st->hdrs;
	}
	return NULL;
}

/* A forbidden answer: its message, and with a "scope" an
 * insufficient_scope challenge (kept in st). Returns NULL or what is wrong
 * with the answer. */
static const char *
exec_forbidden(struct ph_auth_conf *a, struct json_object *ans, struct auth_state *st, char *msg,
	       size_t msz, const struct ph_header **hdrs)
{
	const char *m, *scope;
	if (opt_string(ans, "message", EXEC_MESSAGE_MAX, false, &m) != 0 ||
	    opt_string(ans, "scope", 1024, true, &scope) != 0)
		return "forbidden with a bad \"message\" or \"scope\"";
	snprintf(msg, msz, "%s", m ? m : "Forbidden");
	if (scope != NULL) {
		/* RFC 6750 3.1: a token without the scope this needs */
		st->challenge = ph_auth_challenge(a, "insufficient_scope", scope);
		st->hdrs[0] = (struct ph_header){"WWW-Authenticate", st->challenge};
		*hdrs = st->hdrs;
	}
	return NULL;
}

/* Reads the authenticator's answer ans (borrowed, may be NULL) into the
 * request: the decision sets *e, msg and *hdrs; what outlives this call
 * goes to r->auth_state. Returns NULL or what is wrong with the answer. */
static const char *
exec_decide(struct ph_req *r, struct ph_auth_conf *a, struct json_object *ans, char *msg, size_t msz,
	    const struct ph_header **hdrs, enum ph_err *e)
{
	const char *decision = ph_jtext(ans, "decision");
	struct auth_state *st;
	if (decision == NULL)
		return "the answer is not a JSON object with a \"decision\"";
	st = ph_xcalloc(1, sizeof *st);
	r->auth_state = st;
	if (strcmp(decision, "allow") == 0)
		return exec_allow(r, a, ans, st, msg, msz, e);
	if (strcmp(decision, "unauthorized") == 0) {
		*e = PH_E_UNAUTHORIZED;
		return exec_unauthorized(a, ans, st, msg, msz, hdrs);
	}
	if (strcmp(decision, "forbidden") == 0) {
		*e = PH_E_FORBIDDEN;
		return exec_forbidden(a, ans, st, msg, msz, hdrs);
	}
	return "\"decision\" is not allow, unauthorized or forbidden";
}

/* An authenticator that failed (why, not NULL) fails the request: 500,
 * no principal. Its output may echo the credentials: the log says what is
 * wrong, never what it was. Returns e when why is NULL. */
static enum ph_err
answer_failed(struct ph_req *r, const char *who, const char *why, char *msg, size_t msz,
	      const struct ph_header **hdrs, enum ph_err e)
{
	if (why == NULL)
		return e;
	ph_log("error", "auth: authenticator %s: %s", who, why);
	snprintf(msg, msz, "Internal error: authentication failed");
	*hdrs = NULL;
	r->who.principal = NULL;
	r->who.access = NULL;
	r->who.assigns = NULL;
	return PH_E_INTERNAL;
}

/* auth.mode module: the function gets the exec authenticator's input as
 * its arguments (kind "auth") and answers with the same document as its
 * structuredContent (phantom_auth_allow...), checked the same way. */
static enum ph_err
check_module(struct ph_req *r, struct ph_auth_conf *a, char *msg, size_t msz,
	     const struct ph_header **hdrs)
{
	struct json_object *in = exec_input(r, a), *ans;
	struct ph_invocation inv;
	const char *why;
	enum ph_err e = PH_E_INTERNAL;
	memset(&inv, 0, sizeof inv);
	inv.kind = PHANTOM_KIND_AUTH;
	inv.label = "auth";
	inv.arguments = in;
	ans = ph_call_handler(r, a->module, &inv);
	why = ans == NULL ? "it failed (see the line above)" : exec_decide(r, a, ans, msg, msz, hdrs, &e);
	e = answer_failed(r, a->module->symbol, why, msg, msz, hdrs, e);
	json_object_put(ans);
	json_object_put(in);
	return e;
}

static enum ph_err
check_exec(struct ph_req *r, struct ph_auth_conf *a, char *msg, size_t msz,
	   const struct ph_header **hdrs)
{
	struct json_object *in = exec_input(r, a), *ans = NULL;
	struct ph_exec_result res;
	char err[256] = "";
	const char *text, *why;
	size_t len;
	enum ph_err e = PH_E_INTERNAL;

	text = json_object_to_json_string_length(in, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
						 &len);
	if (run_command(a, text, len, &res, err, sizeof err) != 0) {
		why = err;
	} else {
		bool key_nul = false;
		/* a member name cut at a NUL ("principal\u0000") would pass for another */
		if (!ph_json_parse_ex(res.out, res.out_len, PH_JSON_DEPTH_AUTH_ANSWER, &ans, &key_nul) || key_nul) {
			json_object_put(ans);
			ans = NULL;
		}
		why = exec_decide(r, a, ans, msg, msz, hdrs, &e);
	}
	e = answer_failed(r, a->command[0], why, msg, msz, hdrs, e);
	json_object_put(ans);
	json_object_put(in);
	sodium_memzero(res.out, res.out_len);
	ph_exec_result_free(&res);
	return e;
}

enum ph_err
ph_auth_check(struct ph_req *r, char *msg, size_t msz, const struct ph_header **hdrs)
{
	struct ph_auth_conf *a = r->srv->conf->auth;
	*hdrs = NULL;
	if (a == NULL)
		return PH_OK;
	/* what this request sees may depend on who asks (ph_access_restricted) */
	r->who.restricted = a->nallow > 0 || ((a->mode == PH_AUTH_EXEC || a->mode == PH_AUTH_MODULE) && r->ex->http);
	if (!r->ex->http) {
		/* stdio: the user who started the process is the client; there
		 * are no headers, so only the configured principal applies */
		if (a->stdio_principal != NULL)
			return grant(r, a, a->stdio_principal, NULL, msg, msz);
		return PH_OK;
	}
	switch (a->mode) {
	case PH_AUTH_NONE:
		return PH_OK;
	case PH_AUTH_BEARER:
		return check_bearer(r, a, msg, msz, hdrs);
	case PH_AUTH_REMOTE_USER:
		return check_remote_user(r, a, msg, msz, hdrs);
	case PH_AUTH_EXEC:
		return check_exec(r, a, msg, msz, hdrs);
	case PH_AUTH_MODULE:
		return check_module(r, a, msg, msz, hdrs);
	case PH_AUTH_OAUTH:
		return check_oauth(r, a, msg, msz, hdrs);
	}
	return PH_E_INTERNAL;
}

void
ph_auth_end(struct ph_req *r)
{
	struct auth_state *st = r->auth_state;
	if (st == NULL)
		return;
	if (r->who.access == &st->access)
		r->who.access = NULL;
	if (r->who.principal == st->principal)
		r->who.principal = NULL;
	if (r->who.assigns == st->assigns)
		r->who.assigns = NULL;
	json_object_put(st->assigns);
	free(st->principal);
	ph_auth_access_free(&st->access);
	free(st->challenge);
	free(st);
	r->auth_state = NULL;
}

/* ---- RFC 9728 metadata --------------------------------------------------------------- */

const char *
ph_auth_metadata(struct ph_req *r)
{
	const struct ph_auth_conf *a = r->srv->conf->auth;
	const char *uri;
	size_t n;
	if (a == NULL || a->metadata_path == NULL)
		return NULL;
	uri = param(r, "REQUEST_URI");
	if (uri == NULL)
		return NULL;
	n = strcspn(uri, "?#");
	if (n != strlen(a->metadata_path) || memcmp(uri, a->metadata_path, n) != 0)
		return NULL;
	r->target = a->metadata_path;
	return a->metadata_json;
}
