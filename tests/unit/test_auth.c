/* test_auth.c: the auth section, each mode of ph_auth_check on a fake
 * exchange, the constant-time compare helper, allow-lists and the metadata
 * route. */
#include "first.h"
#include "fake_front.h"
#include "ph_auth.h"
#include "ph_features.h"
#include "ph_build.h"
#include "ph_core.h"
#include "ph_json.h"
#include "ph_server.h"
#include "ph_util.h"
#include "tap.h"
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Prints configuration problems as TAP comments. */
static void
show(const char *probs)
{
	const char *p = probs;
	while (*p) {
		size_t n = strcspn(p, "\n");
		printf("#   %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static char dir[] = "/tmp/phantom-test-auth.XXXXXX";

static void
write_file(const char *name, const char *text, int mode)
{
	char *p = ph_path_join(dir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	chmod(p, (mode_t)mode);
	free(p);
}

/* Loads a configuration from text (relative paths against dir). Returns the
 * server or NULL; the problems joined by newlines in probs_out. */
static struct ph_server *
load(const char *yaml, char *probs_out, size_t psz)
{
	struct ph_conf_problems probs = {0};
	struct ph_config *c = ph_conf_load_buf("test.yaml", dir, yaml, strlen(yaml), &probs);
	struct ph_server *s = c ? ph_server_new(c, &probs) : NULL;
	if (probs_out) {
		probs_out[0] = '\0';
		for (size_t i = 0; i < probs.n; i++)
			snprintf(probs_out + strlen(probs_out), psz - strlen(probs_out), "%s\n", probs.v[i]);
	}
	ph_conf_problems_free(&probs);
	return s;
}

/* Runs ph_auth_check for a request with these params (NULL: stdio). */
struct result {
	enum ph_err e;
	char msg[512];
	char principal[300];
	char challenge[1024];
	bool restricted;
};

static struct ph_req req;
static struct fake_front fk; /* the exchange of the last check */

static struct result
check(struct ph_server *s, const char *const *params)
{
	struct result out;
	const struct ph_header *h = NULL;
	memset(&out, 0, sizeof out);
	memset(&req, 0, sizeof req);
	fake_free(&fk);
	fake_init(&fk, params != NULL);
	for (size_t i = 0; params && params[i]; i += 2)
		fake_param(&fk, params[i], params[i + 1]);
	req.srv = s;
	req.ex = &fk.ex;
	req.method = "tools/list";
	out.e = ph_auth_check(&req, out.msg, sizeof out.msg, &h);
	snprintf(out.principal, sizeof out.principal, "%s", req.who.principal ? req.who.principal : "-");
	for (; h && h->name; h++)
		if (strcmp(h->name, "WWW-Authenticate") == 0)
			snprintf(out.challenge, sizeof out.challenge, "%s", h->value);
	out.restricted = ph_access_restricted(&req);
	return out;
}

static char *
sha_hex(const char *token)
{
	unsigned char d[crypto_hash_sha256_BYTES];
	char *hex = ph_xmalloc(2 * sizeof d + 1);
	crypto_hash_sha256(d, (const unsigned char *)token, strlen(token));
	sodium_bin2hex(hex, 2 * sizeof d + 1, d, sizeof d);
	return hex;
}

static void
test_compare_helper(void)
{
	struct ph_auth_conf a;
	struct ph_token t[4];
	unsigned char d[crypto_hash_sha256_BYTES];
	memset(&a, 0, sizeof a);
	memset(t, 0, sizeof t);
	t[0].argon2 = true; /* its sha256 stays all zero and must never match */
	for (int i = 1; i < 4; i++)
		crypto_hash_sha256(t[i].sha256, (const unsigned char *)(i == 1 ? "one" : i == 2 ? "two" : "three"),
				   i == 1 ? 3 : i == 2 ? 3 : 5);
	a.tokens = t;
	a.ntokens = 4;
	memcpy(d, t[2].sha256, sizeof d);
	is_int(ph_auth_sha256_find(&a, d), 2, "compare helper: finds the middle entry");
	memcpy(d, t[3].sha256, sizeof d);
	is_int(ph_auth_sha256_find(&a, d), 3, "compare helper: finds the last entry");
	memcpy(d, t[1].sha256, sizeof d);
	is_int(ph_auth_sha256_find(&a, d), 1, "compare helper: finds the first sha256 entry");
	d[0] ^= 1;
	is_int(ph_auth_sha256_find(&a, d), -1, "compare helper: a digest differing in the first byte");
	d[0] ^= 1;
	d[sizeof d - 1] ^= 0x80;
	is_int(ph_auth_sha256_find(&a, d), -1, "compare helper: a digest differing in the last bit");
	memset(d, 0, sizeof d);
	is_int(ph_auth_sha256_find(&a, d), -1, "compare helper: argon2 entries never match by digest");
	a.ntokens = 0;
	is_int(ph_auth_sha256_find(&a, d), -1, "compare helper: no entries");
}

static void
test_config_problems(void)
{
	char probs[4096];
	struct ph_server *s;

	s = load("auth: { mode: bearer }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "test.yaml:1: auth.mode bearer: no token"), "bearer without tokens");
	s = load("auth:\n  mode: bearer\n  tokens:\n    - { principal: a, sha256: abc }\n", probs, sizeof probs);
	if (!ok(s == NULL && strstr(probs, "test.yaml:4: auth.tokens[0].sha256: expected 64 hex digits"),
	        "short sha256 named with its line"))
		show(probs);
	s = load("auth:\n  mode: bearer\n  tokens:\n    - { principal: a, sha256: "
		 "zz00000000000000000000000000000000000000000000000000000000000000 }\n", probs, sizeof probs);
	if (!ok(s == NULL && strstr(probs, "test.yaml:4: auth.tokens[0].sha256: expected 64 hex digits"),
	        "non-hex sha256"))
		show(probs);
	s = load("auth:\n  mode: bearer\n  tokens:\n    - { principal: a, argon2: \"$argon2id$nope\" }\n",
		 probs, sizeof probs);
	if (!ok(s == NULL && strstr(probs, "test.yaml:4: auth.tokens[0].argon2: not an argon2 string"),
	        "broken argon2 string"))
		show(probs);
	s = load("auth:\n  mode: bearer\n  tokens:\n    - { principal: a }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "give exactly one of sha256 and argon2"), "token without a hash");
	s = load("auth:\n  mode: none\n  tokens:\n    - { principal: a, sha256: "
		 "0000000000000000000000000000000000000000000000000000000000000000 }\n", probs, sizeof probs);
	if (!ok(s == NULL && strstr(probs, "test.yaml:2: auth.tokens and auth.tokens_file are used only with"),
	        "tokens without bearer mode are an error"))
		show(probs);
	s = load("auth:\n  mode: bearer\n  tokens_file: missing.yaml\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "test.yaml:3: auth.tokens_file: cannot read"), "missing tokens_file");
	write_file("bad-tokens.yaml", "- principal: a\n  sha256: 00\n- {principal: b, sha256: x, what: 1}\n",
		   0600);
	s = load("auth:\n  mode: bearer\n  tokens_file: bad-tokens.yaml\n", probs, sizeof probs);
	if (!ok(s == NULL && strstr(probs, "bad-tokens.yaml:2: auth.tokens_file[0].sha256: expected 64 hex digits"),
	        "tokens_file problems name that file and line"))
		show(probs);
	ok(strstr(probs, "bad-tokens.yaml:3: auth.tokens_file[1]: unknown key 'what'") != NULL,
	   "tokens_file: unknown key reported");
	s = load("auth:\n  realm: 'a\"b'\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "test.yaml:2: auth.realm: printable ASCII"), "realm with a quote");
	s = load("auth:\n  colour: red\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "test.yaml:2: unknown key 'auth.colour'"), "unknown auth key");
	s = load("auth:\n  allow:\n    alice: { tool: [x] }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "test.yaml:3: unknown key 'auth.allow.alice.tool'"),
	   "allow-list typo is an error, not a grant");
	s = load("auth:\n  allow:\n    alice: { skills: [/abs] }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "a skill path is relative"), "absolute skill path refused");
	s = load("auth: { mode: exec }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "auth.command is required"), "exec without a command");
	s = load("auth: { mode: exec, command: [./nope] }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "nope is not executable"), "exec command must be executable");
	s = load("auth:\n  metadata: { path: /x, document: { issuer: y } }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "\"resource\" string"), "metadata without resource");
	s = load("auth:\n  metadata: { path: 'x?y', document: { resource: y } }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "auth.metadata.path: an absolute URL path"), "metadata path");
	s = load("auth: { mode: bearer, tokens: [], timeout_ms: 0 }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "auth.timeout_ms: expected an integer from 1 to 60000"),
	   "timeout_ms bounds");
	s = load("auth:\n  mode: bearer\n  tokens:\n    - { principal: a, sha256: "
		 "0000000000000000000000000000000000000000000000000000000000000000 }\n"
		 "    - { principal: b, sha256: "
		 "0000000000000000000000000000000000000000000000000000000000000000 }\n", probs, sizeof probs);
	if (!ok(s == NULL && strstr(probs, "test.yaml:5: auth.tokens[1].sha256: the same token is listed twice"),
	        "duplicate token"))
		show(probs);
	s = load("server: { name: x }\n", probs, sizeof probs);
	ok(s != NULL && s->conf->auth == NULL, "no auth section: no auth");
	ph_server_free(s);
}

static void
test_bearer(void)
{
	char yaml[4096], probs[2048], argon[crypto_pwhash_STRBYTES], tfile[512];
	char *alice = sha_hex("alice-token"), *carol = sha_hex("carol-token");
	struct ph_server *s;
	struct result r;

	if (crypto_pwhash_str(argon, "bob-token", 9, crypto_pwhash_OPSLIMIT_INTERACTIVE,
			      crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0)
		abort();
	snprintf(tfile, sizeof tfile, "- principal: bob\n  argon2: \"%s\"\n", argon);
	write_file("tokens.yaml", tfile, 0600);
	snprintf(yaml, sizeof yaml,
		 "auth:\n"
		 "  mode: bearer\n"
		 "  realm: test-realm\n"
		 "  resource_metadata: https://mcp.example.com/.well-known/oauth-protected-resource/mcp\n"
		 "  scope: \"mcp:read mcp:write\"\n"
		 "  tokens:\n"
		 "    - { principal: alice, sha256: %s }\n"
		 "    - { principal: carol, sha256: %s }\n"
		 "  tokens_file: tokens.yaml\n"
		 "  default_access: none\n"
		 "  allow:\n"
		 "    alice: { tools: [search] }\n"
		 "    bob:\n",
		 alice, carol);
	s = load(yaml, probs, sizeof probs);
	if (!ok(s != NULL, "bearer configuration loads"))
		show(probs);
	if (s == NULL)
		return;
	is_int(s->conf->auth->ntokens, 3, "three tokens (two inline, one from tokens_file)");

	r = check(s, (const char *const[]){NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "no Authorization: 401");
	is_str(r.msg, "Unauthorized", "no Authorization: message");
	is_str(r.challenge, "Bearer realm=\"test-realm\", resource_metadata=\"https://mcp.example.com/"
	       ".well-known/oauth-protected-resource/mcp\", scope=\"mcp:read mcp:write\"",
	       "no Authorization: challenge without error");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer alice-token", NULL});
	is_int(r.e, PH_OK, "sha256 token accepted");
	is_str(r.principal, "alice", "sha256 token: principal alice");
	ok(r.restricted, "alice has an allow-list: restricted");
	ok(ph_access_allowed(&req, PH_KIND_TOOL, "search"), "alice: tool search allowed");
	ok(!ph_access_allowed(&req, PH_KIND_TOOL, "delete"), "alice: tool delete hidden");
	ok(ph_access_allowed(&req, PH_KIND_PROMPT, "anything"), "alice: prompts not restricted");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "bearer   alice-token  ", NULL});
	is_int(r.e, PH_OK, "scheme is case-insensitive, blanks around the token ignored");

	r = check(s, (const char *const[]){"REDIRECT_HTTP_AUTHORIZATION", "Bearer alice-token", NULL});
	is_int(r.e, PH_OK, "REDIRECT_HTTP_AUTHORIZATION (Apache rewrite) accepted");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer alice-tokeN", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "wrong token: 401");
	is_str(r.msg, "Unauthorized: invalid token", "wrong token: message");
	ok(strstr(r.challenge, "Bearer realm=\"test-realm\", error=\"invalid_token\", resource_metadata=")
	   == r.challenge, "wrong token: error=\"invalid_token\" after the realm");
	is_str(r.principal, "-", "wrong token: no principal");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Basic YWxpY2U6eA==", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "Basic credentials: 401");
	ok(strstr(r.challenge, "error=") == NULL, "Basic credentials: challenge without error");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "Bearer without a token: 401");
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer a b", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "token with a space: 401");
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearerx alice-token", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "scheme must be exactly Bearer");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer bob-token", NULL});
	is_int(r.e, PH_OK, "argon2 token from tokens_file accepted");
	is_str(r.principal, "bob", "argon2 token: principal bob");
	ok(req.who.access != NULL && ph_access_allowed(&req, PH_KIND_TOOL, "delete"),
	   "bob has an empty entry: sees everything");
	ok(r.restricted, "allow-lists exist: bob's results are private too");
	is_int(s->conf->auth->ncache, 1, "argon2 success remembered");
	{
		int64_t t0 = ph_now_us();
		r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer bob-token", NULL});
		is_int(r.e, PH_OK, "argon2 token again");
		ok(ph_now_us() - t0 < 20000, "the second argon2 check comes from the cache (%lld us)",
		   (long long)(ph_now_us() - t0));
	}

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer carol-token", NULL});
	is_int(r.e, PH_E_FORBIDDEN, "known principal without an entry and default_access none: 403");
	is_str(r.msg, "Forbidden: no access for this principal", "403 message");
	is_str(r.principal, "carol", "403: the principal is known (for the log)");
	is_str(r.challenge, "", "403: no challenge");

	r = check(s, NULL);
	is_int(r.e, PH_OK, "stdio without stdio_principal: no authentication");
	is_str(r.principal, "-", "stdio: no principal");
	ph_server_free(s);
	free(alice);
	free(carol);
}

static void
test_remote_user_and_stdio(void)
{
	struct ph_server *s;
	struct result r;
	char probs[1024];
	s = load("auth:\n  mode: remote_user\n  stdio_principal: alice\n  allow:\n"
		 "    alice: { skills: [acme/billing, git-workflow/], resources: [\"file:///a\", \"notes://{id}\"], "
		 "prompts: [] }\n",
		 probs, sizeof probs);
	if (!ok(s != NULL, "remote_user configuration loads"))
		show(probs);
	if (s == NULL)
		return;
	r = check(s, (const char *const[]){"REMOTE_USER", "dave", NULL});
	is_int(r.e, PH_OK, "REMOTE_USER accepted");
	is_str(r.principal, "dave", "REMOTE_USER is the principal");
	ok(req.who.access == NULL, "dave has no entry: no allow-list");
	ok(r.restricted, "but results are private, since allow-lists exist");
	r = check(s, (const char *const[]){"REDIRECT_REMOTE_USER", "erin", NULL});
	is_str(r.principal, "erin", "REDIRECT_REMOTE_USER accepted");
	r = check(s, (const char *const[]){"REMOTE_USER", "", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "empty REMOTE_USER: 401");
	r = check(s, (const char *const[]){"REMOTE_USER", "a\nb", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "REMOTE_USER with a newline: 401");

	r = check(s, NULL);
	is_str(r.principal, "alice", "stdio: auth.stdio_principal");
	ok(ph_access_allowed(&req, PH_KIND_SKILL, "acme/billing"), "skill: the entry itself");
	ok(ph_access_allowed(&req, PH_KIND_SKILL, "acme/billing/refunds"), "skill: a parent grants nested");
	ok(ph_access_allowed(&req, PH_KIND_SKILL, "acme/billing/refunds/partial-refunds"),
	   "skill: a parent grants deeper nested");
	ok(!ph_access_allowed(&req, PH_KIND_SKILL, "acme/billing-old"), "skill: prefix only on a segment");
	ok(!ph_access_allowed(&req, PH_KIND_SKILL, "acme"), "skill: a child does not grant its parent");
	ok(ph_access_allowed(&req, PH_KIND_SKILL, "git-workflow"), "skill: trailing slash in an entry ignored");
	ok(!ph_access_allowed(&req, PH_KIND_SKILL, NULL), "skill: NULL name refused when restricted");
	ok(ph_access_allowed(&req, PH_KIND_RESOURCE, "file:///a"), "resource: by uri");
	ok(ph_access_allowed(&req, PH_KIND_RESOURCE, "notes://{id}"), "resource: template by uri_template");
	ok(!ph_access_allowed(&req, PH_KIND_RESOURCE, "notes://1"), "resource: a concrete uri is not its template");
	ok(!ph_access_allowed(&req, PH_KIND_RESOURCE, "file:///b"), "resource: other uri hidden");
	ok(!ph_access_allowed(&req, PH_KIND_PROMPT, "greet"), "prompts: [] hides every prompt");
	ok(ph_access_allowed(&req, PH_KIND_TOOL, "anything"), "tools: no list, no restriction");
	ph_server_free(s);

	s = load("auth: { mode: remote_user, default_access: none, allow: { admin: } }\n", probs, sizeof probs);
	r = check(s, (const char *const[]){"REMOTE_USER", "guest", NULL});
	is_int(r.e, PH_E_FORBIDDEN, "default_access none: an unlisted user gets 403");
	r = check(s, (const char *const[]){"REMOTE_USER", "admin", NULL});
	is_int(r.e, PH_OK, "default_access none: a listed user passes");
	ph_server_free(s);

	s = load("auth: { mode: none }\n", probs, sizeof probs);
	r = check(s, (const char *const[]){"REMOTE_USER", "x", NULL});
	ok(r.e == PH_OK && strcmp(r.principal, "-") == 0, "mode none: no principal");
	ok(!r.restricted && ph_access_allowed(&req, PH_KIND_TOOL, "t"), "mode none: everything visible");
	ph_server_free(s);
}

static void
test_exec(void)
{
	struct ph_server *s;
	struct result r;
	char probs[1024];
	/* decides on the Authorization header; dumps its input for inspection */
	write_file("authn.sh",
		   "#!/bin/sh\n"
		   "in=$(cat)\n"
		   "printf '%s' \"$in\" > \"$(dirname \"$0\")/last-input.json\"\n"
		   "case \"$in\" in\n"
		   "*'Bearer good'*) echo '{\"decision\":\"allow\",\"principal\":\"gina\"}';;\n"
		   "*'Bearer lists'*) echo '{\"decision\":\"allow\",\"principal\":\"hal\","
		   "\"allow\":{\"tools\":[\"t1\"],\"skills\":[\"acme\"]}}';;\n"
		   "*'Bearer typo'*) echo '{\"decision\":\"allow\",\"principal\":\"hal\",\"allow\":{\"tool\":[]}}';;\n"
		   "*'Bearer expired'*) echo '{\"decision\":\"unauthorized\",\"error\":\"invalid_token\","
		   "\"message\":\"token expired\"}';;\n"
		   "*'Bearer scope'*) echo '{\"decision\":\"forbidden\",\"message\":\"needs admin\","
		   "\"scope\":\"admin\"}';;\n"
		   "*'Bearer denied'*) echo '{\"decision\":\"forbidden\"}';;\n"
		   "*'Bearer slow'*) sleep 5; echo '{\"decision\":\"allow\",\"principal\":\"x\"}';;\n"
		   "*'Bearer crash'*) exit 3;;\n"
		   "*'Bearer flood'*) yes '{}' | head -c 200000;;\n"
		   "*'Bearer garbage'*) echo 'Bearer garbage is not JSON';;\n"
		   "*) echo '{\"decision\":\"unauthorized\"}';;\n"
		   "esac\n",
		   0755);
	s = load("auth:\n  mode: exec\n  command: [./authn.sh]\n  timeout_ms: 500\n  max_output: 4096\n"
		 "  realm: r\n  allow:\n    gina: { prompts: [p] }\n",
		 probs, sizeof probs);
	if (!ok(s != NULL, "exec configuration loads"))
		show(probs);
	if (s == NULL)
		return;
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer good", "REMOTE_ADDR", "127.0.0.1",
					   "HTTP_MCP_METHOD", "tools/list", "HTTP_X_SECRET", "no", NULL});
	is_int(r.e, PH_OK, "exec allow");
	is_str(r.principal, "gina", "exec allow: principal");
	ok(!ph_access_allowed(&req, PH_KIND_PROMPT, "q") && ph_access_allowed(&req, PH_KIND_PROMPT, "p"),
	   "exec allow without lists: the configured allow-list applies");
	ok(r.restricted, "exec mode: results are private");
	{
		char *p = ph_path_join(dir, "last-input.json"), *buf = NULL;
		size_t len;
		struct json_object *in = NULL;
		if (ph_read_file(p, 65536, &buf, &len) == 0)
			in = json_tokener_parse(buf);
		is_str(ph_jstr(ph_jget(in, "headers"), "authorization"), "Bearer good",
		       "exec input: headers.authorization");
		is_str(ph_jstr(ph_jget(in, "headers"), "mcp-method"), "tools/list", "exec input: mcp-method");
		ok(ph_jget(ph_jget(in, "headers"), "x-secret") == NULL, "exec input: unlisted header left out");
		is_str(ph_jstr(in, "remote_addr"), "127.0.0.1", "exec input: remote_addr");
		is_str(ph_jstr(in, "method"), "tools/list", "exec input: JSON-RPC method");
		json_object_put(in);
		free(buf);
		free(p);
	}
	ph_auth_end(&req);
	ok(req.who.principal == NULL && req.auth_state == NULL, "ph_auth_end releases the state");

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer lists", NULL});
	is_str(r.principal, "hal", "exec allow with lists");
	ok(ph_access_allowed(&req, PH_KIND_TOOL, "t1") && !ph_access_allowed(&req, PH_KIND_TOOL, "t2"),
	   "exec lists: tools");
	ok(ph_access_allowed(&req, PH_KIND_SKILL, "acme/x/y"), "exec lists: skills nest");
	ph_auth_end(&req);

	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer expired", NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "exec unauthorized");
	is_str(r.msg, "token expired", "exec unauthorized: its message");
	is_str(r.challenge, "Bearer realm=\"r\", error=\"invalid_token\"", "exec unauthorized: its error");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){NULL});
	is_int(r.e, PH_E_UNAUTHORIZED, "exec: no credentials");
	is_str(r.challenge, "Bearer realm=\"r\"", "exec: plain challenge");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer scope", NULL});
	is_int(r.e, PH_E_FORBIDDEN, "exec forbidden");
	is_str(r.msg, "needs admin", "exec forbidden: message");
	is_str(r.challenge, "Bearer realm=\"r\", error=\"insufficient_scope\", scope=\"admin\"",
	       "exec forbidden with scope: insufficient_scope challenge");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer denied", NULL});
	ok(r.e == PH_E_FORBIDDEN && strcmp(r.msg, "Forbidden") == 0 && r.challenge[0] == '\0',
	   "exec forbidden without details");
	ph_auth_end(&req);

	{
		static const char *const bad[] = {"slow", "crash", "flood", "garbage", "typo"};
		for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
			char h[64];
			int64_t t0 = ph_now_us();
			snprintf(h, sizeof h, "Bearer %s", bad[i]);
			r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", h, NULL});
			ok(r.e == PH_E_INTERNAL && strcmp(r.principal, "-") == 0,
			   "authenticator '%s': internal error, nobody authenticated", bad[i]);
			ok(ph_now_us() - t0 < 1500000, "authenticator '%s': within the timeout", bad[i]);
			ph_auth_end(&req);
		}
	}
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer good", NULL});
	is_int(r.e, PH_OK, "the next exec request still works");
	ph_auth_end(&req);
	ph_server_free(s);

	/* an authenticator that answers without reading 300 KB of input */
	write_file("noread.sh", "#!/bin/sh\necho '{\"decision\":\"allow\",\"principal\":\"quick\"}'\n", 0755);
	s = load("auth: { mode: exec, command: [./noread.sh], headers: [cookie] }\n", probs, sizeof probs);
	if (!ok(s != NULL, "exec configuration with a non-reading command loads"))
		show(probs);
	if (s != NULL) {
		char *big = ph_xmalloc(300001);
		memset(big, 'c', 300000);
		big[300000] = '\0';
		r = check(s, (const char *const[]){"HTTP_COOKIE", big, NULL});
		ok(r.e == PH_OK && strcmp(r.principal, "quick") == 0,
		   "a command that does not read its input: EPIPE is not fatal, its answer counts");
		ph_auth_end(&req);
		free(big);
		ph_server_free(s);
	}
}

static void
test_metadata(void)
{
	struct ph_server *s;
	const char *doc;
	char probs[1024];
	write_file("prm.json", "{\"resource\":\"https://x.example/mcp\",\"scopes_supported\":[\"a\"]}\n", 0644);
	s = load("auth:\n  metadata: { path: /.well-known/oauth-protected-resource/mcp, file: prm.json }\n",
		 probs, sizeof probs);
	if (!ok(s != NULL, "metadata from a file"))
		show(probs);
	if (s == NULL)
		return;
	check(s, (const char *const[]){"REQUEST_URI", "/.well-known/oauth-protected-resource/mcp?x=1", NULL});
	doc = ph_auth_metadata(&req);
	is_str(doc ? doc : "-", "{\"resource\":\"https://x.example/mcp\",\"scopes_supported\":[\"a\"]}",
	       "metadata path answered with the document (query ignored)");
	/* the core sends it: a GET of that path */
	fake_free(&fk);
	fake_init(&fk, true);
	fake_param(&fk, "REQUEST_METHOD", "GET");
	fake_param(&fk, "REQUEST_URI", "/.well-known/oauth-protected-resource/mcp");
	fake_serve(&fk, s);
	is_int(fk.status, 200, "metadata: 200");
	is_str(fk.out.data, "{\"resource\":\"https://x.example/mcp\",\"scopes_supported\":[\"a\"]}",
	       "metadata: the document");
	ok(fake_has_header(&fk, "Access-Control-Allow-Origin: *\n"), "metadata: CORS for browsers");
	check(s, (const char *const[]){"REQUEST_URI", "/.well-known/oauth-protected-resource", NULL});
	ok(ph_auth_metadata(&req) == NULL && fk.status == 0, "another path is not answered");
	check(s, (const char *const[]){"REQUEST_URI", "/.well-known/oauth-protected-resource/mcpx", NULL});
	ok(ph_auth_metadata(&req) == NULL, "a longer path is not answered");
	ph_server_free(s);
}

/* auth.mode module with tests/modules/testmod.c:authenticate (found on
 * PHANTOM_MODULE_PATH, which make check sets). */
static void
test_module(void)
{
	char probs[4096];
	struct ph_server *s;
	struct result r;
	s = load("auth: { mode: module }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "auth.mode module: auth.module and auth.symbol are required"),
	   "module mode without a module");
	s = load("auth: { mode: module, symbol: authenticate }\n", probs, sizeof probs);
	ok(s == NULL && strstr(probs, "test.yaml:1: auth.module and auth.symbol go together"),
	   "a symbol without a module");
	s = load("auth: { mode: bearer, tokens: [], module: testmod.so, symbol: authenticate }\n", probs,
		 sizeof probs);
	ok(s == NULL && strstr(probs, "auth.module and auth.symbol are used only with auth.mode module"),
	   "a module in another mode");
	if (getenv("PHANTOM_MODULE_PATH") == NULL) {
		printf("# module checks skipped: PHANTOM_MODULE_PATH not set (run through make check)\n");
		return;
	}
	s = load("auth: { mode: module, module: testmod.so, symbol: authenticate, assigns_depth: 2 }\n", probs,
		 sizeof probs);
	if (!ok(s != NULL, "module configuration loads"))
		show(probs);
	if (s == NULL)
		return;
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer alice-pro", NULL});
	is_int(r.e, PH_OK, "module allow");
	is_str(r.principal, "alice", "module allow: principal");
	is_str(ph_assign_text(req.who.assigns, "plan", 4), "pro", "module allow: its assigns");
	ok(r.restricted, "module mode: results are private");
	ph_auth_end(&req);
	ok(req.who.principal == NULL && req.who.assigns == NULL && req.auth_state == NULL, "ph_auth_end releases them");
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer plain", NULL});
	ok(r.e == PH_OK && req.who.assigns == NULL, "module allow without assigns");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer forbid", NULL});
	ok(r.e == PH_E_FORBIDDEN && strcmp(r.msg, "not on a weekday") == 0, "module forbidden: 403, its message");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer nobody", NULL});
	ok(r.e == PH_E_UNAUTHORIZED && strstr(r.challenge, "Bearer realm=") == r.challenge,
	   "module unauthorized: 401 with the challenge");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer null", NULL});
	ok(r.e == PH_E_INTERNAL && strcmp(r.principal, "-") == 0, "module returning NULL: 500, nobody");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer alice-free", NULL});
	ok(r.e == PH_OK, "assigns of depth 1 within assigns_depth 2");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer deep", NULL});
	ok(r.e == PH_E_INTERNAL && req.who.assigns == NULL, "module assigns deeper than assigns_depth: 500");
	ph_auth_end(&req);
	r = check(s, (const char *const[]){"HTTP_AUTHORIZATION", "Bearer list", NULL});
	ok(r.e == PH_E_INTERNAL, "module assigns that are not an object: 500");
	ph_auth_end(&req);
	ph_server_free(s);
}

/* An assign holding U+0000 is no value: a module's strcmp would read the
 * text before the NUL. */
static void
test_assign_nul(void)
{
	static const char doc[] = "{\"tenant\":\"acme\\u0000x\",\"plan\":\"pro\",\"n\":5}";
	struct json_object *as = NULL;
	ok(ph_json_parse(doc, sizeof doc - 1, 4, &as), "assigns with a NUL in a value parse");
	ok(ph_assign_text(as, "tenant", 6) == NULL, "an assign holding U+0000 is not read as the text before it");
	is_str(ph_assign_text(as, "plan", 4), "pro", "... the others are read");
	is_str(ph_assign_text(as, "n", 1), "5", "... numbers in JSON");
	json_object_put(as);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL || sodium_init() < 0)
		return 1;
	test_compare_helper();
	test_assign_nul();
	test_config_problems();
	test_bearer();
	test_remote_user_and_stdio();
	test_exec();
	test_module();
	test_metadata();
	{
		char cmd[512];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	fake_free(&fk);
	return tap_done();
}
