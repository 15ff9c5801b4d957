/* fuzz_jwt.c: libFuzzer harness for the JWT and JWK set parsers of
 * lib/ph_jwt.c, the code every OAuth access token goes through. Input: 'k'
 * and a JWK set document (ph_jwks_parse), or 't' and a token, decoded,
 * verified against a fixed set of public keys (RSA 2048, EC P-256, Ed25519;
 * made once with openssl) and its claims checked at a fixed time. Aborts when
 * a decoded token breaks what ph_jwt.h promises. The signature is verified
 * from the end of a page followed by an unmapped one: ASan cannot see a read
 * past it inside libcrypto, the guard page can (an ES256 signature shorter
 * than 64 bytes was read past its end). */
#include "first.h"
#include "ph_jwt.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef PH_HAVE_OAUTH
static const char keys_doc[] =
	"{\"keys\":[{\"kty\": \"RSA\", \"kid\": \"r1\", \"use\": \"sig\", \"n\": \"xt5RswQ3gpHMb9TO"
	"XK6MdBS7owr2Wyn6eIHHsj4dpF1AUOYtkmyyUxDCBSh8Hf5HFmi7NAC1Wh-cZSL-8wWBeWDz5PMRn0hB4FlyDnJ12B"
	"BmjP-VeLGLVhHVlpNb0EWcNDDa19esQl4OmEb5UUW5ffS56H9G2eiIeMLVeTpCii6pv4WN2wyb6gXlVbx34dIuTNON"
	"roFBBYBjhSTwTTFWHyza_W4BVCpD1RSCt4QT0ff9Vc8fD9V--7D7jVIiqR3WTDYCAjHai181oJM3T8M9w5-ZE7vypT"
	"NOJbmfYIOE6Ffx-1OMcvcOUju8ddeZAug_rQnEi7BYNq9pwLfml9t4RQ\", \"e\": \"AQAB\"},{\"kty\": \"E"
	"C\", \"kid\": \"e1\", \"use\": \"sig\", \"crv\": \"P-256\", \"x\": \"PrfQTI3gLVQawwTTLHpge"
	"CfSWr_u7cz5Y5O18pWmCUo\", \"y\": \"jL0WTKDrer-vgZdy0H0Rk5bXC6WUGwqkyr8YY-E1GXk\"},{\"kty\""
	": \"OKP\", \"kid\": \"d1\", \"use\": \"sig\", \"crv\": \"Ed25519\", \"x\": \"MzsOJj0SAfZMb"
	"UifVKscfoorQOYJQO6VKEQkt7T1u4E\"}]}";

/* Moves the decoded signature of t to the end of a page whose next page is
 * not mapped; returns where it was (the caller puts it back to free it). */
static unsigned char *
sig_at_guard(struct ph_jwt *t)
{
	static unsigned char *map;
	static size_t pg;
	unsigned char *own = t->sig;
	if (map == NULL) {
		pg = (size_t)sysconf(_SC_PAGESIZE);
		map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED || mprotect(map + pg, pg, PROT_NONE) != 0)
			abort();
	}
	if (t->sig_len > pg)
		return own;
	memcpy(map + pg - t->sig_len, own, t->sig_len);
	t->sig = map + pg - t->sig_len;
	return own;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ph_jwks keys;
	static bool loaded;
	static char *aud[] = {"https://mcp.example.com/mcp"};
	struct ph_jwt_rules rules = {"https://as.example.com/", aud, 1, true, false, 60, 1800000000LL};
	const char *why;
	long long exp;
	if (!loaded) {
		if (ph_jwks_parse(keys_doc, strlen(keys_doc), &keys, NULL, &why) != 0 || keys.n != 3)
			abort();
		loaded = true;
	}
	if (size == 0)
		return 0;
	if (data[0] == 'k') {
		struct ph_jwks s;
		size_t skipped = 0;
		if (ph_jwks_parse((const char *)data + 1, size - 1, &s, &skipped, &why) == 0) {
			if (s.n > PH_JWT_MAX_KEYS)
				abort();
			ph_jwks_free(&s);
		}
	} else {
		struct ph_jwt t;
		if (ph_jwt_decode((const char *)data + 1, size - 1, 8192, 0xf, &t, &why) == 0) {
			if (t.header == NULL || t.claims == NULL || t.input_len >= size || (unsigned)t.alg >= PH_JWT_NALG)
				abort();
			unsigned char *own = sig_at_guard(&t);
			int v = ph_jwt_verify_set(&t, &keys, &why);
			t.sig = own;
			if (v == 1)
				(void)ph_jwt_claims_ok(&t, &rules, &exp, &why);
			ph_jwt_free(&t);
		}
	}
	return 0;
}
#else
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data, (void)size;
	return 0;
}
#endif
