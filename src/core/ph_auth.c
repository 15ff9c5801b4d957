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
 * bodies sent by the core (authenticate() in ph_core.c). The token is never
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
 * are that lookup for tokens once verified. */
#include "first.h"
#include "ph_auth.h"
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
#include <termios.h>
#include <unistd.h>

_Static_assert(PH_SHARED_DIGEST == crypto_generichash_BYTES, "the shared cache holds keyed digests");
_Static_assert(PH_ACCESS_KINDS == PH_KIND_SKILL + 1, "one allow-list per enum ph_kind");

/* Keys of auth.allow.<principal>, in enum ph_kind order. */
static const char *const kind_names[PH_ACCESS_KINDS] = {"tools", "prompts", "resources", "skills"};

#define ALLOW_ENTRY_MAX 1024     /* bytes of one allow-list entry */
#define TOKENS_FILE_MAX (1 << 20)
#define METADATA_MAX (64 << 10)
#define COMMAND_ARGS_MAX 64
#define HEADERS_MAX 64          /* names in auth.headers */
#define EXEC_MESSAGE_MAX 256
#define EXEC_GRACE_MS 100        /* between SIGTERM and SIGKILL */

/* Request headers an exec authenticator gets unless auth.headers says
 * otherwise: credentials, where the request came from, what it is for. */
static const char *const default_headers[] = {
	"authorization", "cookie", "host", "origin", "user-agent", "forwarded", "x-forwarded-for",
	"x-real-ip", "mcp-protocol-version", "mcp-method", "mcp-name",
};

/* ---- configuration --------------------------------------------------------- */

/* Where problems of the node being parsed are reported: the main
 * configuration, or the tokens file. */
struct pctx {
	struct ph_ysink s;
	const char *dir;
	int yaml_depth;
};

bool
ph_auth_quotable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			return false;
	return true;
}

/* A principal name: 1..PH_AUTH_PRINCIPAL_MAX bytes, no control characters
 * (it is printed in the log and handed to templates and programs). */
static bool
principal_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f)
			return false;
	return n > 0 && n <= PH_AUTH_PRINCIPAL_MAX;
}

/* RFC 6750 b64token (token68): the only bearer token syntax accepted. */
static bool
token68(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (('A' <= s[i] && s[i] <= 'Z') || ('a' <= s[i] && s[i] <= 'z') ||
			 ('0' <= s[i] && s[i] <= '9') || strchr("-._~+/", s[i]) != NULL) && s[i] != '\0')
		i++;
	if (i == 0)
		return false;
	while (i < n && s[i] == '=')
		i++;
	return i == n;
}

/* A skill allow-list entry without trailing slashes; NULL (with *why) when
 * it cannot name a skill path. Caller frees. */
static char *
skill_entry(const char *s, const char **why)
{
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		n--;
	if (n == 0 || s[0] == '/') {
		*why = "a skill path is relative and not empty";
		return NULL;
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '/' && s[i + 1] == '/') {
			*why = "a skill path has no empty segment";
			return NULL;
		}
	return ph_xstrndup(s, n);
}

static void
list_push(struct ph_allow_list *l, char *s)
{
	l->v = ph_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = s;
}

static void
access_free(struct ph_access *acc)
{
	for (int k = 0; k < PH_ACCESS_KINDS; k++) {
		for (size_t i = 0; i < acc->kind[k].n; i++)
			free(acc->kind[k].v[i]);
		free(acc->kind[k].v);
	}
	memset(acc, 0, sizeof *acc);
}

static int
kind_index(const char *name)
{
	for (int k = 0; k < PH_ACCESS_KINDS; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}

/* Adds one allow-list entry s of kind k; returns NULL or why it is refused. */
static const char *
access_add(struct ph_access *acc, int k, const char *s)
{
	const char *why = NULL;
	size_t n = strlen(s);
	if (n == 0 || n > ALLOW_ENTRY_MAX)
		return "an entry is 1 to 1024 bytes";
	if (k == PH_KIND_SKILL) {
		char *e = skill_entry(s, &why);
		if (e == NULL)
			return why;
		list_push(&acc->kind[k], e);
	} else {
		list_push(&acc->kind[k], ph_xstrdup(s));
	}
	return NULL;
}

/* auth.allow.<principal>.rate: {requests, per_seconds, burst}, the
 * principal's own bucket instead of limits.rate (requests 0: no limit). */
static void
parse_rate(struct pctx *p, const char *principal, const struct ph_ynode *n, struct ph_rate_conf *rc)
{
	static const struct {
		const char *name;
		long long min, max, def;
		size_t off;
	} keys[] = {
		{"requests", 0, 1000000000, 0, offsetof(struct ph_rate_conf, requests)},
		{"per_seconds", 1, 86400, 1, offsetof(struct ph_rate_conf, per_seconds)},
		{"burst", 0, 1000000000, 0, offsetof(struct ph_rate_conf, burst)},
	};
	char name[PH_AUTH_PRINCIPAL_MAX + 64];
	for (size_t k = 0; k < PH_ARRAY_LEN(keys); k++)
		*(long long *)((char *)rc + keys[k].off) = keys[k].def;
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(&p->s, n->line, "auth.allow.%s.rate: expected a mapping of requests, "
			"per_seconds, burst", principal);
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		size_t k = 0;
		while (k < PH_ARRAY_LEN(keys) && strcmp(keys[k].name, n->keys[i]) != 0)
			k++;
		if (k == PH_ARRAY_LEN(keys)) {
			ph_yread_problem(&p->s, n->key_lines[i], "unknown key 'auth.allow.%s.rate.%s' (expected "
				"requests, per_seconds or burst)", principal, n->keys[i]);
			continue;
		}
		snprintf(name, sizeof name, "auth.allow.%s.rate.%s", principal, keys[k].name);
		ph_yread_int(&p->s, n->vals[i], name, keys[k].min, keys[k].max,
			     (long long *)((char *)rc + keys[k].off));
	}
	if (rc->requests == 0)
		rc->requests = -1; /* set to 0: this principal has no limit */
}

/* auth.allow.<principal>: null (no restriction) or a map of lists, and
 * the principal's own rate limit. */
static void
parse_access(struct pctx *p, const char *principal, const struct ph_ynode *n, struct ph_access *acc,
	     struct ph_rate_conf *rate)
{
	if (ph_yaml_is_null(n))
		return;
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(&p->s, n->line, "auth.allow.%s: expected a mapping of tools, prompts, resources, skills",
			principal);
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		const struct ph_ynode *l = n->vals[i];
		int k = kind_index(n->keys[i]);
		if (k < 0 && strcmp(n->keys[i], "rate") == 0) {
			parse_rate(p, principal, l, rate);
			continue;
		}
		if (k < 0) {
			ph_yread_problem(&p->s, n->key_lines[i], "unknown key 'auth.allow.%s.%s' (expected tools, prompts, "
				"resources, skills or rate)", principal, n->keys[i]);
			continue;
		}
		acc->kind[k].set = true;
		if (ph_yaml_is_null(l))
			continue; /* an empty list: nothing of this kind */
		if (l->kind != PH_Y_SEQ) {
			ph_yread_problem(&p->s, l->line, "auth.allow.%s.%s: expected a list of names", principal,
				n->keys[i]);
			continue;
		}
		for (size_t j = 0; j < l->n; j++) {
			const struct ph_ynode *it = l->vals[j];
			const char *why;
			if (it->kind != PH_Y_SCALAR || strlen(it->str) != it->len) {
				ph_yread_problem(&p->s, it->line, "auth.allow.%s.%s[%zu]: expected a string", principal,
					n->keys[i], j);
				continue;
			}
			why = access_add(acc, k, it->str);
			if (why != NULL)
				ph_yread_problem(&p->s, it->line, "auth.allow.%s.%s[%zu]: %s", principal, n->keys[i], j, why);
		}
	}
}

static int
allow_cmp(const void *a, const void *b)
{
	const struct ph_allow_entry *x = a, *y = b;
	return strcmp(x->principal, y->principal);
}

static void
parse_allow(struct pctx *p, struct ph_auth_conf *a, const struct ph_ynode *n)
{
	if (ph_yaml_is_null(n))
		return;
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(&p->s, n->line, "auth.allow: expected a mapping of principal names");
		return;
	}
	a->allow = ph_xcalloc(n->n ? n->n : 1, sizeof *a->allow);
	for (size_t i = 0; i < n->n; i++) {
		struct ph_allow_entry *e = &a->allow[a->nallow++];
		if (!principal_ok(n->keys[i]))
			ph_yread_problem(&p->s, n->key_lines[i], "auth.allow: '%s' is not a usable principal name "
				"(1 to %d bytes, no control characters)", n->keys[i], PH_AUTH_PRINCIPAL_MAX);
		e->principal = ph_xstrdup(n->keys[i]);
		parse_access(p, e->principal, n->vals[i], &e->access, &e->rate);
	}
	qsort(a->allow, a->nallow, sizeof *a->allow, allow_cmp);
}

/* The sha256 member sn of token entry what[idx], decoded into t->sha256.
 * Returns false after a report: not 64 hex digits, or a digest a already
 * lists. */
static bool
token_sha256(struct pctx *p, const struct ph_auth_conf *a, const struct ph_ynode *sn, const char *what,
	     size_t idx, struct ph_token *t)
{
	size_t bin = 0;
	const char *end = NULL;
	const char *hex;
	char nm[96];
	snprintf(nm, sizeof nm, "%s[%zu].sha256", what, idx);
	hex = ph_yread_str(&p->s, sn, nm, 1, 1024);
	if (hex == NULL)
		return false;
	if (sn->len != 64 ||
	    sodium_hex2bin(t->sha256, sizeof t->sha256, hex, 64, NULL, &bin, &end) != 0 ||
	    bin != sizeof t->sha256 || end != hex + 64) {
		ph_yread_problem(&p->s, sn->line, "%s[%zu].sha256: expected 64 hex digits", what, idx);
		return false;
	}
	for (size_t i = 0; i < a->ntokens; i++)
		if (!a->tokens[i].argon2 &&
		    sodium_memcmp(a->tokens[i].sha256, t->sha256, sizeof t->sha256) == 0) {
			ph_yread_problem(&p->s, sn->line, "%s[%zu].sha256: the same token is listed twice", what,
				idx);
			return false;
		}
	return true;
}

/* The argon2 member an of token entry what[idx], copied into
 * t->argon2_str. Returns false after a report: not an argon2i/argon2id
 * string libsodium can verify against. */
static bool
token_argon2(struct pctx *p, const struct ph_ynode *an, const char *what, size_t idx, struct ph_token *t)
{
	const char *h;
	char nm[96];
	snprintf(nm, sizeof nm, "%s[%zu].argon2", what, idx);
	h = ph_yread_str(&p->s, an, nm, 1, crypto_pwhash_STRBYTES - 1);
	if (h == NULL)
		return false;
	memcpy(t->argon2_str, h, strlen(h) + 1);
	/* -1 means libsodium cannot read it as an argon2i/argon2id string */
	if ((strncmp(h, "$argon2id$", 10) != 0 && strncmp(h, "$argon2i$", 9) != 0) ||
	    crypto_pwhash_str_needs_rehash(t->argon2_str, crypto_pwhash_OPSLIMIT_INTERACTIVE,
					   crypto_pwhash_MEMLIMIT_INTERACTIVE) < 0) {
		ph_yread_problem(&p->s, an->line, "%s[%zu].argon2: not an argon2 string from "
			"phantom-fcgi --hash-token (quote it in YAML)", what, idx);
		return false;
	}
	t->argon2 = true;
	return true;
}

/* One token entry {principal, sha256 | argon2}; what names the list for
 * messages ("auth.tokens", "auth.tokens_file"). */
static void
parse_token(struct pctx *p, struct ph_auth_conf *a, const struct ph_ynode *n, const char *what,
	    size_t idx)
{
	const struct ph_ynode *pn, *sn, *an;
	struct ph_token t;
	const char *s;
	char nm[96];
	memset(&t, 0, sizeof t);
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(&p->s, n->line, "%s[%zu]: expected {principal: NAME, sha256: HEX} or "
			"{principal: NAME, argon2: STRING}", what, idx);
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->keys[i], "principal") != 0 && strcmp(n->keys[i], "sha256") != 0 &&
		    strcmp(n->keys[i], "argon2") != 0)
			ph_yread_problem(&p->s, n->key_lines[i], "%s[%zu]: unknown key '%s'", what, idx, n->keys[i]);
	pn = ph_yaml_get(n, "principal");
	sn = ph_yaml_get(n, "sha256");
	an = ph_yaml_get(n, "argon2");
	if (pn == NULL) {
		ph_yread_problem(&p->s, n->line, "%s[%zu]: principal is required", what, idx);
		return;
	}
	snprintf(nm, sizeof nm, "%s[%zu].principal", what, idx);
	s = ph_yread_str(&p->s, pn, nm, 1, PH_AUTH_PRINCIPAL_MAX);
	if (s == NULL)
		return;
	if (!principal_ok(s)) {
		ph_yread_problem(&p->s, pn->line, "%s[%zu].principal: control characters are not allowed", what, idx);
		return;
	}
	if ((sn == NULL) == (an == NULL)) {
		ph_yread_problem(&p->s, n->line, "%s[%zu]: give exactly one of sha256 and argon2", what, idx);
		return;
	}
	if (sn != NULL && !token_sha256(p, a, sn, what, idx, &t))
		return;
	if (an != NULL && !token_argon2(p, an, what, idx, &t))
		return;
	t.principal = ph_xstrdup(s);
	a->tokens = ph_xrealloc(a->tokens, (a->ntokens + 1) * sizeof *a->tokens);
	a->tokens[a->ntokens++] = t;
}

static void
parse_tokens(struct pctx *p, struct ph_auth_conf *a, const struct ph_ynode *n, const char *what)
{
	if (ph_yaml_is_null(n))
		return;
	if (n->kind != PH_Y_SEQ) {
		ph_yread_problem(&p->s, n->line, "%s: expected a list of {principal, sha256 | argon2}", what);
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		parse_token(p, a, n->vals[i], what, i);
}

/* auth.tokens_file: the same list in its own YAML file, reported with its
 * own name and lines. */
static void
parse_tokens_file(struct pctx *p, struct ph_auth_conf *a, const char *s, int line)
{
	struct pctx fp = *p;
	struct ph_ynode *root;
	char *buf = NULL, *err = NULL;
	size_t len;
	free(a->tokens_file);
	a->tokens_file = ph_path_join(p->dir, s);
	if (ph_read_file(a->tokens_file, TOKENS_FILE_MAX, &buf, &len) != 0) {
		ph_yread_problem(&p->s, line, "auth.tokens_file: cannot read %s: %s", a->tokens_file,
			errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
		return;
	}
	fp.s.file = a->tokens_file;
	root = ph_yaml_parse(buf, len, p->yaml_depth, &err);
	sodium_memzero(buf, len);
	free(buf);
	if (root == NULL) {
		/* err is "LINE: message" */
		const char *msg = strchr(err, ' ');
		ph_yread_problem(&fp.s, atoi(err), "%s", msg ? msg + 1 : err);
		free(err);
		return;
	}
	parse_tokens(&fp, a, root, "auth.tokens_file");
	ph_yaml_free(root);
}

/* auth.headers: lower-case names, and their CGI parameter names. */
static void
set_headers(struct ph_auth_conf *a, char **names, size_t n)
{
	a->headers = names;
	a->nheaders = n;
	a->header_params = ph_xcalloc(n + 1, sizeof *a->header_params);
	for (size_t i = 0; i < n; i++) {
		char *h = names[i], *cgi = ph_xasprintf("HTTP_%s", h);
		for (char *c = h; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
		for (char *c = cgi; *c; c++)
			*c = *c == '-' ? '_' : (*c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A') : *c;
		a->header_params[i] = cgi;
	}
}

static void
parse_headers(struct pctx *p, struct ph_auth_conf *a, const struct ph_ynode *n)
{
	size_t cnt = 0;
	char **v = ph_yread_strlist(&p->s, n, "auth.headers", 1, HEADERS_MAX, 4096, &cnt);
	for (size_t i = 0; i < cnt; i++)
		for (const char *c = v[i]; *c; c++)
			if (!(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') || ('0' <= *c && *c <= '9') ||
			      *c == '-')) {
				ph_yread_problem(&p->s, n->vals[i]->line, "auth.headers[%zu]: '%s' is not a header name "
					"(letters, digits, '-')", i, v[i]);
				break;
			}
	if (v != NULL) {
		for (size_t i = 0; i < a->nheaders; i++) {
			free(a->headers[i]);
			free(a->header_params[i]);
		}
		free(a->headers);
		free(a->header_params);
		set_headers(a, v, cnt);
	}
}

/* auth.metadata: {path, document | file}. The document is checked and
 * rendered once; requests only copy it out. */
static void
parse_metadata(struct pctx *p, struct ph_auth_conf *a, const struct ph_ynode *n)
{
	const struct ph_ynode *pn, *dn, *fn;
	struct json_object *doc = NULL, *res;
	const char *path;
	if (n->kind != PH_Y_MAP) {
		ph_yread_problem(&p->s, n->line, "auth.metadata: expected {path, document | file}");
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->keys[i], "path") != 0 && strcmp(n->keys[i], "document") != 0 &&
		    strcmp(n->keys[i], "file") != 0)
			ph_yread_problem(&p->s, n->key_lines[i], "unknown key 'auth.metadata.%s'", n->keys[i]);
	pn = ph_yaml_get(n, "path");
	dn = ph_yaml_get(n, "document");
	fn = ph_yaml_get(n, "file");
	if ((pn == NULL && a->mode != PH_AUTH_OAUTH) || (dn == NULL) == (fn == NULL)) {
		ph_yread_problem(&p->s, n->line, "auth.metadata: path and exactly one of document and file are "
				 "required (path may be left out with auth.mode oauth)");
		return;
	}
	path = pn ? ph_yread_str(&p->s, pn, "auth.metadata.path", 2, 1024) : "";
	if (path == NULL)
		return;
	if (pn != NULL && (path[0] != '/' || strpbrk(path, "?# \t") != NULL)) {
		ph_yread_problem(&p->s, pn->line, "auth.metadata.path: an absolute URL path without query, such as "
			"/.well-known/oauth-protected-resource/mcp");
		return;
	}
	if (dn != NULL) {
		doc = ph_yaml_to_json(dn);
	} else {
		const char *f = ph_yread_str(&p->s, fn, "auth.metadata.file", 1, 4096);
		char *full, *buf = NULL;
		size_t len = 0;
		if (f == NULL)
			return;
		full = ph_path_join(p->dir, f);
		if (ph_read_file(full, METADATA_MAX, &buf, &len) != 0) {
			ph_yread_problem(&p->s, fn->line, "auth.metadata.file: cannot read %s: %s", full,
				errno == EFBIG ? "larger than 64 KiB" : strerror(errno));
		} else {
			if (!ph_json_parse(buf, len, PH_JSON_DEPTH_METADATA, &doc) || doc == NULL) {
				json_object_put(doc);
				doc = NULL;
				ph_yread_problem(&p->s, fn->line, "auth.metadata.file: %s is not one JSON object", full);
			}
		}
		free(full);
		free(buf);
		if (doc == NULL)
			return;
	}
	res = ph_jget(doc, "resource");
	if (!json_object_is_type(doc, json_type_object) || res == NULL ||
	    !json_object_is_type(res, json_type_string)) {
		ph_yread_problem(&p->s, (dn ? dn : fn)->line, "auth.metadata: the document must be an object with a "
			"\"resource\" string (RFC 9728 section 2)");
		json_object_put(doc);
		return;
	}
	free(a->metadata_path);
	json_object_put(a->metadata_doc);
	a->metadata_path = pn ? ph_xstrdup(path) : NULL;
	a->metadata_doc = doc; /* rendered by conf_finish, after auth.oauth added to it */
}

/* A WWW-Authenticate value: Bearer realm, then error, resource_metadata and
 * scope when set (RFC 6750 section 3, RFC 9728 section 5.1). Caller frees. */
static char *
challenge(const struct ph_auth_conf *a, const char *error, const char *scope)
{
	struct ph_buf b;
	ph_buf_init(&b);
	ph_buf_printf(&b, "Bearer realm=\"%s\"", a->realm);
	if (error)
		ph_buf_printf(&b, ", error=\"%s\"", error);
	if (a->resource_metadata)
		ph_buf_printf(&b, ", resource_metadata=\"%s\"", a->resource_metadata);
	if (scope)
		ph_buf_printf(&b, ", scope=\"%s\"", scope);
	return ph_buf_steal(&b);
}

static void
conf_free(struct ph_auth_conf *a)
{
	if (a == NULL)
		return;
	free(a->realm);
	free(a->resource_metadata);
	free(a->scope);
	for (size_t i = 0; i < a->ntokens; i++)
		free(a->tokens[i].principal);
	if (a->tokens)
		sodium_memzero(a->tokens, a->ntokens * sizeof *a->tokens);
	free(a->tokens);
	free(a->tokens_file);
	for (size_t i = 0; a->command && a->command[i]; i++)
		free(a->command[i]);
	free(a->command);
	if (a->module)
		free(a->module->symbol);
	free(a->module);
	for (size_t i = 0; i < a->nheaders; i++) {
		free(a->headers[i]);
		free(a->header_params[i]);
	}
	free(a->headers);
	free(a->header_params);
	free(a->stdio_principal);
	for (size_t i = 0; i < a->nallow; i++) {
		free(a->allow[i].principal);
		access_free(&a->allow[i].access);
	}
	free(a->allow);
	free(a->metadata_path);
	free(a->metadata_json);
	json_object_put(a->metadata_doc);
	ph_oauth_conf_free(a->oauth);
	free(a->challenge_scope);
	free(a->challenge);
	free(a->challenge_invalid);
	if (a->cache)
		sodium_memzero(a->cache, (size_t)a->argon2_cache * sizeof *a->cache);
	sodium_memzero(a->cache_key, sizeof a->cache_key);
	free(a->cache);
	free(a);
}

void
ph_auth_conf_free(struct ph_config *c)
{
	conf_free(c->auth);
	c->auth = NULL;
}

/* The authenticator's exec keys: command (relative to this file, never
 * looked up in PATH), timeout_ms and max_output, with bounds of its own: it
 * runs before every request, so it gets less time and output than a handler
 * (phantom.yaml(5), auth). */
static const struct ph_exec_bounds auth_exec_bounds = {
	.argv_key = "command",
	.section = "auth",
	.max_args = COMMAND_ARGS_MAX,
	.timeout_min = 1,
	.timeout_max = 60000,
	.timeout_def = 2000,
	.output_min = 64,
	.output_max = 1 << 20,
	.output_def = 65536,
	.bare_relative = true,
};

/* A string of the section checked for WWW-Authenticate, copied; NULL when
 * unset or after a report. */
static char *
quotable(struct pctx *p, const struct ph_ynode *n, const char *key, const char *val)
{
	if (val == NULL)
		return NULL;
	if (!ph_auth_quotable(val)) {
		ph_yread_problem(&p->s, ph_yaml_get(n, key)->line, "auth.%s: printable ASCII without '\"' "
				 "or '\\' (it is sent in WWW-Authenticate)", key);
		return NULL;
	}
	return ph_xstrdup(val);
}

/* The mode and the plain settings of the section (o, read from n) into a:
 * mode, argon2 cache, default access, the default header list and the
 * strings sent in WWW-Authenticate. Returns the node that problems about
 * the mode are reported at: auth.mode, or the section when it is unset. */
static const struct ph_ynode *
parse_settings(struct pctx *p, struct ph_auth_conf *a, const struct ph_auth_opts *o,
	       const struct ph_ynode *n)
{
	static const char *const modes[] = {"none", "bearer", "remote_user", "exec", "module", "oauth"};
	const struct ph_ynode *mode_node = ph_yaml_get(n, "mode");
	char **h = ph_xcalloc(PH_ARRAY_LEN(default_headers) + 1, sizeof *h);
	for (size_t m = 0; m < PH_ARRAY_LEN(modes); m++)
		if (strcmp(o->mode, modes[m]) == 0)
			a->mode = (enum ph_auth_mode)m;
	a->argon2_cache = o->argon2_cache;
	a->max_verify = o->max_concurrent_verify;
	a->fail = (struct ph_rate_conf){o->fail_limit, o->fail_window_s, o->fail_limit};
	a->max_assigns = o->max_assigns;
	a->assigns_depth = o->assigns_depth;
	a->default_deny = strcmp(o->default_access, "none") == 0;
	for (size_t i = 0; i < PH_ARRAY_LEN(default_headers); i++)
		h[i] = ph_xstrdup(default_headers[i]);
	set_headers(a, h, PH_ARRAY_LEN(default_headers));
	a->realm = quotable(p, n, "realm", o->realm);
	a->scope = quotable(p, n, "scope", o->scope);
	a->resource_metadata = quotable(p, n, "resource_metadata", o->resource_metadata);
	if (a->resource_metadata && strncmp(a->resource_metadata, "https://", 8) != 0 &&
	    strncmp(a->resource_metadata, "http://", 7) != 0)
		ph_yread_problem(&p->s, ph_yaml_get(n, "resource_metadata")->line,
				 "auth.resource_metadata: expected an absolute http(s) URL");
	return mode_node != NULL ? mode_node : n;
}

/* The parts of the section with structure of their own into a: tokens
 * (inline and from tokens_file), the authenticator command, headers, the
 * stdio principal, the RFC 9728 metadata and the allow-lists. */
static void
parse_parts(struct pctx *p, struct ph_auth_conf *a, const struct ph_auth_opts *o, const struct ph_ynode *n)
{
	struct ph_exec_spec spec;
	if (o->tokens)
		parse_tokens(p, a, o->tokens, "auth.tokens");
	if (o->tokens_file)
		parse_tokens_file(p, a, o->tokens_file, ph_yaml_get(n, "tokens_file")->line);
	if (ph_exec_spec_parse(&p->s, n, &auth_exec_bounds, p->dir, &spec) == 0) {
		a->command = spec.argv;
		a->timeout_ms = spec.timeout_ms;
		a->max_output = spec.max_output;
		spec.argv = NULL;
		ph_exec_spec_clear(&spec);
	}
	if (o->headers)
		parse_headers(p, a, o->headers);
	if (o->stdio_principal && !principal_ok(o->stdio_principal))
		ph_yread_problem(&p->s, ph_yaml_get(n, "stdio_principal")->line,
				 "auth.stdio_principal: control characters are not allowed");
	else if (o->stdio_principal)
		a->stdio_principal = ph_xstrdup(o->stdio_principal);
	if (o->metadata)
		parse_metadata(p, a, o->metadata);
	if (o->allow)
		parse_allow(p, a, o->allow);
}

/* What the mode needs, and settings that would silently do nothing,
 * reported at mode_node. clean: no problem so far (a missing token is only
 * worth saying when the token lists themselves were fine). */
static void
check_mode(struct pctx *p, const struct ph_auth_conf *a, const struct ph_ynode *mode_node, bool clean)
{
	if (a->mode == PH_AUTH_BEARER && a->ntokens == 0 && clean)
		ph_yread_problem(&p->s, mode_node->line, "auth.mode bearer: no token in auth.tokens or auth.tokens_file");
	if (a->mode != PH_AUTH_BEARER && (a->ntokens || a->tokens_file))
		ph_yread_problem(&p->s, mode_node->line, "auth.tokens and auth.tokens_file are used only with "
			"auth.mode bearer");
	if (a->mode == PH_AUTH_EXEC && a->command == NULL)
		ph_yread_problem(&p->s, mode_node->line, "auth.mode exec: auth.command is required");
	if (a->mode != PH_AUTH_EXEC && a->command != NULL)
		ph_yread_problem(&p->s, mode_node->line, "auth.command is used only with auth.mode exec");
	if (a->mode == PH_AUTH_MODULE && a->module == NULL && clean)
		ph_yread_problem(&p->s, mode_node->line, "auth.mode module: auth.module and auth.symbol are required");
	if (a->mode != PH_AUTH_MODULE && a->module != NULL)
		ph_yread_problem(&p->s, mode_node->line, "auth.module and auth.symbol are used only with "
				 "auth.mode module");
}

/* The resource of the RFC 9728 document (borrowed), or NULL. */
static const char *
metadata_resource(const struct ph_auth_conf *a)
{
	return a->metadata_doc ? ph_jstr(a->metadata_doc, "resource") : NULL;
}

/* auth.mode oauth: the auth.oauth section, and what the RFC 9728 document
 * gets from it unless it says otherwise (authorization_servers: the
 * issuer, scopes_supported, bearer_methods_supported: header), its path
 * (/.well-known/oauth-protected-resource followed by the resource's path)
 * and auth.resource_metadata (the resource's origin and that path): the
 * settings are written once. Other modes: auth.oauth is refused. */
static void
parse_oauth(struct pctx *p, struct ph_auth_conf *a, const struct ph_auth_opts *o, const struct ph_ynode *n)
{
	const char *res = metadata_resource(a), *slash;
	struct json_object *d = a->metadata_doc;
	if (a->mode != PH_AUTH_OAUTH) {
		if (ph_yaml_get(n, "oauth") != NULL)
			ph_yread_problem(&p->s, ph_yread_key_line(n, "oauth"), "auth.oauth is used only with auth.mode "
					 "oauth");
		return;
	}
	if ((a->oauth = ph_oauth_conf_parse(&p->s, &o->oauth, n, p->dir, res)) == NULL || d == NULL)
		return;
	if (!ph_jhas(d, "authorization_servers")) {
		struct json_object *as = json_object_new_array();
		json_object_array_add(as, json_object_new_string(ph_oauth_issuer(a->oauth)));
		ph_jset(d, "authorization_servers", as);
	}
	if (!ph_jhas(d, "scopes_supported"))
		ph_jset(d, "scopes_supported", ph_oauth_scopes_supported(a->oauth));
	if (!ph_jhas(d, "bearer_methods_supported")) {
		struct json_object *bm = json_object_new_array();
		json_object_array_add(bm, json_object_new_string("header"));
		ph_jset(d, "bearer_methods_supported", bm);
	}
	slash = strstr(res, "://") ? strchr(strstr(res, "://") + 3, '/') : NULL;
	if (a->metadata_path == NULL)
		a->metadata_path = ph_xasprintf("/.well-known/oauth-protected-resource%s",
						slash && strcmp(slash, "/") != 0 ? slash : "");
	if (a->resource_metadata == NULL && strstr(res, "://") != NULL)
		a->resource_metadata = ph_xasprintf("%.*s%s", (int)(slash ? (size_t)(slash - res) : strlen(res)), res,
						    a->metadata_path);
	if (a->resource_metadata != NULL && !ph_auth_quotable(a->resource_metadata)) {
		/* derived from the resource, it goes into WWW-Authenticate too */
		ph_yread_problem(&p->s, ph_yread_key_line(n, "metadata"), "auth.metadata: the resource makes a "
				 "resource_metadata URL that cannot stand in WWW-Authenticate (printable ASCII "
				 "without '\"' or '\\')");
		free(a->resource_metadata);
		a->resource_metadata = NULL;
	}
	if (a->scope == NULL && *ph_oauth_required(a->oauth))
		a->scope = ph_xstrdup(ph_oauth_required(a->oauth));
}

/* auth.module and auth.symbol: loads the authenticator function the way a
 * handler module is loaded (the configuration's registry keeps the module
 * open as long as the configuration lives) into a->module. Problems are
 * reported at the key. */
static void
parse_module(struct pctx *p, struct ph_conf_ctx *x, struct ph_auth_conf *a, const struct ph_auth_opts *o,
	     const struct ph_ynode *n)
{
	phantom_handler_fn fn;
	if (o->module == NULL && o->symbol == NULL)
		return;
	if (o->module == NULL || o->symbol == NULL) {
		ph_yread_problem(&p->s, ph_yaml_get(n, o->module ? "module" : "symbol")->line,
				 "auth.module and auth.symbol go together");
		return;
	}
	if (x->c->registry == NULL)
		x->c->registry = ph_registry_new();
	fn = ph_registry_module(x->c->registry, o->module, o->symbol, p->dir);
	if (fn == NULL) {
		ph_yread_problem(&p->s, ph_yaml_get(n, "module")->line, "auth.module: %s", x->c->registry->err);
		return;
	}
	a->module = ph_xcalloc(1, sizeof *a->module);
	a->module->kind = PH_HANDLER_C;
	a->module->fn = fn;
	a->module->symbol = ph_xasprintf("%s:%s", o->module, o->symbol);
}

/* What a request only copies out of a checked configuration: the default
 * realm, both WWW-Authenticate challenges and the argon2 cache. */
static void
conf_finish(struct ph_auth_conf *a)
{
	if (a->realm == NULL)
		a->realm = ph_xstrdup("phantom");
	a->challenge = challenge(a, NULL, a->scope);
	a->challenge_invalid = challenge(a, "invalid_token", a->scope);
	a->hdr_missing[0] = (struct ph_header){"WWW-Authenticate", a->challenge};
	a->hdr_invalid[0] = (struct ph_header){"WWW-Authenticate", a->challenge_invalid};
	if (a->oauth != NULL) {
		a->challenge_scope = challenge(a, "insufficient_scope", ph_oauth_required(a->oauth));
		a->hdr_scope[0] = (struct ph_header){"WWW-Authenticate", a->challenge_scope};
	}
	if (a->metadata_doc != NULL) {
		a->metadata_json = ph_xstrdup(json_object_to_json_string_ext(
			a->metadata_doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(a->metadata_doc);
		a->metadata_doc = NULL;
	}
	if (a->argon2_cache > 0)
		a->cache = ph_xcalloc((size_t)a->argon2_cache, sizeof *a->cache);
	randombytes_buf(a->cache_key, sizeof a->cache_key);
}

int
ph_auth_conf_parse(struct ph_conf_ctx *x, const char *key, const struct ph_ynode *n)
{
	const struct ph_auth_opts *o = x->opts;
	struct pctx p = {{x->probs, x->file, NULL, false}, x->c->dir, (int)x->c->limits.yaml_depth};
	struct ph_auth_conf *a;
	const struct ph_ynode *mode_node;
	size_t before = x->before;
	(void)key;
	if (p.yaml_depth < 2)
		p.yaml_depth = 32;
	if (ph_yaml_is_null(n))
		return 0;
	if (o == NULL) {
		ph_yread_problem(&p.s, n->line, "auth: expected a mapping");
		return -1;
	}
	if (sodium_init() < 0) {
		ph_yread_problem(&p.s, n->line, "auth: libsodium failed to initialise");
		return -1;
	}
	a = ph_xcalloc(1, sizeof *a);
	mode_node = parse_settings(&p, a, o, n);
	parse_parts(&p, a, o, n);
	parse_module(&p, x, a, o, n);
	parse_oauth(&p, a, o, n);
	check_mode(&p, a, mode_node, x->probs->n == before);
	if (x->probs->n != before) {
		conf_free(a);
		return -1;
	}
	conf_finish(a);
	conf_free(x->c->auth);
	x->c->auth = a;
	return 0;
}

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

static const struct ph_allow_entry *
find_allow(const struct ph_auth_conf *a, const char *principal)
{
	struct ph_allow_entry key;
	key.principal = (char *)principal;
	if (a->nallow == 0)
		return NULL;
	return bsearch(&key, a->allow, a->nallow, sizeof *a->allow, allow_cmp);
}

/* The principal is known: applies its allow-lists (own, from an exec
 * authenticator, or the configured ones) or refuses it when it has none
 * and default_access is none. */
static enum ph_err
grant(struct ph_req *r, const struct ph_auth_conf *a, const char *principal,
      const struct ph_access *own, char *msg, size_t msz)
{
	const struct ph_allow_entry *e;
	r->principal = principal;
	if (own != NULL) {
		r->access = own;
		r->access_own = true;
		return PH_OK;
	}
	e = find_allow(a, principal);
	if (e != NULL) {
		r->access = &e->access;
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
	if ((e = find_allow(a, principal)) != NULL)
		return &e->access;
	*denied = a->default_deny;
	return NULL;
}

const struct ph_rate_conf *
ph_auth_rate(const struct ph_req *r)
{
	const struct ph_auth_conf *a = r->srv->conf->auth;
	const struct ph_allow_entry *e;
	if (a == NULL || r->principal == NULL || (e = find_allow(a, r->principal)) == NULL ||
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
 * saying whether it gets the invalid_token challenge. */
static const char *
bearer_token(struct ph_req *r, size_t max, size_t *n, const char **why, bool *invalid)
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
	if (*n == 0 || *n > max || !token68(tok, *n))
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
	if ((tok = bearer_token(r, PH_AUTH_TOKEN_MAX, &n, &why, &invalid)) == NULL)
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
	if (!principal_ok(u))
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
		snprintf(key, sizeof key, "scope:%s", json_object_get_string(json_object_array_get_idx(scopes, i)));
		if ((e = find_allow(a, key)) == NULL)
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
					list_push(&st->access.kind[k], ph_xstrdup(one->access.kind[k].v[j]));
			}
		}
		for (int k = 0; k < PH_ACCESS_KINDS; k++) {
			open[k] = open[k] || !e->access.kind[k].set;
			st->access.kind[k].set = !open[k];
			for (size_t j = 0; j < e->access.kind[k].n; j++)
				list_push(&st->access.kind[k], ph_xstrdup(e->access.kind[k].v[j]));
		}
	}
	return st != NULL ? &st->access : one ? &one->access : NULL;
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
	if ((tok = bearer_token(r, 65536 + 1, &n, &why, &invalid)) == NULL)
		return unauthorized(a, invalid, why, msg, msz, hdrs);
	e = ph_oauth_check(a->oauth, tok, n, &g, &why);
	if ((e == PH_OK || e == PH_E_FORBIDDEN) && !principal_ok(g.principal)) {
		e = PH_E_UNAUTHORIZED;
		why = "the token's principal claim is not a usable name (1 to 256 bytes, no control characters)";
	}
	if (e == PH_OK || e == PH_E_FORBIDDEN) {
		const struct ph_access *own = find_allow(a, g.principal) ? NULL : scope_access(r, a, g.scopes);
		r->assigns = g.assigns;
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
	st->challenge = challenge(a, "insufficient_scope", b.data);
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
		int kind = kind_index(k);
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
			why = access_add(acc, kind, json_object_get_string(it));
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
	const char *p = ph_jstr(ans, "principal"), *why;
	struct json_object *al = ph_jget(ans, "allow"), *as = ph_jget(ans, "assigns");
	if (p == NULL || !principal_ok(p))
		return "allow without a usable \"principal\"";
	st->principal = ph_xstrdup(p);
	if (al != NULL && (why = exec_access(al, &st->access)) != NULL)
		return why;
	if (as != NULL) {
		if ((why = exec_assigns(a, as)) != NULL)
			return why;
		st->assigns = json_object_get(as);
		r->assigns = st->assigns;
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
		st->challenge = challenge(a, error, a->scope);
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
		st->challenge = challenge(a, "insufficient_scope", scope);
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
	const char *decision = ph_jstr(ans, "decision");
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
	r->principal = NULL;
	r->access = NULL;
	r->assigns = NULL;
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
	inv.kind = "auth";
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
		if (!ph_json_parse(res.out, res.out_len, PH_JSON_DEPTH_AUTH_ANSWER, &ans))
			ans = NULL;
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
	r->restricted = a->nallow > 0 || ((a->mode == PH_AUTH_EXEC || a->mode == PH_AUTH_MODULE) && r->ex->http);
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
	if (r->access == &st->access)
		r->access = NULL;
	if (r->principal == st->principal)
		r->principal = NULL;
	if (r->assigns == st->assigns)
		r->assigns = NULL;
	json_object_put(st->assigns);
	free(st->principal);
	access_free(&st->access);
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

/* ---- phantom-fcgi --hash-token -------------------------------------------------------- */

int
ph_auth_hash_token(const char *kind, FILE *in, FILE *out)
{
	char buf[PH_AUTH_TOKEN_MAX + 2], hashed[crypto_pwhash_STRBYTES];
	unsigned char digest[crypto_hash_sha256_BYTES];
	struct termios saved, quiet;
	int fd = fileno(in), rc = 1;
	bool tty = isatty(fd) && tcgetattr(fd, &saved) == 0;
	size_t n = 0;

	if (kind == NULL)
		kind = "argon2";
	if (strcmp(kind, "argon2") != 0 && strcmp(kind, "sha256") != 0) {
		fprintf(stderr, "phantom-fcgi: --hash-token takes argon2 or sha256, not '%s'\n", kind);
		return 2;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "phantom-fcgi: libsodium failed to initialise\n");
		return 1;
	}
	if (tty) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(fd, TCSAFLUSH, &quiet);
		fprintf(stderr, "token: ");
	}
	/* read(2), not stdio: no copy of the token left in a FILE buffer */
	while (n < sizeof buf) {
		ssize_t got = read(fd, buf + n, 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || buf[n] == '\n')
			break;
		n++;
	}
	if (tty) {
		tcsetattr(fd, TCSAFLUSH, &saved);
		fprintf(stderr, "\n");
	}
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (n == 0) {
		fprintf(stderr, "phantom-fcgi: no token on standard input\n");
	} else if (n > PH_AUTH_TOKEN_MAX || !token68(buf, n)) {
		fprintf(stderr, "phantom-fcgi: a bearer token is 1 to %d characters of A-Z a-z 0-9 - . _ "
			"~ + / with optional trailing '=' (RFC 6750)\n", PH_AUTH_TOKEN_MAX);
	} else if (strcmp(kind, "sha256") == 0) {
		char hex[2 * crypto_hash_sha256_BYTES + 1];
		crypto_hash_sha256(digest, (const unsigned char *)buf, n);
		sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
		fprintf(out, "%s\n", hex);
		rc = 0;
	} else if (crypto_pwhash_str(hashed, buf, n, crypto_pwhash_OPSLIMIT_INTERACTIVE,
				     crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
		fprintf(stderr, "phantom-fcgi: argon2 hashing failed (out of memory?)\n");
	} else {
		fprintf(out, "%s\n", hashed);
		rc = 0;
	}
	sodium_memzero(buf, sizeof buf);
	sodium_memzero(digest, sizeof digest);
	if (fflush(out) != 0)
		rc = 1;
	return rc;
}
