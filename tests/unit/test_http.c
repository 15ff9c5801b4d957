/* test_http.c: what both HTTP engines share (lib/ph_http.c): form escaping
 * and where the CA certificates are looked for. The engines themselves are
 * driven over real sockets by tests/integration/http_client.sh. */
#include "first.h"
#include "ph_http.h"
#include "tap.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
test_escape(void)
{
	char *e = ph_http_form_escape("aZ09-._~", 8);
	is_str(e, "aZ09-._~", "escape: unreserved bytes stay");
	free(e);
	e = ph_http_form_escape("a b+c&d=e/%", 11);
	is_str(e, "a%20b%2Bc%26d%3De%2F%25", "escape: space, +, &, =, / and the percent sign escaped");
	free(e);
	e = ph_http_form_escape("x\0y\xff", 4);
	is_str(e, "x%00y%FF", "escape: a NUL and a high byte, by length");
	free(e);
	e = ph_http_form_escape("", 0);
	is_str(e, "", "escape: empty");
	free(e);
}

static void
test_ca_default(void)
{
	const char *how = NULL, *f;
	struct stat st;
	setenv("SSL_CERT_FILE", "/some/where/ca.pem", 1);
	f = ph_http_ca_default(&how);
	is_str(f, "/some/where/ca.pem", "ca: SSL_CERT_FILE first, even when missing (the fetch says so)");
	is_str(how, "SSL_CERT_FILE", "ca: ... and says so");
	setenv("SSL_CERT_FILE", "", 1);
	f = ph_http_ca_default(&how);
	if (stat("/etc/ssl/certs/ca-certificates.crt", &st) == 0) {
		is_str(f, "/etc/ssl/certs/ca-certificates.crt", "ca: an empty SSL_CERT_FILE is unset; Debian's bundle");
		is_str(how, "the system's bundle", "ca: ... found as the system's");
	} else {
		ok(f == NULL || access(f, R_OK) == 0, "ca: no Debian bundle here: another that exists, or none");
	}
	unsetenv("SSL_CERT_FILE");
}

int
main(void)
{
	test_escape();
	test_ca_default();
	return tap_done();
}
