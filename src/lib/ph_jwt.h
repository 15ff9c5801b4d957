/* ph_jwt.h: JSON Web Tokens as an OAuth resource server reads them (RFC 7515
 * JWS compact form, RFC 7517 JWK sets, RFC 7519 claims, RFC 9068 access
 * tokens), on OpenSSL 3 libcrypto's EVP API. Only asymmetric signatures are
 * known: RS256, PS256, ES256 and EdDSA (Ed25519); "none" and HS* are never
 * accepted, whatever the configuration says. The hardening follows RFC 8725:
 * exactly three segments of strict base64url, a size cap before decoding, a
 * depth cap on the JSON, no crit/cty/b64/zip/enc header, the key's type and
 * alg matching the header's alg, RSA keys of at least 2048 bits, and
 * jku/x5u/jwk/x5c headers ignored (never fetched, never used).
 *
 * Available only when configure found libcrypto (PH_HAVE_OAUTH). */
#ifndef PH_JWT_H
#define PH_JWT_H
#include "first.h"
#include <json-c/json.h>

enum ph_jwt_alg { PH_JWT_RS256, PH_JWT_PS256, PH_JWT_ES256, PH_JWT_EDDSA, PH_JWT_NALG };

#define PH_JWT_KID_MAX 256        /* longest kid kept or looked up */
#define PH_JWT_RSA_MIN_BITS 2048  /* smaller RSA keys are refused */
#define PH_JWT_RSA_MAX_BITS 16384 /* and larger ones, which only cost time */
#define PH_JWT_HEADER_DEPTH 4
#define PH_JWT_CLAIMS_DEPTH 16
#define PH_JWT_JWKS_DEPTH 8
#define PH_JWT_MAX_KEYS 64        /* keys of a set kept; the rest ignored */

/* The name of alg ("RS256"), or NULL; the alg named s, or -1. */
const char *ph_jwt_alg_name(enum ph_jwt_alg alg);
int ph_jwt_alg_parse(const char *s);

/* One verification key of a set. */
struct ph_jwk {
	char kid[PH_JWT_KID_MAX + 1]; /* "" when the key has none */
	bool has_kid;
	int alg;                      /* the JWK's "alg", or -1 when it names none */
	unsigned algs;                /* the algs its type can verify (bit per enum ph_jwt_alg) */
	void *pkey;                   /* EVP_PKEY, owned */
};

struct ph_jwks {
	struct ph_jwk *v;
	size_t n;
};

/* Parses a JWK set document ({"keys": [...]}, len bytes): keeps the keys it
 * can verify with (RSA n/e of 2048 bits or more, EC P-256 x/y on the curve,
 * OKP Ed25519 x; "use" absent or "sig"), at most PH_JWT_MAX_KEYS; other
 * keys are skipped, counted in *skipped (may be NULL). Returns 0 and fills
 * out (caller frees with ph_jwks_free), or -1 with why (static text) when
 * the document is not a JWK set. A set with no usable key is not an error. */
int ph_jwks_parse(const char *doc, size_t len, struct ph_jwks *out, size_t *skipped, const char **why) PH_WUR;
void ph_jwks_free(struct ph_jwks *s);

/* A decoded JWS whose header passed the checks. */
struct ph_jwt {
	enum ph_jwt_alg alg;
	char kid[PH_JWT_KID_MAX + 1];
	bool has_kid;
	const char *typ;             /* borrowed from header, NULL when absent */
	struct json_object *header;  /* owned */
	struct json_object *claims;  /* owned */
	const char *input;           /* borrowed: header.payload, signed */
	size_t input_len;
	unsigned char *sig;          /* owned */
	size_t sig_len;
};

/* Decodes the compact JWS tok (n bytes, at most max; not NUL-ended): three
 * base64url segments, a header whose alg is in algs (bits of enum
 * ph_jwt_alg), and a claims object. Returns 0 (caller frees t with
 * ph_jwt_free; tok must outlive it) or -1 with why (static text that never
 * quotes the token). The signature is not checked here. */
int ph_jwt_decode(const char *tok, size_t n, size_t max, unsigned algs, struct ph_jwt *t,
		  const char **why) PH_WUR;
void ph_jwt_free(struct ph_jwt *t);

/* Checks t's signature with key k: the key's type and alg must fit t's
 * alg. Returns true when it verifies. */
bool ph_jwt_verify(const struct ph_jwt *t, const struct ph_jwk *k, const char **why) PH_WUR;

/* Finds a key of set s that verifies t: the keys with t's kid, or, when t
 * names none, every key that fits its alg. Returns 1 when one verifies, 0
 * when a key was found but none verified, -1 when no key fits (an unknown
 * kid: a refresh may bring it). */
int ph_jwt_verify_set(const struct ph_jwt *t, const struct ph_jwks *s, const char **why) PH_WUR;

/* What the claims must say (RFC 9068 section 4). */
struct ph_jwt_rules {
	const char *issuer;       /* exact iss */
	char *const *audiences;   /* aud must name one of them */
	size_t naudiences;
	bool aud_slash;           /* a trailing '/' on either side does not matter */
	bool typ_at;              /* typ must be at+jwt (or application/at+jwt) */
	long long skew;           /* seconds allowed on exp, nbf and iat */
	long long now;            /* seconds since the epoch */
	bool aud_client_id;       /* no aud: client_id must name an audience, and a token_use
				   * claim must say access (Amazon Cognito) */
};

/* Checks the header typ and the claims iss, aud, exp (required), nbf, iat
 * and cnf (refused: a sender-constrained token cannot be checked here).
 * Returns true, or false with why. *exp gets the expiry. */
bool ph_jwt_claims_ok(const struct ph_jwt *t, const struct ph_jwt_rules *r, long long *exp,
		      const char **why) PH_WUR;

/* Why an issuer iss (NULL: absent, not a string or not plain text) is not
 * want, auth.oauth.issuer, for the log: "WHAT \"ISS\" is not
 * auth.oauth.issuer \"WANT\"", each value cut at 200 bytes, with a hint
 * when only a trailing '/' differs. Written into buf (n bytes); returns
 * buf. iss is a claim or a metadata value, never the token. */
const char *ph_jwt_iss_why(char *buf, size_t n, const char *what, const char *iss, const char *want);
#endif
