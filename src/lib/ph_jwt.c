/* ph_jwt.c: JWS compact tokens, JWK sets and access-token claims on
 * libcrypto (ph_jwt.h says what is accepted and why). Nothing here logs:
 * the callers decide what to say, and never the token. */
#include "first.h"
#include "ph_jwt.h"
#include "ph_json.h"
#include "ph_mime.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef PH_HAVE_OAUTH
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

static const char *const alg_names[PH_JWT_NALG] = {"RS256", "PS256", "ES256", "EdDSA"};

const char *
ph_jwt_alg_name(enum ph_jwt_alg alg)
{
	return (unsigned)alg < PH_JWT_NALG ? alg_names[alg] : NULL;
}

int
ph_jwt_alg_parse(const char *s)
{
	for (int i = 0; i < PH_JWT_NALG; i++)
		if (strcmp(s, alg_names[i]) == 0)
			return i;
	return -1;
}

/* ---- base64url ------------------------------------------------------------ */

/* Decodes the base64url member key of o (strict: ph_base64url_decode) into
 * a new buffer (*len bytes; at most max). Returns NULL when absent, not a
 * string, empty, too long or bad. */
static unsigned char *
b64_member(struct json_object *o, const char *key, size_t max, size_t *len)
{
	struct json_object *v = ph_jget(o, key);
	unsigned char *buf;
	size_t n, got;
	if (v == NULL || !json_object_is_type(v, json_type_string))
		return NULL;
	n = (size_t)json_object_get_string_len(v);
	if (n == 0 || n > max * 4 / 3 + 4 || ph_base64url_decode(json_object_get_string(v), n, &buf, &got) != 0)
		return NULL;
	if (got == 0 || got > max) {
		free(buf);
		return NULL;
	}
	*len = got;
	return buf;
}

/* ---- keys ------------------------------------------------------------------ */

/* An EVP_PKEY of type name ("RSA", "EC") from the parameters of bld.
 * Returns NULL when libcrypto refuses them. */
static EVP_PKEY *
key_fromdata(const char *name, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, name, NULL);
	EVP_PKEY *pkey = NULL;
	if (params == NULL || ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

/* What an RSA or EC key is made from: two base64url members of the JWK
 * (n and e, x and y) and the builder of libcrypto's parameters. */
struct key_parts {
	unsigned char *a, *b;
	size_t al, bl;
	OSSL_PARAM_BLD *bld;
};

/* Reads the members an (at most amax bytes) and bn (bmax) of k into p.
 * Returns false, with nothing left to free, when one is absent or bad. */
static bool
parts_read(struct json_object *k, const char *an, size_t amax, const char *bn, size_t bmax, struct key_parts *p)
{
	p->al = p->bl = 0;
	p->a = b64_member(k, an, amax, &p->al);
	p->b = b64_member(k, bn, bmax, &p->bl);
	p->bld = p->a && p->b ? OSSL_PARAM_BLD_new() : NULL;
	if (p->bld != NULL)
		return true;
	free(p->a);
	free(p->b);
	return false;
}

/* The key built from p's parameters (NULL when libcrypto refuses them, or
 * with build false), p freed. */
static EVP_PKEY *
parts_key(struct key_parts *p, const char *type, bool build)
{
	EVP_PKEY *pkey = build ? key_fromdata(type, p->bld) : NULL;
	OSSL_PARAM_BLD_free(p->bld);
	free(p->a);
	free(p->b);
	return pkey;
}

/* An RSA key from n and e, or NULL (with why) when it is not one or has
 * fewer than PH_JWT_RSA_MIN_BITS bits. */
static EVP_PKEY *
rsa_key(struct json_object *k, const char **why)
{
	struct key_parts p;
	BIGNUM *bn, *be; /* the builder refers to them: freed after the key is made */
	EVP_PKEY *pkey;
	bool ok;
	*why = "an RSA key without a usable n or e";
	if (!parts_read(k, "n", PH_JWT_RSA_MAX_BITS / 8 + 1, "e", 8, &p))
		return NULL;
	bn = BN_bin2bn(p.a, (int)p.al, NULL);
	be = BN_bin2bn(p.b, (int)p.bl, NULL);
	ok = bn != NULL && be != NULL && BN_is_odd(be) && !BN_is_one(be) &&
	     OSSL_PARAM_BLD_push_BN(p.bld, OSSL_PKEY_PARAM_RSA_N, bn) &&
	     OSSL_PARAM_BLD_push_BN(p.bld, OSSL_PKEY_PARAM_RSA_E, be) && BN_num_bits(bn) <= PH_JWT_RSA_MAX_BITS;
	if (ok && BN_num_bits(bn) < PH_JWT_RSA_MIN_BITS) {
		*why = "an RSA key of fewer than 2048 bits";
		ok = false;
	}
	pkey = parts_key(&p, "RSA", ok);
	BN_free(bn);
	BN_free(be);
	return pkey;
}

/* A P-256 key from x and y (32 bytes each), checked to be on the curve. */
static EVP_PKEY *
ec_key(struct json_object *k, const char **why)
{
	const char *crv = ph_jtext(k, "crv");
	unsigned char pub[65];
	struct key_parts p;
	EVP_PKEY *pkey;
	EVP_PKEY_CTX *chk = NULL;
	bool ok;
	*why = "an EC key that is not a P-256 point";
	if (crv == NULL || strcmp(crv, "P-256") != 0 || !parts_read(k, "x", 32, "y", 32, &p))
		return NULL;
	ok = p.al == 32 && p.bl == 32;
	if (ok) {
		pub[0] = 0x04; /* uncompressed point */
		memcpy(pub + 1, p.a, 32);
		memcpy(pub + 33, p.b, 32);
		ok = OSSL_PARAM_BLD_push_utf8_string(p.bld, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0) &&
		     OSSL_PARAM_BLD_push_octet_string(p.bld, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub);
	}
	pkey = parts_key(&p, "EC", ok);
	if (pkey != NULL && ((chk = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL)) == NULL ||
			     EVP_PKEY_public_check(chk) != 1)) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	EVP_PKEY_CTX_free(chk);
	return pkey;
}

static EVP_PKEY *
okp_key(struct json_object *k, const char **why)
{
	size_t xl = 0;
	const char *crv = ph_jtext(k, "crv");
	unsigned char *x = b64_member(k, "x", 32, &xl);
	EVP_PKEY *pkey = NULL;
	*why = "an OKP key that is not Ed25519";
	if (crv != NULL && strcmp(crv, "Ed25519") == 0 && x != NULL && xl == 32)
		pkey = EVP_PKEY_new_raw_public_key_ex(NULL, "ED25519", NULL, x, xl);
	free(x);
	return pkey;
}

/* One member of "keys" into key; returns false (with why) to skip it. */
static bool
jwk_parse(struct json_object *k, struct ph_jwk *key, const char **why)
{
	const char *kty = ph_jtext(k, "kty"), *use = ph_jtext(k, "use"), *alg = ph_jtext(k, "alg");
	struct json_object *kid = ph_jget(k, "kid");
	EVP_PKEY *pkey = NULL;
	memset(key, 0, sizeof *key);
	*why = "a key without kty";
	if (!json_object_is_type(k, json_type_object) || kty == NULL)
		return false;
	if (ph_jget(k, "use") != NULL && (use == NULL || strcmp(use, "sig") != 0)) {
		*why = "a key not for signatures (use)";
		return false;
	}
	key->alg = -1;
	if (ph_jget(k, "alg") != NULL && (alg == NULL || (key->alg = ph_jwt_alg_parse(alg)) < 0)) {
		*why = "a key for an algorithm that is not accepted";
		return false;
	}
	if (kid != NULL) {
		if (!json_object_is_type(kid, json_type_string) ||
		    json_object_get_string_len(kid) > PH_JWT_KID_MAX || ph_jtext(k, "kid") == NULL) {
			*why = "a key with a kid that is not a short string without control characters";
			return false;
		}
		snprintf(key->kid, sizeof key->kid, "%s", json_object_get_string(kid));
		key->has_kid = true;
	}
	if (strcmp(kty, "RSA") == 0) {
		pkey = rsa_key(k, why);
		key->algs = 1u << PH_JWT_RS256 | 1u << PH_JWT_PS256;
	} else if (strcmp(kty, "EC") == 0) {
		pkey = ec_key(k, why);
		key->algs = 1u << PH_JWT_ES256;
	} else if (strcmp(kty, "OKP") == 0) {
		pkey = okp_key(k, why);
		key->algs = 1u << PH_JWT_EDDSA;
	} else {
		*why = "a key of a type that is not RSA, EC or OKP";
	}
	if (pkey != NULL && key->alg >= 0 && !(key->algs & (1u << key->alg))) {
		*why = "a key whose alg does not fit its type";
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	key->pkey = pkey;
	return pkey != NULL;
}

int
ph_jwks_parse(const char *doc, size_t len, struct ph_jwks *out, size_t *skipped, const char **why)
{
	struct json_object *root = NULL, *keys;
	size_t n, skip = 0;
	memset(out, 0, sizeof *out);
	if (!ph_json_parse(doc, len, PH_JWT_JWKS_DEPTH, &root) || !json_object_is_type(root, json_type_object) ||
	    (keys = ph_jget(root, "keys")) == NULL || !json_object_is_type(keys, json_type_array)) {
		json_object_put(root);
		*why = "not a JWK set (a JSON object with a \"keys\" array)";
		return -1;
	}
	n = json_object_array_length(keys);
	out->v = ph_xcalloc(n ? (n < PH_JWT_MAX_KEYS ? n : PH_JWT_MAX_KEYS) : 1, sizeof *out->v);
	for (size_t i = 0; i < n; i++) {
		const char *w;
		if (out->n == PH_JWT_MAX_KEYS ||
		    !jwk_parse(json_object_array_get_idx(keys, i), &out->v[out->n], &w))
			skip++;
		else
			out->n++;
	}
	json_object_put(root);
	if (skipped)
		*skipped = skip;
	return 0;
}

void
ph_jwks_free(struct ph_jwks *s)
{
	for (size_t i = 0; i < s->n; i++)
		EVP_PKEY_free(s->v[i].pkey);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* ---- tokens ---------------------------------------------------------------- */

/* Decodes segment in (n bytes) and parses it as one JSON object of at most
 * depth levels. Returns NULL when it is not one, or when a member name
 * holds U+0000 (*key_nul): cut at the NUL, "iss\u0000" would pass for iss. */
static struct json_object *
segment_json(const char *in, size_t n, int depth, bool *key_nul)
{
	unsigned char *buf;
	struct json_object *o = NULL;
	size_t got;
	if (ph_base64url_decode(in, n, &buf, &got) != 0)
		return NULL;
	if (got == 0 || !ph_json_parse_ex((const char *)buf, got, depth, &o, key_nul) || *key_nul ||
	    !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	free(buf);
	return o;
}

/* The header checks of RFC 8725 on t->header: alg from algs, no crit, no
 * cty (a nested JWT), no b64, zip or enc (JWE), a short kid. Returns NULL
 * or why it is refused. */
static const char *
header_ok(struct ph_jwt *t, unsigned algs)
{
	const char *alg = ph_jtext(t->header, "alg");
	struct json_object *kid = ph_jget(t->header, "kid"), *typ = ph_jget(t->header, "typ");
	int a;
	if (alg == NULL)
		return ph_jhas(t->header, "alg") ? "the header's alg is not an accepted algorithm" : "the header has no alg";
	if ((a = ph_jwt_alg_parse(alg)) < 0 || !(algs & (1u << a)))
		return "the header's alg is not an accepted algorithm";
	t->alg = (enum ph_jwt_alg)a;
	if (ph_jhas(t->header, "crit"))
		return "the header has crit";
	if (ph_jhas(t->header, "cty"))
		return "the header has cty (a nested token)";
	if (ph_jhas(t->header, "b64") || ph_jhas(t->header, "zip") || ph_jhas(t->header, "enc"))
		return "the header has b64, zip or enc";
	if (kid != NULL) {
		if (!json_object_is_type(kid, json_type_string) ||
		    json_object_get_string_len(kid) > PH_JWT_KID_MAX || ph_jtext(t->header, "kid") == NULL)
			return "the header's kid is not a short string without control characters";
		snprintf(t->kid, sizeof t->kid, "%s", json_object_get_string(kid));
		t->has_kid = true;
	}
	if (typ != NULL && (t->typ = ph_jtext(t->header, "typ")) == NULL)
		return "the header's typ is not a string without control characters";
	return NULL;
}

int
ph_jwt_decode(const char *tok, size_t n, size_t max, unsigned algs, struct ph_jwt *t, const char **why)
{
	const char *d1, *d2;
	bool key_nul = false;
	memset(t, 0, sizeof *t);
	if (n > max) {
		*why = "the token is larger than auth.oauth.max_token_bytes";
		return -1;
	}
	d1 = memchr(tok, '.', n);
	d2 = d1 ? memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - tok)) : NULL;
	if (d1 == NULL || d2 == NULL || memchr(d2 + 1, '.', n - (size_t)(d2 + 1 - tok)) != NULL) {
		*why = "the token is not three segments (a JWE or not a JWT)";
		return -1;
	}
	if ((t->header = segment_json(tok, (size_t)(d1 - tok), PH_JWT_HEADER_DEPTH, &key_nul)) == NULL) {
		*why = key_nul ? "a member name of the header holds U+0000" : "the header is not base64url of a JSON object";
		goto fail;
	}
	if ((*why = header_ok(t, algs)) != NULL)
		goto fail;
	if ((t->claims = segment_json(d1 + 1, (size_t)(d2 - d1 - 1), PH_JWT_CLAIMS_DEPTH, &key_nul)) == NULL) {
		*why = key_nul ? "a member name of the payload holds U+0000" : "the payload is not base64url of a JSON object";
		goto fail;
	}
	if (ph_base64url_decode(d2 + 1, n - (size_t)(d2 + 1 - tok), &t->sig, &t->sig_len) != 0 || t->sig_len == 0) {
		*why = "the signature is not base64url";
		goto fail;
	}
	t->input = tok;
	t->input_len = (size_t)(d2 - tok);
	return 0;
fail:
	ph_jwt_free(t);
	return -1;
}

void
ph_jwt_free(struct ph_jwt *t)
{
	json_object_put(t->header);
	json_object_put(t->claims);
	free(t->sig);
	memset(t, 0, sizeof *t);
}

/* The JOSE ES256 signature (r || s, 32 bytes each) as the DER ECDSA-Sig-Value
 * libcrypto verifies. Returns its length in *der (caller frees), or -1. */
static int
es256_der(const unsigned char *sig, size_t len, unsigned char **der)
{
	ECDSA_SIG *es;
	BIGNUM *r, *s;
	int n = -1;
	*der = NULL;
	if (len != 64) /* before any read: sig holds len bytes, no more */
		return -1;
	es = ECDSA_SIG_new();
	r = BN_bin2bn(sig, 32, NULL);
	s = BN_bin2bn(sig + 32, 32, NULL);
	if (es != NULL && r != NULL && s != NULL && ECDSA_SIG_set0(es, r, s) == 1) {
		r = s = NULL; /* es owns them now */
		n = i2d_ECDSA_SIG(es, der);
	}
	BN_free(r);
	BN_free(s);
	ECDSA_SIG_free(es);
	return n;
}

bool
ph_jwt_verify(const struct ph_jwt *t, const struct ph_jwk *k, const char **why)
{
	EVP_MD_CTX *md = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	unsigned char *der = NULL;
	const unsigned char *sig = t->sig;
	size_t sig_len = t->sig_len;
	bool ok = false;
	if (!(k->algs & (1u << t->alg)) || (k->alg >= 0 && k->alg != (int)t->alg)) {
		*why = "the key's type or alg does not fit the header's alg";
		return false;
	}
	*why = "the signature does not verify";
	if (t->alg == PH_JWT_ES256) {
		int n = es256_der(t->sig, t->sig_len, &der);
		if (n <= 0)
			return false;
		sig = der;
		sig_len = (size_t)n;
	} else if (t->alg == PH_JWT_EDDSA && t->sig_len != 64) {
		return false;
	}
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit_ex(md, &pctx, t->alg == PH_JWT_EDDSA ? NULL : "SHA256", NULL, NULL, k->pkey,
				    NULL) != 1)
		goto out;
	if (t->alg == PH_JWT_PS256 &&
	    (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
	     EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1))
		goto out;
	ok = EVP_DigestVerify(md, sig, sig_len, (const unsigned char *)t->input, t->input_len) == 1;
out:
	EVP_MD_CTX_free(md);
	OPENSSL_free(der);
	return ok;
}

/* Keys tried for a token without a kid, at most: each costs a signature. */
#define NO_KID_TRIES 8

int
ph_jwt_verify_set(const struct ph_jwt *t, const struct ph_jwks *s, const char **why)
{
	int tried = 0;
	*why = t->has_kid ? "no key has the token's kid" : "no key fits the token's alg";
	for (size_t i = 0; i < s->n && tried < NO_KID_TRIES; i++) {
		const struct ph_jwk *k = &s->v[i];
		if (t->has_kid ? !(k->has_kid && strcmp(k->kid, t->kid) == 0) : !(k->algs & (1u << t->alg)))
			continue;
		tried++;
		if (ph_jwt_verify(t, k, why))
			return 1;
	}
	return tried ? 0 : -1;
}

/* ---- claims ---------------------------------------------------------------- */

/* A NumericDate member: 0 when absent, 1 with *v, -1 when not a number. */
static int
numeric_date(struct json_object *claims, const char *key, long long *v)
{
	struct json_object *o = ph_jget(claims, key);
	if (o == NULL)
		return 0;
	if (json_object_is_type(o, json_type_int)) {
		*v = (long long)json_object_get_int64(o);
		return 1;
	}
	if (json_object_is_type(o, json_type_double)) {
		double d = json_object_get_double(o);
		if (!(d > -9.0e15 && d < 9.0e15))
			return -1;
		*v = (long long)d;
		return 1;
	}
	return -1;
}

/* a (la bytes) equals b, or with slash also when they differ only by one
 * trailing '/'. */
static bool
aud_equal(const char *a, size_t la, const char *b, bool slash)
{
	size_t lb = strlen(b);
	if (la == lb && memcmp(a, b, la) == 0)
		return true;
	if (!slash)
		return false;
	if (la > 0 && a[la - 1] == '/')
		la--;
	if (lb > 0 && b[lb - 1] == '/')
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

/* Whether the string v is an accepted audience: compared with its length,
 * so that "https://mcp.example.com/mcp\u0000x" is not the server's. */
static bool
aud_accepted(const struct ph_jwt_rules *r, struct json_object *v)
{
	const char *aud = json_object_get_string(v);
	size_t n = (size_t)json_object_get_string_len(v);
	if (!json_object_is_type(v, json_type_string))
		return false;
	for (size_t i = 0; i < r->naudiences; i++)
		if (aud_equal(aud, n, r->audiences[i], r->aud_slash))
			return true;
	return false;
}

/* Amazon Cognito's access tokens name their app client in client_id and
 * have no aud; its ID tokens have an aud (the same client id) and say
 * token_use: id, and are never access tokens. */
static const char *
client_id_ok(struct json_object *claims, const struct ph_jwt_rules *r, bool has_aud)
{
	const char *use = ph_jtext(claims, "token_use");
	struct json_object *cid = ph_jget(claims, "client_id");
	if (ph_jhas(claims, "token_use") && (use == NULL || strcmp(use, "access") != 0))
		return "the token's token_use is not access";
	if (has_aud)
		return NULL;
	if (cid == NULL)
		return "the token has neither aud nor client_id";
	return aud_accepted(r, cid) ? NULL : "the token has no aud and its client_id is not an accepted audience";
}

/* aud: a string or an array of strings, one of which is accepted. */
static const char *
aud_ok(struct json_object *claims, const struct ph_jwt_rules *r)
{
	struct json_object *aud = ph_jget(claims, "aud");
	const char *why;
	if (r->aud_client_id && (why = client_id_ok(claims, r, aud != NULL)) != NULL)
		return why;
	if (aud == NULL)
		return r->aud_client_id ? NULL : "the token has no aud";
	if (json_object_is_type(aud, json_type_string))
		return aud_accepted(r, aud) ? NULL : "the token's aud is not this server";
	if (!json_object_is_type(aud, json_type_array))
		return "the token's aud is not a string or an array";
	for (size_t i = 0; i < json_object_array_length(aud); i++) {
		struct json_object *a = json_object_array_get_idx(aud, i);
		if (aud_accepted(r, a))
			return NULL;
	}
	return "the token's aud is not this server";
}

static const char *
times_ok(struct json_object *claims, const struct ph_jwt_rules *r, long long *exp)
{
	long long nbf = 0, iat = 0;
	int has;
	if ((has = numeric_date(claims, "exp", exp)) <= 0)
		return has == 0 ? "the token has no exp" : "the token's exp is not a number";
	if (r->now - r->skew >= *exp)
		return "the token has expired";
	if ((has = numeric_date(claims, "nbf", &nbf)) < 0)
		return "the token's nbf is not a number";
	if (has && nbf > r->now + r->skew)
		return "the token is not valid yet (nbf)";
	if ((has = numeric_date(claims, "iat", &iat)) < 0)
		return "the token's iat is not a number";
	if (has && iat > r->now + r->skew)
		return "the token was issued in the future (iat)";
	return NULL;
}

/* want with one more '/' at its end than got. */
static bool
slash_more(const char *want, size_t wn, const char *got, size_t gn)
{
	return wn == gn + 1 && want[gn] == '/' && memcmp(want, got, gn) == 0;
}

const char *
ph_jwt_iss_why(char *buf, size_t n, const char *what, const char *iss, const char *want)
{
	size_t in, wn;
	if (want == NULL)
		want = "";
	if (iss == NULL) {
		snprintf(buf, n, "%s is missing, not a string or not plain text (auth.oauth.issuer is \"%.200s\")",
			 what, want);
		return buf;
	}
	in = strlen(iss);
	wn = strlen(want);
	snprintf(buf, n, "%s \"%.200s\" is not auth.oauth.issuer \"%.200s\"%s", what, iss, want,
		 slash_more(want, wn, iss, in) || slash_more(iss, in, want, wn)
			 ? " (only a trailing '/' differs: auth.oauth.issuer must be the issuer exactly as its "
			   "metadata says it)"
			 : "");
	return buf;
}

bool
ph_jwt_claims_ok(const struct ph_jwt *t, const struct ph_jwt_rules *r, long long *exp, const char **why)
{
	static char iss_why[600]; /* one request at a time in a process */
	const char *iss = ph_jtext(t->claims, "iss");
	if (t->typ != NULL && strcasecmp(t->typ, "at+jwt") != 0 && strcasecmp(t->typ, "application/at+jwt") != 0 &&
	    (r->typ_at || strcasecmp(t->typ, "JWT") != 0)) {
		*why = "the token's typ is not at+jwt";
		return false;
	}
	if (r->typ_at && t->typ == NULL) {
		*why = "the token has no typ at+jwt";
		return false;
	}
	if (iss == NULL || r->issuer == NULL || strcmp(iss, r->issuer) != 0) {
		*why = ph_jwt_iss_why(iss_why, sizeof iss_why, "the token's iss", iss, r->issuer);
		return false;
	}
	if ((*why = aud_ok(t->claims, r)) != NULL || (*why = times_ok(t->claims, r, exp)) != NULL)
		return false;
	if (ph_jhas(t->claims, "cnf")) {
		*why = "the token is sender-constrained (cnf), which is not supported";
		return false;
	}
	return true;
}
#endif /* PH_HAVE_OAUTH */
