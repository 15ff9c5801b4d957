/* test_jwt.c: the JWS/JWK parser and verifier (lib/ph_jwt.c) on keys and
 * tokens made at test time by the openssl command line (tests/jwt_tool.py
 * signs with openssl dgst and pkeyutl): RS256, PS256, ES256 and EdDSA
 * tokens verify; every hostile token of issue 28 is refused with the reason
 * a log line would give; JWK sets keep only the keys that are safe to use. */
#include "first.h"
#include "ph_jwt.h"
#include "ph_util.h"
#include "tap.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#ifndef PH_HAVE_OAUTH
#include "ph_conf.h"
/* A build without libcrypto and libcurl refuses the mode with a message
 * that says why and what to install. */
int
main(void)
{
	static const char y[] = "auth:\n  mode: oauth\n  oauth: { issuer: https://as.example.com/ }\n";
	struct ph_conf_problems probs = {0};
	struct ph_config *c = ph_conf_load_buf("p.yaml", ".", y, strlen(y), &probs);
	ok(c == NULL, "auth.mode oauth is refused by a build without OAuth");
	ok(probs.n >= 1 && strstr(probs.v[0], "p.yaml:2: auth.mode oauth: this phantom-fcgi was built without "
				   "OAuth support") != NULL, "the problem says so (%s)", probs.n ? probs.v[0] : "none");
	ph_conf_problems_free(&probs);
	return tap_done();
}
#else
static char dir[256];
static const char *tool;
static long long now;

/* The output of the shell command fmt (trailing newline dropped). Caller frees. */
static char * __attribute__((format(printf, 1, 2)))
run(const char *fmt, ...)
{
	char cmd[16384];
	va_list ap;
	struct ph_buf b;
	FILE *p;
	char chunk[4096];
	size_t got;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	ph_buf_init(&b);
	if ((p = popen(cmd, "r")) == NULL)
		return ph_xstrdup("");
	while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
		ph_buf_add(&b, chunk, got);
	pclose(p);
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.len--;
	ph_buf_addc(&b, '\0');
	return ph_buf_steal(&b);
}

/* A token signed by key file KEY (rsa, rsa1024, ec, ed) with alg, the
 * header members hdr (JSON members, may be "") and claims. Caller frees. */
static char *
token(const char *key, const char *alg, const char *hdr, const char *claims)
{
	return run("python3 '%s' sign '%s/%s.pem' %s '{%s}' '%s'", tool, dir, key, alg, hdr, claims);
}

/* Claims of a good token with extra members (JSON, may be ""). Static buffer. */
static const char *
claims(const char *extra)
{
	static char buf[2048];
	snprintf(buf, sizeof buf, "{\"iss\":\"https://as.example.com/\",\"aud\":\"https://mcp.example.com/mcp\","
		 "\"sub\":\"alice\",\"exp\":%lld,\"iat\":%lld%s%s}", now + 300, now - 10, *extra ? "," : "", extra);
	return buf;
}

static char *aud_list[] = {"https://mcp.example.com/mcp"};
static struct ph_jwks keys;

/* Decodes and verifies tok against the keys and the default rules.
 * Returns the reason it is refused, or NULL. */
static const char *
check(const char *tok, unsigned algs, const struct ph_jwt_rules *rules)
{
	struct ph_jwt_rules def = {"https://as.example.com/", aud_list, 1, false, false, 60, now};
	struct ph_jwt t;
	const char *why = NULL;
	long long exp;
	if (ph_jwt_decode(tok, strlen(tok), 8192, algs, &t, &why) != 0)
		return why;
	if (ph_jwt_verify_set(&t, &keys, &why) != 1 || !ph_jwt_claims_ok(&t, rules ? rules : &def, &exp, &why)) {
		ph_jwt_free(&t);
		return why ? why : "?";
	}
	ph_jwt_free(&t);
	return NULL;
}

static void
refused(const char *tok, const char *want, const char *what)
{
	const char *why = check(tok, 0xf, NULL);
	ok(why != NULL && strstr(why, want) != NULL, "%s: refused (%s)", what, why ? why : "accepted");
}

static void
make_keys(void)
{
	static const char *const gen[] = {
		"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", "rsa1024", "-algorithm RSA -pkeyopt rsa_keygen_bits:1024",
		"ec", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "ed", "-algorithm ED25519",
		"rsa2", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048",
	};
	for (size_t i = 0; i < PH_ARRAY_LEN(gen); i += 2)
		free(run("openssl genpkey %s -out '%s/%s.pem' 2>/dev/null", gen[i + 1], dir, gen[i]));
}

/* The JWK set: the good keys and, next to them, keys to be skipped. */
static void
test_jwks(void)
{
	char *r = run("python3 '%s' jwk '%s/rsa.pem' r1", tool, dir);
	char *r2 = run("python3 '%s' jwk '%s/rsa2.pem' r2 RS256", tool, dir);
	char *small = run("python3 '%s' jwk '%s/rsa1024.pem' small", tool, dir);
	char *e = run("python3 '%s' jwk '%s/ec.pem' e1", tool, dir);
	char *d = run("python3 '%s' jwk '%s/ed.pem' d1", tool, dir);
	char *doc = ph_xasprintf("{\"keys\":[%s,%s,%s,%s,%s,"
				 "{\"kty\":\"oct\",\"kid\":\"h\",\"k\":\"c2VjcmV0\"},"
				 "{\"kty\":\"EC\",\"kid\":\"offcurve\",\"crv\":\"P-256\",\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"y\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\"},"
				 "{\"kty\":\"RSA\",\"kid\":\"enc\",\"use\":\"enc\",\"n\":\"AQAB\",\"e\":\"AQAB\"},"
				 "{\"kty\":\"OKP\",\"kid\":\"x\",\"crv\":\"X25519\",\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}]}",
				 r, r2, small, e, d);
	const char *why;
	size_t skipped = 0;
	struct ph_jwks bad;
	ok(ph_jwks_parse(doc, strlen(doc), &keys, &skipped, &why) == 0, "a JWK set parses");
	is_int(keys.n, 4, "its RSA 2048, EC P-256 and Ed25519 keys are kept");
	is_int(skipped, 5, "an RSA 1024 key, an oct key, a point off the curve, an enc key, X25519 are skipped");
	ok(ph_jwks_parse("[]", 2, &bad, NULL, &why) == -1, "a JSON array is not a JWK set");
	ok(ph_jwks_parse("{\"keys\":{}}", 11, &bad, NULL, &why) == -1, "keys must be an array");
	ok(ph_jwks_parse("{\"keys\":[]} x", 13, &bad, NULL, &why) == -1, "trailing bytes are refused");
	ok(ph_jwks_parse("{\"keys\":[]}", 11, &bad, NULL, &why) == 0 && bad.n == 0, "an empty set parses, empty");
	ph_jwks_free(&bad);
	free(r), free(r2), free(small), free(e), free(d), free(doc);
}

static void
test_good(void)
{
	static const struct {
		const char *key, *alg, *kid;
	} good[] = {{"rsa", "RS256", "r1"}, {"rsa", "PS256", "r1"}, {"rsa2", "RS256", "r2"},
		    {"ec", "ES256", "e1"}, {"ed", "EdDSA", "d1"}};
	for (size_t i = 0; i < PH_ARRAY_LEN(good); i++) {
		char hdr[64], *t;
		const char *why;
		snprintf(hdr, sizeof hdr, "\"kid\":\"%s\"", good[i].kid);
		t = token(good[i].key, good[i].alg, hdr, claims(""));
		why = check(t, 0xf, NULL);
		ok(why == NULL, "%s with key %s verifies (%s)", good[i].alg, good[i].kid, why ? why : "ok");
		why = check(t, 0xf & ~(1u << ph_jwt_alg_parse(good[i].alg)), NULL);
		ok(why != NULL, "%s is refused when auth.oauth.algorithms leaves it out", good[i].alg);
		free(t);
	}
	{
		char *t = token("ed", "EdDSA", "\"kid\":5", claims(""));
		ok(check(t, 0xf, NULL) != NULL, "a kid that is not a string is refused");
		free(t);
		t = token("ec", "ES256", "\"typ\":null", claims(""));
		ok(check(t, 0xf, NULL) == NULL, "a token without kid (or typ) is tried against the keys of its alg");
		free(t);
	}
}

/* Every hostile token of the issue, each refused with its reason. */
static void
test_hostile(void)
{
	char *t = token("rsa", "RS256", "\"kid\":\"r1\"", claims("")), *x, *pub;
	char buf[12000];

	refused("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.", "alg", "alg none");
	free(run("openssl pkey -in '%s/rsa.pem' -pubout -out '%s/rsa.pub' 2>/dev/null", dir, dir));
	pub = ph_xasprintf("%s/rsa.pub", dir);
	x = run("python3 '%s' hs256 '%s' '{\"kid\":\"r1\"}' '%s'", tool, pub, claims(""));
	refused(x, "alg", "HS256 keyed with the RSA public key (algorithm confusion)");
	free(x), free(pub);
	x = token("rsa", "RS256", "\"kid\":\"r1\",\"crit\":[\"exp\"]", claims(""));
	refused(x, "crit", "a crit header");
	free(x);
	x = token("rsa", "RS256", "\"kid\":\"r1\",\"cty\":\"JWT\"", claims(""));
	refused(x, "cty", "a nested JWT (cty JWT)");
	free(x);
	refused("eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ.a.b.c.d", "three segments", "a JWE (five segments)");
	snprintf(buf, sizeof buf, "%s.", t);
	refused(buf, "three segments", "trailing garbage: a fourth segment");
	snprintf(buf, sizeof buf, "%sAAAA", t);
	refused(buf, "signature", "trailing garbage: bytes after the signature");
	/* the segments are strict base64url (ph_base64url_decode, test_json) */
	snprintf(buf, sizeof buf, "%s=", t);
	refused(buf, "signature is not base64url", "a padded signature");
	snprintf(buf, sizeof buf, "%.*s", (int)(strrchr(t, '.') + 1 - t), t);
	refused(buf, "signature is not base64url", "an empty signature");
	snprintf(buf, sizeof buf, "%.*s!%s", (int)(strchr(t, '.') - t), t, strchr(t, '.'));
	refused(buf, "header", "bad base64url in the header");
	memset(buf, 'A', 9000);
	buf[9000] = '\0';
	refused(buf, "max_token_bytes", "a token over the size limit");
	snprintf(buf, sizeof buf, "%s", t);
	buf[strchr(t, '.') - t + 5] ^= 1; /* a byte of the payload changed */
	refused(buf, "", "a changed payload");
	free(t);

	t = token("rsa", "RS256", "\"kid\":\"nope\"", claims(""));
	refused(t, "kid", "an unknown kid");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"r1\"", claims(""));
	refused(t, "does not fit", "an RSA key named by an ES256 token (key type mismatch)");
	free(t);
	t = token("rsa2", "PS256", "\"kid\":\"r2\"", claims(""));
	refused(t, "does not fit", "a key whose alg is RS256 named by a PS256 token");
	free(t);
	t = token("rsa1024", "RS256", "\"kid\":\"small\"", claims(""));
	refused(t, "kid", "a token of an RSA 1024 key (the key was never kept)");
	free(t);
	t = token("rsa", "RS256", "\"kid\":\"r1\",\"jku\":\"http://127.0.0.1:1/k\",\"x5u\":\"http://127.0.0.1:1/c\"",
		  claims(""));
	ok(check(t, 0xf, NULL) == NULL, "jku and x5u headers are ignored (never fetched)");
	free(t);
	x = run("python3 '%s' jwk '%s/rsa1024.pem' r1", tool, dir);
	snprintf(buf, sizeof buf, "\"kid\":\"r1\",\"jwk\":%s", x);
	t = token("rsa1024", "RS256", buf, claims(""));
	refused(t, "signature", "a token carrying its own key in jwk: the header key is not used");
	free(t), free(x);
}

static void
test_claims(void)
{
	static const struct {
		const char *extra, *why, *what;
	} bad[] = {
		{"\"exp\":1", "expired", "expired"},
		{"\"nbf\":99999999999", "nbf", "nbf in the future"},
		{"\"iat\":99999999999", "iat", "iat in the future"},
		{"\"iss\":\"https://evil.example.com/\"", "iss", "a wrong iss"},
		{"\"iss\":\"https://as.example.com\"", "iss", "an iss without the trailing slash (exact match)"},
		{"\"aud\":\"https://other.example.com/mcp\"", "aud", "a foreign aud"},
		{"\"aud\":[\"a\",\"b\"]", "aud", "an aud array without this server"},
		{"\"aud\":\"https://mcp.example.com/mcp/\"", "aud", "an aud with a trailing slash (exact match)"},
		{"\"cnf\":{\"jkt\":\"x\"}", "cnf", "a sender-constrained token (cnf)"},
		{"\"exp\":\"soon\"", "exp", "an exp that is not a number"},
	};
	struct ph_jwt_rules slash = {"https://as.example.com/", aud_list, 1, true, false, 60, 0};
	struct ph_jwt_rules strict = {"https://as.example.com/", aud_list, 1, false, true, 60, 0};
	char *t;
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		t = token("ec", "ES256", "\"kid\":\"e1\"", claims(bad[i].extra));
		refused(t, bad[i].why, bad[i].what);
		free(t);
	}
	t = token("ec", "ES256", "\"kid\":\"e1\"",
		  "{\"iss\":\"https://as.example.com/\",\"aud\":\"https://mcp.example.com/mcp\",\"sub\":\"a\"}");
	refused(t, "no exp", "a token without exp");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\"", "{\"iss\":\"https://as.example.com/\",\"sub\":\"a\",\"exp\":99999999999}");
	refused(t, "no aud", "a token without aud");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\"", claims("\"aud\":[\"https://x\",\"https://mcp.example.com/mcp\"]"));
	ok(check(t, 0xf, NULL) == NULL, "an aud array that names this server is accepted");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\"", claims("\"exp\":1e10"));
	ok(check(t, 0xf, NULL) == NULL, "an exp written as a fraction is a number too");
	free(t);
	slash.now = strict.now = now;
	t = token("ec", "ES256", "\"kid\":\"e1\"", claims("\"aud\":\"https://mcp.example.com/mcp/\""));
	ok(check(t, 0xf, &slash) == NULL, "audience_match slash accepts a trailing slash");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\"", claims("\"exp\":1"));
	ok(check(t, 0xf, &slash) != NULL, "... and still refuses an expired token");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\",\"typ\":\"JWT\"", claims(""));
	ok(check(t, 0xf, NULL) == NULL, "typ JWT passes the lenient check (Entra ID, Keycloak)");
	ok(check(t, 0xf, &strict) != NULL, "typ JWT is refused when at+jwt is required");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\",\"typ\":\"application/at+jwt\"", claims(""));
	ok(check(t, 0xf, &strict) == NULL, "typ application/at+jwt passes the strict check");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\",\"typ\":\"dpop+jwt\"", claims(""));
	ok(check(t, 0xf, NULL) != NULL, "another typ (dpop+jwt) is refused");
	free(t);
	t = token("ec", "ES256", "\"kid\":\"e1\"", claims("\"exp\":0"));
	{
		/* the skew: a token expired 30 s ago passes with 60 s of skew, not 10 */
		char c[256];
		struct ph_jwt_rules tight = {"https://as.example.com/", aud_list, 1, false, false, 10, now};
		free(t);
		snprintf(c, sizeof c, "\"exp\":%lld", now - 30);
		t = token("ec", "ES256", "\"kid\":\"e1\"", claims(c));
		ok(check(t, 0xf, NULL) == NULL, "expired 30 s ago passes with clock_skew_s 60");
		ok(check(t, 0xf, &tight) != NULL, "... and not with clock_skew_s 10");
	}
	free(t);
}

/* A copy of tok whose signature is n bytes of 0x5a. Caller frees. */
static char *
with_signature(const char *tok, size_t n)
{
	unsigned char raw[1024];
	char enc[1400];
	memset(raw, 0x5a, sizeof raw);
	sodium_bin2base64(enc, sizeof enc, raw, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return ph_xasprintf("%.*s.%s", (int)(strrchr(tok, '.') - tok), tok, enc);
}

/* Signatures of every length from 1 to 600 bytes for each algorithm, their
 * bytes moved to the end of a page followed by an unmapped one: a read past
 * the signature (issue 37: ES256 read 64 bytes of a 1-byte signature) kills
 * the test here, not only under valgrind, which sees inside libcrypto. */
static void
test_sig_lengths(void)
{
	static const struct {
		const char *key, *alg, *kid;
	} kinds[] = {{"ec", "ES256", "e1"}, {"ed", "EdDSA", "d1"}, {"rsa", "RS256", "r1"}, {"rsa", "PS256", "r1"}};
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok(map != MAP_FAILED && mprotect(map + pg, pg, PROT_NONE) == 0, "a page with a guard page after it");
	for (size_t k = 0; k < PH_ARRAY_LEN(kinds); k++) {
		char hdr[64], *good;
		int refused_n = 0, tried = 0;
		snprintf(hdr, sizeof hdr, "\"kid\":\"%s\"", kinds[k].kid);
		good = token(kinds[k].key, kinds[k].alg, hdr, claims(""));
		for (size_t n = 1; n <= 600; n++) {
			char *bad = with_signature(good, n);
			struct ph_jwt t;
			const char *why;
			if (ph_jwt_decode(bad, strlen(bad), 8192, 0xf, &t, &why) == 0) {
				unsigned char *own = t.sig;
				memcpy(map + pg - n, own, n);
				t.sig = map + pg - n;
				tried++;
				refused_n += ph_jwt_verify_set(&t, &keys, &why) != 1;
				t.sig = own;
				ph_jwt_free(&t);
			}
			free(bad);
		}
		ok(tried == 600 && refused_n == 600, "%s: signatures of 1 to 600 bytes are refused, none read past (%d of %d)",
		   kinds[k].alg, refused_n, tried);
		free(good);
	}
	munmap(map, 2 * pg);
}

/* U+0000 or another control character in a compared claim or header
 * member: refused, not cut at the NUL (issue 37). */
static void
test_nul(void)
{
	static const struct {
		const char *hdr, *extra, *why, *what;
	} bad[] = {
		{"\"kid\":\"e1\"", "\"iss\":\"https://as.example.com/\\u0000x\"", "iss", "an iss with a NUL after the issuer"},
		{"\"kid\":\"e1\"", "\"iss\":\"https://as.example.com/\\n\"", "iss", "an iss with a line feed after the issuer"},
		{"\"kid\":\"e1\"", "\"aud\":\"https://mcp.example.com/mcp\\u0000x\"", "aud", "an aud with a NUL after the audience"},
		{"\"kid\":\"e1\"", "\"aud\":[\"https://mcp.example.com/mcp\\u0000\"]", "aud", "an aud array item with a NUL"},
		{"\"kid\":\"e1\\u0000x\"", "", "kid", "a kid with a NUL after a known kid"},
		{"\"kid\":\"e1\",\"typ\":\"at+jwt\\u0000x\"", "", "typ", "a typ with a NUL"},
		{"\"kid\":\"e1\",\"alg\":\"ES256\\u0000\"", "", "alg", "an alg with a NUL"},
		{"\"kid\":\"e1\"", "\"iss\":\"https://evil.example.com/\",\"iss\\u0000\":\"https://as.example.com/\"",
		 "payload", "a member name cut at a NUL (iss\\u0000 beside iss)"},
	};
	for (size_t i = 0; i < PH_ARRAY_LEN(bad); i++) {
		char *t = token("ec", "ES256", bad[i].hdr, claims(bad[i].extra));
		refused(t, bad[i].why, bad[i].what);
		free(t);
	}
}

int
main(void)
{
	const char *top = getenv("top_srcdir");
	char *t;
	snprintf(dir, sizeof dir, "%s/phantom-jwt-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		return 1;
	t = ph_xasprintf("%s/tests/jwt_tool.py", top && *top ? top : TOP_SRCDIR);
	tool = t;
	now = (long long)time(NULL);
	make_keys();
	test_jwks();
	test_good();
	test_hostile();
	test_claims();
	test_sig_lengths();
	test_nul();
	ph_jwks_free(&keys);
	free(run("rm -rf '%s'", dir));
	free(t);
	return tap_done();
}
#endif
