/* ph_auth.h: authentication: the `auth` configuration section and the
 * request-time checks the core runs. What a principal may see is checked by
 * the features through ph_access_allowed (ph_server.h, ph_access.c).
 * docs/auth.md describes the behaviour for users. */
#ifndef PH_AUTH_H
#define PH_AUTH_H
#include "first.h"
#include "ph_config.h"
#include "ph_exchange.h"
#include "ph_access.h"
#include "ph_server.h"
#include <sodium.h>
#include <stdio.h>

enum ph_auth_mode { PH_AUTH_NONE, PH_AUTH_BEARER, PH_AUTH_REMOTE_USER, PH_AUTH_EXEC, PH_AUTH_MODULE, PH_AUTH_OAUTH };

/* Longest bearer token accepted; longer ones are invalid without hashing. */
#define PH_AUTH_TOKEN_MAX 4096
/* Longest principal name (configuration, REMOTE_USER, authenticator). */
#define PH_AUTH_PRINCIPAL_MAX 256

struct ph_allow_entry {
	char *principal;
	struct ph_access access;
	struct ph_rate_conf rate; /* requests 0: limits.rate applies; -1: no limit */
};

/* A configured token: its SHA-256, or an argon2 string from
 * crypto_pwhash_str (kept in a full-size buffer: libsodium reads
 * crypto_pwhash_STRBYTES bytes). */
struct ph_token {
	char *principal;
	bool argon2;
	unsigned char sha256[crypto_hash_sha256_BYTES];
	char argon2_str[crypto_pwhash_STRBYTES];
};

/* A successful argon2 verification remembered by this worker: the token's
 * BLAKE2b under the configuration's random cache_key (a memory dump does
 * not give a digest to brute-force offline) and the entry it matched. */
struct ph_auth_cached {
	unsigned char digest[crypto_generichash_BYTES];
	size_t token;
};

struct ph_auth_conf {
	enum ph_auth_mode mode;
	char *realm, *resource_metadata, *scope; /* WWW-Authenticate parameters */
	struct ph_token *tokens;                 /* tokens plus tokens_file */
	size_t ntokens;
	char *tokens_file;                       /* resolved path */
	char **command;                          /* exec argv, NULL-terminated */
	struct ph_handler *module;               /* module: auth.module's auth.symbol */
	long long timeout_ms, max_output, argon2_cache;
	long long max_verify;                    /* auth.max_concurrent_verify */
	struct ph_rate_conf fail;                /* auth.fail_limit per fail_window_s */
	long long max_assigns, assigns_depth; /* exec: bounds of "assigns" */
	char **headers;                          /* exec: lower-case header names */
	char **header_params;                    /* ... and their CGI names */
	size_t nheaders;
	char *stdio_principal;
	bool default_deny;                       /* default_access: none */
	struct ph_allow_entry *allow;            /* sorted by principal */
	size_t nallow;
	char *metadata_path, *metadata_json;     /* RFC 9728 document */
	struct json_object *metadata_doc;        /* ... while the section is read */
	bool scopes_derived;                     /* oauth: its scopes_supported is ours to fill */
	struct ph_oauth_conf *oauth;             /* oauth: auth.oauth (ph_oauth.c) */
	char *challenge_scope;                   /* oauth: 403 for auth.oauth.required_scopes */
	struct ph_header hdr_scope[2];
	/* built at load */
	char *challenge, *challenge_invalid;     /* WWW-Authenticate values */
	struct ph_header hdr_missing[2], hdr_invalid[2];
	/* Mutable per worker (each worker has its own copy after fork); freed
	 * with the configuration, so a reload forgets it. */
	struct ph_auth_cached *cache;
	size_t ncache, cache_next;
	unsigned char cache_key[crypto_generichash_KEYBYTES]; /* random at load */
};

/* The parser of the `auth` section is declared in ph_sections.h. */

/* The compare helper: the index of the sha256 token entry whose digest
 * equals digest, or -1. Every entry is compared with sodium_memcmp and the
 * result is selected without a branch, so the time taken depends on the
 * number of entries only, not on which entry (if any) matched or on how many
 * leading bytes agree. */
long ph_auth_sha256_find(const struct ph_auth_conf *a, const unsigned char *digest) PH_WUR;

/* True when s may stand inside a quoted-string of an HTTP header
 * (WWW-Authenticate realm, scope, error): printable ASCII, no '"' or '\'. */
bool ph_auth_quotable(const char *s);


/* ---- per request (the core) ---- */
/* Authentication (ph_auth.c): runs after the envelope is parsed and before
 * the routing headers are checked. Sets r->who.principal. Returns PH_OK, or
 * PH_E_UNAUTHORIZED / PH_E_FORBIDDEN with a message and the response headers
 * to add (static or owned by the server; borrowed). */
enum ph_err ph_auth_check(struct ph_req *r, char *msg, size_t msz, const struct ph_header **hdrs);
/* auth.mode oauth, a document without scopes_supported of its own: adds
 * the scopes of the auth.allow "scope:NAME" entries and those of scopes (an
 * array: the items' auth_scopes) to the one made from auth.oauth, never
 * offline_access. Called once the whole configuration is read. */
void ph_auth_metadata_scopes(struct ph_auth_conf *a, struct json_object *scopes);
/* The GET route of the HTTP rules: when REQUEST_URI is auth.metadata.path,
 * the OAuth protected-resource metadata document (RFC 9728; borrowed from
 * the configuration), else NULL. */
const char *ph_auth_metadata(struct ph_req *r);
/* The allow-lists the configuration gives principal (NULL: none, or an
 * anonymous request); *denied is set when it has none and default_access
 * is none. What an exec authenticator returned is not known here. For a
 * process that serves no request itself (the hub re-checking a stream's
 * subscriptions after a reload). */
const struct ph_access *ph_auth_configured_access(const struct ph_server *srv, const char *principal,
						  bool *denied);
/* The auth.oauth settings of srv's configuration, NULL when the mode is
 * not oauth (the master's key fetches, ph_oauth_tick). */
struct ph_oauth_conf *ph_auth_oauth(const struct ph_server *srv);
/* An item's auth_scopes (n scopes) against the request's token: true when
 * it has them all or the mode is not oauth. Otherwise false, with the 403
 * message and the insufficient_scope challenge naming every scope the
 * operation needs (auth.oauth.required_scopes and need) in *hdrs (kept
 * until ph_auth_end). */
bool ph_auth_scopes_ok(struct ph_req *r, char *const *need, size_t n, char *msg, size_t msz,
		       const struct ph_header **hdrs);
/* Releases what ph_auth_check kept for the request (after the log line). */
void ph_auth_end(struct ph_req *r);
/* The rate limit of the request's principal from auth.allow.<principal>.rate
 * (borrowed; requests -1 is "none"), or NULL: limits.rate applies. */
const struct ph_rate_conf *ph_auth_rate(const struct ph_req *r);
#endif
