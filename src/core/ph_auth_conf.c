/* ph_auth_conf.c: the `auth` section read into struct ph_auth_conf (at start
 * and on SIGHUP, never per request): the mode, tokens and tokens_file,
 * allow-lists and their rates, the exec and module authenticators, the
 * RFC 9728 document and auth.oauth (parsed by ph_oauth.c), and the
 * WWW-Authenticate values built once. The checks of a request are in
 * ph_auth.c; ph_auth_int.h has what both use. */
#include "first.h"
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

_Static_assert(PH_ACCESS_KINDS == PH_KIND_SKILL + 1, "one allow-list per enum ph_kind");

/* Keys of auth.allow.<principal>, in enum ph_kind order. */
static const char *const kind_names[PH_ACCESS_KINDS] = {"tools", "prompts", "resources", "skills"};

#define ALLOW_ENTRY_MAX 1024     /* bytes of one allow-list entry */
#define TOKENS_FILE_MAX (1 << 20)
#define METADATA_MAX (64 << 10)
#define COMMAND_ARGS_MAX 64
#define HEADERS_MAX 64          /* names in auth.headers */

/* Request headers an exec authenticator gets unless auth.headers says
 * otherwise: credentials, where the request came from, what it is for. */
static const char *const default_headers[] = {
	"authorization", "cookie", "host", "origin", "user-agent", "forwarded", "x-forwarded-for",
	"x-real-ip", "mcp-protocol-version", "mcp-method", "mcp-name",
};

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
bool
ph_auth_principal_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f)
			return false;
	return n > 0 && n <= PH_AUTH_PRINCIPAL_MAX;
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

void
ph_auth_list_push(struct ph_allow_list *l, char *s)
{
	l->v = ph_xrealloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = s;
}

void
ph_auth_access_free(struct ph_access *acc)
{
	for (int k = 0; k < PH_ACCESS_KINDS; k++) {
		for (size_t i = 0; i < acc->kind[k].n; i++)
			free(acc->kind[k].v[i]);
		free(acc->kind[k].v);
	}
	memset(acc, 0, sizeof *acc);
}

int
ph_auth_kind_index(const char *name)
{
	for (int k = 0; k < PH_ACCESS_KINDS; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}

/* Adds one allow-list entry s of kind k; returns NULL or why it is refused. */
const char *
ph_auth_access_add(struct ph_access *acc, int k, const char *s)
{
	const char *why = NULL;
	size_t n = strlen(s);
	if (n == 0 || n > ALLOW_ENTRY_MAX)
		return "an entry is 1 to 1024 bytes";
	if (k == PH_KIND_SKILL) {
		char *e = skill_entry(s, &why);
		if (e == NULL)
			return why;
		ph_auth_list_push(&acc->kind[k], e);
	} else {
		ph_auth_list_push(&acc->kind[k], ph_xstrdup(s));
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
		int k = ph_auth_kind_index(n->keys[i]);
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
			why = ph_auth_access_add(acc, k, it->str);
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

const struct ph_allow_entry *
ph_auth_find_allow(const struct ph_auth_conf *a, const char *principal)
{
	struct ph_allow_entry key;
	key.principal = (char *)principal;
	if (a->nallow == 0)
		return NULL;
	return bsearch(&key, a->allow, a->nallow, sizeof *a->allow, allow_cmp);
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
		if (!ph_auth_principal_ok(n->keys[i]))
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
	if (!ph_auth_principal_ok(s)) {
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
			errno == EFBIG ? "larger than 1 MiB" : ph_strerror(errno));
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
				errno == EFBIG ? "larger than 64 KiB" : ph_strerror(errno));
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
char *
ph_auth_challenge(const struct ph_auth_conf *a, const char *error, const char *scope)
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
		ph_auth_access_free(&a->allow[i].access);
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

/* The authenticator's exec keys: command (found as a handler's exec is: a
 * program holding '/' relative to this file, a bare name in the PATH it
 * gets), timeout_ms and max_output, with bounds of its own: it runs before
 * every request, so it gets less time and output than a handler
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
	if (o->stdio_principal && !ph_auth_principal_ok(o->stdio_principal))
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
	if (!ph_jhas(d, "scopes_supported")) {
		ph_jset(d, "scopes_supported", ph_oauth_scopes_supported(a->oauth));
		a->scopes_derived = true; /* the items' come in ph_auth_metadata_scopes */
	}
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

/* Adds sc to the array arr unless it is there or is offline_access (a
 * refresh-token scope that no operation needs). */
static void
scope_supported_add(struct json_object *arr, const char *sc)
{
	if (strcmp(sc, "offline_access") == 0)
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), sc) == 0)
			return;
	json_object_array_add(arr, json_object_new_string(sc));
}

void
ph_auth_metadata_scopes(struct ph_auth_conf *a, struct json_object *scopes)
{
	struct json_object *doc = NULL, *arr;
	if (a == NULL || !a->scopes_derived || a->metadata_json == NULL ||
	    !ph_json_parse(a->metadata_json, strlen(a->metadata_json), 8, &doc))
		return;
	if ((arr = ph_jget(doc, "scopes_supported")) != NULL && json_object_is_type(arr, json_type_array)) {
		for (size_t i = 0; i < a->nallow; i++)
			if (strncmp(a->allow[i].principal, "scope:", 6) == 0)
				scope_supported_add(arr, a->allow[i].principal + 6);
		for (size_t i = 0; scopes && i < json_object_array_length(scopes); i++)
			scope_supported_add(arr, json_object_get_string(json_object_array_get_idx(scopes, i)));
		free(a->metadata_json);
		a->metadata_json = ph_xstrdup(json_object_to_json_string_ext(
			doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(doc);
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
	a->challenge = ph_auth_challenge(a, NULL, a->scope);
	a->challenge_invalid = ph_auth_challenge(a, "invalid_token", a->scope);
	a->hdr_missing[0] = (struct ph_header){"WWW-Authenticate", a->challenge};
	a->hdr_invalid[0] = (struct ph_header){"WWW-Authenticate", a->challenge_invalid};
	if (a->oauth != NULL) {
		a->challenge_scope = ph_auth_challenge(a, "insufficient_scope", ph_oauth_required(a->oauth));
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
