/* tests/bench/jwt_verify.c: what a first-time verification of an access
 * token costs a worker in auth.mode oauth: decoding the JWT and checking its
 * signature against the key set, as for a token it has not remembered yet
 * (the HTTP request around it is not counted). Part of make bench-auth.
 *
 *   jwt_verify JWKS-FILE TOKEN-FILE [ITERATIONS]
 *
 * Prints one line: "ALG MICROSECONDS-PER-VERIFICATION ITERATIONS". */
#include "first.h"
#include "ph_jwt.h"
#include "ph_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PH_HAVE_OAUTH
int
main(void)
{
	fprintf(stderr, "jwt_verify: built without OAuth support\n");
	return 2;
}
#else
static double
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One decode and signature check; false with a message when it fails. */
static bool
verify_once(const char *tok, size_t n, const struct ph_jwks *keys, enum ph_jwt_alg *alg)
{
	struct ph_jwt t;
	const char *why = NULL;
	if (ph_jwt_decode(tok, n, n, (1u << PH_JWT_NALG) - 1, &t, &why) != 0) {
		fprintf(stderr, "jwt_verify: the token does not decode: %s\n", why);
		return false;
	}
	int r = ph_jwt_verify_set(&t, keys, &why);
	*alg = t.alg;
	ph_jwt_free(&t);
	if (r != 1)
		fprintf(stderr, "jwt_verify: the token does not verify: %s\n", why ? why : "no key");
	return r == 1;
}

int
main(int argc, char **argv)
{
	char *doc, *tok;
	size_t dlen, tlen, skipped = 0;
	struct ph_jwks keys;
	const char *why = NULL;
	enum ph_jwt_alg alg = PH_JWT_RS256;
	long iters = argc > 3 ? strtol(argv[3], NULL, 10) : 2000;
	if (argc < 3 || iters < 1) {
		fprintf(stderr, "usage: jwt_verify JWKS-FILE TOKEN-FILE [ITERATIONS]\n");
		return 2;
	}
	if (ph_read_file(argv[1], 1 << 20, &doc, &dlen) != 0 || ph_read_file(argv[2], 65536, &tok, &tlen) != 0) {
		perror("jwt_verify: reading the key set or the token");
		return 2;
	}
	while (tlen > 0 && (tok[tlen - 1] == '\n' || tok[tlen - 1] == '\r'))
		tlen--;
	if (ph_jwks_parse(doc, dlen, &keys, &skipped, &why) != 0) {
		fprintf(stderr, "jwt_verify: %s: %s\n", argv[1], why);
		return 2;
	}
	if (!verify_once(tok, tlen, &keys, &alg))
		return 1;
	double t0 = now_us();
	for (long i = 0; i < iters; i++)
		if (!verify_once(tok, tlen, &keys, &alg))
			return 1;
	printf("%s %.1f %ld\n", ph_jwt_alg_name(alg), (now_us() - t0) / (double)iters, iters);
	ph_jwks_free(&keys);
	free(doc);
	free(tok);
	return 0;
}
#endif
