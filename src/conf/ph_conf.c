/* ph_conf.c: the configuration key table and the loader that walks it. */
#include "first.h"
#include "ph_conf.h"
#include "ph_cidr.h"
#include "ph_listen_addr.h"
#include "ph_sections.h"
#include "ph_util.h"
#include "ph_yread.h"
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ktype {
	K_SECTION, /* a map whose keys are further table entries */
	K_STR,
	K_INT,
	K_BOOL,
	K_ENUM,    /* one of the words in .enums, separated by '|' */
	K_LIST,    /* "*" or a list of strings */
	K_CUSTOM,  /* parsed by a feature module's parser, after its rows in .sub */
	K_NODE,    /* a key of a section that the section's parser reads itself */
};

struct key {
	const char *name; /* dotted path */
	enum ktype type;
	long long min, max;
	const char *def; /* default, as YAML text; NULL = unset */
	bool reloadable;
	size_t off;
	const char *enums;
	const char *doc;
	ph_conf_parse_fn parse; /* K_CUSTOM */
	ph_conf_free_fn free;   /* K_CUSTOM, may be NULL */
	/* K_CUSTOM: the rows of the section's keys, whose offsets are into a
	 * struct of opts_size bytes (ph_conf.h) handed to parse as x->opts */
	const struct key *sub;
	size_t nsub, opts_size;
};

#define OFF(f) offsetof(struct ph_config, f)
#define MAXLL 9223372036854775807LL
#define ROWS(t, opts) t, PH_ARRAY_LEN(t), sizeof(struct opts)

/* ---- the keys of the feature sections ---------------------------------------- */

#define SOFF(f) offsetof(struct ph_state_opts, f)
static const struct key state_keys[] = {
	{"request_state.secret_file", K_STR, 1, 4096, NULL, true, SOFF(secret_file), NULL,
	 "file holding the secret (at least 32 bytes; trailing newlines dropped), relative to this file"},
	{"request_state.secret_env", K_STR, 1, 4096, NULL, true, SOFF(secret_env), NULL,
	 "environment variable holding the secret instead (not both)"},
	{"request_state.salt", K_STR, 0, 65536, "''", true, SOFF(salt), NULL,
	 "mixed into the key; the same on every host that shares the secret"},
	{"request_state.max_age", K_INT, 1, 604800, "300", true, SOFF(max_age), NULL,
	 "seconds a requestState stays valid"},
	{"request_state.max_size", K_INT, 256, 16777216, "65536", true, SOFF(max_size), NULL,
	 "largest requestState accepted, in bytes"},
	{"request_state.previous_secret_files", K_NODE, 0, 0, NULL, true, SOFF(previous_secret_files), NULL,
	 "older secrets (files) still accepted for opening during a key rotation, at most 8"},
};

#define COFF(f) offsetof(struct ph_cluster_opts, f)
static const struct key cluster_keys[] = {
	{"cluster.redis", K_STR, 1, 200, NULL, true, COFF(redis), NULL,
	 "the Redis every host names: redis://HOST:PORT/DB or unix:PATH (one endpoint; no TLS)"},
	{"cluster.host", K_STR, 0, 64, "''", true, COFF(host), NULL,
	 "this host's name among the hosts ('': the system's host name); unique per host"},
	{"cluster.prefix", K_STR, 0, 64, "'phantom:'", true, COFF(prefix), NULL,
	 "the start of every key Phantom makes in Redis"},
	{"cluster.password_file", K_STR, 1, 4096, NULL, true, COFF(password_file), NULL,
	 "a file holding the password Phantom gives Redis (AUTH); relative to the configuration file"},
	{"cluster.timeout_ms", K_INT, 10, 60000, "500", true, COFF(timeout_ms), NULL,
	 "longest wait for Redis to connect or answer one command; past it what needs Redis fails"},
	{"cluster.lease_ms", K_INT, 1000, 3600000, "15000", true, COFF(lease_ms), NULL,
	 "a host renews its lease this often divided by 3; once it lapses the others fail its tasks"},
	{"cluster.backoff_max_ms", K_INT, 100, 600000, "5000", true, COFF(backoff_max_ms), NULL,
	 "after Redis failed, tries wait 100 ms doubling up to this before the next connect"},
	{"cluster.lock_ms", K_INT, 100, 600000, "5000", true, COFF(lock_ms), NULL,
	 "a task record's lock in Redis expires after this long (a holder that died)"},
};

#define AOFF(f) offsetof(struct ph_auth_opts, f)
static const struct key auth_keys[] = {
	{"auth.mode", K_ENUM, 0, 0, "none", true, AOFF(mode), "none|bearer|remote_user|exec|module|oauth",
	 "how a caller is authenticated"},
	{"auth.realm", K_STR, 1, 256, "phantom", true, AOFF(realm), NULL, "realm of WWW-Authenticate"},
	{"auth.resource_metadata", K_STR, 1, 2048, NULL, true, AOFF(resource_metadata), NULL,
	 "absolute http(s) URL of the RFC 9728 document, sent in every 401"},
	{"auth.scope", K_STR, 1, 1024, NULL, true, AOFF(scope), NULL, "scope parameter of every 401"},
	{"auth.tokens", K_NODE, 0, 0, NULL, true, AOFF(tokens), NULL,
	 "bearer: a list of {principal, sha256 | argon2}"},
	{"auth.tokens_file", K_STR, 1, 4096, NULL, true, AOFF(tokens_file), NULL,
	 "bearer: the same list in its own file, relative to this file"},
	{"auth.argon2_cache", K_INT, 0, 65536, "64", true, AOFF(argon2_cache), NULL,
	 "successful argon2 checks a worker remembers"},
	{"auth.max_concurrent_verify", K_INT, 1, 64, "2", true, AOFF(max_concurrent_verify), NULL,
	 "argon2 checks running at once on this host; past that 429"},
	{"auth.fail_limit", K_INT, 0, 1000000, "10", true, AOFF(fail_limit), NULL,
	 "bearer: invalid tokens a client address may send per fail_window_s (0: no limit)"},
	{"auth.fail_window_s", K_INT, 1, 86400, "60", true, AOFF(fail_window_s), NULL,
	 "bearer: the window of auth.fail_limit, in seconds"},
	{"auth.max_assigns", K_INT, 2, 1048576, "4096", true, AOFF(max_assigns), NULL,
	 "exec, module: largest \"assigns\" object an authenticator may return, in bytes of JSON"},
	{"auth.assigns_depth", K_INT, 1, 16, "4", true, AOFF(assigns_depth), NULL,
	 "exec, module: deepest nesting of that object (1: flat values only)"},
	{"auth.command", K_NODE, 0, 0, NULL, true, AOFF(command), NULL,
	 "exec: the authenticator as an argument list (1 to 64), found as a handler's exec is"},
	{"auth.timeout_ms", K_NODE, 0, 0, NULL, true, AOFF(timeout_ms), NULL,
	 "exec: 1 to 60000 ms, default 2000"},
	{"auth.max_output", K_NODE, 0, 0, NULL, true, AOFF(max_output), NULL,
	 "exec: bytes of its answer, 64 to 1048576, default 65536"},
	{"auth.headers", K_NODE, 0, 0, NULL, true, AOFF(headers), NULL,
	 "exec, module: the request headers the authenticator gets (1 to 64 names)"},
	{"auth.module", K_STR, 1, 4096, NULL, true, AOFF(module), NULL,
	 "module: the shared object of the authenticator (found as a handler module is)"},
	{"auth.symbol", K_STR, 1, 256, NULL, true, AOFF(symbol), NULL,
	 "module: the authenticator function it exports (a phantom_handler_fn)"},
	{"auth.stdio_principal", K_STR, 1, 256, NULL, true, AOFF(stdio_principal), NULL,
	 "the principal of --stdio"},
	{"auth.default_access", K_ENUM, 0, 0, "all", true, AOFF(default_access), "all|none",
	 "what a principal without an allow entry sees"},
	{"auth.metadata", K_NODE, 0, 0, NULL, true, AOFF(metadata), NULL,
	 "{path, document | file}: the RFC 9728 document served at path"},
	{"auth.allow", K_NODE, 0, 0, NULL, true, AOFF(allow), NULL,
	 "per-principal allow-lists of tools, prompts, resources, skills"},
	{"auth.oauth", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "oauth: validating access tokens of an authorization server (docs/auth.md)"},
	{"auth.oauth.issuer", K_STR, 1, 2048, NULL, true, AOFF(oauth.issuer), NULL,
	 "the authorization server's issuer; iss must equal it; its metadata gives jwks_uri"},
	{"auth.oauth.jwks_uri", K_STR, 1, 2048, NULL, true, AOFF(oauth.jwks_uri), NULL,
	 "where the signing keys are fetched (unset: from the issuer's metadata)"},
	{"auth.oauth.jwks_file", K_STR, 1, 4096, NULL, true, AOFF(oauth.jwks_file), NULL,
	 "the signing keys as a JWK set file instead of fetching them, relative to this file"},
	{"auth.oauth.audiences", K_NODE, 0, 0, NULL, true, AOFF(oauth.audiences), NULL,
	 "accepted aud values (default: the resource of the RFC 9728 document)"},
	{"auth.oauth.audience_match", K_ENUM, 0, 0, "exact", true, AOFF(oauth.audience_match), "exact|slash",
	 "exact, or slash: a trailing '/' on either side does not matter"},
	{"auth.oauth.client_id_audience", K_BOOL, 0, 0, "false", true, AOFF(oauth.client_id_audience), NULL,
	 "a token without aud is accepted when client_id is one of audiences (Amazon Cognito)"},
	{"auth.oauth.algorithms", K_NODE, 0, 0, NULL, true, AOFF(oauth.algorithms), NULL,
	 "accepted signature algorithms, of RS256, PS256, ES256, EdDSA (default: all four)"},
	{"auth.oauth.clock_skew_s", K_INT, 0, 600, "60", true, AOFF(oauth.clock_skew_s), NULL,
	 "seconds of clock difference allowed on exp, nbf and iat"},
	{"auth.oauth.typ", K_ENUM, 0, 0, "lenient", true, AOFF(oauth.typ), "lenient|at+jwt",
	 "at+jwt: the header's typ must be at+jwt (RFC 9068); lenient also takes JWT or none"},
	{"auth.oauth.scope_claims", K_NODE, 0, 0, NULL, true, AOFF(oauth.scope_claims), NULL,
	 "claims holding the granted scopes, a string or an array (default: [scope, scp])"},
	{"auth.oauth.principal_claim", K_STR, 1, 256, "sub", true, AOFF(oauth.principal_claim), NULL,
	 "the claim naming the principal"},
	{"auth.oauth.assigns_claims", K_NODE, 0, 0, NULL, true, AOFF(oauth.assigns_claims), NULL,
	 "claims copied into the principal's assigns (default: none)"},
	{"auth.oauth.required_scopes", K_NODE, 0, 0, NULL, true, AOFF(oauth.required_scopes), NULL,
	 "scopes every request needs (default: none)"},
	{"auth.oauth.scope_implies", K_NODE, 0, 0, NULL, true, AOFF(oauth.scope_implies), NULL,
	 "{scope: [scopes it implies]}: scope hierarchies"},
	{"auth.oauth.refresh_s", K_INT, 10, 604800, "600", true, AOFF(oauth.refresh_s), NULL,
	 "the keys are fetched again after this many seconds"},
	{"auth.oauth.min_refresh_s", K_INT, 1, 86400, "30", true, AOFF(oauth.min_refresh_s), NULL,
	 "at most one fetch per this many seconds for the host, whatever asks for it"},
	{"auth.oauth.refresh_wait_ms", K_INT, 0, 10000, "1000", true, AOFF(oauth.refresh_wait_ms), NULL,
	 "longest a token naming an unknown kid waits for the fetch it asked for (then 503)"},
	{"auth.oauth.max_token_bytes", K_INT, 256, 65536, "8192", true, AOFF(oauth.max_token_bytes), NULL,
	 "longest access token accepted"},
	{"auth.oauth.cache_dir", K_STR, 1, 4000, "/run/phantom/oauth", true, AOFF(oauth.cache_dir), NULL,
	 "where fetched keys are kept for every worker (created mode 0700; relative to this file)"},
	{"auth.oauth.fetch_timeout_ms", K_INT, 100, 60000, "3000", true, AOFF(oauth.fetch_timeout_ms), NULL,
	 "longest fetch of metadata, keys or an introspection"},
	{"auth.oauth.max_fetch_bytes", K_INT, 1024, 16777216, "1048576", true, AOFF(oauth.max_fetch_bytes),
	 NULL, "largest metadata, key set or introspection answer accepted"},
	{"auth.oauth.ca_file", K_STR, 1, 4096, NULL, true, AOFF(oauth.ca_file), NULL,
	 "PEM file of the CA certificates the fetches trust (default: SSL_CERT_FILE, else the system's "
	 "bundle); relative to this file"},
	{"auth.oauth.token_cache", K_INT, 0, 1000000, "1024", true, AOFF(oauth.token_cache), NULL,
	 "verified tokens a worker remembers until they expire"},
	{"auth.oauth.introspection", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "RFC 7662 introspection of tokens that are not JWTs (off while endpoint is unset)"},
	{"auth.oauth.introspection.endpoint", K_STR, 1, 2048, NULL, true, AOFF(oauth.introspection.endpoint),
	 NULL, "the introspection endpoint URL"},
	{"auth.oauth.introspection.client_id", K_STR, 1, 1024, NULL, true,
	 AOFF(oauth.introspection.client_id), NULL, "this server's client id at the authorization server"},
	{"auth.oauth.introspection.secret_file", K_STR, 1, 4096, NULL, true,
	 AOFF(oauth.introspection.secret_file), NULL, "file holding its client secret, relative to this file"},
	{"auth.oauth.introspection.cache_s", K_INT, 0, 86400, "60", true, AOFF(oauth.introspection.cache_s),
	 NULL, "seconds an introspection answer is reused at most (never past the token's exp)"},
	{"auth.oauth.introspection.negative_cache_s", K_INT, 0, 3600, "5", true,
	 AOFF(oauth.introspection.negative_cache_s), NULL,
	 "seconds an answer of active false is reused (0: never), so bad tokens do not each ask"},
};

#define LOFF(f) offsetof(struct ph_list_opts, f)
#define LIST_KEYS(sec, what)                                                                        \
	{sec ".ttl_ms", K_INT, 0, 86400000, NULL, true, LOFF(ttl_ms), NULL,                          \
	 "ttlMs of " what " (unset: server.ttl_ms)"},                                                \
	{sec ".scope", K_ENUM, 0, 0, NULL, true, LOFF(scope), "public|private",                      \
	 "cacheScope of " what " (unset: server.scope)"},                                            \
	{sec ".items", K_NODE, 0, 0, NULL, true, LOFF(items), NULL, "the list itself"}
static const struct key tools_keys[] = {LIST_KEYS("tools", "tools/list")};
static const struct key prompts_keys[] = {LIST_KEYS("prompts", "prompts/list")};
static const struct key resources_keys[] = {LIST_KEYS("resources", "resources/list")};
static const struct key templates_keys[] = {LIST_KEYS("resource_templates", "resources/templates/list")};

#define KOFF(f) offsetof(struct ph_skills_opts, f)
static const struct key skills_keys[] = {
	{"skills.manifest", K_STR, 1, 4096, NULL, true, KOFF(manifest), NULL,
	 "the skills manifest (phantom-skills(5)), relative to this file; required"},
	{"skills.max_files", K_INT, 1, 65536, "512", true, KOFF(max_files), NULL,
	 "most files one skill may serve, counting its nested skills"},
	{"skills.max_bytes", K_INT, 1, 1073741824, "16777216", true, KOFF(max_bytes), NULL,
	 "most bytes one skill may serve, counting its nested skills"},
	{"skills.max_depth", K_INT, 1, 64, "16", true, KOFF(max_depth), NULL,
	 "deepest directory nesting inside a skill directory"},
	{"skills.digest_cache", K_BOOL, 0, 0, "true", true, KOFF(digest_cache), NULL,
	 "reuse a static file's digest until its inode, size, mtime or ctime changes"},
};

#define POFF(f) offsetof(struct ph_pool_opts, f)
static const struct key pool_keys[] = {
	{"workers.mode", K_ENUM, 0, 0, "dynamic", true, POFF(mode), "static|dynamic|ondemand",
	 "static: max workers always (php-fpm pm = static); dynamic: start, then min_idle to "
	 "max_idle idle ones (pm = dynamic); ondemand: none until a connection waits (pm = ondemand)"},
	{"workers.max", K_INT, 1, 256, "32", true, POFF(max), NULL,
	 "most workers at once; past it requests wait in the listen queue (pm.max_children)"},
	{"workers.start", K_INT, 0, 256, "4", true, POFF(start), NULL,
	 "dynamic: workers forked at start and on reload (pm.start_servers)"},
	{"workers.min_idle", K_INT, 0, 256, "2", true, POFF(min_idle), NULL,
	 "dynamic: fewer idle workers than this and more are forked (pm.min_spare_servers)"},
	{"workers.max_idle", K_INT, 1, 256, "4", true, POFF(max_idle), NULL,
	 "more idle workers than this and the one idle longest ends, one a second (pm.max_spare_servers)"},
	{"workers.idle_timeout_ms", K_INT, 100, 86400000, "10000", true, POFF(idle_timeout_ms), NULL,
	 "a worker idle this long ends, down to min_idle (pm.process_idle_timeout)"},
	{"workers.spawn_rate", K_INT, 1, 256, "16", true, POFF(spawn_rate), NULL,
	 "forks in the first second of demand; the rate doubles each second demand lasts"},
	{"workers.max_spawn_rate", K_INT, 1, 1024, "64", true, POFF(max_spawn_rate), NULL,
	 "forks a second that doubling stops at (pm.max_spawn_rate)"},
	{"workers.memory_percent", K_INT, 0, 100, "50", true, POFF(memory_percent), NULL,
	 "warn when max x a worker's measured RSS exceeds this share of MemTotal (0: no check)"},
	{"workers.full_log_interval_s", K_INT, 1, 86400, "60", true, POFF(full_log_s), NULL,
	 "\"pool reached its maximum\" is logged at most once in this many seconds"},
};

/* Reports workers.A above workers.B; true when it did. */
static bool
pool_order(struct ph_conf_ctx *x, const struct ph_ynode *n, const char *a, long long va, const char *b,
	   long long vb)
{
	if (va <= vb)
		return false;
	ph_conf_problem(x->probs, x->file, n->line, "workers.%s (%lld) may not exceed workers.%s (%lld)", a, va,
			b, vb);
	return true;
}

/* Whether the workers mapping n gives key a value. */
static bool
pool_given(const struct ph_ynode *n, const char *key)
{
	const struct ph_ynode *v = ph_yaml_get(n, key);
	return v != NULL && !ph_yaml_is_null(v);
}

/* Fits the settings of p that the mapping n leaves at their defaults to
 * those it gives: a default is lowered to the bound above it (start and
 * max_idle to max, min_idle to max_idle, spawn_rate to max_spawn_rate)
 * and raised to a value given below it (max_idle to min_idle, within
 * max; max_spawn_rate to spawn_rate), so that {max: 3} needs no other
 * key. What n gives is left as it is, for pool_order. */
static void
pool_fit(const struct ph_ynode *n, struct ph_pool_conf *p)
{
	if (!pool_given(n, "max_idle")) {
		if (pool_given(n, "min_idle") && p->max_idle < p->min_idle)
			p->max_idle = p->min_idle;
		if (p->max_idle > p->max)
			p->max_idle = p->max;
	}
	if (!pool_given(n, "min_idle") && p->min_idle > p->max_idle)
		p->min_idle = p->max_idle;
	if (!pool_given(n, "start") && p->start > p->max)
		p->start = p->max;
	if (!pool_given(n, "max_spawn_rate") && p->max_spawn_rate < p->spawn_rate)
		p->max_spawn_rate = p->spawn_rate;
	if (!pool_given(n, "spawn_rate") && p->spawn_rate > p->max_spawn_rate)
		p->spawn_rate = p->max_spawn_rate;
}

/* workers: an integer (static, that many; 0 or 1 a single process) or a
 * mapping read through pool_keys. Returns 0, or -1 after reporting. */
static int
parse_workers(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	static const struct ph_pool_conf fixed = {PH_POOL_STATIC, 4, 4, 0, 0, 10000, 16, 64, 50, 60};
	const struct ph_pool_opts *o = x->opts;
	struct ph_pool_conf *p = &x->c->pool;
	struct ph_ysink s = {x->probs, x->file, NULL, false};
	if (ph_yaml_is_null(n))
		return 0;
	if (n->kind == PH_Y_SCALAR) {
		if (ph_yread_int(&s, n, key, 0, 256, &x->c->workers) != 0)
			return -1;
		*p = fixed;
		p->max = p->start = x->c->workers;
		return 0;
	}
	if (o == NULL) {
		ph_conf_problem(x->probs, x->file, n->line, "%s: expected an integer or a mapping", key);
		return -1;
	}
	if (x->probs->n != x->before)
		return -1; /* a key did not fit its row */
	p->mode = strcmp(o->mode, "static") == 0    ? PH_POOL_STATIC
		  : strcmp(o->mode, "ondemand") == 0 ? PH_POOL_ONDEMAND
						     : PH_POOL_DYNAMIC;
	p->max = o->max;
	p->start = p->mode == PH_POOL_DYNAMIC ? o->start : p->mode == PH_POOL_STATIC ? o->max : 0;
	p->min_idle = p->mode == PH_POOL_DYNAMIC ? o->min_idle : 0;
	p->max_idle = o->max_idle;
	p->idle_timeout_ms = o->idle_timeout_ms;
	p->spawn_rate = o->spawn_rate;
	p->max_spawn_rate = o->max_spawn_rate;
	p->memory_percent = o->memory_percent;
	p->full_log_s = o->full_log_s;
	x->c->workers = o->max;
	pool_fit(n, p);
	/* only what the mode uses: static forks max workers and keeps them */
	if (p->mode == PH_POOL_DYNAMIC) {
		pool_order(x, n, "start", p->start, "max", p->max);
		if (!pool_order(x, n, "min_idle", p->min_idle, "max", p->max))
			pool_order(x, n, "min_idle", p->min_idle, "max_idle", p->max_idle);
	}
	if (p->mode != PH_POOL_STATIC) {
		pool_order(x, n, "max_idle", p->max_idle, "max", p->max);
		pool_order(x, n, "spawn_rate", p->spawn_rate, "max_spawn_rate", p->max_spawn_rate);
	}
	if (x->probs->n != x->before)
		return -1;
	return 0;
}

/* The one table. Order here is the order of conf/phantom.yaml and phantom.yaml(5). */
static const struct key keys[] = {
	{"server", K_SECTION, 0, 0, NULL, true, 0, NULL, "What the server says about itself."},
	{"server.name", K_STR, 1, 128, "phantom", true, OFF(server.name), NULL,
	 "serverInfo.name reported to clients"},
	{"server.version", K_STR, 1, 64, PACKAGE_VERSION, true, OFF(server.version), NULL,
	 "serverInfo.version"},
	{"server.title", K_STR, 0, 256, NULL, true, OFF(server.title), NULL, "serverInfo.title"},
	{"server.instructions", K_STR, 0, 65536, NULL, true, OFF(server.instructions), NULL,
	 "instructions returned by server/discover and initialize"},
	{"server.page_size", K_INT, 1, 1000, "100", true, OFF(server.page_size), NULL,
	 "items per page of every list method"},
	{"server.ttl_ms", K_INT, 0, 86400000, "0", true, OFF(server.ttl_ms), NULL,
	 "ttlMs cache hint of server/discover and of lists without their own"},
	{"server.scope", K_ENUM, 0, 0, "private", true, OFF(server.scope), "public|private",
	 "cacheScope of those results"},
	{"server.app_meta", K_ENUM, 0, 0, "all", true, OFF(server.app_meta), "all|declared",
	 "which clients get the apps' _meta.ui (tools and ui:// resources): all, or only those "
	 "declaring the io.modelcontextprotocol/ui extension"},
	{"workers", K_CUSTOM, 0, 0, "4", true, 0, NULL,
	 "worker processes: an integer (a static pool; 0 or 1 serves from a single process without "
	 "a master) or a mapping {mode, max, start, min_idle, max_idle, idle_timeout_ms, ...}",
	 parse_workers, NULL, ROWS(pool_keys, ph_pool_opts)},
	{"max_requests", K_INT, 0, MAXLL, "10000", true, OFF(max_requests), NULL,
	 "a worker is replaced after this many requests (0: never)"},
	{"shutdown_timeout", K_INT, 0, 3600, "30", false, OFF(shutdown_timeout), NULL,
	 "seconds in-flight requests get to finish on SIGTERM or reload"},
	{"listen", K_STR, 1, 4096, NULL, false, OFF(listen), NULL,
	 "HOST:PORT or unix:PATH to bind; unset: the socket inherited on fd 0"},
	{"listen_mode", K_STR, 1, 64, NULL, false, OFF(listen_mode), NULL,
	 "a unix socket's mode, octal 0 to 0777 (\"0660\"); unset: 0777 less the umask"},
	{"listen_owner", K_STR, 1, 256, NULL, false, OFF(listen_owner), NULL,
	 "a unix socket's owner, a user name or number (needs root); unset: the server's user"},
	{"listen_group", K_STR, 1, 256, NULL, false, OFF(listen_group), NULL,
	 "a unix socket's group, a name or number (root, or a group of the server's user)"},
	{"http", K_SECTION, 0, 0, NULL, true, 0, NULL, "Rules every HTTP request passes."},
	{"http.origins", K_LIST, 0, 0, "[]", true, OFF(http.origins), NULL,
	 "allowed Origin values (scheme://host[:port]) or \"*\"; a request without Origin is allowed"},
	{"http.hosts", K_LIST, 0, 0, "[localhost, 127.0.0.1, \"[::1]\"]", true, OFF(http.hosts), NULL,
	 "allowed Host names (any port) or \"*\""},
	{"http.max_body", K_INT, 64, 1073741824, "4194304", true, OFF(http.max_body), NULL,
	 "largest request body in bytes (413 above)"},
	{"http.params_timeout_ms", K_INT, 100, 3600000, "10000", true, OFF(http.params_timeout_ms), NULL,
	 "FastCGI: longest wait for a request's parameters once connected (connection closed, or 408)"},
	{"http.body_timeout_ms", K_INT, 100, 3600000, "30000", true, OFF(http.body_timeout_ms), NULL,
	 "FastCGI: longest wait for the whole body once the parameters are in (408 after)"},
	{"http.cors", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "CORS for browser clients on other origins (off while origins is empty)"},
	{"http.cors.origins", K_LIST, 0, 0, "[]", true, OFF(http.cors.origins), NULL,
	 "origins (scheme://host[:port]) or \"*\" that get CORS headers; they pass the Origin check too"},
	{"http.cors.max_age", K_INT, 0, 86400, "600", true, OFF(http.cors.max_age), NULL,
	 "Access-Control-Max-Age of a preflight, seconds"},
	{"http.health", K_STR, 1, 1024, NULL, true, OFF(http.health), NULL,
	 "path answering GET with 200 {status: ok} (503 while stopping); unset: off"},
	{"http.metrics", K_SECTION, 0, 0, NULL, true, 0, NULL, "Prometheus metrics (off while path is unset)"},
	{"http.metrics.path", K_STR, 1, 1024, NULL, true, OFF(http.metrics.path), NULL,
	 "path answering GET with the text exposition format 0.0.4; unset: off"},
	{"http.metrics.allow", K_LIST, 0, 0, "[127.0.0.0/8, \"::1/128\"]", true, OFF(http.metrics.allow),
	 NULL, "client addresses (CIDRs, REMOTE_ADDR) that may scrape; others get 403"},
	{"http.drain_ms", K_INT, 0, 600000, "0", true, OFF(http.drain_ms), NULL,
	 "after SIGTERM, keep serving this long with health answering 503, then stop"},
	{"limits", K_SECTION, 0, 0, NULL, true, 0, NULL, "Parser limits."},
	{"limits.json_depth", K_INT, 2, 1000, "64", true, OFF(limits.json_depth), NULL,
	 "deepest JSON nesting accepted in a request"},
	{"limits.yaml_depth", K_INT, 2, 1000, "32", true, OFF(limits.yaml_depth), NULL,
	 "deepest YAML nesting accepted in configuration, manifests and frontmatter"},
	{"limits.exec_timeout_ms", K_INT, 1, 86400000, "30000", true, OFF(limits.exec_timeout_ms), NULL,
	 "wall-clock time an exec handler may run before SIGTERM (per handler: timeout_ms)"},
	{"limits.exec_grace_ms", K_INT, 0, 60000, "1000", true, OFF(limits.exec_grace_ms), NULL,
	 "time between SIGTERM and SIGKILL to the handler's process group"},
	{"limits.exec_exit_grace_ms", K_INT, 0, 60000, "200", true, OFF(limits.exec_exit_grace_ms), NULL,
	 "how long stdout is still read after an exec handler exited, when a process it started holds it"},
	{"limits.exec_log_max", K_INT, 1024, 1073741824, "65536", true, OFF(limits.exec_log_max), NULL,
	 "bytes of an exec handler's stderr, and of its fd 3 lines that are no notification, logged per call"},
	{"limits.exec_max_output", K_INT, 1024, 1073741824, "4194304", true, OFF(limits.exec_max_output),
	 NULL, "bytes an exec handler may write on stdout (per handler: max_output)"},
	{"limits.exec_cpu_s", K_INT, 0, 86400, "60", true, OFF(limits.exec_cpu_s), NULL,
	 "RLIMIT_CPU seconds of an exec handler (0: inherited)"},
	{"limits.exec_memory", K_INT, 0, 1099511627776LL, "2147483648", true, OFF(limits.exec_memory),
	 NULL, "RLIMIT_AS bytes of an exec handler (0: inherited)"},
	{"limits.exec_files", K_INT, 0, 1048576, "64", true, OFF(limits.exec_files), NULL,
	 "RLIMIT_NOFILE of an exec handler (0: inherited)"},
	{"limits.exec_procs", K_INT, 0, 1048576, "256", true, OFF(limits.exec_procs), NULL,
	 "RLIMIT_NPROC of an exec handler, counted per user (0: inherited)"},
	{"limits.resource_bytes", K_INT, 1, 1073741824, "16777216", true, OFF(limits.resource_bytes), NULL,
	 "largest file served by a resource, resource template or prompt image"},
	{"limits.app_bytes", K_INT, 1, 1073741824, "1048576", true, OFF(limits.app_bytes), NULL,
	 "an app's HTML file larger than this is a load-time warning (some hosts refuse it)"},
	{"limits.completion_values", K_INT, 1, 100, "100", true, OFF(limits.completion_values), NULL,
	 "most values in one completion/complete answer"},
	{"limits.rate", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "token bucket per principal (or client address) over HTTP; 429 above"},
	{"limits.rate.requests", K_INT, 0, 1000000000, "0", true, OFF(limits.rate.requests), NULL,
	 "requests allowed per per_seconds (0: no limit)"},
	{"limits.rate.per_seconds", K_INT, 1, 86400, "1", true, OFF(limits.rate.per_seconds), NULL,
	 "the period of requests, in seconds"},
	{"limits.rate.burst", K_INT, 0, 1000000000, "0", true, OFF(limits.rate.burst), NULL,
	 "requests allowed at once after a quiet time (0: requests)"},
	{"limits.batch_max", K_INT, 1, 10000, "100", true, OFF(limits.batch_max), NULL,
	 "most messages in one JSON-RPC batch (2025-03-26 and 2024-11-05 clients only)"},
	{"subscriptions", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "subscriptions/listen streams (held by the hub when a master runs, else by a worker)."},
	{"subscriptions.max_ms", K_INT, 1000, 86400000, "300000", true, OFF(subscriptions.max_ms), NULL,
	 "a listen stream ends with a result after this long; the client listens again"},
	{"subscriptions.keepalive_ms", K_INT, 100, 3600000, "15000", true,
	 OFF(subscriptions.keepalive_ms), NULL, "keep-alive comment interval on listen streams"},
	{"subscriptions.alone_max_ms", K_INT, 100, 86400000, "2000", true, OFF(subscriptions.alone_max_ms), NULL,
	 "without a hub (CGI, mod_fcgid, one process) a listen stream holds a process: it ends with a "
	 "result after this long (or max_ms, the shorter)"},
	{"subscriptions.max_streams", K_INT, 0, 1000000, "0", true, OFF(subscriptions.max_streams), NULL,
	 "listen streams open at once on this host (0: 10000 with a hub, bounded by the open-file "
	 "limit; half the workers, at least 1, without one)"},
	{"subscriptions.max_per_principal", K_INT, 0, 1000000, "1000", true,
	 OFF(subscriptions.max_per_principal), NULL,
	 "listen streams one principal may hold in the hub at once (0: no limit)"},
	{"subscriptions.control_socket", K_STR, 0, 107, "/run/phantom/hub.sock", false,
	 OFF(subscriptions.control_socket), NULL,
	 "the hub's control socket for phantom-fcgi --notify (mode 0600; '': none)"},
	{"subscriptions.max_queue", K_INT, 1024, 67108864, "262144", true, OFF(subscriptions.max_queue),
	 NULL, "bytes queued for a listen stream whose client does not read before it is dropped"},
	{"tasks", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "tools that run as tasks (io.modelcontextprotocol/tasks): their store and limits; the hub "
	 "runs their processes, so tasks need a master"},
	{"tasks.dir", K_STR, 1, 4000, "/run/phantom/tasks", false, OFF(tasks.dir), NULL,
	 "the task store: one file per task (created mode 0700; relative to the configuration file)"},
	{"tasks.host", K_STR, 0, 32, "''", true, OFF(tasks.host), NULL,
	 "names this host in task ids (a-z 0-9 - _), so a proxy can route tasks/* by Mcp-Name"},
	{"tasks.ttl_ms", K_INT, 1000, 2592000000LL, "3600000", true, OFF(tasks.ttl_ms), NULL,
	 "how long a finished task is kept (ttlMs); a tool's task_ttl_ms overrides it"},
	{"tasks.poll_interval_ms", K_INT, 0, 3600000, "1000", true, OFF(tasks.poll_ms), NULL,
	 "pollIntervalMs suggested to clients (0: none)"},
	{"tasks.timeout_ms", K_INT, 1000, 2592000000LL, "3600000", true, OFF(tasks.timeout_ms), NULL,
	 "a task's process is stopped after this long unless the tool sets timeout_ms"},
	{"tasks.inline_ms", K_INT, 0, 60000, "0", true, OFF(tasks.inline_ms), NULL,
	 "a task whose process ends this soon is answered inline, as if it were no task; a tool's "
	 "task_inline_ms overrides it"},
	{"tasks.max_running", K_INT, 1, 100000, "64", true, OFF(tasks.max_running), NULL,
	 "task processes running at once on this host"},
	{"tasks.max_per_principal", K_INT, 0, 100000, "16", true, OFF(tasks.max_per_principal), NULL,
	 "task processes one principal may run at once (0: no limit)"},
	{"tasks.max_records", K_INT, 1, 10000000, "100000", true, OFF(tasks.max_records), NULL,
	 "task records kept on this host (running and finished)"},
	{"tasks.max_result", K_INT, 1024, 67108864, "1048576", true, OFF(tasks.max_result), NULL,
	 "bytes a task's process may write as its result"},
	{"tasks.purge_interval_ms", K_INT, 100, 86400000, "60000", true, OFF(tasks.purge_interval_ms), NULL,
	 "the hub goes over the task store this often: expired records removed, lost tasks failed"},
	{"subscriptions.max_task_ids", K_INT, 0, 100000, "1000", true, OFF(subscriptions.max_task_ids), NULL,
	 "task ids one listen stream may name in taskIds (more: -32602)"},
	{"subscriptions.max_resource_subscriptions", K_INT, 0, 100000, "1000", true,
	 OFF(subscriptions.max_resource_subscriptions), NULL,
	 "URIs one listen stream may name in resourceSubscriptions (more: -32602)"},
	{"subscriptions.max_watches", K_INT, 1, 1000000, "4096", true, OFF(subscriptions.max_watches),
	 NULL, "directories the hub watches at once for resourceSubscriptions (one per directory "
	 "holding subscribed files, shared by every stream); a stream that needs more ends with an error"},
	{"subscriptions.max_authorize", K_INT, 1, 10000, "16", true, OFF(subscriptions.max_authorize), NULL,
	 "subscriptions.authorize processes the hub runs at once before resources/updated; the streams "
	 "and sessions beyond wait, their changed URIs gathering for their next call"},
	{"subscriptions.authorize", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "a handler asked which resource subscriptions a principal may hold, at subscribe time and before "
	 "notifications: {exec | module, ...} (exec, timeout_ms, max_output, env, cwd, persistent, module, "
	 "symbol)", ph_conf_sub_authorize, ph_conf_registry_free, NULL, 0, 0},
	{"sessions", K_SECTION, 0, 0, NULL, true, 0, NULL,
	 "legacy 2025-11-25 sessions: the Mcp-Session-Id an initialize over HTTP answers with (a "
	 "token sealed with the request_state key) and what the hub remembers of them"},
	{"sessions.max_age", K_INT, 1, 2592000, "86400", true, OFF(sessions.max_age), NULL,
	 "seconds a session id stays valid after its initialize; later requests get 404"},
	{"sessions.max_terminated", K_INT, 1, 10000000, "100000", true, OFF(sessions.max_terminated),
	 NULL, "session ids ended with DELETE that the hub remembers (until they would have expired)"},
	{"sessions.park_timeout_ms", K_INT, 1000, 86400000, "300000", true, OFF(sessions.park_timeout_ms),
	 NULL, "a call waiting in the hub for the client's answers to the requests it pushed ends with an "
	 "error result after this long"},
	{"sessions.max_parked", K_INT, 1, 1000000, "10000", true, OFF(sessions.max_parked), NULL,
	 "calls waiting in the hub for a client's answers at once on this host"},
	{"sessions.max_answer", K_INT, 1024, 1073741824, "4194304", true, OFF(sessions.max_answer), NULL,
	 "bytes of a client's answers (the JSON of their results) to the requests one parked call "
	 "pushed; an answer over it gets 413 and ends the call with an error result"},
	{"sessions.answer_wait_ms", K_INT, 100, 600000, "10000", true, OFF(sessions.answer_wait_ms), NULL,
	 "a worker waits this long for the hub to take a client's answer to a pushed request (a hub "
	 "busy with many streams, an answer of megabytes); past it the POST gets 500 -32603 and the "
	 "call still waits for that answer"},
	{"sessions.max_state", K_INT, 1, 1000000, "10000", true, OFF(sessions.max_state), NULL,
	 "sessions holding state in the hub at once on this host (a log level, resource "
	 "subscriptions, GET streams); over it logging/setLevel and resources/subscribe get -32603 "
	 "and a GET stream 503, naming the key, and everything else keeps serving"},
	{"sessions.max_subscriptions", K_INT, 1, 100000, "100", true, OFF(sessions.max_subscriptions),
	 NULL, "resources/subscribe subscriptions one session may hold (more: -32603 naming the key)"},
	{"sessions.state_idle", K_INT, 1, 2592000, "3600", true, OFF(sessions.state_idle), NULL,
	 "seconds a session's state is kept after its last request while no GET stream is open "
	 "(it goes at the session's expiry, sessions.max_age, in any case)"},
	{"sessions.replay", K_INT, 0, 10000, "100", true, OFF(sessions.replay), NULL,
	 "events (resources/updated, list_changed) held per session for a GET stream that resumes "
	 "with Last-Event-ID; an id older than those held replays all that are held, after a comment"},
	{"sessions.on_end", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "a handler the hub calls when a legacy session is ended with DELETE or expires: {exec | module, "
	 "...} (exec, timeout_ms, max_output, env, cwd, persistent, module, symbol)",
	 ph_conf_session_end, ph_conf_registry_free, NULL, 0, 0},
	{"stdio", K_SECTION, 0, 0, NULL, false, 0, NULL,
	 "the --stdio front: how many requests run at once"},
	{"stdio.concurrency", K_INT, 1, 256, "8", false, OFF(stdio.concurrency), NULL,
	 "requests that run at once over --stdio, each calling its handler in a process of its own; "
	 "1 serves one request at a time in the one process"},
	{"stdio.queue", K_INT, 1, 100000, "256", false, OFF(stdio.queue), NULL,
	 "requests read ahead that wait for one of those turns; while that many wait, stdin is not read"},
	{"telemetry", K_SECTION, 0, 0, NULL, false, 0, NULL,
	 "OpenTelemetry spans and metrics exported over OTLP/HTTP (docs/telemetry.md); off until an "
	 "endpoint is set; the standard OTEL_* variables win over these keys"},
	{"telemetry.otlp", K_SECTION, 0, 0, NULL, false, 0, NULL, "where and how to export"},
	{"telemetry.otlp.endpoint", K_STR, 1, 4096, NULL, false, OFF(telemetry.endpoint), NULL,
	 "the collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT): /v1/traces and /v1/metrics are "
	 "appended"},
	{"telemetry.otlp.headers", K_STR, 1, 65536, NULL, false, OFF(telemetry.headers), NULL,
	 "headers sent with each export, key=value,key=value (values percent-encoded); secrets "
	 "belong in headers_file or OTEL_EXPORTER_OTLP_HEADERS"},
	{"telemetry.otlp.headers_file", K_STR, 1, 4096, NULL, false, OFF(telemetry.headers_file), NULL,
	 "a file holding the headers in the same form, relative to this file"},
	{"telemetry.otlp.protocol", K_ENUM, 0, 0, "http/protobuf", false, OFF(telemetry.protocol),
	 "http/protobuf", "the OTLP encoding (OTEL_EXPORTER_OTLP_PROTOCOL); http/protobuf, the "
	 "specification's default, is the one built in"},
	{"telemetry.otlp.compression", K_ENUM, 0, 0, "none", false, OFF(telemetry.compression),
	 "gzip|none", "gzip: request bodies gzipped when the build has zlib, a seventh of the bytes "
	 "for some 0.9 us of the exporter's CPU a request; none, the specification's default, "
	 "suits a collector on this host (OTEL_EXPORTER_OTLP_COMPRESSION)"},
	{"telemetry.otlp.timeout_ms", K_INT, 1, 3600000, "10000", false, OFF(telemetry.timeout_ms), NULL,
	 "one export request's time limit (OTEL_EXPORTER_OTLP_TIMEOUT)"},
	{"telemetry.service_name", K_STR, 1, 256, "phantom", false, OFF(telemetry.service_name), NULL,
	 "the resource's service.name (OTEL_SERVICE_NAME)"},
	{"telemetry.sample", K_STR, 1, 32, "1.0", false, OFF(telemetry.sample), NULL,
	 "the ratio of new traces sampled, 0 to 1; a request with a trace context follows its "
	 "parent's decision (OTEL_TRACES_SAMPLER parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG)"},
	{"telemetry.max_queue", K_INT, 1, 1000000, "2048", false, OFF(telemetry.max_queue), NULL,
	 "spans the exporter holds; more are dropped and counted (OTEL_BSP_MAX_QUEUE_SIZE)"},
	{"telemetry.max_batch", K_INT, 1, 1000000, "512", false, OFF(telemetry.max_batch), NULL,
	 "spans in one export request (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)"},
	{"telemetry.delay_ms", K_INT, 1, 3600000, "5000", false, OFF(telemetry.delay_ms), NULL,
	 "the longest a span waits for its batch (OTEL_BSP_SCHEDULE_DELAY)"},
	{"telemetry.metric_interval_ms", K_INT, 100, 86400000, "60000", false,
	 OFF(telemetry.metric_interval_ms), NULL,
	 "between two exports of the metrics (OTEL_METRIC_EXPORT_INTERVAL)"},
	{"telemetry.retry_budget_ms", K_INT, 1, 3600000, "30000", false, OFF(telemetry.retry_budget_ms),
	 NULL, "a batch the collector refuses with 429, 502, 503 or 504 (or cannot be reached) is "
	 "retried with exponential backoff, honouring Retry-After, for this long at most "
	 "(OTEL_BSP_EXPORT_TIMEOUT)"},
	{"telemetry.worker_buffer_kb", K_INT, 16, 65536, "256", false, OFF(telemetry.worker_buffer_kb), NULL,
	 "KiB of records each worker may have waiting for the exporter (a ring in shared memory, "
	 "backed only as it fills); what does not fit is dropped and counted"},
	{"telemetry.resource_uri_in_name", K_BOOL, 0, 0, "false", false,
	 OFF(telemetry.resource_uri_in_name), NULL,
	 "name resources/read spans with the URI (high cardinality; off: the method name alone)"},
	{"request_state", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "sealing of requestState for multi-round requests: secret_file or secret_env (at least 32 "
	 "bytes), salt, max_age (seconds, default 300), max_size (bytes, default 65536), "
	 "previous_secret_files (accepted for opening only); without a secret a random key is made "
	 "at each start", ph_state_conf_parse, ph_state_conf_free, ROWS(state_keys, ph_state_opts)},
	{"cluster", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "several hosts sharing task records and rate counters through one Redis (needs "
	 "request_state's secret, the same on every host): redis, host, prefix, password_file, "
	 "timeout_ms, lease_ms, backoff_max_ms, lock_ms", ph_cluster_conf_parse, ph_cluster_conf_free,
	 ROWS(cluster_keys, ph_cluster_opts)},
	{"log", K_SECTION, 0, 0, NULL, true, 0, NULL, "Request log on stderr."},
	{"log.format", K_ENUM, 0, 0, "text", true, OFF(log.format), "text|json",
	 "request log lines as key=value text or as JSON objects with OpenTelemetry names"},
	{"log.json", K_BOOL, 0, 0, "false", true, OFF(log.json), NULL,
	 "replaced by log.format; true means format json"},
	{"log.buffer", K_INT, 0, 4096, "4096", true, OFF(log.buffer), NULL,
	 "bytes of request log lines a FastCGI worker gathers and writes in one write (at most "
	 "4096, what a pipe takes whole); it writes them before it waits for a connection or runs "
	 "an exec handler; 0 writes each line at once, as CGI and stdio always do"},
	{"log.flush_ms", K_INT, 1, 60000, "1000", true, OFF(log.flush_ms), NULL,
	 "while a FastCGI worker stays busy, the lines held are written with the first line added "
	 "after the oldest has waited this long"},
	{"auth", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "authentication (mode: none|bearer|remote_user|exec|module|oauth), tokens, WWW-Authenticate "
	 "parameters, OAuth metadata and per-principal allow-lists; see docs/auth.md",
	 ph_auth_conf_parse, ph_auth_conf_free, ROWS(auth_keys, ph_auth_opts)},
	{"tools", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "tools: a list, or {ttl_ms, scope, items: [...]} (see phantom.yaml(5))", ph_conf_tools,
	 ph_conf_registry_free, ROWS(tools_keys, ph_list_opts)},
	{"prompts", K_CUSTOM, 0, 0, NULL, true, 0, NULL, "prompts: a list, or {ttl_ms, scope, items}",
	 ph_conf_prompts, ph_conf_registry_free, ROWS(prompts_keys, ph_list_opts)},
	{"resources", K_CUSTOM, 0, 0, NULL, true, 0, NULL, "static resources: a list, or {ttl_ms, scope, items}",
	 ph_conf_resources, ph_conf_registry_free, ROWS(resources_keys, ph_list_opts)},
	{"resource_templates", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "resource templates: a list, or {ttl_ms, scope, items}", ph_conf_templates, ph_conf_registry_free,
	 ROWS(templates_keys, ph_list_opts)},
	{"resource_lists", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "handlers that page the application's own resources after the configured ones: "
	 "[{name, exec | module, ...}]", ph_conf_resource_lists, ph_conf_registry_free, NULL, 0, 0},
	{"apps", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "MCP Apps (io.modelcontextprotocol/ui): {<name>: {file, uri, csp, permissions, domain, "
	 "prefers_border, versioned}}, each an HTML view served as a ui:// resource; a tool shows "
	 "one with app: <name>", ph_conf_apps, ph_conf_registry_free, NULL, 0, 0},
	{"skills", K_CUSTOM, 0, 0, NULL, true, 0, NULL,
	 "skills manifest and limits: manifest, max_files, max_bytes, max_depth, digest_cache",
	 ph_skills_conf_parse, ph_skills_conf_free, ROWS(skills_keys, ph_skills_opts)},
};

/* The row of tab named name, or NULL. */
static const struct key *
find_key(const struct key *tab, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tab[i].name, name) == 0)
			return &tab[i];
	return NULL;
}

static void
strlist_free(struct ph_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* A walk over one table: values are stored at base + the row's offset
 * (base is the ph_config, or a section's options struct). */
struct ctx {
	struct ph_config *c;
	struct ph_conf_problems *probs;
	const char *file;
	char *base;
	const struct key *tab;
	size_t ntab;
};

static void set_default(char *base, const struct key *k);
static void walk(struct ctx *x, const struct ph_ynode *map, const char *prefix);

/* Frees the value of row k stored at base. */
static void
free_value(char *base, const struct key *k)
{
	if (k->type == K_STR || k->type == K_ENUM) {
		free(*(char **)(base + k->off));
		*(char **)(base + k->off) = NULL;
	} else if (k->type == K_LIST) {
		strlist_free((struct ph_strlist *)(base + k->off));
	}
}

/* Runs the parser of the custom section k on n. When the section is a
 * mapping and has rows, its keys are first read through them into a fresh
 * options struct (defaults, types, bounds, unknown keys), which the parser
 * borrows as x->opts. Returns what the parser returns. */
static int
parse_section(struct ctx *x, const struct key *k, const struct ph_ynode *n)
{
	struct ph_conf_ctx cx = {x->c, x->probs, x->file, NULL, x->probs->n};
	char *opts = NULL;
	int rc;
	if (k->nsub != 0 && n->kind == PH_Y_MAP) {
		struct ctx sx = {x->c, x->probs, x->file, NULL, k->sub, k->nsub};
		opts = ph_xcalloc(1, k->opts_size);
		sx.base = opts;
		for (size_t i = 0; i < k->nsub; i++)
			set_default(opts, &k->sub[i]);
		walk(&sx, n, k->name);
		cx.opts = opts;
	}
	rc = k->parse(&cx, k->name, n);
	for (size_t i = 0; opts && i < k->nsub; i++)
		free_value(opts, &k->sub[i]);
	free(opts);
	return rc;
}

/* Stores one value for key k from node n. Reports a problem and returns -1 when it does not fit. */
static int
set_value(struct ctx *x, const struct key *k, const struct ph_ynode *n)
{
	struct ph_ysink s = {x->probs, x->file, NULL, false};
	char *base = x->base;
	switch (k->type) {
	case K_STR:
	case K_ENUM: {
		char **dst = (char **)(base + k->off);
		const char *t;
		if (k->type == K_ENUM)
			t = ph_yread_enum(&s, n, k->name, k->enums) >= 0 ? n->str : NULL;
		else
			t = ph_yread_str(&s, n, k->name, (size_t)k->min, (size_t)k->max);
		if (t == NULL)
			return -1;
		free(*dst);
		*dst = ph_xstrdup(t);
		return 0;
	}
	case K_INT:
		return ph_yread_int(&s, n, k->name, k->min, k->max, (long long *)(base + k->off));
	case K_BOOL:
		return ph_yread_bool(&s, n, k->name, (bool *)(base + k->off));
	case K_LIST: {
		struct ph_strlist *dst = (struct ph_strlist *)(base + k->off);
		strlist_free(dst);
		if (n->kind == PH_Y_SCALAR && strcmp(n->str, "*") == 0) {
			dst->any = true;
			return 0;
		}
		if (n->kind != PH_Y_SEQ) {
			ph_yread_problem(&s, n->line, "%s: expected a list of strings or \"*\"", k->name);
			return -1;
		}
		dst->v = ph_yread_strlist(&s, n, k->name, 0, SIZE_MAX, SIZE_MAX, &dst->n);
		if (dst->v == NULL)
			return -1;
		for (size_t i = 0; i < dst->n; i++)
			if (strcmp(dst->v[i], "*") == 0)
				dst->any = true;
		return 0;
	}
	case K_NODE:
		*(const struct ph_ynode **)(base + k->off) = n;
		return 0;
	case K_CUSTOM:
		return parse_section(x, k, n);
	case K_SECTION:
		break;
	}
	return -1;
}

/* Walks a map node whose keys are prefix.KEY entries of the table. */
static void
walk(struct ctx *x, const struct ph_ynode *map, const char *prefix)
{
	if (map->kind != PH_Y_MAP) {
		ph_conf_problem(x->probs, x->file, map->line, "%s: expected a mapping",
				prefix[0] ? prefix : "top level");
		return;
	}
	for (size_t i = 0; i < map->n; i++) {
		char *name = prefix[0] ? ph_xasprintf("%s.%s", prefix, map->keys[i])
				       : ph_xstrdup(map->keys[i]);
		const struct key *k = find_key(x->tab, x->ntab, name);
		const struct ph_ynode *v = map->vals[i];
		if (k == NULL) {
			ph_conf_problem(x->probs, x->file, map->key_lines[i], "unknown key '%s'", name);
		} else if (k->type == K_SECTION) {
			if (!ph_yaml_is_null(v))
				walk(x, v, name);
		} else if (ph_yaml_is_null(v) && k->type != K_CUSTOM) {
			/* "key:" or "key: ~" means the default, as if it were absent */
			set_default(x->base, k);
		} else {
			set_value(x, k, v);
		}
		free(name);
	}
}

/* Stores the default of key k at base; a key without a default is unset
 * (NULL, empty list, 0, false). Aborts on a default the key itself refuses:
 * that is a programming error in the table. */
static void
set_default(char *base, const struct key *k)
{
	struct ph_conf_problems dummy = {0};
	struct ctx x = {NULL, &dummy, "(defaults)", base, NULL, 0};
	char *err = NULL;
	struct ph_ynode *n;
	if (k->type == K_SECTION || k->type == K_CUSTOM)
		return;
	if (k->def == NULL) {
		free_value(base, k);
		if (k->type == K_INT)
			*(long long *)(base + k->off) = 0;
		else if (k->type == K_BOOL)
			*(bool *)(base + k->off) = false;
		else if (k->type == K_NODE)
			*(const struct ph_ynode **)(base + k->off) = NULL;
		return;
	}
	n = ph_yaml_parse(k->def, strlen(k->def), 4, &err);
	if (n == NULL) {
		free(err);
		abort();
	}
	set_value(&x, k, n);
	ph_yaml_free(n);
	if (dummy.n != 0)
		abort();
}

/* The values no row can check alone: the addresses of http.metrics.allow
 * and the paths of the health and metrics routes. */
static void
check_http(const struct ph_config *c, struct ph_conf_problems *probs, const char *name)
{
	const struct ph_strlist *a = &c->http.metrics.allow;
	struct ph_cidr n;
	if (a->any)
		ph_conf_problem(probs, name, 0, "http.metrics.allow: list the networks; \"*\" is not allowed");
	for (size_t i = 0; i < a->n; i++)
		if (ph_cidr_parse(a->v[i], &n) != 0)
			ph_conf_problem(probs, name, 0, "http.metrics.allow[%zu]: '%s' is not an address or "
					"network (ADDR/BITS)", i, a->v[i]);
	if (c->http.health && c->http.health[0] != '/')
		ph_conf_problem(probs, name, 0, "http.health: '%s' must be a path starting with '/'",
				c->http.health);
	if (c->http.metrics.path && c->http.metrics.path[0] != '/')
		ph_conf_problem(probs, name, 0, "http.metrics.path: '%s' must be a path starting with '/'",
				c->http.metrics.path);
	if (c->http.health && c->http.metrics.path && strcmp(c->http.health, c->http.metrics.path) == 0)
		ph_conf_problem(probs, name, 0, "http.health and http.metrics.path are both '%s'",
				c->http.health);
}

/* tasks.host goes into task ids (and so into file names): a-z 0-9 - _. */
static void
check_tasks(const struct ph_config *c, struct ph_conf_problems *probs, const char *name)
{
	for (const char *p = c->tasks.host; p && *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_')) {
			ph_conf_problem(probs, name, 0, "tasks.host: '%s' may hold only a-z 0-9 - _",
					c->tasks.host);
			return;
		}
}

/* A custom key with a default (workers) gets it through its parser. */
static void
custom_default(struct ph_config *c, const struct key *k)
{
	struct ph_conf_problems dummy = {0};
	struct ctx x = {c, &dummy, "(defaults)", (char *)c, keys, PH_ARRAY_LEN(keys)};
	char *err = NULL;
	struct ph_ynode *n = ph_yaml_parse(k->def, strlen(k->def), 4, &err);
	if (n == NULL || parse_section(&x, k, n) != 0 || dummy.n != 0)
		abort(); /* a default its own key refuses: a programming error in the table */
	ph_yaml_free(n);
}

/* The line of the top-level key in root, or 0. */
static int
top_line(const struct ph_ynode *root, const char *key)
{
	for (size_t i = 0; root->kind == PH_Y_MAP && i < root->n; i++)
		if (strcmp(root->keys[i], key) == 0)
			return root->key_lines[i];
	return 0;
}

/* listen: what a start refuses before it binds (ph_listen_addr_parse: the
 * form, the port, and in the static build a host name); listen_mode,
 * listen_owner and listen_group read into c->listen_perm (a user or group
 * that does not exist is refused here, not at the start), and refused
 * beside a listen that is not unix:PATH. Each reported at the line of its
 * key in root. */
static void
check_listen(struct ph_config *c, const struct ph_ynode *root, struct ph_conf_problems *probs,
	     const char *name)
{
	struct ph_listen_addr a;
	struct ph_listen_perm *p = &c->listen_perm;
	const struct {
		const char *key, *value;
	} perm[] = {{"listen_mode", c->listen_mode}, {"listen_owner", c->listen_owner},
		    {"listen_group", c->listen_group}};
	char err[512];
	bool tcp = false;
	if (c->listen != NULL) {
		if (ph_listen_addr_parse(c->listen, &a, err, sizeof err) != 0)
			ph_conf_problem(probs, name, top_line(root, "listen"), "listen: %s", err);
		else
			tcp = a.path == NULL;
	}
	for (size_t i = 0; i < PH_ARRAY_LEN(perm); i++) {
		int rc;
		if (perm[i].value == NULL)
			continue;
		if (i == 0)
			rc = ph_listen_mode_parse(perm[i].value, &p->mode, err, sizeof err);
		else
			rc = ph_listen_id_parse(perm[i].value, i == 2, i == 2 ? &p->gid : &p->uid, err,
						sizeof err);
		if (rc == 0 && tcp) {
			snprintf(err, sizeof err, "applies to a unix socket, and listen is %s (a TCP port "
				 "has no mode or owner): remove it, or listen on unix:PATH", c->listen);
			rc = -1;
		}
		if (rc != 0)
			ph_conf_problem(probs, name, top_line(root, perm[i].key), "%s: %s", perm[i].key, err);
	}
}

static void
apply_defaults(struct ph_config *c)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		set_default((char *)c, &keys[i]);
		if (keys[i].type == K_CUSTOM && keys[i].def != NULL)
			custom_default(c, &keys[i]);
	}
}

struct ph_config *
ph_conf_load_buf(const char *name, const char *dir, const char *buf, size_t len,
		 struct ph_conf_problems *probs)
{
	struct ph_config *c = ph_xcalloc(1, sizeof *c);
	size_t before = probs->n;
	char *err = NULL;
	apply_defaults(c);
	c->listen_perm = (struct ph_listen_perm){-1, -1, -1};
	c->file = name ? ph_xstrdup(name) : NULL;
	c->dir = ph_xstrdup(dir ? dir : ".");
	if (buf != NULL) {
		struct ctx x = {c, probs, name, (char *)c, keys, PH_ARRAY_LEN(keys)};
		struct ph_ynode *root = ph_yaml_parse(buf, len, (int)c->limits.yaml_depth, &err);
		if (root == NULL) {
			/* err is "LINE: message" */
			ph_conf_problem(probs, name, atoi(err), "%s", strchr(err, ' ') ? strchr(err, ' ') + 1 : err);
			free(err);
		} else {
			walk(&x, root, "");
			check_listen(c, root, probs, name);
			ph_yaml_free(root);
		}
		check_http(c, probs, name);
		check_tasks(c, probs, name);
		ph_cluster_conf_check(c, probs, name);
	}
	if (probs->n != before) {
		ph_conf_free(c);
		return NULL;
	}
	return c;
}

struct ph_config *
ph_conf_load(const char *path, struct ph_conf_problems *probs)
{
	char *buf = NULL, *dir;
	size_t len = 0;
	struct ph_config *c;
	if (path == NULL)
		return ph_conf_load_buf(NULL, ".", NULL, 0, probs);
	if (ph_read_file(path, 16 << 20, &buf, &len) != 0) {
		ph_conf_problem(probs, path, 0, "cannot read configuration: %s", ph_strerror(errno));
		return NULL;
	}
	dir = ph_dirname(path);
	c = ph_conf_load_buf(path, dir, buf, len, probs);
	free(dir);
	free(buf);
	return c;
}

void
ph_conf_free(struct ph_config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		const struct key *k = &keys[i];
		free_value((char *)c, k);
		if (k->type == K_CUSTOM && k->free)
			k->free(c);
	}
	free(c->file);
	free(c->dir);
	free(c);
}

static bool
value_equal(const struct key *k, const struct ph_config *a, const struct ph_config *b)
{
	const char *pa = (const char *)a + k->off, *pb = (const char *)b + k->off;
	switch (k->type) {
	case K_STR:
	case K_ENUM: {
		const char *sa = *(char *const *)pa, *sb = *(char *const *)pb;
		return (sa == NULL && sb == NULL) || (sa && sb && strcmp(sa, sb) == 0);
	}
	case K_INT:
		return *(const long long *)pa == *(const long long *)pb;
	case K_BOOL:
		return *(const bool *)pa == *(const bool *)pb;
	case K_LIST: {
		const struct ph_strlist *la = (const void *)pa, *lb = (const void *)pb;
		if (la->n != lb->n || la->any != lb->any)
			return false;
		for (size_t i = 0; i < la->n; i++)
			if (strcmp(la->v[i], lb->v[i]) != 0)
				return false;
		return true;
	}
	case K_SECTION:
	case K_CUSTOM:
	case K_NODE:
		return true;
	}
	return true;
}

size_t
ph_conf_unreloadable_changes(const struct ph_config *a, const struct ph_config *b, char ***names)
{
	size_t n = 0;
	*names = NULL;
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		if (keys[i].reloadable || keys[i].type == K_SECTION)
			continue;
		if (!value_equal(&keys[i], a, b)) {
			*names = ph_xrealloc(*names, (n + 1) * sizeof **names);
			(*names)[n++] = ph_xstrdup(keys[i].name);
		}
	}
	return n;
}

/* Prints one row as a line of the key dump. */
static void
dump_key(FILE *fp, const struct key *k)
{
	static const char *const tn[] = {"section", "string", "integer", "boolean", "enum", "list",
					 "custom", "custom"};
	fprintf(fp, "%s\t%s", k->name, tn[k->type]);
	if (k->type == K_INT)
		fprintf(fp, "\t%lld..%lld", k->min, k->max);
	else if (k->type == K_ENUM)
		fprintf(fp, "\t%s", k->enums);
	else
		fprintf(fp, "\t-");
	fprintf(fp, "\t%s\t%s\t%s\n", k->def ? k->def : "-", k->reloadable ? "reloadable" : "restart",
		k->doc);
}

void
ph_conf_dump_keys(void *fp)
{
	for (size_t i = 0; i < PH_ARRAY_LEN(keys); i++) {
		dump_key(fp, &keys[i]);
		for (size_t j = 0; j < keys[i].nsub; j++)
			dump_key(fp, &keys[i].sub[j]);
	}
}
