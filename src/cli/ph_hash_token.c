/* ph_hash_token.c: phantom-fcgi --hash-token (ph_hash_token.h). */
#include "first.h"
#include "ph_hash_token.h"
#include "ph_auth.h"
#include "ph_util.h"
#include <errno.h>
#include <sodium.h>
#include <stdbool.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int
ph_hash_token(const char *kind, FILE *in, FILE *out)
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
	} else if (n > PH_AUTH_TOKEN_MAX || !ph_token68(buf, n)) {
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
